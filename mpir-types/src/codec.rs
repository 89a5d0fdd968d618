//! The tool daemon launch extension's character arrays (§2.6.1):
//! `MPIR_executable_path` (§2.8.16) and `MPIR_server_arguments` (§2.8.17).
//!
//! The tool encodes and writes them into the starter; the starter decodes
//! them when `MPIR_being_debugged` becomes non-zero. Both are fixed-size
//! `char` arrays, so every codec takes the array's size: the spec declares
//! `char MPIR_executable_path[256]` and `char MPIR_server_arguments[1024]`,
//! Open MPI 4.1 (`libopen-rte.so.40`) defines them with 512 and 1024 bytes.
//! Take the size from the target's symbol table (`st_size`) when it is
//! known, else one of the constants below.
//!
//! `MPIR_server_arguments` is "a sequence of zero or more null-terminated
//! character strings followed by a null character": `["a", "b"]` is
//! `a\0b\0\0`, no arguments is a single `\0`. "It is not possible to pass
//! the empty string ("") as an argument." Note that the spec's own example,
//! the C literal `"--callback\010.0.0.10\0..."`, does not mean what its
//! text says: in C, `\010` is one octal escape (a backspace), so the literal
//! holds `--callback\x08.0.0.10`; the intended bytes are
//! `--callback\0` `10.0.0.10\0`.

use thiserror::Error;

use crate::string::TargetString;

/// `sizeof MPIR_executable_path` as the spec declares it (§2.8.16).
pub const SPEC_EXECUTABLE_PATH_SIZE: usize = 256;
/// `sizeof MPIR_executable_path` in Open MPI 4.1 (`MPIR_MAX_PATH_LENGTH`;
/// `nm -S libopen-rte.so.40` shows `0x200`).
pub const OPEN_MPI_EXECUTABLE_PATH_SIZE: usize = 512;
/// `sizeof MPIR_server_arguments` as the spec declares it (§2.8.17).
pub const SPEC_SERVER_ARGUMENTS_SIZE: usize = 1024;
/// `sizeof MPIR_server_arguments` in Open MPI 4.1 (`MPIR_MAX_ARG_LENGTH`;
/// `nm -S libopen-rte.so.40` shows `0x400`).
pub const OPEN_MPI_SERVER_ARGUMENTS_SIZE: usize = 1024;

/// Why a tool-daemon string cannot be encoded or decoded.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CodecError {
    /// An empty argument: the list's terminator is an empty string, so ""
    /// cannot be passed (§2.8.17).
    #[error(
        "server argument {index} is empty; MPIR_server_arguments cannot carry an empty argument"
    )]
    EmptyArgument {
        /// Position of the argument.
        index: usize,
    },
    /// An argument containing a NUL, which would split it in two.
    #[error("server argument {index} contains a NUL byte at position {position}")]
    ArgumentContainsNul {
        /// Position of the argument.
        index: usize,
        /// Position of the NUL in the argument.
        position: usize,
    },
    /// An empty executable path.
    #[error("the tool daemon's executable path is empty")]
    EmptyPath,
    /// An executable path containing a NUL.
    #[error("the tool daemon's executable path contains a NUL byte at position {position}")]
    PathContainsNul {
        /// Position of the NUL.
        position: usize,
    },
    /// The encoding does not fit the target's array.
    #[error("{symbol} needs {needed} bytes but the target's array holds {size}")]
    TooLong {
        /// `"MPIR_executable_path"` or `"MPIR_server_arguments"`.
        symbol: &'static str,
        /// Bytes needed, terminators included.
        needed: usize,
        /// The array's size.
        size: usize,
    },
    /// The array holds no terminator: a NUL for the path, an empty string
    /// for the argument list.
    #[error("{symbol}: no terminator within its {size} bytes")]
    Unterminated {
        /// `"MPIR_executable_path"` or `"MPIR_server_arguments"`.
        symbol: &'static str,
        /// The array's size (the buffer's length).
        size: usize,
    },
}

const ARGS: &str = "MPIR_server_arguments";
const PATH: &str = "MPIR_executable_path";

/// Encodes tool daemon arguments for `MPIR_server_arguments` (§2.8.17):
/// each argument followed by a NUL, then one more NUL. Errors on an empty
/// argument, an argument containing a NUL, or an encoding longer than
/// `symbol_size` bytes (the target array's size). The result is what to
/// write at the array's address; bytes after it are never read.
pub fn encode_server_arguments<I, A>(args: I, symbol_size: usize) -> Result<Vec<u8>, CodecError>
where
    I: IntoIterator<Item = A>,
    A: AsRef<[u8]>,
{
    let mut out = Vec::new();
    for (index, arg) in args.into_iter().enumerate() {
        let arg = arg.as_ref();
        if arg.is_empty() {
            return Err(CodecError::EmptyArgument { index });
        }
        if let Some(position) = arg.iter().position(|b| *b == 0) {
            return Err(CodecError::ArgumentContainsNul { index, position });
        }
        let needed = out.len() + arg.len() + 2;
        if needed > symbol_size {
            return Err(CodecError::TooLong {
                symbol: ARGS,
                needed,
                size: symbol_size,
            });
        }
        out.extend_from_slice(arg);
        out.push(0);
    }
    if out.len() + 1 > symbol_size {
        return Err(CodecError::TooLong {
            symbol: ARGS,
            needed: out.len() + 1,
            size: symbol_size,
        });
    }
    out.push(0);
    Ok(out)
}

/// Decodes `MPIR_server_arguments` from the array's bytes (`buf` is the
/// whole array, or the part of it that was read), as the starter splits it
/// "into an argv-style vector" (§2.8.17): strings up to the first empty one.
/// Bytes after the terminating empty string are ignored; a buffer with no
/// terminating empty string is [`CodecError::Unterminated`]. An all-zero
/// array (never written) is the empty list.
pub fn decode_server_arguments(buf: &[u8]) -> Result<Vec<TargetString>, CodecError> {
    let mut args = Vec::new();
    let mut rest = buf;
    loop {
        let Some(nul) = rest.iter().position(|b| *b == 0) else {
            return Err(CodecError::Unterminated {
                symbol: ARGS,
                size: buf.len(),
            });
        };
        if nul == 0 {
            return Ok(args);
        }
        args.push(TargetString::from(&rest[..nul]));
        rest = &rest[nul + 1..];
    }
}

/// Encodes the tool daemon's executable path for `MPIR_executable_path`
/// (§2.8.16): the path and a NUL, at most `symbol_size` bytes in all. Errors
/// on an empty path, a path containing a NUL, or a path too long for the
/// array.
pub fn encode_executable_path(
    path: impl AsRef<[u8]>,
    symbol_size: usize,
) -> Result<Vec<u8>, CodecError> {
    let path = path.as_ref();
    if path.is_empty() {
        return Err(CodecError::EmptyPath);
    }
    if let Some(position) = path.iter().position(|b| *b == 0) {
        return Err(CodecError::PathContainsNul { position });
    }
    if path.len() + 1 > symbol_size {
        return Err(CodecError::TooLong {
            symbol: PATH,
            needed: path.len() + 1,
            size: symbol_size,
        });
    }
    let mut out = Vec::with_capacity(path.len() + 1);
    out.extend_from_slice(path);
    out.push(0);
    Ok(out)
}

/// Decodes `MPIR_executable_path` from the array's bytes: the string before
/// the first NUL, which must lie within `buf`. An empty result means no tool
/// daemon path was written (the array starts zeroed).
pub fn decode_executable_path(buf: &[u8]) -> Result<TargetString, CodecError> {
    decode_fixed_string(buf).ok_or(CodecError::Unterminated {
        symbol: PATH,
        size: buf.len(),
    })
}

/// The NUL-terminated string at the start of a `char` array (also
/// `MPIR_dll_name`, §2.8.14), `None` if the array holds no NUL.
pub fn decode_fixed_string(buf: &[u8]) -> Option<TargetString> {
    let nul = buf.iter().position(|b| *b == 0)?;
    Some(TargetString::from(&buf[..nul]))
}
