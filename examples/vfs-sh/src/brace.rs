//! Bash's brace expansion, before globbing: `docs/{guide,policy}.md`,
//! `file.{md,txt}`, nested `{a,b{c,d}}`, and sequences `{1..5}`, `{a..e}`.
//!
//! Only unquoted braces with a top-level comma (or a valid sequence) expand;
//! `{}`, `{x}` and quoted or escaped braces stay literal, so `xargs -I {}`
//! keeps working. The number of words one expansion may produce is capped.

use crate::lex::{Word, WordChar};

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

/// The words of a sequence body such as `1..5` or `a..e`.
fn sequence(body: &[WordChar]) -> Option<Vec<String>> {
    if body.iter().any(|c| c.quoted) {
        return None;
    }
    let text: String = body.iter().map(|c| c.ch).collect();
    let (a, b) = text.split_once("..")?;
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let n = x.abs_diff(y);
        if n >= MAX_WORDS as u64 {
            return None;
        }
        let step: i64 = if y >= x { 1 } else { -1 };
        return Some((0..=n as i64).map(|k| (x + k * step).to_string()).collect());
    }
    let (mut ca, mut cb) = (a.chars(), b.chars());
    match (ca.next(), ca.next(), cb.next(), cb.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (lo, hi) = (x.min(y) as u8, x.max(y) as u8);
            let mut v: Vec<String> = (lo..=hi).map(|c| char::from(c).to_string()).collect();
            if x > y {
                v.reverse();
            }
            Some(v)
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

/// Expands a word's braces; a word without any gives itself.
pub(crate) fn expand(word: &Word) -> Result<Vec<Word>, String> {
    let mut out = Vec::new();
    expand_chars(&word.chars, &mut out)?;
    Ok(out.into_iter().map(|chars| Word { chars }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::{Token, tokenize};

    fn words(src: &str) -> Vec<String> {
        let mut all = Vec::new();
        for t in tokenize(src).expect("tokenizes") {
            if let Token::Word(w) = t {
                all.extend(expand(&w).expect("expands").iter().map(Word::text));
            }
        }
        all
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
            ("\"{a,b}\"", &["{a,b}"]),
            ("{a\\,b}", &["{a,b}"]),
            ("{x}{a,b}", &["{x}a", "{x}b"]),
            ("{a,b", &["{a,b"]),
            ("*.{md,txt}", &["*.md", "*.txt"]),
            ("{a,b}{1,2}", &["a1", "a2", "b1", "b2"]),
            ("{1..x}", &["{1..x}"]),
        ];
        for (src, want) in table {
            assert_eq!(&words(src), want, "{src:?}");
        }
    }

    #[test]
    fn blowups_are_refused() {
        let src = "{a,b}".repeat(14);
        let w = match tokenize(&src).expect("tokenizes").pop() {
            Some(Token::Word(w)) => w,
            other => panic!("{other:?}"),
        };
        assert!(expand(&w).is_err());
    }
}
