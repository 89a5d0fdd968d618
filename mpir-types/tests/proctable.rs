//! The process descriptor table (§2.8.2, §2.8.4, §2.8.5) decoded out of a
//! paged fake memory for every supported data model, and the decoders' hard
//! limits against garbage.

use std::time::{Duration, Instant};

use crate::common::{PAGE, PagedMemory, all_layouts, target_bytes, write_table};
use mpir_types::*;
use proptest::prelude::*;

fn layout_strategy() -> impl Strategy<Value = TargetLayout> {
    proptest::sample::select(all_layouts())
}

/// A pid that fits `width` bytes, signed.
fn fit_pid(pid: i64, width: u8) -> i64 {
    let shift = 64 - 8 * u32::from(width);
    (pid << shift) >> shift
}

/// A string pool and (host index, executable index, pid) per rank.
type Table = (Vec<Vec<u8>>, Vec<(usize, usize, i64)>);

/// Host and executable name pools (bytes without NUL, possibly non-UTF-8)
/// and table entries indexing them.
fn table_strategy() -> impl Strategy<Value = Table> {
    let string = proptest::collection::vec(1u8..=255, 0..300);
    proptest::collection::vec(string, 1..12).prop_flat_map(|pool| {
        let n = pool.len();
        let entry = (0..n, 0..n, any::<i64>());
        (Just(pool), proptest::collection::vec(entry, 0..200))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// §2.8.2/§2.8.4: a table of `MPIR_proctable_size` descriptors, each
    /// holding two pointers to NUL-terminated strings in the starter and a
    /// pid, laid out by the C rules of the target's data model (32/64-bit,
    /// little/big endian, 2/4/8-byte pid), decodes back to the written
    /// strings and pids, entry `i` being rank `i`. Strings start at an
    /// arbitrary offset so that they cross page boundaries.
    #[test]
    fn table_round_trips_for_every_layout(
        target in layout_strategy(),
        (pool, entries) in table_strategy(),
        string_skew in 0u64..PAGE,
        table_pages in 0u64..4,
    ) {
        let layout = target.procdesc();
        let entries: Vec<_> = entries
            .into_iter()
            .map(|(h, e, pid)| (h, e, fit_pid(pid, target.pid_width())))
            .collect();
        let mut mem = PagedMemory::new();
        let strings_at = 0x10_0000 + string_skew;
        let table_at = 0x40_0000 + table_pages * PAGE + 8 * string_skew;
        let written = write_table(&mut mem, &layout, strings_at, &pool, table_at, &entries);

        let procs = decode_proctable(
            &mem, &layout, written.table_addr, entries.len() as i64, &Limits::default(),
        ).unwrap();

        prop_assert_eq!(procs.len(), entries.len());
        for (p, &(h, e, pid)) in procs.iter().zip(&entries) {
            prop_assert_eq!(p.host_name.as_bytes(), &pool[h][..]);
            prop_assert_eq!(p.executable_name.as_bytes(), &pool[e][..]);
            prop_assert_eq!(p.pid, pid);
        }
        // The table is read in chunks of at most 64 KiB; strings never
        // across a page in one read.
        for r in mem.reads() {
            prop_assert!(r.len <= 64 * 1024);
            prop_assert!(r.ok, "a read of well-formed memory failed: {:?}", r);
        }
    }

    /// §2.8.2: "Sharing the strings enhances the tool's scalability by
    /// allowing it to cache data from the starter process and avoid reading
    /// redundant character strings": every distinct string address is read
    /// (starting at that address) exactly once however many entries point at
    /// it, and the decoded entries share one copy.
    #[test]
    fn shared_strings_are_read_once(
        target in layout_strategy(),
        (pool, entries) in table_strategy(),
    ) {
        let layout = target.procdesc();
        let mut mem = PagedMemory::new();
        let written = write_table(&mut mem, &layout, 0x10_0000, &pool, 0x40_0000, &entries);
        let procs = decode_proctable(
            &mem, &layout, written.table_addr, entries.len() as i64, &Limits::default(),
        ).unwrap();

        let mut used: Vec<u64> = written.entries.iter().flat_map(|&(h, e, _)| [h, e]).collect();
        used.sort_unstable();
        used.dedup();
        for addr in &used {
            prop_assert_eq!(mem.reads_at(*addr), 1, "string at {:#x}", addr);
        }
        for (i, a) in entries.iter().enumerate() {
            for (j, b) in entries.iter().enumerate().skip(i + 1) {
                if a.0 == b.0 {
                    prop_assert!(procs[i].host_name.shares_storage_with(&procs[j].host_name));
                }
                if a.1 == b.1 {
                    prop_assert!(procs[i].executable_name.shares_storage_with(&procs[j].executable_name));
                }
            }
        }
    }

    /// §2.7 steps 10–13: read `MPIR_proctable_size` and the `MPIR_proctable`
    /// pointer out of the starter's variables, then the table; a size of 0
    /// is the empty table without reading the pointer.
    #[test]
    fn read_proctable_follows_the_variables(
        target in layout_strategy(),
        (pool, entries) in table_strategy(),
    ) {
        let layout = target.procdesc();
        let mut mem = PagedMemory::new();
        let written = write_table(&mut mem, &layout, 0x10_0000, &pool, 0x40_0000, &entries);
        let (table_var, size_var) = (0x20_0000u64, 0x20_0010u64);
        mem.write(table_var, &target_bytes(written.table_addr, target.pointer_width(), target.endianness()));
        mem.write(size_var, &target_bytes(entries.len() as u64, target.int_width(), target.endianness()));
        let expect = decode_proctable(&mem, &layout, written.table_addr, entries.len() as i64, &Limits::default()).unwrap();
        mem.clear_log();
        let procs = read_proctable(&mem, &layout, table_var, size_var, &Limits::default()).unwrap();
        prop_assert_eq!(&procs, &expect);
        if entries.is_empty() {
            prop_assert_eq!(mem.reads_at(table_var), 0);
        }
    }

    /// §2.8.5 gives the element count as an `int` the tool reads: a negative
    /// count or one above `Limits::max_entries` is a typed error returned
    /// before any read, so a garbage size costs neither memory nor time.
    #[test]
    fn garbage_sizes_fail_before_reading(
        target in layout_strategy(),
        size in prop_oneof![any::<i64>(), i64::MIN..0, (1i64 << 20) + 1..i64::MAX],
        table in any::<u64>(),
    ) {
        prop_assume!(!(0..=1 << 20).contains(&size));
        let mem = PagedMemory::new();
        let err = decode_proctable(&mem, &target.procdesc(), table, size, &Limits::default()).unwrap_err();
        if size < 0 {
            let ok = matches!(err, DecodeError::NegativeSize { size: s } if s == size);
            prop_assert!(ok, "{:?}", err);
        } else {
            let ok = matches!(err, DecodeError::TooManyEntries { max, .. } if max == 1 << 20);
            prop_assert!(ok, "{:?}", err);
        }
        prop_assert!(mem.reads().is_empty());
    }

    /// Garbage memory (the starter is mid-update, corrupt, or no starter at
    /// all): arbitrary page contents, arbitrary table address, arbitrary
    /// size. The decoder never panics, returns exactly `size` entries when it
    /// succeeds, never issues a read above 64 KiB, and delivers no more bytes
    /// than the table plus one bounded string per distinct pointer.
    #[test]
    fn arbitrary_memory_never_panics_and_stays_bounded(
        target in layout_strategy(),
        seed in any::<u64>(),
        pages in proptest::collection::btree_set(0u64..16, 0..14),
        table_addr in prop_oneof![6 => 0u64..16 * PAGE, 1 => any::<u64>()],
        size in prop_oneof![6 => 0i64..8, 2 => 0i64..80, 1 => any::<i64>()],
    ) {
        let mut mem = PagedMemory::new();
        let mut rng = seed | 1;
        let mut next = move || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; rng };
        for page in pages {
            let mut bytes = Vec::with_capacity(PAGE as usize);
            while bytes.len() < PAGE as usize {
                let r = next();
                // Words that look like pointers into the mapped range, small
                // ints, zeros, text or noise.
                let word = match r % 5 {
                    0 => target_bytes(r >> 8 & 0xffff, target.pointer_width(), target.endianness()),
                    1 => target_bytes(r >> 60, target.int_width(), target.endianness()),
                    2 => vec![0; 4],
                    3 => b"node".to_vec(),
                    _ => (r >> 8).to_le_bytes()[..3].to_vec(),
                };
                bytes.extend(word);
            }
            bytes.truncate(PAGE as usize);
            mem.map_page(page, bytes);
        }
        let limits = Limits { max_entries: 64, max_string_len: 100, ..Limits::default() };
        let layout = target.procdesc();
        match decode_proctable(&mem, &layout, table_addr, size, &limits) {
            Ok(procs) => {
                prop_assert_eq!(procs.len() as i64, size);
                for p in &procs {
                    prop_assert!(p.host_name.len() <= 100 && p.executable_name.len() <= 100);
                }
            }
            Err(e) => { let _ = e.to_string(); }
        }
        prop_assert!(mem.max_read_len() <= 64 * 1024);
        let n = size.clamp(0, 64) as usize;
        prop_assert!(mem.bytes_read() <= n * layout.size() + 2 * n * 101);
    }

    /// A starter caught mid-update or with corrupted memory: a valid table
    /// and string pool with arbitrary bytes overwritten (pointers, pids,
    /// string bytes, NULs). The decoder never panics; on success it returns
    /// `size` entries whose pids and strings are what the memory holds, and
    /// it never reads more than the table plus one bounded string per entry
    /// member.
    #[test]
    fn corrupted_tables_never_panic(
        target in layout_strategy(),
        (pool, entries) in table_strategy(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), any::<bool>()), 1..8),
        size_delta in -2i64..3,
    ) {
        let layout = target.procdesc();
        let mut mem = PagedMemory::new();
        let strings_at = 0x10_0000u64;
        let table_at = 0x10_0000 + 3 * PAGE;
        let pool_len: usize = pool.iter().map(|s| s.len() + 1).sum();
        prop_assume!(pool_len < 3 * PAGE as usize);
        let w = write_table(&mut mem, &layout, strings_at, &pool, table_at, &entries);
        let table_len = entries.len() * layout.size();
        for (at, byte, in_table) in flips {
            let addr = if in_table && table_len > 0 {
                table_at + at.index(table_len) as u64
            } else {
                strings_at + at.index(pool_len) as u64
            };
            mem.write(addr, &[byte]);
        }
        let size = entries.len() as i64 + size_delta;
        let limits = Limits { max_string_len: 400, ..Limits::default() };
        let result = decode_proctable(&mem, &layout, w.table_addr, size, &limits);
        let n = size.max(0) as usize;
        prop_assert!(mem.max_read_len() <= 64 * 1024);
        prop_assert!(mem.bytes_read() <= n * layout.size() + 2 * n * 401);
        match result {
            Ok(procs) => {
                prop_assert_eq!(procs.len() as i64, size);
                for (rank, p) in procs.iter().enumerate() {
                    let mut raw = vec![0; layout.size()];
                    mem.read(table_at + (rank * layout.size()) as u64, &mut raw).unwrap();
                    let raw = layout.decode_entry(&raw).unwrap();
                    prop_assert_eq!(p.pid, raw.pid);
                    let host = read_c_string(&mem, &target, raw.host_name, 400).unwrap();
                    prop_assert_eq!(&p.host_name, &host);
                }
            }
            Err(e) => { let _ = e.to_string(); }
        }
    }

    /// §2.8.4: `MPIR_proctable` is a pointer the starter sets; a wild one
    /// (unmapped) is a read error naming the entries being read.
    #[test]
    fn wild_table_pointer_is_a_read_error(
        target in layout_strategy(),
        table_addr in 1u64..u32::MAX as u64 / 2,
        size in 1i64..5000,
    ) {
        let mem = PagedMemory::new();
        let err = decode_proctable(&mem, &target.procdesc(), table_addr, size, &Limits::default()).unwrap_err();
        let is_read_error = matches!(
            err,
            DecodeError::Read { at: Location::Entries { first: 0, .. }, source: ReadError::Unmapped { .. } }
        );
        prop_assert!(is_read_error, "{:?}", err);
        prop_assert_eq!(mem.reads().len(), 1);
    }

    /// §2.8.2: `host_name` and `executable_name` point to "null terminated
    /// character string[s]"; one whose NUL is not within
    /// `Limits::max_string_len` bytes is an `Unterminated` error naming the
    /// rank and member, and one that fits exactly is accepted.
    #[test]
    fn strings_are_bounded_by_the_limit(
        target in layout_strategy(),
        max_len in 0usize..600,
        excess in 0usize..3,
        skew in 0u64..PAGE,
    ) {
        let layout = target.procdesc();
        let limits = Limits { max_string_len: max_len, ..Limits::default() };
        let pool = vec![Vec::new(), vec![b'x'; max_len + excess]];
        let mut mem = PagedMemory::new();
        let written = write_table(&mut mem, &layout, 0x10_0000 + skew, &pool, 0x40_0000, &[(0, 1, 7)]);
        let result = decode_proctable(&mem, &layout, written.table_addr, 1, &limits);
        if excess == 0 {
            prop_assert_eq!(result.unwrap()[0].executable_name.len(), max_len);
        } else {
            let err = result.unwrap_err();
            let expected = matches!(
                err,
                DecodeError::Unterminated {
                    at: Location::Name { rank: 0, field: Field::ExecutableName },
                    max_len: m, ..
                } if m == max_len
            );
            prop_assert!(expected, "{:?}", err);
            // Each string read stops at its limit: max_len + 1 bytes.
            prop_assert!(mem.bytes_read() <= layout.size() + 2 * (max_len + 1));
        }
    }

    /// §2.8.6: the tool reads `MPIR_debug_state` as a C `int` of the target
    /// and maps 0, 1, 2 to MPIR_NULL, MPIR_DEBUG_SPAWNED, MPIR_DEBUG_ABORTING,
    /// every other value kept.
    #[test]
    fn debug_state_is_read_in_the_targets_representation(
        target in layout_strategy(),
        raw in prop_oneof![-3i32..5, any::<i32>()],
    ) {
        let mut mem = PagedMemory::new();
        let value = i64::from(raw);
        let bits = 8 * u32::from(target.int_width());
        prop_assume!(bits == 64 || (value >= -(1 << (bits - 1)) && value < 1 << (bits - 1)));
        mem.write(0x5000, &target_bytes(value as u64, target.int_width(), target.endianness()));
        let state = read_debug_state(&mem, &target, 0x5000).unwrap();
        prop_assert_eq!(state, DebugState::from_raw(raw));
        prop_assert_eq!(state.to_raw(), raw);
    }
}

/// `MPIR_proctable_size` = `i32::MAX` (a garbage size) returns an error at once, without
/// reading or allocating.
#[test]
fn size_i32_max_fails_fast() {
    let mem = PagedMemory::new();
    let start = Instant::now();
    let err = decode_proctable(
        &mem,
        &TargetLayout::LP64_LE.procdesc(),
        0x1000,
        i64::from(i32::MAX),
        &Limits::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, DecodeError::TooManyEntries { size, max } if size == i64::from(i32::MAX) && max == 1 << 20)
    );
    assert!(mem.reads().is_empty());
    assert!(start.elapsed() < Duration::from_millis(100));
}

/// Even with the entry limit lifted, a huge size does not allocate
/// `size * sizeof(MPIR_PROCDESC)` up front: the table is read in 64 KiB
/// chunks and the first failing chunk ends the decode.
#[test]
fn huge_size_without_limit_reads_one_chunk() {
    let layout = TargetLayout::LP64_LE.procdesc();
    let mut mem = PagedMemory::new();
    mem.write(0x1000, &[0u8; 4096]);
    let limits = Limits {
        max_entries: usize::MAX,
        ..Limits::default()
    };
    let start = Instant::now();
    let err = decode_proctable(&mem, &layout, 0x1000, i64::from(i32::MAX), &limits).unwrap_err();
    assert!(matches!(err, DecodeError::Read { .. }), "{err:?}");
    assert_eq!(mem.reads().len(), 1);
    assert!(mem.max_read_len() <= 64 * 1024);
    assert!(start.elapsed() < Duration::from_millis(100));
}

/// A zeroed table (mapped, but not filled in yet) has NULL string pointers:
/// a typed error naming rank 0's `host_name`.
#[test]
fn null_string_pointer_is_reported() {
    let layout = TargetLayout::ILP32_BE.procdesc();
    let mut mem = PagedMemory::new();
    mem.write(0x1000, &[0u8; 120]);
    let err = decode_proctable(&mem, &layout, 0x1000, 10, &Limits::default()).unwrap_err();
    assert!(matches!(
        err,
        DecodeError::NullPointer {
            at: Location::Name {
                rank: 0,
                field: Field::HostName
            }
        }
    ));
    assert_eq!(err.to_string(), "the host_name of rank 0 is a NULL pointer");
}

/// §2.7 step 10: a size of zero is the empty table; the table pointer is not
/// even looked at. A NULL table with a positive size is an error.
#[test]
fn empty_and_null_tables() {
    let layout = TargetLayout::LP64_LE.procdesc();
    let mem = PagedMemory::new();
    assert!(
        decode_proctable(&mem, &layout, 0, 0, &Limits::default())
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        decode_proctable(&mem, &layout, 0, 3, &Limits::default()),
        Err(DecodeError::NullTable { size: 3 })
    ));
    assert!(mem.reads().is_empty());
}

/// A table that would run past the end of the target's address space (2^32
/// for a 32-bit starter, 2^64 for a 64-bit one) is rejected before reading.
#[test]
fn table_past_the_address_space_is_rejected() {
    let mem = PagedMemory::new();
    let cases = [
        (TargetLayout::ILP32_LE, 0xffff_fff0u64, 2i64),
        (TargetLayout::ILP32_LE, 0x1_0000_0000, 1),
        (TargetLayout::LP64_LE, u64::MAX - 30, 2),
    ];
    for (target, addr, size) in cases {
        let err =
            decode_proctable(&mem, &target.procdesc(), addr, size, &Limits::default()).unwrap_err();
        assert!(
            matches!(err, DecodeError::AddressOverflow { .. }),
            "{err:?}"
        );
    }
    assert!(mem.reads().is_empty());
}

/// The distinct strings of one table are bounded in total.
#[test]
fn string_budget_is_enforced() {
    let layout = TargetLayout::LP64_LE.procdesc();
    let pool: Vec<Vec<u8>> = (0..40u8).map(|i| vec![b'a' + i % 26; 50]).collect();
    let entries: Vec<_> = (0..20).map(|i| (2 * i, 2 * i + 1, 100)).collect();
    let mut mem = PagedMemory::new();
    let w = write_table(&mut mem, &layout, 0x10_0000, &pool, 0x40_0000, &entries);
    let limits = Limits {
        max_total_string_bytes: 1000,
        ..Limits::default()
    };
    let err = decode_proctable(&mem, &layout, w.table_addr, 20, &limits).unwrap_err();
    assert!(matches!(err, DecodeError::StringBudget { max: 1000 }));
    // Reading stops at the string that crosses the budget: 19 strings of 51
    // bytes fit in 1000, the 20th does not; each was read in one 128-byte
    // first chunk.
    assert_eq!(mem.bytes_read(), 20 * 24 + 20 * 128);
}

/// A reader mapping at byte granularity (a `MemoryImage`, a core file):
/// strings that end exactly at the end of their region still decode, the
/// first over-long reads being retried with halves.
#[test]
fn byte_granular_memory_decodes() {
    let target = TargetLayout::ILP32_LE;
    let layout = target.procdesc();
    let mut mem = MemoryImage::new();
    mem.map(0x100, b"h\0".to_vec()).unwrap();
    mem.map(0x200, b"/bin/app\0".to_vec()).unwrap();
    let mut table = Vec::new();
    for pid in 1..=3 {
        table.extend(
            layout
                .encode_entry(&RawProcDesc {
                    host_name: 0x100,
                    executable_name: 0x200,
                    pid,
                })
                .unwrap(),
        );
    }
    mem.map(0x300, table).unwrap();
    let procs = decode_proctable(&mem, &layout, 0x300, 3, &Limits::default()).unwrap();
    assert_eq!(procs[2].host_name, "h");
    assert_eq!(procs[2].executable_name, "/bin/app");
    assert_eq!(procs[2].pid, 3);
    // One byte past the table is unmapped.
    assert!(matches!(
        decode_proctable(&mem, &layout, 0x300, 4, &Limits::default()),
        Err(DecodeError::Read { .. })
    ));
}

/// §2.8.7: the abort reason is a `char *`; NULL means no reason given.
#[test]
fn abort_string() {
    let target = TargetLayout::LP64_BE;
    let mut mem = PagedMemory::new();
    mem.write(0x8000, &target_bytes(0x9000, 8, Endianness::Big));
    mem.write(0x9000, b"rank 3 called MPI_Abort\0");
    mem.write(0x8008, &[0; 8]);
    assert_eq!(
        read_abort_string(&mem, &target, 0x8000, 4096)
            .unwrap()
            .unwrap(),
        "rank 3 called MPI_Abort"
    );
    assert_eq!(
        read_abort_string(&mem, &target, 0x8008, 4096).unwrap(),
        None
    );
    assert!(matches!(
        read_c_string(&mem, &target, 0, 10),
        Err(DecodeError::NullPointer { .. })
    ));
}

/// An 8-byte `int` may hold a value no C `int` of the spec's platforms
/// holds: a typed error, not a truncation.
#[test]
fn debug_state_out_of_range() {
    let target = TargetLayout::new(8, 8, 8, Endianness::Little).unwrap();
    let mut mem = PagedMemory::new();
    mem.write(0x10, &(1i64 << 40).to_le_bytes());
    assert!(matches!(
        read_debug_state(&mem, &target, 0x10),
        Err(DecodeError::StateOutOfRange { value }) if value == 1 << 40
    ));
}
