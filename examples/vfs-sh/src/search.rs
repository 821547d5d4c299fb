//! In-guest line search with the `regex` crate: what `grep` runs on its
//! standard input (and what the native test filesystem uses to stand in for
//! the host's search). It follows GNU grep's rules for context lines and
//! `-m`, and reports the same [`FileHits`] the host search returns.
//!
//! `grep -P` patterns that need a backtracking engine (look-around, `\K`,
//! back-references: what agents write as `grep -oP '(?<=id=)\d+'`) are
//! matched here with `fancy-regex`, since the host's engine (ripgrep's,
//! linear time) has none of them; see [`Matcher::perl`].

use regex::bytes::{Regex, RegexBuilder};

use crate::fs::{FileHits, GrepLine, GrepRequest};
use crate::longest::Longest;

/// Compiled regexes may use at most this much memory (as on the host).
const SIZE_LIMIT: usize = 16 << 20;

/// The engine a request compiled to.
#[derive(Debug, Clone)]
enum Engine {
    /// Linear time, the same engine as the host's search; with POSIX's
    /// longest match for `grep -o` in the guest (see [`Matcher::posix`]).
    Linear(Regex, Option<std::rc::Rc<Longest>>),
    /// Backtracking, bounded by fancy-regex's backtrack limit, for the
    /// Perl features the linear engine lacks.
    Backtracking(fancy_regex::Regex),
}

impl Engine {
    fn is_match(&self, line: &[u8]) -> bool {
        match self {
            Engine::Linear(re, _) => re.is_match(line),
            // A line that hits the backtrack limit does not match, as PCRE's
            // grep reports a resource error and goes on.
            Engine::Backtracking(re) => re
                .is_match(crate::lossless::decode(line).as_ref())
                .unwrap_or(false),
        }
    }

    fn ranges(&self, line: &[u8]) -> Vec<std::ops::Range<usize>> {
        match self {
            Engine::Linear(re, None) => re.find_iter(line).map(|m| m.range()).collect(),
            Engine::Linear(re, Some(longest)) => {
                let mut all = Vec::new();
                let mut at = 0;
                while at <= line.len() {
                    let Some(m) = re.find_at(line, at) else { break };
                    let end = longest.end(line, &m.range());
                    all.push(m.start()..end);
                    at = if end > m.start() { end } else { end + 1 };
                }
                all
            }
            Engine::Backtracking(re) => match std::str::from_utf8(line) {
                Ok(text) => re
                    .find_iter(text)
                    .map_while(Result::ok)
                    .map(|m| m.range())
                    .collect(),
                // Offsets into a lossy copy would not fit the original bytes.
                Err(_) => Vec::new(),
            },
        }
    }
}

/// A compiled request.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    re: Engine,
    invert: bool,
    before: usize,
    after: usize,
    max_count: Option<u64>,
    /// Whether the lines are wanted, or only how many were selected.
    keep_lines: bool,
    /// The byte that ends a line: a newline, or NUL for `grep -z`.
    end: u8,
}

/// PCRE2's message for a pattern fancy-regex refuses, where one says the
/// same thing.
fn pcre2_wording(pattern: &str, e: &fancy_regex::Error) -> Option<&'static str> {
    use fancy_regex::{CompileError as C, Error, ParseError as P};
    Some(match e {
        Error::ParseError(_, kind) => match kind {
            P::UnclosedOpenParen => "missing closing parenthesis",
            P::GeneralParseError(_) if stray_close_paren(pattern) => {
                "unmatched closing parenthesis"
            }
            P::InvalidRepeat | P::TargetNotRepeatable => {
                "quantifier does not follow a repeatable item"
            }
            P::TrailingBackslash => "\\ at end of pattern",
            P::InvalidClass => "missing terminating ] for character class",
            P::UnknownFlag(_) => "unrecognized character after (? or (?-",
            P::InvalidBackref | P::InvalidGroupNameBackref(_) => {
                "reference to non-existent subpattern"
            }
            P::InvalidGroupName => "syntax error in subpattern name (missing terminator?)",
            _ => return None,
        },
        Error::CompileError(kind) => match **kind {
            C::LookBehindNotConst | C::VariableLookBehindRequiresFeature => {
                "lookbehind assertion is not fixed length"
            }
            C::InvalidBackref(_) | C::InvalidGroupNameBackref(_) => {
                "reference to non-existent subpattern"
            }
            // A part handed on to the regex crate: its parser says why.
            C::InnerError(_) => return syntax_wording(pattern),
            _ => return None,
        },
        _ => return None,
    })
}

/// PCRE2's words for what the regex crate's parser refuses in `pattern`.
fn syntax_wording(pattern: &str) -> Option<&'static str> {
    use regex_syntax::ast::ErrorKind as A;
    use regex_syntax::hir::ErrorKind as H;
    match regex_syntax::Parser::new().parse(pattern) {
        Err(regex_syntax::Error::Parse(e)) => match e.kind() {
            A::ClassRangeInvalid => Some("range out of order in character class"),
            A::RepetitionCountInvalid => Some("numbers out of order in {} quantifier"),
            A::RepetitionMissing => Some("quantifier does not follow a repeatable item"),
            A::GroupNameDuplicate { .. } => {
                Some("two named subpatterns have the same name (PCRE2_DUPNAMES not set)")
            }
            _ => None,
        },
        Err(regex_syntax::Error::Translate(e)) => match e.kind() {
            H::UnicodePropertyNotFound | H::UnicodePropertyValueNotFound => {
                Some("unknown property after \\P or \\p")
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether a `)` closes nothing (outside escapes and classes).
fn stray_close_paren(pattern: &str) -> bool {
    let (mut depth, mut in_class, mut escaped) = (0i32, false, false);
    for c in pattern.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => depth += 1,
            ')' if !in_class => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether a pattern has an upper-case letter that is not part of an
/// escape (`\S`, `\W`), for smart case.
fn has_upper(pattern: &str) -> bool {
    let mut escaped = false;
    for c in pattern.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c.is_uppercase() {
            return true;
        }
    }
    false
}

/// Splits data into lines without their `\n`; a last line without a
/// terminator counts, an empty trailing piece does not.
pub(crate) fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    records(data, b'\n')
}

/// The records of `data`, each ended by `end` (a last one may not be).
pub(crate) fn records(data: &[u8], end: u8) -> impl Iterator<Item = &[u8]> {
    let body = data.strip_suffix(&[end]).unwrap_or(data);
    let empty = data.is_empty();
    body.split(move |&b| b == end).filter(move |_| !empty)
}

impl Matcher {
    /// Compiles the patterns and flags of `req`.
    pub(crate) fn new(req: &GrepRequest) -> Result<Matcher, String> {
        Matcher::build(req, false)
    }

    /// Compiles `req`'s POSIX patterns to report POSIX's longest matches
    /// (`grep -oE 'a|ab'` prints `ab`), where the host's engine, like the
    /// regex crate, reports the match its alternatives prefer: `grep -o`
    /// finds the matches of each selected line again with it.
    pub(crate) fn posix(req: &GrepRequest) -> Result<Matcher, String> {
        Matcher::build(req, true)
    }

    fn build(req: &GrepRequest, posix: bool) -> Result<Matcher, String> {
        let alts: Vec<String> = req
            .patterns
            .iter()
            .map(|p| {
                if req.fixed_strings {
                    format!("(?:{})", regex::escape(p))
                } else {
                    format!("(?:{p})")
                }
            })
            .collect();
        let mut re = alts.join("|");
        if req.whole_word {
            re = format!(r"\b{{start-half}}(?:{re})\b{{end-half}}");
        }
        let fold =
            req.ignore_case || (req.smart_case && !req.patterns.iter().any(|p| has_upper(p)));
        let longest = posix.then(|| std::rc::Rc::new(Longest::new(&re, fold, false)));
        let re = RegexBuilder::new(&re)
            .case_insensitive(fold)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => "regular expression is too big".to_owned(),
                e => e.to_string(),
            })?;
        Ok(Matcher {
            re: Engine::Linear(re, longest),
            invert: req.invert,
            before: req.before_context as usize,
            after: req.after_context as usize,
            max_count: req.max_count,
            keep_lines: !req.count_only,
            end: b'\n',
        })
    }

    /// Compiles a `grep -P` request whose patterns the linear engine
    /// refuses (look-around, `\K`, back-references, atomic groups) with the
    /// backtracking engine. `Ok(None)`: the linear engine takes them, and
    /// the search can go to the host.
    pub(crate) fn perl(req: &GrepRequest) -> Result<Option<Matcher>, String> {
        if req.fixed_strings || Matcher::new(req).is_ok() {
            return Ok(None);
        }
        // Each pattern alone first, so that an error is about what the
        // user wrote, in PCRE2's words as GNU grep -P prints them.
        for p in &req.patterns {
            if let Err(e) = fancy_regex::Regex::new(p) {
                return Err(pcre2_wording(p, &e).map_or_else(|| e.to_string(), str::to_owned));
            }
        }
        let alts: Vec<String> = req.patterns.iter().map(|p| format!("(?:{p})")).collect();
        let mut re = alts.join("|");
        if req.whole_word {
            re = format!(r"(?<!\w)(?:{re})(?!\w)");
        }
        let fold =
            req.ignore_case || (req.smart_case && !req.patterns.iter().any(|p| has_upper(p)));
        let re = fancy_regex::RegexBuilder::new(&re)
            .case_insensitive(fold)
            .delegate_size_limit(SIZE_LIMIT)
            .delegate_dfa_size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Some(Matcher {
            re: Engine::Backtracking(re),
            invert: req.invert,
            before: req.before_context as usize,
            after: req.after_context as usize,
            max_count: req.max_count,
            keep_lines: !req.count_only,
            end: b'\n',
        }))
    }

    /// The same matcher for `-c`, `-l`, `-L` and `-q`, which print no
    /// line: a search only counts the selected lines, without a copy of
    /// each (a count over standard input would otherwise hold every
    /// selected line twice), and with `first_only` stops at the first one,
    /// as GNU grep does once it knows the answer.
    pub(crate) fn counting(mut self, first_only: bool) -> Matcher {
        self.keep_lines = false;
        if first_only {
            self.max_count = Some(self.max_count.map_or(1, |m| m.min(1)));
        }
        self
    }

    /// The same matcher, for lines ended by NUL (`grep -z`): a newline is
    /// an ordinary byte, which `\n`, `\s` and negated classes match.
    pub(crate) fn nul_ended(mut self) -> Matcher {
        self.end = 0;
        self
    }

    /// At most how many lines a search selects.
    pub(crate) fn max_count(&self) -> Option<u64> {
        self.max_count
    }

    /// The same matcher, selecting at most `n` more lines (`None`: as
    /// many as it did).
    pub(crate) fn at_most(mut self, n: Option<u64>) -> Matcher {
        if n.is_some() {
            self.max_count = n;
        }
        self
    }

    /// Whether one line is selected (matches, or does not when inverted).
    pub(crate) fn selects(&self, line: &[u8]) -> bool {
        self.re.is_match(line) != self.invert
    }

    /// The byte ranges of the matches in a line (none when inverted).
    pub(crate) fn ranges(&self, line: &[u8]) -> Vec<std::ops::Range<usize>> {
        if self.invert {
            return Vec::new();
        }
        self.re.ranges(line)
    }

    /// The byte ranges of the pattern's matches in a line, inverted or
    /// not (what `--color` marks).
    pub(crate) fn pattern_ranges(&self, line: &[u8]) -> Vec<std::ops::Range<usize>> {
        self.re.ranges(line)
    }

    /// Searches a document as the host's search does: a binary one (with a
    /// NUL byte) with NUL ending a line as a newline does, its selected
    /// lines counted and not returned, as GNU grep counts them.
    pub(crate) fn search_file(&self, path: &str, data: &[u8]) -> FileHits {
        if !data.contains(&0) {
            return self.search(path, data);
        }
        let converted: Vec<u8> = data
            .iter()
            .map(|&b| if b == 0 { b'\n' } else { b })
            .collect();
        let mut hits = self.search(path, &converted);
        hits.lines.clear();
        hits
    }

    /// Searches `data`, returning the selected and context lines the way
    /// GNU grep picks them: at most `max_count` selected lines, then up to
    /// `after` lines of trailing context.
    pub(crate) fn search(&self, path: &str, data: &[u8]) -> FileHits {
        let mut hits = FileHits {
            path: path.to_owned(),
            match_count: 0,
            lines: Vec::new(),
        };
        if !self.keep_lines {
            let limit = self.max_count.unwrap_or(u64::MAX);
            for line in records(data, self.end) {
                if hits.match_count >= limit {
                    break;
                }
                hits.match_count += u64::from(self.selects(line));
            }
            return hits;
        }
        // Index (0-based) after the last line reported.
        let mut printed = 0usize;
        let mut after_left = 0usize;
        // The lines before the current one that leading context may need:
        // at most `before` of them, not an index of every line (16 bytes a
        // line, more than a document of short lines itself).
        let mut behind: std::collections::VecDeque<(usize, &[u8])> =
            std::collections::VecDeque::with_capacity(self.before.min(1024));
        let context = |i: usize, text: &[u8]| GrepLine {
            is_match: false,
            line_number: i as u64 + 1,
            text: text.to_vec(),
            matches: Vec::new(),
        };
        for (i, line) in records(data, self.end).enumerate() {
            let done = self.max_count.is_some_and(|m| hits.match_count >= m);
            if done {
                if after_left == 0 {
                    break;
                }
                hits.lines.push(context(i, line));
                after_left -= 1;
                printed = i + 1;
                continue;
            }
            if self.selects(line) {
                let from = i.saturating_sub(self.before).max(printed);
                for &(j, l) in behind.iter().filter(|(j, _)| *j >= from) {
                    hits.lines.push(context(j, l));
                }
                hits.lines.push(GrepLine {
                    is_match: true,
                    line_number: i as u64 + 1,
                    text: line.to_vec(),
                    matches: self.ranges(line),
                });
                hits.match_count += 1;
                after_left = self.after;
                printed = i + 1;
            } else if after_left > 0 {
                hits.lines.push(context(i, line));
                after_left -= 1;
                printed = i + 1;
            }
            if self.before > 0 {
                if behind.len() == self.before {
                    behind.pop_front();
                }
                behind.push_back((i, line));
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(p: &str) -> GrepRequest {
        GrepRequest {
            patterns: vec![p.to_owned()],
            ..GrepRequest::default()
        }
    }

    fn numbers(m: &Matcher, data: &str) -> Vec<String> {
        m.search("x", data.as_bytes())
            .lines
            .iter()
            .map(|l| format!("{}{}", l.line_number, if l.is_match { ':' } else { '-' }))
            .collect()
    }

    #[test]
    fn splits_lines_like_grep() {
        let l = |s: &str| lines(s.as_bytes()).count();
        assert_eq!(l(""), 0);
        assert_eq!(l("\n"), 1);
        assert_eq!(l("a"), 1);
        assert_eq!(l("a\nb"), 2);
        assert_eq!(l("a\nb\n"), 2);
        assert_eq!(l("a\n\n"), 2);
    }

    #[test]
    fn context_and_max_count() {
        let data = "a\nb\na\nc\na\n";
        let mut r = req("a");
        r.max_count = Some(1);
        r.after_context = 3;
        let m = Matcher::new(&r).expect("compiles");
        assert_eq!(numbers(&m, data), ["1:", "2-", "3-", "4-"]);
        let mut r = req("c");
        r.before_context = 1;
        r.after_context = 1;
        let m = Matcher::new(&r).expect("compiles");
        assert_eq!(numbers(&m, data), ["3-", "4:", "5-"]);
        let mut r = req("a");
        r.invert = true;
        let m = Matcher::new(&r).expect("compiles");
        assert_eq!(numbers(&m, data), ["2:", "4:"]);
    }

    #[test]
    fn counting_keeps_no_line_and_may_stop_at_the_first() {
        let data = "a\nb\na\nc\na\n";
        let m = Matcher::new(&req("a")).expect("compiles");
        let full = m.search("f", data.as_bytes());
        let counted = m.clone().counting(false).search("f", data.as_bytes());
        assert_eq!((full.match_count, counted.match_count), (3, 3));
        assert!(counted.lines.is_empty());
        let first = m.clone().counting(true).search("f", data.as_bytes());
        assert_eq!(first.match_count, 1);
        let mut r = req("a");
        r.invert = true;
        r.max_count = Some(1);
        let m = Matcher::new(&r).expect("compiles").counting(false);
        assert_eq!(m.search("f", data.as_bytes()).match_count, 1);
    }

    #[test]
    fn flags() {
        let mut r = req("Cat");
        r.smart_case = true;
        assert!(!Matcher::new(&r).expect("compiles").selects(b"cat"));
        r.patterns = vec!["cat".to_owned()];
        assert!(Matcher::new(&r).expect("compiles").selects(b"CAT"));
        let mut r = req("a.b");
        r.fixed_strings = true;
        let m = Matcher::new(&r).expect("compiles");
        assert!(m.selects(b"xa.by") && !m.selects(b"axb"));
        let mut r = req("cat");
        r.whole_word = true;
        let m = Matcher::new(&r).expect("compiles");
        assert!(m.selects(b"a cat.") && !m.selects(b"concat"));
        assert!(Matcher::new(&req("(")).is_err());
    }
}
