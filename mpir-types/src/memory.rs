//! Reading another process's memory: the [`MemoryReader`] trait the decoders
//! use, its [`ReadError`], and [`MemoryImage`], an in-memory address space.
//!
//! The MPIR interface "requires that the tool read ... the memory ... of the
//! starter process" (§2.1, §2.3.2). Everything read that way is untrusted:
//! the starter may be mid-update, corrupted, or not an MPIR starter at all.

use std::collections::BTreeMap;
use std::io;

use thiserror::Error;

/// Why a read of target memory failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Some of the bytes are not mapped in the target (`EFAULT`/`EIO`).
    #[error("{len} bytes at {addr:#x} are not mapped in the target")]
    Unmapped {
        /// First address of the read.
        addr: u64,
        /// Length of the read.
        len: usize,
    },
    /// The target delivered fewer bytes than asked (a partial
    /// `process_vm_readv`).
    #[error("short read at {addr:#x}: {got} of {len} bytes")]
    Short {
        /// First address of the read.
        addr: u64,
        /// Length of the read.
        len: usize,
        /// Bytes delivered.
        got: usize,
    },
    /// The read failed otherwise (the process is gone, permission denied).
    #[error("reading {len} bytes at {addr:#x} failed: {source}")]
    Io {
        /// First address of the read.
        addr: u64,
        /// Length of the read.
        len: usize,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// Byte-addressed read access to a target's memory.
///
/// Contract: `read` fills all of `buf` with the bytes at `addr ..
/// addr + buf.len()` and returns `Ok(())`, or returns an error (the contents
/// of `buf` are then unspecified). Reading zero bytes succeeds. The decoders
/// of this crate never ask for more than 64 KiB at once, never read a string
/// across a 4 KiB page boundary in one call (so a string that ends just
/// before an unmapped page is read without error from a page-granular
/// reader such as `/proc/PID/mem`), retry a failed string read with halves
/// down to single bytes (so a reader may also map at byte granularity), and
/// never read at `addr` with `addr + buf.len()` past the end of the target's
/// address space.
pub trait MemoryReader {
    /// Reads `buf.len()` bytes at `addr`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), ReadError>;
}

impl<R: MemoryReader + ?Sized> MemoryReader for &R {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        (**self).read(addr, buf)
    }
}

impl<R: MemoryReader + ?Sized> MemoryReader for Box<R> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        (**self).read(addr, buf)
    }
}

/// Why a [`MemoryImage`] could not map or write bytes.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MapError {
    /// The bytes would overlap an already mapped region.
    #[error("{len} bytes at {addr:#x} overlap a mapped region")]
    Overlap {
        /// First address.
        addr: u64,
        /// Length.
        len: usize,
    },
    /// The bytes would run past the end of the 64-bit address space, or the
    /// region is empty.
    #[error("{len} bytes at {addr:#x} are not a valid region")]
    InvalidRegion {
        /// First address.
        addr: u64,
        /// Length.
        len: usize,
    },
    /// A write to bytes that are not all mapped.
    #[error("{len} bytes at {addr:#x} are not mapped")]
    Unmapped {
        /// First address.
        addr: u64,
        /// Length.
        len: usize,
    },
}

/// An address space held in memory: non-overlapping mapped regions; reading
/// any unmapped byte fails with [`ReadError::Unmapped`], as reading a real
/// process's unmapped page does. Reads may span adjacent regions.
///
/// Useful to test a tool without a live job and to decode a saved snapshot
/// of a starter's memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryImage {
    regions: BTreeMap<u64, Vec<u8>>,
}

impl MemoryImage {
    /// An empty address space.
    pub fn new() -> Self {
        MemoryImage::default()
    }

    /// Maps `bytes` at `addr`.
    pub fn map(&mut self, addr: u64, bytes: impl Into<Vec<u8>>) -> Result<&mut Self, MapError> {
        let bytes = bytes.into();
        let len = bytes.len();
        let end = match u64::try_from(len).ok().and_then(|l| addr.checked_add(l)) {
            Some(end) if len > 0 => end,
            _ => return Err(MapError::InvalidRegion { addr, len }),
        };
        let before = self.regions.range(..end).next_back();
        if let Some((&start, region)) = before
            && start + region.len() as u64 > addr
        {
            return Err(MapError::Overlap { addr, len });
        }
        self.regions.insert(addr, bytes);
        Ok(self)
    }

    /// Overwrites mapped bytes at `addr` (what a tool does to
    /// `MPIR_being_debugged`).
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), MapError> {
        let len = bytes.len();
        // All spans are found before anything is copied, so a failed write changes nothing.
        let spans = self
            .spans(addr, len)
            .ok_or(MapError::Unmapped { addr, len })?;
        for span in spans {
            let region = self
                .regions
                .get_mut(&span.start)
                .expect("span of a mapped region");
            region[span.off..span.off + span.n]
                .copy_from_slice(&bytes[span.done..span.done + span.n]);
        }
        Ok(())
    }

    /// The pieces of `[addr, addr + len)` in the mapped regions, in order; `None` if any byte
    /// is unmapped.
    fn spans(&self, addr: u64, len: usize) -> Option<Vec<Span>> {
        let mut spans = Vec::new();
        let mut done = 0;
        while done < len {
            let cur = addr.checked_add(done as u64)?;
            let (&start, region) = self.regions.range(..=cur).next_back()?;
            let off = usize::try_from(cur - start)
                .ok()
                .filter(|off| *off < region.len())?;
            let n = (region.len() - off).min(len - done);
            spans.push(Span {
                start,
                off,
                n,
                done,
            });
            done += n;
        }
        Some(spans)
    }

    /// Total number of mapped bytes.
    pub fn mapped_len(&self) -> usize {
        self.regions.values().map(Vec::len).sum()
    }
}

/// One piece of an access: `n` bytes at offset `off` of the region starting at `start`, for
/// bytes `done..done + n` of the caller's buffer.
struct Span {
    start: u64,
    off: usize,
    n: usize,
    done: usize,
}

impl MemoryReader for MemoryImage {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        let len = buf.len();
        let spans = self
            .spans(addr, len)
            .ok_or(ReadError::Unmapped { addr, len })?;
        for span in spans {
            let region = &self.regions[&span.start];
            buf[span.done..span.done + span.n]
                .copy_from_slice(&region[span.off..span.off + span.n]);
        }
        Ok(())
    }
}
