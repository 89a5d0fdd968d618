//! `mpit-list`: everything the installed MPI exposes through its tool information interface
//! (MPI_T), as a category tree, built only on the safe API of `mpit-safe`.
//!
//! Categories are nested by subcategory; each shows its control variables (with their current
//! value, scope, binding, datatype and verbosity) and performance variables (with class,
//! attributes and, for unbound ones, a current value). Variables in no category come last,
//! then the enumerations the listed variables use, then the holes (indices below a count whose
//! query failed), each with its error. Nothing the implementation returns makes it panic: a
//! failed query or read is printed as text.
//!
//! By default MPI is initialised (rsmpi's `mpi::initialize()`, after the MPI_T token, so the
//! variables that appear with `MPI_Init` are listed); under `mpiexec -n N` only rank 0 prints.
//!
//! ```text
//! mpit-list [OPTIONS]
//!
//!   --verbosity <LEVEL>   only variables of at most this verbosity (USER_BASIC .. MPIDEV_ALL,
//!                         or the C name MPI_T_VERBOSITY_...)
//!   --bind <KIND>         only variables bound to this kind of object (NO_OBJECT, MPI_COMM or
//!                         COMM, ...)
//!   --class <CLASS>       only performance variables of this class (COUNTER, TIMER, ...;
//!                         control variables are then not listed)
//!   --name <SUBSTRING>    only variables whose name contains SUBSTRING (ignoring ASCII case)
//!   --descriptions        print descriptions in the text listing
//!   --json                one JSON document: implementation, version, cvars, pvars,
//!                         categories, enums, holes
//!   --no-init             list without calling MPI_Init
//! ```
//!
//! Examples: `mpit-list --verbosity USER_BASIC`, `mpit-list --class counter --json`,
//! `mpiexec -n 2 mpit-list --name btl`.
#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::process::ExitCode;

use clap::Parser;
use mpi::traits::Communicator;
use mpit_safe::{
    Bind, CategoryInfo, CvarInfo, Datatype, EnumInfo, Error, EventTypeInfo, Listing, MpiString,
    Mpit, NoObject, PvarClass, PvarInfo, Session, SourceInfo, Value, Verbosity,
};
use serde_json::{Map, Value as Json, json};

/// Lists everything the installed MPI exposes through MPI_T, as a category tree.
#[derive(Parser, Debug)]
#[command(name = "mpit-list", version)]
struct Args {
    /// Only variables of at most this verbosity (USER_BASIC .. MPIDEV_ALL).
    #[arg(long, value_name = "LEVEL", value_parser = parse_verbosity)]
    verbosity: Option<Verbosity>,
    /// Only variables bound to this kind of object (NO_OBJECT, MPI_COMM or COMM, ...).
    #[arg(long, value_name = "KIND", value_parser = parse_bind)]
    bind: Option<Bind>,
    /// Only performance variables of this class (STATE, LEVEL, SIZE, PERCENTAGE,
    /// HIGHWATERMARK, LOWWATERMARK, COUNTER, AGGREGATE, TIMER, GENERIC).
    #[arg(long, value_name = "CLASS", value_parser = parse_class)]
    class: Option<PvarClass>,
    /// Only variables whose name contains this (ignoring ASCII case).
    #[arg(long, value_name = "SUBSTRING")]
    name: Option<String>,
    /// Print descriptions in the text listing (JSON always has them).
    #[arg(long)]
    descriptions: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
    /// Do not call MPI_Init (variables that appear with it are then missing).
    #[arg(long)]
    no_init: bool,
}

fn parse_verbosity(s: &str) -> Result<Verbosity, String> {
    s.parse::<Verbosity>().map_err(|e| {
        let names: Vec<_> = Verbosity::ALL_LEVELS.iter().map(|v| v.name()).collect();
        format!("{e} (expected one of {})", names.join(", "))
    })
}

fn parse_bind(s: &str) -> Result<Bind, String> {
    s.parse::<Bind>()
        .or_else(|_| format!("MPI_{}", s.trim()).parse::<Bind>())
        .map_err(|e| {
            let names: Vec<_> = Bind::ALL.iter().map(|b| b.name()).collect();
            format!("{e} (expected one of {})", names.join(", "))
        })
}

fn parse_class(s: &str) -> Result<PvarClass, String> {
    s.parse::<PvarClass>().map_err(|e| {
        let names: Vec<_> = PvarClass::ALL.iter().map(|c| c.name()).collect();
        format!("{e} (expected one of {})", names.join(", "))
    })
}

impl Args {
    fn any_filter(&self) -> bool {
        self.verbosity.is_some()
            || self.bind.is_some()
            || self.class.is_some()
            || self.name.is_some()
    }

    fn common(&self, name: &MpiString, verbosity: Verbosity, bind: Bind) -> bool {
        self.verbosity.is_none_or(|max| verbosity <= max)
            && self.bind.is_none_or(|b| b == bind)
            && self.name.as_ref().is_none_or(|n| {
                name.to_string_lossy()
                    .to_ascii_lowercase()
                    .contains(&n.to_ascii_lowercase())
            })
    }

    fn cvar_shown(&self, v: &CvarInfo) -> bool {
        self.class.is_none() && self.common(&v.name, v.verbosity, v.bind)
    }

    fn pvar_shown(&self, v: &PvarInfo) -> bool {
        self.class.is_none_or(|c| c == v.class) && self.common(&v.name, v.verbosity, v.bind)
    }

    fn describe_filters(&self) -> String {
        let mut f = Vec::new();
        if let Some(v) = self.verbosity {
            f.push(format!("verbosity <= {v}"));
        }
        if let Some(b) = self.bind {
            f.push(format!("bind {b}"));
        }
        if let Some(c) = self.class {
            f.push(format!("class {c} (performance variables only)"));
        }
        if let Some(n) = &self.name {
            f.push(format!("name contains {n:?}"));
        }
        f.join(", ")
    }
}

/// Elements beyond this count are not read: a garbage count must not exhaust memory.
const MAX_ELEMENTS: usize = 1 << 20;

/// Array elements printed in the text listing before "...".
const MAX_SHOWN_ELEMENTS: usize = 16;

/// What reading a variable gave.
enum Reading {
    /// The elements (any count, also zero or more than one).
    Values(Vec<Value>),
    /// An `MPI_CHAR` variable, as a string.
    Text(String),
    /// Bound to an object: not read.
    Bound(Bind),
    /// Allocating the handle or reading failed.
    Failed(String),
}

struct Cvar {
    info: CvarInfo,
    reading: Reading,
}

struct Pvar {
    info: PvarInfo,
    reading: Reading,
    /// A non-continuous variable this listing started in its session before reading it
    /// (reads of a stopped variable are refused by some implementations: MPICH answers
    /// `MPI_T_ERR_INVALID`).
    started: bool,
    /// What the values read break of their class's rules (MPI-4.1 §16.3.7), if anything:
    /// shown as a flag, not as a fact.
    rule_broken: Option<String>,
}

/// An index below a reported count whose query failed.
struct Hole {
    kind: &'static str,
    index: usize,
    error: String,
}

/// Everything read from MPI_T, before filtering.
struct Report {
    mpi_init: bool,
    thread_level: String,
    cvar_count: Option<usize>,
    pvar_count: Option<usize>,
    category_count: Option<usize>,
    cvars: Vec<Cvar>,
    pvars: Vec<Pvar>,
    categories: Vec<CategoryInfo>,
    holes: Vec<Hole>,
    /// Event types and sources with their info hints as text (empty without the MPI-4 event
    /// API).
    events: Vec<(EventTypeInfo, String)>,
    sources: Vec<(SourceInfo, String)>,
    /// Failures of a whole listing (e.g. the count query).
    errors: Vec<String>,
}

/// Event types and sources with their hints, where the header has the event API.
#[cfg(mpit_events)]
fn collect_events(
    mpit: &Mpit,
    holes: &mut Vec<Hole>,
    errors: &mut Vec<String>,
) -> EventsAndSources {
    let (events, _) = split("event type", mpit.events(), holes, errors);
    let (sources, _) = split("source", mpit.sources(), holes, errors);
    let events = events
        .into_iter()
        .map(|e| {
            let hints = hints_text(mpit.event_hints(e.index));
            (e, hints)
        })
        .collect();
    let sources = sources
        .into_iter()
        .map(|s| {
            let hints = hints_text(mpit.source_hints(s.index));
            (s, hints)
        })
        .collect();
    (events, sources)
}

/// An event type's line: name, elements, binding, verbosity, hints, description.
fn event_line(e: &EventTypeInfo, hints: &str) -> String {
    let elements: Vec<String> = e
        .elements
        .iter()
        .map(|el| format!("{}@{}", el.datatype, el.displacement))
        .collect();
    format!(
        "event {} [{}, bind {}, {}]{hints}: {}",
        e.name,
        elements.join(" "),
        e.bind,
        e.verbosity,
        e.description
    )
}

/// A source's line: name, ordering, clock, hints, description.
fn source_line(s: &SourceInfo, hints: &str) -> String {
    format!(
        "source {} [{:?}, {} ticks/s, max {} ticks]{hints}: {}",
        s.name, s.ordering, s.ticks_per_second, s.max_ticks, s.description
    )
}

/// The info hints MPI attaches to an event type or source, as ` {key=value, ...}` (empty when
/// there are none).
#[cfg(mpit_events)]
fn hints_text(info: mpit_safe::Result<mpit_safe::Info>) -> String {
    match info.and_then(|i| i.entries()) {
        Ok(kv) if kv.is_empty() => String::new(),
        Ok(kv) => {
            let kv: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!(" {{{}}}", kv.join(", "))
        }
        Err(e) => format!(" {{hints: {e}}}"),
    }
}

#[cfg(not(mpit_events))]
fn collect_events(
    _mpit: &Mpit,
    _holes: &mut Vec<Hole>,
    _errors: &mut Vec<String>,
) -> EventsAndSources {
    (Vec::new(), Vec::new())
}

/// Event types and sources, each with its hints as text.
type EventsAndSources = (Vec<(EventTypeInfo, String)>, Vec<(SourceInfo, String)>);

fn check_count(count: usize) -> Result<(), Error> {
    if count > MAX_ELEMENTS {
        Err(Error::invalid_value(format!(
            "count {count} is above {MAX_ELEMENTS}: not read"
        )))
    } else {
        Ok(())
    }
}

/// Turns the elements of an `MPI_CHAR` variable into text (up to the first NUL).
fn chars_to_text(values: Vec<Value>) -> Reading {
    let bytes: Vec<u8> = values
        .iter()
        .map_while(|v| match v {
            Value::Char(0) => None,
            Value::Char(c) => Some(*c),
            _ => Some(b'?'),
        })
        .collect();
    Reading::Text(String::from_utf8_lossy(&bytes).into_owned())
}

fn read_cvar(mpit: &Mpit, info: &CvarInfo) -> Reading {
    if info.bind != Bind::NoObject {
        return Reading::Bound(info.bind);
    }
    let read = if info.datatype == Datatype::Char {
        mpit.cvar_handle::<u8>(info.index).and_then(|h| {
            check_count(h.count())?;
            let s = h.read_string()?;
            Ok(Reading::Text(s.to_string_lossy().into_owned()))
        })
    } else {
        mpit.dyn_cvar_handle(info.index, &NoObject).and_then(|h| {
            check_count(h.count())?;
            Ok(Reading::Values(h.read_values()?))
        })
    };
    read.unwrap_or_else(|e| Reading::Failed(e.to_string()))
}

/// Reads a variable with no binding in the listing's session, starting it first unless it is
/// continuous; returns the reading and whether it was started.
fn read_pvar(session: &Result<Session<'_>, Error>, info: &PvarInfo) -> (Reading, bool) {
    if info.bind != Bind::NoObject {
        return (Reading::Bound(info.bind), false);
    }
    let session = match session {
        Ok(s) => s,
        Err(e) => return (Reading::Failed(format!("no session: {e}")), false),
    };
    let mut started = false;
    let read = session.dyn_handle(info.index, &NoObject).and_then(|h| {
        check_count(h.count())?;
        if !info.continuous {
            h.start()?;
            started = true;
        }
        h.read_values()
    });
    let reading = match read {
        Ok(v) if info.datatype == Datatype::Char => chars_to_text(v),
        Ok(v) => Reading::Values(v),
        Err(e) => Reading::Failed(e.to_string()),
    };
    (reading, started)
}

/// The rule of its class that a value read breaks (MPI-4.1 §16.3.7), if any.
fn rule_broken(info: &PvarInfo, reading: &Reading) -> Option<String> {
    let Reading::Values(values) = reading else {
        return None;
    };
    let bad = values.iter().find(|v| !info.class.value_conforms(v))?;
    let why = if !info.class.allows(bad.datatype()) {
        format!("{} is not a datatype of the class", bad.datatype())
    } else if info.class == PvarClass::Percentage {
        format!("{bad} is outside [0, 1]")
    } else {
        format!("{bad} is negative or not finite")
    };
    Some(format!("breaks the {} class's rules: {why}", info.class))
}

/// Splits a listing into its entries and holes; a failed listing is one error.
fn split<T>(
    kind: &'static str,
    listing: Result<Listing<T>, Error>,
    holes: &mut Vec<Hole>,
    errors: &mut Vec<String>,
) -> (Vec<T>, Option<usize>) {
    match listing {
        Ok(l) => {
            holes.extend(l.holes.into_iter().map(|(index, e)| Hole {
                kind,
                index,
                error: e.to_string(),
            }));
            (l.entries, Some(l.count))
        }
        Err(e) => {
            errors.push(format!("listing the {kind}s failed: {e}"));
            (Vec::new(), None)
        }
    }
}

fn collect(mpit: &Mpit, mpi_init: bool) -> Report {
    let (mut holes, mut errors) = (Vec::new(), Vec::new());
    let (cvars, cvar_count) = split("cvar", mpit.cvars(), &mut holes, &mut errors);
    let (pvars, pvar_count) = split("pvar", mpit.pvars(), &mut holes, &mut errors);
    let (categories, category_count) =
        split("category", mpit.categories(), &mut holes, &mut errors);
    let (events, sources) = collect_events(mpit, &mut holes, &mut errors);
    let cvars = cvars
        .into_iter()
        .map(|info| Cvar {
            reading: read_cvar(mpit, &info),
            info,
        })
        .collect();
    let pvars = {
        let session = mpit.session();
        pvars
            .into_iter()
            .map(|info| {
                let (reading, started) = read_pvar(&session, &info);
                Pvar {
                    rule_broken: rule_broken(&info, &reading),
                    reading,
                    started,
                    info,
                }
            })
            .collect()
    };
    Report {
        mpi_init,
        thread_level: mpit.provided().to_string(),
        cvar_count,
        pvar_count,
        category_count,
        cvars,
        pvars,
        categories,
        holes,
        events,
        sources,
        errors,
    }
}

/// The report seen through the filters: which variables and categories are shown, and how the
/// categories nest.
struct View<'r> {
    report: &'r Report,
    cvar_at: HashMap<usize, &'r Cvar>,
    pvar_at: HashMap<usize, &'r Pvar>,
    category_at: HashMap<usize, &'r CategoryInfo>,
    /// Categories with something shown in them or below them (all of them without filters).
    visible: HashSet<usize>,
    /// Top-level categories, in index order: those no category lists as a subcategory, then
    /// any category reachable only through a cycle.
    roots: Vec<usize>,
    uncategorized_cvars: Vec<&'r Cvar>,
    uncategorized_pvars: Vec<&'r Pvar>,
}

impl<'r> View<'r> {
    fn new(report: &'r Report, args: &Args) -> View<'r> {
        let cvar_at: HashMap<_, _> = report
            .cvars
            .iter()
            .filter(|v| args.cvar_shown(&v.info))
            .map(|v| (v.info.index, v))
            .collect();
        let pvar_at: HashMap<_, _> = report
            .pvars
            .iter()
            .filter(|v| args.pvar_shown(&v.info))
            .map(|v| (v.info.index, v))
            .collect();
        let category_at: HashMap<_, _> = report.categories.iter().map(|c| (c.index, c)).collect();

        let mut visible = HashSet::new();
        let mut done = HashSet::new();
        for c in &report.categories {
            mark_visible(
                c.index,
                &category_at,
                &cvar_at,
                &pvar_at,
                &mut visible,
                &mut done,
                &mut HashSet::new(),
            );
        }
        if !args.any_filter() {
            visible = category_at.keys().copied().collect();
        }

        let children: HashSet<usize> = report
            .categories
            .iter()
            .flat_map(|c| c.categories.iter().copied().filter(move |&s| s != c.index))
            .collect();
        let mut roots: Vec<usize> = report
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
        for c in &report.categories {
            if visible.contains(&c.index) && !reached.contains(&c.index) {
                roots.push(c.index);
                reach(c.index, &category_at, &mut reached);
            }
        }

        let in_cvars: HashSet<usize> = report
            .categories
            .iter()
            .flat_map(|c| c.cvars.iter().copied())
            .collect();
        let in_pvars: HashSet<usize> = report
            .categories
            .iter()
            .flat_map(|c| c.pvars.iter().copied())
            .collect();
        let uncategorized_cvars = report
            .cvars
            .iter()
            .filter(|v| cvar_at.contains_key(&v.info.index) && !in_cvars.contains(&v.info.index))
            .collect();
        let uncategorized_pvars = report
            .pvars
            .iter()
            .filter(|v| pvar_at.contains_key(&v.info.index) && !in_pvars.contains(&v.info.index))
            .collect();
        View {
            report,
            cvar_at,
            pvar_at,
            category_at,
            visible,
            roots,
            uncategorized_cvars,
            uncategorized_pvars,
        }
    }

    fn shown_cvars(&self) -> impl Iterator<Item = &'r Cvar> + '_ {
        self.report
            .cvars
            .iter()
            .filter(|v| self.cvar_at.contains_key(&v.info.index))
    }

    fn shown_pvars(&self) -> impl Iterator<Item = &'r Pvar> + '_ {
        self.report
            .pvars
            .iter()
            .filter(|v| self.pvar_at.contains_key(&v.info.index))
    }

    /// The enumerations the shown variables use, each with the names of its users.
    fn enums(&self) -> Vec<(&'r EnumInfo, Vec<String>)> {
        let mut out: Vec<(&EnumInfo, Vec<String>)> = Vec::new();
        let users = self
            .shown_cvars()
            .map(|v| (&v.info.enumtype, &v.info.name))
            .chain(self.shown_pvars().map(|v| (&v.info.enumtype, &v.info.name)));
        for (e, name) in users {
            let Some(e) = e else { continue };
            let name = name.to_string();
            match out.iter_mut().find(|(known, _)| *known == e) {
                Some((_, users)) => users.push(name),
                None => out.push((e, vec![name])),
            }
        }
        out
    }
}

/// Whether category `i` has a shown variable in it or below it; `visiting` breaks cycles.
fn mark_visible(
    i: usize,
    cats: &HashMap<usize, &CategoryInfo>,
    cvars: &HashMap<usize, &Cvar>,
    pvars: &HashMap<usize, &Pvar>,
    visible: &mut HashSet<usize>,
    done: &mut HashSet<usize>,
    visiting: &mut HashSet<usize>,
) -> bool {
    if done.contains(&i) {
        return visible.contains(&i);
    }
    let Some(c) = cats.get(&i) else { return false };
    if !visiting.insert(i) {
        return false;
    }
    let mut any = c.cvars.iter().any(|v| cvars.contains_key(v))
        || c.pvars.iter().any(|v| pvars.contains_key(v));
    for &s in &c.categories {
        any |= mark_visible(s, cats, cvars, pvars, visible, done, visiting);
    }
    visiting.remove(&i);
    done.insert(i);
    if any {
        visible.insert(i);
    }
    any
}

fn reach(i: usize, cats: &HashMap<usize, &CategoryInfo>, reached: &mut HashSet<usize>) {
    let mut stack = vec![i];
    while let Some(i) = stack.pop() {
        if reached.insert(i) {
            if let Some(c) = cats.get(&i) {
                stack.extend(c.categories.iter().copied());
            }
        }
    }
}

// ---------------------------------------------------------------- text

fn show_value(v: &Value, e: Option<&EnumInfo>) -> String {
    match (e, v) {
        (Some(e), Value::Int(i)) => match e.name_of(*i) {
            Some(n) => format!("{n} ({i})"),
            None => format!("{i} (not an item of {})", e.name),
        },
        _ => v.to_string(),
    }
}

fn show_reading(r: &Reading, e: Option<&EnumInfo>) -> String {
    match r {
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
    args: &'a Args,
}

impl Text<'_> {
    fn line(&mut self, depth: usize, s: &str) {
        let _ = writeln!(self.out, "{:w$}{s}", "", w = 2 * depth);
    }

    /// With `--descriptions`: the description of the item on the line above, under it.
    fn description(&mut self, depth: usize, d: &MpiString) {
        if self.args.descriptions && !d.is_empty() {
            for l in d.to_string_lossy().lines() {
                self.line(depth + 1, &format!("| {l}"));
            }
        }
    }

    fn cvar(&mut self, depth: usize, v: &Cvar) {
        let i = &v.info;
        self.line(
            depth,
            &format!(
                "cvar {} = {}   [scope {}, bind {}, {}, {}]",
                i.name,
                show_reading(&v.reading, i.enumtype.as_ref()),
                i.scope,
                i.bind,
                i.datatype,
                i.verbosity
            ),
        );
        self.description(depth, &i.description);
    }

    fn pvar(&mut self, depth: usize, v: &Pvar) {
        let i = &v.info;
        let mut value = show_reading(&v.reading, i.enumtype.as_ref());
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
                i.name,
                i.class,
                i.bind,
                i.datatype,
                i.verbosity,
                yes_no(i.readonly, "readonly"),
                yes_no(i.continuous, "continuous"),
                yes_no(i.atomic, "atomic"),
            ),
        );
        self.description(depth, &i.description);
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
        let filtered = self.args.any_filter();
        for v in &c.cvars {
            match view.cvar_at.get(v) {
                Some(v) => self.cvar(depth + 1, v),
                None if !filtered => self.line(
                    depth + 1,
                    &format!("cvar #{v}: <not listed: a hole or out of range>"),
                ),
                None => {}
            }
        }
        for v in &c.pvars {
            match view.pvar_at.get(v) {
                Some(v) => self.pvar(depth + 1, v),
                None if !filtered => self.line(
                    depth + 1,
                    &format!("pvar #{v}: <not listed: a hole or out of range>"),
                ),
                None => {}
            }
        }
        path.push(i);
        for &s in &c.categories {
            if view.visible.contains(&s) || (!filtered && !view.category_at.contains_key(&s)) {
                self.category(view, s, depth + 1, path);
            }
        }
        path.pop();
    }
}

fn opt_count(n: Option<usize>) -> String {
    n.map_or_else(|| "?".to_owned(), |n| n.to_string())
}

fn render_text(report: &Report, args: &Args) -> String {
    let view = View::new(report, args);
    let mut t = Text {
        out: String::new(),
        args,
    };
    t.line(
        0,
        &format!(
            "{} {}: MPI_T {} MPI_Init, thread level {}",
            mpit_safe::sys::IMPLEMENTATION,
            mpit_safe::sys::IMPLEMENTATION_VERSION,
            if report.mpi_init { "after" } else { "without" },
            report.thread_level,
        ),
    );
    t.line(
        0,
        &format!(
            "{} cvars, {} pvars, {} categories listed; {} holes (counts reported: {} cvars, {} pvars, {} categories)",
            report.cvars.len(),
            report.pvars.len(),
            report.categories.len(),
            report.holes.len(),
            opt_count(report.cvar_count),
            opt_count(report.pvar_count),
            opt_count(report.category_count),
        ),
    );
    if args.any_filter() {
        t.line(
            0,
            &format!(
                "shown ({}): {} cvars, {} pvars, {} categories",
                args.describe_filters(),
                view.cvar_at.len(),
                view.pvar_at.len(),
                view.visible.len()
            ),
        );
    }
    for e in &report.errors {
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
    if mpit_safe::sys::HAS_EVENTS {
        t.line(
            0,
            &format!(
                "event types: {}, sources: {}",
                report.events.len(),
                report.sources.len()
            ),
        );
        let lines = report
            .events
            .iter()
            .map(|(e, h)| event_line(e, h))
            .chain(report.sources.iter().map(|(s, h)| source_line(s, h)));
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
    t.line(0, &format!("holes: {}", report.holes.len()));
    for h in &report.holes {
        t.line(1, &format!("{} #{}: {}", h.kind, h.index, h.error));
    }
    t.out
}

// ---------------------------------------------------------------- JSON

fn value_json(v: &Value) -> Json {
    match *v {
        Value::Double(x) => float_json(x),
        Value::Float(x) => float_json(f64::from(x)),
        Value::CBool(b) => Json::Bool(b),
        Value::Char(_) | Value::WChar(_) | Value::Byte(_) => Json::String(v.to_string()),
        _ => match (v.as_i64(), v.as_u64()) {
            (Some(i), _) => json!(i),
            (None, Some(u)) => json!(u),
            (None, None) => Json::String(v.to_string()),
        },
    }
}

/// A finite float as a JSON number; NaN and infinities (which JSON lacks) as strings.
fn float_json(x: f64) -> Json {
    if x.is_finite() {
        json!(x)
    } else {
        Json::String(x.to_string())
    }
}

fn item_json(v: &Value, e: &EnumInfo) -> Json {
    match v {
        Value::Int(i) => e.name_of(*i).map_or(Json::Null, |n| json!(n.to_string())),
        _ => Json::Null,
    }
}

/// Adds `value` (a scalar for one element, else an array; `null` if not read), `count`,
/// `value_item` (enumeration item names), `bound_to` or `error`.
fn reading_json(o: &mut Map<String, Json>, r: &Reading, e: Option<&EnumInfo>) {
    match r {
        Reading::Values(vs) => {
            o.insert("count".into(), json!(vs.len()));
            let one = vs.len() == 1;
            o.insert(
                "value".into(),
                if one {
                    value_json(&vs[0])
                } else {
                    Json::Array(vs.iter().map(value_json).collect())
                },
            );
            if let Some(e) = e {
                let items: Vec<Json> = vs.iter().map(|v| item_json(v, e)).collect();
                o.insert(
                    "value_item".into(),
                    if one {
                        items[0].clone()
                    } else {
                        Json::Array(items)
                    },
                );
            }
        }
        Reading::Text(s) => {
            o.insert("value".into(), json!(s));
        }
        Reading::Bound(b) => {
            o.insert("value".into(), Json::Null);
            o.insert("bound_to".into(), json!(b.object_type()));
        }
        Reading::Failed(err) => {
            o.insert("value".into(), Json::Null);
            o.insert("error".into(), json!(err));
        }
    }
}

fn enum_json(e: &EnumInfo) -> Json {
    json!({
        "name": e.name.to_string(),
        "items": e.items.iter().map(|i| json!({"name": i.name.to_string(), "value": i.value})).collect::<Vec<_>>(),
    })
}

fn cvar_json(v: &Cvar) -> Json {
    let i = &v.info;
    let mut o = Map::new();
    o.insert("index".into(), json!(i.index));
    o.insert("name".into(), json!(i.name.to_string()));
    o.insert("scope".into(), json!(i.scope.name()));
    o.insert("bind".into(), json!(i.bind.name()));
    o.insert("datatype".into(), json!(i.datatype.c_name()));
    o.insert("verbosity".into(), json!(i.verbosity.name()));
    o.insert(
        "enum".into(),
        json!(i.enumtype.as_ref().map(|e| e.name.to_string())),
    );
    reading_json(&mut o, &v.reading, i.enumtype.as_ref());
    o.insert("description".into(), json!(i.description.to_string()));
    Json::Object(o)
}

fn pvar_json(v: &Pvar) -> Json {
    let i = &v.info;
    let mut o = Map::new();
    o.insert("index".into(), json!(i.index));
    o.insert("name".into(), json!(i.name.to_string()));
    o.insert("class".into(), json!(i.class.name()));
    o.insert("bind".into(), json!(i.bind.name()));
    o.insert("datatype".into(), json!(i.datatype.c_name()));
    o.insert("verbosity".into(), json!(i.verbosity.name()));
    o.insert("readonly".into(), json!(i.readonly));
    o.insert("continuous".into(), json!(i.continuous));
    o.insert("atomic".into(), json!(i.atomic));
    o.insert(
        "enum".into(),
        json!(i.enumtype.as_ref().map(|e| e.name.to_string())),
    );
    reading_json(&mut o, &v.reading, i.enumtype.as_ref());
    o.insert("started".into(), json!(v.started));
    if let Some(broken) = &v.rule_broken {
        o.insert("rule_broken".into(), json!(broken));
    }
    o.insert("description".into(), json!(i.description.to_string()));
    Json::Object(o)
}

fn render_json(report: &Report, args: &Args) -> String {
    let view = View::new(report, args);
    let filtered = args.any_filter();
    let roots: HashSet<usize> = view.roots.iter().copied().collect();
    let categories: Vec<Json> = report
        .categories
        .iter()
        .filter(|c| view.visible.contains(&c.index))
        .map(|c| {
            let keep = |list: &[usize], shown: &dyn Fn(&usize) -> bool| -> Vec<usize> {
                list.iter()
                    .copied()
                    .filter(|i| !filtered || shown(i))
                    .collect()
            };
            json!({
                "index": c.index,
                "name": c.name.to_string(),
                "description": c.description.to_string(),
                "root": roots.contains(&c.index),
                "cvars": keep(&c.cvars, &|i| view.cvar_at.contains_key(i)),
                "pvars": keep(&c.pvars, &|i| view.pvar_at.contains_key(i)),
                "categories": keep(&c.categories, &|i| view.visible.contains(i)),
                "events": c.num_events.map(|_| c.events.clone()),
            })
        })
        .collect();
    let doc = json!({
        "implementation": mpit_safe::sys::IMPLEMENTATION,
        "version": mpit_safe::sys::IMPLEMENTATION_VERSION,
        "library": mpit_safe::implementation().to_string(),
        "library_version": mpit_safe::quirks::library_version(),
        "mpi_init": report.mpi_init,
        "thread_level": report.thread_level,
        "filters": {
            "verbosity": args.verbosity.map(|v| v.name()),
            "bind": args.bind.map(|b| b.name()),
            "class": args.class.map(|c| c.name()),
            "name": args.name,
        },
        "counts": {
            "cvars": report.cvar_count,
            "pvars": report.pvar_count,
            "categories": report.category_count,
            "holes": report.holes.len(),
        },
        "cvars": view.shown_cvars().map(cvar_json).collect::<Vec<_>>(),
        "pvars": view.shown_pvars().map(pvar_json).collect::<Vec<_>>(),
        "categories": categories,
        "uncategorized": {
            "cvars": view.uncategorized_cvars.iter().map(|v| v.info.index).collect::<Vec<_>>(),
            "pvars": view.uncategorized_pvars.iter().map(|v| v.info.index).collect::<Vec<_>>(),
        },
        "enums": view.enums().iter().map(|(e, users)| {
            let mut j = enum_json(e);
            j["used_by"] = json!(users);
            j
        }).collect::<Vec<_>>(),
        "holes": report.holes.iter().map(|h| json!({"kind": h.kind, "index": h.index, "error": h.error})).collect::<Vec<_>>(),
        "events": {
            "event_api": mpit_safe::sys::HAS_EVENTS,
            "event_types": report.events.iter().map(|(e, hints)| json!({
                "index": e.index,
                "name": e.name.to_string(),
                "verbosity": e.verbosity.name(),
                "bind": e.bind.name(),
                "elements": e.elements.iter().map(|el| json!({
                    "datatype": el.datatype.c_name(),
                    "displacement": el.displacement,
                })).collect::<Vec<_>>(),
                "enum": e.enumtype.as_ref().map(|en| en.name.to_string()),
                "hints": hints.trim(),
                "description": e.description.to_string(),
            })).collect::<Vec<_>>(),
            "sources": report.sources.iter().map(|(s, hints)| json!({
                "index": s.index,
                "name": s.name.to_string(),
                "ordering": format!("{:?}", s.ordering),
                "ticks_per_second": s.ticks_per_second,
                "max_ticks": s.max_ticks,
                "hints": hints.trim(),
                "description": s.description.to_string(),
            })).collect::<Vec<_>>(),
        },
        "errors": report.errors,
    });
    let mut s = serde_json::to_string_pretty(&doc)
        .unwrap_or_else(|e| format!("{{\"errors\": [{:?}]}}", e.to_string()));
    s.push('\n');
    s
}

// ---------------------------------------------------------------- main

/// Whether a launcher says this process is not rank 0 (for `--no-init`, where MPI cannot say).
fn launcher_rank_nonzero() -> bool {
    ["PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"]
        .iter()
        .any(|k| std::env::var(k).is_ok_and(|r| r.trim() != "0"))
}

/// Writes the whole output; a closed pipe (`mpit-list | head`) is not an error.
fn emit(s: &str) -> Result<(), String> {
    let mut out = io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(format!("writing: {e}")),
        _ => Ok(()),
    }
}

fn run(args: &Args) -> Result<(), String> {
    // The MPI_T token first, then MPI_Init: variables that appear with MPI_Init are listed, and
    // the token is dropped (MPI_T_finalize) before the universe (MPI_Finalize).
    let mpit = Mpit::init().map_err(|e| format!("MPI_T_init_thread failed: {e}"))?;
    let universe = if args.no_init {
        None
    } else {
        Some(mpi::initialize().ok_or("MPI_Init: MPI was already initialised")?)
    };
    let rank0 = match &universe {
        Some(u) => u.world().rank() == 0,
        None => !launcher_rank_nonzero(),
    };
    let result = if rank0 {
        let report = collect(&mpit, universe.is_some());
        let text = if args.json {
            render_json(&report, args)
        } else {
            render_text(&report, args)
        };
        emit(&text)
    } else {
        Ok(())
    };
    drop(mpit);
    drop(universe);
    result
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpit-list: {e}");
            ExitCode::FAILURE
        }
    }
}
