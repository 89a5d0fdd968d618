//! Categories (MPI-4.1 §16.3.9) as queries, listings and visits see them: one
//! `MPI_T_category_get_info` call and one call per non-empty member list.

#![forbid(unsafe_code)]

use std::ops::ControlFlow;

use mpit_core::{CategoryInfo, Error, Result};

use super::index_arg;
use super::listing::{Listing, Visited, visit};
use super::scratch::{Buffers, MEMBERS, Scratch, described_in};
use super::visit::{CategoryInfoRef, Members};
use crate::ffi::{self, Category, Index};
use crate::init::{Mpit, level::Level};

impl<L: Level> Mpit<L> {
    /// Everything about category `index`: name, description, and its member control
    /// variables, performance variables, subcategories and (with the event API) event types.
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_get_info`.
    #[doc(alias = "MPI_T_category_get_info")]
    pub fn category_info(&self, index: usize) -> Result<CategoryInfo> {
        let i = index_arg(&self.init, index)?;
        self.with_category(i, &mut Scratch::single(), |c| c.to_owned())
    }

    /// One `MPI_T_category_get_info` call in the common case (see [`Scratch::described`]),
    /// and one per non-empty member list (with the event API, one more for the number of event
    /// types), into the scratch's member buffer, handed to `k` as [`Members`] views.
    #[inline(always)]
    fn with_category<R>(
        &self,
        i: Index<Category>,
        scratch: &mut Scratch,
        k: impl FnOnce(&CategoryInfoRef<'_>) -> R,
    ) -> Result<R> {
        let init = &self.init;
        let Scratch {
            bufs,
            first: (n, d),
            spill,
            ..
        } = scratch;
        let Buffers {
            name,
            desc,
            members: raw,
        } = &mut **bufs.get_or_insert_with(Buffers::new);
        let (r, name, description) =
            described_in(&mut name[..*n], &mut desc[..*d], spill, |n, d| {
                ffi::category_get_info(init, i, n, d)
            })?;
        let num_events = match mpit_sys::consts::HAS_EVENTS {
            true => ffi::category_get_num_events(init, i)?,
            false => 0,
        };
        // Any negative count: the sign bit of all of them or-ed.
        if (r.num_cvars | r.num_pvars | r.num_categories | num_events) < 0 {
            return Err(Error::LengthOverflow);
        }
        let [ne, num_cvars, num_pvars, num_categories] =
            [num_events, r.num_cvars, r.num_pvars, r.num_categories].map(|n| n as usize);
        // Four non-negative ints: their sum fits a u64 (and a usize wherever it is 64 bits).
        let total = usize::try_from(
            ne as u64 + num_cvars as u64 + num_pvars as u64 + num_categories as u64,
        )
        .map_err(|_| Error::LengthOverflow)?;
        // All lists in one buffer, each written in place by its call (none for an empty one),
        // checked once: C's calls, and no more. The buffer only grows; the lists' part is
        // filled with -1 first, so that an entry MPI left unwritten is refused below.
        if raw.len() < total {
            raw.resize(MEMBERS.max(total), 0);
        }
        let all = &mut raw[..total];
        all.fill(-1);
        let (events, rest) = all.split_at_mut(ne);
        let (cvars, rest) = rest.split_at_mut(num_cvars);
        let (pvars, categories) = rest.split_at_mut(num_pvars);
        if !events.is_empty() {
            ffi::category_get_events(init, i, events)?;
        }
        if !cvars.is_empty() {
            ffi::category_get_cvars(init, i, cvars)?;
        }
        if !pvars.is_empty() {
            ffi::category_get_pvars(init, i, pvars)?;
        }
        if !categories.is_empty() {
            ffi::category_get_categories(init, i, categories)?;
        }
        // A negative (or an entry left unwritten, still -1) is refused: the sign bits or-ed,
        // with no early exit, so vector code.
        let all = &raw[..total];
        if all.iter().fold(0, |any, &m| any | m) < 0 {
            return Err(Error::LengthOverflow);
        }
        let (events, rest) = all.split_at(ne);
        let (cvars, rest) = rest.split_at(num_cvars);
        let (pvars, categories) = rest.split_at(num_pvars);
        Ok(k(&CategoryInfoRef {
            index: i.get(),
            name,
            description,
            has_events: mpit_sys::consts::HAS_EVENTS,
            cvars: Members(cvars),
            pvars: Members(pvars),
            categories: Members(categories),
            events: Members(events),
        }))
    }

    /// Every category, holes reported per index.
    pub fn categories(&self) -> Result<Listing<CategoryInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.with_category(i, &mut scratch, |c| c.to_owned())
        }))
    }

    /// [`Mpit::visit_cvars`] for categories: `f` sees what `MPI_T_category_get_info` and the
    /// member queries say about each, borrowed (member lists included), until it breaks.
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_get_info`.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use mpit_safe::Mpit;
    ///
    /// let mpit = Mpit::init()?;
    /// // The category that holds control variable 0, if any.
    /// let home = mpit.visit_categories(|c| match c.cvars().contains(0) {
    ///     true => ControlFlow::Break(c.name().to_string()),
    ///     false => ControlFlow::Continue(()),
    /// })?;
    /// println!("{home:?}");
    /// # Ok::<(), mpit_safe::Error>(())
    /// ```
    #[doc(alias = "MPI_T_category_get_info")]
    pub fn visit_categories<B>(
        &self,
        f: impl FnMut(&CategoryInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        self.visit_categories_in(&mut Scratch::listing(), f)
    }

    /// [`Mpit::visit_categories`] with `scratch`.
    pub(super) fn visit_categories_in<B>(
        &self,
        scratch: &mut Scratch,
        mut f: impl FnMut(&CategoryInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        Ok(visit(Index::all(&self.init)?, |i| {
            self.with_category(i, scratch, &mut f)
        }))
    }
}
