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

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::Mode;
use crate::model::{ColumnMeta, Kind, MetricData, MetricKind, RankProfile};
use crate::serde_util::bits;

/// The object label of per-peer variables bound to `MPI_COMM_WORLD`.
pub const WORLD: &str = "MPI_COMM_WORLD";

/// Statistics of one number over the ranks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Smallest value.
    #[serde(with = "bits")]
    pub min: f64,
    /// Largest value.
    #[serde(with = "bits")]
    pub max: f64,
    /// Mean over the [`Stat::n`] ranks.
    #[serde(with = "bits")]
    pub mean: f64,
    /// Sum over the ranks.
    #[serde(with = "bits")]
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

    /// The statistics of the ranks of `self` and of `other` together (either may be of no
    /// rank): what [`Stat::of`] gives for the two lists one after the other, but for the last
    /// bits of the sum and the mean where adding in another order rounds otherwise. Ties go to
    /// the lower rank.
    pub fn merge(self, other: Stat) -> Stat {
        if other.n == 0 {
            return self;
        }
        if self.n == 0 {
            return other;
        }
        let mut s = self;
        if other.min < s.min || (other.min == s.min && other.min_rank < s.min_rank) {
            s.min = other.min;
            s.min_rank = other.min_rank;
        }
        if other.max > s.max || (other.max == s.max && other.max_rank < s.max_rank) {
            s.max = other.max;
            s.max_rank = other.max_rank;
        }
        s.sum += other.sum;
        s.n += other.n;
        s.mean = (s.sum / s.n as f64).clamp(s.min, s.max);
        s
    }

    /// [`Stat::merge`] of statistics that may be missing.
    pub fn merge_opt(a: Option<Stat>, b: Option<Stat>) -> Option<Stat> {
        match (a, b) {
            (Some(a), Some(b)) => Some(a.merge(b)),
            (a, b) => a.or(b),
        }
    }

    /// Load imbalance: `max / mean` (1 when balanced); `None` when the mean is not positive.
    pub fn imbalance(&self) -> Option<f64> {
        (self.mean > 0.0).then(|| self.max / self.mean)
    }
}

/// A performance variable profiled on at least one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

    /// The statistics of both (of the same variant; else `self`), as [`Stat::merge`].
    pub fn merge(self, other: &Reduced) -> Reduced {
        use Reduced as R;
        match (self, other) {
            (R::Delta { sum }, R::Delta { sum: s }) => R::Delta { sum: sum.merge(*s) },
            (
                R::Watermark {
                    changes,
                    amount,
                    last,
                },
                R::Watermark {
                    changes: c,
                    amount: a,
                    last: l,
                },
            ) => R::Watermark {
                changes: changes.merge(*c),
                amount: amount.merge(*a),
                last: Stat::merge_opt(last, *l),
            },
            (
                R::Samples {
                    count,
                    min,
                    max,
                    mean,
                },
                R::Samples {
                    count: c,
                    min: lo,
                    max: hi,
                    mean: m,
                },
            ) => R::Samples {
                count: count.merge(*c),
                min: Stat::merge_opt(min, *lo),
                max: Stat::merge_opt(max, *hi),
                mean: Stat::merge_opt(mean, *m),
            },
            (R::Raw { last }, R::Raw { last: l }) => R::Raw {
                last: Stat::merge_opt(last, *l),
            },
            (mine, _) => mine,
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
    /// Its statistics over the ranks, whose fields a `Node` derefs to (`node.calls`, ...).
    pub stats: NodeStats,
    /// Per rank (in [`Profile::rank_ids`] order): its numbers, `None` if it lacks the node.
    pub per_rank: Vec<Option<NodeValues>>,
}

impl std::ops::Deref for Node {
    type Target = NodeStats;

    fn deref(&self) -> &NodeStats {
        &self.stats
    }
}

impl std::ops::DerefMut for Node {
    fn deref_mut(&mut self) -> &mut NodeStats {
        &mut self.stats
    }
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The ranks' profiles, sorted by rank (what `ranks.json` holds); empty where the end of
    /// a run streamed them to `ranks.json` instead ([`crate::partial`]).
    pub ranks: Vec<RankProfile>,
    /// The ranks that sent a profile, in increasing order ([`Node::per_rank`]'s order).
    pub rank_ids: Vec<usize>,
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
pub(crate) fn intern<K: PartialEq + Clone>(list: &mut Vec<K>, key: &K) -> usize {
    list.iter().position(|k| k == key).unwrap_or_else(|| {
        list.push(key.clone());
        list.len() - 1
    })
}

/// A node's key across ranks: its parent's index in the reduced tree, its name and kind.
pub type NodeKey = (Option<usize>, String, Kind);

/// Matches `r`'s columns with `columns` by (name, class), appending the new ones and counting
/// `r` and its handles in each; returns the reduced index of each of `r`'s columns.
pub(crate) fn column_map(columns: &mut Vec<Column>, r: &RankProfile) -> Vec<usize> {
    let mut map = Vec::with_capacity(r.columns.len());
    for c in &r.columns {
        let i = columns
            .iter()
            .position(|k| k.meta.name == c.name && k.meta.class == c.class)
            .unwrap_or_else(|| {
                columns.push(Column {
                    meta: c.clone(),
                    label: c.name.clone(),
                    ranks: 0,
                    handles: 0,
                });
                columns.len() - 1
            });
        if !map.contains(&i) {
            columns[i].ranks += 1;
        }
        columns[i].handles += c.handles;
        map.push(i);
    }
    map
}

/// The labels of the columns: the name, with `.class` where two classes share it.
pub(crate) fn label_columns(columns: &mut [Column]) {
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
}

/// One rank's nodes in the reduced alignment: `col_map` and `event_map` give the reduced
/// index of each of its columns and event types (an index past `columns` leaves that column
/// out), `key` the reduced index of a node's key (`None`: the node is left out). Each entry:
/// the node's reduced parent and its values, inclusive ones and the exclusive time computed.
/// What does not fit (a parent that is not an earlier node, a metric of another kind than its
/// column's) is said in `notes`, in the rank's node order.
pub(crate) fn rank_values(
    r: &RankProfile,
    (col_map, event_map): (&[usize], &[usize]),
    (columns, n_events): (&[Column], usize),
    key: &mut dyn FnMut(NodeKey) -> Option<usize>,
    notes: &mut Vec<String>,
) -> BTreeMap<usize, (Option<usize>, NodeValues)> {
    let kinds: Vec<MetricKind> = columns.iter().map(|c| c.meta.metric).collect();
    let mut out: BTreeMap<usize, (Option<usize>, NodeValues)> = BTreeMap::new();
    let mut local: Vec<Option<usize>> = Vec::with_capacity(r.nodes.len());
    for (i, n) in r.nodes.iter().enumerate() {
        let parent = n.parent.filter(|&p| p < i).map(|p| local[p]);
        if n.parent.is_some() && parent.is_none() {
            notes.push(format!(
                "rank {}: node {i} ({}) has parent {:?}, not an earlier node: taken as a root",
                r.rank, n.name, n.parent
            ));
        }
        // A node under one left out is left out.
        let g = match parent {
            Some(None) => None,
            Some(Some(p)) => key((Some(p), n.name.clone(), n.kind)),
            None => key((None, n.name.clone(), n.kind)),
        };
        local.push(g);
        let Some(g) = g else { continue };
        let mut metrics: Vec<MetricData> = kinds.iter().map(|&k| MetricData::zero(k)).collect();
        for (c, m) in n.metrics.iter().enumerate() {
            if let Some(&gc) = col_map.get(c).filter(|&&gc| gc < kinds.len()) {
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
        let mut events = vec![0u64; n_events];
        for (e, &count) in n.events.iter().enumerate() {
            if let Some(&ge) = event_map.get(e).filter(|&&ge| ge < n_events) {
                events[ge] += count;
            }
        }
        match out.get_mut(&g) {
            None => {
                out.insert(
                    g,
                    (
                        parent.flatten(),
                        NodeValues {
                            calls: n.calls,
                            time_ns: n.time_ns,
                            exclusive_time_ns: 0,
                            timed_calls: n.timed_calls,
                            inclusive: Vec::new(),
                            inclusive_events: Vec::new(),
                            metrics,
                            events,
                        },
                    ),
                );
            }
            Some((_, v)) => {
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
    // Inclusive values and exclusive time, children before parents (a parent comes first).
    for (_, v) in out.values_mut() {
        v.inclusive = v.metrics.clone();
        v.inclusive_events = v.events.clone();
    }
    let mut child_time: HashMap<usize, u64> = HashMap::new();
    let order: Vec<usize> = out.keys().rev().copied().collect();
    for g in order {
        let (parent, v) = out[&g].clone();
        if let Some(p) = parent {
            let t = child_time.entry(p).or_default();
            *t = t.saturating_add(v.time_ns);
            if let Some((_, pv)) = out.get_mut(&p) {
                for (a, b) in pv.inclusive.iter_mut().zip(&v.inclusive) {
                    absorb(a, b);
                }
                for (a, b) in pv.inclusive_events.iter_mut().zip(&v.inclusive_events) {
                    *a += b;
                }
            }
        }
    }
    for (g, (_, v)) in out.iter_mut() {
        v.exclusive_time_ns = v
            .time_ns
            .saturating_sub(child_time.get(g).copied().unwrap_or(0));
    }
    out
}

/// A node's statistics over the ranks: everything of a [`Node`] but its place in the tree and
/// its per-rank values. Of one rank, or merged ([`NodeStats::merge`]) over consecutive ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeStats {
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
}

impl NodeStats {
    /// The statistics of `values`, one per rank of `rank_ids` (`None`: the rank lacks the
    /// node), of columns of `kinds` and `n_events` event types.
    pub fn of(
        rank_ids: &[usize],
        values: &[Option<NodeValues>],
        kinds: &[MetricKind],
        n_events: usize,
    ) -> NodeStats {
        let stat = |f: &dyn Fn(&NodeValues) -> f64| {
            Stat::of(
                rank_ids
                    .iter()
                    .zip(values)
                    .map(|(&r, v)| (r, v.as_ref().map_or(0.0, f))),
            )
            .unwrap_or_else(Stat::zero)
        };
        let metric_stats = |inclusive: bool| -> Vec<Reduced> {
            kinds
                .iter()
                .enumerate()
                .map(|(c, &k)| {
                    let vals: Vec<(usize, MetricData)> = rank_ids
                        .iter()
                        .zip(values)
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
                    reduce_metric(k, &vals, rank_ids)
                })
                .collect()
        };
        let event_stats = |inclusive: bool| -> Vec<Stat> {
            (0..n_events)
                .map(|e| {
                    stat(&|v| {
                        (if inclusive {
                            v.inclusive_events[e]
                        } else {
                            v.events[e]
                        }) as f64
                    })
                })
                .collect()
        };
        NodeStats {
            calls: stat(&|v| v.calls as f64),
            time: stat(&|v| v.time_ns as f64),
            exclusive_time: stat(&|v| v.exclusive_time_ns as f64),
            estimated: values.iter().flatten().any(|v| v.timed_calls < v.calls),
            metrics: metric_stats(false),
            inclusive: metric_stats(true),
            events: event_stats(false),
            inclusive_events: event_stats(true),
        }
    }

    /// The statistics of the ranks of both.
    pub fn merge(self, other: &NodeStats) -> NodeStats {
        let stats = |a: Vec<Stat>, b: &[Stat]| -> Vec<Stat> {
            a.into_iter().zip(b).map(|(a, b)| a.merge(*b)).collect()
        };
        let reduced = |a: Vec<Reduced>, b: &[Reduced]| -> Vec<Reduced> {
            a.into_iter().zip(b).map(|(a, b)| a.merge(b)).collect()
        };
        NodeStats {
            calls: self.calls.merge(other.calls),
            time: self.time.merge(other.time),
            exclusive_time: self.exclusive_time.merge(other.exclusive_time),
            estimated: self.estimated || other.estimated,
            metrics: reduced(self.metrics, &other.metrics),
            inclusive: reduced(self.inclusive, &other.inclusive),
            events: stats(self.events, &other.events),
            inclusive_events: stats(self.inclusive_events, &other.inclusive_events),
        }
    }

    /// The node of the reduced tree these are the statistics of.
    pub fn into_node(
        self,
        (parent, name, kind): NodeKey,
        depth: usize,
        per_rank: Vec<Option<NodeValues>>,
    ) -> Node {
        Node {
            parent,
            depth,
            name,
            kind,
            stats: self,
            per_rank,
        }
    }
}

/// Adds `r`'s skipped variables and notes to the groups, `r`'s rank to each.
pub(crate) fn group_skips_and_notes(
    r: &RankProfile,
    skipped: &mut Vec<Skip>,
    rank_notes: &mut Vec<(String, Vec<usize>)>,
) {
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

/// The notes that close the reduction: one line per engine note however many ranks made it
/// ("ranks 0-3: ...", "rank 2: ..."), then whether the ranks agree on the job's size
/// (`sizes`: the lowest rank's and whether some other differs) and all sent a profile.
pub(crate) fn closing_notes(
    notes: &mut Vec<String>,
    rank_notes: Vec<(String, Vec<usize>)>,
    n_ranks: usize,
    sizes: Option<(usize, bool)>,
) {
    for (text, on) in rank_notes {
        let who = if on.len() == 1 {
            format!("rank {}", on[0])
        } else if on.len() == n_ranks {
            "every rank".to_owned()
        } else {
            format!("ranks {}", ranges(&on))
        };
        notes.push(format!("{who}: {text}"));
    }
    if let Some((size, differ)) = sizes {
        if differ {
            notes.push("the ranks disagree on the size of MPI_COMM_WORLD".into());
        } else if n_ranks != size {
            notes.push(format!("{n_ranks} of {size} ranks sent a profile"));
        }
    }
}

/// The note of a column whose elements bound to [`WORLD`] make no matrix.
pub(crate) fn no_matrix_note(label: &str, size: usize) -> String {
    format!(
        "{label}: elements bound to {WORLD} but not {size} values on each of ranks 0..{size}: \
         no matrix"
    )
}

/// `r`'s elements bound to [`WORLD`] of the reduced column `c` (`map`: `r`'s column map).
pub(crate) fn world_row<'a>(r: &'a RankProfile, map: &[usize], c: usize) -> Option<&'a Vec<f64>> {
    r.elements
        .iter()
        .find(|e| e.object == WORLD && map.get(e.column) == Some(&c))
        .map(|e| &e.values)
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
    let mut columns: Vec<Column> = Vec::new();
    let mut col_maps: Vec<Vec<usize>> = Vec::new();
    let mut event_types: Vec<String> = Vec::new();
    let mut event_maps: Vec<Vec<usize>> = Vec::new();
    for r in &ranks {
        col_maps.push(column_map(&mut columns, r));
        event_maps.push(
            r.event_types
                .iter()
                .map(|e| intern(&mut event_types, e))
                .collect(),
        );
    }
    label_columns(&mut columns);
    let kinds: Vec<MetricKind> = columns.iter().map(|c| c.meta.metric).collect();

    // Nodes by (parent, name, kind); each rank's values in the reduced alignment.
    let mut node_keys: Vec<NodeKey> = Vec::new();
    let mut by_rank = Vec::with_capacity(ranks.len());
    for (ri, r) in ranks.iter().enumerate() {
        by_rank.push(rank_values(
            r,
            (&col_maps[ri], &event_maps[ri]),
            (&columns, event_types.len()),
            &mut |k| Some(intern(&mut node_keys, &k)),
            &mut notes,
        ));
    }
    let mut per_rank: Vec<Vec<Option<NodeValues>>> = vec![vec![None; ranks.len()]; node_keys.len()];
    for (ri, values) in by_rank.into_iter().enumerate() {
        for (g, (_, v)) in values {
            per_rank[g][ri] = Some(v);
        }
    }

    let mut nodes: Vec<Node> = Vec::with_capacity(node_keys.len());
    for (g, key) in node_keys.into_iter().enumerate() {
        let values = std::mem::take(&mut per_rank[g]);
        let depth = key.0.map_or(0, |p| nodes[p].depth + 1);
        let stats = NodeStats::of(&rank_ids, &values, &kinds, event_types.len());
        nodes.push(stats.into_node(key, depth, values));
    }

    let matrices = matrices(&ranks, &columns, &col_maps, &mut notes);

    let mut skipped: Vec<Skip> = Vec::new();
    for r in &ranks {
        group_skips_and_notes(r, &mut skipped, &mut rank_notes);
    }
    let sizes = ranks
        .first()
        .map(|first| (first.size, ranks.iter().any(|r| r.size != first.size)));
    closing_notes(&mut notes, rank_notes, rank_ids.len(), sizes);
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
        rank_ids,
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
            .map(|(r, map)| world_row(r, map, c))
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
            notes.push(no_matrix_note(&col.label, size));
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
