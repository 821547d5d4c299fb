//! The read-only document filesystem, shaped like [`std::fs`].
//!
//! Paths are absolute (`/files/a.txt`) or relative to the script's working
//! directory ([`cwd`]); `.` and `..` are resolved by the host and never climb
//! above `/`. The root `/` lists the mounts.
//!
//! Every [`read`] of a new document counts against the script's
//! document-read cap, and every byte against its byte cap; when either is
//! spent the host ends the script. [`crate::budget::remaining`] tells how
//! much is left.

use std::time::{Duration, SystemTime};

use crate::wit::vfsbox::script::{fs as wit, types};
use crate::wit::wasi::clocks::wall_clock::Datetime;
use crate::{Error, Result};

/// Whether a path is a file or a directory.
///
/// ```no_run
/// use vfsbox_guest::fs::{self, FileType};
///
/// let kind = fs::metadata("/files")?.file_type();
/// assert_eq!(kind, FileType::Directory);
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileType {
    /// A document.
    File,
    /// A directory (or a mount).
    Directory,
}

impl From<types::Kind> for FileType {
    fn from(kind: types::Kind) -> Self {
        match kind {
            types::Kind::File => FileType::File,
            types::Kind::Directory => FileType::Directory,
        }
    }
}

/// A time the guest's clock can hold; `None` for one it cannot.
fn to_system_time(t: Option<Datetime>) -> Option<SystemTime> {
    let t = t?;
    let since_epoch = Duration::from_secs(t.seconds)
        .checked_add(Duration::from_nanos(u64::from(t.nanoseconds)))?;
    SystemTime::UNIX_EPOCH.checked_add(since_epoch)
}

/// Metadata of one path, from [`metadata`].
///
/// ```no_run
/// let meta = vfsbox_guest::fs::metadata("/files/README.md")?;
/// println!("{} is {} bytes", meta.path(), meta.len());
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    path: String,
    file_type: FileType,
    len: u64,
    modified: Option<SystemTime>,
}

impl Metadata {
    /// The absolute, normalised path.
    ///
    /// ```no_run
    /// let meta = vfsbox_guest::fs::metadata("/files/./a/../README.md")?;
    /// assert_eq!(meta.path(), "/files/README.md");
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// File or directory.
    ///
    /// ```no_run
    /// let meta = vfsbox_guest::fs::metadata("/files")?;
    /// assert_eq!(meta.file_type(), vfsbox_guest::fs::FileType::Directory);
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn file_type(&self) -> FileType {
        self.file_type
    }

    /// Whether the path is a directory.
    ///
    /// ```no_run
    /// assert!(vfsbox_guest::fs::metadata("/")?.is_dir());
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn is_dir(&self) -> bool {
        self.file_type == FileType::Directory
    }

    /// Whether the path is a document.
    ///
    /// ```no_run
    /// assert!(vfsbox_guest::fs::metadata("/files/README.md")?.is_file());
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn is_file(&self) -> bool {
        self.file_type == FileType::File
    }

    /// Size in bytes (0 for directories).
    ///
    /// ```no_run
    /// let size = vfsbox_guest::fs::metadata("/files/README.md")?.len();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Last modification time, when the backend knows it.
    ///
    /// ```no_run
    /// if let Some(when) = vfsbox_guest::fs::metadata("/files/README.md")?.modified() {
    ///     println!("{when:?}");
    /// }
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn modified(&self) -> Option<SystemTime> {
        self.modified
    }
}

impl From<types::Metadata> for Metadata {
    fn from(m: types::Metadata) -> Self {
        Metadata {
            path: m.path,
            file_type: m.kind.into(),
            len: m.size,
            modified: to_system_time(m.modified),
        }
    }
}

/// One entry of a directory, from [`read_dir`] or [`walk`].
///
/// ```no_run
/// for entry in vfsbox_guest::fs::read_dir("/files")? {
///     println!("{} {}", entry.path(), entry.len());
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    path: String,
    name: String,
    file_type: FileType,
    len: u64,
    modified: Option<SystemTime>,
    depth: usize,
}

impl DirEntry {
    fn new(parent: &str, e: wit::DirEntry, depth: usize) -> Self {
        DirEntry {
            path: join(parent, &e.name),
            name: e.name,
            file_type: e.kind.into(),
            len: e.size,
            modified: to_system_time(e.modified),
            depth,
        }
    }

    /// The entry's path: the listed directory joined with [`Self::name`].
    ///
    /// ```no_run
    /// let entry = vfsbox_guest::fs::read_dir("/files")?.into_iter().next();
    /// if let Some(entry) = entry {
    ///     assert!(entry.path().starts_with("/files/"));
    /// }
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The entry's name within its directory.
    ///
    /// ```no_run
    /// let names: Vec<String> = vfsbox_guest::fs::read_dir("/")?
    ///     .into_iter()
    ///     .map(|e| e.name().to_owned())
    ///     .collect();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// File or directory.
    ///
    /// ```no_run
    /// use vfsbox_guest::fs::{self, FileType};
    ///
    /// let files = fs::read_dir("/files")?
    ///     .into_iter()
    ///     .filter(|e| e.file_type() == FileType::File)
    ///     .count();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn file_type(&self) -> FileType {
        self.file_type
    }

    /// Whether the entry is a directory.
    ///
    /// ```no_run
    /// let dirs = vfsbox_guest::fs::read_dir("/files")?.into_iter().filter(|e| e.is_dir()).count();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn is_dir(&self) -> bool {
        self.file_type == FileType::Directory
    }

    /// Whether the entry is a document.
    ///
    /// ```no_run
    /// let docs = vfsbox_guest::fs::read_dir("/files")?.into_iter().filter(|e| e.is_file()).count();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn is_file(&self) -> bool {
        self.file_type == FileType::File
    }

    /// Size in bytes (0 for directories).
    ///
    /// ```no_run
    /// let total: u64 = vfsbox_guest::fs::read_dir("/files")?.into_iter().map(|e| e.len()).sum();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Last modification time, when the backend knows it.
    ///
    /// ```no_run
    /// for entry in vfsbox_guest::fs::read_dir("/files")? {
    ///     println!("{}: {:?}", entry.name(), entry.modified());
    /// }
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn modified(&self) -> Option<SystemTime> {
        self.modified
    }

    /// How deep below the root of a [`walk`] the entry is: 1 for the root's
    /// own entries. Entries from [`read_dir`] have depth 1.
    ///
    /// ```no_run
    /// for entry in vfsbox_guest::fs::walk("/files") {
    ///     let entry = entry?;
    ///     println!("{}{}", "  ".repeat(entry.depth() - 1), entry.name());
    /// }
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn depth(&self) -> usize {
        self.depth
    }
}

/// A directory listing, from [`read_dir`]. Iterate it for the entries, in
/// the backend's order (a local directory's readdir order; name order on
/// S3): sort them when the order matters.
///
/// ```no_run
/// let listing = vfsbox_guest::fs::read_dir("/files")?;
/// if listing.is_truncated() {
///     eprintln!("only the first {} entries", listing.len());
/// }
/// for entry in listing {
///     println!("{}", entry.name());
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadDir {
    entries: Vec<DirEntry>,
    truncated: bool,
}

impl ReadDir {
    /// True when the directory holds more entries than the host returns in
    /// one listing; the entries present are the first ones in its order.
    ///
    /// ```no_run
    /// let truncated = vfsbox_guest::fs::read_dir("/files")?.is_truncated();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// Number of entries returned.
    ///
    /// ```no_run
    /// let n = vfsbox_guest::fs::read_dir("/files")?.len();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the directory is empty.
    ///
    /// ```no_run
    /// let empty = vfsbox_guest::fs::read_dir("/files")?.is_empty();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in the backend's order.
    ///
    /// ```no_run
    /// let listing = vfsbox_guest::fs::read_dir("/files")?;
    /// let first = listing.entries().first();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn entries(&self) -> &[DirEntry] {
        &self.entries
    }
}

impl IntoIterator for ReadDir {
    type Item = DirEntry;
    type IntoIter = std::vec::IntoIter<DirEntry>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

/// The script's working directory, absolute.
///
/// ```no_run
/// println!("running in {}", vfsbox_guest::fs::cwd());
/// ```
pub fn cwd() -> String {
    wit::cwd()
}

/// Changes the working directory to an existing directory, like `cd`, and
/// returns it, absolute and normalised. Relative paths resolve against it
/// from then on.
///
/// ```no_run
/// let now = vfsbox_guest::fs::set_cwd("/files/reports")?;
/// assert_eq!(now, "/files/reports");
/// let text = vfsbox_guest::fs::read_to_string("q3.csv")?; // /files/reports/q3.csv
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn set_cwd(path: impl AsRef<str>) -> Result<String> {
    Ok(wit::set_cwd(path.as_ref())?)
}

/// Metadata of a path.
///
/// ```no_run
/// use vfsbox_guest::{fs, Error};
///
/// match fs::metadata("/files/report.pdf") {
///     Ok(meta) => println!("{} bytes", meta.len()),
///     Err(Error::NotFound(_)) => println!("no report yet"),
///     Err(e) => return Err(e),
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn metadata(path: impl AsRef<str>) -> Result<Metadata> {
    Ok(wit::stat(path.as_ref())?.into())
}

/// The permission bits of a path (`0o7777` at most), as `ls -l` shows them:
/// a local mount's own, else `0o644` for a document and `0o755` for a
/// directory. The filesystem is read-only whatever they say.
///
/// ```no_run
/// let mode = vfsbox_guest::fs::mode("/files/README.md")?;
/// println!("{mode:o}");
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn mode(path: impl AsRef<str>) -> Result<u32> {
    Ok(wit::mode(path.as_ref())?)
}

/// What a Linux filesystem keeps of a path besides its [`Metadata`] and
/// [`mode`], from [`attributes`]: a local mount's own; where the backend
/// keeps none (S3, memory), inode and device 0, the modification time for
/// access and change, and no creation time.
///
/// ```no_run
/// let attrs = vfsbox_guest::fs::attributes("/files/README.md")?;
/// println!("inode {} mode {:o}", attrs.inode(), attrs.mode());
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attributes {
    mode: u32,
    inode: u64,
    device: u64,
    accessed: Option<SystemTime>,
    changed: Option<SystemTime>,
    created: Option<SystemTime>,
}

impl Attributes {
    /// The permission bits, as [`mode`] gives them.
    pub fn mode(&self) -> u32 {
        self.mode
    }

    /// The inode number; 0 where the backend keeps none.
    pub fn inode(&self) -> u64 {
        self.inode
    }

    /// The device the inode is on (`st_dev`); 0 where none is kept.
    pub fn device(&self) -> u64 {
        self.device
    }

    /// Last access, when known.
    pub fn accessed(&self) -> Option<SystemTime> {
        self.accessed
    }

    /// Last status change, when known.
    pub fn changed(&self) -> Option<SystemTime> {
        self.changed
    }

    /// Creation (birth), where the backend records it.
    pub fn created(&self) -> Option<SystemTime> {
        self.created
    }
}

/// The [`Attributes`] of a path: its inode number and times of access and
/// status change, beside its mode.
///
/// ```no_run
/// let attrs = vfsbox_guest::fs::attributes("/files")?;
/// if let Some(when) = attrs.changed() {
///     println!("changed {when:?}");
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn attributes(path: impl AsRef<str>) -> Result<Attributes> {
    let a = wit::attributes(path.as_ref())?;
    Ok(Attributes {
        mode: a.mode,
        inode: a.inode,
        device: a.device,
        accessed: to_system_time(a.accessed),
        changed: to_system_time(a.changed),
        created: to_system_time(a.created),
    })
}

/// Whether anything exists at the path. Errors other than "not found" count
/// as existing.
///
/// ```no_run
/// if vfsbox_guest::fs::exists("/files/README.md") {
///     println!("there is a readme");
/// }
/// ```
pub fn exists(path: impl AsRef<str>) -> bool {
    !matches!(metadata(path), Err(Error::NotFound(_)))
}

/// The entries of a directory, in the backend's order (a local directory's
/// readdir order, name order on S3).
///
/// ```no_run
/// for entry in vfsbox_guest::fs::read_dir("/")? {
///     println!("mount: {}", entry.path());
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn read_dir(path: impl AsRef<str>) -> Result<ReadDir> {
    let dir = metadata(path.as_ref())?;
    list(dir.path(), 1)
}

fn list(dir: &str, depth: usize) -> Result<ReadDir> {
    let listing = wit::list_dir(dir)?;
    Ok(ReadDir {
        entries: listing
            .entries
            .into_iter()
            .map(|e| DirEntry::new(dir, e, depth))
            .collect(),
        truncated: listing.truncated,
    })
}

/// The whole document as bytes.
///
/// ```no_run
/// let bytes = vfsbox_guest::fs::read("/files/logo.png")?;
/// println!("{} bytes", bytes.len());
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn read(path: impl AsRef<str>) -> Result<Vec<u8>> {
    Ok(wit::read(path.as_ref())?)
}

/// The whole document as text; [`Error::InvalidUtf8`] if it is not UTF-8.
///
/// ```no_run
/// let text = vfsbox_guest::fs::read_to_string("/files/README.md")?;
/// println!("{} lines", text.lines().count());
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn read_to_string(path: impl AsRef<str>) -> Result<String> {
    let path = path.as_ref();
    String::from_utf8(read(path)?).map_err(|_| Error::InvalidUtf8(path.to_owned()))
}

/// Up to `len` bytes of a document starting at byte `offset`; fewer at the
/// end of the document, none past it.
///
/// ```no_run
/// // The first kilobyte, for example to sniff a file type.
/// let head = vfsbox_guest::fs::read_range("/files/big.log", 0, 1024)?;
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn read_range(path: impl AsRef<str>, offset: u64, len: u64) -> Result<Vec<u8>> {
    Ok(wit::read_range(path.as_ref(), offset, len)?)
}

/// Walks the tree under a directory, depth first, entries of each directory
/// in name order. The walk is lazy: each directory is listed when the walk
/// reaches it. Errors (such as a directory removed meanwhile) are yielded and
/// the walk goes on.
///
/// ```no_run
/// let mut total = 0;
/// for entry in vfsbox_guest::fs::walk("/files") {
///     let entry = entry?;
///     if entry.is_file() && entry.name().ends_with(".md") {
///         total += entry.len();
///     }
/// }
/// println!("{total} bytes of markdown");
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
pub fn walk(root: impl AsRef<str>) -> Walk {
    Walk {
        root: Some(root.as_ref().to_owned()),
        stack: Vec::new(),
        deferred: None,
        truncated: Vec::new(),
    }
}

/// The iterator returned by [`walk`].
///
/// ```no_run
/// let dirs = vfsbox_guest::fs::walk("/files")
///     .filter_map(Result::ok)
///     .filter(|e| e.is_dir())
///     .count();
/// ```
#[derive(Debug)]
pub struct Walk {
    root: Option<String>,
    /// Entries still to visit, per open directory, in reverse order.
    stack: Vec<Vec<DirEntry>>,
    /// An error listing the directory yielded last, to yield next.
    deferred: Option<Error>,
    /// Directories whose listing was cut at the per-call cap.
    truncated: Vec<String>,
}

impl Walk {
    fn push(&mut self, dir: &str, depth: usize) -> Result<()> {
        let listing = list(dir, depth)?;
        if listing.truncated {
            self.truncated.push(dir.to_owned());
        }
        let mut entries = listing.entries;
        entries.reverse();
        self.stack.push(entries);
        Ok(())
    }

    /// The directories reached so far whose listing was cut at the host's
    /// per-call cap (10,000 entries by default): the walk did not see all
    /// of their entries.
    ///
    /// ```no_run
    /// let mut walk = vfsbox_guest::fs::walk("/files");
    /// let files = walk.by_ref().filter_map(Result::ok).filter(|e| e.is_file()).count();
    /// for dir in walk.truncated_dirs() {
    ///     eprintln!("{dir}: more entries than one listing holds; counted {files} in all");
    /// }
    /// ```
    pub fn truncated_dirs(&self) -> &[String] {
        &self.truncated
    }
}

impl Iterator for Walk {
    type Item = Result<DirEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(root) = self.root.take() {
            let dir = match metadata(&root) {
                Ok(meta) if meta.is_dir() => meta.path,
                Ok(_) => return Some(Err(Error::NotADirectory(root))),
                Err(e) => return Some(Err(e)),
            };
            if let Err(e) = self.push(&dir, 1) {
                return Some(Err(e));
            }
        }
        if let Some(e) = self.deferred.take() {
            return Some(Err(e));
        }
        loop {
            let top = self.stack.last_mut()?;
            let Some(entry) = top.pop() else {
                self.stack.pop();
                continue;
            };
            if entry.is_dir() {
                self.deferred = self.push(&entry.path, entry.depth + 1).err();
            }
            return Some(Ok(entry));
        }
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}
