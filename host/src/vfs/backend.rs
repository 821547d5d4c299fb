//! The one trait every storage backend implements, and the types it speaks.

use std::fmt;
use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::time::SystemTime;

use bytes::Bytes;
use futures::Stream;

/// A stream of a document's bytes, for downloads and searches.
pub type ByteStream = Pin<Box<dyn Stream<Item = io::Result<Bytes>> + Send>>;

/// Whether a path is a document or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A document.
    File,
    /// A directory.
    Directory,
}

/// Metadata of one path in a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// Document or directory.
    pub kind: Kind,
    /// Size in bytes; 0 for directories.
    pub size: u64,
    /// Last modification, when known.
    pub modified: Option<SystemTime>,
    /// Permission bits (`0o7777` at most), when the backend has them (a
    /// local directory does; S3 and memory do not).
    pub mode: Option<u32>,
    /// The inode and its times, when the backend has them (a local
    /// directory does; S3 and memory do not).
    pub inode: Option<Inode>,
}

/// What a local filesystem keeps of a path besides its size, modification
/// time and mode: `ls -i`, `find -atime` and `stat %z` show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inode {
    /// The inode number.
    pub number: u64,
    /// The device it is on (`st_dev`).
    pub device: u64,
    /// Last access.
    pub accessed: Option<SystemTime>,
    /// Last status change.
    pub changed: Option<SystemTime>,
    /// Creation (birth), where the filesystem records it.
    pub created: Option<SystemTime>,
}

/// The permission bits shown for a document where the backend has none.
pub const DEFAULT_FILE_MODE: u32 = 0o644;
/// The permission bits shown for a directory where the backend has none.
pub const DEFAULT_DIR_MODE: u32 = 0o755;

impl Meta {
    /// The permission bits to show: the backend's, else
    /// [`DEFAULT_FILE_MODE`] or [`DEFAULT_DIR_MODE`].
    pub fn mode_or_default(&self) -> u32 {
        self.mode.unwrap_or(match self.kind {
            Kind::File => DEFAULT_FILE_MODE,
            Kind::Directory => DEFAULT_DIR_MODE,
        })
    }
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's name within the directory.
    pub name: String,
    /// Its metadata.
    pub meta: Meta,
}

/// A directory listing, in the backend's order: readdir order for a local
/// directory, name order for S3 and memory; nested mounts last.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    /// At most the requested number of entries, the first ones in that order.
    pub entries: Vec<Entry>,
    /// True when the directory has more entries than were returned.
    pub truncated: bool,
}

/// A failure a script (or a download) sees. Messages name virtual paths
/// only, never a host path or a backend's internals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FsError {
    /// Nothing exists at the path.
    #[error("{0}: no such file or directory")]
    NotFound(String),
    /// A component that must be a directory is a file.
    #[error("{0}: not a directory")]
    NotADirectory(String),
    /// A directory where a document was expected.
    #[error("{0}: is a directory")]
    IsADirectory(String),
    /// A malformed path.
    #[error("invalid path: {0}")]
    InvalidPath(String),
    /// The path may not be read (for example a symlink out of its mount).
    #[error("{0}: permission denied")]
    Denied(String),
    /// The backend failed, or the input was refused.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// Storage behind a mount: a local directory, an S3 bucket, memory.
///
/// Paths given to a backend are relative to its mount and already
/// normalised by [`crate::vfs::resolve`]: `""` is the mount's root, and
/// components are joined by `/`, none empty, `.` or `..`. A backend must
/// still make sure that nothing it serves lies outside its root (a symlink,
/// say). Errors name the relative path; the VFS rewrites them to the full
/// virtual path.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + fmt::Debug + 'static {
    /// Metadata of a path.
    async fn stat(&self, path: &str) -> Result<Meta, FsError>;

    /// The first `limit` entries of a directory by name.
    async fn list(&self, path: &str, limit: usize) -> Result<Listing, FsError>;

    /// The bytes of a document in `range`, clamped to its end.
    async fn read_range(&self, path: &str, range: Range<u64>) -> Result<Bytes, FsError>;

    /// A stream of the bytes of a document in `range`, clamped to its end,
    /// read as the stream is polled (never the whole document at once).
    async fn open(&self, path: &str, range: Range<u64>) -> Result<ByteStream, FsError>;

    /// The same backend read from the calling thread, when it can be (a
    /// local directory): a search over thousands of documents then reads
    /// each on the thread that searches it, instead of handing every
    /// document from the async threads to a blocking one. `None` (the
    /// default) for backends that only read asynchronously.
    fn blocking(&self) -> Option<&dyn BlockingRead> {
        None
    }
}

/// Reads a [`Backend`] can serve on the calling thread, which may block:
/// callers run them on a blocking thread, never on an async one.
pub trait BlockingRead: Send + Sync {
    /// A reader of a document's bytes in `range`, clamped to its end, as
    /// [`Backend::open`] streams them.
    fn open_blocking(
        &self,
        path: &str,
        range: Range<u64>,
    ) -> Result<Box<dyn io::Read + Send>, FsError>;

    /// What [`Backend::list`] lists.
    fn list_blocking(&self, path: &str, limit: usize) -> Result<Listing, FsError>;
}

impl FsError {
    /// The same error about another path (used to turn a backend's relative
    /// path into the virtual one).
    pub fn with_path(self, path: &str) -> FsError {
        match self {
            FsError::NotFound(_) => FsError::NotFound(path.to_owned()),
            FsError::NotADirectory(_) => FsError::NotADirectory(path.to_owned()),
            FsError::IsADirectory(_) => FsError::IsADirectory(path.to_owned()),
            FsError::InvalidPath(_) => FsError::InvalidPath(path.to_owned()),
            FsError::Denied(_) => FsError::Denied(path.to_owned()),
            e @ FsError::Unavailable(_) => e,
        }
    }

    /// Maps an I/O error about `path` to what the script may see: the kind,
    /// never the host's message (which could name host paths).
    pub fn from_io(e: &io::Error, path: &str) -> FsError {
        use io::ErrorKind as K;
        match e.kind() {
            K::NotFound => FsError::NotFound(path.to_owned()),
            K::NotADirectory => FsError::NotADirectory(path.to_owned()),
            K::IsADirectory => FsError::IsADirectory(path.to_owned()),
            K::PermissionDenied => FsError::Denied(path.to_owned()),
            K::InvalidFilename | K::InvalidInput => FsError::InvalidPath(path.to_owned()),
            _ => match e.raw_os_error() {
                // ELOOP: too many symlinks, or one where none is allowed.
                Some(40) => FsError::Denied(path.to_owned()),
                _ => FsError::Unavailable(format!("{path}: the backend failed to read it")),
            },
        }
    }
}

/// Clamps `range` to a document of `size` bytes.
pub fn clamp(range: &Range<u64>, size: u64) -> Range<u64> {
    let start = range.start.min(size);
    start..range.end.clamp(start, size)
}
