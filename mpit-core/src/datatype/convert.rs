//! Making values: exactly from Rust numbers and characters for a datatype known at run time,
//! between datatypes, and `From` the Rust types that are MPI datatypes (see [`Value`]'s
//! "Making a value").

use super::{CWchar, Datatype, MpiAint, Num, TypeKind, Value, f64_to_i128_exact};
use crate::error::{Error, Result};

/// A payload type built from a number exactly, or not at all.
trait Exact: Sized {
    /// `i` if this type holds it exactly.
    fn from_int(i: i128) -> Option<Self>;
    /// `f` if this type holds it exactly (NaN only in floating types).
    fn from_float(f: f64) -> Option<Self>;
}

macro_rules! exact_int {
    ($($t:ty),*) => {$(
        impl Exact for $t {
            fn from_int(i: i128) -> Option<Self> {
                Self::try_from(i).ok()
            }
            fn from_float(f: f64) -> Option<Self> {
                f64_to_i128_exact(f).and_then(Self::from_int)
            }
        }
    )*};
}
exact_int!(i8, u8, i16, u16, i32, u32, i64, u64, isize);

impl Exact for f64 {
    fn from_int(i: i128) -> Option<Self> {
        let f = i as f64;
        (f64_to_i128_exact(f) == Some(i)).then_some(f)
    }
    fn from_float(f: f64) -> Option<Self> {
        Some(f)
    }
}

impl Exact for f32 {
    fn from_int(i: i128) -> Option<Self> {
        f64::from_int(i).and_then(Self::from_float)
    }
    fn from_float(f: f64) -> Option<Self> {
        let g = f as f32;
        (f64::from(g) == f || f.is_nan()).then_some(g)
    }
}

/// `_Bool` holds 0 and 1, as [`Value::as_i64`] reads it.
impl Exact for bool {
    fn from_int(i: i128) -> Option<Self> {
        match i {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn from_float(f: f64) -> Option<Self> {
        f64_to_i128_exact(f).and_then(Self::from_int)
    }
}

impl Value {
    /// The element of `dt` equal to `n`; `shown` names the value in the error.
    pub(super) fn from_num(dt: Datatype, n: Num, shown: impl core::fmt::Display) -> Result<Value> {
        let v = match n {
            // Character data and bytes are not numbers (as for `as_i64`).
            _ if matches!(dt.kind(), TypeKind::Character | TypeKind::Byte) => None,
            Num::Int(i) => with_variant!(dt, variant => Exact::from_int(i).map(variant)),
            Num::Float(f) => with_variant!(dt, variant => Exact::from_float(f).map(variant)),
            Num::NotNumeric => None,
        };
        v.ok_or_else(|| Error::not_representable(dt, shown))
    }

    /// The element of the numeric datatype `dt` equal to `x`, if `dt` holds it exactly:
    /// integers in range, floats that represent it without rounding, `MPI_C_BOOL` for 0 and 1.
    /// The inverse of [`Value::as_i64`].
    ///
    /// Errors: [`Error::NotRepresentable`] when it does not, and for character data and
    /// `MPI_BYTE` (use [`Value::from_char`] and `Value::Byte`).
    ///
    /// ```
    /// use mpit_core::{Datatype, Value};
    ///
    /// assert_eq!(Value::from_i64(Datatype::Int, -5).unwrap(), Value::Int(-5));
    /// assert_eq!(Value::from_i64(Datatype::Double, 3).unwrap(), Value::Double(3.0));
    /// assert_eq!(Value::from_i64(Datatype::CBool, 1).unwrap(), Value::CBool(true));
    /// assert!(Value::from_i64(Datatype::Unsigned, -1).is_err());
    /// assert!(Value::from_i64(Datatype::Float, (1 << 24) + 1).is_err()); // f32 would round
    /// assert!(Value::from_i64(Datatype::Char, 65).is_err());
    /// ```
    pub fn from_i64(dt: Datatype, x: i64) -> Result<Value> {
        Value::from_num(dt, Num::Int(x.into()), x)
    }

    /// The element of the numeric datatype `dt` equal to `x`, if `dt` holds it exactly (see
    /// [`Value::from_i64`]). The inverse of [`Value::as_u64`].
    ///
    /// ```
    /// use mpit_core::{Datatype, Value};
    ///
    /// assert_eq!(
    ///     Value::from_u64(Datatype::UnsignedLongLong, u64::MAX).unwrap(),
    ///     Value::UnsignedLongLong(u64::MAX)
    /// );
    /// assert!(Value::from_u64(Datatype::Count, u64::MAX).is_err());
    /// ```
    pub fn from_u64(dt: Datatype, x: u64) -> Result<Value> {
        Value::from_num(dt, Num::Int(x.into()), x)
    }

    /// The element of the numeric datatype `dt` equal to `x`, if `dt` holds it exactly (see
    /// [`Value::from_i64`]): an integral `x` in range for integer types, any `x` for
    /// `MPI_DOUBLE`, an `x` that is an `f32` for `MPI_FLOAT` (infinities and NaN included), 0 or
    /// 1 for `MPI_C_BOOL`. The inverse of [`Value::as_f64`].
    ///
    /// ```
    /// use mpit_core::{Datatype, Value};
    ///
    /// assert_eq!(Value::from_f64(Datatype::Int, -2.0).unwrap(), Value::Int(-2));
    /// assert_eq!(Value::from_f64(Datatype::Float, 0.5).unwrap(), Value::Float(0.5));
    /// assert!(Value::from_f64(Datatype::Float, 0.1).is_err()); // 0.1 is not an f32
    /// assert!(Value::from_f64(Datatype::Int, f64::NAN).is_err());
    /// ```
    pub fn from_f64(dt: Datatype, x: f64) -> Result<Value> {
        Value::from_num(dt, Num::Float(x), x)
    }

    /// `b` as an element of `dt`: `MPI_C_BOOL` itself, or 0 or 1 of a numeric datatype (as
    /// [`Value::as_i64`] reads a `_Bool`).
    ///
    /// ```
    /// use mpit_core::{Datatype, Value};
    ///
    /// assert_eq!(Value::from_bool(Datatype::CBool, true).unwrap(), Value::CBool(true));
    /// assert_eq!(Value::from_bool(Datatype::Int, true).unwrap(), Value::Int(1));
    /// assert!(Value::from_bool(Datatype::Char, false).is_err());
    /// ```
    pub fn from_bool(dt: Datatype, b: bool) -> Result<Value> {
        Value::from_num(dt, Num::Int(b.into()), b)
    }

    /// `c` as character data: `MPI_CHAR` for an ASCII character (other characters have no
    /// one-byte form that does not depend on an encoding; build `Value::Char(byte)` for raw
    /// bytes), `MPI_WCHAR` for any character `wchar_t` holds (all of them where it is 32 bits).
    ///
    /// Errors: [`Error::NotRepresentable`] otherwise and for every other datatype.
    ///
    /// ```
    /// use mpit_core::{Datatype, Value};
    ///
    /// assert_eq!(Value::from_char(Datatype::Char, 'x').unwrap(), Value::Char(b'x'));
    /// assert_eq!(Value::from_char(Datatype::WChar, 'é').unwrap(), Value::WChar(0xe9));
    /// assert!(Value::from_char(Datatype::Char, 'é').is_err());
    /// assert!(Value::from_char(Datatype::Int, '1').is_err());
    /// ```
    pub fn from_char(dt: Datatype, c: char) -> Result<Value> {
        let v = match dt {
            Datatype::Char if c.is_ascii() => Some(Value::Char(c as u8)),
            Datatype::WChar => CWchar::try_from(u32::from(c)).ok().map(Value::WChar),
            _ => None,
        };
        v.ok_or_else(|| Error::not_representable(dt, c.escape_debug()))
    }

    /// This value as an element of `dt`, if `dt` holds it exactly: numbers (and `_Bool`s) as
    /// [`Value::from_i64`] and [`Value::from_f64`] convert them; ASCII characters between
    /// `MPI_CHAR` and `MPI_WCHAR`; `MPI_BYTE` only to itself.
    ///
    /// Errors: [`Error::NotRepresentable`] otherwise.
    ///
    /// ```
    /// use mpit_core::{Datatype, Value};
    ///
    /// assert_eq!(Value::Int64(42).convert_to(Datatype::Int).unwrap(), Value::Int(42));
    /// assert_eq!(Value::Int(-1).convert_to(Datatype::Double).unwrap(), Value::Double(-1.0));
    /// assert_eq!(Value::Char(b'A').convert_to(Datatype::WChar).unwrap(), Value::WChar(65));
    /// assert!(Value::Int(-1).convert_to(Datatype::Unsigned).is_err());
    /// assert!(Value::Double(0.5).convert_to(Datatype::Count).is_err());
    /// assert!(Value::Byte(1).convert_to(Datatype::Uint8).is_err());
    /// ```
    pub fn convert_to(self, dt: Datatype) -> Result<Value> {
        if self.datatype() == dt {
            return Ok(self);
        }
        match self.num() {
            Num::NotNumeric => {
                let ascii = match self {
                    Value::Char(b) => Some(b),
                    Value::WChar(w) => u8::try_from(w).ok(),
                    _ => None,
                };
                match ascii {
                    Some(b) if b.is_ascii() => Value::from_char(dt, char::from(b)),
                    _ => Err(Error::not_representable(dt, self)),
                }
            }
            n => Value::from_num(dt, n, self),
        }
    }
}

/// `From` the Rust types that are MPI datatypes by name (one datatype per Rust type; see
/// [`Value`]'s "Making a value" for the others).
macro_rules! from_natural {
    ($($t:ty => $variant:ident = $c:literal),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($t), "` is `", $c, "`: `Value::", stringify!($variant), "`.")]
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$variant(x)
            }
        }
    )*};
}

from_natural!(
    i8 => Int8 = "MPI_INT8_T",
    i16 => Int16 = "MPI_INT16_T",
    i32 => Int32 = "MPI_INT32_T",
    i64 => Int64 = "MPI_INT64_T",
    u8 => Uint8 = "MPI_UINT8_T",
    u16 => Uint16 = "MPI_UINT16_T",
    u32 => Uint32 = "MPI_UINT32_T",
    u64 => Uint64 = "MPI_UINT64_T",
    f32 => Float = "MPI_FLOAT",
    f64 => Double = "MPI_DOUBLE",
    bool => CBool = "MPI_C_BOOL",
    MpiAint => Aint = "MPI_AINT",
);

/// A `char` is `MPI_WCHAR` ([`Value::from_char`]); it fails only where `wchar_t` is 16 bits
/// and `c` is beyond U+FFFF.
impl TryFrom<char> for Value {
    type Error = Error;

    fn try_from(c: char) -> Result<Value> {
        Value::from_char(Datatype::WChar, c)
    }
}
