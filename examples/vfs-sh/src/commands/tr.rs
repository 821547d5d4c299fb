//! `tr [-c] [-d] [-s] [-t] SET1 [SET2]`: translates, deletes or squeezes
//! bytes of standard input, like GNU tr (which works on bytes): ranges,
//! `[:class:]`, `[=c=]`, `[c*n]` and backslash escapes.

use super::{flag, options};
use crate::exec::Cx;

fn class(name: &str) -> Option<Vec<u8>> {
    let range = |a: u8, b: u8| (a..=b).collect::<Vec<u8>>();
    Some(match name {
        "lower" => range(b'a', b'z'),
        "upper" => range(b'A', b'Z'),
        "digit" => range(b'0', b'9'),
        "alpha" => [range(b'A', b'Z'), range(b'a', b'z')].concat(),
        "alnum" => [range(b'0', b'9'), range(b'A', b'Z'), range(b'a', b'z')].concat(),
        "space" => vec![b'\t', b'\n', 11, 12, b'\r', b' '],
        "blank" => vec![b'\t', b' '],
        "punct" => (33..=126u8).filter(u8::is_ascii_punctuation).collect(),
        "cntrl" => (0..=31u8).chain([127]).collect(),
        "print" => range(32, 126),
        "graph" => range(33, 126),
        "xdigit" => [range(b'0', b'9'), range(b'A', b'F'), range(b'a', b'f')].concat(),
        _ => return None,
    })
}

/// Decodes one possibly escaped byte at `i`; returns it and the next index.
fn one(s: &[u8], i: usize) -> (u8, usize) {
    let b = s[i];
    if b != b'\\' {
        return (b, i + 1);
    }
    let Some(&e) = s.get(i + 1) else {
        return (b'\\', i + 1);
    };
    let simple = match e {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'a' => 7,
        b'b' => 8,
        b'f' => 12,
        b'v' => 11,
        b'0'..=b'7' => {
            let mut v: u32 = 0;
            let mut j = i + 1;
            while j < s.len() && j < i + 4 && (b'0'..=b'7').contains(&s[j]) {
                v = v * 8 + u32::from(s[j] - b'0');
                j += 1;
            }
            return ((v & 0xff) as u8, j);
        }
        other => other,
    };
    (simple, i + 2)
}

/// A parsed set: its bytes, and where a `[c*]` fill (SET2 only) goes.
struct Set {
    bytes: Vec<u8>,
    fill: Option<(usize, u8)>,
}

/// What a `[` starts: a class, an equivalence class or a repeat.
enum Bracket {
    Bytes(Vec<u8>),
    /// `[c*]`: as many `c` as SET1 needs.
    Fill(u8),
}

fn repeat_count(num: &str) -> Result<usize, String> {
    let radix = if num.starts_with('0') { 8 } else { 10 };
    usize::from_str_radix(num, radix)
        .map_err(|_| format!("tr: invalid repeat count '{num}' in [c*n] construct"))
}

/// Parses the bracket construct at `s[i] == b'['`, if it is one; returns it
/// and the index after it.
fn bracket(s: &[u8], i: usize) -> Result<Option<(Bracket, usize)>, String> {
    let rest = &s[i + 1..];
    if let Some(body) = rest.strip_prefix(b":")
        && let Some(end) = body.windows(2).position(|w| w == b":]")
    {
        let name = String::from_utf8_lossy(&body[..end]);
        let c = class(&name).ok_or_else(|| format!("tr: invalid character class '{name}'"))?;
        return Ok(Some((Bracket::Bytes(c), i + 2 + end + 2)));
    }
    if rest.len() >= 4 && rest[0] == b'=' && rest[2] == b'=' && rest[3] == b']' {
        return Ok(Some((Bracket::Bytes(vec![rest[1]]), i + 5)));
    }
    if rest.is_empty() {
        return Ok(None);
    }
    let (c, after) = one(s, i + 1);
    if s.get(after) != Some(&b'*') {
        return Ok(None);
    }
    let Some(close) = s[after + 1..].iter().position(|&b| b == b']') else {
        return Ok(None);
    };
    let num = String::from_utf8_lossy(&s[after + 1..after + 1 + close]).into_owned();
    let next = after + 1 + close + 1;
    Ok(Some(match num.as_str() {
        "" => (Bracket::Fill(c), next),
        n => match repeat_count(n)? {
            0 => (Bracket::Fill(c), next),
            n => (Bracket::Bytes(vec![c; n.min(1 << 16)]), next),
        },
    }))
}

fn parse_set(s: &str) -> Result<Set, String> {
    let s = s.as_bytes();
    let mut bytes = Vec::new();
    let mut fill = None;
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'['
            && let Some((b, next)) = bracket(s, i)?
        {
            match b {
                Bracket::Bytes(v) => bytes.extend(v),
                Bracket::Fill(c) => fill = Some((bytes.len(), c)),
            }
            i = next;
            continue;
        }
        let (lo, next) = one(s, i);
        if s.get(next) == Some(&b'-') && next + 1 < s.len() {
            let (hi, after) = one(s, next + 1);
            if hi < lo {
                let text = String::from_utf8_lossy(&s[i..after]).into_owned();
                return Err(format!(
                    "tr: range-endpoints of '{text}' are in reverse collating sequence order"
                ));
            }
            bytes.extend(lo..=hi);
            i = after;
        } else {
            bytes.push(lo);
            i = next;
        }
    }
    Ok(Set { bytes, fill })
}

/// `tr`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('c', "complement", "c"),
        flag('C', "", "c"),
        flag('d', "delete", "d"),
        flag('s', "squeeze-repeats", "s"),
        flag('t', "truncate-set1", "t"),
    ];
    let p = match options(cx, "tr", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let (del, squeeze, comp) = (p.has("d"), p.has("s"), p.has("c"));
    let ops = &p.operands;
    let usage = |cx: &mut Cx<'_>, msg: String, hint: Option<&str>| {
        cx.err(msg);
        if let Some(h) = hint {
            cx.err(h);
        }
        cx.err("Try 'tr --help' for more information.");
        1
    };
    let translating = !(del || squeeze && ops.len() == 1);
    match (ops.len(), del, squeeze) {
        (0, _, _) => return usage(cx, "tr: missing operand".to_owned(), None),
        (1, false, false) => {
            return usage(
                cx,
                format!("tr: missing operand after '{}'", ops[0]),
                Some("Two strings must be given when translating."),
            );
        }
        (1, true, true) => {
            return usage(
                cx,
                format!("tr: missing operand after '{}'", ops[0]),
                Some("Two strings must be given when both deleting and squeezing repeats."),
            );
        }
        (2, true, false) => {
            return usage(
                cx,
                format!("tr: extra operand '{}'", ops[1]),
                Some("Only one string may be given when deleting without squeezing repeats."),
            );
        }
        (n, _, _) if n > 2 => {
            let hint = "tr reads standard input only: pipe the file in, e.g. cat FILE | tr ...";
            return usage(cx, format!("tr: extra operand '{}'", ops[2]), Some(hint));
        }
        _ => {}
    }
    let set1 = match parse_set(&ops[0]) {
        Ok(s) => s.bytes,
        Err(e) => return usage(cx, e, None),
    };
    let mut set1 = if comp {
        (0..=255u8).filter(|b| !set1.contains(b)).collect()
    } else {
        set1
    };
    let set2 = match ops.get(1).map(|s| parse_set(s)) {
        None => None,
        Some(Ok(mut s)) => {
            if let Some((at, c)) = s.fill {
                let missing = set1.len().saturating_sub(s.bytes.len());
                s.bytes.splice(at..at, std::iter::repeat_n(c, missing));
            }
            Some(s.bytes)
        }
        Some(Err(e)) => return usage(cx, e, None),
    };
    let mut map: [u8; 256] = std::array::from_fn(|i| i as u8);
    let mut delete = [false; 256];
    let mut squeeze_set = [false; 256];
    if del {
        for &b in &set1 {
            delete[b as usize] = true;
        }
    }
    if translating {
        let set2 = set2.clone().unwrap_or_default();
        if p.has("t") {
            set1.truncate(set2.len());
        }
        let Some(&last) = set2.last() else {
            if set1.is_empty() {
                return 0;
            }
            return usage(
                cx,
                "tr: when not truncating set1, string2 must be non-empty".to_owned(),
                None,
            );
        };
        for (i, &b) in set1.iter().enumerate() {
            map[b as usize] = set2.get(i).copied().unwrap_or(last);
        }
    }
    if squeeze {
        let which = if ops.len() == 2 {
            set2.unwrap_or_default()
        } else {
            set1
        };
        for b in which {
            squeeze_set[b as usize] = true;
        }
    }
    // A piece at a time: a large input is never held whole.
    let mut last: Option<u8> = None;
    let _ = cx.stream_operand("-", |cx, piece| {
        let mut out = Vec::with_capacity(piece.len());
        for &b in piece {
            if delete[b as usize] {
                continue;
            }
            let t = map[b as usize];
            if squeeze_set[t as usize] && last == Some(t) {
                continue;
            }
            out.push(t);
            last = Some(t);
        }
        cx.out(&out);
    });
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> Vec<u8> {
        parse_set(s).expect("parses").bytes
    }

    #[test]
    fn sets() {
        assert_eq!(set("a-e"), b"abcde");
        assert_eq!(set("\\n\\t\\\\"), b"\n\t\\");
        assert_eq!(set("[:digit:]x"), b"0123456789x");
        assert_eq!(set("[x*3]"), b"xxx");
        assert_eq!(set("[=a=]"), b"a");
        assert_eq!(set("a-"), b"a-");
        assert_eq!(set("\\101"), b"A");
        assert!(parse_set("z-a").is_err());
        assert!(parse_set("[:nope:]").is_err());
        assert_eq!(parse_set("[y*]").expect("parses").fill, Some((0, b'y')));
    }
}
