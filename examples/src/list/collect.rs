//! Reads a [`Listing`] from the installed MPI through `mpit-safe`: every variable, category,
//! event type and source, every unbound variable's value and, when MPI is initialised, the
//! value of every variable bound to a communicator for `MPI_COMM_WORLD` (non-continuous
//! performance variables started in the listing's session first), and the holes.

// rsmpi in the native build; its names over the ABI library in the ABI build.
use mpi::topology::SimpleCommunicator;
#[cfg(mpit_abi)]
use mpit_safe::mpi;
use mpit_safe::{
    Bind, CvarInfo, Datatype, Error, Listing as Entries, MpiObject, Mpit, NoObject, PvarInfo,
    Session, Value,
};

use super::model::{Category, Counts, Cvar, EventType, Hole, Listing, Pvar, Read, Reading, Source};

/// Elements beyond this count are not read: a garbage count must not exhaust memory.
pub const MAX_ELEMENTS: usize = 1 << 20;

/// The name a reading for `MPI_COMM_WORLD` is labelled with.
pub const WORLD: &str = "MPI_COMM_WORLD";

/// Everything MPI_T lists now; `world` is `MPI_COMM_WORLD` when MPI is initialised (variables
/// bound to a communicator are then read for it).
pub fn collect(mpit: &Mpit, world: Option<&SimpleCommunicator>) -> Listing {
    let mpi_init = world.is_some();
    let (mut holes, mut errors) = (Vec::new(), Vec::new());
    let (cvars, cvar_count) = split("cvar", mpit.cvars(), &mut holes, &mut errors);
    let (pvars, pvar_count) = split("pvar", mpit.pvars(), &mut holes, &mut errors);
    let (categories, category_count) =
        split("category", mpit.categories(), &mut holes, &mut errors);
    let (events, sources) = collect_events(mpit, &mut holes, &mut errors);
    let cvars = cvars
        .iter()
        .map(|info| Cvar::new(info, read_cvar(mpit, info, world)))
        .collect();
    let pvars = {
        let session = mpit.session();
        pvars
            .iter()
            .map(|info| {
                let (read, started) = read_pvar(&session, info, world);
                Pvar::new(info, read, started)
            })
            .collect()
    };
    Listing {
        implementation: mpit_safe::sys::IMPLEMENTATION.to_owned(),
        version: mpit_safe::sys::IMPLEMENTATION_VERSION.to_owned(),
        library: mpit_safe::implementation().to_string(),
        library_version: mpit_safe::quirks::library_version(),
        event_api: mpit_safe::sys::HAS_EVENTS,
        mpi_init,
        thread_level: mpit.provided().to_string(),
        counts: Counts {
            cvars: cvar_count,
            pvars: pvar_count,
            categories: category_count,
        },
        cvars,
        pvars,
        categories: categories.iter().map(Category::from).collect(),
        events,
        sources,
        holes,
        errors,
    }
}

/// Event types and sources with their hints, where the header has the event API (elsewhere
/// every event call answers `NotSupported`: nothing to list, nothing missing).
fn collect_events(
    mpit: &Mpit,
    holes: &mut Vec<Hole>,
    errors: &mut Vec<String>,
) -> (Vec<EventType>, Vec<Source>) {
    if !mpit_safe::features().events {
        return (Vec::new(), Vec::new());
    }
    let (events, _) = split("event type", mpit.events(), holes, errors);
    let (sources, _) = split("source", mpit.sources(), holes, errors);
    let events = events
        .iter()
        .map(|e| EventType::new(e, hints_text(mpit.event_hints(e.index))))
        .collect();
    let sources = sources
        .iter()
        .map(|s| Source::new(s, hints_text(mpit.source_hints(s.index))))
        .collect();
    (events, sources)
}

/// The info hints MPI attaches to an event type or source, as `{key=value, ...}` (empty when
/// there are none).
fn hints_text(info: mpit_safe::Result<mpit_safe::Info>) -> String {
    match info.and_then(|i| i.entries()) {
        Ok(kv) if kv.is_empty() => String::new(),
        Ok(kv) => {
            let kv: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{{{}}}", kv.join(", "))
        }
        Err(e) => format!("{{hints: {e}}}"),
    }
}

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

/// The object a variable bound as `bind` is read for, and its name (`None` for no object):
/// `MPI_COMM_WORLD` for a communicator when MPI is initialised; `Err` when there is none.
fn object_for(
    bind: Bind,
    world: Option<&SimpleCommunicator>,
) -> Result<(&dyn MpiObject, Option<String>), Reading> {
    match (bind, world) {
        (Bind::NoObject, _) => Ok((&NoObject, None)),
        (Bind::Comm, Some(w)) => Ok((w, Some(WORLD.to_owned()))),
        _ => Err(Reading::Bound(bind)),
    }
}

fn read_cvar(mpit: &Mpit, info: &CvarInfo, world: Option<&SimpleCommunicator>) -> Read {
    let (obj, object) = match object_for(info.bind, world) {
        Ok(o) => o,
        Err(unread) => return (unread, None),
    };
    let read = if info.datatype == Datatype::Char {
        mpit.cvar_handle_for::<u8, _>(info.index, obj)
            .and_then(|h| {
                check_count(h.count())?;
                let s = h.read_string()?;
                Ok(Reading::Text(s.to_string_lossy().into_owned()))
            })
    } else {
        mpit.dyn_cvar_handle(info.index, obj).and_then(|h| {
            check_count(h.count())?;
            Ok(Reading::Values(h.read_values()?))
        })
    };
    (
        read.unwrap_or_else(|e| Reading::Failed(e.to_string())),
        object,
    )
}

/// Reads a performance variable in the listing's session (for `MPI_COMM_WORLD` if it is bound
/// to a communicator), starting it first unless it is continuous; returns what was read and
/// whether it was started.
fn read_pvar(
    session: &Result<Session<'_>, Error>,
    info: &PvarInfo,
    world: Option<&SimpleCommunicator>,
) -> (Read, bool) {
    let (obj, object) = match object_for(info.bind, world) {
        Ok(o) => o,
        Err(unread) => return ((unread, None), false),
    };
    let session = match session {
        Ok(s) => s,
        Err(e) => return ((Reading::Failed(format!("no session: {e}")), object), false),
    };
    let mut started = false;
    let read = session.dyn_handle(info.index, obj).and_then(|h| {
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
    ((reading, object), started)
}

/// Splits a listing into its entries and holes; a failed listing is one error.
fn split<T>(
    kind: &'static str,
    listing: Result<Entries<T>, Error>,
    holes: &mut Vec<Hole>,
    errors: &mut Vec<String>,
) -> (Vec<T>, Option<usize>) {
    match listing {
        Ok(l) => {
            holes.extend(l.holes.into_iter().map(|(index, e)| Hole {
                kind: kind.to_owned(),
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
