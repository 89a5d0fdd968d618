//! The safe API against the raw C call, measured side by side in one run (criterion), with the
//! ratio safe / raw printed at the end for each operation:
//! pvar read, pvar read_reset, pvar start/stop, cvar read, and the info query of every cvar,
//! pvar and category (against a C loop with fixed name and description buffers that begins with
//! the count, `MPI_T_*_get_num`, as every listing and visit does), as owned listings
//! (`*_info_all`) and as visits of borrowed records (`*_visit_all`).
//!
//! Run: `scripts/with-mpi openmpi cargo bench -p mpit-benches` (any implementation; a filter
//! after `--` selects criterion's groups, e.g. `-- _all` the info groups, while the alternating
//! rounds of every group always run; operations
//! an implementation cannot do, e.g. pvars on MPICH builds without any, are skipped and said).
//! On the four implementations here every readable pvar is continuous and none is atomic, so
//! start/stop and read_reset are skipped everywhere: MPI refuses both for such variables.

use std::ffi::{c_char, c_int, c_void};
use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::Duration;

use criterion::Criterion;
#[cfg(mpit_abi)]
use mpit_benches::abi_c as sys;
// rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;
#[cfg(not(mpit_abi))]
use mpit_safe::sys;
use mpit_safe::{Bind, Datatype, Mpit, NoObject, PvarInfo};

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

    info(c, mpit, pairs, rounds);
    let _ = NoObject;
}

/// Name and description buffers of a C tool's listing loop: fixed, on the stack, declared
/// once (the fair floor for a listing; a longer string is cut, which C does not notice).
const C_NAME: usize = 256;
const C_DESC: usize = 1024;
/// Member arrays of the C category loop (more members than this are not asked for).
const C_MEMBERS: usize = 4096;

/// One info group: criterion's `raw` and `safe`, and alternating rounds of about 2 ms per side
/// ([`info_rounds`]; the ratio that stands up to a loaded machine).
fn info_group(
    c: &mut Criterion,
    pairs: &mut Vec<(String, String, String)>,
    rounds: &mut Vec<(String, mpit_benches::Interleaved)>,
    group: &str,
    raw: impl Fn(),
    safe: impl Fn(),
) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.bench_function("raw", |b| b.iter(&raw));
    g.bench_function("safe", |b| b.iter(&safe));
    g.finish();
    pairs.push((
        group.into(),
        format!("{group}/raw"),
        format!("{group}/safe"),
    ));
    rounds.push((
        group.into(),
        info_rounds(|ops| timed(ops, &raw), |ops| timed(ops, &safe)),
    ));
}

/// Rounds of an info operation: 21 alternating rounds of about [`INFO_ROUND`] per side
/// ([`mpit_benches::ops_for`]; at least 10 listings).
fn info_rounds(
    mut raw: impl FnMut(u64) -> Duration,
    mut safe: impl FnMut(u64) -> Duration,
) -> mpit_benches::Interleaved {
    let ops = mpit_benches::ops_for(INFO_ROUND, 10, &mut raw, &mut safe);
    mpit_benches::interleave(INFO_ROUNDS, ops, raw, safe)
}

/// How long one side's round of an info operation lasts, about.
const INFO_ROUND: Duration = Duration::from_millis(2);
/// Alternating rounds of an info operation.
const INFO_ROUNDS: usize = 21;

/// A C record keeping a variable's strings: copies out of the fixed buffers (`strdup`).
type Kept = (Vec<u8>, Vec<u8>);

/// The bytes of a fixed buffer up to its NUL (`strlen`).
fn c_str(buf: &[c_char]) -> &[u8] {
    // SAFETY: `c_char` is `i8` or `u8`: one byte, any bit pattern valid as `u8`.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), buf.len()) };
    bytes.split(|&b| b == 0).next().unwrap_or(bytes)
}

/// The count a C listing begins with, through `get_num` (`MPI_T_*_get_num`), as every listing
/// and visit of ours does: both sides of an info bench query it each time.
#[inline(always)]
fn c_count(get_num: impl FnOnce(&mut c_int) -> c_int) -> c_int {
    let mut n = 0;
    let rc = get_num(&mut n);
    consume_raw(rc, n);
    if rc == sys::MPI_SUCCESS { n } else { 0 }
}

/// Every index below `n` as a C tool lists: one `MPI_T_*_get_info` call each through
/// `get(index, name, name length, description, description length)` into fixed buffers,
/// which returns the return code and what else it read, then `then(index, name, description,
/// what else)` after a success.
#[inline(always)]
fn c_infos<T>(
    n: c_int,
    mut get: impl FnMut(c_int, *mut c_char, &mut c_int, *mut c_char, &mut c_int) -> (c_int, T),
    mut then: impl FnMut(c_int, &[c_char], &[c_char], T),
) {
    let mut name = [0 as c_char; C_NAME];
    let mut desc = [0 as c_char; C_DESC];
    for i in 0..n {
        let (mut nl, mut dl) = (C_NAME as c_int, C_DESC as c_int);
        let (rc, rest) = get(i, name.as_mut_ptr(), &mut nl, desc.as_mut_ptr(), &mut dl);
        consume_raw(rc, (&name, &desc, nl, dl));
        if rc == sys::MPI_SUCCESS {
            then(i, &name, &desc, rest);
        }
    }
}

/// An enumeration as a C listing that owns its records keeps it: the name and every item's
/// value and name, copied out.
type KeptEnum = (Vec<u8>, Vec<(c_int, Vec<u8>)>);

/// What a C listing that owns its records keeps: each variable's strings, and each
/// enumeration resolved once (`MPI_T_enum_get_info`, `MPI_T_enum_get_item` of every item, into
/// a fixed buffer, copied out), as `Mpit::cvars` resolves them once per listing.
#[derive(Default)]
struct CKept {
    vars: Vec<Kept>,
    enums: Vec<(sys::MPI_T_enum, KeptEnum)>,
}

impl CKept {
    /// Resolves `e` unless this listing has (a search of the few distinct handles seen).
    fn resolve(&mut self, e: sys::MPI_T_enum) {
        if e == sys::MPI_T_ENUM_NULL || self.enums.iter().any(|(h, _)| *h == e) {
            return;
        }
        let mut name = [0 as c_char; C_NAME];
        let (mut num, mut len) = (0, C_NAME as c_int);
        // SAFETY: `e` is a handle MPI_T returned in this listing; the buffer holds `len` bytes.
        let rc = unsafe { sys::MPI_T_enum_get_info(e, &mut num, name.as_mut_ptr(), &mut len) };
        if rc != sys::MPI_SUCCESS {
            return;
        }
        let mut items = Vec::with_capacity(num.max(0) as usize);
        let enum_name = c_str(&name).to_vec();
        for j in 0..num {
            let (mut value, mut len) = (0, C_NAME as c_int);
            // SAFETY: as above; `j` is below the item count.
            let rc =
                unsafe { sys::MPI_T_enum_get_item(e, j, &mut value, name.as_mut_ptr(), &mut len) };
            if rc == sys::MPI_SUCCESS {
                items.push((value, c_str(&name).to_vec()));
            }
        }
        self.enums.push((e, (enum_name, items)));
    }
}

/// `MPI_T_cvar_get_info` of every index into fixed buffers; with `keep`, also copies each name
/// and description out and resolves each enumeration once (what owning the listing costs in C
/// too).
fn c_cvar_infos(mut keep: Option<&mut CKept>) {
    // SAFETY: MPI_T is initialised; a valid out-pointer.
    let n = c_count(|n| unsafe { sys::MPI_T_cvar_get_num(n) });
    c_infos(
        n,
        |i, name, nl, desc, dl| {
            let (mut verb, mut bind, mut scope) = (0, 0, 0);
            let mut dt = sys::MPI_DATATYPE_NULL;
            let mut en = sys::MPI_T_ENUM_NULL;
            // SAFETY: MPI_T is initialised and `i` is below the count; the buffers hold the
            // lengths passed; the rest are valid out-pointers.
            let rc = unsafe {
                sys::MPI_T_cvar_get_info(
                    i, name, nl, &mut verb, &mut dt, &mut en, desc, dl, &mut bind, &mut scope,
                )
            };
            (rc, (verb, dt, en, bind, scope))
        },
        |_, name, desc, rest| {
            black_box(rest);
            if let Some(kept) = keep.as_deref_mut() {
                kept.vars.push((c_str(name).to_vec(), c_str(desc).to_vec()));
                kept.resolve(rest.2);
            }
        },
    );
}

/// `MPI_T_pvar_get_info` of every index into fixed buffers.
fn c_pvar_infos() {
    // SAFETY: as in `c_cvar_infos`.
    let n = c_count(|n| unsafe { sys::MPI_T_pvar_get_num(n) });
    c_infos(
        n,
        |i, name, nl, desc, dl| {
            let (mut verb, mut class, mut bind) = (0, 0, 0);
            let (mut readonly, mut continuous, mut atomic) = (0, 0, 0);
            let mut dt = sys::MPI_DATATYPE_NULL;
            let mut en = sys::MPI_T_ENUM_NULL;
            // SAFETY: as in `c_cvar_infos`.
            let rc = unsafe {
                sys::MPI_T_pvar_get_info(
                    i,
                    name,
                    nl,
                    &mut verb,
                    &mut class,
                    &mut dt,
                    &mut en,
                    desc,
                    dl,
                    &mut bind,
                    &mut readonly,
                    &mut continuous,
                    &mut atomic,
                )
            };
            let rest = (verb, class, dt, en, bind, readonly, continuous, atomic);
            (rc, rest)
        },
        |_, _, _, rest| {
            black_box(rest);
        },
    );
}

/// `MPI_T_category_get_info` of every index into fixed buffers, and its members (control
/// variables, performance variables, subcategories, and with the event API event types)
/// into a fixed array: what `Mpit::categories` returns.
fn c_category_infos() {
    // SAFETY: as in `c_cvar_infos`.
    let n = c_count(|n| unsafe { sys::MPI_T_category_get_num(n) });
    let mut members = [0 as c_int; C_MEMBERS];
    let cap = |k: c_int| k.min(C_MEMBERS as c_int);
    c_infos(
        n,
        |i, name, nl, desc, dl| {
            let (mut nc, mut np, mut nk) = (0, 0, 0);
            // SAFETY: as in `c_cvar_infos`.
            let rc = unsafe {
                sys::MPI_T_category_get_info(i, name, nl, desc, dl, &mut nc, &mut np, &mut nk)
            };
            (rc, (nc, np, nk))
        },
        |i, _, _, (nc, np, nk)| {
            // SAFETY: MPI_T is initialised and `i` is below the count; each call writes at
            // most `cap(..)` entries, which `members` holds.
            unsafe {
                if nc > 0 {
                    let rc = sys::MPI_T_category_get_cvars(i, cap(nc), members.as_mut_ptr());
                    consume_raw(rc, &members);
                }
                if np > 0 {
                    let rc = sys::MPI_T_category_get_pvars(i, cap(np), members.as_mut_ptr());
                    consume_raw(rc, &members);
                }
                if nk > 0 {
                    let rc = sys::MPI_T_category_get_categories(i, cap(nk), members.as_mut_ptr());
                    consume_raw(rc, &members);
                }
                #[cfg(mpit_events)]
                {
                    let mut ne = 0;
                    let rc = sys::MPI_T_category_get_num_events(i, &mut ne);
                    if rc == sys::MPI_SUCCESS && ne > 0 {
                        let rc = sys::MPI_T_category_get_events(i, cap(ne), members.as_mut_ptr());
                        consume_raw(rc, &members);
                    }
                }
            }
        },
    );
}

/// What a visitor does with each record: looks at it (the C loops black-box what they read).
#[inline(always)]
fn look<T>(record: &T) -> ControlFlow<()> {
    black_box(record);
    ControlFlow::Continue(())
}

/// The info query of every cvar, pvar and category: the C loop with fixed buffers against the
/// listings `Mpit::cvars`, `pvars` and `categories` (owned records, enumerations resolved once
/// per listing, a cut string fetched whole), and against the visits `Mpit::visit_cvars`,
/// `visit_pvars` and `visit_categories` (records borrowed from reused buffers, enumerations
/// not resolved, members of categories fetched as C does, `*_visit_all`); and, in alternating
/// rounds only, against
/// `Mpit::cvar_info` per index (which checks the index against the count and resolves the
/// enumeration afresh, `cvar_info_each`), and a C loop that also copies the strings out and
/// resolves each enumeration once, as a listing that owns them must (`cvar_info_owned`: the
/// allocations and the enumerations, the floor of owned records).
fn info(
    c: &mut Criterion,
    mpit: &Mpit,
    pairs: &mut Vec<(String, String, String)>,
    rounds: &mut Vec<(String, mpit_benches::Interleaved)>,
) {
    let cvars = mpit.cvar_count().unwrap() as c_int;
    info_group(
        c,
        pairs,
        rounds,
        "cvar_info_all",
        || c_cvar_infos(None),
        || consume(mpit.cvars()),
    );
    info_group(
        c,
        pairs,
        rounds,
        "cvar_visit_all",
        || c_cvar_infos(None),
        || consume(mpit.visit_cvars(|v| look(v))),
    );
    rounds.push((
        "cvar_info_owned".into(),
        info_rounds(
            |ops| {
                timed(ops, || {
                    let mut kept = CKept {
                        vars: Vec::with_capacity(cvars as usize),
                        enums: Vec::new(),
                    };
                    c_cvar_infos(Some(&mut kept));
                    black_box(kept);
                })
            },
            |ops| timed(ops, || consume(mpit.cvars())),
        ),
    ));
    rounds.push((
        "cvar_info_each".into(),
        info_rounds(
            |ops| timed(ops, || c_cvar_infos(None)),
            |ops| {
                timed(ops, || {
                    for i in 0..cvars as usize {
                        consume(mpit.cvar_info(i));
                    }
                })
            },
        ),
    ));
    let pvars = mpit.pvar_count().unwrap() as c_int;
    if pvars == 0 {
        eprintln!("no pvars here: pvar_info_all and pvar_visit_all skipped");
    } else {
        info_group(c, pairs, rounds, "pvar_info_all", c_pvar_infos, || {
            consume(mpit.pvars())
        });
        info_group(c, pairs, rounds, "pvar_visit_all", c_pvar_infos, || {
            consume(mpit.visit_pvars(|v| look(v)))
        });
    }
    info_group(
        c,
        pairs,
        rounds,
        "category_info_all",
        c_category_infos,
        || consume(mpit.categories()),
    );
    info_group(
        c,
        pairs,
        rounds,
        "category_visit_all",
        c_category_infos,
        || consume(mpit.visit_categories(|c| look(c))),
    );
}

fn main() {
    // MPI_Init first (rsmpi): Open MPI 4.1 refuses pvar handles before it.
    let universe = mpi::initialize().expect("MPI_Init");
    let mpit = Mpit::init().unwrap();
    // The raw side calls the library's symbols as C does (the library is loaded now).
    #[cfg(mpit_abi)]
    sys::load();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let mut pairs = Vec::new();
    let mut rounds = Vec::new();
    bench(&mut c, &mpit, &mut pairs, &mut rounds);
    c.final_summary();
    #[cfg(not(mpit_abi))]
    let built_for = format!("{} {}", sys::IMPLEMENTATION, sys::IMPLEMENTATION_VERSION);
    #[cfg(mpit_abi)]
    let built_for = match mpit_safe::sys::abi::library() {
        Ok(lib) => format!(
            "MPI ABI build on {} ({})",
            mpit_safe::implementation(),
            lib.path
        ),
        Err(e) => format!("MPI ABI build: {e}"),
    };
    println!("\n{built_for}: safe / raw (criterion mean)");
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
    println!(
        "safe / raw in alternating rounds (median; reads: 41 rounds of 200,000 calls per side, \
         ns per call; infos: {INFO_ROUNDS} rounds of about {} ms per side, ns per listing):",
        INFO_ROUND.as_secs_f64() * 1e3
    );
    for (group, r) in rounds {
        println!(
            "  {group:<18} raw {:>12.1} ns   safe {:>12.1} ns   ratio {:.3} (fastest rounds {:.3})",
            r.raw_ns, r.safe_ns, r.ratio, r.ratio_of_mins
        );
        let read = group.ends_with("_read");
        mpit_benches::record(&mpit_benches::Row {
            bench: "mpit",
            op: &group,
            unit: if read { "ns/call" } else { "ns/listing" },
            raw: r.raw_ns,
            safe: r.safe_ns,
            ratio: r.ratio,
            ratio_of_mins: Some(r.ratio_of_mins),
            rounds: if read { 41 } else { INFO_ROUNDS },
            target: mpit_benches::mpit_target(&group),
            note: "",
        });
    }
    drop(mpit);
    drop(universe);
}
