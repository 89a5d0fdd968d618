//! The pvar session model against a small simulated implementation that follows the standard
//! (MPI-4.1 §16.3.7): random operation sequences never violate the model; the same simulation
//! with one rule broken (a stopped counter keeps counting, start of a continuous variable
//! accepted, freed handles accepted) is caught on some sequence.

use mpit_core::pvar_model::{Expect, Op, PvarModel, VarTraits};
use mpit_core::{ErrorClass, PvarClass};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Bug {
    None,
    CountsWhenStopped,
    StartsContinuous,
    AcceptsFreedHandle,
}

/// A conforming (unless `bug`) implementation: counters tick by one per operation while running.
struct Sim {
    bug: Bug,
    sessions: Vec<bool>,
    handles: Vec<(usize, VarTraits, bool, bool, f64)>, // session, traits, live, running, value
}

impl Sim {
    fn tick(&mut self) {
        let bug = self.bug;
        for h in self.handles.iter_mut() {
            if h.2 && (h.3 || bug == Bug::CountsWhenStopped) {
                h.4 += 1.0;
            }
        }
    }

    fn call(&mut self, vars: &[VarTraits], op: &Op) -> (Result<(), ErrorClass>, Option<f64>) {
        use ErrorClass as E;
        self.tick();
        let live_s = |s: &Sim, i: usize| s.sessions.get(i).copied().unwrap_or(false);
        let handle = |s: &Sim, h: usize| -> Result<(), ErrorClass> {
            match s.handles.get(h) {
                Some(x) if x.2 || s.bug == Bug::AcceptsFreedHandle => Ok(()),
                Some(x) if !live_s(s, x.0) => Err(E::InvalidSession),
                _ => Err(E::InvalidHandle),
            }
        };
        match *op {
            Op::CreateSession => {
                self.sessions.push(true);
                (Ok(()), None)
            }
            Op::FreeSession(s) | Op::StartAll(s) | Op::StopAll(s) | Op::ResetAll(s) => {
                if !live_s(self, s) {
                    return (Err(E::InvalidSession), None);
                }
                for h in self.handles.iter_mut().filter(|h| h.0 == s && h.2) {
                    match op {
                        Op::FreeSession(_) => h.2 = false,
                        Op::StartAll(_) if !h.1.continuous => h.3 = true,
                        Op::StopAll(_) if !h.1.continuous => h.3 = false,
                        Op::ResetAll(_) if !h.1.readonly => h.4 = 0.0,
                        _ => {}
                    }
                }
                if let Op::FreeSession(_) = op {
                    self.sessions[s] = false;
                }
                (Ok(()), None)
            }
            Op::Alloc { session, var } => {
                if !live_s(self, session) {
                    return (Err(E::InvalidSession), None);
                }
                let t = vars[var];
                self.handles.push((session, t, true, t.continuous, 0.0));
                (Ok(()), None)
            }
            Op::ReadInOtherSession(..) => (Err(E::InvalidHandle), None),
            _ => {
                let h = match op {
                    Op::Free(h)
                    | Op::Start(h)
                    | Op::Stop(h)
                    | Op::Reset(h)
                    | Op::Read(h)
                    | Op::Write(h)
                    | Op::ReadReset(h) => *h,
                    _ => unreachable!(),
                };
                if let Err(e) = handle(self, h) {
                    return (Err(e), None);
                }
                let x = &mut self.handles[h];
                let t = x.1;
                match op {
                    Op::Free(_) => x.2 = false,
                    Op::Start(_) | Op::Stop(_)
                        if t.continuous && self.bug != Bug::StartsContinuous =>
                    {
                        return (Err(E::PvarNoStartStop), None);
                    }
                    Op::Start(_) => x.3 = true,
                    Op::Stop(_) => x.3 = false,
                    Op::Reset(_) | Op::Write(_) if t.readonly => {
                        return (Err(E::PvarNoWrite), None);
                    }
                    Op::Reset(_) => x.4 = 0.0,
                    Op::Write(_) => {}
                    Op::Read(_) => return (Ok(()), Some(x.4)),
                    Op::ReadReset(_) if t.readonly => return (Err(E::PvarNoWrite), None),
                    Op::ReadReset(_) if !t.atomic => return (Err(E::PvarNoAtomic), None),
                    Op::ReadReset(_) => {
                        let v = x.4;
                        x.4 = 0.0;
                        return (Ok(()), Some(v));
                    }
                    _ => unreachable!(),
                }
                (Ok(()), None)
            }
        }
    }
}

fn traits() -> impl Strategy<Value = VarTraits> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(readonly, continuous, atomic)| {
        VarTraits {
            class: PvarClass::Counter,
            readonly,
            continuous,
            atomic,
        }
    })
}

fn op() -> impl Strategy<Value = Op> {
    let h = 0usize..6;
    let s = 0usize..3;
    prop_oneof![
        1 => Just(Op::CreateSession),
        1 => s.clone().prop_map(Op::FreeSession),
        2 => (s.clone(), 0usize..3).prop_map(|(session, var)| Op::Alloc { session, var }),
        1 => h.clone().prop_map(Op::Free),
        2 => h.clone().prop_map(Op::Start),
        2 => h.clone().prop_map(Op::Stop),
        1 => h.clone().prop_map(Op::Reset),
        3 => h.clone().prop_map(Op::Read),
        1 => h.clone().prop_map(Op::Write),
        1 => h.clone().prop_map(Op::ReadReset),
        1 => s.clone().prop_map(Op::StartAll),
        1 => s.clone().prop_map(Op::StopAll),
        1 => s.prop_map(Op::ResetAll),
    ]
}

/// Runs `ops` on the simulation and the model; the index of the first violation.
fn run(bug: Bug, vars: &[VarTraits], ops: &[Op]) -> Option<usize> {
    let mut sim = Sim {
        bug,
        sessions: Vec::new(),
        handles: Vec::new(),
    };
    let mut model = PvarModel::new(vars.to_vec());
    for (i, op) in ops.iter().enumerate() {
        let (outcome, value) = sim.call(vars, op);
        if model.apply(op, outcome, value).is_err() {
            return Some(i);
        }
    }
    None
}

proptest! {
    #[test]
    fn conforming_simulation_never_violates(
        vars in proptest::collection::vec(traits(), 3),
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        prop_assert_eq!(run(Bug::None, &vars, &ops), None);
    }

    #[test]
    fn expect_agrees_with_apply(
        vars in proptest::collection::vec(traits(), 3),
        ops in proptest::collection::vec(op(), 0..40),
    ) {
        let mut model = PvarModel::new(vars);
        for op in &ops {
            match model.expect(op) {
                Expect::Ok | Expect::OkOr(_) => {
                    let before = model.sizes();
                    prop_assert!(model.apply(op, Ok(()), Some(0.0)).is_ok() || matches!(op, Op::Read(_) | Op::ReadReset(_)));
                    prop_assert!(model.sizes().0 >= before.0);
                }
                Expect::Fail(classes) => {
                    prop_assert!(model.apply(op, Ok(()), None).is_err());
                    let before = model.sizes();
                    prop_assert!(model.apply(op, Err(classes[0]), None).is_ok());
                    prop_assert_eq!(model.sizes(), before);
                }
            }
        }
    }
}

/// Each broken rule is caught by some sequence of a fixed set (not by luck of the seed).
#[test]
fn broken_simulations_are_caught() {
    let counter = VarTraits {
        class: PvarClass::Counter,
        readonly: false,
        continuous: false,
        atomic: true,
    };
    let continuous = VarTraits {
        continuous: true,
        ..counter
    };
    let alloc = Op::Alloc { session: 0, var: 0 };
    let cases = [
        (
            Bug::CountsWhenStopped,
            vec![counter],
            vec![Op::CreateSession, alloc, Op::Read(0)],
        ),
        (
            Bug::StartsContinuous,
            vec![continuous],
            vec![Op::CreateSession, alloc, Op::Start(0)],
        ),
        (
            Bug::AcceptsFreedHandle,
            vec![counter],
            vec![Op::CreateSession, alloc, Op::Free(0), Op::Read(0)],
        ),
    ];
    for (bug, vars, ops) in cases {
        assert_eq!(run(bug, &vars, &ops), Some(ops.len() - 1), "{bug:?}");
        assert_eq!(run(Bug::None, &vars, &ops), None, "{bug:?}");
    }
}
