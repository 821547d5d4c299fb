//! Counts per file, and a partial answer that says so when the scan budget
//! runs out.

use vfsbox_host::Outcome;
use vfsbox_host::testkit::{TestRun, build_guest};

fn tree() -> TestRun {
    (1..=5).fold(
        TestRun::new(build_guest(env!("CARGO_MANIFEST_DIR"))),
        |r, i| {
            r.file(
                &format!("/files/doc{i}.md"),
                "refund\nRefund policy\nnothing\n",
            )
        },
    )
}

#[test]
fn counts_matches_in_every_file_within_the_budget() {
    let report = tree().args(["-i", "refund", "/files"]).run();
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(
        report.stdout_text(),
        "    2 /files/doc1.md\n    2 /files/doc2.md\n    2 /files/doc3.md\n    2 /files/doc4.md\n    2 /files/doc5.md\n   10 total in 5 files\n"
    );
    assert_eq!(report.stderr_text(), "");
}

#[test]
fn says_the_counts_are_partial_when_the_scan_budget_runs_out() {
    let report = tree()
        .args(["-i", "refund", "/files"])
        .limits(|l| l.scan_files = 2)
        .run();
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(
        report.stdout_text(),
        "    2 /files/doc1.md\n    2 /files/doc2.md\n    4 total in 2 files\n"
    );
    assert_eq!(
        report.stderr_text(),
        "grep-count: partial: stopped after 2 of 5 files (the scan budget is spent); narrow the roots\n"
    );
    assert_eq!(report.usage.files_scanned, 2);
}
