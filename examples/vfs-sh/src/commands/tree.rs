//! `tree [-L N] [-d] [-a] [-f] [--noreport] [DIR]...`, in the output format
//! of tree 2.x: `├── `, `└── `, `│   ` (with two no-break spaces) and the final `N directories, M files`
//! line, which (like tree 2.x) counts a listed directory itself when it
//! shows at least one entry.

use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::FsError;

/// Settings and running totals.
struct Tree {
    level: Option<usize>,
    dirs_only: bool,
    all: bool,
    full_path: bool,
    dirs: u64,
    files: u64,
}

impl Tree {
    /// Lists `path`'s entries below `prefix` at `depth` (1 for the root's
    /// entries); returns whether anything was shown.
    /// Lines are written as they are found, so that a listing cut short by
    /// the host's deadline still shows what it reached.
    fn list(&mut self, cx: &mut Cx<'_>, path: &str, prefix: &str, depth: usize) -> bool {
        let entries = match cx.fs.read_dir(path) {
            Ok(e) => e,
            Err(_) => return false,
        };
        let shown: Vec<_> = entries
            .into_iter()
            .filter(|e| self.all || !e.name.starts_with('.'))
            .filter(|e| !self.dirs_only || e.is_dir())
            .collect();
        let n = shown.len();
        for (i, e) in shown.into_iter().enumerate() {
            let last = i + 1 == n;
            let child = super::join(path, &e.name);
            let label = if self.full_path {
                child.as_str()
            } else {
                e.name.as_str()
            };
            let branch = if last { "└── " } else { "├── " };
            cx.outs(&format!("{prefix}{branch}{label}\n"));
            if e.is_dir() {
                self.dirs += 1;
                if self.level.is_none_or(|l| depth < l) {
                    // tree draws the vertical line followed by two no-break spaces.
                    let deeper =
                        format!("{prefix}{}", if last { "    " } else { "│\u{a0}\u{a0} " });
                    self.list(cx, &child, &deeper, depth + 1);
                }
            } else {
                self.files += 1;
            }
        }
        n > 0
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `tree`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('L', "", "L"),
        flag('d', "", "d"),
        flag('a', "", "a"),
        flag('f', "", "f"),
        // `-l` follows links: the document filesystem resolves them already.
        flag('l', "", "l"),
        flag('n', "", "n"),
        flag('C', "", "C"),
        flag('\0', "noreport", "noreport"),
    ];
    let p = match options(cx, "tree", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let level = match p.value("L") {
        None => None,
        Some(v) => match super::count(v) {
            Some(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            _ => {
                cx.err("tree: Invalid level, must be greater than 0.");
                return 1;
            }
        },
    };
    let mut t = Tree {
        level,
        dirs_only: p.has("d"),
        all: p.has("a"),
        full_path: p.has("f"),
        dirs: 0,
        files: 0,
    };
    let roots = if p.operands.is_empty() {
        vec![".".to_owned()]
    } else {
        p.operands.clone()
    };
    let mut status = 0;
    for root in &roots {
        match cx.fs.metadata(root) {
            Ok(m) if m.is_dir() => {
                cx.outs(&format!("{root}\n"));
                if t.list(cx, root, "", 1) {
                    t.dirs += 1;
                }
            }
            Ok(_) => {
                cx.outs(&format!("{root}  [error opening dir]\n"));
                t.files += 1;
            }
            Err(e) => {
                cx.outs(&format!("{root}  [error opening dir]\n"));
                if matches!(e, FsError::NotFound(_)) {
                    status = 2;
                }
            }
        }
    }
    if !p.has("noreport") {
        let dirs = plural(t.dirs, "directory", "directories");
        let line = if t.dirs_only {
            format!("\n{dirs}\n")
        } else {
            format!("\n{dirs}, {}\n", plural(t.files, "file", "files"))
        };
        cx.outs(&line);
    }
    status
}
