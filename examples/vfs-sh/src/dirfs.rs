//! [`Fs`] over real directories, for native tests and debugging: each
//! mount maps a top-level name (`/files`) to a directory on disk, and paths
//! resolve the way the vfsbox host resolves them (`~` is `/`, `..` never
//! climbs above `/`, `/` lists the mounts).
//!
//! Its search stands in for the host's: the same walk order, the same
//! include/exclude rules, binary files skipped, lines found with the
//! in-guest matcher. An optional scan limit exercises partial results.

use std::path::{Path, PathBuf};

use crate::fs::{
    Entry, FileHits, Fs, FsError, GrepRequest, GrepResult, Kind, Meta, Opened, Truncation,
};
use crate::glob::Pattern;
use crate::search::Matcher;

/// Real directories mounted under `/`.
#[derive(Debug, Clone)]
pub struct DirFs {
    mounts: Vec<(String, PathBuf)>,
    cwd: String,
    scan_limit: Option<u64>,
    scanned: u64,
}

impl Default for DirFs {
    fn default() -> Self {
        DirFs::new()
    }
}

fn io_error(e: &std::io::Error, path: &str) -> FsError {
    use std::io::ErrorKind as K;
    let p = path.to_owned();
    match e.kind() {
        K::NotFound => FsError::NotFound(p),
        K::NotADirectory => FsError::NotADirectory(p),
        K::IsADirectory => FsError::IsADirectory(p),
        K::PermissionDenied => FsError::Denied(p),
        _ => FsError::Unavailable(format!("{path}: {e}")),
    }
}

impl DirFs {
    /// No mounts; the working directory is `/`.
    pub fn new() -> DirFs {
        DirFs {
            mounts: Vec::new(),
            cwd: "/".to_owned(),
            scan_limit: None,
            scanned: 0,
        }
    }

    /// Mounts `dir` at `/name`.
    pub fn mount(mut self, name: &str, dir: impl Into<PathBuf>) -> DirFs {
        self.mounts
            .push((name.trim_matches('/').to_owned(), dir.into()));
        self.mounts.sort();
        self
    }

    /// Sets the working directory (absolute).
    pub fn with_cwd(mut self, cwd: &str) -> DirFs {
        self.cwd = cwd.to_owned();
        self
    }

    /// Lets searches scan at most `files` files in total, like the host's
    /// scan budget.
    pub fn with_scan_limit(mut self, files: u64) -> DirFs {
        self.scan_limit = Some(files);
        self
    }

    /// Resolves a path to its normalised absolute virtual form.
    fn resolve(&self, input: &str) -> Result<String, FsError> {
        if input.is_empty() {
            return Err(FsError::InvalidPath("\"\": the path is empty".to_owned()));
        }
        if input.contains('\0') || input.len() > 4096 {
            return Err(FsError::InvalidPath(format!("{input:?}: invalid")));
        }
        let joined = if input == "~" || input.starts_with("~/") {
            format!("/{}", &input[1..])
        } else if input.starts_with('/') {
            input.to_owned()
        } else {
            format!("{}/{input}", self.cwd)
        };
        let mut parts: Vec<&str> = Vec::new();
        for c in joined.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                c => parts.push(c),
            }
        }
        Ok(format!("/{}", parts.join("/")))
    }

    /// A document to read: its virtual path and its real one (a directory
    /// is refused).
    fn readable(&mut self, path: &str) -> Result<(String, PathBuf), FsError> {
        let v = self.resolve(path)?;
        let real = self
            .real(&v)?
            .ok_or_else(|| FsError::IsADirectory(v.clone()))?;
        if real.is_dir() {
            return Err(FsError::IsADirectory(v));
        }
        Ok((v, real))
    }

    /// The real path of a virtual one; `None` for `/`.
    fn real(&self, vpath: &str) -> Result<Option<PathBuf>, FsError> {
        let mut comps = vpath.split('/').filter(|c| !c.is_empty());
        let Some(first) = comps.next() else {
            return Ok(None);
        };
        let (_, dir) = self
            .mounts
            .iter()
            .find(|(n, _)| n == first)
            .ok_or_else(|| FsError::NotFound(vpath.to_owned()))?;
        let mut p = dir.clone();
        for c in comps {
            p.push(c);
        }
        Ok(Some(p))
    }

    fn meta_of(
        path: &Path,
        vpath: &str,
    ) -> Result<(Kind, u64, Option<std::time::SystemTime>), FsError> {
        let m = std::fs::metadata(path).map_err(|e| io_error(&e, vpath))?;
        let kind = if m.is_dir() { Kind::Dir } else { Kind::File };
        let len = if m.is_dir() {
            crate::fs::DIR_SIZE
        } else {
            m.len()
        };
        Ok((kind, len, m.modified().ok()))
    }

    /// Lists the files under `root` (absolute) the way the host does.
    fn collect(
        &mut self,
        root: &str,
        req: &GrepRequest,
        out: &mut Vec<String>,
    ) -> Result<(), FsError> {
        let include: Vec<Pattern> = req.include.iter().map(|g| Pattern::new(g)).collect();
        let exclude: Vec<Pattern> = req.exclude.iter().map(|g| Pattern::new(g)).collect();
        let wanted = |name: &str| {
            !exclude.iter().any(|p| p.matches(name, false))
                && (include.is_empty() || include.iter().any(|p| p.matches(name, false)))
        };
        let meta = self.metadata(root)?;
        if meta.kind == Kind::File {
            let name = root.rsplit('/').next().unwrap_or(root);
            if wanted(name) {
                out.push(root.to_owned());
            }
            return Ok(());
        }
        let mut stack = vec![(root.to_owned(), Kind::Dir)];
        while let Some((path, kind)) = stack.pop() {
            if kind == Kind::File {
                out.push(path);
                continue;
            }
            let entries = self.read_dir(&path)?;
            for e in entries.into_iter().rev() {
                if e.kind == Kind::Dir || wanted(&e.name) {
                    let child = if path == "/" {
                        format!("/{}", e.name)
                    } else {
                        format!("{path}/{}", e.name)
                    };
                    stack.push((child, e.kind));
                }
            }
        }
        Ok(())
    }
}

impl Fs for DirFs {
    fn cwd(&mut self) -> String {
        self.cwd.clone()
    }

    fn set_cwd(&mut self, path: &str) -> Result<String, FsError> {
        let m = self.metadata(path)?;
        if m.kind != Kind::Dir {
            return Err(FsError::NotADirectory(m.path));
        }
        self.cwd = m.path.clone();
        Ok(m.path)
    }

    fn metadata(&mut self, path: &str) -> Result<Meta, FsError> {
        let v = self.resolve(path)?;
        match self.real(&v)? {
            None => Ok(Meta {
                path: v,
                kind: Kind::Dir,
                len: crate::fs::DIR_SIZE,
                modified: None,
            }),
            Some(real) => {
                let (kind, len, modified) = DirFs::meta_of(&real, &v)?;
                Ok(Meta {
                    path: v,
                    kind,
                    len,
                    modified,
                })
            }
        }
    }

    fn mode(&mut self, path: &str) -> Result<u32, FsError> {
        use std::os::unix::fs::PermissionsExt;
        let v = self.resolve(path)?;
        match self.real(&v)? {
            None => Ok(crate::fs::DEFAULT_DIR_MODE),
            Some(real) => std::fs::metadata(&real)
                .map(|m| m.permissions().mode() & 0o7777)
                .map_err(|e| io_error(&e, &v)),
        }
    }

    fn attributes(&mut self, path: &str) -> Result<crate::fs::Attrs, FsError> {
        use std::os::unix::fs::MetadataExt;
        let v = self.resolve(path)?;
        match self.real(&v)? {
            None => Ok(crate::fs::Attrs {
                mode: crate::fs::DEFAULT_DIR_MODE,
                inode: 0,
                device: 0,
                accessed: None,
                changed: None,
                created: None,
            }),
            Some(real) => {
                let m = std::fs::metadata(&real).map_err(|e| io_error(&e, &v))?;
                let changed = u64::try_from(m.ctime()).ok().map(|s| {
                    std::time::UNIX_EPOCH
                        + std::time::Duration::new(s, u32::try_from(m.ctime_nsec()).unwrap_or(0))
                });
                Ok(crate::fs::Attrs {
                    mode: m.mode() & 0o7777,
                    inode: m.ino(),
                    device: m.dev(),
                    accessed: m.accessed().ok(),
                    changed,
                    created: m.created().ok(),
                })
            }
        }
    }

    fn read_dir(&mut self, path: &str) -> Result<Vec<Entry>, FsError> {
        let v = self.resolve(path)?;
        let Some(real) = self.real(&v)? else {
            // Each mount point with its directory's time, as the host
            // lists a mount point with its root's metadata.
            return Ok(self
                .mounts
                .iter()
                .map(|(n, dir)| Entry {
                    name: n.clone(),
                    kind: Kind::Dir,
                    len: crate::fs::DIR_SIZE,
                    modified: std::fs::metadata(dir).and_then(|m| m.modified()).ok(),
                })
                .collect());
        };
        let rd = std::fs::read_dir(&real).map_err(|e| io_error(&e, &v))?;
        let mut entries = Vec::new();
        for e in rd {
            let e = e.map_err(|e| io_error(&e, &v))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let (kind, len, modified) = DirFs::meta_of(&e.path(), &v)?;
            entries.push(Entry {
                name,
                kind,
                len,
                modified,
            });
        }
        // In the order the kernel returns them, as the host's local
        // backend lists them (see `Fs::read_dir`).
        Ok(entries)
    }

    fn read(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        let (v, real) = self.readable(path)?;
        std::fs::read(&real).map_err(|e| io_error(&e, &v))
    }

    fn read_range(&mut self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, FsError> {
        use std::io::{Read, Seek, SeekFrom};
        let (v, real) = self.readable(path)?;
        // Only the range is read, as the host's `read-range` does, so that
        // a document streamed in pieces is read once, not once a piece.
        let mut file = std::fs::File::open(&real).map_err(|e| io_error(&e, &v))?;
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| io_error(&e, &v))?;
        let mut data = Vec::new();
        file.take(len)
            .read_to_end(&mut data)
            .map_err(|e| io_error(&e, &v))?;
        Ok(data)
    }

    fn open(&mut self, path: &str) -> Result<Opened, FsError> {
        let (v, real) = self.readable(path)?;
        let file = std::fs::File::open(&real).map_err(|e| io_error(&e, &v))?;
        let len = file.metadata().map_err(|e| io_error(&e, &v))?.len();
        Ok((Box::new(file), len))
    }

    fn grep(&mut self, roots: &[String], req: &GrepRequest) -> Result<GrepResult, FsError> {
        let matcher =
            Matcher::new(req).map_err(|e| FsError::Unavailable(format!("bad pattern: {e}")))?;
        let mut result = GrepResult::default();
        let mut files = Vec::new();
        for root in roots {
            let abs = self.resolve(root)?;
            if let Err(e) = self.collect(&abs, req, &mut files) {
                result.errors.push((abs, e));
            }
        }
        let total = files.len() as u64;
        for (i, path) in files.iter().enumerate() {
            if self.scan_limit.is_some_and(|l| self.scanned >= l) {
                result.truncated = Some(Truncation {
                    files_searched: i as u64,
                    files_not_reached: total - i as u64,
                });
                break;
            }
            self.scanned += 1;
            result.files_scanned += 1;
            let data = match self.read(path) {
                Ok(d) => d,
                Err(e) => {
                    result.errors.push((path.clone(), e));
                    continue;
                }
            };
            let hits: FileHits = matcher.search_file(path, &data);
            if hits.match_count > 0 || req.include_non_matching {
                result.files.push(hits);
            }
        }
        Ok(result)
    }
}
