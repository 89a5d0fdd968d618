//! `mpit-list`: everything the installed MPI exposes through its tool information interface
//! (MPI_T), as a category tree, built only on the safe API of `mpit-safe`.
//!
//! Categories are nested by subcategory; each shows its control variables (with their current
//! value, scope, binding, datatype and verbosity) and performance variables (with class,
//! attributes and, for unbound ones, a current value). Variables in no category come last,
//! then the enumerations the listed variables use, then the holes (indices below a count whose
//! query failed), each with its error. Nothing the implementation returns makes it panic: a
//! failed query or read is printed as text.
//!
//! The tool reads a [`model::Listing`] ([`collect::collect`]) and renders it
//! ([`text::render`], [`json::render`]) through [`filter::Filters`] and the category tree of
//! [`tree::View`]; the renderings are pure functions of the listing, which `--model` prints
//! for the golden tests.
//!
//! By default MPI is initialised (rsmpi's `mpi::initialize()`, after the MPI_T token, so the
//! variables that appear with `MPI_Init` are listed); under `mpiexec -n N` only rank 0 prints.
//!
//! ```text
//! mpit-list [OPTIONS]
//!
//!   --verbosity <LEVEL>   only variables of at most this verbosity (USER_BASIC .. MPIDEV_ALL,
//!                         or the C name MPI_T_VERBOSITY_...)
//!   --bind <KIND>         only variables bound to this kind of object (NO_OBJECT, MPI_COMM or
//!                         COMM, ...)
//!   --class <CLASS>       only performance variables of this class (COUNTER, TIMER, ...;
//!                         control variables are then not listed)
//!   --name <SUBSTRING>    only variables whose name contains SUBSTRING (ignoring ASCII case)
//!   --descriptions        print descriptions in the text listing
//!   --json                one JSON document: implementation, version, cvars, pvars,
//!                         categories, enums, holes
//!   --model               the data model read from MPI_T, unfiltered, as JSON (the recorded
//!                         input of the golden tests)
//!   --no-init             list without calling MPI_Init
//! ```
//!
//! Examples: `mpit-list --verbosity USER_BASIC`, `mpit-list --class counter --json`,
//! `mpiexec -n 2 mpit-list --name btl`.

pub mod collect;
pub mod filter;
pub mod json;
pub mod model;
pub mod text;
pub mod tree;

use std::io::{self, Write as _};

use clap::Parser;
use mpi::traits::Communicator;
use mpit_safe::{Bind, Mpit, PvarClass, Verbosity};

use self::filter::{Filters, parse_bind, parse_class, parse_verbosity};

/// Lists everything the installed MPI exposes through MPI_T, as a category tree.
#[derive(Parser, Debug)]
#[command(name = "mpit-list", version)]
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
    /// Print descriptions in the text listing (JSON always has them).
    #[arg(long)]
    pub descriptions: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print the data model read from MPI_T (unfiltered, JSON): what the text and JSON
    /// renderings are computed from, recorded for the golden tests.
    #[arg(long, conflicts_with = "json")]
    pub model: bool,
    /// Do not call MPI_Init (variables that appear with it are then missing).
    #[arg(long)]
    pub no_init: bool,
}

impl Args {
    /// The filters the options set.
    pub fn filters(&self) -> Filters {
        Filters {
            verbosity: self.verbosity,
            bind: self.bind,
            class: self.class,
            name: self.name.clone(),
        }
    }

    /// What the options ask for, rendered from `listing`.
    pub fn render(&self, listing: &model::Listing) -> String {
        if self.model {
            let mut s = serde_json::to_string_pretty(listing)
                .unwrap_or_else(|e| format!("{{\"errors\": [{:?}]}}", e.to_string()));
            s.push('\n');
            s
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

/// The tool: initialises MPI_T (and MPI unless `--no-init`), and on rank 0 prints the listing.
pub fn run(args: &Args) -> Result<(), String> {
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
        let listing = collect::collect(&mpit, universe.is_some());
        emit(&args.render(&listing))
    } else {
        Ok(())
    };
    drop(mpit);
    drop(universe);
    result
}
