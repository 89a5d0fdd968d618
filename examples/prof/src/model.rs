//! One rank's profile as the preload library sends it to rank 0: the engine's [`Report`] with
//! who measured it, as plain `serde` structs (the engine's own types have no `serde`). The input
//! of [`crate::reduce::reduce()`]; `ranks.json` in the output directory is a list of these, so
//! every output can be rendered again from it ([`crate::write::report`],
//! [`crate::write::diff`]).
//!
//! C constant families are kept as text: the class in short lowercase (`"counter"`,
//! `"highwatermark"`), the datatype and binding by their C names (`"MPI_UNSIGNED_LONG_LONG"`,
//! `"MPI_T_BIND_MPI_COMM"`), the verbosity without its prefix (`"USER_BASIC"`). Floats that
//! JSON lacks (NaN, infinities) are written as text (`"inf"`).

#![forbid(unsafe_code)]

use mpit_safe::DerivedMetric;
use serde::{Deserialize, Serialize};

use crate::serde_util::{any_float, by_name, float_vec, opt_float};
use crate::{Metric, Mode, NodeKind, Report};

/// What one rank measured, and who it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankProfile {
    /// Its rank in `MPI_COMM_WORLD`.
    pub rank: usize,
    /// The size of `MPI_COMM_WORLD`.
    pub size: usize,
    /// The first line of `MPI_Get_library_version`, its runs of white space and control
    /// characters (MPICH writes a tab, a NUL may end it) made single spaces.
    pub library: String,
    /// The host it ran on.
    pub hostname: String,
    /// The program's command line (`argv`).
    pub program: Vec<String>,
    /// The root region's name.
    pub root: String,
    /// The sampling mode: `"region"` or `"call"`.
    #[serde(with = "by_name")]
    pub mode: Mode,
    /// The clock: `"tsc"` or `"monotonic"`.
    pub clock: String,
    /// From the profiler's start to its finish, in nanoseconds.
    pub duration_ns: u64,
    /// The profiled performance variables.
    pub columns: Vec<ColumnMeta>,
    /// The call tree: `nodes[0]` is the root region, a parent comes before its children.
    pub nodes: Vec<NodeData>,
    /// Per-element totals of the handles with several elements.
    pub elements: Vec<ElementData>,
    /// The performance variables not profiled, and why.
    pub skipped: Vec<SkippedData>,
    /// The event types counted, in [`NodeData::events`] order.
    pub event_types: Vec<String>,
    /// What the engine wants the reader to know (mismatched region ends, failed reads, ...).
    pub notes: Vec<String>,
}

/// A profiled performance variable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnMeta {
    /// Its index on this rank.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its class in short lowercase: `"counter"`, `"highwatermark"`, ...
    pub class: String,
    /// The C name of its datatype (`"MPI_UNSIGNED_LONG_LONG"`).
    pub datatype: String,
    /// The C name of the kind of object it is bound to (`"MPI_T_BIND_NO_OBJECT"`).
    pub bind: String,
    /// Its verbosity (`"USER_BASIC"`).
    pub verbosity: String,
    /// Its description.
    pub description: String,
    /// The derived metric of its class.
    pub metric: MetricKind,
    /// Handles allocated for it over the run (one per bound object).
    pub handles: usize,
    /// Whether it had to be started (not continuous) and was.
    pub started: bool,
}

/// The derived metric of a class (Caliper's MPIT service, "PVAR classes" to "Querying and storing PVARs"): which [`MetricData`] variant a column's
/// node metrics are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricKind {
    /// Counter, aggregate, timer: the sum of the deltas.
    Delta,
    /// High or low watermark: how often and how much it moved.
    Watermark,
    /// Level, size, percentage: statistics of the samples.
    Samples,
    /// State, generic: the last value.
    Raw,
}

impl MetricKind {
    /// Its name in the model (`"delta"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Delta => "delta",
            MetricKind::Watermark => "watermark",
            MetricKind::Samples => "samples",
            MetricKind::Raw => "raw",
        }
    }
}

impl From<DerivedMetric> for MetricKind {
    fn from(m: DerivedMetric) -> MetricKind {
        match m {
            DerivedMetric::Delta => MetricKind::Delta,
            DerivedMetric::WatermarkChange => MetricKind::Watermark,
            DerivedMetric::Sampled => MetricKind::Samples,
            DerivedMetric::Raw => MetricKind::Raw,
        }
    }
}

/// Region or MPI function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A program region.
    Region,
    /// An MPI function called in the parent region.
    Function,
}

impl Kind {
    /// `"region"` or `"function"`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Region => "region",
            Kind::Function => "function",
        }
    }
}

impl From<NodeKind> for Kind {
    fn from(k: NodeKind) -> Kind {
        match k {
            NodeKind::Region => Kind::Region,
            NodeKind::Function => Kind::Function,
        }
    }
}

/// A node of one rank's call tree with its exclusive metrics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeData {
    /// The parent's index in [`RankProfile::nodes`] (`None` for the root).
    pub parent: Option<usize>,
    /// Region or function name.
    pub name: String,
    /// Region or MPI function.
    pub kind: Kind,
    /// Times entered (regions) or called (functions).
    pub calls: u64,
    /// Inclusive time in nanoseconds: measured, or estimated from the `timed_calls` of the
    /// calls where fewer were timed (short MPI calls in region mode).
    pub time_ns: u64,
    /// Calls whose time was measured (absent in older files: all of them).
    #[serde(default = "all_timed")]
    pub timed_calls: u64,
    /// Per [`RankProfile::columns`] entry: what the variable did while this node was innermost.
    pub metrics: Vec<MetricData>,
    /// Per [`RankProfile::event_types`] entry: instances raised while this node was innermost.
    pub events: Vec<u64>,
}

/// `timed_calls` of a file that lacks it: every call was timed.
fn all_timed() -> u64 {
    u64::MAX
}

/// What one variable did while a node was innermost: the engine's [`Metric`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "metric", rename_all = "lowercase")]
pub enum MetricData {
    /// Counter, aggregate, timer: the sum of the deltas.
    Delta {
        /// Sum of the deltas.
        #[serde(with = "any_float")]
        sum: f64,
    },
    /// High or low watermark: how often and how much it moved, and its last value.
    Watermark {
        /// Number of samples at which it moved.
        changes: u64,
        /// Cumulative amount it moved.
        #[serde(with = "any_float")]
        amount: f64,
        /// The last value read.
        #[serde(with = "opt_float")]
        last: Option<f64>,
    },
    /// Level, size, percentage: statistics of the samples.
    Samples {
        /// Number of samples.
        count: u64,
        /// Smallest sample (`inf` without samples).
        #[serde(with = "any_float")]
        min: f64,
        /// Largest sample (`-inf` without samples).
        #[serde(with = "any_float")]
        max: f64,
        /// Sum of the samples.
        #[serde(with = "any_float")]
        sum: f64,
    },
    /// State, generic: the last value read.
    Raw {
        /// The last value read.
        #[serde(with = "opt_float")]
        last: Option<f64>,
    },
}

impl MetricData {
    /// Which derived metric this is.
    pub fn kind(&self) -> MetricKind {
        match self {
            MetricData::Delta { .. } => MetricKind::Delta,
            MetricData::Watermark { .. } => MetricKind::Watermark,
            MetricData::Samples { .. } => MetricKind::Samples,
            MetricData::Raw { .. } => MetricKind::Raw,
        }
    }

    /// The value of a node where nothing happened.
    pub fn zero(kind: MetricKind) -> MetricData {
        match kind {
            MetricKind::Delta => MetricData::Delta { sum: 0.0 },
            MetricKind::Watermark => MetricData::Watermark {
                changes: 0,
                amount: 0.0,
                last: None,
            },
            MetricKind::Samples => MetricData::Samples {
                count: 0,
                min: f64::INFINITY,
                max: f64::NEG_INFINITY,
                sum: 0.0,
            },
            MetricKind::Raw => MetricData::Raw { last: None },
        }
    }
}

impl From<&Metric> for MetricData {
    fn from(m: &Metric) -> MetricData {
        match *m {
            Metric::Delta { sum } => MetricData::Delta { sum },
            Metric::Watermark {
                changes,
                amount,
                last,
            } => MetricData::Watermark {
                changes,
                amount,
                last,
            },
            Metric::Samples {
                count,
                min,
                max,
                sum,
            } => MetricData::Samples {
                count,
                min,
                max,
                sum,
            },
            Metric::Raw { last } => MetricData::Raw { last },
        }
    }
}

/// The elements of one handle of several elements over the whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElementData {
    /// The variable's index in [`RankProfile::columns`].
    pub column: usize,
    /// The label of the object the handle was bound to (`"MPI_COMM_WORLD"`; `""` unbound).
    pub object: String,
    /// Per element: the delta over the run for counters, aggregates and timers, the last value
    /// otherwise.
    #[serde(with = "float_vec")]
    pub values: Vec<f64>,
}

/// A performance variable that was not profiled, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedData {
    /// Its index.
    pub index: usize,
    /// Its name, if `MPI_T_pvar_get_info` gave one.
    pub name: Option<String>,
    /// Why (a hole, the filter, a refused allocation or start).
    pub reason: String,
}

impl RankProfile {
    /// The engine's report of one rank with who measured it: `rank` of `size` in
    /// `MPI_COMM_WORLD`, `library` the first line of `MPI_Get_library_version`, the host and
    /// the program's `argv`.
    pub fn from_report(
        report: &Report,
        rank: usize,
        size: usize,
        library: &str,
        hostname: &str,
        program: &[String],
    ) -> RankProfile {
        RankProfile {
            rank,
            size,
            library: library
                .lines()
                .next()
                .unwrap_or("")
                .split(|c: char| c.is_whitespace() || c.is_control())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" "),
            hostname: hostname.to_owned(),
            program: program.to_vec(),
            root: report.root.clone(),
            mode: report.mode,
            clock: report.clock.to_owned(),
            duration_ns: report.duration_ns,
            columns: report
                .columns
                .iter()
                .map(|c| ColumnMeta {
                    index: c.info.index,
                    name: c.info.name.to_string_lossy().into_owned(),
                    class: c.info.class.name().to_ascii_lowercase(),
                    datatype: c.info.datatype.c_name().to_owned(),
                    bind: c.info.bind.c_name().to_owned(),
                    verbosity: c.info.verbosity.name().to_owned(),
                    description: c.info.description.to_string_lossy().into_owned(),
                    metric: c.metric.into(),
                    handles: c.handles,
                    started: c.started,
                })
                .collect(),
            nodes: report
                .nodes
                .iter()
                .map(|n| NodeData {
                    parent: n.parent,
                    name: n.name.clone(),
                    kind: n.kind.into(),
                    calls: n.calls,
                    time_ns: n.time_ns,
                    timed_calls: n.timed_calls,
                    metrics: n.metrics.iter().map(MetricData::from).collect(),
                    events: n.events.clone(),
                })
                .collect(),
            elements: report
                .elements
                .iter()
                .map(|e| ElementData {
                    column: e.column,
                    object: e.object.clone(),
                    values: e.values.clone(),
                })
                .collect(),
            skipped: report
                .skipped
                .iter()
                .map(|s| SkippedData {
                    index: s.index,
                    name: s.name.clone(),
                    reason: s.reason.clone(),
                })
                .collect(),
            event_types: report.event_types.clone(),
            notes: report.notes.clone(),
        }
    }

    /// How many performance variables this rank saw: the distinct indices of the profiled
    /// and the skipped ones (a variable whose handle for one object was refused is both).
    pub fn pvars_total(&self) -> usize {
        let mut seen: Vec<usize> = self.columns.iter().map(|c| c.index).collect();
        seen.extend(self.skipped.iter().map(|s| s.index));
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survives_json_with_infinities_and_nan() {
        let p = RankProfile {
            rank: 1,
            size: 2,
            library: "Open MPI v5.0.11".into(),
            hostname: "h".into(),
            program: vec!["./a".into(), "x".into()],
            root: "main".into(),
            mode: Mode::Call,
            clock: "tsc".into(),
            duration_ns: 42,
            columns: vec![],
            nodes: vec![NodeData {
                parent: None,
                name: "main".into(),
                kind: Kind::Region,
                calls: 1,
                time_ns: 42,
                timed_calls: 1,
                metrics: vec![
                    MetricData::zero(MetricKind::Samples),
                    MetricData::Raw { last: Some(3.5) },
                    MetricData::Watermark {
                        changes: 1,
                        amount: 2.0,
                        last: None,
                    },
                ],
                events: vec![7],
            }],
            elements: vec![ElementData {
                column: 0,
                object: "MPI_COMM_WORLD".into(),
                values: vec![1.0, f64::NEG_INFINITY],
            }],
            skipped: vec![],
            event_types: vec!["e".into()],
            notes: vec![],
        };
        let text = serde_json::to_string(&p).unwrap();
        assert!(text.contains(r#""mode":"call""#), "{text}");
        assert!(text.contains(r#""min":"inf""#), "{text}");
        assert!(text.contains(r#"{"metric":"raw","last":3.5}"#), "{text}");
        assert_eq!(serde_json::from_str::<RankProfile>(&text).unwrap(), p);
        let nan = MetricData::Delta { sum: f64::NAN };
        let back: MetricData = serde_json::from_str(&serde_json::to_string(&nan).unwrap()).unwrap();
        assert!(matches!(back, MetricData::Delta { sum } if sum.is_nan()));
    }
}
