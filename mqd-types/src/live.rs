//! The tool side on Linux: a live MPI process as the DLL's image and process, and the DLL
//! search of spec section 5.
//!
//! Symbols come from every object the process maps ([`SymbolTable`]), memory from
//! `process_vm_readv` ([`ProcessMemory`]), types from real debug info of the MPI libraries
//! when they have it and else from the [`TypeDonor`], checked against the library's own symbol
//! sizes first. The process's `MPI_COMM_WORLD` rank comes from its environment
//! (`OMPI_COMM_WORLD_RANK`, `PMIX_RANK`, `PMI_RANK`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mpir_types::os::{ProcessMemory, SymbolTable, target_layout};
use mpir_types::proctable::{read_c_string, read_pointer};
use mpir_types::{MemoryReader, TargetLayout};

use crate::dll::{CommunicatorQueues, Dll, Queue};
use crate::donor::TypeDonor;
use crate::dwarf::{DwarfTypes, TypeLayout};
use crate::error::MqdError;
use crate::ob1::{Ob1Error, Ob1Layout, Ob1Reader};
use crate::pml::{self, PmlStack, pml_stack};
use crate::target::{ImageTarget, ProcessTarget};
use crate::types::{LangCode, OpClass, TargetTypeSizes};

/// Where an image's types come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeSources {
    /// Use the DWARF of the MPI libraries the process maps (or of their separate debug files
    /// under `/usr/lib/debug/.build-id`).
    pub debug_info: bool,
    /// Use the embedded [`TypeDonor`] for what debug info lacks.
    pub donor: bool,
}

impl Default for TypeSources {
    fn default() -> Self {
        TypeSources {
            debug_info: true,
            donor: true,
        }
    }
}

/// One check of the donor's layouts against the real library: a variable's symbol size and
/// the size of its type in the donor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutCheck {
    /// The variable (`ompi_mpi_communicators`).
    pub symbol: &'static str,
    /// Its type (`opal_pointer_array_t`).
    pub type_name: &'static str,
    /// `st_size` of the symbol in the process's library.
    pub symbol_size: u64,
    /// `sizeof` the type in the donor.
    pub type_size: Option<u64>,
}

impl LayoutCheck {
    /// Whether both sizes agree.
    pub fn agrees(&self) -> bool {
        self.type_size == Some(self.symbol_size)
    }
}

/// The variables whose symbol sizes check the donor (the DLL's roots of the queues).
const CHECKS: [(&str, &str); 3] = [
    ("ompi_mpi_communicators", "opal_pointer_array_t"),
    ("mca_pml_base_send_requests", "opal_free_list_t"),
    ("mca_pml_base_recv_requests", "opal_free_list_t"),
];

/// Compares the donor's sizes with the symbol sizes of the process's library.
pub fn check_donor(donor: &TypeDonor, symbols: &SymbolTable) -> Vec<LayoutCheck> {
    CHECKS
        .iter()
        .filter_map(|&(symbol, type_name)| {
            let sym = symbols.lookup(symbol)?;
            Some(LayoutCheck {
                symbol,
                type_name,
                symbol_size: sym.size,
                type_size: donor.find(type_name).map(|t| t.size),
            })
        })
        .collect()
}

/// A live process's executable image: its symbols and types.
#[derive(Debug)]
pub struct LiveImage {
    symbols: Arc<SymbolTable>,
    debug_info: Vec<(PathBuf, DwarfTypes)>,
    donor: Option<&'static TypeDonor>,
    checks: Vec<LayoutCheck>,
}

/// Whether `path` is one of the MPI libraries whose types the DLL reads.
fn is_mpi_library(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("libmpi.so") || n.starts_with("libopen-pal.so"))
}

/// The separate debug file of an ELF object (`/usr/lib/debug/.build-id/xx/rest.debug`).
fn debug_file(data: &[u8]) -> Option<PathBuf> {
    use object::Object;
    let file = object::File::parse(data).ok()?;
    let id = file.build_id().ok()??;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    (hex.len() > 2).then(|| {
        PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &hex[..2],
            &hex[2..]
        ))
    })
}

impl LiveImage {
    /// The image of process `pid`, with types from `sources`. The donor is refused (an
    /// error) if its sizes disagree with the library's symbol sizes ([`check_donor`]).
    pub fn new(pid: i32, sources: TypeSources) -> Result<LiveImage, MqdError> {
        let symbols = SymbolTable::of_process(pid).map_err(|e| MqdError::Target(e.to_string()))?;
        let mut debug_info = Vec::new();
        if sources.debug_info {
            for obj in symbols.objects().iter().filter(|o| is_mpi_library(&o.path)) {
                let Ok(data) = std::fs::read(&*obj.path) else {
                    continue;
                };
                let mut candidates = vec![(obj.path.to_path_buf(), data)];
                if let Some(dbg) = debug_file(&candidates[0].1)
                    && let Ok(d) = std::fs::read(&dbg)
                {
                    candidates.push((dbg, d));
                }
                for (path, data) in candidates {
                    if let Ok(types) = DwarfTypes::parse(&data)
                        && !types.is_empty()
                    {
                        debug_info.push((path, types));
                    }
                }
            }
        }
        let mut checks = Vec::new();
        let donor = if sources.donor {
            let donor = TypeDonor::embedded()?;
            checks = check_donor(donor, &symbols);
            if let Some(bad) = checks.iter().find(|c| !c.agrees()) {
                return Err(MqdError::TypeInfo(format!(
                    "the type donor (Open MPI {}) does not match the process's library: {} is \
                     {} bytes there, {} {:?} in the donor",
                    donor.ompi_version().unwrap_or("?"),
                    bad.symbol,
                    bad.symbol_size,
                    bad.type_name,
                    bad.type_size
                )));
            }
            Some(donor)
        } else {
            None
        };
        Ok(LiveImage {
            symbols: Arc::new(symbols),
            debug_info,
            donor,
            checks,
        })
    }

    /// The process's symbols.
    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    /// The process's symbols, shared (they outlive the image given to the DLL: see
    /// [`add_ob1_unexpected`]).
    pub fn shared_symbols(&self) -> Arc<SymbolTable> {
        Arc::clone(&self.symbols)
    }

    /// The objects whose own debug info supplied types.
    pub fn debug_info_sources(&self) -> impl Iterator<Item = &Path> {
        self.debug_info.iter().map(|(p, _)| p.as_path())
    }

    /// The donor checks made ([`check_donor`]); empty without donor.
    pub fn donor_checks(&self) -> &[LayoutCheck] {
        &self.checks
    }
}

impl ImageTarget for LiveImage {
    fn find_function(&self, name: &str, _lang: LangCode) -> Option<u64> {
        self.symbols.lookup(name).map(|s| s.addr)
    }

    fn find_symbol(&self, name: &str) -> Option<u64> {
        self.symbols.lookup(name).map(|s| s.addr)
    }

    fn find_type(&self, name: &str, _lang: LangCode) -> Option<TypeLayout> {
        self.debug_info
            .iter()
            .find_map(|(_, t)| t.find(name))
            .or_else(|| self.donor.and_then(|d| d.find(name)))
    }
}

/// Checks that the ob1 donor describes the process of `symbols` and that the process runs ob1;
/// returns the layout and the address of `ompi_mpi_communicators`.
fn ob1_setup(
    symbols: &SymbolTable,
    memory: &dyn ProcessTarget,
) -> Result<(Ob1Layout, u64), Ob1Error> {
    let donor = TypeDonor::embedded_ob1().map_err(|e| match e {
        MqdError::TypeInfo(why) => Ob1Error::NoTypes(why),
        e => Ob1Error::NoTypes(e.to_string()),
    })?;
    let base = TypeDonor::embedded().ok().and_then(|d| d.ompi_version());
    if let (Some(ob1), Some(base)) = (donor.ompi_version(), base)
        && ob1 != base
    {
        return Err(Ob1Error::Mismatch(format!(
            "the ob1 donor is Open MPI {ob1}, the installed headers {base}"
        )));
    }
    let layout = Ob1Layout::new(donor)?;
    let sym = |name: &'static str| symbols.lookup(name).ok_or(Ob1Error::MissingSymbol(name));
    // Seen through the monitoring PML, which stacks itself over ob1 and leaves its structures.
    let stack = pml_stack(|n| symbols.lookup(n).map(|s| s.addr), memory)?
        .ok_or(Ob1Error::MissingSymbol(pml::SELECTED_COMPONENT))?;
    if stack.effective() != "ob1" {
        return Err(Ob1Error::NotOb1(stack.to_string()));
    }
    for (name, size) in layout.symbol_sizes() {
        let s = sym(name)?;
        if s.size != size {
            return Err(Ob1Error::Mismatch(format!(
                "{name} is {} bytes in the process, {size} in the donor (Open MPI {})",
                s.size,
                donor.ompi_version().unwrap_or("?")
            )));
        }
    }
    let table = sym("ompi_mpi_communicators")?.addr;
    Ok((layout, table))
}

/// The PML stack of the live process `pid` ([`crate::pml`]): `Ok(None)` if it is no Open MPI
/// process (it defines no `mca_pml_base_selected_component`). Reads two symbols and two small
/// structures, no type information: a tool calls it before trusting what the DLL shows.
pub fn open_mpi_pml(pid: i32) -> Result<Option<PmlStack>, MqdError> {
    let symbols = SymbolTable::of_process_matching(pid, |n| {
        n == pml::SELECTED_COMPONENT || n == pml::MONITORED_COMPONENT
    })
    .map_err(|e| MqdError::Target(e.to_string()))?;
    let process = LiveProcess::new(pid)?;
    pml_stack(|n| symbols.lookup(n).map(|s| s.addr), &process).map_err(MqdError::Ob1)
}

/// Where the DLL had no information on a communicator's unexpected messages (Open MPI 4.1),
/// reads them from the ob1 PML's structures ([`crate::ob1`]): the queue becomes
/// [`Queue::FromOb1`], or [`Queue::Failed`] with [`MqdError::Ob1`] saying why not (no ob1
/// type donor, another PML, a donor of another version, unreadable or garbage memory).
/// Returns how many queues it filled.
pub fn add_ob1_unexpected(
    symbols: &SymbolTable,
    process: &dyn ProcessTarget,
    comms: &mut [CommunicatorQueues],
) -> usize {
    let wanted = |c: &CommunicatorQueues| {
        matches!(
            c.queue(OpClass::UnexpectedMessages),
            Some(Queue::NoInformation)
        )
    };
    if !comms.iter().any(wanted) {
        return 0;
    }
    let setup = ob1_setup(symbols, process);
    let mut filled = 0;
    for c in comms.iter_mut().filter(|c| wanted(c)) {
        let result = setup
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|(layout, table)| {
                let reader = Ob1Reader::new(layout, process);
                let comm = reader.communicator(*table, c.communicator.unique_id)?;
                reader.unexpected(comm)
            });
        let queue = match result {
            Ok(messages) => {
                filled += 1;
                Queue::FromOb1(messages)
            }
            Err(e) => Queue::Failed(MqdError::Ob1(e)),
        };
        for (class, q) in &mut c.queues {
            if *class == OpClass::UnexpectedMessages {
                *q = queue;
                break;
            }
        }
    }
    filled
}

/// A live process's memory, rank and type sizes.
#[derive(Debug)]
pub struct LiveProcess {
    memory: ProcessMemory,
    rank: Option<i32>,
    sizes: TargetTypeSizes,
}

/// The `MPI_COMM_WORLD` rank a launcher put in process `pid`'s environment.
pub fn rank_from_environment(pid: i32) -> Option<i32> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    ["OMPI_COMM_WORLD_RANK=", "PMIX_RANK=", "PMI_RANK="]
        .iter()
        .find_map(|key| {
            env.split(|&b| b == 0).find_map(|var| {
                let v = var.strip_prefix(key.as_bytes())?;
                std::str::from_utf8(v).ok()?.parse().ok()
            })
        })
}

impl LiveProcess {
    /// Process `pid` (its data model from its executable's ELF header).
    pub fn new(pid: i32) -> Result<LiveProcess, MqdError> {
        let layout = target_layout(pid).map_err(|e| MqdError::Target(e.to_string()))?;
        let sizes = if layout.pointer_width() == 8 {
            TargetTypeSizes::LP64
        } else {
            TargetTypeSizes::ILP32
        };
        Ok(LiveProcess {
            memory: ProcessMemory::new(pid),
            rank: rank_from_environment(pid),
            sizes,
        })
    }
}

impl ProcessTarget for LiveProcess {
    fn global_rank(&self) -> Option<i32> {
        self.rank
    }

    fn type_sizes(&self) -> TargetTypeSizes {
        self.sizes
    }

    fn fetch(&self, addr: u64, buf: &mut [u8]) -> bool {
        self.memory.read(addr, buf).is_ok()
    }
}

/// A place section 5's search looked for the DLL, and what it found there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DllCandidate {
    /// Where (`"starter 42: mpimsgq_dll_locations[0]"`).
    pub origin: String,
    /// The file named there, if any.
    pub path: Option<PathBuf>,
    /// Why there is none (symbol absent, NULL list, unreadable).
    pub note: Option<String>,
}

const MAX_LOCATIONS: usize = 64;

fn locations_of(pid: i32, role: &str, out: &mut Vec<DllCandidate>) -> Vec<DllCandidate> {
    let mut names = Vec::new();
    let origin = format!("{role} {pid}");
    let table = match SymbolTable::of_process_matching(pid, |n| {
        n == "mpimsgq_dll_locations" || n == "MPIR_dll_name"
    }) {
        Ok(t) => t,
        Err(e) => {
            out.push(DllCandidate {
                origin,
                path: None,
                note: Some(e.to_string()),
            });
            return names;
        }
    };
    let layout = target_layout(pid).unwrap_or(TargetLayout::LP64_LE);
    let mem = ProcessMemory::new(pid);
    let note = |what: &str, note: String| DllCandidate {
        origin: format!("{origin}: {what}"),
        path: None,
        note: Some(note),
    };
    match table.lookup("mpimsgq_dll_locations") {
        None => out.push(note("mpimsgq_dll_locations", "not defined".to_owned())),
        Some(sym) => match read_pointer(&mem, &layout, sym.addr) {
            Err(e) => out.push(note("mpimsgq_dll_locations", e.to_string())),
            Ok(0) => out.push(note(
                "mpimsgq_dll_locations",
                "NULL (not filled in)".to_owned(),
            )),
            Ok(list) => {
                let width = u64::from(layout.pointer_width());
                for i in 0..MAX_LOCATIONS {
                    let what = format!("mpimsgq_dll_locations[{i}]");
                    match read_pointer(&mem, &layout, list + i as u64 * width) {
                        Ok(0) => break,
                        Ok(p) => match read_c_string(&mem, &layout, p, 4096) {
                            Ok(s) => out.push(DllCandidate {
                                origin: format!("{origin}: {what}"),
                                path: Some(PathBuf::from(s.as_os_str())),
                                note: None,
                            }),
                            Err(e) => out.push(note(&what, e.to_string())),
                        },
                        Err(e) => {
                            out.push(note(&what, e.to_string()));
                            break;
                        }
                    }
                }
            }
        },
    }
    match table.lookup("MPIR_dll_name") {
        None => names.push(note("MPIR_dll_name", "not defined".to_owned())),
        Some(sym) => {
            // A `char[]` (Open MPI, MPICH); a `char *` if it is pointer-sized and points at
            // a string.
            let pointed = (sym.size == u64::from(layout.pointer_width()))
                .then(|| read_pointer(&mem, &layout, sym.addr).ok())
                .flatten()
                .and_then(|p| read_c_string(&mem, &layout, p, 4096).ok());
            match pointed.map_or_else(|| read_c_string(&mem, &layout, sym.addr, 4096), Ok) {
                Ok(s) if !s.is_empty() => names.push(DllCandidate {
                    origin: format!("{origin}: MPIR_dll_name"),
                    path: Some(PathBuf::from(s.as_os_str())),
                    note: None,
                }),
                Ok(_) => names.push(note("MPIR_dll_name", "empty".to_owned())),
                Err(e) => names.push(note("MPIR_dll_name", e.to_string())),
            }
        }
    }
    names
}

/// Section 5's search, in order: the starter's `mpimsgq_dll_locations` list, the MPI process's
/// (Open MPI defines it in `libmpi`, not in `mpiexec`, and fills it in `MPI_Init`), then
/// `MPIR_dll_name` of the starter and of the MPI process. Candidates without a path say why.
pub fn dll_candidates(starter: Option<i32>, pid: i32) -> Vec<DllCandidate> {
    let mut out = Vec::new();
    let mut dll_names = Vec::new();
    if let Some(s) = starter {
        dll_names.extend(locations_of(s, "starter", &mut out));
    }
    dll_names.extend(locations_of(pid, "MPI process", &mut out));
    out.extend(dll_names);
    out
}

/// Loads the first usable DLL of [`dll_candidates`]; [`MqdError::NoDll`] lists every
/// candidate and why it was not used.
pub fn find_dll(starter: Option<i32>, pid: i32) -> Result<Dll, MqdError> {
    let mut tried = Vec::new();
    for c in dll_candidates(starter, pid) {
        match (&c.path, &c.note) {
            (Some(path), _) => match Dll::load(path) {
                Ok(dll) => return Ok(dll),
                Err(e) => tried.push(format!("{}: {e}", c.origin)),
            },
            (None, Some(note)) => tried.push(format!("{}: {note}", c.origin)),
            (None, None) => {}
        }
    }
    Err(MqdError::NoDll { tried })
}
