//! `mpit-prof`: a profiler of MPI programs by their performance variables (MPI-4.1 §16.3.7),
//! after Caliper's MPIT service. Three layers, each usable alone:
//!
//! 1. **The engine** ([`Profiler`]): one session's handles on every performance variable,
//!    sampled around program regions ([`Profiler::region`]) and MPI calls
//!    ([`Profiler::call_enter`] / [`Profiler::call_exit`]), each variable's change attributed to
//!    where it happened and summarised by the derived metric of its class; [`Profiler::finish`]
//!    gives the [`Report`]. How it samples and what it costs: `src/engine/mod.rs`.
//! 2. **The profiles**: one rank's ([`model::RankProfile`], what each rank sends to rank 0),
//!    their reduction across ranks ([`reduce::reduce()`] into a [`reduce::Profile`]) and the
//!    files rank 0 writes from it ([`write::write_all`]: `profile.txt`, `profile.json` in
//!    Caliper's json-split format for Hatchet, `comm-matrix.json` and its SVG heat maps).
//! 3. **The preload library** `libmpit_prof.so` (this crate's cdylib) and its launcher
//!    (`mpiexec -n 4 mpit-prof [options] -- ./app args`, `src/main.rs`). Loaded into an MPI
//!    program with `LD_PRELOAD`, it defines the program's MPI functions itself: every wrapper
//!    reports the call to the engine and calls the `PMPI_` function it stands for with the same
//!    arguments. The wrappers are generated at build time from the installed `mpi.h`
//!    (`build.rs`); `MPI_Init`, `MPI_Init_thread` and `MPI_Finalize` are written by hand
//!    (`lifecycle.rs`): the first two start the engine on the calling thread, the last one
//!    finishes it, gathers every rank's profile to rank 0 on a private communicator and has
//!    rank 0 write the output directory before `PMPI_Finalize`. Programs mark regions with
//!    `mpit_prof_region_begin(name)` / `mpit_prof_region_end(name)` (`include/mpit_prof.h`;
//!    Fortran `bind(C)`, Python `ctypes`); settings come from the `MPIT_PROF_*` environment
//!    variables (`config.rs`). Linked into a program as a library (the rlib), the wrappers stay
//!    in it but pass every call through: the program profiles itself with the engine.
//!
//! The engine, the profiles and the writers forbid `unsafe`; below the safe API the engine
//! uses `mpit_safe::raw` alone.
//!
//! ```
//! use mpit_prof::{Config, Profiler};
//! use mpit_safe::Mpit;
//! # #[cfg(mpit_abi)] use mpit_safe::mpi;
//! let universe = mpi::initialize().unwrap();
//! let mpit = Mpit::init()?;
//! let session = mpit.session()?;
//! let prof = Profiler::new(&session, Config::default())?;
//! {
//!     let _solve = prof.region("solve");
//!     // ... MPI traffic ...
//! }
//! let report = prof.finish()?;
//! assert_eq!(report.nodes[1].name, "solve");
//! assert_eq!(report.nodes[1].calls, 1);
//! # Ok::<(), mpit_safe::Error>(())
//! ```

mod engine;
pub mod model;
pub mod partial;
pub mod reduce;
pub mod trace;
pub mod write;

pub use engine::{
    CallStart, Column, Config, Current, Elements, FastCall, Filter, LONG_CALL_NS, Metric, Mode,
    NameFilter, NodeKind, NodeReport, Profiler, RegionGuard, Report, Skipped, TIME_FIRST,
    TIME_ONE_IN, TRACED_ELEMENTS, TimedCall, TraceEvents, TracedEvent, TracedKind,
};

mod serde_util;

#[cfg(mpit_abi)]
mod abi;
mod capture;
mod config;
#[cfg(mpit_prof_fortran)]
mod fortran;
mod glue;
mod lifecycle;
#[cfg(any(mpit_abi, mpit_prof_fortran))]
mod next;
mod region;
mod tree;

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
