//! The Message Queue Display interface (spec `004`): `repr(C)` types of `msgq_interface.h`, the
//! debug DLL loader and the debugger callback tables.
//!
//! This crate is a placeholder in the foundation; the MQD issue fills it.
#![forbid(unsafe_code)]
