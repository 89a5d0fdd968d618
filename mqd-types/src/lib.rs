//! The Message Queue Display interface (the MPI Forum tools working group's draft "Tools and
//! Debugging Interfaces to MPI, Version 1.0", and Open MPI's `msgq_interface.h`, the header
//! real implementations install):
//! the `repr(C)` types of `msgq_interface.h`, a loader of the MPI implementation's debug DLL,
//! and the debugger's callback tables implemented in Rust.
//!
//! | item | what it is |
//! |---|---|
//! | [`types`] | every type, constant and function signature of the header |
//! | [`Dll`] | a loaded, checked DLL (`mqs_version_compatibility`, `mqs_dll_taddr_width`) |
//! | [`ImageTarget`], [`ProcessTarget`] | what a debugger implements: symbols, types, memory |
//! | [`Image`], [`Process`] | an image and a process set up in the DLL; [`Process::queues`] |
//! | [`DwarfTypes`], [`TypeDonor`] | type layouts from DWARF, and Open MPI's internal types for a stripped `libmpi` |
//! | [`live`] (Linux) | a live process as image and process; section 5's DLL search |
//! | [`ob1`] | the unexpected messages of Open MPI's ob1 PML, read by mqd-types where the DLL has no information |
//! | [`pml`] | which PML an Open MPI process runs (seen through the monitoring PML): the DLL's queues are true only under ob1 |
//!
//! ```no_run
//! # #[cfg(target_os = "linux")] {
//! use mqd_types::live::{LiveImage, LiveProcess, TypeSources, find_dll};
//! use mqd_types::{Image, OpClass};
//!
//! let pid = 4242; // a rank of `mpiexec.openmpi --mca pml ob1 ...`
//! let dll = find_dll(None, pid)?;
//! let image = Image::new(&dll, Box::new(LiveImage::new(pid, TypeSources::default())?))?;
//! let mut process = image.process(Box::new(LiveProcess::new(pid)?))?;
//! for c in process.queues(&OpClass::ALL)? {
//!     println!("{} size {}", c.communicator.name(), c.communicator.size);
//! }
//! # }
//! # Ok::<(), mqd_types::MqdError>(())
//! ```
#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod dll;
mod donor;
mod dwarf;
mod error;
#[cfg(target_os = "linux")]
pub mod live;
pub mod ob1;
pub mod pml;
mod target;
pub mod types;

pub use dll::{CommunicatorQueues, Dll, ITERATION_LIMIT, Image, Process, Queue, TypeRequest};
pub use donor::TypeDonor;
pub use dwarf::{DwarfTypes, TypeLayout};
pub use error::MqdError;
pub use target::{ImageTarget, ProcessTarget};
pub use types::{
    Communicator, INTERFACE_COMPATIBILITY, INVALID_PROCESS, LangCode, OpClass, PendingOperation,
    Status, TAddr, TWord, TargetTypeSizes,
};
