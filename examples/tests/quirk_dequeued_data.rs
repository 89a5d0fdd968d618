//! The quirk guard `mpich-unexp-message-dequeued-data` (`mpit_safe::quirks::
//! MPICH_DEQUEUED_EVENT_DATA`), shown both ways on the MPI that raises the event (`mpich-ev`):
//!
//! - `c_reproducer_crashes`: `examples/quirks/dequeued_event_read.c`, built with `$MPICC` and
//!   run as `$MPIEXEC -n 2 ./dequeued_event_read read`, dies of SIGSEGV inside
//!   `MPI_T_event_read` at an address a few bytes above 0 (a field of MPICH's NULL request);
//!   in `meta` mode (source and timestamp only) it completes. The crash must be reproduced
//!   exactly where the guard applies to the loaded library.
//! - `safe_api_refuses_instead`: the same exchange through mpit-safe: `read`, `read_value` and
//!   `copy_into` of every dequeued event return `Error::KnownCrash` naming the quirk, the
//!   source and timestamp are still there, and the process lives on.
//!
//! On an MPI without these event types both say so and pass, unless the library says it was
//! configured with `--enable-mpit-events`.

#[cfg(mpit_events)]
mod with_events {
    use std::path::Path;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    // rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
    use mpi::traits::*;
    #[cfg(mpit_abi)]
    use mpit_safe::mpi;
    use mpit_safe::{CbSafety, Error, Mpit, NoObject, quirks};

    use mpit_test_support::cc;
    use mpit_test_support::mpi::no_event_type;
    use mpit_test_support::process::{self, test_path};

    const CHILD: &str = "MPIT_QUIRK_DEQUEUED_CHILD";
    const NO_EVENTS: &str = "no unexp_message_enqueued/dequeued event types";
    const MESSAGES: usize = 3;

    /// Fails if a library configured with events has none; says so and returns `true` where
    /// there is nothing to show.
    fn nothing_to_show(out: &str) -> bool {
        no_event_type(
            out,
            NO_EVENTS,
            "unexp_message_dequeued",
            "no unexp_message_dequeued event type: the quirk has nothing to guard here",
        )
    }

    #[test]
    fn c_reproducer_crashes() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("quirks/dequeued_event_read.c");
        let exe = cc::build_c(
            &src,
            &Path::new(env!("CARGO_TARGET_TMPDIR")).join("dequeued_event_read"),
        );
        let run = |mode: &str| {
            let mut cmd = process::mpiexec();
            cmd.args(["-n", "2"]).arg(&exe).arg(mode);
            let out = process::run(cmd, Duration::from_secs(120));
            (out.status.success(), process::show(&out))
        };
        let (meta_ok, meta) = run("meta");
        if nothing_to_show(&meta) {
            assert!(meta_ok);
            return;
        }
        assert!(meta_ok, "the reproducer failed without reading the data");
        assert!(
            meta.contains(&format!(
                "rank 0: {MESSAGES} unexp_message_enqueued ({MESSAGES} from rank 1), {MESSAGES} \
                 unexp_message_dequeued ({MESSAGES} with source and timestamp); no crash"
            )),
            "the events themselves did not arrive intact"
        );

        let (read_ok, read) = run("read");
        let fault = read
            .lines()
            .find_map(|l| l.strip_prefix("rank 0: SIGSEGV at address "))
            .map(|rest| {
                let (addr, place) = rest.split_once(' ').unwrap_or((rest, ""));
                let addr = u64::from_str_radix(addr.trim_start_matches("0x"), 16).unwrap();
                (addr, place.to_owned())
            });
        let crashed = fault.is_some();
        assert_eq!(
            crashed,
            quirks::applies(&quirks::MPICH_DEQUEUED_EVENT_DATA),
            "the guard must apply exactly where reading the dequeued data crashes ({})",
            mpit_safe::implementation()
        );
        if let Some((addr, place)) = fault {
            assert!(!read_ok, "a segfault must fail the job");
            assert!(read.contains("calling MPI_T_event_read(element 0)"));
            assert!(!read.contains("MPI_T_event_read returned"));
            assert_eq!(place, "inside MPI_T_event_read");
            assert!(
                addr < 0x10000,
                "the fault is at {addr:#x}, not at a field of a NULL request"
            );
            println!(
                "{}: reading unexp_message_dequeued's element 0 segfaults inside \
                 MPI_T_event_read at {addr:#x} (a field of a NULL request); source and \
                 timestamp alone are fine",
                mpit_safe::implementation()
            );
        } else {
            assert!(read_ok && read.contains("MPI_T_event_read returned 0, element 0 = 1"));
        }
    }

    /// Rank 0 of `safe_api_refuses_instead`: what mpit-safe gives for each dequeued event.
    #[derive(Debug, PartialEq, Eq)]
    struct Refusals {
        read: bool,
        value: bool,
        copy: bool,
        readable: bool,
        source: bool,
        timestamp: bool,
    }

    fn child() {
        let mpit = Mpit::init().unwrap();
        let universe = mpi::initialize().unwrap();
        let world = universe.world();
        let Some(deq) = mpit.event_index("unexp_message_dequeued").unwrap() else {
            if world.rank() == 0 {
                println!("rank 0: {NO_EVENTS}");
            }
            return;
        };
        exchange(&mpit, &world, deq);
        drop(mpit);
    }

    /// Rank 1 sends, rank 0 receives and checks what its closure got of each dequeued event.
    fn exchange(mpit: &Mpit, world: &mpi::topology::SimpleCommunicator, deq: usize) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let reg = (world.rank() == 0).then(|| {
            let seen = seen.clone();
            let is_quirk = |r: Result<(), Error>| {
                matches!(r, Err(Error::KnownCrash(q)) if q.id == quirks::MPICH_DEQUEUED_EVENT_DATA.id)
            };
            mpit.event_registration(deq, &NoObject)
                .on_event(CbSafety::ThreadSafe, move |e| {
                    let mut buf = vec![0u8; e.extent()];
                    let r = Refusals {
                        read: is_quirk(e.read::<i32>(0).map(drop)),
                        value: is_quirk(e.read_value(0).map(drop)),
                        copy: is_quirk(e.copy_into(&mut buf).map(drop)),
                        readable: is_quirk(e.data_readable()),
                        source: e.source().is_ok(),
                        timestamp: e.timestamp().is_ok(),
                    };
                    seen.lock().unwrap().push(r);
                })
                .register()
                .unwrap()
        });
        world.barrier();
        if world.rank() == 1 {
            for i in 0..MESSAGES as i32 {
                world.process_at_rank(0).send_with_tag(&i, 700 + i);
            }
        }
        world.barrier();
        if let Some(reg) = reg {
            for i in 0..MESSAGES as i32 {
                world
                    .process_at_rank(1)
                    .receive_into_with_tag(&mut 0i32, 700 + i);
            }
            assert!(reg.free().unwrap().wait(Duration::from_secs(10)));
            let seen = seen.lock().unwrap();
            let refused = quirks::applies(&quirks::MPICH_DEQUEUED_EVENT_DATA);
            let want = Refusals {
                read: refused,
                value: refused,
                copy: refused,
                readable: refused,
                source: true,
                timestamp: true,
            };
            let ok = seen.len() == MESSAGES && seen.iter().all(|r| *r == want);
            println!(
                "rank 0: {} dequeued events, each {:?}: {}",
                seen.len(),
                seen.first(),
                if ok { "OK" } else { "WRONG" }
            );
        }
        world.barrier();
    }

    #[test]
    fn safe_api_refuses_instead() {
        if std::env::var_os(CHILD).is_some() {
            return child();
        }
        let mut cmd = process::mpiexec();
        cmd.args(["-n", "2", "env", &format!("{CHILD}=1")])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &test_path(module_path!(), "safe_api_refuses_instead"),
                "--nocapture",
            ]);
        let out = process::run(cmd, Duration::from_secs(120));
        let text = process::show(&out);
        assert!(out.status.success(), "the 2-rank run failed");
        if nothing_to_show(&text) {
            return;
        }
        assert!(
            text.contains(&format!("rank 0: {MESSAGES} dequeued events")) && text.contains(": OK"),
            "rank 0 did not get the refusals"
        );
        println!(
            "{}: the safe API refused every dequeued event's data (quirk applies: {})",
            mpit_safe::implementation(),
            quirks::applies(&quirks::MPICH_DEQUEUED_EVENT_DATA)
        );
    }
}

#[cfg(not(mpit_events))]
#[test]
fn no_event_api() {
    println!(
        "{}: no MPI-4 event API in this header: no dequeued events to guard",
        mpit_safe::implementation()
    );
}
