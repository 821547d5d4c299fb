//! An in-memory tree of documents: the built-in demo documents, tests and
//! the test kit. A document can be made to misbehave: stall forever, fail,
//! or panic when read.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use bytes::Bytes;
use futures::StreamExt;

use super::backend::{Backend, ByteStream, Entry, FsError, Kind, Listing, Meta, clamp};

/// How a document misbehaves when it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The read never completes.
    Stall,
    /// The read fails with `unavailable`.
    Fail,
    /// The read panics inside the host (a host bug, simulated).
    Panic,
    /// A whole read fails; a streamed read fails after half the bytes.
    FailMidway,
    /// A whole read never completes; a streamed read stalls forever after
    /// half the bytes.
    StallMidway,
}

/// Counts a stalled read while it waits; dropped when the read is
/// cancelled.
struct Stalled(Arc<AtomicUsize>);

impl Stalled {
    fn new(count: &Arc<AtomicUsize>) -> Stalled {
        count.fetch_add(1, Ordering::SeqCst);
        Stalled(count.clone())
    }

    async fn forever<T>(self) -> T {
        std::future::pending().await
    }
}

impl Drop for Stalled {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Debug, Clone)]
struct Doc {
    bytes: Bytes,
    fault: Option<Fault>,
}

/// An in-memory tree. Directories exist implicitly above every document,
/// and explicitly when added with [`MemoryBackend::dir`].
///
/// ```
/// use vfsbox_host::vfs::{Fault, MemoryBackend};
///
/// let tree = MemoryBackend::new()
///     .file("notes/a.txt", "alpha\n")
///     .file("notes/b.txt", "beta\n")
///     .faulty("slow.txt", "never arrives", Fault::Stall);
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryBackend {
    docs: BTreeMap<String, Doc>,
    dirs: BTreeSet<String>,
    modified: Option<SystemTime>,
    /// Reads stalled right now, shared by clones.
    stalled: Arc<AtomicUsize>,
}

impl MemoryBackend {
    /// An empty tree.
    pub fn new() -> MemoryBackend {
        MemoryBackend {
            modified: Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000)),
            ..Default::default()
        }
    }

    /// Adds a document at `path` (relative, `/`-separated).
    pub fn file(self, path: &str, bytes: impl Into<Bytes>) -> MemoryBackend {
        self.insert(path, bytes.into(), None)
    }

    /// Adds a document that misbehaves when read.
    pub fn faulty(self, path: &str, bytes: impl Into<Bytes>, fault: Fault) -> MemoryBackend {
        self.insert(path, bytes.into(), Some(fault))
    }

    /// How many reads of stalling documents are waiting right now: a read
    /// that was cancelled no longer counts.
    pub fn stalled_reads(&self) -> usize {
        self.stalled.load(Ordering::SeqCst)
    }

    /// Adds an (empty) directory.
    pub fn dir(mut self, path: &str) -> MemoryBackend {
        let path = path.trim_matches('/').to_owned();
        self.add_parents(&path);
        self.dirs.insert(path);
        self
    }

    fn insert(mut self, path: &str, bytes: Bytes, fault: Option<Fault>) -> MemoryBackend {
        let path = path.trim_matches('/').to_owned();
        self.add_parents(&path);
        self.docs.insert(path, Doc { bytes, fault });
        self
    }

    fn add_parents(&mut self, path: &str) {
        self.dirs.insert(String::new());
        let mut at = 0;
        while let Some(i) = path[at..].find('/') {
            self.dirs.insert(path[..at + i].to_owned());
            at += i + 1;
        }
    }

    fn meta(&self, path: &str) -> Result<Meta, FsError> {
        if let Some(doc) = self.docs.get(path) {
            return Ok(Meta {
                kind: Kind::File,
                size: doc.bytes.len() as u64,
                modified: self.modified,
                mode: None,
                inode: None,
            });
        }
        if self.dirs.contains(path) {
            return Ok(Meta {
                kind: Kind::Directory,
                size: 0,
                modified: self.modified,
                mode: None,
                inode: None,
            });
        }
        // A document used as a directory: `a.txt/b`.
        let mut parent = path;
        while let Some(i) = parent.rfind('/') {
            parent = &parent[..i];
            if self.docs.contains_key(parent) {
                return Err(FsError::NotADirectory(path.to_owned()));
            }
        }
        Err(FsError::NotFound(path.to_owned()))
    }

    async fn doc(&self, path: &str) -> Result<&Bytes, FsError> {
        if self.meta(path)?.kind == Kind::Directory {
            return Err(FsError::IsADirectory(path.to_owned()));
        }
        let doc = &self.docs[path];
        match doc.fault {
            None => Ok(&doc.bytes),
            Some(Fault::Stall | Fault::StallMidway) => Stalled::new(&self.stalled).forever().await,
            Some(Fault::Fail | Fault::FailMidway) => {
                Err(FsError::Unavailable(format!("{path}: the read failed")))
            }
            Some(Fault::Panic) => panic!("simulated host bug reading {path}"),
        }
    }
}

#[async_trait::async_trait]
impl Backend for MemoryBackend {
    async fn stat(&self, path: &str) -> Result<Meta, FsError> {
        self.meta(path)
    }

    async fn list(&self, path: &str, limit: usize) -> Result<Listing, FsError> {
        if self.meta(path)?.kind != Kind::Directory {
            return Err(FsError::NotADirectory(path.to_owned()));
        }
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        let children: BTreeSet<&str> = self
            .docs
            .keys()
            .chain(self.dirs.iter())
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter(|rest| !rest.is_empty())
            .map(|rest| rest.split('/').next().unwrap_or(rest))
            .collect();
        let mut listing = Listing::default();
        for name in children {
            if listing.entries.len() == limit {
                listing.truncated = true;
                break;
            }
            let meta = self.meta(&format!("{prefix}{name}"))?;
            listing.entries.push(Entry {
                name: name.to_owned(),
                meta,
            });
        }
        Ok(listing)
    }

    async fn read_range(&self, path: &str, range: Range<u64>) -> Result<Bytes, FsError> {
        let bytes = self.doc(path).await?;
        let r = clamp(&range, bytes.len() as u64);
        Ok(bytes.slice(r.start as usize..r.end as usize))
    }

    async fn open(&self, path: &str, range: Range<u64>) -> Result<ByteStream, FsError> {
        if let Some(Doc {
            bytes,
            fault: Some(fault @ (Fault::FailMidway | Fault::StallMidway)),
        }) = self.docs.get(path)
        {
            // Half the range arrives; then the stream fails, or stalls.
            let r = clamp(&range, bytes.len() as u64);
            let half = bytes.slice(r.start as usize..(r.start + (r.end - r.start) / 2) as usize);
            let first = futures::stream::iter([Ok(half)]);
            if *fault == Fault::FailMidway {
                let failed = std::io::Error::other("the backend failed mid-read");
                return Ok(Box::pin(first.chain(futures::stream::iter([Err(failed)]))));
            }
            let stalled = self.stalled.clone();
            let rest = futures::stream::once(async move { Stalled::new(&stalled).forever().await });
            return Ok(Box::pin(first.chain(rest)));
        }
        let bytes = self.read_range(path, range).await?;
        // Small chunks, so that consumers see a real stream.
        let chunks: Vec<std::io::Result<Bytes>> = (0..bytes.len())
            .step_by(16 * 1024)
            .map(|at| Ok(bytes.slice(at..bytes.len().min(at + 16 * 1024))))
            .collect();
        Ok(Box::pin(futures::stream::iter(chunks)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> MemoryBackend {
        MemoryBackend::new()
            .file("a.txt", "alpha")
            .file("d/b.txt", "beta")
            .file("d/e/c.txt", "gamma")
            .dir("empty")
    }

    #[tokio::test]
    async fn lists_implicit_and_explicit_directories() {
        let t = tree();
        let names = |l: Listing| l.entries.into_iter().map(|e| e.name).collect::<Vec<_>>();
        assert_eq!(
            names(t.list("", 100).await.unwrap()),
            ["a.txt", "d", "empty"]
        );
        assert_eq!(names(t.list("d", 100).await.unwrap()), ["b.txt", "e"]);
        assert!(t.list("empty", 100).await.unwrap().entries.is_empty());
        let cut = t.list("", 2).await.unwrap();
        assert!(cut.truncated);
        assert_eq!(names(cut), ["a.txt", "d"]);
    }

    #[tokio::test]
    async fn reports_errors_like_a_filesystem() {
        let t = tree();
        assert_eq!(t.stat("nope").await, Err(FsError::NotFound("nope".into())));
        assert_eq!(
            t.stat("a.txt/x").await,
            Err(FsError::NotADirectory("a.txt/x".into()))
        );
        assert_eq!(
            t.read_range("d", 0..1).await,
            Err(FsError::IsADirectory("d".into()))
        );
        assert_eq!(
            t.list("a.txt", 10).await,
            Err(FsError::NotADirectory("a.txt".into()))
        );
    }

    #[tokio::test]
    async fn reads_ranges_clamped_to_the_end() {
        let t = tree();
        assert_eq!(t.read_range("a.txt", 1..3).await.unwrap(), "lp");
        assert_eq!(t.read_range("a.txt", 3..100).await.unwrap(), "ha");
        assert_eq!(t.read_range("a.txt", 100..200).await.unwrap(), "");
    }
}
