//! `python3 -m json.tool`: Python's JSON validator and pretty-printer, the
//! one piece of Python agents pipe documents through from a shell
//! (`cat f.json | python3 -m json.tool`). Any other use of `python3` is
//! answered with where Python code runs instead (`POST /v1/py`).
//!
//! Written by hand because the output is Python's, not JSON's in general:
//! CPython's scanner and its error positions (`Expecting ',' delimiter:
//! line 3 column 5 (char 20)`, counted in characters), `float.__repr__`
//! (`1e-05`, `100000.0`), arbitrary-size integers, `NaN`/`Infinity`,
//! duplicate keys kept in their first place with the last value,
//! `ensure_ascii` escapes (DEL included), standard input's
//! `surrogateescape`, a file's universal newlines and argparse's option
//! handling (prefixes, groups, its messages). No JSON crate keeps all of
//! these, and each shows in the output.

use crate::exec::Cx;
use crate::fs::FsError;

/// How `python -m json.tool` names itself in messages.
const PROG: &str = "python -m json.tool";

const USAGE: &str = "usage: python -m json.tool [-h] [--sort-keys] [--no-ensure-ascii]
                           [--json-lines]
                           [--indent INDENT | --tab | --no-indent | --compact]
                           [infile] [outfile]
";

const HELP: &str = "
A simple command line interface for json module to validate and pretty-print
JSON objects.

positional arguments:
  infile             a JSON file to be validated or pretty-printed
  outfile            write the output of infile to outfile

options:
  -h, --help         show this help message and exit
  --sort-keys        sort the output of dictionaries alphabetically by key
  --no-ensure-ascii  disable escaping of non-ASCII characters
  --json-lines       parse input using the JSON Lines format. Use with --no-
                     indent or --compact to produce valid JSON Lines output.
  --indent INDENT    separate items with newlines and use this number of
                     spaces for indentation
  --tab              separate items with newlines and use tabs for indentation
  --no-indent        separate items with spaces rather than newlines
  --compact          suppress all whitespace separation (most compact)
";

/// CPython's recursion limit as the scanner meets it under `runpy`: 990
/// nested containers decode, 991 do not.
const MAX_DEPTH: usize = 990;

/// Python ints longer than this are refused (`sys.get_int_max_str_digits`).
const MAX_INT_DIGITS: usize = 4300;

/// An indent longer than standard output's cap cannot show more; the
/// bound keeps one level's indent from taking the script's memory.
const MAX_INDENT: usize = 1 << 21;

/// `python3` and `python`.
pub(crate) fn run(cx: &mut Cx<'_>, name: &str, args: &[String]) -> u8 {
    let rest = match args {
        [m, module, rest @ ..] if m == "-m" && module == "json.tool" => rest,
        [m, rest @ ..] if m == "-mjson.tool" => rest,
        _ => {
            cx.err(format_args!(
                "{name}: vfs-sh runs only `{name} -m json.tool`; Python code runs \
                 in its own sandbox: POST /v1/py (or `vfsbox py`)"
            ));
            return 127;
        }
    };
    // argparse opens the input file as it meets the operand, so a file
    // that cannot be opened is reported before later arguments' errors.
    let mut open = |path: &str| -> Result<Vec<u8>, String> {
        cx.read_file_operand(path).map_err(|e| {
            format!(
                "argument infile: can't open '{path}': [Errno {}] {}: '{path}'",
                errno(&e),
                e.strerror()
            )
        })
    };
    let mut opts = match parse_args(rest, &mut open) {
        Ok(Parse::Run(o)) => o,
        Ok(Parse::Help) => {
            cx.outs(USAGE);
            cx.outs(HELP);
            return 0;
        }
        Err(msg) => {
            cx.err(USAGE.trim_end());
            cx.err(format_args!("{PROG}: error: {msg}"));
            return 2;
        }
    };
    let (data, from_stdin) = match opts.input.take() {
        Some(data) => (data, false),
        None => (cx.stdin(), true),
    };
    // Standard input decodes with `surrogateescape` and keeps its line
    // ends; a file opened by name decodes strictly, with universal
    // newlines.
    let text = if from_stdin {
        escape_surrogates(&data)
    } else {
        match strict_utf8(&data) {
            Ok(t) => universal_newlines(t),
            Err(msg) => {
                cx.err(msg);
                return 1;
            }
        }
    };
    let mut out = Writer::new(&opts);
    let docs: Vec<&[u8]> = if opts.json_lines {
        lines(&text).collect()
    } else {
        vec![&text[..]]
    };
    for doc in docs {
        match decode(doc) {
            Ok(v) => {
                out.value(&mut |b| cx.out(b), &v, 0);
                if let Some(msg) = out.failed.take() {
                    out.flush(&mut |b| cx.out(b));
                    cx.err(msg);
                    return 1;
                }
                out.buf.push(b'\n');
                out.flush(&mut |b| cx.out(b));
            }
            Err(msg) => {
                out.flush(&mut |b| cx.out(b));
                cx.err(msg);
                return 1;
            }
        }
    }
    if let Some(path) = opts.outfile.as_deref()
        && !matches!(path, "/dev/stdout" | "/dev/null" | "/dev/stderr")
    {
        cx.err(format_args!(
            "{PROG}: cannot write '{path}': the filesystem is read-only"
        ));
        return 1;
    }
    0
}

/// The errno Python reports for a file it cannot open.
fn errno(e: &FsError) -> u8 {
    match e {
        FsError::NotFound(_) => 2,
        FsError::NotADirectory(_) => 20,
        FsError::IsADirectory(_) => 21,
        FsError::Denied(_) => 13,
        FsError::InvalidPath(why) if why.contains("longer") => 36,
        FsError::InvalidPath(why) if why.contains("empty") => 2,
        FsError::InvalidPath(_) => 22,
        FsError::Unavailable(_) => 5,
    }
}

/// The indentation between items.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Indent {
    /// `--indent N` (a negative N indents by nothing, as `' ' * N` does).
    Spaces(usize),
    /// `--tab`.
    Tab,
    /// `--no-indent`: one line, `, ` and `: ` between items.
    None,
    /// `--compact`: one line, `,` and `:`.
    Compact,
}

#[derive(Debug)]
struct Options {
    sort_keys: bool,
    ensure_ascii: bool,
    json_lines: bool,
    indent: Indent,
    /// The input file's bytes; standard input when there is none (or
    /// it is `-`).
    input: Option<Vec<u8>>,
    outfile: Option<String>,
}

enum Parse {
    Run(Options),
    Help,
}

/// The long options, in the order argparse lists them in an ambiguity.
const LONG: &[&str] = &[
    "--help",
    "--sort-keys",
    "--no-ensure-ascii",
    "--json-lines",
    "--indent",
    "--tab",
    "--no-indent",
    "--compact",
];

/// Parses the options as argparse does: long options by any unambiguous
/// prefix, `--indent N` and `--indent=N`, one of the indent group, up to
/// two positionals, unknown arguments reported together at the end.
fn parse_args(
    args: &[String],
    open: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<Parse, String> {
    let mut o = Options {
        sort_keys: false,
        ensure_ascii: true,
        json_lines: false,
        indent: Indent::Spaces(4),
        input: None,
        outfile: None,
    };
    let mut group: Option<&'static str> = None;
    let mut positionals = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    let mut i = 0;
    let mut only_positionals = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if only_positionals || a == "-" || !a.starts_with('-') || is_negative_number(a) {
            if positionals.is_empty() && a != "-" {
                o.input = Some(open(a)?);
            }
            positionals.push(a.clone());
            continue;
        }
        if a == "--" {
            only_positionals = true;
            continue;
        }
        let (word, explicit) = match a.split_once('=') {
            Some((w, v)) if a.starts_with("--") => (w, Some(v)),
            _ => (a.as_str(), None),
        };
        let option = if word == "-h" {
            "--help"
        } else if word.starts_with("--") {
            let hits: Vec<&str> = LONG
                .iter()
                .copied()
                .filter(|l| l.starts_with(word))
                .collect();
            match hits.as_slice() {
                [one] => *one,
                [] => {
                    unknown.push(a.clone());
                    continue;
                }
                many => {
                    if let Some(exact) = many.iter().find(|l| **l == word) {
                        *exact
                    } else {
                        return Err(format!(
                            "ambiguous option: {word} could match {}",
                            many.join(", ")
                        ));
                    }
                }
            }
        } else {
            unknown.push(a.clone());
            continue;
        };
        if option != "--indent"
            && let Some(v) = explicit
        {
            return Err(format!(
                "argument {}: ignored explicit argument '{v}'",
                shown(option)
            ));
        }
        if matches!(option, "--indent" | "--tab" | "--no-indent" | "--compact") {
            if let Some(prev) = group.filter(|p| *p != option) {
                return Err(format!(
                    "argument {option}: not allowed with argument {prev}"
                ));
            }
            group = Some(option);
        }
        match option {
            "--help" => return Ok(Parse::Help),
            "--sort-keys" => o.sort_keys = true,
            "--no-ensure-ascii" => o.ensure_ascii = false,
            "--json-lines" => o.json_lines = true,
            "--tab" => o.indent = Indent::Tab,
            "--no-indent" => o.indent = Indent::None,
            "--compact" => o.indent = Indent::Compact,
            _ => {
                let value = match explicit {
                    Some(v) => v.to_owned(),
                    None => match args.get(i) {
                        Some(v) if !v.starts_with('-') || is_negative_number(v) => {
                            i += 1;
                            v.clone()
                        }
                        _ => return Err("argument --indent: expected one argument".to_owned()),
                    },
                };
                let n = python_int(&value)
                    .ok_or_else(|| format!("argument --indent: invalid int value: '{value}'"))?;
                o.indent = Indent::Spaces(usize::try_from(n.max(0)).unwrap_or(0).min(MAX_INDENT));
            }
        }
    }
    let mut positionals = positionals.into_iter().skip(1);
    o.outfile = positionals.next();
    unknown.extend(positionals);
    if !unknown.is_empty() {
        return Err(format!("unrecognized arguments: {}", unknown.join(" ")));
    }
    Ok(Parse::Run(o))
}

/// How argparse names an option in a message: by its first spelling.
fn shown(option: &str) -> &str {
    if option == "--help" {
        "-h/--help"
    } else {
        option
    }
}

/// argparse takes `-1` as a value, not an option, when no option looks
/// like a number.
fn is_negative_number(a: &str) -> bool {
    a.strip_prefix('-').is_some_and(|d| {
        !d.is_empty()
            && d.parse::<f64>().is_ok()
            && d.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    })
}

/// Python's `int(s)`: surrounding whitespace, a sign, digits with single
/// underscores between them.
fn python_int(s: &str) -> Option<i64> {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let n: i64 = clean.parse().unwrap_or(i64::MAX);
    Some(if neg { -n } else { n })
}

// --- Decoding the input ------------------------------------------------------

/// Bytes as Python's `surrogateescape` decodes them, kept as generalized
/// UTF-8 (WTF-8): each byte of an invalid sequence becomes the lone
/// surrogate U+DC80..U+DCFF, three bytes `ED B2/B3 xx`.
fn escape_surrogates(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut rest = data;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.extend_from_slice(s.as_bytes());
                return out;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.extend_from_slice(good);
                let n = e.error_len().unwrap_or(bad.len());
                for &b in &bad[..n] {
                    push_cp(&mut out, 0xDC00 + u32::from(b));
                }
                rest = &bad[n..];
            }
        }
    }
}

/// Strict UTF-8, or Python's `UnicodeDecodeError` message.
fn strict_utf8(data: &[u8]) -> Result<&[u8], String> {
    match std::str::from_utf8(data) {
        Ok(_) => Ok(data),
        Err(e) => {
            let at = e.valid_up_to();
            let lead = data[at];
            let (end, why) = match e.error_len() {
                None => (data.len(), "unexpected end of data"),
                Some(n) if (0xC2..=0xF4).contains(&lead) => (at + n, "invalid continuation byte"),
                Some(n) => (at + n, "invalid start byte"),
            };
            let bytes = if end - at == 1 {
                format!("byte 0x{lead:02x} in position {at}")
            } else {
                format!("bytes in position {at}-{}", end - 1)
            };
            Err(format!("'utf-8' codec can't decode {bytes}: {why}"))
        }
    }
}

/// A file read in text mode: `\r\n` and a lone `\r` become `\n`.
fn universal_newlines(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        if data[i] == b'\r' {
            out.push(b'\n');
            if data.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
        } else {
            out.push(data[i]);
        }
        i += 1;
    }
    out
}

/// The lines `for line in file` gives, each with its newline.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split_inclusive(|&b| b == b'\n')
}

/// A decoded value. Strings are generalized UTF-8, which keeps lone
/// surrogates and sorts as Python's `str` does (by code point).
#[derive(Debug)]
enum Value {
    Null,
    Bool(bool),
    /// An integer's digits, with `-` when negative (`-0` is `0`).
    Int(String),
    Float(f64),
    Str(Vec<u8>),
    Array(Vec<Value>),
    /// Keys in first-seen order; a repeated key's last value wins.
    Object(Vec<(Vec<u8>, Value)>),
}

/// A decoding error: CPython's message and the byte offset it names.
struct Error {
    msg: String,
    at: usize,
}

fn fail<T>(msg: impl Into<String>, at: usize) -> Result<T, Error> {
    Err(Error {
        msg: msg.into(),
        at,
    })
}

/// `json.loads` on one document, or the message `json.tool` exits with.
fn decode(doc: &[u8]) -> Result<Value, String> {
    let mut p = Parser { s: doc, depth: 0 };
    let result = if doc.starts_with("\u{feff}".as_bytes()) {
        fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
    } else {
        let start = p.skip_ws(0);
        p.value(start).and_then(|(v, end)| {
            let end = p.skip_ws(end);
            if end == doc.len() {
                Ok(v)
            } else {
                fail("Extra data", end)
            }
        })
    };
    result.map_err(|e| {
        if e.at == usize::MAX {
            return e.msg;
        }
        // Python counts characters; a lone surrogate is one.
        let before = &doc[..e.at.min(doc.len())];
        let pos = chars(before);
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = match before.iter().rposition(|&b| b == b'\n') {
            Some(nl) => chars(&before[nl + 1..]) + 1,
            None => pos + 1,
        };
        format!("{}: line {line} column {col} (char {pos})", e.msg)
    })
}

/// The characters in generalized UTF-8: every byte but a continuation
/// byte starts one.
fn chars(s: &[u8]) -> usize {
    s.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

/// A value and the offset after it, or where and why decoding stopped.
type Scanned = Result<(Value, usize), Error>;

struct Parser<'a> {
    s: &'a [u8],
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&self, mut i: usize) -> usize {
        while matches!(self.s.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    }

    /// CPython's `scan_once`: one value at `i`; the value and the offset
    /// after it.
    fn value(&mut self, i: usize) -> Scanned {
        let s = self.s;
        let lit = |word: &str| s[i..].starts_with(word.as_bytes());
        match s.get(i) {
            None => fail("Expecting value", i),
            Some(b'"') => {
                let (text, end) = self.string(i + 1)?;
                Ok((Value::Str(text), end))
            }
            Some(b'{') => self.nested(i, "object", Self::object),
            Some(b'[') => self.nested(i, "array", Self::array),
            Some(b'n') if lit("null") => Ok((Value::Null, i + 4)),
            Some(b't') if lit("true") => Ok((Value::Bool(true), i + 4)),
            Some(b'f') if lit("false") => Ok((Value::Bool(false), i + 5)),
            Some(b'N') if lit("NaN") => Ok((Value::Float(f64::NAN), i + 3)),
            Some(b'I') if lit("Infinity") => Ok((Value::Float(f64::INFINITY), i + 8)),
            Some(b'-') if lit("-Infinity") => Ok((Value::Float(f64::NEG_INFINITY), i + 9)),
            Some(_) => self.number(i),
        }
    }

    fn nested(&mut self, i: usize, what: &str, parse: fn(&mut Self, usize) -> Scanned) -> Scanned {
        if self.depth >= MAX_DEPTH {
            return Err(Error {
                msg: format!(
                    "RecursionError: maximum recursion depth exceeded while decoding a JSON {what} from a unicode string"
                ),
                at: usize::MAX,
            });
        }
        self.depth += 1;
        let r = parse(self, i + 1);
        self.depth -= 1;
        r
    }

    fn object(&mut self, start: usize) -> Scanned {
        let mut pairs: Vec<(Vec<u8>, Value)> = Vec::new();
        let mut index: std::collections::HashMap<Vec<u8>, usize> = Default::default();
        let mut i = self.skip_ws(start);
        if self.s.get(i) == Some(&b'}') {
            return Ok((Value::Object(pairs), i + 1));
        }
        loop {
            if self.s.get(i) != Some(&b'"') {
                return fail("Expecting property name enclosed in double quotes", i);
            }
            let (key, next) = self.string(i + 1)?;
            i = self.skip_ws(next);
            if self.s.get(i) != Some(&b':') {
                return fail("Expecting ':' delimiter", i);
            }
            i = self.skip_ws(i + 1);
            let (v, next) = self.value(i)?;
            match index.get(&key) {
                Some(&k) => pairs[k].1 = v,
                None => {
                    index.insert(key.clone(), pairs.len());
                    pairs.push((key, v));
                }
            }
            i = self.skip_ws(next);
            match self.s.get(i) {
                Some(b'}') => return Ok((Value::Object(pairs), i + 1)),
                Some(b',') => i = self.skip_ws(i + 1),
                _ => return fail("Expecting ',' delimiter", i),
            }
        }
    }

    fn array(&mut self, start: usize) -> Scanned {
        let mut items = Vec::new();
        let mut i = self.skip_ws(start);
        if self.s.get(i) == Some(&b']') {
            return Ok((Value::Array(items), i + 1));
        }
        loop {
            let (v, next) = self.value(i)?;
            items.push(v);
            i = self.skip_ws(next);
            match self.s.get(i) {
                Some(b']') => return Ok((Value::Array(items), i + 1)),
                Some(b',') => i = self.skip_ws(i + 1),
                _ => return fail("Expecting ',' delimiter", i),
            }
        }
    }

    /// CPython's `_match_number`: `-`? int frac? exp?, where a `.` or an
    /// `e` without digits after it is left for the caller ("Extra data").
    fn number(&mut self, start: usize) -> Scanned {
        let s = self.s;
        let digit = |k: usize| s.get(k).is_some_and(u8::is_ascii_digit);
        let mut i = start;
        if s.get(i) == Some(&b'-') {
            i += 1;
        }
        match s.get(i) {
            Some(b'1'..=b'9') => {
                while digit(i) {
                    i += 1;
                }
            }
            Some(b'0') => i += 1,
            _ => return fail("Expecting value", start),
        }
        let mut is_float = false;
        if s.get(i) == Some(&b'.') && digit(i + 1) {
            is_float = true;
            i += 2;
            while digit(i) {
                i += 1;
            }
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            let mut k = i + 1;
            if matches!(s.get(k), Some(b'+' | b'-')) {
                k += 1;
            }
            if digit(k) {
                while digit(k) {
                    k += 1;
                }
                is_float = true;
                i = k;
            }
        }
        let text = std::str::from_utf8(&s[start..i]).unwrap_or("0");
        if is_float {
            return Ok((Value::Float(text.parse().unwrap_or(f64::NAN)), i));
        }
        let (neg, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text),
        };
        if digits.len() > MAX_INT_DIGITS {
            return Err(Error {
                msg: format!(
                    "Exceeds the limit ({MAX_INT_DIGITS} digits) for integer string conversion: \
                     value has {} digits; use sys.set_int_max_str_digits() to increase the limit",
                    digits.len()
                ),
                at: usize::MAX,
            });
        }
        let int = if neg && digits != "0" {
            format!("-{digits}")
        } else {
            digits.to_owned()
        };
        Ok((Value::Int(int), i))
    }

    /// CPython's `scanstring` from just after the opening quote: the text
    /// and the offset after the closing quote.
    fn string(&mut self, start: usize) -> Result<(Vec<u8>, usize), Error> {
        let s = self.s;
        let begin = start - 1;
        let mut out = Vec::new();
        let mut i = start;
        loop {
            let run = i;
            while let Some(&b) = s.get(i) {
                if b == b'"' || b == b'\\' {
                    break;
                }
                if b <= 0x1f {
                    return fail("Invalid control character at", i);
                }
                i += 1;
            }
            out.extend_from_slice(&s[run..i]);
            match s.get(i) {
                None => return fail("Unterminated string starting at", begin),
                Some(b'"') => return Ok((out, i + 1)),
                Some(_) => {}
            }
            // A backslash at `i`.
            let Some(&c) = s.get(i + 1) else {
                return fail("Unterminated string starting at", begin);
            };
            if c != b'u' {
                let byte = match c {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    _ => return fail("Invalid \\escape", i),
                };
                out.push(byte);
                i += 2;
                continue;
            }
            // `\uXXXX` at `i`; the `u` is at `i + 1`. CPython wants the
            // four digits and something after them.
            let u = i + 1;
            if u + 5 >= s.len() {
                return fail("Invalid \\uXXXX escape", u);
            }
            let mut cp = hex4(&s[u + 1..u + 5]).ok_or(Error {
                msg: "Invalid \\uXXXX escape".into(),
                at: u,
            })?;
            i = u + 5;
            if (0xD800..0xDC00).contains(&cp)
                && i + 6 < s.len()
                && s[i] == b'\\'
                && s[i + 1] == b'u'
            {
                let low = hex4(&s[i + 2..i + 6]).ok_or(Error {
                    msg: "Invalid \\uXXXX escape".into(),
                    at: i + 1,
                })?;
                if (0xDC00..0xE000).contains(&low) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    i += 6;
                }
            }
            push_cp(&mut out, cp);
        }
    }
}

fn hex4(h: &[u8]) -> Option<u32> {
    h.iter().try_fold(0u32, |acc, &b| {
        let d = char::from(b).to_digit(16)?;
        Some(acc * 16 + d)
    })
}

/// Appends a code point, a surrogate included, as generalized UTF-8.
fn push_cp(out: &mut Vec<u8>, cp: u32) {
    match char::from_u32(cp) {
        Some(c) => {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        None => out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
    }
}

/// The code points of generalized UTF-8.
fn code_points(s: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let b = *s.get(i)?;
        let (len, init) = match b {
            0..=0x7F => (1, u32::from(b)),
            0xC0..=0xDF => (2, u32::from(b & 0x1F)),
            0xE0..=0xEF => (3, u32::from(b & 0x0F)),
            _ => (4, u32::from(b & 0x07)),
        };
        let cp = s
            .get(i + 1..i + len)
            .unwrap_or(&[])
            .iter()
            .fold(init, |acc, &c| (acc << 6) | u32::from(c & 0x3F));
        i += len;
        Some(cp)
    })
}

// --- Encoding the output -----------------------------------------------------

/// `json.dump` with `json.tool`'s settings, into a buffer flushed to
/// standard output as it grows.
struct Writer {
    buf: Vec<u8>,
    sort_keys: bool,
    ensure_ascii: bool,
    indent: Option<Vec<u8>>,
    item_sep: &'static [u8],
    key_sep: &'static [u8],
    /// Python's `UnicodeEncodeError` for a lone surrogate that standard
    /// output cannot encode; the output stops before the string.
    failed: Option<String>,
}

impl Writer {
    fn new(o: &Options) -> Writer {
        let (indent, item_sep, key_sep): (_, &'static [u8], &'static [u8]) = match &o.indent {
            Indent::Spaces(n) => (Some(vec![b' '; *n]), b",", b": "),
            Indent::Tab => (Some(b"\t".to_vec()), b",", b": "),
            Indent::None => (None, b", ", b": "),
            Indent::Compact => (None, b",", b":"),
        };
        Writer {
            buf: Vec::new(),
            sort_keys: o.sort_keys,
            ensure_ascii: o.ensure_ascii,
            indent,
            item_sep,
            key_sep,
            failed: None,
        }
    }

    fn flush(&mut self, sink: &mut dyn FnMut(&[u8])) {
        sink(&self.buf);
        self.buf.clear();
    }

    fn newline(&mut self, sink: &mut dyn FnMut(&[u8]), level: usize) {
        if let Some(ind) = &self.indent {
            self.buf.push(b'\n');
            for _ in 0..level {
                self.buf.extend_from_slice(ind);
            }
        }
        if self.buf.len() >= 1 << 16 {
            self.flush(sink);
        }
    }

    fn value(&mut self, sink: &mut dyn FnMut(&[u8]), v: &Value, level: usize) {
        if self.failed.is_some() {
            return;
        }
        match v {
            Value::Null => self.buf.extend_from_slice(b"null"),
            Value::Bool(b) => self
                .buf
                .extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Int(digits) => self.buf.extend_from_slice(digits.as_bytes()),
            Value::Float(f) => self.buf.extend_from_slice(float_repr(*f).as_bytes()),
            Value::Str(s) => self.string(s),
            Value::Array(items) if items.is_empty() => self.buf.extend_from_slice(b"[]"),
            Value::Array(items) => {
                self.buf.push(b'[');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        self.buf.extend_from_slice(self.item_sep);
                    }
                    self.newline(sink, level + 1);
                    self.value(sink, item, level + 1);
                }
                self.newline(sink, level);
                self.buf.push(b']');
            }
            Value::Object(pairs) if pairs.is_empty() => self.buf.extend_from_slice(b"{}"),
            Value::Object(pairs) => {
                let mut order: Vec<&(Vec<u8>, Value)> = pairs.iter().collect();
                if self.sort_keys {
                    order.sort_by(|a, b| a.0.cmp(&b.0));
                }
                self.buf.push(b'{');
                for (k, (key, item)) in order.into_iter().enumerate() {
                    if k > 0 {
                        self.buf.extend_from_slice(self.item_sep);
                    }
                    self.newline(sink, level + 1);
                    self.string(key);
                    self.buf.extend_from_slice(self.key_sep);
                    self.value(sink, item, level + 1);
                }
                self.newline(sink, level);
                self.buf.push(b'}');
            }
        }
    }

    /// A string as `encode_basestring(_ascii)` writes it.
    fn string(&mut self, s: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        let start = self.buf.len();
        let out = &mut self.buf;
        out.push(b'"');
        for (k, cp) in code_points(s).enumerate() {
            match cp {
                0x22 => out.extend_from_slice(b"\\\""),
                0x5C => out.extend_from_slice(b"\\\\"),
                0x0A => out.extend_from_slice(b"\\n"),
                0x0D => out.extend_from_slice(b"\\r"),
                0x09 => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0C => out.extend_from_slice(b"\\f"),
                0..=0x1F => out.extend_from_slice(format!("\\u{cp:04x}").as_bytes()),
                0x20..=0x7E => out.push(cp as u8),
                _ if self.ensure_ascii => {
                    if cp > 0xFFFF {
                        let v = cp - 0x10000;
                        let (hi, lo) = (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                        out.extend_from_slice(format!("\\u{hi:04x}\\u{lo:04x}").as_bytes());
                    } else {
                        out.extend_from_slice(format!("\\u{cp:04x}").as_bytes());
                    }
                }
                // Standard output encodes with `surrogateescape`: an
                // escaped byte goes out as itself. Another lone surrogate
                // cannot be encoded, and Python stops there.
                0xDC80..=0xDCFF => out.push((cp - 0xDC00) as u8),
                0xD800..=0xDFFF => {
                    out.truncate(start);
                    self.failed = Some(format!(
                        "'utf-8' codec can't encode character '\\u{cp:04x}' in position {}: \
                         surrogates not allowed",
                        k + 1
                    ));
                    return;
                }
                _ => push_cp(out, cp),
            }
        }
        out.push(b'"');
    }
}

/// Python's `float.__repr__`: the shortest digits that round-trip, in
/// positional form for exponents from -4 to 15 (with `.0` when whole), in
/// exponent form otherwise (`1e-05`, `1.5e+16`); JSON's names for the
/// non-finite values.
fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // `{:e}` gives the shortest round-trip digits: `1.2345e-5`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        let zeros = "0".repeat(point.unsigned_abs() as usize);
        return format!("{sign}0.{zeros}{digits}");
    }
    let point = point as usize;
    if digits.len() <= point {
        let zeros = "0".repeat(point - digits.len());
        format!("{sign}{digits}{zeros}.0")
    } else {
        format!("{sign}{}.{}", &digits[..point], &digits[point..])
    }
}

/// For the fuzz target: decodes `input` as standard input, and when it is
/// JSON, checks that the output decodes to itself (written twice, the
/// same bytes); returns the output's length.
pub(crate) fn check(input: &[u8]) -> usize {
    let text = escape_surrogates(input);
    let Ok(value) = decode(&text) else {
        return 0;
    };
    let options = Options {
        sort_keys: false,
        ensure_ascii: true,
        json_lines: false,
        indent: Indent::Spaces(4),
        input: None,
        outfile: None,
    };
    let write = |v: &Value| {
        let mut w = Writer::new(&options);
        let mut all = Vec::new();
        w.value(&mut |b| all.extend_from_slice(b), v, 0);
        w.flush(&mut |b| all.extend_from_slice(b));
        all
    };
    let once = write(&value);
    let again = decode(&once).map(|v| write(&v));
    assert_eq!(
        again.as_deref(),
        Ok(&once[..]),
        "the output reads back as itself"
    );
    once.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_repr() {
        for (x, want) in [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (2.5, "2.5"),
            (1e5, "100000.0"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (123.456, "123.456"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (0.1 + 0.2, "0.30000000000000004"),
            (12345678901234567.0, "1.2345678901234568e+16"),
        ] {
            assert_eq!(float_repr(x), want, "{x}");
        }
    }

    #[test]
    fn errors_name_python_positions() {
        let msg = |s: &str| decode(s.as_bytes()).err().unwrap_or_default();
        assert_eq!(msg(""), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(
            msg("{\"a\":1,}"),
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"
        );
        assert_eq!(
            msg("{\n  \"a\": 1\n  \"b\": 2}"),
            "Expecting ',' delimiter: line 3 column 3 (char 13)"
        );
        assert_eq!(
            msg("\"\u{e9}\\x\""),
            "Invalid \\escape: line 1 column 3 (char 2)"
        );
        assert_eq!(msg("01"), "Extra data: line 1 column 2 (char 1)");
    }

    #[test]
    fn surrogateescape_round_trips_bytes() {
        let s = escape_surrogates(b"a\xffb");
        assert_eq!(
            code_points(&s).collect::<Vec<_>>(),
            vec![0x61, 0xDCFF, 0x62]
        );
    }
}
