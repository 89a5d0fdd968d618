//! The one-word probes' samples: a word decoded by its probe's width and sign, a counter's
//! delta taken in integers, a read of the same bits as the one before skipped, several small
//! elements in one word summed ([`sample_lanes`]).

#![forbid(unsafe_code)]

use mpit_safe::level::Level;

use super::probe::{Decode, Lane, Probe, WordProbe};
use super::rules::{add_delta, add_sample, observe_out_of_line, store_state};
// Named in the documentation.
#[cfg(doc)]
use super::sampling::Case;

/// The decodings and kinds of [`sample_run`], as constants.
pub(super) const UNSIGNED: u8 = Decode::Unsigned as u8;

pub(super) const SIGNED: u8 = Decode::Signed as u8;

pub(super) const FLOAT: u8 = Decode::Float as u8;

pub(super) const WORD: u8 = Decode::Word as u8;

/// Several elements in at most 8 bytes, read as one word and summed ([`Case::lanes`]).
pub(super) const LANES: u8 = 4;

pub(super) const DELTA: u8 = 0;

pub(super) const RAW: u8 = 1;

pub(super) const SAMPLES: u8 = 2;

pub(super) const OTHER: u8 = 3;

/// Samples a run of probes of at most 8 bytes of decoding `D` and kind `K` (`OTHER`: a
/// watermark, each probe's own kind, out of line; [`LANES`]: several elements in the word), of
/// words `words` (each probe's read, at the same index).
#[inline(always)]
pub(super) fn sample_run<const D: u8, const K: u8, L: Level>(
    run: &mut [WordProbe<'_, L>],
    words: &[u64],
    acc: &mut [f64],
) {
    for (p, &word) in run.iter_mut().zip(words) {
        let buf = word.to_ne_bytes();
        let at = p.at as usize;
        if D == LANES {
            sample_lanes::<K, _>(p, buf, acc);
            continue;
        }
        if (D == UNSIGNED || D == WORD) && K == DELTA {
            // A run of 64-bit variables has no shift to undo.
            let v = match D {
                WORD => word,
                _ => unsigned(buf, p.shift),
            };
            add_unsigned_delta_if_moved(&mut p.prev, v, || acc.get_mut(at));
            continue;
        }
        // A state goes to the node at every sample (call mode's samples alternate nodes);
        // `store_state` writes it only where the node holds another value.
        let v = decode_as::<D>(buf, p.shift);
        match K {
            DELTA => add_delta_if_moved(&mut p.prev, &mut p.last, v, || acc.get_mut(at)),
            RAW => store_state(acc, at, v),
            SAMPLES => {
                if let Some(a) = acc.get_mut(at..at + 4).and_then(|a| a.first_chunk_mut()) {
                    add_sample(a, v);
                }
            }
            _ => {
                if let Some(a) = acc.get_mut(at..) {
                    observe_out_of_line(&mut p.last, p.kind, a, v);
                }
            }
        }
    }
}

/// A sample of a probe of [`Case::lanes`], of kind `K`: its read `buf` (the elements, then
/// bytes of an earlier read, cleared here). `prev` holds the bytes of the read before and
/// `last` their sum (of a counter: the sum its deltas are measured from; of a watermark: its
/// own last value), so a read of the same bytes sums nothing: a counter's adds nothing, a
/// level's or state's sum is `last`.
#[inline(always)]
fn sample_lanes<const K: u8, H>(p: &mut Probe<H>, buf: [u8; 8], acc: &mut [f64]) {
    let w = unsigned(buf, p.shift);
    let at = p.at as usize;
    if K == OTHER {
        if let Some(a) = acc.get_mut(at..) {
            observe_out_of_line(&mut p.last, p.kind, a, lanes_sum(w, p.lane));
        }
        return;
    }
    if w != p.prev {
        p.prev = w;
        let v = lanes_sum(w, p.lane);
        if K == DELTA {
            if let Some(sum) = acc.get_mut(at) {
                add_delta(&mut p.last, sum, v);
            }
            return;
        }
        p.last = v;
    } else if K == DELTA {
        return;
    }
    let v = p.last;
    if K == RAW {
        store_state(acc, at, v);
    } else if let Some(a) = acc.get_mut(at..at + 4).and_then(|a| a.first_chunk_mut()) {
        add_sample(a, v);
    }
}

/// The sum of the elements of lane `lane` packed in `w` (native order, at most 8 bytes, the
/// bytes after them zero): integers summed as integers.
#[inline(always)]
pub(super) fn lanes_sum(w: u64, lane: Lane) -> f64 {
    let b = w.to_ne_bytes();
    match lane {
        Lane::U8 => b.iter().map(|&x| u64::from(x)).sum::<u64>() as f64,
        Lane::I16 => b
            .as_chunks::<2>()
            .0
            .iter()
            .map(|&c| i64::from(i16::from_ne_bytes(c)))
            .sum::<i64>() as f64,
        Lane::I32 => b
            .as_chunks::<4>()
            .0
            .iter()
            .map(|&c| i64::from(i32::from_ne_bytes(c)))
            .sum::<i64>() as f64,
        Lane::U32 => b
            .as_chunks::<4>()
            .0
            .iter()
            .map(|&c| u64::from(u32::from_ne_bytes(c)))
            .sum::<u64>() as f64,
        // One element of 8 bytes: never of this case.
        Lane::I64 | Lane::U64 | Lane::F64 => Decode::of(lane).0.value(b, 0),
    }
}

/// [`Decode::value`] of decoding `D`, known at compile time.
#[inline(always)]
fn decode_as<const D: u8>(buf: [u8; 8], shift: u8) -> f64 {
    match D {
        UNSIGNED | WORD => Decode::Unsigned.value(buf, shift),
        SIGNED => Decode::Signed.value(buf, shift),
        _ => Decode::Float.value(buf, shift),
    }
}

/// The unsigned value of width `64 - shift` bits in the 8 bytes `buf` ([`Decode::of`]).
#[inline(always)]
pub(super) fn unsigned(buf: [u8; 8], shift: u8) -> u64 {
    // To bit 63 and back: the bytes after the value cleared.
    to_top(buf, shift) >> u32::from(shift)
}

/// The 8 bytes `buf` (as read, native order) as a `u64` with the most significant bit of the
/// variable's value (of width `64 - shift` bits, written at the start of `buf`) at bit 63.
#[inline(always)]
pub(super) fn to_top(buf: [u8; 8], shift: u8) -> u64 {
    let raw = u64::from_ne_bytes(buf);
    if cfg!(target_endian = "little") {
        raw << u32::from(shift)
    } else {
        raw
    }
}

/// An unsigned counter's read `v`: the delta since `prev` added to `sum`, taken in integers
/// (a value below `prev` is a reset: counted from 0). The delta converts to `f64` as a signed
/// integer, one instruction where x86-64 takes seven for a `u64`.
#[inline(always)]
fn add_unsigned_delta(prev: &mut u64, sum: &mut f64, v: u64) {
    let d = if v >= *prev { v - *prev } else { v };
    *prev = v;
    *sum += match i64::try_from(d) {
        Ok(d) => d as f64,
        Err(_) => huge(d),
    };
}

/// [`add_unsigned_delta`] of a read that moved: a read equal to the previous one adds 0 and
/// leaves `prev` as it is, so all it costs is the compare (most variables do not move during
/// one MPI call). `sum` gives the accumulator, looked up only then.
#[inline(always)]
fn add_unsigned_delta_if_moved<'a>(
    prev: &mut u64,
    v: u64,
    sum: impl FnOnce() -> Option<&'a mut f64>,
) {
    if v != *prev
        && let Some(sum) = sum()
    {
        add_unsigned_delta(prev, sum, v);
    }
}

/// [`add_delta`] of a read whose bits differ from the previous read's, `prev_bits`: after
/// `add_delta` took a value, the same value again adds 0 (one it tracked: `last` is it) or is
/// ignored again (one it cannot track), so a read of the same bits is skipped. The first
/// `prev_bits` are those of `last`'s baseline, which the same rule covers.
#[inline(always)]
pub(super) fn add_delta_if_moved<'a>(
    prev_bits: &mut u64,
    last: &mut f64,
    v: f64,
    sum: impl FnOnce() -> Option<&'a mut f64>,
) {
    let bits = v.to_bits();
    if bits != *prev_bits {
        *prev_bits = bits;
        if let Some(sum) = sum() {
            add_delta(last, sum, v);
        }
    }
}

/// A delta of 2⁶³ or more as an `f64` (never seen; out of line so that the common case keeps
/// its one-instruction conversion).
#[cold]
#[inline(never)]
pub(super) fn huge(d: u64) -> f64 {
    d as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::probe::Kind;
    use crate::engine::rules::observe;
    use crate::engine::sampling::Case;
    use mpit_safe::DeltaTracker;
    use proptest::prelude::*;

    /// The 8 bytes the sampling loop reads for a variable whose value is `x`: MPI writes the
    /// variable's own bytes at the start of the buffer, zeroed before.
    fn written<const N: usize>(x: [u8; N]) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..N].copy_from_slice(&x);
        b
    }

    proptest! {
        /// MPI-4.1 §16.3.7 (`MPI_T_pvar_read` writes the variable's datatype into the buffer):
        /// every lane's value decodes to itself, signed ones sign-extended, on this host's
        /// byte order.
        #[test]
        fn decoding_gives_the_value_of_every_lane(
            u8v in any::<u8>(), u32v in any::<u32>(), u64v in any::<u64>(),
            i16v in any::<i16>(), i32v in any::<i32>(), i64v in any::<i64>(),
            f64v in any::<f64>(),
        ) {
            let d = |lane| {
                let (how, shift) = Decode::of(lane);
                move |b: [u8; 8]| how.value(b, shift)
            };
            prop_assert_eq!(d(Lane::U8)(written(u8v.to_ne_bytes())), f64::from(u8v));
            prop_assert_eq!(d(Lane::U32)(written(u32v.to_ne_bytes())), f64::from(u32v));
            prop_assert_eq!(d(Lane::U64)(written(u64v.to_ne_bytes())), u64v as f64);
            prop_assert_eq!(d(Lane::I16)(written(i16v.to_ne_bytes())), f64::from(i16v));
            prop_assert_eq!(d(Lane::I32)(written(i32v.to_ne_bytes())), f64::from(i32v));
            prop_assert_eq!(d(Lane::I64)(written(i64v.to_ne_bytes())), i64v as f64);
            let f = d(Lane::F64)(written(f64v.to_ne_bytes()));
            prop_assert_eq!(f.to_bits(), f64v.to_bits());
        }


        /// The same rule for the one-element unsigned counters, whose deltas the sampling loop
        /// takes in integers: the same total as `DeltaTracker`'s over the values as `u64`
        /// (exactly while the total stays below 2⁵³), every lane's width decoded by `unsigned`.
        #[test]
        fn unsigned_deltas_follow_delta_tracker(
            base in 0u64..1 << 40,
            vs in proptest::collection::vec(
                prop_oneof![0u64..1 << 20, (1u64 << 40)..1 << 45, Just(0u64)],
                0..64,
            ),
        ) {
            let mut t = DeltaTracker::starting_at(base);
            let (mut prev, mut sum) = (base, 0.0);
            let (mut skip_prev, mut skip_sum) = (base, 0.0);
            for v in vs.iter().flat_map(|&v| [v, v]) {
                t.observe(v);
                let (_, shift) = Decode::of(Lane::U64);
                add_unsigned_delta(&mut prev, &mut sum, unsigned(written(v.to_ne_bytes()), shift));
                // The sampling loop's way: a read equal to the previous one skipped.
                add_unsigned_delta_if_moved(&mut skip_prev, v, || Some(&mut skip_sum));
            }
            prop_assert_eq!(sum, t.total() as f64);
            prop_assert_eq!(skip_sum, t.total() as f64);
            let (_, shift) = Decode::of(Lane::U32);
            prop_assert_eq!(unsigned(written((base as u32).to_ne_bytes()), shift), u64::from(base as u32));
            let (_, shift) = Decode::of(Lane::U8);
            prop_assert_eq!(unsigned(written([base as u8]), shift), u64::from(base as u8));
        }

        /// A variable of several integer elements in at most 8 bytes, read as one word
        /// ([`Case::lanes`]: a per-peer array on 2 ranks), gives the metric of its elements'
        /// sum as `observe` takes it (the several-element loop's rule, Caliper's MPIT service, "PVAR classes" to "Querying and storing PVARs"), for
        /// every kind and lane, also when reads repeat (a read of the same bytes is summed from
        /// the one before) and with leftover bytes after the elements (cleared by the shift).
        #[test]
        fn lanes_follow_their_sum(
            lane in prop_oneof![Just(Lane::U8), Just(Lane::I16), Just(Lane::I32), Just(Lane::U32)],
            kind in prop_oneof![
                Just(Kind::Delta), Just(Kind::Up), Just(Kind::Down), Just(Kind::Samples),
                Just(Kind::Raw),
            ],
            count in 2usize..=8,
            base in any::<u64>(),
            reads in proptest::collection::vec((any::<u64>(), 0u8..3), 0..40),
        ) {
            let count = count.min(8 / lane.size()).max(2);
            let bytes = count * lane.size();
            let shift = (64 - 8 * bytes) as u8;
            // The elements' own bytes of a word, and their sum element by element.
            let mask = |w: u64| unsigned(w.to_ne_bytes(), shift);
            let sum = |w: u64| -> f64 {
                let b = w.to_ne_bytes();
                let e = |i: usize| -> i128 {
                    let c = &b[i * lane.size()..(i + 1) * lane.size()];
                    match lane {
                        Lane::U8 => i128::from(c[0]),
                        Lane::I16 => i128::from(i16::from_ne_bytes([c[0], c[1]])),
                        Lane::I32 => i128::from(i32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                        _ => i128::from(u32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                    }
                };
                (0..count).map(e).sum::<i128>() as f64
            };
            let watermark = matches!(kind, Kind::Up | Kind::Down);
            let w0 = mask(base);
            // As `allocate` makes it.
            let first = if watermark { f64::NAN } else { sum(w0) };
            let mut p = Probe {
                handle: (), last: first, prev: w0, column: 0, at: 0, count: count as u32,
                failures: 0, lane, kind, case: Case::lanes(kind), shift,
            };
            let (mut acc, mut want) = (kind.zero().to_vec(), kind.zero().to_vec());
            let mut last = first;
            let mut prev = w0;
            for &(w, again) in &reads {
                // 0: a new read; 1: the read before again; 2: the same elements, other bytes
                // after them (a narrower read leaves the previous probe's bytes there).
                let w = match again { 0 => w, 1 => prev, _ => prev | (w << (8 * bytes % 64)) };
                prev = w;
                match kind {
                    Kind::Delta => sample_lanes::<DELTA, ()>(&mut p, w.to_ne_bytes(), &mut acc),
                    Kind::Samples => sample_lanes::<SAMPLES, ()>(&mut p, w.to_ne_bytes(), &mut acc),
                    Kind::Raw => sample_lanes::<RAW, ()>(&mut p, w.to_ne_bytes(), &mut acc),
                    _ => sample_lanes::<OTHER, ()>(&mut p, w.to_ne_bytes(), &mut acc),
                }
                observe(&mut last, kind, &mut want, sum(mask(w)));
            }
            let bits = |a: &[f64]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&acc), bits(&want), "{:?} {:?} × {}", kind, lane, count);
        }

    }
}
