//! Load after `MPI_Init`, in the style of Open MPI's `test/t`: many MPI_T initialisations and
//! finalisations, many handle allocations and frees, with the resident set size (RSS) reported
//! and required to stay flat after a warm-up. A leak of a few hundred bytes per cycle shows as
//! megabytes here; the bound leaves room for allocator noise only.

use mpit_test_support::{mpi as common, process::rss};

use mpit_safe::{Bind, Mpit, NoObject, sys};

/// Runs `step(i)` `n` times and returns how much the RSS grew between the end of the first
/// tenth (the warm-up: caches, lazily built tables) and the end. Reports both.
fn growth(what: &str, n: usize, mut step: impl FnMut(usize)) -> u64 {
    let warm = n / 10;
    for i in 0..warm {
        step(i);
    }
    let after_warm_up = rss();
    for i in warm..n {
        step(i);
    }
    let end = rss();
    let grown = end.saturating_sub(after_warm_up);
    println!(
        "{what}: {n} iterations on {}: RSS {} KiB after {warm} (warm-up), {} KiB at the end \
         (+{} KiB, {} bytes per iteration)",
        mpit_safe::implementation(),
        after_warm_up / 1024,
        end / 1024,
        grown / 1024,
        grown / (n - warm) as u64
    );
    grown
}

/// [`growth`], required to be at most `bound` bytes.
fn flat(what: &str, n: usize, bound: u64, step: impl FnMut(usize)) {
    let grown = growth(what, n, step);
    assert!(
        grown <= bound,
        "{what}: RSS grew by {grown} bytes after the warm-up (bound {bound})"
    );
}

/// `MPI_T_cvar_get_info` into fixed buffers and, for a variable with an enumeration,
/// `MPI_T_enum_get_info` and `MPI_T_enum_get_item` of every item.
fn raw_cvar_info(index: std::ffi::c_int) {
    let (mut name, mut desc) = ([0u8; 256], [0u8; 1024]);
    let (mut name_len, mut desc_len) = (256, 1024);
    let (mut verbosity, mut bind, mut scope) = (0, 0, 0);
    let (mut datatype, mut enumtype) = (sys::MPI_DATATYPE_NULL, sys::MPI_T_ENUM_NULL);
    // SAFETY: a valid index; the buffers hold the lengths given; out-pointers valid.
    let rc = unsafe {
        sys::MPI_T_cvar_get_info(
            index,
            name.as_mut_ptr().cast(),
            &mut name_len,
            &mut verbosity,
            &mut datatype,
            &mut enumtype,
            desc.as_mut_ptr().cast(),
            &mut desc_len,
            &mut bind,
            &mut scope,
        )
    };
    assert_eq!(rc, sys::MPI_SUCCESS);
    if enumtype == sys::MPI_T_ENUM_NULL {
        return;
    }
    let (mut items, mut len) = (0, 256);
    // SAFETY: the enumeration MPI_T just returned; the buffer holds `len` bytes.
    let rc = unsafe {
        sys::MPI_T_enum_get_info(enumtype, &mut items, name.as_mut_ptr().cast(), &mut len)
    };
    assert_eq!(rc, sys::MPI_SUCCESS);
    for item in 0..items {
        let (mut value, mut len) = (0, 256);
        // SAFETY: as above, `item` below the number of items.
        let rc = unsafe {
            sys::MPI_T_enum_get_item(
                enumtype,
                item,
                &mut value,
                name.as_mut_ptr().cast(),
                &mut len,
            )
        };
        assert_eq!(rc, sys::MPI_SUCCESS);
    }
}

/// 10,000 tokens created, used and finalised. (MPI_T stays initialised underneath: the test's
/// own token and the process-lifetime anchor; see `Mpit`'s ordering notes.)
#[test]
fn ten_thousand_init_finalize_cycles() {
    let t = common::turn_after_init();
    let expected = t.mpit.cvar_count().unwrap();
    flat("MPI_T init/finalize", 10_000, 1 << 20, |_| {
        let mpit = Mpit::init().unwrap();
        assert_eq!(mpit.cvar_count().unwrap(), expected);
        mpit.finalize().unwrap();
    });
}

/// 100,000 control variable handles allocated, read and freed, cycling over every readable
/// unbound variable (MPI-4.1 §16.3.6: a handle lives until `MPI_T_cvar_handle_free`).
#[test]
fn hundred_thousand_cvar_handles() {
    let t = common::turn_after_init();
    let cvars = t.mpit.cvars().unwrap();
    let readable: Vec<usize> = cvars
        .entries
        .iter()
        .filter(|v| v.bind == Bind::NoObject)
        .filter(|v| {
            t.mpit
                .dyn_cvar_handle(v.index, &NoObject)
                .and_then(|h| h.read_values())
                .is_ok()
        })
        .map(|v| v.index)
        .collect();
    assert!(
        !readable.is_empty(),
        "no readable unbound control variable on {}",
        mpit_safe::implementation()
    );
    println!("cycling over {} readable unbound cvars", readable.len());
    // The same MPI calls in raw C first (what `dyn_cvar_handle` makes: the variable's info
    // with its enumeration's info and items, the allocation; then the read and the free).
    // What the implementation keeps for them is not ours to remove (Open MPI 4.1.4's
    // MPI_T_enum_get_info/_get_item keep memory on every call: about 19 bytes per handle
    // here), but mpit-safe must add nothing to it.
    let mut buf = vec![0u64; 1 << 13];
    let raw = growth("cvar handles, raw C calls", 100_000, |i| {
        let index = readable[i % readable.len()] as std::ffi::c_int;
        raw_cvar_info(index);
        let (mut h, mut count) = (sys::MPI_T_CVAR_HANDLE_NULL, 0);
        // SAFETY: a valid index of an unbound variable (null object); out-pointers valid.
        let rc = unsafe {
            sys::MPI_T_cvar_handle_alloc(index, std::ptr::null_mut(), &mut h, &mut count)
        };
        assert_eq!(rc, sys::MPI_SUCCESS);
        assert!(
            (count as usize) * 16 <= buf.len() * 8,
            "a cvar of {count} elements"
        );
        // SAFETY: a live handle; the buffer holds count elements of any MPI_T datatype (at
        // most 16 bytes each).
        let rc = unsafe { sys::MPI_T_cvar_read(h, buf.as_mut_ptr().cast()) };
        assert_eq!(rc, sys::MPI_SUCCESS);
        // SAFETY: the live handle allocated above, freed once.
        let rc = unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
        assert_eq!(rc, sys::MPI_SUCCESS);
    });
    let safe = growth("cvar handles, mpit-safe", 100_000, |i| {
        let h = t
            .mpit
            .dyn_cvar_handle(readable[i % readable.len()], &NoObject)
            .unwrap();
        std::hint::black_box(h.read_values().unwrap());
    });
    assert!(
        safe <= raw + (1 << 20),
        "mpit-safe's handles grew the RSS by {safe} bytes where the raw calls grew it by {raw}"
    );
    if raw > 1 << 20 {
        println!(
            "{} keeps memory for the MPI calls of a cvar handle (raw C calls: +{} KiB over \
             90,000): the implementation's, not mpit-safe's",
            mpit_safe::implementation(),
            raw / 1024
        );
    }
}

/// 100,000 performance variable handles allocated, read and freed, across 100 sessions of
/// 1,000 handles each (MPI-4.1 §16.3.7: freeing a session frees what is left of its handles).
#[test]
fn hundred_thousand_pvar_handles_across_sessions() {
    let t = common::turn_after_init();
    let pvars = t.mpit.pvars().unwrap();
    let session = t.mpit.session().unwrap();
    let readable: Vec<usize> = pvars
        .entries
        .iter()
        .filter(|v| v.bind == Bind::NoObject)
        .filter(|v| {
            session
                .dyn_handle(v.index, &NoObject)
                .is_ok_and(|h| (v.continuous || h.start().is_ok()) && h.read_values().is_ok())
        })
        .map(|v| v.index)
        .collect();
    drop(session);
    if readable.is_empty() {
        assert!(
            !common::material().pvars,
            "{} must have readable unbound pvars after MPI_Init",
            mpit_safe::implementation()
        );
        println!(
            "nothing to test on {}: no performance variables (not configured with \
             --enable-mpit-pvars)",
            mpit_safe::implementation()
        );
        return;
    }
    println!("cycling over {} readable unbound pvars", readable.len());
    let mut session = Some(t.mpit.session().unwrap());
    flat("pvar handles", 100_000, 1 << 20, |i| {
        if i % 1000 == 0 {
            // A new session every 1,000 handles; the old one is freed first.
            drop(session.take());
            session = Some(t.mpit.session().unwrap());
        }
        let s = session.as_ref().unwrap();
        let index = readable[i % readable.len()];
        let h = s.dyn_handle(index, &NoObject).unwrap();
        if !pvars
            .entries
            .iter()
            .any(|v| v.index == index && v.continuous)
        {
            h.start().unwrap();
        }
        std::hint::black_box(h.read_values().unwrap());
    });
}
