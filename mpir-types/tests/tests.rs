//! mpir-types' integration tests, one test binary (linked once, not once per file): each file
//! of `tests/` is a module of it, and the tool-side tests share its process with the pure ones
//! (each drives child processes of its own, found by pid). Two files are binaries of their own:
//! `starter.rs`, because its process is an MPIR starter (the `starter` feature's symbols are
//! linked in and published to), while `os_hostile.rs` checks that this one is none; and
//! `fuzz_corpus.rs`, which the published package leaves out, since it compiles the fuzz crate's
//! source, which is not published.

mod common;
#[cfg(target_os = "linux")]
mod os_common;

mod catalog;
mod codec;
mod layout;
mod memory;
mod os_hostile;
mod os_openmpi;
#[cfg(feature = "pmix")]
mod pmix;
#[cfg(all(feature = "pmix", target_os = "linux"))]
mod pmix_abi;
#[cfg(all(feature = "pmix", target_os = "linux"))]
mod pmix_tool;
mod proctable;
