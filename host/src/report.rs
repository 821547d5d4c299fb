//! How a run ends: the outcome, the output captured until then, and the
//! resources used. Every run, whatever its ending, produces one [`Report`].

use serde::Serialize;

use crate::limits::Limit;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The script exited, like a process, with this code.
    Exited {
        /// 0 for success.
        exit_code: i32,
    },
    /// The script trapped: a panic, an `unreachable`, a stack overflow, a
    /// failing host call.
    Trapped {
        /// What the trap says.
        message: String,
    },
    /// A limit ran out and the host ended the script.
    BudgetExceeded {
        /// Which limit.
        limit: Limit,
        /// How much had been used, in the limit's unit (ms, fuel units,
        /// bytes, documents).
        used: u64,
        /// The allowance, in the same unit.
        allowed: u64,
    },
}

/// The typed error a host puts in a trap when a limit runs out. The runtime
/// recognises the limit by downcasting to this type, never by the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(*.limit, *.used, *.allowed))]
pub struct LimitExceeded {
    /// Which limit.
    pub limit: Limit,
    /// How much had been used.
    pub used: u64,
    /// The allowance.
    pub allowed: u64,
}

/// The one-line explanation of a spent limit, for reports and the CLI.
pub fn describe(limit: Limit, used: u64, allowed: u64) -> String {
    match limit {
        Limit::Deadline => format!("script ran past its deadline of {allowed} ms"),
        Limit::Fuel => format!("script used all of its {allowed} units of fuel"),
        Limit::Memory => {
            format!("script needed {used} bytes of memory; the limit is {allowed} bytes")
        }
        Limit::DocumentReads => format!(
            "script read more than {allowed} documents; scope it to a subdirectory or use search"
        ),
        Limit::BytesRead => {
            format!("script read more than {allowed} bytes of documents; read ranges or use search")
        }
    }
}

/// Resources a run used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "runtime", derive(utoipa::ToSchema))]
pub struct Usage {
    /// Wall-clock time the script ran (compilation, when needed, excluded).
    pub elapsed_ms: u64,
    /// Fuel consumed.
    pub fuel_consumed: u64,
    /// Distinct documents read.
    pub document_reads: u64,
    /// Bytes read from documents.
    pub bytes_read: u64,
    /// Files scanned by searches.
    pub files_scanned: u64,
    /// Bytes scanned by searches.
    pub bytes_scanned: u64,
    /// Peak linear memory, all memories together.
    pub peak_memory_bytes: u64,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// How it ended.
    pub outcome: Outcome,
    /// Standard output, up to the cap.
    pub stdout: Vec<u8>,
    /// Standard error, up to the cap.
    pub stderr: Vec<u8>,
    /// Whether standard output was cut at the cap.
    pub stdout_truncated: bool,
    /// Whether standard error was cut at the cap.
    pub stderr_truncated: bool,
    /// The working directory the run ended in (scripts may change it).
    pub cwd: String,
    /// What it used.
    pub usage: Usage,
}

impl Report {
    /// The exit code, when the script exited.
    pub fn exit_code(&self) -> Option<i32> {
        match self.outcome {
            Outcome::Exited { exit_code } => Some(exit_code),
            _ => None,
        }
    }

    /// The limit that ended the run, if one did.
    pub fn limit(&self) -> Option<Limit> {
        match self.outcome {
            Outcome::BudgetExceeded { limit, .. } => Some(limit),
            _ => None,
        }
    }

    /// Standard output as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Standard error as text (invalid UTF-8 replaced).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}
