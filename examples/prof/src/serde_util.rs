//! `serde` adapters for the model's fields whose types come from `mpit-safe` (which does not
//! depend on `serde`) and for the floats JSON lacks.

#![forbid(unsafe_code)]

/// A value kept as its `Display` name and read back with `FromStr` (the C constant families of
/// `mpit-core`: `Scope`, `Bind`, `Datatype`, `Verbosity`, `PvarClass`, `SourceOrder`).
pub(crate) mod by_name {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub(crate) fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr<Err: Display>,
        D: Deserializer<'de>,
    {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}

/// A float that may be NaN or infinite (which JSON lacks): finite ones as numbers, the others
/// as their `Display` text (`NaN`, `inf`, `-inf`).
pub(crate) mod any_float {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Number(f64),
        Text(String),
    }

    pub(crate) fn serialize<T: Copy + Into<f64>, S: Serializer>(
        v: &T,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let x: f64 = (*v).into();
        if x.is_finite() {
            s.serialize_f64(x)
        } else {
            s.collect_str(&x)
        }
    }

    pub(crate) fn deserialize<'de, T: FromF64, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Number(x) => Ok(T::from_f64(x)),
            Repr::Text(t) => t.parse::<f64>().map(T::from_f64).map_err(D::Error::custom),
        }
    }

    /// Back from the `f64` written (exact: an `f32` widens without loss).
    pub(crate) trait FromF64 {
        fn from_f64(x: f64) -> Self;
    }

    impl FromF64 for f64 {
        fn from_f64(x: f64) -> Self {
            x
        }
    }

    impl FromF64 for f32 {
        fn from_f64(x: f64) -> Self {
            x as f32
        }
    }
}

/// An optional float that may be NaN or infinite: `null` for `None`, otherwise as
/// [`any_float`] writes it.
pub(crate) mod opt_float {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Wrap(#[serde(with = "super::any_float")] f64);

    pub(crate) fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        v.map(Wrap).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(Option::<Wrap>::deserialize(d)?.map(|w| w.0))
    }
}

/// A list of floats that may be NaN or infinite, each as [`any_float`] writes it.
pub(crate) mod float_vec {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Wrap(#[serde(with = "super::any_float")] f64);

    pub(crate) fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|&x| Wrap(x)))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<Wrap>::deserialize(d)?
            .into_iter()
            .map(|w| w.0)
            .collect())
    }
}

/// A float as the 64 bits of its IEEE 754 representation: exact whatever it is (NaN, infinite,
/// `-0.0`, the last bit of a sum), for the partial reductions the ranks send each other (a
/// decimal round trip may lose the last bit).
pub(crate) mod bits {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.to_bits())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        u64::deserialize(d).map(f64::from_bits)
    }
}
