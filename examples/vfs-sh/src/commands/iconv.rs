//! `iconv`: conversions between UTF-8, ASCII, Latin-1, Windows-1252,
//! UTF-16 and UTF-32, with glibc's rules: `//TRANSLIT` (its table for the
//! C locale, `iconv_translit.tsv`, measured from glibc 2.36's own `iconv`:
//! `“` is `"`, `€` is `EUR`, a letter with an accent is `?`), `//IGNORE`
//! and `-c`, and its messages (`illegal input sequence at position N`).

use crate::exec::Cx;

/// glibc's transliterations in the C locale, `HEX<TAB>TEXT` a line.
const TRANSLIT: &str = include_str!("iconv_translit.tsv");

#[derive(Clone, Copy, PartialEq, Eq)]
enum Enc {
    Utf8,
    Ascii,
    Latin1,
    Cp1252,
    /// With a byte order mark: written little-endian, read by its mark.
    Utf16,
    Utf16Le,
    Utf16Be,
    Utf32,
    Utf32Le,
    Utf32Be,
}

/// An encoding's name as iconv takes it (any case, with or without
/// dashes), and what follows `//`.
fn encoding(name: &str) -> Option<(Enc, bool, bool)> {
    let mut parts = name.split("//");
    let base = parts.next().unwrap_or("");
    let (mut translit, mut ignore) = (false, false);
    for p in parts {
        match p.to_ascii_uppercase().as_str() {
            "TRANSLIT" => translit = true,
            "IGNORE" => ignore = true,
            "" => {}
            _ => return None,
        }
    }
    let key: String = base
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_ascii_uppercase();
    let enc = match key.as_str() {
        "UTF8" => Enc::Utf8,
        // The C locale's character set.
        "" | "ASCII" | "USASCII" | "ANSIX3.41968" | "646" => Enc::Ascii,
        "LATIN1" | "L1" | "ISO88591" | "ISO885911987" | "CP819" | "IBM819" => Enc::Latin1,
        "CP1252" | "WINDOWS1252" => Enc::Cp1252,
        "UTF16" => Enc::Utf16,
        "UTF16LE" => Enc::Utf16Le,
        "UTF16BE" => Enc::Utf16Be,
        "UTF32" | "UCS4" => Enc::Utf32,
        "UTF32LE" => Enc::Utf32Le,
        "UTF32BE" => Enc::Utf32Be,
        _ => return None,
    };
    Some((enc, translit, ignore))
}

/// Windows-1252's characters for 0x80..=0x9F (0 where it has none).
const CP1252_HIGH: [u32; 32] = [
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0, 0x017D, 0, 0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC,
    0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
];

/// Why decoding stopped: at a byte that is not of the encoding, or in a
/// character the input ends inside.
enum Bad {
    Illegal(usize),
    Incomplete,
}

/// The characters of `data`, each with the offset where it starts.
fn decode(enc: Enc, data: &[u8], skip_invalid: bool) -> (Vec<(u32, usize)>, Option<Bad>) {
    let mut out = Vec::new();
    let mut i = 0;
    let n = data.len();
    let unit = |k: usize, w: usize, be: bool| -> u32 {
        let b = &data[k..k + w];
        if be {
            b.iter().fold(0u32, |a, &x| (a << 8) | u32::from(x))
        } else {
            b.iter().rev().fold(0u32, |a, &x| (a << 8) | u32::from(x))
        }
    };
    let (mut enc, mut be) = (enc, false);
    match enc {
        Enc::Utf16 | Enc::Utf32 => {
            let w = if enc == Enc::Utf16 { 2 } else { 4 };
            if n >= w {
                if unit(0, w, false) == 0xFEFF {
                    i = w;
                } else if unit(0, w, true) == 0xFEFF {
                    i = w;
                    be = true;
                }
            }
            enc = match (enc, be) {
                (Enc::Utf16, false) => Enc::Utf16Le,
                (Enc::Utf16, true) => Enc::Utf16Be,
                (_, false) => Enc::Utf32Le,
                _ => Enc::Utf32Be,
            };
        }
        _ => {}
    }
    while i < n {
        let start = i;
        let got: Result<(u32, usize), Bad> = match enc {
            Enc::Ascii if data[i] < 0x80 => Ok((u32::from(data[i]), 1)),
            Enc::Ascii => Err(Bad::Illegal(i)),
            Enc::Latin1 => Ok((u32::from(data[i]), 1)),
            Enc::Cp1252 => match data[i] {
                b @ 0x80..=0x9F => match CP1252_HIGH[usize::from(b - 0x80)] {
                    0 => Err(Bad::Illegal(i)),
                    c => Ok((c, 1)),
                },
                b => Ok((u32::from(b), 1)),
            },
            Enc::Utf8 => match std::str::from_utf8(&data[i..(i + 4).min(n)]) {
                Ok(s) => {
                    let c = s.chars().next().unwrap_or('\0');
                    Ok((u32::from(c), c.len_utf8()))
                }
                Err(e) if e.valid_up_to() > 0 => {
                    let s = std::str::from_utf8(&data[i..i + e.valid_up_to()]).unwrap_or("\0");
                    let c = s.chars().next().unwrap_or('\0');
                    Ok((u32::from(c), c.len_utf8()))
                }
                Err(e) if e.error_len().is_none() && i + 4 > n => Err(Bad::Incomplete),
                Err(_) => Err(Bad::Illegal(i)),
            },
            Enc::Utf16Le | Enc::Utf16Be => {
                let be = enc == Enc::Utf16Be;
                if i + 2 > n {
                    Err(Bad::Incomplete)
                } else {
                    let hi = unit(i, 2, be);
                    if (0xD800..0xDC00).contains(&hi) {
                        if i + 4 > n {
                            Err(Bad::Incomplete)
                        } else {
                            let lo = unit(i + 2, 2, be);
                            if (0xDC00..0xE000).contains(&lo) {
                                Ok((0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 4))
                            } else {
                                Err(Bad::Illegal(i))
                            }
                        }
                    } else if (0xDC00..0xE000).contains(&hi) {
                        Err(Bad::Illegal(i))
                    } else {
                        Ok((hi, 2))
                    }
                }
            }
            _ => {
                let be = enc == Enc::Utf32Be;
                if i + 4 > n {
                    Err(Bad::Incomplete)
                } else {
                    match unit(i, 4, be) {
                        c if char::from_u32(c).is_some() => Ok((c, 4)),
                        _ => Err(Bad::Illegal(i)),
                    }
                }
            }
        };
        match got {
            Ok((c, w)) => {
                out.push((c, start));
                i += w;
            }
            Err(Bad::Illegal(_)) if skip_invalid => i += 1,
            Err(bad) => return (out, Some(bad)),
        }
    }
    (out, None)
}

/// Appends a character in `enc`; `false` when `enc` cannot hold it.
fn encode(enc: Enc, c: u32, out: &mut Vec<u8>) -> bool {
    let push16 = |out: &mut Vec<u8>, u: u32, be: bool| {
        let b = (u as u16).to_le_bytes();
        if be {
            out.extend_from_slice(&[b[1], b[0]]);
        } else {
            out.extend_from_slice(&b);
        }
    };
    match enc {
        Enc::Ascii => {
            if c >= 0x80 {
                return false;
            }
            out.push(c as u8);
        }
        Enc::Latin1 => {
            if c > 0xFF {
                return false;
            }
            out.push(c as u8);
        }
        Enc::Cp1252 => match c {
            0x80..=0x9F => return false,
            0..=0xFF => out.push(c as u8),
            _ => match CP1252_HIGH.iter().position(|&h| h == c) {
                Some(k) => out.push(0x80 + k as u8),
                None => return false,
            },
        },
        Enc::Utf8 => {
            let ch = char::from_u32(c).unwrap_or('\u{FFFD}');
            let mut b = [0; 4];
            out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
        }
        Enc::Utf16 | Enc::Utf16Le | Enc::Utf16Be => {
            let be = enc == Enc::Utf16Be;
            if c >= 0x10000 {
                let v = c - 0x10000;
                push16(out, 0xD800 + (v >> 10), be);
                push16(out, 0xDC00 + (v & 0x3FF), be);
            } else {
                push16(out, c, be);
            }
        }
        Enc::Utf32 | Enc::Utf32Le => out.extend_from_slice(&c.to_le_bytes()),
        Enc::Utf32Be => out.extend_from_slice(&c.to_be_bytes()),
    }
    true
}

/// The transliteration of `c`, from the table read once (it is sorted by
/// code point, as it was measured).
fn translit(c: u32) -> Option<&'static str> {
    static TABLE: std::sync::OnceLock<Vec<(u32, &'static str)>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        TRANSLIT
            .lines()
            .filter_map(|l| {
                let (hex, text) = l.split_once('\t')?;
                Some((u32::from_str_radix(hex, 16).ok()?, text))
            })
            .collect()
    });
    table
        .binary_search_by_key(&c, |&(k, _)| k)
        .ok()
        .map(|i| table[i].1)
}

/// `iconv [-f FROM] [-t TO] [-c] [-s] [FILE]...`
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let (mut from, mut to, mut omit) = (String::new(), String::new(), false);
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let mut value = |inline: Option<&str>| -> Option<String> {
            match inline {
                Some(v) if !v.is_empty() => Some(v.to_owned()),
                _ => {
                    let v = args.get(i).cloned();
                    i += 1;
                    v
                }
            }
        };
        match a.as_str() {
            "-c" => omit = true,
            "-s" | "--silent" => {}
            "-l" | "--list" => {
                cx.outs("ANSI_X3.4-1968//\nISO-8859-1//\nUTF-16//\nUTF-16BE//\nUTF-16LE//\nUTF-32//\nUTF-32BE//\nUTF-32LE//\nUTF-8//\nWINDOWS-1252//\n");
                return 0;
            }
            s if s.starts_with("--from-code=") => from = s[12..].to_owned(),
            s if s.starts_with("--to-code=") => to = s[10..].to_owned(),
            s if s.starts_with("-o") || s.starts_with("--output") => {
                cx.err("iconv: cannot write an output file: the filesystem is read-only");
                return 1;
            }
            s if s.starts_with("-f") => match value(s.get(2..)) {
                Some(v) => from = v,
                None => {
                    cx.err("iconv: option requires an argument -- 'f'");
                    return 64;
                }
            },
            s if s.starts_with("-t") => match value(s.get(2..)) {
                Some(v) => to = v,
                None => {
                    cx.err("iconv: option requires an argument -- 't'");
                    return 64;
                }
            },
            "--" => {
                files.extend(args[i..].iter().cloned());
                break;
            }
            _ => files.push(a.clone()),
        }
    }
    let (Some((from_enc, _, _)), Some((to_enc, translit_on, ignore))) =
        (encoding(&from), encoding(&to))
    else {
        cx.err("iconv: failed to start conversion processing");
        return 1;
    };
    if files.is_empty() {
        files.push("-".to_owned());
    }
    let mut out = Vec::new();
    if matches!(to_enc, Enc::Utf16 | Enc::Utf32) {
        // The byte order mark, little-endian.
        encode(to_enc, 0xFEFF, &mut out);
    }
    for f in &files {
        let data = match cx.read_file_operand(f) {
            Ok(d) => d,
            Err(e) => {
                cx.out(&out);
                cx.err(format_args!(
                    "iconv: cannot open input file `{f}': {}",
                    e.strerror()
                ));
                return 1;
            }
        };
        let (chars, bad) = decode(from_enc, &data, omit || ignore);
        let mut skipped = false;
        for (c, at) in chars {
            if encode(to_enc, c, &mut out) {
                continue;
            }
            if translit_on {
                let text = translit(c).unwrap_or("?");
                for ch in text.chars() {
                    encode(to_enc, u32::from(ch), &mut out);
                }
                continue;
            }
            if omit || ignore {
                skipped = true;
                continue;
            }
            cx.out(&out);
            cx.err(format_args!(
                "iconv: illegal input sequence at position {at}"
            ));
            return 1;
        }
        match bad {
            Some(Bad::Illegal(at)) => {
                cx.out(&out);
                cx.err(format_args!(
                    "iconv: illegal input sequence at position {at}"
                ));
                return 1;
            }
            Some(Bad::Incomplete) => {
                cx.out(&out);
                cx.err("iconv: incomplete character or shift sequence at end of buffer");
                return 1;
            }
            None => {}
        }
        // `//IGNORE` reports, at the end, that something was left out.
        if ignore && !omit && (skipped || data_had_invalid(from_enc, &data)) {
            cx.out(&out);
            cx.err(format_args!(
                "iconv: illegal input sequence at position {}",
                data.len()
            ));
            return 1;
        }
    }
    cx.out(&out);
    0
}

/// Whether `data` holds a byte sequence `enc` does not read.
fn data_had_invalid(enc: Enc, data: &[u8]) -> bool {
    matches!(decode(enc, data, false).1, Some(Bad::Illegal(_)))
}
