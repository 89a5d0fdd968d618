//! What `mpit-list` reads from MPI_T, before any filter: the input of its text and JSON
//! renderings, recorded by `mpit-list --model` and replayed by the golden tests.
//!
//! Rows convert from `mpit-safe`'s records ([`CvarInfo`], [`PvarInfo`], ...); strings are kept
//! as the tool prints them (invalid UTF-8 replaced), the C constant families by their names.

use mpit_safe::{
    Bind, CategoryInfo, CvarInfo, Datatype, EnumInfo, EventTypeInfo, PvarClass, PvarInfo, Scope,
    SourceInfo, SourceOrder, Value, Verbosity,
};
use serde::{Deserialize, Serialize};

use crate::serde_util::by_name;

/// Everything one `mpit-list` run read from MPI_T, before filtering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    /// The implementation the header names (`mpit_sys::IMPLEMENTATION`).
    pub implementation: String,
    /// Its version from the header (`mpit_sys::IMPLEMENTATION_VERSION`).
    pub version: String,
    /// The loaded library in its own words (`mpit_safe::implementation()`).
    pub library: String,
    /// `MPI_Get_library_version`, if it answered.
    pub library_version: Option<String>,
    /// Whether the header has the MPI-4 event API (`mpit_sys::HAS_EVENTS`).
    pub event_api: bool,
    /// Whether MPI was initialised when the listing was read.
    pub mpi_init: bool,
    /// The thread level MPI_T provided.
    pub thread_level: String,
    /// The counts the implementation reported (`None`: the count query failed).
    pub counts: Counts,
    /// The control variables that could be queried, in index order.
    pub cvars: Vec<Cvar>,
    /// The performance variables that could be queried, in index order.
    pub pvars: Vec<Pvar>,
    /// The categories that could be queried, in index order.
    pub categories: Vec<Category>,
    /// The event types (empty without the event API).
    pub events: Vec<EventType>,
    /// The event sources (empty without the event API).
    pub sources: Vec<Source>,
    /// Indices below a count whose query failed.
    pub holes: Vec<Hole>,
    /// Failures of a whole listing (e.g. a count query).
    pub errors: Vec<String>,
}

/// The counts `MPI_T_*_get_num` reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Control variables.
    pub cvars: Option<usize>,
    /// Performance variables.
    pub pvars: Option<usize>,
    /// Categories.
    pub categories: Option<usize>,
}

/// What reading a variable gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// The elements (any count, also zero or more than one).
    Values(#[serde(with = "values")] Vec<Value>),
    /// An `MPI_CHAR` variable, as a string.
    Text(String),
    /// Bound to an object: not read.
    Bound(#[serde(with = "by_name")] Bind),
    /// Allocating the handle or reading failed.
    Failed(String),
}

/// What reading a variable gave, and the object it was read for, if any.
pub type Read = (Reading, Option<String>);

/// An enumeration a variable uses (`MPI_T_enum_get_info`, `MPI_T_enum_get_item`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enum {
    /// Its name.
    pub name: String,
    /// Its items, in item order.
    pub items: Vec<EnumItem>,
}

/// One item of an [`Enum`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumItem {
    /// The item's name.
    pub name: String,
    /// The value a variable takes for it.
    pub value: i32,
}

impl Enum {
    /// The name of the item with `value`.
    pub fn name_of(&self, value: i32) -> Option<&str> {
        self.items
            .iter()
            .find(|i| i.value == value)
            .map(|i| i.name.as_str())
    }
}

impl From<&EnumInfo> for Enum {
    fn from(e: &EnumInfo) -> Enum {
        Enum {
            name: e.name.to_string(),
            items: e
                .items
                .iter()
                .map(|i| EnumItem {
                    name: i.name.to_string(),
                    value: i.value,
                })
                .collect(),
        }
    }
}

/// What control and performance variables have in common, and what reading one gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    /// Its index.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// The kind of object it is bound to.
    #[serde(with = "by_name")]
    pub bind: Bind,
    /// The datatype of its elements.
    #[serde(with = "by_name")]
    pub datatype: Datatype,
    /// Its verbosity.
    #[serde(with = "by_name")]
    pub verbosity: Verbosity,
    /// The enumeration of its values, if any.
    pub enumtype: Option<Enum>,
    /// Its description.
    pub description: String,
    /// What reading it gave.
    pub reading: Reading,
    /// The object a bound variable was read for (`MPI_COMM_WORLD`); absent for unbound
    /// variables and for bound ones that were not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
}

/// A control variable and its value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cvar {
    /// What all variables have.
    #[serde(flatten)]
    pub var: Variable,
    /// When and how it may be written.
    #[serde(with = "by_name")]
    pub scope: Scope,
}

impl Cvar {
    /// The row of `info` with what reading it gave (for `object`, if it was read for one).
    pub fn new(info: &CvarInfo, (reading, object): Read) -> Cvar {
        Cvar {
            var: Variable {
                index: info.index,
                name: info.name.to_string(),
                bind: info.bind,
                datatype: info.datatype,
                verbosity: info.verbosity,
                enumtype: info.enumtype.as_deref().map(Enum::from),
                description: info.description.to_string(),
                reading,
                object,
            },
            scope: info.scope,
        }
    }
}

/// A performance variable, its value and what the listing did to read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pvar {
    /// What all variables have.
    #[serde(flatten)]
    pub var: Variable,
    /// Its class.
    #[serde(with = "by_name")]
    pub class: PvarClass,
    /// Whether it can only be read.
    pub readonly: bool,
    /// Whether it is always active.
    pub continuous: bool,
    /// Whether it can be read and reset atomically.
    pub atomic: bool,
    /// A non-continuous variable this listing started in its session before reading it
    /// (reads of a stopped variable are refused by some implementations: MPICH answers
    /// `MPI_T_ERR_INVALID`).
    pub started: bool,
    /// What the values read break of their class's rules (MPI-4.1 §16.3.7), if anything:
    /// shown as a flag, not as a fact.
    pub rule_broken: Option<String>,
}

impl Pvar {
    /// The row of `info` with what reading it gave (for `object`, if it was read for one) and
    /// whether the listing started it.
    pub fn new(info: &PvarInfo, (reading, object): Read, started: bool) -> Pvar {
        Pvar {
            rule_broken: rule_broken(info.class, &reading),
            var: Variable {
                index: info.index,
                name: info.name.to_string(),
                bind: info.bind,
                datatype: info.datatype,
                verbosity: info.verbosity,
                enumtype: info.enumtype.as_deref().map(Enum::from),
                description: info.description.to_string(),
                reading,
                object,
            },
            class: info.class,
            readonly: info.readonly,
            continuous: info.continuous,
            atomic: info.atomic,
            started,
        }
    }
}

/// The rule of its class that a value read breaks (MPI-4.1 §16.3.7), if any.
fn rule_broken(class: PvarClass, reading: &Reading) -> Option<String> {
    let Reading::Values(values) = reading else {
        return None;
    };
    let bad = values.iter().find(|v| !class.value_conforms(v))?;
    let why = if !class.allows(bad.datatype()) {
        format!("{} is not a datatype of the class", bad.datatype())
    } else if class == PvarClass::Percentage {
        format!("{bad} is outside [0, 1]")
    } else {
        format!("{bad} is negative or not finite")
    };
    Some(format!("breaks the {class} class's rules: {why}"))
}

/// A category and its members, as the implementation lists them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Category {
    /// Its index.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Number of control variables, as declared.
    pub num_cvars: usize,
    /// Number of performance variables, as declared.
    pub num_pvars: usize,
    /// Number of subcategories, as declared.
    pub num_categories: usize,
    /// Number of event types; `None` without the event API.
    pub num_events: Option<usize>,
    /// Indices of its control variables.
    pub cvars: Vec<usize>,
    /// Indices of its performance variables.
    pub pvars: Vec<usize>,
    /// Indices of its subcategories.
    pub categories: Vec<usize>,
    /// Indices of its event types.
    pub events: Vec<usize>,
}

impl From<&CategoryInfo> for Category {
    fn from(c: &CategoryInfo) -> Category {
        Category {
            index: c.index,
            name: c.name.to_string(),
            description: c.description.to_string(),
            num_cvars: c.num_cvars,
            num_pvars: c.num_pvars,
            num_categories: c.num_categories,
            num_events: c.num_events,
            cvars: c.cvars.clone(),
            pvars: c.pvars.clone(),
            categories: c.categories.clone(),
            events: c.events.clone(),
        }
    }
}

/// One element of an event type's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventElement {
    /// Its datatype.
    #[serde(with = "by_name")]
    pub datatype: Datatype,
    /// Its byte offset in the event's buffer.
    pub displacement: isize,
}

/// An event type (MPI-4) with its info hints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventType {
    /// Its index.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its verbosity.
    #[serde(with = "by_name")]
    pub verbosity: Verbosity,
    /// The kind of object a registration is bound to.
    #[serde(with = "by_name")]
    pub bind: Bind,
    /// Its data's elements.
    pub elements: Vec<EventElement>,
    /// The enumeration of its elements, if any.
    pub enumtype: Option<Enum>,
    /// Its info hints as `{key=value, ...}` (empty when there are none).
    pub hints: String,
    /// Its description.
    pub description: String,
}

impl EventType {
    /// The row of `e` with its hints as text.
    pub fn new(e: &EventTypeInfo, hints: String) -> EventType {
        EventType {
            index: e.index,
            name: e.name.to_string(),
            verbosity: e.verbosity,
            bind: e.bind,
            elements: e
                .elements
                .iter()
                .map(|el| EventElement {
                    datatype: el.datatype,
                    displacement: el.displacement,
                })
                .collect(),
            enumtype: e.enumtype.as_deref().map(Enum::from),
            hints,
            description: e.description.to_string(),
        }
    }
}

/// An event source (MPI-4) with its info hints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Its index.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Whether its events come in order.
    #[serde(with = "by_name")]
    pub ordering: SourceOrder,
    /// Its timer's rate.
    pub ticks_per_second: u64,
    /// Its timer's largest value.
    pub max_ticks: u64,
    /// Its info hints as `{key=value, ...}` (empty when there are none).
    pub hints: String,
    /// Its description.
    pub description: String,
}

impl Source {
    /// The row of `s` with its hints as text.
    pub fn new(s: &SourceInfo, hints: String) -> Source {
        Source {
            index: s.index,
            name: s.name.to_string(),
            ordering: s.ordering,
            ticks_per_second: s.ticks_per_second,
            max_ticks: s.max_ticks,
            hints,
            description: s.description.to_string(),
        }
    }
}

/// An index below a reported count whose query failed (fields in the order of the JSON
/// document's keys, which serialises these rows as they are).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hole {
    /// The error the query returned.
    pub error: String,
    /// The index.
    pub index: usize,
    /// `cvar`, `pvar`, `category`, `event type` or `source`.
    pub kind: String,
}

/// [`Value`]s kept with their datatype: `{"Int": 3}`, `{"Double": 0.5}`, `{"CBool": true}`.
mod values {
    use std::ffi::{
        c_double, c_float, c_int, c_long, c_longlong, c_schar, c_short, c_uchar, c_uint, c_ulong,
        c_ulonglong, c_ushort,
    };

    use mpit_safe::{CWchar, MpiAint, MpiCount, MpiOffset, Value};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::serde_util::any_float;

    macro_rules! mirror {
        ($($variant:ident($t:ty) $(with $with:literal)?),+ $(,)?) => {
            /// [`Value`] with serde's derives (the variant names are `Value`'s).
            #[derive(Serialize, Deserialize)]
            enum Repr {
                $($variant($(#[serde(with = $with)])? $t),)+
            }

            impl From<Value> for Repr {
                fn from(v: Value) -> Repr {
                    match v {
                        $(Value::$variant(x) => Repr::$variant(x),)+
                    }
                }
            }

            impl From<Repr> for Value {
                fn from(v: Repr) -> Value {
                    match v {
                        $(Repr::$variant(x) => Value::$variant(x),)+
                    }
                }
            }
        };
    }

    mirror! {
        Int(c_int), Unsigned(c_uint), UnsignedLong(c_ulong), UnsignedLongLong(c_ulonglong),
        Count(MpiCount), Char(u8), Double(c_double) with "any_float", Short(c_short),
        Long(c_long), LongLong(c_longlong), SignedChar(c_schar), UnsignedChar(c_uchar),
        UnsignedShort(c_ushort), Float(c_float) with "any_float", Int8(i8), Int16(i16),
        Int32(i32), Int64(i64), Uint8(u8), Uint16(u16), Uint32(u32), Uint64(u64),
        Aint(MpiAint), Offset(MpiOffset), CBool(bool), WChar(CWchar), Byte(u8),
    }

    pub(super) fn serialize<S: Serializer>(v: &[Value], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|&v| Repr::from(v)))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
        Ok(Vec::<Repr>::deserialize(d)?
            .into_iter()
            .map(Value::from)
            .collect())
    }
}
