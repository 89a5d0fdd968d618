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

/// Per-operation times of a raw and a safe side measured in alternating rounds (see
/// [`interleave`]).
#[derive(Debug, Clone, Copy)]
pub struct Interleaved {
    /// Median over rounds of the raw side's time per operation, in nanoseconds.
    pub raw_ns: f64,
    /// Median over rounds of the safe side's time per operation, in nanoseconds.
    pub safe_ns: f64,
    /// Median over rounds of the per-round ratio safe / raw.
    pub ratio: f64,
    /// Ratio of the fastest safe round to the fastest raw round.
    pub ratio_of_mins: f64,
}

/// The median of `v` (the upper one of an even count), sorting `v` in place.
///
/// # Panics
/// If `v` is empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `ops` operations of `raw` and of `safe` in `rounds` alternating rounds (the order
/// flips every round), so that load from other processes on a shared machine hits both sides
/// alike; each side returns the time its `ops` operations took (set-up excluded).
pub fn interleave(
    rounds: usize,
    ops: u64,
    mut raw: impl FnMut(u64) -> std::time::Duration,
    mut safe: impl FnMut(u64) -> std::time::Duration,
) -> Interleaved {
    let per_op = |d: std::time::Duration| d.as_secs_f64() * 1e9 / ops as f64;
    let (mut r, mut s, mut q) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds.max(1) {
        let (a, b) = if round % 2 == 0 {
            let a = per_op(raw(ops));
            (a, per_op(safe(ops)))
        } else {
            let b = per_op(safe(ops));
            (per_op(raw(ops)), b)
        };
        r.push(a);
        s.push(b);
        q.push(b / a);
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let ratio_of_mins = min(&s) / min(&r);
    Interleaved {
        raw_ns: median(&mut r),
        safe_ns: median(&mut s),
        ratio: median(&mut q),
        ratio_of_mins,
    }
}
