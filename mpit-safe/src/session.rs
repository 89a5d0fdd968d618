//! Performance experiment sessions and performance variable handles (MPI-4.1 §16.3.7).

use std::ffi::{c_int, c_void};
use std::marker::PhantomData;

use mpit_core::{Datatype, Error, ErrorClass, PvarInfo, Result, Scalar, Value};
use mpit_sys as sys;

use crate::init::{Mpit, level::Level, level::Multiple};
use crate::object::{MpiObject, NoObject};
use crate::raw::{self, check, non_negative};

/// A performance experiment session: an isolated context for performance variable handles
/// (`MPI_T_pvar_session_create` / `_free`). Handles borrow their session; dropping the session
/// after its handles frees everything in the standard's order.
///
/// ```
/// use mpit_safe::Mpit;
/// let universe = mpi::initialize().unwrap();
/// let mpit = Mpit::init()?;
/// let session = mpit.session()?;
/// for v in mpit.pvars()?.entries.iter().filter(|v| v.bind == mpit_safe::Bind::NoObject) {
///     match session.dyn_handle(v.index, &mpit_safe::NoObject) {
///         Ok(h) => {
///             if !v.continuous {
///                 h.start()?; // MPICH refuses to read a stopped variable (MPI_T_ERR_INVALID)
///             }
///             println!("{} = {:?}", v.name, h.read_values()?)
///         }
///         Err(e) => println!("{}: {e}", v.name), // e.g. a variable the MPI cannot serve
///     }
/// }
/// # Ok::<(), mpit_safe::Error>(())
/// ```
#[doc(alias = "MPI_T_pvar_session")]
pub struct Session<'m, L: Level = crate::level::Single> {
    raw: sys::MPI_T_pvar_session,
    mpit: &'m Mpit<L>,
}

// SAFETY: at MPI_THREAD_MULTIPLE MPI_T may be called from any thread at any time; the session
// is an opaque token of the library.
unsafe impl Send for Session<'_, Multiple> {}
// SAFETY: as above.
unsafe impl Sync for Session<'_, Multiple> {}

impl<L: Level> std::fmt::Debug for Session<'_, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl<L: Level> Mpit<L> {
    /// Creates a performance experiment session.
    #[doc(alias = "MPI_T_pvar_session_create")]
    pub fn session(&self) -> Result<Session<'_, L>> {
        let mut raw = sys::MPI_T_PVAR_SESSION_NULL;
        // SAFETY: MPI_T is initialised while `self` lives; valid out-pointer.
        check(unsafe { sys::MPI_T_pvar_session_create(&mut raw) })?;
        Ok(Session { raw, mpit: self })
    }
}

impl<L: Level> Drop for Session<'_, L> {
    fn drop(&mut self) {
        // SAFETY: created by MPI_T_pvar_session_create, freed once; its handles borrowed it
        // and are gone. A failure cannot be reported from drop.
        let _ = unsafe { sys::MPI_T_pvar_session_free(&mut self.raw) };
    }
}

/// Open MPI 4.1.4 segfaults (in libpsm2's `psm2_mq_get_stats`) allocating a handle for the
/// PSM2 MTL's performance variables (`mtl_psm2_rx_user_bytes`, ...) when that component is not
/// in use, which is every machine without Omni-Path: measured before `MPI_Init` and, when MPI_T
/// is first initialised after `MPI_Init`, after it too. Refused by name there.
fn refuse_known_crash(info: &PvarInfo) -> Result<()> {
    if info.name.as_bytes().starts_with(b"mtl_psm2_") {
        crate::quirks::guard(&crate::quirks::OPEN_MPI_PSM2_PVAR_HANDLES)?;
    }
    Ok(())
}

/// `MPI_T_pvar_start`, `_stop` or `_reset`.
type AllHandlesFn = unsafe extern "C" fn(sys::MPI_T_pvar_session, sys::MPI_T_pvar_handle) -> c_int;

/// A handle on one performance variable in one session, bound to one object, reading `T`.
///
/// Like perf-event's `Counter`: `start`, `stop`, `read`, `reset`, `read_reset`. The
/// variable's attributes are enforced before the call where the standard says the call must
/// fail: starting or stopping a continuous variable is [`ErrorClass::PvarNoStartStop`], writing or
/// resetting a read-only one [`ErrorClass::PvarNoWrite`], `read_reset` of a non-atomic one
/// [`ErrorClass::PvarNoAtomic`].
#[doc(alias = "MPI_T_pvar_handle")]
pub struct PvarHandle<'s, T, L: Level = crate::level::Single> {
    session: sys::MPI_T_pvar_session,
    handle: sys::MPI_T_pvar_handle,
    count: usize,
    info: PvarInfo,
    _session: Borrow<'s, L, T>,
}

/// Ties a handle to its session and element type without owning either.
type Borrow<'s, L, T> = PhantomData<(&'s Session<'s, L>, fn() -> T)>;

// SAFETY: as for `Session`.
unsafe impl<T> Send for PvarHandle<'_, T, Multiple> {}
// SAFETY: as for `Session`; every method makes one MPI_T call.
unsafe impl<T> Sync for PvarHandle<'_, T, Multiple> {}

impl<T, L: Level> std::fmt::Debug for PvarHandle<'_, T, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PvarHandle")
            .field("name", &self.info.name)
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

/// A performance variable handle for values of any datatype, as [`Value`]s.
pub type DynPvarHandle<'s, L = crate::level::Single> = PvarHandle<'s, Value, L>;

impl<'m, L: Level> Session<'m, L> {
    fn alloc<'s, T>(
        &'s self,
        index: usize,
        obj: &'s (impl MpiObject + ?Sized),
        type_ok: impl FnOnce(Datatype) -> Result<()>,
    ) -> Result<PvarHandle<'s, T, L>> {
        let info = self.mpit.pvar_info(index)?;
        refuse_known_crash(&info)?;
        type_ok(info.datatype)?;
        let raw = obj.raw_object();
        raw.check(info.bind)?;
        let i = c_int::try_from(index).map_err(|_| Error::LengthOverflow)?;
        let mut handle = sys::MPI_T_PVAR_HANDLE_NULL;
        let mut count: c_int = 0;
        // SAFETY: live session; `ptr` points to a live handle of the variable's bind kind
        // (checked); valid out-pointers.
        check(raw.with_ptr(|ptr| unsafe {
            sys::MPI_T_pvar_handle_alloc(self.raw, i, ptr, &mut handle, &mut count)
        }))?;
        Ok(PvarHandle {
            session: self.raw,
            handle,
            count: non_negative(count)?,
            info,
            _session: PhantomData,
        })
    }

    /// A handle on the unbound performance variable `index`, reading `T`.
    #[doc(alias = "MPI_T_pvar_handle_alloc")]
    pub fn handle<T: Scalar>(&self, index: usize) -> Result<PvarHandle<'_, T, L>> {
        self.alloc(index, &NoObject, T::check)
    }

    /// A handle on performance variable `index` bound to `obj` (kind checked against the
    /// variable's binding). The count may depend on the object (e.g. one element per peer).
    #[doc(alias = "MPI_T_pvar_handle_alloc")]
    pub fn handle_for<'s, T: Scalar, O: MpiObject + ?Sized>(
        &'s self,
        index: usize,
        obj: &'s O,
    ) -> Result<PvarHandle<'s, T, L>> {
        self.alloc(index, obj, T::check)
    }

    /// A dynamic handle (values as [`Value`]) on variable `index` bound to `obj`.
    pub fn dyn_handle<'s, O: MpiObject + ?Sized>(
        &'s self,
        index: usize,
        obj: &'s O,
    ) -> Result<DynPvarHandle<'s, L>> {
        self.alloc(index, obj, |_| Ok(()))
    }

    fn all(&self, f: AllHandlesFn) -> Result<()> {
        // SAFETY: live session; MPI_T_PVAR_ALL_HANDLES is valid for start, stop and reset.
        check(unsafe { f(self.raw, sys::mpi_t_pvar_all_handles()) })
    }

    /// Starts every non-continuous variable of the session (`MPI_T_PVAR_ALL_HANDLES`).
    #[doc(alias = "MPI_T_pvar_start")]
    pub fn start_all(&self) -> Result<()> {
        self.all(sys::MPI_T_pvar_start)
    }

    /// Stops every non-continuous variable of the session.
    #[doc(alias = "MPI_T_pvar_stop")]
    pub fn stop_all(&self) -> Result<()> {
        self.all(sys::MPI_T_pvar_stop)
    }

    /// Resets every writable variable of the session to its starting value.
    #[doc(alias = "MPI_T_pvar_reset")]
    pub fn reset_all(&self) -> Result<()> {
        self.all(sys::MPI_T_pvar_reset)
    }
}

impl<T, L: Level> PvarHandle<'_, T, L> {
    /// The number of elements for the bound object.
    pub fn count(&self) -> usize {
        self.count
    }

    /// What `MPI_T_pvar_get_info` said about the variable.
    pub fn info(&self) -> &PvarInfo {
        &self.info
    }

    /// Starts the variable ([`ErrorClass::PvarNoStartStop`] for a continuous one, before the call).
    #[doc(alias = "MPI_T_pvar_start")]
    pub fn start(&self) -> Result<()> {
        self.startstop()?;
        // SAFETY: live session and handle.
        check(unsafe { sys::MPI_T_pvar_start(self.session, self.handle) })
    }

    /// Stops the variable ([`ErrorClass::PvarNoStartStop`] for a continuous one, before the call).
    #[doc(alias = "MPI_T_pvar_stop")]
    pub fn stop(&self) -> Result<()> {
        self.startstop()?;
        // SAFETY: live session and handle.
        check(unsafe { sys::MPI_T_pvar_stop(self.session, self.handle) })
    }

    /// Resets the variable to its starting value ([`ErrorClass::PvarNoWrite`] if read-only).
    #[doc(alias = "MPI_T_pvar_reset")]
    pub fn reset(&self) -> Result<()> {
        self.writable()?;
        // SAFETY: live session and handle.
        check(unsafe { sys::MPI_T_pvar_reset(self.session, self.handle) })
    }

    fn startstop(&self) -> Result<()> {
        if self.info.continuous {
            return Err(Error::Mpi {
                class: ErrorClass::PvarNoStartStop,
                code: sys::MPI_T_ERR_PVAR_NO_STARTSTOP,
            });
        }
        Ok(())
    }

    fn writable(&self) -> Result<()> {
        if self.info.readonly {
            return Err(Error::Mpi {
                class: ErrorClass::PvarNoWrite,
                code: sys::MPI_T_ERR_PVAR_NO_WRITE,
            });
        }
        Ok(())
    }

    #[inline]
    fn expect_count(&self, got: usize) -> Result<()> {
        raw::expect_count(self.count, got)
    }

    #[inline]
    fn read_raw(&self, buf: *mut c_void) -> Result<()> {
        // SAFETY: callers pass `count` elements of the variable's datatype.
        check(unsafe { sys::MPI_T_pvar_read(self.session, self.handle, buf) })
    }

    #[inline]
    fn read_reset_raw(&self, buf: *mut c_void) -> Result<()> {
        self.writable()?;
        if !self.info.atomic {
            return Err(Error::Mpi {
                class: ErrorClass::PvarNoAtomic,
                code: sys::MPI_T_ERR_PVAR_NO_ATOMIC,
            });
        }
        // SAFETY: as in `read_raw`.
        check(unsafe { sys::MPI_T_pvar_readreset(self.session, self.handle, buf) })
    }

    fn write_raw(&self, buf: *const c_void) -> Result<()> {
        self.writable()?;
        // SAFETY: callers pass `count` elements; MPI only reads them.
        check(unsafe { sys::MPI_T_pvar_write(self.session, self.handle, buf.cast_mut()) })
    }
}

impl<T: Scalar + Default, L: Level> PvarHandle<'_, T, L> {
    /// Reads a variable of one element.
    #[doc(alias = "MPI_T_pvar_read")]
    #[inline]
    pub fn read(&self) -> Result<T> {
        self.expect_count(1)?;
        let mut v = T::default();
        self.read_raw((&raw mut v).cast())?;
        Ok(v)
    }

    /// Reads all `count` elements into `out` (no allocation: reuse the buffer).
    #[doc(alias = "MPI_T_pvar_read")]
    #[inline]
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        self.expect_count(out.len())?;
        self.read_raw(out.as_mut_ptr().cast())
    }

    /// Reads and resets atomically, one element.
    #[doc(alias = "MPI_T_pvar_readreset")]
    #[inline]
    pub fn read_reset(&self) -> Result<T> {
        self.expect_count(1)?;
        let mut v = T::default();
        self.read_reset_raw((&raw mut v).cast())?;
        Ok(v)
    }

    /// Reads and resets atomically into `out`.
    #[doc(alias = "MPI_T_pvar_readreset")]
    pub fn read_reset_into(&self, out: &mut [T]) -> Result<()> {
        self.expect_count(out.len())?;
        self.read_reset_raw(out.as_mut_ptr().cast())
    }

    /// Writes a variable of one element ([`ErrorClass::PvarNoWrite`] if read-only).
    #[doc(alias = "MPI_T_pvar_write")]
    pub fn write(&self, value: T) -> Result<()> {
        self.expect_count(1)?;
        self.write_raw((&raw const value).cast())
    }

    /// Writes all `count` elements.
    #[doc(alias = "MPI_T_pvar_write")]
    pub fn write_from(&self, values: &[T]) -> Result<()> {
        self.expect_count(values.len())?;
        self.write_raw(values.as_ptr().cast())
    }
}

/// Reads many handles into one reusable buffer, back to back in the order given; `out` must
/// hold the sum of their counts. No allocation.
pub fn read_many<T: Scalar + Default, L: Level>(
    handles: &[&PvarHandle<'_, T, L>],
    out: &mut [T],
) -> Result<()> {
    raw::expect_count(handles.iter().map(|h| h.count).sum(), out.len())?;
    let mut rest = out;
    for h in handles {
        let (now, later) = rest.split_at_mut(h.count);
        h.read_into(now)?;
        rest = later;
    }
    Ok(())
}

impl<L: Level> PvarHandle<'_, Value, L> {
    /// Reads all elements as [`Value`]s of the variable's datatype.
    pub fn read_values(&self) -> Result<Vec<Value>> {
        raw::read_values(self.info.datatype, self.count, |buf| self.read_raw(buf))
    }
}

impl<T, L: Level> Drop for PvarHandle<'_, T, L> {
    fn drop(&mut self) {
        // SAFETY: allocated in this session (which outlives the handle), freed once. A failure
        // cannot be reported from drop.
        let _ = unsafe { sys::MPI_T_pvar_handle_free(self.session, &mut self.handle) };
    }
}
