//! `mpit-list`'s text listing: a pure function of a [`Listing`], the filters and
//! `--descriptions`.

use std::fmt::Write as _;

use mpit_safe::Value;

use mpit_safe::Family;

use super::filter::Filters;
use super::model::{Cvar, Enum, EventType, Listing, Pvar, Reading, Source, Variable};
use super::tree::View;

/// Array elements printed before "...".
pub const MAX_SHOWN_ELEMENTS: usize = 16;

/// The text listing of `listing` through `filters`; with `descriptions`, each item's
/// description under it.
pub fn render(listing: &Listing, filters: &Filters, descriptions: bool) -> String {
    let view = View::new(listing, filters);
    let mut t = Text {
        out: String::new(),
        filters,
        descriptions,
        family: super::env::family(listing),
    };
    t.line(
        0,
        &format!(
            "{} {}: MPI_T {} MPI_Init, thread level {}",
            listing.implementation,
            listing.version,
            if listing.mpi_init { "after" } else { "without" },
            listing.thread_level,
        ),
    );
    t.line(
        0,
        &format!(
            "{} cvars, {} pvars, {} categories listed; {} holes (counts reported: {} cvars, {} pvars, {} categories)",
            listing.cvars.len(),
            listing.pvars.len(),
            listing.categories.len(),
            listing.holes.len(),
            opt_count(listing.counts.cvars),
            opt_count(listing.counts.pvars),
            opt_count(listing.counts.categories),
        ),
    );
    if filters.any() {
        t.line(
            0,
            &format!(
                "shown ({}): {} cvars, {} pvars, {} categories",
                filters.describe(),
                view.cvar_at.len(),
                view.pvar_at.len(),
                view.visible.len()
            ),
        );
    }
    for e in &listing.errors {
        t.line(0, &format!("error: {e}"));
    }
    t.line(0, "");

    let mut path = Vec::new();
    for &r in &view.roots {
        t.category(&view, r, 0, &mut path);
    }
    if !view.uncategorized_cvars.is_empty() || !view.uncategorized_pvars.is_empty() {
        t.line(
            0,
            &format!(
                "uncategorized ({} cvars, {} pvars)",
                view.uncategorized_cvars.len(),
                view.uncategorized_pvars.len()
            ),
        );
        for v in &view.uncategorized_cvars {
            t.cvar(1, v);
        }
        for v in &view.uncategorized_pvars {
            t.pvar(1, v);
        }
    }

    let enums = view.enums();
    t.line(0, "");
    t.line(
        0,
        &format!("enumerations used by the listed variables: {}", enums.len()),
    );
    for (e, users) in &enums {
        let items: Vec<String> = e
            .items
            .iter()
            .map(|i| format!("{}={}", i.name, i.value))
            .collect();
        t.line(
            1,
            &format!(
                "enum {} ({} items): {}",
                e.name,
                e.items.len(),
                items.join(", ")
            ),
        );
        let mut used = users.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        if users.len() > 5 {
            let _ = write!(used, " and {} more", users.len() - 5);
        }
        t.line(2, &format!("used by {used}"));
    }

    t.line(0, "");
    if listing.event_api {
        t.line(
            0,
            &format!(
                "event types: {}, sources: {}",
                listing.events.len(),
                listing.sources.len()
            ),
        );
        let lines = listing
            .events
            .iter()
            .map(event_line)
            .chain(listing.sources.iter().map(source_line));
        for l in lines {
            t.line(1, &l);
        }
    } else {
        t.line(
            0,
            "event types and sources: this MPI's header has no MPI-4 event API",
        );
    }

    t.line(0, "");
    let holes: Vec<_> = listing
        .holes
        .iter()
        .filter(|h| filters.hole_shown(h))
        .collect();
    if holes.len() == listing.holes.len() {
        t.line(0, &format!("holes: {}", listing.holes.len()));
    } else {
        t.line(
            0,
            &format!(
                "holes: {} ({} listed: {})",
                listing.holes.len(),
                holes.len(),
                filters.holes_hidden_because()
            ),
        );
    }
    for h in holes {
        t.line(1, &format!("{} #{}: {}", h.kind, h.index, h.error));
    }
    t.out
}

fn opt_count(n: Option<usize>) -> String {
    n.map_or_else(|| "?".to_owned(), |n| n.to_string())
}

/// The hints as they follow a name: ` {key=value, ...}`, or nothing.
fn hints(h: &str) -> String {
    if h.is_empty() {
        String::new()
    } else {
        format!(" {h}")
    }
}

/// An event type's line: name, elements, binding, verbosity, hints, description.
fn event_line(e: &EventType) -> String {
    let elements: Vec<String> = e
        .elements
        .iter()
        .map(|el| format!("{}@{}", el.datatype, el.displacement))
        .collect();
    format!(
        "event {} [{}, bind {}, {}]{}: {}",
        e.name,
        elements.join(" "),
        e.bind,
        e.verbosity,
        hints(&e.hints),
        e.description
    )
}

/// A source's line: name, ordering, clock, hints, description.
fn source_line(s: &Source) -> String {
    format!(
        "source {} [{:?}, {} ticks/s, max {} ticks]{}: {}",
        s.name,
        s.ordering,
        s.ticks_per_second,
        s.max_ticks,
        hints(&s.hints),
        s.description
    )
}

fn show_value(v: &Value, e: Option<&Enum>) -> String {
    match (e, v) {
        (Some(e), Value::Int(i)) => match e.name_of(*i) {
            Some(n) => format!("{n} ({i})"),
            None => format!("{i} (not an item of {})", e.name),
        },
        _ => v.to_string(),
    }
}

/// A variable's value as text: what reading it gave, enumeration items by name, and the
/// object it was read for.
fn show_reading(v: &Variable) -> String {
    let value = show_value_of(v);
    match &v.object {
        Some(o) => format!("{value} (for {o})"),
        None => value,
    }
}

fn show_value_of(v: &Variable) -> String {
    let e = v.enumtype.as_ref();
    match &v.reading {
        Reading::Values(vs) if vs.len() == 1 => show_value(&vs[0], e),
        Reading::Values(vs) => {
            let mut s: Vec<String> = vs
                .iter()
                .take(MAX_SHOWN_ELEMENTS)
                .map(|v| show_value(v, e))
                .collect();
            if vs.len() > MAX_SHOWN_ELEMENTS {
                s.push(format!("... ({} elements)", vs.len()));
            }
            format!("[{}]", s.join(", "))
        }
        Reading::Text(s) => format!("{s:?}"),
        Reading::Bound(b) => format!("(bound to {})", b.object_type().unwrap_or("?")),
        Reading::Failed(err) => format!("<error: {err}>"),
    }
}

fn yes_no(b: bool, name: &str) -> String {
    if b {
        name.to_owned()
    } else {
        format!("not {name}")
    }
}

struct Text<'a> {
    out: String,
    filters: &'a Filters,
    descriptions: bool,
    /// The implementation's family: how its cvars are set from the environment.
    family: Family,
}

impl Text<'_> {
    fn line(&mut self, depth: usize, s: &str) {
        let _ = writeln!(self.out, "{:w$}{s}", "", w = 2 * depth);
    }

    /// With `--descriptions`: the description of the item on the line above, under it.
    fn description(&mut self, depth: usize, d: &str) {
        if self.descriptions && !d.is_empty() {
            for l in d.lines() {
                self.line(depth + 1, &format!("| {l}"));
            }
        }
    }

    fn cvar(&mut self, depth: usize, v: &Cvar) {
        let env = super::env::variable(self.family, v)
            .map(|e| format!(", env {e}"))
            .unwrap_or_default();
        self.line(
            depth,
            &format!(
                "cvar {} = {}   [scope {}, bind {}, {}, {}{env}]",
                v.var.name,
                show_reading(&v.var),
                v.scope,
                v.var.bind,
                v.var.datatype,
                v.var.verbosity
            ),
        );
        self.description(depth, &v.var.description);
    }

    fn pvar(&mut self, depth: usize, v: &Pvar) {
        let mut value = show_reading(&v.var);
        if v.started {
            value.push_str(" (started for this listing)");
        }
        if let Some(broken) = &v.rule_broken {
            let _ = write!(value, " (!! {broken})");
        }
        self.line(
            depth,
            &format!(
                "pvar {} = {value}   [class {}, bind {}, {}, {}, {}, {}, {}]",
                v.var.name,
                v.class,
                v.var.bind,
                v.var.datatype,
                v.var.verbosity,
                yes_no(v.readonly, "readonly"),
                yes_no(v.continuous, "continuous"),
                yes_no(v.atomic, "atomic"),
            ),
        );
        self.description(depth, &v.var.description);
    }

    fn category(&mut self, view: &View<'_>, i: usize, depth: usize, path: &mut Vec<usize>) {
        let Some(c) = view.category_at.get(&i) else {
            self.line(
                depth,
                &format!("category #{i}: <not listed: a hole or out of range>"),
            );
            return;
        };
        if path.contains(&i) {
            self.line(
                depth,
                &format!("category {} <cycle: already above>", c.name),
            );
            return;
        }
        let events = match c.num_events {
            Some(n) if n > 0 => format!(", {n} event types"),
            _ => String::new(),
        };
        self.line(
            depth,
            &format!(
                "category {} ({} cvars, {} pvars, {} subcategories{events})",
                c.name, c.num_cvars, c.num_pvars, c.num_categories
            ),
        );
        self.description(depth, &c.description);
        // Members not listed (holes, or indices out of range) show where holes are listed.
        let (cvar_holes, pvar_holes, category_holes) = (
            self.filters.hole_kind_shown("cvar"),
            self.filters.hole_kind_shown("pvar"),
            self.filters.hole_kind_shown("category"),
        );
        for v in &c.cvars {
            match view.cvar_at.get(v) {
                Some(v) => self.cvar(depth + 1, v),
                None if cvar_holes && !view.cvar_filtered_out(*v) => self.line(
                    depth + 1,
                    &format!("cvar #{v}: <not listed: a hole or out of range>"),
                ),
                None => {}
            }
        }
        for v in &c.pvars {
            match view.pvar_at.get(v) {
                Some(v) => self.pvar(depth + 1, v),
                None if pvar_holes && !view.pvar_filtered_out(*v) => self.line(
                    depth + 1,
                    &format!("pvar #{v}: <not listed: a hole or out of range>"),
                ),
                None => {}
            }
        }
        path.push(i);
        for &s in &c.categories {
            if view.visible.contains(&s) || (category_holes && !view.category_at.contains_key(&s)) {
                self.category(view, s, depth + 1, path);
            }
        }
        path.pop();
    }
}
