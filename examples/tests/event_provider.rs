//! The test provider of the MPI-4 event API (`event-provider/`, built by `build.rs` as
//! `$MPIT_EVENT_PROVIDER`), loaded ahead of MPICH with `LD_PRELOAD`:
//!
//! - `c_test_program`: compiles `event-provider/test_provider.c` with the same `mpicc` and
//!   runs it as `$MPIEXEC -n 2 env LD_PRELOAD=$MPIT_EVENT_PROVIDER ./test_provider`: queries,
//!   error codes, selection rule, dropped handler ordering, free callbacks (also against
//!   in-flight callbacks on other threads), info hints, and the events of real sends and
//!   receives between the two ranks;
//! - `mpit_counts_sees_the_provider`: a Rust binary linked through `mpi-sys` (`mpit-counts`)
//!   sees the provider's sources and event types;
//! - `rsmpi_traffic_raises_events`: rsmpi's sends and receives in a 2-rank Rust program raise
//!   `p2p_send`/`p2p_recv` with their true ranks, tags and sizes, seen by a callback
//!   registered through `mpit-sys`.
//!
//! Where the MPI has no event API (Open MPI 4.1/5.0) nothing is built and each test prints a
//! skip line.

#[cfg(not(mpit_events))]
const SKIP: &str = "skipped: this MPI's header has no MPI-4 event API (Open MPI), so the test \
                    event provider is not built";

#[cfg(not(mpit_events))]
#[test]
fn c_test_program() {
    eprintln!("c_test_program {SKIP}");
}

#[cfg(not(mpit_events))]
#[test]
fn mpit_counts_sees_the_provider() {
    eprintln!("mpit_counts_sees_the_provider {SKIP}");
}

#[cfg(not(mpit_events))]
#[test]
fn rsmpi_traffic_raises_events() {
    eprintln!("rsmpi_traffic_raises_events {SKIP}");
}

#[cfg(mpit_events)]
mod with_events {
    // rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
    #[cfg(mpit_abi)]
    use mpit_safe::mpi;

    use std::ffi::{CStr, c_char, c_int, c_void};
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::Mutex;
    use std::time::Duration;

    use mpit_sys as sys;

    /// Set in the environment of the ranks of `rsmpi_traffic_raises_events`.
    const CHILD: &str = "MPIT_EVENT_PROVIDER_TEST_CHILD";

    /// The provider (built by build.rs, or named at run time).
    fn provider() -> String {
        crate::provider::path()
    }

    /// `LD_PRELOAD` with the provider first.
    fn ld_preload() -> String {
        match std::env::var("LD_PRELOAD") {
            Ok(old) if !old.is_empty() => format!("{}:{old}", provider()),
            _ => provider(),
        }
    }

    /// `$MPIEXEC` (set by scripts/with-mpi; may carry arguments), else the `mpiexec` next to
    /// the `mpicc` the provider was built with (`mpicc.mpich` -> `mpiexec.mpich`,
    /// `dir/mpicc` -> `dir/mpiexec`), else `mpiexec`.
    fn mpiexec() -> Command {
        let line = std::env::var("MPIEXEC")
            .ok()
            .filter(|s| !s.trim().is_empty());
        let line = line.unwrap_or_else(|| {
            let mpicc = crate::provider::mpicc();
            let prog = mpicc.split_whitespace().next().unwrap_or("mpicc");
            match prog.rsplit_once('/') {
                Some((dir, name)) => format!("{dir}/{}", name.replacen("mpicc", "mpiexec", 1)),
                None => prog.replacen("mpicc", "mpiexec", 1),
            }
        });
        let mut words = line.split_whitespace();
        let mut cmd = Command::new(words.next().unwrap_or("mpiexec"));
        cmd.args(words);
        cmd
    }

    use mpit_test_support::process::{run, show, test_path};

    #[test]
    fn c_test_program() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("event-provider");
        let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test_provider");
        let mpicc = crate::provider::mpicc();
        let mut words = mpicc.split_whitespace();
        let mut cc = Command::new(words.next().unwrap_or("mpicc"));
        cc.args(words)
            .args(["-O2", "-g", "-Wall", "-Wextra", "-I"])
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .arg(src.join("test_provider.c"))
            .args(["-lpthread", "-ldl"]);
        let out = run(cc, Duration::from_secs(120));
        show(&out);
        assert!(out.status.success(), "compiling test_provider.c failed");

        let mut cmd = mpiexec();
        cmd.args(["-n", "2", "env"])
            .arg(format!("LD_PRELOAD={}", ld_preload()))
            .arg(&exe);
        let out = run(cmd, Duration::from_secs(300));
        let stdout = show(&out);
        assert!(
            out.status.success(),
            "the 2-rank test failed: {}",
            out.status
        );
        assert!(
            stdout.contains("event provider test: OK (0 failures on 2 ranks)"),
            "rank 0 did not report success"
        );
        for rank in 0..2 {
            assert!(
                stdout.contains(&format!("rank {rank}: ")) && stdout.contains(" 0 failures"),
                "no report from rank {rank}"
            );
        }
    }

    #[test]
    fn mpit_counts_sees_the_provider() {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mpit-counts"));
        cmd.arg("--kv").env("LD_PRELOAD", ld_preload());
        let out = run(cmd, Duration::from_secs(120));
        let stdout = show(&out);
        assert!(out.status.success(), "mpit-counts failed: {}", out.status);
        assert!(
            stdout.contains(" events=8 "),
            "not the provider's 8 event types"
        );
        assert!(
            stdout.contains(" sources=4 "),
            "not the provider's 4 sources"
        );
    }

    /// What the callback saw: (event, peer, tag, bytes, source).
    type Seen = (usize, c_int, c_int, sys::MPI_Count, c_int);
    static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());
    static FREED: Mutex<usize> = Mutex::new(0);

    /// The provider's p2p element layout: peer, tag (MPI_INT), bytes (MPI_COUNT), comm.
    unsafe extern "C" fn on_event(
        instance: sys::MPI_T_event_instance,
        _registration: sys::MPI_T_event_registration,
        _cb_safety: sys::MPI_T_cb_safety,
        user_data: *mut c_void,
    ) {
        let which = user_data as usize;
        let (mut peer, mut tag, mut bytes, mut source): (c_int, c_int, sys::MPI_Count, c_int) =
            (-1, -1, -1, -1);
        // SAFETY: `instance` is the instance of this invocation; the buffers have the element
        // types the provider declares (MPI_INT, MPI_INT, MPI_COUNT).
        let ok = unsafe {
            sys::MPI_T_event_read(instance, 0, (&raw mut peer).cast()) == sys::MPI_SUCCESS
                && sys::MPI_T_event_read(instance, 1, (&raw mut tag).cast()) == sys::MPI_SUCCESS
                && sys::MPI_T_event_read(instance, 2, (&raw mut bytes).cast()) == sys::MPI_SUCCESS
                && sys::MPI_T_event_get_source(instance, &mut source) == sys::MPI_SUCCESS
        };
        if ok && let Ok(mut v) = SEEN.lock() {
            v.push((which, peer, tag, bytes, source));
        }
    }

    unsafe extern "C" fn on_free(
        _registration: sys::MPI_T_event_registration,
        _cb_safety: sys::MPI_T_cb_safety,
        _user_data: *mut c_void,
    ) {
        if let Ok(mut n) = FREED.lock() {
            *n += 1;
        }
    }

    fn index_of(name: &CStr) -> c_int {
        let mut i = -1;
        // SAFETY: MPI_T is initialised; NUL-terminated name; valid out-pointer.
        let rc = unsafe { sys::MPI_T_event_get_index(name.as_ptr() as *const c_char, &mut i) };
        assert_eq!(rc, sys::MPI_SUCCESS, "MPI_T_event_get_index({name:?})");
        i
    }

    /// One rank of `rsmpi_traffic_raises_events`.
    fn child() {
        use mpi::traits::*;

        let mut provided = 0;
        // SAFETY: one MPI_T epoch open across MPI_Init (the README's ordering).
        let rc = unsafe { sys::MPI_T_init_thread(sys::MPI_THREAD_SINGLE, &mut provided) };
        assert_eq!(rc, sys::MPI_SUCCESS);
        let universe = mpi::initialize().expect("MPI_Init");
        let world = universe.world();
        let rank = world.rank();

        let mut regs = Vec::new();
        for (which, name) in [(0usize, c"p2p_send"), (1, c"p2p_recv")] {
            let mut reg: sys::MPI_T_event_registration = std::ptr::null_mut();
            // SAFETY: valid index, no object needed (MPI_T_BIND_NO_OBJECT), out-pointer valid;
            // the callback and user_data (a plain integer) stay valid for the whole run.
            unsafe {
                let rc = sys::MPI_T_event_handle_alloc(
                    index_of(name),
                    std::ptr::null_mut(),
                    sys::MPI_INFO_NULL,
                    &mut reg,
                );
                assert_eq!(rc, sys::MPI_SUCCESS);
                let rc = sys::MPI_T_event_register_callback(
                    reg,
                    sys::MPI_T_CB_REQUIRE_MPI_RESTRICTED as sys::MPI_T_cb_safety,
                    sys::MPI_INFO_NULL,
                    which as *mut c_void,
                    Some(on_event),
                );
                assert_eq!(rc, sys::MPI_SUCCESS);
            }
            regs.push(reg);
        }

        // rank 0 sends 4, 8, 12 bytes with tags 40, 41, 42; rank 1 receives them.
        let data = [7u8; 12];
        let mut buf = [0u8; 12];
        for i in 0..3usize {
            let n = 4 * (i + 1);
            let tag = 40 + i as i32;
            if rank == 0 {
                world.process_at_rank(1).send_with_tag(&data[..n], tag);
            } else {
                let status = world
                    .process_at_rank(0)
                    .receive_into_with_tag(&mut buf[..n], tag);
                assert_eq!(status.tag(), tag);
            }
        }
        world.barrier();

        for reg in regs {
            // SAFETY: a live registration, freed once.
            let rc =
                unsafe { sys::MPI_T_event_handle_free(reg, std::ptr::null_mut(), Some(on_free)) };
            assert_eq!(rc, sys::MPI_SUCCESS);
        }
        let seen = SEEN.lock().expect("lock").clone();
        let freed = *FREED.lock().expect("lock");
        let (which, peer) = if rank == 0 { (0, 1) } else { (1, 0) };
        let want: Vec<Seen> = (0..3)
            .map(|i| (which, peer, 40 + i, 4 * (i as sys::MPI_Count + 1), 0))
            .collect();
        let ok = seen == want && freed == 2;
        println!(
            "rust rank {rank}: seen {seen:?}, free callbacks {freed}: {}",
            if ok { "OK" } else { "WRONG" }
        );
        // SAFETY: balances MPI_T_init_thread, before MPI_Finalize (when `universe` drops).
        unsafe { sys::MPI_T_finalize() };
        drop(universe);
        assert!(ok);
    }

    #[test]
    fn rsmpi_traffic_raises_events() {
        if std::env::var_os(CHILD).is_some() {
            return child();
        }
        let mut cmd = mpiexec();
        cmd.args(["-n", "2", "env"])
            .arg(format!("LD_PRELOAD={}", ld_preload()))
            .arg(format!("{CHILD}=1"))
            .arg(std::env::current_exe().expect("current_exe"))
            .args([
                "--exact",
                &test_path(module_path!(), "rsmpi_traffic_raises_events"),
                "--nocapture",
            ]);
        let out = run(cmd, Duration::from_secs(300));
        let stdout = show(&out);
        assert!(
            out.status.success(),
            "the 2-rank run failed: {}",
            out.status
        );
        for rank in 0..2 {
            assert!(
                stdout.contains(&format!("rust rank {rank}: ")) && !stdout.contains("WRONG"),
                "rank {rank} did not see its events"
            );
        }
        assert_eq!(stdout.matches(": OK").count(), 2);
    }
}
