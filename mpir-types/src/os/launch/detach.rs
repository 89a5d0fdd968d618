//! Detaching: every thread stopped, breakpoints removed, `MPIR_being_debugged` cleared, each
//! thread detached (step 6); and ending a starter the tool gives up on.

use super::*;

impl<'h> Engine<'h> {
    /// Stops every thread, removes the breakpoints, clears
    /// `MPIR_being_debugged`, moves threads stopped on a breakpoint back
    /// onto the restored instruction, and detaches.
    pub(super) fn detach_all(&mut self) -> Result<(), ToolError> {
        let mut held: BTreeMap<Pid, Option<Signal>> =
            self.stopped.iter().map(|t| (*t, None)).collect();
        let deadline = Instant::now() + STOP_ALL_TIMEOUT;
        let mut work: Vec<Pid> = self
            .threads
            .iter()
            .filter(|t| !held.contains_key(t))
            .copied()
            .collect();
        while let Some(t) = work.pop() {
            match ptrace::interrupt(t) {
                Ok(()) => {}
                Err(Errno::ESRCH) => {
                    self.threads.remove(&t);
                    continue;
                }
                Err(e) => return Err(ptrace_err("PTRACE_INTERRUPT", t)(e)),
            }
            let ws = wait_one(t, deadline, "the starter's threads to stop")?;
            match ws {
                WaitStatus::PtraceEvent(_, _, e) => {
                    if e == ptrace::Event::PTRACE_EVENT_CLONE as i32
                        && let Ok(new) = ptrace::getevent(t)
                    {
                        let new = Pid::from_raw(new as i32);
                        self.threads.insert(new);
                        work.push(new);
                    }
                    held.insert(t, None);
                }
                WaitStatus::Stopped(_, sig) => match self.breakpoint_hit(t)? {
                    // Stopped on a breakpoint: the SIGTRAP is the tool's.
                    Some(addr) if sig == Signal::SIGTRAP => {
                        self.at_breakpoint.insert(t, addr);
                        held.insert(t, None);
                    }
                    _ => {
                        held.insert(t, Some(sig));
                    }
                },
                ws if exit_status(ws).is_some() => {
                    self.threads.remove(&t);
                    if t == self.leader {
                        // The starter ended meanwhile: nothing to detach.
                        self.finished = true;
                        self.release_guardian();
                        return Ok(());
                    }
                }
                _ => {
                    held.insert(t, None);
                }
            }
            self.stopped.insert(t);
        }
        if let Some(&any) = held.keys().next() {
            let addrs: Vec<u64> = self.breakpoints.keys().copied().collect();
            for addr in addrs {
                self.remove_breakpoint(any, addr)?;
            }
        }
        // Every thread stopped on a breakpoint (also one the tool was
        // handling when it gave up) goes back onto the restored instruction.
        let rewinds: Vec<(Pid, u64)> = self.at_breakpoint.iter().map(|(t, a)| (*t, *a)).collect();
        for (t, addr) in rewinds {
            if held.contains_key(&t) {
                self.rewind(t, addr)?;
            }
        }
        if let Some(addr) = self.syms.as_ref().and_then(|s| s.being_debugged) {
            ProcessMemory::new(self.pid())
                .write_int(&self.layout, addr, i64::from(NOT_BEING_DEBUGGED))
                .map_err(|source| ToolError::Write {
                    pid: self.pid(),
                    symbol: "MPIR_being_debugged",
                    source,
                })?;
        }
        for (t, sig) in held {
            match ptrace::detach(t, sig) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => return Err(ptrace_err("PTRACE_DETACH", t)(e)),
            }
            self.stopped.remove(&t);
            self.threads.remove(&t);
        }
        self.finished = true;
        self.release_guardian();
        Ok(())
    }

    /// Ends a starter the tool gives up on: detach if possible, `SIGTERM`,
    /// `SIGKILL` after a grace period, reap. If it could not be detached, the
    /// guardian (dropped armed with the engine) ends the MPI processes too.
    pub(super) fn abandon(&mut self) {
        let detached = self.detach_all().is_ok();
        if detached {
            let _ = kill(self.leader, Signal::SIGTERM);
            let deadline = Instant::now() + TERM_GRACE;
            let mut backoff = Backoff::new();
            while Instant::now() < deadline {
                match waitpid(self.leader, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => backoff.sleep(),
                    _ => return,
                }
            }
        }
        // Still traced (or not ending): SIGKILL works on stopped tracees too.
        let _ = kill(self.leader, Signal::SIGKILL);
        let deadline = Instant::now() + TERM_GRACE;
        let mut backoff = Backoff::new();
        while Instant::now() < deadline {
            let tids: Vec<Pid> = self.threads.iter().copied().collect();
            for t in tids {
                match waitpid(t, Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => {}
                    Ok(ws) if t == self.leader && exit_status(ws).is_some() => return,
                    Ok(ws) if exit_status(ws).is_some() => {
                        self.threads.remove(&t);
                    }
                    Ok(_) => {}
                    Err(_) => {
                        if t == self.leader {
                            return;
                        }
                        self.threads.remove(&t);
                    }
                }
            }
            backoff.sleep();
        }
    }
}

impl Drop for Engine<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.abandon();
        }
    }
}
