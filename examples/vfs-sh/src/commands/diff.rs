//! `diff`: GNU's normal, context (`-c`, `-C N`), unified and side-by-side (`-y`, `-W N`,
//! `--suppress-common-lines`, `-t`) formats, the line and group formats
//! (`--old-line-format`, `--changed-group-format`...), `-q`, `-s`, `-r`,
//! `-N`, `-i`, `-w`, `-b`, `-U N`, `-d`. The edit script is GNU diff's own
//! ([`super::diffseq`]); the output is formatted as GNU diff prints it.
//! Exit status: 0 same, 1 different, 2 trouble.

use similar::DiffOp;

use crate::exec::Cx;
use crate::fs::Kind;

struct Opts {
    /// The lines of context of `-u` and `-c`.
    unified: Option<usize>,
    /// A length was given (`-U N`, `-C N`, `--unified=N`, `--context=N`),
    /// which the obsolete `-NUM` may lengthen but not shorten.
    explicit_context: bool,
    /// `-c`, `-C N`: the context format, not the unified one.
    context_format: bool,
    /// `-y`: the output width (`-W`, 130 by default).
    side_by_side: Option<usize>,
    suppress_common: bool,
    expand_tabs: bool,
    brief: bool,
    same: bool,
    recursive: bool,
    icase: bool,
    all_space: bool,
    space_change: bool,
    /// `-Z`: white space at the end of a line is ignored.
    trailing_space: bool,
    /// `-E`: a tab and the spaces it expands to are the same.
    tab_expansion: bool,
    blank_lines: bool,
    /// `--strip-trailing-cr`: a `\r` that ends a line is not part of it.
    strip_cr: bool,
    /// The options as given, for `diff -r`'s per-file header lines.
    switches: String,
    /// `-x PAT`: names left out of a directory comparison.
    exclude: Vec<crate::glob::Pattern>,
    /// `-N`: a file missing on one side is compared as empty.
    new_file: bool,
    /// `-a`: every file is text, even one with NUL bytes.
    text: bool,
    /// `-d`: the shortest edit script, however long it takes to find.
    minimal: bool,
    /// `--old-line-format` and the rest: `[old, new, unchanged]`.
    line_formats: [Option<String>; 3],
    /// `--old-group-format` and the rest: `[old, new, changed, unchanged]`.
    group_formats: [Option<String>; 4],
    /// `-F RE` (and `-p`, which is `-F '^[[:alpha:]$_]'`): each in its
    /// own group, any of them marks a function line.
    function: Vec<String>,
    /// `-p` given: with no format chosen, the context one.
    show_c_function: bool,
    /// `function`, compiled.
    function_re: Option<regex::Regex>,
    /// `--label`: what the context and unified headers show in place of
    /// the first and the second file's name and time.
    labels: Vec<String>,
}

/// What `-p` looks for: a line that starts as a C definition does.
const C_FUNCTION: &str = "^[[:alpha:]$_]";

/// The text a hunk header shows after it with `-p` or `-F`: the last line
/// before the hunk (its context included) that matches, as GNU's
/// `print_context_function` cuts it: leading blanks dropped, at most 40
/// bytes, trailing blanks dropped.
fn function_line(re: &regex::Regex, lines: &[String], before: usize) -> Option<String> {
    let line = lines[..before].iter().rev().find(|l| re.is_match(l))?;
    let line = line.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let mut end = line.len().min(40);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    Some(format!(
        " {}",
        line[..end].trim_end_matches(|c: char| c.is_ascii_whitespace())
    ))
}

/// What `-p`/`-F` add to a hunk's header line: the function line before
/// the hunk's first old line, or nothing.
fn hunk_function(o: &Opts, lines: &[String], first: usize) -> String {
    o.function_re
        .as_ref()
        .and_then(|re| function_line(re, lines, first))
        .unwrap_or_default()
}

impl Opts {
    /// GNU keeps the largest context any option asked for: `-u -U1` shows
    /// three lines, as `-u` means `-U3`.
    fn widen_context(&mut self, n: usize) {
        self.unified = Some(self.unified.map_or(n, |c| c.max(n)));
    }

    /// `-U N`, `-C N`, `--unified=N`, `--context=N`: a count past any
    /// file's length is as good as all of it (GNU clamps it too), and
    /// keeps the range arithmetic in bounds on a 32-bit guest.
    fn context_length(&mut self, cx: &mut Cx<'_>, v: &str) -> bool {
        const CONTEXT_MAX: usize = 1 << 30;
        let digits = v.strip_prefix('+').unwrap_or(v);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            cx.err(format_args!("diff: invalid context length '{v}'"));
            cx.err("diff: Try 'diff --help' for more information.");
            return false;
        }
        self.widen_context(
            digits
                .parse()
                .map_or(CONTEXT_MAX, |n: usize| n.min(CONTEXT_MAX)),
        );
        self.explicit_context = true;
        true
    }

    /// `--label`: at most one for each file.
    fn label(&mut self, cx: &mut Cx<'_>, v: &str) -> bool {
        if self.labels.len() == 2 {
            cx.err("diff: too many file label options");
            return false;
        }
        self.labels.push(v.to_owned());
        true
    }

    fn formatted(&self) -> bool {
        self.line_formats
            .iter()
            .chain(&self.group_formats)
            .any(Option::is_some)
    }
}

/// One run of lines in a group format: the old and new lines it covers.
struct Group<'a> {
    old: (&'a [String], usize),
    new: (&'a [String], usize),
    /// Whether each side's last line is the file's, without a newline.
    old_open: bool,
    new_open: bool,
}

/// Reads a `%c'X'` directive's character (`X`, or `\OOO` in octal) from
/// `s` after the `c`; returns it and the bytes used.
fn quoted_char(s: &[u8]) -> Option<(u8, usize)> {
    if s.first() != Some(&b'\'') {
        return None;
    }
    if s.get(1) == Some(&b'\\') {
        let digits = s[2..]
            .iter()
            .take(3)
            .take_while(|b| (b'0'..=b'7').contains(b))
            .count();
        let v = std::str::from_utf8(&s[2..2 + digits])
            .ok()
            .and_then(|d| u8::from_str_radix(d, 8).ok())?;
        (s.get(2 + digits) == Some(&b'\'')).then_some((v, 3 + digits))
    } else {
        (s.get(2) == Some(&b'\'')).then_some((*s.get(1)?, 3))
    }
}

/// `%%` and `%c'X'`, common to line and group formats: writes what the
/// directive after a `%` (`rest`) stands for; returns the bytes used, the
/// `%` included (a lone `%` stands for itself).
fn literal(rest: &[u8], out: &mut Vec<u8>) -> usize {
    match (rest.first(), quoted_char(rest.get(1..).unwrap_or_default())) {
        (Some(b'%'), _) => {
            out.push(b'%');
            2
        }
        (Some(b'c'), Some((c, used))) => {
            out.push(c);
            2 + used
        }
        _ => {
            out.push(b'%');
            1
        }
    }
}

/// A `%[-][width]{d,o,x,X}` number.
fn format_number(spec: &str, conv: u8, v: i64) -> String {
    let left = spec.starts_with('-');
    let zero = spec.trim_start_matches('-').starts_with('0');
    let width: usize = spec.trim_start_matches(['-', '0']).parse().unwrap_or(0);
    let body = match conv {
        b'o' => format!("{v:o}"),
        b'x' => format!("{v:x}"),
        b'X' => format!("{v:X}"),
        _ => v.to_string(),
    };
    if left {
        format!("{body:<width$}")
    } else if zero {
        format!("{body:0>width$}")
    } else {
        format!("{body:>width$}")
    }
}

/// Expands a line format (`%l`, `%L`, `%dn`, `%%`, `%c'X'`) for one line
/// numbered `n`; `open` when it has no newline at the end of its file.
fn line_format(fmt: &str, line: &str, n: usize, open: bool, out: &mut Vec<u8>) {
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let rest = &b[i + 1..];
        match rest.first() {
            Some(b'l') => {
                out.extend_from_slice(&crate::lossless::encode(line));
                i += 2;
            }
            Some(b'L') => {
                out.extend_from_slice(&crate::lossless::encode(line));
                if !open {
                    out.push(b'\n');
                }
                i += 2;
            }
            Some(b'%' | b'c') => i += literal(rest, out),
            _ => {
                let spec_len = rest
                    .iter()
                    .take_while(|c| c.is_ascii_digit() || **c == b'-')
                    .count();
                match (rest.get(spec_len), rest.get(spec_len + 1)) {
                    (Some(&conv @ (b'd' | b'o' | b'x' | b'X')), Some(b'n')) => {
                        let spec = std::str::from_utf8(&rest[..spec_len]).unwrap_or("");
                        out.extend_from_slice(format_number(spec, conv, n as i64).as_bytes());
                        i += 1 + spec_len + 2;
                    }
                    _ => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
        }
    }
}

/// Expands a group format for one group (`%<`, `%>`, `%=`, `%%`, `%c'X'`
/// and the line numbers `%dF`, `%dl`... of GNU's if-then-else formats).
fn group_format(fmt: &str, g: &Group<'_>, o: &Opts, out: &mut Vec<u8>) {
    let line_fmt = |k: usize| -> &str { o.line_formats[k].as_deref().unwrap_or("%l\n") };
    let lines = |which: (&[String], usize), open: bool, k: usize, out: &mut Vec<u8>| {
        let (ls, first) = which;
        for (j, l) in ls.iter().enumerate() {
            line_format(
                line_fmt(k),
                l,
                first + j + 1,
                open && j + 1 == ls.len(),
                out,
            );
        }
    };
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let rest = &b[i + 1..];
        match rest.first() {
            Some(b'<') => {
                lines(g.old, g.old_open, 0, out);
                i += 2;
            }
            Some(b'>') => {
                lines(g.new, g.new_open, 1, out);
                i += 2;
            }
            Some(b'=') => {
                lines(g.old, g.old_open, 2, out);
                i += 2;
            }
            Some(b'%' | b'c') => i += literal(rest, out),
            _ => {
                let spec_len = rest
                    .iter()
                    .take_while(|c| c.is_ascii_digit() || **c == b'-')
                    .count();
                let value = |letter: u8| -> Option<i64> {
                    let ((ls, first), lower) = if letter.is_ascii_lowercase() {
                        (g.old, letter)
                    } else {
                        (g.new, letter.to_ascii_lowercase())
                    };
                    let (f, n) = (first as i64 + 1, ls.len() as i64);
                    Some(match lower {
                        b'e' => f - 1,
                        b'f' => f,
                        b'l' => f + n - 1,
                        b'm' => f + n,
                        b'n' => n,
                        _ => return None,
                    })
                };
                match (rest.get(spec_len), rest.get(spec_len + 1)) {
                    (Some(&conv @ (b'd' | b'o' | b'x' | b'X')), Some(&letter))
                        if value(letter).is_some() =>
                    {
                        let spec = std::str::from_utf8(&rest[..spec_len]).unwrap_or("");
                        let v = value(letter).unwrap_or(0);
                        out.extend_from_slice(format_number(spec, conv, v).as_bytes());
                        i += 1 + spec_len + 2;
                    }
                    _ => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
        }
    }
}

/// The whole output in the line and group formats.
fn formatted(o: &Opts, ops: &[DiffOp], a: (&[String], bool), b: (&[String], bool)) -> Vec<u8> {
    let (la, ma) = a;
    let (lb, mb) = b;
    let mut out = Vec::new();
    let group = |or: std::ops::Range<usize>, nr: std::ops::Range<usize>| Group {
        old_open: ma && or.end == la.len() && !or.is_empty(),
        new_open: mb && nr.end == lb.len() && !nr.is_empty(),
        old: (&la[or.clone()], or.start),
        new: (&lb[nr.clone()], nr.start),
    };
    let mut k = 0;
    while k < ops.len() {
        if let DiffOp::Equal { .. } = ops[k] {
            let g = group(ops[k].old_range(), ops[k].new_range());
            group_format(
                o.group_formats[3].as_deref().unwrap_or("%="),
                &g,
                o,
                &mut out,
            );
            k += 1;
            continue;
        }
        // A hunk: the changes up to the next run of equal lines.
        let (os, ns) = (ops[k].old_range().start, ops[k].new_range().start);
        let (mut oe, mut ne) = (os, ns);
        while k < ops.len() && !matches!(ops[k], DiffOp::Equal { .. }) {
            oe = ops[k].old_range().end;
            ne = ops[k].new_range().end;
            k += 1;
        }
        let g = group(os..oe, ns..ne);
        let (which, default) = match (oe > os, ne > ns) {
            (true, false) => (0, "%<"),
            (false, true) => (1, "%>"),
            _ => (2, "%<%>"),
        };
        group_format(
            o.group_formats[which].as_deref().unwrap_or(default),
            &g,
            o,
            &mut out,
        );
    }
    out
}

/// Lines of a document, each without its newline (and without a `\r`
/// before it with `--strip-trailing-cr`); and whether the last one lacked
/// it.
fn split(data: &[u8], strip_cr: bool) -> (Vec<String>, bool) {
    let text = crate::lossless::decode(data);
    let missing = !text.is_empty() && !text.ends_with('\n');
    let lines = super::lf_lines(&text).map(|l| {
        let l = if strip_cr {
            l.strip_suffix('\r').unwrap_or(l)
        } else {
            l
        };
        l.to_owned()
    });
    (lines.collect(), missing)
}

fn key(o: &Opts, l: &str) -> String {
    let mut s = if o.icase {
        l.to_lowercase()
    } else {
        l.to_owned()
    };
    if o.tab_expansion && s.contains('\t') {
        s = expand_tabs(&s);
    }
    if o.all_space {
        s.retain(|c| !c.is_whitespace());
    } else if o.space_change {
        // A run of white space compares equal to any other run, and
        // white space at the end to none; at the start it still counts.
        let mut out = String::with_capacity(s.len());
        let mut space = false;
        for c in s.chars() {
            if c.is_whitespace() {
                space = true;
            } else {
                if space {
                    out.push(' ');
                    space = false;
                }
                out.push(c);
            }
        }
        s = out;
    } else if o.trailing_space {
        s.truncate(s.trim_end().len());
    }
    s
}

/// `line` with each tab turned into the spaces up to the next multiple
/// of 8 columns.
fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let n = 8 - column % 8;
            out.extend(std::iter::repeat_n(' ', n));
            column += n;
        } else {
            out.push(c);
            column += 1;
        }
    }
    out
}

fn range(start: usize, len: usize) -> String {
    // 1-based; an empty range names the line before it.
    match len {
        0 => start.to_string(),
        1 => (start + 1).to_string(),
        _ => format!("{},{}", start + 1, start + len),
    }
}

fn unified_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// The time a header shows for `path`: a pipe's (standard input,
/// `<(...)`) is now, as `fstat` gives it.
fn stamp_time(cx: &mut Cx<'_>, path: &str) -> Option<std::time::SystemTime> {
    if path == "-" || path.starts_with("/dev/fd/") {
        Some(cx.env.now)
    } else {
        cx.fs.metadata(path).ok().and_then(|m| m.modified)
    }
}

fn stamp(cx: &mut Cx<'_>, path: &str) -> String {
    let t = stamp_time(cx, path);
    match t {
        Some(t) => {
            let c = crate::time::civil(t);
            format!(
                "{}-{:02}-{:02} {:02}:{:02}:{:02}.{:09} +0000",
                c.year, c.month, c.day, c.hour, c.minute, c.second, c.nanos
            )
        }
        None => "1970-01-01 00:00:00.000000000 +0000".to_owned(),
    }
}

/// The modification time as the context format's header shows it
/// (`%a %b %e %T %Y`).
fn context_stamp(cx: &mut Cx<'_>, path: &str) -> String {
    let t = stamp_time(cx, path);
    let secs = t.map_or(0, crate::time::epoch_seconds);
    crate::time::strftime("%a %b %e %T %Y", secs, 0)
}

/// A file name as GNU diff 3.8 prints it in headers (`c_escape` in its
/// util.c): bare, unless it holds a space, a `"`, a `\`, a control byte
/// or one past ASCII (a negative `char` there); then in double quotes
/// with C escapes, octal for bytes with no letter escape (UTF-8 included).
fn c_escape(name: &str) -> String {
    let escape = |b: u8| match b {
        0x07 => Some("\\a".to_owned()),
        0x08 => Some("\\b".to_owned()),
        b'\t' => Some("\\t".to_owned()),
        b'\n' => Some("\\n".to_owned()),
        0x0b => Some("\\v".to_owned()),
        0x0c => Some("\\f".to_owned()),
        b'\r' => Some("\\r".to_owned()),
        b'"' => Some("\\\"".to_owned()),
        b'\\' => Some("\\\\".to_owned()),
        b if !(32..0x80).contains(&b) => Some(format!("\\{b:03o}")),
        _ => None,
    };
    let bytes = name.as_bytes();
    if !bytes.iter().any(|&b| b == b' ' || escape(b).is_some()) {
        return name.to_owned();
    }
    let mut out = String::from("\"");
    for &b in bytes {
        match escape(b) {
            Some(e) => out.push_str(&e),
            None => out.push(char::from(b)),
        }
    }
    out.push('"');
    out
}

/// The `diff OPTIONS A B` line before each pair `-r` compares.
fn pair_header(o: &Opts, a: &str, b: &str) -> String {
    let name = |side: usize, path: &str| {
        o.labels
            .get(side)
            .cloned()
            .unwrap_or_else(|| c_escape(path))
    };
    format!("diff{} {} {}\n", o.switches, name(0, a), name(1, b))
}

/// One file's header line: its `--label`, or its name and time.
fn header_line(
    cx: &mut Cx<'_>,
    o: &Opts,
    side: usize,
    path: &str,
    stamp: fn(&mut Cx<'_>, &str) -> String,
) -> String {
    match o.labels.get(side) {
        Some(label) => label.clone(),
        None => format!("{}\t{}", c_escape(path), stamp(cx, path)),
    }
}

/// A context-format range (`print_context_number_range`): `FIRST,LAST`,
/// one number for one line, the line before for none.
fn context_range(start: usize, len: usize) -> String {
    match len {
        0 => start.to_string(),
        1 => (start + 1).to_string(),
        _ => format!("{},{}", start + 1, start + len),
    }
}

fn read(cx: &mut Cx<'_>, path: &str) -> Result<Vec<u8>, String> {
    cx.read_operand(path)
        .map_err(|e| format!("diff: {path}: {}", e.strerror()))
}

/// GNU diff's side-by-side layout (`side.c`): each half `half` columns
/// wide, the right half starting at column `offset`, the gutter mark
/// (`|`, `<`, `>`) half way between; padding is tabs unless `-t`.
struct Side {
    half: usize,
    offset: usize,
    expand_tabs: bool,
    suppress: bool,
}

const TAB: usize = 8;

impl Side {
    fn new(width: usize, o: &Opts) -> Side {
        let t = if o.expand_tabs { 1 } else { TAB };
        let off = (width + t + 3) / (2 * t) * t;
        let half = off.saturating_sub(3).min(width.saturating_sub(off));
        Side {
            half,
            offset: if half < off { off } else { width },
            expand_tabs: o.expand_tabs,
            suppress: o.suppress_common,
        }
    }

    /// Pads from column `from` to `to`, with tabs where they fit.
    fn pad(&self, out: &mut String, mut from: usize, to: usize) -> usize {
        if !self.expand_tabs {
            let mut tab = from + TAB - from % TAB;
            while tab <= to {
                out.push('\t');
                from = tab;
                tab += TAB;
            }
        }
        while from < to {
            out.push(' ');
            from += 1;
        }
        to
    }

    /// Prints as much of `line` as fits in `bound` columns; returns the
    /// column reached.
    fn half_line(&self, out: &mut String, line: &str, bound: usize) -> usize {
        let (mut inp, mut outp) = (0usize, 0usize);
        for c in line.chars() {
            if c == '\t' {
                let spaces = TAB - inp % TAB;
                if inp == outp {
                    let stop = outp + spaces;
                    if self.expand_tabs {
                        let stop = stop.min(bound);
                        while outp < stop {
                            out.push(' ');
                            outp += 1;
                        }
                    } else if stop < bound {
                        outp = stop;
                        out.push('\t');
                    }
                }
                inp += spaces;
            } else {
                if inp < bound {
                    outp = inp + 1;
                    out.push(c);
                }
                inp += 1;
            }
        }
        outp
    }

    /// One output line: the left text, the mark, the right text.
    fn row(
        &self,
        out: &mut String,
        left: Option<(&str, bool)>,
        mark: char,
        right: Option<(&str, bool)>,
    ) {
        let mut col = 0;
        let mut newline = false;
        if let Some((l, nl)) = left {
            newline |= nl;
            col = self.half_line(out, l, self.half);
        }
        if mark != ' ' {
            col = self.pad(out, col, (self.half + self.offset - 1) / 2) + 1;
            let mark = match (mark, left, right) {
                ('|', Some((_, a)), Some((_, b))) if a != b => {
                    if a {
                        '/'
                    } else {
                        '\\'
                    }
                }
                (m, _, _) => m,
            };
            out.push(mark);
        }
        if let Some((r, nl)) = right {
            newline |= nl;
            if !r.is_empty() {
                self.pad(out, col, self.offset);
                self.half_line(out, r, self.half);
            }
        }
        if newline {
            out.push('\n');
        }
    }

    fn lines(&self, ops: &[DiffOp], a: (&[String], bool), b: (&[String], bool)) -> String {
        // Whether line `k` of a side ends with a newline.
        let line = |side: (&[String], bool), k: usize| -> (String, bool) {
            (side.0[k].clone(), !(side.1 && k + 1 == side.0.len()))
        };
        let mut out = String::new();
        for op in ops {
            match *op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => {
                    if self.suppress {
                        continue;
                    }
                    for k in 0..len {
                        let (l, ln) = line(a, old_index + k);
                        let (r, rn) = line(b, new_index + k);
                        self.row(&mut out, Some((&l, ln)), ' ', Some((&r, rn)));
                    }
                }
                _ => {
                    let (or, nr) = (op.old_range(), op.new_range());
                    for k in 0..or.len().max(nr.len()) {
                        let l = (k < or.len()).then(|| line(a, or.start + k));
                        let r = (k < nr.len()).then(|| line(b, nr.start + k));
                        let mark = match (&l, &r) {
                            (Some(_), Some(_)) => '|',
                            (Some(_), None) => '<',
                            _ => '>',
                        };
                        self.row(
                            &mut out,
                            l.as_ref().map(|(t, n)| (t.as_str(), *n)),
                            mark,
                            r.as_ref().map(|(t, n)| (t.as_str(), *n)),
                        );
                    }
                }
            }
        }
        out
    }
}

/// Compares two documents; returns 0, 1 or 2.
/// Whether `path` is missing and `-N` makes it an empty file.
fn absent(cx: &mut Cx<'_>, o: &Opts, path: &str) -> bool {
    o.new_file
        && path != "-"
        && matches!(cx.fs.metadata(path), Err(crate::fs::FsError::NotFound(_)))
}

fn files(cx: &mut Cx<'_>, o: &Opts, a: &str, b: &str, header: Option<&str>) -> u8 {
    let get = |cx: &mut Cx<'_>, p: &str| {
        if absent(cx, o, p) {
            Ok(Vec::new())
        } else {
            read(cx, p)
        }
    };
    let (ra, rb) = (get(cx, a), get(cx, b));
    let (da, db) = match (ra, rb) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => {
            cx.err(e);
            return 2;
        }
    };
    if da == db && o.side_by_side.is_none() {
        if o.same {
            cx.outs(&format!("Files {a} and {b} are identical\n"));
        }
        return 0;
    }
    // GNU diff names no `diff -r` line over binary files: the verdict is
    // the whole output.
    if !o.text && (da.contains(&0) || db.contains(&0)) {
        // `-q` says only that they differ, binary or not.
        let what = if o.brief { "Files" } else { "Binary files" };
        cx.outs(&format!("{what} {a} and {b} differ\n"));
        return 1;
    }
    let (la, ma) = split(&da, o.strip_cr);
    let (lb, mb) = split(&db, o.strip_cr);
    let ka: Vec<String> = la.iter().map(|l| key(o, l)).collect();
    let kb: Vec<String> = lb.iter().map(|l| key(o, l)).collect();
    // The context of `-u` and `-c` is also how many equal lines at the
    // ends the edit script may move its changes over.
    let ops = super::diffseq::script(
        &super::diffseq::Side {
            raw: &la,
            keys: &ka,
            open: ma,
        },
        &super::diffseq::Side {
            raw: &lb,
            keys: &kb,
            open: mb,
        },
        o.unified.unwrap_or(0),
        !(o.all_space || o.space_change || o.trailing_space),
        o.minimal,
    );
    let changed = ops.iter().any(|op| !matches!(op, DiffOp::Equal { .. }));
    let blank_only = o.blank_lines
        && ops.iter().all(|op| match *op {
            DiffOp::Equal { .. } => true,
            DiffOp::Delete {
                old_index, old_len, ..
            } => la[old_index..old_index + old_len]
                .iter()
                .all(|l| l.trim().is_empty()),
            DiffOp::Insert {
                new_index, new_len, ..
            } => lb[new_index..new_index + new_len]
                .iter()
                .all(|l| l.trim().is_empty()),
            DiffOp::Replace { .. } => false,
        });
    if let Some(width) = o.side_by_side
        && !o.brief
    {
        let mut out = header.map(str::to_owned).unwrap_or_default();
        if changed || !o.suppress_common {
            out.push_str(&Side::new(width, o).lines(&ops, (&la, ma), (&lb, mb)));
        }
        cx.outs(&out);
        if !changed && o.same {
            cx.outs(&format!("Files {a} and {b} are identical\n"));
        }
        return u8::from(changed);
    }
    if !changed || blank_only {
        if o.same {
            cx.outs(&format!("Files {a} and {b} are identical\n"));
        }
        return 0;
    }
    if o.brief {
        cx.outs(&format!("Files {a} and {b} differ\n"));
        return 1;
    }
    if o.formatted() {
        if let Some(h) = header {
            cx.outs(h);
        }
        cx.out(&formatted(o, &ops, (&la, ma), (&lb, mb)));
        return 1;
    }
    let mut out = String::new();
    if let Some(h) = header {
        out.push_str(h);
    }
    let no_nl = |out: &mut String, missing: bool, idx: usize, len: usize| {
        if missing && idx + 1 == len {
            out.push_str("\\ No newline at end of file\n");
        }
    };
    match o.unified {
        Some(ctx) if o.context_format => {
            let (ha, hb) = (
                header_line(cx, o, 0, a, context_stamp),
                header_line(cx, o, 1, b, context_stamp),
            );
            out.push_str(&format!("*** {ha}\n--- {hb}\n"));
            for group in similar::group_diff_ops(ops, ctx) {
                let (Some(first), Some(last)) = (group.first(), group.last()) else {
                    continue;
                };
                let (os, oe) = (first.old_range().start, last.old_range().end);
                let (ns, ne) = (first.new_range().start, last.new_range().end);
                out.push_str("***************");
                out.push_str(&hunk_function(o, &la, os));
                out.push('\n');
                out.push_str(&format!("*** {} ****\n", context_range(os, oe - os)));
                // Each side's lines are shown only if the hunk changes
                // that side: `-` deleted, `+` inserted, `!` changed.
                let mark = |op: &DiffOp, old: bool| match op {
                    DiffOp::Equal { .. } => ' ',
                    DiffOp::Replace { .. } => '!',
                    _ if old => '-',
                    _ => '+',
                };
                if group
                    .iter()
                    .any(|op| !op.old_range().is_empty() && !matches!(op, DiffOp::Equal { .. }))
                {
                    for op in &group {
                        for k in op.old_range() {
                            out.push_str(&format!("{} {}\n", mark(op, true), la[k]));
                            no_nl(&mut out, ma, k, la.len());
                        }
                    }
                }
                out.push_str(&format!("--- {} ----\n", context_range(ns, ne - ns)));
                if group
                    .iter()
                    .any(|op| !op.new_range().is_empty() && !matches!(op, DiffOp::Equal { .. }))
                {
                    for op in &group {
                        for k in op.new_range() {
                            out.push_str(&format!("{} {}\n", mark(op, false), lb[k]));
                            no_nl(&mut out, mb, k, lb.len());
                        }
                    }
                }
            }
        }
        None => {
            for op in &ops {
                let (oi, ol, ni, nl) = match *op {
                    DiffOp::Equal { .. } => continue,
                    DiffOp::Delete {
                        old_index,
                        old_len,
                        new_index,
                    } => (old_index, old_len, new_index, 0),
                    DiffOp::Insert {
                        old_index,
                        new_index,
                        new_len,
                    } => (old_index, 0, new_index, new_len),
                    DiffOp::Replace {
                        old_index,
                        old_len,
                        new_index,
                        new_len,
                    } => (old_index, old_len, new_index, new_len),
                };
                let kind = match (ol, nl) {
                    (0, _) => 'a',
                    (_, 0) => 'd',
                    _ => 'c',
                };
                out.push_str(&format!("{}{kind}{}\n", range(oi, ol), range(ni, nl)));
                for k in oi..oi + ol {
                    out.push_str(&format!("< {}\n", la[k]));
                    no_nl(&mut out, ma, k, la.len());
                }
                if ol > 0 && nl > 0 {
                    out.push_str("---\n");
                }
                for k in ni..ni + nl {
                    out.push_str(&format!("> {}\n", lb[k]));
                    no_nl(&mut out, mb, k, lb.len());
                }
            }
        }
        Some(ctx) => {
            let (ha, hb) = (
                header_line(cx, o, 0, a, stamp),
                header_line(cx, o, 1, b, stamp),
            );
            out.push_str(&format!("--- {ha}\n+++ {hb}\n"));
            for group in similar::group_diff_ops(ops, ctx) {
                let (Some(first), Some(last)) = (group.first(), group.last()) else {
                    continue;
                };
                let os = first.old_range().start;
                let oe = last.old_range().end;
                let ns = first.new_range().start;
                let ne = last.new_range().end;
                out.push_str(&format!(
                    "@@ -{} +{} @@",
                    unified_range(os, oe - os),
                    unified_range(ns, ne - ns)
                ));
                out.push_str(&hunk_function(o, &la, os));
                out.push('\n');
                for op in &group {
                    match *op {
                        DiffOp::Equal { old_index, len, .. } => {
                            for k in old_index..old_index + len {
                                out.push_str(&format!(" {}\n", la[k]));
                                no_nl(&mut out, ma, k, la.len());
                            }
                        }
                        _ => {
                            for k in op.old_range() {
                                out.push_str(&format!("-{}\n", la[k]));
                                no_nl(&mut out, ma, k, la.len());
                            }
                            for k in op.new_range() {
                                out.push_str(&format!("+{}\n", lb[k]));
                                no_nl(&mut out, mb, k, lb.len());
                            }
                        }
                    }
                }
            }
        }
    }
    cx.outs(&out);
    1
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Compares two directories, recursing with `-r`.
fn dirs(cx: &mut Cx<'_>, o: &Opts, a: &str, b: &str) -> u8 {
    let list = |cx: &mut Cx<'_>, p: &str| {
        if absent(cx, o, p) {
            Ok(Vec::new())
        } else {
            cx.fs.read_dir(p)
        }
    };
    let (la, lb) = (list(cx, a), list(cx, b));
    let (ea, eb) = match (la, lb) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) => {
            cx.err(format_args!("diff: {a}: {}", e.strerror()));
            return 2;
        }
        (_, Err(e)) => {
            cx.err(format_args!("diff: {b}: {}", e.strerror()));
            return 2;
        }
    };
    let mut names: Vec<&str> = ea
        .iter()
        .chain(eb.iter())
        .map(|e| e.name.as_str())
        .filter(|n| !o.exclude.iter().any(|p| p.matches(n, false)))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut status = 0;
    for n in names {
        let x = ea.iter().find(|e| e.name == n);
        let y = eb.iter().find(|e| e.name == n);
        match (x, y) {
            // `-N`: what one side lacks is compared as empty (a directory
            // only with `-r`).
            (Some(e), None) | (None, Some(e))
                if o.new_file && (e.kind == Kind::File || o.recursive) =>
            {
                let (pa, pb) = (join(a, n), join(b, n));
                status = status.max(if e.kind == Kind::Dir {
                    dirs(cx, o, &pa, &pb)
                } else {
                    let header = pair_header(o, &pa, &pb);
                    files(cx, o, &pa, &pb, (!o.brief).then_some(header.as_str()))
                });
            }
            (Some(_), None) => {
                cx.outs(&format!("Only in {a}: {n}\n"));
                status = status.max(1);
            }
            (None, Some(_)) => {
                cx.outs(&format!("Only in {b}: {n}\n"));
                status = status.max(1);
            }
            (Some(x), Some(y)) => {
                let (pa, pb) = (join(a, n), join(b, n));
                match (x.kind, y.kind) {
                    (Kind::Dir, Kind::Dir) => {
                        if o.recursive {
                            status = status.max(dirs(cx, o, &pa, &pb));
                        } else {
                            cx.outs(&format!("Common subdirectories: {pa} and {pb}\n"));
                        }
                    }
                    (Kind::File, Kind::File) => {
                        let header = pair_header(o, &pa, &pb);
                        status = status.max(files(
                            cx,
                            o,
                            &pa,
                            &pb,
                            (!o.brief).then_some(header.as_str()),
                        ));
                    }
                    (Kind::Dir, _) => {
                        cx.outs(&format!(
                            "File {pb} is a regular file while file {pa} is a directory\n"
                        ));
                        status = status.max(1);
                    }
                    _ => {
                        cx.outs(&format!(
                            "File {pa} is a regular file while file {pb} is a directory\n"
                        ));
                        status = status.max(1);
                    }
                }
            }
            (None, None) => {}
        }
    }
    status
}

/// An option with a value: `-x PAT`, `-U N`, `-C N`, `-W N`, `-F RE`, in
/// whichever of their forms it came.
fn valued(
    cx: &mut Cx<'_>,
    o: &mut Opts,
    styles: &mut std::collections::BTreeSet<char>,
    width: &mut usize,
    option: char,
    v: &str,
) -> bool {
    match option {
        'x' => o.exclude.push(crate::glob::Pattern::new(v)),
        'F' => o.function.push(v.to_owned()),
        'W' => match v.parse() {
            Ok(n) if n > 0 => *width = n,
            _ => {
                cx.err(format_args!("diff: invalid width '{v}'"));
                cx.err("diff: Try 'diff --help' for more information.");
                return false;
            }
        },
        _ => {
            if !o.context_length(cx, v) {
                return false;
            }
            o.context_format = option == 'C';
            styles.insert(if option == 'C' { 'c' } else { 'u' });
        }
    }
    true
}

fn missing_argument(cx: &mut Cx<'_>, option: char) -> u8 {
    cx.err(format_args!(
        "diff: option requires an argument -- '{option}'"
    ));
    cx.err("diff: Try 'diff --help' for more information.");
    2
}

/// `diff [-u|-U N] [-q] [-s] [-r] [-i] [-w] [-b] [-B] FILE1 FILE2`
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut o = Opts {
        unified: None,
        explicit_context: false,
        context_format: false,
        side_by_side: None,
        suppress_common: false,
        expand_tabs: false,
        brief: false,
        same: false,
        recursive: false,
        icase: false,
        all_space: false,
        space_change: false,
        trailing_space: false,
        tab_expansion: false,
        blank_lines: false,
        strip_cr: false,
        switches: String::new(),
        exclude: Vec::new(),
        new_file: false,
        text: false,
        minimal: false,
        line_formats: [None, None, None],
        group_formats: [None, None, None, None],
        function: Vec::new(),
        show_c_function: false,
        function_re: None,
        labels: Vec::new(),
    };
    let mut ops = Vec::new();
    let mut i = 0;
    let mut flags = String::new();
    let (mut side, mut width) = (false, 130usize);
    // The obsolete `-NUM` (`-u0`, `-5`): its digits run on from one option
    // to the next, as getopt hands them to GNU diff one by one.
    let mut ocontext: Option<usize> = None;
    let mut prev_digit = false;
    // The output formats asked for: more than one is an error.
    let mut styles = std::collections::BTreeSet::new();
    while let Some(a) = args.get(i) {
        let start = i;
        i += 1;
        let carried = std::mem::replace(&mut prev_digit, false);
        match a.as_str() {
            "--" => {
                ops.extend(args[i..].iter().cloned());
                break;
            }
            "-u" | "--unified" => {
                o.widen_context(3);
                o.context_format = false;
                styles.insert('u');
            }
            "-q" | "--brief" => o.brief = true,
            "-s" | "--report-identical-files" => o.same = true,
            "-r" | "--recursive" => o.recursive = true,
            "-i" | "--ignore-case" => o.icase = true,
            "-w" | "--ignore-all-space" => o.all_space = true,
            "-b" | "--ignore-space-change" => o.space_change = true,
            "-Z" | "--ignore-trailing-space" => o.trailing_space = true,
            "-E" | "--ignore-tab-expansion" => o.tab_expansion = true,
            "-B" | "--ignore-blank-lines" => o.blank_lines = true,
            // How hard GNU diff looks for a smaller set of changes; the
            // result here is the same without them.
            "--speed-large-files" => {}
            s if s.starts_with("--horizon-lines=") => {}
            "-N" | "--new-file" => o.new_file = true,
            "-a" | "--text" => o.text = true,
            "-d" | "--minimal" => o.minimal = true,
            "--strip-trailing-cr" => o.strip_cr = true,
            "-p" | "--show-c-function" => {
                o.show_c_function = true;
                o.function.push(C_FUNCTION.to_owned());
            }
            "--show-function-line" | "--exclude" | "--width" => {
                let Some(v) = args.get(i) else {
                    cx.err(format_args!("diff: option '{a}' requires an argument"));
                    cx.err("diff: Try 'diff --help' for more information.");
                    return 2;
                };
                i += 1;
                let option = match a.as_str() {
                    "--exclude" => 'x',
                    "--width" => 'W',
                    _ => 'F',
                };
                if !valued(cx, &mut o, &mut styles, &mut width, option, v) {
                    return 2;
                }
            }
            s if s.starts_with("--")
                && let Some((name, v)) = s.split_once('=')
                && let Some(option) = match name {
                    "--show-function-line" => Some('F'),
                    "--exclude" => Some('x'),
                    "--width" => Some('W'),
                    "--unified" => Some('U'),
                    "--context" => Some('C'),
                    _ => None,
                } =>
            {
                if !valued(cx, &mut o, &mut styles, &mut width, option, v) {
                    return 2;
                }
            }
            s if s.starts_with("--") && s.contains("-format") => {
                const NAMES: [&str; 8] = [
                    "old-line-format",
                    "new-line-format",
                    "unchanged-line-format",
                    "line-format",
                    "old-group-format",
                    "new-group-format",
                    "changed-group-format",
                    "unchanged-group-format",
                ];
                let (name, inline) = match s[2..].split_once('=') {
                    Some((n, v)) => (n, Some(v.to_owned())),
                    None => (&s[2..], None),
                };
                let Some(k) = NAMES.iter().position(|n| *n == name) else {
                    cx.err(format_args!("diff: unrecognized option '{s}'"));
                    cx.err("diff: Try 'diff --help' for more information.");
                    return 2;
                };
                let v = match inline {
                    Some(v) => v,
                    None => {
                        let Some(v) = args.get(i).cloned() else {
                            cx.err(format_args!("diff: option '{s}' requires an argument"));
                            cx.err("diff: Try 'diff --help' for more information.");
                            return 2;
                        };
                        i += 1;
                        v
                    }
                };
                match k {
                    0..=2 => o.line_formats[k] = Some(v),
                    3 => o.line_formats = [Some(v.clone()), Some(v.clone()), Some(v)],
                    _ => o.group_formats[k - 4] = Some(v),
                }
            }
            "-y" | "--side-by-side" => {
                side = true;
                styles.insert('y');
            }
            "--suppress-common-lines" => o.suppress_common = true,
            "-t" | "--expand-tabs" => o.expand_tabs = true,
            "-c" | "--context" => {
                o.widen_context(3);
                o.context_format = true;
                styles.insert('c');
            }
            "-e" | "--ed" | "-n" | "--rcs" => {
                cx.err(format_args!(
                    "diff: {a}: this output format is not supported; use the normal format, -c, -u or -y"
                ));
                return 2;
            }
            "--label" => {
                let Some(v) = args.get(i) else {
                    cx.err("diff: option '--label' requires an argument");
                    cx.err("diff: Try 'diff --help' for more information.");
                    return 2;
                };
                i += 1;
                if !o.label(cx, v) {
                    return 2;
                }
            }
            s if s.starts_with("--label=") => {
                if !o.label(cx, &s[8..]) {
                    return 2;
                }
            }
            s if s.starts_with("--color") => {}
            s if s.starts_with('-') && s.len() > 1 && !s.starts_with("--") => {
                prev_digit = carried;
                for (at, c) in s.char_indices().skip(1) {
                    let digit = c.to_digit(10).map(|d| d as usize);
                    if let Some(d) = digit {
                        ocontext = Some(match ocontext {
                            Some(n) if prev_digit => n.saturating_mul(10).saturating_add(d),
                            _ => d,
                        });
                    }
                    prev_digit = digit.is_some();
                    match c {
                        '0'..='9' => {}
                        // An option that takes a value takes the rest of
                        // the word, or the next word (getopt's rule).
                        'x' | 'U' | 'C' | 'W' | 'F' => {
                            let rest = &s[at + c.len_utf8()..];
                            let v = if rest.is_empty() {
                                let Some(v) = args.get(i) else {
                                    return missing_argument(cx, c);
                                };
                                i += 1;
                                v.as_str()
                            } else {
                                rest
                            };
                            if !valued(cx, &mut o, &mut styles, &mut width, c, v) {
                                return 2;
                            }
                            break;
                        }
                        'u' => {
                            o.widen_context(3);
                            o.context_format = false;
                            styles.insert('u');
                        }
                        'c' => {
                            o.widen_context(3);
                            o.context_format = true;
                            styles.insert('c');
                        }
                        'y' => {
                            side = true;
                            styles.insert('y');
                        }
                        't' => o.expand_tabs = true,
                        'q' => o.brief = true,
                        's' => o.same = true,
                        'r' => o.recursive = true,
                        'i' => o.icase = true,
                        'w' => o.all_space = true,
                        'b' => o.space_change = true,
                        'Z' => o.trailing_space = true,
                        'E' => o.tab_expansion = true,
                        'B' => o.blank_lines = true,
                        'N' => o.new_file = true,
                        // `-l` pages through pr: only -q output is the
                        // same, taken as is.
                        'a' => o.text = true,
                        'd' => o.minimal = true,
                        'p' => {
                            o.show_c_function = true;
                            o.function.push(C_FUNCTION.to_owned());
                        }
                        'l' => {}
                        other => {
                            cx.err(format_args!("diff: invalid option -- '{other}'"));
                            cx.err("diff: Try 'diff --help' for more information.");
                            return 2;
                        }
                    }
                }
            }
            s if s.starts_with("--") => {
                cx.err(format_args!("diff: unrecognized option '{s}'"));
                cx.err("diff: Try 'diff --help' for more information.");
                return 2;
            }
            _ => {
                ops.push(a.clone());
                prev_digit = carried;
                continue;
            }
        }
        // The options as given, for the header of each pair `-r` compares.
        for arg in &args[start..i] {
            flags.push(' ');
            flags.push_str(&crate::commands::quote::quote(arg, false));
        }
    }
    o.switches = flags;
    if styles.len() > 1 {
        cx.err("diff: conflicting output style options");
        cx.err("diff: Try 'diff --help' for more information.");
        return 2;
    }
    if side {
        o.side_by_side = Some(width);
    }
    if styles.is_empty() && o.show_c_function {
        o.widen_context(3);
        o.context_format = true;
    }
    // GNU's rule for `-NUM`: it counts only with a context or unified
    // format, and replaces a length that was not given explicitly.
    if let (Some(oc), Some(ctx)) = (ocontext, o.unified)
        && (ctx < oc || (oc < ctx && !o.explicit_context))
    {
        o.unified = Some(oc);
    }
    if !o.function.is_empty() {
        let mut alternatives = Vec::new();
        for f in &o.function {
            match crate::pattern::translate(f, crate::pattern::Syntax::Basic) {
                Ok(t) => alternatives.push(format!("(?:{})", t.regex)),
                Err(e) => {
                    cx.err(format_args!("diff: {f}: {e}"));
                    return 2;
                }
            }
        }
        match regex::Regex::new(&alternatives.join("|")) {
            Ok(re) => o.function_re = Some(re),
            Err(_) => {
                cx.err("diff: the -F pattern is not one vfs-sh can match");
                return 2;
            }
        }
    }
    let [a, b] = ops.as_slice() else {
        if ops.len() < 2 {
            cx.err(format_args!(
                "diff: missing operand after '{}'",
                ops.last().map_or("diff", String::as_str)
            ));
        } else {
            cx.err(format_args!("diff: extra operand '{}'", ops[2]));
        }
        cx.err("diff: Try 'diff --help' for more information.");
        return 2;
    };
    let new_file = o.new_file;
    let kind = |cx: &mut Cx<'_>, p: &str| -> Result<Kind, String> {
        if p == "-" {
            return Ok(Kind::File);
        }
        if new_file && matches!(cx.fs.metadata(p), Err(crate::fs::FsError::NotFound(_))) {
            return Ok(Kind::File);
        }
        cx.fs
            .metadata(p)
            .map(|m| m.kind)
            .map_err(|e| format!("diff: {p}: {}", e.strerror()))
    };
    if new_file && absent(cx, &o, a) && absent(cx, &o, b) {
        cx.err(format_args!("diff: {a}: No such file or directory"));
        cx.err(format_args!("diff: {b}: No such file or directory"));
        return 2;
    }
    match (kind(cx, a), kind(cx, b)) {
        (Ok(Kind::Dir), Ok(Kind::Dir)) => dirs(cx, &o, a, b),
        (Ok(Kind::Dir), Ok(Kind::File)) => {
            let name = b.rsplit('/').next().unwrap_or(b);
            files(cx, &o, &join(a, name), b, None)
        }
        (Ok(Kind::File), Ok(Kind::Dir)) => {
            let name = a.rsplit('/').next().unwrap_or(a);
            files(cx, &o, a, &join(b, name), None)
        }
        (Ok(_), Ok(_)) => files(cx, &o, a, b, None),
        (Err(e), _) | (_, Err(e)) => {
            cx.err(e);
            2
        }
    }
}
