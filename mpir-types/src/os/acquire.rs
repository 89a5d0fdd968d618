//! The attach model (§2.5.1, §2.7 steps 2–14): find the starter's symbols,
//! read its debug state and process table, without stopping it.

use super::ToolError;
use super::mem::ProcessMemory;
use super::symbols::{Sym, SymbolTable, target_layout};
use crate::catalog::{Capabilities, Holder, Symbol, SymbolSet};
use crate::layout::TargetLayout;
use crate::memory::MemoryReader;
use crate::proctable::{
    Limits, ProcDesc, read_abort_string, read_debug_state, read_int, read_pointer, read_proctable,
};
use crate::state::DebugState;
use crate::string::TargetString;

/// Where one §2.8 definition was found in the starter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcquiredSymbol {
    /// The definition.
    pub symbol: Symbol,
    /// Its address, size and object.
    pub sym: Sym,
}

/// What a tool acquired from an MPIR starter: the job's processes and what
/// the starter's symbols say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acquisition {
    /// The starter's pid.
    pub starter_pid: i32,
    /// The starter's data model (from its executable's ELF header).
    pub layout: TargetLayout,
    /// The §2.8 definitions found in the starter's loaded objects.
    pub symbols: SymbolSet,
    /// What they let the tool do.
    pub capabilities: Capabilities,
    /// Where each found definition is (Open MPI 4.1: `libopen-rte.so.40`).
    pub located: Vec<AcquiredSymbol>,
    /// `MPIR_debug_state` when the table was read.
    pub debug_state: DebugState,
    /// The process descriptor table; entry `i` is rank `i` (§2.8.4).
    pub procs: Vec<ProcDesc>,
    /// The abort reason (§2.8.7), read when `debug_state` is
    /// [`DebugState::Aborting`] and the starter defines
    /// `MPIR_debug_abort_string`.
    pub abort_string: Option<TargetString>,
}

impl Acquisition {
    /// `(rank, descriptor)` pairs in rank order.
    pub fn ranks(&self) -> impl Iterator<Item = (usize, &ProcDesc)> {
        self.procs.iter().enumerate()
    }

    /// Where `symbol` was found, if it was.
    pub fn locate(&self, symbol: Symbol) -> Option<&Sym> {
        self.located
            .iter()
            .find(|a| a.symbol == symbol)
            .map(|a| &a.sym)
    }
}

/// Options of [`attach_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttachOptions {
    /// Limits on what is decoded.
    pub limits: Limits,
    /// How often the table is read until two reads agree (a starter may be
    /// filling it in). Default 4.
    pub max_attempts: u32,
}

impl Default for AttachOptions {
    fn default() -> Self {
        AttachOptions {
            limits: Limits::DEFAULT,
            max_attempts: 4,
        }
    }
}

/// The starter's variables the tool reads and writes.
#[derive(Clone, Debug)]
pub(crate) struct StarterSymbols {
    pub(crate) set: SymbolSet,
    pub(crate) located: Vec<AcquiredSymbol>,
    pub(crate) breakpoint: u64,
    pub(crate) proctable: u64,
    pub(crate) proctable_size: u64,
    pub(crate) debug_state: u64,
    pub(crate) being_debugged: Option<u64>,
    pub(crate) abort_string: Option<u64>,
}

impl StarterSymbols {
    /// The starter's symbols out of `table`, or [`ToolError::NotAStarter`]
    /// naming what is missing.
    pub(crate) fn find(table: &SymbolTable) -> Result<Self, ToolError> {
        let set = table.symbol_set();
        let missing = set.missing_required(Holder::Starter);
        if !missing.is_empty() {
            return Err(ToolError::NotAStarter {
                pid: table.pid(),
                missing,
            });
        }
        let located: Vec<AcquiredSymbol> = set
            .iter()
            .filter_map(|symbol| {
                table.lookup(symbol.name()).map(|sym| AcquiredSymbol {
                    symbol,
                    sym: sym.clone(),
                })
            })
            .collect();
        let addr = |s: Symbol| located.iter().find(|a| a.symbol == s).map(|a| a.sym.addr);
        let required = |s: Symbol| {
            addr(s).ok_or_else(|| ToolError::NotAStarter {
                pid: table.pid(),
                missing: vec![s],
            })
        };
        Ok(StarterSymbols {
            breakpoint: required(Symbol::Breakpoint)?,
            proctable: required(Symbol::Proctable)?,
            proctable_size: required(Symbol::ProctableSize)?,
            debug_state: required(Symbol::DebugState)?,
            being_debugged: addr(Symbol::BeingDebugged),
            abort_string: addr(Symbol::DebugAbortString),
            set,
            located,
        })
    }
}

/// Reads the debug state and a consistent table (two reads of the size and
/// the table pointer around the decode agree).
pub(crate) fn read_acquisition<R: MemoryReader + ?Sized>(
    pid: i32,
    mem: &R,
    layout: TargetLayout,
    syms: &StarterSymbols,
    opts: &AttachOptions,
) -> Result<Acquisition, ToolError> {
    let decode = |source| ToolError::Decode { pid, source };
    let desc = layout.procdesc();
    let snapshot = || -> Result<(i64, u64), ToolError> {
        Ok((
            read_int(mem, &layout, syms.proctable_size).map_err(decode)?,
            read_pointer(mem, &layout, syms.proctable).map_err(decode)?,
        ))
    };
    let attempts = opts.max_attempts.max(1);
    let mut procs = None;
    for _ in 0..attempts {
        let before = snapshot()?;
        let table = read_proctable(
            mem,
            &desc,
            syms.proctable,
            syms.proctable_size,
            &opts.limits,
        )
        .map_err(decode)?;
        if snapshot()? == before {
            procs = Some(table);
            break;
        }
    }
    let procs = procs.ok_or(ToolError::Unstable { pid, attempts })?;
    let debug_state = read_debug_state(mem, &layout, syms.debug_state).map_err(decode)?;
    let abort_string = match (debug_state, syms.abort_string) {
        (DebugState::Aborting, Some(var)) => {
            read_abort_string(mem, &layout, var, opts.limits.max_string_len).map_err(decode)?
        }
        _ => None,
    };
    Ok(Acquisition {
        starter_pid: pid,
        layout,
        symbols: syms.set,
        capabilities: Capabilities::from_set(syms.set),
        located: syms.located.clone(),
        debug_state,
        procs,
        abort_string,
    })
}

/// The attach model with default options: see [`attach_with`].
pub fn attach(pid: i32) -> Result<Acquisition, ToolError> {
    attach_with(pid, &AttachOptions::default())
}

/// The attach model (§2.5.1): acquires the job of the running starter
/// `pid`.
///
/// Finds the §2.8 symbols in every object the starter has loaded (§2.7 steps
/// 2–3; Open MPI 4.1 keeps them in `libopen-rte.so.40`), takes the data
/// model from its executable, then reads `MPIR_proctable_size`,
/// `MPIR_proctable` and the table (steps 10–14), `MPIR_debug_state`, and the
/// abort string if the job is aborting. The starter is not stopped: the
/// table is read until two reads of its size and address around the decode
/// agree ([`AttachOptions::max_attempts`]). Nothing is written, so
/// `MPIR_being_debugged` stays as it was (a tool that then stays attached
/// sets it, §2.7 step 7).
///
/// A starter that has not spawned its job yet gives an empty table; one
/// whose memory is garbage gives [`ToolError::Decode`] (hard limits, no
/// unbounded read or allocation). What cannot be acquired is an error of its
/// own: a process that does not exist, [`ToolError::NoSuchProcess`]; a zombie,
/// [`ToolError::Zombie`]; a launcher known not to implement MPIR (MPICH's
/// Hydra, PRRTE), [`ToolError::NoMpir`]; another process lacking the required
/// symbols, [`ToolError::NotAStarter`]; an MPI process with an empty table
/// (Open MPI's ranks load the starter's symbols too), [`ToolError::NotTheStarter`]
/// naming the ancestor that is its starter, if one is; a process that ended while it was read
/// (the starter exited meanwhile), [`ToolError::Ended`], never a table.
pub fn attach_with(pid: i32, opts: &AttachOptions) -> Result<Acquisition, ToolError> {
    let acq = attach_any(pid, opts)?;
    if acq.procs.is_empty() && acq.symbols.contains(Symbol::DebugGate) {
        return Err(ToolError::NotTheStarter {
            pid,
            starter: super::diagnose::find_starter_of(pid),
        });
    }
    Ok(acq)
}

/// [`attach_with`] without the check that an MPI process with an empty table is no starter.
///
/// A process that ends while it is read gives [`ToolError::Ended`], whatever the read gave: a
/// table read from a dying process is no job's.
pub(crate) fn attach_any(pid: i32, opts: &AttachOptions) -> Result<Acquisition, ToolError> {
    super::diagnose::check_alive(pid)?;
    let read = (|| {
        let table = SymbolTable::mpir_of_process(pid)?;
        let syms = StarterSymbols::find(&table)
            .map_err(|e| super::diagnose::refine_not_a_starter(&table, e))?;
        let layout = target_layout(pid)?;
        let mem = ProcessMemory::new(pid);
        read_acquisition(pid, &mem, layout, &syms, opts)
    })();
    match super::diagnose::ended(pid, "its MPIR data was read") {
        Some(ended) => Err(ended),
        None => read,
    }
}
