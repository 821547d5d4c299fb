//! Every limit vfsbox enforces, with its default, in one place.
//!
//! The server's [`Limits`] come from the `[limits]` table of the config file
//! (or the defaults). A request may ask for lower per-run limits with
//! [`LimitsRequest`]; asking for more than the server allows is refused.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units;

/// The limits of a server, and of each run.
///
/// ```toml
/// [limits]
/// live_scripts = 4
/// deadline = "60s"
/// memory = "64MiB"
/// document_reads = 400
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Scripts live at once in the process; one more is refused (`busy`).
    pub live_scripts: u32,
    /// Scripts live at once per tenant; one more is refused (`tenant_busy`).
    pub live_scripts_per_tenant: u32,
    /// Wall-clock time a run may take, host calls included.
    #[serde(with = "units::duration")]
    pub deadline: Duration,
    /// Fuel a run may consume (roughly one unit per WebAssembly instruction).
    pub fuel: u64,
    /// Linear memory of all memories of a run together.
    #[serde(with = "units::size")]
    pub memory: u64,
    /// Distinct documents a run may read with `fs.read`/`fs.read-range`.
    pub document_reads: u64,
    /// Bytes a run may read with `fs.read`/`fs.read-range`.
    #[serde(with = "units::size")]
    pub bytes_read: u64,
    /// Files the searches of a run may scan; past it, results are partial.
    pub scan_files: u64,
    /// Bytes the searches of a run may scan; past it, results are partial.
    #[serde(with = "units::size")]
    pub scan_bytes: u64,
    /// Entries one directory listing returns; past it, `truncated`.
    pub list_entries: u64,
    /// Captured standard output per run; past it, cut and flagged.
    #[serde(with = "units::size")]
    pub stdout: u64,
    /// Captured standard error per run; past it, cut and flagged.
    #[serde(with = "units::size")]
    pub stderr: u64,
    /// Size of an uploaded script.
    #[serde(with = "units::size")]
    pub upload: u64,
    /// Time a client has to send an uploaded script, which holds a slot
    /// while it arrives; past it, `408`.
    #[serde(with = "units::duration")]
    pub upload_timeout: Duration,
    /// Size of a `vfs-sh` script text.
    #[serde(with = "units::size")]
    pub sh_script: u64,
    /// Text of one MCP tool result; past it, cut and flagged with a hint
    /// how to narrow the call (a call may ask for less).
    #[serde(with = "units::size")]
    pub tool_result: u64,
}

/// A path or grep pattern longer than this is refused.
pub const MAX_PATH_BYTES: usize = 4096;
/// A grep pattern longer than this is refused.
pub const MAX_PATTERN_BYTES: usize = 4096;
/// A grep with more roots than this is refused.
pub const MAX_GREP_ROOTS: usize = 64;

/// Fuel a script gets unless it asks for less: so much that the deadline
/// rules. A tight loop burns about 7.6 × 10^9 units a second on this
/// project's reference machine (2 cores of a shared VM), so this lasts about
/// 20 minutes there, and far past the 60 s deadline on any machine; the old
/// default, 10^10, ended a CPU-bound script after one to two seconds. Ask
/// for less fuel to cap compute deterministically.
pub const DEFAULT_FUEL: u64 = 10_000_000_000_000;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            live_scripts: 4,
            live_scripts_per_tenant: 4,
            deadline: Duration::from_secs(60),
            fuel: DEFAULT_FUEL,
            memory: 64 << 20,
            document_reads: 400,
            bytes_read: 256 << 20,
            scan_files: 10_000,
            scan_bytes: 1 << 30,
            list_entries: 10_000,
            stdout: 1 << 20,
            stderr: 1 << 20,
            upload: 16 << 20,
            upload_timeout: Duration::from_secs(30),
            sh_script: 4096,
            tool_result: 100_000,
        }
    }
}

/// A limit a run can run out of. The name is what reports and errors call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The wall-clock deadline.
    Deadline,
    /// Fuel.
    Fuel,
    /// Linear memory.
    Memory,
    /// The number of distinct documents read.
    DocumentReads,
    /// The bytes read.
    BytesRead,
}

impl Limit {
    /// Every limit, for metrics and docs.
    pub const ALL: [Limit; 5] = [
        Limit::Deadline,
        Limit::Fuel,
        Limit::Memory,
        Limit::DocumentReads,
        Limit::BytesRead,
    ];

    /// The name used in reports, errors and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Deadline => "deadline",
            Limit::Fuel => "fuel",
            Limit::Memory => "memory",
            Limit::DocumentReads => "document_reads",
            Limit::BytesRead => "bytes_read",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Lower per-run limits that a request may ask for. Unset fields keep the
/// server's value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "runtime", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LimitsRequest {
    /// Wall-clock deadline in milliseconds.
    pub deadline_ms: Option<u64>,
    /// Fuel.
    pub fuel: Option<u64>,
    /// Linear memory in bytes.
    pub memory_bytes: Option<u64>,
    /// Distinct documents read.
    pub document_reads: Option<u64>,
    /// Bytes read.
    pub bytes_read: Option<u64>,
    /// Files scanned by searches.
    pub scan_files: Option<u64>,
    /// Bytes scanned by searches.
    pub scan_bytes: Option<u64>,
}

/// A request asked for more than the server allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("limit {name} = {requested} is above the server's maximum of {allowed}")]
pub struct LimitTooHigh {
    /// The field of [`LimitsRequest`].
    pub name: &'static str,
    /// What the request asked for.
    pub requested: u64,
    /// The server's maximum.
    pub allowed: u64,
}

impl Limits {
    /// These limits lowered as the request asks; an error names the first
    /// limit asked above the server's.
    pub fn lowered(&self, req: &LimitsRequest) -> Result<Limits, LimitTooHigh> {
        fn lower(
            name: &'static str,
            requested: Option<u64>,
            allowed: u64,
        ) -> Result<u64, LimitTooHigh> {
            match requested {
                None => Ok(allowed),
                Some(r) if r <= allowed => Ok(r),
                Some(requested) => Err(LimitTooHigh {
                    name,
                    requested,
                    allowed,
                }),
            }
        }
        let deadline_ms = u64::try_from(self.deadline.as_millis()).unwrap_or(u64::MAX);
        Ok(Limits {
            deadline: Duration::from_millis(lower("deadline_ms", req.deadline_ms, deadline_ms)?),
            fuel: lower("fuel", req.fuel, self.fuel)?,
            memory: lower("memory_bytes", req.memory_bytes, self.memory)?,
            document_reads: lower("document_reads", req.document_reads, self.document_reads)?,
            bytes_read: lower("bytes_read", req.bytes_read, self.bytes_read)?,
            scan_files: lower("scan_files", req.scan_files, self.scan_files)?,
            scan_bytes: lower("scan_bytes", req.scan_bytes, self.scan_bytes)?,
            ..self.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let l = Limits::default();
        assert_eq!(l.live_scripts, 4);
        assert_eq!(l.deadline, Duration::from_secs(60));
        assert_eq!(l.fuel, 10_000_000_000_000);
        assert_eq!(l.memory, 64 * 1024 * 1024);
        assert_eq!(l.document_reads, 400);
        assert_eq!(l.bytes_read, 256 * 1024 * 1024);
        assert_eq!((l.scan_files, l.scan_bytes), (10_000, 1 << 30));
        assert_eq!(l.list_entries, 10_000);
        assert_eq!((l.stdout, l.stderr), (1 << 20, 1 << 20));
        assert_eq!(l.upload, 16 << 20);
        assert_eq!(l.sh_script, 4096);
    }

    #[test]
    fn a_request_may_lower_limits() {
        let req = LimitsRequest {
            deadline_ms: Some(500),
            memory_bytes: Some(1 << 20),
            ..Default::default()
        };
        let l = Limits::default().lowered(&req).expect("lower is allowed");
        assert_eq!(l.deadline, Duration::from_millis(500));
        assert_eq!(l.memory, 1 << 20);
        assert_eq!(l.fuel, Limits::default().fuel);
    }

    #[test]
    fn a_request_may_not_raise_limits() {
        let req = LimitsRequest {
            document_reads: Some(401),
            ..Default::default()
        };
        let err = Limits::default()
            .lowered(&req)
            .expect_err("raise is refused");
        assert_eq!(err.name, "document_reads");
        assert_eq!((err.requested, err.allowed), (401, 400));
    }

    #[test]
    fn reads_limits_from_toml_with_units() {
        let l: Limits = toml::from_str("deadline = \"5s\"\nmemory = \"32MiB\"\nfuel = 1000")
            .expect("valid limits");
        assert_eq!(l.deadline, Duration::from_secs(5));
        assert_eq!(l.memory, 32 << 20);
        assert_eq!(l.fuel, 1000);
        assert_eq!(l.document_reads, 400);
        let err = toml::from_str::<Limits>("dedline = \"5s\"").expect_err("unknown field");
        assert!(err.to_string().contains("dedline"), "{err}");
    }
}
