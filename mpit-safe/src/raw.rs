//! Raw values of the installed MPI to mpit-core's types, and return codes to [`Error`].
//!
//! The numbering is the implementation's (MPICH's `MPI_T_VERBOSITY_USER_BASIC` is 221, Open
//! MPI's 0); the constants come from `mpit-sys`, read out of the installed `mpi.h`.

#![forbid(unsafe_code)]

use std::ffi::c_int;
use std::str::FromStr;

use mpit_core::{Bind, Datatype, Error, ErrorClass, PvarClass, Result, Scope, Value, Verbosity};
use mpit_sys as sys;

/// `MPI_SUCCESS` to `Ok`, every MPI_T error class to its [`Error`] variant keeping the raw code,
/// anything else to [`Error::Other`].
#[inline]
pub(crate) fn check(code: c_int) -> Result<()> {
    if code == sys::MPI_SUCCESS {
        Ok(())
    } else {
        Err(error(code))
    }
}

/// The [`Error`] for a non-success return code.
#[cold]
pub(crate) fn error(code: c_int) -> Error {
    match class_of(code) {
        Some(class) => Error::from_class(class, code),
        None => Error::Other { code },
    }
}

/// The MPI_T error class a raw code stands for in this implementation.
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

fn unknown(kind: &'static str, value: c_int) -> Error {
    Error::UnknownConstant {
        kind,
        value: value.into(),
    }
}

/// A raw verbosity constant as [`Verbosity`].
pub(crate) fn verbosity(v: c_int) -> Result<Verbosity> {
    Ok(match v {
        sys::MPI_T_VERBOSITY_USER_BASIC => Verbosity::USER_BASIC,
        sys::MPI_T_VERBOSITY_USER_DETAIL => Verbosity::USER_DETAIL,
        sys::MPI_T_VERBOSITY_USER_ALL => Verbosity::USER_ALL,
        sys::MPI_T_VERBOSITY_TUNER_BASIC => Verbosity::TUNER_BASIC,
        sys::MPI_T_VERBOSITY_TUNER_DETAIL => Verbosity::TUNER_DETAIL,
        sys::MPI_T_VERBOSITY_TUNER_ALL => Verbosity::TUNER_ALL,
        sys::MPI_T_VERBOSITY_MPIDEV_BASIC => Verbosity::MPIDEV_BASIC,
        sys::MPI_T_VERBOSITY_MPIDEV_DETAIL => Verbosity::MPIDEV_DETAIL,
        sys::MPI_T_VERBOSITY_MPIDEV_ALL => Verbosity::MPIDEV_ALL,
        other => return Err(unknown("verbosity", other)),
    })
}

/// A raw bind constant as [`Bind`].
pub(crate) fn bind(v: c_int) -> Result<Bind> {
    Ok(match v {
        sys::MPI_T_BIND_NO_OBJECT => Bind::NoObject,
        sys::MPI_T_BIND_MPI_COMM => Bind::Comm,
        sys::MPI_T_BIND_MPI_DATATYPE => Bind::Datatype,
        sys::MPI_T_BIND_MPI_ERRHANDLER => Bind::Errhandler,
        sys::MPI_T_BIND_MPI_FILE => Bind::File,
        sys::MPI_T_BIND_MPI_GROUP => Bind::Group,
        sys::MPI_T_BIND_MPI_OP => Bind::Op,
        sys::MPI_T_BIND_MPI_REQUEST => Bind::Request,
        sys::MPI_T_BIND_MPI_WIN => Bind::Win,
        sys::MPI_T_BIND_MPI_MESSAGE => Bind::Message,
        sys::MPI_T_BIND_MPI_INFO => Bind::Info,
        other if Some(other) == sys::MPI_T_BIND_MPI_SESSION => Bind::Session,
        other => return Err(unknown("bind", other)),
    })
}

/// A raw scope constant as [`Scope`].
pub(crate) fn scope(v: c_int) -> Result<Scope> {
    Ok(match v {
        sys::MPI_T_SCOPE_CONSTANT => Scope::Constant,
        sys::MPI_T_SCOPE_READONLY => Scope::Readonly,
        sys::MPI_T_SCOPE_LOCAL => Scope::Local,
        sys::MPI_T_SCOPE_GROUP => Scope::Group,
        sys::MPI_T_SCOPE_GROUP_EQ => Scope::GroupEq,
        sys::MPI_T_SCOPE_ALL => Scope::All,
        sys::MPI_T_SCOPE_ALL_EQ => Scope::AllEq,
        other => return Err(unknown("scope", other)),
    })
}

/// A raw performance variable class as [`PvarClass`].
pub(crate) fn pvar_class(v: c_int) -> Result<PvarClass> {
    Ok(match v {
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
        other => return Err(unknown("performance variable class", other)),
    })
}

/// The raw constant of a [`PvarClass`] (for `MPI_T_pvar_get_index`).
pub(crate) fn pvar_class_raw(class: PvarClass) -> c_int {
    match class {
        PvarClass::State => sys::MPI_T_PVAR_CLASS_STATE,
        PvarClass::Level => sys::MPI_T_PVAR_CLASS_LEVEL,
        PvarClass::Size => sys::MPI_T_PVAR_CLASS_SIZE,
        PvarClass::Percentage => sys::MPI_T_PVAR_CLASS_PERCENTAGE,
        PvarClass::HighWatermark => sys::MPI_T_PVAR_CLASS_HIGHWATERMARK,
        PvarClass::LowWatermark => sys::MPI_T_PVAR_CLASS_LOWWATERMARK,
        PvarClass::Counter => sys::MPI_T_PVAR_CLASS_COUNTER,
        PvarClass::Aggregate => sys::MPI_T_PVAR_CLASS_AGGREGATE,
        PvarClass::Timer => sys::MPI_T_PVAR_CLASS_TIMER,
        PvarClass::Generic => sys::MPI_T_PVAR_CLASS_GENERIC,
    }
}

/// The [`Datatype`] of a handle MPI_T returned.
pub(crate) fn datatype(handle: sys::MPI_Datatype) -> Result<Datatype> {
    sys::datatypes()
        .into_iter()
        .find(|&(_, h, declared)| declared && h == handle)
        .and_then(|(name, _, _)| Datatype::from_str(name).ok())
        .ok_or(Error::UnknownConstant {
            kind: "datatype handle",
            value: -1,
        })
}

/// A Rust length as the C `int` MPI_T takes.
pub(crate) fn c_len(len: usize) -> Result<c_int> {
    c_int::try_from(len).map_err(|_| Error::LengthOverflow)
}

/// A C count or index that must not be negative.
pub(crate) fn non_negative(v: c_int) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::LengthOverflow)
}

/// `CountMismatch` unless a buffer of `got` elements fits a variable of `expected` elements.
#[inline]
pub(crate) fn expect_count(expected: usize, got: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::CountMismatch { expected, got })
    }
}

/// Reads `count` elements of `dt` through `read` (handed an 8-byte aligned buffer of at least
/// their bytes) and decodes them as [`Value`]s.
pub(crate) fn read_values(
    dt: Datatype,
    count: usize,
    read: impl FnOnce(&mut [u64]) -> Result<()>,
) -> Result<Vec<Value>> {
    let len = dt.size() * count;
    let mut words = vec![0u64; len.div_ceil(8)];
    read(&mut words)?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    Value::decode_all(dt, &bytes[..len])
}
