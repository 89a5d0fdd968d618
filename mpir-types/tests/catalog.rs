//! The catalog of §2.8's definitions, the capabilities derived from found
//! symbols, and `MPIR_debug_state`'s values.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use mpir_types::*;
use proptest::prelude::*;

/// §2.8 has seventeen definitions, §2.8.1 to §2.8.17 in this order, each
/// with a distinct name; `Symbol` indexes the catalog.
#[test]
fn catalog_is_section_2_8() {
    let cat = catalog();
    assert_eq!(cat.len(), 17);
    let names: BTreeSet<_> = cat.iter().map(|i| i.name).collect();
    assert_eq!(names.len(), 17);
    for (i, info) in cat.iter().enumerate() {
        assert_eq!(info.section, format!("2.8.{}", i + 1));
        assert_eq!(Symbol::ALL[i], info.symbol);
        assert_eq!(info.symbol.info(), info);
        assert_eq!(Symbol::from_name(info.name), Some(info.symbol));
        assert_eq!(info.symbol.to_string(), info.name);
        assert!(!info.meaning.is_empty() && !info.c_type.is_empty());
        assert!(info.declaration.contains(info.name));
    }
    assert_eq!(Symbol::from_name("MPIR_attach_fifo"), None);
    assert_eq!(Symbol::from_name("mpir_proctable"), None);
}

/// The spec's "Definition is required" / "not required", holders and
/// writers, verbatim from §2.8.
#[test]
fn facts_of_each_definition() {
    let required: Vec<_> = catalog()
        .iter()
        .filter(|i| i.required.is_required())
        .map(|i| i.name)
        .collect();
    assert_eq!(
        required,
        [
            "VOLATILE",
            "MPIR_PROCDESC",
            "MPIR_proctable",
            "MPIR_proctable_size",
            "MPIR_debug_state",
            "MPIR_Breakpoint"
        ]
    );
    assert_eq!(
        Symbol::IAmStarter.info().required,
        Requirement::RequiredForSeparateStarter
    );
    let in_mpi: Vec<_> = catalog()
        .iter()
        .filter(|i| i.holder == Holder::MpiProcess)
        .map(|i| i.name)
        .collect();
    assert_eq!(in_mpi, ["MPIR_debug_gate", "MPIR_dll_name"]);
    let tool_writes: Vec<_> = catalog()
        .iter()
        .filter(|i| i.written_by == Some(Party::Tool))
        .map(|i| i.name)
        .collect();
    assert_eq!(
        tool_writes,
        [
            "MPIR_being_debugged",
            "MPIR_debug_gate",
            "MPIR_executable_path",
            "MPIR_server_arguments"
        ]
    );
    let markers: Vec<_> = catalog()
        .iter()
        .filter(|i| i.presence_only)
        .map(|i| i.name)
        .collect();
    assert_eq!(
        markers,
        [
            "MPIR_i_am_starter",
            "MPIR_acquired_pre_main",
            "MPIR_force_to_main",
            "MPIR_partial_attach_ok",
            "MPIR_ignore_queues"
        ]
    );
    assert!(
        catalog()
            .iter()
            .all(|i| i.deprecated == (i.symbol == Symbol::DllName))
    );
    assert_eq!(Symbol::Breakpoint.info().kind, SymbolKind::Function);
    assert_eq!(Symbol::ProcDesc.info().kind, SymbolKind::Type);
    assert_eq!(Symbol::Volatile.info().kind, SymbolKind::Macro);
    assert_eq!(Symbol::Volatile.info().holder, Holder::Either);
    assert_eq!(Symbol::ExecutablePath.info().c_type, "char[256]");
    assert_eq!(Symbol::ServerArguments.info().c_type, "char[1024]");
    assert_eq!(Symbol::Proctable.info().c_type, "MPIR_PROCDESC *");
}

fn symbol_set() -> impl Strategy<Value = SymbolSet> {
    proptest::collection::vec(proptest::sample::select(Symbol::ALL.to_vec()), 0..17)
        .prop_map(|v| v.into_iter().collect())
}

proptest! {
    /// Each capability is the spec's rule over the symbols found:
    /// acquisition needs `MPIR_proctable`, `MPIR_proctable_size`,
    /// `MPIR_debug_state` and `MPIR_Breakpoint` (§2.8.4–§2.8.6, §2.8.9); a
    /// starter without `MPIR_i_am_starter` is rank 0 (§2.7 step 6); without
    /// `MPIR_partial_attach_ok` the tool must attach to every process and
    /// open its gate (§2.7 step 18); tool daemons need
    /// `MPIR_executable_path`, `MPIR_server_arguments` and the
    /// `MPIR_being_debugged` trigger (§2.6.1); message queues need
    /// `MPIR_dll_name` and no `MPIR_ignore_queues` (§2.8.14, §2.8.15).
    /// Names outside §2.8 change nothing.
    #[test]
    fn capabilities_follow_the_spec(set in symbol_set(), junk in proptest::collection::vec("[A-Za-z_]{1,20}", 0..5)) {
        let has = |s| set.contains(s);
        let mut names: Vec<String> = set.iter().map(|s| s.name().to_string()).collect();
        names.extend(junk.into_iter().filter(|n| Symbol::from_name(n).is_none()));
        let c = Capabilities::from_names(&names);
        prop_assert_eq!(c, Capabilities::from_set(set));
        prop_assert_eq!(c.is_starter, has(Symbol::Breakpoint));
        prop_assert_eq!(c.can_acquire, has(Symbol::Proctable) && has(Symbol::ProctableSize)
            && has(Symbol::DebugState) && has(Symbol::Breakpoint));
        prop_assert_eq!(c.can_acquire, set.missing_required(Holder::Starter).is_empty());
        prop_assert_eq!(c.starter_is_rank0, has(Symbol::Breakpoint) && !has(Symbol::IAmStarter));
        prop_assert_eq!(c.separate_starter, has(Symbol::IAmStarter));
        prop_assert_eq!(c.must_attach_all, !has(Symbol::PartialAttachOk));
        prop_assert_eq!(c.supports_partial_attach, has(Symbol::PartialAttachOk));
        prop_assert_eq!(c.supports_debug_gate, has(Symbol::DebugGate));
        prop_assert_eq!(c.supports_tool_daemons, has(Symbol::ExecutablePath)
            && has(Symbol::ServerArguments) && has(Symbol::BeingDebugged));
        prop_assert_eq!(c.has_message_queues, has(Symbol::DllName) && !has(Symbol::IgnoreQueues));
        prop_assert_eq!(c.can_signal_presence, has(Symbol::BeingDebugged));
        prop_assert_eq!(c.has_abort_string, has(Symbol::DebugAbortString));
        prop_assert_eq!(c.acquired_pre_main, has(Symbol::AcquiredPreMain));
        prop_assert_eq!(c.force_to_main, has(Symbol::ForceToMain));
    }

    /// §2.8.6: 0, 1, 2 are MPIR_NULL, MPIR_DEBUG_SPAWNED,
    /// MPIR_DEBUG_ABORTING; every other value is kept as `Unknown` and maps
    /// back to itself.
    #[test]
    fn debug_state_raw_round_trip(raw in any::<i32>()) {
        let s = DebugState::from_raw(raw);
        prop_assert_eq!(s.to_raw(), raw);
        prop_assert_eq!(i32::from(s), raw);
        prop_assert_eq!(matches!(s, DebugState::Unknown(_)), !(0..=2).contains(&raw));
    }
}

#[test]
fn debug_state_names() {
    assert_eq!(DebugState::from_raw(MPIR_NULL), DebugState::Null);
    assert_eq!(
        DebugState::from_raw(MPIR_DEBUG_SPAWNED),
        DebugState::Spawned
    );
    assert_eq!(
        DebugState::from_raw(MPIR_DEBUG_ABORTING),
        DebugState::Aborting
    );
    assert_eq!(DebugState::Spawned.to_string(), "MPIR_DEBUG_SPAWNED (1)");
    assert_eq!(
        DebugState::Unknown(7).to_string(),
        "unknown MPIR_debug_state (7)"
    );
    assert_eq!(
        (BEING_DEBUGGED, NOT_BEING_DEBUGGED, DEBUG_GATE_OPEN),
        (1, 0, 1)
    );
}

/// The symbols Open MPI 4.1.4 (Debian) defines, as `nm -D` lists them:
/// the starter's in `libopen-rte.so.40` (used by `mpirun`), the MPI
/// process's in `libmpi.so.40`, with vendor extensions the catalog ignores.
const OPEN_MPI_4_1_STARTER: [&str; 14] = [
    "MPIR_Breakpoint",
    "MPIR_attach_fifo",
    "MPIR_being_debugged",
    "MPIR_debug_state",
    "MPIR_executable_path",
    "MPIR_force_to_main",
    "MPIR_forward_comm",
    "MPIR_forward_output",
    "MPIR_i_am_starter",
    "MPIR_partial_attach_ok",
    "MPIR_proctable",
    "MPIR_proctable_size",
    "MPIR_server_arguments",
    "orte_noop_mpir_breakpoint_ptr",
];
const OPEN_MPI_4_1_PROCESS: [&str; 3] = [
    "MPIR_debug_gate",
    "MPIR_debug_typedefs_sizeof",
    "MPIR_dll_name",
];

/// Open MPI 4.1: a separate starter that can acquire, allows partial
/// attach, launches tool daemons, and names its message queue DLL.
#[test]
fn open_mpi_4_1_capabilities() {
    let starter = SymbolSet::from_names(OPEN_MPI_4_1_STARTER);
    let process = SymbolSet::from_names(OPEN_MPI_4_1_PROCESS);
    assert_eq!(starter.len(), 10);
    assert!(starter.missing_required(Holder::Starter).is_empty());
    assert!(process.missing_required(Holder::MpiProcess).is_empty());
    let c = Capabilities::from_set(starter.union(process));
    assert!(c.can_acquire && c.separate_starter && !c.starter_is_rank0);
    assert!(c.supports_partial_attach && !c.must_attach_all);
    assert!(c.supports_tool_daemons && c.force_to_main && !c.acquired_pre_main);
    assert!(c.supports_debug_gate && c.has_message_queues && !c.has_abort_string);
}

/// `nm -D -S --defined-only` on a library: (name, size) of each defined
/// dynamic symbol named `MPIR_*`; `None` if the library or `nm` is missing.
fn mpir_symbols(lib: &str) -> Option<Vec<(String, u64)>> {
    if !Path::new(lib).exists() {
        return None;
    }
    let out = Command::new("nm")
        .args(["-D", "-S", "--defined-only", lib])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Some(
        text.lines()
            .filter_map(|l| {
                let f: Vec<_> = l.split_whitespace().collect();
                let (size, name) = match f.as_slice() {
                    [_, size, _, name] => (u64::from_str_radix(size, 16).ok()?, *name),
                    [_, _, name] => (0, *name),
                    _ => return None,
                };
                name.starts_with("MPIR_").then(|| (name.to_string(), size))
            })
            .collect(),
    )
}

/// Against the real Open MPI 4.1 libraries when installed (Debian's
/// `libopenmpi-dev`): the symbol lists above are what they define, and the
/// array sizes are the crate's `OPEN_MPI_*` constants.
#[test]
fn real_open_mpi_symbols() {
    let dir = "/usr/lib/x86_64-linux-gnu";
    let (Some(rte), Some(mpi)) = (
        mpir_symbols(&format!("{dir}/libopen-rte.so.40")),
        mpir_symbols(&format!("{dir}/libmpi.so.40")),
    ) else {
        eprintln!("skipped: Debian's Open MPI 4.1 (libopen-rte.so.40) or nm is not installed");
        return;
    };
    let size_of = |name: &str| rte.iter().find(|(n, _)| n == name).map(|(_, s)| *s);
    let rte_caps = Capabilities::from_names(rte.iter().map(|(n, _)| n));
    assert_eq!(
        SymbolSet::from_names(rte.iter().map(|(n, _)| n)),
        SymbolSet::from_names(OPEN_MPI_4_1_STARTER)
    );
    assert!(rte_caps.can_acquire);
    assert_eq!(
        size_of("MPIR_executable_path"),
        Some(OPEN_MPI_EXECUTABLE_PATH_SIZE as u64)
    );
    assert_eq!(
        size_of("MPIR_server_arguments"),
        Some(OPEN_MPI_SERVER_ARGUMENTS_SIZE as u64)
    );
    assert_eq!(size_of("MPIR_proctable"), Some(8));
    assert_eq!(
        SymbolSet::from_names(mpi.iter().map(|(n, _)| n)),
        SymbolSet::from_names(OPEN_MPI_4_1_PROCESS)
    );
}
