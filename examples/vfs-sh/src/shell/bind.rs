//! `bind`: readline's key bindings as a non-interactive bash 5.2 lists them.
//!
//! A script has no line editing, but bash still initialises readline for
//! `bind`, so `bind -p`, `-P`, `-l`, `-v`, `-V` and `-q` print readline 8.2's
//! emacs keymap and variables as Debian 12 ships them (its `/etc/inputrc`
//! included). The tables are bash's own output (`env -i LC_ALL=C TERM=dumb
//! bash -c 'bind -p'` and `bind -v`); what depends on the environment is
//! applied here as bash applies it: `TERM` other than `dumb` binds the
//! page keys and turns on bracketed paste, and a UTF-8 locale writes meta
//! keys as `\e` (readline's `convert-meta` off) instead of `\M-`.
//! Changing bindings (`-f`, `-r`, `-u`, `-x`, a binding argument) and the
//! vi keymaps are refused with a message: nothing here edits lines.

use super::{Io, Shell};

/// `bind -p` in the C locale with `TERM=dumb`, without its leading blank line.
const EMACS: &str = include_str!("bind-emacs.txt");
/// `bind -v` in the C locale with `TERM=dumb`.
const VARIABLES: &str = include_str!("bind-variables.txt");

const USAGE: &str = "bind: usage: bind [-lpsvPSVX] [-m keymap] [-f filename] [-q name] [-u name] [-r keyseq] [-x keyseq:shell-command] [keyseq:readline-function or readline-command]";

/// The terminal and locale the bindings depend on.
struct Setting {
    terminal: bool,
    utf8: bool,
}

impl Setting {
    fn keymap(&self) -> Vec<String> {
        EMACS
            .lines()
            .map(|l| {
                let l = match l {
                    "# history-search-backward (not bound)" if self.terminal => {
                        "\"\\M-[5~\": history-search-backward"
                    }
                    "# history-search-forward (not bound)" if self.terminal => {
                        "\"\\M-[6~\": history-search-forward"
                    }
                    l => l,
                };
                if self.utf8 {
                    l.replace("\\M-", "\\e")
                } else {
                    l.to_owned()
                }
            })
            .collect()
    }

    fn variables(&self) -> Vec<String> {
        VARIABLES
            .lines()
            .map(|l| match l {
                "set convert-meta on" if self.utf8 => "set convert-meta off".to_owned(),
                "set enable-active-region off" if self.terminal => {
                    "set enable-active-region on".to_owned()
                }
                "set enable-bracketed-paste off" if self.terminal => {
                    "set enable-bracketed-paste on".to_owned()
                }
                l => l.to_owned(),
            })
            .collect()
    }
}

/// The keymap as (function, its key sequences), functions in readline's
/// (alphabetical) order.
fn functions(keymap: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in keymap {
        let (name, key) = match line
            .strip_prefix("# ")
            .and_then(|l| l.strip_suffix(" (not bound)"))
        {
            Some(name) => (name.to_owned(), None),
            None => match line.rsplit_once("\": ") {
                Some((key, name)) => (name.to_owned(), Some(format!("{key}\""))),
                None => continue,
            },
        };
        match out.last_mut() {
            Some((last, keys)) if *last == name => keys.extend(key),
            _ => out.push((name, key.into_iter().collect())),
        }
    }
    out
}

/// readline's list of a function's keys: at most five, then `...`.
fn key_list(keys: &[String]) -> String {
    let mut s = keys
        .iter()
        .take(5)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if keys.len() > 5 {
        s.push_str(", ...");
    }
    s
}

impl Shell<'_> {
    pub(super) fn bind(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        let prefix = self.env.whence.prefix();
        let say = |io: &mut Io<'_>, msg: std::fmt::Arguments<'_>| {
            let _ = writeln!(io.err, "{prefix}bind: {msg}");
        };
        let mut flags = String::new();
        let mut query = None;
        let mut keymap = None;
        let mut changes = false;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            if a == "--" {
                i += 1;
                break;
            }
            let Some(opts) = a.strip_prefix('-').filter(|o| !o.is_empty()) else {
                break;
            };
            i += 1;
            for (k, c) in opts.char_indices() {
                match c {
                    'l' | 'p' | 'P' | 's' | 'S' | 'v' | 'V' | 'X' => flags.push(c),
                    'f' | 'q' | 'u' | 'm' | 'r' | 'x' => {
                        let rest = &opts[k + c.len_utf8()..];
                        let value = if rest.is_empty() {
                            let Some(v) = args.get(i) else {
                                say(io, format_args!("-{c}: option requires an argument"));
                                let _ = writeln!(io.err, "{USAGE}");
                                return 2;
                            };
                            i += 1;
                            v.clone()
                        } else {
                            rest.to_owned()
                        };
                        match c {
                            // bash keeps the last `-q`.
                            'q' => query = Some(value),
                            'm' => keymap = Some(value),
                            _ => changes = true,
                        }
                        break;
                    }
                    other => {
                        say(io, format_args!("-{other}: invalid option"));
                        let _ = writeln!(io.err, "{USAGE}");
                        return 2;
                    }
                }
            }
        }
        self.say(io, "bind: warning: line editing not enabled");
        match keymap.as_deref() {
            None | Some("emacs" | "emacs-standard") => {}
            Some(
                m @ ("emacs-meta" | "emacs-ctlx" | "vi" | "vi-move" | "vi-command" | "vi-insert"),
            ) => {
                say(
                    io,
                    format_args!("the {m} keymap is not supported (only emacs)"),
                );
                return 1;
            }
            Some(m) => {
                say(io, format_args!("`{m}': invalid keymap name"));
                return 1;
            }
        }
        let setting = Setting {
            terminal: self
                .scalar("TERM")
                .is_some_and(|t| !t.is_empty() && t != "dumb"),
            utf8: ["LC_ALL", "LC_CTYPE", "LANG"]
                .iter()
                .find_map(|v| self.scalar(v).filter(|s| !s.is_empty()))
                .is_some_and(|v| {
                    let v = v.to_ascii_lowercase();
                    v.contains("utf-8") || v.contains("utf8")
                }),
        };
        let map = setting.keymap();
        let funcs = functions(&map);
        let mut out = String::new();
        if flags.contains('l') {
            for (name, _) in &funcs {
                out.push_str(name);
                out.push('\n');
            }
        }
        if flags.contains('p') {
            out.push('\n');
            for l in &map {
                out.push_str(l);
                out.push('\n');
            }
        }
        if flags.contains('P') {
            out.push('\n');
            for (name, keys) in &funcs {
                if keys.is_empty() {
                    out.push_str(&format!("{name} is not bound to any keys\n"));
                } else {
                    let end = if keys.len() > 5 { "" } else { "." };
                    out.push_str(&format!("{name} can be found on {}{end}\n", key_list(keys)));
                }
            }
        }
        let vars = setting.variables();
        if flags.contains('v') {
            for l in &vars {
                out.push_str(l);
                out.push('\n');
            }
        }
        if flags.contains('V') {
            for l in &vars {
                if let Some((name, value)) = l.strip_prefix("set ").and_then(|l| l.split_once(' '))
                {
                    out.push_str(&format!("{name} is set to `{value}'\n"));
                }
            }
        }
        let _ = io.out.write_all(&crate::lossless::encode(&out));
        let mut status = 0;
        if let Some(name) = &query {
            match funcs.iter().find(|(n, _)| n == name) {
                None => {
                    say(io, format_args!("`{name}': unknown function name"));
                    status = 1;
                }
                Some((_, keys)) if keys.is_empty() => {
                    let _ = writeln!(io.out, "{name} is not bound to any keys.");
                    status = 1;
                }
                Some((_, keys)) => {
                    let end = if keys.len() > 5 { "" } else { "." };
                    let _ = writeln!(io.out, "{name} can be invoked via {}{end}", key_list(keys));
                }
            }
        }
        if changes {
            say(
                io,
                format_args!(
                    "changing key bindings is not supported: a script has no line editing"
                ),
            );
            return 1;
        }
        for spec in &args[i..] {
            // readline reads a binding as KEYSEQ: FUNCTION; text without the
            // colon is its error (and bash's status stays 0).
            if !spec.contains(':') {
                let _ = writeln!(io.err, "readline: {spec}: no key sequence terminator");
            } else {
                say(
                    io,
                    format_args!(
                        "changing key bindings is not supported: a script has no line editing"
                    ),
                );
                status = 1;
            }
        }
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_is_listed_once_in_order() {
        let s = Setting {
            terminal: false,
            utf8: false,
        };
        let funcs = functions(&s.keymap());
        let names: Vec<&str> = funcs.iter().map(|(n, _)| n.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
        let abort = &funcs[0];
        assert_eq!(abort.0, "abort");
        assert_eq!(abort.1, ["\"\\C-g\"", "\"\\C-x\\C-g\"", "\"\\M-\\C-g\""]);
    }

    #[test]
    fn a_terminal_binds_the_page_keys_and_utf8_writes_escape() {
        let s = Setting {
            terminal: true,
            utf8: true,
        };
        let map = s.keymap();
        assert!(
            map.iter()
                .any(|l| l == "\"\\e[5~\": history-search-backward")
        );
        assert!(!map.iter().any(|l| l.contains("\\M-")));
        assert!(s.variables().iter().any(|l| l == "set convert-meta off"));
    }
}
