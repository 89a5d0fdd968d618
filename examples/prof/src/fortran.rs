//! The Fortran side, where the MPI's Fortran bindings bypass the C `MPI_` functions (Open
//! MPI's `libmpi_mpifh` calls `PMPI_Send` from `mpi_send_`): the generated Fortran wrappers
//! find the bindings' profiling entries (`pmpi_send_`) with `dlsym(RTLD_NEXT)`, as the
//! library is not linked against the Fortran bindings (C programs do not load them).

use std::ffi::{CStr, c_void};
use std::io::Write as _;

use crate::next::Symbol;

/// The next definition of a function after this library, found once.
pub(crate) struct Next(Symbol);

impl Next {
    /// The next definition of `name`.
    pub(crate) const fn new(name: &'static CStr) -> Next {
        Next(Symbol::new(name))
    }

    /// Its address. A Fortran program calls this only through the bindings' own entry, so
    /// the bindings are loaded; if the symbol is missing anyway (bindings of another MPI),
    /// the process stops with a message rather than return without making the call.
    pub(crate) fn get(&self) -> *mut c_void {
        let p = self.0.get();
        if p.is_null() {
            let _ = writeln!(
                std::io::stderr(),
                "mpit-prof: {} is not in the MPI's Fortran bindings loaded here (built for \
                 another MPI?); stopping",
                self.0.name.to_string_lossy()
            );
            std::process::abort();
        }
        p
    }
}
