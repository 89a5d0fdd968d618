//! The crate's error type.

use std::ffi::c_int;
use std::path::PathBuf;

use thiserror::Error;

use crate::types::OpClass;

/// Why loading the DLL or querying it failed. Every variant that comes from a DLL call keeps
/// the call's code and the DLL's own text for it (`mqs_dll_error_string`).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MqdError {
    /// The shared object could not be loaded (not found, wrong architecture or bitness).
    #[error("cannot load {path}: {reason}")]
    Load {
        /// The file.
        path: PathBuf,
        /// The loader's message.
        reason: String,
    },
    /// The shared object lacks an entry point of the interface: it is no message queue DLL.
    #[error("{path} is no message queue DLL: it lacks {symbol}")]
    MissingEntryPoint {
        /// The file.
        path: PathBuf,
        /// The missing function.
        symbol: &'static str,
    },
    /// `mqs_version_compatibility` differs from this crate's
    /// [`INTERFACE_COMPATIBILITY`](crate::INTERFACE_COMPATIBILITY).
    #[error("{path} implements interface version {found}, this debugger {expected} ({version})")]
    Incompatible {
        /// The file.
        path: PathBuf,
        /// The DLL's `mqs_version_compatibility`.
        found: c_int,
        /// Ours.
        expected: c_int,
        /// The DLL's `mqs_version_string`.
        version: String,
    },
    /// `mqs_dll_taddr_width` differs from the size of this host's
    /// [`TAddr`](crate::TAddr).
    #[error("{path} holds target addresses in {found} bytes, this debugger in {expected}")]
    AddressWidth {
        /// The file.
        path: PathBuf,
        /// The DLL's width.
        found: c_int,
        /// Ours.
        expected: usize,
    },
    /// No DLL was found where the processes point (section 5's search).
    #[error("no usable message queue DLL: {}", .tried.join("; "))]
    NoDll {
        /// Each candidate with why it was not used.
        tried: Vec<String>,
    },
    /// The image lacks a type the DLL needs (a stripped library without a type donor).
    #[error("the image has no type {name:?} ({dll_text})")]
    MissingType {
        /// The type the DLL named.
        name: String,
        /// The DLL's text for the code.
        dll_text: String,
    },
    /// A DLL call failed.
    #[error("{call} failed with code {code}: {dll_text}{}", .message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default())]
    Dll {
        /// The entry point.
        call: &'static str,
        /// Its result code.
        code: c_int,
        /// `mqs_dll_error_string(code)`.
        dll_text: String,
        /// The message the call returned through its `char **`, if any.
        message: Option<String>,
    },
    /// An operation iteration did not end within the limit (a garbage or changing queue).
    #[error("the {class} of communicator {comm} did not end after {limit} entries")]
    Runaway {
        /// The queue.
        class: OpClass,
        /// The communicator's unique id.
        comm: u64,
        /// The limit.
        limit: usize,
    },
    /// Type information could not be read (DWARF, object file).
    #[error("type information: {0}")]
    TypeInfo(String),
    /// The tool side could not inspect the process.
    #[error("{0}")]
    Target(String),
    /// mqd-types could not read ob1's unexpected messages itself.
    #[error("reading ob1's unexpected fragments: {0}")]
    Ob1(#[from] crate::ob1::Ob1Error),
}
