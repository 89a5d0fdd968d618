//! mpit-prof's integration tests that can share a process, one test binary (linked once, not
//! once per file): each file of `tests/` a module. None initialises MPI in this process: they
//! run `mpit-prof` on the selected MPI's jobs, read recorded profiles, or run this binary again
//! on several ranks (filtered by its test's name, `mpit_test_support::process::test_path`), so
//! every job starts from a clean environment. The files that need a process of their own are
//! binaries of their own (`Cargo.toml` says why).

mod cli;
mod golden;
mod prof;
mod prof_hatchet;
mod prof_live;
mod prof_reduce;
mod profile_events;
mod profile_ranks;
mod profile_unexpected;
mod real_programs;
mod report;
mod symbols;
