//! Every quirk guard of `mpit_safe::quirks`, proven both ways: on the implementations a quirk
//! names, the raw call it guards crashes (or fails) in a child process and the safe API
//! refuses with `Error::KnownCrash` naming that quirk; on the others the raw call works and the
//! safe API lets it through. Each scenario runs in its own child process (this test binary
//! re-executed), because a crash must not end the test run and `MPI_Init` runs once per
//! process.
//!
//! The children run under the conformance crate's harness ([`mpit_conformance::child`]): own
//! process group, output captured, killed after [`TIMEOUT`] (a hang counts as a failure).
//!
//! A scenario with nothing to exercise on an implementation (a variable or event type it does
//! not have) says so in the output; where the quirk applies, the material must be there.

use std::time::Duration;

use mpit_test_support::mpi::init_mpi;

use mpit_conformance::child::{self, Text};
use mpit_safe::quirks::{self, QUIRKS};
use mpit_safe::{Error, Mpit, NoObject, Quirk, sys};
// rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

const CHILD: &str = "MPIT_SAFE_QUIRK_CHILD";

/// How long a child may take (Open MPI's `MPI_Init` takes about a second).
const TIMEOUT: Duration = Duration::from_secs(60);

/// What a child did.
type Output = child::Run<Text, Text>;

/// Re-runs this binary's test `test` (of this module) with `CHILD=scenario`.
fn run_child(test: &str, scenario: &str) -> Output {
    let test = format!("quirks::{test}");
    let out: Output =
        child::run(&mut child::test_command(&test, CHILD, scenario), TIMEOUT).unwrap();
    for l in out.stdout.0.lines().chain(out.stderr.0.lines()) {
        eprintln!("  {scenario} | {l}");
    }
    out
}

fn stdout(o: &Output) -> &str {
    &o.stdout.0
}

/// How a raw child ended: `None` when it exited 0 and printed `raw: ok`.
fn raw_failure(o: &Output) -> Option<String> {
    if o.ended.success() && stdout(o).contains("raw: ok") {
        None
    } else {
        Some(o.ended.to_string())
    }
}

/// The child side: which scenario this process runs, if any.
fn scenario() -> Option<String> {
    child::scenario(CHILD)
}

fn finalize_mpi() {
    // SAFETY: MPI was initialised by `init_mpi` in this child.
    assert_eq!(unsafe { sys::MPI_Finalize() }, sys::MPI_SUCCESS);
}

fn raw_t_init() {
    let mut provided = 0;
    // SAFETY: MPI_T may be initialised at any time; valid out-pointer.
    let rc = unsafe { sys::MPI_T_init_thread(sys::MPI_THREAD_SINGLE, &mut provided) };
    assert_eq!(rc, sys::MPI_SUCCESS, "MPI_T_init_thread");
}

/// The raw child's side of a cvar quirk: MPI_T initialised and a handle on the unbound
/// variable `name`, `material: name` printed; `None` (and `raw: ok`) where there is no such
/// variable.
fn raw_cvar_handle(name: &str) -> Option<sys::MPI_T_cvar_handle> {
    raw_t_init();
    let c_name = std::ffi::CString::new(name).unwrap();
    let mut index = 0;
    // SAFETY: NUL-terminated name; valid out-pointer.
    if unsafe { sys::MPI_T_cvar_get_index(c_name.as_ptr(), &mut index) } != sys::MPI_SUCCESS {
        println!("raw: ok (no {name})");
        return None;
    }
    println!("material: {name}");
    let (mut handle, mut count) = (sys::MPI_T_CVAR_HANDLE_NULL, 0);
    // SAFETY: valid index; the variable is unbound (null object).
    let rc = unsafe {
        sys::MPI_T_cvar_handle_alloc(index, std::ptr::null_mut(), &mut handle, &mut count)
    };
    assert_eq!(rc, sys::MPI_SUCCESS);
    Some(handle)
}

/// A raw read of a one-element integer cvar: the return code and the first 8 bytes.
fn raw_cvar_read(handle: sys::MPI_T_cvar_handle) -> (std::ffi::c_int, i64) {
    let mut v = [0i64; 4];
    // SAFETY: a live handle on a variable of count 1 and at most 8 bytes; the buffer holds
    // more. What the quirk tests exercise is where the implementation reads from.
    let rc = unsafe { sys::MPI_T_cvar_read(handle, v.as_mut_ptr().cast()) };
    (rc, v[0])
}

/// Checks one quirk's two children: `raw` must fail exactly where the quirk applies, `safe`
/// must succeed everywhere and print `refused: <id>` exactly where it applies.
fn prove(test: &str, quirk: &Quirk, material: Option<&str>) {
    let applies = quirks::applies(quirk);
    eprintln!(
        "{}: {} on {} ({})",
        quirk.id,
        if applies { "applies" } else { "does not apply" },
        mpit_safe::implementation(),
        quirks::library_version()
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or("")
    );
    let raw = run_child(test, "raw");
    let safe = run_child(test, "safe");
    let safe_out = stdout(&safe);
    if let Some(m) = material {
        let has = safe_out.contains(&format!("material: {m}"));
        if !has {
            assert!(
                !applies,
                "{}: the quirk applies but {m} is missing",
                quirk.id
            );
            eprintln!("{}: nothing to exercise here (no {m})", quirk.id);
        }
    }
    assert!(safe.ended.success(), "safe child: {}", safe.ended);
    let refused = safe_out.contains(&format!("refused: {}", quirk.id));
    assert_eq!(
        refused, applies,
        "{}: the safe API refused = {refused}, the quirk applies = {applies}",
        quirk.id
    );
    match raw_failure(&raw) {
        Some(how) => {
            assert!(
                applies,
                "{}: the raw call failed ({how}) on {} where the guard lets it through",
                quirk.id,
                mpit_safe::implementation()
            );
            eprintln!("{}: raw call failed as the quirk says: {how}", quirk.id);
        }
        None => assert!(
            !applies || material.is_some_and(|m| !stdout(&raw).contains(&format!("material: {m}"))),
            "{}: the quirk applies but the raw call worked",
            quirk.id
        ),
    }
}

fn refused_or_ok<T>(r: mpit_safe::Result<T>, what: &str) -> Option<T> {
    match r {
        Ok(v) => {
            println!("let through: {what}");
            Some(v)
        }
        Err(Error::KnownCrash(q)) => {
            println!("refused: {}", q.id);
            None
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

/// (f) of the ordering table: MPI_T first initialised after `MPI_Finalize`.
#[test]
fn mpich_mpi_t_after_finalize() {
    const TEST: &str = "mpich_mpi_t_after_finalize";
    match scenario().as_deref() {
        Some("raw") => {
            init_mpi();
            finalize_mpi();
            raw_t_init();
            let mut n = 0;
            // SAFETY: MPI_T is initialised; valid out-pointer.
            assert_eq!(unsafe { sys::MPI_T_cvar_get_num(&mut n) }, sys::MPI_SUCCESS);
            // SAFETY: balances the MPI_T_init_thread above.
            unsafe { sys::MPI_T_finalize() };
            println!("raw: ok ({n} cvars)");
        }
        Some("safe") => {
            init_mpi();
            finalize_mpi();
            if let Some(mpit) = refused_or_ok(Mpit::init(), "Mpit::init after MPI_Finalize") {
                println!("{} cvars", mpit.cvar_count().unwrap());
            }
        }
        _ => prove(TEST, &quirks::MPICH_MPI_T_AFTER_FINALIZE, None),
    }
}

/// The info object before `MPI_Init`.
#[test]
fn open_mpi_info_outside_init() {
    const TEST: &str = "open_mpi_info_outside_init";
    match scenario().as_deref() {
        Some("raw") => {
            let mut info = sys::MPI_INFO_NULL;
            // SAFETY: valid out-pointer; MPI-4 allows this before MPI_Init.
            let rc = unsafe { sys::MPI_Info_create(&mut info) };
            assert_eq!(rc, sys::MPI_SUCCESS);
            // SAFETY: created above, freed once.
            unsafe { sys::MPI_Info_free(&mut info) };
            println!("raw: ok");
        }
        Some("safe") => {
            refused_or_ok(mpit_safe::Info::new(), "MPI_Info_create before MPI_Init");
        }
        _ => prove(TEST, &quirks::OPEN_MPI_INFO_OUTSIDE_INIT, None),
    }
}

/// A handle for the PSM2 MTL's pvars (Open MPI without Omni-Path hardware).
#[test]
fn open_mpi_psm2_pvar_handles() {
    const TEST: &str = "open_mpi_psm2_pvar_handles";
    const NAME: &str = "mtl_psm2_rx_user_bytes";
    match scenario().as_deref() {
        Some("raw") => {
            // The index from the listing (which allocates no handle), then raw calls only.
            let found = Mpit::init()
                .unwrap()
                .pvars()
                .unwrap()
                .entries
                .into_iter()
                .find(|p| p.name == NAME);
            let Some(p) = found else {
                println!("raw: ok (no {NAME})");
                return;
            };
            let index = std::ffi::c_int::try_from(p.index).unwrap();
            println!("material: {NAME}");
            let mut session = sys::MPI_T_PVAR_SESSION_NULL;
            // SAFETY: valid out-pointer.
            let rc = unsafe { sys::MPI_T_pvar_session_create(&mut session) };
            assert_eq!(rc, sys::MPI_SUCCESS);
            let (mut handle, mut count) = (sys::MPI_T_PVAR_HANDLE_NULL, 0);
            // SAFETY: a valid index and session; an unbound variable takes a null object.
            let rc = unsafe {
                sys::MPI_T_pvar_handle_alloc(
                    session,
                    index,
                    std::ptr::null_mut(),
                    &mut handle,
                    &mut count,
                )
            };
            println!("raw: ok (handle_alloc returned {rc})");
        }
        Some("safe") => {
            let mpit = Mpit::init().unwrap();
            let session = mpit.session().unwrap();
            let found = mpit
                .pvars()
                .unwrap()
                .entries
                .into_iter()
                .find(|p| p.name == NAME);
            match found {
                Some(p) => {
                    println!("material: {NAME}");
                    refused_or_ok(session.dyn_handle(p.index, &NoObject), NAME);
                }
                None => {
                    // Let through elsewhere: any other unbound variable gets its handle.
                    let other = mpit
                        .pvars()
                        .unwrap()
                        .entries
                        .into_iter()
                        .find(|p| p.bind == mpit_safe::Bind::NoObject);
                    if let Some(p) = other {
                        session.dyn_handle(p.index, &NoObject).unwrap();
                        println!("let through: handle for {}", p.name);
                    }
                }
            }
        }
        _ => prove(TEST, &quirks::OPEN_MPI_PSM2_PVAR_HANDLES, Some(NAME)),
    }
}

/// A UCX component's integer cvar read after `MPI_Init` closed the component (Open MPI 4.1).
#[test]
fn open_mpi_closed_component_cvars() {
    const TEST: &str = "open_mpi_closed_component_cvars";
    const NAME: &str = "opal_common_ucx_verbose";
    match scenario().as_deref() {
        Some("raw") => {
            let Some(handle) = raw_cvar_handle(NAME) else {
                return;
            };
            init_mpi();
            let (rc, v) = raw_cvar_read(handle);
            println!("raw: ok (read after MPI_Init returned {rc}, value {v})");
        }
        Some("safe") => {
            let mpit = Mpit::init().unwrap();
            match mpit.cvar_index(NAME).unwrap() {
                Some(i) => {
                    println!("material: {NAME}");
                    let h = mpit.cvar_handle::<i32>(i).unwrap();
                    h.read().unwrap();
                    let universe = mpi::initialize().unwrap();
                    refused_or_ok(h.read(), "read after MPI_Init");
                    drop(h);
                    drop(mpit);
                    drop(universe);
                }
                None => println!("no {NAME}"),
            }
        }
        _ => prove(TEST, &quirks::OPEN_MPI_CLOSED_COMPONENT_CVARS, Some(NAME)),
    }
}

/// Fills 256 KiB of the stack below the caller's frame with `0xA5`: whatever a returned
/// call left there is overwritten.
#[inline(never)]
fn paint_stack() {
    let buf = [0xA5u8; 256 * 1024];
    std::hint::black_box(&buf);
}

/// [`raw_cvar_read`] from a frame 512 KiB below the caller, the gap left unwritten (so what
/// [`paint_stack`] wrote there stays).
#[inline(never)]
fn read_far_below(handle: sys::MPI_T_cvar_handle) -> (std::ffi::c_int, i64) {
    let gap = std::mem::MaybeUninit::<[u8; 512 * 1024]>::uninit();
    std::hint::black_box(&gap);
    raw_cvar_read(handle)
}

/// Open MPI 5's `mpi_ft_verbose`, whose storage is a local of the function that registered it:
/// read after the stack below the caller has been overwritten.
#[test]
fn open_mpi_dangling_cvar_storage() {
    const TEST: &str = "open_mpi_dangling_cvar_storage";
    const NAME: &str = "mpi_ft_verbose";
    match scenario().as_deref() {
        Some("raw") => {
            let Some(handle) = raw_cvar_handle(NAME) else {
                return;
            };
            paint_stack();
            // Read from well below the painted region: the read's own frames must not land
            // on the dead slot and overwrite the paint before the read copies from it.
            let (rc, v) = read_far_below(handle);
            assert_eq!(rc, sys::MPI_SUCCESS);
            let got = v as i32;
            // 0 is the value registered (unless the environment sets it).
            let registered: i32 = std::env::var("OMPI_MCA_mpi_ft_verbose")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            if got == registered {
                println!("raw: ok (read {got}, the registered value)");
            } else {
                println!(
                    "raw: read {got} ({got:#x}) after the stack was painted with 0xA5, not the \
                     registered {registered}: the storage is not the variable's"
                );
                std::process::exit(3);
            }
        }
        Some("safe") => {
            let mpit = Mpit::init().unwrap();
            match mpit.cvar_index(NAME).unwrap() {
                Some(i) => {
                    println!("material: {NAME}");
                    let h = mpit.cvar_handle::<i32>(i).unwrap();
                    let read = refused_or_ok(h.read(), "read");
                    let write = refused_or_ok(h.write(0), "write");
                    assert_eq!(
                        read.is_none(),
                        write.is_none(),
                        "read and write guarded alike"
                    );
                }
                None => {
                    // Let through elsewhere: the first unbound int cvar reads.
                    let cvars = mpit.cvars().unwrap();
                    let v = cvars
                        .entries
                        .iter()
                        .find(|v| {
                            v.bind == mpit_safe::Bind::NoObject
                                && v.datatype == mpit_safe::Datatype::Int
                        })
                        .expect("an unbound int cvar");
                    let h = mpit.cvar_handle::<i32>(v.index).unwrap();
                    refused_or_ok(h.read(), &v.name.to_string());
                }
            }
        }
        _ => prove(TEST, &quirks::OPEN_MPI_DANGLING_CVAR_STORAGE, Some(NAME)),
    }
}

/// An event type's enumtype used as an enumeration (MPICH built with events).
#[test]
fn mpich_event_enumtype() {
    const TEST: &str = "mpich_event_enumtype";
    #[cfg(mpit_events)]
    match scenario().as_deref() {
        Some("raw") => {
            raw_t_init();
            init_mpi();
            let mut n = 0;
            // SAFETY: valid out-pointer.
            let rc = unsafe { sys::MPI_T_event_get_num(&mut n) };
            assert_eq!(rc, sys::MPI_SUCCESS);
            if n == 0 {
                println!("raw: ok (no event types)");
                return;
            }
            println!("material: event types");
            let (mut name_len, mut desc_len, mut verbosity, mut num, mut bind) = (0, 0, 0, 0, 0);
            let mut enumtype = sys::MPI_T_ENUM_NULL;
            // SAFETY: length queries (null buffers, zero lengths), null element arrays and
            // info, valid out-pointers.
            let rc = unsafe {
                sys::MPI_T_event_get_info(
                    0,
                    std::ptr::null_mut(),
                    &mut name_len,
                    &mut verbosity,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    &mut num,
                    &mut enumtype,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    &mut desc_len,
                    &mut bind,
                )
            };
            assert_eq!(rc, sys::MPI_SUCCESS);
            let (mut items, mut len) = (0, 0);
            // SAFETY: what is under test: the enumtype MPI returned, used as the standard
            // allows (a length query of its name).
            let rc = unsafe {
                sys::MPI_T_enum_get_info(enumtype, &mut items, std::ptr::null_mut(), &mut len)
            };
            println!("raw: ok (MPI_T_enum_get_info returned {rc})");
            finalize_mpi();
        }
        Some("safe") => {
            let mpit = Mpit::init().unwrap();
            let universe = mpi::initialize().unwrap();
            let n = mpit.event_count().unwrap();
            if n > 0 {
                println!("material: event types");
                let info = mpit.event_info(0).unwrap();
                println!("event type {} has enumtype {:?}", info.name, info.enumtype);
                if quirks::applies(&quirks::MPICH_EVENT_ENUMTYPE) {
                    assert!(info.enumtype.is_none());
                    println!("refused: {}", quirks::MPICH_EVENT_ENUMTYPE.id);
                }
            }
            drop(mpit);
            drop(universe);
        }
        _ => {
            // The guard applies to every MPICH, but only an MPICH that raises events has an
            // event type to show the crash on.
            let applies = quirks::applies(&quirks::MPICH_EVENT_ENUMTYPE);
            let raw = run_child(TEST, "raw");
            let safe = run_child(TEST, "safe");
            assert!(safe.ended.success(), "safe child: {}", safe.ended);
            if !stdout(&safe).contains("material: event types") {
                eprintln!(
                    "{}: {} has no event types: nothing to exercise",
                    quirks::MPICH_EVENT_ENUMTYPE.id,
                    mpit_safe::implementation()
                );
                assert!(raw.ended.success());
                return;
            }
            assert_eq!(
                stdout(&safe).contains(&format!("refused: {}", quirks::MPICH_EVENT_ENUMTYPE.id)),
                applies
            );
            assert_eq!(raw_failure(&raw).is_some(), applies, "raw: {}", raw.ended);
        }
    }
    #[cfg(not(mpit_events))]
    {
        let _ = TEST;
        assert!(!quirks::applies(&quirks::MPICH_EVENT_ENUMTYPE));
        eprintln!("no event API in this MPI's header: nothing to exercise");
    }
}

/// MPICH 5.0.2's ABI library crashes starting, stopping or resetting `MPI_T_PVAR_ALL_HANDLES`,
/// even in a session without handles (its native library returns `MPI_SUCCESS`): a guard of
/// the ABI build.
#[cfg(mpit_abi)]
#[test]
fn mpich_abi_pvar_all_handles() {
    const TEST: &str = "mpich_abi_pvar_all_handles";
    match scenario().as_deref() {
        Some("raw") => {
            init_mpi();
            raw_t_init();
            let mut session = sys::MPI_T_PVAR_SESSION_NULL;
            // SAFETY: MPI_T is initialised; valid out-pointer.
            let rc = unsafe { sys::MPI_T_pvar_session_create(&mut session) };
            assert_eq!(rc, sys::MPI_SUCCESS, "MPI_T_pvar_session_create");
            for (what, f) in [
                ("start", sys::MPI_T_pvar_start as unsafe fn(_, _) -> _),
                ("stop", sys::MPI_T_pvar_stop),
                ("reset", sys::MPI_T_pvar_reset),
            ] {
                // SAFETY: a live session; the pseudo-handle the standard allows here.
                let rc = unsafe { f(session, sys::MPI_T_PVAR_ALL_HANDLES) };
                // No handle in the session: nothing to start, stop or reset.
                assert_eq!(rc, sys::MPI_SUCCESS, "MPI_T_pvar_{what}(ALL_HANDLES)");
            }
            println!("raw: ok");
        }
        Some("safe") => {
            init_mpi();
            let mpit = Mpit::init().unwrap();
            let session = mpit.session().unwrap();
            refused_or_ok(session.start_all(), "Session::start_all");
            refused_or_ok(session.stop_all(), "Session::stop_all");
            refused_or_ok(session.reset_all(), "Session::reset_all");
        }
        _ => prove(TEST, &quirks::MPICH_ABI_PVAR_ALL_HANDLES, None),
    }
}

/// Every quirk is one of the table's, with a stable unique id, and applies to at most one
/// vendor; the table is the one the tests above cover (the dequeued-event data quirk and the
/// event-registration race are proven by `examples/tests/quirk_dequeued_data.rs` and
/// `examples/tests/events_threads.rs`, with real traffic).
#[test]
fn the_table_is_complete_and_unique() {
    let mut ids: Vec<&str> = QUIRKS.iter().map(|q| q.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), QUIRKS.len(), "duplicate quirk ids");
    let covered = [
        quirks::MPICH_MPI_T_AFTER_FINALIZE.id,
        quirks::OPEN_MPI_INFO_OUTSIDE_INIT.id,
        quirks::OPEN_MPI_PSM2_PVAR_HANDLES.id,
        quirks::OPEN_MPI_CLOSED_COMPONENT_CVARS.id,
        quirks::OPEN_MPI_DANGLING_CVAR_STORAGE.id,
        quirks::MPICH_EVENT_ENUMTYPE.id,
        quirks::MPICH_DEQUEUED_EVENT_DATA.id,
        quirks::MPICH_EVENT_REGISTRATION_RACE.id,
        #[cfg(mpit_abi)]
        quirks::MPICH_ABI_PVAR_ALL_HANDLES.id,
    ];
    for q in QUIRKS {
        assert!(covered.contains(&q.id), "{} has no test", q.id);
        assert!(
            q.id.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        );
    }
    let here = mpit_safe::implementation();
    eprintln!("running on {here}; quirks that apply here:");
    for q in QUIRKS.iter().filter(|q| quirks::applies(q)) {
        eprintln!("  {q}");
    }
}
