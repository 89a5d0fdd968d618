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

/// Values of every datatype and every bit pattern (a `_Bool` only 0 or 1).
fn any_value() -> impl Strategy<Value = Value> {
    datatype_and_bytes().prop_map(|(dt, bytes)| Value::from_ne_bytes(dt, &bytes).unwrap())
}

fn is_nan(v: &Value) -> bool {
    v.as_f64().is_some_and(f64::is_nan)
}

proptest! {
    /// Text round trip: `Display` writes what `Value::parse` reads back, for every datatype and
    /// every value, bit for bit (`-0` stays negative); NaN reads back as a NaN.
    #[test]
    fn parse_reads_what_display_writes(v in any_value()) {
        let text = v.to_string();
        let back = Value::parse(v.datatype(), &text);
        if is_nan(&v) {
            prop_assert!(back.as_ref().is_ok_and(is_nan), "{text:?} -> {back:?}");
        } else {
            prop_assert_eq!(back.clone(), Ok(v), "{:?}", text);
            prop_assert_eq!(back.unwrap().to_ne_bytes(), v.to_ne_bytes());
        }
    }

    /// Width, fill and alignment apply to every datatype: the text is the plain `Display`
    /// text, padded with the fill to the width on the side the alignment says; without an
    /// alignment numbers and bytes go right, text and booleans left.
    #[test]
    fn display_pads_every_datatype(v in any_value(), width in 0usize..24) {
        let plain = v.to_string();
        let n = plain.chars().count();
        let padded = [
            (format!("{v:~<width$}"), Some('<')),
            (format!("{v:~>width$}"), Some('>')),
            (format!("{v:~^width$}"), Some('^')),
            (format!("{v:width$}"), None),
        ];
        for (s, align) in padded {
            prop_assert_eq!(s.chars().count(), n.max(width), "{:?}", s);
            let left = match align {
                Some(a) => a == '<',
                None => matches!(
                    v.datatype().kind(),
                    TypeKind::Character | TypeKind::Boolean
                ),
            };
            let fill = if align.is_some() { '~' } else { ' ' };
            let before = s.chars().take_while(|&c| c == fill).count();
            let pad = n.max(width) - n;
            let expected_before = match align {
                Some('^') => pad / 2,
                _ if left => 0,
                _ => pad,
            };
            // The plain text may itself start with the fill; compare the cut instead.
            let cut: String = s.chars().skip(expected_before).take(n).collect();
            prop_assert_eq!(&cut, &plain, "{:?}", s);
            prop_assert!(before >= expected_before, "{:?}", s);
        }
    }

    /// `{:0w}` pads numbers and bytes with zeros after the sign or `0x`, and the result still
    /// reads back as the same value.
    #[test]
    fn zero_padding_reads_back(v in any_value(), width in 0usize..24) {
        prop_assume!(v.datatype().is_integer() || v.datatype() == Datatype::Byte);
        let s = format!("{v:0width$}");
        prop_assert_eq!(s.len(), v.to_string().len().max(width));
        prop_assert_eq!(Value::parse(v.datatype(), &s), Ok(v));
    }

    /// The exact constructors are the inverses of the exact reads: a value that reads as the
    /// number `x` is what `from_i64`/`from_u64`/`from_f64` build from `x` for its datatype, and
    /// what they build reads back as `x`.
    #[test]
    fn exact_constructors_invert_exact_reads(v in any_value(), dt in datatype(), x in any::<i64>()) {
        let d = v.datatype();
        if let Some(i) = v.as_i64() {
            prop_assert_eq!(Value::from_i64(d, i), Ok(v));
        }
        if let Some(u) = v.as_u64() {
            prop_assert_eq!(Value::from_u64(d, u), Ok(v));
        }
        if let Some(f) = v.as_f64().filter(|f| !f.is_nan()) {
            prop_assert_eq!(Value::from_f64(d, f), Ok(v));
        }
        match Value::from_i64(dt, x) {
            Ok(w) => {
                prop_assert_eq!(w.datatype(), dt);
                prop_assert_eq!(w.as_i64(), Some(x));
            }
            Err(e) => prop_assert!(matches!(e, Error::NotRepresentable(_)), "{e:?}"),
        }
        let f = x as f64 / 4.0;
        if let Ok(w) = Value::from_f64(dt, f) {
            prop_assert_eq!(w.as_f64(), Some(f));
        }
    }

    /// `convert_to` is lossless: converting back gives the value again, bit for bit.
    #[test]
    fn convert_to_is_lossless(v in any_value(), dt in datatype()) {
        prop_assume!(!is_nan(&v));
        if let Ok(w) = v.convert_to(dt) {
            prop_assert_eq!(w.datatype(), dt);
            let back = w.convert_to(v.datatype()).unwrap();
            prop_assert_eq!(back, v);
            if v.as_f64().is_none_or(|f| f != 0.0) {
                prop_assert_eq!(back.to_ne_bytes(), v.to_ne_bytes());
            }
        }
    }

    /// `FromStr` reads integers and booleans written by `Display` as a natural type that
    /// converts exactly back to the value.
    #[test]
    fn from_str_then_convert_reads_integers(v in any_value()) {
        prop_assume!(v.datatype().is_integer() || v.datatype() == Datatype::CBool);
        let parsed: Value = v.to_string().parse().unwrap();
        prop_assert_eq!(parsed.convert_to(v.datatype()), Ok(v));
    }
}

/// Every datatype has a value made by `parse`, and the `From` impls follow the documented rule:
/// one datatype per Rust type, the fixed-width ones for integers.
#[test]
fn every_datatype_can_be_made() {
    for &dt in Datatype::ALL {
        let text = match dt.kind() {
            TypeKind::Character => "a",
            TypeKind::Boolean => "true",
            _ => "1",
        };
        let v = Value::parse(dt, text).unwrap();
        assert_eq!(v.datatype(), dt);
    }
    assert_eq!(Value::from(-1i8), Value::Int8(-1));
    assert_eq!(Value::from(-1i16), Value::Int16(-1));
    assert_eq!(Value::from(c_int::MAX), Value::Int32(i32::MAX));
    assert_eq!(Value::from(-1i64), Value::Int64(-1));
    assert_eq!(Value::from(1u8), Value::Uint8(1));
    assert_eq!(Value::from(1u16), Value::Uint16(1));
    assert_eq!(Value::from(1u32), Value::Uint32(1));
    assert_eq!(Value::from(1u64), Value::Uint64(1));
    assert_eq!(Value::from(1.0f32), Value::Float(1.0));
    assert_eq!(Value::from(1.0f64), Value::Double(1.0));
    assert_eq!(Value::from(false), Value::CBool(false));
    assert_eq!(Value::from(-1isize), Value::Aint(-1));
    assert_eq!(Value::try_from('λ'), Ok(Value::WChar(0x3bb)));
    // The C aliases: the variant is the constructor.
    assert_eq!(Value::Int(3).datatype(), Datatype::Int);
    assert_eq!(
        Value::from(3 as c_int).convert_to(Datatype::Int),
        Ok(Value::Int(3))
    );
}

/// Text of the wrong form is `Error::Parse` naming the datatype; the right form out of range
/// is `Error::NotRepresentable`.
#[test]
fn parse_errors() {
    let parse = |dt, t| Value::parse(dt, t).unwrap_err();
    for (dt, t) in [
        (Datatype::Int, ""),
        (Datatype::Int, "1.0"),
        (Datatype::Int, "0x"),
        (Datatype::Int, "1 2"),
        (Datatype::Double, "0x10"),
        (Datatype::CBool, "yes"),
        (Datatype::Char, "ab"),
        (Datatype::Char, "\\x4"),
        (Datatype::WChar, ""),
        (Datatype::WChar, "U+12345678A"),
        (Datatype::Byte, "b"),
    ] {
        let e = parse(dt, t);
        assert!(matches!(e, Error::Parse(_)), "{dt} {t:?}: {e:?}");
        assert!(e.to_string().contains(dt.c_name()), "{e}");
    }
    for (dt, t) in [
        (Datatype::Int, "2147483648"),
        (Datatype::Unsigned, "-1"),
        (Datatype::SignedChar, "0x80"),
        (Datatype::Byte, "256"),
        (Datatype::Char, "é"),
    ] {
        let e = parse(dt, t);
        assert!(matches!(e, Error::NotRepresentable(_)), "{dt} {t:?}: {e:?}");
    }
    assert!(matches!("x".parse::<Value>(), Err(Error::Parse(_))));
    assert!(matches!(
        "18446744073709551616".parse::<Value>(),
        Err(Error::NotRepresentable(_))
    ));
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
