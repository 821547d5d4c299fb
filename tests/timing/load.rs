#![allow(dead_code)] // Shared by the timing tests and the soak; each uses part.

//! Bursts of concurrent requests against the real `vfsbox serve`: the cap
//! holds, every refusal is a proper `429`, nothing fails with a `5xx`, and
//! afterwards no script is live and memory is back near where it started.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use reqwest::{Client, StatusCode};

use crate::common::misbehave;
use crate::server::{ServeProcess, assert_no_live_scripts, live_scripts};

/// Resident memory of a process, in bytes.
pub(crate) fn rss_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        .expect("VmRSS")
        * 1024
}

/// Open file descriptors of a process.
pub(crate) fn fds_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd dir")
        .count()
}

/// A served tree with documents to grep and download.
pub(crate) fn serve_docs() -> (ServeProcess, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("notes")).expect("mkdir");
    for i in 0..50 {
        std::fs::write(
            docs.join(format!("notes/n{i:02}.md")),
            format!("note {i}\npolicy line {i}\n"),
        )
        .expect("write");
    }
    std::fs::write(docs.join("big.bin"), vec![7u8; 4 << 20]).expect("write");
    let config = dir.path().join("vfsbox.toml");
    let key = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"load-key"));
    std::fs::write(
        &config,
        format!(
            "[limits]\ndeadline = \"2s\"\n[[tenants]]\nname = \"load\"\nkey_sha256 = [\"{key}\"]\n\
             [[tenants.mounts]]\npath = \"/files\"\nlocal = {{ dir = \"{}\" }}\n",
            docs.display()
        ),
    )
    .expect("config");
    let server = ServeProcess::start(&["--config", config.to_str().expect("utf-8")]);
    (server, dir)
}

/// What one request of the mix asks for.
fn request(c: &Client, server: &ServeProcess, i: usize) -> reqwest::RequestBuilder {
    let run = |query: &str| {
        c.post(server.url(&format!("/v1/runs?{query}")))
            .header("content-type", "application/wasm")
            .body(misbehave())
    };
    let req = match i % KINDS {
        0 => run("arg=ok"),
        1 => run("arg=spin&deadline_ms=300"),
        2 => run("arg=alloc&arg=1073741824"),
        3 => run("arg=grep&arg=policy&arg=/files/notes"),
        4 => c
            .post(server.url("/v1/sh"))
            .json(&serde_json::json!({"script": "grep -rn policy /files/notes | head -3"})),
        _ => c.get(server.url("/v1/fs/files/big.bin")),
    };
    req.bearer_auth("load-key")
}

/// How many kinds of request the mix has.
const KINDS: usize = 6;

/// The status request `i` of the mix answers when it is not refused.
fn expected_status(i: usize) -> StatusCode {
    match i % KINDS {
        1 | 2 => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::OK,
    }
}

/// Fires `n` requests at once; checks the cap, the refusals and the end
/// state.
pub(crate) async fn burst(n: usize) {
    let (server, _dir) = serve_docs();
    let c = Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let metrics = server.url("/metrics");
    // The host loads the built-in Python in the background as it starts:
    // the baseline is the ready host's.
    server.wait_ready();
    // Warm up: compile the script once, take a baseline.
    let r = request(&c, &server, 0).send().await.expect("warm-up");
    assert_eq!(r.status(), StatusCode::OK);
    let pid = server.child.id();
    let baseline = rss_of(pid);

    let done = Arc::new(AtomicBool::new(false));
    let max_live = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (c, metrics, done, max_live) =
            (c.clone(), metrics.clone(), done.clone(), max_live.clone());
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                let live = live_scripts(&c, &metrics).await;
                max_live.fetch_max(live, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let requests: Vec<_> = (0..n)
        .map(|i| {
            let req = request(&c, &server, i);
            tokio::spawn(async move {
                let r = req
                    .timeout(Duration::from_secs(60))
                    .send()
                    .await
                    .expect("a response");
                let status = r.status();
                let retry = r
                    .headers()
                    .get("retry-after")
                    .map(|v| v.as_bytes().to_vec());
                let body = r.bytes().await.expect("a whole body");
                (i, status, retry, body)
            })
        })
        .collect();
    let mut refused = 0;
    for task in requests {
        let (i, status, retry, body) = task.await.expect("task");
        assert!(!status.is_server_error(), "request {i}: {status}");
        if status == StatusCode::TOO_MANY_REQUESTS {
            refused += 1;
            assert_eq!(retry.as_deref(), Some(&b"2"[..]), "request {i}");
            let body: serde_json::Value = serde_json::from_slice(&body).expect("json");
            assert_eq!(body["error"]["code"], "busy", "request {i}");
        } else {
            assert_eq!(status, expected_status(i), "request {i}");
            if i % KINDS == KINDS - 1 {
                assert_eq!(body.len(), 4 << 20, "download {i}");
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    sampler.await.expect("sampler");
    let max = max_live.load(Ordering::Relaxed);
    assert!(max <= 4, "{max} scripts were live at once");
    assert!(n < 20 || refused > 0, "a burst of {n} saw no refusal");
    assert_no_live_scripts(&c, &metrics).await;
    // Give the allocator a moment to return what the runs used.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_of(pid);
    assert!(
        after < baseline + (96 << 20),
        "memory grew from {} MiB to {} MiB",
        baseline >> 20,
        after >> 20
    );
    eprintln!(
        "burst of {n}: {refused} refused, at most {max} live, RSS {} MiB -> {} MiB",
        baseline >> 20,
        after >> 20
    );
}
