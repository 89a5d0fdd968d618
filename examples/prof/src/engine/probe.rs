//! The sampling loop's probes: a handle and what a sample of it needs, how its bytes decode
//! ([`Lane`], [`Decode`]) and which derived metric its class takes ([`Kind`]), and the sums of
//! several elements ([`read_sum`], [`Wide`]).

#![forbid(unsafe_code)]

use mpit_safe::level::Level;
use mpit_safe::raw::{PvarHandle, WordPvarHandle};
use mpit_safe::{Bind, Datatype, DerivedMetric, PvarClass, Result, Scalar};

use super::multi::SMALL_BYTES;
use super::report::Metric;
use super::sampling::{Case, PENDING};
use super::words::{huge, to_top};
// Named in the documentation.
#[cfg(doc)]
use super::State;

/// How a handle's elements are read: the Rust type of the variable's datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(super) enum Lane {
    I32,
    U32,
    I64,
    U64,
    F64,
    U8,
    I16,
}

impl Lane {
    /// Bytes of one element.
    #[inline(always)]
    pub(super) fn size(self) -> usize {
        match self {
            Lane::U8 => 1,
            Lane::I16 => 2,
            Lane::I32 | Lane::U32 => 4,
            Lane::I64 | Lane::U64 | Lane::F64 => 8,
        }
    }

    pub(super) fn of(dt: Datatype) -> Option<Lane> {
        [
            (i32::accepts(dt), Lane::I32),
            (u32::accepts(dt), Lane::U32),
            (i64::accepts(dt), Lane::I64),
            (u64::accepts(dt), Lane::U64),
            (f64::accepts(dt), Lane::F64),
            (u8::accepts(dt), Lane::U8),
            (i16::accepts(dt), Lane::I16),
        ]
        .into_iter()
        .find_map(|(ok, l)| ok.then_some(l))
    }
}

/// Scratch buffers, one per lane, as long as the longest handle.
#[derive(Default)]
pub(super) struct Scratch {
    i32: Vec<i32>,
    u32: Vec<u32>,
    i64: Vec<i64>,
    u64: Vec<u64>,
    f64: Vec<f64>,
    u8: Vec<u8>,
    i16: Vec<i16>,
}

impl Scratch {
    pub(super) fn grow(&mut self, n: usize) {
        fn g<T: Default + Clone>(v: &mut Vec<T>, n: usize) {
            if v.len() < n {
                v.resize(n, T::default());
            }
        }
        g(&mut self.i32, n);
        g(&mut self.u32, n);
        g(&mut self.i64, n);
        g(&mut self.u64, n);
        g(&mut self.f64, n);
        g(&mut self.u8, n);
        g(&mut self.i16, n);
    }
}

/// How a sample updates a variable's metric: its derived metric, with a watermark's
/// direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(super) enum Kind {
    /// Counters, timers, aggregates: [`Metric::Delta`].
    Delta,
    /// High watermarks: [`Metric::Watermark`], moving up.
    Up,
    /// Low watermarks: [`Metric::Watermark`], moving down.
    Down,
    /// Levels, sizes, percentages: [`Metric::Samples`].
    Samples,
    /// States, generic: [`Metric::Raw`].
    Raw,
}

impl Kind {
    /// The accumulators of a metric of this kind in a node's `acc`, in order:
    /// - delta: sum;
    /// - watermark: changes, amount, whether a value was seen, the last value;
    /// - samples: count, min, max, sum;
    /// - raw: whether a value was seen, the last value.
    pub(super) fn zero(self) -> &'static [f64] {
        match self {
            Kind::Delta => &[0.0],
            Kind::Up | Kind::Down => &[0.0; 4],
            Kind::Samples => &[0.0, f64::INFINITY, f64::NEG_INFINITY, 0.0],
            Kind::Raw => &[0.0; 2],
        }
    }

    /// The metric from the accumulators `a` (of [`Kind::zero`]'s length).
    pub(super) fn metric(self, a: &[f64]) -> Metric {
        let at = |i: usize| a.get(i).copied().unwrap_or(0.0);
        let seen = |i: usize| (at(i) != 0.0).then(|| at(i + 1));
        match self {
            Kind::Delta => Metric::Delta { sum: at(0) },
            Kind::Up | Kind::Down => Metric::Watermark {
                changes: at(0) as u64,
                amount: at(1),
                last: seen(2),
            },
            Kind::Samples => Metric::Samples {
                count: at(0) as u64,
                min: at(1),
                max: at(2),
                sum: at(3),
            },
            Kind::Raw => Metric::Raw { last: seen(0) },
        }
    }

    pub(super) fn of(class: PvarClass) -> Kind {
        match class.derived_metric() {
            DerivedMetric::Delta => Kind::Delta,
            DerivedMetric::WatermarkChange if class == PvarClass::LowWatermark => Kind::Down,
            DerivedMetric::WatermarkChange => Kind::Up,
            DerivedMetric::Sampled => Kind::Samples,
            DerivedMetric::Raw => Kind::Raw,
        }
    }
}

/// How the sampling loop turns the 8 bytes it reads a one-element handle into (zeroed first;
/// MPI writes the variable's bytes at the start) into an `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Decode {
    Unsigned,
    Signed,
    Float,
    /// Unsigned of 64 bits: the 8 bytes as they are, no shift.
    Word,
}

impl Decode {
    /// The decoding of `lane`, and the shift that moves a value of its width from the buffer's
    /// start to the top of 64 bits (and back).
    pub(super) fn of(lane: Lane) -> (Decode, u8) {
        match lane {
            Lane::U8 => (Decode::Unsigned, 56),
            Lane::U32 => (Decode::Unsigned, 32),
            Lane::U64 => (Decode::Word, 0),
            Lane::I16 => (Decode::Signed, 48),
            Lane::I32 => (Decode::Signed, 32),
            Lane::I64 => (Decode::Signed, 0),
            Lane::F64 => (Decode::Float, 0),
        }
    }

    /// The value of the 8 bytes `buf` (as read, native order) for a variable whose width
    /// leaves `shift` bits of 64 unused. One read type for every variable keeps the sampling
    /// one loop, with no dispatch on the datatype around the read.
    #[inline(always)]
    pub(super) fn value(self, buf: [u8; 8], shift: u8) -> f64 {
        let top = to_top(buf, shift);
        let shift = u32::from(shift);
        match self {
            // As a signed integer where it fits (all but 64-bit values of 2⁶³ or more): one
            // instruction where a `u64` takes six.
            Decode::Unsigned | Decode::Word => match i64::try_from(top >> shift) {
                Ok(x) => x as f64,
                Err(_) => huge(top >> shift),
            },
            Decode::Signed => ((top as i64) >> shift) as f64,
            Decode::Float => f64::from_bits(u64::from_ne_bytes(buf)),
        }
    }
}

/// A handle as the sampling loop sees it: the handle and what a sample of it needs, 72 bytes,
/// walked contiguously (the handle's other state is in its [`Slot`], at the same index). `H`:
/// a [`WordPvarHandle`] for the variables of at most 8 bytes ([`State::words`]: one element,
/// or several integers in one word, [`Case::lanes`]), read with no size check, or any handle
/// ([`State::probes`]).
pub(super) struct Probe<H> {
    pub(super) handle: H,
    /// The previous value of a counter, timer, aggregate or watermark: deltas and moves are
    /// measured from it. NaN before a watermark's first value.
    pub(super) last: f64,
    /// The previous value of a one-element unsigned counter, timer or aggregate, whose
    /// deltas are taken in integers (`last` unused); of any other counter, timer or aggregate,
    /// the bits of its previous read (of its sum, for several elements): a read of the same
    /// bits is skipped, it would add nothing. Of a state or generic variable of several
    /// elements, the bits of its last sum (a read of the same bytes is not summed again).
    /// Of several elements in one word ([`Case::lanes`]): their bytes.
    pub(super) prev: u64,
    /// Index of the variable's column.
    pub(super) column: u32,
    /// Offset of the column's accumulators in each node's `acc`.
    pub(super) at: u32,
    /// Elements; those of more than one are read through the scratch buffers, out of line.
    pub(super) count: u32,
    /// Reads that failed.
    pub(super) failures: u32,
    pub(super) lane: Lane,
    pub(super) kind: Kind,
    /// The sampling loop's case of a one-element probe: its decoding ([`Decode::of`]) and
    /// kind.
    pub(super) case: Case,
    /// Bits of 64 the variable's width leaves unused ([`Decode::of`]).
    pub(super) shift: u8,
}

/// A probe of a variable of at most 8 bytes ([`State::words`]).
pub(super) type WordProbe<'s, L> = Probe<WordPvarHandle<'s, L>>;

/// A probe of any other variable ([`State::probes`]).
pub(super) type AnyProbe<'s, L> = Probe<MultiHandle<'s, L>>;

/// The handle of a probe of several elements, with the buffers of its reads.
pub(super) struct MultiHandle<'s, L: Level> {
    pub(super) handle: PvarHandle<'s, L>,
    /// Of a counter, timer, aggregate, state, size or generic variable of [`SMALL_BYTES`] at
    /// most: the bytes of its previous read, compared before the elements are summed (most
    /// reads equal the one before), and its read buffer. `None` for the rest. Here, not in
    /// the [`Slot`]: the sampling loop then walks one list, not two (a second iterator kept
    /// on the stack cost ~8 instructions a probe and sample).
    pub(super) seen: Option<Box<SeenBytes>>,
}

/// A handle as [`read_sum`] reads it: a bare one, or the one inside a [`Probe`].
pub(super) trait Held {
    /// `MPI_T_pvar_read` into `buf` (checked against the variable's bytes).
    fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()>;
}

impl<L: Level> Held for PvarHandle<'_, L> {
    #[inline(always)]
    fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()> {
        PvarHandle::read(self, buf)
    }
}

impl<L: Level> Held for MultiHandle<'_, L> {
    #[inline(always)]
    fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()> {
        self.handle.read(buf)
    }
}

impl<L: Level> Held for WordPvarHandle<'_, L> {
    #[inline(always)]
    fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()> {
        WordPvarHandle::read(self, buf)
    }
}

/// The bytes of a probe's previous read ([`MultiHandle::seen`]), and the buffer it is read into.
pub(super) struct SeenBytes {
    pub(super) bytes: [u8; SMALL_BYTES],
    /// What the reads write into, one per block of [`State::reads`] (a read made now uses
    /// the first; a sample waiting for its attribution, its block's): MPI writes the
    /// variable's bytes, fewer than these or as many, so the rest stay zero, as zeroed once
    /// here; nothing to clear before a read.
    pub(super) fresh: [[u8; SMALL_BYTES]; PENDING],
    /// Whether the read into each of `fresh` of a sample waiting for its attribution
    /// succeeded (a failure is counted when it happens, the probe left out of that sample).
    pub(super) fresh_ok: [bool; PENDING],
    /// Whether `bytes` holds a read yet.
    pub(super) valid: bool,
}

/// The rest of a handle's state, off the sampling loop's path.
pub(super) struct Slot {
    /// The object it is bound to ((kind, bits); `None` for unbound) and its label.
    pub(super) object: Option<(Bind, u64)>,
    pub(super) label: Box<str>,
    /// Per-element values at allocation (handles of several elements).
    pub(super) first: Vec<f64>,
}

/// A sum of a handle's elements as an `f64`.
pub(super) trait Wide: Default {
    fn wide(self) -> f64;
}

impl Wide for i128 {
    /// As a signed 64-bit integer where it fits (one instruction; a 128-bit one is a call).
    #[inline(always)]
    fn wide(self) -> f64 {
        match i64::try_from(self) {
            Ok(x) => x as f64,
            Err(_) => wide_slow(self),
        }
    }
}

impl Wide for u128 {
    #[inline(always)]
    fn wide(self) -> f64 {
        // Sums of at most 2³² elements of 64 bits: below 2⁹⁶.
        (self as i128).wide()
    }
}

impl Wide for i64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
}

impl Wide for u64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        // Sums of the narrow lanes of `lane_sum`: far below 2⁶³.
        match i64::try_from(self) {
            Ok(x) => x as f64,
            Err(_) => self as f64,
        }
    }
}

impl Wide for f64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

/// [`Wide::wide`] of a sum of 2⁶³ or more (never seen).
#[cold]
#[inline(never)]
fn wide_slow(x: i128) -> f64 {
    x as f64
}

/// `$m!(T, Acc)` for lane `$lane`: its Rust type (also the name of its scratch buffer) and the
/// type its elements are summed in (integers as integers, wide enough for any count of them).
macro_rules! per_lane {
    ($lane:expr, $m:ident) => {
        match $lane {
            Lane::I32 => $m!(i32, i128),
            Lane::U32 => $m!(u32, u128),
            Lane::I64 => $m!(i64, i128),
            Lane::U64 => $m!(u64, u128),
            Lane::F64 => $m!(f64, f64),
            Lane::U8 => $m!(u8, u128),
            Lane::I16 => $m!(i16, i128),
        }
    };
}

/// Reads a handle's elements through the scratch buffer of its lane: the sum, and the elements
/// into `out` when given. Out of line: the sampling loop then keeps no scratch buffer in
/// registers for the one-element handles, most of them.
#[inline(never)]
pub(super) fn read_sum<H: Held>(
    h: &H,
    lane: Lane,
    n: usize,
    s: &mut Scratch,
    mut out: Option<&mut Vec<f64>>,
) -> Result<f64> {
    macro_rules! lane {
        ($buf:ident, $acc:ty) => {{
            // A buffer shorter than `n` (never: scratch grows with the handles) is refused
            // by the read, not sliced: the sampling loop never panics.
            let all = &mut s.$buf;
            let buf = if all.len() >= n {
                &mut all[..n]
            } else {
                &mut all[..]
            };
            h.read(buf)?;
            if let Some(o) = out.as_deref_mut() {
                o.extend(buf.iter().map(|&x| x as f64));
            }
            // Integers summed as integers (wide enough for any count of them), converted once.
            Ok(Wide::wide(
                buf.iter()
                    .fold(<$acc>::default(), |sum, &x| sum + <$acc>::from(x)),
            ))
        }};
    }
    per_lane!(lane, lane)
}

#[cold]
#[inline(never)]
pub(super) fn read_failed<H>(p: &mut Probe<H>) {
    p.failures = p.failures.saturating_add(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sampling loop walks the probes contiguously: a probe must not grow past the
    /// bytes the loop was measured with (what only some probes need goes in the [`Slot`]): 72
    /// for a one-element probe, 80 for another (its seen buffer's pointer: one list walked,
    /// not two, callgrind on mpich-ev's six 8-element counters −82 instructions a call).
    #[test]
    fn a_probe_stays_small() {
        assert!(
            std::mem::size_of::<AnyProbe<'static, mpit_safe::level::Multiple>>() <= 80,
            "{} bytes",
            std::mem::size_of::<AnyProbe<'static, mpit_safe::level::Multiple>>()
        );
        assert!(
            std::mem::size_of::<WordProbe<'static, mpit_safe::level::Multiple>>() <= 72,
            "{} bytes",
            std::mem::size_of::<WordProbe<'static, mpit_safe::level::Multiple>>()
        );
    }
}
