//! The target's data model ([`TargetLayout`]) and the layout of
//! `MPIR_PROCDESC` (§2.8.2) computed from it with C struct layout rules
//! ([`ProcDescLayout`]).
//!
//! §2.8.2 says "the tool must use the symbol table information to determine
//! the overall size of the structure, and offset and size of each of the
//! structure's members", and §2.7 step 11 says how (look up `MPIR_proctable`
//! and dereference its type). A tool that has the debug information builds
//! the layout with [`ProcDescLayout::from_debug_info`]; without it,
//! [`ProcDescLayout::for_target`] computes the layout the C compiler gives
//! the spec's declaration on the target: each member at the next multiple of
//! its alignment, the size rounded up to the largest alignment. Alignments
//! are natural (an `n`-byte scalar is `n`-aligned); where an ABI caps
//! alignment (i386 aligns 8-byte integers to 4, m68k aligns to 2), the
//! offsets and size of this particular struct come out the same.

use std::fmt;

use thiserror::Error;

/// Byte order of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endianness {
    /// Least significant byte first (x86, x86-64, AArch64, RISC-V, ppc64le).
    Little,
    /// Most significant byte first (s390x, ppc64, SPARC).
    Big,
}

impl Endianness {
    /// The byte order of the machine this code runs on.
    pub const fn host() -> Self {
        if cfg!(target_endian = "big") {
            Endianness::Big
        } else {
            Endianness::Little
        }
    }
}

/// An error in a layout or in a value that does not fit it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// A pointer width other than 4 or 8 bytes.
    #[error("pointer width of {0} bytes is not supported (4 or 8)")]
    PointerWidth(u8),
    /// An `int` width other than 2, 4 or 8 bytes.
    #[error("int width of {0} bytes is not supported (2, 4 or 8)")]
    IntWidth(u8),
    /// A `pid` width other than 2, 4 or 8 bytes.
    #[error("pid width of {0} bytes is not supported (2, 4 or 8)")]
    PidWidth(u8),
    /// A value that does not fit the target's representation.
    #[error("value {value} does not fit in {width} bytes")]
    ValueOutOfRange {
        /// The value.
        value: i128,
        /// The width in bytes it had to fit.
        width: u8,
    },
    /// A descriptor member that lies outside the descriptor.
    #[error("{field} at offset {offset} ({width} bytes) lies outside a {size}-byte MPIR_PROCDESC")]
    FieldOutsideStruct {
        /// The member.
        field: Field,
        /// Its offset.
        offset: usize,
        /// Its width.
        width: usize,
        /// The descriptor's size.
        size: usize,
    },
    /// Two descriptor members that overlap.
    #[error("MPIR_PROCDESC members {0} and {1} overlap")]
    FieldsOverlap(Field, Field),
    /// A descriptor larger than [`MAX_PROCDESC_SIZE`].
    #[error("an MPIR_PROCDESC of {size} bytes is larger than the accepted {max} bytes")]
    StructTooLarge {
        /// The size claimed by the debug information.
        size: usize,
        /// [`MAX_PROCDESC_SIZE`].
        max: usize,
    },
}

/// The largest `MPIR_PROCDESC` [`ProcDescLayout::from_debug_info`] accepts.
/// The spec's structure is 12 or 24 bytes; a bound keeps garbage debug
/// information from sizing the decoder's buffers.
pub const MAX_PROCDESC_SIZE: usize = 4096;

/// A member of `MPIR_PROCDESC` (§2.8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// `char *host_name`.
    HostName,
    /// `char *executable_name`.
    ExecutableName,
    /// `int pid`.
    Pid,
}

impl Field {
    /// The member's C name.
    pub const fn name(self) -> &'static str {
        match self {
            Field::HostName => "host_name",
            Field::ExecutableName => "executable_name",
            Field::Pid => "pid",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The data model of the process whose memory is read: widths of a pointer,
/// a C `int` (for `MPIR_proctable_size`, `MPIR_debug_state`,
/// `MPIR_being_debugged`, `MPIR_debug_gate`) and the descriptor's `pid`
/// member, and the byte order.
///
/// A tool may read a target of another data model than its own (a 64-bit
/// tool on a 32-bit `mpiexec`); take the layout from the target's ELF header
/// (`EI_CLASS`, `EI_DATA`), not from [`TargetLayout::host`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetLayout {
    pointer_width: u8,
    int_width: u8,
    pid_width: u8,
    endianness: Endianness,
}

const fn int_width_ok(w: u8) -> bool {
    matches!(w, 2 | 4 | 8)
}

impl TargetLayout {
    /// LP64, little-endian: x86-64, AArch64, RISC-V 64, ppc64le Linux.
    pub const LP64_LE: TargetLayout = TargetLayout {
        pointer_width: 8,
        int_width: 4,
        pid_width: 4,
        endianness: Endianness::Little,
    };
    /// LP64, big-endian: s390x, ppc64 (big-endian) Linux.
    pub const LP64_BE: TargetLayout = TargetLayout {
        pointer_width: 8,
        int_width: 4,
        pid_width: 4,
        endianness: Endianness::Big,
    };
    /// ILP32, little-endian: i386, 32-bit ARM Linux.
    pub const ILP32_LE: TargetLayout = TargetLayout {
        pointer_width: 4,
        int_width: 4,
        pid_width: 4,
        endianness: Endianness::Little,
    };
    /// ILP32, big-endian: 32-bit PowerPC, SPARC, MIPS (big-endian).
    pub const ILP32_BE: TargetLayout = TargetLayout {
        pointer_width: 4,
        int_width: 4,
        pid_width: 4,
        endianness: Endianness::Big,
    };

    /// A layout; pointers are 4 or 8 bytes, `int` and `pid` 2, 4 or 8.
    pub const fn new(
        pointer_width: u8,
        int_width: u8,
        pid_width: u8,
        endianness: Endianness,
    ) -> Result<Self, LayoutError> {
        if !matches!(pointer_width, 4 | 8) {
            return Err(LayoutError::PointerWidth(pointer_width));
        }
        if !int_width_ok(int_width) {
            return Err(LayoutError::IntWidth(int_width));
        }
        if !int_width_ok(pid_width) {
            return Err(LayoutError::PidWidth(pid_width));
        }
        Ok(TargetLayout {
            pointer_width,
            int_width,
            pid_width,
            endianness,
        })
    }

    /// The data model of the machine this code runs on, with `pid` as wide
    /// as `int` (MPICH's and Open MPI's `MPIR_PROCDESC` declare `int pid`).
    pub const fn host() -> Self {
        let pointer_width = size_of::<usize>() as u8;
        let int_width = size_of::<std::ffi::c_int>() as u8;
        TargetLayout {
            pointer_width,
            int_width,
            pid_width: int_width,
            endianness: Endianness::host(),
        }
    }

    /// The same layout with another `pid` width (2, 4 or 8 bytes), for an
    /// implementation that follows §2.8.2's advice to use a wider `pid_t`.
    pub const fn with_pid_width(self, pid_width: u8) -> Result<Self, LayoutError> {
        TargetLayout::new(
            self.pointer_width,
            self.int_width,
            pid_width,
            self.endianness,
        )
    }

    /// Width of a pointer in bytes (4 or 8).
    pub const fn pointer_width(&self) -> u8 {
        self.pointer_width
    }

    /// Width of a C `int` in bytes.
    pub const fn int_width(&self) -> u8 {
        self.int_width
    }

    /// Width of the descriptor's `pid` member in bytes.
    pub const fn pid_width(&self) -> u8 {
        self.pid_width
    }

    /// Byte order.
    pub const fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// The highest address a pointer of this target can hold.
    pub const fn max_address(&self) -> u64 {
        if self.pointer_width == 4 {
            u32::MAX as u64
        } else {
            u64::MAX
        }
    }

    /// The `MPIR_PROCDESC` layout computed for this target.
    pub fn procdesc(&self) -> ProcDescLayout {
        ProcDescLayout::for_target(*self)
    }

    /// A pointer from the first [`pointer_width`](Self::pointer_width)
    /// bytes of `bytes`; `None` if `bytes` is shorter.
    pub fn decode_pointer(&self, bytes: &[u8]) -> Option<u64> {
        get_uint(bytes, self.pointer_width, self.endianness)
    }

    /// A sign-extended C `int` from the first
    /// [`int_width`](Self::int_width) bytes; `None` if `bytes` is shorter.
    pub fn decode_int(&self, bytes: &[u8]) -> Option<i64> {
        get_int(bytes, self.int_width, self.endianness)
    }

    /// A sign-extended `pid` from the first [`pid_width`](Self::pid_width)
    /// bytes; `None` if `bytes` is shorter.
    pub fn decode_pid(&self, bytes: &[u8]) -> Option<i64> {
        get_int(bytes, self.pid_width, self.endianness)
    }

    /// The target's bytes for a pointer.
    pub fn encode_pointer(&self, value: u64) -> Result<Vec<u8>, LayoutError> {
        if value > self.max_address() {
            return Err(LayoutError::ValueOutOfRange {
                value: i128::from(value),
                width: self.pointer_width,
            });
        }
        Ok(put_uint(value, self.pointer_width, self.endianness))
    }

    /// The target's bytes for a C `int` (to write `MPIR_being_debugged` or
    /// `MPIR_debug_gate`).
    pub fn encode_int(&self, value: i64) -> Result<Vec<u8>, LayoutError> {
        encode_signed(value, self.int_width, self.endianness)
    }

    /// The target's bytes for a descriptor `pid`.
    pub fn encode_pid(&self, value: i64) -> Result<Vec<u8>, LayoutError> {
        encode_signed(value, self.pid_width, self.endianness)
    }
}

fn get_uint(bytes: &[u8], width: u8, endianness: Endianness) -> Option<u64> {
    let bytes = bytes.get(..usize::from(width))?;
    let mut v = 0u64;
    match endianness {
        Endianness::Little => {
            for b in bytes.iter().rev() {
                v = (v << 8) | u64::from(*b);
            }
        }
        Endianness::Big => {
            for b in bytes {
                v = (v << 8) | u64::from(*b);
            }
        }
    }
    Some(v)
}

fn get_int(bytes: &[u8], width: u8, endianness: Endianness) -> Option<i64> {
    let v = get_uint(bytes, width, endianness)?;
    let shift = 64 - 8 * u32::from(width);
    // Sign-extend from `width` bytes: move the sign bit to bit 63 and back.
    Some(((v << shift) as i64) >> shift)
}

fn put_uint(value: u64, width: u8, endianness: Endianness) -> Vec<u8> {
    let w = usize::from(width);
    match endianness {
        Endianness::Little => value.to_le_bytes()[..w].to_vec(),
        Endianness::Big => value.to_be_bytes()[8 - w..].to_vec(),
    }
}

fn encode_signed(value: i64, width: u8, endianness: Endianness) -> Result<Vec<u8>, LayoutError> {
    let bits = 8 * u32::from(width);
    let (min, max) = if bits == 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    };
    if value < min || value > max {
        return Err(LayoutError::ValueOutOfRange {
            value: i128::from(value),
            width,
        });
    }
    Ok(put_uint(value as u64, width, endianness))
}

/// The raw contents of one `MPIR_PROCDESC`: two pointers into the starter's
/// address space and the pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawProcDesc {
    /// Value of `host_name`: address of a NUL-terminated string.
    pub host_name: u64,
    /// Value of `executable_name`: address of a NUL-terminated string.
    pub executable_name: u64,
    /// Value of `pid`, sign-extended.
    pub pid: i64,
}

/// Size and member offsets of `MPIR_PROCDESC` on one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcDescLayout {
    target: TargetLayout,
    size: usize,
    host_name_offset: usize,
    executable_name_offset: usize,
    pid_offset: usize,
}

/// Offsets, size and alignment of a C struct whose members have the given
/// `(size, alignment)`, laid out in order by the C rules.
fn c_struct_layout<const N: usize>(members: [(usize, usize); N]) -> ([usize; N], usize) {
    fn align_up(n: usize, align: usize) -> usize {
        n.div_ceil(align) * align
    }
    let mut offsets = [0; N];
    let mut end = 0;
    let mut struct_align = 1;
    for (i, (size, align)) in members.into_iter().enumerate() {
        offsets[i] = align_up(end, align);
        end = offsets[i] + size;
        struct_align = struct_align.max(align);
    }
    (offsets, align_up(end, struct_align))
}

impl ProcDescLayout {
    /// The layout a C compiler gives §2.8.2's declaration on `target`
    /// (`char *host_name; char *executable_name; <pid_width> pid;`), by the C
    /// struct rules with natural alignment. LP64: size 24, offsets 0, 8, 16;
    /// ILP32: size 12, offsets 0, 4, 8.
    pub fn for_target(target: TargetLayout) -> Self {
        let p = usize::from(target.pointer_width);
        let pid = usize::from(target.pid_width);
        let ([host_name_offset, executable_name_offset, pid_offset], size) =
            c_struct_layout([(p, p), (p, p), (pid, pid)]);
        ProcDescLayout {
            target,
            size,
            host_name_offset,
            executable_name_offset,
            pid_offset,
        }
    }

    /// The layout read from the starter's debug information (§2.7 step 11):
    /// the structure's size and each member's offset; member widths are the
    /// target's pointer and pid widths. Members must lie inside the
    /// structure and must not overlap; the size is at most
    /// [`MAX_PROCDESC_SIZE`].
    pub fn from_debug_info(
        target: TargetLayout,
        size: usize,
        host_name_offset: usize,
        executable_name_offset: usize,
        pid_offset: usize,
    ) -> Result<Self, LayoutError> {
        if size > MAX_PROCDESC_SIZE {
            return Err(LayoutError::StructTooLarge {
                size,
                max: MAX_PROCDESC_SIZE,
            });
        }
        let p = usize::from(target.pointer_width);
        let members = [
            (Field::HostName, host_name_offset, p),
            (Field::ExecutableName, executable_name_offset, p),
            (Field::Pid, pid_offset, usize::from(target.pid_width)),
        ];
        for (field, offset, width) in members {
            if offset.checked_add(width).is_none_or(|end| end > size) {
                return Err(LayoutError::FieldOutsideStruct {
                    field,
                    offset,
                    width,
                    size,
                });
            }
        }
        for (i, &(fa, oa, wa)) in members.iter().enumerate() {
            for &(fb, ob, wb) in &members[i + 1..] {
                if oa < ob + wb && ob < oa + wa {
                    return Err(LayoutError::FieldsOverlap(fa, fb));
                }
            }
        }
        Ok(ProcDescLayout {
            target,
            size,
            host_name_offset,
            executable_name_offset,
            pid_offset,
        })
    }

    /// The target's data model.
    pub const fn target(&self) -> &TargetLayout {
        &self.target
    }

    /// `sizeof(MPIR_PROCDESC)`: the stride of the table.
    pub const fn size(&self) -> usize {
        self.size
    }

    /// `offsetof(MPIR_PROCDESC, host_name)`.
    pub const fn host_name_offset(&self) -> usize {
        self.host_name_offset
    }

    /// `offsetof(MPIR_PROCDESC, executable_name)`.
    pub const fn executable_name_offset(&self) -> usize {
        self.executable_name_offset
    }

    /// `offsetof(MPIR_PROCDESC, pid)`.
    pub const fn pid_offset(&self) -> usize {
        self.pid_offset
    }

    /// Decodes one descriptor from the first [`size`](Self::size) bytes of
    /// `bytes`; `None` if `bytes` is shorter.
    pub fn decode_entry(&self, bytes: &[u8]) -> Option<RawProcDesc> {
        let bytes = bytes.get(..self.size)?;
        Some(RawProcDesc {
            host_name: self
                .target
                .decode_pointer(bytes.get(self.host_name_offset..)?)?,
            executable_name: self
                .target
                .decode_pointer(bytes.get(self.executable_name_offset..)?)?,
            pid: self.target.decode_pid(bytes.get(self.pid_offset..)?)?,
        })
    }

    /// The target's [`size`](Self::size) bytes for one descriptor, padding
    /// zeroed (what a starter's table holds; used to build test memories).
    pub fn encode_entry(&self, entry: &RawProcDesc) -> Result<Vec<u8>, LayoutError> {
        let mut out = vec![0; self.size];
        let parts = [
            (
                self.host_name_offset,
                self.target.encode_pointer(entry.host_name)?,
            ),
            (
                self.executable_name_offset,
                self.target.encode_pointer(entry.executable_name)?,
            ),
            (self.pid_offset, self.target.encode_pid(entry.pid)?),
        ];
        for (offset, bytes) in parts {
            out[offset..offset + bytes.len()].copy_from_slice(&bytes);
        }
        Ok(out)
    }
}
