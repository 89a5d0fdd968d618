//! MPI calls: their entry and exit ([`Profiler::call_enter`], [`Profiler::call_exit`]), counted
//! per (region, function) pair, timed all or one in [`TIME_ONE_IN`], and the fast paths of the
//! preload library's wrappers ([`Profiler::try_fast`], [`Profiler::timed_enter`] /
//! [`Profiler::timed_exit`], [`Profiler::try_sampled_call`]).

#![forbid(unsafe_code)]

use std::cell::Cell;
use std::sync::atomic::Ordering::Relaxed;

use mpit_safe::level::Level;

use super::report::NodeKind;
use super::sampling::{sample_body, sample_deferred, settles_after};
use super::{Mode, NONE, Profiler, State};
// Named in the documentation.
#[cfg(doc)]
use super::{Config, NodeReport, regions::Node};

/// The start of a call, from [`Profiler::call_enter`] to [`Profiler::call_exit`]: one word,
/// returned in a register (the start time of a timed call stays in the profiler).
#[derive(Clone, Copy, Debug, Default)]
#[must_use = "pass it to call_exit"]
pub struct CallStart(u64);

impl CallStart {
    const TIMED: u64 = 1 << 32;
    const SAMPLED: u64 = 1 << 33;
    const EXIT: u64 = 1 << 34;
    /// Bits 35.. : the depth of the timing stack before this call (timed calls).
    const DEPTH_SHIFT: u32 = 35;

    fn new(slot: usize, timed: bool, sampled: bool, exit: bool, depth: usize) -> CallStart {
        CallStart(
            (slot as u32) as u64
                | if timed { Self::TIMED } else { 0 }
                | if sampled { Self::SAMPLED } else { 0 }
                | if exit { Self::EXIT } else { 0 }
                | ((depth as u64) << Self::DEPTH_SHIFT),
        )
    }

    /// A call counted at entry, with nothing to do at its exit.
    #[inline(always)]
    fn counted() -> CallStart {
        CallStart(0)
    }

    fn slot(self) -> usize {
        self.0 as u32 as usize
    }

    fn timed(self) -> bool {
        self.0 & Self::TIMED != 0
    }

    fn sampled(self) -> bool {
        self.0 & Self::SAMPLED != 0
    }

    fn depth(self) -> usize {
        (self.0 >> Self::DEPTH_SHIFT) as usize
    }

    /// Whether [`Profiler::call_exit`] has anything to do for this call: `false` for most
    /// short calls in [`Mode::Region`] (counted at entry, not chosen for timing) and for calls
    /// not counted. A caller may skip `call_exit` then (the preload library does).
    #[inline(always)]
    pub fn needs_exit(&self) -> bool {
        self.0 & Self::EXIT != 0
    }
}

/// What [`Profiler::try_fast`] did with a call's entry.
#[derive(Clone, Copy, Debug)]
#[must_use = "a timed call needs Profiler::timed_exit, a full one Profiler::call_enter"]
pub enum FastCall {
    /// Counted; nothing to do at its exit.
    Counted,
    /// Counted and chosen for timing: time the call with [`Profiler::timed_enter`] and
    /// [`Profiler::timed_exit`].
    Timed,
    /// Nothing done: the call needs [`Profiler::call_enter`] and [`Profiler::call_exit`].
    Full,
}

/// A call [`Profiler::timed_enter`] started: its function's slot and its start time.
#[derive(Clone, Copy, Debug)]
pub struct TimedCall {
    slot: usize,
    t0: u64,
}

/// A function's calls are all timed while they average [`LONG_CALL_NS`] or more (of late);
/// shorter ones are timed one in `TIME_ONE_IN` at random after the first [`TIME_FIRST`], and
/// their total is estimated from those (unbiased; counts stay exact). Two clock reads cost
/// about 25 ns here (`rdtsc` in a VM), 10% of a 0-byte message between two ranks; at one in
/// 16 the timed calls were half of region mode's cost per call (hpcc on Open MPI 4.1 makes 34
/// million `MPI_Testany` calls a rank, one per 200 ns).
pub const TIME_ONE_IN: u32 = 64;

/// Calls of a (region, function) pair that are always timed (a function called a few dozen
/// times is then measured, not estimated).
pub const TIME_FIRST: u64 = 16;

/// Timed calls in progress at once (calls made from callbacks inside calls nest).
pub(super) const TIMING_DEPTH: usize = 64;

/// The average duration in nanoseconds from which every call of a function is timed (two
/// clock reads are then < 0.5%): an exponential average of its timed calls, the newest
/// weighing 1/8, so that one slow call (a process descheduled for 10 ms) times the next few
/// dozen calls, not the next thousands.
pub const LONG_CALL_NS: f64 = 5_000.0;

/// Functions whose calls region mode can count in a [`HotSlot`] (the first so many of
/// [`Config::functions`]; an MPI library's wrappers number 346-596 here): the slots sit in the
/// engine itself, so that the counted path reaches a slot in one load from the engine's
/// address. A function past them takes the full entry.
const HOT_SLOTS: usize = 1024;

/// Region mode's counts of the innermost region's calls, outside the state's `RefCell`: the
/// counted path reads this and one [`HotSlot`] and writes the slot, three cache lines with
/// the wrapper's own, where a count in the state's [`FnStat`] touched six (floor_trio on
/// mpich-ev, 1 KiB round trips: +23-34 ns against +5-16 for a count in a static array of
/// one line, the null wrapper +11-15). A slot's calls are added to its pair's `FnStat` when
/// it closes: when the region is left or entered ([`Profiler::hot_leave`]), when the
/// pair's calls turn long, at the end.
#[repr(C, align(64))]
pub(super) struct Hot {
    /// Whether the fast path is open; shut in call mode, while a region is entered or left,
    /// at the end.
    open: Cell<bool>,
    /// The random intervals' state (xorshift).
    rng: Cell<u32>,
    /// One per function of [`Config::functions`] (up to [`HOT_SLOTS`]), the innermost
    /// region's. Inline, not boxed: the flag and a slot are then two loads at fixed offsets
    /// from the engine's address, made side by side, where a box put a third load (its
    /// pointer) between the engine's address and the slot.
    slots: [HotSlot; HOT_SLOTS],
}

/// One function's calls in the innermost region ([`Hot`]).
#[derive(Default)]
pub(super) struct HotSlot {
    /// Calls counted here since the slot opened.
    calls: Cell<u64>,
    /// The count at which a call is chosen for timing; 0: closed (every call takes the full
    /// entry: the pair's first [`TIME_FIRST`] calls, long calls, call mode).
    next: Cell<u64>,
}

impl Hot {
    pub(super) fn new(open: bool) -> Hot {
        Hot {
            open: Cell::new(open),
            rng: Cell::new(0x2545_f491),
            slots: std::array::from_fn(|_| HotSlot::default()),
        }
    }

    /// The slot of `function`, if the fast path is open.
    #[inline(always)]
    fn slot(&self, function: usize) -> Option<&HotSlot> {
        if self.open.get() {
            self.slots.get(function)
        } else {
            None
        }
    }

    /// 1..=2·[`TIME_ONE_IN`]−1, as [`State::interval`].
    fn interval(&self) -> u64 {
        let mut x = self.rng.get();
        let i = draw_interval(&mut x);
        self.rng.set(x);
        u64::from(i)
    }
}

impl HotSlot {
    /// Opens the slot for a pair, its next timed call where the pair's last close left it
    /// (or drawn, at the first opening).
    fn open(&self, fs: &FnStat, hot: &Hot) {
        self.calls.set(0);
        self.next.set(match fs.gap {
            0 => hot.interval(),
            g => u64::from(g),
        });
    }

    /// Closes the slot: its calls added to the pair's, the calls left to its next timed one
    /// kept.
    fn close(&self, fs: &mut FnStat) {
        let (calls, next) = (self.calls.replace(0), self.next.replace(0));
        fs.calls += calls;
        fs.gap = u32::try_from(next.saturating_sub(calls)).unwrap_or(u32::MAX);
    }
}

/// Whether region mode counts a pair's calls in its [`HotSlot`]: after its first
/// [`TIME_FIRST`], while its calls are short.
fn counts_fast(fs: &FnStat) -> bool {
    fs.calls >= TIME_FIRST && !fs.always_timed
}

/// Uniform in 1..=2·[`TIME_ONE_IN`]−1 from the xorshift32 state `x` (advanced).
#[inline]
fn draw_interval(x: &mut u32) -> u32 {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    1 + *x % (2 * TIME_ONE_IN - 1)
}

/// Calls of one function in one region, kept apart from the nodes so that a call finds them
/// with one addition (`State::cur_base` + function index) and touches one cache line (region
/// mode's counted calls are in [`Hot`] until its slot closes).
#[derive(Clone, Copy)]
pub(super) struct FnStat {
    pub(super) calls: u64,
    pub(super) ticks: u64,
    pub(super) timed: u64,
    /// Timed calls that were timed because every call was (the first [`TIME_FIRST`], those
    /// made while `always_timed`), and their ticks: part of `timed` and `ticks`.
    pub(super) sure: u64,
    pub(super) sure_ticks: u64,
    /// The function's node (`NONE` until its first call).
    pub(super) node: u32,
    /// The timed calls' recent average in ticks (exponential, weight 1/8 to the newest).
    recent: u32,
    /// Calls long enough of late that measuring each costs nothing worth saving.
    always_timed: bool,
    /// Call mode: the samples waiting for their attribution are attributed after the call,
    /// not before it ([`settles_after`]).
    settle_after: bool,
    /// In its region's [`Node::open`] list.
    listed: bool,
    /// Calls left until the next timed one when its [`HotSlot`] last closed (0: none yet).
    gap: u32,
}

impl FnStat {
    const NEW: FnStat = FnStat {
        calls: 0,
        ticks: 0,
        timed: 0,
        sure: 0,
        sure_ticks: 0,
        node: NONE,
        recent: 0,
        always_timed: false,
        settle_after: false,
        listed: false,
        gap: 0,
    };

    /// One timed call of `dt` ticks; `long`: [`LONG_CALL_NS`] in ticks.
    #[inline(always)]
    fn add_timed(&mut self, dt: u64, long: u64) {
        if self.timed < TIME_FIRST || self.always_timed {
            self.sure += 1;
            self.sure_ticks += dt;
        }
        self.ticks += dt;
        // Decided on the recent calls: one slow call (lazy binding, connection setup, the
        // process descheduled for milliseconds) times a short function's next few dozen
        // calls, not its next thousands (as an average since the start did: 10 ms keeps a
        // 1 µs function above 5 µs for 2,000 calls). The first call starts the average.
        let dt = u32::try_from(dt).unwrap_or(u32::MAX);
        self.recent = if self.timed == 0 {
            dt
        } else {
            self.recent - self.recent / 8 + dt / 8
        };
        self.timed += 1;
        self.always_timed = u64::from(self.recent) > long;
    }
}

impl<'s, L: Level> Profiler<'s, L> {
    /// The entry of MPI function `function` (an index into [`Config::functions`]): counted
    /// under the innermost region; in [`Mode::Call`] a sample attributed to that region.
    ///
    /// The hot path (region mode, a function called [`TIME_FIRST`] times in this region
    /// already, not chosen for timing): one count in the innermost region's slot of the
    /// function, a `Cell` outside the state (no borrow), and one comparison with the count at
    /// which the slot's next call is timed. One call in
    /// [`TIME_ONE_IN`] on average (after each pair's first [`TIME_FIRST`]) reads the clock; see
    /// [`NodeReport::timed_calls`].
    #[inline(always)]
    pub fn call_enter(&self, function: usize) -> CallStart {
        match self.try_call_enter(function) {
            Some(start) => start,
            None => self.call_enter_general(function),
        }
    }

    /// The hot path of [`Profiler::call_enter`] alone: `Some` if the call was counted there
    /// (region mode, a function called [`TIME_FIRST`] times in the innermost region already:
    /// also when chosen for timing, the start then timed), `None` (and nothing done) if it
    /// needs [`Profiler::call_enter`].
    ///
    /// Never panics and never allocates: a caller that must not unwind (the preload library's
    /// C entry points) can call it outside `catch_unwind` and guard only the full entry.
    #[inline(always)]
    pub fn try_call_enter(&self, function: usize) -> Option<CallStart> {
        if let Some(h) = self.hot.slot(function) {
            let c = h.calls.get() + 1;
            if c < h.next.get() {
                h.calls.set(c);
                return Some(CallStart::counted());
            }
            return self.hot_chosen(h, c, function);
        }
        if function >= self.fast_functions {
            return None;
        }
        let mut st = self.state.try_borrow_mut().ok()?;
        let st = &mut *st;
        // `cur_base` is at most NO_BASE (usize::MAX / 2) and `function` is small: no overflow.
        let slot = st.cur_base + function;
        let fs = st.fn_stats.get_mut(slot)?;
        if fs.calls < TIME_FIRST || fs.always_timed || st.countdown <= 1 {
            return None;
        }
        // Call mode without handles has nothing to read: it counts like region mode.
        if self.mode == Mode::Call && !(st.words.is_empty() && st.probes.is_empty()) {
            return self.call_mode_enter(st, slot);
        }
        fs.calls += 1;
        st.countdown -= 1;
        Some(CallStart::counted())
    }

    /// The region-mode part of [`Profiler::try_call_enter`], for a caller that keeps nothing
    /// across the call unless it must:
    /// - [`FastCall::Counted`]: the call was counted and has nothing to do at its exit (region
    ///   mode, a function called [`TIME_FIRST`] times in the innermost region already, not
    ///   chosen for timing);
    /// - [`FastCall::Timed`]: counted and chosen for timing (time it with
    ///   [`Profiler::timed_enter`], which also draws the next call to time, and
    ///   [`Profiler::timed_exit`]);
    /// - [`FastCall::Full`]: nothing done; the call needs [`Profiler::call_enter`].
    ///
    /// The preload library's wrappers tail-call `PMPI_` on `Counted`, keeping no argument
    /// across it, and on `Timed` tail-call a function of their own that times the call through
    /// two small functions shared by every wrapper: the general path (one call in
    /// [`TIME_ONE_IN`], cold each time) cost a 1 KiB round trip on Intel MPI 2% in cache
    /// misses. Never panics and never allocates.
    ///
    /// The preload library's fast path, with [`Profiler::timed_enter`] and
    /// [`Profiler::timed_exit`]; a Rust program reports its calls with
    /// [`Profiler::call_enter`] and [`Profiler::call_exit`].
    #[inline(always)]
    pub fn try_fast(&self, function: usize) -> FastCall {
        // Shut in call mode: its calls all take the full entry (one without handles too:
        // nothing to read there, nothing to save).
        let Some(h) = self.hot.slot(function) else {
            return FastCall::Full;
        };
        let c = h.calls.get() + 1;
        if c < h.next.get() {
            h.calls.set(c);
            return FastCall::Counted;
        }
        // Closed (next 0), or chosen for timing: [`Profiler::timed_enter`] draws the next.
        if h.next.get() == 0 || !self.clock.is_tsc() {
            return FastCall::Full;
        }
        h.calls.set(c);
        FastCall::Timed
    }

    /// [`Profiler::try_call_enter`]'s slot `h` of `function` at its `c`-th call: closed
    /// (`None`: the full entry), or chosen for timing (counted, the timed start).
    #[inline(never)]
    fn hot_chosen(&self, h: &HotSlot, c: u64, function: usize) -> Option<CallStart> {
        if h.next.get() == 0 {
            return None;
        }
        h.next.set(c + self.hot.interval());
        h.calls.set(c);
        let Ok(mut st) = self.state.try_borrow_mut() else {
            return Some(self.reentry());
        };
        let st = &mut *st;
        // Counted already: timed under any slot (one past the table times nothing).
        let slot = st.cur_base.saturating_add(function);
        Some(self.enter_timed(st, slot, function, false))
    }

    /// Closes every open [`HotSlot`] (their calls added to their pairs' [`FnStat`]s, the calls
    /// left to the next timed one kept) and shuts the fast path: before the innermost region
    /// changes, and at the end.
    pub(super) fn hot_leave(&self, st: &mut State<'s, L>) {
        self.hot.open.set(false);
        let State {
            hot_open,
            fn_stats,
            cur_base,
            ..
        } = st;
        for f in hot_open.drain(..) {
            if let (Some(h), Some(fs)) = (
                self.hot.slots.get(f as usize),
                fn_stats.get_mut(cur_base.saturating_add(f as usize)),
            ) {
                h.close(fs);
            }
        }
    }

    /// Opens the slots of the innermost region's functions that count there (after
    /// [`Profiler::hot_leave`] and the change of region) and the fast path (region mode).
    pub(super) fn hot_enter(&self, st: &mut State<'s, L>) {
        if self.mode != Mode::Region || st.stopped {
            return;
        }
        let top = st.innermost();
        let State {
            hot_open,
            fn_stats,
            cur_base,
            nodes,
            ..
        } = st;
        if let Some(node) = nodes.get(top as usize) {
            for &f in &node.open {
                let Some(fs) = fn_stats.get(cur_base.saturating_add(f as usize)) else {
                    continue;
                };
                if let Some(h) = self.hot.slots.get(f as usize)
                    && counts_fast(fs)
                {
                    h.open(fs, &self.hot);
                    hot_open.push(f);
                }
            }
        }
        self.hot.open.set(true);
    }

    /// Opens or closes the [`HotSlot`] of `slot` as its pair now needs (after a call through
    /// the full entry and after a timed call): open in region mode, in the innermost region,
    /// after the pair's first [`TIME_FIRST`] calls, while its calls are short.
    fn hot_sync(&self, st: &mut State<'s, L>, slot: usize) {
        let Some(function) = slot.checked_sub(st.cur_base) else {
            return;
        };
        let Some(h) = self.hot.slots.get(function) else {
            return;
        };
        let top = st.innermost();
        let State {
            hot_open,
            fn_stats,
            nodes,
            stopped,
            ..
        } = st;
        let Some(fs) = fn_stats.get_mut(slot) else {
            return;
        };
        let want = self.mode == Mode::Region && !*stopped && counts_fast(fs);
        let open = h.next.get() != 0;
        if want && !open {
            h.open(fs, &self.hot);
            hot_open.push(function as u32);
            if !fs.listed
                && let Some(n) = nodes.get_mut(top as usize)
            {
                fs.listed = true;
                n.open.push(function as u32);
            }
        } else if !want && open {
            h.close(fs);
            hot_open.retain(|&f| f as usize != function);
        }
    }

    /// The start of a call of `function` that [`Profiler::try_fast`] chose for timing (made
    /// just before it), and the pair's next call to time drawn (until then `try_fast` chooses
    /// each): `None` if the state is in use (a callback's re-entry).
    /// Never panics and never allocates. The preload library's fast path
    /// ([`Profiler::try_fast`]).
    #[inline]
    pub fn timed_enter(&self, function: usize) -> Option<TimedCall> {
        // An open slot only (a closed one stays closed: its calls would be lost).
        if let Some(h) = self.hot.slot(function)
            && h.next.get() != 0
        {
            h.next.set(h.calls.get() + self.hot.interval());
        }
        let Ok(st) = self.state.try_borrow() else {
            self.reentered.fetch_add(1, Relaxed);
            return None;
        };
        let slot = st.cur_base.checked_add(function)?;
        Some(TimedCall {
            slot,
            t0: self.clock.now(),
        })
    }

    /// The exit of a call [`Profiler::timed_enter`] started: its duration added to its
    /// function's time. Never panics and never allocates. The preload library's fast path
    /// ([`Profiler::try_fast`]).
    #[inline]
    pub fn timed_exit(&self, call: TimedCall) {
        let t = self.clock.now();
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return;
        };
        if let Some(fs) = st.fn_stats.get_mut(call.slot) {
            fs.add_timed(t.saturating_sub(call.t0), self.clock.long_call);
            self.hot_sync(&mut st, call.slot);
        }
    }

    /// A whole call of `function` in [`Mode::Call`], its common case in one function: the
    /// call counted, a sample at entry attributed to the innermost region, `call` made (the
    /// state free meanwhile, so that a callback may re-enter), a sample at exit attributed to
    /// the function. Returns `true` if `call` was made (exactly once), `false` (nothing done,
    /// `call` not made) if the call needs [`Profiler::call_enter`] and
    /// [`Profiler::call_exit`]: region mode, no handles, a call chosen for timing, the first
    /// calls of a function in a region, a call from a callback inside a call.
    ///
    /// The same work as `call_enter` and `call_exit` around the call, for a caller that can
    /// hand the call over (the preload library's wrappers): one prologue, one owner test and
    /// no lookup of the function at the exit (callgrind, Open MPI 4.1.4, 5 handles:
    /// ~50 instructions a call less). Never panics and never allocates.
    ///
    /// Its samples are read at once and attributed later (but for the variables of several
    /// elements that do not compare their bytes): before the call of a function that waits
    /// for its peers (a receive, a wait, a collective: the work overlaps the wait), after a
    /// send's (the work overlaps the message's way); so between two calls there are the
    /// reads alone. mpich-ev's 1 KiB ping-pong, paired in one run each: 225 ns a round trip
    /// less for the one-element variables, then 63 less for the others. Every other entry
    /// settles the samples waiting before it samples.
    ///
    /// ```no_run
    /// # use mpit_prof::Profiler;
    /// # fn send() -> i32 { 0 }
    /// # fn demo(p: &Profiler<'_>) {
    /// let mut rc = None;
    /// if !p.try_sampled_call(0, &mut || rc = Some(send())) {
    ///     let start = p.call_enter(0);
    ///     rc = Some(send());
    ///     p.call_exit(start);
    /// }
    /// # }
    /// ```
    #[inline(never)]
    pub fn try_sampled_call(&self, function: usize, call: &mut dyn FnMut()) -> bool {
        if self.mode != Mode::Call || function >= self.fast_functions {
            return false;
        }
        let (node, after) = {
            let Ok(mut st) = self.state.try_borrow_mut() else {
                return false;
            };
            let st = &mut *st;
            if st.in_call != 0 || st.words.is_empty() && st.probes.is_empty() {
                return false;
            }
            // As in `try_call_enter`: no overflow.
            let Some(fs) = st.fn_stats.get_mut(st.cur_base + function) else {
                return false;
            };
            if fs.calls < TIME_FIRST || fs.always_timed || st.countdown <= 1 {
                return false;
            }
            fs.calls += 1;
            let (node, after) = (fs.node, fs.settle_after);
            st.countdown -= 1;
            st.in_call = 1;
            let top = st.innermost();
            sample_deferred(st, top);
            if !after {
                st.settle_whole_call();
            }
            (node, after)
        };
        call();
        match self.state.try_borrow_mut() {
            Ok(mut st) => {
                st.in_call = 0;
                if after {
                    st.settle_whole_call();
                }
                // A stopped state has no handles left: nothing read.
                sample_deferred(&mut st, node);
            }
            // Only if `call` left the state borrowed: not a path of the wrappers.
            Err(_) => {
                self.reentered.fetch_add(1, Relaxed);
            }
        }
        true
    }

    /// [`Profiler::try_call_enter`] in [`Mode::Call`], out of line (the sampling loop stays
    /// out of the callers): a counted call not chosen for timing, with a sample at entry.
    /// Outermost calls only: a call from a callback inside a call goes the general way, and
    /// so does its exit.
    #[inline(never)]
    fn call_mode_enter(&self, st: &mut State<'s, L>, slot: usize) -> Option<CallStart> {
        if st.in_call != 0 {
            return None;
        }
        let fs = st.fn_stats.get_mut(slot)?;
        fs.calls += 1;
        st.countdown -= 1;
        st.in_call = 1;
        let top = st.innermost();
        // Inlined here and in the exit's hot path: one prologue a sample, not two.
        sample_body(st, top);
        Some(CallStart::new(slot, false, true, true, 0))
    }

    /// The exit's hot path: `true` if it did all of [`Profiler::call_exit`]'s work (a call
    /// not chosen for timing: in [`Mode::Call`] the sample attributed to the function),
    /// `false` (and nothing done) if it needs `call_exit`.
    ///
    /// Never panics and never allocates, like [`Profiler::try_call_enter`]. Inlined into its
    /// caller (the preload library's one exit function): a call and a prologue less a call.
    #[inline(always)]
    pub(crate) fn try_call_exit(&self, start: CallStart) -> bool {
        if !start.needs_exit() {
            return true;
        }
        if start.timed() {
            return false;
        }
        let Ok(mut st) = self.state.try_borrow_mut() else {
            return false;
        };
        let st = &mut *st;
        let Some(node) = st.fn_stats.get(start.slot()).map(|fs| fs.node) else {
            return false;
        };
        if self.mode == Mode::Call {
            st.in_call = st.in_call.saturating_sub(1);
        }
        if start.sampled() {
            sample_body(st, node);
        }
        true
    }

    /// Every entry [`Profiler::try_call_enter`] does not take.
    #[inline(never)]
    fn call_enter_general(&self, function: usize) -> CallStart {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            return self.reentry();
        };
        self.enter_general(&mut st, function)
    }

    /// Entry points that found the state in use (re-entrance from a callback).
    #[cold]
    #[inline(never)]
    fn reentry(&self) -> CallStart {
        self.reentered.fetch_add(1, Relaxed);
        CallStart::counted()
    }

    /// The entry of a call chosen for timing (counted already), `sampled` if its entry took a
    /// sample: the start time goes on the timing stack.
    #[inline(never)]
    fn enter_timed(
        &self,
        st: &mut State<'s, L>,
        slot: usize,
        function: usize,
        sampled: bool,
    ) -> CallStart {
        if st.fn_stats.get(slot).is_some_and(|fs| fs.node == NONE) {
            self.first_call(st, slot, function);
        }
        let depth = st.timing.len();
        let timed = depth < TIMING_DEPTH;
        let exit = timed || self.mode == Mode::Call;
        let start = CallStart::new(slot, timed, sampled, exit, depth);
        if timed {
            st.timing.push(self.clock.now());
        }
        start
    }

    /// Every other entry: call mode (a sample at entry), the first call in a region, an index
    /// outside [`Config::functions`].
    #[inline(never)]
    fn enter_general(&self, st: &mut State<'s, L>, function: usize) -> CallStart {
        if function >= self.functions.len() || st.stopped {
            return CallStart::counted();
        }
        let slot = match st.fn_stats.get(st.cur_base + function) {
            Some(_) => st.cur_base + function,
            None => self.first_call_in_region(st, function),
        };
        let sampled = self.mode == Mode::Call && st.in_call == 0;
        if self.mode == Mode::Call {
            if sampled {
                let top = st.innermost();
                self.sample_into(st, top);
            }
            st.in_call += 1;
        }
        let Some(fs) = st.fn_stats.get_mut(slot) else {
            return CallStart::counted();
        };
        fs.calls += 1;
        let timed = fs.always_timed || fs.calls <= TIME_FIRST || {
            st.countdown -= 1;
            st.countdown == 0 && {
                st.countdown = st.interval();
                true
            }
        };
        if self.mode == Mode::Region {
            self.hot_sync(st, slot);
        }
        if timed {
            return self.enter_timed(st, slot, function, sampled);
        }
        if st.fn_stats.get(slot).is_some_and(|fs| fs.node == NONE) {
            self.first_call(st, slot, function);
        }
        CallStart::new(slot, false, sampled, self.mode == Mode::Call, 0)
    }

    /// The first call of any function in the innermost region: its block of per-function
    /// counts. Returns the slot of `function`.
    #[cold]
    #[inline(never)]
    fn first_call_in_region(&self, st: &mut State<'s, L>, function: usize) -> usize {
        let top = st.innermost() as usize;
        let base = st.fn_stats.len();
        st.fn_stats.resize(base + self.functions.len(), FnStat::NEW);
        if let Some(n) = st.nodes.get_mut(top) {
            n.fn_base = base;
        }
        st.cur_base = base;
        base + function
    }

    /// The first call of `function` in the innermost region: its node.
    #[cold]
    #[inline(never)]
    fn first_call(&self, st: &mut State<'s, L>, slot: usize, function: usize) {
        let name = self.functions.get(function).copied().unwrap_or("?");
        let top = st.innermost();
        let node = st.new_node(top, name, NodeKind::Function);
        if let Some(fs) = st.fn_stats.get_mut(slot) {
            fs.node = node;
            fs.settle_after = settles_after(name);
        }
    }

    /// The exit of the call `start` began: timed (if it was chosen) under the region it was
    /// entered in; in [`Mode::Call`] a sample attributed to the function. Nothing to do (and
    /// nothing done) unless [`CallStart::needs_exit`].
    #[inline(always)]
    pub fn call_exit(&self, start: CallStart) {
        if !self.try_call_exit(start) {
            self.exit_slow(start);
        }
    }

    #[inline(never)]
    fn exit_slow(&self, start: CallStart) {
        let t = if start.timed() { self.clock.now() } else { 0 };
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return;
        };
        let st = &mut *st;
        if self.mode == Mode::Call {
            st.in_call = st.in_call.saturating_sub(1);
        }
        let t0 = if start.timed() {
            // Entries of calls whose exits never came (a panic, a callback that left) are
            // dropped with this one.
            let t0 = st.timing.get(start.depth()).copied();
            st.timing.truncate(start.depth());
            t0
        } else {
            None
        };
        let long = self.clock.long_call;
        let Some(fs) = st.fn_stats.get_mut(start.slot()) else {
            return;
        };
        let node = fs.node;
        if let Some(t0) = t0 {
            fs.add_timed(t.saturating_sub(t0), long);
            self.hot_sync(st, start.slot());
        }
        if start.sampled() {
            self.sample_into(st, node);
        }
    }
}

impl<'s, L: Level> State<'s, L> {
    /// The number of short calls until the next timed one: uniform in
    /// 1..=2·[`TIME_ONE_IN`]−1 (mean [`TIME_ONE_IN`]; random, so that no periodic pattern of
    /// the program's calls aliases with it), from xorshift32.
    #[inline]
    fn interval(&mut self) -> u32 {
        draw_interval(&mut self.rng)
    }
}
