//! `mpit-list --json`: one document, a pure function of a [`Listing`] and the filters.
//!
//! The document's types derive `Serialize`; their fields are declared in alphabetical order,
//! the order of the keys since the tool's first JSON (built with `serde_json::json!`, whose
//! maps sort their keys).

use std::collections::HashSet;

use mpit_safe::{Family, Value};
use serde::Serialize;

use super::filter::Filters;
use super::model::{Cvar, Enum, EventType, Hole, Listing, Pvar, Reading, Source, Variable};
use super::tree::View;

/// The `--json` document of `listing` through `filters`, pretty-printed, with a final newline.
pub fn render(listing: &Listing, filters: &Filters) -> String {
    crate::serde_util::pretty_json(&Document::new(listing, filters))
}

/// The whole document.
#[derive(Serialize)]
struct Document<'a> {
    categories: Vec<CategoryJson<'a>>,
    counts: CountsJson,
    cvars: Vec<VarJson<'a>>,
    enums: Vec<EnumJson<'a>>,
    errors: &'a [String],
    events: EventsJson<'a>,
    filters: FiltersJson<'a>,
    holes: Vec<&'a Hole>,
    implementation: &'a str,
    library: &'a str,
    library_version: Option<&'a str>,
    mpi_init: bool,
    pvars: Vec<VarJson<'a>>,
    thread_level: &'a str,
    uncategorized: Uncategorized,
    version: &'a str,
}

#[derive(Serialize)]
struct CountsJson {
    categories: Option<usize>,
    cvars: Option<usize>,
    holes: usize,
    pvars: Option<usize>,
}

#[derive(Serialize)]
struct FiltersJson<'a> {
    bind: Option<&'static str>,
    class: Option<&'static str>,
    holes: &'static str,
    name: Option<&'a str>,
    verbosity: Option<&'static str>,
}

#[derive(Serialize)]
struct Uncategorized {
    cvars: Vec<usize>,
    pvars: Vec<usize>,
}

#[derive(Serialize)]
struct CategoryJson<'a> {
    categories: Vec<usize>,
    cvars: Vec<usize>,
    description: &'a str,
    events: Option<&'a [usize]>,
    index: usize,
    name: &'a str,
    pvars: Vec<usize>,
    root: bool,
}

#[derive(Serialize)]
struct EnumJson<'a> {
    items: Vec<ItemJson<'a>>,
    name: &'a str,
    used_by: Vec<String>,
}

#[derive(Serialize)]
struct ItemJson<'a> {
    name: &'a str,
    value: i32,
}

#[derive(Serialize)]
struct EventsJson<'a> {
    event_api: bool,
    event_types: Vec<EventTypeJson<'a>>,
    sources: Vec<SourceJson<'a>>,
}

#[derive(Serialize)]
struct EventTypeJson<'a> {
    bind: &'static str,
    description: &'a str,
    elements: Vec<ElementJson>,
    #[serde(rename = "enum")]
    enumtype: Option<&'a str>,
    hints: &'a str,
    index: usize,
    name: &'a str,
    verbosity: &'static str,
}

#[derive(Serialize)]
struct ElementJson {
    datatype: &'static str,
    displacement: isize,
}

#[derive(Serialize)]
struct SourceJson<'a> {
    description: &'a str,
    hints: &'a str,
    index: usize,
    max_ticks: u64,
    name: &'a str,
    ordering: String,
    ticks_per_second: u64,
}

/// A control or performance variable: the fields of one kind only are `None` (and left out) for
/// the other.
#[derive(Serialize)]
struct VarJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    atomic: Option<bool>,
    bind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    bound_to: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    class: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    continuous: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<usize>,
    datatype: &'static str,
    description: &'a str,
    #[serde(rename = "enum")]
    enumtype: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    env: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    index: usize,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    readonly: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_broken: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    started: Option<bool>,
    value: Option<OneOrMany<Scalar<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value_item: Option<OneOrMany<Option<&'a str>>>,
    verbosity: &'static str,
}

/// One element as a scalar, several (or none) as an array.
#[derive(Serialize)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    fn of(mut v: Vec<T>) -> Self {
        if v.len() == 1 {
            OneOrMany::One(v.remove(0))
        } else {
            OneOrMany::Many(v)
        }
    }
}

/// A value as JSON has it: numbers exact, `_Bool` as a boolean, characters and bytes as
/// their text, NaN and infinities (which JSON lacks) as text.
#[derive(Serialize)]
#[serde(untagged)]
enum Scalar<'a> {
    Bool(bool),
    Signed(i64),
    Unsigned(u64),
    Float(f64),
    Text(String),
    Str(&'a str),
}

impl From<&Value> for Scalar<'_> {
    fn from(v: &Value) -> Self {
        let float = |x: f64| {
            if x.is_finite() {
                Scalar::Float(x)
            } else {
                Scalar::Text(x.to_string())
            }
        };
        match *v {
            Value::Double(x) => float(x),
            Value::Float(x) => float(f64::from(x)),
            Value::CBool(b) => Scalar::Bool(b),
            Value::Char(_) | Value::WChar(_) | Value::Byte(_) => Scalar::Text(v.to_string()),
            _ => match (v.as_i64(), v.as_u64()) {
                (Some(i), _) => Scalar::Signed(i),
                (None, Some(u)) => Scalar::Unsigned(u),
                (None, None) => Scalar::Text(v.to_string()),
            },
        }
    }
}

impl<'a> VarJson<'a> {
    /// The fields both kinds have; `value` (a scalar for one element, else an array; `null` if
    /// not read), `count`, `value_item` (enumeration item names), `bound_to` or `error` from
    /// the reading, and `object`, what a bound variable was read for.
    fn common(v: &'a Variable) -> Self {
        let mut j = VarJson {
            atomic: None,
            bind: v.bind.name(),
            bound_to: None,
            class: None,
            continuous: None,
            count: None,
            datatype: v.datatype.c_name(),
            description: &v.description,
            enumtype: enum_name(&v.enumtype),
            env: None,
            error: None,
            index: v.index,
            name: &v.name,
            object: v.object.as_deref(),
            readonly: None,
            rule_broken: None,
            scope: None,
            started: None,
            value: None,
            value_item: None,
            verbosity: v.verbosity.name(),
        };
        match &v.reading {
            Reading::Values(vs) => {
                j.count = Some(vs.len());
                j.value = Some(OneOrMany::of(vs.iter().map(Scalar::from).collect()));
                j.value_item = v.enumtype.as_ref().map(|e| {
                    OneOrMany::of(
                        vs.iter()
                            .map(|v| match v {
                                Value::Int(i) => e.name_of(*i),
                                _ => None,
                            })
                            .collect(),
                    )
                });
            }
            Reading::Text(s) => j.value = Some(OneOrMany::One(Scalar::Str(s))),
            Reading::Bound(b) => j.bound_to = b.object_type(),
            Reading::Failed(err) => j.error = Some(err),
        }
        j
    }

    fn cvar(v: &'a Cvar, family: Family) -> Self {
        VarJson {
            env: super::env::variable(family, v),
            scope: Some(v.scope.name()),
            ..VarJson::common(&v.var)
        }
    }

    fn pvar(v: &'a Pvar) -> Self {
        VarJson {
            atomic: Some(v.atomic),
            class: Some(v.class.name()),
            continuous: Some(v.continuous),
            readonly: Some(v.readonly),
            rule_broken: v.rule_broken.as_deref(),
            started: Some(v.started),
            ..VarJson::common(&v.var)
        }
    }
}

fn enum_name(e: &Option<Enum>) -> Option<&str> {
    e.as_ref().map(|e| e.name.as_str())
}

impl<'a> EventTypeJson<'a> {
    fn new(e: &'a EventType) -> Self {
        EventTypeJson {
            bind: e.bind.name(),
            description: &e.description,
            elements: e
                .elements
                .iter()
                .map(|el| ElementJson {
                    datatype: el.datatype.c_name(),
                    displacement: el.displacement,
                })
                .collect(),
            enumtype: enum_name(&e.enumtype),
            hints: &e.hints,
            index: e.index,
            name: &e.name,
            verbosity: e.verbosity.name(),
        }
    }
}

impl<'a> SourceJson<'a> {
    fn new(s: &'a Source) -> Self {
        SourceJson {
            description: &s.description,
            hints: &s.hints,
            index: s.index,
            max_ticks: s.max_ticks,
            name: &s.name,
            ordering: format!("{:?}", s.ordering),
            ticks_per_second: s.ticks_per_second,
        }
    }
}

impl<'a> Document<'a> {
    fn new(listing: &'a Listing, filters: &'a Filters) -> Self {
        let view = View::new(listing, filters);
        let family = super::env::family(listing);
        let filtered = filters.any();
        let roots: HashSet<usize> = view.roots.iter().copied().collect();
        let keep = |list: &[usize], shown: &dyn Fn(&usize) -> bool| -> Vec<usize> {
            list.iter()
                .copied()
                .filter(|i| !filtered || shown(i))
                .collect()
        };
        let categories = listing
            .categories
            .iter()
            .filter(|c| view.visible.contains(&c.index))
            .map(|c| CategoryJson {
                categories: keep(&c.categories, &|i| view.visible.contains(i)),
                cvars: keep(&c.cvars, &|i| view.cvar_at.contains_key(i)),
                description: &c.description,
                events: c.num_events.map(|_| c.events.as_slice()),
                index: c.index,
                name: &c.name,
                pvars: keep(&c.pvars, &|i| view.pvar_at.contains_key(i)),
                root: roots.contains(&c.index),
            })
            .collect();
        Document {
            categories,
            counts: CountsJson {
                categories: listing.counts.categories,
                cvars: listing.counts.cvars,
                holes: listing.holes.len(),
                pvars: listing.counts.pvars,
            },
            cvars: view
                .shown_cvars()
                .map(|v| VarJson::cvar(v, family))
                .collect(),
            enums: view
                .enums()
                .into_iter()
                .map(|(e, used_by)| EnumJson {
                    items: e
                        .items
                        .iter()
                        .map(|i| ItemJson {
                            name: &i.name,
                            value: i.value,
                        })
                        .collect(),
                    name: &e.name,
                    used_by,
                })
                .collect(),
            errors: &listing.errors,
            events: EventsJson {
                event_api: listing.event_api,
                event_types: listing.events.iter().map(EventTypeJson::new).collect(),
                sources: listing.sources.iter().map(SourceJson::new).collect(),
            },
            filters: FiltersJson {
                bind: filters.bind.map(|b| b.name()),
                class: filters.class.map(|c| c.name()),
                holes: filters.holes.name(),
                name: filters.name.as_deref(),
                verbosity: filters.verbosity.map(|v| v.name()),
            },
            holes: listing
                .holes
                .iter()
                .filter(|h| filters.hole_shown(h))
                .collect(),
            implementation: &listing.implementation,
            library: &listing.library,
            library_version: listing.library_version.as_deref(),
            mpi_init: listing.mpi_init,
            pvars: view.shown_pvars().map(VarJson::pvar).collect(),
            thread_level: &listing.thread_level,
            uncategorized: Uncategorized {
                cvars: view
                    .uncategorized_cvars
                    .iter()
                    .map(|v| v.var.index)
                    .collect(),
                pvars: view
                    .uncategorized_pvars
                    .iter()
                    .map(|v| v.var.index)
                    .collect(),
            },
            version: &listing.version,
        }
    }
}
