//! `mpir-attach` against Debian's Open MPI 4.1: both models print exactly the (rank, host,
//! executable, pid) the ranks print themselves, `--json` carries the same, and the launch model
//! exits with the job's exit status. Every `--json` document is valid against
//! `examples/schemas/mpir-attach.schema.json`. Skips (with a line saying so) where
//! `mpiexec.openmpi` 4.1 is not installed. The MPI program is mpir-types'
//! `tests/targets/mpi_app.c` (linked as `examples/mpir/mpi_app.c`, so the package has it).
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use mpit_test_support::openmpi::{self, command as ompi, skip};
use mpit_test_support::rows::{Row, own_rows};
use mpit_test_support::schema;

const TOOL: &str = env!("CARGO_BIN_EXE_mpir-attach");

fn mpi_app() -> Option<PathBuf> {
    static APP: OnceLock<Option<PathBuf>> = OnceLock::new();
    APP.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("mpir/mpi_app.c");
        openmpi::build(
            &src,
            &Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpir-attach"),
            "mpi_app",
        )
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
    // Standard output is the JSON document alone; the job's output went to standard error.
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let v = schema::assert_valid_text("mpir-attach", &stdout);
    assert_eq!(v["model"], "launch");
    assert_eq!(v["debug_state"], "MPIR_DEBUG_SPAWNED");
    assert_eq!(v["exit_status"], 0);
    assert_eq!(v["armed_at"], "Entry");
    let rows = json_rows(&v);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows, own_rows(&stderr));
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
    // The ranks' own lines went to standard error, the tool's alone to standard output.
    assert_eq!(rows, own_rows(&String::from_utf8_lossy(&out.stderr)));
    assert!(own_rows(&stdout).is_empty(), "{stdout}");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn job_output_goes_to_the_file_given() {
    let Some(app) = mpi_app() else {
        return skip("job_output_goes_to_the_file_given");
    };
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpir-attach/job-output.txt");
    let out = run(ompi(TOOL)
        .args(["--json", "--job-output"])
        .arg(&file)
        .arg("--")
        .args(mpiexec_args(&app, &["0"])));
    assert_eq!(out.status.code(), Some(0));
    let v = schema::assert_valid_text("mpir-attach", &String::from_utf8_lossy(&out.stdout));
    let job_output = std::fs::read_to_string(&file).unwrap();
    assert_eq!(json_rows(&v), own_rows(&job_output), "{job_output}");
    assert!(own_rows(&String::from_utf8_lossy(&out.stderr)).is_empty());
}

/// `--trace --json` of a starter that aborts: the top-level `abort_string` is the abort
/// event's (it was `null`: the table is read at the spawned event, before the abort).
#[cfg(target_arch = "x86_64")]
#[test]
fn trace_json_carries_the_abort_string() {
    let out = run(Command::new(TOOL).args([
        "--trace",
        "--json",
        "--timeout",
        "60",
        "--",
        env!("CARGO_BIN_EXE_mpir-starter"),
        "-n",
        "2",
        "--abort-after",
        "300",
        "--",
        "/bin/sleep",
        "5",
    ]));
    assert_eq!(
        out.status.code(),
        Some(3),
        "mpir-starter exits 3 after an abort"
    );
    let v = schema::assert_valid_text("mpir-attach", &String::from_utf8_lossy(&out.stdout));
    let why = "mpir-starter: job aborted after 300 ms (--abort-after)";
    assert_eq!(v["abort_string"], why);
    let aborting = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["state"] == "MPIR_DEBUG_ABORTING")
        .expect("an aborting event");
    assert_eq!(aborting["abort_string"], why);
}

/// A 3-rank job of `mpi_app 5` under `mpiexec.openmpi` (not under the tool), its output in
/// `mpir-attach/LOG`: the starter and the ranks' own rows once all three have started.
fn running_job(app: &Path, log: &str) -> (Reaped, BTreeSet<Row>) {
    let args = mpiexec_args(app, &["5"]);
    let log = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("mpir-attach")
        .join(log);
    let job = Reaped(
        ompi(&args[0])
            .args(&args[1..])
            .stdout(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if own_rows(&text).len() == 3 {
            return (job, own_rows(&text));
        }
        assert!(Instant::now() < deadline, "the ranks did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn attach_model_lines_and_json_match_the_ranks() {
    let Some(app) = mpi_app() else {
        return skip("attach_model_lines_and_json_match_the_ranks");
    };
    let (mut job, own) = running_job(&app, "attach.out");
    let pid = job.0.id().to_string();
    let lines = run(Command::new(TOOL).args(["--pid", &pid]));
    let json = run(Command::new(TOOL).args(["--json", "--pid", &pid]));
    assert!(job.0.wait().unwrap().success());
    assert!(lines.status.success() && json.status.success());
    assert_eq!(tool_rows(&String::from_utf8(lines.stdout).unwrap()), own);
    let v = schema::assert_valid_text("mpir-attach", &String::from_utf8_lossy(&json.stdout));
    assert_eq!(v["model"], "attach");
    assert_eq!(v["starter_pid"].as_i64(), Some(job.0.id() as i64));
    assert_eq!(json_rows(&v), own);
}

/// Runs the tool on `pid`; its status and standard error, with nothing on standard output.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(TOOL).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("mpir-attach {args:?}: {:?}: {err}", out.status.code());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    (out.status.code(), err)
}

/// A child that is killed and reaped when the test ends.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_process_that_is_no_starter_is_reported() {
    let sleep = Reaped(Command::new("sleep").arg("30").spawn().unwrap());
    let pid = sleep.0.id().to_string();
    let (code, err) = refused(&["--pid", &pid]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("no MPIR starter") && err.contains("MPIR_Breakpoint"),
        "{err}"
    );
    let out = Command::new(TOOL).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_zombie_or_a_missing_process_is_reported() {
    // A child that exited and that nobody reaped yet.
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z")) {
        assert!(Instant::now() < deadline, "the child did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
    let (code, err) = refused(&["--pid", &pid]);
    assert_eq!(code, Some(6), "{err}");
    assert!(err.contains("zombie"), "{err}");
    child.wait().unwrap();
    let (code, err) = refused(&["--pid", &pid]);
    assert_eq!(code, Some(6), "{err}");
    assert!(err.contains("does not exist"), "{err}");
}

/// This test program is an MPIR starter too (it links mpir-types' starter symbols) that has
/// published no table: the table is empty, which is no success.
#[test]
fn an_empty_table_is_reported() {
    assert_eq!(
        mpir_types::starter::Starter::debug_state(),
        mpir_types::DebugState::Null
    );
    let me = std::process::id().to_string();
    let (code, err) = refused(&["--pid", &me]);
    assert_eq!(code, Some(5), "{err}");
    assert!(
        err.contains("is empty") && err.contains("MPIR_NULL"),
        "{err}"
    );
    let (code, _) = refused(&["--json", "--pid", &me]);
    assert_eq!(code, Some(5));
}

#[test]
fn an_mpi_process_is_not_its_starter() {
    let Some(app) = mpi_app() else {
        return skip("an_mpi_process_is_not_its_starter");
    };
    let (job, own) = running_job(&app, "rank.out");
    let rank_pid = own.iter().next().unwrap().1.to_string();
    let (code, err) = refused(&["--pid", &rank_pid]);
    assert_eq!(code, Some(4), "{err}");
    let starter = job.0.id();
    assert!(
        err.contains("an MPI process, not its job's starter")
            && err.contains(&format!("mpir-attach --pid {starter}")),
        "{err}"
    );
}

/// MPICH's Hydra defines no MPIR symbol: said at once, in both models, and in the attach
/// model the job runs on untouched.
#[test]
fn hydra_is_recognised_at_once() {
    if Command::new("mpiexec.hydra")
        .arg("--version")
        .output()
        .is_err()
    {
        return println!("skip: hydra_is_recognised_at_once: mpiexec.hydra is not installed");
    }
    let mut job = Reaped(
        Command::new("mpiexec.mpich")
            .env_remove("LD_LIBRARY_PATH")
            .args(["-n", "1", "sleep", "3"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let pid = job.0.id().to_string();
    let (code, err) = refused(&["--pid", &pid]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("Hydra") && err.contains("does not implement MPIR"),
        "{err}"
    );
    let status = job.0.wait().unwrap();
    assert!(
        status.success(),
        "the job ran on and ended normally: {status}"
    );

    #[cfg(target_arch = "x86_64")]
    {
        let t = Instant::now();
        let out = Command::new(TOOL)
            .args(["--timeout", "60", "--", "mpiexec.mpich", "-n", "1", "true"])
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        println!("launch model under Hydra ({:?}): {err}", t.elapsed());
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains("Hydra"), "{err}");
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "not at once: {:?}",
            t.elapsed()
        );
    }
}

/// The PMIx tool interface of Open MPI 5's launcher: the tests below run under
/// `scripts/with-mpi openmpi5` (`MPIEXEC` is the wheel's `mpiexec`, beside `prterun`) and
/// fail there if anything is missing; under another MPI they say so and return.
mod pmix {
    use std::io::{BufRead, BufReader};
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::sync::OnceLock;

    use mpit_test_support::rows::own_rows;
    use mpit_test_support::schema;

    use super::{TOOL, json_rows, run};

    /// The wheel's `mpiexec` if `MPIEXEC` is a PRRTE launcher's.
    fn wheel_mpiexec() -> Option<PathBuf> {
        let mpiexec = std::env::var("MPIEXEC").ok()?;
        let prog = PathBuf::from(mpiexec.split_whitespace().next()?);
        prog.with_file_name("prterun").is_file().then_some(prog)
    }

    fn app(test: &str) -> Option<(PathBuf, PathBuf)> {
        let Some(mpiexec) = wheel_mpiexec() else {
            println!(
                "{test}: skipped: MPIEXEC is not Open MPI 5's (run under scripts/with-mpi openmpi5)"
            );
            return None;
        };
        static APP: OnceLock<PathBuf> = OnceLock::new();
        let app = APP.get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpir-attach-pmix");
            std::fs::create_dir_all(&dir).unwrap();
            let out = dir.join("mpi_app");
            let lib = mpiexec.parent().unwrap().join("../lib");
            let cc = std::env::var("MPICC").expect("MPICC under openmpi5");
            let st = Command::new(cc)
                .arg("-o")
                .arg(&out)
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("mpir/mpi_app.c"))
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .status()
                .unwrap();
            assert!(st.success(), "mpicc failed");
            out
        });
        Some((mpiexec, app.clone()))
    }

    /// `mpiexec -n 3 APP SECS`, its standard output piped, once every rank has printed its
    /// line (past `MPI_Init`); the lines.
    fn running_job(mpiexec: &Path, app: &Path, secs: &str) -> (std::process::Child, String) {
        let mut job = Command::new(mpiexec)
            .args(["-n", "3"])
            .arg(app)
            .arg(secs)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = String::new();
        let mut reader = BufReader::new(job.stdout.take().unwrap());
        for _ in 0..3 {
            reader.read_line(&mut lines).unwrap();
        }
        (job, lines)
    }

    /// `mpir-attach ARGS` with `MPIR_ATTACH_TEST_PAUSE`, once it has said it pauses: the tool,
    /// its standard error, and that line.
    fn paused_tool<S: AsRef<std::ffi::OsStr>>(
        args: &[S],
    ) -> (
        std::process::Child,
        BufReader<std::process::ChildStderr>,
        String,
    ) {
        let mut tool = Command::new(TOOL)
            .args(args)
            .env("MPIR_ATTACH_TEST_PAUSE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(tool.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        assert!(line.contains("test pause"), "{line}");
        (tool, err, line)
    }

    #[test]
    fn attach_lists_exactly_the_ranks_pids_hosts_and_executables() {
        let Some((mpiexec, app)) = app("attach_lists_exactly_the_ranks") else {
            return;
        };
        let (mut job, lines) = running_job(&mpiexec, &app, "5");
        let pid = job.id().to_string();
        let out = run(Command::new(TOOL).args(["--json", "--pid", &pid]));
        assert_eq!(out.status.code(), Some(0));
        let v = schema::assert_valid_text("mpir-attach", &String::from_utf8(out.stdout).unwrap());
        assert_eq!(v["interface"], "pmix");
        assert_eq!(v["model"], "attach");
        assert_eq!(v["starter_pid"].as_i64(), Some(i64::from(job.id())));
        assert_eq!(json_rows(&v), own_rows(&lines));
        assert_eq!(json_rows(&v).len(), 3);
        // --via mpir on the same launcher: MPIR's refusal (no MPIR symbols), status 3.
        let out = run(Command::new(TOOL).args(["--via", "mpir", "--pid", &pid]));
        assert_eq!(out.status.code(), Some(3));
        // A rank's pid: status 4, with the launcher named.
        let rank = json_rows(&v).iter().next().unwrap().1.to_string();
        let out = run(Command::new(TOOL).args(["--pid", &rank]));
        assert_eq!(out.status.code(), Some(4));
        assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("--pid {pid}")));
        assert!(job.wait().unwrap().success());
        // The launcher has ended: a stale pid, status 6.
        let out = run(Command::new(TOOL).args(["--pid", &pid]));
        assert_eq!(out.status.code(), Some(6));
    }

    #[test]
    fn launch_stops_in_init_acquires_releases_and_keeps_the_exit_status() {
        let Some((mpiexec, app)) = app("launch_stops_in_init") else {
            return;
        };
        let out = run(Command::new(TOOL)
            .args(["--json", "--timeout", "30", "--"])
            .arg(&mpiexec)
            .args(["-n", "3"])
            .arg(&app)
            .args(["0", "7"]));
        // Rank 0 exits 7 after MPI_Finalize: the launcher's status, and so the tool's.
        assert_eq!(out.status.code(), Some(7));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let v = schema::assert_valid_text("mpir-attach", &stdout);
        assert_eq!(v["interface"], "pmix");
        assert_eq!(v["model"], "launch");
        assert_eq!(v["exit_status"], 7);
        let rows = json_rows(&v);
        assert_eq!(rows.len(), 3);
        // The job ran past MPI_Init (released): each rank printed its line, to stderr.
        assert_eq!(rows, own_rows(&String::from_utf8_lossy(&out.stderr)));
        // Without --json the tool says how the release went: confirmed from /proc (each rank
        // seen waiting in MPI_Init, then going on), not the fixed pause of the fallback. The
        // job's output goes elsewhere: its writes and the tool's would share standard error.
        let job_out =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpir-attach-pmix/launch-job.out");
        let out = run(Command::new(TOOL)
            .arg("--job-output")
            .arg(&job_out)
            .args(["--timeout", "30", "--"])
            .arg(&mpiexec)
            .args(["-n", "3"])
            .arg(&app));
        assert_eq!(out.status.code(), Some(0));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("stopped in init") && err.contains("each process seen going on"),
            "{err}"
        );
    }

    /// Paused after the read (`MPIR_ATTACH_TEST_PAUSE`): `SIGINT` to the tool is 130 with
    /// nothing printed; a launcher killed during the pause is 6 (its table is not printed).
    #[test]
    fn sigint_and_a_launcher_that_dies_during_attach() {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        let Some((mpiexec, app)) = app("sigint_and_a_launcher_that_dies") else {
            return;
        };
        for case in ["sigint", "launcher dies"] {
            let (mut job, _) = running_job(&mpiexec, &app, "30");
            // Its standard error stays open (read or not) until the tool has ended.
            let (mut tool, _err, _) = paused_tool(&["--json", "--pid", &job.id().to_string()]);
            if case == "sigint" {
                kill(Pid::from_raw(tool.id() as i32), Signal::SIGINT).unwrap();
            } else {
                // SIGTERM: prterun ends its ranks too (SIGKILL would orphan them).
                let _ = kill(Pid::from_raw(job.id() as i32), Signal::SIGTERM);
                let _ = job.wait();
                drop(tool.stdin.take());
            }
            let out = tool.wait_with_output().unwrap();
            let _ = kill(Pid::from_raw(job.id() as i32), Signal::SIGTERM);
            let _ = job.wait();
            assert!(out.stdout.is_empty(), "{case}: printed after all");
            assert_eq!(
                out.status.code(),
                Some(if case == "sigint" { 130 } else { 6 }),
                "{case}"
            );
        }
    }

    /// The processes below `pid` now (through `/proc/PID/task/TID/children`).
    fn process_tree(pid: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut todo = vec![pid];
        while let Some(p) = todo.pop() {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
                continue;
            };
            for t in tasks.flatten() {
                let children =
                    std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
                for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                    out.push(c);
                    todo.push(c);
                }
            }
        }
        out
    }

    /// The state letter of `pid` in `/proc/PID/stat`, `None` once it is gone.
    fn proc_state(pid: u32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(") ")?.1.chars().next()
    }

    /// `SIGINT` to `mpir-attach -- mpiexec -n 3 ./app` during the launch, with the ranks
    /// waiting in `MPI_Init` before the release (`MPIR_ATTACH_TEST_PAUSE`): as in the MPIR
    /// launch model, the signal is forwarded to the launcher, which ends its job as an
    /// untraced `mpiexec` does on `SIGINT` (the reference beside it: status 1), and the tool
    /// exits with the launcher's status. Nothing is printed on standard output, no rank was
    /// released, and every process of the job has ended within 5 s, none left stopped.
    #[test]
    fn sigint_during_a_launch_is_forwarded_and_leaves_no_rank_behind() {
        use std::io::Read;
        use std::time::{Duration, Instant};

        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        let Some((mpiexec, app)) = app("sigint_during_a_launch") else {
            return;
        };
        let signal = |pid: u32| kill(Pid::from_raw(pid as i32), Signal::SIGINT).unwrap();
        let (mut reference, _) = running_job(&mpiexec, &app, "30");
        signal(reference.id());
        let expected = reference.wait().unwrap().code();
        assert_eq!(expected, Some(1), "an untraced mpiexec on SIGINT");

        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpir-attach-pmix/sigint-job.out");
        let mut args: Vec<std::ffi::OsString> = vec!["--job-output".into(), out.clone().into()];
        args.extend(["--".into(), mpiexec.clone().into(), "-n".into(), "3".into()]);
        args.extend([app.clone().into(), "30".into()]);
        let (mut tool, mut err, line) = paused_tool(&args);
        assert!(
            line.contains("test pause") && line.contains("not released"),
            "{line}"
        );
        let job = process_tree(tool.id());
        let ranks: Vec<u32> = job
            .iter()
            .copied()
            .filter(|p| std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == app))
            .collect();
        assert_eq!(ranks.len(), 3, "the launcher and 3 ranks: {job:?}");
        signal(tool.id());
        let t = Instant::now();
        let status = loop {
            if let Some(s) = tool.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(30) {
                let _ = tool.kill();
                panic!("the tool did not end within 30 s of the SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let took = t.elapsed();
        let mut rest = String::new();
        err.read_to_string(&mut rest).unwrap();
        let mut stdout = String::new();
        tool.stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        println!("SIGINT during the launch: {status} after {took:?}\n{line}{rest}");
        assert_eq!(status.code(), expected, "{rest}");
        assert!(stdout.is_empty(), "printed: {stdout}");
        assert!(
            rest.contains("caught SIGINT: forwarded to the launcher (pid")
                && rest.contains("before its processes were released")
                && rest.contains("the job ended: exit status: 1"),
            "{rest}"
        );
        let t = Instant::now();
        loop {
            let left: Vec<(u32, char)> = job
                .iter()
                .filter_map(|&p| Some((p, proc_state(p)?)))
                .filter(|(_, s)| !matches!(s, 'Z' | 'X'))
                .collect();
            assert!(
                left.iter().all(|(_, s)| !matches!(s, 'T' | 't')),
                "stopped: {left:?}"
            );
            if left.is_empty() {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "left behind: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let job_out = std::fs::read_to_string(&out).unwrap();
        assert!(
            own_rows(&job_out).is_empty(),
            "a rank got past MPI_Init: {job_out}"
        );
    }

    #[test]
    fn a_process_without_a_pmix_server_is_refused_with_status_3() {
        let Some(_) = app("a_process_without_a_pmix_server") else {
            return;
        };
        let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
        let out = run(Command::new(TOOL).args([
            "--via",
            "pmix",
            "--timeout",
            "2",
            "--pid",
            &sleeper.id().to_string(),
        ]));
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        assert_eq!(out.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&out.stderr).contains("no PMIx server"));
    }
}

/// MPICH's Hydra offers no PMIx tool interface: `--via pmix` is a typed refusal (status 3),
/// as MPIR's is. Skips where `mpiexec.mpich` is not installed.
#[test]
fn hydra_offers_no_pmix_tool_interface() {
    if !Path::new("/usr/bin/mpiexec.mpich").exists() {
        println!("hydra_offers_no_pmix_tool_interface: skipped: no /usr/bin/mpiexec.mpich");
        return;
    }
    let mut job = Command::new("/usr/bin/mpiexec.mpich")
        .args(["-n", "1", "sleep", "20"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let pid = job.id().to_string();
    let pmix = run(Command::new(TOOL).args(["--via", "pmix", "--timeout", "2", "--pid", &pid]));
    let auto = run(Command::new(TOOL).args(["--pid", &pid]));
    let _ = job.kill();
    let _ = job.wait();
    assert_eq!(pmix.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&pmix.stderr).contains("no PMIx server"));
    assert_eq!(auto.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&auto.stderr).contains("Hydra"));
}

/// Debian's Open MPI 4.1.4 (`orterun`, PMIx 3.x inside): the same job through both
/// interfaces. MPIR lists the ranks; its PMIx server does not accept a tool of Debian's
/// libpmix 4.2.2 (measured: `PMIx_tool_init` answers UNREACHABLE), a typed refusal with
/// status 3. Skips where `mpiexec.openmpi` is not installed.
#[test]
fn open_mpi_4_offers_mpir_and_refuses_a_pmix_tool() {
    let Some(app) = mpi_app() else {
        return skip("open_mpi_4_offers_mpir_and_refuses_a_pmix_tool");
    };
    let args = mpiexec_args(&app, &["5"]);
    let mut job = ompi(&args[0])
        .args(&args[1..])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = String::new();
    {
        use std::io::{BufRead, BufReader};
        let mut reader = BufReader::new(job.stdout.take().unwrap());
        for _ in 0..3 {
            reader.read_line(&mut lines).unwrap();
        }
    }
    let pid = job.id().to_string();
    let mpir = run(Command::new(TOOL).args(["--json", "--pid", &pid]));
    let pmix = run(Command::new(TOOL).args(["--via", "pmix", "--timeout", "2", "--pid", &pid]));
    let _ = job.wait();
    assert_eq!(mpir.status.code(), Some(0));
    let v: Json = serde_json::from_slice(&mpir.stdout).unwrap();
    assert_eq!(v["interface"], "mpir");
    assert_eq!(json_rows(&v), own_rows(&lines));
    assert_eq!(pmix.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&pmix.stderr).contains("no PMIx server"));
}
