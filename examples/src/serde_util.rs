//! `serde` adapters for the models' fields whose types come from the library crates (which do
//! not depend on `serde`).

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
/// An address kept as `0x` hex text, as the tools print addresses.
pub(crate) mod hex {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{v:#x}"))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let s = String::deserialize(d)?;
        let digits = s
            .strip_prefix("0x")
            .ok_or_else(|| D::Error::custom(format!("{s:?} is not 0x hex")))?;
        u64::from_str_radix(digits, 16).map_err(D::Error::custom)
    }
}

/// A field that is absent (`None`), `null` (`Some(None)`) or a value (`Some(Some(v))`): with
/// `#[serde(default, skip_serializing_if = "Option::is_none", with = "double_option")]`.
pub(crate) mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<T: Serialize, S: Serializer>(
        v: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        // `None` is skipped by the field's `skip_serializing_if`.
        v.as_ref().and_then(Option::as_ref).serialize(s)
    }

    pub(crate) fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

/// `v` as one pretty-printed JSON document with a final newline (a tool's `--json` output); if
/// it cannot be serialised, a document saying why.
pub(crate) fn pretty_json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v)
        .unwrap_or_else(|e| format!("{{\"errors\": [{:?}]}}", e.to_string()));
    s.push('\n');
    s
}
