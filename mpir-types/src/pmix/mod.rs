//! PMIx process acquisition, the tool side's first layer (feature `pmix`): the PMIx ABI a
//! tool needs ([`abi`], written by hand from the PMIx Standard v4.2 and checked against the
//! installed `pmix.h` by `tests/pmix_abi.rs`) and bounded, checked decoders of what the
//! queries answer ([`decode`]).
//!
//! Where a starter publishes no MPIR symbols (Open MPI 5's `mpirun`, PRRTE's `prterun`), a
//! tool finds the processes of a job by connecting to the launcher's PMIx server as a PMIx
//! tool and querying it: [`PMIX_QUERY_NAMESPACES`] names the jobs,
//! [`PMIX_QUERY_PROC_TABLE`] with a [`PMIX_NSPACE`] qualifier lists the processes of one
//! (their namespace and rank, host, executable and pid: what an `MPIR_PROCDESC` holds, MPIR
//! document §2.8.2). The answer is an array of [`pmix_info_t`] the library allocates in the
//! tool's memory; the decoders read it through a [`MemoryReader`](crate::MemoryReader),
//! as MPIR's read a starter's, so they are tested on byte images and fuzzed, and a
//! garbage answer is a typed [`PmixDecodeError`], never a crash or an unbounded allocation.
//! They give the crate's [`ProcDesc`](crate::ProcDesc), so a tool shows both the same way.
//!
//! On Linux, `tool` is the live side: libpmix opened at run time (nothing needs PMIx to
//! build), one `PMIx_tool_init` per process to a launcher by pid or URI, every call bounded
//! by a deadline, the jobs' tables decoded through a `ProcessMemory` over the tool's own
//! memory, the `PMIX_DEBUGGER_RELEASE` event, and the launch model (`tool::launch`: the job
//! started with PRRTE's `--stop-in-init`, acquired, released). `ffi` (private) is the one file
//! of the module with `unsafe`.
//!
//! # Example
//!
//! A proc table as a query answers it, built in a [`MemoryImage`](crate::MemoryImage) with
//! the definitions' layout (the host's), and decoded:
//!
//! ```
//! use std::mem::{offset_of, size_of};
//! use mpir_types::pmix::*;
//! use mpir_types::{Limits, MemoryImage};
//!
//! fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
//!     buf[at..at + bytes.len()].copy_from_slice(bytes);
//! }
//! let (value, darray, elements, host, exe) = (0x1000u64, 0x2000u64, 0x3000u64, 0x5000u64, 0x5100u64);
//! let mut mem = MemoryImage::new();
//! mem.map(host, b"node0\0".to_vec())?;
//! mem.map(exe, b"/home/me/a.out\0".to_vec())?;
//!
//! // The pmix_value_t: PMIX_DATA_ARRAY, pointing to the pmix_data_array_t.
//! let mut v = vec![0u8; size_of::<pmix_value_t>()];
//! put(&mut v, offset_of!(pmix_value_t, type_), &PMIX_DATA_ARRAY.to_ne_bytes());
//! put(&mut v, offset_of!(pmix_value_t, data), &(darray as usize).to_ne_bytes());
//! mem.map(value, v)?;
//! // Two PMIX_PROC_INFO elements, ranks 1 and 0.
//! let mut d = vec![0u8; size_of::<pmix_data_array_t>()];
//! put(&mut d, offset_of!(pmix_data_array_t, type_), &PMIX_PROC_INFO.to_ne_bytes());
//! put(&mut d, offset_of!(pmix_data_array_t, size), &2usize.to_ne_bytes());
//! put(&mut d, offset_of!(pmix_data_array_t, array), &(elements as usize).to_ne_bytes());
//! mem.map(darray, d)?;
//! let stride = size_of::<pmix_proc_info_t>();
//! let mut e = vec![0u8; 2 * stride];
//! for (i, (rank, pid)) in [(1u32, 4243i32), (0, 4242)].into_iter().enumerate() {
//!     let at = i * stride;
//!     put(&mut e, at + offset_of!(pmix_proc_info_t, proc), b"prterun-node0-77@1\0");
//!     put(&mut e, at + offset_of!(pmix_proc_info_t, proc) + 256, &rank.to_ne_bytes());
//!     put(&mut e, at + offset_of!(pmix_proc_info_t, hostname), &(host as usize).to_ne_bytes());
//!     put(&mut e, at + offset_of!(pmix_proc_info_t, executable_name), &(exe as usize).to_ne_bytes());
//!     put(&mut e, at + offset_of!(pmix_proc_info_t, pid), &pid.to_ne_bytes());
//! }
//! mem.map(elements, e)?;
//!
//! let procs = decode_proc_table(&mem, value, None, &Limits::default())?;
//! assert_eq!(procs.len(), 2);
//! assert_eq!((procs[0].pid, procs[1].pid), (4242, 4243)); // in rank order
//! assert_eq!(procs[1].host_name, "node0");
//! assert!(procs[0].executable_name.shares_storage_with(&procs[1].executable_name));
//!
//! // A value of another type is a typed error.
//! let err = decode_namespaces(&mem, value, None, &Limits::default()).unwrap_err();
//! assert!(matches!(err, PmixDecodeError::WrongType { found: PMIX_DATA_ARRAY, .. }));
//! assert_eq!(parse_namespaces(b"prterun-node0-77@0,prterun-node0-77@1", None, &Limits::default())?.len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod abi;
pub mod decode;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod ffi;
#[cfg(target_os = "linux")]
pub mod tool;

pub use abi::*;
pub use decode::{
    PmixDecodeError, PmixLocation, ProcInfo, ProcInfoField, decode_namespaces, decode_proc_infos,
    decode_proc_table, find_info_value, parse_namespaces,
};
