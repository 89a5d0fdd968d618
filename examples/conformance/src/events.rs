//! Event delivery (MPI-4.1 §16.3.8) against `mpit_core::event_model`: callback selection by
//! safety level, dropped-event reports before the next delivery, the free callback.
//!
//! Checking delivery needs events raised at a chosen safety level on demand, which no MPI
//! offers through the standard API; the project's test provider (`examples/event-provider/`,
//! preloaded) does, through its control function `mpit_provider_raise_at`, found here with
//! `dlsym`. Without it the property is skipped and says so.

use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use proptest::sample::select;

use mpit_core::CbSafety;
use mpit_core::event_model::{EventModel, Outcome};

use super::rules;
use super::{Ctx, Verdict, check_prop};
use mpit_safe::level::Level;
use mpit_safe::{Mpit, NoObject, RawConstant, Registration};

unsafe extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// The test provider's `mpit_provider_raise_at(event, source, context, data)`.
pub type RaiseAt = unsafe extern "C" fn(c_int, c_int, u32, *const c_void) -> c_int;
type SetScope = unsafe extern "C" fn(c_int) -> c_int;

/// `struct mpit_provider_test` of the provider's header.
#[repr(C)]
struct TestEvent {
    seq: u64,
    value: f64,
    id: i32,
    flag: i8,
}

fn symbol(name: &[u8]) -> *mut c_void {
    // SAFETY: RTLD_DEFAULT (null) searches the global scope; `name` is NUL-terminated.
    unsafe { dlsym(std::ptr::null_mut(), name.as_ptr().cast()) }
}

/// One step of a random sequence against the event model: allocate a registration (at most
/// three), register or remove a closure at a level, set the dropped handler, free, or raise
/// the test event from a source in a context of a level.
#[derive(Debug, Clone)]
pub enum EventOp {
    /// `MPI_T_event_handle_alloc`.
    Alloc,
    /// `MPI_T_event_register_callback` on registration `.0` at level `.1`.
    Register(usize, CbSafety),
    /// `MPI_T_event_register_callback` with a NULL function.
    Remove(usize, CbSafety),
    /// `MPI_T_event_set_dropped_handler`.
    Handler(usize),
    /// `MPI_T_event_handle_free`, waiting for the free callback.
    Free(usize),
    /// The provider raises the event from source `.0` in a context of level `.1`.
    Raise(usize, CbSafety),
}

/// The strategy of one [`EventOp`], raising from sources `0..sources`.
pub fn event_op(sources: usize) -> impl Strategy<Value = EventOp> {
    let level = || select(CbSafety::ALL.to_vec());
    prop_oneof![
        1 => Just(EventOp::Alloc),
        3 => (0usize..3, level()).prop_map(|(r, l)| EventOp::Register(r, l)),
        1 => (0usize..3, level()).prop_map(|(r, l)| EventOp::Remove(r, l)),
        1 => (0usize..3).prop_map(EventOp::Handler),
        1 => (0usize..3).prop_map(EventOp::Free),
        5 => (0..sources.max(1), level()).prop_map(|(s, c)| EventOp::Raise(s, c)),
    ]
}

fn registration_of(o: &Outcome) -> usize {
    match *o {
        Outcome::DroppedReport { registration, .. }
        | Outcome::Delivered { registration, .. }
        | Outcome::Dropped { registration } => registration,
    }
}

/// Runs `ops` on event type `ev` (the test provider's `provider_test` layout) through the safe
/// API and on `mpit_core::event_model`, raising with `raise`; returns the first step where the
/// observable outcomes (which closure runs, at which level, which dropped reports precede it)
/// differ. The provider must count drops per registration, as the model does.
pub fn check_event_sequence<L: Level>(
    mpit: &Mpit<L>,
    raise: RaiseAt,
    ev: usize,
    ops: &[EventOp],
) -> Result<(), String> {
    let log: Arc<Mutex<Vec<Outcome>>> = Arc::new(Mutex::new(Vec::new()));
    let mut model = EventModel::default();
    let mut regs: Vec<Option<Registration<'_, L>>> = Vec::new();
    let data = TestEvent {
        seq: 0,
        value: 0.0,
        id: 7,
        flag: 1,
    };
    let e = |step: usize, what: &str, err: mpit_safe::Error| format!("step {step}: {what}: {err}");
    for (step, op) in ops.iter().enumerate() {
        match *op {
            EventOp::Alloc if regs.len() < 3 => {
                let reg = mpit
                    .register_event(ev, &NoObject)
                    .map_err(|x| e(step, "MPI_T_event_handle_alloc", x))?;
                regs.push(Some(reg));
                model.alloc(ev, None);
            }
            EventOp::Register(r, l) => {
                if let Some(Some(reg)) = regs.get(r) {
                    let log = log.clone();
                    reg.on_event(l, move |_| {
                        if let Ok(mut g) = log.lock() {
                            g.push(Outcome::Delivered {
                                registration: r,
                                level: l,
                            });
                        }
                    })
                    .map_err(|x| e(step, "MPI_T_event_register_callback", x))?;
                    let _ = model.register(r, l, true);
                }
            }
            EventOp::Remove(r, l) => {
                if let Some(Some(reg)) = regs.get(r) {
                    reg.remove_callback(l)
                        .map_err(|x| e(step, "MPI_T_event_register_callback(NULL)", x))?;
                    let _ = model.register(r, l, false);
                }
            }
            EventOp::Handler(r) => {
                if let Some(Some(reg)) = regs.get(r) {
                    let log = log.clone();
                    reg.on_dropped(move |d| {
                        if let Ok(mut g) = log.lock() {
                            g.push(Outcome::DroppedReport {
                                registration: r,
                                source: d.source,
                                count: d.count,
                            });
                        }
                    })
                    .map_err(|x| e(step, "MPI_T_event_set_dropped_handler", x))?;
                    let _ = model.set_dropped_handler(r, true);
                }
            }
            EventOp::Free(r) => {
                if let Some(reg) = regs.get_mut(r).and_then(Option::take) {
                    let f = reg
                        .free()
                        .map_err(|x| e(step, "MPI_T_event_handle_free", x))?;
                    if !f.wait(std::time::Duration::from_secs(5)) {
                        return Err(format!("step {step}: the free callback did not run"));
                    }
                    let _ = model.free(r);
                }
            }
            EventOp::Raise(source, context) => {
                if let Ok(mut g) = log.lock() {
                    g.clear();
                }
                // SAFETY: `data` has the layout of the provider's event type and lives for
                // the call; indices are the provider's.
                let rc = unsafe {
                    raise(
                        ev as c_int,
                        source as c_int,
                        // The header's constant (MPI_T_cb_safety), which the provider takes.
                        context.to_raw().unwrap_or(0) as u32,
                        (&data as *const TestEvent).cast(),
                    )
                };
                if rc != 0 {
                    return Err(format!("step {step}: raise returned {rc}"));
                }
                let mut expected: Vec<Outcome> = model
                    .raise(ev, source, context, None)
                    .into_iter()
                    .filter(|o| !matches!(o, Outcome::Dropped { .. }))
                    .collect();
                let mut got = log.lock().map(|g| g.clone()).unwrap_or_default();
                // Registrations may be visited in any order; within one, order matters.
                expected.sort_by_key(registration_of);
                got.sort_by_key(registration_of);
                if got != expected {
                    return Err(format!(
                        "step {step} ({op:?}): implementation {got:?}, model {expected:?}"
                    ));
                }
            }
            EventOp::Alloc => {}
        }
    }
    Ok(())
}

/// The property `events.model`.
pub(super) fn model(ctx: &Ctx) -> Verdict {
    let raise = symbol(b"mpit_provider_raise_at\0");
    let scope = symbol(b"mpit_provider_set_drop_scope\0");
    if raise.is_null() || scope.is_null() {
        return Verdict::Skip(
            "raising events at a chosen safety level needs the test provider's control API \
             (not preloaded): the MPI's own events cannot be triggered on demand"
                .into(),
        );
    }
    // SAFETY: the provider's functions have these signatures (mpit_provider.h).
    let (raise, scope) = unsafe {
        (
            std::mem::transmute::<*mut c_void, RaiseAt>(raise),
            std::mem::transmute::<*mut c_void, SetScope>(scope),
        )
    };
    let mpit = match Mpit::init() {
        Ok(m) => m,
        Err(e) => return Verdict::Skip(format!("MPI_T_init_thread failed: {e}")),
    };
    // SAFETY: plain C call: dropped events counted per registration, as the model does.
    unsafe { scope(1) };
    let ev = match mpit.event_index("provider_test") {
        Ok(Some(ev)) => ev,
        other => return Verdict::Skip(format!("no event type provider_test: {other:?}")),
    };
    let sources = mpit.source_count().unwrap_or(0);
    check_prop(
        ctx.cases,
        &rules::CALLBACKS,
        proptest::collection::vec(event_op(sources), 0..40),
        |ops| check_event_sequence(&mpit, raise, ev, &ops).map_err(TestCaseError::fail),
    )
}
