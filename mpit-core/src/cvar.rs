//! Control variables: the scope of a change (MPI-4.1 §16.3.6).

use crate::macros::c_enum;

c_enum! {
    /// When and how a control variable may be changed (MPI-4.1 §16.3.6).
    ///
    /// The scope only says whether a write *may* be possible: an
    /// implementation can still refuse a write with
    /// [`ErrorClass::CvarSetNotNow`](crate::ErrorClass::CvarSetNotNow) or
    /// [`ErrorClass::CvarSetNever`](crate::ErrorClass::CvarSetNever).
    ///
    /// ```
    /// use mpit_core::Scope;
    ///
    /// assert!(!Scope::Constant.is_writable());
    /// assert!(Scope::Local.is_writable() && !Scope::Local.is_collective());
    /// assert!(Scope::AllEq.is_collective() && Scope::AllEq.requires_equal_values());
    /// assert!(!Scope::Constant.value_may_change());
    /// ```
    pub enum Scope ("MPI_T_SCOPE_", "scope") {
        /// Read-only; the value is constant.
        Constant = "MPI_T_SCOPE_CONSTANT",
        /// Read-only, cannot be written, but the value may change.
        Readonly = "MPI_T_SCOPE_READONLY",
        /// May be writable; writing is a local operation.
        Local = "MPI_T_SCOPE_LOCAL",
        /// May be writable; must be done to a group of processes, all
        /// processes in the group must be set to consistent values.
        Group = "MPI_T_SCOPE_GROUP",
        /// May be writable; must be done to a group of processes, all
        /// processes in the group must be set to the same value.
        GroupEq = "MPI_T_SCOPE_GROUP_EQ",
        /// May be writable; must be done to all connected processes, which
        /// must be set to consistent values.
        All = "MPI_T_SCOPE_ALL",
        /// May be writable; must be done to all connected processes, which
        /// must be set to the same value.
        AllEq = "MPI_T_SCOPE_ALL_EQ",
    }
}

impl Scope {
    /// Whether the variable may be written (every scope but `Constant` and
    /// `Readonly`).
    pub const fn is_writable(self) -> bool {
        !matches!(self, Scope::Constant | Scope::Readonly)
    }

    /// Whether a write must be done on a group of processes or on all
    /// connected processes (`Group`, `GroupEq`, `All`, `AllEq`).
    pub const fn is_collective(self) -> bool {
        matches!(
            self,
            Scope::Group | Scope::GroupEq | Scope::All | Scope::AllEq
        )
    }

    /// Whether a collective write must set the same value on every process
    /// involved (`GroupEq`, `AllEq`), not merely consistent values.
    pub const fn requires_equal_values(self) -> bool {
        matches!(self, Scope::GroupEq | Scope::AllEq)
    }

    /// Whether the value may change during execution (every scope but
    /// `Constant`).
    pub const fn value_may_change(self) -> bool {
        !matches!(self, Scope::Constant)
    }
}
