//! `xargs [-n N] [-I STR] [-0] [-d DELIM] [-r] [-t] [COMMAND [ARG]...]`:
//! builds command lines from standard input and runs them as vfs-sh
//! commands (never host processes). Items are split like GNU xargs: on
//! blanks and newlines, with quotes and backslashes, or on NUL (`-0`), a
//! delimiter (`-d`) or lines (`-I`).

use super::{dispatch, flag, options, value};
use crate::exec::Cx;

/// Options of xargs that take a value (needed to find where the command
/// starts: xargs options stop at the first operand).
const WITH_VALUE: &[&str] = &["-n", "-I", "-d", "-L", "-P", "-s", "-E", "-a"];

/// GNU's options whose value is optional and attached: `-i[STR]` is
/// `-I STR` (`{}` by default), `-l[N]` is `-L N` (1), `-e[EOF]` is `-E`;
/// also at the end of a cluster of plain flags (`-ti`, `-0i`, `-rl2`).
fn optional_values(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        let Some(body) = a.strip_prefix('-').filter(|b| !b.starts_with('-')) else {
            out.push(a.clone());
            continue;
        };
        // The plain flags before an optional-value one.
        let flags: String = body.chars().take_while(|c| "0rtpx".contains(*c)).collect();
        let rest = &body[flags.len()..];
        let rewritten = if let Some(v) = rest.strip_prefix('i') {
            format!("-I{}", if v.is_empty() { "{}" } else { v })
        } else if let Some(v) = rest.strip_prefix('l') {
            format!("-L{}", if v.is_empty() { "1" } else { v })
        } else if let Some(v) = rest.strip_prefix('e') {
            // `-e` alone: no end-of-file string.
            if v.is_empty() {
                if !flags.is_empty() {
                    out.push(format!("-{flags}"));
                }
                continue;
            }
            format!("-E{v}")
        } else {
            out.push(a.clone());
            continue;
        };
        if !flags.is_empty() {
            out.push(format!("-{flags}"));
        }
        out.push(rewritten);
    }
    out
}

/// `-L`'s input lines, each split into items; a line ending in a blank
/// goes on to the next, blank lines do not count.
fn split_lines(input: &[u8]) -> Result<Vec<Vec<String>>, String> {
    let text = crate::lossless::decode(input);
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in text.split_inclusive('\n') {
        pending.push_str(line);
        let body = line.strip_suffix('\n').unwrap_or(line);
        if body.ends_with([' ', '\t']) && line.ends_with('\n') {
            continue;
        }
        let items = split_quoted(pending.as_bytes(), false)?;
        if !items.is_empty() {
            lines.push(items);
        }
        pending.clear();
    }
    if !pending.is_empty() {
        let items = split_quoted(pending.as_bytes(), false)?;
        if !items.is_empty() {
            lines.push(items);
        }
    }
    Ok(lines)
}

fn command_start(args: &[String]) -> usize {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            return i;
        }
        if !a.starts_with('-') || a == "-" {
            return i;
        }
        i += 1;
        if WITH_VALUE.contains(&a.as_str())
            || (a.starts_with("--") && !a.contains('=') && long_takes_value(a))
        {
            i += 1;
        }
    }
    i.min(args.len())
}

fn long_takes_value(a: &str) -> bool {
    [
        "--max-args",
        "--delimiter",
        "--replace",
        "--max-lines",
        "--max-procs",
        "--max-chars",
        "--arg-file",
    ]
    .iter()
    .any(|l| l.starts_with(a) && a.len() > 3)
}

/// Splits input into items the default way; `lines` keeps blanks inside a
/// line (for `-I`).
fn split_quoted(input: &[u8], lines: bool) -> Result<Vec<String>, String> {
    let text = crate::lossless::decode(input);
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                if have {
                    items.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
            ' ' | '\t' if !lines || !have => {
                if !lines && have {
                    items.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
            '\'' | '"' => {
                have = true;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\n') | None => {
                            let which = if c == '\'' { "single" } else { "double" };
                            return Err(format!(
                                "xargs: unmatched {which} quote; by default quotes are special to xargs unless you use the -0 option"
                            ));
                        }
                        Some(q) => cur.push(q),
                    }
                }
            }
            '\\' => {
                have = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c => {
                have = true;
                cur.push(c);
            }
        }
    }
    if have {
        items.push(cur);
    }
    if lines {
        for item in &mut items {
            let trimmed = item.trim_end_matches([' ', '\t']).len();
            item.truncate(trimmed);
        }
    }
    Ok(items)
}

/// Splits on a delimiter byte, without quote handling.
fn split_on(input: &[u8], delim: u8) -> Vec<String> {
    let body = input.strip_suffix(&[delim]).unwrap_or(input);
    if body.is_empty() && input.len() <= 1 {
        return Vec::new();
    }
    body.split(|&b| b == delim)
        .map(|s| crate::lossless::decode(s).into_owned())
        .collect()
}

/// The delimiter of `-d`, with C escapes.
fn delimiter(s: &str) -> Option<u8> {
    match s.as_bytes() {
        [b] => Some(*b),
        b"\\n" => Some(b'\n'),
        b"\\t" => Some(b'\t'),
        b"\\0" => Some(0),
        b"\\\\" => Some(b'\\'),
        _ => None,
    }
}

/// `xargs`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('n', "max-args", "n"),
        value('I', "replace", "I"),
        flag('0', "null", "0"),
        value('d', "delimiter", "d"),
        flag('r', "no-run-if-empty", "r"),
        flag('t', "verbose", "t"),
        value('L', "max-lines", "L"),
        value('P', "max-procs", "P"),
        flag('x', "exit", "x"),
        value('a', "arg-file", "a"),
        value('s', "max-chars", "s"),
        value('E', "", "E"),
    ];
    let split = command_start(args);
    let head = optional_values(&args[..split]);
    let p = match options(cx, "xargs", &head, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut command: Vec<String> = args[split..].to_vec();
    if command.first().is_some_and(|c| c == "--") {
        command.remove(0);
    }
    if command.is_empty() {
        command.push("echo".to_owned());
    }
    let by_lines = p.last_of(&["n", "L"]) == Some("L");
    let per_run = match p.value(if by_lines { "L" } else { "n" }) {
        None => None,
        Some(v) => match super::count(v) {
            Some(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            Some(_) => {
                let opt = if by_lines { "L" } else { "n" };
                cx.err(format_args!(
                    "xargs: value {v} for -{opt} option should be >= 1"
                ));
                cx.err("Try 'xargs --help' for more information.");
                return 1;
            }
            None => {
                cx.err(format_args!("xargs: invalid number \"{v}\" for -n option"));
                cx.err("Try 'xargs --help' for more information.");
                return 1;
            }
        },
    };
    let max_chars = match p.value("s") {
        None => None,
        Some(v) => match super::count(v) {
            Some(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            Some(_) => {
                cx.err(format_args!(
                    "xargs: value {v} for -s option should be >= 1"
                ));
                return 1;
            }
            None => {
                cx.err(format_args!("xargs: invalid number \"{v}\" for -s option"));
                cx.err("Try 'xargs --help' for more information.");
                return 1;
            }
        },
    };
    let replace = p.value("I").map(str::to_owned);
    let input = match p.value("a") {
        Some(f) => match cx.fs.read(f) {
            Ok(d) => d,
            Err(e) => {
                cx.err(format_args!(
                    "xargs: Cannot open input file {}: {}",
                    super::quote::quote(f, true),
                    e.strerror()
                ));
                return 1;
            }
        },
        None => cx.stdin(),
    };
    let items = if p.has("0") {
        split_on(&input, 0)
    } else if let Some(d) = p.value("d") {
        match delimiter(d) {
            Some(b) => split_on(&input, b),
            None => {
                cx.err(format_args!("xargs: invalid input delimiter specification {d}: the delimiter must be either a single character or an escape sequence starting with \\."));
                return 1;
            }
        }
    } else {
        match split_quoted(&input, replace.is_some()) {
            Ok(mut i) => {
                // `-E EOF`: input ends at an item that is the EOF string.
                if let Some(eof) = p.value("E").filter(|e| !e.is_empty())
                    && let Some(at) = i.iter().position(|item| item == eof)
                {
                    i.truncate(at);
                }
                i
            }
            Err(e) => {
                cx.err(e);
                return 1;
            }
        }
    };
    let mut runs: Vec<Vec<String>> = Vec::new();
    // An item that does not fit in `-s` ends the input there, after the
    // command lines before it have run.
    let mut too_long = false;
    if let Some(r) = &replace {
        // GNU xargs replaces in the arguments, never in the command's name.
        for item in &items {
            runs.push(
                command
                    .iter()
                    .enumerate()
                    .map(|(k, a)| {
                        if k == 0 {
                            a.clone()
                        } else {
                            a.replace(r.as_str(), item)
                        }
                    })
                    .collect(),
            );
        }
    } else if items.is_empty() {
        if !p.has("r") {
            runs.push(command.clone());
        }
    } else if by_lines && !p.has("0") && !p.has("d") {
        let lines = match split_lines(&input) {
            Ok(l) => l,
            Err(e) => {
                cx.err(e);
                return 1;
            }
        };
        for chunk in lines.chunks(per_run.unwrap_or(1)) {
            let mut argv = command.clone();
            argv.extend(chunk.iter().flatten().cloned());
            runs.push(argv);
        }
    } else if let Some(max) = max_chars {
        // `-s`: each command line, its arguments counted with their
        // terminating NULs as GNU counts them, fits in `max` bytes.
        let size = |a: &String| a.len() + 1;
        let base: usize = command.iter().map(size).sum();
        if base > max {
            cx.err("xargs: cannot fit single argument within argument list size limit");
            return 1;
        }
        let mut argv = command.clone();
        let mut len = base;
        for item in &items {
            let full = per_run.is_some_and(|n| argv.len() - command.len() >= n);
            if argv.len() > command.len() && (full || len + size(item) > max) {
                runs.push(std::mem::replace(&mut argv, command.clone()));
                len = base;
            }
            if len + size(item) > max {
                too_long = true;
                break;
            }
            len += size(item);
            argv.push(item.clone());
        }
        if argv.len() > command.len() {
            runs.push(argv);
        }
    } else {
        for chunk in items.chunks(per_run.unwrap_or(items.len())) {
            let mut argv = command.clone();
            argv.extend(chunk.iter().cloned());
            runs.push(argv);
        }
    }
    if cx.depth >= MAX_DEPTH {
        cx.err(format_args!(
            "xargs: more than {MAX_DEPTH} xargs inside each other"
        ));
        return 1;
    }
    // An argument is a C string: a NUL in the input ends it there (GNU
    // warns unless the input was split on a delimiter).
    if !p.has("0") && input.contains(&0) {
        if !p.has("d") {
            cx.err(
                "xargs: WARNING: a NUL character occurred in the input.  It cannot be passed \
                 through in the argument list.  Did you mean to use the --null option?",
            );
        }
        for argv in &mut runs {
            for a in argv.iter_mut() {
                if let Some(nul) = a.find('\0') {
                    a.truncate(nul);
                }
            }
        }
    }
    let mut status = 0;
    for argv in runs {
        let name = argv.first().cloned().unwrap_or_default();
        // A path is a script in the documents, which `dispatch` runs; a
        // name must be a program on `$PATH` (`cd` and `export` are bash's
        // builtins only).
        if !name.contains('/') && super::paths_of(&name).is_empty() {
            cx.err(format_args!("xargs: {name}: No such file or directory"));
            return 127;
        }
        if p.has("t") {
            cx.err(argv.join(" "));
        }
        let code = dispatch(&mut cx.nested(Vec::new()), &argv);
        if code == 255 {
            cx.err(format_args!(
                "xargs: {name}: exited with status 255; aborting"
            ));
            return 124;
        }
        if code != 0 {
            status = 123;
        }
    }
    if too_long {
        cx.err("xargs: argument line too long");
        return 1;
    }
    status
}

/// `xargs` inside `xargs` inside ... at most this deep: each level is a
/// frame of the shell's own stack.
const MAX_DEPTH: u32 = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitting() {
        let s = |t: &str| split_quoted(t.as_bytes(), false).expect("splits");
        assert_eq!(s("a b\n c\n"), ["a", "b", "c"]);
        assert_eq!(
            s("'my file.md' \"x y\" a\\ b"),
            ["my file.md", "x y", "a b"]
        );
        assert_eq!(s(""), Vec::<String>::new());
        assert!(split_quoted(b"it's", false).is_err());
        let l = |t: &str| split_quoted(t.as_bytes(), true).expect("splits");
        assert_eq!(l("  my file.md  \n\nb\n"), ["my file.md", "b"]);
        assert_eq!(split_on(b"a\0b\0", 0), ["a", "b"]);
        assert_eq!(split_on(b"", 0), Vec::<String>::new());
        let a: Vec<String> = ["-n", "1", "grep", "-l", "x"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(command_start(&a), 2);
    }
}
