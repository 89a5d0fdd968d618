//! The tools of mpit-rs as a library: each binary in `src/bin/` is a thin `main` over one of
//! these modules, and each tool's output is a pure function of a data model that derives
//! `serde`'s traits, so that a model recorded from a real run can be replayed by the golden
//! tests (`tests/golden.rs`, fixtures in `tests/golden/`).
//!
//! | module | tool | model | rendering |
//! |---|---|---|---|
//! | [`list`] | `mpit-list` | [`list::model::Listing`]: every cvar, pvar, category, event type, source and hole read from MPI_T, before filtering | [`list::text`], [`list::json`], through [`list::filter`] and [`list::tree`]; [`list::diff`] compares two `--json` documents |
//! | [`mqd`] | `mqd-dump` | [`mqd::model::Dump`]: each process's communicators and queues (its `--json` document) | [`mqd::text`] |
//! | [`mpir`] | `mpir-attach` | [`mpir::model::Job`]: the process table, symbols, capabilities and launch record (its `--json` document) | [`mpir::text`] |
//! | [`counts`] | `mpit-counts` | [`counts::Report`]: the counts before and after `MPI_Init` (its `--json` document) | [`counts::Report::table`], [`counts::Report::kv`], [`counts::Report::json`] |
//!
//! `mpir-starter` keeps its logic in its binary: code calling `mpir_types::starter` links the
//! MPIR starter symbols into the executable, which the other tools must not carry.
//!
//! Every tool parses its command line with `clap` (`--help` and `-V` exit 0, a usage error
//! exits 2 with the error on standard error) and documents its exit statuses in `--help`; its
//! errors go to standard error. Each `--json` document has a JSON Schema (draft 2020-12) in
//! `examples/schemas/TOOL.schema.json` (`mpit-list`, `mpit-list-diff`, `mpit-counts`,
//! `mqd-dump`, `mpir-attach`, `mpit-conform`), against which the tests validate the recorded
//! and the live documents (`tests/schemas.rs` and each tool's test).
//!
//! `serde` lives here only: the library crates stay free of it, and the models convert from
//! their types.

pub mod counts;
pub mod list;
pub mod mpir;
pub mod mqd;

mod serde_util;
