//! The profiler's settings, from the `MPIT_PROF_*` environment variables the launcher sets
//! (or the user does, with `LD_PRELOAD=libmpit_prof.so` by hand).

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::str::FromStr;

use mpit_safe::{PvarClass, Verbosity};
use regex::Regex;

use crate::{Filter, Mode};

/// `region` (default) or `call`.
pub(crate) const MODE: &str = "MPIT_PROF_MODE";
/// A regular expression on pvar names (`regex` syntax; unanchored: `^`/`$` to anchor).
pub(crate) const PVARS: &str = "MPIT_PROF_PVARS";
/// Comma-separated pvar classes (`counter,timer`; short or C names).
pub(crate) const CLASSES: &str = "MPIT_PROF_CLASSES";
/// The highest verbosity profiled (`user_basic` ... `mpidev_all`).
pub(crate) const VERBOSITY: &str = "MPIT_PROF_VERBOSITY";
/// The output directory (rank 0 writes it; default `mpit-prof-<UTC date>-<time>`).
pub(crate) const OUTPUT: &str = "MPIT_PROF_OUTPUT";
/// Non-empty and not `0`: progress lines on standard error.
pub(crate) const PROGRESS: &str = "MPIT_PROF_PROGRESS";
/// Non-empty and not `0`: register for every event type and count them per region.
pub(crate) const EVENTS: &str = "MPIT_PROF_EVENTS";
/// Non-empty and not `0`: write an OTF2 trace of the run to `<output>/trace/` (`--trace`).
pub(crate) const TRACE: &str = "MPIT_PROF_TRACE";
/// `RANK:N` (for testing the tool's own failure path): on rank RANK the tool panics in its
/// N-th full call entry, as an internal error would; that rank must continue unprofiled and
/// the other ranks' profiles still be written.
pub(crate) const TEST_PANIC: &str = "MPIT_PROF_TEST_PANIC";
/// `(rank, n)` of a [`TEST_PANIC`] value (`None`: absent or not `RANK:N` with `N` > 0).
pub(crate) fn test_panic(value: Option<String>) -> Option<(usize, u64)> {
    let v = value?;
    let (rank, n) = v.split_once(':')?;
    let n: u64 = n.trim().parse().ok().filter(|&n| n > 0)?;
    Some((rank.trim().parse().ok()?, n))
}
/// Set by the launcher to the pid of the program it starts (the launcher `exec`s it): that
/// process says so at exit if it never called `MPI_Init`.
pub(crate) const PID: &str = "MPIT_PROF_PID";
/// Set by the launcher when the program is a script (not an ELF file, e.g. a pyenv shim),
/// whose processes it cannot tell apart: a file that any process calling `MPI_Init` creates,
/// so that the launcher, which then waits for the script, can say whether one did.
pub(crate) const MARK: &str = "MPIT_PROF_MARK";

/// What the environment asks for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(crate) mode: Mode,
    pub(crate) pvars: Option<Regex>,
    pub(crate) classes: Option<Vec<PvarClass>>,
    pub(crate) verbosity: Option<Verbosity>,
    pub(crate) output: Option<PathBuf>,
    pub(crate) progress: bool,
    pub(crate) events: bool,
    pub(crate) trace: bool,
}

fn flag(value: Option<String>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

impl Settings {
    /// Reads the variables through `get`; what cannot be parsed is left at its default and
    /// described in the returned warnings.
    pub(crate) fn from_vars(get: impl Fn(&str) -> Option<String>) -> (Settings, Vec<String>) {
        let mut s = Settings::default();
        let mut warnings = Vec::new();
        if let Some(v) = get(MODE).filter(|v| !v.is_empty()) {
            match Mode::from_str(&v) {
                Ok(m) => s.mode = m,
                Err(e) => warnings.push(format!("{MODE}: {e}; using region")),
            }
        }
        if let Some(v) = get(PVARS).filter(|v| !v.is_empty()) {
            match Regex::new(&v) {
                Ok(r) => s.pvars = Some(r),
                Err(e) => warnings.push(format!(
                    "{PVARS}: {v:?} is not a regular expression ({e}); profiling every pvar"
                )),
            }
        }
        if let Some(v) = get(CLASSES).filter(|v| !v.is_empty()) {
            let mut classes = Vec::new();
            for c in v.split(',').map(str::trim).filter(|c| !c.is_empty()) {
                match PvarClass::from_str(c) {
                    Ok(c) => classes.push(c),
                    Err(e) => warnings.push(format!("{CLASSES}: {e}; ignored")),
                }
            }
            s.classes = Some(classes);
        }
        if let Some(v) = get(VERBOSITY).filter(|v| !v.is_empty()) {
            match Verbosity::from_str(&v) {
                Ok(l) => s.verbosity = Some(l),
                Err(e) => warnings.push(format!("{VERBOSITY}: {e}; profiling every verbosity")),
            }
        }
        s.output = get(OUTPUT).filter(|v| !v.is_empty()).map(PathBuf::from);
        s.progress = flag(get(PROGRESS));
        s.events = flag(get(EVENTS));
        s.trace = flag(get(TRACE));
        (s, warnings)
    }

    /// The engine's filter for these settings.
    pub(crate) fn filter(&self) -> Filter {
        Filter {
            name: self
                .pvars
                .clone()
                .map(|r| Box::new(move |name: &str| r.is_match(name)) as Box<dyn Fn(&str) -> bool>),
            classes: self.classes.clone(),
            max_verbosity: self.verbosity,
        }
    }
}

/// The default output directory: `mpit-prof-YYYYMMDD-HHMMSS` (UTC), in the working directory
/// of rank 0.
pub(crate) fn default_output() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    PathBuf::from(format!(
        "mpit-prof-{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    ))
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(kv: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            kv.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn parses_every_variable() {
        let (s, w) = Settings::from_vars(vars(&[
            (MODE, "call"),
            (PVARS, "^pml_monitoring"),
            (CLASSES, "counter, MPI_T_PVAR_CLASS_TIMER"),
            (VERBOSITY, "user_detail"),
            (OUTPUT, "out"),
            (PROGRESS, "1"),
            (EVENTS, "0"),
        ]));
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.mode, Mode::Call);
        assert!(
            s.pvars
                .as_ref()
                .unwrap()
                .is_match("pml_monitoring_messages_count")
        );
        assert_eq!(s.classes, Some(vec![PvarClass::Counter, PvarClass::Timer]));
        assert_eq!(
            s.verbosity,
            Some(Verbosity::from_str("USER_DETAIL").unwrap())
        );
        assert_eq!(s.output, Some(PathBuf::from("out")));
        assert!(s.progress);
        assert!(!s.events);
        let f = s.filter();
        assert!((f.name.unwrap())("pml_monitoring_messages_size"));
    }

    #[test]
    fn bad_values_warn_and_default() {
        let (s, w) = Settings::from_vars(vars(&[
            (MODE, "sometimes"),
            (PVARS, "(unclosed"),
            (CLASSES, "counter,bogus"),
            (VERBOSITY, "loud"),
        ]));
        assert_eq!(s.mode, Mode::Region);
        assert!(s.pvars.is_none());
        assert_eq!(s.classes, Some(vec![PvarClass::Counter]));
        assert!(s.verbosity.is_none());
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[1].starts_with(PVARS), "{w:?}");
    }

    /// `MPIT_PROF_TEST_PANIC` is `RANK:N` with `N` > 0; anything else asks for nothing.
    #[test]
    fn test_panic_values() {
        let v = |s: &str| test_panic(Some(s.into()));
        assert_eq!(v("1:3"), Some((1, 3)));
        assert_eq!(v(" 0 : 2 "), Some((0, 2)));
        for bad in ["", "1", "1:0", ":3", "x:3", "1:-2", "1:3:4"] {
            assert_eq!(v(bad), None, "{bad:?}");
        }
        assert_eq!(test_panic(None), None);
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        let d = default_output();
        assert!(d.to_string_lossy().starts_with("mpit-prof-20"), "{d:?}");
    }
}
