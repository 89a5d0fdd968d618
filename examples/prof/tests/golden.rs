//! Golden tests of `mpit-prof`'s outputs: each recorded job's profile (`tests/golden/`, recorded
//! as `tests/golden/README.md` says) reduced and rendered must be exactly the recorded outputs
//! (a changed column, header or JSON key fails here).
//!
//! `UPDATE_GOLDEN=1 cargo test -p mpit-prof --test golden` rewrites the golden files from the
//! current rendering (review the diff before committing it). No MPI is needed: the renderings are
//! pure functions of the profiles, so these tests give the same result on every implementation.

use std::path::{Path, PathBuf};

use mpit_prof::{model, reduce, write};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Golden files compared (or, with `UPDATE_GOLDEN=1`, written); every mismatch is reported
/// before the test fails.
struct Golden {
    update: bool,
    mismatches: Vec<String>,
}

impl Golden {
    fn new() -> Golden {
        Golden {
            update: std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v != "0"),
            mismatches: Vec::new(),
        }
    }

    /// `actual` against the golden file `rel` (under `tests/golden/`).
    fn check(&mut self, rel: &str, actual: &str) {
        let path = golden_dir().join(rel);
        if self.update {
            let old = std::fs::read_to_string(&path).ok();
            if old.as_deref() != Some(actual) {
                std::fs::write(&path, actual)
                    .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
                eprintln!("UPDATE_GOLDEN: rewrote {rel}");
            }
            return;
        }
        let expected = match std::fs::read_to_string(&path) {
            Ok(s) => s,
            Err(e) => {
                self.mismatches
                    .push(format!("{rel}: {e} (record it with UPDATE_GOLDEN=1)"));
                return;
            }
        };
        if expected != actual {
            self.mismatches
                .push(format!("{rel}: {}", first_difference(&expected, actual)));
        }
    }

    fn finish(self) {
        assert!(
            self.mismatches.is_empty(),
            "output differs from the golden files (UPDATE_GOLDEN=1 rewrites them; review the \
             diff):\n{}",
            self.mismatches.join("\n")
        );
    }
}

/// Where two texts first differ, by line, with both lines.
fn first_difference(expected: &str, actual: &str) -> String {
    let (mut e, mut a) = (expected.lines(), actual.lines());
    for n in 1.. {
        match (e.next(), a.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (None, None) => break,
            (x, y) => {
                return format!(
                    "line {n} differs\n  golden: {}\n  actual: {}",
                    x.unwrap_or("<end>"),
                    y.unwrap_or("<end>")
                );
            }
        }
    }
    "only the final newline differs".to_owned()
}

/// A recorded model must come back as itself, written by `write` (with a final newline): the
/// model loses nothing, and where the file is the tool's JSON output, that output is unchanged.
fn round_trip<T: serde::de::DeserializeOwned>(rel: &str, write: impl Fn(&T) -> String) -> T {
    let text = read(&golden_dir().join(rel));
    let model: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let again = write(&model) + "\n";
    assert!(
        again == text,
        "{rel} does not survive a round trip: {}",
        first_difference(&text, &again)
    );
    model
}

/// Each recorded job (`*.ranks.json`, every rank's profile as
/// `tests/prof_live.rs` writes it) comes back byte for byte as the `ranks.json` output, and its
/// reduction renders the golden `profile.txt`, `profile.json`, `comm-matrix.json` and heat map;
/// two runs of the same job give the golden diff; a synthetic 32-rank ring gives the heat map
/// of a matrix too large for its values to be written in the cells.
#[test]
fn mpit_prof_renders_the_recorded_profiles() {
    let mut golden = Golden::new();
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
