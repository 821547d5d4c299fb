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
//! `runtime` feature, and S3 (`object_store` and its HTTP and TLS clients)
//! behind `s3`, which `runtime` turns on. Without them the crate is the
//! path resolution, VFS, config and limits alone: what the fuzz targets
//! build, without an HTTP or TLS stack.
#![deny(missing_docs)]

pub mod audit;
pub mod config;
pub mod demo;
#[cfg(feature = "runtime")]
pub mod http;
#[cfg(feature = "runtime")]
mod imports;
pub mod limits;
// Without the runtime only the fuzz target reads the parsed arguments (the
// MCP handler that uses every field needs the runtime).
#[cfg_attr(not(feature = "runtime"), allow(dead_code))]
mod mcp_input;
#[cfg(feature = "runtime")]
pub mod python;
pub mod report;
#[cfg(feature = "runtime")]
pub mod runtime;
#[cfg(feature = "runtime")]
pub mod sh;
#[cfg(feature = "runtime")]
pub mod shared;
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

/// Entry points for the fuzz targets: the input parsing of MCP calls,
/// without the runtime.
#[doc(hidden)]
pub mod fuzzing {
    /// Parses `arguments` (JSON) as the arguments of `tool`, and windows
    /// `document` as `read` would; never panics, whatever the input.
    pub fn mcp_call(tool: &str, arguments: &[u8], document: &[u8], cap: usize) -> bool {
        let Ok(serde_json::Value::Object(map)) = serde_json::from_slice(arguments) else {
            return false;
        };
        let parsed = crate::mcp_input::parse(tool, Some(map));
        if let Ok(crate::mcp_input::ToolArgs::Read(a)) = &parsed {
            let text = String::from_utf8_lossy(document);
            let w = crate::mcp_input::lines(&text, a.offset, a.limit);
            let _ = crate::mcp_input::cut(&w.text, cap);
        }
        parsed.is_ok()
    }
}
