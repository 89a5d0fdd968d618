//! `profile.json` in Caliper's json-split format, as Hatchet's `GraphFrame.from_caliper` reads
//! it: one row per (node, rank) in `data`, the column names in `columns`, `{"is_value": ...}`
//! per column in `column_metadata`, and the call tree in `nodes` (`label`, `column` "path",
//! `parent` but for roots); every other top-level key is run metadata (Hatchet's
//! `GraphFrame.metadata`), written as strings like Caliper's globals.
//!
//! The columns, in this order (Hatchet's names after loading in parentheses):
//!
//! | column | what |
//! |---|---|
//! | `Node order` | the node's index (Hatchet orders the tree by it; it reads it from the first column of row *i* for node *i*, so the rows of the lowest rank come first, one per node) |
//! | `path` | the node (a reference into `nodes`) |
//! | `mpi.rank` (`rank`) | the rank |
//! | `node.kind` | `region` or `function` (a reference into `nodes`, labels after the tree's) |
//! | `Calls` | times entered or called (Caliper's `region.count` name) |
//! | `sum#time.duration` (`time`) | exclusive time, seconds |
//! | `inclusive#sum#time.duration` (`time (inc)`) | inclusive time, seconds |
//! | `mpit.NAME`, `mpit.NAME (inc)` | a counter's, aggregate's or timer's delta (the names of Caliper's MPIT service) |
//! | `mpit.NAME.number_highwatermark_changes`, `mpit.NAME.total_highwatermark_change` (`low` for low watermarks), each with `(inc)` | a watermark's moves |
//! | `min#mpit.NAME`, `max#mpit.NAME`, `avg#mpit.NAME`, `count#mpit.NAME`, each with `(inc)` | a level's samples (`null` without samples) |
//! | `mpit.NAME` | a state's or generic variable's last value |
//! | `event.NAME`, `event.NAME (inc)` | instances of an event type |
//!
//! Every rank has a row for every node (a rank without the node: zeros, and `null` where the
//! reduction leaves such a rank out). Hatchet's convention for an exclusive/inclusive pair is
//! `X` / `X (inc)`.

#![forbid(unsafe_code)]

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::model::{Kind, MetricData, MetricKind};
use crate::reduce::{NodeValues, Profile};

/// Metadata of a value column carrying a unit.
fn unit(u: &str) -> Value {
    json!({"is_value": true, "attribute.unit": u})
}

fn value() -> Value {
    json!({"is_value": true})
}

/// A float, or `null` if it is not finite (JSON has no NaN or infinity).
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// The value columns of one pvar column: (name, unit) pairs and how to read them from one
/// rank's [`MetricData`].
type Extract = Box<dyn Fn(&MetricData) -> Value>;

fn pvar_columns(label: &str, class: &str, kind: MetricKind) -> Vec<(String, Extract)> {
    let base = format!("mpit.{label}");
    let mut out: Vec<(String, Extract)> = Vec::new();
    match kind {
        MetricKind::Delta => out.push((
            base,
            Box::new(|m| match m {
                MetricData::Delta { sum } => num(*sum),
                _ => Value::Null,
            }),
        )),
        MetricKind::Watermark => {
            let hl = if class == "lowwatermark" {
                "low"
            } else {
                "high"
            };
            out.push((
                format!("{base}.number_{hl}watermark_changes"),
                Box::new(|m| match m {
                    MetricData::Watermark { changes, .. } => json!(changes),
                    _ => Value::Null,
                }),
            ));
            out.push((
                format!("{base}.total_{hl}watermark_change"),
                Box::new(|m| match m {
                    MetricData::Watermark { amount, .. } => num(*amount),
                    _ => Value::Null,
                }),
            ));
        }
        MetricKind::Samples => {
            let stat = |f: fn(u64, f64, f64, f64) -> f64| -> Extract {
                Box::new(move |m| match *m {
                    MetricData::Samples {
                        count,
                        min,
                        max,
                        sum,
                    } if count > 0 => num(f(count, min, max, sum)),
                    _ => Value::Null,
                })
            };
            out.push((format!("min#{base}"), stat(|_, min, _, _| min)));
            out.push((format!("max#{base}"), stat(|_, _, max, _| max)));
            out.push((format!("avg#{base}"), stat(|c, _, _, s| s / c as f64)));
            out.push((
                format!("count#{base}"),
                Box::new(|m| match m {
                    MetricData::Samples { count, .. } => json!(count),
                    _ => Value::Null,
                }),
            ));
        }
        MetricKind::Raw => out.push((
            base,
            Box::new(|m| match m {
                MetricData::Raw { last } => last.map_or(Value::Null, num),
                _ => Value::Null,
            }),
        )),
    }
    out
}

/// `profile.json`: the document (see the module doc).
pub fn document(p: &Profile) -> Value {
    let layout = Layout::of(p);
    let mut data = Vec::with_capacity(p.nodes.len() * p.rank_ids.len());
    for (ri, &rank) in p.rank_ids.iter().enumerate() {
        data.extend(layout.rows(p, rank, &|n| p.nodes[n].per_rank[ri].as_ref()));
    }
    let mut doc = vec![("data".to_string(), Value::Array(data))];
    doc.extend(layout.tail(p));
    Value::Object(doc.into_iter().collect())
}

/// The columns and the tree of a profile's document: all but its data rows and run metadata.
struct Layout {
    columns: Vec<String>,
    meta: Vec<Value>,
    /// Per pvar value column: the profile's column, inclusive or not, how to read it.
    extracts: Vec<(usize, bool, Extract)>,
    nodes: Vec<Value>,
    /// The values of a rank without a node.
    zero: NodeValues,
}

impl Layout {
    fn of(p: &Profile) -> Layout {
        let mut columns: Vec<String> = ["Node order", "path", "mpi.rank", "node.kind", "Calls"]
            .map(String::from)
            .to_vec();
        let mut meta: Vec<Value> = vec![
            value(),
            json!({"is_value": false}),
            value(),
            json!({"is_value": false}),
            unit("count"),
        ];
        columns.push("sum#time.duration".into());
        meta.push(unit("sec"));
        columns.push("inclusive#sum#time.duration".into());
        meta.push(unit("sec"));

        // Per pvar column: its value columns, exclusive then inclusive (not for states).
        let mut extracts: Vec<(usize, bool, Extract)> = Vec::new();
        for (c, col) in p.columns.iter().enumerate() {
            let kind = col.meta.metric;
            for inclusive in [false, true] {
                if inclusive && kind == MetricKind::Raw {
                    continue;
                }
                for (name, f) in pvar_columns(&col.label, &col.meta.class, kind) {
                    columns.push(if inclusive {
                        format!("{name} (inc)")
                    } else {
                        name
                    });
                    meta.push(value());
                    extracts.push((c, inclusive, f));
                }
            }
        }
        for e in &p.event_types {
            columns.push(format!("event.{e}"));
            meta.push(unit("count"));
            columns.push(format!("event.{e} (inc)"));
            meta.push(unit("count"));
        }

        // The tree, then the two labels of node.kind.
        let mut nodes: Vec<Value> = p
            .nodes
            .iter()
            .map(|n| match n.parent {
                Some(parent) => json!({"label": n.name, "column": "path", "parent": parent}),
                None => json!({"label": n.name, "column": "path"}),
            })
            .collect();
        nodes.push(json!({"label": "region", "column": "node.kind"}));
        nodes.push(json!({"label": "function", "column": "node.kind"}));

        let zero_kinds: Vec<MetricKind> = p.columns.iter().map(|c| c.meta.metric).collect();
        let zero = NodeValues {
            calls: 0,
            time_ns: 0,
            exclusive_time_ns: 0,
            timed_calls: 0,
            metrics: zero_kinds.iter().map(|&k| MetricData::zero(k)).collect(),
            inclusive: zero_kinds.iter().map(|&k| MetricData::zero(k)).collect(),
            events: vec![0; p.event_types.len()],
            inclusive_events: vec![0; p.event_types.len()],
        };
        Layout {
            columns,
            meta,
            extracts,
            nodes,
            zero,
        }
    }

    /// The data rows of one rank, one per node; `values(node)`: its values there, if any.
    fn rows<'s, 'v: 's>(
        &'s self,
        p: &'s Profile,
        rank: usize,
        values: &'s dyn Fn(usize) -> Option<&'v NodeValues>,
    ) -> impl Iterator<Item = Value> + 's {
        let kind_node = |k: Kind| p.nodes.len() + (k == Kind::Function) as usize;
        p.nodes.iter().enumerate().map(move |(i, n)| {
            let v = values(i).unwrap_or(&self.zero);
            let mut row: Vec<Value> = vec![
                json!(i),
                json!(i),
                json!(rank),
                json!(kind_node(n.kind)),
                json!(v.calls),
                num(v.exclusive_time_ns as f64 / 1e9),
                num(v.time_ns as f64 / 1e9),
            ];
            for (c, inclusive, f) in &self.extracts {
                row.push(f(if *inclusive {
                    &v.inclusive[*c]
                } else {
                    &v.metrics[*c]
                }));
            }
            for e in 0..p.event_types.len() {
                row.push(json!(v.events[e]));
                row.push(json!(v.inclusive_events[e]));
            }
            Value::Array(row)
        })
    }

    /// The entries after `data`, in the order [`render`] writes them.
    fn tail(&self, p: &Profile) -> Vec<(String, Value)> {
        let mut doc: Vec<(String, Value)> = vec![
            ("columns".into(), json!(self.columns)),
            ("column_metadata".into(), Value::Array(self.meta.clone())),
            ("nodes".into(), Value::Array(self.nodes.clone())),
        ];
        let globals = [
            ("cali.channel", "mpit-prof".to_string()),
            ("mpit-prof.version", env!("CARGO_PKG_VERSION").to_string()),
            ("program", p.program.join(" ")),
            ("mpi.library", p.library.clone()),
            ("mpi.world.size", p.rank_ids.len().to_string()),
            ("mpit-prof.mode", p.mode.to_string()),
            ("mpit-prof.clock", p.clock.clone()),
            ("mpit-prof.hosts", p.hosts.join(",")),
            ("mpit-prof.pvars.profiled", p.columns.len().to_string()),
        ];
        doc.extend(
            globals
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::String(v))),
        );
        doc
    }
}

/// `profile.json` as text: one data row per line.
pub fn render(p: &Profile) -> String {
    let mut w = Writer::new(Vec::new(), p).unwrap_or_else(|_| unreachable!("a Vec"));
    for (ri, &rank) in p.rank_ids.iter().enumerate() {
        let _ = w.rank(p, rank, &|n| p.nodes[n].per_rank[ri].as_ref());
    }
    let out = w.finish(p).unwrap_or_default();
    String::from_utf8(out).unwrap_or_default()
}

/// `profile.json` written one rank at a time ([`render`]'s text): the data rows of each rank
/// as the end of a run receives it, then the rest. `p` is the profile without its per-rank
/// values (only its columns, event types and nodes are read before [`Writer::finish`]).
pub struct Writer<W: Write> {
    out: W,
    layout: Layout,
    rows: usize,
}

impl<W: Write> Writer<W> {
    /// The document's start into `out`.
    pub fn new(mut out: W, p: &Profile) -> io::Result<Writer<W>> {
        out.write_all(b"{\n  \"data\": ")?;
        Ok(Writer {
            out,
            layout: Layout::of(p),
            rows: 0,
        })
    }

    /// The data rows of `rank`; `values(node)`: its values there, if any.
    pub fn rank<'v>(
        &mut self,
        p: &Profile,
        rank: usize,
        values: &dyn Fn(usize) -> Option<&'v NodeValues>,
    ) -> io::Result<()> {
        let Writer { out, layout, rows } = self;
        for row in layout.rows(p, rank, values) {
            out.write_all(if *rows == 0 { b"[\n    " } else { b",\n    " })?;
            out.write_all(row.to_string().as_bytes())?;
            *rows += 1;
        }
        Ok(())
    }

    /// The rest of the document (`p`'s ranks and hosts complete), flushed; gives `out` back.
    pub fn finish(mut self, p: &Profile) -> io::Result<W> {
        self.out
            .write_all(if self.rows == 0 { b"[]" } else { b"\n  ]" })?;
        let doc = self.layout.tail(p);
        let n = doc.len();
        for (i, (k, v)) in doc.iter().enumerate() {
            self.out.write_all(b",\n  ")?;
            let mut entry = Value::String(k.clone()).to_string();
            entry.push_str(": ");
            match (k.as_str(), v) {
                ("nodes" | "column_metadata", Value::Array(items)) if !items.is_empty() => {
                    entry.push_str("[\n");
                    for (j, item) in items.iter().enumerate() {
                        entry.push_str("    ");
                        entry.push_str(&item.to_string());
                        if j + 1 < items.len() {
                            entry.push(',');
                        }
                        entry.push('\n');
                    }
                    entry.push_str("  ]");
                }
                _ => entry.push_str(&v.to_string()),
            }
            if i + 1 == n {
                entry.push('\n');
            }
            self.out.write_all(entry.as_bytes())?;
        }
        self.out.write_all(b"}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}
