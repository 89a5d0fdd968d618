//! `mpir-attach`: acquire the processes of an MPI job through the MPIR process acquisition
//! interface, by either model of §2.5.1 of the MPIR spec.
//!
//! ```text
//! mpir-attach --pid PID                 # attach model: a running starter (mpiexec)
//! mpir-attach -- mpiexec -n 4 ./app     # launch model: start the job under ptrace
//! ```
//!
//! Prints one line per rank, `rank R host H executable E pid P`, or with `--json` one JSON
//! object (the ranks, the starter's MPIR symbols and where they were found, the debug state,
//! capabilities and, for the launch model, the events, the gates, the timings and the job's
//! exit status). In the launch model the tool detaches at the `MPIR_DEBUG_SPAWNED` event (or,
//! with `--trace`, stays until the starter ends, reporting every event and the abort string),
//! waits for the job and exits with its exit status. Linux only; the launch model on x86-64.
//!
//! What a run acquired is a [`model::Job`] (the `--json` document, schema:
//! `examples/schemas/mpir-attach.schema.json`); [`text`] renders the lines.
//!
//! The launch model sends the job's standard output and error to the tool's standard error
//! (or to the file `--job-output` names), so that standard output carries the tool's lines or
//! its JSON document alone.
//!
//! Exit status (what `--help` lists, [`EXIT_STATUS`]; the constants are in [`status`]):
//!
//! | status | attach model (`--pid`) |
//! |---|---|
//! | 0 | the table was printed |
//! | 1 | the process could not be read (permissions, garbage, a table that kept changing) |
//! | 2 | usage error (including neither `--pid` nor a command) |
//! | 3 | not an MPIR starter: no MPIR symbols (MPICH's Hydra and PRRTE's `prterun` are named, with what to do instead) |
//! | 4 | an MPI process, not its job's starter (Open MPI's ranks load the starter's symbols; the starter is named if an ancestor is one) |
//! | 5 | the starter's table is empty: it has not spawned a job (`MPIR_NULL`) |
//! | 6 | no such process, or a zombie; or the starter ended while its table was read (the table is not printed) |
//! | 130, 143 | `SIGINT`, `SIGTERM` caught (128 + the signal's number): nothing is printed; the job is untouched (the attach model never stops it) |
//!
//! The launch model exits with the job's exit status (128 + the signal's number if a signal
//! ended it); with 3 when the starter has no MPIR symbols (a known launcher is recognised at
//! its entry point, before the job runs), 1 when the tool failed otherwise, 2 on a usage error.
//! Statuses 3–6 are the tool's only in the attach model and for a starter that did not run:
//! otherwise they may be the job's. Errors go to standard error; nothing is written to standard
//! output on an error.
//!
//! Signals. In the launch model a `SIGINT` or `SIGTERM` sent to the tool is forwarded to the
//! starter, at once, whether the tool still holds it (then it is delivered as soon as the
//! starter runs again: it never stays stopped) or waits for it; `mpiexec` ends its job as it
//! would without the tool (Open MPI 4.1: exit 1 about a second later, its ranks killed), and
//! the tool detaches and exits with the job's status. A `^C` typed at the terminal is not
//! forwarded: the terminal sends it to the starter too (same process group), and Open MPI 4.1
//! takes a second one as "forcibly terminate", leaving its ranks behind. In the attach model a
//! caught signal stops the tool before it prints anything (status 128 + the signal's number).
//! A second `SIGINT` or `SIGTERM` ends the tool at once (the default action). `SIGKILL` of a
//! tool that holds the starter kills the starter with it (`PTRACE_O_EXITKILL`), never leaving
//! it stopped, and the tool's guardian (a process named `mpir-guardian`, forked at the
//! `MPIR_DEBUG_SPAWNED` event and gone once the tool detaches) kills the processes the starter
//! had spawned: Open MPI 4.1 leaves a rank that was still in `PMIx_Init` waiting forever
//! otherwise.
//!
//! Through PMIx (Open MPI 5) the launch model forwards a signal caught before the release at
//! once too: the launcher ends its job with its ranks still waiting in `MPI_Init` (Open MPI
//! 5.0.11: exit 1, as without the tool), nothing is released or printed, and the tool exits
//! with the launcher's status.
//!
//! `MPIR_ATTACH_TEST_PAUSE` (test-only, for `examples/tests/faults.rs` and
//! `examples/tests/mpir_attach.rs`): if set, the attach model pauses after reading the table,
//! before checking the starter once more and printing, and the PMIx launch model pauses with
//! the job's processes waiting, before the release: it writes `mpir-attach: test pause: ...`
//! to standard error and waits, for at most 10 s, for a line (or the end) of standard input or
//! a caught signal.

pub mod model;
#[cfg(target_os = "linux")]
pub mod pmix;
pub mod text;

use std::process::ExitCode;

use clap::{ArgGroup, Parser};

/// Exit statuses, as `--help` lists them.
pub const EXIT_STATUS: &str = "Exit status:
  attach model: 0 the table was printed; 1 the process could not be read; 3 not an MPIR \
starter (no MPIR symbols: e.g. MPICH's Hydra, PRRTE's prterun); 4 an MPI process, not its \
job's starter; 5 the starter's table is empty (no job spawned yet, MPIR_NULL); 6 no such \
process, or a zombie.
  launch model: the job's exit status (128 + the signal's number if a signal ended it); 1 \
when the tool failed; 3 when the starter has no MPIR symbols (the job was not run). SIGINT \
and SIGTERM sent to the tool are forwarded to the starter (a terminal's ^C reaches it \
directly), and the tool exits with the job's status.
  attach model: 6 also when the starter ended while its table was read; 130 (SIGINT), 143 \
(SIGTERM) when a signal stopped the tool before it printed anything (the job is untouched).
  2 on a usage error. Errors go to standard error; the job's output goes to standard error \
(or --job-output), so standard output has the tool's lines or JSON alone.";

/// The tool's own exit statuses (besides the job's, in the launch model).
pub mod status {
    /// The tool failed: the process could not be read, the job could not be launched.
    pub const FAILED: u8 = 1;
    /// A usage error.
    pub const USAGE: u8 = 2;
    /// Not an MPIR starter: no MPIR symbols (a launcher that does not implement MPIR).
    pub const NOT_A_STARTER: u8 = 3;
    /// An MPI process, not its job's starter.
    pub const NOT_THE_STARTER: u8 = 4;
    /// The starter's table is empty: no job spawned yet.
    pub const EMPTY_TABLE: u8 = 5;
    /// No such process, or a zombie; or it ended while it was read.
    pub const NO_PROCESS: u8 = 6;
}

/// `MPIR_ATTACH_TEST_PAUSE`: the test-only pause of the attach model (see the module
/// documentation).
pub const TEST_PAUSE: &str = "MPIR_ATTACH_TEST_PAUSE";

/// Acquire the processes of an MPI job through MPIR (attach or launch model).
#[derive(Parser, Debug)]
#[command(
    name = "mpir-attach",
    version,
    after_help = EXIT_STATUS,
    group(ArgGroup::new("target").required(true).args(["pid", "command"]))
)]
pub struct Args {
    /// Attach to this running MPIR starter or PMIx launcher (e.g. mpiexec's pid).
    #[arg(long, conflicts_with = "command")]
    pub pid: Option<i32>,
    /// The interface: MPIR, the PMIx tool interface, or (auto) what the launcher offers:
    /// PMIx for PRRTE's prterun and Open MPI 5's mpiexec, MPIR otherwise.
    #[arg(long, value_parser = ["auto", "mpir", "pmix"], default_value = "auto")]
    pub via: String,
    /// Print one JSON object instead of one line per rank (schema:
    /// examples/schemas/mpir-attach.schema.json).
    #[arg(long)]
    pub json: bool,
    /// Launch model: seconds to wait for the spawned event (for --trace: for the starter to end).
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Launch model: when to set MPIR_debug_gate in the MPI processes.
    #[arg(long, value_parser = ["if-required", "always", "never"], default_value = "if-required")]
    pub gate: String,
    /// Launch model: stay attached until the starter ends, reporting every MPIR event.
    #[arg(long)]
    pub trace: bool,
    /// Launch model: write the job's standard output and standard error to this file
    /// (default: the tool's standard error).
    #[arg(long, value_name = "FILE", conflicts_with = "pid")]
    pub job_output: Option<std::path::PathBuf>,
    /// Launch model: the starter's command line, after `--`.
    #[arg(last = true)]
    pub command: Vec<std::ffi::OsString>,
}

/// Why the tool stopped: the message for standard error and the exit status.
#[derive(Debug)]
pub struct Failure {
    /// The message (without the `mpir-attach: ` prefix).
    pub message: String,
    /// The exit status ([`status`]).
    pub status: u8,
}

impl Failure {
    /// A failure of the tool itself ([`status::FAILED`]).
    pub fn tool(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            status: status::FAILED,
        }
    }
}

/// The tool: the attach model with `--pid`, else the launch model; the exit status is the
/// job's in the launch model.
pub fn run(args: &Args) -> ExitCode {
    match imp::run(args) {
        Ok(code) => code,
        Err(f) => {
            eprintln!("mpir-attach: {}", f.message);
            ExitCode::from(f.status)
        }
    }
}

#[cfg(target_os = "linux")]
impl From<mpir_types::os::ToolError> for Failure {
    /// The message and status of an error of mpir-types, with what to do where there is
    /// something to do.
    fn from(e: mpir_types::os::ToolError) -> Failure {
        use mpir_types::os::ToolError as E;
        let status = match &e {
            E::NotAStarter { .. } | E::NoMpir { .. } => status::NOT_A_STARTER,
            E::NotTheStarter { .. } => status::NOT_THE_STARTER,
            E::NoSuchProcess { .. } | E::Zombie { .. } | E::Ended { .. } => status::NO_PROCESS,
            _ => status::FAILED,
        };
        let message = match &e {
            E::NotTheStarter {
                starter: Some(s), ..
            } => {
                format!("{e}: run mpir-attach --pid {s}")
            }
            _ => e.to_string(),
        };
        Failure { message, status }
    }
}

/// Where a launched job's standard output and error go: both to `file` (created, or
/// truncated) if given, else to the tool's standard error, so that the tool's standard output
/// carries its own lines or JSON alone. Shared with `mqd-dump`.
#[cfg(unix)]
pub fn job_output(
    file: Option<&std::path::Path>,
) -> Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd), String> {
    use std::os::fd::{AsFd, OwnedFd};
    let out: OwnedFd = match file {
        Some(path) => std::fs::File::create(path)
            .map_err(|e| format!("--job-output {}: {e}", path.display()))?
            .into(),
        None => std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| format!("duplicating standard error: {e}"))?,
    };
    let err = out
        .try_clone()
        .map_err(|e| format!("duplicating the job's output: {e}"))?;
    Ok((out, err))
}

/// What the launch model did with a caught signal, for the message: `who` is the process it
/// launched (`starter`, `launcher`).
#[cfg(target_os = "linux")]
pub(crate) fn passed_on(i: mpir_types::os::Interrupt, who: &str, pid: i32) -> String {
    if i.from_terminal {
        format!(
            "caught {} from the terminal, which sent it to the {who} (pid {pid}) too",
            i.signal
        )
    } else {
        format!("caught {}: forwarded to the {who} (pid {pid})", i.signal)
    }
}

/// Test-only: a pause at `point` (`tool: test pause: POINT` on standard error), until a line
/// or the end of standard input, a signal caught by `interrupts`, or 10 s; for the tests of
/// `examples/tests/faults.rs`, through `MPIR_ATTACH_TEST_PAUSE` and `MQD_DUMP_TEST_PAUSE`.
#[cfg(target_os = "linux")]
pub(crate) fn test_pause(tool: &str, point: &str, interrupts: &mpir_types::os::Interrupts) {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    use std::time::{Duration, Instant};
    eprintln!("{tool}: test pause: {point}");
    let (tx, rx) = channel();
    // Left blocked on standard input if the pause ends otherwise: the tool ends soon after.
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        let _ = tx.send(());
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && interrupts.caught().is_none() {
        match rx.recv_timeout(Duration::from_millis(10)) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// The failure for an acquisition whose table is empty ([`status::EMPTY_TABLE`]), if it is.
pub fn empty_table(job: &model::Job) -> Option<Failure> {
    if job.procs.as_ref().is_some_and(|p| !p.is_empty()) {
        return None;
    }
    Some(Failure {
        message: format!(
            "the process table of starter {} is empty (MPIR_debug_state {}): it has not \
             spawned its job yet; attach again once it has, or launch the job under \
             mpir-attach",
            job.starter_pid.unwrap_or_default(),
            job.debug_state.as_deref().unwrap_or("unknown")
        ),
        status: status::EMPTY_TABLE,
    })
}

#[cfg(not(target_os = "linux"))]
pub(crate) mod imp {
    pub(super) fn run(_: &super::Args) -> Result<std::process::ExitCode, super::Failure> {
        Err(super::Failure::tool(
            "the MPIR tool side is implemented for Linux only",
        ))
    }
}

#[cfg(target_os = "linux")]
pub(crate) mod imp {
    use std::process::{ExitCode, ExitStatus};

    use mpir_types::os::{Interrupts, attach, ended};

    use super::model::Job;
    use super::{Args, Failure, empty_table, text};

    /// The exit status of a starter's exit status: its code, or 128 + the signal's number.
    pub(crate) fn status_of(status: ExitStatus) -> u8 {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(c), _) => c as u8,
            (None, Some(sig)) => 128u8.wrapping_add(sig as u8),
            _ => super::status::FAILED,
        }
    }

    pub(super) fn run(args: &Args) -> Result<ExitCode, Failure> {
        let interrupts = Interrupts::catch()?;
        if let Some(pid) = args.pid {
            if args.via == "pmix" {
                return super::pmix::attach(args, pid, &interrupts);
            }
            return attach_model(args, pid, &interrupts);
        }
        let pmix = match args.via.as_str() {
            "pmix" => true,
            "mpir" => false,
            _ => args
                .command
                .first()
                .is_some_and(|p| super::pmix::is_prrte_launcher(p)),
        };
        if pmix {
            return super::pmix::launch(args, interrupts);
        }
        launch(args, interrupts)
    }

    /// The attach model: read, then print only if no signal was caught and the starter still
    /// runs.
    fn attach_model(args: &Args, pid: i32, interrupts: &Interrupts) -> Result<ExitCode, Failure> {
        let read = attach(pid);
        if read.is_ok() && std::env::var_os(super::TEST_PAUSE).is_some() {
            super::test_pause(
                "mpir-attach",
                &format!("the table of starter {pid} was read"),
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
        // What the launcher offers instead: PRRTE's PMIx tool interface.
        if args.via == "auto"
            && let Err(e) = &read
        {
            use mpir_types::os::{KnownLauncher, ToolError as E};
            let pmix = match e {
                E::NoMpir {
                    launcher: KnownLauncher::Prrte,
                    ..
                } => true,
                E::NotAStarter { .. } | E::NotTheStarter { starter: None, .. } => {
                    mpir_types::pmix::tool::find_launcher_of(pid).is_some()
                }
                _ => false,
            };
            if pmix {
                return super::pmix::attach(args, pid, interrupts);
            }
        }
        let acq = read?;
        // Once more just before printing: a starter that ended has no job to show.
        if let Some(e) = ended(pid, "its table was read") {
            let f = Failure::from(e);
            return Err(Failure {
                message: format!("{}: its table is not printed", f.message),
                ..f
            });
        }
        let job = Job::acquired("attach", &acq);
        if let Some(f) = empty_table(&job) {
            return Err(f);
        }
        if args.json {
            println!("{}", job.json());
        } else {
            eprint!("{}", text::summary(&job));
            print!("{}", text::ranks(&job));
        }
        Ok(ExitCode::SUCCESS)
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn launch(_: &Args, _: Interrupts) -> Result<ExitCode, Failure> {
        Err(Failure::tool(
            "the launch model is implemented for x86-64 only",
        ))
    }

    #[cfg(target_arch = "x86_64")]
    fn launch(args: &Args, interrupts: Interrupts) -> Result<ExitCode, Failure> {
        use std::time::Duration;

        use mpir_types::DebugState;
        use mpir_types::os::{
            Acquisition, GatePolicy, LaunchOptions, MpirEvent, ToolError, launch_with,
            trace_to_exit,
        };

        use super::model::{Event, ms};

        let (stdout, stderr) =
            super::job_output(args.job_output.as_deref()).map_err(Failure::tool)?;
        let opts = LaunchOptions {
            stdout: Some(stdout),
            stderr: Some(stderr),
            timeout: Duration::from_secs_f64(args.timeout),
            gate: match args.gate.as_str() {
                "always" => GatePolicy::Always,
                "never" => GatePolicy::Never,
                _ => GatePolicy::IfRequired,
            },
            interrupts: Some(interrupts),
            ..LaunchOptions::default()
        };
        let json = args.json;
        let hook = |e: &MpirEvent, acq: Option<&Acquisition>| {
            if json {
                return;
            }
            eprint!("{}", text::event(&Event::from(e)));
            if let (DebugState::Spawned, Some(acq)) = (e.state, acq) {
                let job = Job::acquired("launch", acq);
                eprint!("{}", text::summary(&job));
                print!("{}", text::ranks(&job));
            }
        };
        // A signal caught before the job was acquired: the starter had it too, and ended.
        let ended_early = |e: ToolError| match (e, interrupts.caught()) {
            (ToolError::StarterEnded { pid, status, .. }, Some(i)) => {
                eprintln!(
                    "mpir-attach: {}; it ended ({status}) before the job was acquired",
                    super::passed_on(i, "starter", pid)
                );
                Ok(ExitCode::from(status_of(status)))
            }
            (e, _) => Err(Failure::from(e)),
        };
        if args.trace {
            let run = match trace_to_exit(&args.command, opts, hook) {
                Ok(run) => run,
                Err(e) => return ended_early(e),
            };
            if let Some(i) = interrupts.caught() {
                eprintln!("mpir-attach: {}", super::passed_on(i, "starter", run.pid));
            }
            if json {
                let events: Vec<Event> = run.events.iter().map(Into::into).collect();
                let base = run.acquisition.as_ref().map_or_else(
                    || Job::without_acquisition("launch"),
                    |a| Job::acquired("launch", a),
                );
                // The table was read at the spawned event; an abort came later.
                let abort_string = Job::last_abort_string(&events)
                    .map(Some)
                    .or_else(|| base.abort_string.clone());
                let job = Job {
                    abort_string,
                    events: Some(events),
                    gates: Some(run.gates.iter().map(Into::into).collect()),
                    armed_at: Some(run.armed_at.map(|a| format!("{a:?}"))),
                    timings: Some((&run.timings).into()),
                    exit_status: Some(run.status.code()),
                    ..base
                };
                println!("{}", job.json());
            }
            return Ok(ExitCode::from(status_of(run.status)));
        }
        let mut launched = match launch_with(&args.command, opts, hook) {
            Ok(l) => l,
            Err(e) => return ended_early(e),
        };
        if !json {
            eprintln!(
                "mpir-attach: armed at {:?}, detached after {:.1} ms; waiting for the job",
                launched.armed_at,
                launched.timings.detached.map_or(0.0, ms)
            );
        }
        // `wait` forwards the caught signals; the slices let the tool say so once.
        let mut told = false;
        let status = loop {
            let waited = launched.wait(Some(Duration::from_millis(100)));
            if let (false, Some(i)) = (told, interrupts.caught()) {
                eprintln!(
                    "mpir-attach: {}",
                    super::passed_on(i, "starter", launched.pid())
                );
                told = true;
            }
            match waited {
                Ok(status) => break status,
                Err(ToolError::Timeout { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        };
        if json {
            let job = Job {
                events: Some(launched.events.iter().map(Into::into).collect()),
                gates: Some(launched.gates.iter().map(Into::into).collect()),
                armed_at: Some(Some(format!("{:?}", launched.armed_at))),
                timings: Some((&launched.timings).into()),
                exit_status: Some(status.code()),
                ..Job::acquired("launch", &launched.acquisition)
            };
            println!("{}", job.json());
        } else {
            eprintln!("mpir-attach: the job ended: {status}");
        }
        Ok(ExitCode::from(status_of(status)))
    }
}
