//! What a debugger supplies: the traits behind the callback tables.
//!
//! The DLL asks about an *image* (an executable and its libraries: symbols and types) and about
//! a *process* (a running instance: memory, rank, type sizes). A tool implements
//! [`ImageTarget`] and [`ProcessTarget`]; [`Image`](crate::Image) and
//! [`Process`](crate::Process) turn them into the `mqs_image_callbacks` and
//! `mqs_process_callbacks` tables. On Linux, [`live`](crate::live) implements both for a live
//! process.

use crate::dwarf::TypeLayout;
use crate::types::{LangCode, TargetTypeSizes};

/// An executable image, as the DLL's image callbacks see it.
pub trait ImageTarget: Send + Sync {
    /// The address of function `name` (`mqs_find_function`).
    fn find_function(&self, name: &str, lang: LangCode) -> Option<u64>;
    /// The address of variable `name` (`mqs_find_symbol`).
    fn find_symbol(&self, name: &str) -> Option<u64>;
    /// The layout of type `name` (`mqs_find_type`; `mqs_field_offset` and `mqs_sizeof`
    /// answer from the returned layout).
    fn find_type(&self, name: &str, lang: LangCode) -> Option<TypeLayout>;
}

/// A process, as the DLL's process callbacks see it.
pub trait ProcessTarget: Send + Sync {
    /// Its rank in `MPI_COMM_WORLD`, if known (`mqs_get_global_rank`; unknown is
    /// [`INVALID_PROCESS`](crate::INVALID_PROCESS)).
    fn global_rank(&self) -> Option<i32>;
    /// The sizes of its basic types (`mqs_get_type_sizes`).
    fn type_sizes(&self) -> TargetTypeSizes;
    /// Reads `buf.len()` bytes at `addr` (`mqs_fetch_data`); `false` if they cannot be read.
    fn fetch(&self, addr: u64, buf: &mut [u8]) -> bool;
    /// Converts `src` from the target's byte order to the host's (`mqs_target_to_host`); the
    /// default copies (target and host of the same byte order).
    fn target_to_host(&self, src: &[u8], dst: &mut [u8]) {
        let n = src.len().min(dst.len());
        dst[..n].copy_from_slice(&src[..n]);
    }
}
