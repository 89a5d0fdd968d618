//! Events: callback safety levels and source ordering (MPI-4.1 §16.3.8).

use crate::macros::c_enum;

c_enum! {
    /// Callback safety requirement levels (MPI-4.1 §16.3.8.2).
    ///
    /// The levels form a hierarchy: each includes all restrictions of the
    /// levels below it, so the derived order is
    /// `None < MpiRestricted < ThreadSafe < AsyncSignalSafe`.
    ///
    /// A callback is registered with the *maximum* level it supports
    /// (MPI-4.1 §16.3.8.4); the implementation passes the level required by
    /// the context of each invocation. A callback registered at level `L` may
    /// therefore be invoked in any context requiring at most `L`:
    /// see [`CbSafety::sufficient_for`].
    ///
    /// ```
    /// use mpit_core::CbSafety;
    ///
    /// let registered = CbSafety::ThreadSafe;
    /// assert!(registered.sufficient_for(CbSafety::MpiRestricted));
    /// assert!(!registered.sufficient_for(CbSafety::AsyncSignalSafe));
    /// ```
    pub enum CbSafety ("MPI_T_CB_REQUIRE_", "callback safety level") {
        /// No restrictions on the callback.
        None = "MPI_T_CB_REQUIRE_NONE",
        /// The callback may call only `MPI_T_*` functions, `MPI_WTIME` and
        /// `MPI_WTICK`.
        MpiRestricted = "MPI_T_CB_REQUIRE_MPI_RESTRICTED",
        /// As `MpiRestricted`, and the callback must be reentrant and
        /// thread-safe.
        ThreadSafe = "MPI_T_CB_REQUIRE_THREAD_SAFE",
        /// As `ThreadSafe`, and the callback must be safe to run in
        /// asynchronous contexts such as signal handlers.
        AsyncSignalSafe = "MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE",
    }
}

impl CbSafety {
    /// The most restrictive level: always safe to assume (MPI-4.1 §16.3.8.2).
    pub const STRICTEST: CbSafety = CbSafety::AsyncSignalSafe;

    /// Whether a callback that supports up to `self` may run in a context
    /// that requires `required` (that is, `required <= self`).
    pub fn sufficient_for(self, required: CbSafety) -> bool {
        required <= self
    }
}

c_enum! {
    /// Chronological ordering guarantee of an event source (MPI-4.1 §16.3.8.1).
    ///
    /// ```
    /// use mpit_core::SourceOrder;
    ///
    /// assert!(SourceOrder::Ordered.is_ordered());
    /// assert_eq!(SourceOrder::Unordered.c_name(), "MPI_T_SOURCE_UNORDERED");
    /// ```
    pub enum SourceOrder ("MPI_T_SOURCE_", "source ordering") {
        /// Callbacks of the source are invoked in chronological order: the
        /// timestamps of subsequent events are monotonically increasing.
        Ordered = "MPI_T_SOURCE_ORDERED",
        /// No chronological ordering guarantee.
        Unordered = "MPI_T_SOURCE_UNORDERED",
    }
}

impl SourceOrder {
    /// Whether the source guarantees chronological order.
    pub const fn is_ordered(self) -> bool {
        matches!(self, SourceOrder::Ordered)
    }
}
