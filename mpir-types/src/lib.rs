//! The MPIR Process Acquisition Interface (J. DelSignore, "The MPIR Interfaces", MPI Forum
//! tools working group, 2010), typed: how a tool finds the processes of an MPI job through
//! symbols of the starter process.
//!
//! MPIR is "not an application programming interface (API). It is a
//! rendezvous protocol" (§2.1): the starter (`mpiexec`, or MPI rank 0)
//! defines variables and a breakpoint function; the tool reads and writes
//! them in the starter's memory. This crate models every definition of
//! §2.8 and decodes what the tool reads, in pure safe Rust; the Linux
//! `os` module (with `starter::ffi` the only one with `unsafe`; the only
//! one with operating system access) is the tool side on a live job: symbols
//! of every loaded object, process memory, the attach model and, on x86-64,
//! the launch model under `ptrace`. The `starter` feature adds the other
//! side: a Rust launcher that is an MPIR starter. Section numbers in the
//! documentation (and "the spec") refer to that document.
//!
//! | module | spec | contents |
//! |---|---|---|
//! | [`mod@catalog`] | §2.8, §2.7, §2.5–§2.6 | [`Symbol`], [`SymbolInfo`], [`catalog()`], [`SymbolSet`], [`Capabilities`] |
//! | [`state`] | §2.8.3, §2.8.6, §2.8.8 | [`DebugState`], `MPIR_NULL`, `MPIR_DEBUG_SPAWNED`, `MPIR_DEBUG_ABORTING`, the values the tool writes |
//! | [`layout`] | §2.8.2, §2.7 step 11 | [`TargetLayout`], [`ProcDescLayout`] (size and offsets computed by the C rules, or from debug info), [`RawProcDesc`] |
//! | [`memory`] | §2.3.2 | [`MemoryReader`], [`ReadError`], [`MemoryImage`] |
//! | [`proctable`] | §2.8.2, §2.8.4–§2.8.7 | [`decode_proctable`], [`read_proctable`], [`ProcDesc`], [`Limits`], [`DecodeError`], scalar and string readers |
//! | [`codec`] | §2.6.1, §2.8.14, §2.8.16, §2.8.17 | server-arguments and executable-path codecs, [`CodecError`] |
//! | [`string`] | §2.8.2 | [`TargetString`]: lossless, shared bytes |
//! | `os` (Linux) | §2.5, §2.7 | `SymbolTable`, `ProcessMemory`, `attach`, `launch`, `trace_to_exit` |
//! | `starter` (feature `starter`, Unix) | §2.2.2, §2.6.1, §2.8 | the starter side: the MPIR symbols defined with their C names and types, `Starter` (publish the table, raise events, abort, tool daemons) |
//! | `pmix` (feature `pmix`) | PMIx Standard v4.2 | the PMIx ABI a tool needs (`pmix::abi`, checked against `pmix.h`), and bounded decoders of the proc table and namespace queries' answers into [`ProcDesc`] |
//!
//! Everything but the `os`, `starter` and `pmix` modules is re-exported at
//! the crate root.
//!
//! # Example
//!
//! A starter's memory (here a [`MemoryImage`]; a live tool implements
//! [`MemoryReader`] over `process_vm_readv`) holding a two-rank table whose
//! entries share one host name and one executable name, decoded after an
//! `MPIR_DEBUG_SPAWNED` event:
//!
//! ```
//! use mpir_types::*;
//!
//! let target = TargetLayout::LP64_LE;
//! let desc = target.procdesc(); // sizeof(MPIR_PROCDESC) = 24 on LP64
//! assert_eq!((desc.size(), desc.pid_offset()), (24, 16));
//!
//! // The starter's data: strings, the table, and the MPIR variables.
//! let (host, exe, table) = (0x1000, 0x1100, 0x2000);
//! let (proctable, proctable_size, debug_state) = (0x3000, 0x3008, 0x300c);
//! let mut mem = MemoryImage::new();
//! mem.map(host, b"node0\0".to_vec())?;
//! mem.map(exe, b"/home/me/a.out\0".to_vec())?;
//! let mut entries = Vec::new();
//! for pid in [4242, 4243] {
//!     let raw = RawProcDesc { host_name: host, executable_name: exe, pid };
//!     entries.extend(desc.encode_entry(&raw)?);
//! }
//! mem.map(table, entries)?;
//! let mut vars = target.encode_pointer(table)?; // MPIR_proctable
//! vars.extend(target.encode_int(2)?); // MPIR_proctable_size
//! vars.extend(target.encode_int(i64::from(MPIR_DEBUG_SPAWNED))?); // MPIR_debug_state
//! mem.map(proctable, vars)?;
//!
//! // What the symbols say the tool can do.
//! let caps = Capabilities::from_names([
//!     "MPIR_Breakpoint", "MPIR_proctable", "MPIR_proctable_size",
//!     "MPIR_debug_state", "MPIR_i_am_starter", "MPIR_partial_attach_ok",
//! ]);
//! assert!(caps.can_acquire && caps.separate_starter && !caps.must_attach_all);
//!
//! // The tool stopped at MPIR_Breakpoint: read the event, then the table.
//! assert_eq!(read_debug_state(&mem, &target, debug_state)?, DebugState::Spawned);
//! let procs = read_proctable(&mem, &desc, proctable, proctable_size, &Limits::default())?;
//! assert_eq!(procs.len(), 2);
//! assert_eq!(procs[1].host_name, "node0");
//! assert_eq!(procs[1].executable_name.to_string(), "/home/me/a.out");
//! assert_eq!(procs[1].pid, 4243);
//! // Shared strings were read once and are shared in the result.
//! assert!(procs[0].host_name.shares_storage_with(&procs[1].host_name));
//!
//! // Garbage is a typed error, not an allocation.
//! let err = decode_proctable(&mem, &desc, table, i64::from(i32::MAX), &Limits::default());
//! assert!(matches!(err, Err(DecodeError::TooManyEntries { .. })));
//!
//! // Tool daemon launch (§2.6.1): what the tool writes into the starter.
//! let args = encode_server_arguments(["--callback", "10.0.0.10"], SPEC_SERVER_ARGUMENTS_SIZE)?;
//! assert_eq!(args, b"--callback\x0010.0.0.10\0\0");
//! assert_eq!(decode_server_arguments(&args)?, ["--callback", "10.0.0.10"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]

pub mod catalog;
pub mod codec;
pub mod layout;
pub mod memory;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub mod os;
#[cfg(feature = "pmix")]
pub mod pmix;
pub mod proctable;
#[cfg(all(feature = "starter", unix))]
pub mod starter;
pub mod state;
pub mod string;

pub use catalog::{
    Capabilities, Holder, Party, Requirement, Symbol, SymbolInfo, SymbolKind, SymbolSet, catalog,
};
pub use codec::{
    CodecError, OPEN_MPI_EXECUTABLE_PATH_SIZE, OPEN_MPI_SERVER_ARGUMENTS_SIZE,
    SPEC_EXECUTABLE_PATH_SIZE, SPEC_SERVER_ARGUMENTS_SIZE, decode_executable_path,
    decode_fixed_string, decode_server_arguments, encode_executable_path, encode_server_arguments,
};
pub use layout::{
    Endianness, Field, LayoutError, MAX_PROCDESC_SIZE, ProcDescLayout, RawProcDesc, TargetLayout,
};
pub use memory::{MapError, MemoryImage, MemoryReader, ReadError};
pub use proctable::{
    DecodeError, Limits, Location, ProcDesc, decode_proctable, read_abort_string, read_c_string,
    read_debug_state, read_int, read_pointer, read_proctable,
};
pub use state::{
    BEING_DEBUGGED, DEBUG_GATE_OPEN, DebugState, MPIR_DEBUG_ABORTING, MPIR_DEBUG_SPAWNED,
    MPIR_NULL, NOT_BEING_DEBUGGED,
};
pub use string::TargetString;
