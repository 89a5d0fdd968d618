//! Control variables written from text (`DynCvarHandle::write_str`), after `MPI_Init`, on the
//! installed MPI. Each test states the rule it checks and prints what it found.

use mpit_safe::{
    Bind, CvarInfo, Datatype, DynCvarHandle, Error, ErrorClass, Mpit, NoObject, Value, sys,
};
use mpit_test_support::mpi::turn_after_init;

/// The unbound, single-element control variables whose scope allows a write (MPI-4.1 §16.3.6:
/// every scope but constant and read-only), with their handles.
fn writable_single<'m>(
    mpit: &'m Mpit,
    cvars: &'m [CvarInfo],
    keep: impl Fn(&CvarInfo) -> bool,
) -> impl Iterator<Item = (&'m CvarInfo, DynCvarHandle<'m>, Value)> {
    cvars
        .iter()
        .filter(move |v| v.bind == Bind::NoObject && v.scope.is_writable() && keep(v))
        .filter_map(|v| {
            let h = mpit.dyn_cvar_handle(v.index, &NoObject).ok()?;
            // A read refused by a quirk guard or with an invalid value: not material here.
            let values = h.read_values().ok()?;
            (values.len() == 1).then(|| (v, h, values[0]))
        })
}

/// Whether a write was refused in one of the standard's two ways (MPI-4.1 §16.3.6): not now,
/// or never.
fn refused(e: &Error) -> bool {
    e.is(ErrorClass::CvarSetNotNow) || e.is(ErrorClass::CvarSetNever)
}

/// A value of `v`'s datatype other than `v`, near it.
fn another(v: Value) -> Option<Value> {
    let dt = v.datatype();
    if dt.is_floating() {
        return Value::from_f64(dt, v.as_f64()? + 1.0).ok();
    }
    let i = v.as_i64()?;
    Value::from_i64(dt, i + 1)
        .or_else(|_| Value::from_i64(dt, i - 1))
        .ok()
}

/// Writes `text` to the variable, reads it back, and restores the old value from `old_text`:
/// the values read back then and after the restore. `None` (noted in `tried`) when the write
/// was refused in one of the standard's ways or by a quirk guard; any other error fails.
fn write_read_restore(
    v: &CvarInfo,
    h: &DynCvarHandle<'_>,
    text: &str,
    old_text: &str,
    tried: &mut Vec<String>,
) -> Option<(Vec<Value>, Vec<Value>)> {
    match h.write_str(text) {
        Ok(()) => {}
        Err(e) if refused(&e) || matches!(e, Error::KnownCrash(_)) => {
            tried.push(format!("{} ({}): {e}", v.name, v.scope));
            return None;
        }
        Err(e) => panic!("{}: write_str({text:?}): {e:?}", v.name),
    }
    let back = h.read_values().unwrap();
    h.write_str(old_text).unwrap();
    Some((back, h.read_values().unwrap()))
}

/// MPI-4.1 §16.3.6: a write that succeeds takes effect. The text `Display` writes for a new
/// value of a numeric variable, given to `write_str`, sets the variable to that value: reading
/// back returns it. Checked on the first writable unbound numeric variable without an
/// enumeration that accepts a write; the old value is restored from its text too.
#[test]
fn write_str_of_a_number_takes_effect() {
    let t = turn_after_init();
    let cvars = t.mpit.cvars().unwrap();
    let numeric = |v: &CvarInfo| v.datatype != Datatype::Char && v.enumtype.is_none();
    let mut tried = Vec::new();
    for (v, h, old) in writable_single(&t.mpit, &cvars.entries, numeric) {
        let Some(new) = another(old) else { continue };
        let Some((back, restored)) =
            write_read_restore(v, &h, &new.to_string(), &old.to_string(), &mut tried)
        else {
            continue;
        };
        assert_eq!(back, [new], "{}: wrote {new:?} as text", v.name);
        assert_eq!(restored, [old], "{}: restore", v.name);
        eprintln!(
            "{}: {} ({}, {}) {old} -> {new} from text, read back, restored",
            sys::IMPLEMENTATION,
            v.name,
            v.datatype,
            v.scope
        );
        return;
    }
    eprintln!(
        "nothing to test on {}: no writable unbound numeric control variable accepted a write \
         after MPI_Init (refused: {tried:?})",
        sys::IMPLEMENTATION
    );
}

/// A control variable with an enumeration (`MPI_T_enum`, MPI-4.1 §16.3.5) is written by an
/// item's name: reading back gives that item's value. Checked on the first writable unbound
/// one that accepts a write, with an item other than the current one where there is one; the
/// old item is restored by its name.
#[test]
fn write_str_takes_an_enum_items_name() {
    let t = turn_after_init();
    let cvars = t.mpit.cvars().unwrap();
    let mut tried = Vec::new();
    for (v, h, old) in writable_single(&t.mpit, &cvars.entries, |v| v.enumtype.is_some()) {
        let e = v.enumtype.as_ref().unwrap();
        let Value::Int(old_int) = old else { continue };
        let Some(old_item) = e.name_of(old_int) else {
            tried.push(format!("{}: {old_int} is not an item", v.name));
            continue;
        };
        let item = e
            .items
            .iter()
            .find(|i| i.value != old_int)
            .unwrap_or(&e.items[0]);
        let name = item.name.to_str().unwrap();
        let old_name = old_item.to_str().unwrap();
        let Some((back, restored)) = write_read_restore(v, &h, name, old_name, &mut tried) else {
            continue;
        };
        assert_eq!(
            back,
            [Value::Int(item.value)],
            "{}: wrote item {name:?}",
            v.name
        );
        assert_eq!(restored, [old], "{}: restore", v.name);
        eprintln!(
            "{}: {} ({} items) {old_item} -> {name} by name, read back {}, restored",
            sys::IMPLEMENTATION,
            v.name,
            e.items.len(),
            back[0]
        );
        return;
    }
    eprintln!(
        "nothing to test on {}: no writable unbound control variable with an enumeration \
         accepted a write after MPI_Init (tried: {tried:?})",
        sys::IMPLEMENTATION
    );
}

/// Text that is not a value of the variable's datatype, or has the wrong number of elements,
/// is a typed error before MPI is called: the variable keeps its value. Checked on every
/// writable unbound single-element variable (numeric ones and strings).
#[test]
fn bad_text_is_refused_before_mpi() {
    let t = turn_after_init();
    let cvars = t.mpit.cvars().unwrap();
    let (mut numbers, mut strings) = (0, 0);
    for (v, h, before) in writable_single(&t.mpit, &cvars.entries, |_| true) {
        let bad: &[&str] = if v.enumtype.is_some() {
            &["no such item", "1, 2"]
        } else if v.datatype.is_floating() {
            &["1.5.2", "0x10", "1, 2"]
        } else if v.datatype.is_integer() {
            &["1.5", "one", "1, 2", "99999999999999999999999"]
        } else {
            continue;
        };
        for text in bad {
            let e = h.write_str(text).unwrap_err();
            assert!(
                matches!(e, Error::Parse(_) | Error::NotRepresentable(_)),
                "{} ({}): {text:?}: {e:?}",
                v.name,
                v.datatype
            );
        }
        assert_eq!(h.read_values().unwrap()[0], before, "{}", v.name);
        numbers += 1;
    }
    // Strings: the handle's count includes the NUL, so a string of `count` bytes does not fit.
    for v in cvars.entries.iter().filter(|v| {
        v.bind == Bind::NoObject && v.scope.is_writable() && v.datatype == Datatype::Char
    }) {
        let Ok(h) = t.mpit.dyn_cvar_handle(v.index, &NoObject) else {
            continue;
        };
        let long = "x".repeat(h.count());
        assert!(
            matches!(h.write_str(&long), Err(Error::CountMismatch(_))),
            "{}",
            v.name
        );
        assert!(matches!(
            h.write_str("a\0b"),
            Err(Error::InteriorNul { position: 1 })
        ));
        strings += 1;
    }
    eprintln!(
        "{}: bad text refused on {numbers} numeric and {strings} string variables",
        sys::IMPLEMENTATION
    );
    if numbers == 0 {
        eprintln!(
            "nothing to test on {}: no writable unbound numeric control variable",
            sys::IMPLEMENTATION
        );
    }
}

/// What a variable of several elements takes: exactly `count` comma-separated elements, which
/// a write that succeeds sets (read back, then restored); any other number of elements is a
/// `CountMismatch` before MPI is called.
#[test]
fn lists_need_the_count() {
    let t = turn_after_init();
    let cvars = t.mpit.cvars().unwrap();
    let (mut n, mut tried) = (0, Vec::new());
    for v in cvars.entries.iter().filter(|v| {
        v.bind == Bind::NoObject && v.scope.is_writable() && v.datatype != Datatype::Char
    }) {
        let Ok(h) = t.mpit.dyn_cvar_handle(v.index, &NoObject) else {
            continue;
        };
        if h.count() < 2 {
            continue;
        }
        let one_more = vec!["0"; h.count() + 1].join(",");
        assert!(
            matches!(h.write_str(&one_more), Err(Error::CountMismatch(_))),
            "{}",
            v.name
        );
        n += 1;
        // Every element changed, as a list: the new values read back; then restored.
        let Ok(before) = h.read_values() else {
            continue;
        };
        let Some(after) = before
            .iter()
            .map(|&x| another(x))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let text = |vs: &[Value]| {
            vs.iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some((back, restored)) =
            write_read_restore(v, &h, &text(&after), &text(&before), &mut tried)
        else {
            continue;
        };
        assert_eq!(back, after, "{}: {}", v.name, text(&after));
        assert_eq!(restored, before, "{}: restore", v.name);
        eprintln!(
            "{}: {} [{}] -> [{}] from a list, read back, restored",
            sys::IMPLEMENTATION,
            v.name,
            text(&before),
            text(&after)
        );
    }
    if n == 0 {
        eprintln!(
            "nothing to test on {}: no writable unbound variable of several elements",
            sys::IMPLEMENTATION
        );
    } else {
        eprintln!(
            "{}: {n} variables of several elements refuse one element too many; writes \
             refused: {tried:?}",
            sys::IMPLEMENTATION
        );
    }
}

/// A dynamic handle reads an `MPI_CHAR` variable as one string (`read_string`, `read_text`),
/// the same string the typed `u8` handle reads, with no NUL in it; other datatypes are a type
/// mismatch for `read_string` and read as their values' text.
#[test]
fn a_string_variable_reads_as_one_string_through_the_dynamic_handle() {
    let t = turn_after_init();
    let cvars = t.mpit.cvars().unwrap().entries;
    let (mut strings, mut others) = (0, 0);
    for v in cvars.iter().filter(|v| v.bind == Bind::NoObject) {
        let Ok(h) = t.mpit.dyn_cvar_handle(v.index, &NoObject) else {
            continue;
        };
        if v.datatype == Datatype::Char {
            let Ok(typed) = t.mpit.cvar_handle::<u8>(v.index) else {
                continue;
            };
            let Ok(expected) = typed.read_string() else {
                continue;
            };
            let s = h.read_string().unwrap();
            assert_eq!(s, expected, "{}", v.name);
            let text = h.read_text().unwrap();
            assert!(!text.contains('\0'), "{}: {text:?}", v.name);
            assert_eq!(text, expected.to_string_lossy(), "{}", v.name);
            strings += 1;
        } else if let Ok(values) = h.read_values() {
            let e = h.read_string().unwrap_err();
            assert!(matches!(e, Error::TypeMismatch { .. }), "{}: {e}", v.name);
            let text = h.read_text().unwrap();
            assert_eq!(text.split(',').count(), values.len(), "{}: {text}", v.name);
            others += 1;
        }
    }
    println!("{strings} MPI_CHAR variables read as strings, {others} others as values");
    assert!(others > 0, "no readable control variable");
    let char_vars = cvars
        .iter()
        .filter(|v| v.datatype == Datatype::Char)
        .count();
    assert!(
        char_vars == 0 || strings > 0,
        "{char_vars} MPI_CHAR variables and none read as a string"
    );
}
