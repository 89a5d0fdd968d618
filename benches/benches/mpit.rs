//! The safe API against the raw C call, measured side by side in one run (criterion), with the
//! ratio safe / raw printed at the end for each operation:
//! pvar read, pvar read_reset, pvar start/stop, cvar read, and the info query of every cvar.
//!
//! Run: `scripts/with-mpi openmpi cargo bench -p mpit-benches` (any implementation; operations
//! an implementation cannot do, e.g. pvars on MPICH builds without any, are skipped and said).
//! On the four implementations here every readable pvar is continuous and none is atomic, so
//! start/stop and read_reset are skipped everywhere: MPI refuses both for such variables.

use std::ffi::c_void;
use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use mpit_safe::{Bind, Datatype, Mpit, NoObject, PvarInfo, sys};

/// Raw handles on the same variable as the safe one, in their own session.
struct Raw {
    session: sys::MPI_T_pvar_session,
    handle: sys::MPI_T_pvar_handle,
}

impl Raw {
    fn pvar(index: usize) -> Raw {
        let mut session = sys::MPI_T_PVAR_SESSION_NULL;
        let mut handle = sys::MPI_T_PVAR_HANDLE_NULL;
        let mut count = 0;
        // SAFETY: MPI_T is initialised (a token lives for the whole run); valid out-pointers;
        // the variable is unbound (null object).
        unsafe {
            assert_eq!(
                sys::MPI_T_pvar_session_create(&mut session),
                sys::MPI_SUCCESS
            );
            assert_eq!(
                sys::MPI_T_pvar_handle_alloc(
                    session,
                    index as i32,
                    std::ptr::null_mut(),
                    &mut handle,
                    &mut count
                ),
                sys::MPI_SUCCESS
            );
        }
        assert_eq!(count, 1);
        Raw { session, handle }
    }
}

fn unbound_u64_pvar(mpit: &Mpit) -> Option<PvarInfo> {
    mpit.pvars().ok()?.entries.into_iter().find(|v| {
        v.bind == Bind::NoObject
            && matches!(
                v.datatype,
                Datatype::UnsignedLong | Datatype::UnsignedLongLong
            )
    })
}

/// What a C caller does with a read: checks the return code and uses the value.
#[inline(always)]
fn consume_raw<T>(rc: std::ffi::c_int, x: T) {
    if rc != sys::MPI_SUCCESS {
        black_box(rc);
    }
    black_box(x);
}

/// What a Rust caller does with a read: matches the result and uses the value (black-boxing
/// the whole `Result` would make the benchmark store the enum to memory, which no caller does).
#[inline(always)]
fn consume<T>(r: mpit_safe::Result<T>) {
    match r {
        Ok(v) => {
            black_box(v);
        }
        Err(e) => {
            black_box(e);
        }
    }
}

/// Times `ops` calls of `f`.
fn timed(ops: u64, mut f: impl FnMut()) -> Duration {
    let t = std::time::Instant::now();
    for _ in 0..ops {
        f();
    }
    t.elapsed()
}

fn bench(
    c: &mut Criterion,
    mpit: &Mpit,
    pairs: &mut Vec<(String, String, String)>,
    rounds: &mut Vec<(String, mpit_benches::Interleaved)>,
) {
    let mut pair = |group: &str| {
        pairs.push((
            group.to_owned(),
            format!("{group}/raw"),
            format!("{group}/safe"),
        ))
    };

    // Performance variables.
    match unbound_u64_pvar(mpit) {
        None => eprintln!("no unbound MPI_UNSIGNED_LONG[_LONG] pvar here: pvar benches skipped"),
        Some(v) => {
            eprintln!("pvar benches on {} ({})", v.name, v.class);
            let session = mpit.session().unwrap();
            let h = session.handle::<u64>(v.index).unwrap();
            let raw = Raw::pvar(v.index);
            // A stopped non-continuous variable is refused by MPICH (MPI_T_ERR_INVALID): start
            // both handles so that both sides time a read, not an error return.
            if !v.continuous {
                h.start().unwrap();
                // SAFETY: live session and handle.
                let rc = unsafe { sys::MPI_T_pvar_start(raw.session, raw.handle) };
                assert_eq!(rc, sys::MPI_SUCCESS);
            }
            let mut first = 0u64;
            // SAFETY: live session and handle of a one-element u64 variable.
            let rc =
                unsafe { sys::MPI_T_pvar_read(raw.session, raw.handle, (&raw mut first).cast()) };
            assert_eq!(rc, sys::MPI_SUCCESS, "raw read of {}", v.name);
            h.read().expect("safe read");
            let mut g = c.benchmark_group("pvar_read");
            g.bench_function("raw", |b| {
                let mut x = 0u64;
                b.iter(|| {
                    // SAFETY: live session/handle of a one-element u64 variable.
                    let rc = unsafe {
                        sys::MPI_T_pvar_read(raw.session, raw.handle, (&raw mut x).cast::<c_void>())
                    };
                    consume_raw(rc, x)
                })
            });
            g.bench_function("safe", |b| b.iter(|| consume(h.read())));
            g.finish();
            pair("pvar_read");
            rounds.push((
                "pvar_read".into(),
                mpit_benches::interleave(
                    41,
                    200_000,
                    |ops| {
                        let mut x = 0u64;
                        timed(ops, || {
                            // SAFETY: live session and handle of a one-element u64 variable.
                            let rc = unsafe {
                                sys::MPI_T_pvar_read(raw.session, raw.handle, (&raw mut x).cast())
                            };
                            consume_raw(rc, x);
                        })
                    },
                    |ops| {
                        timed(ops, || {
                            consume(h.read());
                        })
                    },
                ),
            ));

            if !v.readonly && v.atomic {
                let mut g = c.benchmark_group("pvar_read_reset");
                g.bench_function("raw", |b| {
                    let mut x = 0u64;
                    b.iter(|| {
                        // SAFETY: as above.
                        let rc = unsafe {
                            sys::MPI_T_pvar_readreset(raw.session, raw.handle, (&raw mut x).cast())
                        };
                        consume_raw(rc, x)
                    })
                });
                g.bench_function("safe", |b| b.iter(|| consume(h.read_reset())));
                g.finish();
                pair("pvar_read_reset");
            } else {
                eprintln!("{} is read-only or not atomic: read_reset skipped", v.name);
            }

            if !v.continuous {
                let mut g = c.benchmark_group("pvar_start_stop");
                g.bench_function("raw", |b| {
                    b.iter(|| {
                        // SAFETY: as above.
                        unsafe {
                            black_box(sys::MPI_T_pvar_start(raw.session, raw.handle));
                            black_box(sys::MPI_T_pvar_stop(raw.session, raw.handle));
                        }
                    })
                });
                g.bench_function("safe", |b| {
                    b.iter(|| {
                        black_box(h.start()).ok();
                        black_box(h.stop()).ok();
                    })
                });
                g.finish();
                pair("pvar_start_stop");
            } else {
                eprintln!("{} is continuous: start/stop skipped", v.name);
            }
        }
    }

    // Control variables.
    let cvars = mpit.cvars().unwrap();
    if let Some(v) = cvars
        .entries
        .iter()
        .find(|v| v.bind == Bind::NoObject && v.datatype == Datatype::Int)
    {
        let h = mpit.cvar_handle::<i32>(v.index).unwrap();
        let mut raw = sys::MPI_T_CVAR_HANDLE_NULL;
        let mut count = 0;
        // SAFETY: MPI_T initialised; unbound variable; valid out-pointers.
        let rc = unsafe {
            sys::MPI_T_cvar_handle_alloc(v.index as i32, std::ptr::null_mut(), &mut raw, &mut count)
        };
        assert_eq!(
            (rc, count),
            (sys::MPI_SUCCESS, 1),
            "raw handle for {}",
            v.name
        );
        let mut probe = 0i32;
        // SAFETY: live handle of a one-element int variable.
        let rc = unsafe { sys::MPI_T_cvar_read(raw, (&raw mut probe).cast()) };
        assert_eq!(rc, sys::MPI_SUCCESS, "raw read of {}", v.name);
        assert_eq!(
            Ok(probe),
            h.read(),
            "raw and safe reads of {} differ",
            v.name
        );
        let mut g = c.benchmark_group("cvar_read");
        g.bench_function("raw", |b| {
            let mut x = 0i32;
            // SAFETY: live handle of a one-element int variable.
            b.iter(|| {
                // SAFETY: as above.
                let rc = unsafe { sys::MPI_T_cvar_read(raw, (&raw mut x).cast()) };
                consume_raw(rc, x)
            })
        });
        g.bench_function("safe", |b| b.iter(|| consume(h.read())));
        g.finish();
        pair("cvar_read");
        rounds.push((
            "cvar_read".into(),
            mpit_benches::interleave(
                41,
                200_000,
                |ops| {
                    let mut x = 0i32;
                    timed(ops, || {
                        // SAFETY: live handle of a one-element int variable.
                        let rc = unsafe { sys::MPI_T_cvar_read(raw, (&raw mut x).cast()) };
                        consume_raw(rc, x);
                    })
                },
                |ops| {
                    timed(ops, || {
                        consume(h.read());
                    })
                },
            ),
        ));
    }

    // The info query of every cvar: the C way (length query, then fetch of name and
    // description) against `Mpit::cvar_info` (owned records, enums resolved).
    let n = cvars.count;
    let mut g = c.benchmark_group("cvar_info_all");
    g.sample_size(10);
    g.bench_function("raw", |b| {
        b.iter(|| {
            for i in 0..n as i32 {
                let (mut nl, mut dl, mut verb, mut bind, mut scope) = (0, 0, 0, 0, 0);
                let mut dt = sys::MPI_DATATYPE_NULL;
                let mut en = sys::MPI_T_ENUM_NULL;
                // SAFETY: length query with null buffers, then a fetch into buffers of the
                // returned lengths.
                unsafe {
                    sys::MPI_T_cvar_get_info(
                        i,
                        std::ptr::null_mut(),
                        &mut nl,
                        &mut verb,
                        &mut dt,
                        &mut en,
                        std::ptr::null_mut(),
                        &mut dl,
                        &mut bind,
                        &mut scope,
                    );
                    let mut name = vec![0 as std::ffi::c_char; nl.max(1) as usize];
                    let mut desc = vec![0 as std::ffi::c_char; dl.max(1) as usize];
                    sys::MPI_T_cvar_get_info(
                        i,
                        name.as_mut_ptr(),
                        &mut nl,
                        &mut verb,
                        &mut dt,
                        &mut en,
                        desc.as_mut_ptr(),
                        &mut dl,
                        &mut bind,
                        &mut scope,
                    );
                    black_box((name, desc));
                }
            }
        })
    });
    g.bench_function("safe", |b| {
        b.iter(|| {
            for i in 0..n {
                black_box(mpit.cvar_info(i)).ok();
            }
        })
    });
    g.finish();
    pair("cvar_info_all");
    let _ = NoObject;
}

fn main() {
    // MPI_Init first (rsmpi): Open MPI 4.1 refuses pvar handles before it.
    let universe = mpi::initialize().expect("MPI_Init");
    let mpit = Mpit::init().unwrap();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let mut pairs = Vec::new();
    let mut rounds = Vec::new();
    bench(&mut c, &mpit, &mut pairs, &mut rounds);
    c.final_summary();
    println!(
        "\n{} {}: safe / raw (criterion mean)",
        sys::IMPLEMENTATION,
        sys::IMPLEMENTATION_VERSION
    );
    for (group, raw, safe) in pairs {
        match (
            mpit_benches::criterion_mean_ns(&raw),
            mpit_benches::criterion_mean_ns(&safe),
        ) {
            (Some(r), Some(s)) => println!(
                "  {group:<18} raw {r:>12.1} ns   safe {s:>12.1} ns   ratio {:.3}",
                s / r
            ),
            _ => println!("  {group:<18} (no estimates: run without --test / filters)"),
        }
    }
    println!("safe / raw in 41 alternating rounds of 200,000 calls per side (median):");
    for (group, r) in rounds {
        println!(
            "  {group:<18} raw {:>12.1} ns   safe {:>12.1} ns   ratio {:.3} (fastest rounds {:.3})",
            r.raw_ns, r.safe_ns, r.ratio, r.ratio_of_mins
        );
    }
    drop(mpit);
    drop(universe);
}
