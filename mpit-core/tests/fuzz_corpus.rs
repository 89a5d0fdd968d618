//! The fuzz targets' committed inputs replayed as ordinary tests: every file under
//! `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` goes through the same body, with
//! the same checks, as `cargo fuzz run <target>` (scripts/fuzz) gives it.

#[path = "../fuzz/src/lib.rs"]
mod fuzz_bodies;

use std::path::Path;

#[test]
fn every_committed_fuzz_input_passes_its_target() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for &(target, body) in fuzz_bodies::TARGETS {
        let mut replayed = 0;
        for dir in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target)) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                let data = std::fs::read(&path).unwrap();
                if let Err(panic) = std::panic::catch_unwind(|| body(&data)) {
                    eprintln!("{target}: {} fails", path.display());
                    std::panic::resume_unwind(panic);
                }
                replayed += 1;
            }
        }
        println!("{target}: {replayed} inputs replayed");
        assert!(
            replayed > 0,
            "{target}: no input under fuzz/corpus/{target}/"
        );
    }
}
