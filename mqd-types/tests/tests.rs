//! mqd-types' integration tests, one test binary (linked once, not once per file): each file
//! of `tests/` is a module of it; the tests that load Open MPI's DLL already shared a process
//! (the crate serialises its calls into the DLL). `fuzz_corpus.rs` is a binary of its own: the
//! published package leaves it out, since it compiles the fuzz crate's source, which is not
//! published.

mod common;

mod dll;
mod layout;
mod ob1;
