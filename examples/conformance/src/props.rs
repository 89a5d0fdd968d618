//! The properties: one function per rule of the standard.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_int;

use proptest::prelude::*;

use mpit_core::{ErrorClass, PvarClass};
use mpit_safe::RawConstant;
use mpit_sys as sys;
// rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

use super::raw::{self, Kind, StrArg};
use super::repro::{ACCEPTED, ANSWER, CLASS, Expect, Repro, c_str};
use super::rules::{self, Grade};
use super::{
    Ctx, Found, Isolation, Phase, Property, Verdict, announce_with, check_prop, failing,
    from_problems, sessions,
};

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
    ($id:literal, $section:expr, $iso:expr, $phase:expr, $check:expr, $rule:literal) => {
        Property {
            id: $id,
            section: $section,
            rule: $rule,
            isolation: $iso,
            phase: $phase,
            check: $check,
        }
    };
}

use Isolation::{Child, Provider, Ranks, Sweep};
use Phase::{AfterInit, BeforeAndAfter, BeforeInit, Each, Ordering};

pub(super) static ALL: &[Property] = &[
    prop!(
        "init.order.a",
        S_INIT,
        Child,
        Ordering,
        |c| ordering(c, "TInit TQuery TFinalize Init Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering TInit TQuery TFinalize Init Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.b",
        S_INIT,
        Child,
        Ordering,
        |c| ordering(c, "Init TInit TQuery TFinalize Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering Init TInit TQuery TFinalize Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.c",
        S_INIT,
        Child,
        Ordering,
        |c| ordering(c, "TInit TQuery Init TQuery TFinalize Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering TInit TQuery Init TQuery TFinalize Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.d",
        S_INIT,
        Child,
        Ordering,
        |c| ordering(c, "Init TInit TQuery Finalize TQuery TFinalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering Init TInit TQuery Finalize TQuery TFinalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.e",
        S_INIT,
        Child,
        Ordering,
        |c| ordering(c, "TInit Init Finalize TQuery TFinalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering TInit Init Finalize TQuery TFinalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.f",
        S_INIT,
        Child,
        Ordering,
        |c| ordering(c, "Init Finalize TInit TQuery TFinalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering Init Finalize TInit TQuery TFinalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.g",
        S_INIT,
        Child,
        Ordering,
        |c| ordering(c, "TInit TInit Init TFinalize TQuery TFinalize Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering TInit TInit Init TFinalize TQuery TFinalize Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "init.order.h",
        S_INIT,
        Child,
        Ordering,
        |c| ordering(c, "Init TInit TFinalize TInit TQuery TFinalize Finalize"),
        "MPI_T may be initialised and finalised at any time, before MPI_Init and after MPI_Finalize, any number of times: the raw ordering Init TInit TFinalize TInit TQuery TFinalize Finalize succeeds without crashing (TQuery is MPI_T_cvar_get_num)"
    ),
    prop!(
        "sweep.cvars",
        S_CVAR,
        Sweep,
        BeforeAndAfter,
        sessions::sweep_cvars,
        "every control variable (unbound, or bound to a communicator after MPI_Init) can be allocated a handle, read and freed without crashing, before and after MPI_Init; the freed handle is set to MPI_T_CVAR_HANDLE_NULL"
    ),
    prop!(
        "sweep.pvars",
        S_PVAR,
        Sweep,
        BeforeAndAfter,
        sessions::sweep_pvars,
        "every performance variable (unbound, or bound to a communicator after MPI_Init) can be allocated a handle, read, started/stopped (if not continuous) and freed without crashing, before and after MPI_Init; the freed handle is set to MPI_T_PVAR_HANDLE_NULL"
    ),
    prop!(
        "strings.length",
        S_STRINGS,
        Child,
        AfterInit,
        strings_length,
        "the returned length counts the terminating NUL; a NULL buffer or length 0 returns the full length and writes nothing; a buffer of n writes at most n-1 characters and a NUL, never past n bytes; an empty description is \"\" with length 1"
    ),
    prop!(
        "strings.names",
        S_QUERY,
        Child,
        AfterInit,
        names_unique,
        "names are non-empty and unique within their kind (control variables, performance variables of one class, categories)"
    ),
    prop!(
        "info.stable",
        S_QUERY,
        Child,
        AfterInit,
        info_stable,
        "a query of the same index gives the same answer every time"
    ),
    prop!(
        "info.no-holes",
        S_QUERY,
        Child,
        BeforeAndAfter,
        no_holes,
        "every index from 0 to num-1 is valid: *_get_info succeeds for it, before and after MPI_Init"
    ),
    prop!(
        "index.growth",
        S_QUERY,
        Child,
        BeforeAndAfter,
        growth,
        "indices never change or vanish as the number of variables and categories grows (before vs after MPI_Init): counts never shrink and an index keeps its name"
    ),
    prop!(
        "roundtrip.cvar",
        S_CVAR,
        Child,
        AfterInit,
        |c| roundtrip(c, Kind::Cvar),
        "MPI_T_cvar_get_index(name of index i) is i; a name no variable has gives MPI_T_ERR_INVALID_NAME"
    ),
    prop!(
        "roundtrip.pvar",
        S_PVAR,
        Child,
        AfterInit,
        |c| roundtrip(c, Kind::Pvar),
        "MPI_T_pvar_get_index(name, class of index i) is i; a name no variable of that class has gives MPI_T_ERR_INVALID_NAME"
    ),
    prop!(
        "roundtrip.category",
        S_CAT,
        Child,
        AfterInit,
        |c| roundtrip(c, Kind::Category),
        "MPI_T_category_get_index(name of index i) is i; a name no category has gives MPI_T_ERR_INVALID_NAME"
    ),
    prop!(
        "category.dag",
        S_CAT,
        Child,
        AfterInit,
        category_dag,
        "categories form a directed acyclic graph (no category contains itself, directly or transitively) and their members are valid indices"
    ),
    prop!(
        "pvar.class-datatype",
        S_PVAR,
        Child,
        AfterInit,
        pvar_class_datatype,
        "the datatype of a performance variable is one its class allows"
    ),
    prop!(
        "enum.items",
        S_TYPES,
        Child,
        AfterInit,
        enum_items,
        "enumeration items have non-empty, unique names, their values and names are the same on every query, and an item index out of range gives MPI_T_ERR_INVALID_ITEM"
    ),
    prop!(
        "errors.index.cvar",
        S_ERR,
        Child,
        Each,
        |c| errors_index(c, Kind::Cvar),
        "an out-of-range control variable index (negative or >= num) gives MPI_T_ERR_INVALID_INDEX from get_info and handle_alloc, and never crashes"
    ),
    prop!(
        "errors.index.pvar",
        S_ERR,
        Child,
        Each,
        |c| errors_index(c, Kind::Pvar),
        "an out-of-range performance variable index gives MPI_T_ERR_INVALID_INDEX from get_info and handle_alloc, and never crashes"
    ),
    prop!(
        "errors.index.category",
        S_ERR,
        Child,
        Each,
        |c| errors_index(c, Kind::Category),
        "an out-of-range category index gives MPI_T_ERR_INVALID_INDEX from get_info and get_cvars, and never crashes"
    ),
    prop!(
        "errors.handles",
        S_ERR,
        Sweep,
        Each,
        sessions::errors_handles,
        "null and freed handles and sessions give MPI_T_ERR_INVALID_HANDLE / MPI_T_ERR_INVALID_SESSION, MPI_T_PVAR_ALL_HANDLES is refused by read and write, and never crash"
    ),
    prop!(
        "pvar.sessions-model",
        S_SESSIONS,
        Child,
        AfterInit,
        sessions::model,
        "random sequences of session create/free, handle alloc/free, start/stop/reset/read/write/readreset (single and all handles) behave as mpit-core's pvar_model says: continuous variables refuse start/stop, read-only ones write/reset, counters start at 0 and never decrease between resets, stopped variables do not change, freed handles and sessions are invalid"
    ),
    prop!(
        "pvar.sessions-values",
        S_SESSIONS,
        Child,
        AfterInit,
        sessions::model_values,
        "random sequences of handle alloc, start/stop (single and all handles) and reads keep the value rules of mpit-core's pvar_model: counters, aggregates and timers start at 0 and never decrease, high watermarks never decrease, low watermarks never increase, a stopped variable does not change"
    ),
    prop!(
        "errors.binding",
        S_ERR,
        Sweep,
        AfterInit,
        sessions::errors_binding,
        "allocating a handle for a variable bound to a communicator, datatype or info object with that kind's null handle (MPI_COMM_NULL, ...) is refused with MPI_T_ERR_INVALID_HANDLE (or MPI_T_ERR_INVALID) and never crashes (finding kind `accepted` when it succeeds)"
    ),
    prop!(
        "cvar.write-read",
        S_CVAR,
        Sweep,
        BeforeInit,
        sessions::cvar_write_read,
        "a control variable written where its scope allows reads back what was written; MPI_T_ERR_CVAR_SET_NOT_NOW and MPI_T_ERR_CVAR_SET_NEVER are the only refusals, and constant/read-only ones refuse (before MPI_Init, where most control variables may be set)"
    ),
    prop!(
        "ranks.consistency",
        S_QUERY,
        Ranks(3),
        AfterInit,
        sessions::ranks,
        "a variable or event type with the same name has the same verbosity, datatype, count, class, scope and binding (event types: datatypes, element count, binding) on every process (mpiexec -n 3)"
    ),
    prop!(
        "events.sources",
        S_EVENTS,
        Child,
        AfterInit,
        events_sources,
        "the implementation's event sources: names and descriptions follow the string convention (a NULL buffer queries the length), the ordering is MPI_T_SOURCE_ORDERED or MPI_T_SOURCE_UNORDERED, the same query gives the same answer, MPI_T_source_get_timestamp gives a timestamp or MPI_T_ERR_NOT_SUPPORTED, an out-of-range index gives MPI_T_ERR_INVALID_INDEX"
    ),
    prop!(
        "events.index",
        S_EVENTS,
        Child,
        AfterInit,
        events_index,
        "the implementation's event types: the same query gives the same answer, names are unique and round-trip through MPI_T_event_get_index, displacements ascend from 0, an enumtype other than MPI_T_ENUM_NULL is a valid enumeration, out-of-range indices give MPI_T_ERR_INVALID_INDEX and unknown names MPI_T_ERR_INVALID_NAME"
    ),
    prop!(
        "events.delivery",
        S_EVENTS,
        Ranks(2),
        AfterInit,
        events_delivery,
        "events the implementation raises for real traffic (mpiexec -n 2: rank 1 sends before rank 0 receives) reach the callback registered at the level MPI passes, with the registration and user data given at registration; their source is valid, an ordered source's timestamps never decrease, every element and the whole buffer can be read; the free callback runs once and no event follows it"
    ),
    prop!(
        "events.sources.provider",
        S_EVENTS,
        Provider,
        AfterInit,
        events_sources,
        "events.sources against the project's test event provider (examples/event-provider, preloaded; its four sources)"
    ),
    prop!(
        "events.index.provider",
        S_EVENTS,
        Provider,
        AfterInit,
        events_index,
        "events.index against the project's test event provider (examples/event-provider, preloaded)"
    ),
    prop!(
        "events.model",
        S_EVENTS,
        Provider,
        AfterInit,
        events_model,
        "random sequences of handle alloc, callback register/remove at each safety level, dropped handler, free and events raised in contexts of each safety level behave as mpit-core's event_model says: the callback with the lowest sufficient level runs, otherwise the event is dropped, drops are reported before the next delivery of that source, the free callback runs once and no event is delivered after free (the test event provider, preloaded: no MPI raises events at a chosen level)"
    ),
];

#[cfg(mpit_events)]
use super::event_props::{
    delivery as events_delivery, index as events_index, sources as events_sources,
};
#[cfg(mpit_events)]
use super::events::model as events_model;

#[cfg(not(mpit_events))]
fn no_event_api(_ctx: &Ctx) -> Verdict {
    Verdict::Skip("the header declares no MPI-4 event API (MPI_T_event_*)".into())
}
#[cfg(not(mpit_events))]
use self::no_event_api as events_delivery;
#[cfg(not(mpit_events))]
use self::no_event_api as events_index;
#[cfg(not(mpit_events))]
use self::no_event_api as events_model;
#[cfg(not(mpit_events))]
use self::no_event_api as events_sources;

/// The C statement of one step of an ordering (`rc` gets its return code).
fn ordering_c(call: &str) -> &'static str {
    match call {
        "TInit" => "rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &out);",
        "TQuery" => "rc = MPI_T_cvar_get_num(&out);",
        "TFinalize" => "rc = MPI_T_finalize();",
        "Init" => "rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &out);",
        _ => "rc = MPI_Finalize();",
    }
}

/// The C program of an ordering: every step made and checked (a failing step is a wrong
/// answer, [`ANSWER`]); a crash shows as itself.
fn ordering_repro(seq: &str, expect: Expect) -> Repro {
    let mut r = Repro::new(1, expect).line("int out = 0;");
    for (step, call) in seq.split_whitespace().enumerate() {
        r = r.line(format!(
            "say(\"step {step}: {call}\");\n{}\nif (rc != MPI_SUCCESS) {{\n    \
             say(\"step {step} ({call}) returned %s\", rc_name(rc));\n    return end(ANSWER);\n}}",
            ordering_c(call)
        ));
    }
    r.line("return end(ABSENT);")
}

/// One raw ordering of MPI_T_init_thread ("TInit"), MPI_T_cvar_get_num ("TQuery"),
/// MPI_T_finalize ("TFinalize"), MPI_Init_thread ("Init") and MPI_Finalize ("Finalize"),
/// without the safe API's process-lifetime anchor; every call must succeed.
fn ordering(_ctx: &Ctx, seq: &str) -> Verdict {
    let mut problems = Vec::new();
    let crash = ordering_repro(seq, Expect::Crash);
    for (step, call) in seq.split_whitespace().enumerate() {
        announce_with(
            None,
            &format!("{call} (step {step} of {seq})"),
            Grade::Violation,
            &rules::ANY_TIME,
            Some(crash.clone()),
        );
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
            problems.push(
                Found::problem(
                    "error",
                    Grade::Violation,
                    &rules::ANY_TIME,
                    format!(
                        "{call} (step {step} of {seq}) returned {}",
                        raw::rc_name(rc)
                    ),
                )
                .with_repro(ordering_repro(seq, Expect::Exit(ANSWER))),
            );
        }
    }
    from_problems(&problems)
}

/// The indices below the count whose query succeeds.
fn valid(kind: Kind) -> Vec<c_int> {
    (0..kind.count().max(0))
        .filter(|&i| raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.rc == sys::MPI_SUCCESS)
        .collect()
}

/// A C expression for the index of `kind` `i` in a reproducer: looked up by name (and class),
/// so that it does not depend on registration order; the number where it has no name.
pub(super) fn c_index(kind: Kind, i: c_int) -> String {
    let Some(name) = name_of(kind, i) else {
        return i.to_string();
    };
    let name = c_str(&String::from_utf8_lossy(&name));
    match kind {
        Kind::Cvar => format!("cvar_index({name})"),
        Kind::Pvar => {
            let class = raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.ints[1];
            format!("pvar_index({name}, {class})")
        }
        Kind::Category => format!("category_index({name})"),
    }
}

/// The kind constant of the reproducers' prelude.
fn c_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Cvar => "CVAR",
        Kind::Pvar => "PVAR",
        Kind::Category => "CATEGORY",
    }
}

/// A reproducer starting as the property did: MPI_T initialised, and MPI if `ctx` says so.
fn repro(ctx: &Ctx, expect: Expect) -> Repro {
    Repro::new(1, expect).init(ctx.after_init)
}

/// One string of the interface that the string property exercises.
#[derive(Debug, Clone, Copy)]
enum Target {
    Info(Kind, c_int, usize),
    EnumName(sys::MPI_T_enum, Kind, c_int),
    EnumItem(sys::MPI_T_enum, Kind, c_int, c_int),
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
            Target::EnumName(e, ..) => {
                let (rc, _, l) = raw::enum_info(e, arg);
                (rc, l)
            }
            Target::EnumItem(e, _, _, k) => {
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
            Target::EnumName(_, k, i) => format!("name of the enumeration of {} {i}", k.name()),
            Target::EnumItem(_, k, i, item) => {
                format!("item {item} name of the enumeration of {} {i}", k.name())
            }
        }
    }

    /// C statements that define `CALL(buf, n)`: the call with this string's buffer and length
    /// (`len` set to `n` first, left with what MPI returned).
    fn c_call(self) -> String {
        let (kind, owner) = match self {
            Target::Info(k, i, _) | Target::EnumName(_, k, i) | Target::EnumItem(_, k, i, _) => {
                (k, i)
            }
        };
        let setup = format!("int idx = {};", c_index(kind, owner));
        let info = |name: &str, desc: &str| {
            format!(
                "get_info({}, idx, {name}, {}, {desc}, {}, NULL, 0)",
                c_kind(kind),
                if name == "NULL" { "&other" } else { "&len" },
                if desc == "NULL" { "&other" } else { "&len" }
            )
        };
        let enum_setup = "MPI_T_enum en = MPI_T_ENUM_NULL;\nint num = 0, value = 0;\n\
                          MPI_Datatype dt;\nint i1, i2, i3, i4, i5, i6, nl = 0, dl = 0;\n";
        let get_enum = match kind {
            Kind::Cvar => {
                "must(MPI_T_cvar_get_info(idx, NULL, &nl, &i1, &dt, &en, NULL, &dl, &i2, &i3), \"get_info\");"
            }
            _ => {
                "must(MPI_T_pvar_get_info(idx, NULL, &nl, &i1, &i2, &dt, &en, NULL, &dl, &i3, &i4, &i5, &i6), \"get_info\");\n(void) i5; (void) i6;"
            }
        };
        match self {
            Target::Info(_, _, 0) => format!(
                "{setup}\nint other = 0;\n#define CALL(b, n) (len = (n), {})",
                info("b", "NULL")
            ),
            Target::Info(..) => format!(
                "{setup}\nint other = 0;\n#define CALL(b, n) (len = (n), {})",
                info("NULL", "b")
            ),
            Target::EnumName(..) => format!(
                "{setup}\n{enum_setup}{get_enum}\n\
                 #define CALL(b, n) (len = (n), MPI_T_enum_get_info(en, &num, b, &len))"
            ),
            Target::EnumItem(.., item) => format!(
                "{setup}\n{enum_setup}{get_enum}\n\
                 #define CALL(b, n) (len = (n), MPI_T_enum_get_item(en, {item}, &value, b, &len))"
            ),
        }
    }
}

/// The enumerations reachable from control and performance variables (first occurrence),
/// with the variable they came from.
fn enums() -> Vec<(Kind, c_int, sys::MPI_T_enum)> {
    let mut out: Vec<(Kind, c_int, sys::MPI_T_enum)> = Vec::new();
    for kind in [Kind::Cvar, Kind::Pvar] {
        for i in valid(kind) {
            if let Some(e) = raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.enumtype
                && !out.iter().any(|(.., x)| *x == e)
            {
                out.push((kind, i, e));
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

/// The C program of one case of `strings.length`: the same checks in the same order, a
/// failing one exits with [`ANSWER`].
fn strings_repro(ctx: &Ctx, t: Target, n: usize, by_len: bool, null: bool) -> Repro {
    repro(ctx, Expect::Exit(ANSWER))
        .line("int len = 0, full_len, n, w, k;\nchar *full, *buf;")
        .line(t.c_call())
        .line(format!(
            r#"#define FAIL(...) do {{ say(__VA_ARGS__); return end(ANSWER); }} while (0)
say("string: {what}");
rc = CALL(NULL, 0);
if (rc != MPI_SUCCESS) FAIL("length query returned %s", rc_name(rc));
full_len = len;
if (full_len < 1) FAIL("length query gave %d: the NUL is not counted", full_len);
full = malloc(full_len);
memset(full, 0xAB, full_len);
rc = CALL(full, full_len);
if (rc != MPI_SUCCESS) FAIL("a buffer of the full length: %s", rc_name(rc));
if (full[full_len - 1] != 0) FAIL("no NUL at length-1 = %d", full_len - 1);
if ((int) strlen(full) != full_len - 1) FAIL("string shorter than the length it reported");
n = {by_len} ? {n} % (full_len + 3) : {n};
if ({null}) {{
    rc = CALL(NULL, n);
    if (rc != MPI_SUCCESS || len != full_len) FAIL("NULL buffer, length %d: %s, length %d", n, rc_name(rc), len);
    return end(ABSENT);
}}
buf = malloc(n + 16);
memset(buf, 0xAB, n + 16);
rc = CALL(buf, n);
if (rc != MPI_SUCCESS) FAIL("buffer of %d: %s", n, rc_name(rc));
if (n == 0) {{
    if (len != full_len) FAIL("length 0 returned %d, not the full length %d", len, full_len);
    for (k = 0; k < 16; k++)
        if ((unsigned char) buf[k] != 0xAB) FAIL("length 0 wrote into the buffer");
    return end(ABSENT);
}}
w = n - 1 < full_len - 1 ? n - 1 : full_len - 1;
if (memcmp(buf, full, w) != 0) FAIL("buffer %d holds another prefix", n);
if (buf[w] != 0) FAIL("buffer %d: no NUL after %d characters", n, w);
for (k = n; k < n + 16; k++)
    if ((unsigned char) buf[k] != 0xAB) FAIL("buffer %d: wrote past its end", n);
if (len != full_len && len != w + 1) FAIL("buffer %d returned length %d (full length %d)", n, len, full_len);
return end(ABSENT);"#,
            what = t.describe(),
            by_len = i32::from(by_len),
            null = i32::from(null),
        ))
}

fn strings_length(ctx: &Ctx) -> Verdict {
    let mut targets = Vec::new();
    for kind in Kind::ALL {
        for i in valid(kind) {
            targets.push(Target::Info(kind, i, 0));
            targets.push(Target::Info(kind, i, 1));
        }
    }
    for (kind, i, e) in enums() {
        targets.push(Target::EnumName(e, kind, i));
        let (_, num, _) = raw::enum_info(e, StrArg::NONE);
        targets.extend((0..num).map(|k| Target::EnumItem(e, kind, i, k)));
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
    let verdict = check_prop(ctx.cases, &rules::STRINGS, strategy, |c| {
        let StrCase {
            target: t,
            buffer_len: n,
            null_buffer: null,
            relative_to_length: by_len,
            ..
        } = c;
        let t = targets[t];
        // Every check below fails as a wrong answer with this case's reproducer; a zero
        // length of a description breaks the rule of absent descriptions.
        let rule = match t {
            Target::Info(_, _, 1) => &rules::EMPTY_DESC,
            _ => &rules::STRINGS,
        };
        failing(
            "answer",
            Grade::Violation,
            rule,
            Some(strings_repro(ctx, t, n, by_len, null)),
        );
        let who = t.describe();
        let (rc, full_len) = t.call(StrArg::NONE);
        prop_assert_eq!(rc, sys::MPI_SUCCESS, "{}: length query failed", who);
        prop_assert!(
            full_len >= 1,
            "{}: length {} does not count the NUL",
            who,
            full_len
        );
        // From here on the rule is the convention itself.
        failing(
            "answer",
            Grade::Violation,
            &rules::STRINGS,
            Some(strings_repro(ctx, t, n, by_len, null)),
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

pub(super) fn name_of(kind: Kind, i: c_int) -> Option<Vec<u8>> {
    raw::full_string(kind, i, 0)
}

fn names_unique(ctx: &Ctx) -> Verdict {
    let mut problems = Vec::new();
    let mut checked = 0;
    for kind in Kind::ALL {
        let mut seen: BTreeMap<(c_int, Vec<u8>), c_int> = BTreeMap::new();
        for i in valid(kind) {
            checked += 1;
            let k = c_kind(kind);
            let Some(name) = name_of(kind, i) else {
                problems.push(
                    Found::problem(
                        "error",
                        Grade::Violation,
                        &rules::STRINGS,
                        format!("{} {i}: the name cannot be read", kind.name()),
                    )
                    .with_repro(repro(ctx, Expect::Exit(ANSWER)).line(format!(
                        "char text[4096];\nrc = describe({k}, {i}, text, sizeof text);\n\
                         say(\"{k} {i}: %s\", text);\nreturn end(rc != MPI_SUCCESS ? ANSWER : ABSENT);"
                    ))),
                );
                continue;
            };
            let name_repro = |j: c_int| {
                repro(ctx, Expect::Exit(ANSWER)).line(format!(
                    "char a[4096], b[4096];\nint la = sizeof a, lb = sizeof b, dl = 0;\n\
                     must(get_info({k}, {i}, a, &la, NULL, &dl, NULL, 0), \"get_info\");\n\
                     must(get_info({k}, {j}, b, &lb, NULL, &dl, NULL, 0), \"get_info\");\n\
                     say(\"names of {i} and {j}: \\\"%s\\\", \\\"%s\\\"\", a, b);\n\
                     return end(a[0] == 0 || ({i} != {j} && strcmp(a, b) == 0) ? ANSWER : ABSENT);"
                ))
            };
            if name.is_empty() {
                problems.push(
                    Found::problem(
                        "answer",
                        Grade::Violation,
                        &rules::NAMES,
                        format!("{} {i}: empty name", kind.name()),
                    )
                    .with_repro(name_repro(i)),
                );
                continue;
            }
            let class = if kind == Kind::Pvar {
                raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.ints[1]
            } else {
                0
            };
            if let Some(j) = seen.insert((class, name.clone()), i) {
                problems.push(
                    Found::problem(
                        "answer",
                        Grade::Violation,
                        &rules::NAMES,
                        format!(
                            "{} {j} and {i} are both called {:?}",
                            kind.name(),
                            String::from_utf8_lossy(&name)
                        ),
                    )
                    .with_repro(name_repro(j)),
                );
            }
        }
    }
    from_problems(&problems).noting(format!("{checked} names"))
}

fn info_stable(ctx: &Ctx) -> Verdict {
    let counts = Kind::ALL.map(|k| k.count().max(0));
    check_prop(
        ctx.cases,
        &rules::SAME_INFO,
        (0usize..3, 0usize..100_000),
        |(k, i)| {
            let kind = Kind::ALL[k];
            if counts[k] == 0 {
                return Ok(());
            }
            let i = c_int::try_from(i).unwrap_or(0) % counts[k];
            let next = (i + 1) % counts[k];
            let ck = c_kind(kind);
            failing(
                "answer",
                Grade::Violation,
                &rules::SAME_INFO,
                Some(repro(ctx, Expect::Exit(ANSWER)).line(format!(
                    "char a[8192], b[8192], c[8192];\nint ra = describe({ck}, {i}, a, sizeof a);\n\
                     describe({ck}, {next}, c, sizeof c);\nint rb = describe({ck}, {i}, b, sizeof b);\n\
                     say(\"first:  %s\", a);\nsay(\"second: %s\", b);\n\
                     return end(ra == MPI_SUCCESS && strcmp(a, b) != 0 ? ANSWER : ABSENT);"
                ))),
            );
            let first = (
                raw::info(kind, i, StrArg::NONE, StrArg::NONE).0,
                raw::full_string(kind, i, 0),
                raw::full_string(kind, i, 1),
            );
            // Other queries in between.
            let _ = raw::info(kind, next, StrArg::NONE, StrArg::NONE);
            let second = (
                raw::info(kind, i, StrArg::NONE, StrArg::NONE).0,
                raw::full_string(kind, i, 0),
                raw::full_string(kind, i, 1),
            );
            prop_assert_eq!(first, second, "{} {} answered differently", kind.name(), i);
            Ok(())
        },
    )
}

fn no_holes(_ctx: &Ctx) -> Verdict {
    if let Err(e) = raw::init() {
        return Verdict::Skip(format!("MPI_T_init_thread failed: {e}"));
    }
    let mut first = None;
    let mut counts = Vec::new();
    let mut universe = None;
    for (after, phase) in [(false, "before MPI_Init"), (true, "after MPI_Init")] {
        if after {
            universe = Some(mpi::initialize());
        }
        for kind in Kind::ALL {
            let n = kind.count().max(0);
            let mut holes = 0;
            for i in 0..n {
                let rc = raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.rc;
                if rc != sys::MPI_SUCCESS {
                    holes += 1;
                    first.get_or_insert_with(|| {
                        let k = c_kind(kind);
                        let r = Repro::new(1, Expect::Exit(ANSWER))
                            .init(after)
                            .line(format!(
                                "char text[8192];\nint n = 0;\nMPI_T_{}_get_num(&n);\n\
                             rc = describe({k}, {i}, text, sizeof text);\n\
                             say(\"{} {i} of %d: %s\", n, text);\n\
                             return end({i} < n && rc != MPI_SUCCESS ? ANSWER : ABSENT);",
                                kind.name(),
                                kind.name()
                            ));
                        Found::problem(
                            "holes",
                            Grade::Violation,
                            &rules::INDICES,
                            format!(
                                "{}_get_info({i}) {phase}, num = {n}: {}",
                                kind.name(),
                                raw::rc_name(rc)
                            ),
                        )
                        .with_repro(r)
                    });
                }
            }
            counts.push(format!("{holes} of {n} {} {phase}", kind.plural()));
        }
    }
    drop(universe);
    match first {
        None => Verdict::Pass(counts.join(", ")),
        Some(p) => match from_problems(&[p]) {
            Verdict::Found(mut f) => {
                f[0].detail = format!("holes: {}", counts.join(", "));
                Verdict::Found(f)
            }
            v => v,
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
    if let Err(e) = raw::init() {
        return Verdict::Skip(format!("MPI_T_init_thread failed: {e}"));
    }
    let before = snapshot();
    let universe = mpi::initialize();
    let after = snapshot();
    drop(universe);
    let mut problems = Vec::new();
    let mut grew = Vec::new();
    for ((k, n0, names0), (_, n1, names1)) in before.iter().zip(&after) {
        grew.push(format!("{} {n0} -> {n1}", k.plural()));
        let kind = c_kind(*k);
        if n1 < n0 {
            problems.push(
                Found::problem(
                    "answer",
                    Grade::Violation,
                    &rules::NO_DELETE,
                    format!("{} count shrank from {n0} to {n1}", k.name()),
                )
                .with_repro(Repro::new(1, Expect::Exit(ANSWER)).line(format!(
                    "int n0 = 0, n1 = 0;\nt_init();\nMPI_T_{0}_get_num(&n0);\nmpi_init();\n\
                     MPI_T_{0}_get_num(&n1);\nsay(\"{0}s: %d before MPI_Init, %d after\", n0, n1);\n\
                     return end(n1 < n0 ? ANSWER : ABSENT);",
                    k.name()
                ))),
            );
        }
        for (i, (a, b)) in names0.iter().zip(names1).enumerate() {
            if let (Some(a), b) = (a, b)
                && Some(a) != b.as_ref()
            {
                problems.push(
                    Found::problem(
                        "answer",
                        Grade::Violation,
                        &rules::NO_DELETE,
                        format!(
                            "{} {i} was {:?} before MPI_Init, {:?} after",
                            k.name(),
                            String::from_utf8_lossy(a),
                            b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned())
                        ),
                    )
                    .with_repro(Repro::new(1, Expect::Exit(ANSWER)).line(
                        format!(
                            "char a[4096] = \"\", b[4096] = \"\";\n\
                             int la = sizeof a, lb = sizeof b, dl = 0, ra, rb;\nt_init();\n\
                             ra = get_info({kind}, {i}, a, &la, NULL, &dl, NULL, 0);\n\
                             mpi_init();\nrb = get_info({kind}, {i}, b, &lb, NULL, &dl, NULL, 0);\n\
                             say(\"{} {i} before MPI_Init: %s \\\"%s\\\"; after: %s \\\"%s\\\"\", \
                             rc_name(ra), a, rc_name(rb), b);\n\
                             return end(ra == MPI_SUCCESS && (rb != MPI_SUCCESS || \
                             strcmp(a, b) != 0) ? ANSWER : ABSENT);",
                            k.name()
                        ),
                    )),
                );
            }
        }
    }
    match from_problems(&problems) {
        Verdict::Found(mut f) => {
            for x in &mut f {
                x.detail = format!("{} ({})", x.detail, grew.join(", "));
            }
            Verdict::Found(f)
        }
        v => v.noting(grew.join(", ")),
    }
}

fn roundtrip(ctx: &Ctx, kind: Kind) -> Verdict {
    let mut targets: Vec<(c_int, Vec<u8>, c_int)> = Vec::new();
    for i in valid(kind) {
        let class = raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.ints[1];
        if let Some(n) = name_of(kind, i) {
            targets.push((i, n, if kind == Kind::Pvar { class } else { 0 }));
        }
    }
    if targets.is_empty() {
        return Verdict::Skip(format!("no {}s {}", kind.name(), phase(ctx)));
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
    let verdict = check_prop(
        ctx.cases,
        &rules::GET_INDEX,
        strategy,
        |(t, _, _, mutation)| {
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
            let lit = c_str(&shown);
            let call = match kind {
                Kind::Pvar => format!("MPI_T_pvar_get_index({lit}, {class}, &j)"),
                _ => format!("MPI_T_{}_get_index({lit}, &j)", kind.name()),
            };
            // A C program making the same lookup; `cond` says when it shows the finding.
            let grade = |kind: &'static str, grade: Grade, expect: Expect, cond: &str| {
                let r = repro(ctx, expect)
                    .line("int j = -1;")
                    .call(&call, rc, Some(cond));
                failing(kind, grade, &rules::GET_INDEX, Some(r));
            };
            if probe == *name {
                grade(
                    "error",
                    Grade::Violation,
                    Expect::Exit(ANSWER),
                    "rc != MPI_SUCCESS",
                );
                prop_assert_eq!(
                    rc,
                    sys::MPI_SUCCESS,
                    "get_index({:?}) failed: {}",
                    shown,
                    raw::rc_name(rc)
                );
                grade(
                    "answer",
                    Grade::Violation,
                    Expect::Exit(ANSWER),
                    &format!("rc == MPI_SUCCESS && j != {i}"),
                );
                prop_assert_eq!(j, *i, "get_index({:?})", shown);
            } else if rc == sys::MPI_SUCCESS {
                let other = name_of(kind, j);
                grade(
                    "answer",
                    Grade::Violation,
                    Expect::Exit(ANSWER),
                    "rc == MPI_SUCCESS",
                );
                prop_assert_eq!(
                    other.as_deref(),
                    Some(&probe[..]),
                    "get_index({:?}) = {} names another",
                    shown,
                    j
                );
            } else {
                grade("error", Grade::ErrorClass, Expect::Exit(CLASS), "");
                prop_assert!(
                    raw::class(rc) == Some(ErrorClass::InvalidName),
                    "get_index({:?}): {}",
                    shown,
                    raw::rc_name(rc)
                );
            }
            Ok(())
        },
    );
    verdict.noting(format!("{n} {} names {}", kind.name(), phase(ctx)))
}

/// `after MPI_Init` or `before MPI_Init`, for notes.
fn phase(ctx: &Ctx) -> &'static str {
    if ctx.after_init {
        "after MPI_Init"
    } else {
        "before MPI_Init"
    }
}

/// The C program that checks every category: members in range, no cycle.
const CATEGORY_DAG_C: &str = r#"int n[3] = {0, 0, 0}, c, k, len, bad = 0;
int *kids[4096], nkids[4096], colour[4096], stack[4096], next[4096], top;
MPI_T_cvar_get_num(&n[0]);
MPI_T_pvar_get_num(&n[1]);
MPI_T_category_get_num(&n[2]);
if (n[2] > 4096) n[2] = 4096;
for (c = 0; c < n[2]; c++) {
    int num[3], nl = 0, dl = 0, of;
    nkids[c] = 0;
    kids[c] = NULL;
    colour[c] = 0;
    if (MPI_T_category_get_info(c, NULL, &nl, NULL, &dl, &num[0], &num[1], &num[2]) != MPI_SUCCESS)
        continue;
    for (of = 0; of < 3; of++) {
        int *m = calloc(num[of] + 1, sizeof(int));
        len = num[of];
        rc = of == 0 ? MPI_T_category_get_cvars(c, len, m)
           : of == 1 ? MPI_T_category_get_pvars(c, len, m)
                     : MPI_T_category_get_categories(c, len, m);
        if (rc != MPI_SUCCESS) {
            say("category %d: member query %d returned %s", c, of, rc_name(rc));
            bad = 1;
            continue;
        }
        for (k = 0; k < len; k++)
            if (m[k] < 0 || m[k] >= n[of]) {
                say("category %d lists member %d of kind %d (num = %d)", c, m[k], of, n[of]);
                bad = 1;
            }
        if (of == 2) {
            kids[c] = m;
            nkids[c] = len;
        } else {
            free(m);
        }
    }
}
for (c = 0; c < n[2]; c++) {
    if (colour[c]) continue;
    top = 0;
    stack[0] = c;
    next[0] = 0;
    colour[c] = 1;
    while (top >= 0) {
        int node = stack[top];
        if (next[top] < nkids[node]) {
            int kid = kids[node][next[top]++];
            if (kid < 0 || kid >= n[2]) continue;
            if (colour[kid] == 1) {
                say("category cycle through %d -> %d", node, kid);
                bad = 1;
            } else if (colour[kid] == 0 && top + 1 < 4096) {
                colour[kid] = 1;
                stack[++top] = kid;
                next[top] = 0;
            }
        } else {
            colour[node] = 2;
            top--;
        }
    }
}
return end(bad ? ANSWER : ABSENT);"#;

fn category_dag(ctx: &Ctx) -> Verdict {
    let counts = Kind::ALL.map(|k| k.count().max(0));
    let mut problems = Vec::new();
    let mut children: BTreeMap<c_int, Vec<c_int>> = BTreeMap::new();
    let problem = |text: String| {
        Found::problem("answer", Grade::Violation, &rules::CATEGORY_DAG, text)
            .with_repro(repro(ctx, Expect::Exit(ANSWER)).line(CATEGORY_DAG_C))
    };
    for c in valid(Kind::Category) {
        let f = raw::info(Kind::Category, c, StrArg::NONE, StrArg::NONE).0;
        for (slot, of) in Kind::ALL.into_iter().enumerate() {
            let (rc, m) = raw::members(c, of, f.ints[slot]);
            if rc != sys::MPI_SUCCESS {
                problems.push(problem(format!(
                    "category {c}: get_{}s: {}",
                    of.name(),
                    raw::rc_name(rc)
                )));
                continue;
            }
            for x in &m {
                if *x < 0 || *x >= counts[slot] {
                    problems.push(problem(format!(
                        "category {c} lists {} {x} (num = {})",
                        of.name(),
                        counts[slot]
                    )));
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
                        problems.push(problem(format!("category cycle {}", cyc.join(" -> "))));
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
    if children.is_empty() {
        return Verdict::Skip(format!("no categories {}", phase(ctx)));
    }
    from_problems(&problems).noting(format!(
        "{} categories, {} subcategory links {}",
        children.len(),
        children.values().map(Vec::len).sum::<usize>(),
        phase(ctx)
    ))
}

fn pvar_class_datatype(ctx: &Ctx) -> Verdict {
    let mut problems = Vec::new();
    let mut n = 0;
    for i in valid(Kind::Pvar) {
        n += 1;
        let f = raw::info(Kind::Pvar, i, StrArg::NONE, StrArg::NONE).0;
        let Some(class) = PvarClass::from_raw(f.ints[1]).ok() else {
            problems.push(Found::problem(
                "answer",
                Grade::Violation,
                &rules::CLASS_DATATYPES,
                format!("pvar {i}: class {} is none of the standard's", f.ints[1]),
            ));
            continue;
        };
        let Ok(dt) = f.datatype.parse::<mpit_core::Datatype>() else {
            continue;
        };
        if class.allows(dt) {
            continue;
        }
        let allowed: Vec<String> = class
            .allowed_datatypes()
            .iter()
            .map(|d| format!("dt != {}", d.c_name()))
            .collect();
        let name = name_of(Kind::Pvar, i).unwrap_or_default();
        problems.push(
            Found::problem(
                "answer",
                Grade::Violation,
                &rules::CLASS_DATATYPES,
                format!(
                    "pvar {i} {:?}: class {class} with datatype {dt}",
                    String::from_utf8_lossy(&name)
                ),
            )
            .with_repro(repro(ctx, Expect::Exit(ANSWER)).line(format!(
                "int idx = {}, verb, cls, bind, ro, cont, at, nl = 0, dl = 0;\n\
                 MPI_Datatype dt;\nMPI_T_enum en;\n\
                 must(MPI_T_pvar_get_info(idx, NULL, &nl, &verb, &cls, &dt, &en, NULL, &dl, \
                 &bind, &ro, &cont, &at), \"MPI_T_pvar_get_info\");\n\
                 say(\"pvar %d: class %d, datatype {dt} is %s\", idx, cls, \
                 {} ? \"not allowed\" : \"allowed\");\nreturn end({} ? ANSWER : ABSENT);",
                c_index(Kind::Pvar, i),
                allowed.join(" && "),
                allowed.join(" && ")
            ))),
        );
    }
    if n == 0 {
        return Verdict::Skip(format!("no performance variables {}", phase(ctx)));
    }
    from_problems(&problems).noting(format!("{n} performance variables {}", phase(ctx)))
}

fn enum_items(ctx: &Ctx) -> Verdict {
    let all = enums();
    if all.is_empty() {
        return Verdict::Skip(format!(
            "no variable has an enumeration type {}",
            phase(ctx)
        ));
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
    for (kind, i, e) in all {
        let owner = format!("{} {i}", kind.name());
        // C: the enumeration of the owner, looked up by name.
        let get_enum = Target::EnumName(e, kind, i).c_call();
        let answer = || {
            repro(ctx, Expect::Exit(ANSWER)).line("int len = 0;").line(&get_enum).line(
                "char a[4096], b[4096];\nint k, j, va, vb, la, lb, bad = 0;\n\
                 must(MPI_T_enum_get_info(en, &num, NULL, &len), \"MPI_T_enum_get_info\");\n\
                 for (k = 0; k < num; k++) {\n    la = sizeof a; lb = sizeof b;\n    \
                 if (MPI_T_enum_get_item(en, k, &va, a, &la) != MPI_SUCCESS || \
                 MPI_T_enum_get_item(en, k, &vb, b, &lb) != MPI_SUCCESS) { say(\"item %d cannot be read\", k); bad = 1; continue; }\n    \
                 if (a[0] == 0) { say(\"item %d has an empty name\", k); bad = 1; }\n    \
                 if (va != vb || strcmp(a, b) != 0) { say(\"item %d changed\", k); bad = 1; }\n    \
                 for (j = 0; j < k; j++) {\n        char c[4096]; int lc = sizeof c, vc;\n        \
                 if (MPI_T_enum_get_item(en, j, &vc, c, &lc) == MPI_SUCCESS && strcmp(a, c) == 0) \
                 { say(\"item name %s repeated\", a); bad = 1; }\n    }\n}\n\
                 return end(bad ? ANSWER : ABSENT);",
            )
        };
        let problem = |text: String| {
            Found::problem("answer", Grade::Violation, &rules::ENUM_ITEMS, text)
                .with_repro(answer())
        };
        let (rc, num, _) = raw::enum_info(e, StrArg::NONE);
        if rc != sys::MPI_SUCCESS {
            problems.push(problem(format!(
                "enum of {owner}: get_info: {}",
                raw::rc_name(rc)
            )));
            continue;
        }
        let mut names = BTreeSet::new();
        for k in 0..num {
            let a = item_name(e, k);
            let b = item_name(e, k);
            match (&a, &b) {
                (Some((_, n)), _) if n.is_empty() => problems.push(problem(format!(
                    "enum of {owner}: item {k} has an empty name"
                ))),
                (Some((_, n)), _) if !names.insert(n.clone()) => problems.push(problem(format!(
                    "enum of {owner}: item name {:?} repeated",
                    String::from_utf8_lossy(n)
                ))),
                (None, _) => {
                    problems.push(problem(format!("enum of {owner}: item {k} cannot be read")))
                }
                _ => {}
            }
            if a != b {
                problems.push(problem(format!(
                    "enum of {owner}: item {k} changed between queries"
                )));
            }
        }
        for k in [num, num + 1, -1] {
            let call = format!("MPI_T_enum_get_item(en, {k}, &value, NULL, &len)");
            let invalid = |expect: Expect, rc: c_int| {
                repro(ctx, expect)
                    .line("int len = 0;")
                    .line(&get_enum)
                    .call(&call, rc, None)
            };
            let text = format!("MPI_T_enum_get_item(enum of {owner}, {k}) ({num} items)");
            announce_with(
                Some(&format!("enum:{owner}:{k}")),
                &text,
                Grade::UncheckedInput,
                &rules::ERROR_CODES,
                Some(invalid(Expect::Crash, 0)),
            );
            let (rc, _, _) = raw::enum_item(e, k, StrArg::NONE);
            match raw::class(rc) {
                Some(ErrorClass::InvalidItem) => {}
                _ if rc == sys::MPI_SUCCESS => problems.push(
                    Found::problem(
                        "accepted",
                        Grade::UncheckedInput,
                        &rules::ERROR_CODES,
                        format!("{text} succeeded, not MPI_T_ERR_INVALID_ITEM"),
                    )
                    .with_repro(invalid(Expect::Exit(ACCEPTED), rc)),
                ),
                _ => problems.push(
                    Found::problem(
                        "error",
                        Grade::ErrorClass,
                        &rules::ERROR_CODES,
                        format!(
                            "{text} gave {}, not MPI_T_ERR_INVALID_ITEM",
                            raw::rc_name(rc)
                        ),
                    )
                    .with_repro(invalid(Expect::Exit(CLASS), rc)),
                ),
            }
        }
    }
    from_problems(&problems)
}

fn errors_index(ctx: &Ctx, kind: Kind) -> Verdict {
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
    let name = kind.name();
    // The C calls of each check, with what they need declared.
    let decls = "int n = 0, nl = 0, dl = 0, a, b, c, d, e, f, count, members[1];\n\
                 MPI_Datatype dt;\nMPI_T_enum en;\nMPI_T_cvar_handle ch;\n\
                 MPI_T_pvar_handle ph;\nMPI_T_pvar_session session;";
    let c_calls = |i: &str| -> [String; 2] {
        let info = match kind {
            Kind::Cvar => {
                format!("MPI_T_cvar_get_info({i}, NULL, &nl, &a, &dt, &en, NULL, &dl, &b, &c)")
            }
            Kind::Pvar => format!(
                "MPI_T_pvar_get_info({i}, NULL, &nl, &a, &b, &dt, &en, NULL, &dl, &c, &d, &e, &f)"
            ),
            Kind::Category => {
                format!("MPI_T_category_get_info({i}, NULL, &nl, NULL, &dl, &a, &b, &c)")
            }
        };
        let second = match kind {
            Kind::Cvar => format!("MPI_T_cvar_handle_alloc({i}, NULL, &ch, &count)"),
            Kind::Pvar => format!("MPI_T_pvar_handle_alloc(session, {i}, NULL, &ph, &count)"),
            Kind::Category => format!("MPI_T_category_get_cvars({i}, 0, members)"),
        };
        [info, second]
    };
    // Every reproducer's start: the declarations, a session, the variables' count.
    let opening = |expect: Expect| {
        repro(ctx, expect).line(decls).line(format!(
            "must(MPI_T_pvar_session_create(&session), \"MPI_T_pvar_session_create\");\n\
             MPI_T_{name}_get_num(&n);\nsay(\"{name}s: %d\", n);"
        ))
    };
    // The calls of a case up to `call` (a crash may need the ones before it), then `call`.
    let for_call = |expect: Expect, before: &[String], call: &str, rc: c_int| {
        opening(expect)
            .line(
                before
                    .iter()
                    .map(|b| format!("rc = {b};\nsay(\"{b}: %s\", rc_name(rc));"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
            .call(call, rc, None)
    };
    // A crash: reading out of bounds crashes or not depending on the process's memory, so the
    // program tries the minimal crashing index, then num + 2^k and -2^k, making the case's
    // calls up to the one that crashed for each.
    let crash_repro = |i: c_int, upto: usize| {
        let calls = c_calls("i");
        let steps: Vec<String> = calls[..=upto]
            .iter()
            .map(|c| format!("    rc = {c};\n    say(\"  {c}: %s\", rc_name(rc));"))
            .collect();
        opening(Expect::Crash).line(format!(
                "int tries[64], m = 0, j, k, i;\ntries[m++] = {i};\n\
                 for (k = 0; k < 30; k++) {{ tries[m++] = n + (1 << k); tries[m++] = -(1 << k); }}\n\
                 for (j = 0; j < m; j++) {{\n    i = tries[j];\n    say(\"index %d\", i);\n{}\n}}\n\
                 say(\"no crash\");\nreturn end(ABSENT);",
                steps.join("\n")
            ))
    };
    // An index accepted: what lies past the table decides this too (Intel MPI's pvar table after
    // `MPI_Init`: of num + 0..5000, 224 accepted, 2539 crashed, the rest refused), so the program
    // tries the case's index, then num, num + 1, ... up to num + 100,000, each in a child process
    // (most crash), until one is accepted; it says which.
    let accepted_repro = |i: c_int, upto: usize| {
        let calls = c_calls("i");
        let steps: Vec<String> = calls[..=upto]
            .iter()
            .map(|c| format!("        rc = {c};"))
            .collect();
        let last = calls[upto].replace('"', "'");
        opening(Expect::Exit(ACCEPTED)).line(format!(
                "int j, i, crashed = 0, refused = 0, st;\n\
                 for (j = -1; j < 100000; j++) {{\n    i = j < 0 ? {i} : n + j;\n\
                 \x20   pid_t pid = fork();\n    if (pid == 0) {{\n{}\n        _exit(rc == MPI_SUCCESS ? 1 : 0);\n    }}\n\
                 \x20   if (pid < 0 || waitpid(pid, &st, 0) != pid) {{ say(\"fork failed\"); return end(SETUP); }}\n\
                 \x20   if (WIFEXITED(st) && WEXITSTATUS(st) == 1) {{\n\
                 \x20       say(\"{last} with i = %d returned MPI_SUCCESS (%d crashed, %d refused before it)\", i, crashed, refused);\n\
                 \x20       return end(ACCEPTED);\n    }}\n\
                 \x20   if (WIFEXITED(st)) refused++; else crashed++;\n}}\n\
                 say(\"no index accepted (%d crashed, %d refused)\", crashed, refused);\nreturn end(ABSENT);",
                steps.join("\n")
            ))
    };
    check_prop(ctx.cases, &rules::ERROR_CODES, index, |i| {
        let mut calls: Vec<(String, c_int)> = Vec::new();
        let [c_info, c_second] = c_calls(&i.to_string());
        let when = phase(ctx);
        announce_with(
            None,
            &format!("MPI_T_{name}_get_info({i}) with num = {n} {when}"),
            Grade::UncheckedInput,
            &rules::ERROR_CODES,
            Some(crash_repro(i, 0)),
        );
        calls.push((
            c_info.clone(),
            raw::info(kind, i, StrArg::NONE, StrArg::NONE).0.rc,
        ));
        let second = match kind {
            Kind::Cvar => format!("MPI_T_cvar_handle_alloc({i}) with num = {n} {when}"),
            Kind::Pvar => format!("MPI_T_pvar_handle_alloc({i}) with num = {n} {when}"),
            Kind::Category => format!("MPI_T_category_get_cvars({i}, 0) with num = {n} {when}"),
        };
        let first = [c_info.clone()];
        announce_with(
            None,
            &second,
            Grade::UncheckedInput,
            &rules::ERROR_CODES,
            Some(crash_repro(i, 1)),
        );
        let rc = match kind {
            Kind::Cvar => {
                let (rc, h, _) = raw::cvar_alloc(i, std::ptr::null_mut());
                if rc == sys::MPI_SUCCESS {
                    let mut h = h;
                    // SAFETY: a handle MPI just returned.
                    unsafe { sys::MPI_T_cvar_handle_free(&mut h) };
                }
                rc
            }
            Kind::Pvar => raw::pvar_alloc(session, i, std::ptr::null_mut()).0,
            Kind::Category => raw::members(i, Kind::Cvar, 0).0,
        };
        calls.push((c_second, rc));
        for (k, (call, rc)) in calls.iter().enumerate() {
            let (call, rc) = (call.as_str(), *rc);
            if raw::class(rc) == Some(ErrorClass::InvalidIndex) {
                continue;
            }
            let before = &first[..k];
            if rc == sys::MPI_SUCCESS {
                failing(
                    "accepted",
                    Grade::UncheckedInput,
                    &rules::ERROR_CODES,
                    Some(accepted_repro(i, k)),
                );
            } else {
                failing(
                    "error",
                    Grade::ErrorClass,
                    &rules::ERROR_CODES,
                    Some(for_call(Expect::Exit(CLASS), before, call, rc)),
                );
            }
            prop_assert!(
                false,
                "{} with num = {} {} gave {}, not MPI_T_ERR_INVALID_INDEX",
                call,
                n,
                when,
                raw::rc_name(rc)
            );
        }
        Ok(())
    })
    .noting(format!("{n} {}", kind.plural()))
}
