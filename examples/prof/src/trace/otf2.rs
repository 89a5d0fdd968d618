//! The OTF2 sink: one rank's part of the job's archive, written through `mpit-otf2` with this
//! rank's own (local) definitions, unified across ranks at the end as Score-P does it: every
//! rank's definitions reduced up the binomial tree (`tree::reduce`, duplicates merged at each
//! step), the union broadcast down it, each rank's mapping tables (local id -> global id)
//! written beside its events, the global definitions by rank 0 alone. Events go to OTF2's
//! buffers as they come (under the archive's memory bound), one file per location.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Occurrence;
use super::memory::index_of;
use super::{
    Collective, CommRef, LocationRef, Message, MetricMember, MetricMode, MetricRef, MetricValue,
    Paradigm, RegionRef, RegionRole, Sink, Time, ValueType,
};
use crate::tree::{self, Pmpi};
use mpit_otf2::{Archive, GroupType, Mapping, Msg, Options};

/// The archive's name in its directory (`traces.otf2`, `traces/`, `traces.def`), Score-P's.
pub const ARCHIVE: &str = "traces";

/// A region as the ranks exchange it: name, paradigm, role.
type RegionDef = (String, u8, u8);
/// A communicator: name, members' world ranks.
type CommDef = (String, Vec<u32>);
/// A metric class: name, whether sampled at region boundaries (OTF2's synchronous), members
/// (name, description, unit, value type, mode).
type MetricDef = (String, bool, Vec<(String, String, String, u8, u8)>);

/// What one rank contributes to the global definitions besides its tables.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RankDef {
    rank: u32,
    host: String,
    /// Its locations: name, number of events.
    locations: Vec<(String, u64)>,
}

/// A part of the job's definitions: one rank's, or a subtree's merged.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Part {
    tables: Tables,
    ranks: Vec<RankDef>,
    /// The earliest (`u64::MAX`: none) and the latest time seen (on rank 0's clock).
    start: u64,
    end: u64,
    /// Rank 0's clock's ticks per second (0 from the others).
    resolution: u64,
    properties: Vec<(String, String)>,
    /// Records the ranks could not write.
    lost: u64,
}

/// The unified tables: a definition's global id is its index.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Tables {
    regions: Vec<RegionDef>,
    comms: Vec<CommDef>,
    metrics: Vec<MetricDef>,
}

/// `local`'s definitions added to `into` where absent; returns each one's index in `into`.
fn union<T: PartialEq + Clone>(into: &mut Vec<T>, local: &[T]) -> Vec<u64> {
    local
        .iter()
        .map(|d| u64::from(index_of(into, |x| x == d, || d.clone())))
        .collect()
}

fn merge(mut a: Part, b: Part) -> Part {
    union(&mut a.tables.regions, &b.tables.regions);
    union(&mut a.tables.comms, &b.tables.comms);
    union(&mut a.tables.metrics, &b.tables.metrics);
    a.ranks.extend(b.ranks);
    if b.start < a.start {
        a.start = b.start;
    }
    a.end = a.end.max(b.end);
    a.resolution = a.resolution.max(b.resolution);
    for (n, v) in b.properties {
        match a.properties.iter_mut().find(|(x, _)| *x == n) {
            Some((_, w)) if !w.split("; ").any(|x| x == v) => {
                w.push_str("; ");
                w.push_str(&v);
            }
            Some(_) => {}
            None => a.properties.push((n, v)),
        }
    }
    a.lost += b.lost;
    a
}

fn paradigm_code(p: Paradigm) -> u8 {
    match p {
        Paradigm::Mpi => 0,
        Paradigm::User => 1,
        Paradigm::Measurement => 2,
    }
}

fn paradigm(c: u8) -> Paradigm {
    match c {
        0 => Paradigm::Mpi,
        1 => Paradigm::User,
        _ => Paradigm::Measurement,
    }
}

fn role_code(r: RegionRole) -> u8 {
    match r {
        RegionRole::Function => 0,
        RegionRole::PointToPoint => 1,
        RegionRole::Collective => 2,
        RegionRole::Barrier => 3,
        RegionRole::Other => 4,
    }
}

fn role(c: u8) -> RegionRole {
    match c {
        0 => RegionRole::Function,
        1 => RegionRole::PointToPoint,
        2 => RegionRole::Collective,
        3 => RegionRole::Barrier,
        _ => RegionRole::Other,
    }
}

fn value_code(v: ValueType) -> u8 {
    match v {
        ValueType::Int => 0,
        ValueType::Uint => 1,
        ValueType::Double => 2,
    }
}

fn value_type(c: u8) -> ValueType {
    match c {
        0 => ValueType::Int,
        1 => ValueType::Uint,
        _ => ValueType::Double,
    }
}

fn mode_code(m: MetricMode) -> u8 {
    match m {
        MetricMode::AccumulatedStart => 0,
        MetricMode::AbsolutePoint => 1,
        MetricMode::RelativeLast => 2,
    }
}

fn mode(c: u8) -> MetricMode {
    match c {
        0 => MetricMode::AccumulatedStart,
        1 => MetricMode::AbsolutePoint,
        _ => MetricMode::RelativeLast,
    }
}

/// What went wrong writing a trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The OTF2 library refused a call.
    #[error(transparent)]
    Otf2(#[from] mpit_otf2::Error),
    /// MPI refused the tool's private communicator.
    #[error("MPI refused a duplicate of the communicator (MPI_Comm_dup)")]
    NoComm,
    /// The definitions did not reach rank 0, or the union did not come back.
    #[error("the ranks' definitions could not be unified: {0}")]
    Unification(String),
}

/// What a finished trace holds, on rank 0 (the others learn only their own part).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The anchor file (`<dir>/traces.otf2`).
    pub anchor: PathBuf,
    /// Ranks, on rank 0.
    pub ranks: usize,
    /// This rank's events per location.
    pub events: Vec<u64>,
    /// Records not written, over the job on rank 0.
    pub lost: u64,
    /// Buffers flushed early at the memory bound (this rank).
    pub early_flushes: u64,
}

/// A rank's part of the job's OTF2 archive: a [`Sink`] whose references are this rank's.
/// Created and finished by every rank of the communicator together.
pub struct Otf2Sink {
    archive: Archive,
    /// The tree's communicator (the archive's own duplicate, which OTF2 uses between).
    comm: crate::tree::CommHandle,
    rank: u32,
    host: String,
    anchor: PathBuf,
    resolution: u64,
    offsets: Vec<(Time, i64, f64)>,
    properties: Vec<(String, String)>,
    locations: Vec<String>,
    /// The regions defined; local id `i + 1` is `regions[i]`, local id 0 the hot region
    /// ([`Sink::hot_region`]), an alias of `regions[hot]`.
    regions: Vec<RegionDef>,
    hot: Option<u32>,
    comms: Vec<CommDef>,
    metrics: Vec<MetricDef>,
    /// The earliest record's time (`Time::MAX` before the first).
    start: Time,
    end: Time,
    lost: u64,
    first_error: Option<mpit_otf2::Error>,
}

impl Otf2Sink {
    /// Opens `dir/traces.otf2` for the ranks of `comm` (each calls it), on a private
    /// duplicate of `comm`; `host` is this rank's node in the system tree.
    pub(crate) fn create(
        dir: &Path,
        comm: crate::tree::CommHandle,
        host: &str,
        options: Options,
    ) -> Result<Otf2Sink, TraceError> {
        let coll = Pmpi::dup(comm).ok_or(TraceError::NoComm)?;
        let (rank, tree_comm) = (mpit_otf2::Collectives::rank(&coll), coll.comm());
        let archive = Archive::create(dir, ARCHIVE, coll, options)?;
        Ok(Otf2Sink {
            archive,
            comm: tree_comm,
            rank,
            host: host.to_owned(),
            anchor: dir.join(format!("{ARCHIVE}.otf2")),
            resolution: 1_000_000_000,
            offsets: Vec::new(),
            properties: Vec::new(),
            locations: Vec::new(),
            regions: Vec::new(),
            hot: None,
            comms: Vec::new(),
            metrics: Vec::new(),
            start: Time::MAX,
            end: 0,
            lost: 0,
            first_error: None,
        })
    }

    /// The global id of this rank's location `l`: the rank in the high half.
    fn location_id(rank: u32, l: u32) -> mpit_otf2::LocationRef {
        mpit_otf2::LocationRef((u64::from(rank) << 32) | u64::from(l))
    }

    /// `t` within the span of the records (two comparisons without a branch: every record).
    #[inline(always)]
    fn seen(&mut self, t: Time) {
        self.start = self.start.min(t);
        self.end = self.end.max(t);
    }

    /// Counts a record that could not be written and keeps the first error.
    #[inline(always)]
    fn written(&mut self, t: Time, r: mpit_otf2::Result<()>) {
        self.seen(t);
        if let Err(e) = r {
            self.failed(e);
        }
    }

    #[cold]
    #[inline(never)]
    fn failed(&mut self, e: mpit_otf2::Error) {
        self.lost += 1;
        self.first_error.get_or_insert(e);
    }

    fn msg(m: Message) -> Msg {
        Msg {
            peer: m.peer,
            comm: m.comm.0,
            tag: m.tag,
            bytes: m.bytes,
        }
    }

    /// Counts `n` records lost before they reached the sink (a full queue upstream).
    pub fn add_lost(&mut self, n: u64) {
        self.lost += n;
    }

    /// The first record this sink could not write, if any.
    pub fn first_error(&self) -> Option<&mpit_otf2::Error> {
        self.first_error.as_ref()
    }

    /// Ends the trace (every rank of the communicator): the events closed, the definitions
    /// unified up and down the tree, the mapping tables and clock offsets written, rank 0's
    /// global definitions, the archive closed.
    pub(crate) fn finish(mut self) -> Result<Written, TraceError> {
        let counts = self.archive.close_events()?;
        let events: Vec<u64> = (0..self.locations.len() as u32)
            .map(|l| {
                let id = Self::location_id(self.rank, l);
                counts.iter().find(|(x, _)| *x == id).map_or(0, |(_, n)| *n)
            })
            .collect();
        let mine = Part {
            tables: Tables {
                regions: self.regions.clone(),
                comms: self.comms.clone(),
                metrics: self.metrics.clone(),
            },
            ranks: vec![RankDef {
                rank: self.rank,
                host: self.host.clone(),
                locations: self.locations.iter().cloned().zip(events.clone()).collect(),
            }],
            start: self.start,
            end: self.end,
            // Rank 0's: the other ranks' times come onto its clock by their offsets.
            resolution: if self.rank == 0 { self.resolution } else { 0 },
            properties: self.properties.clone(),
            lost: self.lost,
        };
        let bytes =
            serde_json::to_vec(&mine).map_err(|e| TraceError::Unification(e.to_string()))?;
        let mut failed = None;
        let all = tree::reduce(self.comm, bytes, &mut |acc, child| {
            let parse = |b: &[u8]| serde_json::from_slice::<Part>(b);
            match (parse(&acc), parse(child)) {
                (Ok(a), Ok(b)) => serde_json::to_vec(&merge(a, b)).unwrap_or(acc),
                (_, Err(e)) | (Err(e), _) => {
                    failed.get_or_insert(e.to_string());
                    acc
                }
            }
        });
        let job: Option<Part> = match all {
            Some(b) => Some(
                serde_json::from_slice(&b).map_err(|e| TraceError::Unification(e.to_string()))?,
            ),
            None => None,
        };
        let tables = job
            .as_ref()
            .map(|j| serde_json::to_vec(&j.tables).unwrap_or_default());
        let tables: Tables = serde_json::from_slice(&tree::bcast(self.comm, tables))
            .map_err(|e| TraceError::Unification(format!("the union did not arrive: {e}")))?;
        // This rank's mapping tables: each local definition's index in the union.
        let regions = ids(&tables.regions, &self.regions)?;
        // Local id 0 first: the hot region's alias (the first region's where none was
        // chosen: an entry no record uses).
        let regions: Vec<u64> = match regions.get(self.hot.unwrap_or(0) as usize) {
            Some(&hot) => std::iter::once(hot).chain(regions).collect(),
            None => regions,
        };
        let maps = [
            (Mapping::Region, regions),
            (Mapping::Comm, ids(&tables.comms, &self.comms)?),
            (Mapping::Metric, ids(&tables.metrics, &self.metrics)?),
        ];
        // OTF2's offset is what takes a local time to the global clock.
        let offsets: Vec<(u64, i64, f64)> =
            self.offsets.iter().map(|&(t, o, s)| (t, -o, s)).collect();
        for l in 0..self.locations.len() as u32 {
            self.archive
                .write_local(Self::location_id(self.rank, l), &maps, &offsets)?;
        }
        let mut written = Written {
            anchor: self.anchor.clone(),
            ranks: 0,
            events,
            lost: self.lost,
            early_flushes: self.archive.early_flushes(),
        };
        if let Some(job) = job {
            if let Some(e) = failed {
                return Err(TraceError::Unification(e));
            }
            written.ranks = job.ranks.len();
            written.lost = job.lost;
            globals(&mut self.archive, &job)?;
        }
        self.archive.close()?;
        Ok(written)
    }
}

/// Each of `local`'s definitions' index in `global`.
fn ids<T: PartialEq>(global: &[T], local: &[T]) -> Result<Vec<u64>, TraceError> {
    local
        .iter()
        .map(|d| {
            global
                .iter()
                .position(|g| g == d)
                .map(|i| i as u64)
                .ok_or_else(|| {
                    TraceError::Unification("a local definition is not in the union".into())
                })
        })
        .collect()
}

/// Rank 0's global definitions of the job, in dependency order.
fn globals(archive: &mut Archive, job: &Part) -> Result<(), TraceError> {
    for (n, v) in &job.properties {
        archive.set_property(n, v)?;
    }
    if job.lost > 0 {
        archive.set_property("MPIT_PROF::LOST_RECORDS", &job.lost.to_string())?;
    }
    let mut ranks = job.ranks.clone();
    ranks.sort_by_key(|r| r.rank);
    let mut g = archive.globals()?;
    // `u64::MAX`: no rank wrote a record.
    let start = if job.start == u64::MAX {
        job.end
    } else {
        job.start
    };
    g.clock(job.resolution, start, job.end.saturating_sub(start))?;
    for (i, (name, p, r)) in job.tables.regions.iter().enumerate() {
        g.region(i as u32, name, role(*r), paradigm(*p))?;
    }
    // The system tree: the machine, its nodes by host name.
    g.system_tree_node(0, "machine", "machine", None)?;
    let mut hosts: Vec<&str> = Vec::new();
    for r in &ranks {
        if !hosts.contains(&r.host.as_str()) {
            hosts.push(&r.host);
            g.system_tree_node(hosts.len() as u32, &r.host, "node", Some(0))?;
        }
    }
    for r in &ranks {
        let node = 1 + hosts.iter().position(|h| *h == r.host).unwrap_or(0) as u32;
        g.location_group(r.rank, &format!("MPI Rank {}", r.rank), node)?;
    }
    for r in &ranks {
        for (l, (name, events)) in r.locations.iter().enumerate() {
            g.location(
                Otf2Sink::location_id(r.rank, l as u32),
                name,
                *events,
                r.rank,
            )?;
        }
    }
    // Group 0: each world rank's location (its first thread), what communicators' members
    // index; then one group per communicator of its members' world ranks.
    let world: Vec<u64> = ranks
        .iter()
        .map(|r| Otf2Sink::location_id(r.rank, 0).0)
        .collect();
    g.group(0, "", GroupType::CommLocations, &world)?;
    for (i, (name, members)) in job.tables.comms.iter().enumerate() {
        let m: Vec<u64> = members.iter().map(|&w| u64::from(w)).collect();
        g.group(1 + i as u32, "", GroupType::CommGroup, &m)?;
        g.comm(i as u32, name, 1 + i as u32)?;
    }
    let mut member = 0u32;
    for (i, (_, sampled, members)) in job.tables.metrics.iter().enumerate() {
        let first = member;
        for (name, description, unit, v, m) in members {
            g.metric_member(member, name, description, unit, value_type(*v), mode(*m))?;
            member += 1;
        }
        let ids: Vec<u32> = (first..member).collect();
        g.metric_class(i as u32, &ids, *sampled)?;
    }
    Ok(())
}

impl Sink for Otf2Sink {
    fn clock_resolution(&mut self, ticks_per_second: u64) {
        self.resolution = ticks_per_second;
    }
    fn clock_offset(&mut self, t: Time, offset: i64, stddev: f64) {
        self.offsets.push((t, offset, stddev));
    }
    fn property(&mut self, name: &str, value: &str) {
        self.properties.retain(|(n, _)| n != name);
        self.properties.push((name.into(), value.into()));
    }
    fn location(&mut self, name: &str) -> LocationRef {
        LocationRef(index_of(&mut self.locations, |n| n == name, || name.into()))
    }
    fn region(&mut self, name: &str, p: Paradigm, r: RegionRole) -> RegionRef {
        let d = (name.to_owned(), paradigm_code(p), role_code(r));
        RegionRef(index_of(&mut self.regions, |x| *x == d, || d.clone()) + 1)
    }
    fn hot_region(&mut self, region: RegionRef) -> Option<RegionRef> {
        let i = region.0.checked_sub(1)?;
        if self.hot.is_some() || i as usize >= self.regions.len() {
            return None;
        }
        self.hot = Some(i);
        Some(RegionRef(0))
    }
    fn comm(&mut self, name: &str, world_ranks: &[u32]) -> CommRef {
        let d = (name.to_owned(), world_ranks.to_vec());
        CommRef(index_of(&mut self.comms, |x| *x == d, || d.clone()))
    }
    fn metric(
        &mut self,
        name: &str,
        occurrence: Occurrence,
        members: &[MetricMember],
    ) -> MetricRef {
        let d = (
            name.to_owned(),
            occurrence == Occurrence::Sampled,
            members
                .iter()
                .map(|m| {
                    (
                        m.name.clone(),
                        m.description.clone(),
                        m.unit.clone(),
                        value_code(m.value_type),
                        mode_code(m.mode),
                    )
                })
                .collect(),
        );
        MetricRef(index_of(&mut self.metrics, |x| *x == d, || d.clone()))
    }
    fn enter(&mut self, at: LocationRef, t: Time, region: RegionRef) {
        let r = self
            .archive
            .enter(Self::location_id(self.rank, at.0), t, region.0);
        self.written(t, r);
    }
    fn leave(&mut self, at: LocationRef, t: Time, region: RegionRef) {
        let r = self
            .archive
            .leave(Self::location_id(self.rank, at.0), t, region.0);
        self.written(t, r);
    }
    fn mpi_send(&mut self, at: LocationRef, t: Time, msg: Message) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.mpi_send(l, t, Self::msg(msg));
        self.written(t, r);
    }
    fn mpi_isend(&mut self, at: LocationRef, t: Time, msg: Message, request: u64) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.mpi_isend(l, t, Self::msg(msg), request);
        self.written(t, r);
    }
    fn mpi_isend_complete(&mut self, at: LocationRef, t: Time, request: u64) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.mpi_isend_complete(l, t, request);
        self.written(t, r);
    }
    fn mpi_irecv_request(&mut self, at: LocationRef, t: Time, request: u64) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.mpi_irecv_request(l, t, request);
        self.written(t, r);
    }
    fn mpi_recv(&mut self, at: LocationRef, t: Time, msg: Message) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.mpi_recv(l, t, Self::msg(msg));
        self.written(t, r);
    }
    fn mpi_irecv(&mut self, at: LocationRef, t: Time, msg: Message, request: u64) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.mpi_irecv(l, t, Self::msg(msg), request);
        self.written(t, r);
    }
    fn mpi_request_cancelled(&mut self, at: LocationRef, t: Time, request: u64) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.mpi_request_cancelled(l, t, request);
        self.written(t, r);
    }
    fn collective_begin(&mut self, at: LocationRef, t: Time) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.collective_begin(l, t);
        self.written(t, r);
    }
    fn collective_end(&mut self, at: LocationRef, t: Time, c: Collective) {
        let l = Self::location_id(self.rank, at.0);
        let r = self
            .archive
            .collective_end(l, t, c.op, c.comm.0, c.root, c.sent, c.received);
        self.written(t, r);
    }
    fn metric_event(
        &mut self,
        at: LocationRef,
        t: Time,
        metric: MetricRef,
        values: &[MetricValue],
    ) {
        let l = Self::location_id(self.rank, at.0);
        let r = self.archive.metric(l, t, metric.0, values);
        self.written(t, r);
    }
    fn lost(&self) -> u64 {
        self.lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Collective;
    use mpit_otf2::CollectiveOp;
    use std::process::Command;

    const CHILD: &str = "MPIT_PROF_OTF2_CHILD";
    const DIR: &str = "MPIT_PROF_OTF2_DIR";

    /// Each rank of 3 writes a ring of messages with definitions made in a different order
    /// (rank 1 defines `solve` before `MPI_Send`, rank 2 also a communicator of its own), so
    /// the unification and the mapping tables are what make the readers' names right.
    fn child() {
        mpit_test_support::mpi::init_mpi();
        let world = tree::comm_world();
        let dir = PathBuf::from(std::env::var_os(DIR).expect("the archive's directory"));
        let mut s = Otf2Sink::create(&dir, world, "node-a", Options::default()).unwrap();
        let (rank, size) = (s.rank, 3u32);
        let loc = s.location("Master thread");
        let solve = if rank == 1 {
            Some(s.region("solve", Paradigm::User, RegionRole::Function))
        } else {
            None
        };
        let send = s.region("MPI_Send", Paradigm::Mpi, RegionRole::PointToPoint);
        let recv = s.region("MPI_Recv", Paradigm::Mpi, RegionRole::PointToPoint);
        if rank == 2 {
            s.comm("comm#1", &[2]);
        }
        let cw = s.comm("MPI_COMM_WORLD", &[0, 1, 2]);
        let t0 = 1000 * u64::from(rank + 1);
        if let Some(r) = solve {
            s.enter(loc, t0, r);
        }
        let to = Message {
            peer: (rank + 1) % size,
            comm: cw,
            tag: 7,
            bytes: 8 * u64::from(rank + 1),
        };
        s.enter(loc, t0 + 1, send);
        s.mpi_send(loc, t0 + 2, to);
        s.leave(loc, t0 + 3, send);
        let from = (rank + size - 1) % size;
        let got = Message {
            peer: from,
            comm: cw,
            tag: 7,
            bytes: 8 * u64::from(from + 1),
        };
        s.enter(loc, t0 + 4, recv);
        s.mpi_recv(loc, t0 + 5, got);
        s.leave(loc, t0 + 6, recv);
        s.collective_begin(loc, t0 + 7);
        s.collective_end(
            loc,
            t0 + 8,
            Collective {
                op: CollectiveOp::Bcast,
                comm: cw,
                root: Some(0),
                sent: if rank == 0 { 16 } else { 0 },
                received: if rank == 0 { 0 } else { 8 },
            },
        );
        if rank == 0 {
            let members = [0, 1].map(|i| MetricMember {
                name: format!("unexp_message_enqueued[{i}]"),
                description: "an element of the event".into(),
                unit: "#".into(),
                value_type: ValueType::Uint,
                mode: MetricMode::AbsolutePoint,
            });
            let m = s.metric("unexp_message_enqueued", Occurrence::Point, &members);
            s.metric_event(
                loc,
                t0 + 9,
                m,
                &[MetricValue::Uint(1), MetricValue::Uint(64)],
            );
            s.property("MPIT_PROF::MPI_T_EVENTS", "2 types");
        }
        if let Some(r) = solve {
            s.leave(loc, t0 + 10, r);
        }
        s.clock_offset(t0, 0, 0.0);
        let w = s.finish().unwrap();
        assert_eq!(
            w.events,
            vec![if rank == 1 {
                10
            } else if rank == 0 {
                9
            } else {
                8
            }]
        );
        if rank == 0 {
            assert_eq!(w.ranks, 3);
            assert_eq!(w.lost, 0);
        }
        println!("OTF2_OK {rank}");
        tree::finalize();
    }

    #[test]
    fn three_ranks_write_one_archive_the_readers_see_unified() {
        if std::env::var_os(CHILD).is_some() {
            return child();
        }
        if mpit_otf2::available().is_err() {
            panic!("this build has no OTF2: install libopen-trace-format2-dev");
        }
        let dir = std::env::temp_dir().join(format!("mpit-prof-otf2-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = mpit_test_support::process::run_ranks_with(
            3,
            &[],
            &[(DIR, dir.to_str().unwrap())],
            "trace::otf2::tests::three_ranks_write_one_archive_the_readers_see_unified",
            CHILD,
            std::time::Duration::from_secs(120),
        );
        let text = mpit_test_support::process::show(&out);
        assert!(out.status.success(), "{text}");
        for rank in 0..3 {
            assert!(text.contains(&format!("OTF2_OK {rank}")), "{text}");
        }
        let anchor = dir.join("traces.otf2");
        let print = Command::new("otf2-print").arg(&anchor).output().unwrap();
        let printed = String::from_utf8_lossy(&print.stdout);
        assert!(
            print.status.success(),
            "{printed}{}",
            String::from_utf8_lossy(&print.stderr)
        );
        let sends = printed
            .lines()
            .filter(|l| l.starts_with("MPI_SEND "))
            .count();
        assert_eq!(sends, 3, "{printed}");
        let script = r#"
import sys, collections, otf2
with otf2.reader.open(sys.argv[1]) as trace:
    print(sorted(g.name for g in trace.definitions.location_groups))
    print(sorted(c.name for c in trace.definitions.comms))
    for loc, ev in trace.events:
        n = type(ev).__name__
        if n in ("Enter", "Leave"):
            print(loc.group.name, n, ev.region.name)
        elif n in ("MpiSend", "MpiRecv"):
            peer = ev.receiver if n == "MpiSend" else ev.sender
            print(loc.group.name, n, ev.communicator.name, peer, ev.msg_tag, ev.msg_length)
        elif n == "Metric":
            print(loc.group.name, n, [m.name for m in ev.metric.members], list(ev.values))
        elif n == "MpiCollectiveEnd":
            print(loc.group.name, n, ev.collective_op, ev.root, ev.size_sent, ev.size_received)
"#;
        let py = Command::new("/usr/bin/python3")
            .args(["-c", script])
            .arg(&anchor)
            .output()
            .unwrap();
        let read = String::from_utf8_lossy(&py.stdout);
        assert!(
            py.status.success(),
            "{read}{}",
            String::from_utf8_lossy(&py.stderr)
        );
        for line in [
            "['MPI Rank 0', 'MPI Rank 1', 'MPI Rank 2']",
            "['MPI_COMM_WORLD', 'comm#1']",
            "MPI Rank 0 MpiSend MPI_COMM_WORLD 1 7 8",
            "MPI Rank 1 MpiSend MPI_COMM_WORLD 2 7 16",
            "MPI Rank 2 MpiSend MPI_COMM_WORLD 0 7 24",
            "MPI Rank 0 MpiRecv MPI_COMM_WORLD 2 7 24",
            "MPI Rank 1 Enter solve",
            "MPI Rank 1 Enter MPI_Send",
            "MPI Rank 2 Leave MPI_Recv",
            "MPI Rank 0 Metric ['unexp_message_enqueued[0]', 'unexp_message_enqueued[1]'] [1, 64]",
            "MPI Rank 0 MpiCollectiveEnd CollectiveOp.BCAST 0 16 0",
            "MPI Rank 2 MpiCollectiveEnd CollectiveOp.BCAST 0 0 8",
        ] {
            assert!(read.contains(line), "{line} in\n{read}");
        }
        let info = Command::new("otf2-print")
            .arg("-I")
            .arg(&anchor)
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&info.stdout).contains("MPIT_PROF::MPI_T_EVENTS"));
        // The same through OTF2's reader API: each rank's records (its own local ids mapped),
        // the event's metric class by its members' common name, the property.
        let s = mpit_otf2::Summary::read(&anchor).unwrap();
        assert_eq!(s.resolution, 1_000_000_000);
        assert_eq!(s.properties["MPIT_PROF::MPI_T_EVENTS"], "2 types");
        let groups: Vec<&str> = s.locations.iter().map(|l| l.group.as_str()).collect();
        assert_eq!(groups, ["MPI Rank 0", "MPI Rank 1", "MPI Rank 2"]);
        for (rank, l) in s.locations.iter().enumerate() {
            use mpit_otf2::RecordKind as K;
            let t0 = 1000 * (rank as u64 + 1);
            let (enters, metrics, first, last) = match rank {
                0 => (2, 1, t0 + 1, t0 + 9),
                1 => (3, 0, t0, t0 + 10),
                _ => (2, 0, t0 + 1, t0 + 8),
            };
            assert_eq!((l.count(K::Enter), l.count(K::Leave)), (enters, enters));
            assert_eq!((l.count(K::MpiSend), l.count(K::MpiRecv)), (1, 1));
            assert_eq!(l.count(K::MpiCollectiveEnd), 1);
            assert_eq!(l.count(K::Metric), metrics);
            assert_eq!(l.records(), [9, 10, 8][rank], "{l:?}");
            assert_eq!((l.first, l.last), (Some(first), Some(last)), "{l:?}");
        }
        assert_eq!(
            s.locations[0].metrics,
            [("unexp_message_enqueued".to_string(), 1)].into()
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
