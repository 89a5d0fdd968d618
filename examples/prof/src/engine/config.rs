//! The engine's configuration: when it samples ([`Mode`]), which variables ([`Filter`]), the
//! functions calls are reported against and the root region ([`Config`]).

#![forbid(unsafe_code)]

use std::fmt;
use std::str::FromStr;

use mpit_safe::{Error, PvarClass, PvarInfo, Result, Verbosity};

// Named in the documentation.
#[cfg(doc)]
use super::Profiler;
use super::calls::LONG_CALL_NS;

/// When performance variables are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// At region boundaries (and at start and finish); MPI calls are only counted and timed.
    #[default]
    Region,
    /// Also at the entry and exit of every MPI call (Caliper's mode): per-function metrics.
    Call,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Region => "region",
            Mode::Call => "call",
        })
    }
}

impl FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Mode> {
        match s {
            "region" => Ok(Mode::Region),
            "call" => Ok(Mode::Call),
            _ => Err(Error::invalid_value(format!(
                "profiling mode {s:?}: expected \"region\" or \"call\""
            ))),
        }
    }
}

/// A predicate on variable names (e.g. a regular expression's match).
pub type NameFilter = Box<dyn Fn(&str) -> bool>;

/// Which performance variables are profiled; by default all of them.
#[derive(Default)]
pub struct Filter {
    /// Keep a variable if this returns true for its name (e.g. a regular expression's match).
    pub name: Option<NameFilter>,
    /// Keep only these classes.
    pub classes: Option<Vec<PvarClass>>,
    /// Keep only variables at this verbosity or below (more basic, wider audience).
    pub max_verbosity: Option<Verbosity>,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter")
            .field("name", &self.name.as_ref().map(|_| "<fn>"))
            .field("classes", &self.classes)
            .field("max_verbosity", &self.max_verbosity)
            .finish()
    }
}

impl Filter {
    /// Why the filter drops `info`, if it does.
    pub(super) fn rejects(&self, info: &PvarInfo) -> Option<&'static str> {
        if let Some(f) = &self.name
            && !f(&info.name.to_string_lossy())
        {
            return Some("filtered out by name");
        }
        if let Some(c) = &self.classes
            && !c.contains(&info.class)
        {
            return Some("filtered out by class");
        }
        if let Some(v) = self.max_verbosity
            && info.verbosity > v
        {
            return Some("filtered out by verbosity");
        }
        None
    }
}

/// How to profile.
#[derive(Debug)]
pub struct Config {
    /// When variables are read.
    pub mode: Mode,
    /// Which variables.
    pub filter: Filter,
    /// Names of the MPI functions a caller reports calls of; a call is identified by its
    /// index here ([`Profiler::call_enter`]).
    pub functions: Vec<&'static str>,
    /// Name of the root region, open from [`Profiler::new`] to [`Profiler::finish`].
    pub root: String,
    /// Register for every event type and count its instances per region (MPI-4 events; no
    /// effect where the MPI lacks the event API).
    pub events: bool,
    /// With [`Config::events`]: keep up to this many event instances (with their source,
    /// timestamp and data) and dropped-event reports for a trace to drain
    /// ([`Profiler::trace_events`](crate::Profiler::trace_events)); 0: none.
    pub trace_events: usize,
    /// In [`Mode::Call`], the average duration in nanoseconds from which every call of a
    /// function is timed ([`LONG_CALL_NS`] by default; shorter calls are timed one in
    /// [`TIME_ONE_IN`](crate::TIME_ONE_IN) and take the sampled path). `f64::INFINITY`: no
    /// function is timed for its length, as on a network whose messages take longer than the
    /// default; 0, a negative value or NaN: every call is timed.
    pub long_call_ns: f64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mode: Mode::Region,
            filter: Filter::default(),
            functions: Vec::new(),
            root: "main".into(),
            events: false,
            trace_events: 0,
            long_call_ns: LONG_CALL_NS,
        }
    }
}
