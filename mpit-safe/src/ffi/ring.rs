//! The bounded queue behind an [`EventStream`](crate::EventStream): many producers (event
//! callbacks, on any thread, in a signal handler at `MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE`), one
//! consumer at a time.
//!
//! Why not crossbeam's `ArrayQueue`, which it replaces: its consumer writes a stamp into every
//! slot it empties, so each push began with a load of a cache line the consumer's core owned.
//! Here the consumer writes no slot: a slot says it is full by the position written into it (a
//! producer's store), and the consumer frees slots by publishing how far it has read (one
//! store per batch), which producers load only when the queue looks full. Producers claim
//! positions with one compare-and-swap and never wait: a full queue refuses the value, which
//! the stream counts as dropped. With a consumer draining every millisecond (events bench,
//! mpich-ev, against a C callback doing the same copy on the same producer thread): 0.81 × that
//! ceiling with TSC stamps and 0.92 with monotonic ones before, 0.89 and 0.93 with this queue,
//! 0.95-0.97 since the callback fills its slot in place (values are plain data, written where
//! they will be read: MPI copies the event straight into the claimed slot). A producer asks for
//! the line of the slot 16 positions ahead in a writable state (`prefetchw`): without it, in
//! about one process in four on this VM every round of the stream ran at half speed (about
//! 70 ns more per event, as if each store waited for a line the consumer's core had read); in
//! none of 24 with it (events bench and `scripts/bench`, mpich-ev, MPICH 5, MPICH 4, Intel).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crossbeam::utils::CachePadded;

/// One value's place, a cache line or more of its own, so that producers writing neighbouring
/// positions do not share lines. Values are plain data (`Copy`), always initialised: a
/// producer fills its slot in place, field by field (an event callback has MPI write the
/// event's data straight into it), and the consumer copies the value out.
#[repr(C, align(64))]
struct Slot<T> {
    /// The last position written here, plus one, truncated to 32 bits: the consumer at
    /// position `p` takes the value when this reads `p + 1`. A stale value is from one lap
    /// before (`p + 1 - slots`), never equal while there are fewer than 2³² slots.
    seq: AtomicU32,
    value: UnsafeCell<T>,
}

/// How many positions ahead a producer asks for the slot it will likely fill next.
const PREFETCH_AHEAD: u64 = 16;

/// Asks the CPU for `slot`'s line in a state it can write (`prefetchw`), so that the store a
/// later push makes there does not wait for the consumer's core to give the line up.
#[inline(always)]
fn prefetch_for_write<T>(slot: &Slot<T>) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetchw` is a hint: it reads and writes no memory architecturally and cannot
    // fault (the address is a valid reference anyway); AMD64 CPUs have it and Intel ones
    // without it execute it as a NOP (its opcode is in the reserved-NOP space). No stack, no
    // flags.
    unsafe {
        std::arch::asm!(
            "prefetchw [{}]",
            in(reg) slot as *const Slot<T>,
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

/// Bytes of a slot holding a `T` (a multiple of the 64-byte line).
// Used only by a const assertion (registration.rs), which rustc 1.88 (the MSRV) does not count
// as a use.
#[allow(dead_code)]
pub(crate) const fn slot_size<T>() -> usize {
    std::mem::size_of::<Slot<T>>()
}

/// A bounded multi-producer queue of plain values read by one consumer at a time
/// ([`Ring::reader`]).
pub(crate) struct Ring<T: Copy> {
    slots: Box<[Slot<T>]>,
    /// The values the queue may hold at once (at most `slots.len()`).
    capacity: u64,
    /// The next position a producer claims.
    tail: CachePadded<AtomicU64>,
    /// The first position the consumer has not read, as last published by it: every slot
    /// before it is free.
    head: CachePadded<AtomicU64>,
    /// `head` as a producer last loaded it, for the producers: they load `head` itself only when
    /// this says the queue is full, not once per value (a line the consumer writes while it
    /// reads would cost each value a miss).
    seen_head: CachePadded<AtomicU64>,
    /// Taken by the consumer while it reads (consumers are threads, never signal handlers).
    reading: Mutex<()>,
    /// Values read between two stores of `head` (an eighth of the capacity, at most 1024): a
    /// line the producers read when they find the queue full.
    publish: u64,
}

// SAFETY: values move from producers to the consumer, so `T: Send` is what sharing the ring
// across threads needs; every access to a slot's value is exclusive by the protocol (a
// position is claimed by one producer through the compare-and-swap on `tail`, and read by
// the one consumer holding `reading` after the producer's release store of `seq`).
unsafe impl<T: Copy + Send> Send for Ring<T> {}
// SAFETY: as above.
unsafe impl<T: Copy + Send> Sync for Ring<T> {}

impl<T: Copy> Ring<T> {
    /// A queue of `capacity` values (at least one, at most 2³⁰), every slot holding `init`
    /// until a producer fills it.
    pub(crate) fn new(capacity: usize, init: T) -> Ring<T> {
        let capacity = capacity.clamp(1, 1 << 30);
        let slots = (0..capacity.next_power_of_two())
            .map(|_| Slot {
                seq: AtomicU32::new(0),
                value: UnsafeCell::new(init),
            })
            .collect();
        Ring {
            slots,
            capacity: capacity as u64,
            tail: CachePadded::new(AtomicU64::new(0)),
            head: CachePadded::new(AtomicU64::new(0)),
            seen_head: CachePadded::new(AtomicU64::new(0)),
            reading: Mutex::new(()),
            publish: (capacity as u64 / 8).clamp(1, 1024),
        }
    }

    /// The index of the slot of position `pos` (the slot count is a power of two).
    #[inline(always)]
    fn index(&self, pos: u64) -> usize {
        (pos & (self.slots.len() as u64 - 1)) as usize
    }

    /// Appends a value that `fill(slot, value)` writes in place, `slot` being the index of the
    /// slot (in `0..`[`Ring::slots`]) and `value` its last lap's value, or returns `false`
    /// without calling `fill` if the queue is full. Lock-free and allocation-free: valid in a
    /// signal handler. The slot is claimed while `fill` runs: it must be short and must not
    /// panic (the consumer would wait at it).
    #[inline(always)]
    pub(crate) fn push_with(&self, fill: impl FnOnce(usize, &mut T)) -> bool {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            // Acquire, on `head` or through `seen_head` (stored with release after an acquire
            // load of `head`): the consumer's reads of the slots before it happen before our
            // write into one of them.
            let mut head = self.seen_head.load(Ordering::Acquire);
            if pos.wrapping_sub(head) >= self.capacity {
                head = self.head.load(Ordering::Acquire);
                self.seen_head.fetch_max(head, Ordering::AcqRel);
                if pos.wrapping_sub(head) >= self.capacity {
                    // Full, unless `pos` is stale: other producers and the consumer may have
                    // gone past it while this one waited (`head` beyond `pos` wraps around).
                    let now = self.tail.load(Ordering::Relaxed);
                    if now != pos {
                        pos = now;
                        continue;
                    }
                    return false;
                }
            }
            match self.tail.compare_exchange_weak(
                pos,
                pos + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => pos = now,
            }
        }
        let index = self.index(pos);
        prefetch_for_write(&self.slots[self.index(pos + PREFETCH_AHEAD)]);
        let slot = &self.slots[index];
        // SAFETY: position `pos` is ours alone (claimed above), and its slot is free: the
        // consumer has read position `pos - slots` or earlier ones only up to `head`, and
        // `pos - head < capacity <= slots`, so the value of the slot's previous lap was read
        // (copied out) before `head` passed it; nothing else touches it until `seq` says so.
        fill(index, unsafe { &mut *slot.value.get() });
        slot.seq
            .store((pos as u32).wrapping_add(1), Ordering::Release);
        true
    }

    /// Appends `value`, or gives it back if the queue is full ([`Ring::push_with`]).
    #[cfg(test)]
    pub(crate) fn push(&self, value: T) -> Result<(), T> {
        match self.push_with(|_, v| *v = value) {
            true => Ok(()),
            false => Err(value),
        }
    }

    /// How many slots there are (the indices `push_with` and `pop` give are below it).
    pub(crate) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// How many values are waiting (claimed and not yet read; a value being written counts).
    pub(crate) fn len(&self) -> usize {
        let tail = self.tail.load(Ordering::Acquire);
        let head = self.head.load(Ordering::Acquire);
        tail.saturating_sub(head) as usize
    }

    /// The consumer side, held for as long as the reader lives; `None` while another reader
    /// is (on another thread, or on this one: a `drain` in progress), which is reading what
    /// this one would. Never waits, so a reader taken inside another cannot deadlock.
    pub(crate) fn reader(&self) -> Option<Reader<'_, T>> {
        let guard = match self.reading.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        Some(Reader {
            ring: self,
            pos: self.head.load(Ordering::Relaxed),
            published: self.head.load(Ordering::Relaxed),
            _guard: guard,
        })
    }
}

impl<T: Copy> std::fmt::Debug for Ring<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

/// The consumer of a [`Ring`], reading in order; it frees what it read for the producers every
/// few values (`Ring::publish`) and when dropped.
pub(crate) struct Reader<'r, T: Copy> {
    ring: &'r Ring<T>,
    pos: u64,
    published: u64,
    _guard: MutexGuard<'r, ()>,
}

impl<T: Copy> Reader<'_, T> {
    /// The next value and the index of its slot, if it has been written.
    #[cfg(test)]
    pub(crate) fn pop(&mut self) -> Option<(usize, T)> {
        self.pop_with(|index, value| (index, value))
    }

    /// The next value through `f`, which gets the index of the value's slot and the value
    /// before the slot is freed: what a producer keeps by slot beside the value (a stream's
    /// long data) is still the value's own while `f` runs.
    #[inline]
    pub(crate) fn pop_with<R>(&mut self, f: impl FnOnce(usize, T) -> R) -> Option<R> {
        let index = self.ring.index(self.pos);
        let slot = &self.ring.slots[index];
        if slot.seq.load(Ordering::Acquire) != (self.pos as u32).wrapping_add(1) {
            return None;
        }
        // SAFETY: `seq` says position `pos` was written (the acquire load pairs with the
        // producer's release store), and only this reader (holding `reading`) reads it, once:
        // `pos` moves past it now, before `f` runs (if `f` panics, the value is not read
        // again); no producer writes the slot again before `head` passes it.
        let value = unsafe { *slot.value.get() };
        self.pos += 1;
        let r = f(index, value);
        // Freed for the producers only now, after `f`.
        if self.pos - self.published >= self.ring.publish {
            self.publish();
        }
        Some(r)
    }

    /// Frees the slots read so far.
    fn publish(&mut self) {
        self.ring.head.store(self.pos, Ordering::Release);
        self.published = self.pos;
    }
}

impl<T: Copy> Drop for Reader<'_, T> {
    fn drop(&mut self) {
        self.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_bounded_and_refilled() {
        let r = Ring::new(3, 0);
        for i in 0..3 {
            assert_eq!(r.push(i), Ok(()));
        }
        assert_eq!(r.push(9), Err(9), "holds exactly its capacity");
        assert_eq!(r.len(), 3);
        {
            let mut rd = r.reader().unwrap();
            assert!(
                r.reader().is_none(),
                "one reader at a time, without waiting"
            );
            assert_eq!((rd.pop(), rd.pop()), (Some((0, 0)), Some((1, 1))));
        }
        assert_eq!(r.push(3), Ok(()));
        assert_eq!(r.push(4), Ok(()));
        assert_eq!(r.push(5), Err(5));
        let mut rd = r.reader().unwrap();
        let got: Vec<_> = std::iter::from_fn(|| rd.pop()).collect();
        assert_eq!(
            got,
            [(2, 2), (3, 3), (0, 4)],
            "slot indices wrap at 4 slots"
        );
    }

    /// A producer fills its slot in place, over the value of the slot's last lap: what it
    /// leaves unwritten is that lap's, what it writes is what the consumer reads.
    #[test]
    fn filled_in_place_over_the_last_lap() {
        let r = Ring::new(2, [0u8; 4]);
        for lap in 1..=3u8 {
            for slot in 0..2 {
                assert!(r.push_with(|i, v| {
                    assert_eq!((i, v[0], v[1]), (slot, lap - 1, lap - 1), "lap {lap}");
                    v[..2].copy_from_slice(&[lap; 2]);
                }));
            }
            let mut rd = r.reader().unwrap();
            assert_eq!(rd.pop(), Some((0, [lap, lap, 0, 0])));
            assert_eq!(rd.pop(), Some((1, [lap, lap, 0, 0])));
            assert_eq!(rd.pop(), None);
        }
    }

    /// Many producers, one consumer reading meanwhile: every value pushed is read once, in
    /// each producer's order, and every refused one was refused while the queue was full.
    #[test]
    fn producers_and_a_consumer() {
        const P: u64 = 4;
        const N: u64 = 50_000;
        let r = Arc::new(Ring::new(64, (0, 0)));
        let refused = Arc::new(AtomicU64::new(0));
        let producers: Vec<_> = (0..P)
            .map(|p| {
                let (r, refused) = (Arc::clone(&r), Arc::clone(&refused));
                std::thread::spawn(move || {
                    for i in 0..N {
                        if r.push((p, i)).is_err() {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        let mut last = [None::<u64>; P as usize];
        let mut read = 0u64;
        let done = || producers.iter().all(|h| h.is_finished());
        loop {
            let finished = done();
            let mut rd = r.reader().unwrap();
            while let Some((_, (p, i))) = rd.pop() {
                let prev = &mut last[p as usize];
                assert!(
                    prev.is_none_or(|q| q < i),
                    "producer {p}: {i} after {prev:?}"
                );
                *prev = Some(i);
                read += 1;
            }
            drop(rd);
            if finished && r.len() == 0 {
                break;
            }
        }
        for h in producers {
            h.join().unwrap();
        }
        assert_eq!(read + refused.load(Ordering::Relaxed), P * N);
        assert!(read > 0);
    }
}
