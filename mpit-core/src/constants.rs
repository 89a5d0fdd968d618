//! The families of C constants of MPI_T, each declared once as a table.
//!
//! MPI-4.1 §16.3 fixes the names of its constants, not their values: MPICH's
//! `MPI_T_VERBOSITY_USER_BASIC` is 221, Open MPI's 0. Each family is therefore one table of
//! rows (C name, and the version of the standard that added the constant when later than
//! MPI-3.0), declared with the enum it defines (e.g. [`Bind`]). From the table:
//!
//! * this crate derives the enum, `ALL`, `c_name`, `Display` and `FromStr`;
//! * `mpit-sys`'s build script reads [`FAMILIES`] and generates, from the installed `mpi.h`,
//!   the named constants (`mpit_sys::MPI_T_BIND_MPI_COMM`) and one array of values per family
//!   in the table's order (`mpit_sys::tables::BIND`);
//! * `mpit-safe`'s `RawConstant` converts between the two by position, for every family alike.
//!
//! Adding a constant is one row in its family's table.
//!
//! ```
//! use mpit_core::constants::{CConstant, FAMILIES};
//! use mpit_core::Bind;
//!
//! assert_eq!(Bind::Comm.c_name(), "MPI_T_BIND_MPI_COMM");
//! assert_eq!(Bind::Session.since(), Some("MPI-4.0"));
//! let bind = FAMILIES.iter().find(|f| f.rust_name == "Bind").unwrap();
//! assert_eq!(bind.rows.len(), Bind::ALL.len());
//! assert_eq!(<Bind as CConstant>::KIND, "bind");
//! ```

use core::fmt::Debug;

use crate::{Bind, CbSafety, Datatype, ErrorClass, PvarClass, Scope, SourceOrder, ThreadLevel};
use crate::{Verbosity, verbosity};

/// One row of a family's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The C name, as spelled in `mpi.h`.
    pub c_name: &'static str,
    /// The version of the standard that added the constant, when later than MPI-3.0 (the
    /// first with MPI_T): an older `mpi.h` may not declare it.
    pub since: Option<&'static str>,
}

/// A family of C constants declared as a table: the enum's values in the table's order.
pub trait CConstant: Copy + Eq + Debug + 'static {
    /// What a value of the family is called in messages (e.g. `"bind"`).
    const KIND: &'static str;
    /// Every value, in the table's order.
    const ALL: &'static [Self];
    /// The table: one row per value of [`CConstant::ALL`], in the same order.
    const TABLE: &'static [Row];

    /// The value's position in [`CConstant::ALL`] and [`CConstant::TABLE`].
    fn position(self) -> usize;

    /// The value's row.
    #[inline]
    fn row(self) -> &'static Row {
        &Self::TABLE[self.position()]
    }
}

/// How the installed MPI represents a family's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repr {
    /// `int` constants (enum items or macros).
    Int,
    /// `MPI_Datatype` handles (casts or link-time objects in C).
    DatatypeHandle,
}

/// When the header declares a family at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Every MPI_T header (MPI-3.0 on); rows with [`Row::since`] may still be missing.
    Always,
    /// Only headers with the MPI-4 event API (MPI-4.1 §16.3.8).
    Events,
}

/// A family, as generators and header checks see it.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// The Rust type (e.g. `"Bind"`).
    pub rust_name: &'static str,
    /// The name of the family's array of installed values in `mpit_sys::tables` (e.g. `"BIND"`).
    pub table_name: &'static str,
    /// The prefix every C name of the family starts with (e.g. `"MPI_T_BIND_"`), when it is
    /// the family's alone: a header check then looks for names with it that the table lacks.
    pub prefix: Option<&'static str>,
    /// What a value is called in messages.
    pub kind: &'static str,
    /// How the installed MPI represents the values.
    pub repr: Repr,
    /// When the header declares the family.
    pub gate: Gate,
    /// The table.
    pub rows: &'static [Row],
}

const fn family<T: CConstant>(
    rust_name: &'static str,
    table_name: &'static str,
    prefix: Option<&'static str>,
    repr: Repr,
    gate: Gate,
) -> Family {
    Family {
        rust_name,
        table_name,
        prefix,
        kind: T::KIND,
        repr,
        gate,
        rows: T::TABLE,
    }
}

/// Every family of MPI_T's C constants, in the order of the standard's sections.
pub const FAMILIES: &[Family] = &[
    family::<Verbosity>(
        "Verbosity",
        "VERBOSITY",
        Some("MPI_T_VERBOSITY_"),
        Repr::Int,
        Gate::Always,
    ),
    family::<Bind>("Bind", "BIND", Some("MPI_T_BIND_"), Repr::Int, Gate::Always),
    family::<ThreadLevel>(
        "ThreadLevel",
        "THREAD_LEVEL",
        Some("MPI_THREAD_"),
        Repr::Int,
        Gate::Always,
    ),
    family::<Datatype>(
        "Datatype",
        "DATATYPE",
        None,
        Repr::DatatypeHandle,
        Gate::Always,
    ),
    family::<Scope>(
        "Scope",
        "SCOPE",
        Some("MPI_T_SCOPE_"),
        Repr::Int,
        Gate::Always,
    ),
    family::<PvarClass>(
        "PvarClass",
        "PVAR_CLASS",
        Some("MPI_T_PVAR_CLASS_"),
        Repr::Int,
        Gate::Always,
    ),
    family::<CbSafety>(
        "CbSafety",
        "CB_SAFETY",
        Some("MPI_T_CB_REQUIRE_"),
        Repr::Int,
        Gate::Events,
    ),
    family::<SourceOrder>(
        "SourceOrder",
        "SOURCE_ORDER",
        Some("MPI_T_SOURCE_"),
        Repr::Int,
        Gate::Events,
    ),
    family::<ErrorClass>(
        "ErrorClass",
        "ERROR_CLASS",
        Some("MPI_T_ERR_"),
        Repr::Int,
        Gate::Always,
    ),
];

impl CConstant for Verbosity {
    const KIND: &'static str = "verbosity";
    const ALL: &'static [Verbosity] = &Verbosity::ALL_LEVELS;
    const TABLE: &'static [Row] = verbosity::TABLE;

    #[inline]
    fn position(self) -> usize {
        Verbosity::position(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: CConstant>() {
        assert_eq!(T::ALL.len(), T::TABLE.len(), "{}", T::KIND);
        for (i, v) in T::ALL.iter().enumerate() {
            assert_eq!(v.position(), i, "{}", T::KIND);
        }
    }

    /// Each table has one row per value, in the order of `ALL`; C names are unique across all
    /// families and carry their family's prefix.
    #[test]
    fn tables_are_consistent() {
        check::<Verbosity>();
        check::<Bind>();
        check::<ThreadLevel>();
        check::<Datatype>();
        check::<Scope>();
        check::<PvarClass>();
        check::<CbSafety>();
        check::<SourceOrder>();
        check::<ErrorClass>();
        let mut seen = std::collections::BTreeSet::new();
        for f in FAMILIES {
            for r in f.rows {
                assert!(seen.insert(r.c_name), "{} twice", r.c_name);
                if let Some(p) = f.prefix {
                    assert!(r.c_name.starts_with(p), "{} lacks {p}", r.c_name);
                }
            }
        }
        assert_eq!(FAMILIES.len(), 9);
    }
}
