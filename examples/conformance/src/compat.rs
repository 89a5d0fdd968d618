//! Raw MPI_T constants of the installed MPI as `mpit_core` types: error classes, performance
//! variable classes, datatype handles, decoded from `mpit-sys`'s constants.
//!
//! A private adapter, to be replaced by `mpit-safe`'s public raw-constant conversions once it
//! has them (issue 13, "one table per constant family"); until then this crate uses only
//! `mpit-safe`'s public API and must not reach into its private `raw` module.

use std::ffi::c_int;
use std::str::FromStr;

use mpit_core::{Datatype, ErrorClass, PvarClass};
use mpit_sys as sys;

/// The MPI_T error class a raw return code stands for in this implementation.
pub(crate) fn class_of(code: c_int) -> Option<ErrorClass> {
    use ErrorClass as E;
    let fixed = [
        (sys::MPI_T_ERR_MEMORY, E::Memory),
        (sys::MPI_T_ERR_NOT_INITIALIZED, E::NotInitialized),
        (sys::MPI_T_ERR_CANNOT_INIT, E::CannotInit),
        (sys::MPI_T_ERR_INVALID_INDEX, E::InvalidIndex),
        (sys::MPI_T_ERR_INVALID_ITEM, E::InvalidItem),
        (sys::MPI_T_ERR_INVALID_HANDLE, E::InvalidHandle),
        (sys::MPI_T_ERR_OUT_OF_HANDLES, E::OutOfHandles),
        (sys::MPI_T_ERR_OUT_OF_SESSIONS, E::OutOfSessions),
        (sys::MPI_T_ERR_INVALID_SESSION, E::InvalidSession),
        (sys::MPI_T_ERR_CVAR_SET_NOT_NOW, E::CvarSetNotNow),
        (sys::MPI_T_ERR_CVAR_SET_NEVER, E::CvarSetNever),
        (sys::MPI_T_ERR_PVAR_NO_STARTSTOP, E::PvarNoStartStop),
        (sys::MPI_T_ERR_PVAR_NO_WRITE, E::PvarNoWrite),
        (sys::MPI_T_ERR_PVAR_NO_ATOMIC, E::PvarNoAtomic),
        (sys::MPI_T_ERR_INVALID_NAME, E::InvalidName),
    ];
    // Added by MPI-3.1 and MPI-4.0: `None` where the header lacks them.
    let optional = [
        (sys::MPI_T_ERR_INVALID, E::Invalid),
        (sys::MPI_T_ERR_NOT_ACCESSIBLE, E::NotAccessible),
        (sys::MPI_T_ERR_NOT_SUPPORTED, E::NotSupported),
    ];
    fixed
        .into_iter()
        .find(|&(c, _)| c == code)
        .map(|(_, class)| class)
        .or_else(|| {
            optional
                .into_iter()
                .find(|&(c, _)| c == Some(code))
                .map(|(_, class)| class)
        })
}

/// A raw performance variable class constant as [`PvarClass`] (`None`: not one of the ten).
pub(crate) fn pvar_class(v: c_int) -> Option<PvarClass> {
    Some(match v {
        sys::MPI_T_PVAR_CLASS_STATE => PvarClass::State,
        sys::MPI_T_PVAR_CLASS_LEVEL => PvarClass::Level,
        sys::MPI_T_PVAR_CLASS_SIZE => PvarClass::Size,
        sys::MPI_T_PVAR_CLASS_PERCENTAGE => PvarClass::Percentage,
        sys::MPI_T_PVAR_CLASS_HIGHWATERMARK => PvarClass::HighWatermark,
        sys::MPI_T_PVAR_CLASS_LOWWATERMARK => PvarClass::LowWatermark,
        sys::MPI_T_PVAR_CLASS_COUNTER => PvarClass::Counter,
        sys::MPI_T_PVAR_CLASS_AGGREGATE => PvarClass::Aggregate,
        sys::MPI_T_PVAR_CLASS_TIMER => PvarClass::Timer,
        sys::MPI_T_PVAR_CLASS_GENERIC => PvarClass::Generic,
        _ => return None,
    })
}

/// The [`Datatype`] of a handle MPI_T returned (`None`: not a datatype MPI_T uses).
pub(crate) fn datatype(handle: sys::MPI_Datatype) -> Option<Datatype> {
    sys::datatypes()
        .into_iter()
        .find(|&(_, h, declared)| declared && h == handle)
        .and_then(|(name, _, _)| Datatype::from_str(name).ok())
}
