//! The convention for returning strings (MPI-4.1 §16.3.3), as a pure
//! algorithm over a fetch closure, and the owned string it produces.
//!
//! The standard's convention: the caller passes a buffer and its length `n`
//! (an INOUT argument). The implementation writes at most `n - 1` characters
//! followed by a NUL; if the string does not fit, it is truncated and the
//! length of the whole string plus one is returned in the length argument.
//! A NULL buffer or a length of 0 only returns the length plus one.
//! [`fetch_string`] implements the caller's side of that contract and
//! survives implementations that bend it.

use core::fmt;
use std::borrow::Cow;
use std::ffi::CString;

use crate::error::{Error, Result};

/// Hard cap on the length of a string fetched from the implementation
/// (1 MiB, without the NUL). A longer reported length is
/// [`Error::StringTooLong`], so a garbage length never causes a huge
/// allocation.
pub const MAX_STRING_LEN: usize = 1 << 20;

/// How many times [`fetch_string`] calls the closure with a buffer before it
/// gives up with [`Error::Truncated`].
pub const MAX_FETCH_ATTEMPTS: usize = 8;

/// A string returned by MPI: arbitrary bytes without NUL (the standard does
/// not specify an encoding, MPI-4.1 §16.3.3).
///
/// The bytes are kept exactly as returned; invalid UTF-8 is never altered
/// ([`MpiString::to_string_lossy`] and `Display` replace it only in their
/// output).
///
/// ```
/// use mpit_core::MpiString;
///
/// let s = MpiString::new("eager_limit").unwrap();
/// assert_eq!(s, "eager_limit");
/// assert_eq!(s.to_str().unwrap(), "eager_limit");
/// let odd = MpiString::new(vec![b'a', 0xff]).unwrap();
/// assert_eq!(odd.as_bytes(), b"a\xff");
/// assert_eq!(odd.to_string(), "a\u{fffd}");
/// assert!(MpiString::new("a\0b").is_err());
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MpiString {
    // Invariant: no NUL byte.
    bytes: Vec<u8>,
}

impl MpiString {
    /// A string from bytes without NUL ([`Error::InteriorNul`] otherwise).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<MpiString> {
        let bytes = bytes.into();
        match bytes.iter().position(|&b| b == 0) {
            Some(position) => Err(Error::InteriorNul { position }),
            None => Ok(MpiString { bytes }),
        }
    }

    /// The string made of `buf` up to its first NUL (all of `buf` if none).
    pub fn from_nul_terminated(buf: &[u8]) -> MpiString {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        MpiString {
            bytes: buf[..end].to_vec(),
        }
    }

    /// The bytes, without the terminating NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes, without the terminating NUL.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Length in bytes, without the NUL.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the string is empty (e.g. a description the implementation
    /// chose not to provide).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The string as `&str`, if it is valid UTF-8.
    pub fn to_str(&self) -> core::result::Result<&str, core::str::Utf8Error> {
        core::str::from_utf8(&self.bytes)
    }

    /// The string with invalid UTF-8 replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }

    /// The bytes NUL-padded to `len`, as an `MPI_CHAR` variable of `len` elements holds them
    /// (MPI-4.1 §16.3.6: the count includes the terminating NUL).
    ///
    /// Errors: [`Error::CountMismatch`] (`len` against the string's length with its NUL) when
    /// the string does not fit with its NUL.
    ///
    /// ```
    /// use mpit_core::MpiString;
    ///
    /// let s = MpiString::new("ab").unwrap();
    /// assert_eq!(s.to_nul_padded(4).unwrap(), b"ab\0\0");
    /// assert!(s.to_nul_padded(2).is_err());
    /// ```
    pub fn to_nul_padded(&self, len: usize) -> Result<Vec<u8>> {
        if self.bytes.len() >= len {
            return Err(Error::count_mismatch(len, self.bytes.len() + 1));
        }
        let mut out = self.bytes.clone();
        out.resize(len, 0);
        Ok(out)
    }

    /// A NUL-terminated copy, e.g. for `MPI_T_cvar_get_index`.
    pub fn to_c_string(&self) -> CString {
        // Cannot fail: the invariant excludes NUL bytes.
        CString::new(self.bytes.clone()).unwrap_or_default()
    }
}

impl TryFrom<&str> for MpiString {
    type Error = Error;
    fn try_from(s: &str) -> Result<MpiString> {
        MpiString::new(s)
    }
}

impl TryFrom<String> for MpiString {
    type Error = Error;
    fn try_from(s: String) -> Result<MpiString> {
        MpiString::new(s)
    }
}

impl TryFrom<Vec<u8>> for MpiString {
    type Error = Error;
    fn try_from(b: Vec<u8>) -> Result<MpiString> {
        MpiString::new(b)
    }
}

impl AsRef<[u8]> for MpiString {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl PartialEq<str> for MpiString {
    fn eq(&self, other: &str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<&str> for MpiString {
    fn eq(&self, other: &&str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<[u8]> for MpiString {
    fn eq(&self, other: &[u8]) -> bool {
        self.bytes == other
    }
}

impl PartialEq<MpiString> for str {
    fn eq(&self, other: &MpiString) -> bool {
        self.as_bytes() == other.bytes
    }
}

impl PartialEq<MpiString> for &str {
    fn eq(&self, other: &MpiString) -> bool {
        self.as_bytes() == other.bytes
    }
}

impl fmt::Display for MpiString {
    /// Lossy: invalid UTF-8 is shown as U+FFFD.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_string_lossy(), f)
    }
}

impl fmt::Debug for MpiString {
    /// Lossless: a quoted string if valid UTF-8, else a byte string with
    /// escapes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_str() {
            Ok(s) => fmt::Debug::fmt(s, f),
            Err(_) => write!(f, "b\"{}\"", self.bytes.escape_ascii()),
        }
    }
}

/// Fetches a string with the convention of MPI-4.1 §16.3.3.
///
/// `fetch` performs one call of the MPI_T function and returns the value of
/// its INOUT length argument on return:
///
/// - `fetch(None)`: call with a NULL buffer and length 0; return the length
///   reported (the string's length plus one for the NUL).
/// - `fetch(Some(buf))`: call with `buf` and length `buf.len()`; the
///   implementation writes at most `buf.len() - 1` characters and a NUL.
///   Return the length reported. `buf` is zero-filled, at least 2 and at
///   most [`MAX_STRING_LEN`] + 2 bytes long, so its length fits a C `int`.
///
/// An error from `fetch` is returned as is. A negative length reported by C
/// should be mapped to [`Error::LengthOverflow`] by the closure.
///
/// The algorithm: query the length `n`; reported 0 means the empty string.
/// Fetch into `n + 1` bytes, one more than a conforming implementation
/// needs, so that an implementation reporting the length *without* the NUL
/// still fits. Accept when a NUL lies before the last byte of the buffer
/// and the length reported after the fetch does not exceed the buffer.
/// Otherwise (reported length larger, a NUL only in the last byte, or no NUL
/// at all), the string may have been truncated or may have grown: retry with
/// the larger of the reported length and twice the buffer, at most
/// [`MAX_FETCH_ATTEMPTS`] times, then [`Error::Truncated`]. A reported length
/// above [`MAX_STRING_LEN`] + 1 is [`Error::StringTooLong`]; the buffer never
/// exceeds that cap.
///
/// A conforming implementation costs exactly two calls.
///
/// ```
/// use mpit_core::{fetch_string, Result};
///
/// // A conforming implementation of the convention, for "hello".
/// let source = b"hello";
/// let s = fetch_string(|buf: Option<&mut [u8]>| -> Result<usize> {
///     if let Some(buf) = buf {
///         let n = source.len().min(buf.len() - 1);
///         buf[..n].copy_from_slice(&source[..n]);
///         buf[n] = 0;
///     }
///     Ok(source.len() + 1)
/// })
/// .unwrap();
/// assert_eq!(s, "hello");
/// ```
pub fn fetch_string<F>(mut fetch: F) -> Result<MpiString>
where
    F: FnMut(Option<&mut [u8]>) -> Result<usize>,
{
    let mut need = fetch(None)?;
    if need == 0 {
        return Ok(MpiString::default());
    }
    for _ in 0..MAX_FETCH_ATTEMPTS {
        check_len(need)?;
        // One spare byte: tolerates a length reported without the NUL.
        let cap = need + 1;
        let mut buf = vec![0u8; cap];
        let reported = fetch(Some(&mut buf))?;
        let nul = buf.iter().position(|&b| b == 0);
        match nul {
            // Ended before the spare byte and no claim of a longer string.
            Some(end) if end + 1 < cap && reported <= cap => {
                buf.truncate(end);
                return Ok(MpiString { bytes: buf });
            }
            _ => {
                need = reported.max(cap.saturating_mul(2));
                if need > MAX_STRING_LEN + 1 {
                    // Growth alone must not trip the cap; only a reported
                    // length above it is an error.
                    check_len(reported)?;
                    need = MAX_STRING_LEN + 1;
                    if cap > MAX_STRING_LEN + 1 {
                        break;
                    }
                }
            }
        }
    }
    Err(Error::Truncated {
        attempts: MAX_FETCH_ATTEMPTS,
    })
}

fn check_len(len: usize) -> Result<()> {
    if len > MAX_STRING_LEN + 1 {
        Err(Error::StringTooLong { len })
    } else {
        Ok(())
    }
}
