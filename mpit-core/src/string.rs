//! The convention for returning strings (MPI-4.1 §16.3.3), as a pure
//! algorithm over a fetch closure, and the owned string it produces.
//!
//! The standard's convention: the caller passes a buffer and its length `n`
//! (an INOUT argument). The implementation writes at most `n - 1` characters
//! followed by a NUL; if the string does not fit, it is truncated and the
//! length of the whole string plus one is returned in the length argument.
//! A NULL buffer or a length of 0 only returns the length plus one.
//! [`fetch_string`] implements the caller's side of that contract and
//! survives implementations that bend it; [`MpiString::fetch_after`] does
//! the same after a first call into a fixed buffer, which most strings fit.

use core::fmt;
use std::borrow::Cow;
use std::ffi::{CStr, CString};

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

    /// The string a call following the convention of MPI-4.1 §16.3.3 wrote into `buf`, given
    /// the length it reported in its INOUT length argument, if `buf` certainly holds all of it;
    /// `None` if the string may have been cut (then [`MpiString::fetch_after`] fetches it).
    ///
    /// The rule: a conforming implementation writes the string and a NUL when it fits (at most
    /// `buf.len() - 1` bytes before the NUL) and reports its length plus one, `n`. So the
    /// string is whole when `n` is below `buf.len()` and the first NUL of `buf` is the byte at
    /// `n - 1`; a reported 0 is the empty string (the convention's length of no string). A cut
    /// string is never accepted: a conforming implementation then reports more than
    /// `buf.len()`, and one that reports the length it wrote (MPICH 4.0.2, Open MPI 4.1 and
    /// 5.0) reports `buf.len()` with the NUL in the last byte, which is refused too, as is
    /// anything else (no NUL where the length says, a NUL before it). Only the bytes up to
    /// the reported length are read, so `buf` need not be cleared before the call: stale
    /// bytes past the NUL, or where an implementation wrote no NUL, are never taken for the
    /// string.
    ///
    /// ```
    /// use mpit_core::MpiString;
    ///
    /// let mut buf = [b'x'; 8]; // not cleared
    /// buf[..4].copy_from_slice(b"abc\0");
    /// assert_eq!(MpiString::from_filled(&buf, 4).unwrap(), "abc");
    /// // Cut: 7 bytes and a NUL written, 11 bytes plus one reported.
    /// assert_eq!(MpiString::from_filled(b"abcdefg\0", 12), None);
    /// // Cut, and the length of what was written reported (MPICH 4.0.2, Open MPI).
    /// assert_eq!(MpiString::from_filled(b"abcdefg\0", 8), None);
    /// // No NUL written after "abc": stale bytes are not taken for the string.
    /// assert_eq!(MpiString::from_filled(b"abcxx\0xx", 4), None);
    /// ```
    pub fn from_filled(buf: &[u8], reported: usize) -> Option<MpiString> {
        MpiStr::from_filled(buf, reported).map(MpiStr::to_mpi_string)
    }

    /// Finishes fetching a string (MPI-4.1 §16.3.3) whose first call already wrote into `buf`
    /// and reported `reported`: the string [`MpiString::from_filled`] finds there; else, where
    /// the reported length exceeds `buf` (a conforming implementation's sign of a cut string),
    /// the fetch loop of [`fetch_string`] through `fetch` from a buffer of that length plus
    /// one; else (a cut that the report does not show: MPICH 4.0.2, Open MPI 4.1 and 5.0
    /// report the length of what they wrote, the buffer's, not the whole string's) all of
    /// [`fetch_string`], length query first. `fetch` has [`fetch_string`]'s contract.
    ///
    /// So a string that fits costs the first call only, and a cut one one call more from a
    /// conforming implementation (two from one that hides the cut): this is how one
    /// `MPI_T_*_get_info` call into fixed buffers fetches a name and a description at once.
    /// Errors as [`fetch_string`]'s ([`Error::StringTooLong`] before any allocation for a
    /// reported length above [`MAX_STRING_LEN`] + 1).
    ///
    /// ```
    /// use mpit_core::{MpiString, Result};
    ///
    /// // A conforming implementation of the convention.
    /// let source = b"a description longer than the first buffer";
    /// let mut call = |buf: Option<&mut [u8]>| -> usize {
    ///     if let Some(buf) = buf {
    ///         let n = source.len().min(buf.len() - 1);
    ///         buf[..n].copy_from_slice(&source[..n]);
    ///         buf[n] = 0;
    ///     }
    ///     source.len() + 1
    /// };
    /// let mut first = [0u8; 16];
    /// let reported = call(Some(&mut first));
    /// let mut calls = 1;
    /// let s = MpiString::fetch_after(&first, reported, |buf| -> Result<usize> {
    ///     calls += 1;
    ///     Ok(call(buf))
    /// })
    /// .unwrap();
    /// assert_eq!(s.as_bytes(), source);
    /// assert_eq!(calls, 2);
    /// ```
    pub fn fetch_after<F>(buf: &[u8], reported: usize, fetch: F) -> Result<MpiString>
    where
        F: FnMut(Option<&mut [u8]>) -> Result<usize>,
    {
        if let Some(s) = MpiString::from_filled(buf, reported) {
            Ok(s)
        } else if reported > buf.len() {
            fetch_from(reported, fetch)
        } else {
            fetch_string(fetch)
        }
    }

    /// The bytes, without the terminating NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The string borrowed, as [`MpiStr`].
    pub fn as_mpi_str(&self) -> MpiStr<'_> {
        MpiStr { bytes: &self.bytes }
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
        self.as_mpi_str().to_str()
    }

    /// The string with invalid UTF-8 replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        self.as_mpi_str().to_string_lossy()
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
        fmt::Display::fmt(&self.as_mpi_str(), f)
    }
}

impl fmt::Debug for MpiString {
    /// Lossless: a quoted string if valid UTF-8, else a byte string with
    /// escapes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.as_mpi_str(), f)
    }
}

/// A string returned by MPI, borrowed: the bytes of an [`MpiString`], or of a buffer a call
/// filled (MPI-4.1 §16.3.3), without NUL. What the visitors of `mpit-safe` hand out, so that
/// looking at every variable's name copies nothing; [`MpiStr::to_mpi_string`] keeps one.
///
/// ```
/// use mpit_core::{MpiStr, MpiString};
///
/// let mut buf = [0u8; 16];
/// buf[..12].copy_from_slice(b"eager_limit\0");
/// let s = MpiStr::from_filled(&buf, 12).unwrap();
/// assert_eq!(s, "eager_limit");
/// assert_eq!(s.len(), 11);
/// let kept: MpiString = s.to_mpi_string();
/// assert_eq!(kept.as_mpi_str(), s);
/// assert!(MpiStr::new(b"a\0b").is_err());
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MpiStr<'a> {
    // Invariant: no NUL byte.
    bytes: &'a [u8],
}

impl<'a> MpiStr<'a> {
    /// A string of bytes without NUL ([`Error::InteriorNul`] otherwise).
    pub fn new(bytes: &'a [u8]) -> Result<MpiStr<'a>> {
        match bytes.iter().position(|&b| b == 0) {
            Some(position) => Err(Error::InteriorNul { position }),
            None => Ok(MpiStr { bytes }),
        }
    }

    /// [`MpiString::from_filled`], borrowing `buf`: the string a call wrote into `buf` and
    /// whose length plus one it reported, if `buf` certainly holds all of it.
    #[inline(always)]
    pub fn from_filled(buf: &'a [u8], reported: usize) -> Option<MpiStr<'a>> {
        if reported == 0 {
            return Some(MpiStr::default());
        }
        if reported >= buf.len() {
            return None;
        }
        let end = reported - 1;
        // Under 16 bytes before the NUL, in a buffer of at least 16 (most names): the first NUL
        // of one 16-byte word, found by one vector compare.
        if end < 16
            && let Some(&word) = buf.first_chunk::<16>()
        {
            return (first_nul_16(word) == end).then(|| MpiStr { bytes: &buf[..end] });
        }
        // Up to 32 (most other names): two 16-byte words, overlapping, inline.
        let s = &buf[..end];
        let inside = match end {
            16..=32 => block::<16>(&s[..16]) | block::<16>(&s[end - 16..]),
            _ => has_nul(s),
        };
        (buf[end] == 0 && !inside).then(|| MpiStr { bytes: &buf[..end] })
    }

    /// The C string at the start of `bytes`: the bytes before its first NUL, or all of them
    /// if there is none. What C reads of a buffer that holds a string, so never an error: how
    /// a borrowed record of a visit ([`MpiStr::from_filled`]'s bytes whose NUL it has not
    /// looked for yet) gives its strings.
    ///
    /// ```
    /// use mpit_core::MpiStr;
    ///
    /// assert_eq!(MpiStr::until_nul(b"eager\0limit"), "eager");
    /// assert_eq!(MpiStr::until_nul(b"eager"), "eager");
    /// assert!(MpiStr::until_nul(b"\0").is_empty());
    /// ```
    #[inline]
    pub fn until_nul(bytes: &'a [u8]) -> MpiStr<'a> {
        let end = CStr::from_bytes_until_nul(bytes).map_or(bytes.len(), CStr::count_bytes);
        MpiStr {
            bytes: &bytes[..end],
        }
    }

    /// The bytes, without the terminating NUL.
    pub fn as_bytes(self) -> &'a [u8] {
        self.bytes
    }

    /// Length in bytes, without the NUL.
    pub fn len(self) -> usize {
        self.bytes.len()
    }

    /// Whether the string is empty.
    pub fn is_empty(self) -> bool {
        self.bytes.is_empty()
    }

    /// The string as `&str`, if it is valid UTF-8.
    pub fn to_str(self) -> core::result::Result<&'a str, core::str::Utf8Error> {
        core::str::from_utf8(self.bytes)
    }

    /// The string with invalid UTF-8 replaced by U+FFFD.
    pub fn to_string_lossy(self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.bytes)
    }

    /// An owned copy.
    pub fn to_mpi_string(self) -> MpiString {
        MpiString {
            bytes: self.bytes.to_vec(),
        }
    }
}

impl From<MpiStr<'_>> for MpiString {
    fn from(s: MpiStr<'_>) -> MpiString {
        s.to_mpi_string()
    }
}

impl<'a> From<&'a MpiString> for MpiStr<'a> {
    fn from(s: &'a MpiString) -> MpiStr<'a> {
        s.as_mpi_str()
    }
}

impl AsRef<[u8]> for MpiStr<'_> {
    fn as_ref(&self) -> &[u8] {
        self.bytes
    }
}

impl PartialEq<str> for MpiStr<'_> {
    fn eq(&self, other: &str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<&str> for MpiStr<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<MpiString> for MpiStr<'_> {
    fn eq(&self, other: &MpiString) -> bool {
        self.bytes == other.bytes
    }
}

impl PartialEq<MpiStr<'_>> for MpiString {
    fn eq(&self, other: &MpiStr<'_>) -> bool {
        self.bytes == other.bytes
    }
}

impl fmt::Display for MpiStr<'_> {
    /// Lossy: invalid UTF-8 is shown as U+FFFD.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_string_lossy(), f)
    }
}

impl fmt::Debug for MpiStr<'_> {
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
    let need = fetch(None)?;
    if need == 0 {
        return Ok(MpiString::default());
    }
    fetch_from(need, fetch)
}

/// The index of the first NUL in `word` (16 where none): the bytes compared with 0 at once
/// (`0xff` where equal), the first match counted from the low end.
#[inline(always)]
fn first_nul_16(word: [u8; 16]) -> usize {
    let nul = word.map(|c| if c == 0 { 0xff } else { 0 });
    (u128::from_le_bytes(nul).trailing_zeros() / 8) as usize
}

/// Whether `b` holds a NUL, without an early exit.
#[inline(always)]
fn any_nul(b: &[u8]) -> bool {
    b.iter().fold(false, |found, &c| found | (c == 0))
}

/// [`any_nul`] of `N` bytes, compared at once (one vector compare for 16 or 32); `true` for a
/// slice of another length, which no caller passes.
#[inline(always)]
fn block<const N: usize>(b: &[u8]) -> bool {
    match <&[u8; N]>::try_from(b) {
        Ok(b) => any_nul(b),
        Err(_) => true,
    }
}

/// Whether `s` holds a NUL: in blocks without an early exit inside one, which the compiler
/// turns into vector compares (every string of a listing is checked, most of them hundreds of
/// bytes long), the tail in one more block that overlaps the last (no call to `memchr` for a
/// few bytes).
#[inline]
fn has_nul(s: &[u8]) -> bool {
    let n = s.len();
    match n {
        0..16 => any_nul(s),
        16..=32 => block::<16>(&s[..16]) | block::<16>(&s[n - 16..]),
        _ => s.chunks_exact(32).any(block::<32>) || block::<32>(&s[n - 32..]),
    }
}

/// Where the string ends in `buf` (the index of its NUL) if `buf`, zero-filled before a call
/// that reported `reported`, certainly holds all of it: a NUL before the last byte (the spare
/// byte tolerates a length reported without the NUL) and no claim of a string longer than
/// `buf`.
fn whole(buf: &[u8], reported: usize) -> Option<usize> {
    let end = CStr::from_bytes_until_nul(buf).ok()?.count_bytes();
    (end + 1 < buf.len() && reported <= buf.len()).then_some(end)
}

/// The fetch loop of [`fetch_string`] after its length query, from a first buffer of
/// `need + 1` bytes.
fn fetch_from<F>(mut need: usize, mut fetch: F) -> Result<MpiString>
where
    F: FnMut(Option<&mut [u8]>) -> Result<usize>,
{
    for _ in 0..MAX_FETCH_ATTEMPTS {
        check_len(need)?;
        // One spare byte: tolerates a length reported without the NUL.
        let cap = need + 1;
        let mut buf = vec![0u8; cap];
        let reported = fetch(Some(&mut buf))?;
        if let Some(end) = whole(&buf, reported) {
            buf.truncate(end);
            return Ok(MpiString { bytes: buf });
        }
        // Truncated, grown, or not terminated: retry larger.
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
