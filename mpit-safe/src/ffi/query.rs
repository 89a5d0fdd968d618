//! The fence's queries: counts, checked indices, `*_get_info` and `*_get_index` of control
//! variables, performance variables and categories, category members, enumerations
//! (MPI-4.1 §16.3.5–§16.3.7, §16.3.9), and the counts of event types and sources (§16.3.8).

use std::ffi::{CStr, c_int};
use std::marker::PhantomData;

use mpit_core::{Error, Result};
use mpit_sys as sys;

use super::{TInit, esys, str_arg};
use crate::init::level::Level;
use crate::raw::{c_len, check, non_negative};

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
    pub(super) raw: c_int,
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
pub(super) fn enum_handle<'m>(raw: sys::MPI_T_enum) -> Option<RawEnum<'m>> {
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
