//! How a control variable is set from the environment, where the implementation has a
//! convention for it (MPI_T itself has none: a cvar's name is the implementation's).
//!
//! | family | cvar names | environment variable |
//! |---|---|---|
//! | MPICH | `MPIR_CVAR_ASYNC_PROGRESS` | the name itself: MPICH names its cvars after their variables |
//! | Intel MPI (MPICH-derived) | `MPIR_CVAR_BCAST_SHORT_MSG_SIZE`, and its own `I_MPI_OFFLOAD_DOMAIN_SIZE` | the name itself |
//! | Open MPI | MCA parameters: `btl_tcp_if_include` | `OMPI_MCA_btl_tcp_if_include` |
//!
//! MPICH reads `MPIR_CVAR_<NAME>` at `MPI_Init`; an MPICH-family cvar name without that prefix
//! would be set as `MPIR_CVAR_` and its name upper-cased. Intel MPI 2021 lists cvars of both
//! kinds: those named `I_MPI_*` are read from the variable of that name; of those named
//! `MPIR_CVAR_*` it reads the ones it shares with MPICH from `MPIR_CVAR_*` (e.g.
//! `MPIR_CVAR_BCAST_SHORT_MSG_SIZE`), but many of its own `MPIR_CVAR_*` cvars only from an
//! `I_MPI_*` variable of another name that MPI_T does not give (e.g.
//! `MPIR_CVAR_BARRIER_NODE_KARY_RADIX` from `I_MPI_ADJUST_BARRIER_NODE_KARY_RADIX`), which the
//! tool does not guess: there the variable shown is MPICH's convention, which Intel MPI may
//! ignore. Open MPI 4 and 5 read `OMPI_MCA_<name>` for every MCA parameter its MPI_T lists, the
//! OPAL and OMPI layers' (in Open MPI 5 also the `pmix_*` parameters of OPAL's PMIx framework;
//! the PRRTE and PMIx runtime's own `PRTE_MCA_*`/`PMIX_MCA_*` parameters are no MPI_T cvars).
//! A cvar of scope `CONSTANT` cannot be set: it has none.

use mpit_safe::{Family, Implementation, Scope};

use super::model::{Cvar, Listing};

/// The family of the implementation a listing was read from: from its library version string,
/// else from the header's name.
pub fn family(listing: &Listing) -> Family {
    listing
        .library_version
        .as_deref()
        .and_then(Implementation::from_library_version)
        .map(|i| i.family())
        .unwrap_or(match listing.implementation.as_str() {
            "MPICH" => Family::Mpich,
            "Open MPI" => Family::OpenMpi,
            _ => Family::Unknown,
        })
}

/// The environment variable that sets control variable `v` of an implementation of `family`
/// (`None`: no convention, or a constant).
pub fn variable(family: Family, v: &Cvar) -> Option<String> {
    let name = &v.var.name;
    if v.scope == Scope::Constant
        || name.is_empty()
        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    match family {
        Family::Mpich if name.starts_with("MPIR_CVAR_") || name.starts_with("I_MPI_") => {
            Some(name.clone())
        }
        Family::Mpich => Some(format!("MPIR_CVAR_{}", name.to_ascii_uppercase())),
        Family::OpenMpi => Some(format!("OMPI_MCA_{name}")),
        Family::Unknown => None,
    }
}

#[cfg(test)]
mod tests {
    use mpit_safe::{Bind, Datatype, Family, Scope, Verbosity};

    use super::variable;
    use crate::list::model::{Cvar, Reading, Variable};

    fn cvar(name: &str, scope: Scope) -> Cvar {
        Cvar {
            var: Variable {
                index: 0,
                name: name.into(),
                bind: Bind::NoObject,
                datatype: Datatype::Int,
                verbosity: Verbosity::USER_BASIC,
                enumtype: None,
                description: String::new(),
                reading: Reading::Values(Vec::new()),
                object: None,
            },
            scope,
        }
    }

    #[test]
    fn each_family_has_its_convention() {
        let cases = [
            (
                Family::Mpich,
                "MPIR_CVAR_ASYNC_PROGRESS",
                Scope::AllEq,
                Some("MPIR_CVAR_ASYNC_PROGRESS"),
            ),
            (
                Family::Mpich,
                "I_MPI_OFFLOAD_DOMAIN_SIZE",
                Scope::Local,
                Some("I_MPI_OFFLOAD_DOMAIN_SIZE"),
            ),
            (
                Family::Mpich,
                "ch4_netmod",
                Scope::Local,
                Some("MPIR_CVAR_CH4_NETMOD"),
            ),
            (
                Family::OpenMpi,
                "btl_tcp_if_include",
                Scope::Local,
                Some("OMPI_MCA_btl_tcp_if_include"),
            ),
            (Family::OpenMpi, "mca_base_version", Scope::Constant, None),
            (Family::Unknown, "x", Scope::Local, None),
            (Family::OpenMpi, "not a name", Scope::Local, None),
        ];
        for (family, name, scope, expected) in cases {
            assert_eq!(
                variable(family, &cvar(name, scope)).as_deref(),
                expected,
                "{name}"
            );
        }
    }
}
