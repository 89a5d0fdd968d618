//! The trace of one rank: the records the engine and the wrappers make (regions entered and
//! left, messages, collectives, metric samples, MPI_T event instances) and the [`Sink`] that
//! takes them. Below it sit the sinks: [`Memory`] (the records kept in order, for tests and for
//! tools that read them back) and [`Otf2Sink`], the rank's part of the job's OTF2 archive. Every definition is local to the
//! rank that makes it (its references are this rank's numbers); a sink that writes a job's
//! archive unifies them across ranks, as Score-P does (OTF2's mapping tables).
//!
//! Records of one location come in time order; times are the engine's clock ticks
//! ([`Sink::clock_resolution`] says how many per second, [`Sink::clock_offset`] how this
//! rank's clock relates to rank 0's).

#![forbid(unsafe_code)]

mod memory;
mod otf2;

pub use self::memory::{Memory, Record};
pub use self::otf2::{ARCHIVE, Otf2Sink, TraceError, Written};
// OTF2's vocabulary, as mpit-otf2 names it (the types a sink's records carry).
pub use mpit_otf2::{CollectiveOp, MetricMode, MetricValue, Paradigm, RegionRole, ValueType};

/// A time on the engine's clock, in its ticks.
pub type Time = u64;

/// A location of this rank: a thread that calls MPI (OTF2's `Location`, type CPU thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocationRef(pub u32);

/// A region of this rank: an MPI function or a user region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionRef(pub u32);

/// A communicator of this rank, defined with its members' ranks in `MPI_COMM_WORLD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommRef(pub u32);

/// A metric class of this rank: one or more members sampled together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MetricRef(pub u32);

/// One point-to-point message as a record carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// The other side's rank in `comm`.
    pub peer: u32,
    /// The communicator.
    pub comm: CommRef,
    /// The message tag.
    pub tag: u32,
    /// The message's size in bytes.
    pub bytes: u64,
}

/// The end of a collective call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collective {
    /// Which collective.
    pub op: CollectiveOp,
    /// The communicator.
    pub comm: CommRef,
    /// The root's rank in `comm`, for rooted collectives.
    pub root: Option<u32>,
    /// Bytes this rank sent.
    pub sent: u64,
    /// Bytes this rank received.
    pub received: u64,
}

/// When a metric class's records occur (OTF2's `MetricOccurrence`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Occurrence {
    /// At region boundaries, beside their `Enter` or `Leave` (OTF2's `SYNCHRONOUS`): samples
    /// of performance variables.
    Sampled,
    /// At points of their own (OTF2's `ASYNCHRONOUS`): MPI_T event instances.
    Point,
}

/// One member of a metric class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricMember {
    /// Its name (a variable's name, `<event type>[<i>]`, `<event type>.dropped`).
    pub name: String,
    /// What it is.
    pub description: String,
    /// Its unit (`"bytes"`, `"#"`, ...).
    pub unit: String,
    /// The type of its values.
    pub value_type: ValueType,
    /// How its values are meant.
    pub mode: MetricMode,
}

/// What takes a rank's trace. Definitions return this rank's reference; a sink gives the same
/// reference for the same definition made twice. Events of one location come in time order.
pub trait Sink {
    /// Ticks of [`Time`] per second.
    fn clock_resolution(&mut self, ticks_per_second: u64);
    /// At `t` this rank's clock was `offset` ticks ahead of rank 0's (measured with a
    /// standard deviation of `stddev` ticks); given at least at the start and the end.
    fn clock_offset(&mut self, t: Time, offset: i64, stddev: f64);
    /// A property of the whole trace (`name` in `MPIT_PROF::...` form), e.g. whether the MPI
    /// has MPI_T events.
    fn property(&mut self, name: &str, value: &str);

    /// A thread of this rank that calls MPI.
    fn location(&mut self, name: &str) -> LocationRef;
    /// A region.
    fn region(&mut self, name: &str, paradigm: Paradigm, role: RegionRole) -> RegionRef;
    /// A communicator: its members' world ranks in the order of their ranks in it.
    fn comm(&mut self, name: &str, world_ranks: &[u32]) -> CommRef;
    /// A metric class of `members`, recorded together, whose records occur as `occurrence`
    /// says.
    fn metric(&mut self, name: &str, occurrence: Occurrence, members: &[MetricMember])
    -> MetricRef;

    /// A second reference of `region`, the one whose records take the fewest bytes in this
    /// sink (OTF2 writes a reference of 0 in one byte, 1 to 255 in two: OTF2 3.0's
    /// compressed integers), for the region the caller expects the most records of; both
    /// references name the same region. At most one a sink; `None` where the sink has none
    /// to give (the default) or gave it already.
    fn hot_region(&mut self, region: RegionRef) -> Option<RegionRef> {
        let _ = region;
        None
    }

    /// `region` entered.
    fn enter(&mut self, at: LocationRef, t: Time, region: RegionRef);
    /// `region` left.
    fn leave(&mut self, at: LocationRef, t: Time, region: RegionRef);
    /// A blocking send (OTF2 `MpiSend`).
    fn mpi_send(&mut self, at: LocationRef, t: Time, msg: Message);
    /// A non-blocking send posted (OTF2 `MpiIsend`); `request` names it until completion.
    fn mpi_isend(&mut self, at: LocationRef, t: Time, msg: Message, request: u64);
    /// A non-blocking send completed (OTF2 `MpiIsendComplete`).
    fn mpi_isend_complete(&mut self, at: LocationRef, t: Time, request: u64);
    /// A non-blocking receive posted (OTF2 `MpiIrecvRequest`).
    fn mpi_irecv_request(&mut self, at: LocationRef, t: Time, request: u64);
    /// A blocking receive completed (OTF2 `MpiRecv`).
    fn mpi_recv(&mut self, at: LocationRef, t: Time, msg: Message);
    /// A non-blocking receive completed (OTF2 `MpiIrecv`).
    fn mpi_irecv(&mut self, at: LocationRef, t: Time, msg: Message, request: u64);
    /// A request cancelled (OTF2 `MpiRequestCancelled`).
    fn mpi_request_cancelled(&mut self, at: LocationRef, t: Time, request: u64);
    /// A collective call begun (OTF2 `MpiCollectiveBegin`).
    fn collective_begin(&mut self, at: LocationRef, t: Time);
    /// A collective call ended (OTF2 `MpiCollectiveEnd`).
    fn collective_end(&mut self, at: LocationRef, t: Time, c: Collective);
    /// A sample of `metric`: one value per member, in the members' order.
    fn metric_event(&mut self, at: LocationRef, t: Time, metric: MetricRef, values: &[MetricValue]);
    /// Records this sink could not keep (a full buffer that could not be flushed, ...), so far.
    fn lost(&self) -> u64;
}
