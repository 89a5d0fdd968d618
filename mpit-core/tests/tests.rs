//! mpit-core's integration tests, one test binary (linked once, not once per file): each file
//! of `tests/` is a module of it. `fuzz_corpus.rs` is a binary of its own: the published
//! package leaves it out, since it compiles the fuzz crate's source, which is not published.

mod datatype;
mod event_model;
mod implementation;
mod info;
mod metrics;
mod mpi_str;
mod ordering;
mod pvar_class;
mod pvar_model;
mod string;
