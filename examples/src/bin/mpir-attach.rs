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

use std::process::ExitCode;

use clap::Parser;

/// Acquire the processes of an MPI job through MPIR (attach or launch model).
#[derive(Parser, Debug)]
#[command(name = "mpir-attach", version)]
struct Args {
    /// Attach to this running MPIR starter (e.g. mpiexec's pid).
    #[arg(long, conflicts_with = "command")]
    pid: Option<i32>,
    /// Print one JSON object instead of one line per rank.
    #[arg(long)]
    json: bool,
    /// Launch model: seconds to wait for the spawned event (for --trace: for the starter to end).
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Launch model: when to set MPIR_debug_gate in the MPI processes.
    #[arg(long, value_parser = ["if-required", "always", "never"], default_value = "if-required")]
    gate: String,
    /// Launch model: stay attached until the starter ends, reporting every MPIR event.
    #[arg(long)]
    trace: bool,
    /// Launch model: the starter's command line, after `--`.
    #[arg(last = true)]
    command: Vec<std::ffi::OsString>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.pid.is_none() && args.command.is_empty() {
        eprintln!("mpir-attach: give --pid PID or a starter command line after --");
        return ExitCode::from(2);
    }
    match imp::run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mpir-attach: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(crate) fn run(_: &super::Args) -> Result<std::process::ExitCode, String> {
        Err("the MPIR tool side is implemented for Linux only".to_owned())
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::process::ExitCode;
    use std::time::Duration;

    use mpir_types::os::{Acquisition, attach};
    use mpir_types::{DebugState, Symbol};
    use serde_json::{Value, json};

    use super::Args;

    fn ms(d: Duration) -> f64 {
        (d.as_secs_f64() * 1e6).round() / 1e3
    }

    fn acquisition_json(acq: &Acquisition) -> Value {
        let procs: Vec<Value> = acq
            .ranks()
            .map(|(rank, p)| {
                json!({
                    "rank": rank,
                    "host": p.host_name.to_string_lossy(),
                    "executable": p.executable_name.to_string_lossy(),
                    "pid": p.pid,
                })
            })
            .collect();
        let symbols: Vec<Value> = acq
            .located
            .iter()
            .map(|a| {
                json!({
                    "name": a.symbol.name(),
                    "addr": format!("{:#x}", a.sym.addr),
                    "size": a.sym.size,
                    "object": a.sym.object_path.to_string_lossy(),
                })
            })
            .collect();
        let c = &acq.capabilities;
        json!({
            "starter_pid": acq.starter_pid,
            "pointer_width": acq.layout.pointer_width(),
            "debug_state": state_name(acq.debug_state),
            "abort_string": acq.abort_string.as_ref().map(|s| s.to_string_lossy()),
            "procs": procs,
            "symbols": symbols,
            "capabilities": {
                "can_acquire": c.can_acquire,
                "separate_starter": c.separate_starter,
                "can_signal_presence": c.can_signal_presence,
                "has_abort_string": c.has_abort_string,
                "supports_partial_attach": c.supports_partial_attach,
                "must_attach_all": c.must_attach_all,
                "supports_tool_daemons": c.supports_tool_daemons,
                "force_to_main": c.force_to_main,
            },
        })
    }

    fn state_name(s: DebugState) -> String {
        s.macro_name()
            .map_or_else(|| format!("unknown ({})", s.to_raw()), str::to_owned)
    }

    fn print_ranks(acq: &Acquisition) {
        for (rank, p) in acq.ranks() {
            println!(
                "rank {rank} host {} executable {} pid {}",
                p.host_name, p.executable_name, p.pid
            );
        }
    }

    fn describe(acq: &Acquisition) {
        let objects: std::collections::BTreeSet<_> = acq
            .located
            .iter()
            .map(|a| a.sym.object_path.display().to_string())
            .collect();
        let breakpoint = acq.locate(Symbol::Breakpoint).map_or(0, |s| s.addr);
        eprintln!(
            "mpir-attach: starter {} ({} ranks, {}), MPIR_Breakpoint at {breakpoint:#x}, symbols in {}",
            acq.starter_pid,
            acq.procs.len(),
            state_name(acq.debug_state),
            objects.into_iter().collect::<Vec<_>>().join(", "),
        );
    }

    pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
        if let Some(pid) = args.pid {
            let acq = attach(pid).map_err(|e| e.to_string())?;
            if args.json {
                let mut v = acquisition_json(&acq);
                v["model"] = json!("attach");
                println!("{v:#}");
            } else {
                describe(&acq);
                print_ranks(&acq);
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
        use mpir_types::os::{
            GateOutcome, GatePolicy, GateRelease, LaunchOptions, LaunchTimings, MpirEvent,
            launch_with, trace_to_exit,
        };

        fn events_json(events: &[MpirEvent]) -> Value {
            events
                .iter()
                .map(|e| {
                    json!({
                        "state": state_name(e.state),
                        "thread": e.thread,
                        "at_ms": ms(e.at),
                        "proctable_size": e.proctable_size,
                        "abort_string": e.abort_string.as_ref().map(|s| s.to_string_lossy()),
                    })
                })
                .collect()
        }
        fn gates_json(gates: &[GateRelease]) -> Value {
            gates
                .iter()
                .map(|g| {
                    let outcome = match &g.outcome {
                        GateOutcome::NotRequired => "not required (MPIR_partial_attach_ok)".into(),
                        GateOutcome::Skipped => "skipped".into(),
                        GateOutcome::Opened { addr, object } => {
                            format!("opened at {addr:#x} in {}", object.display())
                        }
                        GateOutcome::NoGate => "no MPIR_debug_gate".into(),
                        GateOutcome::Remote => "remote host".into(),
                        GateOutcome::Failed(e) => format!("failed: {e}"),
                        other => format!("{other:?}"),
                    };
                    json!({ "rank": g.rank, "pid": g.pid, "gate": outcome })
                })
                .collect()
        }
        fn timings_json(t: &LaunchTimings) -> Value {
            json!({
                "exec_ms": ms(t.exec),
                "armed_ms": t.armed.map(ms),
                "spawned_ms": t.spawned.map(ms),
                "detached_ms": t.detached.map(ms),
            })
        }
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
            eprintln!(
                "mpir-attach: MPIR event {} at {:.1} ms",
                state_name(e.state),
                ms(e.at)
            );
            if let Some(s) = &e.abort_string {
                eprintln!("mpir-attach: abort string: {s}");
            }
            if let (DebugState::Spawned, Some(acq)) = (e.state, acq) {
                describe(acq);
                print_ranks(acq);
            }
        };
        if args.trace {
            let run = trace_to_exit(&args.command, opts, hook).map_err(|e| e.to_string())?;
            if json {
                let mut v = run
                    .acquisition
                    .as_ref()
                    .map_or_else(|| json!({}), acquisition_json);
                v["model"] = json!("launch");
                v["events"] = events_json(&run.events);
                v["gates"] = gates_json(&run.gates);
                v["armed_at"] = json!(run.armed_at.map(|a| format!("{a:?}")));
                v["timings"] = timings_json(&run.timings);
                v["exit_status"] = json!(run.status.code());
                println!("{v:#}");
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
            let mut v = acquisition_json(&launched.acquisition);
            v["model"] = json!("launch");
            v["events"] = events_json(&launched.events);
            v["gates"] = gates_json(&launched.gates);
            v["armed_at"] = json!(format!("{:?}", launched.armed_at));
            v["timings"] = timings_json(&launched.timings);
            v["exit_status"] = json!(status.code());
            println!("{v:#}");
        } else {
            eprintln!("mpir-attach: the job ended: {status}");
        }
        Ok(code_of(status))
    }
}
