//! The debug state: the event loop that follows the starter's threads until
//! `MPIR_Breakpoint` reports the `MPIR_debug_state` the run waits for (step 5).

use super::*;

impl<'h> Engine<'h> {
    pub(super) fn run(&mut self, goal: Goal) -> Result<Outcome, ToolError> {
        let what = match goal {
            Goal::Spawned => "the MPIR_DEBUG_SPAWNED event",
            Goal::Exit => "the starter to end",
        };
        loop {
            let what = match self.phase {
                Phase::Armed => what,
                _ => "the starter to load the MPIR symbols (it may not implement MPIR)",
            };
            let (tid, ws) = self.wait_any(what)?;
            match ws {
                WaitStatus::Exited(..) | WaitStatus::Signaled(..) => {
                    self.threads.remove(&tid);
                    if tid == self.leader {
                        // Reap what is left (threads report their ends).
                        self.finished = true;
                        self.release_guardian();
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

    pub(super) fn on_breakpoint(
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
                    // A launcher known not to implement MPIR, with no MPIR symbol at all:
                    // say so now rather than wait for a library that never comes.
                    let mpir = SymbolTable::build(self.pid(), &mpir_filter, Some(&mut self.cache))?;
                    if let Err(e) = StarterSymbols::find(&mpir) {
                        let e = crate::os::diagnose::refine_not_a_starter(&mpir, e);
                        if matches!(e, ToolError::NoMpir { .. }) {
                            return Err(e);
                        }
                    }
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
}
