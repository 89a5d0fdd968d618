//! Signals and death: what `mpir-attach` and `mqd-dump` do when they are signalled or killed,
//! when a rank dies under `mqd-dump` and when the starter ends while `mpir-attach` reads it.
//! Each test is one case of the matrix in `docs/faults.md` and checks what the user sees (a
//! stable phrase on standard error, nothing passed off as a table on standard output), the exit
//! status, and the job's own result (its exit status, the ranks' rows, no process of it left
//! stopped or running).
//!
//! The job is the selected MPI's (`scripts/with-mpi`: its `mpicc` builds the programs, its
//! `mpiexec` runs them, 3 ranks of mpir-types' `tests/targets/mpi_app.c` (linked as
//! `examples/mpir/mpi_app.c`) or 2 of `examples/mqd/mqd_target.c`):
//!
//! - Open MPI 4.1 runs every case; there the material is required, and a test fails without it.
//! - Open MPI 5: its `mpiexec` (PRRTE's `prterun`) defines no MPIR symbol and the wheel ships no
//!   message queue DLL. A case that needs either proves that premise once (the launch and the
//!   attach model refuse `prterun` with status 3 and leave the job alone; `mqd-dump` finds no
//!   DLL) and says it has nothing more to test; the cases that need neither (`mqd-dump`
//!   launching a command, a starter that already ended) run.
//! - Intel MPI: its Hydra `mpiexec` is an MPIR starter (symbols in the executable), so the MPIR
//!   cases run; the MQD ones do not apply (mqd-dump reads Open MPI's DLL and ob1).
//! - MPICH (Debian, the wheel, mpich-ev): Hydra defines no MPIR symbol and mqd-dump reads Open
//!   MPI only: every test says it does not apply.
//!
//! Two cases need the tool at a precise point: the attach model between reading the table and
//! printing it, `mqd-dump` before the queues of a process. There the tools honour the test-only
//! variables `MPIR_ATTACH_TEST_PAUSE` and `MQD_DUMP_TEST_PAUSE` (they pause until a line on
//! standard input, a caught signal or 10 s). The launch model's "tool holds the starter
//! stopped" needs no hook: the tool prints the table at the `MPIR_DEBUG_SPAWNED` event, while
//! the starter is stopped, and a standard output that is a full pipe holds it there.
//!
//! Every wait has a deadline; every process a test starts is killed (its process group, and
//! the job's processes it recorded) and reaped when the test ends, passed or failed.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mpit_safe::Vendor;
use mpit_test_support::cc;
use mpit_test_support::rows::own_rows;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

const ATTACH: &str = env!("CARGO_BIN_EXE_mpir-attach");
const DUMP: &str = env!("CARGO_BIN_EXE_mqd-dump");
/// The longest any single wait of these tests may take.
const LIMIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// The selected MPI and what applies to it.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Open MPI 4.1: `mpiexec` (orterun) is an MPIR starter, the DLL is installed.
    OpenMpi4,
    /// Open MPI 5: PRRTE's `prterun`, no MPIR; the wheel has no message queue DLL.
    OpenMpi5,
    /// Intel MPI: Hydra with MPIR; no Open MPI DLL.
    Intel,
    /// MPICH's Hydra: no MPIR; no Open MPI DLL.
    Mpich,
}

struct Mpi {
    kind: Kind,
    /// `Open MPI 4.1.4` etc., for the lines the tests print.
    name: String,
    /// The selected launcher with its arguments (`mpiexec.openmpi --oversubscribe`).
    launcher: Vec<String>,
}

fn mpi() -> &'static Mpi {
    static MPI: OnceLock<Mpi> = OnceLock::new();
    MPI.get_or_init(|| {
        let imp = mpit_safe::quirks::header_implementation();
        let kind = match (imp.vendor, imp.version.major) {
            (Vendor::OpenMpi, 4) => Kind::OpenMpi4,
            (Vendor::OpenMpi, _) => Kind::OpenMpi5,
            (Vendor::Intel, _) => Kind::Intel,
            _ => Kind::Mpich,
        };
        let vendor = match imp.vendor {
            Vendor::OpenMpi => "Open MPI",
            Vendor::Intel => "Intel MPI",
            Vendor::Mpich => "MPICH",
            _ => "an unrecognised MPI",
        };
        let name = format!("{vendor} {}", imp.version);
        let launcher = mpit_safe::launcher().expect("no MPI launcher: run under scripts/with-mpi");
        Mpi {
            kind,
            name,
            launcher,
        }
    })
}

/// Whether the MPIR cases run here (the selected `mpiexec` is an MPIR starter); else prints
/// why not, after proving it where that is Open MPI 5.
fn mpir_applies(test: &str) -> bool {
    let m = mpi();
    match m.kind {
        Kind::OpenMpi4 | Kind::Intel => true,
        Kind::OpenMpi5 => {
            let premise = ompi5_has_no_mpir();
            println!(
                "nothing to test: {test}: {}: {premise}; no MPIR tool can stop, read or \
                 signal its job, so this case cannot arise",
                m.name
            );
            false
        }
        Kind::Mpich => {
            println!(
                "does not apply: {test}: {}: MPICH's Hydra defines no MPIR symbol (mpir-attach \
                 refuses it with status 3, mpir_attach.rs' hydra_is_recognised_at_once)",
                m.name
            );
            false
        }
    }
}

/// Whether the MQD cases that read a rank's queues run here; else prints why not, after
/// proving it where that is Open MPI 5.
fn mqd_applies(test: &str) -> bool {
    let m = mpi();
    let why = match m.kind {
        Kind::OpenMpi4 => return true,
        Kind::OpenMpi5 => ompi5_has_no_msgq_dll(),
        Kind::Intel | Kind::Mpich => {
            "mqd-dump reads Open MPI's message queue DLL and ob1's structures only"
        }
    };
    println!("nothing to test: {test}: {}: {why}", m.name);
    false
}

/// Whether the case runs at all here (MPICH: no case applies).
fn any_applies(test: &str) -> bool {
    if mpi().kind == Kind::Mpich {
        println!(
            "does not apply: {test}: {}: MPICH's Hydra defines no MPIR symbol and mqd-dump reads \
             Open MPI only",
            mpi().name
        );
        return false;
    }
    true
}

/// Open MPI 5's premise, proved once: through MPIR (`--via mpir`: by default the tool takes
/// PMIx there, whose faults `mpir_attach.rs` tests) both models refuse `prterun` at once
/// (status 3, PRRTE named) and the job is left alone (the attached one ends 0; the launched one
/// never ran).
fn ompi5_has_no_mpir() -> &'static str {
    static PREMISE: OnceLock<&'static str> = OnceLock::new();
    PREMISE.get_or_init(|| {
        let dir = workdir("ompi5-premise");
        let out = dir.join("job.out");
        // Launch model: refused at the starter's entry point, the job never runs.
        let mut tool = Proc::spawn(
            Command::new(ATTACH)
                .args(["--via", "mpir", "--job-output"])
                .arg(&out)
                .arg("--")
                .args(job_argv(&app(), &["1"]))
                .stdout(Stdio::null()),
        );
        let st = tool.wait_for(LIMIT);
        let err = tool.stderr_text();
        assert_eq!(st.code(), Some(3), "{err}");
        assert!(err.contains("PRRTE's prterun"), "{err}");
        assert!(
            own_rows(&read(&out)).is_empty(),
            "the job ran: {}",
            read(&out)
        );
        // Attach model: refused, and the job runs on to its end. (Once the ranks run: the
        // wheel's `mpiexec` is a wrapper that becomes `prterun` by an exec.)
        let mut job = start_job(&dir, &["1"]);
        wait_rows(&dir.join("job.out"), &mut job);
        let pid = job.pid().to_string();
        let mut tool = Proc::spawn(
            Command::new(ATTACH)
                .args(["--via", "mpir", "--pid", &pid])
                .stdout(Stdio::null()),
        );
        let st = tool.wait_for(LIMIT);
        let err = tool.stderr_text();
        assert_eq!(st.code(), Some(3), "{err}");
        assert!(err.contains("PRRTE's prterun"), "{err}");
        let st = job.wait_for(LIMIT);
        assert!(st.success(), "the job: {st}");
        assert_eq!(own_rows(&read(&dir.join("job.out"))).len(), 3);
        "its mpiexec (PRRTE's prterun) implements no MPIR (checked: `--via mpir` in the launch \
         and the attach model is refused with status 3 and leaves the job alone)"
    })
}

/// Open MPI 5's premise for MQD, proved once: a live rank's `MPIR_dll_name` names a DLL the
/// wheel does not ship, and `mqd-dump` says so with status 1.
fn ompi5_has_no_msgq_dll() -> &'static str {
    static PREMISE: OnceLock<&'static str> = OnceLock::new();
    PREMISE.get_or_init(|| {
        let dir = workdir("ompi5-mqd-premise");
        let mut job = start_mqd_job(&dir);
        let ready = wait_ready(&dir, &mut job);
        let mut tool = Proc::spawn(
            Command::new(DUMP)
                .args(["--pid", &ready[0].to_string()])
                .stdout(Stdio::null()),
        );
        let st = tool.wait_for(LIMIT);
        let err = tool.stderr_text();
        assert_eq!(st.code(), Some(1), "{err}");
        assert!(
            err.contains("no usable message queue DLL") && err.contains("libompi_dbg_msgq.so"),
            "{err}"
        );
        release(&dir, &mut job);
        "the wheel ships no message queue DLL (checked: MPIR_dll_name names a \
         libompi_dbg_msgq.so that is not there, mqd-dump exits 1), so no rank's queues can be \
         read"
    })
}

// ---------------------------------------------------------------------------------------------
// Programs, jobs, processes.

fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("faults")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn build(src: &str, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("faults");
    std::fs::create_dir_all(&dir).unwrap();
    cc::build_c(&src, &dir.join(name))
}

/// mpir-types' `mpi_app.c`: each rank prints `rank R pid P host H exe E`, sleeps, meets the
/// others, exits 0.
fn app() -> PathBuf {
    static APP: OnceLock<PathBuf> = OnceLock::new();
    APP.get_or_init(|| build("mpir/mpi_app.c", "mpi_app"))
        .clone()
}

/// `examples/mqd/mqd_target.c`: 2 ranks post known queues, write `DIR/ready.R`, wait for
/// `DIR/release`.
fn mqd_target() -> PathBuf {
    static APP: OnceLock<PathBuf> = OnceLock::new();
    APP.get_or_init(|| build("mqd/mqd_target.c", "mqd_target"))
        .clone()
}

/// The settings every run needs (root, MPIR's warning, oversubscription on 2 cores).
fn settings(cmd: &mut Command) -> &mut Command {
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MPIR_DO_NOT_WARN", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("PRTE_MCA_rmaps_default_mapping_policy", ":oversubscribe")
}

/// `mpiexec [its arguments] -n 3 mpi_app ARGS`.
fn job_argv(app: &Path, args: &[&str]) -> Vec<String> {
    let mut v = mpi().launcher.clone();
    v.extend(["-n", "3"].map(String::from));
    v.push(app.display().to_string());
    v.extend(args.iter().map(|s| s.to_string()));
    v
}

/// `mpiexec [its arguments] [--mca pml ob1] -n 2 mqd_target DIR`.
fn mqd_argv(dir: &Path) -> Vec<String> {
    let mut v = mpi().launcher.clone();
    if matches!(mpi().kind, Kind::OpenMpi4 | Kind::OpenMpi5) {
        v.extend(["--mca", "pml", "ob1"].map(String::from));
    }
    v.extend(["-n", "2"].map(String::from));
    v.push(mqd_target().display().to_string());
    v.push(dir.display().to_string());
    v
}

/// A process a test started, in a process group of its own, with its standard error read
/// line by line (kept, and sent to whoever waits for a line). Dropping it kills its process
/// group and the job processes recorded in `job`, and reaps it.
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<Vec<String>>>,
    /// Processes of the job (not in the group: Open MPI gives each rank a group of its own).
    job: Vec<i32>,
    status: Option<ExitStatus>,
}

impl Proc {
    /// Spawns `cmd` (with [`settings`]) in a new process group, its standard input piped, its
    /// standard error read; standard output is `cmd`'s (default: piped).
    fn spawn(cmd: &mut Command) -> Proc {
        settings(cmd);
        cmd.process_group(0)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        let err = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, lines) = channel();
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                kept.lock().unwrap().push(line.clone());
                let _ = tx.send(line);
            }
        });
        Proc {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            job: Vec::new(),
            status: None,
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The first line of standard error containing `needle` (waiting at most [`LIMIT`]).
    fn line_with(&self, needle: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(needle) => return l,
                Ok(_) => {}
                Err(e) => panic!(
                    "no line with {needle:?} on standard error ({e}):\n{}",
                    self.stderr_text()
                ),
            }
        }
    }

    /// Everything read of its standard error so far.
    fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Releases a test pause: a line on standard input.
    fn resume(&mut self) {
        if let Some(mut i) = self.stdin.take() {
            let _ = i.write_all(b"\n");
        }
    }

    fn signal(&self, sig: Signal) {
        kill(Pid::from_raw(self.pid()), sig).unwrap();
    }

    /// Its exit status, waiting at most `limit`; panics (and the drop kills it) on timeout.
    fn wait_for(&mut self, limit: Duration) -> ExitStatus {
        if let Some(st) = self.status {
            return st;
        }
        let deadline = Instant::now() + limit;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                self.status = Some(st);
                // Standard error is complete once the reader reaches its end (the tool's
                // children may hold it a little longer).
                let t = Instant::now();
                while t.elapsed() < Duration::from_secs(2) && !self.stderr_closed() {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return st;
            }
            assert!(
                Instant::now() < deadline,
                "pid {} did not end within {limit:?}:\n{}",
                self.pid(),
                self.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn stderr_closed(&self) -> bool {
        matches!(
            self.lines.try_recv(),
            Err(std::sync::mpsc::TryRecvError::Disconnected)
        )
    }

    /// Its standard output, read to the end (after it ended).
    fn stdout_text(&mut self) -> String {
        let mut s = String::new();
        if let Some(mut o) = self.child.stdout.take() {
            let _ = o.read_to_string(&mut s);
        }
        s
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(-self.pid()), Signal::SIGKILL);
        for &p in &self.job {
            let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
        }
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `mpi_app ARGS` on 3 ranks under the selected `mpiexec` (not under a tool), its output in
/// `DIR/job.out`.
fn start_job(dir: &Path, args: &[&str]) -> Proc {
    let argv = job_argv(&app(), args);
    let out = File::create(dir.join("job.out")).unwrap();
    Proc::spawn(
        Command::new(&argv[0])
            .args(&argv[1..])
            .stdout(out)
            .stdin(Stdio::null()),
    )
}

/// Waits (at most [`LIMIT`]) for the 3 ranks' own rows in `file`; records their pids in `job`.
fn wait_rows(file: &Path, job: &mut Proc) -> Vec<i64> {
    let deadline = Instant::now() + LIMIT;
    loop {
        let rows = own_rows(&read(file));
        if rows.len() == 3 {
            let pids: Vec<i64> = rows.iter().map(|r| r.1).collect();
            job.job.extend(pids.iter().map(|&p| p as i32));
            return pids;
        }
        if let Ok(Some(st)) = job.child.try_wait() {
            panic!(
                "the job ended before its ranks printed: {st}\n{}",
                read(file)
            );
        }
        assert!(
            Instant::now() < deadline,
            "the ranks did not start: {}",
            read(file)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `mqd_target DIR` on 2 ranks under the selected `mpiexec`, its output in `DIR/job.out`.
fn start_mqd_job(dir: &Path) -> Proc {
    let argv = mqd_argv(dir);
    let out = File::create(dir.join("job.out")).unwrap();
    Proc::spawn(
        Command::new(&argv[0])
            .args(&argv[1..])
            .stdout(out.try_clone().unwrap())
            .stdin(Stdio::null()),
    )
}

/// The pids of `mqd_target`'s ranks 0 and 1, from their ready files (recorded in `job`).
/// The tool's stderr says it forwarded `sig` to the starter and how the job ended then.
fn assert_forwarded(err: &str, sig: Signal) {
    assert!(
        err.contains(&format!(
            "caught {}: forwarded to the starter",
            sig_name(sig)
        )) && err.contains(&format!(
            "the job ended: exit status: {}",
            starter_status_on(sig)
        )),
        "{err}"
    );
}

/// A 2-rank job of the mqd target, its ranks once ready, and `mqd-dump ARGS --pid R0 --pid R1`
/// paused (`MQD_DUMP_TEST_PAUSE`) before it reads rank 1's queues.
fn mqd_dump_paused_at_rank_1(dir: &Path, args: &[&str]) -> (Proc, [i32; 2], Proc) {
    let mut job = start_mqd_job(dir);
    let [r0, r1] = wait_ready(dir, &mut job);
    let tool = Proc::spawn(
        Command::new(DUMP)
            .args(args)
            .args(["--pid", &r0.to_string(), "--pid", &r1.to_string()])
            .env("MQD_DUMP_TEST_PAUSE", r1.to_string())
            .stdout(Stdio::piped()),
    );
    (job, [r0, r1], tool)
}

fn wait_ready(dir: &Path, job: &mut Proc) -> [i32; 2] {
    let deadline = Instant::now() + LIMIT;
    loop {
        let pid = |r: usize| -> Option<i32> {
            read(&dir.join(format!("ready.{r}")))
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        };
        if let (Some(a), Some(b)) = (pid(0), pid(1)) {
            job.job.extend([a, b]);
            return [a, b];
        }
        if let Ok(Some(st)) = job.child.try_wait() {
            panic!("the job ended first: {st}\n{}", read(&dir.join("job.out")));
        }
        assert!(Instant::now() < deadline, "the ranks were not ready");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Releases `mqd_target`'s ranks and expects the job to end with 0.
fn release(dir: &Path, job: &mut Proc) {
    std::fs::write(dir.join("release"), b"").unwrap();
    let st = job.wait_for(LIMIT);
    assert!(
        st.success(),
        "the job ended with {st}: {}",
        read(&dir.join("job.out"))
    );
}

/// The state letter of `pid` (`R`, `S`, `T`, `t`, `Z`, ...); `None` once it is gone.
fn state(pid: i32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text.rsplit_once(')')?
        .1
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// Whether a thread of `pid` is in a ptrace-stop (state `t`): the tool holds it.
fn held(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("stat")).is_ok_and(|text| {
            text.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('t'))
        })
    })
}

/// Ended: gone, or a zombie (dead, not reaped yet: its parent was the killed starter, and its
/// new parent reaps it when it will).
fn ended(pid: i32) -> bool {
    matches!(state(pid), None | Some('Z' | 'X' | 'x'))
}

/// Every descendant of `pid` now.
fn descendants(pid: i32) -> Vec<i32> {
    let mut parent: BTreeMap<i32, i32> = BTreeMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let ppid = text
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
        if let Some(pp) = ppid {
            parent.insert(p, pp);
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for (&c, &pp) in &parent {
            if pp == p {
                out.push(c);
                todo.push(c);
            }
        }
    }
    out
}

/// Waits (at most `limit`) until every process in `pids` has ended, checking every 20 ms that
/// none of them is stopped; returns how long it took.
fn all_end_unstopped(pids: &[i32], limit: Duration) -> Duration {
    let t = Instant::now();
    loop {
        for &p in pids {
            let s = state(p);
            assert!(
                !matches!(s, Some('T' | 't')),
                "process {p} of the job is stopped ({s:?}) {:?} after the fault",
                t.elapsed()
            );
        }
        if pids.iter().all(|&p| ended(p)) {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < limit,
            "the job's processes still run after {limit:?}:\n{}",
            pids.iter()
                .filter(|&&p| !ended(p))
                .map(|&p| describe(p))
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What `/proc` says of `pid`: its state line, command line, where it waits.
fn describe(pid: i32) -> String {
    let f = |name: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/{name}"))
            .unwrap_or_default()
            .replace('\0', " ")
    };
    format!(
        "{pid}: stat {:?}; cmdline {:?}; wchan {:?}",
        f("stat").trim(),
        f("cmdline").trim(),
        f("wchan")
    )
}

/// Polls until `f` holds (at most [`LIMIT`]).
fn until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The exit status of the selected `mpiexec` once `SIGINT` or `SIGTERM` ended its job, without
/// any tool (measured; `launch_mode_*_while_waiting` checks it against an untraced run).
fn starter_status_on(sig: Signal) -> i32 {
    match (mpi().kind, sig) {
        // orterun: "abort is in progress", the ranks killed, exit 1 about a second later.
        (Kind::OpenMpi4 | Kind::OpenMpi5, _) => 1,
        // Hydra: "Sending Ctrl-C to processes as requested", exit 255 at once.
        (Kind::Intel, _) => 255,
        (Kind::Mpich, _) => unreachable!(),
    }
}

/// A pipe whose buffer is full: a process writing to `write` blocks until `read` is read.
fn full_pipe() -> (File, OwnedFd) {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let (read, write) = nix::unistd::pipe().unwrap();
    let flags = OFlag::from_bits_truncate(fcntl(&write, FcntlArg::F_GETFL).unwrap());
    fcntl(&write, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).unwrap();
    let filler = [b'#'; 512];
    let mut filled = 0;
    loop {
        match nix::unistd::write(&write, &filler) {
            Ok(n) => filled += n,
            Err(nix::errno::Errno::EAGAIN) => break,
            Err(e) => panic!("filling a pipe: {e}"),
        }
    }
    assert!(filled >= 4096, "{filled}");
    fcntl(&write, FcntlArg::F_SETFL(flags)).unwrap();
    (File::from(read), write)
}

fn sig_name(sig: Signal) -> &'static str {
    sig.as_str()
}

// ---------------------------------------------------------------------------------------------
// Attach model: SIGINT and SIGTERM while the tool reads a running job.

/// The tool, paused after reading the table, is signalled: it prints nothing on standard
/// output, says it stopped, exits 128 + the signal; the job was never stopped and ends 0 with
/// every rank's row.
fn attach_mode_signal(test: &str, sig: Signal) {
    if !mpir_applies(test) {
        return;
    }
    let dir = workdir(test);
    let mut job = start_job(&dir, &["2"]);
    wait_rows(&dir.join("job.out"), &mut job);
    let ranks = job.job.clone();
    let mut tool = Proc::spawn(
        Command::new(ATTACH)
            .args(["--pid", &job.pid().to_string()])
            .env("MPIR_ATTACH_TEST_PAUSE", "1")
            .stdout(Stdio::piped()),
    );
    tool.line_with("test pause");
    // The attach model reads without stopping: nothing of the job is stopped now.
    for p in std::iter::once(job.pid()).chain(ranks.iter().copied()) {
        assert!(!matches!(state(p), Some('T' | 't')), "{p} is stopped");
    }
    let t = Instant::now();
    tool.signal(sig);
    let st = tool.wait_for(LIMIT);
    let took = t.elapsed();
    let (out, err) = (tool.stdout_text(), tool.stderr_text());
    println!(
        "mpir-attach --pid, {} at the pause: {st} after {took:?}\n{err}",
        sig_name(sig)
    );
    assert_eq!(st.code(), Some(128 + sig as i32), "{err}");
    assert!(out.is_empty(), "a table was printed: {out}");
    assert!(
        err.contains(&format!(
            "caught {}: stopped before printing the table (nothing was printed)",
            sig_name(sig)
        )) && err.contains("the job was not touched"),
        "{err}"
    );
    let jst = job.wait_for(LIMIT);
    let rows = own_rows(&read(&dir.join("job.out")));
    println!("the job: {jst}, {} rows", rows.len());
    assert!(jst.success(), "the job ended with {jst}");
    assert_eq!(rows.len(), 3, "{}", read(&dir.join("job.out")));
}

#[test]
fn attach_mode_sigint_prints_nothing_exits_130_and_the_job_runs_on() {
    attach_mode_signal("attach_mode_sigint", Signal::SIGINT);
}

#[test]
fn attach_mode_sigterm_prints_nothing_exits_143_and_the_job_runs_on() {
    attach_mode_signal("attach_mode_sigterm", Signal::SIGTERM);
}

// ---------------------------------------------------------------------------------------------
// Launch model: SIGINT and SIGTERM forwarded to the starter.

/// The launch model, detached and waiting for a running job, is signalled: the signal goes to
/// the starter, which ends its job as it does without a tool (an untraced `mpiexec` signalled
/// alongside, for reference), and the tool exits with the starter's status.
fn launch_mode_signal_while_waiting(test: &str, sig: Signal) {
    if !mpir_applies(test) {
        return;
    }
    let dir = workdir(test);
    let out = dir.join("tool-job.out");
    let mut reference = start_job(&dir, &["10"]);
    let mut tool = Proc::spawn(
        Command::new(ATTACH)
            .arg("--job-output")
            .arg(&out)
            .arg("--")
            .args(job_argv(&app(), &["10"]))
            .stdout(Stdio::piped()),
    );
    tool.line_with("waiting for the job");
    wait_rows(&out, &mut tool);
    wait_rows(&dir.join("job.out"), &mut reference);
    let starter = descendants(tool.pid());
    tool.job.extend(&starter);
    let t = Instant::now();
    tool.signal(sig);
    reference.signal(sig);
    let st = tool.wait_for(LIMIT);
    let took = t.elapsed();
    let rst = reference.wait_for(LIMIT);
    let (stdout, err) = (tool.stdout_text(), tool.stderr_text());
    println!(
        "mpir-attach -- mpiexec, {} while waiting: {st} after {took:?} (untraced mpiexec: \
         {rst})\n{err}",
        sig_name(sig)
    );
    assert_eq!(rst.code(), Some(starter_status_on(sig)), "the reference");
    assert_eq!(
        st.code(),
        rst.code(),
        "the tool exits with the starter's status: {err}"
    );
    assert_forwarded(&err, sig);
    // The table was printed whole, before the signal.
    assert_eq!(stdout.lines().filter(|l| l.starts_with("rank ")).count(), 3);
    let ended_in = all_end_unstopped(&tool.job, LIMIT);
    println!("every process of the job ended {ended_in:?} after the tool");
}

#[test]
fn launch_mode_sigint_while_waiting_is_forwarded_and_the_tool_exits_with_the_jobs_status() {
    launch_mode_signal_while_waiting("launch_mode_sigint_while_waiting", Signal::SIGINT);
}

#[test]
fn launch_mode_sigterm_while_waiting_is_forwarded_and_the_tool_exits_with_the_jobs_status() {
    launch_mode_signal_while_waiting("launch_mode_sigterm_while_waiting", Signal::SIGTERM);
}

/// The command name of `pid` (`/proc/PID/comm`).
fn comm(pid: i32) -> String {
    read(Path::new(&format!("/proc/{pid}/comm")))
        .trim()
        .to_owned()
}

/// A launch-model tool holding the starter stopped at `MPIR_Breakpoint`: its standard output is
/// a full pipe, and it writes the table there at the `MPIR_DEBUG_SPAWNED` event, with the
/// starter stopped. Returns the tool, the pipe's read end, the starter's pid, the job's
/// processes (recorded in the tool's [`Proc::job`]) and the tool's guardian.
fn tool_holding_the_starter(dir: &Path, sleep: &str) -> (Proc, File, i32, Vec<i32>, i32) {
    let (pipe, write) = full_pipe();
    let mut tool = Proc::spawn(
        Command::new(ATTACH)
            .arg("--job-output")
            .arg(dir.join("tool-job.out"))
            .arg("--")
            .args(job_argv(&app(), &[sleep]))
            .stdout(Stdio::from(write)),
    );
    let line = tool.line_with("MPIR_DEBUG_SPAWNED),");
    let starter: i32 = line
        .split_whitespace()
        .nth(2)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no starter pid in {line:?}"));
    until("the starter to be stopped under the tool", || held(starter));
    // The table was read: its ranks exist (Open MPI 4.1 holds them in MPI_Init).
    let job: Vec<i32> = std::iter::once(starter)
        .chain(descendants(starter))
        .collect();
    tool.job.extend(&job);
    assert!(job.len() >= 4, "the starter and 3 ranks: {job:?}");
    // The guardian that ends the job's processes if the tool dies holding them (it names
    // itself right after the fork).
    let mut guardians = Vec::new();
    until("the guardian", || {
        guardians = descendants(tool.pid())
            .into_iter()
            .filter(|&p| comm(p) == "mpir-guardian")
            .collect();
        !guardians.is_empty()
    });
    assert_eq!(guardians.len(), 1, "one guardian: {guardians:?}");
    (tool, pipe, starter, job, guardians[0])
}

/// The tool is signalled while it holds the starter stopped: the starter stays stopped until
/// the tool lets it go (the pipe is read), then gets the signal, ends its job, and the tool
/// exits with its status; nothing of the job stays stopped.
fn launch_mode_signal_while_held(test: &str, sig: Signal) {
    if !mpir_applies(test) {
        return;
    }
    let dir = workdir(test);
    let (mut tool, mut pipe, starter, job, guardian) = tool_holding_the_starter(&dir, "10");
    tool.signal(sig);
    std::thread::sleep(Duration::from_millis(200));
    assert!(held(starter), "held while the tool is blocked");
    let t = Instant::now();
    let drained = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = pipe.read_to_end(&mut s);
        String::from_utf8_lossy(&s).replace('#', "")
    });
    let st = tool.wait_for(LIMIT);
    let took = t.elapsed();
    let err = tool.stderr_text();
    let stdout = drained.join().unwrap();
    println!(
        "mpir-attach -- mpiexec, {} while the starter is held: {st} {took:?} after the release\n\
         {err}",
        sig_name(sig)
    );
    assert_eq!(st.code(), Some(starter_status_on(sig)), "{err}");
    assert_forwarded(&err, sig);
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("rank ")).count(),
        3,
        "the table, whole: {stdout}"
    );
    let ended_in = all_end_unstopped(&job, LIMIT);
    println!("every process of the job ended {ended_in:?} after the tool");
    assert!(ended(guardian), "the guardian was disarmed and reaped");
}

#[test]
fn launch_mode_sigint_while_the_starter_is_held_reaches_it_once_released() {
    launch_mode_signal_while_held("launch_mode_sigint_while_held", Signal::SIGINT);
}

#[test]
fn launch_mode_sigterm_while_the_starter_is_held_reaches_it_once_released() {
    launch_mode_signal_while_held("launch_mode_sigterm_while_held", Signal::SIGTERM);
}

/// `SIGKILL` of the tool while it holds the starter stopped at `MPIR_Breakpoint` (Open MPI
/// 4.1's ranks held in `MPI_Init`): the kernel kills the starter (`PTRACE_O_EXITKILL`) and the
/// tool's guardian (`mpir-guardian`, forked at the spawned event) kills the starter's
/// descendants; no process of the job is ever seen stopped after the kill, and all have ended
/// within 5 s. (Without the guardian Open MPI 4.1's ranks end by themselves within half a
/// second, except a rank still in `PMIx_Init`'s handshake: about 1 run in 25 under load, it
/// waited forever in `ext3x_client_init`.)
#[test]
fn sigkill_of_the_tool_holding_the_starter_leaves_no_process_of_the_job_stopped_or_running() {
    let test = "sigkill_while_held";
    if !mpir_applies(test) {
        return;
    }
    let dir = workdir(test);
    let (mut tool, _pipe, starter, job, guardian) = tool_holding_the_starter(&dir, "10");
    println!(
        "held: starter {starter} in state {:?}, job {job:?}, guardian {guardian}",
        state(starter)
    );
    tool.signal(Signal::SIGKILL);
    let t = Instant::now();
    let st = tool.wait_for(LIMIT);
    assert_eq!(st.signal(), Some(Signal::SIGKILL as i32), "{st}");
    until("the starter to die with the tool", || ended(starter));
    let starter_in = t.elapsed();
    // The guardian ends the ranks at once: within a second, even under load.
    let all_in = all_end_unstopped(&job, Duration::from_secs(5));
    until("the guardian to exit", || ended(guardian));
    println!(
        "SIGKILL of the tool: the starter ended after {starter_in:?}, every process of the job \
         ({} of them) after {all_in:?}; the ranks' output: {:?}",
        job.len(),
        read(&dir.join("tool-job.out"))
    );
    if mpi().kind == Kind::OpenMpi4 {
        // Open MPI 4.1 held its ranks in MPI_Init: none got to print its row.
        assert!(own_rows(&read(&dir.join("tool-job.out"))).is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// mqd-dump: a rank dies while it reads; SIGINT and SIGTERM.

/// Rank 1 is killed (`SIGKILL`) while `mqd-dump --pid R0 --pid R1` is about to read its queues
/// (its DLL and image are set up): the tool shows rank 0, says rank 1 ended while it was read,
/// shows none of rank 1's queues and exits 6; `mpiexec` reports the rank's death.
#[test]
fn a_rank_killed_while_mqd_dump_reads_it_is_reported_and_the_tool_exits_6() {
    let test = "rank_killed_under_mqd_dump";
    if !any_applies(test) || !mqd_applies(test) {
        return;
    }
    let dir = workdir(test);
    let (mut job, [r0, r1], mut tool) = mqd_dump_paused_at_rank_1(&dir, &[]);
    tool.line_with(&format!("test pause: before the queues of process {r1}"));
    kill(Pid::from_raw(r1), Signal::SIGKILL).unwrap();
    until("rank 1 to end", || ended(r1));
    tool.resume();
    let st = tool.wait_for(LIMIT);
    let (out, err) = (tool.stdout_text(), tool.stderr_text());
    println!("mqd-dump, rank 1 killed: {st}\n{err}");
    assert_eq!(st.code(), Some(6), "{err}");
    assert!(
        err.contains(&format!(
            "rank 1 (pid {r1}): process {r1} ended while it was read"
        )) && err.contains("none of its queues is shown"),
        "{err}"
    );
    // Rank 0's dump is whole; rank 1's has no communicator.
    let (first, second) = out
        .split_once(&format!("rank 1 (pid {r1})"))
        .unwrap_or_else(|| panic!("no section of rank 1: {out}"));
    assert!(
        first.contains(&format!("rank 0 (pid {r0})")) && first.contains("\"mqd-test-comm\""),
        "{first}"
    );
    assert!(!second.contains("  communicator "), "{second}");
    let jst = job.wait_for(LIMIT);
    let jout = read(&dir.join("job.out")) + &job.stderr_text();
    println!("the job: {jst}\n{jout}");
    assert_eq!(jst.code(), Some(137), "{jout}");
    assert!(
        jout.contains("process rank 1") && jout.contains("exited on signal 9"),
        "{jout}"
    );
    all_end_unstopped(&job.job, LIMIT);
}

/// `mqd-dump --delay 30 -- mpiexec ...` gets `SIGINT` during its delay: it dumps nothing,
/// forwards the signal to the command, waits for it and exits 130; the job ends as `mpiexec`
/// ends it on `SIGINT`.
#[test]
fn mqd_dump_sigint_with_a_command_is_forwarded_and_the_tool_exits_130() {
    let test = "mqd_dump_sigint_command";
    if !any_applies(test) {
        return;
    }
    let dir = workdir(test);
    let mut tool = Proc::spawn(
        Command::new(DUMP)
            .args(["--delay", "30", "--job-output"])
            .arg(dir.join("job.out"))
            .arg("--")
            .args(mqd_argv(&dir))
            .stdout(Stdio::piped()),
    );
    let mut ranks = wait_ready(&dir, &mut tool).to_vec();
    ranks.extend(descendants(tool.pid()));
    let t = Instant::now();
    tool.signal(Signal::SIGINT);
    let st = tool.wait_for(LIMIT);
    let took = t.elapsed();
    let (out, err) = (tool.stdout_text(), tool.stderr_text());
    println!("mqd-dump -- mpiexec, SIGINT in the delay: {st} after {took:?}\n{err}");
    assert_eq!(st.code(), Some(130), "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("caught SIGINT: stopped before any process was dumped")
            && err.contains("caught SIGINT: forwarded to the command")
            && err.contains(&format!(
                "the command ended with exit status: {}",
                starter_status_on(Signal::SIGINT)
            )),
        "{err}"
    );
    all_end_unstopped(&ranks, LIMIT);
}

/// `mqd-dump --json --pid R0 --pid R1` gets `SIGTERM` while it reads rank 1: no document is
/// printed (nothing passed off as a whole dump), it says so and exits 143; the ranks were only
/// read, and the job completes normally once released.
#[test]
fn mqd_dump_sigterm_while_reading_prints_no_document_and_the_job_completes() {
    let test = "mqd_dump_sigterm_reading";
    if !any_applies(test) || !mqd_applies(test) {
        return;
    }
    let dir = workdir(test);
    let (mut job, _, mut tool) = mqd_dump_paused_at_rank_1(&dir, &["--json"]);
    tool.line_with("test pause: before the queues");
    tool.signal(Signal::SIGTERM);
    let st = tool.wait_for(LIMIT);
    let (out, err) = (tool.stdout_text(), tool.stderr_text());
    println!("mqd-dump --json, SIGTERM while reading rank 1: {st}\n{err}");
    assert_eq!(st.code(), Some(143), "{err}");
    assert!(out.is_empty(), "a document was printed: {out}");
    assert!(
        err.contains(
            "caught SIGTERM: stopped after 1 of 2 processes; the dump is incomplete: no \
             document is printed"
        ),
        "{err}"
    );
    release(&dir, &mut job);
}

// ---------------------------------------------------------------------------------------------
// The starter ends during, or before, the attach model.

/// The job ends (its starter exits, a zombie until the test reaps it) while the tool, paused
/// between reading the table and printing it, holds what it read: the tool prints no table,
/// says the starter ended while its table was read, and exits 6; the job's result is intact.
#[test]
fn the_starter_ending_while_its_table_is_read_gives_status_6_and_no_table() {
    let test = "starter_ends_during_attach";
    if !mpir_applies(test) {
        return;
    }
    let dir = workdir(test);
    let mut job = start_job(&dir, &["1"]);
    wait_rows(&dir.join("job.out"), &mut job);
    let starter = job.pid();
    let mut tool = Proc::spawn(
        Command::new(ATTACH)
            .args(["--pid", &starter.to_string()])
            .env("MPIR_ATTACH_TEST_PAUSE", "1")
            .stdout(Stdio::piped()),
    );
    tool.line_with("test pause");
    until("the job to end", || state(starter) == Some('Z'));
    tool.resume();
    let st = tool.wait_for(LIMIT);
    let (out, err) = (tool.stdout_text(), tool.stderr_text());
    println!("mpir-attach --pid, the starter ended meanwhile: {st}\n{err}");
    assert_eq!(st.code(), Some(6), "{err}");
    assert!(out.is_empty(), "a table was printed: {out}");
    assert!(
        err.contains(&format!(
            "process {starter} ended while its table was read (it is a zombie now): its table \
             is not printed"
        )),
        "{err}"
    );
    let jst = job.wait_for(LIMIT);
    assert!(jst.success(), "the job: {jst}");
    assert_eq!(own_rows(&read(&dir.join("job.out"))).len(), 3);
}

/// A starter that has already ended: a zombie (not reaped yet), then gone. Both are said as
/// such with status 6, never a table; the job's result is intact. Open MPI 5's `prterun` too
/// (the check precedes the search for MPIR symbols).
#[test]
fn a_starter_that_already_ended_gives_status_6_and_no_table() {
    let test = "starter_already_ended";
    if !any_applies(test) {
        return;
    }
    let dir = workdir(test);
    let mut job = start_job(&dir, &["0"]);
    let starter = job.pid();
    until("the job to end", || state(starter) == Some('Z'));
    let pid = starter.to_string();
    for (gone, phrase) in [
        (false, format!("process {starter} is a zombie")),
        (true, format!("process {starter} does not exist")),
    ] {
        if gone {
            let jst = job.wait_for(LIMIT);
            assert!(jst.success(), "the job: {jst}");
            assert_eq!(own_rows(&read(&dir.join("job.out"))).len(), 3);
        }
        let mut tool = Proc::spawn(
            Command::new(ATTACH)
                .args(["--pid", &pid])
                .stdout(Stdio::piped()),
        );
        let st = tool.wait_for(LIMIT);
        let (out, err) = (tool.stdout_text(), tool.stderr_text());
        println!("mpir-attach --pid of a starter that ended (reaped: {gone}): {st}: {err}");
        assert_eq!(st.code(), Some(6), "{err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains(&phrase), "{err}");
    }
}
