//! The audit log: one JSON line per search, run start, run end and download.
//!
//! A record is written to the file (handed to the operating system in one
//! `write` on a file opened for appending; not `fsync`ed) before the
//! operation it records answers; if the write fails, the operation fails.
//! Nothing is dropped silently. A grep pattern is recorded only as its
//! SHA-256.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::report::{Outcome, Usage};

/// Who caused an audited operation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Caller {
    /// The tenant's name.
    pub tenant: String,
    /// The request id (`x-request-id`), or a generated one.
    pub request_id: String,
}

/// What an audit record is about.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    /// A run started.
    RunStart {
        /// `sha256:<hex>` of the script.
        script_id: &'a str,
        /// Arguments count (the arguments themselves may be sensitive).
        args: usize,
        /// The working directory.
        cwd: &'a str,
    },
    /// A run ended.
    RunEnd {
        /// `sha256:<hex>` of the script.
        script_id: &'a str,
        /// How it ended.
        #[serde(flatten)]
        outcome: &'a Outcome,
        /// What it used.
        usage: &'a Usage,
    },
    /// A run ended without a report: its caller went away (a client that
    /// disconnected) or the host failed while running it.
    RunAbandoned {
        /// `sha256:<hex>` of the script.
        script_id: &'a str,
    },
    /// A script searched documents.
    Grep {
        /// `sha256:<hex>` of the script.
        script_id: &'a str,
        /// SHA-256 of the patterns, joined by newlines; never the patterns.
        pattern_sha256: String,
        /// The roots searched.
        roots: &'a [String],
        /// Files scanned.
        files_scanned: u64,
        /// Bytes scanned.
        bytes_scanned: u64,
        /// Whether the search was cut: by the scan budget, or by the
        /// run's deadline.
        truncated: bool,
        /// Why the search did not run or did not finish, when it did not
        /// (a bad pattern, the deadline); the search itself is recorded
        /// all the same.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    },
    /// A document was downloaded.
    Download {
        /// The document's path.
        path: &'a str,
        /// Bytes sent (the range's length for a ranged download).
        size: u64,
    },
}

/// SHA-256 of grep patterns, as recorded in place of the patterns.
pub fn pattern_digest(patterns: &[String]) -> String {
    hex::encode(Sha256::digest(patterns.join("\n").as_bytes()))
}

#[derive(Serialize)]
struct Line<'a> {
    time: String,
    #[serde(flatten)]
    caller: &'a Caller,
    #[serde(flatten)]
    event: &'a Event<'a>,
}

/// The audit log could not be written; the audited operation must fail.
#[derive(Debug, thiserror::Error)]
#[error("the audit log could not be written: {0}")]
pub struct AuditError(#[from] std::io::Error);

/// Where audit records go. Cheap to clone; clones share the file.
#[derive(Clone, Default)]
pub struct AuditLog {
    file: Option<Arc<Mutex<Box<dyn Write + Send>>>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("enabled", &self.is_enabled())
            .finish()
    }
}

impl AuditLog {
    /// A log that records nothing (the CLI's local runs).
    pub fn disabled() -> AuditLog {
        AuditLog::default()
    }

    /// Appends to the file at `path`, creating it.
    pub fn open(path: &Path) -> std::io::Result<AuditLog> {
        let file: File = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(AuditLog::to_writer(file))
    }

    /// Writes records to `sink`, one `write_all` of one line each, then a
    /// `flush`. An error from either fails the audited operation.
    pub fn to_writer(sink: impl Write + Send + 'static) -> AuditLog {
        AuditLog {
            file: Some(Arc::new(Mutex::new(Box::new(sink)))),
        }
    }

    /// Whether records are written anywhere.
    pub fn is_enabled(&self) -> bool {
        self.file.is_some()
    }

    /// Writes one record as one line, and flushes it.
    pub fn record(&self, caller: &Caller, event: &Event<'_>) -> Result<(), AuditError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let line = Line {
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            caller,
            event,
        };
        let mut buf = serde_json::to_vec(&line).map_err(std::io::Error::other)?;
        buf.push(b'\n');
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        // One write call per record, on a file opened for append, so a
        // record is never interleaved with another.
        file.write_all(&buf)?;
        file.flush()?;
        Ok(())
    }
}
