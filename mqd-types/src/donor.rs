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
    constants: Vec<(String, i64)>,
}

#[cfg(mqd_donor)]
static EMBEDDED: &[u8] = include_bytes!(env!("MQD_DONOR_OBJECT"));

#[cfg(mqd_ob1_donor)]
static EMBEDDED_OB1: &[u8] = include_bytes!(env!("MQD_OB1_DONOR_OBJECT"));

impl TypeDonor {
    /// Reads a donor object (an ELF file with DWARF; its `mqd_donor_ompi_version` string, if
    /// any, names the version, and its 8-byte `mqd_const_NAME` variables are constants of the
    /// headers, see [`constant`](Self::constant)).
    pub fn from_object(data: &[u8]) -> Result<TypeDonor, MqdError> {
        let types = DwarfTypes::parse(data)?;
        if types.is_empty() {
            return Err(MqdError::TypeInfo(
                "the donor object has no DWARF types".to_owned(),
            ));
        }
        let file = object::File::parse(data).map_err(|e| MqdError::TypeInfo(e.to_string()))?;
        let bytes_of = |sym: &object::Symbol<'_, '_>| -> Option<&[u8]> {
            let section = file.section_by_index(sym.section_index()?).ok()?;
            section.data_range(sym.address(), sym.size()).ok()?
        };
        let ompi_version = file
            .symbol_by_name("mqd_donor_ompi_version")
            .and_then(|sym| {
                let bytes = bytes_of(&sym)?;
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
            });
        let little = file.is_little_endian();
        let constants = file
            .symbols()
            .filter_map(|sym| {
                let name = sym.name().ok()?.strip_prefix("mqd_const_")?.to_owned();
                let raw: [u8; 8] = bytes_of(&sym)?.try_into().ok()?;
                let v = if little {
                    i64::from_le_bytes(raw)
                } else {
                    i64::from_be_bytes(raw)
                };
                Some((name, v))
            })
            .collect();
        Ok(TypeDonor {
            types,
            ompi_version,
            constants,
        })
    }

    /// The value of the header constant the donor recorded as `mqd_const_NAME`.
    pub fn constant(&self, name: &str) -> Option<i64> {
        self.constants
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }

    /// The donor built into this crate from the installed Open MPI headers, or why there is
    /// none (the headers were not found at build time).
    pub fn embedded() -> Result<&'static TypeDonor, MqdError> {
        static DONOR: OnceLock<Result<TypeDonor, String>> = OnceLock::new();
        #[cfg(mqd_donor)]
        let object: Result<&[u8], String> = Ok(EMBEDDED);
        #[cfg(not(mqd_donor))]
        let object: Result<&[u8], String> = Err(
            "mqd-types was built without Open MPI's headers (libopenmpi-dev): no type donor"
                .to_owned(),
        );
        once(&DONOR, object)
    }

    /// The ob1 PML's donor built into this crate (from the ob1 headers of Debian's Open MPI
    /// source package of the installed version, see the build script), or why there is none.
    pub fn embedded_ob1() -> Result<&'static TypeDonor, MqdError> {
        static DONOR: OnceLock<Result<TypeDonor, String>> = OnceLock::new();
        #[cfg(mqd_ob1_donor)]
        let object: Result<&[u8], String> = Ok(EMBEDDED_OB1);
        #[cfg(not(mqd_ob1_donor))]
        let object: Result<&[u8], String> = Err(format!(
            "mqd-types was built without the ob1 type donor: {}",
            option_env!("MQD_OB1_DONOR_ERROR").unwrap_or("unknown reason")
        ));
        once(&DONOR, object)
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

/// The donor parsed from `object` once, kept in `cell`.
fn once(
    cell: &'static OnceLock<Result<TypeDonor, String>>,
    object: Result<&[u8], String>,
) -> Result<&'static TypeDonor, MqdError> {
    cell.get_or_init(|| object.and_then(|o| TypeDonor::from_object(o).map_err(|e| e.to_string())))
        .as_ref()
        .map_err(|e| MqdError::TypeInfo(e.clone()))
}
