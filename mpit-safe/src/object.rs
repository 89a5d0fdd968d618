//! Binding variables to MPI objects (MPI-4.1 §16.3.2).
//!
//! A control or performance variable with a [`Bind`] other than [`Bind::NoObject`] is used
//! through a handle allocated for one object of that kind. [`MpiObject`] is what can be bound:
//! rsmpi's communicators, groups, datatypes, operations, requests and messages, [`NoObject`] for
//! unbound variables, and [`RawObject`] for raw handles from elsewhere (unsafe to make).

use std::ffi::c_void;

use mpi::raw::AsRaw;
use mpit_core::{Bind, Error, Result};
use mpit_sys as sys;

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

    /// Checks the object's kind against a variable's binding ([`Error::BindMismatch`]).
    pub(crate) fn check(&self, expected: Bind) -> Result<()> {
        let got = self.bind();
        if got == expected {
            Ok(())
        } else {
            Err(Error::BindMismatch { expected, got })
        }
    }

    /// Calls `f` with the `void *obj_handle` MPI_T takes: a pointer to a copy of the handle
    /// (NULL for no object), valid for the duration of `f`.
    pub(crate) fn with_ptr<R>(mut self, f: impl FnOnce(*mut c_void) -> R) -> R {
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
}

/// Something a variable can be bound to: it names its kind and its raw handle.
///
/// Implemented for rsmpi's objects, [`NoObject`] and [`RawObject`]. Handles allocated for an
/// object borrow it, so the object cannot be dropped (freed) while they live.
pub trait MpiObject {
    /// The object as MPI_T sees it.
    fn raw_object(&self) -> RawObject;
}

/// The "object" of a variable bound to no object ([`Bind::NoObject`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObject;

impl MpiObject for NoObject {
    fn raw_object(&self) -> RawObject {
        RawObject::NO_OBJECT
    }
}

impl MpiObject for RawObject {
    fn raw_object(&self) -> RawObject {
        *self
    }
}

macro_rules! rsmpi_object {
    ($($ctor:ident: $($ty:ty),+;)*) => {$($(
        impl MpiObject for $ty {
            fn raw_object(&self) -> RawObject {
                // SAFETY: an rsmpi object holds a live handle of this kind while it exists, and
                // MPI_T handles allocated with it borrow it.
                unsafe { RawObject::$ctor(self.as_raw()) }
            }
        }
    )+)*};
}

rsmpi_object! {
    comm: mpi::topology::SimpleCommunicator, mpi::topology::InterCommunicator,
        mpi::topology::CartesianCommunicator;
    group: mpi::topology::UserGroup, mpi::topology::SystemGroup;
    datatype: mpi::datatype::UserDatatype;
    op: mpi::collective::SystemOperation;
    message: mpi::point_to_point::Message;
}

impl MpiObject for mpi::datatype::DatatypeRef<'_> {
    fn raw_object(&self) -> RawObject {
        // SAFETY: as for the types above.
        unsafe { RawObject::datatype(self.as_raw()) }
    }
}

impl<'a, D: ?Sized, S: mpi::request::Scope<'a>> MpiObject for mpi::request::Request<'a, D, S> {
    fn raw_object(&self) -> RawObject {
        // SAFETY: as for the types above; a request is live until completed, which consumes it.
        unsafe { RawObject::request(self.as_raw()) }
    }
}
