//! `search.grep` gives what GNU `grep -Hn` gives, on the same tree.
//!
//! The tree is laid out on disk and mounted at `/files`. GNU grep is given
//! the files in the order vfsbox searches them (depth first, names sorted),
//! so the outputs compare line for line. Patterns use ERE syntax (`grep
//! -E`), which is what ripgrep's engine speaks. Binary files are left out of
//! this tree: vfsbox skips them, where GNU grep prints "Binary file ...
//! matches" (tested on its own below).

use std::path::{Path, PathBuf};
use std::process::Command;

use vfsbox_host::vfs::MemoryBackend;

use crate::common::*;

const TREE: &[(&str, &str)] = &[
    (
        "guide.md",
        "# Guide\nThe colour of money.\nThe color of night.\nthe end\n",
    ),
    (
        "notes/day1.txt",
        "day one\nDay two\ndaylight saving\nmidday\n\nlast line without newline",
    ),
    (
        "notes/day2.txt",
        "foo\nbar\nfoo bar\nbaz\nfoo\nqux\nquux\nfoo\n",
    ),
    ("notes/windows.txt", "crlf line one\r\ncrlf line two\r\n"),
    (
        "policies/refunds.md",
        "Refund policy\nRefunds within 30 days.\nNo REFUND after 30 days.\na.b literal\naxb not literal\n",
    ),
    ("policies/été.md", "Été comme hiver\nété\nETE\n"),
    (
        "data/numbers.csv",
        "1,one\n22,two\n333,three\nx,none\naa,aaa\n",
    ),
];

/// `(GNU grep flags, vfsbox grep-gnu flags)`; the same unless noted.
const CASES: &[&[&str]] = &[
    &["-e", "policy"],
    &["-i", "-e", "REFUND"],
    &["-w", "-e", "day"],
    &["-i", "-w", "-e", "the"],
    &["-v", "-e", "o"],
    &["-F", "-e", "a.b"],
    &["-e", "a.b"],
    &["-e", "^[0-9]+,"],
    &["-e", "(foo|bar)$"],
    &["-e", "colou?r"],
    &["-e", "a{2,}"],
    &["-e", "\\bday"],
    &["-e", "foo", "-e", "baz"],
    &["-C", "1", "-e", "baz"],
    &["-A", "2", "-e", "^foo$"],
    &["-B", "1", "-e", "qux"],
    &["-C", "2", "-e", "foo"],
    &["-m", "1", "-e", "foo"],
    &["-m", "2", "-A", "1", "-e", "foo"],
    &["-i", "-e", "été"],
    &["-e", "line"],
    &["-e", "two\\s*$"],
    &["--include", "*.md", "-e", "the"],
    &["--include", "*.txt", "-i", "-e", "day"],
    &["--exclude", "*.md", "-e", "the"],
    &["--include", "*.md", "--exclude", "r*", "-i", "-e", "policy"],
    &["-e", "nothing matches this"],
    &["-e", ""],
];

fn lay_out(root: &Path) {
    for (path, text) in TREE {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    }
}

/// The files under `root`, depth first with names sorted: vfsbox's order.
/// The files below `root` in the order the host's search walks them: depth
/// first, each directory in the kernel's (readdir) order, as `grep -r` does.
fn walk_order(root: &Path) -> Vec<PathBuf> {
    let names: Vec<_> = std::fs::read_dir(root)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    names
        .into_iter()
        .flat_map(|p| if p.is_dir() { walk_order(&p) } else { vec![p] })
        .collect()
}

fn gnu_grep(root: &Path, flags: &[&str]) -> (String, Option<i32>) {
    let files: Vec<String> = walk_order(root)
        .iter()
        .map(|p| {
            p.strip_prefix(root)
                .expect("below root")
                .display()
                .to_string()
        })
        .collect();
    let out = Command::new("grep")
        .current_dir(root)
        .env("LC_ALL", "C.UTF-8")
        .args(["-H", "-n"])
        // Extended regular expressions, unless the patterns are literal.
        .args(if flags.contains(&"-F") {
            None
        } else {
            Some("-E")
        })
        .args(flags)
        .args(&files)
        .output()
        .expect("GNU grep runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    // Map paths: `notes/day1.txt:` -> `/files/notes/day1.txt:`.
    let mapped = text
        .split_terminator('\n')
        .map(|l| {
            if l == "--" {
                l.to_owned()
            } else {
                format!("/files/{l}")
            }
        })
        .map(|l| l + "\n")
        .collect();
    (mapped, out.status.code())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_matches_gnu_grep_on_a_table_of_patterns_and_flags() {
    let dir = tempfile::tempdir().expect("tempdir");
    lay_out(dir.path());
    let vfs = local_vfs(dir.path());
    let rt = runtime(limits());
    let script = vfsbox_host::Script::Compiled(compiled(&rt).await);
    for flags in CASES {
        let (want, want_code) = gnu_grep(dir.path(), flags);
        let mut args = vec!["grep-gnu"];
        args.extend_from_slice(flags);
        args.push("/files");
        let permit = rt.try_admit(None).expect("slot");
        let report = rt
            .run(permit, script.clone(), spec(vfs.clone(), limits(), &args))
            .await
            .expect("runs");
        assert_eq!(report.stdout_text(), want, "grep {flags:?}");
        assert_eq!(report.exit_code(), want_code, "grep {flags:?}");
    }
}

#[tokio::test]
async fn smart_case_ignores_case_only_for_lower_case_patterns() {
    let tree = MemoryBackend::new().file("a.txt", "Refund\nrefund\nREFUND\n");
    let rt = runtime(limits());
    let vfs = vfs_of(tree);
    let lower = run_on(
        &rt,
        vfs.clone(),
        limits(),
        &["grep-gnu", "-S", "-e", "refund", "/files"],
    )
    .await;
    assert_eq!(
        lower.stdout_text().lines().count(),
        3,
        "{}",
        lower.stdout_text()
    );
    let mixed = run_on(
        &rt,
        vfs,
        limits(),
        &["grep-gnu", "-S", "-e", "Refund", "/files"],
    )
    .await;
    assert_eq!(mixed.stdout_text(), "/files/a.txt:1:Refund\n");
}

/// A binary file's matching lines are counted, not returned (see
/// `sh::grep_counts_and_names_a_binary_file_as_gnu_grep_does`).
#[tokio::test]
async fn a_binary_files_lines_are_not_returned() {
    let tree = MemoryBackend::new()
        .file("text.txt", "needle\n")
        .file("image.bin", b"needle\0\x01\x02needle\n".to_vec());
    let rt = runtime(limits());
    let report = run_on(&rt, vfs_of(tree), limits(), &["grep", "needle", "/files"]).await;
    assert_eq!(report.stdout_text(), "/files/text.txt:1:needle\n");
}

#[tokio::test]
async fn a_bad_or_oversized_pattern_is_an_error_the_script_sees() {
    let rt = runtime(limits());
    for search in ["grep", "count"] {
        let report = run(&rt, &[search, "(unclosed", "/files"]).await;
        assert_eq!(report.exit_code(), Some(1));
        assert!(
            report
                .stdout_text()
                .starts_with("error: unavailable: bad pattern"),
            "{search}: {}",
            report.stdout_text()
        );
    }
    let long = "a".repeat(5000);
    let report = run(&rt, &["grep", &long, "/files"]).await;
    assert!(
        report.stdout_text().contains("longer than 4096 bytes"),
        "{}",
        report.stdout_text()
    );
    // A pattern whose compiled form is enormous is refused, not built.
    let bomb = "(((a{100}){100}){100})";
    let report = run(&rt, &["grep", bomb, "/files"]).await;
    assert!(
        report.stdout_text().contains("bad pattern"),
        "{}",
        report.stdout_text()
    );
}

/// `search.count` searches as `grep` does and returns each file's count
/// alone: a binary file counted, a file without a match listed with 0
/// (with `include-non-matching`), a root that is not there reported as
/// `grep` reports it, and the scan budget cutting it short in the same way.
#[tokio::test]
async fn a_count_is_greps_counts_without_the_lines() {
    let tree = MemoryBackend::new()
        .file("a.txt", "needle\nhay\nneedle again\n")
        .file("b.txt", "hay\n")
        .file("c/image.bin", b"needle\0needle\n".to_vec())
        .file("c/d.txt", "needle\n".repeat(1000));
    let rt = runtime(limits());
    let report = run_on(
        &rt,
        vfs_of(tree.clone()),
        limits(),
        &["count", "needle", "/files", "/files/nowhere"],
    )
    .await;
    assert_eq!(
        report.stdout_text(),
        "/files/a.txt:2 (0 lines)\n/files/b.txt:0 (0 lines)\n\
         /files/c/d.txt:1000 (0 lines)\n/files/c/image.bin:2 (0 lines)\n\
         error /files/nowhere: /files/nowhere: no such file or directory\n"
    );
    let two_files = vfsbox_host::Limits {
        scan_files: 2,
        ..limits()
    };
    let report = run_on(
        &rt,
        vfs_of(tree),
        two_files.clone(),
        &["count", "needle", "/files"],
    )
    .await;
    assert_eq!(
        report.stdout_text(),
        "/files/a.txt:2 (0 lines)\n/files/b.txt:0 (0 lines)\n\
         truncated: searched 2 not reached 2\n"
    );
}
