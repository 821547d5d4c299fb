//! Small GNU text tools: `rev`, `tac`, `nl`, `seq`, `paste`, `fold`,
//! `expr`, `tee`, `base64`, `readlink`, `realpath`, `column`, `comm`,
//! `join`, `cmp`.

use super::quote::quote;
use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::FsError;

/// Reads each operand (`-` or none: standard input), reporting errors as
/// `cmd: NAME: why`; returns the inputs read and whether any failed.
fn inputs(cx: &mut Cx<'_>, cmd: &str, ops: &[String]) -> (Vec<(String, Vec<u8>)>, bool) {
    let ops: Vec<String> = if ops.is_empty() {
        vec!["-".to_owned()]
    } else {
        ops.to_vec()
    };
    let mut all = Vec::new();
    let mut failed = false;
    for op in ops {
        match read_one(cx, &op) {
            Ok(d) => all.push((op, d)),
            Err(e) => {
                cx.err(format_args!(
                    "{cmd}: {}: {}",
                    super::quote::quote(&op, false),
                    e.strerror()
                ));
                failed = true;
            }
        }
    }
    (all, failed)
}

/// Reads each operand in turn (`-` or none: standard input) and hands its
/// bytes to `f`, which prints what it makes of them; an operand that
/// cannot be read is reported (`why` words the message) in its place,
/// between the others' output, as GNU's tools report it. Returns whether
/// any failed.
pub(crate) fn each_input(
    cx: &mut Cx<'_>,
    ops: &[String],
    why: impl Fn(&str, &FsError) -> String,
    mut f: impl FnMut(&mut Cx<'_>, &str, &[u8]),
) -> bool {
    let stdin = ["-".to_owned()];
    let ops = if ops.is_empty() { &stdin[..] } else { ops };
    let mut failed = false;
    for op in ops {
        match read_one(cx, op) {
            Ok(d) => f(cx, op, &d),
            Err(e) => {
                cx.err(why(op, &e));
                failed = true;
            }
        }
    }
    failed
}

/// Like [`each_input`], a record at a time: each operand's records (each
/// with its `delim`; the last one may have none) go to `f` as they are
/// read, with the output buffer to write to, so a command that works line
/// by line holds one line of a large document, not all of it. An operand
/// that cannot be read, or fails part way, is reported where it stops.
/// Returns whether any failed.
pub(crate) fn each_input_record(
    cx: &mut Cx<'_>,
    ops: &[String],
    why: impl Fn(&str, &FsError) -> String,
    delim: u8,
    mut f: impl FnMut(&[u8], &mut Vec<u8>),
) -> bool {
    let stdin = ["-".to_owned()];
    let ops = if ops.is_empty() { &stdin[..] } else { ops };
    let mut failed = false;
    let mut out = Vec::new();
    for op in ops {
        let streamed = cx.refuse_directory(op).and_then(|()| {
            cx.stream_records(op, delim, |cx, record| {
                f(record, &mut out);
                cx.out_stdio(&mut out);
            })
        });
        if let Err(e) = streamed {
            // Written in 4096-byte blocks (stdio's buffer on a pipe), and
            // before each message too: GNU's `error()` flushes standard
            // output first.
            cx.out(&out);
            out.clear();
            cx.err(why(op, &e));
            failed = true;
        }
    }
    cx.out(&out);
    failed
}

/// `cmd: NAME: why`, the wording of most GNU tools.
pub(crate) fn plain_why(cmd: &str) -> impl Fn(&str, &FsError) -> String + '_ {
    move |op, e| {
        format!(
            "{cmd}: {}: {}",
            super::quote::quote(op, false),
            e.strerror()
        )
    }
}

fn read_one(cx: &mut Cx<'_>, op: &str) -> Result<Vec<u8>, FsError> {
    cx.read_file_operand(op)
}

/// Splits into lines, each with its terminator (the last may have none).
fn records(data: &[u8], sep: u8) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in data.iter().enumerate() {
        if b == sep {
            out.push(&data[start..=i]);
            start = i + 1;
        }
    }
    if start < data.len() {
        out.push(&data[start..]);
    }
    out
}

fn chomp(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

/// `rev [FILE]...`
pub(crate) fn rev(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    // util-linux's wording.
    let why = |op: &str, e: &FsError| match e {
        FsError::IsADirectory(_) => format!("rev: {op}: 0: Is a directory"),
        e => format!("rev: cannot open {op}: {}", e.strerror()),
    };
    // util-linux reads each line as wide characters: in the C locale only
    // ASCII decodes, in a UTF-8 one only valid UTF-8. A line that does not
    // ends its file there, named with how many lines came before it.
    let utf8 = super::utf8_locale(cx);
    // A line reversed, or None where it does not decode.
    let reversed = |text: &[u8]| -> Option<String> {
        let text = std::str::from_utf8(text).ok()?;
        (utf8 || text.is_ascii()).then(|| text.chars().rev().collect())
    };
    let stdin = ["-".to_owned()];
    let ops = if args.is_empty() { &stdin[..] } else { args };
    let mut failed = false;
    // rev writes through stdio, so a short output reaches a pipe only at
    // exit, after the errors.
    let mut out = Vec::new();
    // util-linux reads a line as a C wide string: a NUL ends it there, and
    // as no newline ends what it read, the next line is read onto it (a
    // line that starts with a NUL, with nothing before it, is dropped).
    let mut pending: Vec<u8> = Vec::new();
    for op in ops {
        let (mut done, mut undecodable) = (0usize, false);
        let streamed = cx.refuse_directory(op).and_then(|()| {
            cx.stream_records(op, b'\n', |cx, line| {
                if undecodable {
                    return;
                }
                let body = chomp(line);
                if let Some(nul) = body.iter().position(|&b| b == 0) {
                    pending.extend_from_slice(&body[..nul]);
                    return;
                }
                pending.extend_from_slice(body);
                match reversed(&pending) {
                    Some(line) => out.extend_from_slice(line.as_bytes()),
                    None => undecodable = true,
                }
                pending.clear();
                if undecodable {
                    return;
                }
                if body.len() < line.len() {
                    out.push(b'\n');
                }
                done += 1;
                cx.out_stdio(&mut out);
            })
        });
        if undecodable {
            let name = if op == "-" { "stdin" } else { op };
            cx.err(format_args!(
                "rev: {name}: {done}: Invalid or incomplete multibyte or wide character"
            ));
            failed = true;
        }
        if let Err(e) = streamed {
            cx.err(why(op, &e));
            failed = true;
        }
    }
    if let Some(line) = reversed(&pending) {
        out.extend_from_slice(line.as_bytes());
    }
    cx.out(&out);
    u8::from(failed)
}

/// `expand [-t N] [-i] [FILE]...`: tabs to spaces, stops every N (8)
/// columns; `-i` only in the leading blanks.
pub(crate) fn expand(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    tabs(cx, "expand", args, true)
}

/// `unexpand [-a] [-t N] [FILE]...`: leading blanks (every run with `-a`
/// or `-t`) back to tabs at stops every N (8) columns.
pub(crate) fn unexpand(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    tabs(cx, "unexpand", args, false)
}

/// The tab stops of `expand -t` and `unexpand -t`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TabStops {
    /// Every N columns.
    Every(usize),
    /// At these columns (ascending), then as the list's last value says
    /// (none when it says nothing).
    List(Vec<usize>, Option<Beyond>),
}

/// The stops past a tab list's last column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Beyond {
    /// `/N`: at the multiples of N.
    MultiplesOf(usize),
    /// `+N`: every N columns after the last stop.
    Every(usize),
}

impl TabStops {
    /// Parses GNU's list: numbers separated by commas or blanks, the last
    /// of which may start with `/` or `+`; GNU's messages.
    fn parse(spec: &str) -> Result<TabStops, String> {
        let mut stops = Vec::new();
        let mut tail = None;
        let items: Vec<&str> = spec
            .split([',', ' ', '\t'])
            .filter(|i| !i.is_empty())
            .collect();
        for (k, item) in items.iter().enumerate() {
            let (prefix, digits) = match item.as_bytes()[0] {
                c @ (b'/' | b'+') => (Some(c), &item[1..]),
                _ => (None, *item),
            };
            if let Some(bad) = digits.find(|c: char| !c.is_ascii_digit()) {
                let at = item.len() - digits.len() + bad;
                let rest = &spec[spec.find(item).unwrap_or(0) + at..];
                return Err(format!("tab size contains invalid character(s): '{rest}'"));
            }
            // GNU takes stops up to SIZE_MAX and then writes that many
            // spaces; here a stop past a million columns is refused with
            // GNU's message for one past its limit, so that a tab never
            // asks for more memory than a script has.
            let n = digits
                .parse::<usize>()
                .ok()
                .filter(|&n| n <= 1 << 20)
                .ok_or_else(|| format!("tab stop is too large '{digits}'"))?;
            if n == 0 {
                return Err("tab size cannot be 0".to_owned());
            }
            match prefix {
                Some(c) if k + 1 < items.len() => {
                    return Err(format!(
                        "'{}' specifier only allowed with the last value",
                        c as char
                    ));
                }
                Some(b'/') => tail = Some(Beyond::MultiplesOf(n)),
                Some(_) => tail = Some(Beyond::Every(n)),
                None => {
                    if stops.last().is_some_and(|&l| l >= n) {
                        return Err("tab sizes must be ascending".to_owned());
                    }
                    stops.push(n);
                }
            }
        }
        Ok(match (stops.as_slice(), tail) {
            ([], None) => TabStops::Every(8),
            ([], Some(Beyond::MultiplesOf(n) | Beyond::Every(n))) | (&[n], None) => {
                TabStops::Every(n)
            }
            _ => TabStops::List(stops, tail),
        })
    }

    /// The first stop after column `col`; `None` past a list's end.
    fn next(&self, col: usize) -> Option<usize> {
        match self {
            TabStops::Every(w) => Some(col + w - col % w),
            TabStops::List(stops, tail) => {
                if let Some(&s) = stops.iter().find(|&&s| s > col) {
                    return Some(s);
                }
                let last = *stops.last()?;
                match *tail {
                    Some(Beyond::MultiplesOf(n)) => Some((col / n + 1) * n),
                    Some(Beyond::Every(n)) => Some(last + ((col - last) / n + 1) * n),
                    None => None,
                }
            }
        }
    }
}

/// Parses an `expand -t` list and walks its first stops; for the fuzz
/// target, which checks that a list is refused or gives stops that only
/// go forward. The number of stops before the first 10,000 columns (or
/// the list's end).
pub(crate) fn tab_stops_check(spec: &str) -> Option<usize> {
    let stops = TabStops::parse(spec).ok()?;
    let (mut col, mut n) = (0, 0);
    while let Some(next) = stops.next(col) {
        assert!(next > col, "a tab stop at or before its column");
        if next >= 10_000 {
            break;
        }
        col = next;
        n += 1;
    }
    Some(n)
}

fn tabs(cx: &mut Cx<'_>, cmd: &str, args: &[String], to_spaces: bool) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('t', "tabs", "t"),
        flag('i', "initial", "i"),
        flag('a', "all", "a"),
        flag('\0', "first-only", "first"),
    ];
    // The obsolete `-N` (and `-N,M`) is `-t N`, up to `--`.
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let args: Vec<String> = args
        .iter()
        .enumerate()
        .map(|(k, a)| match a.strip_prefix('-') {
            Some(n) if k < end && n.starts_with(|c: char| c.is_ascii_digit()) => {
                format!("--tabs={n}")
            }
            _ => a.clone(),
        })
        .collect();
    let p = match options(cx, cmd, &args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let stops = match p.value("t").map(TabStops::parse) {
        None => TabStops::Every(8),
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            cx.err(format_args!("{cmd}: {e}"));
            return 1;
        }
    };
    let initial_only = if to_spaces {
        p.has("i")
    } else {
        !(p.has("a") || p.has("t")) || p.has("first")
    };
    let failed = each_input_record(
        cx,
        &p.operands,
        plain_why(cmd),
        b'\n',
        // A byte is a column, as GNU counts them in every locale; the
        // bytes go out as they came.
        |line, out| {
            let (body, nl): (&[u8], &[u8]) = match line.strip_suffix(b"\n") {
                Some(b) => (b, b"\n"),
                None => (line, b""),
            };
            let lead = body
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            let spaces = |o: &mut Vec<u8>, n: usize| o.resize(o.len() + n, b' ');
            if to_spaces {
                let mut col = 0;
                for (i, &c) in body.iter().enumerate() {
                    if c == b'\t' && (!initial_only || i < lead) {
                        // Past a list's last stop, a tab is one space.
                        let n = stops.next(col).map_or(1, |s| s - col);
                        spaces(out, n);
                        col += n;
                    } else {
                        out.push(c);
                        col += 1;
                    }
                }
            } else {
                let upto = if initial_only { lead } else { body.len() };
                let (head, tail) = body.split_at(upto);
                let mut col = 0;
                let mut pending = 0;
                for (i, &c) in head.iter().enumerate() {
                    match c {
                        b' ' => {
                            pending += 1;
                            col += 1;
                            if stops.next(col - 1) == Some(col) {
                                // One blank before a stop is a tab only
                                // when more blanks follow it, as in GNU.
                                let more = matches!(head.get(i + 1), Some(b' ' | b'\t'));
                                out.push(if pending > 1 || more { b'\t' } else { b' ' });
                                pending = 0;
                            }
                        }
                        b'\t' => {
                            out.push(b'\t');
                            pending = 0;
                            col = stops.next(col).unwrap_or(col + 1);
                        }
                        c => {
                            spaces(out, pending);
                            pending = 0;
                            out.push(c);
                            col += 1;
                        }
                    }
                }
                spaces(out, pending);
                out.extend_from_slice(tail);
            }
            out.extend_from_slice(nl);
        },
    );
    u8::from(failed)
}

/// How `numfmt` rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    Up,
    Down,
    FromZero,
    TowardsZero,
    Nearest,
}

impl Round {
    fn apply(self, x: f64) -> f64 {
        match self {
            Round::Up => x.ceil(),
            Round::Down => x.floor(),
            Round::FromZero => {
                if x < 0.0 {
                    x.floor()
                } else {
                    x.ceil()
                }
            }
            Round::TowardsZero => x.trunc(),
            Round::Nearest => x.round(),
        }
    }
}

/// A unit system of `--from`/`--to`: `si` (1000), `iec` (1024), `iec-i`
/// (1024, `Ki`), `auto` (input only: `K` is 1000, `Ki` 1024), `none`.
fn numfmt_unit(name: &str) -> Option<(f64, &'static str)> {
    match name {
        "none" => Some((1.0, "")),
        "si" => Some((1000.0, "")),
        "iec" => Some((1024.0, "")),
        "iec-i" => Some((1024.0, "i")),
        "auto" => Some((0.0, "")),
        _ => None,
    }
}

const NUMFMT_SUFFIXES: &[u8] = b"KMGTPEZYRQ";

/// A number as `--from` reads it.
fn numfmt_parse(text: &str, from: &str) -> Result<f64, String> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(end);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("numfmt: invalid number: '{text}'"))?;
    if suffix.is_empty() {
        return Ok(v);
    }
    let letter = suffix.as_bytes()[0].to_ascii_uppercase();
    let Some(power) = NUMFMT_SUFFIXES.iter().position(|&c| c == letter) else {
        return Err(format!("numfmt: invalid suffix in input: '{text}'"));
    };
    let base = match (from, &suffix[1..]) {
        ("none", _) => {
            return Err(format!(
                "numfmt: rejecting suffix in input: '{text}' (consider using --from)"
            ));
        }
        ("si", "") | ("auto", "") => 1000.0,
        ("iec", "") | ("iec-i", "i") | ("auto", "i") => 1024.0,
        _ => return Err(format!("numfmt: invalid suffix in input: '{text}'")),
    };
    Ok(v * f64::powi(base, power as i32 + 1))
}

/// A number as `--to` writes it: GNU's human style, one decimal below 10
/// units.
fn numfmt_show(v: f64, base: f64, infix: &str, round: Round) -> String {
    if base <= 1.0 || v.abs() < base {
        let r = round.apply(v);
        return format!("{r}");
    }
    let mut x = v;
    let mut unit = 0usize;
    while x.abs() >= base && unit < NUMFMT_SUFFIXES.len() {
        x /= base;
        unit += 1;
    }
    let letter = |u: usize| NUMFMT_SUFFIXES[u - 1] as char;
    if x.abs() < 10.0 {
        let r = round.apply(x * 10.0) / 10.0;
        if r.abs() < 10.0 {
            return format!("{r:.1}{}{infix}", letter(unit));
        }
        x = r;
    }
    let r = round.apply(x);
    if r.abs() >= base && unit < NUMFMT_SUFFIXES.len() {
        return format!("1.0{}{infix}", letter(unit + 1));
    }
    format!("{r}{}{infix}", letter(unit))
}

/// `numfmt [--from=UNIT] [--to=UNIT] [--suffix=S] [--padding=N]
/// [--field=N] [-d C] [--header[=N]] [--round=METHOD] [NUMBER]...`
pub(crate) fn numfmt(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('\0', "from", "from"),
        value('\0', "to", "to"),
        value('\0', "suffix", "suffix"),
        value('\0', "padding", "padding"),
        value('\0', "field", "field"),
        value('d', "delimiter", "d"),
        super::optional("header", "header"),
        value('\0', "round", "round"),
    ];
    let p = match options(cx, "numfmt", args, SPEC, 2) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let from = p.value("from").unwrap_or("none");
    let to = p.value("to").unwrap_or("none");
    let (Some(_), Some((base, infix))) = (numfmt_unit(from), numfmt_unit(to).filter(|u| u.0 > 0.0))
    else {
        let bad = if numfmt_unit(from).is_none() {
            from
        } else {
            to
        };
        cx.err(format_args!("numfmt: invalid argument '{bad}'"));
        return 1;
    };
    let round = match p.value("round").unwrap_or("from-zero") {
        "up" => Round::Up,
        "down" => Round::Down,
        "from-zero" => Round::FromZero,
        "towards-zero" => Round::TowardsZero,
        "nearest" => Round::Nearest,
        other => {
            cx.err(format_args!(
                "numfmt: invalid argument '{other}' for '--round'"
            ));
            return 1;
        }
    };
    let padding: i64 = p.value("padding").and_then(|v| v.parse().ok()).unwrap_or(0);
    let field: usize = p
        .value("field")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let suffix = p.value("suffix").unwrap_or("");
    let convert = |text: &str| -> Result<String, String> {
        let v = numfmt_parse(
            text.strip_suffix(suffix)
                .filter(|_| !suffix.is_empty())
                .unwrap_or(text),
            from,
        )?;
        let mut shown = numfmt_show(v, base, infix, round);
        shown.push_str(suffix);
        let w = padding.unsigned_abs() as usize;
        Ok(if padding > 0 {
            format!("{shown:>w$}")
        } else if padding < 0 {
            format!("{shown:<w$}")
        } else {
            shown
        })
    };
    let mut out = String::new();
    let mut status = 0;
    if !p.operands.is_empty() {
        for op in &p.operands {
            match convert(op) {
                Ok(s) => {
                    out.push_str(&s);
                    out.push('\n');
                }
                Err(e) => {
                    cx.outs(&std::mem::take(&mut out));
                    cx.err(e);
                    status = 2;
                    break;
                }
            }
        }
        cx.outs(&out);
        return status;
    }
    let headers: usize = match (p.has("header"), p.value("header")) {
        (_, Some(n)) => n.parse().unwrap_or(1),
        (true, None) => 1,
        _ => 0,
    };
    let delim = p.value("d").and_then(|d| d.chars().next());
    let data = cx.stdin();
    for (i, line) in super::lf_lines(&crate::lossless::decode(&data)).enumerate() {
        if i < headers {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        // The fields with what separates them, so that the rest of the
        // line is kept as it was.
        let mut pieces: Vec<(String, String)> = Vec::new();
        let mut word = String::new();
        let mut sep = String::new();
        for c in line.chars() {
            let is_sep = match delim {
                Some(d) => c == d,
                None => c == ' ' || c == '\t',
            };
            // Blanks before a field's first character belong to it.
            if is_sep && (delim.is_some() || !word.trim_start().is_empty()) {
                sep.push(c);
                if delim.is_some() {
                    pieces.push((std::mem::take(&mut word), std::mem::take(&mut sep)));
                }
            } else if is_sep {
                word.push(c);
            } else {
                if !sep.is_empty() {
                    pieces.push((std::mem::take(&mut word), std::mem::take(&mut sep)));
                }
                word.push(c);
            }
        }
        pieces.push((word, sep));
        for (k, (w, s)) in pieces.iter().enumerate() {
            if k + 1 == field {
                let lead = &w[..w.len() - w.trim_start().len()];
                match convert(w.trim_start()) {
                    Ok(c) => {
                        out.push_str(lead);
                        out.push_str(&c);
                    }
                    Err(e) => {
                        cx.outs(&std::mem::take(&mut out));
                        cx.err(e);
                        return 2;
                    }
                }
            } else {
                out.push_str(w);
            }
            // GNU writes a blank separator's tabs as spaces.
            if delim.is_none() {
                out.push_str(&s.replace('\t', " "));
            } else {
                out.push_str(s);
            }
        }
        out.push('\n');
    }
    cx.outs(&out);
    status
}

/// `factor [NUMBER]...`: prime factors, smallest first (the numbers from
/// standard input when there are none).
pub(crate) fn factor(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let words: Vec<String> = if args.is_empty() {
        crate::lossless::decode(&cx.stdin())
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    } else {
        args.to_vec()
    };
    let mut out = String::new();
    let mut status = 0;
    for w in &words {
        let Ok(mut n) = w.trim_start_matches('+').parse::<u64>() else {
            cx.outs(&std::mem::take(&mut out));
            cx.err(format_args!(
                "factor: '{w}' is not a valid positive integer"
            ));
            status = 1;
            continue;
        };
        out.push_str(&format!("{n}:"));
        let mut d = 2u64;
        while d.saturating_mul(d) <= n {
            while n % d == 0 {
                out.push_str(&format!(" {d}"));
                n /= d;
            }
            d += if d == 2 { 1 } else { 2 };
        }
        if n > 1 {
            out.push_str(&format!(" {n}"));
        }
        out.push('\n');
    }
    cx.outs(&out);
    status
}

/// `tac [-s SEP] [FILE]...`
pub(crate) fn tac(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[value('s', "separator", "s"), flag('b', "before", "b")];
    let p = match options(cx, "tac", args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let sep = match p.value("s") {
        // GNU's empty separator is the C string's end, a NUL.
        Some("") => b"\0",
        Some(s) => s.as_bytes(),
        None => b"\n",
    };
    let before = p.has("b");
    let why = |op: &str, e: &FsError| match e {
        FsError::IsADirectory(_) => format!(
            "tac: {}: read error: Invalid argument",
            super::quote::quote(op, false)
        ),
        e => format!(
            "tac: failed to open {} for reading: {}",
            super::quote::quote(op, true),
            e.strerror()
        ),
    };
    // GNU's tac writes through a buffer of its own, 8 KiB at a time, so
    // a short output reaches a pipe after the errors; a long one is never
    // held whole beside the input.
    const WRITESIZE: usize = 8192;
    let mut out = Vec::with_capacity(2 * WRITESIZE);
    let failed = each_input(cx, &p.operands, why, |cx, _, d| {
        // From the end, a record at a time: no list of the records. A
        // record ends with its separator, or with `-b` begins with it.
        let mut end = d.len();
        while end > 0 && !cx.stdout_gone() {
            let start = if before {
                memchr::memmem::rfind(&d[..end], sep).unwrap_or(0)
            } else {
                memchr::memmem::rfind(&d[..end - 1], sep).map_or(0, |i| i + sep.len())
            };
            out.extend_from_slice(&d[start..end]);
            end = start;
            cx.out_blocks(&mut out, WRITESIZE);
        }
    });
    cx.out(&out);
    u8::from(failed)
}

/// How `nl` numbers the lines of one section of a logical page.
enum NlStyle {
    /// `a`: every line (with `-l N`, every Nth of a run of blank ones).
    All,
    /// `t`: lines that are not empty.
    Text,
    /// `n`: none.
    None,
    /// `pRE`: lines the basic regular expression matches.
    Matching(regex::Regex),
}

impl NlStyle {
    /// Reads `-b`, `-h` or `-f`'s argument; `None` when it is no style,
    /// `Err` when the regular expression is bad.
    fn parse(s: &str) -> Option<Result<NlStyle, ()>> {
        Some(Ok(match s {
            "a" => NlStyle::All,
            "t" => NlStyle::Text,
            "n" => NlStyle::None,
            _ => {
                let re = s.strip_prefix('p')?;
                return Some(
                    crate::pattern::translate(re, crate::pattern::Syntax::Basic)
                        .ok()
                        .and_then(|t| regex::Regex::new(&t.regex).ok())
                        .map(NlStyle::Matching)
                        .ok_or(()),
                );
            }
        }))
    }
}

/// `nl [-b STYLE] [-h STYLE] [-f STYLE] [-n ln|rn|rz] [-w N] [-s SEP]
/// [-v N] [-i N] [-l N] [-p] [-d CC] [FILE]...`, as GNU's: a line that is
/// only `\:\:\:`, `\:\:` or `\:` starts a logical page's header, body or
/// footer (printed as an empty line, numbering restarting unless `-p`).
pub(crate) fn nl(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('b', "body-numbering", "b"),
        value('h', "header-numbering", "h"),
        value('f', "footer-numbering", "f"),
        value('n', "number-format", "n"),
        value('w', "number-width", "w"),
        value('s', "number-separator", "s"),
        value('v', "starting-line-number", "v"),
        value('i', "line-increment", "i"),
        value('l', "join-blank-lines", "l"),
        value('d', "section-delimiter", "d"),
        flag('p', "no-renumber", "p"),
    ];
    let p = match options(cx, "nl", args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let usage = |cx: &mut Cx<'_>, msg: String| {
        cx.err(msg);
        cx.err("Try 'nl --help' for more information.");
        1
    };
    // Header, body and footer, in GNU's order of checking.
    let mut styles = Vec::with_capacity(3);
    for (key, default, what) in [
        ("h", "n", "header"),
        ("b", "t", "body"),
        ("f", "n", "footer"),
    ] {
        let v = p.value(key).unwrap_or(default);
        match NlStyle::parse(v) {
            Some(Ok(style)) => styles.push(style),
            Some(Err(())) => {
                cx.err("nl: Invalid regular expression");
                return 1;
            }
            None => {
                return usage(
                    cx,
                    format!("nl: invalid {what} numbering style: {}", quote(v, true)),
                );
            }
        }
    }
    let format = p.value("n").unwrap_or("rn").to_owned();
    if !matches!(format.as_str(), "ln" | "rn" | "rz") {
        return usage(
            cx,
            format!(
                "nl: invalid line numbering format: {}",
                quote(&format, true)
            ),
        );
    }
    // The numbers GNU reads with xdectoimax: a bad one names the option's
    // meaning, one out of range adds the reason.
    let number = |cx: &mut Cx<'_>, key: &str, what: &str, default: i64, min: i64| {
        let Some(v) = p.value(key) else {
            return Ok(default);
        };
        match v.trim_start().parse::<i64>() {
            Ok(n) if n >= min => Ok(n),
            Ok(_) => {
                cx.err(format_args!(
                    "nl: invalid {what}: {}: Numerical result out of range",
                    quote(v, true)
                ));
                Err(1)
            }
            Err(e) => {
                let why = match e.kind() {
                    std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                        ": Value too large for defined data type"
                    }
                    _ => "",
                };
                cx.err(format_args!("nl: invalid {what}: {}{why}", quote(v, true)));
                Err(1)
            }
        }
    };
    let limits = (|| {
        let width = number(cx, "w", "line number field width", 6, 1)?;
        let start = number(cx, "v", "starting line number", 1, i64::MIN)?;
        let incr = number(cx, "i", "line number increment", 1, i64::MIN)?;
        let join = number(cx, "l", "line number of blank lines", 1, 1)?;
        Ok::<_, u8>((width, start, incr, join))
    })();
    let (width, start, incr, join) = match limits {
        Ok(l) => l,
        Err(code) => return code,
    };
    let width = usize::try_from(width).unwrap_or(usize::MAX).min(1 << 16);
    let sep = p.value("s").unwrap_or("\t").to_owned();
    let renumber = !p.has("p");
    let delim = match p.value("d") {
        Some(d) if d.chars().count() == 1 => format!("{d}:"),
        Some(d) => d.to_owned(),
        None => "\\:".to_owned(),
    };
    let sections: [String; 3] = [delim.repeat(3), delim.repeat(2), delim.clone()];
    let blank = " ".repeat(width + sep.len());
    let mut n = start;
    let mut section = 1;
    let mut blanks = 0;
    let failed = each_input_record(cx, &p.operands, plain_why("nl"), b'\n', |line, out| {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if !delim.is_empty()
            && let Some(k) = sections.iter().position(|d| d.as_bytes() == body)
        {
            section = k;
            if renumber {
                n = start;
            }
            out.push(b'\n');
            return;
        }
        let numbered = match &styles[section] {
            NlStyle::All if join > 1 => {
                blanks += 1;
                let yes = !body.is_empty() || blanks == join;
                if yes {
                    blanks = 0;
                }
                yes
            }
            NlStyle::All => true,
            NlStyle::Text => !body.is_empty(),
            NlStyle::None => false,
            // The line goes out as it came; only `pRE` reads it as text.
            NlStyle::Matching(re) => re.is_match(&crate::lossless::decode(body)),
        };
        if numbered {
            let num = match format.as_str() {
                "ln" => format!("{n:<width$}"),
                "rz" if n < 0 => format!("-{:0w$}", n.unsigned_abs(), w = width - 1),
                "rz" => format!("{n:0width$}"),
                _ => format!("{n:>width$}"),
            };
            out.extend_from_slice(num.as_bytes());
            out.extend_from_slice(sep.as_bytes());
            n = n.wrapping_add(incr);
        } else {
            out.extend_from_slice(blank.as_bytes());
        }
        out.extend_from_slice(body);
        out.push(b'\n');
    });
    u8::from(failed)
}

/// Decimal places of a `seq` argument.
fn decimals(s: &str) -> usize {
    let (mantissa, exp) = match s.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (s, 0),
    };
    let digits = match mantissa.split_once('.') {
        Some((_, f)) => f.chars().take_while(char::is_ascii_digit).count(),
        None => 0,
    };
    // GNU's scan_arg: an exponent moves the point (`2.5e1` has none left,
    // `1e-2` has two).
    if exp < 0 {
        digits + usize::try_from(-exp).unwrap_or(0)
    } else {
        digits.saturating_sub(usize::try_from(exp).unwrap_or(0))
    }
}

/// Checks a `seq -f` format as GNU's `validate_format` does: one `%`
/// directive (besides `%%`), a floating-point conversion.
fn seq_format_check(f: &str) -> Result<(), String> {
    let b = f.as_bytes();
    let mut found = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        if found {
            return Err("has too many % directives".to_owned());
        }
        found = true;
        i += 1;
        while i < b.len() && b"-+ #0'".contains(&b[i]) {
            i += 1;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        match b.get(i) {
            None => return Err("ends in %".to_owned()),
            Some(c) if b"aAeEfFgG".contains(c) => i += 1,
            Some(_) => {
                let c = f[i..].chars().next().unwrap_or('?');
                return Err(format!("has unknown %{c} directive"));
            }
        }
    }
    if found {
        Ok(())
    } else {
        Err("has no % directive".to_owned())
    }
}

/// `seq [-s SEP] [-w] [-f FORMAT] [FIRST [INCREMENT]] LAST`
pub(crate) fn seq(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut sep = "\n".to_owned();
    let mut equal = false;
    let mut fmt: Option<String> = None;
    let mut nums = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.as_str() {
            "-s" | "--separator" => {
                sep = args.get(i).cloned().unwrap_or_default();
                i += 1;
            }
            "-f" | "--format" => {
                fmt = args.get(i).cloned();
                i += 1;
            }
            "-w" | "--equal-width" => equal = true,
            "--" => {
                nums.extend(args[i..].iter().cloned());
                break;
            }
            s if s.starts_with("-s") && s.len() > 2 => sep = s[2..].to_owned(),
            s if s.starts_with("-f") && s.len() > 2 => fmt = Some(s[2..].to_owned()),
            s => nums.push(s.to_owned()),
        }
    }
    if let Some(f) = &fmt
        && let Err(e) = seq_format_check(f)
    {
        cx.err(format_args!("seq: format '{f}' {e}"));
        return 1;
    }
    let parsed: Result<Vec<f64>, String> = nums
        .iter()
        .map(|s| {
            s.parse::<f64>()
                .map_err(|_| format!("seq: invalid floating point argument: '{s}'"))
        })
        .collect();
    let parsed = match parsed {
        Ok(v) => v,
        Err(e) => {
            cx.err(e);
            cx.err("Try 'seq --help' for more information.");
            return 1;
        }
    };
    let (first, step, last) = match parsed.as_slice() {
        [l] => (1.0, 1.0, *l),
        [f, l] => (*f, 1.0, *l),
        [f, s, l] => (*f, *s, *l),
        _ => {
            cx.err(if nums.is_empty() {
                "seq: missing operand"
            } else {
                "seq: extra operand"
            });
            cx.err("Try 'seq --help' for more information.");
            return 1;
        }
    };
    if step == 0.0 {
        cx.err(format_args!(
            "seq: invalid Zero increment value: '{}'",
            nums.get(1).map_or("0", String::as_str)
        ));
        cx.err("Try 'seq --help' for more information.");
        return 1;
    }
    let prec = nums[..nums.len().saturating_sub(1)]
        .iter()
        .chain(std::iter::once(&nums[nums.len() - 1]))
        .take(if nums.len() == 3 { 2 } else { nums.len() })
        .map(|s| decimals(s))
        .max()
        .unwrap_or(0);
    let render = |v: f64| -> String {
        match &fmt {
            Some(f) => super::printf::format_once(f, &[format!("{v}")], false)
                .map(|b| crate::lossless::decode(&b).into_owned())
                .unwrap_or_default(),
            None => format!("{v:.prec$}"),
        }
    };
    let mut out = SeqOut {
        text: String::new(),
        sep: &sep,
        any: false,
    };
    // GNU's fast path: non-negative integers (in scientific notation too)
    // and a small positive integer step count in exact integers, so that
    // `seq 1e20 1e20` prints one line.
    // A digits-only operand is read exactly; one in another notation is
    // exact when its double is a whole number below 2^53.
    let exact = |text: Option<&String>, v: f64| -> Option<u128> {
        text.and_then(|t| whole_number(t)).or_else(|| {
            (v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0).then_some(v as u128)
        })
    };
    let (first_text, step_text, last_text) = match nums.as_slice() {
        [l] => (None, None, Some(l)),
        [f, l] => (Some(f), None, Some(l)),
        [f, s, l] => (Some(f), Some(s), Some(l)),
        _ => (None, None, None),
    };
    if fmt.is_none()
        && !equal
        && sep.chars().count() == 1
        && prec == 0
        && let (Some(mut v), Some(step), Some(last)) = (
            exact(first_text, first),
            exact(step_text, step).filter(|s| (1..=200).contains(s)),
            exact(last_text, last),
        )
    {
        while v <= last && !cx.stdout_gone() {
            out.push(cx, &v.to_string());
            v += step;
        }
        out.finish(cx);
        return 0;
    }
    // -w pads to the wider of the two ends.
    let width = if equal {
        render(first).len().max(render(last).len())
    } else {
        0
    };
    let mut previous = None;
    let mut k: f64 = 0.0;
    while !cx.stdout_gone() {
        let v = first + k * step;
        if (step > 0.0 && v > last + 1e-10) || (step < 0.0 && v < last - 1e-10) {
            break;
        }
        // A step too small to move a value this large would repeat it for
        // ever; the sequence ends there.
        if previous == Some(v) {
            break;
        }
        previous = Some(v);
        let mut item = render(v);
        if equal {
            item = match item.strip_prefix('-') {
                Some(rest) => format!("-{rest:0>w$}", w = width.saturating_sub(1)),
                None => format!("{item:0>width$}"),
            };
        }
        out.push(cx, &item);
        k += 1.0;
    }
    out.finish(cx);
    0
}

/// The value of `DIGITS[.DIGITS][e[+]EXP]` when it is a whole number (as
/// `1e20` or `2.5e1`), read exactly.
fn whole_number(text: &str) -> Option<u128> {
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.strip_prefix('+').unwrap_or(e).parse::<usize>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    if exp > 38 {
        return None;
    }
    let shifted = frac.len().min(exp);
    if frac[shifted..].bytes().any(|b| b != b'0') {
        return None;
    }
    let digits = format!("{int}{}{}", &frac[..shifted], "0".repeat(exp - shifted));
    digits.parse().ok()
}

/// seq's output, written as it is made: a long sequence is not held whole.
struct SeqOut<'s> {
    text: String,
    sep: &'s str,
    any: bool,
}

impl SeqOut<'_> {
    fn push(&mut self, cx: &mut Cx<'_>, item: &str) {
        if self.any {
            self.text.push_str(self.sep);
        }
        self.any = true;
        self.text.push_str(item);
        if self.text.len() >= 1 << 16 {
            cx.outs(&self.text);
            self.text.clear();
        }
    }

    fn finish(mut self, cx: &mut Cx<'_>) {
        if self.any {
            self.text.push('\n');
            cx.outs(&self.text);
        }
    }
}

/// `paste [-d LIST] [-s] [FILE]...`
pub(crate) fn paste(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('d', "delimiters", "d"),
        flag('s', "serial", "s"),
        flag('z', "zero-terminated", "z"),
    ];
    let p = match options(cx, "paste", args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    // The lines are bytes, as they came (a `\r`, a Latin-1 byte), and so
    // are the delimiters: GNU takes the list a byte at a time, in every
    // locale.
    let eol = if p.has("z") { 0 } else { b'\n' };
    let delims: Vec<Vec<u8>> = {
        let raw = p.value("d").unwrap_or("\t");
        let (b, _) = super::echo::unescape(raw, super::echo::Dialect::Format, true);
        if raw.is_empty() || b.is_empty() || raw == "\\0" {
            vec![Vec::new()]
        } else {
            b.iter().map(|&x| vec![x]).collect()
        }
    };
    let ops = if p.operands.is_empty() {
        vec!["-".to_owned()]
    } else {
        p.operands.clone()
    };
    let mut stdin = None;
    let mut read: Vec<Option<Vec<u8>>> = Vec::with_capacity(ops.len());
    let mut failed = false;
    for op in &ops {
        if op == "-" {
            if stdin.is_none() {
                stdin = Some(cx.stdin());
            }
            read.push(None);
            continue;
        }
        match read_one(cx, op) {
            Ok(d) => read.push(Some(d)),
            Err(e) => {
                cx.err(format_args!("paste: {op}: {}", e.strerror()));
                failed = true;
                read.push(None);
            }
        }
    }
    if failed {
        return 1;
    }
    let mut files: Vec<Vec<&[u8]>> = read
        .iter()
        .map(|d| {
            d.as_deref()
                .map_or_else(Vec::new, |d| crate::search::records(d, eol).collect())
        })
        .collect();
    // Standard input named several times is read in turns, line by line.
    if let Some(d) = &stdin {
        let users: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] == "-").collect();
        for (i, l) in crate::search::records(d, eol).enumerate() {
            files[users[i % users.len()]].push(l);
        }
    }
    const BLOCK: usize = 64 << 10;
    let mut out = Vec::new();
    let d = |i: usize| delims[i % delims.len()].as_slice();
    if p.has("s") {
        for f in &files {
            for (i, l) in f.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(d(i - 1));
                }
                out.extend_from_slice(l);
                cx.out_blocks(&mut out, BLOCK);
            }
            out.push(eol);
        }
    } else {
        let rows = files.iter().map(Vec::len).max().unwrap_or(0);
        for r in 0..rows {
            for (i, f) in files.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(d(i - 1));
                }
                if let Some(l) = f.get(r) {
                    out.extend_from_slice(l);
                }
            }
            out.push(eol);
            cx.out_blocks(&mut out, BLOCK);
        }
    }
    cx.out(&out);
    0
}

/// Whether `a` is a group of fold's short options that ends in `w`, whose
/// value is then the next word (`-w`, `-bsw`).
fn is_short_group_ending_in_w(a: &str) -> bool {
    a.strip_prefix('-')
        .and_then(|g| g.strip_suffix('w'))
        .is_some_and(|g| g.bytes().all(|b| b == b'b' || b == b's'))
}

/// `fold [-w N] [-s] [-b] [FILE]...`
pub(crate) fn fold(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    // The digits of a group of short options are the width (GNU fold's
    // obsolete `-N`, also inside `-b16`).
    let mut args: Vec<String> = args.to_vec();
    // The word after `-w` (or `-sw`, `--width`) is its value, even `-1`.
    let mut is_value = false;
    for a in args.iter_mut().take_while(|a| *a != "--") {
        if std::mem::replace(
            &mut is_value,
            a == "--width" || is_short_group_ending_in_w(a),
        ) {
            continue;
        }
        let Some(group) = a.strip_prefix('-') else {
            continue;
        };
        if group.is_empty()
            || !group.bytes().any(|b| b.is_ascii_digit())
            || !group
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'b' || b == b's')
        {
            continue;
        }
        let flags: String = group.chars().filter(|c| !c.is_ascii_digit()).collect();
        let digits: String = group.chars().filter(char::is_ascii_digit).collect();
        *a = format!("-{flags}w{digits}");
    }
    const SPEC: &[super::Spec] = &[
        value('w', "width", "w"),
        flag('s', "spaces", "s"),
        flag('b', "bytes", "b"),
    ];
    let p = match options(cx, "fold", &args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let width: usize = match p.value("w").map(str::parse::<usize>) {
        None => 80,
        Some(Ok(w)) if w > 0 => w,
        Some(r) => {
            // Zero parses but is out of range, as GNU's xdectoumax says.
            let range = if r.is_ok() {
                ": Numerical result out of range"
            } else {
                ""
            };
            cx.err(format_args!(
                "fold: invalid number of columns: '{}'{range}",
                p.value("w").unwrap_or("")
            ));
            return 1;
        }
    };
    let spaces = p.has("s");
    let bytes = p.has("b");
    // GNU fold's `adjust_column`: bytes are columns (fold knows no
    // multibyte characters); a tab goes to the next multiple of 8, a
    // backspace back one, a carriage return to 0.
    let adjust = |col: usize, c: u8| -> usize {
        match c {
            _ if bytes => col + 1,
            b'\x08' => col.saturating_sub(1),
            b'\r' => 0,
            b'\t' => col + 8 - col % 8,
            _ => col + 1,
        }
    };
    // `fold_file`, byte by byte, a line at a time: a line ends where a
    // newline does, or, the last one of a file, where the file does.
    let mut line: Vec<u8> = Vec::new();
    let mut col = 0usize;
    let failed = each_input_record(cx, &p.operands, plain_why("fold"), b'\n', |record, out| {
        for &c in record {
            if c == b'\n' {
                out.extend_from_slice(&line);
                out.push(b'\n');
                line.clear();
                col = 0;
                continue;
            }
            loop {
                col = adjust(col, c);
                if col <= width {
                    line.push(c);
                    break;
                }
                if spaces && let Some(k) = line.iter().rposition(|b| *b == b' ' || *b == b'\t') {
                    out.extend_from_slice(&line[..=k]);
                    out.push(b'\n');
                    line.drain(..=k);
                    col = line.iter().fold(0, |col, &b| adjust(col, b));
                    continue;
                }
                if line.is_empty() {
                    line.push(c);
                    break;
                }
                out.extend_from_slice(&line);
                out.push(b'\n');
                line.clear();
                col = 0;
            }
        }
        if record.last() != Some(&b'\n') {
            out.append(&mut line);
            col = 0;
        }
    });
    u8::from(failed)
}

/// A value of `expr`: integers where they parse.
/// GNU expr computes with GMP; this one with 128-bit integers (38
/// digits), and says so beyond them instead of wrapping.
fn too_large() -> (String, u8) {
    ("expr: integer result too large".to_owned(), 2)
}

#[derive(Debug, Clone)]
enum EVal {
    Int(i128),
    Str(String),
}

impl EVal {
    fn text(&self) -> String {
        match self {
            EVal::Int(n) => n.to_string(),
            EVal::Str(s) => s.clone(),
        }
    }

    fn int(&self) -> Option<i128> {
        match self {
            EVal::Int(n) => Some(*n),
            EVal::Str(s) => s.trim().parse().ok(),
        }
    }

    fn null(&self) -> bool {
        match self {
            EVal::Int(n) => *n == 0,
            EVal::Str(s) => s.is_empty() || s.parse::<i128>() == Ok(0),
        }
    }
}

struct ExprP<'a> {
    a: &'a [String],
    i: usize,
}

type ERes = Result<EVal, (String, u8)>;

impl ExprP<'_> {
    fn peek(&self) -> Option<&str> {
        self.a.get(self.i).map(String::as_str)
    }

    fn or(&mut self) -> ERes {
        let mut l = self.and()?;
        while self.peek() == Some("|") {
            self.i += 1;
            let r = self.and()?;
            l = if !l.null() {
                l
            } else if !r.null() {
                r
            } else {
                EVal::Int(0)
            };
        }
        Ok(l)
    }

    fn and(&mut self) -> ERes {
        let mut l = self.cmp()?;
        while self.peek() == Some("&") {
            self.i += 1;
            let r = self.cmp()?;
            l = if l.null() || r.null() {
                EVal::Int(0)
            } else {
                l
            };
        }
        Ok(l)
    }

    fn cmp(&mut self) -> ERes {
        let mut l = self.add()?;
        while let Some(op) = self
            .peek()
            .filter(|o| matches!(*o, "<" | "<=" | "=" | "==" | "!=" | ">=" | ">"))
        {
            let op = op.to_owned();
            self.i += 1;
            let r = self.add()?;
            let ord = match (l.int(), r.int()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => l.text().cmp(&r.text()),
            };
            use std::cmp::Ordering::*;
            let v = match op.as_str() {
                "<" => ord == Less,
                "<=" => ord != Greater,
                "=" | "==" => ord == Equal,
                "!=" => ord != Equal,
                ">=" => ord != Less,
                _ => ord == Greater,
            };
            l = EVal::Int(i128::from(v));
        }
        Ok(l)
    }

    fn add(&mut self) -> ERes {
        let mut l = self.mul()?;
        while let Some(op) = self.peek().filter(|o| matches!(*o, "+" | "-")) {
            let op = op.to_owned();
            self.i += 1;
            let r = self.mul()?;
            let (Some(a), Some(b)) = (l.int(), r.int()) else {
                return Err(("expr: non-integer argument".to_owned(), 2));
            };
            let v = if op == "+" {
                a.checked_add(b)
            } else {
                a.checked_sub(b)
            };
            l = EVal::Int(v.ok_or_else(too_large)?);
        }
        Ok(l)
    }

    fn mul(&mut self) -> ERes {
        let mut l = self.matching()?;
        while let Some(op) = self.peek().filter(|o| matches!(*o, "*" | "/" | "%")) {
            let op = op.to_owned();
            self.i += 1;
            let r = self.matching()?;
            let (Some(a), Some(b)) = (l.int(), r.int()) else {
                return Err(("expr: non-integer argument".to_owned(), 2));
            };
            if op != "*" && b == 0 {
                return Err(("expr: division by zero".to_owned(), 2));
            }
            let v = match op.as_str() {
                "*" => a.checked_mul(b),
                "/" => a.checked_div(b),
                _ => a.checked_rem(b),
            };
            l = EVal::Int(v.ok_or_else(too_large)?);
        }
        Ok(l)
    }

    fn matching(&mut self) -> ERes {
        let l = self.primary()?;
        if self.peek() == Some(":") {
            self.i += 1;
            let r = self.primary()?;
            return regex_match(&l.text(), &r.text());
        }
        Ok(l)
    }

    fn primary(&mut self) -> ERes {
        let Some(t) = self.peek().map(str::to_owned) else {
            return Err((
                "expr: syntax error: missing argument after '".to_owned()
                    + self.a.last().map_or("", String::as_str)
                    + "'",
                2,
            ));
        };
        self.i += 1;
        match t.as_str() {
            "(" => {
                let v = self.or()?;
                if self.peek() != Some(")") {
                    return Err(("expr: syntax error: expecting ')'".to_owned(), 2));
                }
                self.i += 1;
                Ok(v)
            }
            "length" => {
                let v = self.primary()?;
                Ok(EVal::Int(v.text().chars().count() as i128))
            }
            "substr" => {
                let s = self.primary()?.text();
                let pos = self.primary()?.int().unwrap_or(0);
                let len = self.primary()?.int().unwrap_or(0);
                if pos < 1 || len < 1 {
                    return Ok(EVal::Str(String::new()));
                }
                Ok(EVal::Str(
                    s.chars()
                        .skip(pos as usize - 1)
                        .take(len as usize)
                        .collect(),
                ))
            }
            "index" => {
                let s = self.primary()?.text();
                let chars = self.primary()?.text();
                let k = s
                    .chars()
                    .position(|c| chars.contains(c))
                    .map_or(0, |k| k + 1);
                Ok(EVal::Int(k as i128))
            }
            "match" => {
                let s = self.primary()?.text();
                let re = self.primary()?.text();
                regex_match(&s, &re)
            }
            "+" => Ok(EVal::Str(
                self.a
                    .get(self.i)
                    .cloned()
                    .inspect(|_| self.i += 1)
                    .unwrap_or_default(),
            )),
            _ => Ok(match t.parse::<i128>() {
                Ok(n) if !t.starts_with('+') => EVal::Int(n),
                _ => EVal::Str(t),
            }),
        }
    }
}

/// `expr STRING : REGEX`: anchored BRE; the first group, or the length.
fn regex_match(s: &str, re: &str) -> ERes {
    let t = crate::pattern::translate(re, crate::pattern::Syntax::Basic)
        .map_err(|e| (format!("expr: {e}"), 2))?;
    let rx = regex::Regex::new(&format!("^(?:{})", t.regex))
        .map_err(|_| ("expr: invalid regular expression".to_owned(), 2))?;
    let groups = rx.captures_len();
    let rx = crate::longest::PosixRegex::new(rx, false, false);
    let group =
        |c: &crate::longest::Groups, g: usize| c.get(g).cloned().flatten().map_or("", |r| &s[r]);
    Ok(match rx.captures_at(s, 0) {
        Some(c) if groups > 1 => EVal::Str(group(&c, 1).to_owned()),
        Some(c) => EVal::Int(group(&c, 0).chars().count() as i128),
        None if groups > 1 => EVal::Str(String::new()),
        None => EVal::Int(0),
    })
}

/// `expr EXPRESSION`
pub(crate) fn expr(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    if args.is_empty() {
        cx.err("expr: missing operand");
        return 2;
    }
    let mut p = ExprP { a: args, i: 0 };
    match p.or() {
        Ok(_) if p.i < args.len() => {
            cx.err(format_args!(
                "expr: syntax error: unexpected argument '{}'",
                args[p.i]
            ));
            2
        }
        Ok(v) => {
            cx.outs(&format!("{}\n", v.text()));
            u8::from(v.null())
        }
        Err((m, c)) => {
            cx.err(m);
            c
        }
    }
}

/// `tee [-a] [FILE]...`: to standard output; a file would be written,
/// so each fails as on a read-only filesystem (`/dev/null`,
/// `/dev/stdout`, `/dev/stderr` excepted).
pub(crate) fn tee(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let data = cx.stdin();
    let mut status = 0;
    let mut copies = 1;
    for a in args {
        match a.as_str() {
            "-a" | "--append" | "-i" | "--ignore-interrupts" | "-p" => {}
            "/dev/null" => {}
            "/dev/stdout" | "-" => copies += 1,
            "/dev/stderr" => {
                let _ = cx.err.write_all(&data);
            }
            f => {
                cx.err(format_args!("tee: {f}: Read-only file system"));
                status = 1;
            }
        }
    }
    for _ in 0..copies {
        cx.out(&data);
    }
    status
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// `base64 [-d] [-i] [-w COLS] [FILE]`
pub(crate) fn base64(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    radix(cx, "base64", args, B64, 6)
}

/// `base32 [-d] [-i] [-w COLS] [FILE]`: RFC 4648's base32, as GNU's.
pub(crate) fn base32(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    radix(cx, "base32", args, B32, 5)
}

/// `base64` and `base32`: the alphabet's `bits` a character.
fn radix(cx: &mut Cx<'_>, name: &str, args: &[String], alphabet: &'static [u8], bits: u32) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('d', "decode", "d"),
        flag('i', "ignore-garbage", "i"),
        value('w', "wrap", "w"),
    ];
    let p = match options(cx, name, args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    if let Some(extra) = p.operands.get(1) {
        cx.err(format_args!(
            "{name}: extra operand {}",
            super::quote::quote(extra, true)
        ));
        cx.err(format_args!("Try '{name} --help' for more information."));
        return 1;
    }
    let op = p.operands.first().map_or("-", String::as_str);
    let wrap: usize = p.value("w").and_then(|w| w.parse().ok()).unwrap_or(76);
    let mut coder = Radix {
        alphabet,
        bits,
        decode: p.has("d"),
        ignore_garbage: p.has("i"),
        wrap,
        ..Radix::default()
    };
    // A piece at a time: a large document is never held whole.
    let mut out = Vec::new();
    let streamed = cx.stream_file_operand(op, |cx, piece| {
        coder.feed(piece, &mut out);
        cx.out_stdio(&mut out);
    });
    if let Err(e) = streamed {
        cx.out(&out);
        cx.err(format_args!(
            "{name}: {}: {}",
            super::quote::quote(op, false),
            e.strerror()
        ));
        return 1;
    }
    if coder.invalid {
        cx.out(&out);
        cx.err(format_args!("{name}: invalid input"));
        return 1;
    }
    coder.finish(&mut out);
    cx.out(&out);
    0
}

/// `base64`'s (or `base32`'s) encoder or decoder, fed a piece at a time.
#[derive(Default)]
struct Radix {
    /// The characters, and how many bits each stands for (6 or 5).
    alphabet: &'static [u8],
    bits: u32,
    decode: bool,
    ignore_garbage: bool,
    /// Columns per line of the encoding (0: one line).
    wrap: usize,
    /// Encoding: the bytes of a group of three not complete yet.
    pending: Vec<u8>,
    /// Encoding: characters on the current line, and whether any was
    /// written.
    col: usize,
    any: bool,
    /// Decoding: the bits not yet a whole byte.
    acc: u32,
    held: u32,
    /// Decoding met a character that is not base64: it stops there.
    invalid: bool,
}

impl Radix {
    fn feed(&mut self, piece: &[u8], out: &mut Vec<u8>) {
        if self.invalid {
            return;
        }
        if self.decode {
            for &b in piece {
                let v = match self.alphabet.iter().position(|&c| c == b) {
                    Some(v) => v as u32,
                    None if b == b'=' || b.is_ascii_whitespace() => continue,
                    None if self.ignore_garbage => continue,
                    None => {
                        self.invalid = true;
                        return;
                    }
                };
                self.acc = (self.acc << self.bits) | v;
                self.held += self.bits;
                if self.held >= 8 {
                    self.held -= 8;
                    out.push((self.acc >> self.held) as u8);
                    self.acc &= (1 << self.held) - 1;
                }
            }
            return;
        }
        let size = self.group();
        let mut rest = piece;
        if !self.pending.is_empty() {
            let take = (size - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() < size {
                return;
            }
            let group = std::mem::take(&mut self.pending);
            self.encode(&group, out);
        }
        let whole = rest.len() / size * size;
        for group in rest[..whole].chunks(size) {
            self.encode(group, out);
        }
        self.pending.extend_from_slice(&rest[whole..]);
    }

    /// Bytes a group: three for base64's four characters, five for
    /// base32's eight.
    fn group(&self) -> usize {
        if self.bits == 6 { 3 } else { 5 }
    }

    /// Encodes one group (fewer bytes only at the end, the rest of its
    /// characters then `=`).
    fn encode(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let size = self.group();
        let n = (0..size).fold(0u64, |n, i| {
            (n << 8) | u64::from(*chunk.get(i).unwrap_or(&0))
        });
        let bits = self.bits as usize;
        let chars = size * 8 / bits;
        let used = (chunk.len() * 8).div_ceil(bits);
        for k in 0..chars {
            let c = if k < used {
                self.alphabet[((n >> (size * 8 - bits * (k + 1))) & ((1 << bits) - 1)) as usize]
            } else {
                b'='
            };
            if self.wrap > 0 && self.col == self.wrap {
                out.push(b'\n');
                self.col = 0;
            }
            out.push(c);
            self.col += 1;
            self.any = true;
        }
    }

    /// The last group and the last line's end.
    fn finish(&mut self, out: &mut Vec<u8>) {
        if self.decode {
            return;
        }
        if !self.pending.is_empty() {
            let group = std::mem::take(&mut self.pending);
            self.encode(&group, out);
        }
        if self.wrap > 0 && self.any {
            out.push(b'\n');
        }
    }
}

/// `realpath [-e] [-m] [-s] PATH...` and `readlink -f|-e|-m PATH...`: the
/// absolute path as the document filesystem resolves it.
fn canonical(cx: &mut Cx<'_>, cmd: &str, args: &[String], must_exist: bool, quiet: bool) -> u8 {
    canonical_from(cx, cmd, args, must_exist, quiet, &|p: &str| p.to_owned())
}

/// `canonical`, each answer passed through `show` (`realpath`'s
/// `--relative-to`).
fn canonical_from(
    cx: &mut Cx<'_>,
    cmd: &str,
    args: &[String],
    must_exist: bool,
    quiet: bool,
    show: &dyn Fn(&str) -> String,
) -> u8 {
    let mut status = 0;
    let ops: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-') || a.len() == 1)
        .collect();
    if ops.is_empty() {
        cx.err(format_args!("{cmd}: missing operand"));
        return 1;
    }
    for op in ops {
        match cx.fs.metadata(op) {
            Ok(m) => cx.outs(&format!("{}\n", show(&m.path))),
            Err(e) => {
                // A missing last component is fine unless it must exist.
                let parent = op
                    .rsplit_once('/')
                    .map_or(".", |(d, _)| if d.is_empty() { "/" } else { d });
                let name = op.rsplit('/').next().unwrap_or(op);
                match (must_exist, cx.fs.metadata(parent)) {
                    (false, Ok(pm)) if pm.is_dir() && matches!(e, FsError::NotFound(_)) => {
                        let p = if pm.path == "/" {
                            format!("/{name}")
                        } else {
                            format!("{}/{name}", pm.path)
                        };
                        cx.outs(&format!("{}\n", show(&p)));
                    }
                    _ => {
                        if !quiet {
                            cx.err(format_args!("{cmd}: {op}: {}", e.strerror()));
                        }
                        status = 1;
                    }
                }
            }
        }
    }
    status
}

/// `realpath [-e] [-m] [-q] [--relative-to=DIR] [--relative-base=DIR]`.
pub(crate) fn realpath(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let must = args
        .iter()
        .any(|a| a == "-e" || a == "--canonicalize-existing");
    let quiet = args.iter().any(|a| a == "-q" || a == "--quiet");
    let mut bases = [None, None];
    for (k, opt) in ["--relative-to=", "--relative-base="].iter().enumerate() {
        if let Some(dir) = args.iter().find_map(|a| a.strip_prefix(opt)) {
            // As GNU does, the directory need not exist (`-m`).
            bases[k] = Some(match cx.fs.metadata(dir) {
                Ok(m) => m.path,
                Err(_) => lexical(&cx.fs.cwd(), dir),
            });
        }
    }
    let [to, base] = bases;
    let show = move |p: &str| {
        // GNU: relative to `--relative-to` (or to `--relative-base` alone)
        // only when the path is under `--relative-base`.
        let under = base.as_deref().is_none_or(|b| within(p, b));
        match to.as_deref().or(base.as_deref()) {
            Some(dir)
                if under && (to.is_none() || base.as_deref().is_none_or(|b| within(dir, b))) =>
            {
                relative_path(p, dir)
            }
            _ => p.to_owned(),
        }
    };
    canonical_from(cx, "realpath", args, must, quiet, &show)
}

/// `path` made absolute from `cwd` with `.` and `..` taken away by name.
fn lexical(cwd: &str, path: &str) -> String {
    let full = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{cwd}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for c in full.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Whether absolute `path` is `dir` or below it.
fn within(path: &str, dir: &str) -> bool {
    dir == "/" || path == dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// `path` relative to the directory `dir`, both absolute and canonical.
fn relative_path(path: &str, dir: &str) -> String {
    let parts = |s: &str| {
        s.split('/')
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let (p, d) = (parts(path), parts(dir));
    let common = p.iter().zip(&d).take_while(|(a, b)| a == b).count();
    let mut out: Vec<&str> = vec![".."; d.len() - common];
    out.extend(p[common..].iter().map(String::as_str));
    if out.is_empty() {
        ".".to_owned()
    } else {
        out.join("/")
    }
}

/// `readlink [-f|-e|-m] PATH...`: documents are not links, so without a
/// canonicalising flag it prints nothing and fails, as for a file.
pub(crate) fn readlink(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    // The short options' letters, then each long option's name after `-`.
    let flags: String = args
        .iter()
        .filter(|a| a.starts_with('-') && a.len() > 1 && !a.starts_with("--"))
        .map(|a| a[1..].to_owned())
        .chain(
            args.iter()
                .filter_map(|a| a.strip_prefix("--"))
                .map(|l| format!("-{l}")),
        )
        .collect();
    let short = |c: char| flags.split('-').next().is_some_and(|s| s.contains(c));
    // `-m`: no component need exist; `..` is taken away by name, as
    // GNU does where there are no links.
    if short('m') || flags.contains("-canonicalize-missing") {
        let ops: Vec<&String> = args
            .iter()
            .filter(|a| !a.starts_with('-') || a.len() == 1)
            .collect();
        if ops.is_empty() {
            cx.err("readlink: missing operand");
            cx.err("Try 'readlink --help' for more information.");
            return 1;
        }
        let newline = !(ops.len() == 1 && (short('n') || flags.contains("-no-newline")));
        let cwd = cx.fs.cwd();
        for op in ops {
            let path = match cx.fs.metadata(op) {
                Ok(m) => m.path,
                Err(_) => lexical(&cwd, op),
            };
            cx.outs(&path);
            if newline {
                cx.outs("\n");
            }
        }
        return 0;
    }
    let existing = short('e') || flags.contains("-canonicalize-existing");
    if short('f') || existing || flags.contains("-canonicalize") {
        return canonical(cx, "readlink", args, existing, true);
    }
    1
}

/// `column -t [-s SEPS] [-o SEP] [FILE]...`; without `-t`, entries
/// filled into columns for an 80-column terminal, as GNU column does.
pub(crate) fn column(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('t', "table", "t"),
        value('s', "separator", "s"),
        value('o', "output-separator", "o"),
        value('c', "output-width", "c"),
        flag('x', "fillrows", "x"),
        value('N', "table-columns", "N"),
        value('R', "table-right", "R"),
        value('H', "table-hide", "H"),
        value('O', "table-order", "O"),
        value('l', "table-columns-limit", "l"),
        value('n', "table-name", "n"),
        flag('d', "table-noheadings", "d"),
        flag('J', "json", "J"),
    ];
    let p = match options(cx, "column", args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    // util-linux reads `-c` as an unsigned number before anything else.
    let width: usize = match p.value("c") {
        None => 80,
        Some(v) => match v.trim_start().parse::<i64>() {
            Ok(n) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
            r => {
                let range = match r {
                    Ok(_) => true,
                    Err(e) => matches!(
                        e.kind(),
                        std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow
                    ),
                };
                let range = if range {
                    ": Numerical result out of range"
                } else {
                    ""
                };
                cx.err(format_args!(
                    "column: invalid columns argument: '{v}'{range}"
                ));
                return 1;
            }
        },
    };
    let (ins, failed) = inputs(cx, "column", &p.operands);
    // util-linux shows a byte outside valid UTF-8 as `\xHH`, four columns.
    let text: String = ins
        .iter()
        .flat_map(|(_, d)| d.utf8_chunks())
        .flat_map(|chunk| {
            let bad = chunk.invalid().iter().map(|b| format!("\\x{b:02x}"));
            std::iter::once(chunk.valid().to_owned()).chain(bad)
        })
        .collect();
    // util-linux reads each line as a wide string: a NUL ends it there.
    let lines: Vec<&str> = super::lf_lines(&text)
        .map(|l| l.split('\0').next().unwrap_or_default())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut out = String::new();
    // No input, no table: not even its header.
    if (p.has("t") || p.has("J")) && !lines.is_empty() {
        let seps: Vec<char> = p
            .value("s")
            .map_or(vec![' ', '\t'], |s| s.chars().collect());
        let osep = p.value("o").unwrap_or("  ").to_owned();
        let whitespace = p.value("s").is_none();
        // `-l N`: at most N columns, the last keeping the rest of the line.
        let limit = match p.value("l").map(str::parse::<usize>) {
            None => usize::MAX,
            Some(Ok(n)) if n > 0 => n,
            Some(_) => {
                cx.err(format_args!(
                    "column: invalid columns limit argument: '{}'",
                    p.value("l").unwrap_or_default()
                ));
                return 1;
            }
        };
        let rows: Vec<Vec<&str>> = lines
            .iter()
            .map(|l| table_cells(l, &seps, whitespace, limit))
            .collect();
        let names: Vec<&str> = p.value("N").map_or(Vec::new(), |n| n.split(',').collect());
        let ncols = rows
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(names.len());
        // A column named in -R, -H or -O: by its name or its number.
        let chosen = |id: &str| -> Vec<usize> {
            p.value(id).map_or(Vec::new(), |list| {
                list.split(',')
                    .filter_map(|w| {
                        names
                            .iter()
                            .position(|n| *n == w)
                            .or_else(|| w.parse::<usize>().ok().filter(|&k| k >= 1).map(|k| k - 1))
                    })
                    .collect()
            })
        };
        let (right, hidden) = (chosen("R"), chosen("H"));
        let mut order = chosen("O");
        order.retain(|&k| k < ncols);
        for k in 0..ncols {
            if !order.contains(&k) {
                order.push(k);
            }
        }
        order.retain(|k| !hidden.contains(k));
        if p.has("J") {
            if names.is_empty() {
                cx.err("column: option --table-columns required for --json");
                return 1;
            }
            if ncols > names.len() {
                cx.err(format_args!(
                    "column: line 1: for JSON the name of the column {} is required",
                    names.len() + 1
                ));
                return 1;
            }
            out.push_str(&column_json(
                p.value("n").unwrap_or("table"),
                &names,
                &order,
                &rows,
            ));
        } else {
            let header: Vec<&str> = if names.is_empty() || p.has("d") {
                Vec::new()
            } else {
                names.clone()
            };
            let table: Vec<&Vec<&str>> = std::iter::once(&header)
                .filter(|h| !h.is_empty())
                .chain(rows.iter())
                .collect();
            let mut widths = vec![0usize; ncols];
            for r in &table {
                for (i, f) in r.iter().enumerate() {
                    widths[i] = widths[i].max(f.chars().count());
                }
            }
            // util-linux's table: a short row's missing cells are empty,
            // and every column but the last is padded and followed by the
            // separator, so a short row ends in spaces; a right-aligned
            // column is padded before its text, the last one too.
            for r in table {
                let mut line = String::new();
                for (at, &i) in order.iter().enumerate() {
                    let f = r.get(i).copied().unwrap_or("");
                    let pad = " ".repeat(widths[i] - f.chars().count());
                    let last = at + 1 == order.len();
                    if right.contains(&i) {
                        line.push_str(&pad);
                        line.push_str(f);
                    } else {
                        line.push_str(f);
                        if !last {
                            line.push_str(&pad);
                        }
                    }
                    if !last {
                        line.push_str(&osep);
                    }
                }
                out.push_str(&line);
                out.push('\n');
            }
        }
    } else {
        let maxlen = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let colw = (maxlen / 8 + 1) * 8;
        let cols = (width / colw).max(1);
        let rows = lines.len().div_ceil(cols);
        for r in 0..rows {
            let mut line = String::new();
            for c in 0..cols {
                let idx = if p.has("x") {
                    r * cols + c
                } else {
                    c * rows + r
                };
                let Some(item) = lines.get(idx) else { continue };
                let next_exists = if p.has("x") {
                    c + 1 < cols && lines.get(idx + 1).is_some()
                } else {
                    lines.get(idx + rows).is_some()
                };
                line.push_str(item);
                if next_exists {
                    let n = item.chars().count();
                    let pad = colw - n;
                    line.push_str(&"\t".repeat(pad.div_ceil(8)));
                }
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    cx.outs(&out);
    u8::from(failed)
}

/// One line's cells for `column -t`: split at any of `seps` (runs of
/// blanks count once when no separator was given), the `limit`th cell
/// keeping the rest of the line as it is.
fn table_cells<'l>(line: &'l str, seps: &[char], whitespace: bool, limit: usize) -> Vec<&'l str> {
    let mut cells = Vec::new();
    let mut rest = line;
    loop {
        if whitespace {
            rest = rest.trim_start_matches(|c| seps.contains(&c));
            if rest.is_empty() {
                break;
            }
        }
        if cells.len() + 1 == limit {
            cells.push(rest);
            break;
        }
        match rest.find(|c| seps.contains(&c)) {
            Some(k) => {
                cells.push(&rest[..k]);
                rest = &rest[k + rest[k..].chars().next().map_or(1, char::len_utf8)..];
            }
            None => {
                cells.push(rest);
                break;
            }
        }
    }
    cells
}

/// `column -J`: the table as util-linux writes it, each row an object of
/// its cells by the columns' names in lower case (a missing cell `null`),
/// strings escaped as its `ul_jsonwrt` escapes them (tree's differ).
fn column_json(table: &str, names: &[&str], order: &[usize], rows: &[Vec<&str>]) -> String {
    let quote = |s: &str| {
        let mut q = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                '\n' => q.push_str("\\n"),
                '\t' => q.push_str("\\t"),
                '\r' => q.push_str("\\r"),
                '\u{8}' => q.push_str("\\b"),
                '\u{c}' => q.push_str("\\f"),
                c if (c as u32) < 0x20 => q.push_str(&format!("\\u{:04x}", c as u32)),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    };
    let mut out = format!("{{\n   {}: [\n", quote(table));
    for (k, r) in rows.iter().enumerate() {
        out.push_str(if k == 0 { "      {\n" } else { "},{\n" });
        let cells: Vec<String> = order
            .iter()
            .map(|&i| {
                let value = r.get(i).map_or_else(|| "null".to_owned(), |v| quote(v));
                format!("         {}: {value}", quote(&names[i].to_lowercase()))
            })
            .collect();
        out.push_str(&cells.join(",\n"));
        out.push_str("\n      ");
    }
    if !rows.is_empty() {
        out.push_str("}\n");
    }
    out.push_str("   ]\n}\n");
    out
}

/// How `comm` and `join` check their input's order (`--check-order` as
/// `c`, `--nocheck-order` as `n`): `Some(false)`, GNU's default, reports a
/// line that sorts before the one above it (once a file) after some line
/// has gone unpaired, and fails the run at its end; `Some(true)` fails at
/// once; `None` does not check.
fn order_check(p: &super::args::Parsed) -> Option<bool> {
    match p.last_of(&["c", "n"]) {
        Some("c") => Some(true),
        Some(_) => None,
        None => Some(false),
    }
}

/// `comm [-1] [-2] [-3] [-z] [--total] [--output-delimiter=S] FILE1 FILE2`
///
/// Lines are bytes, compared as the C locale compares them, and kept as
/// they are (a `\r` before the newline, bytes that are not UTF-8).
pub(crate) fn comm(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('1', "", "1"),
        flag('2', "", "2"),
        flag('3', "", "3"),
        flag('z', "zero-terminated", "z"),
        flag('\0', "total", "t"),
        value('\0', "output-delimiter", "d"),
        flag('\0', "nocheck-order", "n"),
        flag('\0', "check-order", "c"),
    ];
    let p = match options(cx, "comm", args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    if p.operands.len() != 2 {
        cx.err(if p.operands.len() < 2 {
            format!(
                "comm: missing operand after '{}'",
                p.operands.last().map_or("comm", String::as_str)
            )
        } else {
            format!("comm: extra operand '{}'", p.operands[2])
        });
        cx.err("Try 'comm --help' for more information.");
        return 1;
    }
    let (ins, failed) = inputs(cx, "comm", &p.operands);
    if failed {
        return 1;
    }
    let eol = if p.has("z") { 0 } else { b'\n' };
    let a: Vec<&[u8]> = crate::search::records(&ins[0].1, eol).collect();
    let b: Vec<&[u8]> = crate::search::records(&ins[1].1, eol).collect();
    // An empty delimiter is a NUL, as GNU has it.
    let d = match p.value("d") {
        Some("") => b"\0".to_vec(),
        Some(d) => d.as_bytes().to_vec(),
        None => b"\t".to_vec(),
    };
    let shown = [!p.has("1"), !p.has("2"), !p.has("3")];
    let check = order_check(&p);
    let mut issued = [false, false];
    let mut unpairable = false;
    let mut totals = [0u64; 3];
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let ord = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (column, line, step_a, step_b) = match ord {
            std::cmp::Ordering::Less => (0, a[i], true, false),
            std::cmp::Ordering::Greater => (1, b[j], false, true),
            std::cmp::Ordering::Equal => (2, a[i], true, true),
        };
        unpairable |= column < 2;
        totals[column] += 1;
        if shown[column] {
            // A line goes in its column: one delimiter for each column
            // before it that is shown.
            for _ in shown[..column].iter().filter(|&&s| s) {
                out.extend_from_slice(&d);
            }
            out.extend_from_slice(line);
            out.push(eol);
        }
        for (k, (step, lines, at)) in [(step_a, &a, &mut i), (step_b, &b, &mut j)]
            .into_iter()
            .enumerate()
        {
            if !step {
                continue;
            }
            *at += 1;
            let Some(fatal) = check else { continue };
            if (fatal || unpairable)
                && !issued[k]
                && lines.get(*at).is_some_and(|next| lines[*at - 1] > *next)
            {
                // GNU's error() flushes standard output first.
                cx.out(&std::mem::take(&mut out));
                cx.err(format_args!("comm: file {} is not in sorted order", k + 1));
                if fatal {
                    return 1;
                }
                issued[k] = true;
            }
        }
        cx.out_stdio(&mut out);
    }
    if p.has("t") {
        for t in totals {
            out.extend_from_slice(t.to_string().as_bytes());
            out.extend_from_slice(&d);
        }
        out.extend_from_slice(b"total");
        out.push(eol);
    }
    cx.out(&out);
    if issued.iter().any(|&x| x) {
        cx.err("comm: input is not in sorted order");
        return 1;
    }
    0
}

/// `join [-t C] [-1 F] [-2 F] [-j F] [-a N] [-v N] [-e S] [-o FMT] [-i] FILE1 FILE2`
/// join's `-o`: `auto`, or the fields to print, each `(file, field)` with
/// file 0 for the join field.
enum JoinFormat {
    Auto,
    Fields(Vec<(usize, usize)>),
}

/// Reads `-o`'s value, or GNU's message for a bad field spec.
fn join_format(o: &str) -> Result<JoinFormat, String> {
    if o == "auto" {
        return Ok(JoinFormat::Auto);
    }
    let spec = |s: &str| -> Result<(usize, usize), String> {
        let bad = |what: &str, s: &str| format!("join: {what}: {}", super::quote::quote(s, true));
        match s.as_bytes() {
            [b'0'] => Ok((0, 0)),
            [b'0', ..] => Err(bad("invalid field specifier", s)),
            [b'1' | b'2', b'.', ..] => match s[2..].parse::<usize>() {
                Ok(n) if n > 0 && s[2..].bytes().all(|b| b.is_ascii_digit()) => {
                    Ok((usize::from(s.as_bytes()[0] - b'0'), n))
                }
                _ => Err(bad("invalid field number", &s[2..])),
            },
            [b'1' | b'2', ..] => Err(bad("invalid field specifier", s)),
            _ => Err(bad("invalid file number in field spec", s)),
        }
    };
    o.split([',', ' ', '\t'])
        .filter(|s| !s.is_empty())
        .map(spec)
        .collect::<Result<_, _>>()
        .map(JoinFormat::Fields)
}

pub(crate) fn join(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('t', "", "t"),
        value('1', "", "1"),
        value('2', "", "2"),
        value('j', "", "j"),
        value('a', "", "a"),
        value('v', "", "v"),
        value('e', "", "e"),
        value('o', "", "o"),
        flag('i', "ignore-case", "i"),
        flag('\0', "nocheck-order", "n"),
        flag('\0', "check-order", "c"),
        flag('\0', "header", "h"),
    ];
    // The obsolete `-o 1.1 1.2 2.1`: field specs after `-o`'s value go on
    // with its list, as GNU join still reads them.
    let is_spec = |a: &str| {
        !a.is_empty()
            && a.split([',', ' ']).all(|f| {
                f == "0"
                    || f.split_once('.').is_some_and(|(n, m)| {
                        matches!(n, "1" | "2")
                            && !m.is_empty()
                            && m.bytes().all(|b| b.is_ascii_digit())
                    })
            })
    };
    let mut args = args.to_vec();
    if let Some(o) = args.iter().position(|a| a == "-o")
        && o + 1 < args.len()
    {
        while o + 2 < args.len() && is_spec(&args[o + 2]) && args.len() - (o + 3) >= 2 {
            let more = args.remove(o + 2);
            args[o + 1] = format!("{},{more}", args[o + 1]);
        }
    }
    let p = match options(cx, "join", &args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    if p.operands.len() != 2 {
        match p.operands.as_slice() {
            [] => cx.err("join: missing operand"),
            [one] => cx.err(format_args!(
                "join: missing operand after {}",
                super::quote::quote(one, true)
            )),
            [.., extra] => cx.err(format_args!(
                "join: extra operand {}",
                super::quote::quote(extra, true)
            )),
        }
        cx.err("Try 'join --help' for more information.");
        return 1;
    }
    let format = match p.value("o").map(join_format).transpose() {
        Ok(format) => format,
        Err(msg) => {
            cx.err(msg);
            return 1;
        }
    };
    let (ins, failed) = inputs(cx, "join", &p.operands);
    if failed {
        return 1;
    }
    let sep = p.value("t").map(|t| t.chars().next().unwrap_or('\t'));
    let field = |v: Option<&str>| v.and_then(|s| s.parse::<usize>().ok()).unwrap_or(1).max(1) - 1;
    let j = p.value("j");
    let (k1, k2) = (field(p.value("1").or(j)), field(p.value("2").or(j)));
    let split = |l: &str| -> Vec<String> {
        match sep {
            Some(c) => l.split(c).map(str::to_owned).collect(),
            None => l
                .split([' ', '\t'])
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    };
    let rows = |d: &[u8]| -> Vec<Vec<String>> {
        super::lf_lines(&crate::lossless::decode(d))
            .map(split)
            .collect()
    };
    let (a, b) = (rows(&ins[0].1), rows(&ins[1].1));
    let fold = p.has("i");
    let key = |r: &Vec<String>, k: usize| -> String {
        let s = r.get(k).cloned().unwrap_or_default();
        if fold { s.to_lowercase() } else { s }
    };
    let osep = sep.map_or(" ".to_owned(), String::from);
    let empty = p.value("e").unwrap_or("").to_owned();
    let unpaired: Vec<&str> = p.values("a").into_iter().chain(p.values("v")).collect();
    let only_unpaired = p.has("v");
    // `-o auto`: as many fields as each file's first line has.
    let widths = (a.first().map_or(0, Vec::len), b.first().map_or(0, Vec::len));
    let render = |ra: Option<&Vec<String>>, rb: Option<&Vec<String>>| -> String {
        let joinf = ra
            .map(|r| key(r, k1))
            .or_else(|| rb.map(|r| key(r, k2)))
            .unwrap_or_default();
        let joinf = ra
            .and_then(|r| r.get(k1).cloned())
            .or_else(|| rb.and_then(|r| r.get(k2).cloned()))
            .unwrap_or(joinf);
        let mut parts = Vec::new();
        match &format {
            Some(JoinFormat::Auto) => {
                parts.push(joinf);
                for (r, width, k) in [(ra, widths.0, k1), (rb, widths.1, k2)] {
                    parts.extend((0..width).filter(|&i| i != k).map(|i| {
                        r.and_then(|r| r.get(i).cloned())
                            .unwrap_or_else(|| empty.clone())
                    }));
                }
            }
            Some(JoinFormat::Fields(f)) => {
                for &(file, n) in f {
                    let v = match file {
                        0 => Some(joinf.clone()),
                        1 => ra.and_then(|r| r.get(n - 1).cloned()),
                        _ => rb.and_then(|r| r.get(n - 1).cloned()),
                    };
                    parts.push(v.unwrap_or_else(|| empty.clone()));
                }
            }
            None => {
                parts.push(joinf);
                if let Some(r) = ra {
                    parts.extend(
                        r.iter()
                            .enumerate()
                            .filter(|(i, _)| *i != k1)
                            .map(|(_, s)| s.clone()),
                    );
                }
                if let Some(r) = rb {
                    parts.extend(
                        r.iter()
                            .enumerate()
                            .filter(|(i, _)| *i != k2)
                            .map(|(_, s)| s.clone()),
                    );
                }
            }
        }
        parts.join(&osep) + "\n"
    };
    // As comm's, with lines compared by their join fields.
    let check = order_check(&p);
    let mut issued = [false, false];
    let mut unpairable = false;
    // Checks the line read after `at` in file `k` (`rows`, field `f`):
    // the message, and whether it is fatal.
    let mut read_next = |k: usize,
                         rows: &[Vec<String>],
                         f: usize,
                         at: usize,
                         unpairable: bool|
     -> Option<(String, bool)> {
        let fatal = check?;
        let disorder = (fatal || unpairable)
            && !issued[k]
            && rows
                .get(at + 1)
                .is_some_and(|next| key(&rows[at], f) > key(next, f));
        if !disorder {
            return None;
        }
        issued[k] = true;
        let msg = format!(
            "join: {}:{}: is not sorted: {}",
            p.operands[k],
            at + 2,
            rows[at + 1].join(&osep)
        );
        Some((msg, fatal))
    };
    let mut out = String::new();
    let mut warnings = Vec::new();
    let (mut i, mut jx) = (0, 0);
    while i < a.len() || jx < b.len() {
        let ord = match (a.get(i), b.get(jx)) {
            (Some(x), Some(y)) => key(x, k1).cmp(&key(y, k2)),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let mut steps: Vec<(usize, usize)> = Vec::new();
        let mut group = None;
        match ord {
            std::cmp::Ordering::Less => {
                if unpaired.contains(&"1") {
                    out.push_str(&render(Some(&a[i]), None));
                }
                steps.push((0, i));
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                if unpaired.contains(&"2") {
                    out.push_str(&render(None, Some(&b[jx])));
                }
                steps.push((1, jx));
                jx += 1;
            }
            std::cmp::Ordering::Equal => {
                let k = key(&a[i], k1);
                let ie = (i..a.len()).take_while(|&x| key(&a[x], k1) == k).count() + i;
                let je = (jx..b.len()).take_while(|&x| key(&b[x], k2) == k).count() + jx;
                // GNU reads past a group before it prints it.
                group = Some((i, ie, jx, je));
                steps.push((0, ie - 1));
                steps.push((1, je - 1));
                i = ie;
                jx = je;
            }
        }
        for (k, at) in steps {
            let (rows, f) = if k == 0 { (&a, k1) } else { (&b, k2) };
            match read_next(k, rows, f, at, unpairable) {
                None => {}
                Some((m, false)) => warnings.push(m),
                Some((m, true)) => {
                    cx.outs(&out);
                    cx.err(m);
                    return 1;
                }
            }
        }
        if let Some((i0, ie, j0, je)) = group
            && !only_unpaired
        {
            for ra in &a[i0..ie] {
                for rb in &b[j0..je] {
                    out.push_str(&render(Some(ra), Some(rb)));
                }
            }
        }
        if ord != std::cmp::Ordering::Equal {
            unpairable = true;
        }
    }
    cx.outs(&out);
    for w in &warnings {
        cx.err(w);
    }
    if issued.iter().any(|&x| x) {
        cx.err("join: input is not in sorted order");
        return 1;
    }
    0
}

/// `cmp [-s] [-l] [-b] FILE1 [FILE2]`
pub(crate) fn cmp(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('s', "silent", "s"),
        flag('\0', "quiet", "s"),
        flag('l', "verbose", "l"),
        flag('b', "print-bytes", "b"),
        value('n', "bytes", "n"),
    ];
    let p = match options(cx, "cmp", args, SPEC, 2) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let ops: Vec<String> = match p.operands.len() {
        1 => vec![p.operands[0].clone(), "-".to_owned()],
        2 => p.operands.clone(),
        0 => {
            cx.err("cmp: missing operand after 'cmp'");
            cx.err("cmp: Try 'cmp --help' for more information.");
            return 2;
        }
        _ => {
            cx.err(format_args!(
                "cmp: invalid --ignore-initial value '{}'",
                p.operands[2]
            ));
            return 2;
        }
    };
    let mut sides = Vec::new();
    for op in &ops {
        match CmpInput::open(cx, op) {
            Ok(side) => sides.push(side),
            Err(e) => {
                if !p.has("s") {
                    cx.err(format_args!("cmp: {op}: {}", e.strerror()));
                }
                return 2;
            }
        }
    }
    let (Some(mut b), Some(mut a)) = (sides.pop(), sides.pop()) else {
        return 2;
    };
    let limit: u64 = p
        .value("n")
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    // GNU pads `-l`'s offsets to the digits of the largest offset it may
    // print: the smallest of `-n` and the sizes of the regular files (a
    // pipe's is not known), and each byte to three octal digits.
    let regular =
        |o: &String, len: Option<u64>| len.filter(|_| o != "-" && !o.starts_with("/dev/fd/"));
    let width = [regular(&ops[0], a.len), regular(&ops[1], b.len)]
        .into_iter()
        .flatten()
        .fold(limit.min(i64::MAX as u64), u64::min)
        .to_string()
        .len();
    let mut at = 0u64;
    let mut lines = 1u64;
    let mut differ = false;
    let mut out = String::new();
    loop {
        let left = usize::try_from(limit - at).unwrap_or(usize::MAX);
        if left == 0 {
            break;
        }
        let (Ok(sa), Ok(sb)) = (a.ready(cx), b.ready(cx)) else {
            cx.err("cmp: read error");
            return 2;
        };
        let n = sa.len().min(sb.len()).min(left);
        if n == 0 {
            break;
        }
        let (sa, sb) = (&sa[..n], &sb[..n]);
        if p.has("l") {
            for (i, (x, y)) in sa.iter().zip(sb).enumerate() {
                if x != y {
                    differ = true;
                    let offset = at + i as u64 + 1;
                    if p.has("b") {
                        let (cx_, cy) = (shown_byte(*x), shown_byte(*y));
                        out.push_str(&format!("{offset:>width$} {x:>3o} {cx_:<4} {y:>3o} {cy}\n"));
                    } else {
                        out.push_str(&format!("{offset:>width$} {x:>3o} {y:>3o}\n"));
                    }
                }
            }
            if out.len() > 1 << 16 {
                cx.outs(&std::mem::take(&mut out));
            }
        } else if let Some(i) = sa.iter().zip(sb).position(|(x, y)| x != y) {
            if p.has("s") {
                return 1;
            }
            lines += memchr::memchr_iter(b'\n', &sa[..i]).count() as u64;
            // GNU cmp's C-locale message says "char"; its UTF-8 one, and
            // `-b`'s, "byte".
            let unit = if super::utf8_locale(cx) || p.has("b") {
                "byte"
            } else {
                "char"
            };
            let bytes = if p.has("b") {
                let (x, y) = (sa[i], sb[i]);
                format!(" is {x:>3o} {} {y:>3o} {}", shown_byte(x), shown_byte(y))
            } else {
                String::new()
            };
            cx.outs(&format!(
                "{} {} differ: {unit} {}, line {lines}{bytes}\n",
                ops[0],
                ops[1],
                at + i as u64 + 1
            ));
            return 1;
        }
        lines += memchr::memchr_iter(b'\n', sa).count() as u64;
        a.consume(n);
        b.consume(n);
        at += n as u64;
    }
    cx.outs(&out);
    if at < limit {
        // One ended; if the other did not, it is the longer.
        let (Ok(rest_a), Ok(rest_b)) = (a.ready(cx).map(<[u8]>::len), b.ready(cx).map(<[u8]>::len))
        else {
            cx.err("cmp: read error");
            return 2;
        };
        if rest_a != rest_b {
            if !p.has("s") {
                let short = if rest_a == 0 { &ops[0] } else { &ops[1] };
                let ended_line = at > 0 && !a.last_was_newline;
                let tail = if at == 0 {
                    format!("EOF on {short} which is empty")
                } else if p.has("l") {
                    format!("EOF on {short} after byte {at}")
                } else {
                    format!(
                        "EOF on {short} after byte {at}, line {}",
                        lines - 1 + u64::from(ended_line)
                    )
                };
                cx.err(format_args!("cmp: {tail}"));
            }
            return 1;
        }
    }
    u8::from(differ)
}

/// A byte as `cmp -b` shows it (GNU's `sprintc`): printable as it is,
/// else `^X` for a control character, `M-` before one above 127.
fn shown_byte(b: u8) -> String {
    let mut s = String::new();
    let mut c = b;
    if !(b' '..0x7f).contains(&c) {
        if c >= 128 {
            s.push_str("M-");
            c -= 128;
        }
        if c < 32 {
            s.push('^');
            c += 64;
        } else if c == 127 {
            s.push('^');
            c = b'?';
        }
    }
    s.push(char::from(c));
    s
}

/// One input of `cmp`, read a piece at a time, so that comparing two
/// large documents holds a piece of each: a document through its reader,
/// or standard input.
struct CmpInput {
    reader: Option<Box<dyn std::io::Read>>,
    /// The document's size; `None` for standard input.
    len: Option<u64>,
    buf: Vec<u8>,
    pos: usize,
    /// Whether the last byte consumed was a newline.
    last_was_newline: bool,
}

impl CmpInput {
    fn open(cx: &mut Cx<'_>, op: &str) -> Result<CmpInput, FsError> {
        let (reader, len) = if op == "-" || op == "/dev/stdin" {
            (None, None)
        } else {
            // `open` refuses a directory.
            let (r, len) = cx.fs.open(op)?;
            (Some(r), Some(len))
        };
        Ok(CmpInput {
            reader,
            len,
            buf: Vec::new(),
            pos: 0,
            last_was_newline: false,
        })
    }

    /// The bytes read and not consumed yet, reading more when there are
    /// none; empty at the end.
    fn ready(&mut self, cx: &mut Cx<'_>) -> std::io::Result<&[u8]> {
        if self.pos == self.buf.len() {
            self.pos = 0;
            self.buf.clear();
            match &mut self.reader {
                Some(r) => {
                    self.buf.resize(64 << 10, 0);
                    let n = loop {
                        match r.read(&mut self.buf) {
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            other => break other,
                        }
                    };
                    match n {
                        Ok(n) => self.buf.truncate(n),
                        Err(e) => {
                            self.buf.clear();
                            return Err(e);
                        }
                    }
                }
                None => {
                    if let Some(piece) = cx.input.borrow_mut().next_piece() {
                        self.buf = piece;
                    }
                }
            }
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        if n > 0 {
            self.last_was_newline = self.buf[self.pos + n - 1] == b'\n';
        }
        self.pos += n;
    }
}

/// What `yes` prints at most: a pipeline stage's output is a buffer, so
/// an endless stream is cut here (the reader, like `head`, takes what it
/// needs).
const YES_LIMIT: usize = 1 << 20;

/// `yes [STRING]...`: the line, repeated up to [`YES_LIMIT`] bytes.
pub(crate) fn yes(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    // GNU `yes` takes `--` as the end of its (help and version) options.
    let args = match args.first().map(String::as_str) {
        Some("--") => &args[1..],
        _ => args,
    };
    let line = if args.is_empty() {
        "y".to_owned()
    } else {
        args.join(" ")
    } + "\n";
    let n = (YES_LIMIT / line.len()).max(1);
    cx.outs(&line.repeat(n));
    0
}

/// `shuf [-n N] [-r] [-z] (-e ARG... | -i LO-HI | [FILE])`: a random
/// permutation (or, with `-r`, draws with repeats). The order comes from
/// the script's clock, not a host source of randomness, and cannot be
/// GNU's: only what does not depend on it (the lines drawn, the errors)
/// is comparable.
pub(crate) fn shuf(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('n', "head-count", "n"),
        flag('e', "echo", "e"),
        value('i', "input-range", "i"),
        flag('r', "repeat", "r"),
        flag('z', "zero-terminated", "z"),
        value('o', "output", "o"),
        value('\0', "random-source", "random-source"),
    ];
    let p = match options(cx, "shuf", args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let q = |s: &str| super::quote::quote(s, true);
    if p.has("e") && p.has("i") {
        cx.err("shuf: cannot combine -e and -i options");
        cx.err("Try 'shuf --help' for more information.");
        return 1;
    }
    if let Some(o) = p.value("o") {
        cx.err(format_args!(
            "shuf: {}: cannot write: the filesystem is read-only",
            q(o)
        ));
        return 1;
    }
    let count = match p.value("n").map(str::parse::<usize>) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => {
            cx.err(format_args!(
                "shuf: invalid line count: {}",
                q(p.value("n").unwrap_or_default())
            ));
            return 1;
        }
    };
    let sep = if p.has("z") { b'\0' } else { b'\n' };
    let items: Vec<Vec<u8>> = if p.has("e") {
        p.operands.iter().map(|a| a.as_bytes().to_vec()).collect()
    } else if let Some(range) = p.value("i") {
        let bounds = range
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
            .filter(|(a, b)| a <= b && b - a < 1 << 20);
        match bounds {
            Some((a, b)) if p.operands.is_empty() => {
                (a..=b).map(|n| n.to_string().into_bytes()).collect()
            }
            Some(_) => {
                cx.err(format_args!("shuf: extra operand {}", q(&p.operands[0])));
                cx.err("Try 'shuf --help' for more information.");
                return 1;
            }
            None => {
                cx.err(format_args!("shuf: invalid input range: {}", q(range)));
                return 1;
            }
        }
    } else {
        if p.operands.len() > 1 {
            cx.err(format_args!("shuf: extra operand {}", q(&p.operands[1])));
            cx.err("Try 'shuf --help' for more information.");
            return 1;
        }
        let op = p.operands.first().map_or("-", String::as_str);
        let data = match read_one(cx, op) {
            Ok(d) => d,
            Err(e) => {
                cx.err(format_args!(
                    "shuf: {}: {}",
                    super::quote::quote(op, false),
                    e.strerror()
                ));
                return 1;
            }
        };
        records(&data, sep)
            .into_iter()
            .map(|r| r.strip_suffix(&[sep]).unwrap_or(r).to_vec())
            .collect()
    };
    let mut seed = cx.env.clock_seed();
    let mut next = move |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound as u64) as usize
    };
    let mut out = Vec::new();
    if p.has("r") {
        // Without -n, GNU draws forever; here until 1 MiB, as `yes` stops.
        let mut drawn = 0;
        while !items.is_empty() && count.is_none_or(|n| drawn < n) && out.len() < 1 << 20 {
            out.extend_from_slice(&items[next(items.len())]);
            out.push(sep);
            drawn += 1;
        }
    } else {
        let mut items = items;
        // Fisher-Yates, as far as the lines wanted.
        let want = count.unwrap_or(items.len()).min(items.len());
        for k in 0..want {
            let j = k + next(items.len() - k);
            items.swap(k, j);
            out.extend_from_slice(&items[k]);
            out.push(sep);
        }
    }
    cx.out(&out);
    0
}
