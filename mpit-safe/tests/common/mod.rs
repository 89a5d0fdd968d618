//! What the integration tests share.

#![allow(dead_code)]

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard, Once};

use mpit_safe::{Mpit, sys};

/// The test harness runs tests on several threads; a token below `MPI_THREAD_MULTIPLE` confines
/// MPI_T to one thread, so the tests take turns.
static TURN: Mutex<()> = Mutex::new(());

/// A token and the turn, dropped in that order (fields drop in declaration order).
pub(crate) struct Turn {
    pub(crate) mpit: Mpit,
    _turn: MutexGuard<'static, ()>,
}

/// Waits for this test's turn and initialises MPI_T.
pub(crate) fn turn() -> Turn {
    let guard = TURN.lock().unwrap_or_else(|p| p.into_inner());
    Turn {
        mpit: Mpit::init().unwrap(),
        _turn: guard,
    }
}

unsafe extern "C" {
    /// C's `atexit`: MPI_Finalize runs when the test binary exits, after every test.
    fn atexit(f: extern "C" fn()) -> c_int;
}

extern "C" fn finalize_at_exit() {
    // SAFETY: MPI was initialised once by `turn_after_init`; no test runs any more and every
    // MPI_T token has been dropped (MPI_T's process-lifetime anchor stays, which is the
    // ordering the library relies on).
    unsafe { sys::MPI_Finalize() };
}

/// Waits for this test's turn, initialises MPI_T, and makes sure MPI is initialised (once per
/// test binary, finalised at exit): MPICH registers its performance variables, event sources
/// and event types only in `MPI_Init`, so a test that looks before it proves nothing there.
pub(crate) fn turn_after_init() -> Turn {
    static INIT: Once = Once::new();
    let t = turn();
    INIT.call_once(|| {
        init_mpi();
        // SAFETY: registers a plain function without captures.
        assert_eq!(unsafe { atexit(finalize_at_exit) }, 0);
    });
    t
}

/// `MPI_Init_thread` at `MPI_THREAD_SINGLE`, asserting success. Call it once per process.
pub(crate) fn init_mpi() {
    let mut provided = 0;
    // SAFETY: callers make this the only MPI_Init of the process; null argc/argv as the
    // standard allows.
    let rc = unsafe {
        sys::MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            sys::MPI_THREAD_SINGLE,
            &mut provided,
        )
    };
    assert_eq!(rc, sys::MPI_SUCCESS, "MPI_Init_thread");
}

/// What an implementation must show after `MPI_Init`, from its own words: MPICH exports
/// performance variables only when configured `--enable-mpit-pvars` and raises events only
/// when configured `--enable-mpit-events` (both listed in its `MPI_Get_library_version`);
/// every other implementation here exports performance variables, and none other raises
/// events. A test that finds nothing where material is required fails.
pub(crate) struct Material {
    /// Performance variables must exist after `MPI_Init`.
    pub(crate) pvars: bool,
    /// Event types and sources must exist after `MPI_Init`.
    pub(crate) events: bool,
}

pub(crate) fn material() -> Material {
    use mpit_safe::quirks::configure_option;
    match mpit_safe::implementation().vendor {
        mpit_safe::Vendor::Mpich => Material {
            pvars: configure_option("--enable-mpit-pvars").is_some_and(|v| v != "none"),
            events: configure_option("--enable-mpit-events").is_some_and(|v| v != "no"),
        },
        _ => Material {
            pvars: true,
            events: false,
        },
    }
}

/// Runs test `test` of this binary on `ranks` ranks, `$MPIEXEC -n RANKS ARGS BINARY --exact
/// TEST --nocapture` with `child` set in the environment (the test runs its ranks' part when
/// it finds it). Kills the job after `limit` (a hung MPI job fails the test instead of
/// stalling it) and echoes its output indented (the ranks' harness lines are then not taken
/// for this run's results).
pub(crate) fn run_ranks(
    ranks: u32,
    args: &[&str],
    test: &str,
    child: &str,
    limit: std::time::Duration,
) -> std::process::Output {
    run_ranks_with(ranks, args, &[], test, child, limit)
}

/// [`run_ranks`] with the variables `env` set in the job's environment too.
pub(crate) fn run_ranks_with(
    ranks: u32,
    args: &[&str],
    env: &[(&str, &str)],
    test: &str,
    child: &str,
    limit: std::time::Duration,
) -> std::process::Output {
    use std::process::{Command, Stdio};
    let words =
        mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
    let mut job = Command::new(&words[0])
        .args(&words[1..])
        .args(["-n", &ranks.to_string()])
        .args(args)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(child, "1")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mpiexec");
    let start = std::time::Instant::now();
    while job.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = job.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = job.wait_with_output().unwrap();
    for line in String::from_utf8_lossy(&out.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
    {
        eprintln!("  | {line}");
    }
    out
}

/// Resident set size in bytes (`/proc/self/statm`, second field, in pages).
pub(crate) fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse().ok())
        .expect("statm's resident field");
    pages * 4096
}

/// `MPI_COMM_WORLD` (a link-time object in rsmpi's bindings, a constant in the ABI's).
#[cfg(mpit_abi)]
pub(crate) fn comm_world() -> sys::MPI_Comm {
    sys::MPI_COMM_WORLD
}

/// `MPI_COMM_WORLD` (a link-time object in rsmpi's bindings, a constant in the ABI's).
#[cfg(not(mpit_abi))]
pub(crate) fn comm_world() -> sys::mpi_sys::MPI_Comm {
    // SAFETY: a link-time constant of the MPI library.
    unsafe { sys::mpi_sys::RSMPI_COMM_WORLD }
}
