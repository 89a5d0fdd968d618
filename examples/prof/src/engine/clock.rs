//! The engine's clock: the time stamp counter where it is invariant (calibrated against the
//! monotonic clock over the run), else the monotonic clock.

#![forbid(unsafe_code)]

use std::time::Instant;

use mpit_safe::raw;

pub(super) struct Clock {
    kind: ClockKind,
    /// [`Config::long_call_ns`](super::Config::long_call_ns) in ticks.
    pub(super) long_call: u64,
}

enum ClockKind {
    #[cfg(target_arch = "x86_64")]
    Tsc {
        t0: u64,
        i0: Instant,
    },
    Monotonic(Instant),
}

impl Clock {
    /// The clock, with `long_call_ns` in its ticks (Rust's `as` saturates: `f64::INFINITY` is
    /// `u64::MAX`, a negative or NaN value 0).
    pub(super) fn new(long_call_ns: f64) -> Clock {
        #[cfg(target_arch = "x86_64")]
        if invariant_tsc() {
            // A rough rate for the long-call threshold (the report calibrates over the run).
            let (i0, t0) = (Instant::now(), raw::tsc());
            while i0.elapsed().as_micros() < 200 {}
            let per_ns =
                raw::tsc().saturating_sub(t0) as f64 / i0.elapsed().as_nanos().max(1) as f64;
            return Clock {
                kind: ClockKind::Tsc {
                    t0: raw::tsc(),
                    i0: Instant::now(),
                },
                long_call: (long_call_ns * per_ns.max(0.1)) as u64,
            };
        }
        Clock {
            kind: ClockKind::Monotonic(Instant::now()),
            long_call: long_call_ns as u64,
        }
    }

    /// Whether the clock is the TSC (a read is one instruction, no call).
    #[inline(always)]
    pub(super) fn is_tsc(&self) -> bool {
        match &self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc { .. } => true,
            ClockKind::Monotonic(_) => false,
        }
    }

    pub(super) fn now(&self) -> u64 {
        match &self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc { .. } => raw::tsc(),
            ClockKind::Monotonic(i0) => i0.elapsed().as_nanos() as u64,
        }
    }

    pub(super) fn name(&self) -> &'static str {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc { .. } => "tsc",
            ClockKind::Monotonic(_) => "monotonic",
        }
    }

    /// Nanoseconds per tick (calibrated over the run for the TSC) and the run's duration.
    pub(super) fn calibrate(&self) -> (f64, u64) {
        match &self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc { t0, i0 } => {
                let ns = i0.elapsed().as_nanos() as u64;
                let ticks = raw::tsc().saturating_sub(*t0);
                (
                    if ticks == 0 {
                        1.0
                    } else {
                        ns as f64 / ticks as f64
                    },
                    ns,
                )
            }
            ClockKind::Monotonic(i0) => (1.0, i0.elapsed().as_nanos() as u64),
        }
    }
}

/// Whether the CPU says its TSC ticks at a constant rate through frequency and sleep states.
#[cfg(target_arch = "x86_64")]
pub(crate) fn invariant_tsc() -> bool {
    std::fs::read_to_string("/proc/cpuinfo")
        .map(|s| {
            let flags = s.lines().find(|l| l.starts_with("flags")).unwrap_or("");
            let has = |f: &str| flags.split_whitespace().any(|w| w == f);
            has("constant_tsc") && has("nonstop_tsc")
        })
        .unwrap_or(false)
}

/// Whether the CPU says its TSC ticks at a constant rate (no TSC off x86_64).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn invariant_tsc() -> bool {
    false
}
