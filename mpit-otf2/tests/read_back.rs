//! Archives written by `SerialArchive`, read back by OTF2's own readers: `otf2-print`
//! (Debian's `otf2-tools`) and the Python reader (`python3-otf2`).

use std::process::Command;

use mpit_otf2::{Paradigm, RegionRole, SerialArchive};

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
    let out = Command::new("otf2-print")
        .arg(dir.join("traces.otf2"))
        .output()
        .expect("otf2-print (Debian otf2-tools) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let enters = text.lines().filter(|l| l.starts_with("ENTER")).count();
    let leaves = text.lines().filter(|l| l.starts_with("LEAVE")).count();
    assert_eq!((enters, leaves), (8, 8), "{text}");
    assert!(text.contains("\"MPI_Send\""), "{text}");
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
