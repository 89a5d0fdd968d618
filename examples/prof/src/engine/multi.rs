//! The probes of several elements: read on the stack where they are small (compared with the
//! read before and summed only when their bytes changed), else through the scratch buffers.

#![forbid(unsafe_code)]

use mpit_safe::level::Level;
use mpit_safe::raw::PvarHandle;

use super::probe::{
    AnyProbe, Kind, Lane, MultiHandle, Probe, Scratch, SeenBytes, Wide, read_failed, read_sum,
};
use super::rules::{observe_out_of_line, store_state};
use super::words::add_delta_if_moved;
// Named in the documentation.
#[cfg(doc)]
use super::{State, sampling::sample_deferred};

/// Samples the probes of several elements: their sums, read on the stack where they take at
/// most [`SMALL_BYTES`] (a communicator-bound variable with an element per rank of a small
/// communicator), else through the scratch buffers, out of line.
#[inline(always)]
pub(super) fn sample_multi<L: Level>(
    ps: &mut [AnyProbe<'_, L>],
    acc: &mut [f64],
    scratch: &mut Scratch,
) {
    for p in ps {
        sample_one_multi(p, acc, scratch);
    }
}

/// The probes of several elements in a sample waiting for its attribution in block `k`
/// ([`sample_deferred`]): those with [`SeenBytes`] read into their `fresh[k]`, one after the
/// other (compared and attributed by [`State::settle`]), the others sampled now.
#[inline(always)]
pub(super) fn read_multi_deferred<L: Level>(
    ps: &mut [AnyProbe<'_, L>],
    k: usize,
    acc: &mut [f64],
    scratch: &mut Scratch,
) {
    for p in ps {
        let MultiHandle { handle, seen } = &mut p.handle;
        let Some(seen) = seen.as_deref_mut() else {
            sample_one_multi(p, acc, scratch);
            continue;
        };
        let (Some(fresh), Some(ok)) = (seen.fresh.get_mut(k), seen.fresh_ok.get_mut(k)) else {
            continue;
        };
        *ok = handle.read(fresh).is_ok();
        if !*ok {
            read_failed(p);
        }
    }
}

/// [`State::settle`]'s part for the probes of several elements: those read into block `k`
/// ([`read_multi_deferred`]) compared with their read before and attributed to `acc`.
#[inline(always)]
pub(super) fn settle_multi<L: Level>(ps: &mut [AnyProbe<'_, L>], k: usize, acc: &mut [f64]) {
    for p in ps {
        let lane = p.lane;
        let Some(seen) = p.handle.seen.as_deref_mut() else {
            continue;
        };
        if !seen.fresh_ok.get(k).is_some_and(|&ok| ok) {
            continue;
        }
        let read = seen_compare(seen, k, lane);
        attribute_multi(p, read, acc);
    }
}

/// One probe of several elements: read, then attributed to `acc`.
#[inline(always)]
fn sample_one_multi<L: Level>(p: &mut AnyProbe<'_, L>, acc: &mut [f64], scratch: &mut Scratch) {
    let n = p.count as usize;
    let MultiHandle { handle, seen } = &mut p.handle;
    let bytes = handle.bytes();
    let read = if let Some(seen) = seen.as_deref_mut() {
        seen_read(handle, p.lane, seen)
    } else if bytes <= SMALL_FEW {
        small_read::<SMALL_FEW, L>(handle, p.lane)
    } else if bytes <= SMALL_BYTES {
        small_read::<SMALL_BYTES, L>(handle, p.lane)
    } else {
        read_sum(handle, p.lane, n, scratch, None).map_or(Small::Failed, Small::Sum)
    };
    attribute_multi(p, read, acc);
}

/// A read of a probe of several elements attributed to `acc` (its sum, or the same bytes as
/// the read before, or a failure counted).
#[inline(always)]
fn attribute_multi<H>(p: &mut Probe<H>, read: Small, acc: &mut [f64]) {
    let v = match read {
        Small::Sum(v) => v,
        // The bytes of the read before: the same sum, whose bits `prev` holds (a counter's
        // last read, a state's last sum). Nothing to add to a counter; a state is stored
        // where the node does not hold it (`store_state`).
        Small::Same if p.kind == Kind::Delta => return,
        Small::Same if p.kind == Kind::Raw => {
            store_state(acc, p.at as usize, f64::from_bits(p.prev));
            return;
        }
        Small::Same => f64::from_bits(p.prev),
        // The error itself is not kept: only that the read failed.
        Small::Failed => {
            read_failed(p);
            return;
        }
    };
    match p.kind {
        Kind::Delta => {
            add_delta_if_moved(&mut p.prev, &mut p.last, v, || acc.get_mut(p.at as usize))
        }
        Kind::Raw => {
            p.prev = v.to_bits();
            store_state(acc, p.at as usize, v);
        }
        _ => {
            if let Some(a) = acc.get_mut(p.at as usize..) {
                observe_out_of_line(&mut p.last, p.kind, a, v);
            }
        }
    }
}

/// Bytes of the elements of a probe that [`sample_multi`] reads on the stack.
pub(super) const SMALL_BYTES: usize = 64;

/// The smaller of the two stack buffers of [`sample_multi`] (a per-rank array of two ranks:
/// the whole buffer is summed, so its size is the work).
const SMALL_FEW: usize = 16;

/// What [`small_read`] gave.
enum Small {
    /// The read failed.
    Failed,
    /// The same bytes as the read before ([`MultiHandle::seen`]): not summed.
    Same,
    /// The sum of the elements.
    Sum(f64),
}

/// The sum of the elements of lane `lane` (at most [`SMALL_BYTES`] bytes) of a handle, read
/// into the stack: what [`read_sum`] gives, without the scratch buffers or a call.
#[inline(always)]
fn small_read<const B: usize, L: Level>(h: &PvarHandle<'_, L>, lane: Lane) -> Small {
    let mut buf = [0u8; B];
    if h.read(&mut buf).is_err() {
        return Small::Failed;
    }
    Small::Sum(lane_sum(&buf, lane))
}

/// [`small_read`] of a probe with [`MultiHandle::seen`]: read into `seen.fresh[0]`, [`Small::Same`] if
/// the bytes are those of the read before (most reads: compared whole, without a branch per
/// word), else the sum, the bytes kept.
#[inline(always)]
fn seen_read<L: Level>(h: &PvarHandle<'_, L>, lane: Lane, seen: &mut SeenBytes) -> Small {
    if h.read(&mut seen.fresh[0]).is_err() {
        return Small::Failed;
    }
    seen_compare(seen, 0, lane)
}

/// [`Small::Same`] if `seen.fresh[k]` holds the bytes of the read before, else their sum, the
/// bytes kept.
#[inline(always)]
fn seen_compare(seen: &mut SeenBytes, k: usize, lane: Lane) -> Small {
    let Some(fresh) = seen.fresh.get(k) else {
        return Small::Failed;
    };
    if seen.valid && same_bytes(&seen.bytes, fresh) {
        return Small::Same;
    }
    seen.bytes = *fresh;
    seen.valid = true;
    Small::Sum(lane_sum(&seen.bytes, lane))
}

/// Whether `a` and `b` hold the same bytes: word by word, inline (an array `==` calls `bcmp`,
/// about 25 instructions with the call where this takes about 12).
#[inline(always)]
fn same_bytes<const B: usize>(a: &[u8; B], b: &[u8; B]) -> bool {
    // No remainder left uncompared.
    const { assert!(B.is_multiple_of(8)) };
    let (a, _) = a.as_chunks::<8>();
    let (b, _) = b.as_chunks::<8>();
    // An indexed loop of a length known at compile time: unrolled inline (an iterator zip was
    // left as two calls in call mode's exit).
    let mut diff = 0u64;
    for i in 0..B / 8 {
        diff |= u64::from_ne_bytes(a[i]) ^ u64::from_ne_bytes(b[i]);
    }
    diff == 0
}

/// The sum of the elements of lane `lane` in `buf` (native order), as an `f64`: integers
/// summed as integers, converted once, as [`read_sum`] does. The whole buffer is summed, a
/// fixed count (no branch per element, vector code for the narrow lanes): it was zeroed
/// before the read, so past the elements MPI wrote it adds 0.
#[inline(always)]
fn lane_sum<const B: usize>(buf: &[u8; B], lane: Lane) -> f64 {
    macro_rules! sum {
        // `$acc` holds the sum of SMALL_BYTES / size_of::<$t>() of them (B is at most that)
        // whatever they are.
        ($t:ty, $acc:ty) => {{
            let mut sum = <$acc>::default();
            for c in buf.chunks_exact(std::mem::size_of::<$t>()) {
                sum += <$acc>::from(c.try_into().map(<$t>::from_ne_bytes).unwrap_or_default());
            }
            Wide::wide(sum)
        }};
    }
    match lane {
        Lane::I32 => sum!(i32, i64),
        Lane::U32 => sum!(u32, u64),
        Lane::I64 => sum!(i64, i128),
        Lane::U64 => sum!(u64, u128),
        Lane::F64 => sum!(f64, f64),
        Lane::U8 => sum!(u8, u64),
        Lane::I16 => sum!(i16, i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A several-element read is skipped when `same_bytes` says its bytes are the previous
    /// read's: it must see a difference in any one byte of either buffer size, and none where
    /// there is none.
    #[test]
    fn same_bytes_sees_every_byte() {
        fn check<const B: usize>() {
            let a: [u8; B] = std::array::from_fn(|i| i as u8 ^ 0x5a);
            assert!(same_bytes(&a, &a.clone()));
            for i in 0..B {
                for bit in 0..8 {
                    let mut b = a;
                    b[i] ^= 1 << bit;
                    assert!(!same_bytes(&a, &b), "B={B}: byte {i} bit {bit} not seen");
                }
            }
        }
        check::<SMALL_FEW>();
        check::<SMALL_BYTES>();
    }

    proptest! {
        /// A small probe's elements read on the stack sum exactly: as integers for the integer
        /// lanes (converted to `f64` once, as `read_sum` does), in order for `double`; the
        /// zeroed bytes after the `n` elements MPI wrote add nothing.
        #[test]
        fn small_sums_are_exact(values in proptest::collection::vec(any::<i64>(), 0..=32)) {
            for lane in [
                Lane::I32, Lane::U32, Lane::I64, Lane::U64, Lane::F64, Lane::U8, Lane::I16,
            ] {
                small_sum_is_exact::<SMALL_FEW>(&values, lane)?;
                small_sum_is_exact::<SMALL_BYTES>(&values, lane)?;
            }
        }
    }

    /// [`small_sums_are_exact`] with a buffer of `B` bytes.
    fn small_sum_is_exact<const B: usize>(
        values: &[i64],
        lane: Lane,
    ) -> std::result::Result<(), TestCaseError> {
        let size = lane.size();
        let n = values.len().min(B / size);
        let mut buf = [0u8; B];
        let mut exact = 0i128;
        let mut float = 0.0f64;
        for (i, &v) in values.iter().take(n).enumerate() {
            let at = &mut buf[i * size..(i + 1) * size];
            // The element as the lane's type, written and added exactly.
            macro_rules! put {
                ($t:ty) => {{
                    at.copy_from_slice(&(v as $t).to_ne_bytes());
                    exact += i128::from(v as $t)
                }};
            }
            match lane {
                Lane::I32 => put!(i32),
                Lane::U32 => put!(u32),
                Lane::I64 => put!(i64),
                Lane::U64 => put!(u64),
                Lane::U8 => put!(u8),
                Lane::I16 => put!(i16),
                Lane::F64 => {
                    at.copy_from_slice(&(v as f64).to_ne_bytes());
                    float += v as f64
                }
            }
        }
        let want = if lane == Lane::F64 {
            float
        } else {
            exact as f64
        };
        prop_assert_eq!(
            lane_sum(&buf, lane),
            want,
            "{:?} of {} elements in {} bytes",
            lane,
            n,
            B
        );
        Ok(())
    }
}
