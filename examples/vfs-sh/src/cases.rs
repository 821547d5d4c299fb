//! The differential test table (`cases.txt`), as data: scripts that must
//! give the same standard output and exit status through vfs-sh as through
//! bash with GNU tools, and the normalisations that hide the differences
//! vfs-sh has on purpose.
//!
//! The native differential test (`tests/differential.rs`) runs the table
//! over a fixture directory; a host-level test can run the same table
//! through the wasm build with [`cases`] and [`normalise`].

/// The table's text, embedded at build time.
pub const CASES_TXT: &str = include_str!("../cases.txt");

/// One script of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// A unique name.
    pub name: String,
    /// The script (one or more lines); `/files` is the fixture's root.
    pub script: String,
    /// Why vfs-sh's output differs from GNU's, when it does on purpose.
    pub intended_difference: Option<String>,
    /// Normalisations applied to both outputs before comparing.
    pub normalise: Vec<String>,
    /// Programs the GNU side needs (the case is skipped without them).
    pub requires: Vec<String>,
    /// Standard error must match too (for GNU's error wording).
    pub compare_stderr: bool,
}

/// The cases of [`CASES_TXT`].
pub fn cases() -> Vec<Case> {
    parse(CASES_TXT)
}

/// The second differential run's commands (`tests/intercode/commands.txt`),
/// embedded at build time.
pub const INTERCODE_TXT: &str = include_str!("../tests/intercode/commands.txt");

/// The scripts of [`INTERCODE_TXT`]: one a line (`#` lines are comments),
/// a line ending in a here-document's `<<TAG` taking the lines up to
/// `TAG`. Their paths are the InterCode trees' (`/testbed`, `/system`,
/// `/workspace`, `/backup`).
pub fn intercode_scripts() -> Vec<String> {
    let commands: Vec<&str> = INTERCODE_TXT
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    let mut scripts = Vec::new();
    let mut i = 0;
    while i < commands.len() {
        let mut s = commands[i].to_owned();
        let tag = s
            .rsplit_once("<<")
            .filter(|(head, t)| !head.ends_with('<') && !t.starts_with('<'))
            .map(|(_, t)| t.trim().trim_matches('\'').to_owned())
            .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if let Some(tag) = tag {
            while i + 1 < commands.len() {
                i += 1;
                s.push('\n');
                s.push_str(commands[i]);
                if commands[i] == tag {
                    break;
                }
            }
        }
        scripts.push(s);
        i += 1;
    }
    scripts
}

/// Parses a table: a case starts with `=== NAME`, then optional
/// `intended difference: ...`, `normalise: a, b`, `requires: tool` and
/// `compare: stderr` lines, then the script up to the next case. Lines starting with `#`
/// before the first case are comments.
pub fn parse(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    let mut in_header = false;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("=== ") {
            cases.push(Case {
                name: name.trim().to_owned(),
                script: String::new(),
                intended_difference: None,
                normalise: Vec::new(),
                requires: Vec::new(),
                compare_stderr: false,
            });
            in_header = true;
            continue;
        }
        let Some(case) = cases.last_mut() else {
            continue;
        };
        if in_header {
            if let Some(why) = line.strip_prefix("intended difference:") {
                case.intended_difference = Some(why.trim().to_owned());
                continue;
            }
            if let Some(list) = line.strip_prefix("normalise:") {
                case.normalise.extend(
                    list.split(',')
                        .map(|s| s.trim().to_owned())
                        .filter(|s| !s.is_empty()),
                );
                continue;
            }
            if line.trim() == "compare: stderr" {
                case.compare_stderr = true;
                continue;
            }
            if let Some(list) = line.strip_prefix("requires:") {
                case.requires
                    .extend(list.split_whitespace().map(str::to_owned));
                continue;
            }
            in_header = false;
        }
        if !case.script.is_empty() {
            case.script.push('\n');
        }
        case.script.push_str(line);
    }
    for c in &mut cases {
        let trimmed = c.script.trim_end().len();
        c.script.truncate(trimmed);
    }
    cases
}

/// `ls -l` lines without what vfs-sh cannot know: the link count, owner
/// and group, directory sizes and the `total` line (the permissions stay).
fn ls_long(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("total ") {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let is_entry = fields.len() >= 9
            && fields[0].len() == 10
            && matches!(fields[0].as_bytes()[0], b'-' | b'd');
        if !is_entry {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        // The name is everything after the eighth field, spaces included.
        let mut rest = line;
        for _ in 0..8 {
            rest = rest.trim_start();
            rest = rest.find(' ').map_or("", |i| &rest[i..]);
        }
        let size = if fields[0].starts_with('d') {
            "-"
        } else {
            fields[4]
        };
        out.push_str(&format!(
            "{} {size} {} {} {} {}\n",
            fields[0],
            fields[5],
            fields[6],
            fields[7],
            rest.trim_start()
        ));
    }
    out
}

/// A `stat` time cut to the millisecond (the host's precision):
/// `Modify: 2024-01-31 09:05:00.123456789 +0000` to `...00.123 +0000`.
fn to_millis(line: &str) -> String {
    match line.split_once('.') {
        Some((head, rest))
            if rest.len() > 9 && rest.as_bytes()[..9].iter().all(u8::is_ascii_digit) =>
        {
            format!("{head}.{}{}", &rest[..3], &rest[9..])
        }
        _ => line.to_owned(),
    }
}

/// `stat` output reduced to the name, size, type, permissions and
/// modification time to the millisecond (directories' sizes dropped).
fn stat(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("  File:") {
            out.push_str(line);
            out.push('\n');
        } else if let Some(rest) = line.strip_prefix("Access: (") {
            let perms = rest.split(')').next().unwrap_or("");
            out.push_str(&format!("Access: ({perms})\n"));
        } else if line.starts_with("Modify:") {
            out.push_str(&to_millis(line));
            out.push('\n');
        } else if let Some(rest) = line.strip_prefix("  Size:") {
            let size = rest.split_whitespace().next().unwrap_or("");
            let kind = rest.rsplit("   ").next().unwrap_or("").trim();
            if kind == "directory" {
                out.push_str(&format!("Size: - {kind}\n"));
            } else {
                out.push_str(&format!("Size: {size} {kind}\n"));
            }
        }
    }
    out
}

/// Applies one normalisation by name: `sort` (lines sorted), `ls-long`,
/// `stat`, or `drop=TEXT` (lines containing TEXT removed). Unknown names
/// leave the text as it is.
pub fn normalise(name: &str, text: &str) -> String {
    match name {
        "sort" => {
            let mut lines: Vec<&str> = text.lines().collect();
            lines.sort_unstable();
            lines.iter().map(|l| format!("{l}\n")).collect()
        }
        "ls-long" => ls_long(text),
        "stat" => stat(text),
        other => match other.strip_prefix("drop=") {
            Some(needle) => text
                .lines()
                .filter(|l| !l.contains(needle))
                .map(|l| format!("{l}\n"))
                .collect(),
            None => text.to_owned(),
        },
    }
}

/// Applies a case's normalisations in order.
pub fn normalise_all(case: &Case, text: &str) -> String {
    case.normalise
        .iter()
        .fold(text.to_owned(), |t, n| normalise(n, &t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_parses() {
        let t = "# comment\n=== a\nnormalise: sort, ls-long\nintended difference: x\necho 1\necho 2\n\n=== b\nrequires: tree\ntree\n";
        let c = parse(t);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].script, "echo 1\necho 2");
        assert_eq!(c[0].normalise, ["sort", "ls-long"]);
        assert_eq!(c[0].intended_difference.as_deref(), Some("x"));
        assert_eq!(c[1].requires, ["tree"]);
        let all = cases();
        assert!(all.len() >= 80, "only {} cases", all.len());
        let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "case names are unique");
        for c in &all {
            assert!(!c.script.is_empty(), "{} has a script", c.name);
            if !c.normalise.is_empty() {
                assert!(
                    c.intended_difference.is_some(),
                    "{} normalises without saying why",
                    c.name
                );
            }
        }
    }

    #[test]
    fn normalisers() {
        let gnu = "total 12\n-rw-r--r-- 1 root root  120 Jan  5 10:30 my notes.md\ndrwxr-xr-x 2 root root 4096 Jan  5  2020 sub\n";
        let ours = "total 8\n-rw-r--r-- 1 vfsbox vfsbox  120 Jan  5 10:30 my notes.md\ndrwxr-xr-x 1 vfsbox vfsbox 4096 Jan  5  2020 sub\n";
        assert_eq!(ls_long(gnu), ls_long(ours));
        assert_eq!(
            ls_long(gnu),
            "-rw-r--r-- 120 Jan 5 10:30 my notes.md\ndrwxr-xr-x - Jan 5 2020 sub\n"
        );
        let other_mode = "-r--r--r-- 1 root root  120 Jan  5 10:30 my notes.md\n";
        assert_ne!(ls_long(gnu), ls_long(other_mode), "the permissions count");
        assert_eq!(normalise("sort", "b\na\n"), "a\nb\n");
        assert_eq!(
            to_millis("Modify: 2026-11-27 22:44:45.932492749 +0000"),
            "Modify: 2026-11-27 22:44:45.932 +0000"
        );
        assert_eq!(normalise("drop=bin", "a.bin\nb\n"), "b\n");
    }
}
