//! The script stops cleanly, with a partial answer, where a careless one
//! would be ended by the host.

use vfsbox_host::Outcome;
use vfsbox_host::testkit::{TestRun, build_guest};

fn tree(run: TestRun) -> TestRun {
    (1..=6).fold(run, |r, i| {
        r.file(&format!("/files/doc{i}.md"), format!("# Doc {i}\nbody\n"))
    })
}

#[test]
fn reads_everything_when_the_budget_allows() {
    let report = tree(TestRun::new(build_guest(env!("CARGO_MANIFEST_DIR"))))
        .arg("/files")
        .run();
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.stdout_text().lines().count(), 6);
}

#[test]
fn stops_before_the_read_cap_with_a_partial_answer() {
    let report = tree(TestRun::new(build_guest(env!("CARGO_MANIFEST_DIR"))))
        .arg("/files")
        .document_reads(4)
        .run();
    assert_eq!(
        report.outcome,
        Outcome::Exited { exit_code: 0 },
        "{}",
        report.stderr_text()
    );
    assert_eq!(
        report.stdout_text(),
        "/files/doc1.md: # Doc 1\n/files/doc2.md: # Doc 2\n/files/doc3.md: # Doc 3\n/files/doc4.md: # Doc 4\n\
         partial: read 4 of 6 documents before the budget ran out\n"
    );
}
