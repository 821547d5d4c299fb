//! The document filesystem through real scripts: the same suite against the
//! local, S3 and memory backends, the read and scan budgets, stalled
//! backends, and symlinks that lead out of a mount.

use std::sync::Arc;

use vfsbox_host::runtime::Outcome;
use vfsbox_host::vfs::{Backend, Fault, LocalBackend, MemoryBackend, Mount};
use vfsbox_host::{Limit, Limits, Vfs};

use crate::common::*;
use crate::s3::S3Server;

/// The tree every backend serves in the suite.
const TREE: &[(&str, &[u8])] = &[
    ("README.md", b"# Handbook\nStart here.\n"),
    (
        "policies/refunds.md",
        b"Refund policy\nRefunds within 30 days.\nNo refund after 30 days.\n",
    ),
    ("policies/travel.md", b"Travel policy\nBook economy.\n"),
    // Characters S3 clients are told to avoid, and that some encode.
    ("policies/old~1 #draft% [v2].md", b"Old travel policy\n"),
    ("reports/2024/q1.csv", b"quarter,revenue\nq1,100\n"),
    ("reports/2024/q2.csv", b"quarter,revenue\nq2,120\n"),
];

/// What each script of the suite prints, on any backend.
const SUITE: &[(&[&str], &str)] = &[
    (&["ls", "/"], "files Directory 0\n"),
    (
        &["ls", "/files"],
        "README.md File 23\npolicies Directory 0\nreports Directory 0\n",
    ),
    (
        &["ls", "/files/reports/2024"],
        "q1.csv File 23\nq2.csv File 23\n",
    ),
    (
        &["stat", "/files/policies/../policies/travel.md"],
        "/files/policies/travel.md File 28\n",
    ),
    (&["read", "/files/README.md"], "# Handbook\nStart here.\n"),
    (
        &["ls", "/files/policies"],
        "old~1 #draft% [v2].md File 18\nrefunds.md File 63\ntravel.md File 28\n",
    ),
    (
        &["read", "/files/policies/old~1 #draft% [v2].md"],
        "Old travel policy\n",
    ),
    (&["read-range", "/files/README.md", "2", "8"], "Handbook"),
    (&["read-range", "/files/README.md", "20", "100"], "e.\n"),
    (&["read-range", "/files/README.md", "500", "10"], ""),
    (
        &["walk", "/files"],
        "/files/README.md\n/files/policies\n/files/policies/old~1 #draft% [v2].md\n\
         /files/policies/refunds.md\n/files/policies/travel.md\n\
         /files/reports\n/files/reports/2024\n/files/reports/2024/q1.csv\n/files/reports/2024/q2.csv\n",
    ),
    (
        &["grep", "[Rr]efund", "/files"],
        "/files/policies/refunds.md:1:Refund policy\n/files/policies/refunds.md:2:Refunds within 30 days.\n\
         /files/policies/refunds.md:3:No refund after 30 days.\n",
    ),
    (
        &["grep", "q2", "/files/reports", "/files/nope"],
        "/files/reports/2024/q2.csv:2:q2,120\nerror /files/nope: /files/nope: no such file or directory\n",
    ),
    (&["classify", "/files/nope.md"], "not-found\n"),
    (&["classify", "/files/policies"], "is-a-directory\n"),
    (&["classify", "/files/README.md/x"], "not-a-directory\n"),
    (&["classify", "/files/a\u{0}b"], "invalid-path\n"),
    (&["classify", "/elsewhere/x"], "not-found\n"),
];

async fn run_suite(name: &str, backend: Arc<dyn Backend>) {
    let rt = runtime(limits());
    let vfs = Vfs::new([Mount {
        path: vpath("/files"),
        backend,
    }])
    .expect("mount");
    for (args, want) in SUITE {
        let report = run_on(&rt, vfs.clone(), limits(), args).await;
        assert!(
            matches!(report.outcome, Outcome::Exited { .. }),
            "{name} {args:?}: {:?} {}",
            report.outcome,
            report.stderr_text()
        );
        // A local directory lists in readdir order, the others by name.
        if matches!(args[0], "ls" | "walk") {
            assert_eq!(
                sorted_lines(&report.stdout_text()),
                sorted_lines(want),
                "{name}: {args:?}"
            );
        } else {
            assert_eq!(report.stdout_text(), *want, "{name}: {args:?}");
        }
    }
}

/// The lines of a listing in name order.
fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

fn memory_tree() -> MemoryBackend {
    TREE.iter()
        .fold(MemoryBackend::new(), |t, (p, b)| t.file(p, b.to_vec()))
}

#[tokio::test]
async fn the_suite_passes_on_the_memory_backend() {
    run_suite("memory", Arc::new(memory_tree())).await;
}

#[tokio::test]
async fn the_suite_passes_on_the_local_backend() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, bytes) in TREE {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, bytes).expect("write");
    }
    run_suite(
        "local",
        Arc::new(LocalBackend::open(dir.path()).expect("open")),
    )
    .await;
}

#[tokio::test]
async fn a_local_mount_reports_the_inode_and_times_the_kernel_keeps() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a.txt");
    std::fs::write(&file, b"x").expect("write");
    let real = std::fs::metadata(&file).expect("metadata");
    let local = LocalBackend::open(dir.path()).expect("open");
    let inode = local
        .stat("a.txt")
        .await
        .expect("stat")
        .inode
        .expect("a local file has an inode");
    assert_eq!(inode.number, real.ino());
    assert_eq!(inode.device, real.dev());
    assert_eq!(inode.accessed, real.accessed().ok());
    let changed = inode.changed.expect("a change time");
    let since = changed
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch");
    assert_eq!(since.as_secs(), u64::try_from(real.ctime()).expect("ctime"));
    assert_eq!(
        since.subsec_nanos(),
        u32::try_from(real.ctime_nsec()).expect("nsec")
    );
    // Memory (like S3) keeps none of it: the script then sees inode 0 and
    // the modification time.
    let memory = memory_tree();
    let meta = memory.stat("README.md").await.expect("stat");
    assert_eq!(meta.inode, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_passes_on_the_s3_backend() {
    let server = S3Server::start().await;
    let backend = server.backend("tenant-a/docs", TREE).await;
    // A neighbouring prefix the mount must not show.
    server
        .backend("tenant-a/other", &[("secret.txt", b"not yours")])
        .await;
    run_suite("s3", Arc::new(backend)).await;
    // A prefix with nothing under it yet is an empty directory, as an
    // empty local directory is.
    let empty = server.backend("tenant-b/docs", &[]).await;
    let listing = empty.list("", 10).await.expect("lists");
    assert!(listing.entries.is_empty() && !listing.truncated);
    assert_eq!(
        empty.stat("").await.map(|m| m.kind),
        Ok(vfsbox_host::vfs::Kind::Directory)
    );
}

fn many_files(n: usize) -> MemoryBackend {
    (0..n).fold(MemoryBackend::new(), |t, i| {
        t.file(
            &format!("many/doc{i:04}.txt"),
            format!("document {i}\nneedle\n"),
        )
    })
}

#[tokio::test]
async fn reading_four_hundred_documents_is_allowed() {
    let rt = runtime(limits());
    let report = run_on(
        &rt,
        vfs_of(many_files(400)),
        limits(),
        &["read-many", "/files/many", "400"],
    )
    .await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.usage.document_reads, 400);
}

#[tokio::test]
async fn reading_a_401st_document_ends_the_script_with_the_message() {
    let rt = runtime(limits());
    let report = run_on(
        &rt,
        vfs_of(many_files(450)),
        limits(),
        &["read-many", "/files/many", "450"],
    )
    .await;
    assert_eq!(
        report.outcome,
        Outcome::BudgetExceeded {
            limit: Limit::DocumentReads,
            used: 401,
            allowed: 400
        }
    );
    assert_eq!(
        vfsbox_host::runtime::describe(Limit::DocumentReads, 401, 400),
        "script read more than 400 documents; scope it to a subdirectory or use search"
    );
    assert!(
        report.stdout_text().ends_with("read 400\n"),
        "output so far is kept"
    );
    assert_eq!(report.usage.document_reads, 400);
}

#[tokio::test]
async fn rereading_a_document_does_not_count_again() {
    let rt = runtime(Limits {
        document_reads: 1,
        ..limits()
    });
    let tree = MemoryBackend::new()
        .file("a.txt", "aaaa")
        .file("b.txt", "bb");
    let vfs = vfs_of(tree);
    // The same document three times, under three spellings: one read.
    let args = [
        "read-each",
        "/files/a.txt",
        "/files/./a.txt",
        "/files/x/../a.txt",
    ];
    let report = run_on(&rt, vfs.clone(), rt.limits().clone(), &args).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.usage.document_reads, 1);
    assert_eq!(report.usage.bytes_read, 12, "bytes are charged each time");
    // A second document is a second read, over the cap of one.
    let args = ["read-each", "/files/a.txt", "/files/b.txt"];
    let report = run_on(&rt, vfs, rt.limits().clone(), &args).await;
    assert_eq!(report.limit(), Some(Limit::DocumentReads));
    assert_eq!(report.stdout_text(), "read /files/a.txt: 4 bytes\n");
}

#[tokio::test]
async fn ranged_reads_count_as_document_reads_and_charge_only_their_bytes() {
    let tree = (0..3).fold(MemoryBackend::new(), |t, i| {
        t.file(&format!("d{i}.txt"), "x".repeat(1000))
    });
    let paths = ["/files/d0.txt", "/files/d1.txt", "/files/d2.txt"];
    let args = |len: &'static str| {
        let mut a = vec!["read-range-each", len];
        a.extend(paths);
        a
    };
    let rt = runtime(limits());
    let report = run_on(&rt, vfs_of(tree.clone()), limits(), &args("10")).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(
        (report.usage.document_reads, report.usage.bytes_read),
        (3, 30)
    );
    let two_documents = Limits {
        document_reads: 2,
        ..limits()
    };
    let report = run_on(&rt, vfs_of(tree.clone()), two_documents, &args("10")).await;
    assert_eq!(
        report.outcome,
        Outcome::BudgetExceeded {
            limit: Limit::DocumentReads,
            used: 3,
            allowed: 2
        }
    );
    let few_bytes = Limits {
        bytes_read: 25,
        ..limits()
    };
    let report = run_on(&rt, vfs_of(tree), few_bytes, &args("10")).await;
    assert_eq!(
        report.outcome,
        Outcome::BudgetExceeded {
            limit: Limit::BytesRead,
            used: 30,
            allowed: 25
        }
    );
}

#[tokio::test]
async fn an_over_long_path_is_an_invalid_path_the_script_sees() {
    let rt = runtime(limits());
    let long = format!("/files/{}", "a/".repeat(2100));
    let report = run(&rt, &["classify", &long]).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.stdout_text(), "invalid-path\n");
    let just_fits = format!("/files/{}", "b".repeat(4096 - "/files/".len()));
    let report = run(&rt, &["classify", &just_fits]).await;
    assert_eq!(report.stdout_text(), "not-found\n", "4096 bytes is allowed");
}

#[tokio::test]
async fn a_script_can_stop_cleanly_before_the_read_cap() {
    let rt = runtime(Limits {
        document_reads: 25,
        ..limits()
    });
    let report = run_on(
        &rt,
        vfs_of(many_files(40)),
        rt.limits().clone(),
        &["read-until-budget", "/files"],
    )
    .await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.stdout_text(), "stopped cleanly after 25 documents\n");
}

#[tokio::test]
async fn reads_past_the_byte_cap_end_the_script() {
    let rt = runtime(Limits {
        bytes_read: 20,
        ..limits()
    });
    let tree = MemoryBackend::new()
        .file("a.txt", "0123456789")
        .file("b.txt", "0123456789abc");
    let vfs = vfs_of(tree);
    let ok = run_on(
        &rt,
        vfs.clone(),
        rt.limits().clone(),
        &["read", "/files/a.txt"],
    )
    .await;
    assert_eq!(ok.outcome, Outcome::Exited { exit_code: 0 });
    let report = run_on(&rt, vfs, rt.limits().clone(), &["read-many", "/files", "2"]).await;
    assert_eq!(
        report.outcome,
        Outcome::BudgetExceeded {
            limit: Limit::BytesRead,
            used: 23,
            allowed: 20
        }
    );
}

#[tokio::test]
async fn grep_within_the_scan_budget_is_complete() {
    let rt = runtime(Limits {
        scan_files: 50,
        ..limits()
    });
    let report = run_on(
        &rt,
        vfs_of(many_files(50)),
        rt.limits().clone(),
        &["grep", "needle", "/files"],
    )
    .await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.stdout_text().lines().count(), 50);
    assert!(!report.stdout_text().contains("truncated"));
    assert_eq!(report.usage.files_scanned, 50);
}

#[tokio::test]
async fn grep_past_the_scan_budget_returns_partial_matches() {
    let rt = runtime(Limits {
        scan_files: 30,
        ..limits()
    });
    let report = run_on(
        &rt,
        vfs_of(many_files(50)),
        rt.limits().clone(),
        &["grep", "needle", "/files"],
    )
    .await;
    assert_eq!(
        report.outcome,
        Outcome::Exited { exit_code: 0 },
        "a partial result is not an error"
    );
    let out = report.stdout_text();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 31, "{out}");
    assert_eq!(lines[0], "/files/many/doc0000.txt:2:needle");
    assert_eq!(lines[29], "/files/many/doc0029.txt:2:needle");
    assert_eq!(lines[30], "truncated: searched 30 not reached 20");
    assert_eq!(report.usage.files_scanned, 30);
}

#[tokio::test]
async fn the_scan_budget_in_bytes_also_cuts_a_search() {
    let rt = runtime(Limits {
        scan_bytes: 100,
        ..limits()
    });
    // Each document is 18 bytes: five fit in 100 bytes.
    let report = run_on(
        &rt,
        vfs_of(many_files(10)),
        rt.limits().clone(),
        &["grep", "needle", "/files"],
    )
    .await;
    assert!(
        report
            .stdout_text()
            .ends_with("truncated: searched 5 not reached 5\n"),
        "{}",
        report.stdout_text()
    );
    assert_eq!(report.usage.bytes_scanned, 90);
}

#[tokio::test]
async fn a_failing_backend_is_an_error_the_script_sees() {
    let rt = runtime(limits());
    let tree = small_tree().faulty("broken.txt", "x", Fault::Fail);
    let report = run_on(
        &rt,
        vfs_of(tree),
        limits(),
        &["classify", "/files/broken.txt"],
    )
    .await;
    assert_eq!(report.stdout_text(), "unavailable\n");
}

#[tokio::test]
async fn symlinks_leading_out_of_a_local_mount_are_denied() {
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "top secret").expect("write");
    let root = tempfile::tempdir().expect("tempdir");
    let r = root.path();
    std::fs::create_dir(r.join("docs")).expect("mkdir");
    std::fs::write(r.join("docs/ok.txt"), "fine").expect("write");
    let link = |target: &std::path::Path, at: &str| {
        std::os::unix::fs::symlink(target, r.join(at)).expect("symlink");
    };
    link(&outside.path().join("secret.txt"), "abs-escape");
    link(
        std::path::Path::new("../../../../../../etc/passwd"),
        "rel-escape",
    );
    link(outside.path(), "dir-escape");
    link(std::path::Path::new("docs/ok.txt"), "inside");
    link(std::path::Path::new("docs"), "docs-link");
    let rt = runtime(limits());
    let vfs = local_vfs(r);
    for (path, want) in [
        ("/files/abs-escape", "denied\n"),
        ("/files/rel-escape", "denied\n"),
        ("/files/dir-escape/secret.txt", "denied\n"),
        ("/files/inside", "ok\n"),
        ("/files/docs-link/ok.txt", "ok\n"),
        ("/files/docs/../../../etc/passwd", "not-found\n"),
    ] {
        let report = run_on(&rt, vfs.clone(), limits(), &["classify", path]).await;
        assert_eq!(report.stdout_text(), want, "{path}");
    }
    // Escaping links are left out of listings rather than described.
    let report = run_on(&rt, vfs, limits(), &["ls", "/files"]).await;
    assert_eq!(
        sorted_lines(&report.stdout_text()),
        ["docs Directory 0", "docs-link Directory 0", "inside File 4"]
    );
}

#[tokio::test]
async fn links_that_close_a_loop_are_left_out_so_walks_end_and_find_each_document_once() {
    let root = tempfile::tempdir().expect("tempdir");
    let r = root.path();
    for dir in ["docs/sub", "x", "y"] {
        std::fs::create_dir_all(r.join(dir)).expect("mkdir");
    }
    std::fs::write(r.join("docs/a.txt"), "needle").expect("write");
    std::fs::write(r.join("docs/sub/b.txt"), "needle").expect("write");
    std::fs::write(r.join("y/c.txt"), "needle").expect("write");
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(target, r.join(at)).expect("symlink");
    };
    link(".", "docs/self");
    link("..", "docs/up");
    link("../..", "docs/sub/back");
    // Two directories linked to each other: each link is a loop only
    // once walked through the other.
    link("../y", "x/to-y");
    link("../x", "y/to-x");
    // A link to a directory that is not an ancestor stays.
    link("docs/sub", "sub-link");
    let rt = runtime(limits());
    let vfs = local_vfs(r);
    let ls = |path: &'static str| {
        let (rt, vfs) = (&rt, vfs.clone());
        async move {
            let text = run_on(rt, vfs, limits(), &["ls", path]).await.stdout_text();
            let mut lines: Vec<String> = text.lines().map(|l| format!("{l}\n")).collect();
            lines.sort_unstable();
            lines.concat()
        }
    };
    assert_eq!(ls("/files/docs").await, "a.txt File 6\nsub Directory 0\n");
    assert_eq!(ls("/files/docs/sub").await, "b.txt File 6\n");
    assert_eq!(ls("/files/x").await, "to-y Directory 0\n");
    assert_eq!(ls("/files/x/to-y").await, "c.txt File 6\n");
    assert_eq!(ls("/files/y").await, "c.txt File 6\nto-x Directory 0\n");
    // A loop's path still resolves; it is only not listed.
    let report = run_on(
        &rt,
        vfs.clone(),
        limits(),
        &["classify", "/files/docs/up/docs/a.txt"],
    )
    .await;
    assert_eq!(report.stdout_text(), "ok\n");

    let report = run_on(&rt, vfs, limits(), &["grep", "needle", "/files"]).await;
    // Each document once, in the walk's (readdir) order.
    assert_eq!(
        sorted_lines(&report.stdout_text()),
        [
            "/files/docs/a.txt:1:needle",
            "/files/docs/sub/b.txt:1:needle",
            "/files/sub-link/b.txt:1:needle",
            "/files/x/to-y/c.txt:1:needle",
            "/files/y/c.txt:1:needle",
        ]
    );
}

#[tokio::test]
async fn a_listing_is_capped_per_call_and_says_so() {
    let rt = runtime(Limits {
        list_entries: 2,
        ..limits()
    });
    let report = run_on(
        &rt,
        vfs_of(small_tree()),
        rt.limits().clone(),
        &["ls", "/files/notes"],
    )
    .await;
    assert_eq!(report.stdout_text(), "b.txt File 10\nc.txt File 18\n");
    let report = run_on(
        &rt,
        vfs_of(many_files(5)),
        rt.limits().clone(),
        &["ls", "/files/many"],
    )
    .await;
    assert_eq!(
        report.stdout_text(),
        "doc0000.txt File 18\ndoc0001.txt File 18\n(truncated)\n"
    );
    // A walk says which directories it could not see whole.
    let report = run_on(
        &rt,
        vfs_of(many_files(5)),
        rt.limits().clone(),
        &["walk", "/files"],
    )
    .await;
    assert_eq!(
        report.stdout_text(),
        "/files/many\n/files/many/doc0000.txt\n/files/many/doc0001.txt\n(truncated: /files/many)\n"
    );
}

#[tokio::test]
async fn downloads_stream_the_bytes_of_a_range() {
    use futures::TryStreamExt;
    use vfsbox_host::vfs::{download, resolve_path};
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("big.bin"), &bytes).expect("write");
    let vfs = local_vfs(dir.path());
    let audit = vfsbox_host::AuditLog::disabled();
    let doc = resolve_path(&vfs, b"/files/big.bin")
        .await
        .expect("resolves");
    assert_eq!(doc.meta.size, 300_000);
    for range in [0..300_000u64, 1000..1010, 250_000..300_000] {
        let stream = download(&vfs, &audit, &Default::default(), &doc, range.clone())
            .await
            .expect("opens");
        let chunks: Vec<bytes::Bytes> = stream.try_collect().await.expect("reads");
        assert!(
            chunks.iter().all(|c| c.len() <= 64 * 1024),
            "streamed in chunks"
        );
        let got: Vec<u8> = chunks.concat();
        assert_eq!(got, bytes[range.start as usize..range.end as usize]);
    }
    let dir_err = resolve_path(&vfs, b"/files").await.expect("resolves");
    assert!(
        download(&vfs, &audit, &Default::default(), &dir_err, 0..1)
            .await
            .is_err()
    );
    assert!(
        resolve_path(&vfs, b"/files/\xff").await.is_err(),
        "not UTF-8"
    );
}

#[tokio::test]
async fn a_tenant_sees_only_its_own_mounts() {
    let a = tempfile::tempdir().expect("tempdir");
    let b = tempfile::tempdir().expect("tempdir");
    std::fs::write(a.path().join("a.txt"), "tenant a").expect("write");
    std::fs::write(b.path().join("b.txt"), "tenant b").expect("write");
    let config = vfsbox_host::config::Config::parse(&format!(
        r#"
        [[tenants]]
        name = "a"
        [[tenants.mounts]]
        path = "/files"
        local = {{ dir = "{}" }}
        [[tenants]]
        name = "b"
        [[tenants.mounts]]
        path = "/files"
        local = {{ dir = "{}" }}
        "#,
        a.path().display(),
        b.path().display()
    ))
    .expect("config");
    let vfs_a = config.tenants[0].vfs().expect("vfs a");
    let rt = runtime(limits());
    let report = run_on(&rt, vfs_a.clone(), limits(), &["walk", "/"]).await;
    assert_eq!(report.stdout_text(), "/files\n/files/a.txt\n");
    for path in ["/files/b.txt", "/files/../b.txt", "/b.txt"] {
        let report = run_on(&rt, vfs_a.clone(), limits(), &["classify", path]).await;
        assert_eq!(report.stdout_text(), "not-found\n", "{path}");
    }
}

#[tokio::test]
async fn a_script_can_change_its_working_directory_and_the_report_says_where_it_ended() {
    let rt = runtime(limits());
    let report = run_on(
        &rt,
        vfs_of(small_tree()),
        limits(),
        &["cd", "/files/./notes/", "read", "b.txt"],
    )
    .await;
    assert_eq!(report.stdout_text(), "now in /files/notes\nbeta TODO\n");
    assert_eq!(report.cwd, "/files/notes");
    let report = run_on(&rt, vfs_of(small_tree()), limits(), &["cd", "/files/a.txt"]).await;
    assert_eq!(
        report.stdout_text(),
        "error: /files/a.txt: not a directory\n"
    );
    assert_eq!(report.cwd, "/");
    let report = run_on(&rt, vfs_of(small_tree()), limits(), &["cd", "/nowhere"]).await;
    assert_eq!(report.exit_code(), Some(1));
    assert_eq!(report.cwd, "/");
}

#[tokio::test]
async fn guest_visible_errors_round_trip_to_variants_a_script_matches() {
    let root = tempfile::tempdir().expect("tempdir");
    std::fs::write(root.path().join("doc.txt"), "text").expect("write");
    std::os::unix::fs::symlink("/etc/passwd", root.path().join("out")).expect("symlink");
    let rt = runtime(limits());
    let vfs = local_vfs(root.path());
    for (path, variant) in [
        ("/files/missing.txt", "not-found"),
        ("/files/doc.txt/inner", "not-a-directory"),
        ("/files", "is-a-directory"),
        ("/files/a\u{0}b", "invalid-path"),
        ("/files/out", "denied"),
        ("/files/doc.txt", "ok"),
    ] {
        let report = run_on(&rt, vfs.clone(), limits(), &["classify", path]).await;
        assert_eq!(report.stdout_text(), format!("{variant}\n"), "{path:?}");
    }
}

#[tokio::test]
async fn a_search_ended_by_the_deadline_stops_waiting_on_its_backend() {
    let rt = runtime(Limits {
        deadline: std::time::Duration::from_millis(300),
        ..limits()
    });
    for fault in [Fault::Stall, Fault::StallMidway] {
        let tree = MemoryBackend::new().file("a.txt", "needle\n").faulty(
            "b.txt",
            "needle\n".repeat(10_000),
            fault,
        );
        let report = run_on(
            &rt,
            vfs_of(tree.clone()),
            rt.limits().clone(),
            &["grep", "needle", "/files"],
        )
        .await;
        assert_eq!(report.limit(), Some(Limit::Deadline), "{fault:?}");
        assert_slots_freed(&rt).await;
        // The search's blocking work gave up its read too, rather than
        // waiting on the backend forever.
        let start = std::time::Instant::now();
        while tree.stalled_reads() != 0 {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(2),
                "{fault:?}: a read is still waiting"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

#[tokio::test]
async fn a_fifo_in_a_local_mount_is_denied_without_blocking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    std::fs::write(dir.path().join("doc.txt"), "text\n").expect("write");
    let backend = LocalBackend::open(dir.path()).expect("open");
    let within = std::time::Duration::from_secs(5);
    let read = tokio::time::timeout(within, backend.read_range("pipe", 0..10))
        .await
        .expect("the read does not block");
    assert_eq!(
        read,
        Err(vfsbox_host::vfs::FsError::Denied("pipe".to_owned()))
    );
    let opened = tokio::time::timeout(within, backend.open("pipe", 0..10))
        .await
        .expect("the open does not block");
    assert!(matches!(opened, Err(vfsbox_host::vfs::FsError::Denied(_))));
    let listing = backend.list("", 10).await.expect("lists");
    let names: Vec<&str> = listing.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["doc.txt"], "special files are not listed");
}
