//! The files rank 0 writes from the reduction of every rank's profile ([`Profile`], see
//! [`crate::reduce`]), and their reading back:
//!
//! | file | what | written by |
//! |---|---|---|
//! | `profile.txt` | the ranked table of regions and MPI functions, the pvars, events, matrices | [`text::render`] |
//! | `profile.json` | Caliper's json-split format, for Hatchet's `GraphFrame.from_caliper` | [`caliper::render`] |
//! | `comm-matrix.json` | `{"<pvar>": [[row per sending rank]]}` | [`matrix::json`] |
//! | `comm-matrix-<pvar>.svg` | a heat map per matrix that is not all zero | [`matrix::svg`] |
//! | `ranks.json` | every rank's [`RankProfile`]: everything else is rendered from it | `serde_json`, [`RanksFile`] |
//!
//! [`write_all`] writes them from a [`Profile`] of every rank; the preload library, inside
//! `MPI_Finalize`, writes `ranks.json` and `profile.json` as the ranks' profiles arrive
//! ([`RanksFile`], [`caliper::Writer`]) and the others from the tree's reduction
//! ([`crate::partial`]) with [`write_summaries`]; [`report`] renders
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
/// The file of Caliper's json-split format in an output directory.
pub const CALIPER_FILE: &str = "profile.json";

/// The files [`write_all`] writes for `p`: (file name, contents). Nothing here panics (the
/// preload library calls it inside `MPI_Finalize`).
pub fn outputs(p: &Profile) -> io::Result<Vec<(String, String)>> {
    let mut ranks = serde_json::to_string_pretty(&p.ranks).map_err(io::Error::other)?;
    ranks.push('\n');
    let mut files = summaries(p);
    files.insert(1, (CALIPER_FILE.to_string(), caliper::render(p)));
    files.insert(2, (RANKS_FILE.to_string(), ranks));
    Ok(files)
}

/// The files of `p` but `ranks.json` and `profile.json`, in [`outputs`]' order.
fn summaries(p: &Profile) -> Vec<(String, String)> {
    let mut files = vec![("profile.txt".to_string(), text::render(p))];
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
    files
}

/// Writes every output of `p` into `dir` (created if needed); returns the paths written.
pub fn write_all(dir: &Path, p: &Profile) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    write_files(dir, outputs(p)?)
}

/// Writes the outputs of `p` but `ranks.json` and `profile.json` into `dir` (which
/// [`RanksFile`] created and wrote `ranks.json` into, and [`caliper::Writer`]
/// `profile.json`); returns the paths written.
pub fn write_summaries(dir: &Path, p: &Profile) -> io::Result<Vec<PathBuf>> {
    write_files(dir, summaries(p))
}

fn write_files(dir: &Path, files: Vec<(String, String)>) -> io::Result<Vec<PathBuf>> {
    files
        .into_iter()
        .map(|(name, contents)| {
            let path = dir.join(name);
            std::fs::write(&path, contents)?;
            Ok(path)
        })
        .collect()
}

/// `ranks.json` written one rank at a time, as the end of a run receives them: the same text
/// as [`outputs`] gives for all of them at once, without holding them.
pub struct RanksFile {
    out: io::BufWriter<std::fs::File>,
    count: usize,
}

impl RanksFile {
    /// Creates `dir` if needed and `dir/ranks.json` in it.
    pub fn create(dir: &Path) -> io::Result<RanksFile> {
        std::fs::create_dir_all(dir)?;
        let out = io::BufWriter::new(std::fs::File::create(dir.join(RANKS_FILE))?);
        Ok(RanksFile { out, count: 0 })
    }

    /// Appends the next rank's profile.
    pub fn push(&mut self, r: &RankProfile) -> io::Result<()> {
        use io::Write as _;
        let text = serde_json::to_string_pretty(r).map_err(io::Error::other)?;
        self.out
            .write_all(if self.count == 0 { b"[\n" } else { b",\n" })?;
        // An element of a pretty list: each line indented once more (JSON strings hold no
        // raw line break).
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
            }
            self.out.write_all(b"  ")?;
            self.out.write_all(line.as_bytes())?;
        }
        self.count += 1;
        Ok(())
    }

    /// Closes the list and the file.
    pub fn finish(mut self) -> io::Result<()> {
        use io::Write as _;
        self.out
            .write_all(if self.count == 0 { b"[]\n" } else { b"\n]\n" })?;
        self.out.flush()
    }
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
