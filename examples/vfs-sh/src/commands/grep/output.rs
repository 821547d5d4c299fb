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
        }
    }

    fn prefix(&self, out: &mut Vec<u8>, name: &str, number: u64, offset: Option<u64>, sep: u8) {
        if self.with_name {
            out.extend_from_slice(name.as_bytes());
            out.push(if self.null { 0 } else { sep });
        }
        if self.line_numbers {
            out.extend_from_slice(number.to_string().as_bytes());
            out.push(sep);
        }
        if let Some(at) = offset.filter(|_| self.byte_offset) {
            out.extend_from_slice(at.to_string().as_bytes());
            out.push(sep);
        }
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
        let selected = hits.match_count > 0;
        self.matched |= selected;
        let mut out = Vec::new();
        match self.mode {
            Mode::Quiet => {}
            Mode::FilesWith | Mode::FilesWithout => {
                if selected == (self.mode == Mode::FilesWith) {
                    out.extend_from_slice(name.as_bytes());
                    out.push(if self.null { 0 } else { b'\n' });
                }
            }
            Mode::Count => {
                if self.with_name {
                    out.extend_from_slice(name.as_bytes());
                    out.push(if self.null { 0 } else { b':' });
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
                            out.extend_from_slice(b"--\n");
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
                                self.prefix(&mut out, name, line.line_number, at, sep);
                                out.extend_from_slice(text);
                                out.push(eol);
                            }
                        }
                    } else {
                        let at = line_start(line.line_number);
                        self.prefix(&mut out, name, line.line_number, at, sep);
                        out.extend_from_slice(&line.text);
                        out.push(eol);
                    }
                }
            }
        }
        cx.out(&out);
    }
}
