//! Decoding the process descriptor table (§2.8.2, §2.8.4, §2.8.5) and the
//! starter's scalar variables out of a target's memory, with hard
//! [`Limits`].
//!
//! Everything read is untrusted. Before reading, the decoders check the size
//! against the limits and the table's extent against the target's address
//! space, so a garbage `MPIR_proctable_size` costs no read and no
//! allocation; the table is then read in chunks of at most 64 KiB, and each
//! string in page-bounded chunks up to [`Limits::max_string_len`]. Every
//! failure is a [`DecodeError`]; nothing panics.

use std::collections::HashMap;
use std::fmt;

use thiserror::Error;

use crate::layout::{Field, ProcDescLayout, RawProcDesc, TargetLayout};
use crate::memory::{MemoryReader, ReadError};
use crate::state::DebugState;
use crate::string::TargetString;

/// The largest table read in one [`MemoryReader::read`] call.
pub(crate) const TABLE_CHUNK: usize = 64 * 1024;
/// Strings are never read across a boundary of this alignment in one call,
/// so a string that ends just before an unmapped page is still readable.
const PAGE: u64 = 4096;
/// The first read of a string; later reads double up to a page.
const FIRST_STRING_CHUNK: usize = 128;

/// Hard limits on what a decoder reads and allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Most table entries accepted (`MPIR_proctable_size` above it is an
    /// error, checked before any read). Default `1 << 20`.
    pub max_entries: usize,
    /// Longest string accepted, in bytes without the NUL: a string without a
    /// NUL in its first `max_string_len + 1` bytes is an error. Default 4096.
    pub max_string_len: usize,
    /// Most bytes of distinct strings one table may hold (shared strings
    /// count once). Default 128 MiB.
    pub max_total_string_bytes: usize,
}

impl Limits {
    /// The default limits: one million ranks, 4096-byte strings, 128 MiB of
    /// distinct strings.
    pub const DEFAULT: Limits = Limits {
        max_entries: 1 << 20,
        max_string_len: 4096,
        max_total_string_bytes: 128 << 20,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// One decoded process descriptor (§2.8.2). Its rank in `MPI_COMM_WORLD` is
/// its index in the table (§2.8.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProcDesc {
    /// "the target node location of the MPI process in the form of a host
    /// name or IP address string" (on BProc, a node number such as `"42"`).
    pub host_name: TargetString,
    /// "the name of the executable the MPI process is running", preferably
    /// a full path "which may be relative to the host node or target node".
    pub executable_name: TargetString,
    /// "the integer process identifier of the MPI process", sign-extended
    /// from the target's pid width.
    pub pid: i64,
}

/// What was being read when a [`DecodeError`] happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Location {
    /// Table entries `first .. first + count`.
    Entries {
        /// Rank of the first entry.
        first: usize,
        /// Number of entries.
        count: usize,
    },
    /// A string member of one entry.
    Name {
        /// The entry's rank.
        rank: usize,
        /// `host_name` or `executable_name`.
        field: Field,
    },
    /// A scalar variable (`MPIR_proctable_size`, `MPIR_debug_state`, ...).
    Variable,
    /// A string read by [`read_c_string`].
    String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Entries { first, count } => {
                write!(f, "the descriptors of ranks {first}..{}", first + count)
            }
            Location::Name { rank, field } => write!(f, "the {field} of rank {rank}"),
            Location::Variable => f.write_str("a variable"),
            Location::String => f.write_str("a string"),
        }
    }
}

/// Why decoding target memory failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// `MPIR_proctable_size` is negative. (§2.7 step 10 reads "if this value
    /// is not greater than zero, then the table is empty"; a negative count
    /// is garbage, reported so a tool can tell; treat it as empty if you
    /// follow step 10 to the letter.)
    #[error("MPIR_proctable_size is negative ({size})")]
    NegativeSize {
        /// The value read.
        size: i64,
    },
    /// `MPIR_proctable_size` exceeds [`Limits::max_entries`].
    #[error("MPIR_proctable_size {size} exceeds the limit of {max} entries")]
    TooManyEntries {
        /// The value read.
        size: i64,
        /// The limit.
        max: usize,
    },
    /// `MPIR_proctable` is NULL although the size is positive.
    #[error("MPIR_proctable is NULL but MPIR_proctable_size is {size}")]
    NullTable {
        /// The value of `MPIR_proctable_size`.
        size: i64,
    },
    /// The bytes to read run past the end of the target's address space.
    #[error("{len} bytes at {addr:#x} run past the end of the target's address space")]
    AddressOverflow {
        /// First address.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// A read failed.
    #[error("reading {at}: {source}")]
    Read {
        /// What was being read.
        at: Location,
        /// The reader's error.
        #[source]
        source: ReadError,
    },
    /// A string pointer is NULL.
    #[error("{at} is a NULL pointer")]
    NullPointer {
        /// Which string.
        at: Location,
    },
    /// No NUL within [`Limits::max_string_len`] + 1 bytes.
    #[error("{at} at {addr:#x} has no NUL within {max_len} bytes")]
    Unterminated {
        /// Which string.
        at: Location,
        /// Its address.
        addr: u64,
        /// The longest string accepted.
        max_len: usize,
    },
    /// The table's distinct strings exceed
    /// [`Limits::max_total_string_bytes`].
    #[error("the table's distinct strings exceed {max} bytes")]
    StringBudget {
        /// The limit.
        max: usize,
    },
    /// `MPIR_debug_state` holds a value that is no 32-bit C `int` (possible
    /// only with an 8-byte `int`).
    #[error("MPIR_debug_state holds {value}, which is out of range")]
    StateOutOfRange {
        /// The value read.
        value: i64,
    },
}

/// Why a bounded read of target memory failed, before the decoder says what was being read
/// (MPIR's [`Location`], or the PMIx decoders' own).
#[derive(Debug)]
pub(crate) enum Fault {
    /// The reader failed.
    Read(ReadError),
    /// The bytes run past the end of the address space.
    AddressOverflow {
        /// First address.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// No NUL within `max_len + 1` bytes.
    Unterminated {
        /// The string's address.
        addr: u64,
        /// The longest string accepted.
        max_len: usize,
    },
}

impl Fault {
    /// The MPIR decoders' error for this fault while reading `at`.
    fn at(self, at: Location) -> DecodeError {
        match self {
            Fault::Read(source) => DecodeError::Read { at, source },
            Fault::AddressOverflow { addr, len } => DecodeError::AddressOverflow { addr, len },
            Fault::Unterminated { addr, max_len } => {
                DecodeError::Unterminated { at, addr, max_len }
            }
        }
    }
}

/// Reads `buf.len()` bytes at `addr` after checking they lie inside an address space whose
/// highest address is `max`.
pub(crate) fn read_in_space<R: MemoryReader + ?Sized>(
    reader: &R,
    max: u64,
    addr: u64,
    buf: &mut [u8],
) -> Result<(), Fault> {
    let len = buf.len() as u64;
    if addr > max || (len > 0 && len - 1 > max - addr) {
        return Err(Fault::AddressOverflow { addr, len });
    }
    reader.read(addr, buf).map_err(Fault::Read)
}

/// Reads `buf.len()` bytes at `addr` after checking they lie inside the
/// target's address space.
fn read_checked<R: MemoryReader + ?Sized>(
    reader: &R,
    target: &TargetLayout,
    addr: u64,
    buf: &mut [u8],
    at: Location,
) -> Result<(), DecodeError> {
    read_in_space(reader, target.max_address(), addr, buf).map_err(|f| f.at(at))
}

/// Reads the NUL-terminated string at `addr` (not NULL), at most `max_len` bytes before the
/// NUL, in an address space whose highest address is `max`: in page-bounded chunks (the
/// first [`FIRST_STRING_CHUNK`] bytes, then doubling up to a page), a failed chunk retried
/// with halves down to single bytes.
pub(crate) fn read_string_in_space<R: MemoryReader + ?Sized>(
    reader: &R,
    max: u64,
    addr: u64,
    max_len: usize,
) -> Result<Vec<u8>, Fault> {
    let budget = max_len.saturating_add(1);
    let mut out = Vec::new();
    let mut chunk = [0u8; PAGE as usize];
    let mut want = FIRST_STRING_CHUNK;
    let mut shrunk = false;
    let mut cur = addr;
    loop {
        let allowed = budget - out.len();
        let to_page = (PAGE - cur % PAGE) as usize;
        let n = want.min(to_page).min(allowed);
        match read_in_space(reader, max, cur, &mut chunk[..n]) {
            Ok(()) => {}
            // A reader whose mappings are finer than pages (a core file, a
            // `MemoryImage`) may fail a read that runs past the string's
            // end: retry with halves, down to single bytes.
            Err(Fault::Read(_)) if n > 1 => {
                want = n / 2;
                shrunk = true;
                continue;
            }
            Err(e) => return Err(e),
        }
        if let Some(nul) = chunk[..n].iter().position(|b| *b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
        if out.len() >= budget {
            return Err(Fault::Unterminated { addr, max_len });
        }
        // `n` bytes were readable, so `cur + n` is at most max_address + 1.
        cur = cur.checked_add(n as u64).ok_or(Fault::AddressOverflow {
            addr,
            len: out.len() as u64 + 1,
        })?;
        if !shrunk {
            want = (want * 2).min(PAGE as usize);
        }
    }
}

/// Reads the NUL-terminated string at `addr` (not NULL), at most `max_len`
/// bytes before the NUL.
fn read_string_at<R: MemoryReader + ?Sized>(
    reader: &R,
    target: &TargetLayout,
    addr: u64,
    max_len: usize,
    at: Location,
) -> Result<Vec<u8>, DecodeError> {
    read_string_in_space(reader, target.max_address(), addr, max_len).map_err(|f| f.at(at))
}

/// The strings of one table: each read once per distinct address (MPIR document §2.8.2:
/// "Sharing the strings enhances the tool's scalability by allowing it to cache data from the
/// starter process and avoid reading redundant character strings"), their bytes with NULs
/// counted against [`Limits::max_total_string_bytes`].
#[derive(Default)]
pub(crate) struct StringCache {
    strings: HashMap<u64, TargetString>,
    bytes: usize,
}

impl StringCache {
    /// The string at `ptr` (not NULL) in an address space whose highest address is `max`:
    /// the one read before at `ptr`, else read now with at most [`Limits::max_string_len`]
    /// bytes; `Err(None)` when it takes the table's strings past
    /// [`Limits::max_total_string_bytes`].
    pub(crate) fn read<R: MemoryReader + ?Sized>(
        &mut self,
        reader: &R,
        max: u64,
        ptr: u64,
        limits: &Limits,
    ) -> Result<TargetString, Option<Fault>> {
        if let Some(s) = self.strings.get(&ptr) {
            return Ok(s.clone());
        }
        let bytes = read_string_in_space(reader, max, ptr, limits.max_string_len).map_err(Some)?;
        self.bytes = self.bytes.saturating_add(bytes.len() + 1);
        if self.bytes > limits.max_total_string_bytes {
            return Err(None);
        }
        let s = TargetString::from(bytes);
        self.strings.insert(ptr, s.clone());
        Ok(s)
    }
}

/// The number of entries for a `MPIR_proctable_size` of `size`, if the
/// limits accept it.
fn check_size(size: i64, limits: &Limits) -> Result<usize, DecodeError> {
    if size < 0 {
        return Err(DecodeError::NegativeSize { size });
    }
    match usize::try_from(size) {
        Ok(n) if n <= limits.max_entries => Ok(n),
        _ => Err(DecodeError::TooManyEntries {
            size,
            max: limits.max_entries,
        }),
    }
}

/// Decodes the process descriptor table: `size` entries of `layout` at
/// `table_addr` (the *value* of `MPIR_proctable`, §2.8.4; `size` is the value
/// of `MPIR_proctable_size`, §2.8.5). Entry `i` is rank `i` in
/// `MPI_COMM_WORLD`.
///
/// - `size == 0` is an empty table, read without touching memory; a negative
///   size or one above [`Limits::max_entries`] is an error before any read.
/// - A NULL table with a positive size, a table running past the address
///   space, a failed read, a NULL or unterminated string: errors.
/// - Strings are read once per distinct address and shared between the
///   entries that point at them (§2.8.2: "Sharing the strings enhances the
///   tool's scalability by allowing it to cache data from the starter
///   process and avoid reading redundant character strings").
pub fn decode_proctable<R: MemoryReader + ?Sized>(
    reader: &R,
    layout: &ProcDescLayout,
    table_addr: u64,
    size: i64,
    limits: &Limits,
) -> Result<Vec<ProcDesc>, DecodeError> {
    let n = check_size(size, limits)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    if table_addr == 0 {
        return Err(DecodeError::NullTable { size });
    }
    let target = layout.target();
    let stride = layout.size();
    let total = (n as u64).checked_mul(stride as u64);
    match total {
        Some(len)
            if table_addr <= target.max_address()
                && len - 1 <= target.max_address() - table_addr => {}
        _ => {
            return Err(DecodeError::AddressOverflow {
                addr: table_addr,
                len: total.unwrap_or(u64::MAX),
            });
        }
    }

    let per_chunk = (TABLE_CHUNK / stride).max(1);
    let mut buf = vec![0u8; per_chunk.min(n) * stride];
    let mut out = Vec::with_capacity(per_chunk.min(n));
    let mut strings = StringCache::default();
    let mut first = 0;
    while first < n {
        let count = per_chunk.min(n - first);
        let bytes = &mut buf[..count * stride];
        // In range: checked above for the whole table.
        let addr = table_addr + (first * stride) as u64;
        read_checked(
            reader,
            target,
            addr,
            bytes,
            Location::Entries { first, count },
        )?;
        for (i, entry) in bytes.chunks_exact(stride).enumerate() {
            let rank = first + i;
            // `entry` has the layout's size, so this always decodes; were it
            // not to, the NULL pointers would be reported, not a panic.
            let raw = layout.decode_entry(entry).unwrap_or(RawProcDesc {
                host_name: 0,
                executable_name: 0,
                pid: 0,
            });
            let mut name = |ptr: u64, field: Field| -> Result<TargetString, DecodeError> {
                let at = Location::Name { rank, field };
                if ptr == 0 {
                    return Err(DecodeError::NullPointer { at });
                }
                strings
                    .read(reader, target.max_address(), ptr, limits)
                    .map_err(|e| match e {
                        Some(fault) => fault.at(at),
                        None => DecodeError::StringBudget {
                            max: limits.max_total_string_bytes,
                        },
                    })
            };
            let host_name = name(raw.host_name, Field::HostName)?;
            let executable_name = name(raw.executable_name, Field::ExecutableName)?;
            out.push(ProcDesc {
                host_name,
                executable_name,
                pid: raw.pid,
            });
        }
        first += count;
    }
    Ok(out)
}

/// Reads `MPIR_proctable_size` and `MPIR_proctable` at the addresses of the
/// two variables (from the starter's symbol table) and decodes the table
/// with [`decode_proctable`] (§2.7 steps 10–14).
pub fn read_proctable<R: MemoryReader + ?Sized>(
    reader: &R,
    layout: &ProcDescLayout,
    proctable_var: u64,
    proctable_size_var: u64,
    limits: &Limits,
) -> Result<Vec<ProcDesc>, DecodeError> {
    let size = read_int(reader, layout.target(), proctable_size_var)?;
    if check_size(size, limits)? == 0 {
        return Ok(Vec::new());
    }
    let table = read_pointer(reader, layout.target(), proctable_var)?;
    decode_proctable(reader, layout, table, size, limits)
}

/// Reads a C `int` variable at `addr` (`MPIR_proctable_size`,
/// `MPIR_debug_state`, `MPIR_being_debugged`, `MPIR_debug_gate`),
/// sign-extended.
pub fn read_int<R: MemoryReader + ?Sized>(
    reader: &R,
    target: &TargetLayout,
    addr: u64,
) -> Result<i64, DecodeError> {
    let mut buf = [0u8; 8];
    let buf = &mut buf[..usize::from(target.int_width())];
    read_checked(reader, target, addr, buf, Location::Variable)?;
    Ok(target.decode_int(buf).unwrap_or_default())
}

/// Reads a pointer variable at `addr` (`MPIR_proctable`,
/// `MPIR_debug_abort_string`).
pub fn read_pointer<R: MemoryReader + ?Sized>(
    reader: &R,
    target: &TargetLayout,
    addr: u64,
) -> Result<u64, DecodeError> {
    let mut buf = [0u8; 8];
    let buf = &mut buf[..usize::from(target.pointer_width())];
    read_checked(reader, target, addr, buf, Location::Variable)?;
    Ok(target.decode_pointer(buf).unwrap_or_default())
}

/// Reads `MPIR_debug_state` at `addr` (§2.8.6), after the starter stopped at
/// `MPIR_Breakpoint`.
pub fn read_debug_state<R: MemoryReader + ?Sized>(
    reader: &R,
    target: &TargetLayout,
    addr: u64,
) -> Result<DebugState, DecodeError> {
    let value = read_int(reader, target, addr)?;
    i32::try_from(value)
        .map(DebugState::from_raw)
        .map_err(|_| DecodeError::StateOutOfRange { value })
}

/// Reads the NUL-terminated string at `addr`, at most `max_len` bytes before
/// the NUL. A NULL `addr` is [`DecodeError::NullPointer`].
pub fn read_c_string<R: MemoryReader + ?Sized>(
    reader: &R,
    target: &TargetLayout,
    addr: u64,
    max_len: usize,
) -> Result<TargetString, DecodeError> {
    if addr == 0 {
        return Err(DecodeError::NullPointer {
            at: Location::String,
        });
    }
    read_string_at(reader, target, addr, max_len, Location::String).map(TargetString::from)
}

/// Reads the abort reason (§2.8.7): the string `MPIR_debug_abort_string`
/// (at `var_addr`) points to, `None` if the pointer is NULL.
pub fn read_abort_string<R: MemoryReader + ?Sized>(
    reader: &R,
    target: &TargetLayout,
    var_addr: u64,
    max_len: usize,
) -> Result<Option<TargetString>, DecodeError> {
    match read_pointer(reader, target, var_addr)? {
        0 => Ok(None),
        ptr => read_c_string(reader, target, ptr, max_len).map(Some),
    }
}
