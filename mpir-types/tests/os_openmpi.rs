//! Proof against Debian's Open MPI 4.1 (`mpiexec.openmpi`, `mpicc.openmpi`): a real MPI program
//! run with `mpiexec.openmpi -n 3` is acquired by the attach model and by the launch model, and
//! both report exactly the (rank, pid, executable, host) that the ranks print themselves; the
//! launched job completes with exit status 0. Where Open MPI 4.1 is not installed, every test
//! prints a skip line and passes.
//!
//! The program (`tests/targets/mpi_app.c`) is compiled at test time; each rank prints
//! `rank R pid P host H exe E` after `MPI_Init` (H from `MPI_Get_processor_name`, E the
//! canonical path of `/proc/self/exe`) and then sleeps. It is started by its canonical absolute
//! path: Open MPI's table holds the path as given, joined to the working directory when
//! relative (`./app` in `/tmp/x` becomes `/tmp/x/./app`), so only then are the two exactly equal.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mpir_types::os::{Acquisition, attach};
use mpir_types::{DebugState, Symbol};

use crate::os_common::{clean, compile, skip, version_contains, workdir};

const RANKS: usize = 3;

/// (rank, pid, executable, host).
type Row = (usize, i64, String, String);

/// The compiled MPI program, or `None` after printing why the test is skipped.
fn mpi_app(test: &str) -> Option<PathBuf> {
    if !version_contains("mpiexec.openmpi", "(OpenRTE) 4.1") {
        skip(
            test,
            "Debian's Open MPI 4.1 (mpiexec.openmpi) is not installed",
        );
        return None;
    }
    let Some(app) = compile("mpicc.openmpi", "mpi_app.c", "mpi_app", &["-O1"]) else {
        skip(test, "mpicc.openmpi cannot compile the test program");
        return None;
    };
    Some(app.canonicalize().unwrap())
}

/// Environment for `mpiexec.openmpi` as root on a small machine, and without a
/// `LD_LIBRARY_PATH` that `scripts/with-mpi` may have pointed at another MPI.
fn ompi_env() -> Vec<(OsString, OsString)> {
    [
        ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
        ("OMPI_MCA_rmaps_base_oversubscribe", "1"),
        ("LD_LIBRARY_PATH", ""),
    ]
    .into_iter()
    .map(|(k, v)| (k.into(), v.into()))
    .collect()
}

fn mpiexec_args(app: &Path, sleep: u32) -> Vec<OsString> {
    vec![
        "mpiexec.openmpi".into(),
        "--oversubscribe".into(),
        "-n".into(),
        RANKS.to_string().into(),
        app.into(),
        sleep.to_string().into(),
    ]
}

/// The ranks' own lines in an output file.
fn own_rows(text: &str) -> BTreeSet<Row> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            match f[..] {
                ["rank", r, "pid", p, "host", h, "exe", e] => {
                    Some((r.parse().ok()?, p.parse().ok()?, e.to_owned(), h.to_owned()))
                }
                _ => None,
            }
        })
        .collect()
}

fn acquired_rows(acq: &Acquisition) -> BTreeSet<Row> {
    acq.ranks()
        .map(|(rank, p)| {
            (
                rank,
                p.pid,
                p.executable_name.to_string(),
                p.host_name.to_string(),
            )
        })
        .collect()
}

fn show(model: &str, acq: &Acquisition, own: &str) {
    println!(
        "--- {model} model: acquired from starter {} ---",
        acq.starter_pid
    );
    for (rank, p) in acq.ranks() {
        println!(
            "rank {rank} host {} executable {} pid {}",
            p.host_name, p.executable_name, p.pid
        );
    }
    println!("--- {model} model: the ranks' own output ---");
    let mut lines: Vec<&str> = own.lines().filter(|l| l.starts_with("rank ")).collect();
    lines.sort();
    for l in lines {
        println!("{l}");
    }
}

/// The starter's symbols are in libopen-rte, not in the executable.
fn check_symbols(acq: &Acquisition) {
    let bp = acq.locate(Symbol::Breakpoint).expect("MPIR_Breakpoint");
    let object = bp.object_path.file_name().unwrap().to_string_lossy();
    assert!(object.starts_with("libopen-rte.so.40"), "{object}");
    assert!(!bp.in_executable);
    assert_eq!(acq.locate(Symbol::ExecutablePath).unwrap().size, 512);
    assert_eq!(acq.locate(Symbol::ServerArguments).unwrap().size, 1024);
    let caps = &acq.capabilities;
    assert!(caps.can_acquire && caps.separate_starter && caps.supports_partial_attach);
    assert!(caps.supports_tool_daemons && !caps.supports_debug_gate);
}

fn count_rank_lines(path: &Path) -> usize {
    own_rows(&std::fs::read_to_string(path).unwrap_or_default()).len()
}

#[test]
fn attach_model_reports_exactly_the_ranks_own_view() {
    const TEST: &str = "attach_model_reports_exactly_the_ranks_own_view";
    let Some(app) = mpi_app(TEST) else { return };
    let out = workdir().join("attach.out");
    let args = mpiexec_args(&app, 5);
    let mut job = clean(&args[0])
        .args(&args[1..])
        .envs(ompi_env())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    // Attach while the ranks sleep: after all of them printed.
    let deadline = Instant::now() + Duration::from_secs(60);
    while count_rank_lines(&out) < RANKS {
        assert!(Instant::now() < deadline, "the ranks did not start");
        if let Some(status) = job.try_wait().unwrap() {
            panic!("mpiexec ended early: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let t0 = Instant::now();
    let acq = attach(job.id() as i32);
    let took = t0.elapsed();
    let status = job.wait().unwrap();
    let acq = acq.unwrap();
    let own = std::fs::read_to_string(&out).unwrap();
    show("attach", &acq, &own);
    println!("attach took {took:?}; the job ended: {status}");
    assert_eq!(acquired_rows(&acq), own_rows(&own));
    assert_eq!(acq.procs.len(), RANKS);
    assert_eq!(acq.debug_state, DebugState::Spawned);
    check_symbols(&acq);
    assert!(status.success(), "{status}");
}

#[cfg(target_arch = "x86_64")]
mod launch {
    use super::*;
    use mpir_types::os::{ArmPoint, GateOutcome, GatePolicy, LaunchOptions, launch_with};

    /// How long the hook keeps the starter stopped at `MPIR_Breakpoint`.
    const HOLD: Duration = Duration::from_millis(1500);

    #[test]
    fn launch_model_reports_exactly_the_ranks_own_view_and_the_job_completes() {
        const TEST: &str = "launch_model_reports_exactly_the_ranks_own_view_and_the_job_completes";
        let Some(app) = mpi_app(TEST) else { return };
        let out = workdir().join("launch.out");
        let file = std::fs::File::create(&out).unwrap();
        let mut printed_while_held = None;
        let t0 = Instant::now();
        let opts = LaunchOptions {
            env: ompi_env(),
            stdout: Some(file.into()),
            ..LaunchOptions::default()
        };
        let mut job = launch_with(&mpiexec_args(&app, 1), opts, |event, acq| {
            if event.state == DebugState::Spawned && acq.is_some() {
                // The starter is stopped at MPIR_Breakpoint: Open MPI's ranks must not
                // return from MPI_Init meanwhile (§2.5.2), so none has printed yet.
                std::thread::sleep(HOLD);
                printed_while_held = Some(count_rank_lines(&out));
            }
        })
        .unwrap();
        let detached = t0.elapsed();
        let status = job.wait(Some(Duration::from_secs(60))).unwrap();
        let total = t0.elapsed();
        let own = std::fs::read_to_string(&out).unwrap();
        show("launch", &job.acquisition, &own);
        println!(
            "armed at {:?}; timings {:?}; detached after {detached:?} (incl. {HOLD:?} hold); \
             job ended after {total:?}: {status}",
            job.armed_at, job.timings
        );
        assert_eq!(acquired_rows(&job.acquisition), own_rows(&own));
        assert_eq!(job.acquisition.procs.len(), RANKS);
        assert!(status.success(), "{status}");
        assert_eq!(job.armed_at, ArmPoint::Entry);
        let states: Vec<_> = job.events.iter().map(|e| e.state).collect();
        assert_eq!(states, [DebugState::Spawned]);
        assert_eq!(
            printed_while_held,
            Some(0),
            "ranks ran past MPI_Init while held"
        );
        assert!(
            job.gates
                .iter()
                .all(|g| g.outcome == GateOutcome::NotRequired),
            "Open MPI defines MPIR_partial_attach_ok: {:?}",
            job.gates
        );
        check_symbols(&job.acquisition);
    }

    #[test]
    fn the_debug_gate_is_found_in_libmpi_of_each_rank() {
        const TEST: &str = "the_debug_gate_is_found_in_libmpi_of_each_rank";
        let Some(app) = mpi_app(TEST) else { return };
        let out = workdir().join("gate.out");
        let opts = LaunchOptions {
            env: ompi_env(),
            gate: GatePolicy::Always,
            stdout: Some(std::fs::File::create(&out).unwrap().into()),
            ..LaunchOptions::default()
        };
        let mut job = launch_with(&mpiexec_args(&app, 0), opts, |_, _| {}).unwrap();
        let status = job.wait(Some(Duration::from_secs(60))).unwrap();
        println!("gates: {:#?}", job.gates);
        assert!(status.success(), "{status}");
        assert_eq!(job.gates.len(), RANKS);
        for g in &job.gates {
            match &g.outcome {
                GateOutcome::Opened { object, .. } => {
                    let name = object.file_name().unwrap().to_string_lossy();
                    assert!(name.starts_with("libmpi.so.40"), "{name}");
                }
                other => panic!("rank {}: {other:?}", g.rank),
            }
        }
        assert_eq!(
            own_rows(&std::fs::read_to_string(&out).unwrap()),
            acquired_rows(&job.acquisition)
        );
    }
}
