//! The unexpected messages of Open MPI's ob1 PML, read by mqd-types itself.
//!
//! Open MPI 4.1's message queue DLL answers `mqs_no_information` for the unexpected-message
//! queue. This module reads it from the process's memory, the way ob1 keeps it:
//!
//! ```text
//! ompi_mpi_communicators (opal_pointer_array_t) .addr[i] -> ompi_communicator_t
//!   .c_contextid == the DLL's unique_id; .c_pml_comm -> mca_pml_ob1_comm_t
//!     .procs[peer] (num_procs entries, NULL until the peer is first used) -> mca_pml_ob1_comm_proc_t
//!       .unexpected_frags: opal_list_t of mca_pml_ob1_recv_frag_t, in arrival order
//!       .frags_cant_match: a circular list of out-of-sequence frags, each with a .range
//!                          circular list of the frags that follow it in sequence
//!     frag .hdr (mca_pml_ob1_hdr_t): .hdr_common.hdr_type, .hdr_match.{hdr_src,hdr_tag,hdr_seq},
//!       .hdr_rndv.hdr_msg_length (RNDV) / .hdr_rget.hdr_rndv.hdr_msg_length (RGET);
//!       a MATCH frag holds its whole message: .segments[0].seg_len - OMPI_PML_OB1_MATCH_HDR_LEN
//! ```
//!
//! Every offset and size comes from the DWARF of the ob1 [`TypeDonor`]
//! ([`TypeDonor::embedded_ob1`]); every read goes through a [`ProcessTarget`] and is bounded
//! (list lengths, visited sets against cycles, the back links checked), so garbage memory gives
//! an [`Ob1Error`], never a hang.

use std::collections::HashSet;

use thiserror::Error;

use crate::donor::TypeDonor;
use crate::target::ProcessTarget;

/// Most entries one list, array or communicator table may have before it is called garbage.
pub const OB1_LIMIT: u64 = 1 << 16;

/// Why ob1's unexpected messages could not be read.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ob1Error {
    /// No ob1 type information (the donor was not built; the reason says why).
    #[error("no ob1 type information: {0}")]
    NoTypes(String),
    /// The donor lacks a type or member the walk needs.
    #[error("the ob1 type donor has no {0}")]
    MissingField(String),
    /// The donor lacks one of the header constants the walk needs.
    #[error("the ob1 type donor has no constant {0}")]
    MissingConstant(&'static str),
    /// The donor does not describe the process's library.
    #[error("the ob1 type donor does not match the process: {0}")]
    Mismatch(String),
    /// The process's PML is not ob1 (its `mca_pml_base_selected_component`'s name).
    #[error("the process uses the PML {0:?}, not ob1")]
    NotOb1(String),
    /// The process has no such symbol.
    #[error("the process has no symbol {0}")]
    MissingSymbol(&'static str),
    /// No communicator with this `c_contextid` in `ompi_mpi_communicators`.
    #[error("no communicator with context id {0} in ompi_mpi_communicators")]
    NoCommunicator(u64),
    /// Memory that should be there could not be read.
    #[error("cannot read {len} bytes of {what} at {addr:#x}")]
    Unreadable {
        /// What was read.
        what: String,
        /// Where.
        addr: u64,
        /// How much.
        len: usize,
    },
    /// A list came back to an entry it had visited without reaching its end.
    #[error("{what}: a cycle at {addr:#x} after {after} entries")]
    Cycle {
        /// The list.
        what: String,
        /// The entry seen twice.
        addr: u64,
        /// Entries walked.
        after: u64,
    },
    /// A list entry's back link does not point at the entry before it.
    #[error("{what}: the entry at {addr:#x} links back to {prev:#x}, not {expected:#x}")]
    BrokenLink {
        /// The list.
        what: String,
        /// The entry.
        addr: u64,
        /// Its `opal_list_prev`.
        prev: u64,
        /// The entry before it.
        expected: u64,
    },
    /// A count or length beyond any sane value.
    #[error("{what} is {value}, beyond the limit {limit}")]
    Implausible {
        /// The value.
        what: String,
        /// It.
        value: u64,
        /// The limit.
        limit: u64,
    },
}

/// The kind of the first fragment of an unexpected message (`hdr_common.hdr_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FragKind {
    /// `MCA_PML_OB1_HDR_TYPE_MATCH`: an eager message, all of it in the fragment.
    Match,
    /// `MCA_PML_OB1_HDR_TYPE_RNDV`: the start of a rendezvous (long or synchronous send).
    Rendezvous,
    /// `MCA_PML_OB1_HDR_TYPE_RGET`: a rendezvous by RDMA get.
    RendezvousGet,
    /// Another header type (not expected in a matching queue).
    Other(u8),
}

impl std::fmt::Display for FragKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FragKind::Match => f.write_str("eager"),
            FragKind::Rendezvous => f.write_str("rendezvous"),
            FragKind::RendezvousGet => f.write_str("rendezvous (get)"),
            FragKind::Other(t) => write!(f, "header type {t:#x}"),
        }
    }
}

/// One unexpected message, as ob1 keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ob1Message {
    /// The sender's rank in the communicator (its index in `procs`).
    pub peer: u32,
    /// `hdr_src` (the same rank, as the sender wrote it).
    pub source: i32,
    /// `hdr_tag`.
    pub tag: i32,
    /// `hdr_seq`: the sender's sequence number on this communicator.
    pub sequence: u64,
    /// The message's length in bytes (`None` for an unknown header type).
    pub length: Option<u64>,
    /// The kind of its first fragment.
    pub kind: FragKind,
    /// Whether it waits in `frags_cant_match` (arrived before an earlier message of its
    /// sender) rather than in `unexpected_frags`.
    pub out_of_sequence: bool,
    /// The address of its `mca_pml_ob1_recv_frag_t`.
    pub frag: u64,
}

#[derive(Clone, Copy, Debug)]
struct Field {
    offset: u64,
    size: u64,
}

/// The layouts and constants the walk needs, from the ob1 donor.
#[derive(Clone, Debug)]
pub struct Ob1Layout {
    array_size: Field,
    array_addr: Field,
    comm_cid: Field,
    comm_pml: Field,
    ob1_procs: Field,
    ob1_num_procs: Field,
    proc_unexpected: u64,
    proc_cant_match: Field,
    list_sentinel: u64,
    list_length: Field,
    item_next: Field,
    item_prev: Field,
    /// Offset of the frag's `opal_list_item_t` (`super.super`).
    frag_item: u64,
    frag_range: Field,
    frag_seg_len: Field,
    hdr_type: Field,
    match_src: Field,
    match_tag: Field,
    match_seq: Field,
    rndv_length: Field,
    rget_length: Field,
    component_name: Field,
    match_hdr_len: u64,
    type_match: i64,
    type_rndv: i64,
    type_rget: i64,
    comms_size: u64,
    ob1_size: u64,
}

impl Ob1Layout {
    /// The layout described by `donor` (the ob1 donor).
    pub fn new(donor: &TypeDonor) -> Result<Ob1Layout, Ob1Error> {
        let types = donor.types();
        let off = |ty: &str, f: &str| -> Result<u64, Ob1Error> {
            types
                .find(ty)
                .and_then(|t| t.field_offset(f))
                .ok_or_else(|| Ob1Error::MissingField(format!("{ty}.{f}")))
        };
        let field = |ty: &str, f: &str| -> Result<Field, Ob1Error> {
            Ok(Field {
                offset: off(ty, f)?,
                size: types
                    .field_size(ty, f)
                    .ok_or_else(|| Ob1Error::MissingField(format!("size of {ty}.{f}")))?,
            })
        };
        let size = |ty: &str| -> Result<u64, Ob1Error> {
            types
                .find(ty)
                .map(|t| t.size)
                .ok_or_else(|| Ob1Error::MissingField(format!("type {ty}")))
        };
        let constant =
            |name: &'static str| donor.constant(name).ok_or(Ob1Error::MissingConstant(name));
        let within = |outer: u64, inner: Field| Field {
            offset: outer + inner.offset,
            size: inner.size,
        };
        let hdr = off("mca_pml_ob1_recv_frag_t", "hdr")?;
        let match_at = hdr + off("mca_pml_ob1_hdr_t", "hdr_match")?;
        let rndv_length = field("mca_pml_ob1_rendezvous_hdr_t", "hdr_msg_length")?;
        Ok(Ob1Layout {
            array_size: field("opal_pointer_array_t", "size")?,
            array_addr: field("opal_pointer_array_t", "addr")?,
            comm_cid: field("ompi_communicator_t", "c_contextid")?,
            comm_pml: field("ompi_communicator_t", "c_pml_comm")?,
            ob1_procs: field("mca_pml_ob1_comm_t", "procs")?,
            ob1_num_procs: field("mca_pml_ob1_comm_t", "num_procs")?,
            proc_unexpected: off("mca_pml_ob1_comm_proc_t", "unexpected_frags")?,
            proc_cant_match: field("mca_pml_ob1_comm_proc_t", "frags_cant_match")?,
            list_sentinel: off("opal_list_t", "opal_list_sentinel")?,
            list_length: field("opal_list_t", "opal_list_length")?,
            item_next: field("opal_list_item_t", "opal_list_next")?,
            item_prev: field("opal_list_item_t", "opal_list_prev")?,
            frag_item: off("mca_pml_ob1_recv_frag_t", "super")?
                + off("opal_free_list_item_t", "super")?,
            frag_range: field("mca_pml_ob1_recv_frag_t", "range")?,
            frag_seg_len: within(
                off("mca_pml_ob1_recv_frag_t", "segments")?,
                field("mca_btl_base_segment_t", "seg_len")?,
            ),
            hdr_type: within(
                hdr + off("mca_pml_ob1_hdr_t", "hdr_common")?,
                field("mca_pml_ob1_common_hdr_t", "hdr_type")?,
            ),
            match_src: within(match_at, field("mca_pml_ob1_match_hdr_t", "hdr_src")?),
            match_tag: within(match_at, field("mca_pml_ob1_match_hdr_t", "hdr_tag")?),
            match_seq: within(match_at, field("mca_pml_ob1_match_hdr_t", "hdr_seq")?),
            rndv_length: within(hdr + off("mca_pml_ob1_hdr_t", "hdr_rndv")?, rndv_length),
            rget_length: within(
                hdr + off("mca_pml_ob1_hdr_t", "hdr_rget")?
                    + off("mca_pml_ob1_rget_hdr_t", "hdr_rndv")?,
                rndv_length,
            ),
            component_name: within(
                off("mca_pml_base_component_t", "pmlm_version")?,
                field("mca_base_component_t", "mca_component_name")?,
            ),
            match_hdr_len: constant("match_hdr_len")? as u64,
            type_match: constant("hdr_type_match")?,
            type_rndv: constant("hdr_type_rndv")?,
            type_rget: constant("hdr_type_rget")?,
            comms_size: size("opal_pointer_array_t")?,
            ob1_size: size("mca_pml_ob1_t")?,
        })
    }

    /// `sizeof(opal_pointer_array_t)` and `sizeof(mca_pml_ob1_t)`: the sizes of the
    /// `ompi_mpi_communicators` and `mca_pml_ob1` symbols of a process the donor describes.
    pub fn symbol_sizes(&self) -> [(&'static str, u64); 2] {
        [
            ("ompi_mpi_communicators", self.comms_size),
            ("mca_pml_ob1", self.ob1_size),
        ]
    }
}

/// Reads ob1's queues of one process.
pub struct Ob1Reader<'a> {
    layout: &'a Ob1Layout,
    memory: &'a dyn ProcessTarget,
}

impl std::fmt::Debug for Ob1Reader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ob1Reader").finish_non_exhaustive()
    }
}

impl<'a> Ob1Reader<'a> {
    /// A reader of `memory` with `layout`.
    pub fn new(layout: &'a Ob1Layout, memory: &'a dyn ProcessTarget) -> Self {
        Ob1Reader { layout, memory }
    }

    fn bytes(&self, what: &str, addr: u64, buf: &mut [u8]) -> Result<(), Ob1Error> {
        let mut raw = vec![0u8; buf.len()];
        if addr == 0 || !self.memory.fetch(addr, &mut raw) {
            return Err(Ob1Error::Unreadable {
                what: what.to_owned(),
                addr,
                len: buf.len(),
            });
        }
        self.memory.target_to_host(&raw, buf);
        Ok(())
    }

    fn uint(&self, what: &str, base: u64, f: Field) -> Result<u64, Ob1Error> {
        let addr = base.wrapping_add(f.offset);
        let mut b = [0u8; 8];
        let n = match f.size {
            1 | 2 | 4 | 8 => f.size as usize,
            _ => {
                return Err(Ob1Error::Implausible {
                    what: format!("the size of {what}"),
                    value: f.size,
                    limit: 8,
                });
            }
        };
        self.bytes(what, addr, &mut b[..n])?;
        let v = u64::from_ne_bytes(b);
        Ok(if cfg!(target_endian = "big") {
            v >> (64 - 8 * n)
        } else {
            v
        })
    }

    fn signed(&self, what: &str, base: u64, f: Field) -> Result<i64, Ob1Error> {
        let v = self.uint(what, base, f)?;
        let bits = 8 * f.size;
        Ok(if bits < 64 {
            ((v << (64 - bits)) as i64) >> (64 - bits)
        } else {
            v as i64
        })
    }

    /// The PML the process selected (`mca_pml_base_selected_component`'s name, at `addr`).
    pub fn selected_pml(&self, addr: u64) -> Result<String, Ob1Error> {
        let f = self.layout.component_name;
        let mut name = vec![0u8; f.size.min(256) as usize];
        self.bytes(
            "mca_pml_base_selected_component.pmlm_version.mca_component_name",
            addr.wrapping_add(f.offset),
            &mut name,
        )?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Ok(String::from_utf8_lossy(&name[..end]).into_owned())
    }

    /// The `ompi_communicator_t` whose `c_contextid` is `cid` (the DLL's `unique_id`), from
    /// `ompi_mpi_communicators` at `table`.
    pub fn communicator(&self, table: u64, cid: u64) -> Result<u64, Ob1Error> {
        let l = self.layout;
        let size = self.uint("ompi_mpi_communicators.size", table, l.array_size)?;
        if size > OB1_LIMIT {
            return Err(Ob1Error::Implausible {
                what: "ompi_mpi_communicators.size".to_owned(),
                value: size,
                limit: OB1_LIMIT,
            });
        }
        let addr = self.uint("ompi_mpi_communicators.addr", table, l.array_addr)?;
        let width = l.array_addr.size;
        // Communicators sit at the index of their context id; look there first.
        let order = (cid < size).then_some(cid).into_iter().chain(0..size);
        for i in order {
            let slot = Field {
                offset: i * width,
                size: width,
            };
            let comm = self.uint("ompi_mpi_communicators.addr[i]", addr, slot)?;
            if comm != 0 && self.uint("ompi_communicator_t.c_contextid", comm, l.comm_cid)? == cid {
                return Ok(comm);
            }
        }
        Err(Ob1Error::NoCommunicator(cid))
    }

    /// The unexpected messages of communicator `comm` (an `ompi_communicator_t *`): per peer
    /// in rank order, first `unexpected_frags` in arrival order, then `frags_cant_match`.
    /// None if it has no PML state (`c_pml_comm` NULL: `MPI_COMM_NULL`).
    pub fn unexpected(&self, comm: u64) -> Result<Vec<Ob1Message>, Ob1Error> {
        let l = self.layout;
        let pml = self.uint("ompi_communicator_t.c_pml_comm", comm, l.comm_pml)?;
        if pml == 0 {
            return Ok(Vec::new()); // No PML state (MPI_COMM_NULL): nothing can arrive.
        }
        let procs = self.uint("mca_pml_ob1_comm_t.procs", pml, l.ob1_procs)?;
        let n = self.uint("mca_pml_ob1_comm_t.num_procs", pml, l.ob1_num_procs)?;
        if n > OB1_LIMIT {
            return Err(Ob1Error::Implausible {
                what: "mca_pml_ob1_comm_t.num_procs".to_owned(),
                value: n,
                limit: OB1_LIMIT,
            });
        }
        let mut out = Vec::new();
        let width = l.ob1_procs.size;
        for peer in 0..n {
            let slot = Field {
                offset: peer * width,
                size: width,
            };
            let proc = self.uint("mca_pml_ob1_comm_t.procs[peer]", procs, slot)?;
            if proc == 0 {
                continue; // Allocated when the peer is first used.
            }
            // Addresses read from the process are anything: offsets wrap (as in `uint`), so a
            // garbage pointer is an unreadable address, not an overflow (found by the
            // ob1_queues fuzz target).
            let list = proc.wrapping_add(l.proc_unexpected);
            let what = format!("procs[{peer}].unexpected_frags");
            for item in self.list(&what, list)? {
                out.push(self.message(peer as u32, item.wrapping_sub(l.frag_item), false)?);
            }
            let head = self.uint(
                "mca_pml_ob1_comm_proc_t.frags_cant_match",
                proc,
                l.proc_cant_match,
            )?;
            if head != 0 {
                let what = format!("procs[{peer}].frags_cant_match");
                for frag in self.cant_match(&what, head)? {
                    out.push(self.message(peer as u32, frag, true)?);
                }
            }
        }
        Ok(out)
    }

    /// The items of the `opal_list_t` at `list`, checked.
    pub fn list(&self, what: &str, list: u64) -> Result<Vec<u64>, Ob1Error> {
        let l = self.layout;
        // `list` may be any address (read from the process): wrap as `uint` does, so that an
        // address near the top of the address space is an unreadable one, not an overflow
        // (found by the ob1_queues fuzz target).
        let sentinel = list.wrapping_add(l.list_sentinel);
        let length = self.uint(&format!("{what}.opal_list_length"), list, l.list_length)?;
        if length > OB1_LIMIT {
            return Err(Ob1Error::Implausible {
                what: format!("{what}.opal_list_length"),
                value: length,
                limit: OB1_LIMIT,
            });
        }
        self.ring(what, sentinel, false)
    }

    /// Walks the circular list through `start` (excluded if `include_start` is false: a
    /// sentinel), checking each back link.
    fn ring(&self, what: &str, start: u64, include_start: bool) -> Result<Vec<u64>, Ob1Error> {
        let l = self.layout;
        let mut out = Vec::new();
        if include_start {
            out.push(start);
        }
        let mut seen = HashSet::from([start]);
        let mut prev = start;
        loop {
            let next = self.uint(&format!("{what}: opal_list_next"), prev, l.item_next)?;
            if next == start {
                return Ok(out);
            }
            if !seen.insert(next) {
                return Err(Ob1Error::Cycle {
                    what: what.to_owned(),
                    addr: next,
                    after: out.len() as u64,
                });
            }
            if seen.len() as u64 > OB1_LIMIT {
                return Err(Ob1Error::Implausible {
                    what: format!("the length of {what}"),
                    value: seen.len() as u64,
                    limit: OB1_LIMIT,
                });
            }
            let back = self.uint(&format!("{what}: opal_list_prev"), next, l.item_prev)?;
            if back != prev {
                return Err(Ob1Error::BrokenLink {
                    what: what.to_owned(),
                    addr: next,
                    prev: back,
                    expected: prev,
                });
            }
            out.push(next);
            prev = next;
        }
    }

    /// The frags of an out-of-sequence queue: the circular list through `head`, each
    /// followed by its `range` (circular) list.
    fn cant_match(&self, what: &str, head: u64) -> Result<Vec<u64>, Ob1Error> {
        let l = self.layout;
        let mut out = Vec::new();
        // Wrapping: `head`, the items and `range` are read from the process (see `unexpected`).
        for item in self.ring(what, head.wrapping_add(l.frag_item), true)? {
            let frag = item.wrapping_sub(l.frag_item);
            out.push(frag);
            let range = self.uint("mca_pml_ob1_recv_frag_t.range", frag, l.frag_range)?;
            if range != 0 {
                let w = format!("{what}: range of {frag:#x}");
                for r in self.ring(&w, range.wrapping_add(l.frag_item), true)? {
                    out.push(r.wrapping_sub(l.frag_item));
                }
            }
            if out.len() as u64 > OB1_LIMIT {
                return Err(Ob1Error::Implausible {
                    what: format!("the length of {what}"),
                    value: out.len() as u64,
                    limit: OB1_LIMIT,
                });
            }
        }
        Ok(out)
    }

    fn message(&self, peer: u32, frag: u64, out_of_sequence: bool) -> Result<Ob1Message, Ob1Error> {
        let l = self.layout;
        let ty = self.uint("hdr_common.hdr_type", frag, l.hdr_type)?;
        let kind = match ty as i64 {
            t if t == l.type_match => FragKind::Match,
            t if t == l.type_rndv => FragKind::Rendezvous,
            t if t == l.type_rget => FragKind::RendezvousGet,
            t => FragKind::Other(t as u8),
        };
        let length = match kind {
            FragKind::Match => {
                let seg = self.uint("segments[0].seg_len", frag, l.frag_seg_len)?;
                Some(seg.checked_sub(l.match_hdr_len).ok_or_else(|| Ob1Error::Implausible {
                    what: format!("segments[0].seg_len of the eager frag at {frag:#x} (below the match header's length {})", l.match_hdr_len),
                    value: seg,
                    limit: l.match_hdr_len,
                })?)
            }
            FragKind::Rendezvous => {
                Some(self.uint("hdr_rndv.hdr_msg_length", frag, l.rndv_length)?)
            }
            FragKind::RendezvousGet => {
                Some(self.uint("hdr_rget.hdr_rndv.hdr_msg_length", frag, l.rget_length)?)
            }
            FragKind::Other(_) => None,
        };
        Ok(Ob1Message {
            peer,
            source: self.signed("hdr_match.hdr_src", frag, l.match_src)? as i32,
            tag: self.signed("hdr_match.hdr_tag", frag, l.match_tag)? as i32,
            sequence: self.uint("hdr_match.hdr_seq", frag, l.match_seq)?,
            length,
            kind,
            out_of_sequence,
            frag,
        })
    }
}
