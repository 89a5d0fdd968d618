//! A build-time check of [`mpit-sys`](https://docs.rs/mpit-sys), with nothing at run time.
//!
//! `mpit-sys` depends on this crate so that its build script runs first: it looks for an MPI
//! library exactly as `mpi-sys` will (`build-probe-mpi`: `MPI_PKG_CONFIG`, `CRAY_MPICH_DIR`,
//! `MPICC` or `mpicc`, then `pkg-config` for `mpich` and `ompi`) and, when there is none or
//! `MPICC` names a wrapper that cannot run, stops the build with a message that says what to
//! install (Debian/Ubuntu, Fedora, Spack, PyPI wheels) and how to point the build at an MPI.
//! Without it a machine with no MPI sees only `mpi-sys`'s panic.
//!
//! The wrapper or pkg-config file found is passed on to `mpit-sys`'s build script as
//! `DEP_MPIT_PROBE_FOUND_BY`.

#![no_std]
#![forbid(unsafe_code)]
