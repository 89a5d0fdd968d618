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

/// Width of a [`Reverse`] map: the installed values of one family lie within this many of
/// each other in every implementation seen (MPICH numbers verbosities 221..229, Open MPI 0..8).
const REVERSE_SPAN: usize = 64;

/// A family's table read backwards, built at compile time: `map[raw - min]` is the row of
/// `raw` plus one (0: no row), so that decoding a raw value is one subtraction, one compare
/// and one load, as the C `switch` a tool would write. `dense` is false where the values span
/// more than [`REVERSE_SPAN`], and the table is then searched.
struct Reverse {
    min: c_int,
    map: [u8; REVERSE_SPAN],
    dense: bool,
}

impl Reverse {
    const fn of(table: &[Option<c_int>]) -> Reverse {
        let (mut min, mut max, mut i) = (c_int::MAX, c_int::MIN, 0);
        while i < table.len() {
            if let Some(v) = table[i] {
                if v < min {
                    min = v;
                }
                if v > max {
                    max = v;
                }
            }
            i += 1;
        }
        let mut r = Reverse {
            min,
            map: [0; REVERSE_SPAN],
            dense: min <= max && (max as i64 - min as i64) < REVERSE_SPAN as i64,
        };
        if r.dense {
            let mut i = table.len();
            // Backwards, so that the first row of a value shared by two wins, as in a search.
            while i > 0 {
                i -= 1;
                if let Some(v) = table[i] {
                    r.map[(v - min) as usize] = i as u8 + 1;
                }
            }
        }
        r
    }

    /// The row of `raw` in `table` (the one this map was built from).
    #[inline(always)]
    fn row(&self, table: &[Option<c_int>], raw: c_int) -> Option<usize> {
        if self.dense {
            let off = (raw as i64).wrapping_sub(self.min as i64);
            if (0..REVERSE_SPAN as i64).contains(&off) {
                return (self.map[off as usize] as usize).checked_sub(1);
            }
            None
        } else {
            table.iter().position(|&v| v == Some(raw))
        }
    }
}

/// Implements [`RawConstant`] for `int` families: one line per family.
macro_rules! int_families {
    ($($ty:ty => $table:ident),+ $(,)?) => {$(
        const _: () = assert!(sys::tables::$table.len() == <$ty as CConstant>::TABLE.len());
        const _: () = assert!(sys::tables::$table.len() < u8::MAX as usize);

        impl RawConstant for $ty {
            type Raw = c_int;

            #[inline]
            fn to_raw(self) -> Option<c_int> {
                sys::tables::$table[self.position()]
            }

            #[inline]
            fn from_raw(raw: c_int) -> Result<Self> {
                const REVERSE: Reverse = Reverse::of(&sys::tables::$table);
                match REVERSE.row(&sys::tables::$table, raw) {
                    Some(i) => Ok(<$ty as CConstant>::ALL[i]),
                    None => Err(Error::unknown_constant(<$ty as CConstant>::KIND, raw)),
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `from_raw` through the reverse map gives what a search of the table gives (the first
    /// row holding the value), for every value within 100 of the table's, and refuses others.
    fn agrees<T>(table: &[Option<c_int>])
    where
        T: RawConstant<Raw = c_int> + CConstant + PartialEq + std::fmt::Debug,
    {
        let values: Vec<c_int> = table.iter().flatten().copied().collect();
        let (Some(&lo), Some(&hi)) = (values.iter().min(), values.iter().max()) else {
            return;
        };
        for raw in lo.saturating_sub(100)..=hi.saturating_add(100) {
            let searched = table
                .iter()
                .position(|&v| v == Some(raw))
                .map(|i| T::ALL[i]);
            assert_eq!(T::from_raw(raw).ok(), searched, "{} {raw}", T::KIND);
        }
        for raw in [c_int::MIN, c_int::MAX, -1] {
            let searched = table
                .iter()
                .position(|&v| v == Some(raw))
                .map(|i| T::ALL[i]);
            assert_eq!(T::from_raw(raw).ok(), searched);
        }
    }

    #[test]
    fn reverse_maps_agree_with_the_tables() {
        agrees::<Verbosity>(&sys::tables::VERBOSITY);
        agrees::<Bind>(&sys::tables::BIND);
        agrees::<ThreadLevel>(&sys::tables::THREAD_LEVEL);
        agrees::<Scope>(&sys::tables::SCOPE);
        agrees::<PvarClass>(&sys::tables::PVAR_CLASS);
        agrees::<CbSafety>(&sys::tables::CB_SAFETY);
        agrees::<SourceOrder>(&sys::tables::SOURCE_ORDER);
        agrees::<ErrorClass>(&sys::tables::ERROR_CLASS);
    }

    #[test]
    fn a_sparse_table_is_searched() {
        let r = Reverse::of(&[Some(0), Some(1000), None]);
        assert!(!r.dense);
        assert_eq!(r.row(&[Some(0), Some(1000), None], 1000), Some(1));
        let r = Reverse::of(&[Some(7), None, Some(5), Some(7)]);
        assert!(r.dense);
        assert_eq!(r.row(&[Some(7), None, Some(5), Some(7)], 7), Some(0));
        assert_eq!(r.row(&[Some(7), None, Some(5), Some(7)], 6), None);
        assert!(!Reverse::of(&[None, None]).dense);
    }
}
