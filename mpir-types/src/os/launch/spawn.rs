//! Spawn and breakpoint: the starter forked, seized and exec'd under `ptrace` (steps 1–2 of
//! the module documentation), then armed: `MPIR_being_debugged`, `int3` breakpoints and
//! stepping over them (steps 2–4).

use super::*;

/// The program `argv0` names: as is if it contains a `/`, else the first
/// executable file of that name in `PATH`.
fn resolve_program(argv0: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf, ToolError> {
    use std::os::unix::fs::PermissionsExt;
    if argv0.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(argv0));
    }
    let path_var = path_var.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(path_var)
        .map(|dir| dir.join(argv0))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .ok_or_else(|| ToolError::Exec {
            program: argv0.to_string_lossy().into_owned(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
}

fn cstring(bytes: Vec<u8>, what: &str) -> Result<CString, ToolError> {
    CString::new(bytes)
        .map_err(|_| ToolError::InvalidArgument(format!("{what} contains a NUL byte")))
}

/// Everything the child needs after `fork`, prepared before it: the child
/// may only make async-signal-safe calls (the tool may be multithreaded).
struct ExecPlan {
    path: CString,
    _argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    _env: Vec<CString>,
    env_ptrs: Vec<*const libc::c_char>,
    cwd: Option<CString>,
    stdio: [Option<RawFd>; 3],
}

impl ExecPlan {
    fn new<S: AsRef<OsStr>>(argv: &[S], opts: &LaunchOptions) -> Result<Self, ToolError> {
        let Some(argv0) = argv.first() else {
            return Err(ToolError::InvalidArgument("empty command line".to_owned()));
        };
        let mut env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
        for (k, v) in &opts.env {
            env.insert(k.clone(), v.clone());
        }
        let program = resolve_program(
            argv0.as_ref(),
            env.get(OsStr::new("PATH")).map(|p| p.as_os_str()),
        )?;
        let path = cstring(program.into_os_string().into_vec(), "the program path")?;
        let argv: Vec<CString> = argv
            .iter()
            .map(|a| cstring(a.as_ref().as_bytes().to_vec(), "an argument"))
            .collect::<Result<_, _>>()?;
        let env: Vec<CString> = env
            .into_iter()
            .map(|(k, v)| {
                let mut kv = k.into_vec();
                kv.push(b'=');
                kv.extend(v.into_vec());
                cstring(kv, "an environment variable")
            })
            .collect::<Result<_, _>>()?;
        let ptrs = |v: &[CString]| {
            v.iter()
                .map(|c| c.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        let cwd = match &opts.cwd {
            Some(d) => Some(cstring(
                d.clone().into_os_string().into_vec(),
                "the working directory",
            )?),
            None => None,
        };
        Ok(ExecPlan {
            path,
            argv_ptrs: ptrs(&argv),
            _argv: argv,
            env_ptrs: ptrs(&env),
            _env: env,
            cwd,
            stdio: [
                opts.stdin.as_ref().map(|f| f.as_raw_fd()),
                opts.stdout.as_ref().map(|f| f.as_raw_fd()),
                opts.stderr.as_ref().map(|f| f.as_raw_fd()),
            ],
        })
    }
}

/// The child's side of the fork: set up, wait for the tool's go, exec.
///
/// # Safety
///
/// Must be called only in the child of `fork`, with file descriptors and
/// pointers prepared by the parent before the fork ([`ExecPlan`] keeps the
/// strings alive). It makes only async-signal-safe calls and never returns.
unsafe fn exec_child(
    plan: &ExecPlan,
    go_read: RawFd,
    go_write: RawFd,
    err_read: RawFd,
    err_write: RawFd,
) -> ! {
    // SAFETY: (for every call below) async-signal-safe libc calls on file
    // descriptors and NUL-terminated strings prepared before the fork; the
    // sigset is a local initialised by sigemptyset.
    unsafe {
        libc::close(go_write);
        libc::close(err_read);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let fail = |err_write: RawFd| -> ! {
            let errno = *libc::__errno_location();
            let bytes = errno.to_ne_bytes();
            libc::write(err_write, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(127)
        };
        for (target, fd) in plan.stdio.iter().enumerate() {
            if let Some(fd) = *fd
                && fd != target as RawFd
                && libc::dup2(fd, target as RawFd) < 0
            {
                fail(err_write);
            }
        }
        if let Some(cwd) = &plan.cwd
            && libc::chdir(cwd.as_ptr()) != 0
        {
            fail(err_write);
        }
        let mut byte = 0u8;
        loop {
            let n = libc::read(go_read, (&raw mut byte).cast(), 1);
            if n == 1 {
                break;
            }
            if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            libc::_exit(127);
        }
        libc::execve(
            plan.path.as_ptr(),
            plan.argv_ptrs.as_ptr(),
            plan.env_ptrs.as_ptr(),
        );
        fail(err_write)
    }
}

/// Forks, seizes and execs the starter; returns its pid at the exec stop's
/// doorstep (the exec event is still to be waited for).
fn spawn_seized(plan: &ExecPlan, program: &str) -> Result<Pid, ToolError> {
    let pipe = || pipe2(OFlag::O_CLOEXEC).map_err(|e| ToolError::io("pipe2", e.into()));
    let (go_read, go_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    // SAFETY: the child runs only `exec_child`, which makes async-signal-safe
    // calls on data prepared before the fork, then execs or exits.
    let fork = unsafe { libc::fork() };
    if fork < 0 {
        return Err(ToolError::io("fork", std::io::Error::last_os_error()));
    }
    if fork == 0 {
        // SAFETY: this is the child of the fork above; `plan` and the pipe
        // descriptors were prepared before it.
        unsafe {
            exec_child(
                plan,
                go_read.as_raw_fd(),
                go_write.as_raw_fd(),
                err_read.as_raw_fd(),
                err_write.as_raw_fd(),
            )
        }
    }
    let pid = Pid::from_raw(fork);
    drop(go_read);
    drop(err_write);
    let options = ptrace::Options::PTRACE_O_TRACEEXEC
        | ptrace::Options::PTRACE_O_TRACECLONE
        | ptrace::Options::PTRACE_O_EXITKILL;
    if let Err(e) = ptrace::seize(pid, options) {
        let _ = kill(pid, Signal::SIGKILL);
        let _ = waitpid(pid, None);
        return Err(ptrace_err("PTRACE_SEIZE", pid)(e));
    }
    // Go: the child execs. EOF on the error pipe means the exec succeeded.
    let _ = nix::unistd::write(&go_write, &[1]);
    drop(go_write);
    let mut buf = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match nix::unistd::read(&err_read, &mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(Errno::EINTR) => {}
            Err(_) => break,
        }
    }
    if got == 4 {
        // The child reported the error of chdir, dup2 or execve and exits.
        while let Err(Errno::EINTR) = waitpid(pid, Some(WaitPidFlag::__WALL)) {}
        return Err(ToolError::Exec {
            program: program.to_owned(),
            source: std::io::Error::from_raw_os_error(i32::from_ne_bytes(buf)),
        });
    }
    Ok(pid)
}

/// The program's entry point from `/proc/PID/auxv`.
fn entry_point(pid: Pid, layout: &TargetLayout) -> Result<u64, ToolError> {
    let what = format!("/proc/{pid}/auxv");
    let data = std::fs::read(&what).map_err(|e| ToolError::io(what, e))?;
    let w = usize::from(layout.pointer_width());
    data.chunks_exact(2 * w)
        .map(|pair| {
            (
                layout.decode_pointer(&pair[..w]).unwrap_or_default(),
                layout.decode_pointer(&pair[w..]).unwrap_or_default(),
            )
        })
        .take_while(|(k, _)| *k != 0)
        .find(|(k, _)| *k == AT_ENTRY)
        .map(|(_, v)| v)
        .ok_or_else(|| ToolError::Unsupported(format!("process {pid} has no AT_ENTRY")))
}

impl<'h> Engine<'h> {
    pub(super) fn start<S: AsRef<OsStr>>(
        argv: &[S],
        opts: LaunchOptions,
        hook: &'h mut Hook<'h>,
    ) -> Result<Self, ToolError> {
        let plan = ExecPlan::new(argv, &opts)?;
        let program = argv[0].as_ref().to_string_lossy().into_owned();
        let start = Instant::now();
        let leader = spawn_seized(&plan, &program)?;
        // The child has its copies of the standard streams now.
        drop(plan);
        let mut engine = Engine {
            leader,
            start,
            deadline: start + opts.timeout,
            timeout: opts.timeout,
            threads: BTreeSet::from([leader]),
            stopped: BTreeSet::new(),
            at_breakpoint: BTreeMap::new(),
            breakpoints: BTreeMap::new(),
            cache: ObjectCache::default(),
            layout: TargetLayout::host(),
            syms: None,
            phase: Phase::AwaitExec,
            gate: opts.gate,
            gate_timeout: opts.gate_timeout,
            limits: opts.limits,
            hook,
            events: Vec::new(),
            gates: Vec::new(),
            acquisition: None,
            armed_at: None,
            timings: LaunchTimings::default(),
            finished: false,
            interrupts: opts.interrupts,
            guardian: None,
        };
        drop(opts);
        // The first stop is the exec event.
        match engine.run_until_exec()? {
            None => Ok(engine),
            Some(status) => {
                engine.finished = true;
                Err(ToolError::StarterEnded {
                    pid: leader.as_raw(),
                    status,
                    waiting_for: "its exec",
                })
            }
        }
    }

    pub(super) fn run_until_exec(&mut self) -> Result<Option<ExitStatus>, ToolError> {
        loop {
            let (tid, ws) = self.wait_any("the starter's exec")?;
            match ws {
                WaitStatus::PtraceEvent(_, _, e)
                    if e == ptrace::Event::PTRACE_EVENT_EXEC as i32 =>
                {
                    self.on_exec(tid)?;
                    self.cont(tid, None)?;
                    return Ok(None);
                }
                ws if tid == self.leader && exit_status(ws).is_some() => {
                    return Ok(exit_status(ws));
                }
                WaitStatus::Stopped(_, sig) => self.cont(tid, Some(sig))?,
                _ => self.cont(tid, None)?,
            }
        }
    }

    /// A new program image: forget the old breakpoints, find the symbols or
    /// break at the entry point.
    pub(super) fn on_exec(&mut self, tid: Pid) -> Result<(), ToolError> {
        self.timings.exec = self.start.elapsed();
        self.breakpoints.clear();
        self.syms = None;
        self.threads.insert(self.leader);
        self.layout = target_layout(self.pid())?;
        if self.try_arm(tid, ArmPoint::Exec)? {
            return Ok(());
        }
        let entry = entry_point(self.leader, &self.layout)?;
        self.insert_breakpoint(tid, entry)?;
        self.phase = Phase::AwaitEntry(entry);
        Ok(())
    }

    /// Looks the starter's symbols up; if they are all there, sets
    /// `MPIR_being_debugged` and breaks at `MPIR_Breakpoint`.
    pub(super) fn try_arm(&mut self, tid: Pid, at: ArmPoint) -> Result<bool, ToolError> {
        let table = SymbolTable::build(self.pid(), &mpir_filter, Some(&mut self.cache))?;
        let syms = match StarterSymbols::find(&table) {
            Ok(s) => s,
            Err(ToolError::NotAStarter { .. }) => return Ok(false),
            Err(e) => return Err(e),
        };
        if let Some(addr) = syms.being_debugged {
            ProcessMemory::new(self.pid())
                .write_int(&self.layout, addr, i64::from(BEING_DEBUGGED))
                .map_err(|source| ToolError::Write {
                    pid: self.pid(),
                    symbol: "MPIR_being_debugged",
                    source,
                })?;
        }
        self.insert_breakpoint(tid, syms.breakpoint)?;
        self.syms = Some(syms);
        self.phase = Phase::Armed;
        self.armed_at = Some(at);
        self.timings.armed = Some(self.start.elapsed());
        Ok(true)
    }

    /// Replaces the byte at `addr` through the stopped thread `tid`; returns
    /// the old byte. Works on read-only text (`PTRACE_POKEDATA` forces it)
    /// and never crosses a page (aligned words).
    pub(super) fn poke_byte(&self, tid: Pid, addr: u64, byte: u8) -> Result<u8, ToolError> {
        let word_addr = addr & !7;
        let shift = 8 * (addr - word_addr);
        let ptr = word_addr as usize as ptrace::AddressType;
        let word = ptrace::read(tid, ptr).map_err(ptrace_err("PTRACE_PEEKDATA", tid))? as u64;
        let old = (word >> shift) as u8;
        let new = (word & !(0xff << shift)) | (u64::from(byte) << shift);
        ptrace::write(tid, ptr, new as libc::c_long).map_err(ptrace_err("PTRACE_POKEDATA", tid))?;
        Ok(old)
    }

    pub(super) fn insert_breakpoint(&mut self, tid: Pid, addr: u64) -> Result<(), ToolError> {
        if !self.breakpoints.contains_key(&addr) {
            let old = self.poke_byte(tid, addr, INT3)?;
            self.breakpoints.insert(addr, old);
        }
        Ok(())
    }

    pub(super) fn remove_breakpoint(&mut self, tid: Pid, addr: u64) -> Result<(), ToolError> {
        if let Some(old) = self.breakpoints.remove(&addr) {
            self.poke_byte(tid, addr, old)?;
        }
        Ok(())
    }

    /// If `tid` stopped on one of the breakpoints, its address.
    pub(super) fn breakpoint_hit(&self, tid: Pid) -> Result<Option<u64>, ToolError> {
        let regs = ptrace::getregs(tid).map_err(ptrace_err("PTRACE_GETREGS", tid))?;
        let addr = regs.rip.wrapping_sub(1);
        Ok(self.breakpoints.contains_key(&addr).then_some(addr))
    }

    /// Moves `tid` back onto the breakpoint instruction at `addr`.
    pub(super) fn rewind(&mut self, tid: Pid, addr: u64) -> Result<(), ToolError> {
        self.at_breakpoint.remove(&tid);
        let mut regs = ptrace::getregs(tid).map_err(ptrace_err("PTRACE_GETREGS", tid))?;
        regs.rip = addr;
        ptrace::setregs(tid, regs).map_err(ptrace_err("PTRACE_SETREGS", tid))
    }

    /// Executes the original instruction under the breakpoint at `addr` in
    /// `tid` and re-inserts the breakpoint; returns a signal that arrived
    /// meanwhile, to deliver when continuing.
    pub(super) fn step_over(&mut self, tid: Pid, addr: u64) -> Result<Option<Signal>, ToolError> {
        self.remove_breakpoint(tid, addr)?;
        self.rewind(tid, addr)?;
        let mut pending = None;
        self.stopped.remove(&tid);
        ptrace::step(tid, None).map_err(ptrace_err("PTRACE_SINGLESTEP", tid))?;
        self.stopped.insert(tid);
        loop {
            match wait_one(tid, self.deadline, "a single step")? {
                WaitStatus::Stopped(_, Signal::SIGTRAP) => break,
                WaitStatus::Stopped(_, sig) => pending = Some(sig),
                WaitStatus::PtraceEvent(_, _, e)
                    if e == ptrace::Event::PTRACE_EVENT_CLONE as i32 =>
                {
                    if let Ok(new) = ptrace::getevent(tid) {
                        self.threads.insert(Pid::from_raw(new as i32));
                    }
                }
                ws if exit_status(ws).is_some() => {
                    self.threads.remove(&tid);
                    return Ok(None);
                }
                _ => {}
            }
            ptrace::step(tid, None).map_err(ptrace_err("PTRACE_SINGLESTEP", tid))?;
        }
        self.insert_breakpoint(tid, addr)?;
        Ok(pending)
    }
}
