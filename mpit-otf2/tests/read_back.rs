//! Archives written by `SerialArchive` and `Archive`, read back by OTF2's own readers:
//! `otf2-print` (Debian's `otf2-tools`), the Python reader (`python3-otf2`), and this
//! crate's `Summary` (OTF2's reader API).

use std::process::Command;

use mpit_otf2::{Error, Paradigm, RecordKind, RegionRole, SerialArchive, Summary};

/// The summary of `dir/traces.otf2`, which must read.
fn summary(dir: &std::path::Path) -> Summary {
    Summary::read(&dir.join("traces.otf2")).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Ticks per second, the first tick and the length.
fn clock(s: &Summary) -> (u64, u64, u64) {
    (s.resolution, s.global_offset, s.trace_length)
}

/// A location's non-zero counts, by kind.
fn kinds(l: &mpit_otf2::LocationSummary) -> Vec<(RecordKind, u64)> {
    RecordKind::ALL
        .iter()
        .map(|&k| (k, l.count(k)))
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// `otf2-print ARGS dir/traces.otf2`'s standard output, asserting it succeeded.
fn otf2_print(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("otf2-print")
        .args(args)
        .arg(dir.join("traces.otf2"))
        .output()
        .expect("otf2-print (Debian otf2-tools) runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn archive(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mpit-otf2-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut a = SerialArchive::create(&dir, "traces").unwrap();
    let main = a
        .region("main", RegionRole::Function, Paradigm::User)
        .unwrap();
    let send = a
        .region("MPI_Send", RegionRole::PointToPoint, Paradigm::Mpi)
        .unwrap();
    let r0 = a.location("Master thread", "MPI Rank 0").unwrap();
    let r1 = a.location("Master thread", "MPI Rank 1").unwrap();
    for (loc, t0) in [(r0, 100), (r1, 105)] {
        a.enter(loc, t0, main).unwrap();
        for i in 0..3 {
            a.enter(loc, t0 + 10 + 10 * i, send).unwrap();
            a.leave(loc, t0 + 15 + 10 * i, send).unwrap();
        }
        a.leave(loc, t0 + 50, main).unwrap();
    }
    a.close(1_000_000_000, 100, 55).unwrap();
    dir
}

#[test]
fn otf2_print_reads_every_record() {
    let dir = archive("print");
    let text = otf2_print(&dir, &[]);
    let enters = text.lines().filter(|l| l.starts_with("ENTER")).count();
    let leaves = text.lines().filter(|l| l.starts_with("LEAVE")).count();
    assert_eq!((enters, leaves), (8, 8), "{text}");
    assert!(text.contains("\"MPI_Send\""), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_summary_counts_every_record_of_a_serial_archive() {
    let dir = archive("summary");
    let s = summary(&dir);
    assert_eq!(clock(&s), (1_000_000_000, 100, 55));
    assert!(s.properties.is_empty(), "{:?}", s.properties);
    assert_eq!(s.regions, ["main", "MPI_Send"]);
    assert_eq!(s.locations.len(), 2);
    for (i, l) in s.locations.iter().enumerate() {
        let t0 = 100 + 5 * i as u64;
        assert_eq!(l.id.0, i as u64);
        assert_eq!(l.name, "Master thread");
        assert_eq!(l.group, format!("MPI Rank {i}"));
        assert_eq!(
            kinds(l),
            [(RecordKind::Enter, 4), (RecordKind::Leave, 4)],
            "{l:?}"
        );
        assert_eq!((l.first, l.last), (Some(t0), Some(t0 + 50)));
        assert_eq!(l.span(), 50);
        assert!(l.metrics.is_empty());
    }
    assert_eq!(s.seconds(s.locations[0].span()), 50e-9);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_python_reader_sees_the_locations_and_the_regions() {
    let dir = archive("python");
    let script = r#"
import sys, collections, otf2
with otf2.reader.open(sys.argv[1]) as trace:
    groups = sorted(g.name for g in trace.definitions.location_groups)
    counts = collections.Counter()
    for loc, ev in trace.events:
        counts[(loc.group.name, type(ev).__name__, ev.region.name)] += 1
    print(groups)
    for k in sorted(counts): print(k, counts[k])
"#;
    // Debian's module is in /usr/lib/python3/dist-packages, seen by /usr/bin/python3 only.
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(dir.join("traces.otf2"))
        .output()
        .expect("/usr/bin/python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("['MPI Rank 0', 'MPI Rank 1']"), "{text}");
    for rank in 0..2 {
        for (kind, region, n) in [("Enter", "MPI_Send", 3), ("Leave", "main", 1)] {
            let line = format!("('MPI Rank {rank}', '{kind}', '{region}') {n}");
            assert!(text.contains(&line), "{line} in\n{text}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Every record kind mpit-prof writes, with local ids that the mapping tables translate:
/// regions 0 and 1 are global 1 and 0, the one communicator and metric class local 0 are
/// global 0; a property, clock offsets, a metric class of two members.
fn mpi_archive(tag: &str) -> std::path::PathBuf {
    use mpit_otf2::{
        Archive, CollectiveOp, GroupType, LocationRef, Mapping, MetricMode, MetricValue, Msg,
        Options, Serial, ValueType,
    };
    let dir = std::env::temp_dir().join(format!("mpit-otf2-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut a = Archive::create(&dir, "traces", Serial, Options::default()).unwrap();
    assert!(a.is_master());
    let loc = LocationRef(0);
    let (send, main) = (0, 1); // local ids
    let m = Msg {
        peer: 0,
        comm: 0,
        tag: 7,
        bytes: 1024,
    };
    a.enter(loc, 100, main).unwrap();
    a.enter(loc, 110, send).unwrap();
    a.mpi_send(loc, 111, m).unwrap();
    a.leave(loc, 120, send).unwrap();
    a.mpi_isend(loc, 121, m, 5).unwrap();
    a.mpi_isend_complete(loc, 122, 5).unwrap();
    a.mpi_irecv_request(loc, 123, 6).unwrap();
    a.mpi_irecv(loc, 124, m, 6).unwrap();
    a.mpi_recv(loc, 125, m).unwrap();
    a.mpi_request_cancelled(loc, 126, 9).unwrap();
    a.collective_begin(loc, 127).unwrap();
    a.collective_end(loc, 128, CollectiveOp::Bcast, 0, Some(0), 8, 0)
        .unwrap();
    a.metric(loc, 129, 0, &[MetricValue::Uint(3), MetricValue::Int(-2)])
        .unwrap();
    a.leave(loc, 150, main).unwrap();
    a.set_property("MPIT_PROF::MPI_T_EVENTS", "supported")
        .unwrap();
    let counts = a.close_events().unwrap();
    assert_eq!(counts, vec![(loc, 14)]);
    a.write_local(
        loc,
        &[
            (Mapping::Region, vec![1, 0]),
            (Mapping::Comm, vec![0]),
            (Mapping::Metric, vec![0]),
        ],
        &[(100, 0, 0.0), (150, 0, 0.0)],
    )
    .unwrap();
    let mut g = a.globals().unwrap();
    g.clock(1_000_000_000, 100, 50).unwrap();
    g.region(0, "main", RegionRole::Function, Paradigm::User)
        .unwrap();
    g.region(1, "MPI_Send", RegionRole::PointToPoint, Paradigm::Mpi)
        .unwrap();
    g.system_tree_node(0, "machine", "machine", None).unwrap();
    g.system_tree_node(1, "node0", "node", Some(0)).unwrap();
    g.location_group(0, "MPI Rank 0", 1).unwrap();
    g.location(loc, "Master thread", 14, 0).unwrap();
    g.group(0, "", GroupType::CommLocations, &[0]).unwrap();
    g.group(1, "", GroupType::CommGroup, &[0]).unwrap();
    g.comm(0, "MPI_COMM_WORLD", 1).unwrap();
    g.metric_member(
        0,
        "queue",
        "a level",
        "#",
        ValueType::Uint,
        MetricMode::AbsolutePoint,
    )
    .unwrap();
    g.metric_member(
        1,
        "delta",
        "a change",
        "#",
        ValueType::Int,
        MetricMode::RelativeLast,
    )
    .unwrap();
    g.metric_class(0, &[0, 1], false).unwrap();
    a.close().unwrap();
    dir
}

#[test]
fn otf2_print_reads_the_mpi_and_metric_records_through_the_mappings() {
    let dir = mpi_archive("mpi-print");
    let text = otf2_print(&dir, &[]);
    for kind in [
        "MPI_SEND",
        "MPI_ISEND",
        "MPI_ISEND_COMPLETE",
        "MPI_IRECV_REQUEST",
        "MPI_IRECV",
        "MPI_RECV",
        "MPI_REQUEST_CANCELLED",
        "MPI_COLLECTIVE_BEGIN",
        "MPI_COLLECTIVE_END",
        "METRIC",
    ] {
        let n = text
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(kind))
            .count();
        assert_eq!(n, 1, "{kind} in\n{text}");
    }
    // Local region 1 is "main" through the mapping table: the first ENTER names it.
    let first = text.lines().find(|l| l.starts_with("ENTER")).unwrap();
    assert!(first.contains("\"main\""), "{first}");
    // The anchor file's properties and the location's clock offsets.
    let text = otf2_print(&dir, &["-I"]);
    assert!(text.contains("MPIT_PROF::MPI_T_EVENTS"), "{text}");
    assert!(text.contains("supported"), "{text}");
    let text = otf2_print(&dir, &["-C"]);
    let offsets = text
        .lines()
        .filter(|l| l.starts_with("CLOCK_OFFSET"))
        .count();
    assert_eq!(offsets, 2, "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Every kind once (Enter and Leave twice), the metric class by its members' names, the
/// property: through the mapping tables of the local definitions.
#[test]
fn the_summary_counts_the_mpi_and_metric_records_through_the_mappings() {
    let dir = mpi_archive("mpi-summary");
    let s = summary(&dir);
    assert_eq!(clock(&s), (1_000_000_000, 100, 50));
    assert_eq!(
        s.properties
            .get("MPIT_PROF::MPI_T_EVENTS")
            .map(String::as_str),
        Some("supported"),
        "{:?}",
        s.properties
    );
    assert_eq!(s.locations.len(), 1);
    let l = &s.locations[0];
    assert_eq!(
        (l.name.as_str(), l.group.as_str()),
        ("Master thread", "MPI Rank 0")
    );
    let want: Vec<(RecordKind, u64)> = RecordKind::ALL
        .iter()
        .filter(|k| !matches!(k, RecordKind::BufferFlush | RecordKind::Other))
        .map(|&k| {
            (
                k,
                if matches!(k, RecordKind::Enter | RecordKind::Leave) {
                    2
                } else {
                    1
                },
            )
        })
        .collect();
    assert_eq!(kinds(l), want);
    assert_eq!(l.records(), 14);
    assert_eq!(
        l.metrics.iter().collect::<Vec<_>>(),
        [(&"queue,delta".to_string(), &1)]
    );
    assert_eq!((l.first, l.last), (Some(100), Some(150)));
    std::fs::remove_dir_all(&dir).ok();
}

/// The location's mapping table of metric classes swaps them (local 0 is global 1): the
/// summary names each event by its global class, which only the local definitions tell.
#[test]
fn the_mapping_tables_apply_to_the_metric_events() {
    use mpit_otf2::{
        Archive, LocationRef, Mapping, MetricMode, MetricValue, Options, Serial, ValueType,
    };
    let dir = std::env::temp_dir().join(format!("mpit-otf2-mapped-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut a = Archive::create(&dir, "traces", Serial, Options::default()).unwrap();
    let loc = LocationRef(0);
    for (t, local) in [(10, 0), (11, 0), (12, 1)] {
        a.metric(loc, t, local, &[MetricValue::Uint(t)]).unwrap();
    }
    a.close_events().unwrap();
    a.write_local(loc, &[(Mapping::Metric, vec![1, 0])], &[])
        .unwrap();
    let mut g = a.globals().unwrap();
    g.clock(1_000, 10, 2).unwrap();
    g.system_tree_node(0, "machine", "machine", None).unwrap();
    g.location_group(0, "MPI Rank 0", 0).unwrap();
    g.location(loc, "Master thread", 3, 0).unwrap();
    for (id, name) in [(0, "alpha[0]"), (1, "beta[0]")] {
        g.metric_member(
            id,
            name,
            "",
            "#",
            ValueType::Uint,
            MetricMode::AbsolutePoint,
        )
        .unwrap();
        g.metric_class(id, &[id], false).unwrap();
    }
    a.close().unwrap();
    let s = summary(&dir);
    let l = &s.locations[0];
    assert_eq!(l.count(RecordKind::Metric), 3);
    let by_class: Vec<(&str, u64)> = l.metrics.iter().map(|(k, &n)| (k.as_str(), n)).collect();
    assert_eq!(by_class, [("alpha", 1), ("beta", 2)]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A missing anchor file, garbage in its place, a truncated one, a truncated event file: an
/// `Err` each, never a panic.
#[test]
fn an_unreadable_archive_is_an_error() {
    let dir = mpi_archive("mpi-broken");
    let anchor = dir.join("traces.otf2");
    let missing = Summary::read(&dir.join("nothing.otf2"));
    assert!(matches!(missing, Err(Error::Io { .. })), "{missing:?}");
    assert!(Summary::read(&dir).is_err(), "a directory");

    let good = std::fs::read(&anchor).unwrap();
    std::fs::write(&anchor, &good[..good.len() / 2]).unwrap();
    let truncated = Summary::read(&anchor);
    assert!(
        matches!(truncated, Err(Error::Otf2 { .. })),
        "{truncated:?}"
    );
    std::fs::write(&anchor, b"not an OTF2 anchor file\n\0\xff\xfe garbage").unwrap();
    let garbage = Summary::read(&anchor);
    assert!(matches!(garbage, Err(Error::Otf2 { .. })), "{garbage:?}");
    std::fs::write(&anchor, b"").unwrap();
    assert!(Summary::read(&anchor).is_err(), "an empty anchor file");

    std::fs::write(&anchor, &good).unwrap();
    summary(&dir);
    let events = dir.join("traces/0.evt");
    let bytes = std::fs::read(&events).unwrap();
    std::fs::write(&events, &bytes[..bytes.len() / 2]).unwrap();
    let cut = Summary::read(&anchor);
    assert!(cut.is_err(), "{cut:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_python_reader_sees_messages_and_metrics_through_the_mappings() {
    let dir = mpi_archive("mpi-python");
    let script = r#"
import sys, otf2
with otf2.reader.open(sys.argv[1]) as trace:
    for loc, ev in trace.events:
        name = type(ev).__name__
        if name in ("Enter", "Leave"):
            print(name, ev.time, ev.region.name)
        elif name in ("MpiSend", "MpiRecv"):
            print(name, ev.time, ev.communicator.name, ev.msg_tag, ev.msg_length)
        elif name == "Metric":
            print(name, ev.time, [m.name for m in ev.metric.members], list(ev.values))
        elif name == "MpiCollectiveEnd":
            print(name, ev.time, ev.collective_op, ev.communicator.name, ev.root, ev.size_sent)
        else:
            print(name, ev.time)
"#;
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(dir.join("traces.otf2"))
        .output()
        .expect("/usr/bin/python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "Enter 100 main",
        "Enter 110 MPI_Send",
        "MpiSend 111 MPI_COMM_WORLD 7 1024",
        "MpiRecv 125 MPI_COMM_WORLD 7 1024",
        "Metric 129 ['queue', 'delta'] [3, -2]",
        "Leave 150 main",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    assert!(
        text.contains("MpiCollectiveEnd 128 CollectiveOp.BCAST MPI_COMM_WORLD 0 8"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Past the memory bound a full buffer goes to its file before the buffer grows: the events
/// of a trace many times the bound are all there.
#[test]
fn a_trace_larger_than_the_memory_bound_keeps_every_event() {
    use mpit_otf2::{Archive, LocationRef, Options, Serial};
    let dir = std::env::temp_dir().join(format!("mpit-otf2-bound-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = Options {
        event_chunk: 256 << 10,
        def_chunk: 256 << 10,
        memory_limit: 1 << 20,
        clock: Some(|| 7),
    };
    let mut a = Archive::create(&dir, "traces", Serial, options).unwrap();
    let loc = LocationRef(0);
    let pairs = 300_000u64;
    for i in 0..pairs {
        a.enter(loc, 10 * i, 0).unwrap();
        a.leave(loc, 10 * i + 5, 0).unwrap();
    }
    let early = a.early_flushes();
    assert!(early > 0, "a {pairs}-pair trace fit in 1 MiB");
    // Every flush before the close is a BUFFER_FLUSH record of its own.
    let counts = a.close_events().unwrap();
    assert_eq!(counts.len(), 1);
    let flushes = counts[0].1 - 2 * pairs;
    assert!(flushes >= 1, "{counts:?}");
    let mut g = a.globals().unwrap();
    g.clock(1_000_000_000, 0, 10 * pairs).unwrap();
    g.region(0, "MPI_Send", RegionRole::PointToPoint, Paradigm::Mpi)
        .unwrap();
    g.system_tree_node(0, "machine", "machine", None).unwrap();
    g.location_group(0, "MPI Rank 0", 0).unwrap();
    g.location(loc, "Master thread", counts[0].1, 0).unwrap();
    a.close().unwrap();
    let text = otf2_print(&dir, &[]);
    let enters = text.lines().filter(|l| l.starts_with("ENTER")).count() as u64;
    let leaves = text.lines().filter(|l| l.starts_with("LEAVE")).count() as u64;
    assert_eq!((enters, leaves), (pairs, pairs));
    let marks = text
        .lines()
        .filter(|l| l.starts_with("BUFFER_FLUSH"))
        .count() as u64;
    assert_eq!(marks, flushes, "early flushes asked for: {early}");
    assert!(
        text.contains("Stop Time: 7"),
        "BUFFER_FLUSH records end at the clock's time"
    );
    let s = summary(&dir);
    assert_eq!(s.locations.len(), 1);
    assert_eq!(
        kinds(&s.locations[0]),
        [
            (RecordKind::Enter, pairs),
            (RecordKind::Leave, pairs),
            (RecordKind::BufferFlush, flushes)
        ]
    );
    assert_eq!(s.locations[0].records(), counts[0].1);
    assert_eq!(s.locations[0].first, Some(0));
    std::fs::remove_dir_all(&dir).ok();
}
