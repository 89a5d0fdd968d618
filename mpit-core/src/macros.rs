//! The one table of each family of C constants.
//!
//! A family (verbosity, binding, scope, class, datatype, error class, thread level, callback
//! safety, source order) is declared once, as a `c_enum!` table: one row per constant, with its
//! C name, an optional extra column and the version of the standard that added it when later
//! than MPI-3.0 (the installed header may then lack it). Everything else comes from the row:
//! the enum, its `ALL`, `c_name`, `Display`/`FromStr`, [`CConstant`](crate::CConstant) (which
//! `mpit-sys`'s build script reads to generate the installed values) and, through it, the
//! conversions of `mpit-safe`.

/// Defines a fieldless enum whose variants mirror C constants sharing a prefix.
///
/// Rows are `Variant = "C_NAME"`, optionally followed by `=> "extra"` (when the family names
/// an extra column after its prefix and kind) and `@ "MPI-x.y"` (the version of the standard
/// that added the constant, for constants an older header may lack).
///
/// Generates `ALL` (declaration order), `c_name()`, `name()` (the C name without the prefix),
/// `since()`, the extra column's function, `Display` (short name), `FromStr` (short or full C
/// name, ASCII case-insensitive) and [`CConstant`](crate::CConstant).
macro_rules! c_enum {
    // A family with an extra column: every row has `=> "value"`.
    (
        $(#[$meta:meta])*
        pub enum $name:ident ($prefix:literal, $what:literal, $(#[$cmeta:meta])* $col:ident) {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $cname:literal => $extra:literal $(@ $since:literal)?
            ),+ $(,)?
        }
    ) => {
        $crate::macros::c_enum! {
            $(#[$meta])*
            pub enum $name ($prefix, $what) {
                $( $(#[$vmeta])* $variant = $cname $(@ $since)? ),+
            }
        }

        impl $name {
            $(#[$cmeta])*
            pub const fn $col(self) -> &'static str {
                match self {
                    $($name::$variant => $extra,)+
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $name:ident ($prefix:literal, $what:literal) {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $cname:literal $(@ $since:literal)?
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

            /// The family's table: C name and the version of the standard that added the
            /// constant when later than MPI-3.0, in the order of `ALL`.
            pub const TABLE: &'static [$crate::constants::Row] = &[
                $($crate::constants::Row {
                    c_name: $cname,
                    since: $crate::macros::c_enum!(@since $($since)?),
                }),+
            ];

            /// The name of the C constant, e.g. as spelled in `mpi.h`.
            pub const fn c_name(self) -> &'static str {
                Self::TABLE[self as usize].c_name
            }

            /// The version of the standard that added the constant, when later than MPI-3.0
            /// (an older `mpi.h` may not declare it).
            pub const fn since(self) -> Option<&'static str> {
                Self::TABLE[self as usize].since
            }

            /// The C name without its common prefix (what `Display` prints).
            pub fn name(self) -> &'static str {
                let c = self.c_name();
                c.strip_prefix($prefix).unwrap_or(c)
            }
        }

        impl $crate::constants::CConstant for $name {
            const KIND: &'static str = $what;
            const ALL: &'static [$name] = $name::ALL;
            const TABLE: &'static [$crate::constants::Row] = $name::TABLE;

            #[inline]
            fn position(self) -> usize {
                self as usize
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
    (@since) => { None };
    (@since $since:literal) => { Some($since) };
}

pub(crate) use c_enum;
