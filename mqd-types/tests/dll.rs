//! Open MPI's real DLL (`libompi_dbg_msgq.so`, named by the installed `libmpi`'s
//! `MPIR_dll_name`) loaded and driven through its image callbacks with synthetic images: the
//! version checks, the DLL's error strings, a typed error naming the first missing type when
//! an image has no type information, and success with the type donor.

use std::collections::HashSet;

use crate::common;
use mqd_types::types::err;
use mqd_types::{Dll, Image, ImageTarget, LangCode, MqdError, TypeDonor, TypeLayout};

/// An image with every symbol at a made-up address and types from `types` minus `hidden`.
struct Synthetic {
    donor: Option<&'static TypeDonor>,
    hidden: HashSet<&'static str>,
}

impl ImageTarget for Synthetic {
    fn find_function(&self, name: &str, _lang: LangCode) -> Option<u64> {
        (name == "ompi_debugger_setup_dlls").then_some(0x1000)
    }
    fn find_symbol(&self, name: &str) -> Option<u64> {
        // No `MPIR_Ignore_queues`: the DLL would fail silently.
        (name != "MPIR_Ignore_queues").then_some(0x2000)
    }
    fn find_type(&self, name: &str, _lang: LangCode) -> Option<TypeLayout> {
        if self.hidden.contains(name) {
            return None;
        }
        self.donor?.find(name)
    }
}

fn dll() -> Option<Dll> {
    let path = common::msgq_dll()?;
    Some(Dll::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

#[test]
fn the_real_dll_loads_and_identifies_itself() {
    let Some(dll) = dll() else {
        return common::skip("dll");
    };
    println!("{}: {}", dll.path().display(), dll.version());
    assert_eq!(dll.compatibility(), mqd_types::INTERFACE_COMPATIBILITY);
    assert!(dll.version().contains("Open MPI"), "{}", dll.version());
    // The DLL's own texts for its codes.
    let missing = dll.error_string(err::err_missing_type);
    assert!(!missing.is_empty());
    assert_ne!(missing, dll.error_string(err::err_all_communicators));
}

#[test]
fn a_shared_object_that_is_no_dll_is_a_typed_error() {
    let Some(libmpi) = common::libmpi() else {
        return common::skip("not a dll");
    };
    match Dll::load(&libmpi) {
        Err(MqdError::MissingEntryPoint { symbol, .. }) => {
            assert_eq!(symbol, "mqs_setup_basic_callbacks")
        }
        other => panic!("{other:?}"),
    }
    match Dll::load("/nonexistent/libompi_dbg_msgq.so") {
        Err(MqdError::Load { reason, .. }) => assert!(!reason.is_empty()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_type_information_the_error_names_the_first_missing_type() {
    let Some(dll) = dll() else {
        return common::skip("no types");
    };
    let image = Image::new(
        &dll,
        Box::new(Synthetic {
            donor: None,
            hidden: HashSet::new(),
        }),
    );
    match image {
        Err(MqdError::MissingType { name, dll_text }) => {
            println!("no types: {name:?} ({dll_text})");
            assert_eq!(name, "opal_list_item_t");
            assert_eq!(dll_text, dll.error_string(err::err_missing_type));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_donor_supplies_every_type_the_dll_asks_for() {
    let (Some(dll), Ok(donor)) = (dll(), TypeDonor::embedded()) else {
        return common::skip("donor");
    };
    println!("donor: Open MPI {:?}", donor.ompi_version());
    let image = Image::new(
        &dll,
        Box::new(Synthetic {
            donor: Some(donor),
            hidden: HashSet::new(),
        }),
    )
    .expect("the donor has every type");
    let requests = image.type_requests();
    let names: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
    println!(
        "the DLL asked for {} types: {}",
        names.len(),
        names.join(", ")
    );
    println!(
        "members it asked for that the types lack: {:?}",
        image.missing_fields()
    );
    assert!(requests.iter().all(|r| r.found));
    assert!(names.contains(&"ompi_communicator_t"));
    assert!(names.contains(&"opal_free_list_t"));
    // Hiding any one of them makes the DLL name exactly that one.
    for hide in [
        "ompi_group_t",
        "mca_pml_base_recv_request_t",
        names[names.len() - 1],
    ] {
        let hide: &'static str = Box::leak(hide.to_owned().into_boxed_str());
        match Image::new(
            &dll,
            Box::new(Synthetic {
                donor: Some(donor),
                hidden: [hide].into_iter().collect(),
            }),
        ) {
            Err(MqdError::MissingType { name, .. }) => assert_eq!(name, hide),
            other => panic!("hiding {hide}: {other:?}"),
        }
    }
}

#[test]
fn the_donor_matches_the_installed_library() {
    let (Some(libmpi), Ok(donor)) = (common::libmpi(), TypeDonor::embedded()) else {
        return common::skip("donor sizes");
    };
    let data = std::fs::read(&libmpi).unwrap();
    for (symbol, ty) in [
        ("ompi_mpi_communicators", "opal_pointer_array_t"),
        ("mca_pml_base_send_requests", "opal_free_list_t"),
        ("mca_pml_base_recv_requests", "opal_free_list_t"),
        ("MPIR_debug_typedefs_sizeof", "int"),
    ] {
        let (size, _) = common::elf_symbol(&data, symbol).expect(symbol);
        let layout = donor.find(ty).expect(ty);
        let expect = if ty == "int" {
            7 * layout.size
        } else {
            layout.size
        };
        println!(
            "{symbol}: {size} bytes in {}, {ty}: {} in the donor",
            libmpi.display(),
            layout.size
        );
        assert_eq!(size, expect, "{symbol} vs {ty}");
    }
}
