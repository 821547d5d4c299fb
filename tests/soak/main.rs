//! The soak: mixed load for a while against the real `vfsbox serve`,
//! checking that resident memory and open file descriptors do not grow.
//! Not part of `cargo test`; run it on its own:
//!
//! ```sh
//! VFSBOX_SOAK_SECS=300 cargo test -p vfsbox-host --test soak -- --nocapture
//! ```

#[path = "../all/common.rs"]
mod common;
#[path = "../timing/load.rs"]
mod load;
#[path = "../all/server.rs"]
mod server;

use std::time::{Duration, Instant};

use reqwest::Client;

use load::{fds_of, rss_of, serve_docs};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_and_descriptors_do_not_grow_under_mixed_load() {
    let secs: u64 = std::env::var("VFSBOX_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let (server, _dir) = serve_docs();
    let pid = server.child.id();
    let c = Client::new();
    let end = Instant::now() + Duration::from_secs(secs);
    let clients: Vec<_> = (0..8)
        .map(|k| {
            let (c, base) = (c.clone(), server.url(""));
            tokio::spawn(async move {
                let mut i = k;
                let mut statuses = std::collections::BTreeMap::<u16, u64>::new();
                while Instant::now() < end {
                    let run = |q: &str| {
                        c.post(format!("{base}/v1/runs?{q}"))
                            .header("content-type", "application/wasm")
                            .body(common::misbehave())
                    };
                    let req = match i % 6 {
                        0 => run("arg=ok"),
                        1 => run("arg=spin&deadline_ms=200"),
                        2 => run("arg=alloc&arg=33554432"),
                        3 => run("arg=grep&arg=policy&arg=/files/notes"),
                        4 => run("arg=flood&arg=2097152"),
                        _ => c.get(format!("{base}/v1/fs/files/big.bin")),
                    };
                    let r = req.bearer_auth("load-key").send().await.expect("response");
                    let status = r.status().as_u16();
                    let _ = r.bytes().await;
                    assert!(status < 500, "{status}");
                    *statuses.entry(status).or_default() += 1;
                    i += 1;
                }
                statuses
            })
        })
        .collect();
    let mut samples = Vec::new();
    while Instant::now() < end {
        tokio::time::sleep(
            Duration::from_secs(5).min(end.saturating_duration_since(Instant::now())),
        )
        .await;
        samples.push((rss_of(pid), fds_of(pid)));
        eprintln!(
            "rss {} MiB, fds {}",
            samples.last().map_or(0, |s| s.0 >> 20),
            samples.last().map_or(0, |s| s.1)
        );
    }
    let mut totals = std::collections::BTreeMap::<u16, u64>::new();
    for client in clients {
        for (status, n) in client.await.expect("client") {
            *totals.entry(status).or_default() += n;
        }
    }
    eprintln!("responses by status: {totals:?}");
    server::assert_no_live_scripts(&c, &server.url("/metrics")).await;
    // Compare the last third of the soak with the first third, once warm.
    let third = samples.len() / 3;
    assert!(third > 0, "the soak was too short to compare");
    let early_rss = samples[..third].iter().map(|s| s.0).max().unwrap_or(0);
    let late_rss = samples[samples.len() - third..]
        .iter()
        .map(|s| s.0)
        .max()
        .unwrap_or(0);
    assert!(
        late_rss < early_rss + (32 << 20),
        "RSS grew from {} to {} MiB",
        early_rss >> 20,
        late_rss >> 20
    );
    let early_fds = samples[..third].iter().map(|s| s.1).max().unwrap_or(0);
    let late_fds = samples[samples.len() - third..]
        .iter()
        .map(|s| s.1)
        .max()
        .unwrap_or(0);
    assert!(
        late_fds <= early_fds + 16,
        "descriptors grew from {early_fds} to {late_fds}"
    );
}
