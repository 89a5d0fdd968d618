//! Golden files: a rendering compared with its recorded output (`UPDATE_GOLDEN=1` rewrites the
//! files instead; review the diff before committing it), and recorded models that must survive
//! a round trip.

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// The text of `path`, or a panic that names it.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Golden files under one directory compared (or, with `UPDATE_GOLDEN=1`, written); every
/// mismatch is reported before the test fails.
pub struct Golden {
    dir: PathBuf,
    update: bool,
    mismatches: Vec<String>,
}

impl Golden {
    /// The golden files under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Golden {
        Golden {
            dir: dir.into(),
            update: std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v != "0"),
            mismatches: Vec::new(),
        }
    }

    /// `actual` against the golden file `rel` (under the directory).
    pub fn check(&mut self, rel: &str, actual: &str) {
        let path = self.dir.join(rel);
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

    /// Fails with every mismatch found.
    pub fn finish(self) {
        assert!(
            self.mismatches.is_empty(),
            "output differs from the golden files (UPDATE_GOLDEN=1 rewrites them; review the \
             diff):\n{}",
            self.mismatches.join("\n")
        );
    }
}

/// Where two texts first differ, by line, with both lines.
pub fn first_difference(expected: &str, actual: &str) -> String {
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

/// A recorded model (the file `path`, read by `parse`) must come back as itself, written by
/// `write` (with a final newline): the model loses nothing, and where the file is a tool's
/// output, that output is unchanged.
pub fn round_trip<T, E: Display>(
    path: &Path,
    parse: impl Fn(&str) -> Result<T, E>,
    write: impl Fn(&T) -> String,
) -> T {
    let text = read(path);
    let model = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let again = write(&model) + "\n";
    assert!(
        again == text,
        "{} does not survive a round trip: {}",
        path.display(),
        first_difference(&text, &again)
    );
    model
}
