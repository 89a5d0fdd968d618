//! The raw calls the conformance properties make. The safe API prevents misuse by
//! construction (indices are checked, handles cannot dangle, known crashes are refused), so
//! checking what the implementation itself does with misuse needs the C calls.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

use mpit_core::{Datatype, ErrorClass, Result};
use mpit_sys as sys;

use mpit_safe::{Mpit, RawConstant};

/// Initialises MPI_T for the rest of the child process (never finalised: see `child_main`).
pub(crate) fn init() -> Result<()> {
    std::mem::forget(Mpit::init()?);
    Ok(())
}

/// The class of a return code (`None`: success or not an MPI_T class).
pub(crate) fn class(rc: c_int) -> Option<ErrorClass> {
    ErrorClass::from_raw(rc).ok()
}

/// A return code as text: `MPI_SUCCESS`, the class's C name, or the number.
pub(crate) fn rc_name(rc: c_int) -> String {
    if rc == sys::MPI_SUCCESS {
        return "MPI_SUCCESS".into();
    }
    class(rc).map_or_else(
        || format!("error code {rc} (not an MPI_T error class)"),
        |c| c.c_name().to_string(),
    )
}

/// A string argument: buffer pointer (possibly null) and the length passed in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StrArg {
    pub(crate) ptr: *mut c_char,
    pub(crate) len: c_int,
}

impl StrArg {
    pub(crate) const NONE: StrArg = StrArg {
        ptr: ptr::null_mut(),
        len: 0,
    };

    pub(crate) fn of(buf: &mut [u8], len: c_int) -> StrArg {
        StrArg {
            ptr: buf.as_mut_ptr().cast(),
            len,
        }
    }
}

/// Which counter of things: cvars, pvars or categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Cvar,
    Pvar,
    Category,
}

impl Kind {
    pub(crate) const ALL: [Kind; 3] = [Kind::Cvar, Kind::Pvar, Kind::Category];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Cvar => "cvar",
            Kind::Pvar => "pvar",
            Kind::Category => "category",
        }
    }

    pub(crate) fn plural(self) -> &'static str {
        match self {
            Kind::Cvar => "cvars",
            Kind::Pvar => "pvars",
            Kind::Category => "categories",
        }
    }

    /// `MPI_T_*_get_num`.
    pub(crate) fn count(self) -> c_int {
        let f = match self {
            Kind::Cvar => sys::MPI_T_cvar_get_num,
            Kind::Pvar => sys::MPI_T_pvar_get_num,
            Kind::Category => sys::MPI_T_category_get_num,
        };
        let mut n = 0;
        // SAFETY: MPI_T is initialised (`init`); valid out-pointer.
        let rc = unsafe { f(&mut n) };
        if rc == sys::MPI_SUCCESS { n } else { -1 }
    }
}

/// The fixed-size answers of a `*_get_info` call, as raw numbers (datatypes and enum handles
/// are compared by identity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fixed {
    pub(crate) rc: c_int,
    pub(crate) ints: [c_int; 6],
    pub(crate) datatype: String,
    pub(crate) enumtype: Option<sys::MPI_T_enum>,
}

/// `MPI_T_{cvar,pvar,category}_get_info(index)` with the given string arguments; returns the
/// fixed answers and the two lengths as MPI left them.
///
/// For cvars `ints` is `[verbosity, bind, scope, 0, 0, 0]`; for pvars `[verbosity, class,
/// bind, readonly, continuous, atomic]`; for categories `[num_cvars, num_pvars,
/// num_categories, 0, 0, 0]`.
pub(crate) fn info(kind: Kind, index: c_int, name: StrArg, desc: StrArg) -> (Fixed, c_int, c_int) {
    let (mut nl, mut dl) = (name.len, desc.len);
    let mut ints = [0 as c_int; 6];
    let mut dt = sys::MPI_DATATYPE_NULL;
    let mut en = sys::MPI_T_ENUM_NULL;
    let [a, b, c, d, e, f] = &mut ints;
    // SAFETY: MPI_T is initialised; each string buffer is valid for its length (or null);
    // every other argument is a valid out-pointer for the call's duration.
    let rc = unsafe {
        match kind {
            Kind::Cvar => sys::MPI_T_cvar_get_info(
                index, name.ptr, &mut nl, a, &mut dt, &mut en, desc.ptr, &mut dl, b, c,
            ),
            Kind::Pvar => sys::MPI_T_pvar_get_info(
                index, name.ptr, &mut nl, a, b, &mut dt, &mut en, desc.ptr, &mut dl, c, d, e, f,
            ),
            Kind::Category => {
                sys::MPI_T_category_get_info(index, name.ptr, &mut nl, desc.ptr, &mut dl, a, b, c)
            }
        }
    };
    let datatype = if kind == Kind::Category || rc != sys::MPI_SUCCESS {
        String::new()
    } else {
        Datatype::from_raw(dt).map_or_else(|_| "unknown datatype".into(), |d| d.to_string())
    };
    let enumtype = (kind != Kind::Category && rc == sys::MPI_SUCCESS && en != sys::MPI_T_ENUM_NULL)
        .then_some(en);
    (
        Fixed {
            rc,
            ints,
            datatype,
            enumtype,
        },
        nl,
        dl,
    )
}

/// The full name or description (`which`: 0 name, 1 description) of `index`, by the length
/// query then a buffer of that length; `None` if a call fails.
pub(crate) fn full_string(kind: Kind, index: c_int, which: usize) -> Option<Vec<u8>> {
    let (f, nl, dl) = info(kind, index, StrArg::NONE, StrArg::NONE);
    if f.rc != sys::MPI_SUCCESS {
        return None;
    }
    let len = usize::try_from(if which == 0 { nl } else { dl }).ok()?;
    let mut buf = vec![0u8; len + 1];
    let arg = StrArg::of(&mut buf, c_int::try_from(len + 1).ok()?);
    let (f, ..) = if which == 0 {
        info(kind, index, arg, StrArg::NONE)
    } else {
        info(kind, index, StrArg::NONE, arg)
    };
    if f.rc != sys::MPI_SUCCESS {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0)?;
    buf.truncate(end);
    Some(buf)
}

/// `MPI_T_enum_get_info`: `(rc, num, name length)`.
pub(crate) fn enum_info(e: sys::MPI_T_enum, name: StrArg) -> (c_int, c_int, c_int) {
    let (mut num, mut len) = (0, name.len);
    // SAFETY: `e` is an enumeration handle MPI_T returned; buffer valid for `len` or null.
    let rc = unsafe { sys::MPI_T_enum_get_info(e, &mut num, name.ptr, &mut len) };
    (rc, num, len)
}

/// `MPI_T_enum_get_item`: `(rc, value, name length)`.
pub(crate) fn enum_item(e: sys::MPI_T_enum, item: c_int, name: StrArg) -> (c_int, c_int, c_int) {
    let (mut value, mut len) = (0, name.len);
    // SAFETY: as in `enum_info`.
    let rc = unsafe { sys::MPI_T_enum_get_item(e, item, &mut value, name.ptr, &mut len) };
    (rc, value, len)
}

/// `*_get_index(name)` (for pvars with the raw class `class`): `(rc, index)`.
pub(crate) fn get_index(kind: Kind, name: &[u8], class: c_int) -> (c_int, c_int) {
    let mut c = name.to_vec();
    c.push(0);
    let p: *const c_char = c.as_ptr().cast();
    let mut i = -1;
    // SAFETY: `p` is NUL-terminated and lives for the call; valid out-pointer.
    let rc = unsafe {
        match kind {
            Kind::Cvar => sys::MPI_T_cvar_get_index(p, &mut i),
            Kind::Pvar => sys::MPI_T_pvar_get_index(p, class, &mut i),
            Kind::Category => sys::MPI_T_category_get_index(p, &mut i),
        }
    };
    (rc, i)
}

/// `MPI_T_category_get_{cvars,pvars,categories}(index, len)`: `(rc, members)`.
pub(crate) fn members(index: c_int, of: Kind, len: c_int) -> (c_int, Vec<c_int>) {
    let f = match of {
        Kind::Cvar => sys::MPI_T_category_get_cvars,
        Kind::Pvar => sys::MPI_T_category_get_pvars,
        Kind::Category => sys::MPI_T_category_get_categories,
    };
    let mut v = vec![-1 as c_int; usize::try_from(len).unwrap_or(0).max(1)];
    // SAFETY: `v` holds at least `len` ints.
    let rc = unsafe { f(index, len, v.as_mut_ptr()) };
    v.truncate(usize::try_from(len).unwrap_or(0));
    (rc, v)
}

/// `MPI_T_cvar_handle_alloc(index, obj)`: `(rc, handle, count)`.
pub(crate) fn cvar_alloc(index: c_int, obj: *mut c_void) -> (c_int, sys::MPI_T_cvar_handle, c_int) {
    let mut h = sys::MPI_T_CVAR_HANDLE_NULL;
    let mut count = -1;
    // SAFETY: `obj` points to an MPI object handle of the variable's binding or is ignored
    // (no binding); valid out-pointers. A wrong index is what is being checked.
    let rc = unsafe { sys::MPI_T_cvar_handle_alloc(index, obj, &mut h, &mut count) };
    (rc, h, count)
}

/// `MPI_T_pvar_handle_alloc(session, index, obj)`: `(rc, handle, count)`.
pub(crate) fn pvar_alloc(
    session: sys::MPI_T_pvar_session,
    index: c_int,
    obj: *mut c_void,
) -> (c_int, sys::MPI_T_pvar_handle, c_int) {
    let mut h = sys::MPI_T_PVAR_HANDLE_NULL;
    let mut count = -1;
    // SAFETY: as in `cvar_alloc`.
    let rc = unsafe { sys::MPI_T_pvar_handle_alloc(session, index, obj, &mut h, &mut count) };
    (rc, h, count)
}

/// `MPI_T_pvar_session_create`: `(rc, session)`.
pub(crate) fn session_create() -> (c_int, sys::MPI_T_pvar_session) {
    let mut s = sys::MPI_T_PVAR_SESSION_NULL;
    // SAFETY: valid out-pointer.
    let rc = unsafe { sys::MPI_T_pvar_session_create(&mut s) };
    (rc, s)
}

/// A buffer for `count` elements of up to 8 bytes, 8-byte aligned.
pub(crate) fn buffer(count: c_int) -> Vec<u64> {
    vec![0u64; usize::try_from(count).unwrap_or(0).clamp(1, 1 << 20)]
}

/// An object handle for a variable bound to `bind` (raw), if this process can give one:
/// `comm` (`MPI_COMM_WORLD` once MPI is initialised) for communicator-bound variables, nothing for
/// unbound ones (ignored by MPI). `None`: not checkable here.
pub(crate) fn object_for(bind: c_int, comm: &mut Option<sys::MPI_Comm>) -> Option<*mut c_void> {
    match comm {
        _ if bind == sys::MPI_T_BIND_NO_OBJECT => Some(ptr::null_mut()),
        Some(c) if bind == sys::MPI_T_BIND_MPI_COMM => Some((c as *mut sys::MPI_Comm).cast()),
        _ => None,
    }
}

/// Whether `MPI_Init` has run.
pub(crate) fn initialized() -> bool {
    let mut f = 0;
    // SAFETY: callable at any time; valid out-pointer.
    unsafe { sys::MPI_Initialized(&mut f) };
    f != 0
}
