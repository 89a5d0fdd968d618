//! `mpit-list`'s filters: `--verbosity`, `--bind`, `--class`, `--name`, and which holes are
//! listed (`--holes`, `--no-holes`).
//!
//! A hole (an index below a count whose query failed) has an index, a kind and an error, and
//! none of the properties the filters test (name, verbosity, binding, class): a filter keeps
//! what is known to match, so any filter excludes every hole unless `--holes` asks for them
//! (then the holes of the kinds the filters may show: every kind, or with `--class`, which
//! shows performance variables only, the pvar holes). `--no-holes` never lists them. Their
//! count stays in the listing's summary either way.

use mpit_safe::{Bind, PvarClass, Verbosity};

use super::model::{Cvar, Hole, Pvar, Variable};

/// Which holes a listing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Holes {
    /// Every hole when no filter is set, none when one is (the default).
    #[default]
    UnlessFiltered,
    /// `--holes`: the holes of the kinds the filters may show, even when filters are set.
    Always,
    /// `--no-holes`: none.
    Never,
}

impl Holes {
    /// The name the `--json` document gives it (`unless_filtered`, `always`, `never`).
    pub fn name(self) -> &'static str {
        match self {
            Holes::UnlessFiltered => "unless_filtered",
            Holes::Always => "always",
            Holes::Never => "never",
        }
    }
}

/// Which variables a listing shows (all of them when every field is `None`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    /// Only variables of at most this verbosity.
    pub verbosity: Option<Verbosity>,
    /// Only variables bound to this kind of object.
    pub bind: Option<Bind>,
    /// Only performance variables of this class (control variables are then not shown).
    pub class: Option<PvarClass>,
    /// Only variables whose name contains this, ignoring ASCII case.
    pub name: Option<String>,
    /// Which holes are listed.
    pub holes: Holes,
}

impl Filters {
    /// Whether any filter of variables is set (`holes` is not one).
    pub fn any(&self) -> bool {
        self.verbosity.is_some()
            || self.bind.is_some()
            || self.class.is_some()
            || self.name.is_some()
    }

    fn common(&self, v: &Variable) -> bool {
        self.verbosity.is_none_or(|max| v.verbosity <= max)
            && self.bind.is_none_or(|b| b == v.bind)
            && self.name.as_ref().is_none_or(|n| {
                v.name
                    .to_ascii_lowercase()
                    .contains(&n.to_ascii_lowercase())
            })
    }

    /// Whether the control variable `v` is shown.
    pub fn cvar_shown(&self, v: &Cvar) -> bool {
        self.class.is_none() && self.common(&v.var)
    }

    /// Whether the performance variable `v` is shown.
    pub fn pvar_shown(&self, v: &Pvar) -> bool {
        self.class.is_none_or(|c| c == v.class) && self.common(&v.var)
    }

    /// Whether the holes of `kind` (`cvar`, `pvar`, `category`, `event type`, `source`) are
    /// listed.
    pub fn hole_kind_shown(&self, kind: &str) -> bool {
        match self.holes {
            Holes::UnlessFiltered => !self.any(),
            Holes::Always => self.class.is_none() || kind == "pvar",
            Holes::Never => false,
        }
    }

    /// Whether the hole `h` is listed.
    pub fn hole_shown(&self, h: &Hole) -> bool {
        self.hole_kind_shown(&h.kind)
    }

    /// Why some holes are not listed, when some are not (for the text listing).
    pub fn holes_hidden_because(&self) -> &'static str {
        match self.holes {
            Holes::Never => "--no-holes",
            Holes::Always => "--class shows the pvar holes only",
            Holes::UnlessFiltered => {
                "a filter is set, and a hole has no name, verbosity, binding or class to match \
                 it; --holes lists them"
            }
        }
    }

    /// The filters set, in words (`verbosity <= USER_BASIC, name contains "btl"`).
    pub fn describe(&self) -> String {
        let mut f = Vec::new();
        if let Some(v) = self.verbosity {
            f.push(format!("verbosity <= {v}"));
        }
        if let Some(b) = self.bind {
            f.push(format!("bind {b}"));
        }
        if let Some(c) = self.class {
            f.push(format!("class {c} (performance variables only)"));
        }
        if let Some(n) = &self.name {
            f.push(format!("name contains {n:?}"));
        }
        f.join(", ")
    }
}

/// `--verbosity`: a level's name (`USER_BASIC`) or C name, with the levels in the error.
pub fn parse_verbosity(s: &str) -> Result<Verbosity, String> {
    s.parse::<Verbosity>().map_err(|e| {
        let names: Vec<_> = Verbosity::ALL_LEVELS.iter().map(|v| v.name()).collect();
        format!("{e} (expected one of {})", names.join(", "))
    })
}

/// `--bind`: a binding's name (`MPI_COMM`), C name, or name without `MPI_` (`COMM`).
pub fn parse_bind(s: &str) -> Result<Bind, String> {
    s.parse::<Bind>()
        .or_else(|_| format!("MPI_{}", s.trim()).parse::<Bind>())
        .map_err(|e| {
            let names: Vec<_> = Bind::ALL.iter().map(|b| b.name()).collect();
            format!("{e} (expected one of {})", names.join(", "))
        })
}

/// `--class`: a class's name (`COUNTER`) or C name.
pub fn parse_class(s: &str) -> Result<PvarClass, String> {
    s.parse::<PvarClass>().map_err(|e| {
        let names: Vec<_> = PvarClass::ALL.iter().map(|c| c.name()).collect();
        format!("{e} (expected one of {})", names.join(", "))
    })
}
