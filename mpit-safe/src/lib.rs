//! Safe interface to MPI_T: re-exports the vocabulary of [`mpit_core`] and the raw layer
//! [`mpit_sys`], the way `zstd` re-exports `zstd-safe` and `zstd-sys`.
//!
//! The RAII init token, enumeration, control and performance variables come with the
//! mpit-safe issue; this crate is the foundation's placeholder.
#![forbid(unsafe_op_in_unsafe_fn)]

pub use mpit_core as core;
pub use mpit_sys as sys;
