//! The vocabulary and rules of the MPI tool information interface (MPI_T),
//! as pure Rust types.
//!
//! This crate has no FFI and knows no implementation's numbering of the C
//! constants: `mpit-sys` maps raw values onto these types and `mpit-safe`
//! builds the safe API on them. Everything here follows the final standard,
//! MPI-4.1 chapter 16.3 ("The MPI Tool Information Interface"); section
//! numbers in the documentation refer to it.
//!
//! | module | standard | contents |
//! |---|---|---|
//! | [`constants`] | §16.3 | one table per family of C constants: [`CConstant`], [`constants::FAMILIES`] |
//! | [`verbosity`] | §16.3.1 | [`Verbosity`], [`Audience`], [`Detail`] |
//! | [`bind`] | §16.3.2 | [`Bind`] |
//! | [`string`] | §16.3.3 | [`fetch_string`], [`MpiString`], [`MpiStr`] |
//! | [`datatype`] | §16.3.5 | [`Datatype`], [`Value`], [`Scalar`] |
//! | [`cvar`] | §16.3.6 | [`Scope`] |
//! | [`pvar`] | §16.3.7, Caliper | [`PvarClass`], [`Tracker`] and the derived metrics |
//! | [`event`] | §16.3.8 | [`CbSafety`], [`SourceOrder`] |
//! | [`info`] | §16.3.5–§16.3.9 | [`CvarInfo`], [`PvarInfo`], [`CategoryInfo`], [`EnumInfo`], [`EventTypeInfo`], [`SourceInfo`] |
//! | [`error`] | §16.3.10 | [`Error`], [`ErrorClass`] |
//! | [`implementation`] | §9.1.1 | [`Implementation`], [`Vendor`], [`Family`], [`Version`], [`Quirk`] |
//!
//! Everything is re-exported at the crate root.
//!
//! # Example
//!
//! Check a performance variable's description against its class, decode a
//! raw read, and derive the per-interval metric a profiler records:
//!
//! ```
//! use mpit_core::*;
//!
//! let info = PvarInfo {
//!     index: 3,
//!     name: MpiString::new("bytes_sent").unwrap(),
//!     verbosity: Verbosity::TUNER_BASIC,
//!     class: PvarClass::Aggregate,
//!     datatype: Datatype::UnsignedLongLong,
//!     enumtype: None,
//!     description: MpiString::new("bytes sent on this communicator").unwrap(),
//!     bind: Bind::Comm,
//!     readonly: false,
//!     continuous: false,
//!     atomic: true,
//! };
//! assert!(info.validate().is_empty());
//! assert!(info.verbosity <= Verbosity::TUNER_ALL);
//!
//! // Typed access is allowed only where the Rust type is the C type.
//! assert!(u64::check(info.datatype).is_ok());
//! assert!(matches!(i32::check(info.datatype), Err(Error::TypeMismatch { .. })));
//!
//! // Two raw reads, as MPI_T_pvar_read would fill the buffer.
//! let mut tracker = info.tracker();
//! for (raw, delta) in [(1024u64, 1024u64), (4096, 3072)] {
//!     let v = Value::from_ne_bytes(info.datatype, &raw.to_ne_bytes()).unwrap();
//!     assert!(info.class.value_conforms(&v));
//!     assert_eq!(tracker.observe(v).unwrap(), Observation::Delta(Number::Unsigned(delta)));
//! }
//! ```
#![forbid(unsafe_code)]

mod macros;

pub mod bind;
pub mod constants;
pub mod cvar;
pub mod datatype;
pub mod error;
pub mod event;
pub mod event_model;
pub mod implementation;
pub mod info;
pub mod pvar;
pub mod pvar_model;
pub mod string;
pub mod thread;
pub mod verbosity;

pub use bind::Bind;
pub use constants::CConstant;
pub use cvar::Scope;
pub use datatype::{CWchar, Datatype, MpiAint, MpiCount, MpiOffset, Scalar, TypeKind, Value};
pub use error::{Error, ErrorClass, Result};
pub use event::{CbSafety, SourceOrder};
pub use implementation::{Family, Implementation, Quirk, Vendor, Version, VersionRange};
pub use info::{
    CategoryInfo, CvarInfo, EnumInfo, EnumItem, EventElement, EventTypeInfo, PvarInfo, SourceInfo,
    Violation,
};
pub use pvar::{
    DeltaTracker, DerivedMetric, MetricValue, Monotonicity, Number, Numeric, Observation,
    PvarClass, SampleStats, StartingValue, Tracker, Watermark, WatermarkTracker,
};
pub use string::{MAX_FETCH_ATTEMPTS, MAX_STRING_LEN, MpiStr, MpiString, fetch_string};
pub use thread::ThreadLevel;
pub use verbosity::{Audience, Detail, Verbosity};
