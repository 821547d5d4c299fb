//! Downloads and path resolution for callers outside a script (the HTTP
//! API): the same path resolution and audit as scripts, and documents
//! streamed, never buffered whole.

use std::ops::Range;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{ByteStream, FsError, Kind, Meta, VPath, Vfs, resolve_bytes};
use crate::audit::{AuditError, AuditLog, Caller, Event};

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The absolute, normalised path.
    pub path: VPath,
    /// Its metadata.
    pub meta: Meta,
}

impl Resolved {
    /// An entity tag that changes when the document's size or modification
    /// time does.
    pub fn etag(&self) -> String {
        let nanos = self
            .meta
            .modified
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        format!("\"{:x}-{:x}\"", self.meta.size, nanos)
    }

    /// The modification time, when known.
    pub fn modified(&self) -> Option<SystemTime> {
        self.meta.modified
    }
}

/// A download that cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// The path is bad, missing, a directory or not allowed.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The audit record could not be written, so nothing is sent.
    #[error(transparent)]
    Audit(#[from] AuditError),
}

/// Resolves raw path bytes (such as a percent-decoded URL path) against `/`
/// and stats what they name.
pub async fn resolve_path(vfs: &Vfs, raw: &[u8]) -> Result<Resolved, FsError> {
    let path =
        resolve_bytes(&VPath::root(), raw).map_err(|e| FsError::InvalidPath(e.to_string()))?;
    let meta = vfs.stat(&path).await?;
    Ok(Resolved { path, meta })
}

/// Opens a resolved document for download of `range` (already within its
/// size), after recording the download in the audit log.
pub async fn download(
    vfs: &Vfs,
    audit: &AuditLog,
    caller: &Caller,
    doc: &Resolved,
    range: Range<u64>,
) -> Result<ByteStream, DownloadError> {
    if doc.meta.kind == Kind::Directory {
        return Err(FsError::IsADirectory(doc.path.to_string()).into());
    }
    let body = vfs.open(&doc.path, range.clone()).await?;
    audit.record(
        caller,
        &Event::Download {
            path: doc.path.as_str(),
            size: range.end - range.start,
        },
    )?;
    Ok(body)
}
