//! The crate's one `unsafe` fence: bindgen's declarations of the OTF2 C API
//! (`$OUT_DIR/otf2.rs`), the only code that calls them (each call checked), and the
//! trampolines through which OTF2 calls back into Rust (collectives, flushes, memory, and
//! the reader's definitions and events), each under `catch_unwind`.

#![allow(missing_docs, unreachable_pub)]

use std::collections::HashMap;

use crate::{CollectiveOp, Collectives, Error, Mapping, MetricMode, MetricValue, Paradigm};
use crate::{GroupType, RecordKind, RegionRole, Result, ValueType};

/// Buffer sizes and the memory bound of an archive's writers.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(mpit_otf2_missing, allow(dead_code))]
pub struct Sizes {
    pub event_chunk: u64,
    pub def_chunk: u64,
    pub memory_limit: u64,
    pub clock: Option<fn() -> u64>,
}

/// What [`read`] collects from an archive, by OTF2's global ids: the definitions the summary
/// names things by, and each location's tally of events. `lib.rs` makes the
/// [`crate::Summary`] of it.
#[derive(Debug, Default)]
#[cfg_attr(mpit_otf2_missing, allow(dead_code))]
pub struct Raw {
    /// Ticks per second, the global offset, the trace's length (`ClockProperties`).
    pub clock: (u64, u64, u64),
    /// The anchor file's properties, in OTF2's order.
    pub properties: Vec<(String, String)>,
    pub strings: HashMap<u32, String>,
    /// (region, its name's string).
    pub regions: Vec<(u32, u32)>,
    /// Location group -> its name's string.
    pub groups: HashMap<u32, u32>,
    /// (location, its name's string, its group), in definition order.
    pub locations: Vec<(u64, u32, u32)>,
    /// Metric member -> its name's string.
    pub members: HashMap<u32, u32>,
    /// Metric class -> its members.
    pub classes: HashMap<u32, Vec<u32>>,
    pub tallies: HashMap<u64, Tally>,
}

/// One location's events as read.
#[derive(Debug, Default)]
#[cfg_attr(mpit_otf2_missing, allow(dead_code))]
pub struct Tally {
    /// Records by kind (`RecordKind as usize`); `Other` is filled in at the end from the
    /// reader's position.
    pub counts: [u64; RecordKind::ALL.len()],
    /// Metric events by metric class (or instance) id.
    pub metrics: HashMap<u32, u64>,
    pub first: Option<u64>,
    pub last: Option<u64>,
}

impl Raw {
    /// Counts a record of `kind` at `t` on `loc`.
    #[cfg_attr(mpit_otf2_missing, allow(dead_code))]
    fn note(&mut self, loc: u64, t: u64, kind: RecordKind) -> &mut Tally {
        let tally = self.tallies.entry(loc).or_default();
        tally.counts[kind as usize] += 1;
        tally.first = Some(tally.first.map_or(t, |f| f.min(t)));
        tally.last = Some(tally.last.map_or(t, |l| l.max(t)));
        tally
    }
}

#[cfg(mpit_otf2_missing)]
mod imp {
    use super::*;

    pub fn read(_: &str) -> Result<Raw> {
        Err(Error::Missing)
    }

    /// No archive exists in a build without OTF2: every method is unreachable.
    pub struct Archive {
        never: std::convert::Infallible,
    }

    macro_rules! never {
        ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {$(
            #[allow(clippy::too_many_arguments)]
            pub fn $name(&mut self, $(_: $arg),*) -> $ret {
                match self.never {}
            }
        )*};
    }

    impl Archive {
        pub fn create(_: &str, _: &str, _: Box<dyn Collectives>, _: Sizes) -> Result<Archive> {
            Err(Error::Missing)
        }
        pub fn close(self) -> Result<()> {
            match self.never {}
        }
        never! {
            is_master() -> bool;
            lost() -> u64;
            set_property(&str, &str) -> Result<()>;
            enter(u64, u64, u32) -> Result<()>;
            leave(u64, u64, u32) -> Result<()>;
            mpi_send(u64, u64, u32, u32, u32, u64) -> Result<()>;
            mpi_isend(u64, u64, u32, u32, u32, u64, u64) -> Result<()>;
            mpi_isend_complete(u64, u64, u64) -> Result<()>;
            mpi_irecv_request(u64, u64, u64) -> Result<()>;
            mpi_recv(u64, u64, u32, u32, u32, u64) -> Result<()>;
            mpi_irecv(u64, u64, u32, u32, u32, u64, u64) -> Result<()>;
            mpi_request_cancelled(u64, u64, u64) -> Result<()>;
            collective_begin(u64, u64) -> Result<()>;
            collective_end(u64, u64, CollectiveOp, u32, Option<u32>, u64, u64) -> Result<()>;
            metric(u64, u64, u32, &[MetricValue]) -> Result<()>;
            close_events() -> Result<Vec<(u64, u64)>>;
            write_local(u64, &[(Mapping, Vec<u64>)], &[(u64, i64, f64)]) -> Result<()>;
            def_string(u32, &str) -> Result<()>;
            def_region(u32, u32, RegionRole, Paradigm) -> Result<()>;
            def_clock(u64, u64, u64) -> Result<()>;
            def_system_tree_node(u32, u32, u32, Option<u32>) -> Result<()>;
            def_location_group(u32, u32, u32) -> Result<()>;
            def_location(u64, u32, u64, u32) -> Result<()>;
            def_group(u32, u32, GroupType, &[u64]) -> Result<()>;
            def_comm(u32, u32, u32) -> Result<()>;
            def_metric_member(u32, u32, u32, u32, ValueType, MetricMode) -> Result<()>;
            def_metric_class(u32, &[u32], bool) -> Result<()>;
        }
    }
}

#[cfg(not(mpit_otf2_missing))]
mod imp {
    use super::*;
    use std::ffi::{CStr, CString, c_void};
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::ptr::{self, NonNull};

    mod sys {
        #![allow(
            non_camel_case_types,
            non_snake_case,
            non_upper_case_globals,
            dead_code,
            unreachable_pub,
            missing_docs,
            clippy::all
        )]
        include!(concat!(env!("OUT_DIR"), "/otf2.rs"));
    }

    #[inline(always)]
    fn check(call: &'static str, code: sys::OTF2_ErrorCode) -> Result<()> {
        if code == sys::OTF2_ErrorCode_OTF2_SUCCESS {
            return Ok(());
        }
        failed(call, code)
    }

    #[cold]
    #[inline(never)]
    fn failed(call: &'static str, code: sys::OTF2_ErrorCode) -> Result<()> {
        // SAFETY: OTF2_Error_GetName returns a static NUL-terminated string for any code.
        let name = unsafe { CStr::from_ptr(sys::OTF2_Error_GetName(code)) };
        Err(Error::Otf2 {
            call,
            code: code as i64,
            name: name.to_string_lossy().into_owned(),
        })
    }

    fn null(call: &'static str) -> Error {
        Error::Otf2 {
            call,
            code: -1,
            name: "returned no object".into(),
        }
    }

    fn cstring(s: &str) -> Result<CString> {
        CString::new(s).map_err(|_| Error::Invalid(format!("{s:?} has a NUL byte")))
    }

    // --- callbacks -------------------------------------------------------------------------

    /// What the callbacks reach through their user data: the caller's collectives, the
    /// memory account, and whether a callback panicked (then every later one fails).
    struct Shared {
        coll: Box<dyn Collectives>,
        /// Bytes of buffer memory handed out, and the bound.
        used: u64,
        limit: u64,
        /// Chunks refused at the bound (each makes OTF2 flush its buffer first).
        refused: u64,
        /// The caller's clock, for the end of a flush (OTF2's `BufferFlush` record).
        clock: Option<fn() -> u64>,
        broken: bool,
    }

    const OK: sys::OTF2_CallbackCode = sys::OTF2_CallbackCode_enum_OTF2_CALLBACK_SUCCESS as _;
    const FAIL: sys::OTF2_CallbackCode = sys::OTF2_CallbackCode_enum_OTF2_CALLBACK_ERROR as _;

    /// Runs `f` on the shared state behind `user`; a panic (or an earlier one) fails the
    /// callback instead of unwinding into C.
    fn with(user: *mut c_void, f: impl FnOnce(&mut Shared) -> bool) -> sys::OTF2_CallbackCode {
        // SAFETY: `user` is the `Box<Shared>` of a live `Archive` (set in `create`, freed
        // after `OTF2_Archive_Close`); OTF2 calls back on the archive's own thread, one call at
        // a time, while no `&mut` to it is held elsewhere.
        let shared = unsafe { &mut *user.cast::<Shared>() };
        if shared.broken {
            return FAIL;
        }
        match catch_unwind(AssertUnwindSafe(|| f(shared))) {
            Ok(true) => OK,
            Ok(false) => FAIL,
            Err(_) => {
                shared.broken = true;
                FAIL
            }
        }
    }

    /// Bytes of one element of an OTF2 type as the collectives carry it.
    fn type_size(t: sys::OTF2_Type) -> Option<usize> {
        Some(match t as u32 {
            sys::OTF2_Type_enum_OTF2_TYPE_INT8 | sys::OTF2_Type_enum_OTF2_TYPE_UINT8 => 1,
            sys::OTF2_Type_enum_OTF2_TYPE_INT16 | sys::OTF2_Type_enum_OTF2_TYPE_UINT16 => 2,
            sys::OTF2_Type_enum_OTF2_TYPE_INT32
            | sys::OTF2_Type_enum_OTF2_TYPE_UINT32
            | sys::OTF2_Type_enum_OTF2_TYPE_FLOAT => 4,
            sys::OTF2_Type_enum_OTF2_TYPE_INT64
            | sys::OTF2_Type_enum_OTF2_TYPE_UINT64
            | sys::OTF2_Type_enum_OTF2_TYPE_DOUBLE => 8,
            _ => return None,
        })
    }

    /// `n` elements of type `t` in bytes.
    fn bytes(n: u32, t: sys::OTF2_Type) -> Option<usize> {
        (n as usize).checked_mul(type_size(t)?)
    }

    /// A buffer OTF2 passes as `(pointer, bytes)`: empty when the pointer is null.
    ///
    /// # Safety
    /// A non-null `p` points to `len` readable bytes for the callback's duration.
    unsafe fn input<'a>(p: *const c_void, len: usize) -> &'a [u8] {
        if p.is_null() || len == 0 {
            &[]
        } else {
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts(p.cast(), len) }
        }
    }

    /// # Safety
    /// A non-null `p` points to `len` writable bytes for the callback's duration.
    unsafe fn output<'a>(p: *mut c_void, len: usize) -> &'a mut [u8] {
        if p.is_null() || len == 0 {
            &mut []
        } else {
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts_mut(p.cast(), len) }
        }
    }

    unsafe extern "C" fn c_get_size(
        user: *mut c_void,
        _ctx: *mut sys::OTF2_CollectiveContext,
        size: *mut u32,
    ) -> sys::OTF2_CallbackCode {
        with(user, |s| {
            // SAFETY: OTF2 passes a valid out-pointer.
            unsafe { *size = s.coll.size() };
            true
        })
    }

    unsafe extern "C" fn c_get_rank(
        user: *mut c_void,
        _ctx: *mut sys::OTF2_CollectiveContext,
        rank: *mut u32,
    ) -> sys::OTF2_CallbackCode {
        with(user, |s| {
            // SAFETY: OTF2 passes a valid out-pointer.
            unsafe { *rank = s.coll.rank() };
            true
        })
    }

    unsafe extern "C" fn c_barrier(
        user: *mut c_void,
        _ctx: *mut sys::OTF2_CollectiveContext,
    ) -> sys::OTF2_CallbackCode {
        with(user, |s| s.coll.barrier())
    }

    unsafe extern "C" fn c_bcast(
        user: *mut c_void,
        _ctx: *mut sys::OTF2_CollectiveContext,
        data: *mut c_void,
        n: u32,
        t: sys::OTF2_Type,
        root: u32,
    ) -> sys::OTF2_CallbackCode {
        with(user, |s| {
            let Some(len) = bytes(n, t) else { return false };
            // SAFETY: OTF2's buffer of `n` elements of `t` on every rank.
            let data = unsafe { output(data, len) };
            s.coll.bcast(data, root)
        })
    }

    unsafe extern "C" fn c_gather(
        user: *mut c_void,
        _ctx: *mut sys::OTF2_CollectiveContext,
        inp: *const c_void,
        out: *mut c_void,
        n: u32,
        t: sys::OTF2_Type,
        root: u32,
    ) -> sys::OTF2_CallbackCode {
        with(user, |s| {
            let Some(len) = bytes(n, t) else { return false };
            let at_root = s.coll.rank() == root;
            let all = len.saturating_mul(s.coll.size() as usize);
            // SAFETY: `n` elements in; at the root `size * n` out (OTF2's contract), none
            // elsewhere.
            let (inp, out) =
                unsafe { (input(inp, len), output(out, if at_root { all } else { 0 })) };
            s.coll.gather(inp, out, root)
        })
    }

    unsafe extern "C" fn c_gatherv(
        user: *mut c_void,
        _ctx: *mut sys::OTF2_CollectiveContext,
        inp: *const c_void,
        n: u32,
        out: *mut c_void,
        counts: *const u32,
        t: sys::OTF2_Type,
        root: u32,
    ) -> sys::OTF2_CallbackCode {
        with(user, |s| {
            let Some(len) = bytes(n, t) else { return false };
            let size = s.coll.size() as usize;
            let mut lens = Vec::new();
            if s.coll.rank() == root && !counts.is_null() {
                // SAFETY: at the root OTF2 passes one count per rank.
                let c = unsafe { std::slice::from_raw_parts(counts, size) };
                for &k in c {
                    let Some(b) = bytes(k, t) else { return false };
                    lens.push(b);
                }
            }
            let total = lens.iter().sum();
            // SAFETY: `n` elements in; at the root the sum of the counts out.
            let (inp, out) = unsafe { (input(inp, len), output(out, total)) };
            s.coll.gatherv(inp, out, &lens, root)
        })
    }

    unsafe extern "C" fn c_scatter(
        user: *mut c_void,
        _ctx: *mut sys::OTF2_CollectiveContext,
        inp: *const c_void,
        out: *mut c_void,
        n: u32,
        t: sys::OTF2_Type,
        root: u32,
    ) -> sys::OTF2_CallbackCode {
        with(user, |s| {
            let Some(len) = bytes(n, t) else { return false };
            let at_root = s.coll.rank() == root;
            let all = len.saturating_mul(s.coll.size() as usize);
            // SAFETY: at the root `size * n` elements in; `n` out on every rank.
            let (inp, out) =
                unsafe { (input(inp, if at_root { all } else { 0 }), output(out, len)) };
            s.coll.scatter(inp, out, root)
        })
    }

    unsafe extern "C" fn c_scatterv(
        user: *mut c_void,
        _ctx: *mut sys::OTF2_CollectiveContext,
        inp: *const c_void,
        counts: *const u32,
        out: *mut c_void,
        n: u32,
        t: sys::OTF2_Type,
        root: u32,
    ) -> sys::OTF2_CallbackCode {
        with(user, |s| {
            let Some(len) = bytes(n, t) else { return false };
            let size = s.coll.size() as usize;
            let mut lens = Vec::new();
            if s.coll.rank() == root && !counts.is_null() {
                // SAFETY: at the root OTF2 passes one count per rank.
                let c = unsafe { std::slice::from_raw_parts(counts, size) };
                for &k in c {
                    let Some(b) = bytes(k, t) else { return false };
                    lens.push(b);
                }
            }
            let total = lens.iter().sum();
            // SAFETY: at the root the sum of the counts in; `n` elements out.
            let (inp, out) = unsafe { (input(inp, total), output(out, len)) };
            s.coll.scatterv(inp, &lens, out, root)
        })
    }

    static COLLECTIVES: sys::OTF2_CollectiveCallbacks = sys::OTF2_CollectiveCallbacks {
        otf2_release: None,
        otf2_get_size: Some(c_get_size),
        otf2_get_rank: Some(c_get_rank),
        // Only for reading, or writing through SIONlib: not used here.
        otf2_create_local_comm: None,
        otf2_free_local_comm: None,
        otf2_barrier: Some(c_barrier),
        otf2_bcast: Some(c_bcast),
        otf2_gather: Some(c_gather),
        otf2_gatherv: Some(c_gatherv),
        otf2_scatter: Some(c_scatter),
        otf2_scatterv: Some(c_scatterv),
    };

    // Flush callbacks: every full buffer is written out (never dropped); post-flush gives the
    // time the flush ended, for the `BufferFlush` record OTF2 then writes.
    unsafe extern "C" fn pre_flush(
        _user: *mut c_void,
        _file: sys::OTF2_FileType,
        _loc: sys::OTF2_LocationRef,
        _caller: *mut c_void,
        _final: bool,
    ) -> sys::OTF2_FlushType {
        sys::OTF2_FlushType_enum_OTF2_FLUSH as _
    }

    unsafe extern "C" fn post_flush(
        user: *mut c_void,
        _file: sys::OTF2_FileType,
        _loc: sys::OTF2_LocationRef,
    ) -> sys::OTF2_TimeStamp {
        let mut t = 0;
        with(user, |s| {
            t = s.clock.map_or(0, |f| f());
            true
        });
        t
    }

    static FLUSH: sys::OTF2_FlushCallbacks = sys::OTF2_FlushCallbacks {
        otf2_pre_flush: Some(pre_flush),
        otf2_post_flush: Some(post_flush),
    };

    /// One chunk of a buffer: the bytes follow this header (so `free_all` knows the size).
    #[repr(C)]
    struct Chunk {
        next: *mut Chunk,
        size: usize,
    }

    /// A new chunk for a buffer, from the account; null past the bound, which makes OTF2
    /// flush the buffer and give its chunks back (`free_all`) before asking again.
    unsafe extern "C" fn allocate(
        user: *mut c_void,
        _file: sys::OTF2_FileType,
        _loc: sys::OTF2_LocationRef,
        per_buffer: *mut *mut c_void,
        size: u64,
    ) -> *mut c_void {
        let mut chunk = ptr::null_mut();
        with(user, |s| {
            let total = size as usize + std::mem::size_of::<Chunk>();
            if s.used.saturating_add(total as u64) > s.limit {
                s.refused += 1;
                return false;
            }
            let Ok(layout) = std::alloc::Layout::from_size_align(total, 16) else {
                return false;
            };
            // SAFETY: a layout of non-zero size.
            let p = unsafe { std::alloc::alloc(layout) }.cast::<Chunk>();
            if p.is_null() {
                return false;
            }
            // SAFETY: `p` is a fresh allocation of at least a `Chunk`; `per_buffer` is the
            // buffer's own list head, which OTF2 keeps for us.
            unsafe {
                p.write(Chunk {
                    next: (*per_buffer).cast(),
                    size: total,
                });
                *per_buffer = p.cast();
            }
            s.used += total as u64;
            // SAFETY: the bytes after the header, within the allocation.
            chunk = unsafe { p.add(1) }.cast::<c_void>();
            true
        });
        chunk
    }

    /// Every chunk of a buffer given back (after its flush, or at the end).
    unsafe extern "C" fn free_all(
        user: *mut c_void,
        _file: sys::OTF2_FileType,
        _loc: sys::OTF2_LocationRef,
        per_buffer: *mut *mut c_void,
        _final: bool,
    ) {
        // SAFETY: see `with`; only the account is touched, no unwinding code runs.
        let s = unsafe { &mut *user.cast::<Shared>() };
        // SAFETY: the list `allocate` built for this buffer, freed once and emptied.
        unsafe {
            let mut p = (*per_buffer).cast::<Chunk>();
            while !p.is_null() {
                let Chunk { next, size } = p.read();
                std::alloc::dealloc(
                    p.cast(),
                    std::alloc::Layout::from_size_align_unchecked(size, 16),
                );
                s.used = s.used.saturating_sub(size as u64);
                p = next;
            }
            *per_buffer = ptr::null_mut();
        }
    }

    static MEMORY: sys::OTF2_MemoryCallbacks = sys::OTF2_MemoryCallbacks {
        otf2_allocate: Some(allocate),
        otf2_free_all: Some(free_all),
    };

    // --- the archive -----------------------------------------------------------------------

    pub struct Archive {
        raw: NonNull<sys::OTF2_Archive>,
        shared: *mut Shared,
        evts: Vec<(u64, *mut sys::OTF2_EvtWriter)>,
        defs: *mut sys::OTF2_GlobalDefWriter,
        def_files_open: bool,
        master: bool,
    }

    fn role(r: RegionRole) -> u32 {
        match r {
            RegionRole::Function => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_FUNCTION,
            RegionRole::PointToPoint => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_POINT2POINT,
            RegionRole::Collective => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_COLL_ALL2ALL,
            RegionRole::Barrier => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_BARRIER,
            RegionRole::Other => sys::OTF2_RegionRole_enum_OTF2_REGION_ROLE_UNKNOWN,
        }
    }

    fn paradigm(p: Paradigm) -> u32 {
        match p {
            Paradigm::Mpi => sys::OTF2_Paradigm_enum_OTF2_PARADIGM_MPI,
            Paradigm::User => sys::OTF2_Paradigm_enum_OTF2_PARADIGM_USER,
            Paradigm::Measurement => sys::OTF2_Paradigm_enum_OTF2_PARADIGM_MEASUREMENT_SYSTEM,
        }
    }

    fn collective_op(op: CollectiveOp) -> u32 {
        use CollectiveOp as C;
        match op {
            C::Barrier => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_BARRIER,
            C::Bcast => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_BCAST,
            C::Gather => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_GATHER,
            C::Gatherv => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_GATHERV,
            C::Scatter => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_SCATTER,
            C::Scatterv => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_SCATTERV,
            C::Allgather => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLGATHER,
            C::Allgatherv => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLGATHERV,
            C::Alltoall => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLTOALL,
            C::Alltoallv => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLTOALLV,
            C::Alltoallw => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLTOALLW,
            C::Allreduce => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLREDUCE,
            C::Reduce => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_REDUCE,
            C::ReduceScatter => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_REDUCE_SCATTER,
            C::ReduceScatterBlock => {
                sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK
            }
            C::Scan => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_SCAN,
            C::Exscan => sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_EXSCAN,
        }
    }

    fn value_type(v: ValueType) -> sys::OTF2_Type {
        (match v {
            ValueType::Int => sys::OTF2_Type_enum_OTF2_TYPE_INT64,
            ValueType::Uint => sys::OTF2_Type_enum_OTF2_TYPE_UINT64,
            ValueType::Double => sys::OTF2_Type_enum_OTF2_TYPE_DOUBLE,
        }) as _
    }

    fn metric_mode(m: MetricMode) -> u32 {
        match m {
            MetricMode::AccumulatedStart => sys::OTF2_MetricMode_enum_OTF2_METRIC_ACCUMULATED_START,
            MetricMode::AbsolutePoint => sys::OTF2_MetricMode_enum_OTF2_METRIC_ABSOLUTE_POINT,
            MetricMode::RelativeLast => sys::OTF2_MetricMode_enum_OTF2_METRIC_RELATIVE_LAST,
        }
    }

    fn mapping(m: Mapping) -> u32 {
        match m {
            Mapping::Region => sys::OTF2_MappingType_enum_OTF2_MAPPING_REGION,
            Mapping::Comm => sys::OTF2_MappingType_enum_OTF2_MAPPING_COMM,
            Mapping::Metric => sys::OTF2_MappingType_enum_OTF2_MAPPING_METRIC,
        }
    }

    fn group_type(g: GroupType) -> u32 {
        match g {
            GroupType::CommLocations => sys::OTF2_GroupType_enum_OTF2_GROUP_TYPE_COMM_LOCATIONS,
            GroupType::CommGroup => sys::OTF2_GroupType_enum_OTF2_GROUP_TYPE_COMM_GROUP,
        }
    }

    const UNDEFINED_U32: u32 = u32::MAX;

    impl Archive {
        /// Opens `dir/name.otf2` for writing, collectively over `coll`'s ranks.
        pub fn create(
            dir: &str,
            name: &str,
            coll: Box<dyn Collectives>,
            sizes: Sizes,
        ) -> Result<Archive> {
            let (dir, name) = (cstring(dir)?, cstring(name)?);
            // SAFETY: two NUL-terminated strings OTF2 copies; POSIX files, no compression.
            let raw = unsafe {
                sys::OTF2_Archive_Open(
                    dir.as_ptr(),
                    name.as_ptr(),
                    sys::OTF2_FileMode_enum_OTF2_FILEMODE_WRITE as _,
                    sizes.event_chunk,
                    sizes.def_chunk,
                    sys::OTF2_FileSubstrate_enum_OTF2_SUBSTRATE_POSIX as _,
                    sys::OTF2_Compression_enum_OTF2_COMPRESSION_NONE as _,
                )
            };
            let raw = NonNull::new(raw).ok_or_else(|| null("OTF2_Archive_Open"))?;
            let shared = Box::into_raw(Box::new(Shared {
                coll,
                used: 0,
                limit: sizes.memory_limit,
                refused: 0,
                clock: sizes.clock,
                broken: false,
            }));
            let mut a = Archive {
                raw,
                shared,
                evts: Vec::new(),
                defs: ptr::null_mut(),
                def_files_open: false,
                master: false,
            };
            let p = a.raw.as_ptr();
            // SAFETY: a live archive; FLUSH and MEMORY are statics; `shared` lives until
            // after OTF2_Archive_Close (Drop).
            unsafe {
                check("OTF2_Archive_SetFlushCallbacks", {
                    sys::OTF2_Archive_SetFlushCallbacks(p, &FLUSH, shared.cast())
                })?;
                check("OTF2_Archive_SetMemoryCallbacks", {
                    sys::OTF2_Archive_SetMemoryCallbacks(p, &MEMORY, shared.cast())
                })?;
                // The context pointers are opaque to OTF2: our callbacks ignore them.
                check("OTF2_Archive_SetCollectiveCallbacks", {
                    sys::OTF2_Archive_SetCollectiveCallbacks(
                        p,
                        &COLLECTIVES,
                        shared.cast(),
                        shared.cast(),
                        ptr::null_mut(),
                    )
                })?;
                check(
                    "OTF2_Archive_OpenEvtFiles",
                    sys::OTF2_Archive_OpenEvtFiles(p),
                )?;
                check(
                    "OTF2_Archive_IsPrimary",
                    sys::OTF2_Archive_IsPrimary(p, &mut a.master),
                )?;
            }
            Ok(a)
        }

        pub fn is_master(&mut self) -> bool {
            self.master
        }

        /// Buffer chunks refused at the memory bound so far (each a flush before its time).
        pub fn lost(&mut self) -> u64 {
            // SAFETY: `shared` lives as long as `self`; no callback runs now.
            unsafe { (*self.shared).refused }
        }

        pub fn set_property(&mut self, name: &str, value: &str) -> Result<()> {
            let (n, v) = (cstring(name)?, cstring(value)?);
            // SAFETY: a live archive; OTF2 copies both strings.
            check("OTF2_Archive_SetProperty", unsafe {
                sys::OTF2_Archive_SetProperty(self.raw.as_ptr(), n.as_ptr(), v.as_ptr(), true)
            })
        }

        /// `loc`'s event writer: inline where it is the last one opened (a rank of one
        /// thread has no other), which every record asks for.
        #[inline(always)]
        fn writer(&mut self, loc: u64) -> Result<*mut sys::OTF2_EvtWriter> {
            match self.evts.last() {
                Some(&(l, w)) if l == loc => Ok(w),
                _ => self.other_writer(loc),
            }
        }

        #[inline(never)]
        fn other_writer(&mut self, loc: u64) -> Result<*mut sys::OTF2_EvtWriter> {
            if let Some((_, w)) = self.evts.iter().find(|(l, _)| *l == loc) {
                return Ok(*w);
            }
            // SAFETY: a live archive with its event files open.
            let w = unsafe { sys::OTF2_Archive_GetEvtWriter(self.raw.as_ptr(), loc) };
            if w.is_null() {
                return Err(null("OTF2_Archive_GetEvtWriter"));
            }
            self.evts.push((loc, w));
            Ok(w)
        }

        #[inline]
        pub fn enter(&mut self, loc: u64, t: u64, region: u32) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: a live event writer of this archive; no attribute list.
            check("OTF2_EvtWriter_Enter", unsafe {
                sys::OTF2_EvtWriter_Enter(w, ptr::null_mut(), t, region)
            })
        }

        #[inline]
        pub fn leave(&mut self, loc: u64, t: u64, region: u32) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_Leave", unsafe {
                sys::OTF2_EvtWriter_Leave(w, ptr::null_mut(), t, region)
            })
        }

        #[inline]
        pub fn mpi_send(
            &mut self,
            loc: u64,
            t: u64,
            peer: u32,
            comm: u32,
            tag: u32,
            len: u64,
        ) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiSend", unsafe {
                sys::OTF2_EvtWriter_MpiSend(w, ptr::null_mut(), t, peer, comm, tag, len)
            })
        }

        #[allow(clippy::too_many_arguments)]
        pub fn mpi_isend(
            &mut self,
            loc: u64,
            t: u64,
            peer: u32,
            comm: u32,
            tag: u32,
            len: u64,
            req: u64,
        ) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiIsend", unsafe {
                sys::OTF2_EvtWriter_MpiIsend(w, ptr::null_mut(), t, peer, comm, tag, len, req)
            })
        }

        pub fn mpi_isend_complete(&mut self, loc: u64, t: u64, req: u64) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiIsendComplete", unsafe {
                sys::OTF2_EvtWriter_MpiIsendComplete(w, ptr::null_mut(), t, req)
            })
        }

        pub fn mpi_irecv_request(&mut self, loc: u64, t: u64, req: u64) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiIrecvRequest", unsafe {
                sys::OTF2_EvtWriter_MpiIrecvRequest(w, ptr::null_mut(), t, req)
            })
        }

        #[inline]
        pub fn mpi_recv(
            &mut self,
            loc: u64,
            t: u64,
            peer: u32,
            comm: u32,
            tag: u32,
            len: u64,
        ) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiRecv", unsafe {
                sys::OTF2_EvtWriter_MpiRecv(w, ptr::null_mut(), t, peer, comm, tag, len)
            })
        }

        #[allow(clippy::too_many_arguments)]
        pub fn mpi_irecv(
            &mut self,
            loc: u64,
            t: u64,
            peer: u32,
            comm: u32,
            tag: u32,
            len: u64,
            req: u64,
        ) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiIrecv", unsafe {
                sys::OTF2_EvtWriter_MpiIrecv(w, ptr::null_mut(), t, peer, comm, tag, len, req)
            })
        }

        pub fn mpi_request_cancelled(&mut self, loc: u64, t: u64, req: u64) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiRequestCancelled", unsafe {
                sys::OTF2_EvtWriter_MpiRequestCancelled(w, ptr::null_mut(), t, req)
            })
        }

        pub fn collective_begin(&mut self, loc: u64, t: u64) -> Result<()> {
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiCollectiveBegin", unsafe {
                sys::OTF2_EvtWriter_MpiCollectiveBegin(w, ptr::null_mut(), t)
            })
        }

        #[allow(clippy::too_many_arguments)]
        pub fn collective_end(
            &mut self,
            loc: u64,
            t: u64,
            op: CollectiveOp,
            comm: u32,
            root: Option<u32>,
            sent: u64,
            received: u64,
        ) -> Result<()> {
            let w = self.writer(loc)?;
            let root = root.unwrap_or(UNDEFINED_U32);
            // SAFETY: as in `enter`.
            check("OTF2_EvtWriter_MpiCollectiveEnd", unsafe {
                sys::OTF2_EvtWriter_MpiCollectiveEnd(
                    w,
                    ptr::null_mut(),
                    t,
                    collective_op(op) as _,
                    comm,
                    root,
                    sent,
                    received,
                )
            })
        }

        pub fn metric(
            &mut self,
            loc: u64,
            t: u64,
            metric: u32,
            values: &[MetricValue],
        ) -> Result<()> {
            let n = u8::try_from(values.len())
                .map_err(|_| Error::Invalid(format!("{} values in one metric", values.len())))?;
            let mut types = Vec::with_capacity(values.len());
            let mut raw = Vec::with_capacity(values.len());
            for v in values {
                let (t, r) = match *v {
                    MetricValue::Int(x) => {
                        (ValueType::Int, sys::OTF2_MetricValue { signed_int: x })
                    }
                    MetricValue::Uint(x) => {
                        (ValueType::Uint, sys::OTF2_MetricValue { unsigned_int: x })
                    }
                    MetricValue::Double(x) => (
                        ValueType::Double,
                        sys::OTF2_MetricValue { floating_point: x },
                    ),
                };
                types.push(value_type(t));
                raw.push(r);
            }
            let w = self.writer(loc)?;
            // SAFETY: as in `enter`; `n` types and values, read during the call.
            check("OTF2_EvtWriter_Metric", unsafe {
                sys::OTF2_EvtWriter_Metric(
                    w,
                    ptr::null_mut(),
                    t,
                    metric,
                    n,
                    types.as_ptr(),
                    raw.as_ptr(),
                )
            })
        }

        /// Closes every event writer and the event files (collective); gives each
        /// location's number of events.
        pub fn close_events(&mut self) -> Result<Vec<(u64, u64)>> {
            let a = self.raw.as_ptr();
            let mut counts = Vec::with_capacity(self.evts.len());
            for (loc, w) in std::mem::take(&mut self.evts) {
                let mut n = 0;
                // SAFETY: a live writer, closed once right after.
                unsafe {
                    check(
                        "OTF2_EvtWriter_GetNumberOfEvents",
                        sys::OTF2_EvtWriter_GetNumberOfEvents(w, &mut n),
                    )?;
                    check(
                        "OTF2_Archive_CloseEvtWriter",
                        sys::OTF2_Archive_CloseEvtWriter(a, w),
                    )?;
                }
                counts.push((loc, n));
            }
            // SAFETY: opened in `create`, every writer closed.
            check("OTF2_Archive_CloseEvtFiles", unsafe {
                sys::OTF2_Archive_CloseEvtFiles(a)
            })?;
            Ok(counts)
        }

        /// A location's local definitions: mapping tables (local id -> global id, dense)
        /// and clock offsets. After [`Archive::close_events`].
        pub fn write_local(
            &mut self,
            loc: u64,
            maps: &[(Mapping, Vec<u64>)],
            offsets: &[(u64, i64, f64)],
        ) -> Result<()> {
            let a = self.raw.as_ptr();
            if !self.def_files_open {
                // SAFETY: a live archive, event files closed.
                check("OTF2_Archive_OpenDefFiles", unsafe {
                    sys::OTF2_Archive_OpenDefFiles(a)
                })?;
                self.def_files_open = true;
            }
            // SAFETY: a live archive with its definition files open.
            let d = unsafe { sys::OTF2_Archive_GetDefWriter(a, loc) };
            if d.is_null() {
                return Err(null("OTF2_Archive_GetDefWriter"));
            }
            let mut r = Ok(());
            for (kind, ids) in maps {
                if ids.is_empty() {
                    continue;
                }
                // SAFETY: `ids.len()` ids read during the call; the map freed below.
                let map = unsafe {
                    sys::OTF2_IdMap_CreateFromUint64Array(ids.len() as u64, ids.as_ptr(), true)
                };
                if map.is_null() {
                    // With `optimizeSize` OTF2 gives no map for the identity: none needed.
                    if ids.iter().enumerate().all(|(i, &g)| i as u64 == g) {
                        continue;
                    }
                    r = Err(null("OTF2_IdMap_CreateFromUint64Array"));
                    break;
                }
                // SAFETY: the live local writer and map; the map freed once.
                r = check("OTF2_DefWriter_WriteMappingTable", unsafe {
                    let c = sys::OTF2_DefWriter_WriteMappingTable(d, mapping(*kind) as _, map);
                    sys::OTF2_IdMap_Free(map);
                    c
                });
                if r.is_err() {
                    break;
                }
            }
            for &(t, off, sd) in offsets {
                if r.is_err() {
                    break;
                }
                // SAFETY: the live local writer.
                r = check("OTF2_DefWriter_WriteClockOffset", unsafe {
                    sys::OTF2_DefWriter_WriteClockOffset(d, t, off, sd)
                });
            }
            // SAFETY: the writer got above, closed once.
            let c = check("OTF2_Archive_CloseDefWriter", unsafe {
                sys::OTF2_Archive_CloseDefWriter(a, d)
            });
            r.and(c)
        }

        fn global(&mut self) -> Result<*mut sys::OTF2_GlobalDefWriter> {
            if !self.master {
                return Err(Error::Invalid(
                    "global definitions are written by rank 0 alone".into(),
                ));
            }
            if self.defs.is_null() {
                // SAFETY: a live archive of which this process is the master.
                self.defs = unsafe { sys::OTF2_Archive_GetGlobalDefWriter(self.raw.as_ptr()) };
                if self.defs.is_null() {
                    return Err(null("OTF2_Archive_GetGlobalDefWriter"));
                }
            }
            Ok(self.defs)
        }

        pub fn def_string(&mut self, id: u32, s: &str) -> Result<()> {
            let (g, s) = (self.global()?, cstring(s)?);
            // SAFETY: the live global definition writer; OTF2 copies the string.
            check("OTF2_GlobalDefWriter_WriteString", unsafe {
                sys::OTF2_GlobalDefWriter_WriteString(g, id, s.as_ptr())
            })
        }

        pub fn def_region(&mut self, id: u32, name: u32, r: RegionRole, p: Paradigm) -> Result<()> {
            let g = self.global()?;
            // SAFETY: the live global definition writer; `name` a defined string.
            check("OTF2_GlobalDefWriter_WriteRegion", unsafe {
                sys::OTF2_GlobalDefWriter_WriteRegion(
                    g,
                    id,
                    name,
                    name,
                    name,
                    role(r) as _,
                    paradigm(p) as _,
                    sys::OTF2_RegionFlag_enum_OTF2_REGION_FLAG_NONE as _,
                    UNDEFINED_U32,
                    0,
                    0,
                )
            })
        }

        pub fn def_clock(&mut self, resolution: u64, start: u64, length: u64) -> Result<()> {
            let g = self.global()?;
            // SAFETY: the live global definition writer.
            check("OTF2_GlobalDefWriter_WriteClockProperties", unsafe {
                sys::OTF2_GlobalDefWriter_WriteClockProperties(
                    g,
                    resolution,
                    start,
                    length,
                    u64::MAX, // OTF2_UNDEFINED_TIMESTAMP
                )
            })
        }

        pub fn def_system_tree_node(
            &mut self,
            id: u32,
            name: u32,
            class: u32,
            parent: Option<u32>,
        ) -> Result<()> {
            let g = self.global()?;
            // SAFETY: the live global definition writer; strings (and parent) defined.
            check("OTF2_GlobalDefWriter_WriteSystemTreeNode", unsafe {
                sys::OTF2_GlobalDefWriter_WriteSystemTreeNode(
                    g,
                    id,
                    name,
                    class,
                    parent.unwrap_or(UNDEFINED_U32),
                )
            })
        }

        pub fn def_location_group(&mut self, id: u32, name: u32, node: u32) -> Result<()> {
            let g = self.global()?;
            // SAFETY: the live global definition writer; string and node defined.
            check("OTF2_GlobalDefWriter_WriteLocationGroup", unsafe {
                sys::OTF2_GlobalDefWriter_WriteLocationGroup(
                    g,
                    id,
                    name,
                    sys::OTF2_LocationGroupType_enum_OTF2_LOCATION_GROUP_TYPE_PROCESS as _,
                    node,
                    UNDEFINED_U32,
                )
            })
        }

        pub fn def_location(&mut self, id: u64, name: u32, events: u64, group: u32) -> Result<()> {
            let g = self.global()?;
            // SAFETY: the live global definition writer; string and group defined.
            check("OTF2_GlobalDefWriter_WriteLocation", unsafe {
                sys::OTF2_GlobalDefWriter_WriteLocation(
                    g,
                    id,
                    name,
                    sys::OTF2_LocationType_enum_OTF2_LOCATION_TYPE_CPU_THREAD as _,
                    events,
                    group,
                )
            })
        }

        pub fn def_group(
            &mut self,
            id: u32,
            name: u32,
            t: GroupType,
            members: &[u64],
        ) -> Result<()> {
            let g = self.global()?;
            let n = u32::try_from(members.len())
                .map_err(|_| Error::Invalid(format!("{} members in one group", members.len())))?;
            // SAFETY: the live global definition writer; `n` members read during the call.
            check("OTF2_GlobalDefWriter_WriteGroup", unsafe {
                sys::OTF2_GlobalDefWriter_WriteGroup(
                    g,
                    id,
                    name,
                    group_type(t) as _,
                    sys::OTF2_Paradigm_enum_OTF2_PARADIGM_MPI as _,
                    sys::OTF2_GroupFlag_enum_OTF2_GROUP_FLAG_NONE as _,
                    n,
                    members.as_ptr(),
                )
            })
        }

        pub fn def_comm(&mut self, id: u32, name: u32, group: u32) -> Result<()> {
            let g = self.global()?;
            // SAFETY: the live global definition writer; string and group defined.
            check("OTF2_GlobalDefWriter_WriteComm", unsafe {
                sys::OTF2_GlobalDefWriter_WriteComm(
                    g,
                    id,
                    name,
                    group,
                    UNDEFINED_U32,
                    sys::OTF2_CommFlag_enum_OTF2_COMM_FLAG_NONE as _,
                )
            })
        }

        pub fn def_metric_member(
            &mut self,
            id: u32,
            name: u32,
            description: u32,
            unit: u32,
            v: ValueType,
            m: MetricMode,
        ) -> Result<()> {
            let g = self.global()?;
            // SAFETY: the live global definition writer; strings defined.
            check("OTF2_GlobalDefWriter_WriteMetricMember", unsafe {
                sys::OTF2_GlobalDefWriter_WriteMetricMember(
                    g,
                    id,
                    name,
                    description,
                    sys::OTF2_MetricType_enum_OTF2_METRIC_TYPE_OTHER as _,
                    metric_mode(m) as _,
                    value_type(v),
                    sys::OTF2_Base_enum_OTF2_BASE_DECIMAL as _,
                    0,
                    unit,
                )
            })
        }

        pub fn def_metric_class(
            &mut self,
            id: u32,
            members: &[u32],
            synchronous: bool,
        ) -> Result<()> {
            let g = self.global()?;
            let n = u8::try_from(members.len())
                .map_err(|_| Error::Invalid(format!("{} members in one metric", members.len())))?;
            let occurrence = if synchronous {
                sys::OTF2_MetricOccurrence_enum_OTF2_METRIC_SYNCHRONOUS
            } else {
                sys::OTF2_MetricOccurrence_enum_OTF2_METRIC_ASYNCHRONOUS
            };
            // SAFETY: the live global definition writer; `n` members read during the call.
            check("OTF2_GlobalDefWriter_WriteMetricClass", unsafe {
                sys::OTF2_GlobalDefWriter_WriteMetricClass(
                    g,
                    id,
                    n,
                    members.as_ptr(),
                    occurrence as _,
                    sys::OTF2_RecorderKind_enum_OTF2_RECORDER_KIND_ABSTRACT as _,
                )
            })
        }

        /// Closes the definition files and the archive (collective).
        pub fn close(mut self) -> Result<()> {
            let a = self.raw.as_ptr();
            let mut r = Ok(());
            if !self.evts.is_empty() {
                r = self.close_events().map(|_| ());
            }
            if self.def_files_open {
                // SAFETY: opened by `write_local`, every local writer closed there.
                r = r.and(check("OTF2_Archive_CloseDefFiles", unsafe {
                    sys::OTF2_Archive_CloseDefFiles(a)
                }));
                self.def_files_open = false;
            }
            let shared = std::mem::replace(&mut self.shared, ptr::null_mut());
            std::mem::forget(self);
            // SAFETY: the archive, closed once (Drop is skipped above); then the callbacks'
            // state, which no callback reaches after the close.
            let c = check("OTF2_Archive_Close", unsafe { sys::OTF2_Archive_Close(a) });
            // SAFETY: from Box::into_raw in `create`, freed once.
            drop(unsafe { Box::from_raw(shared) });
            r.and(c)
        }
    }

    impl Drop for Archive {
        fn drop(&mut self) {
            // SAFETY: the archive, closed once (`close` forgets it before closing), then the
            // callbacks' state.
            unsafe {
                sys::OTF2_Archive_Close(self.raw.as_ptr());
                drop(Box::from_raw(self.shared));
            }
        }
    }

    // --- reading ---------------------------------------------------------------------------

    const INTERRUPT: sys::OTF2_CallbackCode =
        sys::OTF2_CallbackCode_enum_OTF2_CALLBACK_INTERRUPT as _;

    unsafe extern "C" {
        /// libc's, for the strings `OTF2_Reader_GetPropertyNames` and `_GetProperty` allocate
        /// with `malloc` (OTF2 3.0 API reference).
        fn free(p: *mut c_void);
    }

    /// What the reader's callbacks reach through their user data: what is read so far, and
    /// the first callback that panicked (then every later one interrupts the reading).
    #[derive(Default)]
    struct ReadState {
        raw: Raw,
        panicked: Option<(&'static str, String)>,
    }

    #[cfg(test)]
    thread_local! {
        /// The callback that panics, in this crate's tests of the unwinding.
        pub static PANIC_IN: std::cell::Cell<Option<&'static str>> =
            const { std::cell::Cell::new(None) };
    }

    /// Runs `f` on the state behind `user`; a panic (or an earlier one) interrupts the reading
    /// (`OTF2_CALLBACK_INTERRUPT`) instead of unwinding into C, and is kept for [`read`].
    fn reading(
        user: *mut c_void,
        callback: &'static str,
        f: impl FnOnce(&mut Raw),
    ) -> sys::OTF2_CallbackCode {
        // SAFETY: `user` is the `ReadState` of the `read` in progress, which does not touch it
        // while an OTF2 call that may call back runs; OTF2's serial reader calls back on that
        // thread, one call at a time.
        let s = unsafe { &mut *user.cast::<ReadState>() };
        if s.panicked.is_some() {
            return INTERRUPT;
        }
        let run = AssertUnwindSafe(|| {
            #[cfg(test)]
            if PANIC_IN.get() == Some(callback) {
                panic!("a panic in {callback}, as the test asked");
            }
            f(&mut s.raw)
        });
        match catch_unwind(run) {
            Ok(()) => OK,
            Err(p) => {
                let message = p
                    .downcast_ref::<&str>()
                    .map(|m| m.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                s.panicked = Some((callback, message));
                INTERRUPT
            }
        }
    }

    /// `n` items at `p` (none when `p` is null).
    ///
    /// # Safety
    /// A non-null `p` points to `n` initialised items for the callback's duration.
    unsafe fn items<'a, T>(p: *const T, n: usize) -> &'a [T] {
        if p.is_null() || n == 0 {
            &[]
        } else {
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts(p, n) }
        }
    }

    /// A C string OTF2 lends or allocated, copied (lossily past invalid UTF-8).
    ///
    /// # Safety
    /// A non-null `p` is NUL-terminated and readable for the call's duration.
    unsafe fn text(p: *const std::ffi::c_char) -> String {
        if p.is_null() {
            return String::new();
        }
        // SAFETY: the caller's contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    // Global definitions.

    unsafe extern "C" fn def_string(
        user: *mut c_void,
        id: sys::OTF2_StringRef,
        s: *const std::ffi::c_char,
    ) -> sys::OTF2_CallbackCode {
        reading(user, "String", |r| {
            // SAFETY: OTF2 passes the definition's NUL-terminated string.
            r.strings.insert(id, unsafe { text(s) });
        })
    }

    unsafe extern "C" fn def_clock(
        user: *mut c_void,
        resolution: u64,
        offset: u64,
        length: u64,
        _realtime: u64,
    ) -> sys::OTF2_CallbackCode {
        reading(user, "ClockProperties", |r| {
            r.clock = (resolution, offset, length)
        })
    }

    unsafe extern "C" fn def_location_group(
        user: *mut c_void,
        id: sys::OTF2_LocationGroupRef,
        name: sys::OTF2_StringRef,
        _: sys::OTF2_LocationGroupType,
        _: sys::OTF2_SystemTreeNodeRef,
        _: sys::OTF2_LocationGroupRef,
    ) -> sys::OTF2_CallbackCode {
        reading(user, "LocationGroup", |r| {
            r.groups.insert(id, name);
        })
    }

    unsafe extern "C" fn def_location(
        user: *mut c_void,
        id: sys::OTF2_LocationRef,
        name: sys::OTF2_StringRef,
        _: sys::OTF2_LocationType,
        _events: u64,
        group: sys::OTF2_LocationGroupRef,
    ) -> sys::OTF2_CallbackCode {
        reading(user, "Location", |r| r.locations.push((id, name, group)))
    }

    #[allow(clippy::too_many_arguments)]
    unsafe extern "C" fn def_region(
        user: *mut c_void,
        id: sys::OTF2_RegionRef,
        name: sys::OTF2_StringRef,
        _: sys::OTF2_StringRef,
        _: sys::OTF2_StringRef,
        _: sys::OTF2_RegionRole,
        _: sys::OTF2_Paradigm,
        _: sys::OTF2_RegionFlag,
        _: sys::OTF2_StringRef,
        _: u32,
        _: u32,
    ) -> sys::OTF2_CallbackCode {
        reading(user, "Region", |r| r.regions.push((id, name)))
    }

    #[allow(clippy::too_many_arguments)]
    unsafe extern "C" fn def_metric_member(
        user: *mut c_void,
        id: sys::OTF2_MetricMemberRef,
        name: sys::OTF2_StringRef,
        _: sys::OTF2_StringRef,
        _: sys::OTF2_MetricType,
        _: sys::OTF2_MetricMode,
        _: sys::OTF2_Type,
        _: sys::OTF2_Base,
        _: i64,
        _: sys::OTF2_StringRef,
    ) -> sys::OTF2_CallbackCode {
        reading(user, "MetricMember", |r| {
            r.members.insert(id, name);
        })
    }

    unsafe extern "C" fn def_metric_class(
        user: *mut c_void,
        id: sys::OTF2_MetricRef,
        n: u8,
        members: *const sys::OTF2_MetricMemberRef,
        _: sys::OTF2_MetricOccurrence,
        _: sys::OTF2_RecorderKind,
    ) -> sys::OTF2_CallbackCode {
        reading(user, "MetricClass", |r| {
            // SAFETY: OTF2 passes the class's `n` members.
            let members = unsafe { items(members, n.into()) };
            r.classes.insert(id, members.to_vec());
        })
    }

    // Events: each counted on its location (ids already global: the mapping tables apply).

    macro_rules! on_events {
        ($($name:ident => $kind:ident ($($arg:ty),*);)*) => {$(
            unsafe extern "C" fn $name(
                loc: sys::OTF2_LocationRef,
                t: sys::OTF2_TimeStamp,
                user: *mut c_void,
                _: *mut sys::OTF2_AttributeList,
                $(_: $arg),*
            ) -> sys::OTF2_CallbackCode {
                reading(user, stringify!($kind), |r| {
                    r.note(loc, t, RecordKind::$kind);
                })
            }
        )*};
    }

    on_events! {
        evt_buffer_flush => BufferFlush(sys::OTF2_TimeStamp);
        evt_enter => Enter(sys::OTF2_RegionRef);
        evt_leave => Leave(sys::OTF2_RegionRef);
        evt_mpi_send => MpiSend(u32, sys::OTF2_CommRef, u32, u64);
        evt_mpi_isend => MpiIsend(u32, sys::OTF2_CommRef, u32, u64, u64);
        evt_mpi_isend_complete => MpiIsendComplete(u64);
        evt_mpi_irecv_request => MpiIrecvRequest(u64);
        evt_mpi_recv => MpiRecv(u32, sys::OTF2_CommRef, u32, u64);
        evt_mpi_irecv => MpiIrecv(u32, sys::OTF2_CommRef, u32, u64, u64);
        evt_mpi_request_cancelled => MpiRequestCancelled(u64);
        evt_mpi_collective_begin => MpiCollectiveBegin();
        evt_mpi_collective_end =>
            MpiCollectiveEnd(sys::OTF2_CollectiveOp, sys::OTF2_CommRef, u32, u64, u64);
        evt_unknown => Other();
    }

    unsafe extern "C" fn evt_metric(
        loc: sys::OTF2_LocationRef,
        t: sys::OTF2_TimeStamp,
        user: *mut c_void,
        _: *mut sys::OTF2_AttributeList,
        metric: sys::OTF2_MetricRef,
        _: u8,
        _: *const sys::OTF2_Type,
        _: *const sys::OTF2_MetricValue,
    ) -> sys::OTF2_CallbackCode {
        reading(user, "Metric", |r| {
            *r.note(loc, t, RecordKind::Metric)
                .metrics
                .entry(metric)
                .or_default() += 1;
        })
    }

    /// `$set(c, Some($f))` for each setter of callbacks object `c`, each checked (`?`).
    macro_rules! set_callbacks {
        ($c:ident: $($set:ident($f:ident);)*) => {$(
            // SAFETY: a live callbacks object and a trampoline of the type `$set` takes.
            check(stringify!($set), unsafe { sys::$set($c, Some($f)) })?;
        )*};
    }

    /// An open reader, closed (with every reader it opened) when dropped.
    struct Reader(NonNull<sys::OTF2_Reader>);

    impl Drop for Reader {
        fn drop(&mut self) {
            // SAFETY: opened by `OTF2_Reader_Open`, closed once.
            unsafe { sys::OTF2_Reader_Close(self.0.as_ptr()) };
        }
    }

    /// `set` (the callbacks' registration), then `delete` of the callbacks whatever happened.
    fn registered<C>(
        call: &'static str,
        new: unsafe extern "C" fn() -> *mut C,
        set: impl FnOnce(*mut C) -> Result<()>,
        delete: unsafe extern "C" fn(*mut C),
    ) -> Result<()> {
        // SAFETY: OTF2's constructor of an empty callbacks object.
        let cbs = unsafe { new() };
        if cbs.is_null() {
            return Err(null(call));
        }
        let r = set(cbs);
        // SAFETY: the object made above, freed once; OTF2 copied it when registering.
        unsafe { delete(cbs) };
        r
    }

    /// The error of a reading call: a callback's panic if one interrupted it, else OTF2's.
    fn read_check(call: &'static str, code: sys::OTF2_ErrorCode, st: *mut ReadState) -> Result<()> {
        // SAFETY: `read`'s state, between OTF2's calls.
        if let Some((callback, message)) = unsafe { (*st).panicked.take() } {
            return Err(Error::Callback { callback, message });
        }
        check(call, code)
    }

    /// Reads the archive of the anchor file `anchor` (OTF2 3.0 API reference, "Usage in
    /// reading mode"): its properties and global definitions, then every location's local
    /// definitions (so that the mapping tables apply) and all events through the global
    /// event reader, in time order.
    pub fn read(anchor: &str) -> Result<Raw> {
        let path = cstring(anchor)?;
        // Declared before the reader: it outlives every callback. Reached through `st`
        // alone until the reader is closed, as the callbacks reach it.
        let mut state = ReadState::default();
        let st: *mut ReadState = &raw mut state;
        let user = st.cast::<c_void>();
        // SAFETY: a NUL-terminated path, read during the call.
        let reader = unsafe { sys::OTF2_Reader_Open(path.as_ptr()) };
        let reader = Reader(NonNull::new(reader).ok_or_else(|| Error::Otf2 {
            call: "OTF2_Reader_Open",
            code: -1,
            name: "no archive: the anchor file is corrupt or not OTF2's".into(),
        })?);
        let r = reader.0.as_ptr();
        // SAFETY: a live reader.
        check("OTF2_Reader_SetSerialCollectiveCallbacks", unsafe {
            sys::OTF2_Reader_SetSerialCollectiveCallbacks(r)
        })?;
        let props = properties(r)?;
        // SAFETY: `st` is `state`; no OTF2 call is running.
        unsafe { (*st).raw.properties = props };

        // SAFETY: a live reader.
        let defs = unsafe { sys::OTF2_Reader_GetGlobalDefReader(r) };
        if defs.is_null() {
            return Err(null("OTF2_Reader_GetGlobalDefReader"));
        }
        registered(
            "OTF2_GlobalDefReaderCallbacks_New",
            sys::OTF2_GlobalDefReaderCallbacks_New,
            |c| {
                set_callbacks! { c:
                    OTF2_GlobalDefReaderCallbacks_SetStringCallback(def_string);
                    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(def_clock);
                    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(def_location_group);
                    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(def_location);
                    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(def_region);
                    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(def_metric_member);
                    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(def_metric_class);
                }
                // SAFETY: the live reader, its global definition reader and the callbacks;
                // `user` outlives the reader.
                check("OTF2_Reader_RegisterGlobalDefCallbacks", unsafe {
                    sys::OTF2_Reader_RegisterGlobalDefCallbacks(r, defs, c, user)
                })
            },
            sys::OTF2_GlobalDefReaderCallbacks_Delete,
        )?;
        let mut n = 0;
        // SAFETY: the live global definition reader, its callbacks' state `user` untouched
        // until the call returns.
        let code = unsafe { sys::OTF2_Reader_ReadAllGlobalDefinitions(r, defs, &mut n) };
        read_check("OTF2_Reader_ReadAllGlobalDefinitions", code, st)?;
        // SAFETY: the reader got above, closed once.
        check("OTF2_Reader_CloseGlobalDefReader", unsafe {
            sys::OTF2_Reader_CloseGlobalDefReader(r, defs)
        })?;

        // SAFETY: as above.
        let locations: Vec<u64> = unsafe { &(*st).raw.locations }
            .iter()
            .map(|l| l.0)
            .collect();
        for &loc in &locations {
            // SAFETY: a live reader; `loc` a defined location.
            check("OTF2_Reader_SelectLocation", unsafe {
                sys::OTF2_Reader_SelectLocation(r, loc)
            })?;
        }
        // The local definition files are optional (an archive of one process has none).
        // SAFETY: a live reader, its locations selected.
        let def_files =
            unsafe { sys::OTF2_Reader_OpenDefFiles(r) } == sys::OTF2_ErrorCode_OTF2_SUCCESS;
        // SAFETY: as above.
        check("OTF2_Reader_OpenEvtFiles", unsafe {
            sys::OTF2_Reader_OpenEvtFiles(r)
        })?;
        // An archive `name.otf2` keeps each location's files in `name/` (OTF2 3.0 API
        // reference): asking OTF2 for a local definition file that is not there prints errors.
        let local_dir = anchor.strip_suffix(".otf2").map(std::path::Path::new);
        let has_defs = |loc: u64| local_dir.is_none_or(|d| d.join(format!("{loc}.def")).exists());
        let mut evts = Vec::with_capacity(locations.len());
        for &loc in &locations {
            if def_files && has_defs(loc) {
                // SAFETY: a live reader with its definition files open.
                let d = unsafe { sys::OTF2_Reader_GetDefReader(r, loc) };
                if !d.is_null() {
                    let mut n = 0;
                    // SAFETY: the local reader got above (no callbacks: the mapping tables
                    // and clock offsets are kept by OTF2 itself), closed once.
                    unsafe {
                        check(
                            "OTF2_Reader_ReadAllLocalDefinitions",
                            sys::OTF2_Reader_ReadAllLocalDefinitions(r, d, &mut n),
                        )?;
                        check(
                            "OTF2_Reader_CloseDefReader",
                            sys::OTF2_Reader_CloseDefReader(r, d),
                        )?;
                    }
                }
            }
            // SAFETY: a live reader with its event files open.
            let e = unsafe { sys::OTF2_Reader_GetEvtReader(r, loc) };
            if e.is_null() {
                return Err(null("OTF2_Reader_GetEvtReader"));
            }
            evts.push((loc, e));
        }
        if def_files {
            // SAFETY: opened above, every local definition reader closed.
            check("OTF2_Reader_CloseDefFiles", unsafe {
                sys::OTF2_Reader_CloseDefFiles(r)
            })?;
        }

        // SAFETY: a live reader, its local event readers open.
        let events = unsafe { sys::OTF2_Reader_GetGlobalEvtReader(r) };
        if events.is_null() {
            return Err(null("OTF2_Reader_GetGlobalEvtReader"));
        }
        registered(
            "OTF2_GlobalEvtReaderCallbacks_New",
            sys::OTF2_GlobalEvtReaderCallbacks_New,
            |c| {
                set_callbacks! { c:
                    OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(evt_buffer_flush);
                    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(evt_enter);
                    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(evt_leave);
                    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(evt_mpi_send);
                    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(evt_mpi_isend);
                    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(
                        evt_mpi_isend_complete
                    );
                    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(
                        evt_mpi_irecv_request
                    );
                    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(evt_mpi_recv);
                    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(evt_mpi_irecv);
                    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(
                        evt_mpi_request_cancelled
                    );
                    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(
                        evt_mpi_collective_begin
                    );
                    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(
                        evt_mpi_collective_end
                    );
                    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(evt_metric);
                    OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(evt_unknown);
                }
                // SAFETY: the live global event reader and callbacks; `user` as above.
                check("OTF2_Reader_RegisterGlobalEvtCallbacks", unsafe {
                    sys::OTF2_Reader_RegisterGlobalEvtCallbacks(r, events, c, user)
                })
            },
            sys::OTF2_GlobalEvtReaderCallbacks_Delete,
        )?;
        let mut n = 0;
        // SAFETY: the live global event reader; `user` untouched until the call returns.
        let code = unsafe { sys::OTF2_Reader_ReadAllGlobalEvents(r, events, &mut n) };
        read_check("OTF2_Reader_ReadAllGlobalEvents", code, st)?;
        // Records of the kinds without a callback: a location's position is the number of
        // its records read.
        for (loc, e) in evts {
            let mut read = 0;
            // SAFETY: a local event reader of the global one, still open.
            check("OTF2_EvtReader_GetPos", unsafe {
                sys::OTF2_EvtReader_GetPos(e, &mut read)
            })?;
            // SAFETY: as above.
            let tally = unsafe { (*st).raw.tallies.entry(loc).or_default() };
            let seen: u64 = tally.counts.iter().sum();
            tally.counts[RecordKind::Other as usize] += read.saturating_sub(seen);
        }
        // SAFETY: the global event reader, closed once, then the event files.
        unsafe {
            check(
                "OTF2_Reader_CloseGlobalEvtReader",
                sys::OTF2_Reader_CloseGlobalEvtReader(r, events),
            )?;
            check(
                "OTF2_Reader_CloseEvtFiles",
                sys::OTF2_Reader_CloseEvtFiles(r),
            )?;
        }
        drop(reader);
        Ok(state.raw)
    }

    /// The anchor file's properties (name, value).
    fn properties(r: *mut sys::OTF2_Reader) -> Result<Vec<(String, String)>> {
        let (mut n, mut names) = (0u32, ptr::null_mut());
        // SAFETY: a live reader; OTF2 allocates `names` (one block, freed below).
        check("OTF2_Reader_GetPropertyNames", unsafe {
            sys::OTF2_Reader_GetPropertyNames(r, &mut n, &mut names)
        })?;
        let mut out = Vec::with_capacity(n as usize);
        let mut result = Ok(());
        // SAFETY: `n` name pointers, valid until `names` is freed.
        for &name in unsafe { items(names.cast_const(), n as usize) } {
            let mut value = ptr::null_mut();
            // SAFETY: a name OTF2 gave; it allocates `value` with malloc, freed below.
            let code = unsafe { sys::OTF2_Reader_GetProperty(r, name, &mut value) };
            result = check("OTF2_Reader_GetProperty", code);
            if result.is_err() {
                break;
            }
            // SAFETY: NUL-terminated strings of OTF2's; `value` is ours to free, once.
            unsafe {
                out.push((text(name), text(value)));
                free(value.cast());
            }
        }
        // SAFETY: the block OTF2_Reader_GetPropertyNames allocated, freed once (null when
        // there are no properties, which `free` takes).
        unsafe { free(names.cast()) };
        result.map(|()| out)
    }
}

pub use imp::{Archive, read};

#[cfg(all(test, not(mpit_otf2_missing)))]
mod tests {
    use super::imp::PANIC_IN;
    use crate::{Error, Paradigm, RegionRole, SerialArchive, Summary};

    /// A panic in a definition or an event callback interrupts the reading: an `Err` naming
    /// the callback, not an unwind into OTF2.
    #[test]
    fn a_panicking_callback_interrupts_the_reading() {
        let dir = std::env::temp_dir().join(format!("mpit-otf2-panic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut a = SerialArchive::create(&dir, "traces").unwrap();
        let main = a
            .region("main", RegionRole::Function, Paradigm::User)
            .unwrap();
        let loc = a.location("Master thread", "MPI Rank 0").unwrap();
        a.enter(loc, 1, main).unwrap();
        a.leave(loc, 2, main).unwrap();
        a.close(1_000, 1, 1).unwrap();
        let anchor = dir.join("traces.otf2");
        for callback in ["String", "Location", "Enter", "Leave"] {
            PANIC_IN.set(Some(callback));
            let r = Summary::read(&anchor);
            PANIC_IN.set(None);
            match r {
                Err(Error::Callback {
                    callback: c,
                    message,
                }) => {
                    assert_eq!(c, callback);
                    assert!(message.contains("as the test asked"), "{message}");
                }
                other => panic!("{callback}: {other:?}"),
            }
        }
        let s = Summary::read(&anchor).unwrap();
        assert_eq!(s.locations[0].records(), 2);
        std::fs::remove_dir_all(&dir).ok();
    }
}
