//! `head` and `tail`: the first or last lines or bytes of each input, with
//! GNU's `==> name <==` headers for several inputs. Documents are read only
//! as far as needed (see [`super::read`]).

use super::quote::quote;
use super::read;
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

/// GNU's obsolete first option, rewritten as the options it stands for:
/// `head -5`, `head -2c`, `head -3kqz` (a count, then units and `q v z`);
/// `tail -5`, `tail +2`, `tail -2c`, `tail -l` (a count, then units), which
/// `tail` takes only as `tail OPT [FILE]` or `tail OPT -- [FILE]`. A digit
/// anywhere else among the options is GNU's error, the message returned.
fn obsolete(which: Which, args: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = args;
    if let Some(first) = args.first()
        && let Some(opts) = obsolete_first(which, first, args)?
    {
        out = opts;
        rest = &args[1..];
    }
    // The others as getopt reads them: a digit in a cluster of options
    // (`-q1`, `-1` after another option) is refused.
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        i += 1;
        if a == "--" {
            break;
        }
        if matches!(a.as_str(), "-n" | "-c" | "--lines" | "--bytes") {
            i += 1;
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.starts_with('-')) else {
            continue;
        };
        for c in cluster.chars() {
            if matches!(c, 'n' | 'c') {
                break;
            }
            if c.is_ascii_digit() {
                return Err(match which {
                    Which::Head => format!("head: invalid trailing option -- {c}"),
                    Which::Tail => format!("tail: option used in invalid context -- {c}"),
                });
            }
        }
    }
    out.extend(rest.iter().cloned());
    Ok(out)
}

/// The obsolete option `first` as `-n N` / `-c N` (and `head`'s `-q -v
/// -z`), if it is one.
fn obsolete_first(
    which: Which,
    first: &str,
    args: &[String],
) -> Result<Option<Vec<String>>, String> {
    let (sign, body) = match (which, first.as_bytes()) {
        (Which::Head, [b'-', d, ..]) if d.is_ascii_digit() => ("", &first[1..]),
        (Which::Head, _) => return Ok(None),
        (Which::Tail, [b'+' | b'-', ..]) => {
            // One option and at most one file.
            let fits = args.len() == 1
                || (args.len() == 2 && !(args[1].starts_with('-') && args[1].len() > 1))
                || ((3..=4).contains(&(args.len() + 1)) && args[1] == "--");
            let rest = &first[1..];
            // `-` is standard input and `-c` wants a value: not this form.
            if !fits || (first.starts_with('-') && (rest.is_empty() || rest == "c")) {
                return Ok(None);
            }
            (if first.starts_with('+') { "+" } else { "" }, rest)
        }
        (Which::Tail, _) => return Ok(None),
    };
    let digits_end = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let (digits, letters) = body.split_at(digits_end);
    let mut bytes = false;
    let mut unit = "";
    let mut flags = Vec::new();
    let mut letters = letters.chars().peekable();
    match which {
        Which::Head => {
            for c in letters {
                match c {
                    'c' => (bytes, unit) = (true, ""),
                    'b' => (bytes, unit) = (true, "b"),
                    'k' => (bytes, unit) = (true, "K"),
                    'm' => (bytes, unit) = (true, "M"),
                    'l' => bytes = false,
                    'q' | 'v' | 'z' => flags.push(format!("-{c}")),
                    c => return Err(format!("head: invalid trailing option -- {c}")),
                }
            }
        }
        Which::Tail => {
            match letters.peek() {
                Some('b') => (bytes, unit) = (true, "b"),
                Some('c') => bytes = true,
                Some('l') => {}
                _ => unit = "-",
            }
            if unit != "-" {
                letters.next();
            } else {
                unit = "";
            }
            if letters.peek() == Some(&'f') {
                letters.next();
                flags.push("-f".to_owned());
            }
            if letters.next().is_some() {
                return Ok(None);
            }
        }
    }
    let count = if digits.is_empty() {
        // `tail -c`-less letters alone: ten lines, or ten 512-byte blocks.
        "10".to_owned()
    } else {
        digits.to_owned()
    };
    let mut out = vec![
        if bytes { "-c" } else { "-n" }.to_owned(),
        format!("{sign}{count}{unit}"),
    ];
    out.extend(flags);
    Ok(Some(out))
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

/// The `delim`s in `data`.
fn ends(data: &[u8], delim: u8) -> usize {
    memchr::memchr_iter(delim, data).count()
}

/// The bytes of the first `n` lines (ended by `delim`).
fn first_lines(data: &[u8], n: u64, delim: u8) -> &[u8] {
    let mut seen = 0u64;
    if n == 0 {
        return &[];
    }
    for (i, &b) in data.iter().enumerate() {
        if b == delim {
            seen += 1;
            if seen == n {
                return &data[..=i];
            }
        }
    }
    data
}

/// The bytes of the last `n` lines (ended by `delim`).
fn last_lines(data: &[u8], n: u64, delim: u8) -> &[u8] {
    if n == 0 {
        return &[];
    }
    let mut end = data.len();
    if data.ends_with(&[delim]) {
        end -= 1;
    }
    let mut seen = 0u64;
    for i in (0..end).rev() {
        if data[i] == delim {
            seen += 1;
            if seen == n {
                return &data[i + 1..];
            }
        }
    }
    data
}

/// Lines in `data`, a last one without a newline included.
fn line_count(data: &[u8], delim: u8) -> u64 {
    let n = ends(data, delim) as u64;
    if data.is_empty() || data.ends_with(&[delim]) {
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
    delim: u8,
) -> Result<Vec<u8>, FsError> {
    if op == "-" {
        return Ok(from_stdin(cx, which, bytes, amt, delim));
    }
    match (which, bytes, amt) {
        (Which::Head, false, Amount::Count(n)) => {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            read::prefix(cx.fs, op, |d| ends(d, delim) >= n)
        }
        (Which::Head, true, Amount::Count(n)) => cx.fs.read_range(op, 0, n),
        (Which::Tail, false, Amount::Count(n)) => {
            let meta = cx.fs.metadata(op)?;
            if meta.is_dir() {
                return Err(FsError::IsADirectory(meta.path));
            }
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            read::suffix(cx.fs, op, meta.len, |d| {
                ends(d, delim) >= n.saturating_add(usize::from(d.ends_with(&[delim])))
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
fn from_stdin(cx: &mut Cx<'_>, which: Which, bytes: bool, amt: Amount, delim: u8) -> Vec<u8> {
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
            match input.read_until(delim) {
                Some(line) => kept.extend_from_slice(&line),
                None => break,
            }
        }
        return kept;
    }
    let slack = usize::try_from(crate::fs::PIECE).unwrap_or(usize::MAX);
    let mut kept: Vec<u8> = Vec::new();
    // What was kept at the last cut: the next waits until the bytes have
    // grown past twice that, so that a large end is not scanned and
    // copied again for every piece.
    let mut floor = 0usize;
    loop {
        let piece = cx.input.borrow_mut().next_piece();
        let Some(piece) = piece else {
            return kept;
        };
        kept.extend_from_slice(&piece);
        match (which, bytes) {
            (Which::Head, false) if ends(&kept, delim) >= want => break,
            (Which::Head, true) if kept.len() >= want => break,
            // One line more than asked: the last one may still be growing.
            (Which::Tail, false) if kept.len() > floor.saturating_mul(2).saturating_add(slack) => {
                let end = last_lines(&kept, n.saturating_add(1), delim).len();
                kept.drain(..kept.len() - end);
                floor = kept.len();
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
fn select(which: Which, bytes: bool, amt: Amount, data: &[u8], delim: u8) -> &[u8] {
    let len = data.len() as u64;
    let idx = |n: u64| usize::try_from(n.min(len)).unwrap_or(data.len());
    match (which, bytes, amt) {
        (Which::Head, false, Amount::Count(n)) => first_lines(data, n, delim),
        (Which::Head, false, Amount::Other(n)) => {
            let keep = line_count(data, delim).saturating_sub(n);
            first_lines(data, keep, delim)
        }
        (Which::Head, true, Amount::Count(n)) => &data[..idx(n)],
        (Which::Head, true, Amount::Other(n)) => &data[..idx(len.saturating_sub(n))],
        (Which::Tail, false, Amount::Count(n)) => last_lines(data, n, delim),
        (Which::Tail, false, Amount::Other(n)) => {
            let skip = n.saturating_sub(1);
            let head = first_lines(data, skip, delim);
            if line_count(data, delim) <= skip {
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
    const HEAD: &[super::Spec] = &[
        value('n', "lines", "n"),
        value('c', "bytes", "c"),
        flag('q', "quiet", "q"),
        flag('\0', "silent", "q"),
        flag('v', "verbose", "v"),
        flag('z', "zero-terminated", "z"),
    ];
    // tail's: head's and `-f`.
    const TAIL: &[super::Spec] = &[
        value('n', "lines", "n"),
        value('c', "bytes", "c"),
        flag('q', "quiet", "q"),
        flag('\0', "silent", "q"),
        flag('v', "verbose", "v"),
        flag('z', "zero-terminated", "z"),
        flag('f', "follow", "f"),
        flag('F', "", "f"),
    ];
    let spec = if which == Which::Head { HEAD } else { TAIL };
    let name = which.name();
    let args = match obsolete(which, args) {
        Ok(args) => args,
        Err(msg) => {
            cx.err(msg);
            if which == Which::Head {
                cx.err("Try 'head --help' for more information.");
            }
            return 1;
        }
    };
    let p = match options(cx, name, &args, spec, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // `-f` prints what GNU prints before it starts waiting, and stops
    // there: a document never grows, so GNU would wait for ever. Following
    // a pipe is not following: GNU reads it to its end.
    let follows = p.has("f") && !p.operands.iter().all(|o| o == "-");
    let bytes = p.last_of(&["n", "c"]) == Some("c");
    let delim = if p.has("z") { b'\0' } else { b'\n' };
    let raw = if bytes { p.value("c") } else { p.value("n") };
    let other_sign = if which == Which::Head { '-' } else { '+' };
    let amt = match raw {
        None => Amount::Count(10),
        Some(s) => match amount(s, other_sign) {
            Some(a) => a,
            None => {
                let what = if bytes { "bytes" } else { "lines" };
                // GNU names the number without the `-` it reads as a sign
                // (`head -n -x`: 'x'; `tail -n +x`: '+x').
                let shown = s.strip_prefix('-').unwrap_or(s);
                cx.err(format_args!("{name}: invalid number of {what}: '{shown}'"));
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
    let mut unread = 0;
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
        match fetch(cx, which, bytes, amt, op, delim) {
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
                let out = select(which, bytes, amt, &data, delim).to_vec();
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
                unread += 1;
            }
        }
    }
    if follows && unread == operands.len() {
        cx.err(format_args!("{name}: no files remaining"));
    } else if follows {
        cx.err(format_args!(
            "{name}: not following (-f): documents do not grow here"
        ));
    }
    status
}

/// The count a plain `head ARGS` or `tail ARGS` takes of its standard
/// input: lines (`false`) or bytes, and how many; 10 lines without one.
/// `None` for anything else: a file operand, `head -n -N`, `tail -n +N`,
/// or an option other than `-n -c -q -v`. Read as the command reads its
/// arguments, with the same numbers and suffixes.
fn plain_count(which: Which, args: &[&str]) -> Option<(bool, u64)> {
    let args: Vec<String> = args.iter().map(|&a| a.to_owned()).collect();
    let args = obsolete(which, &args).ok()?;
    let other_sign = if which == Which::Head { '-' } else { '+' };
    let mut count = (false, 10);
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
        let Amount::Count(n) = amount(value, other_sign)? else {
            return None;
        };
        count = (bytes, n);
    }
    Some(count)
}

/// How much of its standard input `head ARGS` reads, when it reads only
/// the start of it: a count of lines or bytes and no file (see
/// [`plain_count`]).
pub(crate) fn head_reads(args: &[&str]) -> Option<Wanted> {
    Some(match plain_count(Which::Head, args)? {
        (true, n) => Wanted::Bytes(n),
        (false, n) => Wanted::Lines(n),
    })
}

/// Which end of its standard input `tail ARGS` prints, when it prints the
/// last lines or bytes of it and reads no file (see [`plain_count`]).
pub(crate) fn tail_prints(args: &[&str]) -> Option<Wanted> {
    Some(match plain_count(Which::Tail, args)? {
        // GNU's `tail -n 0` reads nothing.
        (_, 0) => Wanted::Bytes(0),
        (true, n) => Wanted::LastBytes(n),
        (false, n) => Wanted::LastLines(n),
    })
}

/// `head [-n [-]N | -N | -c [-]N] [-q] [-v] [-z] [FILE]...`.
pub(crate) fn head(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, Which::Head, args)
}

/// `tail [-n [+]N | -N | -c [+]N] [-q] [-v] [-z] [FILE]...`.
pub(crate) fn tail(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, Which::Tail, args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts() {
        let d = b"a\nb\nc\nd";
        assert_eq!(first_lines(d, 2, b'\n'), b"a\nb\n");
        assert_eq!(first_lines(d, 9, b'\n'), d);
        assert_eq!(last_lines(d, 2, b'\n'), b"c\nd");
        assert_eq!(last_lines(b"a\nb\nc\n", 2, b'\n'), b"b\nc\n");
        assert_eq!(last_lines(b"a\nb\n", 5, b'\n'), b"a\nb\n");
        assert_eq!(
            select(Which::Head, false, Amount::Other(1), d, b'\n'),
            b"a\nb\nc\n"
        );
        assert_eq!(
            select(Which::Tail, false, Amount::Other(3), d, b'\n'),
            b"c\nd"
        );
        assert_eq!(select(Which::Tail, false, Amount::Other(9), d, b'\n'), b"");
        assert_eq!(last_lines(b"a\0b\0c", 2, 0), b"b\0c");
        assert_eq!(amount("+5", '+'), Some(Amount::Other(5)));
        assert_eq!(amount("-5", '-'), Some(Amount::Other(5)));
        assert_eq!(amount("2K", '-'), Some(Amount::Count(2048)));
        assert_eq!(amount("x", '-'), None);
    }

    #[test]
    fn obsolete_counts_are_read_where_gnu_reads_them() {
        let read = |which, args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            obsolete(which, &args)
        };
        let ok = |v: &[&str]| Ok(v.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>());
        assert_eq!(read(Which::Head, &["-3", "f"]), ok(&["-n", "3", "f"]));
        assert_eq!(read(Which::Head, &["-2kqz"]), ok(&["-c", "2K", "-q", "-z"]));
        assert_eq!(
            read(Which::Head, &["-1", "-q", "f"]),
            ok(&["-n", "1", "-q", "f"])
        );
        assert_eq!(
            read(Which::Head, &["-q", "-1"]),
            Err("head: invalid trailing option -- 1".to_owned())
        );
        // A value of `-n` is no option.
        assert_eq!(read(Which::Head, &["-n", "-1"]), ok(&["-n", "-1"]));
        assert_eq!(read(Which::Tail, &["+2", "f"]), ok(&["-n", "+2", "f"]));
        assert_eq!(read(Which::Tail, &["-b"]), ok(&["-c", "10b"]));
        assert_eq!(
            read(Which::Tail, &["-3", "--", "f"]),
            ok(&["-n", "3", "--", "f"])
        );
        assert_eq!(read(Which::Tail, &["-c", "f"]), ok(&["-c", "f"]));
        assert_eq!(
            read(Which::Tail, &["-1", "f", "g"]),
            Err("tail: option used in invalid context -- 1".to_owned())
        );
        // After `--`, a file.
        assert_eq!(
            read(Which::Tail, &["-n", "1", "--", "-1"]),
            ok(&["-n", "1", "--", "-1"])
        );
    }
}
