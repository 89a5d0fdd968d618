//! Benchmarks of mpit-rs: every benchmark measures the raw C call and the safe API side by side
//! in one run and reports the ratio. The harnesses arrive with the issues that add the hot paths
//! (pvar read/readreset, start/stop, event dispatch); the foundation only builds the crate.

#[cfg(mpit_abi)]
pub mod abi_c;

/// The test event provider to preload: `MPIT_EVENT_PROVIDER` at run time (`scripts/with-mpi
/// abi:IMPL` builds one for an ABI library: an ABI build has no C compiler at build time),
/// else the one this crate's build script built (`None`: neither).
pub fn event_provider() -> Option<String> {
    std::env::var("MPIT_EVENT_PROVIDER")
        .ok()
        .filter(|p| !p.is_empty())
        .or_else(|| option_env!("MPIT_EVENT_PROVIDER").map(str::to_owned))
}

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

/// Operations per side and round for [`interleave`] so that one side's round lasts about
/// `round` (at least `min` operations): `raw` is timed on 1, 2, 4, ... operations until a run
/// takes a tenth of `round`, and `safe` is run as often once, so that both are warm.
///
/// A fixed count mixed two costs: 10 listings of Open MPI 4.1.4's 33 performance variables
/// take 9 µs, so each round of a side was mostly the first listing after the other side ran
/// (caches and branch predictors holding the other side's code). The visit read 1.82 × the C
/// loop so, against 1.37 by criterion's long warm runs, in the same process; a round of a
/// millisecond or more measures the steady cost of each side, as the reads' 200,000 calls do.
pub fn ops_for(
    round: std::time::Duration,
    min: u64,
    mut raw: impl FnMut(u64) -> std::time::Duration,
    mut safe: impl FnMut(u64) -> std::time::Duration,
) -> u64 {
    let mut ops = 1u64;
    let took = loop {
        let t = raw(ops);
        if t >= round / 10 || ops >= 1 << 30 {
            break t;
        }
        ops *= 2;
    };
    let per_op = took.as_secs_f64() / ops as f64;
    let ops = ((round.as_secs_f64() / per_op.max(1e-12)).ceil() as u64).max(min);
    let _ = safe(ops);
    ops
}

/// The environment variable naming the file `scripts/bench` collects its table from: every
/// bench appends one JSON object per measured operation ([`record`]).
pub const OUT_ENV: &str = "MPIT_BENCH_OUT";

/// One row of `scripts/bench`'s table: an operation measured through the raw C call and through
/// mpit-rs in the same run.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    /// The bench (`mpit`, `events`, `prof`).
    pub bench: &'a str,
    /// The operation (`cvar_read`, `pvar_visit_all`, `stream_tsc`, ...).
    pub op: &'a str,
    /// What `raw` and `safe` are in (`ns` per operation, `M events/s`, `s` per run).
    pub unit: &'a str,
    /// The raw C side.
    pub raw: f64,
    /// The mpit-rs side.
    pub safe: f64,
    /// mpit-rs's cost over C's (a time ratio: for rates, raw rate over safe rate), the median
    /// of per-round ratios where there are rounds.
    pub ratio: f64,
    /// The ratio of the fastest rounds, where there are rounds.
    pub ratio_of_mins: Option<f64>,
    /// Rounds measured (1 for a single measurement).
    pub rounds: usize,
    /// The largest ratio the project accepts for this operation, if it has one.
    pub target: Option<f64>,
    /// Anything else the reader needs (drops, sizes), short.
    pub note: &'a str,
}

/// Appends `row` to `$MPIT_BENCH_OUT` as one JSON line, tagged with the implementation (from
/// the loaded library) and `$MPIT_BENCH_IMPL` (the matrix key `scripts/bench` runs); does
/// nothing when the variable is unset. A failed write is reported on stderr, never fatal.
pub fn record(row: &Row<'_>) {
    let Some(path) = std::env::var_os(OUT_ENV) else {
        return;
    };
    let num = |v: f64| {
        if v.is_finite() {
            format!("{v}")
        } else {
            "null".into()
        }
    };
    let opt = |v: Option<f64>| v.map_or_else(|| "null".into(), num);
    let line = format!(
        "{{\"key\":{},\"implementation\":{},\"bench\":{},\"op\":{},\"unit\":{},\"raw\":{},\
         \"safe\":{},\"ratio\":{},\"ratio_of_mins\":{},\"rounds\":{},\"target\":{},\"note\":{}}}\n",
        json_str(&std::env::var("MPIT_BENCH_IMPL").unwrap_or_default()),
        json_str(&mpit_safe::implementation().to_string()),
        json_str(row.bench),
        json_str(row.op),
        json_str(row.unit),
        num(row.raw),
        num(row.safe),
        num(row.ratio),
        opt(row.ratio_of_mins),
        row.rounds,
        opt(row.target),
        json_str(row.note),
    );
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot append to {}: {e}", path.to_string_lossy());
    }
}

/// `s` as a JSON string.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The target of an operation of the `mpit` bench: reads at the C floor (≤ 1.02); the visits
/// (records borrowed, as C's fixed buffers) ≤ 1.10 × the C loop with fixed buffers, and the
/// owned listing ≤ 1.10 × a C loop that copies its strings out (`cvar_info_owned`). The owned
/// listings against fixed buffers (`*_info_all`) and `cvar_info_each` are shown without a
/// target: what owning records costs over borrowing them.
pub fn mpit_target(op: &str) -> Option<f64> {
    if op.ends_with("_read") {
        Some(1.02)
    } else if op.ends_with("_visit_all") || op == "cvar_info_owned" {
        Some(1.10)
    } else {
        None
    }
}
