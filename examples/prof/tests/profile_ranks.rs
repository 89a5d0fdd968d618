//! Call mode's fast path across two ranks (MPI-4.1 §16.3.7, attributed as Caliper's MPIT
//! service does): a function's calls after its first few in a region, not chosen for timing,
//! take the sampling loop inlined into the entry and exit (receives) or the whole call in one
//! function ([`Profiler::try_sampled_call`], sends). Each sample must attribute like the
//! general path: what a counter moves inside an MPI call goes to that call's function, what
//! moves between calls to the region, and nothing is lost or counted twice. So for every
//! integer counter, the exclusive deltas of the region and its two functions add up exactly to
//! what a separate session reads around the region.
//!
//! The test re-runs its own binary under `$MPIEXEC -n 2` (mpich-ev cannot send to itself in a
//! world of one). Both ranks ping-pong [`PAIRS`] times, then rank 1 sends [`K`] messages rank 0
//! has not posted yet; after a barrier rank 0 receives them, each found in the unexpected
//! queue. On an MPICH with pvars (mpich-ev) `unexpected_recvq_match_attempts` must move by at
//! least `K` inside `MPI_Recv`; elsewhere the counters present are checked, and the test says
//! how many moved.

// rsmpi in the native build; its names over the ABI library in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

use std::time::Duration;

use mpi::traits::*;
use mpit_prof::{Config, Filter, Metric, Mode, NodeReport, Profiler};
use mpit_safe::{Bind, DerivedMetric, Mpit, NoObject, TypeKind};
use mpit_test_support::process::{self, test_path};

use crate::report::node;

const CHILD: &str = "MPIT_SAFE_PROFILE_RANKS_CHILD";
/// Round trips in the region: a slow call (a rank descheduled for milliseconds) times the
/// function's next few dozen calls ([`LONG_CALL_NS`]: a recent average), a small part of these.
/// Before it was a recent average, one such call left every send of a CI run timed (Intel MPI).
///
/// [`LONG_CALL_NS`]: mpit_prof::LONG_CALL_NS
const PAIRS: u64 = 2000;
const K: u64 = 20;
const TEST: &str = "call_mode_fast_path_conserves_counters";
const FEW_CHILD: &str = "MPIT_SAFE_PROFILE_RANKS_FEW_CHILD";
const FEW_TEST: &str = "call_mode_few_probes_conserve_counters";
/// Also the variable that makes a debug build of the engine read every sample's one-element
/// probes again one by one, as after a failed read.
const REREAD_CHILD: &str = "MPIT_PROF_TEST_REREAD";
const REREAD_TEST: &str = "call_mode_rereads_conserve_counters";
const NET_CHILD: &str = "MPIT_SAFE_PROFILE_RANKS_NET_CHILD";
const NET_TEST: &str = "call_mode_conserves_counters_over_the_network";
/// The MPICH control variable that sends messages between ranks of one host through the network
/// module (`MPIR_CVAR_NOLOCAL`): mpich-ev's per-NIC byte counters (8 elements each) then move.
const NOLOCAL: &str = "MPIR_CVAR_NOLOCAL";

/// The variables [`FEW_TEST`] profiles: on an MPICH with pvars, two counters of one case, which
/// the sampling loop takes one by one (where the whole set goes run by run).
fn few(name: &str) -> bool {
    name.ends_with("recvq_match_attempts")
}

fn child(few_only: bool, reread: bool, network: bool) {
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    // A failed assertion on one rank must not leave the other waiting.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        measure(&world, few_only, reread, network)
    }));
    if run.is_err() {
        world.abort(3);
    }
}

fn measure(world: &mpi::topology::SimpleCommunicator, few_only: bool, reread: bool, network: bool) {
    let rank = world.rank();
    let other = world.process_at_rank(1 - rank);
    let mpit = Mpit::init().unwrap();
    // Integer counters bound to no object (a timer's doubles would not add up exactly).
    let counters: Vec<_> = mpit
        .pvars()
        .unwrap()
        .entries
        .into_iter()
        .filter(|v| {
            v.bind == Bind::NoObject
                && v.class.derived_metric() == DerivedMetric::Delta
                && matches!(
                    v.datatype.kind(),
                    TypeKind::UnsignedInteger | TypeKind::SignedInteger
                )
        })
        .collect();
    let reference = mpit.session().unwrap();
    let handles: Vec<_> = counters
        .iter()
        .filter_map(|v| {
            let h = reference.dyn_handle(v.index, &NoObject).ok()?;
            if !v.continuous {
                h.start().ok()?;
            }
            Some((v.index, v.name.to_string(), h))
        })
        .collect();
    let read = |h: &mpit_safe::DynPvarHandle<'_>| -> Option<i128> {
        h.read_values()
            .ok()?
            .iter()
            .map(|v| v.as_i64().map(i128::from))
            .sum()
    };
    let session = mpit.session().unwrap();
    let config = Config {
        mode: Mode::Call,
        functions: vec!["MPI_Send", "MPI_Recv"],
        root: "test".into(),
        filter: Filter {
            name: few_only.then(|| Box::new(few) as _),
            ..Filter::default()
        },
        // No function timed for its length: over mpich-ev's network module a ping-pong's
        // calls average more than `LONG_CALL_NS` on some hosts (2 vCPU AMD EPYC: every call
        // timed), which would leave the sampled path untested.
        long_call_ns: f64::INFINITY,
        ..Config::default()
    };
    let p = Profiler::new(&session, config).unwrap();
    // Sends through the whole-call entry the preload library uses (the sample at entry, the
    // call and the sample at exit in one function) where it takes them, receives through it
    // every other time and through `call_enter`/`call_exit` between: all must conserve. The
    // whole-call entry leaves its samples' attribution for later (after a send, before a
    // receive), and the other entry settles them: the mix checks both orders.
    let whole = std::cell::Cell::new(0u64);
    let whole_recv = std::cell::Cell::new(0u64);
    let send = |x: u64| {
        let mut made = 0;
        if p.try_sampled_call(0, &mut || {
            other.send_with_tag(&x, 7);
            made += 1;
        }) {
            whole.set(whole.get() + 1);
        } else {
            let c = p.call_enter(0);
            other.send_with_tag(&x, 7);
            p.call_exit(c);
        }
        assert!(made <= 1, "try_sampled_call made the call {made} times");
    };
    let recvs = std::cell::Cell::new(0u64);
    let recv = || {
        recvs.set(recvs.get() + 1);
        let mut got = None;
        // The re-read run takes every receive it can there: its path then holds every
        // sample that is not a first call's or a timed one's.
        if (reread || recvs.get().is_multiple_of(2))
            && p.try_sampled_call(1, &mut || got = Some(other.receive_with_tag::<u64>(7).0))
        {
            whole_recv.set(whole_recv.get() + 1);
        }
        match got {
            Some(x) => x,
            None => {
                let c = p.call_enter(1);
                let (x, _) = other.receive_with_tag::<u64>(7);
                p.call_exit(c);
                x
            }
        }
    };
    // Not profiled: the first messages set up the connection, which takes milliseconds (the
    // calls after it would be timed while the recent average falls).
    for _ in 0..16 {
        if rank == 0 {
            other.send_with_tag(&0u64, 6);
            other.receive_with_tag::<u64>(6);
        } else {
            other.receive_with_tag::<u64>(6);
            other.send_with_tag(&0u64, 6);
        }
    }
    let before: Vec<_> = handles.iter().map(|(_, _, h)| read(h)).collect();
    // Barriers between profiled calls, not profiled: what they move (a separate session's
    // reads around them) belongs to the region, and nothing else moves between the calls.
    let barriers = std::cell::RefCell::new(vec![Some(0i128); handles.len()]);
    let barrier = || {
        let b = handles.iter().map(|(_, _, h)| read(h)).collect::<Vec<_>>();
        world.barrier();
        let a = handles.iter().map(|(_, _, h)| read(h)).collect::<Vec<_>>();
        for ((sum, b), a) in barriers.borrow_mut().iter_mut().zip(b).zip(a) {
            *sum = (|| Some((*sum)? + a? - b?))();
        }
    };
    {
        let _r = p.region("pairs");
        for i in 0..PAIRS {
            // Halfway, one before a send (rank 0) and a receive (rank 1).
            if i == PAIRS / 2 {
                barrier();
            }
            if rank == 0 {
                send(i);
                assert_eq!(recv(), i);
            } else {
                let x = recv();
                send(x);
            }
        }
        if rank == 1 {
            for i in 0..K {
                send(i);
            }
        }
        // The region's part must be the barriers' exactly: a sample attributed to the wrong
        // node, or its attribution lost, would move theirs into a function.
        barrier();
        if rank == 0 {
            for i in 0..K {
                assert_eq!(recv(), i);
            }
        }
    }
    let after: Vec<_> = handles.iter().map(|(_, _, h)| read(h)).collect();
    let r = p.finish().unwrap();
    let (_, region) = node(&r, &["test", "pairs"]);
    let fns = [
        node(&r, &["test", "pairs", "MPI_Send"]).1,
        node(&r, &["test", "pairs", "MPI_Recv"]).1,
    ];
    // A function whose calls take long on average (a receive waiting for its peer over TCP)
    // is timed at every call, on the general path; the eager sends at least are not.
    let timed: Vec<_> = fns
        .iter()
        .map(|f| format!("{} {}/{} timed", f.name, f.timed_calls, f.calls))
        .collect();
    // Over the network a busy machine can make every call long enough to be timed: the run
    // says so (no call through `try_sampled_call`) and the parent runs it again.
    assert!(
        fns.iter().any(|f| f.timed_calls < f.calls) || network,
        "rank {rank}: every call was timed ({timed:?}): the fast path was not taken"
    );
    // Without handles call mode has nothing to read and counts like region mode (the
    // whole-call entry declines).
    let sampled: usize = r.columns.iter().map(|c| c.handles).sum();
    // Some take it unless every send was timed (over a network each may be long enough).
    assert!(
        whole.get() > 0 || sampled == 0 || fns[0].timed_calls == fns[0].calls,
        "rank {rank}: no send took try_sampled_call ({timed:?}, {sampled} handles)"
    );
    // Every other receive tries it: some take it unless every receive was timed.
    assert!(
        whole_recv.get() > 0 || sampled == 0 || fns[1].timed_calls == fns[1].calls,
        "rank {rank}: no receive took try_sampled_call ({timed:?}, {sampled} handles)"
    );
    let reread_note = r.notes.iter().find(|n| n.contains(REREAD_CHILD));
    if reread && cfg!(debug_assertions) && sampled > 0 {
        assert!(
            reread_note.is_some(),
            "rank {rank}: no sample read again ({REREAD_CHILD} set): {:?}",
            r.notes
        );
    }
    let delta = |n: &NodeReport, col: usize| match n.metrics[col] {
        Metric::Delta { sum } => sum,
        ref m => panic!("not a delta: {m:?}"),
    };
    let (mut compared, mut moved, mut unread, mut attempts, mut nic) = (0, 0, 0, None, None);
    let mut in_barrier = 0;
    let barrier = barriers.into_inner();
    for ((((index, name, _), b), a), bar) in handles.iter().zip(&before).zip(&after).zip(&barrier) {
        let (Some(b), Some(a), Some(bar)) = (b, a, bar) else {
            unread += 1;
            continue;
        };
        let Some(col) = r
            .columns
            .iter()
            // By index: MPICH lists some timers as counters too, under the same name.
            .position(|c| c.info.index == *index && c.handles > 0)
        else {
            continue;
        };
        let direct = (a - b) as f64;
        let parts = [delta(region, col), delta(fns[0], col), delta(fns[1], col)];
        assert_eq!(
            parts.iter().sum::<f64>(),
            direct,
            "rank {rank} {name}: region, MPI_Send and MPI_Recv hold {parts:?}, a separate \
             session read {direct} around the region"
        );
        assert_eq!(
            parts[0], *bar as f64,
            "rank {rank} {name}: the region holds {}, the barriers between its calls moved it by \
             {bar} (MPI_Send and MPI_Recv hold {}, {})",
            parts[0], parts[1], parts[2]
        );
        if *bar != 0 {
            in_barrier += 1;
        }
        compared += 1;
        if direct != 0.0 {
            moved += 1;
        }
        if name == "unexpected_recvq_match_attempts" {
            attempts = Some(parts);
        }
        if name == "nic_sent_bytes_count" {
            nic = Some(parts);
        }
    }
    println!(
        "rank {rank}: {} integer counters, {} with handles, {unread} unreadable, {compared} \
         compared, {moved} moved ({in_barrier} in the barriers), \
         unexpected_recvq_match_attempts {attempts:?}, nic_sent_bytes_count {nic:?} (region, \
         MPI_Send, MPI_Recv); {}; \
         {} sends and {} receives through try_sampled_call; {sampled} profiler handles",
        counters.len(),
        handles.len(),
        timed.join(", "),
        whole.get(),
        whole_recv.get()
    );
    // MPICH configured with pvars (mpich-ev) has the receive queue's counters.
    let mpich_pvars = mpit_safe::implementation().vendor == mpit_safe::Vendor::Mpich
        && mpit_test_support::mpi::material().pvars;
    if few_only && mpich_pvars {
        // Two probes of one case: sampled one by one (`flat_is_cheaper`).
        assert_eq!(
            sampled, 2,
            "rank {rank}: the filter kept {sampled} handles, not 2"
        );
    }
    if network && mpich_pvars {
        // Over the network module the 8-element NIC counters (a sample's several-element
        // probes) count the messages' bytes: the sends' inside MPI_Send.
        let [_, in_send, _] = nic.expect("MPICH with pvars: no nic_sent_bytes_count");
        assert!(
            in_send >= (PAIRS * 8) as f64,
            "rank {rank}: nic_sent_bytes_count moved {in_send} in MPI_Send ({NOLOCAL}=1), \
             fewer than the {PAIRS} 8-byte messages' payload"
        );
    }
    // Over the network module MPICH's receive-queue counters stayed at 0 (seen on mpich-ev;
    // the provider matching the messages itself is a guess): nothing to expect of them.
    if rank == 0 && mpich_pvars && !network {
        let [_, _, in_recv] =
            attempts.expect("MPICH with pvars: no unexpected_recvq_match_attempts");
        assert!(
            in_recv >= K as f64,
            "unexpected_recvq_match_attempts moved {in_recv} in MPI_Recv, fewer than the {K} \
             unexpected messages"
        );
    }
    world.barrier();
}

#[test]
fn call_mode_fast_path_conserves_counters() {
    if std::env::var_os(CHILD).is_some() {
        return child(false, false, false);
    }
    check_conservation(TEST, CHILD, &[]);
}

/// As [`call_mode_fast_path_conserves_counters`] with only the variables [`few`] keeps: the
/// sampling loop's other way through the one-element probes (one by one, a jump to each one's
/// case), which implementations with few variables take (Intel MPI's two).
#[test]
fn call_mode_few_probes_conserve_counters() {
    if std::env::var_os(FEW_CHILD).is_some() {
        return child(true, false, false);
    }
    check_conservation(FEW_TEST, FEW_CHILD, &[]);
}

/// As [`call_mode_fast_path_conserves_counters`] with every sample's one-element probes read
/// a second time one by one, each checked, and attributed from that read: the path a sample
/// takes when one of its reads fails (the reads of the installed MPIs do not; a debug build of
/// the engine takes it at every sample when [`REREAD_CHILD`] is set, as it is in the child).
#[test]
fn call_mode_rereads_conserve_counters() {
    if std::env::var_os(REREAD_CHILD).is_some() {
        return child(false, true, false);
    }
    check_conservation(REREAD_TEST, REREAD_CHILD, &[]);
}

/// As [`call_mode_fast_path_conserves_counters`] with the messages between the two ranks sent
/// through MPICH's network module ([`NOLOCAL`]; other implementations ignore the variable):
/// on mpich-ev the 8-element NIC byte counters move, so the probes of several elements, read
/// with the others and attributed later, must conserve too, and must show the sends' bytes
/// inside `MPI_Send`.
#[test]
fn call_mode_conserves_counters_over_the_network() {
    if std::env::var_os(NET_CHILD).is_some() {
        return child(false, false, true);
    }
    check_conservation(NET_TEST, NET_CHILD, &[(NOLOCAL, "1")]);
}

/// Runs `test`'s child on 2 ranks; each must report, and says if it had nothing to compare. A
/// run in which every call was timed (none went through `try_sampled_call`) while the
/// profiler held handles checked nothing of the fast path: run again, three times at most.
fn check_conservation(test: &str, child: &str, env: &[(&str, &str)]) {
    let mut runs = 0;
    let out = loop {
        let out = process::run_ranks_with(
            2,
            &[],
            env,
            &test_path(module_path!(), test),
            child,
            Duration::from_secs(120),
        );
        runs += 1;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let untaken = stdout.lines().any(|l| {
            l.contains(" 0 sends and 0 receives through") && !l.contains(" 0 profiler handles")
        });
        if !untaken || !out.status.success() {
            break out;
        }
        assert!(
            runs < 3,
            "{runs} runs, none through try_sampled_call on some rank (every call timed)"
        );
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the 2-rank run failed: {}",
        out.status
    );
    for rank in 0..2 {
        // The ranks' harness may print on the same line first.
        let tag = format!("rank {rank}: ");
        let line = stdout
            .lines()
            .find_map(|l| l.find(&tag).map(|at| &l[at..]))
            .unwrap_or_else(|| panic!("rank {rank} did not report"));
        if line.contains(" 0 compared") {
            eprintln!(
                "{} rank {rank}: no integer counter bound to no object could be allocated and \
                 read: conservation had nothing to check",
                mpit_safe::sys::IMPLEMENTATION
            );
        }
    }
}

use mpit_prof::Elements;
use mpit_safe::RawObject;
use mpit_test_support::mpi::comm_world;

const RAW_CHILD: &str = "MPIT_SAFE_PROFILE_RANKS_RAW_CHILD";
const RAW_TEST: &str = "raw_values_of_per_rank_elements_in_every_node";

/// A state, size or generic variable with an element per rank of `MPI_COMM_WORLD` (Open MPI's ob1
/// queue lengths, on 2 ranks) keeps its last value in every node sampled (Caliper's MPIT service,
/// "Querying and storing PVARs"), also when its elements' bytes did not change between two nodes:
/// the sampling loop compares a read's bytes with the read before and skips it only where the same
/// node holds that value already. Call mode, regions a, b, a with calls in each. Open MPI must have
/// the material; elsewhere the test says it had nothing to check.
#[test]
fn raw_values_of_per_rank_elements_in_every_node() {
    if std::env::var_os(RAW_CHILD).is_some() {
        let universe = mpi::initialize().expect("MPI_Init");
        let world = universe.world();
        let run = std::panic::catch_unwind(|| raw_values_per_rank(world.rank()));
        if run.is_err() {
            world.abort(3);
        }
        return;
    }
    let out = process::run_ranks(
        2,
        &[],
        &test_path(module_path!(), RAW_TEST),
        RAW_CHILD,
        Duration::from_secs(120),
    );
    assert!(
        out.status.success(),
        "the 2-rank run failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for rank in 0..2 {
        let tag = format!("rank {rank} checked ");
        let line = stdout
            .lines()
            .find_map(|l| l.find(&tag).map(|at| &l[at..]))
            .unwrap_or_else(|| panic!("rank {rank} did not report"));
        if line.contains("checked 0 ") {
            eprintln!(
                "{} rank {rank}: no state, size or generic variable of several elements: \
                 nothing to check",
                mpit_safe::sys::IMPLEMENTATION
            );
        }
    }
}

fn raw_values_per_rank(rank: i32) {
    let mpit = Mpit::init().unwrap();
    let session = mpit.session().unwrap();
    let config = Config {
        mode: Mode::Call,
        functions: vec!["MPI_Send"],
        root: "test".into(),
        ..Config::default()
    };
    let p = Profiler::new(&session, config).unwrap();
    // SAFETY: MPI_COMM_WORLD is live until MPI_Finalize, after this function.
    let obj = unsafe { RawObject::comm(comm_world()) };
    p.object_created(obj, "MPI_COMM_WORLD").unwrap();
    for region in ["a", "b", "a"] {
        let _r = p.region(region);
        // More than TIME_FIRST calls: the later ones take the fast path's sampling.
        for _ in 0..40 {
            let c = p.call_enter(0);
            p.call_exit(c);
        }
    }
    p.object_freed(obj);
    let r = p.finish().unwrap();
    let several = |i: usize| {
        r.elements
            .iter()
            .any(|e: &Elements| e.column == i && e.values.len() > 1)
    };
    let raw: Vec<usize> = (0..r.columns.len())
        .filter(|&i| r.columns[i].metric == DerivedMetric::Raw && several(i))
        .collect();
    if mpit_safe::implementation().vendor == mpit_safe::Vendor::OpenMpi {
        assert!(
            !raw.is_empty(),
            "Open MPI: no size-class variable with an element per rank of MPI_COMM_WORLD"
        );
    }
    for path in [
        &["test", "a"][..],
        &["test", "a", "MPI_Send"],
        &["test", "b"],
        &["test", "b", "MPI_Send"],
    ] {
        let (_, n) = node(&r, path);
        for &i in &raw {
            assert!(
                matches!(n.metrics[i], Metric::Raw { last: Some(_) }),
                "rank {rank} {path:?}, {}: {:?}",
                r.columns[i].info.name,
                n.metrics[i]
            );
        }
    }
    println!("rank {rank} checked {} variables", raw.len());
}
