//! The PMIx decoders (`mpir_types::pmix::decode`) on byte images laid out by hand with the
//! ABI definitions' offsets: the proc table of a PMIX_QUERY_PROC_TABLE answer and the
//! namespace list of a PMIX_QUERY_NAMESPACES answer (PMIx Standard v4.2, "Job Management
//! and Reporting"), a query's results searched by key, each typed error, and properties:
//! well-formed tables round-trip, any bytes give a result or a typed error, never a panic.

use std::ffi::CStr;
use std::mem::{offset_of, size_of};

use crate::common::PagedMemory;
use mpir_types::pmix::*;
use mpir_types::{Limits, MemoryImage, TargetString};
use proptest::prelude::*;

const NS: &[u8] = b"prterun-node0-77@1";

/// One `pmix_proc_info_t` to lay out: `nspace` written as is (no NUL added; shorter ones
/// are zero-padded), pointers as given.
#[derive(Clone, Debug)]
struct Elem {
    nspace: Vec<u8>,
    rank: u32,
    host: u64,
    exe: u64,
    pid: i32,
    exit_code: i32,
    state: u8,
}

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

fn word(v: u64) -> [u8; size_of::<usize>()] {
    (v as usize).to_ne_bytes()
}

/// A tool's memory being filled with an answer: objects placed one after the other.
struct Image {
    mem: PagedMemory,
    next: u64,
}

impl Image {
    fn new() -> Self {
        Image {
            mem: PagedMemory::new(),
            next: 0x10_0000,
        }
    }

    fn alloc(&mut self, bytes: &[u8]) -> u64 {
        // Padded to 16 bytes, so that everything up to `next` is mapped.
        let at = self.next;
        let len = bytes.len().div_ceil(16).max(1) * 16;
        let mut padded = bytes.to_vec();
        padded.resize(len, 0);
        self.mem.write(at, &padded);
        self.next += len as u64;
        at
    }

    fn string(&mut self, s: &[u8]) -> u64 {
        self.alloc(&[s, b"\0"].concat())
    }

    fn value(&mut self, ty: u16, data: u64) -> u64 {
        let mut v = vec![0u8; size_of::<pmix_value_t>()];
        put(&mut v, offset_of!(pmix_value_t, type_), &ty.to_ne_bytes());
        put(&mut v, offset_of!(pmix_value_t, data), &word(data));
        self.alloc(&v)
    }

    fn darray(&mut self, ty: u16, size: u64, array: u64) -> u64 {
        let mut d = vec![0u8; size_of::<pmix_data_array_t>()];
        put(
            &mut d,
            offset_of!(pmix_data_array_t, type_),
            &ty.to_ne_bytes(),
        );
        put(&mut d, offset_of!(pmix_data_array_t, size), &word(size));
        put(&mut d, offset_of!(pmix_data_array_t, array), &word(array));
        self.alloc(&d)
    }

    fn elements(&mut self, elems: &[Elem]) -> u64 {
        let stride = size_of::<pmix_proc_info_t>();
        let mut b = vec![0u8; stride * elems.len()];
        for (i, e) in elems.iter().enumerate() {
            let at = i * stride;
            put(
                &mut b,
                at + offset_of!(pmix_proc_info_t, proc.nspace),
                &e.nspace,
            );
            put(
                &mut b,
                at + offset_of!(pmix_proc_info_t, proc.rank),
                &e.rank.to_ne_bytes(),
            );
            put(
                &mut b,
                at + offset_of!(pmix_proc_info_t, hostname),
                &word(e.host),
            );
            put(
                &mut b,
                at + offset_of!(pmix_proc_info_t, executable_name),
                &word(e.exe),
            );
            put(
                &mut b,
                at + offset_of!(pmix_proc_info_t, pid),
                &e.pid.to_ne_bytes(),
            );
            put(
                &mut b,
                at + offset_of!(pmix_proc_info_t, exit_code),
                &e.exit_code.to_ne_bytes(),
            );
            b[at + offset_of!(pmix_proc_info_t, state)] = e.state;
        }
        self.alloc(&b)
    }

    /// A complete proc table answer: its `pmix_value_t`'s address.
    fn table(&mut self, elems: &[Elem]) -> u64 {
        let array = self.elements(elems);
        let darray = self.darray(PMIX_PROC_INFO, elems.len() as u64, array);
        self.value(PMIX_DATA_ARRAY, darray)
    }

    /// `pmix_info_t` elements with these keys (written as is, zero-padded) and values of
    /// type PMIX_UINT32 holding their index.
    fn infos(&mut self, keys: &[&[u8]]) -> u64 {
        let stride = size_of::<pmix_info_t>();
        let mut b = vec![0u8; stride * keys.len()];
        for (i, key) in keys.iter().enumerate() {
            let at = i * stride;
            put(&mut b, at + offset_of!(pmix_info_t, key), key);
            let value = at + offset_of!(pmix_info_t, value);
            put(
                &mut b,
                value + offset_of!(pmix_value_t, type_),
                &PMIX_UINT32.to_ne_bytes(),
            );
            put(
                &mut b,
                value + offset_of!(pmix_value_t, data),
                &(i as u32).to_ne_bytes(),
            );
        }
        self.alloc(&b)
    }
}

/// `n` elements of namespace [`NS`], ranks in the order given, strings shared: two hosts,
/// one executable.
fn job(img: &mut Image, ranks: &[u32]) -> Vec<Elem> {
    let hosts = [img.string(b"node0"), img.string(b"node1")];
    let exe = img.string(b"/home/me/a.out");
    ranks
        .iter()
        .map(|&rank| Elem {
            nspace: NS.to_vec(),
            rank,
            host: hosts[rank as usize % 2],
            exe,
            pid: 4000 + rank as i32,
            exit_code: 0,
            state: PMIX_PROC_STATE_RUNNING,
        })
        .collect()
}

fn limits() -> Limits {
    Limits::default()
}

/// The default limits but at most `n` elements.
fn entries(n: usize) -> Limits {
    Limits {
        max_entries: n,
        ..Limits::default()
    }
}

/// The default limits but strings of at most `n` bytes.
fn string_len(n: usize) -> Limits {
    Limits {
        max_string_len: n,
        ..Limits::default()
    }
}

/// The default limits but at most `n` bytes of distinct strings.
fn budget(n: usize) -> Limits {
    Limits {
        max_total_string_bytes: n,
        ..Limits::default()
    }
}

#[test]
fn a_table_decodes_in_rank_order_with_shared_strings() {
    let mut img = Image::new();
    let elems = job(&mut img, &[2, 0, 3, 1]);
    let value = img.table(&elems);
    let infos = decode_proc_infos(&img.mem, value, &limits()).unwrap();
    assert_eq!(
        infos.iter().map(|i| i.rank).collect::<Vec<_>>(),
        [2, 0, 3, 1]
    );
    assert!(
        infos
            .iter()
            .all(|i| i.nspace == NS && i.state == PMIX_PROC_STATE_RUNNING)
    );
    assert!(infos[0].nspace.shares_storage_with(&infos[3].nspace));

    img.mem.clear_log();
    let procs = decode_proc_table(&img.mem, value, None, &limits()).unwrap();
    for (rank, p) in procs.iter().enumerate() {
        assert_eq!(p.pid, 4000 + rank as i64);
        assert_eq!(p.host_name, ["node0", "node1"][rank % 2]);
        assert_eq!(p.executable_name, "/home/me/a.out");
    }
    assert!(procs[0].host_name.shares_storage_with(&procs[2].host_name));
    // Each distinct string read once.
    for e in &elems[..2] {
        assert_eq!(img.mem.reads_at(e.host), 1);
    }
    assert_eq!(img.mem.reads_at(elems[0].exe), 1);
}

#[test]
fn an_empty_array_reads_no_elements() {
    let mut img = Image::new();
    let darray = img.darray(PMIX_PROC_INFO, 0, 0);
    let value = img.value(PMIX_DATA_ARRAY, darray);
    assert!(
        decode_proc_table(&img.mem, value, None, &limits())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        img.mem.reads().len(),
        2,
        "the value and the array header only"
    );
}

/// The tool's own namespace is left out before its elements' strings are read (here NULL),
/// and the rest is numbered by its own ranks.
#[test]
fn the_skipped_namespace_is_left_out_unread() {
    let mut img = Image::new();
    let mut elems = job(&mut img, &[1, 0]);
    elems.insert(
        1,
        Elem {
            nspace: b"tool@0".to_vec(),
            rank: 0,
            host: 0,
            exe: 0,
            pid: 1,
            exit_code: 0,
            state: 0,
        },
    );
    let value = img.table(&elems);
    let procs = decode_proc_table(&img.mem, value, Some(b"tool@0"), &limits()).unwrap();
    assert_eq!(
        procs.iter().map(|p| p.pid).collect::<Vec<_>>(),
        [4000, 4001]
    );
    // Not skipped: its NULL host name is an error.
    let err = decode_proc_table(&img.mem, value, None, &limits()).unwrap_err();
    assert!(matches!(
        err,
        PmixDecodeError::NullPointer {
            at: PmixLocation::Element {
                index: 1,
                field: ProcInfoField::Hostname
            }
        }
    ));
}

#[test]
fn wrong_types_are_typed_errors() {
    let mut img = Image::new();
    let elems = job(&mut img, &[0]);
    let array = img.elements(&elems);
    let darray = img.darray(PMIX_PROC_INFO, 1, array);
    let as_string = img.value(PMIX_STRING, darray);
    let err = decode_proc_table(&img.mem, as_string, None, &limits()).unwrap_err();
    assert!(matches!(
        err,
        PmixDecodeError::WrongType {
            at: PmixLocation::Value,
            found: PMIX_STRING,
            expected: PMIX_DATA_ARRAY
        }
    ));
    assert!(err.to_string().contains("3 (PMIX_STRING)"), "{err}");
    let of_procs = img.darray(PMIX_PROC, 1, array);
    let value = img.value(PMIX_DATA_ARRAY, of_procs);
    assert!(matches!(
        decode_proc_infos(&img.mem, value, &limits()),
        Err(PmixDecodeError::WrongType {
            at: PmixLocation::DataArray,
            found: PMIX_PROC,
            expected: PMIX_PROC_INFO
        })
    ));
}

/// A garbage element count is refused before the elements are read.
#[test]
fn too_many_elements_are_refused_unread() {
    let mut img = Image::new();
    let small = entries(8);
    for size in [9u64, 1 << 40, u64::MAX] {
        let darray = img.darray(PMIX_PROC_INFO, size, 0x7000_0000);
        let value = img.value(PMIX_DATA_ARRAY, darray);
        img.mem.clear_log();
        let err = decode_proc_table(&img.mem, value, None, &small).unwrap_err();
        assert!(
            matches!(err, PmixDecodeError::TooManyElements { count, max: 8, .. } if count == size)
        );
        assert_eq!(img.mem.reads().len(), 2);
    }
}

#[test]
fn null_pointers_are_typed_errors() {
    let mut img = Image::new();
    let null_darray = img.value(PMIX_DATA_ARRAY, 0);
    assert!(matches!(
        decode_proc_table(&img.mem, null_darray, None, &limits()),
        Err(PmixDecodeError::NullPointer {
            at: PmixLocation::Value
        })
    ));
    let darray = img.darray(PMIX_PROC_INFO, 3, 0);
    let null_array = img.value(PMIX_DATA_ARRAY, darray);
    assert!(matches!(
        decode_proc_table(&img.mem, null_array, None, &limits()),
        Err(PmixDecodeError::NullPointer {
            at: PmixLocation::DataArray
        })
    ));
    let mut elems = job(&mut img, &[0, 1]);
    elems[1].exe = 0;
    let value = img.table(&elems);
    assert!(matches!(
        decode_proc_table(&img.mem, value, None, &limits()),
        Err(PmixDecodeError::NullPointer {
            at: PmixLocation::Element {
                index: 1,
                field: ProcInfoField::ExecutableName
            }
        })
    ));
    let null_string = img.value(PMIX_STRING, 0);
    assert!(matches!(
        decode_namespaces(&img.mem, null_string, None, &limits()),
        Err(PmixDecodeError::NullPointer {
            at: PmixLocation::Value
        })
    ));
}

#[test]
fn strings_are_bounded() {
    let mut img = Image::new();
    let mut elems = job(&mut img, &[0, 1]);
    let long = img.string(&[b'x'; 100]);
    elems[1].host = long;
    let value = img.table(&elems);
    let short = string_len(99);
    assert!(matches!(
        decode_proc_table(&img.mem, value, None, &short),
        Err(PmixDecodeError::Unterminated {
            at: PmixLocation::Element { index: 1, field: ProcInfoField::Hostname },
            addr,
            max_len: 99
        }) if addr == long
    ));
    let exact = string_len(100);
    assert!(decode_proc_table(&img.mem, value, None, &exact).is_ok());
    // node0, node1 and the executable with their NULs: 6 + 6 + 15 bytes; the long host
    // replaces node1 for rank 1.
    let tight = budget(6 + 15 + 100);
    assert!(matches!(
        decode_proc_table(&img.mem, value, None, &tight),
        Err(PmixDecodeError::StringBudget { max }) if max == 121
    ));
    let tight = budget(6 + 15 + 101);
    assert!(decode_proc_table(&img.mem, value, None, &tight).is_ok());

    // A namespace filling its whole array, without a NUL.
    let mut elems = job(&mut img, &[0]);
    elems[0].nspace = vec![b'n'; PMIX_MAX_NSLEN + 1];
    let value = img.table(&elems);
    assert!(matches!(
        decode_proc_infos(&img.mem, value, &limits()),
        Err(PmixDecodeError::Unterminated {
            at: PmixLocation::Element {
                index: 0,
                field: ProcInfoField::Nspace
            },
            max_len: PMIX_MAX_NSLEN,
            ..
        })
    ));
    // PMIX_MAX_NSLEN bytes and the NUL: accepted.
    elems[0].nspace = [&[b'n'; PMIX_MAX_NSLEN][..], b"\0"].concat();
    let value = img.table(&elems);
    let infos = decode_proc_infos(&img.mem, value, &limits()).unwrap();
    assert_eq!(infos[0].nspace.len(), PMIX_MAX_NSLEN);
}

#[test]
fn ranks_must_number_the_table() {
    let mut img = Image::new();
    type Expect = fn(&PmixDecodeError) -> bool;
    let cases: [(&[u32], Expect); 3] = [
        (&[0, 2], |e| {
            matches!(
                e,
                PmixDecodeError::RankOutOfRange {
                    index: 1,
                    rank: 2,
                    count: 2
                }
            )
        }),
        (&[1, 0, 1], |e| {
            matches!(
                e,
                PmixDecodeError::DuplicateRank {
                    rank: 1,
                    first: 0,
                    second: 2
                }
            )
        }),
        (&[0, PMIX_RANK_WILDCARD], |e| {
            matches!(e, PmixDecodeError::RankOutOfRange { index: 1, .. })
        }),
    ];
    for (ranks, is_expected) in cases {
        let elems = job(&mut img, ranks);
        let value = img.table(&elems);
        let err = decode_proc_table(&img.mem, value, None, &limits()).unwrap_err();
        assert!(is_expected(&err), "{ranks:?}: {err:?}");
        // The raw elements decode all the same.
        assert_eq!(
            decode_proc_infos(&img.mem, value, &limits()).unwrap().len(),
            ranks.len()
        );
    }
    let mut elems = job(&mut img, &[0, 1]);
    elems[1].nspace = b"other@1".to_vec();
    let value = img.table(&elems);
    assert!(matches!(
        decode_proc_table(&img.mem, value, None, &limits()),
        Err(PmixDecodeError::MixedNamespaces { first: 0, index: 1 })
    ));
}

#[test]
fn memory_faults_are_typed_errors() {
    let mut img = Image::new();
    // The value itself unmapped.
    assert!(matches!(
        decode_proc_table(&img.mem, 0x9000_0000, None, &limits()),
        Err(PmixDecodeError::Read {
            at: PmixLocation::Value,
            ..
        })
    ));
    // Elements that are not mapped.
    let darray = img.darray(PMIX_PROC_INFO, 2, 0x9000_0000);
    let value = img.value(PMIX_DATA_ARRAY, darray);
    assert!(matches!(
        decode_proc_table(&img.mem, value, None, &limits()),
        Err(PmixDecodeError::Read {
            at: PmixLocation::Elements { first: 0, count: 2 },
            ..
        })
    ));
    // Elements running past the end of the address space: refused unread.
    let darray = img.darray(PMIX_PROC_INFO, 2, u64::MAX - 300);
    let value = img.value(PMIX_DATA_ARRAY, darray);
    img.mem.clear_log();
    assert!(matches!(
        decode_proc_table(&img.mem, value, None, &limits()),
        Err(PmixDecodeError::AddressOverflow { .. })
    ));
    assert!(img.mem.reads().iter().all(|r| r.addr < 0x1_0000_0000));
}

#[test]
fn more_elements_than_one_chunk_decode() {
    let mut img = Image::new();
    let ranks: Vec<u32> = (0..1000).rev().collect();
    let elems = job(&mut img, &ranks);
    let value = img.table(&elems);
    let procs = decode_proc_table(&img.mem, value, None, &limits()).unwrap();
    assert_eq!(procs.len(), 1000);
    assert_eq!(procs[999].pid, 4999);
    assert!(img.mem.max_read_len() <= 64 * 1024);
}

#[test]
fn namespace_lists_parse() {
    let l = limits();
    let names = |list: &[u8], skip: Option<&[u8]>| -> Vec<TargetString> {
        parse_namespaces(list, skip, &l).unwrap()
    };
    assert!(names(b"", None).is_empty());
    assert_eq!(names(b"a@0", None), ["a@0"]);
    assert_eq!(names(b"a@0,a@1", None), ["a@0", "a@1"]);
    assert_eq!(names(b" a@0 ,, a@1,", None), ["a@0", "a@1"]);
    assert_eq!(names(b"a@0,a@1", Some(b"a@0")), ["a@1"]);
    assert_eq!(names(b"a@0\0,a@1", None), ["a@0"]);
    let long = [vec![b'n'; PMIX_MAX_NSLEN + 1], b",x".to_vec()].concat();
    assert!(matches!(
        parse_namespaces(&long[2..], None, &l),
        Ok(v) if v.len() == 2
    ));
    assert!(matches!(
        parse_namespaces(&[b"x,".as_slice(), &long].concat(), None, &l),
        Err(PmixDecodeError::NamespaceTooLong { index: 1, len }) if len == PMIX_MAX_NSLEN + 1
    ));
    let two = entries(2);
    assert!(parse_namespaces(b"a,b", None, &two).is_ok());
    assert!(parse_namespaces(b"a,b,c", Some(b"c"), &two).is_ok());
    assert!(matches!(
        parse_namespaces(b"a,b,c", None, &two),
        Err(PmixDecodeError::TooManyElements {
            at: PmixLocation::Namespaces,
            count: 3,
            max: 2
        })
    ));
}

#[test]
fn a_namespaces_answer_decodes() {
    let mut img = Image::new();
    let s = img.string(b"prterun-node0-77@0,prterun-node0-77@1");
    let value = img.value(PMIX_STRING, s);
    let jobs = decode_namespaces(&img.mem, value, Some(b"prterun-node0-77@0"), &limits());
    assert_eq!(jobs.unwrap(), ["prterun-node0-77@1"]);
    let short = string_len(10);
    assert!(matches!(
        decode_namespaces(&img.mem, value, None, &short),
        Err(PmixDecodeError::Unterminated {
            at: PmixLocation::Namespaces,
            ..
        })
    ));
}

#[test]
fn results_are_found_by_key() {
    let mut img = Image::new();
    let keys: [&[u8]; 3] = [
        PMIX_QUERY_NAMESPACES.to_bytes_with_nul(),
        PMIX_QUERY_PROC_TABLE.to_bytes_with_nul(),
        PMIX_QUERY_PROC_TABLE.to_bytes_with_nul(),
    ];
    let infos = img.infos(&keys);
    let stride = size_of::<pmix_info_t>() as u64;
    let value = offset_of!(pmix_info_t, value) as u64;
    let find = |key: &CStr, n| find_info_value(&img.mem, infos, n, key, &limits());
    assert_eq!(
        find(PMIX_QUERY_PROC_TABLE, 3).unwrap(),
        Some(infos + stride + value)
    );
    assert_eq!(find(PMIX_QUERY_NAMESPACES, 3).unwrap(), Some(infos + value));
    assert_eq!(find(PMIX_QUERY_PROC_TABLE, 1).unwrap(), None);
    assert_eq!(find(PMIX_NSPACE, 3).unwrap(), None);
    assert_eq!(find(PMIX_NSPACE, 0).unwrap(), None);
    assert!(matches!(
        find_info_value(&img.mem, 0, 1, PMIX_NSPACE, &limits()),
        Err(PmixDecodeError::NullPointer { .. })
    ));
    let two = entries(2);
    assert!(matches!(
        find_info_value(&img.mem, infos, 3, PMIX_NSPACE, &two),
        Err(PmixDecodeError::TooManyElements {
            count: 3,
            max: 2,
            ..
        })
    ));
    let unterminated = img.infos(&[&[b'k'; PMIX_MAX_KEYLEN + 1]]);
    assert!(matches!(
        find_info_value(&img.mem, unterminated, 1, PMIX_NSPACE, &limits()),
        Err(PmixDecodeError::Unterminated {
            at: PmixLocation::InfoKey { index: 0 },
            max_len: PMIX_MAX_KEYLEN,
            ..
        })
    ));
}

/// Runs every decoder on `mem` at `addr`; checks the bounds of what they give.
fn decode_everything(mem: &MemoryImage, addr: u64, skip: Option<&[u8]>, limits: &Limits) {
    if let Ok(infos) = decode_proc_infos(mem, addr, limits) {
        assert!(infos.len() <= limits.max_entries);
        for i in &infos {
            assert!(i.host_name.len() <= limits.max_string_len);
            assert!(i.executable_name.len() <= limits.max_string_len);
            assert!(i.nspace.len() <= PMIX_MAX_NSLEN);
            assert!(!i.nspace.as_bytes().contains(&0));
        }
    }
    if let Ok(procs) = decode_proc_table(mem, addr, skip, limits) {
        assert!(procs.len() <= limits.max_entries);
    }
    if let Ok(names) = decode_namespaces(mem, addr, skip, limits) {
        assert!(names.len() <= limits.max_entries);
        assert!(
            names
                .iter()
                .all(|n| !n.is_empty() && n.len() <= PMIX_MAX_NSLEN)
        );
    }
    if let Ok(Some(value)) = find_info_value(mem, addr, 4, PMIX_QUERY_PROC_TABLE, limits) {
        decode_everything(mem, value, skip, limits);
    }
}

fn small_limits() -> impl Strategy<Value = Limits> {
    (0usize..64, 0usize..600, 0usize..4000).prop_map(|(e, s, t)| Limits {
        max_entries: e,
        max_string_len: s,
        max_total_string_bytes: t,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any bytes at any addresses (regions of random bytes; the value anywhere in or near
    /// them, or anywhere at all): every decoder gives a result within the limits or a
    /// typed error, and never panics.
    #[test]
    fn any_bytes_give_a_result_or_a_typed_error(
        regions in proptest::collection::vec(
            (0u64..64, proptest::collection::vec(any::<u8>(), 1..2000)), 1..5),
        pick in any::<(u8, u16, u64)>(),
        limits in small_limits(),
    ) {
        let mut mem = MemoryImage::new();
        let mut starts = Vec::new();
        for (page, bytes) in regions {
            let at = 0x1000 * (page + 1);
            if mem.map(at, bytes).is_ok() {
                starts.push(at);
            }
        }
        let (which, offset, anywhere) = pick;
        let addr = match starts.get(usize::from(which) % (starts.len() + 1)) {
            Some(s) => s + u64::from(offset % 2048),
            None => anywhere,
        };
        decode_everything(&mem, addr, Some(b"x"), &limits);
    }

    /// A well-formed table with bytes of its elements and strings overwritten at random:
    /// the decoders give a result within the limits or a typed error, and never panic.
    #[test]
    fn a_damaged_table_gives_a_result_or_a_typed_error(
        n in 0usize..20,
        flips in proptest::collection::vec((any::<u16>(), any::<u8>()), 0..40),
        limits in small_limits(),
    ) {
        let mut img = Image::new();
        let ranks: Vec<u32> = (0..n as u32).collect();
        let elems = job(&mut img, &ranks);
        let value = img.table(&elems);
        let mut mem = MemoryImage::new();
        let len = (img.next - 0x10_0000) as usize;
        let mut bytes = vec![0u8; len];
        mpir_types::MemoryReader::read(&img.mem, 0x10_0000, &mut bytes).unwrap();
        for (at, b) in flips {
            let at = usize::from(at) % len;
            bytes[at] = b;
        }
        mem.map(0x10_0000, bytes).unwrap();
        decode_everything(&mem, value, None, &limits);
    }

    /// Well-formed tables (ranks in any order, namespaces skipped or kept, strings from a
    /// pool, any pid) decode to the processes written, by rank; the raw elements in array
    /// order.
    #[test]
    fn well_formed_tables_round_trip(
        pool in proptest::collection::vec(proptest::collection::vec(1u8..=255, 0..300), 1..6),
        order in Just((0u32..40).collect::<Vec<_>>()).prop_shuffle(),
        n in 0usize..40,
        picks in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<i32>()), 40),
        tool_at in proptest::option::of(0usize..40),
    ) {
        let mut img = Image::new();
        let strings: Vec<u64> = pool.iter().map(|s| img.string(s)).collect();
        let ranks: Vec<u32> = order.into_iter().filter(|r| (*r as usize) < n).collect();
        let mut elems: Vec<Elem> = ranks
            .iter()
            .map(|&rank| {
                let (h, e, pid) = picks[rank as usize];
                Elem {
                    nspace: NS.to_vec(),
                    rank,
                    host: strings[h % strings.len()],
                    exe: strings[e % strings.len()],
                    pid,
                    exit_code: -(rank as i32),
                    state: rank as u8,
                }
            })
            .collect();
        if let Some(at) = tool_at {
            let tool = Elem { nspace: b"tool@0".to_vec(), rank: 0, host: 0, exe: 0, pid: 0,
                exit_code: 0, state: 0 };
            elems.insert(at.min(elems.len()), tool);
        }
        let value = img.table(&elems);
        let procs = decode_proc_table(&img.mem, value, Some(b"tool@0"), &limits()).unwrap();
        prop_assert_eq!(procs.len(), n);
        for (rank, p) in procs.iter().enumerate() {
            let (h, e, pid) = picks[rank];
            prop_assert_eq!(p.host_name.as_bytes(), &pool[h % pool.len()][..]);
            prop_assert_eq!(p.executable_name.as_bytes(), &pool[e % pool.len()][..]);
            prop_assert_eq!(p.pid, i64::from(pid));
        }
        if tool_at.is_none() {
            let infos = decode_proc_infos(&img.mem, value, &limits()).unwrap();
            let got: Vec<u32> = infos.iter().map(|i| i.rank).collect();
            prop_assert_eq!(got, ranks.clone());
            for i in &infos {
                prop_assert_eq!(i.exit_code, -(i.rank as i32));
                prop_assert_eq!(i.state, i.rank as u8);
            }
        }
    }
}
