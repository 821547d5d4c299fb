//! Faults, injected one at a time: what the caller sees, that the slot is
//! freed, and that the server keeps serving.

use std::time::Duration;

use futures::StreamExt;
use reqwest::{Client, StatusCode};
use serde_json::Value;
use vfsbox_host::vfs::Fault;
use vfsbox_host::{AuditLog, Limits};

use crate::common::*;
use crate::s3::S3Server;
use crate::server::*;

fn limits() -> Limits {
    Limits {
        deadline: Duration::from_secs(2),
        fuel: SPIN_FUEL,
        ..Limits::default()
    }
}

fn faulty_tree() -> vfsbox_host::vfs::MemoryBackend {
    small_tree()
        .faulty("stall.txt", "never", Fault::Stall)
        .faulty("fail.txt", "boom", Fault::Fail)
        .faulty("midway.txt", "first half|second half", Fault::FailMidway)
}

async fn run(c: &Client, server: &TestServer, args: &[&str]) -> (StatusCode, Value) {
    let query: Vec<String> = args
        .iter()
        .map(|a| {
            format!(
                "arg={}",
                form_urlencoded::byte_serialize(a.as_bytes()).collect::<String>()
            )
        })
        .collect();
    let r = c
        .post(server.url(&format!("/v1/runs?{}", query.join("&"))))
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("response");
    let status = r.status();
    (status, r.json().await.expect("json"))
}

async fn still_serving(c: &Client, server: &TestServer) {
    assert_no_live_scripts(c, &server.url("/metrics")).await;
    let (status, body) = run(c, server, &["ok"]).await;
    assert_eq!(
        (status, body["stdout"].as_str()),
        (StatusCode::OK, Some("ok\n"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_is_reported_and_leaves_the_server_serving() {
    let server = TestServer::anonymous(limits(), vfs_of(faulty_tree()));
    let c = Client::new();
    // (fault, arguments, status, what the caller sees)
    let cases: &[(&str, &[&str], StatusCode, &str)] = &[
        (
            "guest trap",
            &["panic"],
            StatusCode::UNPROCESSABLE_ENTITY,
            "trapped",
        ),
        (
            "stack overflow",
            &["stack"],
            StatusCode::UNPROCESSABLE_ENTITY,
            "trapped",
        ),
        (
            "memory bomb",
            &["alloc", "2000000000"],
            StatusCode::PAYLOAD_TOO_LARGE,
            "memory",
        ),
        (
            "output flood",
            &["flood", "10485760"],
            StatusCode::OK,
            "stdout_truncated",
        ),
        (
            "stalled backend",
            &["read", "/files/stall.txt"],
            StatusCode::PAYLOAD_TOO_LARGE,
            "deadline",
        ),
        (
            "failing backend",
            &["read", "/files/fail.txt"],
            StatusCode::OK,
            "error: unavailable",
        ),
        (
            "failure mid-read in a search",
            &["grep", "half", "/files/midway.txt", "/files/a.txt"],
            StatusCode::OK,
            "error /files/midway.txt",
        ),
    ];
    for (fault, args, status, seen) in cases {
        let (got, body) = run(&c, &server, args).await;
        assert_eq!(got, *status, "{fault}: {body}");
        let shown = match *seen {
            "trapped" => body["outcome"] == "trapped",
            "stdout_truncated" => {
                body["stdout_truncated"] == true
                    && body["stdout"].as_str().map(str::len) == Some(1 << 20)
            }
            limit @ ("memory" | "deadline") => body["error"]["limit"] == limit,
            text => body["stdout"].as_str().is_some_and(|s| s.contains(text)),
        };
        assert!(shown, "{fault}: expected {seen} in {body}");
        still_serving(&c, &server).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_that_fails_midway_is_cut_and_the_server_goes_on() {
    let server = TestServer::anonymous(limits(), vfs_of(faulty_tree()));
    let c = Client::new();
    // The response is aborted: the client sees a broken transfer (before
    // or after the headers), never a short body passed off as whole.
    match c.get(server.url("/v1/fs/files/midway.txt")).send().await {
        Ok(r) => assert!(r.bytes().await.is_err(), "a short body passed as whole"),
        Err(e) => assert!(e.is_request() || e.is_body(), "{e}"),
    }
    let r = c
        .get(server.url("/v1/fs/files/fail.txt"))
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), StatusCode::BAD_GATEWAY);
    still_serving(&c, &server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_mid_download_does_not_disturb_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = std::fs::File::create(dir.path().join("big.bin")).expect("create");
    file.set_len(256 << 20).expect("sparse file");
    let server = TestServer::anonymous(limits(), local_vfs(dir.path()));
    let c = Client::new();
    for _ in 0..5 {
        let r = c
            .get(server.url("/v1/fs/files/big.bin"))
            .send()
            .await
            .expect("response");
        let mut body = r.bytes_stream();
        let first = body.next().await.expect("a chunk").expect("bytes");
        assert!(!first.is_empty());
        drop(body);
    }
    still_serving(&c, &server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_s3_server_stopped_mid_run_is_an_error_the_script_sees() {
    let s3 = S3Server::start().await;
    let backend = s3.backend("docs", &[("a.txt", b"from s3\n")]).await;
    let vfs = vfsbox_host::Vfs::single(vpath("/files"), backend).expect("mount");
    let server = TestServer::anonymous(limits(), vfs);
    let c = Client::new();
    let (status, body) = run(&c, &server, &["read", "/files/a.txt"]).await;
    assert_eq!(
        (status, body["stdout"].as_str()),
        (StatusCode::OK, Some("from s3\n"))
    );
    let running = {
        let (c, url) = (
            c.clone(),
            server.url("/v1/runs?arg=sleep-then-read&arg=300&arg=/files/a.txt"),
        );
        tokio::spawn(async move {
            c.post(url)
                .header("content-type", "application/wasm")
                .body(misbehave())
                .send()
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(s3);
    let r = running.await.expect("task").expect("response");
    let (status, body) = (r.status(), r.json::<Value>().await.expect("json"));
    // The script sees the store as unavailable (or, if the connection
    // hangs, the deadline ends it); either way it is reported, not lost.
    match status {
        StatusCode::OK => assert!(
            body["stdout"]
                .as_str()
                .expect("stdout")
                .contains("error: unavailable"),
            "{body}"
        ),
        StatusCode::PAYLOAD_TOO_LARGE => assert_eq!(body["error"]["limit"], "deadline"),
        other => panic!("{other}: {body}"),
    }
    assert_no_live_scripts(&c, &server.url("/metrics")).await;
    let (status, body) = run(&c, &server, &["ok"]).await;
    assert_eq!(
        (status, body["stdout"].as_str()),
        (StatusCode::OK, Some("ok\n"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_audit_log_fails_the_request_and_frees_the_slot() {
    // Every write to /dev/full fails with "no space left on device".
    let audit = AuditLog::open(std::path::Path::new("/dev/full")).expect("open");
    let server = TestServer::start(limits(), audit, |l| {
        vfsbox_host::http::Tenants::anonymous("demo", vfs_of(small_tree()), l)
    });
    let c = Client::new();
    let (status, body) = run(&c, &server, &["ok"]).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::INTERNAL_SERVER_ERROR, &Value::from("internal"))
    );
    let r = c
        .get(server.url("/v1/fs/files/a.txt"))
        .send()
        .await
        .expect("response");
    assert_eq!(
        r.status(),
        StatusCode::INTERNAL_SERVER_ERROR,
        "no download without its audit record"
    );
    assert_no_live_scripts(&c, &server.url("/metrics")).await;
    assert_eq!(
        c.get(server.url("/healthz"))
            .send()
            .await
            .expect("healthz")
            .status(),
        StatusCode::OK
    );
}
