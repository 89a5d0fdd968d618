//! The category tree of a [`Listing`] seen through [`Filters`]: which variables and categories
//! are shown, the roots, the uncategorized variables and the enumerations in use.

use std::collections::{HashMap, HashSet};

use super::filter::Filters;
use super::model::{Category, Cvar, Enum, Listing, Pvar};

/// The listing seen through the filters: which variables and categories are shown, and how the
/// categories nest.
#[derive(Debug)]
pub struct View<'r> {
    listing: &'r Listing,
    /// The shown control variables by index.
    pub cvar_at: HashMap<usize, &'r Cvar>,
    /// The shown performance variables by index.
    pub pvar_at: HashMap<usize, &'r Pvar>,
    /// Every listed category by index.
    pub category_at: HashMap<usize, &'r Category>,
    /// Categories with something shown in them or below them (all of them without filters).
    pub visible: HashSet<usize>,
    /// Top-level categories, in index order: those no category lists as a subcategory, then
    /// any category reachable only through a cycle.
    pub roots: Vec<usize>,
    /// Shown control variables in no category.
    pub uncategorized_cvars: Vec<&'r Cvar>,
    /// Shown performance variables in no category.
    pub uncategorized_pvars: Vec<&'r Pvar>,
    /// The indices of every listed control variable, shown or not.
    listed_cvars: HashSet<usize>,
    /// The indices of every listed performance variable, shown or not.
    listed_pvars: HashSet<usize>,
}

impl<'r> View<'r> {
    /// `listing` through `filters`.
    pub fn new(listing: &'r Listing, filters: &Filters) -> View<'r> {
        let cvar_at: HashMap<_, _> = listing
            .cvars
            .iter()
            .filter(|v| filters.cvar_shown(v))
            .map(|v| (v.var.index, v))
            .collect();
        let pvar_at: HashMap<_, _> = listing
            .pvars
            .iter()
            .filter(|v| filters.pvar_shown(v))
            .map(|v| (v.var.index, v))
            .collect();
        let category_at: HashMap<_, _> = listing.categories.iter().map(|c| (c.index, c)).collect();

        let mut visible = HashSet::new();
        let mut done = HashSet::new();
        let shown = Shown {
            cats: &category_at,
            cvars: &cvar_at,
            pvars: &pvar_at,
        };
        for c in &listing.categories {
            shown.mark_visible(c.index, &mut visible, &mut done, &mut HashSet::new());
        }
        if !filters.any() {
            visible = category_at.keys().copied().collect();
        }

        let children: HashSet<usize> = listing
            .categories
            .iter()
            .flat_map(|c| c.categories.iter().copied().filter(move |&s| s != c.index))
            .collect();
        let mut roots: Vec<usize> = listing
            .categories
            .iter()
            .map(|c| c.index)
            .filter(|i| !children.contains(i) && visible.contains(i))
            .collect();
        // Categories only reachable through a cycle have no root above them: list them too.
        let mut reached = HashSet::new();
        for &r in &roots {
            reach(r, &category_at, &mut reached);
        }
        for c in &listing.categories {
            if visible.contains(&c.index) && !reached.contains(&c.index) {
                roots.push(c.index);
                reach(c.index, &category_at, &mut reached);
            }
        }

        let in_cvars: HashSet<usize> = listing
            .categories
            .iter()
            .flat_map(|c| c.cvars.iter().copied())
            .collect();
        let in_pvars: HashSet<usize> = listing
            .categories
            .iter()
            .flat_map(|c| c.pvars.iter().copied())
            .collect();
        let uncategorized_cvars = listing
            .cvars
            .iter()
            .filter(|v| cvar_at.contains_key(&v.var.index) && !in_cvars.contains(&v.var.index))
            .collect();
        let uncategorized_pvars = listing
            .pvars
            .iter()
            .filter(|v| pvar_at.contains_key(&v.var.index) && !in_pvars.contains(&v.var.index))
            .collect();
        View {
            listing,
            cvar_at,
            pvar_at,
            category_at,
            visible,
            roots,
            uncategorized_cvars,
            uncategorized_pvars,
            listed_cvars: listing.cvars.iter().map(|v| v.var.index).collect(),
            listed_pvars: listing.pvars.iter().map(|v| v.var.index).collect(),
        }
    }

    /// Whether control variable `index` is listed but not shown (a filter excludes it).
    pub fn cvar_filtered_out(&self, index: usize) -> bool {
        self.listed_cvars.contains(&index) && !self.cvar_at.contains_key(&index)
    }

    /// Whether performance variable `index` is listed but not shown (a filter excludes it).
    pub fn pvar_filtered_out(&self, index: usize) -> bool {
        self.listed_pvars.contains(&index) && !self.pvar_at.contains_key(&index)
    }

    /// The shown control variables, in index order.
    pub fn shown_cvars(&self) -> impl Iterator<Item = &'r Cvar> + '_ {
        self.listing
            .cvars
            .iter()
            .filter(|v| self.cvar_at.contains_key(&v.var.index))
    }

    /// The shown performance variables, in index order.
    pub fn shown_pvars(&self) -> impl Iterator<Item = &'r Pvar> + '_ {
        self.listing
            .pvars
            .iter()
            .filter(|v| self.pvar_at.contains_key(&v.var.index))
    }

    /// The enumerations the shown variables use, each with the names of its users.
    pub fn enums(&self) -> Vec<(&'r Enum, Vec<String>)> {
        let mut out: Vec<(&Enum, Vec<String>)> = Vec::new();
        let users = self
            .shown_cvars()
            .map(|v| &v.var)
            .chain(self.shown_pvars().map(|v| &v.var))
            .map(|v| (&v.enumtype, &v.name));
        for (e, name) in users {
            let Some(e) = e else { continue };
            match out.iter_mut().find(|(known, _)| *known == e) {
                Some((_, users)) => users.push(name.clone()),
                None => out.push((e, vec![name.clone()])),
            }
        }
        out
    }
}

/// The lookups [`Shown::mark_visible`] walks.
struct Shown<'a, 'r> {
    cats: &'a HashMap<usize, &'r Category>,
    cvars: &'a HashMap<usize, &'r Cvar>,
    pvars: &'a HashMap<usize, &'r Pvar>,
}

impl Shown<'_, '_> {
    /// Whether category `i` has a shown variable in it or below it; `visiting` breaks cycles.
    fn mark_visible(
        &self,
        i: usize,
        visible: &mut HashSet<usize>,
        done: &mut HashSet<usize>,
        visiting: &mut HashSet<usize>,
    ) -> bool {
        if done.contains(&i) {
            return visible.contains(&i);
        }
        let Some(c) = self.cats.get(&i) else {
            return false;
        };
        if !visiting.insert(i) {
            return false;
        }
        let mut any = c.cvars.iter().any(|v| self.cvars.contains_key(v))
            || c.pvars.iter().any(|v| self.pvars.contains_key(v));
        for &s in &c.categories {
            any |= self.mark_visible(s, visible, done, visiting);
        }
        visiting.remove(&i);
        done.insert(i);
        if any {
            visible.insert(i);
        }
        any
    }
}

fn reach(i: usize, cats: &HashMap<usize, &Category>, reached: &mut HashSet<usize>) {
    let mut stack = vec![i];
    while let Some(i) = stack.pop() {
        if reached.insert(i)
            && let Some(c) = cats.get(&i)
        {
            stack.extend(c.categories.iter().copied());
        }
    }
}
