//! Which MPI library this is, in its own words, and the known quirks of real libraries.
//!
//! The standard fixes the names of MPI_T's functions and constants, not the behaviour of every
//! implementation in every corner. A safe API that runs on real libraries must refuse a few
//! calls that crash one of them, and must refuse them *only* there: each refusal is a
//! [`Quirk`], keyed by [`Vendor`] and a [`VersionRange`], and checked against the
//! [`Implementation`] the library reports through `MPI_Get_library_version` (MPI-4.1 §9.1.1).
//! The header's vendor macros are not enough: Intel MPI defines `MPICH_VERSION` too (as
//! "3.4a2"), and the library loaded at run time may differ from the header compiled against.
//!
//! ```
//! use mpit_core::implementation::{Family, Implementation, Vendor, Version};
//!
//! let intel = Implementation::from_library_version("Intel(R) MPI Library 2021.18.1 for Linux* OS\n")
//!     .unwrap();
//! assert_eq!(intel.vendor, Vendor::Intel);
//! assert_eq!(intel.family(), Family::Mpich);
//! assert_eq!(intel.version, Version::new(2021, 18, 1));
//! assert_eq!(intel.to_string(), "Intel MPI 2021.18.1");
//!
//! let mpich = Implementation::from_library_version("MPICH Version:\t4.0.2\nMPICH Release date: ...")
//!     .unwrap();
//! assert_eq!((mpich.vendor, mpich.version), (Vendor::Mpich, Version::new(4, 0, 2)));
//! ```

use core::fmt;

/// The code base an implementation derives from: quirks of a family's shared code show in
/// all its vendors' libraries, but versions are numbered per vendor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// MPICH and its derivatives (Intel MPI, MVAPICH, Cray MPICH, ...).
    Mpich,
    /// Open MPI and its derivatives.
    OpenMpi,
    /// Anything not recognised.
    Unknown,
}

/// Who makes the library, and so how its versions are numbered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// MPICH itself (Argonne), e.g. 4.0.2 or 5.0.2.
    Mpich,
    /// Intel MPI (MPICH-derived; versions like 2021.18.1).
    Intel,
    /// Open MPI, e.g. 4.1.4 or 5.0.11.
    OpenMpi,
    /// A library whose version string was not recognised.
    Unknown,
}

impl Vendor {
    /// The family the vendor's library derives from.
    pub const fn family(self) -> Family {
        match self {
            Vendor::Mpich | Vendor::Intel => Family::Mpich,
            Vendor::OpenMpi => Family::OpenMpi,
            Vendor::Unknown => Family::Unknown,
        }
    }

    /// The product's name: `MPICH`, `Intel MPI`, `Open MPI`, `unknown MPI`.
    pub const fn name(self) -> &'static str {
        match self {
            Vendor::Mpich => "MPICH",
            Vendor::Intel => "Intel MPI",
            Vendor::OpenMpi => "Open MPI",
            Vendor::Unknown => "unknown MPI",
        }
    }
}

/// A release number `major.minor.patch` (missing parts are 0; pre-release suffixes such as
/// `a2` or `rc1` are dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Version {
    /// First component.
    pub major: u32,
    /// Second component.
    pub minor: u32,
    /// Third component.
    pub patch: u32,
}

impl Version {
    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// Parses the leading `N[.N[.N]]` of `s` (`"4.1.4"`, `"2021.18"`, `"3.4a2"` -> 3.4.0).
    pub fn parse(s: &str) -> Option<Version> {
        let mut parts = [0u32; 3];
        let mut rest = s.trim_start();
        for (i, part) in parts.iter_mut().enumerate() {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                if i == 0 {
                    return None;
                }
                break;
            }
            *part = rest[..digits].parse().ok()?;
            rest = &rest[digits..];
            match rest.strip_prefix('.') {
                Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => rest = r,
                _ => break,
            }
        }
        Some(Version::new(parts[0], parts[1], parts[2]))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// An MPI library: vendor and version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Implementation {
    /// Who makes it.
    pub vendor: Vendor,
    /// Its own version number (not the MPI standard's).
    pub version: Version,
}

impl Implementation {
    /// The family of the vendor's code base.
    pub const fn family(&self) -> Family {
        self.vendor.family()
    }

    /// Recognises the string `MPI_Get_library_version` returns:
    /// `MPICH Version:\t4.0.2 ...`, `Intel(R) MPI Library 2021.18.1 for Linux* OS`,
    /// `Open MPI v4.1.4, package: ...`. `None` when it is none of these.
    pub fn from_library_version(s: &str) -> Option<Implementation> {
        let s = s.trim_start();
        let (vendor, rest) = if let Some(r) = s.strip_prefix("Intel(R) MPI Library") {
            (Vendor::Intel, r)
        } else if let Some(r) = s.strip_prefix("MPICH Version:") {
            (Vendor::Mpich, r)
        } else if let Some(r) = s.strip_prefix("Open MPI v") {
            (Vendor::OpenMpi, r)
        } else {
            return None;
        };
        let rest = rest.trim_start().trim_start_matches("Version").trim_start();
        Some(Implementation {
            vendor,
            version: Version::parse(rest)?,
        })
    }

    /// An implementation of unknown vendor and version 0.0.0 (matches no quirk).
    pub const UNKNOWN: Implementation = Implementation {
        vendor: Vendor::Unknown,
        version: Version::new(0, 0, 0),
    };
}

impl fmt::Display for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.vendor.name(), self.version)
    }
}

/// The value of configure option `option` in a library version string that lists the
/// library's configure line (MPICH does: `MPICH configure:\t--with-device=ch4:ofi ...`):
/// `Some("")` for a bare option, `Some(value)` for `option=value` (quotes around the word
/// dropped), `None` where it is absent.
///
/// ```
/// use mpit_core::implementation::configure_option;
/// let v = "MPICH Version:\t4.0.2\nMPICH configure:\t--enable-mpit-pvars=all --enable-mpit-events\n";
/// assert_eq!(configure_option(v, "--enable-mpit-pvars"), Some("all"));
/// assert_eq!(configure_option(v, "--enable-mpit-events"), Some(""));
/// assert_eq!(configure_option(v, "--enable-mpit"), None);
/// assert_eq!(configure_option(v, "--disable-fortran"), None);
/// ```
pub fn configure_option<'a>(library_version: &'a str, option: &str) -> Option<&'a str> {
    library_version.split_whitespace().find_map(|w| {
        let rest = w
            .trim_matches(|c| c == '\'' || c == '"')
            .strip_prefix(option)?;
        match rest.strip_prefix('=') {
            Some(v) => Some(v),
            None => rest.is_empty().then_some(""),
        }
    })
}

/// Versions `from <= v < until` (`until: None`: no fix known yet, every later version).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VersionRange {
    /// First affected version.
    pub from: Version,
    /// First version known not to be affected, if any.
    pub until: Option<Version>,
}

impl VersionRange {
    /// Whether `v` lies in the range.
    pub fn contains(&self, v: Version) -> bool {
        v >= self.from && self.until.is_none_or(|u| v < u)
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.until {
            Some(u) => write!(f, ">= {}, < {}", self.from, u),
            None => write!(f, ">= {}", self.from),
        }
    }
}

/// A known departure of a real implementation that a safe API must step around: a call the
/// standard allows that crashes the library (or corrupts the caller), refused before it is made.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Quirk {
    /// A stable name, e.g. `mpich-event-enumtype-uninitialised`.
    pub id: &'static str,
    /// The vendor whose library has it.
    pub vendor: Vendor,
    /// The versions that have it.
    pub versions: VersionRange,
    /// What goes wrong, and what the safe API does instead.
    pub summary: &'static str,
}

impl Quirk {
    /// Whether `imp` is one of the libraries with this quirk.
    pub fn applies_to(&self, imp: &Implementation) -> bool {
        imp.vendor == self.vendor && self.versions.contains(imp.version)
    }
}

impl fmt::Display for Quirk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} {}): {}",
            self.id,
            self.vendor.name(),
            self.versions,
            self.summary
        )
    }
}
