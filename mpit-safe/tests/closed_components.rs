//! Control variables of components that `MPI_Init` closes (Open MPI 4.1: the UCX and OFI
//! `*_verbose` family, see `CvarHandle`'s hazard list): after `MPI_Init` a read is refused
//! with `Error::KnownCrash` instead of reading freed memory. The sequence that crashes the raw
//! library (every cvar listed before `MPI_Init`, a read after it) runs in a child process, so
//! a crash fails this test instead of ending the test binary. Elsewhere the variables do not
//! exist and the test says so.

// rsmpi in the native build; its names over the ABI library in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;
use std::process::Command;

use mpit_safe::{Error, Mpit};

const CHILD: &str = "MPIT_SAFE_CLOSED_COMPONENTS_CHILD";
const HAZARDS: [&str; 4] = [
    "opal_common_ofi_verbose",
    "btl_ofi_verbose",
    "mtl_ofi_verbose",
    "opal_common_ucx_verbose",
];

fn child() {
    let mpit = Mpit::init().unwrap();
    // What makes the raw read segfault on Open MPI 4.1.4: the listing before MPI_Init.
    let listing = mpit.cvars().unwrap();
    let present: Vec<_> = HAZARDS
        .iter()
        .filter_map(|n| Some((*n, mpit.cvar_index(n).unwrap()?)))
        .collect();
    let handles: Vec<_> = present
        .iter()
        .map(|&(n, i)| (n, mpit.cvar_handle::<i32>(i).unwrap()))
        .collect();
    for (n, h) in &handles {
        assert!(h.read().is_ok(), "{n} before MPI_Init");
    }
    let universe = mpi::initialize().unwrap();
    for (n, h) in &handles {
        match h.read() {
            Err(Error::KnownCrash(why)) => println!("refused {n} after MPI_Init: {why}"),
            other => println!("read {n} after MPI_Init: {other:?}"),
        }
    }
    println!(
        "{} of the hazards present ({} cvars listed before MPI_Init)",
        present.len(),
        listing.entries.len()
    );
    drop(universe);
}

#[test]
fn closed_components_are_refused_after_init() {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "closed_components_are_refused_after_init",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    for l in text.lines() {
        eprintln!("  | {l}");
    }
    assert!(out.status.success(), "child: {}", out.status);
    let open_mpi_4 = mpit_safe::sys::IMPLEMENTATION == "Open MPI"
        && mpit_safe::sys::IMPLEMENTATION_VERSION.starts_with("4.");
    let present = HAZARDS
        .iter()
        .filter(|n| text.contains(&format!(" {n} after MPI_Init")))
        .count();
    if open_mpi_4 {
        assert_eq!(present, HAZARDS.len(), "Open MPI 4.1 registers all four");
        for n in HAZARDS {
            assert!(text.contains(&format!("refused {n} after MPI_Init")), "{n}");
        }
    } else {
        // Other implementations: whatever exists reads normally.
        assert!(
            !text
                .lines()
                .any(|l| l.contains("| refused ") || l.starts_with("refused ")),
            "no hazard outside Open MPI 4.1"
        );
    }
}
