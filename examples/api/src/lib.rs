//! Small runnable examples of the public APIs of mpit-rs, one per area, each a program in
//! `examples/` of this package that documents at its top what it shows and how to run it:
//!
//! | example | area | crates |
//! |---|---|---|
//! | `cvars` | control variables: one looked up by name (an eager limit), read typed and as a `Value`; a writable one written and read back | `mpit-safe` |
//! | `pvars` | performance variables: a session, a handle bound to an rsmpi communicator, start, read, stop (2 ranks) | `mpit-safe`, `mpi` |
//! | `events` | MPI-4 event sources and types, a registration with a closure, an `EventStream`; `NotSupported` where the header has no event API (2 ranks) | `mpit-safe`, `mpi` |
//! | `catalog` | listing before and after `MPI_Init`, refresh, holes | `mpit-safe` |
//! | `mpir` | MPIR: a Rust launcher as a starter publishing its process table, read back through the tool side (or any starter's, `--pid`) | `mpir-types` |
//! | `mqd` | MQD: the implementation's message queue debug DLL found, loaded and its version, a process's own communicators and posted receives (2 ranks) | `mqd-types`, `mpi` |
//!
//! ```text
//! cargo run -p mpit-api-examples --example cvars
//! cargo build -p mpit-api-examples --examples && mpiexec -n 2 target/debug/examples/pvars
//! ```
//!
//! In the MPI-5 ABI build (`--cfg mpit_abi`) there is no rsmpi: the examples take its names
//! from `mpit_safe::mpi`. `tests/examples.rs` runs each one against the selected MPI and checks
//! what it prints. This library holds nothing else.
