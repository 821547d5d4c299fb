#![allow(dead_code)] // Shared by the `all` and `timing` test binaries; each uses part.

//! Shared helpers: fixtures, file trees and a runtime to run them on.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use vfsbox_host::runtime::{Compiled, Script, Stdin};
use vfsbox_host::vfs::{MemoryBackend, Mount};
use vfsbox_host::{AuditLog, Limits, Report, RunSpec, Runtime, VPath, Vfs};

/// The misbehaving guest's bytes, read once.
pub(crate) fn misbehave() -> Bytes {
    static BYTES: OnceLock<Bytes> = OnceLock::new();
    guest(&BYTES, vfsbox_test_artifacts::MISBEHAVE)
}

/// A built guest's bytes, read into `cell` the first time.
pub(crate) fn guest(cell: &OnceLock<Bytes>, path: &str) -> Bytes {
    cell.get_or_init(|| {
        std::fs::read(path)
            .unwrap_or_else(|e| panic!("the guest {path} is built: {e}"))
            .into()
    })
    .clone()
}

/// An absolute virtual path.
pub(crate) fn vpath(s: &str) -> VPath {
    VPath::parse_absolute(s).expect("normalised absolute path")
}

/// A small document tree mounted at `/files`.
pub(crate) fn small_tree() -> MemoryBackend {
    MemoryBackend::new()
        .file("a.txt", "alpha\n")
        .file("notes/b.txt", "beta TODO\n")
        .file("notes/c.txt", "gamma\nTODO: delta\n")
}

/// A filesystem with `backend` at `/files`.
pub(crate) fn vfs_of(backend: MemoryBackend) -> Vfs {
    Vfs::new([Mount {
        path: vpath("/files"),
        backend: Arc::new(backend),
    }])
    .expect("one mount")
}

/// A filesystem with the local directory `dir` at `/files`.
pub(crate) fn local_vfs(dir: &std::path::Path) -> Vfs {
    let backend = vfsbox_host::vfs::LocalBackend::open(dir).expect("open the directory");
    Vfs::new([Mount {
        path: vpath("/files"),
        backend: Arc::new(backend),
    }])
    .expect("one mount")
}

/// Limits for tests: the defaults with a short deadline.
pub(crate) fn limits() -> Limits {
    Limits {
        deadline: Duration::from_secs(20),
        fuel: SPIN_FUEL,
        ..Limits::default()
    }
}

/// Fuel for servers whose tests expect a spinning script to meet its
/// deadline, whatever the default: this lasts minutes of a tight loop.
pub(crate) const SPIN_FUEL: u64 = 1_000_000_000_000;

/// A runtime with these limits and no audit log.
pub(crate) fn runtime(limits: Limits) -> Runtime {
    Runtime::new(limits, AuditLog::disabled()).expect("runtime starts")
}

/// A run of the misbehaving guest with these arguments over `vfs`.
pub(crate) fn spec(vfs: Vfs, limits: Limits, args: &[&str]) -> RunSpec {
    RunSpec {
        program: "misbehave".to_owned(),
        args: args.iter().map(|s| s.to_string()).collect(),
        stdin: Stdin::Empty,
        cwd: "/".to_owned(),
        vfs,
        limits,
        caller: Default::default(),
    }
}

/// Compiles the misbehaving guest on `rt` (so later runs skip compiling).
pub(crate) async fn compiled(rt: &Runtime) -> Arc<Compiled> {
    let permit = rt.try_admit(None).expect("a free slot");
    rt.compile(&permit, misbehave())
        .await
        .expect("the fixture compiles")
}

/// Runs the misbehaving guest with `args` over the small tree.
pub(crate) async fn run(rt: &Runtime, args: &[&str]) -> Report {
    run_on(rt, vfs_of(small_tree()), rt.limits().clone(), args).await
}

/// Runs the misbehaving guest with `args` over `vfs` with `limits`.
pub(crate) async fn run_on(rt: &Runtime, vfs: Vfs, limits: Limits, args: &[&str]) -> Report {
    let permit = rt.try_admit(None).expect("a free slot");
    rt.run(permit, Script::Bytes(misbehave()), spec(vfs, limits, args))
        .await
        .expect("the run starts")
}

/// Waits until `rt` has no live script, or fails after a generous bound.
pub(crate) async fn assert_slots_freed(rt: &Runtime) {
    let start = Instant::now();
    while rt.live_scripts() != 0 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{} scripts still live",
            rt.live_scripts()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A component whose `wasi:cli/run` is the core function `run` of
/// `module` (a core module in WAT, exporting `run: func() -> i32`, 0 for
/// success).
pub(crate) fn command(module: &str) -> Vec<u8> {
    let wat = format!(
        r#"(component
            (core module $m {module})
            (core instance $i (instantiate $m))
            (func $run (result (result)) (canon lift (core func $i "run")))
            (instance $run-instance (export "run" (func $run)))
            (export "wasi:cli/run@0.2.0" (instance $run-instance))
        )"#
    );
    wat::parse_str(&wat).expect("valid WAT")
}

/// A function of `n` dependent additions over many locals: large, and slow
/// to compile.
pub(crate) fn compile_bomb(n: usize) -> Vec<u8> {
    let mut body = String::with_capacity(n * 64);
    for i in 0..n {
        body.push_str(&format!(
            "(local.set {} (i32.add (local.get {}) (i32.const {i})))\n",
            i % 500,
            (i * 7) % 500
        ));
    }
    command(&format!(
        r#"(func (export "run") (result i32) (local {}) {body} i32.const 0)"#,
        "i32 ".repeat(500)
    ))
}

/// The tenants `a` and `b`, with keys, each a local directory at `/files`;
/// `a_extra` adds lines to `a`'s table (such as `live_scripts = 1`).
pub(crate) fn two_tenants_config(
    (key_a, dir_a): (&str, &std::path::Path),
    (key_b, dir_b): (&str, &std::path::Path),
    a_extra: &str,
) -> vfsbox_host::config::Config {
    let sha = |k: &str| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(k.as_bytes()));
    vfsbox_host::config::Config::parse(&format!(
        r#"
        [[tenants]]
        name = "a"
        key_sha256 = ["{}"]
        {a_extra}
        [[tenants.mounts]]
        path = "/files"
        local = {{ dir = "{}" }}
        [[tenants]]
        name = "b"
        key_sha256 = ["{}"]
        [[tenants.mounts]]
        path = "/files"
        local = {{ dir = "{}" }}
        "#,
        sha(key_a),
        dir_a.display(),
        sha(key_b),
        dir_b.display(),
    ))
    .expect("config")
}

/// A system tool a test runs (Debian's nginx, say), at the first of
/// `candidates` that exists. A machine without it skips the test, saying
/// so; CI, which installs every tool (`.ci/run`), may not.
pub(crate) fn system_tool(candidates: &[&str], package: &str) -> Option<std::path::PathBuf> {
    if let Some(found) = candidates
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.exists())
    {
        return Some(found.to_path_buf());
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run every test: {package} is not installed (.ci/run installs it)"
    );
    eprintln!("skipped: needs {package} (`apt-get install {package}`; .ci/run installs it)");
    None
}

/// Installs a Python package for the current user unless `module` imports.
pub(crate) fn python_package(module: &str, package: &str) {
    let present = std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .status()
        .is_ok_and(|s| s.success());
    if !present {
        let installed = std::process::Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--user", package])
            .status()
            .expect("pip runs");
        assert!(installed.success(), "could not install {package}");
    }
}
