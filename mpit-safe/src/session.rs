//! Performance experiment sessions and performance variable handles (MPI-4.1 §16.3.7).

#![forbid(unsafe_code)]

use std::marker::PhantomData;

use mpit_core::{Datatype, Error, ErrorClass, PvarInfo, Result, Scalar, Value};
use mpit_sys as sys;

use crate::constant;
use crate::ffi::{self, RawPvarHandle, RawSession};
use crate::init::{Mpit, level::Level};
use crate::object::{MpiObject, NoObject, RawObject};
use crate::query::index_arg;

/// A performance experiment session: an isolated context for performance variable handles
/// (`MPI_T_pvar_session_create` / `_free`). Handles borrow their session; dropping the session
/// after its handles frees everything in the standard's order.
///
/// MPI-4.1 §16.3.7, `MPI_T_pvar_session`.
///
/// ```
/// use mpit_safe::Mpit;
/// # #[cfg(mpit_abi)] use mpit_safe::mpi;
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
    raw: RawSession<'m, L>,
    mpit: &'m Mpit<L>,
}

impl<L: Level> std::fmt::Debug for Session<'_, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl<L: Level> Mpit<L> {
    /// Creates a performance experiment session.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_session_create`.
    #[doc(alias = "MPI_T_pvar_session_create")]
    pub fn session(&self) -> Result<Session<'_, L>> {
        Ok(Session {
            raw: ffi::pvar_session_create(&self.init)?,
            mpit: self,
        })
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

/// A handle on one performance variable in one session, bound to one object, reading `T`.
///
/// MPI-4.1 §16.3.7, `MPI_T_pvar_handle`.
///
/// Like perf-event's `Counter`: `start`, `stop`, `read`, `reset`, `read_reset`. The
/// variable's attributes are enforced before the call where the standard says the call must
/// fail: starting or stopping a continuous variable is [`ErrorClass::PvarNoStartStop`], writing or
/// resetting a read-only one [`ErrorClass::PvarNoWrite`], `read_reset` of a non-atomic one
/// [`ErrorClass::PvarNoAtomic`].
#[doc(alias = "MPI_T_pvar_handle")]
pub struct PvarHandle<'s, T, L: Level = crate::level::Single> {
    handle: RawPvarHandle<'s, L>,
    count: usize,
    info: PvarInfo,
    _session: Borrow<'s, L, T>,
}

/// Ties a handle to its session and element type without owning either.
type Borrow<'s, L, T> = PhantomData<(&'s Session<'s, L>, fn() -> T)>;

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
        // Not tied to 's here: the public callers tie it (`handle_for`), or the caller frees
        // the handle before the object (`dyn_handle_raw`).
        obj: &(impl MpiObject + ?Sized),
        type_ok: impl FnOnce(Datatype) -> Result<()>,
    ) -> Result<PvarHandle<'s, T, L>> {
        let i = index_arg(&self.mpit.init, index)?;
        let info = self.mpit.pvar_info_at(i)?;
        refuse_known_crash(&info)?;
        type_ok(info.datatype)?;
        // The object's kind is checked against the variable's binding there; the handles
        // borrow `obj`, so it outlives them.
        let (handle, count) =
            ffi::pvar_handle_alloc(&self.mpit.init, &self.raw, i, obj.raw_object())?;
        Ok(PvarHandle {
            handle,
            count,
            info,
            _session: PhantomData,
        })
    }

    /// A dynamic handle bound to a raw object the caller keeps alive (`RawObject`'s contract;
    /// [`crate::raw::PvarHandle::alloc`]).
    pub(crate) fn dyn_handle_raw(
        &self,
        index: usize,
        obj: RawObject,
    ) -> Result<DynPvarHandle<'_, L>> {
        self.alloc(index, &obj, |_| Ok(()))
    }

    /// The token this session was created from.
    pub(crate) fn mpit(&self) -> &'m Mpit<L> {
        self.mpit
    }

    /// A handle on the unbound performance variable `index`, reading `T`.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_handle_alloc`.
    #[doc(alias = "MPI_T_pvar_handle_alloc")]
    pub fn handle<T: Scalar>(&self, index: usize) -> Result<PvarHandle<'_, T, L>> {
        self.alloc(index, &NoObject, T::check)
    }

    /// A handle on performance variable `index` bound to `obj` (kind checked against the
    /// variable's binding). The count may depend on the object (e.g. one element per peer).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_handle_alloc`.
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

    /// Starts every non-continuous variable of the session (`MPI_T_PVAR_ALL_HANDLES`).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_start`.
    #[doc(alias = "MPI_T_pvar_start")]
    pub fn start_all(&self) -> Result<()> {
        ffi::pvar_start_all(&self.raw)
    }

    /// Stops every non-continuous variable of the session.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_stop`.
    #[doc(alias = "MPI_T_pvar_stop")]
    pub fn stop_all(&self) -> Result<()> {
        ffi::pvar_stop_all(&self.raw)
    }

    /// Resets every writable variable of the session to its starting value.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_reset`.
    #[doc(alias = "MPI_T_pvar_reset")]
    pub fn reset_all(&self) -> Result<()> {
        ffi::pvar_reset_all(&self.raw)
    }
}

impl<'s, T, L: Level> PvarHandle<'s, T, L> {
    /// The number of elements for the bound object.
    pub fn count(&self) -> usize {
        self.count
    }

    /// What `MPI_T_pvar_get_info` said about the variable.
    pub fn info(&self) -> &PvarInfo {
        &self.info
    }

    /// Starts the variable ([`ErrorClass::PvarNoStartStop`] for a continuous one, before the call).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_start`.
    #[doc(alias = "MPI_T_pvar_start")]
    pub fn start(&self) -> Result<()> {
        self.startstop()?;
        ffi::pvar_start(&self.handle)
    }

    /// Stops the variable ([`ErrorClass::PvarNoStartStop`] for a continuous one, before the call).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_stop`.
    #[doc(alias = "MPI_T_pvar_stop")]
    pub fn stop(&self) -> Result<()> {
        self.startstop()?;
        ffi::pvar_stop(&self.handle)
    }

    /// Resets the variable to its starting value ([`ErrorClass::PvarNoWrite`] if read-only).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_reset`.
    #[doc(alias = "MPI_T_pvar_reset")]
    pub fn reset(&self) -> Result<()> {
        self.writable()?;
        ffi::pvar_reset(&self.handle)
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

    #[inline(always)]
    fn expect_count(&self, got: usize) -> Result<()> {
        constant::expect_count(self.count, got)
    }

    #[inline(always)]
    pub(crate) fn read_raw<U: Scalar>(&self, buf: &mut [U]) -> Result<()> {
        ffi::pvar_read(&self.handle, buf)
    }

    /// The handle without its information, and its count (the profiler keeps many and reads
    /// them in a tight loop: 32 bytes each instead of the information's few hundred).
    pub(crate) fn into_raw(self) -> (RawPvarHandle<'s, L>, usize) {
        (self.handle, self.count)
    }

    #[inline(always)]
    fn read_reset_raw(&self, buf: &mut [T]) -> Result<()>
    where
        T: Scalar,
    {
        self.writable()?;
        if !self.info.atomic {
            return Err(Error::Mpi {
                class: ErrorClass::PvarNoAtomic,
                code: sys::MPI_T_ERR_PVAR_NO_ATOMIC,
            });
        }
        ffi::pvar_readreset(&self.handle, buf)
    }

    fn write_raw(&self, buf: &[T]) -> Result<()>
    where
        T: Scalar,
    {
        self.writable()?;
        ffi::pvar_write(&self.handle, buf)
    }
}

impl<T: Scalar + Default, L: Level> PvarHandle<'_, T, L> {
    /// Reads a variable of one element.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_read`.
    #[doc(alias = "MPI_T_pvar_read")]
    #[inline(always)]
    pub fn read(&self) -> Result<T> {
        self.expect_count(1)?;
        let mut v = T::default();
        self.read_raw(std::slice::from_mut(&mut v))?;
        Ok(v)
    }

    /// Reads all `count` elements into `out` (no allocation: reuse the buffer).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_read`.
    #[doc(alias = "MPI_T_pvar_read")]
    #[inline(always)]
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        self.expect_count(out.len())?;
        self.read_raw(out)
    }

    /// Reads and resets atomically, one element.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_readreset`.
    #[doc(alias = "MPI_T_pvar_readreset")]
    #[inline(always)]
    pub fn read_reset(&self) -> Result<T> {
        self.expect_count(1)?;
        let mut v = T::default();
        self.read_reset_raw(std::slice::from_mut(&mut v))?;
        Ok(v)
    }

    /// Reads and resets atomically into `out`.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_readreset`.
    #[doc(alias = "MPI_T_pvar_readreset")]
    pub fn read_reset_into(&self, out: &mut [T]) -> Result<()> {
        self.expect_count(out.len())?;
        self.read_reset_raw(out)
    }

    /// Writes a variable of one element ([`ErrorClass::PvarNoWrite`] if read-only).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_write`.
    #[doc(alias = "MPI_T_pvar_write")]
    pub fn write(&self, value: T) -> Result<()> {
        self.expect_count(1)?;
        self.write_raw(&[value])
    }

    /// Writes all `count` elements.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_write`.
    #[doc(alias = "MPI_T_pvar_write")]
    pub fn write_from(&self, values: &[T]) -> Result<()> {
        self.expect_count(values.len())?;
        self.write_raw(values)
    }
}

/// Reads many handles into one reusable buffer, back to back in the order given; `out` must
/// hold the sum of their counts. No allocation.
pub fn read_many<T: Scalar + Default, L: Level>(
    handles: &[&PvarHandle<'_, T, L>],
    out: &mut [T],
) -> Result<()> {
    constant::expect_count(handles.iter().map(|h| h.count).sum(), out.len())?;
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
        constant::read_values(self.info.datatype, self.count, |buf| self.read_raw(buf))
    }
}
