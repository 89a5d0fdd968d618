//! The test provider, driven through mpit-safe, against mpit-core's executable model of event
//! delivery (`mpit_core::event_model`): random sequences of allocate / register / remove /
//! set-dropped-handler / free / raise-in-a-context give the same observable outcomes (which
//! closure runs, at which level, which dropped reports precede it) in both. The second test
//! runs such sequences on three threads at once, each on its own event type (so each thread's
//! outcomes are its own model's, whatever the interleaving) while the provider's sources,
//! registration lists and reclamation are shared. The sequences and their check are
//! `mpit_conformance`'s (`event_op`, `check_event_sequence`), which `mpit-conform`'s
//! `events.model` property runs too.
//! Re-runs itself with the provider preloaded; without the event API (Open MPI) it says so.

#[cfg(mpit_events)]
mod with_events {
    use std::sync::atomic::Ordering;
    use std::time::Instant;

    use mpit_conformance::{check_event_sequence, event_op};
    use mpit_safe::Mpit;
    use mpit_safe::level;
    use mpit_test_support::process::test_path;
    use proptest::prelude::*;

    use crate::provider::Provider;

    static PROVIDER: std::sync::LazyLock<String> = std::sync::LazyLock::new(crate::provider::path);
    const CHILD: &str = "MPIT_EVENTS_MODEL_CHILD";

    fn child() {
        let mpit = Mpit::init().unwrap();
        let p = Provider::load(PROVIDER.as_str());
        p.drops_per_registration(); // what the model says
        let ev = mpit.event_index("provider_test").unwrap().unwrap();
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 200,
            ..Default::default()
        });
        let ops = proptest::collection::vec(event_op(mpit.source_count().unwrap()), 0..40);
        let result = runner.run(&ops, |ops| {
            check_event_sequence(&mpit, p.raise_at, ev, &ops).map_err(TestCaseError::fail)
        });
        match result {
            Ok(()) => println!("provider agrees with the model on 200 random sequences"),
            Err(e) => panic!("provider and model disagree: {e}"),
        }
    }

    /// The event types the threads of the concurrent test use, one each.
    const THREAD_EVENTS: [&str; 3] = ["provider_test", "p2p_send", "provider_empty"];

    fn threads_child() {
        let mpit = Mpit::<level::Multiple>::init_thread().unwrap();
        let p = Provider::load(PROVIDER.as_str());
        p.drops_per_registration();
        let evs: Vec<usize> = THREAD_EVENTS
            .iter()
            .map(|n| mpit.event_index(n).unwrap().expect(n))
            .collect();
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 100,
            ..Default::default()
        });
        let programs = proptest::collection::vec(
            // Long enough that the threads' runs overlap (a short one ends before the next
            // thread starts).
            proptest::collection::vec(event_op(mpit.source_count().unwrap()), 100..400),
            THREAD_EVENTS.len(),
        );
        let overlapped = std::sync::atomic::AtomicUsize::new(0);
        let result = runner.run(&programs, |programs| {
            let start = std::sync::Barrier::new(programs.len());
            let results: Vec<(Result<(), String>, Instant, Instant)> = std::thread::scope(|s| {
                let handles: Vec<_> = programs
                    .iter()
                    .zip(&evs)
                    .map(|(ops, &ev)| {
                        let (mpit, p, start) = (&mpit, &p, &start);
                        s.spawn(move || {
                            start.wait();
                            let t0 = Instant::now();
                            let r = check_event_sequence(mpit, p.raise_at, ev, ops);
                            (r, t0, Instant::now())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            // Did two threads' runs overlap in time (one started before the other ended)?
            let overlap = results
                .iter()
                .enumerate()
                .any(|(i, a)| results[i + 1..].iter().any(|b| a.1.max(b.1) < a.2.min(b.2)));
            if overlap {
                overlapped.fetch_add(1, Ordering::Relaxed);
            }
            for (t, (r, _, _)) in results.into_iter().enumerate() {
                r.map_err(|e| TestCaseError::fail(format!("thread {t}: {e}")))?;
            }
            Ok(())
        });
        match result {
            Ok(()) => {
                let n = overlapped.load(Ordering::Relaxed);
                println!(
                    "provider agrees with the model on 100 random programs of 3 concurrent \
                     threads ({n} ran with two or more threads inside the provider at once)"
                );
                assert!(
                    n > 0,
                    "the threads never overlapped: nothing concurrent was checked"
                );
            }
            Err(e) => panic!("provider and model disagree: {e}"),
        }
    }

    fn rerun(test: &str) -> String {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &test_path(module_path!(), test), "--nocapture"])
            .env(CHILD, "1")
            .env("LD_PRELOAD", PROVIDER.as_str())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        for l in text.lines() {
            eprintln!("  | {l}");
        }
        assert!(out.status.success(), "child failed");
        text
    }

    #[test]
    fn provider_follows_the_model() {
        if std::env::var_os(CHILD).is_some() {
            return child();
        }
        let text = rerun("provider_follows_the_model");
        assert!(text.contains("provider agrees with the model on 200"));
    }

    #[test]
    fn provider_follows_the_model_from_threads() {
        if std::env::var_os(CHILD).is_some() {
            return threads_child();
        }
        let text = rerun("provider_follows_the_model_from_threads");
        assert!(text.contains("3 concurrent threads"));
    }
}

#[cfg(not(mpit_events))]
#[test]
fn provider_follows_the_model() {
    eprintln!("no MPI-4 event API in this header: nothing to run");
}
