//! `compgen`: the words bash's programmable completion would offer, written
//! one a line: the shell's own names (functions, aliases, variables,
//! builtins, keywords, options, signals), files and directories, a word
//! list, filtered by the word being completed.

use super::builtins::{SET_OPTIONS, SHOPTS};
use super::signals::compgen_signals;
use super::{Io, R, Shell, Value};
use crate::glob::Pattern;
use crate::lex::{Word as GlobWord, WordChar};

const USAGE: &str = "compgen: usage: compgen [-abcdefgjksuv] [-o option] [-A action] [-G globpat] [-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] [word]";

/// bash's builtins, in its table's (name) order, as `compgen -b` lists them.
const BASH_BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// bash's reserved words, in its table's order, as `compgen -k` lists them.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc",
];

/// The actions, in the order bash generates them whatever order they are
/// asked in.
const ACTIONS: &[&str] = &[
    "alias",
    "arrayvar",
    "binding",
    "builtin",
    "command",
    "directory",
    "disabled",
    "enabled",
    "export",
    "file",
    "function",
    "group",
    "helptopic",
    "hostname",
    "job",
    "keyword",
    "running",
    "service",
    "setopt",
    "shopt",
    "signal",
    "stopped",
    "user",
    "variable",
];

impl Shell<'_> {
    /// `compgen [-abcdefgjksuv] [-o OPT] [-A ACTION] [-G PAT] [-W WORDS]
    /// [-X PAT] [-P PREFIX] [-S SUFFIX] [WORD]`: status 0 when it offers
    /// a word, 1 when none, 2 on a usage error.
    pub(super) fn compgen(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        let mut actions: Vec<&'static str> = Vec::new();
        let (mut glob, mut words, mut filter) = (None, None, None);
        let (mut prefix, mut suffix) = (String::new(), String::new());
        let mut i = 0;
        while let Some(a) = args.get(i) {
            if a == "--" {
                i += 1;
                break;
            }
            if a.len() < 2 || !a.starts_with('-') {
                break;
            }
            i += 1;
            let mut chars = a[1..].chars();
            while let Some(c) = chars.next() {
                let letter = match c {
                    'a' => Some("alias"),
                    'b' => Some("builtin"),
                    'c' => Some("command"),
                    'd' => Some("directory"),
                    'e' => Some("export"),
                    'f' => Some("file"),
                    'g' => Some("group"),
                    'j' => Some("job"),
                    'k' => Some("keyword"),
                    's' => Some("service"),
                    'u' => Some("user"),
                    'v' => Some("variable"),
                    _ => None,
                };
                if let Some(action) = letter {
                    actions.push(action);
                    continue;
                }
                if !matches!(c, 'o' | 'A' | 'G' | 'W' | 'F' | 'C' | 'X' | 'P' | 'S') {
                    self.say(io, format_args!("compgen: -{c}: invalid option"));
                    let _ = writeln!(io.err, "{USAGE}");
                    return Ok(2);
                }
                let rest: String = chars.by_ref().collect();
                let value = if !rest.is_empty() {
                    rest
                } else if let Some(v) = args.get(i) {
                    i += 1;
                    v.clone()
                } else {
                    self.say(
                        io,
                        format_args!("compgen: -{c}: option requires an argument"),
                    );
                    let _ = writeln!(io.err, "{USAGE}");
                    return Ok(2);
                };
                match c {
                    'A' => match ACTIONS.iter().find(|n| **n == value) {
                        Some(action) => actions.push(action),
                        None => {
                            self.say(io, format_args!("compgen: {value}: invalid action name"));
                            return Ok(2);
                        }
                    },
                    'o' => match value.as_str() {
                        "default" | "bashdefault" => actions.push("file"),
                        "dirnames" | "plusdirs" => actions.push("directory"),
                        "filenames" | "noquote" | "nosort" | "nospace" => {}
                        _ => {
                            self.say(io, format_args!("compgen: {value}: invalid option name"));
                            return Ok(2);
                        }
                    },
                    'G' => glob = Some(value),
                    'W' => words = Some(value),
                    'X' => filter = Some(value),
                    'P' => prefix = value,
                    'S' => suffix = value,
                    // `-F` and `-C` run a function or command to make the
                    // words; without a completion in progress bash offers
                    // nothing from them either.
                    _ => {}
                }
            }
        }
        let word = args.get(i).map_or("", String::as_str);
        if actions.is_empty() && glob.is_none() && words.is_none() {
            return Ok(0);
        }

        let mut found: Vec<String> = Vec::new();
        for action in ACTIONS.iter().filter(|a| actions.contains(a)) {
            let names = self.completions(action, word);
            found.extend(names.into_iter().filter(|n| n.starts_with(word)));
        }
        if let Some(pattern) = glob {
            found.extend(self.glob_completions(&pattern));
        }
        if let Some(list) = words {
            // The list is expanded and split as a command's words are.
            let items = self.word_list(&list);
            found.extend(items.into_iter().filter(|w| w.starts_with(word)));
        }
        if let Some(f) = filter {
            let (keep, pat) = match f.strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, f.as_str()),
            };
            let pat = Pattern::new(pat);
            found.retain(|w| pat.matches(w, false) == keep);
        }
        let mut out = String::new();
        for w in &found {
            out.push_str(&prefix);
            out.push_str(w);
            out.push_str(&suffix);
            out.push('\n');
        }
        let _ = io.out.write_all(&crate::lossless::encode(&out));
        Ok(u8::from(found.is_empty()))
    }

    /// `-W`'s list as a command's words: expanded, split and globbed; an
    /// error in it offers nothing.
    fn word_list(&mut self, list: &str) -> Vec<String> {
        let Ok(parsed) = crate::syntax::parse(&format!("for _ in {list}; do :; done")) else {
            return Vec::new();
        };
        let Some(crate::syntax::Command::Compound(
            crate::syntax::Compound::For(_, Some(items), _),
            _,
        )) = parsed.first().and_then(|ao| ao.first.commands.first())
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for w in items {
            match self.expand_fields(w) {
                Ok(fields) => out.extend(fields),
                Err(_) => return Vec::new(),
            }
        }
        out
    }

    /// The names one action offers for `word`, in bash's order.
    fn completions(&mut self, action: &str, word: &str) -> Vec<String> {
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        match action {
            "alias" => self.st.aliases.keys().cloned().collect(),
            "arrayvar" => sorted(
                self.st
                    .vars
                    .iter()
                    .filter(|(_, v)| !matches!(v, Value::Str(_)))
                    .map(|(k, _)| k.clone())
                    .collect(),
            ),
            "builtin" | "enabled" => BASH_BUILTINS.iter().map(|s| (*s).to_owned()).collect(),
            "command" => {
                // What `type` would find: aliases, functions, builtins,
                // keywords and the commands vfs-sh has.
                let mut v: Vec<String> = self.st.aliases.keys().cloned().collect();
                v.extend(sorted(self.st.funcs.keys().cloned().collect()));
                v.extend(BASH_BUILTINS.iter().map(|s| (*s).to_owned()));
                v.extend(KEYWORDS.iter().map(|s| (*s).to_owned()));
                v.extend(sorted(
                    crate::commands::names().map(str::to_owned).collect(),
                ));
                v
            }
            "directory" => self.file_completions(word, true),
            "file" => self.file_completions(word, false),
            "export" => sorted(
                self.st
                    .exported
                    .iter()
                    .filter(|n| self.st.vars.contains_key(*n))
                    .cloned()
                    .collect(),
            ),
            "function" => sorted(self.st.funcs.keys().cloned().collect()),
            "keyword" => KEYWORDS.iter().map(|s| (*s).to_owned()).collect(),
            "setopt" => SET_OPTIONS.iter().map(|(n, _)| (*n).to_owned()).collect(),
            "shopt" => SHOPTS.iter().map(|(n, _)| (*n).to_owned()).collect(),
            "signal" => compgen_signals(),
            "variable" => sorted(self.st.vars.keys().cloned().collect()),
            // Bindings, help topics, hosts, users, groups, services and
            // jobs: the sandbox has none of them to offer.
            _ => Vec::new(),
        }
    }

    /// The paths that complete `word` (directories only with `dirs`): the
    /// entries of its directory that start as its last component does, in
    /// the directory's order; dot files only when the word's last
    /// component starts with a dot.
    fn file_completions(&mut self, word: &str, dirs: bool) -> Vec<String> {
        let (dir, base) = split_last(word);
        let Some(entries) = self.entries(dir) else {
            return Vec::new();
        };
        // Readline's matching: hidden files too, and `.` and `..` when the
        // word asks for a dot.
        let dots = ["..", "."]
            .into_iter()
            .filter(|d| !base.is_empty() && d.starts_with(base))
            .map(|d| (d.to_owned(), true));
        dots.rev()
            .chain(
                entries
                    .into_iter()
                    .filter(|e| e.name.starts_with(base))
                    .map(|e| (e.name, e.kind == crate::fs::Kind::Dir)),
            )
            .filter(|(_, is_dir)| !dirs || *is_dir)
            .map(|(name, _)| format!("{dir}{name}"))
            .collect()
    }

    /// `-G`'s matches: when only the last component has glob characters,
    /// in the reverse of the directory's order (bash's glob gathers them
    /// into a list it prepends to, and compgen does not sort), otherwise
    /// as the shell's glob finds them; nothing when nothing matches.
    fn glob_completions(&mut self, pattern: &str) -> Vec<String> {
        let (dir, base) = split_last(pattern);
        if !dir.contains(['*', '?', '[']) {
            let Some(entries) = self.entries(dir) else {
                return Vec::new();
            };
            let pat = Pattern::new(base);
            let dotglob = self.st.opts.dotglob || base.starts_with('.');
            return entries
                .into_iter()
                .rev()
                .filter(|e| dotglob || !e.name.starts_with('.'))
                .filter(|e| pat.matches(&e.name, false))
                .map(|e| format!("{dir}{}", e.name))
                .collect();
        }
        let chars = pattern
            .chars()
            .map(|ch| WordChar { ch, quoted: false })
            .collect();
        self.glob_matches(&GlobWord { chars }).unwrap_or_default()
    }

    /// The entries of `dir` (the current directory when empty), in the
    /// directory's order.
    fn entries(&mut self, dir: &str) -> Option<Vec<crate::fs::Entry>> {
        self.fs
            .read_dir(if dir.is_empty() { "." } else { dir })
            .ok()
    }
}

/// A word split after its last `/`: the directory part (with the `/`) and
/// the last component.
fn split_last(word: &str) -> (&str, &str) {
    match word.rfind('/') {
        Some(k) => (&word[..=k], &word[k + 1..]),
        None => ("", word),
    }
}
