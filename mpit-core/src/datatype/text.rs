//! Values as text: `Display` (honouring width, fill, alignment and, for floats, precision),
//! [`Value::parse`] for a known datatype, and `FromStr` for numbers and booleans.
//!
//! The rule that ties them: for every value `v`, `Value::parse(v.datatype(), &v.to_string())`
//! is `Ok(v)` (NaN aside, which is not equal to itself); `mpit-core/tests/datatype.rs` checks
//! it for every datatype.

use core::fmt::{self, Write as _};
use core::str::FromStr;

use super::{CWchar, Datatype, Num, TypeKind, Value};
use crate::error::{Error, Result};

/// Text short enough for one formatted element (`U+FFFFFFFF` is the longest), on the stack.
struct Small {
    buf: [u8; 16],
    len: usize,
}

impl Small {
    fn of(args: fmt::Arguments<'_>) -> Small {
        let mut s = Small {
            buf: [0; 16],
            len: 0,
        };
        // Cannot fail: every text written here fits.
        let _ = s.write_fmt(args);
        s
    }

    fn as_str(&self) -> &str {
        // Only whole `&str`s were copied in.
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl fmt::Write for Small {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes `s` padded to the formatter's width with its fill, aligned as asked or as
/// `default`. Unlike [`fmt::Formatter::pad`] it never truncates: precision is for floats.
fn pad(f: &mut fmt::Formatter<'_>, s: &str, default: fmt::Alignment) -> fmt::Result {
    let len = s.chars().count();
    let Some(extra) = f.width().and_then(|w| w.checked_sub(len)) else {
        return f.write_str(s);
    };
    let (before, after) = match f.align().unwrap_or(default) {
        fmt::Alignment::Left => (0, extra),
        fmt::Alignment::Right => (extra, 0),
        fmt::Alignment::Center => (extra / 2, extra - extra / 2),
    };
    let fill = f.fill();
    for _ in 0..before {
        f.write_char(fill)?;
    }
    f.write_str(s)?;
    for _ in 0..after {
        f.write_char(fill)?;
    }
    Ok(())
}

/// The code point `Display` shows for a `wchar_t` (`w as u32`: a bit pattern where `wchar_t`
/// is 32 bits).
fn wchar_code(w: CWchar) -> u32 {
    w as u32
}

/// The `wchar_t` that `Display` shows as `U+{cp:X}`: the inverse of [`wchar_code`].
#[cfg(not(windows))]
fn wchar_of_code(cp: u32) -> Option<CWchar> {
    Some(cp as CWchar)
}

/// The `wchar_t` that `Display` shows as `U+{cp:X}`: the inverse of [`wchar_code`].
#[cfg(windows)]
fn wchar_of_code(cp: u32) -> Option<CWchar> {
    CWchar::try_from(cp).ok()
}

impl fmt::Display for Value {
    /// Numbers in decimal as Rust prints them (floats the shortest text that reads back as the
    /// same number), `MPI_C_BOOL` as `true`/`false`, `MPI_CHAR` as the character escaped as
    /// [`u8::escape_ascii`] does unless printable ASCII, `MPI_WCHAR` as the character or
    /// `U+XXXX` (control characters and invalid code points), `MPI_BYTE` as `0xNN`.
    ///
    /// Width, fill and alignment apply to every datatype: numbers and bytes align right by
    /// default, text and booleans left, as Rust's own types do. `+` and `0` apply to numbers
    /// (`0` also to bytes: `0x000a`), precision to floats only (it never truncates text).
    ///
    /// ```
    /// use mpit_core::Value;
    ///
    /// assert_eq!(format!("[{:>6}]", Value::Int(-42)), "[   -42]");
    /// assert_eq!(format!("[{:<6}]", Value::Unsigned(7)), "[7     ]");
    /// assert_eq!(format!("[{:^7}]", Value::CBool(true)), "[ true  ]");
    /// assert_eq!(format!("[{:06}]", Value::Count(-5)), "[-00005]");
    /// assert_eq!(format!("[{:+}]", Value::Long(5)), "[+5]");
    /// assert_eq!(format!("[{:.3}]", Value::Double(2.0 / 3.0)), "[0.667]");
    /// assert_eq!(format!("[{:*>4}]", Value::Char(b'a')), "[***a]");
    /// assert_eq!(format!("[{:6}]", Value::Char(b'\n')), "[\\n    ]");
    /// assert_eq!(format!("[{:8}]", Value::WChar(0x263A)), "[☺       ]");
    /// assert_eq!(format!("[{:>8}]", Value::WChar(0x7)), "[  U+0007]");
    /// assert_eq!(format!("[{:6}]", Value::Byte(10)), "[  0x0a]");
    /// assert_eq!(format!("[{:06}]", Value::Byte(10)), "[0x000a]");
    /// assert_eq!(Value::Double(0.1).to_string(), "0.1");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Alignment::{Left, Right};
        match *self {
            Value::Char(c) => pad(
                f,
                Small::of(format_args!("{}", c.escape_ascii())).as_str(),
                Left,
            ),
            Value::WChar(w) => {
                // wchar_t holds a code point (UTF-32 on non-Windows hosts).
                let cp = wchar_code(w);
                let text = match char::from_u32(cp) {
                    Some(c) if !c.is_control() => Small::of(format_args!("{c}")),
                    _ => Small::of(format_args!("U+{cp:04X}")),
                };
                pad(f, text.as_str(), Left)
            }
            Value::Byte(b) if f.sign_aware_zero_pad() => {
                let width = f.width().unwrap_or(0).max(4);
                write!(f, "{b:#0width$x}")
            }
            Value::Byte(b) => pad(f, Small::of(format_args!("{b:#04x}")).as_str(), Right),
            Value::CBool(b) => pad(f, if b { "true" } else { "false" }, Left),
            v => each_value!(v, x => fmt::Display::fmt(&x, f)),
        }
    }
}

/// An integer as [`Value::parse`] reads it: an optional sign, then decimal digits or `0x`
/// (or `0X`) and hexadecimal digits; no spaces, no `_`. Saturates beyond `i128`, which no
/// datatype holds anyway; `None` when the text is not an integer.
fn parse_integer(text: &str) -> Option<i128> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = match rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        Some(hex) => (16, hex),
        None => (10, rest),
    };
    // `from_str_radix` would accept a sign of its own.
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix)
        .map_or(i128::MAX, |m| i128::try_from(m).unwrap_or(i128::MAX));
    Some(if negative { -magnitude } else { magnitude })
}

/// `MPI_CHAR` text: one ASCII character, or an escape as [`u8::escape_ascii`] writes it
/// (`\t`, `\r`, `\n`, `\\`, `\'`, `\"`, `\xNN`).
fn parse_c_char(text: &str) -> Option<u8> {
    match text.as_bytes() {
        [b'\\', b't'] => Some(b'\t'),
        [b'\\', b'r'] => Some(b'\r'),
        [b'\\', b'n'] => Some(b'\n'),
        [b'\\', c @ (b'\\' | b'\'' | b'"')] => Some(*c),
        [b'\\', b'x', hex @ ..] if hex.len() == 2 && hex.iter().all(u8::is_ascii_hexdigit) => {
            u8::from_str_radix(core::str::from_utf8(hex).ok()?, 16).ok()
        }
        _ => None,
    }
}

/// `MPI_WCHAR` text other than a single character: `U+` and 1 to 8 hexadecimal digits.
fn parse_wchar_code(text: &str) -> Option<CWchar> {
    let hex = text
        .strip_prefix("U+")
        .or_else(|| text.strip_prefix("u+"))?;
    if hex.is_empty() || hex.len() > 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    wchar_of_code(u32::from_str_radix(hex, 16).ok()?)
}

/// `MPI_C_BOOL` text: `true`, `false` (ASCII case ignored), `1`, `0`.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" => Some(true),
        "0" => Some(false),
        t if t.eq_ignore_ascii_case("true") => Some(true),
        t if t.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

impl Value {
    /// Reads an element of `dt` from text, for tools that take values on a command line or
    /// from a file. It reads what [`Display`](fmt::Display) writes, for every datatype:
    /// `Value::parse(v.datatype(), &v.to_string()) == Ok(v)` (NaN aside).
    ///
    /// - integers: an optional sign, then decimal digits, or `0x` and hexadecimal digits;
    /// - `MPI_FLOAT`, `MPI_DOUBLE`: what Rust's `f32`/`f64` `FromStr` accepts (`1.5`, `-2e-3`,
    ///   `inf`, `infinity`, `nan`, ASCII case ignored), rounded to the nearest `float` or
    ///   `double` as C's `strtof`/`strtod` do;
    /// - `MPI_C_BOOL`: `true`, `false` (ASCII case ignored), `1`, `0`;
    /// - `MPI_BYTE`: `0xNN` or a decimal number up to 255;
    /// - `MPI_CHAR`: exactly one ASCII character, or an escape as `Display` writes it (`\n`,
    ///   `\t`, `\r`, `\\`, `\'`, `\"`, `\xNN`);
    /// - `MPI_WCHAR`: exactly one character, or `U+` and 1 to 8 hexadecimal digits.
    ///
    /// Spaces around the text are ignored, except for the two character datatypes, where a
    /// space is a character.
    ///
    /// Errors: [`Error::Parse`] (with the datatype's C name) for text of the wrong form,
    /// [`Error::NotRepresentable`] for a number of the right form that `dt` cannot hold
    /// (`300` for `MPI_SIGNED_CHAR`, `-1` for `MPI_UNSIGNED`, `é` for `MPI_CHAR`).
    ///
    /// ```
    /// use mpit_core::{Datatype, Error, Value};
    ///
    /// assert_eq!(Value::parse(Datatype::Int, " -42 ")?, Value::Int(-42));
    /// assert_eq!(Value::parse(Datatype::UnsignedLong, "0xff")?, Value::UnsignedLong(255));
    /// assert_eq!(Value::parse(Datatype::Double, "1e-3")?, Value::Double(0.001));
    /// assert_eq!(Value::parse(Datatype::Float, "0.1")?, Value::Float(0.1));
    /// assert_eq!(Value::parse(Datatype::Double, "-inf")?, Value::Double(f64::NEG_INFINITY));
    /// assert_eq!(Value::parse(Datatype::CBool, "TRUE")?, Value::CBool(true));
    /// assert_eq!(Value::parse(Datatype::Byte, "0x0a")?, Value::Byte(10));
    /// assert_eq!(Value::parse(Datatype::Char, "\\n")?, Value::Char(b'\n'));
    /// assert_eq!(Value::parse(Datatype::Char, " ")?, Value::Char(b' '));
    /// assert_eq!(Value::parse(Datatype::WChar, "U+263A")?, Value::WChar(0x263A));
    /// assert!(matches!(Value::parse(Datatype::Int, "4x"), Err(Error::Parse(_))));
    /// assert!(matches!(Value::parse(Datatype::Unsigned, "-1"), Err(Error::NotRepresentable(_))));
    ///
    /// // What Display writes reads back.
    /// let v = Value::Char(0xff);
    /// assert_eq!(v.to_string(), "\\xff");
    /// assert_eq!(Value::parse(v.datatype(), &v.to_string())?, v);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn parse(dt: Datatype, text: &str) -> Result<Value> {
        let bad = || Error::parse(dt.c_name(), text);
        match dt.kind() {
            TypeKind::Character => {
                let mut chars = text.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    return Value::from_char(dt, c);
                }
                let v = if dt == Datatype::Char {
                    parse_c_char(text).map(Value::Char)
                } else {
                    parse_wchar_code(text).map(Value::WChar)
                };
                v.ok_or_else(bad)
            }
            TypeKind::Floating => {
                let t = text.trim();
                let v = if dt == Datatype::Float {
                    t.parse().map(Value::Float)
                } else {
                    t.parse().map(Value::Double)
                };
                v.map_err(|_| bad())
            }
            TypeKind::Boolean => parse_bool(text.trim()).map(Value::CBool).ok_or_else(bad),
            TypeKind::Byte => {
                let t = text.trim();
                let i = parse_integer(t).ok_or_else(bad)?;
                u8::try_from(i)
                    .map(Value::Byte)
                    .map_err(|_| Error::not_representable(dt, t))
            }
            TypeKind::SignedInteger | TypeKind::UnsignedInteger => {
                let t = text.trim();
                Value::from_num(dt, Num::Int(parse_integer(t).ok_or_else(bad)?), t)
            }
        }
    }
}

/// A number or a boolean written without a datatype, as the natural Rust type reads it:
/// `true`/`false` (ASCII case ignored) as `MPI_C_BOOL`; an integer (decimal or `0x` hex, as
/// [`Value::parse`] reads integers) as `MPI_INT64_T`, or `MPI_UINT64_T` above `i64::MAX`; any
/// other number Rust's `f64` reads as `MPI_DOUBLE`. Spaces around it are ignored.
///
/// Follow it with [`Value::convert_to`] for a variable's datatype: that is exact or an error.
/// Where the datatype is known, [`Value::parse`] is the better reader: it reads every
/// datatype (character data too), and floats at the datatype's own precision, so that what
/// `Display` wrote reads back (`"0.1".parse::<Value>()?.convert_to(Datatype::Float)` is an
/// error, since 0.1 is not an `f32`; `Value::parse(Datatype::Float, "0.1")` is the nearest
/// `f32`).
///
/// Errors: [`Error::Parse`] for other text, [`Error::NotRepresentable`] for an integer beyond
/// `u64`.
///
/// ```
/// use mpit_core::{Datatype, Error, Value};
///
/// assert_eq!("42".parse::<Value>()?, Value::Int64(42));
/// assert_eq!("42".parse::<Value>()?.convert_to(Datatype::Int)?, Value::Int(42));
/// assert_eq!("0xffffffffffffffff".parse::<Value>()?, Value::Uint64(u64::MAX));
/// assert_eq!("2.5".parse::<Value>()?, Value::Double(2.5));
/// assert_eq!(" False ".parse::<Value>()?, Value::CBool(false));
/// assert!("2.5".parse::<Value>()?.convert_to(Datatype::Int).is_err());
/// assert!("eager".parse::<Value>().is_err());
/// # Ok::<(), Error>(())
/// ```
impl FromStr for Value {
    type Err = Error;

    fn from_str(s: &str) -> Result<Value> {
        let t = s.trim();
        // `1` and `0` are integers here.
        if t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false") {
            return Ok(Value::CBool(t.len() == 4));
        }
        if let Some(i) = parse_integer(t) {
            return i64::try_from(i)
                .map(Value::Int64)
                .or_else(|_| u64::try_from(i).map(Value::Uint64))
                .map_err(|_| Error::not_representable(Datatype::Uint64, t));
        }
        t.parse()
            .map(Value::Double)
            .map_err(|_| Error::parse("number or boolean", s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_never_truncates_text() {
        assert_eq!(format!("{:.1}", Value::CBool(false)), "false");
        assert_eq!(format!("{:.1}", Value::Char(0)), "\\x00");
        assert_eq!(format!("{:.1}", Value::Float(0.25)), "0.2");
    }

    #[test]
    fn integers() {
        assert_eq!(parse_integer("-0x10"), Some(-16));
        assert_eq!(parse_integer("+7"), Some(7));
        assert_eq!(parse_integer("--7"), None);
        assert_eq!(parse_integer("0x+7"), None);
        assert_eq!(parse_integer("0x"), None);
        assert_eq!(parse_integer(""), None);
        assert_eq!(parse_integer("1_000"), None);
        assert_eq!(parse_integer(&"9".repeat(50)), Some(i128::MAX));
        assert!(matches!(
            Value::parse(Datatype::Count, &"9".repeat(50)),
            Err(Error::NotRepresentable(_))
        ));
    }

    #[cfg(not(windows))]
    #[test]
    fn wchar_codes_round_trip() {
        assert_eq!(wchar_of_code(wchar_code(-1)), Some(-1));
        assert_eq!(parse_wchar_code("U+0041"), Some(0x41));
        assert_eq!(parse_wchar_code("U+"), None);
        assert_eq!(parse_wchar_code("U+123456789"), None);
    }
}
