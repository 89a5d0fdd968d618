//! `mpit-prof`'s model, reduction and writers on a real job: 4 ranks of this test binary run
//! the known pattern (rank i sends i+1 messages of 1000·(i+1) bytes to rank (i+1) mod 4) under
//! the profiling engine, each turns its report into a `RankProfile` (`from_report`), rank 0
//! gathers them, reduces and writes every output; the test then reads the directory back.
//!
//! It checks what holds on every MPI (the call tree and its exact call counts, the statistics
//! over the ranks, the outputs' presence and `report`'s text) and, where the MPI has per-peer
//! pvars bound to communicators (Open MPI 5 with `OMPI_MCA_pml_monitoring_enable=2`, set here),
//! that the communication matrices equal the pattern. `MPIT_PROF_LIVE_KEEP=DIR` keeps the
//! output directory (how `tests/golden/*.ranks.json` were recorded).

use std::path::{Path, PathBuf};
use std::time::Duration;

// rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
use mpi::traits::*;
use mpit_prof::model::{Kind, RankProfile};
use mpit_prof::reduce::reduce;
use mpit_prof::write;
use mpit_prof::{Config, Mode, Profiler};
#[cfg(mpit_abi)]
use mpit_safe::mpi;
use mpit_safe::{MpiObject, Mpit};
use mpit_test_support::process::{self, test_path};

const CHILD: &str = "MPIT_PROF_LIVE_DIR";
const RANKS: usize = 4;
const FUNCTIONS: &[&str] = &["MPI_Send", "MPI_Recv", "MPI_Barrier"];
const PASSED: &str = "prof live: rank 0 wrote the outputs";

/// One rank of the job: profile the pattern, send the profile to rank 0, which writes `dir`.
fn child(dir: &Path) {
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let mpit = Mpit::init().unwrap();
    let session = mpit.session().unwrap();
    let p = Profiler::new(
        &session,
        Config {
            mode: Mode::Call,
            functions: FUNCTIONS.to_vec(),
            root: "known_pattern".into(),
            events: true,
            ..Config::default()
        },
    )
    .unwrap();
    p.object_created(world.raw_object(), "MPI_COMM_WORLD")
        .unwrap();
    let call = |f: usize, body: &mut dyn FnMut()| {
        let c = p.call_enter(f);
        body();
        p.call_exit(c);
    };
    {
        let _g = p.region("setup");
        call(2, &mut || world.barrier());
    }
    {
        let _g = p.region("exchange");
        let to = (rank + 1) % size;
        let from = (rank + size - 1) % size;
        let payload = vec![rank as u8; 1000 * (rank + 1)];
        // Receives first on odd ranks, sends first on even ones: no deadlock on any size.
        let send = || {
            for _ in 0..=rank {
                call(0, &mut || {
                    world.process_at_rank(to as i32).send(&payload[..]);
                });
            }
        };
        let recv = || {
            for _ in 0..=from {
                call(1, &mut || {
                    let (v, _) = world.process_at_rank(from as i32).receive_vec::<u8>();
                    assert_eq!(v.len(), 1000 * (from + 1));
                });
            }
        };
        if rank % 2 == 0 {
            send();
            recv();
        } else {
            recv();
            send();
        }
    }
    call(2, &mut || world.barrier());
    p.object_freed(world.raw_object());
    let report = p.finish().unwrap();
    let library = mpi::environment::library_version().unwrap_or_default();
    let host = mpi::environment::processor_name().unwrap_or_default();
    let me = RankProfile::from_report(
        &report,
        rank,
        size,
        &library,
        &host,
        &["known_pattern".to_string()],
    );
    let json = serde_json::to_vec(&me).unwrap();
    if rank == 0 {
        let mut all = vec![me];
        for r in 1..size {
            let (bytes, _) = world.process_at_rank(r as i32).receive_vec::<u8>();
            all.push(serde_json::from_slice(&bytes).unwrap());
        }
        let profile = reduce(&all);
        write::write_all(dir, &profile).unwrap();
        println!("{PASSED}");
    } else {
        world.process_at_rank(0).send(&json[..]);
    }
}

fn out_dir() -> PathBuf {
    match std::env::var_os("MPIT_PROF_LIVE_KEEP") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_TARGET_TMPDIR")).join("prof_live"),
    }
}

#[test]
fn four_ranks_profile_written_and_read_back() {
    if let Some(dir) = std::env::var_os(CHILD) {
        child(Path::new(&dir));
        return;
    }
    let dir = out_dir();
    let _ = std::fs::remove_dir_all(&dir);
    let mut cmd = process::mpiexec();
    cmd.args(["-n", &RANKS.to_string(), "env"])
        .arg(format!("{CHILD}={}", dir.display()))
        .arg("OMPI_MCA_pml_monitoring_enable=2")
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_path(module_path!(), "four_ranks_profile_written_and_read_back"),
            "--nocapture",
            "--test-threads=1",
        ]);
    let out = process::run(cmd, Duration::from_secs(300));
    let text = process::show(&out);
    assert!(out.status.success(), "the {RANKS}-rank run failed");
    assert!(text.contains(PASSED), "rank 0 did not write the outputs");

    for f in ["profile.txt", "profile.json", "ranks.json"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let p = write::read(&dir).unwrap();
    assert_eq!(p.ranks.len(), RANKS);
    let node = |path: &str| {
        (0..p.nodes.len())
            .find(|&i| p.path(i) == path)
            .map(|i| &p.nodes[i])
            .unwrap_or_else(|| panic!("no node {path}"))
    };
    let send = node("known_pattern/exchange/MPI_Send");
    assert_eq!(send.kind, Kind::Function);
    // Rank i sends i+1 times: 1+2+3+4.
    assert_eq!(send.calls.sum, 10.0);
    assert_eq!((send.calls.min, send.calls.min_rank), (1.0, 0));
    assert_eq!((send.calls.max, send.calls.max_rank), (4.0, 3));
    let recv = node("known_pattern/exchange/MPI_Recv");
    assert_eq!((recv.calls.min_rank, recv.calls.max_rank), (1, 0));
    let exchange = node("known_pattern/exchange");
    assert_eq!((exchange.calls.min, exchange.calls.max), (1.0, 1.0));
    assert!(exchange.time.min > 0.0);
    assert_eq!(node("known_pattern/setup/MPI_Barrier").calls.sum, 4.0);
    assert_eq!(node("known_pattern/MPI_Barrier").calls.sum, 4.0);

    let report = write::report(&dir).unwrap();
    assert_eq!(
        report,
        std::fs::read_to_string(dir.join("profile.txt")).unwrap(),
        "report DIR renders profile.txt again"
    );
    assert!(
        report.contains("known_pattern/exchange/MPI_Send"),
        "{report}"
    );
    let same = write::diff(&dir, &dir).unwrap();
    assert!(same.contains("known_pattern/exchange/MPI_Send"), "{same}");
    assert!(
        !same.contains('%'),
        "a run against itself changes nothing:\n{same}"
    );

    // Per-peer matrices, where the MPI has them.
    let library = &p.library;
    eprintln!(
        "{library}: matrices {:?}",
        p.matrices.iter().map(|m| &m.name).collect::<Vec<_>>()
    );
    let pattern_count = |r: usize, peer: usize| {
        if peer == (r + 1) % RANKS {
            (r + 1) as f64
        } else {
            0.0
        }
    };
    let pattern_size = |r: usize, peer: usize| pattern_count(r, peer) * 1000.0 * (r + 1) as f64;
    if library.starts_with("Open MPI v5") {
        for (name, want) in [
            (
                "pml_monitoring_messages_count",
                &pattern_count as &dyn Fn(usize, usize) -> f64,
            ),
            ("pml_monitoring_messages_size", &pattern_size),
        ] {
            let m = p
                .matrices
                .iter()
                .find(|m| m.name == name)
                .unwrap_or_else(|| panic!("no {name} matrix on {library}"));
            for (r, row) in m.rows.iter().enumerate() {
                let want: Vec<f64> = (0..RANKS).map(|peer| want(r, peer)).collect();
                assert_eq!(row, &want, "{name} row {r}");
            }
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("comm-matrix.json")).unwrap())
                .unwrap();
        assert_eq!(
            json["pml_monitoring_messages_count"],
            serde_json::json!([[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3], [4, 0, 0, 0]])
        );
        assert!(
            dir.join("comm-matrix-pml_monitoring_messages_count.svg")
                .is_file()
        );
    }
    if p.pvars.max == 0.0 {
        assert!(report.contains("0 exist"), "{report}");
    }
}
