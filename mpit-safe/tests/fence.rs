//! The fence holds: outside `src/ffi/` (the module `ffi` and its submodules), no source file
//! of `mpit-safe` says `unsafe`, in code or in prose; the only use of the word allowed is the
//! name of the `unsafe_code` lint that keeps it so (`#![forbid(unsafe_code)]` in each module,
//! `#![deny(unsafe_code)]` and `#[allow(unsafe_code)] mod ffi;` in `lib.rs`).

use std::fs;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn unsafe_only_in_the_fence() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let fence = src.join("ffi");
    assert!(
        fence.join("mod.rs").is_file(),
        "no fence at {}",
        fence.display()
    );
    assert!(
        !src.join("ffi.rs").exists(),
        "src/ffi.rs beside src/ffi/mod.rs"
    );
    // The fence is where the unsafe code is: a split that lost it would pass below.
    let fenced: Vec<_> = files.iter().filter(|f| f.starts_with(&fence)).collect();
    assert!(
        fenced
            .iter()
            .any(|f| fs::read_to_string(f).unwrap().contains("unsafe {")),
        "no unsafe block in {}",
        fence.display()
    );
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&fence)) {
        let text = fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.replace("unsafe_code", "").contains("unsafe") {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "`unsafe` outside src/ffi/:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_module_forbids_unsafe_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    for file in files.iter().filter(|f| !f.starts_with(src.join("ffi"))) {
        let text = fs::read_to_string(file).unwrap();
        let wanted = match file.strip_prefix(&src).unwrap().to_str().unwrap() {
            "lib.rs" => "#![deny(unsafe_code)]",
            _ => "#![forbid(unsafe_code)]",
        };
        assert!(text.contains(wanted), "{} lacks {wanted}", file.display());
    }
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    assert!(
        lib.contains("#[allow(unsafe_code)]\nmod ffi;"),
        "lib.rs: the fence"
    );
}

/// The auto traits the fence's handles give the public types: everything a token at
/// `MPI_THREAD_MULTIPLE` hands out may cross threads (below it, `lib.rs`'s `compile_fail`
/// examples show a token may not).
#[test]
fn multiple_is_send_and_sync() {
    use mpit_safe::level::Multiple;
    use mpit_safe::{CvarHandle, Mpit, PvarHandle, Session, Value};
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Mpit<Multiple>>();
    send_sync::<Session<'static, Multiple>>();
    send_sync::<PvarHandle<'static, u64, Multiple>>();
    send_sync::<PvarHandle<'static, Value, Multiple>>();
    send_sync::<CvarHandle<'static, i32, Multiple>>();
    send_sync::<CvarHandle<'static, bool, Multiple>>();
}
