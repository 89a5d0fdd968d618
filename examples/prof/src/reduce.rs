//! The reduction of every rank's profile into one [`Profile`]: nodes matched across ranks by
//! their path of (name, kind) from the root, columns by (name, class), event types by name;
//! for every number, its minimum, maximum, mean and sum over the ranks and the ranks that hold
//! the minimum and the maximum ([`Stat`]).
//!
//! **Missing values.** A rank lacking a node, a column or an event type counts as 0 for calls,
//! times, deltas, watermark changes and amounts, sample counts and event counts: it did not
//! call, wait or move anything there. Statistics of values that only exist where something was
//! read (the minimum, maximum and mean of a level's samples, the last value of a watermark,
//! state or generic variable) are over the ranks that have one: a rank without samples has no
//! minimum, and 0 would be a made-up one. They are `None` when no rank has a value, and
//! [`Stat::n`] says over how many ranks each statistic is.
//!
//! **Inclusive metrics.** The engine attributes a change to the node that was innermost when
//! it happened (exclusive). A node's inclusive figure is computed on each rank over its
//! subtree (deltas, watermark changes and amounts, sample counts and sums, event counts add
//! up; sample minima and maxima are the extremes over the subtree; a state's last value is the
//! node's own, or the first a child has), then reduced across ranks like the exclusive ones.
//! Calls and times come inclusive from the engine; a node's exclusive time is its time less
//! its children's.

#![forbid(unsafe_code)]

use std::collections::HashMap;

use crate::Mode;
use crate::model::{ColumnMeta, Kind, MetricData, MetricKind, RankProfile};

/// The object label of per-peer variables bound to `MPI_COMM_WORLD`.
pub const WORLD: &str = "MPI_COMM_WORLD";

/// Statistics of one number over the ranks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Mean over the [`Stat::n`] ranks.
    pub mean: f64,
    /// Sum over the ranks.
    pub sum: f64,
    /// The (lowest) rank holding the minimum.
    pub min_rank: usize,
    /// The (lowest) rank holding the maximum.
    pub max_rank: usize,
    /// Over how many ranks.
    pub n: usize,
}

impl Stat {
    /// The statistics of `(rank, value)` pairs; `None` if there are none. Ties go to the first
    /// pair (callers pass ranks in increasing order: the lowest rank). NaN values are left out.
    pub fn of(values: impl IntoIterator<Item = (usize, f64)>) -> Option<Stat> {
        let mut s: Option<Stat> = None;
        for (rank, v) in values {
            if v.is_nan() {
                continue;
            }
            match &mut s {
                None => {
                    s = Some(Stat {
                        min: v,
                        max: v,
                        mean: 0.0,
                        sum: v,
                        min_rank: rank,
                        max_rank: rank,
                        n: 1,
                    })
                }
                Some(s) => {
                    if v < s.min {
                        s.min = v;
                        s.min_rank = rank;
                    }
                    if v > s.max {
                        s.max = v;
                        s.max_rank = rank;
                    }
                    s.sum += v;
                    s.n += 1;
                }
            }
        }
        s.map(|mut s| {
            s.mean = s.sum / s.n as f64;
            // Rounding can put a mean of equal values a hair outside them.
            s.mean = s.mean.clamp(s.min, s.max);
            s
        })
    }

    /// A statistic of no rank: all zero (what [`Stat::of`] gives for an empty list of
    /// counts).
    pub fn zero() -> Stat {
        Stat {
            min: 0.0,
            max: 0.0,
            mean: 0.0,
            sum: 0.0,
            min_rank: 0,
            max_rank: 0,
            n: 0,
        }
    }

    /// Load imbalance: `max / mean` (1 when balanced); `None` when the mean is not positive.
    pub fn imbalance(&self) -> Option<f64> {
        (self.mean > 0.0).then(|| self.max / self.mean)
    }
}

/// A performance variable profiled on at least one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Its description, from the first rank that profiled it.
    pub meta: ColumnMeta,
    /// The name the outputs use: the variable's name, with `.class` appended where two
    /// classes share it (names are unique per class only, MPI-4.1 §16.3.7).
    pub label: String,
    /// How many ranks have it as a column.
    pub ranks: usize,
    /// Handles allocated for it, summed over the ranks (0: listed, but every allocation was
    /// refused, see [`Profile::skipped`]).
    pub handles: usize,
}

/// A variable's derived metric over the ranks, of one node.
#[derive(Clone, Debug, PartialEq)]
pub enum Reduced {
    /// Counter, aggregate, timer: the sum of the deltas.
    Delta {
        /// The deltas (a rank without them: 0).
        sum: Stat,
    },
    /// High or low watermark.
    Watermark {
        /// How often it moved (a rank without: 0).
        changes: Stat,
        /// How much it moved (a rank without: 0).
        amount: Stat,
        /// Its last value, over the ranks that read one.
        last: Option<Stat>,
    },
    /// Level, size, percentage.
    Samples {
        /// Number of samples (a rank without: 0).
        count: Stat,
        /// Each rank's smallest sample, over the ranks with samples.
        min: Option<Stat>,
        /// Each rank's largest sample, over the ranks with samples.
        max: Option<Stat>,
        /// Each rank's mean sample, over the ranks with samples.
        mean: Option<Stat>,
    },
    /// State, generic: the last value, over the ranks that read one.
    Raw {
        /// The last values.
        last: Option<Stat>,
    },
}

impl Reduced {
    /// The statistic the tables rank by: the delta sum, the watermark's amount, the samples'
    /// mean, the last value.
    pub fn headline(&self) -> Option<&Stat> {
        match self {
            Reduced::Delta { sum } => Some(sum),
            Reduced::Watermark { amount, .. } => Some(amount),
            Reduced::Samples { mean, .. } => mean.as_ref(),
            Reduced::Raw { last } => last.as_ref(),
        }
    }
}

/// One node's numbers on one rank, exclusive and inclusive, aligned with the [`Profile`]'s
/// columns and event types.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeValues {
    /// Times entered or called.
    pub calls: u64,
    /// Inclusive time in nanoseconds.
    pub time_ns: u64,
    /// Exclusive time in nanoseconds: the time less the children's.
    pub exclusive_time_ns: u64,
    /// Calls whose time was measured (fewer than `calls`: the time is an estimate).
    pub timed_calls: u64,
    /// Exclusive metrics per column (zero where the rank lacks the column).
    pub metrics: Vec<MetricData>,
    /// Inclusive metrics per column.
    pub inclusive: Vec<MetricData>,
    /// Exclusive event counts per event type.
    pub events: Vec<u64>,
    /// Inclusive event counts per event type.
    pub inclusive_events: Vec<u64>,
}

/// A node of the reduced call tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The parent's index in [`Profile::nodes`] (`None` for a root; a parent comes first).
    pub parent: Option<usize>,
    /// Its depth (0 for a root).
    pub depth: usize,
    /// Region or function name.
    pub name: String,
    /// Region or MPI function.
    pub kind: Kind,
    /// Calls over the ranks (a rank without the node: 0).
    pub calls: Stat,
    /// Inclusive time in nanoseconds.
    pub time: Stat,
    /// Exclusive time in nanoseconds.
    pub exclusive_time: Stat,
    /// Whether some rank timed only some of the calls (its time is estimated from those).
    pub estimated: bool,
    /// Exclusive metrics per column.
    pub metrics: Vec<Reduced>,
    /// Inclusive metrics per column.
    pub inclusive: Vec<Reduced>,
    /// Exclusive event counts per event type.
    pub events: Vec<Stat>,
    /// Inclusive event counts per event type.
    pub inclusive_events: Vec<Stat>,
    /// Per rank (in [`Profile::ranks`] order): its numbers, `None` if it lacks the node.
    pub per_rank: Vec<Option<NodeValues>>,
}

/// A communication matrix: a per-peer variable bound to `MPI_COMM_WORLD`.
#[derive(Clone, Debug, PartialEq)]
pub struct CommMatrix {
    /// The column's index in [`Profile::columns`].
    pub column: usize,
    /// The column's label.
    pub name: String,
    /// `rows[r][p]`: what rank `r` counted for peer `p`.
    pub rows: Vec<Vec<f64>>,
}

/// A variable skipped on some ranks, for one reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// Its index.
    pub index: usize,
    /// Its name, if known.
    pub name: Option<String>,
    /// Why.
    pub reason: String,
    /// The ranks that skipped it for that reason.
    pub ranks: Vec<usize>,
}

/// The profile of a whole job, reduced across its ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The ranks' profiles, sorted by rank (what `ranks.json` holds).
    pub ranks: Vec<RankProfile>,
    /// The lowest rank's command line.
    pub program: Vec<String>,
    /// The lowest rank's MPI library.
    pub library: String,
    /// The hosts, in rank order of first appearance.
    pub hosts: Vec<String>,
    /// The root region's name (lowest rank).
    pub root: String,
    /// The sampling mode (lowest rank).
    pub mode: Mode,
    /// The clock (lowest rank).
    pub clock: String,
    /// The profiled duration in nanoseconds.
    pub duration: Stat,
    /// The performance variables each rank's MPI exposed (profiled or skipped).
    pub pvars: Stat,
    /// The profiled variables, in order of first appearance.
    pub columns: Vec<Column>,
    /// The event types counted, in order of first appearance.
    pub event_types: Vec<String>,
    /// The call tree; a parent comes before its children.
    pub nodes: Vec<Node>,
    /// The communication matrices.
    pub matrices: Vec<CommMatrix>,
    /// The variables not profiled, grouped by (index, name, reason).
    pub skipped: Vec<Skip>,
    /// The engine's notes, each prefixed with its rank, and the reduction's own.
    pub notes: Vec<String>,
}

impl Profile {
    /// The node's path of names from its root, joined by `/`.
    pub fn path(&self, node: usize) -> String {
        let mut names = vec![self.nodes[node].name.as_str()];
        let mut at = self.nodes[node].parent;
        while let Some(p) = at {
            names.push(&self.nodes[p].name);
            at = self.nodes[p].parent;
        }
        names.reverse();
        names.join("/")
    }

    /// The children of `node`, in index order.
    pub fn children(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        (node + 1..self.nodes.len()).filter(move |&i| self.nodes[i].parent == Some(node))
    }
}

/// Adds `b` into `a` (the subtree rule of the module doc); `a` keeps its kind.
fn absorb(a: &mut MetricData, b: &MetricData) {
    match (a, b) {
        (MetricData::Delta { sum }, MetricData::Delta { sum: s }) => *sum += s,
        (
            MetricData::Watermark {
                changes,
                amount,
                last,
            },
            MetricData::Watermark {
                changes: c,
                amount: m,
                last: l,
            },
        ) => {
            *changes += c;
            *amount += m;
            if last.is_none() {
                *last = *l;
            }
        }
        (
            MetricData::Samples {
                count,
                min,
                max,
                sum,
            },
            MetricData::Samples {
                count: c,
                min: lo,
                max: hi,
                sum: s,
            },
        ) if *c > 0 => {
            *count += c;
            *min = min.min(*lo);
            *max = max.max(*hi);
            *sum += s;
        }
        (MetricData::Raw { last }, MetricData::Raw { last: l }) if last.is_none() => *last = *l,
        _ => {}
    }
}

/// The statistics of one metric over the ranks' values `(rank, metric)`, all of `kind`
/// (others are ignored), `size` ranks in all (the missing ones count as zero where the module
/// doc says so).
fn reduce_metric(kind: MetricKind, values: &[(usize, MetricData)], ranks: &[usize]) -> Reduced {
    // A value per rank, zero for the ranks without one.
    let zero_filled = |f: &dyn Fn(&MetricData) -> Option<f64>| {
        let mut by_rank: HashMap<usize, f64> = HashMap::new();
        for (r, m) in values {
            if m.kind() == kind
                && let Some(v) = f(m)
            {
                *by_rank.entry(*r).or_default() += v;
            }
        }
        Stat::of(
            ranks
                .iter()
                .map(|r| (*r, by_rank.get(r).copied().unwrap_or(0.0))),
        )
        .unwrap_or_else(Stat::zero)
    };
    let present = |f: &dyn Fn(&MetricData) -> Option<f64>| {
        Stat::of(
            values
                .iter()
                .filter(|(_, m)| m.kind() == kind)
                .filter_map(|(r, m)| f(m).map(|v| (*r, v))),
        )
    };
    match kind {
        MetricKind::Delta => Reduced::Delta {
            sum: zero_filled(&|m| match m {
                MetricData::Delta { sum } => Some(*sum),
                _ => None,
            }),
        },
        MetricKind::Watermark => Reduced::Watermark {
            changes: zero_filled(&|m| match m {
                MetricData::Watermark { changes, .. } => Some(*changes as f64),
                _ => None,
            }),
            amount: zero_filled(&|m| match m {
                MetricData::Watermark { amount, .. } => Some(*amount),
                _ => None,
            }),
            last: present(&|m| match m {
                MetricData::Watermark { last, .. } => *last,
                _ => None,
            }),
        },
        MetricKind::Samples => {
            let sampled = |f: fn(u64, f64, f64, f64) -> f64| {
                move |m: &MetricData| match *m {
                    MetricData::Samples {
                        count,
                        min,
                        max,
                        sum,
                    } if count > 0 => Some(f(count, min, max, sum)),
                    _ => None,
                }
            };
            Reduced::Samples {
                count: zero_filled(&|m| match m {
                    MetricData::Samples { count, .. } => Some(*count as f64),
                    _ => None,
                }),
                min: present(&sampled(|_, min, _, _| min)),
                max: present(&sampled(|_, _, max, _| max)),
                mean: present(&sampled(|count, _, _, sum| sum / count as f64)),
            }
        }
        MetricKind::Raw => Reduced::Raw {
            last: present(&|m| match m {
                MetricData::Raw { last } => *last,
                _ => None,
            }),
        },
    }
}

/// Index of `key` in `list`, appending it if new.
fn intern<K: PartialEq + Clone>(list: &mut Vec<K>, key: &K) -> usize {
    list.iter().position(|k| k == key).unwrap_or_else(|| {
        list.push(key.clone());
        list.len() - 1
    })
}

/// Reduces the profiles of the ranks of one job (any order; see the module doc for the rules).
pub fn reduce(ranks: &[RankProfile]) -> Profile {
    let mut ranks: Vec<RankProfile> = ranks.to_vec();
    ranks.sort_by_key(|r| r.rank);
    let rank_ids: Vec<usize> = ranks.iter().map(|r| r.rank).collect();
    let mut notes = Vec::new();
    // The engine's notes with the ranks that made each (in first-seen order).
    let mut rank_notes: Vec<(String, Vec<usize>)> = Vec::new();

    // Columns by (name, class), event types by name.
    let mut col_keys: Vec<(String, String)> = Vec::new();
    let mut columns: Vec<Column> = Vec::new();
    let mut col_maps: Vec<Vec<usize>> = Vec::new();
    let mut event_types: Vec<String> = Vec::new();
    let mut event_maps: Vec<Vec<usize>> = Vec::new();
    for r in &ranks {
        let mut map = Vec::with_capacity(r.columns.len());
        for c in &r.columns {
            let key = (c.name.clone(), c.class.clone());
            let i = intern(&mut col_keys, &key);
            if i == columns.len() {
                columns.push(Column {
                    meta: c.clone(),
                    label: c.name.clone(),
                    ranks: 0,
                    handles: 0,
                });
            }
            if !map.contains(&i) {
                columns[i].ranks += 1;
            }
            columns[i].handles += c.handles;
            map.push(i);
        }
        col_maps.push(map);
        event_maps.push(
            r.event_types
                .iter()
                .map(|e| intern(&mut event_types, e))
                .collect(),
        );
    }
    for i in 0..columns.len() {
        if columns
            .iter()
            .filter(|c| c.meta.name == columns[i].meta.name)
            .count()
            > 1
        {
            columns[i].label = format!("{}.{}", columns[i].meta.name, columns[i].meta.class);
        }
    }
    let kinds: Vec<MetricKind> = columns.iter().map(|c| c.meta.metric).collect();
    let zero_metrics = || {
        kinds
            .iter()
            .map(|&k| MetricData::zero(k))
            .collect::<Vec<_>>()
    };

    // Nodes by (parent, name, kind); each rank's values in the reduced alignment.
    let mut node_keys: Vec<(Option<usize>, String, Kind)> = Vec::new();
    let mut per_rank: Vec<Vec<Option<NodeValues>>> = Vec::new();
    for (ri, r) in ranks.iter().enumerate() {
        let mut local: Vec<usize> = Vec::with_capacity(r.nodes.len());
        for (i, n) in r.nodes.iter().enumerate() {
            let parent = n.parent.filter(|&p| p < i).map(|p| local[p]);
            if n.parent.is_some() && parent.is_none() {
                notes.push(format!(
                    "rank {}: node {i} ({}) has parent {:?}, not an earlier node: taken as a root",
                    r.rank, n.name, n.parent
                ));
            }
            let g = intern(&mut node_keys, &(parent, n.name.clone(), n.kind));
            if g == per_rank.len() {
                per_rank.push(vec![None; ranks.len()]);
            }
            local.push(g);
            let mut metrics = zero_metrics();
            for (c, m) in n.metrics.iter().enumerate() {
                if let Some(&gc) = col_maps[ri].get(c) {
                    if m.kind() == kinds[gc] {
                        absorb(&mut metrics[gc], m);
                    } else {
                        notes.push(format!(
                            "rank {}: node {} has a {} metric for column {}, a {} column: left out",
                            r.rank,
                            n.name,
                            m.kind().name(),
                            columns[gc].label,
                            kinds[gc].name()
                        ));
                    }
                }
            }
            let mut events = vec![0u64; event_types.len()];
            for (e, &count) in n.events.iter().enumerate() {
                if let Some(&ge) = event_maps[ri].get(e) {
                    events[ge] += count;
                }
            }
            let slot = &mut per_rank[g][ri];
            match slot {
                None => {
                    *slot = Some(NodeValues {
                        calls: n.calls,
                        time_ns: n.time_ns,
                        exclusive_time_ns: 0,
                        timed_calls: n.timed_calls,
                        inclusive: Vec::new(),
                        inclusive_events: Vec::new(),
                        metrics,
                        events,
                    })
                }
                Some(v) => {
                    // The same path twice on one rank: merged.
                    v.calls += n.calls;
                    v.time_ns += n.time_ns;
                    v.timed_calls = v.timed_calls.saturating_add(n.timed_calls);
                    for (a, b) in v.metrics.iter_mut().zip(&metrics) {
                        absorb(a, b);
                    }
                    for (a, b) in v.events.iter_mut().zip(&events) {
                        *a += b;
                    }
                }
            }
        }
    }
    let parents: Vec<Option<usize>> = node_keys.iter().map(|k| k.0).collect();

    // Inclusive values and exclusive time, children before parents (a parent comes first).
    for v in per_rank.iter_mut().flatten().flatten() {
        v.inclusive = v.metrics.clone();
        v.inclusive_events = v.events.clone();
    }
    // `per_rank` is indexed [node][rank]: a loop over ranks indexes its inner vectors.
    #[allow(clippy::needless_range_loop)]
    for ri in 0..ranks.len() {
        let mut child_time = vec![0u64; node_keys.len()];
        for g in (0..node_keys.len()).rev() {
            let Some(v) = per_rank[g][ri].clone() else {
                continue;
            };
            if let Some(p) = parents[g] {
                child_time[p] = child_time[p].saturating_add(v.time_ns);
                if let Some(pv) = &mut per_rank[p][ri] {
                    for (a, b) in pv.inclusive.iter_mut().zip(&v.inclusive) {
                        absorb(a, b);
                    }
                    for (a, b) in pv.inclusive_events.iter_mut().zip(&v.inclusive_events) {
                        *a += b;
                    }
                }
            }
        }
        for (g, &t) in child_time.iter().enumerate() {
            if let Some(v) = &mut per_rank[g][ri] {
                v.exclusive_time_ns = v.time_ns.saturating_sub(t);
            }
        }
    }

    let stat = |values: &[Option<NodeValues>], f: &dyn Fn(&NodeValues) -> f64| {
        Stat::of(
            rank_ids
                .iter()
                .zip(values)
                .map(|(&r, v)| (r, v.as_ref().map_or(0.0, f))),
        )
        .unwrap_or_else(Stat::zero)
    };
    let mut nodes: Vec<Node> = Vec::with_capacity(node_keys.len());
    for (g, (parent, name, kind)) in node_keys.into_iter().enumerate() {
        let values = std::mem::take(&mut per_rank[g]);
        let metric_stats = |inclusive: bool| -> Vec<Reduced> {
            kinds
                .iter()
                .enumerate()
                .map(|(c, &k)| {
                    let vals: Vec<(usize, MetricData)> = rank_ids
                        .iter()
                        .zip(&values)
                        .filter_map(|(&r, v)| {
                            let v = v.as_ref()?;
                            Some((
                                r,
                                if inclusive {
                                    v.inclusive[c]
                                } else {
                                    v.metrics[c]
                                },
                            ))
                        })
                        .collect();
                    reduce_metric(k, &vals, &rank_ids)
                })
                .collect()
        };
        let event_stats = |inclusive: bool| -> Vec<Stat> {
            (0..event_types.len())
                .map(|e| {
                    stat(&values, &|v| {
                        (if inclusive {
                            v.inclusive_events[e]
                        } else {
                            v.events[e]
                        }) as f64
                    })
                })
                .collect()
        };
        nodes.push(Node {
            parent,
            depth: parent.map_or(0, |p| nodes[p].depth + 1),
            name,
            kind,
            calls: stat(&values, &|v| v.calls as f64),
            time: stat(&values, &|v| v.time_ns as f64),
            exclusive_time: stat(&values, &|v| v.exclusive_time_ns as f64),
            estimated: values.iter().flatten().any(|v| v.timed_calls < v.calls),
            metrics: metric_stats(false),
            inclusive: metric_stats(true),
            events: event_stats(false),
            inclusive_events: event_stats(true),
            per_rank: values,
        });
    }

    let matrices = matrices(&ranks, &columns, &col_maps, &mut notes);

    let mut skipped: Vec<Skip> = Vec::new();
    for r in &ranks {
        for s in &r.skipped {
            match skipped
                .iter_mut()
                .find(|k| k.index == s.index && k.name == s.name && k.reason == s.reason)
            {
                Some(k) => k.ranks.push(r.rank),
                None => skipped.push(Skip {
                    index: s.index,
                    name: s.name.clone(),
                    reason: s.reason.clone(),
                    ranks: vec![r.rank],
                }),
            }
        }
        for n in &r.notes {
            match rank_notes.iter_mut().find(|(text, _)| text == n) {
                Some((_, on)) => on.push(r.rank),
                None => rank_notes.push((n.clone(), vec![r.rank])),
            }
        }
    }
    // One line per note however many ranks made it: "ranks 0-3: ...", "rank 2: ...".
    for (text, on) in rank_notes {
        let who = if on.len() == 1 {
            format!("rank {}", on[0])
        } else if on.len() == rank_ids.len() {
            "every rank".to_owned()
        } else {
            format!("ranks {}", ranges(&on))
        };
        notes.push(format!("{who}: {text}"));
    }
    if let Some(first) = ranks.first() {
        if ranks.iter().any(|r| r.size != first.size) {
            notes.push("the ranks disagree on the size of MPI_COMM_WORLD".into());
        } else if ranks.len() != first.size {
            notes.push(format!(
                "{} of {} ranks sent a profile",
                ranks.len(),
                first.size
            ));
        }
    }
    let mut hosts: Vec<String> = Vec::new();
    for r in &ranks {
        intern(&mut hosts, &r.hostname);
    }
    let first = ranks.first();
    Profile {
        program: first.map(|r| r.program.clone()).unwrap_or_default(),
        library: first.map(|r| r.library.clone()).unwrap_or_default(),
        hosts,
        root: first.map(|r| r.root.clone()).unwrap_or_default(),
        mode: first.map_or(Mode::Region, |r| r.mode),
        clock: first.map(|r| r.clock.clone()).unwrap_or_default(),
        duration: Stat::of(ranks.iter().map(|r| (r.rank, r.duration_ns as f64)))
            .unwrap_or_else(Stat::zero),
        pvars: Stat::of(ranks.iter().map(|r| (r.rank, r.pvars_total() as f64)))
            .unwrap_or_else(Stat::zero),
        columns,
        event_types,
        nodes,
        matrices,
        skipped,
        notes,
        ranks,
    }
}

/// The communication matrices: columns whose elements bound to [`WORLD`] have `size` values
/// on every rank of a complete job (ranks `0..size`).
fn matrices(
    ranks: &[RankProfile],
    columns: &[Column],
    col_maps: &[Vec<usize>],
    notes: &mut Vec<String>,
) -> Vec<CommMatrix> {
    let Some(size) = ranks.first().map(|r| r.size) else {
        return Vec::new();
    };
    let complete = ranks.len() == size && ranks.iter().enumerate().all(|(i, r)| r.rank == i);
    let mut out = Vec::new();
    for (c, col) in columns.iter().enumerate() {
        let rows: Vec<Option<&Vec<f64>>> = ranks
            .iter()
            .zip(col_maps)
            .map(|(r, map)| {
                r.elements
                    .iter()
                    .find(|e| e.object == WORLD && map.get(e.column) == Some(&c))
                    .map(|e| &e.values)
            })
            .collect();
        if rows.iter().all(Option::is_none) {
            continue;
        }
        if complete && rows.iter().all(|r| r.is_some_and(|v| v.len() == size)) {
            out.push(CommMatrix {
                column: c,
                name: col.label.clone(),
                rows: rows.into_iter().flatten().cloned().collect(),
            });
        } else {
            notes.push(format!(
                "{}: elements bound to {WORLD} but not {size} values on each of ranks 0..{size}: \
                 no matrix",
                col.label
            ));
        }
    }
    out
}

/// Sorted distinct numbers as ranges: `0-3,5,7-8`.
pub fn ranges(sorted: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        out.push(if j == i {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    out.join(",")
}
