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
//! Exit status: the attach model exits 0 once the table is printed, 1 when the process could
//! not be acquired; the launch model exits with the job's exit status (128 + the signal's
//! number if a signal ended it), 1 when the tool failed; 2 on a usage error (including neither
//! `--pid` nor a command). Errors go to standard error.

pub mod model;
pub mod text;

use std::process::ExitCode;

use clap::{ArgGroup, Parser};

/// Exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "Exit status: attach model: 0 once the table is printed, 1 when the \
                           process could not be acquired; launch model: the job's exit status \
                           (128 + the signal's number if a signal ended it), 1 when the tool \
                           failed; 2 on a usage error. Errors go to standard error.";

/// Acquire the processes of an MPI job through MPIR (attach or launch model).
#[derive(Parser, Debug)]
#[command(
    name = "mpir-attach",
    version,
    after_help = EXIT_STATUS,
    group(ArgGroup::new("target").required(true).args(["pid", "command"]))
)]
pub struct Args {
    /// Attach to this running MPIR starter (e.g. mpiexec's pid).
    #[arg(long, conflicts_with = "command")]
    pub pid: Option<i32>,
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
    /// Launch model: the starter's command line, after `--`.
    #[arg(last = true)]
    pub command: Vec<std::ffi::OsString>,
}

/// The tool: the attach model with `--pid`, else the launch model; the exit status is the
/// job's in the launch model.
pub fn run(args: &Args) -> ExitCode {
    match imp::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mpir-attach: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn run(_: &super::Args) -> Result<std::process::ExitCode, String> {
        Err("the MPIR tool side is implemented for Linux only".to_owned())
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::process::ExitCode;

    use mpir_types::os::attach;

    use super::model::Job;
    use super::{Args, text};

    pub(super) fn run(args: &Args) -> Result<ExitCode, String> {
        if let Some(pid) = args.pid {
            let job = Job::acquired("attach", &attach(pid).map_err(|e| e.to_string())?);
            if args.json {
                println!("{}", job.json());
            } else {
                eprint!("{}", text::summary(&job));
                print!("{}", text::ranks(&job));
            }
            return Ok(ExitCode::SUCCESS);
        }
        launch(args)
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn launch(_: &Args) -> Result<ExitCode, String> {
        Err("the launch model is implemented for x86-64 only".to_owned())
    }

    #[cfg(target_arch = "x86_64")]
    fn launch(args: &Args) -> Result<ExitCode, String> {
        use std::time::Duration;

        use mpir_types::DebugState;
        use mpir_types::os::{
            Acquisition, GatePolicy, LaunchOptions, MpirEvent, launch_with, trace_to_exit,
        };

        use super::model::{Event, ms};

        fn code_of(status: std::process::ExitStatus) -> ExitCode {
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(c), _) => ExitCode::from(c as u8),
                (None, Some(sig)) => ExitCode::from(128u8.wrapping_add(sig as u8)),
                _ => ExitCode::FAILURE,
            }
        }

        let opts = LaunchOptions {
            timeout: Duration::from_secs_f64(args.timeout),
            gate: match args.gate.as_str() {
                "always" => GatePolicy::Always,
                "never" => GatePolicy::Never,
                _ => GatePolicy::IfRequired,
            },
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
        if args.trace {
            let run = trace_to_exit(&args.command, opts, hook).map_err(|e| e.to_string())?;
            if json {
                let job = Job {
                    events: Some(run.events.iter().map(Into::into).collect()),
                    gates: Some(run.gates.iter().map(Into::into).collect()),
                    armed_at: Some(run.armed_at.map(|a| format!("{a:?}"))),
                    timings: Some((&run.timings).into()),
                    exit_status: Some(run.status.code()),
                    ..run.acquisition.as_ref().map_or_else(
                        || Job::without_acquisition("launch"),
                        |a| Job::acquired("launch", a),
                    )
                };
                println!("{}", job.json());
            }
            return Ok(code_of(run.status));
        }
        let mut launched = launch_with(&args.command, opts, hook).map_err(|e| e.to_string())?;
        if !json {
            eprintln!(
                "mpir-attach: armed at {:?}, detached after {:.1} ms; waiting for the job",
                launched.armed_at,
                launched.timings.detached.map_or(0.0, ms)
            );
        }
        let status = launched.wait(None).map_err(|e| e.to_string())?;
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
        Ok(code_of(status))
    }
}
