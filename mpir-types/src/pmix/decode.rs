//! Decoding what a PMIx query answers out of memory, through a [`MemoryReader`] and within
//! the crate's hard [`Limits`]: the proc table of [`PMIX_QUERY_PROC_TABLE`] (a
//! [`pmix_value_t`] holding a [`pmix_data_array_t`] of [`pmix_proc_info_t`]), the namespace
//! list of [`PMIX_QUERY_NAMESPACES`] (a string), and the value of one key in an array of
//! [`pmix_info_t`] (a query's results).
//!
//! The memory is the tool's own (the library allocates the answer there), read as untrusted
//! bytes in the layout of the `#[repr(C)]` definitions of [`super::abi`]: a type tag that is
//! not the one expected, an element count above the limits, a NULL pointer, a string without
//! its NUL, an array running past the address space, a failed read, all are a
//! [`PmixDecodeError`] before anything is allocated for them; nothing panics.

use std::ffi::CStr;
use std::fmt;
use std::mem::offset_of;

use thiserror::Error;

use super::abi::{
    PMIX_DATA_ARRAY, PMIX_MAX_KEYLEN, PMIX_MAX_NSLEN, PMIX_PROC_INFO, PMIX_STRING, data_type_name,
    pmix_data_array_t, pmix_data_type_t, pmix_info_t, pmix_proc_info_t, pmix_proc_state_t,
    pmix_proc_t, pmix_rank_t, pmix_value_t,
};
#[cfg(doc)]
use super::abi::{PMIX_QUERY_NAMESPACES, PMIX_QUERY_PROC_TABLE};
use crate::layout::TargetLayout;
use crate::memory::{MemoryReader, ReadError};
use crate::proctable::{
    Fault, Limits, ProcDesc, StringCache, TABLE_CHUNK, read_in_space, read_string_in_space,
};
use crate::string::TargetString;

/// The highest address of this process (the answer is in the tool's own memory).
const MAX_ADDRESS: u64 = TargetLayout::host().max_address();
const PTR: usize = size_of::<usize>();

const VALUE_SIZE: usize = size_of::<pmix_value_t>();
const VALUE_TYPE: usize = offset_of!(pmix_value_t, type_);
const VALUE_DATA: usize = offset_of!(pmix_value_t, data);

const DARRAY_SIZE: usize = size_of::<pmix_data_array_t>();
const DARRAY_TYPE: usize = offset_of!(pmix_data_array_t, type_);
const DARRAY_COUNT: usize = offset_of!(pmix_data_array_t, size);
const DARRAY_ARRAY: usize = offset_of!(pmix_data_array_t, array);

const PINFO_SIZE: usize = size_of::<pmix_proc_info_t>();
const PINFO_NSPACE: usize = offset_of!(pmix_proc_info_t, proc) + offset_of!(pmix_proc_t, nspace);
const PINFO_RANK: usize = offset_of!(pmix_proc_info_t, proc) + offset_of!(pmix_proc_t, rank);
const PINFO_HOSTNAME: usize = offset_of!(pmix_proc_info_t, hostname);
const PINFO_EXECUTABLE: usize = offset_of!(pmix_proc_info_t, executable_name);
const PINFO_PID: usize = offset_of!(pmix_proc_info_t, pid);
const PINFO_EXIT_CODE: usize = offset_of!(pmix_proc_info_t, exit_code);
const PINFO_STATE: usize = offset_of!(pmix_proc_info_t, state);

const INFO_SIZE: usize = size_of::<pmix_info_t>();
const INFO_KEY: usize = offset_of!(pmix_info_t, key);
const INFO_VALUE: usize = offset_of!(pmix_info_t, value);

/// `N` bytes at `at` of `bytes` (`at + N` is within `bytes`: the offsets are the
/// definitions' own, into buffers of the definitions' size).
fn field<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

fn ne_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes(field(bytes, at))
}

fn ne_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(field(bytes, at))
}

fn ne_i32(bytes: &[u8], at: usize) -> i32 {
    i32::from_ne_bytes(field(bytes, at))
}

/// A pointer or a `size_t`.
fn ne_word(bytes: &[u8], at: usize) -> u64 {
    usize::from_ne_bytes(field::<PTR>(bytes, at)) as u64
}

/// A member of [`pmix_proc_info_t`] that holds a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcInfoField {
    /// `proc.nspace`, the fixed array.
    Nspace,
    /// `hostname`.
    Hostname,
    /// `executable_name`.
    ExecutableName,
}

impl ProcInfoField {
    /// The member's C name.
    pub const fn name(self) -> &'static str {
        match self {
            ProcInfoField::Nspace => "proc.nspace",
            ProcInfoField::Hostname => "hostname",
            ProcInfoField::ExecutableName => "executable_name",
        }
    }
}

impl fmt::Display for ProcInfoField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What was being read when a [`PmixDecodeError`] happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PmixLocation {
    /// The [`pmix_value_t`] at the address given.
    Value,
    /// The [`pmix_data_array_t`] the value points to.
    DataArray,
    /// Elements `first .. first + count` of the array.
    Elements {
        /// Index of the first element.
        first: usize,
        /// Number of elements.
        count: usize,
    },
    /// A string member of element `index` of a proc table.
    Element {
        /// The element's index in the array (not its rank).
        index: usize,
        /// The member.
        field: ProcInfoField,
    },
    /// The string of a [`PMIX_QUERY_NAMESPACES`] answer.
    Namespaces,
    /// Elements `first .. first + count` of an array of [`pmix_info_t`].
    Infos {
        /// Index of the first element.
        first: usize,
        /// Number of elements.
        count: usize,
    },
    /// The key of element `index` of an array of [`pmix_info_t`].
    InfoKey {
        /// The element's index.
        index: usize,
    },
}

impl fmt::Display for PmixLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PmixLocation::Value => f.write_str("the pmix_value_t"),
            PmixLocation::DataArray => f.write_str("the pmix_data_array_t"),
            PmixLocation::Elements { first, count } => {
                write!(
                    f,
                    "the pmix_proc_info_t elements {first}..{}",
                    first + count
                )
            }
            PmixLocation::Element { index, field } => write!(f, "the {field} of element {index}"),
            PmixLocation::Namespaces => f.write_str("the namespace list"),
            PmixLocation::Infos { first, count } => {
                write!(f, "the pmix_info_t elements {first}..{}", first + count)
            }
            PmixLocation::InfoKey { index } => write!(f, "the key of pmix_info_t {index}"),
        }
    }
}

/// A data type's number and C name, for messages.
fn type_label(ty: &pmix_data_type_t) -> String {
    match data_type_name(*ty) {
        Some(name) => format!("{ty} ({name})"),
        None => ty.to_string(),
    }
}

/// Why decoding a PMIx answer failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PmixDecodeError {
    /// A type tag is not the one the answer must have.
    #[error("{at} has type {}, not {}", type_label(.found), type_label(.expected))]
    WrongType {
        /// The value or the array.
        at: PmixLocation,
        /// The tag read.
        found: pmix_data_type_t,
        /// The tag required.
        expected: pmix_data_type_t,
    },
    /// More elements than [`Limits::max_entries`] (checked before they are read).
    #[error("{at}: {count} elements exceed the limit of {max}")]
    TooManyElements {
        /// The array, or the namespace list.
        at: PmixLocation,
        /// The number claimed or found.
        count: u64,
        /// The limit.
        max: usize,
    },
    /// A pointer is NULL where the answer needs one.
    #[error("{at} holds a NULL pointer")]
    NullPointer {
        /// Which pointer: the value's (to the array or string), the array's (to the
        /// elements), or an element's string.
        at: PmixLocation,
    },
    /// The bytes to read run past the end of the address space.
    #[error("{at}: {len} bytes at {addr:#x} run past the end of the address space")]
    AddressOverflow {
        /// What was being read.
        at: PmixLocation,
        /// First address.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// A read failed.
    #[error("reading {at}: {source}")]
    Read {
        /// What was being read.
        at: PmixLocation,
        /// The reader's error.
        #[source]
        source: ReadError,
    },
    /// A string without a NUL within its bound: [`Limits::max_string_len`] + 1 bytes for a
    /// pointed-to string, the array for a namespace (`PMIX_MAX_NSLEN` + 1) or a key
    /// (`PMIX_MAX_KEYLEN` + 1).
    #[error("{at} at {addr:#x} has no NUL within {max_len} bytes")]
    Unterminated {
        /// Which string.
        at: PmixLocation,
        /// Its address.
        addr: u64,
        /// The longest string accepted.
        max_len: usize,
    },
    /// The table's distinct strings exceed [`Limits::max_total_string_bytes`].
    #[error("the proc table's distinct strings exceed {max} bytes")]
    StringBudget {
        /// The limit.
        max: usize,
    },
    /// A rank that is not below the number of processes of the table (a rank is missing,
    /// or the rank is a reserved one such as `PMIX_RANK_WILDCARD`).
    #[error("element {index} has rank {rank}, not below the table's {count} processes")]
    RankOutOfRange {
        /// The element's index.
        index: usize,
        /// Its rank.
        rank: pmix_rank_t,
        /// The number of processes of the table.
        count: usize,
    },
    /// Two elements with the same rank.
    #[error("elements {first} and {second} both have rank {rank}")]
    DuplicateRank {
        /// The rank.
        rank: pmix_rank_t,
        /// The first element with it.
        first: usize,
        /// The second.
        second: usize,
    },
    /// An element of another namespace than the table's first (a table of one job has
    /// one).
    #[error("element {index} is of another namespace than element {first}")]
    MixedNamespaces {
        /// The first element kept.
        first: usize,
        /// The element of another namespace.
        index: usize,
    },
    /// A name of the namespace list longer than `PMIX_MAX_NSLEN`.
    #[error("name {index} of the namespace list has {len} bytes, more than {max}", max = PMIX_MAX_NSLEN)]
    NamespaceTooLong {
        /// The name's index in the list.
        index: usize,
        /// Its length.
        len: usize,
    },
}

/// The PMIx error for a fault while reading `at`.
fn fault(f: Fault, at: PmixLocation) -> PmixDecodeError {
    match f {
        Fault::Read(source) => PmixDecodeError::Read { at, source },
        Fault::AddressOverflow { addr, len } => PmixDecodeError::AddressOverflow { at, addr, len },
        Fault::Unterminated { addr, max_len } => {
            PmixDecodeError::Unterminated { at, addr, max_len }
        }
    }
}

/// One decoded [`pmix_proc_info_t`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProcInfo {
    /// `proc.nspace`: the namespace (job) of the process.
    pub nspace: TargetString,
    /// `proc.rank`: its rank in the namespace.
    pub rank: pmix_rank_t,
    /// `hostname`: the host it runs on.
    pub host_name: TargetString,
    /// `executable_name`: the executable it runs.
    pub executable_name: TargetString,
    /// `pid`: its pid on that host, sign-extended.
    pub pid: i64,
    /// `exit_code`.
    pub exit_code: i32,
    /// `state` (one of [`PROC_STATES`](super::abi::PROC_STATES) or the host's own).
    pub state: pmix_proc_state_t,
}

impl ProcInfo {
    /// The MPIR descriptor of the process (host, executable, pid; its rank is its index).
    pub fn to_proc_desc(&self) -> ProcDesc {
        ProcDesc {
            host_name: self.host_name.clone(),
            executable_name: self.executable_name.clone(),
            pid: self.pid,
        }
    }
}

/// The first word of the union of the [`pmix_value_t`] at `addr`, whose tag must be
/// `expected`.
fn read_value_word<R: MemoryReader + ?Sized>(
    reader: &R,
    addr: u64,
    expected: pmix_data_type_t,
) -> Result<u64, PmixDecodeError> {
    let mut value = [0u8; VALUE_SIZE];
    read_in_space(reader, MAX_ADDRESS, addr, &mut value)
        .map_err(|f| fault(f, PmixLocation::Value))?;
    let found = ne_u16(&value, VALUE_TYPE);
    if found != expected {
        return Err(PmixDecodeError::WrongType {
            at: PmixLocation::Value,
            found,
            expected,
        });
    }
    Ok(ne_word(&value, VALUE_DATA))
}

/// Whether `len` bytes at `addr` lie in an address space whose highest address is `max`.
fn in_space(addr: u64, len: u64, max: u64) -> bool {
    len == 0 || (addr <= max && len - 1 <= max - addr)
}

/// Checks that `n` elements of `size` bytes at `addr` lie in the address space.
fn check_extent(at: PmixLocation, addr: u64, n: usize, size: usize) -> Result<(), PmixDecodeError> {
    let total = (n as u64).checked_mul(size as u64);
    match total {
        Some(len) if in_space(addr, len, MAX_ADDRESS) => Ok(()),
        _ => Err(PmixDecodeError::AddressOverflow {
            at,
            addr,
            len: total.unwrap_or(u64::MAX),
        }),
    }
}

/// Reads the `n` elements of `size` bytes at `addr` (checked to lie in the address space
/// first) in chunks of at most 64 KiB, and hands each to `each` with its index and address
/// until `each` returns `Some` or an error. `chunk` names elements `first .. first + count`
/// for errors.
fn scan<R: MemoryReader + ?Sized, T>(
    reader: &R,
    addr: u64,
    n: usize,
    size: usize,
    chunk: fn(usize, usize) -> PmixLocation,
    mut each: impl FnMut(usize, u64, &[u8]) -> Result<Option<T>, PmixDecodeError>,
) -> Result<Option<T>, PmixDecodeError> {
    check_extent(chunk(0, n), addr, n, size)?;
    let per_chunk = (TABLE_CHUNK / size).max(1);
    let mut buf = vec![0u8; per_chunk.min(n) * size];
    let mut first = 0;
    while first < n {
        let count = per_chunk.min(n - first);
        let bytes = &mut buf[..count * size];
        // In range: checked above for the whole array.
        let at = addr + (first * size) as u64;
        read_in_space(reader, MAX_ADDRESS, at, bytes).map_err(|f| fault(f, chunk(first, count)))?;
        for (i, entry) in bytes.chunks_exact(size).enumerate() {
            if let Some(found) = each(first + i, at + (i * size) as u64, entry)? {
                return Ok(Some(found));
            }
        }
        first += count;
    }
    Ok(None)
}

/// The bytes before the NUL of a fixed array, if there is one.
fn until_nul(bytes: &[u8]) -> Option<&[u8]> {
    bytes.iter().position(|b| *b == 0).map(|nul| &bytes[..nul])
}

/// The string in the fixed array of `max_len + 1` bytes at `offset` of the element `entry`
/// read at `addr` (a namespace, a key): the bytes before its NUL.
fn fixed_string(
    entry: &[u8],
    addr: u64,
    offset: usize,
    max_len: usize,
    at: PmixLocation,
) -> Result<&[u8], PmixDecodeError> {
    until_nul(&entry[offset..offset + max_len + 1]).ok_or(PmixDecodeError::Unterminated {
        at,
        addr: addr + offset as u64,
        max_len,
    })
}

/// Decodes the proc table in the [`pmix_value_t`] at `value_addr`, every element in array
/// order but those of namespace `skip`, each with its index in the array.
fn proc_infos<R: MemoryReader + ?Sized>(
    reader: &R,
    value_addr: u64,
    skip: Option<&[u8]>,
    limits: &Limits,
) -> Result<Vec<(usize, ProcInfo)>, PmixDecodeError> {
    let darray_addr = read_value_word(reader, value_addr, PMIX_DATA_ARRAY)?;
    if darray_addr == 0 {
        return Err(PmixDecodeError::NullPointer {
            at: PmixLocation::Value,
        });
    }
    let mut darray = [0u8; DARRAY_SIZE];
    read_in_space(reader, MAX_ADDRESS, darray_addr, &mut darray)
        .map_err(|f| fault(f, PmixLocation::DataArray))?;
    let found = ne_u16(&darray, DARRAY_TYPE);
    if found != PMIX_PROC_INFO {
        return Err(PmixDecodeError::WrongType {
            at: PmixLocation::DataArray,
            found,
            expected: PMIX_PROC_INFO,
        });
    }
    let count = ne_word(&darray, DARRAY_COUNT);
    let n = match usize::try_from(count) {
        Ok(n) if n <= limits.max_entries => n,
        _ => {
            return Err(PmixDecodeError::TooManyElements {
                at: PmixLocation::DataArray,
                count,
                max: limits.max_entries,
            });
        }
    };
    if n == 0 {
        return Ok(Vec::new());
    }
    let array = ne_word(&darray, DARRAY_ARRAY);
    if array == 0 {
        return Err(PmixDecodeError::NullPointer {
            at: PmixLocation::DataArray,
        });
    }
    let mut out = Vec::with_capacity(n.min(TABLE_CHUNK / PINFO_SIZE));
    let mut strings = StringCache::default();
    let mut nspace: Option<TargetString> = None;
    let elements = |first, count| PmixLocation::Elements { first, count };
    scan(
        reader,
        array,
        n,
        PINFO_SIZE,
        elements,
        |index, addr, entry| {
            let field = ProcInfoField::Nspace;
            let at = PmixLocation::Element { index, field };
            let ns = fixed_string(entry, addr, PINFO_NSPACE, PMIX_MAX_NSLEN, at)?;
            if skip == Some(ns) {
                return Ok(None::<()>);
            }
            let ns = match &nspace {
                Some(s) if s == ns => s.clone(),
                _ => {
                    let s = TargetString::from(ns);
                    nspace = Some(s.clone());
                    s
                }
            };
            let mut string = |ptr: u64, field: ProcInfoField| {
                let at = PmixLocation::Element { index, field };
                if ptr == 0 {
                    return Err(PmixDecodeError::NullPointer { at });
                }
                strings
                    .read(reader, MAX_ADDRESS, ptr, limits)
                    .map_err(|e| match e {
                        Some(f) => fault(f, at),
                        None => PmixDecodeError::StringBudget {
                            max: limits.max_total_string_bytes,
                        },
                    })
            };
            let host_name = string(ne_word(entry, PINFO_HOSTNAME), ProcInfoField::Hostname)?;
            let executable_name = string(
                ne_word(entry, PINFO_EXECUTABLE),
                ProcInfoField::ExecutableName,
            )?;
            out.push((
                index,
                ProcInfo {
                    nspace: ns,
                    rank: ne_u32(entry, PINFO_RANK),
                    host_name,
                    executable_name,
                    pid: i64::from(ne_i32(entry, PINFO_PID)),
                    exit_code: ne_i32(entry, PINFO_EXIT_CODE),
                    state: entry[PINFO_STATE],
                },
            ));
            Ok(None)
        },
    )?;
    Ok(out)
}

/// Decodes every element of the proc table in the [`pmix_value_t`] at `value_addr` (the
/// `value` of the [`PMIX_QUERY_PROC_TABLE`] result), in array order.
///
/// The value must have type [`PMIX_DATA_ARRAY`] and point to a [`pmix_data_array_t`] of
/// type [`PMIX_PROC_INFO`] with at most [`Limits::max_entries`] elements (checked before
/// the elements are read); an empty array is an empty table, read without touching the
/// (then possibly NULL) element pointer. Each namespace must hold its NUL within its array;
/// each host and executable name is a non-NULL string of at most
/// [`Limits::max_string_len`] bytes, read once per distinct address and shared between the
/// elements that point at it, all of them within [`Limits::max_total_string_bytes`].
pub fn decode_proc_infos<R: MemoryReader + ?Sized>(
    reader: &R,
    value_addr: u64,
    limits: &Limits,
) -> Result<Vec<ProcInfo>, PmixDecodeError> {
    let infos = proc_infos(reader, value_addr, None, limits)?;
    Ok(infos.into_iter().map(|(_, info)| info).collect())
}

/// Decodes the proc table in the [`pmix_value_t`] at `value_addr` as
/// [`decode_proc_infos`] does, into the MPIR process table: entry `r` is the process of
/// rank `r`, as in `MPIR_proctable` (MPIR document, §2.8.4).
///
/// Elements of namespace `skip` (the tool's own, when the host lists it; bytes without the
/// NUL) are left out before their strings are read. The others must be of one namespace,
/// and their ranks must be `0 .. n` for `n` of them, in any order: a rank at or above `n`
/// is [`PmixDecodeError::RankOutOfRange`] (a gap, or a reserved rank), a rank seen twice
/// [`PmixDecodeError::DuplicateRank`].
pub fn decode_proc_table<R: MemoryReader + ?Sized>(
    reader: &R,
    value_addr: u64,
    skip: Option<&[u8]>,
    limits: &Limits,
) -> Result<Vec<ProcDesc>, PmixDecodeError> {
    let infos = proc_infos(reader, value_addr, skip, limits)?;
    let n = infos.len();
    let mut slots: Vec<Option<(usize, ProcDesc)>> = vec![None; n];
    let first_nspace = infos
        .first()
        .map(|(index, info)| (*index, info.nspace.clone()));
    for (index, info) in &infos {
        if let Some((first, ns)) = &first_nspace
            && *ns != info.nspace
        {
            return Err(PmixDecodeError::MixedNamespaces {
                first: *first,
                index: *index,
            });
        }
        let rank = info.rank;
        let slot = usize::try_from(rank)
            .ok()
            .and_then(|r| slots.get_mut(r))
            .ok_or(PmixDecodeError::RankOutOfRange {
                index: *index,
                rank,
                count: n,
            })?;
        if let Some((first, _)) = slot {
            return Err(PmixDecodeError::DuplicateRank {
                rank,
                first: *first,
                second: *index,
            });
        }
        *slot = Some((*index, info.to_proc_desc()));
    }
    // `n` distinct ranks below `n`: every slot is filled.
    Ok(slots.into_iter().flatten().map(|(_, desc)| desc).collect())
}

/// Splits a [`PMIX_QUERY_NAMESPACES`] answer (the string's bytes; a NUL ends it) into its
/// names: separated by commas, each trimmed of ASCII white space, empty ones dropped,
/// `skip` (bytes without the NUL) left out. A name longer than `PMIX_MAX_NSLEN` is
/// [`PmixDecodeError::NamespaceTooLong`]; more names than [`Limits::max_entries`] is
/// [`PmixDecodeError::TooManyElements`].
pub fn parse_namespaces(
    list: &[u8],
    skip: Option<&[u8]>,
    limits: &Limits,
) -> Result<Vec<TargetString>, PmixDecodeError> {
    let list = until_nul(list).unwrap_or(list);
    let mut names = Vec::new();
    for (index, piece) in list.split(|b| *b == b',').enumerate() {
        let name = piece.trim_ascii();
        if name.len() > PMIX_MAX_NSLEN {
            return Err(PmixDecodeError::NamespaceTooLong {
                index,
                len: name.len(),
            });
        }
        if !name.is_empty() && skip != Some(name) {
            names.push(name);
        }
    }
    if names.len() > limits.max_entries {
        return Err(PmixDecodeError::TooManyElements {
            at: PmixLocation::Namespaces,
            count: names.len() as u64,
            max: limits.max_entries,
        });
    }
    Ok(names.into_iter().map(TargetString::from).collect())
}

/// Decodes the namespaces in the [`pmix_value_t`] at `value_addr` (the `value` of the
/// [`PMIX_QUERY_NAMESPACES`] result): a value of type [`PMIX_STRING`] whose non-NULL string
/// of at most [`Limits::max_string_len`] bytes [`parse_namespaces`] splits.
pub fn decode_namespaces<R: MemoryReader + ?Sized>(
    reader: &R,
    value_addr: u64,
    skip: Option<&[u8]>,
    limits: &Limits,
) -> Result<Vec<TargetString>, PmixDecodeError> {
    let ptr = read_value_word(reader, value_addr, PMIX_STRING)?;
    if ptr == 0 {
        return Err(PmixDecodeError::NullPointer {
            at: PmixLocation::Value,
        });
    }
    let list = read_string_in_space(reader, MAX_ADDRESS, ptr, limits.max_string_len)
        .map_err(|f| fault(f, PmixLocation::Namespaces))?;
    parse_namespaces(&list, skip, limits)
}

/// The address of the `value` of the first of the `ninfo` [`pmix_info_t`] at `infos_addr`
/// whose key is `key` (a query's results: [`PMIX_QUERY_PROC_TABLE`] with the proc table);
/// `None` if none has it. At most [`Limits::max_entries`] elements (checked before they are
/// read; none is no read); each key must hold its NUL within its array.
pub fn find_info_value<R: MemoryReader + ?Sized>(
    reader: &R,
    infos_addr: u64,
    ninfo: usize,
    key: &CStr,
    limits: &Limits,
) -> Result<Option<u64>, PmixDecodeError> {
    let all = PmixLocation::Infos {
        first: 0,
        count: ninfo,
    };
    if ninfo > limits.max_entries {
        return Err(PmixDecodeError::TooManyElements {
            at: all,
            count: ninfo as u64,
            max: limits.max_entries,
        });
    }
    if ninfo == 0 {
        return Ok(None);
    }
    if infos_addr == 0 {
        return Err(PmixDecodeError::NullPointer { at: all });
    }
    let infos = |first, count| PmixLocation::Infos { first, count };
    scan(
        reader,
        infos_addr,
        ninfo,
        INFO_SIZE,
        infos,
        |index, addr, entry| {
            let at = PmixLocation::InfoKey { index };
            let found = fixed_string(entry, addr, INFO_KEY, PMIX_MAX_KEYLEN, at)?;
            Ok((found == key.to_bytes()).then_some(addr + INFO_VALUE as u64))
        },
    )
}
