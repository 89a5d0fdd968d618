//! `mpir-attach` through the PMIx tool interface (PMIx Standard v4.2, "Tools and Debuggers"):
//! the attach model on a PRRTE launcher (`prterun`, Open MPI 5's `mpiexec`, which define no
//! MPIR symbol; Open MPI 5's "Using MPIR-based tools"), and the launch model with the job
//! stopped in `MPI_Init` (`--stop-in-init`), acquired, then released by the
//! `PMIX_DEBUGGER_RELEASE` event. The exit statuses are those of the MPIR table ([`status`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::Duration;

use mpir_types::os::{Interrupts, ended};
use mpir_types::pmix::tool::{self, LaunchOptions, PmixError, PmixJob, StopAt, ToolOptions};

use super::model::Job;
use super::{Args, Failure, status, text};

impl From<PmixError> for Failure {
    /// The status of a PMIx error, by the MPIR table's meaning.
    fn from(e: PmixError) -> Failure {
        let status = match &e {
            PmixError::NoSuchProcess { .. }
            | PmixError::Zombie { .. }
            | PmixError::LauncherEnded { .. } => status::NO_PROCESS,
            PmixError::NotTheLauncher { .. } => status::NOT_THE_STARTER,
            PmixError::Connect { .. } => status::NOT_A_STARTER,
            PmixError::NoJob { .. } => status::EMPTY_TABLE,
            _ => status::FAILED,
        };
        let message = match &e {
            PmixError::NotTheLauncher { launcher, .. } => {
                format!("{e}: run mpir-attach --pid {launcher}")
            }
            PmixError::Connect { .. } => format!(
                "{e}: the process offers no PMIx tool interface this library reaches (MPICH's \
                 Hydra offers none; Open MPI 4.1's orterun refuses it: use --via mpir)"
            ),
            _ => e.to_string(),
        };
        Failure { message, status }
    }
}

/// Whether `program` (a command's first word, searched on `PATH`) is a PRRTE launcher:
/// `prterun`/`prte`, or an `mpiexec`/`mpirun` installed beside `prterun` (Open MPI 5).
pub fn is_prrte_launcher(program: &OsStr) -> bool {
    let path = Path::new(program);
    let found: Option<PathBuf> = if path.components().count() > 1 {
        Some(path.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(path))
                .find(|p| p.is_file())
        })
    };
    let Some(found) = found else { return false };
    let name = found
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name == "prterun"
        || name == "prte"
        || ((name.starts_with("mpiexec") || name.starts_with("mpirun"))
            && found.with_file_name("prterun").is_file())
}

fn options(args: &Args) -> ToolOptions {
    ToolOptions {
        timeout: Duration::from_secs_f64(args.timeout.clamp(1.0, 3600.0)),
        ..ToolOptions::default()
    }
}

fn print(args: &Args, job: &Job) {
    if args.json {
        println!("{}", job.json());
    } else {
        print!("{}", text::ranks(job));
    }
}

/// The attach model through PMIx: the jobs of launcher `pid`, printed (the first job; the
/// others are named on standard error).
pub fn attach(args: &Args, pid: i32, interrupts: &Interrupts) -> Result<ExitCode, Failure> {
    // The connection's own wait for a server is bounded too; an attach does not wait long.
    let mut opts = options(args);
    opts.timeout = opts.timeout.min(Duration::from_secs(10));
    let read = tool::attach(pid, &opts);
    if read.is_ok() && std::env::var_os(super::TEST_PAUSE).is_some() {
        super::test_pause(
            "mpir-attach",
            &format!("the table of launcher {pid} was read"),
            interrupts,
        );
    }
    if let Some(i) = interrupts.caught() {
        return Err(Failure {
            message: format!(
                "caught {}: stopped before printing the table (nothing was printed); the \
                 job was not touched: the attach model never stops it",
                i.signal
            ),
            status: i.exit_status(),
        });
    }
    let (jobs, library) = read?;
    if let Some(e) = ended(pid, "its table was read") {
        let f = Failure::from(e);
        return Err(Failure {
            message: format!("{}: its table is not printed", f.message),
            ..f
        });
    }
    let first = &jobs[0];
    for other in &jobs[1..] {
        eprintln!(
            "mpir-attach: launcher {pid} also runs namespace {} ({} processes)",
            other.nspace,
            other.procs.len()
        );
    }
    let job = Job::from_pmix("attach", pid, &first.nspace, &first.procs, &library);
    if !args.json {
        eprintln!(
            "mpir-attach: via PMIx ({}), namespace {}",
            library.display(),
            first.nspace
        );
    }
    print(args, &job);
    Ok(ExitCode::SUCCESS)
}

/// The signal handler's proof, for [`pause_before_release`] (a plain `fn`).
static INTERRUPTS: OnceLock<Interrupts> = OnceLock::new();

/// `MPIR_ATTACH_TEST_PAUSE` in the launch model: a pause with the job's processes waiting in
/// `MPI_Init`, before the release.
fn pause_before_release(job: &PmixJob) {
    if let Some(interrupts) = INTERRUPTS.get() {
        super::test_pause(
            "mpir-attach",
            &format!(
                "the {} processes of namespace {} wait, not released",
                job.procs.len(),
                job.nspace
            ),
            interrupts,
        );
    }
}

/// The launch model through PMIx: the job started stopped in `MPI_Init`, acquired, released,
/// waited for; the exit status is the job's. A signal caught before the release is passed on
/// to the launcher at once, nothing is released, and the exit status is the launcher's.
pub fn launch(args: &Args, interrupts: Interrupts) -> Result<ExitCode, Failure> {
    let (stdout, stderr) = super::job_output(args.job_output.as_deref()).map_err(Failure::tool)?;
    let _ = INTERRUPTS.set(interrupts);
    let opts = LaunchOptions {
        tool: options(args),
        stop: StopAt::Init,
        stdout: Some(stdout),
        stderr: Some(stderr),
        interrupts: Some(interrupts),
        before_release: std::env::var_os(super::TEST_PAUSE)
            .is_some()
            .then_some(pause_before_release as fn(&PmixJob)),
    };
    let mut launched = match tool::launch(&args.command, opts) {
        Ok(l) => l,
        Err(PmixError::Interrupted {
            pid,
            interrupt,
            status,
        }) => {
            eprintln!(
                "mpir-attach: {}; it ended ({status}) before its processes were released",
                super::passed_on(interrupt, "launcher", pid)
            );
            eprintln!("mpir-attach: the job ended: {status}");
            return Ok(ExitCode::from(super::imp::status_of(status)));
        }
        Err(e) => return Err(e.into()),
    };
    let pid = launched.child.id() as i32;
    let job = Job::from_pmix(
        "launch",
        pid,
        &launched.job.nspace,
        &launched.job.procs,
        &launched.library,
    );
    if !args.json {
        let t = &launched.timings;
        eprintln!(
            "mpir-attach: via PMIx ({}): stopped in init, namespace {}, released after {:.1} ms \
             ({} sent, {})",
            launched.library.display(),
            launched.job.nspace,
            t.released.map_or(0.0, super::model::ms),
            t.releases,
            if t.confirmed {
                "each process seen going on"
            } else {
                "not confirmed"
            }
        );
        print(args, &job);
    }
    let status = loop {
        if let Some(i) = interrupts.caught()
            && interrupts.forward_to(pid).is_some()
        {
            eprintln!("mpir-attach: {}", super::passed_on(i, "launcher", pid));
        }
        match launched.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(Failure::tool(format!("waiting for the launcher: {e}"))),
        }
    };
    if args.json {
        let job = Job {
            exit_status: Some(status.code()),
            ..job
        };
        print(args, &job);
    } else {
        eprintln!("mpir-attach: the job ended: {status}");
    }
    Ok(ExitCode::from(super::imp::status_of(status)))
}
