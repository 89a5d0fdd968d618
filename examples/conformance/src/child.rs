//! The one harness for running MPI code in a child process: the conformance sweep
//! ([`crate::run`]), the init/finalize ordering tests and the proofs of the quirk guards
//! (`tests/ordering.rs`, `tests/quirks.rs`) all use it.
//!
//! MPI may crash, abort or hang, `MPI_Init` runs once per process, and a singleton MPI process
//! may start helpers (Open MPI's `orted`, MPICH's `hydra_pmi_proxy`) that inherit its pipes. So
//! the parent re-executes a program (itself: [`test_command`] for a test binary, or a tool such
//! as `mpit-conform`) with an environment variable or argument naming the scenario, and
//! [`run`] starts it in its own process group, feeds its stdout and stderr line by line to
//! [`Lines`] sinks as they arrive (so a full pipe never blocks it, and a crash loses nothing
//! already printed), kills the whole group when it outlives its timeout or leaves helpers
//! holding its pipes, and says how it ended ([`Ended`]: an exit code, a signal with its name, a
//! timeout). The child reports progress with [`say`]: one flushed line before each call that
//! may crash, so the parent knows where it died.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a parent keeps of one output stream of a child, fed line by line as the child writes
/// (each line without its newline, invalid UTF-8 replaced).
pub trait Lines: Default + Send + 'static {
    /// One line of the child's output.
    fn line(&mut self, line: &str);
}

/// All of a stream's text, each line followed by `\n`.
#[derive(Debug, Default, Clone)]
pub struct Text(pub String);

impl Lines for Text {
    fn line(&mut self, line: &str) {
        self.0.push_str(line);
        self.0.push('\n');
    }
}

/// How a child process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Exit(i32),
    /// A signal killed it.
    Signal {
        /// The signal's number.
        signal: i32,
        /// Whether it dumped core.
        core_dumped: bool,
    },
    /// It was still running after the timeout, and its process group was killed.
    Timeout(Duration),
}

impl Ended {
    fn from_status(s: ExitStatus) -> Ended {
        match s.signal() {
            Some(signal) => Ended::Signal {
                signal,
                core_dumped: s.core_dumped(),
            },
            None => Ended::Exit(s.code().unwrap_or(-1)),
        }
    }

    /// Whether it exited with 0.
    pub fn success(self) -> bool {
        self == Ended::Exit(0)
    }

    /// The exit code, if it exited.
    pub fn code(self) -> Option<i32> {
        match self {
            Ended::Exit(c) => Some(c),
            _ => None,
        }
    }
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Ended::Exit(c) => write!(f, "exit code {c}"),
            Ended::Signal {
                signal,
                core_dumped,
            } => {
                match signal_name(signal) {
                    Some(name) => write!(f, "{name} (signal {signal})")?,
                    None => write!(f, "signal {signal}")?,
                }
                if core_dumped {
                    f.write_str(" (core dumped)")?;
                }
                Ok(())
            }
            Ended::Timeout(after) => write!(f, "killed after {} s (timeout)", after.as_secs()),
        }
    }
}

/// The Linux name of a signal that typically ends a crashing MPI process (`None`: another).
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// What one child process did.
#[derive(Debug)]
pub struct Run<O, E> {
    /// How it ended.
    pub ended: Ended,
    /// Its exit status (`None`: it timed out).
    pub status: Option<ExitStatus>,
    /// From its start to its end (or to the kill).
    pub elapsed: Duration,
    /// What was kept of its stdout.
    pub stdout: O,
    /// What was kept of its stderr.
    pub stderr: E,
}

/// How long a parent waits, after the child ended, for helpers it started to release its
/// pipes before killing the process group.
const LINGER: Duration = Duration::from_secs(5);

/// Runs `cmd` as a child in its own process group, with stdin from `/dev/null` and stdout and
/// stderr fed to an `O` and an `E` line by line; kills the group after `timeout`. `Err`: the
/// program could not be started.
pub fn run<O: Lines, E: Lines>(cmd: &mut Command, timeout: Duration) -> std::io::Result<Run<O, E>> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let (out, out_reader) = feed::<O>(child.stdout.take());
    let (err, err_reader) = feed::<E>(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                kill_group(&mut child);
                let _ = child.wait();
                break None;
            }
        }
    };
    let elapsed = start.elapsed();
    // Helpers the child started may still hold its pipes: give them a moment, then end them.
    let readers_done = |deadline: Duration| {
        let t = Instant::now();
        while !(out_reader.is_finished() && err_reader.is_finished()) {
            if t.elapsed() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    };
    if !readers_done(LINGER) {
        kill_group(&mut child);
        readers_done(Duration::from_secs(2));
    }
    Ok(Run {
        ended: status.map_or(Ended::Timeout(elapsed), Ended::from_status),
        status,
        elapsed,
        stdout: take(out),
        stderr: take(err),
    })
}

/// Feeds one pipe of the child to a sink in a thread.
fn feed<S: Lines>(pipe: Option<impl Read + Send + 'static>) -> (Arc<Mutex<S>>, JoinHandle<()>) {
    let sink = Arc::new(Mutex::new(S::default()));
    let fed = Arc::clone(&sink);
    let handle = std::thread::spawn(move || {
        let Some(pipe) = pipe else { return };
        let mut reader = BufReader::new(pipe);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf);
                    let line = line.strip_suffix('\n').unwrap_or(&line);
                    fed.lock().unwrap_or_else(|p| p.into_inner()).line(line);
                }
            }
        }
    });
    (sink, handle)
}

/// The sink's content (taken if a reader thread is still stuck on a helper's pipe).
fn take<S: Lines>(sink: Arc<Mutex<S>>) -> S {
    match Arc::try_unwrap(sink) {
        Ok(m) => m.into_inner().unwrap_or_else(|p| p.into_inner()),
        Err(shared) => std::mem::take(&mut *shared.lock().unwrap_or_else(|p| p.into_inner())),
    }
}

/// Kills the child's process group (the child and any helper it started, e.g. an MPI daemon).
fn kill_group(child: &mut Child) {
    // The child leads its own process group (`process_group(0)`), so its pid is the group id.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
}

/// Prints one line on stdout and flushes it, so the parent sees it even if the next call
/// crashes the process.
pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    // A lost progress line only makes the report less precise; nothing to do about it here.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The scenario this process was started to run (the value of `env`), or `None` in the parent.
pub fn scenario(env: &str) -> Option<String> {
    std::env::var(env).ok()
}

/// This test binary re-executed to run only its test `test`, on one thread, its output
/// uncaptured, as the child for `scenario` (the value of `env`, see [`scenario`]).
pub fn test_command(test: &str, env: &str, scenario: &str) -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(env, scenario);
    cmd
}

/// A timeout in seconds from the environment variable `env`, else `default`.
pub fn timeout_from_env(env: &str, default: Duration) -> Duration {
    std::env::var(env)
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(default, Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration) -> Run<Text, Text> {
        run(Command::new("sh").args(["-c", script]), timeout).expect("sh")
    }

    #[test]
    fn exits_signals_and_timeouts_are_told_apart() {
        let r = sh(
            "echo out; echo err >&2; printf 'no newline'",
            Duration::from_secs(20),
        );
        assert!(r.ended.success(), "{}", r.ended);
        assert_eq!(r.stdout.0, "out\nno newline\n");
        assert_eq!(r.stderr.0, "err\n");

        let r = sh("exit 3", Duration::from_secs(20));
        assert_eq!((r.ended, r.ended.code()), (Ended::Exit(3), Some(3)));
        assert_eq!(r.ended.to_string(), "exit code 3");

        let r = sh("echo before; kill -SEGV $$", Duration::from_secs(20));
        assert!(
            matches!(r.ended, Ended::Signal { signal: 11, .. }),
            "{}",
            r.ended
        );
        assert!(r.ended.to_string().starts_with("SIGSEGV (signal 11)"));
        assert_eq!(r.stdout.0, "before\n", "what was printed before the crash");

        // A helper that keeps the pipes open is killed with the group.
        let start = Instant::now();
        let r = sh("sleep 30 & sleep 30", Duration::from_millis(300));
        assert!(matches!(r.ended, Ended::Timeout(_)), "{}", r.ended);
        assert_eq!(r.status, None);
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
