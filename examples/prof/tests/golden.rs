//! Golden tests of `mpit-prof`'s outputs: each recorded job's profile (`tests/golden/`, recorded
//! as `tests/golden/README.md` says) reduced and rendered must be exactly the recorded outputs
//! (a changed column, header or JSON key fails here).
//!
//! `UPDATE_GOLDEN=1 cargo test -p mpit-prof --test integration golden::` rewrites the golden files from the
//! current rendering (review the diff before committing it). No MPI is needed: the renderings are
//! pure functions of the profiles, so these tests give the same result on every implementation.

use std::path::{Path, PathBuf};

use mpit_test_support::golden::{self, Golden, read};

use mpit_prof::{model, reduce, write};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// A recorded model (JSON, `rel` under `tests/golden/`) must come back as itself, written by
/// `write` (with a final newline): the model loses nothing, and where the file is the tool's
/// JSON output, that output is unchanged.
fn round_trip<T: serde::de::DeserializeOwned>(rel: &str, write: impl Fn(&T) -> String) -> T {
    golden::round_trip(&golden_dir().join(rel), |t| serde_json::from_str(t), write)
}

/// Each recorded job (`*.ranks.json`, every rank's profile as
/// `tests/prof_live.rs` writes it) comes back byte for byte as the `ranks.json` output, and its
/// reduction renders the golden `profile.txt`, `profile.json`, `comm-matrix.json` and heat map;
/// two runs of the same job give the golden diff; a synthetic 32-rank ring gives the heat map
/// of a matrix too large for its values to be written in the cells.
#[test]
fn mpit_prof_renders_the_recorded_profiles() {
    let mut golden = Golden::new(golden_dir());
    let job = |name: &str| -> reduce::Profile {
        let ranks: Vec<model::RankProfile> = round_trip(
            &format!("{name}.ranks.json"),
            |r: &Vec<model::RankProfile>| serde_json::to_string_pretty(r).unwrap(),
        );
        reduce::reduce(&ranks)
    };
    for name in ["openmpi5", "mpich", "mpich-ev"] {
        let p = job(name);
        let files = write::outputs(&p).unwrap();
        let file = |f: &str| {
            files
                .iter()
                .find(|(n, _)| n == f)
                .map(|(_, c)| c.as_str())
                .unwrap_or_else(|| panic!("{name}: no {f}"))
        };
        assert_eq!(
            file(write::RANKS_FILE),
            read(&golden_dir().join(format!("{name}.ranks.json"))),
            "{name}: ranks.json is the recorded input"
        );
        golden.check(&format!("{name}.profile.txt"), file("profile.txt"));
        golden.check(&format!("{name}.profile.json"), file("profile.json"));
        if !p.matrices.is_empty() {
            golden.check(
                &format!("{name}.comm-matrix.json"),
                file("comm-matrix.json"),
            );
            let svg = "comm-matrix-pml_monitoring_messages_size.svg";
            golden.check(&format!("{name}.{svg}"), file(svg));
        }
    }
    golden.check(
        "openmpi5.diff.txt",
        &write::text::diff(
            &job("openmpi5"),
            &job("openmpi5-again"),
            ("openmpi5", "openmpi5-again"),
        ),
    );
    let n = 32;
    let ring = reduce::CommMatrix {
        column: 0,
        name: "ring".into(),
        rows: (0..n)
            .map(|r| {
                (0..n)
                    .map(|p| {
                        if p == (r + 1) % n {
                            (r + 1) as f64
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect(),
    };
    golden.check("ring32.svg", &write::matrix::svg(&ring));
    golden.finish();
}
