//! What the MPIR tests compare: one row per rank, `(rank, pid, executable, host)`, from the
//! ranks' own output lines.

use std::collections::BTreeSet;

/// `(rank, pid, executable, host)`.
pub type Row = (usize, i64, String, String);

/// The ranks' own lines: `rank R pid P host H exe E`.
pub fn own_rows(text: &str) -> BTreeSet<Row> {
    text.lines()
        .filter_map(|l| match l.split(' ').collect::<Vec<_>>()[..] {
            ["rank", r, "pid", p, "host", h, "exe", e] => {
                Some((r.parse().ok()?, p.parse().ok()?, e.into(), h.into()))
            }
            _ => None,
        })
        .collect()
}
