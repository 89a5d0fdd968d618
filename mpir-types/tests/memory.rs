//! `MemoryImage`, the in-memory address space: reads fail exactly where
//! bytes are unmapped, as a process's memory does.

use mpir_types::*;
use proptest::prelude::*;

proptest! {
    /// A read succeeds iff every byte it covers lies in a mapped region
    /// (regions may be adjacent), and returns those bytes.
    #[test]
    fn reads_see_exactly_the_mapped_bytes(
        regions in proptest::collection::vec((0u64..64, 1usize..16), 0..6),
        addr in 0u64..80,
        len in 0usize..40,
    ) {
        let mut mem = MemoryImage::new();
        let mut model = std::collections::BTreeMap::new();
        for (i, (start, len)) in regions.into_iter().enumerate() {
            let bytes: Vec<u8> = (0..len).map(|j| (i * 16 + j) as u8).collect();
            let overlaps = (start..start + len as u64).any(|a| model.contains_key(&a));
            match mem.map(start, bytes.clone()) {
                Ok(_) => {
                    prop_assert!(!overlaps);
                    for (j, b) in bytes.iter().enumerate() { model.insert(start + j as u64, *b); }
                }
                Err(e) => { prop_assert!(overlaps); prop_assert_eq!(e, MapError::Overlap { addr: start, len }); }
            }
        }
        prop_assert_eq!(mem.mapped_len(), model.len());
        let mut buf = vec![0; len];
        let expect: Option<Vec<u8>> = (addr..addr + len as u64).map(|a| model.get(&a).copied()).collect();
        match (mem.read(addr, &mut buf), expect) {
            (Ok(()), Some(bytes)) => prop_assert_eq!(buf, bytes),
            (Err(ReadError::Unmapped { addr: a, len: l }), None) => { prop_assert_eq!((a, l), (addr, len)); }
            (got, want) => prop_assert!(false, "{:?} vs {:?}", got, want),
        }
    }
}

/// A tool writes `MPIR_being_debugged = 1` into the starter; writes to
/// unmapped bytes change nothing.
#[test]
fn writes() {
    let target = TargetLayout::ILP32_BE;
    let mut mem = MemoryImage::new();
    mem.map(0x100, vec![0; 4]).unwrap();
    mem.write(0x100, &target.encode_int(BEING_DEBUGGED.into()).unwrap())
        .unwrap();
    assert_eq!(read_int(&mem, &target, 0x100).unwrap(), 1);
    assert_eq!(
        mem.write(0x102, &[1, 2, 3]),
        Err(MapError::Unmapped {
            addr: 0x102,
            len: 3
        })
    );
    assert_eq!(read_int(&mem, &target, 0x100).unwrap(), 1);
    assert!(matches!(
        mem.map(u64::MAX, vec![1, 2]),
        Err(MapError::InvalidRegion { .. })
    ));
    assert!(matches!(
        mem.map(0x200, Vec::new()),
        Err(MapError::InvalidRegion { .. })
    ));
    let mut buf = [0; 2];
    assert!(mem.read(u64::MAX, &mut buf).is_err());
    assert!(mem.read(0x100, &mut []).is_ok());
}

/// `TargetString` keeps bytes losslessly and displays them lossily.
#[test]
fn target_string() {
    let s = TargetString::from(&b"node\xff1"[..]);
    assert_eq!(s.as_bytes(), b"node\xff1");
    assert_eq!(s.to_string(), "node\u{fffd}1");
    assert_eq!(format!("{s:?}"), "\"node\\xff1\"");
    assert!(s.to_str().is_err());
    assert_eq!(TargetString::from("a"), "a");
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(s.as_os_str().as_bytes(), b"node\xff1");
    }
}
