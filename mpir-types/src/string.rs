//! [`TargetString`]: a C string read out of (or written into) a target,
//! kept as its exact bytes.

use std::borrow::Cow;
use std::fmt;
use std::str::Utf8Error;
use std::sync::Arc;

/// The bytes of a C string from a target, without its terminating NUL, kept
/// losslessly: host names, executable paths and arguments are byte strings
/// on POSIX systems and need not be UTF-8. [`Display`](fmt::Display) is
/// lossy (invalid UTF-8 becomes U+FFFD); [`Debug`](fmt::Debug) escapes
/// non-printable bytes.
///
/// Cloning is cheap and shares the bytes: the descriptors of a table that
/// point at the same string share one allocation, as the starter shares one
/// string (§2.8.2).
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetString(Arc<[u8]>);

impl TargetString {
    /// A string with these bytes (which should contain no NUL).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        TargetString(Arc::from(bytes.into()))
    }

    /// The bytes, without a terminating NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The bytes as an owned vector.
    pub fn to_vec(&self) -> Vec<u8> {
        self.0.to_vec()
    }

    /// Number of bytes, without the NUL.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bytes as UTF-8, if they are.
    pub fn to_str(&self) -> Result<&str, Utf8Error> {
        std::str::from_utf8(&self.0)
    }

    /// The bytes as text, invalid UTF-8 replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    /// The bytes as an OS string (a path or an argument), losslessly.
    #[cfg(unix)]
    pub fn as_os_str(&self) -> &std::ffi::OsStr {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(&self.0)
    }

    /// Whether two strings share their storage (were read once, §2.8.2).
    pub fn shares_storage_with(&self, other: &TargetString) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Display for TargetString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

impl fmt::Debug for TargetString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.0.escape_ascii())
    }
}

impl AsRef<[u8]> for TargetString {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl From<&[u8]> for TargetString {
    fn from(bytes: &[u8]) -> Self {
        TargetString(Arc::from(bytes))
    }
}

impl From<Vec<u8>> for TargetString {
    fn from(bytes: Vec<u8>) -> Self {
        TargetString(Arc::from(bytes))
    }
}

impl From<&str> for TargetString {
    fn from(s: &str) -> Self {
        TargetString::from(s.as_bytes())
    }
}

impl From<String> for TargetString {
    fn from(s: String) -> Self {
        TargetString::from(s.into_bytes())
    }
}

impl PartialEq<[u8]> for TargetString {
    fn eq(&self, other: &[u8]) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&[u8]> for TargetString {
    fn eq(&self, other: &&[u8]) -> bool {
        *self.0 == **other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for TargetString {
    fn eq(&self, other: &&[u8; N]) -> bool {
        *self.0 == other[..]
    }
}

impl PartialEq<str> for TargetString {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other.as_bytes()
    }
}

impl PartialEq<&str> for TargetString {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == *other.as_bytes()
    }
}
