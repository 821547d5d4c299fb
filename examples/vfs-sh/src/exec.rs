//! What commands run with: the script-wide [`Env`], a command's context
//! ([`Cx`]) and its standard input ([`Input`]); and the entry points that
//! parse a script and hand it to the interpreter ([`crate::shell`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::Display;
use std::io::{Read, Write};
use std::rc::Rc;
use std::time::SystemTime;

use crate::fs::{Entry, Fs, FsError, GrepRequest, GrepResult, Kind, Meta, Opened};
use crate::shell::Shell;
use crate::syntax;

/// State that lives for the whole script, across nested shells.
pub(crate) struct Env {
    /// The time the script started (for `ls -l`, `find -mtime`).
    pub(crate) now: SystemTime,
    /// The script's own standard input, until something reads it.
    pub(crate) stdin: Input,
    /// How many shells (`sh -c`, `find -exec`, `xargs`) run inside each
    /// other right now.
    pub(crate) nesting: u32,
    /// How many shell functions run inside each other right now, in all
    /// the nested shells together: the bound on them is the script's, so
    /// that functions calling shells calling functions stay within the
    /// guest's stack too.
    pub(crate) calls: u32,
    /// How many command lists run inside each other right now (a brace
    /// group, a loop body, a function body, a substitution, a nested
    /// shell: every way the shell recurses passes through one), bounded
    /// by [`crate::shell::MAX_FRAMES`] so that what the script nests at
    /// run time, however it nests it, ends with a message and not with
    /// the guest's stack.
    pub(crate) frames: u32,
    /// The pipe the running pipeline stage writes to, if any.
    pub(crate) pipe: Option<PipeEnd>,
    /// Where the running shell is, for its messages.
    pub(crate) whence: Whence,
}

/// How the shell's own messages begin where they are made (`vfs-sh:
/// cd: nope: No such file or directory`); as they are printed, the
/// running shell's [`Whence::prefix`] takes its place.
pub(crate) const SHELL: &str = "vfs-sh: ";

/// Where the running shell is: its `$0` and the line of the command it
/// runs, as its messages name them.
#[derive(Debug, Clone)]
pub(crate) struct Whence {
    /// `$0`: `bash`, the name after `bash -c SCRIPT`, a script's path, or
    /// the file being sourced.
    pub(crate) name: String,
    /// The line of the script (or of the sourced file), from 1.
    pub(crate) line: u32,
    /// dash (`sh`), whose messages read `NAME: LINE: `.
    pub(crate) dash: bool,
    /// The script is a command string (`bash -c`), whose functions bash
    /// names `environment` in their messages; not a file.
    pub(crate) string: bool,
}

impl Whence {
    pub(crate) fn new(name: &str, dash: bool) -> Whence {
        Whence {
            name: name.to_owned(),
            line: 1,
            dash,
            string: true,
        }
    }

    /// What begins the shell's messages: bash's `bash: line 3: `, dash's
    /// `sh: 3: `.
    pub(crate) fn prefix(&self) -> String {
        if self.dash {
            format!("{}: {}: ", self.name, self.line)
        } else {
            format!("{}: line {}: ", self.name, self.line)
        }
    }

    /// `msg` as the shell prints it: a message of the shell's own
    /// (beginning [`SHELL`]) begins with [`Whence::prefix`] instead.
    pub(crate) fn message<'m>(&self, msg: &'m str) -> std::borrow::Cow<'m, str> {
        match msg.strip_prefix(SHELL) {
            Some(rest) => format!("{}{rest}", self.prefix()).into(),
            None => msg.into(),
        }
    }
}

impl Env {
    /// A nonzero seed from the start time, for `$RANDOM`, `shuf` and
    /// `sort -R` (the guest has no other source it should depend on).
    pub(crate) fn clock_seed(&self) -> u64 {
        self.now
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64 | 1)
    }
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

/// A part of a standard input not read yet.
pub(crate) enum Source {
    /// Bytes a command wrote.
    Bytes(Vec<u8>),
    /// Bytes a command wrote, read up to an offset.
    Slice(Vec<u8>, usize),
    /// A reader (a document, the script's own standard input) and how many
    /// bytes it is expected to give, 0 when unknown.
    Reader(Box<dyn Read>, u64),
}

/// What a command reads of a pipe at a time, as GNU's tools read one
/// (`BUFSIZ`): a command that stops early (`head`, `sed 5q`, `grep -q`)
/// has taken no more than that past what it used, so what it leaves
/// unread says whether its writer would have met `SIGPIPE`.
const PIPE_PIECE: usize = 8 << 10;

/// One standard input and how far commands have read it. Shared (`Rc`)
/// between the commands that read one stream in turn: the body of
/// `while read` and the `read` in its condition.
///
/// What is not read yet is kept as it came: bytes a command wrote, or a
/// reader read a [`PIECE`](crate::fs::PIECE) at a time as commands ask
/// for more, so that `cmd < FILE` or `cat FILE | cmd` never holds the
/// document whole unless `cmd` wants it whole.
#[derive(Default)]
pub(crate) struct InBuf {
    /// Bytes taken in, consumed up to `pos`.
    data: Vec<u8>,
    pos: usize,
    /// What follows `data`, in order.
    rest: std::collections::VecDeque<Source>,
    /// A document opened as standard input (`< FILE`): a command that
    /// reads less than all of it leaves the rest where it stopped, as GNU
    /// `head` seeks back on such an input.
    pub(crate) seekable: bool,
    /// Why a reader stopped early (a backend failing mid-document): the
    /// input then ends there, and the command that read it says so.
    failed: Option<String>,
    /// Bytes a command gave up unread ([`InBuf::discard`]).
    discarded: u64,
    /// What a pipe into a plain `wc` counted instead of keeping the bytes
    /// (see [`Wanted::Counts`]); the input holds nothing else.
    counted: Option<Box<crate::commands::wc::Counter>>,
}

/// A command's standard input.
pub(crate) type Input = Rc<RefCell<InBuf>>;

impl InBuf {
    /// An input holding `data`.
    pub(crate) fn bytes(data: Vec<u8>) -> Input {
        Rc::new(RefCell::new(InBuf {
            data,
            ..InBuf::default()
        }))
    }

    /// An input that reads `r` as it is read; `len` is how many bytes it
    /// is expected to give (0 when unknown).
    pub(crate) fn stream(r: Box<dyn Read>, len: u64) -> Input {
        InBuf::parts(vec![Source::Reader(r, len)])
    }

    /// An input made of `parts`, in order.
    pub(crate) fn parts(parts: Vec<Source>) -> Input {
        Rc::new(RefCell::new(InBuf {
            rest: parts.into(),
            ..InBuf::default()
        }))
    }

    /// The counts a pipe into `wc` made of what was written to it, once.
    pub(crate) fn take_counted(&mut self) -> Option<Box<crate::commands::wc::Counter>> {
        self.counted.take()
    }

    /// The next piece of `rest`: at most a [`PIECE`](crate::fs::PIECE) of a
    /// document, [`PIPE_PIECE`] of bytes a command wrote. `None` at the
    /// end.
    fn pull(&mut self) -> Option<Vec<u8>> {
        let piece_len = PIPE_PIECE;
        loop {
            match self.rest.front_mut()? {
                // Small bytes whole; large ones a piece at a time, so that
                // a command streaming them holds one piece more, not a
                // second copy.
                Source::Bytes(b) if b.len() <= piece_len => {
                    let b = std::mem::take(b);
                    self.rest.pop_front();
                    if !b.is_empty() {
                        return Some(b);
                    }
                }
                Source::Bytes(b) => {
                    let piece = b[..piece_len].to_vec();
                    self.rest[0] = Source::Slice(std::mem::take(b), piece_len);
                    return Some(piece);
                }
                Source::Slice(b, at) => {
                    let end = at.saturating_add(piece_len).min(b.len());
                    let piece = b[*at..end].to_vec();
                    *at = end;
                    if end == b.len() {
                        self.rest.pop_front();
                    }
                    if !piece.is_empty() {
                        return Some(piece);
                    }
                }
                Source::Reader(r, len) => {
                    let mut piece = Vec::new();
                    // A failing input ends with what arrived before the
                    // failure, which is kept to be reported.
                    let read = r.by_ref().take(crate::fs::PIECE).read_to_end(&mut piece);
                    *len = len.saturating_sub(piece.len() as u64);
                    if let Err(e) = &read {
                        self.failed.get_or_insert_with(|| e.to_string());
                    }
                    if !read.is_ok_and(|n| n as u64 == crate::fs::PIECE) {
                        self.rest.pop_front();
                    }
                    if !piece.is_empty() {
                        return Some(piece);
                    }
                }
            }
        }
    }

    /// Appends the next piece to `data`, dropping what was consumed;
    /// `false` at the end.
    fn fill(&mut self) -> bool {
        let Some(piece) = self.pull() else {
            return false;
        };
        self.data.drain(..self.pos);
        self.pos = 0;
        if self.data.is_empty() {
            self.data = piece;
        } else {
            self.data.extend_from_slice(&piece);
        }
        true
    }

    /// The next piece not read yet (at most a piece of a reader); `None`
    /// at the end. For commands that work a block or a line at a time.
    pub(crate) fn next_piece(&mut self) -> Option<Vec<u8>> {
        self.next_piece_in_memory().or_else(|| self.pull())
    }

    /// Takes everything not read yet as it is, unread.
    fn take_parts(&mut self) -> Vec<Source> {
        let mut parts = Vec::with_capacity(self.rest.len() + 1);
        if let Some(first) = self.next_piece_in_memory() {
            parts.push(Source::Bytes(first));
        }
        parts.extend(self.rest.drain(..));
        parts
    }

    /// What of `data` is not read yet, taken.
    fn next_piece_in_memory(&mut self) -> Option<Vec<u8>> {
        if self.pos >= self.data.len() {
            self.data.clear();
            self.pos = 0;
            return None;
        }
        let piece = if self.pos == 0 {
            std::mem::take(&mut self.data)
        } else {
            self.data[self.pos..].to_vec()
        };
        self.data.clear();
        self.pos = 0;
        Some(piece)
    }

    /// Why the input ended early, once.
    pub(crate) fn take_failure(&mut self) -> Option<String> {
        self.failed.take()
    }

    /// Drops everything not read yet, unread.
    pub(crate) fn discard(&mut self) {
        self.discarded += self.unread();
        self.data.clear();
        self.pos = 0;
        self.rest.clear();
    }

    /// Takes everything not read yet.
    pub(crate) fn take_rest(&mut self) -> Vec<u8> {
        let mut all = match self.next_piece_in_memory() {
            Some(data) => data,
            // Bytes a command wrote are handed over as they are.
            None => match self.rest.front_mut() {
                Some(Source::Bytes(b)) => {
                    let b = std::mem::take(b);
                    self.rest.pop_front();
                    b
                }
                _ => Vec::new(),
            },
        };
        // Sized once where the sizes are known, not doubled as it grows.
        all.reserve(usize::try_from(self.rest_len()).unwrap_or(0));
        while let Some(part) = self.rest.pop_front() {
            match part {
                Source::Bytes(b) => all.extend_from_slice(&b),
                Source::Slice(b, at) => all.extend_from_slice(&b[at..]),
                Source::Reader(mut r, _) => {
                    if let Err(e) = r.read_to_end(&mut all) {
                        self.failed.get_or_insert_with(|| e.to_string());
                    }
                }
            }
        }
        all
    }

    /// The bytes of the parts not taken in yet, as far as they are known
    /// (a reader of unknown size counts 0).
    fn rest_len(&self) -> u64 {
        self.rest
            .iter()
            .map(|s| match s {
                Source::Bytes(b) => b.len() as u64,
                Source::Slice(b, at) => (b.len() - at) as u64,
                Source::Reader(_, len) => *len,
            })
            .sum()
    }

    /// The bytes no command has read yet, as far as they are known.
    fn unread(&self) -> u64 {
        (self.data.len() - self.pos) as u64 + self.rest_len()
    }

    /// The bytes no command read: those still here, and those given up
    /// unread.
    pub(crate) fn left_unread(&self) -> u64 {
        self.unread() + self.discarded
    }

    /// Reads up to and including the next `delim`; `None` at the end.
    pub(crate) fn read_until(&mut self, delim: u8) -> Option<Vec<u8>> {
        let mut searched = 0;
        let n = loop {
            let rest = &self.data[self.pos..];
            if let Some(k) = rest[searched..].iter().position(|&b| b == delim) {
                break searched + k + 1;
            }
            searched = rest.len();
            if !self.fill() {
                break self.data.len() - self.pos;
            }
        };
        if n == 0 {
            return None;
        }
        let line = self.data[self.pos..self.pos + n].to_vec();
        self.pos += n;
        Some(line)
    }

    /// Reads up to `n` bytes.
    pub(crate) fn read_n(&mut self, n: usize) -> Vec<u8> {
        while self.data.len() - self.pos < n && self.fill() {}
        let end = self.pos.saturating_add(n).min(self.data.len());
        let got = self.data[self.pos..end].to_vec();
        self.pos = end;
        got
    }
}

/// A pipe between two commands: what the first writes, for the second to
/// read. A document the first passes on whole (`cat FILE | ...`) is kept
/// as a reader, read when and as the second command reads it.
///
/// The stages of a pipeline run one after the other, so what the first
/// writes is held until the second reads it. When the second reads only
/// the start of it (`... | head -n 5`), the pipe keeps that start and
/// drops the rest, as a real pipe's reader exits and leaves the rest
/// unwritten: `seq 1 100000000 | head -2` holds two lines, not a
/// gigabyte. When the second prints only the end of it (`... | tail -n
/// 5`), the pipe drops the start as it fills, keeping what holds that end;
/// when it counts it (`... | wc -l`), the pipe keeps only the counts.
#[derive(Default)]
pub(crate) struct Pipe {
    parts: Rc<RefCell<Vec<Source>>>,
    /// How much of the written bytes the reader will read, when it is
    /// known to read no more, or the end it prints.
    wanted: Option<Wanted>,
    /// Bytes written past what the reader reads.
    dropped: u64,
    /// For a reader of the end: the bytes kept when the start was last
    /// dropped, so that the next drop waits until they have grown.
    kept_end: usize,
    /// Set once more than a pipe's buffer has been written past what the
    /// reader reads: a real writer would have met `SIGPIPE` by then.
    broken: Rc<Cell<bool>>,
    /// For a reader that wants only `wc`'s counts: what was written,
    /// counted.
    counter: Option<Box<crate::commands::wc::Counter>>,
}

/// How far a writer may go past what `head` wants before it surely meets
/// `SIGPIPE`: a Linux pipe's 64 KiB buffer, plus the 8 KiB `head` may
/// have read beyond its lines. Below that, whether the writer is still
/// writing when `head` exits is a race (bash reports 0 or 141 from one
/// run to the next); the writer here finishes, and reports its status.
pub(crate) const PIPE_BUFFER: u64 = (64 + 8) << 10;

/// How much of a pipe's bytes its reader reads before it stops, or, for
/// a reader that reads them all, which of them its output depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// This many more lines (`head -n N`).
    Lines(u64),
    /// This many more bytes (`head -c N`).
    Bytes(u64),
    /// The last lines, this many (`tail -n N`).
    LastLines(u64),
    /// The last bytes, this many (`tail -c N`).
    LastBytes(u64),
    /// Only the counts of `wc` (with no operand): the pipe counts what is
    /// written as it comes and keeps none of it, so that `grep x big |
    /// wc -l` holds no copy of the lines it counts.
    Counts,
}

/// How large a part of the bytes written to a pipe grows before the next
/// write starts another.
const PART: usize = 1 << 20;

/// How much the bytes a pipe holds for a reader of the end may grow past
/// what that end needs before the start is dropped.
const END_SLACK: usize = 1 << 20;

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(counter) = &mut self.counter {
            counter.feed(buf);
            return Ok(buf.len());
        }
        // Documents passed on unread are not counted: the reader's start
        // may come sooner than counted, never later, so nothing it reads
        // is dropped.
        let kept = match &mut self.wanted {
            None | Some(Wanted::LastLines(_) | Wanted::LastBytes(_) | Wanted::Counts) => buf,
            Some(Wanted::Bytes(n)) => {
                let k = usize::try_from(*n).unwrap_or(usize::MAX).min(buf.len());
                *n -= k as u64;
                &buf[..k]
            }
            Some(Wanted::Lines(0)) => &buf[..0],
            Some(Wanted::Lines(n)) => {
                let mut end = buf.len();
                for (seen, at) in memchr::memchr_iter(b'\n', buf).enumerate() {
                    if seen as u64 + 1 == *n {
                        end = at + 1;
                        break;
                    }
                }
                let lines = memchr::memchr_iter(b'\n', &buf[..end]).count() as u64;
                *n -= lines.min(*n);
                &buf[..end]
            }
        };
        self.dropped += (buf.len() - kept.len()) as u64;
        if self.dropped > PIPE_BUFFER {
            self.broken.set(true);
        }
        if !kept.is_empty() {
            // A reader of the end keeps one part, which `keep_end` trims;
            // any other reader gets parts of about `PART` bytes, so that
            // the bytes are never copied to grow one buffer (which would
            // hold them twice), and a reader that streams them frees each
            // part as it goes.
            let ends = matches!(
                self.wanted,
                Some(Wanted::LastLines(_) | Wanted::LastBytes(_))
            );
            let mut parts = self.parts.borrow_mut();
            // A write that holds the whole end by itself (`echo "$doc" |
            // tail -1`) replaces what came before, and only its end is
            // copied.
            let from = match self.wanted {
                Some(end) if ends => end_start(end, kept),
                _ => 0,
            };
            if from > 0 {
                parts.clear();
                parts.push(Source::Bytes(kept[from..].to_vec()));
                self.kept_end = kept.len() - from;
                return Ok(buf.len());
            }
            match parts.last_mut() {
                Some(Source::Bytes(b)) if ends || b.len() < PART => b.extend_from_slice(kept),
                _ => parts.push(Source::Bytes(kept.to_vec())),
            }
        }
        if let Some(end @ (Wanted::LastLines(_) | Wanted::LastBytes(_))) = self.wanted {
            self.keep_end(end);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where the end a reader of the end prints starts in `b`, with one line
/// more than it prints (the last may still be growing): 0 when `b` does
/// not hold that much.
fn end_start(end: Wanted, b: &[u8]) -> usize {
    match end {
        Wanted::LastBytes(n) => b
            .len()
            .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX)),
        Wanted::LastLines(n) => {
            let body = b.strip_suffix(b"\n").unwrap_or(b);
            let wanted = usize::try_from(n).unwrap_or(usize::MAX).saturating_add(1);
            match memchr::memrchr_iter(b'\n', body).nth(wanted - 1) {
                Some(at) => at + 1,
                // Not that many lines yet: all of them may be printed.
                None => 0,
            }
        }
        Wanted::Lines(_) | Wanted::Bytes(_) | Wanted::Counts => 0,
    }
}

impl Pipe {
    /// For a reader that prints the end: once the bytes written last hold
    /// that end with room to spare, what comes before them (earlier
    /// writes, documents passed on) goes. One line more than the reader
    /// prints is kept, as the last may still be growing.
    fn keep_end(&mut self, end: Wanted) {
        let mut parts = self.parts.borrow_mut();
        let Some(Source::Bytes(b)) = parts.last_mut() else {
            return;
        };
        if b.len() < self.kept_end.saturating_mul(2).saturating_add(END_SLACK) {
            return;
        }
        let from = end_start(end, b);
        self.kept_end = b.len() - from;
        if from > 0 {
            b.drain(..from);
            // What is kept is a small end of what was held.
            if b.capacity() > 2 * b.len() + END_SLACK {
                b.shrink_to_fit();
            }
            // The end is all in the last part; what came before it is not.
            let last = parts.pop();
            parts.clear();
            parts.extend(last);
        }
    }

    /// A pipe whose reader reads only what `wanted` says.
    pub(crate) fn wanting(wanted: Option<Wanted>) -> Pipe {
        Pipe {
            wanted,
            counter: (wanted == Some(Wanted::Counts)).then(Box::default),
            ..Pipe::default()
        }
    }

    /// Where commands whose standard output is this pipe (and nothing in
    /// front of it) may pass documents on: see [`Cx::pass_document`].
    pub(crate) fn endpoint(&self) -> PipeEnd {
        PipeEnd {
            at: std::ptr::from_ref(self).cast::<u8>() as usize,
            parts: Rc::clone(&self.parts),
            broken: Rc::clone(&self.broken),
            counting: self.counter.is_some(),
        }
    }

    /// Bytes written past what the reader reads, and dropped.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// What was written, as the next command's standard input.
    pub(crate) fn into_input(self) -> Input {
        if let Some(counted) = self.counter {
            return Rc::new(RefCell::new(InBuf {
                counted: Some(counted),
                ..InBuf::default()
            }));
        }
        InBuf::parts(std::mem::take(&mut *self.parts.borrow_mut()))
    }
}

/// The pipe a running pipeline stage writes to, known by its address so
/// that a command can tell whether its standard output is that pipe
/// itself or something in front of it (`2>&1`, a redirection, a capture).
#[derive(Clone)]
pub(crate) struct PipeEnd {
    at: usize,
    parts: Rc<RefCell<Vec<Source>>>,
    broken: Rc<Cell<bool>>,
    /// The pipe counts what is written ([`Wanted::Counts`]): a document is
    /// written to it, not passed on.
    counting: bool,
}

impl PipeEnd {
    /// Whether `out` is this pipe itself, with nothing in front of it.
    /// The same address is the pipe: nothing else lives there while it
    /// does (no writer holds a `Pipe` by value).
    pub(crate) fn is(&self, out: &dyn Write) -> bool {
        std::ptr::from_ref::<dyn Write>(out).cast::<u8>() as usize == self.at
    }

    /// Whether `out` is this pipe and its reader has gone: the writer
    /// would have met `SIGPIPE` (see [`Pipe`]).
    pub(crate) fn gone_for(&self, out: &dyn Write) -> bool {
        self.broken.get() && self.is(out)
    }
}

/// The size of the pieces [`Cx::stream_operand`] reads a document in.
pub(crate) const STREAM_PIECE: u64 = crate::fs::PIECE;

/// The part of a command's input, its operands one after the other, that
/// it reads (`od -j N -N M`, `hexdump -s N -n M`, `xxd -s N -l M`): `skip`
/// bytes left out, then at most `limit` bytes (all with none). See
/// [`Cx::stream_window`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) skip: u64,
    pub(crate) limit: Option<u64>,
}

impl Window {
    /// Whether the limit is reached: nothing more is read.
    pub(crate) fn is_spent(&self) -> bool {
        self.limit == Some(0)
    }

    /// What of `piece`, the next bytes of the input, falls in the window;
    /// the window moves past `piece`.
    pub(crate) fn keep<'p>(&mut self, piece: &'p [u8]) -> &'p [u8] {
        let skipped = usize::try_from(self.skip)
            .unwrap_or(usize::MAX)
            .min(piece.len());
        self.skip -= skipped as u64;
        let rest = &piece[skipped..];
        let Some(limit) = &mut self.limit else {
            return rest;
        };
        let kept = usize::try_from(*limit)
            .unwrap_or(usize::MAX)
            .min(rest.len());
        *limit -= kept as u64;
        &rest[..kept]
    }
}

/// What one command runs with: the filesystem, its standard input, its
/// output and error streams.
pub(crate) struct Cx<'s> {
    pub(crate) fs: &'s mut dyn Fs,
    pub(crate) env: &'s mut Env,
    pub(crate) input: Input,
    /// How many `xargs` this command runs inside.
    pub(crate) depth: u32,
    pub(crate) out: &'s mut dyn Write,
    pub(crate) err: &'s mut dyn Write,
    /// The shell's variables as `NAME=VALUE` pairs, computed when a command
    /// asks (jq's `$ENV`).
    pub(crate) environ: &'s dyn Fn() -> Vec<(String, String)>,
}

impl Cx<'_> {
    /// Takes the command's standard input, whole.
    pub(crate) fn stdin(&mut self) -> Vec<u8> {
        self.input.borrow_mut().take_rest()
    }

    /// Writes bytes to standard output. A closed output is not an error
    /// the script can do anything about, so failures are ignored.
    pub(crate) fn out(&mut self, bytes: &[u8]) {
        let _ = self.out.write_all(bytes);
    }

    /// Writes what `held` has filled of a C stream's 4 KiB buffers, as
    /// GNU tools' standard output reaches a pipe: whole buffers only, so
    /// that their messages on standard error (unbuffered) come before
    /// what they still hold. The rest stays in `held` for the next call
    /// or the end.
    pub(crate) fn out_stdio(&mut self, held: &mut Vec<u8>) {
        self.out_blocks(held, 4096);
    }

    /// Writes what `held` has filled of blocks of `block` bytes; the rest
    /// stays in `held`. For tools that write through a buffer of their
    /// own size.
    pub(crate) fn out_blocks(&mut self, held: &mut Vec<u8>, block: usize) {
        let full = held.len() / block * block;
        if full > 0 {
            self.out(&held[..full]);
            held.drain(..full);
        }
    }

    /// Writes a string to standard output.
    pub(crate) fn outs(&mut self, s: &str) {
        self.out(&crate::lossless::encode(s));
    }

    /// Writes one line (a newline is added) to standard error.
    pub(crate) fn err(&mut self, msg: impl Display) {
        let msg = msg.to_string();
        let mut line = self.env.whence.message(&msg).into_owned();
        line.push('\n');
        let _ = self.err.write_all(&crate::lossless::encode(&line));
    }

    /// Reads a whole operand: `-` is standard input, anything else a
    /// document.
    pub(crate) fn read_operand(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        if path == "-" || path == "/dev/stdin" {
            Ok(self.stdin())
        } else {
            self.fs.read(path)
        }
    }

    /// Streams an operand to `each` in pieces: a document is read
    /// [`STREAM_PIECE`] bytes at a time, so that a command that works
    /// piece by piece holds one piece of a large document, not all of it
    /// (the script's memory limit is far below the documents' sizes);
    /// `-` is standard input, already in memory, in one piece. Empty
    /// input gives no piece.
    pub(crate) fn stream_operand(
        &mut self,
        path: &str,
        mut each: impl FnMut(&mut Self, &[u8]),
    ) -> Result<(), FsError> {
        if path == "-" || path == "/dev/stdin" {
            while !self.stdout_gone() {
                let piece = self.input.borrow_mut().next_piece();
                match piece {
                    Some(piece) => each(self, &piece),
                    None => return Ok(()),
                }
            }
            return Ok(());
        }
        let mut offset = 0;
        loop {
            if self.stdout_gone() {
                return Ok(());
            }
            let piece = self.fs.read_range(path, offset, STREAM_PIECE)?;
            if !piece.is_empty() {
                each(self, &piece);
            }
            if (piece.len() as u64) < STREAM_PIECE {
                return Ok(());
            }
            offset += STREAM_PIECE;
        }
    }

    /// Streams the part of a file operand that falls in `window`, and moves
    /// the window past the operand, so that the operands of one command
    /// make one input (`od -j`, `hexdump -s`). A document's skipped bytes
    /// are not read (its length says how many it holds), and reading stops
    /// at the limit: `od -N 16 big` reads a piece of `big`, not all of it.
    /// Standard input's skipped bytes are read and dropped.
    pub(crate) fn stream_window(
        &mut self,
        path: &str,
        window: &mut Window,
        mut each: impl FnMut(&mut Self, &[u8]),
    ) -> Result<(), FsError> {
        if path == "-" || path == "/dev/stdin" {
            while !window.is_spent() && !self.stdout_gone() {
                let piece = self.input.borrow_mut().next_piece();
                let Some(piece) = piece else {
                    return Ok(());
                };
                let kept = window.keep(&piece);
                if !kept.is_empty() {
                    each(self, kept);
                }
            }
            return Ok(());
        }
        let meta = self.fs.metadata(path)?;
        if meta.is_dir() {
            return Err(FsError::IsADirectory(path.to_owned()));
        }
        if window.skip >= meta.len {
            window.skip -= meta.len;
            return Ok(());
        }
        let mut offset = std::mem::take(&mut window.skip);
        while !window.is_spent() && !self.stdout_gone() {
            let want = window.limit.map_or(STREAM_PIECE, |n| n.min(STREAM_PIECE));
            let piece = self.fs.read_range(path, offset, want)?;
            let kept = window.keep(&piece);
            if !kept.is_empty() {
                each(self, kept);
            }
            if (piece.len() as u64) < want {
                break;
            }
            offset += want;
        }
        Ok(())
    }

    /// Streams an operand's lines (each without its `delim`; a last one
    /// without it too) to `each`, a piece of the document at a time: a
    /// line cut between two pieces is joined first.
    pub(crate) fn stream_lines(
        &mut self,
        path: &str,
        delim: u8,
        mut each: impl FnMut(&mut Self, &[u8]),
    ) -> Result<(), FsError> {
        self.stream_records(path, delim, |cx, record| {
            each(cx, record.strip_suffix(&[delim]).unwrap_or(record));
        })
    }

    /// Streams an operand's records to `each`, each with its `delim` (a
    /// last one may have none), a piece of the document at a time: a
    /// record cut between two pieces is joined first, so a command that
    /// goes line by line holds one line of a large document, not all of
    /// it.
    pub(crate) fn stream_records(
        &mut self,
        path: &str,
        delim: u8,
        mut each: impl FnMut(&mut Self, &[u8]),
    ) -> Result<(), FsError> {
        let mut carry: Vec<u8> = Vec::new();
        self.stream_operand(path, |cx, piece| {
            let mut start = 0;
            while let Some(k) = memchr::memchr(delim, &piece[start..]) {
                let end = start + k + 1;
                if carry.is_empty() {
                    each(cx, &piece[start..end]);
                } else {
                    carry.extend_from_slice(&piece[start..end]);
                    each(cx, &carry);
                    carry.clear();
                }
                start = end;
            }
            carry.extend_from_slice(&piece[start..]);
        })?;
        if !carry.is_empty() {
            each(self, &carry);
        }
        Ok(())
    }

    /// Reads an operand as a file: `-` is standard input, a directory is
    /// refused (`Is a directory`, as GNU tools report it).
    pub(crate) fn read_file_operand(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        self.refuse_directory(path)?;
        self.read_operand(path)
    }

    /// [`Cx::stream_operand`] for an operand read as a file, as
    /// [`Cx::read_file_operand`] reads one.
    pub(crate) fn stream_file_operand(
        &mut self,
        path: &str,
        each: impl FnMut(&mut Self, &[u8]),
    ) -> Result<(), FsError> {
        self.refuse_directory(path)?;
        self.stream_operand(path, each)
    }

    /// Whether standard output is a pipe whose reader has gone (`head`
    /// has what it reads, and more than a pipe's buffer was written past
    /// it): a real command would have been ended by `SIGPIPE`, so one
    /// that goes on at length (reading documents, walking a tree) stops.
    pub(crate) fn stdout_gone(&self) -> bool {
        self.env.pipe.as_ref().is_some_and(|p| p.gone_for(self.out))
    }

    /// Passes a document (or `-`, what is left of standard input) on to
    /// standard output without reading it, when
    /// standard output is a pipe and nothing stands in front of it: the
    /// next command reads the document as it reads its input, a piece at
    /// a time. `Ok(false)`: standard output is something else, and the
    /// caller writes the bytes itself.
    pub(crate) fn pass_document(&mut self, path: &str) -> Result<bool, FsError> {
        let Some(pipe) = &self.env.pipe else {
            return Ok(false);
        };
        if pipe.counting || !pipe.is(self.out) {
            return Ok(false);
        }
        let parts = Rc::clone(&pipe.parts);
        if path == "-" || path == "/dev/stdin" {
            let rest = self.input.borrow_mut().take_parts();
            parts.borrow_mut().extend(rest);
            return Ok(true);
        }
        let (reader, len) = self.fs.open(path)?;
        parts.borrow_mut().push(Source::Reader(reader, len));
        Ok(true)
    }

    pub(crate) fn refuse_directory(&mut self, path: &str) -> Result<(), FsError> {
        if path != "-"
            && let Ok(m) = self.fs.metadata(path)
            && m.is_dir()
        {
            return Err(FsError::IsADirectory(path.to_owned()));
        }
        Ok(())
    }

    /// A context for a nested command (run by `xargs`, `find -exec`) with
    /// its own input.
    pub(crate) fn nested(&mut self, input: Vec<u8>) -> Cx<'_> {
        Cx {
            fs: &mut *self.fs,
            env: &mut *self.env,
            input: InBuf::bytes(input),
            depth: self.depth + 1,
            out: &mut *self.out,
            err: &mut *self.err,
            environ: self.environ,
        }
    }

    /// Runs a shell script in a new shell (as `sh -c` would) with this
    /// command's streams; `args` are `$0` and the positional parameters.
    /// `posix`: the shell is `sh` (Debian's dash, as `/bin/sh` is there),
    /// not bash.
    pub(crate) fn run_shell(&mut self, script: &str, args: Vec<String>, posix: bool) -> u8 {
        self.shell_with(script, args, posix, true, None, None)
    }

    /// Runs a script file's text as [`Cx::run_shell`] runs a command
    /// string; `args[0]` is the file's path, which its messages name.
    pub(crate) fn run_shell_file(&mut self, script: &str, args: Vec<String>, posix: bool) -> u8 {
        self.shell_with(script, args, posix, false, None, None)
    }

    /// Runs `sh -c SCRIPT` with this command's standard input, its
    /// standard output captured (awk's `cmd | getline`, sed's `e`: both run
    /// `/bin/sh`).
    pub(crate) fn shell_output(&mut self, script: &str) -> (Vec<u8>, u8) {
        let mut out = Vec::new();
        let status = self.shell_with(
            script,
            vec!["sh".to_owned()],
            true,
            true,
            None,
            Some(&mut out),
        );
        (out, status)
    }

    /// Runs `sh -c SCRIPT` reading `input`, writing to this command's
    /// standard output (awk's `print | cmd`).
    pub(crate) fn shell_input(&mut self, script: &str, input: Vec<u8>) -> u8 {
        self.shell_with(
            script,
            vec!["sh".to_owned()],
            true,
            true,
            Some(InBuf::bytes(input)),
            None,
        )
    }

    /// `string`: the script is a command string, not a file's text
    /// (see [`Whence::string`]).
    fn shell_with(
        &mut self,
        script: &str,
        args: Vec<String>,
        posix: bool,
        string: bool,
        input: Option<Input>,
        out: Option<&mut Vec<u8>>,
    ) -> u8 {
        let name = args
            .first()
            .map_or(if posix { "sh" } else { "bash" }, String::as_str);
        let lead = match (posix, string) {
            (true, _) => syntax::Lead::Dash(name),
            (false, true) => syntax::Lead::String(name),
            (false, false) => syntax::Lead::File(name),
        };
        let (list, error) = match lines_then_error(script, posix, &lead) {
            Ok(l) => l,
            Err((msg, status)) => {
                if !msg.is_empty() {
                    self.err(msg);
                }
                return status;
            }
        };
        if self.env.nesting >= MAX_SHELLS {
            self.err(format_args!(
                "vfs-sh: more than {MAX_SHELLS} shells inside each other"
            ));
            return 126;
        }
        self.env.nesting += 1;
        let whence = std::mem::replace(
            &mut self.env.whence,
            Whence {
                string,
                ..Whence::new(name, posix)
            },
        );
        let input = input.unwrap_or_else(|| self.input.clone());
        // A shell is a process of its own: a `cd` inside `sh -c` (or
        // `find -exec sh -c 'cd "$1" && ...'`) leaves the caller where it was.
        let cwd = self.fs.cwd();
        let inherited = (self.environ)();
        let mut shell = Shell::new(&mut *self.fs, &mut *self.env, args);
        if posix {
            shell.set_posix();
        } else if string {
            shell.set_execution_string(script);
        }
        shell.inherit(inherited);
        let status = match out {
            Some(o) => shell.run_script(&list, error.as_ref(), input, o, &mut *self.err),
            None => shell.run_script(&list, error.as_ref(), input, &mut *self.out, &mut *self.err),
        };
        self.env.nesting -= 1;
        self.env.whence = whence;
        if self.fs.cwd() != cwd {
            let _ = self.fs.set_cwd(&cwd);
        }
        status
    }
}

/// Shells inside shells (`sh -c` in `find -exec` in `sh -c`...) at most
/// this deep: each is a frame of the guest's own stack.
const MAX_SHELLS: u32 = 16;

/// How much of `/dev/zero` a command reads.
const ZERO_LIMIT: usize = 1 << 20;

/// The files a script's own expansions made (`<(...)`'s output, read back
/// by name), in front of the real filesystem; `/dev/null` reads as empty.
pub(crate) struct Overlay<'a> {
    pub(crate) inner: &'a mut dyn Fs,
    pub(crate) files: &'a HashMap<String, Rc<Vec<u8>>>,
}

impl Overlay<'_> {
    fn virtual_file(&self, path: &str) -> Option<Rc<Vec<u8>>> {
        match path {
            "/dev/null" => return Some(Rc::new(Vec::new())),
            // An endless stream of zeros, cut at 1 MiB as `yes` is (a
            // command reads its input whole).
            "/dev/zero" => return Some(Rc::new(vec![0; ZERO_LIMIT])),
            _ => {}
        }
        self.files.get(path).cloned()
    }
}

impl Fs for Overlay<'_> {
    fn cwd(&mut self) -> String {
        self.inner.cwd()
    }

    fn set_cwd(&mut self, path: &str) -> Result<String, FsError> {
        self.inner.set_cwd(path)
    }

    fn metadata(&mut self, path: &str) -> Result<Meta, FsError> {
        match self.virtual_file(path) {
            Some(data) => Ok(Meta {
                path: path.to_owned(),
                kind: Kind::File,
                len: data.len() as u64,
                modified: None,
            }),
            None => self.inner.metadata(path),
        }
    }

    fn mode(&mut self, path: &str) -> Result<u32, FsError> {
        match self.virtual_file(path) {
            Some(_) => Ok(crate::fs::DEFAULT_FILE_MODE),
            None => self.inner.mode(path),
        }
    }

    fn attributes(&mut self, path: &str) -> Result<crate::fs::Attrs, FsError> {
        match self.virtual_file(path) {
            Some(_) => Ok(crate::fs::Attrs {
                mode: crate::fs::DEFAULT_FILE_MODE,
                inode: 0,
                device: 0,
                accessed: None,
                changed: None,
                created: None,
            }),
            None => self.inner.attributes(path),
        }
    }

    fn read_dir(&mut self, path: &str) -> Result<Vec<Entry>, FsError> {
        self.inner.read_dir(path)
    }

    fn read(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        match self.virtual_file(path) {
            Some(data) => Ok(data.as_ref().clone()),
            None => self.inner.read(path),
        }
    }

    fn open(&mut self, path: &str) -> Result<Opened, FsError> {
        match self.virtual_file(path) {
            Some(data) => {
                let len = data.len() as u64;
                Ok((Box::new(std::io::Cursor::new(data.as_ref().clone())), len))
            }
            None => self.inner.open(path),
        }
    }

    fn read_range(&mut self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, FsError> {
        match self.virtual_file(path) {
            Some(data) => {
                let start = usize::try_from(offset)
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                let end = start
                    .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
                    .min(data.len());
                Ok(data[start..end].to_vec())
            }
            None => self.inner.read_range(path, offset, len),
        }
    }

    fn grep(&mut self, roots: &[String], req: &GrepRequest) -> Result<GrepResult, FsError> {
        if !roots.iter().any(|r| self.virtual_file(r).is_some()) {
            return self.inner.grep(roots, req);
        }
        // Root by root, in order: the script's own files are searched here.
        let matcher = crate::search::Matcher::new(req).map_err(FsError::Unavailable)?;
        let mut all = GrepResult::default();
        for root in roots {
            match self.virtual_file(root) {
                Some(data) => {
                    let hits = matcher.search(root, &data);
                    all.files_scanned += 1;
                    if hits.match_count > 0 || req.include_non_matching {
                        all.files.push(hits);
                    }
                }
                None => {
                    let r = self.inner.grep(std::slice::from_ref(root), req)?;
                    all.files.extend(r.files);
                    all.files_scanned += r.files_scanned;
                    all.errors.extend(r.errors);
                    if r.truncated.is_some() {
                        all.truncated = r.truncated;
                    }
                }
            }
        }
        Ok(all)
    }
}

/// A script to run as bash runs one, a line at a time: the lines that
/// parse before a syntax error, and a line that reports the error and
/// exits with its status (run after them unless one of them exits first,
/// and under `set -n` too). `Err` with the message and status when the
/// first line does not parse: nothing runs.
fn lines_then_error(
    script: &str,
    posix: bool,
    lead: &syntax::Lead<'_>,
) -> Result<(Vec<syntax::List>, Option<syntax::List>), (String, u8)> {
    match syntax::parse_lines(script, posix) {
        (lines, None) => Ok((lines, None)),
        (lines, Some(e)) if lines.is_empty() => {
            Err((e.report(lead), e.status.unwrap_or(e.otherwise)))
        }
        (lines, Some(e)) => {
            let said = e.report(lead);
            let print = if said.is_empty() {
                String::new()
            } else {
                format!(
                    "printf '%s\\n' {} >&2; ",
                    crate::commands::shell_quote(&said)
                )
            };
            let report = format!(
                "{{ vfs_sh_status=$?; {print}exit {}; }}",
                match e.status {
                    Some(status) => status.to_string(),
                    None => format!("$(( vfs_sh_status ? vfs_sh_status : {} ))", e.otherwise),
                }
            );
            let report = syntax::parse(&report).map_err(|_| (said, 2))?;
            Ok((lines, Some(report)))
        }
    }
}

/// Runs a script; returns its exit status. A script that does not parse
/// runs its lines up to the one that does not, then prints why on `err`
/// and returns 2.
pub fn run(
    fs: &mut dyn Fs,
    script: &str,
    stdin: Box<dyn Read>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let (list, error) = match lines_then_error(script, false, &syntax::Lead::String("bash")) {
        Ok(l) => l,
        Err((msg, status)) => {
            if !msg.is_empty() {
                let _ = writeln!(err, "{msg}");
            }
            return status;
        }
    };
    let mut env = Env {
        now: SystemTime::now(),
        stdin: InBuf::stream(stdin, 0),
        pipe: None,
        nesting: 0,
        calls: 0,
        frames: 0,
        whence: Whence::new("bash", false),
    };
    let input = env.stdin.clone();
    let mut shell = Shell::new(fs, &mut env, vec!["bash".to_owned()]);
    shell.set_execution_string(script);
    let status = shell.run_script(&list, error.as_ref(), input, out, err);
    let _ = out.flush();
    status
}

/// The usage message for a wrong invocation of the binary.
pub const USAGE: &str = "usage: vfs-sh -c SCRIPT";

/// Runs `vfs-sh -c SCRIPT` from its command line (`argv[0]` included);
/// any other invocation prints [`USAGE`] and returns 2.
pub fn run_argv(
    argv: &[String],
    fs: &mut dyn Fs,
    stdin: Box<dyn Read>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    match argv {
        [_, flag, script] if flag == "-c" => run(fs, script, stdin, out, err),
        _ => {
            let _ = writeln!(err, "{USAGE}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines `0\n` to `n-1\n`: over 2 MiB for `n` = 400,000.
    fn numbered(n: usize) -> Vec<u8> {
        (0..n).flat_map(|i| format!("{i}\n").into_bytes()).collect()
    }

    fn reader(data: &[u8]) -> Source {
        Source::Reader(Box::new(std::io::Cursor::new(data.to_vec())), 0)
    }

    #[test]
    fn lines_read_across_pieces_and_parts() {
        let big = numbered(400_000);
        assert!(big.len() as u64 > 2 * crate::fs::PIECE);
        let input = InBuf::parts(vec![
            Source::Bytes(b"head\npart".to_vec()),
            reader(b"ial\n"),
            reader(&big),
            Source::Bytes(big.clone()),
            Source::Bytes(b"no newline".to_vec()),
        ]);
        let mut input = input.borrow_mut();
        assert_eq!(input.read_until(b'\n').as_deref(), Some(&b"head\n"[..]));
        assert_eq!(input.read_until(b'\n').as_deref(), Some(&b"partial\n"[..]));
        for _ in 0..2 {
            for i in 0..400_000 {
                let line = input.read_until(b'\n').expect("a line");
                assert_eq!(line, format!("{i}\n").into_bytes());
            }
        }
        assert_eq!(input.read_until(b'\n').as_deref(), Some(&b"no newline"[..]));
        assert_eq!(input.read_until(b'\n'), None);
    }

    #[test]
    fn pieces_are_bounded_and_add_up() {
        let big = numbered(400_000);
        let input = InBuf::parts(vec![
            reader(&big),
            Source::Bytes(big.clone()),
            Source::Bytes(Vec::new()),
        ]);
        let mut got = Vec::new();
        while let Some(piece) = input.borrow_mut().next_piece() {
            assert!(!piece.is_empty() && piece.len() as u64 <= crate::fs::PIECE);
            got.extend_from_slice(&piece);
        }
        assert_eq!(got, [big.clone(), big].concat());
    }

    #[test]
    fn the_rest_is_taken_or_passed_on_after_a_partial_read() {
        let make = || {
            InBuf::parts(vec![
                Source::Bytes(b"ab".to_vec()),
                reader(b"cd\nef"),
                Source::Bytes(b"gh".to_vec()),
            ])
        };
        let input = make();
        assert_eq!(input.borrow_mut().read_n(3), b"abc");
        assert_eq!(input.borrow_mut().take_rest(), b"d\nefgh");
        assert!(input.borrow_mut().next_piece().is_none());
        let input = make();
        assert_eq!(
            input.borrow_mut().read_until(b'\n').as_deref(),
            Some(&b"abcd\n"[..])
        );
        let passed = InBuf::parts(input.borrow_mut().take_parts());
        assert_eq!(passed.borrow_mut().take_rest(), b"efgh");
        let input = make();
        input.borrow_mut().discard();
        assert!(input.borrow_mut().take_rest().is_empty());
    }

    /// A reader that gives `data` and then fails.
    struct Failing(std::io::Cursor<Vec<u8>>);

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(std::io::Error::other("doc.txt: backend unavailable")),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_failing_reader_ends_the_input_and_is_reported_once() {
        let failing =
            || Source::Reader(Box::new(Failing(std::io::Cursor::new(b"abc".to_vec()))), 0);
        let input = InBuf::parts(vec![failing(), Source::Bytes(b"def".to_vec())]);
        assert_eq!(input.borrow_mut().take_rest(), b"abcdef");
        let why = input.borrow_mut().take_failure();
        assert_eq!(why.as_deref(), Some("doc.txt: backend unavailable"));
        assert_eq!(input.borrow_mut().take_failure(), None);
        let input = InBuf::parts(vec![failing()]);
        assert_eq!(
            input.borrow_mut().next_piece().as_deref(),
            Some(&b"abc"[..])
        );
        assert_eq!(input.borrow_mut().next_piece(), None);
        assert!(input.borrow_mut().take_failure().is_some());
    }

    #[test]
    fn a_pipe_into_wc_keeps_the_counts_alone() {
        let mut pipe = Pipe::wanting(Some(Wanted::Counts));
        let end = pipe.endpoint();
        assert!(end.counting, "documents are written to it, not passed on");
        // A word and a two-byte character cut between writes.
        for w in [&b"one tw"[..], b"o\nth", b"ree \xc3", b"\xa9\n"] {
            assert_eq!(pipe.write(w).expect("writes"), w.len());
        }
        assert!(end.parts.borrow().is_empty(), "no byte kept");
        let input = pipe.into_input();
        let counts = input.borrow_mut().take_counted().expect("counts");
        assert_eq!(
            format!("{:?}", counts.finish()),
            format!(
                "{:?}",
                crate::commands::wc::count(b"one two\nthree \xc3\xa9\n")
            )
        );
        assert_eq!(input.borrow_mut().next_piece(), None);
        assert!(input.borrow_mut().take_counted().is_none(), "once");
    }

    #[test]
    fn a_pipe_keeps_only_what_its_reader_reads() {
        let kept = |wanted: Wanted, writes: &[&[u8]]| {
            let mut pipe = Pipe::wanting(Some(wanted));
            for w in writes {
                assert_eq!(pipe.write(w).expect("writes"), w.len(), "takes it all");
            }
            pipe.into_input().borrow_mut().take_rest()
        };
        let writes: &[&[u8]] = &[b"one\ntw", b"o\nthree\nfour\n", b"five\n"];
        assert_eq!(kept(Wanted::Lines(2), writes), b"one\ntwo\n");
        assert_eq!(kept(Wanted::Lines(1), writes), b"one\n");
        assert_eq!(kept(Wanted::Lines(0), writes), b"");
        assert_eq!(kept(Wanted::Lines(9), writes), writes.concat());
        assert_eq!(kept(Wanted::Bytes(8), writes), b"one\ntwo\n");
        assert_eq!(kept(Wanted::Bytes(5), writes), b"one\nt");
        // A document passed on unread is kept whole and not counted.
        let mut pipe = Pipe::wanting(Some(Wanted::Lines(2)));
        pipe.write_all(b"a\n").expect("writes");
        pipe.endpoint()
            .parts
            .borrow_mut()
            .push(reader(b"doc\ndoc\n"));
        pipe.write_all(b"b\nc\n").expect("writes");
        assert_eq!(
            pipe.into_input().borrow_mut().take_rest(),
            b"a\ndoc\ndoc\nb\n"
        );
    }

    #[test]
    fn a_pipe_into_tail_keeps_the_end() {
        let lines: Vec<u8> = (0..400_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let kept = |end: Wanted| {
            let mut pipe = Pipe::wanting(Some(end));
            pipe.endpoint().parts.borrow_mut().push(reader(b"doc\n"));
            for chunk in lines.chunks(4096) {
                pipe.write_all(chunk).expect("writes");
            }
            pipe.into_input().borrow_mut().take_rest()
        };
        // The start goes, the document passed before the end with it.
        let end = kept(Wanted::LastLines(3));
        assert!(end.ends_with(b"399996\n399997\n399998\n399999\n"));
        assert!(end.len() < lines.len() / 2, "{}", end.len());
        assert!(!end.starts_with(b"doc"));
        let end = kept(Wanted::LastBytes(5));
        assert!(end.ends_with(b"9999\n"));
        assert!(end.len() < lines.len() / 2, "{}", end.len());
        // An end longer than what was written keeps it all.
        let all = kept(Wanted::LastLines(500_000));
        assert_eq!(all, [b"doc\n".as_slice(), &lines].concat());
        // One write holding the end (`echo "$doc" | tail -2`) is not
        // copied whole: only its end, with a line to spare, is kept.
        let mut pipe = Pipe::wanting(Some(Wanted::LastLines(2)));
        pipe.endpoint().parts.borrow_mut().push(reader(b"doc\n"));
        pipe.write_all(&lines).expect("writes");
        let parts = pipe.parts.borrow();
        assert!(
            matches!(parts.as_slice(), [Source::Bytes(b)] if b == b"399997\n399998\n399999\n"),
            "{} parts",
            parts.len()
        );
    }

    #[test]
    fn a_pipe_keeps_writes_and_documents_in_order() {
        let mut pipe = Pipe::default();
        pipe.write_all(b"one ").expect("writes");
        pipe.write_all(b"two\n").expect("writes");
        pipe.endpoint().parts.borrow_mut().push(reader(b"doc\n"));
        pipe.write_all(b"three\n").expect("writes");
        assert_eq!(pipe.parts.borrow().len(), 3, "adjacent writes are one part");
        assert_eq!(
            pipe.into_input().borrow_mut().take_rest(),
            b"one two\ndoc\nthree\n"
        );
    }
}
