//! `mpit_safe::mpi` in the MPI-5 ABI build: the part of rsmpi's API that programs around
//! MPI_T need (initialisation, the world communicator, ranks, barriers, point-to-point
//! messages), over the ABI library, under rsmpi's names.
//!
//! rsmpi cannot be built against `mpi_abi.h` (its `mpi-sys` fails on it), so an ABI build has no
//! rsmpi. With `#[cfg(mpit_abi)] use mpit_safe::mpi;` at the top of a file, code written
//! against rsmpi's names for these calls builds in both modes; this project's tests and tools
//! do exactly that. Errors are MPI's: the ABI library's default error handler aborts, as it
//! does under rsmpi; a code that comes back anyway panics with the call's name.
//!
//! Its communicators bind variables ([`MpiObject`](crate::MpiObject)); so does any ABI handle
//! through [`RawObject`](crate::RawObject)'s constructors.
//!
//! ```no_run
//! # #[cfg(mpit_abi)] {
//! use mpit_safe::mpi;
//! use mpit_safe::mpi::traits::*;
//! let universe = mpi::initialize().expect("MPI_Init");
//! let world = universe.world();
//! if world.rank() == 0 && world.size() > 1 {
//!     world.process_at_rank(1).send_with_tag(&42i32, 7);
//! } else if world.rank() == 1 {
//!     let (v, _) = world.process_at_rank(0).receive_with_tag::<i32>(7);
//!     assert_eq!(v, 42);
//! }
//! # }
//! ```

use std::ffi::{CStr, c_int, c_void};
use std::marker::PhantomData;

use mpit_sys as sys;

use super::RawObject;
use crate::object::MpiObject;

/// A rank in a communicator.
pub type Rank = i32;
/// A message tag.
pub type Tag = i32;

fn ok(what: &str, rc: c_int) {
    assert!(rc == sys::MPI_SUCCESS, "{what} failed with MPI error {rc}");
}

/// Thread support levels (MPI-4.1 §11.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Threading {
    /// `MPI_THREAD_SINGLE`.
    Single,
    /// `MPI_THREAD_FUNNELED`.
    Funneled,
    /// `MPI_THREAD_SERIALIZED`.
    Serialized,
    /// `MPI_THREAD_MULTIPLE`.
    Multiple,
}

impl Threading {
    fn raw(self) -> c_int {
        match self {
            Threading::Single => sys::MPI_THREAD_SINGLE,
            Threading::Funneled => sys::MPI_THREAD_FUNNELED,
            Threading::Serialized => sys::MPI_THREAD_SERIALIZED,
            Threading::Multiple => sys::MPI_THREAD_MULTIPLE,
        }
    }

    fn from_raw(level: c_int) -> Threading {
        [
            Threading::Single,
            Threading::Funneled,
            Threading::Serialized,
            Threading::Multiple,
        ]
        .into_iter()
        .find(|t| t.raw() == level)
        .unwrap_or(Threading::Single)
    }
}

/// MPI initialised by this value: dropping it calls `MPI_Finalize` (rsmpi's `Universe`).
#[derive(Debug)]
pub struct Universe {
    _not_send: PhantomData<*const ()>,
}

/// `MPI_Init_thread` at [`Threading::Single`]; `None` if MPI was initialised before.
pub fn initialize() -> Option<Universe> {
    initialize_with_threading(Threading::Single).map(|(u, _)| u)
}

/// `MPI_Init_thread` at `threading`, with the level provided; `None` if MPI was initialised
/// before.
pub fn initialize_with_threading(threading: Threading) -> Option<(Universe, Threading)> {
    let mut flag = 0;
    // SAFETY: callable at any time; writes one int.
    ok("MPI_Initialized", unsafe {
        sys::MPI_Initialized(&mut flag)
    });
    if flag != 0 {
        return None;
    }
    let mut provided = 0;
    // SAFETY: MPI is not initialised; null argc/argv are allowed (MPI-4.1 §11.2.1).
    ok("MPI_Init_thread", unsafe {
        sys::MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            threading.raw(),
            &mut provided,
        )
    });
    Some((
        Universe {
            _not_send: PhantomData,
        },
        Threading::from_raw(provided),
    ))
}

impl Universe {
    /// `MPI_COMM_WORLD`.
    pub fn world(&self) -> SimpleCommunicator {
        SimpleCommunicator::world()
    }
}

impl Drop for Universe {
    fn drop(&mut self) {
        let mut done = 0;
        // SAFETY: callable at any time; writes one int.
        unsafe { sys::MPI_Finalized(&mut done) };
        if done == 0 {
            // SAFETY: MPI was initialised by this universe and is not finalised.
            unsafe { sys::MPI_Finalize() };
        }
    }
}

/// The raw handle of an MPI object (rsmpi's `AsRaw`).
pub trait AsRaw {
    /// The handle type.
    type Raw;
    /// The handle, valid while `self` lives.
    fn as_raw(&self) -> Self::Raw;
}

/// An intracommunicator: `MPI_COMM_WORLD`, `MPI_COMM_SELF`, or a duplicate (freed on drop).
#[derive(Debug)]
pub struct SimpleCommunicator {
    raw: sys::MPI_Comm,
    owned: bool,
}

// SAFETY: a communicator handle is a value MPI lets any thread use (concurrently under
// MPI_THREAD_MULTIPLE, the caller's choice of level, as with rsmpi's communicators); the
// duplicate it may own is freed once, by the drop of the one owner.
unsafe impl Send for SimpleCommunicator {}
// SAFETY: as above; `&self` methods only pass the handle to MPI.
unsafe impl Sync for SimpleCommunicator {}

impl SimpleCommunicator {
    /// `MPI_COMM_WORLD`.
    pub fn world() -> SimpleCommunicator {
        SimpleCommunicator {
            raw: sys::MPI_COMM_WORLD,
            owned: false,
        }
    }

    /// `MPI_COMM_SELF`.
    pub fn self_comm() -> SimpleCommunicator {
        SimpleCommunicator {
            raw: sys::MPI_COMM_SELF,
            owned: false,
        }
    }
}

impl Drop for SimpleCommunicator {
    fn drop(&mut self) {
        if self.owned {
            let mut done = 0;
            // SAFETY: callable at any time.
            unsafe { sys::MPI_Finalized(&mut done) };
            if done == 0 {
                // SAFETY: a duplicate this value owns, freed once.
                unsafe { sys::MPI_Comm_free(&mut self.raw) };
            }
        }
    }
}

impl AsRaw for SimpleCommunicator {
    type Raw = sys::MPI_Comm;
    fn as_raw(&self) -> sys::MPI_Comm {
        self.raw
    }
}

impl MpiObject for SimpleCommunicator {
    fn raw_object(&self) -> RawObject {
        // SAFETY: a live communicator while `self` lives; handles allocated with it borrow it.
        unsafe { RawObject::comm(self.raw) }
    }
}

/// Communicator queries (rsmpi's `Communicator`).
pub trait Communicator: AsRaw<Raw = sys::MPI_Comm> {
    /// `MPI_Comm_rank`.
    fn rank(&self) -> Rank {
        let mut r = 0;
        // SAFETY: a live communicator; writes one int.
        ok("MPI_Comm_rank", unsafe {
            sys::MPI_Comm_rank(self.as_raw(), &mut r)
        });
        r
    }

    /// `MPI_Comm_size`.
    fn size(&self) -> Rank {
        let mut n = 0;
        // SAFETY: a live communicator; writes one int.
        ok("MPI_Comm_size", unsafe {
            sys::MPI_Comm_size(self.as_raw(), &mut n)
        });
        n
    }

    /// The process of rank `r`, to send to or receive from.
    fn process_at_rank(&self, r: Rank) -> Process<'_> {
        Process {
            comm: self.as_raw(),
            rank: r,
            _comm: PhantomData,
        }
    }

    /// `MPI_Abort`: ends every process of the communicator's job with `code`.
    fn abort(&self, code: c_int) -> ! {
        // SAFETY: a live communicator; MPI_Abort does not return where it succeeds.
        unsafe { sys::MPI_Abort(self.as_raw(), code) };
        std::process::abort()
    }

    /// `MPI_Comm_dup`: a communicator of the same group, freed when dropped.
    fn duplicate(&self) -> SimpleCommunicator {
        let mut raw = sys::MPI_COMM_NULL;
        // SAFETY: a live communicator; writes one handle.
        ok("MPI_Comm_dup", unsafe {
            sys::MPI_Comm_dup(self.as_raw(), &mut raw)
        });
        SimpleCommunicator { raw, owned: true }
    }
}

impl Communicator for SimpleCommunicator {}

/// Collective operations (rsmpi's `CommunicatorCollectives`).
pub trait CommunicatorCollectives: Communicator {
    /// `MPI_Barrier`.
    fn barrier(&self) {
        // SAFETY: a live communicator.
        ok("MPI_Barrier", unsafe { sys::MPI_Barrier(self.as_raw()) });
    }
}

impl CommunicatorCollectives for SimpleCommunicator {}

/// Types with an MPI datatype (rsmpi's `Equivalence`).
pub trait Equivalence: Copy + Default {
    /// The datatype handle.
    fn datatype() -> sys::MPI_Datatype;
}

macro_rules! equivalence {
    ($($t:ty => $dt:ident),* $(,)?) => {$(
        impl Equivalence for $t {
            fn datatype() -> sys::MPI_Datatype {
                sys::$dt
            }
        }
    )*};
}

equivalence! {
    i8 => MPI_INT8_T, u8 => MPI_UINT8_T, i16 => MPI_INT16_T, u16 => MPI_UINT16_T,
    i32 => MPI_INT32_T, u32 => MPI_UINT32_T, i64 => MPI_INT64_T, u64 => MPI_UINT64_T,
    f32 => MPI_FLOAT, f64 => MPI_DOUBLE, bool => MPI_C_BOOL,
}

/// What can be sent: a value, a slice, an array or a vector of [`Equivalence`] types.
pub trait Buffer {
    /// The element type.
    type Item: Equivalence;
    /// The elements.
    fn items(&self) -> &[Self::Item];
}

/// What can be received into.
pub trait BufferMut {
    /// The element type.
    type Item: Equivalence;
    /// The elements.
    fn items_mut(&mut self) -> &mut [Self::Item];
}

impl<T: Equivalence> Buffer for T {
    type Item = T;
    fn items(&self) -> &[T] {
        std::slice::from_ref(self)
    }
}
impl<T: Equivalence> Buffer for [T] {
    type Item = T;
    fn items(&self) -> &[T] {
        self
    }
}
impl<T: Equivalence, const N: usize> Buffer for [T; N] {
    type Item = T;
    fn items(&self) -> &[T] {
        self
    }
}
impl<T: Equivalence> Buffer for Vec<T> {
    type Item = T;
    fn items(&self) -> &[T] {
        self
    }
}
impl<T: Equivalence> BufferMut for T {
    type Item = T;
    fn items_mut(&mut self) -> &mut [T] {
        std::slice::from_mut(self)
    }
}
impl<T: Equivalence> BufferMut for [T] {
    type Item = T;
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
}
impl<T: Equivalence, const N: usize> BufferMut for [T; N] {
    type Item = T;
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
}

/// The status of a received message.
#[derive(Clone, Copy, Debug)]
pub struct Status(sys::MPI_Status);

impl Status {
    /// The sender's rank.
    pub fn source_rank(&self) -> Rank {
        self.0.MPI_SOURCE
    }

    /// The message's tag.
    pub fn tag(&self) -> Tag {
        self.0.MPI_TAG
    }
}

/// One rank of a communicator, as a destination or a source (rsmpi's `Process`).
#[derive(Clone, Copy, Debug)]
pub struct Process<'a> {
    comm: sys::MPI_Comm,
    rank: Rank,
    _comm: PhantomData<&'a SimpleCommunicator>,
}

impl Process<'_> {
    /// The rank.
    pub fn rank(&self) -> Rank {
        self.rank
    }
}

/// Sending (rsmpi's `Destination`).
pub trait Destination {
    /// `MPI_Send` with tag 0.
    fn send<B: Buffer + ?Sized>(&self, buf: &B) {
        self.send_with_tag(buf, 0)
    }

    /// `MPI_Send`.
    fn send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag);
}

impl Destination for Process<'_> {
    fn send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag) {
        let items = buf.items();
        let n = c_int::try_from(items.len()).expect("at most INT_MAX elements");
        // SAFETY: `n` elements of the datatype of `B::Item` are readable at the pointer; the
        // communicator outlives the process value.
        ok("MPI_Send", unsafe {
            sys::MPI_Send(
                items.as_ptr().cast::<c_void>(),
                n,
                B::Item::datatype(),
                self.rank,
                tag,
                self.comm,
            )
        });
    }
}

/// Receiving (rsmpi's `Source`).
pub trait Source {
    /// `MPI_Recv` of one value with any tag (`MPI_ANY_TAG`).
    fn receive<T: Equivalence>(&self) -> (T, Status) {
        let mut v = T::default();
        let s = self.receive_into_with_tag(&mut v, sys::MPI_ANY_TAG);
        (v, s)
    }

    /// `MPI_Recv` of one value with this tag.
    fn receive_with_tag<T: Equivalence>(&self, tag: Tag) -> (T, Status) {
        let mut v = T::default();
        let s = self.receive_into_with_tag(&mut v, tag);
        (v, s)
    }

    /// `MPI_Recv` into `buf`.
    fn receive_into_with_tag<B: BufferMut + ?Sized>(&self, buf: &mut B, tag: Tag) -> Status;

    /// `MPI_Probe`, `MPI_Get_count` and `MPI_Recv` of a message of any length, any tag.
    fn receive_vec<T: Equivalence>(&self) -> (Vec<T>, Status);

    /// `MPI_Probe` for a message with this tag: waits until one is pending.
    fn probe_with_tag(&self, tag: Tag) -> Status;

    /// `MPI_Irecv` into `buf`, completed by the request (rsmpi's scoped requests: the
    /// buffer stays borrowed until then).
    fn immediate_receive_into_with_tag<'a, 's, B: BufferMut + ?Sized>(
        &self,
        scope: &'s request::LocalScope<'a>,
        buf: &'a mut B,
        tag: Tag,
    ) -> request::Request<'a, 's>;

    /// `MPI_Iprobe` for a message with this tag: its status if one is pending.
    fn immediate_probe_with_tag(&self, tag: Tag) -> Option<Status>;

    /// `MPI_Iprobe` for a message with any tag.
    fn immediate_probe(&self) -> Option<Status> {
        self.immediate_probe_with_tag(sys::MPI_ANY_TAG)
    }
}

impl Source for Process<'_> {
    fn receive_into_with_tag<B: BufferMut + ?Sized>(&self, buf: &mut B, tag: Tag) -> Status {
        let items = buf.items_mut();
        let n = c_int::try_from(items.len()).expect("at most INT_MAX elements");
        let mut status = sys::MPI_Status::default();
        // SAFETY: `n` elements of the item datatype are writable at the pointer; the status is
        // writable; the communicator outlives the process value.
        ok("MPI_Recv", unsafe {
            sys::MPI_Recv(
                items.as_mut_ptr().cast::<c_void>(),
                n,
                B::Item::datatype(),
                self.rank,
                tag,
                self.comm,
                &mut status,
            )
        });
        Status(status)
    }

    fn probe_with_tag(&self, tag: Tag) -> Status {
        let mut status = sys::MPI_Status::default();
        // SAFETY: the status is writable; a live communicator.
        ok("MPI_Probe", unsafe {
            sys::MPI_Probe(self.rank, tag, self.comm, &mut status)
        });
        Status(status)
    }

    fn immediate_receive_into_with_tag<'a, 's, B: BufferMut + ?Sized>(
        &self,
        scope: &'s request::LocalScope<'a>,
        buf: &'a mut B,
        tag: Tag,
    ) -> request::Request<'a, 's> {
        let items = buf.items_mut();
        let n = c_int::try_from(items.len()).expect("at most INT_MAX elements");
        let mut raw = sys::MPI_REQUEST_NULL;
        // SAFETY: `n` elements of the item datatype are writable at the pointer, and stay
        // borrowed (for 'a) until the request completes (`Request::wait` or its drop).
        ok("MPI_Irecv", unsafe {
            sys::MPI_Irecv(
                items.as_mut_ptr().cast::<c_void>(),
                n,
                B::Item::datatype(),
                self.rank,
                tag,
                self.comm,
                &mut raw,
            )
        });
        request::Request::new(raw, scope)
    }

    fn immediate_probe_with_tag(&self, tag: Tag) -> Option<Status> {
        let mut status = sys::MPI_Status::default();
        let mut flag = 0;
        // SAFETY: the flag and status are writable; a live communicator.
        ok("MPI_Iprobe", unsafe {
            sys::MPI_Iprobe(self.rank, tag, self.comm, &mut flag, &mut status)
        });
        (flag != 0).then_some(Status(status))
    }

    fn receive_vec<T: Equivalence>(&self) -> (Vec<T>, Status) {
        let mut status = sys::MPI_Status::default();
        // SAFETY: the status is writable; a live communicator.
        ok("MPI_Probe", unsafe {
            sys::MPI_Probe(self.rank, sys::MPI_ANY_TAG, self.comm, &mut status)
        });
        let mut n = 0;
        // SAFETY: a status MPI_Probe filled; writes one int.
        ok("MPI_Get_count", unsafe {
            sys::MPI_Get_count(&status, T::datatype(), &mut n)
        });
        let mut v = vec![T::default(); usize::try_from(n).unwrap_or(0)];
        let s = self
            .with_source(status.MPI_SOURCE)
            .receive_into_with_tag(&mut v[..], status.MPI_TAG);
        (v, s)
    }
}

impl Process<'_> {
    fn with_source(&self, rank: Rank) -> Self {
        Process { rank, ..*self }
    }
}

/// rsmpi's scoped requests: a request borrows its buffer for the scope and is completed
/// before the scope ends.
pub mod request {
    use std::marker::PhantomData;

    use super::{Status, ok, sys};

    /// The scope requests are started in (rsmpi's `LocalScope`): buffers borrowed for `'a`.
    #[derive(Debug)]
    pub struct LocalScope<'a> {
        _buffers: PhantomData<&'a mut ()>,
    }

    /// Runs `f` with a scope for requests (rsmpi's `request::scope`).
    pub fn scope<'a, F, R>(f: F) -> R
    where
        F: FnOnce(&LocalScope<'a>) -> R,
    {
        f(&LocalScope {
            _buffers: PhantomData,
        })
    }

    /// A started operation on a buffer borrowed for `'a`; completed by [`Request::wait`], or
    /// by its drop (which waits: MPI must not write into a buffer given back).
    #[derive(Debug)]
    #[must_use = "a request completes when waited for"]
    pub struct Request<'a, 's> {
        raw: sys::MPI_Request,
        _scope: PhantomData<&'s LocalScope<'a>>,
    }

    impl<'a, 's> Request<'a, 's> {
        pub(super) fn new(raw: sys::MPI_Request, _scope: &'s LocalScope<'a>) -> Self {
            Request {
                raw,
                _scope: PhantomData,
            }
        }

        /// `MPI_Wait`: completes the operation.
        pub fn wait(mut self) -> Status {
            self.complete()
        }

        fn complete(&mut self) -> Status {
            let mut status = sys::MPI_Status::default();
            // SAFETY: an active request (or the null request, which MPI_Wait returns at once);
            // the status is writable.
            ok("MPI_Wait", unsafe {
                sys::MPI_Wait(&mut self.raw, &mut status)
            });
            self.raw = sys::MPI_REQUEST_NULL;
            Status(status)
        }
    }

    impl Drop for Request<'_, '_> {
        fn drop(&mut self) {
            if self.raw != sys::MPI_REQUEST_NULL {
                self.complete();
            }
        }
    }
}

/// Names of the rsmpi traits, for `use mpi::traits::*`.
pub mod traits {
    pub use super::{
        AsRaw, Buffer, BufferMut, Communicator, CommunicatorCollectives, Destination, Equivalence,
        Source,
    };
}

/// rsmpi's `topology` names.
pub mod topology {
    pub use super::{Communicator, Process, Rank, SimpleCommunicator};
}

/// rsmpi's `collective` names.
pub mod collective {
    pub use super::CommunicatorCollectives;
}

/// rsmpi's `point_to_point` names.
pub mod point_to_point {
    pub use super::{Destination, Source, Status};
}

/// rsmpi's `raw` names.
pub mod raw {
    pub use super::AsRaw;
}

/// rsmpi's `datatype` names.
pub mod datatype {
    pub use super::Equivalence;
}

/// rsmpi's `environment` names: the universe and what the library says of itself.
pub mod environment {
    pub use super::Universe;
    use super::{CStr, sys};

    /// `MPI_Get_library_version` (the fence's one call of it).
    pub fn library_version() -> crate::Result<String> {
        crate::ffi::get_library_version()
    }

    /// `MPI_Get_processor_name`.
    pub fn processor_name() -> crate::Result<String> {
        let mut buf = vec![0u8; sys::MPI_MAX_PROCESSOR_NAME as usize + 1];
        let mut len = 0;
        // SAFETY: the buffer holds MPI_MAX_PROCESSOR_NAME chars and a NUL.
        crate::raw::check(unsafe {
            sys::MPI_Get_processor_name(buf.as_mut_ptr().cast(), &mut len)
        })?;
        let s = CStr::from_bytes_until_nul(&buf).map_err(|_| crate::Error::LengthOverflow)?;
        Ok(s.to_string_lossy().into_owned())
    }

    /// `MPI_Wtime`.
    pub fn time() -> f64 {
        // SAFETY: no arguments; NaN without a library.
        unsafe { sys::MPI_Wtime() }
    }
}
