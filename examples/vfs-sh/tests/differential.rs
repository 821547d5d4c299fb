//! The native differential test: every case of `cases.txt` runs through
//! vfs-sh (over a real-directory `Fs` mapping `/files` to a fixture tree)
//! and through bash with GNU tools, and the standard outputs and exit
//! statuses must match (after the normalisations a case declares for its
//! intended differences).

mod common;

use std::path::Path;

use common::{Outcome, compare, gnu, installed};
use vfs_sh::cases::{Case, cases};
use vfs_sh::dirfs::DirFs;

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
