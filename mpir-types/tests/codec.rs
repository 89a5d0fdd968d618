//! The tool daemon launch extension's arrays (§2.6.1): `MPIR_server_arguments`
//! (§2.8.17) and `MPIR_executable_path` (§2.8.16).

use mpir_types::*;
use proptest::prelude::*;

/// A valid server argument: at least one byte, no NUL.
fn arg() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(1u8..=255, 1..40)
}

/// The spec's reading of a buffer, written independently: split at NULs;
/// the strings before the first empty one are the arguments; if every
/// NUL-terminated piece is non-empty, the list is unterminated.
fn model_decode(buf: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut pieces: Vec<&[u8]> = buf.split(|b| *b == 0).collect();
    pieces.pop(); // the part after the last NUL is not NUL-terminated
    let mut args = Vec::new();
    for p in pieces {
        if p.is_empty() {
            return Some(args);
        }
        args.push(p.to_vec());
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// §2.8.17: "a sequence of zero or more null-terminated character
    /// strings followed by a null character ... Each null-terminated
    /// character string is passed as a single argument": encoding then
    /// decoding (even with garbage after the terminator up to the array's
    /// size, as in a reused array) gives the arguments back; the encoding is
    /// exactly each argument plus a NUL, then a NUL.
    #[test]
    fn server_arguments_round_trip(
        args in proptest::collection::vec(arg(), 0..20),
        slack in 0usize..64,
        garbage in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let needed: usize = args.iter().map(|a| a.len() + 1).sum::<usize>() + 1;
        let size = needed + slack;
        let enc = encode_server_arguments(&args, size).unwrap();
        prop_assert_eq!(enc.len(), needed);
        prop_assert_eq!(enc.last(), Some(&0));
        let mut array = enc.clone();
        array.extend(garbage.iter().take(slack));
        let dec = decode_server_arguments(&array).unwrap();
        prop_assert_eq!(dec.len(), args.len());
        for (d, a) in dec.iter().zip(&args) {
            prop_assert_eq!(d.as_bytes(), &a[..]);
        }
    }

    /// The target's array has a fixed size (1024 in the spec and Open MPI):
    /// an encoding that does not fit is a `TooLong` error naming the bytes
    /// needed, exactly when the needed bytes exceed the size.
    #[test]
    fn server_arguments_respect_the_array_size(
        args in proptest::collection::vec(arg(), 0..20),
        size in 0usize..400,
    ) {
        let needed: usize = args.iter().map(|a| a.len() + 1).sum::<usize>() + 1;
        match encode_server_arguments(&args, size) {
            Ok(enc) => { prop_assert!(needed <= size); prop_assert_eq!(enc.len(), needed); }
            Err(CodecError::TooLong { needed: n, size: s, symbol }) => {
                prop_assert!(needed > size);
                prop_assert!(n > s && n <= needed);
                prop_assert_eq!(s, size);
                prop_assert_eq!(symbol, "MPIR_server_arguments");
            }
            Err(e) => prop_assert!(false, "unexpected {:?}", e),
        }
    }

    /// §2.8.17: "It is not possible to pass the empty string ("") as an
    /// argument", and an argument with a NUL would arrive split: both are
    /// typed errors naming the argument.
    #[test]
    fn empty_or_nul_arguments_are_rejected(
        mut args in proptest::collection::vec(arg(), 1..10),
        at in any::<prop::sample::Index>(),
        nul_at in any::<prop::sample::Index>(),
        empty in any::<bool>(),
    ) {
        let i = at.index(args.len());
        if empty {
            args[i].clear();
            prop_assert_eq!(
                encode_server_arguments(&args, 4096),
                Err(CodecError::EmptyArgument { index: i })
            );
        } else {
            let p = nul_at.index(args[i].len());
            args[i][p] = 0;
            // An earlier argument is checked first; all are valid here.
            prop_assert_eq!(
                encode_server_arguments(&args, 4096),
                Err(CodecError::ArgumentContainsNul { index: i, position: p })
            );
        }
    }

    /// Decoding any bytes (a starter reading an array a tool never wrote, or
    /// wrote badly) never panics and agrees with the spec's reading: the
    /// strings before the first empty string, or `Unterminated` when the
    /// array holds no terminating empty string. A successful decode
    /// re-encodes to a prefix of the buffer.
    #[test]
    fn decode_arbitrary_bytes(buf in proptest::collection::vec(prop_oneof![Just(0u8), any::<u8>()], 0..200)) {
        let got = decode_server_arguments(&buf);
        match model_decode(&buf) {
            Some(args) => {
                let got = got.unwrap();
                let got: Vec<Vec<u8>> = got.iter().map(TargetString::to_vec).collect();
                prop_assert_eq!(&got, &args);
                let enc = encode_server_arguments(&got, buf.len()).unwrap();
                prop_assert_eq!(&buf[..enc.len()], &enc[..]);
            }
            None => prop_assert_eq!(got, Err(CodecError::Unterminated {
                symbol: "MPIR_server_arguments", size: buf.len()
            })),
        }
    }

    /// §2.8.16: "a null-terminated character string" in a fixed array: the
    /// path round-trips when path + NUL fits the array, is `TooLong`
    /// otherwise; decoding stops at the first NUL.
    #[test]
    fn executable_path_round_trip(
        path in proptest::collection::vec(1u8..=255, 1..600),
        garbage in proptest::collection::vec(any::<u8>(), 0..16),
    ) {
        for size in [SPEC_EXECUTABLE_PATH_SIZE, OPEN_MPI_EXECUTABLE_PATH_SIZE] {
            match encode_executable_path(&path, size) {
                Ok(enc) => {
                    prop_assert!(path.len() < size);
                    let mut array = enc.clone();
                    array.extend(&garbage);
                    prop_assert_eq!(decode_executable_path(&array).unwrap().to_vec(), path.clone());
                }
                Err(e) => {
                    prop_assert!(path.len() >= size);
                    prop_assert_eq!(e, CodecError::TooLong {
                        symbol: "MPIR_executable_path", needed: path.len() + 1, size
                    });
                }
            }
        }
    }

    /// Decoding any bytes as an executable path never panics: the bytes
    /// before the first NUL, or `Unterminated` when there is none.
    #[test]
    fn executable_path_decode_arbitrary(buf in proptest::collection::vec(any::<u8>(), 0..300)) {
        match buf.iter().position(|b| *b == 0) {
            Some(n) => prop_assert_eq!(decode_executable_path(&buf).unwrap().to_vec(), buf[..n].to_vec()),
            None => prop_assert!(decode_executable_path(&buf).is_err()),
        }
    }
}

/// The spec's example (§2.8.17), with the bytes its text means: four
/// arguments, one with a space and a tab.
#[test]
fn spec_example() {
    let bytes = b"--callback\x0010.0.0.10\0-name\0has spaces and\ttabs\0\0";
    let args = decode_server_arguments(bytes).unwrap();
    assert_eq!(
        args,
        ["--callback", "10.0.0.10", "-name", "has spaces and\ttabs"]
    );
    assert_eq!(
        encode_server_arguments(
            ["--callback", "10.0.0.10", "-name", "has spaces and\ttabs"],
            SPEC_SERVER_ARGUMENTS_SIZE
        )
        .unwrap(),
        bytes
    );
}

/// The spec's example read as C would compile it: `"\010"` is one octal
/// escape (backspace), so the literal holds three arguments, the first being
/// `--callback\b.0.0.10`. Tools must not copy the literal.
#[test]
fn spec_example_as_a_c_literal_is_different() {
    let c_literal = b"--callback\x08.0.0.10\0-name\0has spaces and\ttabs\0\0";
    let args = decode_server_arguments(c_literal).unwrap();
    assert_eq!(args.len(), 3);
    assert_eq!(args[0], "--callback\u{8}.0.0.10");
}

/// Zero arguments: a single NUL; a zeroed (never written) array decodes to
/// no arguments; an empty buffer or one without a terminator is an error.
#[test]
fn edge_cases() {
    let none: [&str; 0] = [];
    assert_eq!(encode_server_arguments(none, 1).unwrap(), b"\0");
    assert!(matches!(
        encode_server_arguments(none, 0),
        Err(CodecError::TooLong {
            needed: 1,
            size: 0,
            ..
        })
    ));
    assert!(
        decode_server_arguments(&[0; OPEN_MPI_SERVER_ARGUMENTS_SIZE])
            .unwrap()
            .is_empty()
    );
    assert!(decode_server_arguments(b"").is_err());
    assert!(decode_server_arguments(b"abc\0").is_err());
    assert!(decode_server_arguments(b"abc").is_err());
    assert_eq!(encode_executable_path("", 256), Err(CodecError::EmptyPath));
    assert_eq!(
        encode_executable_path(b"/a\0b", 256),
        Err(CodecError::PathContainsNul { position: 2 })
    );
    assert_eq!(
        encode_executable_path("/opt/tool/bin/tvdsvr", 256).unwrap(),
        b"/opt/tool/bin/tvdsvr\0"
    );
    assert_eq!(decode_executable_path(&[0; 256]).unwrap(), "");
    assert_eq!(
        decode_fixed_string(b"/usr/lib/libompi_dbg_msgq.so\0\0\0").unwrap(),
        "/usr/lib/libompi_dbg_msgq.so"
    );
    // The sizes: the spec's declarations and Open MPI 4.1's definitions.
    assert_eq!(
        (SPEC_EXECUTABLE_PATH_SIZE, SPEC_SERVER_ARGUMENTS_SIZE),
        (256, 1024)
    );
    assert_eq!(
        (
            OPEN_MPI_EXECUTABLE_PATH_SIZE,
            OPEN_MPI_SERVER_ARGUMENTS_SIZE
        ),
        (512, 1024)
    );
}

/// Error messages say what is wrong and with which symbol.
#[test]
fn messages() {
    assert_eq!(
        CodecError::EmptyArgument { index: 2 }.to_string(),
        "server argument 2 is empty; MPIR_server_arguments cannot carry an empty argument"
    );
    assert_eq!(
        encode_executable_path([b'x'; 300], SPEC_EXECUTABLE_PATH_SIZE)
            .unwrap_err()
            .to_string(),
        "MPIR_executable_path needs 301 bytes but the target's array holds 256"
    );
}
