//! The PMIx tool library's functions, opened at run time with `libloading`: the one file of
//! the `pmix` module with `unsafe` (every call into libpmix, and the `pmix_info_t` arrays
//! handed to it).
//!
//! Only the blocking forms are called (`PMIx_tool_init`, `PMIx_Query_info`,
//! `PMIx_Notify_event` with a NULL callback, which pmix.h documents as blocking), so
//! libpmix never calls back into Rust and no panic can cross into C. What the library
//! answers is not read here: the caller decodes it through a bounded
//! [`MemoryReader`](crate::MemoryReader) over this process's memory.

use std::ffi::{CStr, CString, c_char, c_void};
use std::path::Path;

use libloading::Library;

use super::abi::{
    PMIX_BOOL, PMIX_INFO_PERSISTENT, PMIX_PID, PMIX_PROC, PMIX_STRING, PMIX_UINT32,
    pmix_data_range_t, pmix_info_t, pmix_proc_t, pmix_query_t, pmix_status_t, pmix_value_data,
    pmix_value_t,
};

type ToolInit = unsafe extern "C" fn(*mut pmix_proc_t, *mut pmix_info_t, usize) -> pmix_status_t;
type ToolFinalize = unsafe extern "C" fn() -> pmix_status_t;
type QueryInfo = unsafe extern "C" fn(
    *mut pmix_query_t,
    usize,
    *mut *mut pmix_info_t,
    *mut usize,
) -> pmix_status_t;
type OpCallback = unsafe extern "C" fn(pmix_status_t, *mut c_void);
type NotifyEvent = unsafe extern "C" fn(
    pmix_status_t,
    *const pmix_proc_t,
    pmix_data_range_t,
    *const pmix_info_t,
    usize,
    Option<OpCallback>,
    *mut c_void,
) -> pmix_status_t;
type ValueDestruct = unsafe extern "C" fn(*mut pmix_value_t);
type ErrorString = unsafe extern "C" fn(pmix_status_t) -> *const c_char;

/// One directive or qualifier, owned until the call that takes it returns.
#[derive(Clone, Debug)]
pub(crate) enum Arg {
    Bool(&'static CStr, bool),
    Pid(&'static CStr, i32),
    Uint32(&'static CStr, u32),
    Str(&'static CStr, CString),
    Proc(&'static CStr, Box<pmix_proc_t>),
}

/// A `pmix_info_t` array and what its values point to, alive together.
struct Infos {
    infos: Vec<pmix_info_t>,
    // Pointed to by `infos` (a CString's bytes are on the heap; `procs` never grows past
    // the capacity it is made with, so its elements stay put).
    _strings: Vec<CString>,
    _procs: Vec<pmix_proc_t>,
}

impl Infos {
    fn new(args: &[Arg]) -> Infos {
        let mut strings = Vec::new();
        let mut procs: Vec<pmix_proc_t> = Vec::with_capacity(args.len());
        let infos = args
            .iter()
            .map(|arg| {
                let (key, type_, data) = match arg {
                    Arg::Bool(k, b) => (*k, PMIX_BOOL, pmix_value_data { flag: *b }),
                    Arg::Pid(k, p) => (*k, PMIX_PID, pmix_value_data { pid: *p }),
                    Arg::Uint32(k, u) => (*k, PMIX_UINT32, pmix_value_data { uint32: *u }),
                    Arg::Str(k, s) => {
                        let s = s.clone();
                        let ptr = s.as_ptr().cast_mut();
                        strings.push(s);
                        (*k, PMIX_STRING, pmix_value_data { string: ptr })
                    }
                    Arg::Proc(k, p) => {
                        procs.push(**p);
                        let ptr: *mut pmix_proc_t = procs
                            .last_mut()
                            .unwrap_or_else(|| unreachable!("an element was just pushed"));
                        (*k, PMIX_PROC, pmix_value_data { proc: ptr })
                    }
                };
                let mut info = pmix_info_t {
                    key: [0; super::abi::PMIX_MAX_KEYLEN + 1],
                    flags: 0,
                    value: pmix_value_t { type_, data },
                };
                // Keys are the header's, all shorter than PMIX_MAX_KEYLEN.
                for (d, s) in info.key.iter_mut().zip(key.to_bytes()) {
                    *d = *s as c_char;
                }
                info
            })
            .collect();
        Infos {
            infos,
            _strings: strings,
            _procs: procs,
        }
    }

    fn ptr(&mut self) -> *mut pmix_info_t {
        if self.infos.is_empty() {
            std::ptr::null_mut()
        } else {
            self.infos.as_mut_ptr()
        }
    }
}

/// A query's results, allocated by libpmix in this process; released on drop.
pub(crate) struct Results<'l> {
    lib: &'l Pmix,
    ptr: *mut pmix_info_t,
    len: usize,
}

impl Results<'_> {
    /// The address of the first `pmix_info_t` and the number of them.
    pub(crate) fn raw(&self) -> (u64, usize) {
        (self.ptr as u64, self.len)
    }
}

impl Drop for Results<'_> {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        // `len` is the library's count for `ptr`, up to a sane bound: a lying count is left
        // allocated rather than walked.
        if self.len <= 1 << 20 {
            for i in 0..self.len {
                // SAFETY: `ptr` holds `len` elements allocated by PMIx_Query_info (its
                // contract, PMIx Standard v4.2 "PMIx_Query_info"); each value not marked
                // persistent is released as PMIX_INFO_FREE does (pmix_common.h).
                unsafe {
                    let info = self.ptr.add(i);
                    if (*info).flags & PMIX_INFO_PERSISTENT == 0 {
                        (self.lib.value_destruct)(&mut (*info).value);
                    }
                }
            }
            // SAFETY: the array itself came from the library's malloc (PMIX_INFO_CREATE), in
            // this process, and nothing refers to it any more.
            unsafe { nix::libc::free(self.ptr.cast()) };
        }
    }
}

/// libpmix, opened, with the functions a tool calls.
pub(crate) struct Pmix {
    tool_init: ToolInit,
    tool_finalize: ToolFinalize,
    query_info: QueryInfo,
    notify_event: NotifyEvent,
    value_destruct: ValueDestruct,
    error_string: ErrorString,
    // Kept open for as long as the pointers above are used (the process's life).
    _lib: Library,
}

// SAFETY: libpmix's API functions may be called from any thread (the library serialises them
// on its own progress thread, PMIx Standard v4.2 "Threading"); the struct holds function
// pointers and the library handle only.
unsafe impl Send for Pmix {}
// SAFETY: as above: shared references only call those thread-safe functions.
unsafe impl Sync for Pmix {}

impl Pmix {
    /// Opens the library at `path` and resolves the six functions.
    pub(crate) fn open(path: &Path) -> Result<Pmix, String> {
        // SAFETY: opening a library runs its initialisers; libpmix's set up its globals only
        // (no connection, no thread, until PMIx_tool_init).
        let lib = unsafe { Library::new(path) }.map_err(|e| e.to_string())?;
        macro_rules! get {
            ($name:literal, $ty:ty) => {
                // SAFETY: the type is the prototype of pmix.h / pmix_tool.h (Debian's
                // libpmix-dev 4.2.2, the same in PMIx 5); the pointer is copied out and used
                // only while `lib` stays open (it is stored beside it).
                unsafe {
                    *lib.get::<$ty>(concat!($name, "\0").as_bytes())
                        .map_err(|e| format!("{}: {e}", $name))?
                }
            };
        }
        Ok(Pmix {
            tool_init: get!("PMIx_tool_init", ToolInit),
            tool_finalize: get!("PMIx_tool_finalize", ToolFinalize),
            query_info: get!("PMIx_Query_info", QueryInfo),
            notify_event: get!("PMIx_Notify_event", NotifyEvent),
            value_destruct: get!("PMIx_Value_destruct", ValueDestruct),
            error_string: get!("PMIx_Error_string", ErrorString),
            _lib: lib,
        })
    }

    /// `PMIx_tool_init` with `args`: the tool's own process name, or the status.
    pub(crate) fn tool_init(&self, args: &[Arg]) -> Result<pmix_proc_t, pmix_status_t> {
        let mut infos = Infos::new(args);
        let mut me = pmix_proc_t {
            nspace: [0; super::abi::PMIX_MAX_NSLEN + 1],
            rank: 0,
        };
        // SAFETY: `me` is a writable pmix_proc_t; `infos` holds `len` initialised elements
        // whose pointers stay valid until the call returns (the call is blocking).
        let rc = unsafe { (self.tool_init)(&mut me, infos.ptr(), infos.infos.len()) };
        if rc == 0 { Ok(me) } else { Err(rc) }
    }

    /// `PMIx_tool_finalize`.
    pub(crate) fn tool_finalize(&self) -> pmix_status_t {
        // SAFETY: no argument; called once, after a successful PMIx_tool_init.
        unsafe { (self.tool_finalize)() }
    }

    /// `PMIx_Query_info` of one query: `key` with `qualifiers`.
    pub(crate) fn query(
        &self,
        key: &'static CStr,
        qualifiers: &[Arg],
    ) -> Result<Results<'_>, pmix_status_t> {
        let mut quals = Infos::new(qualifiers);
        let mut keys = [key.as_ptr().cast_mut(), std::ptr::null_mut()];
        let mut query = pmix_query_t {
            keys: keys.as_mut_ptr(),
            qualifiers: quals.ptr(),
            nqual: quals.infos.len(),
        };
        let mut results: *mut pmix_info_t = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: one query whose NULL-terminated key list and qualifiers live until the
        // blocking call returns; the library only reads them. It writes the results' address
        // and count, which `Results` releases.
        let rc = unsafe { (self.query_info)(&mut query, 1, &mut results, &mut len) };
        let results = Results {
            lib: self,
            ptr: results,
            len,
        };
        // PARTIAL_SUCCESS (-52) still carries results.
        if rc == 0 || rc == super::abi::PMIX_ERR_PARTIAL_SUCCESS {
            Ok(results)
        } else {
            Err(rc)
        }
    }

    /// `PMIx_Notify_event(status, source, range, args)`, blocking (NULL callback).
    pub(crate) fn notify(
        &self,
        status: pmix_status_t,
        source: &pmix_proc_t,
        range: pmix_data_range_t,
        args: &[Arg],
    ) -> pmix_status_t {
        let mut infos = Infos::new(args);
        // SAFETY: a source and `len` initialised elements alive until the blocking call
        // returns, a NULL callback: pmix.h's blocking form.
        unsafe {
            (self.notify_event)(
                status,
                source,
                range,
                infos.ptr(),
                infos.infos.len(),
                None,
                std::ptr::null_mut(),
            )
        }
    }

    /// `PMIx_Error_string`, or `None` if the library gave no string.
    pub(crate) fn error_string(&self, status: pmix_status_t) -> Option<String> {
        // SAFETY: the function takes any status and returns a static string or NULL.
        let p = unsafe { (self.error_string)(status) };
        if p.is_null() {
            return None;
        }
        // SAFETY: a non-NULL answer is a NUL-terminated static string of the library.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}
