//! The type donor: Open MPI's internal types, from the DWARF of a small object compiled with
//! `-g` against the headers libopenmpi-dev installs (`donor/ompi_types.c`, built by the build
//! script when the headers are there).
//!
//! Debian strips `libmpi.so.40`, so Open MPI's DLL finds none of the types it reads the queues
//! with; the donor supplies exactly those, for the version of the installed headers.

use std::sync::OnceLock;

use object::{Object, ObjectSection, ObjectSymbol};

use crate::dwarf::{DwarfTypes, TypeLayout};
use crate::error::MqdError;

/// The types of a donor object and the Open MPI version its headers were.
#[derive(Clone, Debug)]
pub struct TypeDonor {
    types: DwarfTypes,
    ompi_version: Option<String>,
}

#[cfg(mqd_donor)]
static EMBEDDED: &[u8] = include_bytes!(env!("MQD_DONOR_OBJECT"));

impl TypeDonor {
    /// Reads a donor object (an ELF file with DWARF; its `mqd_donor_ompi_version` string, if
    /// any, names the version).
    pub fn from_object(data: &[u8]) -> Result<TypeDonor, MqdError> {
        let types = DwarfTypes::parse(data)?;
        if types.is_empty() {
            return Err(MqdError::TypeInfo(
                "the donor object has no DWARF types".to_owned(),
            ));
        }
        let ompi_version = object::File::parse(data).ok().and_then(|f| {
            let sym = f.symbol_by_name("mqd_donor_ompi_version")?;
            let section = f.section_by_index(sym.section_index()?).ok()?;
            let bytes = section.data_range(sym.address(), sym.size()).ok()??;
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
        });
        Ok(TypeDonor {
            types,
            ompi_version,
        })
    }

    /// The donor built into this crate from the installed Open MPI headers, or why there is
    /// none (the headers were not found at build time).
    pub fn embedded() -> Result<&'static TypeDonor, MqdError> {
        static DONOR: OnceLock<Result<TypeDonor, String>> = OnceLock::new();
        DONOR
            .get_or_init(|| {
                #[cfg(mqd_donor)]
                let r = TypeDonor::from_object(EMBEDDED).map_err(|e| e.to_string());
                #[cfg(not(mqd_donor))]
                let r = Err(
                    "mqd-types was built without Open MPI's headers (libopenmpi-dev): \
                             no type donor"
                        .to_owned(),
                );
                r
            })
            .as_ref()
            .map_err(|e| MqdError::TypeInfo(e.clone()))
    }

    /// The layout of type `name`.
    pub fn find(&self, name: &str) -> Option<TypeLayout> {
        self.types.find(name)
    }

    /// All its types.
    pub fn types(&self) -> &DwarfTypes {
        &self.types
    }

    /// `OMPI_VERSION` of the headers it was compiled from (`"4.1.4"`), if recorded.
    pub fn ompi_version(&self) -> Option<&str> {
        self.ompi_version.as_deref()
    }
}
