//! `echo` (bash's builtin) and the backslash escapes it shares with
//! `printf`.

use crate::exec::Cx;

/// Which escape dialect to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `echo -e` and `printf %b`: `\0NNN` octal, `\c` stops output.
    Echo,
    /// A `printf` format: `\NNN` octal, `\"`, `\'`, `\?`.
    Format,
}

fn push_char(out: &mut Vec<u8>, code: u32) {
    let c = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// Reads up to `max` digits of `radix` from `chars` at `i`; returns the
/// value and how many digits were read.
fn digits(chars: &[char], i: usize, radix: u32, max: usize) -> (u32, usize) {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max {
        match chars.get(i + n).and_then(|c| c.to_digit(radix)) {
            Some(d) => {
                v = v.wrapping_mul(radix).wrapping_add(d);
                n += 1;
            }
            None => break,
        }
    }
    (v, n)
}

/// Decodes backslash escapes; the flag is true when `\c` asked to stop all
/// further output.
pub(crate) fn unescape(s: &str, dialect: Dialect, utf8: bool) -> (Vec<u8>, bool) {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c != '\\' {
            match crate::lossless::raw_byte(c) {
                Some(b) => out.push(b),
                None => push_char(&mut out, u32::from(c)),
            }
            continue;
        }
        let Some(&e) = chars.get(i) else {
            out.push(b'\\');
            break;
        };
        i += 1;
        let simple = match e {
            'a' => Some(7u8),
            'b' => Some(8),
            'e' | 'E' => Some(27),
            'f' => Some(12),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(11),
            '\\' => Some(b'\\'),
            '"' | '\'' | '?' if dialect == Dialect::Format => Some(e as u8),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            continue;
        }
        match e {
            'c' if dialect == Dialect::Echo => return (out, true),
            '0' if dialect == Dialect::Echo => {
                let (v, n) = digits(&chars, i, 8, 3);
                i += n;
                out.push((v & 0xff) as u8);
            }
            '0'..='7' if dialect == Dialect::Format => {
                let (v, n) = digits(&chars, i - 1, 8, 3);
                i += n - 1;
                out.push((v & 0xff) as u8);
            }
            'x' => {
                let (v, n) = digits(&chars, i, 16, 2);
                if n == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    i += n;
                    out.push((v & 0xff) as u8);
                }
            }
            'u' | 'U' => {
                let max = if e == 'u' { 4 } else { 8 };
                let (v, n) = digits(&chars, i, 16, max);
                if n == 0 {
                    out.push(b'\\');
                    push_char(&mut out, u32::from(e));
                } else {
                    i += n;
                    if v < 0x80 || utf8 {
                        push_char(&mut out, v);
                    } else if e == 'u' {
                        // Not in the C locale's character set: bash
                        // leaves the escape, in capitals.
                        out.extend_from_slice(format!("\\u{v:04X}").as_bytes());
                    } else {
                        out.extend_from_slice(format!("\\U{v:08X}").as_bytes());
                    }
                }
            }
            other => {
                out.push(b'\\');
                push_char(&mut out, u32::from(other));
            }
        }
    }
    (out, false)
}

/// `echo [-neE] [ARG]...`, as bash's builtin: options are recognised only
/// while each argument is made of `n`, `e` and `E` after a `-`.
/// The size from which `echo` writes an argument by itself rather than
/// into the line it builds.
const DIRECT: usize = 64 << 10;

pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut newline = true;
    let mut escapes = false;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        let Some(flags) = first.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        rest = tail;
    }
    let mut out = Vec::new();
    for (i, a) in rest.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        if escapes {
            let (bytes, stop) = unescape(a, Dialect::Echo, super::utf8_locale(cx));
            out.extend_from_slice(&bytes);
            if stop {
                cx.out(&out);
                return 0;
            }
        } else if a.len() >= DIRECT {
            // A large argument (a document held in a variable) is written
            // as it is, not copied into the line first.
            if !out.is_empty() {
                cx.out(&out);
                out.clear();
            }
            cx.out(&crate::lossless::encode(a));
        } else {
            out.extend_from_slice(&crate::lossless::encode(a));
        }
    }
    if newline {
        out.push(b'\n');
    }
    cx.out(&out);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        let e = |s: &str| unescape(s, Dialect::Echo, true);
        assert_eq!(e("a\\tb\\n"), (b"a\tb\n".to_vec(), false));
        assert_eq!(e("\\0101\\x41\\u00e9"), ("AAé".as_bytes().to_vec(), false));
        assert_eq!(e("a\\cb"), (b"a".to_vec(), true));
        assert_eq!(e("\\q\\"), (b"\\q\\".to_vec(), false));
        let f = |s: &str| unescape(s, Dialect::Format, true).0;
        assert_eq!(f("\\101\\\"\\7"), b"A\"\x07".to_vec());
        assert_eq!(f("\\c"), b"\\c".to_vec());
    }
}
