//! What the workspace's integration tests share, one module per area (a `publish = false`
//! dev-dependency by path: see `Cargo.toml`).
//!
//! The packages' tests use it as `mpit-test-support = { path = "../test-support" }`. Cargo
//! strips path-only dev-dependencies when it publishes a package, so the integration tests of a
//! published package do not build from its `.crate` file; they run in the repository.

#![deny(unsafe_code)]

pub mod cc;
pub mod cli;
pub mod golden;
#[allow(unsafe_code)]
pub mod mpi;
pub mod openmpi;
pub mod process;
pub mod rows;
#[cfg(feature = "schema")]
pub mod schema;
