//! Searching documents with ripgrep's engine (`grep-regex`, `grep-searcher`),
//! under a scan budget.
//!
//! A walk lists the files under the roots in walk order (depth first, each
//! directory in the backend's listing order, as `grep -r` walks), admitting them
//! while the budget lasts, and search threads search them as they are
//! listed, several at once, each reading its document as a stream. What they
//! find is merged in walk order, so the result is what one thread searching
//! the files one after another would give. When the files or bytes of the
//! budget run out, the result says how many files were not reached: a
//! partial result, not an error.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::{FsError, Kind, VPath, Vfs};
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
/// Documents searched at once when their backend reads over the network.
const OPEN_AHEAD: usize = 8;
/// Documents searched at once, at most, when the search threads read them
/// themselves (one per core, up to this).
const MAX_SEARCHERS: usize = 4;
/// How far ahead of the first document not yet merged a search thread may
/// take one: finished documents wait in memory for those before them.
const WINDOW: usize = 64;

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
    /// Count the matching lines only: no line is kept, so the result's
    /// size does not grow with the number of matches.
    pub count_only: bool,
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
    /// Matching and context lines; none for a binary file (one with a NUL
    /// byte), whose matching lines are only counted.
    pub lines: Vec<GrepLine>,
}

/// The result of a search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrepOutput {
    /// Files with matches (and without, when asked), in walk order.
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
    /// Bytes of reported lines, at most ([`MAX_RESULT_BYTES`]).
    result_limit: usize,
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
            result_limit: MAX_RESULT_BYTES,
        })
    }

    fn searcher(&self) -> Searcher {
        // A count needs neither line numbers nor context.
        let counts = self.req.count_only;
        let context = |lines: u32| if counts { 0 } else { lines as usize };
        SearcherBuilder::new()
            .line_number(!counts)
            .invert_match(self.req.invert)
            .before_context(context(self.req.before_context))
            .after_context(context(self.req.after_context))
            .max_matches(self.req.max_count)
            .heap_limit(Some(MAX_LINE_BYTES))
            // Like GNU grep: a NUL byte means a binary file, searched with
            // NUL ending a line as a newline does; its lines are counted,
            // not returned (see `Collect::binary`).
            .binary_detection(BinaryDetection::convert(0))
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
        // Documents a backend reads on the calling thread are searched as
        // many at once as there are cores, each read by the thread that
        // searches it; documents read over the network, more at once, so
        // that their reads overlap.
        let threads = if roots.iter().all(|root| vfs.reads_blocking(root)) {
            std::thread::available_parallelism().map_or(2, |n| n.get().min(MAX_SEARCHERS))
        } else {
            OPEN_AHEAD
        };
        let search = Arc::new(Search::new(self, vfs.clone(), cancel));
        // The walk lists documents while the search threads search those
        // listed so far. It runs on a blocking thread too: a local mount
        // is listed there directly, without a trip between threads for
        // each directory.
        let walk = {
            let (search, roots) = (search.clone(), roots.to_vec());
            tokio::task::spawn_blocking(move || search.walk(&roots, budget))
        };
        let searched = search.all(threads).await;
        walk.await.map_err(|e| GrepError::Failed(e.to_string()))?;
        searched?;
        if let Some(tail) = search.tail() {
            // A document stopped because the result was full while
            // documents after it held part of the room: from it on, the
            // search goes one document at a time, as if it had all along.
            let tail = Arc::new(tail);
            tail.all(1).await?;
            return Ok(tail.finish());
        }
        Ok(search.finish())
    }

    /// Lists the files under `root`, depth first, each directory's entries
    /// in name order (the order `ls -R` shows them), giving each to
    /// `found` until it says to stop.
    fn collect(
        &self,
        walk: &Reads<'_>,
        root: &VPath,
        found: &mut dyn FnMut(VPath, u64) -> bool,
        errors: &mut Vec<(String, FsError)>,
    ) -> Result<(), FsError> {
        let meta = walk.stat(root)?;
        if meta.kind == Kind::File {
            if self.wanted(root.file_name()) {
                found(root.clone(), meta.size);
            }
            return Ok(());
        }
        // Entries still to visit, the next one last.
        let mut stack = vec![(root.clone(), Kind::Directory, 0)];
        while let Some((path, kind, size)) = stack.pop() {
            // One error for a cancelled walk, not one per directory left.
            if walk.cancel.is_cancelled() {
                return Err(walk.cancelled(root));
            }
            if kind == Kind::File {
                if !found(path, size) {
                    break;
                }
                continue;
            }
            let listing = match walk.list(&path) {
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
}

/// The filesystem as the walk and the search threads see it, from a
/// blocking thread: a backend that reads there is asked directly, any other
/// through the runtime; a cancelled search stops waiting on either.
struct Reads<'a> {
    vfs: &'a Vfs,
    handle: &'a tokio::runtime::Handle,
    cancel: &'a CancellationToken,
}

impl<'a> Reads<'a> {
    fn cancelled(&self, path: &VPath) -> FsError {
        FsError::Unavailable(format!("{path}: search cancelled"))
    }

    fn on_runtime<T>(
        &self,
        path: &VPath,
        call: impl Future<Output = Result<T, FsError>>,
    ) -> Result<T, FsError> {
        self.handle.block_on(async {
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => Err(self.cancelled(path)),
                done = call => done,
            }
        })
    }

    fn stat(&self, path: &VPath) -> Result<super::Meta, FsError> {
        self.on_runtime(path, self.vfs.stat(path))
    }

    fn list(&self, path: &VPath) -> Result<super::Listing, FsError> {
        match self.vfs.list_blocking(path, MAX_WALK_FILES) {
            Some(listed) => listed,
            None => self.on_runtime(path, self.vfs.list(path, MAX_WALK_FILES)),
        }
    }

    /// The document's first `size` bytes, for the searcher.
    fn open(&self, path: &VPath, size: u64) -> Result<Box<dyn Read + Send + 'a>, FsError> {
        if let Some(opened) = self.vfs.open_blocking(path, 0..size) {
            return opened;
        }
        let stream = self.on_runtime(path, self.vfs.open(path, 0..size))?;
        Ok(Box::new(OnThread {
            inner: tokio_util::io::StreamReader::new(stream),
            handle: self.handle,
            cancel: self.cancel,
        }))
    }
}

/// One search, shared by the walk that lists its documents and the threads
/// that search them. Each search thread takes the next document listed,
/// reads and searches it, and merges what it found in document order:
/// whichever thread finishes the first document not yet merged merges it,
/// and every finished one after it.
struct Search {
    grep: Arc<Grep>,
    vfs: Vfs,
    handle: tokio::runtime::Handle,
    cancel: CancellationToken,
    /// Bytes of reported lines held by this search, merged or not: never
    /// more than the result's bound, however many threads search.
    reserved: AtomicUsize,
    state: Mutex<State>,
    /// Notified, when a thread waits, as documents are listed or merged.
    progress: Condvar,
}

struct State {
    /// The documents the budget admitted, in the order they are reported.
    listed: Vec<(VPath, u64)>,
    /// Documents the walk found, admitted or not.
    total: u64,
    /// The walk is over: `listed` is complete.
    walked: bool,
    /// Documents taken by a search thread: the next is `listed[taken]`.
    taken: usize,
    /// Documents searched, by index, waiting for those before them.
    done: BTreeMap<usize, Result<Searched, FsError>>,
    /// Documents merged into `out`; the next to merge is `listed[merged]`.
    merged: usize,
    /// Bytes of the merged documents' reported lines.
    result_bytes: usize,
    out: GrepOutput,
    /// Directories the walk could not list.
    walk_errors: Vec<(String, FsError)>,
    /// No document is taken any more: the result is full, or the search
    /// is cancelled.
    stop: bool,
    /// A document whose lines filled the result while documents after it
    /// held part of the room: the search goes on from it, alone.
    resume_at: Option<usize>,
    /// Threads waiting for the walk or the merge to move.
    waiting: usize,
}

impl Search {
    fn new(grep: Arc<Grep>, vfs: Vfs, cancel: CancellationToken) -> Search {
        Search {
            grep,
            vfs,
            handle: tokio::runtime::Handle::current(),
            cancel,
            reserved: AtomicUsize::new(0),
            state: Mutex::new(State {
                listed: Vec::new(),
                total: 0,
                walked: false,
                taken: 0,
                done: BTreeMap::new(),
                merged: 0,
                result_bytes: 0,
                out: GrepOutput::default(),
                walk_errors: Vec::new(),
                stop: false,
                resume_at: None,
                waiting: 0,
            }),
            progress: Condvar::new(),
        }
    }

    fn reads(&self) -> Reads<'_> {
        Reads {
            vfs: &self.vfs,
            handle: &self.handle,
            cancel: &self.cancel,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wake(&self, state: &State) {
        if state.waiting > 0 {
            self.progress.notify_all();
        }
    }

    /// Lists the documents under `roots`, admitting them in order while
    /// the budget lasts, and counting the rest.
    fn walk(&self, roots: &[VPath], mut budget: ScanBudget) {
        let _unwinding = StopOnPanic(self);
        let walk = self.reads();
        let mut admitting = true;
        let mut found = |path: VPath, size: u64| {
            let mut s = self.lock();
            if s.total >= MAX_WALK_FILES as u64 {
                return false;
            }
            s.total += 1;
            // The first document that does not fit ends the admitted list.
            admitting &= budget.files > 0 && size <= budget.bytes;
            if admitting {
                budget.files -= 1;
                budget.bytes -= size;
                s.listed.push((path, size));
                self.wake(&s);
            }
            true
        };
        let mut errors = Vec::new();
        for root in roots {
            if let Err(e) = self.grep.collect(&walk, root, &mut found, &mut errors) {
                errors.push((root.to_string(), e));
            }
        }
        let mut s = self.lock();
        s.walk_errors = errors;
        s.walked = true;
        self.wake(&s);
    }

    /// Searches the documents on `threads` blocking threads, until every
    /// one is merged or the search stops.
    async fn all(self: &Arc<Self>, threads: usize) -> Result<(), GrepError> {
        let shared = threads > 1;
        let running: Vec<_> = (0..threads)
            .map(|_| {
                let this = self.clone();
                tokio::task::spawn_blocking(move || this.work(shared))
            })
            .collect();
        for thread in running {
            thread.await.map_err(|e| GrepError::Failed(e.to_string()))?;
        }
        Ok(())
    }

    /// One search thread: `shared` when other threads search beside it.
    fn work(&self, shared: bool) {
        let _unwinding = StopOnPanic(self);
        let mut searcher = self.grep.searcher();
        while let Some((i, path, size)) = self.take() {
            let found = self.search_one(&path, size, &mut searcher);
            if !self.merged(i, found, shared) {
                return;
            }
        }
    }

    /// The next document to search, once it is listed and near enough the
    /// merged ones (finished documents wait in memory for those before
    /// them); `None` when there is none left or the search stopped.
    fn take(&self) -> Option<(usize, VPath, u64)> {
        let mut s = self.lock();
        loop {
            if self.cancel.is_cancelled() {
                s.stop = true;
            }
            let i = s.taken;
            if s.stop || (s.walked && i >= s.listed.len()) {
                return None;
            }
            if i < s.listed.len() && i < s.merged + WINDOW {
                s.taken += 1;
                let (path, size) = s.listed[i].clone();
                return Some((i, path, size));
            }
            s.waiting += 1;
            // Timed, so that a cancellation is seen without a notification.
            s = self
                .progress
                .wait_timeout(s, Duration::from_millis(50))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            s.waiting -= 1;
        }
    }

    /// Records what document `i` gave and merges every document that is
    /// next in order; false once the search has stopped.
    fn merged(&self, i: usize, found: Result<Searched, FsError>, shared: bool) -> bool {
        let mut s = self.lock();
        s.done.insert(i, found);
        let before = s.merged;
        while !s.stop {
            let at = s.merged;
            let Some(found) = s.done.remove(&at) else {
                break;
            };
            match found {
                Ok(found) if found.full && shared => {
                    s.resume_at = Some(at);
                    s.stop = true;
                    break;
                }
                Ok(found) => {
                    s.out.bytes_scanned += found.scanned;
                    s.result_bytes += found.result_bytes;
                    if let Some(hits) = found.hits {
                        s.out.files.push(hits);
                    }
                    // The document's lines filled the result: what is left
                    // of it and the documents after it are not reached.
                    s.stop |= found.full;
                }
                Err(e) => {
                    let path = s.listed[at].0.to_string();
                    s.out.errors.push((path, e));
                }
            }
            s.merged += 1;
            s.out.files_scanned += 1;
        }
        if s.merged != before || s.stop {
            self.wake(&s);
        }
        !s.stop
    }

    /// The rest of this search, for one thread, if a document has to be
    /// searched again alone because the result filled up (after the walk
    /// and every search thread are done).
    fn tail(&self) -> Option<Search> {
        let mut s = self.lock();
        let at = s.resume_at?;
        let tail = Search::new(self.grep.clone(), self.vfs.clone(), self.cancel.clone());
        tail.reserved.store(s.result_bytes, Ordering::Relaxed);
        {
            let mut t = tail.lock();
            t.listed = s.listed.split_off(at);
            t.total = s.total;
            t.walked = true;
            t.result_bytes = s.result_bytes;
            t.out = std::mem::take(&mut s.out);
            t.walk_errors = std::mem::take(&mut s.walk_errors);
        }
        Some(tail)
    }

    /// The result, once the walk and every search thread are done.
    fn finish(&self) -> GrepOutput {
        let mut s = self.lock();
        let mut out = std::mem::take(&mut s.out);
        // The walk's errors first, as if it had ended before the search.
        let mut errors = std::mem::take(&mut s.walk_errors);
        errors.append(&mut out.errors);
        out.errors = errors;
        // Documents the budget did not admit, the result's bound cut off,
        // or a cancellation left: not reached.
        if out.files_scanned < s.total {
            out.truncated = Some((out.files_scanned, s.total - out.files_scanned));
        }
        out
    }

    /// Reads and searches one document.
    fn search_one(
        &self,
        path: &VPath,
        size: u64,
        searcher: &mut Searcher,
    ) -> Result<Searched, FsError> {
        let reads = self.reads();
        let mut reader = Guarded {
            inner: reads.open(path, size)?,
            cancel: &self.cancel,
            read: 0,
            limit: size,
        };
        match self.search_reader(&mut reader, path, searcher) {
            Ok(found) => Ok(Searched {
                scanned: reader.read,
                ..found
            }),
            Err(_) if self.cancel.is_cancelled() => Err(reads.cancelled(path)),
            Err(e) => Err(FsError::from_io(&e, path.as_str())),
        }
    }

    fn search_reader(
        &self,
        reader: &mut impl Read,
        path: &VPath,
        searcher: &mut Searcher,
    ) -> io::Result<Searched> {
        let grep = &self.grep;
        let mut sink = Collect {
            matcher: &grep.matcher,
            invert: grep.req.invert,
            hits: FileHits {
                path: path.clone(),
                match_count: 0,
                lines: Vec::new(),
            },
            binary: false,
            count_only: grep.req.count_only,
            bytes: 0,
            reserved: &self.reserved,
            limit: grep.result_limit,
            full: false,
        };
        searcher.search_reader(&grep.matcher, reader, &mut sink)?;
        if sink.binary {
            // Lines kept before the first NUL was seen go too.
            sink.hits.lines.clear();
            sink.reserved.fetch_sub(sink.bytes, Ordering::Relaxed);
            sink.bytes = 0;
        }
        let report = sink.hits.match_count > 0 || grep.req.include_non_matching;
        if report {
            // The path is part of the result too.
            sink.charge(path.as_str().len() + LINE_OVERHEAD);
        }
        Ok(Searched {
            scanned: 0,
            result_bytes: sink.bytes,
            full: sink.full,
            hits: report.then_some(sink.hits),
        })
    }
}

/// Stops a search whose walk or search thread panics (a bug), so that no
/// other thread waits for what it would have listed or merged.
struct StopOnPanic<'a>(&'a Search);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut s = self.0.lock();
            s.stop = true;
            s.walked = true;
            self.0.progress.notify_all();
        }
    }
}

/// What searching one file found.
struct Searched {
    /// Nothing to report (no match, or binary) when `None`.
    hits: Option<FileHits>,
    /// Bytes read.
    scanned: u64,
    /// Bytes of the reported lines, and of the path if reported.
    result_bytes: usize,
    /// A line did not fit in the result: the file's search stopped there.
    full: bool,
}

/// A document's bytes for the searcher: stops when the search is cancelled
/// and never reads past the size that was budgeted (a file that grew
/// meanwhile is cut).
struct Guarded<'a, R> {
    inner: R,
    cancel: &'a CancellationToken,
    read: u64,
    limit: u64,
}

/// Not `Interrupted`: readers retry on that.
fn cancelled_read() -> io::Error {
    io::Error::other("search cancelled")
}

impl<R: Read> Read for Guarded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.is_cancelled() {
            return Err(cancelled_read());
        }
        let room = usize::try_from(self.limit - self.read).unwrap_or(usize::MAX);
        let len = buf.len().min(room);
        let n = self.inner.read(&mut buf[..len])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// An async backend's stream, read from a search thread: a read waiting on
/// the backend gives up as soon as the search is cancelled.
struct OnThread<'a, R> {
    inner: R,
    handle: &'a tokio::runtime::Handle,
    cancel: &'a CancellationToken,
}

impl<R: tokio::io::AsyncRead + Unpin> Read for OnThread<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (inner, cancel) = (&mut self.inner, self.cancel);
        self.handle.block_on(async {
            tokio::select! {
                biased;
                () = cancel.cancelled() => Err(cancelled_read()),
                n = inner.read(buf) => n,
            }
        })
    }
}

struct Collect<'a> {
    matcher: &'a RegexMatcher,
    invert: bool,
    hits: FileHits,
    /// The file holds a NUL byte: its matching lines are counted only.
    binary: bool,
    /// Only counts are wanted: no line is kept.
    count_only: bool,
    /// Bytes of the lines kept so far.
    bytes: usize,
    /// The search's bytes held, and the most it may hold.
    reserved: &'a AtomicUsize,
    limit: usize,
    /// A line did not fit: the file's search stopped there.
    full: bool,
}

impl Collect<'_> {
    /// Takes `cost` bytes of the result's room; false, taking nothing, if
    /// there is not that much left.
    fn reserve(&mut self, cost: usize) -> bool {
        let before = self.reserved.fetch_add(cost, Ordering::Relaxed);
        if before + cost > self.limit {
            self.reserved.fetch_sub(cost, Ordering::Relaxed);
            self.full = true;
            return false;
        }
        self.bytes += cost;
        true
    }

    /// Takes `cost` bytes of the result's room even past its bound (a
    /// file's path, once per reported file); later lines then do not fit.
    fn charge(&mut self, cost: usize) {
        self.reserved.fetch_add(cost, Ordering::Relaxed);
        self.bytes += cost;
    }

    /// Keeps `line` if it fits in the room left; stops the search if not.
    fn keep(&mut self, line: GrepLine) -> bool {
        if !self.reserve(line.text.len() + LINE_OVERHEAD) {
            return false;
        }
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
        if self.binary || self.count_only {
            self.hits.match_count += m.lines().count() as u64;
            return Ok(true);
        }
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
        if self.binary || self.count_only {
            return Ok(true);
        }
        Ok(self.keep(GrepLine {
            is_match: false,
            line_number: c.line_number().unwrap_or(0),
            text: String::from_utf8_lossy(line_text(c.bytes())).into_owned(),
            matches: Vec::new(),
        }))
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::{LocalBackend, MemoryBackend};

    const NEEDLE: &str = "needle";

    /// 240 documents in nested directories, each with a different number
    /// of matching lines among others, laid out on disk.
    fn documents() -> Vec<(String, String)> {
        (0..240)
            .map(|i| {
                let path = format!("d{}/s{}/doc{i:03}.txt", i % 4, i % 7);
                let text: String = (0..(i % 9) * 5)
                    .map(|l| {
                        if l % 3 == 0 {
                            format!("line {l} has a {NEEDLE} in document {i}\n")
                        } else {
                            format!("line {l} has nothing\n")
                        }
                    })
                    .collect();
                (path, text)
            })
            .collect()
    }

    fn on_disk(docs: &[(String, String)]) -> (tempfile::TempDir, Vfs) {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, text) in docs {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(file, text).expect("write");
        }
        let backend = LocalBackend::open(dir.path()).expect("open");
        let vfs = Vfs::single(files(), backend).expect("mount");
        (dir, vfs)
    }

    fn in_memory(docs: &[(String, String)]) -> Vfs {
        let backend = docs.iter().fold(MemoryBackend::new(), |b, (path, text)| {
            b.file(path, text.clone())
        });
        Vfs::single(files(), backend).expect("mount")
    }

    fn files() -> VPath {
        VPath::parse_absolute("/files").expect("path")
    }

    fn grep(result_limit: usize) -> Arc<Grep> {
        let mut grep = Grep::new(GrepRequest {
            patterns: vec![NEEDLE.to_owned()],
            ..GrepRequest::default()
        })
        .expect("compiles");
        grep.result_limit = result_limit;
        Arc::new(grep)
    }

    const UNLIMITED: ScanBudget = ScanBudget {
        files: u64::MAX,
        bytes: u64::MAX,
    };

    /// What one thread searching the documents one after another reports
    /// within `limit` bytes of result: each reported line costs its text
    /// and `LINE_OVERHEAD`, each reported document its path and
    /// `LINE_OVERHEAD`; the first line that does not fit ends the search.
    /// `docs` in the order the walk reaches them: depth first, each
    /// directory in the order it lists (readdir order on disk, name order
    /// in memory).
    fn in_walk_order(
        docs: &[(String, String)],
        disk: Option<&std::path::Path>,
    ) -> Vec<(String, String)> {
        fn walk(dir: &std::path::Path, rel: &str, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).expect("lists") {
                let entry = entry.expect("entry");
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                };
                if entry.file_type().expect("type").is_dir() {
                    walk(&entry.path(), &path, out);
                } else {
                    out.push(path);
                }
            }
        }
        let mut ordered = docs.to_vec();
        match disk {
            Some(root) => {
                let mut order = Vec::new();
                walk(root, "", &mut order);
                ordered.sort_by_key(|(p, _)| order.iter().position(|o| o == p));
            }
            None => ordered.sort_by(|a, b| a.0.cmp(&b.0)),
        }
        ordered
    }

    fn one_at_a_time(docs: &[(String, String)], limit: usize) -> (Vec<(String, Vec<u64>)>, u64) {
        let (mut reported, mut held, mut scanned) = (Vec::new(), 0, 0);
        for (path, text) in docs {
            scanned += 1;
            let path = format!("/files/{path}");
            let mut lines = Vec::new();
            let mut full = false;
            for (n, line) in text.lines().enumerate() {
                if !line.contains(NEEDLE) {
                    continue;
                }
                let cost = line.len() + LINE_OVERHEAD;
                if held + cost > limit {
                    full = true;
                    break;
                }
                held += cost;
                lines.push(n as u64 + 1);
            }
            if !lines.is_empty() {
                held += path.len() + LINE_OVERHEAD;
                reported.push((path, lines));
            }
            if full {
                break;
            }
        }
        (reported, scanned)
    }

    fn reported(out: &GrepOutput) -> Vec<(String, Vec<u64>)> {
        out.files
            .iter()
            .map(|f| {
                let lines = f.lines.iter().map(|l| l.line_number).collect();
                (f.path.to_string(), lines)
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn documents_searched_at_once_are_reported_in_walk_order() {
        let docs = documents();
        let (dir, local) = on_disk(&docs);
        for (backend, vfs, disk) in [
            ("local", local, Some(dir.path())),
            ("memory", in_memory(&docs), None),
        ] {
            let (want, _) = one_at_a_time(&in_walk_order(&docs, disk), usize::MAX);
            let out = grep(MAX_RESULT_BYTES)
                .run(&vfs, &[files()], UNLIMITED, CancellationToken::new())
                .await
                .expect("searches");
            assert_eq!(reported(&out), want, "{backend}");
            assert_eq!(out.files_scanned, docs.len() as u64, "{backend}");
            let bytes: usize = docs.iter().map(|(_, text)| text.len()).sum();
            assert_eq!(out.bytes_scanned, bytes as u64, "{backend}");
            assert_eq!(out.truncated, None, "{backend}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_result_is_cut_where_one_thread_would_cut_it() {
        let docs = documents();
        let (dir, local) = on_disk(&docs);
        let memory = in_memory(&docs);
        for limit in [1, 700, 5_000, 20_000] {
            // Several times: which thread finishes first varies, the
            // result may not.
            for _ in 0..10 {
                for (backend, vfs, disk) in [
                    ("local", &local, Some(dir.path())),
                    ("memory", &memory, None),
                ] {
                    let (want, scanned) = one_at_a_time(&in_walk_order(&docs, disk), limit);
                    assert!(scanned < docs.len() as u64, "the limit {limit} cuts");
                    let out = grep(limit)
                        .run(vfs, &[files()], UNLIMITED, CancellationToken::new())
                        .await
                        .expect("searches");
                    assert_eq!(reported(&out), want, "{backend}, limit {limit}");
                    assert_eq!(
                        out.truncated,
                        Some((scanned, docs.len() as u64 - scanned)),
                        "{backend}, limit {limit}"
                    );
                }
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_count_returns_every_count_and_no_line_whatever_the_result_limit() {
        let docs = documents();
        let (dir, vfs) = on_disk(&docs);
        let want: Vec<(String, u64)> = in_walk_order(&docs, Some(dir.path()))
            .iter()
            .map(|(path, text)| {
                let n = text.lines().filter(|l| l.contains(NEEDLE)).count();
                (format!("/files/{path}"), n as u64)
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        // A limit that cuts the lines' search short cuts no count, and
        // context asked for is not returned either.
        let mut count = Grep::new(GrepRequest {
            patterns: vec![NEEDLE.to_owned()],
            before_context: 2,
            after_context: 2,
            count_only: true,
            ..GrepRequest::default()
        })
        .expect("compiles");
        count.result_limit = 700;
        let out = Arc::new(count)
            .run(&vfs, &[files()], UNLIMITED, CancellationToken::new())
            .await
            .expect("counts");
        let counts: Vec<(String, u64)> = out
            .files
            .iter()
            .map(|f| (f.path.to_string(), f.match_count))
            .collect();
        assert_eq!(counts, want);
        assert!(out.files.iter().all(|f| f.lines.is_empty()));
        assert_eq!(out.truncated, None);
        assert_eq!(out.files_scanned, docs.len() as u64);

        // Runs of matching lines next to each other are counted line by
        // line, up to the max count, inverted or not.
        let vfs = in_memory(&[("runs.txt".to_owned(), "a\na\na\nb\na\na\nb\nb\n".to_owned())]);
        for (invert, max_count, want) in [
            (false, None, 5),
            (false, Some(4), 4),
            (false, Some(1), 1),
            (true, None, 3),
            (true, Some(2), 2),
        ] {
            let count = Grep::new(GrepRequest {
                patterns: vec!["a".to_owned()],
                invert,
                max_count,
                count_only: true,
                ..GrepRequest::default()
            })
            .expect("compiles");
            let out = Arc::new(count)
                .run(&vfs, &[files()], UNLIMITED, CancellationToken::new())
                .await
                .expect("counts");
            assert_eq!(
                out.files[0].match_count, want,
                "invert {invert}, max {max_count:?}"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_scan_budget_admits_documents_in_walk_order() {
        let docs = documents();
        let (dir, vfs) = on_disk(&docs);
        let sorted = in_walk_order(&docs, Some(dir.path()));
        // Bytes for the first `k` documents and all but one byte of the
        // next: it does not fit, and ends the admitted list.
        let k = (50..sorted.len())
            .find(|&k| !sorted[k].1.is_empty())
            .expect("a document with text");
        let bytes: u64 = sorted[..=k]
            .iter()
            .map(|(_, t)| t.len() as u64)
            .sum::<u64>()
            - 1;
        for budget in [
            ScanBudget { files: 1000, bytes },
            ScanBudget {
                files: k as u64,
                bytes: u64::MAX,
            },
        ] {
            let out = grep(MAX_RESULT_BYTES)
                .run(&vfs, &[files()], budget, CancellationToken::new())
                .await
                .expect("searches");
            let (want, _) = one_at_a_time(&sorted[..k], usize::MAX);
            assert_eq!(reported(&out), want, "{budget:?}");
            let total = docs.len() as u64;
            assert_eq!(
                out.truncated,
                Some((k as u64, total - k as u64)),
                "{budget:?}"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_search_thread_that_panics_fails_the_search_at_once() {
        let docs = documents();
        let backend = docs
            .iter()
            .fold(MemoryBackend::new(), |b, (path, text)| {
                b.file(path, text.clone())
            })
            // Sorted first: the other search threads soon wait for it to
            // be merged before they take more.
            .faulty("a/bug.txt", "needle\n", crate::vfs::Fault::Panic);
        let vfs = Vfs::single(files(), backend).expect("mount");
        let searched = tokio::time::timeout(
            Duration::from_secs(10),
            grep(MAX_RESULT_BYTES).run(&vfs, &[files()], UNLIMITED, CancellationToken::new()),
        )
        .await
        .expect("the search ends without being cancelled");
        assert!(
            matches!(searched, Err(GrepError::Failed(_))),
            "{searched:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_search_ends_without_searching() {
        let docs = documents();
        let (_dir, vfs) = on_disk(&docs);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let out = grep(MAX_RESULT_BYTES)
            .run(&vfs, &[files()], UNLIMITED, cancel)
            .await
            .expect("ends");
        assert!(out.files.is_empty() && out.files_scanned == 0);
        assert_eq!(
            out.errors.len(),
            1,
            "the cancelled walk, once: {:?}",
            out.errors
        );
    }
}
