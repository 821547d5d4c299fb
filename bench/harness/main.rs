//! vfsbox's benchmarks, printed as a Markdown table: store start, request
//! overhead (against `wasmtime serve` and a process per request), what
//! fuel and epochs cost, grep throughput (against ripgrep and GNU grep),
//! 429 latency under saturation, the incident replayed, and deadline
//! precision, `std::fs` reads through `wasi:filesystem` (against the
//! SDK's reads and wasmtime-wasi's own filesystem), and the built-in Python
//! (against the host's `python3`), and a fleet of hosts behind nginx.
//!
//! Run the whole table with `bench/run`, which installs ripgrep and the
//! corpus (the kernel's `Documentation/` and `include/`) and builds the
//! release `vfsbox` first; or `cargo run --release -p vfsbox-bench
//! --features peer` once those are there, with `VFSBOX_BENCH_CORPUS`
//! naming the corpus (a missing peer's or corpus's rows say so).
//! With `peer`, the harness also is the `wasmtime serve` peer
//! (`--as-wasmtime-serve`), built from the `wasmtime-cli` crate with the
//! same wasmtime as vfsbox.

mod files;
mod fleet;
#[path = "../guests/cpu-hash/src/hash.rs"]
mod hash;
mod peers;
mod python;
mod report;
mod sandbox;
mod service;

use report::Table;

/// The harness runs as the `wasmtime serve` peer when its first argument
/// is this; the rest are `wasmtime serve`'s.
const WASMTIME_SERVE: &str = "--as-wasmtime-serve";
/// The harness runs as `wasmtime run` when its first argument is this.
const WASMTIME_RUN: &str = "--as-wasmtime-run";

fn main() {
    if std::env::args().nth(1).as_deref() == Some(WASMTIME_SERVE) {
        return wasmtime_serve();
    }
    if std::env::args().nth(1).as_deref() == Some(WASMTIME_RUN) {
        return wasmtime_run();
    }
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut table = Table::default();
    rt.block_on(async {
        // Each section's time goes to stderr, so that `bench/run` can say
        // where its measuring minutes go without it entering the table.
        let mut timed = Timed::default();
        macro_rules! section {
            ($name:literal, $measure:expr) => {
                if wanted($name) {
                    let start = std::time::Instant::now();
                    $measure.await;
                    timed.0.push(($name, start.elapsed()));
                }
            };
        }
        section!("store", sandbox::store_start(&mut table));
        section!("request", service::request_overhead(&mut table));
        section!("mcp", service::mcp_overhead(&mut table));
        section!("limits", sandbox::limit_overhead(&mut table));
        section!("grep", peers::grep_throughput(&mut table));
        section!("shell", peers::shell_pipelines(&mut table));
        section!("files", files::std_fs_reads(&mut table));
        section!("admission", service::admission(&mut table));
        section!("incident", service::incident(&mut table));
        section!("fleet", fleet::fleet(&mut table));
        section!("python", python::python(&mut table));
        section!("deadline", sandbox::deadline_precision(&mut table));
        eprintln!("{timed}");
    });
    println!("{}", report::machine());
    println!("{table}");
}

/// How long each section of the table took to measure.
#[derive(Debug, Default)]
struct Timed(Vec<(&'static str, std::time::Duration)>);

impl std::fmt::Display for Timed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "measured in")?;
        for (name, took) in &self.0 {
            write!(f, " {name} {:.1} s,", took.as_secs_f64())?;
        }
        let total: std::time::Duration = self.0.iter().map(|(_, took)| *took).sum();
        write!(f, " total {:.1} s", total.as_secs_f64())
    }
}

/// `wasmtime serve`, from the `wasmtime-cli` crate.
#[cfg(feature = "peer")]
fn wasmtime_serve() {
    use wasmtime_cli::commands::ServeCommand;
    let args = std::env::args().skip(2);
    let serve =
        <ServeCommand as clap::Parser>::parse_from(std::iter::once("serve".to_owned()).chain(args));
    if let Err(e) = serve.execute() {
        eprintln!("wasmtime serve: {e:?}");
        std::process::exit(1);
    }
}

/// `wasmtime run`, from the `wasmtime-cli` crate.
#[cfg(feature = "peer")]
fn wasmtime_run() {
    use wasmtime_cli::commands::RunCommand;
    let args = std::env::args().skip(2);
    let run =
        <RunCommand as clap::Parser>::parse_from(std::iter::once("run".to_owned()).chain(args));
    if let Err(e) = run.execute() {
        eprintln!("wasmtime run: {e:?}");
        std::process::exit(1);
    }
}

#[cfg(not(feature = "peer"))]
fn wasmtime_run() {
    eprintln!("built without the `peer` feature: no `wasmtime run`");
    std::process::exit(2);
}

#[cfg(not(feature = "peer"))]
fn wasmtime_serve() {
    eprintln!("built without the `peer` feature: no `wasmtime serve`");
    std::process::exit(2);
}
