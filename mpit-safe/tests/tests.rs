//! mpit-safe's integration tests that can share a process, one test binary (linked once, not
//! once per file): each file of `tests/` a module. They take turns with MPI_T tokens and see
//! MPI initialised once (`mpit_test_support::mpi::turn_after_init`, finalised at exit); the
//! files that need a process of their own are binaries of their own (`Cargo.toml` says why).

mod abi_library;
mod cvar_text;
mod enumerate;
mod event_query;
mod fence;
mod info_strings;
mod pvar;
mod visit;
