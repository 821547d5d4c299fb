//! `test EXPR` and `[ EXPR ]`, as bash's builtin evaluates them (POSIX's
//! rules by argument count, then `!`, `-a`, `-o` and parentheses), and the
//! file and string tests `[[ ]]` shares.
//!
//! The filesystem is read-only, so `-w` is false for every path; `-x` is
//! true for directories only (documents are not programs); `-L`/`-h` are
//! false (the document filesystem resolves links for its readers).

use crate::exec::Cx;
use crate::fs::{Fs, FsError};

/// A unary test of a path or string; `None` when `op` is not one.
pub(crate) fn unary(fs: &mut dyn Fs, op: &str, arg: &str) -> Option<bool> {
    let meta = |fs: &mut dyn Fs| -> Result<crate::fs::Meta, FsError> {
        if arg.is_empty() {
            return Err(FsError::NotFound(String::new()));
        }
        fs.metadata(arg)
    };
    Some(match op {
        "-z" => arg.is_empty(),
        "-n" => !arg.is_empty(),
        "-e" | "-a" | "-r" => meta(fs).is_ok(),
        "-f" => meta(fs).is_ok_and(|m| !m.is_dir()),
        "-d" => meta(fs).is_ok_and(|m| m.is_dir()),
        "-s" => meta(fs).is_ok_and(|m| m.is_dir() || m.len > 0),
        // As root: a directory, or anything with an execute bit.
        "-x" => match meta(fs) {
            Ok(m) if m.is_dir() => true,
            Ok(_) => fs.mode(arg).is_ok_and(|b| b & 0o111 != 0),
            Err(_) => false,
        },
        "-u" => meta(fs).is_ok() && fs.mode(arg).is_ok_and(|b| b & 0o4000 != 0),
        "-g" => meta(fs).is_ok() && fs.mode(arg).is_ok_and(|b| b & 0o2000 != 0),
        "-k" => meta(fs).is_ok() && fs.mode(arg).is_ok_and(|b| b & 0o1000 != 0),
        // Nothing can be written, whatever the bits say.
        "-w" | "-L" | "-h" | "-b" | "-c" | "-p" | "-S" | "-t" | "-N" => false,
        "-O" | "-G" => meta(fs).is_ok(),
        _ => return None,
    })
}

fn integer(s: &str) -> Result<i64, String> {
    let t = s.trim();
    t.parse::<i64>()
        .map_err(|_| format!("{s}: integer expression expected"))
}

/// A binary test; `Err` for a malformed operand.
pub(crate) fn binary(fs: &mut dyn Fs, op: &str, a: &str, b: &str) -> Result<bool, String> {
    Ok(match op {
        "=" | "==" => a == b,
        "!=" => a != b,
        "<" => a < b,
        ">" => a > b,
        "-eq" => integer(a)? == integer(b)?,
        "-ne" => integer(a)? != integer(b)?,
        "-lt" => integer(a)? < integer(b)?,
        "-le" => integer(a)? <= integer(b)?,
        "-gt" => integer(a)? > integer(b)?,
        "-ge" => integer(a)? >= integer(b)?,
        "-nt" | "-ot" => {
            let ta = fs.metadata(a).ok().and_then(|m| m.modified);
            let tb = fs.metadata(b).ok().and_then(|m| m.modified);
            match (ta, tb, op) {
                (Some(x), Some(y), "-nt") => x > y,
                (Some(x), Some(y), _) => x < y,
                (Some(_), None, "-nt") | (None, Some(_), "-ot") => true,
                _ => false,
            }
        }
        "-ef" => match (fs.metadata(a), fs.metadata(b)) {
            (Ok(x), Ok(y)) => x.path == y.path,
            _ => false,
        },
        _ => return Err(format!("{op}: binary operator expected")),
    })
}

fn is_binary(op: &str) -> bool {
    matches!(
        op,
        "=" | "=="
            | "!="
            | "<"
            | ">"
            | "-eq"
            | "-ne"
            | "-lt"
            | "-le"
            | "-gt"
            | "-ge"
            | "-nt"
            | "-ot"
            | "-ef"
    )
}

fn is_unary(op: &str) -> bool {
    op.len() == 2 && op.starts_with('-') && "abcdefghknoprstuvwxzGLNOS".contains(&op[1..])
}

/// What only the shell can answer: `-v NAME` (is the variable, element or
/// positional parameter set) and `-o OPTION` (is the option on). `None`
/// outside the shell (`find -exec test`, `env test`), where, as with
/// coreutils' `test`, they are not operators.
pub(crate) type ShellQuery<'a> = &'a dyn Fn(&str, &str) -> Option<bool>;

/// A unary test, the shell's own first.
fn unary_in(fs: &mut dyn Fs, shell: ShellQuery<'_>, op: &str, arg: &str) -> Result<bool, String> {
    let answer = match op {
        "-v" | "-o" => shell(op, arg),
        _ => unary(fs, op, arg),
    };
    answer.ok_or_else(|| format!("{op}: unary operator expected"))
}

/// The general expression parser, for more than four arguments.
struct Expr<'a, 'f> {
    args: &'a [String],
    pos: usize,
    fs: &'f mut dyn Fs,
    shell: ShellQuery<'f>,
}

impl Expr<'_, '_> {
    fn peek(&self) -> Option<&str> {
        self.args.get(self.pos).map(String::as_str)
    }

    fn or(&mut self) -> Result<bool, String> {
        let mut v = self.and()?;
        while self.peek() == Some("-o") {
            self.pos += 1;
            let r = self.and()?;
            v = v || r;
        }
        Ok(v)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut v = self.not()?;
        while self.peek() == Some("-a") {
            self.pos += 1;
            let r = self.not()?;
            v = v && r;
        }
        Ok(v)
    }

    fn not(&mut self) -> Result<bool, String> {
        if self.peek() == Some("!") {
            self.pos += 1;
            return Ok(!self.not()?);
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<bool, String> {
        let Some(a) = self.peek().map(str::to_owned) else {
            return Err("argument expected".to_owned());
        };
        if a == "(" {
            self.pos += 1;
            let v = self.or()?;
            if self.peek() != Some(")") {
                return Err("`)' expected".to_owned());
            }
            self.pos += 1;
            return Ok(v);
        }
        if let Some(op) = self.args.get(self.pos + 1).map(String::as_str)
            && is_binary(op)
            && self.args.get(self.pos + 2).is_some()
        {
            let b = self.args[self.pos + 2].clone();
            self.pos += 3;
            return binary(self.fs, op, &a, &b);
        }
        if is_unary(&a)
            && let Some(arg) = self.args.get(self.pos + 1).cloned()
        {
            self.pos += 2;
            return unary_in(self.fs, self.shell, &a, &arg);
        }
        self.pos += 1;
        Ok(!a.is_empty())
    }
}

/// Evaluates a test's arguments: `Ok(true)` is status 0.
pub(crate) fn evaluate(
    fs: &mut dyn Fs,
    shell: ShellQuery<'_>,
    args: &[String],
) -> Result<bool, String> {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        [] => Ok(false),
        [x] => Ok(!x.is_empty()),
        ["!", x] => Ok(x.is_empty()),
        [op, x] if is_unary(op) => unary_in(fs, shell, op, x),
        [op, _] => Err(format!("{op}: unary operator expected")),
        [x, op, y] if is_binary(op) => binary(fs, op, x, y),
        [x, "-a", y] => Ok(!x.is_empty() && !y.is_empty()),
        [x, "-o", y] => Ok(!x.is_empty() || !y.is_empty()),
        ["!", ..] if a.len() == 3 => evaluate(fs, shell, &args[1..]).map(|v| !v),
        ["(", x, ")"] => Ok(!x.is_empty()),
        [_, op, _] => Err(format!("{op}: binary operator expected")),
        ["!", ..] if a.len() == 4 => evaluate(fs, shell, &args[1..]).map(|v| !v),
        ["(", _, _, ")"] => evaluate(fs, shell, &args[1..3]),
        _ => {
            let mut e = Expr {
                args,
                pos: 0,
                fs,
                shell,
            };
            let v = e.or()?;
            if e.pos < args.len() {
                return Err("too many arguments".to_owned());
            }
            Ok(v)
        }
    }
}

fn finish(cx: &mut Cx<'_>, name: &str, r: Result<bool, String>) -> u8 {
    match r {
        Ok(v) => u8::from(!v),
        Err(msg) => {
            cx.err(format_args!("vfs-sh: {name}: {msg}"));
            2
        }
    }
}

/// `test EXPR`
pub(crate) fn test(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, "test", args, &|_, _| None)
}

/// `[ EXPR ]`
pub(crate) fn bracket(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, "[", args, &|_, _| None)
}

/// `test EXPR` or `[ EXPR ]` (`name`), the shell answering what `shell`
/// can.
pub(crate) fn run(cx: &mut Cx<'_>, name: &str, args: &[String], shell: ShellQuery<'_>) -> u8 {
    let args = if name == "[" {
        match args.split_last() {
            Some((last, rest)) if last == "]" => rest,
            _ => {
                cx.err("vfs-sh: [: missing `]'");
                return 2;
            }
        }
    } else {
        args
    };
    let r = evaluate(cx.fs, shell, args);
    finish(cx, name, r)
}
