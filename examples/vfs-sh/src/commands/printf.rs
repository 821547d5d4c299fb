//! `printf FORMAT [ARG]...`, as bash's builtin: the format is reused while
//! arguments remain, missing arguments read as empty or zero, and a bad
//! number is reported but still printed (as far as it parsed), with exit
//! status 1.

use super::echo::{Dialect, unescape};
use crate::exec::Cx;

/// One conversion of the format.
#[derive(Debug, Clone, Default)]
struct Conv {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alt: bool,
    /// `None`: none; `Some(None)`: `*` (from the arguments).
    width: Option<Option<usize>>,
    precision: Option<Option<usize>>,
    kind: char,
    /// `%(FORMAT)T`: the strftime format.
    time: Option<String>,
}

#[derive(Debug, Clone)]
enum Piece {
    Lit(Vec<u8>),
    Conv(Conv),
}

fn number(chars: &[char], i: &mut usize) -> Option<Option<usize>> {
    if chars.get(*i) == Some(&'*') {
        *i += 1;
        return Some(None);
    }
    let start = *i;
    while chars.get(*i).is_some_and(char::is_ascii_digit) {
        *i += 1;
    }
    if *i == start {
        return None;
    }
    let s: String = chars[start..*i].iter().collect();
    Some(Some(s.parse().unwrap_or(usize::MAX).min(1 << 16)))
}

/// Splits a format into literal text and conversions.
/// `utf8`: the locale's; in the C locale `\u00e9` stays as it is written.
fn compile(format: &str, utf8: bool) -> Result<Vec<Piece>, String> {
    let chars: Vec<char> = format.chars().collect();
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    let flush = |lit: &mut String, pieces: &mut Vec<Piece>| {
        if !lit.is_empty() {
            pieces.push(Piece::Lit(unescape(lit, Dialect::Format, utf8).0));
            lit.clear();
        }
    };
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c == '\\' {
            lit.push(c);
            if let Some(&n) = chars.get(i) {
                lit.push(n);
                i += 1;
            }
            continue;
        }
        if c != '%' {
            lit.push(c);
            continue;
        }
        if chars.get(i) == Some(&'%') {
            lit.push('%');
            i += 1;
            continue;
        }
        flush(&mut lit, &mut pieces);
        let mut conv = Conv::default();
        while let Some(&f) = chars.get(i) {
            match f {
                '-' => conv.left = true,
                '0' => conv.zero = true,
                '+' => conv.plus = true,
                ' ' => conv.space = true,
                '#' => conv.alt = true,
                // Thousands grouping: none in the C locale.
                '\'' => {}
                _ => break,
            }
            i += 1;
        }
        conv.width = number(&chars, &mut i);
        if chars.get(i) == Some(&'.') {
            i += 1;
            conv.precision = Some(number(&chars, &mut i).unwrap_or(Some(0)));
        }
        // bash's `%(FORMAT)T`: a time, formatted by strftime.
        if chars.get(i) == Some(&'(') {
            let Some(close) = chars[i..].iter().position(|&c| c == ')') else {
                return Err("printf: `(': invalid format character".to_owned());
            };
            let fmt: String = chars[i + 1..i + close].iter().collect();
            i += close + 1;
            if chars.get(i) != Some(&'T') {
                return Err(format!(
                    "printf: `{}': invalid format character",
                    chars.get(i).copied().unwrap_or('(')
                ));
            }
            i += 1;
            conv.kind = 'T';
            conv.time = Some(fmt);
            pieces.push(Piece::Conv(conv));
            continue;
        }
        // Length modifiers mean nothing here.
        while chars
            .get(i)
            .is_some_and(|c| matches!(c, 'h' | 'l' | 'L' | 'j' | 'z' | 't'))
        {
            i += 1;
        }
        let Some(&kind) = chars.get(i) else {
            return Err("printf: missing format character".to_owned());
        };
        i += 1;
        if !matches!(
            kind,
            's' | 'b'
                | 'q'
                | 'c'
                | 'd'
                | 'i'
                | 'u'
                | 'o'
                | 'x'
                | 'X'
                | 'f'
                | 'F'
                | 'e'
                | 'E'
                | 'g'
                | 'G'
        ) {
            return Err(format!("printf: `{kind}': invalid format character"));
        }
        conv.kind = kind;
        pieces.push(Piece::Conv(conv));
    }
    flush(&mut lit, &mut pieces);
    Ok(pieces)
}

/// Parses an integer argument like bash (`0x1f`, `017`, `'A`); on error
/// returns the value parsed so far and the message. A quoted character's
/// value is its code point in a UTF-8 locale, its first byte in the C one
/// (`'é` is 195), and a byte outside valid UTF-8 that byte in both.
fn int_arg(s: &str, utf8: bool) -> (i128, Option<String>) {
    let t = s.trim_start();
    if let Some(rest) = t.strip_prefix(['\'', '"']) {
        let value = match rest.chars().next() {
            None => 0,
            Some(c) if utf8 && crate::lossless::raw_byte(c).is_none() => u32::from(c),
            Some(_) => u32::from(crate::lossless::encode(rest)[0]),
        };
        return (i128::from(value), None);
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (radix, digits) = if let Some(h) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, h)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    let mut v: i128 = 0;
    let mut n = 0;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => {
                v = v
                    .saturating_mul(i128::from(radix))
                    .saturating_add(i128::from(d));
                n += 1;
            }
            None => break,
        }
    }
    let v = if neg { -v } else { v };
    if s.is_empty() {
        return (0, None);
    }
    if n == 0 && !(radix == 8 && digits.is_empty()) || n < digits.chars().count() {
        return (v, Some(format!("printf: {s}: invalid number")));
    }
    (v, None)
}

fn float_arg(s: &str) -> (f64, Option<String>) {
    let t = s.trim();
    if t.is_empty() {
        return (0.0, None);
    }
    if let Some(rest) = t.strip_prefix(['\'', '"']) {
        return (
            rest.chars().next().map_or(0.0, |c| f64::from(u32::from(c))),
            None,
        );
    }
    match t.parse::<f64>() {
        Ok(v) => (v, None),
        Err(_) => {
            // The longest prefix that parses, as strtod would take.
            let v = (1..t.len())
                .rev()
                .filter(|&k| t.is_char_boundary(k))
                .find_map(|k| t[..k].parse::<f64>().ok())
                .unwrap_or(0.0);
            (v, Some(format!("printf: {s}: invalid number")))
        }
    }
}

/// C's `%e` from Rust's `{:e}`: the exponent signed, with two digits.
fn c_exp(v: f64, prec: usize, upper: bool) -> String {
    let s = format!("{v:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    let e = if upper { 'E' } else { 'e' };
    format!("{mant}{e}{sign}{:02}", exp.abs())
}

/// C's `%g`.
fn c_general(v: f64, prec: usize, alt: bool, upper: bool) -> String {
    let p = prec.max(1);
    if v == 0.0 {
        let mut s = format!("{v:.prec$}", prec = p - 1);
        if !alt {
            s = trim_zeros(&s);
        }
        return s;
    }
    let probe = format!("{v:.prec$e}", prec = p - 1);
    let x: i64 = probe
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if x < -4 || x >= p as i64 {
        let s = c_exp(v, p - 1, upper);
        if alt {
            s
        } else {
            let (m, e) = s.split_at(s.find(['e', 'E']).unwrap_or(s.len()));
            format!("{}{e}", trim_zeros(m))
        }
    } else {
        let decimals = usize::try_from(p as i64 - 1 - x).unwrap_or(0);
        let s = format!("{v:.decimals$}");
        if alt { s } else { trim_zeros(&s) }
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s.to_owned()
    }
}

/// Pads `body` (with its sign or prefix `lead`) to the conversion's width.
/// Widths count bytes, as the C library's `printf` counts them in every
/// locale.
fn pad(conv: &Conv, width: usize, lead: &str, body: &str, numeric: bool) -> String {
    let len = lead.len() + body.len();
    if len >= width {
        return format!("{lead}{body}");
    }
    let fill = width - len;
    if conv.left {
        format!("{lead}{body}{}", " ".repeat(fill))
    } else if conv.zero && numeric {
        format!("{lead}{}{body}", "0".repeat(fill))
    } else {
        format!("{}{lead}{body}", " ".repeat(fill))
    }
}

/// Runs the format once over `args`; returns how many arguments it used
/// and whether `%b`'s `\c` asked to stop.
/// Writes one pass of `pieces` over `args`; `now` (seconds since the
/// epoch) is the time `%(...)T` shows for `-1`, `-2` or no argument.
/// Whose printf runs a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// bash's builtin: an integer beyond 64 bits is clamped, with a
    /// warning, as `strtoimax` reads it.
    Bash,
    /// awk's `printf` and the commands that format a value: values as
    /// given; `chars`: `%s` and `%c` count characters, not bytes, as gawk
    /// does in a UTF-8 locale.
    Other { chars: bool },
}

fn apply(
    pieces: &[Piece],
    args: &[String],
    out: &mut Vec<u8>,
    errors: &mut Vec<String>,
    utf8: bool,
    now: i64,
    caller: Caller,
) -> (usize, bool) {
    let mut used = 0;
    let next = |used: &mut usize| -> Option<&String> {
        let a = args.get(*used);
        if a.is_some() {
            *used += 1;
        }
        a
    };
    for piece in pieces {
        let conv = match piece {
            Piece::Lit(b) => {
                out.extend_from_slice(b);
                continue;
            }
            Piece::Conv(c) => c,
        };
        let star = |spec: Option<Option<usize>>, used: &mut usize| match spec {
            None => None,
            Some(Some(n)) => Some(n),
            Some(None) => {
                let a = next(used).map(String::as_str).unwrap_or("0");
                let (v, _) = int_arg(a, utf8);
                Some(usize::try_from(v.unsigned_abs()).unwrap_or(0).min(1 << 16))
            }
        };
        let width = star(conv.width, &mut used).unwrap_or(0);
        let prec = star(conv.precision, &mut used);
        let arg_s = next(&mut used).map_or("", String::as_str);
        let text = match conv.kind {
            's' | 'c' => {
                // A precision (and `%c`) cuts bytes, even inside a
                // character, as the C library does; gawk in a UTF-8
                // locale cuts and pads by characters.
                let bytes = crate::lossless::encode(arg_s);
                let chars = caller == Caller::Other { chars: true };
                let keep = match (conv.kind, prec) {
                    ('c', _) => 1,
                    (_, Some(p)) => p,
                    _ => bytes.len(),
                };
                let (body, shown) = if chars {
                    let end = arg_s
                        .char_indices()
                        .nth(keep)
                        .map_or(arg_s.len(), |(at, _)| at);
                    (
                        crate::lossless::encode(&arg_s[..end]),
                        arg_s[..end].chars().count(),
                    )
                } else {
                    let body = &bytes[..keep.min(bytes.len())];
                    (std::borrow::Cow::Borrowed(body), body.len())
                };
                let fill = " ".repeat(width.saturating_sub(shown));
                if conv.left {
                    out.extend_from_slice(&body);
                    out.extend_from_slice(fill.as_bytes());
                } else {
                    out.extend_from_slice(fill.as_bytes());
                    out.extend_from_slice(&body);
                }
                continue;
            }
            'q' => pad(conv, width, "", &shell_quote(arg_s), false),
            'T' => {
                let secs = match arg_s.trim() {
                    "" | "-1" | "-2" => now,
                    a => {
                        let (v, err) = int_arg(a, utf8);
                        errors.extend(err);
                        i64::try_from(v).unwrap_or(now)
                    }
                };
                // An empty format is the locale's time (`%X`; the C locale's).
                let fmt = match conv.time.as_deref() {
                    None | Some("") => "%H:%M:%S",
                    Some(f) => f,
                };
                let text = crate::time::strftime(fmt, secs, 0);
                let text: String = match prec {
                    Some(p) => text.chars().take(p).collect(),
                    None => text,
                };
                pad(conv, width, "", &text, false)
            }
            'b' => {
                let (bytes, stop) = unescape(arg_s, Dialect::Echo, utf8);
                let body = match prec {
                    Some(p) => &bytes[..p.min(bytes.len())],
                    None => &bytes[..],
                };
                let fill = " ".repeat(width.saturating_sub(body.len()));
                if conv.left {
                    out.extend_from_slice(body);
                    out.extend_from_slice(fill.as_bytes());
                } else {
                    out.extend_from_slice(fill.as_bytes());
                    out.extend_from_slice(body);
                }
                if stop {
                    return (used, true);
                }
                continue;
            }
            'd' | 'i' | 'u' | 'o' | 'x' | 'X' => {
                let (v, err) = int_arg(arg_s, utf8);
                errors.extend(err);
                // bash reads with strtoimax/strtoumax: beyond 64 bits the
                // value is clamped, with a warning (awk's values, given
                // through `format_once`, are not).
                let range = if matches!(conv.kind, 'd' | 'i') {
                    i128::from(i64::MIN)..=i128::from(i64::MAX)
                } else {
                    -i128::from(u64::MAX)..=i128::from(u64::MAX)
                };
                let v = if caller != Caller::Bash || range.contains(&v) {
                    v
                } else {
                    errors.push(format!(
                        "printf: warning: {arg_s}: Numerical result out of range"
                    ));
                    if v < 0 && matches!(conv.kind, 'd' | 'i') {
                        *range.start()
                    } else {
                        *range.end()
                    }
                };
                let (lead, digits) = match conv.kind {
                    'd' | 'i' => {
                        let sign = if v < 0 {
                            "-"
                        } else if conv.plus {
                            "+"
                        } else if conv.space {
                            " "
                        } else {
                            ""
                        };
                        (sign.to_owned(), v.unsigned_abs().to_string())
                    }
                    k => {
                        let u = if v < 0 {
                            (v as i64) as u64
                        } else {
                            u64::try_from(v).unwrap_or(u64::MAX)
                        };
                        match k {
                            'o' => (
                                (if conv.alt && u != 0 { "0" } else { "" }).to_owned(),
                                format!("{u:o}"),
                            ),
                            'x' => (
                                (if conv.alt && u != 0 { "0x" } else { "" }).to_owned(),
                                format!("{u:x}"),
                            ),
                            'X' => (
                                (if conv.alt && u != 0 { "0X" } else { "" }).to_owned(),
                                format!("{u:X}"),
                            ),
                            _ => (String::new(), u.to_string()),
                        }
                    }
                };
                let digits = match prec {
                    Some(p) if digits.len() < p => {
                        format!("{}{digits}", "0".repeat(p - digits.len()))
                    }
                    _ => digits,
                };
                pad(conv, width, &lead, &digits, prec.is_none())
            }
            k => {
                let (v, err) = float_arg(arg_s);
                errors.extend(err);
                let p = prec.unwrap_or(6);
                let body = match k {
                    'f' | 'F' => format!("{:.p$}", v.abs()),
                    'e' | 'E' => c_exp(v.abs(), p, k == 'E'),
                    _ => c_general(v.abs(), p, conv.alt, k == 'G'),
                };
                let body = if v.is_nan() {
                    "nan".to_owned()
                } else if v.is_infinite() {
                    "inf".to_owned()
                } else {
                    body
                };
                let sign = if v.is_sign_negative() && !v.is_nan() {
                    "-"
                } else if conv.plus {
                    "+"
                } else if conv.space {
                    " "
                } else {
                    ""
                };
                pad(conv, width, sign, &body, v.is_finite())
            }
        };
        out.extend_from_slice(&crate::lossless::encode(&text));
    }
    (used, false)
}

/// For awk's `printf` and `sprintf`: the kind of each argument `format`
/// takes, in order (`*` for a width or precision), or the format error.
pub(crate) fn argument_kinds(format: &str) -> Result<Vec<char>, String> {
    let mut kinds = Vec::new();
    for piece in compile(&escape_backslashes(format), true)? {
        if let Piece::Conv(c) = piece {
            if c.width == Some(None) {
                kinds.push('*');
            }
            if c.precision == Some(None) {
                kinds.push('*');
            }
            kinds.push(c.kind);
        }
    }
    Ok(kinds)
}

/// Formats once (awk's rule: extra arguments are ignored), with the
/// arguments already converted to the text each conversion reads; `chars`:
/// `%s` and `%c` count characters (gawk in a UTF-8 locale).
pub(crate) fn format_once(format: &str, args: &[String], chars: bool) -> Result<Vec<u8>, String> {
    let pieces = compile(&escape_backslashes(format), true)?;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    apply(
        &pieces,
        args,
        &mut out,
        &mut errors,
        true,
        0,
        Caller::Other { chars },
    );
    Ok(out)
}

/// Awk has decoded its strings' escapes already: a backslash left in the
/// format is literal.
fn escape_backslashes(format: &str) -> String {
    format.replace('\\', "\\\\")
}

/// `printf FORMAT [ARG]...`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let args = match args.first().map(String::as_str) {
        Some("--") => &args[1..],
        _ => args,
    };
    let Some((format, mut rest)) = args.split_first() else {
        cx.err("printf: usage: printf [-v var] format [arguments]");
        return 2;
    };
    let utf8 = super::utf8_locale(cx);
    let pieces = match compile(format, utf8) {
        Ok(p) => p,
        Err(e) => {
            cx.err(format_args!("vfs-sh: {e}"));
            return 1;
        }
    };
    // bash writes each pass over the format when it is done, and an
    // argument's error (a builtin's, with the shell's prefix) as it
    // meets it: before the output of its pass.
    let mut failed = false;
    loop {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        let now = crate::time::epoch_seconds(cx.env.now);
        let (used, stop) = apply(
            &pieces,
            rest,
            &mut out,
            &mut errors,
            utf8,
            now,
            Caller::Bash,
        );
        // A value out of range is a warning: it is clamped, the status stays.
        failed |= errors.iter().any(|e| !e.starts_with("printf: warning:"));
        for e in errors {
            cx.err(format_args!("vfs-sh: {e}"));
        }
        cx.out(&out);
        rest = &rest[used.min(rest.len())..];
        if stop || used == 0 || rest.is_empty() {
            break;
        }
    }
    u8::from(failed)
}

/// bash's `printf %q` in the C locale: `''` for nothing, `$'...'` when a
/// byte is not printable ASCII, otherwise a backslash before each character
/// the shell would read specially (`~` and `#` only at the start).
pub(crate) fn shell_quote(s: &str) -> String {
    if s.is_empty() {
        return "''".to_owned();
    }
    let bytes = crate::lossless::encode(s);
    if bytes.iter().any(|b| !(0x20..0x7f).contains(b)) {
        let mut out = String::from("$'");
        for &b in bytes.iter() {
            match b {
                b'\t' => out.push_str("\\t"),
                b'\n' => out.push_str("\\n"),
                b'\r' => out.push_str("\\r"),
                0x07 => out.push_str("\\a"),
                0x08 => out.push_str("\\b"),
                0x0b => out.push_str("\\v"),
                0x0c => out.push_str("\\f"),
                0x1b => out.push_str("\\E"),
                b'\'' => out.push_str("\\'"),
                b'\\' => out.push_str("\\\\"),
                0x20..=0x7e => out.push(b as char),
                _ => out.push_str(&format!("\\{b:03o}")),
            }
        }
        out.push('\'');
        return out;
    }
    let mut out = String::with_capacity(s.len() + 4);
    for (i, c) in s.chars().enumerate() {
        let safe = c.is_ascii_alphanumeric()
            || matches!(c, '_' | '-' | '.' | '/' | ':' | '=' | '+' | '@' | '%')
            || (i > 0 && matches!(c, '~' | '#'));
        if !safe {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(format: &str, args: &[&str]) -> String {
        let pieces = compile(format, true).expect("compiles");
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        let mut rest = args.as_slice();
        let mut out = Vec::new();
        let mut errors = Vec::new();
        loop {
            let (used, stop) = apply(&pieces, rest, &mut out, &mut errors, true, 0, Caller::Bash);
            rest = &rest[used.min(rest.len())..];
            if stop || used == 0 || rest.is_empty() {
                break;
            }
        }
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn conversions() {
        assert_eq!(p("%s-%s\\n", &["a", "b", "c"]), "a-b\nc-\n");
        assert_eq!(p("%5s|%-5s|%.2s", &["ab", "cd", "xyz"]), "   ab|cd   |xy");
        assert_eq!(
            p(
                "%d %i %05d %+d %x %X %o %#x",
                &["42", "-7", "42", "3", "255", "255", "8", "255"]
            ),
            "42 -7 00042 +3 ff FF 10 0xff"
        );
        assert_eq!(p("%d", &["'A"]), "65");
        assert_eq!(p("%d", &["0x10"]), "16");
        assert_eq!(
            p("%f %.2f %8.3f", &["3.14159", "2.5", "-1"]),
            "3.141590 2.50   -1.000"
        );
        assert_eq!(p("%e", &["12345.678"]), "1.234568e+04");
        assert_eq!(
            p("%g %g %g %g", &["0.0001", "123456", "1234567", "0.5"]),
            "0.0001 123456 1.23457e+06 0.5"
        );
        assert_eq!(p("%c%c", &["hello", "w"]), "hw");
        assert_eq!(p("100%%\\n", &[]), "100%\n");
        assert_eq!(p("%b", &["a\\tb\\c", "x"]), "a\tb");
        assert_eq!(p("%*d|%-*d|", &["4", "7", "3", "1"]), "   7|1  |");
        assert_eq!(p("[%s]", &[]), "[]");
        assert_eq!(p("%d", &[]), "0");
        assert_eq!(p("%u", &["-1"]), "18446744073709551615");
    }

    #[test]
    fn bad_input() {
        let (v, e) = int_arg("12abc", false);
        assert_eq!(v, 12);
        assert_eq!(e.as_deref(), Some("printf: 12abc: invalid number"));
        assert!(compile("%k", true).is_err());
        assert!(compile("%q", true).is_ok());
        assert!(compile("%", true).is_err());
    }
}
