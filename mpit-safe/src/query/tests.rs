//! Tests of the queries against the installed MPI: the string convention with first buffers
//! too small, the visitors against the listings, the scan fallback against `*_get_index`.

#![forbid(unsafe_code)]

use std::ops::ControlFlow;

use mpit_core::{MpiStr, MpiString, Result};

use super::scratch::{DESC_BUF, Described, NAME_BUF, Scratch, described_in};
use super::*;
use crate::ffi::{Category, Cvar, Pvar};

/// The tests of this binary take turns: below `MPI_THREAD_MULTIPLE` MPI_T is confined to one
/// thread at a time.
fn turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every name and description of `kind`, fetched by [`described_in`] with first buffers of
/// `N` and `D` bytes, not cleared between the calls, through `get(index, name,
/// description)`.
fn strings<K: Kind, Q: Described, const N: usize, const D: usize>(
    mpit: &Mpit,
    get: impl Fn(Index<K>, Option<&mut [u8]>, Option<&mut [u8]>) -> Result<Q>,
) -> Vec<Result<(MpiString, MpiString)>> {
    let (mut name, mut desc, mut spill) = ([0u8; N], [0u8; D], (None, None));
    Index::<K>::all(&mpit.init)
        .unwrap()
        .map(|i| {
            described_in(&mut name, &mut desc, &mut spill, |n, d| get(i, n, d)).map(|(_, n, d)| {
                (
                    MpiStr::until_nul(n).to_mpi_string(),
                    MpiStr::until_nul(d).to_mpi_string(),
                )
            })
        })
        .collect()
}

/// MPI-4.1 §16.3.3 against the installed MPI: first buffers too small for most strings
/// give exactly the strings that the stack buffers give, for every control variable,
/// performance variable and category: a cut string is fetched again, into a buffer of the
/// reported length where that length shows the cut, after a length query where it does
/// not (MPICH 4.0.2, Open MPI 4.1 and 5.0 report the length of what they wrote). With the
/// stack buffers, this is the path of a description longer than they are.
#[test]
fn cut_strings_are_fetched_whole() {
    let _turn = turn();
    let mpit = Mpit::init().unwrap();
    let init = &mpit.init;
    let cvar = |i, n: Option<&mut [u8]>, d: Option<&mut [u8]>| ffi::cvar_get_info(init, i, n, d);
    let pvar = |i, n: Option<&mut [u8]>, d: Option<&mut [u8]>| ffi::pvar_get_info(init, i, n, d);
    let category =
        |i, n: Option<&mut [u8]>, d: Option<&mut [u8]>| ffi::category_get_info(init, i, n, d);
    let full = strings::<Cvar, _, NAME_BUF, DESC_BUF>(&mpit, cvar);
    assert!(!full.is_empty());
    assert!(
        full.iter()
            .any(|r| r.as_ref().is_ok_and(|(_, d)| d.len() > 16))
    );
    assert_eq!(full, strings::<Cvar, _, 8, 16>(&mpit, cvar));
    assert_eq!(full, strings::<Cvar, _, 2, 2>(&mpit, cvar));
    let full = strings::<Pvar, _, NAME_BUF, DESC_BUF>(&mpit, pvar);
    assert_eq!(full, strings::<Pvar, _, 8, 16>(&mpit, pvar));
    assert_eq!(full, strings::<Pvar, _, 2, 2>(&mpit, pvar));
    let full = strings::<Category, _, NAME_BUF, DESC_BUF>(&mpit, category);
    assert_eq!(full, strings::<Category, _, 8, 16>(&mpit, category));
    assert_eq!(full, strings::<Category, _, 2, 2>(&mpit, category));
}

/// The visitors with first buffers too small for most strings (the path of a string longer
/// than the stack buffers) show exactly the records of the listings, entry by entry.
#[test]
fn visitors_fetch_cut_strings_whole() {
    let _turn = turn();
    let mpit = Mpit::init().unwrap();
    let (cvars, pvars, categories) = (
        mpit.cvars().unwrap(),
        mpit.pvars().unwrap(),
        mpit.categories().unwrap(),
    );
    assert!(cvars.entries.iter().any(|v| v.description.len() > 16));
    for (n, d) in [(8, 16), (2, 2), (1, 1)] {
        let mut seen = Vec::new();
        let visited = mpit.visit_variables::<Cvar, _>(&mut Scratch::with_first(n, d), |v| {
            seen.extend(v.to_owned().ok());
            ControlFlow::<()>::Continue(())
        });
        assert!(matches!(visited, Ok(ControlFlow::Continue(ref v)) if v.count == cvars.count));
        assert_eq!(seen, cvars.entries, "first buffers {n}, {d}");
        let mut seen = Vec::new();
        let visited = mpit.visit_variables::<Pvar, _>(&mut Scratch::with_first(n, d), |v| {
            seen.extend(v.to_owned().ok());
            ControlFlow::<()>::Continue(())
        });
        assert!(matches!(visited, Ok(ControlFlow::Continue(_))));
        assert_eq!(seen, pvars.entries, "first buffers {n}, {d}");
        let mut seen = Vec::new();
        let visited = mpit.visit_categories_in(&mut Scratch::with_first(n, d), |c| {
            seen.push(c.to_owned());
            ControlFlow::<()>::Continue(())
        });
        assert!(matches!(visited, Ok(ControlFlow::Continue(_))));
        assert_eq!(seen, categories.entries, "first buffers {n}, {d}");
    }
}

/// The scan used where `*_get_index` is missing finds what `*_get_index` finds, and
/// passes through errors that are not about a missing function.
#[test]
fn scan_fallback_agrees_with_get_index() {
    let _turn = turn();
    let mpit = Mpit::init().unwrap();
    let missing = Error::Mpi {
        class: ErrorClass::NotSupported,
        code: 0,
    };
    let cvars = mpit.cvars().unwrap();
    for v in cvars.entries.iter().step_by(7) {
        let name = v.name.to_str().unwrap();
        let scanned = mpit
            .scan(missing.clone(), name, Mpit::cvar_count, |s, i| {
                s.cvar_info(i).map(|v| v.name)
            })
            .unwrap();
        assert_eq!(scanned, mpit.cvar_index(name).unwrap(), "{name}");
    }
    let none = mpit
        .scan(
            missing,
            "mpit_rs_no_such_variable",
            Mpit::cvar_count,
            |s, i| s.cvar_info(i).map(|v| v.name),
        )
        .unwrap();
    assert_eq!(none, None);
    let passed = mpit.scan(
        Error::Mpi {
            class: ErrorClass::NotInitialized,
            code: 1,
        },
        "x",
        Mpit::cvar_count,
        |s, i| s.cvar_info(i).map(|v| v.name),
    );
    assert!(matches!(
        passed,
        Err(Error::Mpi {
            class: ErrorClass::NotInitialized,
            ..
        })
    ));
}

/// A fixed-seed generator (SplitMix64) for the cases of the tests below: the same cases on
/// every run, spread as random ones would be.
struct Cases(u64);

impl Cases {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A category's members of one kind are the non-negative ints MPI wrote (MPI-4.1 §16.3.9,
/// `MPI_T_category_get_cvars` and its kin): the view gives each as the index it is, in MPI's
/// order, from either end, and finds exactly those.
#[test]
fn members_are_the_ints_mpi_wrote() {
    fn check(raw: &[c_int], probe: usize) {
        let owned: Vec<usize> = raw.iter().map(|&m| usize::try_from(m).unwrap()).collect();
        let members = Members(raw);
        assert_eq!(members.len(), owned.len());
        assert_eq!(members.is_empty(), owned.is_empty());
        assert_eq!(members.to_vec(), owned.clone());
        assert!(members == owned);
        assert!(members.iter().rev().eq(owned.iter().rev().copied()));
        assert_eq!(members.iter().len(), owned.len());
        for k in [0, owned.len() / 2, owned.len()] {
            assert_eq!(members.get(k), owned.get(k).copied());
            assert_eq!(members.iter().nth(k), owned.get(k).copied());
        }
        for m in owned.iter().copied().chain([probe]) {
            assert_eq!(members.contains(m), owned.contains(&m), "{raw:?} {m}");
        }
        assert_eq!(format!("{members:?}"), format!("{owned:?}"));
    }
    // Lists of every length below 64: of small indices (repeats, probes that hit), of any
    // int (the largest among them), and probes up to 2^33 (past every int).
    let mut cases = Cases(0x6d70_6974_2d72_7301);
    for len in 0..64 {
        for span in [8, c_int::MAX as u64 + 1] {
            let raw: Vec<c_int> = (0..len)
                .map(|_| match cases.below(8) {
                    0 => c_int::MAX,
                    _ => cases.below(span) as c_int,
                })
                .collect();
            for probe in [cases.below(1 << 33), cases.below(8), c_int::MAX as u64 + 1] {
                check(&raw, probe as usize);
            }
        }
    }
}

/// A visit keeps every failed index with the error MPI returned for it (MPI-4.1 §16.3.10: the
/// error class says why; an index that fails is no entry, §16.3.6, §16.3.7, §16.3.9): however
/// they fall into runs, `Holes` gives back each `(index, error)` added, in order, and finds
/// each index's first error.
#[test]
fn holes_keep_every_index_and_its_error() {
    fn check(added: &[(usize, usize)]) {
        let errors = [
            Error::from_class(ErrorClass::InvalidIndex, 57),
            Error::Other { code: 7 },
            Error::LengthOverflow,
            Error::from_class(ErrorClass::NotAccessible, 60),
        ];
        // Steps of 0 (the same index again), 1 (a run) or 2 (a gap) from the last one.
        let mut index = 0;
        let pairs: Vec<(usize, Error)> = added
            .iter()
            .map(|&(step, e)| {
                index += step;
                (index, errors[e].clone())
            })
            .collect();
        let holes: Holes = pairs.iter().cloned().collect();
        assert_eq!(holes.len(), pairs.len(), "{added:?}");
        assert_eq!(holes.is_empty(), pairs.is_empty());
        let back: Vec<(usize, Error)> = holes.clone().into();
        assert_eq!(&back, &pairs, "{added:?}");
        assert!(holes.indices().eq(pairs.iter().map(|(i, _)| *i)));
        for probe in 0..=index + 1 {
            let first = pairs.iter().find(|(i, _)| *i == probe).map(|(_, e)| e);
            assert_eq!(holes.get(probe), first, "{added:?} {probe}");
        }
    }
    // Every sequence of up to 4 additions, each a step of 0..3 and one of the 4 errors (among
    // them [(0, 3), (1, 0)]: two indices in a row whose errors differ)...
    for len in 0..=4 {
        // The additions as the digits of `code` in base 12: step `d / 4`, error `d % 4`.
        for code in 0..12usize.pow(len) {
            let added: Vec<(usize, usize)> = (0..len)
                .map(|k| code / 12usize.pow(k) % 12)
                .map(|d| (d / 4, d % 4))
                .collect();
            check(&added);
        }
    }
    // ...and sequences of 5 to 39, from the fixed seed.
    let mut cases = Cases(0x686f_6c65_7301);
    for len in 5..40 {
        for _ in 0..16 {
            let added: Vec<(usize, usize)> = (0..len)
                .map(|_| (cases.below(3) as usize, cases.below(4) as usize))
                .collect();
            check(&added);
        }
    }
}
