//! vfsbox runs untrusted scripts for AI agents over a read-only virtual
//! filesystem of documents.
//!
//! A script is a WebAssembly component (a WASI 0.2 command). Each run gets
//! its own wasmtime store with fuel, an epoch-interruption wall-clock
//! deadline and a memory limiter, and reads documents only through the
//! `vfsbox:script` imports (`fs`, `search`, `budget`), each of which charges
//! the run's budget and waits only for the time the run has left. At most a
//! fixed number of scripts are live per process; one more is refused at
//! once, never queued.
//!
//! The crate is organised as:
//!
//! - [`runtime`]: the engine, admission gate, compile cache and
//!   [`Runtime::run`], which turns a script into a [`Report`];
//! - [`vfs`]: path resolution, mounts and backends, and grep;
//! - [`limits`]: every limit and its default;
//! - [`audit`]: the JSON-lines audit log;
//! - [`http`]: the HTTP API, built by [`http::app`];
//! - [`config`]: the config file, tenants and their mounts;
//! - [`testkit`]: run a built script from a script author's own tests;
//! - [`sh`]: `vfs-sh`, the built-in shell for text scripts;
//! - `imports` (private): the host side of the WIT world in `wit/`.
//!
//! Everything that needs wasmtime or the HTTP stack is behind the default
//! `runtime` feature; without it the crate is the path resolution, VFS,
//! config and limits alone (what the fuzz targets build).
#![deny(missing_docs)]

pub mod audit;
pub mod config;
pub mod demo;
#[cfg(feature = "runtime")]
pub mod http;
#[cfg(feature = "runtime")]
mod imports;
pub mod limits;
pub mod report;
#[cfg(feature = "runtime")]
pub mod runtime;
#[cfg(feature = "runtime")]
pub mod sh;
#[cfg(feature = "runtime")]
pub mod testkit;
pub mod units;
pub mod vfs;

pub use audit::{AuditLog, Caller};
pub use limits::{Limit, Limits, LimitsRequest};
pub use report::{Outcome, Report, Usage};
#[cfg(feature = "runtime")]
pub use runtime::{Busy, Permit, RunError, RunSpec, Runtime, Script, Stdin};
pub use vfs::{VPath, Vfs};
