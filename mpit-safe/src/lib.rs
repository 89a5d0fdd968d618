#![doc = include_str!("../README.md")]
//!
//! ## The API at a glance
//!
//! Layers, in the manner of `zstd`: this crate re-exports the vocabulary of [`mpit_core`]
//! (flat, so `mpit_safe::Verbosity` is `mpit_core::Verbosity`, and as the module
//! `mpit_safe::mpit_core` for its submodules) and the raw layer as [`sys`].
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

pub use mpit_core;
pub use mpit_core::*;
pub use mpit_sys as sys;

mod constant;
mod control;
mod event_query;
mod features;
// The fence: every call into MPI and every callback from MPI, in one file to audit.
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
#[cfg(mpit_abi)]
pub use ffi::mpi_abi as mpi;
pub use info_object::Info;
pub use init::{Mpit, level};
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
