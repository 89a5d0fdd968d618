//! What `mqd-dump` read from each process: its `--json` document, and the input of its text
//! ([`super::text`]). Fields are declared in alphabetical order, the key order of the tool's
//! JSON since it was built with `serde_json::json!` (whose maps sort their keys).

use mqd_types::ob1::Ob1Message;
use mqd_types::{CommunicatorQueues, MqdError, OpClass, PendingOperation, Queue, TAddr, TWord};
use serde::{Deserialize, Serialize};

/// The whole `--json` document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dump {
    /// One entry per process asked for, in order.
    pub processes: Vec<ProcessDump>,
}

/// One process: where its DLL and types came from, and its communicators; what was not reached
/// before an error is absent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessDump {
    /// Its communicators with their queues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub communicators: Option<Vec<CommunicatorDump>>,
    /// The DLL loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dll: Option<String>,
    /// Where section 5's search looked (`origin: path` or `origin: note`); absent with `--dll`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dll_search: Option<Vec<String>>,
    /// The DLL's version string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dll_version: Option<String>,
    /// What stopped the dump.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The process.
    pub pid: i32,
    /// Its PML (Open MPI), outermost first: `["ob1"]`, `["monitoring", "ob1"]`; absent for
    /// another MPI, or if it could not be read (then `refused` says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pml: Option<Vec<String>>,
    /// Its rank, from its environment.
    pub rank: Option<i32>,
    /// Why nothing of it is shown: the DLL cannot show its queues truly (its PML is not one the
    /// DLL reads, or which it is could not be told).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The objects whose debug info gave types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_debug_info: Option<Vec<String>>,
    /// The type donor's sizes checked against the process's symbols.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_donor_checks: Option<Vec<DonorCheck>>,
}

/// A type donor's check: the size of a symbol in the process against its type in the donor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DonorCheck {
    /// The variable.
    pub symbol: String,
    /// Its size in the process's library.
    pub symbol_size: u64,
    /// Its type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The type's size in the donor, if it has the type.
    pub type_size: Option<u64>,
}

/// A communicator, its group and its queues.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommunicatorDump {
    /// `MPI_COMM_WORLD` ranks of its members, if the DLL gave them.
    pub group: Option<Vec<i32>>,
    /// This process's rank in it.
    pub local_rank: TWord,
    /// Its name.
    pub name: String,
    /// Receives posted and not matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_receives: Option<QueueDump>,
    /// Sends not yet matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_sends: Option<QueueDump>,
    /// Its size.
    pub size: TWord,
    /// Messages arrived and not matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unexpected_messages: Option<QueueDump>,
    /// The DLL's tag for it (Open MPI: the context id).
    pub unique_id: TAddr,
}

impl CommunicatorDump {
    /// The queue of `class`, if it was read.
    pub fn queue(&self, class: OpClass) -> Option<&QueueDump> {
        match class {
            OpClass::PendingSends => self.pending_sends.as_ref(),
            OpClass::PendingReceives => self.pending_receives.as_ref(),
            OpClass::UnexpectedMessages => self.unexpected_messages.as_ref(),
        }
    }
}

/// The text `"no information"`: the DLL has none about a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoInformation {
    /// The only value.
    #[serde(rename = "no information")]
    NoInformation,
}

/// One queue, as the DLL (or mqd-types' reading of ob1) gave it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum QueueDump {
    /// Its operations, in matching order.
    Operations(Vec<Operation>),
    /// The DLL has no information about it.
    NoInformation(NoInformation),
    /// The DLL had none; mqd-types read the unexpected messages from ob1's structures.
    FromOb1 {
        /// `"no information"`: what the DLL said.
        dll: NoInformation,
        /// The messages, per peer in arrival order.
        messages: Vec<Ob1Row>,
        /// Who read them ([`OB1_LABEL`]).
        read_by: String,
    },
    /// Reading it failed.
    Failed {
        /// `"no information"` where the DLL had none and reading ob1's structures failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dll: Option<NoInformation>,
        /// The error.
        error: String,
    },
}

/// How the dump labels the unexpected messages mqd-types read itself.
pub const OB1_LABEL: &str = "mqd-types, from ob1's structures (unexpected_frags, frags_cant_match)";

/// One pending operation (§6.8.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operation {
    /// The peer's rank in `MPI_COMM_WORLD` once matched (or of a send).
    pub actual_global_rank: TWord,
    /// The length once matched (or of a send).
    pub actual_length: TWord,
    /// The peer's rank in the communicator once matched (or of a send).
    pub actual_local_rank: TWord,
    /// The tag once matched (or of a send).
    pub actual_tag: TWord,
    /// Where the data is.
    pub buffer: TAddr,
    /// The peer's rank in `MPI_COMM_WORLD` (`MPI_ANY_SOURCE` for any), as the DLL gave it (Open
    /// MPI's DLL zero-extends a C `int`: -1 arrives as 4294967295).
    pub desired_global_rank: TWord,
    /// The buffer's length.
    pub desired_length: TWord,
    /// The peer's rank in the communicator (`MPI_ANY_SOURCE` for any), as the DLL gave it.
    pub desired_local_rank: TWord,
    /// The tag (meaningful unless `tag_wild`).
    pub desired_tag: TWord,
    /// Up to five lines the DLL adds.
    pub extra_text: Vec<String>,
    /// `pending`, `matched`, `complete`, or the raw value.
    pub status: String,
    /// Whether the buffer is the implementation's.
    pub system_buffer: bool,
    /// Whether the tag is a wildcard.
    pub tag_wild: bool,
}

impl From<&PendingOperation> for Operation {
    fn from(op: &PendingOperation) -> Operation {
        Operation {
            actual_global_rank: op.actual_global_rank,
            actual_length: op.actual_length,
            actual_local_rank: op.actual_local_rank,
            actual_tag: op.actual_tag,
            buffer: op.buffer,
            desired_global_rank: op.desired_global_rank,
            desired_length: op.desired_length,
            desired_local_rank: op.desired_local_rank,
            desired_tag: op.desired_tag,
            extra_text: op.extra_text(),
            status: op
                .status()
                .map(|s| s.to_string())
                .unwrap_or_else(|v| v.to_string()),
            system_buffer: op.system_buffer != 0,
            tag_wild: op.tag_wild != 0,
        }
    }
}

/// One unexpected message read from ob1's structures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ob1Row {
    /// The address of its fragment.
    pub frag: u64,
    /// Its first fragment's kind (`eager`, `rendezvous`, ...).
    pub kind: String,
    /// Its length in bytes, if the header type is known.
    pub length: Option<u64>,
    /// Whether it arrived before an earlier message of its sender.
    pub out_of_sequence: bool,
    /// The sender's rank in the communicator.
    pub peer: u32,
    /// The sender's rank in `MPI_COMM_WORLD`, where the group is known.
    pub peer_global: Option<i32>,
    /// The sender's sequence number.
    pub sequence: u64,
    /// The source rank the sender wrote.
    pub source: i32,
    /// The tag.
    pub tag: i32,
}

impl Ob1Row {
    /// The row of `m`, its peer mapped through `group`.
    pub fn new(m: &Ob1Message, group: Option<&[i32]>) -> Ob1Row {
        Ob1Row {
            frag: m.frag,
            kind: m.kind.to_string(),
            length: m.length,
            out_of_sequence: m.out_of_sequence,
            peer: m.peer,
            peer_global: group.and_then(|g| g.get(m.peer as usize)).copied(),
            sequence: m.sequence,
            source: m.source,
            tag: m.tag,
        }
    }
}

impl QueueDump {
    /// The dump of `q`, ob1's peers mapped through `group`.
    pub fn of(q: &Queue, group: Option<&[i32]>) -> QueueDump {
        match q {
            Queue::Operations(ops) => {
                QueueDump::Operations(ops.iter().map(Operation::from).collect())
            }
            Queue::NoInformation => QueueDump::NoInformation(NoInformation::NoInformation),
            Queue::Failed(e @ MqdError::Ob1(_)) => QueueDump::Failed {
                dll: Some(NoInformation::NoInformation),
                error: e.to_string(),
            },
            Queue::Failed(e) => QueueDump::Failed {
                dll: None,
                error: e.to_string(),
            },
            Queue::FromOb1(msgs) => QueueDump::FromOb1 {
                dll: NoInformation::NoInformation,
                messages: msgs.iter().map(|m| Ob1Row::new(m, group)).collect(),
                read_by: OB1_LABEL.to_owned(),
            },
        }
    }
}

impl From<&CommunicatorQueues> for CommunicatorDump {
    fn from(c: &CommunicatorQueues) -> CommunicatorDump {
        let group = c.group.as_deref();
        let queue = |class| c.queue(class).map(|q| QueueDump::of(q, group));
        CommunicatorDump {
            group: c.group.clone(),
            local_rank: c.communicator.local_rank,
            name: c.communicator.name().into_owned(),
            pending_receives: queue(OpClass::PendingReceives),
            pending_sends: queue(OpClass::PendingSends),
            size: c.communicator.size,
            unexpected_messages: queue(OpClass::UnexpectedMessages),
            unique_id: c.communicator.unique_id,
        }
    }
}
