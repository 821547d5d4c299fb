//! POSIX's leftmost-longest rule over the regex crate's matches.
//!
//! Of the matches that start leftmost, POSIX (and so GNU grep, sed, awk
//! and bash's `=~`) reports the longest. The regex crate reports the one
//! its alternatives and greedy repetitions prefer: `a|ab` over `abc` is
//! `a` to it and `ab` to `grep -oE`, and `error|errors` over `2 errors` is
//! `error` to it and `errors` to GNU. Both rules start the match at the same
//! place, so [`Longest`] keeps the regex crate's start and finds the
//! longest end with a lazy DFA built to report every match
//! (`MatchKind::All`), searched anchored at that start. No library matches
//! POSIX's rule in linear time, which a guest that runs agents' patterns
//! over every document needs.
//!
//! The groups of the longest match (`\1` in sed, `match(s, re, m)` in
//! awk) come from a second regex, `(?:PATTERN)\z`, run over the text cut
//! at the longest end, so that the groups describe the match reported.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};

/// Finds the longest end of a match for one pattern (see the module).
#[derive(Debug, Clone)]
pub(crate) struct Longest {
    /// `None` when the pattern cannot tell the two rules apart (it has no
    /// alternative or repetition) or the DFA could not be built: the regex
    /// crate's match stands.
    dfa: Option<(DFA, RefCell<Cache>)>,
    /// `(?:PATTERN)\z`, for the groups, compiled when first needed.
    tail: RefCell<Option<Option<regex::Regex>>>,
    pattern: String,
    fold: bool,
    multi_line: bool,
}

/// The lazy DFA's cache: past it, the search gives up and the regex
/// crate's match stands.
const CACHE: usize = 2 << 20;

impl Longest {
    /// For a pattern in the regex crate's syntax, with its flags.
    pub(crate) fn new(pattern: &str, fold: bool, multi_line: bool) -> Longest {
        let dfa = ambiguous(pattern)
            .then(|| {
                DFA::builder()
                    .configure(
                        DFA::config()
                            .match_kind(MatchKind::All)
                            .unicode_word_boundary(true)
                            .cache_capacity(CACHE),
                    )
                    .syntax(
                        syntax::Config::new()
                            .case_insensitive(fold)
                            .multi_line(multi_line),
                    )
                    .build(pattern)
                    .ok()
            })
            .flatten()
            .map(|dfa| {
                let cache = RefCell::new(dfa.create_cache());
                (dfa, cache)
            });
        Longest {
            dfa,
            tail: RefCell::new(None),
            pattern: pattern.to_owned(),
            fold,
            multi_line,
        }
    }

    /// The end of the longest match that starts where `found` (the regex
    /// crate's match in `hay`) starts: `found.end` or past it.
    pub(crate) fn end(&self, hay: &[u8], found: &Range<usize>) -> usize {
        let Some((dfa, cache)) = &self.dfa else {
            return found.end;
        };
        let input = Input::new(hay).range(found.start..).anchored(Anchored::Yes);
        match dfa.try_search_fwd(&mut cache.borrow_mut(), &input) {
            Ok(Some(m)) if m.offset() > found.end => m.offset(),
            // No longer match, or the DFA gave up (a non-ASCII word
            // boundary, a full cache).
            _ => found.end,
        }
    }

    /// The longest match starting where `found` starts, and its groups
    /// (0 is the whole match) when it is longer than `found`; `None` when
    /// `found` is the longest.
    pub(crate) fn groups(
        &self,
        hay: &str,
        found: &Range<usize>,
    ) -> Option<Vec<Option<Range<usize>>>> {
        let end = self.end(hay.as_bytes(), found);
        if end == found.end {
            return None;
        }
        let mut tail = self.tail.borrow_mut();
        let re = tail.get_or_insert_with(|| {
            regex::RegexBuilder::new(&format!("(?:{})\\z", self.pattern))
                .case_insensitive(self.fold)
                .multi_line(self.multi_line)
                .size_limit(4 << 20)
                .build()
                .ok()
        });
        let whole = Some(found.start..end);
        let Some(caps) = re
            .as_ref()
            .and_then(|re| {
                hay.get(..end)
                    .and_then(|cut| re.captures_at(cut, found.start))
            })
            .filter(|c| c.get(0).map(|m| m.range()) == whole)
        else {
            // The cut changed what a look-ahead sees: the whole match
            // stands without groups.
            return Some(vec![whole]);
        };
        Some(
            (0..caps.len())
                .map(|g| caps.get(g).map(|m| m.range()))
                .collect(),
        )
    }
}

/// Whether the two rules can differ on `pattern`: it has an alternative,
/// or a group is repeated (`(ab)?`, `(a|b)*`). Repetitions of single
/// characters and classes alone (`[0-9]+`, `a?ab*`) cannot make them
/// differ: the greedy match is then the longest one (checked against
/// every string of up to six letters for thousands of such patterns), and
/// the common patterns skip the second search. Conservative: a `|` or a
/// `)` inside a bracket expression counts too.
fn ambiguous(pattern: &str) -> bool {
    let mut escaped = false;
    let mut after_group = false;
    for c in pattern.chars() {
        if escaped {
            escaped = false;
            after_group = false;
            continue;
        }
        match c {
            '|' => return true,
            '?' | '*' | '+' | '{' if after_group => return true,
            _ => {}
        }
        escaped = c == '\\';
        after_group = c == ')';
    }
    false
}

/// The groups of a match: byte ranges, 0 the whole match.
pub(crate) type Groups = Vec<Option<Range<usize>>>;

/// A regex crate `Regex` that reports POSIX's longest matches, for the
/// tools that speak POSIX regexes over text (awk, `[[ =~ ]]`).
#[derive(Debug, Clone)]
pub(crate) struct PosixRegex {
    /// Shared, not cloned: a clone of a `regex::Regex` starts a pool of
    /// its own, and its first search builds a new lazy DFA cache, which
    /// cost more than the search itself when awk fetched its regex for
    /// every record.
    re: Rc<regex::Regex>,
    longest: Rc<Longest>,
}

impl PosixRegex {
    /// `re`, compiled from a pattern in the regex crate's syntax with
    /// these flags.
    pub(crate) fn new(re: regex::Regex, fold: bool, multi_line: bool) -> PosixRegex {
        let longest = Rc::new(Longest::new(re.as_str(), fold, multi_line));
        PosixRegex {
            re: Rc::new(re),
            longest,
        }
    }

    pub(crate) fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }

    /// How many groups a match has, the whole match included.
    pub(crate) fn captures_len(&self) -> usize {
        self.re.captures_len()
    }

    /// The longest of the leftmost matches at or after `at`.
    pub(crate) fn find_at(&self, s: &str, at: usize) -> Option<Range<usize>> {
        let found = self.re.find_at(s, at)?.range();
        let end = self.longest.end(s.as_bytes(), &found);
        Some(found.start..end)
    }

    pub(crate) fn find(&self, s: &str) -> Option<Range<usize>> {
        self.find_at(s, 0)
    }

    /// The groups of the longest of the leftmost matches at or after `at`.
    pub(crate) fn captures_at(&self, s: &str, at: usize) -> Option<Groups> {
        let caps = self.re.captures_at(s, at)?;
        let found = caps.get(0)?.range();
        if let Some(mut groups) = self.longest.groups(s, &found) {
            groups.resize(caps.len(), None);
            return Some(groups);
        }
        Some(
            (0..caps.len())
                .map(|g| caps.get(g).map(|m| m.range()))
                .collect(),
        )
    }

    /// The successive matches, as the regex crate's `find_iter` walks
    /// them: an empty match right where the previous one ended is not one.
    pub(crate) fn find_all(&self, s: &str) -> Vec<Range<usize>> {
        let mut all = Vec::new();
        let mut at = 0;
        let mut last_end = None;
        while at <= s.len() {
            let Some(m) = self.find_at(s, at) else { break };
            let next = |p: usize| p + s[p..].chars().next().map_or(1, char::len_utf8);
            if m.is_empty() && last_end == Some(m.end) {
                at = next(m.end);
                continue;
            }
            at = if m.is_empty() { next(m.end) } else { m.end };
            last_end = Some(m.end);
            all.push(m);
        }
        all
    }

    /// The pieces of `s` between matches, as the regex crate's `split`.
    pub(crate) fn split<'t>(&self, s: &'t str) -> Vec<&'t str> {
        let mut pieces = Vec::new();
        let mut last = 0;
        for m in self.find_all(s) {
            pieces.push(&s[last..m.start]);
            last = m.end;
        }
        pieces.push(&s[last..]);
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn longest(pattern: &str, hay: &str) -> Range<usize> {
        let re = regex::Regex::new(pattern).unwrap();
        let found = re.find(hay).unwrap().range();
        found.start..Longest::new(pattern, false, false).end(hay.as_bytes(), &found)
    }

    #[test]
    fn the_longest_of_the_leftmost_matches() {
        assert_eq!(longest("a|ab", "abcd"), 0..2);
        assert_eq!(longest("error|errors", "2 errors"), 2..8);
        assert_eq!(longest("(ab)?(abcd)?", "abcd"), 0..4);
        // Without alternatives or repetitions nothing changes.
        assert_eq!(longest("ab", "xabab"), 1..3);
        assert_eq!(longest("(ab|a)*c?", "aabx"), 0..3);
        // A Unicode word boundary past ASCII: the regex crate's match.
        assert_eq!(longest(r"\bé|éa\b", "éa b"), 0..2);
    }

    #[test]
    fn only_alternatives_and_repeated_groups_need_the_second_search() {
        for p in ["a|b", "(ab)?", "(a|b)*", "x(?:ab)+", "a(b){2}"] {
            assert!(ambiguous(p), "{p}");
        }
        for p in ["[0-9]+", "a?ab*", r"\(x\)+", "(ab)c?", r"\bfoo\w*"] {
            assert!(!ambiguous(p), "{p}");
        }
    }

    #[test]
    fn splits_and_walks_as_the_regex_crate_with_longer_matches() {
        let re = PosixRegex::new(regex::Regex::new("a|ab").unwrap(), false, false);
        assert_eq!(re.find_all("abxab"), vec![0..2, 3..5]);
        assert_eq!(re.split("1ab2a3"), vec!["1", "2", "3"]);
        let empty = PosixRegex::new(regex::Regex::new("x*").unwrap(), false, false);
        let plain = regex::Regex::new("x*").unwrap();
        let theirs: Vec<_> = plain.find_iter("axxbé").map(|m| m.range()).collect();
        assert_eq!(empty.find_all("axxbé"), theirs);
        assert_eq!(
            empty.split("axxbé"),
            plain.split("axxbé").collect::<Vec<_>>()
        );
    }

    #[test]
    fn groups_describe_the_longest_match() {
        let l = Longest::new("(x|xy)(z|yz)?", false, false);
        let g = l.groups("xyz", &(0..1)).unwrap();
        assert_eq!(g[0], Some(0..3));
        assert_eq!(g.len(), 3);
        assert!(
            Longest::new("(a)b", false, false)
                .groups("ab", &(0..2))
                .is_none()
        );
    }
}
