//! `mpir-attach` against Debian's Open MPI 4.1: both models print exactly the (rank, host,
//! executable, pid) the ranks print themselves, `--json` carries the same, and the launch model
//! exits with the job's exit status. Every `--json` document is valid against
//! `examples/schemas/mpir-attach.schema.json`. Skips (with a line saying so) where
//! `mpiexec.openmpi` 4.1 is not installed. The MPI program is mpir-types'
//! `tests/targets/mpi_app.c`.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

#[path = "common/openmpi.rs"]
mod openmpi;
use openmpi::{command as ompi, skip};
#[path = "common/schema.rs"]
mod schema;

const TOOL: &str = env!("CARGO_BIN_EXE_mpir-attach");

/// (rank, pid, executable, host).
#[path = "common/rows.rs"]
mod rows;
use rows::{Row, own_rows};

fn mpi_app() -> Option<PathBuf> {
    static APP: OnceLock<Option<PathBuf>> = OnceLock::new();
    APP.get_or_init(|| {
        let src =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../mpir-types/tests/targets/mpi_app.c");
        openmpi::build(&src, "mpir-attach", "mpi_app")
    })
    .clone()
}

fn mpiexec_args(app: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["mpiexec.openmpi", "--oversubscribe", "-n", "3"]
        .map(String::from)
        .to_vec();
    v.push(app.display().to_string());
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// The tool's lines: `rank R host H executable E pid P`.
fn tool_rows(text: &str) -> BTreeSet<Row> {
    text.lines()
        .filter_map(|l| match l.split(' ').collect::<Vec<_>>()[..] {
            ["rank", r, "host", h, "executable", e, "pid", p] => {
                Some((r.parse().ok()?, p.parse().ok()?, e.into(), h.into()))
            }
            _ => None,
        })
        .collect()
}

fn json_rows(v: &Json) -> BTreeSet<Row> {
    v["procs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["rank"].as_u64().unwrap() as usize,
                p["pid"].as_i64().unwrap(),
                p["executable"].as_str().unwrap().to_owned(),
                p["host"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.stderr(Stdio::piped()).output().unwrap();
    println!("{}", String::from_utf8_lossy(&out.stdout));
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    out
}

#[cfg(target_arch = "x86_64")]
#[test]
fn launch_model_json_matches_the_ranks_and_the_job_succeeds() {
    let Some(app) = mpi_app() else {
        return skip("launch_model_json_matches_the_ranks_and_the_job_succeeds");
    };
    let out = run(ompi(TOOL)
        .arg("--json")
        .arg("--")
        .args(mpiexec_args(&app, &["0"])));
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    // The job's output (inherited) comes first, the JSON object after the job ended.
    let json_start = stdout.find("\n{").map_or(0, |i| i + 1);
    let v = schema::assert_valid_text("mpir-attach", &stdout[json_start..]);
    assert_eq!(v["model"], "launch");
    assert_eq!(v["debug_state"], "MPIR_DEBUG_SPAWNED");
    assert_eq!(v["exit_status"], 0);
    assert_eq!(v["armed_at"], "Entry");
    let rows = json_rows(&v);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows, own_rows(&stdout[..json_start]));
    let bp = v["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "MPIR_Breakpoint")
        .unwrap();
    assert!(bp["object"].as_str().unwrap().contains("libopen-rte.so.40"));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn launch_model_lines_match_and_the_exit_status_propagates() {
    let Some(app) = mpi_app() else {
        return skip("launch_model_lines_match_and_the_exit_status_propagates");
    };
    // Rank 0 exits with 7 after MPI_Finalize; mpiexec and so mpir-attach exit with 7.
    let out = run(ompi(TOOL).arg("--").args(mpiexec_args(&app, &["0", "7"])));
    assert_eq!(out.status.code(), Some(7));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let rows = tool_rows(&stdout);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows, own_rows(&stdout));
}

#[test]
fn attach_model_lines_and_json_match_the_ranks() {
    let Some(app) = mpi_app() else {
        return skip("attach_model_lines_and_json_match_the_ranks");
    };
    let args = mpiexec_args(&app, &["5"]);
    let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpir-attach/attach.out");
    let mut job = ompi(&args[0])
        .args(&args[1..])
        .stdout(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let own = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if own_rows(&text).len() == 3 {
            break own_rows(&text);
        }
        assert!(Instant::now() < deadline, "the ranks did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    let pid = job.id().to_string();
    let lines = run(Command::new(TOOL).args(["--pid", &pid]));
    let json = run(Command::new(TOOL).args(["--json", "--pid", &pid]));
    assert!(job.wait().unwrap().success());
    assert!(lines.status.success() && json.status.success());
    assert_eq!(tool_rows(&String::from_utf8(lines.stdout).unwrap()), own);
    let v = schema::assert_valid_text("mpir-attach", &String::from_utf8_lossy(&json.stdout));
    assert_eq!(v["model"], "attach");
    assert_eq!(v["starter_pid"].as_i64(), Some(job.id() as i64));
    assert_eq!(json_rows(&v), own);
}

#[test]
fn a_process_that_is_no_starter_is_reported() {
    let me = std::process::id().to_string();
    let out = Command::new(TOOL).args(["--pid", &me]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no MPIR starter") && err.contains("MPIR_Breakpoint"),
        "{err}"
    );
    let out = Command::new(TOOL).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
