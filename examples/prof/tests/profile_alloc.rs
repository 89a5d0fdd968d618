//! The profiler's hot path allocates nothing once a region and a (region, function) pair have
//! been seen: a counting global allocator around 10,000 regions and calls, in both modes, after
//! `MPI_Init` with every variable the MPI offers.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use mpit_prof::{Config, Mode, Profiler};
use mpit_test_support::mpi::turn_after_init;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn round(p: &Profiler<'_>) {
    for _ in 0..1000 {
        let _outer = p.region("outer");
        p.begin("inner");
        let c = p.call_enter(0);
        p.call_exit(c);
        p.end("inner").unwrap();
        let c = p.call_enter(1);
        p.call_exit(c);
    }
}

#[test]
fn hot_path_allocates_nothing() {
    let t = turn_after_init();
    let s = t.mpit.session().unwrap();
    for mode in [Mode::Region, Mode::Call] {
        let p = Profiler::new(
            &s,
            Config {
                mode,
                functions: vec!["MPI_Send", "MPI_Recv"],
                ..Config::default()
            },
        )
        .unwrap();
        round(&p); // warm-up: nodes created
        let before = ALLOCS.load(Relaxed);
        for _ in 0..10 {
            round(&p);
        }
        let during = ALLOCS.load(Relaxed) - before;
        let r = p.finish().unwrap();
        let handles: usize = r.columns.iter().map(|c| c.handles).sum();
        eprintln!("{mode}: {handles} handles sampled, {during} allocations in 10,000 rounds");
        assert_eq!(during, 0, "{mode} mode allocated on the hot path");
    }
}
