//! `wasi:filesystem` 0.2 served over the VFS, read-only: what lets an
//! unmodified WASI program (Rust's `std::fs`, libc's `open`/`read`/`readdir`)
//! read the documents.
//!
//! Each mount the run sees is one preopened directory, named by its path
//! (`/files`). Every path is resolved beneath the descriptor it is relative
//! to and never above the preopen it came from ([`resolve_beneath`]); the
//! VFS then applies the same rules as for the `fs` import (a symlink never
//! leads outside its mount). Budgets are the `fs` import's: opening a
//! document counts one document read (once per document, as `fs.read`
//! does), bytes count as they are delivered, and every backend call waits
//! only for the time left before the deadline. Nothing can be written:
//! every call that would change something answers `read-only`.
//!
//! wasmtime-wasi's own implementation is bound to real host files, so this
//! one is written here, against bindings generated from the same WIT.

mod stream;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};
use wasmtime::component::{HasData, Linker, Resource, ResourceTable, ResourceTableError};
use wasmtime_wasi_io::streams::{DynInputStream, DynOutputStream};

use super::filesystem_bindings::wasi::filesystem::{preopens, types};
use super::{RunState, ScriptHost};
use crate::runtime::LimitExceeded;
use crate::runtime::budget::Deadline;
use crate::vfs::{
    BeneathError, FsError, Kind, Listing, Meta, PathError, VPath, Vfs, resolve_beneath,
};
use types::{
    Advice, DescriptorFlags, DescriptorStat, DescriptorType, DirectoryEntry, ErrorCode, Filesize,
    MetadataHashValue, NewTimestamp, OpenFlags, PathFlags,
};
use wasmtime_wasi::p2::bindings::clocks::wall_clock::Datetime;

/// Descriptors, directory streams and document streams a run may hold open
/// at once, like a process's file-descriptor limit: a script cannot fill
/// the host's memory with handles.
pub(crate) const MAX_OPEN_HANDLES: usize = 1024;

/// Bytes one `read` call returns at most; a program asks again for more (a
/// short read is allowed), so a read of a whole large document never sits
/// in the host's memory at once.
const MAX_READ_BYTES: u64 = 1024 * 1024;

/// What a `wasi:filesystem` call returns on failure: an error code the
/// guest's libc turns into `errno`, or a trap that ends the run (a spent
/// limit, a bad handle).
#[derive(Debug)]
pub(crate) enum Failure {
    Code(ErrorCode),
    Trap(wasmtime::Error),
}

type Result<T> = std::result::Result<T, Failure>;

impl From<ErrorCode> for Failure {
    fn from(code: ErrorCode) -> Self {
        Failure::Code(code)
    }
}

impl From<FsError> for Failure {
    fn from(e: FsError) -> Self {
        Failure::Code(error_code(&e))
    }
}

impl From<BeneathError> for Failure {
    fn from(e: BeneathError) -> Self {
        Failure::Code(match e {
            // `open("")` is ENOENT in POSIX.
            BeneathError::Path(PathError::Empty) => ErrorCode::NoEntry,
            BeneathError::Path(PathError::TooLong) => ErrorCode::NameTooLong,
            BeneathError::Path(PathError::Nul) => ErrorCode::Invalid,
            BeneathError::Path(PathError::NotUtf8) => ErrorCode::IllegalByteSequence,
            // What the WASI specification prescribes for a path that
            // leaves its base directory.
            BeneathError::Absolute | BeneathError::Escapes => ErrorCode::NotPermitted,
        })
    }
}

impl From<LimitExceeded> for Failure {
    fn from(e: LimitExceeded) -> Self {
        Failure::Trap(wasmtime::Error::new(e))
    }
}

impl From<ResourceTableError> for Failure {
    fn from(e: ResourceTableError) -> Self {
        Failure::Trap(wasmtime::Error::new(e))
    }
}

/// The error code of a VFS error, as a program's libc will see it.
fn error_code(e: &FsError) -> ErrorCode {
    match e {
        FsError::NotFound(_) => ErrorCode::NoEntry,
        FsError::NotADirectory(_) => ErrorCode::NotDirectory,
        FsError::IsADirectory(_) => ErrorCode::IsDirectory,
        FsError::InvalidPath(_) => ErrorCode::Invalid,
        // A symlink out of its mount, say.
        FsError::Denied(_) => ErrorCode::Access,
        FsError::Unavailable(_) => ErrorCode::Io,
    }
}

/// Paths whose metadata a run keeps, at most: what its listings and stats
/// taught it, so that a walk costs one listing per directory and no call
/// per entry. Past this, lookups ask the backend again.
const MAX_KNOWN_PATHS: usize = 20_000;

/// What `wasi:filesystem` keeps for one run.
#[derive(Debug, Default)]
pub(crate) struct FilesState {
    handles: Handles,
    /// Metadata of paths seen in listings or stated, for the run's length
    /// (as a document's size is fixed for the run once it is opened).
    known: HashMap<VPath, Meta>,
}

impl FilesState {
    fn learn(&mut self, path: VPath, meta: Meta) {
        if self.known.len() < MAX_KNOWN_PATHS || self.known.contains_key(&path) {
            self.known.insert(path, meta);
        }
    }

    fn learn_listing(&mut self, dir: &VPath, listing: &Listing) {
        for e in &listing.entries {
            if let Some(path) = dir.join_name(&e.name) {
                self.learn(path, e.meta.clone());
            }
        }
    }
}

/// The count of handles a run holds open, shared by the handles themselves.
#[derive(Debug, Default)]
pub(crate) struct Handles(Arc<AtomicUsize>);

/// One open handle; dropping it (with the resource that holds it) frees
/// its place.
#[derive(Debug)]
pub(crate) struct Handle(Arc<AtomicUsize>);

impl Handles {
    /// A place for one more handle, unless [`MAX_OPEN_HANDLES`] are open.
    fn take(&self) -> Result<Handle> {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < MAX_OPEN_HANDLES).then_some(n + 1)
            })
            // No error code means "too many open files"; `quota` is the
            // nearest ("resource quota exceeded").
            .map_err(|_| ErrorCode::Quota)?;
        Ok(Handle(self.0.clone()))
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An open file or directory: the `descriptor` resource.
#[derive(Debug)]
#[allow(unreachable_pub, reason = "the generated bindings re-export it")]
pub struct Descriptor {
    /// What it names.
    path: VPath,
    /// The preopened directory it was opened beneath, which no path
    /// resolved from it leaves.
    root: VPath,
    /// Its metadata as of opening; a preopen's is fetched when first asked.
    meta: Option<Meta>,
    /// A directory's listing, fetched once, when first needed: reading the
    /// directory and stating its entries then cost no more backend calls.
    listing: Option<Arc<Listing>>,
    _handle: Handle,
}

impl Descriptor {
    fn is_dir(&self) -> bool {
        self.meta.as_ref().is_none_or(|m| m.kind == Kind::Directory)
    }
}

/// A directory being read: the `directory-entry-stream` resource.
#[derive(Debug)]
#[allow(unreachable_pub, reason = "the generated bindings re-export it")]
pub struct DirectoryEntries {
    listing: Arc<Listing>,
    next: usize,
    _handle: Handle,
}

/// The run's state as `wasi:filesystem` sees it.
pub(crate) struct FsView<'a> {
    table: &'a mut ResourceTable,
    host: &'a mut ScriptHost,
}

struct WasiFs;

impl HasData for WasiFs {
    type Data<'a> = FsView<'a>;
}

fn view(s: &mut RunState) -> FsView<'_> {
    FsView {
        table: &mut s.table,
        host: &mut s.host,
    }
}

/// Links `wasi:filesystem/types` and `preopens`, served by this module.
pub(super) fn add_to_linker(l: &mut Linker<RunState>) -> wasmtime::Result<()> {
    types::add_to_linker::<RunState, WasiFs>(l, view)?;
    preopens::add_to_linker::<RunState, WasiFs>(l, view)?;
    Ok(())
}

fn descriptor_type(k: Kind) -> DescriptorType {
    match k {
        Kind::File => DescriptorType::RegularFile,
        Kind::Directory => DescriptorType::Directory,
    }
}

fn datetime(m: &Meta) -> Option<Datetime> {
    at(m.modified)
}

fn at(t: Option<std::time::SystemTime>) -> Option<Datetime> {
    let since = t?.duration_since(UNIX_EPOCH).ok()?;
    Some(Datetime {
        seconds: since.as_secs(),
        nanoseconds: since.subsec_nanos(),
    })
}

fn descriptor_stat(m: &Meta) -> DescriptorStat {
    let time = datetime(m);
    // A local mount's times of access and change; where the backend keeps
    // none, the modification time stands for them.
    let or_modified = |t: Option<std::time::SystemTime>| at(t).or(time);
    DescriptorStat {
        type_: descriptor_type(m.kind),
        link_count: 1,
        size: m.size,
        data_access_timestamp: or_modified(m.inode.and_then(|i| i.accessed)),
        data_modification_timestamp: time,
        status_change_timestamp: or_modified(m.inode.and_then(|i| i.changed)),
    }
}

/// A hash of what is known of a path: equal for the same document while it
/// stays the same, different once its size or time changes.
fn metadata_hash(path: &VPath, m: &Meta) -> MetadataHashValue {
    let mut h = Sha256::new();
    h.update(path.as_str().as_bytes());
    h.update([0]);
    h.update(m.size.to_le_bytes());
    if let Some(t) = datetime(m) {
        h.update(t.seconds.to_le_bytes());
        h.update(t.nanoseconds.to_le_bytes());
    }
    let d = h.finalize();
    let word = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&d[i..i + 8]);
        u64::from_le_bytes(b)
    };
    MetadataHashValue {
        lower: word(0),
        upper: word(8),
    }
}

/// The single name `path` holds, if it is one (`a`, not `a/b`, `.` or
/// `..`): such a path can be answered from its directory's listing.
fn single_name(path: &str) -> Option<&str> {
    let name = path.strip_suffix('/').unwrap_or(path);
    (!name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])).then_some(name)
}

/// Awaits `work` for the time left before the deadline; at the deadline
/// the work is dropped and the run ends.
async fn before<T>(deadline: Deadline, work: impl Future<Output = T>) -> Result<T> {
    tokio::time::timeout_at(deadline.at.into(), work)
        .await
        .map_err(|_| deadline.exceeded().into())
}

impl FsView<'_> {
    /// A backend call on the run's VFS, awaited [`before`] the deadline.
    /// (It borrows nothing of the view, which is not `Sync`, across the
    /// wait.)
    fn backend<T, F, C>(&self, call: C) -> impl Future<Output = Result<T>> + use<T, F, C>
    where
        C: FnOnce(Vfs) -> F,
        F: Future<Output = std::result::Result<T, FsError>>,
    {
        let deadline = self.host.budget.clock();
        let work = call(self.host.vfs.clone());
        async move { Ok(before(deadline, work).await??) }
    }

    fn descriptor(&self, fd: &Resource<Descriptor>) -> Result<&Descriptor> {
        Ok(self.table.get(fd)?)
    }

    /// The open directory `fd`, or `not-directory`.
    fn directory(&self, fd: &Resource<Descriptor>) -> Result<&Descriptor> {
        let d = self.descriptor(fd)?;
        if !d.is_dir() {
            return Err(ErrorCode::NotDirectory.into());
        }
        Ok(d)
    }

    /// The metadata of `fd`: from its opening, or for a preopen, fetched
    /// once.
    async fn meta_of(&mut self, fd: &Resource<Descriptor>) -> Result<Meta> {
        let d = self.descriptor(fd)?;
        if let Some(m) = &d.meta {
            return Ok(m.clone());
        }
        let path = d.path.clone();
        let meta = self
            .backend(|vfs| async move { vfs.stat(&path).await })
            .await?;
        self.table.get_mut(fd)?.meta = Some(meta.clone());
        Ok(meta)
    }

    /// The listing of the directory `fd`, fetched the first time.
    async fn listing_of(&mut self, fd: &Resource<Descriptor>) -> Result<Arc<Listing>> {
        let d = self.directory(fd)?;
        if let Some(l) = &d.listing {
            return Ok(l.clone());
        }
        let path = d.path.clone();
        let limit = usize::try_from(self.host.budget.limits.list_entries).unwrap_or(usize::MAX);
        let listing = {
            let path = path.clone();
            Arc::new(
                self.backend(|vfs| async move { vfs.list(&path, limit).await })
                    .await?,
            )
        };
        self.host.files.learn_listing(&path, &listing);
        self.table.get_mut(fd)?.listing = Some(listing.clone());
        Ok(listing)
    }

    /// Resolves `path` relative to the directory `fd` and finds its
    /// metadata: from what the run has learnt (listings, earlier stats),
    /// else from the backend.
    async fn lookup(&mut self, fd: &Resource<Descriptor>, path: &str) -> Result<(VPath, Meta)> {
        let d = self.directory(fd)?;
        let target = resolve_beneath(&d.path, &d.root, path)?;
        let meta = match self.host.files.known.get(&target) {
            Some(meta) => meta.clone(),
            None => {
                // A complete listing of the directory that lacks the name
                // says it is not there.
                if let (Some(listing), Some(_)) = (&d.listing, single_name(path))
                    && !listing.truncated
                {
                    return Err(ErrorCode::NoEntry.into());
                }
                let meta = {
                    let target = target.clone();
                    self.backend(|vfs| async move { vfs.stat(&target).await })
                        .await?
                };
                self.host.files.learn(target.clone(), meta.clone());
                meta
            }
        };
        if path.ends_with('/') && meta.kind != Kind::Directory {
            return Err(ErrorCode::NotDirectory.into());
        }
        Ok((target, meta))
    }
}

impl types::Host for FsView<'_> {
    fn convert_error_code(&mut self, err: Failure) -> wasmtime::Result<ErrorCode> {
        match err {
            Failure::Code(code) => Ok(code),
            Failure::Trap(e) => Err(e),
        }
    }

    async fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        // A document stream fails with the VFS error of its backend.
        Ok(self
            .table
            .get(&err)?
            .downcast_ref::<FsError>()
            .map(error_code))
    }
}

impl preopens::Host for FsView<'_> {
    async fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let mut mounts: Vec<VPath> = self.host.vfs.mounts().cloned().collect();
        mounts.sort();
        let mut preopens = Vec::with_capacity(mounts.len());
        for mount in mounts {
            let handle = match self.host.files.handles.take() {
                Ok(h) => h,
                // Only a script that opened ~1,000 handles and then asks
                // for the preopens again gets here: it gets fewer.
                Err(_) => break,
            };
            let name = mount.to_string();
            let fd = self.table.push(Descriptor {
                root: mount.clone(),
                path: mount,
                meta: None,
                listing: None,
                _handle: handle,
            })?;
            preopens.push((fd, name));
        }
        Ok(preopens)
    }
}

impl types::HostDescriptor for FsView<'_> {
    async fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
    ) -> Result<Resource<DynInputStream>> {
        let d = self.descriptor(&fd)?;
        if d.is_dir() {
            return Err(ErrorCode::IsDirectory.into());
        }
        let size = d.meta.as_ref().map_or(0, |m| m.size);
        let path = d.path.clone();
        tracing::trace!(%path, offset, "read-via-stream");
        let stream = stream::DocumentStream::new(
            self.host.vfs.clone(),
            path,
            offset..size,
            self.host.budget.meter(),
            self.host.budget.limits.bytes_read,
            self.host.budget.clock(),
            self.host.files.handles.take()?,
        );
        let stream: DynInputStream = Box::new(stream);
        Ok(self.table.push(stream)?)
    }

    async fn write_via_stream(
        &mut self,
        _fd: Resource<Descriptor>,
        _offset: Filesize,
    ) -> Result<Resource<DynOutputStream>> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn append_via_stream(
        &mut self,
        _fd: Resource<Descriptor>,
    ) -> Result<Resource<DynOutputStream>> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        _offset: Filesize,
        _length: Filesize,
        _advice: Advice,
    ) -> Result<()> {
        self.descriptor(&fd)?;
        Ok(())
    }

    async fn sync_data(&mut self, fd: Resource<Descriptor>) -> Result<()> {
        self.descriptor(&fd)?;
        Ok(())
    }

    async fn get_flags(&mut self, fd: Resource<Descriptor>) -> Result<DescriptorFlags> {
        self.descriptor(&fd)?;
        Ok(DescriptorFlags::READ)
    }

    async fn get_type(&mut self, fd: Resource<Descriptor>) -> Result<DescriptorType> {
        let d = self.descriptor(&fd)?;
        Ok(if d.is_dir() {
            DescriptorType::Directory
        } else {
            DescriptorType::RegularFile
        })
    }

    async fn set_size(&mut self, _fd: Resource<Descriptor>, _size: Filesize) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn set_times(
        &mut self,
        _fd: Resource<Descriptor>,
        _atime: NewTimestamp,
        _mtime: NewTimestamp,
    ) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn read(
        &mut self,
        fd: Resource<Descriptor>,
        length: Filesize,
        offset: Filesize,
    ) -> Result<(Vec<u8>, bool)> {
        let d = self.descriptor(&fd)?;
        if d.is_dir() {
            return Err(ErrorCode::IsDirectory.into());
        }
        let size = d.meta.as_ref().map_or(0, |m| m.size);
        let path = d.path.clone();
        tracing::trace!(%path, offset, length, "read");
        let wanted = offset..offset.saturating_add(length.min(MAX_READ_BYTES));
        let range = crate::vfs::clamp(&wanted, size);
        let len = range.end - range.start;
        if len == 0 {
            return Ok((Vec::new(), true));
        }
        self.host.budget.charge_read(&path, len)?;
        let bytes = self
            .backend(|vfs| async move { vfs.read_range(&path, range).await })
            .await?;
        // Never more than was charged, should the document have grown.
        let bytes = bytes.slice(..bytes.len().min(len as usize));
        let end = bytes.is_empty();
        Ok((bytes.to_vec(), end))
    }

    async fn write(
        &mut self,
        _fd: Resource<Descriptor>,
        _buffer: Vec<u8>,
        _offset: Filesize,
    ) -> Result<Filesize> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> Result<Resource<DirectoryEntries>> {
        let listing = self.listing_of(&fd).await?;
        let handle = self.host.files.handles.take()?;
        Ok(self.table.push(DirectoryEntries {
            listing,
            next: 0,
            _handle: handle,
        })?)
    }

    async fn sync(&mut self, fd: Resource<Descriptor>) -> Result<()> {
        self.descriptor(&fd)?;
        Ok(())
    }

    async fn create_directory_at(
        &mut self,
        _fd: Resource<Descriptor>,
        _path: String,
    ) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn stat(&mut self, fd: Resource<Descriptor>) -> Result<DescriptorStat> {
        Ok(descriptor_stat(&self.meta_of(&fd).await?))
    }

    async fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        _flags: PathFlags,
        path: String,
    ) -> Result<DescriptorStat> {
        let (_, meta) = self.lookup(&fd, &path).await?;
        Ok(descriptor_stat(&meta))
    }

    async fn set_times_at(
        &mut self,
        _fd: Resource<Descriptor>,
        _flags: PathFlags,
        _path: String,
        _atime: NewTimestamp,
        _mtime: NewTimestamp,
    ) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn link_at(
        &mut self,
        _fd: Resource<Descriptor>,
        _old_flags: PathFlags,
        _old_path: String,
        _new_fd: Resource<Descriptor>,
        _new_path: String,
    ) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        _path_flags: PathFlags,
        path: String,
        open_flags: OpenFlags,
        flags: DescriptorFlags,
    ) -> Result<Resource<Descriptor>> {
        let writes = OpenFlags::CREATE | OpenFlags::TRUNCATE | OpenFlags::EXCLUSIVE;
        if open_flags.intersects(writes)
            || flags.intersects(DescriptorFlags::WRITE | DescriptorFlags::MUTATE_DIRECTORY)
        {
            // Resolved all the same: a path out of its directory is refused
            // as such, whatever it asked for.
            self.directory(&fd)
                .and_then(|d| Ok(resolve_beneath(&d.path, &d.root, &path)?))?;
            return Err(ErrorCode::ReadOnly.into());
        }
        let root = self.directory(&fd)?.root.clone();
        let (target, meta) = self.lookup(&fd, &path).await?;
        if open_flags.contains(OpenFlags::DIRECTORY) && meta.kind != Kind::Directory {
            return Err(ErrorCode::NotDirectory.into());
        }
        if meta.kind == Kind::File {
            self.host.budget.charge_document(&target)?;
        }
        let handle = self.host.files.handles.take()?;
        Ok(self.table.push(Descriptor {
            path: target,
            root,
            meta: Some(meta),
            listing: None,
            _handle: handle,
        })?)
    }

    async fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> Result<String> {
        // The VFS shows no links (a local mount's are followed, within the
        // mount): whatever exists is not one, as `readlink` says of a file.
        self.lookup(&fd, &path).await?;
        Err(ErrorCode::Invalid.into())
    }

    async fn remove_directory_at(
        &mut self,
        _fd: Resource<Descriptor>,
        _path: String,
    ) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn rename_at(
        &mut self,
        _fd: Resource<Descriptor>,
        _old_path: String,
        _new_fd: Resource<Descriptor>,
        _new_path: String,
    ) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn symlink_at(
        &mut self,
        _fd: Resource<Descriptor>,
        _old_path: String,
        _new_path: String,
    ) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn unlink_file_at(&mut self, _fd: Resource<Descriptor>, _path: String) -> Result<()> {
        Err(ErrorCode::ReadOnly.into())
    }

    async fn is_same_object(
        &mut self,
        fd: Resource<Descriptor>,
        other: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        let a = self.table.get(&fd)?;
        let b = self.table.get(&other)?;
        Ok(a.path == b.path)
    }

    async fn metadata_hash(&mut self, fd: Resource<Descriptor>) -> Result<MetadataHashValue> {
        let meta = self.meta_of(&fd).await?;
        Ok(metadata_hash(&self.descriptor(&fd)?.path, &meta))
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        _flags: PathFlags,
        path: String,
    ) -> Result<MetadataHashValue> {
        let (target, meta) = self.lookup(&fd, &path).await?;
        Ok(metadata_hash(&target, &meta))
    }

    async fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.table.delete(fd)?;
        Ok(())
    }
}

impl types::HostDirectoryEntryStream for FsView<'_> {
    async fn read_directory_entry(
        &mut self,
        entries: Resource<DirectoryEntries>,
    ) -> Result<Option<DirectoryEntry>> {
        let entries = self.table.get_mut(&entries)?;
        let Some(e) = entries.listing.entries.get(entries.next) else {
            return Ok(None);
        };
        entries.next += 1;
        Ok(Some(DirectoryEntry {
            type_: descriptor_type(e.meta.kind),
            name: e.name.clone(),
        }))
    }

    async fn drop(&mut self, entries: Resource<DirectoryEntries>) -> wasmtime::Result<()> {
        self.table.delete(entries)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_names_are_answered_from_listings() {
        assert_eq!(single_name("a.txt"), Some("a.txt"));
        assert_eq!(single_name("dir/"), Some("dir"));
        for not in ["", ".", "..", "a/b", "./a", "/a", "a\0"] {
            assert_eq!(single_name(not), None, "{not:?}");
        }
    }

    #[test]
    fn handles_are_bounded_and_freed_when_dropped() {
        let handles = Handles::default();
        let held: Vec<Handle> = (0..MAX_OPEN_HANDLES)
            .map(|_| handles.take().expect("below the limit"))
            .collect();
        assert!(matches!(
            handles.take(),
            Err(Failure::Code(ErrorCode::Quota))
        ));
        drop(held);
        assert!(handles.take().is_ok(), "dropped handles free their places");
    }

    #[test]
    fn the_metadata_hash_changes_with_what_is_known() {
        let path = VPath::parse_absolute("/files/a").expect("path");
        let meta = |size| Meta {
            kind: Kind::File,
            size,
            modified: Some(UNIX_EPOCH + std::time::Duration::from_secs(1000)),
            mode: None,
            inode: None,
        };
        let words = |h: MetadataHashValue| (h.lower, h.upper);
        let a = words(metadata_hash(&path, &meta(1)));
        assert_eq!(a, words(metadata_hash(&path, &meta(1))));
        assert_ne!(a, words(metadata_hash(&path, &meta(2))));
        let other = VPath::parse_absolute("/files/b").expect("path");
        assert_ne!(a, words(metadata_hash(&other, &meta(1))));
    }
}
