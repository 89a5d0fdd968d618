//! The tracer's lock ([`OwnerLock`]): a spin lock whose owner thread, the one that started the
//! trace and most programs' only one, takes it with plain stores until a second thread
//! first asks for it.

use std::sync::atomic::{
    AtomicBool, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
    Ordering::SeqCst, compiler_fence,
};

/// `membarrier(2)` commands (linux/membarrier.h).
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

/// `membarrier(cmd, 0, 0)`: whether it succeeded.
fn membarrier(cmd: libc::c_int) -> bool {
    // SAFETY: membarrier takes two integers and a CPU id and touches no memory of ours; an
    // unknown command fails with EINVAL (Linux 4.3 and later; ENOSYS before).
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0, 0) == 0 }
}

/// A lock for threads named by non-zero ids, one of them the owner.
///
/// Threads other than the owner take `holder`, the id of the thread inside (0: none): taking
/// it uncontended is one compare-and-swap (a `lock cmpxchg`, 7 ns here), and a thread
/// re-entering sees its own id and is turned away instead of waiting for itself. The owner
/// does without it until another thread first asks: it says it is inside by a plain store
/// to `owner_in` and checks `shared`, the flag that thread sets; that thread then makes every
/// thread of the process pass a full memory barrier (`membarrier(2)`'s
/// `MEMBARRIER_CMD_PRIVATE_EXPEDITED`) and waits for `owner_in` to clear, so that either it
/// sees the owner inside or the owner sees the flag (the asymmetric fence of liburcu and
/// folly's `asymmetricHeavyBarrier`). Only then does it set `settled`, and every thread but
/// the first waits for `settled` before it takes `holder`: a third thread that saw `shared`
/// alone could otherwise enter beside an owner still inside its fast path. The owner, once
/// it sees `shared`, takes `holder` too.
pub(super) struct OwnerLock {
    holder: AtomicUsize,
    /// The owner's id (0: none yet; the lock then turns everyone away).
    owner: AtomicUsize,
    owner_in: AtomicBool,
    /// A thread other than the owner has asked for the lock (never cleared).
    shared: AtomicBool,
    /// The owner is out of its fast path for good, or never had it: every thread takes
    /// `holder` (never cleared).
    settled: AtomicBool,
}

impl OwnerLock {
    pub(super) const fn new() -> OwnerLock {
        OwnerLock {
            holder: AtomicUsize::new(0),
            owner: AtomicUsize::new(0),
            owner_in: AtomicBool::new(false),
            shared: AtomicBool::new(false),
            settled: AtomicBool::new(false),
        }
    }

    /// Makes `me` the owner, registering the process for the barrier its fast path needs;
    /// where the kernel cannot, every thread takes `holder`.
    pub(super) fn set_owner(&self, me: usize) {
        if !membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
            self.shared.store(true, SeqCst);
            self.settled.store(true, SeqCst);
        }
        self.owner.store(me, Release);
    }

    /// The owner's id (0 before [`set_owner`](Self::set_owner)).
    #[inline(always)]
    pub(super) fn owner(&self) -> usize {
        self.owner.load(Relaxed)
    }

    /// `f` under the lock, as the thread `me` (the lock released however `f` ends); `None`
    /// when `me` is inside already, or before there is an owner.
    #[inline(always)]
    pub(super) fn with<R>(&self, me: usize, f: impl FnOnce() -> R) -> Option<R> {
        struct Unlock<'a>(&'a AtomicUsize);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.store(0, Release);
            }
        }
        struct OwnerOut<'a>(&'a AtomicBool);
        impl Drop for OwnerOut<'_> {
            fn drop(&mut self) {
                self.0.store(false, Release);
            }
        }
        let owner = self.owner();
        if me == owner {
            if self.owner_in.load(Relaxed) {
                return None;
            }
            self.owner_in.store(true, Relaxed);
            // The other side's barrier orders this store before the load below.
            compiler_fence(SeqCst);
            if !self.shared.load(Relaxed) {
                let _out = OwnerOut(&self.owner_in);
                return Some(f());
            }
            self.owner_in.store(false, Release);
        } else if owner == 0 {
            return None;
        } else if !self.settled.load(Acquire) {
            self.share();
        }
        if self.holder.load(Relaxed) == me {
            return None;
        }
        while self
            .holder
            .compare_exchange_weak(0, me, Acquire, Relaxed)
            .is_err()
        {
            // Another thread writes its records (a few hundred instructions): let it run.
            std::thread::yield_now();
        }
        let _unlock = Unlock(&self.holder);
        Some(f())
    }

    /// A thread other than the owner, before `settled`: the first ends the owner's fast path,
    /// the others wait until it has.
    #[cold]
    #[inline(never)]
    fn share(&self) {
        if self.shared.swap(true, SeqCst) {
            while !self.settled.load(Acquire) {
                std::thread::yield_now();
            }
            return;
        }
        // Registered in `set_owner` (else `settled` was set then): the owner's store of
        // `owner_in` and its load of `shared` are ordered by a full barrier now.
        if !membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) {
            // Not seen after a successful registration; the owner's next calls see `shared`
            // within its store buffer's drain, far below a scheduler quantum.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        while self.owner_in.load(Acquire) {
            std::thread::yield_now();
        }
        self.settled.store(true, Release);
    }
}

#[cfg(test)]
mod tests {
    use super::OwnerLock;
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};

    /// What runs inside: counts itself, and any other thread found inside, over a few
    /// microseconds (the tracer's block of records is some hundred nanoseconds; longer here,
    /// so that a thread let in beside another would be caught).
    fn inside(busy: &AtomicBool, overlaps: &AtomicU64, count: &AtomicU64) {
        if busy.swap(true, Relaxed) {
            overlaps.fetch_add(1, Relaxed);
        }
        let start = std::time::Instant::now();
        while start.elapsed().as_micros() < 20 {
            std::hint::spin_loop();
        }
        // A plain read and write, as the tracer's state is: a lost update if two are in.
        count.store(count.load(Relaxed) + 1, Relaxed);
        busy.store(false, Relaxed);
    }

    /// The owner inside its fast path without pause while three threads arrive at once: no
    /// two threads are ever inside together, at the hand-over or after it, and no update is
    /// lost.
    #[test]
    fn one_thread_at_a_time_through_the_hand_over() {
        const OTHERS: usize = 3;
        const CALLS: u64 = 50;
        for _ in 0..20 {
            let lock = OwnerLock::new();
            let (busy, overlaps, count) =
                (AtomicBool::new(false), AtomicU64::new(0), AtomicU64::new(0));
            let (go, done) = (Barrier::new(OTHERS + 1), AtomicU64::new(0));
            lock.set_owner(1);
            let owner_calls = std::thread::scope(|s| {
                let owner = s.spawn(|| {
                    let mut calls = 0;
                    let _ = lock.with(1, || inside(&busy, &overlaps, &count));
                    calls += 1;
                    go.wait();
                    while done.load(Relaxed) < OTHERS as u64 {
                        assert_eq!(lock.with(1, || inside(&busy, &overlaps, &count)), Some(()));
                        calls += 1;
                    }
                    calls
                });
                for id in 2..2 + OTHERS {
                    let (lock, go, done) = (&lock, &go, &done);
                    let (busy, overlaps, count) = (&busy, &overlaps, &count);
                    s.spawn(move || {
                        go.wait();
                        for _ in 0..CALLS {
                            assert_eq!(lock.with(id, || inside(busy, overlaps, count)), Some(()));
                        }
                        done.fetch_add(1, Relaxed);
                    });
                }
                owner.join().unwrap()
            });
            assert_eq!(overlaps.load(Relaxed), 0);
            assert_eq!(count.load(Relaxed), owner_calls + OTHERS as u64 * CALLS);
        }
    }

    /// The hand-over held open: the owner inside its fast path, a first other thread waiting
    /// for it to leave, then a third thread asking. The third must wait too, until the owner
    /// is out; it once entered beside the owner, having seen only `shared`.
    #[test]
    fn a_third_thread_waits_for_the_owner_to_leave() {
        let lock = OwnerLock::new();
        let (owner_inside, release, third_saw_owner) = (
            AtomicBool::new(false),
            AtomicBool::new(false),
            AtomicBool::new(false),
        );
        lock.set_owner(1);
        std::thread::scope(|s| {
            s.spawn(|| {
                lock.with(1, || {
                    owner_inside.store(true, SeqCst);
                    while !release.load(SeqCst) {
                        std::hint::spin_loop();
                    }
                    owner_inside.store(false, SeqCst);
                })
            });
            while !owner_inside.load(SeqCst) {
                std::thread::yield_now();
            }
            s.spawn(|| lock.with(2, || ()));
            while !lock.shared.load(SeqCst) {
                std::thread::yield_now();
            }
            s.spawn(|| {
                lock.with(3, || {
                    third_saw_owner.store(owner_inside.load(SeqCst), SeqCst);
                })
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            release.store(true, SeqCst);
        });
        assert!(!third_saw_owner.load(SeqCst));
        assert!(lock.settled.load(SeqCst));
    }

    /// A thread inside is turned away when it asks again (the wrappers' own MPI calls), the
    /// owner before and after the hand-over, and the others; nobody before an owner.
    #[test]
    fn a_thread_inside_is_turned_away() {
        let lock = OwnerLock::new();
        assert_eq!(lock.with(1, || ()), None);
        lock.set_owner(1);
        assert_eq!(lock.with(1, || lock.with(1, || ())), Some(None));
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(lock.with(2, || lock.with(2, || ())), Some(None)));
        });
        assert_eq!(lock.with(1, || lock.with(1, || ())), Some(None));
        assert_eq!(lock.with(1, || ()), Some(()));
    }
}
