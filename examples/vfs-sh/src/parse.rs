//! The parser: tokens to a flat list of pipelines joined by `;`, `&&` and
//! `||`.
//!
//! Bash's and-or lists are left-associative with equal precedence, so a
//! flat list where each pipeline remembers the operator before it runs
//! exactly as bash does: `a && b || c; d`.

use crate::lex::{Token, Word};

/// How a pipeline is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conn {
    /// First pipeline, or after `;` or a newline: always runs.
    Seq,
    /// After `&&`: runs when the last status is 0.
    And,
    /// After `||`: runs when the last status is not 0.
    Or,
}

/// Commands joined by `|`; each command is its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pipeline {
    pub(crate) commands: Vec<Vec<Word>>,
}

/// A parsed script.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Script {
    pub(crate) items: Vec<(Conn, Pipeline)>,
}

fn near(tok: &Token) -> String {
    let t = match tok {
        Token::Pipe => "|",
        Token::And => "&&",
        Token::Or => "||",
        Token::Semi => ";",
        Token::Newline => "newline",
        Token::Word(_) => "word",
    };
    format!("vfs-sh: syntax error near unexpected token `{t}'")
}

/// Builds the script from its tokens, or returns a syntax error message.
pub(crate) fn parse(tokens: Vec<Token>) -> Result<Script, String> {
    let mut script = Script::default();
    let mut conn = Conn::Seq;
    let mut commands: Vec<Vec<Word>> = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    // After `|`, `&&` or `||`: another command must follow (newlines may
    // come first).
    let mut pending = false;
    for tok in tokens {
        match tok {
            Token::Word(w) => {
                words.push(w);
                pending = false;
            }
            Token::Pipe | Token::And | Token::Or => {
                if words.is_empty() {
                    return Err(near(&tok));
                }
                commands.push(std::mem::take(&mut words));
                if tok != Token::Pipe {
                    script.items.push((
                        conn,
                        Pipeline {
                            commands: std::mem::take(&mut commands),
                        },
                    ));
                    conn = if tok == Token::And {
                        Conn::And
                    } else {
                        Conn::Or
                    };
                }
                pending = true;
            }
            Token::Semi | Token::Newline => {
                if words.is_empty() {
                    if tok == Token::Semi || (!pending && !commands.is_empty()) {
                        return Err(near(&tok));
                    }
                    continue;
                }
                commands.push(std::mem::take(&mut words));
                script.items.push((
                    conn,
                    Pipeline {
                        commands: std::mem::take(&mut commands),
                    },
                ));
                conn = Conn::Seq;
            }
        }
    }
    if pending {
        return Err("vfs-sh: syntax error: unexpected end of script".to_owned());
    }
    if !words.is_empty() {
        commands.push(words);
        script.items.push((conn, Pipeline { commands }));
    }
    Ok(script)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::tokenize;

    /// A compact rendering: pipelines as `a b|c`, joined by their operator.
    fn render(src: &str) -> Result<String, String> {
        let script = parse(tokenize(src)?)?;
        let mut s = String::new();
        for (conn, p) in &script.items {
            s.push_str(match conn {
                Conn::Seq if s.is_empty() => "",
                Conn::Seq => " ; ",
                Conn::And => " && ",
                Conn::Or => " || ",
            });
            let cmds: Vec<String> = p
                .commands
                .iter()
                .map(|c| c.iter().map(Word::text).collect::<Vec<_>>().join(" "))
                .collect();
            s.push_str(&cmds.join("|"));
        }
        Ok(s)
    }

    #[test]
    fn structure() {
        let table: &[(&str, &str)] = &[
            ("", ""),
            ("\n\n", ""),
            ("echo a", "echo a"),
            ("a | b | c", "a|b|c"),
            ("a && b || c", "a && b || c"),
            ("a; b\nc", "a ; b ; c"),
            ("a;", "a"),
            ("a &&\n b", "a && b"),
            ("a |\n\n b", "a|b"),
            ("a ||\n b", "a || b"),
            ("a | b && c | d; e", "a|b && c|d ; e"),
            ("# comment\na # more\n", "a"),
        ];
        for (src, want) in table {
            assert_eq!(render(src).as_deref(), Ok(*want), "{src:?}");
        }
    }

    #[test]
    fn syntax_errors() {
        let table: &[(&str, &str)] = &[
            ("| a", "`|'"),
            ("a | | b", "`|'"),
            ("&& a", "`&&'"),
            ("a && || b", "`||'"),
            ("; a", "`;'"),
            ("a ; ; b", "`;'"),
            ("a |", "unexpected end"),
            ("a &&", "unexpected end"),
            ("a ||\n", "unexpected end"),
            ("a |;", "`;'"),
        ];
        for (src, want) in table {
            match render(src) {
                Ok(s) => panic!("{src:?} parsed as {s:?}"),
                Err(e) => assert!(e.contains(want), "{src:?}: {e}"),
            }
        }
    }
}
