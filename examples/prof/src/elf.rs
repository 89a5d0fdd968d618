//! What an ELF shared object or program says about its dynamic linking: its SONAME, the
//! libraries it needs (DT_NEEDED) and the functions it defines in its dynamic symbol table.
//! Shared by the build script (which libmpi the wrappers are generated for, which `PMPI_`
//! functions it exports) and the launcher (which libmpi a program was linked against).

#![forbid(unsafe_code)]

use std::path::Path;

use object::read::elf::{ElfFile64, ProgramHeader as _};
use object::{Endianness, Object, ObjectSymbol};

/// The dynamic-linking facts of one ELF file.
#[derive(Debug, Default, Clone)]
pub(crate) struct Dynamic {
    /// DT_SONAME, if any.
    pub(crate) soname: Option<String>,
    /// DT_NEEDED entries, in order.
    pub(crate) needed: Vec<String>,
    /// PT_INTERP: the dynamic loader that runs it (`None`: a shared object or a static
    /// program).
    pub(crate) interpreter: Option<String>,
}

/// Reads `path`'s dynamic section. `Ok(None)`: not a 64-bit ELF file (a script, another
/// format).
pub(crate) fn dynamic(path: &Path) -> Result<Option<Dynamic>, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !data.starts_with(b"\x7fELF") {
        return Ok(None);
    }
    let Ok(file) = ElfFile64::<Endianness>::parse(&*data) else {
        return Ok(None);
    };
    let table = file
        .elf_dynamic_table()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Dynamic::default();
    for d in table.iter() {
        let name = |d| {
            table
                .string(d)
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .ok()
        };
        if d.tag == object::elf::DT_NEEDED {
            out.needed.extend(name(d));
        } else if d.tag == object::elf::DT_SONAME {
            out.soname = name(d);
        }
    }
    let endian = file.endian();
    out.interpreter = file
        .elf_program_headers()
        .iter()
        .find_map(|ph| ph.interpreter(endian, &*data).ok().flatten())
        .map(|i| String::from_utf8_lossy(i).into_owned());
    Ok(Some(out))
}

/// The functions `path`'s dynamic symbol table defines and those it imports (undefined).
#[allow(dead_code)] // the build script's; the launcher only reads DT_NEEDED
pub(crate) fn functions(path: &Path) -> Result<(Vec<String>, Vec<String>), String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
    let (mut defined, mut imported) = (Vec::new(), Vec::new());
    for s in file.dynamic_symbols() {
        let Ok(name) = s.name() else { continue };
        if s.is_undefined() {
            imported.push(name.to_owned());
        } else if s.kind() == object::SymbolKind::Text {
            defined.push(name.to_owned());
        }
    }
    Ok((defined, imported))
}

/// Whether a DT_NEEDED or SONAME entry names an MPI library proper (`libmpi.so.40`,
/// `libmpi.so.12`, Debian MPICH's `libmpich.so.12`, the MPI-5 ABI's `libmpi_abi.so.1`), not one
/// of its language bindings
/// (`libmpi_mpifh`, `libmpifort`, `libmpicxx`).
pub(crate) fn is_libmpi(name: &str) -> bool {
    ["libmpi.so", "libmpich.so", "libmpi_abi.so"]
        .iter()
        .any(|l| name == *l || name.strip_prefix(l).is_some_and(|v| v.starts_with('.')))
}
