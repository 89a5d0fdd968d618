//! Every definition of spec §2.8 as data: [`Symbol`], its [`SymbolInfo`]
//! (the [`catalog`]), sets of symbols found in a target ([`SymbolSet`]) and
//! what a tool may do given them ([`Capabilities`]).
//!
//! The catalog holds the seventeen definitions of §2.8.1–§2.8.17 in the
//! spec's order. Two of them are not linker symbols: `VOLATILE` is a macro
//! (§2.8.1) and `MPIR_PROCDESC` is a typedef found only in debug information
//! (§2.8.2); the `MPIR_NULL`/`MPIR_DEBUG_*` macros of §2.8.6 are
//! [`crate::state`]'s constants. Vendor extensions outside the spec (Open MPI
//! 4.1's `MPIR_attach_fifo`, `MPIR_forward_output`, `MPIR_forward_comm`,
//! `MPIR_debug_typedefs_sizeof`) are not in the catalog; [`SymbolSet`]
//! ignores them.

use std::fmt;

/// What kind of C definition a catalog entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// A preprocessor macro: in no symbol table (`VOLATILE`, §2.8.1).
    Macro,
    /// A type, found in the debug information (`MPIR_PROCDESC`, §2.8.2).
    Type,
    /// A global variable: a data symbol in the ELF symbol table.
    Variable,
    /// A function: a code symbol (`MPIR_Breakpoint`, §2.8.9).
    Function,
}

impl SymbolKind {
    /// Whether a definition of this kind appears in a linker symbol table
    /// (variables and functions), so that its presence can be tested.
    pub const fn is_linker_symbol(self) -> bool {
        matches!(self, SymbolKind::Variable | SymbolKind::Function)
    }
}

/// Which process contains a definition (the spec's "Definition is contained
/// within the address space of ...").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Holder {
    /// The starter process (§2.2.2): `mpiexec`/`mpirun`, or MPI rank 0 when
    /// rank 0 is the starter (§2.2.2.1).
    Starter,
    /// Each MPI process (§2.2.1).
    MpiProcess,
    /// Both ("used by the starter process and MPI processes").
    Either,
}

/// A party of the MPIR rendezvous protocol (§2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Party {
    /// The starter process.
    Starter,
    /// The tool (debugger, performance analyzer).
    Tool,
    /// An MPI process.
    MpiProcess,
}

/// Whether the spec requires a definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// "Definition is required."
    Required,
    /// "Definition is *not* required."
    Optional,
    /// `MPIR_i_am_starter` (§2.8.10): "required when the MPIR starter process
    /// is *not* also an MPI process", and "must *not* be defined if the
    /// process is an MPI process".
    RequiredForSeparateStarter,
}

impl Requirement {
    /// Whether the definition is required unconditionally.
    pub const fn is_required(self) -> bool {
        matches!(self, Requirement::Required)
    }
}

/// One definition of §2.8, in the spec's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Symbol {
    /// `VOLATILE` (§2.8.1).
    Volatile,
    /// `MPIR_PROCDESC` (§2.8.2).
    ProcDesc,
    /// `MPIR_being_debugged` (§2.8.3).
    BeingDebugged,
    /// `MPIR_proctable` (§2.8.4).
    Proctable,
    /// `MPIR_proctable_size` (§2.8.5).
    ProctableSize,
    /// `MPIR_debug_state` (§2.8.6).
    DebugState,
    /// `MPIR_debug_abort_string` (§2.8.7).
    DebugAbortString,
    /// `MPIR_debug_gate` (§2.8.8).
    DebugGate,
    /// `MPIR_Breakpoint` (§2.8.9).
    Breakpoint,
    /// `MPIR_i_am_starter` (§2.8.10).
    IAmStarter,
    /// `MPIR_acquired_pre_main` (§2.8.11).
    AcquiredPreMain,
    /// `MPIR_force_to_main` (§2.8.12).
    ForceToMain,
    /// `MPIR_partial_attach_ok` (§2.8.13).
    PartialAttachOk,
    /// `MPIR_dll_name` (§2.8.14).
    DllName,
    /// `MPIR_ignore_queues` (§2.8.15).
    IgnoreQueues,
    /// `MPIR_executable_path` (§2.8.16).
    ExecutablePath,
    /// `MPIR_server_arguments` (§2.8.17).
    ServerArguments,
}

impl Symbol {
    /// All definitions in the spec's order (the order of [`catalog`]).
    pub const ALL: [Symbol; 17] = [
        Symbol::Volatile,
        Symbol::ProcDesc,
        Symbol::BeingDebugged,
        Symbol::Proctable,
        Symbol::ProctableSize,
        Symbol::DebugState,
        Symbol::DebugAbortString,
        Symbol::DebugGate,
        Symbol::Breakpoint,
        Symbol::IAmStarter,
        Symbol::AcquiredPreMain,
        Symbol::ForceToMain,
        Symbol::PartialAttachOk,
        Symbol::DllName,
        Symbol::IgnoreQueues,
        Symbol::ExecutablePath,
        Symbol::ServerArguments,
    ];

    /// This definition's catalog entry.
    pub const fn info(self) -> &'static SymbolInfo {
        &CATALOG[self as usize]
    }

    /// The C name (`"MPIR_proctable"`).
    pub const fn name(self) -> &'static str {
        self.info().name
    }

    /// The definition with this exact C name, if it is one of §2.8's.
    pub fn from_name(name: &str) -> Option<Symbol> {
        CATALOG.iter().find(|i| i.name == name).map(|i| i.symbol)
    }

    const fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One definition of §2.8 with the spec's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SymbolInfo {
    /// The definition.
    pub symbol: Symbol,
    /// Its C name.
    pub name: &'static str,
    /// Its section of the spec (`"2.8.4"`).
    pub section: &'static str,
    /// Macro, type, variable or function.
    pub kind: SymbolKind,
    /// Its C type as the spec declares it (for the marker symbols of
    /// §2.8.10–§2.8.13 and §2.8.15, "a symbol of any type (preferably int)").
    pub c_type: &'static str,
    /// The spec's C definition text.
    pub declaration: &'static str,
    /// Which process contains it.
    pub holder: Holder,
    /// Whether it is required.
    pub required: Requirement,
    /// Who writes it; `None` for "neither read nor written" (and for the
    /// macro, the type and the function).
    pub written_by: Option<Party>,
    /// Who reads it; `None` as for [`SymbolInfo::written_by`].
    pub read_by: Option<Party>,
    /// Only the symbol's presence carries information: "The type or value of
    /// this symbol is not tested by the tool" (§2.8.10–§2.8.13, §2.8.15).
    pub presence_only: bool,
    /// The spec marks it deprecated (`MPIR_dll_name`, §2.8.14).
    pub deprecated: bool,
    /// What it means, in the spec's words.
    pub meaning: &'static str,
}

/// The seventeen definitions of §2.8, in the spec's order (indexable by
/// `Symbol as usize`).
pub const fn catalog() -> &'static [SymbolInfo; 17] {
    &CATALOG
}

const fn marker(
    symbol: Symbol,
    name: &'static str,
    section: &'static str,
    declaration: &'static str,
    required: Requirement,
    meaning: &'static str,
) -> SymbolInfo {
    SymbolInfo {
        symbol,
        name,
        section,
        kind: SymbolKind::Variable,
        c_type: "int (any type; only presence is tested)",
        declaration,
        holder: Holder::Starter,
        required,
        written_by: None,
        read_by: None,
        presence_only: true,
        deprecated: false,
        meaning,
    }
}

static CATALOG: [SymbolInfo; 17] = [
    SymbolInfo {
        symbol: Symbol::Volatile,
        name: "VOLATILE",
        section: "2.8.1",
        kind: SymbolKind::Macro,
        c_type: "volatile (ANSI C and C++), empty otherwise",
        declaration: "#define VOLATILE volatile",
        holder: Holder::Either,
        required: Requirement::Required,
        written_by: None,
        read_by: None,
        presence_only: false,
        deprecated: false,
        meaning: "Defined to the volatile keyword for C++ and ANSI C: the variable could be \
                  modified by an external entity and its value can change at any time. Used with \
                  MPIR variables defined in the starter and MPI processes but set by the tool.",
    },
    SymbolInfo {
        symbol: Symbol::ProcDesc,
        name: "MPIR_PROCDESC",
        section: "2.8.2",
        kind: SymbolKind::Type,
        c_type: "struct { char *host_name; char *executable_name; int pid; }",
        declaration: "typedef struct { char *host_name; char *executable_name; int pid; } \
                      MPIR_PROCDESC;",
        holder: Holder::Starter,
        required: Requirement::Required,
        written_by: None,
        read_by: None,
        presence_only: false,
        deprecated: false,
        meaning: "Process descriptor of a single MPI process. host_name points to a null \
                  terminated string (host name or IP address, on BProc a node number) in the \
                  starter's address space; executable_name to the name of the executable, \
                  preferably its full path; pid is the process identifier (historically int; \
                  should be large enough, e.g. pid_t). The tool must use the symbol table to \
                  determine the structure's size and the offset and size of each member. \
                  Implementations should share host and executable strings across entries.",
    },
    SymbolInfo {
        symbol: Symbol::BeingDebugged,
        name: "MPIR_being_debugged",
        section: "2.8.3",
        kind: SymbolKind::Variable,
        c_type: "volatile int",
        declaration: "VOLATILE int MPIR_being_debugged;",
        holder: Holder::Starter,
        required: Requirement::Optional,
        written_by: Some(Party::Tool),
        read_by: Some(Party::Starter),
        presence_only: false,
        deprecated: false,
        meaning: "Set or cleared by the tool to notify the starter process that a tool is \
                  present: 1 immediately after spawning or attaching to the starter, 0 \
                  immediately before detaching. The starter may behave differently, e.g. make \
                  the MPI processes wait for MPIR_debug_gate.",
    },
    SymbolInfo {
        symbol: Symbol::Proctable,
        name: "MPIR_proctable",
        section: "2.8.4",
        kind: SymbolKind::Variable,
        c_type: "MPIR_PROCDESC *",
        declaration: "MPIR_PROCDESC *MPIR_proctable;",
        holder: Holder::Starter,
        required: Requirement::Required,
        written_by: Some(Party::Starter),
        read_by: Some(Party::Tool),
        presence_only: false,
        deprecated: false,
        meaning: "Pointer set by the starter to an array of MPIR_proctable_size MPIR_PROCDESC \
                  structures: the process descriptor table. The index in the table is the rank \
                  of the process in MPI_COMM_WORLD.",
    },
    SymbolInfo {
        symbol: Symbol::ProctableSize,
        name: "MPIR_proctable_size",
        section: "2.8.5",
        kind: SymbolKind::Variable,
        c_type: "int",
        declaration: "int MPIR_proctable_size;",
        holder: Holder::Starter,
        required: Requirement::Required,
        written_by: Some(Party::Starter),
        read_by: Some(Party::Tool),
        presence_only: false,
        deprecated: false,
        meaning: "Number of elements in the process descriptor table pointed to by \
                  MPIR_proctable. If it is not greater than zero, the table is empty (§2.7 \
                  step 10).",
    },
    SymbolInfo {
        symbol: Symbol::DebugState,
        name: "MPIR_debug_state",
        section: "2.8.6",
        kind: SymbolKind::Variable,
        c_type: "int",
        declaration: "int MPIR_debug_state;",
        holder: Holder::Starter,
        required: Requirement::Required,
        written_by: Some(Party::Starter),
        read_by: Some(Party::Tool),
        presence_only: false,
        deprecated: false,
        meaning: "State of the MPI job when the starter calls MPIR_Breakpoint: MPIR_NULL (0) \
                  ignore and continue; MPIR_DEBUG_SPAWNED (1) the MPI processes are spawned and \
                  the table is filled in; MPIR_DEBUG_ABORTING (2) the job has aborted, reason in \
                  MPIR_debug_abort_string. The tool decides when to continue the starter.",
    },
    SymbolInfo {
        symbol: Symbol::DebugAbortString,
        name: "MPIR_debug_abort_string",
        section: "2.8.7",
        kind: SymbolKind::Variable,
        c_type: "char *",
        declaration: "char *MPIR_debug_abort_string;",
        holder: Holder::Starter,
        required: Requirement::Optional,
        written_by: Some(Party::Starter),
        read_by: Some(Party::Tool),
        presence_only: false,
        deprecated: false,
        meaning: "Pointer to a null-terminated, human readable string set by the starter when \
                  the MPI job has aborted: the reason, read by the tool on an \
                  MPIR_DEBUG_ABORTING event.",
    },
    SymbolInfo {
        symbol: Symbol::DebugGate,
        name: "MPIR_debug_gate",
        section: "2.8.8",
        kind: SymbolKind::Variable,
        c_type: "volatile int",
        declaration: "VOLATILE int MPIR_debug_gate;",
        holder: Holder::MpiProcess,
        required: Requirement::Optional,
        written_by: Some(Party::Tool),
        read_by: Some(Party::MpiProcess),
        presence_only: false,
        deprecated: false,
        meaning: "Set to 1 by the tool to notify an MPI process that the debugger has attached; \
                  the process may wait on it so it does not run away before the tool attaches. \
                  Not required for synchronization, but the runtime must keep MPI processes from \
                  running beyond the return from MPI_Init.",
    },
    SymbolInfo {
        symbol: Symbol::Breakpoint,
        name: "MPIR_Breakpoint",
        section: "2.8.9",
        kind: SymbolKind::Function,
        c_type: "void (void)",
        declaration: "void MPIR_Breakpoint() {}",
        holder: Holder::Starter,
        required: Requirement::Required,
        written_by: None,
        read_by: None,
        presence_only: false,
        deprecated: false,
        meaning: "Called by the starter, after setting MPIR_debug_state, to notify the tool of \
                  an MPIR event. The tool must set a breakpoint on it and read MPIR_debug_state \
                  when it is hit. Its presence marks a starter program (§2.7 step 3).",
    },
    marker(
        Symbol::IAmStarter,
        "MPIR_i_am_starter",
        "2.8.10",
        "int MPIR_i_am_starter;",
        Requirement::RequiredForSeparateStarter,
        "Marks the process containing it as a starter process that is not also an MPI \
         process. Must not be defined if rank 0 is the starter; if absent, the starter is the \
         MPI rank 0 process (§2.7 step 6).",
    ),
    marker(
        Symbol::AcquiredPreMain,
        "MPIR_acquired_pre_main",
        "2.8.11",
        "int MPIR_acquired_pre_main;",
        Requirement::Optional,
        "Under the job launch model the MPI processes are stalled or stopped before entering \
         main (e.g. on exit from execve or in a shared library's init section); a debugger may \
         display main's source after acquiring them.",
    ),
    marker(
        Symbol::ForceToMain,
        "MPIR_force_to_main",
        "2.8.12",
        "int MPIR_force_to_main;",
        Requirement::Optional,
        "The tool should display the source code of main after acquiring the MPI processes. \
         Does not imply the processes were stopped before dynamic linking.",
    ),
    marker(
        Symbol::PartialAttachOk,
        "MPIR_partial_attach_ok",
        "2.8.13",
        "int MPIR_partial_attach_ok;",
        Requirement::Optional,
        "The implementation supports attaching to a subset of the MPI processes: startup \
         synchronization (e.g. a barrier) does not need the tool to attach to or continue the \
         processes the user is not interested in; releasing the starter releases the job. \
         Setting MPIR_debug_gate anyway is harmless.",
    ),
    SymbolInfo {
        symbol: Symbol::DllName,
        name: "MPIR_dll_name",
        section: "2.8.14",
        kind: SymbolKind::Variable,
        c_type: "char[]",
        declaration: "char MPIR_dll_name[];",
        holder: Holder::MpiProcess,
        required: Requirement::Optional,
        written_by: Some(Party::MpiProcess),
        read_by: Some(Party::Tool),
        presence_only: false,
        deprecated: true,
        meaning: "Null-terminated path name of the message queue debugging shared library the \
                  tool loads into its own address space; overrides the tool's default. \
                  Deprecated: it names only one library for every ABI; use the Message Queue \
                  Display DLL search extension (§2.6.2). May be assumed identical for all \
                  processes running the same executable (§2.7 step 19).",
    },
    marker(
        Symbol::IgnoreQueues,
        "MPIR_ignore_queues",
        "2.8.15",
        "int MPIR_ignore_queues;",
        Requirement::Optional,
        "MPI message queue support should be suppressed, e.g. when the interface is used in a \
         non-MPI environment.",
    ),
    SymbolInfo {
        symbol: Symbol::ExecutablePath,
        name: "MPIR_executable_path",
        section: "2.8.16",
        kind: SymbolKind::Variable,
        c_type: "char[256]",
        declaration: "char MPIR_executable_path[256];",
        holder: Holder::Starter,
        required: Requirement::Optional,
        written_by: Some(Party::Tool),
        read_by: Some(Party::Starter),
        presence_only: false,
        deprecated: false,
        meaning: "Null-terminated path name of the tool daemon's executable on the target node, \
                  written by the tool; when the tool sets MPIR_being_debugged non-zero and \
                  continues the starter, the starter launches it with MPIR_server_arguments \
                  (tool daemon launch extension, §2.6.1).",
    },
    SymbolInfo {
        symbol: Symbol::ServerArguments,
        name: "MPIR_server_arguments",
        section: "2.8.17",
        kind: SymbolKind::Variable,
        c_type: "char[1024]",
        declaration: "char MPIR_server_arguments[1024];",
        holder: Holder::Starter,
        required: Requirement::Optional,
        written_by: Some(Party::Tool),
        read_by: Some(Party::Starter),
        presence_only: false,
        deprecated: false,
        meaning: "Zero or more null-terminated strings followed by a null character, written \
                  by the tool; each string is one argument of the tool daemon. The empty string \
                  cannot be passed as an argument (§2.6.1).",
    },
];

/// A set of §2.8 definitions found in a target (for example the names of an
/// ELF symbol table). Unknown names are ignored.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SymbolSet(u32);

impl SymbolSet {
    /// The empty set.
    pub const fn new() -> Self {
        SymbolSet(0)
    }

    /// The definitions among `names` (exact C names; others are ignored).
    pub fn from_names<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        names
            .into_iter()
            .filter_map(|n| Symbol::from_name(n.as_ref()))
            .collect()
    }

    /// Adds a definition; returns whether it was absent.
    pub fn insert(&mut self, symbol: Symbol) -> bool {
        let absent = !self.contains(symbol);
        self.0 |= symbol.bit();
        absent
    }

    /// Whether the set holds `symbol`.
    pub const fn contains(&self, symbol: Symbol) -> bool {
        self.0 & symbol.bit() != 0
    }

    /// The union of two sets (e.g. the starter's and an MPI process's).
    pub const fn union(self, other: SymbolSet) -> SymbolSet {
        SymbolSet(self.0 | other.0)
    }

    /// Number of definitions in the set.
    pub const fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub const fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// The definitions in the set, in the spec's order.
    pub fn iter(&self) -> impl Iterator<Item = Symbol> + '_ {
        Symbol::ALL.into_iter().filter(|s| self.contains(*s))
    }

    /// The definitions held by `holder` that the spec requires
    /// unconditionally and that can be found in a symbol table, absent from
    /// this set. For [`Holder::Starter`]: `MPIR_proctable`,
    /// `MPIR_proctable_size`, `MPIR_debug_state`, `MPIR_Breakpoint`.
    pub fn missing_required(&self, holder: Holder) -> Vec<Symbol> {
        Symbol::ALL
            .into_iter()
            .filter(|s| {
                let i = s.info();
                i.holder == holder
                    && i.required.is_required()
                    && i.kind.is_linker_symbol()
                    && !self.contains(*s)
            })
            .collect()
    }
}

impl FromIterator<Symbol> for SymbolSet {
    fn from_iter<T: IntoIterator<Item = Symbol>>(iter: T) -> Self {
        let mut set = SymbolSet::new();
        set.extend(iter);
        set
    }
}

impl Extend<Symbol> for SymbolSet {
    fn extend<T: IntoIterator<Item = Symbol>>(&mut self, iter: T) {
        for s in iter {
            self.insert(s);
        }
    }
}

impl fmt::Debug for SymbolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(Symbol::name))
            .finish()
    }
}

/// What a tool may do with a job, derived from the §2.8 symbols found.
///
/// The symbols live in two kinds of process: pass the union of the starter's
/// symbols and (for [`Capabilities::supports_debug_gate`] and
/// [`Capabilities::has_dll_name`]) an MPI process's. Every flag is a pure
/// function of the set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// `MPIR_Breakpoint` is present: "the tool should consider this a starter
    /// program" (§2.7 step 3).
    pub is_starter: bool,
    /// The four required starter symbols are present (`MPIR_proctable`,
    /// `MPIR_proctable_size`, `MPIR_debug_state`, `MPIR_Breakpoint`;
    /// §2.8.4–§2.8.6, §2.8.9): the tool can receive MPIR events and read the
    /// process descriptor table (§2.7 steps 8–14).
    pub can_acquire: bool,
    /// `MPIR_i_am_starter` is present: the starter is a separate process, not
    /// an MPI process (§2.8.10).
    pub separate_starter: bool,
    /// A starter without `MPIR_i_am_starter`: the starter *is* the MPI rank 0
    /// process, so the tool already controls rank 0 (§2.7 step 6,
    /// §2.2.2.1).
    pub starter_is_rank0: bool,
    /// `MPIR_being_debugged` is present: the tool can tell the starter that
    /// it is present (§2.8.3, §2.7 step 7).
    pub can_signal_presence: bool,
    /// `MPIR_debug_abort_string` is present: an abort event carries a reason
    /// (§2.8.7).
    pub has_abort_string: bool,
    /// `MPIR_debug_gate` is present (in an MPI process): the tool releases
    /// each process by setting it to 1 (§2.8.8).
    pub supports_debug_gate: bool,
    /// `MPIR_partial_attach_ok` is present: the tool may attach to a subset
    /// of the processes (§2.8.13).
    pub supports_partial_attach: bool,
    /// `MPIR_partial_attach_ok` is absent: "the tool must attach and set the
    /// MPIR_debug_gate variable to 1 in each MPI processes ... even if the
    /// tool user has instructed the tool to not attach to all of the MPI
    /// processes" (§2.7 step 18).
    pub must_attach_all: bool,
    /// `MPIR_acquired_pre_main` is present: launched processes are stopped
    /// before `main` (§2.8.11).
    pub acquired_pre_main: bool,
    /// `MPIR_force_to_main` is present: display `main` after acquisition
    /// (§2.8.12).
    pub force_to_main: bool,
    /// `MPIR_executable_path`, `MPIR_server_arguments` and
    /// `MPIR_being_debugged` are present: the tool daemon launch extension
    /// (§2.6.1, §2.8.16, §2.8.17), which is triggered by setting
    /// `MPIR_being_debugged`.
    pub supports_tool_daemons: bool,
    /// `MPIR_dll_name` is present (in an MPI process): it names the message
    /// queue DLL (§2.8.14, deprecated).
    pub has_dll_name: bool,
    /// `MPIR_ignore_queues` is present: message queue support should be
    /// suppressed (§2.8.15).
    pub ignore_queues: bool,
    /// `MPIR_dll_name` is present and `MPIR_ignore_queues` is absent: the
    /// tool can display message queues through the named DLL (§2.8.14,
    /// §2.8.15).
    pub has_message_queues: bool,
}

impl Capabilities {
    /// The capabilities given a set of found symbols.
    pub const fn from_set(set: SymbolSet) -> Self {
        let is_starter = set.contains(Symbol::Breakpoint);
        let separate_starter = set.contains(Symbol::IAmStarter);
        let has_dll_name = set.contains(Symbol::DllName);
        let ignore_queues = set.contains(Symbol::IgnoreQueues);
        let partial = set.contains(Symbol::PartialAttachOk);
        Capabilities {
            is_starter,
            can_acquire: is_starter
                && set.contains(Symbol::Proctable)
                && set.contains(Symbol::ProctableSize)
                && set.contains(Symbol::DebugState),
            separate_starter,
            starter_is_rank0: is_starter && !separate_starter,
            can_signal_presence: set.contains(Symbol::BeingDebugged),
            has_abort_string: set.contains(Symbol::DebugAbortString),
            supports_debug_gate: set.contains(Symbol::DebugGate),
            supports_partial_attach: partial,
            must_attach_all: !partial,
            acquired_pre_main: set.contains(Symbol::AcquiredPreMain),
            force_to_main: set.contains(Symbol::ForceToMain),
            supports_tool_daemons: set.contains(Symbol::ExecutablePath)
                && set.contains(Symbol::ServerArguments)
                && set.contains(Symbol::BeingDebugged),
            has_dll_name,
            ignore_queues,
            has_message_queues: has_dll_name && !ignore_queues,
        }
    }

    /// The capabilities given the names of the symbols found (exact C names;
    /// other names are ignored).
    pub fn from_names<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Capabilities::from_set(SymbolSet::from_names(names))
    }
}
