//! File names quoted the way GNU coreutils quotes them: in messages
//! (gnulib's shell-escape style: `cat: 'my file': No such file or
//! directory`, `ls: cannot access "it's": ...`) and in `ls`'s listings
//! (`--quoting-style`, `-Q`, `-b`, `-N`, `-q`).

/// How a name is written: gnulib's quoting styles, as `ls --quoting-style`
/// names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// As it is (`-N`).
    Literal,
    /// In quotes when a shell would need them; other bytes as they are.
    Shell,
    ShellAlways,
    /// As `Shell`, with `$'\t'` for what cannot be written in quotes: the
    /// style of coreutils' messages.
    ShellEscape,
    ShellEscapeAlways,
    /// In double quotes with C's escapes (`-Q`).
    C,
    /// As `C` when a name has a `"` or an unprintable character; else as
    /// it is.
    CMaybe,
    /// C's escapes without the quotes, a space escaped too (`-b`).
    Escape,
    /// The locale's quotes: `‘a’` in a UTF-8 locale, `'a'` in C.
    Locale,
    /// As `Locale` in a UTF-8 locale, as `C` in C.
    CLocale,
}

impl Style {
    /// The words `--quoting-style` takes, in GNU's order, with their styles.
    pub(crate) const NAMED: &[(&str, Style)] = &[
        ("literal", Style::Literal),
        ("shell", Style::Shell),
        ("shell-always", Style::ShellAlways),
        ("shell-escape", Style::ShellEscape),
        ("shell-escape-always", Style::ShellEscapeAlways),
        ("c", Style::C),
        ("c-maybe", Style::CMaybe),
        ("escape", Style::Escape),
        ("locale", Style::Locale),
        ("clocale", Style::CLocale),
    ];
}

/// How names are to be written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Quoting {
    pub(crate) style: Style,
    /// A UTF-8 locale: characters beyond ASCII are printable. In C they are
    /// bytes that are not.
    pub(crate) utf8: bool,
    /// `ls -q`: each unprintable character shown as `?`.
    pub(crate) hide_control: bool,
    /// A `:` needs quotes too, or a backslash in the backslash styles
    /// (coreutils' messages and `ls`'s directory headings, so that
    /// `cat: a:b: ...` reads one way; `ls` leaves a listed name's bare).
    pub(crate) colon: bool,
    /// A space takes a backslash in the `escape` style (`ls -b`'s names, not
    /// its headings).
    pub(crate) space: bool,
}

/// Whether a name needs quotes to be read back by a shell (gnulib's list).
fn needs_quotes(name: &str, colon: bool) -> bool {
    name.is_empty()
        || name == "{"
        || name == "}"
        || name.starts_with(['#', '~'])
        || name.chars().any(|c| {
            matches!(c, '\t' | '\n' | '\r')
                || " !\"$&()*;<=>?[\\^`|'".contains(c)
                || (colon && c == ':')
        })
}

/// C's escape for an unprintable character: a letter where C has one, else
/// each of its bytes in octal.
fn c_escape(c: char) -> String {
    match c {
        '\x07' => "\\a".to_owned(),
        '\x08' => "\\b".to_owned(),
        '\x0c' => "\\f".to_owned(),
        '\n' => "\\n".to_owned(),
        '\r' => "\\r".to_owned(),
        '\t' => "\\t".to_owned(),
        '\x0b' => "\\v".to_owned(),
        c => {
            let mut buf = [0u8; 4];
            c.encode_utf8(&mut buf)
                .bytes()
                .map(|b| format!("\\{b:03o}"))
                .collect()
        }
    }
}

impl Quoting {
    /// What coreutils' messages use: shell-escape, `:` quoted too.
    const MESSAGES: Quoting = Quoting {
        style: Style::ShellEscape,
        utf8: true,
        hide_control: false,
        colon: true,
        space: false,
    };

    fn printable(self, c: char) -> bool {
        !c.is_control() && (self.utf8 || c.is_ascii())
    }

    /// `c` as it is, or as `?` under `-q` when it is unprintable (one per
    /// byte in the C locale).
    fn shown(self, c: char, out: &mut String) {
        if self.hide_control && !self.printable(c) {
            let n = if self.utf8 { 1 } else { c.len_utf8() };
            out.extend(std::iter::repeat_n('?', n));
        } else {
            out.push(c);
        }
    }

    /// `name` with its characters [`shown`](Self::shown).
    fn shown_all(self, name: &str) -> String {
        let mut out = String::new();
        for c in name.chars() {
            self.shown(c, &mut out);
        }
        out
    }

    /// Whether `name` is written in quotes in this style (`ls` then puts a
    /// space before the names that are not, to line them up).
    pub(crate) fn quotes(self, name: &str) -> bool {
        match self.style {
            Style::Literal | Style::Escape => false,
            Style::Shell => needs_quotes(name, self.colon),
            Style::ShellEscape => {
                needs_quotes(name, self.colon) || name.chars().any(|c| !self.printable(c))
            }
            Style::CMaybe => name.chars().any(|c| {
                c == '"' || (self.colon && c == ':') || (!self.hide_control && !self.printable(c))
            }),
            _ => true,
        }
    }

    /// `name` written in this style.
    pub(crate) fn apply(self, name: &str) -> String {
        match self.style {
            Style::CMaybe if self.quotes(name) => {
                format!("\"{}\"", self.backslashed(name, false, '"'))
            }
            Style::Literal | Style::CMaybe => self.shown_all(name),
            Style::Shell | Style::ShellAlways => {
                let body = self.shown_all(name);
                if !self.quotes(name) {
                    body
                } else if name.contains('\'') && !name.contains(['"', '$', '`', '\\']) {
                    format!("\"{body}\"")
                } else {
                    format!("'{}'", body.replace('\'', "'\\''"))
                }
            }
            Style::ShellEscape | Style::ShellEscapeAlways => self.shell_escape(name),
            Style::C => format!("\"{}\"", self.backslashed(name, false, '"')),
            Style::Escape => self.backslashed(name, self.space, '\0'),
            Style::Locale if !self.utf8 => format!("'{}'", self.backslashed(name, false, '\'')),
            Style::CLocale if !self.utf8 => format!("\"{}\"", self.backslashed(name, false, '"')),
            Style::Locale | Style::CLocale => {
                format!("\u{2018}{}\u{2019}", self.backslashed(name, false, '\0'))
            }
        }
    }

    /// C's escapes: `\\` for a backslash, `\q` for the quote `q`, a letter
    /// or octal for the unprintable, `\ ` for a space (`escape`), `\:`
    /// where a colon is quoted (but for `c-maybe`, where it only calls for
    /// the quotes).
    fn backslashed(self, name: &str, space: bool, quote: char) -> String {
        let mut out = String::new();
        for c in name.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                ' ' if space => out.push_str("\\ "),
                ':' if self.colon && self.style != Style::CMaybe => out.push_str("\\:"),
                c if c == quote => {
                    out.push('\\');
                    out.push(c);
                }
                c if !self.printable(c) && !self.hide_control => out.push_str(&c_escape(c)),
                c => self.shown(c, &mut out),
            }
        }
        out
    }

    /// gnulib's shell-escape: bare when nothing needs quotes (unless
    /// always), in double quotes when it holds a `'` but nothing special
    /// to double quotes, else in single quotes (`'\''` for a quote,
    /// `$'\t'` for the unprintable).
    fn shell_escape(self, name: &str) -> String {
        let unprintable = !self.hide_control && name.chars().any(|c| !self.printable(c));
        if !self.quotes(name) {
            return self.shown_all(name);
        }
        if name.contains('\'') && !unprintable && !name.contains(['"', '$', '`', '\\']) {
            return format!("\"{}\"", self.shown_all(name));
        }
        let mut out = String::from("'");
        for c in name.chars() {
            if c == '\'' {
                out.push_str("'\\''");
            } else if !self.printable(c) && !self.hide_control {
                out.push_str(&format!("'$'{}''", c_escape(c)));
            } else {
                self.shown(c, &mut out);
            }
        }
        out.push('\'');
        // `'a'$'\t'''` has an empty pair at the end: drop it, as gnulib does.
        if let Some(s) = out.strip_suffix("''")
            && unprintable
            && !s.is_empty()
        {
            return s.to_owned();
        }
        out
    }
}

/// Quotes `name` as coreutils' messages do (gnulib's shell-escape style,
/// `:` included): bare when it needs nothing (unless `always`).
pub(crate) fn quote(name: &str, always: bool) -> String {
    Quoting {
        style: if always {
            Style::ShellEscapeAlways
        } else {
            Style::ShellEscape
        },
        ..Quoting::MESSAGES
    }
    .apply(name)
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn like_gnulib() {
        let table = [
            ("a.txt", "a.txt"),
            ("a b", "'a b'"),
            ("it's", "\"it's\""),
            ("a'b\"c", "'a'\\''b\"c'"),
            ("", "''"),
            ("~a", "'~a'"),
            ("a~b", "a~b"),
            ("#a", "'#a'"),
            ("a#b", "a#b"),
            ("a:b", "'a:b'"),
            ("a]b", "a]b"),
            ("a,b", "a,b"),
            ("{", "'{'"),
            ("a{b", "a{b"),
            ("a\tb", "'a'$'\\t''b'"),
            ("é", "é"),
        ];
        for (name, want) in table {
            assert_eq!(quote(name, false), want, "{name:?}");
        }
        assert_eq!(quote("nope", true), "'nope'");
        assert_eq!(quote("it's", true), "\"it's\"");
    }

    /// What GNU `ls --quoting-style=STYLE` prints, in the C locale unless
    /// said (taken from coreutils 9 over files of these names).
    #[test]
    fn ls_styles_like_gnu() {
        use super::{Quoting, Style};
        let c = |style| Quoting {
            style,
            utf8: false,
            hide_control: false,
            colon: false,
            space: true,
        };
        let table: &[(Quoting, &str, &str)] = &[
            (c(Style::ShellEscape), "a\u{7}b", "'a'$'\\a''b'"),
            (c(Style::ShellEscape), "é", "''$'\\303\\251'"),
            (c(Style::ShellEscape), "tab\there", "'tab'$'\\t''here'"),
            (c(Style::ShellEscape), "x=y", "'x=y'"),
            (c(Style::ShellEscape), "a:b", "a:b"),
            (c(Style::Shell), "g\rh", "'g\rh'"),
            (c(Style::Shell), "a\u{7}b", "a\u{7}b"),
            (c(Style::Shell), "é", "é"),
            (c(Style::ShellAlways), "plain", "'plain'"),
            (c(Style::C), "e\u{1}f", "\"e\\001f\""),
            (c(Style::C), "f\u{7f}g", "\"f\\177g\""),
            (c(Style::C), "q\"d", "\"q\\\"d\""),
            (c(Style::C), "é", "\"\\303\\251\""),
            (c(Style::Escape), "a b", "a\\ b"),
            (c(Style::Escape), "h\ni", "h\\ni"),
            (c(Style::Escape), "q\"d", "q\"d"),
            (c(Style::CMaybe), "back\\slash", "back\\slash"),
            (c(Style::CMaybe), "q\"d", "\"q\\\"d\""),
            (c(Style::Locale), "it's", "'it\\'s'"),
            (c(Style::Locale), "back\\slash", "'back\\\\slash'"),
            (c(Style::CLocale), "it's", "\"it's\""),
            (
                Quoting {
                    utf8: true,
                    ..c(Style::Locale)
                },
                "it's",
                "\u{2018}it's\u{2019}",
            ),
            (
                Quoting {
                    hide_control: true,
                    ..c(Style::Literal)
                },
                "tab\thé",
                "tab?h??",
            ),
            (
                Quoting {
                    hide_control: true,
                    utf8: true,
                    ..c(Style::Literal)
                },
                "tab\thé",
                "tab?hé",
            ),
            (
                Quoting {
                    colon: true,
                    space: false,
                    ..c(Style::Escape)
                },
                "./c:d e",
                "./c\\:d e",
            ),
            (
                Quoting {
                    colon: true,
                    ..c(Style::CMaybe)
                },
                "./c:d",
                "\"./c:d\"",
            ),
        ];
        for (q, name, want) in table {
            assert_eq!(q.apply(name), *want, "{:?} {name:?}", q.style);
        }
    }
}
