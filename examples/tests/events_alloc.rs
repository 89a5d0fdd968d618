//! The event stream's callback path allocates nothing (for events up to
//! `INLINE_EVENT_BYTES`): a counting global allocator counts this thread's allocations while
//! the provider raises 10,000 events into `Registration::stream`. Re-runs itself with the test
//! provider preloaded; without the MPI-4 event API (Open MPI) it says so.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made by the current thread (thread-local, so MPI's own helper threads
/// do not disturb the count).
struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the count is a thread-local `Cell` with a const
// initialiser, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[cfg(mpit_events)]
mod provider;

#[global_allocator]
static GLOBAL: Counting = Counting;

#[cfg(mpit_events)]
#[test]
fn stream_callback_path_allocates_nothing() {
    static PROVIDER: std::sync::LazyLock<String> = std::sync::LazyLock::new(crate::provider::path);
    if std::env::var_os("LD_PRELOAD").is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "stream_callback_path_allocates_nothing",
                "--nocapture",
            ])
            .env("LD_PRELOAD", PROVIDER.as_str())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        for l in text.lines() {
            eprintln!("  | {l}");
        }
        assert!(out.status.success());
        assert!(text.contains("allocations in the callback path: 0"));
        return;
    }
    use mpit_safe::{CbSafety, Mpit, NoObject};
    let mpit = Mpit::init().unwrap();
    let p = provider::Provider::load(PROVIDER.as_str());
    let ev = mpit.event_index("provider_test").unwrap().unwrap();
    let reg = mpit.register_event(ev, &NoObject).unwrap();
    let stream = reg.stream(CbSafety::AsyncSignalSafe, 20_000).unwrap();
    let data = provider::TestEvent::new(1);
    let raise = || assert_eq!(p.raise(ev, 0, CbSafety::AsyncSignalSafe, &data), 0);
    raise(); // warm up (first-touch of thread locals in MPI and the provider)
    let before = ALLOCS.with(Cell::get);
    for _ in 0..10_000 {
        raise();
    }
    let allocs = ALLOCS.with(Cell::get) - before;
    assert_eq!(stream.drain().count(), 10_001);
    println!("allocations in the callback path: {allocs} for 10000 events");
    assert_eq!(allocs, 0);
    // The counter does count: one box is one allocation.
    let b = std::hint::black_box(Box::new(7u64));
    assert_eq!(ALLOCS.with(Cell::get) - before, 1);
    drop(b);
    drop(reg);
}

#[cfg(not(mpit_events))]
#[test]
fn stream_callback_path_allocates_nothing() {
    let _ = Box::new(0); // the counting allocator works here too
    eprintln!("no MPI-4 event API in this header: nothing to run");
}
