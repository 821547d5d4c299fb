//! `sh` as Debian has it: dash. Agents write `find -exec sh -c '...'`,
//! `xargs sh -c`, run `#!/bin/sh` scripts, and awk's `system()` and sed's
//! `e` run `/bin/sh`; on Debian and Ubuntu that shell is dash, not bash,
//! and what it prints differs where a script leans on bash: `echo -e` is
//! printed, `echo` decodes backslashes, `[[`, `source` and `declare` are
//! not found, `[ a == b ]` is an error, `${x:1}` ends the script.
//!
//! The parser reads dash's language (`syntax::parse_as`); this file holds
//! what the builtins do differently. Errors are worded as dash's
//! (`sh: 1: ...`, from [`crate::exec::Whence`]).

use super::{Flow, Io, R, Shell};

/// bash's builtins that dash does not have: in `sh` they are commands
/// that are not found (status 127).
const BASH_ONLY: &[&str] = &[
    "source",
    "let",
    "declare",
    "typeset",
    "shopt",
    "mapfile",
    "readarray",
    "pushd",
    "popd",
    "dirs",
    "help",
    "caller",
    "disown",
    "enable",
    "history",
    "builtin",
    "[[",
    "]]",
    "select",
    "function",
];

/// dash's `echo` (`bltin/printf.c`, `echocmd`): `-n` only as the first
/// argument, any other option printed; backslash escapes always decoded:
/// `\a \b \e \f \n \r \t \v \\`, `\0NNN` and `\NNN` octal (up to three
/// digits, the value cut to a byte), `\c` ends all output; any other
/// backslash is printed as it is.
pub(crate) fn echo(args: &[String]) -> Vec<u8> {
    let (newline, args) = match args.split_first() {
        Some((first, rest)) if first == "-n" => (false, rest),
        _ => (true, args),
    };
    let mut out = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if k > 0 {
            out.push(b' ');
        }
        let b = a.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            i += 1;
            if c != b'\\' {
                out.push(c);
                continue;
            }
            let Some(&e) = b.get(i) else {
                out.push(b'\\');
                break;
            };
            let simple = match e {
                b'a' => Some(7),
                b'b' => Some(8),
                b'e' => Some(27),
                b'f' => Some(12),
                b'n' => Some(b'\n'),
                b'r' => Some(b'\r'),
                b't' => Some(b'\t'),
                b'v' => Some(11),
                b'\\' => Some(b'\\'),
                _ => None,
            };
            if let Some(v) = simple {
                out.push(v);
                i += 1;
                continue;
            }
            if e == b'c' {
                return out;
            }
            // `\0` is skipped before an octal digit: `\0101` is `\101`.
            if e == b'0' && b.get(i + 1).is_some_and(|d| (b'0'..=b'7').contains(d)) {
                i += 1;
            }
            if (b'0'..=b'7').contains(&b[i]) {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 3 && b.get(i).is_some_and(|d| (b'0'..=b'7').contains(d)) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
                continue;
            }
            out.push(b'\\');
        }
    }
    if newline {
        out.push(b'\n');
    }
    out
}

/// dash's `test` takes no `==` (nor bash's `-v`): the operand before it is
/// an "unexpected operator", status 2. `None` when the expression is one
/// dash reads as bash does.
fn test_error(args: &[String]) -> Option<String> {
    let args = match args.split_last() {
        Some((last, rest)) if last == "]" => rest,
        _ => args,
    };
    // Each term between `-a` and `-o` is looked at alone.
    for term in args.split(|a| a == "-a" || a == "-o") {
        let term: Vec<&String> = term.iter().skip_while(|a| *a == "!").collect();
        match term.as_slice() {
            [lhs, op, _] if *op == "==" => return Some((*lhs).clone()),
            [op, _] if *op == "-v" => return Some((*op).clone()),
            _ => {}
        }
    }
    None
}

/// Why dash's arithmetic refuses `text`, if it uses an operator dash does
/// not have (`**`, `++`, `--`, `,`, `BASE#N`), in dash's words.
pub(super) fn arith_unsupported(text: &str) -> Option<&'static str> {
    if text.contains("**") || text.contains("++") || text.contains("--") {
        Some("expecting primary")
    } else if text.contains(',') || text.contains('#') {
        Some("expecting EOF")
    } else {
        None
    }
}

impl Shell<'_> {
    /// Runs `name` as dash would where dash differs from bash; `None` when
    /// the shell's usual builtin or command does what dash does. Kept out
    /// of line: inlined, it would grow the frame of every command the
    /// shell runs, and nested function calls must fit the guest's stack.
    #[inline(never)]
    pub(super) fn posix_builtin(
        &mut self,
        name: &str,
        args: &[String],
        io: &mut Io<'_>,
    ) -> Option<R<u8>> {
        if BASH_ONLY.contains(&name) {
            self.say(io, format_args!("{name}: not found"));
            return Some(Ok(127));
        }
        match name {
            "echo" => {
                let _ = io.out.write_all(&echo(args));
                Some(Ok(0))
            }
            "test" | "[" => {
                let op = test_error(args)?;
                self.say(io, format_args!("{name}: {op}: unexpected operator"));
                Some(Ok(2))
            }
            "local" if self.calls == 0 => {
                self.say(io, "local: not in a function");
                Some(Err(Flow::Exit(2)))
            }
            "set" => {
                let k = args.iter().position(|a| a == "-o" || a == "+o")?;
                match args.get(k + 1).map(String::as_str) {
                    Some("pipefail") => {
                        self.say(io, "set: Illegal option -o pipefail");
                        Some(Err(Flow::Exit(2)))
                    }
                    _ => None,
                }
            }
            "read" | "printf" => {
                // dash's `read` takes `-p` and `-r`, its `printf` no option.
                let allowed = if name == "read" { "pr" } else { "" };
                for a in args {
                    if a == "--" || !a.starts_with('-') || a.len() < 2 {
                        break;
                    }
                    if let Some(c) = a[1..].chars().find(|c| !allowed.contains(*c)) {
                        self.say(io, format_args!("{name}: Illegal option -{c}"));
                        return Some(Ok(2));
                    }
                    if a.ends_with('p') {
                        // `-p PROMPT`: the next word is the prompt.
                        break;
                    }
                }
                None
            }
            "cd" => {
                let target = match args {
                    [t] if t != "-" && !t.is_empty() => t,
                    _ => return None,
                };
                match self.fs.metadata(target) {
                    Ok(m) if m.is_dir() => None,
                    _ => {
                        self.say(io, format_args!("cd: can't cd to {target}"));
                        Some(Ok(2))
                    }
                }
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo_of(args: &[&str]) -> Vec<u8> {
        echo(&args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn echo_decodes_backslashes_and_takes_only_a_first_dash_n() {
        assert_eq!(echo_of(&["-e", "a\\tb"]), b"-e a\tb\n");
        assert_eq!(echo_of(&["-n", "-n", "x"]), b"-n x");
        assert_eq!(echo_of(&["X\\0101Y", "\\101", "\\08"]), b"XAY A \x008\n");
        assert_eq!(echo_of(&["\\777\\x41\\q"]), b"\xff\\x41\\q\n");
        assert_eq!(echo_of(&["a\\cb", "c"]), b"a");
        assert_eq!(echo_of(&["end\\"]), b"end\\\n");
    }

    #[test]
    fn test_refuses_double_equals_where_it_is_an_operator() {
        let v = |a: &[&str]| test_error(&a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(v(&["a", "==", "a", "]"]), Some("a".to_owned()));
        assert_eq!(
            v(&["a", "=", "a", "-a", "b", "==", "b"]),
            Some("b".to_owned())
        );
        assert_eq!(v(&["x", "=", "=="]), None);
        assert_eq!(v(&["-f", "x"]), None);
    }
}
