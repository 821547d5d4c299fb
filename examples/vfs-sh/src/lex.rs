//! The tokenizer: script text to words and operators, as a POSIX shell
//! splits it.
//!
//! Quotes and backslashes are removed here, but each character remembers
//! whether it was quoted, so that glob characters (`*`, `?`, `[`) and `~`
//! are active only where the user left them unquoted. Everything vfs-sh does
//! not do (expansions, substitutions, redirections, subshells, background
//! jobs) is refused here, before anything runs.

/// One character of a word, and whether it was quoted or escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WordChar {
    pub(crate) ch: char,
    pub(crate) quoted: bool,
}

/// A word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    pub(crate) chars: Vec<WordChar>,
}

impl Word {
    /// The word's text.
    pub(crate) fn text(&self) -> String {
        self.chars.iter().map(|c| c.ch).collect()
    }

    /// Whether the word holds an unquoted glob character.
    pub(crate) fn has_glob(&self) -> bool {
        self.chars
            .iter()
            .any(|c| !c.quoted && matches!(c.ch, '*' | '?' | '['))
    }

    /// The word as a glob pattern: quoted characters that are special to
    /// globs are escaped with a backslash.
    pub(crate) fn glob_pattern(&self) -> String {
        let mut s = String::new();
        for c in &self.chars {
            if c.quoted && matches!(c.ch, '*' | '?' | '[' | ']' | '\\') {
                s.push('\\');
            }
            s.push(c.ch);
        }
        s
    }

    fn push(&mut self, ch: char, quoted: bool) {
        self.chars.push(WordChar { ch, quoted });
    }
}

/// A token of the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Word(Word),
    /// `|`
    Pipe,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `;`
    Semi,
    /// A line break.
    Newline,
}

/// The message for any redirection.
pub(crate) const READ_ONLY: &str = "vfs-sh: the filesystem is read-only";

/// Why `$` followed by `next` would expand, if it would.
fn expansion(next: Option<char>, in_double_quotes: bool) -> Option<String> {
    let c = next?;
    let what = match c {
        '(' => "vfs-sh: command substitution $(...) is not supported".to_owned(),
        '{' => "vfs-sh: parameter expansion ${...} is not supported".to_owned(),
        '\'' if !in_double_quotes => "vfs-sh: $'...' quoting is not supported".to_owned(),
        '"' if !in_double_quotes => "vfs-sh: $\"...\" quoting is not supported".to_owned(),
        c if c.is_ascii_alphanumeric() || c == '_' => {
            "vfs-sh: variable expansion is not supported (no variables exist); quote a literal $ as '$'"
                .to_owned()
        }
        '@' | '*' | '#' | '?' | '$' | '!' | '-' => {
            format!("vfs-sh: special parameter ${c} is not supported")
        }
        _ => return None,
    };
    Some(what)
}

/// Splits a script into tokens, or returns the message (for stderr, exit
/// status 2) refusing it.
pub(crate) fn tokenize(src: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut tokens = Vec::new();
    let mut word: Option<Word> = None;
    let mut i = 0;
    let finish = |word: &mut Option<Word>, tokens: &mut Vec<Token>| {
        if let Some(w) = word.take() {
            tokens.push(Token::Word(w));
        }
    };
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        i += 1;
        match c {
            ' ' | '\t' | '\r' => finish(&mut word, &mut tokens),
            '\n' => {
                finish(&mut word, &mut tokens);
                tokens.push(Token::Newline);
            }
            '#' if word.is_none() => {
                while chars.get(i).is_some_and(|&c| c != '\n') {
                    i += 1;
                }
            }
            '\\' => match next {
                None => word.get_or_insert_with(Word::default).push('\\', true),
                Some('\n') => i += 1,
                Some(n) => {
                    word.get_or_insert_with(Word::default).push(n, true);
                    i += 1;
                }
            },
            '\'' => {
                let w = word.get_or_insert_with(Word::default);
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(
                                "vfs-sh: unexpected end of script while looking for matching `''"
                                    .to_owned(),
                            );
                        }
                        Some('\'') => {
                            i += 1;
                            break;
                        }
                        Some(&q) => {
                            w.push(q, true);
                            i += 1;
                        }
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(Word::default);
                loop {
                    let Some(&q) = chars.get(i) else {
                        return Err(
                            "vfs-sh: unexpected end of script while looking for matching `\"'"
                                .to_owned(),
                        );
                    };
                    let after = chars.get(i + 1).copied();
                    i += 1;
                    match q {
                        '"' => break,
                        '\\' => match after {
                            Some('\n') => i += 1,
                            Some(e @ ('$' | '`' | '"' | '\\')) => {
                                w.push(e, true);
                                i += 1;
                            }
                            _ => w.push('\\', true),
                        },
                        '`' => {
                            return Err(
                                "vfs-sh: command substitution `...` is not supported".to_owned()
                            );
                        }
                        '$' => {
                            if let Some(why) = expansion(after, true) {
                                return Err(why);
                            }
                            w.push('$', true);
                        }
                        q => w.push(q, true),
                    }
                }
            }
            '$' => {
                if let Some(why) = expansion(next, false) {
                    return Err(why);
                }
                word.get_or_insert_with(Word::default).push('$', false);
            }
            '`' => return Err("vfs-sh: command substitution `...` is not supported".to_owned()),
            '|' => {
                finish(&mut word, &mut tokens);
                match next {
                    Some('|') => {
                        i += 1;
                        tokens.push(Token::Or);
                    }
                    Some('&') => {
                        return Err(
                            "vfs-sh: '|&' is not supported (stderr cannot be piped)".to_owned()
                        );
                    }
                    _ => tokens.push(Token::Pipe),
                }
            }
            '&' => {
                finish(&mut word, &mut tokens);
                match next {
                    Some('&') => {
                        i += 1;
                        tokens.push(Token::And);
                    }
                    Some('>') => return Err(READ_ONLY.to_owned()),
                    _ => {
                        return Err("vfs-sh: background jobs ('&') are not supported".to_owned());
                    }
                }
            }
            ';' => {
                finish(&mut word, &mut tokens);
                if next == Some(';') {
                    return Err("vfs-sh: syntax error near unexpected token `;;'".to_owned());
                }
                tokens.push(Token::Semi);
            }
            '>' => return Err(READ_ONLY.to_owned()),
            '<' => {
                return Err(match next {
                    Some('<') => "vfs-sh: here-documents ('<<') are not supported".to_owned(),
                    Some('(') => "vfs-sh: process substitution is not supported".to_owned(),
                    _ => "vfs-sh: input redirection ('<') is not supported; pass the file as an argument"
                        .to_owned(),
                });
            }
            '(' | ')' => {
                return Err(format!(
                    "vfs-sh: subshells and grouping ('{c}') are not supported"
                ));
            }
            c => word.get_or_insert_with(Word::default).push(c, false),
        }
    }
    finish(&mut word, &mut tokens);
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of a script, as plain strings; operators as `<op>`.
    fn words(src: &str) -> Result<Vec<String>, String> {
        Ok(tokenize(src)?
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => w.text(),
                Token::Pipe => "<|>".to_owned(),
                Token::And => "<&&>".to_owned(),
                Token::Or => "<||>".to_owned(),
                Token::Semi => "<;>".to_owned(),
                Token::Newline => "<nl>".to_owned(),
            })
            .collect())
    }

    #[test]
    fn words_and_quotes() {
        let table: &[(&str, &[&str])] = &[
            ("echo a b", &["echo", "a", "b"]),
            ("  echo\t a  ", &["echo", "a"]),
            ("echo 'a b'", &["echo", "a b"]),
            ("echo \"a b\"", &["echo", "a b"]),
            ("echo a\\ b", &["echo", "a b"]),
            ("echo 'it'\\''s'", &["echo", "it's"]),
            ("echo \"a\\\"b\"", &["echo", "a\"b"]),
            ("echo \"a\\\\b\"", &["echo", "a\\b"]),
            ("echo \"a\\$b\"", &["echo", "a$b"]),
            ("echo \"a\\`b\"", &["echo", "a`b"]),
            ("echo \"a\\nb\"", &["echo", "a\\nb"]),
            ("echo 'a\\nb'", &["echo", "a\\nb"]),
            ("echo a\\nb", &["echo", "anb"]),
            ("echo '$HOME'", &["echo", "$HOME"]),
            ("echo ''", &["echo", ""]),
            ("echo \"\"x", &["echo", "x"]),
            ("echo a\"b\"'c'd", &["echo", "abcd"]),
            ("echo a#b", &["echo", "a#b"]),
            ("echo a #b c", &["echo", "a"]),
            ("# only a comment", &[]),
            ("echo '#x'", &["echo", "#x"]),
            ("grep 'end$' f", &["grep", "end$", "f"]),
            ("grep \"end$\" f", &["grep", "end$", "f"]),
            ("grep end$ f", &["grep", "end$", "f"]),
            ("echo $", &["echo", "$"]),
            ("echo a\\\nb", &["echo", "ab"]),
            ("echo \"a\\\nb\"", &["echo", "ab"]),
            ("echo \\", &["echo", "\\"]),
            ("echo \"'\"", &["echo", "'"]),
            ("echo '\"'", &["echo", "\""]),
            ("echo \"a;b|c&d>e<f(g)\"", &["echo", "a;b|c&d>e<f(g)"]),
            ("echo 'a;b|c&d>e<f(g)'", &["echo", "a;b|c&d>e<f(g)"]),
            ("echo a\\;b", &["echo", "a;b"]),
            ("echo a\\>b", &["echo", "a>b"]),
            ("echo é ü", &["echo", "é", "ü"]),
            ("echo {a,b}", &["echo", "{a,b}"]),
        ];
        for (src, want) in table {
            let got = words(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
            assert_eq!(&got, want, "{src:?}");
        }
    }

    #[test]
    fn operators() {
        let table: &[(&str, &[&str])] = &[
            ("a|b", &["a", "<|>", "b"]),
            ("a | b", &["a", "<|>", "b"]),
            ("a&&b", &["a", "<&&>", "b"]),
            ("a || b", &["a", "<||>", "b"]),
            ("a;b", &["a", "<;>", "b"]),
            ("a\nb", &["a", "<nl>", "b"]),
            ("a # c\nb", &["a", "<nl>", "b"]),
            ("a ||b&& c;d", &["a", "<||>", "b", "<&&>", "c", "<;>", "d"]),
        ];
        for (src, want) in table {
            let got = words(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
            assert_eq!(&got, want, "{src:?}");
        }
    }

    #[test]
    fn refusals() {
        let table: &[(&str, &str)] = &[
            ("echo a > f", "read-only"),
            ("echo a >> f", "read-only"),
            ("echo a>f", "read-only"),
            ("ls 2>/dev/null", "read-only"),
            ("ls &> f", "read-only"),
            ("ls 2>&1", "read-only"),
            ("cat < f", "input redirection"),
            ("cat <<EOF", "here-documents"),
            ("cat <(ls)", "process substitution"),
            ("echo $HOME", "variable expansion"),
            ("echo \"$HOME\"", "variable expansion"),
            ("echo ${HOME}", "parameter expansion"),
            ("echo $(ls)", "command substitution"),
            ("echo \"$(ls)\"", "command substitution"),
            ("echo `ls`", "command substitution"),
            ("echo \"`ls`\"", "command substitution"),
            ("echo $?", "special parameter"),
            ("echo $1", "variable expansion"),
            ("echo $'a'", "quoting is not supported"),
            ("(ls)", "subshells"),
            ("ls )", "subshells"),
            ("sleep 1 &", "background"),
            ("ls |& cat", "'|&'"),
            ("echo 'abc", "matching `''"),
            ("echo \"abc", "matching `\"'"),
            ("a ;; b", "syntax error"),
        ];
        for (src, want) in table {
            match tokenize(src) {
                Ok(t) => panic!("{src:?} was accepted: {t:?}"),
                Err(e) => {
                    assert!(e.contains(want), "{src:?}: {e:?} lacks {want:?}");
                    assert!(e.starts_with("vfs-sh: "), "{e}");
                }
            }
        }
        assert_eq!(
            tokenize("echo hi > out.txt"),
            Err("vfs-sh: the filesystem is read-only".to_owned())
        );
    }

    #[test]
    fn glob_flags_follow_quoting() {
        let toks = tokenize("ls *.md '*.md' \\*.md \"a*\"b? [ab]").expect("tokenizes");
        let globbed: Vec<(String, bool)> = toks
            .into_iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some((w.glob_pattern(), w.has_glob())),
                _ => None,
            })
            .collect();
        assert_eq!(
            globbed,
            vec![
                ("ls".to_owned(), false),
                ("*.md".to_owned(), true),
                ("\\*.md".to_owned(), false),
                ("\\*.md".to_owned(), false),
                ("a\\*b?".to_owned(), true),
                ("[ab]".to_owned(), true),
            ]
        );
    }
}
