//! `mqd-dump`'s text: a pure function of a [`ProcessDump`].

use std::fmt::Write as _;

use mqd_types::{OpClass, TWord};
use serde::Serialize;

use super::model::{Ob1Row, Operation, ProcessDump, QueueDump};

/// `v` as JSON prints it (`null`, `[0,1]`, `42`), as the text shows optional values and groups.
fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<{e}>"))
}

/// The values of MPI's special ranks in the implementation whose DLL gave the dump.
#[derive(Clone, Copy, Debug)]
struct Specials {
    any_source: i64,
    proc_null: i64,
    undefined: i64,
}

/// The special ranks of the DLL's implementation, told by its version string: Open MPI's
/// (`MPI_ANY_SOURCE` -1, `MPI_PROC_NULL` -2) or MPICH's (-2, -1); `None` for another DLL, whose
/// values are shown as numbers.
fn specials(p: &ProcessDump) -> Option<Specials> {
    let version = p.dll_version.as_deref()?;
    let (any_source, proc_null) = if version.contains("Open MPI") {
        (-1, -2)
    } else if version.contains("MPICH") {
        (-2, -1)
    } else {
        return None;
    };
    Some(Specials {
        any_source,
        proc_null,
        undefined: -32766,
    })
}

/// A C `int` the DLL returned as a word: Open MPI's DLL fetches an `int` into a zeroed 64-bit
/// word, so -1 arrives as 4294967295. Ranks and tags are `int`s: a value of 32 bits with the
/// sign bit set is that negative `int`.
// `TWord` is a C `long`: `i64` here, `i32` on 32-bit targets, where the conversion is not useless.
#[allow(clippy::useless_conversion)]
fn c_int(v: TWord) -> i64 {
    let v = i64::from(v);
    if (1i64 << 31..1i64 << 32).contains(&v) {
        v - (1i64 << 32)
    } else {
        v
    }
}

/// A rank by its name where it is a special one (`MPI_ANY_SOURCE`, `MPI_PROC_NULL`,
/// `MPI_UNDEFINED`), else its number.
fn rank(v: TWord, sp: Option<Specials>) -> String {
    let v = c_int(v);
    match sp {
        Some(s) if v == s.any_source => "MPI_ANY_SOURCE".to_owned(),
        Some(s) if v == s.proc_null => "MPI_PROC_NULL".to_owned(),
        Some(s) if v == s.undefined => "MPI_UNDEFINED".to_owned(),
        _ => v.to_string(),
    }
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
    if let Some(pml) = &p.pml {
        let _ = writeln!(s, "  PML: {}", pml.join(" over "));
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
    let sp = specials(p);
    for c in p.communicators.iter().flatten() {
        let _ = writeln!(
            s,
            "  communicator {} {:?}: local rank {}, size {}, group {}",
            c.unique_id,
            c.name,
            rank(c.local_rank, sp),
            c.size,
            json(&c.group)
        );
        for class in OpClass::ALL {
            if let Some(q) = c.queue(class) {
                queue(&mut s, class, q, sp);
            }
        }
    }
    s
}

/// The line about what stopped the dump of `p`, if something did (standard error):
/// `mqd-dump: rank R (pid P): ERROR`, or `mqd-dump: rank R (pid P): refused: WHY`.
pub fn error(p: &ProcessDump) -> Option<String> {
    let what = match (&p.refused, &p.error) {
        (Some(why), _) => format!("refused: {why}"),
        (None, Some(e)) => e.clone(),
        (None, None) => return None,
    };
    Some(format!(
        "mqd-dump: rank {} (pid {}): {what}\n",
        p.rank.map_or("?".to_owned(), |r| r.to_string()),
        p.pid
    ))
}

fn queue(s: &mut String, class: OpClass, q: &QueueDump, sp: Option<Specials>) {
    match q {
        QueueDump::Operations(ops) if ops.is_empty() => {
            let _ = writeln!(s, "    {class}: none");
        }
        QueueDump::Operations(ops) => {
            let _ = writeln!(s, "    {class} ({}):", ops.len());
            for op in ops {
                operation(s, op, sp);
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

fn operation(s: &mut String, op: &Operation, sp: Option<Specials>) {
    let tag = if op.tag_wild {
        "MPI_ANY_TAG".to_owned()
    } else {
        c_int(op.desired_tag).to_string()
    };
    let actual = if op.status == "pending" {
        String::new()
    } else {
        format!(
            "; actual peer {} tag {} length {}",
            rank(op.actual_local_rank, sp),
            c_int(op.actual_tag),
            op.actual_length
        )
    };
    let _ = writeln!(
        s,
        "      {} peer {} (world {}) tag {tag} length {} buffer {:#x}{actual}  [{}]",
        op.status,
        rank(op.desired_local_rank, sp),
        rank(op.desired_global_rank, sp),
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
