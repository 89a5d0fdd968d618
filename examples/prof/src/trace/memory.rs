//! The in-memory sink: every definition and record kept in order, for tests and for code that
//! reads a rank's trace back before (or instead of) writing an archive.

#![forbid(unsafe_code)]

use super::{
    Collective, CommRef, LocationRef, Message, MetricMember, MetricRef, MetricValue, Occurrence,
    Paradigm, RegionRef, RegionRole, Sink, Time,
};

/// One event record of [`Memory`], with its location and time.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    Enter(LocationRef, Time, RegionRef),
    Leave(LocationRef, Time, RegionRef),
    MpiSend(LocationRef, Time, Message),
    MpiIsend(LocationRef, Time, Message, u64),
    MpiIsendComplete(LocationRef, Time, u64),
    MpiIrecvRequest(LocationRef, Time, u64),
    MpiRecv(LocationRef, Time, Message),
    MpiIrecv(LocationRef, Time, Message, u64),
    MpiRequestCancelled(LocationRef, Time, u64),
    CollectiveBegin(LocationRef, Time),
    CollectiveEnd(LocationRef, Time, Collective),
    Metric(LocationRef, Time, MetricRef, Vec<MetricValue>),
}

/// A [`Sink`] that keeps everything: definitions in the order made (a reference is the
/// index), records in the order given.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    /// Ticks per second, once given.
    pub ticks_per_second: Option<u64>,
    /// `(t, offset, stddev)` as given.
    pub clock_offsets: Vec<(Time, i64, f64)>,
    /// Properties as given (a later value of a name replaces the earlier one).
    pub properties: Vec<(String, String)>,
    /// Locations' names.
    pub locations: Vec<String>,
    /// Regions.
    pub regions: Vec<(String, Paradigm, RegionRole)>,
    /// Communicators with their members' world ranks.
    pub comms: Vec<(String, Vec<u32>)>,
    /// Metric classes, with when their records occur.
    pub metrics: Vec<(String, Occurrence, Vec<MetricMember>)>,
    /// Every record, in order.
    pub records: Vec<Record>,
}

impl Memory {
    /// An empty sink.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// The name of a region.
    pub fn region_name(&self, r: RegionRef) -> Option<&str> {
        self.regions.get(r.0 as usize).map(|(n, _, _)| n.as_str())
    }
}

pub(super) fn index_of<T>(
    v: &mut Vec<T>,
    same: impl Fn(&T) -> bool,
    new: impl FnOnce() -> T,
) -> u32 {
    match v.iter().position(same) {
        Some(i) => i as u32,
        None => {
            v.push(new());
            (v.len() - 1) as u32
        }
    }
}

impl Sink for Memory {
    fn clock_resolution(&mut self, ticks_per_second: u64) {
        self.ticks_per_second = Some(ticks_per_second);
    }
    fn clock_offset(&mut self, t: Time, offset: i64, stddev: f64) {
        self.clock_offsets.push((t, offset, stddev));
    }
    fn property(&mut self, name: &str, value: &str) {
        self.properties.retain(|(n, _)| n != name);
        self.properties.push((name.into(), value.into()));
    }
    fn location(&mut self, name: &str) -> LocationRef {
        LocationRef(index_of(&mut self.locations, |n| n == name, || name.into()))
    }
    fn region(&mut self, name: &str, paradigm: Paradigm, role: RegionRole) -> RegionRef {
        RegionRef(index_of(
            &mut self.regions,
            |(n, p, r)| n == name && *p == paradigm && *r == role,
            || (name.into(), paradigm, role),
        ))
    }
    fn comm(&mut self, name: &str, world_ranks: &[u32]) -> CommRef {
        CommRef(index_of(
            &mut self.comms,
            |(n, w)| n == name && w == world_ranks,
            || (name.into(), world_ranks.to_vec()),
        ))
    }
    fn metric(
        &mut self,
        name: &str,
        occurrence: Occurrence,
        members: &[MetricMember],
    ) -> MetricRef {
        MetricRef(index_of(
            &mut self.metrics,
            |(n, o, m)| n == name && *o == occurrence && m == members,
            || (name.into(), occurrence, members.to_vec()),
        ))
    }
    fn enter(&mut self, at: LocationRef, t: Time, region: RegionRef) {
        self.records.push(Record::Enter(at, t, region));
    }
    fn leave(&mut self, at: LocationRef, t: Time, region: RegionRef) {
        self.records.push(Record::Leave(at, t, region));
    }
    fn mpi_send(&mut self, at: LocationRef, t: Time, msg: Message) {
        self.records.push(Record::MpiSend(at, t, msg));
    }
    fn mpi_isend(&mut self, at: LocationRef, t: Time, msg: Message, request: u64) {
        self.records.push(Record::MpiIsend(at, t, msg, request));
    }
    fn mpi_isend_complete(&mut self, at: LocationRef, t: Time, request: u64) {
        self.records.push(Record::MpiIsendComplete(at, t, request));
    }
    fn mpi_irecv_request(&mut self, at: LocationRef, t: Time, request: u64) {
        self.records.push(Record::MpiIrecvRequest(at, t, request));
    }
    fn mpi_recv(&mut self, at: LocationRef, t: Time, msg: Message) {
        self.records.push(Record::MpiRecv(at, t, msg));
    }
    fn mpi_irecv(&mut self, at: LocationRef, t: Time, msg: Message, request: u64) {
        self.records.push(Record::MpiIrecv(at, t, msg, request));
    }
    fn mpi_request_cancelled(&mut self, at: LocationRef, t: Time, request: u64) {
        self.records
            .push(Record::MpiRequestCancelled(at, t, request));
    }
    fn collective_begin(&mut self, at: LocationRef, t: Time) {
        self.records.push(Record::CollectiveBegin(at, t));
    }
    fn collective_end(&mut self, at: LocationRef, t: Time, c: Collective) {
        self.records.push(Record::CollectiveEnd(at, t, c));
    }
    fn metric_event(
        &mut self,
        at: LocationRef,
        t: Time,
        metric: MetricRef,
        values: &[MetricValue],
    ) {
        self.records
            .push(Record::Metric(at, t, metric, values.to_vec()));
    }
    fn lost(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_made_twice_has_one_reference_and_records_keep_their_order() {
        let mut m = Memory::new();
        let send = m.region("MPI_Send", Paradigm::Mpi, RegionRole::PointToPoint);
        let user = m.region("solve", Paradigm::User, RegionRole::Function);
        assert_ne!(send, user);
        assert_eq!(
            m.region("MPI_Send", Paradigm::Mpi, RegionRole::PointToPoint),
            send
        );
        let world = m.comm("MPI_COMM_WORLD", &[0, 1]);
        assert_ne!(m.comm("MPI_COMM_WORLD", &[1, 0]), world);
        let loc = m.location("Master thread");
        let msg = Message {
            peer: 1,
            comm: world,
            tag: 7,
            bytes: 8,
        };
        m.enter(loc, 1, send);
        m.mpi_send(loc, 2, msg);
        m.leave(loc, 3, send);
        m.property("MPIT_PROF::MPI_T_EVENTS", "a");
        m.property("MPIT_PROF::MPI_T_EVENTS", "b");
        assert_eq!(
            m.records,
            [
                Record::Enter(loc, 1, send),
                Record::MpiSend(loc, 2, msg),
                Record::Leave(loc, 3, send),
            ]
        );
        assert_eq!(m.region_name(user), Some("solve"));
        assert_eq!(
            m.properties,
            [("MPIT_PROF::MPI_T_EVENTS".to_string(), "b".to_string())]
        );
    }
}
