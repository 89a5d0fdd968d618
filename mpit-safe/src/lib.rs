#![doc = include_str!("../README.md")]
//!
//! ## The API at a glance
//!
//! Layers, in the manner of `zstd`: this crate re-exports the vocabulary of [`mpit_core`]
//! (flat, so `mpit_safe::Verbosity` is `mpit_core::Verbosity`, and as the module
//! `mpit_safe::mpit_core` for its submodules, its models of the standard's semantics among
//! them) and the raw layer as [`sys`].
//!
//! * [`Mpit`]: an initialisation of MPI_T (`MPI_T_init_thread` / `MPI_T_finalize`); every other
//!   object borrows it.
//! * Enumeration: [`Mpit::cvars`], [`Mpit::pvars`], [`Mpit::categories`] list everything with
//!   holes reported per index ([`Listing`]); [`Mpit::cvar_index`], [`Mpit::pvar_index`],
//!   [`Mpit::category_index`] look a name up once; a [`Catalog`] caches a listing and
//!   [`Mpit::refresh`] adds what appeared since (e.g. after `MPI_Init`). [`Mpit::visit_cvars`],
//!   [`Mpit::visit_pvars`], [`Mpit::visit_categories`] show every record borrowed
//!   ([`CvarInfoRef`], [`PvarInfoRef`], [`CategoryInfoRef`]: one MPI call each, no allocation
//!   per record, enumerations resolved on demand) until the visitor breaks, for tools that look
//!   at everything and keep little.
//! * Control variables: [`CvarHandle`] reads and writes `T: Scalar` checked against the
//!   variable's datatype, slices for counts above one, strings for `MPI_CHAR`, [`Value`]s
//!   through [`DynCvarHandle`]; bound to an [`MpiObject`] (rsmpi's objects, [`NoObject`],
//!   [`RawObject`]).
//! * Performance variables: a [`Session`] owns an experiment; [`PvarHandle`]s borrow it and
//!   `start`, `stop`, `read`, `read_reset`, `reset`, `write` (perf-event's `Counter` idiom);
//!   `start_all`/`stop_all`/`reset_all` act on the whole session.
//! * Events (MPI-4; the same API compiles on every MPI and, where the header has no event API
//!   (Open MPI 4.1/5.0), answers [`Error::NotSupported`] at run time: [`features`] tells
//!   beforehand): event sources and event types (`Mpit::events`, `Mpit::sources`, `Mpit::event_info`,
//!   `Mpit::event_hints`, `Mpit::source_timestamp`, ...), and `Registration`s owning the
//!   closures MPI calls (`Mpit::event_registration` builds one with hints, closures per level
//!   installed highest first and a dropped handler; `Mpit::register_event`,
//!   `Registration::on_event`, `on_dropped`, `free`), `EventInstance` (typed `read`, `copy_into`,
//!   timestamp, source) and `EventStream`s (a lock-free bounded queue filled without
//!   allocating, valid at `MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE`).
//!
//! ```
//! use mpit_safe::Mpit;
//! let mpit = Mpit::init()?;
//! let cvars = mpit.cvars()?;
//! for v in cvars.entries.iter().take(3) {
//!     println!("{} ({}, {}, {}): {}", v.name, v.datatype, v.scope, v.verbosity, v.description);
//! }
//! println!("{} of {} indices are holes", cvars.holes.len(), cvars.count);
//! # Ok::<(), mpit_safe::Error>(())
//! ```

//!
//! # Lifetimes and threads, checked by the compiler
//!
//! A performance variable handle cannot outlive its session:
//! ```compile_fail
//! use mpit_safe::Mpit;
//! let mpit = Mpit::init().unwrap();
//! let handle = {
//!     let session = mpit.session().unwrap();
//!     session.handle::<u64>(0).unwrap()
//! };
//! ```
//! A session cannot outlive its init token:
//! ```compile_fail
//! use mpit_safe::Mpit;
//! let session = {
//!     let mpit = Mpit::init().unwrap();
//!     mpit.session().unwrap()
//! };
//! ```
//! Nor can a control variable handle:
//! ```compile_fail
//! use mpit_safe::Mpit;
//! let handle = {
//!     let mpit = Mpit::init().unwrap();
//!     mpit.cvar_handle::<i32>(0).unwrap()
//! };
//! ```
//! A token below `MPI_THREAD_MULTIPLE` cannot move to another thread:
//! ```compile_fail
//! use mpit_safe::Mpit;
//! let mpit = Mpit::init().unwrap();
//! std::thread::spawn(move || drop(mpit));
//! ```
//! A handle cannot outlive the object it is bound to:
//! ```compile_fail
//! use mpit_safe::{Mpit, RawObject};
//! let mpit = Mpit::init().unwrap();
//! let session = mpit.session().unwrap();
//! let handle = {
//!     let obj = RawObject::NO_OBJECT;
//!     session.dyn_handle(0, &obj).unwrap()
//! };
//! ```

#![deny(unsafe_code)]

// mpit-core, whole (`mpit_safe::mpit_core::pvar::...`), and its vocabulary flat
// (`mpit_safe::Verbosity` is `mpit_core::Verbosity`). Not flat: its other modules (the models
// the conformance tests take as oracles among them) and `implementation`, whose name here is
// the function `implementation()`.
pub use mpit_core;
// Errors and return codes (MPI-4.1 §16.3.10); `error::Feature` is what `NotSupported` names.
pub use mpit_core::{Error, ErrorClass, Result, error};
// The tables of C constants (§16.3).
pub use mpit_core::CConstant;
// Verbosity (§16.3.1), binding (§16.3.2), thread levels (§16.3.4), scope (§16.3.6).
pub use mpit_core::{Audience, Bind, Detail, Scope, ThreadLevel, Verbosity};
// Strings by the convention of §16.3.3.
pub use mpit_core::{MAX_FETCH_ATTEMPTS, MAX_STRING_LEN, MpiStr, MpiString, fetch_string};
// Datatypes and values (§16.3.5).
pub use mpit_core::{CWchar, Datatype, MpiAint, MpiCount, MpiOffset, Scalar, TypeKind, Value};
// Performance variable classes, their rules, and Caliper's derived metrics (§16.3.7).
pub use mpit_core::{
    DeltaTracker, DerivedMetric, MetricValue, Monotonicity, Number, Numeric, Observation,
    PvarClass, SampleStats, StartingValue, Tracker, Watermark, WatermarkTracker,
};
// Callback safety and source ordering of events (§16.3.8).
pub use mpit_core::{CbSafety, SourceOrder};
// The owned records of the queries (§16.3.5–§16.3.9) and the rule a record breaks.
pub use mpit_core::{
    CategoryInfo, CvarInfo, EnumInfo, EnumItem, EventElement, EventTypeInfo, PvarInfo, SourceInfo,
    Violation,
};
// Implementations, their versions and their quirks (`MPI_Get_library_version`, §9.1.1).
pub use mpit_core::{Family, Implementation, Quirk, Vendor, Version, VersionRange};
pub use mpit_sys as sys;

mod constant;
mod control;
mod event_query;
mod features;
// The fence: every call into MPI and every callback from MPI, in one directory to audit.
#[allow(unsafe_code)]
mod ffi;
mod info_object;
mod init;
mod object;
mod query;
pub mod quirks;
pub mod raw;
mod registration;
mod session;

pub use control::{CvarHandle, DynCvarHandle};
pub use features::{Features, features, launcher};
/// In the MPI-5 ABI build (`--cfg mpit_abi`, no rsmpi): rsmpi's names for what programs around
/// MPI_T use (`initialize`, `world`, `rank`, `barrier`, ...), over the ABI library.
#[cfg(mpit_abi)]
pub use ffi::mpi_abi as mpi;
pub use info_object::Info;
pub use init::{Mpit, level};
/// rsmpi (the `mpi` crate), whose objects bind variables ([`MpiObject`]): `use mpit_safe::mpi;`
/// gives a program MPI_Init and communicators without a dependency of its own, the same
/// version this crate binds, and the same source builds in the MPI-5 ABI build, where this
/// name is the stand-in below.
#[cfg(not(mpit_abi))]
pub use mpi;
pub use object::{MpiObject, NoObject, RawObject};
pub use query::{
    Catalog, CategoryInfoRef, CvarInfoRef, Holes, Listing, MemberIter, Members, PvarInfoRef,
    Refresh, Visited,
};
pub use quirks::implementation;
pub use raw::RawConstant;
pub use registration::{
    Dropped, EventInstance, EventRecord, EventStream, Freeing, INLINE_EVENT_BYTES, Registration,
    RegistrationBuilder,
};
pub use session::{DynPvarHandle, PvarHandle, Session, read_many};
