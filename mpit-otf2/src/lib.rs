//! `mpit-otf2`: the OTF2 trace library (Open Trace Format 2, the format of Score-P, Scalasca
//! and Vampir; OTF2 3.0 API reference) for Rust, in two layers: the C API as bindgen reads it
//! from the installed headers at build time (`ffi`, private: the crate's one `unsafe` fence),
//! and above it a thin safe writer: [`Archive`], written by every process of a parallel job
//! together (the caller's [`Collectives`], as OTF2's `OTF2_MPI_Collectives.h` provides them
//! over MPI), and [`SerialArchive`], written by one process alone. mpit-prof's trace writer
//! sits above this crate: it unifies the ranks' definitions and hands each rank its mapping
//! tables (local id -> global id), as Score-P does.
//!
//! [`Summary::read`] reads an archive back through OTF2's reader: its clock, properties and
//! locations, and each location's records counted by kind.
//!
//! Without OTF2 installed the crate still builds; [`available`] then says what to install.
//!
//! ```
//! # if mpit_otf2::available().is_err() { return Ok(()); }
//! use mpit_otf2::{Paradigm, RegionRole, SerialArchive};
//! let dir = std::env::temp_dir().join(format!("mpit-otf2-doc-{}", std::process::id()));
//! let mut a = SerialArchive::create(&dir, "traces")?;
//! let main = a.region("main", RegionRole::Function, Paradigm::User)?;
//! let loc = a.location("Master thread", "MPI Rank 0")?;
//! a.enter(loc, 10, main)?;
//! a.leave(loc, 20, main)?;
//! a.close(1_000_000_000, 10, 10)?;
//! assert!(dir.join("traces.otf2").exists());
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), mpit_otf2::Error>(())
//! ```

mod ffi;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What a region does (OTF2's `OTF2_RegionRole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegionRole {
    /// A function or a user region.
    Function,
    /// A point-to-point call.
    PointToPoint,
    /// A collective call.
    Collective,
    /// A barrier.
    Barrier,
    /// Anything else (OTF2's `UNKNOWN`): setup, queries, ...
    Other,
}

/// Who a region belongs to (OTF2's `OTF2_Paradigm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Paradigm {
    /// MPI.
    Mpi,
    /// The program's own regions.
    User,
    /// The measurement system.
    Measurement,
}

/// A collective operation (OTF2's `OTF2_CollectiveOp`, the MPI ones).
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveOp {
    Barrier,
    Bcast,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    Alltoallw,
    Allreduce,
    Reduce,
    ReduceScatter,
    ReduceScatterBlock,
    Scan,
    Exscan,
}

/// The type of a metric member's values (OTF2's `OTF2_Type`, the three a metric takes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// Signed 64-bit.
    Int,
    /// Unsigned 64-bit.
    Uint,
    /// 64-bit floating point.
    Double,
}

/// How a metric member's values are meant (OTF2's `OTF2_MetricMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetricMode {
    /// A total since the start (a counter's value).
    AccumulatedStart,
    /// The value at that point (a level, a size, an event's datum).
    AbsolutePoint,
    /// The change since the previous sample.
    RelativeLast,
}

/// One value of a metric event (OTF2's `OTF2_MetricValue` with its type).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MetricValue {
    /// Signed.
    Int(i64),
    /// Unsigned.
    Uint(u64),
    /// Floating point.
    Double(f64),
}

/// The kinds of local ids a location's mapping table translates (OTF2's `OTF2_MappingType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mapping {
    /// Regions of `Enter`/`Leave`.
    Region,
    /// Communicators of the MPI records.
    Comm,
    /// Metric classes of `Metric` records.
    Metric,
}

/// What a group definition lists (OTF2's `OTF2_GroupType`, the MPI ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupType {
    /// The locations of `MPI_COMM_WORLD`'s ranks, in rank order: what every communicator's
    /// members index.
    CommLocations,
    /// A communicator's members, as their ranks in `MPI_COMM_WORLD`.
    CommGroup,
}

/// The collective operations OTF2 needs while an archive is opened and closed, over the
/// processes that write it (OTF2's `OTF2_CollectiveCallbacks`, in bytes). Every process calls
/// each with the same root; `false` fails OTF2's call. Rank 0 is the archive's master.
pub trait Collectives {
    /// The number of processes.
    fn size(&self) -> u32;
    /// This process's rank, in `0..size`.
    fn rank(&self) -> u32;
    /// Waits for every process.
    fn barrier(&mut self) -> bool;
    /// `data` of `root` into every other process's `data` (same length everywhere).
    fn bcast(&mut self, data: &mut [u8], root: u32) -> bool;
    /// Every process's `input` (same length) into `root`'s `output`, in rank order (`output`
    /// is empty elsewhere).
    fn gather(&mut self, input: &[u8], output: &mut [u8], root: u32) -> bool;
    /// Every process's `input` into `root`'s `output`, in rank order, rank `i`'s
    /// `lengths[i]` bytes (`output` and `lengths` are empty elsewhere).
    fn gatherv(&mut self, input: &[u8], output: &mut [u8], lengths: &[usize], root: u32) -> bool;
    /// `root`'s `input`, cut in `size` equal parts, part `i` into rank `i`'s `output`.
    fn scatter(&mut self, input: &[u8], output: &mut [u8], root: u32) -> bool;
    /// `root`'s `input`, cut in parts of `lengths[i]` bytes, part `i` into rank `i`'s
    /// `output`.
    fn scatterv(&mut self, input: &[u8], lengths: &[usize], output: &mut [u8], root: u32) -> bool;
}

/// One process alone: the [`Collectives`] of [`SerialArchive`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Serial;

impl Collectives for Serial {
    fn size(&self) -> u32 {
        1
    }
    fn rank(&self) -> u32 {
        0
    }
    fn barrier(&mut self) -> bool {
        true
    }
    fn bcast(&mut self, _: &mut [u8], root: u32) -> bool {
        root == 0
    }
    fn gather(&mut self, input: &[u8], output: &mut [u8], root: u32) -> bool {
        copy(input, output) && root == 0
    }
    fn gatherv(&mut self, input: &[u8], output: &mut [u8], _: &[usize], root: u32) -> bool {
        copy(input, output) && root == 0
    }
    fn scatter(&mut self, input: &[u8], output: &mut [u8], root: u32) -> bool {
        copy(input, output) && root == 0
    }
    fn scatterv(&mut self, input: &[u8], _: &[usize], output: &mut [u8], root: u32) -> bool {
        copy(input, output) && root == 0
    }
}

fn copy(from: &[u8], to: &mut [u8]) -> bool {
    if from.len() != to.len() {
        return false;
    }
    to.copy_from_slice(from);
    true
}

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The crate was built without OTF2.
    #[error("this build has no OTF2: install libopen-trace-format2-dev (Debian) and rebuild")]
    Missing,
    /// An OTF2 call failed, with its `OTF2_ErrorCode` and OTF2's name for it.
    #[error("{call}: {name} (OTF2 error {code})")]
    Otf2 {
        /// The C function.
        call: &'static str,
        /// The code.
        code: i64,
        /// `OTF2_Error_GetName`.
        name: String,
    },
    /// A path or name OTF2 cannot take (a NUL byte, not UTF-8), or a call in the wrong place.
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// A file of the archive cannot be read (a missing anchor file).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A callback of OTF2's reader panicked: the reading was interrupted
    /// (`OTF2_CALLBACK_INTERRUPT`) and nothing of it is returned.
    #[error("the reader's {callback} callback panicked: {message}")]
    Callback {
        /// The record whose callback panicked (`String`, `Enter`, ...).
        callback: &'static str,
        /// The panic's message.
        message: String,
    },
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Whether this build can write traces: `Err(Error::Missing)` when OTF2 was not found at build
/// time.
pub fn available() -> Result<()> {
    if cfg!(mpit_otf2_missing) {
        Err(Error::Missing)
    } else {
        Ok(())
    }
}

/// A region's reference in an archive's global definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegionRef(pub u32);

/// A location's reference (one stream of events), unique in the archive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocationRef(pub u64);

/// OTF2's smallest chunk (`OTF2_CHUNK_SIZE_MIN`).
const CHUNK_MIN: u64 = 256 << 10;
/// OTF2's largest chunk (`OTF2_CHUNK_SIZE_MAX`).
const CHUNK_MAX: u64 = 16 << 20;

/// Buffer sizes of an [`Archive`]'s writers and the bound on their memory.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Bytes of one chunk of a location's event buffer (OTF2's `eventChunkSize`: 256 KiB to
    /// 16 MiB).
    pub event_chunk: u64,
    /// Bytes of one chunk of a definition buffer (OTF2's `defChunkSize`: 256 KiB to 16 MiB).
    pub def_chunk: u64,
    /// The most bytes of buffers this process holds at once (at least two chunks): past it a
    /// full buffer is flushed to its file before it grows.
    pub memory_limit: u64,
    /// The clock of the events' times, read when a flush ends: each flush before the close
    /// is in the trace as a `BufferFlush` record from the event that filled the buffer to
    /// that time (0 without a clock).
    pub clock: Option<fn() -> u64>,
}

impl Default for Options {
    /// 1 MiB event chunks, 4 MiB definition chunks (OTF2's suggested sizes), 64 MiB in all.
    fn default() -> Options {
        Options {
            event_chunk: 1 << 20,
            def_chunk: 4 << 20,
            memory_limit: 64 << 20,
            clock: None,
        }
    }
}

/// An OTF2 archive written by every process of a job together: each writes the events of its
/// own locations (one file each) and their local definitions (mapping tables, clock offsets);
/// the master (rank 0) writes the global definitions. Opening and closing are collective over
/// the [`Collectives`] given.
///
/// The order of a write: events ([`Archive::enter`], ... with local ids), then
/// [`Archive::close_events`], then each location's [`Archive::write_local`], then on the
/// master [`Archive::globals`] in dependency order, then [`Archive::close`].
///
/// Dropping an archive without [`Archive::close`] closes it too (a collective call).
pub struct Archive {
    raw: ffi::Archive,
}

impl Archive {
    /// Opens `dir/name.otf2` (and `dir/name/`) for writing: every process of `coll` calls it.
    #[doc(alias = "OTF2_Archive_Open")]
    #[doc(alias = "OTF2_Archive_SetCollectiveCallbacks")]
    pub fn create(
        dir: &Path,
        name: &str,
        coll: impl Collectives + 'static,
        options: Options,
    ) -> Result<Archive> {
        available()?;
        let dir = dir
            .to_str()
            .ok_or_else(|| Error::Invalid(format!("{} is not UTF-8", dir.display())))?;
        for (what, n) in [
            ("event_chunk", options.event_chunk),
            ("def_chunk", options.def_chunk),
        ] {
            if !(CHUNK_MIN..=CHUNK_MAX).contains(&n) {
                return Err(Error::Invalid(format!(
                    "{what} of {n} bytes: OTF2 takes 256 KiB to 16 MiB"
                )));
            }
        }
        if options.memory_limit < 2 * options.event_chunk.max(options.def_chunk) {
            return Err(Error::Invalid(format!(
                "a memory limit of {} bytes holds fewer than two chunks",
                options.memory_limit
            )));
        }
        let sizes = ffi::Sizes {
            event_chunk: options.event_chunk,
            def_chunk: options.def_chunk,
            memory_limit: options.memory_limit,
            clock: options.clock,
        };
        Ok(Archive {
            raw: ffi::Archive::create(dir, name, Box::new(coll), sizes)?,
        })
    }

    /// Whether this process writes the global definitions (rank 0).
    #[doc(alias = "OTF2_Archive_IsMaster")]
    pub fn is_master(&mut self) -> bool {
        self.raw.is_master()
    }

    /// Buffer chunks refused so far at [`Options::memory_limit`]: each made OTF2 flush a
    /// buffer early (nothing is dropped).
    pub fn early_flushes(&mut self) -> u64 {
        self.raw.lost()
    }

    /// A property of the archive (`NAMESPACE::NAME`), kept in its anchor file; the master's
    /// count.
    #[doc(alias = "OTF2_Archive_SetProperty")]
    pub fn set_property(&mut self, name: &str, value: &str) -> Result<()> {
        self.raw.set_property(name, value)
    }

    /// `region` (a local id) entered at `t`.
    #[inline]
    #[doc(alias = "OTF2_EvtWriter_Enter")]
    pub fn enter(&mut self, loc: LocationRef, t: u64, region: u32) -> Result<()> {
        self.raw.enter(loc.0, t, region)
    }

    /// `region` left at `t`.
    #[inline]
    #[doc(alias = "OTF2_EvtWriter_Leave")]
    pub fn leave(&mut self, loc: LocationRef, t: u64, region: u32) -> Result<()> {
        self.raw.leave(loc.0, t, region)
    }

    /// A blocking send of `bytes` to rank `peer` of `comm` (a local id) with `tag`.
    #[inline]
    #[doc(alias = "OTF2_EvtWriter_MpiSend")]
    pub fn mpi_send(&mut self, loc: LocationRef, t: u64, m: Msg) -> Result<()> {
        self.raw.mpi_send(loc.0, t, m.peer, m.comm, m.tag, m.bytes)
    }

    /// A non-blocking send posted, `request` naming it until its completion.
    #[doc(alias = "OTF2_EvtWriter_MpiIsend")]
    pub fn mpi_isend(&mut self, loc: LocationRef, t: u64, m: Msg, request: u64) -> Result<()> {
        self.raw
            .mpi_isend(loc.0, t, m.peer, m.comm, m.tag, m.bytes, request)
    }

    /// A non-blocking send completed.
    #[doc(alias = "OTF2_EvtWriter_MpiIsendComplete")]
    pub fn mpi_isend_complete(&mut self, loc: LocationRef, t: u64, request: u64) -> Result<()> {
        self.raw.mpi_isend_complete(loc.0, t, request)
    }

    /// A non-blocking receive posted.
    #[doc(alias = "OTF2_EvtWriter_MpiIrecvRequest")]
    pub fn mpi_irecv_request(&mut self, loc: LocationRef, t: u64, request: u64) -> Result<()> {
        self.raw.mpi_irecv_request(loc.0, t, request)
    }

    /// A blocking receive of `bytes` from rank `peer` of `comm` completed.
    #[inline]
    #[doc(alias = "OTF2_EvtWriter_MpiRecv")]
    pub fn mpi_recv(&mut self, loc: LocationRef, t: u64, m: Msg) -> Result<()> {
        self.raw.mpi_recv(loc.0, t, m.peer, m.comm, m.tag, m.bytes)
    }

    /// A non-blocking receive completed.
    #[doc(alias = "OTF2_EvtWriter_MpiIrecv")]
    pub fn mpi_irecv(&mut self, loc: LocationRef, t: u64, m: Msg, request: u64) -> Result<()> {
        self.raw
            .mpi_irecv(loc.0, t, m.peer, m.comm, m.tag, m.bytes, request)
    }

    /// A request cancelled.
    #[doc(alias = "OTF2_EvtWriter_MpiRequestCancelled")]
    pub fn mpi_request_cancelled(&mut self, loc: LocationRef, t: u64, request: u64) -> Result<()> {
        self.raw.mpi_request_cancelled(loc.0, t, request)
    }

    /// A collective call begun.
    #[doc(alias = "OTF2_EvtWriter_MpiCollectiveBegin")]
    pub fn collective_begin(&mut self, loc: LocationRef, t: u64) -> Result<()> {
        self.raw.collective_begin(loc.0, t)
    }

    /// A collective call ended: `op` on `comm` (a local id), its root's rank in it, the bytes
    /// this process sent and received.
    #[doc(alias = "OTF2_EvtWriter_MpiCollectiveEnd")]
    #[allow(clippy::too_many_arguments)]
    pub fn collective_end(
        &mut self,
        loc: LocationRef,
        t: u64,
        op: CollectiveOp,
        comm: u32,
        root: Option<u32>,
        sent: u64,
        received: u64,
    ) -> Result<()> {
        self.raw
            .collective_end(loc.0, t, op, comm, root, sent, received)
    }

    /// A sample of metric class `metric` (a local id): one value per member, in order.
    #[doc(alias = "OTF2_EvtWriter_Metric")]
    pub fn metric(
        &mut self,
        loc: LocationRef,
        t: u64,
        metric: u32,
        values: &[MetricValue],
    ) -> Result<()> {
        self.raw.metric(loc.0, t, metric, values)
    }

    /// Ends the events (collective): every location's writer closed, with its number of
    /// events.
    #[doc(alias = "OTF2_Archive_CloseEvtFiles")]
    pub fn close_events(&mut self) -> Result<Vec<(LocationRef, u64)>> {
        Ok(self
            .raw
            .close_events()?
            .into_iter()
            .map(|(l, n)| (LocationRef(l), n))
            .collect())
    }

    /// `loc`'s local definitions: its mapping tables (`ids[local] = global`) and its clock
    /// offsets `(time, offset, standard deviation)` to the master's clock.
    #[doc(alias = "OTF2_DefWriter_WriteMappingTable")]
    #[doc(alias = "OTF2_DefWriter_WriteClockOffset")]
    pub fn write_local(
        &mut self,
        loc: LocationRef,
        maps: &[(Mapping, Vec<u64>)],
        clock_offsets: &[(u64, i64, f64)],
    ) -> Result<()> {
        self.raw.write_local(loc.0, maps, clock_offsets)
    }

    /// The global definitions' writer (the master only; `Err` elsewhere).
    #[doc(alias = "OTF2_Archive_GetGlobalDefWriter")]
    pub fn globals(&mut self) -> Result<Globals<'_>> {
        if !self.raw.is_master() {
            return Err(Error::Invalid(
                "global definitions are written by the master (rank 0) alone".into(),
            ));
        }
        Ok(Globals {
            a: &mut self.raw,
            strings: HashMap::new(),
        })
    }

    /// Closes the archive (collective).
    #[doc(alias = "OTF2_Archive_Close")]
    pub fn close(self) -> Result<()> {
        self.raw.close()
    }
}

/// One point-to-point message as the MPI records carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    /// The other side's rank in `comm`.
    pub peer: u32,
    /// The communicator (a local id).
    pub comm: u32,
    /// The message tag.
    pub tag: u32,
    /// The message's size in bytes.
    pub bytes: u64,
}

/// The master's global definitions, written in dependency order (a definition after what it
/// names); the strings they use are defined as they first appear.
pub struct Globals<'a> {
    a: &'a mut ffi::Archive,
    strings: HashMap<String, u32>,
}

impl Globals<'_> {
    /// The id of `s`, defined on first use.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteString")]
    pub fn string(&mut self, s: &str) -> Result<u32> {
        if let Some(&id) = self.strings.get(s) {
            return Ok(id);
        }
        let id = self.strings.len() as u32;
        self.a.def_string(id, s)?;
        self.strings.insert(s.to_owned(), id);
        Ok(id)
    }

    /// The clock: `resolution` ticks per second, the first tick, the trace's length in ticks.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteClockProperties")]
    pub fn clock(&mut self, resolution: u64, start: u64, length: u64) -> Result<()> {
        self.a.def_clock(resolution, start, length)
    }

    /// Region `id`.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteRegion")]
    pub fn region(&mut self, id: u32, name: &str, role: RegionRole, p: Paradigm) -> Result<()> {
        let s = self.string(name)?;
        self.a.def_region(id, s, role, p)
    }

    /// System tree node `id` (a machine, a node) under `parent`.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteSystemTreeNode")]
    pub fn system_tree_node(
        &mut self,
        id: u32,
        name: &str,
        class: &str,
        parent: Option<u32>,
    ) -> Result<()> {
        let (n, c) = (self.string(name)?, self.string(class)?);
        self.a.def_system_tree_node(id, n, c, parent)
    }

    /// Location group `id` (a process) on system tree node `node`.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteLocationGroup")]
    pub fn location_group(&mut self, id: u32, name: &str, node: u32) -> Result<()> {
        let s = self.string(name)?;
        self.a.def_location_group(id, s, node)
    }

    /// Location `id` (a thread) of group `group`, with its number of events.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteLocation")]
    pub fn location(&mut self, id: LocationRef, name: &str, events: u64, group: u32) -> Result<()> {
        let s = self.string(name)?;
        self.a.def_location(id.0, s, events, group)
    }

    /// Group `id` of MPI `members` (locations, or world ranks: see [`GroupType`]).
    #[doc(alias = "OTF2_GlobalDefWriter_WriteGroup")]
    pub fn group(&mut self, id: u32, name: &str, t: GroupType, members: &[u64]) -> Result<()> {
        let s = self.string(name)?;
        self.a.def_group(id, s, t, members)
    }

    /// Communicator `id` of the members of group `group`.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteComm")]
    pub fn comm(&mut self, id: u32, name: &str, group: u32) -> Result<()> {
        let s = self.string(name)?;
        self.a.def_comm(id, s, group)
    }

    /// Metric member `id`.
    #[doc(alias = "OTF2_GlobalDefWriter_WriteMetricMember")]
    pub fn metric_member(
        &mut self,
        id: u32,
        name: &str,
        description: &str,
        unit: &str,
        v: ValueType,
        m: MetricMode,
    ) -> Result<()> {
        let (n, d, u) = (
            self.string(name)?,
            self.string(description)?,
            self.string(unit)?,
        );
        self.a.def_metric_member(id, n, d, u, v, m)
    }

    /// Metric class `id` of `members` (at most 255); `synchronous`: sampled at enter and
    /// leave events, else at points of its own (an event's instance).
    #[doc(alias = "OTF2_GlobalDefWriter_WriteMetricClass")]
    pub fn metric_class(&mut self, id: u32, members: &[u32], synchronous: bool) -> Result<()> {
        self.a.def_metric_class(id, members, synchronous)
    }
}

/// An archive written by one process alone: the global definitions and every location's
/// events (an [`Archive`] over [`Serial`], whose definitions are already global).
pub struct SerialArchive {
    raw: Archive,
    regions: Vec<(String, RegionRole, Paradigm)>,
    groups: Vec<String>,
    locations: Vec<(String, u32)>,
}

impl SerialArchive {
    /// Creates the archive `dir/name.otf2` (and `dir/name/`) for writing.
    #[doc(alias = "OTF2_Archive_Open")]
    pub fn create(dir: &Path, name: &str) -> Result<SerialArchive> {
        Ok(SerialArchive {
            raw: Archive::create(dir, name, Serial, Options::default())?,
            regions: Vec::new(),
            groups: Vec::new(),
            locations: Vec::new(),
        })
    }

    /// Defines a region.
    pub fn region(
        &mut self,
        name: &str,
        role: RegionRole,
        paradigm: Paradigm,
    ) -> Result<RegionRef> {
        self.regions.push((name.to_owned(), role, paradigm));
        Ok(RegionRef(self.regions.len() as u32 - 1))
    }

    /// A location (a thread) of the location group (a process) `group`, both defined at
    /// [`SerialArchive::close`].
    pub fn location(&mut self, name: &str, group: &str) -> Result<LocationRef> {
        let g = match self.groups.iter().position(|x| x == group) {
            Some(i) => i,
            None => {
                self.groups.push(group.to_owned());
                self.groups.len() - 1
            }
        } as u32;
        self.locations.push((name.to_owned(), g));
        Ok(LocationRef(self.locations.len() as u64 - 1))
    }

    /// `region` entered at `t`.
    #[inline]
    #[doc(alias = "OTF2_EvtWriter_Enter")]
    pub fn enter(&mut self, loc: LocationRef, t: u64, region: RegionRef) -> Result<()> {
        self.raw.enter(loc, t, region.0)
    }

    /// `region` left at `t`.
    #[inline]
    #[doc(alias = "OTF2_EvtWriter_Leave")]
    pub fn leave(&mut self, loc: LocationRef, t: u64, region: RegionRef) -> Result<()> {
        self.raw.leave(loc, t, region.0)
    }

    /// Writes the clock properties (`resolution` ticks per second, the first tick, the
    /// trace's length in ticks), the system tree, location groups and locations, and closes
    /// the archive.
    #[doc(alias = "OTF2_Archive_Close")]
    pub fn close(mut self, resolution: u64, start: u64, length: u64) -> Result<()> {
        let counts = self.raw.close_events()?;
        let mut g = self.raw.globals()?;
        g.clock(resolution, start, length)?;
        for (i, (name, role, p)) in self.regions.iter().enumerate() {
            g.region(i as u32, name, *role, *p)?;
        }
        g.system_tree_node(0, "machine", "machine", None)?;
        for (i, name) in self.groups.iter().enumerate() {
            g.location_group(i as u32, name, 0)?;
        }
        for (i, (name, group)) in self.locations.iter().enumerate() {
            let loc = LocationRef(i as u64);
            let events = counts
                .iter()
                .find(|(l, _)| *l == loc)
                .map_or(0, |(_, n)| *n);
            g.location(loc, name, events, *group)?;
        }
        self.raw.close()
    }
}

/// The kinds of event records a [`Summary`] counts (OTF2's event records of these names;
/// `BufferFlush` is the one OTF2 writes itself when a buffer is flushed early).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordKind {
    /// A region entered.
    Enter,
    /// A region left.
    Leave,
    /// A blocking send.
    MpiSend,
    /// A non-blocking send posted.
    MpiIsend,
    /// A non-blocking send completed.
    MpiIsendComplete,
    /// A non-blocking receive posted.
    MpiIrecvRequest,
    /// A blocking receive completed.
    MpiRecv,
    /// A non-blocking receive completed.
    MpiIrecv,
    /// A request cancelled.
    MpiRequestCancelled,
    /// A collective call begun.
    MpiCollectiveBegin,
    /// A collective call ended.
    MpiCollectiveEnd,
    /// A metric sample.
    Metric,
    /// A buffer flushed to its file while the trace was written.
    BufferFlush,
    /// Any other record.
    Other,
}

impl RecordKind {
    /// Every kind, in this order (the order of [`LocationSummary::counts`]).
    pub const ALL: [RecordKind; 14] = [
        RecordKind::Enter,
        RecordKind::Leave,
        RecordKind::MpiSend,
        RecordKind::MpiIsend,
        RecordKind::MpiIsendComplete,
        RecordKind::MpiIrecvRequest,
        RecordKind::MpiRecv,
        RecordKind::MpiIrecv,
        RecordKind::MpiRequestCancelled,
        RecordKind::MpiCollectiveBegin,
        RecordKind::MpiCollectiveEnd,
        RecordKind::Metric,
        RecordKind::BufferFlush,
        RecordKind::Other,
    ];

    /// OTF2's name of the record (`MpiSend`), `Other` for the rest.
    pub fn name(self) -> &'static str {
        match self {
            RecordKind::Enter => "Enter",
            RecordKind::Leave => "Leave",
            RecordKind::MpiSend => "MpiSend",
            RecordKind::MpiIsend => "MpiIsend",
            RecordKind::MpiIsendComplete => "MpiIsendComplete",
            RecordKind::MpiIrecvRequest => "MpiIrecvRequest",
            RecordKind::MpiRecv => "MpiRecv",
            RecordKind::MpiIrecv => "MpiIrecv",
            RecordKind::MpiRequestCancelled => "MpiRequestCancelled",
            RecordKind::MpiCollectiveBegin => "MpiCollectiveBegin",
            RecordKind::MpiCollectiveEnd => "MpiCollectiveEnd",
            RecordKind::Metric => "Metric",
            RecordKind::BufferFlush => "BufferFlush",
            RecordKind::Other => "Other",
        }
    }
}

impl std::fmt::Display for RecordKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What an archive holds, read back through OTF2's reader ([`Summary::read`]): its clock,
/// its properties, and per location the records by kind and the span of its timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Ticks per second of the timestamps (`ClockProperties`' timer resolution).
    pub resolution: u64,
    /// The first tick of the trace (`ClockProperties`' global offset).
    pub global_offset: u64,
    /// The trace's length in ticks (`ClockProperties`' trace length).
    pub trace_length: u64,
    /// The anchor file's properties: name (`NAMESPACE::NAME`) -> value.
    pub properties: BTreeMap<String, String>,
    /// The regions' names, by global region id.
    pub regions: Vec<String>,
    /// Every location, in definition order.
    pub locations: Vec<LocationSummary>,
}

/// One location (a thread) of a [`Summary`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocationSummary {
    /// Its id.
    pub id: LocationRef,
    /// Its name (`Master thread`).
    pub name: String,
    /// Its location group's name (a process: `MPI Rank 3`).
    pub group: String,
    /// Its records by kind (every kind, in [`RecordKind::ALL`]'s order).
    pub counts: [u64; RecordKind::ALL.len()],
    /// Its `Metric` records by metric class name (see [`Summary::read`]).
    pub metrics: BTreeMap<String, u64>,
    /// The time of its first record, in ticks (`None` when it has none).
    pub first: Option<u64>,
    /// The time of its last record, in ticks.
    pub last: Option<u64>,
}

impl LocationSummary {
    /// Its records of `kind`.
    pub fn count(&self, kind: RecordKind) -> u64 {
        self.counts[kind as usize]
    }

    /// All its records.
    pub fn records(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Ticks from its first record to its last (0 with fewer than two).
    pub fn span(&self) -> u64 {
        match (self.first, self.last) {
            (Some(f), Some(l)) => l.saturating_sub(f),
            _ => 0,
        }
    }
}

impl Summary {
    /// Reads the archive of the anchor file `anchor` (`dir/traces.otf2`) through OTF2's
    /// reader: the properties of the anchor file, the global definitions (strings, location
    /// groups, locations, regions, metric members and classes, clock properties), then every
    /// location's local definitions (so that its mapping tables apply) and all events,
    /// counted per location by [`RecordKind`]. Records of kinds without a callback here are
    /// counted as [`RecordKind::Other`] (from the readers' positions), without their times.
    ///
    /// A metric class is named by its members: their common name when every member is
    /// `NAME[i]` (mpit-prof's MPI_T events), else their names joined by `,`; a `Metric`
    /// record of an undefined class is counted under `metric#ID`.
    ///
    /// A missing file, a corrupt archive or a panic in a callback is an `Err`.
    #[doc(alias = "OTF2_Reader_Open")]
    #[doc(alias = "OTF2_Reader_SetSerialCollectiveCallbacks")]
    #[doc(alias = "OTF2_Reader_GetPropertyNames")]
    #[doc(alias = "OTF2_Reader_GetProperty")]
    #[doc(alias = "OTF2_Reader_ReadAllGlobalDefinitions")]
    #[doc(alias = "OTF2_Reader_ReadAllLocalDefinitions")]
    #[doc(alias = "OTF2_Reader_ReadAllGlobalEvents")]
    pub fn read(anchor: &Path) -> Result<Summary> {
        available()?;
        if let Err(source) = std::fs::File::open(anchor) {
            return Err(Error::Io {
                path: anchor.to_path_buf(),
                source,
            });
        }
        let path = anchor
            .to_str()
            .ok_or_else(|| Error::Invalid(format!("{} is not UTF-8", anchor.display())))?;
        Ok(Summary::of(ffi::read(path)?))
    }

    /// `ticks` of this trace's clock in seconds (0 without a resolution).
    pub fn seconds(&self, ticks: u64) -> f64 {
        if self.resolution == 0 {
            0.0
        } else {
            ticks as f64 / self.resolution as f64
        }
    }

    fn of(mut raw: ffi::Raw) -> Summary {
        let string = |id: u32| raw.strings.get(&id).cloned().unwrap_or_default();
        let class_names: HashMap<u32, String> = raw
            .classes
            .iter()
            .map(|(&id, members)| {
                let names: Vec<String> = members
                    .iter()
                    .map(|m| raw.members.get(m).map_or_else(String::new, |&s| string(s)))
                    .collect();
                (id, class_name(&names))
            })
            .collect();
        raw.regions.sort_unstable();
        let regions = raw.regions.iter().map(|&(_, name)| string(name)).collect();
        let locations = raw
            .locations
            .iter()
            .map(|&(id, name, group)| {
                let tally = raw.tallies.remove(&id).unwrap_or_default();
                let mut metrics = BTreeMap::new();
                for (class, n) in tally.metrics {
                    let name = class_names
                        .get(&class)
                        .cloned()
                        .unwrap_or_else(|| format!("metric#{class}"));
                    *metrics.entry(name).or_default() += n;
                }
                LocationSummary {
                    id: LocationRef(id),
                    name: string(name),
                    group: raw
                        .groups
                        .get(&group)
                        .map_or_else(String::new, |&s| string(s)),
                    counts: tally.counts,
                    metrics,
                    first: tally.first,
                    last: tally.last,
                }
            })
            .collect();
        let (resolution, global_offset, trace_length) = raw.clock;
        Summary {
            resolution,
            global_offset,
            trace_length,
            properties: raw.properties.into_iter().collect(),
            regions,
            locations,
        }
    }
}

/// A metric class's name from its members' names: `NAME` when every one is `NAME[i]`, else
/// the names joined by `,` (up to three; more: their count and the first).
fn class_name(members: &[String]) -> String {
    let prefix = |m: &str| -> Option<String> {
        let (p, rest) = m.rsplit_once('[')?;
        let i = rest.strip_suffix(']')?;
        (!i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())).then(|| p.to_owned())
    };
    let prefixes: Option<Vec<String>> = members.iter().map(|m| prefix(m)).collect();
    match prefixes {
        Some(p) if !p.is_empty() && p.iter().all(|x| *x == p[0]) => p[0].clone(),
        _ if members.len() > 3 => format!("{} members ({}, ...)", members.len(), members[0]),
        _ => members.join(","),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_index_their_counts_in_order() {
        for (i, k) in RecordKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k}");
        }
    }

    #[test]
    fn metric_classes_are_named_by_their_members() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(class_name(&v(&["ev[0]", "ev[1]"])), "ev");
        assert_eq!(class_name(&v(&["ev[0]"])), "ev");
        assert_eq!(class_name(&v(&["queue", "delta"])), "queue,delta");
        assert_eq!(class_name(&v(&["a[0]", "b[1]"])), "a[0],b[1]");
        assert_eq!(class_name(&v(&["a[x]"])), "a[x]");
        assert_eq!(class_name(&[]), "");
    }
}
