//! The tool side on Linux: find the MPIR symbols of a live process in every
//! object it has loaded, read and write its memory, and acquire an MPI job
//! by the attach model or the launch model (§2.5.1, §2.7).
//!
//! | item | what it does |
//! |---|---|
//! | [`Mapping`], [`read_maps`], [`parse_maps`] | `/proc/PID/maps` |
//! | [`SymbolTable`], [`Sym`] | the dynamic and static ELF symbol tables of every mapped object, relocated by its load bias |
//! | [`ProcessMemory`] | [`MemoryReader`](crate::MemoryReader) over `process_vm_readv`, falling back to `/proc/PID/mem`; writes |
//! | [`target_layout`], [`layout_from_elf_ident`] | the target's [`TargetLayout`](crate::TargetLayout) from its executable's ELF header |
//! | [`attach()`] | the attach model: read the table of a running starter without stopping it |
//! | [`known_launcher`], [`KnownLauncher`], [`find_starter_of`], [`process_state`], [`parent_pid`], [`check_alive`], [`ended`] | why a process cannot be acquired: launchers known not to implement MPIR (MPICH's Hydra, PRRTE; refused at once in both models), zombies, processes that ended while they were read, the starter an MPI process belongs to |
//! | [`launch()`], [`launch_with`], [`trace_to_exit`] | the launch model under `ptrace` (x86-64): start the starter, set `MPIR_being_debugged`, break at `MPIR_Breakpoint`, read each event, release and detach |
//! | [`Interrupts`], [`Interrupt`] | `SIGINT` and `SIGTERM` caught by a tool, forwarded to the job it launched ([`LaunchOptions::interrupts`]) |
//!
//! This is the one module of the crate that uses `unsafe`: `fork`/`execve`
//! in the launch model, `PTRACE_LISTEN`, which `nix` does not wrap, and the
//! signal handler of [`Interrupts`].
//!
//! Where the symbols are (Debian Open MPI 4.1.4): the starter's in
//! `libopen-rte.so.40` (mapped by `mpiexec.openmpi`, i.e. `orterun`), the MPI
//! processes' `MPIR_debug_gate` and `MPIR_dll_name` in `libmpi.so.40`; no
//! MPIR symbol is in either executable, so every lookup searches all mapped
//! objects.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use crate::catalog::Symbol;
use crate::layout::LayoutError;
use crate::proctable::DecodeError;

mod acquire;
mod diagnose;
#[cfg(target_arch = "x86_64")]
mod launch;
mod maps;
mod mem;
mod signals;
mod symbols;

pub use acquire::{AcquiredSymbol, Acquisition, AttachOptions, attach, attach_with};
pub use diagnose::{
    KnownLauncher, check_alive, ended, find_starter_of, known_launcher, parent_pid, process_state,
};
#[cfg(target_arch = "x86_64")]
pub use launch::{
    ArmPoint, GateOutcome, GatePolicy, GateRelease, LaunchOptions, LaunchTimings, Launched,
    MpirEvent, TracedRun, launch, launch_with, trace_to_exit,
};
pub use maps::{Mapping, parse_maps, read_maps};
pub use mem::{ProcessMemory, WriteError};
pub use signals::{Interrupt, Interrupts};
pub use symbols::{LoadedObject, Sym, SymKind, SymbolTable, layout_from_elf_ident, target_layout};

/// Why a tool-side operation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ToolError {
    /// A file of `/proc` or an object file could not be read.
    #[error("{what}: {source}")]
    Io {
        /// What was being read (`"/proc/42/maps"`).
        what: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The process does not exist (any more).
    #[error("process {pid} does not exist")]
    NoSuchProcess {
        /// The pid.
        pid: i32,
    },
    /// The executable's ELF header is not one this crate can read.
    #[error("{path}: {reason}")]
    BadElf {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The process lacks a symbol the operation needs: it is no MPIR
    /// starter (no `MPIR_Breakpoint`, §2.7 step 3) or an incomplete one.
    #[error("process {pid} is no MPIR starter: no loaded object defines {}", names(.missing))]
    NotAStarter {
        /// The process.
        pid: i32,
        /// The required definitions not found in any loaded object.
        missing: Vec<Symbol>,
    },
    /// The process is a launcher known not to implement MPIR: it defines
    /// no MPIR symbol (MPICH's Hydra, PRRTE's `prterun`).
    #[error(
        "process {pid} is {}, which does not implement MPIR (it defines no MPIR symbol): {}",
        .launcher.name(),
        .launcher.advice()
    )]
    NoMpir {
        /// The process.
        pid: i32,
        /// The launcher.
        launcher: KnownLauncher,
    },
    /// The process is an MPI process (it defines `MPIR_debug_gate`) with an
    /// empty table, not its job's starter (Open MPI's MPI processes load the
    /// starter's symbols too).
    #[error("process {pid} is an MPI process, not its job's starter: {}", match .starter {
        Some(s) => format!("its starter is process {s}"),
        None => "no ancestor of it is an MPIR starter listing it".to_owned(),
    })]
    NotTheStarter {
        /// The process.
        pid: i32,
        /// The ancestor that is its starter, if one is.
        starter: Option<i32>,
    },
    /// The process is a zombie: it has exited and its parent has not
    /// reaped it; its memory and its job are gone.
    #[error("process {pid} is a zombie (it has exited; its parent has not reaped it)")]
    Zombie {
        /// The process.
        pid: i32,
    },
    /// The process ended (it no longer exists, or it is a zombie) while the tool read it: what
    /// was read is not returned, whether the read failed or not.
    #[error("process {pid} ended while {during} ({})", if *.zombie {
        "it is a zombie now"
    } else {
        "it no longer exists"
    })]
    Ended {
        /// The process.
        pid: i32,
        /// What the tool was doing (`"its MPIR data was read"`).
        during: &'static str,
        /// It is a zombie (it has exited; its parent has not reaped it), rather than gone.
        zombie: bool,
    },
    /// Decoding the starter's memory failed (garbage, a wild pointer, a
    /// huge size, the process went away).
    #[error("decoding the MPIR data of process {pid}: {source}")]
    Decode {
        /// The process.
        pid: i32,
        /// The decoder's error.
        #[source]
        source: DecodeError,
    },
    /// The table kept changing while it was read.
    #[error("the process table of process {pid} changed during {attempts} consecutive reads")]
    Unstable {
        /// The process.
        pid: i32,
        /// Reads tried.
        attempts: u32,
    },
    /// Writing the target's memory failed.
    #[error("writing {symbol} in process {pid}: {source}")]
    Write {
        /// The process.
        pid: i32,
        /// The variable.
        symbol: &'static str,
        /// The error.
        #[source]
        source: WriteError,
    },
    /// A value does not fit the target's layout.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A `ptrace` request (or `waitpid`) failed.
    #[error("{op} on {pid}: {source}")]
    Ptrace {
        /// The request.
        op: &'static str,
        /// The thread.
        pid: i32,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The starter could not be started.
    #[error("cannot execute {program}: {source}")]
    Exec {
        /// The program.
        program: String,
        /// The error of `execve` (or of the `PATH` search).
        #[source]
        source: io::Error,
    },
    /// The starter ended before the event the tool waited for.
    #[error("the starter (pid {pid}) ended ({status}) before {waiting_for}")]
    StarterEnded {
        /// The starter's pid.
        pid: i32,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// What the tool was waiting for.
        waiting_for: &'static str,
    },
    /// A deadline passed.
    #[error("timed out after {after:?} waiting for {waiting_for}")]
    Timeout {
        /// What the tool was waiting for.
        waiting_for: &'static str,
        /// The time limit.
        after: Duration,
    },
    /// An empty command line, or another argument error.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Not supported on this target.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

fn names(symbols: &[Symbol]) -> String {
    symbols
        .iter()
        .map(|s| s.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl ToolError {
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        ToolError::Io {
            what: what.into(),
            source,
        }
    }
}
