//! What the installed MPI offers of the tool interface, in one place: which optional parts its
//! `mpi.h` declares (fixed at build time) and which library is loaded (at run time).
//!
//! The safe API is the same on every MPI: a part the header lacks answers
//! [`Error::NotSupported`](mpit_core::Error::NotSupported) at run time instead of being absent
//! at compile time, so one application source builds everywhere and asks [`features`] (or
//! matches the error) where it wants to know beforehand.

#![forbid(unsafe_code)]

use mpit_core::Implementation;
use mpit_core::error::Feature;
use mpit_sys as sys;

/// What the installed MPI offers of the tool interface ([`features`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Features {
    /// The library loaded in this process ([`crate::implementation()`]).
    pub implementation: Implementation,
    /// The MPI standard version the header declares (`MPI_VERSION`, `MPI_SUBVERSION`; 5.0 in the
    /// ABI build, whichever library is loaded: `MPI_Get_version` says what that one implements).
    pub mpi_version: (u32, u32),
    /// The MPI-4 event API: event types, sources, registrations
    /// ([`Mpit::register_event`](crate::Mpit::register_event), [`crate::Registration`]).
    pub events: bool,
    /// The binding `MPI_T_BIND_MPI_SESSION` (MPI-4.0).
    pub bind_session: bool,
    /// The error classes `MPI_T_ERR_NOT_ACCESSIBLE` and `MPI_T_ERR_NOT_SUPPORTED` (MPI-4.0).
    pub mpi4_error_classes: bool,
}

impl Features {
    /// Whether `feature` is available (calls that need it do not answer
    /// [`Error::NotSupported`](mpit_core::Error::NotSupported)).
    pub fn supports(&self, feature: Feature) -> bool {
        match feature {
            Feature::Events => self.events,
            // A feature newer than this crate's knowledge: not offered.
            _ => false,
        }
    }
}

/// What the installed MPI offers of the tool interface. Callable at any time, before or
/// without `MPI_T_init_thread`.
///
/// ```
/// let f = mpit_safe::features();
/// println!("{:?} implements MPI {}.{}", f.implementation, f.mpi_version.0, f.mpi_version.1);
/// if !f.events {
///     // Every event call answers Error::NotSupported here (Open MPI 4.1 and 5.0).
/// }
/// ```
pub fn features() -> Features {
    Features {
        implementation: crate::implementation(),
        mpi_version: (
            sys::consts::MPI_VERSION as u32,
            sys::consts::MPI_SUBVERSION as u32,
        ),
        events: sys::consts::HAS_EVENTS,
        bind_session: sys::consts::HAS_BIND_SESSION,
        mpi4_error_classes: sys::consts::MPI_T_ERR_NOT_SUPPORTED.is_some()
            && sys::consts::MPI_T_ERR_NOT_ACCESSIBLE.is_some(),
    }
}

/// The command that starts ranks of the MPI this crate was built against, as words: the
/// command line in `$MPIEXEC` when set (it may carry arguments, e.g.
/// `mpiexec --oversubscribe`), else the launcher installed beside the build's `mpicc`
/// ([`BUILD_MPIEXEC`](mpit_sys::consts::BUILD_MPIEXEC)). `None` when neither is known.
///
/// Tests and tools use it rather than the first `mpiexec` on `PATH`, which on a machine with
/// several MPIs may start ranks of another implementation than the one linked in.
///
/// ```no_run
/// let mut words = mpit_safe::launcher().expect("no launcher: set MPIEXEC");
/// let mut cmd = std::process::Command::new(words.remove(0));
/// cmd.args(words).args(["-n", "2", "./my-mpi-program"]);
/// ```
pub fn launcher() -> Option<Vec<String>> {
    let line = std::env::var("MPIEXEC")
        .ok()
        .filter(|l| !l.trim().is_empty())
        .unwrap_or_else(|| sys::consts::BUILD_MPIEXEC.to_owned());
    let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
    (!words.is_empty()).then_some(words)
}
