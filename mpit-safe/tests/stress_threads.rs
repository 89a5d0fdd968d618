//! `MPI_THREAD_MULTIPLE` under load: 4 threads share one token and read every readable
//! performance variable (each in a session of its own) and control variable concurrently,
//! after `MPI_Init_thread(MPI_THREAD_MULTIPLE)`. Every read must succeed, counters must never
//! go backwards within a thread (MPI-4.1 §16.3.7: a counter only increases), and the resident
//! set size must stay flat after a warm-up. Own test binary: MPI is initialised at
//! `MPI_THREAD_MULTIPLE` here, not at the single level of the other tests.

use mpit_test_support::process::rss;

use mpit_safe::level::Multiple;
use mpit_safe::{Bind, Mpit, NoObject, PvarClass, sys};

const THREADS: usize = 4;
const ROUNDS: usize = 2_000;

/// One thread's part: `rounds` rounds over every variable; returns the reads made.
fn reader(
    mpit: &Mpit<Multiple>,
    cvars: &[usize],
    pvars: &[(usize, bool, bool)],
    rounds: usize,
) -> u64 {
    let session = mpit.session().unwrap();
    let handles: Vec<_> = pvars
        .iter()
        .map(|&(i, continuous, _)| {
            let h = session.dyn_handle(i, &NoObject).unwrap();
            if !continuous {
                h.start().unwrap();
            }
            h
        })
        .collect();
    let cvar_handles: Vec<_> = cvars
        .iter()
        .map(|&i| mpit.dyn_cvar_handle(i, &NoObject).unwrap())
        .collect();
    let mut last = vec![0f64; handles.len()];
    let mut reads = 0;
    for _ in 0..rounds {
        for (k, h) in handles.iter().enumerate() {
            let values = h.read_values().unwrap();
            reads += 1;
            if pvars[k].2 {
                let v = values[0].to_f64_lossy().unwrap_or(0.0);
                assert!(
                    v >= last[k],
                    "counter {} went back: {} -> {v}",
                    h.info().name,
                    last[k]
                );
                last[k] = v;
            }
        }
        for h in &cvar_handles {
            std::hint::black_box(h.read_values().unwrap());
            reads += 1;
        }
    }
    reads
}

#[test]
fn four_threads_read_pvars_and_cvars() {
    let mut provided = 0;
    // SAFETY: the only MPI_Init of this test binary (one test); null argc/argv.
    let rc = unsafe {
        sys::MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            sys::MPI_THREAD_MULTIPLE,
            &mut provided,
        )
    };
    assert_eq!(rc, sys::MPI_SUCCESS);
    let implementation = mpit_safe::implementation();
    let mpit = match Mpit::<Multiple>::init_thread() {
        Ok(m) => m,
        Err(e) => panic!("{implementation}: MPI_T at MPI_THREAD_MULTIPLE: {e}"),
    };
    // Unbound, readable variables (a few dozen cvars, every pvar that starts and reads).
    let cvars: Vec<usize> = mpit
        .cvars()
        .unwrap()
        .entries
        .iter()
        .filter(|v| v.bind == Bind::NoObject && v.datatype.is_integer())
        .filter(|v| {
            mpit.dyn_cvar_handle(v.index, &NoObject)
                .and_then(|h| h.read_values())
                .is_ok()
        })
        .map(|v| v.index)
        .take(32)
        .collect();
    let probe = mpit.session().unwrap();
    let pvars: Vec<(usize, bool, bool)> = mpit
        .pvars()
        .unwrap()
        .entries
        .iter()
        .filter(|v| v.bind == Bind::NoObject)
        .filter(|v| {
            probe
                .dyn_handle(v.index, &NoObject)
                .is_ok_and(|h| (v.continuous || h.start().is_ok()) && h.read_values().is_ok())
        })
        .map(|v| (v.index, v.continuous, v.class == PvarClass::Counter))
        .collect();
    drop(probe);
    assert!(
        !cvars.is_empty(),
        "{implementation}: no readable integer cvar"
    );
    println!(
        "{implementation}: {THREADS} threads, {} cvars and {} pvars each round",
        cvars.len(),
        pvars.len()
    );
    // Warm-up: one round per thread, then the measured rounds.
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| reader(&mpit, &cvars, &pvars, ROUNDS / 10));
        }
    });
    let before = rss();
    let reads: u64 = std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| s.spawn(|| reader(&mpit, &cvars, &pvars, ROUNDS)))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    let after = rss();
    let grown = after.saturating_sub(before);
    println!(
        "{implementation}: {reads} concurrent reads; RSS {} KiB after the warm-up, {} KiB at \
         the end (+{} KiB)",
        before / 1024,
        after / 1024,
        grown / 1024
    );
    assert!(
        grown <= 2 << 20,
        "RSS grew by {grown} bytes under concurrent reads"
    );
    drop(mpit);
    // SAFETY: every token is gone (the process-lifetime anchor stays, as the library expects).
    unsafe { sys::MPI_Finalize() };
}
