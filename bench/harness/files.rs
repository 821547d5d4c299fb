//! Reading documents through `wasi:filesystem` (`std::fs` in the guest)
//! beside the same reads through `vfsbox-guest`, and beside wasmtime-wasi's
//! own filesystem over the same tree on disk (what `wasmtime run --dir`
//! serves), in process and as the `wasmtime run` command.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use vfsbox_host::runtime::{Script, Stdin};
use vfsbox_host::vfs::{LocalBackend, Mount};
use vfsbox_host::{AuditLog, Limits, RunSpec, Runtime, VPath, Vfs};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::filesystem::FsPerms;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::report::{Table, median};

/// Documents in the tree, in directories of 50.
const DOCUMENTS: usize = 1_000;
/// Bytes of each document.
const DOCUMENT_BYTES: usize = 4096;
const RUNS: usize = 9;

/// 1,000 documents of 4 KiB of text, 50 to a directory.
fn tree(dir: &Path) {
    for i in 0..DOCUMENTS {
        let sub = dir.join(format!("d{:02}", i / 50));
        std::fs::create_dir_all(&sub).expect("mkdir");
        let line = format!("document {i:04}: the quick brown fox jumps over the lazy dog\n");
        let body: String = line.repeat(DOCUMENT_BYTES / line.len() + 1);
        std::fs::write(sub.join(format!("f{i:04}.txt")), &body[..DOCUMENT_BYTES]).expect("write");
    }
}

async fn vfsbox(rt: &Runtime, wasm: &str, vfs: &Vfs, args: &[&str]) -> (Duration, String) {
    let script = Script::Bytes(std::fs::read(wasm).expect("guest built").into());
    let limits = Limits {
        document_reads: 10_000,
        ..Limits::default()
    };
    let mut times = Vec::new();
    let mut out = String::new();
    for i in 0..=RUNS {
        let permit = rt.try_admit(None).expect("slot");
        let spec = RunSpec {
            program: "bench".to_owned(),
            args: args.iter().map(|s| s.to_string()).collect(),
            stdin: Stdin::Empty,
            cwd: "/".to_owned(),
            vfs: vfs.clone(),
            limits: limits.clone(),
            caller: Default::default(),
        };
        let start = Instant::now();
        let report = rt.run(permit, script.clone(), spec).await.expect("runs");
        // The first run compiles the script: left out.
        if i > 0 {
            times.push(start.elapsed());
        }
        assert_eq!(report.exit_code(), Some(0), "{:?}", report.outcome);
        out = report.stdout_text();
    }
    (median(times), out)
}

struct Peer {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Peer {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// wasmtime-wasi's filesystem over `dir` as `/files`, read-only, the
/// component compiled once: `wasmtime run --dir DIR::/files`, minus the
/// process and the compilation.
async fn wasmtime_wasi(wasm: &str, dir: &Path, args: &[&str]) -> (Duration, String) {
    let engine = Engine::new(&Config::new()).expect("engine");
    let component = Component::from_file(&engine, wasm).expect("component");
    let mut linker = Linker::<Peer>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("link");
    let pre = linker.instantiate_pre(&component).expect("pre");
    let pre = wasmtime_wasi::p2::bindings::CommandPre::new(pre).expect("command");
    let mut times = Vec::new();
    let mut out = String::new();
    for _ in 0..RUNS {
        let stdout = wasmtime_wasi::p2::pipe::MemoryOutputPipe::new(1 << 20);
        let mut wasi = WasiCtx::builder();
        wasi.args(&["std-fs"])
            .args(args)
            .stdout(stdout.clone())
            .preopened_dir(dir, "/files", FsPerms::ReadOnly)
            .expect("preopen");
        let start = Instant::now();
        let mut store = Store::new(
            &engine,
            Peer {
                wasi: wasi.build(),
                table: ResourceTable::new(),
            },
        );
        let command = pre.instantiate_async(&mut store).await.expect("instance");
        let result = command.wasi_cli_run().call_run(&mut store).await;
        drop(store);
        times.push(start.elapsed());
        assert!(matches!(result, Ok(Ok(()))), "the peer's run failed");
        out = String::from_utf8_lossy(&stdout.contents()).into_owned();
    }
    (median(times), out)
}

/// `wasmtime run --dir DIR::/files`, a process per run (the harness is
/// that command with `--as-wasmtime-run`), its compile cache on.
fn wasmtime_run(wasm: &str, dir: &Path, args: &[&str]) -> Option<(Duration, String)> {
    let harness = std::env::current_exe().ok()?;
    let mut times = Vec::new();
    let mut out = String::new();
    for i in 0..=RUNS {
        let start = Instant::now();
        let o = Command::new(&harness)
            .arg(crate::WASMTIME_RUN)
            .args(["-C", "cache=y", "--dir"])
            .arg(format!("{}::/files", dir.display()))
            .arg(wasm)
            .args(args)
            .output()
            .ok()?;
        if !o.status.success() {
            eprintln!("wasmtime run: {}", String::from_utf8_lossy(&o.stderr));
            return None;
        }
        if i > 0 {
            times.push(start.elapsed());
        }
        out = String::from_utf8_lossy(&o.stdout).into_owned();
    }
    Some((median(times), out))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

pub(crate) async fn std_fs_reads(t: &mut Table) {
    let dir = tempfile::tempdir().expect("tempdir");
    tree(dir.path());
    let backend = LocalBackend::open(dir.path()).expect("local");
    let vfs = Vfs::new([Mount {
        path: VPath::parse_absolute("/files").expect("path"),
        backend: Arc::new(backend),
    }])
    .expect("vfs");
    let rt = Runtime::new(Limits::default(), AuditLog::disabled()).expect("runtime");
    let std_fs = vfsbox_test_artifacts::STD_FS;
    let args = ["sum", "/files"];
    let (ours, out) = vfsbox(&rt, std_fs, &vfs, &args).await;
    let (sdk, sdk_out) = vfsbox(&rt, vfsbox_test_artifacts::READ_ALL, &vfs, &["/files"]).await;
    assert_eq!(out, sdk_out, "both read the same bytes");
    assert!(out.starts_with(&format!("documents {DOCUMENTS} ")), "{out}");
    t.row(
        "read 1,000 documents of 4 KiB (local mount): `std::fs` through `wasi:filesystem`, vs the same through `vfsbox-guest` (`fs::walk` + `fs::read`), median of 9",
        ms(ours),
        ms(sdk),
        format!("{:.2}x", ours.as_secs_f64() / sdk.as_secs_f64()),
        "within 2x of the SDK".to_owned(),
    );
    let (peer, peer_out) = wasmtime_wasi(std_fs, dir.path(), &args).await;
    assert_eq!(out, peer_out, "the peer reads the same bytes");
    t.row(
        "the same `std::fs` program: vfsbox (budgets, VFS) vs wasmtime-wasi's own filesystem over the directory (`--dir`), both in process, compiled once",
        ms(ours),
        ms(peer),
        format!("{:.2}x", ours.as_secs_f64() / peer.as_secs_f64()),
        "reported (wasmtime-wasi's async filesystem, as vfsbox is async)".to_owned(),
    );
    match wasmtime_run(std_fs, dir.path(), &args) {
        Some((cli, cli_out)) => {
            assert_eq!(out, cli_out, "`wasmtime run` reads the same bytes");
            let cli_vfsbox = vfsbox_run(std_fs, dir.path(), &args);
            t.row(
                "the same, one process per run: `vfsbox run --mount` vs `wasmtime run --dir`, compile caches warm",
                cli_vfsbox.map_or("not measured".to_owned(), ms),
                ms(cli),
                cli_vfsbox.map_or("-".to_owned(), |v| {
                    format!("{:.2}x", v.as_secs_f64() / cli.as_secs_f64())
                }),
                "reported (`wasmtime run` reads synchronously, in place)".to_owned(),
            );
        }
        None => t.row(
            "the same, one process per run: `wasmtime run --dir`",
            "-".to_owned(),
            "not measured (the harness was built without `peer`, or it failed: see stderr)"
                .to_owned(),
            "-".to_owned(),
            "-".to_owned(),
        ),
    }
}

/// `vfsbox run --mount /files=DIR`, a process per run.
fn vfsbox_run(wasm: &str, dir: &Path, args: &[&str]) -> Option<Duration> {
    let vfsbox = std::env::var_os("VFSBOX_BIN")?;
    let mut times = Vec::new();
    for i in 0..=RUNS {
        let start = Instant::now();
        let o = Command::new(&vfsbox)
            .args(["run", wasm, "--document-reads", "10000", "--mount"])
            .arg(format!("/files={}", dir.display()))
            .arg("--")
            .args(args)
            .output()
            .ok()?;
        if !o.status.success() {
            return None;
        }
        if i > 0 {
            times.push(start.elapsed());
        }
    }
    Some(median(times))
}
