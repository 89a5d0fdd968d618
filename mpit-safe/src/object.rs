//! Binding variables to MPI objects (MPI-4.1 §16.3.2).
//!
//! A control or performance variable with a [`Bind`] other than [`Bind::NoObject`] is used
//! through a handle allocated for one object of that kind. [`MpiObject`] is what can be bound:
//! rsmpi's communicators, groups, datatypes, operations, requests and messages, [`NoObject`] for
//! unbound variables, and [`RawObject`] for raw handles from elsewhere (made under a contract
//! the caller upholds).

#![forbid(unsafe_code)]

use mpit_core::{Bind, Error, Result};

// Defined in the fence with its constructors and the rsmpi objects' conversions: making one
// from a raw handle carries a contract the caller upholds.
pub use crate::ffi::RawObject;

impl RawObject {
    /// Checks the object's kind against a variable's binding ([`Error::BindMismatch`]).
    pub(crate) fn check(&self, expected: Bind) -> Result<()> {
        let got = self.bind();
        if got == expected {
            Ok(())
        } else {
            Err(Error::BindMismatch { expected, got })
        }
    }
}

/// Something a variable can be bound to: it names its kind and its raw handle.
///
/// Implemented for rsmpi's objects, [`NoObject`] and [`RawObject`]. Handles allocated for an
/// object borrow it, so the object cannot be dropped (freed) while they live.
pub trait MpiObject {
    /// The object as MPI_T sees it.
    fn raw_object(&self) -> RawObject;
}

/// The "object" of a variable bound to no object ([`Bind::NoObject`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObject;

impl MpiObject for NoObject {
    fn raw_object(&self) -> RawObject {
        RawObject::NO_OBJECT
    }
}

impl MpiObject for RawObject {
    fn raw_object(&self) -> RawObject {
        *self
    }
}
