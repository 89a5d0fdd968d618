//! The properties that allocate handles: sweeps, misuse of handles, the session model, control
//! variable writes, and the cross-process comparison.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};

use mpi::collective::CommunicatorCollectives;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;
use proptest::prelude::*;

use mpit_core::pvar_model::{Op, PvarModel, VarTraits};
use mpit_core::{Datatype, ErrorClass, Value};
use mpit_sys as sys;

use super::props::SILENT;
use super::raw::{self, Kind, StrArg};
use super::{Ctx, Verdict, announce, check_prop, from_problems};

/// One variable as the raw query describes it.
struct Var {
    index: c_int,
    name: String,
    ints: [c_int; 6],
    datatype: Option<Datatype>,
    enumtype: Option<sys::MPI_T_enum>,
}

fn vars(kind: Kind) -> Vec<Var> {
    (0..kind.count().max(0))
        .filter_map(|i| {
            let (f, ..) = raw::info(kind, i, StrArg::NONE, StrArg::NONE);
            if f.rc != sys::MPI_SUCCESS {
                return None;
            }
            let name = raw::full_string(kind, i, 0)?;
            Some(Var {
                index: i,
                name: String::from_utf8_lossy(&name).into_owned(),
                ints: f.ints,
                datatype: f.datatype.parse().ok(),
                enumtype: f.enumtype,
            })
        })
        .collect()
}

fn key(kind: Kind, v: &Var) -> String {
    format!("{}:{}", kind.name(), v.name)
}

fn phase() -> &'static str {
    if raw::initialized() {
        "after MPI_Init"
    } else {
        "before MPI_Init"
    }
}

fn world() -> sys::MPI_Comm {
    mpi::topology::SimpleCommunicator::world().as_raw()
}

fn start() -> Result<Option<mpi::environment::Universe>, Verdict> {
    raw::init().map_err(|e| Verdict::Skip(format!("MPI_T_init_thread failed: {e}")))?;
    Ok(mpi::initialize())
}

/// A sweep: one pass before `MPI_Init` and one after it.
fn sweep(ctx: &Ctx, pass: fn(&Ctx, &mut Vec<String>) -> usize) -> Verdict {
    if let Err(e) = raw::init() {
        return Verdict::Skip(format!("MPI_T_init_thread failed: {e}"));
    }
    let mut problems = Vec::new();
    let before = pass(ctx, &mut problems);
    let universe = mpi::initialize();
    let after = pass(ctx, &mut problems);
    drop(universe);
    from_problems("violation", &problems)
        .noting(format!("{before} handles before MPI_Init, {after} after"))
}

pub(super) fn sweep_cvars(ctx: &Ctx) -> Verdict {
    sweep(ctx, sweep_cvars_now)
}

/// One pass of the cvar sweep (before or after `MPI_Init`).
fn sweep_cvars_now(ctx: &Ctx, problems: &mut Vec<String>) -> usize {
    let mut comm = raw::initialized().then(world);
    let mut handled = 0;
    for v in vars(Kind::Cvar) {
        let k = key(Kind::Cvar, &v);
        let Some(obj) = raw::object_for(v.ints[1], &mut comm) else {
            continue;
        };
        if ctx.avoids(&k) {
            continue;
        }
        announce(
            Some(&k),
            &format!(
                "MPI_T_cvar_handle_alloc/read/free of cvar {} {} {}",
                v.index,
                v.name,
                phase()
            ),
        );
        let (rc, mut h, count) = raw::cvar_alloc(v.index, obj);
        if rc != sys::MPI_SUCCESS {
            continue;
        }
        handled += 1;
        if count < 0 {
            problems.push(format!("cvar {} {}: count {count}", v.index, v.name));
        }
        let mut buf = raw::buffer(count);
        // SAFETY: a live handle; the buffer holds `count` elements of up to 8 bytes.
        unsafe { sys::MPI_T_cvar_read(h, buf.as_mut_ptr().cast()) };
        // SAFETY: a live handle, freed once.
        let rc = unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
        if rc == sys::MPI_SUCCESS && h != sys::MPI_T_CVAR_HANDLE_NULL {
            problems.push(format!(
                "cvar {} {}: freed handle not set to MPI_T_CVAR_HANDLE_NULL",
                v.index, v.name
            ));
        }
    }
    handled
}

pub(super) fn sweep_pvars(ctx: &Ctx) -> Verdict {
    sweep(ctx, sweep_pvars_now)
}

/// One pass of the pvar sweep (before or after `MPI_Init`).
fn sweep_pvars_now(ctx: &Ctx, problems: &mut Vec<String>) -> usize {
    let mut comm = raw::initialized().then(world);
    let mut handled = 0;
    let (rc, mut session) = raw::session_create();
    if rc != sys::MPI_SUCCESS {
        problems.push(format!("MPI_T_pvar_session_create: {}", raw::rc_name(rc)));
        return 0;
    }
    for v in vars(Kind::Pvar) {
        let k = key(Kind::Pvar, &v);
        let Some(obj) = raw::object_for(v.ints[2], &mut comm) else {
            continue;
        };
        if ctx.avoids(&k) {
            continue;
        }
        announce(
            Some(&k),
            &format!(
                "MPI_T_pvar_handle_alloc/read/start/stop/free of pvar {} {} {}",
                v.index,
                v.name,
                phase()
            ),
        );
        let (rc, mut h, count) = raw::pvar_alloc(session, v.index, obj);
        if rc != sys::MPI_SUCCESS {
            continue;
        }
        handled += 1;
        let mut buf = raw::buffer(count);
        // SAFETY: live session and handle; the buffer holds `count` elements of up to 8
        // bytes; the handle is freed once.
        let rc = unsafe {
            sys::MPI_T_pvar_read(session, h, buf.as_mut_ptr().cast());
            if v.ints[4] == 0 {
                sys::MPI_T_pvar_start(session, h);
                sys::MPI_T_pvar_read(session, h, buf.as_mut_ptr().cast());
                sys::MPI_T_pvar_stop(session, h);
            }
            sys::MPI_T_pvar_handle_free(session, &mut h)
        };
        if rc == sys::MPI_SUCCESS && h != sys::MPI_T_PVAR_HANDLE_NULL {
            problems.push(format!(
                "pvar {} {}: freed handle not set to MPI_T_PVAR_HANDLE_NULL",
                v.index, v.name
            ));
        }
    }
    // SAFETY: the session created above, freed once.
    unsafe { sys::MPI_T_pvar_session_free(&mut session) };
    handled
}

/// Misuse of handles and sessions, one announced call per check (a crash resumes after it).
pub(super) fn errors_handles(ctx: &Ctx) -> Verdict {
    if let Err(e) = raw::init() {
        return Verdict::Skip(format!("MPI_T_init_thread failed: {e}"));
    }
    use ErrorClass as E;
    let mut problems = Vec::new();
    let mut buf = [0u64; 64];
    let b: *mut c_void = buf.as_mut_ptr().cast();
    let (_, mut live) = raw::session_create();
    let all = sys::mpi_t_pvar_all_handles();
    type Check = (&'static str, &'static [ErrorClass], Box<dyn Fn() -> c_int>);
    let checks: Vec<Check> = vec![
        (
            "MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL)",
            &[E::InvalidHandle],
            // SAFETY: the null handle is what is checked; the buffer is large enough.
            Box::new(move || unsafe { sys::MPI_T_cvar_read(sys::MPI_T_CVAR_HANDLE_NULL, b) }),
        ),
        (
            "MPI_T_cvar_write(MPI_T_CVAR_HANDLE_NULL)",
            &[E::InvalidHandle],
            // SAFETY: as above.
            Box::new(move || unsafe { sys::MPI_T_cvar_write(sys::MPI_T_CVAR_HANDLE_NULL, b) }),
        ),
        (
            "MPI_T_cvar_handle_free(&MPI_T_CVAR_HANDLE_NULL)",
            &[E::InvalidHandle],
            // SAFETY: as above.
            Box::new(|| unsafe {
                sys::MPI_T_cvar_handle_free(&mut sys::MPI_T_CVAR_HANDLE_NULL.clone())
            }),
        ),
        (
            "MPI_T_pvar_session_free(&MPI_T_PVAR_SESSION_NULL)",
            &[E::InvalidSession],
            // SAFETY: as above.
            Box::new(|| unsafe {
                sys::MPI_T_pvar_session_free(&mut sys::MPI_T_PVAR_SESSION_NULL.clone())
            }),
        ),
        (
            "MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES)",
            &[E::InvalidSession],
            // SAFETY: as above.
            Box::new(move || unsafe { sys::MPI_T_pvar_start(sys::MPI_T_PVAR_SESSION_NULL, all) }),
        ),
        (
            "MPI_T_pvar_reset(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES)",
            &[E::InvalidSession],
            // SAFETY: as above.
            Box::new(move || unsafe { sys::MPI_T_pvar_reset(sys::MPI_T_PVAR_SESSION_NULL, all) }),
        ),
        (
            "MPI_T_pvar_read(session, MPI_T_PVAR_HANDLE_NULL)",
            &[E::InvalidHandle],
            // SAFETY: as above.
            Box::new(move || unsafe { sys::MPI_T_pvar_read(live, sys::MPI_T_PVAR_HANDLE_NULL, b) }),
        ),
        (
            "MPI_T_pvar_stop(session, MPI_T_PVAR_HANDLE_NULL)",
            &[E::InvalidHandle],
            // SAFETY: as above.
            Box::new(move || unsafe { sys::MPI_T_pvar_stop(live, sys::MPI_T_PVAR_HANDLE_NULL) }),
        ),
        (
            "MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES)",
            &[E::InvalidHandle, E::Invalid],
            // SAFETY: as above.
            Box::new(move || unsafe { sys::MPI_T_pvar_read(live, all, b) }),
        ),
        (
            "MPI_T_pvar_write(session, MPI_T_PVAR_ALL_HANDLES)",
            &[E::InvalidHandle, E::Invalid],
            // SAFETY: as above.
            Box::new(move || unsafe { sys::MPI_T_pvar_write(live, all, b) }),
        ),
        (
            "MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0)",
            &[E::InvalidSession, E::InvalidIndex],
            // SAFETY: as above; the object is ignored for an unbound variable.
            Box::new(|| raw::pvar_alloc(sys::MPI_T_PVAR_SESSION_NULL, 0, std::ptr::null_mut()).0),
        ),
        (
            "MPI_T_enum_get_info(MPI_T_ENUM_NULL)",
            &[E::InvalidHandle, E::Invalid],
            Box::new(|| raw::enum_info(sys::MPI_T_ENUM_NULL, StrArg::NONE).0),
        ),
    ];
    for (i, (call, allowed, f)) in checks.iter().enumerate() {
        let k = format!("errors:{i}");
        if ctx.avoids(&k) {
            continue;
        }
        announce(Some(&k), call);
        let rc = f();
        if !raw::class(rc).is_some_and(|c| allowed.contains(&c)) {
            let names: Vec<&str> = allowed.iter().map(|c| c.c_name()).collect();
            problems.push(format!(
                "{call} gave {}, expected {}",
                raw::rc_name(rc),
                names.join("|")
            ));
        }
    }
    // Freeing sets the session to MPI_T_PVAR_SESSION_NULL.
    announce(Some("errors:free"), "MPI_T_pvar_session_free(session)");
    // SAFETY: the live session created above, freed once.
    let rc = unsafe { sys::MPI_T_pvar_session_free(&mut live) };
    if rc != sys::MPI_SUCCESS || live != sys::MPI_T_PVAR_SESSION_NULL {
        problems.push(format!(
            "MPI_T_pvar_session_free gave {} and did not set MPI_T_PVAR_SESSION_NULL",
            raw::rc_name(rc)
        ));
    }
    from_problems("violation", &problems)
}

/// Bound variables allocated with the null handle of their object kind.
pub(super) fn errors_binding(ctx: &Ctx) -> Verdict {
    let universe = match start() {
        Ok(u) => u,
        Err(v) => return v,
    };
    // SAFETY: a plain read of rsmpi's link-time constant.
    let mut comm_null = unsafe { sys::mpi_sys::RSMPI_COMM_NULL };
    let mut dt_null = sys::MPI_DATATYPE_NULL;
    let mut info_null = sys::MPI_INFO_NULL;
    let mut problems = Vec::new();
    let mut accepted = Vec::new();
    let mut tried = 0;
    let (_, session) = raw::session_create();
    for kind in [Kind::Cvar, Kind::Pvar] {
        for v in vars(kind) {
            let bind = v.ints[if kind == Kind::Cvar { 1 } else { 2 }];
            let (obj, what): (*mut c_void, &str) = if bind == sys::MPI_T_BIND_MPI_COMM {
                (
                    (&mut comm_null as *mut sys::MPI_Comm).cast(),
                    "MPI_COMM_NULL",
                )
            } else if bind == sys::MPI_T_BIND_MPI_DATATYPE {
                (
                    (&mut dt_null as *mut sys::MPI_Datatype).cast(),
                    "MPI_DATATYPE_NULL",
                )
            } else if bind == sys::MPI_T_BIND_MPI_INFO {
                (
                    (&mut info_null as *mut sys::MPI_Info).cast(),
                    "MPI_INFO_NULL",
                )
            } else {
                continue;
            };
            let k = format!("bind:{}", key(kind, &v));
            if ctx.avoids(&k) || ctx.avoids(&key(kind, &v)) {
                continue;
            }
            tried += 1;
            let call = format!(
                "MPI_T_{}_handle_alloc({} {} {}, &{what})",
                kind.name(),
                kind.name(),
                v.index,
                v.name
            );
            announce(Some(&k), &call);
            let rc = if kind == Kind::Cvar {
                let (rc, mut h, _) = raw::cvar_alloc(v.index, obj);
                if rc == sys::MPI_SUCCESS {
                    // SAFETY: a handle MPI just returned, freed once.
                    unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
                }
                rc
            } else {
                let (rc, mut h, _) = raw::pvar_alloc(session, v.index, obj);
                if rc == sys::MPI_SUCCESS {
                    // SAFETY: as above.
                    unsafe { sys::MPI_T_pvar_handle_free(session, &mut h) };
                }
                rc
            };
            match raw::class(rc) {
                _ if rc == sys::MPI_SUCCESS => accepted.push(call),
                Some(ErrorClass::InvalidHandle | ErrorClass::Invalid) => {}
                _ => problems.push(format!("{call} gave {}", raw::rc_name(rc))),
            }
        }
    }
    drop(universe);
    if tried == 0 {
        return Verdict::Skip("no variable bound to a communicator, datatype or info".into());
    }
    if problems.is_empty() && !accepted.is_empty() {
        return from_problems("accepted", &accepted);
    }
    from_problems("violation", &problems).noting(format!("{tried} bound variables"))
}

/// A live handle of the real implementation, its count and datatype.
struct RealHandle {
    session: usize,
    handle: sys::MPI_T_pvar_handle,
    count: c_int,
    datatype: Datatype,
}

fn first_value(dt: Datatype, buf: &[u64]) -> Option<f64> {
    let bytes: Vec<u8> = buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
    Value::from_ne_bytes(dt, &bytes[..dt.size()])
        .ok()?
        .to_f64_lossy()
}

/// Only the operations whose outcome the standard fixes without doubt and that move values:
/// the value rules are checked even where an implementation refuses a rarer call.
fn value_op_strategy(nvars: usize) -> impl Strategy<Value = Op> {
    let h = 0usize..8;
    let s = 0usize..3;
    prop_oneof![
        1 => Just(Op::CreateSession),
        3 => (s.clone(), 0..nvars).prop_map(|(session, var)| Op::Alloc { session, var }),
        3 => h.clone().prop_map(Op::Start),
        2 => h.clone().prop_map(Op::Stop),
        6 => h.prop_map(Op::Read),
        1 => s.clone().prop_map(Op::StartAll),
        1 => s.prop_map(Op::StopAll),
    ]
}

fn op_strategy(nvars: usize) -> impl Strategy<Value = Op> {
    let h = 0usize..8;
    let s = 0usize..3;
    prop_oneof![
        1 => Just(Op::CreateSession),
        1 => s.clone().prop_map(Op::FreeSession),
        3 => (s.clone(), 0..nvars).prop_map(|(session, var)| Op::Alloc { session, var }),
        1 => h.clone().prop_map(Op::Free),
        2 => h.clone().prop_map(Op::Start),
        2 => h.clone().prop_map(Op::Stop),
        1 => h.clone().prop_map(Op::Reset),
        4 => h.clone().prop_map(Op::Read),
        1 => h.clone().prop_map(Op::Write),
        1 => h.clone().prop_map(Op::ReadReset),
        1 => (h.clone(), s.clone()).prop_map(|(h, s)| Op::ReadInOtherSession(h, s)),
        1 => s.clone().prop_map(Op::StartAll),
        1 => s.clone().prop_map(Op::StopAll),
        1 => s.prop_map(Op::ResetAll),
    ]
}

/// `op` with its session and handle indices taken modulo the `ns` sessions and `nh` handles
/// created so far (`None`: it refers to a kind of thing that does not exist yet).
fn resolve(op: Op, ns: usize, nh: usize, nvars: usize) -> Option<Op> {
    let s = |s: usize| (ns > 0).then(|| s % ns.max(1));
    let h = |h: usize| (nh > 0).then(|| h % nh.max(1));
    Some(match op {
        Op::CreateSession if ns >= 4 => return None,
        Op::CreateSession => op,
        Op::FreeSession(x) => Op::FreeSession(s(x)?),
        Op::StartAll(x) => Op::StartAll(s(x)?),
        Op::StopAll(x) => Op::StopAll(s(x)?),
        Op::ResetAll(x) => Op::ResetAll(s(x)?),
        Op::Alloc { session, var } if var < nvars => Op::Alloc {
            session: s(session)?,
            var,
        },
        Op::Alloc { .. } => return None,
        Op::Free(x) => Op::Free(h(x)?),
        Op::Start(x) => Op::Start(h(x)?),
        Op::Stop(x) => Op::Stop(h(x)?),
        Op::Reset(x) => Op::Reset(h(x)?),
        Op::Read(x) => Op::Read(h(x)?),
        Op::Write(x) => Op::Write(h(x)?),
        Op::ReadReset(x) => Op::ReadReset(h(x)?),
        Op::ReadInOtherSession(x, y) => Op::ReadInOtherSession(h(x)?, s(y)?),
    })
}

/// The stateful test against `mpit_core::pvar_model`, every operation.
pub(super) fn model(ctx: &Ctx) -> Verdict {
    model_with(ctx, false)
}

/// The stateful test restricted to start/stop/read and allocation: the value rules.
pub(super) fn model_values(ctx: &Ctx) -> Verdict {
    model_with(ctx, true)
}

fn model_with(ctx: &Ctx, values_only: bool) -> Verdict {
    let universe = match start() {
        Ok(u) => u,
        Err(v) => return v,
    };
    let mut comm = Some(world());
    let mut chosen: Vec<(Var, VarTraits)> = Vec::new();
    for v in vars(Kind::Pvar) {
        let ok = raw::object_for(v.ints[2], &mut comm).is_some()
            && !ctx.avoids(&key(Kind::Pvar, &v))
            && v.datatype.is_some();
        if let (true, Ok(class)) = (ok, crate::raw::pvar_class(v.ints[1])) {
            let t = VarTraits {
                class,
                readonly: v.ints[3] != 0,
                continuous: v.ints[4] != 0,
                atomic: v.ints[5] != 0,
            };
            chosen.push((v, t));
        }
    }
    // Sessions alone (no variables) are still checked: create/free and ALL_HANDLES.
    let nvars = chosen.len().max(1);
    let traits: Vec<VarTraits> = chosen.iter().map(|(_, t)| *t).collect();
    // Each violation found leaves its kind of operation out of the next round, so one run
    // reports every kind of departure, each with its own minimal sequence.
    let mut excluded: Vec<String> = Vec::new();
    let mut found: Vec<Verdict> = Vec::new();
    loop {
        let ex = excluded.clone();
        let keep = move |op: &Op| !ex.contains(&op_kind(op));
        let strategy = if values_only {
            proptest::collection::vec(
                value_op_strategy(nvars)
                    .prop_filter("left out", keep)
                    .boxed(),
                1..24,
            )
        } else {
            proptest::collection::vec(
                op_strategy(nvars).prop_filter("left out", keep).boxed(),
                1..24,
            )
        };
        let failing = std::cell::RefCell::new(None);
        let verdict = model_round(ctx, &chosen, &traits, strategy, &failing);
        match (verdict, failing.into_inner()) {
            (v @ Verdict::Finding { .. }, Some(kind)) if found.len() < 6 => {
                found.push(v);
                excluded.push(kind);
            }
            // A crash is reported as it is (its detail is the shrink step the parent needs),
            // with the violations of the earlier rounds after a tab.
            (
                Verdict::Finding {
                    kind: "crash",
                    counterexample,
                    detail,
                },
                _,
            ) => {
                let earlier = match combine(found, &excluded) {
                    Verdict::Finding {
                        counterexample: c,
                        detail: d,
                        ..
                    } => format!("\tearlier rounds: {d} (sequence {c})"),
                    _ => String::new(),
                };
                let v = Verdict::Finding {
                    kind: "crash",
                    counterexample,
                    detail: format!("{detail}{earlier}"),
                };
                break finish(universe, &chosen, v);
            }
            (v, _) if found.is_empty() => break finish(universe, &chosen, v),
            _ => break finish(universe, &chosen, combine(found, &excluded)),
        }
    }
}

/// The name of an operation's kind (`Read`, `StartAll`, ...).
fn op_kind(op: &Op) -> String {
    format!("{op:?}")
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

/// The first violation as the finding; the others (found with the earlier ones' kinds of
/// operation left out) in the detail.
fn combine(found: Vec<Verdict>, excluded: &[String]) -> Verdict {
    let mut all = found.into_iter().filter_map(|v| match v {
        Verdict::Finding {
            counterexample,
            detail,
            ..
        } => Some((counterexample, detail)),
        _ => None,
    });
    let Some((cex, first)) = all.next() else {
        return Verdict::Pass(String::new());
    };
    let rest: Vec<String> = all
        .zip(excluded.iter())
        .map(|((c, d), left_out)| format!("without {left_out}: {d} (sequence {c})"))
        .collect();
    Verdict::violation(
        cex,
        if rest.is_empty() {
            first
        } else {
            format!("{first}; {}", rest.join("; "))
        },
    )
}

fn finish(
    universe: Option<mpi::environment::Universe>,
    chosen: &[(Var, VarTraits)],
    verdict: Verdict,
) -> Verdict {
    drop(universe);
    let names: Vec<&str> = chosen.iter().map(|(v, _)| v.name.as_str()).collect();
    verdict.noting(if names.is_empty() {
        "no usable performance variable: sessions, ALL_HANDLES and null handles only".to_string()
    } else {
        format!("{} variables: {}", names.len(), names.join(", "))
    })
}

/// One round of the stateful test; `failing` gets the kind of the operation of the last
/// failing sequence (the minimal one, once shrinking is done).
fn model_round(
    ctx: &Ctx,
    chosen: &[(Var, VarTraits)],
    traits: &[VarTraits],
    strategy: impl Strategy<Value = Vec<Op>>,
    failing: &std::cell::RefCell<Option<String>>,
) -> Verdict {
    check_prop(ctx.cases, strategy, |ops| {
        let mut model = PvarModel::new(traits.to_vec());
        let mut comm = Some(world());
        let mut sessions: Vec<sys::MPI_T_pvar_session> = Vec::new();
        let mut handles: Vec<RealHandle> = Vec::new();
        let all = sys::mpi_t_pvar_all_handles();
        let mut result = Ok(());
        let mut executed = Vec::new();
        for op in &ops {
            let op = *op;
            let step = executed.len();
            // Indices are taken modulo what exists (so most generated operations act on
            // something); operations on nothing yet are skipped.
            let (ns, nh) = model.sizes();
            let Some(op) = resolve(op, ns, nh, traits.len()) else {
                continue;
            };
            if let Op::ReadInOtherSession(h, s) = op {
                if !model.handle_live(h) || !model.session_live(s) || model.session_of(h) == Some(s)
                {
                    continue;
                }
            }
            executed.push(op);
            announce(None, &format!("{op:?} after {:?}", &executed[..step]));
            let mut value = None;
            let read_buf = |h: &RealHandle| raw::buffer(h.count);
            let rc = match op {
                Op::CreateSession => {
                    let (rc, s) = raw::session_create();
                    if rc == sys::MPI_SUCCESS {
                        sessions.push(s);
                    }
                    rc
                }
                // SAFETY (here and in the arms below): sessions and handles are ones MPI
                // returned, or the null values MPI's free wrote into them (what is being
                // checked); buffers hold `count` elements of up to 8 bytes.
                Op::FreeSession(s) => {
                    // SAFETY: as said above.
                    unsafe { sys::MPI_T_pvar_session_free(&mut sessions[s]) }
                }
                Op::Alloc { session, var } => {
                    let v = &chosen[var].0;
                    let obj = raw::object_for(v.ints[2], &mut comm).unwrap_or(std::ptr::null_mut());
                    let (rc, h, count) = raw::pvar_alloc(sessions[session], v.index, obj);
                    if rc == sys::MPI_SUCCESS {
                        handles.push(RealHandle {
                            session,
                            handle: h,
                            count,
                            datatype: v.datatype.unwrap_or(Datatype::UnsignedLongLong),
                        });
                    }
                    rc
                }
                Op::Free(h) => {
                    let x = &mut handles[h];
                    // SAFETY: as above.
                    unsafe { sys::MPI_T_pvar_handle_free(sessions[x.session], &mut x.handle) }
                }
                Op::Start(h) | Op::Stop(h) | Op::Reset(h) => {
                    let x = &handles[h];
                    let f = match op {
                        Op::Start(_) => sys::MPI_T_pvar_start,
                        Op::Stop(_) => sys::MPI_T_pvar_stop,
                        _ => sys::MPI_T_pvar_reset,
                    };
                    // SAFETY: as above.
                    unsafe { f(sessions[x.session], x.handle) }
                }
                Op::Read(h) | Op::ReadReset(h) | Op::Write(h) => {
                    let x = &handles[h];
                    let mut buf = read_buf(x);
                    let p: *mut c_void = buf.as_mut_ptr().cast();
                    // SAFETY: as above. A write writes zeros, an allowed value of every class.
                    let rc = unsafe {
                        match op {
                            Op::Read(_) => sys::MPI_T_pvar_read(sessions[x.session], x.handle, p),
                            Op::ReadReset(_) => {
                                sys::MPI_T_pvar_readreset(sessions[x.session], x.handle, p)
                            }
                            _ => sys::MPI_T_pvar_write(sessions[x.session], x.handle, p),
                        }
                    };
                    if rc == sys::MPI_SUCCESS && !matches!(op, Op::Write(_)) {
                        value = first_value(x.datatype, &buf);
                    }
                    rc
                }
                Op::ReadInOtherSession(h, s) => {
                    let mut buf = read_buf(&handles[h]);
                    // SAFETY: as above.
                    unsafe {
                        sys::MPI_T_pvar_read(
                            sessions[s],
                            handles[h].handle,
                            buf.as_mut_ptr().cast(),
                        )
                    }
                }
                Op::StartAll(s) | Op::StopAll(s) | Op::ResetAll(s) => {
                    let f = match op {
                        Op::StartAll(_) => sys::MPI_T_pvar_start,
                        Op::StopAll(_) => sys::MPI_T_pvar_stop,
                        _ => sys::MPI_T_pvar_reset,
                    };
                    // SAFETY: as above.
                    unsafe { f(sessions[s], all) }
                }
            };
            let outcome = if rc == sys::MPI_SUCCESS {
                Ok(())
            } else {
                Err(raw::class(rc).unwrap_or(ErrorClass::Invalid))
            };
            if let Err(v) = model.apply(&op, outcome, value) {
                let var = match op {
                    Op::Alloc { var, .. } => Some(var),
                    Op::Free(h)
                    | Op::Start(h)
                    | Op::Stop(h)
                    | Op::Reset(h)
                    | Op::Read(h)
                    | Op::Write(h)
                    | Op::ReadReset(h)
                    | Op::ReadInOtherSession(h, _) => model
                        .var_of(h)
                        .and_then(|t| traits.iter().position(|x| *x == t)),
                    _ => None,
                };
                let var = var.map_or(String::new(), |i| {
                    format!(" (variable {} {})", chosen[i].0.index, chosen[i].0.name)
                });
                result = Err(TestCaseError::fail(format!(
                    "step {step}: {op:?}{var}: {v}; executed: {executed:?}"
                )));
                *failing.borrow_mut() = Some(op_kind(&op));
                break;
            }
        }
        // Clean up what is still live.
        for (s, session) in sessions.iter_mut().enumerate() {
            if model.session_live(s) {
                // SAFETY: a live session.
                unsafe { sys::MPI_T_pvar_session_free(session) };
            }
        }
        result
    })
}

/// Control variables written with generated values and read back.
pub(super) fn cvar_write_read(ctx: &Ctx) -> Verdict {
    if let Err(e) = raw::init() {
        return Verdict::Skip(format!("MPI_T_init_thread failed: {e}"));
    }
    let targets: Vec<Var> = vars(Kind::Cvar)
        .into_iter()
        .filter(|v| {
            v.ints[1] == sys::MPI_T_BIND_NO_OBJECT
                && v.datatype
                    .is_some_and(|d| d.is_integer() && d != Datatype::Char)
                && !ctx.avoids(&key(Kind::Cvar, v))
        })
        .collect();
    if targets.is_empty() {
        return Verdict::Skip("no unbound integer control variables".into());
    }
    let n = targets.len();
    let (written, refused) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let names: Vec<String> = targets.iter().map(|v| v.name.clone()).collect();
    let strategy = (0..n, 0u8..4).prop_map(move |(t, how)| (t, names[t].clone(), how));
    let verdict = check_prop(ctx.cases, strategy, |(t, _, how)| {
        let v = &targets[t];
        let dt = v.datatype.unwrap_or(Datatype::Int);
        let k = key(Kind::Cvar, v);
        announce(
            Some(&k),
            &format!(
                "MPI_T_cvar_handle_alloc/read/write of cvar {} {}",
                v.index, v.name
            ),
        );
        let (rc, mut h, count) = raw::cvar_alloc(v.index, std::ptr::null_mut());
        if rc != sys::MPI_SUCCESS || count != 1 {
            if rc == sys::MPI_SUCCESS {
                // SAFETY: a live handle, freed once.
                unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
            }
            return Ok(());
        }
        let mut buf = [0u64; 1];
        // SAFETY: live handle; one element of at most 8 bytes.
        let rc = unsafe { sys::MPI_T_cvar_read(h, buf.as_mut_ptr().cast()) };
        prop_assert_eq!(rc, sys::MPI_SUCCESS, "read of {}", v.name);
        let old = buf[0];
        let oldv = first_value(dt, &buf).unwrap_or(0.0) as i64;
        let neww: i64 = match (how, v.enumtype) {
            (_, Some(e)) => {
                let (_, num, _) = raw::enum_info(e, StrArg::NONE);
                let k = c_int::from(how) % num.max(1);
                i64::from(raw::enum_item(e, k, StrArg::NONE).1)
            }
            (0, None) => oldv,
            (1, None) => oldv + 1,
            (2, None) => (oldv - 1).max(0),
            _ => i64::from(oldv == 0),
        };
        let nv = match Value::from_ne_bytes(dt, &neww.to_ne_bytes()[..dt.size()]) {
            Ok(x) => x,
            Err(_) => return Ok(()),
        };
        let mut wbuf = [0u64; 1];
        let bytes = nv.to_ne_bytes();
        let mut raw_bytes = [0u8; 8];
        raw_bytes[..bytes.len()].copy_from_slice(&bytes);
        wbuf[0] = u64::from_ne_bytes(raw_bytes);
        // SAFETY: live handle; one element.
        let rc = unsafe { sys::MPI_T_cvar_write(h, wbuf.as_mut_ptr().cast()) };
        let scope = v.ints[2];
        let fixed = scope == sys::MPI_T_SCOPE_CONSTANT || scope == sys::MPI_T_SCOPE_READONLY;
        let result = if rc == sys::MPI_SUCCESS {
            let mut back = [0u64; 1];
            // SAFETY: as above.
            unsafe { sys::MPI_T_cvar_read(h, back.as_mut_ptr().cast()) };
            // Put the old value back.
            // SAFETY: as above.
            unsafe { sys::MPI_T_cvar_write(h, (&old as *const u64).cast_mut().cast()) };
            if fixed {
                Err(format!(
                    "write of {} (scope {}) succeeded",
                    v.name,
                    if scope == sys::MPI_T_SCOPE_CONSTANT {
                        "constant"
                    } else {
                        "readonly"
                    }
                ))
            } else if first_value(dt, &back) != first_value(dt, &wbuf) {
                Err(format!(
                    "{}: wrote {neww}, read back {:?}",
                    v.name,
                    first_value(dt, &back)
                ))
            } else {
                written.set(written.get() + 1);
                Ok(())
            }
        } else if matches!(
            raw::class(rc),
            Some(ErrorClass::CvarSetNotNow | ErrorClass::CvarSetNever)
        ) {
            refused.set(refused.get() + 1);
            Ok(())
        } else {
            Err(format!(
                "write of {} refused with {}",
                v.name,
                raw::rc_name(rc)
            ))
        };
        // SAFETY: a live handle, freed once.
        unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
        result.map_err(TestCaseError::fail)
    });
    verdict.noting(format!(
        "{n} unbound integer cvars; {} writes accepted and read back, {} refused with \
         SET_NOT_NOW/SET_NEVER",
        written.get(),
        refused.get()
    ))
}

/// The attributes the standard requires equal on every process, per variable name.
fn attributes(avoid: &Ctx) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for v in vars(Kind::Cvar) {
        let mut count = String::from("?");
        if v.ints[1] == sys::MPI_T_BIND_NO_OBJECT && !avoid.avoids(&key(Kind::Cvar, &v)) {
            let (rc, mut h, c) = raw::cvar_alloc(v.index, std::ptr::null_mut());
            if rc == sys::MPI_SUCCESS {
                count = c.to_string();
                // SAFETY: a live handle, freed once.
                unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
            }
        }
        out.insert(
            format!("cvar {}", v.name),
            format!(
                "verbosity {} datatype {:?} bind {} scope {} count {count}",
                v.ints[0], v.datatype, v.ints[1], v.ints[2]
            ),
        );
    }
    for v in vars(Kind::Pvar) {
        out.insert(
            format!("pvar {} class {}", v.name, v.ints[1]),
            format!(
                "verbosity {} datatype {:?} bind {} readonly {} continuous {} atomic {}",
                v.ints[0], v.datatype, v.ints[2], v.ints[3], v.ints[4], v.ints[5]
            ),
        );
    }
    out
}

/// Under `mpiexec -n 3`: every rank writes its attributes; rank 0 compares.
pub(super) fn ranks(ctx: &Ctx) -> Verdict {
    let universe = match start() {
        Ok(Some(u)) => u,
        Ok(None) => return Verdict::Skip("MPI was already initialised".into()),
        Err(v) => return v,
    };
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let dir = std::env::temp_dir().join(format!(
        "mpit-conform-{}",
        std::env::var("MPIT_CONFORM_JOB").unwrap_or_default()
    ));
    let _ = std::fs::create_dir_all(&dir);
    let mine = attributes(ctx);
    let text: String = mine.iter().map(|(k, v)| format!("{k}\t{v}\n")).collect();
    let _ = std::fs::write(dir.join(format!("rank-{rank}")), text);
    world.barrier();
    if rank != 0 {
        drop(universe);
        return Verdict::Skip(SILENT.into());
    }
    let mut problems = Vec::new();
    for r in 1..size {
        let other = std::fs::read_to_string(dir.join(format!("rank-{r}"))).unwrap_or_default();
        let theirs: BTreeMap<&str, &str> =
            other.lines().filter_map(|l| l.split_once('\t')).collect();
        for (name, attrs) in &mine {
            if let Some(t) = theirs.get(name.as_str()) {
                if t != attrs {
                    problems.push(format!("{name}: rank 0 {attrs}; rank {r} {t}"));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    drop(universe);
    if size < 2 {
        return Verdict::Skip(format!("started with {size} process(es), not 3"));
    }
    from_problems("violation", &problems).noting(format!(
        "{} variables compared on {size} processes",
        mine.len()
    ))
}
