//! MCP, driven by an independent client: the official Python SDK (`mcp`,
//! pinned in `tests/mcp/requirements.txt`, installed if missing) runs the
//! scenarios of `tests/mcp/client.py` over stdio (`vfsbox mcp`) and over
//! streamable HTTP (`/mcp` on `serve`), in both protocol modes (the
//! `initialize` handshake and the session-less 2026-07-28 protocol).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

use serde_json::Value;
use vfsbox_host::http::Tenants;
use vfsbox_host::{AuditLog, Limits};

use crate::common::SPIN_FUEL;
use crate::server::TestServer;

const MODES: [&str; 2] = ["legacy", "2026-07-28"];
const KEY_A: &str = "mcp-key-of-tenant-a";
const KEY_B: &str = "mcp-key-of-tenant-b";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_owned()
}

/// Installs the pinned SDK once per test run when it is not there.
fn sdk() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let pinned = std::fs::read_to_string(workspace().join("tests/mcp/requirements.txt"))
            .expect("requirements");
        let version = pinned
            .lines()
            .find_map(|l| l.strip_prefix("mcp=="))
            .expect("mcp is pinned")
            .trim()
            .to_owned();
        let have = Command::new("python3")
            .args([
                "-c",
                "import importlib.metadata as m; print(m.version('mcp'))",
            ])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == version);
        if !have {
            let ok = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "--user", "-r"])
                .arg(workspace().join("tests/mcp/requirements.txt"))
                .status()
                .expect("pip runs");
            assert!(ok.success(), "could not install the MCP SDK");
        }
    });
}

/// Runs one scenario of the Python client and returns what it printed.
pub(crate) fn client(args: &[&str]) -> Value {
    client_with(args, &[])
}

/// [`client`], with environment variables for the scenario.
fn client_with(args: &[&str], env: &[(&str, &str)]) -> Value {
    sdk();
    let out = Command::new("python3")
        .arg(workspace().join("tests/mcp/client.py"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the MCP client failed ({args:?}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the client printed no JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The documents every scenario reads.
pub(crate) fn documents(root: &Path) {
    std::fs::create_dir_all(root.join("notes")).expect("mkdir");
    std::fs::write(root.join("a.txt"), "alpha refund\n").expect("write");
    std::fs::write(root.join("notes/b.txt"), "beta TODO\n").expect("write");
    std::fs::write(root.join("notes/c.txt"), "gamma\nTODO: delta\n").expect("write");
}

pub(crate) fn stdio(mode: &str, scenario: &str, docs: &Path) -> Value {
    let mount = format!("/files={}", docs.display());
    client(&[
        "stdio",
        mode,
        scenario,
        "--",
        env!("CARGO_BIN_EXE_vfsbox"),
        "mcp",
        "--mount",
        &mount,
    ])
}

const TOOLS: [&str; 6] = ["grep", "list", "python", "read", "sh", "stat"];
/// Tenant a's, which may run stored scripts.
const TOOLS_WITH_RUN: [&str; 7] = ["grep", "list", "python", "read", "run", "sh", "stat"];

/// What a tour of every tool must have seen, whatever the transport.
fn assert_tour(t: &Value, mode: &str, tools: &[&str]) {
    let protocol = t["protocol"].as_str().unwrap_or_default();
    if mode == "legacy" {
        assert!(protocol.starts_with("2025-"), "{protocol}");
    } else {
        assert_eq!(protocol, mode);
    }
    assert_eq!(t["tools"], serde_json::json!(tools));
    for (tool, hints) in t["annotations"].as_object().expect("annotations") {
        // read-only, idempotent, closed-world, not destructive
        assert_eq!(
            hints,
            &serde_json::json!([true, true, false, false]),
            "{tool}"
        );
    }
    let calls = &t["calls"];
    let sh = &calls["sh"];
    assert_eq!(sh["is_error"], false, "{sh}");
    assert_eq!(sh["structured"]["exit_code"], 0);
    assert_eq!(sh["structured"]["cwd"], "/files");
    assert_eq!(sh["structured"]["stdout"], "./a.txt:1:alpha refund\ndone\n");
    assert!(sh["text"].as_str().unwrap_or_default().contains("[exit 0]"));
    // Python reads the documents from its working directory, searches with
    // the host's engine, and a write ends it with `python3`'s error.
    let python = &calls["python"];
    assert_eq!(python["is_error"], false, "{python}");
    assert_eq!(python["structured"]["exit_code"], 1);
    assert_eq!(
        python["structured"]["stdout"],
        "['a.txt', 'notes'] ['x']\n['/files/notes/b.txt', '/files/notes/c.txt']\n"
    );
    let stderr = python["structured"]["stderr"].as_str().unwrap_or_default();
    assert!(
        stderr
            .trim_end()
            .ends_with("OSError: [Errno 69] Read-only file system: 'a.txt'"),
        "{stderr}"
    );
    let read = &calls["read"];
    assert_eq!(read["structured"]["text"], "beta TODO\n");
    assert_eq!(read["structured"]["total_lines"], 1);
    assert_eq!(
        read["links"],
        serde_json::json!(["vfs:///files/notes/b.txt"])
    );
    let grep = &calls["grep"];
    let paths: Vec<&str> = grep["structured"]["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .filter_map(|m| m["path"].as_str())
        .collect();
    assert_eq!(paths, ["/files/notes/b.txt", "/files/notes/c.txt"]);
    assert_eq!(grep["structured"]["partial"], Value::Null);
    // Results link the documents they name.
    assert_eq!(
        grep["links"],
        serde_json::json!(["vfs:///files/notes/b.txt", "vfs:///files/notes/c.txt"])
    );
    assert_eq!(
        calls["list"]["links"],
        serde_json::json!([
            "vfs:///files/a.txt",
            "vfs:///files/notes/b.txt",
            "vfs:///files/notes/c.txt"
        ])
    );
    let listed: Vec<&str> = calls["list"]["structured"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert_eq!(
        listed,
        [
            "/files/a.txt",
            "/files/notes",
            "/files/notes/b.txt",
            "/files/notes/c.txt"
        ]
    );
    let stat = &calls["stat"]["structured"];
    assert_eq!(stat["kind"], "file");
    assert_eq!(stat["size"], 13);
    let bad = &t["bad_grep"];
    assert_eq!(bad["is_error"], true, "{bad}");
    assert_eq!(bad["structured"]["error"]["code"], "bad_pattern");
    assert_eq!(t["templates"], serde_json::json!(["vfs:///{+path}"]));
    assert_eq!(t["resource"], serde_json::json!(["alpha refund\n"]));
}

#[test]
fn over_stdio_a_real_client_lists_and_calls_every_tool_in_both_protocols() {
    let dir = tempfile::tempdir().expect("tempdir");
    documents(dir.path());
    for mode in MODES {
        assert_tour(&stdio(mode, "tour", dir.path()), mode, &TOOLS);
    }
}

/// A spent limit is an error result naming it, with the output so far.
fn assert_limit(r: &Value) {
    assert_eq!(r["is_error"], true, "{r}");
    let s = &r["structured"];
    assert_eq!(s["outcome"], "budget_exceeded");
    assert_eq!(s["error"]["limit"], "document_reads");
    assert_eq!(s["stdout"], "before\nalpha refund\n");
    assert!(
        r["text"]
            .as_str()
            .unwrap_or_default()
            .contains("read more than 1 documents")
    );
}

/// Five long calls on four slots: four ran to a limit, one was refused at
/// once, saying when to retry.
fn assert_busy(calls: &Value) {
    let calls = calls.as_array().expect("five results");
    let refused: Vec<&Value> = calls
        .iter()
        .filter(|c| {
            c["structured"]["error"]["code"]
                .as_str()
                .is_some_and(|c| c.ends_with("busy"))
        })
        .collect();
    assert_eq!(refused.len(), 1, "{calls:?}");
    let r = refused[0];
    assert_eq!(r["is_error"], true);
    assert_eq!(r["structured"]["retry_after_seconds"], 2);
    // Refused at once: a queued call would have waited for a slot (the
    // others run for about 3 s).
    assert!(r["seconds"].as_f64().unwrap_or(f64::MAX) < 1.5, "{r}");
    let ran = calls
        .iter()
        .filter(|c| c["structured"]["outcome"] == "budget_exceeded")
        .count();
    assert_eq!(ran, 4, "{calls:?}");
}

/// A cancelled spinning call gave its slot back long before its 30 s
/// deadline: four calls after it all ran.
fn assert_cancel(r: &Value) {
    assert!(
        r["cancelled_after"].as_f64().unwrap_or(f64::MAX) < 5.0,
        "{r}"
    );
    assert!(r["freed_within"].as_f64().unwrap_or(f64::MAX) < 10.0, "{r}");
    for c in r["after"].as_array().expect("four results") {
        assert_eq!(c["is_error"], false, "{r}");
        assert_eq!(c["structured"]["stdout"], "ok\n");
    }
}

/// A long call with a progress token heard progress before it ended.
fn assert_progress(r: &Value) {
    let heard = r["heard"].as_array().expect("notifications");
    assert!(!heard.is_empty(), "{r}");
    assert!(
        heard[0]["progress"].as_f64().unwrap_or_default() > 0.0,
        "{r}"
    );
    assert_eq!(
        r["result"]["structured"]["outcome"], "budget_exceeded",
        "{r}"
    );
}

#[test]
fn over_stdio_limits_the_gate_and_cancellation_hold() {
    let dir = tempfile::tempdir().expect("tempdir");
    documents(dir.path());
    for mode in MODES {
        assert_limit(&stdio(mode, "limit", dir.path()));
        assert_busy(&stdio(mode, "busy", dir.path()));
        assert_cancel(&stdio(mode, "cancel", dir.path()));
        assert_progress(&stdio(mode, "progress", dir.path()));
    }
}

/// Two tenants with keys, each its own documents; an audit log.
fn keyed_server(dir: &Path, limits: Limits) -> TestServer {
    documents(&dir.join("a"));
    std::fs::create_dir_all(dir.join("b")).expect("mkdir");
    std::fs::write(dir.join("b/only-b.txt"), "b's\n").expect("write");
    let config = crate::common::two_tenants_config(
        (KEY_A, &dir.join("a")),
        (KEY_B, &dir.join("b")),
        "mcp_run = true",
    );
    let audit = AuditLog::open(&dir.join("audit.jsonl")).expect("audit log");
    TestServer::start(limits, audit, |l| {
        Tenants::from_config(&config.tenants, l).expect("tenants")
    })
}

fn http_limits() -> Limits {
    Limits {
        fuel: SPIN_FUEL,
        ..Limits::default()
    }
}

#[test]
fn over_http_the_keys_tenant_gets_every_tool_in_both_protocols_and_is_audited() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = keyed_server(dir.path(), http_limits());
    let url = server.url("/mcp");
    for mode in MODES {
        assert_tour(
            &client(&["http", mode, "tour", &url, KEY_A]),
            mode,
            &TOOLS_WITH_RUN,
        );
    }
    // Every call that read documents is in the audit log, as tenant a's.
    let log = std::fs::read_to_string(dir.path().join("audit.jsonl")).expect("audit log");
    let records: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    for event in ["run_start", "run_end", "grep", "download"] {
        let n = records
            .iter()
            .filter(|r| r["event"] == event && r["tenant"] == "a")
            .count();
        // Two tours: sh runs (and greps), the grep tool, read and the
        // resource read.
        assert!(n >= 2, "{n} {event} records for tenant a:\n{log}");
    }
    assert!(
        !log.contains("TODO"),
        "patterns are recorded as hashes only"
    );
    // A search that could not run is recorded too.
    assert!(
        records
            .iter()
            .any(|r| r["event"] == "grep" && r["error"] == "bad_request" && r["tenant"] == "a"),
        "{log}"
    );
    // /metrics counts the calls by tool and outcome.
    let metrics = std::process::Command::new("curl")
        .args(["-s", &server.url("/metrics")])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .expect("curl runs");
    for tool in ["sh", "read", "grep", "list", "stat"] {
        let sample = format!("vfsbox_mcp_calls_total{{tool=\"{tool}\",outcome=\"ok\"}} 2");
        assert!(metrics.contains(&sample), "{sample} in:\n{metrics}");
    }
}

#[test]
fn over_http_limits_the_gate_and_cancellation_hold() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = keyed_server(dir.path(), http_limits());
    let url = server.url("/mcp");
    for mode in MODES {
        assert_limit(&client(&["http", mode, "limit", &url, KEY_A]));
        assert_busy(&client(&["http", mode, "busy", &url, KEY_A]));
        assert_cancel(&client(&["http", mode, "cancel", &url, KEY_A]));
        assert_progress(&client(&["http", mode, "progress", &url, KEY_A]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_key_sees_only_its_tenant_and_no_key_gets_401() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = keyed_server(dir.path(), http_limits());
    let url = server.url("/mcp");
    for mode in MODES {
        let b = {
            let url = url.clone();
            tokio::task::spawn_blocking(move || client(&["http", mode, "tenant", &url, KEY_B]))
                .await
                .expect("client")
        };
        let listed = &b["root"]["structured"]["entries"];
        assert_eq!(listed.as_array().map(Vec::len), Some(1), "{b}");
        assert_eq!(listed[0]["path"], "/files");
        // Tenant a's document does not exist for tenant b.
        assert_eq!(b["other"]["is_error"], true);
        assert_eq!(b["other"]["structured"]["error"]["code"], "not_found");
    }

    let http = reqwest::Client::new();
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}
    });
    for key in [None, Some("not-a-key")] {
        let mut req = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        let r = req.send().await.expect("response");
        assert_eq!(r.status(), reqwest::StatusCode::UNAUTHORIZED, "{key:?}");
        let challenge = r
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
    }
    // A page on another name, reaching the server by DNS rebinding, is
    // refused even with a key: only loopback names are allowed by default.
    let r = http
        .post(&url)
        .header("host", "attacker.example")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(KEY_A)
        .json(&initialize)
        .send()
        .await
        .expect("response");
    assert!(r.status().is_client_error(), "{}", r.status());
    assert_ne!(r.status(), reqwest::StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_run_serves_stored_scripts_only_where_the_config_allows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = keyed_server(dir.path(), http_limits());
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for key in [KEY_A, KEY_B] {
        let put: Value = http
            .put(server.url("/v1/scripts"))
            .bearer_auth(key)
            .header("content-type", "application/wasm")
            .body(std::fs::read(vfsbox_test_artifacts::HELLO).expect("hello.wasm"))
            .send()
            .await
            .expect("upload")
            .json()
            .await
            .expect("json");
        ids.push(put["id"].as_str().expect("an id").to_owned());
    }
    let url = server.url("/mcp");
    let call = |key: &'static str, id: String| {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            client_with(
                &["http", "2026-07-28", "run", &url, key],
                &[("VFSBOX_SCRIPT_ID", &id)],
            )
        })
    };
    let a = call(KEY_A, ids[0].clone()).await.expect("client");
    assert_eq!(a["tools"], serde_json::json!(TOOLS_WITH_RUN));
    assert_eq!(a["result"]["is_error"], false, "{a}");
    assert!(
        a["result"]["structured"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .starts_with("hello, agents!\n"),
        "{a}"
    );
    let b = call(KEY_B, ids[1].clone()).await.expect("client");
    assert_eq!(b["tools"], serde_json::json!(TOOLS));
    assert_eq!(b["result"]["is_error"], true, "{b}");
    assert_eq!(b["result"]["structured"]["error"]["code"], "tool_disabled");
}
