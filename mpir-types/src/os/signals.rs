//! `SIGINT` and `SIGTERM` caught for a tool that must end cleanly: a tool that holds a starter
//! under `ptrace` must not die between two `ptrace` requests, and one that waits for a job it
//! launched passes the signal on to it.
//!
//! [`Interrupts::catch`] installs one handler for both signals. The handler only stores the
//! signal in atomics (async-signal-safe); the tool reads them at each of its waits
//! ([`Interrupts::caught`], [`Interrupts::take_forward`]), and the launch model forwards them
//! to the starter itself when [`LaunchOptions::interrupts`](super::LaunchOptions) is set.
//!
//! Two rules make it safe to use from a terminal:
//!
//! - A signal the kernel sent (`si_code > 0`: the terminal's `^C` goes to the whole foreground
//!   process group) reached the starter too, which shares the tool's process group: it is
//!   recorded ([`Interrupt::from_terminal`]) but not forwarded. Open MPI 4.1's `mpiexec` takes a
//!   second `SIGINT` within 5 s as "forcibly terminate" and exits at once, leaving its ranks
//!   behind; forwarding a `^C` it already received would do that.
//! - The handler is installed with `SA_RESETHAND`: a second `SIGINT` (or `SIGTERM`) has the
//!   default action and ends the tool at once, whatever it was waiting for.

use std::sync::atomic::{AtomicI32, Ordering};

use nix::libc;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

use super::ToolError;

/// The first signal caught: its number, plus [`FROM_KERNEL`] if the kernel sent it; 0 if none.
static CAUGHT: AtomicI32 = AtomicI32::new(0);
/// A signal to forward (sent by a process), 0 if none.
static TO_FORWARD: AtomicI32 = AtomicI32::new(0);
/// The flag of [`CAUGHT`] for a signal the kernel sent.
const FROM_KERNEL: i32 = 0x1000;

/// The handler: atomic stores only.
extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let from_kernel = if info.is_null() {
        false
    } else {
        // SAFETY: with SA_SIGINFO the kernel passes a valid `siginfo_t` for the duration of the
        // handler; reading `si_code` is a plain load.
        unsafe { (*info).si_code > 0 }
    };
    let flag = if from_kernel { FROM_KERNEL } else { 0 };
    let _ = CAUGHT.compare_exchange(0, sig | flag, Ordering::SeqCst, Ordering::SeqCst);
    if !from_kernel {
        TO_FORWARD.store(sig, Ordering::SeqCst);
    }
}

/// A signal the tool caught.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupt {
    /// `SIGINT` or `SIGTERM`.
    pub signal: Signal,
    /// The kernel sent it (the terminal's `^C`, to the whole foreground process group), rather
    /// than a process (`kill`); such a signal is not forwarded.
    pub from_terminal: bool,
}

impl Interrupt {
    /// The exit status of a tool that ends because of it: 128 + the signal's number, as a shell
    /// reports a process the signal ended.
    pub fn exit_status(self) -> u8 {
        128u8.wrapping_add(self.signal as u8)
    }
}

/// Proof that the handler for `SIGINT` and `SIGTERM` is installed ([`Interrupts::catch`]).
#[derive(Clone, Copy, Debug)]
pub struct Interrupts {
    _installed: (),
}

impl Interrupts {
    /// The signals caught.
    pub const SIGNALS: [Signal; 2] = [Signal::SIGINT, Signal::SIGTERM];

    /// Installs the handler for [`Interrupts::SIGNALS`] (`SA_SIGINFO | SA_RESTART |
    /// SA_RESETHAND`: interrupted system calls restart, and a second signal has the default
    /// action). Process-wide; calling it again re-arms the handler.
    pub fn catch() -> Result<Interrupts, ToolError> {
        let action = SigAction::new(
            SigHandler::SigAction(on_signal),
            SaFlags::SA_SIGINFO | SaFlags::SA_RESTART | SaFlags::SA_RESETHAND,
            SigSet::empty(),
        );
        for sig in Self::SIGNALS {
            // SAFETY: the handler makes only atomic loads and stores (async-signal-safe) and
            // reads the `siginfo_t` the kernel passes.
            unsafe { sigaction(sig, &action) }
                .map_err(|e| ToolError::io(format!("installing a handler for {sig}"), e.into()))?;
        }
        Ok(Interrupts { _installed: () })
    }

    /// The first `SIGINT` or `SIGTERM` caught since [`Interrupts::catch`], if any.
    pub fn caught(&self) -> Option<Interrupt> {
        let v = CAUGHT.load(Ordering::SeqCst);
        let signal = Signal::try_from(v & !FROM_KERNEL).ok()?;
        Some(Interrupt {
            signal,
            from_terminal: v & FROM_KERNEL != 0,
        })
    }

    /// A caught signal that a process sent (not the terminal), to pass on to the job; each
    /// such signal is returned once.
    pub fn take_forward(&self) -> Option<Signal> {
        Signal::try_from(TO_FORWARD.swap(0, Ordering::SeqCst)).ok()
    }

    /// Sends the signal to forward, if there is one, to process `pid`; returns it.
    pub fn forward_to(&self, pid: i32) -> Option<Signal> {
        let sig = self.take_forward()?;
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
        Some(sig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_a_process_sends_is_caught_once_and_forwarded_once() {
        let interrupts = Interrupts::catch().unwrap();
        assert_eq!(interrupts.caught(), None);
        nix::sys::signal::raise(Signal::SIGTERM).unwrap();
        let caught = interrupts.caught().unwrap();
        assert_eq!(caught.signal, Signal::SIGTERM);
        assert!(!caught.from_terminal, "raise() is a process's signal");
        assert_eq!(caught.exit_status(), 143);
        assert_eq!(interrupts.take_forward(), Some(Signal::SIGTERM));
        assert_eq!(interrupts.take_forward(), None);
        // Re-armed (SA_RESETHAND reset it): a second signal is caught, not fatal, and the first
        // stays the one reported.
        let interrupts = Interrupts::catch().unwrap();
        nix::sys::signal::raise(Signal::SIGINT).unwrap();
        assert_eq!(interrupts.caught().unwrap().signal, Signal::SIGTERM);
        assert_eq!(interrupts.take_forward(), Some(Signal::SIGINT));
    }
}
