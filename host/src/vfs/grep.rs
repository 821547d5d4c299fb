//! Searching documents with ripgrep's engine (`grep-regex`, `grep-searcher`),
//! under a scan budget.
//!
//! The files under the roots are listed first, in path order; they are then
//! searched one by one on a blocking thread, reading each as a stream. When
//! the files or bytes of the budget run out, the search stops and the result
//! says how many files were not reached: a partial result, not an error.

use std::io::{self, Read};
use std::sync::Arc;

use futures::StreamExt;
use globset::{Glob, GlobSet, GlobSetBuilder};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::{ByteStream, FsError, Kind, VPath, Vfs};
use crate::limits::{MAX_GREP_ROOTS, MAX_PATTERN_BYTES};

/// Reported line text is cut after this many bytes of all lines together,
/// so a result always fits in a script's memory; the search then stops as
/// if its budget were spent.
const MAX_RESULT_BYTES: usize = 16 << 20;
/// Compiled regexes may use at most this much memory (a regex bomb is
/// refused at compile time).
const REGEX_SIZE_LIMIT: usize = 16 << 20;
/// Files listed under the roots before the walk stops counting.
const MAX_WALK_FILES: usize = 1_000_000;
/// The searcher's buffer may grow to this many bytes to hold one line; a
/// longer line ends that file's search with an error instead of holding
/// gigabytes on the host.
const MAX_LINE_BYTES: usize = 16 << 20;
/// Bookkeeping counted per reported line on top of its text.
const LINE_OVERHEAD: usize = 16;
/// Documents opened ahead of the one being searched.
const OPEN_AHEAD: usize = 8;

/// The files the scan budget admits, in order: each costs one file and its
/// listed size; the first that does not fit ends the list.
fn admit(files: Vec<(VPath, u64)>, mut budget: ScanBudget) -> Vec<(VPath, u64)> {
    let mut admitted = Vec::new();
    for (path, size) in files {
        if budget.files == 0 || size > budget.bytes {
            break;
        }
        budget.files -= 1;
        budget.bytes -= size;
        admitted.push((path, size));
    }
    admitted
}

/// What to search for and what to report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrepRequest {
    /// Patterns; a line matches when any of them does.
    pub patterns: Vec<String>,
    /// Patterns are literal text.
    pub fixed_strings: bool,
    /// Match regardless of case.
    pub ignore_case: bool,
    /// Ignore case unless a pattern has an upper-case letter.
    pub smart_case: bool,
    /// Whole words only.
    pub whole_word: bool,
    /// Report lines that do not match.
    pub invert: bool,
    /// Context lines before each match.
    pub before_context: u32,
    /// Context lines after each match.
    pub after_context: u32,
    /// Matching lines per file, at most.
    pub max_count: Option<u64>,
    /// Only files whose name matches one of these globs.
    pub include: Vec<String>,
    /// No files whose name matches one of these globs.
    pub exclude: Vec<String>,
    /// Report files without matches too.
    pub include_non_matching: bool,
}

/// The scan budget a search may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanBudget {
    /// Files that may still be scanned.
    pub files: u64,
    /// Bytes that may still be scanned.
    pub bytes: u64,
}

/// One reported line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepLine {
    /// A match (`true`) or context (`false`).
    pub is_match: bool,
    /// 1-based.
    pub line_number: u64,
    /// Without its `\n` terminator; invalid UTF-8 replaced.
    pub text: String,
    /// Byte ranges of matches within `text`.
    pub matches: Vec<(u32, u32)>,
}

/// The lines reported for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHits {
    /// The file.
    pub path: VPath,
    /// Matching lines (after `max_count`).
    pub match_count: u64,
    /// Matching and context lines.
    pub lines: Vec<GrepLine>,
}

/// The result of a search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrepOutput {
    /// Files with matches (and without, when asked), in path order.
    pub files: Vec<FileHits>,
    /// Files searched.
    pub files_scanned: u64,
    /// Bytes searched.
    pub bytes_scanned: u64,
    /// Roots or files that could not be searched.
    pub errors: Vec<(String, FsError)>,
    /// `(files searched, files not reached)` when the budget ran out.
    pub truncated: Option<(u64, u64)>,
}

/// A search that cannot run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrepError {
    /// No pattern was given.
    #[error("no pattern given")]
    NoPattern,
    /// A pattern is longer than the limit.
    #[error("a pattern is longer than {MAX_PATTERN_BYTES} bytes")]
    PatternTooLong,
    /// More roots than the limit.
    #[error("more than {MAX_GREP_ROOTS} roots")]
    TooManyRoots,
    /// A pattern does not compile (or is too complex).
    #[error("bad pattern: {0}")]
    BadPattern(String),
    /// A glob does not compile.
    #[error("bad glob: {0}")]
    BadGlob(String),
    /// The search failed in the host (a bug).
    #[error("the search failed: {0}")]
    Failed(String),
}

/// A compiled search: matcher, searcher settings and filters.
#[derive(Debug, Clone)]
pub struct Grep {
    req: GrepRequest,
    matcher: RegexMatcher,
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

fn globs(list: &[String]) -> Result<Option<GlobSet>, GrepError> {
    if list.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in list {
        if g.len() > MAX_PATTERN_BYTES {
            return Err(GrepError::PatternTooLong);
        }
        b.add(Glob::new(g).map_err(|e| GrepError::BadGlob(e.to_string()))?);
    }
    b.build()
        .map(Some)
        .map_err(|e| GrepError::BadGlob(e.to_string()))
}

impl Grep {
    /// Compiles a request, or says why it cannot run.
    pub fn new(req: GrepRequest) -> Result<Grep, GrepError> {
        if req.patterns.is_empty() {
            return Err(GrepError::NoPattern);
        }
        if req.patterns.iter().any(|p| p.len() > MAX_PATTERN_BYTES) {
            return Err(GrepError::PatternTooLong);
        }
        let mut b = RegexMatcherBuilder::new();
        b.case_insensitive(req.ignore_case)
            .case_smart(req.smart_case && !req.ignore_case)
            .word(req.whole_word)
            .fixed_strings(req.fixed_strings)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .line_terminator(Some(b'\n'));
        let matcher = b
            .build_many(&req.patterns)
            .map_err(|e| GrepError::BadPattern(e.to_string()))?;
        Ok(Grep {
            include: globs(&req.include)?,
            exclude: globs(&req.exclude)?,
            matcher,
            req,
        })
    }

    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .invert_match(self.req.invert)
            .before_context(self.req.before_context as usize)
            .after_context(self.req.after_context as usize)
            .max_matches(self.req.max_count)
            .heap_limit(Some(MAX_LINE_BYTES))
            // Like ripgrep: a NUL byte means a binary file, which is skipped.
            .binary_detection(BinaryDetection::quit(0))
            .build()
    }

    fn wanted(&self, name: &str) -> bool {
        if self.exclude.as_ref().is_some_and(|g| g.is_match(name)) {
            return false;
        }
        self.include.as_ref().is_none_or(|g| g.is_match(name))
    }

    /// Searches `roots` (files, or directories searched recursively) within
    /// `budget`. Stops early, keeping what it found, if `cancel` is
    /// cancelled; a search blocked on its backend then stops at once too.
    pub async fn run(
        self: Arc<Self>,
        vfs: &Vfs,
        roots: &[VPath],
        budget: ScanBudget,
        cancel: CancellationToken,
    ) -> Result<GrepOutput, GrepError> {
        if roots.len() > MAX_GREP_ROOTS {
            return Err(GrepError::TooManyRoots);
        }
        let mut out = GrepOutput::default();
        let mut files = Vec::new();
        for root in roots {
            if let Err(e) = self.collect(vfs, root, &mut files, &mut out.errors).await {
                out.errors.push((root.to_string(), e));
            }
        }
        let total = files.len() as u64;
        let admitted = admit(files, budget);
        // Documents are opened ahead, several at once and in order, while
        // one thread searches them: a search over many small documents
        // waits on opens, not on matching.
        let (tx, rx) = tokio::sync::mpsc::channel(OPEN_AHEAD);
        let opener = {
            let (vfs, cancel) = (vfs.clone(), cancel.clone());
            tokio::spawn(async move {
                let opens = futures::stream::iter(admitted)
                    .map(|(path, size)| {
                        let vfs = vfs.clone();
                        async move {
                            let opened = vfs.open(&path, 0..size).await;
                            (path, size, opened)
                        }
                    })
                    .buffered(OPEN_AHEAD);
                let send_all = async {
                    futures::pin_mut!(opens);
                    while let Some(next) = opens.next().await {
                        if tx.send(next).await.is_err() {
                            break;
                        }
                    }
                };
                tokio::select! {
                    () = cancel.cancelled() => {}
                    () = send_all => {}
                }
            })
        };
        let handle = tokio::runtime::Handle::current();
        let grep = self.clone();
        let searched =
            tokio::task::spawn_blocking(move || grep.search_all(&handle, rx, total, &cancel, out))
                .await
                .map_err(|e| GrepError::Failed(e.to_string()));
        opener.abort();
        searched
    }

    /// Lists the files under `root`, depth first, each directory's entries
    /// in name order (the order `ls -R` shows them).
    async fn collect(
        &self,
        vfs: &Vfs,
        root: &VPath,
        files: &mut Vec<(VPath, u64)>,
        errors: &mut Vec<(String, FsError)>,
    ) -> Result<(), FsError> {
        let meta = vfs.stat(root).await?;
        if meta.kind == Kind::File {
            if self.wanted(root.file_name()) {
                files.push((root.clone(), meta.size));
            }
            return Ok(());
        }
        // Entries still to visit, the next one last.
        let mut stack = vec![(root.clone(), Kind::Directory, 0)];
        while let Some((path, kind, size)) = stack.pop() {
            if kind == Kind::File {
                if files.len() >= MAX_WALK_FILES {
                    break;
                }
                files.push((path, size));
                continue;
            }
            let listing = match vfs.list(&path, MAX_WALK_FILES).await {
                Ok(listing) => listing,
                Err(e) if path == *root => return Err(e),
                // A subdirectory that cannot be listed is reported; the
                // walk goes on.
                Err(e) => {
                    errors.push((path.to_string(), e));
                    continue;
                }
            };
            for entry in listing.entries.into_iter().rev() {
                let wanted = entry.meta.kind == Kind::Directory || self.wanted(&entry.name);
                if let (true, Some(child)) = (wanted, path.join_name(&entry.name)) {
                    stack.push((child, entry.meta.kind, entry.meta.size));
                }
            }
        }
        Ok(())
    }

    fn search_all(
        &self,
        handle: &tokio::runtime::Handle,
        mut opened: tokio::sync::mpsc::Receiver<(VPath, u64, Result<ByteStream, FsError>)>,
        total: u64,
        cancel: &CancellationToken,
        mut out: GrepOutput,
    ) -> GrepOutput {
        let mut searcher = self.searcher();
        let mut result_bytes = 0usize;
        let mut reached = 0u64;
        while let Some((path, size, stream)) = opened.blocking_recv() {
            if result_bytes >= MAX_RESULT_BYTES || cancel.is_cancelled() {
                break;
            }
            reached += 1;
            out.files_scanned += 1;
            let room = MAX_RESULT_BYTES.saturating_sub(result_bytes);
            let searched = stream.and_then(|stream| {
                self.search_one(handle, stream, &path, size, &mut searcher, cancel, room)
            });
            match searched {
                Ok(found) => {
                    out.bytes_scanned += found.scanned;
                    if let Some(hits) = found.hits {
                        result_bytes += found.result_bytes + path.as_str().len();
                        out.files.push(hits);
                    }
                    if found.cut {
                        // This file's lines filled the result: what is
                        // left of it and the files after it are not
                        // reached.
                        break;
                    }
                }
                Err(e) => out.errors.push((path.to_string(), e)),
            }
        }
        // Files the budget did not admit, the result's size bound cut off,
        // or a cancellation left: not reached.
        if reached < total {
            out.truncated = Some((out.files_scanned, total - reached));
        }
        out
    }

    /// Searches one opened file, reporting at most `room` bytes of lines.
    #[allow(clippy::too_many_arguments)]
    fn search_one(
        &self,
        handle: &tokio::runtime::Handle,
        stream: ByteStream,
        path: &VPath,
        size: u64,
        searcher: &mut Searcher,
        cancel: &CancellationToken,
        room: usize,
    ) -> Result<Searched, FsError> {
        let cancelled = || FsError::Unavailable(format!("{path}: search cancelled"));
        let mut reader = Guarded {
            inner: tokio_util::io::StreamReader::new(stream),
            handle,
            cancel,
            read: 0,
            limit: size,
        };
        let mut sink = Collect {
            matcher: &self.matcher,
            invert: self.req.invert,
            hits: FileHits {
                path: path.clone(),
                match_count: 0,
                lines: Vec::new(),
            },
            binary: false,
            bytes: 0,
            room,
            cut: false,
        };
        let result = searcher.search_reader(&self.matcher, &mut reader, &mut sink);
        if let Err(e) = result {
            return Err(if cancel.is_cancelled() {
                cancelled()
            } else {
                FsError::from_io(&e, path.as_str())
            });
        }
        let report = !sink.binary && (sink.hits.match_count > 0 || self.req.include_non_matching);
        Ok(Searched {
            scanned: reader.read,
            result_bytes: sink.bytes,
            cut: sink.cut,
            hits: report.then_some(sink.hits),
        })
    }
}

/// What searching one file found.
struct Searched {
    /// Nothing to report (no match, or binary) when `None`.
    hits: Option<FileHits>,
    /// Bytes read.
    scanned: u64,
    /// Bytes of the reported lines.
    result_bytes: usize,
    /// The file's lines filled the room left in the result.
    cut: bool,
}

/// A blocking reader over a document's stream that stops when the search
/// is cancelled, even while it waits on the backend, and never reads past
/// the size that was budgeted (a file that grew meanwhile is cut).
struct Guarded<'a, R> {
    inner: R,
    handle: &'a tokio::runtime::Handle,
    cancel: &'a CancellationToken,
    read: u64,
    limit: u64,
}

impl<R: tokio::io::AsyncRead + Unpin> Read for Guarded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // `Other`, not `Interrupted`: readers retry on `Interrupted`.
        let cancelled = || io::Error::other("search cancelled");
        if self.cancel.is_cancelled() {
            return Err(cancelled());
        }
        let room = usize::try_from(self.limit - self.read).unwrap_or(usize::MAX);
        let len = buf.len().min(room);
        let (inner, cancel) = (&mut self.inner, self.cancel);
        let n = self.handle.block_on(async {
            tokio::select! {
                biased;
                () = cancel.cancelled() => Err(cancelled()),
                n = inner.read(&mut buf[..len]) => n,
            }
        })?;
        self.read += n as u64;
        Ok(n)
    }
}

struct Collect<'a> {
    matcher: &'a RegexMatcher,
    invert: bool,
    hits: FileHits,
    binary: bool,
    /// Bytes of the lines kept so far, and the most there is room for.
    bytes: usize,
    room: usize,
    /// A line did not fit: the file's search stopped there.
    cut: bool,
}

impl Collect<'_> {
    /// Keeps `line` if it fits in the room left; stops the search if not.
    fn keep(&mut self, line: GrepLine) -> bool {
        let cost = line.text.len() + LINE_OVERHEAD;
        if self.bytes + cost > self.room {
            self.cut = true;
            return false;
        }
        self.bytes += cost;
        if line.is_match {
            self.hits.match_count += 1;
        }
        self.hits.lines.push(line);
        true
    }
}

fn line_text(bytes: &[u8]) -> &[u8] {
    bytes.strip_suffix(b"\n").unwrap_or(bytes)
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = m.line_number().unwrap_or(0);
        for (i, line) in m.lines().enumerate() {
            let line = line_text(line);
            let mut matches = Vec::new();
            if !self.invert {
                self.matcher
                    .find_iter(line, |found| {
                        matches.push((found.start() as u32, found.end() as u32));
                        true
                    })
                    .map_err(io::Error::other)?;
            }
            let kept = self.keep(GrepLine {
                is_match: true,
                line_number: first + i as u64,
                text: String::from_utf8_lossy(line).into_owned(),
                matches,
            });
            if !kept {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        Ok(self.keep(GrepLine {
            is_match: false,
            line_number: c.line_number().unwrap_or(0),
            text: String::from_utf8_lossy(line_text(c.bytes())).into_owned(),
            matches: Vec::new(),
        }))
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}
