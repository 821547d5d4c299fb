//! The shell's filesystem over the vfsbox SDK, and the standard output it
//! shares with the shell.
//!
//! The host may end the script at any call into it (a budget, the
//! deadline); everything written before must survive. So standard output
//! is buffered in one shared writer, and [`SdkFs`] flushes it before every
//! call into the host.

use std::cell::RefCell;
use std::io::{self, BufWriter, Stdout, Write};
use std::rc::Rc;

use vfs_sh::fs::{
    Attrs, Entry, FileHits, Fs, FsError, GrepLine, GrepRequest, GrepResult, Kind, Meta, Opened,
    Truncation,
};
use vfsbox_guest::fs::{self as sdk, FileType};
use vfsbox_guest::search::Grep;

/// Standard output, buffered, shared by the shell (which writes) and
/// [`SdkFs`] (which flushes).
#[derive(Debug, Clone)]
pub(crate) struct SharedStdout(Rc<RefCell<BufWriter<Stdout>>>);

impl SharedStdout {
    pub(crate) fn new() -> SharedStdout {
        SharedStdout(Rc::new(RefCell::new(BufWriter::with_capacity(
            32 << 10,
            io::stdout(),
        ))))
    }
}

impl Write for SharedStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .try_borrow_mut()
            .map_err(io::Error::other)?
            .write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.try_borrow_mut().map_err(io::Error::other)?.flush()
    }
}

/// [`Fs`] over `vfsbox_guest`.
#[derive(Debug)]
pub(crate) struct SdkFs {
    out: SharedStdout,
}

impl SdkFs {
    pub(crate) fn new(out: SharedStdout) -> SdkFs {
        SdkFs { out }
    }

    /// Flushes standard output: called before every host call.
    fn flush(&mut self) {
        let _ = self.out.flush();
    }
}

fn error(e: vfsbox_guest::Error) -> FsError {
    use vfsbox_guest::Error as E;
    match e {
        E::NotFound(p) => FsError::NotFound(p),
        E::NotADirectory(p) => FsError::NotADirectory(p),
        E::IsADirectory(p) => FsError::IsADirectory(p),
        E::InvalidPath(p) => FsError::InvalidPath(p),
        E::Denied(p) => FsError::Denied(p),
        E::Unavailable(why) => FsError::Unavailable(why),
        other => FsError::Unavailable(other.to_string()),
    }
}

/// A directory's size as Linux shows it; a document's as stored.
fn size(t: FileType, len: u64) -> u64 {
    match t {
        FileType::File => len,
        FileType::Directory => vfs_sh::fs::DIR_SIZE,
    }
}

fn kind(t: FileType) -> Kind {
    match t {
        FileType::File => Kind::File,
        FileType::Directory => Kind::Dir,
    }
}

impl Fs for SdkFs {
    fn cwd(&mut self) -> String {
        self.flush();
        sdk::cwd()
    }

    fn set_cwd(&mut self, path: &str) -> Result<String, FsError> {
        self.flush();
        sdk::set_cwd(path).map_err(error)
    }

    fn metadata(&mut self, path: &str) -> Result<Meta, FsError> {
        self.flush();
        let m = sdk::metadata(path).map_err(error)?;
        Ok(Meta {
            path: m.path().to_owned(),
            kind: kind(m.file_type()),
            len: size(m.file_type(), m.len()),
            modified: m.modified(),
        })
    }

    fn mode(&mut self, path: &str) -> Result<u32, FsError> {
        vfsbox_guest::fs::mode(path).map_err(error)
    }

    fn attributes(&mut self, path: &str) -> Result<Attrs, FsError> {
        let a = vfsbox_guest::fs::attributes(path).map_err(error)?;
        Ok(Attrs {
            mode: a.mode(),
            inode: a.inode(),
            device: a.device(),
            accessed: a.accessed(),
            changed: a.changed(),
            created: a.created(),
        })
    }

    fn read_dir(&mut self, path: &str) -> Result<Vec<Entry>, FsError> {
        self.flush();
        let listing = sdk::read_dir(path).map_err(error)?;
        if listing.is_truncated() {
            // The host caps one listing; say so rather than pretend the
            // directory holds only what was returned.
            eprintln!(
                "vfs-sh: {path}: listing truncated after {} entries (the host's limit)",
                listing.len()
            );
        }
        Ok(listing
            .into_iter()
            .map(|e| Entry {
                name: e.name().to_owned(),
                kind: kind(e.file_type()),
                len: size(e.file_type(), e.len()),
                modified: e.modified(),
            })
            .collect())
    }

    fn read(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        self.flush();
        sdk::read(path).map_err(error)
    }

    fn read_range(&mut self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, FsError> {
        self.flush();
        sdk::read_range(path, offset, len).map_err(error)
    }

    fn grep(&mut self, roots: &[String], req: &GrepRequest) -> Result<GrepResult, FsError> {
        self.flush();
        let mut g = Grep::default();
        for p in &req.patterns {
            g = g.pattern(p.as_str());
        }
        for r in roots {
            g = g.root(r.as_str());
        }
        for i in &req.include {
            g = g.include(i.as_str());
        }
        for x in &req.exclude {
            g = g.exclude(x.as_str());
        }
        g = g
            .fixed_strings(req.fixed_strings)
            .ignore_case(req.ignore_case)
            .smart_case(req.smart_case)
            .whole_word(req.whole_word)
            .invert(req.invert)
            .before_context(req.before_context)
            .after_context(req.after_context)
            .include_non_matching(req.include_non_matching);
        if let Some(m) = req.max_count {
            g = g.max_count(m);
        }
        let r = if req.count_only { g.count() } else { g.run() }.map_err(error)?;
        Ok(GrepResult {
            files: r
                .files
                .into_iter()
                .map(|f| FileHits {
                    path: f.path,
                    match_count: f.match_count,
                    lines: f
                        .lines
                        .into_iter()
                        .map(|l| GrepLine {
                            is_match: l.is_match,
                            line_number: l.line_number,
                            text: l.text.into_bytes(),
                            matches: l.matches,
                        })
                        .collect(),
                })
                .collect(),
            files_scanned: r.files_scanned,
            errors: r.errors.into_iter().map(|(p, e)| (p, error(e))).collect(),
            truncated: r.truncated.map(|t| Truncation {
                files_searched: t.files_searched,
                files_not_reached: t.files_not_reached,
            }),
        })
    }

    fn open(&mut self, path: &str) -> Result<Opened, FsError> {
        let meta = self.metadata(path)?;
        if meta.is_dir() {
            return Err(FsError::IsADirectory(meta.path));
        }
        let document = Document {
            path: meta.path,
            offset: 0,
            piece: Vec::new(),
            at: 0,
            out: self.out.clone(),
        };
        Ok((Box::new(document), meta.len))
    }
}

/// A document read a [`PIECE`](vfs_sh::fs::PIECE) at a time through
/// `read-range` as it is read, by its absolute path (so that a later `cd`
/// does not move it).
struct Document {
    path: String,
    offset: u64,
    piece: Vec<u8>,
    at: usize,
    out: SharedStdout,
}

impl io::Read for Document {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.piece.len() {
            // The host may end the script in this call: what was written
            // before goes out first, as for every other call into it.
            let _ = self.out.flush();
            self.piece = sdk::read_range(&self.path, self.offset, vfs_sh::fs::PIECE)
                .map_err(|e| io::Error::other(format!("{}: {}", self.path, error(e).strerror())))?;
            self.offset += self.piece.len() as u64;
            self.at = 0;
        }
        let n = buf.len().min(self.piece.len() - self.at);
        buf[..n].copy_from_slice(&self.piece[self.at..n + self.at]);
        self.at += n;
        Ok(n)
    }
}
