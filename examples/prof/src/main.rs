//! `mpit-prof`: the launcher (placeholder).
fn main() {}
