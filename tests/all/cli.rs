//! `vfsbox run` from the command line, exit codes included.

use std::process::{Command, Output};

const VFSBOX: &str = env!("CARGO_BIN_EXE_vfsbox");

fn vfsbox(args: &[&str]) -> Output {
    Command::new(VFSBOX)
        .args(args)
        .output()
        .expect("vfsbox runs")
}

fn run_fixture(extra: &[&str], script_args: &[&str]) -> Output {
    let mut args = vec!["run", vfsbox_test_artifacts::MISBEHAVE];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(script_args);
    vfsbox(&args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn prints_the_scripts_output_and_exits_with_its_code() {
    let out = run_fixture(&[], &["ok"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "ok\n");
    let out = run_fixture(&[], &["exit", "7"]);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(text(&out.stdout), "exiting with 7\n");
}

#[test]
fn reads_documents_from_a_mounted_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    std::fs::write(dir.path().join("sub/doc.txt"), "from disk\n").expect("write");
    let mount = format!("/files={}", dir.path().display());
    let out = run_fixture(
        &["--mount", &mount, "--cwd", "/files/sub"],
        &["read", "doc.txt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "from disk\n");
}

#[test]
fn a_limit_prints_one_line_and_exits_124() {
    let out = run_fixture(&["--deadline", "300ms"], &["spin"]);
    assert_eq!(out.status.code(), Some(124));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("vfsbox: limit exceeded: deadline"),
        "{stderr}"
    );
    let out = run_fixture(&["--fuel", "1000000"], &["spin"]);
    assert_eq!(out.status.code(), Some(124));
    assert!(text(&out.stderr).contains("limit exceeded: fuel"));
    let out = run_fixture(&["--memory", "16MiB"], &["alloc", "33554432"]);
    assert_eq!(out.status.code(), Some(124));
    assert!(text(&out.stderr).contains("limit exceeded: memory"));
}

#[test]
fn a_trap_exits_134() {
    let out = run_fixture(&[], &["stack"]);
    assert_eq!(out.status.code(), Some(134));
    assert!(text(&out.stderr).contains("vfsbox: the script trapped"));
}

#[test]
fn a_file_that_is_not_a_script_exits_125() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("not.wasm");
    std::fs::write(&path, "hello").expect("write");
    let out = vfsbox(&["run", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(125));
    assert!(text(&out.stderr).contains("not a WebAssembly binary"));
    let out = vfsbox(&["run", "/no/such/file.wasm"]);
    assert_eq!(out.status.code(), Some(125));
}

#[test]
fn bad_flags_are_refused_with_a_message() {
    let out = vfsbox(&[
        "run",
        vfsbox_test_artifacts::MISBEHAVE,
        "--deadline",
        "soon",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not a valid duration"));
    let out = vfsbox(&[
        "run",
        vfsbox_test_artifacts::MISBEHAVE,
        "--mount",
        "files=/tmp",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = run_fixture(&["--cwd", "/nowhere"], &["ok"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(text(&out.stderr).contains("bad working directory"));
}

#[test]
fn vfsbox_new_scaffolds_a_script_that_builds_and_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(VFSBOX)
        .args(["new", "doc-lister"])
        .current_dir(dir.path())
        .output()
        .expect("vfsbox new runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let krate = dir.path().join("doc-lister");
    for file in ["Cargo.toml", "src/main.rs", "tests/script.rs", ".gitignore"] {
        assert!(krate.join(file).exists(), "{file} was not written");
    }
    let test = std::fs::read_to_string(krate.join("tests/script.rs")).expect("test");
    assert!(
        test.contains("vfsbox_host::testkit"),
        "the scaffold's test uses the test kit"
    );
    let built = Command::new("cargo")
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&krate)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("cargo runs");
    assert!(built.status.success(), "{}", text(&built.stderr));
    let wasm = krate.join("target/wasm32-wasip2/release/doc-lister.wasm");
    let out = vfsbox(&[
        "run",
        wasm.to_str().expect("utf-8"),
        "--",
        "/files/policies",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "   317  data-retention.md\n   551  refund-policy.md\n   308  travel-policy.md\n"
    );
    // A second scaffold of the same name is refused, as is a bad name.
    for name in ["doc-lister", "../up"] {
        let out = Command::new(VFSBOX)
            .args(["new", name])
            .current_dir(dir.path())
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(125), "{name}");
    }
}
