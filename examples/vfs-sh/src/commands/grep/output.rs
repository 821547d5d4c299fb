//! Printing search results the way GNU grep does: `name:num:text` for
//! selected lines, `name-num-text` for context, `--` between groups that
//! are not adjacent, and the `-c`, `-l`, `-L`, `-o`, `-q` forms.

use crate::exec::Cx;
use crate::fs::FileHits;
use crate::search::Matcher;

/// What grep prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Selected (and context) lines.
    Lines,
    /// `-c`: a count per file.
    Count,
    /// `-l`: files with a selected line.
    FilesWith,
    /// `-L`: files without one.
    FilesWithout,
    /// `-q`: nothing.
    Quiet,
}

/// Formatting settings and state carried across files.
#[derive(Debug)]
pub(crate) struct Printer {
    pub(crate) mode: Mode,
    pub(crate) with_name: bool,
    pub(crate) line_numbers: bool,
    pub(crate) only_matching: bool,
    /// Context was asked for: groups are separated by `--`.
    pub(crate) context: bool,
    /// Whether any file had a selected line.
    pub(crate) matched: bool,
    /// The file and line number printed last.
    last: Option<(String, u64)>,
    /// `grep` or `rg`, for messages.
    pub(crate) command: &'static str,
    /// `-Z`: a NUL after each file name instead of `:` or a newline.
    pub(crate) null: bool,
    /// `-b`: each line's (with `-o`, each match's) byte offset.
    pub(crate) byte_offset: bool,
    /// `-z`: lines were searched with newline and NUL swapped; they are
    /// printed swapped back and ended with NUL.
    pub(crate) null_data: bool,
    /// `-I`: a binary file is taken as having no selected line.
    pub(crate) skip_binary: bool,
    /// `-o` with a POSIX pattern: the matches of each line found again
    /// with POSIX's longest-match rule (see [`Matcher::posix`]).
    pub(crate) posix: Option<Matcher>,
    /// `--color=always`: the pattern, whose matches are marked, and
    /// whether lines are selected by not matching it (`-v`, whose context
    /// lines are the ones marked).
    pub(crate) color: Option<(Matcher, bool)>,
    /// `-T`: line numbers and byte offsets are right-aligned and a tab
    /// goes before each line's text.
    pub(crate) initial_tab: bool,
    /// The size of the document being printed, when it has one (not a
    /// pipe): under `-T`, GNU grep pads numbers to the width of the
    /// largest one the document could hold.
    pub(crate) size: Option<u64>,
    /// That width, for the document being printed.
    width: usize,
}

/// GNU grep's default `GREP_COLORS`: matches bold red, file names
/// magenta, line numbers and byte offsets green, separators cyan.
const MATCH: &str = "01;31";
const FILE_NAME: &str = "35";
const LINE_NUMBER: &str = "32";
const SEPARATOR: &str = "36";

/// `text` between the SGR sequence `sgr` and the reset, each followed by
/// erase-to-end-of-line, as GNU grep writes a coloured part.
fn paint(out: &mut Vec<u8>, sgr: &str, text: &[u8]) {
    out.extend_from_slice(format!("\x1b[{sgr}m\x1b[K").as_bytes());
    out.extend_from_slice(text);
    out.extend_from_slice(b"\x1b[m\x1b[K");
}

impl Printer {
    pub(crate) fn new(
        mode: Mode,
        with_name: bool,
        line_numbers: bool,
        only_matching: bool,
        context: bool,
    ) -> Printer {
        Printer {
            mode,
            with_name,
            line_numbers,
            only_matching,
            context: context && !only_matching,
            matched: false,
            last: None,
            command: "grep",
            null: false,
            byte_offset: false,
            null_data: false,
            skip_binary: false,
            posix: None,
            color: None,
            initial_tab: false,
            size: None,
            width: 0,
        }
    }

    /// Writes `text` in the colour `sgr` under `--color`, else as it is.
    fn part(&self, out: &mut Vec<u8>, sgr: &str, text: &[u8]) {
        if self.color.is_some() {
            paint(out, sgr, text);
        } else {
            out.extend_from_slice(text);
        }
    }

    /// A file name and what follows it: `sep`, or NUL under `-Z` (never
    /// coloured).
    fn name(&self, out: &mut Vec<u8>, name: &str, sep: u8) {
        self.part(out, FILE_NAME, name.as_bytes());
        if self.null {
            out.push(0);
        } else if sep == b'\n' {
            out.push(sep);
        } else {
            self.part(out, SEPARATOR, &[sep]);
        }
    }

    /// What goes before a line's (or a match's) text: the file name, line
    /// number and byte offset asked for, and under `-T` a tab when the
    /// text is not empty.
    fn prefix(
        &self,
        out: &mut Vec<u8>,
        name: &str,
        number: u64,
        offset: Option<u64>,
        sep: u8,
        empty: bool,
    ) {
        let width = self.width;
        if self.with_name {
            self.name(out, name, sep);
        }
        if self.line_numbers {
            self.part(out, LINE_NUMBER, format!("{number:>width$}").as_bytes());
            self.part(out, SEPARATOR, &[sep]);
        }
        let offset = offset.filter(|_| self.byte_offset);
        if let Some(at) = offset {
            self.part(out, LINE_NUMBER, format!("{at:>width$}").as_bytes());
            self.part(out, SEPARATOR, &[sep]);
        }
        if self.initial_tab && !empty && (self.with_name || self.line_numbers || offset.is_some()) {
            out.push(b'\t');
        }
    }

    /// A line's text, its non-empty matches marked under `--color` when
    /// it is a line that matches (selected, or context under `-v`).
    fn text(&self, out: &mut Vec<u8>, text: &[u8], is_match: bool) {
        let Some((pattern, _)) = self
            .color
            .as_ref()
            .filter(|(_, invert)| is_match != *invert)
        else {
            out.extend_from_slice(text);
            return;
        };
        let mut at = 0;
        for r in pattern.pattern_ranges(text) {
            if r.is_empty() || r.start < at || r.end > text.len() {
                continue;
            }
            out.extend_from_slice(&text[at..r.start]);
            paint(out, MATCH, &text[r.clone()]);
            at = r.end;
        }
        out.extend_from_slice(&text[at..]);
    }

    /// Prints one file's results under the name the user should see;
    /// `data`, the file's bytes, gives `-b` its offsets.
    pub(crate) fn file(
        &mut self,
        cx: &mut Cx<'_>,
        name: &str,
        hits: &FileHits,
        data: Option<&[u8]>,
    ) {
        // A binary file's selected lines are counted and none returned:
        // `-I` takes it as having none.
        let none;
        let hits = if self.skip_binary && hits.match_count > 0 && hits.lines.is_empty() {
            none = FileHits {
                path: hits.path.clone(),
                match_count: 0,
                lines: Vec::new(),
            };
            &none
        } else {
            hits
        };
        let eol = if self.null_data { 0 } else { b'\n' };
        let starts: Vec<u64> = match data.filter(|_| self.byte_offset) {
            Some(d) => std::iter::once(0)
                .chain(
                    d.iter()
                        .enumerate()
                        .filter(|(_, b)| **b == eol)
                        .map(|(k, _)| k as u64 + 1),
                )
                .collect(),
            None => Vec::new(),
        };
        let line_start = |n: u64| {
            usize::try_from(n.saturating_sub(1))
                .ok()
                .and_then(|k| starts.get(k).copied())
        };
        // GNU grep's `-T` width: the digits of the document's size (one
        // more under `-n`), or of the largest offset (`INTMAX_MAX`) for a
        // pipe.
        self.width = if self.initial_tab {
            let most = match self.size {
                Some(n) if self.line_numbers => n.saturating_add(1),
                Some(n) => n,
                None => i64::MAX.unsigned_abs(),
            };
            most.to_string().len()
        } else {
            0
        };
        let selected = hits.match_count > 0;
        self.matched |= selected;
        let mut out = Vec::new();
        match self.mode {
            Mode::Quiet => {}
            Mode::FilesWith | Mode::FilesWithout => {
                if selected == (self.mode == Mode::FilesWith) {
                    self.name(&mut out, name, b'\n');
                }
            }
            Mode::Count => {
                if self.with_name {
                    self.name(&mut out, name, b':');
                }
                out.extend_from_slice(format!("{}\n", hits.match_count).as_bytes());
            }
            // A binary file's selected lines are counted, not returned:
            // GNU grep says it matches, on standard error.
            Mode::Lines if selected && hits.lines.is_empty() => {
                cx.err(format_args!(
                    "{}: {name}: binary file matches",
                    self.command
                ));
            }
            Mode::Lines => {
                for line in &hits.lines {
                    if self.only_matching && !line.is_match {
                        continue;
                    }
                    if self.context {
                        if let Some((last_name, last_no)) = &self.last
                            && (last_name != name || line.line_number != last_no + 1)
                        {
                            self.part(&mut out, SEPARATOR, b"--");
                            out.push(b'\n');
                        }
                        self.last = Some((name.to_owned(), line.line_number));
                    }
                    let sep = if line.is_match { b':' } else { b'-' };
                    if self.only_matching {
                        let ranges = match &self.posix {
                            Some(m) => m.ranges(&line.text),
                            None => line.matches.clone(),
                        };
                        for r in &ranges {
                            if let Some(text) = line.text.get(r.clone()).filter(|t| !t.is_empty()) {
                                let at = line_start(line.line_number).map(|s| s + r.start as u64);
                                self.prefix(&mut out, name, line.line_number, at, sep, false);
                                self.part(&mut out, MATCH, text);
                                out.push(eol);
                            }
                        }
                    } else {
                        let at = line_start(line.line_number);
                        let empty = line.text.is_empty();
                        self.prefix(&mut out, name, line.line_number, at, sep, empty);
                        self.text(&mut out, &line.text, line.is_match);
                        out.push(eol);
                    }
                }
            }
        }
        cx.out(&out);
    }
}
