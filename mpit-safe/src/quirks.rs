//! The implementation this process runs on, and the guards that step around known crashes of
//! real implementations.
//!
//! Every guard is a [`Quirk`] of one vendor and version range, checked against the library that
//! is actually loaded ([`implementation`], from `MPI_Get_library_version`), never against the
//! header alone. A refused call returns [`Error::KnownCrash`] naming the quirk; everywhere else
//! the call goes through. `examples/conformance/tests/quirks.rs` shows, for each quirk, the crash on the
//! implementations it names and the call let through on the others.

#![forbid(unsafe_code)]

use std::sync::OnceLock;

use mpit_core::{Error, Implementation, Quirk, Result, Vendor, Version, VersionRange};
use mpit_sys as sys;

/// The MPI library loaded in this process: vendor and version, from its own
/// `MPI_Get_library_version` (callable at any time, MPI-4.1 §9.1.1), read once.
///
/// Falls back to the header's vendor macros (`mpit_sys::IMPLEMENTATION`) when the library's
/// string is not recognised; [`Vendor::Unknown`] when neither is, so that no guard applies.
#[doc(alias = "MPI_Get_library_version")]
pub fn implementation() -> Implementation {
    static IMPLEMENTATION: OnceLock<Implementation> = OnceLock::new();
    *IMPLEMENTATION.get_or_init(|| {
        library_version()
            .as_deref()
            .and_then(Implementation::from_library_version)
            .unwrap_or_else(header_implementation)
    })
}

/// The string `MPI_Get_library_version` returns, if the call succeeds.
///
/// MPI-4.1 §9.1.1, `MPI_Get_library_version`.
#[doc(alias = "MPI_Get_library_version")]
pub fn library_version() -> Option<String> {
    crate::ffi::get_library_version().ok()
}

/// The value of configure option `option` in the loaded library's `MPI_Get_library_version`
/// (MPICH lists its configure line there; see
/// [`mpit_core::implementation::configure_option`]): `Some("")` for a bare option, `None`
/// where it is absent or the library lists none.
pub fn configure_option(option: &str) -> Option<String> {
    let lib = library_version()?;
    mpit_core::implementation::configure_option(&lib, option).map(str::to_owned)
}

/// What the header compiled against says (`I_MPI_VERSION`, `MPICH_VERSION`, `OMPI_*_VERSION`).
pub fn header_implementation() -> Implementation {
    let vendor = match sys::IMPLEMENTATION {
        "Intel MPI" => Vendor::Intel,
        "MPICH" => Vendor::Mpich,
        "Open MPI" => Vendor::OpenMpi,
        _ => return Implementation::UNKNOWN,
    };
    match Version::parse(sys::IMPLEMENTATION_VERSION) {
        Some(version) => Implementation { vendor, version },
        None => Implementation::UNKNOWN,
    }
}

const fn since(major: u32, minor: u32) -> VersionRange {
    VersionRange {
        from: Version::new(major, minor, 0),
        until: None,
    }
}

const fn between(from: (u32, u32), until: (u32, u32)) -> VersionRange {
    VersionRange {
        from: Version::new(from.0, from.1, 0),
        until: Some(Version::new(until.0, until.1, 0)),
    }
}

/// MPICH crashes (4.0.2: SIGSEGV in the first MPI_T query) or aborts at exit (5.0.2: an
/// assertion in `mpir_pmi.c`) when MPI_T is first initialised after `MPI_Finalize`.
/// [`Mpit::init`](crate::Mpit::init) refuses there. Intel MPI 2021.18 runs that ordering.
pub static MPICH_MPI_T_AFTER_FINALIZE: Quirk = Quirk {
    id: "mpich-mpi-t-first-init-after-finalize",
    vendor: Vendor::Mpich,
    versions: since(4, 0),
    summary: "MPICH segfaults (4.0.2) or aborts at exit (5.0.2) when MPI_T is first initialised \
              after MPI_Finalize: create a token before MPI_Finalize",
};

/// Open MPI 4.1 reads freed memory in `MPI_T_cvar_read` of the integer variables of UCX and
/// OFI components that `MPI_Init` closes while their variables stay registered (a segfault on
/// every read after `MPI_Init`). [`CvarHandle`](crate::CvarHandle) reads and writes refuse them then.
pub static OPEN_MPI_CLOSED_COMPONENT_CVARS: Quirk = Quirk {
    id: "open-mpi-closed-component-cvar-read",
    vendor: Vendor::OpenMpi,
    versions: between((4, 0), (5, 0)),
    summary: "Open MPI 4.1 reads freed memory (and may segfault) reading this UCX or OFI \
              component variable after MPI_Init",
};

/// Open MPI 5.0 registers `mpi_ft_verbose` with a local variable of `ompi_mpi_register_params`
/// as its storage, so the handle points into a stack frame that is gone: a read returns
/// whatever the stack holds there now (21911, 32540, ... measured; the registered value is 0),
/// and a write stores into another frame of the thread that initialised MPI, or into a freed
/// thread stack. [`CvarHandle`](crate::CvarHandle) reads and writes refuse it. The same code
/// makes `mpi_ft_enable` a local in builds without ULFM (scope `CONSTANT` there), refused too.
pub static OPEN_MPI_DANGLING_CVAR_STORAGE: Quirk = Quirk {
    id: "open-mpi-dangling-cvar-storage",
    vendor: Vendor::OpenMpi,
    versions: since(5, 0),
    summary: "Open MPI 5.0 gives this control variable a dead stack slot as storage: reads \
              return garbage and writes corrupt a stack",
};

/// Open MPI 4.1 segfaults (in libpsm2's `psm2_mq_get_stats`) allocating a handle for the PSM2
/// MTL's performance variables (`mtl_psm2_*`) when that component is not in use.
pub static OPEN_MPI_PSM2_PVAR_HANDLES: Quirk = Quirk {
    id: "open-mpi-psm2-pvar-handle-alloc",
    vendor: Vendor::OpenMpi,
    versions: between((4, 0), (5, 0)),
    summary: "Open MPI 4.1 segfaults allocating handles for the PSM2 MTL's performance variables",
};

/// Open MPI 4.1 (MPI-3.1) aborts the process on `MPI_Info_create` before `MPI_Init` or after
/// `MPI_Finalize` (MPI-3 allowed info objects only in between; MPI-4 at any time). Open MPI
/// 5.0.11, also MPI-3.1, creates and frees them before `MPI_Init` (measured by
/// `examples/conformance/tests/quirks.rs`).
pub static OPEN_MPI_INFO_OUTSIDE_INIT: Quirk = Quirk {
    id: "open-mpi-info-outside-init",
    vendor: Vendor::OpenMpi,
    versions: between((4, 0), (5, 0)),
    summary: "Open MPI 4.1 aborts the process on info objects outside MPI_Init..MPI_Finalize \
              (MPI-3 allowed them only in between)",
};

/// MPICH never initialises an event type's `enumtype` (`MPIR_T_register_event` has no such
/// parameter and the structure is malloc'ed), so `MPI_T_event_get_info` returns garbage there
/// and `MPI_T_enum_get_info` on it segfaults. The event type's enumeration is reported as none.
pub static MPICH_EVENT_ENUMTYPE: Quirk = Quirk {
    id: "mpich-event-enumtype-uninitialised",
    vendor: Vendor::Mpich,
    versions: since(4, 0),
    summary: "MPICH leaves event types' enumtype uninitialised (using it segfaults): reported as \
              no enumeration",
};

/// MPICH raises `unexp_message_dequeued` with a data pointer computed from a request that is
/// still NULL (`&MPIDIG_REQUEST(req, ...)` before `req = curr`): reading the event's data
/// (`MPI_T_event_read`, `MPI_T_event_copy`) segfaults inside MPICH. The read is refused; the
/// event, its timestamp and source are still delivered.
pub static MPICH_DEQUEUED_EVENT_DATA: Quirk = Quirk {
    id: "mpich-unexp-message-dequeued-data",
    vendor: Vendor::Mpich,
    versions: since(4, 0),
    summary: "MPICH raises unexp_message_dequeued with a data pointer into a NULL request: \
              reading its elements segfaults inside MPICH",
};

/// MPICH raises events by walking each event type's list of registrations without a lock
/// (`MPIR_T_event_instance`, `src/mpi_t/events_impl.c`), while `MPI_T_event_handle_free` on
/// another thread unlinks a registration, calls the free callback at once (an invocation may
/// still be running: MPI-4.1 §16.3.8.4 wants the callback only once none can follow) and frees
/// it under the walker; `MPI_T_event_register_callback` stores the function before its
/// `user_data`. With receives on a second thread at `MPI_THREAD_MULTIPLE`, MPICH 4.0.2 crashed
/// in 3 of 6 runs of a registration churn. Where MPI provides `MPI_THREAD_MULTIPLE`, mpit-safe
/// never frees an MPICH registration: a dropped [`Registration`](crate::Registration) is
/// retired (its callbacks removed, its closures released once no invocation is in flight,
/// counted by the trampoline) and its MPICH registration reused by the next registration of
/// the same event type and object. What remains is MPICH's own: a registration that is new
/// (not reused) is linked before its callbacks are zeroed.
pub static MPICH_EVENT_REGISTRATION_RACE: Quirk = Quirk {
    id: "mpich-event-registration-race",
    vendor: Vendor::Mpich,
    versions: since(4, 0),
    summary: "MPICH frees an event registration (and calls its free callback) while another \
              thread may be running its callback: registrations are retired and reused, \
              never freed, at MPI_THREAD_MULTIPLE",
};

/// MPICH 5.0.2's ABI library (`libmpi_abi.so.1`) segfaults in `MPI_T_pvar_start`, `_stop` and
/// `_reset` of `MPI_T_PVAR_ALL_HANDLES` (the ABI's `(MPI_T_pvar_handle)1`), which its native
/// library runs; a C program built with its `mpicc_abi` crashes the same way, and Intel MPI's
/// ABI library runs it. A guard of the ABI build only: [`Session::start_all`](crate::Session::start_all),
/// `stop_all` and `reset_all` refuse there.
#[cfg(mpit_abi)]
pub static MPICH_ABI_PVAR_ALL_HANDLES: Quirk = Quirk {
    id: "mpich-abi-pvar-all-handles",
    vendor: Vendor::Mpich,
    versions: since(5, 0),
    summary: "MPICH's ABI library segfaults starting, stopping or resetting \
              MPI_T_PVAR_ALL_HANDLES (its native library does not)",
};

/// Every guard of this crate, for listing and for tests.
pub static QUIRKS: &[&Quirk] = &[
    #[cfg(mpit_abi)]
    &MPICH_ABI_PVAR_ALL_HANDLES,
    &MPICH_MPI_T_AFTER_FINALIZE,
    &OPEN_MPI_CLOSED_COMPONENT_CVARS,
    &OPEN_MPI_DANGLING_CVAR_STORAGE,
    &OPEN_MPI_PSM2_PVAR_HANDLES,
    &OPEN_MPI_INFO_OUTSIDE_INIT,
    &MPICH_EVENT_ENUMTYPE,
    &MPICH_DEQUEUED_EVENT_DATA,
    &MPICH_EVENT_REGISTRATION_RACE,
];

/// Whether `quirk` applies to the loaded library.
pub fn applies(quirk: &Quirk) -> bool {
    quirk.applies_to(&implementation())
}

/// `Err(KnownCrash(quirk))` where it applies, `Ok` elsewhere.
pub(crate) fn guard(quirk: &'static Quirk) -> Result<()> {
    if applies(quirk) {
        Err(Error::KnownCrash(quirk))
    } else {
        Ok(())
    }
}
