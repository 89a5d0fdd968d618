//! The MPIR Process Acquisition Interface (spec `002`): typed process descriptors, the process
//! table, debug states, and the starter and tool sides.
//!
//! This crate is a placeholder in the foundation; the MPIR issue fills it.
#![forbid(unsafe_code)]
