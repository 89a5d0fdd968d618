//! Event dispatch and event streams, through the test provider of `examples/event-provider`
//! (LD_PRELOADed ahead of MPICH; the bench re-runs itself with it). In one run:
//! - dispatch: a raw C callback registered with `mpit-sys` against a Rust closure registered
//!   with `Registration::on_event`, both reading element 0 and adding it to a counter, each event
//!   raised by the provider's control API (the raise itself is common to both sides); the ratio
//!   closure / raw is printed;
//! - stream throughput: one producer thread raising 2,000,000 events into
//!   `Registration::stream` while the consumer drains, in events per second.
//!
//! Run: `scripts/with-mpi mpich cargo bench -p mpit-benches --bench events`. Where the header
//! has no event API (Open MPI) it says so and exits.

#[cfg(mpit_events)]
mod run {
    use std::ffi::c_void;
    use std::hint::black_box;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use criterion::Criterion;
    use mpit_safe::{CbSafety, Mpit, NoObject, sys};

    const PROVIDER: &str = env!("MPIT_EVENT_PROVIDER");

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

    pub(crate) fn main() {
        if std::env::var_os("LD_PRELOAD")
            .is_none_or(|p| !p.to_string_lossy().contains("mpit_event_provider"))
        {
            let status = std::process::Command::new(std::env::current_exe().unwrap())
                .args(std::env::args().skip(1))
                .env("LD_PRELOAD", PROVIDER)
                .status()
                .unwrap();
            std::process::exit(status.code().unwrap_or(1));
        }
        let mpit = Mpit::init().unwrap();
        // SAFETY: the provider is preloaded; dlopen returns it; signatures of mpit_provider.h.
        let (lib, raise_at, raise_many) = unsafe {
            let lib = libloading::Library::new(PROVIDER).unwrap();
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
        let ctx = 1u32; // MPI_T_CB_REQUIRE_MPI_RESTRICTED
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
                        3,
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
        let mut stream_lines = Vec::new();
        for source in [0, 3] {
            let name = mpit.source_info(source as usize).unwrap().name.to_string();
            // The C ceilings: the provider alone into a raw C callback, and a C callback doing
            // what the stream's callback does (copy, source, timestamp) without a queue.
            let reg = raw_registration();
            let raw_rate = rate(&|| raise_n(source, N));
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
            // Sustained, with a consumer draining concurrently, median of 5 runs.
            let r = mpit.register_event(ev, &NoObject).unwrap();
            let stream = r.stream(CbSafety::AsyncSignalSafe, 1 << 16).unwrap();
            let mut rates = Vec::new();
            let mut received = 0u64;
            for _ in 0..5 {
                let start = Instant::now();
                std::thread::scope(|s| {
                    let producer = s.spawn(|| raise_n(source, N));
                    // Drain in batches and let the producer run in between: a consumer
                    // spinning on an empty queue only bounces its cache lines (2 cores here).
                    while !producer.is_finished() {
                        received += stream.drain().count() as u64;
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    received += stream.drain().count() as u64;
                });
                rates.push(N as f64 / start.elapsed().as_secs_f64());
            }
            rates.sort_by(f64::total_cmp);
            stream_lines.push(format!(
                "  stream ({name:>9}) sustained with a concurrent consumer: median {:.1} M \
                 events/s (5 runs: {:.1}-{:.1}; {received} of {} received, {} dropped as the \
                 queue was full); the callback alone: {:.1} M/s; C ceilings: the provider into \
                 a raw C callback {:.1} M/s, a C callback doing the stream's \
                 copy/source/timestamp without a queue {:.1} M/s",
                rates[2] / 1e6,
                rates[0] / 1e6,
                rates[4] / 1e6,
                5 * N,
                stream.drops(),
                alone_rate / 1e6,
                raw_rate / 1e6,
                raw_copy_rate / 1e6
            ));
            drop(r);
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
        println!(
            "  (41 alternating rounds of 100,000 raises per side: median of per-round ratios \
             {:.3}, fastest round safe/raw {:.3})",
            interleaved.ratio, interleaved.ratio_of_mins
        );
        for l in &stream_lines {
            println!("{l}");
        }
        drop(lib);
    }
}

fn main() {
    #[cfg(mpit_events)]
    run::main();
    #[cfg(not(mpit_events))]
    println!(
        "{}: no MPI-4 event API in this header: event benches skipped",
        mpit_safe::sys::IMPLEMENTATION
    );
}
