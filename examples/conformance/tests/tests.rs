//! mpit-conformance's integration tests, one test binary (linked once, not once per file): each
//! file of `tests/` a module. The MPI work runs in child processes (`mpit-conform` jobs, and
//! this binary re-run with `--exact` by `ordering.rs` and `quirks.rs`), one `MPI_Init` each.

mod cli;
mod conformance;
mod ordering;
mod quirks;
