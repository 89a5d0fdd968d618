//! mpit-sys's integration tests, one test binary (linked once, not once per file): each file of
//! `tests/` a module. Only `counts.rs` initialises MPI (once, as its C twin does).

mod abi_header;
mod build_errors;
mod constants;
mod counts;
