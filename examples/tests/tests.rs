//! mpit-tools' integration tests that can share a process, one test binary (linked once, not
//! once per file): each file of `tests/` a module. None initialises MPI in this process: they
//! run the tools, the selected MPI's jobs, or this binary again as a child (filtered by its
//! test's name, `mpit_test_support::process::test_path`), so every child starts from a clean
//! environment. The files that need a process of their own are binaries of their own
//! (`Cargo.toml` says why).

mod cli;
mod event_provider;
mod events_churn;
mod events_model;
mod events_real;
mod events_safe;
mod events_threads;
mod faults;
mod golden;
mod mpir_starter;
mod mpit_list;
mod mpivars;
mod mqd_dump;
#[cfg(mpit_events)]
mod provider;
mod quirk_dequeued_data;
mod schemas;
