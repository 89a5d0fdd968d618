//! The bodies of mpit-core's fuzz targets: the string-return convention of MPI-4.1 §16.3.3
//! (`MpiStr::from_filled`, `MpiString::from_filled`, `MpiString::fetch_after`,
//! `fetch_string`) against whatever an implementation writes and reports.
//!
//! Shared by the fuzz targets (`fuzz_targets/*.rs`, one call each) and by
//! `mpit-core/tests/fuzz_corpus.rs`, which includes this file as a module and replays every
//! committed input (`corpus/<target>/`, `regressions/<target>/`) through the same checks.
//! Every check is an `assert!`: a failure is a crash to the fuzzer and a failed test.
#![allow(unreachable_pub, missing_docs)]

use mpit_core::{Error, MAX_FETCH_ATTEMPTS, MAX_STRING_LEN, MpiStr, MpiString, fetch_string};

/// A target's body: one input, checked.
pub type Body = fn(&[u8]);

/// Every target: its name (as in Cargo.toml and under corpus/) and its body.
pub const TARGETS: &[(&str, Body)] = &[
    ("string_filled", string_filled),
    ("string_fetch", string_fetch),
];

/// The fuzzer's bytes read front to back; past the end every read is 0 (so every input is a
/// valid one).
struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.u8();
        }
        u64::from_le_bytes(b)
    }

    /// Up to `n` bytes.
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    fn rest(&mut self) -> &'a [u8] {
        self.bytes(usize::MAX)
    }

    fn remaining(&self) -> usize {
        self.data.len()
    }

    /// A length an implementation could report: small, near `near`, near the crate's cap,
    /// or anything.
    fn length(&mut self, near: usize) -> usize {
        // Lengths near the cap cost buffers of 1 MiB: one draw in eight.
        match self.u8() % 8 {
            0..=2 => usize::from(self.u8()),
            3 | 4 => near.wrapping_add(i64::from(self.u8() as i8) as usize),
            5 => usize::from(self.u16()),
            6 => self.u64() as usize,
            _ => (MAX_STRING_LEN + 1).wrapping_add(i64::from(self.u8() as i8) as usize),
        }
    }
}

/// `MpiStr::from_filled` and `MpiString::from_filled` on any buffer and reported length:
/// both agree with each other and with the rule restated here (a reported 0 is the empty
/// string; else the string is whole when the reported length is below the buffer's and its
/// first NUL is the byte at reported - 1), never hold a NUL, and `fetch_after` accepts such
/// a fill without another call.
pub fn string_filled(data: &[u8]) {
    let mut input = Input { data };
    let near = input.remaining().saturating_sub(3);
    let reported = input.length(near);
    let buf = input.rest();

    let borrowed = MpiStr::from_filled(buf, reported);
    let owned = MpiString::from_filled(buf, reported);
    assert_eq!(borrowed.map(MpiStr::to_mpi_string), owned);

    let expected: Option<&[u8]> = if reported == 0 {
        Some(b"")
    } else if reported < buf.len() && buf[reported - 1] == 0 && !buf[..reported - 1].contains(&0) {
        Some(&buf[..reported - 1])
    } else {
        None
    };
    assert_eq!(
        borrowed.map(MpiStr::as_bytes),
        expected,
        "reported {reported}"
    );

    if let Some(s) = borrowed {
        assert!(!s.as_bytes().contains(&0));
        assert_eq!(MpiStr::new(s.as_bytes()), Ok(s));
        let again = MpiString::fetch_after(buf, reported, |_| -> mpit_core::Result<usize> {
            panic!("fetch_after called the implementation for a whole string")
        });
        assert_eq!(again.as_ref().ok(), owned.as_ref());
    }
}

/// How the modelled implementation answers one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// §16.3.3 exactly.
    Conforming,
    /// Fills as §16.3.3, reports the length of what it wrote plus one (MPICH 4.0.2, Open MPI
    /// 4.1 and 5.0; the length of the whole string for a NULL buffer).
    ReportsWritten,
    /// Fills as §16.3.3, reports the length without the NUL.
    WithoutNul,
    /// `strncpy`: fills the whole buffer if the string is that long, a NUL only if there is
    /// room; reports the length plus one.
    Strncpy,
    /// The string grows by some bytes, then conforming.
    Grows,
    /// The string shrinks, then conforming.
    Shrinks,
    /// Fills as §16.3.3, reports any length.
    Lies,
    /// Writes arbitrary bytes (NULs included) at the start of the buffer, reports any
    /// length.
    Garbage,
    /// Fills the whole buffer without a NUL, reports the buffer's length.
    NeverTerminates,
    /// Fails with an error of its own.
    Fails,
}

impl Action {
    fn from_byte(b: u8) -> Action {
        match b % 16 {
            0..=4 => Action::Conforming,
            5 => Action::ReportsWritten,
            6 => Action::WithoutNul,
            7 => Action::Strncpy,
            8 => Action::Grows,
            9 => Action::Shrinks,
            10 | 11 => Action::Lies,
            12 | 13 => Action::Garbage,
            14 => Action::NeverTerminates,
            _ => Action::Fails,
        }
    }

    /// Writes a prefix of the string it holds (and a NUL or not) and stays consistent.
    fn honest(self) -> bool {
        matches!(
            self,
            Action::Conforming | Action::ReportsWritten | Action::WithoutNul | Action::Strncpy
        )
    }
}

/// One call the library made.
struct Call {
    /// The buffer's length (`None`: the length query).
    buf_len: Option<usize>,
    /// The buffer's bytes up to its first NUL, and that NUL's index (`None`: no NUL).
    string: Vec<u8>,
    nul: Option<usize>,
    /// What the call returned.
    result: mpit_core::Result<usize>,
}

/// An implementation of the convention driven by the fuzzer's bytes.
struct Hostile<'a> {
    script: Input<'a>,
    source: Vec<u8>,
    calls: Vec<Call>,
    /// Every action so far was `Conforming` (or `ReportsWritten` too).
    conforming: bool,
    mpich_like: bool,
    honest: bool,
    stable: bool,
}

impl Hostile<'_> {
    fn call(&mut self, buf: Option<&mut [u8]>, from_library: bool) -> mpit_core::Result<usize> {
        let buf_len = buf.as_ref().map(|b| b.len());
        if from_library {
            assert!(
                self.calls.len() <= MAX_FETCH_ATTEMPTS,
                "more than {} calls after the first",
                MAX_FETCH_ATTEMPTS + 1
            );
            if let Some(b) = &buf {
                // fetch_string's contract: zero-filled, 2 ..= MAX_STRING_LEN + 2 bytes.
                assert!(
                    (2..=MAX_STRING_LEN + 2).contains(&b.len()),
                    "buffer of {} bytes",
                    b.len()
                );
                assert!(b.iter().all(|&x| x == 0), "buffer not zero-filled");
            }
        }
        let action = Action::from_byte(self.script.u8());
        self.conforming &= action == Action::Conforming;
        self.mpich_like &= matches!(action, Action::Conforming | Action::ReportsWritten);
        self.honest &= action.honest();
        match action {
            Action::Grows => {
                self.stable = false;
                let n = usize::from(self.script.u8());
                let more = self.script.bytes(n).iter().map(|&b| b.max(1));
                self.source.extend(more);
            }
            Action::Shrinks => {
                self.stable = false;
                let keep = usize::from(self.script.u16());
                self.source.truncate(keep);
            }
            _ => {}
        }
        let whole = self.source.len() + 1;
        let result = match (action, buf) {
            (Action::Fails, _) => Err(Error::Other {
                code: i32::from(self.script.u16()) + 1,
            }),
            (Action::Lies | Action::Garbage, None) => Ok(self.script.length(whole)),
            (Action::WithoutNul, None) => Ok(whole - 1),
            (Action::NeverTerminates, None) => Ok(whole),
            (_, None) => Ok(whole),
            // A zero-length buffer is a length query (MPICH and Open MPI then report the
            // whole length).
            (Action::ReportsWritten, Some([])) => Ok(whole),
            (_, Some(b)) => {
                let n = b.len();
                let prefix = self.source.len().min(n.saturating_sub(1));
                let conforming_fill = |b: &mut [u8]| {
                    if n > 0 {
                        b[..prefix].copy_from_slice(&self.source[..prefix]);
                        b[prefix] = 0;
                    }
                };
                match action {
                    Action::Conforming | Action::Grows | Action::Shrinks => {
                        conforming_fill(b);
                        Ok(whole)
                    }
                    Action::ReportsWritten => {
                        conforming_fill(b);
                        Ok(prefix + 1)
                    }
                    Action::WithoutNul => {
                        conforming_fill(b);
                        Ok(whole - 1)
                    }
                    Action::Strncpy => {
                        let k = self.source.len().min(n);
                        b[..k].copy_from_slice(&self.source[..k]);
                        if k < n {
                            b[k] = 0;
                        }
                        Ok(whole)
                    }
                    Action::Lies => {
                        conforming_fill(b);
                        Ok(self.script.length(n))
                    }
                    Action::Garbage => {
                        let len = usize::from(self.script.u8());
                        let junk = self.script.bytes(len.min(n));
                        b[..junk.len()].copy_from_slice(junk);
                        Ok(self.script.length(n))
                    }
                    Action::NeverTerminates => {
                        b.fill(self.script.u8() | 1);
                        Ok(n)
                    }
                    Action::Fails => unreachable!(),
                }
            }
        };
        if from_library {
            // `string` and `nul` are filled in by `call_recorded`.
            self.calls.push(Call {
                buf_len,
                string: Vec::new(),
                nul: None,
                result: result.clone(),
            });
        }
        result
    }
}

/// `MpiString::fetch_after` (after a first call into a buffer of the fuzzer's length) or
/// `fetch_string` against an implementation that may bend or break the convention at every
/// call (see [`Action`]):
///
/// - every buffer the library passes is zero-filled and 2 ..= `MAX_STRING_LEN` + 2 bytes long,
///   and it makes at most `MAX_FETCH_ATTEMPTS` + 1 calls;
/// - a string returned holds no NUL, is at most `MAX_STRING_LEN` bytes, and is what the last
///   call wrote before its NUL (or what the first buffer holds by `from_filled`), never a cut
///   one: the NUL lies before the buffer's last byte and the last report does not exceed it;
/// - an error is the implementation's own (as is), `StringTooLong` for a reported length above
///   the cap, or `Truncated` after `MAX_FETCH_ATTEMPTS`;
/// - an implementation that only writes prefixes of a string that does not change (however it
///   reports) gives exactly that string, or `StringTooLong`/`Truncated` if it exceeds the
///   cap; a conforming one costs the calls the documentation promises (fetch_string: two;
///   fetch_after: none when the string fitted the first buffer, else one), and one that
///   reports what it wrote (MPICH, Open MPI) at most two.
pub fn string_fetch(data: &[u8]) {
    let mut input = Input { data };
    let mode = input.u8();
    let first_len = usize::from(input.u8());
    // The string: a few bytes of the input, possibly repeated to any length up to past the
    // crate's cap (NULs replaced: the string has none).
    let seed_len = usize::from(input.u8() % 64);
    let seed: Vec<u8> = input.bytes(seed_len).iter().map(|&b| b.max(1)).collect();
    let source = match (input.u8() % 8, seed.is_empty()) {
        (_, true) => Vec::new(),
        (0, false) => {
            let len = input.length(MAX_STRING_LEN).min(MAX_STRING_LEN + 64);
            seed.iter().copied().cycle().take(len).collect()
        }
        (1, false) => {
            let times = usize::from(input.u8());
            seed.iter()
                .copied()
                .cycle()
                .take(seed.len() * times)
                .collect()
        }
        _ => seed,
    };
    let mut imp = Hostile {
        script: input,
        source: source.clone(),
        calls: Vec::new(),
        conforming: true,
        mpich_like: true,
        honest: true,
        stable: true,
    };
    let after = mode.is_multiple_of(2);
    let mut first = vec![0u8; first_len];
    let mut first_reported = None;
    let (result, first_fill) = if after {
        // The caller's own first call (stale bytes are allowed: fill with a pattern first).
        first.fill(mode | 1);
        let reported = imp.call(Some(&mut first), false);
        let Ok(reported) = reported else {
            return; // The caller handles its own call's error.
        };
        first_reported = Some(reported);
        let from_filled = MpiString::from_filled(&first, reported);
        let r = MpiString::fetch_after(&first, reported, |b| call_recorded(&mut imp, b));
        (r, Some(from_filled))
    } else {
        (fetch_string(|b| call_recorded(&mut imp, b)), None)
    };
    let calls = &imp.calls;
    match &result {
        Ok(s) => {
            assert!(!s.as_bytes().contains(&0));
            assert!(s.len() <= MAX_STRING_LEN);
            match calls.last() {
                None => {
                    let filled = first_fill.clone().flatten();
                    assert_eq!(Some(s), filled.as_ref(), "no call, yet not from_filled");
                }
                Some(last) => match last.buf_len {
                    None => {
                        // fetch_string's length query reported 0: the empty string.
                        assert!(s.is_empty());
                        assert_eq!(last.result, Ok(0));
                    }
                    Some(n) => {
                        let nul = last.nul.expect("a string from a buffer without NUL");
                        assert_eq!(s.as_bytes(), &last.string[..], "not the last fill");
                        assert!(nul + 1 < n, "a string whose NUL is the buffer's last byte");
                        let reported = last.result.clone().expect("accepted after an error");
                        assert!(reported <= n, "accepted with a longer report");
                    }
                },
            }
        }
        Err(Error::Other { code }) => {
            let last = calls.last().expect("an error without a call");
            assert_eq!(last.result, Err(Error::Other { code: *code }));
        }
        Err(Error::StringTooLong { len }) => {
            assert!(*len > MAX_STRING_LEN + 1);
            assert!(
                calls.iter().any(|c| c.result == Ok(*len)) || first_reported == Some(*len),
                "StringTooLong for a length never reported"
            );
        }
        Err(Error::Truncated { attempts }) => assert_eq!(*attempts, MAX_FETCH_ATTEMPTS),
        Err(e) => panic!("unexpected error {e:?}"),
    }
    if imp.honest && imp.stable {
        if source.len() <= MAX_STRING_LEN {
            assert_eq!(result.as_ref().map(MpiString::as_bytes), Ok(&source[..]));
        } else {
            assert!(matches!(
                result,
                Err(Error::StringTooLong { .. } | Error::Truncated { .. })
            ));
        }
        let n = calls.len();
        if imp.conforming && source.len() <= MAX_STRING_LEN {
            // fetch_after: nothing more when the string fitted with room to spare; a string
            // that fills the first buffer exactly (its NUL in the last byte, reported as its
            // length) looks like a cut one from MPICH, and is fetched again from the start.
            let promised = match first_fill {
                None => 2,
                Some(_) if source.len() + 1 < first_len => 0,
                Some(_) if source.len() + 1 == first_len => 2,
                Some(_) => 1,
            };
            assert!(n <= promised, "{n} calls, {promised} promised");
        }
        if imp.mpich_like && source.len() <= MAX_STRING_LEN {
            assert!(
                n <= 2,
                "{n} calls from an implementation that reports what it wrote"
            );
        }
    }
}

/// One call by the library, with what the buffer holds afterwards recorded.
fn call_recorded(imp: &mut Hostile<'_>, buf: Option<&mut [u8]>) -> mpit_core::Result<usize> {
    match buf {
        None => imp.call(None, true),
        Some(b) => {
            let r = imp.call(Some(&mut *b), true);
            let nul = b.iter().position(|&x| x == 0);
            let last = imp.calls.last_mut().expect("just recorded");
            last.string = b[..nul.unwrap_or(b.len())].to_vec();
            last.nul = nul;
            r
        }
    }
}
