//! POSIX regular expressions (GNU grep's basic and extended syntax) to the
//! Rust `regex` syntax that both the host search (ripgrep's engine) and the
//! in-guest matcher use.
//!
//! `grep 'a\|b'`, `grep -E 'a|b'`, `\<word\>`, `[[:digit:]]`, `a\{2,\}` and
//! GNU's literal `*` at the start of an expression all mean what they mean
//! to GNU grep. Back-references (`\(.\)\1`) are kept and flagged: the
//! linear engine cannot match them, so their users compile them with
//! `fancy-regex`, in the guest.

use crate::glob::Named;

/// Which flavour of regular expression a pattern is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// POSIX basic (`grep`, `grep -G`, `sed`).
    Basic,
    /// POSIX extended (`grep -E`, `sed -E`).
    Extended,
    /// awk's: extended, where a backslash inside a bracket expression
    /// escapes the next character (gawk's `RE_BACKSLASH_ESCAPE_IN_LISTS`),
    /// so `[\]]` is `]` and `[/\]` is unmatched.
    Awk,
}

/// A translated pattern, with GNU's warnings (such as "stray \ before d").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Translated {
    pub(crate) regex: String,
    pub(crate) warnings: Vec<String>,
    /// The pattern has back-references (`\(a\)\1`): only a backtracking
    /// engine (`fancy-regex`) can match it.
    pub(crate) backrefs: bool,
}

/// Escapes one character for use outside a class.
fn lit(out: &mut String, c: char) {
    let mut buf = [0u8; 4];
    out.push_str(&regex::escape(c.encode_utf8(&mut buf)));
}

/// Escapes one character for use inside a class.
fn class_lit(out: &mut String, c: char) {
    if matches!(c, '\\' | '[' | ']' | '^' | '-' | '&' | '~' | '|') {
        out.push('\\');
    }
    out.push(c);
}

/// Translates a bracket expression starting after `[`; returns the index
/// after its `]`.
fn bracket(chars: &[char], mut i: usize, out: &mut String, escapes: bool) -> Result<usize, String> {
    const UNMATCHED: &str = "Unmatched [, [^, [:, [., or [=";
    out.push('[');
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    let mut items = 0;
    loop {
        let Some(&c) = chars.get(i) else {
            // GNU words a pattern that ends at `[` or `[^` differently.
            return Err(if first {
                "Invalid regular expression"
            } else {
                UNMATCHED
            }
            .to_owned());
        };
        if c == ']' && !first {
            if items == 0 {
                return Err(UNMATCHED.to_owned());
            }
            out.push(']');
            return Ok(i + 1);
        }
        first = false;
        items += 1;
        let (c, width) = match c {
            '\\' if escapes => match chars.get(i + 1) {
                Some(&n) => (n, 2),
                None => return Err(UNMATCHED.to_owned()),
            },
            c => (c, 1),
        };
        if width == 1 && c == '[' && matches!(chars.get(i + 1), Some(':' | '=' | '.')) {
            let kind = chars[i + 1];
            let rest = &chars[i + 2..];
            let Some(end) = rest.windows(2).position(|w| w[0] == kind && w[1] == ']') else {
                return Err(UNMATCHED.to_owned());
            };
            let name: String = rest[..end].iter().collect();
            if kind == ':' {
                if Named::parse(&name).is_none() {
                    return Err("Invalid character class name".to_owned());
                }
                out.push_str(&format!("[:{name}:]"));
            } else {
                for ch in name.chars() {
                    class_lit(out, ch);
                }
            }
            i += 2 + end + 2;
            continue;
        }
        class_lit(out, c);
        i += width;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&n| n != ']') {
            let (hi, width) = match chars[i + 1] {
                '\\' if escapes => match chars.get(i + 2) {
                    Some(&n) => (n, 2),
                    None => return Err(UNMATCHED.to_owned()),
                },
                hi => (hi, 1),
            };
            if hi < c {
                return Err("Invalid range end".to_owned());
            }
            out.push('-');
            class_lit(out, hi);
            i += 1 + width;
        }
    }
}

/// Parses an interval `{m}`, `{m,}`, `{,n}`, `{m,n}` whose body starts at
/// `i`; `close` is the closing sequence (`}` or `\}`). Returns the Rust
/// interval and the index after it.
fn interval(chars: &[char], i: usize, close: &[char]) -> Option<(String, usize)> {
    let mut j = i;
    let mut body = String::new();
    while let Some(&c) = chars.get(j) {
        if chars[j..].starts_with(close) {
            if body.is_empty() || body == "," {
                return None;
            }
            let (lo, hi) = match body.split_once(',') {
                Some((lo, hi)) => (lo, Some(hi)),
                None => (body.as_str(), None),
            };
            let lo = if lo.is_empty() { "0" } else { lo };
            let lo_n: u32 = lo.parse().ok()?;
            let text = match hi {
                None => format!("{{{lo}}}"),
                Some("") => format!("{{{lo},}}"),
                Some(hi) => {
                    let hi_n: u32 = hi.parse().ok()?;
                    if hi_n < lo_n {
                        return None;
                    }
                    format!("{{{lo},{hi}}}")
                }
            };
            if lo_n > 1000 {
                return None;
            }
            return Some((text, j + close.len()));
        }
        if !(c.is_ascii_digit() || c == ',') {
            return None;
        }
        body.push(c);
        j += 1;
    }
    None
}

/// Output under construction: tracks where the last atom starts so that a
/// repetition applied to a repetition (`a**`, legal in POSIX) can be
/// wrapped in a group, which Rust requires.
struct Out {
    s: String,
    atom: Option<usize>,
    quantified: bool,
    groups: Vec<usize>,
}

impl Out {
    fn atom(&mut self, f: impl FnOnce(&mut String)) {
        self.atom = Some(self.s.len());
        self.quantified = false;
        f(&mut self.s);
    }

    fn quantifier(&mut self, q: &str) {
        if self.quantified
            && let Some(at) = self.atom
        {
            self.s.insert_str(at, "(?:");
            self.s.push(')');
        }
        self.s.push_str(q);
        self.quantified = true;
    }

    fn open(&mut self) {
        self.groups.push(self.s.len());
        self.s.push('(');
        self.atom = None;
        self.quantified = false;
    }

    fn close(&mut self) {
        self.atom = self.groups.pop();
        self.s.push(')');
        self.quantified = false;
    }

    fn bare(&mut self, s: &str) {
        self.s.push_str(s);
        self.atom = None;
        self.quantified = false;
    }
}

/// Translates a POSIX pattern into Rust `regex` syntax.
pub(crate) fn translate(pat: &str, syntax: Syntax) -> Result<Translated, String> {
    let basic = syntax == Syntax::Basic;
    let chars: Vec<char> = pat.chars().collect();
    let mut out = Out {
        s: String::new(),
        atom: None,
        quantified: false,
        groups: Vec::new(),
    };
    let mut warnings = Vec::new();
    let mut backrefs = false;
    // Groups closed so far, which a back-reference may name.
    let mut closed = 0usize;
    // At the start of an expression (or a group, or an alternative), where
    // `*` is a literal and, in basic syntax, `^` an anchor.
    let mut start = true;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        let was_start = start;
        start = false;
        match c {
            '\\' => {
                let Some(n) = next else {
                    return Err("Trailing backslash".to_owned());
                };
                i += 2;
                match n {
                    '(' if basic => {
                        out.open();
                        start = true;
                    }
                    ')' if basic => {
                        if out.groups.is_empty() {
                            return Err("Unmatched ) or \\)".to_owned());
                        }
                        out.close();
                        closed += 1;
                    }
                    '|' if basic => {
                        out.bare("|");
                        start = true;
                    }
                    '{' if basic && !was_start => match interval(&chars, i, &['\\', '}']) {
                        Some((q, after)) if out.atom.is_some() => {
                            out.quantifier(&q);
                            i = after;
                        }
                        _ => return Err("Invalid content of \\{\\}".to_owned()),
                    },
                    '+' | '?' if basic && !was_start && out.atom.is_some() => {
                        out.quantifier(&n.to_string());
                    }
                    '<' => out.bare(r"\b{start}"),
                    '>' => out.bare(r"\b{end}"),
                    'b' | 'B' => out.bare(&format!("\\{n}")),
                    'w' | 'W' | 's' | 'S' => out.atom(|s| s.push_str(&format!("\\{n}"))),
                    '`' => out.bare("^"),
                    '\'' => out.bare("$"),
                    '1'..='9' => {
                        // A reference to a group not yet closed is GNU's
                        // "Invalid back reference".
                        if (n as usize - '0' as usize) > closed {
                            return Err("Invalid back reference".to_owned());
                        }
                        backrefs = true;
                        out.atom(|s| {
                            s.push('\\');
                            s.push(n);
                        });
                    }
                    n => {
                        if n.is_alphanumeric() {
                            warnings.push(format!("stray \\ before {n}"));
                        }
                        out.atom(|s| lit(s, n));
                    }
                }
                continue;
            }
            '[' => {
                let mut s = String::new();
                i = bracket(&chars, i + 1, &mut s, syntax == Syntax::Awk)?;
                out.atom(|o| o.push_str(&s));
                continue;
            }
            '*' if was_start || out.atom.is_none() => out.atom(|s| s.push_str(r"\*")),
            '*' => out.quantifier("*"),
            '.' => out.atom(|s| s.push('.')),
            '^' if !basic || was_start => {
                out.bare("^");
                start = true;
            }
            '$' if !basic
                || next.is_none()
                || chars[i + 1..].starts_with(&['\\', ')'])
                || chars[i + 1..].starts_with(&['\\', '|']) =>
            {
                out.bare("$");
            }
            '(' if !basic => {
                out.open();
                start = true;
            }
            ')' if !basic && !out.groups.is_empty() => {
                out.close();
                closed += 1;
            }
            '|' if !basic => {
                out.bare("|");
                start = true;
            }
            '+' | '?' if !basic && !was_start && out.atom.is_some() => {
                out.quantifier(&c.to_string());
            }
            '{' if !basic && !was_start && out.atom.is_some() => {
                match interval(&chars, i + 1, &['}']) {
                    Some((q, after)) => {
                        out.quantifier(&q);
                        i = after;
                        continue;
                    }
                    None => out.atom(|s| lit(s, '{')),
                }
            }
            c => out.atom(|s| lit(s, c)),
        }
        i += 1;
    }
    if !out.groups.is_empty() {
        return Err("Unmatched ( or \\(".to_owned());
    }
    Ok(Translated {
        regex: out.s,
        warnings,
        backrefs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(p: &str, s: Syntax) -> String {
        match translate(p, s) {
            Ok(t) => t.regex,
            Err(e) => format!("ERR {e}"),
        }
    }

    #[test]
    fn basic_syntax() {
        let table: &[(&str, &str)] = &[
            ("foo", "foo"),
            ("a\\|b", "a|b"),
            ("\\(ab\\)*", "(ab)*"),
            ("a\\{2,3\\}", "a{2,3}"),
            ("a\\{,3\\}", "a{0,3}"),
            ("a+b?", "a\\+b\\?"),
            ("a\\+", "a+"),
            ("(x)", "\\(x\\)"),
            ("a|b", "a\\|b"),
            ("{1}", "\\{1\\}"),
            ("*a", "\\*a"),
            ("^*a", "^\\*a"),
            ("a^b", "a\\^b"),
            ("a$b", "a\\$b"),
            ("^a$", "^a$"),
            ("\\(^a$\\)", "(^a$)"),
            ("\\<word\\>", "\\b{start}word\\b{end}"),
            ("[[:digit:]]\\+", "[[:digit:]]+"),
            ("[]a]", "[\\]a]"),
            ("[^]a]", "[^\\]a]"),
            ("[a\\]", "[a\\\\]"),
            ("[a-z]", "[a-z]"),
            ("[a-]", "[a\\-]"),
            ("[[]", "[\\[]"),
            ("[a&&b]", "[a\\&\\&b]"),
            ("a.b", "a.b"),
            ("a\\.b", "a\\.b"),
            ("a**", "(?:a*)*"),
            ("\\d", "d"),
            ("a\\/b", "a/b"),
            ("#x", "\\#x"),
            ("a\\1", "ERR Invalid back reference"),
            ("\\(a\\1\\)", "ERR Invalid back reference"),
            ("\\(a\\)\\(b\\)*\\2\\1", "(a)(b)*\\2\\1"),
            ("[abc", "ERR Unmatched [, [^, [:, [., or [="),
            ("\\(a", "ERR Unmatched ( or \\("),
            ("a\\)", "ERR Unmatched ) or \\)"),
            ("a\\", "ERR Trailing backslash"),
            ("[[:nope:]]", "ERR Invalid character class name"),
            ("[z-a]", "ERR Invalid range end"),
        ];
        for (p, want) in table {
            assert_eq!(t(p, Syntax::Basic), *want, "{p:?}");
        }
    }

    #[test]
    fn extended_syntax() {
        let table: &[(&str, &str)] = &[
            ("a|b", "a|b"),
            ("(ab)+", "(ab)+"),
            ("a{2}", "a{2}"),
            ("a{x", "a\\{x"),
            ("{1}", "\\{1\\}"),
            ("a\\|b", "a\\|b"),
            ("a\\(", "a\\("),
            ("a)", "a\\)"),
            ("+a", "\\+a"),
            ("(*a)", "(\\*a)"),
            ("^a|^b", "^a|^b"),
            ("a+?", "(?:a+)?"),
            ("[0-9]+\\.[0-9]*", "[0-9]+\\.[0-9]*"),
            ("\\w+@\\w+", "\\w+@\\w+"),
        ];
        for (p, want) in table {
            assert_eq!(t(p, Syntax::Extended), *want, "{p:?}");
        }
    }

    #[test]
    fn translations_compile_and_mean_the_same() {
        let cases: &[(&str, Syntax, &str, bool)] = &[
            ("refund\\|return", Syntax::Basic, "our return policy", true),
            ("^#", Syntax::Basic, "# Title", true),
            ("^#", Syntax::Basic, "a # b", false),
            (
                "[0-9]\\{4\\}-[0-9]\\{2\\}",
                Syntax::Basic,
                "on 2024-03-01",
                true,
            ),
            ("\\<cat\\>", Syntax::Basic, "concatenate", false),
            ("\\<cat\\>", Syntax::Basic, "a cat sat", true),
            ("a**", Syntax::Basic, "b", true),
            ("(x|y)z", Syntax::Extended, "yz", true),
            ("x{2,}", Syntax::Extended, "axxb", true),
            ("x{2,}", Syntax::Extended, "axb", false),
        ];
        for (p, s, text, want) in cases {
            let re = translate(p, *s).expect("translates");
            let re = regex::Regex::new(&re.regex).expect("compiles");
            assert_eq!(re.is_match(text), *want, "{p:?} on {text:?}");
        }
        let w = translate("\\d\\+", Syntax::Basic).expect("translates");
        assert_eq!(w.warnings, vec!["stray \\ before d".to_owned()]);
    }
}
