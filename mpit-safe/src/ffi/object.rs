//! The fence's objects: [`RawObject`], the MPI object a handle or registration is bound to
//! (MPI-4.1 §16.3.2), the bits of a handle, and rsmpi's objects as [`MpiObject`]s.

use std::ffi::{c_int, c_void};

#[cfg(not(mpit_abi))]
use mpi::raw::AsRaw;
use mpit_core::{Bind, Result};
use mpit_sys as sys;

#[cfg(not(mpit_abi))]
use crate::object::MpiObject;
use crate::raw::RawConstant;

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
    pub(super) fn with_ptr<R>(mut self, f: impl FnOnce(*mut c_void) -> R) -> R {
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
    pub(super) fn bound_as(self, bind: c_int) -> Result<RawObject> {
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
