//! Follows the SDK README's "Getting started" literally: every `$ ` command
//! of its console block runs, in order, in one shell, in an empty directory
//! next to a checkout of this repository (`../vfsbox`), and what the README
//! shows each command printing is what it prints.

use std::path::Path;
use std::process::Command;

/// One command of the walkthrough and what the README shows it printing.
#[derive(Debug)]
struct Step {
    command: String,
    shown: Vec<String>,
}

fn steps(readme: &str) -> Vec<Step> {
    let section = readme
        .split("## Getting started")
        .nth(1)
        .expect("a Getting started section");
    let block = section
        .split("```console\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a console block");
    let mut steps: Vec<Step> = Vec::new();
    let mut heredoc: Option<String> = None;
    for line in block.lines() {
        if let Some(end) = &heredoc {
            let step = steps.last_mut().expect("a step");
            step.command.push('\n');
            step.command.push_str(line);
            if line == end {
                heredoc = None;
            }
        } else if let Some(command) = line.strip_prefix("$ ") {
            if let Some((_, marker)) = command.split_once("<<'") {
                heredoc = Some(marker.trim_end_matches('\'').to_owned());
            }
            steps.push(Step {
                command: command.to_owned(),
                shown: Vec::new(),
            });
        } else {
            steps
                .last_mut()
                .expect("output follows a command")
                .shown
                .push(line.to_owned());
        }
    }
    steps
}

/// Usage figures vary from run to run; everything else must match.
fn normalise(json: &str) -> String {
    let mut out = json.to_owned();
    for key in ["elapsed_ms", "fuel_consumed", "peak_memory_bytes"] {
        let pat = format!("\"{key}\":");
        if let Some(at) = out.find(&pat) {
            let start = at + pat.len();
            let end = out[start..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(out.len(), |i| start + i);
            out.replace_range(start..end, "N");
        }
    }
    out
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

#[test]
fn the_getting_started_steps_work_as_written() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository");
    let readme = std::fs::read_to_string(repo.join("guest-sdk/README.md")).expect("the SDK README");
    let steps = steps(&readme);
    assert!(
        steps.len() < 10,
        "the walkthrough takes {} commands",
        steps.len()
    );

    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(repo, dir.path().join("vfsbox")).expect("a checkout at ../vfsbox");
    let port = free_port().to_string();
    let mut script = String::from("set -e\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n");
    for (i, step) in steps.iter().enumerate() {
        let command = step.command.replace("8080", &port);
        script.push_str(&format!("echo '@@{i}@@'; echo '@@{i}@@' >&2\n{command}\n"));
        if command.starts_with("vfsbox serve") {
            // The README's reader waits a moment; the test waits for /healthz.
            script.push_str(&format!(
                "for _ in $(seq 100); do curl -sf http://127.0.0.1:{port}/healthz >/dev/null && break; sleep 0.1; done\n"
            ));
        }
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_vfsbox"))
        .parent()
        .expect("bin dir");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir.path())
        .env("PATH", path)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the walkthrough failed:\n{stdout}\n{stderr}"
    );

    let section = |text: &str, i: usize| -> String {
        let start = text
            .find(&format!("@@{i}@@\n"))
            .map(|s| s + format!("@@{i}@@\n").len());
        let start = start.unwrap_or_else(|| panic!("no output for step {i}"));
        let end = text[start..].find("@@").map_or(text.len(), |e| start + e);
        text[start..end].to_owned()
    };
    for (i, step) in steps.iter().enumerate() {
        if step.shown.is_empty() || step.command.contains("<<") {
            continue;
        }
        let (out, err) = (section(&stdout, i), section(&stderr, i));
        if step.command.starts_with("curl") {
            assert_eq!(
                normalise(out.trim_end()),
                normalise(&step.shown.join("\n")),
                "{}",
                step.command
            );
        } else if step.command.starts_with("vfsbox run") {
            assert_eq!(out, step.shown.join("\n") + "\n", "{}", step.command);
        } else {
            // Tools' chatter (cargo's, the server's) goes to stderr; the
            // README shows its gist.
            for line in &step.shown {
                assert!(
                    err.contains(line.trim()),
                    "{}: {line:?} not in {err:?}",
                    step.command
                );
            }
        }
    }
}
