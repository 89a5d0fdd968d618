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
    pub enum ErrorClass ("MPI_T_ERR_", "MPI_T error class",
        /// The description of the class, in the standard's words (MPI-4.1 Table 16.7).
        description) {
        /// Out of memory.
        Memory = "MPI_T_ERR_MEMORY" => "out of memory",
        /// Interface not initialized.
        NotInitialized = "MPI_T_ERR_NOT_INITIALIZED" => "interface not initialized",
        /// Interface not in the state to be initialized.
        CannotInit = "MPI_T_ERR_CANNOT_INIT" => "interface not in the state to be initialized",
        /// The index is invalid or has been deleted.
        InvalidIndex = "MPI_T_ERR_INVALID_INDEX" => "the index is invalid or has been deleted",
        /// The item index queried is out of range.
        InvalidItem = "MPI_T_ERR_INVALID_ITEM" => "the item index queried is out of range",
        /// The handle is invalid.
        InvalidHandle = "MPI_T_ERR_INVALID_HANDLE" => "the handle is invalid",
        /// No more handles available.
        OutOfHandles = "MPI_T_ERR_OUT_OF_HANDLES" => "no more handles available",
        /// No more sessions available.
        OutOfSessions = "MPI_T_ERR_OUT_OF_SESSIONS" => "no more sessions available",
        /// Session argument is not a valid session.
        InvalidSession = "MPI_T_ERR_INVALID_SESSION" => "session argument is not a valid session",
        /// Variable cannot be set at this moment.
        CvarSetNotNow = "MPI_T_ERR_CVAR_SET_NOT_NOW" => "variable cannot be set at this moment",
        /// Variable cannot be set until end of execution.
        CvarSetNever = "MPI_T_ERR_CVAR_SET_NEVER" => "variable cannot be set until end of execution",
        /// Variable cannot be started or stopped.
        PvarNoStartStop = "MPI_T_ERR_PVAR_NO_STARTSTOP" => "variable cannot be started or stopped",
        /// Variable cannot be written or reset.
        PvarNoWrite = "MPI_T_ERR_PVAR_NO_WRITE" => "variable cannot be written or reset",
        /// Variable cannot be read and written atomically.
        PvarNoAtomic = "MPI_T_ERR_PVAR_NO_ATOMIC" => "variable cannot be read and written atomically",
        /// Name does not match any variable, category or event type.
        InvalidName = "MPI_T_ERR_INVALID_NAME" => "name doesn't match",
        /// Invalid use of the interface or bad parameter value(s).
        Invalid = "MPI_T_ERR_INVALID" => "invalid use of the interface or bad parameter value(s)" @ "MPI-3.1",
        /// Requested functionality not accessible at this time (e.g. from
        /// inside an event callback, MPI-4.1 §16.3.8.2).
        NotAccessible = "MPI_T_ERR_NOT_ACCESSIBLE" => "requested functionality not accessible" @ "MPI-4.0",
        /// Requested functionality not supported.
        NotSupported = "MPI_T_ERR_NOT_SUPPORTED" => "requested functionality not supported" @ "MPI-4.0",
    }
}

/// Everything that can go wrong: an error class of MPI-4.1 §16.3.10 returned by the
/// implementation (with its raw C code), and the crate's own typed errors for input the C
/// interface would have turned into undefined behavior.
///
/// Kept at two words so that `Result<(), Error>` travels in registers on the hot paths
/// (every MPI_T call returns one): what does not fit, a message or a pair of lengths, is boxed,
/// which costs only on the error path.
///
/// ```
/// use mpit_core::{Error, ErrorClass};
///
/// let e = Error::from_class(ErrorClass::InvalidIndex, 62);
/// assert!(matches!(e, Error::Mpi { class: ErrorClass::InvalidIndex, code: 62 }));
/// assert!(e.is(ErrorClass::InvalidIndex));
/// assert_eq!(e.to_string(), "the index is invalid or has been deleted (MPI_T_ERR_INVALID_INDEX, code 62)");
/// assert!(std::mem::size_of::<mpit_core::Result<()>>() <= 16);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An MPI_T error class (MPI-4.1 §16.3.10) the implementation returned.
    #[doc(alias = "MPI_T_ERR")]
    #[error("{} ({}, code {code})", class.description(), class.c_name())]
    Mpi {
        /// The class the raw code stands for in the installed implementation.
        class: ErrorClass,
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
    #[error("{0}")]
    TypeMismatch(Box<TypeMismatch>),
    /// A buffer has the wrong number of elements for the variable
    /// (expected: the variable's count from handle allocation).
    #[error("count mismatch: the variable has {} element(s), the buffer has {}", .0.expected, .0.got)]
    CountMismatch(Box<Mismatch>),
    /// A byte buffer has the wrong size for the data it should hold.
    #[error("size mismatch: expected {} byte(s), got {}", .0.expected, .0.got)]
    SizeMismatch(Box<Mismatch>),
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
    /// hard cap, [`MAX_STRING_LEN`](crate::MAX_STRING_LEN).
    #[error(
        "string of {len} bytes exceeds the limit of {} bytes",
        crate::MAX_STRING_LEN
    )]
    StringTooLong {
        /// The length reported (including the NUL, as reported).
        len: usize,
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
    /// values the standard defines for its kind.
    #[error("unknown {} constant {}", .0.kind, .0.value)]
    UnknownConstant(Box<UnknownConstant>),
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
    /// A part of the tool interface that the installed MPI's `mpi.h` does not declare (e.g. the
    /// MPI-4 event API on Open MPI 4.1 and 5.0): the call compiles everywhere and answers this
    /// at run time. Its [`class`](Error::class) is [`ErrorClass::NotSupported`]; it has no raw
    /// code, since no MPI call was made.
    #[error("not supported by the installed MPI: its mpi.h has no {}", .0.what())]
    NotSupported(Feature),
    /// A value that breaks a rule of the standard or of this crate (the message says which).
    // A thin box: `Box<str>` would make the error three words.
    #[allow(clippy::box_collection)]
    #[error("invalid value: {0}")]
    InvalidValue(Box<String>),
    /// A name that does not parse as the expected kind of constant, or a text that does not
    /// parse as a value of the expected datatype.
    #[error("cannot parse {:?} as a {}", .0.input, .0.what)]
    Parse(Box<ParseError>),
    /// No MPI library to call: in the MPI-5 ABI build (`--cfg mpit_abi`), `libmpi_abi.so.1`
    /// (or `MPIT_ABI_LIB`) could not be loaded or was refused; the message says why.
    #[allow(clippy::box_collection)]
    #[error("{0}")]
    LibraryUnavailable(Box<String>),
    /// A value that a datatype cannot hold exactly: out of its range, a fraction for an integer
    /// type, a number a float would round, a number for character data or `MPI_BYTE`, a
    /// character outside `MPI_CHAR`'s ASCII (see [`Value`](crate::Value)'s constructors).
    #[error("{} is not representable exactly as {}", .0.value, .0.datatype)]
    NotRepresentable(Box<NotRepresentable>),
}

// Two words: `Result<(), Error>` is returned in registers (x86-64 and AArch64 return up to two
// words that way), so the success path of every wrapped call costs what C's `int` costs.
const _: () = assert!(core::mem::size_of::<Result<()>>() <= 2 * core::mem::size_of::<usize>());
const _: () = assert!(core::mem::size_of::<Error>() <= 16);

/// An optional part of the tool interface, which an installed `mpi.h` may lack
/// ([`Error::NotSupported`]).
///
/// ```
/// use mpit_core::{Error, ErrorClass, error::Feature};
///
/// let e = Error::NotSupported(Feature::Events);
/// assert!(e.is(ErrorClass::NotSupported));
/// assert_eq!(e.raw_code(), None);
/// assert!(e.to_string().contains("MPI_T_event_"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// The MPI-4.0 event API (§15.3.8 there, MPI-4.1 §16.3.8): event types, sources,
    /// registrations and callbacks (`MPI_T_event_*`, `MPI_T_source_*`,
    /// `MPI_T_category_get_num_events`, `MPI_T_category_get_events`).
    Events,
}

impl Feature {
    /// What the header lacks, in words.
    pub const fn what(self) -> &'static str {
        match self {
            Feature::Events => {
                "MPI-4 event API (MPI_T_event_*, MPI_T_source_*, MPI_T_category_get_events)"
            }
        }
    }
}

/// The detail of [`Error::TypeMismatch`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "type mismatch: the variable has datatype {expected}, which `{requested}` does not represent"
)]
pub struct TypeMismatch {
    /// The MPI datatype of the variable or element.
    pub expected: Datatype,
    /// The Rust type that was requested.
    pub requested: &'static str,
}

/// The detail of [`Error::CountMismatch`] and [`Error::SizeMismatch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// What the variable, element or datatype requires.
    pub expected: usize,
    /// What was supplied.
    pub got: usize,
}

/// The detail of [`Error::UnknownConstant`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownConstant {
    /// What was being decoded (e.g. "verbosity").
    pub kind: &'static str,
    /// The raw value.
    pub value: i64,
}

/// The detail of [`Error::Parse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What was being parsed.
    pub what: &'static str,
    /// The input.
    pub input: String,
}

/// The detail of [`Error::NotRepresentable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotRepresentable {
    /// The datatype asked for.
    pub datatype: Datatype,
    /// The value, as text (as written, or as [`Value`](crate::Value)'s `Display` shows it).
    pub value: String,
}

impl Error {
    /// The error for an MPI_T error class, keeping the raw `code`.
    #[inline]
    pub const fn from_class(class: ErrorClass, code: i32) -> Error {
        Error::Mpi { class, code }
    }

    /// The MPI_T error class, or `None` for [`Error::Other`] and the crate's
    /// own errors ([`Error::NotSupported`] counts as
    /// [`ErrorClass::NotSupported`]).
    #[inline]
    pub const fn class(&self) -> Option<ErrorClass> {
        match self {
            Error::Mpi { class, .. } => Some(*class),
            Error::NotSupported(_) => Some(ErrorClass::NotSupported),
            _ => None,
        }
    }

    /// Whether this is the MPI_T error class `class`.
    #[inline]
    pub fn is(&self, class: ErrorClass) -> bool {
        self.class() == Some(class)
    }

    /// The raw C return code, for errors that came from the implementation
    /// (an MPI_T class or [`Error::Other`]); `None` for the crate's own.
    #[inline]
    pub const fn raw_code(&self) -> Option<i32> {
        match self {
            Error::Mpi { code, .. } | Error::Other { code } => Some(*code),
            _ => None,
        }
    }

    /// [`Error::TypeMismatch`].
    #[cold]
    pub fn type_mismatch(expected: Datatype, requested: &'static str) -> Error {
        Error::TypeMismatch(Box::new(TypeMismatch {
            expected,
            requested,
        }))
    }

    /// [`Error::CountMismatch`].
    #[cold]
    pub fn count_mismatch(expected: usize, got: usize) -> Error {
        Error::CountMismatch(Box::new(Mismatch { expected, got }))
    }

    /// [`Error::SizeMismatch`].
    #[cold]
    pub fn size_mismatch(expected: usize, got: usize) -> Error {
        Error::SizeMismatch(Box::new(Mismatch { expected, got }))
    }

    /// [`Error::UnknownConstant`].
    #[cold]
    pub fn unknown_constant(kind: &'static str, value: impl Into<i64>) -> Error {
        Error::UnknownConstant(Box::new(UnknownConstant {
            kind,
            value: value.into(),
        }))
    }

    /// [`Error::InvalidValue`] with a message.
    #[cold]
    pub fn invalid_value(message: impl Into<String>) -> Error {
        Error::InvalidValue(Box::new(message.into()))
    }

    /// [`Error::NotRepresentable`]: `value` is not exactly a value of `datatype`.
    #[cold]
    pub fn not_representable(datatype: Datatype, value: impl core::fmt::Display) -> Error {
        Error::NotRepresentable(Box::new(NotRepresentable {
            datatype,
            value: value.to_string(),
        }))
    }

    /// [`Error::Parse`].
    #[cold]
    pub fn parse(what: &'static str, input: impl Into<String>) -> Error {
        Error::Parse(Box::new(ParseError {
            what,
            input: input.into(),
        }))
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
