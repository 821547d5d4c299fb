//! The filesystem the shell reads, as a small trait.
//!
//! The wasm build implements it over the vfsbox SDK (see `main.rs`); native
//! tests implement it over a real directory ([`crate::dirfs`]). Keeping the
//! shell behind this trait is what lets every command be tested natively and
//! compared with GNU tools.

use std::ops::Range;
use std::time::SystemTime;

/// The most roots one [`Fs::grep`] call may take (the host's limit).
pub const MAX_GREP_ROOTS: usize = 64;

/// A failure from the filesystem, mirroring `vfsbox_guest::Error`.
///
/// Each variant carries the host's detail (usually the path); commands print
/// the path the user wrote instead, with [`FsError::strerror`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsError {
    /// Nothing exists at the path.
    NotFound(String),
    /// A path component that must be a directory is a file.
    NotADirectory(String),
    /// A directory where a file was expected.
    IsADirectory(String),
    /// A malformed path (NUL byte, too long, not UTF-8).
    InvalidPath(String),
    /// The path exists but may not be read.
    Denied(String),
    /// The backend failed or refused the input (such as a bad pattern).
    Unavailable(String),
}

impl FsError {
    /// The C library's wording for the error, as GNU tools print it.
    pub fn strerror(&self) -> &'static str {
        match self {
            FsError::NotFound(_) => "No such file or directory",
            FsError::NotADirectory(_) => "Not a directory",
            FsError::IsADirectory(_) => "Is a directory",
            // The host says why ("\"\": the path is empty"); GNU tools see
            // ENOENT for an empty path and ENAMETOOLONG for a long one.
            FsError::InvalidPath(why) if why.contains("empty") => "No such file or directory",
            FsError::InvalidPath(why) if why.contains("longer") => "File name too long",
            FsError::InvalidPath(_) => "Invalid argument",
            FsError::Denied(_) => "Permission denied",
            FsError::Unavailable(_) => "Input/output error",
        }
    }
}

/// The size a directory shows, as on a Linux filesystem with 4 KiB blocks
/// (`ls -l`, `find -size`, `stat`): the document store keeps none of its
/// own, and agents expect Linux's.
pub const DIR_SIZE: u64 = 4096;

/// The size of the pieces a document is streamed in: commands that work a
/// line or a block at a time never hold more of it than this.
pub const PIECE: u64 = 1 << 20;

/// The permission bits shown for a document where the filesystem keeps
/// none (S3, memory).
pub const DEFAULT_FILE_MODE: u32 = 0o644;
/// The permission bits shown for a directory where the filesystem keeps
/// none.
pub const DEFAULT_DIR_MODE: u32 = 0o755;

/// `ls -l`'s ten characters for a kind and its permission bits:
/// `drwxr-xr-x`, with setuid, setgid and sticky as `s`/`S` and `t`/`T`.
pub fn mode_string(kind: Kind, mode: u32) -> String {
    let mut s = String::with_capacity(10);
    s.push(if kind == Kind::Dir { 'd' } else { '-' });
    for (shift, special, set) in [(6, 0o4000, 's'), (3, 0o2000, 's'), (0, 0o1000, 't')] {
        let has = |bit: u32| mode & (bit << shift) != 0;
        s.push(if has(0o4) { 'r' } else { '-' });
        s.push(if has(0o2) { 'w' } else { '-' });
        s.push(match (mode & special != 0, has(0o1)) {
            (true, true) => set,
            (true, false) => set.to_ascii_uppercase(),
            (false, true) => 'x',
            (false, false) => '-',
        });
    }
    s
}

/// An open document ([`Fs::open`]): a reader of its bytes, and how many
/// there are.
pub type Opened = (Box<dyn std::io::Read>, u64);

/// Whether a path names a document or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A document.
    File,
    /// A directory (or a mount, or `/`).
    Dir,
}

/// Metadata of one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The absolute, normalised path.
    pub path: String,
    /// File or directory.
    pub kind: Kind,
    /// Size in bytes ([`DIR_SIZE`] for directories).
    pub len: u64,
    /// Last modification, when known.
    pub modified: Option<SystemTime>,
}

impl Kind {
    /// The permission bits of this kind where the filesystem keeps none.
    pub fn default_mode(self) -> u32 {
        match self {
            Kind::File => DEFAULT_FILE_MODE,
            Kind::Dir => DEFAULT_DIR_MODE,
        }
    }
}

impl Meta {
    /// Whether the path is a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }
}

/// What a Linux filesystem keeps of a path besides its [`Meta`]: a local
/// mount's own; where the backend keeps none, inode 0 and the modification
/// time for both times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attrs {
    /// The permission bits (`0o7777` at most).
    pub mode: u32,
    /// The inode number; 0 where none is kept.
    pub inode: u64,
    /// The device it is on (`st_dev`); 0 where none is kept.
    pub device: u64,
    /// Last access, when known.
    pub accessed: Option<SystemTime>,
    /// Last status change, when known.
    pub changed: Option<SystemTime>,
    /// Creation (birth), when known.
    pub created: Option<SystemTime>,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name within the directory.
    pub name: String,
    /// File or directory.
    pub kind: Kind,
    /// Size in bytes ([`DIR_SIZE`] for directories).
    pub len: u64,
    /// Last modification, when known.
    pub modified: Option<SystemTime>,
}

impl Entry {
    /// Whether the entry is a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }
}

/// What a host-side search looks for; mirrors `vfsbox_guest::search::Grep`.
///
/// Patterns are in the Rust `regex` syntax (the shell translates POSIX
/// basic and extended expressions first) unless `fixed_strings` is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrepRequest {
    /// A line matches when any pattern does.
    pub patterns: Vec<String>,
    /// Patterns are literal text.
    pub fixed_strings: bool,
    /// Match regardless of case.
    pub ignore_case: bool,
    /// Ignore case unless a pattern has an upper-case letter.
    pub smart_case: bool,
    /// Whole words only.
    pub whole_word: bool,
    /// Select the lines that do not match.
    pub invert: bool,
    /// Context lines before each selected line.
    pub before_context: u32,
    /// Context lines after each selected line.
    pub after_context: u32,
    /// Selected lines per file, at most.
    pub max_count: Option<u64>,
    /// Only files whose name matches one of these globs.
    pub include: Vec<String>,
    /// No files or directories whose name matches one of these globs.
    pub exclude: Vec<String>,
    /// Report files without selected lines too (for `-c` and `-L`).
    pub include_non_matching: bool,
    /// Count the selected lines and return none (`-c`, `-l`, `-L`, `-q`):
    /// a count over a large document then holds no copy of its lines.
    pub count_only: bool,
}

/// One reported line of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepLine {
    /// A selected line (`true`) or context around one (`false`).
    pub is_match: bool,
    /// 1-based line number.
    pub line_number: u64,
    /// The line without its terminator.
    pub text: Vec<u8>,
    /// Byte ranges of each match within `text` (empty for context and
    /// inverted matches).
    pub matches: Vec<Range<usize>>,
}

/// The lines reported for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHits {
    /// The file's absolute path.
    pub path: String,
    /// Selected lines in the file (after `max_count`).
    pub match_count: u64,
    /// Selected and context lines, in order; none for a binary file (one
    /// with a NUL byte), whose selected lines are only counted.
    pub lines: Vec<GrepLine>,
}

/// How far a search got before the scan budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// Files searched.
    pub files_searched: u64,
    /// Files under the roots that were not reached.
    pub files_not_reached: u64,
}

/// The outcome of a search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrepResult {
    /// Files with selected lines (and without, when asked), in walk order:
    /// root by root, each directory depth first with entries in listing
    /// order (see [`Fs::read_dir`]).
    pub files: Vec<FileHits>,
    /// Files searched by this call.
    pub files_scanned: u64,
    /// Roots or files that could not be searched, with the reason.
    pub errors: Vec<(String, FsError)>,
    /// Set when the result is partial.
    pub truncated: Option<Truncation>,
}

/// Read access to the document filesystem.
///
/// Paths may be absolute or relative to [`Fs::cwd`]; the implementation
/// resolves them (`.`, `..`, `~`) the way the vfsbox host does.
pub trait Fs {
    /// The working directory, absolute.
    fn cwd(&mut self) -> String;
    /// Changes the working directory; returns it, absolute and normalised.
    fn set_cwd(&mut self, path: &str) -> Result<String, FsError>;
    /// Metadata of a path.
    fn metadata(&mut self, path: &str) -> Result<Meta, FsError>;
    /// The permission bits of a path (`0o7777` at most); by default those
    /// of a filesystem that keeps none.
    fn mode(&mut self, path: &str) -> Result<u32, FsError> {
        Ok(self.metadata(path)?.kind.default_mode())
    }
    /// The inode and times of a path; by default those of a filesystem
    /// that keeps none (inode 0, the modification time for both times).
    fn attributes(&mut self, path: &str) -> Result<Attrs, FsError> {
        let modified = self.metadata(path)?.modified;
        Ok(Attrs {
            mode: self.mode(path)?,
            inode: 0,
            device: 0,
            accessed: modified,
            changed: modified,
            created: None,
        })
    }
    /// The entries of a directory in the backend's order: the kernel's
    /// (readdir) order for a local directory, as GNU `find`, `du` and
    /// `grep -r` walk it; name order for S3 and memory. Commands that list
    /// by name (`ls`, globs, `tree`, `diff -r`) sort for themselves.
    fn read_dir(&mut self, path: &str) -> Result<Vec<Entry>, FsError>;
    /// The whole document.
    fn read(&mut self, path: &str) -> Result<Vec<u8>, FsError>;
    /// Up to `len` bytes of the document from `offset`; fewer at its end.
    fn read_range(&mut self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, FsError>;
    /// Searches the files under `roots` (at most [`MAX_GREP_ROOTS`]);
    /// binary files (with a NUL byte) are skipped.
    fn grep(&mut self, roots: &[String], req: &GrepRequest) -> Result<GrepResult, FsError>;
    /// A reader of a document's bytes, for standard input (`< FILE`, a
    /// `cat` into a pipe): it does not borrow the filesystem, and where the
    /// backend allows it reads a [`PIECE`] at a time as it is read, so that
    /// a command that streams its input never holds the document whole.
    /// A directory is an error. By default it reads the document whole
    /// now.
    fn open(&mut self, path: &str) -> Result<Opened, FsError> {
        let data = self.read(path)?;
        let len = data.len() as u64;
        Ok((Box::new(std::io::Cursor::new(data)), len))
    }
}
