//! Control variables (MPI-4.1 §16.3.6) and performance variables (§16.3.7) as listings and
//! visits see them: one `MPI_T_*_get_info` call per variable, written once for both kinds
//! ([`Variable`]).

#![forbid(unsafe_code)]

use std::ops::ControlFlow;

use mpit_core::{CvarInfo, PvarInfo, Result};

use super::index_arg;
use super::listing::{Listing, Visited, visit};
use super::scratch::{Described, Resolved, Scratch};
use super::visit::{CvarInfoRef, PvarInfoRef};
use crate::ffi::{self, Cvar, Index, Kind, Pvar, TInit};
use crate::init::{Mpit, level::Level};

/// A kind of variable as a listing or a visit sees it: what its `MPI_T_*_get_info` returns,
/// the record borrowed from it, and the owned record.
pub(super) trait Variable: Kind {
    /// What `MPI_T_*_get_info` returns besides the strings.
    type Query<'m>: Described;
    /// The borrowed record ([`CvarInfoRef`], [`PvarInfoRef`]).
    type Ref<'a>;
    /// The owned record ([`CvarInfo`], [`PvarInfo`]).
    type Info;

    /// `MPI_T_*_get_info` of a checked index, with optional name and description buffers.
    fn get_info<'m, L: Level>(
        init: &'m TInit<L>,
        index: Index<Self>,
        name: Option<&mut [u8]>,
        desc: Option<&mut [u8]>,
    ) -> Result<Self::Query<'m>>;

    /// The borrowed record of one call: its result, and the name and description in the
    /// buffers.
    fn record<'a>(
        index: usize,
        query: Self::Query<'a>,
        name: &'a [u8],
        description: &'a [u8],
        resolved: &'a Resolved,
    ) -> Self::Ref<'a>;

    /// The owned record, every field decoded and the enumeration resolved.
    fn to_owned(record: &Self::Ref<'_>) -> Result<Self::Info>;
}

/// [`Variable`] of a kind: its `*_get_info` entry, and records whose fields are the same.
macro_rules! variable {
    ($($kind:ident: $get_info:ident => $query:ident, $record:ident, $info:ident;)*) => {$(
        impl Variable for $kind {
            type Query<'m> = ffi::$query<'m>;
            type Ref<'a> = $record<'a>;
            type Info = $info;

            #[inline(always)]
            fn get_info<'m, L: Level>(
                init: &'m TInit<L>,
                index: Index<Self>,
                name: Option<&mut [u8]>,
                desc: Option<&mut [u8]>,
            ) -> Result<Self::Query<'m>> {
                ffi::$get_info(init, index, name, desc)
            }

            #[inline(always)]
            fn record<'a>(
                index: usize,
                query: Self::Query<'a>,
                name: &'a [u8],
                description: &'a [u8],
                resolved: &'a Resolved,
            ) -> $record<'a> {
                $record {
                    index,
                    name,
                    description,
                    query,
                    resolved,
                }
            }

            fn to_owned(record: &$record<'_>) -> Result<$info> {
                record.to_owned()
            }
        }
    )*};
}

variable! {
    Cvar: cvar_get_info => CvarQuery, CvarInfoRef, CvarInfo;
    Pvar: pvar_get_info => PvarQuery, PvarInfoRef, PvarInfo;
}

impl<L: Level> Mpit<L> {
    /// Everything `MPI_T_cvar_get_info` says about control variable `index`, with its
    /// enumeration resolved.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_get_info`.
    #[doc(alias = "MPI_T_cvar_get_info")]
    pub fn cvar_info(&self, index: usize) -> Result<CvarInfo> {
        self.cvar_info_at(index_arg(&self.init, index)?)
    }

    /// [`Mpit::cvar_info`] of a checked index, its enumeration resolved afresh.
    pub(crate) fn cvar_info_at(&self, i: Index<Cvar>) -> Result<CvarInfo> {
        self.variable_info(i)
    }

    /// Every control variable, holes reported per index.
    pub fn cvars(&self) -> Result<Listing<CvarInfo>> {
        self.variables::<Cvar>()
    }

    /// Calls `f` with what `MPI_T_cvar_get_info` says about every control variable, in index
    /// order, until `f` breaks: the names and descriptions borrowed from buffers reused for
    /// every variable, each field decoded and the enumeration resolved only when asked for
    /// ([`CvarInfoRef`]), so a variable costs one `MPI_T_cvar_get_info` call and what `f`
    /// reads, and nothing is allocated (a string longer than the buffers, 256 bytes for a
    /// name and 2048 for a description, is fetched whole as [`Mpit::cvars`] does). For tools
    /// that look at every variable and keep few ([`CvarInfoRef::to_owned`] keeps one);
    /// [`Mpit::cvars`] keeps them all.
    ///
    /// Returns `Break` with what `f` broke with, or `Continue` with the count and the indices
    /// whose query failed ([`Visited`]); a field that does not decode is the error of its
    /// accessor, not a hole (it is one of [`Mpit::cvars`]). Errors: that of
    /// `MPI_T_cvar_get_num`.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_get_info`.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use mpit_safe::{Datatype, Mpit, Verbosity};
    ///
    /// let mpit = Mpit::init()?;
    /// // The names of the user-level integer variables, and nothing else kept.
    /// let mut names = Vec::new();
    /// let visited = mpit.visit_cvars(|v| {
    ///     // Each field is decoded when asked for; one that does not decode compares unequal.
    ///     if v.verbosity().is_ok_and(|l| l <= Verbosity::USER_ALL)
    ///         && v.datatype().is_ok_and(|t| t == Datatype::Int)
    ///     {
    ///         names.push(v.name().to_string());
    ///     }
    ///     ControlFlow::<()>::Continue(())
    /// })?;
    /// if let ControlFlow::Continue(visited) = visited {
    ///     println!("{} of {} variables, {} holes", names.len(), visited.count, visited.holes.len());
    /// }
    /// // The first variable with an enumeration, kept whole: the search stops there.
    /// let found = mpit.visit_cvars(|v| match v.has_enumtype() {
    ///     true => ControlFlow::Break(v.to_owned()),
    ///     false => ControlFlow::Continue(()),
    /// })?;
    /// if let ControlFlow::Break(info) = found {
    ///     let info = info?;
    ///     let e = info.enumtype.as_ref().unwrap();
    ///     println!("{}: one of {} values of {}", info.name, e.items.len(), e.name);
    /// }
    /// # Ok::<(), mpit_safe::Error>(())
    /// ```
    #[doc(alias = "MPI_T_cvar_get_info")]
    pub fn visit_cvars<B>(
        &self,
        f: impl FnMut(&CvarInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        self.visit_variables::<Cvar, B>(&mut Scratch::listing(), f)
    }

    /// Everything `MPI_T_pvar_get_info` says about performance variable `index`.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_get_info`.
    #[doc(alias = "MPI_T_pvar_get_info")]
    pub fn pvar_info(&self, index: usize) -> Result<PvarInfo> {
        self.pvar_info_at(index_arg(&self.init, index)?)
    }

    /// [`Mpit::pvar_info`] of a checked index, its enumeration resolved afresh.
    pub(crate) fn pvar_info_at(&self, i: Index<Pvar>) -> Result<PvarInfo> {
        self.variable_info(i)
    }

    /// Every performance variable, holes reported per index.
    pub fn pvars(&self) -> Result<Listing<PvarInfo>> {
        self.variables::<Pvar>()
    }

    /// [`Mpit::visit_cvars`] for performance variables: `f` sees what `MPI_T_pvar_get_info`
    /// says about each, borrowed, until it breaks.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_get_info`.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use mpit_safe::{Mpit, PvarClass};
    ///
    /// let mpit = Mpit::init()?;
    /// // How many counters there are, and the first one that can be read and reset at once.
    /// let mut counters = 0;
    /// let atomic = mpit.visit_pvars(|v| {
    ///     counters += usize::from(v.class().is_ok_and(|c| c == PvarClass::Counter));
    ///     if v.atomic() && !v.readonly() {
    ///         ControlFlow::Break(v.index())
    ///     } else {
    ///         ControlFlow::Continue(())
    ///     }
    /// })?;
    /// println!("{counters} counters before {atomic:?}");
    /// # Ok::<(), mpit_safe::Error>(())
    /// ```
    #[doc(alias = "MPI_T_pvar_get_info")]
    pub fn visit_pvars<B>(
        &self,
        f: impl FnMut(&PvarInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        self.visit_variables::<Pvar, B>(&mut Scratch::listing(), f)
    }

    /// One `MPI_T_*_get_info` call in the common case (see [`Scratch::described`]); the
    /// enumeration is resolved when asked for.
    #[inline(always)]
    fn with_variable<V: Variable, R>(
        &self,
        i: Index<V>,
        scratch: &mut Scratch,
        k: impl FnOnce(&V::Ref<'_>) -> R,
    ) -> Result<R> {
        let (query, name, description, resolved) =
            scratch.described(|n, d| V::get_info(&self.init, i, n, d))?;
        Ok(k(&V::record(i.get(), query, name, description, resolved)))
    }

    /// The owned record of a checked index, its enumeration resolved afresh.
    fn variable_info<V: Variable>(&self, i: Index<V>) -> Result<V::Info> {
        self.with_variable(i, &mut Scratch::single(), V::to_owned)?
    }

    /// Every variable of kind `V`, holes reported per index.
    fn variables<V: Variable>(&self) -> Result<Listing<V::Info>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::<V>::all(&self.init)?, |i| {
            self.with_variable(i, &mut scratch, V::to_owned)?
        }))
    }

    /// The variables of kind `V` past `listing`'s count, appended to it.
    pub(super) fn extend_variables<V: Variable>(
        &self,
        listing: &mut Listing<V::Info>,
        scratch: &mut Scratch,
    ) -> Result<()> {
        listing.extend(Index::<V>::all(&self.init)?, |i| {
            self.with_variable(i, scratch, V::to_owned)?
        });
        Ok(())
    }

    /// [`Mpit::visit_cvars`] or [`Mpit::visit_pvars`] with `scratch`.
    pub(super) fn visit_variables<V: Variable, B>(
        &self,
        scratch: &mut Scratch,
        mut f: impl FnMut(&V::Ref<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        Ok(visit(Index::<V>::all(&self.init)?, |i| {
            self.with_variable(i, scratch, &mut f)
        }))
    }
}
