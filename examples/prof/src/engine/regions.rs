//! The region tree: nodes, entered and left by a guard ([`Profiler::region`]) or by name
//! ([`Profiler::begin`] / [`Profiler::end`]), each with its sample at the boundary.

#![forbid(unsafe_code)]

use std::fmt;
use std::sync::atomic::Ordering::Relaxed;

use mpit_safe::level::Level;
use mpit_safe::{Error, Result};

use super::report::NodeKind;
use super::{Mode, Profiler, State};
// Named in the documentation.
#[cfg(doc)]
use super::calls::{FnStat, Hot, TIME_FIRST};

/// Ends its region when dropped ([`Profiler::region`]).
#[must_use = "the region ends when the guard is dropped"]
pub struct RegionGuard<'p> {
    prof: &'p dyn EndTo,
    depth: usize,
}

impl fmt::Debug for RegionGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegionGuard")
            .field("depth", &self.depth)
            .finish()
    }
}

impl Drop for RegionGuard<'_> {
    fn drop(&mut self) {
        if self.depth > 0 {
            self.prof.end_to_depth(self.depth);
        }
    }
}

pub(super) struct Node {
    pub(super) parent: u32,
    pub(super) name: Box<str>,
    pub(super) kind: NodeKind,
    pub(super) calls: u64,
    pub(super) ticks: u64,
    /// Calls whose time was measured (all of them for regions).
    pub(super) timed: u64,
    /// Functions: calls timed because every call was (the first [`TIME_FIRST`], those made
    /// while the function's calls were long), and their ticks, part of `timed` and `ticks`.
    pub(super) sure: u64,
    pub(super) sure_ticks: u64,
    /// The metrics' accumulators, each column's at its `State::layout` offset.
    pub(super) acc: Vec<f64>,
    /// Region children, searched by name.
    pub(super) regions: Vec<u32>,
    /// Regions: where this region's block of [`FnStat`]s (one per function) starts in
    /// `State::fn_stats` ([`NO_BASE`] until the first call in it).
    pub(super) fn_base: usize,
    /// The [`State::same_gen`] of the last sample [`State::settle`] attributed here in full
    /// (0: none): while it is current, this node holds the states of `State::same_words`.
    pub(super) same_gen: u64,
    /// Regions: the functions whose calls here have been counted in [`Hot`] (each once), so
    /// that entering the region opens their slots without a look at every function.
    pub(super) open: Vec<u32>,
}

impl Node {
    /// The ticks of all calls, estimated where not all were timed: the calls timed because
    /// every call was (the first [`TIME_FIRST`]: often slower, lazy binding, connection
    /// setup; those made while the function's calls were long) as measured, the others from
    /// the random sample of them that was timed. Each part weighted by its own sampling rate:
    /// a phase of long calls, all timed, does not stand for the short calls sampled after it.
    pub(super) fn estimated_ticks(&self) -> f64 {
        let (ticks, sure) = (self.ticks as f64, self.sure_ticks as f64);
        if self.calls <= self.timed {
            ticks
        } else if self.timed > self.sure {
            sure + (ticks - sure) * (self.calls - self.sure) as f64
                / (self.timed - self.sure) as f64
        } else {
            ticks * self.calls as f64 / self.timed.max(1) as f64
        }
    }
}

/// `Node::fn_base` of a region without calls yet: far enough from any index that adding a
/// function index never reaches the table.
pub(super) const NO_BASE: usize = usize::MAX >> 1;

pub(super) struct Frame {
    pub(super) node: u32,
    pub(super) t0: u64,
}

/// Ends regions back to a depth, for guards.
trait EndTo {
    fn end_to_depth(&self, depth: usize);
}

impl<L: Level> EndTo for Profiler<'_, L> {
    fn end_to_depth(&self, depth: usize) {
        match self.state.try_borrow_mut() {
            Ok(mut st) => self.end_to(&mut st, depth),
            Err(_) => {
                self.reentered.fetch_add(1, Relaxed);
            }
        }
    }
}

impl<'s, L: Level> Profiler<'s, L> {
    /// Enters region `name` inside the innermost one; it ends when the guard is dropped
    /// (together with any region entered inside it and not ended).
    pub fn region(&self, name: &str) -> RegionGuard<'_> {
        let depth = self.begin_depth(name);
        RegionGuard { prof: self, depth }
    }

    /// Enters region `name` inside the innermost one (for C APIs; end it with [`Profiler::end`]).
    pub fn begin(&self, name: &str) {
        self.begin_depth(name);
    }

    /// Enters a region; returns the stack depth to end back to (0: not entered).
    fn begin_depth(&self, name: &str) -> usize {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return 0;
        };
        if st.stopped {
            return 0;
        }
        let t = self.clock.now();
        let top = st.innermost();
        if st.in_call == 0 || self.mode == Mode::Region {
            self.sample_into(&mut st, top);
        }
        let node = st.region_child(top, name);
        st.nodes[node as usize].calls += 1;
        st.nodes[node as usize].timed += 1;
        st.stack.push(Frame { node, t0: t });
        st.restack();
        self.hot_leave(&mut st);
        st.cur_base = st.nodes[node as usize].fn_base;
        self.hot_enter(&mut st);
        if let Some(ev) = &self.events {
            ev.set_current(node);
        }
        st.stack.len() - 1
    }

    /// Ends region `name`: the innermost region if it has that name, else the nearest
    /// enclosing one of that name together with the regions inside it (counted as a
    /// mismatch). A name that is not open is an error ([`Error::InvalidValue`]) and changes
    /// nothing; the root region ends only in [`Profiler::finish`].
    pub fn end(&self, name: &str) -> Result<()> {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return Ok(());
        };
        let found = st
            .stack
            .iter()
            .enumerate()
            .skip(1)
            .rev()
            .find(|(_, f)| &*st.nodes[f.node as usize].name == name)
            .map(|(i, _)| i);
        match found {
            Some(depth) => {
                if depth + 1 != st.stack.len() {
                    st.mismatches += 1;
                }
                self.end_to(&mut st, depth);
                Ok(())
            }
            None => {
                st.mismatches += 1;
                Err(Error::invalid_value(format!(
                    "region {name:?} is not open (open: {})",
                    st.open_names()
                )))
            }
        }
    }

    /// Pops frames until the stack is `depth` long, with a sample attributed to each.
    fn end_to(&self, st: &mut State<'s, L>, depth: usize) {
        let depth = depth.max(1);
        while st.stack.len() > depth {
            let top = st.innermost();
            self.sample_into(st, top);
            let t = self.clock.now();
            if let Some(f) = st.stack.pop() {
                let n = &mut st.nodes[f.node as usize];
                n.ticks += t.saturating_sub(f.t0);
            }
            st.restack();
        }
        self.hot_leave(st);
        st.cur_base = st.nodes[st.innermost() as usize].fn_base;
        self.hot_enter(st);
        if let Some(ev) = &self.events {
            ev.set_current(st.innermost());
        }
    }
}

impl<'s, L: Level> State<'s, L> {
    #[inline(always)]
    pub(super) fn innermost(&self) -> u32 {
        debug_assert_eq!(self.top, self.stack.last().map_or(0, |f| f.node));
        self.top
    }

    /// [`State::top`] after `stack` changed.
    pub(super) fn restack(&mut self) {
        self.top = self.stack.last().map_or(0, |f| f.node);
    }

    fn open_names(&self) -> String {
        self.stack
            .iter()
            .map(|f| &*self.nodes[f.node as usize].name)
            .collect::<Vec<_>>()
            .join(" > ")
    }

    pub(super) fn new_node(&mut self, parent: u32, name: &str, kind: NodeKind) -> u32 {
        self.nodes.push(Node {
            parent,
            name: name.into(),
            kind,
            calls: 0,
            ticks: 0,
            timed: 0,
            sure: 0,
            sure_ticks: 0,
            acc: self.zero.clone(),
            regions: Vec::new(),
            fn_base: NO_BASE,
            same_gen: 0,
            open: Vec::new(),
        });
        (self.nodes.len() - 1) as u32
    }

    #[inline]
    fn region_child(&mut self, parent: u32, name: &str) -> u32 {
        let p = &self.nodes[parent as usize];
        if let Some(&c) = p
            .regions
            .iter()
            .find(|&&c| &*self.nodes[c as usize].name == name)
        {
            return c;
        }
        let c = self.new_node(parent, name, NodeKind::Region);
        self.nodes[parent as usize].regions.push(c);
        c
    }
}
