//! Properties of the executable model of event delivery (MPI-4.1 §16.3.8.4–5) over random
//! operation sequences.

use mpit_core::CbSafety;
use mpit_core::event_model::{EventModel, Outcome};
use proptest::prelude::*;
use proptest::sample::select;

#[derive(Debug, Clone)]
enum Op {
    Alloc(usize),
    Register(usize, CbSafety, bool),
    Handler(usize, bool),
    Free(usize),
    Raise(usize, usize, CbSafety),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..2).prop_map(Op::Alloc),
        (0usize..4, select(CbSafety::ALL.to_vec()), any::<bool>())
            .prop_map(|(r, l, p)| Op::Register(r, l, p)),
        (0usize..4, any::<bool>()).prop_map(|(r, p)| Op::Handler(r, p)),
        (0usize..4).prop_map(Op::Free),
        (0usize..2, 0usize..3, select(CbSafety::ALL.to_vec()))
            .prop_map(|(e, s, c)| Op::Raise(e, s, c)),
    ]
}

proptest! {
    /// Every raise gives each live registration of the event type exactly one of: delivered
    /// (at a registered level sufficient for the context, the lowest such) or dropped; a drop
    /// report precedes a delivery and is for the raised source; totals balance: every drop
    /// recorded while a handler was set is reported or still pending.
    #[test]
    fn delivery_follows_the_selection_rule(ops in proptest::collection::vec(op(), 0..60)) {
        let mut m = EventModel::default();
        let mut regs = 0usize;
        let mut dropped_recorded = [0u64; 8];
        let mut reported = [0u64; 8];
        let mut handler = [false; 8];
        for op in ops {
            match op {
                Op::Alloc(e) if regs < 4 => { m.alloc(e, None); regs += 1; }
                Op::Alloc(_) => {}
                Op::Register(r, l, p) => { let _ = m.register(r, l, p); }
                Op::Handler(r, p) => {
                    if m.set_dropped_handler(r, p).is_ok() {
                        handler[r] = p;
                        // Setting a handler restarts counting.
                        dropped_recorded[r] = 0;
                        reported[r] = 0;
                    }
                }
                Op::Free(r) => { let _ = m.free(r); }
                Op::Raise(e, s, c) => {
                    let out = m.raise(e, s, c, None);
                    let mut last_report: Option<usize> = None;
                    for (i, o) in out.iter().enumerate() {
                        match *o {
                            Outcome::DroppedReport { registration, source, count } => {
                                prop_assert_eq!(source, s);
                                prop_assert!(count > 0);
                                reported[registration] += count;
                                last_report = Some(registration);
                                // Followed by the delivery to the same registration.
                                let next = out.get(i + 1).copied();
                                let delivered_here = matches!(next,
                                    Some(Outcome::Delivered { registration: r2, .. }) if r2 == registration);
                                prop_assert!(delivered_here);
                            }
                            Outcome::Delivered { registration, level } => {
                                prop_assert!(level.sufficient_for(c));
                                prop_assert_eq!(m.selected_level(registration, c), Some(level));
                                let _ = last_report.take();
                            }
                            Outcome::Dropped { registration } => {
                                prop_assert_eq!(m.selected_level(registration, c), None);
                                if handler[registration] { dropped_recorded[registration] += 1; }
                            }
                        }
                    }
                }
            }
        }
        for r in 0..regs {
            let pending: u64 = (0..3).map(|s| m.pending_drops(r, s)).sum();
            prop_assert_eq!(dropped_recorded[r], reported[r] + pending);
        }
    }

    /// A freed registration is never delivered to again and its free callback ran exactly once.
    #[test]
    fn freed_is_final(n in 0usize..20, ctx in select(CbSafety::ALL.to_vec())) {
        let mut m = EventModel::default();
        let r = m.alloc(0, None);
        m.register(r, CbSafety::AsyncSignalSafe, true).unwrap();
        m.free(r).unwrap();
        for _ in 0..n {
            prop_assert!(m.raise(0, 0, ctx, None).is_empty());
        }
        prop_assert!(m.free(r).is_err());
        prop_assert_eq!(m.free_callbacks(r), 1);
    }
}
