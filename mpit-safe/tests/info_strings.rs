//! Names, descriptions and enumerations of the listings are exactly what C reads with the
//! length query of MPI-4.1 §16.3.3 and a buffer of the reported length, after `MPI_Init`.
//!
//! The safe API makes one `MPI_T_*_get_info` call into fixed buffers and fetches a string
//! again only where it was cut; it resolves each enumeration once per listing. This test
//! checks both against the plain C way on whatever the installed MPI has, long descriptions
//! included (MPICH 4.0.2 has one of 1269 bytes, more than a first buffer of 1024 bytes held; it
//! reports a cut string's length as that of the part written, as Open MPI does), and says which
//! lengths occur. With first buffers of 2048 bytes every string here fits; the unit tests of
//! `src/query/` run the cut-string path with tiny first buffers.

use mpit_test_support::mpi::turn_after_init as turn;

use std::ffi::{c_char, c_int};
use std::ptr::null_mut;

use mpit_safe::{EnumInfo, MpiString, sys};

/// The description buffer of the safe API's first call, in bytes (`DESC_BUF` in `query/scratch.rs`):
/// a description of this many bytes or more takes the fallback.
const FIRST_DESC_BUF: usize = 2048;

fn ok(what: &str, rc: c_int) {
    assert_eq!(rc, sys::MPI_SUCCESS, "{what}");
}

/// The bytes of a string that `call(buf, len)` returns by the convention: the length query
/// (NULL and 0), then a buffer of the reported length.
fn c_string(mut call: impl FnMut(*mut c_char, &mut c_int)) -> Vec<u8> {
    let mut len = 0;
    call(null_mut(), &mut len);
    let mut buf = vec![0u8; len.max(1) as usize];
    let mut n = len.max(1);
    call(buf.as_mut_ptr().cast(), &mut n);
    let end = buf.iter().position(|&b| b == 0).expect("no NUL");
    buf.truncate(end);
    buf
}

/// The name and description that `get(name, name length, description, description length)`,
/// one `MPI_T_*_get_info` call, returns by the convention, one string at a time.
fn c_strings(
    mut get: impl FnMut(*mut c_char, &mut c_int, *mut c_char, &mut c_int),
) -> (Vec<u8>, Vec<u8>) {
    let name = c_string(|b, l| get(b, l, null_mut(), &mut 0));
    let desc = c_string(|b, l| get(null_mut(), &mut 0, b, l));
    (name, desc)
}

/// `(name, description, enumtype)` of control variable `i`, the C way.
fn c_cvar(i: c_int) -> (Vec<u8>, Vec<u8>, sys::MPI_T_enum) {
    let (mut verbosity, mut bind, mut scope) = (0, 0, 0);
    let mut dt = sys::MPI_DATATYPE_NULL;
    let mut en = sys::MPI_T_ENUM_NULL;
    let get = |name: *mut c_char, nl: &mut c_int, desc: *mut c_char, dl: &mut c_int| {
        // SAFETY: MPI_T is initialised and `i` is below the count; each string buffer is NULL
        // or holds its length argument's bytes; the rest are valid out-pointers.
        let rc = unsafe {
            sys::MPI_T_cvar_get_info(
                i,
                name,
                nl,
                &mut verbosity,
                &mut dt,
                &mut en,
                desc,
                dl,
                &mut bind,
                &mut scope,
            )
        };
        ok("MPI_T_cvar_get_info", rc);
    };
    let (name, desc) = c_strings(get);
    (name, desc, en)
}

/// `(name, description, enumtype)` of performance variable `i`, the C way.
fn c_pvar(i: c_int) -> (Vec<u8>, Vec<u8>, sys::MPI_T_enum) {
    let (mut verbosity, mut class, mut bind) = (0, 0, 0);
    let (mut readonly, mut continuous, mut atomic) = (0, 0, 0);
    let mut dt = sys::MPI_DATATYPE_NULL;
    let mut en = sys::MPI_T_ENUM_NULL;
    let get = |name: *mut c_char, nl: &mut c_int, desc: *mut c_char, dl: &mut c_int| {
        // SAFETY: as in `c_cvar`.
        let rc = unsafe {
            sys::MPI_T_pvar_get_info(
                i,
                name,
                nl,
                &mut verbosity,
                &mut class,
                &mut dt,
                &mut en,
                desc,
                dl,
                &mut bind,
                &mut readonly,
                &mut continuous,
                &mut atomic,
            )
        };
        ok("MPI_T_pvar_get_info", rc);
    };
    let (name, desc) = c_strings(get);
    (name, desc, en)
}

/// `(name, description, no enumeration)` of category `i`, the C way.
fn c_category(i: c_int) -> (Vec<u8>, Vec<u8>, sys::MPI_T_enum) {
    let (mut nc, mut np, mut nk) = (0, 0, 0);
    let get = |name: *mut c_char, nl: &mut c_int, desc: *mut c_char, dl: &mut c_int| {
        // SAFETY: as in `c_cvar`.
        let rc = unsafe {
            sys::MPI_T_category_get_info(i, name, nl, desc, dl, &mut nc, &mut np, &mut nk)
        };
        ok("MPI_T_category_get_info", rc);
    };
    let (name, desc) = c_strings(get);
    (name, desc, sys::MPI_T_ENUM_NULL)
}

/// Checks `info` against the enumeration `en` as C reads it, item by item.
fn check_enum(who: &str, en: sys::MPI_T_enum, info: Option<&EnumInfo>) {
    if en == sys::MPI_T_ENUM_NULL {
        assert!(info.is_none(), "{who}: an enumeration where C sees none");
        return;
    }
    let info = info.unwrap_or_else(|| panic!("{who}: no enumeration where C sees one"));
    let mut num = 0;
    let name = c_string(|b, l| {
        // SAFETY: `en` is an enumeration handle MPI_T returned, MPI_T is initialised; the
        // buffer is NULL or holds `*l` bytes.
        ok("MPI_T_enum_get_info", unsafe {
            sys::MPI_T_enum_get_info(en, &mut num, b, l)
        })
    });
    assert_eq!(info.name.as_bytes(), name, "{who}: enumeration name");
    assert_eq!(info.items.len(), num as usize, "{who}: {name:?}: items");
    for (item, got) in (0..num).zip(&info.items) {
        let mut value = 0;
        let name = c_string(|b, l| {
            // SAFETY: as above; `item` is below the number of items.
            ok("MPI_T_enum_get_item", unsafe {
                sys::MPI_T_enum_get_item(en, item, &mut value, b, l)
            })
        });
        assert_eq!(
            (got.value, got.name.as_bytes()),
            (value, &name[..]),
            "{who}: item {item}"
        );
    }
}

/// What one entry of a listing says: index, name, description, enumeration.
type Strings<'a> = (usize, &'a MpiString, &'a MpiString, Option<&'a EnumInfo>);

/// Checks every entry of a listing of `what` against C (`c(index)`: name, description,
/// enumeration handle) and against the single query `single(index)`, and says what lengths
/// occur: the longest name and description, how many descriptions the first buffer cannot
/// hold, how many entries have an enumeration.
fn check_listing<T: PartialEq + std::fmt::Debug>(
    what: &str,
    entries: &[T],
    strings: impl Fn(&T) -> Strings<'_>,
    c: impl Fn(c_int) -> (Vec<u8>, Vec<u8>, sys::MPI_T_enum),
    single: impl Fn(usize) -> mpit_safe::Result<T>,
) {
    let (mut longest_name, mut longest_desc, mut past_first, mut enums) = (0, 0, 0, 0);
    for e in entries {
        let (index, name, description, enumtype) = strings(e);
        let who = format!("{what} {index} {name}");
        let (c_name, c_desc, en) = c(index as c_int);
        assert_eq!(name.as_bytes(), c_name, "{who}");
        assert_eq!(description.as_bytes(), c_desc, "{who}");
        check_enum(&who, en, enumtype);
        assert_eq!(single(index).as_ref(), Ok(e), "{who}");
        longest_name = longest_name.max(name.len());
        longest_desc = longest_desc.max(description.len());
        // The first buffer holds a string of at most FIRST_DESC_BUF - 2 bytes.
        past_first += usize::from(description.len() + 2 > FIRST_DESC_BUF);
        enums += usize::from(enumtype.is_some());
    }
    eprintln!(
        "{} {}: {} {what}: longest name {longest_name} bytes, longest description \
         {longest_desc} bytes, {past_first} descriptions past the first buffer \
         ({FIRST_DESC_BUF} bytes), {enums} of enumeration type",
        sys::IMPLEMENTATION,
        sys::IMPLEMENTATION_VERSION,
        entries.len(),
    );
}

/// MPI-4.1 §16.3.3, §16.3.5–§16.3.7, §16.3.9: every control variable, performance variable and
/// category of a listing has the name and description that C reads, byte for byte however long,
/// and every enumeration the one C reads (a listing resolves each one once; a single query
/// resolves it afresh).
#[test]
fn listings_match_c_strings_and_enumerations() {
    let t = turn();
    let mpit = &t.mpit;
    let cvars = mpit.cvars().unwrap();
    assert!(!cvars.entries.is_empty());
    check_listing(
        "cvars",
        &cvars.entries,
        |v| (v.index, &v.name, &v.description, v.enumtype.as_deref()),
        c_cvar,
        |i| mpit.cvar_info(i),
    );
    check_listing(
        "pvars",
        &mpit.pvars().unwrap().entries,
        |v| (v.index, &v.name, &v.description, v.enumtype.as_deref()),
        c_pvar,
        |i| mpit.pvar_info(i),
    );
    check_listing(
        "categories",
        &mpit.categories().unwrap().entries,
        |c| (c.index, &c.name, &c.description, None),
        c_category,
        |i| mpit.category_info(i),
    );
}
