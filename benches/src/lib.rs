//! Benchmarks of mpit-rs: every benchmark measures the raw C call and the safe API side by side
//! in one run and reports the ratio. The harnesses arrive with the issues that add the hot paths
//! (pvar read/readreset, start/stop, event dispatch); the foundation only builds the crate.

/// The mean point estimate criterion wrote for benchmark `id` (e.g. `"pvar_read/raw"`), in
/// nanoseconds, read back so a bench can print safe/raw ratios at the end of its own run.
pub fn criterion_mean_ns(id: &str) -> Option<f64> {
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let text = std::fs::read_to_string(format!("{dir}/criterion/{id}/new/estimates.json")).ok()?;
    let rest = &text[text.find("\"mean\"")?..];
    let pe = rest.find("\"point_estimate\":")? + "\"point_estimate\":".len();
    let num: String = rest[pe..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
        .collect();
    num.parse().ok()
}
