//! `mpit-prof report --trace DIR`: what the OTF2 trace of a run (`DIR/trace/traces.otf2`, as
//! `mpit-prof --trace` writes it) holds, read back through OTF2's reader
//! ([`mpit_otf2::Summary`]): per rank (OTF2's location group) its records by kind, its metric
//! events (MPI_T events) by class and the span of its timeline, and the archive's properties.
//! [`render`] is a pure function of the summary.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use mpit_otf2::{RecordKind, Summary};

/// The anchor file `mpit-prof --trace` writes under its output directory.
pub const ANCHOR: &str = "trace/traces.otf2";

/// The anchor file of `path`: `path` itself if it is a file, else `path/trace/traces.otf2`,
/// else `path/traces.otf2` (the trace directory itself).
pub fn anchor(path: &Path) -> io::Result<PathBuf> {
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    if !path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{}: no such file or directory", path.display()),
        ));
    }
    [path.join(ANCHOR), path.join("traces.otf2")]
        .into_iter()
        .find(|a| a.is_file())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{} has no trace ({ANCHOR}): was it written by mpit-prof --trace?",
                    path.display()
                ),
            )
        })
}

/// `mpit-prof report --trace PATH`: the report of the trace of `PATH` (an output directory
/// or an anchor file). `Err` when it cannot be read, or this build has no OTF2 (the message
/// says what to install).
pub fn report(path: &Path) -> io::Result<String> {
    if let Err(e) = mpit_otf2::available() {
        return Err(io::Error::other(format!("cannot read OTF2 traces: {e}")));
    }
    let anchor = anchor(path)?;
    let summary = Summary::read(&anchor).map_err(|e| {
        io::Error::other(format!("cannot read the trace {}: {e}", anchor.display()))
    })?;
    Ok(render(&summary, &anchor))
}

/// One rank's share of a summary: its locations' records added up.
#[derive(Default)]
struct Rank<'a> {
    locations: Vec<&'a str>,
    counts: [u64; RecordKind::ALL.len()],
    metrics: BTreeMap<&'a str, u64>,
    first: Option<u64>,
    last: Option<u64>,
}

/// The report of `s` (read from `anchor`): the clock, then per location group in the order
/// of its first location, its records by kind (the kinds it has), its metric events by class
/// and the seconds from its first record to its last; then the properties.
pub fn render(s: &Summary, anchor: &Path) -> String {
    let mut ranks: Vec<(&str, Rank<'_>)> = Vec::new();
    for l in &s.locations {
        let at = match ranks.iter().position(|(g, _)| *g == l.group) {
            Some(i) => i,
            None => {
                ranks.push((&l.group, Rank::default()));
                ranks.len() - 1
            }
        };
        let r = &mut ranks[at].1;
        r.locations.push(&l.name);
        for (sum, n) in r.counts.iter_mut().zip(l.counts) {
            *sum += n;
        }
        for (class, n) in &l.metrics {
            *r.metrics.entry(class).or_default() += n;
        }
        r.first = match (r.first, l.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        r.last = r.last.max(l.last);
    }
    let mut out = String::new();
    let _ = writeln!(out, "Trace {}", anchor.display());
    let _ = writeln!(
        out,
        "{} locations in {} ranks; clock {} ticks per second, {:.6} s long",
        s.locations.len(),
        ranks.len(),
        s.resolution,
        s.seconds(s.trace_length)
    );
    let width = RecordKind::ALL
        .iter()
        .map(|k| k.name().len())
        .max()
        .unwrap_or(0);
    for (group, r) in &ranks {
        let span = match (r.first, r.last) {
            (Some(f), Some(l)) => l.saturating_sub(f),
            _ => 0,
        };
        let records: u64 = r.counts.iter().sum();
        let _ = writeln!(
            out,
            "\n{group} ({}): {records} records, span {:.6} s",
            r.locations.join(", "),
            s.seconds(span)
        );
        for (k, n) in RecordKind::ALL.iter().zip(r.counts) {
            if n > 0 {
                let _ = writeln!(out, "  {:<width$}  {n:>10}", k.name());
            }
        }
        for (class, n) in &r.metrics {
            let _ = writeln!(out, "  metric {class}  {n}");
        }
    }
    if !s.properties.is_empty() {
        let _ = writeln!(out, "\nProperties");
        for (name, value) in &s.properties {
            let _ = writeln!(out, "  {name} = {value}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpit_otf2::{LocationRef, LocationSummary};

    fn location(id: u64, group: &str, sends: u64, first: u64, last: u64) -> LocationSummary {
        let mut counts = [0; RecordKind::ALL.len()];
        counts[RecordKind::Enter as usize] = 2;
        counts[RecordKind::MpiSend as usize] = sends;
        LocationSummary {
            id: LocationRef(id),
            name: "Master thread".into(),
            group: group.into(),
            counts,
            metrics: [("unexp_message_enqueued".to_string(), 3)].into(),
            first: Some(first),
            last: Some(last),
        }
    }

    #[test]
    fn ranks_add_up_their_locations() {
        let s = Summary {
            resolution: 1_000,
            global_offset: 0,
            trace_length: 2_000,
            properties: [("MPIT_PROF::MPI_T_EVENTS".to_string(), "2".to_string())].into(),
            regions: vec![],
            locations: vec![
                location(0, "MPI Rank 0", 1, 10, 500),
                location(1, "MPI Rank 1", 2, 20, 1_020),
                location(2, "MPI Rank 0", 0, 5, 400),
            ],
        };
        let text = render(&s, Path::new("t/traces.otf2"));
        assert!(
            text.contains("3 locations in 2 ranks; clock 1000 ticks per second, 2.000000 s"),
            "{text}"
        );
        assert!(
            text.contains("MPI Rank 0 (Master thread, Master thread): 5 records, span 0.495000 s"),
            "{text}"
        );
        assert!(
            text.contains("MPI Rank 1 (Master thread): 4 records, span 1.000000 s"),
            "{text}"
        );
        let rank0 = text.split("MPI Rank 1").next().unwrap();
        for (kind, n) in [("Enter", 4), ("MpiSend", 1)] {
            let line = format!("  {kind:<19}  {n:>10}\n");
            assert!(rank0.contains(&line), "{line:?} in\n{text}");
        }
        assert!(
            rank0.contains("  metric unexp_message_enqueued  6\n"),
            "{text}"
        );
        assert!(!rank0.contains("Leave"), "{text}");
        assert!(
            text.ends_with("Properties\n  MPIT_PROF::MPI_T_EVENTS = 2\n"),
            "{text}"
        );
    }

    #[test]
    fn a_path_without_a_trace_is_an_error() {
        let e = anchor(Path::new("/nonexistent/mpit-prof-dir")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = anchor(Path::new("/")).unwrap_err();
        assert!(e.to_string().contains("mpit-prof --trace"), "{e}");
    }
}
