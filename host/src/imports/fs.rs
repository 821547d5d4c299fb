//! `vfsbox:script/fs`: metadata, listings and reads.

use std::time::{SystemTime, UNIX_EPOCH};

use super::bindings::vfsbox::script::fs::{self as wit, DirEntry, Listing, PathAttributes};
use super::bindings::vfsbox::script::types::{self, Metadata};
use super::{HostError, ScriptHost};
use crate::vfs::{FsError, Kind, Meta, VPath};
use wasmtime_wasi::p2::bindings::clocks::wall_clock::Datetime;

fn kind(k: Kind) -> types::Kind {
    match k {
        Kind::File => types::Kind::File,
        Kind::Directory => types::Kind::Directory,
    }
}

fn modified(m: &Meta) -> Option<Datetime> {
    datetime(m.modified?)
}

fn datetime(t: SystemTime) -> Option<Datetime> {
    let since = t.duration_since(UNIX_EPOCH).ok()?;
    Some(Datetime {
        seconds: since.as_secs(),
        nanoseconds: since.subsec_nanos(),
    })
}

impl ScriptHost {
    /// Stats a document, failing if it is a directory.
    async fn document(&self, path: &VPath) -> Result<Meta, HostError> {
        let meta = self.before_deadline(self.vfs.stat(path)).await??;
        if meta.kind == Kind::Directory {
            return Err(FsError::IsADirectory(path.to_string()).into());
        }
        Ok(meta)
    }

    async fn read_charged(
        &mut self,
        path: VPath,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>, HostError> {
        let meta = self.document(&path).await?;
        let range = crate::vfs::clamp(&(offset..offset.saturating_add(len)), meta.size);
        self.budget.charge_read(&path, range.end - range.start)?;
        let bytes = self
            .before_deadline(self.vfs.read_range(&path, range.clone()))
            .await??;
        // The document may have grown since it was stated; never hand over
        // more than was charged.
        let charged = (range.end - range.start) as usize;
        Ok(bytes.slice(..bytes.len().min(charged)).to_vec())
    }
}

impl wit::Host for ScriptHost {
    async fn cwd(&mut self) -> wasmtime::Result<String> {
        Ok(self.cwd.to_string())
    }

    async fn set_cwd(&mut self, path: String) -> Result<String, HostError> {
        let path = self.resolve(&path)?;
        let meta = self.before_deadline(self.vfs.stat(&path)).await??;
        if meta.kind != Kind::Directory {
            return Err(FsError::NotADirectory(path.to_string()).into());
        }
        self.cwd = path;
        Ok(self.cwd.to_string())
    }

    async fn stat(&mut self, path: String) -> Result<Metadata, HostError> {
        let path = self.resolve(&path)?;
        let meta = self.before_deadline(self.vfs.stat(&path)).await??;
        Ok(Metadata {
            path: path.to_string(),
            kind: kind(meta.kind),
            size: meta.size,
            modified: modified(&meta),
        })
    }

    async fn mode(&mut self, path: String) -> Result<u32, HostError> {
        let path = self.resolve(&path)?;
        let meta = self.before_deadline(self.vfs.stat(&path)).await??;
        Ok(meta.mode_or_default())
    }

    async fn attributes(&mut self, path: String) -> Result<PathAttributes, HostError> {
        let path = self.resolve(&path)?;
        let meta = self.before_deadline(self.vfs.stat(&path)).await??;
        let inode = meta.inode;
        // Where the backend keeps no times of access or change, the
        // modification time stands for them, as for a file never read
        // since it was written.
        let time = |t: Option<SystemTime>| t.or(meta.modified).and_then(datetime);
        Ok(PathAttributes {
            mode: meta.mode_or_default(),
            inode: inode.map_or(0, |i| i.number),
            device: inode.map_or(0, |i| i.device),
            accessed: time(inode.and_then(|i| i.accessed)),
            changed: time(inode.and_then(|i| i.changed)),
            created: inode.and_then(|i| i.created).and_then(datetime),
        })
    }

    async fn list_dir(&mut self, path: String) -> Result<Listing, HostError> {
        let path = self.resolve(&path)?;
        let limit = usize::try_from(self.budget.limits.list_entries).unwrap_or(usize::MAX);
        let listing = self.before_deadline(self.vfs.list(&path, limit)).await??;
        Ok(Listing {
            entries: listing
                .entries
                .into_iter()
                .map(|e| DirEntry {
                    kind: kind(e.meta.kind),
                    size: e.meta.size,
                    modified: modified(&e.meta),
                    name: e.name,
                })
                .collect(),
            truncated: listing.truncated,
        })
    }

    async fn read(&mut self, path: String) -> Result<Vec<u8>, HostError> {
        let path = self.resolve(&path)?;
        self.read_charged(path, 0, u64::MAX).await
    }

    async fn read_range(
        &mut self,
        path: String,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>, HostError> {
        let path = self.resolve(&path)?;
        self.read_charged(path, offset, len).await
    }
}
