//! The test process and the jobs it starts: a test re-run on several ranks, the resident set
//! size.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs test `test` of this binary on `ranks` ranks, `$MPIEXEC -n RANKS ARGS BINARY --exact
/// TEST --nocapture` with `child` set in the environment (the test runs its ranks' part when
/// it finds it). Kills the job after `limit` (a hung MPI job fails the test instead of
/// stalling it) and echoes its output indented (the ranks' harness lines are then not taken
/// for this run's results).
pub fn run_ranks(ranks: u32, args: &[&str], test: &str, child: &str, limit: Duration) -> Output {
    run_ranks_with(ranks, args, &[], test, child, limit)
}

/// [`run_ranks`] with the variables `env` set in the job's environment too.
pub fn run_ranks_with(
    ranks: u32,
    args: &[&str],
    env: &[(&str, &str)],
    test: &str,
    child: &str,
    limit: Duration,
) -> Output {
    let words =
        mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
    let mut job = Command::new(&words[0])
        .args(&words[1..])
        .args(["-n", &ranks.to_string()])
        .args(args)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(child, "1")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mpiexec");
    let start = Instant::now();
    while job.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = job.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = job.wait_with_output().unwrap();
    for line in String::from_utf8_lossy(&out.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
    {
        eprintln!("  | {line}");
    }
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
