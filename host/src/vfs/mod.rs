//! The virtual filesystem a script sees: a table of mounts, each served by a
//! [`Backend`], behind one path resolution.
//!
//! `/` and the directories above mount points are virtual: they list the
//! mounts. Any other path is served by the mount with the longest path that
//! contains it, and the backend sees only the part below the mount.

mod backend;
mod download;
pub mod grep;
mod local;
mod memory;
mod path;
mod s3;

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

pub use backend::{
    Backend, BlockingRead, ByteStream, DEFAULT_DIR_MODE, DEFAULT_FILE_MODE, Entry, FsError, Inode,
    Kind, Listing, Meta, clamp,
};
pub use download::{DownloadError, Resolved, download, resolve_path};
pub use local::LocalBackend;
pub use memory::{Fault, MemoryBackend};
pub use path::{BeneathError, PathError, VPath, resolve, resolve_beneath, resolve_bytes};
pub use s3::S3Config;
#[cfg(feature = "s3")]
pub use s3::{S3Backend, Store};

/// One mount: a virtual path served by a backend.
#[derive(Debug, Clone)]
pub struct Mount {
    /// Where the backend appears, such as `/files`.
    pub path: VPath,
    /// What serves it.
    pub backend: Arc<dyn Backend>,
}

/// A mount table: the filesystem of one tenant. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Vfs {
    /// Longest path first, so the first match is the longest.
    mounts: Arc<Vec<Mount>>,
}

/// Two mounts at one path, or a mount at `/`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad mount {path}: {why}")]
pub struct MountError {
    /// The mount's path.
    pub path: String,
    /// What is wrong with it.
    pub why: &'static str,
}

enum Located<'a> {
    /// Inside a mount; the rest of the path below it.
    Mounted(&'a Mount, &'a str),
    /// A directory above mount points, holding these names.
    Virtual(BTreeSet<&'a str>),
}

impl Vfs {
    /// A filesystem of these mounts.
    pub fn new(mounts: impl IntoIterator<Item = Mount>) -> Result<Vfs, MountError> {
        let mut mounts: Vec<Mount> = mounts.into_iter().collect();
        mounts.sort_by(|a, b| {
            b.path
                .as_str()
                .len()
                .cmp(&a.path.as_str().len())
                .then_with(|| a.path.cmp(&b.path))
        });
        for pair in mounts.windows(2) {
            if pair[0].path == pair[1].path {
                return Err(MountError {
                    path: pair[0].path.to_string(),
                    why: "mounted twice",
                });
            }
        }
        if let Some(m) = mounts.iter().find(|m| m.path.is_root()) {
            return Err(MountError {
                path: m.path.to_string(),
                why: "`/` lists the mounts and cannot be a mount itself",
            });
        }
        Ok(Vfs {
            mounts: Arc::new(mounts),
        })
    }

    /// A filesystem with one mount.
    pub fn single(path: VPath, backend: impl Backend) -> Result<Vfs, MountError> {
        Vfs::new([Mount {
            path,
            backend: Arc::new(backend),
        }])
    }

    /// The mount points, longest first.
    pub fn mounts(&self) -> impl Iterator<Item = &VPath> {
        self.mounts.iter().map(|m| &m.path)
    }

    fn locate<'a>(&'a self, p: &'a VPath) -> Result<Located<'a>, FsError> {
        if let Some((m, rest)) = self
            .mounts
            .iter()
            .find_map(|m| p.strip_prefix(&m.path).map(|rest| (m, rest)))
        {
            return Ok(Located::Mounted(m, rest));
        }
        let children = self.children_of(p);
        if children.is_empty() && !p.is_root() {
            return Err(FsError::NotFound(p.to_string()));
        }
        Ok(Located::Virtual(children))
    }

    /// Names of mount points (or directories above them) directly in `p`.
    fn children_of<'a>(&'a self, p: &VPath) -> BTreeSet<&'a str> {
        self.mounts
            .iter()
            .filter_map(|m| m.path.strip_prefix(p))
            .filter(|rest| !rest.is_empty())
            .map(|rest| rest.split('/').next().unwrap_or(rest))
            .collect()
    }

    fn virtual_dir() -> Meta {
        Meta {
            kind: Kind::Directory,
            size: 0,
            modified: None,
            mode: None,
            inode: None,
        }
    }

    /// Metadata of a path.
    pub async fn stat(&self, p: &VPath) -> Result<Meta, FsError> {
        match self.locate(p)? {
            Located::Mounted(m, rest) => m
                .backend
                .stat(rest)
                .await
                .map_err(|e| e.with_path(p.as_str())),
            Located::Virtual(_) => Ok(Self::virtual_dir()),
        }
    }

    /// The first `limit` entries of a directory, by name.
    pub async fn list(&self, p: &VPath, limit: usize) -> Result<Listing, FsError> {
        match self.locate(p)? {
            Located::Mounted(m, rest) => {
                let listing = m
                    .backend
                    .list(rest, limit)
                    .await
                    .map_err(|e| e.with_path(p.as_str()))?;
                Ok(self.with_nested(p, listing, limit))
            }
            Located::Virtual(children) => {
                let mut listing = Self::virtual_listing(children, limit);
                self.with_mount_roots(p, &mut listing).await;
                Ok(listing)
            }
        }
    }

    /// Gives each entry of a virtual directory that is a mount point the
    /// metadata of its mount's root (its time, mode and inode), as a
    /// Linux mount point shows its mounted directory's. An entry whose
    /// root cannot be read keeps the plain virtual directory's.
    async fn with_mount_roots(&self, p: &VPath, listing: &mut Listing) {
        for entry in &mut listing.entries {
            let Some(path) = p.join_name(&entry.name) else {
                continue;
            };
            if let Some(m) = self.mounts.iter().find(|m| m.path == path)
                && let Ok(meta) = m.backend.stat("").await
            {
                entry.meta = meta;
            }
        }
    }

    /// [`Vfs::list`] on the calling thread, for a backend that can read
    /// there ([`Backend::blocking`]); `None` for one that cannot. Blocks:
    /// call it from a blocking thread.
    pub fn list_blocking(&self, p: &VPath, limit: usize) -> Option<Result<Listing, FsError>> {
        match self.locate(p) {
            Ok(Located::Mounted(m, rest)) => {
                let blocking = m.backend.blocking()?;
                Some(
                    blocking
                        .list_blocking(rest, limit)
                        .map(|listing| self.with_nested(p, listing, limit))
                        .map_err(|e| e.with_path(p.as_str())),
                )
            }
            // The mount points' metadata is read through their backends:
            // the caller lists it with `list`.
            Ok(Located::Virtual(_)) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// A mount's listing of `p` with the mounts nested inside it, which
    /// appear as directories.
    fn with_nested(&self, p: &VPath, mut listing: Listing, limit: usize) -> Listing {
        let nested = self.children_of(p);
        if nested.is_empty() {
            return listing;
        }
        for name in nested {
            if !listing.entries.iter().any(|e| e.name == name) {
                listing.entries.push(Entry {
                    name: name.to_owned(),
                    meta: Self::virtual_dir(),
                });
            }
        }
        // The mount's own entries keep its order; nested mounts follow.
        if listing.entries.len() > limit {
            listing.entries.truncate(limit);
            listing.truncated = true;
        }
        listing
    }

    fn virtual_listing(children: BTreeSet<&str>, limit: usize) -> Listing {
        Listing {
            truncated: children.len() > limit,
            entries: children
                .into_iter()
                .take(limit)
                .map(|name| Entry {
                    name: name.to_owned(),
                    meta: Self::virtual_dir(),
                })
                .collect(),
        }
    }

    /// The bytes of a document in `range`, clamped to its end.
    pub async fn read_range(&self, p: &VPath, range: Range<u64>) -> Result<Bytes, FsError> {
        match self.locate(p)? {
            Located::Mounted(m, rest) => m
                .backend
                .read_range(rest, range)
                .await
                .map_err(|e| e.with_path(p.as_str())),
            Located::Virtual(_) => Err(FsError::IsADirectory(p.to_string())),
        }
    }

    /// A stream of a document's bytes in `range`, clamped to its end.
    pub async fn open(&self, p: &VPath, range: Range<u64>) -> Result<ByteStream, FsError> {
        match self.locate(p)? {
            Located::Mounted(m, rest) => m
                .backend
                .open(rest, range)
                .await
                .map_err(|e| e.with_path(p.as_str())),
            Located::Virtual(_) => Err(FsError::IsADirectory(p.to_string())),
        }
    }

    /// Whether the document at `p` can be read with
    /// [`Vfs::open_blocking`].
    pub fn reads_blocking(&self, p: &VPath) -> bool {
        matches!(self.locate(p), Ok(Located::Mounted(m, _)) if m.backend.blocking().is_some())
    }

    /// [`Vfs::open`] on the calling thread, for a backend that can read
    /// there ([`Backend::blocking`]); `None` for one that cannot. Blocks:
    /// call it from a blocking thread.
    pub fn open_blocking(
        &self,
        p: &VPath,
        range: Range<u64>,
    ) -> Option<Result<Box<dyn std::io::Read + Send>, FsError>> {
        match self.locate(p) {
            Ok(Located::Mounted(m, rest)) => {
                let blocking = m.backend.blocking()?;
                Some(
                    blocking
                        .open_blocking(rest, range)
                        .map_err(|e| e.with_path(p.as_str())),
                )
            }
            Ok(Located::Virtual(_)) => Some(Err(FsError::IsADirectory(p.to_string()))),
            Err(e) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vp(s: &str) -> VPath {
        VPath::parse_absolute(s).expect("path")
    }

    fn vfs() -> Vfs {
        Vfs::new([
            Mount {
                path: vp("/files"),
                backend: Arc::new(
                    MemoryBackend::new()
                        .file("a.txt", "files-a")
                        .file("shared", "file"),
                ),
            },
            Mount {
                path: vp("/files/shared"),
                backend: Arc::new(MemoryBackend::new().file("s.txt", "shared-s")),
            },
            Mount {
                path: vp("/team/x"),
                backend: Arc::new(MemoryBackend::new().file("x.txt", "team-x")),
            },
        ])
        .expect("mounts")
    }

    fn names(l: Listing) -> Vec<String> {
        l.entries.into_iter().map(|e| e.name).collect()
    }

    #[tokio::test]
    async fn root_and_parents_of_mounts_are_virtual_directories() {
        let v = vfs();
        assert_eq!(
            names(v.list(&VPath::root(), 100).await.unwrap()),
            ["files", "team"]
        );
        assert_eq!(names(v.list(&vp("/team"), 100).await.unwrap()), ["x"]);
        assert_eq!(v.stat(&vp("/team")).await.unwrap().kind, Kind::Directory);
        assert_eq!(
            v.stat(&vp("/nope")).await,
            Err(FsError::NotFound("/nope".into()))
        );
        assert_eq!(
            v.read_range(&vp("/team"), 0..1).await,
            Err(FsError::IsADirectory("/team".into()))
        );
    }

    #[tokio::test]
    async fn a_mount_point_is_listed_with_its_roots_metadata() {
        let dir = tempfile::tempdir().expect("tempdir");
        let v = Vfs::new([Mount {
            path: vp("/team/docs"),
            backend: Arc::new(LocalBackend::open(dir.path()).expect("directory")),
        }])
        .expect("mounts");
        let root = v.stat(&vp("/team/docs")).await.unwrap();
        assert!(root.modified.is_some(), "{root:?}");
        let listed = v.list(&vp("/team"), 100).await.unwrap();
        assert_eq!(listed.entries.len(), 1);
        assert_eq!(listed.entries[0].meta, root);
        // `/` holds no mount point itself: `team` stays a plain directory.
        let top = v.list(&VPath::root(), 100).await.unwrap();
        assert_eq!(top.entries[0].meta, Vfs::virtual_dir());
        // A walk on a blocking thread is sent to `list` for it.
        assert!(v.list_blocking(&vp("/team"), 100).is_none());
    }

    #[tokio::test]
    async fn the_longest_mount_serves_a_path() {
        let v = vfs();
        assert_eq!(
            v.read_range(&vp("/files/a.txt"), 0..100).await.unwrap(),
            "files-a"
        );
        assert_eq!(
            v.read_range(&vp("/files/shared/s.txt"), 0..100)
                .await
                .unwrap(),
            "shared-s"
        );
        // The nested mount shadows the outer mount's entry of the same name.
        assert_eq!(
            v.stat(&vp("/files/shared")).await.unwrap().kind,
            Kind::Directory
        );
        assert_eq!(
            names(v.list(&vp("/files"), 100).await.unwrap()),
            ["a.txt", "shared"]
        );
        // A prefix that is not a whole component matches nothing.
        assert_eq!(
            v.stat(&vp("/filesx")).await,
            Err(FsError::NotFound("/filesx".into()))
        );
    }

    #[tokio::test]
    async fn errors_name_the_virtual_path() {
        let v = vfs();
        assert_eq!(
            v.read_range(&vp("/files/missing"), 0..1).await,
            Err(FsError::NotFound("/files/missing".into()))
        );
    }

    #[test]
    fn refuses_duplicate_and_root_mounts() {
        let m = |p: &str| Mount {
            path: vp(p),
            backend: Arc::new(MemoryBackend::new()),
        };
        assert!(Vfs::new([m("/a"), m("/a")]).is_err());
        assert!(Vfs::new([m("/")]).is_err());
        assert!(Vfs::new([m("/a"), m("/a/b")]).is_ok());
    }
}
