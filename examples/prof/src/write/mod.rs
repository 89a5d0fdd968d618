//! The files rank 0 writes from the reduction of every rank's profile ([`Profile`], see
//! [`crate::reduce`]), and their reading back:
//!
//! | file | what | written by |
//! |---|---|---|
//! | `profile.txt` | the ranked table of regions and MPI functions, the pvars, events, matrices | [`text::render`] |
//! | `profile.json` | Caliper's json-split format, for Hatchet's `GraphFrame.from_caliper` | [`caliper::render`] |
//! | `comm-matrix.json` | `{"<pvar>": [[row per sending rank]]}` | [`matrix::json`] |
//! | `comm-matrix-<pvar>.svg` | a heat map per matrix that is not all zero | [`matrix::svg`] |
//! | `ranks.json` | every rank's [`RankProfile`]: everything else is rendered from it | `serde_json` |
//!
//! [`write_all`] writes them (the preload library, inside `MPI_Finalize`); [`report`] renders
//! `profile.txt` again from a directory's `ranks.json` (`mpit-prof report DIR`) and [`diff`]
//! compares two directories (`mpit-prof diff DIR1 DIR2`); [`trace_report`] summarises a
//! directory's OTF2 trace (`mpit-prof report --trace DIR`). Everything but the file access is
//! a pure function of the ranks' profiles (or of the trace's summary).

#![forbid(unsafe_code)]

pub mod caliper;
pub mod matrix;
pub mod text;
pub mod trace_report;

use std::io;
use std::path::{Path, PathBuf};

use crate::model::RankProfile;
use crate::reduce::{Profile, reduce};

/// The file of every rank's profile in an output directory.
pub const RANKS_FILE: &str = "ranks.json";

/// The files [`write_all`] writes for `p`: (file name, contents). Nothing here panics (the
/// preload library calls it inside `MPI_Finalize`).
pub fn outputs(p: &Profile) -> io::Result<Vec<(String, String)>> {
    let mut ranks = serde_json::to_string_pretty(&p.ranks).map_err(io::Error::other)?;
    ranks.push('\n');
    let mut files = vec![
        ("profile.txt".to_string(), text::render(p)),
        ("profile.json".to_string(), caliper::render(p)),
        (RANKS_FILE.to_string(), ranks),
    ];
    if !p.matrices.is_empty() {
        files.push(("comm-matrix.json".to_string(), matrix::json(p)));
        for m in p
            .matrices
            .iter()
            .filter(|m| m.rows.iter().flatten().any(|&x| x != 0.0))
        {
            files.push((matrix::svg_name(m), matrix::svg(m)));
        }
    }
    Ok(files)
}

/// Writes every output of `p` into `dir` (created if needed); returns the paths written.
pub fn write_all(dir: &Path, p: &Profile) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    outputs(p)?
        .into_iter()
        .map(|(name, contents)| {
            let path = dir.join(name);
            std::fs::write(&path, contents)?;
            Ok(path)
        })
        .collect()
}

/// The ranks' profiles of an output directory (its `ranks.json`), reduced.
pub fn read(dir: &Path) -> io::Result<Profile> {
    let path = dir.join(RANKS_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let ranks: Vec<RankProfile> = serde_json::from_str(&text).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })?;
    Ok(reduce(&ranks))
}

/// `mpit-prof report DIR`: the text of `profile.txt`, rendered again from `DIR/ranks.json`.
pub fn report(dir: &Path) -> io::Result<String> {
    Ok(text::render(&read(dir)?))
}

/// `mpit-prof diff DIR1 DIR2`: per node and metric, the value in each run and the change.
pub fn diff(before: &Path, after: &Path) -> io::Result<String> {
    Ok(text::diff(
        &read(before)?,
        &read(after)?,
        (&before.display().to_string(), &after.display().to_string()),
    ))
}
