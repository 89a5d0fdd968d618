//! The string-return convention of MPI-4.1 §16.3.3, checked against a model
//! of conforming and non-conforming implementations.

use mpit_core::{
    Error, ErrorClass, MAX_FETCH_ATTEMPTS, MAX_STRING_LEN, MpiString, Result, fetch_string,
};
use proptest::prelude::*;

/// How a modelled implementation answers one call.
#[derive(Clone, Debug)]
enum Behavior {
    /// §16.3.3 exactly: writes at most n-1 characters and a NUL, reports the
    /// string's length plus one.
    Conforming,
    /// Reports the length without the NUL (query and fetch), fills
    /// correctly.
    LengthWithoutNul,
    /// `strncpy`-like fill: writes min(len, n) characters and a NUL only if
    /// there is room; reports the length plus one.
    NoNulWhenFull,
    /// Both combined: the worst realistic case.
    LengthWithoutNulAndNoNulWhenFull,
    /// The length query under-reports by `k` (at least 1 remains); fetches
    /// report correctly.
    ShortQuery(usize),
    /// Every report is short by `k` (at least 1 remains).
    AlwaysShort(usize),
    /// Conforming, but the string grows by `chunk` on each of the first
    /// `times` calls.
    Grows { chunk: Vec<u8>, times: usize },
    /// Fills the whole buffer with non-NUL bytes, never terminating.
    NeverTerminates,
    /// Reports a length above the crate's cap.
    Huge(usize),
    /// Reports 0 for the query (the convention's empty string).
    ZeroLength,
    /// Fails with an MPI_T error on call number `at` (0 = the query).
    FailsAt(usize),
    /// MPICH 4.0.2, Open MPI 4.1 and 5.0: fill correctly, but report the length of what they
    /// wrote plus one when given a buffer, so a cut string is not shown by the length (the
    /// query is right).
    ReportsWritten,
}

/// A modelled MPI implementation returning one string.
#[derive(Debug)]
struct ModelString {
    source: Vec<u8>,
    behavior: Behavior,
    calls: usize,
    /// The string as it was at the last call that filled a buffer.
    served: Option<Vec<u8>>,
    largest_buffer: usize,
}

impl ModelString {
    fn new(source: Vec<u8>, behavior: Behavior) -> Self {
        ModelString {
            source,
            behavior,
            calls: 0,
            served: None,
            largest_buffer: 0,
        }
    }

    fn call(&mut self, buf: Option<&mut [u8]>) -> Result<usize> {
        let call = self.calls;
        self.calls += 1;
        if let Behavior::Grows { chunk, times } = &self.behavior
            && call < *times
        {
            self.source.extend_from_slice(chunk);
        }
        if let Behavior::FailsAt(at) = self.behavior
            && call == at
        {
            return Err(Error::Mpi {
                class: ErrorClass::InvalidIndex,
                code: 99,
            });
        }
        let len = self.source.len();
        let query = buf.is_none();
        let mut written = len;
        if let Some(buf) = buf {
            self.largest_buffer = self.largest_buffer.max(buf.len());
            let n = buf.len();
            match self.behavior {
                Behavior::NoNulWhenFull | Behavior::LengthWithoutNulAndNoNulWhenFull => {
                    let k = len.min(n);
                    buf[..k].copy_from_slice(&self.source[..k]);
                    if k < n {
                        buf[k] = 0;
                    }
                }
                Behavior::NeverTerminates => buf.fill(b'x'),
                _ if n > 0 => {
                    let k = len.min(n - 1);
                    buf[..k].copy_from_slice(&self.source[..k]);
                    buf[k] = 0;
                    written = k;
                }
                _ => {}
            }
            self.served = Some(self.source.clone());
        }
        Ok(match self.behavior {
            Behavior::LengthWithoutNul | Behavior::LengthWithoutNulAndNoNulWhenFull => len,
            Behavior::ShortQuery(k) if query => (len + 1).saturating_sub(k).max(1),
            Behavior::AlwaysShort(k) => (len + 1).saturating_sub(k).max(1),
            Behavior::Huge(extra) => MAX_STRING_LEN + 2 + extra,
            Behavior::ZeroLength if query => 0,
            Behavior::ReportsWritten => written + 1,
            _ => len + 1,
        })
    }

    fn fetch(&mut self) -> Result<MpiString> {
        fetch_string(|buf| self.call(buf))
    }

    /// A first call into a fixed buffer of `n` bytes (as one `MPI_T_*_get_info` call fills
    /// name and description buffers on the stack), then [`MpiString::fetch_after`].
    fn fetch_after_first(&mut self, n: usize) -> Result<MpiString> {
        let mut first = vec![0u8; n];
        let reported = self.call(Some(&mut first))?;
        MpiString::fetch_after(&first, reported, |buf| self.call(buf))
    }
}

/// C strings: any bytes but NUL, including invalid UTF-8.
fn c_string() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(1u8..=255, 0..300)
}

fn chunk() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(1u8..=255, 1..20)
}

/// Non-conforming behaviors that the algorithm must survive with the exact
/// string.
fn tolerated() -> impl Strategy<Value = Behavior> {
    prop_oneof![
        Just(Behavior::ReportsWritten),
        Just(Behavior::LengthWithoutNul),
        Just(Behavior::NoNulWhenFull),
        Just(Behavior::LengthWithoutNulAndNoNulWhenFull),
        (1usize..400).prop_map(Behavior::ShortQuery),
        (chunk(), 0usize..=4).prop_map(|(chunk, times)| Behavior::Grows { chunk, times }),
    ]
}

/// Every behavior, including those that must end in a typed error.
fn any_behavior() -> impl Strategy<Value = Behavior> {
    prop_oneof![
        Just(Behavior::Conforming),
        tolerated(),
        (1usize..400).prop_map(Behavior::AlwaysShort),
        (chunk(), 0usize..=20).prop_map(|(chunk, times)| Behavior::Grows { chunk, times }),
        Just(Behavior::NeverTerminates),
        (0usize..1000).prop_map(Behavior::Huge),
        Just(Behavior::ZeroLength),
        (0usize..4).prop_map(Behavior::FailsAt),
    ]
}

proptest! {
    /// §16.3.3: against a conforming implementation the result is exactly
    /// the source bytes (invalid UTF-8 kept), in one query and one fetch,
    /// with a buffer of the string's length plus two.
    #[test]
    fn conforming_returns_the_exact_bytes(src in c_string()) {
        let mut m = ModelString::new(src.clone(), Behavior::Conforming);
        let s = m.fetch().unwrap();
        prop_assert_eq!(s.as_bytes(), &src[..]);
        prop_assert_eq!(m.calls, 2);
        prop_assert_eq!(m.largest_buffer, src.len() + 2);
    }

    /// Implementations that report the length without the NUL, write no NUL
    /// into a full buffer, under-report the query, or whose string grows a
    /// few times between calls still yield the exact string (as it was at
    /// the last fetch).
    #[test]
    fn tolerated_deviations_return_the_exact_bytes(src in c_string(), b in tolerated()) {
        let mut m = ModelString::new(src, b);
        let s = m.fetch().unwrap();
        // An empty string reported as length 0 (no NUL counted) needs no fetch at all.
        prop_assert_eq!(s.into_bytes(), m.served.clone().unwrap_or_default());
        prop_assert!(m.calls <= 1 + MAX_FETCH_ATTEMPTS);
    }

    /// Whatever the implementation does, the result is either the exact
    /// string it last served or a typed error; the closure is called at most
    /// 1 + MAX_FETCH_ATTEMPTS times; buffers never exceed the cap.
    #[test]
    fn any_behavior_exact_or_typed_error(src in c_string(), b in any_behavior()) {
        let mut m = ModelString::new(src.clone(), b.clone());
        let r = m.fetch();
        prop_assert!(m.calls <= 1 + MAX_FETCH_ATTEMPTS);
        prop_assert!(m.largest_buffer <= MAX_STRING_LEN + 2);
        match (r, &b) {
            (Ok(s), Behavior::ZeroLength) => prop_assert!(s.is_empty()),
            // No fetch was needed when the query reported 0 (an empty string without its NUL).
            (Ok(s), _) => prop_assert_eq!(s.into_bytes(), m.served.clone().unwrap_or_default()),
            (Err(Error::Mpi { class: ErrorClass::InvalidIndex, code: 99 }), Behavior::FailsAt(_)) => {}
            (Err(Error::StringTooLong { .. }), Behavior::Huge(_)) => {
                // Refused before allocating anything.
                prop_assert_eq!(m.largest_buffer, 0);
            }
            (Err(Error::Truncated { attempts }), _) => {
                prop_assert_eq!(attempts, MAX_FETCH_ATTEMPTS);
                prop_assert!(!matches!(b, Behavior::Conforming));
            }
            (Err(e), _) => prop_assert!(false, "unexpected error {:?} for {:?}", e, b),
        }
    }

    /// An implementation that never terminates the string is a typed
    /// error, with bounded allocation.
    #[test]
    fn never_terminated_is_an_error(src in c_string()) {
        let mut m = ModelString::new(src, Behavior::NeverTerminates);
        prop_assert_eq!(m.fetch(), Err(Error::Truncated { attempts: MAX_FETCH_ATTEMPTS }));
    }

    /// §16.3.3 after a first call into a fixed buffer of `n` bytes: against a conforming
    /// implementation the result is exactly the source bytes; a string of up to `n - 2` bytes
    /// costs that call alone; a longer one, whose reported length (its length plus one)
    /// exceeds `n`, one call more into a buffer of that length plus one; one of exactly `n - 1`
    /// bytes, which fills the buffer to its last byte with a length that does not exceed it
    /// (what a cut string looks like on MPICH), a length query and a fetch more.
    #[test]
    fn first_call_then_conforming(src in c_string(), n in 2usize..400) {
        let mut m = ModelString::new(src.clone(), Behavior::Conforming);
        let s = m.fetch_after_first(n).unwrap();
        prop_assert_eq!(s.as_bytes(), &src[..]);
        let len = src.len();
        let (calls, largest) = match (len + 2).cmp(&n) {
            std::cmp::Ordering::Less | std::cmp::Ordering::Equal => (1, n),
            _ if len + 1 == n => (3, n.max(len + 2)),
            _ => (2, n.max(len + 2)),
        };
        prop_assert_eq!((m.calls, m.largest_buffer), (calls, largest));
    }

    /// The first call then `fetch_after` survives what `fetch_string` survives, and MPICH's
    /// lengths of the written part: the exact string (as last served), in at most the first
    /// call, a length query and MAX_FETCH_ATTEMPTS fetches.
    #[test]
    fn first_call_then_tolerated(src in c_string(), b in tolerated(), n in 2usize..400) {
        let mut m = ModelString::new(src, b);
        let s = m.fetch_after_first(n).unwrap();
        prop_assert_eq!(s.into_bytes(), m.served.clone().unwrap_or_default());
        prop_assert!(m.calls <= 2 + MAX_FETCH_ATTEMPTS);
    }

    /// Whatever the implementation does after a first call of `n` bytes: the exact string it
    /// last served or a typed error, a bounded number of calls, buffers within the cap, and no
    /// allocation at all for a reported length above it.
    #[test]
    fn first_call_then_exact_or_typed_error(
        src in c_string(),
        b in any_behavior(),
        n in 2usize..400,
    ) {
        let mut m = ModelString::new(src, b.clone());
        let r = m.fetch_after_first(n);
        prop_assert!(m.calls <= 2 + MAX_FETCH_ATTEMPTS);
        prop_assert!(m.largest_buffer <= MAX_STRING_LEN + 2);
        match (r, &b) {
            // The query's 0 means the empty string, if the fallback asked it.
            (Ok(s), Behavior::ZeroLength) if s.is_empty() => {}
            (Ok(s), _) => prop_assert_eq!(s.into_bytes(), m.served.clone().unwrap_or_default()),
            (Err(Error::Mpi { class: ErrorClass::InvalidIndex, code: 99 }), Behavior::FailsAt(_)) => {}
            (Err(Error::StringTooLong { .. }), Behavior::Huge(_)) => {
                prop_assert_eq!(m.largest_buffer, n);
            }
            (Err(Error::Truncated { attempts }), _) => {
                prop_assert_eq!(attempts, MAX_FETCH_ATTEMPTS);
                prop_assert!(!matches!(b, Behavior::Conforming | Behavior::ReportsWritten));
            }
            (Err(e), _) => prop_assert!(false, "unexpected error {:?} for {:?}", e, b),
        }
    }

    /// `from_filled` takes only a string the buffer holds whole, whatever the buffer held
    /// before the call (it is not cleared between the calls of a listing): for a conforming
    /// implementation, or MPICH's lengths of the written part, exactly when the string has at
    /// most `n - 2` bytes, and then it is the string; for the other deviations and for an
    /// implementation that writes no NUL after the string, the string or nothing, never stale
    /// bytes.
    #[test]
    fn from_filled_takes_only_whole_strings(
        src in c_string(),
        stale in proptest::collection::vec(any::<u8>(), 0..400),
        b in prop_oneof![
            Just(Behavior::Conforming),
            Just(Behavior::ReportsWritten),
            Just(Behavior::LengthWithoutNul),
            Just(Behavior::NoNulWhenFull),
            Just(Behavior::AlwaysShort(2)),
        ],
        nul_written in any::<bool>(),
    ) {
        let mut buf = stale.clone();
        let n = buf.len();
        let mut m = ModelString::new(src.clone(), b.clone());
        let reported = if n > 0 { m.call(Some(&mut buf)).unwrap() } else { src.len() + 1 };
        if !nul_written && src.len() < n {
            buf[src.len()] = stale[src.len()];
        }
        match MpiString::from_filled(&buf, reported) {
            Some(s) => prop_assert_eq!(s.as_bytes(), &src[..]),
            None if nul_written && matches!(b, Behavior::Conforming | Behavior::ReportsWritten) => {
                prop_assert!(src.len() + 2 > n)
            }
            None => {}
        }
    }

    /// MpiString keeps the bytes and compares with the original.
    #[test]
    fn mpi_string_is_lossless(src in c_string()) {
        let s = MpiString::new(src.clone()).unwrap();
        prop_assert_eq!(s.as_bytes(), &src[..]);
        prop_assert_eq!(s.len(), src.len());
        prop_assert_eq!(s.to_str().ok(), core::str::from_utf8(&src).ok());
        prop_assert_eq!(s.to_string_lossy(), String::from_utf8_lossy(&src));
        prop_assert_eq!(s.to_string(), String::from_utf8_lossy(&src).into_owned());
        let c = s.to_c_string();
        prop_assert_eq!(c.as_bytes(), &src[..]);
        prop_assert_eq!(MpiString::from_nul_terminated(&[&src[..], b"\0rest"].concat()), s.clone());
        let dbg = format!("{:?}", s);
        prop_assert!(!dbg.is_empty());
        prop_assert_eq!(s.into_bytes(), src);
    }

    /// A NUL inside is refused with its position.
    #[test]
    fn interior_nul_is_refused(a in c_string(), b in c_string()) {
        let bytes = [&a[..], &[0], &b[..]].concat();
        prop_assert_eq!(MpiString::new(bytes), Err(Error::InteriorNul { position: a.len() }));
    }
}

/// §16.3.3: a reported length of 0 means the empty string; the buffer
/// convention also returns the empty string for a length of 1.
#[test]
fn empty_strings() {
    let mut m = ModelString::new(b"ignored".to_vec(), Behavior::ZeroLength);
    assert_eq!(m.fetch().unwrap(), "");
    assert_eq!(m.calls, 1);
    let mut m = ModelString::new(Vec::new(), Behavior::Conforming);
    assert_eq!(m.fetch().unwrap(), "");
    assert_eq!(m.calls, 2);
}

/// The cap: a string of exactly MAX_STRING_LEN bytes is fetched, one byte
/// more is a typed error before any allocation.
#[test]
fn cap_boundary() {
    let mut m = ModelString::new(vec![b'a'; MAX_STRING_LEN], Behavior::Conforming);
    assert_eq!(m.fetch().unwrap().len(), MAX_STRING_LEN);
    let mut m = ModelString::new(vec![b'a'; MAX_STRING_LEN], Behavior::LengthWithoutNul);
    assert_eq!(m.fetch().unwrap().len(), MAX_STRING_LEN);
    let mut m = ModelString::new(vec![b'a'; MAX_STRING_LEN + 1], Behavior::Conforming);
    assert_eq!(
        m.fetch(),
        Err(Error::StringTooLong {
            len: MAX_STRING_LEN + 2
        })
    );
    assert_eq!(m.largest_buffer, 0);
}

/// Debug is lossless, Display is lossy.
#[test]
fn debug_and_display() {
    let s = MpiString::new(b"a\xffb".to_vec()).unwrap();
    assert_eq!(format!("{s:?}"), "b\"a\\xffb\"");
    assert_eq!(s.to_string(), "a\u{fffd}b");
    let t = MpiString::try_from("caf\u{e9}").unwrap();
    assert_eq!(format!("{t:?}"), "\"caf\u{e9}\"");
    assert_eq!(t, "caf\u{e9}");
    assert_eq!("caf\u{e9}", t);
}
