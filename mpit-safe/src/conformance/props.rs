//! The properties: one function per rule of the standard.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_int;

use proptest::prelude::*;

use mpit_core::ErrorClass;
use mpit_sys as sys;

use super::raw::{self, Kind, StrArg};
use super::{Ctx, Isolation, Property, Verdict, announce, check_prop, from_problems, sessions};

/// A skip that prints nothing (ranks other than 0 of a cross-process property).
pub(super) const SILENT: &str = "\u{0}silent";

const S_STRINGS: &str = "MPI-3.0 draft §1.2.3 String Arguments (MPI-4.1 §16.3.3)";
const S_TYPES: &str = "MPI-3.0 draft §1.2.5 Type System (MPI-4.1 §16.3.5)";
const S_CVAR: &str = "MPI-3.0 draft §1.2.6 Control Variables (MPI-4.1 §16.3.6)";
const S_PVAR: &str = "MPI-3.0 draft §1.2.7 Performance Variables (MPI-4.1 §16.3.7)";
const S_SESSIONS: &str = "MPI-3.0 draft §1.2.7 Performance Experiment Sessions, Handle Allocation, Starting and Stopping, Access Functions (MPI-4.1 §16.3.7)";
const S_CAT: &str = "MPI-3.0 draft §1.2.8 Variable Categorization (MPI-4.1 §16.3.9)";
const S_ERR: &str = "MPI-3.0 draft §1.2.9 Return and Error Codes (MPI-4.1 §16.3.10)";
const S_QUERY: &str =
    "MPI-3.0 draft §1.2.6-§1.2.8 query functions (MPI-4.1 §16.3.6, §16.3.7, §16.3.9)";
const S_INIT: &str = "MPI-3.0 draft §1.2.4 Initialization and Finalization (MPI-4.1 §16.3.4)";
const S_EVENTS: &str = "MPI-4.1 §16.3.8 Events";

macro_rules! prop {
    ($id:literal, $section:expr, $iso:expr, $check:expr, $rule:literal) => {
        Property {
            id: $id,
            section: $section,
            rule: $rule,
            isolation: $iso,
            check: $check,
        }
    };
}

pub(super) static ALL: &[Property] = &[
    prop!(
        "init.order.a",
        S_INIT,
        Isolation::Child,
        |c| ordering(c, "TInit TQuery TFinalize Init Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering TInit TQuery TFinalize Init Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.b",
        S_INIT,
        Isolation::Child,
        |c| ordering(c, "Init TInit TQuery TFinalize Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering Init TInit TQuery TFinalize Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.c",
        S_INIT,
        Isolation::Child,
        |c| ordering(c, "TInit TQuery Init TQuery TFinalize Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering TInit TQuery Init TQuery TFinalize Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.d",
        S_INIT,
        Isolation::Child,
        |c| ordering(c, "Init TInit TQuery Finalize TQuery TFinalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering Init TInit TQuery Finalize TQuery TFinalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.e",
        S_INIT,
        Isolation::Child,
        |c| ordering(c, "TInit Init Finalize TQuery TFinalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering TInit Init Finalize TQuery TFinalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.f",
        S_INIT,
        Isolation::Child,
        |c| ordering(c, "Init Finalize TInit TQuery TFinalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering Init Finalize TInit TQuery TFinalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.g",
        S_INIT,
        Isolation::Child,
        |c| ordering(c, "TInit TInit Init TFinalize TQuery TFinalize Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering TInit TInit Init TFinalize TQuery TFinalize Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.h",
        S_INIT,
        Isolation::Child,
        |c| ordering(c, "Init TInit TFinalize TInit TQuery TFinalize Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering Init TInit TFinalize TInit TQuery TFinalize Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "sweep.cvars",
        S_CVAR,
        Isolation::Sweep,
        sessions::sweep_cvars,
        "every control variable (unbound, or bound to a communicator after MPI_Init) can be allocated a handle, read and freed without crashing; the freed handle is set to MPI_T_CVAR_HANDLE_NULL"
    ),
    prop!(
        "sweep.pvars",
        S_PVAR,
        Isolation::Sweep,
        sessions::sweep_pvars,
        "every performance variable (unbound, or bound to a communicator after MPI_Init) can be allocated a handle, read, started/stopped (if not continuous) and freed without crashing; the freed handle is set to MPI_T_PVAR_HANDLE_NULL"
    ),
    prop!(
        "strings.length",
        S_STRINGS,
        Isolation::Child,
        strings_length,
        "the returned length counts the terminating NUL; a NULL buffer or length 0 returns the full length and writes nothing; a buffer of n writes at most n-1 characters and a NUL, never past n bytes; an empty description is \"\" with length 1"
    ),
    prop!(
        "strings.names",
        S_QUERY,
        Isolation::Child,
        names_unique,
        "names are non-empty and unique within their kind (control variables, performance variables of one class, categories)"
    ),
    prop!(
        "info.stable",
        S_QUERY,
        Isolation::Child,
        info_stable,
        "a query of the same index gives the same answer every time"
    ),
    prop!(
        "info.no-holes",
        S_QUERY,
        Isolation::Child,
        no_holes,
        "every index from 0 to num-1 is valid: *_get_info succeeds for it"
    ),
    prop!(
        "index.growth",
        S_QUERY,
        Isolation::Child,
        growth,
        "indices never change or vanish as the number of variables and categories grows (before vs after MPI_Init): counts never shrink and an index keeps its name"
    ),
    prop!(
        "roundtrip.cvar",
        S_CVAR,
        Isolation::Child,
        |c| roundtrip(c, Kind::Cvar),
        "MPI_T_cvar_get_index(name of index i) is i; a name no variable has gives MPI_T_ERR_INVALID_NAME"
    ),
    prop!(
        "roundtrip.pvar",
        S_PVAR,
        Isolation::Child,
        |c| roundtrip(c, Kind::Pvar),
        "MPI_T_pvar_get_index(name, class of index i) is i; a name no variable of that class has gives MPI_T_ERR_INVALID_NAME"
    ),
    prop!(
        "roundtrip.category",
        S_CAT,
        Isolation::Child,
        |c| roundtrip(c, Kind::Category),
        "MPI_T_category_get_index(name of index i) is i; a name no category has gives MPI_T_ERR_INVALID_NAME"
    ),
    prop!(
        "category.dag",
        S_CAT,
        Isolation::Child,
        category_dag,
        "categories form a directed acyclic graph (no category contains itself, directly or transitively) and their members are valid indices"
    ),
    prop!(
        "pvar.class-datatype",
        S_PVAR,
        Isolation::Child,
        pvar_class_datatype,
        "the datatype of a performance variable is one its class allows"
    ),
    prop!(
        "enum.items",
        S_TYPES,
        Isolation::Child,
        enum_items,
        "enumeration items have non-empty, unique names, their values and names are the same on every query, and an item index out of range gives MPI_T_ERR_INVALID_ITEM"
    ),
    prop!(
        "errors.index.cvar",
        S_ERR,
        Isolation::Child,
        |c| errors_index(c, Kind::Cvar),
        "an out-of-range control variable index (negative or >= num) gives MPI_T_ERR_INVALID_INDEX from get_info and handle_alloc, and never crashes"
    ),
    prop!(
        "errors.index.pvar",
        S_ERR,
        Isolation::Child,
        |c| errors_index(c, Kind::Pvar),
        "an out-of-range performance variable index gives MPI_T_ERR_INVALID_INDEX from get_info and handle_alloc, and never crashes"
    ),
    prop!(
        "errors.index.category",
        S_ERR,
        Isolation::Child,
        |c| errors_index(c, Kind::Category),
        "an out-of-range category index gives MPI_T_ERR_INVALID_INDEX from get_info and get_cvars, and never crashes"
    ),
    prop!(
        "errors.handles",
        S_ERR,
        Isolation::Sweep,
        sessions::errors_handles,
        "null and freed handles and sessions give MPI_T_ERR_INVALID_HANDLE / MPI_T_ERR_INVALID_SESSION, MPI_T_PVAR_ALL_HANDLES is refused by read and write, and never crash"
    ),
    prop!(
        "pvar.sessions-model",
        S_SESSIONS,
        Isolation::Child,
        sessions::model,
        "random sequences of session create/free, handle alloc/free, start/stop/reset/read/write/readreset (single and all handles) behave as mpit-core's pvar_model says: continuous variables refuse start/stop, read-only ones write/reset, counters start at 0 and never decrease between resets, stopped variables do not change, freed handles and sessions are invalid"
    ),
    prop!(
        "pvar.sessions-values",
        S_SESSIONS,
        Isolation::Child,
        sessions::model_values,
        "random sequences of handle alloc, start/stop (single and all handles) and reads keep the value rules of mpit-core's pvar_model: counters, aggregates and timers start at 0 and never decrease, high watermarks never decrease, low watermarks never increase, a stopped variable does not change"
    ),
    prop!(
        "errors.binding",
        S_ERR,
        Isolation::Sweep,
        sessions::errors_binding,
        "allocating a handle for a variable bound to a communicator, datatype or info object with that kind's null handle (MPI_COMM_NULL, ...) is refused with MPI_T_ERR_INVALID_HANDLE (or MPI_T_ERR_INVALID) and never crashes (finding kind `accepted` when it succeeds)"
    ),
    prop!(
        "cvar.write-read",
        S_CVAR,
        Isolation::Sweep,
        sessions::cvar_write_read,
        "a control variable written where its scope allows reads back what was written; MPI_T_ERR_CVAR_SET_NOT_NOW and MPI_T_ERR_CVAR_SET_NEVER are the only refusals, and constant/read-only ones refuse"
    ),
    prop!(
        "ranks.consistency",
        S_QUERY,
        Isolation::Ranks(3),
        sessions::ranks,
        "a variable with the same name has the same verbosity, datatype, count, class, scope and binding on every process (mpiexec -n 3)"
    ),
    prop!(
        "events.index",
        S_EVENTS,
        Isolation::Events,
        events_index,
        "event type indices are stable (same info every query), name -> index -> name round trips, out-of-range indices give MPI_T_ERR_INVALID_INDEX"
    ),
    prop!(
        "events.model",
        S_EVENTS,
        Isolation::Events,
        events_model,
        "random sequences of handle alloc, callback register/remove at each safety level, dropped handler, free and events raised in contexts of each safety level behave as mpit-core's event_model says: the callback with the lowest sufficient level runs, otherwise the event is dropped, drops are reported before the next delivery of that source, the free callback runs once and no event is delivered after free"
    ),
];

#[cfg(mpit_events)]
fn events_model(ctx: &Ctx) -> Verdict {
    super::events::model(ctx)
}

#[cfg(not(mpit_events))]
fn events_model(_ctx: &Ctx) -> Verdict {
    Verdict::Skip("the header declares no MPI-4 event API (MPI_T_event_*)".into())
}

/// One raw ordering of MPI_T_init_thread ("TInit"), MPI_T_cvar_get_num ("TQuery"),
/// MPI_T_finalize ("TFinalize"), MPI_Init_thread ("Init") and MPI_Finalize ("Finalize"),
/// without the safe API's process-lifetime anchor; every call must succeed.
fn ordering(_ctx: &Ctx, seq: &str) -> Verdict {
    let mut problems = Vec::new();
    for (step, call) in seq.split_whitespace().enumerate() {
        announce(None, &format!("{call} (step {step} of {seq})"));
        let mut out: c_int = 0;
        // SAFETY: the calls take valid out-pointers (or null argc/argv, allowed by
        // MPI_Init_thread); whether the implementation survives the order is what is checked.
        let rc = unsafe {
            match call {
                "TInit" => sys::MPI_T_init_thread(sys::MPI_THREAD_SINGLE, &mut out),
                "TQuery" => sys::MPI_T_cvar_get_num(&mut out),
                "TFinalize" => sys::MPI_T_finalize(),
                "Init" => sys::MPI_Init_thread(
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    sys::MPI_THREAD_SINGLE,
                    &mut out,
                ),
                _ => sys::MPI_Finalize(),
            }
        };
        if rc != sys::MPI_SUCCESS {
            problems.push(format!(
                "{call} (step {step} of {seq}) returned {}",
                raw::rc_name(rc)
            ));
        }
    }
    from_problems("violation", &problems)
}

/// The indices below the count whose query succeeds.
fn valid(kind: Kind) -> Vec<c_int> {
    (0..kind.count().max(0))
        .filter(|&i| raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.rc == sys::MPI_SUCCESS)
        .collect()
}

fn init_or_skip() -> Option<Verdict> {
    raw::init()
        .err()
        .map(|e| Verdict::Skip(format!("MPI_T_init_thread failed: {e}")))
}

/// One string of the interface that the string property exercises.
#[derive(Debug, Clone, Copy)]
enum Target {
    Info(Kind, c_int, usize),
    EnumName(sys::MPI_T_enum),
    EnumItem(sys::MPI_T_enum, c_int),
}

impl Target {
    /// Calls the function with `arg` as this string's argument: `(rc, returned length)`.
    fn call(self, arg: StrArg) -> (c_int, c_int) {
        match self {
            Target::Info(k, i, 0) => {
                let (f, l, _) = raw::info(k, i, arg, StrArg::NONE);
                (f.rc, l)
            }
            Target::Info(k, i, _) => {
                let (f, _, l) = raw::info(k, i, StrArg::NONE, arg);
                (f.rc, l)
            }
            Target::EnumName(e) => {
                let (rc, _, l) = raw::enum_info(e, arg);
                (rc, l)
            }
            Target::EnumItem(e, k) => {
                let (rc, _, l) = raw::enum_item(e, k, arg);
                (rc, l)
            }
        }
    }

    fn describe(self) -> String {
        match self {
            Target::Info(k, i, w) => {
                format!("{} {i} {}", k.name(), ["name", "description"][w.min(1)])
            }
            Target::EnumName(_) => "enumeration name".into(),
            Target::EnumItem(_, k) => format!("enumeration item {k} name"),
        }
    }
}

/// The enumerations reachable from control and performance variables (first occurrence).
fn enums() -> Vec<(String, sys::MPI_T_enum)> {
    let mut out: Vec<(String, sys::MPI_T_enum)> = Vec::new();
    for kind in [Kind::Cvar, Kind::Pvar] {
        for i in valid(kind) {
            if let Some(e) = raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.enumtype {
                if !out.iter().any(|(_, x)| *x == e) {
                    out.push((format!("{} {i}", kind.name()), e));
                }
            }
        }
    }
    out
}

/// One generated case of `strings.length`: which string, the buffer length (taken modulo the
/// string's length + 3 when `relative_to_length`), a null buffer or not.
#[derive(Debug, Clone)]
#[allow(dead_code)] // `string` is read by Debug: it names the case in the report.
struct StrCase {
    string: String,
    target: usize,
    buffer_len: usize,
    relative_to_length: bool,
    null_buffer: bool,
}

fn strings_length(ctx: &Ctx) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let mut targets = Vec::new();
    for kind in Kind::ALL {
        for i in valid(kind) {
            targets.push(Target::Info(kind, i, 0));
            targets.push(Target::Info(kind, i, 1));
        }
    }
    for (_, e) in enums() {
        targets.push(Target::EnumName(e));
        let (_, num, _) = raw::enum_info(e, StrArg::NONE);
        targets.extend((0..num).map(|k| Target::EnumItem(e, k)));
    }
    if targets.is_empty() {
        return Verdict::Skip("no variables, categories or enumerations".into());
    }
    let n = targets.len();
    let strategy = (0..n, 0usize..=300, any::<bool>(), any::<bool>());
    let described = targets.clone();
    let strategy = strategy.prop_map(move |(t, n, null, by_len)| StrCase {
        string: described[t].describe(),
        target: t,
        buffer_len: n,
        relative_to_length: by_len,
        null_buffer: null,
    });
    let verdict = check_prop(ctx.cases, strategy, |c| {
        let StrCase {
            target: t,
            buffer_len: n,
            null_buffer: null,
            relative_to_length: by_len,
            ..
        } = c;
        let t = targets[t];
        let who = t.describe();
        let (rc, full_len) = t.call(StrArg::NONE);
        prop_assert_eq!(rc, sys::MPI_SUCCESS, "{}: length query failed", who);
        prop_assert!(
            full_len >= 1,
            "{}: length {} does not count the NUL",
            who,
            full_len
        );
        let l = usize::try_from(full_len).unwrap_or(0);
        // The full string, from a buffer of exactly its length.
        let mut full = vec![0xABu8; l];
        let (rc, _) = t.call(StrArg::of(&mut full, full_len));
        prop_assert_eq!(rc, sys::MPI_SUCCESS);
        prop_assert_eq!(full[l - 1], 0, "{}: no NUL at length-1 = {}", who, l - 1);
        let nul = full.iter().position(|&b| b == 0).unwrap_or(l - 1);
        prop_assert_eq!(
            nul,
            l - 1,
            "{}: string shorter than the length it reported",
            who
        );
        // Scale the generated buffer length around the string's length.
        let n = if by_len { n % (l + 3) } else { n };
        let nc = c_int::try_from(n).unwrap_or(c_int::MAX);
        if null {
            let (rc, got) = t.call(StrArg {
                ptr: std::ptr::null_mut(),
                len: nc,
            });
            prop_assert_eq!(rc, sys::MPI_SUCCESS);
            prop_assert_eq!(got, full_len, "{}: NULL buffer with length {}", who, n);
            return Ok(());
        }
        let mut buf = vec![0xABu8; n + 16];
        let (rc, got) = t.call(StrArg::of(&mut buf, nc));
        prop_assert_eq!(rc, sys::MPI_SUCCESS);
        if n == 0 {
            prop_assert_eq!(
                got,
                full_len,
                "{}: length 0 must return the full length",
                who
            );
            prop_assert!(
                buf.iter().all(|&b| b == 0xAB),
                "{}: length 0 wrote into the buffer",
                who
            );
            return Ok(());
        }
        let w = (n - 1).min(l - 1);
        prop_assert_eq!(
            &buf[..w],
            &full[..w],
            "{}: buffer {} holds another prefix",
            who,
            n
        );
        prop_assert_eq!(
            buf[w],
            0,
            "{}: buffer {}: no NUL after {} characters",
            who,
            n,
            w
        );
        prop_assert!(
            buf[n..].iter().all(|&b| b == 0xAB),
            "{}: buffer {}: wrote past its end",
            who,
            n
        );
        let truncated = c_int::try_from(w + 1).unwrap_or(0);
        prop_assert!(
            got == full_len || got == truncated,
            "{}: buffer {} returned length {} (full length {})",
            who,
            n,
            got,
            full_len
        );
        Ok(())
    });
    verdict.noting(format!(
        "{n} strings of names, descriptions and enumerations"
    ))
}

fn name_of(kind: Kind, i: c_int) -> Option<Vec<u8>> {
    raw::full_string(kind, i, 0)
}

fn names_unique(_ctx: &Ctx) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let mut problems = Vec::new();
    let mut checked = 0;
    for kind in Kind::ALL {
        let mut seen: BTreeMap<(c_int, Vec<u8>), c_int> = BTreeMap::new();
        for i in valid(kind) {
            checked += 1;
            let Some(name) = name_of(kind, i) else {
                problems.push(format!("{} {i}: the name cannot be read", kind.name()));
                continue;
            };
            if name.is_empty() {
                problems.push(format!("{} {i}: empty name", kind.name()));
                continue;
            }
            let class = if kind == Kind::Pvar {
                raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.ints[1]
            } else {
                0
            };
            if let Some(j) = seen.insert((class, name.clone()), i) {
                problems.push(format!(
                    "{} {j} and {i} are both called {:?}",
                    kind.name(),
                    String::from_utf8_lossy(&name)
                ));
            }
        }
    }
    from_problems("violation", &problems).noting(format!("{checked} names"))
}

fn info_stable(ctx: &Ctx) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let counts = Kind::ALL.map(|k| k.count().max(0));
    check_prop(ctx.cases, (0usize..3, 0usize..100_000), |(k, i)| {
        let kind = Kind::ALL[k];
        if counts[k] == 0 {
            return Ok(());
        }
        let i = c_int::try_from(i).unwrap_or(0) % counts[k];
        let first = (
            raw::info(kind, i, StrArg::NONE, StrArg::NONE).0,
            raw::full_string(kind, i, 0),
            raw::full_string(kind, i, 1),
        );
        // Other queries in between.
        let _ = raw::info(kind, (i + 1) % counts[k], StrArg::NONE, StrArg::NONE);
        let second = (
            raw::info(kind, i, StrArg::NONE, StrArg::NONE).0,
            raw::full_string(kind, i, 0),
            raw::full_string(kind, i, 1),
        );
        prop_assert_eq!(first, second, "{} {} answered differently", kind.name(), i);
        Ok(())
    })
}

fn no_holes(_ctx: &Ctx) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let mut first = None;
    let mut counts = Vec::new();
    let mut universe = None;
    for phase in ["before MPI_Init", "after MPI_Init"] {
        if universe.is_none() && phase.starts_with("after") {
            universe = Some(mpi::initialize());
        }
        for kind in Kind::ALL {
            let n = kind.count().max(0);
            let mut holes = 0;
            for i in 0..n {
                let rc = raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.rc;
                if rc != sys::MPI_SUCCESS {
                    holes += 1;
                    first.get_or_insert(format!(
                        "{}_get_info({i}) {phase}, num = {n}: {}",
                        kind.name(),
                        raw::rc_name(rc)
                    ));
                }
            }
            counts.push(format!("{holes} of {n} {} {phase}", kind.plural()));
        }
    }
    drop(universe);
    match first {
        None => Verdict::Pass(counts.join(", ")),
        Some(c) => Verdict::Finding {
            kind: "holes",
            counterexample: c,
            detail: format!("holes: {}", counts.join(", ")),
        },
    }
}

type Snapshot = Vec<(Kind, c_int, Vec<Option<Vec<u8>>>)>;

fn snapshot() -> Snapshot {
    Kind::ALL
        .iter()
        .map(|&k| {
            let n = k.count();
            (k, n, (0..n.max(0)).map(|i| name_of(k, i)).collect())
        })
        .collect()
}

fn growth(_ctx: &Ctx) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let before = snapshot();
    let universe = mpi::initialize();
    let after = snapshot();
    drop(universe);
    let mut problems = Vec::new();
    let mut grew = Vec::new();
    for ((k, n0, names0), (_, n1, names1)) in before.iter().zip(&after) {
        grew.push(format!("{} {n0} -> {n1}", k.plural()));
        if n1 < n0 {
            problems.push(format!("{} count shrank from {n0} to {n1}", k.name()));
        }
        for (i, (a, b)) in names0.iter().zip(names1).enumerate() {
            if let (Some(a), b) = (a, b) {
                if Some(a) != b.as_ref() {
                    problems.push(format!(
                        "{} {i} was {:?} before MPI_Init, {:?} after",
                        k.name(),
                        String::from_utf8_lossy(a),
                        b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned())
                    ));
                }
            }
        }
    }
    match from_problems("violation", &problems) {
        Verdict::Finding {
            kind,
            counterexample,
            detail,
        } => Verdict::Finding {
            kind,
            counterexample,
            detail: format!("{detail} ({})", grew.join(", ")),
        },
        v => v,
    }
}

fn roundtrip(ctx: &Ctx, kind: Kind) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let mut targets: Vec<(c_int, Vec<u8>, c_int)> = Vec::new();
    for i in valid(kind) {
        let class = raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.ints[1];
        if let Some(n) = name_of(kind, i) {
            targets.push((i, n, if kind == Kind::Pvar { class } else { 0 }));
        }
    }
    if targets.is_empty() {
        return Verdict::Skip(format!("no {}s", kind.name()));
    }
    let n = targets.len();
    let names: Vec<String> = targets
        .iter()
        .map(|(_, n, _)| String::from_utf8_lossy(n).into_owned())
        .collect();
    let strategy = (0..n, 0u8..4).prop_map(move |(t, m)| {
        let how = [
            "exact",
            "suffix added",
            "last char dropped",
            "first char case-swapped",
        ];
        (t, names[t].clone(), how[usize::from(m)], m)
    });
    let verdict = check_prop(ctx.cases, strategy, |(t, _, _, mutation)| {
        let (i, name, class) = &targets[t];
        let mut probe = name.clone();
        match mutation {
            0 => {}
            1 => probe.extend_from_slice(b"_mpit_rs_x"),
            2 => {
                probe.pop();
            }
            _ => {
                if let Some(c) = probe.first_mut() {
                    *c = if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    };
                }
            }
        }
        let shown = String::from_utf8_lossy(&probe).into_owned();
        let (rc, j) = raw::get_index(kind, &probe, *class);
        if probe == *name {
            prop_assert_eq!(
                rc,
                sys::MPI_SUCCESS,
                "get_index({:?}) failed: {}",
                shown,
                raw::rc_name(rc)
            );
            prop_assert_eq!(j, *i, "get_index({:?})", shown);
        } else if rc == sys::MPI_SUCCESS {
            let other = name_of(kind, j);
            prop_assert_eq!(
                other.as_deref(),
                Some(&probe[..]),
                "get_index({:?}) = {} names another",
                shown,
                j
            );
        } else {
            prop_assert!(
                raw::class(rc) == Some(ErrorClass::InvalidName),
                "get_index({:?}): {}",
                shown,
                raw::rc_name(rc)
            );
        }
        Ok(())
    });
    verdict.noting(format!("{n} {} names", kind.name()))
}

fn category_dag(_ctx: &Ctx) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let counts = Kind::ALL.map(|k| k.count().max(0));
    let mut problems = Vec::new();
    let mut children: BTreeMap<c_int, Vec<c_int>> = BTreeMap::new();
    for c in valid(Kind::Category) {
        let f = raw::info(Kind::Category, c, StrArg::NONE, StrArg::NONE).0;
        for (slot, of) in Kind::ALL.into_iter().enumerate() {
            let (rc, m) = raw::members(c, of, f.ints[slot]);
            if rc != sys::MPI_SUCCESS {
                problems.push(format!(
                    "category {c}: get_{}s: {}",
                    of.name(),
                    raw::rc_name(rc)
                ));
                continue;
            }
            for x in &m {
                if *x < 0 || *x >= counts[slot] {
                    problems.push(format!(
                        "category {c} lists {} {x} (num = {})",
                        of.name(),
                        counts[slot]
                    ));
                }
            }
            if of == Kind::Category {
                children.insert(c, m);
            }
        }
    }
    // Cycle search: colour 1 = on the current path, 2 = done.
    let mut colour: BTreeMap<c_int, u8> = BTreeMap::new();
    for &root in children.keys() {
        let mut stack = vec![(root, 0usize)];
        let mut path = vec![root];
        if colour.get(&root).copied().unwrap_or(0) != 0 {
            continue;
        }
        colour.insert(root, 1);
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let kids = children.get(&node).map_or(&[][..], |v| &v[..]);
            if let Some(&k) = kids.get(*next) {
                *next += 1;
                match colour.get(&k).copied().unwrap_or(0) {
                    1 => {
                        let start = path.iter().position(|&p| p == k).unwrap_or(0);
                        let mut cyc: Vec<String> =
                            path[start..].iter().map(|p| p.to_string()).collect();
                        cyc.push(k.to_string());
                        problems.push(format!("category cycle {}", cyc.join(" -> ")));
                    }
                    0 => {
                        colour.insert(k, 1);
                        stack.push((k, 0));
                        path.push(k);
                    }
                    _ => {}
                }
            } else {
                colour.insert(node, 2);
                stack.pop();
                path.pop();
            }
        }
    }
    from_problems("violation", &problems).noting(format!(
        "{} categories, {} subcategory links",
        children.len(),
        children.values().map(Vec::len).sum::<usize>()
    ))
}

fn pvar_class_datatype(_ctx: &Ctx) -> Verdict {
    let mpit = match crate::Mpit::init() {
        Ok(m) => m,
        Err(e) => return Verdict::Skip(format!("MPI_T_init_thread failed: {e}")),
    };
    let pvars = match mpit.pvars() {
        Ok(l) => l,
        Err(e) => return Verdict::Skip(format!("MPI_T_pvar_get_num failed: {e}")),
    };
    if pvars.entries.is_empty() {
        return Verdict::Skip("no performance variables".into());
    }
    let problems: Vec<String> = pvars
        .entries
        .iter()
        .filter(|v| !v.class.allows(v.datatype))
        .map(|v| {
            format!(
                "pvar {} {:?}: class {} with datatype {}",
                v.index,
                v.name.to_string_lossy(),
                v.class,
                v.datatype
            )
        })
        .collect();
    from_problems("violation", &problems)
}

fn enum_items(_ctx: &Ctx) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let all = enums();
    if all.is_empty() {
        return Verdict::Skip("no variable has an enumeration type".into());
    }
    let mut problems = Vec::new();
    let item_name = |e, k| -> Option<(c_int, Vec<u8>)> {
        let (rc, value, len) = raw::enum_item(e, k, StrArg::NONE);
        if rc != sys::MPI_SUCCESS {
            return None;
        }
        let mut buf = vec![0u8; usize::try_from(len).ok()?.max(1)];
        let (rc, _, _) = raw::enum_item(e, k, StrArg::of(&mut buf, len.max(1)));
        (rc == sys::MPI_SUCCESS).then_some(())?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        Some((value, buf))
    };
    for (owner, e) in all {
        let (rc, num, _) = raw::enum_info(e, StrArg::NONE);
        if rc != sys::MPI_SUCCESS {
            problems.push(format!("enum of {owner}: get_info: {}", raw::rc_name(rc)));
            continue;
        }
        let mut names = BTreeSet::new();
        for k in 0..num {
            let a = item_name(e, k);
            let b = item_name(e, k);
            match (&a, &b) {
                (Some((_, n)), _) if n.is_empty() => {
                    problems.push(format!("enum of {owner}: item {k} has an empty name"))
                }
                (Some((_, n)), _) if !names.insert(n.clone()) => problems.push(format!(
                    "enum of {owner}: item name {:?} repeated",
                    String::from_utf8_lossy(n)
                )),
                (None, _) => problems.push(format!("enum of {owner}: item {k} cannot be read")),
                _ => {}
            }
            if a != b {
                problems.push(format!("enum of {owner}: item {k} changed between queries"));
            }
        }
        for k in [num, num + 1, -1] {
            announce(None, &format!("MPI_T_enum_get_item(enum of {owner}, {k})"));
            let (rc, _, _) = raw::enum_item(e, k, StrArg::NONE);
            if raw::class(rc) != Some(ErrorClass::InvalidItem) {
                problems.push(format!(
                    "enum of {owner} ({num} items): get_item({k}) gave {}, not MPI_T_ERR_INVALID_ITEM",
                    raw::rc_name(rc)
                ));
            }
        }
    }
    from_problems("violation", &problems)
}

fn errors_index(ctx: &Ctx, kind: Kind) -> Verdict {
    if let Some(v) = init_or_skip() {
        return v;
    }
    let n = kind.count().max(0);
    let (_, session) = raw::session_create();
    // Offsets past num (shrinking towards num itself) and negative indices, as the index.
    let index = prop_oneof![0i64..4, 4i64..100_000, -100_000i64..0].prop_map(move |off| {
        if off >= 0 {
            c_int::try_from(i64::from(n) + off).unwrap_or(c_int::MAX)
        } else {
            c_int::try_from(off).unwrap_or(-1)
        }
    });
    check_prop(ctx.cases, index, |i| {
        let mut calls: Vec<(String, c_int)> = Vec::new();
        let name = kind.name();
        announce(None, &format!("MPI_T_{name}_get_info({i}) with num = {n}"));
        calls.push((
            format!("{name}_get_info({i})"),
            raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.rc,
        ));
        match kind {
            Kind::Cvar => {
                announce(
                    None,
                    &format!("MPI_T_cvar_handle_alloc({i}) with num = {n}"),
                );
                let (rc, h, _) = raw::cvar_alloc(i, std::ptr::null_mut());
                if rc == sys::MPI_SUCCESS {
                    let mut h = h;
                    // SAFETY: a handle MPI just returned.
                    unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
                }
                calls.push((format!("cvar_handle_alloc({i})"), rc));
            }
            Kind::Pvar => {
                announce(
                    None,
                    &format!("MPI_T_pvar_handle_alloc({i}) with num = {n}"),
                );
                let (rc, _, _) = raw::pvar_alloc(session, i, std::ptr::null_mut());
                calls.push((format!("pvar_handle_alloc({i})"), rc));
            }
            Kind::Category => {
                announce(
                    None,
                    &format!("MPI_T_category_get_cvars({i}, 0) with num = {n}"),
                );
                calls.push((
                    format!("category_get_cvars({i})"),
                    raw::members(i, Kind::Cvar, 0).0,
                ));
            }
        }
        for (call, rc) in calls {
            prop_assert!(
                raw::class(rc) == Some(ErrorClass::InvalidIndex),
                "{} with num = {} gave {}",
                call,
                n,
                raw::rc_name(rc)
            );
        }
        Ok(())
    })
}

#[cfg(not(mpit_events))]
fn events_index(_ctx: &Ctx) -> Verdict {
    Verdict::Skip("the header declares no MPI-4 event API (MPI_T_event_*)".into())
}

#[cfg(mpit_events)]
fn events_index(ctx: &Ctx) -> Verdict {
    let mpit = match crate::Mpit::init() {
        Ok(m) => m,
        Err(e) => return Verdict::Skip(format!("MPI_T_init_thread failed: {e}")),
    };
    let n = match mpit.event_count() {
        Ok(n) => n,
        Err(e) => return Verdict::violation("MPI_T_event_get_num", e.to_string()),
    };
    if n == 0 {
        return Verdict::Skip(
            "0 event types (the library raises no events; no provider preloaded)".into(),
        );
    }
    check_prop(
        ctx.cases,
        (0..n, 0i64..1000, any::<bool>()),
        |(i, off, neg)| {
            let a = mpit
                .event_info(i)
                .map_err(|e| TestCaseError::fail(format!("event {i}: {e}")))?;
            let b = mpit
                .event_info(i)
                .map_err(|e| TestCaseError::fail(format!("event {i}: {e}")))?;
            prop_assert_eq!(&a, &b, "event {} answered differently", i);
            let name = a.name.to_str().unwrap_or("");
            let j = mpit
                .event_index(name)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(j, Some(i), "MPI_T_event_get_index({:?})", name);
            let bad = if neg {
                -1 - off
            } else {
                i64::try_from(n).unwrap_or(0) + off
            };
            let bad = c_int::try_from(bad).unwrap_or(-1);
            let mut name_len = 0;
            let (mut verb, mut num) = (0, 0);
            let mut en = sys::MPI_T_ENUM_NULL;
            let (mut dl, mut bind) = (0, 0);
            let mut info = sys::MPI_INFO_NULL;
            announce(None, &format!("MPI_T_event_get_info({bad}) with num = {n}"));
            // SAFETY: null string buffers with length 0, null arrays with num 0; valid out-pointers.
            let rc = unsafe {
                sys::MPI_T_event_get_info(
                    bad,
                    std::ptr::null_mut(),
                    &mut name_len,
                    &mut verb,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    &mut num,
                    &mut en,
                    &mut info,
                    std::ptr::null_mut(),
                    &mut dl,
                    &mut bind,
                )
            };
            prop_assert!(
                raw::class(rc) == Some(ErrorClass::InvalidIndex),
                "MPI_T_event_get_info({}) gave {}",
                bad,
                raw::rc_name(rc)
            );
            Ok(())
        },
    )
}
