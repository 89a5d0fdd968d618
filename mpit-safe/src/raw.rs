//! Below the safe API, for tools that keep their own handles and buffers (a profiler's sampling
//! loop): performance variable handles without their information, read into the caller's
//! buffers ([`PvarHandle`], and [`WordPvarHandle`] for a variable of one word), the token and
//! object identity a tool needs beside them, and the CPU's time stamp counter ([`tsc`]).
//!
//! Every item is a thin wrapper of the fence's entries (`ffi.rs`): the checks that make a call
//! sound are made there, once, as for the safe API; what this module leaves out is what the safe
//! handles add on top (the variable's information, the count checked at each read, a handle that
//! borrows its object).
//!
//! ```
//! use mpit_safe::raw::{self, PvarHandle};
//! use mpit_safe::{Bind, Mpit, RawObject};
//! # #[cfg(mpit_abi)] use mpit_safe::mpi;
//! let universe = mpi::initialize().unwrap();
//! let mpit = Mpit::init()?;
//! let session = mpit.session()?;
//! for v in mpit.pvars()?.entries.iter().filter(|v| v.bind == Bind::NoObject) {
//!     let Ok((h, count)) = PvarHandle::alloc(&session, v.index, RawObject::NO_OBJECT) else {
//!         continue; // a variable the MPI cannot serve
//!     };
//!     if !v.continuous {
//!         h.start()?;
//!     }
//!     // A buffer of the caller's, of the variable's size; a wrong type or size is an error.
//!     let mut buf = vec![0u8; h.bytes()];
//!     h.read(&mut buf)?;
//!     println!("{}: {count} element(s), {} bytes", v.name, buf.len());
//! }
//! assert!(raw::token(&session).pvar_count()? >= mpit.pvars()?.entries.len());
//! # Ok::<(), mpit_safe::Error>(())
//! ```

#![forbid(unsafe_code)]

use mpit_core::{Bind, Result, Scalar};

use crate::ffi;
use crate::init::Mpit;
use crate::init::level::{Level, Single};
use crate::object::RawObject;
use crate::session::Session;

/// The installed MPI's values of the constant families (also at the crate root).
pub use crate::constant::RawConstant;

// The fence's conversions of return codes and lengths, under the path it names them by.
pub(crate) use crate::constant::{c_len, check, non_negative};

/// A performance variable handle without its information: allocated for an index and a raw
/// object, read into the caller's buffers, freed on drop (`MPI_T_pvar_handle_free`). It borrows
/// its session, not its object: a [`RawObject`] is made under the contract that the object
/// outlives every handle allocated with it.
///
/// MPI-4.1 §16.3.7, `MPI_T_pvar_handle`.
#[doc(alias = "MPI_T_pvar_handle")]
pub struct PvarHandle<'s, L: Level = Single>(ffi::RawPvarHandle<'s, L>);

impl<L: Level> std::fmt::Debug for PvarHandle<'_, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PvarHandle")
            .field("bytes", &self.bytes())
            .finish_non_exhaustive()
    }
}

impl<'s, L: Level> PvarHandle<'s, L> {
    /// A handle on performance variable `index` in `session` for `obj` (its kind checked
    /// against the variable's binding, [`mpit_core::Error::BindMismatch`]; variables known to
    /// crash their MPI refused as for [`Session::dyn_handle`]), and its count: the number of
    /// elements for that object.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_handle_alloc`.
    #[doc(alias = "MPI_T_pvar_handle_alloc")]
    pub fn alloc(
        session: &'s Session<'_, L>,
        index: usize,
        obj: RawObject,
    ) -> Result<(PvarHandle<'s, L>, usize)> {
        let (handle, count) = session.dyn_handle_raw(index, obj)?.into_raw();
        Ok((PvarHandle(handle), count))
    }

    /// Bytes a read writes: the count times the size of the variable's datatype.
    #[inline(always)]
    pub fn bytes(&self) -> usize {
        self.0.bytes()
    }

    /// Starts the variable (an error from MPI for a continuous one).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_start`.
    #[doc(alias = "MPI_T_pvar_start")]
    #[inline]
    pub fn start(&self) -> Result<()> {
        ffi::pvar_start(&self.0)
    }

    /// Stops the variable (an error from MPI for a continuous one).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_stop`.
    #[doc(alias = "MPI_T_pvar_stop")]
    #[inline]
    pub fn stop(&self) -> Result<()> {
        ffi::pvar_stop(&self.0)
    }

    /// Reads the variable into `buf`, which must hold at least [`PvarHandle::bytes`] bytes
    /// (checked: an error otherwise, and no call): MPI writes the elements there in the
    /// variable's datatype, for the caller to decode (`bool`s only for `MPI_C_BOOL`).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_read`.
    #[doc(alias = "MPI_T_pvar_read")]
    #[inline(always)]
    pub fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()> {
        ffi::pvar_read(&self.0, buf)
    }
}

/// A [`PvarHandle`] whose variable takes at most 8 bytes, checked once when it is made: read
/// into a `u64` with no check per read ([`WordPvarHandle::read_ok`]; a profiler reads dozens
/// of them at every MPI call).
#[doc(alias = "MPI_T_pvar_handle")]
pub struct WordPvarHandle<'s, L: Level = Single>(ffi::WordPvarHandle<'s, L>);

impl<L: Level> std::fmt::Debug for WordPvarHandle<'_, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordPvarHandle")
            .field("bytes", &self.bytes())
            .finish_non_exhaustive()
    }
}

impl<'s, L: Level> WordPvarHandle<'s, L> {
    /// `h` as a word handle if its variable takes at most 8 bytes, else `h` back.
    pub fn new(h: PvarHandle<'s, L>) -> std::result::Result<Self, PvarHandle<'s, L>> {
        ffi::WordPvarHandle::new(h.0)
            .map(WordPvarHandle)
            .map_err(PvarHandle)
    }

    /// Bytes a read writes (at most 8).
    #[inline(always)]
    pub fn bytes(&self) -> usize {
        self.0.handle().bytes()
    }

    /// Reads the variable into the first bytes of `word` (the others as they were): whether
    /// it succeeded, no more (no branch: a loop of reads ANDs them and checks once).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_read`.
    #[doc(alias = "MPI_T_pvar_read")]
    #[inline(always)]
    pub fn read_ok(&self, word: &mut u64) -> bool {
        self.0.read_ok(word)
    }

    /// [`PvarHandle::read`]: into any buffer of at least the variable's bytes, checked.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_read`.
    #[doc(alias = "MPI_T_pvar_read")]
    #[inline(always)]
    pub fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()> {
        ffi::pvar_read(self.0.handle(), buf)
    }
}

/// The token `session` was created from (a session borrows it, so it outlives the session):
/// for a tool handed a session alone, to list what it measures.
#[inline]
pub fn token<'m, L: Level>(session: &Session<'m, L>) -> &'m Mpit<L> {
    session.mpit()
}

/// An object's kind and its handle's bits: equal for the same live object, so that a tool finds
/// the handles it allocated for an object again when the object goes (integers in MPICH,
/// pointers in Open MPI).
#[inline]
pub fn object_identity(obj: &RawObject) -> (Bind, u64) {
    obj.identity()
}

/// The CPU's time stamp counter (`rdtsc`): a few cycles, no system call. Its rate is constant
/// only where `/proc/cpuinfo` lists `constant_tsc` and `nonstop_tsc`; a tool calibrates it
/// against a clock.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn tsc() -> u64 {
    ffi::tsc()
}
