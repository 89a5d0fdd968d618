//! Verbosity levels of variables and event types (MPI-4.1 §16.3.1).
//!
//! The standard defines nine levels: three audiences (end users, performance
//! tuners, MPI implementors) times three levels of detail (basic, detailed,
//! all). The values of the C constants are monotonic in the order the standard
//! lists them, so [`Verbosity`] is totally ordered the same way: by audience
//! first, then by detail.

use core::fmt;
use core::str::FromStr;

use crate::constants::Row;
use crate::error::Error;

/// The intended audience of a variable (MPI-4.1 §16.3.1).
///
/// Ordered `User < Tuner < Mpidev`, as in the standard's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Audience {
    /// End users of MPI (`MPI_T_VERBOSITY_USER_*`).
    User,
    /// Performance tuners (`MPI_T_VERBOSITY_TUNER_*`).
    Tuner,
    /// MPI implementors (`MPI_T_VERBOSITY_MPIDEV_*`).
    Mpidev,
}

impl Audience {
    /// The three audiences in the standard's order.
    pub const ALL: [Audience; 3] = [Audience::User, Audience::Tuner, Audience::Mpidev];

    /// The audience's part of the C constant names (`USER`, `TUNER`, `MPIDEV`).
    pub const fn name(self) -> &'static str {
        match self {
            Audience::User => "USER",
            Audience::Tuner => "TUNER",
            Audience::Mpidev => "MPIDEV",
        }
    }
}

/// The relative level of detail within an audience (MPI-4.1 §16.3.1).
///
/// Ordered `Basic < Detail < All`, as in the standard's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Detail {
    /// Basic information (`MPI_T_VERBOSITY_*_BASIC`).
    Basic,
    /// Detailed information (`MPI_T_VERBOSITY_*_DETAIL`).
    Detail,
    /// All remaining information (`MPI_T_VERBOSITY_*_ALL`).
    All,
}

impl Detail {
    /// The three levels of detail in the standard's order.
    pub const ALL: [Detail; 3] = [Detail::Basic, Detail::Detail, Detail::All];

    /// The detail's part of the C constant names (`BASIC`, `DETAIL`, `ALL`).
    pub const fn name(self) -> &'static str {
        match self {
            Detail::Basic => "BASIC",
            Detail::Detail => "DETAIL",
            Detail::All => "ALL",
        }
    }
}

/// A verbosity level: audience times detail (MPI-4.1 §16.3.1).
///
/// The derived order is lexicographic on (audience, detail), which is the
/// order of the nine `MPI_T_VERBOSITY_*` constants in the standard:
/// `USER_BASIC < USER_DETAIL < ... < MPIDEV_ALL`.
///
/// ```
/// use mpit_core::{Audience, Detail, Verbosity};
///
/// let v = Verbosity::TUNER_DETAIL;
/// assert_eq!(v.audience(), Audience::Tuner);
/// assert_eq!(v.detail(), Detail::Detail);
/// assert!(Verbosity::USER_ALL < v && v < Verbosity::MPIDEV_BASIC);
/// assert_eq!(v.position(), 4);
/// assert_eq!(v.to_string(), "TUNER_DETAIL");
/// assert_eq!("MPI_T_VERBOSITY_TUNER_DETAIL".parse::<Verbosity>().unwrap(), v);
/// ```
#[doc(alias = "MPI_T_VERBOSITY")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Verbosity {
    // Field order matters: the derived Ord compares audience first.
    audience: Audience,
    detail: Detail,
}

impl Verbosity {
    /// Basic information of interest to users.
    #[doc(alias = "MPI_T_VERBOSITY_USER_BASIC")]
    pub const USER_BASIC: Verbosity = Verbosity::new(Audience::User, Detail::Basic);
    /// Detailed information of interest to users.
    #[doc(alias = "MPI_T_VERBOSITY_USER_DETAIL")]
    pub const USER_DETAIL: Verbosity = Verbosity::new(Audience::User, Detail::Detail);
    /// All remaining information of interest to users.
    #[doc(alias = "MPI_T_VERBOSITY_USER_ALL")]
    pub const USER_ALL: Verbosity = Verbosity::new(Audience::User, Detail::All);
    /// Basic information required for tuning.
    #[doc(alias = "MPI_T_VERBOSITY_TUNER_BASIC")]
    pub const TUNER_BASIC: Verbosity = Verbosity::new(Audience::Tuner, Detail::Basic);
    /// Detailed information required for tuning.
    #[doc(alias = "MPI_T_VERBOSITY_TUNER_DETAIL")]
    pub const TUNER_DETAIL: Verbosity = Verbosity::new(Audience::Tuner, Detail::Detail);
    /// All remaining information required for tuning.
    #[doc(alias = "MPI_T_VERBOSITY_TUNER_ALL")]
    pub const TUNER_ALL: Verbosity = Verbosity::new(Audience::Tuner, Detail::All);
    /// Basic information for MPI implementors.
    #[doc(alias = "MPI_T_VERBOSITY_MPIDEV_BASIC")]
    pub const MPIDEV_BASIC: Verbosity = Verbosity::new(Audience::Mpidev, Detail::Basic);
    /// Detailed information for MPI implementors.
    #[doc(alias = "MPI_T_VERBOSITY_MPIDEV_DETAIL")]
    pub const MPIDEV_DETAIL: Verbosity = Verbosity::new(Audience::Mpidev, Detail::Detail);
    /// All remaining information for MPI implementors.
    #[doc(alias = "MPI_T_VERBOSITY_MPIDEV_ALL")]
    pub const MPIDEV_ALL: Verbosity = Verbosity::new(Audience::Mpidev, Detail::All);

    /// The nine levels in the standard's (ascending) order.
    pub const ALL_LEVELS: [Verbosity; 9] = [
        Verbosity::USER_BASIC,
        Verbosity::USER_DETAIL,
        Verbosity::USER_ALL,
        Verbosity::TUNER_BASIC,
        Verbosity::TUNER_DETAIL,
        Verbosity::TUNER_ALL,
        Verbosity::MPIDEV_BASIC,
        Verbosity::MPIDEV_DETAIL,
        Verbosity::MPIDEV_ALL,
    ];

    /// The level for an audience and a level of detail.
    pub const fn new(audience: Audience, detail: Detail) -> Verbosity {
        Verbosity { audience, detail }
    }

    /// The intended audience.
    pub const fn audience(self) -> Audience {
        self.audience
    }

    /// The level of detail within the audience.
    pub const fn detail(self) -> Detail {
        self.detail
    }

    /// The 0-based position in the standard's list (`USER_BASIC` is 0,
    /// `MPIDEV_ALL` is 8). Not the C value: implementations number the
    /// constants differently.
    pub const fn position(self) -> usize {
        self.audience as usize * 3 + self.detail as usize
    }

    /// The level at `position` in the standard's list, if `position < 9`.
    pub const fn from_position(position: usize) -> Option<Verbosity> {
        if position < 9 {
            Some(Verbosity::ALL_LEVELS[position])
        } else {
            None
        }
    }

    /// The name of the C constant, e.g. `MPI_T_VERBOSITY_USER_BASIC`.
    pub const fn c_name(self) -> &'static str {
        TABLE[self.position()].c_name
    }

    /// The C name without the `MPI_T_VERBOSITY_` prefix, e.g. `USER_BASIC`.
    pub fn name(self) -> &'static str {
        let c = self.c_name();
        c.strip_prefix("MPI_T_VERBOSITY_").unwrap_or(c)
    }
}

/// The family's table (see [`crate::constants`]), in the standard's order.
pub(crate) const TABLE: &[Row] = &[
    Row {
        c_name: "MPI_T_VERBOSITY_USER_BASIC",
        since: None,
    },
    Row {
        c_name: "MPI_T_VERBOSITY_USER_DETAIL",
        since: None,
    },
    Row {
        c_name: "MPI_T_VERBOSITY_USER_ALL",
        since: None,
    },
    Row {
        c_name: "MPI_T_VERBOSITY_TUNER_BASIC",
        since: None,
    },
    Row {
        c_name: "MPI_T_VERBOSITY_TUNER_DETAIL",
        since: None,
    },
    Row {
        c_name: "MPI_T_VERBOSITY_TUNER_ALL",
        since: None,
    },
    Row {
        c_name: "MPI_T_VERBOSITY_MPIDEV_BASIC",
        since: None,
    },
    Row {
        c_name: "MPI_T_VERBOSITY_MPIDEV_DETAIL",
        since: None,
    },
    Row {
        c_name: "MPI_T_VERBOSITY_MPIDEV_ALL",
        since: None,
    },
];

impl fmt::Display for Verbosity {
    /// Prints the short name, e.g. `USER_BASIC`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Verbosity {
    type Err = Error;

    /// Parses `USER_BASIC` or `MPI_T_VERBOSITY_USER_BASIC`, ignoring ASCII case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Verbosity::ALL_LEVELS
            .iter()
            .copied()
            .find(|v| v.name().eq_ignore_ascii_case(s) || v.c_name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::parse("verbosity", s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_positions() {
        for (i, v) in Verbosity::ALL_LEVELS.iter().enumerate() {
            assert_eq!(v.position(), i);
            assert_eq!(
                v.name(),
                format!("{}_{}", v.audience().name(), v.detail().name())
            );
        }
        assert_eq!(Verbosity::from_position(9), None);
    }
}
