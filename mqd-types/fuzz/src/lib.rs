//! The bodies of mqd-types' fuzz targets: what mqd-types decodes out of a process or a file it
//! does not control, fed the fuzzer's bytes:
//!
//! - `ob1_queues`: the walk of Open MPI's ob1 unexpected-message queues
//!   ([`mqd_types::ob1::Ob1Reader`]) over a [`ProcessTarget`] whose memory holds well-formed
//!   communicators, peers, lists and fragments built from the input, then corrupted and read
//!   through a fetch that may fail or lie;
//! - `pml_stack`: the PML component heads ([`mqd_types::pml`]) out of such a memory;
//! - `dwarf_types`: the type answers (`mqs_find_type`, `mqs_sizeof`, `mqs_field_offset`) read
//!   from an object's DWARF ([`DwarfTypes`], [`TypeDonor::from_object`],
//!   [`Ob1Layout::new`](mqd_types::ob1::Ob1Layout::new)).
//!
//! Shared by the fuzz targets (`fuzz_targets/*.rs`, one call each) and by
//! `mqd-types/tests/fuzz_corpus.rs`, which includes this file as a module and replays every
//! committed input (`corpus/<target>/`, `regressions/<target>/`) through the same checks.
//! Every check is an `assert!`: a failure is a crash to the fuzzer and a failed test.
#![allow(unreachable_pub, missing_docs)]

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use mqd_types::ob1::{FragKind, Ob1Error, Ob1Layout, Ob1Message, Ob1Reader};
use mqd_types::pml::{MONITORED_COMPONENT, PmlStack, SELECTED_COMPONENT};
use mqd_types::{DwarfTypes, ProcessTarget, TargetTypeSizes, TypeDonor};

/// A target's body: one input, checked.
pub type Body = fn(&[u8]);

/// Every target: its name (as in Cargo.toml and under corpus/) and its body.
pub const TARGETS: &[(&str, Body)] = &[
    ("ob1_queues", ob1_queues),
    ("pml_stack", pml_stack),
    ("dwarf_types", dwarf_types),
];

/// The fuzzer's bytes read front to back; past the end every read is 0 (so every input is a
/// valid one).
struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | u32::from(self.u16()) << 16
    }

    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }

    /// Up to `n` bytes.
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    fn rest(&mut self) -> &'a [u8] {
        self.bytes(usize::MAX)
    }
}

// ---- a process's memory ----------------------------------------------------------------------

/// A process's memory: regions of bytes, read through a fetch that is honest or, driven by
/// the rest of the input, fails or hands out garbage. Counts fetches (a walk must end).
struct Memory<'a> {
    regions: BTreeMap<u64, Vec<u8>>,
    faults: Option<Mutex<Input<'a>>>,
    fetches: AtomicU64,
}

impl Memory<'_> {
    fn new() -> Self {
        Memory {
            regions: BTreeMap::new(),
            faults: None,
            fetches: AtomicU64::new(0),
        }
    }

    /// A zeroed region of `len` bytes at `addr`.
    fn region(&mut self, addr: u64, len: u64) {
        self.regions.insert(addr, vec![0; len as usize]);
    }

    /// Writes the low `size` bytes of `value` (host order) at `addr`, as far as its region
    /// goes.
    fn put(&mut self, addr: u64, value: u64, size: u64) {
        let Some((&base, bytes)) = self.regions.range_mut(..=addr).next_back() else {
            return;
        };
        let at = (addr - base) as usize;
        let src = value.to_ne_bytes();
        let src = if cfg!(target_endian = "big") {
            &src[8 - size as usize..]
        } else {
            &src[..size as usize]
        };
        for (i, b) in src.iter().enumerate() {
            if let Some(d) = bytes.get_mut(at + i) {
                *d = *b;
            }
        }
    }
}

impl ProcessTarget for Memory<'_> {
    fn global_rank(&self) -> Option<i32> {
        Some(0)
    }

    fn type_sizes(&self) -> TargetTypeSizes {
        TargetTypeSizes::LP64
    }

    fn fetch(&self, addr: u64, buf: &mut [u8]) -> bool {
        let n = self.fetches.fetch_add(1, Ordering::Relaxed) + 1;
        assert!(n <= 1 << 22, "runaway: {n} fetches");
        assert!(buf.len() <= 4096, "a fetch of {} bytes", buf.len());
        if let Some(faults) = &self.faults {
            let mut faults = faults.lock().unwrap_or_else(|e| e.into_inner());
            match faults.u8() % 8 {
                6 => return false,
                7 => {
                    buf.fill(faults.u8());
                    return true;
                }
                _ => {}
            }
        }
        let Some((&base, bytes)) = self.regions.range(..=addr).next_back() else {
            return false;
        };
        let at = (addr - base) as usize;
        match at.checked_add(buf.len()).and_then(|end| bytes.get(at..end)) {
            Some(src) => {
                buf.copy_from_slice(src);
                true
            }
            None => false,
        }
    }
}

/// Turns the fetch faulty if the input's next byte says so (the rest of the input drives it).
fn faults<'a>(input: &mut Input<'a>, mem: &mut Memory<'a>) {
    if input.u8().is_multiple_of(4) {
        mem.faults = Some(Mutex::new(Input { data: input.rest() }));
    }
}

// ---- ob1 -------------------------------------------------------------------------------------

/// The offsets, sizes and constants of the ob1 donor the memory is built with (found here by
/// name, independently of [`Ob1Layout`]).
struct Ob1Types {
    layout: Ob1Layout,
    array_size: (u64, u64),
    array_addr: (u64, u64),
    comm_cid: (u64, u64),
    comm_pml: (u64, u64),
    procs: (u64, u64),
    num_procs: (u64, u64),
    unexpected: u64,
    cant_match: (u64, u64),
    sentinel: u64,
    length: (u64, u64),
    next: (u64, u64),
    prev: (u64, u64),
    item: u64,
    range: (u64, u64),
    seg_len: (u64, u64),
    hdr_type: (u64, u64),
    src: (u64, u64),
    tag: (u64, u64),
    seq: (u64, u64),
    rndv_length: (u64, u64),
    rget_length: (u64, u64),
    sizes: [u64; 5],
    match_hdr_len: u64,
    types: [i64; 3],
}

fn ob1_types() -> &'static Ob1Types {
    static TYPES: OnceLock<Ob1Types> = OnceLock::new();
    TYPES.get_or_init(|| {
        let donor = TypeDonor::embedded_ob1().unwrap_or_else(|e| panic!("the ob1 donor: {e}"));
        let t = donor.types();
        let off = |ty: &str, f: &str| {
            t.find(ty)
                .and_then(|l| l.field_offset(f))
                .unwrap_or_else(|| panic!("{ty}.{f}"))
        };
        let field = |ty: &str, f: &str| (off(ty, f), t.field_size(ty, f).expect("a size"));
        let size = |ty: &str| t.find(ty).expect(ty).size;
        let within = |outer: u64, (o, s): (u64, u64)| (outer + o, s);
        let hdr = off("mca_pml_ob1_recv_frag_t", "hdr");
        let matching = hdr + off("mca_pml_ob1_hdr_t", "hdr_match");
        let rndv = field("mca_pml_ob1_rendezvous_hdr_t", "hdr_msg_length");
        let constant = |n: &str| donor.constant(n).unwrap_or_else(|| panic!("{n}"));
        Ob1Types {
            layout: Ob1Layout::new(donor).expect("the ob1 layout"),
            array_size: field("opal_pointer_array_t", "size"),
            array_addr: field("opal_pointer_array_t", "addr"),
            comm_cid: field("ompi_communicator_t", "c_contextid"),
            comm_pml: field("ompi_communicator_t", "c_pml_comm"),
            procs: field("mca_pml_ob1_comm_t", "procs"),
            num_procs: field("mca_pml_ob1_comm_t", "num_procs"),
            unexpected: off("mca_pml_ob1_comm_proc_t", "unexpected_frags"),
            cant_match: field("mca_pml_ob1_comm_proc_t", "frags_cant_match"),
            sentinel: off("opal_list_t", "opal_list_sentinel"),
            length: field("opal_list_t", "opal_list_length"),
            next: field("opal_list_item_t", "opal_list_next"),
            prev: field("opal_list_item_t", "opal_list_prev"),
            item: off("mca_pml_ob1_recv_frag_t", "super") + off("opal_free_list_item_t", "super"),
            range: field("mca_pml_ob1_recv_frag_t", "range"),
            seg_len: within(
                off("mca_pml_ob1_recv_frag_t", "segments"),
                field("mca_btl_base_segment_t", "seg_len"),
            ),
            hdr_type: within(
                hdr + off("mca_pml_ob1_hdr_t", "hdr_common"),
                field("mca_pml_ob1_common_hdr_t", "hdr_type"),
            ),
            src: within(matching, field("mca_pml_ob1_match_hdr_t", "hdr_src")),
            tag: within(matching, field("mca_pml_ob1_match_hdr_t", "hdr_tag")),
            seq: within(matching, field("mca_pml_ob1_match_hdr_t", "hdr_seq")),
            rndv_length: within(hdr + off("mca_pml_ob1_hdr_t", "hdr_rndv"), rndv),
            rget_length: within(
                hdr + off("mca_pml_ob1_hdr_t", "hdr_rget")
                    + off("mca_pml_ob1_rget_hdr_t", "hdr_rndv"),
                rndv,
            ),
            sizes: [
                size("opal_pointer_array_t"),
                size("ompi_communicator_t"),
                size("mca_pml_ob1_comm_t"),
                size("mca_pml_ob1_comm_proc_t"),
                size("mca_pml_ob1_recv_frag_t"),
            ],
            match_hdr_len: constant("match_hdr_len") as u64,
            types: [
                constant("hdr_type_match"),
                constant("hdr_type_rndv"),
                constant("hdr_type_rget"),
            ],
        }
    })
}

/// Builds ob1's structures in a [`Memory`], allocating upwards.
struct Builder<'a> {
    t: &'static Ob1Types,
    mem: Memory<'a>,
    next: u64,
}

impl Builder<'_> {
    fn alloc(&mut self, len: u64) -> u64 {
        let addr = self.next;
        self.mem.region(addr, len.max(1));
        // A gap after each object: a read past its end fails.
        self.next = (addr + len + 0x100) & !0xff;
        addr
    }

    fn put(&mut self, base: u64, (offset, size): (u64, u64), value: u64) {
        self.mem.put(base + offset, value, size);
    }

    /// `a.next = b`, `b.prev = a`.
    fn link(&mut self, a: u64, b: u64) {
        let t = self.t;
        self.put(a, t.next, b);
        self.put(b, t.prev, a);
    }

    /// A fragment from the input, and the message the walk must find for it.
    fn frag(&mut self, input: &mut Input<'_>, peer: u32, out_of_sequence: bool) -> Ob1Message {
        let t = self.t;
        let frag = self.alloc(t.sizes[4]);
        let [t_match, t_rndv, t_rget] = t.types;
        let raw_type = match input.u8() % 4 {
            0 => t_match,
            1 => t_rndv,
            2 => t_rget,
            _ => i64::from(input.u8()),
        };
        self.put(frag, t.hdr_type, raw_type as u64);
        let kind = match raw_type {
            x if x == t_match => FragKind::Match,
            x if x == t_rndv => FragKind::Rendezvous,
            x if x == t_rget => FragKind::RendezvousGet,
            x => FragKind::Other(x as u8),
        };
        let source = i32::from(input.u16() as i16);
        let tag = i32::from(input.u16() as i16);
        let sequence = u64::from(input.u16());
        self.put(frag, t.src, source as u64);
        self.put(frag, t.tag, tag as u64);
        self.put(frag, t.seq, sequence);
        let payload = u64::from(input.u32());
        let length = match kind {
            FragKind::Match => {
                let payload = payload & 0xffff;
                self.put(frag, t.seg_len, t.match_hdr_len + payload);
                Some(payload)
            }
            FragKind::Rendezvous => {
                self.put(frag, t.rndv_length, payload);
                Some(payload)
            }
            FragKind::RendezvousGet => {
                self.put(frag, t.rget_length, payload);
                Some(payload)
            }
            FragKind::Other(_) => None,
        };
        let sequence = sequence & (u64::MAX >> (64 - 8 * t.seq.1));
        Ob1Message {
            peer,
            source,
            tag,
            sequence,
            length,
            kind,
            out_of_sequence,
            frag,
        }
    }

    /// A circular list through the items of `frags` (`frags[0]`'s is the head).
    fn ring(&mut self, frags: &[u64]) {
        let item = self.t.item;
        for (i, &f) in frags.iter().enumerate() {
            let next = frags[(i + 1) % frags.len()];
            self.link(f + item, next + item);
        }
    }
}

/// One communicator built: its context id, address and unexpected messages in the order the
/// walk must give them.
struct Built {
    cid: u64,
    comm: u64,
    messages: Vec<Ob1Message>,
}

const SLOTS: u64 = 16;

/// The ob1 walk (`Ob1Reader::communicator`, `unexpected`, `list`, `selected_pml`) over a
/// memory holding the fuzzer's communicators (context ids, NULL PML state), peers (NULL
/// until used), `unexpected_frags` lists and `frags_cant_match` rings with their ranges, and
/// fragments (eager, rendezvous, RDMA get, other header types; any source, tag, sequence and
/// length), laid out with the ob1 donor's offsets. Uncorrupted and read honestly, each
/// communicator is found by its context id, an absent one is `NoCommunicator`, and the walk
/// gives exactly the messages built, per peer in rank order, arrival order first, then the
/// out-of-sequence ring with each range. Then the fuzzer overwrites fields anywhere (pointers
/// into other objects, anything) and the fetch may fail or lie: the walk, and the same calls
/// at the fuzzer's addresses, must end with messages or a typed error, never a panic, an
/// arithmetic overflow or a runaway.
pub fn ob1_queues(data: &[u8]) {
    let t = ob1_types();
    let mut input = Input { data };
    let mut b = Builder {
        t,
        mem: Memory::new(),
        next: 0x10000,
    };
    let table = b.alloc(t.sizes[0]);
    let slots = b.alloc(SLOTS * t.array_addr.1);
    b.put(table, t.array_size, SLOTS);
    b.put(table, t.array_addr, slots);
    let mut built = Vec::new();
    let mut cids = HashSet::new();
    for _ in 0..input.u8() % 4 {
        let cid = u64::from(input.u8()) % SLOTS;
        if !cids.insert(cid) {
            continue;
        }
        let comm = b.alloc(t.sizes[1]);
        b.mem
            .put(slots + cid * t.array_addr.1, comm, t.array_addr.1);
        b.put(comm, t.comm_cid, cid);
        let mut messages = Vec::new();
        if !input.u8().is_multiple_of(8) {
            let ob1 = b.alloc(t.sizes[2]);
            b.put(comm, t.comm_pml, ob1);
            let n = u64::from(input.u8() % 5);
            let procs = b.alloc(n.max(1) * t.procs.1);
            b.put(ob1, t.procs, procs);
            b.put(ob1, t.num_procs, n);
            for peer in 0..n {
                if input.u8().is_multiple_of(4) {
                    continue; // Never used: NULL.
                }
                let proc = b.alloc(t.sizes[3]);
                b.mem.put(procs + peer * t.procs.1, proc, t.procs.1);
                let list = proc + t.unexpected;
                let k = input.u8() % 4;
                b.put(list, t.length, u64::from(k));
                let sentinel = list + t.sentinel;
                let mut prev = sentinel;
                for _ in 0..k {
                    let m = b.frag(&mut input, peer as u32, false);
                    b.link(prev, m.frag + t.item);
                    prev = m.frag + t.item;
                    messages.push(m);
                }
                b.link(prev, sentinel);
                let ring = input.u8() % 3;
                let mut heads = Vec::new();
                for _ in 0..ring {
                    let m = b.frag(&mut input, peer as u32, true);
                    heads.push(m.frag);
                    messages.push(m);
                    let mut range = Vec::new();
                    for _ in 0..input.u8() % 3 {
                        let r = b.frag(&mut input, peer as u32, true);
                        range.push(r.frag);
                        messages.push(r);
                    }
                    if let Some(&first) = range.first() {
                        b.ring(&range);
                        let head = heads[heads.len() - 1];
                        b.put(head, t.range, first);
                    }
                }
                if let Some(&head) = heads.first() {
                    b.ring(&heads);
                    b.put(proc, t.cant_match, head);
                }
            }
        }
        built.push(Built {
            cid,
            comm,
            messages,
        });
    }

    // Corruption: fields overwritten anywhere.
    let mut corrupted = false;
    let starts: Vec<u64> = b.mem.regions.keys().copied().collect();
    for _ in 0..input.u8() % 4 {
        corrupted = true;
        let region = starts[usize::from(input.u8()) % starts.len()];
        let len = b.mem.regions[&region].len() as u64;
        let at = region + u64::from(input.u16()) % len;
        let size = [1, 2, 4, 8][usize::from(input.u8() % 4)];
        let value = match input.u8() % 4 {
            0 => u64::from(input.u8()),
            1 => {
                let target = starts[usize::from(input.u8()) % starts.len()];
                target.wrapping_add(u64::from(input.u8()))
            }
            2 => input.u64(),
            _ => 0,
        };
        b.mem.put(at, value, size);
    }
    let probe = input.u64();
    let probe_cid = input.u64();
    let mut mem = b.mem;
    faults(&mut input, &mut mem);
    let exact = !corrupted && mem.faults.is_none();

    let reader = Ob1Reader::new(&t.layout, &mem);
    let check = |got: &Result<Vec<Ob1Message>, Ob1Error>| {
        if let Ok(messages) = got {
            for m in messages {
                assert_eq!(m.length.is_none(), matches!(m.kind, FragKind::Other(_)));
            }
        }
    };
    for c in &built {
        let found = reader.communicator(table, c.cid);
        let got = reader.unexpected(c.comm);
        check(&got);
        if exact {
            assert_eq!(found, Ok(c.comm), "communicator {}", c.cid);
            assert_eq!(got.as_ref(), Ok(&c.messages), "communicator {}", c.cid);
        }
    }
    if exact && let Some(absent) = (0..SLOTS).find(|c| !cids.contains(c)) {
        assert_eq!(
            reader.communicator(table, absent),
            Err(Ob1Error::NoCommunicator(absent))
        );
    }
    // The same calls anywhere: at the fuzzer's addresses and context id.
    let _ = reader.communicator(probe, probe_cid);
    let _ = reader.communicator(table, probe_cid);
    check(&reader.unexpected(probe));
    let _ = reader.list("a probe", probe);
    if let Ok(name) = reader.selected_pml(probe) {
        assert!(!name.contains('\0'));
    }
}

// ---- the PML component heads -----------------------------------------------------------------

/// Offsets in `mca_base_component_t` (MCA 2.1), as `mqd_types::pml` documents them.
const MAJOR: usize = 0;
const PROJECT: (usize, usize) = (12, 28);
const TYPE: (usize, usize) = (40, 72);
const NAME: (usize, usize) = (84, 148);

/// A component head: the fuzzer's raw bytes, or fields of its choosing (MCA version, project,
/// type, name, each from a few real ones or raw).
fn component(input: &mut Input<'_>) -> Vec<u8> {
    if input.u8().is_multiple_of(2) {
        let len = usize::from(input.u8()) % (NAME.1 + 16);
        return input.bytes(len).to_vec();
    }
    let mut head = vec![0u8; NAME.1];
    head[MAJOR..MAJOR + 4].copy_from_slice(&i32::from(input.u8() % 4).to_ne_bytes());
    let mut text = |input: &mut Input<'_>, (start, end): (usize, usize), known: &[&[u8]]| {
        let choice = usize::from(input.u8());
        let s: &[u8] = match known.get(choice % (known.len() + 1)) {
            Some(s) => s,
            None => {
                let n = usize::from(input.u8()) % (end - start + 1);
                input.bytes(n)
            }
        };
        let n = s.len().min(end - start);
        head[start..start + n].copy_from_slice(&s[..n]);
    };
    text(input, PROJECT, &[b"ompi", b"opal"]);
    text(input, TYPE, &[b"pml", b"btl"]);
    text(input, NAME, &[b"ob1", b"monitoring", b"cm", b"ucx", b""]);
    head
}

/// What `pml::component_name` must answer for the bytes at a component's address: the name
/// of an MCA 2 `ompi` `pml` component, else a mismatch; unreadable if the bytes are short.
fn reference_component(bytes: Option<&[u8]>) -> Result<String, &'static str> {
    let raw = bytes.filter(|b| b.len() >= NAME.1).ok_or("unreadable")?;
    let text = |(start, end): (usize, usize)| {
        let field = &raw[start..end];
        let n = field.iter().position(|&b| b == 0)?;
        Some(String::from_utf8_lossy(&field[..n]).into_owned())
    };
    let major = i32::from_ne_bytes(raw[MAJOR..MAJOR + 4].try_into().expect("4 bytes"));
    match (major, text(PROJECT), text(TYPE), text(NAME)) {
        (2, Some(p), Some(k), Some(n)) if p == "ompi" && k == "pml" && !n.is_empty() => Ok(n),
        _ => Err("mismatch"),
    }
}

/// `pml::pml_stack`: the selected PML component and, under the monitoring PML, the one it
/// stacks over, from two component heads of the fuzzer's (see [`component`]) at addresses the
/// symbol lookup gives or not, read honestly or through a faulty fetch. Honestly read, the
/// answer is exactly the reference's (no symbol: not Open MPI; a component that is no MCA 2
/// Open MPI PML: a mismatch; monitoring without the symbol of what it stacks over: a missing
/// symbol); read through a faulty fetch, a name is still a non-empty NUL-free string.
pub fn pml_stack(data: &[u8]) {
    let mut input = Input { data };
    let symbols = input.u8();
    let (selected, below) = (0x1000u64, 0x2000u64);
    let heads = [component(&mut input), component(&mut input)];
    let mut mem = Memory::new();
    for (addr, head) in [selected, below].into_iter().zip(&heads) {
        if !head.is_empty() {
            mem.regions.insert(addr, head.clone());
        }
    }
    faults(&mut input, &mut mem);
    let lookup = |name: &str| match name {
        SELECTED_COMPONENT if symbols & 1 != 0 => Some(selected),
        MONITORED_COMPONENT if symbols & 2 != 0 => Some(below),
        _ => None,
    };
    let got = mqd_types::pml::pml_stack(lookup, &mem);
    if let Ok(Some(stack)) = &got {
        assert!(matches!(stack.components.len(), 1 | 2));
        for name in &stack.components {
            // At most the field's bytes (each may have become U+FFFD).
            assert!(!name.is_empty() && !name.contains('\0'));
            assert!(name.chars().count() <= NAME.1 - NAME.0);
        }
    }
    if mem.faults.is_some() {
        return;
    }
    let expected: Result<Option<Vec<String>>, &str> = (|| {
        if symbols & 1 == 0 {
            return Ok(None);
        }
        let first = reference_component(Some(&heads[0]))?;
        if first != "monitoring" {
            return Ok(Some(vec![first]));
        }
        if symbols & 2 == 0 {
            return Err("missing symbol");
        }
        Ok(Some(vec![first, reference_component(Some(&heads[1]))?]))
    })();
    let got = match got {
        Ok(stack) => Ok(stack.map(|PmlStack { components }| components)),
        Err(Ob1Error::Unreadable { .. }) => Err("unreadable"),
        Err(Ob1Error::Mismatch(_)) => Err("mismatch"),
        Err(Ob1Error::MissingSymbol(MONITORED_COMPONENT)) => Err("missing symbol"),
        Err(e) => panic!("pml_stack: {e:?}"),
    };
    assert_eq!(got, expected);
}

// ---- DWARF type answers ----------------------------------------------------------------------

/// The names asked: those of the seed objects (corpus/dwarf_types/) and the ones the ob1 walk
/// and Open MPI's DLL ask for.
const TYPE_NAMES: &[&str] = &[
    "node_t",
    "list",
    "list_t",
    "frag",
    "frag_t",
    "hdr",
    "hdr_t",
    "opaque_t",
    "kind_t",
    "arr_t",
    "matrix_t",
    "msg_t",
    "flex_t",
    "zero_t",
    "grid_t",
    "int",
    "char",
    "long int",
    "opal_list_item_t",
    "opal_list_t",
    "opal_free_list_t",
    "opal_pointer_array_t",
    "ompi_communicator_t",
    "ompi_group_t",
    "mca_pml_ob1_recv_frag_t",
    "mca_pml_base_request_t",
];

/// Type answers from an object's DWARF: `DwarfTypes::parse` of the fuzzer's bytes (small ELF
/// shared objects with DWARF 4 and 5 as seeds), then `find` of every name above and
/// `field_size` of every member found, as the DLL's `mqs_find_type`, `mqs_sizeof` and
/// `mqs_field_offset` are answered; `TypeDonor::from_object` and `Ob1Layout::new` on the same
/// bytes. No panic, overflow or unbounded recursion, whatever the DWARF says (type cycles,
/// huge counts, references anywhere); answers are deterministic, a found layout carries the
/// name asked, and a donor is only made of bytes that parse to some types.
pub fn dwarf_types(data: &[u8]) {
    if let Ok(types) = DwarfTypes::parse(data) {
        for &name in TYPE_NAMES {
            let Some(layout) = types.find(name) else {
                continue;
            };
            assert_eq!(layout.name, name);
            assert_eq!(types.find(name).as_ref(), Some(&layout));
            for (field, offset) in &layout.fields {
                let first = layout.field_offset(field).expect("a member it lists");
                assert!(
                    first == *offset
                        || layout.fields.iter().filter(|(f, _)| f == field).count() > 1
                );
                let _ = types.field_size(name, field);
            }
        }
    }
    if let Ok(donor) = TypeDonor::from_object(data) {
        assert!(!donor.types().is_empty());
        let _ = donor.constant("match_hdr_len");
        let _ = donor.ompi_version();
        let _ = Ob1Layout::new(&donor);
    }
}
