//! Glob patterns: matching (`fnmatch`, for `find -name`, `--include` and the
//! shell) and the shell's pathname expansion of unquoted `*`, `?`, `[...]`.
//!
//! Matching runs in linear-ish time (one backtrack point per `*`), so no
//! pattern can make it blow up.

use crate::fs::Fs;
use crate::lex::Word;

/// One element of a compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Elem {
    Lit(char),
    Any,
    Star,
    Class {
        negated: bool,
        items: Vec<ClassItem>,
    },
    /// An extended pattern (`shopt -s extglob`, and always in `[[ == ]]`):
    /// `@(a|b)` one of, `?(..)` at most one, `*(..)` any number, `+(..)`
    /// one or more, `!(..)` anything but.
    Ext {
        op: char,
        alts: Vec<Pattern>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ClassItem {
    Char(char),
    Range(char, char),
    Named(Named),
}

/// A POSIX character class name, as in `[[:alpha:]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Named {
    Alpha,
    Digit,
    Alnum,
    Upper,
    Lower,
    Space,
    Blank,
    Punct,
    Print,
    Graph,
    Cntrl,
    Xdigit,
}

impl Named {
    /// The class called `name` (without the brackets and colons).
    pub(crate) fn parse(name: &str) -> Option<Named> {
        Some(match name {
            "alpha" => Named::Alpha,
            "digit" => Named::Digit,
            "alnum" => Named::Alnum,
            "upper" => Named::Upper,
            "lower" => Named::Lower,
            "space" => Named::Space,
            "blank" => Named::Blank,
            "punct" => Named::Punct,
            "print" => Named::Print,
            "graph" => Named::Graph,
            "cntrl" => Named::Cntrl,
            "xdigit" => Named::Xdigit,
            _ => return None,
        })
    }

    /// Whether `c` is in the class (Unicode-aware, like glibc's C.UTF-8).
    pub(crate) fn contains(self, c: char) -> bool {
        match self {
            Named::Alpha => c.is_alphabetic(),
            Named::Digit => c.is_ascii_digit(),
            Named::Alnum => c.is_alphanumeric(),
            Named::Upper => c.is_uppercase(),
            Named::Lower => c.is_lowercase(),
            Named::Space => c.is_whitespace(),
            Named::Blank => c == ' ' || c == '\t',
            Named::Punct => c.is_ascii_punctuation(),
            Named::Print => !c.is_control(),
            Named::Graph => !c.is_control() && !c.is_whitespace(),
            Named::Cntrl => c.is_control(),
            Named::Xdigit => c.is_ascii_hexdigit(),
        }
    }
}

/// A compiled glob pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    elems: Vec<Elem>,
    /// Some element, at any depth, is an extended pattern: matching then
    /// takes the table of [`Pattern::matches_ext`].
    ext: bool,
}

/// The end of an extended pattern's list that starts after `op(`: the
/// index of its `)` and its `|`-separated alternatives, or `None` when it is
/// not closed (the characters are then literal, as in bash).
fn ext_list(chars: &[char], mut i: usize) -> Option<(usize, Vec<String>)> {
    let mut alts = vec![String::new()];
    let mut depth = 0usize;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => {
                let cur = alts.last_mut()?;
                cur.push('\\');
                cur.push(*chars.get(i + 1)?);
                i += 2;
                continue;
            }
            '(' => depth += 1,
            ')' if depth == 0 => return Some((i, alts)),
            ')' => depth -= 1,
            '|' if depth == 0 => {
                alts.push(String::new());
                i += 1;
                continue;
            }
            _ => {}
        }
        alts.last_mut()?.push(c);
        i += 1;
    }
    None
}

/// Parses a bracket expression starting after `[`; returns the element and
/// the index after `]`, or `None` when the bracket is not closed.
fn bracket(chars: &[char], mut i: usize) -> Option<(Elem, usize)> {
    let mut negated = false;
    if matches!(chars.get(i), Some('!' | '^')) {
        negated = true;
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some((Elem::Class { negated, items }, i + 1));
        }
        first = false;
        if c == '[' && chars.get(i + 1) == Some(&':') {
            let rest = &chars[i + 2..];
            if let Some(end) = rest.windows(2).position(|w| w == [':', ']']) {
                let name: String = rest[..end].iter().collect();
                if let Some(n) = Named::parse(&name) {
                    items.push(ClassItem::Named(n));
                    i += 2 + end + 2;
                    continue;
                }
            }
        }
        let (lo, next) = if c == '\\' {
            (*chars.get(i + 1)?, i + 2)
        } else {
            (c, i + 1)
        };
        if chars.get(next) == Some(&'-') && chars.get(next + 1).is_some_and(|&c| c != ']') {
            let (hi, after) = match chars.get(next + 1) {
                Some('\\') => (*chars.get(next + 2)?, next + 3),
                Some(&h) => (h, next + 2),
                None => return None,
            };
            items.push(ClassItem::Range(lo, hi));
            i = after;
        } else {
            items.push(ClassItem::Char(lo));
            i = next;
        }
    }
}

impl Pattern {
    /// Compiles a pattern: `*`, `?`, `[...]` (with `!`/`^`, ranges and
    /// `[:class:]`), `\` escaping the next character. An unclosed `[` is a
    /// literal.
    pub(crate) fn new(pat: &str) -> Pattern {
        Pattern::with_extglob(pat, false)
    }

    /// [`Pattern::new`], with bash's extended patterns when `extglob`
    /// (`@(...)`, `?(...)`, `*(...)`, `+(...)`, `!(...)`).
    pub(crate) fn with_extglob(pat: &str, extglob: bool) -> Pattern {
        let chars: Vec<char> = pat.chars().collect();
        let mut elems = Vec::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            if extglob
                && matches!(c, '@' | '?' | '*' | '+' | '!')
                && chars.get(i + 1) == Some(&'(')
                && let Some((close, alts)) = ext_list(&chars, i + 2)
            {
                let alts = alts
                    .iter()
                    .map(|a| Pattern::with_extglob(a, true))
                    .collect();
                elems.push(Elem::Ext { op: c, alts });
                i = close + 1;
                continue;
            }
            match c {
                '*' => {
                    if elems.last() != Some(&Elem::Star) {
                        elems.push(Elem::Star);
                    }
                    i += 1;
                }
                '?' => {
                    elems.push(Elem::Any);
                    i += 1;
                }
                '[' => match bracket(&chars, i + 1) {
                    Some((e, next)) => {
                        elems.push(e);
                        i = next;
                    }
                    None => {
                        elems.push(Elem::Lit('['));
                        i += 1;
                    }
                },
                '\\' => {
                    elems.push(Elem::Lit(chars.get(i + 1).copied().unwrap_or('\\')));
                    i += 2;
                }
                c => {
                    elems.push(Elem::Lit(c));
                    i += 1;
                }
            }
        }
        let ext = elems.iter().any(|e| matches!(e, Elem::Ext { .. }));
        Pattern { elems, ext }
    }

    /// Whether the pattern starts with a literal `.` (so it may match
    /// hidden names in shell expansion).
    pub(crate) fn starts_with_dot(&self) -> bool {
        self.elems.first() == Some(&Elem::Lit('.'))
    }

    fn one(elem: &Elem, c: char, fold: bool) -> bool {
        let eq = |a: char, b: char| a == b || (fold && a.to_lowercase().eq(b.to_lowercase()));
        match elem {
            Elem::Lit(l) => eq(*l, c),
            Elem::Any => true,
            Elem::Star | Elem::Ext { .. } => false,
            Elem::Class { negated, items } => {
                let hit = |c: char| {
                    items.iter().any(|it| match it {
                        ClassItem::Char(x) => *x == c,
                        ClassItem::Range(lo, hi) => *lo <= c && c <= *hi,
                        ClassItem::Named(n) => n.contains(c),
                    })
                };
                let mut found = hit(c);
                if fold && !found {
                    found = c.to_lowercase().any(hit) || c.to_uppercase().any(hit);
                }
                found != *negated
            }
        }
    }

    /// Whether the whole of `name` matches. `*` and `?` match any character,
    /// `/` included (as `find -path` wants).
    pub(crate) fn matches(&self, name: &str, fold: bool) -> bool {
        if self.ext {
            let s: Vec<char> = name.chars().collect();
            return self.matches_ext(&s, fold);
        }
        self.matches_plain(name, fold)
    }

    /// [`Pattern::matches_chars`] without extended patterns, walking the
    /// name a character at a time in place: a large subject (`[[ $doc ==
    /// *ERROR* ]]` over a document) is not copied into four bytes a
    /// character.
    fn matches_plain(&self, s: &str, fold: bool) -> bool {
        let at = |i: usize| s[i..].chars().next().unwrap_or_default();
        let p = &self.elems;
        let (mut pi, mut si) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while si < s.len() {
            let c = at(si);
            match p.get(pi) {
                Some(Elem::Star) => {
                    star = Some((pi, si));
                    pi += 1;
                }
                Some(e) if Pattern::one(e, c, fold) => {
                    pi += 1;
                    si += c.len_utf8();
                }
                _ => match star {
                    Some((sp, ss)) => {
                        let next = ss + at(ss).len_utf8();
                        pi = sp + 1;
                        si = next;
                        star = Some((sp, next));
                    }
                    None => return false,
                },
            }
        }
        p[pi.min(p.len())..].iter().all(|e| *e == Elem::Star)
    }

    fn matches_chars(&self, s: &[char], fold: bool) -> bool {
        if self.ext {
            return self.matches_ext(s, fold);
        }
        let p = &self.elems;
        let (mut pi, mut si) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while si < s.len() {
            match p.get(pi) {
                Some(Elem::Star) => {
                    star = Some((pi, si));
                    pi += 1;
                }
                Some(e) if Pattern::one(e, s[si], fold) => {
                    pi += 1;
                    si += 1;
                }
                _ => match star {
                    Some((sp, ss)) => {
                        pi = sp + 1;
                        si = ss + 1;
                        star = Some((sp, ss + 1));
                    }
                    None => return false,
                },
            }
        }
        p[pi.min(p.len())..].iter().all(|e| *e == Elem::Star)
    }
}

impl Pattern {
    /// Matching with extended patterns: a table, filled from the last
    /// element back, of whether the pattern's tail from element `pi`
    /// matches the name's tail from character `si`. Each row is filled
    /// from the end of the name back, without recursion on the name's
    /// length, so no pattern or name can take more than polynomial time or
    /// deep stack (a sub-pattern recurses only as deep as it nests).
    fn matches_ext(&self, s: &[char], fold: bool) -> bool {
        let n = s.len();
        // `next[si]`: the rest of the pattern, after this element, matches
        // `s[si..]`. After the last element only the empty tail does.
        let mut next: Vec<bool> = (0..=n).map(|si| si == n).collect();
        for elem in self.elems.iter().rev() {
            let mut row = vec![false; n + 1];
            match elem {
                Elem::Star => {
                    let mut any = false;
                    for si in (0..=n).rev() {
                        any |= next[si];
                        row[si] = any;
                    }
                }
                Elem::Ext { op, alts } => {
                    let whole = |from: usize, to: usize| {
                        alts.iter().any(|a| a.matches_chars(&s[from..to], fold))
                    };
                    match op {
                        '!' => {
                            row = (0..=n)
                                .map(|si| (si..=n).any(|e| next[e] && !whole(si, e)))
                                .collect();
                        }
                        '@' | '?' => {
                            row = (0..=n)
                                .map(|si| {
                                    (*op == '?' && next[si])
                                        || (si..=n).any(|e| next[e] && whole(si, e))
                                })
                                .collect();
                        }
                        _ => {
                            // `*(..)`: the rest matches here, or one
                            // alternative (not empty) then `*(..)` again;
                            // from the end back, so `star[e]` is known.
                            let mut star = vec![false; n + 1];
                            for si in (0..=n).rev() {
                                star[si] =
                                    next[si] || (si + 1..=n).any(|e| star[e] && whole(si, e));
                            }
                            row = if *op == '*' {
                                star
                            } else {
                                // `+(..)`: one alternative, then `*(..)`.
                                (0..=n)
                                    .map(|si| (si..=n).any(|e| star[e] && whole(si, e)))
                                    .collect()
                            };
                        }
                    }
                }
                e => {
                    for si in 0..n {
                        row[si] = next[si + 1] && Pattern::one(e, s[si], fold);
                    }
                }
            }
            next = row;
        }
        next[0]
    }
}

/// Whether `pat` has an unescaped glob character.
fn is_glob(pat: &str) -> bool {
    let mut escaped = false;
    for c in pat.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, '*' | '?' | '[') {
            return true;
        }
    }
    false
}

/// Removes the backslashes of a pattern without glob characters.
fn unescape(pat: &str) -> String {
    let mut out = String::new();
    let mut chars = pat.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(chars.next().unwrap_or('\\'));
        } else {
            out.push(c);
        }
    }
    out
}

/// The most paths one glob may expand to, counting those it considers on
/// the way (`*/../*/../*` multiplies them at every step).
pub(crate) const MAX_PATHS: usize = 100_000;

/// The shell options that change pathname expansion.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    /// `shopt -s dotglob`: `*` matches hidden names too.
    pub(crate) dotglob: bool,
    /// `shopt -s globstar`: a `**` component matches any depth.
    pub(crate) globstar: bool,
    /// `shopt -s nocaseglob`.
    pub(crate) nocase: bool,
}

/// Expands a word like bash: the sorted paths matching its unquoted glob
/// characters; empty when nothing matches (the caller keeps the word, or
/// drops it under `nullglob`). A glob that would reach more than
/// [`MAX_PATHS`] paths is an error.
pub(crate) fn expand_with(
    fs: &mut dyn Fs,
    word: &Word,
    opts: Options,
) -> Result<Vec<String>, String> {
    if !word.has_glob() {
        return Ok(vec![word.text()]);
    }
    let too_many = || {
        format!(
            "vfs-sh: {}: the glob matches more than {MAX_PATHS} paths",
            word.text()
        )
    };
    let pattern = word.glob_pattern();
    let comps: Vec<&str> = pattern.split('/').collect();
    // Candidates: paths built so far, each as the user would write it.
    let mut cands: Vec<String> = vec![String::new()];
    let last = comps.len().saturating_sub(1);
    for (idx, comp) in comps.iter().enumerate() {
        let sep = |c: &str| if idx == 0 || c == "/" { "" } else { "/" };
        if comp.is_empty() {
            // Leading `/`, doubled `/`, or trailing `/` (directories only).
            if idx == last && idx > 0 {
                cands.retain(|c| fs.metadata(c).is_ok_and(|m| m.is_dir()));
            }
            for c in &mut cands {
                c.push('/');
            }
            continue;
        }
        let mut next = Vec::new();
        if opts.globstar && *comp == "**" {
            // Zero or more directories: every directory below each
            // candidate (and files too, when `**` is the last component).
            for c in &cands {
                let mut stack = vec![c.clone()];
                if idx == last && !c.is_empty() {
                    // `dir/**` lists dir/ itself as well.
                    next.push(format!("{c}{}", if c.ends_with('/') { "" } else { "/" }));
                }
                while let Some(dir) = stack.pop() {
                    let list = if dir.is_empty() { "." } else { dir.as_str() };
                    let Ok(entries) = fs.read_dir(list) else {
                        continue;
                    };
                    let mut subdirs = Vec::new();
                    for e in entries {
                        if e.name.starts_with('.') && !opts.dotglob {
                            continue;
                        }
                        let joint = if dir.is_empty() || dir.ends_with('/') {
                            ""
                        } else {
                            "/"
                        };
                        let path = format!("{dir}{joint}{}", e.name);
                        if e.is_dir() {
                            subdirs.push(path.clone());
                        }
                        if idx == last || e.is_dir() {
                            next.push(path);
                        }
                        if next.len() > MAX_PATHS {
                            return Err(too_many());
                        }
                    }
                    stack.extend(subdirs.into_iter().rev());
                }
                if idx < last {
                    // Zero directories: the candidate itself.
                    next.push(c.clone());
                }
            }
            cands = next;
            continue;
        }
        if !is_glob(comp) {
            let lit = unescape(comp);
            for c in &cands {
                let path = format!("{c}{}{lit}", sep(c));
                if idx < last || fs.metadata(&path).is_ok() {
                    next.push(path);
                }
                if next.len() > MAX_PATHS {
                    return Err(too_many());
                }
            }
        } else {
            let pat = Pattern::new(comp);
            let dot = pat.starts_with_dot();
            for c in &cands {
                let dir = if c.is_empty() { "." } else { c.as_str() };
                let Ok(entries) = fs.read_dir(dir) else {
                    continue;
                };
                for e in entries {
                    if e.name.starts_with('.')
                        && !dot
                        && !(opts.dotglob && e.name != "." && e.name != "..")
                    {
                        continue;
                    }
                    // A component followed by more must be a directory.
                    let need_dir = idx < last;
                    if need_dir && !e.is_dir() {
                        continue;
                    }
                    if pat.matches(&e.name, opts.nocase) {
                        next.push(format!("{c}{}{}", sep(c), e.name));
                        if next.len() > MAX_PATHS {
                            return Err(too_many());
                        }
                    }
                }
            }
        }
        cands = next;
        if cands.is_empty() {
            break;
        }
    }
    // With globstar, `a/**/b` may reach the same path twice.
    cands.sort();
    cands.dedup();
    // Paths that do not exist (a literal last component after `**`).
    Ok(cands)
}

/// `GLOBIGNORE`'s patterns, compiled once for all of a glob's matches.
/// bash's `glob_name_is_acceptable` decides what goes: `.` and `..`
/// always, and any name a pattern matches whole, its `*` stopping at `/`
/// (bash's `FNM_PATHNAME`) except a `*` that ends the pattern, which takes
/// the rest whatever it holds.
pub(crate) struct Ignore {
    /// Each pattern's components, and whether a trailing `*` takes the
    /// rest (then the components are what comes before it, with one `*`).
    patterns: Vec<(Vec<Pattern>, bool)>,
}

impl Ignore {
    /// Reads a colon-separated `GLOBIGNORE`.
    pub(crate) fn new(list: &str) -> Ignore {
        let patterns = list
            .split(':')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let head = p.trim_end_matches('*');
                let tail = head.len() != p.len() && !head.ends_with('\\');
                let p = if tail {
                    format!("{head}*")
                } else {
                    p.to_owned()
                };
                (p.split('/').map(Pattern::new).collect(), tail)
            })
            .collect();
        Ignore { patterns }
    }

    /// Whether a glob's match is dropped.
    pub(crate) fn drops(&self, name: &str) -> bool {
        let last = name.rsplit('/').find(|c| !c.is_empty()).unwrap_or(name);
        if last == "." || last == ".." {
            return true;
        }
        let by_parts = |parts: &[Pattern], name: &str| {
            let n: Vec<&str> = name.split('/').collect();
            parts.len() == n.len() && parts.iter().zip(&n).all(|(p, n)| p.matches(n, false))
        };
        self.patterns.iter().any(|(parts, tail)| {
            if !tail {
                return by_parts(parts, name);
            }
            // The trailing `*` takes any tail: some head of the name must
            // match what comes before it.
            name.char_indices()
                .map(|(k, _)| k)
                .chain([name.len()])
                .any(|k| by_parts(parts, &name[..k]))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globignore_drops_as_bash_does() {
        for (ignore, name, dropped) in [
            ("*.md", "a.md", true),
            ("*.md", "docs/a.md", false),
            ("*/a.md", "docs/a.md", true),
            ("docs*", "docs/a.md", true),
            ("*1*", "dir2/sub1", false),
            ("*1*", "dir1/x", true),
            ("x:*.txt", "b.txt", true),
            ("x", "..", true),
            ("x", "docs/.", true),
            ("x", ".hidden", false),
        ] {
            assert_eq!(Ignore::new(ignore).drops(name), dropped, "{ignore} {name}");
        }
    }

    #[test]
    fn fnmatch_table() {
        let table: &[(&str, &str, bool)] = &[
            ("*.md", "a.md", true),
            ("*.md", "a.mdx", false),
            ("*.md", ".md", true),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("[ab]x", "bx", true),
            ("[!ab]x", "bx", false),
            ("[^ab]x", "cx", true),
            ("[a-c]", "b", true),
            ("[a-c]", "d", false),
            ("[]]", "]", true),
            ("[!]]", "a", true),
            ("[[:digit:]]*", "7up", true),
            ("[[:upper:]]*", "lower", false),
            ("\\*", "*", true),
            ("\\*", "a", false),
            ("[", "[", true),
            ("a[", "a[", true),
            ("*a*b*c*", "xaxbxcx", true),
            ("*a*b*c*", "xaxcxbx", false),
            ("**", "", true),
            ("", "", true),
            ("", "a", false),
            ("*/*.md", "docs/a.md", true),
            ("report-202?-*.csv", "report-2024-q1.csv", true),
            ("é*", "été", true),
        ];
        for (pat, name, want) in table {
            assert_eq!(
                Pattern::new(pat).matches(name, false),
                *want,
                "{pat:?} {name:?}"
            );
        }
        assert!(Pattern::new("*.MD").matches("a.md", true));
        assert!(Pattern::new("[A-C]x").matches("bX", true));
        assert!(!Pattern::new("*.MD").matches("a.md", false));
    }

    /// bash 5.2's answers (`[[ NAME == PATTERN ]]`, where extglob is on).
    #[test]
    fn extended_patterns_match_as_in_bash() {
        let table = [
            ("@(a|b)c", "ac", true),
            ("@(a|b)c", "abc", false),
            ("?(a)b", "b", true),
            ("?(a)b", "aab", false),
            ("*(ab)", "", true),
            ("*(ab)", "ababab", true),
            ("*(ab)", "aba", false),
            ("+(ab)", "", false),
            ("+(ab|c)", "abcab", true),
            ("!(*.txt)", "a.md", true),
            ("!(*.txt)", "a.txt", false),
            ("a!(b)c", "ac", true),
            ("a!(b)c", "abc", false),
            ("a!(b)c", "abbc", true),
            ("*.@(jpg|png)", "x.png", true),
            ("@(a|@(b|c))", "c", true),
            ("+(a*(b))", "abbab", true),
            ("@(a\\|b)", "a|b", true),
            ("@(a", "@(a", true),
            ("x@()", "x", true),
        ];
        for (pat, name, want) in table {
            assert_eq!(
                Pattern::with_extglob(pat, true).matches(name, false),
                want,
                "{pat} {name}"
            );
        }
        // Off, they are the characters they are.
        assert!(Pattern::new("@(a|b)").matches("@(a|b)", false));
        assert!(!Pattern::new("@(a|b)").matches("a", false));
    }

    #[test]
    fn extended_patterns_stay_polynomial() {
        let pat = Pattern::with_extglob(&"*(a|aa)".repeat(8), true);
        let name = "a".repeat(300) + "b";
        assert!(!pat.matches(&name, false));
        let pat = Pattern::with_extglob("!(*(x))*(y)", true);
        assert!(pat.matches(&"xy".repeat(200), false));
    }

    #[test]
    fn pathological_patterns_are_fast() {
        let pat = Pattern::new(&"*a".repeat(50));
        let name = "a".repeat(40) + "b";
        assert!(!pat.matches(&name, false));
    }
}
