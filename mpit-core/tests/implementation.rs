//! Identifying an implementation from `MPI_Get_library_version` (MPI-4.1 §9.1.1) and keying
//! quirks by vendor and version range.

use mpit_core::implementation::{Family, Implementation, Quirk, Vendor, Version, VersionRange};
use proptest::prelude::*;

/// The first lines each library here returns (measured on this machine's six).
const MEASURED: &[(&str, Vendor, (u32, u32, u32))] = &[
    (
        "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\nMPICH ABI:\t14:2:2\n",
        Vendor::Mpich,
        (4, 0, 2),
    ),
    (
        "MPICH Version:      5.0.2\nMPICH Release date: Fri Sep 25 20:45:26 UTC 2026\n",
        Vendor::Mpich,
        (5, 0, 2),
    ),
    (
        "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022",
        Vendor::OpenMpi,
        (4, 1, 4),
    ),
    (
        "Open MPI v5.0.11, package: Open MPI user@localhost Distribution, ident: 5.0.11, repo rev: v5.0.11rc1",
        Vendor::OpenMpi,
        (5, 0, 11),
    ),
    (
        "Intel(R) MPI Library 2021.18.1 for Linux* OS\n",
        Vendor::Intel,
        (2021, 18, 1),
    ),
];

#[test]
fn the_measured_libraries_are_recognised() {
    for (s, vendor, (a, b, c)) in MEASURED {
        let imp = Implementation::from_library_version(s).unwrap();
        assert_eq!(imp.vendor, *vendor, "{s:?}");
        assert_eq!(imp.version, Version::new(*a, *b, *c), "{s:?}");
    }
    // Intel MPI is of the MPICH family but not MPICH: its quirks are its own.
    let intel = Implementation::from_library_version(MEASURED[4].0).unwrap();
    assert_eq!(intel.family(), Family::Mpich);
    assert_ne!(intel.vendor, Vendor::Mpich);
    assert_eq!(intel.to_string(), "Intel MPI 2021.18.1");
}

#[test]
fn unknown_libraries_are_not_guessed() {
    for s in [
        "",
        "MVAPICH2 Version 2.3",
        "Spectrum MPI",
        "MPICH Version: unknown",
    ] {
        assert_eq!(Implementation::from_library_version(s), None, "{s:?}");
    }
}

#[test]
fn versions_parse_leniently_and_compare_numerically() {
    assert_eq!(Version::parse("3.4a2"), Some(Version::new(3, 4, 0)));
    assert_eq!(Version::parse("2021.18"), Some(Version::new(2021, 18, 0)));
    assert_eq!(Version::parse("5.0.11rc1"), Some(Version::new(5, 0, 11)));
    assert_eq!(Version::parse("4."), Some(Version::new(4, 0, 0)));
    assert_eq!(Version::parse("v4"), None);
    assert!(Version::new(4, 1, 10) > Version::new(4, 1, 9));
    assert!(Version::new(5, 0, 0) > Version::new(4, 99, 99));
}

static MPICH_4: Quirk = Quirk {
    id: "test-mpich-4",
    vendor: Vendor::Mpich,
    versions: VersionRange {
        from: Version::new(4, 0, 0),
        until: Some(Version::new(5, 0, 0)),
    },
    summary: "a test quirk",
};

#[test]
fn a_quirk_applies_to_its_vendor_and_range_only() {
    let at = |vendor, v: (u32, u32, u32)| Implementation {
        vendor,
        version: Version::new(v.0, v.1, v.2),
    };
    assert!(MPICH_4.applies_to(&at(Vendor::Mpich, (4, 0, 2))));
    assert!(!MPICH_4.applies_to(&at(Vendor::Mpich, (5, 0, 2))));
    assert!(!MPICH_4.applies_to(&at(Vendor::Mpich, (3, 4, 3))));
    // Same family, other vendor: Intel MPI's "MPICH 3.4a2" heritage does not make it MPICH.
    assert!(!MPICH_4.applies_to(&at(Vendor::Intel, (4, 0, 2))));
    assert!(!MPICH_4.applies_to(&Implementation::UNKNOWN));
    assert!(MPICH_4.to_string().contains(">= 4.0.0, < 5.0.0"));
}

fn version() -> impl Strategy<Value = Version> {
    (0u32..3000, 0u32..100, 0u32..100).prop_map(|(a, b, c)| Version::new(a, b, c))
}

proptest! {
    /// Display and parse are inverse: a version printed as `a.b.c` reads back the same.
    #[test]
    fn version_display_round_trips(v in version()) {
        prop_assert_eq!(Version::parse(&v.to_string()), Some(v));
    }

    /// A range holds exactly the versions `from <= v < until` (no `until`: every later one).
    #[test]
    fn ranges_are_half_open(from in version(), until in proptest::option::of(version()), v in version()) {
        let r = VersionRange { from, until };
        prop_assert_eq!(r.contains(v), v >= from && until.is_none_or(|u| v < u));
    }

    /// Any MPICH or Open MPI version string in the libraries' formats is recognised with its
    /// version, whatever follows it.
    #[test]
    fn library_strings_round_trip(v in version(), tail in "[ -~]{0,40}") {
        let mpich = format!("MPICH Version:\t{v}\n{tail}");
        let ompi = format!("Open MPI v{v}, package: {tail}");
        let intel = format!("Intel(R) MPI Library {v} for Linux* OS{tail}");
        for (s, vendor) in [(mpich, Vendor::Mpich), (ompi, Vendor::OpenMpi), (intel, Vendor::Intel)] {
            let imp = Implementation::from_library_version(&s).unwrap();
            prop_assert_eq!(imp.vendor, vendor);
            prop_assert_eq!(imp.version, v);
        }
    }
}
