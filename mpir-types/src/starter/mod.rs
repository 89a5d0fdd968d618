//! The starter side (feature `starter`, Unix): a Rust launcher that is an
//! MPIR starter process (§2.2.2.2) — it defines the §2.8 symbols with their
//! C names and C types ([`ffi`]), publishes the process descriptor table,
//! raises `MPIR_DEBUG_SPAWNED` and `MPIR_DEBUG_ABORTING` events through
//! [`MPIR_Breakpoint`](ffi::MPIR_Breakpoint), honours `MPIR_being_debugged`
//! and the tool daemon launch extension (§2.6.1).
//!
//! | item | spec | what it does |
//! |---|---|---|
//! | [`Starter::publish`] | §2.8.2, §2.8.4, §2.8.5 | builds the table in C layout (strings owned, shared across entries) and installs it |
//! | [`Starter::debug_event`] | §2.8.6, §2.8.9 | sets `MPIR_debug_state`, calls `MPIR_Breakpoint` |
//! | [`Starter::abort`] | §2.8.7 | sets `MPIR_debug_abort_string`, raises `MPIR_DEBUG_ABORTING` |
//! | [`Starter::being_debugged`] | §2.8.3 | reads `MPIR_being_debugged` (volatile) |
//! | [`Starter::tool_daemon_request`], [`Starter::launch_tool_daemons`] | §2.6.1, §2.8.16, §2.8.17 | the daemon a tool asked for, decoded with the crate's codecs; launching it |
//! | [`ffi`] | §2.8 | the symbols themselves; the feature's only `unsafe` code |
//!
//! The symbols are process-global, so [`Starter`] is a namespace of
//! associated functions that serialise every access through one lock: a
//! table cannot change while an event is being raised (the lock is held
//! while the tool has the starter stopped in `MPIR_Breakpoint`).
//!
//! Defined: `MPIR_proctable`, `MPIR_proctable_size`, `MPIR_debug_state`,
//! `MPIR_being_debugged`, `MPIR_debug_abort_string`, `MPIR_i_am_starter` (the
//! starter is no MPI process), `MPIR_partial_attach_ok` (no
//! `MPIR_debug_gate` to open: a tool need not attach to every process),
//! `MPIR_executable_path[256]`, `MPIR_server_arguments[1024]` and
//! `MPIR_Breakpoint`. Not defined: `MPIR_acquired_pre_main` and
//! `MPIR_force_to_main` (the processes are not held before `main`), and the
//! MPI process symbols `MPIR_debug_gate` and `MPIR_dll_name`.
//!
//! # Linking
//!
//! The symbols live in this crate; every function of [`Starter`] references
//! all of them, so a program that calls any keeps them through the linker's
//! garbage collection. An executable has them in its static symbol table
//! (`.symtab`), where a tool finds them (§2.3.1: the binary must not be
//! stripped). To have them in the dynamic symbol table (`.dynsym`) too, which
//! survives `strip`, link the executable with
//! `-Wl,--export-dynamic-symbol=MPIR_*` (or `-rdynamic`), e.g. from its
//! build script: `cargo::rustc-link-arg-bins=-Wl,--export-dynamic-symbol=MPIR_*`.
//! One program can contain only one starter (the names are global).
//!
//! # Example
//!
//! ```
//! use mpir_types::DebugState;
//! use mpir_types::starter::{ProcEntry, Starter};
//!
//! // Processes spawned by the launcher (here: this process, as an example).
//! let exe = std::env::current_exe()?;
//! let pid = std::process::id();
//! Starter::publish(&[ProcEntry::new("node0", &exe, pid)])?;
//! // A tool stopped at MPIR_Breakpoint now reads the table.
//! Starter::debug_event(DebugState::Spawned);
//! if let Some(mut daemon) = Starter::launch_tool_daemons()? {
//!     daemon.wait()?; // a tool asked for its daemon (MPIR_executable_path)
//! }
//! # assert_eq!(Starter::debug_state(), DebugState::Spawned);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::ffi::{CString, OsStr, c_int};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard, PoisonError};

use thiserror::Error;

use crate::codec::{CodecError, decode_executable_path, decode_server_arguments};
use crate::layout::Field;
use crate::state::DebugState;
use crate::string::TargetString;

#[allow(unsafe_code)]
pub mod ffi;

/// One process of the job as the starter publishes it (§2.8.2); its rank is
/// its index in the slice given to [`Starter::publish`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcEntry<'a> {
    /// Host name or IP address the process runs on.
    pub host: &'a OsStr,
    /// The executable the process runs, preferably its full path.
    pub executable: &'a Path,
    /// Its process identifier.
    pub pid: u32,
}

impl<'a> ProcEntry<'a> {
    /// An entry from anything that borrows as a host name and a path.
    pub fn new<H, E>(host: &'a H, executable: &'a E, pid: u32) -> Self
    where
        H: AsRef<OsStr> + ?Sized,
        E: AsRef<Path> + ?Sized,
    {
        ProcEntry {
            host: host.as_ref(),
            executable: executable.as_ref(),
            pid,
        }
    }
}

/// Why the starter could not do what it was asked.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StarterError {
    /// A host or executable name containing a NUL byte (it cannot be a C
    /// string).
    #[error("rank {rank}: {} contains a NUL byte", .field.name())]
    ContainsNul {
        /// The entry.
        rank: usize,
        /// `host_name` or `executable_name`.
        field: Field,
    },
    /// A pid that does not fit the descriptor's C `int`.
    #[error("rank {rank}: pid {pid} does not fit MPIR_PROCDESC's int")]
    PidOutOfRange {
        /// The entry.
        rank: usize,
        /// The pid.
        pid: u32,
    },
    /// More entries than `MPIR_proctable_size` (a C `int`) can count.
    #[error("{len} entries do not fit MPIR_proctable_size")]
    TooManyEntries {
        /// The number of entries.
        len: usize,
    },
    /// An abort message containing a NUL byte.
    #[error("the abort message contains a NUL byte at position {position}")]
    AbortMessageContainsNul {
        /// Position of the NUL.
        position: usize,
    },
    /// `MPIR_executable_path` or `MPIR_server_arguments` as the tool wrote
    /// them cannot be decoded (no terminator).
    #[error("the tool daemon request: {0}")]
    ToolDaemon(#[from] CodecError),
    /// The tool daemon could not be started.
    #[error("cannot launch the tool daemon {path}: {source}")]
    Spawn {
        /// Its executable.
        path: TargetString,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// A tool daemon a tool asked the starter to launch (§2.6.1): the executable
/// named by `MPIR_executable_path` and the arguments decoded from
/// `MPIR_server_arguments`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolDaemon {
    /// The daemon's executable (`MPIR_executable_path`).
    pub path: TargetString,
    /// Its arguments (`MPIR_server_arguments`), without `argv[0]`.
    pub args: Vec<TargetString>,
}

impl ToolDaemon {
    /// A command running the daemon: `path` with `args`, inheriting the
    /// starter's environment and standard streams.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(self.path.as_os_str());
        cmd.args(self.args.iter().map(TargetString::as_os_str));
        cmd
    }
}

/// What the lock guards besides the symbols themselves.
struct State {
    /// The installed table and its strings (kept alive while installed).
    table: Option<ffi::CTable>,
    /// The installed `MPIR_debug_abort_string`.
    abort: Option<CString>,
    /// Whether the daemon of the current tool session was launched (or its
    /// request failed): reset when `MPIR_being_debugged` is seen 0.
    daemon_handled: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    table: None,
    abort: None,
    daemon_handled: false,
});

fn lock() -> MutexGuard<'static, State> {
    // Every update leaves the symbols consistent before anything can panic,
    // so a poisoned lock is still good.
    let guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    ffi::anchor();
    guard
}

/// The starter side of MPIR: associated functions over the process's MPIR
/// symbols (see the [module documentation](self)).
#[derive(Debug)]
#[non_exhaustive]
pub struct Starter;

impl Starter {
    /// Publishes the process descriptor table: `entries[i]` is rank `i`
    /// (§2.8.4). The C table and its strings are built first (equal host and
    /// executable names share one string, §2.8.2), then installed
    /// (`MPIR_proctable_size` is 0 while `MPIR_proctable` changes), then the
    /// previous table is freed. Publish before raising
    /// [`DebugState::Spawned`].
    pub fn publish(entries: &[ProcEntry<'_>]) -> Result<(), StarterError> {
        let size = c_int::try_from(entries.len())
            .map_err(|_| StarterError::TooManyEntries { len: entries.len() })?;
        let mut strings: Vec<CString> = Vec::new();
        let mut index: HashMap<&[u8], usize> = HashMap::new();
        let mut rows = Vec::with_capacity(entries.len());
        for (rank, e) in entries.iter().enumerate() {
            let mut intern = |bytes, field| intern(bytes, &mut strings, &mut index, rank, field);
            let host = intern(e.host.as_bytes(), Field::HostName)?;
            let exe = intern(e.executable.as_os_str().as_bytes(), Field::ExecutableName)?;
            let pid = c_int::try_from(e.pid)
                .map_err(|_| StarterError::PidOutOfRange { rank, pid: e.pid })?;
            rows.push((host, exe, pid));
        }
        let table = ffi::CTable::new(strings, &rows);
        let mut state = lock();
        ffi::install_table(&table, size);
        // The old table is no longer pointed to: free it.
        state.table = Some(table);
        Ok(())
    }

    /// The number of entries and of distinct strings of the published table.
    pub fn published() -> (usize, usize) {
        let state = lock();
        state
            .table
            .as_ref()
            .map_or((0, 0), |t| (t.len(), t.strings()))
    }

    /// Raises an MPIR event (§2.8.6): sets `MPIR_debug_state` to `state` and
    /// calls `MPIR_Breakpoint`, where a tool that planted a breakpoint stops
    /// the starter and reads the state (and, for
    /// [`DebugState::Spawned`], the table). Returns when the tool continues
    /// the starter (at once without a tool). `MPIR_debug_state` keeps the
    /// value, so a tool attaching later reads it too.
    pub fn debug_event(state: DebugState) {
        let _state = lock();
        ffi::raise(state.to_raw());
    }

    /// The job aborted (§2.8.7): sets `MPIR_debug_abort_string` to `message`
    /// (a human readable reason, kept alive by the starter) and raises
    /// [`DebugState::Aborting`].
    pub fn abort(message: impl Into<Vec<u8>>) -> Result<(), StarterError> {
        let message = CString::new(message).map_err(|e| StarterError::AbortMessageContainsNul {
            position: e.nul_position(),
        })?;
        let mut state = lock();
        ffi::set_abort_string(Some(&message));
        // The previous string is no longer pointed to: free it.
        state.abort = Some(message);
        ffi::raise(DebugState::Aborting.to_raw());
        Ok(())
    }

    /// The current `MPIR_debug_state`.
    pub fn debug_state() -> DebugState {
        let _state = lock();
        DebugState::from_raw(ffi::debug_state())
    }

    /// Whether a tool has set `MPIR_being_debugged` (§2.8.3), read anew at
    /// each call (the tool may change it at any time).
    pub fn being_debugged() -> bool {
        ffi::anchor();
        ffi::being_debugged() != 0
    }

    /// The tool daemon a tool asks for (§2.6.1): `Some` when
    /// `MPIR_being_debugged` is non-zero and `MPIR_executable_path` is not
    /// empty, with the arguments decoded from `MPIR_server_arguments`. Reads
    /// the variables anew at each call and launches nothing.
    pub fn tool_daemon_request() -> Result<Option<ToolDaemon>, StarterError> {
        ffi::anchor();
        if ffi::being_debugged() == 0 {
            return Ok(None);
        }
        let path = decode_executable_path(&ffi::executable_path())?;
        if path.is_empty() {
            return Ok(None);
        }
        let args = decode_server_arguments(&ffi::server_arguments())?;
        Ok(Some(ToolDaemon { path, args }))
    }

    /// The tool daemon launch extension (§2.6.1 step 3): when a tool has
    /// written `MPIR_executable_path` (and `MPIR_server_arguments`) and set
    /// `MPIR_being_debugged`, launches that daemon with the decoded arguments
    /// and returns it; the caller reaps it.
    ///
    /// Launches once per tool session: later calls return `Ok(None)` until
    /// `MPIR_being_debugged` has been seen 0 (the tool detached) and set
    /// again. A starter calls this after each event and while it waits for
    /// its processes (the tool may attach at any time). An undecodable
    /// request or a failed launch is reported once, as an error.
    pub fn launch_tool_daemons() -> Result<Option<Child>, StarterError> {
        let mut state = lock();
        if ffi::being_debugged() == 0 {
            state.daemon_handled = false;
            return Ok(None);
        }
        if state.daemon_handled {
            return Ok(None);
        }
        let Some(daemon) = Self::tool_daemon_request().inspect_err(|_| {
            state.daemon_handled = true;
        })?
        else {
            return Ok(None);
        };
        state.daemon_handled = true;
        daemon
            .command()
            .spawn()
            .map(Some)
            .map_err(|source| StarterError::Spawn {
                path: daemon.path.clone(),
                source,
            })
    }

    /// How often `MPIR_Breakpoint` has been called in this process (once per
    /// [`debug_event`](Self::debug_event) and [`abort`](Self::abort)).
    pub fn breakpoint_calls() -> u64 {
        ffi::anchor();
        ffi::breakpoint_calls()
    }

    /// The run-time address of each MPIR definition of this process, by C
    /// name: what a tool's symbol lookup must find.
    pub fn symbol_addresses() -> [(&'static str, usize); 10] {
        ffi::addresses()
    }
}

/// The index of `bytes` in `strings`, added if it is not there yet: one C
/// string per distinct name (§2.8.2).
fn intern<'b>(
    bytes: &'b [u8],
    strings: &mut Vec<CString>,
    index: &mut HashMap<&'b [u8], usize>,
    rank: usize,
    field: Field,
) -> Result<usize, StarterError> {
    if let Some(&i) = index.get(bytes) {
        return Ok(i);
    }
    let s = CString::new(bytes).map_err(|_| StarterError::ContainsNul { rank, field })?;
    strings.push(s);
    index.insert(bytes, strings.len() - 1);
    Ok(strings.len() - 1)
}

/// This host's name (`gethostname`), for [`ProcEntry::host`] of the
/// processes the starter runs locally.
#[cfg(target_os = "linux")]
pub fn host_name() -> io::Result<std::ffi::OsString> {
    nix::unistd::gethostname().map_err(io::Error::from)
}
