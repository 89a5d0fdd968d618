//! What `mpir-attach` acquired: its `--json` document ([`Job`]), and the input of its text
//! ([`super::text`]). Fields are declared in alphabetical order, the key order of the tool's
//! JSON since it was built with `serde_json::json!` (whose maps sort their keys).

use std::time::Duration;

use mpir_types::DebugState;
#[cfg(target_os = "linux")]
use mpir_types::os::Acquisition;
use serde::{Deserialize, Serialize};

use crate::serde_util::{double_option, hex};

/// One run of the tool: the acquisition (attach model; launch model when the starter got as far
/// as the spawned event) and, for the launch model, the events, gates, timings and exit status.
/// What a run did not produce is absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The abort reason, with an acquisition (`null` unless the starter was aborting); for
    /// `--trace`, that of the last `MPIR_DEBUG_ABORTING` event if one had one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    pub abort_string: Option<Option<String>>,
    /// Launch model: where the tool armed its breakpoint (`Entry`, ...; `null` if never).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    pub armed_at: Option<Option<String>>,
    /// What the starter's symbols let the tool do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Capabilities>,
    /// `MPIR_debug_state` when the table was read (its macro name, or `unknown (N)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug_state: Option<String>,
    /// Launch model: the MPIR events seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<Event>>,
    /// Launch model: the job's exit status (`null` if a signal ended it).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    pub exit_status: Option<Option<i32>>,
    /// Launch model: what the tool did with each rank's `MPIR_debug_gate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gates: Option<Vec<Gate>>,
    /// The interface the job was acquired through: `mpir` (the starter's MPIR symbols) or
    /// `pmix` (the launcher's PMIx tool interface). Absent in documents of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// `attach` or `launch`.
    pub model: String,
    /// PMIx: the job's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// PMIx: the libpmix the tool opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmix_library: Option<String>,
    /// The starter's pointer width in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer_width: Option<u8>,
    /// The process table, in rank order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub procs: Option<Vec<Proc>>,
    /// The starter's pid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starter_pid: Option<i32>,
    /// The MPIR symbols found in the starter and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbols: Option<Vec<Symbol>>,
    /// Launch model: when each phase was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
}

/// One entry of the process table (§2.8.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proc {
    /// The executable's name.
    pub executable: String,
    /// The host's name.
    pub host: String,
    /// The process's pid.
    pub pid: i64,
    /// Its rank (its index in the table).
    pub rank: usize,
}

/// An MPIR symbol found in the starter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// Its run-time address.
    #[serde(with = "hex")]
    pub addr: u64,
    /// Its name (`MPIR_Breakpoint`, ...).
    pub name: String,
    /// The object that defines it.
    pub object: String,
    /// Its size in bytes (0 if unknown).
    pub size: u64,
}

/// What the starter's symbols let a tool do (see `mpir_types::Capabilities`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The four required starter symbols are present.
    pub can_acquire: bool,
    /// `MPIR_being_debugged` is present.
    pub can_signal_presence: bool,
    /// `MPIR_force_to_main` is present.
    pub force_to_main: bool,
    /// `MPIR_debug_abort_string` is present.
    pub has_abort_string: bool,
    /// `MPIR_partial_attach_ok` is absent.
    pub must_attach_all: bool,
    /// `MPIR_i_am_starter` is present.
    pub separate_starter: bool,
    /// `MPIR_partial_attach_ok` is present.
    pub supports_partial_attach: bool,
    /// The tool daemon launch extension is present.
    pub supports_tool_daemons: bool,
}

/// An MPIR event (the starter stopped in `MPIR_Breakpoint`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The abort reason, with an aborting event.
    pub abort_string: Option<String>,
    /// Milliseconds since the launch, to the microsecond.
    pub at_ms: f64,
    /// `MPIR_proctable_size` then.
    pub proctable_size: i64,
    /// `MPIR_debug_state` then.
    pub state: String,
    /// The thread that stopped.
    pub thread: i32,
}

/// What the tool did with one rank's `MPIR_debug_gate`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    /// In words (`opened at 0x... in /path`, `skipped`, ...).
    pub gate: String,
    /// The rank's pid.
    pub pid: i64,
    /// The rank.
    pub rank: usize,
}

/// When each phase of a launch was reached, in milliseconds since the launch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// The breakpoint was armed.
    pub armed_ms: Option<f64>,
    /// The tool detached.
    pub detached_ms: Option<f64>,
    /// The starter was executed.
    pub exec_ms: f64,
    /// The spawned event arrived.
    pub spawned_ms: Option<f64>,
}

/// A duration in milliseconds, rounded to the microsecond.
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// A debug state's macro name, or `unknown (N)`.
pub fn state_name(s: DebugState) -> String {
    s.macro_name()
        .map_or_else(|| format!("unknown ({})", s.to_raw()), str::to_owned)
}

#[cfg(target_os = "linux")]
impl Job {
    /// The job of `model` with what `acq` says.
    pub fn acquired(model: &str, acq: &Acquisition) -> Job {
        let c = &acq.capabilities;
        Job {
            abort_string: Some(acq.abort_string.as_ref().map(|s| s.to_string())),
            capabilities: Some(Capabilities {
                can_acquire: c.can_acquire,
                can_signal_presence: c.can_signal_presence,
                force_to_main: c.force_to_main,
                has_abort_string: c.has_abort_string,
                must_attach_all: c.must_attach_all,
                separate_starter: c.separate_starter,
                supports_partial_attach: c.supports_partial_attach,
                supports_tool_daemons: c.supports_tool_daemons,
            }),
            debug_state: Some(state_name(acq.debug_state)),
            interface: Some("mpir".to_owned()),
            model: model.to_owned(),
            pointer_width: Some(acq.layout.pointer_width()),
            procs: Some(
                acq.ranks()
                    .map(|(rank, p)| Proc {
                        executable: p.executable_name.to_string(),
                        host: p.host_name.to_string(),
                        pid: p.pid,
                        rank,
                    })
                    .collect(),
            ),
            starter_pid: Some(acq.starter_pid),
            symbols: Some(
                acq.located
                    .iter()
                    .map(|a| Symbol {
                        addr: a.sym.addr,
                        name: a.symbol.name().to_owned(),
                        object: a.sym.object_path.to_string_lossy().into_owned(),
                        size: a.sym.size,
                    })
                    .collect(),
            ),
            ..Job::default()
        }
    }

    /// The abort string of the last `MPIR_DEBUG_ABORTING` event of `events` that has one:
    /// the top-level `abort_string` of a traced run, whose acquisition was read at the
    /// spawned event, before the job aborted.
    pub fn last_abort_string(events: &[Event]) -> Option<String> {
        events
            .iter()
            .rev()
            .find(|e| e.state == "MPIR_DEBUG_ABORTING" && e.abort_string.is_some())
            .and_then(|e| e.abort_string.clone())
    }

    /// The job of `model` acquired through PMIx from launcher `pid`: namespace `nspace`'s
    /// processes, read with `library`.
    pub fn from_pmix(
        model: &str,
        pid: i32,
        nspace: &str,
        procs: &[mpir_types::ProcDesc],
        library: &std::path::Path,
    ) -> Job {
        Job {
            interface: Some("pmix".to_owned()),
            model: model.to_owned(),
            namespace: Some(nspace.to_owned()),
            pmix_library: Some(library.display().to_string()),
            procs: Some(
                procs
                    .iter()
                    .enumerate()
                    .map(|(rank, p)| Proc {
                        executable: p.executable_name.to_string(),
                        host: p.host_name.to_string(),
                        pid: p.pid,
                        rank,
                    })
                    .collect(),
            ),
            starter_pid: Some(pid),
            ..Job::default()
        }
    }

    /// The job of `model` without an acquisition.
    pub fn without_acquisition(model: &str) -> Job {
        Job {
            model: model.to_owned(),
            ..Job::default()
        }
    }

    /// The `--json` document, pretty-printed (with no final newline).
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod launch {
    use mpir_types::os::{GateOutcome, GateRelease, LaunchTimings, MpirEvent};

    use super::{Event, Gate, Timings, ms, state_name};

    impl From<&MpirEvent> for Event {
        fn from(e: &MpirEvent) -> Event {
            Event {
                abort_string: e.abort_string.as_ref().map(|s| s.to_string()),
                at_ms: ms(e.at),
                proctable_size: e.proctable_size,
                state: state_name(e.state),
                thread: e.thread,
            }
        }
    }

    impl From<&GateRelease> for Gate {
        fn from(g: &GateRelease) -> Gate {
            let gate = match &g.outcome {
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
            Gate {
                gate,
                pid: g.pid,
                rank: g.rank,
            }
        }
    }

    impl From<&LaunchTimings> for Timings {
        fn from(t: &LaunchTimings) -> Timings {
            Timings {
                armed_ms: t.armed.map(ms),
                detached_ms: t.detached.map(ms),
                exec_ms: ms(t.exec),
                spawned_ms: t.spawned.map(ms),
            }
        }
    }
}
