//! The native differential test: every case of `cases.txt` runs through
//! vfs-sh (over a real-directory `Fs` mapping `/files` to a fixture tree)
//! and through bash with GNU tools, and the standard outputs and exit
//! statuses must match (after the normalisations a case declares for its
//! intended differences).

mod common;

use std::path::Path;

use common::{Outcome, compare, gnu, installed, shown};
use vfs_sh::cases::{Case, cases};
use vfs_sh::dirfs::DirFs;

fn ours(root: &Path, case: &Case) -> Outcome {
    run_in(root, &case.script)
}

/// Runs a script through vfs-sh over a real-directory `Fs` mapping
/// `/files` to `root`, in `/files`.
fn run_in(root: &Path, script: &str) -> Outcome {
    let mut fs = DirFs::new().mount("files", root).with_cwd("/files");
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = vfs_sh::run(
        &mut fs,
        script,
        Box::new(std::io::empty()),
        &mut out,
        &mut err,
    );
    Outcome {
        stdout: shown(&out),
        stderr: shown(&err),
        status,
    }
}

#[test]
fn vfs_sh_matches_gnu() {
    let fixture = common::Fixture::new();
    let root = fixture.files();
    let all = cases();
    assert!(all.len() >= 80, "the table has {} cases", all.len());
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    let mut compared = 0;
    for case in &all {
        if let Some(missing) = case.requires.iter().find(|t| !installed(t)) {
            skipped.push(format!("{} (needs {missing})", case.name));
            continue;
        }
        compared += 1;
        failures.extend(compare(case, &ours(root, case), &gnu(root, &case.script)));
    }
    eprintln!(
        "differential: {compared} cases compared, {} skipped {skipped:?}",
        skipped.len()
    );
    // A machine without a tool may skip its cases; CI, which installs
    // every tool, may not.
    assert!(
        skipped.is_empty() || std::env::var_os("CI").is_none(),
        "CI must compare every case; skipped {skipped:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {compared} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Commands that go through a document a line or a piece at a time read
/// it in 1 MiB pieces: over a document of several pieces, with lines,
/// runs of equal lines and a base64 group cut at the pieces' bounds,
/// they must give what GNU gives over the whole file. The document is
/// large enough (over 4 MiB) that `grep` searches it that way too, among
/// smaller operands it leaves to the host.
#[test]
fn documents_larger_than_a_piece_match_gnu() {
    let dir = std::env::temp_dir().join(format!("vfs-sh-pieces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut text = String::new();
    let mut i = 0u64;
    while text.len() < (9 << 20) / 2 {
        let line = match i % 97 {
            // A long line, and runs of equal lines.
            0 => "x\ty ".repeat(700 + (i % 13) as usize),
            1..=3 => format!("same {}", i / 97),
            k => format!(
                "{k}\tline {i} of\tthe  document {}",
                "ab ".repeat((i % 29) as usize)
            ),
        };
        text.push_str(&line);
        text.push('\n');
        i += 1;
    }
    text.push_str("last line without a newline");
    std::fs::write(dir.join("big.txt"), &text).expect("write");
    std::fs::write(dir.join("small.txt"), "same 1\nline of the document\n").expect("write");
    let scripts = [
        "nl -ba big.txt",
        "rev big.txt",
        "fold -w 7 big.txt",
        "fold -s -w 30 big.txt",
        "expand -t 3 big.txt",
        "unexpand -a big.txt",
        "uniq -c big.txt",
        "uniq -D big.txt",
        "uniq -u big.txt | wc -l",
        "base64 big.txt",
        "base64 -w 0 big.txt | base64 -d | cmp - big.txt && echo same",
        "cksum big.txt; sum big.txt",
        "cut -c3-9 big.txt",
        "awk '{n += NF} END {print NR, n}' big.txt",
        "sed -n '$p' big.txt",
        "wc big.txt",
        // The dumps go a piece at a time, their rows, squeezed repeats and
        // windows (`-j -N`, `-s -l`, `-s -n`) across the piece bounds and
        // from one operand into the next.
        "od -c big.txt big.txt",
        "od -A x -t x1z -j 1048570 -N 30 big.txt",
        "od -A d -t d2 -j 2621000 -N 2000 big.txt big.txt",
        "xxd big.txt",
        "xxd -a -s 1048570 -l 60 big.txt",
        "xxd -s -100 big.txt; xxd -p -c 7 -s 2097150 -l 9 big.txt",
        "xxd -i -c 5 big.txt | tail -4",
        "xxd -e big.txt | tail -3; xxd -b -c 5 big.txt | tail -2",
        "hexdump -C big.txt",
        "hexdump -s 1048570 -n 30 -C big.txt big.txt",
        "hd -s 2621000 big.txt big.txt | tail -3",
        "strings -t x big.txt",
        "strings -n 600 big.txt | wc -l",
        // `grep` over a large document: its lines as it goes, among the
        // host's answers for the small one, in the operands' order.
        "grep -n same big.txt | tail -5; grep same small.txt big.txt small.txt | tail -3",
        "grep -c line big.txt small.txt; grep -v document big.txt | cksum",
        // A search of directories: a page of each document's lines from
        // the host, the rest read on in the guest.
        "grep -rn same . | tail -5; grep -r -v document . | cksum; grep -r -m 1500 line . | wc -l",
        "grep -o 'x.y' big.txt | wc -l; grep -w of big.txt | wc -c",
        "grep -m 3 -n same big.txt; grep -H 'without a newline' big.txt",
        "grep -l same big.txt small.txt; grep -L same big.txt small.txt; grep -q same big.txt; echo $?",
        "grep --include='*.md' same big.txt small.txt; echo $?; grep -h -i SAME big.txt | wc -l",
        "grep -P 'same \\d+$' big.txt | wc -l; grep -c -P 'same \\d+$' big.txt",
        "grep -x nothing big.txt; echo $?; grep -E 'same (1|2)[0-9]$' big.txt",
        // `cmp` compares a piece of each input at a time.
        "cmp big.txt <(cat big.txt; echo more); cmp -l big.txt <(tr a b < big.txt) | tail -3",
        "cmp big.txt <(sed '$s/last/LAST/' big.txt); cmp -n 2000000 big.txt <(sed '$s/last/LAST/' big.txt) && echo prefix",
    ];
    let mut failures = Vec::new();
    for script in scripts {
        let Outcome {
            stdout: ours,
            status,
            ..
        } = run_in(&dir, script);
        let theirs = gnu(&dir, script);
        if ours != theirs.stdout || status != theirs.status {
            let at = ours
                .lines()
                .zip(theirs.stdout.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            failures.push(format!(
                "{script}: status {status} vs {}, {} vs {} bytes, first differing line {at}: {:?} vs {:?}",
                theirs.status,
                ours.len(),
                theirs.stdout.len(),
                ours.lines().nth(at).unwrap_or(""),
                theirs.stdout.lines().nth(at).unwrap_or(""),
            ));
        }
    }
    std::fs::remove_dir_all(&dir).expect("cleanup");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
