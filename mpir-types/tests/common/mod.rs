//! Test doubles shared by the integration tests: a paged memory that logs
//! every read, and a starter-side writer that lays out a process table
//! independently of the crate's encoders.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashMap;

use mpir_types::{Endianness, MemoryReader, ProcDescLayout, ReadError, TargetLayout};

/// Page size of the double, as on Linux x86-64 and AArch64 (4 KiB pages).
pub(crate) const PAGE: u64 = 4096;

/// One read the decoder issued.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadRecord {
    pub(crate) addr: u64,
    pub(crate) len: usize,
    pub(crate) ok: bool,
}

/// A byte-addressed memory made of 4 KiB pages in a `HashMap` keyed by page
/// number: like a process, a read succeeds only if every page it touches is
/// mapped. Every read is logged.
#[derive(Default)]
pub(crate) struct PagedMemory {
    pages: HashMap<u64, Vec<u8>>,
    log: RefCell<Vec<ReadRecord>>,
}

impl PagedMemory {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Writes `bytes` at `addr`, mapping zeroed pages as needed.
    pub(crate) fn write(&mut self, addr: u64, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            let a = addr + i as u64;
            let page = self
                .pages
                .entry(a / PAGE)
                .or_insert_with(|| vec![0; PAGE as usize]);
            page[(a % PAGE) as usize] = *b;
        }
    }

    /// Maps one page with the given contents (`bytes.len() == PAGE`).
    pub(crate) fn map_page(&mut self, page: u64, bytes: Vec<u8>) {
        assert_eq!(bytes.len(), PAGE as usize);
        self.pages.insert(page, bytes);
    }

    pub(crate) fn reads(&self) -> Vec<ReadRecord> {
        self.log.borrow().clone()
    }

    pub(crate) fn clear_log(&self) {
        self.log.borrow_mut().clear();
    }

    /// Number of reads (successful or not) that started at `addr`.
    pub(crate) fn reads_at(&self, addr: u64) -> usize {
        self.log.borrow().iter().filter(|r| r.addr == addr).count()
    }

    /// Bytes delivered by successful reads.
    pub(crate) fn bytes_read(&self) -> usize {
        self.log
            .borrow()
            .iter()
            .filter(|r| r.ok)
            .map(|r| r.len)
            .sum()
    }

    pub(crate) fn max_read_len(&self) -> usize {
        self.log.borrow().iter().map(|r| r.len).max().unwrap_or(0)
    }
}

impl MemoryReader for PagedMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        let mut ok = true;
        for (i, b) in buf.iter_mut().enumerate() {
            let Some(a) = addr.checked_add(i as u64) else {
                ok = false;
                break;
            };
            match self.pages.get(&(a / PAGE)) {
                Some(page) => *b = page[(a % PAGE) as usize],
                None => {
                    ok = false;
                    break;
                }
            }
        }
        self.log.borrow_mut().push(ReadRecord {
            addr,
            len: buf.len(),
            ok,
        });
        if ok {
            Ok(())
        } else {
            Err(ReadError::Unmapped {
                addr,
                len: buf.len(),
            })
        }
    }
}

/// The target's bytes for an unsigned value of `width` bytes, written here
/// with shifts (independently of the crate's encoders).
pub(crate) fn target_bytes(value: u64, width: u8, endianness: Endianness) -> Vec<u8> {
    let mut le: Vec<u8> = (0..width).map(|i| (value >> (8 * i)) as u8).collect();
    if endianness == Endianness::Big {
        le.reverse();
    }
    le
}

/// A starter's table as the test writes it: pointers into the string pool
/// and pids.
#[derive(Clone, Debug)]
pub(crate) struct WrittenTable {
    pub(crate) table_addr: u64,
    /// Address of each pool string, by pool index.
    pub(crate) string_addrs: Vec<u64>,
    /// (host pointer, executable pointer, pid) per rank.
    pub(crate) entries: Vec<(u64, u64, i64)>,
}

/// Writes a string pool (each string once, NUL-terminated, back to back
/// from `strings_at`) and a table of `layout` at `table_at` whose entries
/// point into the pool: what a starter sharing its strings (§2.8.2) holds.
pub(crate) fn write_table(
    mem: &mut PagedMemory,
    layout: &ProcDescLayout,
    strings_at: u64,
    pool: &[Vec<u8>],
    table_at: u64,
    entries: &[(usize, usize, i64)],
) -> WrittenTable {
    let target: &TargetLayout = layout.target();
    let mut string_addrs = Vec::new();
    let mut at = strings_at;
    for s in pool {
        string_addrs.push(at);
        let mut bytes = s.clone();
        bytes.push(0);
        mem.write(at, &bytes);
        at += bytes.len() as u64;
    }
    let mut written = Vec::new();
    for (rank, &(h, e, pid)) in entries.iter().enumerate() {
        let base = table_at + (rank * layout.size()) as u64;
        let (hp, ep) = (string_addrs[h], string_addrs[e]);
        let pw = target.pointer_width();
        mem.write(
            base + layout.host_name_offset() as u64,
            &target_bytes(hp, pw, target.endianness()),
        );
        mem.write(
            base + layout.executable_name_offset() as u64,
            &target_bytes(ep, pw, target.endianness()),
        );
        mem.write(
            base + layout.pid_offset() as u64,
            &target_bytes(pid as u64, target.pid_width(), target.endianness()),
        );
        written.push((hp, ep, pid));
    }
    WrittenTable {
        table_addr: table_at,
        string_addrs,
        entries: written,
    }
}

/// Every data model the crate supports: pointers of 4 or 8 bytes, `int` and
/// `pid` of 2, 4 or 8, either byte order.
pub(crate) fn all_layouts() -> Vec<TargetLayout> {
    let mut out = Vec::new();
    for p in [4, 8] {
        for i in [2, 4, 8] {
            for pid in [2, 4, 8] {
                for e in [Endianness::Little, Endianness::Big] {
                    out.push(TargetLayout::new(p, i, pid, e).unwrap());
                }
            }
        }
    }
    out
}
