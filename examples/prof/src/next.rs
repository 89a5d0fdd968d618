//! Functions found with `dlsym(RTLD_NEXT)`: the next definition after this library, which
//! is not linked against them (the ABI build's `PMPI_` functions, the Fortran bindings'
//! `pmpi_*_` entries).

use std::ffi::{CStr, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

/// A function of the program's libraries, found at its first use.
pub(crate) struct Symbol {
    /// Its name.
    pub(crate) name: &'static CStr,
    ptr: AtomicPtr<c_void>,
}

impl Symbol {
    /// The function called `name`.
    pub(crate) const fn new(name: &'static CStr) -> Symbol {
        Symbol {
            name,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Its address (null if the process has no such function).
    #[inline]
    pub(crate) fn get(&self) -> *mut c_void {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return p;
        }
        self.find()
    }

    #[cold]
    fn find(&self) -> *mut c_void {
        // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name only reads the loader's
        // tables: the next definition after this library.
        let p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
        self.ptr.store(p, Ordering::Release);
        p
    }
}
