//! Control variables (MPI-4.1 §16.3.6): one looked up by name, read typed and as a `Value`,
//! then a writable one written and read back.
//!
//! Run: `cargo run -p mpit-api-examples --example cvars [-- NAME]`. NAME defaults to this
//! MPI's eager limit (Open MPI's `btl_vader_eager_limit`, MPICH's
//! `MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE`, ...). Eager limits are often read-only; the write
//! goes to NAME when its scope allows, else to the first writable integer variable.
#[cfg(mpit_abi)]
use mpit_safe::mpi; // rsmpi's names over the ABI library in the ABI build
use mpit_safe::{Bind, CvarInfo, Datatype, Error, Mpit, NoObject, Scalar};

const EAGER_LIMITS: &[&str] = &[
    "btl_vader_eager_limit",                // Open MPI 4.1
    "btl_sm_eager_limit",                   // Open MPI 5.0
    "btl_tcp_eager_limit",                  // Open MPI without shared memory (a singleton)
    "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE", // MPICH's ch4:ofi, Intel MPI
    "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE",     // MPICH's ch3
    "I_MPI_SHM_EAGER_THRESHOLD",            // Intel MPI's shared memory
    "MPIR_CVAR_INTEL_SHM_EAGER_THRESHOLD",  // the same, by its MPICH-style name
];

/// A typed read: `T` is checked against the variable's datatype once, when the handle is made.
fn typed<T: Scalar + Default + std::fmt::Display>(mpit: &Mpit, i: usize) -> Result<String, Error> {
    Ok(format!("{} {}", T::NAME, mpit.cvar_handle::<T>(i)?.read()?))
}

fn main() -> Result<(), Error> {
    let _universe = mpi::initialize().expect("MPI_Init failed"); // MPICH registers its cvars here
    let mpit = Mpit::init()?;
    let arg: Vec<String> = std::env::args().skip(1).collect();
    let names: Vec<&str> = arg.first().map_or(EAGER_LIMITS.to_vec(), |n| vec![n]);
    let mut found = None;
    for n in &names {
        found = found.or(mpit.cvar_index(n)?);
    }
    let Some(index) = found else {
        println!("no control variable {names:?} in this MPI");
        return Ok(());
    };
    let info = mpit.cvar_info(index)?;
    let value = match info.datatype {
        Datatype::Int => typed::<i32>(&mpit, info.index)?,
        Datatype::Unsigned => typed::<u32>(&mpit, info.index)?,
        Datatype::UnsignedLong | Datatype::UnsignedLongLong => typed::<u64>(&mpit, info.index)?,
        other => format!("({other}: read below as a Value)"),
    };
    // Any datatype, learnt at run time: `Value`s through a dynamic handle.
    let values = mpit.dyn_cvar_handle(info.index, &NoObject)?.read_values()?;
    println!(
        "cvar {} ({}, scope {}): typed {value}, as a Value {}",
        info.name, info.datatype, info.scope, values[0]
    );

    // A write: a new value, read back, then the old one restored.
    let writable = |v: &&CvarInfo| {
        v.scope.is_writable() && v.bind == Bind::NoObject && v.datatype == Datatype::Int
    };
    let cvars = mpit.cvars()?;
    for v in std::iter::once(&info)
        .filter(writable)
        .chain(cvars.entries.iter().filter(writable))
    {
        let h = mpit.cvar_handle::<i32>(v.index)?;
        let Ok(old) = h.read() else { continue }; // refused by a quirk guard
        let new = old.wrapping_add(1);
        if h.count() != 1 || h.write(new).is_err() {
            continue; // this scope refuses writes now (MPI_T_ERR_CVAR_SET_NOT_NOW)
        }
        println!(
            "write {} (scope {}): wrote {new}, read back {}",
            v.name,
            v.scope,
            h.read()?
        );
        h.write(old)?;
        println!("restored {} = {}", v.name, h.read()?);
        return Ok(());
    }
    println!("no writable integer control variable accepted a write");
    Ok(())
}
