//! The properties that allocate handles: sweeps, misuse of handles, the session model, control
//! variable writes, and the cross-process comparison.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};

use mpi::collective::CommunicatorCollectives;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;
use proptest::prelude::*;

use mpit_core::pvar_model::{Op, PvarModel, VarTraits, Violation};
use mpit_core::{Datatype, ErrorClass, PvarClass, Value};
use mpit_safe::RawConstant;
use mpit_sys as sys;
// rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

use super::props::{SILENT, c_index};
use super::raw::{self, Kind, StrArg};
use super::repro::{ACCEPTED, ANSWER, CLASS, Expect, Repro};
use super::rules::{self, Grade, Rule};
use super::{Ctx, Found, Verdict, announce, announce_with, check_prop, failing, from_problems};

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

/// The binding of `v` (`kind`'s slot of the raw answers).
fn bind_of(kind: Kind, v: &Var) -> c_int {
    v.ints[if kind == Kind::Cvar { 1 } else { 2 }]
}

/// C: `int idx` for `v` and `void *obj`, the object a handle of it is bound to
/// (`MPI_COMM_WORLD` for a communicator, else NULL), as [`raw::object_for`] gives it.
fn c_var(kind: Kind, v: &Var) -> String {
    let obj = if bind_of(kind, v) == sys::MPI_T_BIND_MPI_COMM {
        "MPI_Comm comm = MPI_COMM_WORLD;\nvoid *obj = &comm;"
    } else {
        "void *obj = NULL;"
    };
    format!(
        "int idx = {}, count = 0;\n{obj}\nunsigned long long buf[1 << 12];\nmemset(buf, 0, sizeof buf);",
        c_index(kind, v.index)
    )
}

/// A reproducer initialised as the current process is (MPI_T, and MPI if it is initialised).
fn here(ranks: u32, expect: Expect) -> Repro {
    Repro::new(ranks, expect).init(raw::initialized())
}

/// A sweep: one pass before `MPI_Init` and one after it.
fn sweep(ctx: &Ctx, pass: fn(&Ctx, &mut Vec<Found>) -> usize) -> Verdict {
    if let Err(e) = raw::init() {
        return Verdict::Skip(format!("MPI_T_init_thread failed: {e}"));
    }
    let mut problems = Vec::new();
    let before = pass(ctx, &mut problems);
    let universe = mpi::initialize();
    let after = pass(ctx, &mut problems);
    drop(universe);
    from_problems(&problems).noting(format!("{before} handles before MPI_Init, {after} after"))
}

pub(super) fn sweep_cvars(ctx: &Ctx) -> Verdict {
    sweep(ctx, |ctx, problems| sweep_now(ctx, Kind::Cvar, problems))
}

pub(super) fn sweep_pvars(ctx: &Ctx) -> Verdict {
    sweep(ctx, |ctx, problems| sweep_now(ctx, Kind::Pvar, problems))
}

/// C statements that make the sweep's calls for `v` (declaring `idx`, `obj`, `h`, `rc` is
/// left with the free's code).
fn sweep_c(kind: Kind, v: &Var) -> String {
    let calls = if kind == Kind::Cvar {
        "MPI_T_cvar_handle h;\n\
         must(MPI_T_cvar_handle_alloc(idx, obj, &h, &count), \"MPI_T_cvar_handle_alloc\");\n\
         say(\"reading a handle of %d elements\", count);\n\
         rc = MPI_T_cvar_read(h, buf);\nsay(\"MPI_T_cvar_read returned %s\", rc_name(rc));\n\
         rc = MPI_T_cvar_handle_free(&h);"
            .to_string()
    } else {
        format!(
            "MPI_T_pvar_session s;\nMPI_T_pvar_handle h;\n\
             must(MPI_T_pvar_session_create(&s), \"MPI_T_pvar_session_create\");\n\
             say(\"MPI_T_pvar_handle_alloc\");\n\
             rc = MPI_T_pvar_handle_alloc(s, idx, obj, &h, &count);\n\
             if (rc == MPI_SUCCESS) {{\n    \
             say(\"read, start, read, stop of a handle of %d elements\", count);\n    \
             MPI_T_pvar_read(s, h, buf);\n    if ({}) {{\n        MPI_T_pvar_start(s, h);\n        \
             MPI_T_pvar_read(s, h, buf);\n        MPI_T_pvar_stop(s, h);\n    }}\n    \
             rc = MPI_T_pvar_handle_free(s, &h);\n}}",
            i32::from(v.ints[4] == 0)
        )
    };
    format!(
        "say(\"{} {}\");\n{}\n{calls}",
        kind.name(),
        v.name.replace('"', "'"),
        c_var(kind, v)
    )
}

/// One pass of a sweep (before or after `MPI_Init`). The reproducer of a crash makes the
/// calls of the variables this sweep found crashing before (what it avoids now; reading freed
/// memory crashes or not depending on the state) and then those of the variable at hand.
fn sweep_now(ctx: &Ctx, kind: Kind, problems: &mut Vec<Found>) -> usize {
    let mut comm = raw::initialized().then(world);
    let mut handled = 0;
    let all = vars(kind);
    let crashed: Vec<String> = ctx
        .avoid
        .iter()
        .filter_map(|k| all.iter().find(|v| key(kind, v) == *k))
        .filter(|v| raw::object_for(bind_of(kind, v), &mut comm).is_some())
        .map(|v| format!("{{\n{}\n}}", sweep_c(kind, v)))
        .collect();
    let (rc, mut session) = raw::session_create();
    if rc != sys::MPI_SUCCESS {
        problems.push(Found::problem(
            "error",
            Grade::Violation,
            &rules::SESSIONS,
            format!("MPI_T_pvar_session_create: {}", raw::rc_name(rc)),
        ));
        return 0;
    }
    for v in &all {
        let k = key(kind, v);
        let Some(obj) = raw::object_for(bind_of(kind, v), &mut comm) else {
            continue;
        };
        if ctx.avoids(&k) {
            continue;
        }
        let name = kind.name();
        announce_with(
            Some(&k),
            &format!(
                "MPI_T_{name}_handle_alloc/read/{}free of {name} {} {} {}",
                if kind == Kind::Pvar {
                    "start/stop/"
                } else {
                    ""
                },
                v.index,
                v.name,
                phase()
            ),
            Grade::Violation,
            &rules::RETURNS,
            Some(
                here(1, Expect::Crash)
                    .line(crashed.join("\n"))
                    .line(format!("{{\n{}\n}}", sweep_c(kind, v)))
                    .line("say(\"no crash\");\nreturn end(ABSENT);"),
            ),
        );
        let (rc, mut h, count) = if kind == Kind::Cvar {
            let (rc, h, count) = raw::cvar_alloc(v.index, obj);
            (rc, Err(h), count)
        } else {
            let (rc, h, count) = raw::pvar_alloc(session, v.index, obj);
            (rc, Ok(h), count)
        };
        if rc != sys::MPI_SUCCESS {
            continue;
        }
        handled += 1;
        let mut buf = raw::buffer(count);
        let p: *mut c_void = buf.as_mut_ptr().cast();
        // SAFETY: live session and handles; the buffer holds `count` elements of up to 8
        // bytes; each handle is freed once.
        let (rc, freed_null) = unsafe {
            match &mut h {
                Err(h) => {
                    sys::MPI_T_cvar_read(*h, p);
                    let rc = sys::MPI_T_cvar_handle_free(h);
                    (rc, *h == sys::MPI_T_CVAR_HANDLE_NULL)
                }
                Ok(h) => {
                    sys::MPI_T_pvar_read(session, *h, p);
                    if v.ints[4] == 0 {
                        sys::MPI_T_pvar_start(session, *h);
                        sys::MPI_T_pvar_read(session, *h, p);
                        sys::MPI_T_pvar_stop(session, *h);
                    }
                    let rc = sys::MPI_T_pvar_handle_free(session, h);
                    (rc, *h == sys::MPI_T_PVAR_HANDLE_NULL)
                }
            }
        };
        if rc == sys::MPI_SUCCESS && !freed_null {
            let null = if kind == Kind::Cvar {
                "MPI_T_CVAR_HANDLE_NULL"
            } else {
                "MPI_T_PVAR_HANDLE_NULL"
            };
            problems.push(
                Found::problem(
                    "answer",
                    Grade::Violation,
                    &rules::FREE_SETS_NULL,
                    format!(
                        "{name} {} {}: freed handle not set to {null}",
                        v.index, v.name
                    ),
                )
                .with_repro(
                    here(1, Expect::Exit(ANSWER))
                        .line(sweep_c(kind, v))
                        .line(format!(
                            "return end(rc == MPI_SUCCESS && h != {null} ? ANSWER : ABSENT);"
                        )),
                ),
            );
        }
    }
    // SAFETY: the session created above, freed once.
    unsafe { sys::MPI_T_pvar_session_free(&mut session) };
    handled
}

/// A call with an invalid argument (its text, the error classes the standard names for it,
/// the rule, and the call in C with the declarations of [`MISUSE_C`]); made by [`misuse`].
type Misuse = (
    &'static str,
    &'static [ErrorClass],
    &'static Rule,
    &'static str,
);

const MISUSES: &[Misuse] = {
    use ErrorClass as E;
    const CODES: &Rule = &rules::ERROR_CODES;
    const HANDLE: &[ErrorClass] = &[E::InvalidHandle];
    const SESSION: &[ErrorClass] = &[E::InvalidSession];
    const HANDLE_OR_INVALID: &[ErrorClass] = &[E::InvalidHandle, E::Invalid];
    &[
        (
            "MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL)",
            HANDLE,
            CODES,
            "MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, buf)",
        ),
        (
            "MPI_T_cvar_write(MPI_T_CVAR_HANDLE_NULL)",
            HANDLE,
            CODES,
            "MPI_T_cvar_write(MPI_T_CVAR_HANDLE_NULL, buf)",
        ),
        (
            "MPI_T_cvar_handle_free(&MPI_T_CVAR_HANDLE_NULL)",
            HANDLE,
            CODES,
            "MPI_T_cvar_handle_free(&cnull)",
        ),
        (
            "MPI_T_pvar_session_free(&MPI_T_PVAR_SESSION_NULL)",
            SESSION,
            CODES,
            "MPI_T_pvar_session_free(&snull)",
        ),
        (
            "MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES)",
            SESSION,
            CODES,
            "MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES)",
        ),
        (
            "MPI_T_pvar_reset(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES)",
            SESSION,
            CODES,
            "MPI_T_pvar_reset(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES)",
        ),
        (
            "MPI_T_pvar_read(session, MPI_T_PVAR_HANDLE_NULL)",
            HANDLE,
            CODES,
            "MPI_T_pvar_read(live, MPI_T_PVAR_HANDLE_NULL, buf)",
        ),
        (
            "MPI_T_pvar_stop(session, MPI_T_PVAR_HANDLE_NULL)",
            HANDLE,
            CODES,
            "MPI_T_pvar_stop(live, MPI_T_PVAR_HANDLE_NULL)",
        ),
        (
            "MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES)",
            HANDLE_OR_INVALID,
            &rules::ALL_HANDLES,
            "MPI_T_pvar_read(live, MPI_T_PVAR_ALL_HANDLES, buf)",
        ),
        (
            "MPI_T_pvar_write(session, MPI_T_PVAR_ALL_HANDLES)",
            HANDLE_OR_INVALID,
            &rules::PVAR_WRITE,
            "MPI_T_pvar_write(live, MPI_T_PVAR_ALL_HANDLES, buf)",
        ),
        (
            "MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0)",
            &[E::InvalidSession, E::InvalidIndex],
            CODES,
            "MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0, NULL, &ph, &count)",
        ),
        (
            "MPI_T_enum_get_info(MPI_T_ENUM_NULL)",
            HANDLE_OR_INVALID,
            CODES,
            "MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, NULL, &len)",
        ),
    ]
};

/// Makes misuse `i` of [`MISUSES`] with the live session `live` and buffer `b`.
fn misuse(i: usize, live: sys::MPI_T_pvar_session, b: *mut c_void) -> c_int {
    let all = sys::mpi_t_pvar_all_handles();
    let (mut cnull, mut snull) = (sys::MPI_T_CVAR_HANDLE_NULL, sys::MPI_T_PVAR_SESSION_NULL);
    // SAFETY: null handles and sessions, MPI_T_PVAR_ALL_HANDLES where a single handle is due:
    // the invalid arguments are what is checked; `b` holds 64 elements of up to 8 bytes, the
    // out-pointers are valid, and the object is ignored for an unbound variable.
    unsafe {
        match i {
            0 => sys::MPI_T_cvar_read(cnull, b),
            1 => sys::MPI_T_cvar_write(cnull, b),
            2 => sys::MPI_T_cvar_handle_free(&mut cnull),
            3 => sys::MPI_T_pvar_session_free(&mut snull),
            4 => sys::MPI_T_pvar_start(snull, all),
            5 => sys::MPI_T_pvar_reset(snull, all),
            6 => sys::MPI_T_pvar_read(live, sys::MPI_T_PVAR_HANDLE_NULL, b),
            7 => sys::MPI_T_pvar_stop(live, sys::MPI_T_PVAR_HANDLE_NULL),
            8 => sys::MPI_T_pvar_read(live, all, b),
            9 => sys::MPI_T_pvar_write(live, all, b),
            10 => raw::pvar_alloc(snull, 0, std::ptr::null_mut()).0,
            _ => raw::enum_info(sys::MPI_T_ENUM_NULL, StrArg::NONE).0,
        }
    }
}

/// The declarations the C calls of [`Misuse`] use.
const MISUSE_C: &str = "unsigned long long buf[64];\nint count = 0, num = 0, len = 0;\n\
                        MPI_T_cvar_handle cnull = MPI_T_CVAR_HANDLE_NULL;\n\
                        MPI_T_pvar_session snull = MPI_T_PVAR_SESSION_NULL, live;\n\
                        MPI_T_pvar_handle ph;\n\
                        must(MPI_T_pvar_session_create(&live), \"MPI_T_pvar_session_create\");";

/// The C program of one misuse: the call, then the verdict by `expect`.
fn misuse_repro(c: &str, expect: Expect, rc: c_int) -> Repro {
    here(1, expect).line(MISUSE_C).call(c, rc, None)
}

/// Grades what an invalid argument got: a crash or an accepted call is unchecked input (spec
/// 000 §1.2.9), another error class than the ones named is an error-class finding.
fn grade_misuse(
    call: &str,
    c: &str,
    rc: c_int,
    allowed: &[ErrorClass],
    rule: &'static Rule,
) -> Option<Found> {
    let names: Vec<&str> = allowed.iter().map(|c| c.c_name()).collect();
    if raw::class(rc).is_some_and(|c| allowed.contains(&c)) {
        return None;
    }
    let text = format!(
        "{call} gave {}, expected {}",
        raw::rc_name(rc),
        names.join("|")
    );
    Some(if rc == sys::MPI_SUCCESS {
        Found::problem("accepted", Grade::UncheckedInput, rule, text).with_repro(misuse_repro(
            c,
            Expect::Exit(ACCEPTED),
            rc,
        ))
    } else {
        Found::problem("error", Grade::ErrorClass, rule, text).with_repro(misuse_repro(
            c,
            Expect::Exit(CLASS),
            rc,
        ))
    })
}

/// Misuse of handles and sessions, one announced call per check (a crash resumes after it).
pub(super) fn errors_handles(ctx: &Ctx) -> Verdict {
    let mut problems = Vec::new();
    let mut buf = [0u64; 64];
    let b: *mut c_void = buf.as_mut_ptr().cast();
    let (_, mut live) = raw::session_create();
    let when = phase();
    for (i, &(call, allowed, rule, c)) in MISUSES.iter().enumerate() {
        let k = format!("errors:{i}:{when}");
        if ctx.avoids(&k) {
            continue;
        }
        announce_with(
            Some(&k),
            &format!("{call} {when}"),
            Grade::UncheckedInput,
            rule,
            Some(misuse_repro(c, Expect::Crash, 0)),
        );
        let rc = misuse(i, live, b);
        problems.extend(grade_misuse(
            &format!("{call} {when}"),
            c,
            rc,
            allowed,
            rule,
        ));
    }
    // Freeing sets the session to MPI_T_PVAR_SESSION_NULL.
    announce_with(
        Some(&format!("errors:free:{when}")),
        "MPI_T_pvar_session_free(session)",
        Grade::Violation,
        &rules::RETURNS,
        None,
    );
    // SAFETY: the live session created above, freed once.
    let rc = unsafe { sys::MPI_T_pvar_session_free(&mut live) };
    if rc != sys::MPI_SUCCESS || live != sys::MPI_T_PVAR_SESSION_NULL {
        problems.push(
            Found::problem(
                "answer",
                Grade::Violation,
                &rules::FREE_SETS_NULL,
                format!(
                    "MPI_T_pvar_session_free gave {} and did not set MPI_T_PVAR_SESSION_NULL",
                    raw::rc_name(rc)
                ),
            )
            .with_repro(here(1, Expect::Exit(ANSWER)).line(MISUSE_C).line(
                "rc = MPI_T_pvar_session_free(&live);\n\
                 say(\"MPI_T_pvar_session_free returned %s\", rc_name(rc));\n\
                 return end(rc != MPI_SUCCESS || live != MPI_T_PVAR_SESSION_NULL ? ANSWER : ABSENT);",
            )),
        );
    }
    from_problems(&problems)
}

/// Bound variables allocated with the null handle of their object kind.
pub(super) fn errors_binding(ctx: &Ctx) -> Verdict {
    // SAFETY: a plain read of rsmpi's link-time constant.
    #[cfg(not(mpit_abi))]
    let mut comm_null = unsafe { sys::mpi_sys::RSMPI_COMM_NULL };
    #[cfg(mpit_abi)]
    let mut comm_null = sys::MPI_COMM_NULL;
    let mut dt_null = sys::MPI_DATATYPE_NULL;
    let mut info_null = sys::MPI_INFO_NULL;
    let mut problems = Vec::new();
    let mut tried = 0;
    let (_, session) = raw::session_create();
    for kind in [Kind::Cvar, Kind::Pvar] {
        for v in vars(kind) {
            let bind = bind_of(kind, &v);
            let (obj, what, c_decl): (*mut c_void, &str, &str) = if bind == sys::MPI_T_BIND_MPI_COMM
            {
                (
                    (&mut comm_null as *mut sys::MPI_Comm).cast(),
                    "MPI_COMM_NULL",
                    "MPI_Comm null = MPI_COMM_NULL;",
                )
            } else if bind == sys::MPI_T_BIND_MPI_DATATYPE {
                (
                    (&mut dt_null as *mut sys::MPI_Datatype).cast(),
                    "MPI_DATATYPE_NULL",
                    "MPI_Datatype null = MPI_DATATYPE_NULL;",
                )
            } else if bind == sys::MPI_T_BIND_MPI_INFO {
                (
                    (&mut info_null as *mut sys::MPI_Info).cast(),
                    "MPI_INFO_NULL",
                    "MPI_Info null = MPI_INFO_NULL;",
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
            let c_call = if kind == Kind::Cvar {
                "MPI_T_cvar_handle_alloc(idx, &null, &ch, &count)"
            } else {
                "MPI_T_pvar_handle_alloc(s, idx, &null, &ph, &count)"
            };
            let for_call = |expect: Expect, rc: c_int| {
                here(1, expect)
                    .line(format!(
                        "int idx = {}, count = 0;\n{c_decl}\nMPI_T_cvar_handle ch;\n\
                         MPI_T_pvar_handle ph;\nMPI_T_pvar_session s;\n\
                         must(MPI_T_pvar_session_create(&s), \"MPI_T_pvar_session_create\");",
                        c_index(kind, v.index)
                    ))
                    .call(c_call, rc, None)
            };
            announce_with(
                Some(&k),
                &call,
                Grade::UncheckedInput,
                &rules::BINDING,
                Some(for_call(Expect::Crash, 0)),
            );
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
                _ if rc == sys::MPI_SUCCESS => problems.push(
                    Found::problem("accepted", Grade::UncheckedInput, &rules::BINDING, call)
                        .with_repro(for_call(Expect::Exit(ACCEPTED), rc)),
                ),
                Some(ErrorClass::InvalidHandle | ErrorClass::Invalid) => {}
                _ => problems.push(
                    Found::problem(
                        "error",
                        Grade::ErrorClass,
                        &rules::BINDING,
                        format!("{call} gave {}", raw::rc_name(rc)),
                    )
                    .with_repro(for_call(Expect::Exit(CLASS), rc)),
                ),
            }
        }
    }
    if tried == 0 {
        return Verdict::Skip(format!(
            "no variable bound to a communicator, datatype or info {}",
            phase()
        ));
    }
    from_problems(&problems).noting(format!("{tried} bound variables"))
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
    let mut comm = Some(world());
    let mut chosen: Vec<(Var, VarTraits)> = Vec::new();
    for v in vars(Kind::Pvar) {
        let ok = raw::object_for(v.ints[2], &mut comm).is_some()
            && !ctx.avoids(&key(Kind::Pvar, &v))
            && v.datatype.is_some();
        if let (true, Some(class)) = (ok, PvarClass::from_raw(v.ints[1]).ok()) {
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
    let mut found: Vec<Found> = Vec::new();
    let verdict = loop {
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
        let failing_kind = std::cell::RefCell::new(None);
        let verdict = model_round(ctx, &chosen, &traits, strategy, &failing_kind);
        let left_out = if excluded.is_empty() {
            String::new()
        } else {
            format!(" (with {} left out)", excluded.join(", "))
        };
        match (verdict, failing_kind.into_inner()) {
            // A crash ends the rounds: its detail is the shrink step the parent needs.
            (Verdict::Found(f), _) if f.iter().any(|x| x.kind == "crash") => {
                found.extend(f);
                break Verdict::Found(found);
            }
            (Verdict::Found(f), Some(kind)) if found.len() < 6 => {
                found.extend(f.into_iter().map(|mut x| {
                    x.detail = format!("{}{left_out}", x.detail);
                    x
                }));
                excluded.push(kind);
            }
            (v, _) if found.is_empty() => break v,
            _ => break Verdict::Found(found),
        }
    };
    let names: Vec<&str> = chosen.iter().map(|(v, _)| v.name.as_str()).collect();
    verdict.noting(if names.is_empty() {
        "no usable performance variable: sessions, ALL_HANDLES and null handles only".to_string()
    } else {
        format!("{} variables: {}", names.len(), names.join(", "))
    })
}

/// The name of an operation's kind (`Read`, `StartAll`, ...).
fn op_kind(op: &Op) -> String {
    format!("{op:?}")
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

/// The C type of a datatype's elements (for reading a value in a reproducer).
fn c_type(dt: Datatype) -> &'static str {
    match dt {
        Datatype::Int | Datatype::WChar => "int",
        Datatype::Unsigned => "unsigned",
        Datatype::UnsignedLong => "unsigned long",
        Datatype::UnsignedLongLong => "unsigned long long",
        Datatype::Count => "MPI_Count",
        Datatype::Char => "char",
        Datatype::Double => "double",
        Datatype::Short => "short",
        Datatype::Long => "long",
        Datatype::LongLong => "long long",
        Datatype::SignedChar => "signed char",
        Datatype::UnsignedChar | Datatype::Byte | Datatype::Uint8 => "unsigned char",
        Datatype::UnsignedShort => "unsigned short",
        Datatype::Float => "float",
        Datatype::Int8 => "int8_t",
        Datatype::Int16 => "int16_t",
        Datatype::Int32 => "int32_t",
        Datatype::Int64 => "int64_t",
        Datatype::Uint16 => "uint16_t",
        Datatype::Uint32 => "uint32_t",
        Datatype::Uint64 => "uint64_t",
        Datatype::Aint => "MPI_Aint",
        Datatype::Offset => "MPI_Offset",
        Datatype::CBool => "_Bool",
    }
}

/// The declarations of a session-model reproducer.
const MODEL_C: &str = "MPI_T_pvar_session s[8];\nMPI_T_pvar_handle h[32];\n\
                       int hs[32], count[32], have[32], ns = 0, nh = 0;\n\
                       double v = 0, prev[32];\nunsigned long long buf[1 << 12];\n\
                       MPI_Comm comm = MPI_COMM_WORLD;\n(void) comm; (void) v; (void) prev; (void) have;";

/// C statements for `op` of a session-model sequence (`rc` gets its return code; reads set
/// `v` to the first element and track `prev`/`have` as the model tracks the last value).
fn op_c(op: Op, chosen: &[(Var, VarTraits)]) -> String {
    let read = |call: String| format!("memset(buf, 0, sizeof buf);\nrc = {call};");
    match op {
        Op::CreateSession => {
            "rc = MPI_T_pvar_session_create(&s[ns]);\nif (rc == MPI_SUCCESS) ns++;".into()
        }
        Op::FreeSession(k) => format!("rc = MPI_T_pvar_session_free(&s[{k}]);"),
        Op::Alloc { session, var } => {
            let (v, _) = &chosen[var];
            let obj = if v.ints[2] == sys::MPI_T_BIND_MPI_COMM {
                "&comm"
            } else {
                "NULL"
            };
            format!(
                "rc = MPI_T_pvar_handle_alloc(s[{session}], {}, {obj}, &h[nh], &count[nh]);\n\
                 if (rc == MPI_SUCCESS) {{ hs[nh] = {session}; have[nh] = 0; nh++; }}",
                c_index(Kind::Pvar, v.index)
            )
        }
        Op::Free(x) => format!("rc = MPI_T_pvar_handle_free(s[hs[{x}]], &h[{x}]);"),
        Op::Start(x) => format!("rc = MPI_T_pvar_start(s[hs[{x}]], h[{x}]);"),
        Op::Stop(x) => format!("rc = MPI_T_pvar_stop(s[hs[{x}]], h[{x}]);"),
        Op::Reset(x) => format!(
            "rc = MPI_T_pvar_reset(s[hs[{x}]], h[{x}]);\nif (rc == MPI_SUCCESS) have[{x}] = 0;"
        ),
        Op::Read(x) => read(format!("MPI_T_pvar_read(s[hs[{x}]], h[{x}], buf)")),
        Op::ReadReset(x) => read(format!("MPI_T_pvar_readreset(s[hs[{x}]], h[{x}], buf)")),
        Op::Write(x) => read(format!("MPI_T_pvar_write(s[hs[{x}]], h[{x}], buf)")),
        Op::ReadInOtherSession(x, k) => read(format!("MPI_T_pvar_read(s[{k}], h[{x}], buf)")),
        Op::StartAll(k) => format!("rc = MPI_T_pvar_start(s[{k}], MPI_T_PVAR_ALL_HANDLES);"),
        Op::StopAll(k) => format!("rc = MPI_T_pvar_stop(s[{k}], MPI_T_PVAR_ALL_HANDLES);"),
        Op::ResetAll(k) => format!(
            "rc = MPI_T_pvar_reset(s[{k}], MPI_T_PVAR_ALL_HANDLES);\n\
             for (int i = 0; i < nh; i++) if (hs[i] == {k}) have[i] = 0;"
        ),
    }
}

/// The C program of a session-model sequence: every operation made as the property made it
/// (reads record their first element, as the model does), the last one checked by `check`
/// (a C condition on `rc`, `v`, `prev` and `have`) when `expect` is not a crash.
fn model_repro(
    chosen: &[(Var, VarTraits)],
    handle_var: &[usize],
    ops: &[Op],
    expect: Expect,
    check: &str,
    observed: c_int,
) -> Repro {
    let mut r = here(1, expect).line(MODEL_C);
    for (i, op) in ops.iter().enumerate() {
        r = r.line(format!("say(\"step {i}: {op:?}\");"));
        r = r.line(op_c(*op, chosen));
        let read_handle = match *op {
            Op::Read(x) | Op::ReadReset(x) => Some(x),
            _ => None,
        };
        if let Some(x) = read_handle {
            let dt = handle_var
                .get(x)
                .and_then(|&var| chosen.get(var))
                .and_then(|(v, _)| v.datatype)
                .unwrap_or(Datatype::UnsignedLongLong);
            let last = i + 1 == ops.len();
            let track = match (last, op) {
                (true, _) => String::new(),
                (false, Op::ReadReset(_)) => format!("\nif (rc == MPI_SUCCESS) have[{x}] = 0;"),
                (false, _) => {
                    format!("\nif (rc == MPI_SUCCESS) {{ prev[{x}] = v; have[{x}] = 1; }}")
                }
            };
            r = r.line(format!(
                "if (rc == MPI_SUCCESS) {{\n    v = (double) *({} *) buf;\n    say(\"read %g\", v);\n}}{track}",
                c_type(dt)
            ));
        }
        if i + 1 < ops.len() {
            r = r.line("say(\"  returned %s\", rc_name(rc));");
        }
    }
    match expect {
        Expect::Crash => {
            r.line("say(\"returned %s: no crash\", rc_name(rc));\nreturn end(ABSENT);")
        }
        Expect::Exit(code) => {
            let cond = match code {
                CLASS => format!("rc == {}", super::repro::c_code(observed)),
                ACCEPTED => "rc == MPI_SUCCESS".into(),
                _ => check.to_string(),
            };
            let status = match code {
                CLASS => "CLASS",
                ACCEPTED => "ACCEPTED",
                _ => "ANSWER",
            };
            r.line(format!(
                "say(\"the last step returned %s (in the finding: {})\", rc_name(rc));\n\
                 return end(({cond}) ? {status} : ABSENT);",
                raw::rc_name(observed)
            ))
        }
    }
}

/// Whether `op` passes an invalid argument (a freed handle or session, a handle with another
/// session): what the implementation need not check (MPI-4.1 §16.3.10).
fn invalid_input(model: &PvarModel, op: &Op) -> bool {
    match *op {
        Op::CreateSession => false,
        Op::FreeSession(s) | Op::StartAll(s) | Op::StopAll(s) | Op::ResetAll(s) => {
            !model.session_live(s)
        }
        Op::Alloc { session, .. } => !model.session_live(session),
        Op::Free(h)
        | Op::Start(h)
        | Op::Stop(h)
        | Op::Reset(h)
        | Op::Read(h)
        | Op::Write(h)
        | Op::ReadReset(h) => !model.handle_live(h),
        Op::ReadInOtherSession(..) => true,
    }
}

/// The rule an operation's outcome is checked against.
fn op_rule(op: &Op, invalid: bool) -> &'static Rule {
    match op {
        Op::ReadInOtherSession(..) => &rules::SESSIONS,
        _ if invalid => &rules::ERROR_CODES,
        Op::Start(_) | Op::Stop(_) | Op::StartAll(_) | Op::StopAll(_) => &rules::START_STOP,
        Op::Reset(_) | Op::Write(_) | Op::ReadReset(_) | Op::ResetAll(_) => &rules::PVAR_WRITE,
        Op::Read(_) => &rules::PVAR_VALUES,
        Op::CreateSession | Op::FreeSession(_) | Op::Alloc { .. } | Op::Free(_) => &rules::SESSIONS,
    }
}

/// The C condition under which a value read breaks the model's `rule` (see
/// `mpit_core::pvar_model`), for handle `x`.
fn value_check(rule: &str, x: usize) -> String {
    if rule.starts_with("a stopped variable") {
        format!("rc == MPI_SUCCESS && (have[{x}] ? v != prev[{x}] : v != 0)")
    } else if rule.starts_with("decreased") {
        format!("rc == MPI_SUCCESS && have[{x}] && v < prev[{x}]")
    } else if rule.starts_with("increased") {
        format!("rc == MPI_SUCCESS && have[{x}] && v > prev[{x}]")
    } else {
        "rc == MPI_SUCCESS && v < 0".into()
    }
}

/// One round of the stateful test; `failing_kind` gets the kind of the operation of the last
/// failing sequence (the minimal one, once shrinking is done).
fn model_round(
    ctx: &Ctx,
    chosen: &[(Var, VarTraits)],
    traits: &[VarTraits],
    strategy: impl Strategy<Value = Vec<Op>>,
    failing_kind: &std::cell::RefCell<Option<String>>,
) -> Verdict {
    check_prop(ctx.cases, &rules::SESSIONS, strategy, |ops| {
        let mut model = PvarModel::new(traits.to_vec());
        let mut comm = Some(world());
        let mut sessions: Vec<sys::MPI_T_pvar_session> = Vec::new();
        let mut handles: Vec<RealHandle> = Vec::new();
        // The chosen variable of each handle, in allocation order (for reproducers).
        let mut handle_var: Vec<usize> = Vec::new();
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
            if let Op::ReadInOtherSession(h, s) = op
                && (!model.handle_live(h)
                    || !model.session_live(s)
                    || model.session_of(h) == Some(s))
            {
                continue;
            }
            executed.push(op);
            let invalid = invalid_input(&model, &op);
            let rule = op_rule(&op, invalid);
            let grade = if invalid {
                Grade::UncheckedInput
            } else {
                Grade::Violation
            };
            announce_with(
                None,
                &format!("{op:?} after {:?}", &executed[..step]),
                grade,
                if invalid { rule } else { &rules::RETURNS },
                Some(model_repro(
                    chosen,
                    &handle_var,
                    &executed,
                    Expect::Crash,
                    "",
                    0,
                )),
            );
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
                        handle_var.push(var);
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
                    | Op::ReadInOtherSession(h, _) => handle_var.get(h).copied(),
                    _ => None,
                };
                let var = var.map_or(String::new(), |i| {
                    format!(" (variable {} {})", chosen[i].0.index, chosen[i].0.name)
                });
                let handle = match op {
                    Op::Read(h) | Op::ReadReset(h) => h,
                    _ => 0,
                };
                let (kind, grade, expect, check) = match &v {
                    Violation::ShouldFail { got: None, .. } if invalid => (
                        "accepted",
                        Grade::UncheckedInput,
                        Expect::Exit(ACCEPTED),
                        String::new(),
                    ),
                    Violation::ShouldFail { got: None, .. } => (
                        "answer",
                        Grade::Violation,
                        Expect::Exit(ANSWER),
                        "rc == MPI_SUCCESS".to_string(),
                    ),
                    Violation::ShouldFail { got: Some(_), .. } => (
                        "error",
                        Grade::ErrorClass,
                        Expect::Exit(CLASS),
                        String::new(),
                    ),
                    Violation::ShouldSucceed { .. } => (
                        "error",
                        Grade::Violation,
                        Expect::Exit(ANSWER),
                        "rc != MPI_SUCCESS".to_string(),
                    ),
                    Violation::Value { rule, .. } => (
                        "answer",
                        Grade::Violation,
                        Expect::Exit(ANSWER),
                        value_check(rule, handle),
                    ),
                };
                let rule = if matches!(v, Violation::Value { .. }) {
                    &rules::PVAR_VALUES
                } else {
                    rule
                };
                failing(
                    kind,
                    grade,
                    rule,
                    Some(model_repro(
                        chosen,
                        &handle_var,
                        &executed,
                        expect,
                        &check,
                        rc,
                    )),
                );
                result = Err(TestCaseError::fail(format!(
                    "step {step}: {op:?}{var}: {v}; executed: {executed:?}"
                )));
                *failing_kind.borrow_mut() = Some(op_kind(&op));
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
    let verdict = check_prop(ctx.cases, &rules::CVAR_WRITE, strategy, |(t, _, how)| {
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
        // C: the same handle, write and read back, checked by `check` (or by the class seen).
        let c_write = |expect: Expect, check: &str, rc: c_int| {
            let ty = c_type(dt);
            here(1, expect)
                .line(format!(
                    "int idx = {}, count = 0;\nMPI_T_cvar_handle h;\n{ty} old, val = ({ty}) {neww}LL, back;\n\
                     must(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count), \"MPI_T_cvar_handle_alloc\");\n\
                     must(MPI_T_cvar_read(h, &old), \"MPI_T_cvar_read\");\nmemset(&back, 0, sizeof back);",
                    c_index(Kind::Cvar, v.index)
                ))
                .call(
                    "MPI_T_cvar_write(h, &val)",
                    rc,
                    Some(check),
                )
        };
        announce_with(
            Some(&k),
            &format!("MPI_T_cvar_write of cvar {} {} ({neww})", v.index, v.name),
            Grade::Violation,
            &rules::RETURNS,
            Some(c_write(Expect::Crash, "", 0)),
        );
        // SAFETY: live handle; one element.
        let rc = unsafe { sys::MPI_T_cvar_write(h, wbuf.as_mut_ptr().cast()) };
        let scope = v.ints[2];
        let fixed = scope == sys::MPI_T_SCOPE_CONSTANT || scope == sys::MPI_T_SCOPE_READONLY;
        let read_back = "(rc == MPI_SUCCESS && (MPI_T_cvar_read(h, &back), \
                         say(\"read back %lld\", (long long) back), back != val))";
        let result = if rc == sys::MPI_SUCCESS {
            let mut back = [0u64; 1];
            // SAFETY: as above.
            unsafe { sys::MPI_T_cvar_read(h, back.as_mut_ptr().cast()) };
            // Put the old value back.
            // SAFETY: as above.
            unsafe { sys::MPI_T_cvar_write(h, (&old as *const u64).cast_mut().cast()) };
            if fixed {
                failing(
                    "answer",
                    Grade::Violation,
                    &rules::CVAR_WRITE,
                    Some(c_write(Expect::Exit(ANSWER), "rc == MPI_SUCCESS", rc)),
                );
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
                failing(
                    "answer",
                    Grade::Violation,
                    &rules::CVAR_WRITE,
                    Some(c_write(Expect::Exit(ANSWER), read_back, rc)),
                );
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
            failing(
                "error",
                Grade::ErrorClass,
                &rules::CVAR_WRITE,
                Some(c_write(Expect::Exit(CLASS), "", rc)),
            );
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

/// The attributes the standard requires equal on every process, per variable (and event
/// type) name, with the C statements that compute the same text in a reproducer.
fn attributes(avoid: &Ctx) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for kind in [Kind::Cvar, Kind::Pvar] {
        for v in vars(kind) {
            let mut count = String::from("?");
            if kind == Kind::Cvar
                && v.ints[1] == sys::MPI_T_BIND_NO_OBJECT
                && !avoid.avoids(&key(Kind::Cvar, &v))
            {
                let (rc, mut h, c) = raw::cvar_alloc(v.index, std::ptr::null_mut());
                if rc == sys::MPI_SUCCESS {
                    count = c.to_string();
                    // SAFETY: a live handle, freed once.
                    unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
                }
            }
            let (name, text) = if kind == Kind::Cvar {
                (
                    format!("cvar {}", v.name),
                    format!(
                        "verbosity {} datatype {:?} bind {} scope {} count {count}",
                        v.ints[0], v.datatype, v.ints[1], v.ints[2]
                    ),
                )
            } else {
                (
                    format!("pvar {} class {}", v.name, v.ints[1]),
                    format!(
                        "verbosity {} datatype {:?} bind {} readonly {} continuous {} atomic {}",
                        v.ints[0], v.datatype, v.ints[2], v.ints[3], v.ints[4], v.ints[5]
                    ),
                )
            };
            let c = format!(
                "int nl = 0, dl = 0, idx = {};\n\
                 get_info({}, idx, NULL, &nl, NULL, &dl, mine, sizeof mine);\n\
                 if (strstr(mine, \" enum\")) *strstr(mine, \" enum\") = 0;",
                c_index(kind, v.index),
                if kind == Kind::Cvar { "CVAR" } else { "PVAR" }
            );
            out.insert(name, (text, c));
        }
    }
    #[cfg(mpit_events)]
    out.extend(super::event_props::attributes());
    out
}

/// Under `mpiexec -n 3`: every rank writes its attributes; rank 0 compares.
pub(super) fn ranks(ctx: &Ctx) -> Verdict {
    let world = mpi::topology::SimpleCommunicator::world();
    let (rank, size) = (world.rank(), world.size());
    let dir = std::env::temp_dir().join(format!(
        "mpit-conform-{}",
        std::env::var("MPIT_CONFORM_JOB").unwrap_or_default()
    ));
    let _ = std::fs::create_dir_all(&dir);
    let mine = attributes(ctx);
    let text: String = mine
        .iter()
        .map(|(k, (v, _))| format!("{k}\t{v}\n"))
        .collect();
    let _ = std::fs::write(dir.join(format!("rank-{rank}")), text);
    world.barrier();
    if rank != 0 {
        return Verdict::Skip(SILENT.into());
    }
    let mut problems = Vec::new();
    for r in 1..size {
        let other = std::fs::read_to_string(dir.join(format!("rank-{r}"))).unwrap_or_default();
        let theirs: BTreeMap<&str, &str> =
            other.lines().filter_map(|l| l.split_once('\t')).collect();
        for (name, (attrs, c)) in &mine {
            if let Some(t) = theirs.get(name.as_str())
                && t != attrs
            {
                problems.push(
                        Found::problem(
                            "answer",
                            Grade::Violation,
                            &rules::ACROSS_PROCESSES,
                            format!("{name}: rank 0 {attrs}; rank {r} {t}"),
                        )
                        .with_repro(Repro::new(3, Expect::Exit(ANSWER)).init(true).line(format!(
                            "char mine[512] = \"\", *all;\nint rank, size, r, bad = 0;\n\
                             MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n\
                             MPI_Comm_size(MPI_COMM_WORLD, &size);\n{c}\n\
                             all = calloc(size, sizeof mine);\n\
                             MPI_Gather(mine, sizeof mine, MPI_CHAR, all, sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);\n\
                             for (r = 1; rank == 0 && r < size; r++)\n    \
                             if (strcmp(mine, all + r * sizeof mine) != 0) {{\n        \
                             say(\"{}: rank 0 %s; rank %d %s\", mine, r, all + r * sizeof mine);\n        \
                             bad = 1;\n    }}\nreturn end(bad ? ANSWER : ABSENT);",
                            name.replace('"', "'")
                        ))),
                    );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    if size < 2 {
        return Verdict::Skip(format!("started with {size} process(es), not 3"));
    }
    from_problems(&problems).noting(format!(
        "{} variables and event types compared on {size} processes",
        mine.len()
    ))
}
