//! Properties of datatypes, values and typed access (MPI-4.1 §16.3.5).

use core::ffi::{c_int, c_long, c_uint, c_ulong, c_ulonglong};
use core::mem::size_of;

use mpit_core::{Datatype, Error, Scalar, TypeKind, Value};
use proptest::prelude::*;
use proptest::sample::select;

fn datatype() -> impl Strategy<Value = Datatype> {
    select(Datatype::ALL)
}

/// Bytes of one element of `dt` that decode without error (a `_Bool` is
/// only 0 or 1).
fn element_bytes(dt: Datatype) -> BoxedStrategy<Vec<u8>> {
    if dt == Datatype::CBool {
        any::<bool>().prop_map(|b| vec![u8::from(b)]).boxed()
    } else {
        proptest::collection::vec(any::<u8>(), dt.size()).boxed()
    }
}

fn datatype_and_bytes() -> impl Strategy<Value = (Datatype, Vec<u8>)> {
    datatype().prop_flat_map(|dt| (Just(dt), element_bytes(dt)))
}

/// The size/kind rule every `Scalar` must satisfy for every datatype.
fn scalar_rule_holds<T: Scalar>(dt: Datatype) -> Result<(), TestCaseError> {
    let accepted = T::accepts(dt);
    prop_assert_eq!(accepted, T::DATATYPES.contains(&dt));
    prop_assert_eq!(T::check(dt).is_ok(), accepted);
    if accepted {
        prop_assert_eq!(size_of::<T>(), dt.size(), "{} accepts {}", T::NAME, dt);
        prop_assert_eq!(T::KIND == TypeKind::Floating, dt.is_floating());
        prop_assert_eq!(T::KIND == TypeKind::Boolean, dt == Datatype::CBool);
        if dt.is_integer() {
            prop_assert_eq!(T::KIND == TypeKind::SignedInteger, dt.is_signed());
        }
    } else {
        prop_assert_eq!(T::check(dt), Err(Error::type_mismatch(dt, T::NAME)));
    }
    Ok(())
}

/// Typed decode agrees with the dynamic value, bit for bit.
fn typed_matches_dynamic<T: Scalar + PartialEq + core::fmt::Debug>(
    dt: Datatype,
    bytes: &[u8],
) -> Result<(), TestCaseError> {
    let typed = T::from_ne_bytes(dt, bytes);
    if !T::accepts(dt) {
        prop_assert!(
            matches!(typed, Err(Error::TypeMismatch { .. })),
            "typed read of a mismatched type must fail"
        );
        return Ok(());
    }
    let v = Value::from_ne_bytes(dt, bytes).unwrap();
    let t = typed.unwrap();
    prop_assert_eq!(T::from_value(v).unwrap(), t);
    prop_assert_eq!(t.to_value(dt).unwrap().to_ne_bytes(), bytes.to_vec());
    Ok(())
}

proptest! {
    /// §16.3.5: a typed access is allowed only when the Rust type has the
    /// C type's size on this host and the same kind (signed/unsigned
    /// integer, floating point, boolean); otherwise it is a typed error.
    #[test]
    fn scalar_accepts_only_same_size_and_kind(dt in datatype()) {
        scalar_rule_holds::<i8>(dt)?;
        scalar_rule_holds::<i16>(dt)?;
        scalar_rule_holds::<i32>(dt)?;
        scalar_rule_holds::<i64>(dt)?;
        scalar_rule_holds::<isize>(dt)?;
        scalar_rule_holds::<u8>(dt)?;
        scalar_rule_holds::<u16>(dt)?;
        scalar_rule_holds::<u32>(dt)?;
        scalar_rule_holds::<u64>(dt)?;
        scalar_rule_holds::<usize>(dt)?;
        scalar_rule_holds::<f32>(dt)?;
        scalar_rule_holds::<f64>(dt)?;
        scalar_rule_holds::<bool>(dt)?;
    }

    /// Decoding then encoding a value is the identity on its bytes, for
    /// every datatype.
    #[test]
    fn value_bytes_round_trip((dt, bytes) in datatype_and_bytes()) {
        let v = Value::from_ne_bytes(dt, &bytes).unwrap();
        prop_assert_eq!(v.datatype(), dt);
        prop_assert_eq!(v.to_ne_bytes(), bytes.clone());
        let mut out = vec![0u8; dt.size()];
        v.write_ne_bytes(&mut out).unwrap();
        prop_assert_eq!(out, bytes);
    }

    /// A buffer of the wrong size is a typed error, never a short or long
    /// read.
    #[test]
    fn value_wrong_size_is_error(dt in datatype(), len in 0usize..20) {
        prop_assume!(len != dt.size());
        let bytes = vec![0u8; len];
        prop_assert_eq!(
            Value::from_ne_bytes(dt, &bytes),
            Err(Error::size_mismatch(dt.size(), len))
        );
    }

    /// A count > 1 decodes element by element, and only whole elements.
    #[test]
    fn decode_all_whole_elements(dt in datatype(), n in 0usize..6, extra in 0usize..8) {
        prop_assume!(dt != Datatype::CBool);
        let bytes = vec![1u8; n * dt.size() + extra];
        let r = Value::decode_all(dt, &bytes);
        if extra % dt.size() == 0 {
            prop_assert_eq!(r.unwrap().len(), n + extra / dt.size());
        } else {
            prop_assert!(matches!(r, Err(Error::SizeMismatch { .. })), "partial element must fail");
        }
    }

    /// Typed reads agree with the dynamic value for every Scalar.
    #[test]
    fn typed_and_dynamic_decoding_agree((dt, bytes) in datatype_and_bytes()) {
        typed_matches_dynamic::<i8>(dt, &bytes)?;
        typed_matches_dynamic::<i16>(dt, &bytes)?;
        typed_matches_dynamic::<i32>(dt, &bytes)?;
        typed_matches_dynamic::<i64>(dt, &bytes)?;
        typed_matches_dynamic::<isize>(dt, &bytes)?;
        typed_matches_dynamic::<u8>(dt, &bytes)?;
        typed_matches_dynamic::<u16>(dt, &bytes)?;
        typed_matches_dynamic::<u32>(dt, &bytes)?;
        typed_matches_dynamic::<u64>(dt, &bytes)?;
        typed_matches_dynamic::<usize>(dt, &bytes)?;
        typed_matches_dynamic::<bool>(dt, &bytes)?;
        // Floats: compare bits, NaN != NaN.
        if f64::accepts(dt) {
            let v = Value::from_ne_bytes(dt, &bytes).unwrap();
            prop_assert_eq!(f64::from_value(v).unwrap().to_ne_bytes().to_vec(), bytes.clone());
        }
        if f32::accepts(dt) {
            let v = Value::from_ne_bytes(dt, &bytes).unwrap();
            prop_assert_eq!(f32::from_value(v).unwrap().to_ne_bytes().to_vec(), bytes.clone());
        }
    }

    /// The numeric conversions are lossless or None: converting back gives
    /// the same number.
    #[test]
    fn conversions_are_lossless_or_none((dt, bytes) in datatype_and_bytes()) {
        let v = Value::from_ne_bytes(dt, &bytes).unwrap();
        let exact = v.to_f64_lossy();
        if let Some(i) = v.as_i64() {
            prop_assert_eq!(Some(i as f64), exact);
            if let Some(f) = v.as_f64() {
                prop_assert_eq!(f as i64, i);
            }
        }
        if let Some(u) = v.as_u64() {
            prop_assert_eq!(Some(u as f64), exact);
            if let Some(i) = v.as_i64() {
                prop_assert_eq!(i as u64, u);
            }
        }
        if let Some(f) = v.as_f64() {
            prop_assert!(exact == Some(f) || (f.is_nan() && exact.is_some_and(f64::is_nan)));
        }
        if matches!(dt.kind(), TypeKind::Character | TypeKind::Byte) {
            prop_assert_eq!(v.as_i64(), None);
            prop_assert_eq!(v.as_f64(), None);
        }
        prop_assert!(!v.to_string().is_empty());
    }

    /// Integers convert to i64/u64 exactly when in range.
    #[test]
    fn integer_conversions_in_range(x in any::<i64>()) {
        let v = Value::Int64(x);
        prop_assert_eq!(v.as_i64(), Some(x));
        prop_assert_eq!(v.as_u64(), u64::try_from(x).ok());
        let exact = (x as f64) as i128 == i128::from(x);
        prop_assert_eq!(v.as_f64().is_some(), exact);
    }
}

/// The host's C types decide the sizes, and the common Rust spellings match
/// them (these expectations hold on every host Rust supports).
#[test]
fn host_c_types() {
    assert_eq!(Datatype::Int.size(), size_of::<c_int>());
    assert_eq!(Datatype::Unsigned.size(), size_of::<c_uint>());
    assert_eq!(Datatype::UnsignedLong.size(), size_of::<c_ulong>());
    assert_eq!(Datatype::UnsignedLongLong.size(), size_of::<c_ulonglong>());
    assert_eq!(Datatype::Count.size(), 8);
    assert_eq!(Datatype::Char.size(), 1);
    assert!(c_int::accepts(Datatype::Int));
    assert!(c_uint::accepts(Datatype::Unsigned));
    assert!(c_ulong::accepts(Datatype::UnsignedLong));
    assert!(c_ulonglong::accepts(Datatype::UnsignedLongLong));
    assert!(c_long::accepts(Datatype::Long));
    assert!(i64::accepts(Datatype::Count));
    assert!(f64::accepts(Datatype::Double));
    if size_of::<c_ulong>() == size_of::<c_ulonglong>() {
        // LP64: one u64 reads both.
        assert!(u64::accepts(Datatype::UnsignedLong) && u64::accepts(Datatype::UnsignedLongLong));
    } else {
        assert!(!u64::accepts(Datatype::UnsignedLong));
    }
}

/// The seven datatypes of variables, and the kinds.
#[test]
fn cvar_pvar_types() {
    let seven: Vec<_> = Datatype::ALL
        .iter()
        .copied()
        .filter(|d| d.is_cvar_pvar_type())
        .collect();
    assert_eq!(seven, Datatype::CVAR_PVAR_TYPES);
    assert!(Datatype::Double.is_floating() && Datatype::Double.is_signed());
    assert!(!Datatype::Char.is_integer());
    assert!(Datatype::Count.is_integer() && Datatype::Count.is_signed());
    assert!(Datatype::UnsignedLongLong.is_integer() && !Datatype::UnsignedLongLong.is_signed());
}
