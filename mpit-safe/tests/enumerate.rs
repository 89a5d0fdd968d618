//! Enumeration through the safe API on the installed MPI (run by `scripts/test` on all six
//! implementations), after `MPI_Init`: MPICH registers its performance variables, sources and
//! event types only there, and Open MPI adds variables and categories (what exists before it
//! is covered by `refresh.rs` and the conformance sweeps of `mpit-conformance`). Nothing here
//! assumes a particular implementation's numbers: each test states the standard's rule it
//! checks and prints what it found.

use mpit_test_support::mpi::turn_after_init as turn;

use std::collections::HashSet;

use mpit_safe::{Error, ErrorClass, Mpit, PvarClass, ThreadLevel};

/// MPI-4.1 §16.3.6/7/9: a listing covers every index below the count exactly once, as an entry
/// or as a hole with a typed error, and entries carry their own index.
#[test]
fn listings_cover_every_index() {
    let t = turn();
    let mpit = &t.mpit;
    let cvars = mpit.cvars().unwrap();
    let pvars = mpit.pvars().unwrap();
    let cats = mpit.categories().unwrap();
    for (what, count, entries, holes) in [
        (
            "cvars",
            cvars.count,
            cvars.entries.iter().map(|e| e.index).collect::<Vec<_>>(),
            &cvars.holes,
        ),
        (
            "pvars",
            pvars.count,
            pvars.entries.iter().map(|e| e.index).collect(),
            &pvars.holes,
        ),
        (
            "categories",
            cats.count,
            cats.entries.iter().map(|e| e.index).collect(),
            &cats.holes,
        ),
    ] {
        let mut seen: Vec<usize> = entries.clone();
        seen.extend(holes.iter().map(|(i, _)| *i));
        seen.sort_unstable();
        assert_eq!(seen, (0..count).collect::<Vec<_>>(), "{what}");
        let classes: HashSet<String> = holes
            .iter()
            .map(|(_, e)| format!("{:?}", e.class()))
            .collect();
        eprintln!(
            "{} {}: {what}: {count} ({} holes, error classes {classes:?})",
            mpit_safe::sys::IMPLEMENTATION,
            mpit_safe::sys::IMPLEMENTATION_VERSION,
            holes.len()
        );
    }
    assert_eq!(cvars.count, mpit.cvar_count().unwrap());
}

/// MPI-4.1 §16.3.6/7/9: names are non-empty and unique within their kind (pvars: within their
/// class), and `*_get_index` maps each name back to its index.
#[test]
fn names_round_trip_through_get_index() {
    let t = turn();
    let mpit = &t.mpit;
    let cvars = mpit.cvars().unwrap();
    let mut names = HashSet::new();
    for v in &cvars.entries {
        assert!(!v.name.is_empty(), "cvar {} has an empty name", v.index);
        assert!(
            names.insert(v.name.clone()),
            "cvar name {} repeated",
            v.name
        );
        let name = v.name.to_str().unwrap();
        assert_eq!(mpit.cvar_index(name).unwrap(), Some(v.index), "cvar {name}");
    }
    let pvars = mpit.pvars().unwrap();
    let mut names = HashSet::new();
    for v in &pvars.entries {
        assert!(
            names.insert((v.name.clone(), v.class)),
            "pvar {} repeated",
            v.name
        );
        let name = v.name.to_str().unwrap();
        assert_eq!(
            mpit.pvar_index(name, v.class).unwrap(),
            Some(v.index),
            "pvar {name}"
        );
    }
    let cats = mpit.categories().unwrap();
    for c in &cats.entries {
        let name = c.name.to_str().unwrap();
        assert_eq!(
            mpit.category_index(name).unwrap(),
            Some(c.index),
            "category {name}"
        );
    }
    // A name no implementation has: "not found", not an error.
    assert_eq!(mpit.cvar_index("mpit_rs_no_such_variable").unwrap(), None);
    assert_eq!(
        mpit.pvar_index("mpit_rs_no_such_variable", PvarClass::Counter)
            .unwrap(),
        None
    );
    assert_eq!(
        mpit.category_index("mpit_rs_no_such_category").unwrap(),
        None
    );
    // A name with a NUL cannot be passed to C: a typed error.
    assert!(mpit.cvar_index("a\0b").is_err());
}

/// MPI-4.1 §16.3.6: "subsequent calls to this routine that query information about the same
/// variable must return the same information".
#[test]
fn info_queries_are_stable() {
    let t = turn();
    let mpit = &t.mpit;
    let first = mpit.cvars().unwrap();
    let second = mpit.cvars().unwrap();
    assert_eq!(first.entries, second.entries);
    assert_eq!(mpit.pvars().unwrap().entries, mpit.pvars().unwrap().entries);
    assert_eq!(
        mpit.categories().unwrap().entries,
        mpit.categories().unwrap().entries
    );
}

/// MPI-4.1 §16.3.9: member indices are valid indices of their kind, and no category contains
/// itself directly or transitively.
#[test]
fn categories_form_a_dag_of_valid_members() {
    let t = turn();
    let mpit = &t.mpit;
    let (nc, np) = (mpit.cvar_count().unwrap(), mpit.pvar_count().unwrap());
    let cats = mpit.categories().unwrap();
    let n = cats.count;
    let mut children = vec![Vec::new(); n];
    for c in &cats.entries {
        assert_eq!(c.cvars.len(), c.num_cvars);
        assert!(
            c.cvars.iter().all(|&i| i < nc),
            "{}: cvar member out of range",
            c.name
        );
        assert!(
            c.pvars.iter().all(|&i| i < np),
            "{}: pvar member out of range",
            c.name
        );
        assert!(
            c.categories.iter().all(|&i| i < n),
            "{}: subcategory out of range",
            c.name
        );
        children[c.index] = c.categories.clone();
    }
    // Depth-first search with colours: grey on the stack, black done.
    fn visit(v: usize, children: &[Vec<usize>], colour: &mut [u8], path: &mut Vec<usize>) {
        colour[v] = 1;
        path.push(v);
        for &w in &children[v] {
            assert_ne!(colour[w], 1, "category cycle through {path:?} -> {w}");
            if colour[w] == 0 {
                visit(w, children, colour, path);
            }
        }
        path.pop();
        colour[v] = 2;
    }
    let mut colour = vec![0u8; n];
    for v in 0..n {
        if colour[v] == 0 {
            visit(v, &children, &mut colour, &mut Vec::new());
        }
    }
}

/// MPI-4.1 §16.3.6/7/9: an index at or past the count is refused with an error (the standard
/// names `MPI_T_ERR_INVALID_INDEX`), never a crash.
#[test]
fn out_of_range_indices_are_typed_errors() {
    let t = turn();
    let mpit = &t.mpit;
    for (what, r) in [
        ("cvar", mpit.cvar_info(mpit.cvar_count().unwrap()).err()),
        ("pvar", mpit.pvar_info(mpit.pvar_count().unwrap()).err()),
        (
            "category",
            mpit.category_info(mpit.category_count().unwrap()).err(),
        ),
        ("cvar i32::MAX", mpit.cvar_info(i32::MAX as usize).err()),
    ] {
        let e = r.unwrap_or_else(|| panic!("{what}: an out-of-range index was accepted"));
        if e.class() != Some(ErrorClass::InvalidIndex) {
            eprintln!(
                "finding: {what} out of range gives {e:?}, the standard says MPI_T_ERR_INVALID_INDEX"
            );
        }
    }
    // Past C's int: refused before any call.
    assert!(mpit.cvar_info(usize::MAX).is_err());
}

/// MPI-4.1 §16.3.5: enumeration items have non-empty names, unique within their enumeration.
#[test]
fn enumerations_have_unique_item_names() {
    let t = turn();
    let mpit = &t.mpit;
    let cvars = mpit.cvars().unwrap();
    let mut enums = 0;
    for v in &cvars.entries {
        if let Some(e) = &v.enumtype {
            enums += 1;
            let names: HashSet<_> = e.items.iter().map(|i| i.name.clone()).collect();
            assert_eq!(
                names.len(),
                e.items.len(),
                "{}: duplicate item names in {}",
                v.name,
                e.name
            );
            assert!(!e.name.is_empty());
        }
    }
    eprintln!("{enums} control variables of enumeration type");
}

/// MPI-4.1 §16.3.4: initialisations nest; MPI_T stays usable until the last token is gone.
#[test]
fn tokens_nest() {
    let t = turn();
    let outer = &t.mpit;
    let inner = Mpit::init().unwrap();
    let n = inner.cvar_count().unwrap();
    inner.finalize().unwrap();
    assert_eq!(outer.cvar_count().unwrap(), n);
}

/// Below `MPI_THREAD_MULTIPLE` MPI_T must not be entered from two threads: a second thread's
/// token is refused with a typed error while the first lives, and allowed once it is gone.
#[test]
fn single_level_tokens_are_confined_to_one_thread() {
    let t = turn();
    let refused = std::thread::spawn(|| Mpit::init().map(|_| ()))
        .join()
        .unwrap();
    assert!(
        matches!(
            refused,
            Err(Error::ThreadLevelUnavailable {
                requested: ThreadLevel::Multiple,
                ..
            })
        ),
        "{refused:?}"
    );
    drop(t.mpit);
    let allowed = std::thread::spawn(|| Mpit::init().map(|m| m.provided()))
        .join()
        .unwrap();
    assert_eq!(allowed.unwrap(), ThreadLevel::Single);
}
