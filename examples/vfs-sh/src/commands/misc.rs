//! Small commands: `pwd`, `cd`, `true`, `false`, `exit`, `basename`,
//! `dirname`.

use super::args::Order;
use super::{flag, options, options_ordered, value};
use crate::exec::Cx;
use crate::fs::FsError;

/// `pwd`: the working directory.
pub(crate) fn pwd(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    // bash's builtin takes `-L` and `-P` (the same here: no links) and
    // ignores operands.
    for a in args {
        if a == "--" || a == "-" || !a.starts_with('-') {
            break;
        }
        if let Some(c) = a.chars().skip(1).find(|c| !matches!(c, 'L' | 'P')) {
            cx.err(format_args!("vfs-sh: pwd: -{c}: invalid option"));
            cx.err("pwd: usage: pwd [-LP]");
            return 2;
        }
    }
    let cwd = cx.fs.cwd();
    cx.outs(&format!("{cwd}\n"));
    0
}

/// `cd DIR` run as a command (by `xargs` or `find -exec`): like a child
/// process's `cd`, it only checks the directory. The shell's own `cd` is a
/// builtin.
pub(crate) fn cd(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let target = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map_or("/", String::as_str);
    match cx.fs.metadata(target) {
        Ok(m) if m.is_dir() => 0,
        Ok(_) => {
            cx.err(format_args!("cd: {target}: Not a directory"));
            1
        }
        Err(e) => {
            cx.err(format_args!("cd: {target}: {}", e.strerror()));
            1
        }
    }
}

/// `true`.
pub(crate) fn r#true(_cx: &mut Cx<'_>, _args: &[String]) -> u8 {
    0
}

/// `false`.
pub(crate) fn r#false(_cx: &mut Cx<'_>, _args: &[String]) -> u8 {
    1
}

/// GNU `basename` of one name, with an optional suffix to remove.
pub(crate) fn base_name(name: &str, suffix: &str) -> String {
    if name.is_empty() {
        return String::new();
    }
    let trimmed = name.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".to_owned();
    }
    let base = trimmed.rsplit('/').next().unwrap_or(trimmed);
    match base.strip_suffix(suffix) {
        Some(stripped) if !suffix.is_empty() && !stripped.is_empty() => stripped.to_owned(),
        _ => base.to_owned(),
    }
}

/// GNU `dirname` of one name.
pub(crate) fn dir_name(name: &str) -> String {
    let trimmed = name.trim_end_matches('/');
    if trimmed.is_empty() {
        return if name.starts_with('/') { "/" } else { "." }.to_owned();
    }
    match trimmed.rfind('/') {
        None => ".".to_owned(),
        Some(i) => {
            let dir = trimmed[..i].trim_end_matches('/');
            if dir.is_empty() { "/" } else { dir }.to_owned()
        }
    }
}

/// `basename NAME [SUFFIX]`, `basename -a [-s SUFFIX] NAME...`.
pub(crate) fn basename(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('a', "multiple", "a"),
        value('s', "suffix", "s"),
        flag('z', "zero", "z"),
    ];
    let p = match options_ordered(cx, "basename", args, SPEC, 1, Order::InOrder) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let ops = &p.operands;
    if ops.is_empty() {
        cx.err("basename: missing operand");
        cx.err("Try 'basename --help' for more information.");
        return 1;
    }
    let end = if p.has("z") { "\0" } else { "\n" };
    let multiple = p.has("a") || p.has("s");
    let (names, suffix): (&[String], &str) = if multiple {
        (ops, p.value("s").unwrap_or(""))
    } else {
        match ops.as_slice() {
            [n] => (std::slice::from_ref(n), ""),
            [n, s] => (std::slice::from_ref(n), s.as_str()),
            [_, _, extra, ..] => {
                cx.err(format_args!("basename: extra operand '{extra}'"));
                cx.err("Try 'basename --help' for more information.");
                return 1;
            }
            [] => return 1,
        }
    };
    let mut s = String::new();
    for n in names {
        s.push_str(&base_name(n, suffix));
        s.push_str(end);
    }
    cx.outs(&s);
    0
}

/// `dirname NAME...`.
pub(crate) fn dirname(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[flag('z', "zero", "z")];
    let p = match options(cx, "dirname", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if p.operands.is_empty() {
        cx.err("dirname: missing operand");
        cx.err("Try 'dirname --help' for more information.");
        return 1;
    }
    let end = if p.has("z") { "\0" } else { "\n" };
    let mut s = String::new();
    for n in &p.operands {
        s.push_str(&dir_name(n));
        s.push_str(end);
    }
    cx.outs(&s);
    0
}

/// The last operand and the ones before it.
fn targets_split<'a>(operands: &[&'a String]) -> (&'a str, Vec<&'a str>) {
    match operands.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            (last.as_str(), rest.iter().map(|s| s.as_str()).collect())
        }
        Some((last, _)) => (last.as_str(), vec![last.as_str()]),
        None => ("", Vec::new()),
    }
}

/// The commands that would change documents: each operand gets GNU's
/// message for a read-only filesystem, and the status is 1.
/// `rm`: nothing can be removed, but GNU's answers hold: a name that is
/// not there is an error only without `-f`; a directory needs `-r` (or
/// `-d` when empty); with `-r` each file and empty directory at the leaves
/// is reported and their ancestors are not tried; `/`, `.` and `..` are
/// refused as GNU refuses them.
pub(crate) fn rm(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let (mut force, mut recursive, mut empty_dirs, mut interactive) = (false, false, false, false);
    let mut operands = Vec::new();
    let mut options_done = false;
    for a in args {
        if options_done || a == "-" || !a.starts_with('-') {
            operands.push(a.clone());
            continue;
        }
        match a.as_str() {
            "--" => options_done = true,
            "--force" => force = true,
            "--recursive" => recursive = true,
            "--dir" => empty_dirs = true,
            "--verbose" | "--one-file-system" | "--preserve-root" => {}
            s if s.starts_with("--interactive") => interactive = s != "--interactive=never",
            s if s.starts_with("--") => {
                cx.err(format_args!("rm: unrecognized option '{s}'"));
                cx.err("Try 'rm --help' for more information.");
                return 1;
            }
            s => {
                for c in s[1..].chars() {
                    match c {
                        'f' => (force, interactive) = (true, false),
                        'r' | 'R' => recursive = true,
                        'd' => empty_dirs = true,
                        'i' | 'I' => interactive = true,
                        'v' => {}
                        other => {
                            cx.err(format_args!("rm: invalid option -- '{other}'"));
                            cx.err("Try 'rm --help' for more information.");
                            return 1;
                        }
                    }
                }
            }
        }
    }
    if operands.is_empty() {
        if force {
            return 0;
        }
        cx.err("rm: missing operand");
        cx.err("Try 'rm --help' for more information.");
        return 1;
    }
    let quoted = |op: &str| super::quote::quote(op, true);
    let mut status = 0;
    for op in &operands {
        let base = op.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        if recursive && matches!(base, "." | "..") {
            cx.err(format_args!(
                "rm: refusing to remove '.' or '..' directory: skipping {}",
                quoted(op)
            ));
            status = 1;
            continue;
        }
        if recursive && !op.is_empty() && op.bytes().all(|b| b == b'/') {
            cx.err(format_args!(
                "rm: it is dangerous to operate recursively on {}",
                quoted("/")
            ));
            cx.err("rm: use --no-preserve-root to override this failsafe");
            status = 1;
            continue;
        }
        let meta = match cx.fs.metadata(op) {
            Ok(m) => m,
            Err(FsError::NotFound(_)) if force => continue,
            Err(e) => {
                cx.err(format_args!(
                    "rm: cannot remove {}: {}",
                    quoted(op),
                    e.strerror()
                ));
                status = 1;
                continue;
            }
        };
        // Asked with no answer to read: GNU takes it as no.
        if interactive {
            let kind = if meta.is_dir() {
                "directory"
            } else {
                "regular file"
            };
            cx.err(format_args!("rm: remove {kind} {}? ", quoted(op)));
            continue;
        }
        status = 1;
        if !meta.is_dir() {
            cx.err(format_args!(
                "rm: cannot remove {}: Read-only file system",
                quoted(op)
            ));
        } else if recursive {
            rm_leaves(cx, op, &quoted);
        } else if !empty_dirs {
            cx.err(format_args!(
                "rm: cannot remove {}: Is a directory",
                quoted(op)
            ));
        } else if cx.fs.read_dir(op).is_ok_and(|e| e.is_empty()) {
            cx.err(format_args!(
                "rm: cannot remove {}: Read-only file system",
                quoted(op)
            ));
        } else {
            cx.err(format_args!(
                "rm: cannot remove {}: Directory not empty",
                quoted(op)
            ));
        }
    }
    status
}

/// `rm -r DIR`: the files and empty directories under `dir`, each a
/// failure; a directory with anything in it is not tried.
fn rm_leaves(cx: &mut Cx<'_>, dir: &str, quoted: &dyn Fn(&str) -> String) {
    let entries = match cx.fs.read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            cx.err(format_args!(
                "rm: cannot remove {}: {}",
                quoted(dir),
                e.strerror()
            ));
            return;
        }
    };
    if entries.is_empty() {
        cx.err(format_args!(
            "rm: cannot remove {}: Read-only file system",
            quoted(dir)
        ));
        return;
    }
    let parent = dir.trim_end_matches('/');
    for e in entries {
        let path = format!("{parent}/{}", e.name);
        if e.is_dir() {
            rm_leaves(cx, &path, quoted);
        } else {
            cx.err(format_args!(
                "rm: cannot remove {}: Read-only file system",
                quoted(&path)
            ));
        }
    }
}

pub(crate) fn read_only(cx: &mut Cx<'_>, name: &str, args: &[String]) -> u8 {
    // The short options that take the next word as their value: that
    // word is no operand (`truncate -s 0 FILE` changes FILE only).
    let valued: &[&str] = match name {
        "truncate" => &["-s", "-r"],
        "touch" => &["-d", "-t", "-r"],
        "mkdir" | "install" => &["-m", "-o", "-g", "-t", "-S"],
        "cp" | "ln" | "mv" => &["-t", "-S"],
        "split" => &["-l", "-b", "-C", "-n", "-a", "-t"],
        "csplit" => &["-f", "-b", "-n"],
        "chown" | "chgrp" | "chmod" => &["--reference"],
        _ => &[],
    };
    let mut operands: Vec<&String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            operands.extend(it.by_ref());
            break;
        }
        if valued.contains(&a.as_str()) {
            it.next();
        } else if !a.starts_with('-') || a == "-" {
            operands.push(a);
        }
    }
    let what = |op: &str| match name {
        "touch" => format!("cannot touch '{op}'"),
        "mkdir" => format!("cannot create directory '{op}'"),
        "rm" => format!("cannot remove '{op}'"),
        "unlink" => format!("cannot unlink '{op}'"),
        "rmdir" => format!("failed to remove '{op}'"),
        "cp" | "install" => format!("cannot create regular file '{op}'"),
        "ln" if args.iter().any(|a| a.starts_with('-') && a.contains('s')) => {
            format!("failed to create symbolic link '{op}'")
        }
        "ln" => format!("failed to create hard link '{op}'"),
        "chmod" => format!("changing permissions of '{op}'"),
        "chown" | "chgrp" => format!("changing ownership of '{op}'"),
        "truncate" => format!("cannot open '{op}' for writing"),
        // The first file each would write: split's `PREFIXaa` (its second
        // operand, `x` by default), csplit's `xx00`.
        // GNU names just the file.
        "split" => format!("{}aa", operands.get(1).map_or("x", |p| p.as_str())),
        "csplit" => "xx00".to_owned(),
        _ => format!("cannot change '{op}'"),
    };
    if operands.is_empty() {
        cx.err(format_args!("{name}: missing operand"));
        cx.err(format_args!("Try '{name} --help' for more information."));
        return 1;
    }
    // cp, mv, ln and install change their last operand; split and csplit
    // write new files once; the others change each operand.
    let targets: Vec<&String> = match name {
        "split" | "csplit" => operands.iter().take(1).copied().collect(),
        "cp" | "mv" | "ln" | "install" => operands.last().copied().into_iter().collect(),
        "chmod" | "chown" | "chgrp" => operands.iter().skip(1).copied().collect(),
        _ => operands.clone(),
    };
    if name == "mv" {
        let (dest, sources) = targets_split(&operands);
        for src in sources {
            cx.err(format_args!(
                "mv: cannot move '{src}' to '{dest}': Read-only file system"
            ));
        }
        return 1;
    }
    for op in targets {
        cx.err(format_args!("{name}: {}: Read-only file system", what(op)));
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let b = [
            ("/files/a.md", "", "a.md"),
            ("/files/a.md", ".md", "a"),
            ("a.md", "a.md", "a.md"),
            ("/files/dir/", "", "dir"),
            ("/", "", "/"),
            ("//", "", "/"),
            ("", "", ""),
            ("a", "", "a"),
        ];
        for (n, s, want) in b {
            assert_eq!(base_name(n, s), want, "{n:?} {s:?}");
        }
        let d = [
            ("/files/a.md", "/files"),
            ("a.md", "."),
            ("/a", "/"),
            ("/", "/"),
            ("a/", "."),
            ("/a/b/", "/a"),
            ("//a//b//", "//a"),
            ("", "."),
            ("dir/sub/file", "dir/sub"),
        ];
        for (n, want) in d {
            assert_eq!(dir_name(n), want, "{n:?}");
        }
    }
}
