//! `vfs-sh` through the service: `POST /v1/sh` and `vfsbox sh`, with the same
//! slot, limits and audit as any other run.

use std::time::Duration;

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use vfsbox_host::vfs::MemoryBackend;
use vfsbox_host::{AuditLog, Limits};

use crate::common::*;
use crate::server::*;

async fn sh(c: &Client, server: &TestServer, body: Value) -> (StatusCode, Value) {
    let r = c
        .post(server.url("/v1/sh"))
        .json(&body)
        .send()
        .await
        .expect("response");
    let status = r.status();
    (status, r.json().await.expect("json"))
}

fn limits() -> Limits {
    Limits {
        deadline: Duration::from_secs(10),
        fuel: SPIN_FUEL,
        ..Limits::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_script_runs_and_reports_where_it_ended() {
    let server = TestServer::anonymous(limits(), vfs_of(small_tree()));
    let c = Client::new();
    let (status, body) = sh(
        &c,
        &server,
        json!({"script": "cd notes && grep -n TODO *.txt | sort", "cwd": "/files"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["outcome"], "exited");
    assert_eq!(body["exit_code"], 0);
    assert_eq!(body["stdout"], "b.txt:1:beta TODO\nc.txt:2:TODO: delta\n");
    assert_eq!(body["cwd"], "/files/notes");
    let (_, body) = sh(
        &c,
        &server,
        json!({"script": "pwd; ls", "cwd": "/files/notes"}),
    )
    .await;
    assert_eq!(body["stdout"], "/files/notes\nb.txt\nc.txt\n");
    let (_, body) = sh(
        &c,
        &server,
        json!({"script": "grep -q nothing /files/a.txt"}),
    )
    .await;
    assert_eq!(body["exit_code"], 1, "grep's own exit code");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_scripts_get_the_documented_errors() {
    let server = TestServer::anonymous(limits(), vfs_of(small_tree()));
    let c = Client::new();
    let (status, body) = sh(
        &c,
        &server,
        json!({"script": "cat /files/a.txt > /files/b.txt"}),
    )
    .await;
    assert_eq!(
        (status, body["exit_code"].as_i64()),
        (StatusCode::OK, Some(1))
    );
    assert_eq!(
        body["stderr"],
        "bash: line 1: /files/b.txt: cannot write: the filesystem is read-only (only /dev/null, /dev/stdout and /dev/stderr take output)\n"
    );
    let (_, body) = sh(
        &c,
        &server,
        json!({"script": "echo hi >> /files/log; echo went on"}),
    )
    .await;
    assert_eq!(body["exit_code"], 0);
    assert_eq!(body["stdout"], "went on\n");
    let (_, body) = sh(
        &c,
        &server,
        json!({"script": "ls /files/nope 2>/dev/null || echo none"}),
    )
    .await;
    assert_eq!(
        (body["stdout"].as_str(), body["stderr"].as_str()),
        (Some("none\n"), Some(""))
    );
    let (status, body) = sh(&c, &server, json!({"script": "curl http://example.com"})).await;
    assert_eq!(
        (status, body["exit_code"].as_i64()),
        (StatusCode::OK, Some(127))
    );
    assert_eq!(
        body["stderr"],
        "bash: line 1: curl: command not found\nnote: vfs-sh has no curl: the sandbox has no network\n"
    );
    for (body, status, code) in [
        (
            json!({"script": "x".repeat(4097)}),
            StatusCode::BAD_REQUEST,
            "script_too_long",
        ),
        (
            json!({"script": "   "}),
            StatusCode::BAD_REQUEST,
            "empty_script",
        ),
        (
            json!({"script": "ls", "cwd": "/files/nowhere"}),
            StatusCode::BAD_REQUEST,
            "bad_cwd",
        ),
        (
            json!({"script": "ls", "cwd": "/files/a.txt"}),
            StatusCode::BAD_REQUEST,
            "bad_cwd",
        ),
        (
            json!({"script": "ls", "shell": "bash"}),
            StatusCode::BAD_REQUEST,
            "bad_json",
        ),
        (
            json!({"script": "ls", "limits": {"document_reads": 1000}}),
            StatusCode::BAD_REQUEST,
            "limit_too_high",
        ),
    ] {
        let (got, b) = sh(&c, &server, body.clone()).await;
        assert_eq!(
            (got, b["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
    }
    let (status, _) = sh(&c, &server, json!({"script": "x".repeat(4096)})).await;
    assert_eq!(status, StatusCode::OK, "exactly 4096 bytes is allowed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cat_past_the_read_cap_ends_with_413_keeping_the_output() {
    let tree = (0..10).fold(MemoryBackend::new(), |t, i| {
        t.file(&format!("many/d{i}.txt"), format!("doc {i}\n"))
    });
    let server = TestServer::anonymous(limits(), vfs_of(tree));
    let c = Client::new();
    let body = json!({"script": "cat /files/many/*", "limits": {"document_reads": 4}});
    let (status, body) = sh(&c, &server, body).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["limit"], "document_reads");
    assert_eq!(
        body["error"]["message"],
        "script read more than 4 documents; scope it to a subdirectory or use search"
    );
    assert_eq!(body["stdout"], "doc 0\ndoc 1\ndoc 2\ndoc 3\n");
    assert_no_live_scripts(&c, &server.url("/metrics")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_pipeline_cannot_outlive_the_deadline() {
    let words: String = (0..200_000).map(|i| format!("w{}\n", i % 5000)).collect();
    let tree = MemoryBackend::new().file("big.txt", words);
    let server = TestServer::anonymous(limits(), vfs_of(tree));
    let c = Client::new();
    let pipeline = "cat /files/big.txt | sort | uniq -c | sort -rn | head -1";
    let script = vec![pipeline; 60].join("; ");
    let started = std::time::Instant::now();
    let (status, body) = sh(
        &c,
        &server,
        json!({"script": script, "limits": {"deadline_ms": 500}}),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["limit"], "deadline");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?} {body}",
        started.elapsed()
    );
    assert_no_live_scripts(&c, &server.url("/metrics")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_run_takes_a_slot_like_any_other() {
    let limits = Limits {
        live_scripts: 1,
        fuel: u64::MAX,
        deadline: Duration::from_secs(3),
        ..Limits::default()
    };
    let server = TestServer::anonymous(limits, vfs_of(small_tree()));
    let c = Client::new();
    let spinning = {
        let (c, url) = (c.clone(), server.url("/v1/runs?arg=spin"));
        tokio::spawn(async move {
            c.post(url)
                .header("content-type", "application/wasm")
                .body(misbehave())
                .send()
                .await
        })
    };
    while live_scripts(&c, &server.url("/metrics")).await < 1 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = c
        .post(server.url("/v1/sh"))
        .json(&json!({"script": "ls"}))
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "2");
    spinning.await.expect("task").expect("response");
    let (status, _) = sh(&c, &server, json!({"script": "ls"})).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_grep_is_audited_with_the_pattern_hashed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let server = TestServer::start(limits(), AuditLog::open(&log).expect("audit"), |l| {
        vfsbox_host::http::Tenants::anonymous("demo", vfs_of(small_tree()), l)
    });
    let c = Client::new();
    let (status, body) = sh(
        &c,
        &server,
        json!({"script": "grep -rn 'TODO: delta' /files"}),
    )
    .await;
    assert_eq!(
        (status, body["stdout"].as_str()),
        (StatusCode::OK, Some("/files/notes/c.txt:2:TODO: delta\n"))
    );
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        !text.contains("TODO: delta"),
        "the raw pattern leaked: {text}"
    );
    let grep: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .find(|r| r["event"] == "grep")
        .expect("a grep record");
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"TODO: delta"));
    assert_eq!(grep["pattern_sha256"], digest.as_str());
    assert_eq!(grep["roots"], json!(["/files"]));
    assert!(text.contains("\"run_start\"") && text.contains("\"run_end\""));
}

/// A document large enough that the shell searches it a piece at a time
/// (4 MiB or more) is still searched by the host first, which audits the
/// grep; one without a selected line is not read in the guest at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grep_of_a_large_document_is_audited_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let text: String = (0..300_000)
        .map(|i| format!("entry {i} of the large log\n"))
        .collect();
    assert!(text.len() >= 4 << 20);
    let tree = MemoryBackend::new().file("big.log", text);
    let server = TestServer::start(limits(), AuditLog::open(&log).expect("audit"), |l| {
        vfsbox_host::http::Tenants::anonymous("demo", vfs_of(tree), l)
    });
    let c = Client::new();
    let script = "grep -n 'entry 29999.' /files/big.log | head -2; grep -c nowhere /files/big.log";
    let (status, body) = sh(&c, &server, json!({ "script": script })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["stdout"],
        "30000:entry 29999 of the large log\n299991:entry 299990 of the large log\n0\n",
        "{body}"
    );
    let records: Vec<Value> = std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .filter(|r| r["event"] == "grep")
        .collect();
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"entry 29999."));
    assert!(
        records
            .iter()
            .any(|r| r["pattern_sha256"] == digest.as_str()
                && r["roots"] == json!(["/files/big.log"])),
        "{records:?}"
    );
}

#[test]
fn vfsbox_sh_runs_a_script_locally() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    std::fs::write(dir.path().join("sub/x.md"), "# X\nrefund here\n").expect("write");
    let mount = format!("/files={}", dir.path().display());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args([
            "sh",
            "grep -rn refund . | head -1",
            "--mount",
            &mount,
            "--cwd",
            "/files/sub",
        ])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "./x.md:2:refund here\n"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args(["sh", "nosuchcmd"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(127));
}

#[test]
fn listings_show_a_local_mounts_modes_and_the_defaults_elsewhere() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let set = |p: &str, mode: u32| {
        std::fs::set_permissions(dir.path().join(p), std::fs::Permissions::from_mode(mode))
            .expect("chmod");
    };
    std::fs::create_dir(dir.path().join("private")).expect("mkdir");
    std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\n").expect("write");
    std::fs::write(dir.path().join("secret.txt"), "s\n").expect("write");
    set("run.sh", 0o755);
    set("secret.txt", 0o600);
    set("private", 0o700);
    let mount = format!("/files={}", dir.path().display());
    let script = "ls -l /files | grep -v ^total | cut -c1-10; stat -c '%a %n' /files/run.sh; \
                  find /files -perm -u+x -type f; [ -x /files/secret.txt ] || echo not-exec; \
                  [ -w /files/run.sh ] || echo read-only";
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args(["sh", script, "--mount", &mount])
        .output()
        .expect("runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "drwx------\n-rwxr-xr-x\n-rw-------\n755 /files/run.sh\n/files/run.sh\nnot-exec\nread-only\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `fs.attributes` through the shell: a local mount's inodes and times as
/// the kernel keeps them, resolved as every other path is (an escaping
/// link is denied, `..` stays at the root), and 0 where none is kept.
#[test]
fn inodes_and_times_are_the_local_mounts_own_and_stay_inside_it() {
    use std::os::unix::fs::MetadataExt;
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "s\n").expect("write");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.path().join("escape"))
        .expect("symlink");
    let real = std::fs::metadata(dir.path().join("a.txt")).expect("metadata");
    let mount = format!("/files={}", dir.path().display());
    let script = "stat -c '%i %Z' /files/a.txt; ls -i /files/a.txt; \
                  stat -c %i /files/escape; echo \"status $?\"; stat -c %i /../../files/a.txt; \
                  find /files -maxdepth 1 -name a.txt -cmin -60";
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args(["sh", script, "--mount", &mount])
        .output()
        .expect("runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{ino} {ctime}\n{ino} /files/a.txt\nstatus 1\n{ino}\n/files/a.txt\n",
            ino = real.ino(),
            ctime = real.ctime()
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Permission denied"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_without_modes_shows_0644_and_0755() {
    let server = TestServer::anonymous(limits(), vfs_of(small_tree()));
    let (status, body) = sh(
        &Client::new(),
        &server,
        json!({"script": "stat -c '%a %A %n' /files /files/notes/b.txt"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["stdout"], "755 drwxr-xr-x /files\n644 -rw-r--r-- /files/notes/b.txt\n",
        "{body}"
    );
}

#[test]
fn vfsbox_sh_refuses_an_over_long_script_and_a_bad_cwd_with_one_line() {
    let vfsbox = || std::process::Command::new(env!("CARGO_BIN_EXE_vfsbox"));
    let long = format!("echo {}", "x".repeat(4097));
    let out = vfsbox().args(["sh", &long]).output().expect("runs");
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("vfsbox: ") && err.contains("4096"), "{err}");
    assert!(out.stdout.is_empty());
    let out = vfsbox()
        .args(["sh", "pwd", "--cwd", "/files/no/such/dir"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/files/no/such/dir"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn the_readme_shows_the_help_as_it_is() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README");
    let shown = readme
        .split("`help` prints:\n\n```text\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the help block");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args(["sh", "help"])
        .output()
        .expect("runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), shown);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grep_cut_by_the_host_scan_budget_says_how_far_it_got() {
    let tree = (0..10).fold(MemoryBackend::new(), |t, i| {
        t.file(&format!("docs/d{i}.md"), format!("doc {i}\nrefund\n"))
    });
    let server = TestServer::anonymous(limits(), vfs_of(tree));
    let c = Client::new();
    let (status, body) = sh(
        &c,
        &server,
        json!({"script": "grep -rl refund /files/docs", "limits": {"scan_files": 3}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["stdout"],
        "/files/docs/d0.md\n/files/docs/d1.md\n/files/docs/d2.md\n"
    );
    assert_eq!(
        body["stderr"],
        "grep: stopped after 3 of 10 files; matches are partial — narrow the paths\n"
    );
    assert_eq!(body["exit_code"], 0, "matches were found");
    assert_eq!(body["usage"]["files_scanned"], 3);
    // Within the budget, no such message.
    let (_, body) = sh(
        &c,
        &server,
        json!({"script": "grep -rl refund /files/docs"}),
    )
    .await;
    assert_eq!(body["stderr"], "");
    assert_eq!(body["usage"]["files_scanned"], 10);
}

/// A binary file is searched as GNU grep searches it: counted and named,
/// its lines not printed, a match said on stderr, exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_counts_and_names_a_binary_file_as_gnu_grep_does() {
    let tree = MemoryBackend::new().file("docs/text.txt", "needle\n").file(
        "docs/image.bin",
        b"needle\0\x01\x02needle\nplain\n".to_vec(),
    );
    let server = TestServer::anonymous(limits(), vfs_of(tree));
    let c = Client::new();
    let script = "grep -c needle /files/docs/image.bin; grep -rl needle /files/docs; \
                  grep -rc plain /files/docs; grep needle /files/docs/image.bin; echo \"status $?\"";
    let (status, body) = sh(&c, &server, json!({ "script": script })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["stdout"],
        "2\n/files/docs/image.bin\n/files/docs/text.txt\n\
         /files/docs/image.bin:1\n/files/docs/text.txt:0\nstatus 0\n"
    );
    assert_eq!(
        body["stderr"],
        "grep: /files/docs/image.bin: binary file matches\n"
    );
}

/// The shell language inside the sandbox: loops end at the script's
/// deadline, recursion and nested shells are bounded, reads through
/// redirections and substitutions are budgeted and stay in the mounts,
/// writes fail, background jobs fork nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_language_stays_inside_the_sandbox_and_its_limits() {
    let chained = format!("{}1", ". as $x | ".repeat(3000));
    let tree = small_tree()
        .file("loop.sh", "sh /files/loop.sh\n")
        .file("sum.txt", "1\n2\n3\n")
        .file("deep.jq", chained);
    let server = TestServer::anonymous(limits(), vfs_of(tree));
    let c = Client::new();
    let run = |script: &str, limits: Value| {
        let c = c.clone();
        let body = json!({"script": script, "limits": limits});
        let server = &server;
        async move { sh(&c, server, body).await }
    };
    // A spinning loop ends as any spinning script does: at its deadline.
    let (status, body) = run("while true; do :; done", json!({"deadline_ms": 1000})).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["limit"], "deadline", "{body}");
    // Output of an endless loop is capped and the run still ends. (Lines of
    // 10,000 bytes: the cap is reached in about a hundred turns, however
    // loaded the machine.)
    let (status, body) = run(
        "l=xxxxxxxxxx; l=$l$l$l$l$l$l$l$l$l$l; l=$l$l$l$l$l$l$l$l$l$l; while true; do echo $l$l$l$l$l$l$l$l$l$l; done",
        json!({"deadline_ms": 1000}),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["stdout_truncated"], true);
    // Unbounded recursion is stopped by the shell, not by a trap.
    let (status, body) = run("f() { f; }; f", json!({})).await;
    assert_eq!(
        (status, body["exit_code"].as_i64()),
        (StatusCode::OK, Some(1)),
        "{body}"
    );
    assert!(
        body["stderr"]
            .as_str()
            .is_some_and(|e| e.contains("maximum function nesting level")),
        "{body}"
    );
    // So is recursion through child shells, each with functions of its
    // own: the bound on calls is the script's, not each shell's.
    let (status, body) = run(
        "f() { sh -c 'g() { g; }; g'; f; }; f; h() { bash -c 'h() { h; }; h'; }; h",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["stderr"]
            .as_str()
            .is_some_and(|e| e.contains("maximum function nesting level")),
        "{body}"
    );
    // Recursion that nests loops and groups inside each call, the costliest
    // on the guest's stacks a level, is stopped by the shell too, before
    // the call bound and before either stack runs out.
    for script in [
        "f() { { { { { { f; }; }; }; }; }; }; f",
        "f() { if true; then while true; do f; break; done; fi; }; f",
        "f() { case x in *) for i in 1; do until false; do f; break; done; done;; esac; }; f",
    ] {
        let (status, body) = run(script, json!({})).await;
        assert_eq!(
            (status, body["exit_code"].as_i64()),
            (StatusCode::OK, Some(1)),
            "{script}: {body}"
        );
        assert!(
            body["stderr"]
                .as_str()
                .is_some_and(|e| e.contains("levels deep as it runs")),
            "{script}: {body}"
        );
    }
    // Programs nested deeper than the guest's stack holds (1,500 levels:
    // each trapped the sandbox before) are refused by the command that
    // parses them, with a message and its status, and the script goes on.
    let deep = |open: &str, close: &str| format!("{}1{}", open.repeat(1500), close.repeat(1500));
    for (command, status, says) in [
        (format!("jq -nc '{}'", deep("[", "]")), 3, "nests deeper"),
        // Nested by keywords, from a document.
        ("jq -n -f /files/deep.jq".to_owned(), 3, "nests deeper"),
        // bc, as GNU's, reports an error in its input and exits 0.
        (format!("bc <<< '{}'", deep("(", ")")), 0, "nests deeper"),
        // A bc function that calls itself without end, each call inside
        // parentheses, from the shell's deepest function level: its
        // interpreter counts its levels and stops before the stack ends.
        (
            format!(
                "f() {{ if [ $1 -gt 0 ]; then f $(( $1 - 1 )); else \
                 bc <<< 'define g(n) {{ return {}g(n+1){} }}; g(0)'; fi; }}; f 190",
                "(".repeat(20),
                ")".repeat(20)
            ),
            0,
            "recurses deeper",
        ),
        (
            format!("awk 'BEGIN {{ print {} }}'", deep("(", ")")),
            1,
            "nests too deeply",
        ),
    ] {
        let (code, body) = run(&format!("{command}; echo $?"), json!({})).await;
        assert_eq!(code, StatusCode::OK, "{body}");
        assert_eq!(body["stdout"], format!("{status}\n"), "{body}");
        assert!(
            body["stderr"].as_str().is_some_and(|e| e.contains(says)),
            "{body}"
        );
    }
    // A script that runs itself through `sh` is stopped at a fixed depth.
    let (status, body) = run("sh /files/loop.sh", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["stderr"]
            .as_str()
            .is_some_and(|e| e.contains("shells inside each other")),
        "{body}"
    );
    // Redirections and substitutions read through the same budget.
    let (status, body) = run(
        "for f in /files/a.txt /files/notes/*.txt; do x=$(cat < \"$f\"); echo \"${x^^}\"; done",
        json!({"document_reads": 2}),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["limit"], "document_reads");
    assert_eq!(
        body["stdout"], "ALPHA\nBETA TODO\n",
        "the output before the cap is kept"
    );
    // Paths in redirections stay inside the mounts.
    let (_, body) = run("cat < /files/../../etc/passwd; echo $?", json!({})).await;
    assert_eq!(body["stdout"], "1\n");
    assert!(
        body["stderr"]
            .as_str()
            .is_some_and(|e| e.contains("No such file")),
        "{body}"
    );
    // Writing fails for the command; the script goes on.
    let (_, body) = run("echo hi > /files/out.txt; echo $?; ls /files", json!({})).await;
    assert_eq!(
        body["stdout"],
        "1\na.txt\ndeep.jq\nloop.sh\nnotes\nsum.txt\n"
    );
    // A fork bomb forks nothing: its background jobs run one after
    // another in the one store, and it ends as any spinning script does.
    let (status, body) = run(":(){ :|:& };:", json!({"deadline_ms": 1000})).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["limit"], "deadline", "{body}");
    // The language works end to end in the sandbox.
    let (_, body) = run(
        "t=0; while read -r n; do t=$((t + n)); done < /files/sum.txt; echo $t; \
         awk '{s += $1} END {print s}' /files/sum.txt; \
         find /files -name '*.txt' -exec wc -l {} + | tail -1 | awk '{print $1}'; yes | head -2",
        json!({}),
    )
    .await;
    assert_eq!(body["stdout"], "6\n6\n7\ny\ny\n", "{body}");
}

/// Documents larger than the script's memory are read a piece at a time:
/// `awk`, `sed`, `cat`, `cut`, `wc`, `grep`, the dumps and the digests go
/// through a document of 24 MB within 16 MiB, where reading it whole
/// (`sort` must) ends on the memory limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_larger_than_the_memory_limit_are_streamed() {
    use sha2::{Digest, Sha256};
    const WORDS: [&str; 4] = ["refund", "policy", "invoice", "travel"];
    let mut text = String::with_capacity(24_000_100);
    let (mut n, mut sum) = (0u64, 0u64);
    while text.len() < 24_000_000 {
        let v = (n * 7919) % 1000;
        text.push_str(&format!("{} {n} {v} é€\n", WORDS[(n % 4) as usize]));
        sum += v;
        n += 1;
    }
    let digest: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let text_len = text.len();
    let tail_hex: String = text.as_bytes()[text_len - 4..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let last = text.lines().last().expect("lines").to_owned();
    let first = text.lines().next().expect("a line").to_owned();
    let refund_or_travel = text
        .lines()
        .filter(|l| l.starts_with("refund") || l.starts_with("travel"))
        .count();
    let last_travel = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("travel"))
        .last()
        .map(|(i, l)| format!("{}:{l}\n", i + 1))
        .expect("a travel line");
    let picked = text
        .lines()
        .filter(|l| l.split(' ').nth(2).is_some_and(|v| v.contains(['7', '1'])))
        .count();
    let server = TestServer::anonymous(
        Limits {
            deadline: Duration::from_secs(120),
            fuel: SPIN_FUEL,
            ..Limits::default()
        },
        vfs_of(MemoryBackend::new().file("log.txt", text)),
    );
    let c = Client::new();
    let limits = json!({"memory_bytes": 16 << 20});
    let run = |script: &str| {
        let body = json!({"script": script, "cwd": "/files", "limits": limits});
        let (c, server) = (c.clone(), &server);
        async move { sh(&c, server, body).await }
    };
    for (script, want) in [
        (
            "awk '{s += $3} END {print NR, s}' log.txt",
            format!("{n} {sum}\n"),
        ),
        ("sed -n '$p' log.txt", format!("{last}\n")),
        ("wc -l log.txt", format!("{n} log.txt\n")),
        ("sha256sum log.txt", format!("{digest}  log.txt\n")),
        ("cat log.txt > /dev/null; echo read", "read\n".to_owned()),
        (
            "cut -d' ' -f3 log.txt | awk '{s += $1} END {print s}'",
            format!("{sum}\n"),
        ),
        // Standard input from a document, or from a `cat` of it, is read
        // as the command reads it.
        (
            "cat log.txt | awk '{s += $3} END {print NR, s}'",
            format!("{n} {sum}\n"),
        ),
        (
            "awk '{s += $3} END {print NR, s}' < log.txt",
            format!("{n} {sum}\n"),
        ),
        ("cat log.txt | tail -1", format!("{last}\n")),
        ("cat log.txt | head -1", format!("{first}\n")),
        (
            "cat log.txt | grep -c -e '^refund' -e '^travel'",
            format!("{refund_or_travel}\n"),
        ),
        ("cat log.txt | cat - | wc -l", format!("{n}\n")),
        // `-l` and `-q` ask the host for one selected line, not all.
        ("grep -l refund log.txt", "log.txt\n".to_owned()),
        ("grep -q refund log.txt && echo found", "found\n".to_owned()),
        // A count of a document's lines asks the host for the counts
        // alone: every line of it selected is no more to hold than one.
        (
            "grep -c -e '^refund' -e '^travel' log.txt",
            format!("{refund_or_travel}\n"),
        ),
        ("grep -vc nowhere log.txt", format!("{n}\n")),
        // Line by line, or a piece at a time.
        ("uniq -d log.txt", String::new()),
        (
            // rev decodes its lines: in the C locale it would stop at the
            // first `é`, as util-linux's does.
            "nl log.txt >/dev/null && LC_ALL=C.UTF-8 rev log.txt >/dev/null \
             && fold -w 7 log.txt >/dev/null && expand log.txt >/dev/null \
             && base64 log.txt >/dev/null && echo done",
            "done\n".to_owned(),
        ),
        ("cksum log.txt | cut -d' ' -f2", format!("{text_len}\n")),
        (
            "od -c log.txt >/dev/null && xxd log.txt >/dev/null && hexdump -C log.txt >/dev/null \
             && strings log.txt >/dev/null && echo done",
            "done\n".to_owned(),
        ),
        ("cmp log.txt log.txt && echo same", "same\n".to_owned()),
        // A dump from the end reads the end.
        ("xxd -p -s -4 log.txt", format!("{tail_hex}\n")),
        // A pipe into `head` keeps what `head` reads, not what was
        // written (24 MB of `nl`, 27 MB of `seq`).
        ("nl log.txt | head -1", format!("     1\t{first}\n")),
        ("seq 1 3000000 | head -2", "1\n2\n".to_owned()),
        // A pipe into `tail` keeps the end it prints.
        ("nl log.txt | tail -1", format!("{n:>6}\t{last}\n")),
        (
            "seq 1 3000000 | tail -c 16",
            "2999999\n3000000\n".to_owned(),
        ),
        // The selected lines of a large document come a piece of it at a
        // time, not every one of them at once (a quarter of it here).
        (
            "grep refund log.txt | wc -l",
            format!("{}\n", n.div_ceil(4)),
        ),
        ("grep -n travel log.txt | tail -1", last_travel.clone()),
        // A search of directories takes a page of a document's lines from
        // the host and reads on in the guest, a piece at a time.
        ("grep -r refund . | wc -l", format!("{}\n", n.div_ceil(4))),
        (
            "grep -rn travel /files | tail -1",
            format!("/files/log.txt:{last_travel}"),
        ),
        // A count over a pipe keeps no copy of the lines it counts.
        (
            "cut -d' ' -f3 log.txt | grep -c -e 7 -e 1",
            format!("{picked}\n"),
        ),
    ] {
        let (status, body) = run(script).await;
        assert_eq!(status, StatusCode::OK, "{script}: {body}");
        assert_eq!(body["stdout"], want.as_str(), "{script}: {body}");
        assert!(
            body["usage"]["peak_memory_bytes"]
                .as_u64()
                .is_some_and(|m| m <= 16 << 20),
            "{script}: {body}"
        );
    }
    // A search whose reader has gone stops reading: `head` takes a line,
    // and `grep` reads a piece or two of the 24 MB, not all of it.
    let (status, body) = run("grep refund log.txt | head -1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["stdout"], format!("{first}\n"), "{body}");
    assert!(
        body["usage"]["bytes_read"]
            .as_u64()
            .is_some_and(|b| b < text_len as u64 / 4),
        "{body}"
    );
    // `cat` to the output: cut at the output cap, the run still ends well.
    let (status, body) = run("cat log.txt").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["stdout_truncated"], true, "{body}");
    // The limit is real: holding the document whole does not fit.
    let (status, body) = run("sort log.txt | tail -1").await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["limit"], "memory", "{body}");
}

/// Commands that print only once they have all of their input (`sort`,
/// `tac`) hold it once, with a slice per line, and write their output a
/// block at a time into parts that the next command frees as it reads
/// them. A 16 MB document whose last line has no newline sorts within the
/// default 64 MiB; copying it to add the newline, a copy of the output
/// and a grown pipe buffer took 82 MB. So does a shell variable holding
/// the document (`x=$(cat doc)`, `"$x"`, `${x:0:5}`, `[[ $x == *y ]]`):
/// words expand as runs of text, not a token of eight bytes a character,
/// which took 150 MB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sort_tac_and_variables_hold_a_document_about_once() {
    let mut text = String::with_capacity(16_000_100);
    let mut n = 0u64;
    while text.len() < 16_000_000 {
        let v = (n * 7919) % 100_003;
        text.push_str(&format!("entry {v:06} of the ledger, line {n}\n"));
        n += 1;
    }
    text.pop();
    let mut sorted: Vec<&str> = text.lines().collect();
    sorted.sort_unstable();
    let (lowest, highest) = (sorted[0], sorted[sorted.len() - 1]);
    let first = text.lines().next().expect("a line");
    let last = text.lines().last().expect("a line");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("ledger.txt"), &text).expect("write the ledger");
    let server = TestServer::anonymous(
        Limits {
            deadline: Duration::from_secs(120),
            fuel: SPIN_FUEL,
            ..Limits::default()
        },
        local_vfs(dir.path()),
    );
    let c = Client::new();
    let ends = format!(
        "x=$(< ledger.txt); echo \"${{x:0:5}}\"; [[ $x == *\"line {}\" ]] && echo ends",
        n - 1
    );
    for (script, want) in [
        ("sort ledger.txt | tail -1", format!("{highest}\n")),
        ("sort -r ledger.txt | tail -1", format!("{lowest}\n")),
        ("cat ledger.txt | sort | uniq | wc -l", format!("{n}\n")),
        ("sort -k2,2n ledger.txt | head -1", format!("{lowest}\n")),
        ("tac ledger.txt | tail -1", format!("{first}\n")),
        // The last line, without a newline, runs into the one before it.
        ("tac ledger.txt | head -c 20", last[..20].to_owned()),
        ("tac ledger.txt | wc -l", format!("{}\n", n - 1)),
        (
            "x=$(cat ledger.txt); echo ${#x}",
            format!("{}\n", text.len()),
        ),
        (ends.as_str(), "entry\nends\n".to_owned()),
        (
            "x=$(cat ledger.txt); echo \"$x\" | tail -1",
            format!("{last}\n"),
        ),
    ] {
        let body = json!({
            "script": script,
            "cwd": "/files",
            "limits": {"memory_bytes": 64 << 20},
        });
        let (status, body) = sh(&c, &server, body).await;
        assert_eq!(status, StatusCode::OK, "{script}: {body}");
        assert_eq!(body["stdout"], want.as_str(), "{script}: {body}");
    }
}

/// A writer whose reader has gone stops as `SIGPIPE` would stop it, with
/// status 141: a billion numbers, or a loop without end, into `head` end
/// well inside a fuel allowance that would not print a thousandth of the
/// numbers, where they would otherwise end with `413`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_stops_once_its_reader_has_gone() {
    let server = TestServer::anonymous(limits(), vfs_of(small_tree()));
    let c = Client::new();
    for (script, want) in [
        (
            "seq 1 1000000000 | head -1; echo ${PIPESTATUS[@]}",
            "1\n141 0\n",
        ),
        (
            "while true; do echo y; done | head -n 2; echo ${PIPESTATUS[@]}",
            "y\ny\n141 0\n",
        ),
        (
            "set -o pipefail; yes | awk '{print}' | head -c 3; echo \" $?\"",
            "y\ny 141\n",
        ),
    ] {
        let body = json!({"script": script, "limits": {"fuel": 5_000_000_000u64}});
        let (status, body) = sh(&c, &server, body).await;
        assert_eq!(status, StatusCode::OK, "{script}: {body}");
        assert_eq!(body["stdout"], want, "{script}: {body}");
    }
}
