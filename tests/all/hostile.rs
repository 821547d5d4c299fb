//! Hostile input: malformed and abusive components, traversal in every
//! encoding the HTTP layer decodes, oversized arguments. Each gets its
//! documented status, nothing is read that should not be, and the server
//! keeps serving.

use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::Value;
use vfsbox_host::Limits;

use crate::common::*;
use crate::server::*;

fn limits() -> Limits {
    Limits {
        deadline: Duration::from_secs(5),
        fuel: SPIN_FUEL,
        ..Limits::default()
    }
}

async fn upload(
    c: &Client,
    server: &TestServer,
    query: &str,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let r = c
        .post(server.url(&format!("/v1/runs?{query}")))
        .header("content-type", "application/wasm")
        .body(body)
        .send()
        .await
        .expect("response");
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abusive_components_get_their_documented_status() {
    let server = TestServer::anonymous(limits(), vfs_of(small_tree()));
    let c = Client::new();
    let ok = command(r#"(func (export "run") (result i32) i32.const 0)"#);
    let big_table =
        command(r#"(table 5000000 funcref) (func (export "run") (result i32) i32.const 0)"#);
    let many_memories = command(
        r#"(memory 1) (memory 1) (memory 1) (memory 1) (memory 1) (memory 1) (memory 1) (memory 1)
           (func (export "run") (result i32) i32.const 0)"#,
    );
    let huge_memory = command(r#"(memory 2000) (func (export "run") (result i32) i32.const 0)"#);
    let medium_memory = command(r#"(memory 200) (func (export "run") (result i32) i32.const 0)"#);
    let grow_loop = command(
        r#"(memory 1)
           (func (export "run") (result i32)
             (loop $again (br_if $again (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
             i32.const 0)"#,
    );
    let grow_forever = command(
        r#"(memory 1)
           (func (export "run") (result i32)
             (loop $again (drop (memory.grow (i32.const 1))) (br $again))
             i32.const 0)"#,
    );
    let recurse = command(r#"(func $f (export "run") (result i32) call $f)"#);
    for (name, body, status, check) in [
        ("a minimal command", ok, StatusCode::OK, "exited"),
        (
            "a 5M-element table",
            big_table,
            StatusCode::BAD_REQUEST,
            "invalid_script",
        ),
        (
            "eight memories",
            many_memories,
            StatusCode::BAD_REQUEST,
            "invalid_script",
        ),
        (
            "a 125 MiB initial memory",
            huge_memory,
            StatusCode::BAD_REQUEST,
            "invalid_script",
        ),
        (
            "memory.grow until refused",
            grow_loop,
            StatusCode::OK,
            "exited",
        ),
        (
            "memory.grow forever",
            grow_forever,
            StatusCode::PAYLOAD_TOO_LARGE,
            "budget_exceeded",
        ),
        (
            "infinite recursion",
            recurse,
            StatusCode::UNPROCESSABLE_ENTITY,
            "trapped",
        ),
    ] {
        let (got, body) = upload(&c, &server, "fuel=10000000&deadline_ms=2000", body).await;
        let what = [
            &body["outcome"],
            &body["error"]["code"],
            &body["error"]["limit"],
        ];
        assert_eq!(got, status, "{name}: {body}");
        assert!(
            what.iter().any(|v| *v == check),
            "{name}: expected {check} in {body}"
        );
        if name == "memory.grow until refused" {
            let peak = body["usage"]["peak_memory_bytes"].as_u64().expect("peak");
            assert!(
                peak <= 64 << 20 && peak > 60 << 20,
                "{name}: grew to {peak}, and no further"
            );
        }
        assert_eq!(live_scripts(&c, &server.url("/metrics")).await, 0, "{name}");
    }
    // Within the server's memory limit but above a request's lower one.
    let (got, body) = upload(&c, &server, "memory_bytes=8388608", medium_memory).await;
    assert_eq!(
        (got, &body["error"]["limit"]),
        (StatusCode::PAYLOAD_TOO_LARGE, &Value::from("memory")),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compile_bomb_does_not_stop_the_server_answering() {
    let server = TestServer::anonymous(limits(), vfs_of(small_tree()));
    let c = Client::new();
    let bomb = compile_bomb(200_000);
    assert!(
        bomb.len() < 16 << 20,
        "within the upload limit: {} bytes",
        bomb.len()
    );
    let run = {
        let (c, url) = (c.clone(), server.url("/v1/runs"));
        tokio::spawn(async move {
            let r = c
                .post(url)
                .header("content-type", "application/wasm")
                .body(bomb)
                .send()
                .await;
            r.expect("response").status()
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let asked = Instant::now();
    let health = c.get(server.url("/healthz")).send().await.expect("healthz");
    assert_eq!(health.status(), StatusCode::OK);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "healthz took {:?}",
        asked.elapsed()
    );
    let status = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the bomb's request ends")
        .expect("task");
    assert!(
        status == StatusCode::OK || status == StatusCode::PAYLOAD_TOO_LARGE,
        "{status}"
    );
    assert_no_live_scripts(&c, &server.url("/metrics")).await;
}

/// Through `wasi:filesystem` (`std::fs` in the guest) only the mounts are
/// there: the host's own files are not, in any spelling, and a path that
/// climbs out of a mount is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_filesystem_is_out_of_reach_through_wasi() {
    let server = TestServer::anonymous(limits(), vfs_of(small_tree()));
    let c = Client::new();
    for (path, want) in [
        ("/etc/passwd", "refused: NotFound\n"),
        ("/", "refused: NotFound\n"),
        (".", "refused: NotFound\n"),
        ("../../etc/passwd", "refused: NotFound\n"),
        ("/files/../../etc/passwd", "refused: PermissionDenied\n"),
        (
            "/files/notes/../../../etc/passwd",
            "refused: PermissionDenied\n",
        ),
        ("/files//../etc/passwd", "refused: PermissionDenied\n"),
        ("/files/a.txt\u{0}/etc/passwd", "refused: InvalidInput\n"),
        ("/files/notes", "refused: IsADirectory\n"),
        // Encodings WASI does not decode are names, and there are none.
        ("/files/%2e%2e/%2e%2e/etc/passwd", "refused: NotFound\n"),
        ("/files/..\\..\\etc\\passwd", "refused: NotFound\n"),
        ("/files/\u{ff0e}\u{ff0e}/etc/passwd", "refused: NotFound\n"),
        // A document, through the mount's preopen, from the guest's `/`.
        ("files/a.txt", "read 6 bytes: \"alpha\\n\"\n"),
        ("/files/notes/../a.txt", "read 6 bytes: \"alpha\\n\"\n"),
    ] {
        let query = format!(
            "arg=wasi-fs&arg={}",
            form_urlencoded::byte_serialize(path.as_bytes()).collect::<String>()
        );
        let (status, body) = upload(&c, &server, &query, misbehave().to_vec()).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert_eq!(body["stdout"].as_str(), Some(want), "{path:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traversal_in_any_encoding_stays_inside_the_mounts() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("docs")).expect("mkdir");
    std::fs::write(dir.path().join("docs/ok.txt"), "public\n").expect("write");
    std::fs::write(dir.path().join("secret.txt"), "SECRET\n").expect("write");
    let server = TestServer::anonymous(limits(), local_vfs(&dir.path().join("docs")));
    let c = Client::new();
    let attempts = [
        "/v1/fs/files/../secret.txt",
        "/v1/fs/files/..%2fsecret.txt",
        "/v1/fs/files/%2e%2e/secret.txt",
        "/v1/fs/files/%2E%2E%2Fsecret.txt",
        "/v1/fs/files/%252e%252e/secret.txt",
        "/v1/fs/files/..%5csecret.txt",
        "/v1/fs/files/%c0%ae%c0%ae/secret.txt",
        "/v1/fs/files/.%00./secret.txt",
        "/v1/fs/files/%00",
        "/v1/fs/%2e%2e/%2e%2e/etc/passwd",
        "/v1/fs/files/....//secret.txt",
        "/v1/fs//files//..//..//etc/passwd",
        "/v1/fs/files/ok.txt/../../secret.txt",
        "/v1/resolve?path=/files/../secret.txt",
        "/v1/resolve?path=..%2f..%2fetc%2fpasswd",
        "/v1/resolve?path=%ff",
        "/v1/resolve?path=/files/%00",
    ];
    for path in attempts {
        let r = c.get(server.url(path)).send().await.expect("response");
        let status = r.status();
        let body = r.text().await.expect("body");
        assert!(status.is_client_error(), "{path}: {status}");
        assert!(
            !body.contains("SECRET") && !body.contains("root:"),
            "{path} leaked: {body}"
        );
    }
    let r = c
        .get(server.url("/v1/fs/files/./ok.txt"))
        .send()
        .await
        .expect("response");
    assert_eq!(
        r.text().await.expect("body"),
        "public\n",
        "a harmless `.` still works"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_malformed_arguments_are_refused() {
    let server = TestServer::anonymous(limits(), vfs_of(small_tree()));
    let c = Client::new();
    let (status, body) = upload(&c, &server, "arg=args&arg=%ff%fe", misbehave().to_vec()).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::BAD_REQUEST, &Value::from("bad_query"))
    );
    // 70 KiB of arguments in a stored-script run's JSON body.
    let put = c
        .put(server.url("/v1/scripts"))
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("response");
    let id = put.json::<Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let args: Vec<String> = (0..70).map(|_| "x".repeat(1024)).collect();
    let r = c
        .post(server.url(&format!("/v1/scripts/{id}/runs")))
        .json(&serde_json::json!({ "args": args }))
        .send()
        .await
        .expect("response");
    let status = r.status();
    let body: Value = r.json().await.expect("json");
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::BAD_REQUEST, &Value::from("bad_args"))
    );
    // An enormous query line is refused by the HTTP layer itself.
    let long = format!("/v1/runs?arg={}", "y".repeat(200_000));
    let r = c
        .post(server.url(&long))
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await;
    if let Ok(r) = r {
        assert!(r.status().is_client_error(), "{}", r.status());
    }
    assert_eq!(
        c.get(server.url("/healthz"))
            .send()
            .await
            .expect("still serving")
            .status(),
        StatusCode::OK
    );
    assert_eq!(live_scripts(&c, &server.url("/metrics")).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_never_sees_what_an_earlier_one_left_in_memory() {
    // Checks that every page of its 3 MiB memory (more than the part of a
    // slot the engine keeps resident between runs, and some of the rest)
    // reads zero, then writes a marker into each: it fails if a run before
    // it on the same slot left anything behind.
    let check_then_write = command(
        r#"(memory 48)
        (func (export "run") (result i32) (local $at i32)
            (loop $pages
                (if (i32.ne (i32.load (local.get $at)) (i32.const 0))
                    (then (return (i32.const 1))))
                (i32.store (local.get $at) (i32.const 0x5ec2e7))
                (local.set $at (i32.add (local.get $at) (i32.const 4096)))
                (br_if $pages (i32.lt_u (local.get $at) (i32.const 0x300000))))
            i32.const 0)"#,
    );
    // One slot, so that every run reuses the same memory.
    let rt = runtime(Limits {
        live_scripts: 1,
        live_scripts_per_tenant: 1,
        ..limits()
    });
    let permit = rt.try_admit(None).expect("a free slot");
    let compiled = rt
        .compile(&permit, check_then_write.into())
        .await
        .expect("compiles");
    drop(permit);
    for run in 0..5 {
        let permit = rt.try_admit(None).expect("a free slot");
        let report = rt
            .run(
                permit,
                vfsbox_host::Script::Compiled(compiled.clone()),
                spec(vfs_of(small_tree()), limits(), &[]),
            )
            .await
            .expect("runs");
        assert_eq!(
            report.exit_code(),
            Some(0),
            "run {run}: {:?}",
            report.outcome
        );
        assert_slots_freed(&rt).await;
    }
}

#[test]
fn mcp_tools_and_resources_stay_inside_the_mounts() {
    let dir = tempfile::tempdir().expect("tempdir");
    crate::mcp::documents(dir.path());
    // Links out of the mount, to a directory and to a file.
    std::os::unix::fs::symlink("/etc", dir.path().join("escape")).expect("symlink");
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("pw")).expect("symlink");
    let attempts = crate::mcp::stdio("2026-07-28", "hostile", dir.path());
    let attempts = attempts.as_array().expect("attempts");
    assert!(attempts.len() > 50, "{attempts:?}");
    for a in attempts {
        let text = a["text"].as_str().unwrap_or_default();
        // /etc/passwd starts with root's line; nothing of it may come back.
        assert!(!text.contains("root:x:0:0"), "{a}");
        let what = a["what"].as_str().unwrap_or_default();
        if what.starts_with("read") || what.starts_with("resource") {
            assert_eq!(a["ok"], false, "{a}");
        }
        if what.starts_with("sh") || what.starts_with("python") {
            // The script runs, and finds nothing to print.
            assert!(!text.contains("[exit 0]"), "{a}");
        }
        if what.starts_with("walk") {
            // Every document it reached is one of the mount's own.
            assert!(text.contains("beta TODO"), "{a}");
        }
    }
}
