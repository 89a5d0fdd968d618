//! The records a visit shows ([`CvarInfoRef`], [`PvarInfoRef`], [`CategoryInfoRef`]):
//! borrowed from the buffers of the visit for one call of the visitor, each field decoded when
//! asked for, and a category's member lists as [`Members`].

#![forbid(unsafe_code)]

use std::ffi::c_int;
use std::fmt;
use std::sync::Arc;

use mpit_core::{
    Bind, CategoryInfo, CvarInfo, Datatype, EnumInfo, MpiStr, PvarClass, PvarInfo, Result, Scope,
    Verbosity,
};

use super::scratch::Resolved;
use crate::ffi::{CvarQuery, PvarQuery};
#[cfg(doc)]
use crate::init::Mpit;
use crate::raw::RawConstant;

/// What `MPI_T_cvar_get_info` says about a control variable, borrowed for the time of one call
/// of the visitor of [`Mpit::visit_cvars`]: the fields of [`CvarInfo`], each decoded when asked
/// for, so that a visit costs what MPI's calls cost and what the visitor reads (a C loop over
/// `MPI_T_cvar_get_info` with fixed buffers decodes nothing it does not look at either). The
/// name and the description are in the buffers of the visit; the enumeration is resolved on
/// demand ([`CvarInfoRef::enumtype`]). A constant outside the standard's is the error of its
/// accessor (and of [`CvarInfoRef::to_owned`], which makes it a hole of [`Mpit::cvars`]).
///
/// MPI-4.1 §16.3.6, `MPI_T_cvar_get_info`.
#[doc(alias = "MPI_T_cvar_get_info")]
pub struct CvarInfoRef<'a> {
    pub(super) index: usize,
    /// The bytes before the NUL MPI reported ([`MpiStr::until_nul`] on access).
    pub(super) name: &'a [u8],
    pub(super) description: &'a [u8],
    /// The rest of what the call returned, as it returned it.
    pub(super) query: CvarQuery<'a>,
    pub(super) resolved: &'a Resolved,
}

/// What `MPI_T_pvar_get_info` says about a performance variable, borrowed for the time of one
/// call of the visitor of [`Mpit::visit_pvars`]: the fields of [`PvarInfo`], decoded when asked
/// for, as [`CvarInfoRef`] has those of [`CvarInfo`].
///
/// MPI-4.1 §16.3.7, `MPI_T_pvar_get_info`.
#[doc(alias = "MPI_T_pvar_get_info")]
pub struct PvarInfoRef<'a> {
    pub(super) index: usize,
    pub(super) name: &'a [u8],
    pub(super) description: &'a [u8],
    pub(super) query: PvarQuery<'a>,
    pub(super) resolved: &'a Resolved,
}

/// The accessors every borrowed record has: index, name and description.
macro_rules! named_ref {
    ($($record:ident: $what:literal, $kind:literal, $count:literal;)*) => {$(
        impl<'a> $record<'a> {
            #[doc = concat!("Index of the ", $what, ", in `0..", $count, "`.")]
            #[inline]
            pub fn index(&self) -> usize {
                self.index
            }

            #[doc = concat!("Name, unique among ", $kind, ".")]
            #[inline]
            pub fn name(&self) -> MpiStr<'a> {
                MpiStr::until_nul(self.name)
            }

            /// Description; empty if the implementation provides none.
            #[inline]
            pub fn description(&self) -> MpiStr<'a> {
                MpiStr::until_nul(self.description)
            }
        }
    )*};
}

named_ref! {
    CvarInfoRef: "variable", "control variables", "MPI_T_cvar_get_num";
    PvarInfoRef: "variable", "performance variables of the same class", "MPI_T_pvar_get_num";
    CategoryInfoRef: "category", "categories", "MPI_T_category_get_num";
}

/// The accessors the borrowed variable records share besides [`named_ref`]'s.
macro_rules! variable_ref {
    ($($record:ident),*) => {$(
        impl $record<'_> {
            /// Verbosity level.
            #[inline]
            pub fn verbosity(&self) -> Result<Verbosity> {
                Verbosity::from_raw(self.query.verbosity)
            }

            /// Datatype of each element.
            #[inline]
            pub fn datatype(&self) -> Result<Datatype> {
                self.resolved.datatype(self.query.datatype)
            }

            /// Kind of object a handle must be bound to.
            #[inline]
            pub fn bind(&self) -> Result<Bind> {
                Bind::from_raw(self.query.bind)
            }

            /// Whether the variable has an enumeration (MPI-4.1 §16.3.5): a check without a
            /// call.
            #[inline]
            pub fn has_enumtype(&self) -> bool {
                self.query.enumtype.is_some()
            }

            /// The enumeration describing the values, if any (`MPI_INT` only): resolved by
            /// `MPI_T_enum_get_info` and `MPI_T_enum_get_item` of every item on the first
            /// request in a visit, shared by every variable of the visit that has it after.
            ///
            /// MPI-4.1 §16.3.5, `MPI_T_enum_get_info`, `MPI_T_enum_get_item`.
            #[doc(alias = "MPI_T_enum_get_info")]
            #[doc(alias = "MPI_T_enum_get_item")]
            pub fn enumtype(&self) -> Result<Option<Arc<EnumInfo>>> {
                self.resolved.resolve(self.query.enumtype)
            }
        }
    )*};
}

variable_ref!(CvarInfoRef, PvarInfoRef);

impl CvarInfoRef<'_> {
    /// When and how the variable may be written.
    #[inline]
    pub fn scope(&self) -> Result<Scope> {
        Scope::from_raw(self.query.scope)
    }

    /// The owned record, every field decoded and the enumeration resolved (the first error
    /// of an accessor, in the order of [`CvarInfo`]'s fields).
    pub fn to_owned(&self) -> Result<CvarInfo> {
        Ok(CvarInfo {
            index: self.index,
            name: self.name().to_mpi_string(),
            verbosity: self.verbosity()?,
            datatype: self.datatype()?,
            enumtype: self.enumtype()?,
            description: self.description().to_mpi_string(),
            bind: self.bind()?,
            scope: self.scope()?,
        })
    }
}

impl PvarInfoRef<'_> {
    /// Class: datatypes, starting value and monotonicity.
    #[inline]
    pub fn class(&self) -> Result<PvarClass> {
        PvarClass::from_raw(self.query.class)
    }

    /// Whether the variable can only be read (not written or reset).
    #[inline]
    pub fn readonly(&self) -> bool {
        self.query.readonly
    }

    /// Whether the variable is always active (cannot be started or stopped).
    #[inline]
    pub fn continuous(&self) -> bool {
        self.query.continuous
    }

    /// Whether the variable can be read and reset atomically (`MPI_T_pvar_readreset`).
    #[inline]
    pub fn atomic(&self) -> bool {
        self.query.atomic
    }

    /// The owned record, every field decoded and the enumeration resolved (the first error
    /// of an accessor, in the order of [`PvarInfo`]'s fields).
    pub fn to_owned(&self) -> Result<PvarInfo> {
        Ok(PvarInfo {
            index: self.index,
            name: self.name().to_mpi_string(),
            verbosity: self.verbosity()?,
            class: self.class()?,
            datatype: self.datatype()?,
            enumtype: self.enumtype()?,
            description: self.description().to_mpi_string(),
            bind: self.bind()?,
            readonly: self.readonly(),
            continuous: self.continuous(),
            atomic: self.atomic(),
        })
    }
}

/// What the borrowed records show of themselves: their fields decoded, an undecodable one as
/// its error.
macro_rules! debug_ref {
    ($($record:ident { $($field:ident),* })*) => {$(
        impl fmt::Debug for $record<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($record))
                    $(.field(stringify!($field), &self.$field()))*
                    .finish_non_exhaustive()
            }
        }
    )*};
}

debug_ref! {
    CvarInfoRef { index, name, verbosity, datatype, description, bind, scope, has_enumtype }
    PvarInfoRef {
        index, name, verbosity, class, datatype, description, bind, readonly, continuous,
        atomic, has_enumtype
    }
    CategoryInfoRef {
        index, name, description, num_cvars, num_pvars, num_categories, num_events, cvars,
        pvars, categories, events
    }
}

/// What `MPI_T_category_get_info` and the member queries say about a category, borrowed for
/// the time of one call of the visitor of [`Mpit::visit_categories`]: the fields of
/// [`CategoryInfo`], strings and member lists in the buffers of the visit.
///
/// MPI-4.1 §16.3.9, `MPI_T_category_get_info`.
#[doc(alias = "MPI_T_category_get_info")]
pub struct CategoryInfoRef<'a> {
    pub(super) index: usize,
    pub(super) name: &'a [u8],
    pub(super) description: &'a [u8],
    /// Whether the implementation has the event interface (else `events` is empty and
    /// [`CategoryInfoRef::num_events`] is `None`).
    pub(super) has_events: bool,
    pub(super) cvars: Members<'a>,
    pub(super) pvars: Members<'a>,
    pub(super) categories: Members<'a>,
    pub(super) events: Members<'a>,
}

/// The members of one kind of a category ([`CategoryInfoRef::cvars`], ...): the indices
/// MPI wrote, borrowed as it wrote them (C `int`s, each checked non-negative when the record
/// was made), given as `usize` on access. A visit converts nothing its visitor does not read.
///
/// ```
/// use std::ops::ControlFlow;
/// use mpit_safe::Mpit;
///
/// let mpit = Mpit::init()?;
/// mpit.visit_categories(|c| {
///     let cvars = c.cvars();
///     assert_eq!(cvars.len(), c.num_cvars());
///     let first: Option<usize> = cvars.get(0);
///     assert_eq!(first, cvars.iter().next());
///     assert!(cvars.iter().all(|i| cvars.contains(i)));
///     ControlFlow::<()>::Continue(())
/// })?;
/// # Ok::<(), mpit_safe::Error>(())
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Members<'a>(pub(super) &'a [c_int]);

impl<'a> Members<'a> {
    /// The number of members.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `k`-th member's index, if there are more than `k`.
    #[inline]
    pub fn get(&self, k: usize) -> Option<usize> {
        self.0.get(k).map(|&m| m as usize)
    }

    /// Whether `index` is a member.
    #[inline]
    pub fn contains(&self, index: usize) -> bool {
        c_int::try_from(index).is_ok_and(|i| self.0.contains(&i))
    }

    /// The members' indices, in MPI's order.
    #[inline]
    pub fn iter(&self) -> MemberIter<'a> {
        MemberIter(self.0.iter())
    }

    /// The members' indices, kept.
    pub fn to_vec(&self) -> Vec<usize> {
        self.iter().collect()
    }

    /// The members as MPI wrote them (each non-negative).
    #[inline]
    pub fn as_raw(&self) -> &'a [c_int] {
        self.0
    }
}

impl fmt::Debug for Members<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq<[usize]> for Members<'_> {
    fn eq(&self, other: &[usize]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl PartialEq<Vec<usize>> for Members<'_> {
    fn eq(&self, other: &Vec<usize>) -> bool {
        *self == **other
    }
}

impl<'a> IntoIterator for Members<'a> {
    type Item = usize;
    type IntoIter = MemberIter<'a>;

    #[inline]
    fn into_iter(self) -> MemberIter<'a> {
        self.iter()
    }
}

/// The indices of [`Members`], in MPI's order.
#[derive(Clone, Debug)]
pub struct MemberIter<'a>(std::slice::Iter<'a, c_int>);

impl Iterator for MemberIter<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        self.0.next().map(|&m| m as usize)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<usize> {
        self.0.nth(n).map(|&m| m as usize)
    }
}

impl DoubleEndedIterator for MemberIter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<usize> {
        self.0.next_back().map(|&m| m as usize)
    }
}

impl ExactSizeIterator for MemberIter<'_> {}

impl std::iter::FusedIterator for MemberIter<'_> {}

impl<'a> CategoryInfoRef<'a> {
    /// Number of control variables, as declared.
    #[inline]
    pub fn num_cvars(&self) -> usize {
        self.cvars.len()
    }

    /// Number of performance variables, as declared.
    #[inline]
    pub fn num_pvars(&self) -> usize {
        self.pvars.len()
    }

    /// Number of sub-categories, as declared.
    #[inline]
    pub fn num_categories(&self) -> usize {
        self.categories.len()
    }

    /// Number of event types (`MPI_T_category_get_num_events`, MPI-4.0); `None` where the
    /// implementation lacks the event interface.
    #[inline]
    pub fn num_events(&self) -> Option<usize> {
        self.has_events.then_some(self.events.len())
    }

    /// Indices of the control variables (`MPI_T_category_get_cvars`).
    #[inline]
    pub fn cvars(&self) -> Members<'a> {
        self.cvars
    }

    /// Indices of the performance variables (`MPI_T_category_get_pvars`).
    #[inline]
    pub fn pvars(&self) -> Members<'a> {
        self.pvars
    }

    /// Indices of the sub-categories (`MPI_T_category_get_categories`).
    #[inline]
    pub fn categories(&self) -> Members<'a> {
        self.categories
    }

    /// Indices of the event types (`MPI_T_category_get_events`); empty when
    /// [`CategoryInfoRef::num_events`] is `None`.
    #[inline]
    pub fn events(&self) -> Members<'a> {
        self.events
    }

    /// The owned record.
    pub fn to_owned(&self) -> CategoryInfo {
        CategoryInfo {
            index: self.index,
            name: self.name().to_mpi_string(),
            description: self.description().to_mpi_string(),
            num_cvars: self.num_cvars(),
            num_pvars: self.num_pvars(),
            num_categories: self.num_categories(),
            num_events: self.num_events(),
            cvars: self.cvars.to_vec(),
            pvars: self.pvars.to_vec(),
            categories: self.categories.to_vec(),
            events: self.events.to_vec(),
        }
    }
}
