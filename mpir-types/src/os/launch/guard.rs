//! The guardian: a small process forked at an `MPIR_DEBUG_SPAWNED` event that ends the job's
//! processes if the tool dies while it holds them.
//!
//! If the tool dies (`SIGKILL`) while it traces the starter, the kernel kills the starter
//! (`PTRACE_O_EXITKILL`), but not the MPI processes it has spawned. Open MPI 4.1's ranks
//! usually notice that their launcher is gone and exit within half a second; a rank still in
//! `PMIx_Init`'s handshake does not: it waits in `ext3x_client_init` for a server that is gone,
//! forever (measured: 1 run in about 25 under load, with the tool killed while it held the
//! starter at the spawned event). The guardian makes that impossible: it holds a pidfd of
//! every descendant of the starter at the event and waits on a pipe from the tool; the tool
//! writes a byte when it lets the job go (detaches, or the starter ended), and the guardian
//! exits; if the pipe reaches its end without that byte (the tool died, or gave the job up),
//! the guardian sends `SIGKILL` to every process it holds, then exits.
//!
//! Pidfds name processes, not numbers: a process that ended meanwhile cannot be confused with
//! a new one that got its pid. Only descendants of the starter are held (found in `/proc`),
//! never pids read from the starter's table, which a hostile starter could fill with anyone's.
//! The guardian ignores the terminal's signals (`SIGINT`, `SIGQUIT`, `SIGHUP`, `SIGTSTP`) and
//! `SIGTERM`, which the tool handles; it is named `mpir-guardian` in `ps`.

use super::*;

/// The most processes one guardian holds (the pidfds are in an array prepared before the fork).
const MAX_HELD: usize = 4096;

/// The guardian process, armed until [`Guardian::disarm`]; dropping it armed makes it end the
/// processes it holds.
#[derive(Debug)]
pub(super) struct Guardian {
    pid: Pid,
    /// The tool's end of the pipe; closing it without the disarm byte fires the guardian.
    pipe: Option<OwnedFd>,
}

/// Every descendant of process `pid` now (its children, theirs, ...), from `/proc`.
fn descendants(pid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(i32, i32)> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|p| Some((p, crate::os::parent_pid(p).ok()?)))
        .collect();
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for &(child, parent) in &parents {
            if parent == p && !out.contains(&child) {
                out.push(child);
                todo.push(child);
            }
        }
    }
    out
}

/// A pidfd of process `pid` (`pidfd_open`, close-on-exec), if it still exists.
fn pidfd(pid: i32) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: `pidfd_open(pid, 0)` takes no pointer; a non-negative result is a new file
    // descriptor that nothing else owns.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// The guardian's side of the fork: wait on `pipe`; on the disarm byte exit, at the pipe's end
/// `SIGKILL` every process of `held`, then exit.
///
/// # Safety
///
/// Must be called only in the child of `fork`, with `held` and the descriptors prepared by the
/// parent before the fork. It makes only async-signal-safe calls (and raw system calls) on
/// integers and stack buffers, and never returns.
unsafe fn guard(pipe: RawFd, tool_end: RawFd, held: &[RawFd]) -> ! {
    // SAFETY: (for every call below) async-signal-safe libc calls and raw system calls on file
    // descriptors inherited from the parent, integers, and stack buffers; the name is a
    // NUL-terminated static string.
    unsafe {
        libc::close(tool_end);
        for sig in [
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGHUP,
            libc::SIGTSTP,
            libc::SIGTERM,
            libc::SIGPIPE,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
        libc::prctl(libc::PR_SET_NAME, c"mpir-guardian".as_ptr(), 0, 0, 0);
        let mut byte = 0u8;
        loop {
            let n = libc::read(pipe, (&raw mut byte).cast(), 1);
            if n == 1 {
                // Disarmed: the tool let the job go.
                libc::_exit(0);
            }
            if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            break;
        }
        for &fd in held {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd,
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
        libc::_exit(0)
    }
}

impl Guardian {
    /// Forks a guardian holding every descendant of `starter` now; `None` if there is none, or
    /// the guardian cannot be started (the job is then as unguarded as without it).
    pub(super) fn start(starter: Pid) -> Option<Guardian> {
        let fds: Vec<OwnedFd> = descendants(starter.as_raw())
            .into_iter()
            .filter_map(pidfd)
            .take(MAX_HELD)
            .collect();
        if fds.is_empty() {
            return None;
        }
        let held: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
        let (read, write) = pipe2(OFlag::O_CLOEXEC).ok()?;
        // SAFETY: the child runs only `guard`, which makes async-signal-safe calls on data
        // prepared before the fork, then exits.
        let fork = unsafe { libc::fork() };
        if fork < 0 {
            return None;
        }
        if fork == 0 {
            // SAFETY: this is the child of the fork above; the descriptors and `held` were
            // prepared before it.
            unsafe { guard(read.as_raw_fd(), write.as_raw_fd(), &held) }
        }
        // The child has its copies.
        drop(read);
        drop(fds);
        Some(Guardian {
            pid: Pid::from_raw(fork),
            pipe: Some(write),
        })
    }

    /// The tool lets the job go: the guardian exits without touching it, and is reaped.
    pub(super) fn disarm(mut self) {
        if let Some(pipe) = self.pipe.take() {
            let _ = nix::unistd::write(&pipe, &[1]);
        }
        self.reap();
    }

    /// Reaps the guardian (it exits at once, disarmed or fired); `SIGKILL` if it has not
    /// within 5 s.
    fn reap(&mut self) {
        let deadline = Instant::now() + TERM_GRACE;
        // (Any other error: someone else reaped it.)
        if let Err(ToolError::Timeout { .. }) = wait_one(self.pid, deadline, "the guardian") {
            let _ = kill(self.pid, Signal::SIGKILL);
            let _ = waitpid(self.pid, None);
        }
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        if let Some(pipe) = self.pipe.take() {
            // Armed: the job is given up; the guardian ends what it holds.
            drop(pipe);
            self.reap();
        }
    }
}
