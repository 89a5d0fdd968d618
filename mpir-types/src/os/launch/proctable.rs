//! The process table: at an MPIR event, `MPIR_debug_state`, the table and the abort string
//! are read, and the MPI processes are released through `MPIR_debug_gate` (step 5, §2.7
//! steps 10–18).

use super::*;

impl<'h> Engine<'h> {
    /// An MPIR event: read the state and what it announces, release the
    /// gates, call the hook.
    pub(super) fn on_event(&mut self, tid: Pid) -> Result<DebugState, ToolError> {
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
                // The job's processes exist now: guard them while the tool holds the starter.
                if let Some(new) = super::guard::Guardian::start(self.leader)
                    && let Some(old) = self.guardian.replace(new)
                {
                    old.disarm();
                }
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
    pub(super) fn release_gates(&self, acq: &Acquisition) -> Vec<GateRelease> {
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
}

pub(super) fn is_local_host(host: &[u8]) -> bool {
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

/// Sets `MPIR_debug_gate = 1` in process `pid`, waiting until `deadline`
/// for it to define the symbol.
pub(super) fn open_gate(pid: i64, deadline: Instant) -> GateOutcome {
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
