//! `MPIR_debug_state` (spec §2.8.6) and the values the tool writes into
//! `MPIR_being_debugged` (§2.8.3) and `MPIR_debug_gate` (§2.8.8).

use std::fmt;

/// `#define MPIR_NULL 0` (§2.8.6): the tool ignores the event and continues
/// the starter process.
pub const MPIR_NULL: i32 = 0;
/// `#define MPIR_DEBUG_SPAWNED 1` (§2.8.6): the starter has spawned the MPI
/// processes and filled in the process descriptor table.
pub const MPIR_DEBUG_SPAWNED: i32 = 1;
/// `#define MPIR_DEBUG_ABORTING 2` (§2.8.6): the MPI job has aborted; the
/// reason is in `MPIR_debug_abort_string` (§2.8.7).
pub const MPIR_DEBUG_ABORTING: i32 = 2;

/// The value the tool writes into `MPIR_being_debugged` "immediately after
/// spawning or attaching to the starter process" (§2.8.3).
pub const BEING_DEBUGGED: i32 = 1;
/// The value the tool writes into `MPIR_being_debugged` "immediately before
/// detaching from the starter process" (§2.8.3).
pub const NOT_BEING_DEBUGGED: i32 = 0;
/// The value the tool writes into `MPIR_debug_gate` in each MPI process "to
/// notify the MPI rank processes that the debugger has attached" (§2.8.8,
/// §2.7 step 18).
pub const DEBUG_GATE_OPEN: i32 = 1;

/// The value of `MPIR_debug_state` when the starter process calls
/// `MPIR_Breakpoint` (§2.8.6): the MPIR event the tool must process.
///
/// Values the spec does not define are kept as [`DebugState::Unknown`]: a
/// tool should treat them like [`DebugState::Null`] (ignore the event and
/// continue), but may report them. [`DebugState::from_raw`] never produces
/// `Unknown(0..=2)`; [`DebugState::to_raw`] maps every variant back to its
/// C value, so `from_raw(s.to_raw())` is `s` for every canonical `s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DebugState {
    /// `MPIR_NULL` (0): "the tool should ignore the event and continue the
    /// starter process".
    Null,
    /// `MPIR_DEBUG_SPAWNED` (1): "the starter process has spawned the MPI
    /// processes and filled in the process descriptor table. The tool can
    /// attach to any additional MPI processes that have appeared in the
    /// process descriptor table."
    Spawned,
    /// `MPIR_DEBUG_ABORTING` (2): "the MPI job has aborted and the tool can
    /// notify the user of the abort condition", reading
    /// `MPIR_debug_abort_string` (§2.8.7) for the reason.
    Aborting,
    /// A value the spec does not define, kept as read.
    Unknown(i32),
}

impl DebugState {
    /// The state for a raw `MPIR_debug_state` value.
    pub const fn from_raw(raw: i32) -> Self {
        match raw {
            MPIR_NULL => DebugState::Null,
            MPIR_DEBUG_SPAWNED => DebugState::Spawned,
            MPIR_DEBUG_ABORTING => DebugState::Aborting,
            other => DebugState::Unknown(other),
        }
    }

    /// The raw C value of this state.
    pub const fn to_raw(self) -> i32 {
        match self {
            DebugState::Null => MPIR_NULL,
            DebugState::Spawned => MPIR_DEBUG_SPAWNED,
            DebugState::Aborting => MPIR_DEBUG_ABORTING,
            DebugState::Unknown(raw) => raw,
        }
    }

    /// The C macro name of a defined state, `None` for an unknown value.
    pub const fn macro_name(self) -> Option<&'static str> {
        match self {
            DebugState::Null => Some("MPIR_NULL"),
            DebugState::Spawned => Some("MPIR_DEBUG_SPAWNED"),
            DebugState::Aborting => Some("MPIR_DEBUG_ABORTING"),
            DebugState::Unknown(_) => None,
        }
    }
}

impl From<i32> for DebugState {
    fn from(raw: i32) -> Self {
        DebugState::from_raw(raw)
    }
}

impl From<DebugState> for i32 {
    fn from(state: DebugState) -> Self {
        state.to_raw()
    }
}

impl fmt::Display for DebugState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.macro_name() {
            Some(name) => write!(f, "{name} ({})", self.to_raw()),
            None => write!(f, "unknown MPIR_debug_state ({})", self.to_raw()),
        }
    }
}
