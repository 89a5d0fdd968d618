//! `mpir-attach`'s text: pure functions of a [`Job`] and its [`Event`]s.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::model::{Event, Job};

/// One line per rank, `rank R host H executable E pid P` (standard output).
pub fn ranks(job: &Job) -> String {
    let mut s = String::new();
    for p in job.procs.iter().flatten() {
        let _ = writeln!(
            s,
            "rank {} host {} executable {} pid {}",
            p.rank, p.host, p.executable, p.pid
        );
    }
    s
}

/// The line about the starter: pid, ranks, debug state, where `MPIR_Breakpoint` is and the
/// objects that define the symbols (standard error).
pub fn summary(job: &Job) -> String {
    let symbols = job.symbols.as_deref().unwrap_or_default();
    let objects: BTreeSet<&str> = symbols.iter().map(|s| s.object.as_str()).collect();
    let breakpoint = symbols
        .iter()
        .find(|s| s.name == "MPIR_Breakpoint")
        .map_or(0, |s| s.addr);
    format!(
        "mpir-attach: starter {} ({} ranks, {}), MPIR_Breakpoint at {breakpoint:#x}, symbols in {}\n",
        job.starter_pid.unwrap_or_default(),
        job.procs.as_ref().map_or(0, Vec::len),
        job.debug_state.as_deref().unwrap_or_default(),
        objects.into_iter().collect::<Vec<_>>().join(", "),
    )
}

/// The lines of one MPIR event as the launch model reports it (standard error).
pub fn event(e: &Event) -> String {
    let mut s = format!("mpir-attach: MPIR event {} at {:.1} ms\n", e.state, e.at_ms);
    if let Some(a) = &e.abort_string {
        let _ = writeln!(s, "mpir-attach: abort string: {a}");
    }
    s
}

/// What the text mode prints about `job`, both streams in the order written: the attach model,
/// the summary and the ranks; the launch model, each event, with the summary and the ranks
/// after the spawned event.
pub fn render(job: &Job) -> String {
    let Some(events) = &job.events else {
        return summary(job) + &ranks(job);
    };
    let mut s = String::new();
    for e in events {
        s += &event(e);
        if e.state == "MPIR_DEBUG_SPAWNED" && job.procs.is_some() {
            s += &summary(job);
            s += &ranks(job);
        }
    }
    s
}
