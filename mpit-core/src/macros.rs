//! Boilerplate for the fieldless enums that mirror a family of C constants.

/// Defines a fieldless enum whose variants mirror C constants sharing a prefix.
///
/// Generates `ALL` (declaration order), `c_name()`, `name()` (the C name
/// without the prefix), `Display` (short name) and `FromStr` (short or full C
/// name, ASCII case-insensitive).
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident ($prefix:literal, $what:literal) {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $cname:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[doc(alias = $cname)]
                $variant,
            )+
        }

        impl $name {
            /// Every value, in the order the standard lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The name of the C constant, e.g. as spelled in `mpi.h`.
            pub const fn c_name(self) -> &'static str {
                match self {
                    $($name::$variant => $cname,)+
                }
            }

            /// The C name without its common prefix (what `Display` prints).
            pub fn name(self) -> &'static str {
                let c = self.c_name();
                c.strip_prefix($prefix).unwrap_or(c)
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::core::str::FromStr for $name {
            type Err = $crate::error::Error;

            /// Parses the short name (`Display` form) or the full C name,
            /// ignoring ASCII case.
            fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {
                let s = s.trim();
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name().eq_ignore_ascii_case(s) || v.c_name().eq_ignore_ascii_case(s))
                    .ok_or_else(|| $crate::error::Error::parse($what, s))
            }
        }
    };
}

pub(crate) use c_enum;
