//! The test process and the jobs it starts: the selected MPI's launcher, a command run with a
//! time limit and its output shown indented, a test of this binary re-run on several ranks,
//! the resident set size.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The name the test harness gives test `name` of module `module` (pass `module_path!()`):
/// the module path without the crate's name, e.g. `events_real::with_events::NAME` in a test
/// binary whose files are modules, `NAME` at a binary's root. A child re-run of a test filters
/// by it (`--exact`).
pub fn test_path(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}

/// The selected MPI's launcher: `$MPIEXEC` (set by `scripts/with-mpi`), else the one beside
/// the `mpicc` the build used ([`mpit_safe::launcher`]); never the first on `PATH`.
pub fn mpiexec() -> Command {
    let words =
        mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// Runs `cmd` with its output captured, killing it after `limit` (a hung MPI job must fail the
/// test, not stall it). The pipes are drained while it runs.
pub fn run(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Prints stdout and stderr indented (so the ranks' lines are not read as the harness's) and
/// returns both, stdout first.
pub fn show(out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for line in text.lines() {
        eprintln!("  | {line}");
    }
    text
}

/// Runs test `test` of this binary (its [`test_path`]) on `ranks` ranks, `$MPIEXEC -n RANKS
/// ARGS BINARY --exact TEST --nocapture` with `child` set in the environment (the test runs its
/// ranks' part when it finds it). Kills the job after `limit` (a hung MPI job fails the test
/// instead of stalling it) and echoes its output indented (the ranks' harness lines are then
/// not taken for this run's results).
pub fn run_ranks(ranks: u32, args: &[&str], test: &str, child: &str, limit: Duration) -> Output {
    run_ranks_with(ranks, args, &[], test, child, limit)
}

/// [`run_ranks`] with the variables `env` set in the job's environment too. Each rank's
/// harness must have found the test (a filter that matches nothing would pass unseen).
pub fn run_ranks_with(
    ranks: u32,
    args: &[&str],
    env: &[(&str, &str)],
    test: &str,
    child: &str,
    limit: Duration,
) -> Output {
    let mut job = mpiexec();
    job.args(["-n", &ranks.to_string()])
        .args(args)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(child, "1")
        .envs(env.iter().copied());
    let out = run(job, limit);
    let text = show(&out);
    assert!(
        !text.contains("running 0 tests"),
        "a rank found no test named {test}"
    );
    out
}

/// Resident set size in bytes (`/proc/self/statm`, second field, in pages).
pub fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse().ok())
        .expect("statm's resident field");
    pages * 4096
}
