//! The hand-written wrappers: `MPI_Init` and `MPI_Init_thread` start the engine,
//! `MPI_Finalize` finishes it, reduces every rank's profile up a tree on a private
//! communicator (`crate::partial`) and has rank 0 write the outputs, then finalises MPI.
//! Also the checks that the program uses the library we were built for, and says so when it
//! never initialised MPI.

// The exported C functions are `pub` so that they are exported from the shared object.
#![allow(unreachable_pub)]

use std::ffi::{CStr, c_void};
use std::io::Write as _;
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

// mpi-sys in the native build; the ABI build's own declarations (src/abi.rs) otherwise.
#[cfg(mpit_abi)]
use crate::abi as mpi_sys;
use mpi_sys::{MPI_Comm, PMPI_Finalize, PMPI_Init, PMPI_Init_thread};
use mpit_safe::{Mpit, Session};

use crate::config::{self, Settings};
use crate::glue::{self, Engine, SUCCESS};
use crate::model::RankProfile;
use crate::wrappers::FUNCTIONS;
use crate::{Config, Profiler};

/// `MPI_Get_library_version` of the library the wrappers were generated for.
const BUILT_VERSION: &str = include_str!(concat!(env!("OUT_DIR"), "/library_version.txt"));
/// That library's file.
const BUILT_LIBMPI: &str = env!("MPIT_PROF_BUILD_LIBMPI");

/// `MPI_Init` or `MPI_Init_thread` was called (by the profiled thread or any other).
static INIT_SEEN: AtomicBool = AtomicBool::new(false);
/// MPI was initialised with the library we were built for: every rank then takes part in the
/// reduction at `MPI_Finalize`, with or without a profile of its own (one rank that stays out,
/// its tool broken by a panic or never started, would leave the others waiting there).
static REDUCE_AT_FINALIZE: AtomicBool = AtomicBool::new(false);
/// When `MPI_Finalize` was entered, and the process's peak resident size then (KiB).
static FINALIZE_AT: OnceLock<(std::time::Instant, Option<u64>)> = OnceLock::new();
/// The settings, read at `MPI_Init`.
static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Profiled `MPI_Init`: MPI_T, `PMPI_Init`, then the engine starts (if the library is ours).
///
/// # Safety
/// The contract of `MPI_Init`: `argc` and `argv` are null or `main`'s arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    // SAFETY: the caller's arguments, unchanged, to the function MPI_Init stands for.
    initialise(|| unsafe { PMPI_Init(argc, argv) })
}

/// Profiled `MPI_Init_thread`: MPI_T, `PMPI_Init_thread`, then the engine starts on this
/// thread.
///
/// # Safety
/// The contract of `MPI_Init_thread`: `argc` and `argv` are null or `main`'s arguments,
/// `provided` points to an `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    // SAFETY: the caller's arguments, unchanged, to the function MPI_Init_thread stands for.
    initialise(|| unsafe { PMPI_Init_thread(argc, argv, required, provided) })
}

/// Profiled `MPI_Finalize`: the engine's last sample and report, the reduction to rank 0 on
/// a duplicate of `MPI_COMM_WORLD` (after the last sample: none of it is measured), rank 0's
/// outputs, then `PMPI_Finalize`.
///
/// # Safety
/// The contract of `MPI_Finalize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    finalise();
    // SAFETY: MPI_Finalize takes no arguments; PMPI_Finalize is what it stands for.
    unsafe { PMPI_Finalize() }
}

/// Initialises MPI_T (if the library is ours), then MPI with `pmpi` (which returns the error
/// code), then starts the engine if the library is ours.
fn initialise(pmpi: impl FnOnce() -> c_int) -> c_int {
    let ours = before_init();
    let was = glue::set_busy(true);
    if ours {
        // MPI_T first (`Mpit::init` keeps one initialisation for the process): Open MPI
        // 4.1.4's MPI_T_init_thread opens every component to register its variables, 0.21 s
        // after MPI_Init; before it, MPI_Init finds them open and the two take 0.23 s
        // together instead of 0.43 (the others: no difference). An error here is met again,
        // and reported, when the engine starts.
        let _ = std::panic::catch_unwind(|| drop(Mpit::init()));
    }
    let rc = pmpi();
    glue::set_busy(was);
    if rc == SUCCESS && ours {
        REDUCE_AT_FINALIZE.store(true, Relaxed);
        start();
    }
    rc
}

/// Before MPI is finalised: finishes the engine, reduces and writes the profile. Every rank
/// where MPI was initialised with our library takes part, whether its tool runs or not.
fn finalise() {
    let _ = FINALIZE_AT.set((std::time::Instant::now(), vm_hwm_kib()));
    let engine = glue::take();
    if REDUCE_AT_FINALIZE.swap(false, Relaxed) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| finish(engine)));
    }
}

/// The Fortran entries of initialisation and finalisation, where the Fortran bindings call
/// `PMPI_Init` and `PMPI_Finalize` directly (Open MPI's `mpif.h` / `use mpi`).
#[cfg(mpit_prof_fortran)]
mod fortran_lifecycle {
    use std::ffi::c_void;
    use std::os::raw::c_int;

    use super::{SUCCESS, finalise, initialise};
    use crate::fortran::Next;

    /// The error code a Fortran call left in `ierr`.
    fn code(ierr: *mut c_int) -> c_int {
        if ierr.is_null() {
            SUCCESS
        } else {
            // SAFETY: a non-null `ierr` the caller passed, which the binding has just set.
            unsafe { *ierr }
        }
    }

    /// Profiled `mpi_init_` (`MPI_INIT(IERROR)`): `pmpi_init_`, then the engine starts.
    ///
    /// # Safety
    /// The contract of the Fortran binding: `ierr` references an INTEGER.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn mpi_init_(ierr: *mut c_int) {
        static NEXT: Next = Next::new(c"pmpi_init_");
        // SAFETY: `pmpi_init_` of the MPI's Fortran bindings takes one reference.
        let next: unsafe extern "C" fn(*mut c_int) = unsafe { std::mem::transmute(NEXT.get()) };
        initialise(|| {
            // SAFETY: the caller's argument, unchanged, to the function mpi_init_ stands for.
            unsafe { next(ierr) };
            code(ierr)
        });
    }

    /// Profiled `mpi_init_thread_` (`MPI_INIT_THREAD(REQUIRED, PROVIDED, IERROR)`).
    ///
    /// # Safety
    /// The contract of the Fortran binding: three references to INTEGERs.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn mpi_init_thread_(
        required: *mut c_void,
        provided: *mut c_void,
        ierr: *mut c_int,
    ) {
        static NEXT: Next = Next::new(c"pmpi_init_thread_");
        // SAFETY: `pmpi_init_thread_` of the MPI's Fortran bindings takes three references.
        let next: unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int) =
            unsafe { std::mem::transmute(NEXT.get()) };
        initialise(|| {
            // SAFETY: the caller's arguments, unchanged, to the function mpi_init_thread_
            // stands for.
            unsafe { next(required, provided, ierr) };
            code(ierr)
        });
    }

    /// Profiled `mpi_finalize_` (`MPI_FINALIZE(IERROR)`): the engine finishes, then
    /// `pmpi_finalize_`.
    ///
    /// # Safety
    /// The contract of the Fortran binding: `ierr` references an INTEGER.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn mpi_finalize_(ierr: *mut c_int) {
        static NEXT: Next = Next::new(c"pmpi_finalize_");
        // SAFETY: `pmpi_finalize_` of the MPI's Fortran bindings takes one reference.
        let next: unsafe extern "C" fn(*mut c_int) = unsafe { std::mem::transmute(NEXT.get()) };
        finalise();
        // SAFETY: the caller's argument, unchanged, to the function mpi_finalize_ stands for.
        unsafe { next(ierr) };
    }
}

/// Records that MPI is being initialised; `false` (after one line on stderr) if the process
/// runs another MPI library than the one the wrappers were generated for: everything then
/// passes through unchanged.
fn before_init() -> bool {
    INIT_SEEN.store(true, Relaxed);
    if let Some(mark) = std::env::var_os(config::MARK) {
        // The launcher of a script waits for this file (config::MARK); a failure only costs
        // its message.
        let _ = std::fs::write(mark, b"");
    }
    if !preloaded() {
        // Linked into the program with the engine (a Rust program of the library, a test):
        // its MPI calls reach these wrappers, which pass them through; the program profiles
        // itself, if at all, through the library.
        glue::disable_quietly();
        return false;
    }
    #[cfg(mpit_abi)]
    if let Err(why) = crate::abi::check_library() {
        let _ = writeln!(
            std::io::stderr(),
            "mpit-prof: not profiling: {why}; the program runs unchanged"
        );
        glue::disable_quietly();
        return false;
    }
    let running = library_version();
    let built = BUILT_VERSION.trim();
    if built.is_empty() || running.is_none() || running.as_deref() == Some(built) {
        return true;
    }
    let running = running.unwrap_or_default();
    let first = |s: &str| s.lines().next().unwrap_or("").trim().to_owned();
    let file = pmpi_init_object().unwrap_or_else(|| "an unknown object".into());
    let _ = writeln!(
        std::io::stderr(),
        "mpit-prof: not profiling: this program runs {} ({file}) but libmpit_prof.so was built \
         for {} ({BUILT_LIBMPI}); the program runs unchanged",
        first(&running),
        first(built),
    );
    glue::disable_quietly();
    false
}

/// Whether this code runs from a shared object of its own (`libmpit_prof.so`, preloaded), not
/// from the program it was linked into as a library: the object that holds this function is
/// not the one that holds the program's headers (`AT_PHDR`).
fn preloaded() -> bool {
    fn base(addr: *const c_void) -> Option<*mut c_void> {
        let mut info = libc::Dl_info {
            dli_fname: std::ptr::null(),
            dli_fbase: std::ptr::null_mut(),
            dli_sname: std::ptr::null(),
            dli_saddr: std::ptr::null_mut(),
        };
        // SAFETY: dladdr only reads the loader's tables; `info` is a valid out parameter.
        (unsafe { libc::dladdr(addr, &mut info) } != 0).then_some(info.dli_fbase)
    }
    // SAFETY: getauxval reads the auxiliary vector the kernel gave the process.
    let program = unsafe { libc::getauxval(libc::AT_PHDR) } as *const c_void;
    let ours = base(preloaded as *const c_void);
    // Where the loader cannot say, as before: the library profiles.
    ours.is_none() || program.is_null() || ours != base(program)
}

/// `MPI_Get_library_version` of the library `PMPI_Get_library_version` resolves to (allowed
/// before `MPI_Init`).
fn library_version() -> Option<String> {
    // Larger than any implementation's MPI_MAX_LIBRARY_VERSION_STRING (MPICH: 8192).
    let mut buf = vec![0u8; 1 << 14];
    let mut len: c_int = 0;
    // SAFETY: the buffer holds more than MPI_MAX_LIBRARY_VERSION_STRING bytes of any
    // implementation here; `len` is a valid int.
    let rc = unsafe { mpi_sys::PMPI_Get_library_version(buf.as_mut_ptr().cast(), &mut len) };
    if rc != SUCCESS {
        return None;
    }
    let len = usize::try_from(len).unwrap_or(0).min(buf.len());
    let s = String::from_utf8_lossy(&buf[..len]);
    Some(s.trim_end_matches('\0').trim().to_owned())
}

/// The file of the shared object `PMPI_Init` resolves into.
fn pmpi_init_object() -> Option<String> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    #[cfg(not(mpit_abi))]
    let addr = PMPI_Init as *const c_void;
    // Not the address of this library's stub: the function it calls.
    #[cfg(mpit_abi)]
    let addr: *const c_void = crate::abi::pmpi_init_address();
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out parameter.
    let found = unsafe { libc::dladdr(addr, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr set dli_fname to the NUL-terminated name of a loaded object, which stays
    // loaded (libmpi is never unloaded while we run).
    Some(
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The rank of this process in `MPI_COMM_WORLD` and the size of it.
fn world() -> (usize, usize) {
    let (mut rank, mut size): (c_int, c_int) = (0, 1);
    // SAFETY: MPI is initialised (called after PMPI_Init succeeded and before PMPI_Finalize);
    // the out parameters are valid ints.
    unsafe {
        mpi_sys::PMPI_Comm_rank(world_comm(), &mut rank);
        mpi_sys::PMPI_Comm_size(world_comm(), &mut size);
    }
    (
        usize::try_from(rank).unwrap_or(0),
        usize::try_from(size).unwrap_or(1),
    )
}

fn world_comm() -> MPI_Comm {
    // SAFETY: a `const` object of mpi-sys's C shim, initialised to MPI_COMM_WORLD.
    unsafe { mpi_sys::RSMPI_COMM_WORLD }
}

fn self_comm() -> MPI_Comm {
    // SAFETY: a `const` object of mpi-sys's C shim, initialised to MPI_COMM_SELF.
    unsafe { mpi_sys::RSMPI_COMM_SELF }
}

/// Progress on stderr when asked for (`MPIT_PROF_PROGRESS`).
fn progress(rank: usize, what: &str) {
    if SETTINGS.get().is_some_and(|s| s.progress) {
        let _ = writeln!(std::io::stderr(), "mpit-prof: rank {rank}: {what}");
    }
}

/// Creates the engine after a successful `PMPI_Init`: settings, MPI_T, a session, the
/// profiler with the predefined communicators, then a look for variables registered by
/// `MPI_Init`.
fn start() {
    let was = glue::set_busy(true);
    let (rank, _) = world();
    let (settings, warnings) = Settings::from_vars(|k| std::env::var(k).ok());
    if rank == 0 {
        for w in warnings {
            let _ = writeln!(std::io::stderr(), "mpit-prof: {w}");
        }
    }
    let settings = SETTINGS.get_or_init(|| settings);
    if let Some((at, n)) = config::test_panic(std::env::var(config::TEST_PANIC).ok())
        && at == rank
    {
        glue::panic_at_entry(n);
    }
    let engine = std::panic::catch_unwind(|| create(settings));
    glue::set_busy(was);
    match engine {
        Ok(Ok(engine)) => {
            if !glue::install(engine) {
                return;
            }
            glue::predefined_comm(world_comm(), "MPI_COMM_WORLD");
            glue::predefined_comm(self_comm(), "MPI_COMM_SELF");
            let _ = glue::with_engine(|p| p.refresh());
            if settings.trace {
                let events = glue::with_engine(|p| p.trace_events()).flatten();
                start_trace(rank, settings, events);
            }
            progress(
                rank,
                &format!(
                    "profiling started ({} mode, {} MPI functions wrapped)",
                    settings.mode,
                    FUNCTIONS.len()
                ),
            );
        }
        Ok(Err(e)) => {
            let _ = writeln!(
                std::io::stderr(),
                "mpit-prof: rank {rank}: cannot start the profiler ({e}); the program runs \
                 unprofiled"
            );
        }
        Err(_) => glue::disable("a panic while starting"),
    }
}

/// Event instances a trace's queue holds between two drains (each MPI call drains it).
const TRACE_EVENTS: usize = 1 << 16;

/// The output directory every rank agrees on: rank 0's (the settings', else a new name),
/// broadcast, so that the trace's ranks write into one archive.
static OUTPUT_DIR: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Starts the trace (`MPIT_PROF_TRACE`) on every rank: the output directory agreed, then the
/// archive opened in `<output>/trace/`. A failure is said by rank 0; the run goes on profiled.
fn start_trace(
    rank: usize,
    settings: &Settings,
    events: Option<std::sync::Arc<crate::TraceEvents>>,
) {
    let was = glue::set_busy(true);
    let mine = (rank == 0).then(|| {
        let dir = settings
            .output
            .clone()
            .unwrap_or_else(config::default_output);
        // An earlier run's archive (its anchor file there): OTF2 creates an archive only where
        // none is, so it is replaced, as the profile's files are, before any rank writes.
        let old = dir.join("trace");
        if old.join("traces.otf2").is_file() && std::fs::remove_dir_all(&old).is_ok() {
            progress(rank, &format!("replacing the trace in {}", old.display()));
        }
        dir.to_string_lossy().into_owned().into_bytes()
    });
    let agreed = match crate::tree::Pmpi::dup(world_comm()) {
        Some(p) => crate::tree::bcast(p.comm(), mine),
        None => Vec::new(),
    };
    let dir = std::path::PathBuf::from(String::from_utf8_lossy(&agreed).into_owned());
    let about = match Mpit::init().and_then(|m| m.event_count()) {
        Ok(0) => "none (the MPI registers no event type)".to_owned(),
        Ok(n) => format!("{n} event types"),
        Err(e) => format!("not supported ({e})"),
    };
    let started = if dir.as_os_str().is_empty() {
        Err("the output directory did not reach this rank".to_owned())
    } else {
        let _ = OUTPUT_DIR.set(dir.clone());
        let call_mode = settings.mode == crate::Mode::Call;
        crate::capture::start(&dir.join("trace"), &hostname(), &about, events, call_mode)
    };
    glue::set_busy(was);
    match started {
        Ok(()) => progress(
            rank,
            &format!("tracing into {}", dir.join("trace").display()),
        ),
        Err(e) if rank == 0 => {
            let _ = writeln!(std::io::stderr(), "mpit-prof: no trace: {e}");
        }
        Err(_) => {}
    }
}

/// Ends the trace, if this rank has one (every rank that started one takes part); rank 0
/// says where it is.
fn finish_trace(rank: usize) {
    match crate::capture::finish() {
        Some(Ok(w)) if rank == 0 => {
            let lost = if w.lost > 0 {
                format!(" ({} records lost)", w.lost)
            } else {
                String::new()
            };
            let _ = writeln!(
                std::io::stderr(),
                "mpit-prof: trace of {} ranks written to {}{lost}",
                w.ranks,
                w.anchor.display()
            );
        }
        Some(Err(e)) => {
            let _ = writeln!(
                std::io::stderr(),
                "mpit-prof: rank {rank}: trace not written: {e}"
            );
        }
        _ => {}
    }
}

/// MPI_T, a session and the profiler, for the rest of the process (MPI_T stays initialised
/// anyway: `mpit-safe` never finalises it, see its `init.rs`).
fn create(settings: &Settings) -> mpit_safe::Result<Engine> {
    let mpit: &'static Mpit = Box::leak(Box::new(Mpit::init()?));
    let session: &'static Session<'static> = Box::leak(Box::new(mpit.session()?));
    Profiler::new(
        session,
        Config {
            mode: settings.mode,
            filter: settings.filter(),
            functions: FUNCTIONS.to_vec(),
            root: "main".into(),
            // A trace records every event instance.
            events: settings.events || settings.trace,
            trace_events: if settings.trace { TRACE_EVENTS } else { 0 },
            ..Config::default()
        },
    )
}

/// Finishes the engine (if this rank has one), reduces the profiles up a tree to rank 0 and
/// writes them there. Every rank takes part whatever happened before on it: a rank without a
/// profile sends nothing of its own.
fn finish(engine: Option<&Engine>) {
    let (rank, size) = world();
    progress(rank, "finishing");
    let _ = std::panic::catch_unwind(|| finish_trace(rank));
    let profile = match engine {
        Some(engine) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rank_profile(engine, rank, size)
        }))
        .unwrap_or_else(|_| {
            glue::disable("a panic while finishing");
            None
        }),
        None => None,
    };
    // On a private duplicate of MPI_COMM_WORLD (MPI_COMM_WORLD itself if MPI refuses one).
    let pmpi = crate::tree::Pmpi::dup(world_comm());
    let comm = pmpi.as_ref().map_or_else(world_comm, |p| p.comm());
    end_in_tree(comm, rank, size, profile.as_ref());
    drop(pmpi);
    if rank == 0 {
        end_measured(size);
    }
}

/// The peak resident size of this process so far (`VmHWM` of `/proc/self/status`), in KiB.
fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Rank 0, outputs written: what the end of the run cost it, as a progress line
/// (docs/profiler-scaling.md reads it: `scripts/prof-scale`).
fn end_measured(size: usize) {
    let Some(&(at, before)) = FINALIZE_AT.get() else {
        return;
    };
    let show = |k: Option<u64>| k.map_or_else(|| "?".to_owned(), |k| k.to_string());
    progress(
        0,
        &format!(
            "end of run: {size} ranks, {:.3} ms from MPI_Finalize to the outputs written, \
             VmHWM {} KiB at MPI_Finalize, {} KiB after",
            at.elapsed().as_secs_f64() * 1e3,
            show(before),
            show(vm_hwm_kib()),
        ),
    );
}

/// This rank's profile: the engine's last sample and report (everything after it is the
/// tool's own traffic). `None` (and said on stderr) if the engine cannot finish.
fn rank_profile(engine: &Engine, rank: usize, size: usize) -> Option<RankProfile> {
    match engine.stop() {
        Ok(report) => {
            let mut profile = RankProfile::from_report(
                &report,
                rank,
                size,
                &library_version().unwrap_or_default(),
                &hostname(),
                &std::env::args_os()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>(),
            );
            let foreign = glue::foreign_calls();
            if foreign > 0 {
                profile.notes.push(format!(
                    "{foreign} MPI calls from threads other than the one that called MPI_Init \
                     were passed through unprofiled"
                ));
            }
            Some(profile)
        }
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "mpit-prof: rank {rank}: the profiler could not finish ({e}); this rank's \
                 profile is missing"
            );
            None
        }
    }
}

/// `e` again (an `io::Error` is not `Clone`).
fn clone_error(e: &std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), e.to_string())
}

/// A part as the tree sends it.
fn encode<T: serde::Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// `merge(mine, child's)` of two serialised parts; an empty or unreadable part is none.
fn merge_parts<T: serde::Serialize + serde::de::DeserializeOwned>(
    mine: Vec<u8>,
    child: &[u8],
    merge: fn(T, &T) -> T,
) -> Vec<u8> {
    let Ok(theirs) = serde_json::from_slice::<T>(child) else {
        return mine;
    };
    match serde_json::from_slice::<T>(&mine) {
        Ok(m) => encode(&merge(m, &theirs)),
        Err(_) => child.to_vec(),
    }
}

/// The end of a run on `comm`, every rank the same calls (`crate::partial`): the tables merged
/// up the tree and broadcast, the statistics merged up the tree, then every rank's profile
/// up the tree to rank 0 in rank order, which appends it to `ranks.json` and `profile.json`
/// and keeps its matrix rows; then rank 0 writes the others.
fn end_in_tree(comm: MPI_Comm, rank: usize, size: usize, profile: Option<&RankProfile>) {
    use crate::partial::{Assembly, Partial, Tables};
    use crate::tree;
    let mine = profile.map_or_else(Vec::new, |p| encode(&Tables::of(p)));
    let merged = tree::reduce(comm, mine, &mut |a, b| merge_parts(a, b, Tables::merge));
    let labelled = merged.map(|t| {
        let tables: Tables = serde_json::from_slice(&t).unwrap_or_default();
        encode(&tables.labelled())
    });
    let tables: Tables = serde_json::from_slice(&tree::bcast(comm, labelled)).unwrap_or_default();
    let mine = profile.map_or_else(Vec::new, |p| encode(&Partial::of(&tables, p)));
    let merged = tree::reduce(comm, mine, &mut |a, b| merge_parts(a, b, Partial::merge));
    let mine = profile.map_or_else(Vec::new, encode);
    let Some(merged) = merged else {
        tree::in_turn(comm, mine, &mut |_, _| {});
        return;
    };
    let partial: Partial = serde_json::from_slice(&merged).unwrap_or_default();
    if partial.ranks() == 0 {
        tree::in_turn(comm, mine, &mut |_, _| {});
        let _ = writeln!(
            std::io::stderr(),
            "mpit-prof: no profile written: none of the {size} ranks has one"
        );
        return;
    }
    let settings = SETTINGS.get().cloned().unwrap_or_default();
    let dir = OUTPUT_DIR
        .get()
        .cloned()
        .or_else(|| settings.output.clone())
        .unwrap_or_else(config::default_output);
    progress(rank, &format!("writing {}", dir.display()));
    let mut assembly = Assembly::new(tables, partial, false);
    let mut file = crate::write::RanksFile::create(&dir);
    let mut cali = file.as_ref().map_err(clone_error).and_then(|_| {
        let out = std::fs::File::create(dir.join(crate::write::CALIPER_FILE))?;
        crate::write::caliper::Writer::new(std::io::BufWriter::new(out), assembly.profile())
    });
    let mut missing = Vec::new();
    tree::in_turn(comm, mine, &mut |r, bytes| {
        let Ok(p) = serde_json::from_slice::<RankProfile>(&bytes) else {
            missing.push(r);
            return;
        };
        if let Ok(f) = &mut file
            && let Err(e) = f.push(&p)
        {
            file = Err(e);
        }
        let values = assembly.add(&p);
        if let Ok(w) = &mut cali
            && let Err(e) = w.rank(assembly.profile(), p.rank, &|n| values[n].as_ref())
        {
            cali = Err(e);
        }
    });
    let profile = assembly.finish();
    let written = file
        .and_then(|f| f.finish())
        .and_then(|()| cali.and_then(|w| w.finish(&profile)))
        .and_then(|_| crate::write::write_summaries(&dir, &profile));
    match written {
        Ok(_) => {
            let mut line = format!(
                "mpit-prof: profile of {} of {size} ranks written to {}",
                profile.rank_ids.len(),
                dir.display()
            );
            if !missing.is_empty() {
                line.push_str(&format!(" (no profile from ranks {missing:?})"));
            }
            let _ = writeln!(std::io::stderr(), "{line}");
        }
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "mpit-prof: cannot write the profile to {}: {e}",
                dir.display()
            );
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

// --- the library's destructor -------------------------------------------------------------

/// Run when the process unloads the library (at exit): the process the launcher started says
/// so if it never initialised MPI, since nothing was profiled.
extern "C" fn at_unload() {
    let _ = std::panic::catch_unwind(|| {
        if INIT_SEEN.load(Relaxed) {
            return;
        }
        let Ok(pid) = std::env::var(config::PID) else {
            return;
        };
        if pid.parse::<u32>().ok() != Some(std::process::id()) {
            return;
        }
        let program = std::env::args().next().unwrap_or_default();
        let _ = writeln!(
            std::io::stderr(),
            "mpit-prof: {program} never called MPI_Init or MPI_Init_thread: nothing was profiled"
        );
    });
}

/// `at_unload` in the library's `.fini_array`: the loader runs it when the process exits.
#[used]
#[unsafe(link_section = ".fini_array")]
static AT_UNLOAD: extern "C" fn() = at_unload;
