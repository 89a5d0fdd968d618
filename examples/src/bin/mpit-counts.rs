//! `mpit-counts`: how many control variables, performance variables, categories, event types
//! and event sources the installed MPI exposes through MPI_T, before and after `MPI_Init`.
//!
//! The foundation's main job until the lister of the mpit-safe issue replaces it. It uses only
//! the raw layer, so every call is checked here by hand.
//!
//! Usage: `mpit-counts [--kv]` (`--kv`: one line of `key=value` pairs for scripts).

use std::ffi::{CStr, c_char, c_int};
use std::process::ExitCode;

use mpit_sys as sys;

/// Counts of one moment.
#[derive(Default, Clone, Copy)]
struct Counts {
    cvars: c_int,
    pvars: c_int,
    categories: c_int,
    events: Option<c_int>,
    sources: Option<c_int>,
}

/// Turns an MPI return code into a `Result` naming the call.
fn check(what: &str, code: c_int) -> Result<(), String> {
    if code == sys::MPI_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} returned {code}"))
    }
}

/// Reads every count; MPI_T must be initialised.
fn counts() -> Result<Counts, String> {
    let mut c = Counts::default();
    // SAFETY: MPI_T is initialised by the caller; each out-pointer is a valid `c_int`.
    unsafe {
        check("MPI_T_cvar_get_num", sys::MPI_T_cvar_get_num(&mut c.cvars))?;
        check("MPI_T_pvar_get_num", sys::MPI_T_pvar_get_num(&mut c.pvars))?;
        check(
            "MPI_T_category_get_num",
            sys::MPI_T_category_get_num(&mut c.categories),
        )?;
    }
    #[cfg(mpit_events)]
    {
        let (mut e, mut s) = (0, 0);
        // SAFETY: as above.
        unsafe {
            check("MPI_T_event_get_num", sys::MPI_T_event_get_num(&mut e))?;
            check("MPI_T_source_get_num", sys::MPI_T_source_get_num(&mut s))?;
        }
        c.events = Some(e);
        c.sources = Some(s);
    }
    Ok(c)
}

fn library_version() -> String {
    let mut buf = vec![0 as c_char; 8192];
    let mut len = 0;
    // SAFETY: MPI_Get_library_version may be called at any time; the buffer is larger than
    // MPI_MAX_LIBRARY_VERSION_STRING of every implementation (MPICH: 8192, Open MPI: 256).
    let rc = unsafe { sys::MPI_Get_library_version(buf.as_mut_ptr(), &mut len) };
    if rc != sys::MPI_SUCCESS {
        return String::from("?");
    }
    // SAFETY: on success the buffer holds a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(buf.as_ptr()) };
    s.to_string_lossy()
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(kv: bool) -> Result<(), String> {
    // One MPI_T epoch spanning MPI_Init: the ordering every implementation here survives
    // (a full MPI_T_init/MPI_T_finalize cycle before MPI_Init crashes MPI_Init in MPICH 4.0.2
    // and Open MPI 5.0.11).
    let mut provided = 0;
    // SAFETY: MPI_T may be initialised before MPI_Init.
    check("MPI_T_init_thread", unsafe {
        sys::MPI_T_init_thread(sys::MPI_THREAD_SINGLE, &mut provided)
    })?;
    let before = counts()?;
    // SAFETY: called once, with null argc/argv as the standard allows.
    check("MPI_Init_thread", unsafe {
        sys::MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            sys::MPI_THREAD_SINGLE,
            &mut provided,
        )
    })?;
    let after = counts();
    // SAFETY: balances MPI_T_init_thread; MPI_T_finalize before MPI_Finalize (Open MPI 4.1
    // crashes the other way round).
    let fin = check("MPI_T_finalize", unsafe { sys::MPI_T_finalize() });
    let (mut major, mut minor) = (0, 0);
    // SAFETY: valid out-pointers; MPI is initialised.
    unsafe { sys::MPI_Get_version(&mut major, &mut minor) };
    let lib = library_version();
    // SAFETY: MPI was initialised above and is finalised once.
    check("MPI_Finalize", unsafe { sys::MPI_Finalize() })?;
    let after = after?;
    fin?;

    let opt = |v: Option<c_int>| v.map_or("n/a".to_owned(), |v| v.to_string());
    if kv {
        println!(
            "implementation={:?} version={} mpi={major}.{minor} cvars={} pvars={} categories={} \
             events={} sources={} cvars_before_init={} pvars_before_init={} \
             categories_before_init={} events_api={}",
            sys::IMPLEMENTATION,
            sys::IMPLEMENTATION_VERSION,
            after.cvars,
            after.pvars,
            after.categories,
            opt(after.events),
            opt(after.sources),
            before.cvars,
            before.pvars,
            before.categories,
            sys::HAS_EVENTS,
        );
    } else {
        println!(
            "{} {} (MPI {major}.{minor}; {lib})",
            sys::IMPLEMENTATION,
            sys::IMPLEMENTATION_VERSION
        );
        println!("  {:<12} {:>14} {:>12}", "", "before Init", "after Init");
        let rows = [
            ("cvars", before.cvars.to_string(), after.cvars.to_string()),
            ("pvars", before.pvars.to_string(), after.pvars.to_string()),
            (
                "categories",
                before.categories.to_string(),
                after.categories.to_string(),
            ),
            ("events", opt(before.events), opt(after.events)),
            ("sources", opt(before.sources), opt(after.sources)),
        ];
        for (name, b, a) in rows {
            println!("  {name:<12} {b:>14} {a:>12}");
        }
        if !sys::HAS_EVENTS {
            println!("  (this MPI's header has no MPI-4 event API)");
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let kv = std::env::args().any(|a| a == "--kv");
    match run(kv) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpit-counts: {e}");
            ExitCode::FAILURE
        }
    }
}
