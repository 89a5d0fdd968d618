//! Thread support levels (MPI-4.1 §11.2.1, used by `MPI_T_init_thread`, §16.3.4).

use crate::macros::c_enum;

c_enum! {
    /// A level of thread support, as requested from and provided by `MPI_Init_thread` and
    /// `MPI_T_init_thread`. Ordered as the standard requires: `Single < Funneled < Serialized <
    /// Multiple`. Displayed with its full C name.
    ///
    /// ```
    /// use mpit_core::ThreadLevel;
    /// assert!(ThreadLevel::Single < ThreadLevel::Multiple);
    /// assert!(ThreadLevel::Multiple.satisfies(ThreadLevel::Serialized));
    /// assert_eq!(ThreadLevel::Funneled.to_string(), "MPI_THREAD_FUNNELED");
    /// ```
    pub enum ThreadLevel ("", "thread level") {
        /// Only one thread will execute.
        Single = "MPI_THREAD_SINGLE",
        /// Only the thread that initialised MPI makes MPI calls.
        Funneled = "MPI_THREAD_FUNNELED",
        /// Any thread may call, but never two at once.
        Serialized = "MPI_THREAD_SERIALIZED",
        /// Any thread may call at any time.
        Multiple = "MPI_THREAD_MULTIPLE",
    }
}

impl ThreadLevel {
    /// Whether a provided level `self` satisfies a `required` one.
    pub fn satisfies(self, required: ThreadLevel) -> bool {
        self >= required
    }
}
