//! Bash's brace expansion, before globbing: `docs/{guide,policy}.md`,
//! `file.{md,txt}`, nested `{a,b{c,d}}`, and sequences `{1..5}`, `{a..e}`.
//!
//! Only unquoted braces with a top-level comma (or a valid sequence) expand;
//! `{}`, `{x}` and quoted or escaped braces stay literal, so `xargs -I {}`
//! keeps working. The number of words one expansion may produce is capped.

use crate::lex::WordChar;

/// The most words one word may expand to.
pub(crate) const MAX_WORDS: usize = 4096;

fn is(c: &WordChar, ch: char) -> bool {
    !c.quoted && c.ch == ch
}

/// The index of the `}` closing the `{` at `open`, if any.
fn closing(chars: &[WordChar], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in chars.iter().enumerate().skip(open) {
        if is(c, '{') {
            depth += 1;
        } else if is(c, '}') {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Splits a brace body at its top-level commas.
fn alternatives(body: &[WordChar]) -> Vec<&[WordChar]> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in body.iter().enumerate() {
        if is(c, '{') {
            depth += 1;
        } else if is(c, '}') {
            depth = depth.saturating_sub(1);
        } else if is(c, ',') && depth == 0 {
            parts.push(&body[start..i]);
            start = i + 1;
        }
    }
    parts.push(&body[start..]);
    parts
}

/// The words of a sequence body such as `1..5`, `1..10..2`, `01..10` or
/// `a..e`.
fn sequence(body: &[WordChar]) -> Option<Vec<String>> {
    if body.iter().any(|c| c.quoted) {
        return None;
    }
    let text: String = body.iter().map(|c| c.ch).collect();
    let mut it = text.split("..");
    let (a, b, step) = (it.next()?, it.next()?, it.next());
    if it.next().is_some() {
        return None;
    }
    let step: Option<i64> = match step {
        Some(s) => Some(s.parse().ok()?),
        None => None,
    };
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let n = x.abs_diff(y);
        let by = step.map_or(1, i64::unsigned_abs).max(1);
        if n / by >= MAX_WORDS as u64 {
            return None;
        }
        let width = if (a.trim_start_matches('-').starts_with('0') && a.len() > 1)
            || (b.trim_start_matches('-').starts_with('0') && b.len() > 1)
        {
            a.len().max(b.len())
        } else {
            0
        };
        let dir: i64 = if y >= x { 1 } else { -1 };
        let by = by as i64;
        let mut v = Vec::new();
        let mut k = x;
        while (dir > 0 && k <= y) || (dir < 0 && k >= y) {
            v.push(if width > 0 {
                if k < 0 {
                    format!("-{:0w$}", -k, w = width - 1)
                } else {
                    format!("{k:0width$}")
                }
            } else {
                k.to_string()
            });
            k += dir * by;
        }
        return Some(v);
    }
    let (mut ca, mut cb) = (a.chars(), b.chars());
    match (ca.next(), ca.next(), cb.next(), cb.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (lo, hi) = (x.min(y) as u8, x.max(y) as u8);
            let by = step.map_or(1, i64::unsigned_abs).max(1) as usize;
            let mut v: Vec<String> = (lo..=hi).map(|c| char::from(c).to_string()).collect();
            if x > y {
                v.reverse();
            }
            Some(v.into_iter().step_by(by).collect())
        }
        _ => None,
    }
}

fn expand_chars(chars: &[WordChar], out: &mut Vec<Vec<WordChar>>) -> Result<(), String> {
    for open in (0..chars.len()).filter(|&i| is(&chars[i], '{')) {
        let Some(close) = closing(chars, open) else {
            continue;
        };
        let body = &chars[open + 1..close];
        let parts: Vec<Vec<WordChar>> = match sequence(body) {
            Some(seq) => seq
                .into_iter()
                .map(|s| s.chars().map(|ch| WordChar { ch, quoted: true }).collect())
                .collect(),
            None => {
                let alts = alternatives(body);
                if alts.len() < 2 {
                    continue;
                }
                alts.into_iter().map(<[WordChar]>::to_vec).collect()
            }
        };
        for part in parts {
            let mut w = chars[..open].to_vec();
            w.extend(part);
            w.extend_from_slice(&chars[close + 1..]);
            expand_chars(&w, out)?;
            if out.len() > MAX_WORDS {
                return Err(format!(
                    "vfs-sh: brace expansion gives more than {MAX_WORDS} words"
                ));
            }
        }
        return Ok(());
    }
    out.push(chars.to_vec());
    Ok(())
}

/// Marks which characters of a word's raw text are active for brace
/// expansion: quoted text and `$...` constructs are not.
fn mark(text: &str) -> Vec<WordChar> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    let push = |out: &mut Vec<WordChar>, ch, quoted| out.push(WordChar { ch, quoted });
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => {
                push(&mut out, c, true);
                if let Some(&n) = chars.get(i + 1) {
                    push(&mut out, n, true);
                }
                i += 2;
                continue;
            }
            '\'' | '"' | '`' => {
                push(&mut out, c, true);
                i += 1;
                while let Some(&q) = chars.get(i) {
                    push(&mut out, q, true);
                    i += 1;
                    if q == '\\' && c != '\'' {
                        if let Some(&n) = chars.get(i) {
                            push(&mut out, n, true);
                            i += 1;
                        }
                    } else if q == c {
                        break;
                    }
                }
                continue;
            }
            '$' if matches!(chars.get(i + 1), Some('{' | '(')) => {
                let (open, close) = if chars[i + 1] == '{' {
                    ('{', '}')
                } else {
                    ('(', ')')
                };
                push(&mut out, c, true);
                i += 1;
                let mut depth = 0usize;
                while let Some(&q) = chars.get(i) {
                    push(&mut out, q, true);
                    i += 1;
                    if q == open {
                        depth += 1;
                    } else if q == close {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                }
                continue;
            }
            _ => push(&mut out, c, false),
        }
        i += 1;
    }
    out
}

/// Brace-expands a word's raw text (quotes still in it), giving the texts
/// of the words it stands for, to be parsed again.
pub(crate) fn expand_text(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    expand_chars(&mark(text), &mut out)?;
    Ok(out
        .into_iter()
        .map(|w| w.into_iter().map(|c| c.ch).collect())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<String> {
        expand_text(src).expect("expands")
    }

    #[test]
    fn expansions() {
        let table: &[(&str, &[&str])] = &[
            ("{a,b}c", &["ac", "bc"]),
            ("x{1..3}", &["x1", "x2", "x3"]),
            ("{3..1}", &["3", "2", "1"]),
            ("{a..c}", &["a", "b", "c"]),
            ("a{b,c{d,e}}f", &["abf", "acdf", "acef"]),
            ("{a,}b", &["ab", "b"]),
            ("{}", &["{}"]),
            ("{x}", &["{x}"]),
            ("\"{a,b}\"", &["\"{a,b}\""]),
            ("{a\\,b}", &["{a\\,b}"]),
            ("{x}{a,b}", &["{x}a", "{x}b"]),
            ("{a,b", &["{a,b"]),
            ("*.{md,txt}", &["*.md", "*.txt"]),
            ("{a,b}{1,2}", &["a1", "a2", "b1", "b2"]),
            ("{1..x}", &["{1..x}"]),
            ("${x}{a,b}", &["${x}a", "${x}b"]),
            ("${x:-{a,b}}", &["${x:-{a,b}}"]),
            ("{1..10..3}", &["1", "4", "7", "10"]),
            ("{01..03}", &["01", "02", "03"]),
        ];
        for (src, want) in table {
            assert_eq!(&words(src), want, "{src:?}");
        }
    }

    #[test]
    fn blowups_are_refused() {
        let src = "{a,b}".repeat(14);
        assert!(expand_text(&src).is_err());
    }
}
