//! The audit log: runs, greps and downloads are recorded as JSON lines,
//! patterns only as hashes, and a failed write fails the operation.

use serde_json::Value;
use sha2::{Digest, Sha256};
use vfsbox_host::runtime::{RunError, Script};
use vfsbox_host::vfs::{DownloadError, download, resolve_path};
use vfsbox_host::{AuditLog, Caller, Runtime};

use crate::common::*;

fn records(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("audit log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn caller() -> Caller {
    Caller {
        tenant: "acme".to_owned(),
        request_id: "req-42".to_owned(),
    }
}

#[tokio::test]
async fn runs_and_greps_are_recorded_without_the_pattern() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let rt = Runtime::new(limits(), AuditLog::open(&log).expect("open")).expect("runtime");
    let permit = rt.try_admit(None).expect("slot");
    let mut spec = spec(
        vfs_of(small_tree()),
        limits(),
        &["grep", "TODO|SecretNeedle", "/files/notes"],
    );
    spec.caller = caller();
    let report = rt
        .run(permit, Script::Bytes(misbehave()), spec)
        .await
        .expect("runs");
    assert_eq!(report.exit_code(), Some(0));

    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        !text.contains("SecretNeedle"),
        "the raw pattern leaked: {text}"
    );
    let recs = records(&log);
    let events: Vec<&str> = recs
        .iter()
        .map(|r| r["event"].as_str().expect("event"))
        .collect();
    assert_eq!(events, ["run_start", "grep", "run_end"]);
    for r in &recs {
        assert_eq!(r["tenant"], "acme");
        assert_eq!(r["request_id"], "req-42");
        assert!(r["time"].as_str().expect("time").ends_with('Z'));
        assert!(
            r["script_id"]
                .as_str()
                .expect("script id")
                .starts_with("sha256:")
        );
    }
    let grep = &recs[1];
    let digest = hex::encode(Sha256::digest(b"TODO|SecretNeedle"));
    assert_eq!(grep["pattern_sha256"], digest.as_str());
    assert_eq!(grep["roots"], serde_json::json!(["/files/notes"]));
    assert_eq!(grep["files_scanned"], 2);
    assert_eq!(grep["truncated"], false);
    let end = &recs[2];
    assert_eq!(end["outcome"], "exited");
    assert_eq!(end["exit_code"], 0);
    assert_eq!(end["usage"]["files_scanned"], 2);
}

#[tokio::test]
async fn downloads_are_recorded_with_path_and_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let audit = AuditLog::open(&log).expect("open");
    let vfs = vfs_of(small_tree());
    let doc = resolve_path(&vfs, b"/files/notes/../a.txt")
        .await
        .expect("resolves");
    let _body = download(&vfs, &audit, &caller(), &doc, 1..4)
        .await
        .expect("opens");
    let recs = records(&log);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["event"], "download");
    assert_eq!(recs[0]["path"], "/files/a.txt");
    assert_eq!(recs[0]["size"], 3);
}

#[tokio::test]
async fn a_failed_audit_write_fails_the_run_and_the_download() {
    // Every write to /dev/full fails with "no space left on device".
    let audit = AuditLog::open(std::path::Path::new("/dev/full")).expect("open");
    let rt = Runtime::new(limits(), audit.clone()).expect("runtime");
    let permit = rt.try_admit(None).expect("slot");
    let result = rt
        .run(
            permit,
            Script::Bytes(misbehave()),
            spec(vfs_of(small_tree()), limits(), &["ok"]),
        )
        .await;
    assert!(matches!(result, Err(RunError::Audit(_))), "{result:?}");
    assert_slots_freed(&rt).await;

    let vfs = vfs_of(small_tree());
    let doc = resolve_path(&vfs, b"/files/a.txt").await.expect("resolves");
    let result = download(&vfs, &audit, &caller(), &doc, 0..6).await;
    assert!(matches!(result, Err(DownloadError::Audit(_))));
}

/// A sink that takes `n` records, then fails every write, as a disk that
/// fills up mid-run does.
struct FailsAfter {
    records: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    writes_left: usize,
}

impl std::io::Write for FailsAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.writes_left == 0 {
            return Err(std::io::Error::from_raw_os_error(28)); // ENOSPC
        }
        self.writes_left -= 1;
        self.records.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn events_in(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[tokio::test]
async fn an_audit_log_that_fails_mid_run_fails_the_run_at_its_grep() {
    let records = std::sync::Arc::default();
    let sink = FailsAfter {
        records: std::sync::Arc::clone(&records),
        writes_left: 1,
    };
    let rt = Runtime::new(limits(), AuditLog::to_writer(sink)).expect("runtime");
    let permit = rt.try_admit(None).expect("slot");
    let result = rt
        .run(
            permit,
            Script::Bytes(misbehave()),
            spec(vfs_of(small_tree()), limits(), &["grep", "TODO", "/files"]),
        )
        .await;
    assert!(matches!(result, Err(RunError::Audit(_))), "{result:?}");
    assert_slots_freed(&rt).await;
    let recs = events_in(&records.lock().expect("lock"));
    assert_eq!(recs.len(), 1, "only the run's start was recorded: {recs:?}");
    assert_eq!(recs[0]["event"], "run_start");
}

#[tokio::test]
async fn greps_that_do_not_finish_are_recorded_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let short = vfsbox_host::Limits {
        deadline: std::time::Duration::from_millis(300),
        ..limits()
    };
    let rt = Runtime::new(short.clone(), AuditLog::open(&log).expect("open")).expect("runtime");
    let tree = small_tree().faulty("slow.txt", "x", vfsbox_host::vfs::Fault::Stall);
    for args in [
        &["grep", "(unclosed", "/files"][..],
        &["grep", "x", "/files"][..],
    ] {
        let report = run_on(&rt, vfs_of(tree.clone()), short.clone(), args).await;
        assert!(report.exit_code().is_some() || report.limit().is_some());
    }
    let greps: Vec<Value> = records(&log)
        .into_iter()
        .filter(|r| r["event"] == "grep")
        .collect();
    assert_eq!(greps.len(), 2, "{greps:?}");
    assert_eq!(greps[0]["error"], "bad request");
    assert_eq!(greps[0]["truncated"], false);
    assert_eq!(
        greps[0]["pattern_sha256"],
        hex::encode(Sha256::digest(b"(unclosed")).as_str()
    );
    assert_eq!(greps[1]["error"], "deadline");
    assert_eq!(greps[1]["truncated"], true);
}

#[tokio::test]
async fn a_run_its_caller_abandons_is_recorded_as_abandoned() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let rt = Runtime::new(limits(), AuditLog::open(&log).expect("open")).expect("runtime");
    let script = Script::Compiled(compiled(&rt).await);
    let permit = rt.try_admit(None).expect("slot");
    let mut spec = spec(vfs_of(small_tree()), limits(), &["spin"]);
    spec.caller = caller();
    let run = rt.run(permit, script, spec);
    let gave_up = tokio::time::timeout(std::time::Duration::from_millis(500), run).await;
    assert!(gave_up.is_err(), "the spin should still be running");
    assert_slots_freed(&rt).await;
    let events: Vec<String> = records(&log)
        .iter()
        .map(|r| r["event"].as_str().expect("event").to_owned())
        .collect();
    assert_eq!(events, ["run_start", "run_abandoned"]);
}
