//! The raw side of the benches in the ABI build (`--cfg mpit_abi`): `mpit_safe::sys` with the
//! measured MPI_T functions called as a C program linked with `-lmpi_abi` calls them, through a
//! pointer to the library's symbol loaded once (its GOT entry), not through `mpit-sys`'s
//! checked table. The safe side pays that table; the ratio shows what it costs.
//!
//! [`load`] must run once, after the library is loaded (any `mpit_safe` call loads it) and
//! before a raw call: a raw call before it calls a null pointer's stand-in that panics.

#![allow(non_snake_case, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

pub use mpit_safe::sys::*;

/// The functions: a pointer each (`ptr::NAME`) and a wrapper that loads it (relaxed: `load`
/// happens-before every call through the thread that starts the benchmark) and calls it.
macro_rules! c_functions {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> c_int;)*) => {
        mod ptr {
            use super::*;
            $(
                #[allow(non_upper_case_globals)]
                pub(super) static $name: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
            )*
        }

        /// Resolves every function in the process's global scope (where the library, loaded
        /// with `RTLD_GLOBAL`, defines it).
        ///
        /// # Panics
        /// If the library is not loaded or lacks a function.
        pub fn load() {
            let global = libloading::os::unix::Library::this();
            $(
                // SAFETY: the symbol is the ABI's function of this name; only its address is
                // read.
                let p = unsafe {
                    global.get::<*mut c_void>(concat!(stringify!($name), "\0").as_bytes())
                }
                .map(|s| s.into_raw())
                .unwrap_or_else(|e| panic!("{}: {e}", stringify!($name)));
                ptr::$name.store(p, Ordering::Relaxed);
            )*
        }

        $(
            #[doc = concat!("`", stringify!($name), "` through the library's symbol.")]
            ///
            /// # Safety
            ///
            /// The C function's contract; [`load`] has run.
            #[inline(always)]
            pub unsafe fn $name($($arg: $ty),*) -> c_int {
                let p = ptr::$name.load(Ordering::Relaxed);
                assert!(!p.is_null(), "abi_c::load has not run");
                // SAFETY: `p` is the function's address (load) with the header's signature.
                let f: unsafe extern "C" fn($($ty),*) -> c_int = unsafe { std::mem::transmute(p) };
                // SAFETY: the caller upholds the function's contract.
                unsafe { f($($arg),*) }
            }
        )*
    };
}

c_functions! {
    fn MPI_T_pvar_read(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle, buf: *mut c_void) -> c_int;
    fn MPI_T_pvar_readreset(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle, buf: *mut c_void) -> c_int;
    fn MPI_T_pvar_start(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> c_int;
    fn MPI_T_pvar_stop(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> c_int;
    fn MPI_T_cvar_read(handle: MPI_T_cvar_handle, buf: *mut c_void) -> c_int;
    fn MPI_T_cvar_get_info(cvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, datatype: *mut MPI_Datatype, enumtype: *mut MPI_T_enum, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, scope: *mut c_int) -> c_int;
    fn MPI_T_pvar_get_info(pvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, var_class: *mut c_int, datatype: *mut MPI_Datatype, enumtype: *mut MPI_T_enum, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, readonly: *mut c_int, continuous: *mut c_int, atomic: *mut c_int) -> c_int;
    fn MPI_T_category_get_info(cat_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, num_cvars: *mut c_int, num_pvars: *mut c_int, num_categories: *mut c_int) -> c_int;
    fn MPI_T_category_get_cvars(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int;
    fn MPI_T_category_get_pvars(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int;
    fn MPI_T_category_get_categories(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int;
    fn MPI_T_category_get_events(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int;
    fn MPI_T_category_get_num_events(cat_index: c_int, num_events: *mut c_int) -> c_int;
    fn MPI_T_enum_get_info(enumtype: MPI_T_enum, num: *mut c_int, name: *mut c_char, name_len: *mut c_int) -> c_int;
    fn MPI_T_enum_get_item(enumtype: MPI_T_enum, indx: c_int, value: *mut c_int, name: *mut c_char, name_len: *mut c_int) -> c_int;
}
