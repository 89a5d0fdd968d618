//! The event properties that need no control over the implementation (MPI-4.1 §16.3.8):
//! sources and event types as queried, and events the implementation raises for real
//! point-to-point traffic. They run against whatever the process has: the MPI's own events,
//! or the test provider's where it is preloaded.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mpi::collective::CommunicatorCollectives;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;
use proptest::prelude::*;

use mpit_core::{Datatype, ErrorClass};
use mpit_safe::RawConstant;
use mpit_sys as sys;
// rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

use super::props::SILENT;
use super::raw::{self, StrArg};
use super::repro::{ACCEPTED, ANSWER, CLASS, Expect, Repro, c_str};
use super::rules::{self, Grade, Rule};
use super::{Ctx, Found, Verdict, announce_with, check_prop, failing, from_problems};

/// `MPI_T_source_get_info(index)` with the given string arguments: `(rc, name length, desc
/// length, ordering)`.
fn source_info(index: c_int, name: StrArg, desc: StrArg) -> (c_int, c_int, c_int, c_int) {
    let (mut nl, mut dl) = (name.len, desc.len);
    let mut order: sys::MPI_T_source_order = 0;
    let (mut tps, mut max): (sys::MPI_Count, sys::MPI_Count) = (0, 0);
    // SAFETY: string buffers valid for their lengths (or null); valid out-pointers; a NULL
    // info pointer is ignored (MPI-4.1 §16.3.8.1).
    let rc = unsafe {
        sys::MPI_T_source_get_info(
            index,
            name.ptr,
            &mut nl,
            desc.ptr,
            &mut dl,
            &mut order,
            &mut tps,
            &mut max,
            ptr::null_mut(),
        )
    };
    let order = c_int::try_from(order).unwrap_or(-1);
    (rc, nl, dl, order)
}

/// The string of a source (`which` 0: name, 1: description), with a buffer of `len` bytes.
fn source_string(index: c_int, which: usize, len: c_int) -> (c_int, String) {
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0).max(1)];
    let mut other = [0u8; 1];
    let arg = StrArg::of(&mut buf, len);
    let none = StrArg::of(&mut other, 0);
    let (rc, ..) = if which == 0 {
        source_info(index, arg, none)
    } else {
        source_info(index, none, arg)
    };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    (rc, String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// C declarations for the source calls of a reproducer.
const SOURCE_C: &str = "int nl = 0, dl = 0, n = 0;\nMPI_T_source_order order;\n\
                        MPI_Count tps = 0, max = 0, ts = 0;\nchar name[1024], desc[4096];\n\
                        (void) name; (void) desc; (void) ts;\n\
                        must(MPI_T_source_get_num(&n), \"MPI_T_source_get_num\");\n\
                        say(\"%d sources\", n);";

/// A reproducer as the property ran: MPI_T and MPI initialised.
fn repro(ctx: &Ctx, expect: Expect) -> Repro {
    Repro::new(1, expect).init(ctx.after_init)
}

/// `MPI_T_source_get_num` or `MPI_T_event_get_num` (`what`): the count, or the verdict that
/// ends the property (none to check, or the call failed).
/// An `MPI_T_*_get_num` function: the C function in the native build, the library table's
/// wrapper in the ABI build.
#[cfg(not(mpit_abi))]
type GetNum = unsafe extern "C" fn(*mut c_int) -> c_int;
#[cfg(mpit_abi)]
type GetNum = unsafe fn(*mut c_int) -> c_int;

fn count(f: GetNum, what: &str, rule: &'static Rule) -> Result<c_int, Verdict> {
    let mut n = 0;
    // SAFETY: MPI_T is initialised; valid out-pointer.
    let rc = unsafe { f(&mut n) };
    if rc != sys::MPI_SUCCESS {
        return Err(Verdict::found(Found::new(
            "error",
            Grade::Violation,
            rule,
            format!("MPI_T_{what}_get_num"),
            raw::rc_name(rc),
        )));
    }
    if n == 0 {
        let label = if what == "event" { "event type" } else { what };
        return Err(Verdict::Skip(format!("0 {label}s after MPI_Init")));
    }
    Ok(n)
}

/// The property `events.sources` (and `events.sources.provider`).
pub(super) fn sources(ctx: &Ctx) -> Verdict {
    let n = match count(sys::MPI_T_source_get_num, "source", &rules::SOURCES) {
        Ok(n) => n,
        Err(v) => return v,
    };
    let mut problems = Vec::new();
    let mut names = Vec::new();
    for i in 0..n {
        // The convention's length query: NULL buffers.
        let (rc, nl, dl, ..) = source_info(i, StrArg::NONE, StrArg::NONE);
        if rc != sys::MPI_SUCCESS || nl < 1 || dl < 1 {
            problems.push(
                Found::problem(
                    "answer",
                    Grade::Violation,
                    &rules::SOURCES,
                    format!(
                        "MPI_T_source_get_info({i}) with NULL name and description buffers (a \
                         length query) gave {}, name length {nl}, description length {dl}",
                        raw::rc_name(rc)
                    ),
                )
                .with_repro(repro(ctx, Expect::Exit(ANSWER)).line(SOURCE_C).call(
                    &format!(
                        "MPI_T_source_get_info({i}, NULL, &nl, NULL, &dl, &order, &tps, &max, NULL)"
                    ),
                    rc,
                    Some("rc != MPI_SUCCESS || nl < 1 || dl < 1"),
                )),
            );
        }
        // The lengths through 1-byte buffers of length 0 (also a length query).
        let mut a = [0u8; 1];
        let mut b = [0u8; 1];
        let (rc, nl, dl, order) = source_info(i, StrArg::of(&mut a, 0), StrArg::of(&mut b, 0));
        if rc != sys::MPI_SUCCESS {
            problems.push(Found::problem(
                "error",
                Grade::Violation,
                &rules::SOURCES,
                format!("MPI_T_source_get_info({i}) failed: {}", raw::rc_name(rc)),
            ));
            continue;
        }
        let (rc1, name) = source_string(i, 0, nl.max(1));
        let (rc2, desc) = source_string(i, 1, dl.max(1));
        let again = (
            source_string(i, 0, nl.max(1)),
            source_string(i, 1, dl.max(1)),
        );
        let lit = |s: &str| c_str(s);
        if rc1 != sys::MPI_SUCCESS || rc2 != sys::MPI_SUCCESS || name.is_empty() {
            problems.push(Found::problem(
                "answer",
                Grade::Violation,
                &rules::SOURCES,
                format!(
                    "source {i}: name {name:?} ({}), description ({})",
                    raw::rc_name(rc1),
                    raw::rc_name(rc2)
                ),
            ));
        }
        if again != ((rc1, name.clone()), (rc2, desc.clone())) {
            problems.push(
                Found::problem(
                    "answer",
                    Grade::Violation,
                    &rules::SOURCES,
                    format!("source {i} answered differently the second time"),
                )
                .with_repro(repro(ctx, Expect::Exit(ANSWER)).line(SOURCE_C).line(format!(
                    "char again[1024];\nnl = sizeof name; dl = sizeof desc;\n\
                     MPI_T_source_get_info({i}, name, &nl, desc, &dl, &order, &tps, &max, NULL);\n\
                     nl = sizeof again; dl = sizeof desc;\n\
                     MPI_T_source_get_info({i}, again, &nl, desc, &dl, &order, &tps, &max, NULL);\n\
                     say(\"%s, then %s\", name, again);\nreturn end(strcmp(name, again) != 0 ? ANSWER : ABSENT);"
                ))),
            );
        }
        if order != sys::MPI_T_SOURCE_ORDERED && order != sys::MPI_T_SOURCE_UNORDERED {
            problems.push(
                Found::problem(
                    "answer",
                    Grade::Violation,
                    &rules::SOURCES,
                    format!("source {i} {name:?}: ordering {order}"),
                )
                .with_repro(repro(ctx, Expect::Exit(ANSWER)).line(SOURCE_C).call(
                    &format!(
                        "MPI_T_source_get_info({i}, name, (nl = sizeof name, &nl), desc, (dl = sizeof desc, &dl), &order, &tps, &max, NULL)"
                    ),
                    rc,
                    Some("order != MPI_T_SOURCE_ORDERED && order != MPI_T_SOURCE_UNORDERED"),
                )),
            );
        }
        let mut ts: sys::MPI_Count = 0;
        announce_with(
            None,
            &format!("MPI_T_source_get_timestamp({i})"),
            Grade::Violation,
            &rules::SOURCES,
            None,
        );
        // SAFETY: a valid source index and out-pointer.
        let rc = unsafe { sys::MPI_T_source_get_timestamp(i, &mut ts) };
        if rc != sys::MPI_SUCCESS && raw::class(rc) != Some(ErrorClass::NotSupported) {
            problems.push(
                Found::problem(
                    "error",
                    Grade::ErrorClass,
                    &rules::SOURCES,
                    format!(
                        "MPI_T_source_get_timestamp({i}) gave {}, not MPI_SUCCESS or \
                         MPI_T_ERR_NOT_SUPPORTED",
                        raw::rc_name(rc)
                    ),
                )
                .with_repro(repro(ctx, Expect::Exit(CLASS)).line(SOURCE_C).call(
                    &format!("MPI_T_source_get_timestamp({i}, &ts)"),
                    rc,
                    None,
                )),
            );
        }
        names.push(lit(&name));
    }
    // Out-of-range indices.
    for bad in [n, n + 1, -1] {
        let calls = [
            (
                format!("MPI_T_source_get_info({bad}) with num = {n}"),
                format!(
                    "MPI_T_source_get_info({bad}, name, (nl = sizeof name, &nl), desc, (dl = sizeof desc, &dl), &order, &tps, &max, NULL)"
                ),
            ),
            (
                format!("MPI_T_source_get_timestamp({bad}) with num = {n}"),
                format!("MPI_T_source_get_timestamp({bad}, &ts)"),
            ),
        ];
        for (j, (text, c)) in calls.iter().enumerate() {
            announce_with(
                None,
                text,
                Grade::UncheckedInput,
                &rules::SOURCES,
                Some(repro(ctx, Expect::Crash).line(SOURCE_C).call(c, 0, None)),
            );
            let mut name = [0u8; 64];
            let mut desc = [0u8; 64];
            let rc = if j == 0 {
                source_info(bad, StrArg::of(&mut name, 64), StrArg::of(&mut desc, 64)).0
            } else {
                let mut ts: sys::MPI_Count = 0;
                // SAFETY: an invalid index is what is checked; valid out-pointer.
                unsafe { sys::MPI_T_source_get_timestamp(bad, &mut ts) }
            };
            problems.extend(invalid_index(ctx, text, c, rc, SOURCE_C, &rules::SOURCES));
        }
    }
    from_problems(&problems).noting(format!("{n} sources: {}", names.join(", ")))
}

/// Grades what an out-of-range index got (crashes are announced by the caller): success is
/// unchecked input, an error other than `MPI_T_ERR_INVALID_INDEX` an error class.
fn invalid_index(
    ctx: &Ctx,
    text: &str,
    c: &str,
    rc: c_int,
    decls: &str,
    rule: &'static Rule,
) -> Option<Found> {
    if raw::class(rc) == Some(ErrorClass::InvalidIndex) {
        return None;
    }
    let what = format!(
        "{text} gave {}, not MPI_T_ERR_INVALID_INDEX",
        raw::rc_name(rc)
    );
    Some(if rc == sys::MPI_SUCCESS {
        Found::problem("accepted", Grade::UncheckedInput, rule, what).with_repro(
            repro(ctx, Expect::Exit(ACCEPTED))
                .line(decls)
                .call(c, rc, None),
        )
    } else {
        Found::problem("error", Grade::ErrorClass, rule, what).with_repro(
            repro(ctx, Expect::Exit(CLASS))
                .line(decls)
                .call(c, rc, None),
        )
    })
}

/// One event type as `MPI_T_event_get_info` describes it.
#[derive(Debug, Clone, PartialEq)]
struct EventType {
    name: String,
    desc: String,
    verbosity: c_int,
    datatypes: Vec<String>,
    displacements: Vec<sys::MPI_Aint>,
    enumtype: sys::MPI_T_enum,
    bind: c_int,
}

/// `MPI_T_event_get_info(index)`: the length query, then buffers of those lengths. `Err`: the
/// return code of the call that failed.
fn event_type(index: c_int) -> Result<EventType, c_int> {
    let (mut nl, mut dl, mut verbosity, mut num, mut bind) = (0, 0, 0, 0, 0);
    let mut en = sys::MPI_T_ENUM_NULL;
    let mut info = sys::MPI_INFO_NULL;
    // A 1-byte buffer of length 0 for the length query (MPICH refuses NULL buffers here).
    let mut n0 = [0u8; 1];
    let mut d0 = [0u8; 1];
    // SAFETY: buffers valid for their lengths; null arrays with num 0; valid out-pointers.
    let rc = unsafe {
        sys::MPI_T_event_get_info(
            index,
            n0.as_mut_ptr().cast(),
            &mut nl,
            &mut verbosity,
            ptr::null_mut(),
            ptr::null_mut(),
            &mut num,
            &mut en,
            &mut info,
            d0.as_mut_ptr().cast(),
            &mut dl,
            &mut bind,
        )
    };
    free_info(&mut info);
    if rc != sys::MPI_SUCCESS {
        return Err(rc);
    }
    let count = usize::try_from(num).unwrap_or(0).min(4096);
    let mut name = vec![0u8; usize::try_from(nl).unwrap_or(0).max(1)];
    let mut desc = vec![0u8; usize::try_from(dl).unwrap_or(0).max(1)];
    let mut dts = vec![sys::MPI_DATATYPE_NULL; count.max(1)];
    let mut displs: Vec<sys::MPI_Aint> = vec![-1; count.max(1)];
    let (mut nl2, mut dl2) = (nl.max(1), dl.max(1));
    let mut num2 = c_int::try_from(count).unwrap_or(0);
    // SAFETY: as above, with buffers and arrays of the lengths just returned.
    let rc = unsafe {
        sys::MPI_T_event_get_info(
            index,
            name.as_mut_ptr().cast(),
            &mut nl2,
            &mut verbosity,
            dts.as_mut_ptr(),
            displs.as_mut_ptr(),
            &mut num2,
            &mut en,
            &mut info,
            desc.as_mut_ptr().cast(),
            &mut dl2,
            &mut bind,
        )
    };
    free_info(&mut info);
    if rc != sys::MPI_SUCCESS {
        return Err(rc);
    }
    let text = |b: &[u8]| {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).into_owned()
    };
    dts.truncate(count);
    displs.truncate(count);
    Ok(EventType {
        name: text(&name),
        desc: text(&desc),
        verbosity,
        datatypes: dts
            .iter()
            .map(|&d| Datatype::from_raw(d).map_or_else(|_| "?".into(), |d| d.to_string()))
            .collect(),
        displacements: displs,
        enumtype: en,
        bind,
    })
}

fn free_info(info: &mut sys::MPI_Info) {
    if *info != sys::MPI_INFO_NULL {
        // SAFETY: an info object MPI returned to the caller, freed once.
        unsafe { sys::MPI_Info_free(info) };
    }
}

/// C declarations for the event-type calls of a reproducer.
const EVENT_C: &str = "int nl = 0, dl = 0, n = 0, verb = 0, num = 64, bind = 0, idx = -1;\n\
                       MPI_Datatype dts[64];\nMPI_Aint displs[64];\nMPI_T_enum en = MPI_T_ENUM_NULL;\n\
                       MPI_Info info = MPI_INFO_NULL;\nchar name[1024], desc[4096];\n\
                       (void) idx; (void) displs; (void) name; (void) desc;\n\
                       must(MPI_T_event_get_num(&n), \"MPI_T_event_get_num\");\nsay(\"%d event types\", n);";

/// C: `idx` of the event type called `name`, and its info (every argument given).
fn c_event(name: &str) -> String {
    format!(
        "must(MPI_T_event_get_index({}, &idx), \"MPI_T_event_get_index\");\n\
         nl = sizeof name; dl = sizeof desc;\n\
         must(MPI_T_event_get_info(idx, name, &nl, &verb, dts, displs, &num, &en, &info, desc, &dl, &bind), \"MPI_T_event_get_info\");",
        c_str(name)
    )
}

/// The property `events.index` (and `events.index.provider`).
pub(super) fn index(ctx: &Ctx) -> Verdict {
    let n = match count(sys::MPI_T_event_get_num, "event", &rules::EVENT_INFO) {
        Ok(n) => n,
        Err(v) => return v,
    };
    let mut problems = Vec::new();
    let mut types = Vec::new();
    let mut seen: BTreeMap<String, c_int> = BTreeMap::new();
    for i in 0..n {
        let first = event_type(i);
        let second = event_type(i);
        let t = match first {
            Ok(t) => t,
            Err(rc) => {
                problems.push(
                    Found::problem(
                        "error",
                        Grade::Violation,
                        &rules::EVENT_INFO,
                        format!("MPI_T_event_get_info({i}) failed: {}", raw::rc_name(rc)),
                    )
                    .with_repro(repro(ctx, Expect::Exit(ANSWER)).line(EVENT_C).call(
                        &format!(
                            "MPI_T_event_get_info({i}, name, (nl = sizeof name, &nl), &verb, dts, displs, &num, &en, &info, desc, (dl = sizeof desc, &dl), &bind)"
                        ),
                        rc,
                        Some("rc != MPI_SUCCESS"),
                    )),
                );
                continue;
            }
        };
        let answer = |text: String, rule: &'static Rule, check: &str| {
            Found::problem("answer", Grade::Violation, rule, text).with_repro(
                repro(ctx, Expect::Exit(ANSWER))
                    .line(EVENT_C)
                    .line(c_event(&t.name))
                    .line(format!(
                        "int bad = 0, k;\n(void) k;\n{check}\nreturn end(bad ? ANSWER : ABSENT);"
                    )),
            )
        };
        if second.as_ref() != Ok(&t) {
            problems.push(answer(
                format!(
                    "event type {i} {:?} answered differently the second time",
                    t.name
                ),
                &rules::EVENT_INFO,
                "MPI_Datatype dts2[64];\nMPI_Aint displs2[64];\nchar name2[1024];\n\
                 int num2 = 64, verb2, bind2, nl2 = sizeof name2, dl2 = sizeof desc;\n\
                 MPI_T_enum en2;\nMPI_T_event_get_info(idx, name2, &nl2, &verb2, dts2, displs2, \
                 &num2, &en2, &info, desc, &dl2, &bind2);\n\
                 bad = strcmp(name, name2) != 0 || verb != verb2 || num != num2 || bind != bind2;",
            ));
        }
        if t.name.is_empty() {
            problems.push(Found::problem(
                "answer",
                Grade::Violation,
                &rules::NAMES,
                format!("event type {i}: empty name"),
            ));
        } else if let Some(j) = seen.insert(t.name.clone(), i) {
            problems.push(Found::problem(
                "answer",
                Grade::Violation,
                &rules::NAMES,
                format!("event types {j} and {i} are both called {:?}", t.name),
            ));
        }
        // Displacements ascend from zero.
        let ascending = t.displacements.windows(2).all(|w| w[0] < w[1]);
        if t.displacements.first().is_some_and(|&d| d != 0) || !ascending {
            problems.push(answer(
                format!(
                    "event type {i} {:?}: displacements {:?} do not ascend from 0",
                    t.name, t.displacements
                ),
                &rules::EVENT_INFO,
                "for (k = 0; k < num && k < 64; k++) {\n    say(\"displacement %d: %ld\", k, (long) displs[k]);\n    \
                 if ((k == 0 && displs[0] != 0) || (k > 0 && displs[k] <= displs[k - 1])) bad = 1;\n}",
            ));
        }
        // The name looks the index up.
        let mut j = -1;
        let cname = format!("{}\0", t.name);
        // SAFETY: NUL-terminated name; valid out-pointer.
        let rc = unsafe { sys::MPI_T_event_get_index(cname.as_ptr().cast(), &mut j) };
        if rc != sys::MPI_SUCCESS || j != i {
            problems.push(
                Found::problem(
                    "answer",
                    Grade::Violation,
                    &rules::GET_INDEX,
                    format!(
                        "MPI_T_event_get_index({:?}) gave {} and {j}, not {i}",
                        t.name,
                        raw::rc_name(rc)
                    ),
                )
                .with_repro(repro(ctx, Expect::Exit(ANSWER)).line(EVENT_C).call(
                    &format!("MPI_T_event_get_index({}, &idx)", c_str(&t.name)),
                    rc,
                    Some(&format!("rc != MPI_SUCCESS || idx != {i}")),
                )),
            );
        }
        // An enumtype other than MPI_T_ENUM_NULL is an enumeration MPI can describe.
        if t.enumtype != sys::MPI_T_ENUM_NULL {
            let key = format!("event-enum:{}", t.name);
            if !ctx.avoids(&key) {
                let c = "MPI_T_enum_get_info(en, &num, NULL, &nl)";
                let enum_repro = |expect: Expect, rc: c_int| {
                    repro(ctx, expect)
                        .line(EVENT_C)
                        .line(c_event(&t.name))
                        .line(
                            "say(\"enumtype %s MPI_T_ENUM_NULL\", en == MPI_T_ENUM_NULL ? \"is\" : \"is not\");\n\
                             if (en == MPI_T_ENUM_NULL) return end(ABSENT);\nnl = 0;",
                        )
                        .call(c, rc, Some("rc != MPI_SUCCESS"))
                };
                announce_with(
                    Some(&key),
                    &format!(
                        "MPI_T_enum_get_info of the enumtype MPI_T_event_get_info returned for \
                         event type {i} {:?}",
                        t.name
                    ),
                    Grade::Violation,
                    &rules::EVENT_INFO,
                    Some(enum_repro(Expect::Crash, 0)),
                );
                let (rc, _, _) = raw::enum_info(t.enumtype, StrArg::NONE);
                if rc != sys::MPI_SUCCESS {
                    problems.push(
                        Found::problem(
                            "answer",
                            Grade::Violation,
                            &rules::EVENT_INFO,
                            format!(
                                "event type {i} {:?}: enumtype is no enumeration \
                                 (MPI_T_enum_get_info: {})",
                                t.name,
                                raw::rc_name(rc)
                            ),
                        )
                        .with_repro(enum_repro(Expect::Exit(ANSWER), rc)),
                    );
                }
            }
        }
        types.push(t.name);
    }
    // Out-of-range indices and names no event type has.
    let names = types.clone();
    let verdict = check_prop(
        ctx.cases,
        &rules::EVENT_INFO,
        (0i64..1000, any::<bool>(), 0..names.len().max(1)),
        |(off, neg, t)| {
            let bad = if neg { -1 - off } else { i64::from(n) + off };
            let bad = c_int::try_from(bad).unwrap_or(-1);
            let call = format!(
                "MPI_T_event_get_info({bad}, name, (nl = sizeof name, &nl), &verb, dts, displs, &num, &en, &info, desc, (dl = sizeof desc, &dl), &bind)"
            );
            announce_with(
                None,
                &format!("MPI_T_event_get_info({bad}) with num = {n}"),
                Grade::UncheckedInput,
                &rules::EVENT_INFO,
                Some(repro(ctx, Expect::Crash).line(EVENT_C).call(&call, 0, None)),
            );
            let rc = match event_type(bad) {
                Ok(_) => sys::MPI_SUCCESS,
                Err(rc) => rc,
            };
            if let Some(p) = invalid_index(
                ctx,
                &format!("MPI_T_event_get_info({bad})"),
                &call,
                rc,
                EVENT_C,
                &rules::EVENT_INFO,
            ) {
                failing(p.kind, p.grade, p.rule, p.repro);
                return Err(TestCaseError::fail(p.counterexample));
            }
            // A name no event type has.
            let unknown = format!("{}_mpit_rs_x", names.get(t).map_or("", String::as_str));
            let cname = format!("{unknown}\0");
            let mut j = -1;
            // SAFETY: NUL-terminated name; valid out-pointer.
            let rc = unsafe { sys::MPI_T_event_get_index(cname.as_ptr().cast(), &mut j) };
            if raw::class(rc) != Some(ErrorClass::InvalidName) {
                let c = format!("MPI_T_event_get_index({}, &idx)", c_str(&unknown));
                let (kind, grade, expect) = if rc == sys::MPI_SUCCESS {
                    ("answer", Grade::Violation, Expect::Exit(ANSWER))
                } else {
                    ("error", Grade::ErrorClass, Expect::Exit(CLASS))
                };
                failing(
                    kind,
                    grade,
                    &rules::GET_INDEX,
                    Some(
                        repro(ctx, expect)
                            .line(EVENT_C)
                            .call(&c, rc, Some("rc == MPI_SUCCESS")),
                    ),
                );
                return Err(TestCaseError::fail(format!(
                    "MPI_T_event_get_index({unknown:?}) gave {}, not MPI_T_ERR_INVALID_NAME",
                    raw::rc_name(rc)
                )));
            }
            Ok(())
        },
    );
    Verdict::all(vec![from_problems(&problems), verdict])
        .noting(format!("{n} event types: {}", types.join(", ")))
}

/// The attributes of every event type that must be equal on every process, keyed
/// `event NAME`, with the C statements that compute the same text into `mine`.
pub(super) fn attributes() -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let mut n = 0;
    // SAFETY: valid out-pointer.
    if unsafe { sys::MPI_T_event_get_num(&mut n) } != sys::MPI_SUCCESS {
        return out;
    }
    for i in 0..n {
        let Ok(t) = event_type(i) else { continue };
        let text = format!(
            "verbosity {} datatypes {} bind {}",
            t.verbosity,
            t.datatypes.join(","),
            t.bind
        );
        let c = format!(
            "{EVENT_C}\n{}\nint k, used;\nused = snprintf(mine, sizeof mine, \"verbosity %d datatypes \", verb);\n\
             for (k = 0; k < num && k < 64; k++) {{\n    char dn[MPI_MAX_OBJECT_NAME]; int l;\n    \
             MPI_Type_get_name(dts[k], dn, &l);\n    \
             used += snprintf(mine + used, sizeof mine - used, \"%s%s\", k ? \",\" : \"\", dn);\n}}\n\
             snprintf(mine + used, sizeof mine - used, \" bind %d\", bind);",
            c_event(&t.name)
        );
        out.insert(format!("event {}", t.name), (text, c));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// events.delivery

/// The maximum number of events recorded (more are counted, not recorded).
const MAX_RECORDS: usize = 4096;

/// One callback invocation, as the callback saw it.
#[derive(Debug, Clone, Copy)]
struct Record {
    /// The registration (index into `Delivery::regs`) whose callback ran.
    reg: usize,
    /// The level that callback was registered at.
    registered: c_int,
    /// The `cb_safety` MPI passed.
    passed: c_int,
    /// Whether MPI passed the registration handle the callback was registered on.
    same_registration: bool,
    source_rc: c_int,
    source: c_int,
    timestamp_rc: c_int,
    timestamp: i64,
    /// The first failing `MPI_T_event_read`/`MPI_T_event_copy` code (`MPI_SUCCESS`: none failed
    /// or the data was not read).
    data_rc: c_int,
    /// Whether the free callback of this registration had run before this event.
    after_free: bool,
}

/// What one callback registration needs, passed as its `user_data`.
struct Slot {
    delivery: *const Delivery,
    reg: usize,
    level: c_int,
}

/// One event type registered for.
struct Reg {
    event: c_int,
    name: String,
    elements: usize,
    handle: sys::MPI_T_event_registration,
    /// The announcement before reading this type's data (once).
    read_announce: String,
    read_done: AtomicBool,
    read_data: bool,
    freed: AtomicUsize,
}

/// The state the callbacks share with the property.
struct Delivery {
    regs: Vec<Reg>,
    records: Mutex<Vec<Record>>,
    events: AtomicUsize,
    dropped: Mutex<Vec<(i64, c_int, c_int)>>,
    sources: c_int,
}

unsafe extern "C" fn on_event(
    instance: sys::MPI_T_event_instance,
    registration: sys::MPI_T_event_registration,
    cb_safety: sys::MPI_T_cb_safety,
    user_data: *mut c_void,
) {
    // SAFETY: `user_data` is the `Slot` registered with this callback; it and the `Delivery`
    // it points to outlive every registration (freed only after the free callbacks ran).
    let (slot, d) = unsafe {
        let slot = &*(user_data as *const Slot);
        (slot, &*slot.delivery)
    };
    d.events.fetch_add(1, Ordering::Relaxed);
    let Some(reg) = d.regs.get(slot.reg) else {
        return;
    };
    let (mut source, mut ts) = (-1, 0 as sys::MPI_Count);
    // SAFETY: the instance MPI passed to this callback, used inside it; valid out-pointers.
    let source_rc = unsafe { sys::MPI_T_event_get_source(instance, &mut source) };
    // SAFETY: as above.
    let timestamp_rc = unsafe { sys::MPI_T_event_get_timestamp(instance, &mut ts) };
    let mut data_rc = sys::MPI_SUCCESS;
    if reg.read_data && !reg.read_done.swap(true, Ordering::Relaxed) {
        // Announced, so that a crash in reading names this event type (and is avoided on
        // resume); the text was formatted at registration.
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(reg.read_announce.as_bytes());
            let _ = out.flush();
        }
        let mut buf = [0u64; 512];
        for k in 0..reg.elements.min(64) {
            // SAFETY: the instance of this callback; the buffer holds any one element.
            let rc =
                unsafe { sys::MPI_T_event_read(instance, k as c_int, buf.as_mut_ptr().cast()) };
            if rc != sys::MPI_SUCCESS && data_rc == sys::MPI_SUCCESS {
                data_rc = rc;
            }
        }
        // SAFETY: as above; 4 KiB holds the whole event of every type seen here.
        let rc = unsafe { sys::MPI_T_event_copy(instance, buf.as_mut_ptr().cast()) };
        if rc != sys::MPI_SUCCESS && data_rc == sys::MPI_SUCCESS {
            data_rc = rc;
        }
    }
    let r = Record {
        reg: slot.reg,
        registered: slot.level,
        passed: c_int::try_from(cb_safety).unwrap_or(-1),
        same_registration: registration == reg.handle,
        source_rc,
        source,
        timestamp_rc,
        timestamp: ts,
        data_rc,
        after_free: reg.freed.load(Ordering::Acquire) > 0,
    };
    if let Ok(mut g) = d.records.lock()
        && g.len() < MAX_RECORDS
    {
        g.push(r);
    }
}

unsafe extern "C" fn on_dropped(
    count: sys::MPI_Count,
    _registration: sys::MPI_T_event_registration,
    source: c_int,
    cb_safety: sys::MPI_T_cb_safety,
    user_data: *mut c_void,
) {
    if user_data.is_null() {
        return;
    }
    // SAFETY: as in `on_event`: the dropped handler's user data is the user data of one of
    // the registration's callbacks (a `Slot`).
    let d = unsafe { &*(*(user_data as *const Slot)).delivery };
    if let Ok(mut g) = d.dropped.lock() {
        g.push((count, source, c_int::try_from(cb_safety).unwrap_or(-1)));
    }
}

unsafe extern "C" fn on_free(
    _registration: sys::MPI_T_event_registration,
    _cb_safety: sys::MPI_T_cb_safety,
    user_data: *mut c_void,
) {
    // SAFETY: the user data given to MPI_T_event_handle_free: the registration's `Reg`, alive
    // until the property ends.
    let reg = unsafe { &*(user_data as *const Reg) };
    reg.freed.fetch_add(1, Ordering::AcqRel);
}

/// Point-to-point traffic that fills rank 0's unexpected-message queue: rank 1 sends
/// `MESSAGES` messages with distinct tags before rank 0 posts the receives (ordered by
/// barriers), which rank 0 then posts in the reverse order.
const MESSAGES: i32 = 8;

fn traffic(world: &mpi::topology::SimpleCommunicator, round: i32) {
    let rank = world.rank();
    world.barrier();
    if rank == 1 {
        for t in 0..MESSAGES {
            world.process_at_rank(0).send_with_tag(&t, 100 * round + t);
        }
    }
    world.barrier();
    if rank == 0 {
        for t in (0..MESSAGES).rev() {
            let _ = world
                .process_at_rank(1)
                .receive_with_tag::<i32>(100 * round + t);
        }
    }
    world.barrier();
}

/// The C program of `events.delivery` for one event type: the same registrations, traffic and
/// checks; a crash in reading the data shows as itself, any other departure as [`ANSWER`].
fn delivery_repro(name: &str, elements: usize, expect: Expect) -> Repro {
    let globals = format!(
        r#"static MPI_T_event_registration reg;
static int levels[4], bad = 0, events = 0, freed = 0, nsources = 0, elements = {elements};
static MPI_Count last[64];
static int have_last[64];
static MPI_T_source_order orders[64];

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration r, MPI_T_cb_safety s,
                     void *data) {{
    int level = *(int *) data, source = -1, rc, k;
    MPI_Count ts = 0;
    unsigned long long buf[512];
    events++;
    if (r != reg) {{ say("event %d: another registration handle", events); bad = 1; }}
    if ((int) s != level) {{
        say("event %d: cb_safety %d passed to the callback registered at %d", events, (int) s, level);
        bad = 1;
    }}
    rc = MPI_T_event_get_source(ev, &source);
    if (rc != MPI_SUCCESS || source < 0 || source >= nsources) {{
        say("event %d: source %d (%s)", events, source, rc_name(rc));
        bad = 1;
    }}
    rc = MPI_T_event_get_timestamp(ev, &ts);
    if (rc != MPI_SUCCESS) {{ say("event %d: timestamp %s", events, rc_name(rc)); bad = 1; }}
    if (rc == MPI_SUCCESS && source >= 0 && source < 64 && orders[source] == MPI_T_SOURCE_ORDERED) {{
        if (have_last[source] && ts < last[source]) {{
            say("event %d: timestamp %lld before %lld of the same ordered source", events,
                (long long) ts, (long long) last[source]);
            bad = 1;
        }}
        last[source] = ts;
        have_last[source] = 1;
    }}
    if (freed) {{ say("event %d after the free callback", events); bad = 1; }}
    if (events == 1) {{
        say("reading the %d elements of the first event", elements);
        for (k = 0; k < elements && k < 64; k++) {{
            rc = MPI_T_event_read(ev, k, buf);
            say("MPI_T_event_read(element %d): %s", k, rc_name(rc));
            if (rc != MPI_SUCCESS) bad = 1;
        }}
        rc = MPI_T_event_copy(ev, buf);
        say("MPI_T_event_copy: %s", rc_name(rc));
        if (rc != MPI_SUCCESS) bad = 1;
    }}
}}

static void on_free(MPI_T_event_registration r, MPI_T_cb_safety s, void *data) {{
    (void) r; (void) s; (void) data;
    freed++;
}}

static void traffic(int rank, int round) {{
    int t, v;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        for (t = 0; t < {MESSAGES}; t++) MPI_Send(&t, 1, MPI_INT, 0, 100 * round + t, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (t = {MESSAGES} - 1; t >= 0; t--)
            MPI_Recv(&v, 1, MPI_INT, 1, 100 * round + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
}}"#
    );
    Repro::new(2, expect).global(globals).init(true).line(format!(
        r#"int rank, idx = -1, l, s, seen;
MPI_Comm_rank(MPI_COMM_WORLD, &rank);
must(MPI_T_source_get_num(&nsources), "MPI_T_source_get_num");
for (s = 0; s < nsources && s < 64; s++) {{
    char sn[1], sd[1];
    int snl = 0, sdl = 0;
    MPI_Count tps, max;
    MPI_T_source_get_info(s, sn, &snl, sd, &sdl, &orders[s], &tps, &max, NULL);
}}
must(MPI_T_event_get_index({name}, &idx), "MPI_T_event_get_index");
if (rank == 0) {{
    must(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg), "MPI_T_event_handle_alloc");
    for (l = 3; l >= 0; l--) {{
        levels[l] = l;
        must(MPI_T_event_register_callback(reg, (MPI_T_cb_safety) l, MPI_INFO_NULL, &levels[l], on_event),
             "MPI_T_event_register_callback");
    }}
}}
traffic(rank, 1);
if (rank == 0) {{
    say("%d events of type %s", events, {name});
    must(MPI_T_event_handle_free(reg, NULL, on_free), "MPI_T_event_handle_free");
}}
seen = events;
traffic(rank, 2);
if (rank == 0) {{
    if (freed != 1) {{ say("the free callback ran %d times", freed); bad = 1; }}
    if (events != seen) {{ say("%d events after the free", events - seen); bad = 1; }}
}}
return end(rank == 0 && bad ? ANSWER : ABSENT);"#,
        name = c_str(name)
    ))
}

/// The property `events.delivery`: events raised by real traffic between two processes.
pub(super) fn delivery(ctx: &Ctx) -> Verdict {
    let world = mpi::topology::SimpleCommunicator::world();
    let (rank, size) = (world.rank(), world.size());
    let skip = |why: String| Verdict::Skip(if rank == 0 { why } else { SILENT.into() });
    if size < 2 {
        return skip(format!("started with {size} process(es), not 2"));
    }
    let (mut n, mut nsources) = (0, 0);
    // SAFETY: valid out-pointers.
    unsafe {
        sys::MPI_T_event_get_num(&mut n);
        sys::MPI_T_source_get_num(&mut nsources);
    }
    if n == 0 {
        return skip("0 event types after MPI_Init".into());
    }
    // The ordering of every source (a NULL-buffer query is refused by some implementations:
    // 1-byte buffers of length 0).
    let orders: Vec<c_int> = (0..nsources)
        .map(|s| {
            let mut a = [0u8; 1];
            let mut b = [0u8; 1];
            source_info(s, StrArg::of(&mut a, 0), StrArg::of(&mut b, 0)).3
        })
        .collect();
    let mut regs = Vec::new();
    if rank == 0 {
        for i in 0..n {
            let Ok(t) = event_type(i) else { continue };
            if t.bind != sys::MPI_T_BIND_NO_OBJECT {
                continue;
            }
            let read_key = format!("event-read:{}", t.name);
            let repro = delivery_repro(&t.name, t.datatypes.len(), Expect::Crash);
            let mut announce = Vec::new();
            {
                use std::io::Write;
                let mut w = std::io::Cursor::new(&mut announce);
                let _ = writeln!(
                    w,
                    "{}{read_key}\tMPI_T_event_read/MPI_T_event_copy of an event of type {} \
                     delivered to its callback\n{}{}\t{}\t{}",
                    super::CALL,
                    t.name,
                    super::CRASH,
                    Grade::Violation,
                    rules::EVENT_DATA.id,
                    super::escape(&repro.encode())
                );
            }
            regs.push(Reg {
                event: i,
                elements: t.datatypes.len(),
                handle: ptr::null_mut(),
                read_data: !ctx.avoids(&read_key),
                read_announce: String::from_utf8_lossy(&announce).into_owned(),
                read_done: AtomicBool::new(false),
                freed: AtomicUsize::new(0),
                name: t.name,
            });
        }
    }
    // The registrations first (no callback yet), so that the shared state is complete before
    // MPI can call back.
    let mut problems = Vec::new();
    for reg in &mut regs {
        let mut h: sys::MPI_T_event_registration = ptr::null_mut();
        // SAFETY: a valid event type index of an unbound type (the object is ignored).
        let rc = unsafe {
            sys::MPI_T_event_handle_alloc(reg.event, ptr::null_mut(), sys::MPI_INFO_NULL, &mut h)
        };
        if rc == sys::MPI_SUCCESS {
            reg.handle = h;
        } else {
            problems.push(Found::problem(
                "error",
                Grade::Violation,
                &rules::CALLBACKS,
                format!(
                    "MPI_T_event_handle_alloc({} {}): {}",
                    reg.event,
                    reg.name,
                    raw::rc_name(rc)
                ),
            ));
        }
    }
    // Boxed so that the callbacks' pointers stay valid; leaked at the end only if a free
    // callback never ran (MPI may still call back then).
    let delivery = Box::new(Delivery {
        regs,
        records: Mutex::new(Vec::with_capacity(MAX_RECORDS)),
        events: AtomicUsize::new(0),
        dropped: Mutex::new(Vec::new()),
        sources: nsources,
    });
    let d_ptr: *const Delivery = &*delivery;
    let mut slots: Vec<Box<Slot>> = Vec::new();
    for (r, reg) in delivery.regs.iter().enumerate() {
        if reg.handle.is_null() {
            continue;
        }
        // Highest level first (MPI-4.1 §16.3.8.4, advice to users).
        for level in (0..4).rev() {
            let slot = Box::new(Slot {
                delivery: d_ptr,
                reg: r,
                level,
            });
            let data = (&*slot as *const Slot).cast_mut().cast();
            slots.push(slot);
            // SAFETY: a live registration; the slot outlives it (see `delivery`).
            let rc = unsafe {
                sys::MPI_T_event_register_callback(
                    reg.handle,
                    level as sys::MPI_T_cb_safety,
                    sys::MPI_INFO_NULL,
                    data,
                    Some(on_event),
                )
            };
            if rc != sys::MPI_SUCCESS {
                problems.push(Found::problem(
                    "error",
                    Grade::Violation,
                    &rules::CALLBACKS,
                    format!(
                        "MPI_T_event_register_callback({}, level {level}): {}",
                        reg.name,
                        raw::rc_name(rc)
                    ),
                ));
            }
        }
        // SAFETY: a live registration.
        unsafe { sys::MPI_T_event_set_dropped_handler(reg.handle, Some(on_dropped)) };
    }
    traffic(&world, 1);
    let raised = delivery.events.load(Ordering::Relaxed);
    // Free every registration; the free callbacks may come later.
    for reg in delivery.regs.iter().filter(|r| !r.handle.is_null()) {
        {
            let data = (reg as *const Reg).cast_mut().cast();
            // SAFETY: a live registration, freed once; `reg` outlives the free callback.
            let rc = unsafe { sys::MPI_T_event_handle_free(reg.handle, data, Some(on_free)) };
            if rc != sys::MPI_SUCCESS {
                problems.push(Found::problem(
                    "error",
                    Grade::Violation,
                    &rules::FREE_CALLBACK,
                    format!(
                        "MPI_T_event_handle_free({}): {}",
                        reg.name,
                        raw::rc_name(rc)
                    ),
                ));
            }
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while rank == 0
        && std::time::Instant::now() < deadline
        && delivery
            .regs
            .iter()
            .any(|r| !r.handle.is_null() && r.freed.load(Ordering::Acquire) == 0)
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    traffic(&world, 2);
    if rank != 0 {
        return Verdict::Skip(SILENT.into());
    }
    let records = delivery
        .records
        .lock()
        .map(|g| g.clone())
        .unwrap_or_default();
    let by_name = |r: usize| delivery.regs.get(r).map_or("?", |x| x.name.as_str());
    let answer = |rule: &'static Rule, text: String, reg: usize| {
        let r = delivery.regs.get(reg);
        let mut p = Found::problem("answer", Grade::Violation, rule, text);
        if let Some(r) = r {
            p = p.with_repro(delivery_repro(&r.name, r.elements, Expect::Exit(ANSWER)));
        }
        p
    };
    let mut last: BTreeMap<c_int, i64> = BTreeMap::new();
    let mut per_type: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, r) in records.iter().enumerate() {
        *per_type.entry(by_name(r.reg)).or_insert(0) += 1;
        if r.passed != r.registered {
            problems.push(answer(
                &rules::CALLBACKS,
                format!(
                    "event {k} ({}): MPI passed cb_safety {} to the callback registered at level \
                     {} (callbacks at all four levels were registered)",
                    by_name(r.reg),
                    r.passed,
                    r.registered
                ),
                r.reg,
            ));
        }
        if !r.same_registration {
            problems.push(answer(
                &rules::CALLBACKS,
                format!(
                    "event {k} ({}): another registration handle passed",
                    by_name(r.reg)
                ),
                r.reg,
            ));
        }
        if r.source_rc != sys::MPI_SUCCESS || r.source < 0 || r.source >= delivery.sources {
            problems.push(answer(
                &rules::EVENT_DATA,
                format!(
                    "event {k} ({}): MPI_T_event_get_source gave {} and source {} ({} sources)",
                    by_name(r.reg),
                    raw::rc_name(r.source_rc),
                    r.source,
                    delivery.sources
                ),
                r.reg,
            ));
        }
        if r.timestamp_rc != sys::MPI_SUCCESS {
            problems.push(answer(
                &rules::EVENT_DATA,
                format!(
                    "event {k} ({}): MPI_T_event_get_timestamp gave {}",
                    by_name(r.reg),
                    raw::rc_name(r.timestamp_rc)
                ),
                r.reg,
            ));
        } else if usize::try_from(r.source)
            .ok()
            .and_then(|s| orders.get(s))
            .is_some_and(|&o| o == sys::MPI_T_SOURCE_ORDERED)
        {
            if let Some(&prev) = last.get(&r.source)
                && r.timestamp < prev
            {
                problems.push(answer(
                    &rules::ORDERED,
                    format!(
                        "event {k} ({}): timestamp {} before {prev} of the same ordered \
                             source {}",
                        by_name(r.reg),
                        r.timestamp,
                        r.source
                    ),
                    r.reg,
                ));
            }
            last.insert(r.source, r.timestamp);
        }
        if r.data_rc != sys::MPI_SUCCESS {
            problems.push(
                Found::problem(
                    "error",
                    Grade::Violation,
                    &rules::EVENT_DATA,
                    format!(
                        "event {k} ({}): reading its data gave {}",
                        by_name(r.reg),
                        raw::rc_name(r.data_rc)
                    ),
                )
                .with_repro(delivery_repro(
                    by_name(r.reg),
                    delivery.regs.get(r.reg).map_or(0, |x| x.elements),
                    Expect::Exit(ANSWER),
                )),
            );
        }
        if r.after_free {
            problems.push(answer(
                &rules::FREE_CALLBACK,
                format!(
                    "event {k} ({}) delivered after its free callback ran",
                    by_name(r.reg)
                ),
                r.reg,
            ));
        }
    }
    for (k, reg) in delivery.regs.iter().enumerate() {
        let freed = reg.freed.load(Ordering::Acquire);
        if !reg.handle.is_null() && freed != 1 {
            problems.push(answer(
                &rules::FREE_CALLBACK,
                format!(
                    "the free callback of the registration for {} ran {freed} times",
                    reg.name
                ),
                k,
            ));
        }
    }
    let dropped = delivery
        .dropped
        .lock()
        .map(|g| g.clone())
        .unwrap_or_default();
    for (count, source, _) in &dropped {
        if *source < 0 || *source >= delivery.sources || *count < 0 {
            problems.push(Found::problem(
                "answer",
                Grade::Violation,
                &rules::DROPPED,
                format!("dropped handler called with count {count} and source {source}"),
            ));
        }
    }
    let all_freed = delivery
        .regs
        .iter()
        .all(|r| r.handle.is_null() || r.freed.load(Ordering::Acquire) > 0);
    let avoided: BTreeSet<&str> = delivery
        .regs
        .iter()
        .filter(|r| !r.read_data)
        .map(|r| r.name.as_str())
        .collect();
    let summary = format!(
        "{raised} events raised by {MESSAGES} messages from rank 1 to rank 0 ({}), {} dropped \
         reports{}",
        per_type
            .iter()
            .map(|(t, c)| format!("{c} {t}"))
            .collect::<Vec<_>>()
            .join(", "),
        dropped.len(),
        if avoided.is_empty() {
            String::new()
        } else {
            format!(
                "; data not read where reading crashed: {}",
                avoided.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
    );
    if all_freed {
        drop(slots);
        drop(delivery);
    } else {
        // MPI may still call back: what the callbacks use stays alive.
        std::mem::forget(slots);
        std::mem::forget(delivery);
    }
    if raised == 0 && problems.is_empty() {
        return Verdict::Skip(format!(
            "no event raised by {MESSAGES} messages from rank 1 to rank 0 ({n} event types)"
        ));
    }
    from_problems(&problems).noting(summary)
}
