//! `od`: GNU od's dump, field for field.
//!
//! Written after coreutils' `od.c` rather than taken from a crate, since no
//! crate prints od's layout: every type's fields share the block's width
//! (the widest type sets it, the others are padded as GNU spreads the
//! padding), floats print as `ftoastr` prints them (the shortest text that
//! reads back, at least `FLT_DIG`/`DBL_DIG` digits), a repeated line is a
//! `*`, and a file that cannot be opened is reported while the others are
//! dumped.

use crate::exec::{Cx, Window};

/// What one output type prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `a`: named characters.
    Named,
    /// `c`: printable characters and C escapes.
    Char,
    /// `d`, `o`, `u`, `x`: integers in that radix.
    Int(u8),
    /// `f`: IEEE floats.
    Float,
}

/// One `-t` type: what it prints, how many bytes a field reads, and
/// whether the line's text follows it (`z`).
#[derive(Debug, Clone, Copy)]
struct Type {
    kind: Kind,
    size: usize,
    text: bool,
}

impl Type {
    /// The characters a field takes at most (without its leading space).
    fn width(self) -> usize {
        match self.kind {
            Kind::Named | Kind::Char => 3,
            Kind::Int(r) => {
                let bits = self.size * 8;
                match r {
                    b'o' => bits.div_ceil(3),
                    b'x' => self.size * 2,
                    b'u' => unsigned_max(self.size).to_string().len(),
                    _ => {
                        (i128::from(unsigned_max(self.size) / 2) + 1)
                            .to_string()
                            .len()
                            + 1
                    }
                }
            }
            // ftoastr's bounds: sign, digits, point, `e-`, exponent.
            Kind::Float => {
                if self.size == 4 {
                    15
                } else {
                    24
                }
            }
        }
    }
}

fn unsigned_max(size: usize) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    }
}

/// Parses a `-t` string (several types may follow each other: `x1c`).
fn parse_types(spec: &str, out: &mut Vec<Type>) -> Result<(), String> {
    let b = spec.as_bytes();
    let mut i = 0;
    if b.is_empty() {
        return Err(format!("invalid type string '{spec}'"));
    }
    while i < b.len() {
        let c = b[i];
        i += 1;
        let kind = match c {
            b'a' => Kind::Named,
            b'c' => Kind::Char,
            b'd' | b'o' | b'u' | b'x' => Kind::Int(c),
            b'f' => Kind::Float,
            _ => {
                return Err(format!(
                    "invalid character '{}' in type string '{spec}'",
                    char::from(c)
                ));
            }
        };
        let mut size = match kind {
            Kind::Named | Kind::Char => 1,
            Kind::Int(_) => 4,
            Kind::Float => 8,
        };
        if matches!(kind, Kind::Int(_) | Kind::Float) {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i > start {
                size = spec[start..i].parse().unwrap_or(0);
            } else if let Some(&l) = b.get(i) {
                let named = match (kind, l) {
                    (Kind::Int(_), b'C') => Some(1),
                    (Kind::Int(_), b'S') => Some(2),
                    (Kind::Int(_), b'I') => Some(4),
                    (Kind::Int(_), b'L') => Some(8),
                    (Kind::Float, b'F') => Some(4),
                    (Kind::Float, b'D') => Some(8),
                    (Kind::Float, b'L') => Some(16),
                    _ => None,
                };
                if let Some(n) = named {
                    size = n;
                    i += 1;
                }
            }
            let ok = match kind {
                Kind::Float => size == 4 || size == 8,
                _ => matches!(size, 1 | 2 | 4 | 8),
            };
            if !ok {
                let what = if kind == Kind::Float {
                    "floating point"
                } else {
                    "integral"
                };
                return Err(format!(
                    "invalid type string '{spec}';\nthis system doesn't provide a {size}-byte {what} type"
                ));
            }
        }
        let text = b.get(i) == Some(&b'z');
        if text {
            i += 1;
        }
        out.push(Type { kind, size, text });
    }
    Ok(())
}

/// A byte count as od reads one: decimal, `0x` hex or `0` octal, with an
/// optional multiplier (`b` 512, `k`/`K` 1024, `m`/`M` 1024², `KB` 1000...).
fn count(s: &str) -> Option<u64> {
    let digits_end = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        2 + h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len())
    } else {
        s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len())
    };
    let (num, suffix) = s.split_at(digits_end);
    let n = if let Some(h) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if num.len() > 1 && num.starts_with('0') {
        u64::from_str_radix(&num[1..], 8).ok()?
    } else {
        num.parse().ok()?
    };
    let mult: u64 = match suffix {
        "" => 1,
        "b" => 512,
        "k" | "K" | "KiB" => 1 << 10,
        "m" | "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        "kB" | "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A float as GNU od prints it (`ftoastr`): `%.*g` at the smallest
/// precision from `FLT_DIG`/`DBL_DIG` up (from 1 for a subnormal) that
/// reads back to the same value.
fn float_text(v: f64, single: bool) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_owned();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // Rust's `{:e}` is the shortest text that reads back.
    let sci = if single {
        format!("{:e}", v as f32)
    } else {
        format!("{v:e}")
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let min = if single {
        f64::from(f32::MIN_POSITIVE)
    } else {
        f64::MIN_POSITIVE
    };
    let floor = if v.abs() < min {
        1
    } else if single {
        6
    } else {
        15
    };
    let precision = i32::try_from(digits.len()).unwrap_or(i32::MAX).max(floor);
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    if exp < -4 || exp >= precision {
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push_str(&format!(
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        ));
    } else if exp < 0 {
        s.push_str("0.");
        s.push_str(&"0".repeat(exp.unsigned_abs() as usize - 1));
        s.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            s.push_str(&digits);
            s.push_str(&"0".repeat(int_len - digits.len()));
        } else {
            s.push_str(&digits[..int_len]);
            s.push('.');
            s.push_str(&digits[int_len..]);
        }
    }
    s
}

const NAMES: [&str; 33] = [
    "nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "nl", "vt", "ff", "cr",
    "so", "si", "dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub", "esc",
    "fs", "gs", "rs", "us", "sp",
];

/// One field's text (without padding).
fn field(t: Type, bytes: &[u8], big: bool) -> String {
    let mut v: u64 = 0;
    for k in 0..t.size {
        let b = bytes.get(k).copied().unwrap_or(0);
        if big {
            v = (v << 8) | u64::from(b);
        } else {
            v |= u64::from(b) << (8 * k);
        }
    }
    match t.kind {
        Kind::Named => {
            let b = bytes[0] & 0x7f;
            match b {
                0..=32 => NAMES[usize::from(b)].to_owned(),
                127 => "del".to_owned(),
                _ => char::from(b).to_string(),
            }
        }
        Kind::Char => match bytes[0] {
            0 => "\\0".to_owned(),
            7 => "\\a".to_owned(),
            8 => "\\b".to_owned(),
            9 => "\\t".to_owned(),
            10 => "\\n".to_owned(),
            11 => "\\v".to_owned(),
            12 => "\\f".to_owned(),
            13 => "\\r".to_owned(),
            b @ 32..=126 => char::from(b).to_string(),
            b => format!("{b:03o}"),
        },
        Kind::Int(b'o') => format!("{v:0w$o}", w = t.width()),
        Kind::Int(b'x') => format!("{v:0w$x}", w = t.width()),
        Kind::Int(b'u') => v.to_string(),
        Kind::Int(_) => {
            let bits = t.size * 8;
            let signed = if bits == 64 {
                v as i64
            } else if (v >> (bits - 1)) & 1 == 1 {
                v as i64 - (1i64 << bits)
            } else {
                v as i64
            };
            signed.to_string()
        }
        Kind::Float => {
            if t.size == 4 {
                float_text(f64::from(f32::from_bits(v as u32)), true)
            } else {
                float_text(f64::from_bits(v), false)
            }
        }
    }
}

/// The options of one run.
struct Opts {
    types: Vec<Type>,
    radix: u8,
    skip: u64,
    limit: Option<u64>,
    verbose: bool,
    width: usize,
    big: bool,
}

fn usage_error(cx: &mut Cx<'_>, msg: impl std::fmt::Display) -> u8 {
    cx.err(format_args!("od: {msg}"));
    cx.err("Try 'od --help' for more information.");
    1
}

/// The long options, for GNU's unambiguous prefixes.
const LONG: &[&str] = &[
    "address-radix",
    "endian",
    "format",
    "output-duplicates",
    "read-bytes",
    "skip-bytes",
    "strings",
    "traditional",
    "width",
];

/// Parses the command line; `Err` is the exit status, the error written.
fn parse(cx: &mut Cx<'_>, args: &[String]) -> Result<(Opts, Vec<String>), u8> {
    let mut o = Opts {
        types: Vec::new(),
        radix: b'o',
        skip: 0,
        limit: None,
        verbose: false,
        width: 16,
        big: false,
    };
    let mut width_given = false;
    let mut files = Vec::new();
    let mut i = 0;
    // `spelled`: the option as given (`-N`, `--read-bytes`), which GNU's
    // messages name.
    let mut apply = |cx: &mut Cx<'_>,
                     o: &mut Opts,
                     opt: &str,
                     spelled: &str,
                     val: Option<&str>|
     -> Result<(), u8> {
        let bad_count = |cx: &mut Cx<'_>, v: &str| {
            cx.err(format_args!("od: invalid {spelled} argument '{v}'"));
            1
        };
        match opt {
            // Only the first character counts (`-A none`, as GNU reads it).
            "address-radix" => match val.unwrap_or("").chars().next() {
                Some(r @ ('d' | 'o' | 'x' | 'n')) => o.radix = r as u8,
                r => {
                    cx.err(format_args!(
                        "od: invalid output address radix '{}'; it must be one character from [doxn]",
                        r.unwrap_or('\0')
                    ));
                    return Err(1);
                }
            },
            "endian" => match val.unwrap_or("") {
                "big" => o.big = true,
                "little" => o.big = false,
                v => {
                    cx.err(format_args!("od: invalid argument '{v}' for '--endian'"));
                    cx.err("Valid arguments are:\n  - 'big'\n  - 'little'");
                    cx.err("Try 'od --help' for more information.");
                    return Err(1);
                }
            },
            "format" => {
                if let Err(e) = parse_types(val.unwrap_or(""), &mut o.types) {
                    cx.err(format_args!("od: {e}"));
                    return Err(1);
                }
            }
            "output-duplicates" => o.verbose = true,
            "read-bytes" => {
                let v = val.unwrap_or("");
                o.limit = Some(count(v).ok_or_else(|| bad_count(cx, v))?);
            }
            "skip-bytes" => {
                let v = val.unwrap_or("");
                o.skip = count(v).ok_or_else(|| bad_count(cx, v))?;
            }
            "width" => {
                width_given = true;
                o.width = match val {
                    None => 32,
                    // Zero is taken, and then warned about as a width
                    // that holds no whole block.
                    Some(v) => match count(v) {
                        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
                        None => return Err(bad_count(cx, v)),
                    },
                };
            }
            "traditional" => {}
            "strings" => {
                cx.err("od: -S (--strings) is not supported by vfs-sh's od; `strings -n N` prints the same strings");
                return Err(1);
            }
            _ => unreachable!("od option {opt}"),
        }
        Ok(())
    };
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" {
            files.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            let hits: Vec<&&str> = LONG.iter().filter(|l| l.starts_with(name)).collect();
            let opt = match hits.as_slice() {
                [one] => **one,
                _ if LONG.contains(&name) => name,
                [] => return Err(usage_error(cx, format_args!("unrecognized option '{a}'"))),
                _ => return Err(usage_error(cx, format_args!("option '{a}' is ambiguous"))),
            };
            let takes = match opt {
                "output-duplicates" | "traditional" => 0,
                "width" | "strings" => 1,
                _ => 2,
            };
            let val = match (takes, inline) {
                (0, Some(_)) => {
                    return Err(usage_error(
                        cx,
                        format_args!("option '--{opt}' doesn't allow an argument"),
                    ));
                }
                (2, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => {
                        return Err(usage_error(
                            cx,
                            format_args!("option '--{opt}' requires an argument"),
                        ));
                    }
                },
                (_, v) => v,
            };
            apply(cx, &mut o, opt, &format!("--{opt}"), val.as_deref())?;
            continue;
        }
        if a.len() < 2 || !a.starts_with('-') {
            files.push(a.clone());
            continue;
        }
        let b = a.as_bytes();
        let mut k = 1;
        while k < b.len() {
            let c = b[k];
            k += 1;
            let short = |s: &str, o: &mut Opts| parse_types(s, &mut o.types).map_err(|_| 1u8);
            match c {
                b'a' => short("a", &mut o)?,
                b'b' => short("o1", &mut o)?,
                b'c' => short("c", &mut o)?,
                b'D' => short("u4", &mut o)?,
                b'd' => short("u2", &mut o)?,
                b'e' | b'F' => short("fD", &mut o)?,
                b'f' => short("fF", &mut o)?,
                b'H' | b'X' => short("x4", &mut o)?,
                b'h' | b'x' => short("x2", &mut o)?,
                b'I' | b'L' | b'l' => short("dL", &mut o)?,
                b'i' => short("dI", &mut o)?,
                b'O' => short("o4", &mut o)?,
                b'o' => short("o2", &mut o)?,
                b's' => short("d2", &mut o)?,
                b'v' => o.verbose = true,
                b'B' => short("o2", &mut o)?,
                b'A' | b'j' | b'N' | b't' | b'S' | b'w' => {
                    let rest = &a[k..];
                    k = b.len();
                    let val = if !rest.is_empty() {
                        Some(rest.to_owned())
                    } else if c == b'w' {
                        None
                    } else {
                        match args.get(i) {
                            Some(v) => {
                                i += 1;
                                Some(v.clone())
                            }
                            None => {
                                return Err(usage_error(
                                    cx,
                                    format_args!(
                                        "option requires an argument -- '{}'",
                                        char::from(c)
                                    ),
                                ));
                            }
                        }
                    };
                    let opt = match c {
                        b'A' => "address-radix",
                        b'j' => "skip-bytes",
                        b'N' => "read-bytes",
                        b't' => "format",
                        b'S' => "strings",
                        _ => "width",
                    };
                    let spelled = format!("-{}", char::from(c));
                    apply(cx, &mut o, opt, &spelled, val.as_deref())?;
                }
                _ => {
                    return Err(usage_error(
                        cx,
                        format_args!("invalid option -- '{}'", char::from(c)),
                    ));
                }
            }
        }
    }
    if o.types.is_empty() {
        o.types.push(Type {
            kind: Kind::Int(b'o'),
            size: 2,
            text: false,
        });
    }
    // The block holds a whole number of every type's fields.
    let lcm = o.types.iter().fold(1, |l, t| l / gcd(l, t.size) * t.size);
    if o.width == 0 || !o.width.is_multiple_of(lcm) {
        if width_given {
            cx.err(format_args!(
                "od: warning: invalid width {}; using {lcm} instead",
                o.width
            ));
        }
        o.width = lcm;
    }
    Ok((o, files))
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `od [OPTION]... [FILE]...`
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let (o, files) = match parse(cx, args) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let files = if files.is_empty() {
        vec!["-".to_owned()]
    } else {
        files
    };
    let mut window = Window {
        skip: o.skip,
        limit: o.limit,
    };
    let mut dump = Dump::new(&o);
    let mut status = 0;
    let mut opened = false;
    for f in &files {
        if opened && window.is_spent() {
            break;
        }
        let read = cx.stream_window(f, &mut window, |cx, piece| dump.feed(cx, piece));
        match read {
            Ok(()) => opened = true,
            Err(e) => {
                // A directory opens, then fails to read: it still counts
                // as input that was opened.
                opened |= matches!(e, crate::fs::FsError::IsADirectory(_));
                cx.err(format_args!("od: {f}: {}", e.strerror()));
                status = 1;
            }
        }
    }
    if !opened {
        // Nothing could be read: GNU prints no dump, not even an offset.
        return status;
    }
    if window.skip > 0 {
        cx.err("od: cannot skip past end of combined input");
        return 1;
    }
    dump.finish(cx);
    status
}

/// The dump of the input, fed a piece at a time, so that a large document
/// is never held whole: a row is printed as soon as its bytes are in.
struct Dump<'o> {
    o: &'o Opts,
    /// The characters of every type's fields on a line (GNU's
    /// `width_per_block` and `pad_width`).
    line_width: usize,
    /// The bytes of the row not printed yet.
    row: Vec<u8>,
    /// The last row printed, to squeeze its repeats into a `*`.
    prev: Option<Vec<u8>>,
    starred: bool,
    /// The address of `row`'s first byte.
    offset: u64,
    out: String,
}

impl<'o> Dump<'o> {
    fn new(o: &'o Opts) -> Dump<'o> {
        let line_width = o
            .types
            .iter()
            .map(|t| (t.width() + 1) * (o.width / t.size))
            .max()
            .unwrap_or(0);
        Dump {
            o,
            line_width,
            row: Vec::with_capacity(o.width),
            prev: None,
            starred: false,
            offset: o.skip,
            out: String::new(),
        }
    }

    fn feed(&mut self, cx: &mut Cx<'_>, mut piece: &[u8]) {
        while !piece.is_empty() {
            let take = (self.o.width - self.row.len()).min(piece.len());
            self.row.extend_from_slice(&piece[..take]);
            piece = &piece[take..];
            if self.row.len() == self.o.width {
                self.print_row();
                // Written as it grows, not a piece's worth at once.
                if self.out.len() > 64 * 1024 {
                    cx.outs(&std::mem::take(&mut self.out));
                }
            }
        }
    }

    fn finish(mut self, cx: &mut Cx<'_>) {
        if !self.row.is_empty() {
            self.print_row();
        }
        if self.o.radix != b'n' {
            let end = self.address(self.offset);
            self.out.push_str(&end);
            self.out.push('\n');
        }
        cx.outs(&self.out);
    }

    fn address(&self, n: u64) -> String {
        match self.o.radix {
            b'd' => format!("{n:07}"),
            b'x' => format!("{n:06x}"),
            b'n' => String::new(),
            _ => format!("{n:07o}"),
        }
    }

    /// Prints `row` (a short one only at the end) and moves past it.
    fn print_row(&mut self) {
        let o = self.o;
        let chunk = std::mem::take(&mut self.row);
        let offset = self.offset;
        self.offset += chunk.len() as u64;
        if !o.verbose && self.prev.as_ref() == Some(&chunk) && chunk.len() == o.width {
            if !self.starred {
                self.out.push_str("*\n");
                self.starred = true;
            }
            self.row = chunk;
            self.row.clear();
            return;
        }
        self.starred = false;
        let addr_width = match o.radix {
            b'n' => 0,
            b'x' => 6,
            _ => 7,
        };
        for (k, t) in o.types.iter().enumerate() {
            if k == 0 {
                let a = self.address(offset);
                self.out.push_str(&a);
            } else {
                self.out.push_str(&" ".repeat(addr_width));
            }
            let fields = o.width / t.size;
            let blank = (o.width - chunk.len()) / t.size;
            let pad = self.line_width - t.width() * fields;
            let mut remaining = pad;
            for (n, i) in (blank + 1..=fields).rev().enumerate() {
                let next = pad * (i - 1) / fields;
                let w = remaining - next + t.width();
                let at = n * t.size;
                let text = field(*t, &chunk[at..chunk.len().min(at + t.size)], o.big);
                self.out.push_str(&format!("{text:>w$}"));
                remaining = next;
            }
            if t.text {
                self.out.push_str(&" ".repeat(blank * (t.width() + 1)));
                self.out.push_str("  >");
                self.out.push_str(&super::bytes::dotted(&chunk));
                self.out.push('<');
            }
            self.out.push('\n');
        }
        // The row's buffer is reused for the next row once kept as `prev`.
        self.row = self.prev.replace(chunk).unwrap_or_default();
        self.row.clear();
    }
}
