//! `mpit_prof::reduce`: the cross-rank reduction of `mpit-prof`, on handmade rank
//! profiles (no MPI), with property tests of its rules.

use mpit_prof::Mode;
use mpit_prof::model::{
    ColumnMeta, ElementData, Kind, MetricData, MetricKind, NodeData, RankProfile, SkippedData,
};
use mpit_prof::partial::{Assembly, Partial, Tables};
use mpit_prof::reduce::{NodeValues, Profile, Reduced, Stat, WORLD, reduce};
use mpit_prof::write::RanksFile;
use proptest::prelude::*;

fn column(index: usize, name: &str, class: &str, metric: MetricKind) -> ColumnMeta {
    ColumnMeta {
        index,
        name: name.into(),
        class: class.into(),
        datatype: "MPI_UNSIGNED_LONG_LONG".into(),
        bind: "MPI_T_BIND_NO_OBJECT".into(),
        verbosity: "USER_BASIC".into(),
        description: String::new(),
        metric,
        handles: 1,
        started: true,
    }
}

fn node(
    parent: Option<usize>,
    name: &str,
    kind: Kind,
    calls: u64,
    time_ns: u64,
    metrics: Vec<MetricData>,
    events: Vec<u64>,
) -> NodeData {
    NodeData {
        parent,
        name: name.into(),
        kind,
        calls,
        time_ns,
        timed_calls: calls,
        metrics,
        events,
    }
}

fn rank(rank: usize, size: usize, columns: Vec<ColumnMeta>, nodes: Vec<NodeData>) -> RankProfile {
    RankProfile {
        rank,
        size,
        library: "Test MPI 1.0".into(),
        hostname: format!("host{}", rank / 2),
        program: vec!["./app".into()],
        root: "main".into(),
        mode: Mode::Region,
        clock: "tsc".into(),
        duration_ns: 1_000_000 + rank as u64,
        columns,
        nodes,
        elements: vec![],
        skipped: vec![],
        event_types: vec![],
        notes: vec![],
    }
}

fn delta(sum: f64) -> MetricData {
    MetricData::Delta { sum }
}

fn samples(values: &[f64]) -> MetricData {
    MetricData::Samples {
        count: values.len() as u64,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        sum: values.iter().sum(),
    }
}

fn find(p: &Profile, path: &str) -> usize {
    (0..p.nodes.len())
        .find(|&i| p.path(i) == path)
        .unwrap_or_else(|| panic!("no node {path}"))
}

/// Two ranks with different trees, columns in different orders and a level sampled on one
/// rank only.
fn two_ranks() -> Vec<RankProfile> {
    let r0 = rank(
        0,
        2,
        vec![
            column(3, "bytes", "counter", MetricKind::Delta),
            column(5, "queue", "level", MetricKind::Samples),
        ],
        vec![
            node(
                None,
                "main",
                Kind::Region,
                1,
                1000,
                vec![delta(1.0), samples(&[2.0])],
                vec![],
            ),
            node(
                Some(0),
                "solve",
                Kind::Region,
                2,
                600,
                vec![delta(10.0), samples(&[])],
                vec![],
            ),
            node(
                Some(1),
                "MPI_Send",
                Kind::Function,
                5,
                100,
                vec![delta(0.0), samples(&[])],
                vec![],
            ),
        ],
    );
    let r1 = rank(
        1,
        2,
        vec![
            column(5, "queue", "level", MetricKind::Samples),
            column(3, "bytes", "counter", MetricKind::Delta),
        ],
        vec![
            node(
                None,
                "main",
                Kind::Region,
                1,
                2000,
                vec![samples(&[4.0, 8.0]), delta(3.0)],
                vec![],
            ),
            node(
                Some(0),
                "other",
                Kind::Region,
                1,
                50,
                vec![samples(&[]), delta(0.0)],
                vec![],
            ),
            node(
                Some(0),
                "solve",
                Kind::Region,
                1,
                1500,
                vec![samples(&[1.0]), delta(30.0)],
                vec![],
            ),
        ],
    );
    vec![r1, r0]
}

#[test]
fn nodes_and_columns_are_matched_and_missing_ranks_count_as_zero() {
    let p = reduce(&two_ranks());
    assert_eq!(p.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(), [0, 1]);
    let paths: Vec<String> = (0..p.nodes.len()).map(|i| p.path(i)).collect();
    assert_eq!(
        paths,
        ["main", "main/solve", "main/solve/MPI_Send", "main/other"]
    );
    assert_eq!(p.columns.len(), 2);
    let bytes = p.columns.iter().position(|c| c.label == "bytes").unwrap();
    let queue = p.columns.iter().position(|c| c.label == "queue").unwrap();
    assert_eq!(p.columns[bytes].ranks, 2);

    let send = &p.nodes[find(&p, "main/solve/MPI_Send")];
    assert_eq!(send.kind, Kind::Function);
    // Rank 1 lacks MPI_Send: 0 calls.
    assert_eq!(
        (
            send.calls.min,
            send.calls.max,
            send.calls.sum,
            send.calls.mean
        ),
        (0.0, 5.0, 5.0, 2.5)
    );
    assert_eq!((send.calls.min_rank, send.calls.max_rank), (1, 0));
    assert_eq!(send.calls.imbalance(), Some(2.0));
    assert!(send.per_rank[1].is_none());

    let solve = &p.nodes[find(&p, "main/solve")];
    assert_eq!((solve.time.min, solve.time.max), (600.0, 1500.0));
    // Exclusive time: less the children's.
    assert_eq!(
        solve.per_rank[0].as_ref().unwrap().exclusive_time_ns,
        500,
        "600 ns less MPI_Send's 100"
    );
    let main = &p.nodes[find(&p, "main")];
    assert_eq!(main.per_rank[1].as_ref().unwrap().exclusive_time_ns, 450);

    // Deltas: exclusive as given, inclusive over the subtree.
    let Reduced::Delta { sum } = &main.metrics[bytes] else {
        panic!()
    };
    assert_eq!((sum.min, sum.max, sum.sum), (1.0, 3.0, 4.0));
    let Reduced::Delta { sum } = &main.inclusive[bytes] else {
        panic!()
    };
    assert_eq!((sum.min, sum.max, sum.sum), (11.0, 33.0, 44.0));
    assert_eq!((sum.min_rank, sum.max_rank), (0, 1));

    // Samples: statistics over the ranks with samples only.
    let Reduced::Samples {
        count,
        min,
        max,
        mean,
    } = &solve.metrics[queue]
    else {
        panic!()
    };
    assert_eq!((count.min, count.max, count.n), (0.0, 1.0, 2));
    let (min, max, mean) = (min.unwrap(), max.unwrap(), mean.unwrap());
    assert_eq!((min.n, min.min, max.max, mean.mean), (1, 1.0, 1.0, 1.0));
    assert_eq!(min.min_rank, 1);
    let Reduced::Samples {
        count,
        min,
        max,
        mean,
    } = &main.inclusive[queue]
    else {
        panic!()
    };
    assert_eq!(count.sum, 4.0, "1 + 2 on main, 1 in solve");
    assert_eq!(min.unwrap().min, 1.0);
    assert_eq!(max.unwrap().max, 8.0);
    // Rank 0's mean 2, rank 1's (4 + 8 + 1) / 3.
    let mean = mean.unwrap();
    assert_eq!((mean.min, mean.max), (2.0, 13.0 / 3.0));

    let other = &p.nodes[find(&p, "main/other")];
    let Reduced::Samples { mean, .. } = &other.metrics[queue] else {
        panic!()
    };
    assert!(mean.is_none(), "no rank sampled it there");
    assert_eq!(p.hosts, ["host0"]);
    assert!(p.notes.is_empty(), "{:?}", p.notes);
}

#[test]
fn columns_sharing_a_name_across_classes_get_distinct_labels() {
    let r = rank(
        0,
        1,
        vec![
            column(0, "idle", "timer", MetricKind::Delta),
            column(1, "idle", "counter", MetricKind::Delta),
        ],
        vec![node(
            None,
            "main",
            Kind::Region,
            1,
            10,
            vec![delta(1.0), delta(2.0)],
            vec![],
        )],
    );
    let p = reduce(&[r]);
    let labels: Vec<&str> = p.columns.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["idle.timer", "idle.counter"]);
}

#[test]
fn events_are_matched_by_name() {
    let mut a = rank(
        0,
        2,
        vec![],
        vec![node(None, "main", Kind::Region, 1, 1, vec![], vec![1, 2])],
    );
    a.event_types = vec!["x".into(), "y".into()];
    let mut b = rank(
        1,
        2,
        vec![],
        vec![node(None, "main", Kind::Region, 1, 1, vec![], vec![7])],
    );
    b.event_types = vec!["y".into()];
    b.nodes
        .push(node(Some(0), "phase2", Kind::Region, 1, 1, vec![], vec![5]));
    let p = reduce(&[a, b]);
    assert_eq!(p.event_types, ["x", "y"]);
    let main = &p.nodes[0];
    assert_eq!((main.events[0].sum, main.events[1].sum), (1.0, 9.0));
    assert_eq!(main.inclusive_events[1].sum, 14.0);
    assert_eq!(main.inclusive_events[1].max_rank, 1);
}

fn world_elements(r: usize, size: usize, column: usize) -> ElementData {
    // The known pattern: rank r sends r+1 messages to (r+1) mod size.
    let mut values = vec![0.0; size];
    values[(r + 1) % size] = (r + 1) as f64;
    ElementData {
        column,
        object: WORLD.into(),
        values,
    }
}

#[test]
fn comm_matrix_has_one_row_per_sending_rank() {
    let ranks: Vec<RankProfile> = (0..4)
        .map(|r| {
            let mut p = rank(
                r,
                4,
                vec![column(
                    7,
                    "pml_monitoring_messages_count",
                    "size",
                    MetricKind::Samples,
                )],
                vec![node(
                    None,
                    "main",
                    Kind::Region,
                    1,
                    1,
                    vec![samples(&[])],
                    vec![],
                )],
            );
            p.elements.push(world_elements(r, 4, 0));
            p.elements.push(ElementData {
                column: 0,
                object: "comm 3".into(),
                values: vec![9.0; 2],
            });
            p
        })
        .collect();
    let p = reduce(&ranks);
    assert_eq!(p.matrices.len(), 1);
    let m = &p.matrices[0];
    assert_eq!(m.name, "pml_monitoring_messages_count");
    for (r, row) in m.rows.iter().enumerate() {
        for (peer, &v) in row.iter().enumerate() {
            let want = if peer == (r + 1) % 4 {
                (r + 1) as f64
            } else {
                0.0
            };
            assert_eq!(v, want, "row {r} peer {peer}");
        }
    }

    // A rank missing: no matrix, and a note says why.
    let p = reduce(&ranks[..3]);
    assert!(p.matrices.is_empty());
    assert!(
        p.notes.iter().any(|n| n.contains("no matrix")),
        "{:?}",
        p.notes
    );
    // A row of the wrong length: the same.
    let mut bad = ranks.clone();
    bad[2].elements[0].values.pop();
    assert!(reduce(&bad).matrices.is_empty());
}

#[test]
fn skipped_variables_are_grouped_and_counted() {
    let mut a = rank(
        0,
        2,
        vec![],
        vec![node(None, "main", Kind::Region, 1, 1, vec![], vec![])],
    );
    let mut b = a.clone();
    b.rank = 1;
    let hole = SkippedData {
        index: 4,
        name: None,
        reason: "no information (a hole)".into(),
    };
    a.skipped.push(hole.clone());
    b.skipped.push(hole);
    b.skipped.push(SkippedData {
        index: 5,
        name: Some("x".into()),
        reason: "filtered out by name".into(),
    });
    let p = reduce(&[a, b]);
    assert_eq!(p.skipped.len(), 2);
    assert_eq!(p.skipped[0].ranks, [0, 1]);
    assert_eq!(p.skipped[1].ranks, [1]);
    assert_eq!((p.pvars.min, p.pvars.max), (1.0, 2.0));
}

/// Holes are shown as the index ranges they are, with what a hole is, not as `#1, #2, ...`.
#[test]
fn holes_are_shown_as_index_ranges() {
    let mut a = rank(
        0,
        1,
        vec![],
        vec![node(None, "main", Kind::Region, 1, 1, vec![], vec![])],
    );
    for index in [1, 2, 3, 4, 7, 9, 10] {
        a.skipped.push(SkippedData {
            index,
            name: None,
            reason: "no information (a hole): MPI_T_ERR_INVALID".into(),
        });
    }
    let text = mpit_prof::write::text::render(&reduce(&[a]));
    let line = text
        .lines()
        .find(|l| l.contains("a hole"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("7 (all ranks): no information (a hole): MPI_T_ERR_INVALID: pvar indices 1-4,7,9-10 (counted, but with no variable there)"),
        "{line}"
    );
}

/// On Open MPI the holes are explained once (the components it closed, the monitoring ones);
/// elsewhere that line is not there.
#[test]
fn open_mpi_holes_are_explained_once() {
    let with = |library: &str, holes: &[usize]| {
        let mut a = rank(
            0,
            1,
            vec![],
            vec![node(None, "main", Kind::Region, 1, 1, vec![], vec![])],
        );
        a.library = library.into();
        for &index in holes {
            a.skipped.push(SkippedData {
                index,
                name: None,
                reason: "no information (a hole): MPI_T_ERR_INVALID".into(),
            });
        }
        mpit_prof::write::text::render(&reduce(&[a]))
    };
    let note = mpit_prof::write::text::OPEN_MPI_HOLES;
    let text = with("Open MPI v4.1.4, package: Debian OpenMPI", &[1, 2, 18, 21]);
    assert_eq!(text.matches(note).count(), 1, "{text}");
    assert!(note.contains("coll_monitoring_*") && note.contains("OMPI_MCA_pml_monitoring_enable"));
    assert!(!with("MPICH Version: 4.0.2", &[1, 2]).contains(note));
    assert!(!with("Open MPI v4.1.4", &[]).contains(note));
}

/// A note several ranks make is one line naming them, not one line per rank.
#[test]
fn a_note_of_every_rank_is_one_line() {
    let base = rank(
        0,
        3,
        vec![],
        vec![node(None, "main", Kind::Region, 1, 1, vec![], vec![])],
    );
    let ranks: Vec<RankProfile> = (0..3)
        .map(|r| {
            let mut p = base.clone();
            p.rank = r;
            p.notes
                .push("x: 2 read(s) failed on 3 objects (comm#5, comm#6, comm#7): why".into());
            if r != 1 {
                p.notes.push("y: 1 read(s) failed: why not".into());
            }
            p
        })
        .collect();
    let p = reduce(&ranks);
    let x: Vec<&String> = p.notes.iter().filter(|n| n.contains("x: ")).collect();
    assert_eq!(
        x,
        ["every rank: x: 2 read(s) failed on 3 objects (comm#5, comm#6, comm#7): why"]
    );
    let y: Vec<&String> = p.notes.iter().filter(|n| n.contains("y: ")).collect();
    assert_eq!(y, ["ranks 0,2: y: 1 read(s) failed: why not"]);
}

#[test]
fn no_ranks_and_no_pvars_reduce_to_something_printable() {
    let p = reduce(&[]);
    assert!(p.nodes.is_empty());
    let text = mpit_prof::write::text::render(&p);
    assert!(text.contains("0 exist"), "{text}");
    let one = rank(
        0,
        1,
        vec![],
        vec![node(None, "main", Kind::Region, 1, 5, vec![], vec![])],
    );
    let text = mpit_prof::write::text::render(&reduce(&[one]));
    assert!(
        text.contains("this MPI exposes no performance variables"),
        "{text}"
    );
}

// ---- properties ----

const NAMES: [&str; 5] = ["a", "b", "c", "MPI_Send", "MPI_Recv"];

fn arb_metric(kind: MetricKind) -> BoxedStrategy<MetricData> {
    match kind {
        MetricKind::Delta => (0u32..1000).prop_map(|s| delta(s as f64)).boxed(),
        MetricKind::Watermark => (0u64..5, 0u32..100, proptest::option::of(0u32..50))
            .prop_map(|(changes, amount, last)| MetricData::Watermark {
                changes,
                amount: amount as f64,
                last: last.map(f64::from),
            })
            .boxed(),
        MetricKind::Samples => proptest::collection::vec(0u32..100, 0..4)
            .prop_map(|v| samples(&v.into_iter().map(f64::from).collect::<Vec<_>>()))
            .boxed(),
        MetricKind::Raw => proptest::option::of(0u32..9)
            .prop_map(|l| MetricData::Raw {
                last: l.map(f64::from),
            })
            .boxed(),
    }
}

/// The pool of columns a rank takes a subset of, in any order.
fn pool() -> Vec<ColumnMeta> {
    vec![
        column(0, "sent", "counter", MetricKind::Delta),
        column(1, "hwm", "highwatermark", MetricKind::Watermark),
        column(2, "len", "level", MetricKind::Samples),
        column(3, "st", "state", MetricKind::Raw),
    ]
}

fn arb_rank(r: usize, size: usize) -> impl Strategy<Value = RankProfile> {
    (
        Just(pool()).prop_shuffle(),
        0usize..=4,
        proptest::collection::vec((any::<prop::sample::Index>(), 0usize..NAMES.len()), 0..8),
        0usize..=2,
    )
        .prop_flat_map(move |(cols, ncols, shape, nevents)| {
            let cols: Vec<ColumnMeta> = cols.into_iter().take(ncols).collect();
            let n = shape.len() + 1;
            let per_node = (
                cols.iter()
                    .map(|c| arb_metric(c.metric))
                    .collect::<Vec<_>>(),
                0u64..20,
                0u64..1_000_000,
                proptest::collection::vec(0u64..5, nevents),
            );
            (
                Just(cols.clone()),
                Just(shape),
                proptest::collection::vec(per_node, n),
                Just(nevents),
            )
        })
        .prop_map(move |(cols, shape, per_node, nevents)| {
            let mut nodes = Vec::new();
            for (i, (metrics, calls, time, events)) in per_node.into_iter().enumerate() {
                if i == 0 {
                    nodes.push(node(None, "main", Kind::Region, 1, time, metrics, events));
                } else {
                    let (parent, name) = shape[i - 1];
                    let name = NAMES[name];
                    let kind = if name.starts_with("MPI_") {
                        Kind::Function
                    } else {
                        Kind::Region
                    };
                    nodes.push(node(
                        Some(parent.index(i)),
                        name,
                        kind,
                        calls,
                        time,
                        metrics,
                        events,
                    ));
                }
            }
            let mut p = rank(r, size, cols, nodes);
            p.event_types = ["e0", "e1"][..nevents]
                .iter()
                .map(|s| s.to_string())
                .collect();
            p
        })
}

fn arb_job() -> impl Strategy<Value = Vec<RankProfile>> {
    (1usize..5).prop_flat_map(|size| (0..size).map(|r| arb_rank(r, size)).collect::<Vec<_>>())
}

/// The rules every statistic keeps; `value(rank)` is what that rank contributed, if any.
fn check_stat(s: &Stat, value: impl Fn(usize) -> Option<f64>, what: &str) {
    let eps = 1e-9 * s.sum.abs().max(1.0);
    assert!(s.min <= s.mean && s.mean <= s.max, "{what}: {s:?}");
    assert!((s.sum - s.mean * s.n as f64).abs() <= eps, "{what}: {s:?}");
    if s.n > 0 {
        assert_eq!(value(s.min_rank), Some(s.min), "{what}: argmin {s:?}");
        assert_eq!(value(s.max_rank), Some(s.max), "{what}: argmax {s:?}");
    }
    if let Some(i) = s.imbalance() {
        assert!(i >= 1.0 - 1e-12, "{what}: imbalance {i}");
    }
}

/// What rank `r` contributed to a statistic where a rank lacking the node counts as 0.
fn zf<'a>(
    values: &'a [Option<NodeValues>],
    f: impl Fn(&NodeValues) -> f64 + 'a,
) -> impl Fn(usize) -> Option<f64> + 'a {
    move |r| Some(values[r].as_ref().map_or(0.0, &f))
}

/// A node's exclusive metric on one rank, `None` if the rank lacks the node.
fn on(values: &[Option<NodeValues>], r: usize) -> Option<&NodeValues> {
    values[r].as_ref()
}

proptest! {
    #[test]
    fn stat_of_keeps_its_rules(values in proptest::collection::vec(
        // Small whole numbers make ties.
        prop_oneof![-1e6f64..1e6, (0u8..4).prop_map(f64::from)],
        0..20,
    )) {
        let s = Stat::of(values.iter().copied().enumerate());
        prop_assert_eq!(s.is_none(), values.is_empty());
        if let Some(s) = s {
            prop_assert_eq!(s.n, values.len());
            check_stat(&s, |r| values.get(r).copied(), "of");
            prop_assert!(values.iter().all(|&v| s.min <= v && v <= s.max));
            // Ties go to the lowest rank.
            prop_assert_eq!(values.iter().position(|&v| v == s.min), Some(s.min_rank));
            prop_assert_eq!(values.iter().position(|&v| v == s.max), Some(s.max_rank));
        }
    }

    #[test]
    fn reduce_keeps_its_rules(job in arb_job()) {
        let p = reduce(&job);
        let size = job.len();
        prop_assert_eq!(p.ranks.len(), size);
        // No more nodes than the ranks have in all; each node's parent comes before it.
        prop_assert!(p.nodes.len() <= job.iter().map(|r| r.nodes.len()).sum::<usize>());
        for (i, n) in p.nodes.iter().enumerate() {
            prop_assert!(n.parent.is_none_or(|q| q < i));
            prop_assert_eq!(n.per_rank.len(), size);
            prop_assert!(n.per_rank.iter().any(Option::is_some), "a node no rank has");
            check_stat(&n.calls, zf(&n.per_rank, |v| v.calls as f64), "calls");
            prop_assert_eq!(n.calls.n, size);
            check_stat(&n.time, zf(&n.per_rank, |v| v.time_ns as f64), "time");
            check_stat(&n.exclusive_time, zf(&n.per_rank, |v| v.exclusive_time_ns as f64), "excl");
            prop_assert!(n.exclusive_time.max <= n.time.max);
            for (e, s) in n.events.iter().enumerate() {
                check_stat(s, zf(&n.per_rank, |v| v.events[e] as f64), "events");
            }
            for (c, m) in n.metrics.iter().enumerate() {
                match m {
                    Reduced::Delta { sum } => check_stat(
                        sum,
                        zf(&n.per_rank, |v| match v.metrics[c] {
                            MetricData::Delta { sum } => sum,
                            _ => f64::NAN,
                        }),
                        "delta",
                    ),
                    Reduced::Samples { count, min, .. } => {
                        check_stat(count, zf(&n.per_rank, |v| match v.metrics[c] {
                            MetricData::Samples { count, .. } => count as f64,
                            _ => f64::NAN,
                        }), "count");
                        if let Some(min) = min {
                            check_stat(min, |r| match on(&n.per_rank, r)?.metrics[c] {
                                MetricData::Samples { count, min, .. } if count > 0 => Some(min),
                                _ => None,
                            }, "samples min");
                            prop_assert!(min.n <= size);
                        }
                    }
                    Reduced::Watermark { changes, .. } => check_stat(
                        changes,
                        zf(&n.per_rank, |v| match v.metrics[c] {
                            MetricData::Watermark { changes, .. } => changes as f64,
                            _ => f64::NAN,
                        }),
                        "changes",
                    ),
                    Reduced::Raw { last } => {
                        if let Some(last) = last {
                            check_stat(last, |r| match on(&n.per_rank, r)?.metrics[c] {
                                MetricData::Raw { last } => last,
                                _ => None,
                            }, "raw");
                        }
                    }
                }
            }
        }
        // Inclusive deltas of the root: every exclusive delta of the rank, summed.
        for (ri, r) in p.ranks.iter().enumerate() {
            for (c, col) in p.columns.iter().enumerate() {
                if col.meta.metric != MetricKind::Delta {
                    continue;
                }
                let mut all = 0.0;
                for n in &p.nodes {
                    if let Some(MetricData::Delta { sum }) = n.per_rank[ri].as_ref().map(|v| v.metrics[c]) {
                        all += sum;
                    }
                }
                let root = p.nodes[0].per_rank[ri].as_ref().unwrap();
                let MetricData::Delta { sum } = root.inclusive[c] else { unreachable!() };
                prop_assert_eq!(sum, all, "rank {}", r.rank);
            }
        }
        // Renders without panicking.
        let _ = mpit_prof::write::text::render(&p);
        let _ = mpit_prof::write::caliper::render(&p);
    }
}

// ---- the tree-shaped reduction (mpit_prof::partial) ----

/// A job of up to 9 ranks with what the tree must also carry: fractional deltas (whose sums
/// round differently in another order), elements bound to `MPI_COMM_WORLD` (matrices, or
/// their note), skipped variables and notes.
fn arb_tree_job() -> impl Strategy<Value = Vec<RankProfile>> {
    (1usize..10)
        .prop_flat_map(|size| {
            (0..size)
                .map(|r| {
                    (
                        arb_rank(r, size),
                        0u8..4,
                        proptest::collection::vec(0usize..3, 0..3),
                        proptest::collection::vec(0usize..2, 0..2),
                    )
                })
                .collect::<Vec<_>>()
        })
        .prop_map(|ranks| {
            ranks
                .into_iter()
                .map(|(mut p, world, skips, notes)| {
                    for n in &mut p.nodes {
                        for m in &mut n.metrics {
                            if let MetricData::Delta { sum } = m {
                                *sum = *sum / 7.0 + 0.1;
                            }
                        }
                    }
                    // 0: none; 1: a row of the job's size; 2: a row too short; 3: of column 1.
                    if world > 0 && !p.columns.is_empty() {
                        let column = usize::from(world == 3).min(p.columns.len() - 1);
                        let mut e = world_elements(p.rank, p.size, column);
                        if world == 2 {
                            e.values.pop();
                        }
                        p.elements.push(e);
                    }
                    p.skipped = skips
                        .into_iter()
                        .map(|i| SkippedData {
                            index: 10 + i,
                            name: Some(format!("v{i}")),
                            reason: ["filtered", "refused"][i % 2].into(),
                        })
                        .collect();
                    p.notes = notes.into_iter().map(|i| format!("note {i}")).collect();
                    p
                })
                .collect()
        })
}

/// Merges `parts` (consecutive ranks, in order) two at a time, each split where `cuts` says.
fn merge_in_shape<T: Clone>(parts: &[T], cuts: &[usize], merge: &dyn Fn(T, &T) -> T) -> T {
    if parts.len() == 1 {
        return parts[0].clone();
    }
    let (cut, rest) = cuts.split_first().map_or((0, &[][..]), |(c, r)| (*c, r));
    let k = 1 + cut % (parts.len() - 1);
    let left = merge_in_shape(&parts[..k], rest, merge);
    let right = merge_in_shape(&parts[k..], rest, merge);
    merge(left, &right)
}

/// Merges `parts` as `tree::reduce` does on as many ranks: each rank merges its children's
/// subtrees, nearest first, into its own.
fn merge_binomial<T: Clone>(parts: &[T], rank: usize, merge: &dyn Fn(T, &T) -> T) -> T {
    let limit = if rank == 0 {
        usize::MAX
    } else {
        rank & rank.wrapping_neg()
    };
    let mut acc = parts[rank].clone();
    let mut step = 1;
    while step < limit && rank + step < parts.len() {
        acc = merge(acc, &merge_binomial(parts, rank + step, merge));
        step *= 2;
    }
    acc
}

/// Through the bytes the tree sends (`serde_json`, floats as their bits).
fn wire<T: serde::Serialize + serde::de::DeserializeOwned>(v: T) -> T {
    serde_json::from_slice(&serde_json::to_vec(&v).unwrap()).unwrap()
}

/// Every statistic of `p`, in one order.
fn stats_of(p: &mut Profile) -> Vec<&mut Stat> {
    let mut out: Vec<&mut Stat> = vec![&mut p.duration, &mut p.pvars];
    for n in &mut p.nodes {
        let n = &mut n.stats;
        out.extend([&mut n.calls, &mut n.time, &mut n.exclusive_time]);
        out.extend(n.events.iter_mut().chain(n.inclusive_events.iter_mut()));
        for m in n.metrics.iter_mut().chain(n.inclusive.iter_mut()) {
            match m {
                Reduced::Delta { sum } => out.push(sum),
                Reduced::Watermark {
                    changes,
                    amount,
                    last,
                } => out.extend(
                    [Some(changes), Some(amount), last.as_mut()]
                        .into_iter()
                        .flatten(),
                ),
                Reduced::Samples {
                    count,
                    min,
                    max,
                    mean,
                } => out.extend(
                    [Some(count), min.as_mut(), max.as_mut(), mean.as_mut()]
                        .into_iter()
                        .flatten(),
                ),
                Reduced::Raw { last } => out.extend(last.as_mut()),
            }
        }
    }
    out
}

/// Where `tree`'s sums and means are within rounding of `want`'s (relative 1e-12: the sums
/// here are of at most 9 ranks' values), takes `want`'s: the one difference adding in another
/// order makes. Everything else must then be equal.
fn forgive_rounding(tree: &mut Profile, want: &mut Profile) {
    let close = |a: f64, b: f64| {
        a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
    };
    for (t, w) in stats_of(tree).into_iter().zip(stats_of(want)) {
        if close(t.sum, w.sum) && close(t.mean, w.mean) {
            t.sum = w.sum;
            t.mean = w.mean;
        }
    }
}

/// A shape of merges: the parts, in rank order, merged into one with the merge given.
type Shape<'a, T> = &'a dyn Fn(&[T], &dyn Fn(T, &T) -> T) -> T;

/// The tree's path over `job`: tables merged in `shape`, statistics merged in `shape`, each
/// part through the wire, then the ranks added in order (`ranks.json` into `dir`).
fn tree_path(
    job: &[RankProfile],
    shape: Shape<'_, Partial>,
    tables_shape: Shape<'_, Tables>,
) -> Profile {
    let tables: Vec<Tables> = job.iter().map(|r| wire(Tables::of(r))).collect();
    let tables = wire(tables_shape(&tables, &|a, b| wire(a.merge(b))).labelled());
    let parts: Vec<Partial> = job.iter().map(|r| wire(Partial::of(&tables, r))).collect();
    let partial = shape(&parts, &|a, b| wire(a.merge(b)));
    assert_eq!(partial.ranks(), job.len(), "the partial's ranks");
    let mut assembly = Assembly::new(tables, partial, true);
    for r in job {
        assembly.add(r);
    }
    assembly.finish()
}

/// `profile.json` as the end of a run writes it: each rank's rows as it is added.
fn streamed_caliper(job: &[RankProfile]) -> String {
    let tables: Vec<Tables> = job.iter().map(Tables::of).collect();
    let tables = merge_binomial(&tables, 0, &|a, b| a.merge(b)).labelled();
    let parts: Vec<Partial> = job.iter().map(|r| Partial::of(&tables, r)).collect();
    let mut assembly = Assembly::new(tables, merge_binomial(&parts, 0, &|a, b| a.merge(b)), false);
    let mut w = mpit_prof::write::caliper::Writer::new(Vec::new(), assembly.profile()).unwrap();
    for r in job {
        let values = assembly.add(r);
        w.rank(assembly.profile(), r.rank, &|n| values[n].as_ref())
            .unwrap();
    }
    let p = assembly.finish();
    assert!(
        p.nodes.iter().all(|n| n.per_rank.is_empty()),
        "kept per-rank values"
    );
    String::from_utf8(w.finish(&p).unwrap()).unwrap()
}

proptest! {
    #[test]
    fn tree_merge_is_reduce(
        job in arb_tree_job(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        tcuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut want = reduce(&job);
        let ids: Vec<usize> = want.ranks.iter().map(|r| r.rank).collect();
        prop_assert_eq!(&want.rank_ids, &ids);
        want.ranks.clear();
        let shapes: [(&str, Profile); 2] = [
            ("any shape", tree_path(
                &job,
                &|p, m| merge_in_shape(p, &cuts, m),
                &|t, m| merge_in_shape(t, &tcuts, m),
            )),
            ("binomial", tree_path(
                &job,
                &|p, m| merge_binomial(p, 0, m),
                &|t, m| merge_binomial(t, 0, m),
            )),
        ];
        for (what, mut got) in shapes {
            let mut w = want.clone();
            forgive_rounding(&mut got, &mut w);
            prop_assert_eq!(got, w, "{}", what);
        }
        // profile.json streamed one rank at a time from the profile without per-rank values
        // is the whole one's text (its rows are the ranks' own values: no sum in them).
        prop_assert_eq!(streamed_caliper(&job), mpit_prof::write::caliper::render(&want));
    }

    #[test]
    fn ranks_file_is_ranks_json(job in arb_tree_job()) {
        static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mpit-prof-ranks-file-{}-{}",
            std::process::id(),
            RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut file = RanksFile::create(&dir).unwrap();
        for r in &job {
            file.push(r).unwrap();
        }
        file.finish().unwrap();
        let got = std::fs::read_to_string(dir.join("ranks.json")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let want = format!("{}\n", serde_json::to_string_pretty(&job).unwrap());
        prop_assert_eq!(got, want);
    }
}

#[test]
fn ranks_file_of_no_rank_is_an_empty_list() {
    let dir =
        std::env::temp_dir().join(format!("mpit-prof-ranks-file-{}-none", std::process::id()));
    RanksFile::create(&dir).unwrap().finish().unwrap();
    let got = std::fs::read_to_string(dir.join("ranks.json")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        got,
        format!(
            "{}\n",
            serde_json::to_string_pretty(&Vec::<RankProfile>::new()).unwrap()
        )
    );
}
