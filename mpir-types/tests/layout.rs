//! `MPIR_PROCDESC`'s layout (§2.8.2) computed by the C struct rules, checked
//! against the host compiler's `repr(C)` layout and the known ABIs, and the
//! target's scalar codecs.

use std::ffi::{c_char, c_int};
use std::mem::{align_of, offset_of, size_of};

use crate::common::{all_layouts, target_bytes};
use mpir_types::*;
use proptest::prelude::*;

/// §2.8.2's declaration as the host's C compiler lays it out.
#[repr(C)]
struct CProcDesc {
    host_name: *const c_char,
    executable_name: *const c_char,
    pid: c_int,
}

/// The layout computed for the host equals the host compiler's layout of
/// the spec's struct (`repr(C)` is the platform C ABI).
#[test]
fn host_layout_matches_repr_c() {
    let l = TargetLayout::host().procdesc();
    assert_eq!(l.size(), size_of::<CProcDesc>());
    assert_eq!(l.host_name_offset(), offset_of!(CProcDesc, host_name));
    assert_eq!(
        l.executable_name_offset(),
        offset_of!(CProcDesc, executable_name)
    );
    assert_eq!(l.pid_offset(), offset_of!(CProcDesc, pid));
    assert_eq!(l.size() % align_of::<CProcDesc>(), 0);
}

/// The known ABIs: LP64 (x86-64, AArch64, s390x) 24 bytes with members at 0,
/// 8, 16 (4 bytes of tail padding); ILP32 (i386, ARM) 12 bytes at 0, 4, 8;
/// an 8-byte pid_t on LP64 (the spec's advice) still 24 bytes; on ILP32 16.
#[test]
fn known_abis() {
    let cases = [
        (TargetLayout::LP64_LE, (24, 0, 8, 16)),
        (TargetLayout::LP64_BE, (24, 0, 8, 16)),
        (TargetLayout::ILP32_LE, (12, 0, 4, 8)),
        (TargetLayout::ILP32_BE, (12, 0, 4, 8)),
        (
            TargetLayout::LP64_LE.with_pid_width(8).unwrap(),
            (24, 0, 8, 16),
        ),
        (
            TargetLayout::ILP32_LE.with_pid_width(8).unwrap(),
            (16, 0, 4, 8),
        ),
        (
            TargetLayout::ILP32_LE.with_pid_width(2).unwrap(),
            (12, 0, 4, 8),
        ),
        (
            TargetLayout::LP64_LE.with_pid_width(2).unwrap(),
            (24, 0, 8, 16),
        ),
    ];
    for (target, (size, h, e, p)) in cases {
        let l = target.procdesc();
        assert_eq!(
            (
                l.size(),
                l.host_name_offset(),
                l.executable_name_offset(),
                l.pid_offset()
            ),
            (size, h, e, p),
            "{target:?}"
        );
    }
}

/// The C rules for every supported data model: members in declaration
/// order, each at the lowest offset that is a multiple of its alignment and
/// after the previous one, size a multiple of the largest alignment and the
/// smallest such that holds the last member.
#[test]
fn c_rules_hold_for_every_layout() {
    for target in all_layouts() {
        let l = target.procdesc();
        let p = usize::from(target.pointer_width());
        let w = usize::from(target.pid_width());
        assert_eq!(l.host_name_offset(), 0);
        assert_eq!(l.executable_name_offset(), p);
        assert_eq!(l.pid_offset(), 2 * p); // 2p is a multiple of any w <= p; w = 8 > p = 4 too
        assert_eq!(l.pid_offset() % w, 0);
        let align = p.max(w);
        assert_eq!(l.size() % align, 0);
        assert!(l.size() >= l.pid_offset() + w && l.size() < l.pid_offset() + w + align);
    }
}

/// §2.7 step 11: a layout taken from the debug information is accepted when
/// its members lie inside the struct without overlapping (an implementation
/// may add members), rejected otherwise.
#[test]
fn layout_from_debug_info() {
    let t = TargetLayout::LP64_LE;
    let l = ProcDescLayout::from_debug_info(t, 32, 8, 16, 0).unwrap();
    assert_eq!((l.size(), l.pid_offset()), (32, 0));
    assert!(matches!(
        ProcDescLayout::from_debug_info(t, 19, 0, 8, 16),
        Err(LayoutError::FieldOutsideStruct {
            field: Field::Pid,
            ..
        })
    ));
    assert!(matches!(
        ProcDescLayout::from_debug_info(t, 24, 0, 4, 16),
        Err(LayoutError::FieldsOverlap(
            Field::HostName,
            Field::ExecutableName
        ))
    ));
    assert!(matches!(
        ProcDescLayout::from_debug_info(t, usize::MAX, 0, 8, 16),
        Err(LayoutError::StructTooLarge { .. })
    ));
    assert!(matches!(
        ProcDescLayout::from_debug_info(t, 24, usize::MAX, 8, 16),
        Err(LayoutError::FieldOutsideStruct { .. })
    ));
    assert_eq!(
        ProcDescLayout::from_debug_info(t, 24, 0, 8, 16).unwrap(),
        t.procdesc()
    );
}

#[test]
fn invalid_widths_are_rejected() {
    use Endianness::Little;
    assert_eq!(
        TargetLayout::new(2, 4, 4, Little),
        Err(LayoutError::PointerWidth(2))
    );
    assert_eq!(
        TargetLayout::new(8, 3, 4, Little),
        Err(LayoutError::IntWidth(3))
    );
    assert_eq!(
        TargetLayout::new(8, 4, 16, Little),
        Err(LayoutError::PidWidth(16))
    );
    assert_eq!(
        TargetLayout::host().pointer_width() as usize,
        size_of::<usize>()
    );
}

proptest! {
    /// A descriptor encoded for a target decodes back, and its bytes are the
    /// target's representation of each member at the computed offset
    /// (checked against the test's own shift-based encoder).
    #[test]
    fn entry_round_trip(
        target in proptest::sample::select(all_layouts()),
        host in any::<u64>(),
        exe in any::<u64>(),
        pid in any::<i64>(),
    ) {
        let l = target.procdesc();
        let mask = target.max_address();
        let shift = 64 - 8 * u32::from(target.pid_width());
        let raw = RawProcDesc { host_name: host & mask, executable_name: exe & mask, pid: (pid << shift) >> shift };
        let bytes = l.encode_entry(&raw).unwrap();
        prop_assert_eq!(bytes.len(), l.size());
        prop_assert_eq!(l.decode_entry(&bytes), Some(raw));
        let pw = usize::from(target.pointer_width());
        prop_assert_eq!(&bytes[l.host_name_offset()..][..pw], &target_bytes(raw.host_name, target.pointer_width(), target.endianness())[..]);
        prop_assert_eq!(&bytes[l.pid_offset()..][..usize::from(target.pid_width())], &target_bytes(raw.pid as u64, target.pid_width(), target.endianness())[..]);
        prop_assert_eq!(l.decode_entry(&bytes[..l.size() - 1]), None);
    }

    /// Values that do not fit the target's widths are errors, not
    /// truncations.
    #[test]
    fn out_of_range_values_are_rejected(target in proptest::sample::select(all_layouts()), v in any::<i64>()) {
        let bits = 8 * u32::from(target.int_width());
        let fits = bits == 64 || (v >= -(1i64 << (bits - 1)) && v < (1i64 << (bits - 1)));
        match target.encode_int(v) {
            Ok(bytes) => { prop_assert!(fits); prop_assert_eq!(target.decode_int(&bytes), Some(v)); }
            Err(e) => { prop_assert!(!fits); let range = matches!(e, LayoutError::ValueOutOfRange { .. }); prop_assert!(range, "{:?}", e); }
        }
        let p = v as u64;
        prop_assert_eq!(target.encode_pointer(p).is_ok(), p <= target.max_address());
    }
}
