//! `head` and `tail`: the first or last lines or bytes of each input, with
//! GNU's `==> name <==` headers for several inputs. Documents are read only
//! as far as needed (see [`super::read`]).

use super::quote::quote;
use super::read::{self, newlines};
use super::{flag, options, value};
use crate::exec::{Cx, Wanted};
use crate::fs::FsError;

/// What to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Amount {
    /// The first N (head) or last N (tail).
    Count(u64),
    /// head: all but the last N; tail: from the Nth on (1-based).
    Other(u64),
}

/// GNU's `-5` shorthand for `-n 5`.
fn expand_numeric(args: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in args {
        let is_value = out
            .last()
            .is_some_and(|p| matches!(p.as_str(), "-n" | "-c" | "--lines" | "--bytes"));
        match a.strip_prefix('-') {
            Some(d) if !is_value && !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
                out.push("-n".to_owned());
                out.push(d.to_owned());
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

/// Parses a count with an optional sign (`-` for head, `+` for tail) and
/// GNU's size suffixes (`K`, `M`, `G`, `kB`, `MB`, `b`).
fn amount(s: &str, other_sign: char) -> Option<Amount> {
    let (other, body) = match s.strip_prefix(other_sign) {
        Some(b) => (true, b),
        None => (
            false,
            s.strip_prefix(if other_sign == '-' { '+' } else { '-' })
                .unwrap_or(s),
        ),
    };
    let split = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let (digits, suffix) = body.split_at(split);
    let mult: u64 = match suffix {
        "" => 1,
        "b" => 512,
        "kB" => 1000,
        "K" | "KiB" => 1024,
        "MB" => 1000 * 1000,
        "M" | "MiB" => 1 << 20,
        "GB" => 1000 * 1000 * 1000,
        "G" | "GiB" => 1 << 30,
        _ => return None,
    };
    let n = super::count(digits)?.saturating_mul(mult);
    Some(if other {
        Amount::Other(n)
    } else {
        Amount::Count(n)
    })
}

/// The bytes of the first `n` lines.
fn first_lines(data: &[u8], n: u64) -> &[u8] {
    let mut seen = 0u64;
    if n == 0 {
        return &[];
    }
    for (i, &b) in data.iter().enumerate() {
        if b == b'\n' {
            seen += 1;
            if seen == n {
                return &data[..=i];
            }
        }
    }
    data
}

/// The bytes of the last `n` lines.
fn last_lines(data: &[u8], n: u64) -> &[u8] {
    if n == 0 {
        return &[];
    }
    let mut end = data.len();
    if data.ends_with(b"\n") {
        end -= 1;
    }
    let mut seen = 0u64;
    for i in (0..end).rev() {
        if data[i] == b'\n' {
            seen += 1;
            if seen == n {
                return &data[i + 1..];
            }
        }
    }
    data
}

/// Lines in `data`, a last one without a newline included.
fn line_count(data: &[u8]) -> u64 {
    let n = newlines(data) as u64;
    if data.is_empty() || data.ends_with(b"\n") {
        n
    } else {
        n + 1
    }
}

/// Which of `head` and `tail` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Head,
    Tail,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Head => "head",
            Which::Tail => "tail",
        }
    }
}

/// Reads what one operand needs for the amount, reading only part of a
/// document where possible.
fn fetch(
    cx: &mut Cx<'_>,
    which: Which,
    bytes: bool,
    amt: Amount,
    op: &str,
) -> Result<Vec<u8>, FsError> {
    if op == "-" {
        return Ok(from_stdin(cx, which, bytes, amt));
    }
    match (which, bytes, amt) {
        (Which::Head, false, Amount::Count(n)) => {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            read::prefix(cx.fs, op, |d| newlines(d) >= n)
        }
        (Which::Head, true, Amount::Count(n)) => cx.fs.read_range(op, 0, n),
        (Which::Tail, false, Amount::Count(n)) => {
            let meta = cx.fs.metadata(op)?;
            if meta.is_dir() {
                return Err(FsError::IsADirectory(meta.path));
            }
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            read::suffix(cx.fs, op, meta.len, |d| {
                newlines(d) >= n.saturating_add(usize::from(d.ends_with(b"\n")))
            })
        }
        (Which::Tail, true, Amount::Count(n)) => {
            let meta = cx.fs.metadata(op)?;
            if meta.is_dir() {
                return Err(FsError::IsADirectory(meta.path));
            }
            let from = meta.len.saturating_sub(n);
            cx.fs.read_range(op, from, meta.len - from)
        }
        (Which::Tail, true, Amount::Other(n)) => {
            let meta = cx.fs.metadata(op)?;
            if meta.is_dir() {
                return Err(FsError::IsADirectory(meta.path));
            }
            let from = n.saturating_sub(1);
            cx.fs.read_range(op, from, meta.len.saturating_sub(from))
        }
        _ => cx.fs.read(op),
    }
}

/// What the amount needs of standard input, read a piece at a time: the
/// start until it has enough, or a window sliding over it that keeps the
/// end. The input is used up, as a pipe is by the command that reads it,
/// but for what `head` does not print of a document (`< FILE`), left for
/// the next command as GNU `head` leaves it.
fn from_stdin(cx: &mut Cx<'_>, which: Which, bytes: bool, amt: Amount) -> Vec<u8> {
    let Amount::Count(n) = amt else {
        return cx.stdin();
    };
    let want = usize::try_from(n).unwrap_or(usize::MAX);
    if which == Which::Head && cx.input.borrow().seekable {
        let mut input = cx.input.borrow_mut();
        if bytes {
            return input.read_n(want);
        }
        let mut kept = Vec::new();
        for _ in 0..n {
            match input.read_until(b'\n') {
                Some(line) => kept.extend_from_slice(&line),
                None => break,
            }
        }
        return kept;
    }
    let slack = usize::try_from(crate::fs::PIECE).unwrap_or(usize::MAX);
    let mut kept: Vec<u8> = Vec::new();
    loop {
        let piece = cx.input.borrow_mut().next_piece();
        let Some(piece) = piece else {
            return kept;
        };
        kept.extend_from_slice(&piece);
        match (which, bytes) {
            (Which::Head, false) if newlines(&kept) >= want => break,
            (Which::Head, true) if kept.len() >= want => break,
            // One line more than asked: the last one may still be growing.
            (Which::Tail, false) if kept.len() > slack.saturating_mul(2) => {
                kept = last_lines(&kept, n.saturating_add(1)).to_vec();
            }
            (Which::Tail, true) if kept.len() > want.saturating_add(slack) => {
                kept.drain(..kept.len() - want);
            }
            _ => {}
        }
    }
    cx.input.borrow_mut().discard();
    kept
}

/// Cuts what the amount selects out of the data `fetch` returned.
fn select(which: Which, bytes: bool, amt: Amount, data: &[u8]) -> &[u8] {
    let len = data.len() as u64;
    let idx = |n: u64| usize::try_from(n.min(len)).unwrap_or(data.len());
    match (which, bytes, amt) {
        (Which::Head, false, Amount::Count(n)) => first_lines(data, n),
        (Which::Head, false, Amount::Other(n)) => {
            let keep = line_count(data).saturating_sub(n);
            first_lines(data, keep)
        }
        (Which::Head, true, Amount::Count(n)) => &data[..idx(n)],
        (Which::Head, true, Amount::Other(n)) => &data[..idx(len.saturating_sub(n))],
        (Which::Tail, false, Amount::Count(n)) => last_lines(data, n),
        (Which::Tail, false, Amount::Other(n)) => {
            let skip = n.saturating_sub(1);
            let head = first_lines(data, skip);
            if line_count(data) <= skip {
                &[]
            } else {
                &data[head.len()..]
            }
        }
        // Already cut by `fetch` for documents; stdin arrives whole.
        (Which::Tail, true, Amount::Count(n)) => &data[idx(len.saturating_sub(n))..],
        (Which::Tail, true, Amount::Other(_)) => data,
    }
}

fn run(cx: &mut Cx<'_>, which: Which, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('n', "lines", "n"),
        value('c', "bytes", "c"),
        flag('q', "quiet", "q"),
        flag('\0', "silent", "q"),
        flag('v', "verbose", "v"),
        flag('f', "follow", "f"),
        flag('F', "", "f"),
    ];
    let name = which.name();
    let args = expand_numeric(args);
    let p = match options(cx, name, &args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if p.has("f") {
        cx.err(format_args!(
            "{name}: following a file (-f) is not supported: documents do not grow here"
        ));
        return 1;
    }
    let bytes = p.last_of(&["n", "c"]) == Some("c");
    let raw = if bytes { p.value("c") } else { p.value("n") };
    let other_sign = if which == Which::Head { '-' } else { '+' };
    let amt = match raw {
        None => Amount::Count(10),
        Some(s) => match amount(s, other_sign) {
            Some(a) => a,
            None => {
                let what = if bytes { "bytes" } else { "lines" };
                cx.err(format_args!("{name}: invalid number of {what}: '{s}'"));
                return 1;
            }
        },
    };
    // `tail -c +N` is cut in `fetch`; for stdin it is cut here.
    let operands = if p.operands.is_empty() {
        vec!["-".to_owned()]
    } else {
        p.operands.clone()
    };
    let headers = p.has("v") || (operands.len() > 1 && !p.has("q"));
    let mut status = 0;
    let mut first = true;
    for op in &operands {
        let label = if op == "-" {
            "standard input"
        } else {
            op.as_str()
        };
        let header = |cx: &mut Cx<'_>, first: &mut bool| {
            if headers {
                let sep = if *first { "" } else { "\n" };
                cx.outs(&format!("{sep}==> {label} <==\n"));
                *first = false;
            }
        };
        match fetch(cx, which, bytes, amt, op) {
            Ok(data) => {
                header(cx, &mut first);
                let data = if op == "-" && which == Which::Tail && bytes {
                    match amt {
                        Amount::Other(n) => {
                            let from = usize::try_from(n.saturating_sub(1)).unwrap_or(usize::MAX);
                            data.get(from..).unwrap_or(&[]).to_vec()
                        }
                        Amount::Count(_) => data,
                    }
                } else {
                    data
                };
                let out = select(which, bytes, amt, &data).to_vec();
                cx.out(&out);
            }
            Err(FsError::IsADirectory(_)) => {
                header(cx, &mut first);
                cx.err(format_args!(
                    "{name}: error reading {}: Is a directory",
                    quote(op, true)
                ));
                status = 1;
            }
            Err(e) => {
                cx.err(format_args!(
                    "{name}: cannot open {} for reading: {}",
                    quote(op, true),
                    e.strerror()
                ));
                status = 1;
            }
        }
    }
    status
}

/// How much of its standard input `head ARGS` reads, when it reads only
/// the start of it: a count of lines or bytes and no file (`-n -N`, a
/// file operand or an option it does not take: `None`). With the same
/// numbers and suffixes as `head` itself.
pub(crate) fn head_reads(args: &[&str]) -> Option<Wanted> {
    let args: Vec<String> = args.iter().map(|&a| a.to_owned()).collect();
    let mut wanted = Wanted::Lines(10);
    let args = expand_numeric(&args);
    let mut args = args.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        let (bytes, value) = match arg {
            "-q" | "-v" | "--quiet" | "--silent" | "--verbose" | "-" => continue,
            "-n" | "--lines" => (false, args.next()?),
            "-c" | "--bytes" => (true, args.next()?),
            _ => match arg.strip_prefix("--lines=").or(arg.strip_prefix("-n")) {
                Some(v) => (false, v),
                None => (
                    true,
                    arg.strip_prefix("--bytes=").or(arg.strip_prefix("-c"))?,
                ),
            },
        };
        let Amount::Count(n) = amount(value, '-')? else {
            return None;
        };
        wanted = if bytes {
            Wanted::Bytes(n)
        } else {
            Wanted::Lines(n)
        };
    }
    Some(wanted)
}

/// `head [-n [-]N | -N | -c [-]N] [-q] [-v] [FILE]...`.
pub(crate) fn head(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, Which::Head, args)
}

/// `tail [-n [+]N | -N | -c [+]N] [-q] [-v] [FILE]...`.
pub(crate) fn tail(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, Which::Tail, args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts() {
        let d = b"a\nb\nc\nd";
        assert_eq!(first_lines(d, 2), b"a\nb\n");
        assert_eq!(first_lines(d, 9), d);
        assert_eq!(last_lines(d, 2), b"c\nd");
        assert_eq!(last_lines(b"a\nb\nc\n", 2), b"b\nc\n");
        assert_eq!(last_lines(b"a\nb\n", 5), b"a\nb\n");
        assert_eq!(
            select(Which::Head, false, Amount::Other(1), d),
            b"a\nb\nc\n"
        );
        assert_eq!(select(Which::Tail, false, Amount::Other(3), d), b"c\nd");
        assert_eq!(select(Which::Tail, false, Amount::Other(9), d), b"");
        assert_eq!(amount("+5", '+'), Some(Amount::Other(5)));
        assert_eq!(amount("-5", '-'), Some(Amount::Other(5)));
        assert_eq!(amount("2K", '-'), Some(Amount::Count(2048)));
        assert_eq!(amount("x", '-'), None);
    }
}
