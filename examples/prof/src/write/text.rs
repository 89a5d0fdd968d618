//! `profile.txt` ([`render`]) and the comparison of two runs ([`diff`]): pure functions of
//! [`Profile`]s.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::model::{Kind, MetricKind};
use crate::reduce::{Profile, Reduced, Stat};

/// How many pvar deltas the ranked table shows per node.
const TOP_DELTAS: usize = 3;
/// How many names a grouped list of skipped variables shows.
const NAMES_SHOWN: usize = 8;

/// A time in nanoseconds with a unit that keeps 3-4 significant digits.
pub fn time(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.3} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A number: whole ones below a million as they are, larger ones with an SI suffix (M, G, T,
/// P), fractions with at most 3 decimals.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a < 1e6 {
        if x == x.trunc() {
            format!("{x:.0}")
        } else {
            // Three decimals, trailing zeros dropped.
            let s = format!("{x:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    } else {
        let (div, suffix) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")]
            .into_iter()
            .find(|(d, _)| a >= *d)
            .unwrap_or((1e6, "M"));
        format!("{:.2}{suffix}", x / div)
    }
}

/// `max / mean`, or `-`.
fn imbalance(s: &Stat) -> String {
    s.imbalance().map_or("-".into(), |i| format!("{i:.2}"))
}

/// A table: the header, then the rows; each column padded to its widest cell, right-aligned
/// where `right[i]`, the last column not padded.
fn table(out: &mut String, header: &[&str], right: &[bool], rows: &[Vec<String>]) {
    let n = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::new();
        for (i, c) in cells.enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = width[i].saturating_sub(c.chars().count());
            if right[i] {
                s.extend(std::iter::repeat_n(' ', pad));
                s.push_str(c);
            } else {
                s.push_str(c);
                if i + 1 < n {
                    s.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(out, &mut header.iter().copied());
    for r in rows {
        line(out, &mut r.iter().map(String::as_str));
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Region => "region",
        Kind::Function => "MPI",
    }
}

/// `value [rank]`.
fn at(value: String, rank: usize) -> String {
    format!("{value} [{rank}]")
}

/// The sum over the ranks of a delta column over the whole run (its roots' inclusive sums).
fn delta_total(p: &Profile, c: usize) -> f64 {
    p.nodes
        .iter()
        .filter(|n| n.parent.is_none())
        .map(|n| match &n.inclusive[c] {
            Reduced::Delta { sum } => sum.sum,
            _ => 0.0,
        })
        .sum()
}

/// The header lines: program, implementation, ranks, mode, pvars, events.
fn header(out: &mut String, p: &Profile) {
    let range = |s: &Stat, f: &dyn Fn(f64) -> String| {
        if s.min == s.max {
            f(s.min)
        } else {
            format!("{}..{}", f(s.min), f(s.max))
        }
    };
    let _ = writeln!(out, "mpit-prof profile of: {}", p.program.join(" "));
    let _ = writeln!(out, "implementation: {}", p.library);
    let hosts = if p.hosts.len() <= 4 {
        p.hosts.join(", ")
    } else {
        format!("{}, ...", p.hosts[..4].join(", "))
    };
    let _ = writeln!(
        out,
        "ranks:          {} on {} host{} ({hosts})",
        p.rank_ids.len(),
        p.hosts.len(),
        if p.hosts.len() == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        out,
        "mode:           {} (pvars read at {}), clock {}",
        p.mode,
        match p.mode {
            crate::Mode::Region => "region boundaries",
            crate::Mode::Call => "every MPI call",
        },
        p.clock
    );
    let d = &p.duration;
    let _ = writeln!(
        out,
        "duration:       {} mean, {} min [{}], {} max [{}]",
        time(d.mean),
        time(d.min),
        d.min_rank,
        time(d.max),
        d.max_rank
    );
    let exist = range(&p.pvars, &|x| format!("{x:.0}"));
    let skipped = {
        let mut idx: Vec<usize> = p.skipped.iter().map(|s| s.index).collect();
        idx.sort_unstable();
        idx.dedup();
        idx.len()
    };
    if p.pvars.max == 0.0 {
        let _ = writeln!(
            out,
            "pvars:          0 exist: this MPI exposes no performance variables (calls and \
             times only)"
        );
    } else {
        let unbound = p
            .columns
            .iter()
            .filter(|c| c.handles == 0 && !p.skipped.iter().any(|s| s.index == c.meta.index))
            .count();
        let waiting = if unbound > 0 {
            format!(", {unbound} bound to kinds of objects the program never created")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "pvars:          {exist} exist, {} profiled{waiting}, {skipped} skipped",
            p.columns.iter().filter(|c| c.handles > 0).count()
        );
    }
    if p.event_types.is_empty() {
        let _ = writeln!(out, "events:         none counted");
    } else {
        let _ = writeln!(
            out,
            "events:         {} type{} counted ({})",
            p.event_types.len(),
            if p.event_types.len() == 1 { "" } else { "s" },
            p.event_types.join(", ")
        );
    }
}

/// Why Open MPI has holes among its pvar indices, said once under "Not profiled": it counts the
/// variables of components it registered and then closed, and answers `MPI_T_ERR_INVALID` at
/// their indices (MPI-4.1 §16.3.7: an index may have no variable). On Open MPI 4.1.4 (2 ranks)
/// 28 of 33 indices are such holes; `OMPI_MCA_pml_monitoring_enable=1` turns 12 of them into
/// the `osc_monitoring_*` and `coll_monitoring_*` variables.
pub const OPEN_MPI_HOLES: &str = "(Open MPI counts the pvars of components it registered and \
    then closed, which leaves these holes; the monitoring ones, osc_monitoring_* and \
    coll_monitoring_*, are there with OMPI_MCA_pml_monitoring_enable=1.)";

/// `profile.txt`: the header, the regions and MPI functions ranked by inclusive time, the
/// performance variables, event counts, matrices, skipped variables and notes.
pub fn render(p: &Profile) -> String {
    let mut out = String::new();
    header(&mut out, p);

    let totals: HashMap<usize, f64> = (0..p.columns.len())
        .filter(|&c| p.columns[c].meta.metric == MetricKind::Delta)
        .map(|c| (c, delta_total(p, c)))
        .collect();
    let mut order: Vec<usize> = (0..p.nodes.len()).collect();
    order.sort_by(|&a, &b| {
        p.nodes[b]
            .time
            .mean
            .total_cmp(&p.nodes[a].time.mean)
            .then(a.cmp(&b))
    });
    let _ = writeln!(
        out,
        "\nRegions and MPI functions by inclusive time (statistics over the ranks: [rank] of the \
         min and max;\nimbal = max/mean; pvar deltas inclusive, summed over the ranks, with their \
         share of the run's total)"
    );
    let rows: Vec<Vec<String>> = order
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let node = &p.nodes[n];
            let mut deltas: Vec<(f64, usize, f64)> = totals
                .iter()
                .filter_map(|(&c, &total)| match &node.inclusive[c] {
                    Reduced::Delta { sum } if sum.sum != 0.0 => Some((sum.sum / total, c, sum.sum)),
                    _ => None,
                })
                .collect();
            deltas.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let top: Vec<String> = deltas
                .iter()
                .take(TOP_DELTAS)
                .map(|&(share, c, v)| {
                    format!("{}={} ({:.0}%)", p.columns[c].label, num(v), share * 100.0)
                })
                .collect();
            vec![
                (i + 1).to_string(),
                p.path(n),
                kind_name(node.kind).into(),
                num(node.calls.sum),
                format!("{}..{}", num(node.calls.min), num(node.calls.max)),
                format!(
                    "{}{}",
                    if node.estimated { "~" } else { "" },
                    time(node.time.mean)
                ),
                at(time(node.time.min), node.time.min_rank),
                at(time(node.time.max), node.time.max_rank),
                imbalance(&node.time),
                time(node.exclusive_time.mean),
                top.join(", "),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "#",
            "node",
            "kind",
            "calls",
            "per rank",
            "time mean",
            "time min",
            "time max",
            "imbal",
            "excl mean",
            "top pvar deltas",
        ],
        &[
            true, false, false, true, true, true, true, true, true, true, false,
        ],
        &rows,
    );

    if p.nodes.iter().any(|n| n.estimated) {
        let _ = writeln!(
            out,
            "~ estimated: short MPI calls are timed one in {} at random (after the first {} of \
             each), the time of the others inferred from them",
            crate::TIME_ONE_IN,
            crate::TIME_FIRST
        );
    }

    if !p.columns.is_empty() {
        let _ = writeln!(
            out,
            "\nPerformance variables over the run (per rank: the root's inclusive figure; total = \
             sum over the ranks;\nwatermarks: amount moved; levels: mean sample; states: last \
             value; where = node with the largest exclusive figure)"
        );
        let root = p.nodes.iter().position(|n| n.parent.is_none());
        let mut quiet: Vec<&str> = Vec::new();
        let mut rows: Vec<Vec<String>> = Vec::new();
        for (c, col) in p.columns.iter().enumerate() {
            let head = root.and_then(|r| p.nodes[r].inclusive[c].headline().copied());
            let where_ = p
                .nodes
                .iter()
                .enumerate()
                .filter_map(|(i, n)| n.metrics[c].headline().map(|s| (i, s.sum.abs())))
                .filter(|&(_, v)| v > 0.0)
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
            let Some((head, (where_, _))) = head.zip(where_) else {
                quiet.push(&col.label);
                continue;
            };
            rows.push(vec![
                col.label.clone(),
                col.meta.class.clone(),
                col.meta.metric.name().into(),
                format!("{}/{}", col.ranks, p.rank_ids.len()),
                num(head.sum),
                at(num(head.min), head.min_rank),
                at(num(head.max), head.max_rank),
                imbalance(&head),
                p.path(where_),
            ]);
        }
        if !rows.is_empty() {
            table(
                &mut out,
                &[
                    "pvar", "class", "metric", "ranks", "total", "min", "max", "imbal", "where",
                ],
                &[false, false, false, true, true, true, true, true, false],
                &rows,
            );
        }
        if !quiet.is_empty() {
            let _ = writeln!(
                out,
                "{} more stayed 0 (or were never read) on every rank and node: {}",
                quiet.len(),
                quiet.join(", ")
            );
        }
    }

    if !p.event_types.is_empty() {
        let _ = writeln!(out, "\nEvents (instances, summed over the ranks)");
        let rows: Vec<Vec<String>> = p
            .event_types
            .iter()
            .enumerate()
            .map(|(e, name)| {
                let total: f64 = p
                    .nodes
                    .iter()
                    .filter(|n| n.parent.is_none())
                    .map(|n| n.inclusive_events[e].sum)
                    .sum();
                let in_nodes: Vec<String> = p
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.events[e].sum > 0.0)
                    .map(|(i, n)| format!("{}={}", p.path(i), num(n.events[e].sum)))
                    .collect();
                vec![
                    name.clone(),
                    num(total),
                    if in_nodes.is_empty() {
                        "-".into()
                    } else {
                        in_nodes.join(", ")
                    },
                ]
            })
            .collect();
        table(
            &mut out,
            &["event type", "total", "raised in (exclusive)"],
            &[false, true, false],
            &rows,
        );
    }

    if !p.matrices.is_empty() {
        let _ = writeln!(
            out,
            "\nCommunication matrices (row = sending rank, column = peer; comm-matrix.json, \
             comm-matrix-<pvar>.svg)"
        );
        let mut zero = Vec::new();
        for m in &p.matrices {
            let total: f64 = m.rows.iter().flatten().sum();
            if m.rows.iter().flatten().all(|&x| x == 0.0) {
                zero.push(m.name.as_str());
                continue;
            }
            let _ = writeln!(
                out,
                "  {}: {}x{}, total {}",
                m.name,
                m.rows.len(),
                m.rows.len(),
                num(total)
            );
        }
        if !zero.is_empty() {
            let _ = writeln!(out, "  all zero (no heat map): {}", zero.join(", "));
        }
    }

    if !p.skipped.is_empty() {
        let _ = writeln!(out, "\nNot profiled");
        // Per reason: the variables' names, the holes' indices (a hole has no name: the
        // implementation counts the index but has no variable there), the ranks.
        // (reason, names, hole indices, ranks)
        type Group<'a> = (&'a str, Vec<String>, Vec<usize>, Vec<usize>);
        let mut reasons: Vec<Group<'_>> = Vec::new();
        for s in &p.skipped {
            let r = match reasons.iter_mut().position(|r| r.0 == s.reason) {
                Some(i) => &mut reasons[i],
                None => {
                    reasons.push((&s.reason, Vec::new(), Vec::new(), Vec::new()));
                    reasons.last_mut().expect("just pushed")
                }
            };
            match &s.name {
                Some(name) => r.1.push(name.clone()),
                None => r.2.push(s.index),
            }
            r.3.extend(&s.ranks);
        }
        for (reason, names, mut holes, mut ranks) in reasons {
            ranks.sort_unstable();
            ranks.dedup();
            holes.sort_unstable();
            holes.dedup();
            let shown: Vec<&str> = names.iter().take(NAMES_SHOWN).map(String::as_str).collect();
            let mut which = shown.join(", ");
            if names.len() > NAMES_SHOWN {
                let _ = write!(which, ", ... ({} more)", names.len() - NAMES_SHOWN);
            }
            if !holes.is_empty() {
                if !which.is_empty() {
                    which.push_str("; ");
                }
                let _ = write!(
                    which,
                    "pvar {} {} (counted, but with no variable there)",
                    if holes.len() == 1 { "index" } else { "indices" },
                    crate::reduce::ranges(&holes)
                );
            }
            let count = names.len() + holes.len();
            let on = if ranks.len() == p.rank_ids.len() {
                "all ranks".to_string()
            } else {
                format!(
                    "rank{} {}",
                    if ranks.len() == 1 { "" } else { "s" },
                    ranks
                        .iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            };
            let _ = writeln!(out, "  {count} ({on}): {reason}: {which}");
        }
        if p.library.starts_with("Open MPI") && p.skipped.iter().any(|s| s.name.is_none()) {
            let _ = writeln!(out, "  {OPEN_MPI_HOLES}");
        }
    }

    if !p.notes.is_empty() {
        let _ = writeln!(out, "\nNotes");
        for n in &p.notes {
            let _ = writeln!(out, "  {n}");
        }
    }
    out
}

/// The numbers [`diff`] compares for one node: (metric, value).
fn diff_metrics(p: &Profile, n: usize) -> Vec<(String, f64)> {
    let node = &p.nodes[n];
    let mut out = vec![
        ("calls (sum)".to_string(), node.calls.sum),
        ("time mean (ns)".to_string(), node.time.mean),
        ("time max (ns)".to_string(), node.time.max),
        ("excl time mean (ns)".to_string(), node.exclusive_time.mean),
    ];
    for (c, col) in p.columns.iter().enumerate() {
        let (what, s) = match &node.inclusive[c] {
            Reduced::Delta { sum } => ("sum", Some(sum.sum)),
            Reduced::Watermark { amount, .. } => ("amount", Some(amount.sum)),
            Reduced::Samples { mean, .. } => ("mean", mean.map(|m| m.mean)),
            Reduced::Raw { last } => ("last", last.map(|l| l.mean)),
        };
        if let Some(v) = s {
            out.push((format!("{} ({what})", col.label), v));
        }
    }
    for (e, name) in p.event_types.iter().enumerate() {
        out.push((format!("event {name}"), node.inclusive_events[e].sum));
    }
    out
}

/// The comparison of two runs: per node (matched by path and kind) and metric, the value
/// before and after and the change in percent. Calls and times are always listed, pvar
/// metrics and event counts where either side is not zero.
pub fn diff(before: &Profile, after: &Profile, names: (&str, &str)) -> String {
    let mut out = String::new();
    let describe = |p: &Profile| {
        format!(
            "{} | {} | {} ranks | mode {}",
            p.program.join(" "),
            p.library,
            p.rank_ids.len(),
            p.mode
        )
    };
    let _ = writeln!(out, "mpit-prof diff");
    let _ = writeln!(out, "before: {}: {}", names.0, describe(before));
    let _ = writeln!(out, "after:  {}: {}", names.1, describe(after));
    if before.library != after.library
        || before.rank_ids.len() != after.rank_ids.len()
        || before.mode != after.mode
    {
        let _ = writeln!(
            out,
            "warning: the runs differ in implementation, ranks or mode"
        );
    }
    let key = |p: &Profile, n: usize| (p.path(n), p.nodes[n].kind);
    let index_after: HashMap<(String, Kind), usize> =
        (0..after.nodes.len()).map(|n| (key(after, n), n)).collect();
    let index_before: HashMap<(String, Kind), usize> = (0..before.nodes.len())
        .map(|n| (key(before, n), n))
        .collect();
    let mut pairs: Vec<(Option<usize>, Option<usize>)> = (0..before.nodes.len())
        .map(|n| (Some(n), index_after.get(&key(before, n)).copied()))
        .collect();
    pairs.extend(
        (0..after.nodes.len())
            .filter(|&n| !index_before.contains_key(&key(after, n)))
            .map(|n| (None, Some(n))),
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (b, a) in pairs {
        let (p, n) = match (b, a) {
            (Some(b), _) => (before, b),
            (None, Some(a)) => (after, a),
            (None, None) => continue,
        };
        let label = p.path(n);
        let kind = kind_name(p.nodes[n].kind);
        let mb: Vec<(String, f64)> = b.map(|b| diff_metrics(before, b)).unwrap_or_default();
        let ma: Vec<(String, f64)> = a.map(|a| diff_metrics(after, a)).unwrap_or_default();
        let mut metrics: Vec<&String> = mb.iter().map(|m| &m.0).collect();
        for m in &ma {
            if !metrics.contains(&&m.0) {
                metrics.push(&m.0);
            }
        }
        for (i, m) in metrics.into_iter().enumerate() {
            let vb = mb.iter().find(|x| &x.0 == m).map(|x| x.1);
            let va = ma.iter().find(|x| &x.0 == m).map(|x| x.1);
            let always = i < 4;
            if !always && vb.unwrap_or(0.0) == 0.0 && va.unwrap_or(0.0) == 0.0 {
                continue;
            }
            let show = |v: Option<f64>| {
                v.map_or("-".into(), |v| {
                    if m.ends_with("(ns)") { time(v) } else { num(v) }
                })
            };
            let change = match (vb, va) {
                (None, Some(_)) => "new".into(),
                (Some(_), None) => "gone".into(),
                (Some(x), Some(y)) if x == y => "=".into(),
                (Some(x), Some(y)) if x != 0.0 => format!("{:+.1}%", (y - x) / x.abs() * 100.0),
                (Some(_), Some(_)) => "from 0".into(),
                (None, None) => String::new(),
            };
            rows.push(vec![
                label.clone(),
                kind.into(),
                m.trim_end_matches(" (ns)").to_string(),
                show(vb),
                show(va),
                change,
            ]);
        }
    }
    let _ = writeln!(out);
    table(
        &mut out,
        &["node", "kind", "metric", "before", "after", "change"],
        &[false, false, false, true, true, true],
        &rows,
    );
    out
}
