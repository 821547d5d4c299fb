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

use bytes::Bytes;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata};
use tokio::io::AsyncReadExt;
use tokio_util::io::ReaderStream;

use super::backend::{Backend, ByteStream, Entry, FsError, Kind, Listing, Meta, clamp};

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
    async fn blocking<T: Send + 'static>(
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
    })
}

fn stat_in(dir: &Dir, path: &str) -> Result<Meta, FsError> {
    let m = dir
        .metadata(rel(path))
        .map_err(|e| FsError::from_io(&e, path))?;
    meta(&m).ok_or_else(|| FsError::Denied(path.to_owned()))
}

/// Opens a regular file, refusing directories and special files. The file
/// is opened without blocking (a FIFO put in its place between a look and
/// the open would otherwise block forever) and checked on the open handle,
/// so what is read is what was checked.
fn open_file(dir: &Dir, path: &str) -> Result<(File, u64), FsError> {
    use cap_std::fs::OpenOptionsExt;
    if stat_in(dir, path)?.kind == Kind::Directory {
        return Err(FsError::IsADirectory(path.to_owned()));
    }
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK);
    let file = dir
        .open_with(rel(path), &options)
        .map_err(|e| FsError::from_io(&e, path))?;
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

#[async_trait::async_trait]
impl Backend for LocalBackend {
    async fn stat(&self, path: &str) -> Result<Meta, FsError> {
        self.blocking(path, stat_in).await
    }

    async fn list(&self, path: &str, limit: usize) -> Result<Listing, FsError> {
        self.blocking(path, move |dir, path| {
            if stat_in(dir, path)?.kind != Kind::Directory {
                return Err(FsError::NotADirectory(path.to_owned()));
            }
            let mut names = Vec::new();
            for entry in dir
                .read_dir(rel(path))
                .map_err(|e| FsError::from_io(&e, path))?
            {
                let entry = entry.map_err(|e| FsError::from_io(&e, path))?;
                // A name that is not UTF-8 cannot be addressed by a script.
                if let Ok(name) = entry.file_name().into_string() {
                    names.push(name);
                }
            }
            names.sort_unstable();
            let mut listing = Listing::default();
            for name in names {
                if listing.entries.len() == limit {
                    listing.truncated = true;
                    break;
                }
                let child = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}/{name}")
                };
                // Follows symlinks beneath the root; one that dangles or
                // leads outside is left out of the listing.
                if let Ok(meta) = stat_in(dir, &child) {
                    listing.entries.push(Entry { name, meta });
                }
            }
            Ok(listing)
        })
        .await
    }

    async fn read_range(&self, path: &str, range: Range<u64>) -> Result<Bytes, FsError> {
        self.blocking(path, move |dir, path| {
            let (file, size) = open_file(dir, path)?;
            let range = clamp(&range, size);
            let mut file = file.into_std();
            let io_err = |e: io::Error| FsError::from_io(&e, path);
            file.seek(SeekFrom::Start(range.start)).map_err(io_err)?;
            let len = usize::try_from(range.end - range.start)
                .map_err(|_| FsError::Unavailable(format!("{path}: range too large")))?;
            let mut buf = Vec::with_capacity(len);
            file.take(len as u64)
                .read_to_end(&mut buf)
                .map_err(io_err)?;
            Ok(Bytes::from(buf))
        })
        .await
    }

    async fn open(&self, path: &str, range: Range<u64>) -> Result<ByteStream, FsError> {
        let (file, range) = self
            .blocking(path, move |dir, path| {
                let (file, size) = open_file(dir, path)?;
                let range = clamp(&range, size);
                let mut file = file.into_std();
                file.seek(SeekFrom::Start(range.start))
                    .map_err(|e| FsError::from_io(&e, path))?;
                Ok((file, range))
            })
            .await?;
        let file = tokio::fs::File::from_std(file).take(range.end - range.start);
        Ok(Box::pin(ReaderStream::with_capacity(file, 64 * 1024)))
    }
}
