//! `MpiStr`, the borrowed string of MPI-4.1 §16.3.3: what `from_filled` accepts, for every
//! length around the blocks its NUL search works in (16 and 32 bytes) and every place of a
//! stray NUL, and its agreement with `MpiString`.

use mpit_core::{MpiStr, MpiString};

/// A buffer as a call leaves it: `s`, a NUL, stale bytes after.
fn filled(s: &[u8]) -> Vec<u8> {
    let mut buf = s.to_vec();
    buf.push(0);
    buf.extend_from_slice(b"stale");
    buf
}

/// Every length up to 100 bytes: the string is accepted whole without a NUL inside, refused
/// with one anywhere, and `MpiString::from_filled` says the same.
#[test]
fn from_filled_refuses_a_nul_anywhere() {
    for len in 0..=100usize {
        let s: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        let buf = filled(&s);
        let whole = MpiStr::from_filled(&buf, len + 1).expect("whole");
        assert_eq!(whole.as_bytes(), &s[..], "len {len}");
        assert_eq!(
            MpiString::from_filled(&buf, len + 1),
            Some(whole.to_mpi_string())
        );
        for p in 0..len {
            let mut cut = s.clone();
            cut[p] = 0;
            let buf = filled(&cut);
            assert_eq!(
                MpiStr::from_filled(&buf, len + 1),
                None,
                "len {len}, NUL at {p}"
            );
            assert_eq!(MpiString::from_filled(&buf, len + 1), None);
        }
    }
}

/// The borrowed and the owned string compare, print and convert alike.
#[test]
fn borrowed_and_owned_agree() {
    let owned = MpiString::new(vec![b'a', 0xff, b'b']).unwrap();
    let s = owned.as_mpi_str();
    assert_eq!(s, owned);
    assert_eq!(owned, s);
    assert_eq!(s.to_mpi_string(), owned);
    assert_eq!(MpiString::from(s), owned);
    assert_eq!(s.to_string(), owned.to_string());
    assert_eq!(format!("{s:?}"), format!("{owned:?}"));
    assert_eq!(s.len(), 3);
    assert!(s.to_str().is_err());
    let plain = MpiStr::new(b"eager").unwrap();
    assert_eq!(plain, "eager");
    assert_eq!(plain.to_str(), Ok("eager"));
    assert!(MpiStr::new(b"ea\0ger").is_err());
    assert!(MpiStr::default().is_empty());
    assert_eq!(MpiStr::from_filled(b"x", 0), Some(MpiStr::default()));
}

proptest::proptest! {
    /// MPI-4.1 §16.3.3: the string a call wrote is the bytes before its NUL, and its reported
    /// length counts the NUL. `from_filled` takes a buffer whose first `reported` bytes end in
    /// the first NUL of the buffer, and nothing else: for any bytes (NULs, bytes with the high
    /// bit set, around the 16-byte word the short path reads) and any report.
    #[test]
    fn from_filled_is_the_first_nul_at_the_reported_end(
        buf in proptest::collection::vec(
            proptest::prop_oneof![proptest::prelude::Just(0u8), 0x7fu8..=0x81, proptest::prelude::any::<u8>()],
            0..70,
        ),
        reported in 0usize..72,
    ) {
        let expected = match reported {
            0 => Some(&b""[..]),
            r if r < buf.len() && buf.iter().position(|&c| c == 0) == Some(r - 1) => Some(&buf[..r - 1]),
            _ => None,
        };
        proptest::prop_assert_eq!(MpiStr::from_filled(&buf, reported).map(MpiStr::as_bytes), expected);
    }
}
