//! `libmpit_prof.so`: the preload library of `mpit-prof` (spec 003, Caliper's MPIT service).
//!
//! Loaded into an MPI program with `LD_PRELOAD` (the `mpit-prof` launcher does it), it defines
//! the program's MPI functions itself: every wrapper reports the call to the engine
//! ([`mpit_safe::profile`]) and calls the `PMPI_` function it stands for with the same
//! arguments. The wrappers are generated at build time from the installed `mpi.h`
//! (`build.rs`); `MPI_Init`, `MPI_Init_thread` and `MPI_Finalize` are written by hand
//! (`lifecycle.rs`): the first two start the engine on the calling thread, the last one
//! finishes it, gathers every rank's profile to rank 0 on a private communicator and has rank
//! 0 write the output directory before `PMPI_Finalize`.
//!
//! Programs mark regions with `mpit_prof_region_begin(name)` / `mpit_prof_region_end(name)`
//! (`include/mpit_prof.h`; Fortran `bind(C)`, Python `ctypes`).
//!
//! Settings come from the `MPIT_PROF_*` environment variables (`config.rs`).
//!
//! The profiles themselves: one rank's ([`model::RankProfile`], what each rank sends to rank
//! 0), their reduction across ranks ([`reduce::reduce()`] into a [`reduce::Profile`]) and the
//! files rank 0 writes from it ([`write::write_all`]).

pub mod model;
pub mod reduce;
pub mod write;

mod serde_util;

#[cfg(mpit_abi)]
mod abi;
mod config;
#[cfg(mpit_prof_fortran)]
mod fortran;
mod glue;
mod lifecycle;
#[cfg(any(mpit_abi, mpit_prof_fortran))]
mod next;
mod region;

/// The generated wrappers (`$OUT_DIR/wrappers.rs`): every type they name is `mpi-sys`'s.
#[allow(
    non_snake_case,
    clippy::missing_safety_doc,
    clippy::too_many_arguments,
    unreachable_pub,
    unused_imports
)]
mod wrappers {
    // mpi-sys in the native build; the ABI build's own declarations (src/abi.rs) otherwise.
    #[cfg(mpit_abi)]
    use crate::abi as mpi_sys;
    use mpi_sys::*;
    include!(concat!(env!("OUT_DIR"), "/wrappers.rs"));
}
