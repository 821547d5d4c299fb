//! The HTTP API against a real server on 127.0.0.1, with a real client.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::{Client, StatusCode};
use serde_json::Value;
use vfsbox_host::http::Tenants;
use vfsbox_host::vfs::Fault;
use vfsbox_host::{AuditLog, Limits};

use crate::common::*;
use crate::server::*;

fn client() -> Client {
    Client::builder().build().expect("client")
}

fn run_url(server: &TestServer, args: &[&str], extra: &str) -> String {
    let mut q: Vec<String> = args
        .iter()
        .map(|a| format!("arg={}", urlencode(a)))
        .collect();
    if !extra.is_empty() {
        q.push(extra.to_owned());
    }
    server.url(&format!("/v1/runs?{}", q.join("&")))
}

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn post_run(
    client: &Client,
    server: &TestServer,
    args: &[&str],
    extra: &str,
) -> reqwest::Response {
    post_run_as(client, server, None, args, extra).await
}

/// [`post_run`] with a tenant's key, or none.
async fn post_run_as(
    client: &Client,
    server: &TestServer,
    key: Option<&str>,
    args: &[&str],
    extra: &str,
) -> reqwest::Response {
    let mut req = client
        .post(run_url(server, args, extra))
        .header("content-type", "application/wasm")
        .body(misbehave());
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    req.send().await.expect("response")
}

async fn json(r: reqwest::Response) -> (StatusCode, Value) {
    let status = r.status();
    let body = r.json::<Value>().await.expect("a JSON body");
    (status, body)
}

fn limits_with(f: impl FnOnce(&mut Limits)) -> Limits {
    let mut l = Limits {
        deadline: Duration::from_secs(10),
        fuel: SPIN_FUEL,
        ..Limits::default()
    };
    f(&mut l);
    l
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_answers_the_report_shape_with_the_status_of_its_outcome() {
    let server = TestServer::anonymous(limits_with(|_| {}), vfs_of(small_tree()));
    let c = client();
    let (status, body) = json(post_run(&c, &server, &["read", "/files/a.txt"], "").await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["outcome"], "exited");
    assert_eq!(body["exit_code"], 0);
    assert_eq!(body["stdout"], "alpha\n");
    assert_eq!(body["stdout_truncated"], false);
    assert_eq!(body["cwd"], "/");
    assert_eq!(body["error"], Value::Null);
    assert_eq!(body["usage"]["document_reads"], 1);
    assert_eq!(body["usage"]["bytes_read"], 6);
    for key in [
        "elapsed_ms",
        "fuel_consumed",
        "files_scanned",
        "bytes_scanned",
        "peak_memory_bytes",
    ] {
        assert!(body["usage"][key].is_u64(), "usage.{key}");
    }

    let (status, body) = json(post_run(&c, &server, &["exit", "3"], "").await).await;
    assert_eq!(
        (status, body["exit_code"].as_i64()),
        (StatusCode::OK, Some(3))
    );

    let (status, body) = json(post_run(&c, &server, &["panic"], "").await).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["outcome"], "trapped");
    assert_eq!(body["error"]["code"], "trapped");
    assert_eq!(body["stdout"], "about to panic\n");

    let (status, body) = json(post_run(&c, &server, &["alloc", "1073741824"], "").await).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["outcome"], "budget_exceeded");
    assert_eq!(body["error"]["code"], "budget_exceeded");
    assert_eq!(body["error"]["limit"], "memory");
    assert_eq!(body["error"]["allowed"], 64 << 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_cwd_and_request_ids_reach_the_script_and_the_response() {
    let server = TestServer::anonymous(limits_with(|_| {}), vfs_of(small_tree()));
    let c = client();
    let (_, body) = json(post_run(&c, &server, &["args", "a b", "c&d=e", "ü"], "").await).await;
    assert_eq!(body["stdout"], "a b\nc&d=e\nü\n");
    let (_, body) = json(post_run(&c, &server, &["read", "b.txt"], "cwd=/files/notes").await).await;
    assert_eq!(body["stdout"], "beta TODO\n");
    assert_eq!(body["cwd"], "/files/notes");
    let r = c
        .get(server.url("/healthz"))
        .header("x-request-id", "trace-123")
        .send()
        .await
        .expect("response");
    assert_eq!(r.headers()["x-request-id"], "trace-123");
    let r = c
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("response");
    assert!(
        !r.headers()["x-request-id"].is_empty(),
        "a request id is made when none is given"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_ending_frees_the_slot_and_the_next_run_succeeds() {
    let limits = limits_with(|l| l.deadline = Duration::from_millis(500));
    let tree = small_tree().faulty("slow.txt", "never", Fault::Stall);
    let server = TestServer::anonymous(limits, vfs_of(tree));
    let c = client();
    let metrics = server.url("/metrics");
    for (args, status, ending) in [
        (&["panic"][..], StatusCode::UNPROCESSABLE_ENTITY, "trapped"),
        (
            &["alloc", "1073741824"],
            StatusCode::PAYLOAD_TOO_LARGE,
            "memory",
        ),
        (&["spin"], StatusCode::PAYLOAD_TOO_LARGE, "deadline"),
        (
            &["read", "/files/slow.txt"],
            StatusCode::PAYLOAD_TOO_LARGE,
            "deadline",
        ),
    ] {
        let (got, body) = json(post_run(&c, &server, args, "").await).await;
        assert_eq!(got, status, "{args:?}: {body}");
        let seen = [&body["outcome"], &body["error"]["limit"]];
        assert!(seen.iter().any(|v| **v == ending), "{args:?}: {body}");
        assert_no_live_scripts(&c, &metrics).await;
    }
    let (status, body) = json(post_run(&c, &server, &["ok"], "").await).await;
    assert_eq!(
        (status, body["stdout"].as_str()),
        (StatusCode::OK, Some("ok\n"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_cancels_its_run() {
    let server = TestServer::anonymous(limits_with(|l| l.fuel = u64::MAX), vfs_of(small_tree()));
    let c = client();
    let metrics = server.url("/metrics");
    for args in [&["spin"][..], &["sleep", "60000"]] {
        let request = c
            .post(run_url(&server, args, ""))
            .header("content-type", "application/wasm")
            .body(misbehave())
            .send();
        let client_side = tokio::spawn(request);
        // Only once the script runs does the client go away.
        let start = Instant::now();
        while live_scripts(&c, &metrics).await != 1 {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{args:?} never started"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        client_side.abort();
        // The run's deadline is 10 s; its slot is freed long before.
        let left = Instant::now();
        assert_no_live_scripts(&c, &metrics).await;
        assert!(left.elapsed() < Duration::from_secs(2), "{args:?}");
    }
    let (status, _) = json(post_run(&c, &server, &["ok"], "").await).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_answers_413_with_the_output_produced_before_it() {
    let limits = limits_with(|l| l.deadline = Duration::from_secs(1));
    let tree = small_tree().faulty("slow.txt", "never", Fault::Stall);
    let server = TestServer::anonymous(limits, vfs_of(tree));
    let c = client();
    let (status, body) = json(
        post_run(
            &c,
            &server,
            &["print-then-spin", "partial"],
            "deadline_ms=300",
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["error"]["limit"], "deadline");
    assert_eq!(body["error"]["allowed"], 300);
    assert_eq!(body["stdout"], "partial\n");
    let started = Instant::now();
    let (status, body) = json(
        post_run(
            &c,
            &server,
            &["sleep-then-read", "0", "/files/slow.txt"],
            "",
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["error"]["limit"], "deadline");
    assert_eq!(
        body["stdout"], "sleeping\n",
        "the output before the stalled read is kept"
    );
    assert!(started.elapsed() < Duration::from_millis(1500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_may_lower_limits_but_not_raise_them() {
    let server = TestServer::anonymous(limits_with(|_| {}), vfs_of(small_tree()));
    let c = client();
    let (status, body) =
        json(post_run(&c, &server, &["alloc", "16000000"], "memory_bytes=8388608").await).await;
    assert_eq!(
        (status, &body["error"]["limit"]),
        (StatusCode::PAYLOAD_TOO_LARGE, &Value::from("memory"))
    );
    let (status, body) = json(post_run(&c, &server, &["ok"], "document_reads=401").await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"]["code"], "limit_too_high");
    assert_eq!(body["error"]["limit"], "document_reads");
    assert_eq!(body["error"]["allowed"], 400);
    let (status, body) = json(post_run(&c, &server, &["ok"], "fuel=lots").await).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::BAD_REQUEST, &Value::from("bad_query"))
    );
    let (status, body) = json(post_run(&c, &server, &["ok"], "colour=red").await).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::BAD_REQUEST, &Value::from("bad_query"))
    );
}

const KEY_A: &str = "key-of-tenant-a";
const KEY_B: &str = "key-of-tenant-b";

fn two_tenants(limits: Limits, audit: AuditLog) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (tenant, doc) in [("a", "a-only.txt"), ("b", "b-only.txt")] {
        std::fs::create_dir_all(dir.path().join(tenant)).expect("mkdir");
        std::fs::write(
            dir.path().join(tenant).join(doc),
            format!("secret of {tenant}\n"),
        )
        .expect("write");
    }
    let config = two_tenants_config(
        (KEY_A, &dir.path().join("a")),
        (KEY_B, &dir.path().join("b")),
        "live_scripts = 1",
    );
    let server = TestServer::start(limits, audit, |l| {
        Tenants::from_config(&config.tenants, l).expect("tenants")
    });
    (server, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_select_tenants_and_a_tenant_sees_only_its_documents() {
    let (server, _dir) = two_tenants(limits_with(|_| {}), AuditLog::disabled());
    let c = client();
    let run = |key: Option<&'static str>, args: &'static [&'static str]| {
        post_run_as(&c, &server, key, args, "")
    };
    let r = run(None, &["ok"]).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(json(r).await.1["error"]["code"], "unauthorized");
    let r = run(Some("not-a-key"), &["ok"]).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);

    let (status, body) = json(run(Some(KEY_A), &["read", "/files/a-only.txt"]).await).await;
    assert_eq!(
        (status, body["stdout"].as_str()),
        (StatusCode::OK, Some("secret of a\n"))
    );
    let (_, body) = json(run(Some(KEY_A), &["classify", "/files/b-only.txt"]).await).await;
    assert_eq!(body["stdout"], "not-found\n");
    let (_, body) = json(run(Some(KEY_A), &["classify", "/files/../b/b-only.txt"]).await).await;
    assert_eq!(body["stdout"], "not-found\n");
    // The same through `wasi:filesystem` (`std::fs`): the preopen is the
    // tenant's own mount.
    for (path, want) in [
        ("/files/a-only.txt", "read 12 bytes: \"secret of a\\n\"\n"),
        ("/files/b-only.txt", "refused: NotFound\n"),
        ("/files/../b/b-only.txt", "refused: PermissionDenied\n"),
    ] {
        let r = post_run_as(&c, &server, Some(KEY_A), &["wasi-fs", path], "").await;
        let (_, body) = json(r).await;
        assert_eq!(body["stdout"], want, "{path}");
    }

    for (key, path, want) in [
        (KEY_A, "/v1/fs/files/a-only.txt", StatusCode::OK),
        (KEY_A, "/v1/fs/files/b-only.txt", StatusCode::NOT_FOUND),
        (
            KEY_A,
            "/v1/fs/files/..%2fb%2fb-only.txt",
            StatusCode::NOT_FOUND,
        ),
        (
            KEY_A,
            "/v1/resolve?path=/files/b-only.txt",
            StatusCode::NOT_FOUND,
        ),
        (KEY_B, "/v1/fs/files/b-only.txt", StatusCode::OK),
        (
            KEY_B,
            "/v1/resolve?path=/files/a-only.txt",
            StatusCode::NOT_FOUND,
        ),
    ] {
        let r = c
            .get(server.url(path))
            .bearer_auth(key)
            .send()
            .await
            .expect("response");
        assert_eq!(r.status(), want, "{path}");
    }
    let r = c
        .get(server.url("/v1/fs/files/a-only.txt"))
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = c
        .get(server.url("/v1/resolve?path=/files"))
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_over_its_own_cap_gets_tenant_busy_while_others_run() {
    let limits = limits_with(|l| l.deadline = Duration::from_secs(2));
    let (server, _dir) = two_tenants(limits, AuditLog::disabled());
    let c = client();
    let busy_a = {
        let c = c.clone();
        let url = run_url(&server, &["sleep", "1500"], "");
        tokio::spawn(async move {
            c.post(url)
                .bearer_auth(KEY_A)
                .header("content-type", "application/wasm")
                .body(misbehave())
                .send()
                .await
        })
    };
    let metrics = server.url("/metrics");
    let start = Instant::now();
    while live_scripts(&c, &metrics).await < 1 {
        assert!(start.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = post_run_as(&c, &server, Some(KEY_A), &["ok"], "").await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "2");
    assert_eq!(json(r).await.1["error"]["code"], "tenant_busy");
    let r = c
        .post(run_url(&server, &["ok"], ""))
        .bearer_auth(KEY_B)
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::OK, "another tenant still runs");
    assert_eq!(
        busy_a.await.expect("task").expect("response").status(),
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_its_documented_status_and_the_server_keeps_serving() {
    let server = TestServer::anonymous(limits_with(|_| {}), vfs_of(small_tree()));
    let c = client();
    let upload = |body: Vec<u8>, content_type: &'static str| {
        c.post(server.url("/v1/runs?arg=ok"))
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let cases: Vec<(Vec<u8>, &str, StatusCode, &str)> = vec![
        (
            b"definitely not wasm".to_vec(),
            "application/wasm",
            StatusCode::BAD_REQUEST,
            "invalid_script",
        ),
        (
            wat::parse_str("(module)").expect("wat"),
            "application/wasm",
            StatusCode::BAD_REQUEST,
            "invalid_script",
        ),
        (
            wat::parse_str(r#"(component (import "wasi:sockets/tcp@0.2.0" (instance)))"#)
                .expect("wat"),
            "application/wasm",
            StatusCode::BAD_REQUEST,
            "forbidden_import",
        ),
        (
            misbehave().to_vec(),
            "application/json",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            misbehave().to_vec(),
            "text/plain",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
    ];
    for (body, content_type, status, code) in cases {
        let (got, body) = json(upload(body, content_type).await.expect("response")).await;
        assert_eq!(
            (got, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
    }
    let r = c
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("still serving");
    assert_eq!(r.status(), StatusCode::OK);
    let id = "sha256:".to_owned() + &"0".repeat(64);
    for (body, status, code) in [
        ("{not json", StatusCode::BAD_REQUEST, "bad_json"),
        // JSON of the wrong shape is bad input too: 422 means a trap.
        ("{\"args\": 3}", StatusCode::BAD_REQUEST, "bad_json"),
        ("{\"colour\": \"red\"}", StatusCode::BAD_REQUEST, "bad_json"),
    ] {
        let r = c
            .post(server.url("/v1/scripts/x/runs".replace('x', &id).as_str()))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("response");
        let (got, b) = json(r).await;
        assert_eq!(
            (got, b["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
    }
    let huge_script = serde_json::json!({"script": "x".repeat(300 * 1024)});
    let (status, body) = json(
        c.post(server.url("/v1/sh"))
            .json(&huge_script)
            .send()
            .await
            .expect("response"),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
    );
    let (status, body) = json(c.get(server.url("/nope")).send().await.expect("response")).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("no_route"))
    );
    let (status, _) = json(
        c.delete(server.url("/v1/runs"))
            .send()
            .await
            .expect("response"),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (status, body) = json(post_run(&c, &server, &["ok"], "cwd=/nowhere").await).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("bad_cwd"))
    );
}

/// Sends the head of a `POST /v1/runs` declaring `length` bytes and then
/// `sent` bytes of it, and returns the socket, to read the answer from.
async fn partial_upload(server: &TestServer, length: usize, sent: usize) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut socket = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let head = format!(
        "POST /v1/runs HTTP/1.1\r\nhost: {}\r\ncontent-type: application/wasm\r\ncontent-length: {length}\r\n\r\n",
        server.addr
    );
    socket.write_all(head.as_bytes()).await.expect("write");
    socket.write_all(&vec![0u8; sent]).await.expect("write");
    socket
}

/// The first answer the server writes on `socket`, within `within`.
async fn answer_on(socket: &mut tokio::net::TcpStream, within: Duration) -> String {
    use tokio::io::AsyncReadExt;
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(within, socket.read(&mut answer))
        .await
        .expect("an answer in time")
        .expect("read");
    String::from_utf8_lossy(&answer[..n]).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_declared_too_large_is_refused_at_once() {
    let server = TestServer::anonymous(limits_with(|_| {}), vfs_of(small_tree()));
    // Declare 17 MiB, send 1 KiB of it, and read the answer: the server
    // must not wait for the rest.
    let mut socket = partial_upload(&server, 17 << 20, 1024).await;
    let answer = answer_on(&mut socket, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"payload_too_large\""), "{answer}");
    assert_eq!(
        client()
            .get(server.url("/healthz"))
            .send()
            .await
            .expect("still serving")
            .status(),
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_that_trickles_in_is_refused_at_its_timeout_and_frees_its_slot() {
    let limits = limits_with(|l| {
        l.live_scripts = 1;
        l.upload_timeout = Duration::from_millis(1500);
    });
    let server = TestServer::anonymous(limits, vfs_of(small_tree()));
    let c = client();
    // Declare 10 kB, send 100 bytes, and send no more.
    let mut socket = partial_upload(&server, 10_000, 100).await;
    // While it trickles, it holds the only slot.
    let start = Instant::now();
    while live_scripts(&c, &server.url("/metrics")).await != 1 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the upload never took its slot"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (status, body) = json(post_run(&c, &server, &["ok"], "").await).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("busy"))
    );
    let answer = answer_on(&mut socket, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"upload_timeout\""), "{answer}");
    assert_no_live_scripts(&c, &server.url("/metrics")).await;
    let (status, _) = json(post_run(&c, &server, &["ok"], "").await).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_upload_is_refused_before_it_is_all_read() {
    let server = TestServer::anonymous(limits_with(|_| {}), vfs_of(small_tree()));
    let c = client();
    // 64 MiB offered in 1 MiB chunks, without a Content-Length.
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = sent.clone();
    let chunks = futures::stream::iter(0..64).then(move |_| {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(5)).await;
            Ok::<_, std::io::Error>(bytes::Bytes::from(vec![0u8; 1 << 20]))
        }
    });
    let r = c
        .post(server.url("/v1/runs"))
        .header("content-type", "application/wasm")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await;
    match r {
        Ok(r) => {
            let (status, body) = json(r).await;
            assert_eq!(
                (status, body["error"]["code"].as_str()),
                (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
            );
        }
        // The server may close the connection while the client still sends.
        Err(e) => assert!(!e.is_timeout(), "{e}"),
    }
    let read = sent.load(std::sync::atomic::Ordering::Relaxed);
    assert!(read < 40, "the server read {read} MiB of a 64 MiB upload");
    assert_eq!(
        c.get(server.url("/healthz"))
            .send()
            .await
            .expect("still serving")
            .status(),
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_scripts_run_by_id_for_their_tenant_only() {
    let (server, _dir) = two_tenants(limits_with(|_| {}), AuditLog::disabled());
    let c = client();
    let put = || {
        c.put(server.url("/v1/scripts"))
            .bearer_auth(KEY_A)
            .header("content-type", "application/wasm")
            .body(misbehave())
            .send()
    };
    let (status, body) = json(put().await.expect("response")).await;
    assert_eq!(status, StatusCode::CREATED);
    let id = body["id"].as_str().expect("id").to_owned();
    assert!(id.starts_with("sha256:") && id.len() == 71, "{id}");
    assert_eq!(body["size"], misbehave().len());
    let (status, _) = json(put().await.expect("response")).await;
    assert_eq!(status, StatusCode::OK, "storing it again");

    let runs = server.url(&format!("/v1/scripts/{id}/runs"));
    let request = serde_json::json!({
        "args": ["stdin"],
        "cwd": "/files",
        "stdin": "from the request\n",
        "limits": {"deadline_ms": 5000}
    });
    let r = c
        .post(&runs)
        .bearer_auth(KEY_A)
        .json(&request)
        .send()
        .await
        .expect("response");
    let (status, body) = json(r).await;
    assert_eq!(
        (status, body["stdout"].as_str()),
        (StatusCode::OK, Some("from the request\n"))
    );
    assert_eq!(body["cwd"], "/files");
    let r = c
        .post(&runs)
        .bearer_auth(KEY_B)
        .json(&request)
        .send()
        .await
        .expect("response");
    let (status, body) = json(r).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("script_not_found"))
    );
    let r = c
        .post(server.url("/v1/scripts/sha256:nothex/runs"))
        .bearer_auth(KEY_A)
        .json(&request)
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let text = c
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metric(&text, "vfsbox_compile_cache_hits_total").expect("hits") >= 1.0,
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_equal_the_bytes_on_disk_whole_and_ranged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 % 256) as u8).collect();
    std::fs::create_dir(dir.path().join("sub dir")).expect("mkdir");
    std::fs::write(dir.path().join("sub dir/data.bin"), &bytes).expect("write");
    let server = TestServer::anonymous(limits_with(|_| {}), local_vfs(dir.path()));
    let c = client();
    let url = server.url("/v1/fs/files/sub%20dir/data.bin");
    let r = c.get(&url).send().await.expect("response");
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-length"], "1000000");
    assert_eq!(r.headers()["accept-ranges"], "bytes");
    let etag = r.headers()["etag"].to_str().expect("etag").to_owned();
    assert!(r.headers().contains_key("last-modified"));
    assert_eq!(r.bytes().await.expect("body").as_ref(), &bytes[..]);

    for (range, want, content_range) in [
        ("bytes=0-99", 0..100, "bytes 0-99/1000000"),
        (
            "bytes=999990-",
            999_990..1_000_000,
            "bytes 999990-999999/1000000",
        ),
        (
            "bytes=-10",
            999_990..1_000_000,
            "bytes 999990-999999/1000000",
        ),
        (
            "bytes=500000-500000",
            500_000..500_001,
            "bytes 500000-500000/1000000",
        ),
    ] {
        let r = c
            .get(&url)
            .header("range", range)
            .send()
            .await
            .expect("response");
        assert_eq!(r.status(), StatusCode::PARTIAL_CONTENT, "{range}");
        assert_eq!(r.headers()["content-range"], content_range);
        assert_eq!(
            r.bytes().await.expect("body").as_ref(),
            &bytes[want],
            "{range}"
        );
    }
    let r = c
        .get(&url)
        .header("range", "bytes=2000000-")
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(r.headers()["content-range"], "bytes */1000000");
    let r = c
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);

    let r = c
        .get(server.url("/v1/resolve?path=/files/sub%20dir/../sub%20dir/data.bin"))
        .send()
        .await
        .expect("response");
    let (status, body) = json(r).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["path"], "/files/sub dir/data.bin");
    assert_eq!(body["kind"], "file");
    assert_eq!(body["size"], 1_000_000);
    assert!(body["modified"].as_str().expect("modified").ends_with('Z'));
    for (path, status) in [
        ("/v1/fs/files/missing", StatusCode::NOT_FOUND),
        ("/v1/fs/files/sub%20dir", StatusCode::BAD_REQUEST),
        ("/v1/fs/files/%ff", StatusCode::BAD_REQUEST),
        ("/v1/fs/files/a%00b", StatusCode::BAD_REQUEST),
        ("/v1/fs/%2e%2e/%2e%2e/etc/passwd", StatusCode::NOT_FOUND),
        ("/v1/resolve?path=/nope", StatusCode::NOT_FOUND),
        ("/v1/resolve", StatusCode::BAD_REQUEST),
    ] {
        let r = c.get(server.url(path)).send().await.expect("response");
        assert_eq!(r.status(), status, "{path}");
    }
}

/// Resident memory of process `pid`, in bytes.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .expect("VmRSS");
    kb * 1024
}

/// Served by a `vfsbox serve` process of its own, whose memory is the
/// server's alone (the test process runs other tests meanwhile).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_downloads_stream_without_growing_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).expect("mkdir");
    let file = std::fs::File::create(docs.join("big.bin")).expect("create");
    file.set_len(512 << 20).expect("a sparse 512 MiB file");
    let key = "download-key";
    let config = dir.path().join("vfsbox.toml");
    std::fs::write(
        &config,
        format!(
            "[[tenants]]\nname = \"t\"\nkey_sha256 = [\"{}\"]\n[[tenants.mounts]]\npath = \"/files\"\nlocal = {{ dir = \"{}\" }}\n",
            hex::encode(<sha2::Sha256 as sha2::Digest>::digest(key.as_bytes())),
            docs.display()
        ),
    )
    .expect("config");
    let server = crate::server::ServeProcess::start(&["--config", config.to_str().expect("utf-8")]);
    // Measured once the host has loaded the built-in Python, which it does
    // in the background as it starts.
    server.wait_ready();
    let pid = server.child.id();
    let c = client();
    let before = rss_bytes(pid);
    let mut body = c
        .get(server.url("/v1/fs/files/big.bin"))
        .bearer_auth(key)
        .send()
        .await
        .expect("response")
        .bytes_stream();
    let mut total = 0u64;
    let mut peak = before;
    let mut samples = 0;
    while let Some(chunk) = body.next().await {
        let was = total;
        total += chunk.expect("chunk").len() as u64;
        // Once per 16 MiB received, whatever the chunk sizes.
        if was >> 24 != total >> 24 {
            peak = peak.max(rss_bytes(pid));
            samples += 1;
        }
    }
    peak = peak.max(rss_bytes(pid));
    assert_eq!(total, 512 << 20);
    assert!(samples >= 31, "memory was sampled {samples} times");
    let grew = peak.saturating_sub(before);
    assert!(
        grew < 64 << 20,
        "the server's memory grew by {} MiB while streaming 512 MiB",
        grew >> 20
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_and_downloads_are_audited_with_the_request_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let (server, _docs) = two_tenants(limits_with(|_| {}), AuditLog::open(&log).expect("audit"));
    let c = client();
    let r = c
        .post(run_url(&server, &["grep", "secret", "/files"], ""))
        .bearer_auth(KEY_A)
        .header("x-request-id", "req-audit-1")
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::OK);
    let r = c
        .get(server.url("/v1/fs/files/a-only.txt"))
        .bearer_auth(KEY_A)
        .header("x-request-id", "req-audit-2")
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::OK);
    let records: Vec<Value> = std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let events: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["event"].as_str().expect("event"),
                r["tenant"].as_str().expect("tenant"),
                r["request_id"].as_str().expect("request id"),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("run_start", "a", "req-audit-1"),
            ("grep", "a", "req-audit-1"),
            ("run_end", "a", "req-audit-1"),
            ("download", "a", "req-audit-2"),
        ]
    );
    assert!(
        !std::fs::read_to_string(&log)
            .expect("log")
            .contains("\"secret\"")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_lists_every_endpoint_and_validates() {
    let server = TestServer::anonymous(limits_with(|_| {}), vfs_of(small_tree()));
    let c = client();
    let (status, doc) = json(
        c.get(server.url("/openapi.json"))
            .send()
            .await
            .expect("response"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(doc["openapi"].as_str().expect("version").starts_with("3."));
    let paths = doc["paths"].as_object().expect("paths");
    // Every route of the router, with the statuses it answers.
    for (path, method, statuses) in [
        (
            "/v1/runs",
            "post",
            &["200", "400", "401", "408", "413", "415", "422", "429"][..],
        ),
        (
            "/v1/scripts",
            "put",
            &["200", "201", "400", "401", "408", "413", "415", "429"],
        ),
        (
            "/v1/scripts/{id}/runs",
            "post",
            &["200", "400", "401", "404", "413", "422", "429"],
        ),
        (
            "/v1/sh",
            "post",
            &["200", "400", "401", "413", "422", "429"],
        ),
        (
            "/v1/fs/{path}",
            "get",
            &["200", "206", "304", "401", "404", "416"],
        ),
        ("/v1/resolve", "get", &["200", "400", "401", "404"]),
        ("/healthz", "get", &["200"]),
        ("/readyz", "get", &["200", "503"]),
        ("/metrics", "get", &["200"]),
        ("/openapi.json", "get", &["200"]),
    ] {
        let op = paths.get(path).and_then(|p| p.get(method));
        let Some(op) = op else {
            panic!("{method} {path} is missing");
        };
        for status in statuses {
            assert!(
                op["responses"].get(*status).is_some(),
                "{method} {path} does not document {status}"
            );
        }
    }
    let file = tempfile::NamedTempFile::new().expect("tempfile");
    std::fs::write(file.path(), serde_json::to_vec(&doc).expect("json")).expect("write");
    crate::openapi_validator::validate(file.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_shuts_down_gracefully_letting_running_scripts_finish() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let config = dir.path().join("vfsbox.toml");
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).expect("mkdir");
    std::fs::write(docs.join("a.txt"), "hello\n").expect("write");
    let key_hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"k"));
    std::fs::write(
        &config,
        format!(
            "[server]\naudit_log = \"{}\"\n[limits]\ndeadline = \"3s\"\n[[tenants]]\nname = \"t\"\nkey_sha256 = [\"{key_hash}\"]\n[[tenants.mounts]]\npath = \"/files\"\nlocal = {{ dir = \"{}\" }}\n",
            log.display(),
            docs.display()
        ),
    )
    .expect("config");
    let mut server = ServeProcess::start(&["--config", config.to_str().expect("utf-8")]);
    let c = client();
    let url = server.url("/v1/runs?arg=sleep&arg=1000");
    let running = {
        let c = c.clone();
        tokio::spawn(async move {
            c.post(url)
                .bearer_auth("k")
                .header("content-type", "application/wasm")
                .body(misbehave())
                .send()
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    let status = tokio::task::spawn_blocking(move || {
        let status = server.terminate(Duration::from_secs(10));
        (status, server)
    });
    let r = running
        .await
        .expect("task")
        .expect("the running script still answers");
    let (code, body) = json(r).await;
    assert_eq!(
        (code, body["stdout"].as_str()),
        (StatusCode::OK, Some("sleeping\nwoke up\n"))
    );
    let (status, server) = status.await.expect("join");
    assert!(
        status.expect("the server exits").success(),
        "{}",
        server.stderr.lock().expect("log")
    );
    let text = std::fs::read_to_string(&log).expect("audit log");
    assert!(text.ends_with('\n'));
    for line in text.lines() {
        serde_json::from_str::<Value>(line).expect("every audit line is whole JSON");
    }
    assert!(text.contains("\"run_end\""));
    assert!(
        client()
            .get(format!("http://{}/healthz", server.addr))
            .send()
            .await
            .is_err(),
        "no longer listening"
    );
}

#[test]
fn demo_mode_refuses_a_non_loopback_address() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args(["serve", "--listen", "0.0.0.0:0"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback only"));
}

#[test]
fn a_bad_config_refuses_to_start_with_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("vfsbox.toml");
    std::fs::write(&config, "[limits]\nmemroy = \"1MiB\"\n").expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args(["serve", "--config", config.to_str().expect("utf-8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("memroy"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_server_serves_the_built_in_documents() {
    let server = ServeProcess::start(&[]);
    let c = client();
    let r = c
        .get(server.url("/v1/fs/files/README.md"))
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        r.text()
            .await
            .expect("text")
            .starts_with("# Northwind Handbook")
    );
    assert!(server.stderr.lock().expect("log").contains("DEMO MODE"));
    let r = c
        .post(server.url("/v1/runs?arg=grep&arg=refund&arg=/files/policies"))
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("response");
    let (status, body) = json(r).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body["stdout"]
            .as_str()
            .expect("stdout")
            .contains("/files/policies/refund-policy.md:")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_runs_rejections_limits_durations_and_the_cache() {
    let (server, _dir) = two_tenants(limits_with(|_| {}), AuditLog::disabled());
    let c = client();
    let scrape = || async {
        c.get(server.url("/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text")
    };
    let before = scrape().await;
    for (args, extra, status) in [
        (&["ok"][..], "", StatusCode::OK),
        (&["panic"], "", StatusCode::UNPROCESSABLE_ENTITY),
        (&["spin"], "deadline_ms=200", StatusCode::PAYLOAD_TOO_LARGE),
    ] {
        let r = post_run_as(&c, &server, Some(KEY_A), args, extra).await;
        assert_eq!(r.status(), status, "{args:?}");
    }
    let r = post_run(&c, &server, &["ok"], "").await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let after = scrape().await;
    let grew = |sample: &str| {
        metric(&after, sample).unwrap_or_else(|| panic!("{sample} missing: {after}"))
            - metric(&before, sample).unwrap_or_else(|| panic!("{sample} missing: {before}"))
    };
    for (sample, by) in [
        ("vfsbox_runs_total{outcome=\"exited\"}", 1.0),
        ("vfsbox_runs_total{outcome=\"trapped\"}", 1.0),
        ("vfsbox_runs_total{outcome=\"budget_exceeded\"}", 1.0),
        ("vfsbox_runs_total{outcome=\"failed\"}", 0.0),
        ("vfsbox_limit_hits_total{limit=\"deadline\"}", 1.0),
        ("vfsbox_limit_hits_total{limit=\"memory\"}", 0.0),
        ("vfsbox_rejections_total{reason=\"unauthorized\"}", 1.0),
        ("vfsbox_rejections_total{reason=\"busy\"}", 0.0),
        ("vfsbox_run_duration_seconds_count", 3.0),
        ("vfsbox_run_fuel_count", 3.0),
        ("vfsbox_compile_cache_misses_total", 1.0),
        ("vfsbox_compile_cache_hits_total", 2.0),
    ] {
        assert_eq!(grew(sample), by, "{sample}");
    }
    // The deadline run took at least its 200 ms; the histogram says so.
    assert!(grew("vfsbox_run_duration_seconds_sum") >= 0.2);
    assert_eq!(grew("vfsbox_run_duration_seconds_bucket{le=\"+Inf\"}"), 3.0);
    assert!(grew("vfsbox_run_duration_seconds_bucket{le=\"0.1\"}") <= 2.0);
}

/// A refusal that cannot drain the rest of a large upload (more than the
/// 1 MiB it reads) still reaches the client: the server closes after its
/// answer, but reads what the client still sends before it does, so the
/// client gets `415` and the end of the stream, never a reset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_large_upload_gets_its_answer_not_a_reset() {
    use std::io::{Read, Write};
    let server = ServeProcess::start(&[]);
    let addr = server.addr;
    tokio::task::spawn_blocking(move || {
        for attempt in 0..5 {
            let mut s = std::net::TcpStream::connect(addr).expect("connect");
            s.set_read_timeout(Some(Duration::from_secs(30)))
                .expect("timeout");
            let body = vec![b'x'; 4 << 20];
            let head = format!(
                "POST /v1/runs HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len()
            );
            s.write_all(head.as_bytes()).expect("headers");
            // As an HTTP client does: all of the body, then the answer.
            s.write_all(&body)
                .expect("the server reads the body it refused");
            let mut answer = Vec::new();
            s.read_to_end(&mut answer)
                .unwrap_or_else(|e| panic!("attempt {attempt}: the answer, not {e}"));
            let text = String::from_utf8_lossy(&answer);
            assert!(
                text.starts_with("HTTP/1.1 415"),
                "attempt {attempt}: {text}"
            );
            assert!(
                text.to_ascii_lowercase().contains("connection: close"),
                "{text}"
            );
        }
    })
    .await
    .expect("join");
}

/// A client still sending a refused upload slowly, longer than a lingering
/// close would wait in all for a stalled one, gets its answer too: the
/// server keeps reading while the bytes keep coming (as nginx's
/// `lingering_timeout` is per read), and closes only once the client has
/// sent it all and read the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_upload_sent_slowly_still_gets_its_answer() {
    use std::io::{Read, Write};
    let server = ServeProcess::start(&[]);
    let addr = server.addr;
    tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let total = 4 << 20;
        let head = format!(
            "POST /v1/runs HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n\
             Content-Length: {total}\r\n\r\n"
        );
        s.write_all(head.as_bytes()).expect("headers");
        // A trickle for 8 s, a pause under the 5 s idle limit each time...
        let chunk = vec![b'x'; 64 << 10];
        let mut sent = 0;
        for _ in 0..8 {
            s.write_all(&chunk).expect("the server still reads");
            sent += chunk.len();
            std::thread::sleep(Duration::from_secs(1));
        }
        // ...then the rest at once, as a client that got CPU back does.
        s.write_all(&vec![b'x'; total - sent])
            .expect("the server still reads the rest");
        let mut answer = Vec::new();
        s.read_to_end(&mut answer)
            .unwrap_or_else(|e| panic!("the answer, not {e}"));
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 415"), "{text}");
    })
    .await
    .expect("join");
}
