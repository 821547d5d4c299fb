//! A test kit for script authors: run a built script against an in-memory
//! file tree, with chosen limits, from an ordinary `cargo test`, and assert
//! on its [`Report`].
//!
//! ```no_run
//! use vfsbox_host::testkit::{TestRun, build_guest};
//! use vfsbox_host::{Limit, Outcome};
//!
//! // Build this crate's script for wasm32-wasip2 (once; cargo caches it).
//! let wasm = build_guest(env!("CARGO_MANIFEST_DIR"));
//!
//! let report = TestRun::new(&wasm)
//!     .file("/files/notes/a.txt", "alpha\n")
//!     .file("/files/notes/b.txt", "beta\n")
//!     .cwd("/files/notes")
//!     .args(["a.txt", "b.txt"])
//!     .run();
//! assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
//! assert_eq!(report.stdout_text(), "alpha\nbeta\n");
//!
//! // The same script, with a read cap it cannot meet.
//! let report = TestRun::new(&wasm)
//!     .file("/files/notes/a.txt", "alpha\n")
//!     .file("/files/notes/b.txt", "beta\n")
//!     .cwd("/files/notes")
//!     .args(["a.txt", "b.txt"])
//!     .document_reads(1)
//!     .run();
//! assert_eq!(report.limit(), Some(Limit::DocumentReads));
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::audit::AuditLog;
use crate::limits::Limits;
use crate::runtime::{Report, RunSpec, Runtime, Script, Stdin};
use crate::vfs::{MemoryBackend, Mount, VPath, Vfs};

/// One run of a script, set up step by step, then [`TestRun::run`].
#[derive(Debug)]
pub struct TestRun {
    wasm: Bytes,
    mounts: BTreeMap<String, MemoryBackend>,
    args: Vec<String>,
    cwd: String,
    stdin: Bytes,
    limits: Limits,
}

impl TestRun {
    /// A run of the component at `wasm` (a `.wasm` built for
    /// `wasm32-wasip2`). Panics with a clear message if it cannot be read.
    pub fn new(wasm: impl AsRef<Path>) -> TestRun {
        let path = wasm.as_ref();
        let bytes = std::fs::read(path)
            .unwrap_or_else(|e| panic!("cannot read the script {}: {e}", path.display()));
        TestRun::from_bytes(bytes)
    }

    /// A run of these component bytes.
    pub fn from_bytes(wasm: impl Into<Bytes>) -> TestRun {
        TestRun {
            wasm: wasm.into(),
            mounts: BTreeMap::new(),
            args: Vec::new(),
            cwd: "/".to_owned(),
            stdin: Bytes::new(),
            limits: Limits {
                deadline: Duration::from_secs(30),
                ..Limits::default()
            },
        }
    }

    /// Adds a document at an absolute path such as `/files/a.txt`; its first
    /// component (`/files`) becomes a mount.
    pub fn file(mut self, path: &str, bytes: impl Into<Bytes>) -> TestRun {
        let trimmed = path.trim_start_matches('/');
        let (mount, rest) = trimmed.split_once('/').unwrap_or_else(|| {
            panic!("{path:?}: give a path below a mount, such as /files/{trimmed}")
        });
        let tree = self.mounts.remove(mount).unwrap_or_default();
        self.mounts.insert(mount.to_owned(), tree.file(rest, bytes));
        self
    }

    /// Adds an empty directory at an absolute path such as `/files/empty`.
    pub fn dir(mut self, path: &str) -> TestRun {
        let trimmed = path.trim_start_matches('/');
        let (mount, rest) = trimmed.split_once('/').unwrap_or((trimmed, ""));
        let tree = self.mounts.remove(mount).unwrap_or_default();
        let tree = if rest.is_empty() {
            tree
        } else {
            tree.dir(rest)
        };
        self.mounts.insert(mount.to_owned(), tree);
        self
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<String>) -> TestRun {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> TestRun
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The working directory the script starts in (`/` by default).
    pub fn cwd(mut self, cwd: impl Into<String>) -> TestRun {
        self.cwd = cwd.into();
        self
    }

    /// The script's standard input.
    pub fn stdin(mut self, stdin: impl Into<Bytes>) -> TestRun {
        self.stdin = stdin.into();
        self
    }

    /// Sets any limit: `.limits(|l| l.scan_files = 10)`.
    pub fn limits(mut self, f: impl FnOnce(&mut Limits)) -> TestRun {
        f(&mut self.limits);
        self
    }

    /// The wall-clock deadline (30 s by default in tests).
    pub fn deadline(self, deadline: Duration) -> TestRun {
        self.limits(|l| l.deadline = deadline)
    }

    /// The fuel.
    pub fn fuel(self, fuel: u64) -> TestRun {
        self.limits(|l| l.fuel = fuel)
    }

    /// The linear memory, in bytes.
    pub fn memory(self, bytes: u64) -> TestRun {
        self.limits(|l| l.memory = bytes)
    }

    /// The number of distinct documents the script may read.
    pub fn document_reads(self, reads: u64) -> TestRun {
        self.limits(|l| l.document_reads = reads)
    }

    /// Runs the script to its end and returns its report. Panics (failing
    /// the test) if the script cannot run at all, such as bytes that are not
    /// a component; every ending of a script that ran is a report.
    pub fn run(self) -> Report {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the test kit");
        rt.block_on(self.run_async())
    }

    async fn run_async(self) -> Report {
        let mounts = self.mounts.into_iter().map(|(name, tree)| Mount {
            path: VPath::parse_absolute(&format!("/{name}"))
                .unwrap_or_else(|| panic!("bad mount name {name:?}")),
            backend: Arc::new(tree),
        });
        let vfs = Vfs::new(mounts).unwrap_or_else(|e| panic!("{e}"));
        let limits = Limits {
            live_scripts: 1,
            ..self.limits
        };
        let runtime =
            Runtime::new(limits.clone(), AuditLog::disabled()).expect("the runtime starts");
        let permit = runtime.try_admit(None).expect("a free slot");
        let spec = RunSpec {
            program: "script".to_owned(),
            args: self.args,
            stdin: Stdin::Bytes(self.stdin),
            cwd: self.cwd,
            vfs,
            limits,
            caller: Default::default(),
        };
        runtime
            .run(permit, Script::Bytes(self.wasm), spec)
            .await
            .unwrap_or_else(|e| panic!("the script could not run: {e}"))
    }
}

/// Builds the script crate at `manifest_dir` for `wasm32-wasip2` in release
/// mode and returns the path of its `.wasm` (named after the package).
/// Builds into `vfsbox-testkit` below the target directory
/// (`$CARGO_TARGET_DIR`, else the crate's `target/`), so it never waits on
/// the `cargo test` that calls it. Panics with the build's output on failure.
pub fn build_guest(manifest_dir: impl AsRef<Path>) -> PathBuf {
    let dir = manifest_dir.as_ref();
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("{}: no Cargo.toml: {e}", dir.display()));
    let name = package_name(&manifest)
        .unwrap_or_else(|| panic!("{}: no package name in Cargo.toml", dir.display()));
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("target"))
        .join("vfsbox-testkit");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .current_dir(dir)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--package",
            &name,
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "building {name} for wasm32-wasip2 failed (is the target installed? `rustup target add wasm32-wasip2`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target_dir
        .join("wasm32-wasip2/release")
        .join(format!("{name}.wasm"))
}

/// The `name` of the `[package]` table of a manifest.
fn package_name(manifest: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(manifest).ok()?;
    Some(table.get("package")?.get("name")?.as_str()?.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_package_name() {
        assert_eq!(
            package_name("[package]\nname = \"hello\"\n").as_deref(),
            Some("hello")
        );
        assert_eq!(package_name("[workspace]\n"), None);
    }
}
