//! Expanded words as globbing sees them: each character remembers whether
//! it was quoted, so that `*`, `?` and `[` are active only where the user
//! left them unquoted.

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
}
