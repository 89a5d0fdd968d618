//! The launch model (§2.5.1, §2.7) under `ptrace`, on x86-64 Linux.
//!
//! # How the starter is started and armed
//!
//! 1. `fork`; the child closes what it must not keep, resets its signal
//!    mask, and blocks reading a pipe. The tool `PTRACE_SEIZE`s it with
//!    `PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL`, then
//!    writes the pipe; the child `execve`s the starter. No instruction of
//!    the starter runs untraced, every thread it creates is traced (the
//!    thread that calls `MPIR_Breakpoint` need not be the main one), and
//!    if the tool dies the starter dies with it instead of hanging on a
//!    breakpoint. Forked children (the MPI processes) are not traced.
//! 2. At the exec stop only the executable and the dynamic linker are
//!    mapped. If the executable itself defines the MPIR symbols, they are
//!    armed now (step 4). Otherwise a breakpoint goes on the program's entry
//!    point (`AT_ENTRY` of `/proc/PID/auxv`): when it is hit, the dynamic
//!    linker has mapped and relocated every `DT_NEEDED` library and run
//!    their constructors, so Open MPI's `libopen-rte.so.40` (needed by
//!    `orterun`) is there.
//! 3. If the symbols are still missing (a starter that `dlopen`s its MPIR
//!    library), a breakpoint goes on the dynamic linker's `_dl_debug_state`,
//!    which it calls after every change of the link map (the `r_debug`
//!    protocol debuggers use); the symbols are searched again at each call.
//! 4. Arming: `MPIR_being_debugged = 1` (§2.7 step 7), `int3` on
//!    `MPIR_Breakpoint` (step 8), continue.
//! 5. At each stop there (an MPIR event, step 9) `MPIR_debug_state` is read:
//!    `MPIR_DEBUG_SPAWNED` reads the table (steps 10–14) and releases the
//!    MPI processes through `MPIR_debug_gate` where required (step 18);
//!    `MPIR_DEBUG_ABORTING` reads the abort string. The original byte is put
//!    back, the thread single-steps over it and the `int3` is re-inserted.
//! 6. Detaching: every thread is stopped (`PTRACE_INTERRUPT`), breakpoints
//!    are removed (threads stopped on one are moved back to it),
//!    `MPIR_being_debugged = 0` (step 7, "immediately before detaching"),
//!    and each thread is detached with any signal it was about to receive.
//!
//! Every wait has a deadline. On any error (or a panic in the event hook)
//! the starter is detached, sent `SIGTERM`, and `SIGKILL` if it does not
//! end within 5 s, then reaped: no stopped or orphaned starter is left.
//!
//! # Signals
//!
//! With [`LaunchOptions::interrupts`], a `SIGINT` or `SIGTERM` that a process
//! sent to the tool is sent on to the starter at the engine's next wait
//! (every few milliseconds, whether the starter is traced or already
//! detached, in [`Launched::wait`]): a starter stopped at `MPIR_Breakpoint`
//! gets it as soon as the tool lets it run, through a signal-delivery-stop
//! that the engine passes on, and `mpiexec` then ends its job as it does
//! without a tool. If the tool is killed instead (`SIGKILL`), the kernel
//! kills the starter (`PTRACE_O_EXITKILL`): it cannot stay stopped at a
//! breakpoint nobody will remove. The MPI processes it had spawned are the
//! guardian's: a process forked at each `MPIR_DEBUG_SPAWNED` event, holding
//! a pidfd of every descendant of the starter, that `SIGKILL`s them if the
//! tool dies (or gives the job up) before it detaches or the starter ends
//! (Open MPI 4.1's ranks otherwise end by themselves, except one caught in
//! `PMIx_Init`'s handshake, which waits forever: see `guard.rs`).
//!
//! # Files, by phase
//!
//! This file holds the public types, the entry points and the engine's state;
//! the engine's work is split by phase: `spawn` (steps 1–4: fork, seize,
//! exec, arm, breakpoints), `debug_state` (the event loop up to the awaited
//! `MPIR_debug_state`), `proctable` (step 5: the state, the table, the abort
//! string and the gates at an event) and `detach` (step 6, and ending an
//! abandoned starter).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::libc;
use nix::sys::ptrace;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, pipe2};

use super::Interrupts;
use super::ToolError;
use super::acquire::{Acquisition, AttachOptions, StarterSymbols, read_acquisition};
use super::mem::ProcessMemory;
use super::symbols::{ObjectCache, SymbolTable, target_layout};
use crate::layout::TargetLayout;
use crate::proctable::{Limits, read_abort_string, read_debug_state, read_int};
use crate::state::{BEING_DEBUGGED, DEBUG_GATE_OPEN, DebugState, NOT_BEING_DEBUGGED};
use crate::string::TargetString;

mod debug_state;
mod detach;
mod guard;
mod proctable;
mod spawn;

/// `AT_ENTRY` in the auxiliary vector: the program's entry point.
const AT_ENTRY: u64 = 9;
/// The x86 breakpoint instruction.
const INT3: u8 = 0xCC;
/// Grace period between `SIGTERM` and `SIGKILL` when abandoning a starter.
const TERM_GRACE: Duration = Duration::from_secs(5);
/// How long stopping all threads for a detach may take.
const STOP_ALL_TIMEOUT: Duration = Duration::from_secs(5);

/// When the MPI processes are released through `MPIR_debug_gate` (§2.8.8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GatePolicy {
    /// As §2.7 step 18 requires: in every MPI process, unless the starter
    /// defines `MPIR_partial_attach_ok` (then the implementation holds the
    /// processes itself; Open MPI 4.1 does).
    #[default]
    IfRequired,
    /// In every MPI process on this host that defines `MPIR_debug_gate`.
    Always,
    /// Never.
    Never,
}

/// What happened to one MPI process's `MPIR_debug_gate`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GateOutcome {
    /// The starter defines `MPIR_partial_attach_ok`: no gate to open.
    NotRequired,
    /// [`GatePolicy::Never`].
    Skipped,
    /// `MPIR_debug_gate` was set to 1.
    Opened {
        /// Its address in the process.
        addr: u64,
        /// The object that defines it (Open MPI: `libmpi.so.40`).
        object: Arc<Path>,
    },
    /// The process defined no `MPIR_debug_gate` before the gate timeout.
    NoGate,
    /// The process runs on another host (`host_name` is not this host).
    Remote,
    /// The process could not be reached or written.
    Failed(String),
}

/// The gate outcome of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateRelease {
    /// The rank.
    pub rank: usize,
    /// Its pid from the table.
    pub pid: i64,
    /// What happened.
    pub outcome: GateOutcome,
}

/// Where the tool found the MPIR symbols and armed `MPIR_Breakpoint`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArmPoint {
    /// At the exec stop: the executable defines them.
    Exec,
    /// At the program's entry point: a `DT_NEEDED` library defines them
    /// (Open MPI 4.1: `libopen-rte.so.40`).
    Entry,
    /// At a call of the dynamic linker's `_dl_debug_state`: a library
    /// loaded later (`dlopen`) defines them.
    DynamicLinker,
}

/// One MPIR event: a stop of the starter at `MPIR_Breakpoint` (§2.7 step 9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MpirEvent {
    /// `MPIR_debug_state` at the stop.
    pub state: DebugState,
    /// The thread that called `MPIR_Breakpoint`.
    pub thread: i32,
    /// Time since the starter was forked.
    pub at: Duration,
    /// `MPIR_proctable_size` at the stop.
    pub proctable_size: i64,
    /// For [`DebugState::Aborting`]: `MPIR_debug_abort_string` (§2.8.7),
    /// `None` if the starter defines none or it is NULL.
    pub abort_string: Option<TargetString>,
}

/// Times since the starter was forked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchTimings {
    /// The starter's `execve` completed.
    pub exec: Duration,
    /// `MPIR_Breakpoint` was armed.
    pub armed: Option<Duration>,
    /// The `MPIR_DEBUG_SPAWNED` event was read (table included).
    pub spawned: Option<Duration>,
    /// The tool detached (or the starter ended, for [`trace_to_exit`]).
    pub detached: Option<Duration>,
}

/// Options of the launch model.
#[derive(Debug)]
pub struct LaunchOptions {
    /// Deadline from the fork: for [`launch`], until the
    /// `MPIR_DEBUG_SPAWNED` event; for [`trace_to_exit`], until the starter
    /// ends. Default 60 s.
    pub timeout: Duration,
    /// When to set `MPIR_debug_gate`.
    pub gate: GatePolicy,
    /// How long to wait for an MPI process to define `MPIR_debug_gate`
    /// (its libraries may still be loading). Default 10 s.
    pub gate_timeout: Duration,
    /// Limits on what is decoded.
    pub limits: Limits,
    /// Variables added to (or replacing those of) the tool's environment.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory of the starter (default: the tool's).
    pub cwd: Option<PathBuf>,
    /// The starter's standard input (default: the tool's).
    pub stdin: Option<OwnedFd>,
    /// The starter's standard output (default: the tool's).
    pub stdout: Option<OwnedFd>,
    /// The starter's standard error (default: the tool's).
    pub stderr: Option<OwnedFd>,
    /// The tool's caught `SIGINT` and `SIGTERM`: those a process sent to the
    /// tool are forwarded to the starter (see the module documentation).
    /// Default: none (the tool's signals are its own business).
    pub interrupts: Option<Interrupts>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            timeout: Duration::from_secs(60),
            gate: GatePolicy::IfRequired,
            gate_timeout: Duration::from_secs(10),
            limits: Limits::DEFAULT,
            env: Vec::new(),
            cwd: None,
            stdin: None,
            stdout: None,
            stderr: None,
            interrupts: None,
        }
    }
}

/// A job acquired by [`launch`]: the tool has detached, the job runs on.
///
/// The starter is a child of the calling process: [`Launched::wait`] reaps
/// it and returns its exit status. Dropping a `Launched` that was not waited
/// for reaps the starter in a background thread.
#[derive(Debug)]
pub struct Launched {
    /// The job, read at the `MPIR_DEBUG_SPAWNED` event.
    pub acquisition: Acquisition,
    /// Every MPIR event up to and including `MPIR_DEBUG_SPAWNED`.
    pub events: Vec<MpirEvent>,
    /// `MPIR_debug_gate` per rank.
    pub gates: Vec<GateRelease>,
    /// Where the MPIR symbols were found.
    pub armed_at: ArmPoint,
    /// Times since the fork.
    pub timings: LaunchTimings,
    pid: Pid,
    status: Option<ExitStatus>,
    interrupts: Option<Interrupts>,
}

/// A starter traced until it ended ([`trace_to_exit`]).
#[derive(Debug)]
pub struct TracedRun {
    /// The job, read at the (last) `MPIR_DEBUG_SPAWNED` event, if any.
    pub acquisition: Option<Acquisition>,
    /// Every MPIR event, in order.
    pub events: Vec<MpirEvent>,
    /// `MPIR_debug_gate` per rank, at the (last) spawned event.
    pub gates: Vec<GateRelease>,
    /// Where the MPIR symbols were found (`None`: never armed).
    pub armed_at: Option<ArmPoint>,
    /// Times since the fork.
    pub timings: LaunchTimings,
    /// The starter's pid.
    pub pid: i32,
    /// The starter's exit status.
    pub status: ExitStatus,
}

fn exit_status(ws: WaitStatus) -> Option<ExitStatus> {
    match ws {
        WaitStatus::Exited(_, code) => Some(ExitStatus::from_raw((code & 0xff) << 8)),
        WaitStatus::Signaled(_, sig, core) => Some(ExitStatus::from_raw(
            sig as i32 | if core { 0x80 } else { 0 },
        )),
        _ => None,
    }
}

fn ptrace_err(op: &'static str, pid: Pid) -> impl FnOnce(Errno) -> ToolError {
    move |e| ToolError::Ptrace {
        op,
        pid: pid.as_raw(),
        source: e.into(),
    }
}

/// Sleeps a little longer each time, up to 5 ms.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Backoff(Duration::from_micros(50))
    }
    fn sleep(&mut self) {
        std::thread::sleep(self.0);
        self.0 = (self.0 * 2).min(Duration::from_millis(5));
    }
}

/// Polls `waitpid(pid, __WALL | WNOHANG)` until a status or the deadline.
fn wait_one(pid: Pid, deadline: Instant, what: &'static str) -> Result<WaitStatus, ToolError> {
    let start = Instant::now();
    let mut backoff = Backoff::new();
    loop {
        match waitpid(pid, Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {}
            Ok(ws) => return Ok(ws),
            Err(Errno::EINTR) => {}
            Err(e) => return Err(ptrace_err("waitpid", pid)(e)),
        }
        if Instant::now() >= deadline {
            return Err(ToolError::Timeout {
                waiting_for: what,
                after: deadline.saturating_duration_since(start),
            });
        }
        backoff.sleep();
    }
}

impl Launched {
    /// The starter's pid.
    pub fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    /// The starter's exit status if it has ended, without blocking.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, ToolError> {
        if self.status.is_none() {
            match waitpid(self.pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(ws) => self.status = exit_status(ws),
                Err(Errno::EINTR) => {}
                Err(e) => return Err(ptrace_err("waitpid", self.pid)(e)),
            }
        }
        Ok(self.status)
    }

    /// Waits for the starter to end (at most `timeout`, if given) and
    /// returns its exit status: the job's, for `mpiexec`. On timeout the
    /// starter keeps running ([`Launched::kill`] ends it). A signal to
    /// forward ([`LaunchOptions::interrupts`]) is sent to the starter
    /// meanwhile.
    pub fn wait(&mut self, timeout: Option<Duration>) -> Result<ExitStatus, ToolError> {
        let start = Instant::now();
        let mut backoff = Backoff::new();
        loop {
            if let Some(i) = self.interrupts {
                i.forward_to(self.pid.as_raw());
            }
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            if let Some(t) = timeout
                && start.elapsed() >= t
            {
                return Err(ToolError::Timeout {
                    waiting_for: "the starter to end",
                    after: t,
                });
            }
            backoff.sleep();
        }
    }

    /// Sends `SIGTERM` to the starter (`mpiexec` then ends the job), then
    /// `SIGKILL` if it has not ended after 5 s, and reaps it.
    pub fn kill(&mut self) -> Result<ExitStatus, ToolError> {
        if let Some(status) = self.try_wait()? {
            return Ok(status);
        }
        let _ = kill(self.pid, Signal::SIGTERM);
        match self.wait(Some(TERM_GRACE)) {
            Ok(status) => Ok(status),
            Err(_) => {
                let _ = kill(self.pid, Signal::SIGKILL);
                self.wait(Some(TERM_GRACE))
            }
        }
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        if self.status.is_none() {
            let pid = self.pid;
            // The starter runs on; reap it when it ends so it leaves no zombie.
            std::thread::spawn(move || while let Err(Errno::EINTR) = waitpid(pid, None) {});
        }
    }
}

/// The launch model with no event hook: see [`launch_with`].
pub fn launch<S: AsRef<OsStr>>(argv: &[S], opts: LaunchOptions) -> Result<Launched, ToolError> {
    launch_with(argv, opts, |_, _| {})
}

/// The launch model (§2.5.1, §2.7): starts the starter command line `argv`
/// (e.g. `["mpiexec", "-n", "4", "./app"]`) under the tool's control, waits
/// for the `MPIR_DEBUG_SPAWNED` event, reads the job, releases it and
/// detaches, leaving the job to run to completion (see the module
/// documentation for the steps).
///
/// `hook` is called at every MPIR event while the starter is stopped at
/// `MPIR_Breakpoint`, with the acquisition once it has been read: the job is
/// held until the hook returns (Open MPI 4.1 holds its MPI processes in
/// `MPI_Init` until the starter continues). The starter's exit status is
/// [`Launched::wait`]'s.
///
/// On error or timeout the starter is ended (see the module
/// documentation). x86-64 only.
pub fn launch_with<S, H>(
    argv: &[S],
    opts: LaunchOptions,
    mut hook: H,
) -> Result<Launched, ToolError>
where
    S: AsRef<OsStr>,
    H: FnMut(&MpirEvent, Option<&Acquisition>),
{
    let mut engine = Engine::start(argv, opts, &mut hook)?;
    match engine.run(Goal::Spawned)? {
        Outcome::Detached => {}
        Outcome::Ended(status) => {
            engine.finished = true;
            return Err(ToolError::StarterEnded {
                pid: engine.leader.as_raw(),
                status,
                waiting_for: "the MPIR_DEBUG_SPAWNED event",
            });
        }
    }
    engine.finished = true;
    // Detached at a spawned event: armed, and the table was read.
    let (Some(acquisition), Some(armed_at)) = (engine.acquisition.take(), engine.armed_at) else {
        return Err(ToolError::Unsupported(
            "detached without an acquisition".to_owned(),
        ));
    };
    Ok(Launched {
        acquisition,
        events: std::mem::take(&mut engine.events),
        gates: std::mem::take(&mut engine.gates),
        armed_at,
        timings: engine.timings,
        pid: engine.leader,
        status: None,
        interrupts: engine.interrupts,
    })
}

/// The launch model, staying attached until the starter ends: every MPIR
/// event is seen (`MPIR_DEBUG_SPAWNED`, `MPIR_DEBUG_ABORTING` with its
/// abort string, ...), and the starter's exit status is returned.
/// [`LaunchOptions::timeout`] bounds the whole run. `hook` as for
/// [`launch_with`].
pub fn trace_to_exit<S, H>(
    argv: &[S],
    opts: LaunchOptions,
    mut hook: H,
) -> Result<TracedRun, ToolError>
where
    S: AsRef<OsStr>,
    H: FnMut(&MpirEvent, Option<&Acquisition>),
{
    let mut engine = Engine::start(argv, opts, &mut hook)?;
    let status = match engine.run(Goal::Exit)? {
        Outcome::Ended(status) => status,
        Outcome::Detached => {
            return Err(ToolError::Unsupported(
                "detached before the starter ended".to_owned(),
            ));
        }
    };
    engine.finished = true;
    engine.timings.detached = Some(engine.start.elapsed());
    Ok(TracedRun {
        acquisition: engine.acquisition.take(),
        events: std::mem::take(&mut engine.events),
        gates: std::mem::take(&mut engine.gates),
        armed_at: engine.armed_at,
        timings: engine.timings,
        pid: engine.leader.as_raw(),
        status,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Goal {
    Spawned,
    Exit,
}

enum Outcome {
    Detached,
    Ended(ExitStatus),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    AwaitExec,
    AwaitEntry(u64),
    AwaitLibrary(u64),
    Armed,
}

type Hook<'h> = dyn FnMut(&MpirEvent, Option<&Acquisition>) + 'h;

struct Engine<'h> {
    leader: Pid,
    start: Instant,
    deadline: Instant,
    timeout: Duration,
    threads: BTreeSet<Pid>,
    /// Threads in a ptrace-stop the tool has seen and not resumed.
    stopped: BTreeSet<Pid>,
    /// Threads stopped by one of the breakpoints and not yet moved back
    /// onto it (their instruction pointer is one past it).
    at_breakpoint: BTreeMap<Pid, u64>,
    /// Breakpoint address -> the original byte.
    breakpoints: BTreeMap<u64, u8>,
    cache: ObjectCache,
    layout: TargetLayout,
    syms: Option<StarterSymbols>,
    phase: Phase,
    gate: GatePolicy,
    gate_timeout: Duration,
    limits: Limits,
    hook: &'h mut Hook<'h>,
    events: Vec<MpirEvent>,
    gates: Vec<GateRelease>,
    acquisition: Option<Acquisition>,
    armed_at: Option<ArmPoint>,
    timings: LaunchTimings,
    /// Set once the starter is detached or reaped; otherwise `Drop` ends it.
    finished: bool,
    /// Signals to forward to the starter.
    interrupts: Option<Interrupts>,
    /// Ends the job's processes if the tool dies holding them (armed at a
    /// spawned event, disarmed once detached or the starter ended).
    guardian: Option<guard::Guardian>,
}

fn mpir_filter(name: &str) -> bool {
    name.starts_with("MPIR_")
}

impl<'h> Engine<'h> {
    pub(super) fn pid(&self) -> i32 {
        self.leader.as_raw()
    }

    /// The job is the starter's again (detached, or the starter ended): the
    /// guardian stands down.
    pub(super) fn release_guardian(&mut self) {
        if let Some(g) = self.guardian.take() {
            g.disarm();
        }
    }

    pub(super) fn cont(&mut self, tid: Pid, sig: Option<Signal>) -> Result<(), ToolError> {
        self.stopped.remove(&tid);
        match ptrace::cont(tid, sig) {
            // Killed meanwhile: its exit will be reported.
            Ok(()) | Err(Errno::ESRCH) => Ok(()),
            Err(e) => Err(ptrace_err("PTRACE_CONT", tid)(e)),
        }
    }

    /// Waits for the next status of any traced thread, forwarding the
    /// tool's signals to the starter meanwhile.
    pub(super) fn wait_any(&mut self, what: &'static str) -> Result<(Pid, WaitStatus), ToolError> {
        let mut backoff = Backoff::new();
        loop {
            if let Some(i) = self.interrupts {
                // Queued if the starter is in a ptrace-stop; delivered (and reported here as a
                // signal-delivery-stop, then passed on) once it runs.
                i.forward_to(self.leader.as_raw());
            }
            let tids: Vec<Pid> = self.threads.iter().copied().collect();
            for tid in tids {
                match waitpid(tid, Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => {}
                    Ok(ws) => {
                        if exit_status(ws).is_none() {
                            self.stopped.insert(tid);
                        }
                        return Ok((tid, ws));
                    }
                    Err(Errno::ECHILD) => {
                        if tid == self.leader {
                            return Err(ptrace_err("waitpid", tid)(Errno::ECHILD));
                        }
                        self.threads.remove(&tid);
                    }
                    Err(e) => return Err(ptrace_err("waitpid", tid)(e)),
                }
            }
            if Instant::now() >= self.deadline {
                return Err(ToolError::Timeout {
                    waiting_for: what,
                    after: self.timeout,
                });
            }
            backoff.sleep();
        }
    }
}
