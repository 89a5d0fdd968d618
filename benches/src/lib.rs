//! Benchmarks of mpit-rs: every benchmark measures the raw C call and the safe API side by side
//! in one run and reports the ratio. The harnesses arrive with the issues that add the hot paths
//! (pvar read/readreset, start/stop, event dispatch); the foundation only builds the crate.
