//! Symbols of a live process across every loaded object: `/proc/PID/maps`,
//! then the dynamic (`.dynsym`) and static (`.symtab`) symbol tables of each
//! mapped ELF file, relocated by the object's load bias.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object::{Object, ObjectSegment, ObjectSymbol, SymbolSection};

use super::ToolError;
use super::maps::{Mapping, read_maps};
use crate::catalog::{Capabilities, SymbolSet};
use crate::layout::{Endianness, TargetLayout};

/// Object files larger than this are not read (no shared library is).
const MAX_OBJECT_SIZE: u64 = 1 << 30;

/// What a symbol names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymKind {
    /// Code (`STT_FUNC`, `STT_GNU_IFUNC`).
    Function,
    /// Data (`STT_OBJECT`, `STT_COMMON`).
    Data,
    /// Anything else defined in a section (`STT_NOTYPE`).
    Other,
}

/// A symbol's binding, in the order a lookup prefers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Binding {
    /// `STB_GLOBAL` (or `STB_GNU_UNIQUE`).
    Global,
    /// `STB_WEAK`.
    Weak,
    /// `STB_LOCAL` (static symbol table only).
    Local,
}

/// One symbol definition in a live process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sym {
    /// Its run-time address in the process (`st_value` plus the object's
    /// load bias).
    pub addr: u64,
    /// `st_size`: the object's size in bytes (0 if unknown).
    pub size: u64,
    /// Code, data or other.
    pub kind: SymKind,
    /// Global, weak or local.
    pub binding: Binding,
    /// The object file that defines it (as `/proc/PID/maps` names it).
    pub object_path: Arc<Path>,
    /// Whether that object is the process's executable.
    pub in_executable: bool,
}

/// One ELF object mapped in the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedObject {
    /// Its path.
    pub path: Arc<Path>,
    /// Load bias: run-time address minus link-time address.
    pub bias: u64,
    /// Whether it is the process's executable.
    pub is_executable: bool,
    /// Symbols kept from it (those the filter accepted).
    pub symbols: usize,
}

/// The symbols of a live process, from every object it has mapped.
///
/// A name defined by several objects is looked up the way the dynamic linker
/// resolves it for the common case: the executable's definition first (it
/// also holds copy-relocated variables of libraries), then global before
/// weak before local bindings, then objects in address order.
#[derive(Clone, Debug)]
pub struct SymbolTable {
    pid: i32,
    symbols: HashMap<String, Vec<Sym>>,
    objects: Vec<LoadedObject>,
    skipped: Vec<(PathBuf, String)>,
}

/// A parsed object, before relocation: what a [`SymbolTable`] keeps of it.
#[derive(Debug)]
struct ParsedObject {
    /// `(p_offset, p_filesz, p_vaddr)` of each `PT_LOAD` segment.
    segments: Vec<(u64, u64, u64)>,
    /// `(name, st_value, st_size, kind, binding)`.
    symbols: Vec<(String, u64, u64, SymKind, Binding)>,
}

/// Parsed objects by `(path, device, inode)`, reused across the lookups of
/// one launch (every lookup uses the same name filter).
#[derive(Debug, Default)]
pub(crate) struct ObjectCache {
    objects: HashMap<(PathBuf, u32, u32, u64), Arc<ParsedObject>>,
}

fn parse_object(data: &[u8], filter: &dyn Fn(&str) -> bool) -> Result<ParsedObject, String> {
    let file = object::File::parse(data).map_err(|e| e.to_string())?;
    let segments = file
        .segments()
        .map(|s| {
            let (off, size) = s.file_range();
            (off, size, s.address())
        })
        .collect();
    let mut symbols = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for sym in file.dynamic_symbols().chain(file.symbols()) {
        if sym.is_undefined() || !matches!(sym.section(), SymbolSection::Section(_)) {
            continue;
        }
        let kind = match sym.kind() {
            object::SymbolKind::Text => SymKind::Function,
            object::SymbolKind::Data => SymKind::Data,
            object::SymbolKind::Unknown | object::SymbolKind::Label => SymKind::Other,
            // Sections, files and thread-local offsets are no addresses.
            _ => continue,
        };
        let Ok(name) = sym.name() else { continue };
        if name.is_empty() || !filter(name) {
            continue;
        }
        let binding = if sym.is_weak() {
            Binding::Weak
        } else if sym.is_global() {
            Binding::Global
        } else {
            Binding::Local
        };
        // The same definition appears in both tables.
        if seen.insert((name.to_owned(), sym.address())) {
            symbols.push((name.to_owned(), sym.address(), sym.size(), kind, binding));
        }
    }
    Ok(ParsedObject { segments, symbols })
}

/// The load bias of an object from its mappings: a `PT_LOAD` segment whose
/// first file byte lies in a mapping is at `start + (p_offset - offset)`,
/// which is `bias + p_vaddr`.
fn load_bias(maps: &[&Mapping], segments: &[(u64, u64, u64)]) -> Option<u64> {
    for m in maps {
        let len = m.end.saturating_sub(m.start);
        for &(off, size, vaddr) in segments {
            if size > 0 && off >= m.offset && off - m.offset < len {
                return Some(m.start.wrapping_add(off - m.offset).wrapping_sub(vaddr));
            }
        }
    }
    None
}

/// Opens the mapped file: its path if that is still the mapped inode, else
/// `/proc/PID/map_files/START-END` (which reaches deleted or replaced files
/// but needs `CAP_SYS_ADMIN`), else the path anyway.
fn open_object(pid: i32, m: &Mapping, path: &Path) -> std::io::Result<File> {
    let same_inode = |f: &File| f.metadata().is_ok_and(|md| md.ino() == m.inode);
    if !m.deleted
        && let Ok(f) = File::open(path)
        && same_inode(&f)
    {
        return Ok(f);
    }
    let by_range = format!("/proc/{pid}/map_files/{:x}-{:x}", m.start, m.end);
    match File::open(&by_range) {
        Ok(f) => Ok(f),
        Err(e) if m.deleted => Err(e),
        Err(_) => File::open(path),
    }
}

fn read_object(pid: i32, m: &Mapping, path: &Path) -> Result<Option<Vec<u8>>, String> {
    let mut f = open_object(pid, m, path).map_err(|e| e.to_string())?;
    let mut magic = [0u8; 4];
    if f.read_exact(&mut magic).is_err() || magic != *b"\x7fELF" {
        return Ok(None);
    }
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    if len > MAX_OBJECT_SIZE {
        return Err(format!("{len} bytes is larger than any object file read"));
    }
    let mut data = Vec::with_capacity(len as usize);
    data.extend_from_slice(&magic);
    f.read_to_end(&mut data).map_err(|e| e.to_string())?;
    Ok(Some(data))
}

/// The path `/proc/PID/exe` points to, without a `" (deleted)"` suffix.
pub(crate) fn exe_path(pid: i32) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let p = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    Some(match p.as_os_str().as_bytes().strip_suffix(b" (deleted)") {
        Some(stripped) => PathBuf::from(std::ffi::OsStr::from_bytes(stripped)),
        None => p,
    })
}

impl SymbolTable {
    /// Every defined symbol of every ELF object mapped in process `pid`.
    pub fn of_process(pid: i32) -> Result<Self, ToolError> {
        Self::of_process_matching(pid, |_| true)
    }

    /// The MPIR symbols (names starting with `MPIR_`) of process `pid`:
    /// what [`attach`](super::attach()) and the launch model need, cheaper than
    /// [`of_process`](Self::of_process).
    pub fn mpir_of_process(pid: i32) -> Result<Self, ToolError> {
        Self::of_process_matching(pid, |n| n.starts_with("MPIR_"))
    }

    /// The symbols of process `pid` whose names `filter` accepts.
    pub fn of_process_matching(pid: i32, filter: impl Fn(&str) -> bool) -> Result<Self, ToolError> {
        Self::build(pid, &filter, None)
    }

    pub(crate) fn build(
        pid: i32,
        filter: &dyn Fn(&str) -> bool,
        mut cache: Option<&mut ObjectCache>,
    ) -> Result<Self, ToolError> {
        let maps = read_maps(pid)?;
        let exe = exe_path(pid);
        // Distinct mapped files, in address order of their first mapping.
        let mut order: Vec<&Path> = Vec::new();
        let mut by_path: HashMap<&Path, Vec<&Mapping>> = HashMap::new();
        for m in maps.iter().filter(|m| m.is_file()) {
            let Some(path) = m.path.as_deref() else {
                continue;
            };
            by_path
                .entry(path)
                .or_insert_with(|| {
                    order.push(path);
                    Vec::new()
                })
                .push(m);
        }
        let mut table = SymbolTable {
            pid,
            symbols: HashMap::new(),
            objects: Vec::new(),
            skipped: Vec::new(),
        };
        for path in order {
            let ms = &by_path[path];
            let first = ms[0];
            let key = (
                path.to_path_buf(),
                first.dev_major,
                first.dev_minor,
                first.inode,
            );
            let cached = cache.as_ref().and_then(|c| c.objects.get(&key).cloned());
            let parsed = match cached {
                Some(p) => p,
                None => {
                    let data = match read_object(pid, first, path) {
                        Ok(Some(d)) => d,
                        Ok(None) => continue, // not ELF: a data file, shared memory
                        Err(reason) => {
                            table.skipped.push((path.to_path_buf(), reason));
                            continue;
                        }
                    };
                    match parse_object(&data, filter) {
                        Ok(p) => {
                            let p = Arc::new(p);
                            if let Some(c) = cache.as_deref_mut() {
                                c.objects.insert(key, p.clone());
                            }
                            p
                        }
                        Err(reason) => {
                            table.skipped.push((path.to_path_buf(), reason));
                            continue;
                        }
                    }
                }
            };
            let Some(bias) = load_bias(ms, &parsed.segments) else {
                table.skipped.push((
                    path.to_path_buf(),
                    "no PT_LOAD segment lies in its mappings".to_owned(),
                ));
                continue;
            };
            let is_executable = exe.as_deref() == Some(path);
            let object_path: Arc<Path> = Arc::from(path);
            for (name, value, size, kind, binding) in &parsed.symbols {
                table.symbols.entry(name.clone()).or_default().push(Sym {
                    addr: value.wrapping_add(bias),
                    size: *size,
                    kind: *kind,
                    binding: *binding,
                    object_path: object_path.clone(),
                    in_executable: is_executable,
                });
            }
            table.objects.push(LoadedObject {
                path: object_path,
                bias,
                is_executable,
                symbols: parsed.symbols.len(),
            });
        }
        for defs in table.symbols.values_mut() {
            // Stable: objects stay in address order within a rank.
            defs.sort_by_key(|s| (!s.in_executable, s.binding));
        }
        Ok(table)
    }

    /// The process.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The definition of `name` the process uses (see the type's
    /// documentation for the order), if any object defines it.
    pub fn lookup(&self, name: &str) -> Option<&Sym> {
        self.symbols.get(name).and_then(|v| v.first())
    }

    /// Every definition of `name`, preferred first.
    pub fn lookup_all(&self, name: &str) -> &[Sym] {
        self.symbols.get(name).map_or(&[], Vec::as_slice)
    }

    /// The names defined, in no particular order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.symbols.keys().map(String::as_str)
    }

    /// The §2.8 definitions found.
    pub fn symbol_set(&self) -> SymbolSet {
        SymbolSet::from_names(self.names())
    }

    /// What the found symbols let a tool do (§2.8).
    pub fn capabilities(&self) -> Capabilities {
        Capabilities::from_set(self.symbol_set())
    }

    /// The ELF objects read, in address order.
    pub fn objects(&self) -> &[LoadedObject] {
        &self.objects
    }

    /// Mapped ELF files that could not be read or parsed, with the reason.
    pub fn skipped(&self) -> &[(PathBuf, String)] {
        &self.skipped
    }
}

/// The target layout for an ELF identification (the first bytes of an ELF
/// file, at least `EI_DATA + 1` = 6): `EI_CLASS` gives the pointer width
/// (ELFCLASS32: ILP32, ELFCLASS64: LP64), `EI_DATA` the byte order. A C
/// `int` and the descriptor's `pid` are 4 bytes on every Linux ABI.
pub fn layout_from_elf_ident(ident: &[u8]) -> Result<TargetLayout, String> {
    if ident.len() < 6 || ident[..4] != *b"\x7fELF" {
        return Err("not an ELF file".to_owned());
    }
    let endianness = match ident[5] {
        1 => Endianness::Little,
        2 => Endianness::Big,
        other => {
            return Err(format!(
                "EI_DATA {other} is neither ELFDATA2LSB nor ELFDATA2MSB"
            ));
        }
    };
    let pointer_width = match ident[4] {
        1 => 4,
        2 => 8,
        other => {
            return Err(format!(
                "EI_CLASS {other} is neither ELFCLASS32 nor ELFCLASS64"
            ));
        }
    };
    TargetLayout::new(pointer_width, 4, 4, endianness).map_err(|e| e.to_string())
}

/// The target layout of process `pid`, from the ELF header of its
/// executable (`/proc/PID/exe`).
pub fn target_layout(pid: i32) -> Result<TargetLayout, ToolError> {
    let what = format!("/proc/{pid}/exe");
    let mut ident = [0u8; 16];
    let mut f = match File::open(&what) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::NoSuchProcess { pid });
        }
        Err(e) => return Err(ToolError::io(what, e)),
    };
    f.read_exact(&mut ident)
        .map_err(|e| ToolError::io(what.clone(), e))?;
    layout_from_elf_ident(&ident).map_err(|reason| ToolError::BadElf {
        path: PathBuf::from(what),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(start: u64, end: u64, offset: u64) -> Mapping {
        Mapping {
            start,
            end,
            read: true,
            write: false,
            execute: false,
            shared: false,
            offset,
            dev_major: 8,
            dev_minor: 1,
            inode: 7,
            path: Some(PathBuf::from("/lib/x.so")),
            deleted: false,
        }
    }

    #[test]
    fn bias_of_shared_object_and_fixed_executable() {
        // A shared object: first PT_LOAD at offset 0, vaddr 0.
        let segs = [
            (0, 0x1000, 0),
            (0x1000, 0x5000, 0x1000),
            (0x6d10, 0x300, 0x7d10),
        ];
        let m0 = mapping(0x7f00_0000_0000, 0x7f00_0000_1000, 0);
        assert_eq!(load_bias(&[&m0], &segs), Some(0x7f00_0000_0000));
        // Only a later mapping is seen: the segment whose file start lies in it.
        let m2 = mapping(0x7f00_0000_7000, 0x7f00_0000_8000, 0x6000);
        assert_eq!(
            load_bias(&[&m2], &segs),
            Some(0x7f00_0000_7000 + 0xd10 - 0x7d10)
        );
        // A non-PIE executable: mapped where it was linked, bias 0.
        let exe = mapping(0x40_0000, 0x40_1000, 0);
        assert_eq!(load_bias(&[&exe], &[(0, 0x1000, 0x40_0000)]), Some(0));
        // No segment in the mapping.
        assert_eq!(load_bias(&[&m2], &segs[..2]), None);
    }

    #[test]
    fn layout_from_ident() {
        assert_eq!(
            layout_from_elf_ident(b"\x7fELF\x02\x01\x01\0"),
            Ok(TargetLayout::LP64_LE)
        );
        assert_eq!(
            layout_from_elf_ident(b"\x7fELF\x01\x02\x01\0"),
            Ok(TargetLayout::ILP32_BE)
        );
        assert!(layout_from_elf_ident(b"\x7fELF\x03\x01").is_err());
        assert!(layout_from_elf_ident(b"\x7fELF\x02\x00").is_err());
        assert!(layout_from_elf_ident(b"MZ\0\0\0\0").is_err());
        assert!(layout_from_elf_ident(b"\x7fEL").is_err());
    }

    #[test]
    fn own_process_symbols() {
        // This test binary maps libc: `getpid` is defined there.
        let pid = std::process::id() as i32;
        let t = SymbolTable::of_process_matching(pid, |n| n == "getpid").unwrap();
        let sym = t.lookup("getpid").expect("getpid in some object");
        assert_eq!(sym.kind, SymKind::Function);
        let ours = nix::libc::getpid as *const () as usize as u64;
        // Through the PLT/GOT the address taken in Rust is libc's own.
        assert_eq!(sym.addr, ours, "{sym:?}");
        assert!(target_layout(pid).unwrap() == TargetLayout::host());
    }
}
