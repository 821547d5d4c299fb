//! Every example, built for wasm32-wasip2, run through `vfsbox run` against
//! the built-in demo documents.

use std::process::Command;

const VFSBOX: &str = env!("CARGO_BIN_EXE_vfsbox");

/// Runs `vfsbox run WASM [flags] -- args` and returns (exit code, stdout,
/// stderr).
fn run(wasm: &str, flags: &[&str], args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(VFSBOX)
        .args(["run", wasm])
        .args(flags)
        .arg("--")
        .args(args)
        .output()
        .expect("vfsbox runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn hello_greets_and_lists_the_mounts() {
    let (code, out, _) = run(vfsbox_test_artifacts::HELLO, &[], &["agents"]);
    assert_eq!(code, Some(0));
    assert_eq!(out, "hello, agents!\ncwd: /\nmount: /files\n");
}

#[test]
fn wc_counts_like_wc() {
    let (code, out, _) = run(
        vfsbox_test_artifacts::WC,
        &["--cwd", "/files"],
        &["README.md", "policies/refund-policy.md"],
    );
    assert_eq!(code, Some(0));
    // What GNU wc prints for the same files in examples/data.
    assert_eq!(
        out,
        "     13      77     534 README.md\n     21      96     551 policies/refund-policy.md\n     34     173    1085 total\n"
    );
    let (code, _, err) = run(vfsbox_test_artifacts::WC, &[], &["/files/nope.md"]);
    assert_eq!(
        (code, err.as_str()),
        (Some(1), "wc: /files/nope.md: no such file or directory\n")
    );
}

#[test]
fn grep_count_counts_matches_per_file_and_says_when_partial() {
    let (code, out, err) = run(
        vfsbox_test_artifacts::GREP_COUNT,
        &[],
        &["-i", "refund", "/files"],
    );
    assert_eq!(code, Some(0), "{err}");
    // `grep -rci refund examples/data`, without the zeros.
    assert_eq!(
        out,
        "    1 /files/README.md\n    1 /files/meetings/2026-10-05-product.md\n    1 /files/meetings/2026-11-02-product.md\n\
         \x20   9 /files/policies/refund-policy.md\n    1 /files/reports/q2-2026.csv\n    1 /files/reports/q3-2026-summary.md\n\
         \x20   1 /files/reports/q3-2026.csv\n    2 /files/support/faq.md\n   17 total in 18 files\n"
    );
    assert_eq!(err, "");
}

#[test]
fn json_fields_reads_json_inside_the_sandbox() {
    let (code, out, _) = run(
        vfsbox_test_artifacts::JSON_FIELDS,
        &[],
        &[
            "/files/customers",
            "name",
            "plan",
            "contact.email",
            "missing",
        ],
    );
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "name\tplan\tcontact.email\tmissing\nAcme Corp\tannual\trosa@acme.example\t-\n\
         Globex\tmonthly\thank@globex.example\t-\nInitech\tannual\tbill@initech.example\t-\n"
    );
}

#[test]
fn budget_aware_stops_cleanly_before_the_read_cap() {
    let (code, out, err) = run(
        vfsbox_test_artifacts::BUDGET_AWARE,
        &["--document-reads", "5"],
        &["/files"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 6);
    assert!(out.starts_with("/files/README.md: # Northwind Handbook\n"));
    assert!(out.ends_with("partial: read 5 of 18 documents before the budget ran out\n"));
    let (code, out, _) = run(
        vfsbox_test_artifacts::BUDGET_AWARE,
        &[],
        &["/files/policies"],
    );
    assert_eq!(code, Some(0));
    assert_eq!(
        out.lines().count(),
        3,
        "the whole directory fits the default budget"
    );
}

/// `walkdir` and `csv`, unchanged, read the documents through `std::fs` as
/// they read a directory on disk: the guest's output is the same program's,
/// built for the host, over `examples/data`.
#[test]
fn csv_totals_reads_with_ordinary_crates_as_the_native_build_does() {
    let args = ["/files/reports", "revenue_eur", "refunds_eur"];
    let (code, out, err) = run(vfsbox_test_artifacts::CSV_TOTALS, &[], &args);
    assert_eq!(code, Some(0), "{err}");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/data/reports");
    let native = Command::new(vfsbox_test_artifacts::CSV_TOTALS_NATIVE)
        .arg(data)
        .args(&args[1..])
        .output()
        .expect("the native build runs");
    assert!(native.status.success());
    assert_eq!(out, String::from_utf8_lossy(&native.stdout));
    assert!(out.starts_with("q2-2026.csv: "), "{out}");
    // A relative walk from the working directory, through the mount's
    // preopen.
    let (code, relative, _) = run(
        vfsbox_test_artifacts::CSV_TOTALS,
        &[],
        &["files/reports", "revenue_eur", "refunds_eur"],
    );
    assert_eq!((code, relative), (Some(0), out));
}
