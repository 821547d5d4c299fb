//! vfsbox's benchmarks, printed as a Markdown table: store start, request
//! overhead (against `wasmtime serve` and a process per request), what
//! fuel and epochs cost, grep throughput (against ripgrep and GNU grep),
//! 429 latency under saturation, the incident replayed, and deadline
//! precision.
//!
//! Run the whole table with `bench/run`, which installs the peers
//! (ripgrep, `wasmtime`) and the corpus (the kernel's `Documentation/`)
//! first; or `cargo bench -p vfsbox-host --bench vfsbox` for what is
//! already installed (a missing peer's rows say so).

#[path = "../../../bench/guests/cpu-hash/src/hash.rs"]
mod hash;
mod peers;
mod report;
mod sandbox;
mod service;

use report::Table;

fn main() {
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut table = Table::default();
    rt.block_on(async {
        if wanted("store") {
            sandbox::store_start(&mut table).await;
        }
        if wanted("request") {
            service::request_overhead(&mut table).await;
        }
        if wanted("limits") {
            sandbox::limit_overhead(&mut table).await;
        }
        if wanted("grep") {
            peers::grep_throughput(&mut table).await;
        }
        if wanted("admission") {
            service::admission(&mut table).await;
        }
        if wanted("incident") {
            service::incident(&mut table).await;
        }
        if wanted("deadline") {
            sandbox::deadline_precision(&mut table).await;
        }
    });
    println!("{}", report::machine());
    println!("{table}");
}
