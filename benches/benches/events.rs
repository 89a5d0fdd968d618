//! Event dispatch and event streams: through the test provider of `examples/event-provider`
//! (LD_PRELOADed ahead of MPICH), and through a real MPI's own events where it raises them
//! (MPICH built with `--enable-mpit-events`: `mpich-ev`). The bench re-runs itself: once with
//! the provider preloaded, once under `$MPIEXEC -n 2` without it, and ends with the ratios of
//! both runs side by side.
//!
//! With the provider, in one run:
//! - dispatch: a raw C callback registered with `mpit-sys` against a Rust closure registered
//!   with `Registration::on_event`, both reading element 0 and adding it to a counter, each event
//!   raised by the provider's control API (the raise itself is common to both sides); the ratio
//!   closure / raw is printed;
//! - stream throughput: one producer thread raising 2,000,000 events into
//!   `Registration::stream` while the consumer drains, in events per second.
//!
//! With the real MPI's receive-queue events (2 ranks; rank 1 sends messages before rank 0
//! posts the receives, so each raises `unexp_message_enqueued` on arrival and
//! `unexp_message_dequeued` at its receive), in alternating rounds on rank 0: no registration,
//! raw C callbacks, closures, a raw C callback doing a stream's work (copy, source, timestamp),
//! and `Registration::stream`; per message and per receive, with the callbacks' own cost (each
//! side minus the side without registrations) and the ratios closure / raw C and stream / raw C.
//!
//! Run: `scripts/with-mpi mpich-ev cargo bench -p mpit-benches --bench events` (or `mpich`,
//! `mpich5`, `intel`: the provider only). Where the header has no event API (Open MPI) it says
//! so and exits.

#[cfg(mpit_events)]
mod run {
    use std::ffi::c_void;
    use std::hint::black_box;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use criterion::Criterion;
    use mpit_safe::{CbSafety, Mpit, NoObject, sys};

    use super::{SUMMARY, summary};

    /// The test event provider (the ABI build takes it from the environment at run time).
    fn provider() -> String {
        mpit_benches::event_provider().expect(
            "no test event provider: MPIT_EVENT_PROVIDER (scripts/with-mpi abi:IMPL sets it)",
        )
    }

    #[repr(C)]
    struct TestEvent {
        seq: u64,
        value: f64,
        id: i32,
        flag: i8,
    }

    type RaiseAt = unsafe extern "C" fn(i32, i32, u32, *const c_void) -> i32;
    type RaiseMany =
        unsafe extern "C" fn(i32, i32, u32, *const c_void, *const c_void, usize, i64) -> i32;

    static RAW_SUM: AtomicU64 = AtomicU64::new(0);

    /// The raw C-ABI callback: what a C tool would register.
    unsafe extern "C" fn raw_cb(
        instance: sys::MPI_T_event_instance,
        _r: sys::MPI_T_event_registration,
        _s: sys::MPI_T_cb_safety,
        _u: *mut c_void,
    ) {
        let mut v = 0u64;
        // SAFETY: valid instance during the callback; element 0 is a u64.
        unsafe { sys::MPI_T_event_read(instance, 0, (&raw mut v).cast()) };
        RAW_SUM.fetch_add(v, Ordering::Relaxed);
    }

    static RAW_COPIES: AtomicU64 = AtomicU64::new(0);

    /// What a stream callback does, in C terms: copy the event, read its source and
    /// timestamp (no queue): the ceiling a zero-cost stream could reach.
    unsafe extern "C" fn raw_copy_cb(
        instance: sys::MPI_T_event_instance,
        _r: sys::MPI_T_event_registration,
        _s: sys::MPI_T_cb_safety,
        _u: *mut c_void,
    ) {
        let mut buf = [0u8; 64];
        let (mut src, mut ts) = (0, 0);
        // SAFETY: valid instance during the callback; the buffer holds the event's extent.
        unsafe {
            sys::MPI_T_event_copy(instance, buf.as_mut_ptr().cast());
            sys::MPI_T_event_get_source(instance, &mut src);
            sys::MPI_T_event_get_timestamp(instance, &mut ts);
        }
        black_box((buf, src, ts));
        RAW_COPIES.fetch_add(1, Ordering::Relaxed);
    }

    fn ratio_line(name: &str, raw: f64, safe: f64) {
        println!(
            "  {name:<18} raw {raw:>9.1} ns   safe {safe:>9.1} ns   ratio {:.3}",
            safe / raw
        );
    }

    /// Whether this process runs with the provider preloaded.
    pub(crate) fn preloaded() -> bool {
        std::env::var_os("LD_PRELOAD")
            .is_some_and(|p| p.to_string_lossy().contains("mpit_event_provider"))
    }

    /// Runs this bench again with the provider preloaded, its summary lines going to
    /// `summary_file`; `false` if that run failed.
    pub(crate) fn with_provider(summary_file: &std::path::Path) -> bool {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(std::env::args().skip(1))
            .env("LD_PRELOAD", provider())
            .env(SUMMARY, summary_file)
            .status()
            .unwrap()
            .success()
    }

    /// The provider's measurements (in the preloaded process).
    pub(crate) fn main() {
        let mpit = Mpit::init().unwrap();
        // SAFETY: the provider is preloaded; dlopen returns it; signatures of mpit_provider.h.
        let (lib, raise_at, raise_many) = unsafe {
            let lib = libloading::Library::new(provider()).unwrap();
            let a = *lib.get::<RaiseAt>(b"mpit_provider_raise_at\0").unwrap();
            let m = *lib.get::<RaiseMany>(b"mpit_provider_raise_many\0").unwrap();
            (lib, a, m)
        };
        let ev = mpit.event_index("provider_test").unwrap().unwrap();
        let data = TestEvent {
            seq: 1,
            value: 0.5,
            id: 3,
            flag: 0,
        };
        let ctx = sys::MPI_T_CB_REQUIRE_MPI_RESTRICTED as u32;
        let raise = || {
            // SAFETY: `data` has the event type's layout.
            unsafe { raise_at(ev as i32, 0, ctx, (&raw const data).cast()) }
        };
        let mut c = Criterion::default()
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .configure_from_args();
        let mut g = c.benchmark_group("event_dispatch");

        // Raw: a C callback on a registration made with mpit-sys.
        let raw_registration = || {
            let mut reg = std::ptr::null_mut();
            // SAFETY: valid event index, no object, MPI_INFO_NULL, valid out-pointer; the
            // callback has the C signature and touches only a static.
            unsafe {
                assert_eq!(
                    sys::MPI_T_event_handle_alloc(
                        ev as i32,
                        std::ptr::null_mut(),
                        sys::MPI_INFO_NULL,
                        &mut reg
                    ),
                    0
                );
                assert_eq!(
                    sys::MPI_T_event_register_callback(
                        reg,
                        sys::MPI_T_CB_REQUIRE_THREAD_SAFE as sys::MPI_T_cb_safety,
                        sys::MPI_INFO_NULL,
                        std::ptr::null_mut(),
                        Some(raw_cb)
                    ),
                    0
                );
            }
            reg
        };
        // SAFETY: a registration of `raw_registration`, freed once, no free callback.
        let free_raw =
            |reg| unsafe { sys::MPI_T_event_handle_free(reg, std::ptr::null_mut(), None) };
        // Safe: a Rust closure on a Registration, doing what `raw_cb` does.
        let sum = Arc::new(AtomicU64::new(0));
        let safe_registration = || {
            let r = mpit.register_event(ev, &NoObject).unwrap();
            let sum = sum.clone();
            r.on_event(CbSafety::ThreadSafe, move |e| {
                sum.fetch_add(e.read::<u64>(0).unwrap_or(0), Ordering::Relaxed);
            })
            .unwrap();
            r
        };
        let timed = |ops: u64| {
            let t = Instant::now();
            for _ in 0..ops {
                black_box(raise());
            }
            t.elapsed()
        };
        // The headline ratio: both sides in alternating rounds (other load on this 2-core
        // machine hits both alike), then criterion's estimates of each.
        let interleaved = mpit_benches::interleave(
            41,
            100_000,
            |ops| {
                let reg = raw_registration();
                let d = timed(ops);
                free_raw(reg);
                d
            },
            |ops| {
                let r = safe_registration();
                let d = timed(ops);
                drop(r);
                d
            },
        );
        let reg = raw_registration();
        g.bench_function("raw", |b| b.iter(|| black_box(raise())));
        free_raw(reg);
        let r = safe_registration();
        g.bench_function("safe", |b| b.iter(|| black_box(raise())));
        g.finish();
        drop(r);
        assert!(sum.load(Ordering::Relaxed) > 0);
        assert!(RAW_SUM.load(Ordering::Relaxed) > 0);

        // Stream throughput with one producer thread, per ordered source: "monotonic"
        // (clock_gettime per event) and "tsc" (rdtsc).
        const N: i64 = 2_000_000;
        let batch: Vec<TestEvent> = (0..1024u64)
            .map(|i| TestEvent {
                seq: i,
                value: 0.0,
                id: 0,
                flag: 0,
            })
            .collect();
        let raise_n = |source: i32, n: i64| {
            let mut left = n;
            while left > 0 {
                let k = left.min(batch.len() as i64);
                // SAFETY: `batch` holds `k` records of the event's layout at this stride.
                let rc = unsafe {
                    raise_many(
                        ev as i32,
                        source,
                        sys::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE as u32,
                        std::ptr::null(),
                        batch.as_ptr().cast(),
                        std::mem::size_of::<TestEvent>(),
                        k,
                    )
                };
                assert_eq!(rc, 0);
                left -= k;
            }
        };
        let rate = |f: &dyn Fn()| {
            let t = Instant::now();
            f();
            N as f64 / t.elapsed().as_secs_f64()
        };
        // Puts the C callback doing a stream's copy on a raw registration (replacing its own).
        let copy_callback = |reg| {
            // SAFETY: live registration; C-signature callback touching only statics.
            unsafe {
                sys::MPI_T_event_register_callback(
                    reg,
                    sys::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE as sys::MPI_T_cb_safety,
                    sys::MPI_INFO_NULL,
                    std::ptr::null_mut(),
                    Some(raw_copy_cb),
                );
            }
        };
        let mut stream_lines = Vec::new();
        for source in [0, 3] {
            let name = mpit.source_info(source as usize).unwrap().name.to_string();
            // The C ceilings: the provider alone into a raw C callback, and a C callback doing
            // what the stream's callback does (copy, source, timestamp) without a queue.
            let reg = raw_registration();
            let raw_rate = rate(&|| raise_n(source, N));
            copy_callback(reg);
            let copies = RAW_COPIES.load(Ordering::Relaxed);
            let raw_copy_rate = rate(&|| raise_n(source, N));
            assert_eq!(RAW_COPIES.load(Ordering::Relaxed) - copies, N as u64);
            free_raw(reg);
            // The stream's callback alone: a queue large enough for every event, drained after.
            let r = mpit.register_event(ev, &NoObject).unwrap();
            let stream = r.stream(CbSafety::AsyncSignalSafe, N as usize).unwrap();
            let alone_rate = rate(&|| raise_n(source, N));
            assert_eq!((stream.drain().count(), stream.drops()), (N as usize, 0));
            drop(r);
            // Sustained: a producer thread raising N events while this thread drains every
            // millisecond, in 7 alternating rounds against the C copy callback run in the same
            // harness (its producer thread, this thread polling; nothing to drain). A thread of
            // its own costs the C callback too (17 against 21 M events/s on the main thread,
            // measured here): the ceiling for a concurrent consumer is the C copy on a thread.
            let threaded = |drain: &dyn Fn() -> u64| {
                let mut received = 0;
                let start = Instant::now();
                std::thread::scope(|s| {
                    let producer = s.spawn(|| raise_n(source, N));
                    // Drain in batches and let the producer run in between: a consumer
                    // spinning on an empty queue only bounces its cache lines (2 cores here).
                    while !producer.is_finished() {
                        received += drain();
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    received += drain();
                });
                (N as f64 / start.elapsed().as_secs_f64(), received)
            };
            let (mut rates, mut c_rates, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            let (mut received, mut dropped) = (0u64, 0u64);
            for _ in 0..7 {
                let reg = raw_registration();
                copy_callback(reg);
                let (c_rate, _) = threaded(&|| 0);
                free_raw(reg);
                // Registered for its own rounds only (a registration sees every event raised).
                let r = mpit.register_event(ev, &NoObject).unwrap();
                let stream = r.stream(CbSafety::AsyncSignalSafe, 1 << 16).unwrap();
                let (rate, got) = threaded(&|| stream.drain().count() as u64);
                drop(r);
                received += got;
                dropped += stream.drops();
                rates.push(rate);
                c_rates.push(c_rate);
                ratios.push(c_rate / rate);
            }
            for v in [&mut rates, &mut c_rates, &mut ratios] {
                v.sort_by(f64::total_cmp);
            }
            let drops = format!(
                "{} of {} dropped as the queue was full; 7 alternating rounds with the C copy \
                 callback on a producer thread; callback alone {:.1} M/s against the C copy's \
                 {:.1} M/s on the main thread",
                dropped,
                7 * N,
                alone_rate / 1e6,
                raw_copy_rate / 1e6
            );
            mpit_benches::record(&mpit_benches::Row {
                bench: "events",
                op: &format!("stream_{name}"),
                unit: "M events/s",
                raw: c_rates[3] / 1e6,
                safe: rates[3] / 1e6,
                ratio: ratios[3],
                ratio_of_mins: None,
                rounds: 7,
                // ≥ 0.95 × the C callback doing the stream's copy, as a cost ratio.
                target: Some(1.0 / 0.95),
                note: &drops,
            });
            summary(&format!(
                "provider ({}, source \"{name}\"): stream's callback alone against a C callback \
                 doing its copy/source/timestamp: {:.1} against {:.1} M events/s, time ratio \
                 {:.3}",
                mpit_safe::implementation(),
                alone_rate / 1e6,
                raw_copy_rate / 1e6,
                raw_copy_rate / alone_rate
            ));
            stream_lines.push(format!(
                "  stream ({name:>9}) sustained with a concurrent consumer: median {:.1} M \
                 events/s (7 runs: {:.1}-{:.1}; {received} of {} received, {} dropped as the \
                 queue was full) against the C copy callback on a producer thread {:.1} M/s \
                 ({:.1}-{:.1}): median of per-round cost ratios {:.3}; the callback alone: {:.1} \
                 M/s; C ceilings on the main thread: the provider into a raw C callback {:.1} \
                 M/s, a C callback doing the stream's copy/source/timestamp without a queue \
                 {:.1} M/s",
                rates[3] / 1e6,
                rates[0] / 1e6,
                rates[6] / 1e6,
                7 * N,
                dropped,
                c_rates[3] / 1e6,
                c_rates[0] / 1e6,
                c_rates[6] / 1e6,
                ratios[3],
                alone_rate / 1e6,
                raw_rate / 1e6,
                raw_copy_rate / 1e6
            ));
        }

        c.final_summary();
        println!(
            "\n{} {} with the test event provider:",
            sys::IMPLEMENTATION,
            sys::IMPLEMENTATION_VERSION
        );
        match (
            mpit_benches::criterion_mean_ns("event_dispatch/raw"),
            mpit_benches::criterion_mean_ns("event_dispatch/safe"),
        ) {
            (Some(a), Some(b)) => ratio_line("dispatch criterion", a, b),
            _ => println!("  dispatch criterion (no estimates: run without filters)"),
        }
        ratio_line("dispatch rounds", interleaved.raw_ns, interleaved.safe_ns);
        mpit_benches::record(&mpit_benches::Row {
            bench: "events",
            op: "event_dispatch",
            unit: "ns/raise",
            raw: interleaved.raw_ns,
            safe: interleaved.safe_ns,
            ratio: interleaved.ratio,
            ratio_of_mins: Some(interleaved.ratio_of_mins),
            rounds: 41,
            target: Some(1.02),
            note: "test provider",
        });
        println!(
            "  (41 alternating rounds of 100,000 raises per side: median of per-round ratios \
             {:.3}, fastest round safe/raw {:.3})",
            interleaved.ratio, interleaved.ratio_of_mins
        );
        for l in &stream_lines {
            println!("{l}");
        }
        summary(&format!(
            "provider ({}): dispatch closure / raw C {:.3} (median of 41 per-round ratios; \
             raw {:.1} ns, closure {:.1} ns per raise)",
            mpit_safe::implementation(),
            interleaved.ratio,
            interleaved.raw_ns,
            interleaved.safe_ns
        ));
        drop(lib);
    }
}

/// Appends `line` to the summary the parent process prints at the end (the file named by
/// `MPIT_EVENTS_BENCH_SUMMARY`), on rank 0 or in a single process.
#[cfg(mpit_events)]
fn summary(line: &str) {
    use std::io::Write;
    if let Some(path) = std::env::var_os(SUMMARY) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("the summary file");
        writeln!(f, "{line}").expect("write the summary");
    }
}

#[cfg(mpit_events)]
const SUMMARY: &str = "MPIT_EVENTS_BENCH_SUMMARY";

/// The real MPI's receive-queue events, on 2 ranks under `$MPIEXEC`.
#[cfg(mpit_events)]
mod real {
    use std::ffi::c_void;
    use std::hint::black_box;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    // rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    #[cfg(mpit_abi)]
    use mpit_safe::mpi;
    use mpit_safe::{CbSafety, EventStream, Mpit, NoObject, Registration, sys};

    use super::{SUMMARY, summary};

    /// Set in the environment of the ranks.
    pub(crate) const CHILD: &str = "MPIT_EVENTS_BENCH_REAL";
    /// Messages per round and side: fewer than MPICH's 64 shared-memory cells per sender, so
    /// rank 1's sends complete without rank 0 and rank 0's phases are its own work.
    const MESSAGES: usize = 48;
    const ROUNDS: usize = 401;

    /// What rank 0 does while the messages of one round come in.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Side {
        /// No registration: MPI's own cost.
        Bare,
        /// Raw C callbacks: enqueued reads element 0, dequeued reads its timestamp.
        RawC,
        /// Closures doing the same through `Registration::on_event`.
        Closure,
        /// Raw C callbacks doing a stream's work without a queue: copy (where the data can be
        /// read), source, timestamp.
        RawCopy,
        /// `Registration::stream`.
        Stream,
    }
    const SIDES: [Side; 5] = [
        Side::Bare,
        Side::RawC,
        Side::Closure,
        Side::RawCopy,
        Side::Stream,
    ];

    /// Events seen by the raw C callbacks: [enqueued, dequeued].
    static RAW_EVENTS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
    static RAW_SUM: AtomicU64 = AtomicU64::new(0);

    /// `unexp_message_enqueued`, raw: element 0 (the sender's rank) into a sum.
    unsafe extern "C" fn raw_enqueued(
        instance: sys::MPI_T_event_instance,
        _r: sys::MPI_T_event_registration,
        _s: sys::MPI_T_cb_safety,
        _u: *mut c_void,
    ) {
        let mut v: i32 = 0;
        // SAFETY: valid instance during the callback; element 0 is an MPI_INT.
        unsafe { sys::MPI_T_event_read(instance, 0, (&raw mut v).cast()) };
        RAW_SUM.fetch_add(v as u64, Ordering::Relaxed);
        RAW_EVENTS[0].fetch_add(1, Ordering::Relaxed);
    }

    /// `unexp_message_dequeued`, raw: its timestamp into a sum (its data cannot be read on
    /// MPICH: mpit_safe::quirks::MPICH_DEQUEUED_EVENT_DATA).
    unsafe extern "C" fn raw_dequeued(
        instance: sys::MPI_T_event_instance,
        _r: sys::MPI_T_event_registration,
        _s: sys::MPI_T_cb_safety,
        _u: *mut c_void,
    ) {
        let mut ts: sys::MPI_Count = 0;
        // SAFETY: valid instance during the callback; valid out-pointer.
        unsafe { sys::MPI_T_event_get_timestamp(instance, &mut ts) };
        RAW_SUM.fetch_add(ts as u64, Ordering::Relaxed);
        RAW_EVENTS[1].fetch_add(1, Ordering::Relaxed);
    }

    /// A stream's work in C, without the queue: copy the data (enqueued events only: the
    /// dequeued one's cannot be read), read source and timestamp. `user_data` is the index in
    /// `RAW_EVENTS`.
    unsafe extern "C" fn raw_copy(
        instance: sys::MPI_T_event_instance,
        _r: sys::MPI_T_event_registration,
        _s: sys::MPI_T_cb_safety,
        which: *mut c_void,
    ) {
        let mut buf = [0u8; 64];
        let (mut src, mut ts) = (0, 0);
        // SAFETY: valid instance during the callback; the buffer holds the event's extent (8).
        unsafe {
            if which.is_null() {
                sys::MPI_T_event_copy(instance, buf.as_mut_ptr().cast());
            }
            sys::MPI_T_event_get_source(instance, &mut src);
            sys::MPI_T_event_get_timestamp(instance, &mut ts);
        }
        black_box((buf, src, ts));
        RAW_EVENTS[usize::from(!which.is_null())].fetch_add(1, Ordering::Relaxed);
    }

    type RawCb = unsafe extern "C" fn(
        sys::MPI_T_event_instance,
        sys::MPI_T_event_registration,
        sys::MPI_T_cb_safety,
        *mut c_void,
    );

    /// A registration made with `mpit-sys`: `cb` at `level` with `user_data`.
    fn raw_registration(
        event: usize,
        level: i32,
        cb: RawCb,
        user_data: *mut c_void,
    ) -> sys::MPI_T_event_registration {
        let mut reg = std::ptr::null_mut();
        // SAFETY: valid event index of an unbound type, MPI_INFO_NULL, valid out-pointer; the
        // callback has the C signature and touches statics only.
        unsafe {
            assert_eq!(
                sys::MPI_T_event_handle_alloc(
                    event as i32,
                    std::ptr::null_mut(),
                    sys::MPI_INFO_NULL,
                    &mut reg
                ),
                sys::MPI_SUCCESS
            );
            assert_eq!(
                sys::MPI_T_event_register_callback(
                    reg,
                    level as sys::MPI_T_cb_safety,
                    sys::MPI_INFO_NULL,
                    user_data,
                    Some(cb)
                ),
                sys::MPI_SUCCESS
            );
        }
        reg
    }

    /// Rank 0's registrations for one side, released by `Drop`.
    enum Setup<'m> {
        None,
        Raw(Vec<sys::MPI_T_event_registration>),
        /// The registrations (freed on drop) and their streams, if any.
        Safe {
            _regs: Vec<Registration<'m>>,
            streams: Vec<EventStream>,
        },
    }

    impl Drop for Setup<'_> {
        fn drop(&mut self) {
            if let Setup::Raw(regs) = self {
                for reg in regs.drain(..) {
                    // SAFETY: a live registration of `raw_registration`, freed once.
                    let rc =
                        unsafe { sys::MPI_T_event_handle_free(reg, std::ptr::null_mut(), None) };
                    assert_eq!(rc, sys::MPI_SUCCESS);
                }
            }
        }
    }

    /// Events seen by a side's closures or streams: [enqueued, dequeued].
    type Counts = Arc<[AtomicU64; 2]>;

    fn setup<'m>(mpit: &'m Mpit, side: Side, ev: [usize; 2], safe: &Counts) -> Setup<'m> {
        let ts = sys::MPI_T_CB_REQUIRE_THREAD_SAFE;
        let ass = sys::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE;
        match side {
            Side::Bare => Setup::None,
            Side::RawC => Setup::Raw(vec![
                raw_registration(ev[0], ts, raw_enqueued, std::ptr::null_mut()),
                raw_registration(ev[1], ts, raw_dequeued, std::ptr::null_mut()),
            ]),
            Side::RawCopy => Setup::Raw(vec![
                raw_registration(ev[0], ass, raw_copy, std::ptr::null_mut()),
                raw_registration(ev[1], ass, raw_copy, std::ptr::dangling_mut()),
            ]),
            Side::Closure => {
                let enq = mpit.register_event(ev[0], &NoObject).unwrap();
                let n = safe.clone();
                enq.on_event(CbSafety::ThreadSafe, move |e| {
                    RAW_SUM.fetch_add(e.read::<i32>(0).unwrap_or(0) as u64, Ordering::Relaxed);
                    n[0].fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
                let deq = mpit.register_event(ev[1], &NoObject).unwrap();
                let n = safe.clone();
                deq.on_event(CbSafety::ThreadSafe, move |e| {
                    RAW_SUM.fetch_add(e.timestamp().unwrap_or(0), Ordering::Relaxed);
                    n[1].fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
                Setup::Safe {
                    _regs: vec![enq, deq],
                    streams: Vec::new(),
                }
            }
            Side::Stream => {
                let regs: Vec<_> = ev
                    .iter()
                    .map(|&e| mpit.register_event(e, &NoObject).unwrap())
                    .collect();
                let streams = regs
                    .iter()
                    .map(|r| r.stream(CbSafety::AsyncSignalSafe, MESSAGES).unwrap())
                    .collect();
                Setup::Safe {
                    _regs: regs,
                    streams,
                }
            }
        }
    }

    /// Events a side has seen so far: [enqueued, dequeued].
    fn seen(side: Side, s: &Setup<'_>, safe: &Counts, drained: &mut [u64; 2]) -> [u64; 2] {
        let load = |c: &[AtomicU64; 2]| [0, 1].map(|i| c[i].load(Ordering::Relaxed));
        match (side, s) {
            (Side::RawC | Side::RawCopy, _) => load(&RAW_EVENTS),
            (Side::Closure, _) => load(safe),
            (Side::Stream, Setup::Safe { streams, .. }) => {
                for (i, st) in streams.iter().enumerate() {
                    drained[i] += st.drain().count() as u64;
                }
                *drained
            }
            _ => [0, 0],
        }
    }

    /// The times of one round on rank 0, in ns per message, and the events seen in its phases.
    struct Phases {
        /// From the end of the ordering barrier until rank 0's probe finds the last message:
        /// reading the messages from shared memory into the unexpected queue.
        arrival: f64,
        /// The receives, each matching the head of the unexpected queue.
        receive: f64,
        /// Enqueued events raised during the arrival phase, dequeued during the receives.
        events: [u64; 2],
    }

    /// One round of `MESSAGES` messages: rank 1 sends them (tags 0..), a barrier orders them
    /// before rank 0's receives, rank 0 probes until the last has arrived, receives them in
    /// order, and a token from rank 0 ends the round.
    fn exchange(
        world: &SimpleCommunicator,
        sync: &SimpleCommunicator,
        count: &mut dyn FnMut() -> [u64; 2],
    ) -> Option<Phases> {
        sync.barrier();
        if world.rank() == 1 {
            for i in 0..MESSAGES as i32 {
                world.process_at_rank(0).send_with_tag(&i, i);
            }
            sync.barrier();
            let _ = sync.process_at_rank(0).receive::<i32>();
            return None;
        }
        // Rank 1's sends take some 20 us; entering the ordering barrier after them leaves the
        // messages unread in shared memory, for the arrival phase to read.
        std::thread::sleep(std::time::Duration::from_micros(200));
        sync.barrier();
        let c0 = count();
        let t0 = Instant::now();
        while world
            .process_at_rank(1)
            .immediate_probe_with_tag(MESSAGES as i32 - 1)
            .is_none()
        {}
        let t1 = Instant::now();
        let c1 = count();
        let mut v = 0i32;
        for i in 0..MESSAGES as i32 {
            world.process_at_rank(1).receive_into_with_tag(&mut v, i);
        }
        let t2 = Instant::now();
        let c2 = count();
        sync.process_at_rank(1).send(&0i32);
        let per = |d: std::time::Duration| d.as_secs_f64() * 1e9 / MESSAGES as f64;
        Some(Phases {
            arrival: per(t1 - t0),
            receive: per(t2 - t1),
            events: [c1[0] - c0[0], c2[1] - c1[1]],
        })
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// One rank of the real-event bench.
    pub(crate) fn rank() {
        let mpit = Mpit::init().unwrap();
        let universe = mpi::initialize().unwrap();
        let world = universe.world();
        let sync = world.duplicate();
        let rank = world.rank();
        let ev = [
            mpit.event_index("unexp_message_enqueued").unwrap(),
            mpit.event_index("unexp_message_dequeued").unwrap(),
        ];
        let [Some(enq), Some(deq)] = ev else {
            if rank == 0 {
                let line = format!(
                    "real events ({}): none (no unexp_message_enqueued/dequeued event types \
                     after MPI_Init): nothing to measure",
                    mpit_safe::implementation()
                );
                println!("{line}");
                summary(&line);
            }
            drop(mpit);
            return;
        };
        let ev = [enq, deq];
        let safe: Counts = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        // Per side and round: ns per message of each phase.
        let mut arrival = vec![Vec::new(); SIDES.len()];
        let mut receive = vec![Vec::new(); SIDES.len()];
        // Rounds whose enqueued events all came in the arrival phase, per side.
        let mut in_arrival = [0usize; SIDES.len()];
        for round in 0..=ROUNDS {
            // Round 0 warms up; the order of the sides rotates every round.
            for k in 0..SIDES.len() {
                let i = (k + round) % SIDES.len();
                let s = if rank == 0 {
                    setup(&mpit, SIDES[i], ev, &safe)
                } else {
                    Setup::None
                };
                let mut drained = [0u64; 2];
                let before = seen(SIDES[i], &s, &safe, &mut drained);
                let phases = exchange(&world, &sync, &mut || {
                    seen(SIDES[i], &s, &safe, &mut drained)
                });
                let after = seen(SIDES[i], &s, &safe, &mut drained);
                if let Some(p) = phases {
                    if SIDES[i] != Side::Bare {
                        let total = [after[0] - before[0], after[1] - before[1]];
                        assert_eq!(
                            total, [MESSAGES as u64; 2],
                            "{:?}: one enqueued and one dequeued event per message",
                            SIDES[i]
                        );
                        assert_eq!(p.events[1], MESSAGES as u64, "dequeued at the receives");
                    }
                    if round > 0 {
                        arrival[i].push(p.arrival);
                        receive[i].push(p.receive);
                        in_arrival[i] += usize::from(p.events[0] == MESSAGES as u64);
                    }
                }
                drop(s);
            }
        }
        if rank == 0 {
            assert!(RAW_SUM.load(Ordering::Relaxed) > 0);
            report(&arrival, &receive, &in_arrival);
        }
        world.barrier();
        drop(mpit);
    }

    fn report(arrival: &[Vec<f64>], receive: &[Vec<f64>], in_arrival: &[usize]) {
        // The callbacks' own cost: each side minus the bare side of the same round, median.
        let cost = |v: &[Vec<f64>], side: usize| {
            median(v[side].iter().zip(&v[0]).map(|(s, b)| s - b).collect())
        };
        let ratio = |v: &[Vec<f64>], a: usize, b: usize| {
            median(v[a].iter().zip(&v[b]).map(|(x, y)| x / y).collect())
        };
        let implementation = mpit_safe::implementation();
        println!(
            "\n{implementation}, its own receive-queue events on 2 ranks: {ROUNDS} rounds of \
             {MESSAGES} messages per side (order rotating); rank 0, medians, ns per message:"
        );
        println!(
            "  {:<44} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "", "bare", "raw C", "closure", "C copy", "stream"
        );
        for (name, v) in [
            ("arrival (1 unexp_message_enqueued each)", arrival),
            ("receive (1 unexp_message_dequeued each)", receive),
        ] {
            let m: Vec<f64> = v.iter().map(|x| median(x.clone())).collect();
            println!(
                "  {name:<44} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
                m[0], m[1], m[2], m[3], m[4]
            );
            println!(
                "  {:<44} {:>8} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
                "  minus bare, same round",
                "",
                cost(v, 1),
                cost(v, 2),
                cost(v, 3),
                cost(v, 4)
            );
        }
        println!(
            "  (rounds whose {MESSAGES} enqueued events all came in the arrival phase: raw C \
             {}, closure {}, C copy {}, stream {} of {ROUNDS}; the rest arrived during the \
             ordering barrier)",
            in_arrival[1], in_arrival[2], in_arrival[3], in_arrival[4]
        );
        for (phase, v) in [("arrival", arrival), ("receive", receive)] {
            let line = format!(
                "real events ({implementation}), {phase} phase: closure / raw C {:.3} per \
                 message (callbacks' own cost {:.1} against {:.1} ns); stream / C copy {:.3} \
                 ({:.1} against {:.1} ns)",
                ratio(v, 2, 1),
                cost(v, 2),
                cost(v, 1),
                ratio(v, 4, 3),
                cost(v, 4),
                cost(v, 3),
            );
            println!("  {line}");
            summary(&line);
        }
    }

    /// Runs the ranks under `$MPIEXEC -n 2`, rank 0's summary lines going to `summary_file`;
    /// `false` if the job failed.
    pub(crate) fn launch(summary_file: &std::path::Path) -> bool {
        let words =
            mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
        let mut cmd = std::process::Command::new(&words[0]);
        cmd.args(&words[1..])
            .args(["-n", "2", "env", &format!("{CHILD}=1")])
            .arg(std::env::current_exe().unwrap())
            .env(SUMMARY, summary_file);
        cmd.status().is_ok_and(|s| s.success())
    }
}

#[cfg(mpit_events)]
fn main() {
    if std::env::var_os(real::CHILD).is_some() {
        return real::rank();
    }
    if run::preloaded() {
        return run::main();
    }
    // The parent: the provider's run, the real MPI's run, then both summaries together.
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let path = std::path::Path::new(&dir).join("events-bench-summary.txt");
    let _ = std::fs::remove_file(&path);
    let provider_ok = run::with_provider(&path);
    let real_ok = real::launch(&path);
    println!("\nEvents, closure against raw C in the same run:");
    for line in std::fs::read_to_string(&path).unwrap_or_default().lines() {
        println!("  {line}");
    }
    if !(provider_ok && real_ok) {
        eprintln!("a run failed (provider: {provider_ok}, real MPI: {real_ok})");
        std::process::exit(1);
    }
}

#[cfg(not(mpit_events))]
fn main() {
    println!(
        "{}: no MPI-4 event API in this header: event benches skipped",
        mpit_safe::sys::IMPLEMENTATION
    );
}
