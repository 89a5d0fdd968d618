//! Listings and visits of every index of a kind, with the indices whose query failed
//! ([`Listing`], [`Visited`], [`Holes`]), and the [`Catalog`] a [`Mpit::refresh`] brings up to
//! date (indices never change or disappear: MPI-4.1 §16.3.6, §16.3.7, §16.3.9).

#![forbid(unsafe_code)]

use std::ops::ControlFlow;

use smallvec::SmallVec;

use mpit_core::{CategoryInfo, CvarInfo, Error, PvarInfo, Result};

use super::Scratch;
use crate::ffi::{Cvar, Index, Kind, Pvar};
use crate::init::{Mpit, level::Level};

/// Everything a listing found: the entries, and the holes (indices below the count whose query
/// failed, with the error), so one bad index never aborts a listing.
#[derive(Debug, Clone)]
pub struct Listing<T> {
    /// The entries that could be queried, in index order.
    pub entries: Vec<T>,
    /// `(index, error)` for every index below the count whose query failed.
    pub holes: Vec<(usize, Error)>,
    /// The count the implementation reported when the listing was made.
    pub count: usize,
}

impl<T> Listing<T> {
    /// Queries every index of `indices` (all those below the count, [`Index::all`]).
    pub(crate) fn of<K: Kind>(
        indices: impl ExactSizeIterator<Item = Index<K>>,
        query: impl FnMut(Index<K>) -> Result<T>,
    ) -> Listing<T> {
        let mut listing = Listing {
            entries: Vec::with_capacity(indices.len()),
            holes: Vec::new(),
            count: 0,
        };
        listing.extend(indices, query);
        listing
    }

    /// Queries the indices of `indices` past `self.count` and appends them.
    pub(crate) fn extend<K: Kind>(
        &mut self,
        indices: impl ExactSizeIterator<Item = Index<K>>,
        mut query: impl FnMut(Index<K>) -> Result<T>,
    ) {
        let count = indices.len();
        for i in indices.skip(self.count) {
            match query(i) {
                Ok(e) => self.entries.push(e),
                Err(e) => self.holes.push((i.get(), e)),
            }
        }
        self.count = self.count.max(count);
    }
}

/// What a visit ([`Mpit::visit_cvars`], [`Mpit::visit_pvars`], [`Mpit::visit_categories`])
/// that went through every index found besides what it showed: the count, and the indices
/// whose query failed, as a [`Listing`] has them.
#[derive(Debug, Clone, Default)]
pub struct Visited {
    /// The count the implementation reported when the visit began.
    pub count: usize,
    /// Every index below the count whose query failed (not shown), with its error.
    pub holes: Holes,
}

/// The indices of a [`Visited`] whose query failed, each with its error, in the order found
/// (index order): indices in a row that failed with equal errors are kept as one run, and the
/// first two runs in place. A visit of Open MPI's pvars then allocates nothing for its holes
/// (after `MPI_Init`, `MPI_T_ERR_INVALID_INDEX` each: 4.1.4 28 of 33 in 2 runs, 5.0.11 15 of
/// 20 in 1) and keeps no copy per hole, where a `Vec` of `(index, error)` cost an allocation
/// and a copy and a drop per hole. Its cvars and categories have more runs (4.1.4: 28 and 19),
/// which go to the heap.
///
/// ```
/// use mpit_safe::{Error, ErrorClass, Holes};
///
/// let gone = Error::from_class(ErrorClass::InvalidIndex, 57);
/// let mut holes = Holes::default();
/// for i in [3, 4, 5, 9] {
///     holes.push(i, gone.clone());
/// }
/// assert_eq!(holes.len(), 4);
/// assert_eq!(holes.indices().collect::<Vec<_>>(), [3, 4, 5, 9]);
/// assert_eq!(holes.get(4), Some(&gone));
/// assert_eq!(holes.get(6), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holes {
    runs: SmallVec<[HoleRun; 2]>,
    len: usize,
}

/// `len` indices from `start` on that failed with `error`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HoleRun {
    start: usize,
    len: usize,
    error: Error,
}

impl Holes {
    /// How many holes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every hole as `(index, error)`, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Error)> + '_ {
        self.runs
            .iter()
            .flat_map(|r| (0..r.len).map(move |k| (r.start + k, &r.error)))
    }

    /// The indices, in the order they were added.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.iter().map(|(i, _)| i)
    }

    /// The error of `index`, if it is a hole (the first one added for it).
    pub fn get(&self, index: usize) -> Option<&Error> {
        self.runs
            .iter()
            .find(|r| index >= r.start && index - r.start < r.len)
            .map(|r| &r.error)
    }

    /// Adds `index` with `error`, after the others: to the last run if it continues it with
    /// an equal error (the error is then dropped, no copy kept).
    #[inline(always)]
    pub fn push(&mut self, index: usize, error: Error) {
        // The common case inline: an MPI error continuing the last run with the same class
        // and code, compared field by field (the derived `==` on `Error` is a call).
        if let Error::Mpi { class, code } = error
            && let Some(last) = self.runs.last_mut()
            && let Error::Mpi {
                class: last_class,
                code: last_code,
            } = last.error
            && (class, code) == (last_class, last_code)
            && last.start.checked_add(last.len) == Some(index)
        {
            last.len += 1;
            self.len += 1;
            // An `Error::Mpi` owns nothing: no drop to call.
            std::mem::forget(error);
            return;
        }
        self.push_other(index, error);
    }

    /// [`Holes::push`] past its common case.
    #[inline(never)]
    fn push_other(&mut self, index: usize, error: Error) {
        self.len += 1;
        if let Some(last) = self.runs.last_mut()
            && last.start.checked_add(last.len) == Some(index)
            && last.error == error
        {
            last.len += 1;
            return;
        }
        self.runs.push(HoleRun {
            start: index,
            len: 1,
            error,
        });
    }
}

impl Extend<(usize, Error)> for Holes {
    fn extend<I: IntoIterator<Item = (usize, Error)>>(&mut self, iter: I) {
        for (i, e) in iter {
            self.push(i, e);
        }
    }
}

impl FromIterator<(usize, Error)> for Holes {
    fn from_iter<I: IntoIterator<Item = (usize, Error)>>(iter: I) -> Self {
        let mut holes = Holes::default();
        holes.extend(iter);
        holes
    }
}

impl From<Holes> for Vec<(usize, Error)> {
    /// The holes as a [`Listing`] has them.
    fn from(holes: Holes) -> Self {
        holes.iter().map(|(i, e)| (i, e.clone())).collect()
    }
}

/// Every index of `indices` through `step` until it breaks; an index whose query fails is a
/// hole.
pub(super) fn visit<K: Kind, B>(
    indices: impl ExactSizeIterator<Item = Index<K>>,
    mut step: impl FnMut(Index<K>) -> Result<ControlFlow<B>>,
) -> ControlFlow<B, Visited> {
    let mut visited = Visited {
        count: indices.len(),
        holes: Holes::default(),
    };
    for i in indices {
        match step(i) {
            Ok(ControlFlow::Continue(())) => {}
            Ok(ControlFlow::Break(b)) => return ControlFlow::Break(b),
            Err(e) => visited.holes.push(i.get(), e),
        }
    }
    ControlFlow::Continue(visited)
}

/// A cached listing of everything MPI_T exposes that can be brought up to date cheaply.
///
/// Indices never change or disappear (MPI-4.1 §16.3.6, §16.3.7, §16.3.9), so a refresh only
/// queries the indices past the counts seen last time; categories, whose member lists may grow,
/// are queried again only when `MPI_T_category_changed` says something changed. Typical use:
/// build it before `MPI_Init`, refresh after, and after loading anything that may add variables.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Control variables seen so far (entries and holes).
    pub cvars: Listing<CvarInfo>,
    /// Performance variables seen so far.
    pub pvars: Listing<PvarInfo>,
    /// Categories, as of the last stamp.
    pub categories: Listing<CategoryInfo>,
    stamp: i32,
}

/// What a [`Mpit::refresh`] of a [`Catalog`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Indices of control variables that appeared.
    pub new_cvars: std::ops::Range<usize>,
    /// Indices of performance variables that appeared.
    pub new_pvars: std::ops::Range<usize>,
    /// Whether the categories were queried again (the stamp changed).
    pub categories_changed: bool,
}

impl<L: Level> Mpit<L> {
    /// Lists everything now, remembering the category stamp.
    pub fn catalog(&self) -> Result<Catalog> {
        let stamp = self.category_stamp()?;
        Ok(Catalog {
            cvars: self.cvars()?,
            pvars: self.pvars()?,
            categories: self.categories()?,
            stamp,
        })
    }

    /// Brings `catalog` up to date: new variables are queried, old ones are kept as they are.
    pub fn refresh(&self, catalog: &mut Catalog) -> Result<Refresh> {
        let (c0, p0) = (catalog.cvars.count, catalog.pvars.count);
        let mut scratch = Scratch::listing();
        self.extend_variables::<Cvar>(&mut catalog.cvars, &mut scratch)?;
        self.extend_variables::<Pvar>(&mut catalog.pvars, &mut scratch)?;
        let stamp = self.category_stamp()?;
        let categories_changed = stamp != catalog.stamp;
        if categories_changed {
            catalog.categories = self.categories()?;
            catalog.stamp = stamp;
        }
        Ok(Refresh {
            new_cvars: c0..catalog.cvars.count,
            new_pvars: p0..catalog.pvars.count,
            categories_changed,
        })
    }
}
