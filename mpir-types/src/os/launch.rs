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

use super::ToolError;
use super::acquire::{Acquisition, AttachOptions, StarterSymbols, read_acquisition};
use super::mem::ProcessMemory;
use super::symbols::{ObjectCache, SymbolTable, target_layout};
use crate::layout::TargetLayout;
use crate::proctable::{Limits, read_abort_string, read_debug_state, read_int};
use crate::state::{BEING_DEBUGGED, DEBUG_GATE_OPEN, DebugState, NOT_BEING_DEBUGGED};
use crate::string::TargetString;

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
    /// starter keeps running ([`Launched::kill`] ends it).
    pub fn wait(&mut self, timeout: Option<Duration>) -> Result<ExitStatus, ToolError> {
        let start = Instant::now();
        let mut backoff = Backoff::new();
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            if let Some(t) = timeout {
                if start.elapsed() >= t {
                    return Err(ToolError::Timeout {
                        waiting_for: "the starter to end",
                        after: t,
                    });
                }
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
}

fn mpir_filter(name: &str) -> bool {
    name.starts_with("MPIR_")
}

/// The program `argv0` names: as is if it contains a `/`, else the first
/// executable file of that name in `PATH`.
fn resolve_program(argv0: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf, ToolError> {
    use std::os::unix::fs::PermissionsExt;
    if argv0.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(argv0));
    }
    let path_var = path_var.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(path_var)
        .map(|dir| dir.join(argv0))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .ok_or_else(|| ToolError::Exec {
            program: argv0.to_string_lossy().into_owned(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
}

fn cstring(bytes: Vec<u8>, what: &str) -> Result<CString, ToolError> {
    CString::new(bytes)
        .map_err(|_| ToolError::InvalidArgument(format!("{what} contains a NUL byte")))
}

/// Everything the child needs after `fork`, prepared before it: the child
/// may only make async-signal-safe calls (the tool may be multithreaded).
struct ExecPlan {
    path: CString,
    _argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    _env: Vec<CString>,
    env_ptrs: Vec<*const libc::c_char>,
    cwd: Option<CString>,
    stdio: [Option<RawFd>; 3],
}

impl ExecPlan {
    fn new<S: AsRef<OsStr>>(argv: &[S], opts: &LaunchOptions) -> Result<Self, ToolError> {
        let Some(argv0) = argv.first() else {
            return Err(ToolError::InvalidArgument("empty command line".to_owned()));
        };
        let mut env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
        for (k, v) in &opts.env {
            env.insert(k.clone(), v.clone());
        }
        let program = resolve_program(
            argv0.as_ref(),
            env.get(OsStr::new("PATH")).map(|p| p.as_os_str()),
        )?;
        let path = cstring(program.into_os_string().into_vec(), "the program path")?;
        let argv: Vec<CString> = argv
            .iter()
            .map(|a| cstring(a.as_ref().as_bytes().to_vec(), "an argument"))
            .collect::<Result<_, _>>()?;
        let env: Vec<CString> = env
            .into_iter()
            .map(|(k, v)| {
                let mut kv = k.into_vec();
                kv.push(b'=');
                kv.extend(v.into_vec());
                cstring(kv, "an environment variable")
            })
            .collect::<Result<_, _>>()?;
        let ptrs = |v: &[CString]| {
            v.iter()
                .map(|c| c.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        let cwd = match &opts.cwd {
            Some(d) => Some(cstring(
                d.clone().into_os_string().into_vec(),
                "the working directory",
            )?),
            None => None,
        };
        Ok(ExecPlan {
            path,
            argv_ptrs: ptrs(&argv),
            _argv: argv,
            env_ptrs: ptrs(&env),
            _env: env,
            cwd,
            stdio: [
                opts.stdin.as_ref().map(|f| f.as_raw_fd()),
                opts.stdout.as_ref().map(|f| f.as_raw_fd()),
                opts.stderr.as_ref().map(|f| f.as_raw_fd()),
            ],
        })
    }
}

/// The child's side of the fork: set up, wait for the tool's go, exec.
///
/// # Safety
///
/// Must be called only in the child of `fork`, with file descriptors and
/// pointers prepared by the parent before the fork ([`ExecPlan`] keeps the
/// strings alive). It makes only async-signal-safe calls and never returns.
unsafe fn exec_child(
    plan: &ExecPlan,
    go_read: RawFd,
    go_write: RawFd,
    err_read: RawFd,
    err_write: RawFd,
) -> ! {
    // SAFETY: (for every call below) async-signal-safe libc calls on file
    // descriptors and NUL-terminated strings prepared before the fork; the
    // sigset is a local initialised by sigemptyset.
    unsafe {
        libc::close(go_write);
        libc::close(err_read);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let fail = |err_write: RawFd| -> ! {
            let errno = *libc::__errno_location();
            let bytes = errno.to_ne_bytes();
            libc::write(err_write, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(127)
        };
        for (target, fd) in plan.stdio.iter().enumerate() {
            if let Some(fd) = *fd {
                if fd != target as RawFd && libc::dup2(fd, target as RawFd) < 0 {
                    fail(err_write);
                }
            }
        }
        if let Some(cwd) = &plan.cwd {
            if libc::chdir(cwd.as_ptr()) != 0 {
                fail(err_write);
            }
        }
        let mut byte = 0u8;
        loop {
            let n = libc::read(go_read, (&raw mut byte).cast(), 1);
            if n == 1 {
                break;
            }
            if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            libc::_exit(127);
        }
        libc::execve(
            plan.path.as_ptr(),
            plan.argv_ptrs.as_ptr(),
            plan.env_ptrs.as_ptr(),
        );
        fail(err_write)
    }
}

/// Forks, seizes and execs the starter; returns its pid at the exec stop's
/// doorstep (the exec event is still to be waited for).
fn spawn_seized(plan: &ExecPlan, program: &str) -> Result<Pid, ToolError> {
    let pipe = || pipe2(OFlag::O_CLOEXEC).map_err(|e| ToolError::io("pipe2", e.into()));
    let (go_read, go_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    // SAFETY: the child runs only `exec_child`, which makes async-signal-safe
    // calls on data prepared before the fork, then execs or exits.
    let fork = unsafe { libc::fork() };
    if fork < 0 {
        return Err(ToolError::io("fork", std::io::Error::last_os_error()));
    }
    if fork == 0 {
        // SAFETY: this is the child of the fork above; `plan` and the pipe
        // descriptors were prepared before it.
        unsafe {
            exec_child(
                plan,
                go_read.as_raw_fd(),
                go_write.as_raw_fd(),
                err_read.as_raw_fd(),
                err_write.as_raw_fd(),
            )
        }
    }
    let pid = Pid::from_raw(fork);
    drop(go_read);
    drop(err_write);
    let options = ptrace::Options::PTRACE_O_TRACEEXEC
        | ptrace::Options::PTRACE_O_TRACECLONE
        | ptrace::Options::PTRACE_O_EXITKILL;
    if let Err(e) = ptrace::seize(pid, options) {
        let _ = kill(pid, Signal::SIGKILL);
        let _ = waitpid(pid, None);
        return Err(ptrace_err("PTRACE_SEIZE", pid)(e));
    }
    // Go: the child execs. EOF on the error pipe means the exec succeeded.
    let _ = nix::unistd::write(&go_write, &[1]);
    drop(go_write);
    let mut buf = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match nix::unistd::read(&err_read, &mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(Errno::EINTR) => {}
            Err(_) => break,
        }
    }
    if got == 4 {
        // The child reported the error of chdir, dup2 or execve and exits.
        while let Err(Errno::EINTR) = waitpid(pid, Some(WaitPidFlag::__WALL)) {}
        return Err(ToolError::Exec {
            program: program.to_owned(),
            source: std::io::Error::from_raw_os_error(i32::from_ne_bytes(buf)),
        });
    }
    Ok(pid)
}

/// The program's entry point from `/proc/PID/auxv`.
fn entry_point(pid: Pid, layout: &TargetLayout) -> Result<u64, ToolError> {
    let what = format!("/proc/{pid}/auxv");
    let data = std::fs::read(&what).map_err(|e| ToolError::io(what, e))?;
    let w = usize::from(layout.pointer_width());
    data.chunks_exact(2 * w)
        .map(|pair| {
            (
                layout.decode_pointer(&pair[..w]).unwrap_or_default(),
                layout.decode_pointer(&pair[w..]).unwrap_or_default(),
            )
        })
        .take_while(|(k, _)| *k != 0)
        .find(|(k, _)| *k == AT_ENTRY)
        .map(|(_, v)| v)
        .ok_or_else(|| ToolError::Unsupported(format!("process {pid} has no AT_ENTRY")))
}

fn is_local_host(host: &[u8]) -> bool {
    if matches!(host, b"localhost" | b"127.0.0.1" | b"::1") {
        return true;
    }
    let Ok(ours) = nix::unistd::gethostname() else {
        return false;
    };
    let ours = ours.as_bytes();
    let first = |h: &[u8]| h.split(|b| *b == b'.').next().unwrap_or_default().to_vec();
    host == ours || first(host) == first(ours)
}

impl<'h> Engine<'h> {
    fn start<S: AsRef<OsStr>>(
        argv: &[S],
        opts: LaunchOptions,
        hook: &'h mut Hook<'h>,
    ) -> Result<Self, ToolError> {
        let plan = ExecPlan::new(argv, &opts)?;
        let program = argv[0].as_ref().to_string_lossy().into_owned();
        let start = Instant::now();
        let leader = spawn_seized(&plan, &program)?;
        // The child has its copies of the standard streams now.
        drop(plan);
        let mut engine = Engine {
            leader,
            start,
            deadline: start + opts.timeout,
            timeout: opts.timeout,
            threads: BTreeSet::from([leader]),
            stopped: BTreeSet::new(),
            at_breakpoint: BTreeMap::new(),
            breakpoints: BTreeMap::new(),
            cache: ObjectCache::default(),
            layout: TargetLayout::host(),
            syms: None,
            phase: Phase::AwaitExec,
            gate: opts.gate,
            gate_timeout: opts.gate_timeout,
            limits: opts.limits,
            hook,
            events: Vec::new(),
            gates: Vec::new(),
            acquisition: None,
            armed_at: None,
            timings: LaunchTimings::default(),
            finished: false,
        };
        drop(opts);
        // The first stop is the exec event.
        match engine.run_until_exec()? {
            None => Ok(engine),
            Some(status) => {
                engine.finished = true;
                Err(ToolError::StarterEnded {
                    pid: leader.as_raw(),
                    status,
                    waiting_for: "its exec",
                })
            }
        }
    }

    fn pid(&self) -> i32 {
        self.leader.as_raw()
    }

    fn cont(&mut self, tid: Pid, sig: Option<Signal>) -> Result<(), ToolError> {
        self.stopped.remove(&tid);
        match ptrace::cont(tid, sig) {
            // Killed meanwhile: its exit will be reported.
            Ok(()) | Err(Errno::ESRCH) => Ok(()),
            Err(e) => Err(ptrace_err("PTRACE_CONT", tid)(e)),
        }
    }

    /// Waits for the next status of any traced thread.
    fn wait_any(&mut self, what: &'static str) -> Result<(Pid, WaitStatus), ToolError> {
        let mut backoff = Backoff::new();
        loop {
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

    fn run_until_exec(&mut self) -> Result<Option<ExitStatus>, ToolError> {
        loop {
            let (tid, ws) = self.wait_any("the starter's exec")?;
            match ws {
                WaitStatus::PtraceEvent(_, _, e)
                    if e == ptrace::Event::PTRACE_EVENT_EXEC as i32 =>
                {
                    self.on_exec(tid)?;
                    self.cont(tid, None)?;
                    return Ok(None);
                }
                ws if tid == self.leader && exit_status(ws).is_some() => {
                    return Ok(exit_status(ws));
                }
                WaitStatus::Stopped(_, sig) => self.cont(tid, Some(sig))?,
                _ => self.cont(tid, None)?,
            }
        }
    }

    /// A new program image: forget the old breakpoints, find the symbols or
    /// break at the entry point.
    fn on_exec(&mut self, tid: Pid) -> Result<(), ToolError> {
        self.timings.exec = self.start.elapsed();
        self.breakpoints.clear();
        self.syms = None;
        self.threads.insert(self.leader);
        self.layout = target_layout(self.pid())?;
        if self.try_arm(tid, ArmPoint::Exec)? {
            return Ok(());
        }
        let entry = entry_point(self.leader, &self.layout)?;
        self.insert_breakpoint(tid, entry)?;
        self.phase = Phase::AwaitEntry(entry);
        Ok(())
    }

    /// Looks the starter's symbols up; if they are all there, sets
    /// `MPIR_being_debugged` and breaks at `MPIR_Breakpoint`.
    fn try_arm(&mut self, tid: Pid, at: ArmPoint) -> Result<bool, ToolError> {
        let table = SymbolTable::build(self.pid(), &mpir_filter, Some(&mut self.cache))?;
        let syms = match StarterSymbols::find(&table) {
            Ok(s) => s,
            Err(ToolError::NotAStarter { .. }) => return Ok(false),
            Err(e) => return Err(e),
        };
        if let Some(addr) = syms.being_debugged {
            ProcessMemory::new(self.pid())
                .write_int(&self.layout, addr, i64::from(BEING_DEBUGGED))
                .map_err(|source| ToolError::Write {
                    pid: self.pid(),
                    symbol: "MPIR_being_debugged",
                    source,
                })?;
        }
        self.insert_breakpoint(tid, syms.breakpoint)?;
        self.syms = Some(syms);
        self.phase = Phase::Armed;
        self.armed_at = Some(at);
        self.timings.armed = Some(self.start.elapsed());
        Ok(true)
    }

    /// Replaces the byte at `addr` through the stopped thread `tid`; returns
    /// the old byte. Works on read-only text (`PTRACE_POKEDATA` forces it)
    /// and never crosses a page (aligned words).
    fn poke_byte(&self, tid: Pid, addr: u64, byte: u8) -> Result<u8, ToolError> {
        let word_addr = addr & !7;
        let shift = 8 * (addr - word_addr);
        let ptr = word_addr as usize as ptrace::AddressType;
        let word = ptrace::read(tid, ptr).map_err(ptrace_err("PTRACE_PEEKDATA", tid))? as u64;
        let old = (word >> shift) as u8;
        let new = (word & !(0xff << shift)) | (u64::from(byte) << shift);
        ptrace::write(tid, ptr, new as libc::c_long).map_err(ptrace_err("PTRACE_POKEDATA", tid))?;
        Ok(old)
    }

    fn insert_breakpoint(&mut self, tid: Pid, addr: u64) -> Result<(), ToolError> {
        if !self.breakpoints.contains_key(&addr) {
            let old = self.poke_byte(tid, addr, INT3)?;
            self.breakpoints.insert(addr, old);
        }
        Ok(())
    }

    fn remove_breakpoint(&mut self, tid: Pid, addr: u64) -> Result<(), ToolError> {
        if let Some(old) = self.breakpoints.remove(&addr) {
            self.poke_byte(tid, addr, old)?;
        }
        Ok(())
    }

    /// If `tid` stopped on one of the breakpoints, its address.
    fn breakpoint_hit(&self, tid: Pid) -> Result<Option<u64>, ToolError> {
        let regs = ptrace::getregs(tid).map_err(ptrace_err("PTRACE_GETREGS", tid))?;
        let addr = regs.rip.wrapping_sub(1);
        Ok(self.breakpoints.contains_key(&addr).then_some(addr))
    }

    /// Moves `tid` back onto the breakpoint instruction at `addr`.
    fn rewind(&mut self, tid: Pid, addr: u64) -> Result<(), ToolError> {
        self.at_breakpoint.remove(&tid);
        let mut regs = ptrace::getregs(tid).map_err(ptrace_err("PTRACE_GETREGS", tid))?;
        regs.rip = addr;
        ptrace::setregs(tid, regs).map_err(ptrace_err("PTRACE_SETREGS", tid))
    }

    /// Executes the original instruction under the breakpoint at `addr` in
    /// `tid` and re-inserts the breakpoint; returns a signal that arrived
    /// meanwhile, to deliver when continuing.
    fn step_over(&mut self, tid: Pid, addr: u64) -> Result<Option<Signal>, ToolError> {
        self.remove_breakpoint(tid, addr)?;
        self.rewind(tid, addr)?;
        let mut pending = None;
        self.stopped.remove(&tid);
        ptrace::step(tid, None).map_err(ptrace_err("PTRACE_SINGLESTEP", tid))?;
        self.stopped.insert(tid);
        loop {
            match wait_one(tid, self.deadline, "a single step")? {
                WaitStatus::Stopped(_, Signal::SIGTRAP) => break,
                WaitStatus::Stopped(_, sig) => pending = Some(sig),
                WaitStatus::PtraceEvent(_, _, e)
                    if e == ptrace::Event::PTRACE_EVENT_CLONE as i32 =>
                {
                    if let Ok(new) = ptrace::getevent(tid) {
                        self.threads.insert(Pid::from_raw(new as i32));
                    }
                }
                ws if exit_status(ws).is_some() => {
                    self.threads.remove(&tid);
                    return Ok(None);
                }
                _ => {}
            }
            ptrace::step(tid, None).map_err(ptrace_err("PTRACE_SINGLESTEP", tid))?;
        }
        self.insert_breakpoint(tid, addr)?;
        Ok(pending)
    }

    fn run(&mut self, goal: Goal) -> Result<Outcome, ToolError> {
        let what = match goal {
            Goal::Spawned => "the MPIR_DEBUG_SPAWNED event",
            Goal::Exit => "the starter to end",
        };
        loop {
            let (tid, ws) = self.wait_any(what)?;
            match ws {
                WaitStatus::Exited(..) | WaitStatus::Signaled(..) => {
                    self.threads.remove(&tid);
                    if tid == self.leader {
                        // Reap what is left (threads report their ends).
                        self.finished = true;
                        return Ok(Outcome::Ended(exit_status(ws).unwrap_or_default()));
                    }
                }
                WaitStatus::PtraceEvent(_, sig, event) => {
                    if event == ptrace::Event::PTRACE_EVENT_CLONE as i32 {
                        let new =
                            ptrace::getevent(tid).map_err(ptrace_err("PTRACE_GETEVENTMSG", tid))?;
                        self.threads.insert(Pid::from_raw(new as i32));
                        self.cont(tid, None)?;
                    } else if event == ptrace::Event::PTRACE_EVENT_EXEC as i32 {
                        self.on_exec(tid)?;
                        self.cont(tid, None)?;
                    } else if event == ptrace::Event::PTRACE_EVENT_STOP as i32
                        && sig != Signal::SIGTRAP
                    {
                        // A group-stop (SIGSTOP and friends): stay stopped as
                        // without a tracer, but let SIGCONT be reported.
                        // SAFETY: PTRACE_LISTEN takes no pointers; `tid` is a
                        // tracee in a group-stop.
                        let _ = unsafe { libc::ptrace(libc::PTRACE_LISTEN, tid.as_raw(), 0, 0) };
                        self.stopped.remove(&tid);
                    } else {
                        // A new thread's first stop, or an interrupt.
                        self.cont(tid, None)?;
                    }
                }
                WaitStatus::Stopped(_, Signal::SIGTRAP) => match self.breakpoint_hit(tid)? {
                    Some(addr) => {
                        self.at_breakpoint.insert(tid, addr);
                        if let Some(outcome) = self.on_breakpoint(tid, addr, goal)? {
                            return Ok(outcome);
                        }
                    }
                    None => self.cont(tid, Some(Signal::SIGTRAP))?,
                },
                WaitStatus::Stopped(_, sig) => self.cont(tid, Some(sig))?,
                _ => self.cont(tid, None)?,
            }
        }
    }

    fn on_breakpoint(
        &mut self,
        tid: Pid,
        addr: u64,
        goal: Goal,
    ) -> Result<Option<Outcome>, ToolError> {
        match self.phase {
            Phase::AwaitEntry(entry) if addr == entry => {
                self.remove_breakpoint(tid, addr)?;
                self.rewind(tid, addr)?;
                if !self.try_arm(tid, ArmPoint::Entry)? {
                    let table =
                        SymbolTable::of_process_matching(self.pid(), |n| n == "_dl_debug_state")?;
                    let Some(dl) = table.lookup("_dl_debug_state").map(|s| s.addr) else {
                        // No dynamic linker to wait on: the starter has no MPIR symbols.
                        let table =
                            SymbolTable::build(self.pid(), &mpir_filter, Some(&mut self.cache))?;
                        return Err(StarterSymbols::find(&table).err().unwrap_or(
                            ToolError::Unsupported("MPIR symbols vanished".to_owned()),
                        ));
                    };
                    self.insert_breakpoint(tid, dl)?;
                    self.phase = Phase::AwaitLibrary(dl);
                }
                self.cont(tid, None)?;
            }
            Phase::AwaitLibrary(dl) if addr == dl => {
                let armed = self.try_arm(tid, ArmPoint::DynamicLinker)?;
                if armed {
                    self.remove_breakpoint(tid, addr)?;
                    self.rewind(tid, addr)?;
                    self.cont(tid, None)?;
                } else {
                    let sig = self.step_over(tid, addr)?;
                    self.cont(tid, sig)?;
                }
            }
            Phase::Armed if self.syms.as_ref().is_some_and(|s| s.breakpoint == addr) => {
                let state = self.on_event(tid)?;
                if goal == Goal::Spawned && state == DebugState::Spawned {
                    self.rewind(tid, addr)?;
                    self.detach_all()?;
                    self.timings.detached = Some(self.start.elapsed());
                    return Ok(Some(Outcome::Detached));
                }
                let sig = self.step_over(tid, addr)?;
                self.cont(tid, sig)?;
            }
            // A breakpoint of an earlier phase that another thread hit:
            // run the original instruction.
            _ => {
                let sig = self.step_over(tid, addr)?;
                self.cont(tid, sig)?;
            }
        }
        Ok(None)
    }

    /// An MPIR event: read the state and what it announces, release the
    /// gates, call the hook.
    fn on_event(&mut self, tid: Pid) -> Result<DebugState, ToolError> {
        let at = self.start.elapsed();
        let pid = self.pid();
        let Some(syms) = self.syms.clone() else {
            return Ok(DebugState::Null);
        };
        let mem = ProcessMemory::new(pid);
        let decode = |source| ToolError::Decode { pid, source };
        let state = read_debug_state(&mem, &self.layout, syms.debug_state).map_err(decode)?;
        let proctable_size = read_int(&mem, &self.layout, syms.proctable_size).map_err(decode)?;
        let mut abort_string = None;
        match state {
            DebugState::Spawned => {
                let opts = AttachOptions {
                    limits: self.limits,
                    max_attempts: 1,
                };
                let acq = read_acquisition(pid, &mem, self.layout, &syms, &opts)?;
                self.timings.spawned = Some(self.start.elapsed());
                self.gates = self.release_gates(&acq);
                self.acquisition = Some(acq);
            }
            DebugState::Aborting => {
                if let Some(var) = syms.abort_string {
                    abort_string =
                        read_abort_string(&mem, &self.layout, var, self.limits.max_string_len)
                            .map_err(decode)?;
                }
            }
            _ => {}
        }
        let event = MpirEvent {
            state,
            thread: tid.as_raw(),
            at,
            proctable_size,
            abort_string,
        };
        (self.hook)(&event, self.acquisition.as_ref());
        self.events.push(event);
        Ok(state)
    }

    /// §2.7 step 18: set `MPIR_debug_gate = 1` in the MPI processes, as the
    /// policy says.
    fn release_gates(&self, acq: &Acquisition) -> Vec<GateRelease> {
        let deadline = Instant::now() + self.gate_timeout;
        acq.ranks()
            .map(|(rank, p)| {
                let outcome = match self.gate {
                    GatePolicy::Never => GateOutcome::Skipped,
                    GatePolicy::IfRequired if acq.capabilities.supports_partial_attach => {
                        GateOutcome::NotRequired
                    }
                    _ if !is_local_host(p.host_name.as_bytes()) => GateOutcome::Remote,
                    _ => open_gate(p.pid, deadline),
                };
                GateRelease {
                    rank,
                    pid: p.pid,
                    outcome,
                }
            })
            .collect()
    }

    /// Stops every thread, removes the breakpoints, clears
    /// `MPIR_being_debugged`, moves threads stopped on a breakpoint back
    /// onto the restored instruction, and detaches.
    fn detach_all(&mut self) -> Result<(), ToolError> {
        let mut held: BTreeMap<Pid, Option<Signal>> =
            self.stopped.iter().map(|t| (*t, None)).collect();
        let deadline = Instant::now() + STOP_ALL_TIMEOUT;
        let mut work: Vec<Pid> = self
            .threads
            .iter()
            .filter(|t| !held.contains_key(t))
            .copied()
            .collect();
        while let Some(t) = work.pop() {
            match ptrace::interrupt(t) {
                Ok(()) => {}
                Err(Errno::ESRCH) => {
                    self.threads.remove(&t);
                    continue;
                }
                Err(e) => return Err(ptrace_err("PTRACE_INTERRUPT", t)(e)),
            }
            let ws = wait_one(t, deadline, "the starter's threads to stop")?;
            match ws {
                WaitStatus::PtraceEvent(_, _, e) => {
                    if e == ptrace::Event::PTRACE_EVENT_CLONE as i32 {
                        if let Ok(new) = ptrace::getevent(t) {
                            let new = Pid::from_raw(new as i32);
                            self.threads.insert(new);
                            work.push(new);
                        }
                    }
                    held.insert(t, None);
                }
                WaitStatus::Stopped(_, sig) => match self.breakpoint_hit(t)? {
                    // Stopped on a breakpoint: the SIGTRAP is the tool's.
                    Some(addr) if sig == Signal::SIGTRAP => {
                        self.at_breakpoint.insert(t, addr);
                        held.insert(t, None);
                    }
                    _ => {
                        held.insert(t, Some(sig));
                    }
                },
                ws if exit_status(ws).is_some() => {
                    self.threads.remove(&t);
                    if t == self.leader {
                        // The starter ended meanwhile: nothing to detach.
                        self.finished = true;
                        return Ok(());
                    }
                }
                _ => {
                    held.insert(t, None);
                }
            }
            self.stopped.insert(t);
        }
        if let Some(&any) = held.keys().next() {
            let addrs: Vec<u64> = self.breakpoints.keys().copied().collect();
            for addr in addrs {
                self.remove_breakpoint(any, addr)?;
            }
        }
        // Every thread stopped on a breakpoint (also one the tool was
        // handling when it gave up) goes back onto the restored instruction.
        let rewinds: Vec<(Pid, u64)> = self.at_breakpoint.iter().map(|(t, a)| (*t, *a)).collect();
        for (t, addr) in rewinds {
            if held.contains_key(&t) {
                self.rewind(t, addr)?;
            }
        }
        if let Some(addr) = self.syms.as_ref().and_then(|s| s.being_debugged) {
            ProcessMemory::new(self.pid())
                .write_int(&self.layout, addr, i64::from(NOT_BEING_DEBUGGED))
                .map_err(|source| ToolError::Write {
                    pid: self.pid(),
                    symbol: "MPIR_being_debugged",
                    source,
                })?;
        }
        for (t, sig) in held {
            match ptrace::detach(t, sig) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => return Err(ptrace_err("PTRACE_DETACH", t)(e)),
            }
            self.stopped.remove(&t);
            self.threads.remove(&t);
        }
        self.finished = true;
        Ok(())
    }

    /// Ends a starter the tool gives up on: detach if possible, `SIGTERM`,
    /// `SIGKILL` after a grace period, reap.
    fn abandon(&mut self) {
        let detached = self.detach_all().is_ok();
        if detached {
            let _ = kill(self.leader, Signal::SIGTERM);
            let deadline = Instant::now() + TERM_GRACE;
            let mut backoff = Backoff::new();
            while Instant::now() < deadline {
                match waitpid(self.leader, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => backoff.sleep(),
                    _ => return,
                }
            }
        }
        // Still traced (or not ending): SIGKILL works on stopped tracees too.
        let _ = kill(self.leader, Signal::SIGKILL);
        let deadline = Instant::now() + TERM_GRACE;
        let mut backoff = Backoff::new();
        while Instant::now() < deadline {
            let tids: Vec<Pid> = self.threads.iter().copied().collect();
            for t in tids {
                match waitpid(t, Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => {}
                    Ok(ws) if t == self.leader && exit_status(ws).is_some() => return,
                    Ok(ws) if exit_status(ws).is_some() => {
                        self.threads.remove(&t);
                    }
                    Ok(_) => {}
                    Err(_) => {
                        if t == self.leader {
                            return;
                        }
                        self.threads.remove(&t);
                    }
                }
            }
            backoff.sleep();
        }
    }
}

impl Drop for Engine<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.abandon();
        }
    }
}

/// Sets `MPIR_debug_gate = 1` in process `pid`, waiting until `deadline`
/// for it to define the symbol.
fn open_gate(pid: i64, deadline: Instant) -> GateOutcome {
    let Ok(pid) = i32::try_from(pid) else {
        return GateOutcome::Failed(format!("{pid} is no pid"));
    };
    if pid <= 0 {
        return GateOutcome::Failed(format!("{pid} is no pid"));
    }
    let mut backoff = Backoff::new();
    loop {
        match SymbolTable::of_process_matching(pid, |n| n == "MPIR_debug_gate") {
            Ok(table) => {
                if let Some(sym) = table.lookup("MPIR_debug_gate") {
                    let layout = match target_layout(pid) {
                        Ok(l) => l,
                        Err(e) => return GateOutcome::Failed(e.to_string()),
                    };
                    return match ProcessMemory::new(pid).write_int(
                        &layout,
                        sym.addr,
                        i64::from(DEBUG_GATE_OPEN),
                    ) {
                        Ok(()) => GateOutcome::Opened {
                            addr: sym.addr,
                            object: sym.object_path.clone(),
                        },
                        Err(e) => GateOutcome::Failed(e.to_string()),
                    };
                }
            }
            Err(e) => return GateOutcome::Failed(e.to_string()),
        }
        if Instant::now() >= deadline {
            return GateOutcome::NoGate;
        }
        backoff.sleep();
    }
}
