//! `grep` and `rg`.
//!
//! Files and directories are searched on the host ([`crate::fs::Fs::grep`],
//! ripgrep's engine, scan-budgeted): the shell checks each operand, sends
//! the roots in batches, and prints the results under the names the user
//! wrote, with GNU's prefix rules. Standard input (in a pipeline, or `-`)
//! and a large document named as an operand are searched in the guest with
//! the `regex` crate, a piece at a time.
//!
//! grep patterns are POSIX basic (default) or extended (`-E`) expressions,
//! translated to the Rust syntax both engines share; `-P` and `rg` take
//! Rust syntax as it is. A `-P` pattern that needs backtracking (look-around,
//! `\K`, back-references) is matched in the guest instead, over documents it
//! reads one by one (each read charged to the script's budget).

mod output;

use output::{Mode, Printer};

use super::{flag, optional, options, value};
use crate::exec::Cx;
use crate::fs::{FileHits, FsError, GrepRequest, MAX_GREP_ROOTS};
use crate::glob::Pattern;
use crate::pattern::{Syntax, translate};
use crate::search::Matcher;

/// Which command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Grep,
    Rg,
}

impl Flavor {
    fn name(self) -> &'static str {
        match self {
            Flavor::Grep => "grep",
            Flavor::Rg => "rg",
        }
    }
}

const GREP_SPEC: &[super::Spec] = &[
    flag('i', "ignore-case", "i"),
    flag('y', "", "i"),
    flag('\0', "no-ignore-case", "no-i"),
    flag('\0', "smart-case", "S"),
    flag('n', "line-number", "n"),
    flag('b', "byte-offset", "b"),
    flag('\0', "no-line-number", "N"),
    flag('r', "recursive", "r"),
    flag('R', "dereference-recursive", "r"),
    flag('E', "extended-regexp", "E"),
    flag('F', "fixed-strings", "F"),
    flag('G', "basic-regexp", "G"),
    flag('P', "perl-regexp", "P"),
    flag('w', "word-regexp", "w"),
    flag('x', "line-regexp", "x"),
    flag('v', "invert-match", "v"),
    flag('l', "files-with-matches", "l"),
    flag('L', "files-without-match", "L"),
    flag('c', "count", "c"),
    flag('o', "only-matching", "o"),
    flag('h', "no-filename", "h"),
    flag('H', "with-filename", "H"),
    flag('q', "quiet", "q"),
    flag('\0', "silent", "q"),
    flag('s', "no-messages", "s"),
    value('A', "after-context", "A"),
    value('B', "before-context", "B"),
    value('C', "context", "C"),
    value('m', "max-count", "m"),
    value('e', "regexp", "e"),
    value('f', "file", "f"),
    value('\0', "include", "include"),
    value('\0', "exclude", "exclude"),
    value('\0', "exclude-dir", "exclude-dir"),
    optional("color", "color"),
    optional("colour", "color"),
    flag('a', "text", "a"),
    flag('I', "", "I"),
    value('\0', "binary-files", "binary-files"),
    flag('\0', "line-buffered", "lb"),
    flag('U', "binary", "U"),
    flag('Z', "null", "Z"),
    flag('z', "null-data", "z"),
    flag('T', "initial-tab", "T"),
    value('d', "directories", "d"),
    value('D', "devices", "devices"),
    value('\0', "label", "label"),
];

const RG_SPEC: &[super::Spec] = &[
    flag('i', "ignore-case", "i"),
    flag('S', "smart-case", "S"),
    flag('s', "case-sensitive", "no-i"),
    flag('n', "line-number", "n"),
    flag('N', "no-line-number", "N"),
    flag('r', "", "r"),
    flag('R', "", "r"),
    flag('F', "fixed-strings", "F"),
    flag('w', "word-regexp", "w"),
    flag('x', "line-regexp", "x"),
    flag('v', "invert-match", "v"),
    flag('l', "files-with-matches", "l"),
    flag('\0', "files-without-match", "L"),
    flag('c', "count", "c"),
    flag('o', "only-matching", "o"),
    flag('I', "no-filename", "h"),
    // Not ripgrep's (where -h is --help): grep's --no-filename, as `help`
    // lists it.
    flag('h', "", "h"),
    flag('H', "with-filename", "H"),
    flag('q', "quiet", "q"),
    value('A', "after-context", "A"),
    value('B', "before-context", "B"),
    value('C', "context", "C"),
    value('m', "max-count", "m"),
    value('e', "regexp", "e"),
    value('f', "file", "f"),
    value('g', "glob", "glob"),
    value('\0', "iglob", "glob"),
    flag('\0', "hidden", "hidden"),
    flag('\0', "no-ignore", "hidden"),
    flag('u', "unrestricted", "hidden"),
    flag('\0', "no-heading", "hidden"),
    flag('\0', "no-messages", "s"),
    optional("color", "color"),
    flag('a', "text", "a"),
];

/// GNU's `-NUM` shorthand for `-C NUM`.
fn expand_numeric(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut done = false;
    for a in args {
        if a == "--" {
            done = true;
        }
        match a.strip_prefix('-') {
            Some(d) if !done && !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
                out.push("-C".to_owned());
                out.push(d.to_owned());
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

/// One searched operand.
#[derive(Debug, Clone)]
struct Root {
    /// As the user wrote it (`None`: the implicit `.` of `grep -r`).
    display: Option<String>,
    /// Absolute, as the host reports paths under it.
    abs: String,
    is_dir: bool,
    /// A document's size in bytes.
    len: u64,
}

impl Root {
    /// The part of `path` below this root, when it is below it.
    fn rel<'a>(&self, path: &'a str) -> Option<&'a str> {
        if self.abs == "/" {
            return path.strip_prefix('/');
        }
        let rest = path.strip_prefix(self.abs.as_str())?;
        if rest.is_empty() {
            Some("")
        } else {
            rest.strip_prefix('/')
        }
    }

    /// How GNU grep names a file found under this root.
    fn name(&self, path: &str) -> String {
        let rel = self.rel(path).unwrap_or(path);
        match &self.display {
            Some(d) if !self.is_dir || rel.is_empty() => d.clone(),
            None => rel.to_owned(),
            Some(d) => {
                let base = d.trim_end_matches('/');
                format!("{base}/{rel}")
            }
        }
    }
}

/// Assigns each result file to the root it came from: results arrive root
/// by root, in order.
fn attribute(roots: &[Root], files: &[FileHits]) -> Vec<String> {
    let mut at = 0;
    let mut names = Vec::with_capacity(files.len());
    for f in files {
        let found = (at..roots.len())
            .find(|&j| roots[j].rel(&f.path).is_some())
            .or_else(|| roots.iter().position(|r| r.rel(&f.path).is_some()));
        match found {
            Some(j) => {
                names.push(roots[j].name(&f.path));
                at = if roots[j].is_dir { j } else { j + 1 };
            }
            None => names.push(f.path.clone()),
        }
    }
    names
}

/// Everything decided before searching.
struct Search {
    req: GrepRequest,
    printer: Printer,
    quiet_errors: bool,
    name: &'static str,
    errors: bool,
    /// Files the host searched, over every call.
    scanned: u64,
    /// Files the host did not reach, when a call was cut short.
    truncated: Option<u64>,
    /// A `-P` pattern only the backtracking engine takes, or a search with
    /// `--exclude-dir` (which the host's walk does not know) or `-b` (which
    /// needs the bytes): documents are searched in the guest with this
    /// matcher.
    guest: Option<Matcher>,
    /// `--exclude-dir`: directories below a root not to enter.
    exclude_dirs: Vec<Pattern>,
    /// `-z`: lines end with NUL, not newline (searched in the guest).
    null_data: bool,
    /// `-a`: a binary document's lines are printed as text's are
    /// (searched in the guest).
    as_text: bool,
}

impl Search {
    fn error(&mut self, cx: &mut Cx<'_>, msg: impl std::fmt::Display) {
        self.errors = true;
        if !self.quiet_errors {
            cx.err(format_args!("{}: {msg}", self.name));
        }
    }

    /// Searches documents and directories on the host, in batches; a
    /// large document named as an operand is searched in the guest a
    /// piece at a time instead (see [`STREAM_OVER`]).
    fn host(&mut self, cx: &mut Cx<'_>, roots: &[Root]) {
        let mut from = 0;
        for (i, root) in roots.iter().enumerate() {
            if self.streams_document(root) {
                self.host_batches(cx, &roots[from..i]);
                self.document_in_pieces(cx, root);
                from = i + 1;
            }
        }
        self.host_batches(cx, &roots[from..]);
    }

    /// Whether `root` is a document to search a piece at a time: one
    /// large enough that the host's answer (every selected line at once)
    /// could crowd the script's memory, in a search that prints lines or
    /// runs in the guest anyway.
    fn streams_document(&self, root: &Root) -> bool {
        !root.is_dir
            && root.len >= STREAM_OVER
            && self.streams()
            && (self.printer.mode == Mode::Lines || self.guest.is_some())
    }

    /// Whether a search can read its input a piece at a time: not with
    /// context, `-b`, `-z` or `-I`, which need the whole input.
    fn streams(&self) -> bool {
        !self.null_data
            && !self.printer.skip_binary
            && !self.printer.byte_offset
            && self.req.before_context == 0
            && self.req.after_context == 0
    }

    fn host_batches(&mut self, cx: &mut Cx<'_>, roots: &[Root]) {
        if self.guest.is_some() {
            for root in roots {
                self.in_guest(cx, root);
            }
            return;
        }
        // Printing lines without context, the host returns at most
        // `PAGE_LINES` of a document; one that has more is read on in the
        // guest a piece at a time, so that a directory holding a large log
        // never has every selected line of it in memory at once.
        let page = (self.printer.mode == Mode::Lines && self.streams())
            .then_some(PAGE_LINES)
            .filter(|&p| self.req.max_count.is_none_or(|m| m > p));
        let req = GrepRequest {
            max_count: page.or(self.req.max_count),
            ..self.req.clone()
        };
        for batch in roots.chunks(MAX_GREP_ROOTS) {
            let paths: Vec<String> = batch.iter().map(|r| r.abs.clone()).collect();
            let result = match cx.fs.grep(&paths, &req) {
                Ok(r) => r,
                Err(e) => {
                    let why = match e {
                        FsError::Unavailable(why) => why,
                        other => other.strerror().to_owned(),
                    };
                    self.error(cx, why);
                    return;
                }
            };
            let names = attribute(batch, &result.files);
            for (f, name) in result.files.iter().zip(&names) {
                self.printer.file(cx, name, f, None);
                // A binary document's lines are only counted: the host's
                // "binary file matches" is its whole answer.
                if page.is_some_and(|p| f.match_count >= p) && !f.lines.is_empty() {
                    self.rest_in_pieces(cx, name, &f.path, f.match_count);
                }
            }
            for (path, e) in &result.errors {
                let name = batch
                    .iter()
                    .find(|r| r.rel(path).is_some())
                    .map_or_else(|| path.clone(), |r| r.name(path));
                self.error(cx, format_args!("{name}: {}", e.strerror()));
            }
            self.scanned += result.files_scanned;
            if let Some(t) = result.truncated {
                *self.truncated.get_or_insert(0) += t.files_not_reached;
            }
        }
    }

    /// Searches one root in the guest, in the host search's order and with
    /// its rules: directories depth first in listing order,
    /// `--include`/`--exclude` on file names, a binary file's lines counted
    /// only.
    fn in_guest(&mut self, cx: &mut Cx<'_>, root: &Root) {
        let Some(matcher) = self.guest.clone().map(|m| self.for_mode(m)) else {
            return;
        };
        let names = NameFilter::new(&self.req);
        let wanted = |name: &str| names.wanted(name);
        let mut stack = vec![(root.abs.clone(), root.is_dir)];
        while let Some((path, is_dir)) = stack.pop() {
            if is_dir {
                match cx.fs.read_dir(&path) {
                    Ok(entries) => {
                        for e in entries.into_iter().rev() {
                            let skip_dir = e.is_dir()
                                && self.exclude_dirs.iter().any(|p| p.matches(&e.name, false));
                            if !skip_dir && (e.is_dir() || wanted(&e.name)) {
                                stack.push((super::join(&path, &e.name), e.is_dir()));
                            }
                        }
                    }
                    Err(e) => {
                        let name = root.name(&path);
                        self.error(cx, format_args!("{name}: {}", e.strerror()));
                    }
                }
                continue;
            }
            if !root.is_dir && !wanted(path.rsplit('/').next().unwrap_or(&path)) {
                continue;
            }
            self.scanned += 1;
            match cx.fs.read(&path) {
                Ok(data) => {
                    let hits = self.search_data(&matcher, &path, &data);
                    if hits.match_count > 0 || self.req.include_non_matching {
                        let name = root.name(&path);
                        self.printer.size = Some(data.len() as u64);
                        self.printer.file(cx, &name, &hits, Some(&data));
                    }
                }
                Err(e) => {
                    let name = root.name(&path);
                    self.error(cx, format_args!("{name}: {}", e.strerror()));
                }
            }
        }
    }

    /// Searches one document's bytes: as GNU grep does, or with `-z`, with
    /// NUL ending lines (the guest's matcher is then [`Matcher::nul_ended`]).
    fn search_data(&self, matcher: &Matcher, path: &str, data: &[u8]) -> crate::fs::FileHits {
        if self.null_data || self.as_text {
            matcher.search(path, data)
        } else {
            matcher.search_file(path, data)
        }
    }

    /// A matcher for a search in the guest that keeps no line where the
    /// mode prints none. Not with `-I`, whose printer knows a binary
    /// document by its having selected lines and none returned.
    fn for_mode(&self, matcher: Matcher) -> Matcher {
        match self.printer.mode {
            Mode::Lines => matcher,
            _ if self.printer.skip_binary => matcher,
            Mode::Count => matcher.counting(false),
            Mode::FilesWith | Mode::FilesWithout | Mode::Quiet => matcher.counting(true),
        }
    }

    /// The matcher a search in the guest uses, for this mode; `None`
    /// once the pattern's error is reported.
    fn guest_matcher(&mut self, cx: &mut Cx<'_>) -> Option<Matcher> {
        let compiled = match &self.guest {
            Some(m) => Ok(m.clone()),
            None => Matcher::new(&self.req),
        };
        match compiled {
            Ok(m) => Some(self.for_mode(m)),
            Err(e) => {
                self.error(cx, e);
                None
            }
        }
    }

    /// Searches standard input in the guest.
    fn stdin(&mut self, cx: &mut Cx<'_>, label: &str) {
        let Some(matcher) = self.guest_matcher(cx) else {
            return;
        };
        // Standard input is a pipe: it has no size.
        self.printer.size = None;
        if self.streams() {
            // Standard input's pieces never fail: they are in memory, or
            // a document whose read failed is reported where it was read.
            let _ = self.in_pieces(cx, label, &matcher, &mut Pieces::Stdin, 0);
            cx.input.borrow_mut().discard();
            return;
        }
        let data = cx.stdin();
        let hits = self.search_data(&matcher, label, &data);
        if !self.null_data
            && !self.as_text
            && !self.printer.skip_binary
            && data.contains(&0)
            && self.printer.mode == Mode::Lines
            && hits.match_count > 0
        {
            self.printer.matched = true;
            cx.err(format_args!("{}: {label}: binary file matches", self.name));
            return;
        }
        self.printer.file(cx, label, &hits, Some(&data));
    }

    /// Searches a large document named as an operand a piece at a time
    /// (see [`Search::in_pieces`]), under the operand's name.
    fn document_in_pieces(&mut self, cx: &mut Cx<'_>, root: &Root) {
        let name = root.name(&root.abs);
        if !NameFilter::new(&self.req).wanted(root.abs.rsplit('/').next().unwrap_or(&root.abs)) {
            return;
        }
        if self.guest.is_none() && !self.host_finds_a_line(cx, root) {
            return;
        }
        self.printer.size = Some(root.len);
        self.rest_in_pieces(cx, &name, &root.abs, 0);
    }

    /// Searches a document a piece at a time, printing the selected lines
    /// after the first `printed` (which the host returned).
    fn rest_in_pieces(&mut self, cx: &mut Cx<'_>, name: &str, path: &str, printed: u64) {
        if cx.stdout_gone() {
            return;
        }
        let Some(matcher) = self.guest_matcher(cx) else {
            return;
        };
        let mut source = Pieces::Document {
            path,
            offset: 0,
            ended: false,
        };
        if let Err(e) = self.in_pieces(cx, name, &matcher, &mut source, printed) {
            self.error(cx, format_args!("{name}: {}", e.strerror()));
        }
    }

    /// Asks the host whether `root` has a selected line at all, stopping
    /// at the first: the search is the host's, so it is audited and
    /// scan-budgeted as every grep is, and a document without one (or a
    /// search the scan budget cuts) needs no reading in the guest. Errors
    /// are left to the read that follows.
    fn host_finds_a_line(&mut self, cx: &mut Cx<'_>, root: &Root) -> bool {
        let probe = GrepRequest {
            count_only: true,
            include_non_matching: false,
            max_count: Some(self.req.max_count.map_or(1, |m| m.min(1))),
            ..self.req.clone()
        };
        let Ok(result) = cx.fs.grep(std::slice::from_ref(&root.abs), &probe) else {
            return true;
        };
        self.scanned += result.files_scanned;
        if let Some(t) = result.truncated {
            *self.truncated.get_or_insert(0) += t.files_not_reached;
            return false;
        }
        !result.errors.is_empty() || result.files.iter().any(|f| f.match_count > 0)
    }

    /// Searches an input 64 KiB or more at a time, cut after a newline,
    /// so that `cat big.log | grep x` or `grep x big.log | wc -l` never
    /// holds the input (or every selected line of it) whole, and
    /// `grep -q`/`-m` stop reading soon after their answer. Selected lines
    /// are printed as each piece is searched; a piece with a NUL byte is
    /// binary, and from there on, as in GNU grep, a selected line is
    /// reported as "binary file matches" and ends the search. (Searches
    /// with context, `-b`, `-z` or `-I` read the input whole.) A read that
    /// fails ends the search; what was found before it is printed. The
    /// first `skip` selected lines (printed already) are not printed.
    fn in_pieces(
        &mut self,
        cx: &mut Cx<'_>,
        label: &str,
        matcher: &Matcher,
        source: &mut Pieces<'_>,
        skip: u64,
    ) -> Result<(), FsError> {
        let mut failed = None;
        let piece_len = 64 << 10;
        let limit = matcher.max_count();
        let mut total = crate::fs::FileHits {
            path: label.to_owned(),
            match_count: 0,
            lines: Vec::new(),
        };
        let (mut carry, mut lines_before) = (Vec::new(), 0u64);
        let (mut binary, mut binary_matched) = (false, false);
        let (mut ended, mut need) = (false, piece_len);
        while !ended && !binary_matched && limit.is_none_or(|m| total.match_count < m) {
            // A reader that has gone (`grep x big.log | head -1`): a real
            // grep would have met `SIGPIPE`; the rest is not read.
            if cx.stdout_gone() {
                break;
            }
            while carry.len() < need {
                match source.next(cx) {
                    Ok(Some(p)) => carry.extend_from_slice(&p),
                    Ok(None) => {
                        ended = true;
                        break;
                    }
                    Err(e) => {
                        failed = Some(e);
                        ended = true;
                        break;
                    }
                }
            }
            let chunk = match carry.iter().rposition(|&b| b == b'\n') {
                _ if ended => std::mem::take(&mut carry),
                Some(k) => {
                    let rest = carry.split_off(k + 1);
                    std::mem::replace(&mut carry, rest)
                }
                // One line longer than a piece: read on to its end.
                None => {
                    need = carry.len() + piece_len;
                    continue;
                }
            };
            need = piece_len;
            if chunk.is_empty() {
                break;
            }
            let left = limit.map(|m| m - total.match_count);
            let mut hits = self.search_data(&matcher.clone().at_most(left), label, &chunk);
            for line in &mut hits.lines {
                line.line_number += lines_before;
            }
            lines_before += chunk.iter().filter(|&&b| b == b'\n').count() as u64
                + u64::from(!chunk.ends_with(b"\n"));
            total.match_count += hits.match_count;
            binary |= !self.as_text && chunk.contains(&0);
            if self.printer.mode != Mode::Lines {
                continue;
            }
            let seen = total.match_count - hits.match_count;
            if seen < skip {
                let printed = usize::try_from(skip - seen).unwrap_or(usize::MAX);
                hits.lines.drain(..printed.min(hits.lines.len()));
                if hits.lines.is_empty() {
                    continue;
                }
            }
            if binary {
                binary_matched = hits.match_count > 0;
            } else {
                self.printer.file(cx, label, &hits, None);
            }
        }
        match self.printer.mode {
            Mode::Lines if binary_matched => {
                self.printer.matched = true;
                cx.err(format_args!("{}: {label}: binary file matches", self.name));
            }
            Mode::Lines => {}
            _ if failed.is_some() => {}
            _ => self.printer.file(cx, label, &total, None),
        }
        failed.map_or(Ok(()), Err)
    }
}

/// Documents named as operands from this size up are searched a piece at a
/// time in the guest, not on the host: the host's answer holds every
/// selected line at once, and in a 50 MB log that can be more than the
/// script's memory (`grep INFO big.log | wc -l`). Below it the host's
/// search, native and scan-budgeted, is the faster one.
const STREAM_OVER: u64 = 4 << 20;

/// At most this many selected lines of one document come from the host
/// in a search of directories that prints lines; the rest are found in
/// the guest (see [`Search::rest_in_pieces`]).
const PAGE_LINES: u64 = 1000;

/// Where [`Search::in_pieces`] reads from.
enum Pieces<'a> {
    /// Standard input, as the pipe or redirection hands it over.
    Stdin,
    /// A document, [`crate::fs::PIECE`] bytes a read.
    Document {
        path: &'a str,
        offset: u64,
        ended: bool,
    },
}

impl Pieces<'_> {
    /// The next piece; `None` at the end.
    fn next(&mut self, cx: &mut Cx<'_>) -> Result<Option<Vec<u8>>, FsError> {
        match self {
            Pieces::Stdin => Ok(cx.input.borrow_mut().next_piece()),
            Pieces::Document { ended: true, .. } => Ok(None),
            Pieces::Document {
                path,
                offset,
                ended,
            } => {
                let piece = cx.fs.read_range(path, *offset, crate::fs::PIECE)?;
                *offset += piece.len() as u64;
                *ended = (piece.len() as u64) < crate::fs::PIECE;
                Ok((!piece.is_empty()).then_some(piece))
            }
        }
    }
}

/// `--include` and `--exclude`: which documents a search reads, by name.
struct NameFilter {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
}

impl NameFilter {
    fn new(req: &GrepRequest) -> NameFilter {
        NameFilter {
            include: req.include.iter().map(|g| Pattern::new(g)).collect(),
            exclude: req.exclude.iter().map(|g| Pattern::new(g)).collect(),
        }
    }

    fn wanted(&self, name: &str) -> bool {
        !self.exclude.iter().any(|p| p.matches(name, false))
            && (self.include.is_empty() || self.include.iter().any(|p| p.matches(name, false)))
    }
}

fn context_arg(cx: &mut Cx<'_>, name: &str, v: Option<&str>) -> Result<Option<u32>, u8> {
    match v {
        None => Ok(None),
        Some(s) => match super::count(s) {
            Some(n) => Ok(Some(u32::try_from(n).unwrap_or(u32::MAX))),
            None => {
                cx.err(format_args!("{name}: {s}: invalid context length argument"));
                Err(2)
            }
        },
    }
}

fn run(cx: &mut Cx<'_>, args: &[String], flavor: Flavor) -> u8 {
    let name = flavor.name();
    let args = expand_numeric(args);
    let spec = if flavor == Flavor::Grep {
        GREP_SPEC
    } else {
        RG_SPEC
    };
    let p = match options(cx, name, &args, spec, 2) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut operands = p.operands.clone();
    let mut patterns: Vec<String> = p.values("e").iter().map(|s| (*s).to_owned()).collect();
    for f in p.values("f") {
        match cx.read_operand(f) {
            Ok(d) => {
                patterns.extend(
                    crate::search::lines(&d).map(|l| crate::lossless::decode(l).into_owned()),
                );
            }
            Err(e) => {
                cx.err(format_args!("{name}: {f}: {}", e.strerror()));
                return 2;
            }
        }
    }
    if !p.has("e") && !p.has("f") {
        if operands.is_empty() {
            cx.err(format_args!("Usage: {name} [OPTION]... PATTERNS [FILE]..."));
            cx.err(format_args!("Try '{name} --help' for more information."));
            return 2;
        }
        patterns.push(operands.remove(0));
    }
    // A pattern with newlines is several patterns.
    let patterns: Vec<String> = patterns
        .iter()
        .flat_map(|p| p.split('\n').map(str::to_owned).collect::<Vec<_>>())
        .collect();
    // No pattern at all (`-f /dev/null`) matches nothing: GNU grep then
    // stops at once with status 1, reading no file, unless `-v` (every
    // line) or `-L` (every file) makes something of it.
    let none = patterns.is_empty();
    if none && flavor == Flavor::Grep && !p.has("v") && !p.has("L") {
        return 1;
    }
    let mut fixed =
        p.has("F") && (flavor == Flavor::Rg || p.last_of(&["E", "F", "G", "P"]) == Some("F"));
    let syntax = match (flavor, p.last_of(&["E", "F", "G", "P"])) {
        (Flavor::Rg, _) | (_, Some("P")) => None,
        (_, Some("E")) => Some(Syntax::Extended),
        _ => Some(Syntax::Basic),
    };
    let mut translated = Vec::new();
    // A back-reference (`\(.\)\1`) needs the backtracking engine.
    let mut backrefs = false;
    for pat in &patterns {
        let mut rx = if fixed {
            pat.clone()
        } else if let Some(s) = syntax {
            match translate(pat, s) {
                Ok(t) => {
                    for w in t.warnings {
                        cx.err(format_args!("{name}: warning: {w}"));
                    }
                    backrefs |= t.backrefs;
                    t.regex
                }
                Err(e) => {
                    cx.err(format_args!("{name}: {e}"));
                    return 2;
                }
            }
        } else if flavor == Flavor::Grep {
            pcre_quotes(pat)
        } else {
            pat.clone()
        };
        if p.has("x") {
            let body = if fixed { regex::escape(&rx) } else { rx };
            rx = format!("^(?:{body})$");
        }
        translated.push(rx);
    }
    // A byte outside valid UTF-8 in a pattern (`grep $'\xe9'`) matches
    // that byte: the regex says so as `(?-u:\xE9)`, and fixed strings
    // become regexes to say it.
    let raw = |c: char| crate::lossless::raw_byte(c);
    if translated
        .iter()
        .any(|t| t.chars().any(|c| raw(c).is_some()))
    {
        for t in &mut translated {
            let text = if fixed && !p.has("x") {
                regex::escape(t)
            } else {
                std::mem::take(t)
            };
            *t = text
                .chars()
                .map(|c| raw(c).map_or_else(|| c.to_string(), |b| format!("(?-u:\\x{b:02X})")))
                .collect();
        }
        fixed = false;
    }
    if none {
        // A class nothing is in: a regex that never matches.
        translated.push(r"[^\s\S]".to_owned());
    }
    let (after, before, both) = match (
        context_arg(cx, name, p.value("A")),
        context_arg(cx, name, p.value("B")),
        context_arg(cx, name, p.value("C")),
    ) {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        _ => return 2,
    };
    let max_count = match p.value("m") {
        None => None,
        Some(s) => match s.parse::<i64>() {
            Ok(n) if n < 0 => None,
            Ok(n) => Some(n.unsigned_abs()),
            Err(_) => {
                cx.err(format_args!("{name}: invalid max count"));
                return 2;
            }
        },
    };
    // GNU grep's globs are fnmatch's: `{a,b}` is literal there, where the
    // host's globs (and `rg -g`'s) read it as alternatives.
    let mut include = p
        .values("include")
        .iter()
        .map(|s| literal_braces(s))
        .collect::<Vec<_>>();
    let mut exclude = p
        .values("exclude")
        .iter()
        .map(|s| literal_braces(s))
        .collect::<Vec<_>>();
    for g in p.values("glob") {
        match g.strip_prefix('!') {
            Some(ex) => exclude.push(ex.to_owned()),
            None => include.push(g.to_owned()),
        }
    }
    let ignore_case = p.last_of(&["i", "no-i"]) == Some("i");
    let smart_case = p.has("S") && !p.has("no-i");
    let mode = if p.has("q") {
        Mode::Quiet
    } else if p.has("l") || p.has("L") {
        if p.last_of(&["l", "L"]) == Some("l") {
            Mode::FilesWith
        } else {
            Mode::FilesWithout
        }
    } else if p.has("c") {
        Mode::Count
    } else {
        Mode::Lines
    };
    let req = GrepRequest {
        patterns: translated,
        fixed_strings: fixed && !p.has("x"),
        ignore_case,
        smart_case: smart_case && !ignore_case,
        whole_word: p.has("w"),
        invert: p.has("v"),
        before_context: before.or(both).unwrap_or(0),
        after_context: after.or(both).unwrap_or(0),
        // `-l`, `-L` and `-q` need one selected line a file to know their
        // answer: the host returns no more.
        max_count: match mode {
            Mode::FilesWith | Mode::FilesWithout | Mode::Quiet => {
                Some(max_count.map_or(1, |m| m.min(1)))
            }
            _ => max_count,
        },
        include,
        exclude,
        include_non_matching: matches!(mode, Mode::Count | Mode::FilesWithout),
        count_only: false,
    };
    // `-d ACTION`: `read` (a directory is an error), `skip`, `recurse` (-r).
    let directories = p.value("d").unwrap_or("read");
    if !matches!(directories, "read" | "skip" | "recurse") {
        cx.err(format_args!(
            "{name}: invalid argument '{directories}' for '--directories'"
        ));
        cx.err("Valid arguments are:\n  - 'read'\n  - 'recurse'\n  - 'skip'");
        cx.err(format_args!("Usage: {name} [OPTION]... PATTERNS [FILE]..."));
        return 2;
    }
    let recursive = flavor == Flavor::Rg || p.has("r") || directories == "recurse";
    let implicit = operands.is_empty() && recursive;
    // Check each operand first: missing ones and (without -r) directories
    // are errors, as in GNU grep.
    let mut search = Search {
        printer: Printer::new(
            mode,
            false,
            false,
            p.has("o"),
            req.before_context > 0 || req.after_context > 0,
        ),
        req,
        quiet_errors: p.has("s"),
        name,
        errors: false,
        scanned: 0,
        truncated: None,
        guest: None,
        exclude_dirs: p
            .values("exclude-dir")
            .into_iter()
            .map(Pattern::new)
            .collect(),
        null_data: false,
        as_text: false,
    };
    if (syntax.is_none() || backrefs) && flavor == Flavor::Grep {
        match Matcher::perl(&search.req) {
            Ok(m) => search.guest = m,
            Err(e) => {
                cx.err(format_args!("{name}: {e}"));
                return 2;
            }
        }
    }
    // With `-z` a newline is an ordinary character, which `.` matches in
    // GNU's basic and extended syntax (not in Perl's, without `(?s)`).
    if p.has("z") && syntax.is_some() && !search.req.fixed_strings {
        for pattern in &mut search.req.patterns {
            *pattern = format!("(?s:{pattern})");
        }
    }
    if p.has("o") && syntax.is_some() && !backrefs && flavor == Flavor::Grep {
        search.printer.posix = Matcher::posix(&search.req).ok();
    }
    // `--color=always` marks what the pattern matches, found again in
    // each line printed as `-o` finds it (`auto` is off: the output is
    // never a terminal).
    let colored = matches!(p.value("color"), Some("always" | "yes" | "force"));
    if colored && flavor == Flavor::Grep {
        let pattern = if syntax.is_some() && !backrefs {
            Matcher::posix(&search.req).ok()
        } else {
            match Matcher::perl(&search.req) {
                Ok(Some(m)) => Some(m),
                _ => Matcher::new(&search.req).ok(),
            }
        };
        search.printer.color = pattern.map(|m| (m, search.req.invert));
    }
    // `-b` needs each line's offset, which only the document's bytes give,
    // and `-z` other line ends: such a search reads the documents in the
    // guest.
    search.printer.byte_offset = p.has("b");
    search.printer.initial_tab = p.has("T");
    search.null_data = p.has("z");
    search.printer.null_data = p.has("z");
    // `--binary-files=TYPE`; `-a` is `text`, `-I` is `without-match`.
    let binary = match p.value("binary-files") {
        None if p.has("a") => "text",
        None if p.has("I") => "without-match",
        None => "binary",
        Some(t) => t,
    };
    match binary {
        "binary" => {}
        "text" => search.as_text = flavor == Flavor::Grep,
        "without-match" => search.printer.skip_binary = true,
        _ => {
            cx.err(format_args!("{name}: unknown binary-files type"));
            return 2;
        }
    }
    // `-c`, `-l`, `-L` and `-q` print no line: the host counts them. Not
    // with `-I`, whose printer knows a binary document by its having
    // selected lines and none returned.
    search.req.count_only = search.printer.mode != Mode::Lines && !search.printer.skip_binary;
    // `-T` pads to a width from the document's size.
    let in_guest =
        !search.exclude_dirs.is_empty() || p.has("b") || p.has("z") || p.has("T") || search.as_text;
    if search.guest.is_none() && in_guest {
        match Matcher::new(&search.req) {
            Ok(m) => search.guest = Some(m),
            Err(e) => {
                cx.err(format_args!("{name}: {e}"));
                return 2;
            }
        }
    }
    if search.null_data {
        search.guest = search.guest.take().map(Matcher::nul_ended);
    }
    // `--label`: the name standard input goes by.
    let stdin_label = p.value("label").unwrap_or("(standard input)").to_owned();
    enum Op {
        Stdin(String),
        Root(Root),
        /// An operand that cannot be searched: reported in its place
        /// among the others' output, as GNU grep does.
        Error(String),
        /// A directory not searched, shown as a document without matches.
        Empty(String, String),
    }
    let mut ops = Vec::new();
    if implicit {
        match cx.fs.metadata(".") {
            Ok(m) => ops.push(Op::Root(Root {
                display: None,
                abs: m.path,
                is_dir: true,
                len: m.len,
            })),
            Err(e) => search.error(cx, format_args!(".: {}", e.strerror())),
        }
    } else if operands.is_empty() {
        ops.push(Op::Stdin(stdin_label.clone()));
    }
    let mut any_dir = implicit;
    for op in &operands {
        if op == "-" {
            ops.push(Op::Stdin(stdin_label.clone()));
            continue;
        }
        match cx.fs.metadata(op) {
            Ok(m) if m.is_dir() && !recursive => {
                if directories != "skip" {
                    ops.push(Op::Error(format!("{op}: Is a directory")));
                    // GNU grep still counts it: `-c` says `DIR:0`, `-L`
                    // names it.
                    if search.req.include_non_matching {
                        ops.push(Op::Empty(op.clone(), m.path));
                    }
                }
            }
            Ok(m) => {
                any_dir |= m.is_dir();
                let is_dir = m.is_dir();
                ops.push(Op::Root(Root {
                    display: Some(op.clone()),
                    abs: m.path,
                    is_dir,
                    len: m.len,
                }));
            }
            Err(e) => ops.push(Op::Error(format!("{op}: {}", e.strerror()))),
        }
    }
    search.printer.with_name = if p.has("H") || p.has("h") {
        p.last_of(&["H", "h"]) == Some("H")
    } else {
        operands.len() > 1 || (recursive && any_dir)
    };
    search.printer.line_numbers = p.last_of(&["n", "N"]) == Some("n");
    search.printer.command = name;
    search.printer.null = p.has("Z");
    // Consecutive document operands go to the host together.
    let mut batch: Vec<Root> = Vec::new();
    for op in ops {
        match op {
            Op::Root(r) => batch.push(r),
            Op::Stdin(label) => {
                search.host(cx, &std::mem::take(&mut batch));
                search.stdin(cx, &label);
            }
            Op::Error(msg) => {
                search.host(cx, &std::mem::take(&mut batch));
                search.error(cx, msg);
            }
            Op::Empty(name, path) => {
                let hits = FileHits {
                    path,
                    match_count: 0,
                    lines: Vec::new(),
                };
                search.printer.file(cx, &name, &hits, None);
            }
        }
    }
    search.host(cx, &batch);
    let matched = search.printer.matched;
    if let Some(not_reached) = search.truncated {
        let scanned = search.scanned;
        let total = scanned + not_reached;
        cx.err(format_args!(
            "{name}: stopped after {scanned} of {total} files; matches are partial — narrow the paths"
        ));
    }
    if matched && (mode == Mode::Quiet || !search.errors) {
        0
    } else if search.errors || search.truncated.is_some() {
        2
    } else {
        1
    }
}

/// `grep`.
pub(crate) fn grep(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, args, Flavor::Grep)
}

/// `rg`: recursive by default, Rust regex syntax, no line numbers unless
/// `-n` (as ripgrep prints when its output is not a terminal).
pub(crate) fn rg(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, args, Flavor::Rg)
}

/// An fnmatch glob as the host's glob syntax reads it: braces outside a
/// bracket expression escaped, so that they match themselves.
fn literal_braces(glob: &str) -> String {
    let mut out = String::with_capacity(glob.len());
    let mut in_class = false;
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '{' | '}' if !in_class => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out
}

/// PCRE's quoting, which neither engine reads: the text between `\Q` and
/// `\E` (or the end) is literal, escaped here; an escaped backslash stays
/// one (`\\Q` is a backslash, then `Q`).
fn pcre_quotes(pattern: &str) -> String {
    if !pattern.contains("\\Q") {
        return pattern.to_owned();
    }
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.chars().next() {
            Some('Q') => {
                let quoted = &after[1..];
                let (literal, next) = match quoted.find("\\E") {
                    Some(end) => (&quoted[..end], &quoted[end + 2..]),
                    None => (quoted, ""),
                };
                out.push_str(&regex::escape(literal));
                rest = next;
            }
            Some(c) => {
                out.push('\\');
                out.push(c);
                rest = &after[c.len_utf8()..];
            }
            None => {
                out.push('\\');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(path: &str) -> FileHits {
        FileHits {
            path: path.to_owned(),
            match_count: 1,
            lines: Vec::new(),
        }
    }

    #[test]
    fn names_follow_the_operands() {
        let roots = vec![
            Root {
                display: Some("a.txt".into()),
                abs: "/files/a.txt".into(),
                is_dir: false,
                len: 0,
            },
            Root {
                display: Some("docs/".into()),
                abs: "/files/docs".into(),
                is_dir: true,
                len: 0,
            },
            Root {
                display: Some("./a.txt".into()),
                abs: "/files/a.txt".into(),
                is_dir: false,
                len: 0,
            },
            Root {
                display: Some("/".into()),
                abs: "/".into(),
                is_dir: true,
                len: 0,
            },
        ];
        let files = [
            hits("/files/a.txt"),
            hits("/files/docs/x.md"),
            hits("/files/docs/sub/y.md"),
            hits("/files/a.txt"),
            hits("/files/z.md"),
        ];
        assert_eq!(
            attribute(&roots, &files),
            [
                "a.txt",
                "docs/x.md",
                "docs/sub/y.md",
                "./a.txt",
                "/files/z.md"
            ]
        );
        let implicit = [Root {
            display: None,
            abs: "/files".into(),
            is_dir: true,
            len: 0,
        }];
        assert_eq!(attribute(&implicit, &[hits("/files/d/a.md")]), ["d/a.md"]);
        let dot = [Root {
            display: Some(".".into()),
            abs: "/files".into(),
            is_dir: true,
            len: 0,
        }];
        assert_eq!(attribute(&dot, &[hits("/files/a.md")]), ["./a.md"]);
    }

    #[test]
    fn numeric_context() {
        let a: Vec<String> = ["-2", "x", "--", "-3"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(expand_numeric(&a), ["-C", "2", "x", "--", "-3"]);
    }

    #[test]
    fn gnu_globs_keep_their_braces_literal_for_the_host() {
        assert_eq!(literal_braces("*.{py,sh}"), "*.\\{py,sh\\}");
        assert_eq!(literal_braces("[{}]x\\{"), "[{}]x\\{");
        assert_eq!(literal_braces("*.txt"), "*.txt");
    }

    #[test]
    fn pcre_quoting_is_literal_text() {
        assert_eq!(pcre_quotes(r"\Qa.b(\E+"), r"a\.b\(+");
        assert_eq!(pcre_quotes(r"x\Q*"), r"x\*");
        assert_eq!(pcre_quotes(r"\\Q\d"), r"\\Q\d");
        assert_eq!(pcre_quotes(r"\d+"), r"\d+");
    }
}
