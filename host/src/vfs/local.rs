//! A local directory, served read-only and confined to its root.
//!
//! Every open goes through `cap-std`, which resolves each path component
//! beneath the root directory handle (with `openat2(RESOLVE_BENEATH)` where
//! the kernel has it): a symlink or `..` that would lead outside the root is
//! refused by the kernel or by cap-std's own resolver, not by a string check.

use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, MetadataExt, PermissionsExt};
use futures::StreamExt;
use tokio::io::AsyncReadExt;
use tokio_util::io::ReaderStream;

use super::backend::{
    Backend, BlockingRead, ByteStream, Entry, FsError, Inode, Kind, Listing, Meta, clamp,
};

/// A directory on the host's filesystem.
#[derive(Debug, Clone)]
pub struct LocalBackend {
    root: Arc<Dir>,
}

impl LocalBackend {
    /// Serves the directory at `path`.
    pub fn open(path: &Path) -> io::Result<LocalBackend> {
        let root = Dir::open_ambient_dir(path, ambient_authority())?;
        Ok(LocalBackend {
            root: Arc::new(root),
        })
    }

    /// Runs blocking filesystem work off the async threads.
    async fn on_blocking_thread<T: Send + 'static>(
        &self,
        path: &str,
        f: impl FnOnce(&Dir, &str) -> Result<T, FsError> + Send + 'static,
    ) -> Result<T, FsError> {
        let root = self.root.clone();
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || f(&root, &path))
            .await
            .map_err(|_| FsError::Unavailable("the filesystem task failed".to_owned()))?
    }
}

/// Bytes of a document read together with its open.
const FIRST_CHUNK: u64 = 64 * 1024;

fn rel(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

fn meta(m: &Metadata) -> Option<Meta> {
    let kind = if m.is_dir() {
        Kind::Directory
    } else if m.is_file() {
        Kind::File
    } else {
        // Sockets, FIFOs and devices are not documents.
        return None;
    };
    Some(Meta {
        kind,
        size: if kind == Kind::File { m.len() } else { 0 },
        modified: m.modified().ok().map(|t| t.into_std()),
        mode: Some(m.permissions().mode() & 0o7777),
        inode: Some(Inode {
            number: m.ino(),
            device: m.dev(),
            accessed: m.accessed().ok().map(|t| t.into_std()),
            changed: since_epoch(m.ctime(), m.ctime_nsec()),
            created: m.created().ok().map(|t| t.into_std()),
        }),
    })
}

/// A time given as seconds and nanoseconds since the epoch (`st_ctim`).
fn since_epoch(secs: i64, nanos: i64) -> Option<SystemTime> {
    let nanos = u32::try_from(nanos).ok()?;
    match u64::try_from(secs) {
        Ok(s) => UNIX_EPOCH.checked_add(Duration::new(s, nanos)),
        Err(_) => UNIX_EPOCH
            .checked_sub(Duration::from_secs(secs.unsigned_abs()))?
            .checked_add(Duration::from_nanos(u64::from(nanos))),
    }
}

fn stat_in(dir: &Dir, path: &str) -> Result<Meta, FsError> {
    let m = dir
        .metadata(rel(path))
        .map_err(|e| FsError::from_io(&e, path))?;
    meta(&m).ok_or_else(|| FsError::Denied(path.to_owned()))
}

/// Opens a regular file, refusing directories and special files. The file
/// is opened without blocking (opening a FIFO would otherwise wait for a
/// writer forever) and checked on the open handle, so what is read is what
/// was checked.
fn open_file(dir: &Dir, path: &str) -> Result<(File, u64), FsError> {
    use cap_std::fs::OpenOptionsExt;
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK);
    let file = match dir.open_with(rel(path), &options) {
        Ok(file) => file,
        // Why it cannot be opened, as a look at it says (a socket is
        // denied, for example); else the open's own error.
        Err(e) => {
            return Err(stat_in(dir, path)
                .err()
                .unwrap_or_else(|| FsError::from_io(&e, path)));
        }
    };
    let m = file.metadata().map_err(|e| FsError::from_io(&e, path))?;
    match meta(&m) {
        Some(Meta {
            kind: Kind::File,
            size,
            ..
        }) => Ok((file, size)),
        Some(_) => Err(FsError::IsADirectory(path.to_owned())),
        None => Err(FsError::Denied(path.to_owned())),
    }
}

/// A reader of `range` of the regular file at `path`: opened, checked,
/// positioned at the range's start and cut at its end.
fn open_range(
    dir: &Dir,
    path: &str,
    range: &Range<u64>,
) -> Result<io::Take<std::fs::File>, FsError> {
    let (file, size) = open_file(dir, path)?;
    let range = clamp(range, size);
    let mut file = file.into_std();
    if range.start > 0 {
        file.seek(SeekFrom::Start(range.start))
            .map_err(|e| FsError::from_io(&e, path))?;
    }
    Ok(file.take(range.end - range.start))
}

/// The identities (device, inode) of the directory at `path` and of each
/// of its ancestors, each as `path` reaches it (through links too). A
/// symlink in that directory naming one of them would make the tree
/// endless: `a/loop -> ..` gives `a/loop/a/loop/…`, and every recursive
/// `grep`, `find` or `ls -R` would walk it to the kernel's link limit.
fn ancestor_ids(dir: &Dir, path: &str) -> Vec<(u64, u64)> {
    let mut ids = Vec::new();
    let mut prefix = path;
    loop {
        if let Ok(m) = dir.metadata(rel(prefix)) {
            ids.push(id(&m));
        }
        if prefix.is_empty() {
            return ids;
        }
        prefix = prefix.rsplit_once('/').map_or("", |(parent, _)| parent);
    }
}

fn id(m: &Metadata) -> (u64, u64) {
    use cap_std::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// The first `limit` entries of the directory at `path`, in the order the
/// kernel returns them (readdir order: what GNU `find`, `du` and `grep -r`
/// print, so that a shell over the documents walks them as bash does over
/// the same directory). A link to
/// the directory itself or to one of its ancestors is left out (see
/// [`ancestor_ids`]); its path still resolves.
fn list_in(dir: &Dir, path: &str, limit: usize) -> Result<Listing, FsError> {
    if stat_in(dir, path)?.kind != Kind::Directory {
        return Err(FsError::NotADirectory(path.to_owned()));
    }
    let mut entries = Vec::new();
    for entry in dir
        .read_dir(rel(path))
        .map_err(|e| FsError::from_io(&e, path))?
    {
        let entry = entry.map_err(|e| FsError::from_io(&e, path))?;
        // A name that is not UTF-8 cannot be addressed by a script.
        if let Ok(name) = entry.file_name().into_string() {
            entries.push((name, entry));
        }
    }
    let mut listing = Listing::default();
    // Looked up at the first link to a directory, if any.
    let mut ancestors = None;
    for (name, entry) in entries {
        if listing.entries.len() == limit {
            listing.truncated = true;
            break;
        }
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        let found = if is_link {
            // Follows symlinks beneath the root; one that dangles,
            // leads outside or closes a loop is left out of the listing.
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}/{name}")
            };
            dir.metadata(&child)
                .ok()
                .filter(|m| {
                    !m.is_dir()
                        || !ancestors
                            .get_or_insert_with(|| ancestor_ids(dir, path))
                            .contains(&id(m))
                })
                .as_ref()
                .and_then(meta)
        } else {
            // Not a link: its own metadata, without resolving the
            // path from the root again.
            entry.metadata().ok().as_ref().and_then(meta)
        };
        if let Some(meta) = found {
            listing.entries.push(Entry { name, meta });
        }
    }
    Ok(listing)
}

impl BlockingRead for LocalBackend {
    fn open_blocking(
        &self,
        path: &str,
        range: Range<u64>,
    ) -> Result<Box<dyn io::Read + Send>, FsError> {
        Ok(Box::new(open_range(&self.root, path, &range)?))
    }

    fn list_blocking(&self, path: &str, limit: usize) -> Result<Listing, FsError> {
        list_in(&self.root, path, limit)
    }
}

#[async_trait::async_trait]
impl Backend for LocalBackend {
    fn blocking(&self) -> Option<&dyn BlockingRead> {
        Some(self)
    }

    async fn stat(&self, path: &str) -> Result<Meta, FsError> {
        self.on_blocking_thread(path, stat_in).await
    }

    async fn list(&self, path: &str, limit: usize) -> Result<Listing, FsError> {
        self.on_blocking_thread(path, move |dir, path| list_in(dir, path, limit))
            .await
    }

    async fn read_range(&self, path: &str, range: Range<u64>) -> Result<Bytes, FsError> {
        self.on_blocking_thread(path, move |dir, path| {
            let mut file = open_range(dir, path, &range)?;
            let len = usize::try_from(file.limit())
                .map_err(|_| FsError::Unavailable(format!("{path}: range too large")))?;
            let mut buf = Vec::with_capacity(len);
            file.read_to_end(&mut buf)
                .map_err(|e| FsError::from_io(&e, path))?;
            Ok(Bytes::from(buf))
        })
        .await
    }

    async fn open(&self, path: &str, range: Range<u64>) -> Result<ByteStream, FsError> {
        // The first chunk is read with the open, in one trip to a blocking
        // thread: most documents are smaller than that, and a search over
        // thousands of them pays for trips, not bytes.
        let (file, first, rest) = self
            .on_blocking_thread(path, move |dir, path| {
                let mut file = open_range(dir, path, &range)?;
                let len = file.limit();
                let want = len.min(FIRST_CHUNK);
                let mut first = Vec::with_capacity(want as usize);
                (&mut file)
                    .take(want)
                    .read_to_end(&mut first)
                    .map_err(|e| FsError::from_io(&e, path))?;
                let rest = len - first.len() as u64;
                Ok((file.into_inner(), Bytes::from(first), rest))
            })
            .await?;
        let first = futures::stream::iter((!first.is_empty()).then_some(Ok(first)));
        if rest == 0 {
            return Ok(Box::pin(first));
        }
        let file = tokio::fs::File::from_std(file).take(rest);
        Ok(Box::pin(
            first.chain(ReaderStream::with_capacity(file, 64 * 1024)),
        ))
    }
}
