//! Where the launcher finds `libmpit_prof.so`, the library it preloads into the program.
//!
//! In order: the file named by `MPIT_PROF_LIB`; the library beside this executable (or in
//! `deps/` beside it: cargo's target directory); the copy this executable carries (a release
//! build embeds it, see `build_embed.rs`), written once to
//! `${XDG_CACHE_HOME:-~/.cache}/mpit-prof/<hash>/` (or the temporary directory) and reused by
//! every later run and rank.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The preload library's file name.
pub(crate) const LIBRARY: &str = "libmpit_prof.so";

/// The embedded library (empty when this build carries none).
static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/embedded-libmpit_prof.so"));
/// Its FNV-1a hash, the cache key (empty when none is embedded).
const EMBEDDED_HASH: &str = env!("MPIT_PROF_EMBEDDED_HASH");

/// Where the library was found, for messages.
#[derive(Debug)]
pub(crate) enum Found {
    /// `MPIT_PROF_LIB`.
    Env(PathBuf),
    /// Beside the executable.
    Beside(PathBuf),
    /// The embedded copy, written to (or already in) the cache.
    Embedded(PathBuf),
}

impl Found {
    /// The file to preload.
    pub(crate) fn path(&self) -> &Path {
        match self {
            Found::Env(p) | Found::Beside(p) | Found::Embedded(p) => p,
        }
    }
}

/// The library to preload, or why there is none (a sentence for the user).
pub(crate) fn find() -> Result<Found, String> {
    if let Some(p) = std::env::var_os("MPIT_PROF_LIB").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(Found::Env(std::path::absolute(&p).unwrap_or(p)))
        } else {
            Err(format!("MPIT_PROF_LIB={} is not a file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate this executable: {e}"))?;
    if let Some(p) = beside(&exe) {
        return Ok(Found::Beside(p));
    }
    if EMBEDDED.is_empty() {
        return Err(format!(
            "{LIBRARY} is not next to this executable ({}) and this build carries none: build \
             it with `cargo build -p mpit-prof` into the same target directory, install with \
             `cargo install --path examples/prof` (a release build carries it), or set \
             MPIT_PROF_LIB",
            exe.display()
        ));
    }
    extract(&cache_dir(), EMBEDDED_HASH, EMBEDDED).map(Found::Embedded)
}

/// The newest `libmpit_prof.so` of `exe`'s directory and its `deps/`.
pub(crate) fn beside(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    [dir.join(LIBRARY), dir.join("deps").join(LIBRARY)]
        .into_iter()
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
}

/// `${XDG_CACHE_HOME:-$HOME/.cache}/mpit-prof`, or `<tmp>/mpit-prof-<uid>` without a home.
fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        });
    match base {
        Some(b) => b.join("mpit-prof"),
        None => std::env::temp_dir().join(format!("mpit-prof-{}", nix::unistd::getuid())),
    }
}

/// The library `bytes` as a file under `cache/<hash>/`: reused when it is there with the
/// right size, else written beside it and renamed into place (ranks starting together each
/// write their own temporary file; the rename is atomic, so none sees a partial library).
fn extract(cache: &Path, hash: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let dir = cache.join(hash);
    let dest = dir.join(LIBRARY);
    if fs::metadata(&dest).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(dest);
    }
    let fail = |what: &str, e: std::io::Error| {
        format!(
            "cannot write the embedded {LIBRARY} to {} ({what}: {e}); set XDG_CACHE_HOME to a writable directory or MPIT_PROF_LIB to a copy",
            dir.display()
        )
    };
    fs::create_dir_all(&dir).map_err(|e| fail("create", e))?;
    let tmp = dir.join(format!(".{LIBRARY}.{}", std::process::id()));
    let mut f = fs::File::create(&tmp).map_err(|e| fail("create", e))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| fail("write", e))?;
    drop(f);
    fs::rename(&tmp, &dest).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        fail("rename", e)
    })?;
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stands in for a library: `extract` only copies bytes.
    const BYTES: &[u8] = b"\x7fELF not really a library";

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("mpit-prof-{name}-{}", std::process::id()))
    }

    #[test]
    fn a_library_is_written_once_and_then_reused() {
        let cache = scratch("extract");
        let first = extract(&cache, "00ff", BYTES).unwrap();
        assert_eq!(first, cache.join("00ff").join(LIBRARY));
        assert_eq!(fs::read(&first).unwrap(), BYTES);
        let modified = fs::metadata(&first).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let again = extract(&cache, "00ff", BYTES).unwrap();
        assert_eq!(first, again);
        assert_eq!(fs::metadata(&again).unwrap().modified().unwrap(), modified);
        // A truncated copy (another size) is replaced, and no temporary file is left.
        fs::write(&first, b"cut").unwrap();
        extract(&cache, "00ff", BYTES).unwrap();
        assert_eq!(fs::read(&first).unwrap(), BYTES);
        assert_eq!(fs::read_dir(cache.join("00ff")).unwrap().count(), 1);
        fs::remove_dir_all(&cache).unwrap();
    }

    #[test]
    fn an_unwritable_cache_is_a_sentence_not_a_panic() {
        let err = extract(Path::new("/proc/mpit-prof-no-such-dir"), "00ff", BYTES).unwrap_err();
        assert!(err.contains("cannot write the embedded"), "{err}");
    }
}
