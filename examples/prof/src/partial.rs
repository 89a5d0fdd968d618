//! The reduction of [`crate::reduce`] made in pieces that merge, so that the end of a run is a
//! tree (`MPI_Finalize`, see `lifecycle.rs`) in which no rank holds more than its children's
//! partial results, in the shape of Caliper's cross-process aggregation and of Score-P's
//! definition unification:
//!
//! 1. [`Tables`]: the columns, event types and node keys, in order of first appearance.
//!    Merged up the tree ([`Tables::merge`]), then broadcast: every rank then knows the
//!    reduced alignment.
//! 2. [`Partial`]: every statistic of the [`Profile`] (per node, column and event type: the
//!    minimum and maximum with their ranks, the sum, the mean, the counts; the job's duration,
//!    hosts, skipped variables, notes), of one rank in that alignment ([`Partial::of`]), merged
//!    up the tree ([`Partial::merge`]). Its size depends on the tables, not on the number of
//!    ranks (but for the ranks listed by a skipped variable or a note).
//! 3. [`Assembly`]: rank 0 has the [`Profile`] but for its per-rank parts, then adds the
//!    ranks' profiles one at a time, in rank order, as they come up the tree
//!    ([`Assembly::add`]): `ranks.json`
//!    ([`crate::write::RanksFile`]) and the data rows of `profile.json`
//!    ([`crate::write::caliper::Writer`]) are written from each as it arrives, the rows of the
//!    communication matrices kept.
//!
//! The result is [`reduce`](crate::reduce::reduce)'s for the same profiles, merged in any
//! shape, provided a merge's second part holds the ranks that follow its first's (the tree's
//! children do); only the sums (and so the means) may differ in their last bits, where adding
//! in another order rounds otherwise (`tests/prof_reduce.rs`, `tree_merge_is_reduce`).

#![forbid(unsafe_code)]

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::Mode;
use crate::model::{MetricKind, RankProfile};
use crate::reduce::{
    Column, CommMatrix, NodeKey, NodeStats, NodeValues, Profile, Skip, Stat, closing_notes,
    column_map, group_skips_and_notes, intern, label_columns, no_matrix_note, rank_values,
    world_row,
};
use crate::serde_util::by_name;

/// The reduced alignment: columns by (name, class), event types by name, nodes by
/// (parent, name, kind), each in order of first appearance over the ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tables {
    /// The columns, with the ranks that have each and their handles.
    pub columns: Vec<Column>,
    /// The event types.
    pub event_types: Vec<String>,
    /// The nodes; a parent comes before its children.
    pub nodes: Vec<NodeKey>,
}

impl Tables {
    /// One rank's.
    pub fn of(r: &RankProfile) -> Tables {
        let mut t = Tables::default();
        let col_map = column_map(&mut t.columns, r);
        let event_map: Vec<usize> = r
            .event_types
            .iter()
            .map(|e| intern(&mut t.event_types, e))
            .collect();
        let nodes = &mut t.nodes;
        rank_values(
            r,
            (&col_map, &event_map),
            (&t.columns, t.event_types.len()),
            &mut |k| Some(intern(nodes, &k)),
            &mut Vec::new(),
        );
        t
    }

    /// Both, `other`'s entries after `self`'s.
    pub fn merge(mut self, other: &Tables) -> Tables {
        for c in &other.columns {
            match self
                .columns
                .iter_mut()
                .find(|k| k.meta.name == c.meta.name && k.meta.class == c.meta.class)
            {
                Some(k) => {
                    k.ranks += c.ranks;
                    k.handles += c.handles;
                }
                None => self.columns.push(c.clone()),
            }
        }
        for e in &other.event_types {
            intern(&mut self.event_types, e);
        }
        let mut remap: Vec<usize> = Vec::with_capacity(other.nodes.len());
        for (parent, name, kind) in &other.nodes {
            // A parent comes first: already remapped.
            let key = (parent.map(|p| remap[p]), name.clone(), *kind);
            remap.push(intern(&mut self.nodes, &key));
        }
        self
    }

    /// With the columns labelled as the outputs name them.
    pub fn labelled(mut self) -> Tables {
        label_columns(&mut self.columns);
        self
    }

    fn kinds(&self) -> Vec<MetricKind> {
        self.columns.iter().map(|c| c.meta.metric).collect()
    }

    fn index(&self) -> HashMap<NodeKey, usize> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), i))
            .collect()
    }

    /// `r`'s column and event maps into these tables (an index past the end where `r` has
    /// what the tables lack).
    fn maps(&self, r: &RankProfile) -> (Vec<usize>, Vec<usize>) {
        let cols = r
            .columns
            .iter()
            .map(|c| {
                self.columns
                    .iter()
                    .position(|k| k.meta.name == c.name && k.meta.class == c.class)
                    .unwrap_or(usize::MAX)
            })
            .collect();
        let events = r
            .event_types
            .iter()
            .map(|e| {
                self.event_types
                    .iter()
                    .position(|k| k == e)
                    .unwrap_or(usize::MAX)
            })
            .collect();
        (cols, events)
    }

    /// `r`'s values in these tables' alignment, one entry per node (`None`: `r` lacks it),
    /// and what did not fit in `notes`.
    fn values(
        &self,
        index: &HashMap<NodeKey, usize>,
        r: &RankProfile,
        notes: &mut Vec<String>,
    ) -> Vec<Option<NodeValues>> {
        let (cols, events) = self.maps(r);
        let mut out = vec![None; self.nodes.len()];
        for (g, (_, v)) in rank_values(
            r,
            (&cols, &events),
            (&self.columns, self.event_types.len()),
            &mut |k| index.get(&k).copied(),
            notes,
        ) {
            out[g] = Some(v);
        }
        out
    }
}

/// What the lowest rank says for the whole job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct First {
    rank: usize,
    size: usize,
    program: Vec<String>,
    library: String,
    root: String,
    #[serde(with = "by_name")]
    mode: Mode,
    clock: String,
}

/// Over the ranks of a column, whether their elements bound to `MPI_COMM_WORLD` make a
/// matrix row each.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Rows {
    /// Some rank has such elements.
    any: bool,
    /// Every rank has them, this many.
    len: Option<usize>,
}

/// Every statistic of the [`Profile`] over some consecutive ranks, in the alignment of
/// [`Tables`]; of no rank: [`Partial::default`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// How many ranks.
    ranks: usize,
    first: Option<First>,
    /// The highest rank.
    last: usize,
    /// Whether the ranks are consecutive numbers.
    consecutive: bool,
    /// Whether some rank's size of `MPI_COMM_WORLD` is not the first's.
    sizes_differ: bool,
    hosts: Vec<String>,
    duration: Option<Stat>,
    pvars: Option<Stat>,
    nodes: Vec<NodeStats>,
    rows: Vec<Rows>,
    skipped: Vec<Skip>,
    rank_notes: Vec<(String, Vec<usize>)>,
    notes: Vec<String>,
}

impl Partial {
    /// Rank `r`'s, in the alignment of `tables` (labelled: [`Tables::labelled`]).
    pub fn of(tables: &Tables, r: &RankProfile) -> Partial {
        let mut notes = Vec::new();
        let values = tables.values(&tables.index(), r, &mut notes);
        let kinds = tables.kinds();
        let n_events = tables.event_types.len();
        let nodes = values
            .into_iter()
            .map(|v| NodeStats::of(&[r.rank], &[v], &kinds, n_events))
            .collect();
        let (cols, _) = tables.maps(r);
        let rows = (0..tables.columns.len())
            .map(|c| {
                let row = world_row(r, &cols, c);
                Rows {
                    any: row.is_some(),
                    len: row.map(Vec::len),
                }
            })
            .collect();
        let (mut skipped, mut rank_notes) = (Vec::new(), Vec::new());
        group_skips_and_notes(r, &mut skipped, &mut rank_notes);
        Partial {
            ranks: 1,
            first: Some(First {
                rank: r.rank,
                size: r.size,
                program: r.program.clone(),
                library: r.library.clone(),
                root: r.root.clone(),
                mode: r.mode,
                clock: r.clock.clone(),
            }),
            last: r.rank,
            consecutive: true,
            sizes_differ: false,
            hosts: vec![r.hostname.clone()],
            duration: Stat::of([(r.rank, r.duration_ns as f64)]),
            pvars: Stat::of([(r.rank, r.pvars_total() as f64)]),
            nodes,
            rows,
            skipped,
            rank_notes,
            notes,
        }
    }

    /// Both, `other`'s ranks following `self`'s (the next ranks of the tree).
    pub fn merge(mut self, other: &Partial) -> Partial {
        let (Some(a), Some(b)) = (&self.first, &other.first) else {
            return if self.ranks == 0 { other.clone() } else { self };
        };
        self.sizes_differ |= other.sizes_differ || a.size != b.size;
        self.consecutive &= other.consecutive && b.rank == self.last + 1;
        self.ranks += other.ranks;
        self.last = other.last;
        for h in &other.hosts {
            intern(&mut self.hosts, h);
        }
        self.duration = Stat::merge_opt(self.duration, other.duration);
        self.pvars = Stat::merge_opt(self.pvars, other.pvars);
        self.nodes = std::mem::take(&mut self.nodes)
            .into_iter()
            .zip(&other.nodes)
            .map(|(a, b)| a.merge(b))
            .collect();
        for (a, b) in self.rows.iter_mut().zip(&other.rows) {
            a.any |= b.any;
            if a.len != b.len {
                a.len = None;
            }
        }
        for s in &other.skipped {
            match self
                .skipped
                .iter_mut()
                .find(|k| k.index == s.index && k.name == s.name && k.reason == s.reason)
            {
                Some(k) => k.ranks.extend(&s.ranks),
                None => self.skipped.push(s.clone()),
            }
        }
        for (text, on) in &other.rank_notes {
            match self.rank_notes.iter_mut().find(|(t, _)| t == text) {
                Some((_, mine)) => mine.extend(on),
                None => self.rank_notes.push((text.clone(), on.clone())),
            }
        }
        self.notes.extend(other.notes.iter().cloned());
        self
    }

    /// How many ranks it is of.
    pub fn ranks(&self) -> usize {
        self.ranks
    }
}

/// Rank 0 at the end of a run: the [`Profile`] of the merged [`Partial`] and, added one rank
/// at a time ([`Assembly::add`]), what the outputs need of every rank.
#[derive(Debug)]
pub struct Assembly {
    tables: Tables,
    index: HashMap<NodeKey, usize>,
    /// The profile so far: every statistic, the ranks added, their matrix rows.
    profile: Profile,
    /// Per matrix of `profile`: its column in `tables`.
    matrix_columns: Vec<usize>,
    /// Whether the ranks' node values are kept in [`crate::reduce::Node::per_rank`].
    keep: bool,
}

impl Assembly {
    /// From the merged tables (labelled) and statistics of every rank. `keep`: whether the
    /// ranks' node values are kept in the profile (as [`reduce`](crate::reduce::reduce) has
    /// them), or only handed back by [`Assembly::add`] (for a writer of them, such as
    /// [`crate::write::caliper::Writer`]).
    pub fn new(tables: Tables, p: Partial, keep: bool) -> Assembly {
        let size = p.first.as_ref().map_or(0, |f| f.size);
        let complete =
            p.consecutive && p.first.as_ref().is_some_and(|f| f.rank == 0) && p.ranks == size;
        let mut notes = p.notes;
        let mut matrices = Vec::new();
        let mut matrix_columns = Vec::new();
        for (c, col) in tables.columns.iter().enumerate() {
            let Some(rows) = p.rows.get(c).filter(|r| r.any) else {
                continue;
            };
            if complete && rows.len == Some(size) {
                matrices.push(CommMatrix {
                    column: c,
                    name: col.label.clone(),
                    rows: Vec::with_capacity(size),
                });
                matrix_columns.push(c);
            } else {
                notes.push(no_matrix_note(&col.label, size));
            }
        }
        let mut nodes: Vec<crate::reduce::Node> = Vec::with_capacity(tables.nodes.len());
        for (key, stats) in tables.nodes.iter().zip(p.nodes) {
            let depth = key.0.map_or(0, |q| nodes[q].depth + 1);
            nodes.push(stats.into_node(key.clone(), depth, Vec::new()));
        }
        let sizes = p.first.as_ref().map(|f| (f.size, p.sizes_differ));
        closing_notes(&mut notes, p.rank_notes, p.ranks, sizes);
        let first = p.first;
        let profile = Profile {
            ranks: Vec::new(),
            rank_ids: Vec::with_capacity(p.ranks),
            program: first
                .as_ref()
                .map(|f| f.program.clone())
                .unwrap_or_default(),
            library: first
                .as_ref()
                .map(|f| f.library.clone())
                .unwrap_or_default(),
            hosts: p.hosts,
            root: first.as_ref().map(|f| f.root.clone()).unwrap_or_default(),
            mode: first.as_ref().map_or(Mode::Region, |f| f.mode),
            clock: first.map(|f| f.clock).unwrap_or_default(),
            duration: p.duration.unwrap_or_else(Stat::zero),
            pvars: p.pvars.unwrap_or_else(Stat::zero),
            columns: tables.columns.clone(),
            event_types: tables.event_types.clone(),
            nodes,
            matrices,
            skipped: p.skipped,
            notes,
        };
        Assembly {
            index: tables.index(),
            tables,
            profile,
            matrix_columns,
            keep,
        }
    }

    /// The profile so far (every statistic; the ranks added until now).
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The next rank's profile (in rank order); gives back its node values, one entry per
    /// node of the profile (`None`: the rank lacks it).
    pub fn add(&mut self, r: &RankProfile) -> Vec<Option<NodeValues>> {
        let values = self.tables.values(&self.index, r, &mut Vec::new());
        if self.keep {
            for (node, v) in self.profile.nodes.iter_mut().zip(&values) {
                node.per_rank.push(v.clone());
            }
        }
        let (cols, _) = self.tables.maps(r);
        for (m, &c) in self.profile.matrices.iter_mut().zip(&self.matrix_columns) {
            m.rows
                .push(world_row(r, &cols, c).cloned().unwrap_or_default());
        }
        self.profile.rank_ids.push(r.rank);
        values
    }

    /// The profile of the job: [`reduce`](crate::reduce::reduce)'s but for
    /// [`Profile::ranks`], left empty, and [`crate::reduce::Node::per_rank`], empty unless
    /// kept.
    pub fn finish(self) -> Profile {
        self.profile
    }
}
