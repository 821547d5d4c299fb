//! `wasi:filesystem` over the VFS, through a program that knows nothing of
//! vfsbox: `std-fs` reads with `std::fs` only. Built for `wasm32-wasip2` it
//! runs over a local, an S3 and a memory mount; built for the host it runs
//! over the same tree on disk; the outputs must be the same.
//!
//! Intended differences, each asserted on its own rather than compared:
//! nothing can be written through vfsbox (the native build, run as a user
//! who may write, would create files), and a path that leads out of a
//! mount, by `..` or by a symlink, is refused where the native build
//! follows it to the host's files.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use vfsbox_host::runtime::{Outcome, Script};
use vfsbox_host::vfs::{Fault, MemoryBackend, Mount, S3Backend};
use vfsbox_host::{Limit, Limits, Report, RunSpec, Runtime, Vfs};

use crate::common::*;
use crate::s3::S3Server;

/// The std-only program's component, read once.
fn std_fs() -> Bytes {
    static BYTES: OnceLock<Bytes> = OnceLock::new();
    guest(&BYTES, vfsbox_test_artifacts::STD_FS)
}

/// A log of `n` numbered lines of varying length, the same on every call.
fn log_lines(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let words = "lorem ipsum dolor sit amet ".repeat(i % 7);
        out.extend_from_slice(
            format!("{i:06} level={} {words}end\n", ["info", "warn"][i % 2]).as_bytes(),
        );
    }
    out
}

/// The differential's tree: nested directories, odd names, an empty
/// document and a log of some megabytes.
fn tree() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = [
        ("README.md", &b"# Handbook\nStart here.\n"[..]),
        ("docs/guide.md", b"Guide\n\nStep one.\nStep two.\n"),
        ("docs/nested/deep/note.txt", b"deep"),
        ("docs/spaces and #hash [v2].md", b"odd name\n"),
        ("docs/\u{fc}n\u{ef}code.txt", "caf\u{e9}\n".as_bytes()),
        ("empty.txt", b""),
        ("no-newline.txt", b"last line without a newline"),
    ]
    .iter()
    .map(|(p, b)| (p.to_string(), b.to_vec()))
    .collect();
    files.push(("data/app.log".to_owned(), log_lines(120_000)));
    files
}

/// Writes `files` under a new directory.
fn on_disk(files: &[(String, Vec<u8>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, bytes) in files {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, bytes).expect("write");
    }
    dir
}

fn memory(files: &[(String, Vec<u8>)]) -> MemoryBackend {
    files
        .iter()
        .fold(MemoryBackend::new(), |t, (p, b)| t.file(p, b.clone()))
}

fn mounted(backend: Arc<dyn vfsbox_host::vfs::Backend>) -> Vfs {
    Vfs::new([Mount {
        path: vpath("/files"),
        backend,
    }])
    .expect("one mount")
}

async fn s3(server: &S3Server, prefix: &str, files: &[(String, Vec<u8>)]) -> S3Backend {
    let files: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    server.backend(prefix, &files).await
}

/// Runs the std-only program with `args` over `vfs`.
async fn run_std_fs(rt: &Runtime, vfs: Vfs, limits: Limits, args: &[&str]) -> Report {
    let permit = rt.try_admit(None).expect("a free slot");
    let spec = RunSpec {
        program: "std-fs".to_owned(),
        ..spec(vfs, limits, args)
    };
    rt.run(permit, Script::Bytes(std_fs()), spec)
        .await
        .expect("the run starts")
}

/// The same program built for the host, over `root` on disk, with `/files`
/// in its arguments meaning `root`; its output says `/files` again.
fn run_native(root: &Path, args: &[&str]) -> (String, i32) {
    let root = root.to_str().expect("UTF-8 temp path");
    let args: Vec<String> = args.iter().map(|a| a.replacen("/files", root, 1)).collect();
    let out = Command::new(vfsbox_test_artifacts::STD_FS_NATIVE)
        .args(&args)
        .output()
        .expect("the native build runs");
    let stdout = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .replace(root, "/files");
    (stdout, out.status.code().unwrap_or(-1))
}

/// What each run of the differential does.
const COMMANDS: &[&[&str]] = &[
    &["walk", "/files"],
    &["lines", "/files/data/app.log"],
    &["lines", "/files/no-newline.txt"],
    &["count", "/files/data/app.log"],
    &["count", "/files/empty.txt"],
    &["seek", "/files/README.md", "2", "8"],
    &["seek", "/files/data/app.log", "1000000", "40"],
    &[
        "open",
        "/files/missing.txt",
        "/files/docs",
        "/files/docs/missing/x",
        "/files/README.md/x",
        "/files/README.md/",
        "/files/docs/./guide.md",
        "/files/docs/nested/../guide.md",
        "/files/empty.txt",
    ],
    // The working directory is the program's own (libc keeps it).
    &[
        "cd",
        "/files/docs",
        "guide.md",
        "nested/deep/note.txt",
        "../README.md",
        "missing",
    ],
    &["cd", "/files/README.md"],
    &["cd", "/files/missing"],
];

/// Runs every command through vfsbox over `vfs` and natively over `disk`,
/// and fails on the first difference.
async fn differential(backend: &str, vfs: Vfs, disk: &Path, extra: &[&[&str]]) {
    let rt = runtime(limits());
    for args in COMMANDS.iter().chain(extra) {
        let report = run_std_fs(&rt, vfs.clone(), limits(), args).await;
        let (want, code) = run_native(disk, args);
        assert_eq!(
            report.outcome,
            Outcome::Exited { exit_code: code },
            "{backend} {args:?}: {}",
            report.stderr_text()
        );
        assert_eq!(report.stdout_text(), want, "{backend} {args:?}");
        assert!(!want.is_empty(), "{args:?} printed something");
    }
    assert_slots_freed(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn std_fs_reads_a_local_mount_as_the_native_build_reads_the_disk() {
    let files = tree();
    let disk = on_disk(&files);
    // A local mount has the disk's times too.
    differential(
        "local",
        local_vfs(disk.path()),
        disk.path(),
        &[&["walk", "--times", "/files"]],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn std_fs_reads_an_s3_mount_as_the_native_build_reads_the_disk() {
    let files = tree();
    let disk = on_disk(&files);
    let server = S3Server::start().await;
    let backend = s3(&server, "tenant/docs", &files).await;
    differential("s3", mounted(Arc::new(backend)), disk.path(), &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn std_fs_reads_a_memory_mount_as_the_native_build_reads_the_disk() {
    let files = tree();
    let disk = on_disk(&files);
    differential(
        "memory",
        mounted(Arc::new(memory(&files))),
        disk.path(),
        &[],
    )
    .await;
}

/// Every kind of change is refused as a read-only filesystem, and the tree
/// is left as it was. (The intended difference: the native build may write.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_change_is_refused_as_a_read_only_filesystem() {
    let files = tree();
    let disk = on_disk(&files);
    let rt = runtime(limits());
    let report = run_std_fs(&rt, local_vfs(disk.path()), limits(), &["write", "/files"]).await;
    assert_eq!(
        report.stdout_text(),
        "create: ReadOnlyFilesystem\nappend: ReadOnlyFilesystem\n\
         create_dir: ReadOnlyFilesystem\nremove_file: ReadOnlyFilesystem\n\
         rename: ReadOnlyFilesystem\n"
    );
    let names: Vec<String> = std::fs::read_dir(disk.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("new")), "{names:?}");
}

/// Paths out of a mount: by `..`, and by symlinks a local mount holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_that_lead_out_of_a_mount_are_errors_the_program_sees() {
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "top secret").expect("write");
    let root = tempfile::tempdir().expect("tempdir");
    let r = root.path();
    std::fs::write(r.join("ok.txt"), "fine").expect("write");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), r.join("abs-link"))
        .expect("symlink");
    std::os::unix::fs::symlink("../../../../../../etc/passwd", r.join("rel-link"))
        .expect("symlink");
    std::os::unix::fs::symlink(outside.path(), r.join("dir-link")).expect("symlink");
    let rt = runtime(limits());
    let report = run_std_fs(
        &rt,
        local_vfs(r),
        limits(),
        &[
            "open",
            "/files/../../etc/passwd",
            "/files/../files/ok.txt",
            "/etc/passwd",
            "/files/abs-link",
            "/files/rel-link",
            "/files/dir-link/secret.txt",
            "/files/ok.txt",
        ],
    )
    .await;
    assert_eq!(
        report.stdout_text(),
        // `..` above the preopen is refused as WASI prescribes (EPERM),
        // even on its way back in; an absolute path outside every mount
        // finds no preopen (libc says ENOENT); a link out of the mount is
        // denied (EACCES).
        "/files/../../etc/passwd: PermissionDenied\n\
         /files/../files/ok.txt: PermissionDenied\n\
         /etc/passwd: NotFound\n\
         /files/abs-link: PermissionDenied\n\
         /files/rel-link: PermissionDenied\n\
         /files/dir-link/secret.txt: PermissionDenied\n\
         /files/ok.txt: ok 4\n"
    );
    assert_eq!(report.usage.document_reads, 1, "only ok.txt was read");
}

/// Budgets hold through `wasi:filesystem` as through `fs`: the document cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_more_documents_than_the_cap_ends_the_script_with_its_output() {
    let backend = (0..6).fold(MemoryBackend::new(), |t, i| {
        t.file(&format!("d{i}.txt"), "x")
    });
    let rt = runtime(limits());
    let limits = Limits {
        document_reads: 3,
        ..limits()
    };
    let paths: Vec<String> = [0, 1, 0, 2, 3, 4]
        .iter()
        .map(|i| format!("/files/d{i}.txt"))
        .collect();
    let mut args = vec!["open"];
    args.extend(paths.iter().map(String::as_str));
    let report = run_std_fs(&rt, vfs_of(backend), limits, &args).await;
    assert_eq!(
        report.outcome,
        Outcome::BudgetExceeded {
            limit: Limit::DocumentReads,
            used: 4,
            allowed: 3
        }
    );
    // d0 read twice counts once: three documents, then the fourth ends it.
    assert_eq!(
        report.stdout_text(),
        "/files/d0.txt: ok 1\n/files/d1.txt: ok 1\n/files/d0.txt: ok 1\n/files/d2.txt: ok 1\n"
    );
    assert_slots_freed(&rt).await;
}

/// The byte cap, through a stream, on a document larger than the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_past_the_byte_cap_ends_the_script() {
    let backend = MemoryBackend::new().file("big.bin", vec![b'x'; 3 * 1024 * 1024]);
    let rt = runtime(limits());
    let limits = Limits {
        bytes_read: 1024 * 1024,
        ..limits()
    };
    let report = run_std_fs(&rt, vfs_of(backend), limits, &["count", "/files/big.bin"]).await;
    let Outcome::BudgetExceeded {
        limit,
        used,
        allowed,
    } = report.outcome
    else {
        panic!("{:?}", report.outcome);
    };
    assert_eq!((limit, allowed), (Limit::BytesRead, 1024 * 1024));
    assert!(used > allowed, "{used}");
    assert!(report.usage.bytes_read <= allowed, "{:?}", report.usage);
    assert_slots_freed(&rt).await;
}

/// The run ended by its deadline, `took` after it started: at the deadline
/// or a little after (generous: a loaded machine), never long after.
fn ended_at_deadline(report: &Report, took: Duration, deadline: Duration) {
    assert!(
        matches!(
            report.outcome,
            Outcome::BudgetExceeded {
                limit: Limit::Deadline,
                ..
            }
        ),
        "{:?}",
        report.outcome
    );
    assert!(took >= deadline, "{took:?}");
    assert!(
        took < deadline * 5,
        "ended long after the deadline: {took:?}"
    );
}

/// A read that stalls mid-stream ends at the deadline, and frees the slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_stream_ends_at_the_deadline() {
    let backend = MemoryBackend::new().file("first.txt", "before\n").faulty(
        "stall.txt",
        "x".repeat(100_000),
        Fault::StallMidway,
    );
    let rt = runtime(limits());
    let deadline = Duration::from_secs(2);
    let limits = Limits {
        deadline,
        ..limits()
    };
    let started = Instant::now();
    let report = run_std_fs(
        &rt,
        vfs_of(backend),
        limits,
        &["open", "/files/first.txt", "/files/stall.txt"],
    )
    .await;
    ended_at_deadline(&report, started.elapsed(), deadline);
    assert_eq!(report.stdout_text(), "/files/first.txt: ok 7\n");
    assert_slots_freed(&rt).await;
}

/// A program cannot hold more than the handle limit open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_handles_are_bounded() {
    let rt = runtime(limits());
    let report = run_std_fs(
        &rt,
        vfs_of(small_tree()),
        limits(),
        &["hold", "/files/a.txt", "5000"],
    )
    .await;
    // The preopen holds one place.
    assert_eq!(report.stdout_text(), "held 1023 then QuotaExceeded\n");
    assert_eq!(report.usage.document_reads, 1);
}

/// `vfsbox run` runs the program unchanged over a local directory.
#[test]
fn vfsbox_run_serves_the_mount_to_std_fs() {
    let files = tree();
    let disk = on_disk(&files);
    let mount = format!("/files={}", disk.path().display());
    let out = Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args([
            "run",
            vfsbox_test_artifacts::STD_FS,
            "--mount",
            &mount,
            "--",
            "walk",
            "/files",
        ])
        .output()
        .expect("vfsbox runs");
    let (want, _) = run_native(disk.path(), &["walk", "/files"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
}

/// Where the test's own peak memory can be read.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A 300 MiB document streamed through `vfsbox run`: the run ends at the
/// 256 MiB byte cap, and the process never holds the document.
#[test]
fn a_300_mib_document_streams_to_the_byte_cap_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Sparse: 300 MiB of zeros that take no disk.
    let big = std::fs::File::create(dir.path().join("big.bin")).expect("create");
    big.set_len(300 * 1024 * 1024).expect("set_len");
    drop(big);
    let mount = format!("/files={}", dir.path().display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args([
            "run",
            vfsbox_test_artifacts::STD_FS,
            "--mount",
            &mount,
            "--",
            "count",
            "/files/big.bin",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("vfsbox runs");
    let mut peak = 0;
    while child.try_wait().expect("wait").is_none() {
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak = peak.max(kib);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bytes_read"), "{stderr}");
    assert!(!out.status.success());
    assert!(peak > 0, "the peak was read");
    // The guest's memory is capped at 64 MiB; the host's own use is tens of
    // MiB. A host that buffered the document would pass 256 MiB.
    assert!(peak < 200 * 1024, "peak RSS {peak} KiB");
}

/// Reads through `wasi:filesystem` are in the run's audited usage, as reads
/// through `fs` are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_through_wasi_are_audited_with_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let rt =
        Runtime::new(limits(), vfsbox_host::AuditLog::open(&log).expect("open")).expect("runtime");
    let report = run_std_fs(
        &rt,
        vfs_of(small_tree()),
        limits(),
        &["open", "/files/a.txt", "/files/notes/c.txt", "/files/a.txt"],
    )
    .await;
    assert_eq!(report.exit_code(), Some(0));
    let text = std::fs::read_to_string(&log).expect("log");
    let end: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .find(|r| r["event"] == "run_end")
        .expect("a run_end record");
    assert_eq!(end["usage"]["document_reads"], 2);
    // "alpha\n" twice and "gamma\nTODO: delta\n" once.
    assert_eq!(end["usage"]["bytes_read"], 6 + 18 + 6);
}

/// An S3 read that stalls mid-document (the store stops sending, the
/// connection stays open) ends at the deadline, output kept, slot freed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_s3_read_ends_at_the_deadline() {
    let server = S3Server::start().await;
    let files = [
        ("first.txt", &b"before\n"[..]),
        ("big.bin", &[b'x'; 4 * 1024 * 1024][..]),
    ];
    server.backend("docs", &files).await;
    // The first 256 KiB of a GET's response pass, then nothing.
    let proxy = crate::s3::StallingProxy::start(server.addr, 256 * 1024).await;
    let backend = S3Backend::with_store(proxy.store(), "docs");
    let rt = runtime(limits());
    let deadline = Duration::from_secs(2);
    let limits = Limits {
        deadline,
        ..limits()
    };
    let started = Instant::now();
    let report = run_std_fs(
        &rt,
        mounted(Arc::new(backend)),
        limits,
        &["cd", "/files", "first.txt", "big.bin"],
    )
    .await;
    ended_at_deadline(&report, started.elapsed(), deadline);
    // first.txt's GET was cut too, but its 7 bytes came within the 256 KiB.
    assert_eq!(report.stdout_text(), "first.txt: ok 7\n");
    assert!(
        report.usage.bytes_read > 7,
        "big.bin was being read: {:?}",
        report.usage
    );
    assert_slots_freed(&rt).await;
}

/// Each mount the run sees is a preopen of its own, nested mounts too; the
/// directories above mounts are not (they hold nothing but mounts).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_mount_is_a_preopened_directory() {
    let vfs = Vfs::new([
        Mount {
            path: vpath("/files"),
            backend: Arc::new(MemoryBackend::new().file("a.txt", "files-a")),
        },
        Mount {
            path: vpath("/files/shared"),
            backend: Arc::new(MemoryBackend::new().file("s.txt", "shared-s")),
        },
        Mount {
            path: vpath("/team/x"),
            backend: Arc::new(MemoryBackend::new().file("x.txt", "team-x")),
        },
    ])
    .expect("mounts");
    let rt = runtime(limits());
    let report = run_std_fs(&rt, vfs.clone(), limits(), &["walk", "/files"]).await;
    let names: Vec<String> = report
        .stdout_text()
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect();
    // The nested mount appears inside the outer one, and is walked into.
    assert_eq!(names, ["a.txt", "shared/", "shared/s.txt"]);
    let report = run_std_fs(
        &rt,
        vfs,
        limits(),
        &[
            "open",
            "/files/a.txt",
            "/files/shared/s.txt",
            "/team/x/x.txt",
            "/team",
            "/files/shared/../a.txt",
        ],
    )
    .await;
    assert_eq!(
        report.stdout_text(),
        "/files/a.txt: ok 7\n/files/shared/s.txt: ok 8\n/team/x/x.txt: ok 6\n\
         /team: NotFound\n\
         /files/shared/../a.txt: PermissionDenied\n"
    );
}
