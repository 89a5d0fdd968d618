//! MPI datatypes used by the tool information interface, dynamic values and
//! typed access (MPI-4.1 §16.3.5).
//!
//! Control and performance variables use seven basic datatypes
//! ([`Datatype::is_cvar_pvar_type`]); event types may use any MPI basic
//! datatype (MPI-4.1 §16.3.8.3). Sizes are those of the C types *on the
//! host*, taken from `core::ffi` (`c_int`, `c_long`, ...), never from a
//! table of assumed sizes.
//!
//! Not modelled: `MPI_LONG_DOUBLE` (no Rust type), the complex types and the
//! Fortran types; `mpit-safe` reports them as unknown datatypes.

use core::ffi::{
    c_char, c_double, c_float, c_int, c_long, c_longlong, c_schar, c_short, c_uchar, c_uint,
    c_ulong, c_ulonglong, c_ushort,
};
use core::mem::size_of;

use self::sealed::Sealed as _;
use crate::error::{Error, Result};
use crate::macros::c_enum;

/// The C type of `MPI_Count` as this crate represents it: 64-bit signed.
///
/// MPI only requires `MPI_Count` to be at least as large as `MPI_Aint` and
/// `MPI_Offset`; it is `long long` on every implementation this project
/// supports, and `mpit-sys` checks the size against the real header.
pub type MpiCount = i64;

/// The C type of `MPI_Aint` as this crate represents it: pointer-sized signed.
pub type MpiAint = isize;

/// The C type of `MPI_Offset` as this crate represents it: 64-bit signed
/// (checked against the real header by `mpit-sys`).
pub type MpiOffset = i64;

/// The host's C `wchar_t`: 32-bit signed except on Windows (16-bit unsigned).
#[cfg(not(windows))]
pub type CWchar = i32;
/// The host's C `wchar_t`: 32-bit signed except on Windows (16-bit unsigned).
#[cfg(windows)]
pub type CWchar = u16;

c_enum! {
    /// An MPI basic datatype, as returned for variables and event elements
    /// (MPI-4.1 §16.3.5, §16.3.8.3).
    ///
    /// `Display` prints the C name (`MPI_INT`); `FromStr` parses it, ignoring
    /// ASCII case.
    ///
    /// ```
    /// use mpit_core::Datatype;
    ///
    /// assert_eq!(Datatype::Int.c_name(), "MPI_INT");
    /// assert_eq!(Datatype::Int.size(), size_of::<core::ffi::c_int>());
    /// assert!(Datatype::UnsignedLong.is_cvar_pvar_type());
    /// assert!(!Datatype::Float.is_cvar_pvar_type());
    /// assert_eq!(Datatype::Uint64.to_string(), "MPI_UINT64_T");
    /// assert_eq!("MPI_UINT64_T".parse::<Datatype>().unwrap(), Datatype::Uint64);
    /// ```
    pub enum Datatype ("", "datatype") {
        /// C `int`.
        Int = "MPI_INT",
        /// C `unsigned int`.
        Unsigned = "MPI_UNSIGNED",
        /// C `unsigned long`.
        UnsignedLong = "MPI_UNSIGNED_LONG",
        /// C `unsigned long long`.
        UnsignedLongLong = "MPI_UNSIGNED_LONG_LONG",
        /// `MPI_Count` (see [`MpiCount`]).
        Count = "MPI_COUNT",
        /// C `char` (character data; for strings in control variables).
        Char = "MPI_CHAR",
        /// C `double`.
        Double = "MPI_DOUBLE",
        /// C `short`.
        Short = "MPI_SHORT",
        /// C `long`.
        Long = "MPI_LONG",
        /// C `long long` (`MPI_LONG_LONG_INT` is a synonym).
        LongLong = "MPI_LONG_LONG",
        /// C `signed char` (a small integer).
        SignedChar = "MPI_SIGNED_CHAR",
        /// C `unsigned char` (a small integer).
        UnsignedChar = "MPI_UNSIGNED_CHAR",
        /// C `unsigned short`.
        UnsignedShort = "MPI_UNSIGNED_SHORT",
        /// C `float`.
        Float = "MPI_FLOAT",
        /// C `int8_t`.
        Int8 = "MPI_INT8_T",
        /// C `int16_t`.
        Int16 = "MPI_INT16_T",
        /// C `int32_t`.
        Int32 = "MPI_INT32_T",
        /// C `int64_t`.
        Int64 = "MPI_INT64_T",
        /// C `uint8_t`.
        Uint8 = "MPI_UINT8_T",
        /// C `uint16_t`.
        Uint16 = "MPI_UINT16_T",
        /// C `uint32_t`.
        Uint32 = "MPI_UINT32_T",
        /// C `uint64_t`.
        Uint64 = "MPI_UINT64_T",
        /// `MPI_Aint` (see [`MpiAint`]).
        Aint = "MPI_AINT",
        /// `MPI_Offset` (see [`MpiOffset`]).
        Offset = "MPI_OFFSET",
        /// C `_Bool`.
        CBool = "MPI_C_BOOL",
        /// C `wchar_t` (see [`CWchar`]).
        WChar = "MPI_WCHAR",
        /// Uninterpreted byte.
        Byte = "MPI_BYTE",
    }
}

/// What kind of data a [`Datatype`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TypeKind {
    /// Signed integer (`int`, `long`, `MPI_Count`, `int8_t`, `signed char`, ...).
    SignedInteger,
    /// Unsigned integer (`unsigned`, `uint64_t`, `unsigned char`, ...).
    UnsignedInteger,
    /// Floating point (`float`, `double`).
    Floating,
    /// Character data (`char`, `wchar_t`): signedness is not meaningful.
    Character,
    /// Boolean (`_Bool`).
    Boolean,
    /// Uninterpreted bytes (`MPI_BYTE`).
    Byte,
}

/// Number of modelled datatypes.
const NUM_DATATYPES: usize = Datatype::ALL.len();

impl Datatype {
    /// The seven datatypes control and performance variables may have
    /// (MPI-4.1 §16.3.5).
    pub const CVAR_PVAR_TYPES: [Datatype; 7] = [
        Datatype::Int,
        Datatype::Unsigned,
        Datatype::UnsignedLong,
        Datatype::UnsignedLongLong,
        Datatype::Count,
        Datatype::Char,
        Datatype::Double,
    ];

    /// Size in bytes of one element on this host.
    pub const fn size(self) -> usize {
        match self {
            Datatype::Int => size_of::<c_int>(),
            Datatype::Unsigned => size_of::<c_uint>(),
            Datatype::UnsignedLong => size_of::<c_ulong>(),
            Datatype::UnsignedLongLong => size_of::<c_ulonglong>(),
            Datatype::Count => size_of::<MpiCount>(),
            Datatype::Char => size_of::<c_char>(),
            Datatype::Double => size_of::<c_double>(),
            Datatype::Short => size_of::<c_short>(),
            Datatype::Long => size_of::<c_long>(),
            Datatype::LongLong => size_of::<c_longlong>(),
            Datatype::SignedChar => size_of::<c_schar>(),
            Datatype::UnsignedChar => size_of::<c_uchar>(),
            Datatype::UnsignedShort => size_of::<c_ushort>(),
            Datatype::Float => size_of::<c_float>(),
            Datatype::Int8 | Datatype::Uint8 => 1,
            Datatype::Int16 | Datatype::Uint16 => 2,
            Datatype::Int32 | Datatype::Uint32 => 4,
            Datatype::Int64 | Datatype::Uint64 => 8,
            Datatype::Aint => size_of::<MpiAint>(),
            Datatype::Offset => size_of::<MpiOffset>(),
            Datatype::CBool => size_of::<bool>(),
            Datatype::WChar => size_of::<CWchar>(),
            Datatype::Byte => 1,
        }
    }

    /// What kind of data the type holds.
    pub const fn kind(self) -> TypeKind {
        match self {
            Datatype::Int
            | Datatype::Count
            | Datatype::Short
            | Datatype::Long
            | Datatype::LongLong
            | Datatype::SignedChar
            | Datatype::Int8
            | Datatype::Int16
            | Datatype::Int32
            | Datatype::Int64
            | Datatype::Aint
            | Datatype::Offset => TypeKind::SignedInteger,
            Datatype::Unsigned
            | Datatype::UnsignedLong
            | Datatype::UnsignedLongLong
            | Datatype::UnsignedChar
            | Datatype::UnsignedShort
            | Datatype::Uint8
            | Datatype::Uint16
            | Datatype::Uint32
            | Datatype::Uint64 => TypeKind::UnsignedInteger,
            Datatype::Double | Datatype::Float => TypeKind::Floating,
            Datatype::Char | Datatype::WChar => TypeKind::Character,
            Datatype::CBool => TypeKind::Boolean,
            Datatype::Byte => TypeKind::Byte,
        }
    }

    /// Whether control and performance variables may have this type
    /// (`MPI_INT`, `MPI_UNSIGNED`, `MPI_UNSIGNED_LONG`,
    /// `MPI_UNSIGNED_LONG_LONG`, `MPI_COUNT`, `MPI_CHAR`, `MPI_DOUBLE`;
    /// MPI-4.1 §16.3.5).
    pub const fn is_cvar_pvar_type(self) -> bool {
        matches!(
            self,
            Datatype::Int
                | Datatype::Unsigned
                | Datatype::UnsignedLong
                | Datatype::UnsignedLongLong
                | Datatype::Count
                | Datatype::Char
                | Datatype::Double
        )
    }

    /// Whether the type is a signed or unsigned integer.
    pub const fn is_integer(self) -> bool {
        matches!(
            self.kind(),
            TypeKind::SignedInteger | TypeKind::UnsignedInteger
        )
    }

    /// Whether values can be negative (signed integers and floating point).
    pub const fn is_signed(self) -> bool {
        matches!(self.kind(), TypeKind::SignedInteger | TypeKind::Floating)
    }

    /// Whether the type is floating point.
    pub const fn is_floating(self) -> bool {
        matches!(self.kind(), TypeKind::Floating)
    }
}

/// One element of an MPI basic datatype, in the host's C representation.
///
/// Each variant corresponds to the [`Datatype`] of the same name. Character
/// data (`MPI_CHAR`) is kept as the raw byte, whatever the signedness of the
/// host's `char`.
///
/// # Making a value
///
/// Every datatype has these ways, the first of which always applies:
///
/// - **The variant** is the constructor of its datatype, holding the host's C
///   type: `Value::Int(x)` takes a `c_int`, `Value::UnsignedLong(x)` a
///   `c_ulong`, `Value::Char(b)` the raw byte, `Value::WChar(w)` a [`CWchar`],
///   `Value::Byte(b)` any byte. This is how the C aliases (`MPI_INT`,
///   `MPI_LONG`, `MPI_COUNT`, ...) are built: their Rust types are aliases of
///   the fixed-width ones, so no `From` impl can tell them apart.
/// - **`From`** for the Rust types that *are* an MPI datatype by name, one
///   datatype per Rust type: `i8`..`i64` give `MPI_INT8_T`..`MPI_INT64_T`,
///   `u8`..`u64` give `MPI_UINT8_T`..`MPI_UINT64_T`, `f32` gives `MPI_FLOAT`,
///   `f64` `MPI_DOUBLE`, `bool` `MPI_C_BOOL`, `isize` `MPI_AINT`; `TryFrom<char>`
///   gives `MPI_WCHAR` (fails only where `wchar_t` is 16 bits and the character
///   is beyond U+FFFF).
/// - **Exact constructors** for a datatype known at run time (a variable's):
///   [`Value::from_i64`], [`Value::from_u64`], [`Value::from_f64`],
///   [`Value::from_bool`] for the numeric datatypes, [`Value::from_char`] for
///   `MPI_CHAR` and `MPI_WCHAR`, and [`Value::convert_to`] from another value.
///   They give the number exactly or fail with [`Error::NotRepresentable`]:
///   out of range, a fraction for an integer type, a rounding for a float, a
///   number for character data or `MPI_BYTE` (not numbers, as for
///   [`Value::as_i64`]).
/// - **Text**: [`Value::parse`] reads what `Display` writes, for every
///   datatype; `FromStr` reads numbers and booleans without a datatype.
///
/// ```
/// use mpit_core::{Datatype, Error, Value};
///
/// assert_eq!(Value::from(7u64), Value::Uint64(7));
/// assert_eq!(Value::from(1.5f32), Value::Float(1.5));
/// assert_eq!(Value::from(true), Value::CBool(true));
/// assert_eq!(Value::from_i64(Datatype::Int, -3)?, Value::Int(-3));
/// assert_eq!(Value::from_f64(Datatype::UnsignedLong, 4.0)?, Value::UnsignedLong(4));
/// assert!(matches!(Value::from_f64(Datatype::Int, 2.5), Err(Error::NotRepresentable(_))));
/// assert!(matches!(Value::from_u64(Datatype::Short, 70_000), Err(Error::NotRepresentable(_))));
/// assert_eq!(Value::from_char(Datatype::Char, 'a')?, Value::Char(b'a'));
/// assert_eq!(Value::parse(Datatype::Count, "0x10")?, Value::Count(16));
/// # Ok::<(), Error>(())
/// ```
///
/// # Raw bytes
///
/// ```
/// use mpit_core::{Datatype, Value};
///
/// let v = Value::from_ne_bytes(Datatype::Int, &42i32.to_ne_bytes()).unwrap();
/// assert_eq!(v, Value::Int(42));
/// assert_eq!(v.datatype(), Datatype::Int);
/// assert_eq!(v.as_u64(), Some(42));
/// assert_eq!(Value::Int(-1).as_u64(), None);
/// assert_eq!(v.to_ne_bytes(), 42i32.to_ne_bytes());
/// assert!(Value::from_ne_bytes(Datatype::Int, &[0u8; 3]).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// `MPI_INT`.
    Int(c_int),
    /// `MPI_UNSIGNED`.
    Unsigned(c_uint),
    /// `MPI_UNSIGNED_LONG`.
    UnsignedLong(c_ulong),
    /// `MPI_UNSIGNED_LONG_LONG`.
    UnsignedLongLong(c_ulonglong),
    /// `MPI_COUNT`.
    Count(MpiCount),
    /// `MPI_CHAR`, as the raw byte.
    Char(u8),
    /// `MPI_DOUBLE`.
    Double(c_double),
    /// `MPI_SHORT`.
    Short(c_short),
    /// `MPI_LONG`.
    Long(c_long),
    /// `MPI_LONG_LONG`.
    LongLong(c_longlong),
    /// `MPI_SIGNED_CHAR`.
    SignedChar(c_schar),
    /// `MPI_UNSIGNED_CHAR`.
    UnsignedChar(c_uchar),
    /// `MPI_UNSIGNED_SHORT`.
    UnsignedShort(c_ushort),
    /// `MPI_FLOAT`.
    Float(c_float),
    /// `MPI_INT8_T`.
    Int8(i8),
    /// `MPI_INT16_T`.
    Int16(i16),
    /// `MPI_INT32_T`.
    Int32(i32),
    /// `MPI_INT64_T`.
    Int64(i64),
    /// `MPI_UINT8_T`.
    Uint8(u8),
    /// `MPI_UINT16_T`.
    Uint16(u16),
    /// `MPI_UINT32_T`.
    Uint32(u32),
    /// `MPI_UINT64_T`.
    Uint64(u64),
    /// `MPI_AINT`.
    Aint(MpiAint),
    /// `MPI_OFFSET`.
    Offset(MpiOffset),
    /// `MPI_C_BOOL`.
    CBool(bool),
    /// `MPI_WCHAR`.
    WChar(CWchar),
    /// `MPI_BYTE`.
    Byte(u8),
}

/// Applies `$body` to the payload of every variant, binding it as `$x`.
macro_rules! each_value {
    ($v:expr, $x:ident => $body:expr) => {
        match $v {
            Value::Int($x) => $body,
            Value::Unsigned($x) => $body,
            Value::UnsignedLong($x) => $body,
            Value::UnsignedLongLong($x) => $body,
            Value::Count($x) => $body,
            Value::Char($x) => $body,
            Value::Double($x) => $body,
            Value::Short($x) => $body,
            Value::Long($x) => $body,
            Value::LongLong($x) => $body,
            Value::SignedChar($x) => $body,
            Value::UnsignedChar($x) => $body,
            Value::UnsignedShort($x) => $body,
            Value::Float($x) => $body,
            Value::Int8($x) => $body,
            Value::Int16($x) => $body,
            Value::Int32($x) => $body,
            Value::Int64($x) => $body,
            Value::Uint8($x) => $body,
            Value::Uint16($x) => $body,
            Value::Uint32($x) => $body,
            Value::Uint64($x) => $body,
            Value::Aint($x) => $body,
            Value::Offset($x) => $body,
            Value::CBool($x) => $body,
            Value::WChar($x) => $body,
            Value::Byte($x) => $body,
        }
    };
}

/// Evaluates `$body` with `$ctor` bound to the variant of [`Value`] that holds an element of the
/// datatype `$dt` (a `fn(payload) -> Value`, so the payload's type is inferred from it).
macro_rules! with_variant {
    ($dt:expr, $ctor:ident => $body:expr) => {
        match $dt {
            Datatype::Int => {
                let $ctor = Value::Int;
                $body
            }
            Datatype::Unsigned => {
                let $ctor = Value::Unsigned;
                $body
            }
            Datatype::UnsignedLong => {
                let $ctor = Value::UnsignedLong;
                $body
            }
            Datatype::UnsignedLongLong => {
                let $ctor = Value::UnsignedLongLong;
                $body
            }
            Datatype::Count => {
                let $ctor = Value::Count;
                $body
            }
            Datatype::Char => {
                let $ctor = Value::Char;
                $body
            }
            Datatype::Double => {
                let $ctor = Value::Double;
                $body
            }
            Datatype::Short => {
                let $ctor = Value::Short;
                $body
            }
            Datatype::Long => {
                let $ctor = Value::Long;
                $body
            }
            Datatype::LongLong => {
                let $ctor = Value::LongLong;
                $body
            }
            Datatype::SignedChar => {
                let $ctor = Value::SignedChar;
                $body
            }
            Datatype::UnsignedChar => {
                let $ctor = Value::UnsignedChar;
                $body
            }
            Datatype::UnsignedShort => {
                let $ctor = Value::UnsignedShort;
                $body
            }
            Datatype::Float => {
                let $ctor = Value::Float;
                $body
            }
            Datatype::Int8 => {
                let $ctor = Value::Int8;
                $body
            }
            Datatype::Int16 => {
                let $ctor = Value::Int16;
                $body
            }
            Datatype::Int32 => {
                let $ctor = Value::Int32;
                $body
            }
            Datatype::Int64 => {
                let $ctor = Value::Int64;
                $body
            }
            Datatype::Uint8 => {
                let $ctor = Value::Uint8;
                $body
            }
            Datatype::Uint16 => {
                let $ctor = Value::Uint16;
                $body
            }
            Datatype::Uint32 => {
                let $ctor = Value::Uint32;
                $body
            }
            Datatype::Uint64 => {
                let $ctor = Value::Uint64;
                $body
            }
            Datatype::Aint => {
                let $ctor = Value::Aint;
                $body
            }
            Datatype::Offset => {
                let $ctor = Value::Offset;
                $body
            }
            Datatype::CBool => {
                let $ctor = Value::CBool;
                $body
            }
            Datatype::WChar => {
                let $ctor = Value::WChar;
                $body
            }
            Datatype::Byte => {
                let $ctor = Value::Byte;
                $body
            }
        }
    };
}

mod convert;
mod text;

/// A value seen as a number, for the lossless conversions.
enum Num {
    Int(i128),
    Float(f64),
    NotNumeric,
}

/// `f` as an integer, if it is one exactly.
fn f64_to_i128_exact(f: f64) -> Option<i128> {
    // 2^100 is far beyond any 64-bit integer and well inside i128.
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.267_650_600_228_229_4e30 {
        Some(f as i128)
    } else {
        None
    }
}

impl Value {
    /// The datatype of this value.
    pub const fn datatype(&self) -> Datatype {
        match self {
            Value::Int(_) => Datatype::Int,
            Value::Unsigned(_) => Datatype::Unsigned,
            Value::UnsignedLong(_) => Datatype::UnsignedLong,
            Value::UnsignedLongLong(_) => Datatype::UnsignedLongLong,
            Value::Count(_) => Datatype::Count,
            Value::Char(_) => Datatype::Char,
            Value::Double(_) => Datatype::Double,
            Value::Short(_) => Datatype::Short,
            Value::Long(_) => Datatype::Long,
            Value::LongLong(_) => Datatype::LongLong,
            Value::SignedChar(_) => Datatype::SignedChar,
            Value::UnsignedChar(_) => Datatype::UnsignedChar,
            Value::UnsignedShort(_) => Datatype::UnsignedShort,
            Value::Float(_) => Datatype::Float,
            Value::Int8(_) => Datatype::Int8,
            Value::Int16(_) => Datatype::Int16,
            Value::Int32(_) => Datatype::Int32,
            Value::Int64(_) => Datatype::Int64,
            Value::Uint8(_) => Datatype::Uint8,
            Value::Uint16(_) => Datatype::Uint16,
            Value::Uint32(_) => Datatype::Uint32,
            Value::Uint64(_) => Datatype::Uint64,
            Value::Aint(_) => Datatype::Aint,
            Value::Offset(_) => Datatype::Offset,
            Value::CBool(_) => Datatype::CBool,
            Value::WChar(_) => Datatype::WChar,
            Value::Byte(_) => Datatype::Byte,
        }
    }

    /// Decodes one element of `dt` from its native-endian bytes.
    ///
    /// Errors: [`Error::SizeMismatch`] unless `bytes.len() == dt.size()`;
    /// [`Error::InvalidValue`] for a `_Bool` byte other than 0 or 1.
    pub fn from_ne_bytes(dt: Datatype, bytes: &[u8]) -> Result<Value> {
        if bytes.len() != dt.size() {
            return Err(Error::size_mismatch(dt.size(), bytes.len()));
        }
        Ok(with_variant!(dt, variant => variant(read(bytes)?)))
    }

    /// Decodes consecutive elements of `dt` (a variable with a count > 1).
    ///
    /// Errors: [`Error::SizeMismatch`] unless `bytes.len()` is a multiple of
    /// `dt.size()`.
    pub fn decode_all(dt: Datatype, bytes: &[u8]) -> Result<Vec<Value>> {
        let size = dt.size();
        if !bytes.len().is_multiple_of(size) {
            return Err(Error::size_mismatch(
                bytes.len().next_multiple_of(size),
                bytes.len(),
            ));
        }
        bytes
            .chunks_exact(size)
            .map(|c| Value::from_ne_bytes(dt, c))
            .collect()
    }

    /// The native-endian bytes of the value (`datatype().size()` of them).
    pub fn to_ne_bytes(&self) -> Vec<u8> {
        let mut out = vec![0; self.datatype().size()];
        each_value!(*self, x => x.write(&mut out));
        out
    }

    /// Writes the native-endian bytes into `out`, which must be exactly
    /// `datatype().size()` long ([`Error::SizeMismatch`] otherwise).
    pub fn write_ne_bytes(&self, out: &mut [u8]) -> Result<()> {
        let size = self.datatype().size();
        if out.len() != size {
            return Err(Error::size_mismatch(size, out.len()));
        }
        each_value!(*self, x => x.write(out));
        Ok(())
    }

    fn num(&self) -> Num {
        match *self {
            Value::Double(f) => Num::Float(f),
            Value::Float(f) => Num::Float(f64::from(f)),
            Value::CBool(b) => Num::Int(i128::from(b)),
            Value::Char(_) | Value::WChar(_) | Value::Byte(_) => Num::NotNumeric,
            Value::Int(x) => Num::Int(x.into()),
            Value::Unsigned(x) => Num::Int(x.into()),
            Value::UnsignedLong(x) => Num::Int(x.into()),
            Value::UnsignedLongLong(x) => Num::Int(x.into()),
            Value::Count(x) => Num::Int(x.into()),
            Value::Short(x) => Num::Int(x.into()),
            Value::Long(x) => Num::Int(x.into()),
            Value::LongLong(x) => Num::Int(x.into()),
            Value::SignedChar(x) => Num::Int(x.into()),
            Value::UnsignedChar(x) => Num::Int(x.into()),
            Value::UnsignedShort(x) => Num::Int(x.into()),
            Value::Int8(x) => Num::Int(x.into()),
            Value::Int16(x) => Num::Int(x.into()),
            Value::Int32(x) => Num::Int(x.into()),
            Value::Int64(x) => Num::Int(x.into()),
            Value::Uint8(x) => Num::Int(x.into()),
            Value::Uint16(x) => Num::Int(x.into()),
            Value::Uint32(x) => Num::Int(x.into()),
            Value::Uint64(x) => Num::Int(x.into()),
            // isize is at most 64 bits on every Rust target.
            Value::Aint(x) => Num::Int(x as i128),
            Value::Offset(x) => Num::Int(x.into()),
        }
    }

    /// The value as an `i64` if that is exact (integers in range, floats
    /// with an integral value in range, `_Bool` as 0/1); `None` otherwise
    /// and for character and byte data.
    pub fn as_i64(&self) -> Option<i64> {
        match self.num() {
            Num::Int(i) => i64::try_from(i).ok(),
            Num::Float(f) => f64_to_i128_exact(f).and_then(|i| i64::try_from(i).ok()),
            Num::NotNumeric => None,
        }
    }

    /// The value as a `u64` if that is exact (see [`Value::as_i64`]).
    pub fn as_u64(&self) -> Option<u64> {
        match self.num() {
            Num::Int(i) => u64::try_from(i).ok(),
            Num::Float(f) => f64_to_i128_exact(f).and_then(|i| u64::try_from(i).ok()),
            Num::NotNumeric => None,
        }
    }

    /// The value as an `f64` if that is exact (all floats; integers up to
    /// 2^53 in magnitude and larger ones that happen to be representable);
    /// `None` otherwise and for character and byte data.
    pub fn as_f64(&self) -> Option<f64> {
        match self.num() {
            Num::Int(i) => {
                let f = i as f64;
                (f64_to_i128_exact(f) == Some(i)).then_some(f)
            }
            Num::Float(f) => Some(f),
            Num::NotNumeric => None,
        }
    }

    /// The value as an `f64`, rounding large integers; `None` for character
    /// and byte data. For statistics, where rounding is acceptable.
    pub fn to_f64_lossy(&self) -> Option<f64> {
        match self.num() {
            Num::Int(i) => Some(i as f64),
            Num::Float(f) => Some(f),
            Num::NotNumeric => None,
        }
    }
}

fn read<T: sealed::Sealed>(bytes: &[u8]) -> Result<T> {
    T::read(bytes).ok_or_else(|| {
        Error::invalid_value(format!(
            "{:?} is not a valid {}",
            bytes,
            core::any::type_name::<T>()
        ))
    })
}

pub(crate) mod sealed {
    /// Raw native-endian access; also seals [`Scalar`](super::Scalar).
    #[allow(unreachable_pub)] // sealed-trait idiom: public, but unnameable outside
    pub trait Sealed: Sized + Copy {
        /// Decodes from exactly `size_of::<Self>()` bytes; `None` for an
        /// invalid bit pattern (a `bool` other than 0/1).
        fn read(bytes: &[u8]) -> Option<Self>;
        /// Encodes into exactly `size_of::<Self>()` bytes.
        fn write(self, out: &mut [u8]);
    }

    macro_rules! ne_bytes {
        ($($t:ty),*) => {$(
            impl Sealed for $t {
                fn read(bytes: &[u8]) -> Option<Self> {
                    Some(<$t>::from_ne_bytes(bytes.try_into().ok()?))
                }
                fn write(self, out: &mut [u8]) {
                    out.copy_from_slice(&self.to_ne_bytes());
                }
            }
        )*};
    }
    ne_bytes!(i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, f32, f64);

    impl Sealed for bool {
        fn read(bytes: &[u8]) -> Option<Self> {
            match bytes {
                [0] => Some(false),
                [1] => Some(true),
                _ => None,
            }
        }
        fn write(self, out: &mut [u8]) {
            out.copy_from_slice(&[u8::from(self)]);
        }
    }
}

/// The rule behind [`Scalar::DATATYPES`]: a Rust type of `kind` and `size`
/// bytes represents `dt` on this host.
const fn represents(kind: TypeKind, size: usize, dt: Datatype) -> bool {
    if dt.size() != size {
        return false;
    }
    match (kind, dt.kind()) {
        (TypeKind::SignedInteger, TypeKind::SignedInteger)
        | (TypeKind::UnsignedInteger, TypeKind::UnsignedInteger)
        | (TypeKind::Floating, TypeKind::Floating)
        | (TypeKind::Boolean, TypeKind::Boolean) => true,
        // Characters and bytes have no arithmetic signedness: any integer of
        // the same size holds them unchanged.
        (
            TypeKind::SignedInteger | TypeKind::UnsignedInteger,
            TypeKind::Character | TypeKind::Byte,
        ) => true,
        _ => false,
    }
}

/// The datatypes a Rust type of `kind` and `size` represents, as a prefix of
/// the returned array.
const fn collect(kind: TypeKind, size: usize) -> ([Datatype; NUM_DATATYPES], usize) {
    let mut out = [Datatype::Int; NUM_DATATYPES];
    let mut n = 0;
    let mut i = 0;
    while i < NUM_DATATYPES {
        let dt = Datatype::ALL[i];
        if represents(kind, size, dt) {
            out[n] = dt;
            n += 1;
        }
        i += 1;
    }
    (out, n)
}

/// A Rust type that can hold one element of some MPI datatypes, for typed
/// reads and writes of variables and event data (MPI-4.1 §16.3.5).
///
/// The rule: a typed access is allowed only when the Rust type has the same
/// size *on this host* as the MPI datatype, and the same kind: signed
/// integer, unsigned integer, floating point, or boolean. Character data
/// (`MPI_CHAR`, `MPI_WCHAR`) and `MPI_BYTE` are accepted by integers of
/// either signedness of the same size. A mismatch is
/// [`Error::TypeMismatch`], never a wrong read.
///
/// Consequence: `u64` accepts `MPI_UNSIGNED_LONG` only where C `long` is 64
/// bits (LP64 Linux/macOS), and accepts `MPI_UNSIGNED_LONG_LONG` and
/// `MPI_UINT64_T` everywhere; `i64` accepts `MPI_COUNT`, `MPI_OFFSET`,
/// `MPI_LONG_LONG`, `MPI_INT64_T`, and on 64-bit hosts `MPI_AINT` and, on
/// LP64, `MPI_LONG`.
///
/// Sealed: implemented for `i8`..`i64`, `u8`..`u64`, `isize`, `usize`,
/// `f32`, `f64` and `bool` (so also for `core::ffi::c_int`, `c_ulong`, ...,
/// which are aliases of these).
///
/// ```
/// use mpit_core::{Datatype, Error, Scalar, Value};
///
/// assert!(u64::accepts(Datatype::UnsignedLongLong));
/// assert!(i32::accepts(Datatype::Int));
/// assert!(!u32::accepts(Datatype::Int)); // signedness differs
/// assert!(!f32::accepts(Datatype::Double)); // size differs
///
/// let v = 7u64.to_value(Datatype::UnsignedLongLong).unwrap();
/// assert_eq!(v, Value::UnsignedLongLong(7));
/// assert_eq!(u64::from_value(v).unwrap(), 7);
/// assert_eq!(
///     i32::from_value(Value::Double(1.0)),
///     Err(Error::type_mismatch(Datatype::Double, "i32"))
/// );
/// ```
pub trait Scalar: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The Rust type's name, as reported in [`Error::TypeMismatch`].
    const NAME: &'static str;
    /// Kind of the Rust type (`SignedInteger`, `UnsignedInteger`,
    /// `Floating` or `Boolean`).
    const KIND: TypeKind;
    /// Every MPI datatype whose C representation on this host is exactly
    /// this Rust type (see the rule above), in [`Datatype::ALL`] order.
    const DATATYPES: &'static [Datatype];

    /// Whether this type represents `dt` on this host.
    fn accepts(dt: Datatype) -> bool {
        Self::DATATYPES.contains(&dt)
    }

    /// `Ok` if this type represents `dt`, else [`Error::TypeMismatch`].
    fn check(dt: Datatype) -> Result<()> {
        if Self::accepts(dt) {
            Ok(())
        } else {
            Err(Error::type_mismatch(dt, Self::NAME))
        }
    }

    /// This value as an element of `dt` (bit-identical; `dt` must be
    /// accepted).
    fn to_value(self, dt: Datatype) -> Result<Value> {
        Self::check(dt)?;
        let mut buf = [0u8; 16];
        let bytes = &mut buf[..dt.size()];
        self.write(bytes);
        Value::from_ne_bytes(dt, bytes)
    }

    /// The Rust value of `v` (bit-identical; `v.datatype()` must be
    /// accepted).
    fn from_value(v: Value) -> Result<Self> {
        let dt = v.datatype();
        Self::check(dt)?;
        let mut buf = [0u8; 16];
        let bytes = &mut buf[..dt.size()];
        v.write_ne_bytes(bytes)?;
        read(bytes)
    }

    /// Decodes one element of `dt` from native-endian bytes.
    fn from_ne_bytes(dt: Datatype, bytes: &[u8]) -> Result<Self> {
        Self::check(dt)?;
        if bytes.len() != dt.size() {
            return Err(Error::size_mismatch(dt.size(), bytes.len()));
        }
        read(bytes)
    }
}

macro_rules! scalar {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        impl Scalar for $t {
            const NAME: &'static str = stringify!($t);
            const KIND: TypeKind = TypeKind::$kind;
            const DATATYPES: &'static [Datatype] = {
                const FOUND: ([Datatype; NUM_DATATYPES], usize) =
                    collect(TypeKind::$kind, size_of::<$t>());
                FOUND.0.split_at(FOUND.1).0
            };
        }
    )*};
}

scalar!(
    i8 => SignedInteger,
    i16 => SignedInteger,
    i32 => SignedInteger,
    i64 => SignedInteger,
    isize => SignedInteger,
    u8 => UnsignedInteger,
    u16 => UnsignedInteger,
    u32 => UnsignedInteger,
    u64 => UnsignedInteger,
    usize => UnsignedInteger,
    f32 => Floating,
    f64 => Floating,
    bool => Boolean,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lp64_expectations_hold_on_lp64_hosts() {
        if size_of::<c_long>() == 8 {
            assert!(u64::accepts(Datatype::UnsignedLong));
            assert!(u64::accepts(Datatype::UnsignedLongLong));
            assert!(i64::accepts(Datatype::Long));
        }
        assert!(i64::accepts(Datatype::Count));
        assert!(f64::DATATYPES == [Datatype::Double]);
        assert!(bool::DATATYPES == [Datatype::CBool]);
        assert!(u8::accepts(Datatype::Char) && i8::accepts(Datatype::Char));
    }

    #[test]
    fn conversions() {
        assert_eq!(Value::Uint64(u64::MAX).as_f64(), None);
        assert_eq!(Value::Uint64(1 << 63).as_f64(), Some(2f64.powi(63)));
        assert_eq!(Value::Int64(i64::MIN).as_f64(), Some(-(2f64.powi(63))));
        assert_eq!(Value::Double(2.5).as_i64(), None);
        assert_eq!(Value::Double(-3.0).as_i64(), Some(-3));
        assert_eq!(Value::Double(-3.0).as_u64(), None);
        assert_eq!(Value::Double(f64::NAN).as_u64(), None);
        assert_eq!(Value::Double(1.8446744073709552e19).as_u64(), None);
        assert_eq!(Value::Char(b'a').as_i64(), None);
        assert_eq!(Value::CBool(true).as_u64(), Some(1));
    }

    #[test]
    fn display() {
        assert_eq!(Value::Char(b'a').to_string(), "a");
        assert_eq!(Value::Char(0xff).to_string(), "\\xff");
        assert_eq!(Value::Byte(10).to_string(), "0x0a");
        assert_eq!(Value::Double(1.5).to_string(), "1.5");
        assert_eq!(Value::Int(-4).to_string(), "-4");
        assert_eq!(Value::CBool(true).to_string(), "true");
        assert_eq!(Value::WChar(0x41).to_string(), "A");
        #[cfg(not(windows))]
        assert_eq!(Value::WChar(-1).to_string(), "U+FFFFFFFF");
    }

    #[test]
    fn bool_bit_patterns() {
        assert!(Value::from_ne_bytes(Datatype::CBool, &[2]).is_err());
        assert_eq!(
            Value::from_ne_bytes(Datatype::CBool, &[1]).unwrap(),
            Value::CBool(true)
        );
    }
}
