//! [`ProcessMemory`]: another process's memory, read with
//! `process_vm_readv` (falling back to `/proc/PID/mem`) and written with
//! `process_vm_writev` (falling back to `/proc/PID/mem`).

use std::fs::{File, OpenOptions};
use std::io::{self, IoSlice, IoSliceMut};
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::sys::uio::{RemoteIoVec, process_vm_readv, process_vm_writev};
use nix::unistd::Pid;
use thiserror::Error;

use crate::layout::TargetLayout;
use crate::memory::{MemoryReader, ReadError};

/// Why a write into a process failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Some of the bytes are not mapped (or not writable even through
    /// `/proc/PID/mem`).
    #[error("{len} bytes at {addr:#x} are not mapped in the target")]
    Unmapped {
        /// First address.
        addr: u64,
        /// Length.
        len: usize,
    },
    /// Only part of the bytes were written.
    #[error("short write at {addr:#x}: {written} of {len} bytes")]
    Short {
        /// First address.
        addr: u64,
        /// Length.
        len: usize,
        /// Bytes written.
        written: usize,
    },
    /// The write failed otherwise (the process is gone, permission denied).
    #[error("writing {len} bytes at {addr:#x} failed: {source}")]
    Io {
        /// First address.
        addr: u64,
        /// Length.
        len: usize,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// The memory of a live process (Linux).
///
/// Reads use `process_vm_readv(2)`, one system call per read, without
/// stopping the process; where that call is unavailable (`ENOSYS`) or
/// refused (`EPERM`, e.g. by a seccomp policy) they fall back to
/// `pread` on `/proc/PID/mem`. Both need the right to `ptrace` the process
/// (same user and `kernel.yama.ptrace_scope` permitting, or root). A read of
/// unmapped memory is [`ReadError::Unmapped`]; one that crosses into an
/// unmapped page is [`ReadError::Short`].
///
/// Writes ([`ProcessMemory::write`]) use `process_vm_writev`, which honours
/// page protections, then `/proc/PID/mem`, which can also write read-only
/// pages of a process the caller traces.
#[derive(Debug)]
pub struct ProcessMemory {
    pid: i32,
    mem: OnceLock<Result<File, Errno>>,
}

impl ProcessMemory {
    /// The memory of process `pid` (nothing is opened until needed).
    pub fn new(pid: i32) -> Self {
        ProcessMemory {
            pid,
            mem: OnceLock::new(),
        }
    }

    /// The process.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    fn mem_file(&self) -> Result<&File, Errno> {
        self.mem
            .get_or_init(|| {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(format!("/proc/{}/mem", self.pid))
                    .or_else(|_| File::open(format!("/proc/{}/mem", self.pid)))
                    .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(0)))
            })
            .as_ref()
            .map_err(|e| *e)
    }

    fn read_proc_mem(&self, addr: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        let len = buf.len();
        let file = self.mem_file().map_err(|e| ReadError::Io {
            addr,
            len,
            source: e.into(),
        })?;
        let mut got = 0;
        while got < len {
            // `addr + got` stays below 2^64: the trait's callers never read
            // past the end of the address space.
            match file.read_at(&mut buf[got..], addr.wrapping_add(got as u64)) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if got == 0 && is_unmapped(&e) => {
                    return Err(ReadError::Unmapped { addr, len });
                }
                Err(e) if got == 0 => {
                    return Err(ReadError::Io {
                        addr,
                        len,
                        source: e,
                    });
                }
                Err(_) => break,
            }
        }
        match got {
            _ if got == len => Ok(()),
            0 => Err(ReadError::Unmapped { addr, len }),
            got => Err(ReadError::Short { addr, len, got }),
        }
    }

    /// Writes `bytes` at `addr` in the process.
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), WriteError> {
        let len = bytes.len();
        if len == 0 {
            return Ok(());
        }
        let Ok(base) = usize::try_from(addr) else {
            return Err(WriteError::Unmapped { addr, len });
        };
        let remote = [RemoteIoVec { base, len }];
        match process_vm_writev(Pid::from_raw(self.pid), &[IoSlice::new(bytes)], &remote) {
            Ok(n) if n == len => return Ok(()),
            // Partial, unmapped or read-only (EFAULT), unavailable or
            // refused: try /proc/PID/mem, which can also write text.
            Ok(_) | Err(Errno::EFAULT | Errno::ENOSYS | Errno::EPERM) => {}
            Err(Errno::ESRCH) => {
                return Err(WriteError::Io {
                    addr,
                    len,
                    source: Errno::ESRCH.into(),
                });
            }
            Err(e) => {
                return Err(WriteError::Io {
                    addr,
                    len,
                    source: e.into(),
                });
            }
        }
        let file = self.mem_file().map_err(|e| WriteError::Io {
            addr,
            len,
            source: e.into(),
        })?;
        let mut written = 0;
        while written < len {
            match file.write_at(&bytes[written..], addr.wrapping_add(written as u64)) {
                Ok(0) => break,
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if written == 0 && is_unmapped(&e) => {
                    return Err(WriteError::Unmapped { addr, len });
                }
                Err(e) if written == 0 => {
                    return Err(WriteError::Io {
                        addr,
                        len,
                        source: e,
                    });
                }
                Err(_) => break,
            }
        }
        if written == len {
            Ok(())
        } else {
            Err(WriteError::Short { addr, len, written })
        }
    }

    /// Writes a C `int` of the target's layout at `addr` (to set
    /// `MPIR_being_debugged` or `MPIR_debug_gate`).
    pub fn write_int(
        &self,
        layout: &TargetLayout,
        addr: u64,
        value: i64,
    ) -> Result<(), WriteError> {
        let bytes = layout.encode_int(value).map_err(|e| WriteError::Io {
            addr,
            len: usize::from(layout.int_width()),
            source: io::Error::new(io::ErrorKind::InvalidInput, e),
        })?;
        self.write(addr, &bytes)
    }
}

/// `/proc/PID/mem` reports unmapped memory as `EIO`, an address beyond the
/// file's range as `EINVAL`/`EFAULT`/`ESPIPE`.
fn is_unmapped(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(Errno::from_raw),
        Some(Errno::EIO | Errno::EFAULT | Errno::EINVAL | Errno::ESPIPE)
    )
}

impl MemoryReader for ProcessMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        let len = buf.len();
        if len == 0 {
            return Ok(());
        }
        let Ok(base) = usize::try_from(addr) else {
            return Err(ReadError::Unmapped { addr, len });
        };
        let remote = [RemoteIoVec { base, len }];
        let result = process_vm_readv(
            Pid::from_raw(self.pid),
            &mut [IoSliceMut::new(buf)],
            &remote,
        );
        match result {
            Ok(n) if n == len => Ok(()),
            Ok(0) => Err(ReadError::Unmapped { addr, len }),
            Ok(got) => Err(ReadError::Short { addr, len, got }),
            Err(Errno::EFAULT) => Err(ReadError::Unmapped { addr, len }),
            Err(Errno::ENOSYS | Errno::EPERM) => self.read_proc_mem(addr, buf),
            Err(e) => Err(ReadError::Io {
                addr,
                len,
                source: e.into(),
            }),
        }
    }
}
