//! The MPI-5 ABI backend (`--cfg mpit_abi`): the standard's `mpi_abi.h`, declared once in
//! Rust, and `libmpi_abi.so.1` found at run time.
//!
//! The declarations (`generated.rs`) are generated from the header and checked in; the test
//! `tests/abi_header.rs` generates them again from every installed ABI header (MPICH 5.0.2's,
//! Intel MPI 2021.18.1's) and fails on any difference in what a call depends on. No `mpicc`,
//! no bindgen and no MPI are needed to build. They are the one set of declarations of the ABI
//! in the workspace, in three parts:
//!
//! - the types and constants: handles, `MPI_Status`, every callback type, the constants of
//!   MPI_T and those around it (`consts`, `tables`);
//! - `functions!`: what this backend calls (every `MPI_T_` function and those MPI_T's users
//!   need around it). Each is a thin `#[inline]` wrapper that calls through a table of
//!   pointers, filled on first use from the library (below);
//! - `declarations!`: every other function of the header, each by its `MPI_` name (the header
//!   declares the `PMPI_` twin with the same types, MPI-4.1 §16.2; the test checks it).
//!   Nothing is compiled for them here: they are for tools that define or forward the MPI
//!   functions themselves. The build script gives its dependents the file's path as
//!   `DEP_MPIT_SHIM_ABI_DECLARATIONS`, and mpit-prof's build script generates its PMPI wrappers
//!   from the two lists; their parameter types are the types of this module.
//!
//! So the backend costs nothing for what it does not call, and a tool neither repeats the
//! header nor links a library: it resolves its `PMPI_` functions as it must (mpit-prof, in
//! the program's library with `dlsym(RTLD_NEXT)`), which this module's loader could not do
//! for it.
//!
//! The library:
//!
//! 1. the path in `MPIT_ABI_LIB`, when set;
//! 2. else `libmpi_abi.so.1` as the dynamic loader finds it (`LD_LIBRARY_PATH`, the rpath,
//!    the loader's cache).
//!
//! Each function is then bound as a program linked with `-lmpi_abi` binds it: the first
//! definition in the process's global scope, so a PMPI tool or an MPI_T provider in
//! `LD_PRELOAD` stands in front of the library, as it does for C.
//!
//! A library whose `MPI_Abi_get_version` reports another major version than
//! [`ABI_VERSION`]'s is refused. When no library loads, every function returns
//! `MPI_ERR_OTHER` (`MPI_Wtime`: NaN) and [`library`] says why.
//!
//! The constants are the standard's: the same values on every ABI library, so nothing needs
//! translating. The exception is outside MPI_T: Intel MPI 2021.18.1's header still has older
//! values of `MPI_ERRORS_ABORT`/`MPI_ERRORS_RETURN` (swapped), `MPI_SEEK_*`, `MPI_APPNUM`,
//! `MPI_LASTUSEDCODE` and `MPI_UNIVERSE_SIZE`; none of them is declared here.

#![allow(non_camel_case_types, non_snake_case, clippy::unreadable_literal)]

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Opaque structs behind the handle types: only MPI knows their layout.
macro_rules! opaque {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("`struct ", stringify!($name), "`: opaque, behind a handle type.")]
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _not_send_sync: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
        }
    )*};
}

/// What a wrapper returns when no library is loaded.
trait Unloaded {
    const UNLOADED: Self;
}
impl Unloaded for c_int {
    const UNLOADED: c_int = consts::MPI_ERR_OTHER;
}
impl Unloaded for f64 {
    const UNLOADED: f64 = f64::NAN;
}

/// The table of the library's functions, and one wrapper per function.
macro_rules! functions {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)*) => {
        /// The library's functions, looked up once.
        #[allow(clippy::type_complexity)]
        pub(super) struct Table {
            $(pub(super) $name: unsafe extern "C" fn($($ty),*) -> $ret,)*
        }

        impl Table {
            /// Looks every function up in `scopes`, first found first; the names of those
            /// missing otherwise.
            pub(super) fn resolve(
                scopes: &[&libloading::Library],
            ) -> Result<Table, Vec<&'static str>> {
                let mut missing = Vec::new();
                $(
                    let $name = scopes.iter().find_map(|lib| {
                        // SAFETY: the symbol, if present, is the ABI's function of this name,
                        // whose C signature `generated.rs` declares (from the header).
                        unsafe {
                            lib.get::<unsafe extern "C" fn($($ty),*) -> $ret>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                        }
                        .ok()
                        .map(|s| *s)
                    });
                    if $name.is_none() {
                        missing.push(stringify!($name));
                    }
                )*
                match ($($name,)*) {
                    ($(Some($name),)*) => Ok(Table { $($name,)* }),
                    _ => Err(missing),
                }
            }
        }

        /// One pointer per function, published by [`Table::publish`] once the library is
        /// accepted (null before): a wrapper's fast path is the one load a C call makes
        /// through its GOT entry.
        mod slot {
            use std::ffi::c_void;
            use std::sync::atomic::AtomicPtr;
            $(
                #[allow(non_upper_case_globals)]
                pub(in super::super) static $name: AtomicPtr<c_void> =
                    AtomicPtr::new(std::ptr::null_mut());
            )*
        }

        impl Table {
            /// Makes the functions callable through the wrappers.
            pub(super) fn publish(&self) {
                $(
                    slot::$name.store(
                        self.$name as *mut std::ffi::c_void,
                        std::sync::atomic::Ordering::Release,
                    );
                )*
            }
        }

        $(
            #[doc = concat!("`", stringify!($name), "` of the loaded ABI library.")]
            ///
            /// # Safety
            ///
            /// The C function's contract (the MPI standard's): valid pointers of the sizes it
            /// writes, live handles. Without a library it returns `MPI_ERR_OTHER` (NaN for
            /// `MPI_Wtime`) and touches nothing.
            #[inline]
            pub unsafe fn $name($($arg: $ty),*) -> $ret {
                // Acquire pairs with `publish`: the library is loaded and initialised.
                let mut p = slot::$name.load(std::sync::atomic::Ordering::Acquire);
                if p.is_null() {
                    p = first_use(&slot::$name);
                    if p.is_null() {
                        return <$ret as Unloaded>::UNLOADED;
                    }
                }
                // SAFETY: a non-null slot holds this function's address from the accepted
                // library (`publish`), whose C signature this is.
                let f = unsafe {
                    std::mem::transmute::<*mut std::ffi::c_void, unsafe extern "C" fn($($ty),*) -> $ret>(p)
                };
                // SAFETY: the caller upholds the function's contract.
                unsafe { f($($arg),*) }
            }
        )*
    };
}

/// The header's other functions (`generated.rs`'s second list): read by tools' build scripts
/// from the file, nothing to compile here.
macro_rules! declarations {
    ($(fn $name:ident $params:tt $(-> $ret:ty)?;)*) => {};
}

// Generated code: C's signatures (many arguments), C's sentinel pointers (`MPI_IN_PLACE` is
// `(void *)1`).
#[allow(clippy::too_many_arguments, clippy::manual_dangling_ptr)]
mod generated {
    use super::{Unloaded, first_use};
    use std::ffi::{c_char, c_int, c_uint, c_void};
    include!("generated.rs");
}
use generated::Table;
pub use generated::*;

/// What the native build script finds out about the header, for this backend: the ABI header
/// declares all of MPI-4.1's MPI_T and MPI-5.0's; the library is only known at run time.
pub mod facts {
    /// The ABI header declares the MPI-4 event API (`cfg(mpit_events)` is set too).
    pub const HAS_EVENTS: bool = true;
    /// The ABI header declares `MPI_T_category_get_events`.
    pub const HAS_CATEGORY_EVENTS: bool = true;
    /// The ABI header declares `MPI_T_BIND_MPI_SESSION` (`cfg(mpit_bind_session)` is set too).
    pub const HAS_BIND_SESSION: bool = true;
    /// What the header names as the implementation: the ABI, not a vendor (the library that
    /// is loaded says which, at run time).
    pub const IMPLEMENTATION: &str = "MPI ABI";
    /// The code base: none in particular.
    pub const IMPLEMENTATION_FAMILY: &str = "MPI ABI";
    /// The ABI version the declarations come from.
    pub const IMPLEMENTATION_VERSION: &str = "1.0";
    /// No `mpicc` is used to build this backend.
    pub const BUILD_MPICC: &str = "";
    /// No launcher is known at build time (`mpit_safe::launcher` reads `$MPIEXEC`).
    pub const BUILD_MPIEXEC: &str = "";
    /// No library is probed at build time.
    pub const BUILD_MPI_LIBRARY_VERSION: &str = "";

    use super::{MPI_Aint, MPI_Count, MPI_Datatype, MPI_Offset, MPI_T_enum};
    use core::ffi::{c_int, c_long};
    use core::mem::size_of;
    /// `sizeof(int)` in C.
    pub const SIZEOF_int: usize = size_of::<c_int>();
    /// `sizeof(long)` in C.
    pub const SIZEOF_long: usize = size_of::<c_long>();
    /// `sizeof(MPI_Count)` of the ABI (`int64_t`).
    pub const SIZEOF_MPI_Count: usize = size_of::<MPI_Count>();
    /// `sizeof(MPI_Aint)` of the ABI (`intptr_t`).
    pub const SIZEOF_MPI_Aint: usize = size_of::<MPI_Aint>();
    /// `sizeof(MPI_Offset)` of the ABI (`int64_t`).
    pub const SIZEOF_MPI_Offset: usize = size_of::<MPI_Offset>();
    /// `sizeof(MPI_Datatype)` of the ABI (a pointer).
    pub const SIZEOF_MPI_Datatype: usize = size_of::<MPI_Datatype>();
    /// `sizeof(MPI_T_enum)` of the ABI (a pointer).
    pub const SIZEOF_MPI_T_enum: usize = size_of::<MPI_T_enum>();
}

/// The loaded library: where it came from and what it reports.
#[derive(Debug)]
pub struct Library {
    /// The path or name it was loaded by.
    pub path: String,
    /// What its `MPI_Abi_get_version` reported.
    pub abi_version: (c_int, c_int),
    // Never unloaded: MPI keeps threads and handlers of its own.
    _lib: libloading::Library,
}

/// Why no ABI library is in use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// Nothing loaded: the name tried, with the loader's message.
    NotFound {
        /// `MPIT_ABI_LIB`, or `libmpi_abi.so.1`.
        name: String,
        /// The loader's message.
        why: String,
    },
    /// A library loaded but lacks functions the ABI declares.
    Incomplete {
        /// The library.
        path: String,
        /// What is missing.
        missing: Vec<&'static str>,
    },
    /// The library implements another major version of the ABI.
    Version {
        /// The library.
        path: String,
        /// What it reports.
        found: (c_int, c_int),
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The loader's message names the library already.
            LoadError::NotFound { name: _, why } => write!(
                f,
                "no MPI ABI library could be loaded ({why}); put the directory of \
                 libmpi_abi.so.1 on LD_LIBRARY_PATH or its path in MPIT_ABI_LIB"
            ),
            LoadError::Incomplete { path, missing } => write!(
                f,
                "{path} lacks {} function(s) of the MPI ABI: {}",
                missing.len(),
                missing.join(", ")
            ),
            LoadError::Version { path, found } if found.0 < 0 => write!(
                f,
                "{path} is a native MPI build, not an MPI ABI library (its MPI_Abi_get_version \
                 gives {}.{}); load the implementation's libmpi_abi.so.1",
                found.0, found.1
            ),
            LoadError::Version { path, found } => write!(
                f,
                "{path} implements MPI ABI {}.{}; this build is for ABI {}.x",
                found.0, found.1, ABI_VERSION.0
            ),
        }
    }
}

impl std::error::Error for LoadError {}

static LIBRARY: OnceLock<Result<Library, LoadError>> = OnceLock::new();

/// The ABI library, loaded on first use (see the module's documentation for where from).
///
/// ```no_run
/// match mpit_sys::abi::library() {
///     Ok(lib) => println!("{} (ABI {}.{})", lib.path, lib.abi_version.0, lib.abi_version.1),
///     Err(e) => eprintln!("{e}"),
/// }
/// ```
pub fn library() -> Result<&'static Library, &'static LoadError> {
    LIBRARY.get_or_init(load).as_ref()
}

/// A wrapper's slow path: loads the library (once, in any thread) and reads the slot again
/// (still null when no library was accepted).
#[cold]
#[inline(never)]
fn first_use(slot: &AtomicPtr<c_void>) -> *mut c_void {
    match library() {
        Ok(_) => slot.load(Ordering::Acquire),
        Err(_) => std::ptr::null_mut(),
    }
}

fn load() -> Result<Library, LoadError> {
    let name = match std::env::var("MPIT_ABI_LIB") {
        Ok(p) if !p.trim().is_empty() => p,
        _ => "libmpi_abi.so.1".to_owned(),
    };
    // MPI implementations load plugins of their own that resolve MPI's symbols: global.
    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL;
    // SAFETY: loading runs the library's initialisers: an MPI library's do not need anything
    // of this process beyond what the C loader provides.
    let lib: libloading::Library =
        match unsafe { libloading::os::unix::Library::open(Some(&name), flags) } {
            Ok(l) => l.into(),
            Err(e) => {
                return Err(LoadError::NotFound {
                    why: e.to_string(),
                    name,
                });
            }
        };
    // A C program linked with -lmpi_abi binds each symbol in the global scope, where a
    // PMPI tool or an MPI_T provider in LD_PRELOAD comes before the library: look there first
    // (then the library's own table, should the loader have refused RTLD_GLOBAL).
    let global: libloading::Library = libloading::os::unix::Library::this().into();
    let table = Table::resolve(&[&global, &lib]).map_err(|missing| LoadError::Incomplete {
        path: name.clone(),
        missing,
    })?;
    let mut v = (0, 0);
    // SAFETY: `MPI_Abi_get_version` may be called at any time (MPI-5.0 §20.2) and writes two
    // ints.
    let rc = unsafe { (table.MPI_Abi_get_version)(&mut v.0, &mut v.1) };
    if rc != consts::MPI_SUCCESS || v.0 != ABI_VERSION.0 {
        return Err(LoadError::Version {
            path: name,
            found: v,
        });
    }
    // The library is never unloaded (`Library` keeps it, in a static): its addresses stay valid.
    table.publish();
    Ok(Library {
        path: name,
        abi_version: v,
        _lib: lib,
    })
}

/// `MPI_T_PVAR_ALL_HANDLES`: the pseudo-handle that makes `MPI_T_pvar_start`, `_stop` and
/// `_reset` act on every handle of a session (MPI-4.1 §16.3.7).
#[doc(alias = "MPI_T_PVAR_ALL_HANDLES")]
#[inline]
pub fn mpi_t_pvar_all_handles() -> MPI_T_pvar_handle {
    MPI_T_PVAR_ALL_HANDLES
}
