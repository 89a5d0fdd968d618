//! `mqd-dump`'s text: a pure function of a [`ProcessDump`].

use std::fmt::Write as _;

use mqd_types::OpClass;
use serde::Serialize;

use super::model::{Ob1Row, Operation, ProcessDump, QueueDump};

/// `v` as JSON prints it (`null`, `[0,1]`, `42`), as the text shows optional values and groups.
fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<{e}>"))
}

/// The text of one process (standard output): its DLL, the search, the type donor's checks,
/// and each communicator with its three queues. What stopped the dump is not in it: see
/// [`error`].
pub fn render(p: &ProcessDump) -> String {
    let mut s = format!(
        "rank {} (pid {})",
        p.rank.map_or("?".to_owned(), |r| r.to_string()),
        p.pid
    );
    if let Some(dll) = &p.dll {
        let _ = write!(s, ": {dll}\n  {}\n", p.dll_version.as_deref().unwrap_or(""));
    } else {
        s += "\n";
    }
    for c in p.dll_search.iter().flatten() {
        let _ = writeln!(s, "  DLL search: {c}");
    }
    let checks: Vec<String> = p
        .type_donor_checks
        .iter()
        .flatten()
        .map(|c| {
            format!(
                "{} {} B = {} {} B",
                c.symbol,
                c.symbol_size,
                c.type_name,
                json(&c.type_size)
            )
        })
        .collect();
    if !checks.is_empty() {
        let _ = writeln!(s, "  type donor checked: {}", checks.join(", "));
    }
    for c in p.communicators.iter().flatten() {
        let _ = writeln!(
            s,
            "  communicator {} {:?}: local rank {}, size {}, group {}",
            c.unique_id,
            c.name,
            c.local_rank,
            c.size,
            json(&c.group)
        );
        for class in OpClass::ALL {
            if let Some(q) = c.queue(class) {
                queue(&mut s, class, q);
            }
        }
    }
    s
}

/// The line about what stopped the dump of `p`, if something did (standard error):
/// `mqd-dump: rank R (pid P): ERROR`.
pub fn error(p: &ProcessDump) -> Option<String> {
    p.error.as_ref().map(|e| {
        format!(
            "mqd-dump: rank {} (pid {}): {e}\n",
            p.rank.map_or("?".to_owned(), |r| r.to_string()),
            p.pid
        )
    })
}

fn queue(s: &mut String, class: OpClass, q: &QueueDump) {
    match q {
        QueueDump::Operations(ops) if ops.is_empty() => {
            let _ = writeln!(s, "    {class}: none");
        }
        QueueDump::Operations(ops) => {
            let _ = writeln!(s, "    {class} ({}):", ops.len());
            for op in ops {
                operation(s, op);
            }
        }
        QueueDump::NoInformation(_) => {
            let _ = writeln!(s, "    {class}: no information from the DLL");
        }
        QueueDump::FromOb1 {
            messages, read_by, ..
        } => {
            if messages.is_empty() {
                let _ = writeln!(
                    s,
                    "    {class}: none (no information from the DLL; read by {read_by})"
                );
            } else {
                let _ = writeln!(
                    s,
                    "    {class} ({}): no information from the DLL; read by {read_by}:",
                    messages.len()
                );
            }
            for m in messages {
                ob1_message(s, m);
            }
        }
        QueueDump::Failed {
            dll: Some(_),
            error,
        } => {
            let _ = writeln!(s, "    {class}: no information from the DLL; {error}");
        }
        QueueDump::Failed { dll: None, error } => {
            let _ = writeln!(s, "    {class}: {error}");
        }
    }
}

fn operation(s: &mut String, op: &Operation) {
    let tag = if op.tag_wild {
        "ANY".to_owned()
    } else {
        op.desired_tag.to_string()
    };
    let actual = if op.status == "pending" {
        String::new()
    } else {
        format!(
            "; actual peer {} tag {} length {}",
            op.actual_local_rank, op.actual_tag, op.actual_length
        )
    };
    let _ = writeln!(
        s,
        "      {} peer {} (world {}) tag {tag} length {} buffer {:#x}{actual}  [{}]",
        op.status,
        op.desired_local_rank,
        op.desired_global_rank,
        op.desired_length,
        op.buffer,
        op.extra_text.join("; ")
    );
}

fn ob1_message(s: &mut String, m: &Ob1Row) {
    let _ = writeln!(
        s,
        "      peer {} (world {}) tag {} length {} [{}, seq {}{}, frag {:#x}]",
        m.peer,
        json(&m.peer_global),
        m.tag,
        json(&m.length),
        m.kind,
        m.sequence,
        if m.out_of_sequence {
            ", out of sequence"
        } else {
            ""
        },
        m.frag
    );
}
