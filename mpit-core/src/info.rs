//! Owned records of what the query functions return: control variables
//! (MPI-4.1 §16.3.6), performance variables (§16.3.7), enumerations
//! (§16.3.5), event types and sources (§16.3.8) and categories (§16.3.9).
//!
//! `mpit-safe` fills these from the C calls; an unknown raw constant or
//! datatype handle is an error there, so the records hold this crate's types
//! only. Each record's `validate` lists the standard's rules it breaks, for
//! conformance tests.

use core::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::bind::Bind;
use crate::cvar::Scope;
use crate::datatype::{Datatype, Value};
use crate::error::{Error, Result};
use crate::event::SourceOrder;
use crate::pvar::{PvarClass, Tracker};
use crate::string::MpiString;
use crate::verbosity::Verbosity;

/// A rule of the standard that a record breaks (see the `validate` methods).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// A successful query must return a name of at least length one
    /// (MPI-4.1 §16.3.5–§16.3.9).
    EmptyName,
    /// A control variable's datatype is not one of the seven of
    /// MPI-4.1 §16.3.5.
    DatatypeNotAllowed {
        /// The datatype returned.
        datatype: Datatype,
    },
    /// A performance variable's datatype is not allowed for its class
    /// (MPI-4.1 §16.3.7).
    DatatypeNotAllowedForClass {
        /// The class returned.
        class: PvarClass,
        /// The datatype returned.
        datatype: Datatype,
    },
    /// An enumeration is returned for a variable that is not `MPI_INT`
    /// (MPI-4.1 §16.3.5: enumerations are represented by `MPI_INT`).
    EnumtypeRequiresInt {
        /// The datatype returned.
        datatype: Datatype,
    },
    /// An enumeration has an item with an empty name (MPI-4.1 §16.3.5).
    EmptyItemName {
        /// Index of the item.
        item: usize,
    },
    /// Two items of one enumeration share a name; item names must be unique
    /// within the enumeration (MPI-4.1 §16.3.5).
    DuplicateItemName {
        /// The duplicated name.
        name: MpiString,
    },
    /// A category's declared number of members differs from the members
    /// listed (MPI-4.1 §16.3.9).
    MemberCountMismatch {
        /// Which members: "cvars", "pvars", "categories" or "events".
        what: &'static str,
        /// Number returned by `MPI_T_category_get_info` (or
        /// `MPI_T_category_get_num_events`).
        declared: usize,
        /// Number of indices listed.
        listed: usize,
    },
    /// A category contains itself (MPI-4.1 §16.3.9 forbids it, directly or
    /// transitively; only the direct case is visible in one record).
    CategoryContainsItself,
    /// Event element displacements must start at zero (MPI-4.1 §16.3.8.3).
    FirstDisplacementNotZero {
        /// The first displacement returned.
        displacement: isize,
    },
    /// Event element displacements must be in ascending order and elements
    /// must not overlap (MPI-4.1 §16.3.8.3).
    ElementsOverlap {
        /// Index of the element that starts before the previous one ends.
        element: usize,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::EmptyName => f.write_str("empty name"),
            Violation::DatatypeNotAllowed { datatype } => {
                write!(f, "datatype {datatype} is not allowed for variables")
            }
            Violation::DatatypeNotAllowedForClass { class, datatype } => {
                write!(f, "datatype {datatype} is not allowed for class {class}")
            }
            Violation::EnumtypeRequiresInt { datatype } => {
                write!(
                    f,
                    "enumeration returned for datatype {datatype}, not MPI_INT"
                )
            }
            Violation::EmptyItemName { item } => {
                write!(f, "enumeration item {item} has an empty name")
            }
            Violation::DuplicateItemName { name } => {
                write!(f, "enumeration item name {name:?} is not unique")
            }
            Violation::MemberCountMismatch {
                what,
                declared,
                listed,
            } => write!(f, "category declares {declared} {what} but lists {listed}"),
            Violation::CategoryContainsItself => f.write_str("category contains itself"),
            Violation::FirstDisplacementNotZero { displacement } => {
                write!(
                    f,
                    "first event element displacement is {displacement}, not 0"
                )
            }
            Violation::ElementsOverlap { element } => {
                write!(
                    f,
                    "event element {element} starts before the previous one ends"
                )
            }
        }
    }
}

/// One item of an enumeration (MPI-4.1 §16.3.5, `MPI_T_enum_get_item`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumItem {
    /// The integer value a variable of the enumeration takes.
    pub value: i32,
    /// The item's name.
    pub name: MpiString,
}

/// An enumeration describing the values of an `MPI_INT` variable
/// (MPI-4.1 §16.3.5, `MPI_T_enum_get_info`).
///
/// ```
/// use mpit_core::{EnumInfo, EnumItem, MpiString};
///
/// let e = EnumInfo {
///     name: MpiString::new("protocol").unwrap(),
///     items: vec![
///         EnumItem { value: 0, name: MpiString::new("eager").unwrap() },
///         EnumItem { value: 1, name: MpiString::new("rendezvous").unwrap() },
///     ],
/// };
/// assert_eq!(e.name_of(1).unwrap(), "rendezvous");
/// assert_eq!(e.value_of("eager"), Some(0));
/// assert!(e.validate().is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumInfo {
    /// The enumeration's name.
    pub name: MpiString,
    /// The items, in item-index order.
    pub items: Vec<EnumItem>,
}

impl EnumInfo {
    /// The name of the item with `value`.
    pub fn name_of(&self, value: i32) -> Option<&MpiString> {
        self.items
            .iter()
            .find(|i| i.value == value)
            .map(|i| &i.name)
    }

    /// The value of the item named `name`.
    pub fn value_of(&self, name: &str) -> Option<i32> {
        self.items.iter().find(|i| i.name == name).map(|i| i.value)
    }

    /// The rules of MPI-4.1 §16.3.5 this enumeration breaks.
    pub fn validate(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        if self.name.is_empty() {
            out.push(Violation::EmptyName);
        }
        for (i, item) in self.items.iter().enumerate() {
            if item.name.is_empty() {
                out.push(Violation::EmptyItemName { item: i });
            } else if self.items[..i].iter().any(|o| o.name == item.name) {
                out.push(Violation::DuplicateItemName {
                    name: item.name.clone(),
                });
            }
        }
        out
    }
}

/// Shared checks of a variable's datatype against its enumeration.
fn check_enumtype(datatype: Datatype, enumtype: Option<&EnumInfo>, out: &mut Vec<Violation>) {
    if let Some(e) = enumtype {
        if datatype != Datatype::Int {
            out.push(Violation::EnumtypeRequiresInt { datatype });
        }
        out.extend(e.validate());
    }
}

/// What `MPI_T_cvar_get_info` returns about a control variable
/// (MPI-4.1 §16.3.6).
///
/// The number of elements is not here: it comes from handle allocation
/// (`MPI_T_cvar_handle_alloc`) and may depend on the bound object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CvarInfo {
    /// Index of the variable, in `0..MPI_T_cvar_get_num`.
    pub index: usize,
    /// Name, unique among control variables.
    pub name: MpiString,
    /// Verbosity level.
    pub verbosity: Verbosity,
    /// Datatype of each element.
    pub datatype: Datatype,
    /// The enumeration describing the values, if any (`MPI_INT` only): shared by the records
    /// of one listing that have it (variables often share one; cloning a record does not copy
    /// it).
    pub enumtype: Option<Arc<EnumInfo>>,
    /// Description; empty if the implementation provides none.
    pub description: MpiString,
    /// Kind of object a handle must be bound to.
    pub bind: Bind,
    /// When and how the variable may be written.
    pub scope: Scope,
}

impl CvarInfo {
    /// The rules of MPI-4.1 §16.3.6 this record breaks.
    pub fn validate(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        if self.name.is_empty() {
            out.push(Violation::EmptyName);
        }
        if !self.datatype.is_cvar_pvar_type() {
            out.push(Violation::DatatypeNotAllowed {
                datatype: self.datatype,
            });
        }
        check_enumtype(self.datatype, self.enumtype.as_deref(), &mut out);
        out
    }

    /// The elements that `text` sets this variable to, for a handle of `count` elements (the
    /// count comes from `MPI_T_cvar_handle_alloc`): how a tool sets a control variable given on
    /// its command line or in a file (`mpit_safe`'s `DynCvarHandle::write_str` writes them).
    ///
    /// - `MPI_CHAR`: the text is the string, as is (not trimmed), NUL-padded to `count`.
    /// - With an enumeration: an element is the name of one of its items, as the implementation
    ///   spells it (spaces around it ignored), or a number as for `MPI_INT` (not checked against
    ///   the items: the implementation decides what it accepts).
    /// - Otherwise an element is read by [`Value::parse`] for the variable's datatype.
    /// - A variable of one element takes the whole text as that element; one of any other
    ///   count (other than `MPI_CHAR`) takes exactly `count` elements separated by commas
    ///   (`1, 2, 3`), and one of no element the empty text.
    ///
    /// Errors: those of [`Value::parse`]; [`Error::CountMismatch`] for a number of elements
    /// other than `count` (for a string: `count` against its length with its NUL);
    /// [`Error::InteriorNul`] for a string with a NUL.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mpit_core::*;
    ///
    /// let mut info = CvarInfo {
    ///     index: 0,
    ///     name: MpiString::new("protocol").unwrap(),
    ///     verbosity: Verbosity::USER_BASIC,
    ///     datatype: Datatype::Int,
    ///     enumtype: Some(Arc::new(EnumInfo {
    ///         name: MpiString::new("protocols").unwrap(),
    ///         items: vec![
    ///             EnumItem { value: 0, name: MpiString::new("eager").unwrap() },
    ///             EnumItem { value: 1, name: MpiString::new("rendezvous").unwrap() },
    ///         ],
    ///     })),
    ///     description: MpiString::default(),
    ///     bind: Bind::NoObject,
    ///     scope: Scope::Local,
    /// };
    /// assert_eq!(info.parse_values(1, "rendezvous")?, [Value::Int(1)]);
    /// assert_eq!(info.parse_values(1, "0")?, [Value::Int(0)]);
    /// assert_eq!(info.parse_values(2, "eager, 1")?, [Value::Int(0), Value::Int(1)]);
    /// assert!(matches!(info.parse_values(3, "eager, 1"), Err(Error::CountMismatch(_))));
    /// assert!(matches!(info.parse_values(1, "lazy"), Err(Error::Parse(_))));
    ///
    /// info.enumtype = None;
    /// info.datatype = Datatype::Char;
    /// assert_eq!(
    ///     info.parse_values(3, "hi")?,
    ///     [Value::Char(b'h'), Value::Char(b'i'), Value::Char(0)]
    /// );
    /// assert!(matches!(info.parse_values(2, "hi"), Err(Error::CountMismatch(_))));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn parse_values(&self, count: usize, text: &str) -> Result<Vec<Value>> {
        if self.datatype == Datatype::Char {
            let bytes = MpiString::new(text)?.to_nul_padded(count)?;
            return Ok(bytes.into_iter().map(Value::Char).collect());
        }
        let elements: Vec<&str> = match count {
            1 => vec![text],
            0 if text.trim().is_empty() => Vec::new(),
            _ => text.split(',').collect(),
        };
        if elements.len() != count {
            return Err(Error::count_mismatch(count, elements.len()));
        }
        elements
            .into_iter()
            .map(|e| self.parse_element(e))
            .collect()
    }

    /// One element of [`CvarInfo::parse_values`].
    fn parse_element(&self, text: &str) -> Result<Value> {
        let item = self.enumtype.as_ref().and_then(|e| e.value_of(text.trim()));
        match item {
            Some(v) => Value::from_i64(self.datatype, v.into()),
            None => Value::parse(self.datatype, text),
        }
    }
}

/// What `MPI_T_pvar_get_info` returns about a performance variable
/// (MPI-4.1 §16.3.7).
///
/// As for [`CvarInfo`], the number of elements comes from handle allocation.
///
/// ```
/// use mpit_core::{Bind, Datatype, MpiString, PvarClass, PvarInfo, Verbosity, Violation};
///
/// let mut p = PvarInfo {
///     index: 0,
///     name: MpiString::new("unexpected_recvq_length").unwrap(),
///     verbosity: Verbosity::USER_BASIC,
///     class: PvarClass::Level,
///     datatype: Datatype::UnsignedLongLong,
///     enumtype: None,
///     description: MpiString::default(),
///     bind: Bind::Comm,
///     readonly: true,
///     continuous: true,
///     atomic: false,
/// };
/// assert!(p.validate().is_empty());
/// p.datatype = Datatype::Int;
/// assert_eq!(
///     p.validate(),
///     [Violation::DatatypeNotAllowedForClass { class: PvarClass::Level, datatype: Datatype::Int }]
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PvarInfo {
    /// Index of the variable, in `0..MPI_T_pvar_get_num`.
    pub index: usize,
    /// Name, unique among performance variables of the same class.
    pub name: MpiString,
    /// Verbosity level.
    pub verbosity: Verbosity,
    /// Class: datatypes, starting value and monotonicity.
    pub class: PvarClass,
    /// Datatype of each element.
    pub datatype: Datatype,
    /// The enumeration describing the values, if any (`MPI_INT` only): shared by the records
    /// of one listing that have it (variables often share one; cloning a record does not copy
    /// it).
    pub enumtype: Option<Arc<EnumInfo>>,
    /// Description; empty if the implementation provides none.
    pub description: MpiString,
    /// Kind of object a handle must be bound to.
    pub bind: Bind,
    /// Whether the variable can only be read (not written or reset).
    pub readonly: bool,
    /// Whether the variable is always active (cannot be started or stopped).
    pub continuous: bool,
    /// Whether the variable can be read and reset atomically
    /// (`MPI_T_pvar_readreset`).
    pub atomic: bool,
}

impl PvarInfo {
    /// The rules of MPI-4.1 §16.3.7 this record breaks.
    pub fn validate(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        if self.name.is_empty() {
            out.push(Violation::EmptyName);
        }
        if !self.class.allows(self.datatype) {
            out.push(Violation::DatatypeNotAllowedForClass {
                class: self.class,
                datatype: self.datatype,
            });
        }
        check_enumtype(self.datatype, self.enumtype.as_deref(), &mut out);
        out
    }

    /// A fresh tracker for the derived metric of the variable's class.
    pub fn tracker(&self) -> Tracker {
        Tracker::for_class(self.class)
    }
}

/// What `MPI_T_category_get_info` and the member queries return about a
/// category (MPI-4.1 §16.3.9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CategoryInfo {
    /// Index of the category, in `0..MPI_T_category_get_num`.
    pub index: usize,
    /// Name, unique among categories.
    pub name: MpiString,
    /// Description; empty if the implementation provides none.
    pub description: MpiString,
    /// Number of control variables, as declared.
    pub num_cvars: usize,
    /// Number of performance variables, as declared.
    pub num_pvars: usize,
    /// Number of sub-categories, as declared.
    pub num_categories: usize,
    /// Number of event types (`MPI_T_category_get_num_events`, MPI-4.0);
    /// `None` where the implementation lacks the event interface.
    pub num_events: Option<usize>,
    /// Indices of the control variables (`MPI_T_category_get_cvars`).
    pub cvars: Vec<usize>,
    /// Indices of the performance variables (`MPI_T_category_get_pvars`).
    pub pvars: Vec<usize>,
    /// Indices of the sub-categories (`MPI_T_category_get_categories`).
    pub categories: Vec<usize>,
    /// Indices of the event types (`MPI_T_category_get_events`); empty when
    /// `num_events` is `None`.
    pub events: Vec<usize>,
}

impl CategoryInfo {
    /// The rules of MPI-4.1 §16.3.9 this record breaks.
    pub fn validate(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        if self.name.is_empty() {
            out.push(Violation::EmptyName);
        }
        let counts = [
            ("cvars", self.num_cvars, self.cvars.len()),
            ("pvars", self.num_pvars, self.pvars.len()),
            ("categories", self.num_categories, self.categories.len()),
            ("events", self.num_events.unwrap_or(0), self.events.len()),
        ];
        for (what, declared, listed) in counts {
            if declared != listed {
                out.push(Violation::MemberCountMismatch {
                    what,
                    declared,
                    listed,
                });
            }
        }
        if self.categories.contains(&self.index) {
            out.push(Violation::CategoryContainsItself);
        }
        out
    }
}

/// One element of an event type's data (MPI-4.1 §16.3.8.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventElement {
    /// The element's MPI basic datatype.
    pub datatype: Datatype,
    /// Byte offset of the element in the buffer of `MPI_T_event_copy`.
    pub displacement: isize,
}

/// What `MPI_T_event_get_info` returns about an event type
/// (MPI-4.1 §16.3.8.3).
///
/// ```
/// use mpit_core::{Bind, Datatype, EventElement, EventTypeInfo, MpiString, Value, Verbosity};
///
/// let ev = EventTypeInfo {
///     index: 0,
///     name: MpiString::new("unexp_message_enqueued").unwrap(),
///     verbosity: Verbosity::MPIDEV_BASIC,
///     elements: vec![
///         EventElement { datatype: Datatype::Int, displacement: 0 },
///         EventElement { datatype: Datatype::Int, displacement: 4 },
///     ],
///     enumtype: None,
///     description: MpiString::default(),
///     bind: Bind::NoObject,
/// };
/// assert_eq!(ev.extent(), Some(8));
/// let mut buf = 3i32.to_ne_bytes().to_vec();
/// buf.extend(7i32.to_ne_bytes());
/// assert_eq!(ev.decode(&buf).unwrap(), [Value::Int(3), Value::Int(7)]);
/// assert!(ev.validate().is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventTypeInfo {
    /// Index of the event type, in `0..MPI_T_event_get_num`.
    pub index: usize,
    /// Name, unique among event types.
    pub name: MpiString,
    /// Verbosity level.
    pub verbosity: Verbosity,
    /// Datatypes and displacements of the event data, in element order.
    pub elements: Vec<EventElement>,
    /// An enumeration describing the elements, if any, shared as a variable's is.
    pub enumtype: Option<Arc<EnumInfo>>,
    /// Description; empty if the implementation provides none.
    pub description: MpiString,
    /// Kind of object a registration must be bound to.
    pub bind: Bind,
}

impl EventTypeInfo {
    /// Size in bytes of the buffer `MPI_T_event_copy` needs: the largest
    /// displacement plus element size. `None` for a negative displacement or
    /// on overflow. Zero for an event without data.
    pub fn extent(&self) -> Option<usize> {
        self.elements.iter().try_fold(0usize, |acc, e| {
            let start = usize::try_from(e.displacement).ok()?;
            Some(acc.max(start.checked_add(e.datatype.size())?))
        })
    }

    /// Decodes a buffer filled by `MPI_T_event_copy` into one value per
    /// element.
    ///
    /// Errors: [`Error::SizeMismatch`] if the buffer is shorter than
    /// [`EventTypeInfo::extent`]; [`Error::InvalidValue`] for a negative
    /// displacement or an invalid `_Bool`.
    pub fn decode(&self, buf: &[u8]) -> Result<Vec<Value>> {
        let extent = self
            .extent()
            .ok_or_else(|| Error::invalid_value("negative or overflowing event displacement"))?;
        if buf.len() < extent {
            return Err(Error::size_mismatch(extent, buf.len()));
        }
        self.elements
            .iter()
            .map(|e| {
                // In range: checked through `extent` above.
                let start = e.displacement.unsigned_abs();
                Value::from_ne_bytes(e.datatype, &buf[start..start + e.datatype.size()])
            })
            .collect()
    }

    /// The rules of MPI-4.1 §16.3.8.3 this record breaks.
    pub fn validate(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        if self.name.is_empty() {
            out.push(Violation::EmptyName);
        }
        if let Some(first) = self.elements.first()
            && first.displacement != 0
        {
            out.push(Violation::FirstDisplacementNotZero {
                displacement: first.displacement,
            });
        }
        for (i, pair) in self.elements.windows(2).enumerate() {
            let end = pair[0]
                .displacement
                .saturating_add_unsigned(pair[0].datatype.size());
            if pair[1].displacement < end {
                out.push(Violation::ElementsOverlap { element: i + 1 });
            }
        }
        if let Some(e) = &self.enumtype {
            out.extend(e.validate());
        }
        out
    }
}

/// What `MPI_T_source_get_info` returns about an event source
/// (MPI-4.1 §16.3.8.1).
///
/// The timer values are `MPI_Count` in C; `mpit-safe` rejects negative ones
/// before building this record.
///
/// ```
/// use core::time::Duration;
/// use mpit_core::{MpiString, SourceInfo, SourceOrder};
///
/// let s = SourceInfo {
///     index: 0,
///     name: MpiString::new("RECVQ").unwrap(),
///     description: MpiString::default(),
///     ordering: SourceOrder::Ordered,
///     ticks_per_second: 1_000_000_000,
///     max_ticks: u64::MAX,
/// };
/// assert_eq!(s.ticks_to_duration(1_500_000_000), Some(Duration::from_millis(1500)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceInfo {
    /// Index of the source, in `0..MPI_T_source_get_num`.
    pub index: usize,
    /// Name of the source.
    pub name: MpiString,
    /// Description; empty if the implementation provides none.
    pub description: MpiString,
    /// Whether callbacks of this source come in chronological order.
    pub ordering: SourceOrder,
    /// Ticks per second of the source's timer.
    pub ticks_per_second: u64,
    /// The largest timestamp before the tick count overflows.
    pub max_ticks: u64,
}

impl SourceInfo {
    /// A timestamp or tick difference as a duration; `None` if `ticks`
    /// exceeds `max_ticks` (the counter would have overflowed) or the timer
    /// rate is 0. Exact to the nanosecond (rounded down), without overflow.
    pub fn ticks_to_duration(&self, ticks: u64) -> Option<Duration> {
        if ticks > self.max_ticks || self.ticks_per_second == 0 {
            return None;
        }
        let tps = self.ticks_per_second;
        let secs = ticks / tps;
        let rem = u128::from(ticks % tps);
        // rem < tps, so nanos < 1e9.
        let nanos = (rem * 1_000_000_000 / u128::from(tps)) as u32;
        Some(Duration::new(secs, nanos))
    }
}
