//! `mpit-list`: everything the installed MPI exposes through its tool information interface
//! (MPI_T), as a category tree, built only on the safe API of `mpit-safe`.
//!
//! Categories are nested by subcategory; each shows its control variables (with their current
//! value, scope, binding, datatype, verbosity and the environment variable that sets them,
//! see [`mod@env`]) and performance variables (with class, attributes and a current value).
//! Variables in no category come last, then the enumerations the listed variables use, then
//! the holes (indices below a count whose query failed), each with its error. Nothing the
//! implementation returns makes it panic: a failed query or read is printed as text.
//!
//! Unbound variables are read; when MPI is initialised (the default, also as a singleton
//! without `mpiexec`), variables bound to a communicator are read for `MPI_COMM_WORLD` (the
//! value says so: `(for MPI_COMM_WORLD)`, JSON `"object"`). Variables bound to other kinds of
//! object are listed unread.
//!
//! The tool reads a [`model::Listing`] ([`collect::collect`]) and renders it
//! ([`text::render`], [`json::render`]) through [`filter::Filters`] and the category tree of
//! [`tree::View`]; the renderings are pure functions of the listing, which `--model` prints
//! for the golden tests. `--diff A.json B.json` compares two `--json` listings ([`diff`])
//! without initialising MPI.
//!
//! By default MPI is initialised (rsmpi's `mpi::initialize()`, after the MPI_T token, so the
//! variables that appear with `MPI_Init` are listed); under `mpiexec -n N` only rank 0 prints.
//!
//! ```text
//! mpit-list [OPTIONS]
//! mpit-list --diff A.json B.json [--json]
//!
//!   --verbosity <LEVEL>   only variables of at most this verbosity (USER_BASIC .. MPIDEV_ALL,
//!                         or the C name MPI_T_VERBOSITY_...)
//!   --bind <KIND>         only variables bound to this kind of object (NO_OBJECT, MPI_COMM or
//!                         COMM, ...)
//!   --class <CLASS>       only performance variables of this class (COUNTER, TIMER, ...;
//!                         control variables are then not listed)
//!   --name <SUBSTRING>    only variables whose name contains SUBSTRING (ignoring ASCII case)
//!   --holes               list the holes even when a filter is set (by default any filter
//!                         excludes every hole: a hole has no name, verbosity, binding or class
//!                         to match; under --class only the pvar holes)
//!   --no-holes            never list the holes (their count stays in the summary)
//!   --descriptions        print descriptions in the text listing
//!   --json                one JSON document: implementation, version, cvars, pvars,
//!                         categories, enums, holes (schema: examples/schemas/mpit-list.schema.json)
//!   --model               the data model read from MPI_T, unfiltered, as JSON (the recorded
//!                         input of the golden tests)
//!   --no-init             list without calling MPI_Init
//!   --diff <A> <B>        compare two --json listings by name: added, removed and changed
//!                         entries, exit 0 whether or not they differ (with --json: schema
//!                         examples/schemas/mpit-list-diff.schema.json)
//! ```
//!
//! Examples: `mpit-list --verbosity USER_BASIC`, `mpit-list --class counter --json`,
//! `mpiexec -n 2 mpit-list --name btl`, `mpit-list --diff mpich.json openmpi.json`.
//!
//! Exit status: 0 when the listing (or the diff) was printed, also when some queries failed
//! (they are in the listing); 1 when MPI_T or MPI could not be initialised, a `--diff` input
//! cannot be read, or the output cannot be written; 2 on a usage error. Errors go to standard
//! error.

// rsmpi in the native build; its names over the ABI library in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;
pub mod collect;
pub mod diff;
pub mod env;
pub mod filter;
pub mod json;
pub mod model;
pub mod text;
pub mod tree;

use std::io::{self, Write as _};
use std::path::PathBuf;

use clap::Parser;
use mpi::traits::Communicator;
use mpit_safe::{Bind, Mpit, PvarClass, Verbosity};

use self::filter::{Filters, Holes, parse_bind, parse_class, parse_verbosity};

/// Exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "Exit status: 0 when the listing (or the diff) was printed, also when \
                           some queries failed (they are in the listing); 1 when MPI_T or MPI \
                           could not be initialised, a --diff input cannot be read, or the \
                           output cannot be written; 2 on a usage error. Errors go to standard \
                           error.";

/// Lists everything the installed MPI exposes through MPI_T, as a category tree.
///
/// Each cvar shows the environment variable that sets it where the implementation has a
/// convention (MPICH and Intel MPI: its own name, MPIR_CVAR_* or I_MPI_*; Open MPI:
/// `OMPI_MCA_<name>`); variables bound to a communicator are read for MPI_COMM_WORLD.
///
/// What is listed depends on when and how MPI was started, so counts differ between runs and
/// programs: implementations register variables in MPI_Init (MPICH its performance variables
/// only then; mpit-list calls MPI_Init unless --no-init, and a program that looks before
/// MPI_Init sees fewer), and Open MPI registers a component's variables only when it opens
/// the component: a process started alone (a singleton) opens fewer transports than one
/// started by mpiexec with several ranks, so btl_vader_eager_limit, for one, is listed only
/// under `mpiexec -n 2 mpit-list`. Counts include the holes (indices with no variable). mpit-counts
/// gives the counts before and after MPI_Init.
#[derive(Parser, Debug)]
#[command(name = "mpit-list", version, after_help = EXIT_STATUS)]
pub struct Args {
    /// Only variables of at most this verbosity (USER_BASIC .. MPIDEV_ALL).
    #[arg(long, value_name = "LEVEL", value_parser = parse_verbosity)]
    pub verbosity: Option<Verbosity>,
    /// Only variables bound to this kind of object (NO_OBJECT, MPI_COMM or COMM, ...).
    #[arg(long, value_name = "KIND", value_parser = parse_bind)]
    pub bind: Option<Bind>,
    /// Only performance variables of this class (STATE, LEVEL, SIZE, PERCENTAGE,
    /// HIGHWATERMARK, LOWWATERMARK, COUNTER, AGGREGATE, TIMER, GENERIC).
    #[arg(long, value_name = "CLASS", value_parser = parse_class)]
    pub class: Option<PvarClass>,
    /// Only variables whose name contains this (ignoring ASCII case).
    #[arg(long, value_name = "SUBSTRING")]
    pub name: Option<String>,
    /// List the holes (indices whose query failed) even when a filter is set; by default any
    /// filter excludes every hole, which has no name, verbosity, binding or class to match
    /// (under --class, only the pvar holes are listed).
    #[arg(long, conflicts_with = "no_holes")]
    pub holes: bool,
    /// Never list the holes (their count stays in the summary).
    #[arg(long)]
    pub no_holes: bool,
    /// Print descriptions in the text listing (JSON always has them).
    #[arg(long)]
    pub descriptions: bool,
    /// Print one JSON document instead of text (schema: examples/schemas/mpit-list.schema.json;
    /// with --diff: mpit-list-diff.schema.json).
    #[arg(long)]
    pub json: bool,
    /// Print the data model read from MPI_T (unfiltered, JSON): what the text and JSON
    /// renderings are computed from, recorded for the golden tests.
    #[arg(long, conflicts_with = "json")]
    pub model: bool,
    /// Do not call MPI_Init (variables that appear with it are then missing, and variables
    /// bound to a communicator are not read).
    #[arg(long)]
    pub no_init: bool,
    /// Compare two --json listings (two implementations, two versions) by name: the entries
    /// only one has, and the fields that differ (indices are not compared). MPI is not
    /// initialised; the exit status is 0 whether or not they differ.
    #[arg(
        long,
        num_args = 2,
        value_names = ["A.json", "B.json"],
        conflicts_with_all = [
            "verbosity", "bind", "class", "name", "holes", "no_holes", "descriptions", "model",
            "no_init",
        ]
    )]
    pub diff: Option<Vec<PathBuf>>,
}

impl Args {
    /// The filters the options set.
    pub fn filters(&self) -> Filters {
        Filters {
            verbosity: self.verbosity,
            bind: self.bind,
            class: self.class,
            name: self.name.clone(),
            holes: if self.holes {
                Holes::Always
            } else if self.no_holes {
                Holes::Never
            } else {
                Holes::UnlessFiltered
            },
        }
    }

    /// What the options ask for, rendered from `listing`.
    pub fn render(&self, listing: &model::Listing) -> String {
        if self.model {
            crate::serde_util::pretty_json(listing)
        } else if self.json {
            json::render(listing, &self.filters())
        } else {
            text::render(listing, &self.filters(), self.descriptions)
        }
    }
}

/// Whether a launcher says this process is not rank 0 (for `--no-init`, where MPI cannot say).
fn launcher_rank_nonzero() -> bool {
    ["PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"]
        .iter()
        .any(|k| std::env::var(k).is_ok_and(|r| r.trim() != "0"))
}

/// Writes the whole output; a closed pipe (`mpit-list | head`) is not an error.
fn emit(s: &str) -> Result<(), String> {
    let mut out = io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(format!("writing: {e}")),
        _ => Ok(()),
    }
}

/// The tool: with `--diff`, compares two listings; otherwise initialises MPI_T (and MPI unless
/// `--no-init`), and on rank 0 prints the listing.
pub fn run(args: &Args) -> Result<(), String> {
    if let Some([a, b]) = args.diff.as_deref() {
        let d = diff::diff_files(a, b)?;
        return emit(&if args.json { d.json() } else { d.text() });
    }
    // The MPI_T token first, then MPI_Init: variables that appear with MPI_Init are listed, and
    // the token is dropped (MPI_T_finalize) before the universe (MPI_Finalize).
    let mpit = Mpit::init().map_err(|e| format!("MPI_T_init_thread failed: {e}"))?;
    let universe = if args.no_init {
        None
    } else {
        Some(mpi::initialize().ok_or("MPI_Init: MPI was already initialised")?)
    };
    let rank0 = match &universe {
        Some(u) => u.world().rank() == 0,
        None => !launcher_rank_nonzero(),
    };
    let result = if rank0 {
        let world = universe.as_ref().map(|u| u.world());
        let listing = collect::collect(&mpit, world.as_ref());
        emit(&args.render(&listing))
    } else {
        Ok(())
    };
    drop(mpit);
    drop(universe);
    result
}
