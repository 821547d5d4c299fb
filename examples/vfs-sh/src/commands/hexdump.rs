//! `hexdump` and `hd`: a port of util-linux's format engine (2.38), so that
//! `-b -c -C -d -o -x`, `-e` and `-f` print what it prints.
//!
//! A format string is a list of units, `[REPS][/BYTES] "FORMAT"`. Each unit
//! is broken into print units, one per `%` conversion. Every format string
//! is applied to each block of input, where a block is as long as the
//! longest format string consumes; a block equal to the one before is shown
//! as a single `*` (unless `-v`); the last, short block is zero-filled and
//! the conversions past the end of the data print blanks of their width;
//! `%_A` prints the final address once, after all input.
//!
//! Written by hand: no crate reproduces util-linux's rules (its block
//! sizes, the repetition of a format string's last unit to fill a block,
//! the last repetition's trailing space, the padding at the end of data).

use super::printf::format_once;
use super::{flag, options, value};
use crate::exec::{Cx, Window};

/// What a print unit prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Only text.
    Text,
    /// `%_a[dox]`, `%_A[dox]`: the address of the block's byte.
    Address,
    /// A conversion past the end of the data: blanks of its width.
    Blank,
    /// `%_c`: a character, a C escape or three octal digits.
    CharEscaped,
    /// `%c`: the byte.
    Char,
    /// `%e %f %g %E %G`: a 4- or 8-byte float.
    Float,
    /// `%d %i`: a signed integer of 1, 2, 4 or 8 bytes.
    Int,
    /// `%_p`: the character, or `.` when it is not printable.
    Printable,
    /// `%s`: the bytes up to a NUL.
    Str,
    /// `%_u`: a character, or the ASCII name of a control character.
    Named,
    /// `%o %u %x %X`: an unsigned integer of 1, 2, 4 or 8 bytes.
    Uint,
}

/// One conversion with the text before it (or text alone).
#[derive(Debug, Clone)]
struct Print {
    kind: Kind,
    /// The text before the `%` (all of it for `Kind::Text`).
    text: String,
    /// Flags, width and precision, between the `%` and the conversion.
    spec: String,
    /// The conversion character (`x`, `d`, `o`...; `c` for `%_c`).
    conv: char,
    /// How many bytes of the block it reads.
    bytes: usize,
    /// Drop the last character of the text on the unit's last repetition
    /// (the last print unit's trailing space).
    nospace: bool,
}

#[derive(Debug, Clone)]
struct Unit {
    reps: usize,
    bytes: usize,
    /// The repetition count was given.
    set_reps: bool,
    /// A `%_A` unit: printed once, at the end.
    at_end: bool,
    text: String,
    prints: Vec<Print>,
}

#[derive(Debug, Clone)]
struct FormatString {
    units: Vec<Unit>,
    bytes: usize,
}

fn bad_format(fmt: &str) -> String {
    format!("bad format {{{fmt}}}")
}

/// `\a \b \f \n \r \t \v`, and `\X` for any other X, as util-linux reads
/// them in a unit's format.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut cs = s.chars();
    while let Some(c) = cs.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match cs.next() {
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\x0b'),
            Some(o) => out.push(o),
            None => {}
        }
    }
    out
}

/// Reads a leading decimal number, as `strtol` does.
fn number(s: &[u8], at: usize) -> Option<(usize, usize)> {
    let end = at + s[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    let n = std::str::from_utf8(&s[at..end]).ok()?.parse().ok()?;
    Some((n, end))
}

fn skip_space(s: &[u8], mut at: usize) -> usize {
    while s.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// `add_fmt`: a format string's units.
fn parse_format(fmt: &str) -> Result<FormatString, String> {
    let s = fmt.as_bytes();
    let mut units = Vec::new();
    let mut p = 0;
    loop {
        p = skip_space(s, p);
        if p >= s.len() {
            break;
        }
        let mut unit = Unit {
            reps: 1,
            bytes: 0,
            set_reps: false,
            at_end: false,
            text: String::new(),
            prints: Vec::new(),
        };
        if s[p].is_ascii_digit() {
            let (n, end) = number(s, p).ok_or_else(|| bad_format(fmt))?;
            if !s
                .get(end)
                .is_some_and(|&b| b.is_ascii_whitespace() || b == b'/')
            {
                return Err(bad_format(fmt));
            }
            unit.reps = n;
            unit.set_reps = true;
            // Past the space or slash after the count.
            p = skip_space(s, end + 1);
        }
        if s.get(p) == Some(&b'/') {
            p = skip_space(s, p + 1);
        }
        if s.get(p).is_some_and(u8::is_ascii_digit) {
            let (n, end) = number(s, p).ok_or_else(|| bad_format(fmt))?;
            if !s.get(end).is_some_and(u8::is_ascii_whitespace) {
                return Err(bad_format(fmt));
            }
            unit.bytes = n;
            p = skip_space(s, end + 1);
        }
        if s.get(p) != Some(&b'"') {
            return Err(bad_format(fmt));
        }
        let start = p + 1;
        let Some(len) = s[start..].iter().position(|&b| b == b'"') else {
            return Err(bad_format(fmt));
        };
        unit.text = unescape(&fmt[start..start + len]);
        p = start + len + 1;
        units.push(unit);
    }
    Ok(FormatString { units, bytes: 0 })
}

/// Flags, width and precision characters (`spec` in util-linux).
const SPEC: &str = ".#-+ 0123456789";

/// `block_size`: the bytes one pass of a format string reads.
fn block_size(fs: &FormatString) -> Result<usize, String> {
    let mut size = 0;
    for u in &fs.units {
        if u.bytes > 0 {
            size = u
                .bytes
                .checked_mul(u.reps)
                .and_then(|n| n.checked_add(size))
                .ok_or(TOO_LARGE)?;
            continue;
        }
        let f: Vec<char> = u.text.chars().collect();
        let mut bytes: usize = 0;
        let mut i = 0;
        while i < f.len() {
            if f[i] != '%' {
                i += 1;
                continue;
            }
            i += 1;
            while f.get(i).is_some_and(|&c| SPEC[1..].contains(c)) {
                i += 1;
            }
            let mut precision = 0;
            if f.get(i) == Some(&'.') && f.get(i + 1).is_some_and(char::is_ascii_digit) {
                i += 1;
                let digits: String = f[i..].iter().take_while(|c| c.is_ascii_digit()).collect();
                i += digits.len();
                precision = digits.parse().unwrap_or(0);
            }
            let Some(&c) = f.get(i) else {
                return Err(bad_format(&u.text));
            };
            if "diouxX".contains(c) {
                bytes += 4;
            } else if "efgEG".contains(c) {
                bytes += 8;
            } else if c == 's' {
                bytes += precision;
            } else if c == 'c' {
                bytes += 1;
            } else if c == '_' && f.get(i + 1).is_some_and(|&n| "cpu".contains(n)) {
                i += 1;
                bytes += 1;
            }
            i += 1;
        }
        size = bytes
            .checked_mul(u.reps)
            .and_then(|n| n.checked_add(size))
            .ok_or(TOO_LARGE)?;
    }
    if size > MAX_BLOCK {
        return Err(TOO_LARGE.to_owned());
    }
    Ok(size)
}

/// The largest block a format may read at once. util-linux allocates any
/// size; in the sandbox a block beyond this is refused rather than left to
/// exhaust the script's memory.
const MAX_BLOCK: usize = 1 << 20;
const TOO_LARGE: &str = "a format reading more than 1 MiB a block is not supported";

fn bad_count(conv: &str) -> String {
    format!("bad byte count for conversion character {conv}")
}

fn bad_conv(conv: &str) -> String {
    format!("bad conversion character %{conv}")
}

/// `rewrite_rules`: breaks each unit into print units and checks them.
fn rewrite(fs: &mut FormatString, block: usize) -> Result<(), String> {
    for u in &mut fs.units {
        let f: Vec<char> = u.text.chars().collect();
        let mut at = 0;
        let mut conversions = 0;
        while at < f.len() {
            let Some(pct) = f[at..].iter().position(|&c| c == '%').map(|k| at + k) else {
                u.prints.push(Print {
                    kind: Kind::Text,
                    text: f[at..].iter().collect(),
                    spec: String::new(),
                    conv: ' ',
                    bytes: 0,
                    nospace: false,
                });
                break;
            };
            let mut p1 = pct + 1;
            // With a byte count, `%s` needs no precision.
            let mut precision = None;
            if u.bytes > 0 {
                while f.get(p1).is_some_and(|&c| SPEC.contains(c)) {
                    p1 += 1;
                }
            } else {
                while f.get(p1).is_some_and(|&c| SPEC[1..].contains(c)) {
                    p1 += 1;
                }
                if f.get(p1) == Some(&'.') {
                    p1 += 1;
                    if f.get(p1).is_some_and(char::is_ascii_digit) {
                        let digits: String =
                            f[p1..].iter().take_while(|c| c.is_ascii_digit()).collect();
                        p1 += digits.len();
                        precision = Some(digits.parse::<usize>().unwrap_or(0));
                    }
                }
            }
            let Some(&cs) = f.get(p1) else {
                return Err(bad_format(&u.text));
            };
            let mut next = p1 + 1;
            let one = |allowed: &[usize], default: usize| -> Result<usize, String> {
                match u.bytes {
                    0 => Ok(default),
                    n if allowed.contains(&n) => Ok(n),
                    _ => Err(bad_count(&cs.to_string())),
                }
            };
            let (kind, conv, bytes) = match cs {
                'c' => (Kind::Char, 'c', one(&[1], 1)?),
                'd' | 'i' => (Kind::Int, 'd', one(&[1, 2, 4, 8], 4)?),
                'o' | 'u' | 'x' | 'X' => (Kind::Uint, cs, one(&[1, 2, 4, 8], 4)?),
                'e' | 'f' | 'g' | 'E' | 'G' => (Kind::Float, cs, one(&[4, 8], 8)?),
                's' => {
                    let n = if u.bytes > 0 {
                        u.bytes
                    } else {
                        precision.ok_or("%s requires a precision or a byte count")?
                    };
                    (Kind::Str, 's', n)
                }
                '_' => {
                    next += 1;
                    let which = f.get(p1 + 1).copied().unwrap_or('\0');
                    let single = |kind| -> Result<(Kind, char, usize), String> {
                        match u.bytes {
                            0 | 1 => Ok((kind, 'c', 1)),
                            _ => Err(bad_count(&format!("_{which}"))),
                        }
                    };
                    match which {
                        'A' | 'a' => {
                            if which == 'A' {
                                u.at_end = true;
                            }
                            match f.get(p1 + 2) {
                                Some(&r @ ('d' | 'o' | 'x')) => {
                                    next += 1;
                                    (Kind::Address, r, 0)
                                }
                                Some(&other) => {
                                    return Err(bad_conv(&format!("_{which}{other}")));
                                }
                                None => return Err(bad_conv(&format!("_{which}"))),
                            }
                        }
                        'c' => single(Kind::CharEscaped)?,
                        'p' => single(Kind::Printable)?,
                        'u' => single(Kind::Named)?,
                        '\0' => return Err(bad_conv("_")),
                        other => return Err(bad_conv(&format!("_{other}"))),
                    }
                }
                other => return Err(bad_conv(&other.to_string())),
            };
            // Colour units (`_L[...]`) are read and not used: the output
            // is never a terminal.
            if f.get(next) == Some(&'_') && f.get(next + 1) == Some(&'L') {
                match f[next..].iter().rposition(|&c| c == ']') {
                    Some(k) => next += k + 1,
                    None => return Err(bad_conv("_L")),
                }
            }
            u.prints.push(Print {
                kind,
                text: f[at..pct].iter().collect(),
                spec: f[pct + 1..p1].iter().collect(),
                conv,
                bytes,
                nospace: false,
            });
            if kind != Kind::Address && u.bytes > 0 {
                conversions += 1;
                if conversions > 1 {
                    return Err("byte count with multiple conversion characters".to_owned());
                }
            }
            at = next;
        }
        if u.bytes == 0 {
            u.bytes = u.prints.iter().map(|p| p.bytes).sum();
        }
    }
    // The last unit, without a repetition count, repeats to fill the block.
    let count = fs.units.len();
    for (k, u) in fs.units.iter_mut().enumerate() {
        if k + 1 == count && fs.bytes < block && !u.set_reps && u.bytes > 0 {
            u.reps += (block - fs.bytes) / u.bytes;
        }
        if u.reps > 1
            && let Some(last) = u.prints.last_mut()
            && last.kind == Kind::Text
            && last.text.ends_with(|c: char| c.is_ascii_whitespace())
        {
            last.nospace = true;
        }
    }
    Ok(())
}

/// C's `printf` of one string conversion (`%s`, `%c` given as bytes):
/// the precision cuts, the width pads (on the left unless `-`).
fn pad(spec: &str, body: &[u8], out: &mut Vec<u8>) {
    let left = spec.contains('-');
    let (width, precision) = match spec.split_once('.') {
        Some((w, p)) => (w, Some(p)),
        None => (spec, None),
    };
    let width: usize = width
        .trim_start_matches(['-', '+', ' ', '#', '0'])
        .parse()
        .unwrap_or(0);
    let body = match precision.map(|p| p.parse::<usize>().unwrap_or(0)) {
        Some(p) if p < body.len() => &body[..p],
        _ => body,
    };
    let fill = width.saturating_sub(body.len());
    if !left {
        out.extend(std::iter::repeat_n(b' ', fill));
    }
    out.extend_from_slice(body);
    if left {
        out.extend(std::iter::repeat_n(b' ', fill));
    }
}

/// One numeric conversion through the shell's `printf`.
fn number_text(spec: &str, conv: char, value: &str, out: &mut Vec<u8>) {
    if let Ok(b) = format_once(&format!("%{spec}{conv}"), &[value.to_owned()], false) {
        out.extend_from_slice(&b);
    }
}

fn le(bytes: &[u8], n: usize) -> u64 {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().take(n).enumerate() {
        v |= u64::from(b) << (8 * i);
    }
    v
}

const NAMES: [&str; 32] = [
    "nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "lf", "vt", "ff", "cr",
    "so", "si", "dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub", "esc",
    "fs", "gs", "rs", "us",
];

fn printable(b: u8) -> bool {
    (0x20..0x7f).contains(&b)
}

/// `print`: one print unit over the bytes at `bp`.
fn print(pr: &Print, bp: &[u8], address: usize, last_rep: bool, out: &mut Vec<u8>) {
    let text = if last_rep && pr.nospace {
        &pr.text[..pr.text.len() - 1]
    } else {
        pr.text.as_str()
    };
    out.extend_from_slice(text.as_bytes());
    let b = bp.first().copied().unwrap_or(0);
    let spec = pr.spec.as_str();
    match pr.kind {
        Kind::Text => {}
        Kind::Address => number_text(spec, pr.conv, &address.to_string(), out),
        Kind::Blank => pad(&pr.spec, b"", out),
        Kind::Char => pad(spec, &[b], out),
        Kind::Printable => pad(spec, &[if printable(b) { b } else { b'.' }], out),
        Kind::CharEscaped => {
            let esc = match b {
                0 => Some("\\0"),
                7 => Some("\\a"),
                8 => Some("\\b"),
                0x0c => Some("\\f"),
                b'\n' => Some("\\n"),
                b'\r' => Some("\\r"),
                b'\t' => Some("\\t"),
                0x0b => Some("\\v"),
                _ => None,
            };
            match esc {
                Some(e) => pad(spec, e.as_bytes(), out),
                None if printable(b) => pad(spec, &[b], out),
                None => pad(spec, format!("{b:03o}").as_bytes(), out),
            }
        }
        Kind::Named => match b {
            0..=0x1f => pad(spec, NAMES[usize::from(b)].as_bytes(), out),
            0x7f => pad(spec, b"del", out),
            _ if printable(b) => pad(spec, &[b], out),
            _ => number_text(spec, 'x', &b.to_string(), out),
        },
        Kind::Str => {
            let s = &bp[..pr.bytes.min(bp.len())];
            let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
            pad(spec, &s[..end], out);
        }
        Kind::Int => {
            let v = le(bp, pr.bytes);
            let signed = match pr.bytes {
                1 => i64::from(v as u8 as i8),
                2 => i64::from(v as u16 as i16),
                4 => i64::from(v as u32 as i32),
                _ => v as i64,
            };
            number_text(spec, 'd', &signed.to_string(), out);
        }
        Kind::Uint => number_text(spec, pr.conv, &le(bp, pr.bytes).to_string(), out),
        Kind::Float => {
            let v = if pr.bytes == 4 {
                f64::from(f32::from_bits(le(bp, 4) as u32))
            } else {
                f64::from_bits(le(bp, 8))
            };
            let text = if v.is_nan() {
                "nan".to_owned()
            } else if v.is_infinite() {
                if v < 0.0 { "-inf" } else { "inf" }.to_owned()
            } else {
                format!("{v:e}")
            };
            number_text(spec, pr.conv, &text, out);
        }
    }
}

/// `bpad`: a conversion past the end of the data prints blanks of its
/// width; the flags go, the width and precision stay.
fn blank(pr: &mut Print) {
    pr.kind = Kind::Blank;
    pr.spec = pr
        .spec
        .trim_start_matches([' ', '-', '0', '+', '#'])
        .to_owned();
}

/// How runs of identical blocks are shown (util-linux's `vflag`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Squeeze {
    First,
    Wait,
    Dup,
    All,
}

/// Shows a block at its address, into the output.
type Show<'s> = dyn FnMut(&[u8], usize, &mut Vec<u8>) + 's;

/// The blocks of input (`get`), each with its address: fed a piece at a
/// time, so that a large document is never held whole.
struct Blocks {
    size: usize,
    /// The bytes of the block not displayed yet.
    block: Vec<u8>,
    /// The address of `block`'s first byte.
    address: usize,
    squeeze: Squeeze,
    previous: Vec<u8>,
}

impl Blocks {
    /// Takes in the next bytes of the input; each full block that is not
    /// squeezed goes to `show` with its address.
    fn feed(&mut self, mut piece: &[u8], out: &mut Vec<u8>, show: &mut Show<'_>) {
        while !piece.is_empty() {
            let take = (self.size - self.block.len()).min(piece.len());
            self.block.extend_from_slice(&piece[..take]);
            piece = &piece[take..];
            if self.block.len() < self.size {
                break;
            }
            let address = self.address;
            self.address += self.size;
            if matches!(self.squeeze, Squeeze::All | Squeeze::First) || self.block != self.previous
            {
                if matches!(self.squeeze, Squeeze::Dup | Squeeze::First) {
                    self.squeeze = Squeeze::Wait;
                }
                std::mem::swap(&mut self.previous, &mut self.block);
                self.block.clear();
                show(&self.previous, address, out);
                continue;
            }
            if self.squeeze == Squeeze::Wait {
                out.extend_from_slice(b"*\n");
            }
            self.squeeze = Squeeze::Dup;
            self.block.clear();
        }
    }

    /// The last, short block (padded with zeros, as util-linux pads it)
    /// with its address and where the data ends, if there is one.
    fn last(&mut self) -> Option<(Vec<u8>, usize, usize)> {
        if self.block.is_empty() {
            return None;
        }
        let end = self.address + self.block.len();
        let mut block = std::mem::take(&mut self.block);
        block.resize(self.size, 0);
        Some((block, self.address, end))
    }
}

/// `display`: the dump of the input, fed a piece at a time, its output
/// going to `emit` in pieces, so that a large dump is held neither way.
struct Display {
    formats: Vec<FormatString>,
    end_unit: Option<Unit>,
    /// `None` when no format reads data: util-linux prints nothing.
    blocks: Option<Blocks>,
    out: Vec<u8>,
}

impl Display {
    /// `skipped`: the address of the first byte fed; `all`: no squeezing
    /// (`-v`).
    fn new(formats: Vec<FormatString>, skipped: usize, all: bool) -> Display {
        let size = formats.iter().map(|f| f.bytes).max().unwrap_or(0);
        let end_unit = formats
            .iter()
            .flat_map(|f| &f.units)
            .rfind(|u| u.at_end)
            .cloned();
        let blocks = (size > 0).then(|| Blocks {
            size,
            block: Vec::with_capacity(size),
            address: skipped,
            squeeze: if all { Squeeze::All } else { Squeeze::First },
            previous: vec![0; size],
        });
        Display {
            formats,
            end_unit,
            blocks,
            out: Vec::new(),
        }
    }

    /// Sets the address of the next byte fed: where the input ended, when
    /// the skip went past it.
    fn move_to(&mut self, address: usize) {
        if let Some(blocks) = &mut self.blocks {
            blocks.address = address;
        }
    }

    fn feed(&mut self, piece: &[u8], emit: &mut dyn FnMut(&[u8])) {
        let Some(blocks) = &mut self.blocks else {
            return;
        };
        let formats = &mut self.formats;
        blocks.feed(piece, &mut self.out, &mut |block, address, out| {
            show_block(formats, block, address, None, out);
            if out.len() >= 1 << 16 {
                emit(out);
                out.clear();
            }
        });
    }

    fn finish(mut self, emit: &mut dyn FnMut(&[u8])) {
        let Some(blocks) = &mut self.blocks else {
            return;
        };
        let mut out = std::mem::take(&mut self.out);
        let end = blocks.last().map(|(block, address, end)| {
            show_block(&mut self.formats, &block, address, Some(end), &mut out);
            end
        });
        if let Some(u) = &self.end_unit {
            let end = match end {
                Some(e) => e,
                None if blocks.address == 0 => {
                    emit(&out);
                    return;
                }
                None => blocks.address,
            };
            for pr in &u.prints {
                match pr.kind {
                    Kind::Address => {
                        out.extend_from_slice(pr.text.as_bytes());
                        number_text(&pr.spec, pr.conv, &end.to_string(), &mut out);
                    }
                    Kind::Text => out.extend_from_slice(pr.text.as_bytes()),
                    _ => {}
                }
            }
        }
        emit(&out);
    }
}

/// Prints one block at `address` in every format; `end`, where the data
/// ends, is known for the last block only.
fn show_block(
    formats: &mut [FormatString],
    block: &[u8],
    address: usize,
    end: Option<usize>,
    out: &mut Vec<u8>,
) {
    let size = block.len();
    for fs in formats {
        let mut at = 0usize;
        let mut rem = size as isize;
        let mut address = address;
        for u in &mut fs.units {
            if u.at_end {
                break;
            }
            let mut reps = u.reps;
            while reps > 0 && rem >= 0 {
                for pr in &mut u.prints {
                    if end.is_some_and(|e| address >= e)
                        && !matches!(pr.kind, Kind::Text | Kind::Blank)
                    {
                        blank(pr);
                    }
                    print(pr, block.get(at..).unwrap_or(&[]), address, reps == 1, out);
                    address += pr.bytes;
                    rem -= pr.bytes as isize;
                    if rem < 0 {
                        break;
                    }
                    at += pr.bytes;
                }
                reps -= 1;
            }
        }
    }
}

/// `strtosize`: a number (`0x` hex, leading-`0` octal) with an optional
/// `K`, `M`, `G`... suffix (`KiB` = `K` = 1024, `KB` = 1000).
fn size(s: &str) -> Option<usize> {
    let digits_end = s
        .find(|c: char| {
            !c.is_ascii_alphanumeric() || c.is_ascii_alphabetic() && !"xXabcdefABCDEF".contains(c)
        })
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(digits_end);
    let n = if let Some(h) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        usize::from_str_radix(h, 16).ok()?
    } else if num.len() > 1 && num.starts_with('0') {
        usize::from_str_radix(&num[1..], 8).ok()?
    } else {
        num.parse().ok()?
    };
    if suffix.is_empty() {
        return Some(n);
    }
    let (unit, base) = match suffix.as_bytes() {
        [u] => (*u, 1024usize),
        [u, b'i', b'B'] => (*u, 1024),
        [u, b'B'] => (*u, 1000),
        _ => return None,
    };
    let power = b"KMGTPEZY"
        .iter()
        .position(|&c| c == unit.to_ascii_uppercase())?;
    let factor = base.checked_pow(u32::try_from(power + 1).ok()?)?;
    n.checked_mul(factor)
}

/// `hexdump [-bcCdovx] [-e FORMAT]... [-f FILE]... [-n LENGTH] [-s OFFSET]
/// [FILE]...` (and `hd`, whose default is `-C`).
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String], hd: bool) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('b', "one-byte-octal", "b"),
        flag('c', "one-byte-char", "c"),
        flag('C', "canonical", "C"),
        flag('d', "two-bytes-decimal", "d"),
        flag('o', "two-bytes-octal", "o"),
        flag('x', "two-bytes-hex", "x"),
        value('e', "format", "e"),
        value('f', "format-file", "f"),
        value('n', "length", "n"),
        value('s', "skip", "s"),
        flag('v', "no-squeezing", "v"),
    ];
    let cmd = if hd { "hd" } else { "hexdump" };
    let p = match options(cx, cmd, args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    const OFFSET: &str = "\"%07.7_Ax\n\"";
    let canonical = [
        "\"%08.8_Ax\n\"",
        "\"%08.8_ax  \" 8/1 \"%02x \" \"  \" 8/1 \"%02x \" ",
        "\"  |\" 16/1 \"%_p\" \"|\\n\"",
    ];
    let mut texts: Vec<String> = Vec::new();
    // `hd` starts from the canonical format; options add to it.
    if hd {
        texts.extend(canonical.iter().map(|s| (*s).to_owned()));
    }
    for (id, v) in &p.opts {
        let line = match *id {
            "b" => "\"%07.7_ax \" 16/1 \"%03o \" \"\\n\"",
            "c" => "\"%07.7_ax \" 16/1 \"%3_c \" \"\\n\"",
            "d" => "\"%07.7_ax \" 8/2 \"  %05u \" \"\\n\"",
            "o" => "\"%07.7_ax \" 8/2 \" %06o \" \"\\n\"",
            "x" => "\"%07.7_ax \" 8/2 \"   %04x \" \"\\n\"",
            "C" => {
                texts.extend(canonical.iter().map(|s| (*s).to_owned()));
                continue;
            }
            "e" => {
                texts.push(v.clone().unwrap_or_default());
                continue;
            }
            "f" => {
                let file = v.clone().unwrap_or_default();
                match cx.read_file_operand(&file) {
                    Ok(d) => {
                        for line in crate::lossless::decode(&d).lines() {
                            let line = line.trim_start();
                            if !line.is_empty() && !line.starts_with('#') {
                                texts.push(line.to_owned());
                            }
                        }
                    }
                    Err(e) => {
                        cx.err(format_args!("{cmd}: can't read {file}: {}", e.strerror()));
                        return 1;
                    }
                }
                continue;
            }
            _ => continue,
        };
        texts.push(OFFSET.to_owned());
        texts.push(line.to_owned());
    }
    if texts.is_empty() {
        texts.push(OFFSET.to_owned());
        texts.push("\"%07.7_ax \" 8/2 \"%04x \" \"\\n\"".to_owned());
    }
    let mut formats = Vec::new();
    for t in &texts {
        match parse_format(t) {
            Ok(f) => formats.push(f),
            Err(e) => {
                cx.err(format_args!("{cmd}: {e}"));
                return 1;
            }
        }
    }
    for f in &mut formats {
        match block_size(f) {
            Ok(n) => f.bytes = n,
            Err(e) => {
                cx.err(format_args!("{cmd}: {e}"));
                return 1;
            }
        }
    }
    let block = formats.iter().map(|f| f.bytes).max().unwrap_or(0);
    for f in &mut formats {
        if let Err(e) = rewrite(f, block) {
            cx.err(format_args!("{cmd}: {e}"));
            return 1;
        }
    }
    let mut limits = [None, None];
    for (k, (id, what)) in [("n", "length"), ("s", "offset")].into_iter().enumerate() {
        if let Some(v) = p.value(id) {
            match size(v) {
                Some(n) => limits[k] = Some(n),
                None => {
                    cx.err(format_args!(
                        "{cmd}: failed to parse {what}: '{v}': Invalid argument"
                    ));
                    return 1;
                }
            }
        }
    }
    let [length, skip] = limits;
    let mut window = Window {
        skip: skip.unwrap_or(0) as u64,
        limit: length.map(|n| n as u64),
    };
    let mut display = Display::new(formats, skip.unwrap_or(0), p.has("v"));
    let mut status = 0;
    if p.operands.is_empty() {
        // Standard input cannot fail.
        let _ = cx.stream_window("-", &mut window, |cx, piece| {
            display.feed(piece, &mut |b| cx.out(b));
        });
    } else {
        let mut opened = false;
        for op in &p.operands {
            if opened && window.is_spent() {
                break;
            }
            // util-linux opens every operand by name: `-` is a file too.
            let read = if op == "-" {
                Err(crate::fs::FsError::NotFound(op.clone()))
            } else {
                cx.stream_window(op, &mut window, |cx, piece| {
                    display.feed(piece, &mut |b| cx.out(b));
                })
            };
            match read {
                Ok(()) => opened = true,
                // util-linux opens a directory and fails to read it: a
                // warning, and the status stays 0.
                Err(e @ crate::fs::FsError::IsADirectory(_)) => {
                    cx.err(format_args!("{cmd}: {op}: {}", e.strerror()));
                    opened = true;
                }
                Err(e) => {
                    cx.err(format_args!("{cmd}: {op}: {}", e.strerror()));
                    status = 1;
                }
            }
        }
        if !opened {
            cx.err(format_args!("{cmd}: all input file arguments failed"));
            return 1;
        }
    }
    // Skipping past the end shows the end's address, not the skip's.
    let skipped = skip.unwrap_or(0) - usize::try_from(window.skip).unwrap_or(0);
    if skipped != skip.unwrap_or(0) {
        display.move_to(skipped);
    }
    display.finish(&mut |b| cx.out(b));
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(formats: &[&str], data: &[u8]) -> String {
        let mut fs: Vec<FormatString> = formats
            .iter()
            .map(|f| parse_format(f).expect("format"))
            .collect();
        for f in &mut fs {
            f.bytes = block_size(f).expect("block size");
        }
        let block = fs.iter().map(|f| f.bytes).max().unwrap_or(0);
        for f in &mut fs {
            rewrite(f, block).expect("rewrite");
        }
        let mut out = Vec::new();
        let mut d = Display::new(fs, 0, false);
        d.feed(data, &mut |b| out.extend_from_slice(b));
        d.finish(&mut |b| out.extend_from_slice(b));
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn default_format_is_words_with_the_end_address() {
        let out = dump(
            &["\"%07.7_Ax\n\"", "\"%07.7_ax \" 8/2 \"%04x \" \"\\n\""],
            b"Hello world!\n",
        );
        assert_eq!(
            out,
            "0000000 6548 6c6c 206f 6f77 6c72 2164 000a     \n000000d\n"
        );
    }

    #[test]
    fn one_byte_units_squeeze_repeats() {
        assert_eq!(dump(&["1/1 \"%02x\""], b"Hello"), "48656c*\n6f");
    }

    #[test]
    fn format_errors_are_util_linux_words() {
        let check = |f: &str| {
            let mut fs = parse_format(f)?;
            fs.bytes = block_size(&fs)?;
            let b = fs.bytes;
            rewrite(&mut fs, b)
        };
        assert_eq!(
            check("\"%s\""),
            Err("%s requires a precision or a byte count".to_owned())
        );
        assert_eq!(
            check("\"%_A\n\""),
            Err("bad conversion character %_A\n".to_owned())
        );
        assert_eq!(
            check("3/3 \"%x\""),
            Err("bad byte count for conversion character x".to_owned())
        );
        assert_eq!(
            check("2/2 \"%d %d\""),
            Err("byte count with multiple conversion characters".to_owned())
        );
        assert_eq!(check("4/1\"%x\""), Err("bad format {4/1\"%x\"}".to_owned()));
        assert_eq!(
            check("\"%%\""),
            Err("bad conversion character %%".to_owned())
        );
    }

    #[test]
    fn sizes_take_suffixes_and_bases() {
        assert_eq!(size("16"), Some(16));
        assert_eq!(size("0x10"), Some(16));
        assert_eq!(size("010"), Some(8));
        assert_eq!(size("1K"), Some(1024));
        assert_eq!(size("1KiB"), Some(1024));
        assert_eq!(size("1KB"), Some(1000));
        assert_eq!(size("abc"), None);
    }

    #[test]
    fn arbitrary_formats_fail_or_print_never_panic() {
        // A small xorshift generator: the same strings on every run.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet: Vec<char> = "%_aApcuxXdiosefgE0123456789./\" \\-#+L[]:!nt"
            .chars()
            .collect();
        let data: Vec<u8> = (0..=255u8)
            .chain(b"Hello world!\n".iter().copied())
            .collect();
        let mut shown = 0;
        for _ in 0..20_000 {
            let len = (next() % 16) as usize;
            let body: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            // Mostly well-formed units (`REPS/BYTES "..."`), sometimes not.
            let prefix = ["", "1/1 ", "4/1 ", "/2 ", "2/4 ", "3 ", "/8 ", "16/1 ", "x"];
            let pick = prefix[(next() % prefix.len() as u64) as usize];
            let fmt = format!("{pick}\"{body}\"");
            let Ok(mut fs) = parse_format(&fmt) else {
                continue;
            };
            let Ok(n) = block_size(&fs) else {
                continue;
            };
            fs.bytes = n;
            if rewrite(&mut fs, n).is_err() {
                continue;
            }
            let cut = (next() % data.len() as u64) as usize;
            let mut d = Display::new(vec![fs], 0, next() % 2 == 0);
            // Fed in two pieces: a block may be cut between them.
            let (a, b) = data[..cut].split_at(cut / 3);
            d.feed(a, &mut |_| {});
            d.feed(b, &mut |_| {});
            d.finish(&mut |_| {});
            shown += 1;
        }
        // The generator reaches the display, not only the errors.
        assert!(shown > 1000, "{shown}");
    }
}
