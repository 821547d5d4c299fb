//! What is left of the script's budget.
//!
//! A script that reads many documents can check [`remaining`] and stop
//! cleanly with a partial answer before the host ends it.

use std::time::Duration;

use crate::wit::vfsbox::script::budget as wit;

/// The remaining allowances of the running script, from [`remaining`].
///
/// ```no_run
/// let left = vfsbox_guest::budget::remaining();
/// if left.document_reads < 10 {
///     eprintln!("almost out of document reads");
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Remaining {
    /// Wall-clock time until the deadline.
    pub time: Duration,
    /// Fuel left, as of the last call into the host.
    pub fuel: u64,
    /// Documents that may still be read.
    pub document_reads: u64,
    /// Bytes that may still be read.
    pub bytes_read: u64,
    /// Files that searches may still scan.
    pub scan_files: u64,
    /// Bytes that searches may still scan.
    pub scan_bytes: u64,
}

/// Asks the host what is left of this script's budget.
///
/// ```no_run
/// use vfsbox_guest::{budget, fs};
///
/// let mut read = 0;
/// for entry in fs::walk("/files") {
///     let entry = entry?;
///     if entry.is_file() {
///         if budget::remaining().document_reads == 0 {
///             println!("stopping after {read} documents");
///             break;
///         }
///         fs::read(entry.path())?;
///         read += 1;
///     }
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn remaining() -> Remaining {
    let r = wit::remaining();
    Remaining {
        time: Duration::from_millis(r.time_ms),
        fuel: r.fuel,
        document_reads: r.document_reads,
        bytes_read: r.bytes_read,
        scan_files: r.scan_files,
        scan_bytes: r.scan_bytes,
    }
}
