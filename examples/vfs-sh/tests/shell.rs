//! Behaviour the differential test cannot show, with exact expectations:
//! refusals, vfs-sh's own messages, `cd` without a home, `rg`,
//! `--smart-case`, partial searches, streaming output, tree's format
//! (whether or not tree is installed), and no panic on any input.

mod common;

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use vfs_sh::dirfs::DirFs;
use vfs_sh::fs::{Entry, Fs, FsError, GrepRequest, GrepResult, Meta, Opened};

/// Standard output, standard error and status of one script.
#[derive(Debug, PartialEq, Eq)]
struct Ran {
    out: String,
    err: String,
    status: u8,
}

fn run_on(fs: &mut dyn Fs, script: &str) -> Ran {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = vfs_sh::run(fs, script, Box::new(std::io::empty()), &mut out, &mut err);
    Ran {
        out: String::from_utf8_lossy(&out).into_owned(),
        err: String::from_utf8_lossy(&err).into_owned(),
        status,
    }
}

fn fixture_fs(f: &common::Fixture) -> DirFs {
    DirFs::new().mount("files", f.files()).with_cwd("/files")
}

fn sh(script: &str) -> Ran {
    let f = common::Fixture::new();
    run_on(&mut fixture_fs(&f), script)
}

#[test]
fn writes_fail_like_a_read_only_filesystem() {
    // A redirection that would write a file fails for its command only,
    // as bash's does on a read-only mount; the script goes on.
    for script in [
        "echo first; echo x > out.txt; echo after",
        "echo first; ls >> log; echo after",
        "echo first; cat README.md 1<>rw; echo after",
        "echo first; echo x &> both.txt; echo after",
    ] {
        let r = sh(script);
        assert_eq!(r.out, "first\nafter\n", "{script}");
        assert!(
            r.err.contains("the filesystem is read-only"),
            "{script}: {:?}",
            r.err
        );
        assert_eq!(r.status, 0, "{script}");
    }
    let r = sh("echo x > out.txt");
    assert_eq!(r.status, 1);
    assert_eq!(
        r.err,
        "bash: line 1: out.txt: cannot write: the filesystem is read-only (only /dev/null, /dev/stdout and /dev/stderr take output)\n"
    );
    // Output process substitution would write: refused before anything runs.
    let r = sh("echo first; tee >(cat)");
    assert_eq!((r.out.as_str(), r.status), ("", 2));
    // Commands that would write a file say what GNU's say on a read-only
    // mount, with their statuses: sort and uniq after opening their input,
    // sed -i where it creates its temporary file beside the document.
    let r = sh("sort -o x README.md");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("sort: open failed: x: Read-only file system\n", 2)
    );
    let r = sh("sort -o x nope.md");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("sort: cannot read: nope.md: No such file or directory\n", 2)
    );
    let r = sh("uniq README.md 'an out'");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("uniq: 'an out': Read-only file system\n", 1)
    );
    let r = sh("uniq nope.md out");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("uniq: nope.md: No such file or directory\n", 1)
    );
    assert_eq!(sh("uniq README.md /dev/null").out, "");
    // An attached suffix, or `-i` inside a cluster, is still an edit.
    for (edit, dir) in [
        ("sed -i -n 1p README.md", "."),
        ("sed -i.bak s/a/b/ README.md", "."),
        ("sed -ni p /files/docs/policy.md", "/files/docs"),
        ("sed --in-place=.orig p docs/guide.md", "docs"),
        ("sed -ie p nope.md README.md", "."),
    ] {
        let r = sh(edit);
        let (line, name) = r.err.trim_end().rsplit_once('/').expect("a path");
        assert_eq!(
            line.lines().last(),
            Some(format!("sed: couldn't open temporary file {dir}").as_str()),
            "{edit}"
        );
        let (temp, why) = name.split_once(": ").expect("a reason");
        assert!(temp.len() == 9 && temp.starts_with("sed"), "{edit}: {temp}");
        assert_eq!(why, "Read-only file system", "{edit}");
        assert_eq!((r.out.as_str(), r.status), ("", 4), "{edit}");
    }
    let r = sh("awk 'BEGIN { print 1 > \"out\" }'");
    assert_eq!(
        (r.err.as_str(), r.status),
        (
            "awk: cmd. line:1: fatal: cannot redirect to `out': Read-only file system\n",
            2
        )
    );
    let r = sh("sed -i p docs");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("sed: couldn't edit docs: not a regular file\n", 4)
    );
    let r = sh("sed -i p");
    assert_eq!((r.err.as_str(), r.status), ("sed: no input files\n", 4));
    let r = sh("sed -i 's/a' README.md");
    assert_eq!(
        (r.err.as_str(), r.status),
        (
            "sed: -e expression #1, char 3: unterminated `s' command\n",
            1
        )
    );
    // `-e` takes the next word: an `i` in the script is not an option.
    assert_eq!(sh("sed -n -e s/i/x/p README.md").status, 0);
    let r = sh("echo data | tee out.txt");
    assert_eq!((r.out.as_str(), r.status), ("data\n", 1));
    assert_eq!(r.err, "tee: out.txt: Read-only file system\n");
    // -delete fails on each item it reaches (children first, as it
    // implies -depth; `.` is left alone); with nothing to delete, find
    // succeeds. What -print wrote comes before the message, as GNU's
    // `error()` flushes standard output first.
    // Siblings come in the directory's own order, which the filesystem
    // picks.
    let r = sh("find docs/archive -print -delete 2>&1");
    let lines: Vec<&str> = r.out.lines().collect();
    let mut printed: Vec<&str> = lines
        .chunks(2)
        .map(|pair| {
            assert_eq!(
                pair[1],
                format!("find: cannot delete '{}': Read-only file system", pair[0]),
                "{}",
                r.out
            );
            pair[0]
        })
        .collect();
    assert_eq!(printed.pop(), Some("docs/archive"), "{}", r.out);
    printed.sort_unstable();
    assert_eq!(
        printed,
        [
            "docs/archive/2019-report.md",
            "docs/archive/handbook.zip",
            "docs/archive/old.txt"
        ]
    );
    assert_eq!(r.status, 1);
    let r = sh("find . -name '*.nothing' -delete");
    assert_eq!((r.out.as_str(), r.err.as_str(), r.status), ("", "", 0));
    let r = sh("cd inbox && find . -delete");
    assert_eq!((r.out.as_str(), r.err.as_str(), r.status), ("", "", 0));
    // unzip extracts by default: refused with a way to read instead, and
    // with a status of its own (Info-ZIP's are 0 to 82; 50 is "disk
    // full", the nearest to "cannot write").
    for script in [
        "unzip docs/archive/handbook.zip",
        "unzip -o -q docs/archive/handbook -d /tmp/x handbook/intro.md",
    ] {
        let r = sh(script);
        assert_eq!((r.out.as_str(), r.status), ("", 50), "{script}");
        assert!(
            r.err.contains("read-only") && r.err.contains("unzip -p"),
            "{script}: {}",
            r.err
        );
    }
    let r = sh("find . -fprint list.txt");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("find: 'list.txt': Read-only file system\n", 1)
    );
    // rm: a missing name is an error only without -f; a directory needs
    // -r, which reports each leaf (a file, an empty directory) and not
    // the directories above it.
    assert_eq!(sh("rm -f nope.md").status, 0);
    assert_eq!(sh("rm -rf nope.md").status, 0);
    let r = sh("rm nope.md 'my file'");
    assert_eq!(
        (r.err.as_str(), r.status),
        (
            "rm: cannot remove 'nope.md': No such file or directory\n\
             rm: cannot remove 'my file': No such file or directory\n",
            1
        )
    );
    let r = sh("rm -f nope.md docs");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("rm: cannot remove 'docs': Is a directory\n", 1)
    );
    // (The files of a directory in its own order, which the filesystem
    // picks.)
    let r = sh("rm -r docs/archive/ inbox");
    let mut lines: Vec<&str> = r.err.lines().collect();
    lines[..3].sort_unstable();
    assert_eq!(
        (lines.join("\n"), r.status),
        (
            "rm: cannot remove 'docs/archive/2019-report.md': Read-only file system\n\
             rm: cannot remove 'docs/archive/handbook.zip': Read-only file system\n\
             rm: cannot remove 'docs/archive/old.txt': Read-only file system\n\
             rm: cannot remove 'inbox': Read-only file system"
                .to_owned(),
            1
        )
    );
    let r = sh("rm -d inbox docs");
    assert_eq!(
        r.err,
        "rm: cannot remove 'inbox': Read-only file system\n\
         rm: cannot remove 'docs': Directory not empty\n"
    );
    let r = sh("rm -rf / .; rm -rf");
    assert_eq!(
        (r.err.as_str(), r.status),
        (
            "rm: it is dangerous to operate recursively on '/'\n\
             rm: use --no-preserve-root to override this failsafe\n\
             rm: refusing to remove '.' or '..' directory: skipping '.'\n",
            0
        )
    );
}

#[test]
fn discarding_and_reading_redirections_work() {
    assert_eq!(sh("ls nope 2>/dev/null; echo $?").out, "2\n");
    assert_eq!(sh("ls nope >/dev/null 2>&1 || echo gone").out, "gone\n");
    assert_eq!(sh("ls nope &>/dev/null; echo ok").out, "ok\n");
    assert_eq!(sh("ls nope 2>&1 | wc -l").out, "1\n");
    assert_eq!(sh("ls nope |& wc -l").out, "1\n");
    assert_eq!(sh("wc -l < notes.txt").out, "3\n");
    assert_eq!(
        sh("while read -r a b; do echo $b; done < data/customers.csv | head -1").out,
        "\n"
    );
    let r = sh("cat < nope.txt; echo $?");
    assert_eq!(r.out, "1\n");
    assert_eq!(r.err, "bash: line 1: nope.txt: No such file or directory\n");
}

/// `&` runs the job to its end in a subshell reading nothing; `$!` and
/// `wait` see it as bash's would.
#[test]
fn background_jobs_run_in_a_subshell_and_wait_gives_their_status() {
    assert_eq!(sh("echo a & wait; echo b").out, "a\nb\n");
    assert_eq!(sh("(exit 3) & wait $!; echo $?").out, "3\n");
    assert_eq!(sh("false & echo $?").out, "0\n");
    assert_eq!(sh("cd docs & wait; pwd").out, "/files\n");
    assert_eq!(sh("x=1 & wait; echo \"[$x]\"").out, "[]\n");
    assert_eq!(sh("echo piped | { cat & wait; }").out, "piped\n");
    let r = sh("wait 12345; echo $?");
    assert_eq!(r.out, "127\n");
    assert!(r.err.contains("not a child of this shell"), "{:?}", r.err);
    assert_eq!(
        sh("echo $!; sleep 0 & [ -n \"$!\" ] && echo set").out,
        "\nset\n"
    );
}

/// `trap` alone lists every trap in bash's order: EXIT, the signals by
/// number, then DEBUG, ERR and RETURN (the differential case names its
/// signals, as the reference bash may inherit ignored ones).
#[test]
fn trap_alone_lists_the_traps_in_bash_order() {
    let r = sh(
        "trap 'r' RETURN; trap 'e' ERR; trap 't' TERM; trap '' HUP; trap 'x' EXIT; trap 'u' USR1; trap",
    );
    assert_eq!(
        r.out,
        "trap -- 'x' EXIT\ntrap -- '' SIGHUP\ntrap -- 'u' SIGUSR1\ntrap -- 't' SIGTERM\ntrap -- 'e' ERR\ntrap -- 'r' RETURN\n"
    );
    assert_eq!(sh("trap 'a' USR1; trap - USR1; trap").out, "");
}

/// The sandbox has one account, root, who owns every document; its node
/// name, release and version are its own, not the host's.
#[test]
fn the_account_and_system_are_the_sandboxs_own() {
    assert_eq!(
        sh("whoami; id; id -u; id -un; id -G; groups").out,
        "root\nuid=0(root) gid=0(root) groups=0(root)\n0\nroot\n0\nroot\n"
    );
    assert_eq!(
        sh("uname -a; hostname").out,
        "Linux vfsbox vfsbox vfsbox x86_64 GNU/Linux\nvfsbox\n"
    );
    let r = sh("id bob; echo $?");
    assert_eq!(r.out, "1\n");
    assert!(r.err.contains("'bob': no such user"), "{:?}", r.err);
}

#[test]
fn what_cannot_run_is_refused_before_anything_runs() {
    let table: &[(&str, &str)] = &[
        ("echo first; echo 'unterminated", "matching"),
        ("echo first; | ls", "syntax error"),
        ("echo first &&", "syntax error"),
        ("echo first; if true; then echo", "unexpected end"),
    ];
    for (script, want) in table {
        let r = sh(script);
        assert_eq!(r.status, 2, "{script}");
        assert_eq!(r.out, "", "{script}: nothing may run");
        assert!(r.err.contains(want), "{script}: {:?}", r.err);
    }
}

/// The commands that would change documents fail as on a read-only
/// filesystem, with GNU's messages and status 1, and change nothing.
#[test]
fn writing_commands_fail_as_on_a_read_only_filesystem() {
    for (script, want) in [
        (
            "touch new.txt",
            "touch: cannot touch 'new.txt': Read-only file system\n",
        ),
        (
            "mkdir d",
            "mkdir: cannot create directory 'd': Read-only file system\n",
        ),
        (
            "rm -f notes.txt",
            "rm: cannot remove 'notes.txt': Read-only file system\n",
        ),
        (
            "mv notes.txt n.txt",
            "mv: cannot move 'notes.txt' to 'n.txt': Read-only file system\n",
        ),
        (
            "cp notes.txt n.txt",
            "cp: cannot create regular file 'n.txt': Read-only file system\n",
        ),
        (
            "chmod 600 notes.txt",
            "chmod: changing permissions of 'notes.txt': Read-only file system\n",
        ),
        (
            "ln -s notes.txt l",
            "ln: failed to create symbolic link 'l': Read-only file system\n",
        ),
        (
            "split -l 1 notes.txt",
            "split: xaa: Read-only file system\n",
        ),
        (
            "split -l1 notes.txt part_",
            "split: part_aa: Read-only file system\n",
        ),
        (
            "split notes.txt p -b 1K",
            "split: paa: Read-only file system\n",
        ),
        (
            "csplit notes.txt 1",
            "csplit: xx00: Read-only file system\n",
        ),
        (
            "dd if=notes.txt of=copy.txt",
            "dd: failed to open 'copy.txt': Read-only file system\n",
        ),
    ] {
        let r = sh(script);
        assert_eq!((r.err.as_str(), r.status), (want, 1), "{script}");
    }
    let r = sh("echo notes.txt | xargs rm; echo \"$?\"; ls notes.txt");
    assert_eq!(r.out, "123\nnotes.txt\n");
}

/// `tar -x` without `-O` reads the archive and names its members with
/// `-v`, as GNU tar does on a read-only mount, where each member then
/// fails to be written and tar exits 2.
#[test]
fn tar_extracting_names_members_and_fails_each() {
    let f = common::Fixture::new();
    let made = std::process::Command::new("tar")
        .args(["-czf", "t.tar.gz", "notes.txt", "docs/guide.md"])
        .current_dir(f.files())
        .status()
        .expect("GNU tar runs");
    assert!(made.success());
    let r = run_on(&mut fixture_fs(&f), "tar -xzvf t.tar.gz; echo \"rc=$?\"");
    assert_eq!(r.out, "notes.txt\ndocs/guide.md\nrc=2\n");
    assert!(
        r.err.starts_with(
            "tar: notes.txt: Cannot open: Read-only file system\n\
             tar: docs/guide.md: Cannot open: Read-only file system\n\
             tar: Exiting with failure status due to previous errors\n"
        ),
        "{}",
        r.err
    );
    let r = run_on(
        &mut fixture_fs(&f),
        "tar -xzf t.tar.gz nope; echo \"rc=$?\"",
    );
    assert_eq!(r.out, "rc=2\n");
    assert!(
        r.err.contains("tar: nope: Not found in archive"),
        "{}",
        r.err
    );
}

/// `tail -f` cannot be a differential case: GNU's waits for ever unless a
/// reader closes the pipe. vfs-sh prints what GNU prints before it waits.
#[test]
fn tail_follow_prints_the_end_then_stops() {
    let r = sh("tail -n 2 -f notes.txt; echo \"rc=$?\"; tail -n 2 notes.txt");
    let (followed, plain) = r.out.split_once("rc=0\n").expect("tail -f ends with 0");
    assert_eq!(followed, plain);
    assert!(!plain.is_empty());
    assert_eq!(
        r.err,
        "tail: not following (-f): documents do not grow here\n"
    );
    // Following standard input is not following: no note.
    let r = sh("printf 'a\\nb\\n' | tail -f -n 1");
    assert_eq!((r.out.as_str(), r.err.as_str(), r.status), ("b\n", "", 0));
    // Nothing to follow: GNU's own words.
    let r = sh("tail -f nope nope2");
    assert_eq!(r.status, 1);
    assert!(r.err.ends_with("tail: no files remaining\n"), "{}", r.err);
}

#[test]
fn unsupported_commands() {
    let r = sh("frob a b");
    assert_eq!(
        (r.out.as_str(), r.err.as_str(), r.status),
        ("", "bash: line 1: frob: command not found\n", 127)
    );
    let r = sh("echo hi | python3 -c x; echo after");
    assert_eq!((r.out.as_str(), r.status), ("after\n", 0));
    // A program agents reach for that the sandbox lacks: bash's words,
    // then why, so that the next command can do without it.
    for (script, first, why) in [
        (
            "perl -ne print notes.txt",
            "bash: line 1: perl: command not found",
            "interpreters",
        ),
        ("sh -c 'curl -s x'", "sh: 1: curl: not found", "no network"),
        (
            "git log",
            "bash: line 1: git: command not found",
            "not a repository",
        ),
        (
            "man find",
            "bash: line 1: man: command not found",
            "`help NAME` gives its usage",
        ),
        (
            "locate notes.txt",
            "bash: line 1: locate: command not found",
            "find / -name",
        ),
        (
            "nproc",
            "bash: line 1: nproc: command not found",
            "one thread",
        ),
    ] {
        let r = sh(script);
        assert_eq!(r.status, 127, "{script}");
        let (line, note) = r.err.split_once('\n').expect("two lines");
        assert_eq!(line, first, "{script}");
        assert!(
            note.starts_with("note: vfs-sh has no ") && note.contains(why),
            "{}",
            r.err
        );
    }
    assert_eq!(
        sh("echo x | xargs frob").err,
        "xargs: frob: No such file or directory\n"
    );
    assert_eq!(sh("echo x | xargs frob").status, 127);
    // sed's `e` runs its command in vfs-sh, never on the host.
    let r = sh("echo x | sed 's/x/frob/e'");
    assert_eq!((r.out.as_str(), r.status), ("\n", 0));
    assert_eq!(r.err, "sh: 1: frob: not found\n");
    assert!(sh("sed 'w out.txt' README.md").err.contains("read-only"));
    let r = sh("find . -name '*.md' -exec frob {} \\;");
    assert_eq!(r.status, 0);
    assert!(
        r.err.contains("find: 'frob': No such file or directory"),
        "{}",
        r.err
    );
}

#[test]
fn invocation() {
    let f = common::Fixture::new();
    let argv = |a: &[&str]| -> Vec<String> { a.iter().map(|s| (*s).to_owned()).collect() };
    for bad in [
        &["vfs-sh"][..],
        &["vfs-sh", "-c"],
        &["vfs-sh", "-x", "ls"],
        &["vfs-sh", "ls"],
        &["vfs-sh", "-c", "ls", "extra"],
    ] {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let status = vfs_sh::run_argv(
            &argv(bad),
            &mut fixture_fs(&f),
            Box::new(std::io::empty()),
            &mut out,
            &mut err,
        );
        assert_eq!(status, 2, "{bad:?}");
        assert_eq!(
            String::from_utf8_lossy(&err),
            format!("{}\n", vfs_sh::USAGE)
        );
    }
    let mut out = Vec::new();
    let status = vfs_sh::run_argv(
        &argv(&["vfs-sh", "-c", "echo ok"]),
        &mut fixture_fs(&f),
        Box::new(std::io::empty()),
        &mut out,
        &mut Vec::new(),
    );
    assert_eq!((status, out), (0, b"ok\n".to_vec()));
}

#[test]
fn pushd_and_popd_keep_a_directory_stack() {
    let r = sh("pushd /files/docs; pushd /files/data; pwd; popd; pwd; dirs; popd; popd");
    assert_eq!(
        r.out,
        "/files/docs /files\n/files/data /files/docs /files\n/files/data\n/files/docs /files\n/files/docs\n/files/docs /files\n/files\n"
    );
    assert_eq!(
        (r.err.as_str(), r.status),
        ("bash: line 1: popd: directory stack empty\n", 1)
    );
}

#[test]
fn cd_has_no_home() {
    assert_eq!(sh("cd; pwd").out, "/\n");
    assert_eq!(sh("cd ~; pwd").out, "/\n");
    assert_eq!(sh("cd docs; cd ~/files/data; pwd").out, "/files/data\n");
    assert_eq!(sh("cd /; ls").out, "files\n");
    let r = sh("cd /files/README.md");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("bash: line 1: cd: /files/README.md: Not a directory\n", 1)
    );
    let r = sh("cd nope");
    assert_eq!(
        (r.err.as_str(), r.status),
        ("bash: line 1: cd: nope: No such file or directory\n", 1)
    );
    assert_eq!(sh("cd a b").err, "bash: line 1: cd: too many arguments\n");
}

#[test]
fn gnu_error_wording() {
    let table: &[(&str, &str, u8)] = &[
        (
            "cat /files/nope.txt",
            "cat: /files/nope.txt: No such file or directory\n",
            1,
        ),
        (
            "ls /files/nope",
            "ls: cannot access '/files/nope': No such file or directory\n",
            2,
        ),
        (
            "grep x /files/docs",
            "grep: /files/docs: Is a directory\n",
            2,
        ),
        (
            "ls -z",
            "ls: invalid option -- 'z'\nTry 'ls --help' for more information.\n",
            2,
        ),
        (
            "grep",
            "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n",
            2,
        ),
        ("grep 'a\\(' README.md", "grep: Unmatched ( or \\(\n", 2),
        ("grep 'x\\1' README.md", "grep: Invalid back reference\n", 2),
        (
            "head -n x README.md",
            "head: invalid number of lines: 'x'\n",
            1,
        ),
        (
            "sort -k 0 README.md",
            "sort: field number is zero: invalid field specification '0'\n",
            2,
        ),
        (
            "cut README.md",
            "cut: you must specify a list of bytes, characters, or fields\nTry 'cut --help' for more information.\n",
            1,
        ),
        (
            "tr a",
            "tr: missing operand after 'a'\nTwo strings must be given when translating.\nTry 'tr --help' for more information.\n",
            1,
        ),
        ("find . -bogus", "find: unknown predicate `-bogus'\n", 1),
    ];
    for (script, want, status) in table {
        let r = sh(script);
        assert_eq!((r.err.as_str(), r.status), (*want, *status), "{script}");
    }
}

#[test]
fn grep_extras() {
    let r = sh("grep --smart-case refund docs/policy.md");
    assert_eq!(
        r.out.lines().count(),
        6,
        "lower case pattern ignores case: {}",
        r.out
    );
    let r = sh("grep --smart-case Refund docs/policy.md");
    assert_eq!(
        r.out,
        "# Refund Policy\nRefunds are processed in 5 business days.\n"
    );
    let r = sh("grep -c '\\d' README.md");
    assert_eq!(r.err, "grep: warning: stray \\ before d\n");
    assert_eq!(
        sh("grep -P '\\d{4}' logs/app.log | head -n 1").out,
        "2024-03-01 10:01:00 INFO event 1\n"
    );
    let r = sh("printf 'a\\0refund\\n' | grep refund");
    assert_eq!(
        (r.out.as_str(), r.err.as_str(), r.status),
        ("", "grep: (standard input): binary file matches\n", 0)
    );
}

#[test]
fn rg_flavour() {
    assert_eq!(
        sh("rg Gift docs").out,
        "docs/policy.md:Gift cards are not refundable.\n"
    );
    assert_eq!(
        sh("rg -n Gift docs/policy.md").out,
        "8:Gift cards are not refundable.\n"
    );
    // Files come in directory order, each file's lines in order.
    let out = sh("cd docs && rg -i 'refund policy'").out;
    let mut files: Vec<&str> = out.split_inclusive('\n').collect();
    files.sort_by_key(|l| l.split(':').next().map(str::to_owned));
    assert_eq!(
        files.concat(),
        "my notes.md:refund policy review\npolicy.md:# Refund Policy\npolicy.md:Our refund policy is simple.\npolicy.md:Contact support for the refund policy details.\n"
    );
    assert_eq!(sh("rg -c '\\d+' data/customers.csv").out, "4\n");
    assert_eq!(sh("rg -l -g '*.csv' Paris").out, "data/customers.csv\n");
    assert_eq!(sh("rg nomatch").status, 1);
}

#[test]
fn partial_searches_say_so() {
    let f = common::Fixture::new();
    let mut fs = fixture_fs(&f).with_scan_limit(3);
    let r = run_on(&mut fs, "grep -rl refund /files");
    // The first three files in directory order were searched; whichever
    // they were, what was found is theirs and no more.
    let all = run_on(&mut fixture_fs(&f), "grep -rl refund /files").out;
    let found: Vec<&str> = r.out.lines().collect();
    assert!(found.len() <= 3, "{found:?}");
    assert!(
        found.iter().all(|l| all.lines().any(|a| a == *l)),
        "{found:?}"
    );
    assert_eq!(
        r.err,
        "grep: stopped after 3 of 21 files; matches are partial — narrow the paths\n"
    );
    assert_eq!(r.status, 0);
    let r = run_on(&mut fs, "grep -r refund /files/docs");
    assert_eq!(r.out, "");
    assert!(r.err.contains("stopped after 0 of 6 files"), "{}", r.err);
    assert_eq!(
        r.status, 2,
        "no match in a partial search is not a clean 'no match'"
    );
}

#[test]
fn tree_format() {
    // The branches of a UTF-8 locale, and (below) the C locale's, which
    // vfs-sh starts in.
    let r = sh("export LC_ALL=C.UTF-8; tree /files");
    let want = "/files
├── README.md
├── data
│\u{a0}\u{a0} ├── customers.csv
│\u{a0}\u{a0} ├── empty.txt
│\u{a0}\u{a0} ├── events.jsonl
│\u{a0}\u{a0} ├── orders.json
│\u{a0}\u{a0} └── sales.csv
├── docs
│\u{a0}\u{a0} ├── archive
│\u{a0}\u{a0} │\u{a0}\u{a0} ├── 2019-report.md
│\u{a0}\u{a0} │\u{a0}\u{a0} ├── handbook.zip
│\u{a0}\u{a0} │\u{a0}\u{a0} └── old.txt
│\u{a0}\u{a0} ├── guide.md
│\u{a0}\u{a0} ├── my notes.md
│\u{a0}\u{a0} └── policy.md
├── inbox
├── logs
│\u{a0}\u{a0} ├── app.log
│\u{a0}\u{a0} ├── big.log
│\u{a0}\u{a0} └── blob.bin
├── notes.txt
└── scripts
    ├── bashy.sh
    ├── count.sh
    ├── notes.sh
    └── report

7 directories, 20 files
";
    assert_eq!(r.out, want);
    assert_eq!(
        sh("tree -d -L 1 docs").out,
        "docs\n`-- archive\n\n2 directories\n"
    );
    assert_eq!(
        sh("tree -L 1 docs").out,
        "docs\n|-- archive\n|-- guide.md\n|-- my\\ notes.md\n`-- policy.md\n\n2 directories, 3 files\n"
    );
    assert_eq!(sh("tree inbox").out, "inbox\n\n0 directories, 0 files\n");
    let r = sh("tree nope");
    assert_eq!(
        (r.out.as_str(), r.status),
        ("nope  [error opening dir]\n\n0 directories, 0 files\n", 2)
    );
}

#[test]
fn help_lists_every_command() {
    let r = sh("help");
    for cmd in [
        "pwd", "cd", "ls", "cat", "find", "tree", "grep", "rg", "sed", "head", "tail", "wc",
        "sort", "uniq", "cut", "tr", "xargs", "echo", "printf", "stat", "basename", "dirname",
        "true", "false", "help",
    ] {
        assert!(
            r.out
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{cmd} "))),
            "help lacks {cmd}"
        );
    }
    let r = sh("ls --help");
    assert!(r.out.starts_with("usage: ls "), "{}", r.out);
    assert_eq!(r.status, 0);
}

#[test]
fn exit_ends_the_script() {
    let r = sh("echo a; exit 3; echo b");
    assert_eq!((r.out.as_str(), r.status), ("a\n", 3));
    assert_eq!(sh("exit 1 | true; echo still").out, "still\n");
}

/// Records, at every filesystem call, what the shell had written to its
/// real standard output so far.
struct Recorder {
    inner: DirFs,
    out: Rc<RefCell<Vec<u8>>>,
    seen: Vec<(String, String)>,
}

impl Recorder {
    fn note(&mut self, call: &str) {
        let out = String::from_utf8_lossy(&self.out.borrow()).into_owned();
        self.seen.push((call.to_owned(), out));
    }
}

impl Fs for Recorder {
    fn cwd(&mut self) -> String {
        self.note("cwd");
        self.inner.cwd()
    }
    fn set_cwd(&mut self, path: &str) -> Result<String, FsError> {
        self.note(&format!("set_cwd {path}"));
        self.inner.set_cwd(path)
    }
    fn metadata(&mut self, path: &str) -> Result<Meta, FsError> {
        self.note(&format!("metadata {path}"));
        self.inner.metadata(path)
    }
    fn read_dir(&mut self, path: &str) -> Result<Vec<Entry>, FsError> {
        self.note(&format!("read_dir {path}"));
        self.inner.read_dir(path)
    }
    fn read(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        self.note(&format!("read {path}"));
        self.inner.read(path)
    }
    fn read_range(&mut self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, FsError> {
        self.note(&format!("read_range {path}"));
        self.inner.read_range(path, offset, len)
    }
    fn open(&mut self, path: &str) -> Result<Opened, FsError> {
        self.note(&format!("open {path}"));
        self.inner.open(path)
    }
    fn grep(&mut self, roots: &[String], req: &GrepRequest) -> Result<GrepResult, FsError> {
        self.note(&format!("grep {}", roots.join(" ")));
        self.inner.grep(roots, req)
    }
}

/// A writer into the shared buffer.
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn output_streams_before_each_host_call() {
    let f = common::Fixture::new();
    let out = Rc::new(RefCell::new(Vec::new()));
    let mut fs = Recorder {
        inner: fixture_fs(&f),
        out: out.clone(),
        seen: Vec::new(),
    };
    let script =
        "echo one; cat README.md | grep -c e; ls -R docs; grep -l refund notes.txt docs/policy.md";
    let status = vfs_sh::run(
        &mut fs,
        script,
        Box::new(std::io::empty()),
        &mut Shared(out.clone()),
        &mut Vec::new(),
    );
    assert_eq!(status, 0);
    let at = |call: &str| -> String {
        fs.seen
            .iter()
            .find(|(c, _)| c == call)
            .map(|(_, o)| o.clone())
            .unwrap_or_else(|| panic!("no call {call}: {:?}", fs.seen))
    };
    // What ran before a call is already out when the host is called.
    assert_eq!(at("open README.md"), "one\n");
    // The listing of docs is out before its subdirectory is listed.
    assert!(
        at("read_dir docs/archive").ends_with("docs:\narchive\nguide.md\nmy notes.md\npolicy.md\n")
    );
    assert!(
        at("grep /files/notes.txt /files/docs/policy.md")
            .ends_with("docs/archive:\n2019-report.md\nhandbook.zip\nold.txt\n")
    );
}

/// A tiny deterministic generator for the fuzz test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// Characters for random scripts: every operator and quote, and some text.
const ALPHABET: &[u8] = b" \t\n'\"\\$`|&;<>()*?[]{}#~!-=abc/.,0123456789";

#[test]
fn no_input_panics() {
    let f = common::Fixture::new();
    let words = [
        "ls",
        "cat",
        "grep",
        "rg",
        "find",
        "tree",
        "sed",
        "head",
        "tail",
        "wc",
        "sort",
        "uniq",
        "cut",
        "tr",
        "xargs",
        "echo",
        "printf",
        "stat",
        "basename",
        "dirname",
        "cd",
        "pwd",
        "help",
        "true",
        "false",
        "exit",
        "-l",
        "-a",
        "-R",
        "-n",
        "-c",
        "-r",
        "-v",
        "-o",
        "-E",
        "-F",
        "-w",
        "-k",
        "-t",
        "-f",
        "-d",
        "-s",
        "-u",
        "-i",
        "-x",
        "-h",
        "-A",
        "-B",
        "-C",
        "-m",
        "-e",
        "-I",
        "-L",
        "-0",
        "-1",
        "-2",
        "+3",
        "-3",
        "--",
        "-name",
        "-type",
        "-size",
        "-mtime",
        "-maxdepth",
        "-newer",
        "(",
        ")",
        "!",
        "-o",
        "*",
        "*.md",
        "docs/*",
        "/files",
        ".",
        "..",
        "~",
        "|",
        "&&",
        "||",
        ";",
        "\n",
        "'a b'",
        "\"x\"",
        "'[:alpha:]'",
        "'[a-'",
        "'\\('",
        "'a\\{2'",
        "'%s %d %5.2f %*d %'",
        "'%b'",
        "'\\x41\\0101\\c'",
        "'1,3p'",
        "'/re/p'",
        "'$p'",
        "'s/a/b/'",
        "1,2",
        "-k2,1n",
        "-t,",
        "'[x*]'",
        "'a-z'",
        "'\\'",
        "{}",
        "README.md",
        "notes.txt",
        "nope",
        "data/sales.csv",
        "logs/big.log",
        "docs",
        "#",
        "$",
        "'$x'",
        "999999999999999999999",
        "-99999",
        "0",
        "''",
        "\\",
        "é",
        "[",
        "]",
        "?",
        "-I{}",
    ];
    let mut rng = Lcg(0x5eed);
    let mut fs = fixture_fs(&f);
    for _ in 0..3000 {
        let n = 1 + rng.next(8);
        let script: Vec<&str> = (0..n).map(|_| words[rng.next(words.len())]).collect();
        let script = script.join(" ");
        let r = run_on(&mut fs, &script);
        if r.status == 2 && r.out.is_empty() {
            let may_be_silent = script.contains("exit") || script.contains("-s");
            assert!(
                !r.err.is_empty() || may_be_silent,
                "{script:?} failed silently"
            );
        }
        // Scripts may cd away; come back.
        let _ = fs.set_cwd("/files");
    }
    for _ in 0..2000 {
        let len = rng.next(40);
        let bytes: Vec<u8> = (0..len)
            .map(|_| ALPHABET[rng.next(ALPHABET.len())])
            .collect();
        let script = String::from_utf8_lossy(&bytes).into_owned();
        let _ = run_on(&mut fs, &script);
        let _ = fs.set_cwd("/files");
    }
}

#[test]
fn many_operands_go_to_the_host_in_batches() {
    let dir = std::env::temp_dir().join(format!("vfs-sh-batches-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("creates the dir");
    for i in 0..150 {
        std::fs::write(dir.join(format!("f{i:03}.txt")), "x\n").expect("writes");
    }
    let mut fs = DirFs::new().mount("many", &dir).with_cwd("/many");
    let r = run_on(
        &mut fs,
        "grep -l x *.txt | wc -l; grep -c x f149.txt f000.txt",
    );
    assert_eq!(r.out, "150\nf149.txt:1\nf000.txt:1\n");
    let mut fs = DirFs::new()
        .mount("many", &dir)
        .with_cwd("/many")
        .with_scan_limit(100);
    let r = run_on(&mut fs, "grep -l x *.txt | tail -n 1");
    assert_eq!(r.out, "f099.txt\n");
    assert_eq!(
        r.err,
        "grep: stopped after 100 of 150 files; matches are partial — narrow the paths\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn xargs_inside_xargs_is_bounded() {
    let nested = |n: usize| format!("echo x | {}echo", "xargs ".repeat(n));
    let r = sh(&nested(16));
    assert_eq!((r.out.as_str(), r.status), ("x\n", 0), "{}", r.err);
    let r = sh(&nested(40));
    assert_eq!(r.out, "");
    assert_eq!(r.err, "xargs: more than 16 xargs inside each other\n");
    assert_eq!(r.status, 123);
}

#[test]
fn a_glob_that_multiplies_its_paths_is_refused_past_the_cap() {
    let dir = std::env::temp_dir().join(format!("vfs-sh-glob-cap-{}", std::process::id()));
    for i in 0..50 {
        std::fs::create_dir_all(dir.join(format!("d{i:02}"))).expect("creates the dir");
    }
    let mut fs = DirFs::new().mount("wide", &dir).with_cwd("/wide");
    // 50 × 50 paths: within the cap.
    let r = run_on(&mut fs, "echo */../* | wc -w");
    assert_eq!((r.out.as_str(), r.status), ("2500\n", 0), "{}", r.err);
    // 50 × 50 × 50: past it, refused before anything runs.
    let r = run_on(&mut fs, "echo */../*/../*; echo next");
    assert_eq!(
        r.err,
        "bash: line 1: */../*/../*: the glob matches more than 100000 paths\n"
    );
    assert_eq!(r.out, "next\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn awk_commands_run_in_vfs_sh_and_nest_boundedly() {
    // system() and pipes run vfs-sh's commands, never a host process.
    let r = sh("awk 'BEGIN { print system(\"frob\") }'");
    assert_eq!(r.out, "127\n");
    assert_eq!(r.err, "sh: 1: frob: not found\n");
    let r = sh("awk 'BEGIN { \"python3 -c 1\" | getline x; print \"[\" x \"]\" }'");
    assert_eq!(r.out, "[]\n");
    // A program that runs itself stops at the nesting limit instead of
    // exhausting the guest's stack.
    let f = common::Fixture::new();
    std::fs::write(
        f.files().join("self.awk"),
        "BEGIN { print system(\"awk -f self.awk\") }\n",
    )
    .expect("writes the program");
    let r = run_on(&mut fixture_fs(&f), "awk -f self.awk | tail -1");
    assert!(r.err.contains("shells inside each other"), "{}", r.err);
    assert_eq!(r.status, 0);
}

/// The project README quotes `help`; the host's suite checks the sandboxed
/// build against it, this checks the native one so a changed usage line
/// is caught by the crate's own tests.
#[test]
fn the_readme_quotes_help_as_it_is() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README");
    let shown = readme
        .split("`help` prints:\n\n```text\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the help block");
    let ran = sh("help");
    assert_eq!(ran.status, 0);
    assert_eq!(ran.out.trim_end(), shown);
}

#[test]
fn damaged_archives_fail_with_unzips_statuses() {
    // Every truncation and many single-byte corruptions of a real
    // archive: unzip reports each with one of Info-ZIP's statuses (0 when
    // the damage missed what it reads, 1 and 2 for a damaged member, 9 for
    // an archive it cannot read, 11 for names it did not find), never a
    // panic or a hang.
    let f = common::Fixture::new();
    let zip = std::fs::read(f.files().join("docs/archive/handbook.zip")).expect("the archive");
    let dir = f.files().join("damaged");
    std::fs::create_dir(&dir).expect("a directory for the damaged copies");
    for cut in (0..zip.len()).step_by(7) {
        std::fs::write(dir.join(format!("cut{cut}.zip")), &zip[..cut]).expect("writes a copy");
    }
    for at in (0..zip.len()).step_by(3) {
        let mut bad = zip.clone();
        bad[at] ^= 0xA5;
        std::fs::write(dir.join(format!("flip{at}.zip")), bad).expect("writes a copy");
    }
    let r = run_on(
        &mut fixture_fs(&f),
        "for z in damaged/*.zip; do for o in -t -l -p -Z1; do \
         unzip -qq $o $z >/dev/null 2>&1; echo \"$o $?\"; done; done | sort | uniq -c",
    );
    assert_eq!(r.status, 0, "{}", r.err);
    let mut runs = 0;
    for line in r.out.lines() {
        let mut words = line.split_whitespace();
        let (count, status) = (words.next(), words.nth(1));
        runs += count
            .and_then(|c| c.parse::<usize>().ok())
            .expect("a count");
        assert!(
            matches!(status, Some("0" | "1" | "2" | "9" | "11")),
            "{}",
            r.out
        );
    }
    assert_eq!(runs, 4 * (zip.len().div_ceil(7) + zip.len().div_ceil(3)));
    // The damage is seen: most copies fail.
    assert!(
        r.out.contains("-t 9") && r.out.contains("-t 2"),
        "{}",
        r.out
    );
}

/// Documents whose reader fails after their first bytes, as a backend
/// that goes away part way through a document would.
struct FailingReads(DirFs);

/// Three bytes, then an error.
struct Cut(std::io::Cursor<Vec<u8>>);

impl std::io::Read for Cut {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.0.read(buf)? {
            0 => Err(std::io::Error::other("backend unavailable")),
            n => Ok(n),
        }
    }
}

impl Fs for FailingReads {
    fn cwd(&mut self) -> String {
        self.0.cwd()
    }
    fn set_cwd(&mut self, path: &str) -> Result<String, FsError> {
        self.0.set_cwd(path)
    }
    fn metadata(&mut self, path: &str) -> Result<Meta, FsError> {
        self.0.metadata(path)
    }
    fn read_dir(&mut self, path: &str) -> Result<Vec<Entry>, FsError> {
        self.0.read_dir(path)
    }
    fn read(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        self.0.read(path)
    }
    fn read_range(&mut self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, FsError> {
        self.0.read_range(path, offset, len)
    }
    fn grep(&mut self, roots: &[String], req: &GrepRequest) -> Result<GrepResult, FsError> {
        self.0.grep(roots, req)
    }
    fn open(&mut self, path: &str) -> Result<Opened, FsError> {
        let (_, len) = self.0.open(path)?;
        let start = self.0.read_range(path, 0, 3)?;
        Ok((Box::new(Cut(std::io::Cursor::new(start))), len))
    }
}

#[test]
fn a_document_failing_part_way_as_standard_input_is_reported() {
    let f = common::Fixture::new();
    let mut fs = FailingReads(fixture_fs(&f));
    // (A plain `wc` at the end of a pipe has the pipe count for it, so
    // the reader here is in a group: it reads the document handed on.)
    for script in [
        "cat README.md | { wc -c; }",
        "wc -c < README.md",
        "cat README.md | cat | { wc -c; }",
    ] {
        let r = run_on(&mut fs, script);
        assert_eq!(
            r,
            Ran {
                out: "3\n".to_owned(),
                err: "bash: line 1: wc: read error: backend unavailable\n".to_owned(),
                status: 1,
            },
            "{script}"
        );
    }
}

#[test]
fn stat_f_is_refused_by_name() {
    // A file system's figures would be the host's: `stat -f` says what is
    // missing and fails, as a refused option does, instead of GNU's
    // "invalid option".
    for script in ["stat -f /files", "stat --file-system -c %T /files"] {
        let r = sh(script);
        assert_eq!(r.status, 1, "{script}");
        assert!(r.out.is_empty(), "{script}: {}", r.out);
        assert!(
            r.err.contains("-f (--file-system) is not available"),
            "{script}: {}",
            r.err
        );
    }
}

#[test]
fn help_names_each_command_and_builtin_it_is_asked_for() {
    // `help NAME` gives NAME's usage, as bash's `help -s` gives a
    // builtin's; a name that is neither fails with bash's message.
    let r = sh("help -s cd; help ls jq");
    assert_eq!(r.status, 0);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(lines[0], "cd: cd [-L|[-P [-e]] [-@]] [dir]");
    assert!(lines[1].starts_with("ls: ls [-l "), "{}", lines[1]);
    assert!(lines[2].starts_with("jq: jq [-r] "), "{}", lines[2]);
    assert_eq!(lines.len(), 3);
    let r = sh("help nosuch");
    assert_eq!(r.status, 1);
    assert!(r.out.is_empty());
    assert!(
        r.err.contains("help: no help topics match `nosuch'"),
        "{}",
        r.err
    );
}

#[test]
fn a_long_last_argument_is_not_kept_in_underscore() {
    // `$_` is the last argument, but one past 64 KiB (a document passed as
    // `echo "$x"`) is not kept: it would be a second copy of the document.
    let r = sh(
        "x=$(seq 100000); echo \"$x\" >/dev/null; echo \"[${#_}]\"; echo a b >/dev/null; echo \"$_\"",
    );
    assert_eq!((r.out.as_str(), r.status), ("[0]\nb\n", 0), "{}", r.err);
}

#[test]
fn date_set_is_refused_as_gnu_refuses_an_unprivileged_user() {
    // No differential case: bash run as root on a test machine would set
    // its clock. GNU date without the privilege says why, prints the date
    // it would have set, and ends with 1.
    let r = sh("date -u -s '2120-12-01 10:00'; echo \"status $?\"; date --set=@0 +%F");
    assert_eq!(
        r.out, "Sun Dec  1 10:00:00 UTC 2120\nstatus 1\n1970-01-01\n",
        "{}",
        r.err
    );
    assert_eq!(
        r.err
            .matches("date: cannot set date: Operation not permitted")
            .count(),
        2
    );
    let r = sh("date -s; date -s 'not a date'");
    assert_eq!((r.out.as_str(), r.status), ("", 1));
    assert!(
        r.err
            .contains("date: option requires an argument -- 's'\nTry 'date --help'"),
        "{}",
        r.err
    );
    assert!(
        r.err.contains("date: invalid date 'not a date'"),
        "{}",
        r.err
    );
}
