//! The ob1 walk ([`mqd_types::ob1`]) over a synthetic memory image laid out with the ob1 type
//! donor's own offsets: a well-formed queue decodes; a cycle, a wild pointer, a broken back
//! link, an implausible count and a cycle in the out-of-sequence ring are typed errors.
//! Fails (with the build script's reason) if the ob1 donor was not built.

use std::collections::BTreeMap;

use mqd_types::ob1::{FragKind, OB1_LIMIT, Ob1Error, Ob1Layout, Ob1Reader};
use mqd_types::{ProcessTarget, TargetTypeSizes, TypeDonor};

/// Memory as a few regions; reads outside them fail.
#[derive(Default)]
struct Image {
    regions: BTreeMap<u64, Vec<u8>>,
}

impl Image {
    fn region(&mut self, addr: u64, len: u64) {
        self.regions.insert(addr, vec![0; len as usize]);
    }

    fn put(&mut self, addr: u64, value: u64, size: u64) {
        let (&base, bytes) = self
            .regions
            .range_mut(..=addr)
            .next_back()
            .expect("a region");
        let at = (addr - base) as usize;
        bytes[at..at + size as usize].copy_from_slice(&value.to_le_bytes()[..size as usize]);
    }
}

impl ProcessTarget for Image {
    fn global_rank(&self) -> Option<i32> {
        Some(0)
    }
    fn type_sizes(&self) -> TargetTypeSizes {
        TargetTypeSizes::LP64
    }
    fn fetch(&self, addr: u64, buf: &mut [u8]) -> bool {
        let Some((&base, bytes)) = self.regions.range(..=addr).next_back() else {
            return false;
        };
        let at = (addr - base) as usize;
        match bytes.get(at..at + buf.len()) {
            Some(src) => {
                buf.copy_from_slice(src);
                true
            }
            None => false,
        }
    }
}

fn donor() -> &'static TypeDonor {
    TypeDonor::embedded_ob1().unwrap_or_else(|e| panic!("the ob1 type donor: {e}"))
}

/// Offset and size of `ty.field` in the donor.
fn field(ty: &str, f: &str) -> (u64, u64) {
    let t = donor().types();
    (
        t.find(ty).and_then(|l| l.field_offset(f)).unwrap(),
        t.field_size(ty, f).unwrap(),
    )
}

fn off(ty: &str, f: &str) -> u64 {
    field(ty, f).0
}

fn size(ty: &str) -> u64 {
    donor().types().find(ty).unwrap().size
}

const TABLE: u64 = 0x1000;
const SLOTS: u64 = 0x2000;
const COMM: u64 = 0x3000;
const OB1: u64 = 0x4000;
const PROCS: u64 = 0x5000;
const PROC: u64 = 0x6000;
const FRAGS: [u64; 3] = [0x10000, 0x20000, 0x30000];
const CID: u64 = 5;

struct Fixture {
    mem: Image,
    sentinel: u64,
    item: u64,
}

impl Fixture {
    /// Communicator `CID` whose peer 1 has two unexpected messages: 4 bytes eager with tag 7,
    /// then a 20-byte rendezvous with tag 99.
    fn new() -> Fixture {
        let mut m = Image::default();
        let w = |m: &mut Image, base: u64, ty: &str, f: &str, v: u64| {
            let (o, s) = field(ty, f);
            m.put(base + o, v, s);
        };
        m.region(TABLE, size("opal_pointer_array_t"));
        w(&mut m, TABLE, "opal_pointer_array_t", "size", 8);
        w(&mut m, TABLE, "opal_pointer_array_t", "addr", SLOTS);
        m.region(SLOTS, 64);
        m.put(SLOTS + CID * 8, COMM, 8);
        m.region(COMM, size("ompi_communicator_t"));
        w(&mut m, COMM, "ompi_communicator_t", "c_contextid", CID);
        w(&mut m, COMM, "ompi_communicator_t", "c_pml_comm", OB1);
        m.region(OB1, size("mca_pml_ob1_comm_t"));
        w(&mut m, OB1, "mca_pml_ob1_comm_t", "procs", PROCS);
        w(&mut m, OB1, "mca_pml_ob1_comm_t", "num_procs", 2);
        m.region(PROCS, 16);
        m.put(PROCS + 8, PROC, 8); // Peer 0 never used: NULL.
        m.region(PROC, size("mca_pml_ob1_comm_proc_t"));
        let list = PROC + off("mca_pml_ob1_comm_proc_t", "unexpected_frags");
        w(&mut m, list, "opal_list_t", "opal_list_length", 2);
        let sentinel = list + off("opal_list_t", "opal_list_sentinel");
        let item = off("mca_pml_ob1_recv_frag_t", "super") + off("opal_free_list_item_t", "super");
        let hdr = off("mca_pml_ob1_recv_frag_t", "hdr");
        let matching = hdr + off("mca_pml_ob1_hdr_t", "hdr_match");
        let d = donor();
        let hdr_len = d.constant("match_hdr_len").unwrap() as u64;
        for (i, &frag) in FRAGS.iter().enumerate() {
            m.region(frag, size("mca_pml_ob1_recv_frag_t"));
            let eager = i != 1;
            let ty = if eager {
                "hdr_type_match"
            } else {
                "hdr_type_rndv"
            };
            let common = hdr + off("mca_pml_ob1_hdr_t", "hdr_common");
            let (o, s) = field("mca_pml_ob1_common_hdr_t", "hdr_type");
            m.put(frag + common + o, d.constant(ty).unwrap() as u64, s);
            let mh = frag + matching;
            w(&mut m, mh, "mca_pml_ob1_match_hdr_t", "hdr_src", 1);
            w(
                &mut m,
                mh,
                "mca_pml_ob1_match_hdr_t",
                "hdr_tag",
                if eager { 7 } else { 99 },
            );
            w(
                &mut m,
                mh,
                "mca_pml_ob1_match_hdr_t",
                "hdr_seq",
                i as u64 + 1,
            );
            let segs = frag + off("mca_pml_ob1_recv_frag_t", "segments");
            w(
                &mut m,
                segs,
                "mca_btl_base_segment_t",
                "seg_len",
                hdr_len + 4,
            );
            let rndv = frag + hdr + off("mca_pml_ob1_hdr_t", "hdr_rndv");
            if !eager {
                w(
                    &mut m,
                    rndv,
                    "mca_pml_ob1_rendezvous_hdr_t",
                    "hdr_msg_length",
                    20,
                );
            }
        }
        let mut f = Fixture {
            mem: m,
            sentinel,
            item,
        };
        // sentinel <-> frag 0 <-> frag 1 <-> sentinel; frag 2 is spare.
        f.link(sentinel, FRAGS[0] + item);
        f.link(FRAGS[0] + item, FRAGS[1] + item);
        f.link(FRAGS[1] + item, sentinel);
        f
    }

    fn next(&mut self, from: u64, to: u64) {
        let (o, s) = field("opal_list_item_t", "opal_list_next");
        self.mem.put(from + o, to, s);
    }

    fn prev(&mut self, of: u64, to: u64) {
        let (o, s) = field("opal_list_item_t", "opal_list_prev");
        self.mem.put(of + o, to, s);
    }

    fn link(&mut self, a: u64, b: u64) {
        self.next(a, b);
        self.prev(b, a);
    }

    fn read(&self) -> Result<Vec<mqd_types::ob1::Ob1Message>, Ob1Error> {
        let layout = Ob1Layout::new(donor()).expect("the ob1 layout");
        let reader = Ob1Reader::new(&layout, &self.mem);
        let comm = reader.communicator(TABLE, CID)?;
        assert_eq!(comm, COMM);
        reader.unexpected(comm)
    }
}

#[test]
fn a_well_formed_queue_decodes() {
    let f = Fixture::new();
    let msgs = f.read().unwrap();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(
        (msgs[0].peer, msgs[0].source, msgs[0].tag, msgs[0].length),
        (1, 1, 7, Some(4))
    );
    assert_eq!(msgs[0].kind, FragKind::Match);
    assert_eq!(msgs[0].frag, FRAGS[0]);
    assert_eq!(
        (msgs[1].tag, msgs[1].length, msgs[1].kind, msgs[1].sequence),
        (99, Some(20), FragKind::Rendezvous, 2)
    );
    assert!(msgs.iter().all(|m| !m.out_of_sequence));
    let layout = Ob1Layout::new(donor()).unwrap();
    let reader = Ob1Reader::new(&layout, &f.mem);
    assert_eq!(
        reader.communicator(TABLE, 6),
        Err(Ob1Error::NoCommunicator(6))
    );
}

#[test]
fn a_cycle_is_a_typed_error() {
    let mut f = Fixture::new();
    let (a, b) = (FRAGS[0] + f.item, FRAGS[1] + f.item);
    f.next(b, a); // frag 1 -> frag 0 again, never back to the sentinel
    match f.read() {
        Err(Ob1Error::Cycle { addr, after, .. }) => assert_eq!((addr, after), (a, 2)),
        other => panic!("{other:?}"),
    }
    assert_ne!(f.sentinel, a);
}

#[test]
fn a_wild_pointer_is_a_typed_error() {
    let mut f = Fixture::new();
    f.next(FRAGS[0] + f.item, 0xdead_0000);
    // Its back link is read first: where the walk finds out.
    match f.read() {
        Err(Ob1Error::Unreadable { addr, .. }) => {
            assert_eq!(
                addr,
                0xdead_0000 + off("opal_list_item_t", "opal_list_prev")
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_broken_back_link_is_a_typed_error() {
    let mut f = Fixture::new();
    let spare = FRAGS[2] + f.item;
    // frag 0 -> spare, whose back link still says NULL.
    f.next(FRAGS[0] + f.item, spare);
    match f.read() {
        Err(Ob1Error::BrokenLink { addr, prev, .. }) => assert_eq!((addr, prev), (spare, 0)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn implausible_counts_are_typed_errors() {
    let mut f = Fixture::new();
    let (o, s) = field("mca_pml_ob1_comm_t", "num_procs");
    f.mem.put(OB1 + o, 1 << 40, s);
    match f.read() {
        Err(Ob1Error::Implausible { value, limit, .. }) => {
            assert_eq!((value, limit), (1 << 40, OB1_LIMIT))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn out_of_sequence_frags_are_read_and_their_cycles_caught() {
    let mut f = Fixture::new();
    // frags_cant_match: a ring of frag 2 alone.
    let (o, s) = field("mca_pml_ob1_comm_proc_t", "frags_cant_match");
    f.mem.put(PROC + o, FRAGS[2], s);
    let c = FRAGS[2] + f.item;
    f.link(c, c);
    let msgs = f.read().unwrap();
    assert_eq!(msgs.len(), 3);
    assert!(msgs[2].out_of_sequence && msgs[2].frag == FRAGS[2] && msgs[2].sequence == 3);
    // A ring that loops without coming back to its head.
    let (x, y) = (0x40000, 0x50000);
    for r in [x, y] {
        f.mem.region(r, size("mca_pml_ob1_recv_frag_t"));
    }
    let (x, y) = (x + f.item, y + f.item);
    f.link(c, x);
    f.link(x, y);
    f.next(y, x);
    match f.read() {
        Err(Ob1Error::Cycle { addr, .. }) => assert_eq!(addr, x),
        other => panic!("{other:?}"),
    }
}

/// An MCA 2.1 component head at `addr` (`mca_base_component_t`: versions, project, type, name).
fn component(mem: &mut Image, addr: u64, project: &str, kind: &str, name: &str) {
    mem.region(addr, 280);
    mem.put(addr, 2, 4);
    mem.put(addr + 4, 1, 4);
    let mut text = |at: u64, s: &str| {
        for (i, b) in s.bytes().enumerate() {
            mem.put(addr + at + i as u64, u64::from(b), 1);
        }
    };
    text(12, project);
    text(40, kind);
    text(84, name);
}

/// The PML stack ([`mqd_types::pml`]): the selected component, the monitoring PML seen
/// through, and garbage as an error, not a name.
#[test]
fn pml_stack_sees_through_monitoring() {
    use mqd_types::pml::{MONITORED_COMPONENT, PmlStack, SELECTED_COMPONENT, pml_stack};
    let (selected, below) = (0x1000, 0x2000);
    let lookup = |names: &'static [&'static str]| {
        move |n: &str| match n {
            _ if !names.contains(&n) => None,
            SELECTED_COMPONENT => Some(selected),
            MONITORED_COMPONENT => Some(below),
            _ => None,
        }
    };
    let both: &'static [&'static str] = &[SELECTED_COMPONENT, MONITORED_COMPONENT];
    let stack = |names: Vec<&str>| PmlStack {
        components: names.into_iter().map(str::to_owned).collect(),
    };

    let mut mem = Image::default();
    component(&mut mem, selected, "ompi", "pml", "ob1");
    let ob1 = pml_stack(lookup(both), &mem).unwrap().unwrap();
    assert_eq!(ob1, stack(vec!["ob1"]));
    assert!(ob1.queues_shown_by_open_mpi_dll());

    let mut mem = Image::default();
    component(&mut mem, selected, "ompi", "pml", "monitoring");
    component(&mut mem, below, "ompi", "pml", "ob1");
    let monitored = pml_stack(lookup(both), &mem).unwrap().unwrap();
    assert_eq!(monitored, stack(vec!["monitoring", "ob1"]));
    assert_eq!(monitored.effective(), "ob1");
    assert!(monitored.queues_shown_by_open_mpi_dll());
    assert_eq!(monitored.to_string(), "monitoring over ob1");
    assert_eq!(
        pml_stack(lookup(&[SELECTED_COMPONENT]), &mem),
        Err(Ob1Error::MissingSymbol(MONITORED_COMPONENT))
    );

    let mut mem = Image::default();
    component(&mut mem, selected, "ompi", "pml", "monitoring");
    component(&mut mem, below, "ompi", "pml", "cm");
    let cm = pml_stack(lookup(both), &mem).unwrap().unwrap();
    assert!(!cm.queues_shown_by_open_mpi_dll());
    assert_eq!(cm.to_string(), "monitoring over cm");

    // Not Open MPI: no symbol, no PML to check.
    assert_eq!(pml_stack(lookup(&[]), &Image::default()), Ok(None));
    // Unreadable, another framework's component, garbage.
    assert!(matches!(
        pml_stack(lookup(both), &Image::default()),
        Err(Ob1Error::Unreadable { .. })
    ));
    for (project, kind) in [("ompi", "btl"), ("opal", "pml"), ("", "")] {
        let mut mem = Image::default();
        component(&mut mem, selected, project, kind, "ob1");
        let err = pml_stack(lookup(both), &mem).unwrap_err();
        assert!(matches!(err, Ob1Error::Mismatch(_)), "{err}");
    }
}

/// The fixed offsets of [`mqd_types::pml`] are those of `mca_base_component_t` in the ob1
/// type donor's DWARF (Open MPI's own headers).
#[test]
fn pml_component_offsets_match_the_donor() {
    let t = donor()
        .find("mca_base_component_t")
        .or_else(|| donor().find("mca_base_component_2_1_0_t"))
        .expect("mca_base_component_t in the ob1 donor");
    for (field, offset) in [
        ("mca_major_version", 0),
        ("mca_project_name", 12),
        ("mca_type_name", 40),
        ("mca_component_name", 84),
    ] {
        assert_eq!(t.field_offset(field), Some(offset), "{field}");
    }
}
