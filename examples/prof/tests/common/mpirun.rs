//! Running MPI programs from a test: the selected MPI's launcher and C compiler (as
//! `scripts/with-mpi` sets them), a run with a time limit whose output is kept, and the output
//! shown indented. Included by `prof_live.rs` and `profile_events.rs` (`#[path]`).
// Each including test uses a part of this module.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The command in environment variable `var` (a line that may carry arguments, e.g.
/// `"mpiexec --oversubscribe"`), else `default`.
fn command_from_env(var: &str, default: &str) -> Command {
    let line = std::env::var(var).unwrap_or_default();
    let mut words = line.split_whitespace();
    let mut cmd = Command::new(words.next().unwrap_or(default));
    cmd.args(words);
    cmd
}

/// The selected MPI's launcher: `$MPIEXEC` (set by `scripts/with-mpi`), else the one beside
/// the `mpicc` the build used ([`mpit_safe::launcher`]); never the first on `PATH`.
pub(crate) fn mpiexec() -> Command {
    let words =
        mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// `$MPICC` (set by `scripts/with-mpi`), else the `mpicc` the build used; in the ABI build,
/// the ABI's C compiler `$MPIT_ABI_MPICC` (`scripts/with-mpi abi:IMPL` sets it).
pub(crate) fn mpicc() -> Command {
    if cfg!(mpit_abi) {
        command_from_env("MPIT_ABI_MPICC", "mpicc_abi")
    } else {
        command_from_env("MPICC", mpit_safe::sys::consts::BUILD_MPICC)
    }
}

/// Compiles the C program `src` with the selected `mpicc -O1 -g` into
/// `CARGO_TARGET_TMPDIR/name`; panics with the compiler's output if it fails.
pub(crate) fn build_c(src: &Path, name: &str) -> PathBuf {
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let mut cc = mpicc();
    cc.args(["-O1", "-g", "-Wall", "-Wextra", "-o"])
        .arg(&exe)
        .arg(src);
    let out = run(cc, Duration::from_secs(120));
    show(&out);
    assert!(out.status.success(), "compiling {} failed", src.display());
    exe
}

/// Runs `cmd` with its output captured, killing it after `limit` (a hung MPI job must fail the
/// test, not stall it). The pipes are drained while it runs.
pub(crate) fn run(mut cmd: Command, limit: Duration) -> Output {
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
pub(crate) fn show(out: &Output) -> String {
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

/// Whether the loaded MPI library says it was configured with MPI_T events
/// (`--enable-mpit-events`): there, a test about events must find them.
pub(crate) fn library_configured_with_events() -> bool {
    mpit_safe::quirks::configure_option("--enable-mpit-events").is_some_and(|v| v != "no")
}

/// Whether the loaded MPI library says it was configured with MPICH's receive-queue
/// performance variables (`--enable-mpit-pvars` with `all` or `recvq`): there, they must exist.
pub(crate) fn library_configured_with_recvq_pvars() -> bool {
    mpit_safe::quirks::configure_option("--enable-mpit-pvars")
        .is_some_and(|v| v.is_empty() || v.split(',').any(|c| c == "all" || c == "recvq"))
}

/// This process's resident set size in bytes (`/proc/self/statm`).
pub(crate) fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse().ok())
        .expect("statm's resident field");
    pages * 4096
}

/// Whether a child's output `out` carries `marker`, its line for "no such event type here"; if
/// so, checks that the library does not say it was configured with events (there the event type
/// must exist) and says what the test had nothing to do.
pub(crate) fn no_event_type(out: &str, marker: &str, event: &str, nothing: &str) -> bool {
    if !out.contains(marker) {
        return false;
    }
    assert!(
        !library_configured_with_events(),
        "this MPI says it was configured with --enable-mpit-events, but has no {event} event \
         type after MPI_Init"
    );
    println!("{}: {nothing}", mpit_safe::implementation());
    true
}
