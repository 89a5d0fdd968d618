//! The MPIR symbols of a starter (spec §2.8), defined with their C names and
//! C types, and the only `unsafe` code of the `starter` feature.
//!
//! Every item here is a definition a tool looks up by name in the starter's
//! symbol table (`.symtab`, and `.dynsym` when the binary is linked with
//! `-rdynamic` or `-Wl,--export-dynamic-symbol=MPIR_*`) and reads or writes
//! from outside the process (`ptrace`, `process_vm_readv`/`writev`). They
//! are `pub` so that they appear in the documentation with their C types and
//! so that C code linked into the same program can see them; Rust code
//! should use [`Starter`](super::Starter), which serialises every write
//! through one lock. Accessing a `static mut` directly needs `unsafe`, and
//! doing so while a [`Starter`](super::Starter) call runs in another thread
//! is a data race.
//!
//! Variables the tool writes (`MPIR_being_debugged`, `MPIR_executable_path`,
//! `MPIR_server_arguments`: `VOLATILE` in the spec, §2.8.1) are only ever
//! read with [`ptr::read_volatile`]; variables the starter writes are written
//! with [`ptr::write_volatile`], so that no write is elided or moved past
//! the call of [`MPIR_Breakpoint`].
#![allow(non_upper_case_globals, non_snake_case, non_camel_case_types)]

use std::ffi::{CString, c_char, c_int};
use std::hint::black_box;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering, fence};

use crate::codec::{SPEC_EXECUTABLE_PATH_SIZE, SPEC_SERVER_ARGUMENTS_SIZE};

/// `MPIR_PROCDESC` (§2.8.2): one entry of the process descriptor table, with
/// the spec's member names and C types (`pid` is a C `int`, which is
/// `pid_t` on Linux).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MPIR_PROCDESC {
    /// Host name or IP address of the process, a NUL-terminated string in
    /// the starter's memory.
    pub host_name: *mut c_char,
    /// Full path of the executable the process runs, NUL-terminated.
    pub executable_name: *mut c_char,
    /// The process identifier.
    pub pid: c_int,
}

/// `MPIR_PROCDESC *MPIR_proctable;` (§2.8.4): the process descriptor table,
/// entry `i` is rank `i`; NULL until a table is published.
#[unsafe(no_mangle)]
pub static mut MPIR_proctable: *mut MPIR_PROCDESC = ptr::null_mut();

/// `int MPIR_proctable_size;` (§2.8.5): the number of entries of
/// `MPIR_proctable`.
#[unsafe(no_mangle)]
pub static mut MPIR_proctable_size: c_int = 0;

/// `int MPIR_debug_state;` (§2.8.6): `MPIR_NULL`, `MPIR_DEBUG_SPAWNED` or
/// `MPIR_DEBUG_ABORTING` when the starter calls [`MPIR_Breakpoint`].
#[unsafe(no_mangle)]
pub static mut MPIR_debug_state: c_int = 0;

/// `VOLATILE int MPIR_being_debugged;` (§2.8.3): set to 1 by a tool after it
/// attached or launched the starter, to 0 before it detaches.
#[unsafe(no_mangle)]
pub static mut MPIR_being_debugged: c_int = 0;

/// `char *MPIR_debug_abort_string;` (§2.8.7): why the job aborted, set before
/// an `MPIR_DEBUG_ABORTING` event; NULL otherwise.
#[unsafe(no_mangle)]
pub static mut MPIR_debug_abort_string: *const c_char = ptr::null();

/// `int MPIR_i_am_starter;` (§2.8.10): marks this process as a starter that
/// is not an MPI process. Only its presence is tested.
#[unsafe(no_mangle)]
pub static mut MPIR_i_am_starter: c_int = 0;

/// `int MPIR_partial_attach_ok;` (§2.8.13): the tool need not attach to nor
/// continue the processes (this starter uses no `MPIR_debug_gate`). Only its
/// presence is tested.
#[unsafe(no_mangle)]
pub static mut MPIR_partial_attach_ok: c_int = 0;

/// `char MPIR_executable_path[256];` (§2.8.16, tool daemon launch extension
/// §2.6.1): the tool daemon's executable, written by the tool.
#[unsafe(no_mangle)]
pub static mut MPIR_executable_path: [c_char; SPEC_EXECUTABLE_PATH_SIZE] =
    [0; SPEC_EXECUTABLE_PATH_SIZE];

/// `char MPIR_server_arguments[1024];` (§2.8.17): the tool daemon's
/// arguments, NUL-separated and ending in an empty string, written by the
/// tool.
#[unsafe(no_mangle)]
pub static mut MPIR_server_arguments: [c_char; SPEC_SERVER_ARGUMENTS_SIZE] =
    [0; SPEC_SERVER_ARGUMENTS_SIZE];

/// Calls of [`MPIR_Breakpoint`] in this process (not an MPIR symbol: its
/// name is mangled).
static BREAKPOINT_CALLS: AtomicU64 = AtomicU64::new(0);

/// `void MPIR_Breakpoint() {}` (§2.8.9): the function a tool breaks on; the
/// starter calls it after setting `MPIR_debug_state`.
///
/// The optimiser can neither remove a call of it nor merge two calls, nor
/// fold it with another function (Open MPI has shipped starters where it
/// did): it is never inlined, its body has a side effect (an atomic count of
/// its calls, which also makes its code unlike any other function's) and an
/// empty `asm!` statement, which the compiler must assume reads and writes
/// any memory. The latter also makes every write before the call visible in
/// memory when the tool stops here.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn MPIR_Breakpoint() {
    BREAKPOINT_CALLS.fetch_add(1, Ordering::SeqCst);
    #[cfg(any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "arm",
        target_arch = "aarch64",
        target_arch = "riscv32",
        target_arch = "riscv64",
        target_arch = "loongarch64",
        target_arch = "powerpc",
        target_arch = "powerpc64",
        target_arch = "s390x",
    ))]
    // SAFETY: an empty assembly statement: no instruction, no register or
    // stack use (`nostack`, `preserves_flags`); without `nomem`/`pure` the
    // compiler treats it as an opaque side effect on memory.
    unsafe {
        std::arch::asm!("", options(nostack, preserves_flags));
    }
    // Elsewhere (no stable `asm!`), at least an optimisation barrier.
    black_box(());
}

/// Calls of [`MPIR_Breakpoint`] so far.
pub(crate) fn breakpoint_calls() -> u64 {
    BREAKPOINT_CALLS.load(Ordering::SeqCst)
}

/// Takes the address of every MPIR symbol in code the program keeps, so that
/// the linker's `--gc-sections` keeps every definition (the marker symbols
/// are otherwise referenced by nothing and would vanish from the binary).
#[inline(never)]
pub(crate) fn anchor() {
    black_box((
        &raw const MPIR_proctable,
        &raw const MPIR_proctable_size,
        &raw const MPIR_debug_state,
        &raw const MPIR_being_debugged,
        &raw const MPIR_debug_abort_string,
        &raw const MPIR_i_am_starter,
        &raw const MPIR_partial_attach_ok,
        &raw const MPIR_executable_path,
        &raw const MPIR_server_arguments,
        MPIR_Breakpoint as extern "C" fn(),
    ));
}

/// The run-time addresses of the MPIR definitions of this process, by C
/// name: what a tool's symbol lookup must find.
pub(crate) fn addresses() -> [(&'static str, usize); 10] {
    anchor();
    [
        ("MPIR_proctable", (&raw const MPIR_proctable) as usize),
        (
            "MPIR_proctable_size",
            (&raw const MPIR_proctable_size) as usize,
        ),
        ("MPIR_debug_state", (&raw const MPIR_debug_state) as usize),
        (
            "MPIR_being_debugged",
            (&raw const MPIR_being_debugged) as usize,
        ),
        (
            "MPIR_debug_abort_string",
            (&raw const MPIR_debug_abort_string) as usize,
        ),
        ("MPIR_i_am_starter", (&raw const MPIR_i_am_starter) as usize),
        (
            "MPIR_partial_attach_ok",
            (&raw const MPIR_partial_attach_ok) as usize,
        ),
        (
            "MPIR_executable_path",
            (&raw const MPIR_executable_path) as usize,
        ),
        (
            "MPIR_server_arguments",
            (&raw const MPIR_server_arguments) as usize,
        ),
        (
            "MPIR_Breakpoint",
            MPIR_Breakpoint as extern "C" fn() as usize,
        ),
    ]
}

/// A process descriptor table in C layout with the strings it points to.
///
/// The entries point into the heap buffers of `strings`, which this value
/// owns and never changes, so moving it moves no pointee.
#[derive(Debug)]
pub(crate) struct CTable {
    entries: Box<[MPIR_PROCDESC]>,
    strings: Vec<CString>,
}

// SAFETY: the raw pointers in `entries` point only into the heap buffers of
// `strings`, owned by the same value and never mutated or freed before it is
// dropped; nothing else holds them (the tool reads them from outside the
// process). Sending the value to another thread moves that ownership whole.
unsafe impl Send for CTable {}

impl CTable {
    /// A table whose entry `i` is `rows[i] = (host, executable, pid)`, the
    /// first two as indices into `strings` (the same index for a string
    /// shared by several entries, §2.8.2).
    ///
    /// # Panics
    ///
    /// If an index is out of range of `strings` (a bug of the caller).
    pub(crate) fn new(strings: Vec<CString>, rows: &[(usize, usize, c_int)]) -> Self {
        let ptr = |i: usize| strings[i].as_ptr().cast_mut();
        let entries = rows
            .iter()
            .map(|&(host, exe, pid)| MPIR_PROCDESC {
                host_name: ptr(host),
                executable_name: ptr(exe),
                pid,
            })
            .collect();
        CTable { entries, strings }
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The distinct strings the entries point to.
    pub(crate) fn strings(&self) -> usize {
        self.strings.len()
    }
}

/// Makes `table` the process's `MPIR_proctable` (NULL if it is empty) and
/// `MPIR_proctable_size` its length: size 0 first, then the pointer, then
/// the size, so that a tool reading while the starter runs (the attach
/// model) sees an empty table or a complete one. The caller keeps `table`
/// alive until another table is installed, and serialises calls (the
/// [`Starter`](super::Starter) lock).
pub(crate) fn install_table(table: &CTable, size: c_int) {
    let ptr = if table.entries.is_empty() {
        ptr::null_mut()
    } else {
        table.entries.as_ptr().cast_mut()
    };
    // SAFETY: the statics are only written here and in the functions below,
    // all called with the `Starter` lock held, so no Rust code accesses them
    // concurrently; the tool's accesses come from outside the process. Raw
    // pointers from `&raw mut`, no reference to a `static mut` is made.
    unsafe {
        ptr::write_volatile(&raw mut MPIR_proctable_size, 0);
        fence(Ordering::SeqCst);
        ptr::write_volatile(&raw mut MPIR_proctable, ptr);
        fence(Ordering::SeqCst);
        ptr::write_volatile(&raw mut MPIR_proctable_size, size);
    }
    fence(Ordering::SeqCst);
}

/// Sets `MPIR_debug_abort_string` (NULL for `None`). The caller keeps the
/// string alive while it is installed and holds the `Starter` lock.
pub(crate) fn set_abort_string(s: Option<&CString>) {
    let p = s.map_or(ptr::null(), |s| s.as_ptr());
    // SAFETY: as in `install_table`: written only with the `Starter` lock
    // held, through a raw pointer.
    unsafe { ptr::write_volatile(&raw mut MPIR_debug_abort_string, p) };
    fence(Ordering::SeqCst);
}

/// Sets `MPIR_debug_state` and calls [`MPIR_Breakpoint`]: one MPIR event
/// (§2.8.6). The caller holds the `Starter` lock.
pub(crate) fn raise(state: c_int) {
    // SAFETY: as in `install_table`: written only with the `Starter` lock
    // held, through a raw pointer.
    unsafe { ptr::write_volatile(&raw mut MPIR_debug_state, state) };
    fence(Ordering::SeqCst);
    MPIR_Breakpoint();
}

/// The current `MPIR_debug_state`.
pub(crate) fn debug_state() -> c_int {
    // SAFETY: a volatile read of an `int` through a raw pointer; Rust code
    // writes it only with the `Starter` lock held, which the caller holds.
    unsafe { ptr::read_volatile(&raw const MPIR_debug_state) }
}

/// `MPIR_being_debugged`, read as the tool may change it at any time.
pub(crate) fn being_debugged() -> c_int {
    // SAFETY: no Rust code writes `MPIR_being_debugged` (only a tool, from
    // outside the process); a volatile read of an `int` through a raw
    // pointer.
    unsafe { ptr::read_volatile(&raw const MPIR_being_debugged) }
}

/// A copy of `MPIR_executable_path` as the tool left it.
pub(crate) fn executable_path() -> [u8; SPEC_EXECUTABLE_PATH_SIZE] {
    // SAFETY: no Rust code writes the array (only a tool, from outside the
    // process); one volatile read of the whole array through a raw pointer.
    let raw = unsafe { ptr::read_volatile(&raw const MPIR_executable_path) };
    raw.map(|c| c as u8)
}

/// A copy of `MPIR_server_arguments` as the tool left it.
pub(crate) fn server_arguments() -> [u8; SPEC_SERVER_ARGUMENTS_SIZE] {
    // SAFETY: as for `executable_path`.
    let raw = unsafe { ptr::read_volatile(&raw const MPIR_server_arguments) };
    raw.map(|c| c as u8)
}
