//! The README's `curl` sessions, replayed against the demo server: every
//! command shown runs as written (with the server's address and the built
//! `hello.wasm`), and prints what the README says it prints.
//!
//! In the README's expected output, `...` stands for text left out, and
//! figures that vary from run to run (times, fuel, sizes, script ids) are
//! compared by their shape only.

use std::process::Command;

use crate::server::ServeProcess;

/// One `$ command` of a console block and the output shown under it.
struct Step {
    command: String,
    expected: String,
}

/// The steps of every console block that talks to the service.
fn sessions(readme: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    for block in readme.split("```console\n").skip(1) {
        let block = block.split("\n```").next().unwrap_or_default();
        if !block.contains("$ curl") {
            continue;
        }
        for chunk in block.split("$ ").skip(1) {
            let (command, expected) = chunk.split_once('\n').unwrap_or((chunk, ""));
            steps.push(Step {
                command: command.to_owned(),
                expected: expected.trim_end().to_owned(),
            });
        }
    }
    steps
}

/// Replaces the figures of `keys` (`"key":123`) and script ids
/// (`sha256:<hex>`) by placeholders.
fn shape(text: &str) -> String {
    const KEYS: &[&str] = &[
        "elapsed_ms",
        "fuel_consumed",
        "peak_memory_bytes",
        "size",
        "bytes_scanned",
    ];
    let mut out = text.to_owned();
    for key in KEYS {
        let marker = format!("\"{key}\":");
        let mut result = String::new();
        let mut rest = out.as_str();
        while let Some(i) = rest.find(&marker) {
            let after = &rest[i + marker.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            result.push_str(&rest[..i + marker.len()]);
            result.push('N');
            rest = &after[digits..];
        }
        result.push_str(rest);
        out = result;
    }
    let mut result = String::new();
    let mut rest = out.as_str();
    while let Some(i) = rest.find("sha256:") {
        let after = &rest[i + 7..];
        let hex = after.bytes().take_while(|b| b.is_ascii_hexdigit()).count();
        result.push_str(&rest[..i]);
        result.push_str("sha256:ID");
        rest = after[hex..].strip_prefix("...").unwrap_or(&after[hex..]);
    }
    result.push_str(rest);
    result
}

/// Whether `actual` is what `expected` shows: equal in shape, where each
/// `...` of `expected` may stand for any text.
fn matches(expected: &str, actual: &str) -> bool {
    let (expected, actual) = (shape(expected), shape(actual));
    let mut parts = expected.split("...");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    if parts.is_empty() {
        return rest.is_empty();
    }
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[test]
fn the_readme_sessions_run_as_shown_against_the_demo_server() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README");
    let steps = sessions(&readme);
    assert!(
        steps.len() >= 10,
        "the README shows {} curl steps",
        steps.len()
    );
    let server = ServeProcess::start(&[]);
    // The session's `/readyz` is the one of a host done warming up.
    server.wait_ready();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(vfsbox_test_artifacts::HELLO, dir.path().join("hello.wasm")).expect("copy");
    let address = server.addr.to_string();
    let mut script_id = None::<String>;
    for step in &steps {
        let mut command = step.command.replace("localhost:8080", &address);
        if let Some(id) = &script_id {
            // The README shortens the id it got: use the one this run got.
            if let Some(start) = command.find("sha256:") {
                let end = command[start..]
                    .find("...")
                    .map_or(command.len(), |e| start + e + 3);
                command.replace_range(start..end, id);
            }
        }
        let out = Command::new("bash")
            .args(["-c", &command])
            .current_dir(dir.path())
            .output()
            .expect("bash runs");
        let actual = String::from_utf8_lossy(&out.stdout).trim_end().to_owned();
        assert!(
            matches(&step.expected, &actual),
            "$ {}\nthe README shows:\n{}\nit printed:\n{actual}",
            step.command,
            step.expected
        );
        if step.command.contains("PUT") {
            let body: serde_json::Value = serde_json::from_str(&actual).expect("json");
            script_id = Some(body["id"].as_str().expect("id").to_owned());
        }
    }
}

#[test]
fn shapes_and_elisions_compare_as_the_readme_means_them() {
    assert!(matches(
        r#"{"id":"sha256:b7d1...","size":87684}"#,
        r#"{"id":"sha256:0123abcd","size":90000}"#
    ));
    assert!(matches(
        r#"{"a":"hello, x!\n...}"#,
        r#"{"a":"hello, x!\nmore}"#
    ));
    assert!(!matches(r#"{"a":"hello"}"#, r#"{"a":"hullo"}"#));
    assert!(!matches("ok", "ok and more"));
}

/// The README's local runs (`$ vfsbox run target/.../NAME.wasm ...`,
/// `$ vfsbox sh ...` and `$ vfsbox py ...`), replayed with the built examples over the demo
/// documents: each prints exactly what the README shows.
#[test]
fn the_readme_local_runs_print_what_it_shows() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README");
    let built: &[(&str, &str)] = &[
        ("hello", vfsbox_test_artifacts::HELLO),
        ("wc", vfsbox_test_artifacts::WC),
        ("grep-count", vfsbox_test_artifacts::GREP_COUNT),
        ("json-fields", vfsbox_test_artifacts::JSON_FIELDS),
        ("budget-aware", vfsbox_test_artifacts::BUDGET_AWARE),
        ("csv-totals", vfsbox_test_artifacts::CSV_TOTALS),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let release = dir.path().join("target/wasm32-wasip2/release");
    std::fs::create_dir_all(&release).expect("mkdir");
    for (name, wasm) in built {
        std::fs::copy(wasm, release.join(format!("{name}.wasm"))).expect("copy");
    }
    let vfsbox = std::path::Path::new(env!("CARGO_BIN_EXE_vfsbox"));
    let path = format!(
        "{}:{}",
        vfsbox.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut replayed = 0;
    for block in readme.split("```console\n").skip(1) {
        let block = block.split("\n```").next().unwrap_or_default();
        for chunk in block.split("$ ").skip(1) {
            let (command, expected) = chunk.split_once('\n').unwrap_or((chunk, ""));
            let local = ["vfsbox run target/", "vfsbox sh ", "vfsbox py "];
            if !local.iter().any(|l| command.starts_with(l)) {
                continue;
            }
            // The block's last line lost its newline to the split.
            let expected = format!("{}\n", expected.trim_end_matches('\n'));
            let out = Command::new("bash")
                .args(["-c", command])
                .current_dir(dir.path())
                .env("PATH", &path)
                .output()
                .expect("bash runs");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                expected.as_str(),
                "$ {command}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            replayed += 1;
        }
    }
    assert!(replayed >= 5, "the README shows {replayed} local runs");
}
