//! Runs the built script with the test kit, over an in-memory tree.

use vfsbox_host::Outcome;
use vfsbox_host::testkit::{TestRun, build_guest};

#[test]
fn greets_its_arguments_and_lists_the_mounts() {
    let wasm = build_guest(env!("CARGO_MANIFEST_DIR"));
    let report = TestRun::new(&wasm)
        .file("/files/a.txt", "alpha")
        .file("/archive/old.txt", "old")
        .cwd("/files")
        .args(["test", "kit"])
        .run();
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(
        report.stdout_text(),
        "hello, test kit!\ncwd: /files\nmount: /archive\nmount: /files\n"
    );
}
