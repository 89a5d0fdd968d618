//! Shared by the tests: where Debian's Open MPI 4.1 is.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::process::Command;

use object::{Object, ObjectSection, ObjectSymbol};

/// `mpicc.openmpi --showme:<what>`, split on whitespace.
pub fn showme(what: &str) -> Option<Vec<PathBuf>> {
    let out = Command::new("mpicc.openmpi")
        .arg(format!("--showme:{what}"))
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(PathBuf::from)
            .collect()
    })
}

/// Open MPI's `libmpi.so` (Debian: a symlink to `libmpi.so.40`).
pub fn libmpi() -> Option<PathBuf> {
    showme("libdirs")?
        .into_iter()
        .map(|d| d.join("libmpi.so"))
        .find(|p| p.exists())
        .and_then(|p| p.canonicalize().ok())
}

/// `(st_size, initial bytes)` of a data symbol of an ELF file (no bytes in `.bss`).
pub fn elf_symbol(file: &[u8], name: &str) -> Option<(u64, Option<Vec<u8>>)> {
    let f = object::File::parse(file).ok()?;
    let sym = f.dynamic_symbols().find(|s| s.name() == Ok(name))?;
    let section = f.section_by_index(sym.section_index()?).ok()?;
    let bytes = section
        .data_range(sym.address(), sym.size())
        .ok()
        .flatten()
        .map(<[u8]>::to_vec);
    Some((sym.size(), bytes))
}

/// The DLL `MPIR_dll_name` of the installed `libmpi` names, read from the library file.
pub fn msgq_dll() -> Option<PathBuf> {
    let data = std::fs::read(libmpi()?).ok()?;
    let bytes = elf_symbol(&data, "MPIR_dll_name")?.1?;
    let end = bytes.iter().position(|&b| b == 0)?;
    let path = PathBuf::from(String::from_utf8_lossy(&bytes[..end]).into_owned());
    path.exists().then_some(path)
}

/// Says why a test did nothing.
pub fn skip(test: &str) {
    println!(
        "skip: {test}: Debian's Open MPI 4.1 (mpicc.openmpi, libopenmpi-dev) is not installed"
    );
}
