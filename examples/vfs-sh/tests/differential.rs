//! The native differential test: every case of `cases.txt` runs through
//! vfs-sh (over a real-directory `Fs` mapping `/files` to a fixture tree)
//! and through bash with GNU tools, and the standard outputs and exit
//! statuses must match (after the normalisations a case declares for its
//! intended differences).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use vfs_sh::cases::{Case, cases, normalise_all};
use vfs_sh::dirfs::DirFs;

/// What one side produced.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    stdout: String,
    stderr: String,
    status: u8,
}

fn ours(root: &Path, case: &Case) -> Outcome {
    let mut fs = DirFs::new().mount("files", root).with_cwd("/files");
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = vfs_sh::run(
        &mut fs,
        &case.script,
        Box::new(std::io::empty()),
        &mut out,
        &mut err,
    );
    Outcome {
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        status,
    }
}

fn gnu(root: &Path, case: &Case) -> Outcome {
    let real = root.to_str().expect("a UTF-8 temp path");
    let script = case.script.replace("/files", real);
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(root)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LC_ALL", "C.UTF-8")
        .env("TZ", "UTC")
        .env("HOME", root)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    Outcome {
        stdout: String::from_utf8_lossy(&out.stdout).replace(real, "/files"),
        stderr: String::from_utf8_lossy(&out.stderr).replace(real, "/files"),
        status: out.status.code().map_or(255, |c| c as u8),
    }
}

fn installed(tool: &str) -> bool {
    Command::new("bash")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
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
        let a = ours(root, case);
        let b = gnu(root, case);
        let (na, nb) = (
            normalise_all(case, &a.stdout),
            normalise_all(case, &b.stdout),
        );
        compared += 1;
        let stderr_differs = case.compare_stderr && a.stderr != b.stderr;
        if na != nb || a.status != b.status || stderr_differs {
            failures.push(format!(
                "--- {}: {}\nvfs-sh (status {}):\n{}{}\nGNU (status {}):\n{}{}",
                case.name, case.script, a.status, na, a.stderr, b.status, nb, b.stderr
            ));
        }
    }
    eprintln!(
        "differential: {compared} cases compared, {} skipped {skipped:?}",
        skipped.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {compared} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
