//! The fence: every call from this crate into MPI, and every callback from MPI into it.
//!
//! This is the one module of `mpit-safe` that may use `unsafe` (every other module forbids it,
//! and `tests/fence.rs` checks the sources), so it is the one file to audit. In the manner of
//! rustix and rusqlite:
//!
//! * each entry is a thin, safe, `#[inline]` function over one MPI_T or MPI call and named
//!   after it (`cvar_read` for `MPI_T_cvar_read`), with its `// SAFETY:` argument; return codes
//!   become `Result` through [`crate::raw::check`];
//! * its arguments are Rust types that make the call sound: slices whose size is checked
//!   against what MPI writes, `&CStr`, indices checked against the current count ([`Index`]),
//!   and handle newtypes ([`TInit`], [`RawSession`], [`RawPvarHandle`], [`RawCvarHandle`],
//!   [`RawInfo`], `RawRegistration`) that only the call allocating them can make, that free
//!   themselves once on drop, and that borrow what must outlive them;
//! * thread safety is claimed here only: the handles are `Send` and `Sync` at
//!   `MPI_THREAD_MULTIPLE` ([`Multiple`]) and neither below it, and the public types get their
//!   auto traits from them;
//! * MPI's event callbacks are `extern "C"` trampolines that catch every panic; the boxed
//!   closures they call belong to a block that only MPI's free callback releases.
//!
//! What the types cannot say, the entries check before the call: a buffer shorter than the
//! bytes MPI writes is [`Error::SizeMismatch`], a `bool` buffer for anything but `MPI_C_BOOL`
//! is [`Error::TypeMismatch`], an object of the wrong kind is [`Error::BindMismatch`].

use std::ffi::{CStr, c_char, c_int, c_void};
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, size_of_val};

#[cfg(not(mpit_abi))]
use mpi::raw::AsRaw;
use mpit_core::{Bind, Datatype, Error, Result, Scalar, TypeKind};
use mpit_sys as sys;

// The MPI-4 event API: the header's, or where it has none, stand-ins with its signatures that
// answer "not supported", so that the event code below compiles on every MPI.
#[cfg(mpit_events)]
pub(crate) use mpit_sys as esys;
#[cfg(not(mpit_events))]
pub(crate) mod no_event_api;
#[cfg(not(mpit_events))]
pub(crate) use no_event_api as esys;
// The queue event callbacks fill (its unsafe is here, with the rest).
pub(crate) mod ring;
// rsmpi's names over the ABI library, for the ABI build (`mpit_safe::mpi`).
#[cfg(mpit_abi)]
pub mod mpi_abi;

use crate::init::level::{Level, Multiple};
#[cfg(not(mpit_abi))]
use crate::object::MpiObject;
use crate::raw::{RawConstant, c_len, check, non_negative};

// ---------------------------------------------------------------------------------------------
// Initialisation (MPI-4.1 §16.3.4) and the MPI calls around it.

/// One `MPI_T_init_thread` not yet balanced: MPI_T is initialised while it lives, and dropping
/// it calls `MPI_T_finalize`. Every entry that needs MPI_T initialised borrows one, and every
/// handle borrows the one it was allocated under.
pub(crate) struct TInit<L: Level> {
    _level: PhantomData<(L, *const ())>,
}

// SAFETY: `Mpit::init_thread` keeps a `TInit<Multiple>` only where MPI_T provides
// MPI_THREAD_MULTIPLE, at which MPI_T may be called from any thread at any time. Below that
// level it is neither `Send` nor `Sync` (the raw pointer in its marker).
unsafe impl Send for TInit<Multiple> {}
// SAFETY: as above: concurrent calls are allowed at MPI_THREAD_MULTIPLE.
unsafe impl Sync for TInit<Multiple> {}

impl<L: Level> std::fmt::Debug for TInit<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TInit")
    }
}

/// `TInit`s alive (kept forever ones included): at zero, MPICH may free its event types.
static LIVE_TINITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One `TInit` ended: after the last, pooled event registrations belong to no list any more.
fn tinit_ended() {
    if LIVE_TINITS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
        events::pool::end_of_epoch();
    }
}

/// `MPI_T_init_thread` requesting `L`'s level: the initialisation and the level provided.
///
/// Below `MPI_THREAD_MULTIPLE` the caller holds the thread confinement of `init.rs`, so no
/// other thread is inside MPI_T.
#[inline]
pub(crate) fn t_init_thread<L: Level>() -> Result<(TInit<L>, c_int)> {
    // The ABI build loads its library now: what failed, rather than MPI_ERR_OTHER of a call.
    #[cfg(mpit_abi)]
    sys::abi::library().map_err(|e| Error::LibraryUnavailable(Box::new(e.to_string())))?;
    let mut provided: c_int = 0;
    // SAFETY: MPI_T_init_thread may be called at any time, any number of times (MPI-4.1
    // §16.3.4); valid out-pointer.
    check(unsafe { sys::MPI_T_init_thread(crate::init::raw_level(L::LEVEL), &mut provided) })?;
    LIVE_TINITS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok((
        TInit {
            _level: PhantomData,
        },
        provided,
    ))
}

impl<L: Level> TInit<L> {
    /// `MPI_T_finalize`, reporting its return code.
    #[inline]
    pub(crate) fn finalize(self) -> Result<()> {
        let _consumed = ManuallyDrop::new(self);
        // SAFETY: balances this value's MPI_T_init_thread, once: `self` is consumed without
        // running its drop, and nothing borrows it any more.
        let rc = check(unsafe { sys::MPI_T_finalize() });
        tinit_ended();
        rc
    }

    /// Keeps MPI_T initialised for the rest of the process (never finalised).
    pub(crate) fn keep_forever(self) {
        std::mem::forget(self);
    }
}

impl<L: Level> Drop for TInit<L> {
    fn drop(&mut self) {
        // SAFETY: balances this value's MPI_T_init_thread, once; borrows of it have ended. A
        // failure cannot be reported from drop: `finalize` reports it.
        let _ = unsafe { sys::MPI_T_finalize() };
        tinit_ended();
    }
}

/// `MPI_Initialized`.
#[inline]
pub(crate) fn initialized() -> Result<bool> {
    let mut flag = 0;
    // SAFETY: may be called at any time (MPI-4.1 §11.2.1); valid out-pointer.
    check(unsafe { sys::MPI_Initialized(&mut flag) })?;
    Ok(flag != 0)
}

/// `MPI_Finalized`.
#[inline]
pub(crate) fn finalized() -> Result<bool> {
    let mut flag = 0;
    // SAFETY: may be called at any time (MPI-4.1 §11.2.1); valid out-pointer.
    check(unsafe { sys::MPI_Finalized(&mut flag) })?;
    Ok(flag != 0)
}

/// `MPI_Query_thread`: the thread level MPI provides (callable between `MPI_Init` and
/// `MPI_Finalize`; check [`initialized`] and [`finalized`] first).
#[inline]
pub(crate) fn query_thread() -> Result<c_int> {
    let mut provided = 0;
    // SAFETY: the caller checked that MPI is initialised and not finalised (MPI-4.1 §11.2.3);
    // valid out-pointer.
    check(unsafe { sys::MPI_Query_thread(&mut provided) })?;
    Ok(provided)
}

/// `MPI_Get_library_version`: the library's own description of itself.
pub(crate) fn get_library_version() -> Result<String> {
    // Larger than any implementation's MPI_MAX_LIBRARY_VERSION_STRING (MPICH 8192, Open MPI 256).
    let mut buf = vec![0u8; 1 << 14];
    let mut len = 0;
    // SAFETY: callable before MPI_Init and after MPI_Finalize (MPI-4.1 §9.1.1); the buffer is
    // larger than MPI_MAX_LIBRARY_VERSION_STRING and the length a valid out-pointer.
    check(unsafe { sys::MPI_Get_library_version(buf.as_mut_ptr().cast(), &mut len) })?;
    let s = CStr::from_bytes_until_nul(&buf).map_err(|_| Error::LengthOverflow)?;
    Ok(s.to_string_lossy().into_owned())
}

// ---------------------------------------------------------------------------------------------
// Buffers.

/// `Ok` if `buf` can take `need` bytes of `datatype` written by MPI: large enough, and of a
/// type for which every byte pattern MPI may write is a value (`bool` only for
/// `MPI_C_BOOL`, whose C values are 0 and 1).
#[inline(always)]
fn fits<T: Scalar>(buf: &[T], need: usize, datatype: Datatype) -> Result<()> {
    if T::KIND == TypeKind::Boolean && datatype != Datatype::CBool {
        return Err(not_bool(datatype, T::NAME));
    }
    holds(buf, need)
}

/// `Ok` if `buf` holds at least `need` bytes for MPI to read or write.
#[inline(always)]
fn holds<T>(buf: &[T], need: usize) -> Result<()> {
    let got = size_of_val(buf);
    if got >= need {
        Ok(())
    } else {
        Err(too_small(need, got))
    }
}

// The refusals, out of line: the checks above stay a compare and a branch on the hot paths.

#[cold]
#[inline(never)]
fn not_bool(expected: Datatype, requested: &'static str) -> Error {
    Error::type_mismatch(expected, requested)
}

#[cold]
#[inline(never)]
fn too_small(expected: usize, got: usize) -> Error {
    Error::size_mismatch(expected, got)
}

/// `(buffer, length)` of one string argument (MPI-4.1 §16.3.3): NULL and 0 for a length query.
fn str_arg(buf: Option<&mut [u8]>) -> Result<(*mut c_char, c_int)> {
    Ok(match buf {
        Some(b) => (b.as_mut_ptr().cast(), c_len(b.len())?),
        None => (std::ptr::null_mut(), 0),
    })
}

/// Bytes of `count` elements of the MPI datatype `dt`.
fn byte_len(count: usize, dt: sys::MPI_Datatype) -> Result<(Datatype, usize)> {
    let dt = Datatype::from_raw(dt)?;
    let bytes = count.checked_mul(dt.size()).ok_or(Error::LengthOverflow)?;
    Ok((dt, bytes))
}

// ---------------------------------------------------------------------------------------------
// Indices and enumeration (MPI-4.1 §16.3.5–§16.3.9).

/// The kinds of things MPI_T numbers: each has its `MPI_T_*_get_num`.
pub(crate) trait Kind: Copy {
    /// The current count (`MPI_T_*_get_num`).
    fn num<L: Level>(init: &TInit<L>) -> Result<usize>;
}

macro_rules! kinds {
    ($($(#[$doc:meta])* $kind:ident => $num:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) enum $kind {}
        impl Kind for $kind {
            #[inline]
            fn num<L: Level>(init: &TInit<L>) -> Result<usize> {
                $num(init)
            }
        }
    )*};
}

kinds! {
    /// Control variables.
    Cvar => cvar_get_num;
    /// Performance variables.
    Pvar => pvar_get_num;
    /// Categories.
    Category => category_get_num;
}

kinds! {
    /// Event types.
    Event => event_get_num;
    /// Event sources.
    Source => source_get_num;
}

/// An index below the count MPI_T reported for its kind. Indices never disappear (MPI-4.1
/// §16.3.6–§16.3.9), so it stays valid; checked here because an out-of-range index is not
/// always refused (MPICH 4.0.2's `MPI_T_pvar_get_info` segfaults on one instead of returning
/// `MPI_T_ERR_INVALID_INDEX`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Index<K: Kind> {
    raw: c_int,
    _kind: PhantomData<K>,
}

impl<K: Kind> Index<K> {
    /// `index` if it is below the current count, else `None`.
    #[inline]
    pub(crate) fn checked<L: Level>(init: &TInit<L>, index: usize) -> Result<Option<Index<K>>> {
        let count = K::num(init)?;
        Ok(c_int::try_from(index)
            .ok()
            .filter(|_| index < count)
            .map(|raw| Index {
                raw,
                _kind: PhantomData,
            }))
    }

    /// Every index below the current count, from one `MPI_T_*_get_num` (a listing then makes
    /// no call per index to check it: indices never disappear).
    #[inline]
    pub(crate) fn all<L: Level>(
        init: &TInit<L>,
    ) -> Result<impl ExactSizeIterator<Item = Index<K>> + use<K, L>> {
        let count = c_int::try_from(K::num(init)?).map_err(|_| Error::LengthOverflow)?;
        Ok((0..count).map(|raw| Index {
            raw,
            _kind: PhantomData,
        }))
    }

    /// The index.
    #[inline]
    pub(crate) fn get(self) -> usize {
        self.raw as usize
    }
}

macro_rules! get_num {
    ($($(#[$doc:meta])* $name:ident => $mpi:path;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name<L: Level>(_init: &TInit<L>) -> Result<usize> {
            let mut n = 0;
            // SAFETY: MPI_T is initialised while `_init` lives; `n` is a valid out-pointer.
            check(unsafe { $mpi(&mut n) })?;
            non_negative(n)
        }
    )*};
}

get_num! {
    /// `MPI_T_cvar_get_num`.
    cvar_get_num => sys::MPI_T_cvar_get_num;
    /// `MPI_T_pvar_get_num`.
    pvar_get_num => sys::MPI_T_pvar_get_num;
    /// `MPI_T_category_get_num`.
    category_get_num => sys::MPI_T_category_get_num;
    /// `MPI_T_event_get_num`.
    event_get_num => esys::MPI_T_event_get_num;
    /// `MPI_T_source_get_num`.
    source_get_num => esys::MPI_T_source_get_num;
}

/// `MPI_T_category_changed`: the stamp of the categories.
#[inline]
pub(crate) fn category_changed<L: Level>(_init: &TInit<L>) -> Result<c_int> {
    let mut stamp = 0;
    // SAFETY: MPI_T is initialised while `_init` lives; valid out-pointer.
    check(unsafe { sys::MPI_T_category_changed(&mut stamp) })?;
    Ok(stamp)
}

/// An enumeration handle MPI_T returned (never `MPI_T_ENUM_NULL`), valid while the
/// initialisation it came from lives. Compared and hashed by the handle's value (a key for
/// the enumerations a listing has resolved).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RawEnum<'m> {
    raw: sys::MPI_T_enum,
    _init: PhantomData<&'m ()>,
}

impl RawEnum<'_> {
    /// The handle's identity, to find an enumeration resolved before (it names no enumeration
    /// by itself: nothing makes a handle out of it).
    #[inline]
    pub(crate) fn key(self) -> EnumKey {
        EnumKey(self.raw)
    }
}

/// The identity of an enumeration handle ([`RawEnum::key`]), without its lifetime: a key of a
/// cache of resolved enumerations that lives no longer than one listing or visit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct EnumKey(sys::MPI_T_enum);

/// The enumeration behind a handle MPI_T returned, `None` for `MPI_T_ENUM_NULL`.
fn enum_handle<'m>(raw: sys::MPI_T_enum) -> Option<RawEnum<'m>> {
    (raw != sys::MPI_T_ENUM_NULL).then_some(RawEnum {
        raw,
        _init: PhantomData,
    })
}

/// `MPI_T_enum_get_info`: the number of items and the name's length (written to `name`).
#[inline]
pub(crate) fn enum_get_info(e: RawEnum<'_>, name: Option<&mut [u8]>) -> Result<(c_int, c_int)> {
    let (p, mut len) = str_arg(name)?;
    let mut num = 0;
    // SAFETY: `e` is an enumeration handle MPI_T returned, and MPI_T is still initialised (it
    // borrows the initialisation); the buffer is valid for `len` bytes (or NULL with 0); the
    // rest are valid out-pointers.
    check(unsafe { sys::MPI_T_enum_get_info(e.raw, &mut num, p, &mut len) })?;
    Ok((num, len))
}

/// `MPI_T_enum_get_item`: item `item`'s value and its name's length (written to `name`).
#[inline]
pub(crate) fn enum_get_item(
    e: RawEnum<'_>,
    item: c_int,
    name: Option<&mut [u8]>,
) -> Result<(c_int, c_int)> {
    let (p, mut len) = str_arg(name)?;
    let mut value = 0;
    // SAFETY: as in `enum_get_info`; MPI refuses an item out of range (MPI_T_ERR_INVALID_ITEM).
    check(unsafe { sys::MPI_T_enum_get_item(e.raw, item, &mut value, p, &mut len) })?;
    Ok((value, len))
}

/// What `MPI_T_cvar_get_info` returns besides the strings.
pub(crate) struct CvarQuery<'m> {
    pub(crate) verbosity: c_int,
    pub(crate) datatype: sys::MPI_Datatype,
    pub(crate) enumtype: Option<RawEnum<'m>>,
    pub(crate) bind: c_int,
    pub(crate) scope: c_int,
    pub(crate) name_len: c_int,
    pub(crate) desc_len: c_int,
}

/// `MPI_T_cvar_get_info` of a checked index, with optional name and description buffers.
#[inline]
pub(crate) fn cvar_get_info<'m, L: Level>(
    _init: &'m TInit<L>,
    index: Index<Cvar>,
    name: Option<&mut [u8]>,
    desc: Option<&mut [u8]>,
) -> Result<CvarQuery<'m>> {
    let (name_ptr, mut name_len) = str_arg(name)?;
    let (desc_ptr, mut desc_len) = str_arg(desc)?;
    let (mut verbosity, mut bind, mut scope) = (0, 0, 0);
    let mut datatype = sys::MPI_DATATYPE_NULL;
    let mut enumtype = sys::MPI_T_ENUM_NULL;
    // SAFETY: MPI_T is initialised while `_init` lives; the index is below the count; string
    // buffers are valid for their lengths (or NULL with length 0); every other argument is a
    // valid out-pointer.
    check(unsafe {
        sys::MPI_T_cvar_get_info(
            index.raw,
            name_ptr,
            &mut name_len,
            &mut verbosity,
            &mut datatype,
            &mut enumtype,
            desc_ptr,
            &mut desc_len,
            &mut bind,
            &mut scope,
        )
    })?;
    Ok(CvarQuery {
        verbosity,
        datatype,
        enumtype: enum_handle(enumtype),
        bind,
        scope,
        name_len,
        desc_len,
    })
}

/// What `MPI_T_pvar_get_info` returns besides the strings.
pub(crate) struct PvarQuery<'m> {
    pub(crate) verbosity: c_int,
    pub(crate) class: c_int,
    pub(crate) datatype: sys::MPI_Datatype,
    pub(crate) enumtype: Option<RawEnum<'m>>,
    pub(crate) bind: c_int,
    pub(crate) readonly: bool,
    pub(crate) continuous: bool,
    pub(crate) atomic: bool,
    pub(crate) name_len: c_int,
    pub(crate) desc_len: c_int,
}

/// `MPI_T_pvar_get_info` of a checked index, with optional name and description buffers.
#[inline]
pub(crate) fn pvar_get_info<'m, L: Level>(
    _init: &'m TInit<L>,
    index: Index<Pvar>,
    name: Option<&mut [u8]>,
    desc: Option<&mut [u8]>,
) -> Result<PvarQuery<'m>> {
    let (name_ptr, mut name_len) = str_arg(name)?;
    let (desc_ptr, mut desc_len) = str_arg(desc)?;
    let (mut verbosity, mut class, mut bind) = (0, 0, 0);
    let (mut readonly, mut continuous, mut atomic) = (0, 0, 0);
    let mut datatype = sys::MPI_DATATYPE_NULL;
    let mut enumtype = sys::MPI_T_ENUM_NULL;
    // SAFETY: as in `cvar_get_info`.
    check(unsafe {
        sys::MPI_T_pvar_get_info(
            index.raw,
            name_ptr,
            &mut name_len,
            &mut verbosity,
            &mut class,
            &mut datatype,
            &mut enumtype,
            desc_ptr,
            &mut desc_len,
            &mut bind,
            &mut readonly,
            &mut continuous,
            &mut atomic,
        )
    })?;
    Ok(PvarQuery {
        verbosity,
        class,
        datatype,
        enumtype: enum_handle(enumtype),
        bind,
        readonly: readonly != 0,
        continuous: continuous != 0,
        atomic: atomic != 0,
        name_len,
        desc_len,
    })
}

/// What `MPI_T_category_get_info` returns besides the strings.
pub(crate) struct CategoryQuery {
    pub(crate) num_cvars: c_int,
    pub(crate) num_pvars: c_int,
    pub(crate) num_categories: c_int,
    pub(crate) name_len: c_int,
    pub(crate) desc_len: c_int,
}

/// `MPI_T_category_get_info` of a checked index, with optional name and description buffers.
#[inline]
pub(crate) fn category_get_info<L: Level>(
    _init: &TInit<L>,
    index: Index<Category>,
    name: Option<&mut [u8]>,
    desc: Option<&mut [u8]>,
) -> Result<CategoryQuery> {
    let (name_ptr, mut name_len) = str_arg(name)?;
    let (desc_ptr, mut desc_len) = str_arg(desc)?;
    let (mut num_cvars, mut num_pvars, mut num_categories) = (0, 0, 0);
    // SAFETY: as in `cvar_get_info`.
    check(unsafe {
        sys::MPI_T_category_get_info(
            index.raw,
            name_ptr,
            &mut name_len,
            desc_ptr,
            &mut desc_len,
            &mut num_cvars,
            &mut num_pvars,
            &mut num_categories,
        )
    })?;
    Ok(CategoryQuery {
        num_cvars,
        num_pvars,
        num_categories,
        name_len,
        desc_len,
    })
}

macro_rules! category_members {
    ($($(#[$attr:meta])* $name:ident => $mpi:path;)*) => {$(
        $(#[$attr])*
        #[inline]
        pub(crate) fn $name<L: Level>(
            _init: &TInit<L>,
            index: Index<Category>,
            out: &mut [c_int],
        ) -> Result<()> {
            // SAFETY: MPI_T is initialised while `_init` lives; the index is below the count;
            // `out` holds the number of ints passed, and MPI writes at most that many.
            check(unsafe { $mpi(index.raw, c_len(out.len())?, out.as_mut_ptr()) })
        }
    )*};
}

category_members! {
    /// `MPI_T_category_get_cvars`: the first `out.len()` member control variables.
    category_get_cvars => sys::MPI_T_category_get_cvars;
    /// `MPI_T_category_get_pvars`: the first `out.len()` member performance variables.
    category_get_pvars => sys::MPI_T_category_get_pvars;
    /// `MPI_T_category_get_categories`: the first `out.len()` subcategories.
    category_get_categories => sys::MPI_T_category_get_categories;
    /// `MPI_T_category_get_events`: the first `out.len()` member event types.
    category_get_events => esys::MPI_T_category_get_events;
}

/// `MPI_T_category_get_num_events`: the number of event types in a category.
#[inline]
pub(crate) fn category_get_num_events<L: Level>(
    _init: &TInit<L>,
    index: Index<Category>,
) -> Result<c_int> {
    let mut n = 0;
    // SAFETY: MPI_T is initialised; the index is below the count; valid out-pointer.
    check(unsafe { esys::MPI_T_category_get_num_events(index.raw, &mut n) })?;
    Ok(n)
}

macro_rules! get_index {
    ($($(#[$attr:meta])* $name:ident => $mpi:path;)*) => {$(
        $(#[$attr])*
        #[inline]
        pub(crate) fn $name<L: Level>(_init: &TInit<L>, name: &CStr) -> Result<c_int> {
            let mut index = -1;
            // SAFETY: MPI_T is initialised while `_init` lives; `name` is NUL-terminated and
            // alive for the call; `index` is a valid out-pointer.
            check(unsafe { $mpi(name.as_ptr(), &mut index) })?;
            Ok(index)
        }
    )*};
}

get_index! {
    /// `MPI_T_cvar_get_index`: the index of the control variable called `name`.
    cvar_get_index => sys::MPI_T_cvar_get_index;
    /// `MPI_T_category_get_index`: the index of the category called `name`.
    category_get_index => sys::MPI_T_category_get_index;
    /// `MPI_T_event_get_index`: the index of the event type called `name`.
    event_get_index => esys::MPI_T_event_get_index;
}

/// `MPI_T_pvar_get_index`: the index of the performance variable called `name` in `class` (a
/// raw class constant).
#[inline]
pub(crate) fn pvar_get_index<L: Level>(
    _init: &TInit<L>,
    name: &CStr,
    class: c_int,
) -> Result<c_int> {
    let mut index = -1;
    // SAFETY: as in `cvar_get_index`.
    check(unsafe { sys::MPI_T_pvar_get_index(name.as_ptr(), class, &mut index) })?;
    Ok(index)
}

// ---------------------------------------------------------------------------------------------
// Objects that variables and event types are bound to (MPI-4.1 §16.3.2).

/// A raw MPI object handle and its kind, as MPI_T's `obj_handle` argument points to it.
#[derive(Clone, Copy, Debug)]
pub struct RawObject(Raw);

#[derive(Clone, Copy, Debug)]
enum Raw {
    NoObject,
    Comm(sys::MPI_Comm),
    Datatype(sys::MPI_Datatype),
    Errhandler(sys::MPI_Errhandler),
    File(sys::MPI_File),
    Group(sys::MPI_Group),
    Op(sys::MPI_Op),
    Request(sys::MPI_Request),
    Win(sys::MPI_Win),
    Message(sys::MPI_Message),
    Info(sys::MPI_Info),
}

macro_rules! raw_ctor {
    ($($(#[$doc:meta])* $fn:ident($ty:ty) => $v:ident),* $(,)?) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// `handle` must be a valid MPI object of this kind that stays alive (not freed) for as
        /// long as any MPI_T handle allocated with it.
        pub unsafe fn $fn(handle: $ty) -> RawObject {
            RawObject(Raw::$v(handle))
        }
    )*};
}

impl RawObject {
    /// No object: for variables whose binding is [`Bind::NoObject`].
    pub const NO_OBJECT: RawObject = RawObject(Raw::NoObject);

    raw_ctor! {
        /// A communicator (`MPI_T_BIND_MPI_COMM`).
        comm(sys::MPI_Comm) => Comm,
        /// A datatype (`MPI_T_BIND_MPI_DATATYPE`).
        datatype(sys::MPI_Datatype) => Datatype,
        /// An error handler (`MPI_T_BIND_MPI_ERRHANDLER`).
        errhandler(sys::MPI_Errhandler) => Errhandler,
        /// A file (`MPI_T_BIND_MPI_FILE`).
        file(sys::MPI_File) => File,
        /// A group (`MPI_T_BIND_MPI_GROUP`).
        group(sys::MPI_Group) => Group,
        /// A reduction operation (`MPI_T_BIND_MPI_OP`).
        op(sys::MPI_Op) => Op,
        /// A request (`MPI_T_BIND_MPI_REQUEST`).
        request(sys::MPI_Request) => Request,
        /// A window (`MPI_T_BIND_MPI_WIN`).
        win(sys::MPI_Win) => Win,
        /// A message (`MPI_T_BIND_MPI_MESSAGE`).
        message(sys::MPI_Message) => Message,
        /// An info object (`MPI_T_BIND_MPI_INFO`).
        info(sys::MPI_Info) => Info,
    }

    /// The kind of object.
    pub fn bind(&self) -> Bind {
        match self.0 {
            Raw::NoObject => Bind::NoObject,
            Raw::Comm(_) => Bind::Comm,
            Raw::Datatype(_) => Bind::Datatype,
            Raw::Errhandler(_) => Bind::Errhandler,
            Raw::File(_) => Bind::File,
            Raw::Group(_) => Bind::Group,
            Raw::Op(_) => Bind::Op,
            Raw::Request(_) => Bind::Request,
            Raw::Win(_) => Bind::Win,
            Raw::Message(_) => Bind::Message,
            Raw::Info(_) => Bind::Info,
        }
    }

    /// The object's kind and its handle's bits: equal for the same live object, so a tool can
    /// find the MPI_T handles it allocated for it (integers in MPICH, pointers in Open MPI).
    pub(crate) fn identity(&self) -> (Bind, u64) {
        fn b<T: HandleBits>(h: T) -> u64 {
            h.bits()
        }
        let bits = match self.0 {
            Raw::NoObject => 0,
            Raw::Comm(h) => b(h),
            Raw::Datatype(h) => b(h),
            Raw::Errhandler(h) => b(h),
            Raw::File(h) => b(h),
            Raw::Group(h) => b(h),
            Raw::Op(h) => b(h),
            Raw::Request(h) => b(h),
            Raw::Win(h) => b(h),
            Raw::Message(h) => b(h),
            Raw::Info(h) => b(h),
        };
        (self.bind(), bits)
    }

    /// Calls `f` with the `void *obj_handle` MPI_T takes: a pointer to a copy of the handle
    /// (NULL for no object), valid for the duration of `f`.
    fn with_ptr<R>(mut self, f: impl FnOnce(*mut c_void) -> R) -> R {
        fn p<T>(h: &mut T) -> *mut c_void {
            (h as *mut T).cast()
        }
        match &mut self.0 {
            Raw::NoObject => f(std::ptr::null_mut()),
            Raw::Comm(h) => f(p(h)),
            Raw::Datatype(h) => f(p(h)),
            Raw::Errhandler(h) => f(p(h)),
            Raw::File(h) => f(p(h)),
            Raw::Group(h) => f(p(h)),
            Raw::Op(h) => f(p(h)),
            Raw::Request(h) => f(p(h)),
            Raw::Win(h) => f(p(h)),
            Raw::Message(h) => f(p(h)),
            Raw::Info(h) => f(p(h)),
        }
    }

    /// `self` after checking its kind against a binding MPI reported (a raw constant).
    fn bound_as(self, bind: c_int) -> Result<RawObject> {
        self.check(Bind::from_raw(bind)?)?;
        Ok(self)
    }
}

/// The bytes of a handle as a number: an `int` or a newtype of one (MPICH), a pointer (Open MPI).
trait HandleBits: Copy {
    fn bits(self) -> u64 {
        const { assert!(size_of::<Self>() <= 8) };
        let mut out = [0u8; 8];
        // SAFETY: every MPI handle type is an integer, a pointer or a one-field newtype of one:
        // no padding, every byte initialised, at most 8 bytes (asserted above); `self` lives
        // for the borrow.
        let bytes = unsafe {
            std::slice::from_raw_parts((&self as *const Self).cast::<u8>(), size_of::<Self>())
        };
        out[..bytes.len()].copy_from_slice(bytes);
        u64::from_ne_bytes(out)
    }
}

/// The bits of a datatype handle, for hashing: a newtype of an int or pointer in rsmpi's
/// bindings, a pointer in the ABI's.
#[inline(always)]
pub(crate) fn datatype_bits(h: sys::MPI_Datatype) -> u64 {
    h.bits()
}

impl HandleBits for sys::MPI_Comm {}
impl HandleBits for sys::MPI_Datatype {}
impl HandleBits for sys::MPI_Errhandler {}
impl HandleBits for sys::MPI_File {}
impl HandleBits for sys::MPI_Group {}
impl HandleBits for sys::MPI_Op {}
impl HandleBits for sys::MPI_Request {}
impl HandleBits for sys::MPI_Win {}
impl HandleBits for sys::MPI_Message {}
impl HandleBits for sys::MPI_Info {}

// rsmpi's objects: the native build only (rsmpi does not build against the ABI header).
#[cfg(not(mpit_abi))]
macro_rules! rsmpi_object {
    ($($ctor:ident: $($ty:ty),+;)*) => {$($(
        impl MpiObject for $ty {
            fn raw_object(&self) -> RawObject {
                // SAFETY: an rsmpi object holds a live handle of this kind while it exists
                // (`AsRaw` is rsmpi's contract for that), and MPI_T handles allocated with it
                // borrow it.
                unsafe { RawObject::$ctor(self.as_raw()) }
            }
        }
    )+)*};
}

#[cfg(not(mpit_abi))]
rsmpi_object! {
    comm: mpi::topology::SimpleCommunicator, mpi::topology::InterCommunicator,
        mpi::topology::CartesianCommunicator;
    group: mpi::topology::UserGroup, mpi::topology::SystemGroup;
    datatype: mpi::datatype::UserDatatype, mpi::datatype::DatatypeRef<'_>;
    op: mpi::collective::SystemOperation;
    message: mpi::point_to_point::Message;
}

#[cfg(not(mpit_abi))]
impl<'a, D: ?Sized, S: mpi::request::Scope<'a>> MpiObject for mpi::request::Request<'a, D, S> {
    fn raw_object(&self) -> RawObject {
        // SAFETY: as for the types above; a request is live until completed, which consumes it.
        unsafe { RawObject::request(self.as_raw()) }
    }
}

// ---------------------------------------------------------------------------------------------
// Info objects (MPI-4.1 §10).

/// An owned `MPI_Info`, or `MPI_INFO_NULL`; freed on drop (`MPI_Info_free`).
pub(crate) struct RawInfo(sys::MPI_Info);

impl std::fmt::Debug for RawInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl RawInfo {
    /// The raw handle, valid while `self` lives.
    #[inline]
    pub(crate) fn as_raw(&self) -> sys::MPI_Info {
        self.0
    }

    /// Whether this is `MPI_INFO_NULL`.
    #[inline]
    pub(crate) fn is_null(&self) -> bool {
        self.0 == sys::MPI_INFO_NULL
    }
}

impl Drop for RawInfo {
    fn drop(&mut self) {
        if !self.is_null() {
            // SAFETY: an info handle this value owns, freed once. A failure cannot be
            // reported from drop.
            let _ = unsafe { sys::MPI_Info_free(&mut self.0) };
        }
    }
}

/// `MPI_Info_create`: an empty info object.
#[inline]
pub(crate) fn info_create() -> Result<RawInfo> {
    let mut raw = sys::MPI_INFO_NULL;
    // SAFETY: valid out-pointer; MPI-4 allows info calls before MPI_Init (the caller refuses
    // the implementations that abort there).
    check(unsafe { sys::MPI_Info_create(&mut raw) })?;
    Ok(RawInfo(raw))
}

/// `MPI_Info_set(key, value)`.
#[inline]
pub(crate) fn info_set(info: &mut RawInfo, key: &CStr, value: &CStr) -> Result<()> {
    // SAFETY: a live info handle (owned by `info`); NUL-terminated strings alive for the call.
    check(unsafe { sys::MPI_Info_set(info.0, key.as_ptr(), value.as_ptr()) })
}

/// `MPI_Info_get_valuelen`: the length of `key`'s value, `None` where it is not set.
#[inline]
pub(crate) fn info_get_valuelen(info: &RawInfo, key: &CStr) -> Result<Option<c_int>> {
    let (mut len, mut flag): (c_int, c_int) = (0, 0);
    // SAFETY: a live info handle; NUL-terminated key; valid out-pointers.
    check(unsafe { sys::MPI_Info_get_valuelen(info.0, key.as_ptr(), &mut len, &mut flag) })?;
    Ok((flag != 0).then_some(len))
}

/// `MPI_Info_get`: `key`'s value into `buf` (at most `buf.len() - 1` bytes and a NUL);
/// whether it is set.
#[inline]
pub(crate) fn info_get(info: &RawInfo, key: &CStr, buf: &mut [c_char]) -> Result<bool> {
    let valuelen = c_len(buf.len().checked_sub(1).ok_or(Error::size_mismatch(1, 0))?)?;
    let mut flag = 0;
    // SAFETY: a live info handle; NUL-terminated key; `buf` holds `valuelen + 1` bytes, and MPI
    // writes at most `valuelen` and a NUL; valid out-pointer.
    check(unsafe {
        sys::MPI_Info_get(info.0, key.as_ptr(), valuelen, buf.as_mut_ptr(), &mut flag)
    })?;
    Ok(flag != 0)
}

/// `MPI_Info_get_nkeys`.
#[inline]
pub(crate) fn info_get_nkeys(info: &RawInfo) -> Result<c_int> {
    let mut n = 0;
    // SAFETY: a live info handle; valid out-pointer.
    check(unsafe { sys::MPI_Info_get_nkeys(info.0, &mut n) })?;
    Ok(n)
}

/// `MPI_Info_get_nthkey`: key `n` into `buf`, which must hold `MPI_MAX_INFO_KEY + 1` bytes.
#[inline]
pub(crate) fn info_get_nthkey(info: &RawInfo, n: c_int, buf: &mut [c_char]) -> Result<()> {
    holds(buf, sys::MPI_MAX_INFO_KEY as usize + 1)?;
    // SAFETY: a live info handle; `buf` holds MPI_MAX_INFO_KEY + 1 bytes (checked), what the
    // standard says a key may take.
    check(unsafe { sys::MPI_Info_get_nthkey(info.0, n, buf.as_mut_ptr()) })
}

// ---------------------------------------------------------------------------------------------
// Control variable handles (MPI-4.1 §16.3.6).

/// A control variable handle (`MPI_T_cvar_handle_alloc`), freed on drop
/// (`MPI_T_cvar_handle_free`); it borrows the initialisation it was allocated under.
pub(crate) struct RawCvarHandle<'m, L: Level> {
    raw: sys::MPI_T_cvar_handle,
    datatype: Datatype,
    /// Bytes MPI reads and writes: the count times the datatype's size.
    bytes: usize,
    _init: PhantomData<&'m TInit<L>>,
}

// SAFETY: at MPI_THREAD_MULTIPLE MPI_T calls may come from any thread at any time, and the
// handle is an opaque token of the library.
unsafe impl Send for RawCvarHandle<'_, Multiple> {}
// SAFETY: as above; every entry taking the handle by reference makes one MPI_T call.
unsafe impl Sync for RawCvarHandle<'_, Multiple> {}

/// `MPI_T_cvar_handle_alloc` of control variable `index` for `obj`, whose kind must be the
/// variable's binding ([`Error::BindMismatch`]): the handle and its count of elements.
pub(crate) fn cvar_handle_alloc<'m, L: Level>(
    init: &'m TInit<L>,
    index: Index<Cvar>,
    obj: RawObject,
) -> Result<(RawCvarHandle<'m, L>, usize)> {
    let q = cvar_get_info(init, index, None, None)?;
    let obj = obj.bound_as(q.bind)?;
    let (mut raw, mut count) = (sys::MPI_T_CVAR_HANDLE_NULL, 0);
    // SAFETY: MPI_T is initialised while `init` lives; the index is below the count; `ptr` is
    // NULL for no object or points to a copy of a handle of the kind the variable is bound to
    // (checked), alive while MPI_T handles allocated with it are (`RawObject`'s contract);
    // valid out-pointers.
    check(obj.with_ptr(|ptr| unsafe {
        sys::MPI_T_cvar_handle_alloc(index.raw, ptr, &mut raw, &mut count)
    }))?;
    let mut handle = RawCvarHandle {
        raw,
        datatype: Datatype::Byte,
        bytes: 0,
        _init: PhantomData,
    };
    let count = non_negative(count)?;
    (handle.datatype, handle.bytes) = byte_len(count, q.datatype)?;
    Ok((handle, count))
}

/// `MPI_T_cvar_read` into `buf`, which must hold the variable's bytes.
#[inline(always)]
pub(crate) fn cvar_read<T: Scalar, L: Level>(
    h: &RawCvarHandle<'_, L>,
    buf: &mut [T],
) -> Result<()> {
    fits(buf, h.bytes, h.datatype)?;
    // SAFETY: a live handle (owned by `h`, which borrows the initialisation); `buf` holds the
    // bytes MPI writes, of a type that takes any value of the datatype (both checked).
    check(unsafe { sys::MPI_T_cvar_read(h.raw, buf.as_mut_ptr().cast()) })
}

/// `MPI_T_cvar_write` from `buf`, which must hold the variable's bytes.
#[inline]
pub(crate) fn cvar_write<T: Scalar, L: Level>(h: &RawCvarHandle<'_, L>, buf: &[T]) -> Result<()> {
    holds(buf, h.bytes)?;
    // SAFETY: a live handle; `buf` holds the bytes MPI reads (checked), and MPI only reads
    // them (the C prototype lacks `const` in some implementations).
    check(unsafe { sys::MPI_T_cvar_write(h.raw, buf.as_ptr().cast::<c_void>().cast_mut()) })
}

impl<L: Level> Drop for RawCvarHandle<'_, L> {
    fn drop(&mut self) {
        // SAFETY: allocated by MPI_T_cvar_handle_alloc and freed once, here; the initialisation
        // outlives it (borrowed). A failure cannot be reported from drop.
        let _ = unsafe { sys::MPI_T_cvar_handle_free(&mut self.raw) };
    }
}

// ---------------------------------------------------------------------------------------------
// Performance experiment sessions and performance variable handles (MPI-4.1 §16.3.7).

/// A performance experiment session (`MPI_T_pvar_session_create`), freed on drop
/// (`MPI_T_pvar_session_free`); it borrows the initialisation it was created under.
pub(crate) struct RawSession<'m, L: Level> {
    raw: sys::MPI_T_pvar_session,
    _init: PhantomData<&'m TInit<L>>,
}

// SAFETY: as for `RawCvarHandle`: at MPI_THREAD_MULTIPLE any thread may call at any time, and
// the session is an opaque token of the library.
unsafe impl Send for RawSession<'_, Multiple> {}
// SAFETY: as above.
unsafe impl Sync for RawSession<'_, Multiple> {}

/// `MPI_T_pvar_session_create`.
#[inline]
pub(crate) fn pvar_session_create<L: Level>(_init: &TInit<L>) -> Result<RawSession<'_, L>> {
    let mut raw = sys::MPI_T_PVAR_SESSION_NULL;
    // SAFETY: MPI_T is initialised while `_init` lives; valid out-pointer.
    check(unsafe { sys::MPI_T_pvar_session_create(&mut raw) })?;
    Ok(RawSession {
        raw,
        _init: PhantomData,
    })
}

impl<L: Level> Drop for RawSession<'_, L> {
    fn drop(&mut self) {
        // SAFETY: created by MPI_T_pvar_session_create and freed once, here; its handles
        // borrowed it and are gone. A failure cannot be reported from drop.
        let _ = unsafe { sys::MPI_T_pvar_session_free(&mut self.raw) };
    }
}

macro_rules! all_handles {
    ($($(#[$doc:meta])* $name:ident => $mpi:ident;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name<L: Level>(s: &RawSession<'_, L>) -> Result<()> {
            #[cfg(mpit_abi)]
            crate::quirks::guard(&crate::quirks::MPICH_ABI_PVAR_ALL_HANDLES)?;
            // SAFETY: a live session; MPI_T_PVAR_ALL_HANDLES is valid for start, stop and reset.
            check(unsafe { sys::$mpi(s.raw, sys::mpi_t_pvar_all_handles()) })
        }
    )*};
}

all_handles! {
    /// `MPI_T_pvar_start` of `MPI_T_PVAR_ALL_HANDLES`.
    pvar_start_all => MPI_T_pvar_start;
    /// `MPI_T_pvar_stop` of `MPI_T_PVAR_ALL_HANDLES`.
    pvar_stop_all => MPI_T_pvar_stop;
    /// `MPI_T_pvar_reset` of `MPI_T_PVAR_ALL_HANDLES`.
    pvar_reset_all => MPI_T_pvar_reset;
}

/// A performance variable handle (`MPI_T_pvar_handle_alloc`), freed on drop
/// (`MPI_T_pvar_handle_free`); it borrows its session.
pub(crate) struct RawPvarHandle<'s, L: Level> {
    session: sys::MPI_T_pvar_session,
    raw: sys::MPI_T_pvar_handle,
    datatype: Datatype,
    /// Bytes MPI reads and writes: the count times the datatype's size.
    bytes: usize,
    _session: PhantomData<&'s RawSession<'s, L>>,
}

// SAFETY: as for `RawSession`.
unsafe impl Send for RawPvarHandle<'_, Multiple> {}
// SAFETY: as for `RawSession`; every entry taking the handle by reference makes one MPI_T call.
unsafe impl Sync for RawPvarHandle<'_, Multiple> {}

/// `MPI_T_pvar_handle_alloc` of performance variable `index` in `session` for `obj`, whose
/// kind must be the variable's binding ([`Error::BindMismatch`]): the handle and its count.
pub(crate) fn pvar_handle_alloc<'s, L: Level>(
    init: &TInit<L>,
    session: &'s RawSession<'_, L>,
    index: Index<Pvar>,
    obj: RawObject,
) -> Result<(RawPvarHandle<'s, L>, usize)> {
    let q = pvar_get_info(init, index, None, None)?;
    let obj = obj.bound_as(q.bind)?;
    let (mut raw, mut count) = (sys::MPI_T_PVAR_HANDLE_NULL, 0);
    // SAFETY: a live session; the index is below the count; `ptr` as in `cvar_handle_alloc`;
    // valid out-pointers.
    check(obj.with_ptr(|ptr| unsafe {
        sys::MPI_T_pvar_handle_alloc(session.raw, index.raw, ptr, &mut raw, &mut count)
    }))?;
    let mut handle = RawPvarHandle {
        session: session.raw,
        raw,
        datatype: Datatype::Byte,
        bytes: 0,
        _session: PhantomData,
    };
    let count = non_negative(count)?;
    (handle.datatype, handle.bytes) = byte_len(count, q.datatype)?;
    Ok((handle, count))
}

macro_rules! pvar_action {
    ($($(#[$doc:meta])* $name:ident => $mpi:ident;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name<L: Level>(h: &RawPvarHandle<'_, L>) -> Result<()> {
            // SAFETY: a live handle in its live session (borrowed).
            check(unsafe { sys::$mpi(h.session, h.raw) })
        }
    )*};
}

pvar_action! {
    /// `MPI_T_pvar_start`.
    pvar_start => MPI_T_pvar_start;
    /// `MPI_T_pvar_stop`.
    pvar_stop => MPI_T_pvar_stop;
    /// `MPI_T_pvar_reset`.
    pvar_reset => MPI_T_pvar_reset;
}

/// `MPI_T_pvar_read` into `buf`, which must hold the variable's bytes.
#[inline(always)]
pub(crate) fn pvar_read<T: Scalar, L: Level>(
    h: &RawPvarHandle<'_, L>,
    buf: &mut [T],
) -> Result<()> {
    fits(buf, h.bytes, h.datatype)?;
    // SAFETY: a live handle in its live session; `buf` holds the bytes MPI writes, of a type
    // that takes any value of the datatype (both checked).
    check(unsafe { sys::MPI_T_pvar_read(h.session, h.raw, buf.as_mut_ptr().cast()) })
}

/// `MPI_T_pvar_readreset` into `buf`, which must hold the variable's bytes.
#[inline(always)]
pub(crate) fn pvar_readreset<T: Scalar, L: Level>(
    h: &RawPvarHandle<'_, L>,
    buf: &mut [T],
) -> Result<()> {
    fits(buf, h.bytes, h.datatype)?;
    // SAFETY: as in `pvar_read`.
    check(unsafe { sys::MPI_T_pvar_readreset(h.session, h.raw, buf.as_mut_ptr().cast()) })
}

/// `MPI_T_pvar_write` from `buf`, which must hold the variable's bytes.
#[inline]
pub(crate) fn pvar_write<T: Scalar, L: Level>(h: &RawPvarHandle<'_, L>, buf: &[T]) -> Result<()> {
    holds(buf, h.bytes)?;
    // SAFETY: a live handle in its live session; `buf` holds the bytes MPI reads (checked),
    // and MPI only reads them.
    check(unsafe {
        sys::MPI_T_pvar_write(h.session, h.raw, buf.as_ptr().cast::<c_void>().cast_mut())
    })
}

impl<L: Level> RawPvarHandle<'_, L> {
    /// Bytes a read writes: the count times the datatype's size.
    #[inline(always)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// A performance variable handle whose variable takes at most 8 bytes, checked once when it
/// is made: read into a `u64` with no check of the size per read (the profiler's call mode
/// reads dozens of them at every MPI call; the check was a load, a compare and a branch each).
pub(crate) struct WordPvarHandle<'s, L: Level>(RawPvarHandle<'s, L>);

impl<'s, L: Level> WordPvarHandle<'s, L> {
    /// `h` as a word handle if its variable takes at most 8 bytes, else `h` back.
    pub(crate) fn new(h: RawPvarHandle<'s, L>) -> std::result::Result<Self, RawPvarHandle<'s, L>> {
        if h.bytes <= size_of::<u64>() {
            Ok(Self(h))
        } else {
            Err(h)
        }
    }

    /// The handle, for everything but the word read.
    #[inline(always)]
    pub(crate) fn handle(&self) -> &RawPvarHandle<'s, L> {
        &self.0
    }

    /// `MPI_T_pvar_read` into the first bytes of `word` (the rest as they were): whether it
    /// succeeded, no more (no branch: a loop of reads ANDs them and checks once).
    #[inline(always)]
    pub(crate) fn read_ok(&self, word: &mut u64) -> bool {
        // SAFETY: a live handle in its live session (borrowed); its variable takes at most the
        // 8 bytes of `word` (checked in `new`; a handle's size never changes), and a `u64`
        // takes any bytes MPI writes.
        let code = unsafe {
            sys::MPI_T_pvar_read(self.0.session, self.0.raw, std::ptr::from_mut(word).cast())
        };
        code == sys::MPI_SUCCESS
    }
}

impl<L: Level> Drop for RawPvarHandle<'_, L> {
    fn drop(&mut self) {
        // SAFETY: allocated in this session, which outlives the handle (borrowed), and freed
        // once, here. A failure cannot be reported from drop.
        let _ = unsafe { sys::MPI_T_pvar_handle_free(self.session, &mut self.raw) };
    }
}

pub(crate) use events::*;

/// Event types, sources and registrations with their callbacks (MPI-4.1 §16.3.8).
mod events {
    use std::any::Any;
    use std::ffi::{c_int, c_void};
    use std::marker::PhantomData;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::ptr;
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::Duration;

    use super::esys as sys;
    use mpit_core::{Datatype, Error, ErrorClass, EventElement, Result, Scalar};

    use super::{
        Event, Index, RawEnum, RawInfo, RawObject, Source, TInit, enum_handle, fits, holds,
    };
    use crate::init::level::Level;
    use crate::quirks;
    use crate::raw::{RawConstant, c_len, check, non_negative};

    /// A string argument of the event and source queries: the buffer, or for a length query
    /// a 1-byte buffer with length 0, which the convention treats like NULL (MPI-4.1
    /// §16.3.3) and which MPICH accepts where it refuses NULL (`MPI_T_source_get_info`
    /// answers `MPI_ERR_ARG` to a NULL name or description).
    fn str_arg_nonnull<'b>(
        buf: Option<&'b mut [u8]>,
        dummy: &'b mut u8,
    ) -> Result<(*mut std::ffi::c_char, c_int)> {
        Ok(match buf {
            Some(b) => (b.as_mut_ptr().cast(), c_len(b.len())?),
            None => ((dummy as *mut u8).cast(), 0),
        })
    }

    /// What `MPI_T_event_get_info` returns besides the strings and the element arrays.
    pub(crate) struct EventQuery<'m> {
        pub(crate) name_len: c_int,
        pub(crate) desc_len: c_int,
        pub(crate) verbosity: c_int,
        pub(crate) num: c_int,
        /// `None` for `MPI_T_ENUM_NULL`, and on MPICH, which never initialises it
        /// ([`quirks::MPICH_EVENT_ENUMTYPE`]: using it segfaults).
        pub(crate) enumtype: Option<RawEnum<'m>>,
        pub(crate) bind: c_int,
    }

    /// One call of `MPI_T_event_get_info`.
    fn event_info_call(
        index: Index<Event>,
        name: Option<&mut [u8]>,
        desc: Option<&mut [u8]>,
        elements: Option<(&mut [sys::MPI_Datatype], &mut [sys::MPI_Aint])>,
        info: Option<&mut sys::MPI_Info>,
    ) -> Result<(EventQuery<'static>, sys::MPI_T_enum)> {
        let (mut name_dummy, mut desc_dummy) = (0u8, 0u8);
        let (name_ptr, mut name_len) = str_arg_nonnull(name, &mut name_dummy)?;
        let (desc_ptr, mut desc_len) = str_arg_nonnull(desc, &mut desc_dummy)?;
        let (mut verbosity, mut bind) = (0, 0);
        let mut enumtype = sys::MPI_T_ENUM_NULL;
        let (dts, disps, mut num) = match elements {
            Some((d, a)) => (d.as_mut_ptr(), a.as_mut_ptr(), c_len(d.len().min(a.len()))?),
            None => (ptr::null_mut(), ptr::null_mut(), 0),
        };
        // SAFETY: MPI_T is initialised (the callers borrow the initialisation); the index is
        // below the count; string buffers valid for their lengths (or a 1-byte dummy with 0);
        // the element arrays hold `num` entries (or are NULL, which the standard says are
        // ignored); the info argument is NULL (ignored, MPI-4.1 §16.3.8.3) or a valid
        // out-pointer whose new object the caller owns; the rest are valid out-pointers.
        check(unsafe {
            sys::MPI_T_event_get_info(
                index.raw,
                name_ptr,
                &mut name_len,
                &mut verbosity,
                dts,
                disps,
                &mut num,
                &mut enumtype,
                info.map_or(ptr::null_mut(), |i| i as *mut _),
                desc_ptr,
                &mut desc_len,
                &mut bind,
            )
        })?;
        let q = EventQuery {
            name_len,
            desc_len,
            verbosity,
            num,
            enumtype: None,
            bind,
        };
        Ok((q, enumtype))
    }

    /// `MPI_T_event_get_info` of a checked index, with optional name and description buffers.
    #[inline]
    pub(crate) fn event_get_info<'m, L: Level>(
        _init: &'m TInit<L>,
        index: Index<Event>,
        name: Option<&mut [u8]>,
        desc: Option<&mut [u8]>,
    ) -> Result<EventQuery<'m>> {
        let (q, enumtype) = event_info_call(index, name, desc, None, None)?;
        Ok(EventQuery {
            enumtype: if quirks::applies(&quirks::MPICH_EVENT_ENUMTYPE) {
                None
            } else {
                enum_handle(enumtype)
            },
            ..q
        })
    }

    /// `MPI_T_event_get_info` for the first `num` elements (datatypes and displacements) of
    /// event type `index`.
    // `MPI_Aint` is `ptrdiff_t` (isize) in Open MPI's header, `long` in MPICH's.
    #[allow(clippy::unnecessary_cast)]
    pub(crate) fn event_get_elements<L: Level>(
        _init: &TInit<L>,
        index: Index<Event>,
        num: c_int,
    ) -> Result<Vec<EventElement>> {
        let n = non_negative(num)?;
        let mut dts = vec![sys::MPI_DATATYPE_NULL; n];
        let mut disps: Vec<sys::MPI_Aint> = vec![0; n];
        event_info_call(index, None, None, Some((&mut dts, &mut disps)), None)?;
        dts.iter()
            .zip(&disps)
            .map(|(&dt, &d)| {
                Ok(EventElement {
                    datatype: Datatype::from_raw(dt)?,
                    displacement: d as isize,
                })
            })
            .collect()
    }

    /// `MPI_T_event_get_info` for the info hints MPI attaches to event type `index`.
    #[inline]
    pub(crate) fn event_get_hints<L: Level>(
        _init: &TInit<L>,
        index: Index<Event>,
    ) -> Result<RawInfo> {
        let mut raw = RawInfo(sys::MPI_INFO_NULL);
        event_info_call(index, None, None, None, Some(&mut raw.0))?;
        Ok(raw)
    }

    /// What `MPI_T_source_get_info` returns besides the strings.
    pub(crate) struct SourceQuery {
        pub(crate) name_len: c_int,
        pub(crate) desc_len: c_int,
        pub(crate) ordering: c_int,
        pub(crate) ticks_per_second: sys::MPI_Count,
        pub(crate) max_ticks: sys::MPI_Count,
    }

    /// One call of `MPI_T_source_get_info`.
    fn source_info_call(
        index: Index<Source>,
        name: Option<&mut [u8]>,
        desc: Option<&mut [u8]>,
        info: Option<&mut sys::MPI_Info>,
    ) -> Result<SourceQuery> {
        let (mut name_dummy, mut desc_dummy) = (0u8, 0u8);
        let (name_ptr, mut name_len) = str_arg_nonnull(name, &mut name_dummy)?;
        let (desc_ptr, mut desc_len) = str_arg_nonnull(desc, &mut desc_dummy)?;
        let mut ordering: sys::MPI_T_source_order = 0;
        let (mut tps, mut max): (sys::MPI_Count, sys::MPI_Count) = (0, 0);
        // SAFETY: as in `event_info_call`.
        check(unsafe {
            sys::MPI_T_source_get_info(
                index.raw,
                name_ptr,
                &mut name_len,
                desc_ptr,
                &mut desc_len,
                &mut ordering,
                &mut tps,
                &mut max,
                info.map_or(ptr::null_mut(), |i| i as *mut _),
            )
        })?;
        Ok(SourceQuery {
            name_len,
            desc_len,
            ordering: ordering as c_int,
            ticks_per_second: tps,
            max_ticks: max,
        })
    }

    /// `MPI_T_source_get_info` of a checked index, with optional name and description buffers.
    #[inline]
    pub(crate) fn source_get_info<L: Level>(
        _init: &TInit<L>,
        index: Index<Source>,
        name: Option<&mut [u8]>,
        desc: Option<&mut [u8]>,
    ) -> Result<SourceQuery> {
        source_info_call(index, name, desc, None)
    }

    /// `MPI_T_source_get_info` for the info hints MPI attaches to source `index`.
    #[inline]
    pub(crate) fn source_get_hints<L: Level>(
        _init: &TInit<L>,
        index: Index<Source>,
    ) -> Result<RawInfo> {
        let mut raw = RawInfo(sys::MPI_INFO_NULL);
        source_info_call(index, None, None, Some(&mut raw.0))?;
        Ok(raw)
    }

    /// `MPI_T_source_get_timestamp`: a current timestamp of source `index`.
    #[inline]
    pub(crate) fn source_get_timestamp<L: Level>(
        _init: &TInit<L>,
        index: Index<Source>,
    ) -> Result<sys::MPI_Count> {
        let mut ts: sys::MPI_Count = 0;
        // SAFETY: MPI_T is initialised; the index is below the count; valid out-pointer.
        check(unsafe { sys::MPI_T_source_get_timestamp(index.raw, &mut ts) })?;
        Ok(ts)
    }

    // -----------------------------------------------------------------------------------------
    // Registrations and callbacks (MPI-4.1 §16.3.8.4–§16.3.8.6), in the style of rusqlite's
    // `functions.rs`/`hooks`: boxed closures as `user_data`, `extern "C"` trampolines with
    // `catch_unwind`, and a destructor that frees the boxes.

    /// The elements of an event type and the bytes `MPI_T_event_copy` writes, queried from
    /// MPI when the registration is allocated: what the event entries check buffers against.
    #[derive(Debug)]
    struct Layout {
        elements: Vec<EventElement>,
        /// `None` where a displacement is negative or the end overflows.
        extent: Option<usize>,
    }

    /// A dropped-event handler: count, source index, callback safety (raw).
    type DroppedFn = dyn Fn(sys::MPI_Count, c_int, sys::MPI_T_cb_safety) + Send + Sync + 'static;

    /// The block MPI holds as `user_data`: the layout, the dropped handler, every closure ever
    /// installed, panic reports, the free flag. Kept alive by an `Arc` whose one count belongs
    /// to MPI until the free callback.
    struct Block {
        layout: Layout,
        /// The dropped handler (null: none), loaded lock-free by its trampoline.
        dropped: AtomicPtr<Box<DroppedFn>>,
        /// Every closure ever installed (each level's `LevelData` box and each dropped
        /// handler), freed with the block: a replaced or removed closure may still be running
        /// on another thread until MPI's free callback.
        graveyard: Mutex<Vec<Grave>>,
        panics: AtomicUsize,
        panic_messages: Mutex<Vec<String>>,
        freed: Mutex<bool>,
        freed_cv: Condvar,
        /// Registered through a [`pool::Slot`]: no free callback comes, the pool's sweep
        /// marks it freed.
        pooled: bool,
    }

    impl std::fmt::Debug for Block {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Shared").finish_non_exhaustive()
        }
    }

    enum Grave {
        /// A `LevelData<F>` box, type-erased with the function that frees it.
        Event(*mut c_void, unsafe fn(*mut c_void)),
        Dropped(*mut Box<DroppedFn>),
    }

    // SAFETY: the raw pointers in the graveyard are boxes of `Send + Sync` closures (or of no
    // closure), only freed in `Drop for Block`.
    unsafe impl Send for Grave {}

    /// What MPI holds as `user_data` for one callback level: the block first (the dropped
    /// handler's trampoline only knows it receives some level's `user_data`), then the
    /// closure, called with static dispatch by `event_trampoline::<F>`.
    #[repr(C)]
    struct LevelData<F> {
        block: *const Block,
        f: F,
    }

    /// Frees a `LevelData<F>` box from the graveyard.
    ///
    /// # Safety
    /// `p` must come from `Box::into_raw(Box<LevelData<F>>)` and be freed once.
    unsafe fn free_level_data<F>(p: *mut c_void) {
        // SAFETY: by the contract above.
        drop(unsafe { Box::from_raw(p as *mut LevelData<F>) });
    }

    impl Drop for Block {
        fn drop(&mut self) {
            let graves =
                std::mem::take(self.graveyard.get_mut().unwrap_or_else(|p| p.into_inner()));
            for g in graves {
                // SAFETY: each pointer came from `Box::into_raw` once and is freed once, here,
                // after MPI's free callback (or after a failed free), when no trampoline can
                // run.
                unsafe {
                    match g {
                        Grave::Event(p, free) => free(p),
                        Grave::Dropped(p) => drop(Box::from_raw(p)),
                    }
                }
            }
        }
    }

    impl Block {
        fn bury(&self, grave: Grave) {
            self.graveyard
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(grave);
        }

        fn record_panic(&self, payload: Box<dyn Any + Send>) {
            self.panics.fetch_add(1, Ordering::Relaxed);
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_owned());
            // try_lock: never block inside a callback context.
            if let Ok(mut v) = self.panic_messages.try_lock() {
                v.push(msg);
            }
        }
    }

    /// One event instance MPI passed to a callback, valid only during that callback.
    #[derive(Clone, Copy)]
    pub(crate) struct EventRef<'cb> {
        raw: sys::MPI_T_event_instance,
        safety: sys::MPI_T_cb_safety,
        layout: &'cb Layout,
    }

    impl<'cb> EventRef<'cb> {
        /// The safety requirement of the invocation's context, as MPI passed it.
        #[inline]
        pub(crate) fn safety(self) -> sys::MPI_T_cb_safety {
            self.safety
        }

        /// The elements of the event type.
        #[inline]
        pub(crate) fn elements(self) -> &'cb [EventElement] {
            &self.layout.elements
        }

        /// Bytes `MPI_T_event_copy` writes (0 where a displacement is negative).
        #[inline]
        pub(crate) fn extent(self) -> usize {
            self.layout.extent.unwrap_or(0)
        }
    }

    /// `MPI_T_event_read` of element `index` into `buf`, which must hold the element.
    #[inline]
    pub(crate) fn event_read<T: Scalar>(
        ev: EventRef<'_>,
        index: usize,
        buf: &mut [T],
    ) -> Result<()> {
        let e = ev.layout.elements.get(index).ok_or(Error::Mpi {
            class: ErrorClass::InvalidIndex,
            code: sys::MPI_T_ERR_INVALID_INDEX,
        })?;
        fits(buf, e.datatype.size(), e.datatype)?;
        // SAFETY: the instance is valid during the callback `ev` borrows; the element exists
        // (its index is below the count MPI reported, so it fits a C int); `buf` holds the
        // element's bytes, of a type that takes any value of its datatype (both checked).
        check(unsafe { sys::MPI_T_event_read(ev.raw, index as c_int, buf.as_mut_ptr().cast()) })
    }

    /// `MPI_T_event_copy` into `buf`, which must hold the event's extent.
    #[inline]
    pub(crate) fn event_copy(ev: EventRef<'_>, buf: &mut [u8]) -> Result<()> {
        holds(buf, ev.layout.extent.ok_or(Error::LengthOverflow)?)?;
        // SAFETY: the instance is valid during the callback; `buf` holds at least the extent
        // MPI writes (checked).
        check(unsafe { sys::MPI_T_event_copy(ev.raw, buf.as_mut_ptr().cast()) })
    }

    /// `MPI_T_event_get_timestamp`.
    #[inline]
    pub(crate) fn event_get_timestamp(ev: EventRef<'_>) -> Result<sys::MPI_Count> {
        let mut ts: sys::MPI_Count = 0;
        // SAFETY: the instance is valid during the callback; valid out-pointer.
        check(unsafe { sys::MPI_T_event_get_timestamp(ev.raw, &mut ts) })?;
        Ok(ts)
    }

    /// `MPI_T_event_get_source`.
    #[inline]
    pub(crate) fn event_get_source(ev: EventRef<'_>) -> Result<c_int> {
        let mut s = 0;
        // SAFETY: the instance is valid during the callback; valid out-pointer.
        check(unsafe { sys::MPI_T_event_get_source(ev.raw, &mut s) })?;
        Ok(s)
    }

    /// What an event stream keeps of one event, in one pass with the return codes tested and
    /// no `Result` built: `MPI_T_event_copy` into `data` if `COPY` (`false` if `data` cannot
    /// hold the extent, MPI failed or `!COPY`), the source (`u32::MAX` if MPI failed or it is
    /// out of range) and the timestamp (0 if MPI failed). The stream's callback calls it on
    /// every event.
    #[inline(always)]
    pub(crate) fn event_capture<const COPY: bool>(
        ev: EventRef<'_>,
        data: &mut [u8],
    ) -> (bool, u32, u64) {
        let copied = match ev.layout.extent {
            // SAFETY: the instance is valid during the callback; `data` holds the extent MPI
            // writes (checked).
            Some(extent) if COPY && extent <= data.len() => unsafe {
                sys::MPI_T_event_copy(ev.raw, data.as_mut_ptr().cast()) == sys::MPI_SUCCESS
            },
            _ => false,
        };
        let (mut source, mut ts): (c_int, sys::MPI_Count) = (0, 0);
        // SAFETY: the instance is valid during the callback; valid out-pointers.
        let source = match unsafe { sys::MPI_T_event_get_source(ev.raw, &mut source) } {
            sys::MPI_SUCCESS if source >= 0 => source as u32,
            _ => u32::MAX,
        };
        // SAFETY: as above.
        let ts = match unsafe { sys::MPI_T_event_get_timestamp(ev.raw, &mut ts) } {
            sys::MPI_SUCCESS if ts >= 0 => ts as u64,
            _ => 0,
        };
        (copied, source, ts)
    }

    /// The event callback MPI calls for a closure of type `F` (one instance per closure type,
    /// so the closure is called directly, not through a vtable).
    unsafe extern "C" fn event_trampoline<F>(
        instance: sys::MPI_T_event_instance,
        _registration: sys::MPI_T_event_registration,
        cb_safety: sys::MPI_T_cb_safety,
        user_data: *mut c_void,
    ) where
        F: Fn(EventRef<'_>) + Send + Sync + 'static,
    {
        // SAFETY: `user_data` is the `LevelData<F>` given at registration, kept (in the
        // graveyard) until the free callback, which cannot run while an invocation is in
        // flight.
        let data = unsafe { &*(user_data as *const LevelData<F>) };
        // SAFETY: its `block` pointer is MPI's `Arc` count, released only in the free
        // callback.
        let block = unsafe { &*data.block };
        call_closure(&data.f, block, instance, cb_safety);
    }

    /// Calls `f` with the instance, catching a panic into `block`'s report.
    #[inline(always)]
    fn call_closure<F>(
        f: &F,
        block: &Block,
        instance: sys::MPI_T_event_instance,
        safety: sys::MPI_T_cb_safety,
    ) where
        F: Fn(EventRef<'_>),
    {
        let ev = EventRef {
            raw: instance,
            safety,
            layout: &block.layout,
        };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(ev))) {
            block.record_panic(p);
        }
    }

    /// The dropped-event handler MPI calls.
    unsafe extern "C" fn dropped_trampoline(
        count: sys::MPI_Count,
        _registration: sys::MPI_T_event_registration,
        source_index: c_int,
        cb_safety: sys::MPI_T_cb_safety,
        user_data: *mut c_void,
    ) {
        if user_data.is_null() {
            return;
        }
        // SAFETY: the user_data of one of this registration's callbacks: a `LevelData` (also
        // for a removed callback: `event_remove_callback` passes a `LevelData<()>`), whose
        // first field (repr(C)) is the block, alive until the free callback.
        let block = unsafe { &**(user_data as *const *const Block) };
        let f = block.dropped.load(Ordering::Acquire);
        if f.is_null() {
            return;
        }
        // SAFETY: a box in the graveyard, freed only with the block.
        let f = unsafe { &**f };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(count, source_index, cb_safety))) {
            block.record_panic(p);
        }
    }

    /// MPI's free callback: from here on no invocation can follow, so MPI's count of the
    /// block is released (freeing every closure unless a [`FreeWait`] still holds it).
    unsafe extern "C" fn free_trampoline(
        _registration: sys::MPI_T_event_registration,
        _cb_safety: sys::MPI_T_cb_safety,
        user_data: *mut c_void,
    ) {
        // SAFETY: `user_data` is the pointer from `Arc::into_raw` in `event_handle_alloc`,
        // handed to MPI_T_event_handle_free once; MPI calls this once.
        let block = unsafe { Arc::from_raw(user_data as *const Block) };
        let _ = catch_unwind(AssertUnwindSafe(|| {
            *block.freed.lock().unwrap_or_else(|p| p.into_inner()) = true;
            block.freed_cv.notify_all();
        }));
        drop(block);
    }

    /// An event-registration handle (`MPI_T_event_handle_alloc`) and the block of closures
    /// MPI calls. Dropping it starts `MPI_T_event_handle_free`; the block is released in
    /// MPI's free callback. Neither `Send` nor `Sync`.
    pub(crate) struct RawRegistration<'m, L: Level> {
        raw: sys::MPI_T_event_registration,
        block: Arc<Block>,
        /// The pointer MPI holds (one `Arc` count), reclaimed by the free callback (null for
        /// a pooled registration).
        user_data: *const Block,
        /// The pool's slot where MPICH's registrations are never freed
        /// ([`quirks::MPICH_EVENT_REGISTRATION_RACE`]).
        slot: Option<&'static pool::Slot>,
        freeing: bool,
        _init: PhantomData<&'m TInit<L>>,
    }

    /// `MPI_T_event_handle_alloc` of event type `index` for `obj` (its kind checked against
    /// the type's binding, [`Error::BindMismatch`]), with optional hints.
    pub(crate) fn event_handle_alloc<'m, L: Level>(
        init: &'m TInit<L>,
        index: Index<Event>,
        obj: RawObject,
        hints: Option<&RawInfo>,
    ) -> Result<RawRegistration<'m, L>> {
        let q = event_get_info(init, index, None, None)?;
        let obj = obj.bound_as(q.bind)?;
        let elements = event_get_elements(init, index, q.num)?;
        let extent = elements.iter().try_fold(0usize, |end, e| {
            let start = usize::try_from(e.displacement).ok()?;
            Some(end.max(start.checked_add(e.datatype.size())?))
        });
        if pool::applies() {
            let layout = Layout { elements, extent };
            return pool::alloc(index.raw, obj, hints, layout).map(|(slot, block)| {
                RawRegistration {
                    raw: slot.raw,
                    block,
                    user_data: ptr::null(),
                    slot: Some(slot),
                    freeing: false,
                    _init: PhantomData,
                }
            });
        }
        let mut raw = ptr::null_mut();
        let hints = hints.map_or(sys::MPI_INFO_NULL, RawInfo::as_raw);
        // SAFETY: MPI_T is initialised while `init` lives; the index is below the count; `p`
        // as in `cvar_handle_alloc`; a live info object or MPI_INFO_NULL; valid out-pointer.
        check(obj.with_ptr(|p| unsafe {
            sys::MPI_T_event_handle_alloc(index.raw, p, hints, &mut raw)
        }))?;
        let block = Arc::new(Block {
            layout: Layout { elements, extent },
            dropped: AtomicPtr::new(ptr::null_mut()),
            graveyard: Mutex::new(Vec::new()),
            panics: AtomicUsize::new(0),
            panic_messages: Mutex::new(Vec::new()),
            freed: Mutex::new(false),
            freed_cv: Condvar::new(),
            pooled: false,
        });
        let user_data = Arc::into_raw(block.clone());
        Ok(RawRegistration {
            raw,
            block,
            user_data,
            slot: None,
            freeing: false,
            _init: PhantomData,
        })
    }

    /// `MPI_T_event_register_callback` of `f` for contexts up to `safety` (raw). The closure is
    /// kept until the free callback, since MPI may still call it after a replacement.
    pub(crate) fn event_register_callback<F, L: Level>(
        reg: &RawRegistration<'_, L>,
        safety: sys::MPI_T_cb_safety,
        f: F,
    ) -> Result<()>
    where
        F: Fn(EventRef<'_>) + Send + Sync + 'static,
    {
        if let Some(slot) = reg.slot {
            return pool::register_callback(slot, &reg.block, safety, f);
        }
        let data = Box::into_raw(Box::new(LevelData {
            block: reg.user_data,
            f,
        }));
        reg.block
            .bury(Grave::Event(data.cast(), free_level_data::<F>));
        // SAFETY: a live registration; `data` stays valid until the free callback (graveyard)
        // and is what `event_trampoline::<F>` expects.
        check(unsafe {
            sys::MPI_T_event_register_callback(
                reg.raw,
                safety,
                sys::MPI_INFO_NULL,
                data.cast(),
                Some(event_trampoline::<F>),
            )
        })
    }

    /// `MPI_T_event_register_callback` with a NULL function: removes the callback of level
    /// `safety` (raw).
    pub(crate) fn event_remove_callback<L: Level>(
        reg: &RawRegistration<'_, L>,
        safety: sys::MPI_T_cb_safety,
    ) -> Result<()> {
        if let Some(slot) = reg.slot {
            return pool::remove_callback(slot, safety);
        }
        // The user_data MPI may still hand the dropped handler for this level.
        let header = Box::into_raw(Box::new(LevelData {
            block: reg.user_data,
            f: (),
        }));
        reg.block
            .bury(Grave::Event(header.cast(), free_level_data::<()>));
        // SAFETY: a live registration; a NULL function removes the level's callback; `header`
        // stays valid until the free callback.
        check(unsafe {
            sys::MPI_T_event_register_callback(
                reg.raw,
                safety,
                sys::MPI_INFO_NULL,
                header.cast(),
                None,
            )
        })
    }

    /// `MPI_T_event_set_dropped_handler` to `f`, called with the count of dropped events, the
    /// source index and the callback safety (raw).
    pub(crate) fn event_set_dropped_handler<F, L: Level>(
        reg: &RawRegistration<'_, L>,
        f: F,
    ) -> Result<()>
    where
        F: Fn(sys::MPI_Count, c_int, sys::MPI_T_cb_safety) + Send + Sync + 'static,
    {
        let boxed: Box<DroppedFn> = Box::new(f);
        let p = Box::into_raw(Box::new(boxed));
        reg.block.bury(Grave::Dropped(p));
        reg.block.dropped.store(p, Ordering::Release);
        if reg.slot.is_some() {
            // The slot's catch-all callback reports the drops itself (see `pool`).
            return Ok(());
        }
        // SAFETY: a live registration; the trampoline finds the handler through the block.
        check(unsafe { sys::MPI_T_event_set_dropped_handler(reg.raw, Some(dropped_trampoline)) })
    }

    /// `MPI_T_event_handle_set_info`.
    #[inline]
    pub(crate) fn event_handle_set_info<L: Level>(
        reg: &RawRegistration<'_, L>,
        info: &RawInfo,
    ) -> Result<()> {
        // SAFETY: a live registration and a live info object.
        check(unsafe { sys::MPI_T_event_handle_set_info(reg.raw, info.0) })
    }

    /// `MPI_T_event_handle_get_info`: a new info object.
    #[inline]
    pub(crate) fn event_handle_get_info<L: Level>(reg: &RawRegistration<'_, L>) -> Result<RawInfo> {
        let mut raw = RawInfo(sys::MPI_INFO_NULL);
        // SAFETY: a live registration; valid out-pointer; MPI returns a new info object the
        // caller frees (`RawInfo` does).
        check(unsafe { sys::MPI_T_event_handle_get_info(reg.raw, &mut raw.0) })?;
        Ok(raw)
    }

    /// `MPI_T_event_callback_set_info` of level `safety` (raw).
    #[inline]
    pub(crate) fn event_callback_set_info<L: Level>(
        reg: &RawRegistration<'_, L>,
        safety: sys::MPI_T_cb_safety,
        info: &RawInfo,
    ) -> Result<()> {
        // SAFETY: a live registration and a live info object.
        check(unsafe { sys::MPI_T_event_callback_set_info(reg.raw, safety, info.0) })
    }

    /// `MPI_T_event_callback_get_info` of level `safety` (raw): a new info object.
    #[inline]
    pub(crate) fn event_callback_get_info<L: Level>(
        reg: &RawRegistration<'_, L>,
        safety: sys::MPI_T_cb_safety,
    ) -> Result<RawInfo> {
        let mut raw = RawInfo(sys::MPI_INFO_NULL);
        // SAFETY: as in `event_handle_get_info`.
        check(unsafe { sys::MPI_T_event_callback_get_info(reg.raw, safety, &mut raw.0) })?;
        Ok(raw)
    }

    impl<L: Level> RawRegistration<'_, L> {
        /// How many closure invocations panicked, and the messages that could be recorded.
        pub(crate) fn panics(&self) -> (usize, Vec<String>) {
            let n = self.block.panics.load(Ordering::Relaxed);
            let msgs = self
                .block
                .panic_messages
                .lock()
                .map(|v| v.clone())
                .unwrap_or_default();
            (n, msgs)
        }

        fn start_free(&mut self) -> Result<()> {
            self.freeing = true;
            if let Some(slot) = self.slot {
                pool::retire(slot, self.block.clone());
                return Ok(());
            }
            // SAFETY: a live registration, freed once; `user_data` carries MPI's `Arc` count,
            // reclaimed by `free_trampoline`.
            let rc = unsafe {
                sys::MPI_T_event_handle_free(
                    self.raw,
                    self.user_data as *mut c_void,
                    Some(free_trampoline),
                )
            };
            if rc != sys::MPI_SUCCESS {
                // MPI will not call the free callback: the handle is not valid, so no
                // invocation can follow either; reclaim MPI's count here.
                // SAFETY: from `Arc::into_raw`, not handed over.
                drop(unsafe { Arc::from_raw(self.user_data) });
            }
            check(rc)
        }
    }

    impl<L: Level> Drop for RawRegistration<'_, L> {
        fn drop(&mut self) {
            if !self.freeing {
                let _ = self.start_free();
            }
        }
    }

    /// `MPI_T_event_handle_free`: started here; wait for MPI's free callback with the result.
    pub(crate) fn event_handle_free<L: Level>(mut reg: RawRegistration<'_, L>) -> Result<FreeWait> {
        let r = reg.start_free();
        r.map(|()| FreeWait(reg.block.clone()))
    }

    /// A started `MPI_T_event_handle_free`: the block, to wait for MPI's free callback.
    #[derive(Debug)]
    pub(crate) struct FreeWait(Arc<Block>);

    impl FreeWait {
        /// Whether MPI has called the free callback (no further invocation can happen).
        pub(crate) fn is_done(&self) -> bool {
            if self.0.pooled {
                pool::sweep();
            }
            *self.0.freed.lock().unwrap_or_else(|p| p.into_inner())
        }

        /// Waits up to `timeout` for the free callback; `true` if it has run.
        pub(crate) fn wait(&self, timeout: Duration) -> bool {
            if self.0.pooled {
                // No free callback comes: poll the pool's sweep until the invocations in
                // flight have ended.
                let end = std::time::Instant::now() + timeout;
                let mut pause = Duration::from_micros(20);
                loop {
                    if self.is_done() {
                        return true;
                    }
                    if std::time::Instant::now() >= end {
                        return false;
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
            }
            let g = self.0.freed.lock().unwrap_or_else(|p| p.into_inner());
            let (g, _) = self
                .0
                .freed_cv
                .wait_timeout_while(g, timeout, |freed| !*freed)
                .unwrap_or_else(|p| p.into_inner());
            *g
        }
    }
    /// Registrations on an MPI that must never free them
    /// ([`quirks::MPICH_EVENT_REGISTRATION_RACE`]). MPICH walks a registration list without a
    /// lock while another thread may free an entry (calling the free callback at once), and
    /// stores a callback's function before its `user_data`. So each MPICH registration here
    /// gets a [`Slot`] that is never freed: MPICH's `user_data` for level `i` is always
    /// `&slot.levels[i]` and its function always [`slot_trampoline`], so any mix of old and new
    /// values MPICH's walker may read is a valid pair. The trampoline counts itself in flight
    /// before it loads the level's closure; a retired slot's closures are released only after
    /// the count was seen at zero once they were unhooked (Dekker's order: `SeqCst` on both
    /// sides). The last level MPICH searches (`MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE`) always has
    /// the trampoline: an event that no level of the owner takes lands there and is reported to
    /// the owner's dropped handler as one dropped event, so MPICH's own drop count stays zero
    /// and a reused registration carries nothing over. Retired slots wait in the pool for the
    /// next registration of the same event type and object.
    pub(super) mod pool {
        use std::sync::atomic::AtomicBool;

        use mpit_core::Bind;

        use super::*;

        /// The callback levels in order, as the header spells them: 0..3 in MPICH's `mpi.h`,
        /// 0x00/0x03/0x0F/0x3F in the MPI-5 ABI's (MPICH's ABI library has the same race).
        const SAFETY: [sys::MPI_T_cb_safety; 4] = [
            sys::MPI_T_CB_REQUIRE_NONE as sys::MPI_T_cb_safety,
            sys::MPI_T_CB_REQUIRE_MPI_RESTRICTED as sys::MPI_T_cb_safety,
            sys::MPI_T_CB_REQUIRE_THREAD_SAFE as sys::MPI_T_cb_safety,
            sys::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE as sys::MPI_T_cb_safety,
        ];
        /// How many levels there are.
        const LEVELS: usize = SAFETY.len();
        /// The level searched last: the catch-all.
        const CATCH_ALL: usize = LEVELS - 1;

        /// One MPICH registration, for the rest of the process.
        pub(super) struct Slot {
            /// MPICH's registration.
            pub(super) raw: sys::MPI_T_event_registration,
            /// Event type index and bound object.
            key: (c_int, (Bind, u64)),
            levels: [SlotLevel; LEVELS],
            /// Levels below the catch-all whose callback MPICH has (changed by the owner only).
            in_mpich: [AtomicBool; LEVELS],
            /// Trampoline invocations running.
            in_flight: AtomicUsize,
            /// The owning registration's block (null while retired).
            owner: AtomicPtr<Block>,
        }

        /// The `user_data` MPICH holds for one level.
        struct SlotLevel {
            slot: *const Slot,
            /// A `SlotData<F>` (null: no closure at this level).
            current: AtomicPtr<c_void>,
        }

        // SAFETY: `raw` is MPICH's registration, only passed to MPI_T calls (serialised by
        // MPICH's MPI_T lock); `slot` points to the slot itself, fixed at creation; everything
        // else is atomic.
        unsafe impl Send for Slot {}
        // SAFETY: as above.
        unsafe impl Sync for Slot {}

        /// A closure of one level, type-erased behind the function that calls it.
        #[repr(C)]
        struct SlotData<F> {
            call: unsafe fn(*const c_void, sys::MPI_T_event_instance, sys::MPI_T_cb_safety),
            block: *const Block,
            f: F,
        }

        /// Retired slots: `idle` ones reusable, `retiring` ones waiting for their invocations
        /// in flight to end before their block is released.
        struct Pool {
            idle: Vec<&'static Slot>,
            retiring: Vec<(&'static Slot, Arc<Block>)>,
        }

        static POOL: Mutex<Pool> = Mutex::new(Pool {
            idle: Vec::new(),
            retiring: Vec::new(),
        });

        fn pool() -> std::sync::MutexGuard<'static, Pool> {
            POOL.lock().unwrap_or_else(|p| p.into_inner())
        }

        /// Whether registrations go through the pool: the quirk applies and MPI provides
        /// `MPI_THREAD_MULTIPLE` (below it no other thread raises events during an MPI_T call).
        pub(super) fn applies() -> bool {
            quirks::applies(&quirks::MPICH_EVENT_REGISTRATION_RACE)
                && matches!(
                    (super::super::initialized(), super::super::finalized()),
                    (Ok(true), Ok(false))
                )
                && super::super::query_thread().is_ok_and(|l| l == mpit_sys::MPI_THREAD_MULTIPLE)
        }

        /// The slot level of a raw callback safety.
        fn level(safety: sys::MPI_T_cb_safety) -> Result<usize> {
            SAFETY.iter().position(|&s| s == safety).ok_or(Error::Mpi {
                class: ErrorClass::InvalidIndex,
                code: sys::MPI_T_ERR_INVALID_INDEX,
            })
        }

        fn user_data(slot: &Slot, i: usize) -> *mut c_void {
            ptr::from_ref(&slot.levels[i]).cast_mut().cast()
        }

        /// A registration of event type `index` for `obj`: a retired slot of the same type and
        /// object, or a new MPICH registration with the catch-all hooked.
        pub(super) fn alloc(
            index: c_int,
            obj: RawObject,
            hints: Option<&RawInfo>,
            layout: Layout,
        ) -> Result<(&'static Slot, Arc<Block>)> {
            let key = (index, obj.identity());
            let reused = {
                let mut p = pool();
                sweep_locked(&mut p);
                let i = p.idle.iter().position(|s| s.key == key);
                i.map(|i| p.idle.swap_remove(i))
            };
            let slot = match reused {
                Some(slot) => {
                    if let Some(h) = hints {
                        // SAFETY: a live MPICH registration (never freed) and a live info.
                        let rc = unsafe { sys::MPI_T_event_handle_set_info(slot.raw, h.as_raw()) };
                        if let Err(e) = check(rc) {
                            pool().idle.push(slot);
                            return Err(e);
                        }
                    }
                    slot
                }
                None => new_slot(index, obj, key, hints)?,
            };
            let block = Arc::new(Block {
                layout,
                dropped: AtomicPtr::new(ptr::null_mut()),
                graveyard: Mutex::new(Vec::new()),
                panics: AtomicUsize::new(0),
                panic_messages: Mutex::new(Vec::new()),
                freed: Mutex::new(false),
                freed_cv: Condvar::new(),
                pooled: true,
            });
            slot.owner
                .store(Arc::as_ptr(&block).cast_mut(), Ordering::SeqCst);
            Ok((slot, block))
        }

        fn new_slot(
            index: c_int,
            obj: RawObject,
            key: (c_int, (Bind, u64)),
            hints: Option<&RawInfo>,
        ) -> Result<&'static Slot> {
            let mut raw = ptr::null_mut();
            let hints = hints.map_or(sys::MPI_INFO_NULL, RawInfo::as_raw);
            // SAFETY: as in `event_handle_alloc` (the caller holds the `TInit`).
            check(obj.with_ptr(|p| unsafe {
                sys::MPI_T_event_handle_alloc(index, p, hints, &mut raw)
            }))?;
            let level = || SlotLevel {
                slot: ptr::null(),
                current: AtomicPtr::new(ptr::null_mut()),
            };
            let p = Box::into_raw(Box::new(Slot {
                raw,
                key,
                levels: [level(), level(), level(), level()],
                in_mpich: Default::default(),
                in_flight: AtomicUsize::new(0),
                owner: AtomicPtr::new(ptr::null_mut()),
            }));
            // SAFETY: `p` is the box just leaked, not yet shared: its back pointers are set
            // before any reference to it escapes; it is never freed.
            let slot: &'static Slot = unsafe {
                for l in &mut (*p).levels {
                    l.slot = p;
                }
                &*p
            };
            // SAFETY: a live registration; `user_data` is the slot's catch-all level, valid for
            // the rest of the process, as `slot_trampoline` expects.
            let rc = unsafe {
                sys::MPI_T_event_register_callback(
                    raw,
                    sys::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE as sys::MPI_T_cb_safety,
                    sys::MPI_INFO_NULL,
                    user_data(slot, CATCH_ALL),
                    Some(slot_trampoline),
                )
            };
            // Without the catch-all the slot still works (MPICH counts drops itself), but a
            // reuse could then carry drops over: keep it out of the pool's reuse.
            check(rc)?;
            slot.in_mpich[CATCH_ALL].store(true, Ordering::Relaxed);
            Ok(slot)
        }

        /// Installs `f` at the level of `safety`.
        pub(super) fn register_callback<F>(
            slot: &'static Slot,
            block: &Arc<Block>,
            safety: sys::MPI_T_cb_safety,
            f: F,
        ) -> Result<()>
        where
            F: Fn(EventRef<'_>) + Send + Sync + 'static,
        {
            let i = level(safety)?;
            let data = Box::into_raw(Box::new(SlotData {
                call: call_slot_data::<F>,
                block: Arc::as_ptr(block),
                f,
            }));
            block.bury(Grave::Event(data.cast(), free_slot_data::<F>));
            slot.levels[i].current.store(data.cast(), Ordering::SeqCst);
            if !slot.in_mpich[i].load(Ordering::Relaxed) {
                // SAFETY: a live registration; `user_data` and function as in `new_slot`.
                check(unsafe {
                    sys::MPI_T_event_register_callback(
                        slot.raw,
                        safety,
                        sys::MPI_INFO_NULL,
                        user_data(slot, i),
                        Some(slot_trampoline),
                    )
                })?;
                slot.in_mpich[i].store(true, Ordering::Relaxed);
            }
            Ok(())
        }

        /// Removes the closure of the level of `safety` (the catch-all stays hooked in MPICH).
        pub(super) fn remove_callback(
            slot: &'static Slot,
            safety: sys::MPI_T_cb_safety,
        ) -> Result<()> {
            let i = level(safety)?;
            slot.levels[i]
                .current
                .store(ptr::null_mut(), Ordering::SeqCst);
            if i != CATCH_ALL {
                unhook(slot, i)?;
            }
            Ok(())
        }

        /// Takes MPICH's callback of level `i` away (a NULL function, the same `user_data`).
        fn unhook(slot: &Slot, i: usize) -> Result<()> {
            if slot.in_mpich[i].load(Ordering::Relaxed) {
                // SAFETY: a live registration; a NULL function removes the level's callback.
                check(unsafe {
                    sys::MPI_T_event_register_callback(
                        slot.raw,
                        SAFETY[i],
                        sys::MPI_INFO_NULL,
                        user_data(slot, i),
                        None,
                    )
                })?;
                slot.in_mpich[i].store(false, Ordering::Relaxed);
            }
            Ok(())
        }

        /// Retires `slot`: callbacks unhooked and cleared, the owner gone; `block` is released
        /// (and marked freed) by a later sweep that sees no invocation in flight.
        pub(super) fn retire(slot: &'static Slot, block: Arc<Block>) {
            for i in 0..CATCH_ALL {
                // A level left hooked only calls the trampoline, which finds no closure.
                let _ = unhook(slot, i);
            }
            for l in &slot.levels {
                l.current.store(ptr::null_mut(), Ordering::SeqCst);
            }
            slot.owner.store(ptr::null_mut(), Ordering::SeqCst);
            let mut p = pool();
            p.retiring.push((slot, block));
            sweep_locked(&mut p);
        }

        /// Releases every retired block whose slot has no invocation in flight.
        pub(crate) fn sweep() {
            sweep_locked(&mut pool());
        }

        fn sweep_locked(p: &mut Pool) {
            let mut i = 0;
            while i < p.retiring.len() {
                if p.retiring[i].0.in_flight.load(Ordering::SeqCst) == 0 {
                    let (slot, block) = p.retiring.swap_remove(i);
                    *block.freed.lock().unwrap_or_else(|e| e.into_inner()) = true;
                    block.freed_cv.notify_all();
                    drop(block);
                    p.idle.push(slot);
                } else {
                    i += 1;
                }
            }
        }

        /// After the last `MPI_T_finalize` of this crate MPICH may free its event types and,
        /// with them, the lists the slots are on: the slots are forgotten (left allocated, as
        /// an invocation may still be running in one), and blocks still in flight are leaked
        /// rather than freed under it.
        pub(crate) fn end_of_epoch() {
            let mut p = pool();
            sweep_locked(&mut p);
            p.idle.clear();
            for (_, block) in p.retiring.drain(..) {
                std::mem::forget(block);
            }
        }

        /// MPICH's callback for every level of every slot.
        unsafe extern "C" fn slot_trampoline(
            instance: sys::MPI_T_event_instance,
            _registration: sys::MPI_T_event_registration,
            cb_safety: sys::MPI_T_cb_safety,
            user_data: *mut c_void,
        ) {
            // MPICH stores the function before the `user_data`: its walker may see ours with
            // the zero it had.
            if user_data.is_null() {
                return;
            }
            // SAFETY: a `SlotLevel` of a slot that is never freed, its back pointer fixed.
            let slot = unsafe { &*(*(user_data as *const SlotLevel)).slot };
            // SAFETY: as above.
            let level = unsafe { &*(user_data as *const SlotLevel) };
            slot.in_flight.fetch_add(1, Ordering::SeqCst);
            let data = level.current.load(Ordering::SeqCst);
            if data.is_null() {
                report_drop(slot, instance, cb_safety);
            } else {
                // SAFETY: `data` is a `SlotData<F>` whose `call` reads it as such; it and its
                // block stay alive while this invocation is counted in flight (`retire`).
                unsafe {
                    let call = (*(data as *const SlotData<()>)).call;
                    call(data, instance, cb_safety);
                }
            }
            slot.in_flight.fetch_sub(1, Ordering::SeqCst);
        }

        /// An event no level of the owner takes: one dropped event for its dropped handler.
        fn report_drop(
            slot: &Slot,
            instance: sys::MPI_T_event_instance,
            cb_safety: sys::MPI_T_cb_safety,
        ) {
            let block = slot.owner.load(Ordering::SeqCst);
            if block.is_null() {
                return;
            }
            // SAFETY: the owner's block stays alive while this invocation is counted in flight.
            let block = unsafe { &*block };
            let f = block.dropped.load(Ordering::Acquire);
            if f.is_null() {
                return;
            }
            let mut source: c_int = 0;
            // SAFETY: the instance is valid during this callback; valid out-pointer. On an
            // error the source stays 0.
            let _ = unsafe { sys::MPI_T_event_get_source(instance, &mut source) };
            // SAFETY: a box in the block's graveyard, freed only with the block.
            let f = unsafe { &**f };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(1, source, cb_safety))) {
                block.record_panic(p);
            }
        }

        /// Calls the closure of a `SlotData<F>`.
        ///
        /// # Safety
        /// `p` must be a live `SlotData<F>` whose block is alive, and `instance` valid.
        unsafe fn call_slot_data<F>(
            p: *const c_void,
            instance: sys::MPI_T_event_instance,
            safety: sys::MPI_T_cb_safety,
        ) where
            F: Fn(EventRef<'_>) + Send + Sync + 'static,
        {
            // SAFETY: by the contract above.
            let d = unsafe { &*(p as *const SlotData<F>) };
            // SAFETY: by the contract above.
            let block = unsafe { &*d.block };
            call_closure(&d.f, block, instance, safety);
        }

        /// Frees a `SlotData<F>` box from the graveyard.
        ///
        /// # Safety
        /// `p` must come from `Box::into_raw(Box<SlotData<F>>)` and be freed once.
        unsafe fn free_slot_data<F>(p: *mut c_void) {
            // SAFETY: by the contract above.
            drop(unsafe { Box::from_raw(p as *mut SlotData<F>) });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The time stamp counter (the profiler's clock).

/// The CPU's time stamp counter (`rdtsc`): a few cycles, no system call.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn tsc() -> u64 {
    // SAFETY: `rdtsc` reads a register; it exists on every x86_64 CPU, touches no memory and
    // cannot fault in user mode unless the kernel sets CR4.TSD, which Linux does only for
    // processes that ask (prctl PR_SET_TSC) and then the profiler is not used with `tsc`.
    unsafe { core::arch::x86_64::_rdtsc() }
}
