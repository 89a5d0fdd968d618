//! Raw values of the installed MPI to mpit-core's types ([`RawConstant`]), and return codes to
//! [`Error`].
//!
//! The numbering is the implementation's (MPICH's `MPI_T_VERBOSITY_USER_BASIC` is 221, Open
//! MPI's 0); the constants come from `mpit-sys`, read out of the installed `mpi.h`.

#![forbid(unsafe_code)]

use std::ffi::c_int;

use mpit_core::{
    Bind, CConstant, CbSafety, Datatype, Error, ErrorClass, PvarClass, Result, Scope, SourceOrder,
    ThreadLevel, Value, Verbosity,
};
use mpit_sys as sys;

/// A family of MPI_T constants whose values the installed MPI chooses, converted by position
/// through the family's table (`mpit_core::constants`) and the installed values `mpit-sys`
/// generated from `mpi.h` for exactly those rows (`mpit_sys::tables`).
///
/// ```
/// use mpit_safe::{Bind, RawConstant, sys};
/// assert_eq!(Bind::from_raw(sys::MPI_T_BIND_MPI_COMM)?, Bind::Comm);
/// assert_eq!(Bind::Comm.to_raw(), Some(sys::MPI_T_BIND_MPI_COMM));
/// assert!(Bind::from_raw(-12345).is_err());
/// # Ok::<(), mpit_safe::Error>(())
/// ```
pub trait RawConstant: CConstant {
    /// The representation of a value in C (`int`, or `MPI_Datatype`).
    type Raw: Copy + PartialEq;

    /// The installed value, `None` where the header does not declare it.
    fn to_raw(self) -> Option<Self::Raw>;

    /// The value a raw constant stands for in the installed MPI
    /// ([`Error::UnknownConstant`] for none).
    fn from_raw(raw: Self::Raw) -> Result<Self>;
}

/// Implements [`RawConstant`] for `int` families: one line per family.
macro_rules! int_families {
    ($($ty:ty => $table:ident),+ $(,)?) => {$(
        const _: () = assert!(sys::tables::$table.len() == <$ty as CConstant>::TABLE.len());

        impl RawConstant for $ty {
            type Raw = c_int;

            #[inline]
            fn to_raw(self) -> Option<c_int> {
                sys::tables::$table[self.position()]
            }

            fn from_raw(raw: c_int) -> Result<Self> {
                sys::tables::$table
                    .iter()
                    .position(|&v| v == Some(raw))
                    .map(|i| <$ty as CConstant>::ALL[i])
                    .ok_or_else(|| Error::unknown_constant(<$ty as CConstant>::KIND, raw))
            }
        }
    )+};
}

int_families! {
    Verbosity => VERBOSITY,
    Bind => BIND,
    ThreadLevel => THREAD_LEVEL,
    Scope => SCOPE,
    PvarClass => PVAR_CLASS,
    CbSafety => CB_SAFETY,
    SourceOrder => SOURCE_ORDER,
    ErrorClass => ERROR_CLASS,
}

impl RawConstant for Datatype {
    type Raw = sys::MPI_Datatype;

    #[inline]
    fn to_raw(self) -> Option<sys::MPI_Datatype> {
        let (_, handle, declared) = sys::datatypes()[self.position()];
        declared.then_some(handle)
    }

    fn from_raw(handle: sys::MPI_Datatype) -> Result<Self> {
        sys::datatypes()
            .into_iter()
            .position(|(_, h, declared)| declared && h == handle)
            .map(|i| Datatype::ALL[i])
            .ok_or_else(|| Error::unknown_constant("datatype handle", -1))
    }
}

/// `MPI_SUCCESS` to `Ok`, every MPI_T error class to [`Error::Mpi`] keeping the raw code,
/// anything else to [`Error::Other`].
#[inline(always)]
pub(crate) fn check(code: c_int) -> Result<()> {
    if code == sys::MPI_SUCCESS {
        Ok(())
    } else {
        Err(error(code))
    }
}

/// The [`Error`] for a non-success return code: out of line, so that [`check`] stays a compare
/// and a branch wherever it is inlined.
#[cold]
#[inline(never)]
pub(crate) fn error(code: c_int) -> Error {
    #[cfg(not(mpit_events))]
    if code == crate::ffi::no_event_api::NO_EVENT_API {
        return Error::NotSupported(mpit_core::error::Feature::Events);
    }
    match ErrorClass::from_raw(code) {
        Ok(class) => Error::from_class(class, code),
        Err(_) => Error::Other { code },
    }
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
#[inline(always)]
pub(crate) fn expect_count(expected: usize, got: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::count_mismatch(expected, got))
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
