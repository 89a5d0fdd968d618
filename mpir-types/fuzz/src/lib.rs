//! The bodies of mpir-types' fuzz targets: every decoder of bytes that come from a starter
//! process (the tool-daemon codecs, the process table, the scalar and string readers), fed
//! the fuzzer's bytes and read through a [`MemoryReader`] that may fail, cut or lie.
//!
//! With the `pmix` feature (on by default here; mpir-types' own when its tests compile this
//! file), `pmix_proc_table` feeds the PMIx decoders a query answer built from the bytes.
//!
//! Shared by the fuzz targets (`fuzz_targets/*.rs`, one call each) and by
//! `mpir-types/tests/fuzz_corpus.rs`, which includes this file as a module and replays every
//! committed input (`corpus/<target>/`, `regressions/<target>/`) through the same checks.
//! Every check is an `assert!`: a failure is a crash to the fuzzer and a failed test.
//!
//! Where the reader is honest (a [`MemoryImage`] read as is), each decoder is compared with a
//! naive reference written here that reads strings one byte at a time: same result, same
//! error and location. Whatever the reader does, the decoders keep the [`MemoryReader`]
//! contract (at most 64 KiB per read, nothing past the end of the target's address space,
//! strings never read across a 4 KiB page in one call) and take no more bytes than the table
//! and its distinct strings need.
#![allow(unreachable_pub, missing_docs)]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use mpir_types::*;

/// A target's body: one input, checked.
pub type Body = fn(&[u8]);

/// Every target: its name (as in Cargo.toml and under corpus/) and its body.
pub const TARGETS: &[(&str, Body)] = &[
    ("server_arguments", server_arguments),
    ("executable_path", executable_path),
    ("proctable", proctable),
    ("target_reads", target_reads),
    #[cfg(feature = "pmix")]
    ("pmix_proc_table", pmix_proc_table),
];

/// The fuzzer's bytes read front to back; past the end every read is 0 (so every input is a
/// valid one).
struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.u8();
        }
        u64::from_le_bytes(b)
    }

    /// Up to `n` bytes.
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    fn rest(&mut self) -> &'a [u8] {
        self.bytes(usize::MAX)
    }
}

// ---- the tool-daemon codecs (§2.6.1, §2.8.16, §2.8.17) ---------------------------------------

const ARGS: &str = "MPIR_server_arguments";
const PATH: &str = "MPIR_executable_path";

/// What `decode_server_arguments` must find in `buf`: the NUL-terminated strings up to the
/// first empty one; `None` if there is no empty one.
fn reference_arguments(buf: &[u8]) -> Option<Vec<&[u8]>> {
    let terminated = buf.iter().filter(|&&b| b == 0).count();
    let mut args = Vec::new();
    for piece in buf.split(|&b| b == 0).take(terminated) {
        if piece.is_empty() {
            return Some(args);
        }
        args.push(piece);
    }
    None
}

/// What `encode_server_arguments` must give, written the other way round (append, then
/// check the room left for the list's terminator).
fn reference_encode_arguments(args: &[&[u8]], size: usize) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    for (index, arg) in args.iter().enumerate() {
        if arg.is_empty() {
            return Err(CodecError::EmptyArgument { index });
        }
        if let Some(position) = arg.iter().position(|&b| b == 0) {
            return Err(CodecError::ArgumentContainsNul { index, position });
        }
        out.extend_from_slice(arg);
        out.push(0);
        if out.len() + 1 > size {
            return Err(CodecError::TooLong {
                symbol: ARGS,
                needed: out.len() + 1,
                size,
            });
        }
    }
    out.push(0);
    if out.len() > size {
        return Err(CodecError::TooLong {
            symbol: ARGS,
            needed: out.len(),
            size,
        });
    }
    Ok(out)
}

/// `MPIR_server_arguments` (§2.8.17). Decoding the fuzzer's bytes as the array gives the
/// arguments up to the first empty string, or `Unterminated` with the buffer's size; what it
/// decodes re-encodes to exactly the bytes it used (and needs all of them). Encoding the
/// fuzzer's arguments (split at 0xff, so possibly empty or holding a NUL) into an array of the
/// fuzzer's size gives the reference's bytes or its typed error, and decodes back.
pub fn server_arguments(data: &[u8]) {
    let decoded = decode_server_arguments(data);
    match (&decoded, reference_arguments(data)) {
        (Ok(args), Some(expected)) => {
            let got: Vec<&[u8]> = args.iter().map(TargetString::as_bytes).collect();
            assert_eq!(got, expected);
            assert!(args.iter().all(|a| !a.is_empty()));
            let used = args.iter().map(|a| a.len() + 1).sum::<usize>() + 1;
            assert!(used <= data.len());
            let again = encode_server_arguments(args, data.len());
            assert_eq!(again.as_deref(), Ok(&data[..used]));
            assert_eq!(
                encode_server_arguments(args, used).as_deref(),
                Ok(&data[..used])
            );
            assert!(matches!(
                encode_server_arguments(args, used - 1),
                Err(CodecError::TooLong { symbol: ARGS, size, .. }) if size == used - 1
            ));
        }
        (Err(CodecError::Unterminated { symbol: ARGS, size }), None) => {
            assert_eq!(*size, data.len())
        }
        (got, expected) => panic!("decoded {got:?}, expected {expected:?}"),
    }

    let mut input = Input { data };
    let size = usize::from(input.u16() % 2048);
    let args: Vec<&[u8]> = input.rest().split(|&b| b == 0xff).collect();
    let encoded = encode_server_arguments(&args, size);
    assert_eq!(encoded, reference_encode_arguments(&args, size));
    if let Ok(bytes) = &encoded {
        assert!(bytes.len() <= size);
        let back = decode_server_arguments(bytes).expect("decodes what it encoded");
        let back: Vec<&[u8]> = back.iter().map(TargetString::as_bytes).collect();
        assert_eq!(back, args);
    }
}

/// `MPIR_executable_path` (§2.8.16) and `decode_fixed_string` (`MPIR_dll_name`, §2.8.14).
/// Decoding the fuzzer's bytes gives the bytes before the first NUL, or `Unterminated` with
/// the buffer's size when there is none; a non-empty path re-encodes to exactly the bytes up
/// to and with that NUL and needs all of them. Encoding the fuzzer's path into an array of
/// the fuzzer's size gives the path and a NUL or the typed error the reference says, and
/// decodes back.
pub fn executable_path(data: &[u8]) {
    let decoded = decode_executable_path(data);
    let fixed = decode_fixed_string(data);
    match (&decoded, data.iter().position(|&b| b == 0)) {
        (Ok(path), Some(nul)) => {
            assert_eq!(path.as_bytes(), &data[..nul]);
            assert_eq!(fixed.as_ref(), Some(path));
            if nul == 0 {
                assert_eq!(
                    encode_executable_path(path, data.len()),
                    Err(CodecError::EmptyPath)
                );
            } else {
                assert_eq!(
                    encode_executable_path(path, data.len()).as_deref(),
                    Ok(&data[..=nul])
                );
                assert_eq!(
                    encode_executable_path(path, nul),
                    Err(CodecError::TooLong {
                        symbol: PATH,
                        needed: nul + 1,
                        size: nul
                    })
                );
            }
        }
        (Err(CodecError::Unterminated { symbol: PATH, size }), None) => {
            assert_eq!(*size, data.len());
            assert_eq!(fixed, None);
        }
        (got, nul) => panic!("decoded {got:?}, first NUL at {nul:?}"),
    }

    let mut input = Input { data };
    let size = usize::from(input.u16() % 1024);
    let path = input.rest();
    let expected = if path.is_empty() {
        Err(CodecError::EmptyPath)
    } else if let Some(position) = path.iter().position(|&b| b == 0) {
        Err(CodecError::PathContainsNul { position })
    } else if path.len() + 1 > size {
        Err(CodecError::TooLong {
            symbol: PATH,
            needed: path.len() + 1,
            size,
        })
    } else {
        Ok([path, b"\0"].concat())
    };
    let encoded = encode_executable_path(path, size);
    assert_eq!(encoded, expected);
    if let Ok(bytes) = &encoded {
        assert_eq!(decode_executable_path(bytes), Ok(TargetString::from(path)));
    }
}

// ---- target memory -------------------------------------------------------------------------

/// The largest table or string read the decoders may make in one call.
const MAX_READ: usize = 64 * 1024;
const PAGE: u64 = 4096;

/// When reads must stay within one page.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PageRule {
    Off,
    /// Every read (a string read by `read_c_string`).
    On,
    /// Every read after the next (`read_abort_string`: a pointer, then the string).
    AfterNext,
}

/// A starter's memory made of the fuzzer's bytes, read through a reader that is honest or,
/// driven by the rest of the input, fails (unmapped, short, I/O), returns bytes that changed
/// since the last read, or returns garbage. It checks the [`MemoryReader`] contract on every
/// call.
struct Hostile<'a> {
    image: MemoryImage,
    max_address: u64,
    faults: Option<RefCell<Input<'a>>>,
    page_rule: Cell<PageRule>,
    reads: Cell<u64>,
    /// Bytes handed out by successful reads.
    delivered: Cell<u64>,
}

impl MemoryReader for Hostile<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        let len = buf.len();
        assert!(len <= MAX_READ, "a read of {len} bytes");
        if len > 0 {
            assert!(
                addr <= self.max_address && len as u64 - 1 <= self.max_address - addr,
                "a read of {len} bytes at {addr:#x} runs past the address space (max {:#x})",
                self.max_address
            );
            match self.page_rule.get() {
                PageRule::On => assert_eq!(
                    addr / PAGE,
                    (addr + (len as u64 - 1)) / PAGE,
                    "a string read of {len} bytes at {addr:#x} crosses a page"
                ),
                PageRule::AfterNext => self.page_rule.set(PageRule::On),
                PageRule::Off => {}
            }
        }
        self.reads.set(self.reads.get() + 1);
        assert!(self.reads.get() <= 1 << 22, "runaway reads");
        if let Some(faults) = &self.faults {
            let mut faults = faults.borrow_mut();
            match faults.u8() % 8 {
                3 => return Err(ReadError::Unmapped { addr, len }),
                4 => {
                    let got = len / 2;
                    return Err(ReadError::Short { addr, len, got });
                }
                5 => {
                    let source = std::io::Error::other("the process is gone");
                    return Err(ReadError::Io { addr, len, source });
                }
                6 => {
                    // Mapped, but changed since the last read (a starter mid-update).
                    self.image.read(addr, buf)?;
                    let delta = faults.u8() | 1;
                    buf.iter_mut().for_each(|b| *b = b.wrapping_add(delta));
                    self.delivered.set(self.delivered.get() + len as u64);
                    return Ok(());
                }
                7 => {
                    // Anything at all, even where nothing is mapped.
                    buf.fill(faults.u8());
                    self.delivered.set(self.delivered.get() + len as u64);
                    return Ok(());
                }
                _ => {}
            }
        }
        self.image.read(addr, buf)?;
        self.delivered.set(self.delivered.get() + len as u64);
        Ok(())
    }
}

/// An address: low and dense (regions meet, strings cross pages), at the top of the address
/// space, or anything.
fn address(input: &mut Input<'_>, max: u64) -> u64 {
    match input.u8() % 4 {
        0 | 1 => 0x1000 + u64::from(input.u16()) * 4,
        2 => max - u64::from(input.u16()),
        _ => input.u64() & max,
    }
}

/// A pointer to store in the table: NULL, into a mapped region, or anywhere.
fn pointer(input: &mut Input<'_>, starts: &[u64], max: u64) -> u64 {
    match input.u8() % 8 {
        0 => 0,
        1..=5 if !starts.is_empty() => {
            let start = starts[usize::from(input.u8()) % starts.len()];
            start.wrapping_add(u64::from(input.u8())) & max
        }
        _ => address(input, max),
    }
}

/// A target data model.
fn target_layout(input: &mut Input<'_>) -> TargetLayout {
    const WIDTHS: [u8; 3] = [2, 4, 8];
    let b = input.u8();
    let pointer = if b & 1 == 0 { 8 } else { 4 };
    let int = WIDTHS[usize::from((b >> 1) & 3) % 3];
    let pid = WIDTHS[usize::from((b >> 3) & 3) % 3];
    let endianness = if b & 0x80 == 0 {
        Endianness::Little
    } else {
        Endianness::Big
    };
    TargetLayout::new(pointer, int, pid, endianness).expect("widths the constructor accepts")
}

/// `value` cut to `width` bytes, sign-extended.
fn fit(value: i64, width: u8) -> i64 {
    let shift = 64 - 8 * u32::from(width);
    (value << shift) >> shift
}

/// A descriptor layout: computed for the target, or as debug information may claim it (any
/// size and offsets; `from_debug_info` must refuse what does not fit, and a layout it accepts
/// must encode and decode an entry losslessly).
fn procdesc_layout(input: &mut Input<'_>, target: TargetLayout) -> ProcDescLayout {
    if !input.u8().is_multiple_of(4) {
        return target.procdesc();
    }
    let size = usize::from(input.u16() % 4400);
    let [h, e, p] = [(); 3].map(|()| usize::from(input.u8() % 64));
    match ProcDescLayout::from_debug_info(target, size, h, e, p) {
        Ok(layout) => {
            assert!(layout.size() <= MAX_PROCDESC_SIZE);
            let max = target.max_address();
            let raw = RawProcDesc {
                host_name: input.u64() & max,
                executable_name: input.u64() & max,
                pid: fit(input.u64() as i64, target.pid_width()),
            };
            let bytes = layout
                .encode_entry(&raw)
                .expect("an entry that fits the layout");
            assert_eq!(bytes.len(), layout.size());
            assert_eq!(layout.decode_entry(&bytes), Some(raw));
            layout
        }
        Err(LayoutError::StructTooLarge { size: s, max }) => {
            assert!(s == size && s > max);
            target.procdesc()
        }
        Err(LayoutError::FieldOutsideStruct {
            offset,
            width,
            size: s,
            ..
        }) => {
            assert!(s == size && offset + width > size);
            target.procdesc()
        }
        Err(LayoutError::FieldsOverlap(..)) => target.procdesc(),
        Err(e) => panic!("from_debug_info: {e:?}"),
    }
}

/// Limits of fewer than `entries` entries and `string_len` bytes a string, and up to 256 KiB
/// of strings.
fn small_limits(input: &mut Input<'_>, entries: u8, string_len: u16) -> Limits {
    Limits {
        max_entries: usize::from(input.u8() % entries),
        max_string_len: usize::from(input.u16() % string_len),
        max_total_string_bytes: usize::from(input.u16()) * 4,
    }
}

/// A memory of a few regions of the fuzzer's bytes at fuzzer-chosen addresses; their starts.
fn regions(input: &mut Input<'_>, image: &mut MemoryImage, max: u64) -> Vec<u64> {
    let mut starts = Vec::new();
    for _ in 0..input.u8() % 6 {
        let addr = address(input, max);
        let len = usize::from(input.u16() % 1536) + 1;
        let bytes = input.bytes(len);
        // Past the end of the address space or overlapping: not mapped.
        let fits = !bytes.is_empty()
            && addr
                .checked_add(bytes.len() as u64 - 1)
                .is_some_and(|last| last <= max);
        if fits && image.map(addr, bytes.to_vec()).is_ok() {
            starts.push(addr);
        }
    }
    starts
}

/// The reader over `image`: honest unless the input's next byte says otherwise, then faulty
/// as the rest of the input says.
fn reader<'a>(input: &mut Input<'a>, image: MemoryImage, max_address: u64) -> Hostile<'a> {
    let faulty = input.u8().is_multiple_of(4);
    let faults = faulty.then(|| RefCell::new(Input { data: input.rest() }));
    Hostile {
        image,
        max_address,
        faults,
        page_rule: Cell::new(PageRule::Off),
        reads: Cell::new(0),
        delivered: Cell::new(0),
    }
}

/// A decoding error without its source, to compare with the reference's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    NegativeSize,
    TooManyEntries,
    NullTable,
    AddressOverflow,
    Read(Location),
    NullPointer(Location),
    Unterminated(Location),
    StringBudget,
    StateOutOfRange,
}

fn kind(e: &DecodeError) -> Kind {
    match e {
        DecodeError::NegativeSize { .. } => Kind::NegativeSize,
        DecodeError::TooManyEntries { .. } => Kind::TooManyEntries,
        DecodeError::NullTable { .. } => Kind::NullTable,
        DecodeError::AddressOverflow { .. } => Kind::AddressOverflow,
        DecodeError::Read { at, .. } => Kind::Read(*at),
        DecodeError::NullPointer { at } => Kind::NullPointer(*at),
        DecodeError::Unterminated { at, .. } => Kind::Unterminated(*at),
        DecodeError::StringBudget { .. } => Kind::StringBudget,
        DecodeError::StateOutOfRange { .. } => Kind::StateOutOfRange,
        e => panic!("an error the reference does not know: {e:?}"),
    }
}

/// The string at `addr` read one byte at a time.
fn reference_string(
    image: &MemoryImage,
    max: u64,
    addr: u64,
    max_len: usize,
    at: Location,
) -> Result<Vec<u8>, Kind> {
    let mut out = Vec::new();
    for i in 0..=max_len as u64 {
        let a = addr
            .checked_add(i)
            .filter(|a| *a <= max)
            .ok_or(Kind::AddressOverflow)?;
        let mut b = [0u8];
        image.read(a, &mut b).map_err(|_| Kind::Read(at))?;
        if b[0] == 0 {
            return Ok(out);
        }
        out.push(b[0]);
    }
    Err(Kind::Unterminated(at))
}

/// `width` bytes at `addr`, after the address space check.
fn reference_scalar(image: &MemoryImage, max: u64, addr: u64, width: u8) -> Result<Vec<u8>, Kind> {
    let last = addr.checked_add(u64::from(width) - 1);
    if addr > max || last.is_none_or(|l| l > max) {
        return Err(Kind::AddressOverflow);
    }
    let mut b = vec![0u8; usize::from(width)];
    image
        .read(addr, &mut b)
        .map_err(|_| Kind::Read(Location::Variable))?;
    Ok(b)
}

/// One decoded descriptor of the reference: host name and executable name (with the pointers
/// they were read at) and pid.
type RefEntry = ((u64, Vec<u8>), (u64, Vec<u8>), i64);

/// `decode_proctable` written plainly: the same checks in the same order, the table read
/// whole per chunk of the same size, strings one byte at a time.
fn reference_table(
    image: &MemoryImage,
    layout: &ProcDescLayout,
    table: u64,
    size: i64,
    limits: &Limits,
) -> Result<Vec<RefEntry>, Kind> {
    let target = layout.target();
    let max = target.max_address();
    if size < 0 {
        return Err(Kind::NegativeSize);
    }
    let n = usize::try_from(size)
        .ok()
        .filter(|n| *n <= limits.max_entries)
        .ok_or(Kind::TooManyEntries)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    if table == 0 {
        return Err(Kind::NullTable);
    }
    let stride = layout.size();
    let bytes = (n as u128) * (stride as u128);
    if u128::from(table) + bytes - 1 > u128::from(max) {
        return Err(Kind::AddressOverflow);
    }
    let per_chunk = (MAX_READ / stride).max(1);
    let mut out = Vec::new();
    let mut strings: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut total = 0usize;
    for first in (0..n).step_by(per_chunk) {
        let count = per_chunk.min(n - first);
        let mut chunk = vec![0u8; count * stride];
        image
            .read(table + (first * stride) as u64, &mut chunk)
            .map_err(|_| Kind::Read(Location::Entries { first, count }))?;
        for (i, entry) in chunk.chunks_exact(stride).enumerate() {
            let rank = first + i;
            let raw = layout
                .decode_entry(entry)
                .expect("an entry of the layout's size");
            let mut name = |ptr: u64, field: Field| -> Result<(u64, Vec<u8>), Kind> {
                let at = Location::Name { rank, field };
                if ptr == 0 {
                    return Err(Kind::NullPointer(at));
                }
                if let Some(s) = strings.get(&ptr) {
                    return Ok((ptr, s.clone()));
                }
                let s = reference_string(image, max, ptr, limits.max_string_len, at)?;
                total += s.len() + 1;
                if total > limits.max_total_string_bytes {
                    return Err(Kind::StringBudget);
                }
                strings.insert(ptr, s.clone());
                Ok((ptr, s))
            };
            let host = name(raw.host_name, Field::HostName)?;
            let exe = name(raw.executable_name, Field::ExecutableName)?;
            out.push((host, exe, raw.pid));
        }
    }
    Ok(out)
}

/// Checks a decoded table against the reference (honest reader), or its bounds (any reader).
fn check_table(
    got: &Result<Vec<ProcDesc>, DecodeError>,
    reference: Option<Result<Vec<RefEntry>, Kind>>,
    size: i64,
    limits: &Limits,
) {
    if let Ok(procs) = got {
        assert_eq!(procs.len() as i64, size);
        for p in procs {
            for s in [&p.host_name, &p.executable_name] {
                assert!(!s.as_bytes().contains(&0));
                assert!(s.len() <= limits.max_string_len);
            }
        }
    }
    let Some(reference) = reference else {
        return;
    };
    match (got, reference) {
        (Ok(procs), Ok(expected)) => {
            assert_eq!(procs.len(), expected.len());
            // The first string decoded at each address: every other one read there shares it
            // (read once, §2.8.2).
            let mut first: HashMap<u64, &TargetString> = HashMap::new();
            for (i, (p, ((hp, h), (ep, e), pid))) in procs.iter().zip(&expected).enumerate() {
                assert_eq!(p.host_name.as_bytes(), &h[..], "host name of rank {i}");
                assert_eq!(
                    p.executable_name.as_bytes(),
                    &e[..],
                    "executable of rank {i}"
                );
                assert_eq!(p.pid, *pid, "pid of rank {i}");
                for (addr, s) in [(*hp, &p.host_name), (*ep, &p.executable_name)] {
                    let earlier = first.entry(addr).or_insert(s);
                    assert!(
                        earlier.shares_storage_with(s),
                        "rank {i}: {addr:#x} read twice"
                    );
                }
            }
        }
        (Err(e), Err(k)) => assert_eq!(kind(e), k, "{e}"),
        (got, expected) => panic!("decoded {got:?}, the reference {expected:?}"),
    }
}

/// The process table (§2.8.2, §2.8.4, §2.8.5): a table of the fuzzer's entries (pointers into
/// regions of the fuzzer's bytes, NULL, or anywhere; or raw bytes), any data model and
/// descriptor layout (also one claimed by debug information), any `MPIR_proctable_size`,
/// small limits, through an honest or a hostile reader. `decode_proctable` keeps the reader's
/// contract and reads no more than `size` entries and two strings of `max_string_len + 1`
/// bytes per entry; with an honest reader it gives exactly what the plain reference gives
/// (entries, shared strings, or the same error at the same place), and `read_proctable`
/// through the two variables holding the table's address and size gives the same.
pub fn proctable(data: &[u8]) {
    let mut input = Input { data };
    let target = target_layout(&mut input);
    let layout = procdesc_layout(&mut input, target);
    let max = target.max_address();
    let limits = small_limits(&mut input, 128, 5000);
    let mut image = MemoryImage::new();
    let starts = regions(&mut input, &mut image, max);
    let table = match input.u8() % 8 {
        0 => 0,
        _ => address(&mut input, max),
    };
    let written = if input.u8().is_multiple_of(4) {
        // Raw table bytes.
        let len = usize::from(input.u16() % 2048) + 1;
        let bytes = input.bytes(len).to_vec();
        let _ = image.map(table, bytes);
        len / layout.size().max(1)
    } else {
        let mut bytes = Vec::new();
        let entries = usize::from(input.u8() % 40);
        for _ in 0..entries {
            let raw = RawProcDesc {
                host_name: pointer(&mut input, &starts, max),
                executable_name: pointer(&mut input, &starts, max),
                pid: fit(i64::from(input.u16() as i16) << 4, target.pid_width()),
            };
            bytes.extend(layout.encode_entry(&raw).expect("values that fit"));
        }
        if !bytes.is_empty() {
            let _ = image.map(table, bytes);
        }
        entries
    };
    let size = match input.u8() % 6 {
        0 => input.u64() as i64,
        1 => i64::from(input.u8()),
        2 => written as i64 + 1,
        _ => written as i64,
    };
    // The two variables, MPIR_proctable and MPIR_proctable_size, if the values fit.
    let vars = address(&mut input, max);
    let mut var_bytes = target
        .encode_pointer(table)
        .expect("a pointer within the target");
    let vars_mapped = match target.encode_int(size) {
        Ok(int) => {
            var_bytes.extend(int);
            vars.checked_add(var_bytes.len() as u64 - 1)
                .is_some_and(|last| last <= max)
                && image.map(vars, var_bytes).is_ok()
        }
        Err(_) => false,
    };

    let mem = reader(&mut input, image, max);
    let honest = mem.faults.is_none();
    let got = decode_proctable(&mem, &layout, table, size, &limits);
    let n = u64::try_from(size.clamp(0, limits.max_entries as i64)).unwrap_or(0);
    let bound = n * layout.size() as u64 + 2 * n * (limits.max_string_len as u64 + 1);
    assert!(
        mem.delivered.get() <= bound,
        "{} bytes read for {n} entries",
        mem.delivered.get()
    );
    let reference = honest.then(|| reference_table(&mem.image, &layout, table, size, &limits));
    check_table(&got, reference, size, &limits);

    if vars_mapped {
        let pw = u64::from(target.pointer_width());
        let through_vars = read_proctable(&mem, &layout, vars, vars + pw, &limits);
        if honest {
            match (&got, &through_vars) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(a), Err(b)) => assert_eq!(kind(a), kind(b)),
                (a, b) => panic!("decode_proctable {a:?}, read_proctable {b:?}"),
            }
        } else if let Ok(procs) = &through_vars {
            assert!(procs.len() <= limits.max_entries);
        }
    }
}

/// The scalar and string readers (`read_int`, `read_pointer`, `read_debug_state` §2.8.6,
/// `read_c_string`, `read_abort_string` §2.8.7) at fuzzer-chosen addresses of a memory of the
/// fuzzer's bytes, any data model, through an honest or a hostile reader. They keep the
/// reader's contract (a string never read across a page in one call); a string holds no NUL
/// and at most `max_len` bytes; with an honest reader each result or error is the plain
/// reference's (a scalar read whole after the address space check, a string one byte at a
/// time).
pub fn target_reads(data: &[u8]) {
    let mut input = Input { data };
    let target = target_layout(&mut input);
    let max = target.max_address();
    let mut image = MemoryImage::new();
    let starts = regions(&mut input, &mut image, max);
    let ops: Vec<(u8, u64, usize)> = (0..input.u8() % 8)
        .map(|_| {
            let op = input.u8();
            let addr = pointer(&mut input, &starts, max);
            let max_len = usize::from(input.u16() % 5000);
            (op, addr, max_len)
        })
        .collect();
    let mem = reader(&mut input, image, max);
    let honest = mem.faults.is_none();
    let image = &mem.image;
    let int = |addr: u64| -> Result<i64, Kind> {
        let b = reference_scalar(image, max, addr, target.int_width())?;
        Ok(target.decode_int(&b).expect("int width"))
    };
    let ptr = |addr: u64| -> Result<u64, Kind> {
        let b = reference_scalar(image, max, addr, target.pointer_width())?;
        Ok(target.decode_pointer(&b).expect("pointer width"))
    };
    for (op, addr, max_len) in ops {
        mem.page_rule.set(PageRule::Off);
        match op % 5 {
            0 => {
                let got = read_int(&mem, &target, addr);
                if honest {
                    assert_eq!(got.as_ref().map_err(kind).copied(), int(addr));
                }
            }
            1 => {
                let got = read_pointer(&mem, &target, addr);
                if let Ok(p) = got {
                    assert!(p <= max);
                }
                if honest {
                    assert_eq!(got.as_ref().map_err(kind).copied(), ptr(addr));
                }
            }
            2 => {
                let got = read_debug_state(&mem, &target, addr);
                if let Ok(state) = got {
                    assert_eq!(DebugState::from_raw(state.to_raw()), state);
                    assert!(!matches!(state, DebugState::Unknown(0..=2)));
                }
                if honest {
                    let expected = int(addr).and_then(|v| {
                        i32::try_from(v)
                            .map(DebugState::from_raw)
                            .map_err(|_| Kind::StateOutOfRange)
                    });
                    assert_eq!(got.as_ref().map_err(kind).copied(), expected);
                }
            }
            3 => {
                mem.page_rule.set(PageRule::On);
                let got = read_c_string(&mem, &target, addr, max_len);
                if let Ok(s) = &got {
                    assert!(!s.as_bytes().contains(&0) && s.len() <= max_len);
                }
                if honest {
                    let expected = if addr == 0 {
                        Err(Kind::NullPointer(Location::String))
                    } else {
                        reference_string(image, max, addr, max_len, Location::String)
                    };
                    let got = got.as_ref().map(TargetString::to_vec).map_err(kind);
                    assert_eq!(got, expected);
                }
            }
            _ => {
                mem.page_rule.set(PageRule::AfterNext);
                let got = read_abort_string(&mem, &target, addr, max_len);
                if let Ok(Some(s)) = &got {
                    assert!(!s.as_bytes().contains(&0) && s.len() <= max_len);
                }
                if honest {
                    let expected = ptr(addr).and_then(|p| match p {
                        0 => Ok(None),
                        p => reference_string(image, max, p, max_len, Location::String).map(Some),
                    });
                    let got = got
                        .as_ref()
                        .map(|s| s.as_ref().map(TargetString::to_vec))
                        .map_err(kind);
                    assert_eq!(got, expected);
                }
            }
        }
    }
}

// ---- PMIx query answers (mpir_types::pmix) ---------------------------------------------------

/// `bytes` written at `at` of `buf`.
#[cfg(feature = "pmix")]
fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

/// A pointer or `size_t` of this process.
#[cfg(feature = "pmix")]
fn word(v: u64) -> [u8; size_of::<usize>()] {
    (v as usize).to_ne_bytes()
}

/// A proc table answer (PMIx Standard v4.2, PMIX_QUERY_PROC_TABLE: a `pmix_value_t` of type
/// PMIX_DATA_ARRAY pointing to a `pmix_data_array_t` of PMIX_PROC_INFO elements), a
/// namespace list (PMIX_QUERY_NAMESPACES, a PMIX_STRING) and a results array holding both,
/// built from the fuzzer's bytes in a memory of the fuzzer's regions, every field possibly
/// wrong (types, counts, NULL or stray pointers, namespaces without NUL, any ranks), small
/// limits, read through an honest or a hostile reader. The decoders keep the reader's
/// contract and read no more than the value, the array header, the elements and two strings
/// per element; what they give is within the limits; with an honest reader every decoded
/// element is the bytes at its place (strings read plainly, one byte at a time), and the
/// MPIR table is the elements ordered by rank, or a rank or namespace error exactly when
/// the ranks do not number the elements of one namespace.
#[cfg(feature = "pmix")]
pub fn pmix_proc_table(data: &[u8]) {
    use std::mem::offset_of;

    use mpir_types::pmix::*;

    let max = u64::MAX;
    let mut input = Input { data };
    let limits = small_limits(&mut input, 64, 3000);
    let mut image = MemoryImage::new();
    let starts = regions(&mut input, &mut image, max);

    // The elements.
    let stride = size_of::<pmix_proc_info_t>();
    let elements_at = address(&mut input, max);
    let n = usize::from(input.u8() % 24);
    let mut elements = vec![0u8; n * stride];
    for i in 0..n {
        let at = i * stride;
        let ns_at = at + offset_of!(pmix_proc_info_t, proc.nspace);
        match input.u8() % 5 {
            0 => put(&mut elements, ns_at, b"tool@0\0"),
            1 => put(&mut elements, ns_at, b"job@2\0"),
            2 => put(&mut elements, ns_at, input.bytes(PMIX_MAX_NSLEN + 1)),
            _ => put(&mut elements, ns_at, b"job@1\0"),
        }
        let rank = match input.u8() % 6 {
            0 => u32::from(input.u16()),
            1 => PMIX_RANK_WILDCARD,
            2 => (n - 1 - i) as u32,
            _ => i as u32,
        };
        put(
            &mut elements,
            at + offset_of!(pmix_proc_info_t, proc.rank),
            &rank.to_ne_bytes(),
        );
        let host = pointer(&mut input, &starts, max);
        let exe = pointer(&mut input, &starts, max);
        put(
            &mut elements,
            at + offset_of!(pmix_proc_info_t, hostname),
            &word(host),
        );
        put(
            &mut elements,
            at + offset_of!(pmix_proc_info_t, executable_name),
            &word(exe),
        );
        let pid = i32::from(input.u16() as i16) << 8;
        put(
            &mut elements,
            at + offset_of!(pmix_proc_info_t, pid),
            &pid.to_ne_bytes(),
        );
        elements[at + offset_of!(pmix_proc_info_t, state)] = input.u8();
    }
    if n > 0 {
        let _ = image.map(elements_at, elements);
    }

    // The array header and the values.
    let mut darray = vec![0u8; size_of::<pmix_data_array_t>()];
    let ty = match input.u8() % 8 {
        0 => input.u16(),
        _ => PMIX_PROC_INFO,
    };
    let size = match input.u8() % 6 {
        0 => input.u64(),
        1 => n as u64 + 1,
        _ => n as u64,
    };
    let array = match input.u8() % 8 {
        0 => 0,
        1 => address(&mut input, max),
        _ => elements_at,
    };
    put(
        &mut darray,
        offset_of!(pmix_data_array_t, type_),
        &ty.to_ne_bytes(),
    );
    put(
        &mut darray,
        offset_of!(pmix_data_array_t, size),
        &word(size),
    );
    put(
        &mut darray,
        offset_of!(pmix_data_array_t, array),
        &word(array),
    );
    let darray_at = address(&mut input, max);
    let _ = image.map(darray_at, darray);
    let value = |ty: u16, data: u64| {
        let mut v = vec![0u8; size_of::<pmix_value_t>()];
        put(&mut v, offset_of!(pmix_value_t, type_), &ty.to_ne_bytes());
        put(&mut v, offset_of!(pmix_value_t, data), &word(data));
        v
    };
    let table = match input.u8() % 8 {
        0 => value(input.u16(), darray_at),
        1 => value(PMIX_DATA_ARRAY, 0),
        _ => value(PMIX_DATA_ARRAY, darray_at),
    };
    let names = match input.u8() % 4 {
        0 => value(PMIX_STRING, 0),
        1 => value(PMIX_DATA_ARRAY, darray_at),
        _ => value(PMIX_STRING, pointer(&mut input, &starts, max)),
    };
    // The results: [namespaces, proc table], keys possibly garbage.
    let info = size_of::<pmix_info_t>();
    let mut results = vec![0u8; 2 * info];
    for (i, (key, v)) in [
        (PMIX_QUERY_NAMESPACES, &names),
        (PMIX_QUERY_PROC_TABLE, &table),
    ]
    .into_iter()
    .enumerate()
    {
        let key = match input.u8() % 8 {
            0 => input.bytes(PMIX_MAX_KEYLEN + 1),
            _ => key.to_bytes_with_nul(),
        };
        put(&mut results, i * info + offset_of!(pmix_info_t, key), key);
        put(&mut results, i * info + offset_of!(pmix_info_t, value), v);
    }
    let results_at = address(&mut input, max);
    let results_mapped = image.map(results_at, results).is_ok();
    let skip: Option<&[u8]> = match input.u8() % 3 {
        0 => None,
        1 => Some(b"tool@0"),
        _ => Some(b"job@1"),
    };

    let mem = reader(&mut input, image, max);
    let honest = mem.faults.is_none();
    let found = |key| find_info_value(&mem, results_at, 2, key, &limits);
    let (table_at, names_at) = match (found(PMIX_QUERY_PROC_TABLE), found(PMIX_QUERY_NAMESPACES)) {
        (Ok(Some(t)), Ok(Some(n))) => (t, n),
        (t, n) => {
            if honest && results_mapped {
                // Found unless a key was garbage.
                assert!(
                    t.is_err()
                        || n.is_err()
                        || t.as_ref().unwrap().is_none()
                        || n.as_ref().unwrap().is_none()
                );
            }
            let value = offset_of!(pmix_info_t, value) as u64;
            (
                results_at.wrapping_add(info as u64 + value),
                results_at.wrapping_add(value),
            )
        }
    };

    // The proc table, every element, through the reader.
    let before = mem.delivered.get();
    mem.page_rule.set(PageRule::Off);
    let infos = decode_proc_infos(&mem, table_at, &limits);
    let bound = (size_of::<pmix_value_t>() + size_of::<pmix_data_array_t>()) as u64
        + limits.max_entries as u64 * (stride as u64 + 2 * (limits.max_string_len as u64 + 1));
    assert!(
        mem.delivered.get() - before <= bound,
        "{} bytes read",
        mem.delivered.get() - before
    );
    if let Ok(infos) = &infos {
        assert!(infos.len() <= limits.max_entries);
        for i in infos {
            assert!(i.nspace.len() <= PMIX_MAX_NSLEN && !i.nspace.as_bytes().contains(&0));
            for s in [&i.host_name, &i.executable_name] {
                assert!(s.len() <= limits.max_string_len && !s.as_bytes().contains(&0));
            }
        }
        if honest {
            check_proc_infos(&mem.image, table_at, infos, &limits);
        }
    }
    let procs = decode_proc_table(&mem, table_at, skip, &limits);
    if let Ok(procs) = &procs {
        assert!(procs.len() <= limits.max_entries);
    }
    if honest {
        check_proc_table(infos.as_ref().ok(), &procs, skip);
    }

    // The namespace list.
    let list = decode_namespaces(&mem, names_at, skip, &limits);
    if let Ok(list) = &list {
        assert!(list.len() <= limits.max_entries);
        for name in list {
            assert!(!name.is_empty() && name.len() <= PMIX_MAX_NSLEN);
            assert!(Some(name.as_bytes()) != skip);
            assert!(!name.as_bytes().contains(&b','));
        }
    }
}

/// With an honest reader: each decoded element is the bytes at its place in `image`.
#[cfg(feature = "pmix")]
fn check_proc_infos(
    image: &MemoryImage,
    value: u64,
    infos: &[mpir_types::pmix::ProcInfo],
    limits: &Limits,
) {
    use std::mem::offset_of;

    use mpir_types::pmix::*;

    let read_word = |addr: u64| {
        let mut b = [0u8; size_of::<usize>()];
        image.read(addr, &mut b).expect("read by the decoder");
        usize::from_ne_bytes(b) as u64
    };
    let darray = read_word(value + offset_of!(pmix_value_t, data) as u64);
    let array = read_word(darray + offset_of!(pmix_data_array_t, array) as u64);
    let stride = size_of::<pmix_proc_info_t>() as u64;
    assert!(infos.is_empty() || array != 0);
    for (i, info) in infos.iter().enumerate() {
        let at = array + i as u64 * stride;
        let mut b = vec![0u8; stride as usize];
        image.read(at, &mut b).expect("read by the decoder");
        let ns = &b[offset_of!(pmix_proc_info_t, proc.nspace)..][..PMIX_MAX_NSLEN + 1];
        let nul = ns
            .iter()
            .position(|&c| c == 0)
            .expect("a terminated namespace");
        assert_eq!(info.nspace.as_bytes(), &ns[..nul]);
        let rank = offset_of!(pmix_proc_info_t, proc.rank);
        assert_eq!(
            info.rank,
            u32::from_ne_bytes(b[rank..rank + 4].try_into().unwrap())
        );
        let pid = offset_of!(pmix_proc_info_t, pid);
        assert_eq!(
            info.pid,
            i64::from(i32::from_ne_bytes(b[pid..pid + 4].try_into().unwrap()))
        );
        assert_eq!(info.state, b[offset_of!(pmix_proc_info_t, state)]);
        for (field, s) in [
            (offset_of!(pmix_proc_info_t, hostname), &info.host_name),
            (
                offset_of!(pmix_proc_info_t, executable_name),
                &info.executable_name,
            ),
        ] {
            let ptr = read_word(at + field as u64);
            let plain = reference_string(
                image,
                u64::MAX,
                ptr,
                limits.max_string_len,
                Location::String,
            );
            assert_eq!(plain.as_deref(), Ok(s.as_bytes()), "element {i}");
        }
    }
}

/// With an honest reader: the MPIR table is the elements not skipped, by rank, exactly when
/// their ranks number them and they share one namespace; else a rank or namespace error.
#[cfg(feature = "pmix")]
fn check_proc_table(
    infos: Option<&Vec<mpir_types::pmix::ProcInfo>>,
    procs: &Result<Vec<ProcDesc>, mpir_types::pmix::PmixDecodeError>,
    skip: Option<&[u8]>,
) {
    use mpir_types::pmix::PmixDecodeError;

    let Some(infos) = infos else {
        // The elements do not decode; the table may still when the skipped ones hold the
        // error, but never with more processes than there are elements.
        return;
    };
    let kept: Vec<_> = infos
        .iter()
        .filter(|i| Some(i.nspace.as_bytes()) != skip)
        .collect();
    let one_nspace = kept.windows(2).all(|w| w[0].nspace == w[1].nspace);
    let mut ranks: Vec<u32> = kept.iter().map(|i| i.rank).collect();
    ranks.sort_unstable();
    let numbered = ranks
        .iter()
        .enumerate()
        .all(|(r, &rank)| r as u64 == u64::from(rank));
    match procs {
        Ok(procs) => {
            assert!(one_nspace && numbered);
            assert_eq!(procs.len(), kept.len());
            for info in kept {
                assert_eq!(procs[info.rank as usize], info.to_proc_desc());
            }
        }
        Err(
            PmixDecodeError::RankOutOfRange { .. }
            | PmixDecodeError::DuplicateRank { .. }
            | PmixDecodeError::MixedNamespaces { .. },
        ) => assert!(!(one_nspace && numbered)),
        Err(e) => panic!("the elements decode, the table fails: {e}"),
    }
}
