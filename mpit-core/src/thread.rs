//! Thread support levels (MPI-4.1 §11.2.1, used by `MPI_T_init_thread`, §16.3.4).

use core::fmt;

/// A level of thread support, as requested from and provided by `MPI_Init_thread` and
/// `MPI_T_init_thread`. Ordered as the standard requires: `Single < Funneled < Serialized <
/// Multiple`.
///
/// ```
/// use mpit_core::ThreadLevel;
/// assert!(ThreadLevel::Single < ThreadLevel::Multiple);
/// assert!(ThreadLevel::Multiple.satisfies(ThreadLevel::Serialized));
/// assert_eq!(ThreadLevel::Funneled.to_string(), "MPI_THREAD_FUNNELED");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ThreadLevel {
    /// Only one thread will execute.
    #[doc(alias = "MPI_THREAD_SINGLE")]
    Single,
    /// Only the thread that initialised MPI makes MPI calls.
    #[doc(alias = "MPI_THREAD_FUNNELED")]
    Funneled,
    /// Any thread may call, but never two at once.
    #[doc(alias = "MPI_THREAD_SERIALIZED")]
    Serialized,
    /// Any thread may call at any time.
    #[doc(alias = "MPI_THREAD_MULTIPLE")]
    Multiple,
}

impl ThreadLevel {
    /// Every level, lowest first.
    pub const ALL: [ThreadLevel; 4] = [
        ThreadLevel::Single,
        ThreadLevel::Funneled,
        ThreadLevel::Serialized,
        ThreadLevel::Multiple,
    ];

    /// Whether a provided level `self` satisfies a `required` one.
    pub fn satisfies(self, required: ThreadLevel) -> bool {
        self >= required
    }

    /// The C name (`MPI_THREAD_SINGLE` ...).
    pub const fn c_name(self) -> &'static str {
        match self {
            ThreadLevel::Single => "MPI_THREAD_SINGLE",
            ThreadLevel::Funneled => "MPI_THREAD_FUNNELED",
            ThreadLevel::Serialized => "MPI_THREAD_SERIALIZED",
            ThreadLevel::Multiple => "MPI_THREAD_MULTIPLE",
        }
    }
}

impl fmt::Display for ThreadLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.c_name())
    }
}
