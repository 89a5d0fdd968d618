//! An executable model of performance experiment sessions (MPI-4.1 §16.3.7; MPI-3.0 draft
//! §1.2.7 "Performance Experiment Sessions" to "Performance Variable Access Functions"), the
//! oracle that property tests hold an implementation to.
//!
//! The rules it encodes, in the standard's words where it has them:
//! - a freed session or handle is set to the null handle and "calls to MPI_T can no longer be
//!   made within the context of the freed session"; freeing a session "also frees all handles
//!   that have been allocated within" it (`MPI_T_ERR_INVALID_SESSION`,
//!   `MPI_T_ERR_INVALID_HANDLE`);
//! - continuous variables "cannot be stopped or paused by the user": start and stop fail with
//!   `MPI_T_ERR_PVAR_NO_STARTSTOP`; all others "are in a stopped state after their handle has
//!   been allocated, i.e., their values are not updated";
//! - read-only variables cannot be written or reset (`MPI_T_ERR_PVAR_NO_WRITE`); `readreset`
//!   of a variable that is not atomic fails with `MPI_T_ERR_PVAR_NO_ATOMIC`;
//! - with `MPI_T_PVAR_ALL_HANDLES`, start/stop ignore continuous variables and reset ignores
//!   read-only ones, so they succeed;
//! - counters, aggregates and timers start at 0 (after allocation and reset) and never
//!   decrease until the next reset; high watermarks never decrease and low watermarks never
//!   increase while the handle lives; a stopped variable does not change.
//!
//! ```
//! use mpit_core::PvarClass;
//! use mpit_core::ErrorClass;
//! use mpit_core::pvar_model::{Op, PvarModel, VarTraits};
//!
//! let counter = VarTraits { class: PvarClass::Counter, readonly: false, continuous: false, atomic: true };
//! let mut m = PvarModel::new(vec![counter]);
//! m.apply(&Op::CreateSession, Ok(()), None).unwrap();
//! m.apply(&Op::Alloc { session: 0, var: 0 }, Ok(()), None).unwrap();
//! // A stopped counter reads its starting value, 0.
//! assert!(m.apply(&Op::Read(0), Ok(()), Some(3.0)).is_err());
//! m.apply(&Op::Read(0), Ok(()), Some(0.0)).unwrap();
//! m.apply(&Op::FreeSession(0), Ok(()), None).unwrap();
//! // Its handle went with the session.
//! assert!(m.apply(&Op::Read(0), Ok(()), Some(0.0)).is_err());
//! m.apply(&Op::Read(0), Err(ErrorClass::InvalidSession), None).unwrap();
//! ```

use crate::error::ErrorClass;
use crate::pvar::{Monotonicity, PvarClass, StartingValue};

/// The attributes of a performance variable that decide what operations on it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarTraits {
    /// Its class.
    pub class: PvarClass,
    /// Whether it can be written or reset.
    pub readonly: bool,
    /// Whether it runs from allocation on and cannot be started or stopped.
    pub continuous: bool,
    /// Whether it can be read and reset atomically (`MPI_T_pvar_readreset`).
    pub atomic: bool,
}

/// A session's identity in the model: the order of creation.
pub type SessionId = usize;
/// A handle's identity in the model: the order of allocation.
pub type HandleId = usize;

/// One call of the session API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `MPI_T_pvar_session_create`.
    CreateSession,
    /// `MPI_T_pvar_session_free`.
    FreeSession(SessionId),
    /// `MPI_T_pvar_handle_alloc` for variable `var` (an index into the model's variables).
    Alloc {
        /// The session.
        session: SessionId,
        /// The variable.
        var: usize,
    },
    /// `MPI_T_pvar_handle_free`.
    Free(HandleId),
    /// `MPI_T_pvar_start`.
    Start(HandleId),
    /// `MPI_T_pvar_stop`.
    Stop(HandleId),
    /// `MPI_T_pvar_reset`.
    Reset(HandleId),
    /// `MPI_T_pvar_read`.
    Read(HandleId),
    /// `MPI_T_pvar_write` (of the value last read, or the starting value).
    Write(HandleId),
    /// `MPI_T_pvar_readreset`.
    ReadReset(HandleId),
    /// `MPI_T_pvar_read` of a live handle passed with another (live) session.
    ReadInOtherSession(HandleId, SessionId),
    /// `MPI_T_pvar_start` with `MPI_T_PVAR_ALL_HANDLES`.
    StartAll(SessionId),
    /// `MPI_T_pvar_stop` with `MPI_T_PVAR_ALL_HANDLES`.
    StopAll(SessionId),
    /// `MPI_T_pvar_reset` with `MPI_T_PVAR_ALL_HANDLES`.
    ResetAll(SessionId),
}

/// Where the implementation departed from the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Violation {
    /// The call should have succeeded.
    ShouldSucceed {
        /// What it returned.
        got: ErrorClass,
    },
    /// The call should have failed with one of `expected`.
    ShouldFail {
        /// The error classes the standard allows here.
        expected: &'static [ErrorClass],
        /// What it returned (`None`: success).
        got: Option<ErrorClass>,
    },
    /// A value read breaks the class's rules.
    Value {
        /// The value read.
        got: f64,
        /// The rule, in words.
        rule: &'static str,
    },
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Violation::ShouldSucceed { got } => {
                write!(f, "expected success, got {}", got.c_name())
            }
            Violation::ShouldFail { expected, got } => {
                let names: Vec<&str> = expected.iter().map(|c| c.c_name()).collect();
                match got {
                    Some(g) => write!(f, "expected one of {}, got {}", names.join("|"), g.c_name()),
                    None => write!(f, "expected one of {}, got MPI_SUCCESS", names.join("|")),
                }
            }
            Violation::Value { got, rule } => write!(f, "read {got}: {rule}"),
        }
    }
}

#[derive(Debug, Clone)]
struct Handle {
    session: SessionId,
    var: VarTraits,
    live: bool,
    running: bool,
    /// The bound the next read must respect (monotone classes): the last value observed or
    /// the starting value.
    bound: Option<f64>,
    /// The exact value the next read must give (a stopped variable whose value is known).
    pinned: Option<f64>,
}

/// The model: variables, sessions and handles.
#[derive(Debug, Clone, Default)]
pub struct PvarModel {
    vars: Vec<VarTraits>,
    sessions: Vec<bool>,
    handles: Vec<Handle>,
}

const NO_STARTSTOP: &[ErrorClass] = &[ErrorClass::PvarNoStartStop];
const NO_WRITE: &[ErrorClass] = &[ErrorClass::PvarNoWrite];
const NO_WRITE_OR_ATOMIC: &[ErrorClass] = &[ErrorClass::PvarNoWrite, ErrorClass::PvarNoAtomic];
const NO_ATOMIC: &[ErrorClass] = &[ErrorClass::PvarNoAtomic];
const BAD_HANDLE: &[ErrorClass] = &[ErrorClass::InvalidHandle];
const BAD_SESSION: &[ErrorClass] = &[ErrorClass::InvalidSession];
const BAD_EITHER: &[ErrorClass] = &[ErrorClass::InvalidSession, ErrorClass::InvalidHandle];

/// What the standard allows a call to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Success.
    Ok,
    /// Success, or one of these (resource limits the standard allows anywhere).
    OkOr(&'static [ErrorClass]),
    /// One of these error classes.
    Fail(&'static [ErrorClass]),
}

impl PvarModel {
    /// A model over `vars` with no sessions.
    pub fn new(vars: Vec<VarTraits>) -> PvarModel {
        PvarModel {
            vars,
            ..PvarModel::default()
        }
    }

    /// The variables the model knows.
    pub fn vars(&self) -> &[VarTraits] {
        &self.vars
    }

    /// Whether session `s` exists and has not been freed.
    pub fn session_live(&self, s: SessionId) -> bool {
        self.sessions.get(s).copied().unwrap_or(false)
    }

    /// Whether handle `h` exists, has not been freed, and neither has its session.
    pub fn handle_live(&self, h: HandleId) -> bool {
        self.handles.get(h).is_some_and(|x| x.live)
    }

    /// The session handle `h` was allocated in.
    pub fn session_of(&self, h: HandleId) -> Option<SessionId> {
        self.handles.get(h).map(|x| x.session)
    }

    /// The variable of handle `h`.
    pub fn var_of(&self, h: HandleId) -> Option<VarTraits> {
        self.handles.get(h).map(|x| x.var)
    }

    /// How many sessions and handles were ever created.
    pub fn sizes(&self) -> (usize, usize) {
        (self.sessions.len(), self.handles.len())
    }

    /// What the standard allows `op` to return in the current state.
    pub fn expect(&self, op: &Op) -> Expect {
        let handle_op = |h: HandleId, f: &dyn Fn(&Handle) -> Expect| match self.handles.get(h) {
            Some(x) if x.live => f(x),
            Some(x) if !self.session_live(x.session) => Expect::Fail(BAD_EITHER),
            _ => Expect::Fail(BAD_HANDLE),
        };
        match *op {
            Op::CreateSession => Expect::OkOr(&[ErrorClass::OutOfSessions, ErrorClass::Memory]),
            Op::FreeSession(s) | Op::StartAll(s) | Op::StopAll(s) | Op::ResetAll(s) => {
                if self.session_live(s) {
                    Expect::Ok
                } else {
                    Expect::Fail(BAD_SESSION)
                }
            }
            Op::Alloc { session, .. } => {
                if self.session_live(session) {
                    Expect::OkOr(&[ErrorClass::OutOfHandles, ErrorClass::Memory])
                } else {
                    Expect::Fail(BAD_SESSION)
                }
            }
            Op::Free(h) | Op::Read(h) => handle_op(h, &|_| Expect::Ok),
            Op::Start(h) | Op::Stop(h) => handle_op(h, &|x| {
                if x.var.continuous {
                    Expect::Fail(NO_STARTSTOP)
                } else {
                    Expect::Ok
                }
            }),
            Op::Reset(h) | Op::Write(h) => handle_op(h, &|x| {
                if x.var.readonly {
                    Expect::Fail(NO_WRITE)
                } else {
                    Expect::Ok
                }
            }),
            Op::ReadReset(h) => handle_op(h, &|x| match (x.var.readonly, x.var.atomic) {
                (false, true) => Expect::Ok,
                (true, true) => Expect::Fail(NO_WRITE),
                (false, false) => Expect::Fail(NO_ATOMIC),
                (true, false) => Expect::Fail(NO_WRITE_OR_ATOMIC),
            }),
            Op::ReadInOtherSession(_, _) => Expect::Fail(BAD_EITHER),
        }
    }

    /// Checks what the implementation returned for `op` (and, for a successful read or
    /// readreset, the first element it read as `value`) against the model, then applies the
    /// effect of what happened. On a violation the state is left as it was.
    pub fn apply(
        &mut self,
        op: &Op,
        outcome: Result<(), ErrorClass>,
        value: Option<f64>,
    ) -> Result<(), Violation> {
        match (self.expect(op), outcome) {
            (Expect::Ok, Err(got)) => return Err(Violation::ShouldSucceed { got }),
            (Expect::OkOr(allowed), Err(got)) if !allowed.contains(&got) => {
                return Err(Violation::ShouldFail {
                    expected: allowed,
                    got: Some(got),
                });
            }
            (Expect::Fail(expected), Ok(())) => {
                return Err(Violation::ShouldFail {
                    expected,
                    got: None,
                });
            }
            (Expect::Fail(expected), Err(got)) if !expected.contains(&got) => {
                return Err(Violation::ShouldFail {
                    expected,
                    got: Some(got),
                });
            }
            (_, Err(_)) => return Ok(()),
            (_, Ok(())) => {}
        }
        match *op {
            Op::CreateSession => self.sessions.push(true),
            Op::FreeSession(s) => {
                self.sessions[s] = false;
                for h in self.handles.iter_mut().filter(|h| h.session == s) {
                    h.live = false;
                }
            }
            Op::Alloc { session, var } => {
                let traits = self.vars[var];
                let mut h = Handle {
                    session,
                    var: traits,
                    live: true,
                    running: traits.continuous,
                    bound: None,
                    pinned: None,
                };
                reset(&mut h);
                self.handles.push(h);
            }
            Op::Free(h) => self.handles[h].live = false,
            Op::Start(h) => {
                let x = &mut self.handles[h];
                x.running = true;
                x.pinned = None;
            }
            Op::Stop(h) => {
                let x = &mut self.handles[h];
                x.running = false;
                x.pinned = None;
            }
            Op::Reset(h) => reset(&mut self.handles[h]),
            Op::Write(h) => {
                let x = &mut self.handles[h];
                x.bound = None;
                x.pinned = None;
            }
            Op::Read(h) => {
                if let Some(v) = value {
                    observe(&mut self.handles[h], v)?;
                }
            }
            Op::ReadReset(h) => {
                if let Some(v) = value {
                    observe(&mut self.handles[h], v)?;
                }
                reset(&mut self.handles[h]);
            }
            Op::ReadInOtherSession(_, _) => {}
            Op::StartAll(s) | Op::StopAll(s) | Op::ResetAll(s) => {
                for x in self.handles.iter_mut().filter(|x| x.live && x.session == s) {
                    match *op {
                        Op::StartAll(_) if !x.var.continuous => {
                            x.running = true;
                            x.pinned = None;
                        }
                        Op::StopAll(_) if !x.var.continuous => {
                            x.running = false;
                            x.pinned = None;
                        }
                        Op::ResetAll(_) if !x.var.readonly => reset(x),
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }
}

/// The value after allocation or reset: the starting value where the class fixes it.
fn reset(x: &mut Handle) {
    let zero = x.var.class.starting_value() == StartingValue::Zero;
    x.bound = zero.then_some(0.0);
    x.pinned = (zero && !x.running).then_some(0.0);
}

/// Checks one value read against the handle's state and records it.
fn observe(x: &mut Handle, v: f64) -> Result<(), Violation> {
    if let Some(p) = x.pinned
        && v != p
    {
        return Err(Violation::Value {
            got: v,
            rule: "a stopped variable does not change (and starts at its starting value)",
        });
    }
    match (x.var.class.monotonicity(), x.bound) {
        (Monotonicity::NonDecreasing, Some(b)) if v < b => {
            return Err(Violation::Value {
                got: v,
                rule: "decreased without a reset (class is non-decreasing)",
            });
        }
        (Monotonicity::NonIncreasing, Some(b)) if v > b => {
            return Err(Violation::Value {
                got: v,
                rule: "increased without a reset (low watermark)",
            });
        }
        _ => {}
    }
    if x.var.class.starting_value() == StartingValue::Zero && v < 0.0 {
        return Err(Violation::Value {
            got: v,
            rule: "negative value of a class that starts at 0 and never decreases",
        });
    }
    x.bound = Some(v);
    if !x.running {
        x.pinned = Some(v);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traits(class: PvarClass, readonly: bool, continuous: bool) -> VarTraits {
        VarTraits {
            class,
            readonly,
            continuous,
            atomic: true,
        }
    }

    fn ok(m: &mut PvarModel, op: Op) {
        m.apply(&op, Ok(()), None).unwrap();
    }

    #[test]
    fn continuous_refuses_start_and_stop() {
        let mut m = PvarModel::new(vec![traits(PvarClass::Counter, false, true)]);
        ok(&mut m, Op::CreateSession);
        ok(&mut m, Op::Alloc { session: 0, var: 0 });
        assert_eq!(m.expect(&Op::Start(0)), Expect::Fail(NO_STARTSTOP));
        assert!(m.apply(&Op::Stop(0), Ok(()), None).is_err());
        // ALL_HANDLES ignores it.
        ok(&mut m, Op::StartAll(0));
        ok(&mut m, Op::StopAll(0));
    }

    #[test]
    fn readonly_refuses_write_and_reset() {
        let mut m = PvarModel::new(vec![traits(PvarClass::Level, true, false)]);
        ok(&mut m, Op::CreateSession);
        ok(&mut m, Op::Alloc { session: 0, var: 0 });
        for op in [Op::Write(0), Op::Reset(0), Op::ReadReset(0)] {
            assert_eq!(m.expect(&op), Expect::Fail(NO_WRITE), "{op:?}");
        }
        ok(&mut m, Op::ResetAll(0));
    }

    #[test]
    fn counters_are_monotone_and_stopped_ones_frozen() {
        let mut m = PvarModel::new(vec![traits(PvarClass::Counter, false, false)]);
        ok(&mut m, Op::CreateSession);
        ok(&mut m, Op::Alloc { session: 0, var: 0 });
        ok(&mut m, Op::Start(0));
        m.apply(&Op::Read(0), Ok(()), Some(5.0)).unwrap();
        assert!(m.apply(&Op::Read(0), Ok(()), Some(4.0)).is_err());
        ok(&mut m, Op::Stop(0));
        m.apply(&Op::Read(0), Ok(()), Some(9.0)).unwrap();
        assert!(m.apply(&Op::Read(0), Ok(()), Some(10.0)).is_err());
        m.apply(&Op::ReadReset(0), Ok(()), Some(9.0)).unwrap();
        assert!(m.apply(&Op::Read(0), Ok(()), Some(1.0)).is_err());
        m.apply(&Op::Read(0), Ok(()), Some(0.0)).unwrap();
    }

    #[test]
    fn freed_handles_and_sessions_are_invalid() {
        let mut m = PvarModel::new(vec![traits(PvarClass::Timer, false, false)]);
        ok(&mut m, Op::CreateSession);
        ok(&mut m, Op::CreateSession);
        ok(&mut m, Op::Alloc { session: 0, var: 0 });
        ok(&mut m, Op::Alloc { session: 1, var: 0 });
        ok(&mut m, Op::Free(0));
        assert_eq!(m.expect(&Op::Read(0)), Expect::Fail(BAD_HANDLE));
        ok(&mut m, Op::FreeSession(1));
        assert_eq!(m.expect(&Op::Read(1)), Expect::Fail(BAD_EITHER));
        assert_eq!(m.expect(&Op::StartAll(1)), Expect::Fail(BAD_SESSION));
        assert_eq!(
            m.expect(&Op::Alloc { session: 1, var: 0 }),
            Expect::Fail(BAD_SESSION)
        );
        // A refusal the model allows leaves the state unchanged.
        m.apply(&Op::Read(1), Err(ErrorClass::InvalidHandle), None)
            .unwrap();
        assert!(!m.handle_live(1));
    }
}
