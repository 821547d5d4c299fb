//! Runs the built script with the test kit: counts, errors, and the read
//! cap.

use vfsbox_host::testkit::{TestRun, build_guest};
use vfsbox_host::{Limit, Outcome};

fn run(args: &[&str], reads: u64) -> vfsbox_host::Report {
    TestRun::new(build_guest(env!("CARGO_MANIFEST_DIR")))
        .file("/files/a.txt", "one two\nthree\n")
        .file("/files/b.txt", "four\n")
        .cwd("/files")
        .args(args.iter().copied())
        .document_reads(reads)
        .run()
}

#[test]
fn counts_lines_words_and_bytes_with_a_total() {
    let report = run(&["a.txt", "b.txt"], 400);
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(
        report.stdout_text(),
        "      2       3      14 a.txt\n      1       1       5 b.txt\n      3       4      19 total\n"
    );
}

#[test]
fn reports_a_missing_file_and_goes_on() {
    let report = run(&["nope.txt", "b.txt"], 400);
    assert_eq!(report.exit_code(), Some(1));
    assert_eq!(
        report.stderr_text(),
        "wc: /files/nope.txt: no such file or directory\n"
    );
    assert!(report.stdout_text().contains("b.txt"));
}

#[test]
fn stops_at_the_read_cap_keeping_what_it_printed() {
    let report = run(&["a.txt", "b.txt"], 1);
    assert_eq!(report.limit(), Some(Limit::DocumentReads));
    assert_eq!(report.stdout_text(), "      2       3      14 a.txt\n");
}
