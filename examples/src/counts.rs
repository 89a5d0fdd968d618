//! `mpit-counts`: how many control variables, performance variables, categories, event types
//! and event sources the installed MPI exposes through MPI_T, before and after `MPI_Init`.
//!
//! It uses only the raw layer (`mpit-sys`), so every call is checked here by hand. [`collect`] reads a [`Report`], whose
//! renderings ([`Report::kv`], [`Report::table`]) are pure functions of it.
//!
//! ```text
//! mpit-counts [--kv | --json]
//!
//!   --kv     one line of `key=value` pairs, for scripts
//!   --json   one JSON document (schema: `examples/schemas/mpit-counts.schema.json`)
//! ```
//!
//! Exit status: 0 when the counts were read, 1 when an MPI call failed (the error on standard
//! error), 2 on a usage error.

use std::ffi::{CStr, c_char, c_int};
use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Parser;
use mpit_sys as sys;
use serde::Serialize;

/// Exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "Exit status: 0 when the counts were read, 1 when an MPI call \
                           failed (the error on standard error), 2 on a usage error.";

/// Prints how many control variables, performance variables, categories, event types and
/// event sources MPI_T exposes, before and after MPI_Init.
#[derive(Parser, Debug)]
#[command(name = "mpit-counts", version, after_help = EXIT_STATUS)]
pub struct Args {
    /// One line of `key=value` pairs, for scripts.
    #[arg(long, conflicts_with = "json")]
    pub kv: bool,
    /// One JSON document (schema: examples/schemas/mpit-counts.schema.json).
    #[arg(long)]
    pub json: bool,
}

/// Counts of one moment (`None`: the header has no event API).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// `MPI_T_cvar_get_num`.
    pub cvars: c_int,
    /// `MPI_T_pvar_get_num`.
    pub pvars: c_int,
    /// `MPI_T_category_get_num`.
    pub categories: c_int,
    /// `MPI_T_event_get_num`.
    pub events: Option<c_int>,
    /// `MPI_T_source_get_num`.
    pub sources: Option<c_int>,
}

/// What one run read: the header's implementation, the library's version, the counts before
/// and after `MPI_Init` (the `--json` document, with these keys).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The implementation the header names.
    pub implementation: String,
    /// Its version from the header.
    pub version: String,
    /// `MPI_Get_version`: (major, minor).
    pub mpi: (c_int, c_int),
    /// The first line of `MPI_Get_library_version`, whitespace collapsed (`?` if it failed).
    pub library: String,
    /// Whether the header has the MPI-4 event API.
    pub event_api: bool,
    /// After `MPI_T_init_thread`, before `MPI_Init`.
    pub before: Counts,
    /// After `MPI_Init`.
    pub after: Counts,
}

/// Turns an MPI return code into a `Result` naming the call.
fn check(what: &str, code: c_int) -> Result<(), String> {
    if code == sys::MPI_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} returned {code}"))
    }
}

/// Reads every count; MPI_T must be initialised.
fn counts() -> Result<Counts, String> {
    let mut c = Counts::default();
    // SAFETY: MPI_T is initialised by the caller; each out-pointer is a valid `c_int`.
    unsafe {
        check("MPI_T_cvar_get_num", sys::MPI_T_cvar_get_num(&mut c.cvars))?;
        check("MPI_T_pvar_get_num", sys::MPI_T_pvar_get_num(&mut c.pvars))?;
        check(
            "MPI_T_category_get_num",
            sys::MPI_T_category_get_num(&mut c.categories),
        )?;
    }
    #[cfg(mpit_events)]
    {
        let (mut e, mut s) = (0, 0);
        // SAFETY: as above.
        unsafe {
            check("MPI_T_event_get_num", sys::MPI_T_event_get_num(&mut e))?;
            check("MPI_T_source_get_num", sys::MPI_T_source_get_num(&mut s))?;
        }
        c.events = Some(e);
        c.sources = Some(s);
    }
    Ok(c)
}

fn library_version() -> String {
    let mut buf = vec![0 as c_char; 8192];
    let mut len = 0;
    // SAFETY: MPI_Get_library_version may be called at any time; the buffer is larger than
    // MPI_MAX_LIBRARY_VERSION_STRING of every implementation (MPICH: 8192, Open MPI: 256).
    let rc = unsafe { sys::MPI_Get_library_version(buf.as_mut_ptr(), &mut len) };
    if rc != sys::MPI_SUCCESS {
        return String::from("?");
    }
    // SAFETY: on success the buffer holds a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(buf.as_ptr()) };
    s.to_string_lossy()
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Initialises MPI_T and MPI, reads the counts before and after `MPI_Init`, finalises both.
pub fn collect() -> Result<Report, String> {
    // One MPI_T epoch spanning MPI_Init: the ordering every implementation here survives
    // (a full MPI_T_init/MPI_T_finalize cycle before MPI_Init crashes MPI_Init in MPICH 4.0.2
    // and Open MPI 5.0.11).
    let mut provided = 0;
    // SAFETY: MPI_T may be initialised before MPI_Init.
    check("MPI_T_init_thread", unsafe {
        sys::MPI_T_init_thread(sys::MPI_THREAD_SINGLE, &mut provided)
    })?;
    let before = counts()?;
    // SAFETY: called once, with null argc/argv as the standard allows.
    check("MPI_Init_thread", unsafe {
        sys::MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            sys::MPI_THREAD_SINGLE,
            &mut provided,
        )
    })?;
    let after = counts();
    // SAFETY: balances MPI_T_init_thread; MPI_T_finalize before MPI_Finalize (Open MPI 4.1
    // crashes the other way round).
    let fin = check("MPI_T_finalize", unsafe { sys::MPI_T_finalize() });
    let (mut major, mut minor) = (0, 0);
    // SAFETY: valid out-pointers; MPI is initialised.
    unsafe { sys::MPI_Get_version(&mut major, &mut minor) };
    let library = library_version();
    // SAFETY: MPI was initialised above and is finalised once.
    check("MPI_Finalize", unsafe { sys::MPI_Finalize() })?;
    let after = after?;
    fin?;
    Ok(Report {
        implementation: sys::IMPLEMENTATION.to_owned(),
        version: sys::IMPLEMENTATION_VERSION.to_owned(),
        mpi: (major, minor),
        library,
        event_api: sys::HAS_EVENTS,
        before,
        after,
    })
}

fn opt(v: Option<c_int>) -> String {
    v.map_or("n/a".to_owned(), |v| v.to_string())
}

impl Report {
    /// `--json`: the report as one pretty-printed JSON document, with a final newline.
    pub fn json(&self) -> String {
        crate::serde_util::pretty_json(self)
    }

    /// `--kv`: one line of `key=value` pairs.
    pub fn kv(&self) -> String {
        let (after, before) = (&self.after, &self.before);
        format!(
            "implementation={:?} version={} mpi={}.{} cvars={} pvars={} categories={} \
             events={} sources={} cvars_before_init={} pvars_before_init={} \
             categories_before_init={} events_api={}\n",
            self.implementation,
            self.version,
            self.mpi.0,
            self.mpi.1,
            after.cvars,
            after.pvars,
            after.categories,
            opt(after.events),
            opt(after.sources),
            before.cvars,
            before.pvars,
            before.categories,
            self.event_api,
        )
    }

    /// The table: a heading line, then each count before and after `MPI_Init`.
    pub fn table(&self) -> String {
        let (after, before) = (&self.after, &self.before);
        let mut s = format!(
            "{} {} (MPI {}.{}; {})\n",
            self.implementation, self.version, self.mpi.0, self.mpi.1, self.library
        );
        let _ = writeln!(s, "  {:<12} {:>14} {:>12}", "", "before Init", "after Init");
        let rows = [
            ("cvars", before.cvars.to_string(), after.cvars.to_string()),
            ("pvars", before.pvars.to_string(), after.pvars.to_string()),
            (
                "categories",
                before.categories.to_string(),
                after.categories.to_string(),
            ),
            ("events", opt(before.events), opt(after.events)),
            ("sources", opt(before.sources), opt(after.sources)),
        ];
        for (name, b, a) in rows {
            let _ = writeln!(s, "  {name:<12} {b:>14} {a:>12}");
        }
        if !self.event_api {
            s += "  (this MPI's header has no MPI-4 event API)\n";
        }
        s
    }
}

/// The tool: the table, or the form `args` select.
pub fn run(args: &Args) -> ExitCode {
    match collect() {
        Ok(r) => {
            let text = if args.json {
                r.json()
            } else if args.kv {
                r.kv()
            } else {
                r.table()
            };
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mpit-counts: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Counts, Report};

    /// Open MPI 4.1.4's counts as `scripts/test` reports them.
    fn report() -> Report {
        Report {
            implementation: "Open MPI".into(),
            version: "4.1.4".into(),
            mpi: (3, 1),
            library: "Open MPI v4.1.4, package: Debian OpenMPI".into(),
            event_api: false,
            before: Counts {
                cvars: 1243,
                pvars: 33,
                categories: 241,
                events: None,
                sources: None,
            },
            after: Counts {
                cvars: 1282,
                pvars: 33,
                categories: 252,
                events: None,
                sources: None,
            },
        }
    }

    #[test]
    fn the_table_and_the_kv_line() {
        assert_eq!(
            report().table(),
            "Open MPI 4.1.4 (MPI 3.1; Open MPI v4.1.4, package: Debian OpenMPI)
                  before Init   after Init
  cvars                  1243         1282
  pvars                    33           33
  categories              241          252
  events                  n/a          n/a
  sources                 n/a          n/a
  (this MPI's header has no MPI-4 event API)
"
        );
        assert_eq!(
            report().kv(),
            "implementation=\"Open MPI\" version=4.1.4 mpi=3.1 cvars=1282 pvars=33 \
             categories=252 events=n/a sources=n/a cvars_before_init=1243 pvars_before_init=33 \
             categories_before_init=241 events_api=false\n"
        );
    }
}
