//! Return codes of the tool information interface (MPI-4.1 §16.3.10) and the
//! crate's own errors.
//!
//! Every MPI_T error class has a variant of [`Error`] that keeps the raw code
//! the implementation returned, because codes differ between implementations
//! and a report should show what the library really said. The mapping from a
//! raw code to a class is the job of `mpit-safe` (with the constants
//! `mpit-sys` reads from the installed `mpi.h`); this crate never sees an
//! implementation's numbering.

use crate::bind::Bind;
use crate::datatype::Datatype;
use crate::macros::c_enum;

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

c_enum! {
    /// The error classes of the MPI tool information interface
    /// (MPI-4.1 §16.3.10), without the raw code.
    ///
    /// ```
    /// use mpit_core::{Error, ErrorClass};
    ///
    /// let e = Error::from_class(ErrorClass::InvalidIndex, 62);
    /// assert_eq!(e.class(), Some(ErrorClass::InvalidIndex));
    /// assert_eq!(e.raw_code(), Some(62));
    /// assert_eq!(ErrorClass::InvalidIndex.c_name(), "MPI_T_ERR_INVALID_INDEX");
    /// ```
    pub enum ErrorClass ("MPI_T_ERR_", "MPI_T error class") {
        /// Out of memory.
        Memory = "MPI_T_ERR_MEMORY",
        /// Interface not initialized.
        NotInitialized = "MPI_T_ERR_NOT_INITIALIZED",
        /// Interface not in the state to be initialized.
        CannotInit = "MPI_T_ERR_CANNOT_INIT",
        /// The index is invalid or has been deleted.
        InvalidIndex = "MPI_T_ERR_INVALID_INDEX",
        /// The item index queried is out of range.
        InvalidItem = "MPI_T_ERR_INVALID_ITEM",
        /// The handle is invalid.
        InvalidHandle = "MPI_T_ERR_INVALID_HANDLE",
        /// No more handles available.
        OutOfHandles = "MPI_T_ERR_OUT_OF_HANDLES",
        /// No more sessions available.
        OutOfSessions = "MPI_T_ERR_OUT_OF_SESSIONS",
        /// Session argument is not a valid session.
        InvalidSession = "MPI_T_ERR_INVALID_SESSION",
        /// Variable cannot be set at this moment.
        CvarSetNotNow = "MPI_T_ERR_CVAR_SET_NOT_NOW",
        /// Variable cannot be set until end of execution.
        CvarSetNever = "MPI_T_ERR_CVAR_SET_NEVER",
        /// Variable cannot be started or stopped.
        PvarNoStartStop = "MPI_T_ERR_PVAR_NO_STARTSTOP",
        /// Variable cannot be written or reset.
        PvarNoWrite = "MPI_T_ERR_PVAR_NO_WRITE",
        /// Variable cannot be read and written atomically.
        PvarNoAtomic = "MPI_T_ERR_PVAR_NO_ATOMIC",
        /// Name does not match any variable, category or event type.
        InvalidName = "MPI_T_ERR_INVALID_NAME",
        /// Invalid use of the interface or bad parameter value(s).
        Invalid = "MPI_T_ERR_INVALID",
        /// Requested functionality not accessible at this time (e.g. from
        /// inside an event callback, MPI-4.1 §16.3.8.2).
        NotAccessible = "MPI_T_ERR_NOT_ACCESSIBLE",
        /// Requested functionality not supported.
        NotSupported = "MPI_T_ERR_NOT_SUPPORTED",
    }
}

impl ErrorClass {
    /// The description of the class, in the standard's words.
    pub const fn description(self) -> &'static str {
        match self {
            ErrorClass::Memory => "out of memory",
            ErrorClass::NotInitialized => "interface not initialized",
            ErrorClass::CannotInit => "interface not in the state to be initialized",
            ErrorClass::InvalidIndex => "the index is invalid or has been deleted",
            ErrorClass::InvalidItem => "the item index queried is out of range",
            ErrorClass::InvalidHandle => "the handle is invalid",
            ErrorClass::OutOfHandles => "no more handles available",
            ErrorClass::OutOfSessions => "no more sessions available",
            ErrorClass::InvalidSession => "session argument is not a valid session",
            ErrorClass::CvarSetNotNow => "variable cannot be set at this moment",
            ErrorClass::CvarSetNever => "variable cannot be set until end of execution",
            ErrorClass::PvarNoStartStop => "variable cannot be started or stopped",
            ErrorClass::PvarNoWrite => "variable cannot be written or reset",
            ErrorClass::PvarNoAtomic => "variable cannot be read and written atomically",
            ErrorClass::InvalidName => "name doesn't match",
            ErrorClass::Invalid => "invalid use of the interface or bad parameter value(s)",
            ErrorClass::NotAccessible => "requested functionality not accessible",
            ErrorClass::NotSupported => "requested functionality not supported",
        }
    }
}

/// Everything that can go wrong: the MPI_T error classes of MPI-4.1
/// §16.3.10 (each keeping the raw C code), and the crate's own typed errors
/// for input the C interface would have turned into undefined behavior.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `MPI_T_ERR_MEMORY`: out of memory.
    #[doc(alias = "MPI_T_ERR_MEMORY")]
    #[error("out of memory (MPI_T_ERR_MEMORY, code {code})")]
    Memory {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_NOT_INITIALIZED`: interface not initialized.
    #[doc(alias = "MPI_T_ERR_NOT_INITIALIZED")]
    #[error("interface not initialized (MPI_T_ERR_NOT_INITIALIZED, code {code})")]
    NotInitialized {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_CANNOT_INIT`: interface not in the state to be initialized.
    #[doc(alias = "MPI_T_ERR_CANNOT_INIT")]
    #[error("interface not in the state to be initialized (MPI_T_ERR_CANNOT_INIT, code {code})")]
    CannotInit {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_INVALID_INDEX`: the index is invalid or has been deleted.
    #[doc(alias = "MPI_T_ERR_INVALID_INDEX")]
    #[error("the index is invalid or has been deleted (MPI_T_ERR_INVALID_INDEX, code {code})")]
    InvalidIndex {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_INVALID_ITEM`: the item index queried is out of range.
    #[doc(alias = "MPI_T_ERR_INVALID_ITEM")]
    #[error("the item index queried is out of range (MPI_T_ERR_INVALID_ITEM, code {code})")]
    InvalidItem {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_INVALID_HANDLE`: the handle is invalid.
    #[doc(alias = "MPI_T_ERR_INVALID_HANDLE")]
    #[error("the handle is invalid (MPI_T_ERR_INVALID_HANDLE, code {code})")]
    InvalidHandle {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_OUT_OF_HANDLES`: no more handles available.
    #[doc(alias = "MPI_T_ERR_OUT_OF_HANDLES")]
    #[error("no more handles available (MPI_T_ERR_OUT_OF_HANDLES, code {code})")]
    OutOfHandles {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_OUT_OF_SESSIONS`: no more sessions available.
    #[doc(alias = "MPI_T_ERR_OUT_OF_SESSIONS")]
    #[error("no more sessions available (MPI_T_ERR_OUT_OF_SESSIONS, code {code})")]
    OutOfSessions {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_INVALID_SESSION`: session argument is not a valid session.
    #[doc(alias = "MPI_T_ERR_INVALID_SESSION")]
    #[error("session argument is not a valid session (MPI_T_ERR_INVALID_SESSION, code {code})")]
    InvalidSession {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_CVAR_SET_NOT_NOW`: variable cannot be set at this moment
    /// (there may be a later time at which it can).
    #[doc(alias = "MPI_T_ERR_CVAR_SET_NOT_NOW")]
    #[error("variable cannot be set at this moment (MPI_T_ERR_CVAR_SET_NOT_NOW, code {code})")]
    CvarSetNotNow {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_CVAR_SET_NEVER`: variable cannot be set until end of
    /// execution.
    #[doc(alias = "MPI_T_ERR_CVAR_SET_NEVER")]
    #[error(
        "variable cannot be set until end of execution (MPI_T_ERR_CVAR_SET_NEVER, code {code})"
    )]
    CvarSetNever {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_PVAR_NO_STARTSTOP`: variable cannot be started or stopped.
    #[doc(alias = "MPI_T_ERR_PVAR_NO_STARTSTOP")]
    #[error("variable cannot be started or stopped (MPI_T_ERR_PVAR_NO_STARTSTOP, code {code})")]
    PvarNoStartStop {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_PVAR_NO_WRITE`: variable cannot be written or reset.
    #[doc(alias = "MPI_T_ERR_PVAR_NO_WRITE")]
    #[error("variable cannot be written or reset (MPI_T_ERR_PVAR_NO_WRITE, code {code})")]
    PvarNoWrite {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_PVAR_NO_ATOMIC`: variable cannot be read and written
    /// atomically.
    #[doc(alias = "MPI_T_ERR_PVAR_NO_ATOMIC")]
    #[error(
        "variable cannot be read and written atomically (MPI_T_ERR_PVAR_NO_ATOMIC, code {code})"
    )]
    PvarNoAtomic {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_INVALID_NAME`: the name does not match.
    #[doc(alias = "MPI_T_ERR_INVALID_NAME")]
    #[error("name doesn't match (MPI_T_ERR_INVALID_NAME, code {code})")]
    InvalidName {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_INVALID`: invalid use of the interface or bad parameter
    /// value(s).
    #[doc(alias = "MPI_T_ERR_INVALID")]
    #[error(
        "invalid use of the interface or bad parameter value(s) (MPI_T_ERR_INVALID, code {code})"
    )]
    Invalid {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_NOT_ACCESSIBLE`: requested functionality not accessible
    /// at this time.
    #[doc(alias = "MPI_T_ERR_NOT_ACCESSIBLE")]
    #[error("requested functionality not accessible (MPI_T_ERR_NOT_ACCESSIBLE, code {code})")]
    NotAccessible {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// `MPI_T_ERR_NOT_SUPPORTED`: requested functionality not supported.
    #[doc(alias = "MPI_T_ERR_NOT_SUPPORTED")]
    #[error("requested functionality not supported (MPI_T_ERR_NOT_SUPPORTED, code {code})")]
    NotSupported {
        /// The raw code the implementation returned.
        code: i32,
    },
    /// A non-zero return code that is none of the MPI_T error classes
    /// (e.g. a general MPI error class, or an implementation's own code).
    #[error("MPI_T call failed with unrecognized code {code}")]
    Other {
        /// The raw code the implementation returned.
        code: i32,
    },

    /// A typed access with a Rust type that does not represent the
    /// variable's MPI datatype on this host (see [`Scalar`](crate::Scalar)).
    #[error(
        "type mismatch: the variable has datatype {expected}, which `{requested}` does not represent"
    )]
    TypeMismatch {
        /// The MPI datatype of the variable or element.
        expected: Datatype,
        /// The Rust type that was requested.
        requested: &'static str,
    },
    /// A buffer has the wrong number of elements for the variable.
    #[error("count mismatch: the variable has {expected} element(s), the buffer has {got}")]
    CountMismatch {
        /// Number of elements of the variable (from handle allocation).
        expected: usize,
        /// Number of elements supplied.
        got: usize,
    },
    /// A byte buffer has the wrong size for the data it should hold.
    #[error("size mismatch: expected {expected} byte(s), got {got}")]
    SizeMismatch {
        /// Number of bytes required.
        expected: usize,
        /// Number of bytes supplied.
        got: usize,
    },
    /// A handle was requested with an object of the wrong kind
    /// (MPI-4.1 §16.3.2: the object must match the variable's binding).
    #[error("bind mismatch: the variable binds to {expected}, got {got}")]
    BindMismatch {
        /// The binding the variable declares.
        expected: Bind,
        /// The binding of the object supplied.
        got: Bind,
    },
    /// A string passed to MPI contains a NUL byte before its end.
    #[error("string contains a NUL byte at position {position}")]
    InteriorNul {
        /// Byte offset of the first NUL.
        position: usize,
    },
    /// A string length reported by the implementation exceeds the crate's
    /// hard cap ([`MAX_STRING_LEN`](crate::MAX_STRING_LEN)).
    #[error("string of {len} bytes exceeds the limit of {max} bytes")]
    StringTooLong {
        /// The length reported (including the NUL, as reported).
        len: usize,
        /// The cap.
        max: usize,
    },
    /// A string kept coming back truncated or unterminated after the
    /// bounded number of attempts (MPI-4.1 §16.3.3 not followed).
    #[error("string still truncated or unterminated after {attempts} attempts")]
    Truncated {
        /// Number of fetch attempts made.
        attempts: usize,
    },
    /// A length, count or index reported by the implementation is negative
    /// or does not fit the Rust or C integer type.
    #[error("a length, count or index is negative or out of range")]
    LengthOverflow,
    /// A raw constant returned by the implementation is not one of the
    /// values the standard defines for `kind`.
    #[error("unknown {kind} constant {value}")]
    UnknownConstant {
        /// What was being decoded (e.g. "verbosity").
        kind: &'static str,
        /// The raw value.
        value: i64,
    },
    /// `MPI_T_init_thread` provided a lower thread level than a type that needs it
    /// (e.g. a `Send + Sync` init token needs `MPI_THREAD_MULTIPLE`).
    #[error("thread level {requested} requested, the implementation provides {provided}")]
    ThreadLevelUnavailable {
        /// The level the caller needs.
        requested: crate::ThreadLevel,
        /// The level MPI_T provided.
        provided: crate::ThreadLevel,
    },
    /// A call the standard allows but that crashes the installed implementation, refused
    /// before it is made so the caller keeps running: the [`Quirk`](crate::implementation::Quirk)
    /// names the implementation, its versions and what goes wrong.
    #[error("refused: {0}")]
    KnownCrash(&'static crate::implementation::Quirk),
    /// A value that breaks a rule of the standard or of this crate.
    #[error("invalid value: {0}")]
    InvalidValue(String),
    /// A name that does not parse as the expected kind of constant.
    #[error("cannot parse {input:?} as a {what}")]
    Parse {
        /// What was being parsed.
        what: &'static str,
        /// The input.
        input: String,
    },
}

impl Error {
    /// The error for an MPI_T error class, keeping the raw `code`.
    pub const fn from_class(class: ErrorClass, code: i32) -> Error {
        match class {
            ErrorClass::Memory => Error::Memory { code },
            ErrorClass::NotInitialized => Error::NotInitialized { code },
            ErrorClass::CannotInit => Error::CannotInit { code },
            ErrorClass::InvalidIndex => Error::InvalidIndex { code },
            ErrorClass::InvalidItem => Error::InvalidItem { code },
            ErrorClass::InvalidHandle => Error::InvalidHandle { code },
            ErrorClass::OutOfHandles => Error::OutOfHandles { code },
            ErrorClass::OutOfSessions => Error::OutOfSessions { code },
            ErrorClass::InvalidSession => Error::InvalidSession { code },
            ErrorClass::CvarSetNotNow => Error::CvarSetNotNow { code },
            ErrorClass::CvarSetNever => Error::CvarSetNever { code },
            ErrorClass::PvarNoStartStop => Error::PvarNoStartStop { code },
            ErrorClass::PvarNoWrite => Error::PvarNoWrite { code },
            ErrorClass::PvarNoAtomic => Error::PvarNoAtomic { code },
            ErrorClass::InvalidName => Error::InvalidName { code },
            ErrorClass::Invalid => Error::Invalid { code },
            ErrorClass::NotAccessible => Error::NotAccessible { code },
            ErrorClass::NotSupported => Error::NotSupported { code },
        }
    }

    /// The MPI_T error class, or `None` for [`Error::Other`] and the crate's
    /// own errors.
    pub const fn class(&self) -> Option<ErrorClass> {
        Some(match self {
            Error::Memory { .. } => ErrorClass::Memory,
            Error::NotInitialized { .. } => ErrorClass::NotInitialized,
            Error::CannotInit { .. } => ErrorClass::CannotInit,
            Error::InvalidIndex { .. } => ErrorClass::InvalidIndex,
            Error::InvalidItem { .. } => ErrorClass::InvalidItem,
            Error::InvalidHandle { .. } => ErrorClass::InvalidHandle,
            Error::OutOfHandles { .. } => ErrorClass::OutOfHandles,
            Error::OutOfSessions { .. } => ErrorClass::OutOfSessions,
            Error::InvalidSession { .. } => ErrorClass::InvalidSession,
            Error::CvarSetNotNow { .. } => ErrorClass::CvarSetNotNow,
            Error::CvarSetNever { .. } => ErrorClass::CvarSetNever,
            Error::PvarNoStartStop { .. } => ErrorClass::PvarNoStartStop,
            Error::PvarNoWrite { .. } => ErrorClass::PvarNoWrite,
            Error::PvarNoAtomic { .. } => ErrorClass::PvarNoAtomic,
            Error::InvalidName { .. } => ErrorClass::InvalidName,
            Error::Invalid { .. } => ErrorClass::Invalid,
            Error::NotAccessible { .. } => ErrorClass::NotAccessible,
            Error::NotSupported { .. } => ErrorClass::NotSupported,
            _ => return None,
        })
    }

    /// The raw C return code, for errors that came from the implementation
    /// (an MPI_T class or [`Error::Other`]); `None` for the crate's own.
    pub const fn raw_code(&self) -> Option<i32> {
        match self {
            Error::Memory { code }
            | Error::NotInitialized { code }
            | Error::CannotInit { code }
            | Error::InvalidIndex { code }
            | Error::InvalidItem { code }
            | Error::InvalidHandle { code }
            | Error::OutOfHandles { code }
            | Error::OutOfSessions { code }
            | Error::InvalidSession { code }
            | Error::CvarSetNotNow { code }
            | Error::CvarSetNever { code }
            | Error::PvarNoStartStop { code }
            | Error::PvarNoWrite { code }
            | Error::PvarNoAtomic { code }
            | Error::InvalidName { code }
            | Error::Invalid { code }
            | Error::NotAccessible { code }
            | Error::NotSupported { code }
            | Error::Other { code } => Some(*code),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_round_trip_and_message() {
        for &class in ErrorClass::ALL {
            let e = Error::from_class(class, 1000 + class as i32);
            assert_eq!(e.class(), Some(class));
            assert_eq!(e.raw_code(), Some(1000 + class as i32));
            let msg = e.to_string();
            assert!(msg.starts_with(class.description()), "{msg}");
            assert!(msg.contains(class.c_name()), "{msg}");
        }
        assert_eq!(ErrorClass::ALL.len(), 18);
        assert_eq!(Error::Other { code: 5 }.class(), None);
        assert_eq!(Error::LengthOverflow.raw_code(), None);
    }
}
