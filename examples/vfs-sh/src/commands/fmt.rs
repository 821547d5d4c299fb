//! `fmt`: GNU fmt's paragraph filling. No crate fills text as GNU fmt does
//! (it chooses breaks by a cost over the whole paragraph, not greedily),
//! so its model is written out here: words carry their sentence and
//! punctuation marks, each paragraph's breaks minimise the summed cost of
//! lines away from the goal width, ragged neighbours, widows and orphans,
//! and paragraphs longer than GNU's buffers are flushed in pieces where it
//! flushes them.

use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::FsError;

/// GNU's buffer limits: a paragraph is filled in pieces past these.
const MAX_WORDS: usize = 1000;
const MAX_CHARS: usize = 5000;
const TAB: usize = 8;

type Cost = i64;

const fn equiv(n: i64) -> Cost {
    n * n
}
const fn short_cost(n: i64) -> Cost {
    equiv(n * 10)
}
const fn ragged_cost(n: i64) -> Cost {
    short_cost(n) / 2
}
const LINE_COST: Cost = equiv(70);
const SENTENCE_BONUS: Cost = equiv(50);
const NOBREAK_COST: Cost = equiv(600);
const PAREN_BONUS: Cost = equiv(40);
const PUNCT_BONUS: Cost = equiv(40);
const LINE_CREDIT: Cost = equiv(3);

fn widow_cost(n: usize) -> Cost {
    equiv(200) / (n as i64 + 2)
}
fn orphan_cost(n: usize) -> Cost {
    equiv(150) / (n as i64 + 2)
}

#[derive(Debug, Clone, Default)]
struct Word {
    text: String,
    /// The space after it, in columns.
    space: usize,
    /// Starts with an opening bracket or quote.
    paren: bool,
    /// Ends in `.?!` (before closing brackets and quotes).
    period: bool,
    /// Ends in punctuation.
    punct: bool,
    /// Ends a sentence.
    last: bool,
    // Filled by the optimisation.
    line_length: usize,
    best_cost: Cost,
    next_break: usize,
}

impl Word {
    fn len(&self) -> usize {
        self.text.len()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Crown,
    Tagged,
    Split,
}

struct Opts {
    mode: Mode,
    uniform: bool,
    max_width: usize,
    goal_width: usize,
    /// The prefix without its surrounding spaces, its length with the
    /// trailing ones, and the spaces before it.
    prefix: String,
    prefix_full: usize,
    prefix_lead: usize,
}

/// One input line, split where GNU's reader splits it.
struct Line<'a> {
    /// The space before the prefix.
    prefix_indent: usize,
    /// Whether the prefix is there (always, without one).
    matched: bool,
    /// The column of the first character after the prefix and its space.
    indent: usize,
    /// What follows; empty for a blank line.
    rest: &'a str,
    raw: &'a str,
}

/// The formatter's state for one input.
struct Fmt<'o> {
    o: &'o Opts,
    out: String,
    /// Tabs were seen in the input: they may be used for space on output.
    tabs: bool,
    words: Vec<Word>,
    chars: usize,
    prefix_indent: usize,
    first_indent: usize,
    other_indent: usize,
    last_line_length: usize,
}

fn columns(s: &str, start: usize, tabs: &mut bool) -> (usize, usize) {
    // (bytes of leading blanks, column after them)
    let mut col = start;
    let mut n = 0;
    for b in s.bytes() {
        match b {
            b' ' => col += 1,
            b'\t' => {
                *tabs = true;
                col = (col / TAB + 1) * TAB;
            }
            _ => break,
        }
        n += 1;
    }
    (n, col)
}

impl Fmt<'_> {
    fn line<'a>(&mut self, raw: &'a str) -> Line<'a> {
        let (n, col) = columns(raw, 0, &mut self.tabs);
        let after = &raw[n..];
        let o = self.o;
        if o.prefix.is_empty() {
            return Line {
                prefix_indent: o.prefix_lead.min(col),
                matched: true,
                indent: col,
                rest: after.strip_suffix('\n').unwrap_or(after),
                raw,
            };
        }
        match after.strip_prefix(o.prefix.as_str()) {
            Some(tail) => {
                let (m, c2) = columns(tail, col + o.prefix.len(), &mut self.tabs);
                // GNU counts the prefix's own trailing spaces as part of it.
                let matched = c2 >= col + o.prefix_full && col >= o.prefix_lead;
                let rest = &tail[m..];
                Line {
                    prefix_indent: col,
                    matched,
                    indent: c2,
                    rest: rest.strip_suffix('\n').unwrap_or(rest),
                    raw,
                }
            }
            None => Line {
                prefix_indent: col,
                matched: false,
                indent: col,
                rest: after,
                raw,
            },
        }
    }

    fn same_para(&self, l: &Line<'_>) -> bool {
        l.matched && l.prefix_indent == self.prefix_indent && !l.rest.is_empty()
    }

    /// GNU's rule for the indent of a paragraph's later lines; `same`: the
    /// line at column `col` belongs to it. A flush of a long paragraph asks
    /// with the column the reader is at, as GNU's does.
    fn set_other_indent(&mut self, same: bool, col: usize) {
        self.other_indent = match self.o.mode {
            Mode::Split | Mode::Plain => self.first_indent,
            Mode::Crown => {
                if same {
                    col
                } else {
                    self.first_indent
                }
            }
            Mode::Tagged => {
                if same && col != self.first_indent {
                    col
                } else if self.other_indent == self.first_indent {
                    if self.first_indent == 0 { 3 } else { 0 }
                } else {
                    self.other_indent
                }
            }
        };
    }

    /// Splits a line into words, flushing part of the paragraph when the
    /// buffers fill as GNU's do. `at_eof`: the input ends with this line,
    /// without a newline.
    fn add_line(&mut self, l: &Line<'_>, at_eof: bool) {
        let mut col = l.indent;
        let mut rest = l.rest;
        while !rest.is_empty() {
            // A word runs to the next C-isspace character; its first one is
            // anything but a blank (a `\r` starts a word, as in GNU's).
            let first_len = rest.chars().next().map_or(1, char::len_utf8);
            let end = rest[first_len..]
                .find([' ', '\t', '\n', '\x0b', '\x0c', '\r'])
                .map_or(rest.len(), |k| k + first_len);
            let text = &rest[..end];
            if self.chars + text.len() > MAX_CHARS {
                self.set_other_indent(true, col);
                self.flush_paragraph(self.words.len());
            }
            col += text.len();
            let after = &rest[end..];
            let (n, c2) = columns(after, col, &mut self.tabs);
            let space = c2 - col;
            col = c2;
            rest = &after[n..];
            let line_end = rest.is_empty();
            let first = text.as_bytes()[0];
            let lastb = text.as_bytes()[text.len() - 1];
            let core = text.trim_end_matches([')', ']', '\'', '"']);
            let core = if core.is_empty() { &text[..1] } else { core };
            let period = core.ends_with(['.', '?', '!']);
            let last = (line_end && at_eof) || (period && (line_end || space > 1));
            let space = if line_end || self.o.uniform {
                if last { 2 } else { 1 }
            } else {
                space
            };
            self.chars += text.len();
            self.words.push(Word {
                text: text.to_owned(),
                space,
                paren: b"(['`\"".contains(&first),
                period,
                punct: lastb.is_ascii_punctuation(),
                last,
                ..Word::default()
            });
            if self.words.len() == MAX_WORDS - 1 {
                self.set_other_indent(true, col);
                self.flush_paragraph(self.words.len() - 1);
            }
            if line_end {
                break;
            }
        }
    }

    fn base_cost(&self, k: usize) -> Cost {
        let w = &self.words;
        let mut cost = LINE_COST;
        if k > 0 {
            let prev = &w[k - 1];
            if prev.period {
                if prev.last {
                    cost -= SENTENCE_BONUS;
                } else {
                    cost += NOBREAK_COST;
                }
            } else if prev.punct {
                cost -= PUNCT_BONUS;
            } else if k > 1 && w[k - 2].last {
                cost += widow_cost(prev.len());
            }
        }
        if let Some(this) = w.get(k) {
            if this.paren {
                cost -= PAREN_BONUS;
            } else if this.last {
                cost += orphan_cost(this.len());
            }
        }
        cost
    }

    fn line_cost(&self, next: usize, len: usize, limit: usize) -> Cost {
        if next == limit {
            return 0;
        }
        let mut cost = short_cost(self.o.goal_width as i64 - len as i64);
        if self.words[next].next_break != limit {
            cost += ragged_cost(len as i64 - self.words[next].line_length as i64);
        }
        cost
    }

    /// The best breaks of words `..limit`, for every suffix.
    fn fill(&mut self, limit: usize) {
        let max = self.o.max_width;
        let mut best_at = vec![0 as Cost; limit + 1];
        for start in (0..limit).rev() {
            let mut best = Cost::MAX;
            let mut len = if start == 0 {
                self.first_indent
            } else {
                self.other_indent
            } + self.words[start].len();
            let mut w = start;
            loop {
                w += 1;
                let mut cost = self.line_cost(w, len, limit).saturating_add(best_at[w]);
                if start == 0 && self.last_line_length > 0 {
                    cost += ragged_cost(len as i64 - self.last_line_length as i64);
                }
                if cost < best {
                    best = cost;
                    self.words[start].next_break = w;
                    self.words[start].line_length = len;
                }
                if w == limit {
                    break;
                }
                len += self.words[w - 1].space + self.words[w].len();
                if len >= max {
                    break;
                }
            }
            best_at[start] = best.saturating_add(self.base_cost(start));
            self.words[start].best_cost = best_at[start];
        }
        if let Some(w) = self.words.get_mut(limit) {
            w.best_cost = 0;
        }
    }

    fn put_space(&mut self, col: &mut usize, space: isize) {
        let target = (*col as isize + space).max(*col as isize) as usize;
        if self.tabs {
            let tab_target = target / TAB * TAB;
            if *col + 1 < tab_target {
                while *col < tab_target {
                    self.out.push('\t');
                    *col = (*col / TAB + 1) * TAB;
                }
            }
        }
        while *col < target {
            self.out.push(' ');
            *col += 1;
        }
    }

    fn put_line(&mut self, start: usize, indent: usize) {
        let mut col = 0;
        self.put_space(&mut col, self.prefix_indent as isize);
        let prefix = &self.o.prefix;
        self.out.push_str(prefix);
        col += prefix.len();
        let gap = indent as isize - col as isize;
        self.put_space(&mut col, gap);
        let end = self.words[start].next_break;
        for k in start..end {
            let text = std::mem::take(&mut self.words[k].text);
            self.out.push_str(&text);
            col += text.len();
            self.words[k].text = text;
            if k + 1 < end {
                let sp = self.words[k].space;
                self.put_space(&mut col, sp as isize);
            }
        }
        self.last_line_length = col;
        self.out.push('\n');
    }

    /// Prints the lines from the first word up to word `finish`.
    fn put_paragraph(&mut self, finish: usize) {
        self.put_line(0, self.first_indent);
        let mut w = self.words[0].next_break;
        while w != finish {
            self.put_line(w, self.other_indent);
            w = self.words[w].next_break;
        }
    }

    /// The buffers are full: prints the paragraph up to a good break near
    /// its end and keeps the rest.
    /// `limit`: the words before it are complete; the rest are carried.
    fn flush_paragraph(&mut self, limit: usize) {
        if limit == 0 {
            return;
        }
        self.fill(limit);
        let mut split = limit;
        let mut best = Cost::MAX;
        let mut w = self.words[0].next_break;
        while w != limit {
            let next = self.words[w].next_break;
            let next_cost = if next == limit {
                0
            } else {
                self.words[next].best_cost
            };
            let d = self.words[w].best_cost - next_cost;
            if d < best {
                split = w;
                best = d;
            }
            if best <= Cost::MAX - LINE_CREDIT {
                best += LINE_CREDIT;
            }
            w = next;
        }
        self.put_paragraph(split);
        self.words.drain(..split);
        self.chars = self.words.iter().map(Word::len).sum();
    }

    fn end_paragraph(&mut self) {
        if let Some(w) = self.words.last_mut() {
            w.period = true;
            w.last = true;
        }
        let n = self.words.len();
        if n > 0 {
            self.fill(n);
            self.put_paragraph(n);
        }
        self.words.clear();
        self.chars = 0;
    }

    fn run(&mut self, text: &str) {
        let raws: Vec<&str> = text.split_inclusive('\n').collect();
        let eof_unterminated = !text.is_empty() && !text.ends_with('\n');
        let mut i = 0;
        while i < raws.len() {
            let l = self.line(raws[i]);
            let at_eof = eof_unterminated && i + 1 == raws.len();
            // A blank line, or one without the prefix, is copied.
            if !l.matched || l.rest.is_empty() || l.prefix_indent < self.o.prefix_lead {
                let body = l.raw.strip_suffix('\n').unwrap_or(l.raw);
                if !l.matched && !body.trim_start_matches([' ', '\t']).is_empty() {
                    // A line without the prefix, as it is (at the end of
                    // the input, without a newline of its own).
                    self.out.push_str(body);
                    if !at_eof {
                        self.out.push('\n');
                    }
                } else if !l.matched {
                    self.out.push('\n');
                } else if !at_eof {
                    // A blank line keeps only the prefix.
                    if !self.o.prefix.is_empty() {
                        self.out.push_str(body.trim_end());
                    }
                    self.out.push('\n');
                }
                i += 1;
                continue;
            }
            self.prefix_indent = l.prefix_indent;
            self.first_indent = l.indent;
            self.last_line_length = 0;
            self.add_line(&l, at_eof);
            i += 1;
            let mut next = raws.get(i).map(|r| self.line(r));
            let same = next.as_ref().is_some_and(|n| self.same_para(n));
            self.set_other_indent(same, next.as_ref().map_or(0, |n| n.indent));
            // The later lines share one indent; crown and tagged mode set it
            // from the second line (tagged only if it differs).
            let go_on = match self.o.mode {
                Mode::Split => false,
                Mode::Plain | Mode::Crown => same,
                Mode::Tagged => {
                    same && next.as_ref().is_some_and(|n| n.indent != self.first_indent)
                }
            };
            while go_on && let Some(n) = next.take() {
                if !self.same_para(&n) || n.indent != self.other_indent {
                    break;
                }
                let at_eof = eof_unterminated && i + 1 == raws.len();
                self.add_line(&n, at_eof);
                i += 1;
                next = raws.get(i).map(|r| self.line(r));
            }
            self.end_paragraph();
        }
    }
}

/// `fmt [-WIDTH] [-cstu] [-w N] [-g N] [-p PREFIX] [FILE]...`
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('c', "crown-margin", "c"),
        flag('s', "split-only", "s"),
        flag('t', "tagged-paragraph", "t"),
        flag('u', "uniform-spacing", "u"),
        value('w', "width", "w"),
        value('g', "goal", "g"),
        value('p', "prefix", "p"),
    ];
    // `fmt -60` is `fmt -w 60`, first only.
    let mut args = args.to_vec();
    let mut width = None;
    if let Some(first) = args.first()
        && let Some(d) = first.strip_prefix('-')
        && d.bytes().next().is_some_and(|b| b.is_ascii_digit())
    {
        width = Some(d.to_owned());
        args.remove(0);
    }
    let p = match options(cx, "fmt", &args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let width = p.value("w").map(str::to_owned).or(width);
    let parse = |cx: &mut Cx<'_>, v: &str, max: usize| match v.parse::<usize>() {
        Ok(n) if n <= max => Some(n),
        _ => {
            cx.err(format_args!(
                "fmt: invalid width: {}",
                super::quote::quote(v, true)
            ));
            None
        }
    };
    let mut max_width = 75;
    if let Some(w) = &width {
        match parse(cx, w, MAX_CHARS / 2) {
            Some(n) => max_width = n,
            None => return 1,
        }
    }
    let goal_width = match p.value("g") {
        Some(g) => match parse(cx, g, max_width) {
            Some(n) => {
                if width.is_none() {
                    max_width = n + 10;
                }
                n
            }
            None => return 1,
        },
        None => max_width * (2 * (100 - 7) + 1) / 200,
    };
    let raw_prefix = p.value("p").unwrap_or("");
    let lead = raw_prefix.len() - raw_prefix.trim_start_matches(' ').len();
    let full = raw_prefix.trim_start_matches(' ');
    let o = Opts {
        mode: if p.has("s") {
            Mode::Split
        } else if p.has("c") {
            Mode::Crown
        } else if p.has("t") {
            Mode::Tagged
        } else {
            Mode::Plain
        },
        uniform: p.has("u"),
        max_width,
        goal_width,
        prefix: full.trim_end_matches(' ').to_owned(),
        prefix_full: full.len(),
        prefix_lead: lead,
    };
    let why = |op: &str, e: &FsError| match e {
        FsError::IsADirectory(_) => "fmt: read error".to_owned(),
        e => format!(
            "fmt: cannot open {} for reading: {}",
            super::quote::quote(op, true),
            e.strerror()
        ),
    };
    let failed = super::text::each_input(cx, &p.operands, why, |cx, _, d| {
        let mut f = Fmt {
            o: &o,
            out: String::new(),
            tabs: false,
            words: Vec::new(),
            chars: 0,
            prefix_indent: 0,
            first_indent: 0,
            other_indent: 0,
            last_line_length: 0,
        };
        f.run(&crate::lossless::decode(d));
        cx.outs(&f.out);
    });
    u8::from(failed)
}
