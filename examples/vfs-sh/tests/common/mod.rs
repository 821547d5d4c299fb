//! The fixture tree the native tests run over: a small, realistic document
//! store (markdown, CSV, JSON, nested directories, a file without a trailing
//! newline, names with spaces, a hidden file, a binary file, a large log, an
//! empty directory), with modification times spread from hours to years
//! ago.

#![allow(dead_code)]

use std::fs::{self, File, FileTimes};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A fixture on disk, removed when dropped.
pub(crate) struct Fixture {
    dir: PathBuf,
    files: PathBuf,
}

const HOUR: u64 = 3600;
const DAY: u64 = 24 * HOUR;

/// How long ago, or exactly when.
enum When {
    Ago(u64),
    At(u64),
}

fn set_time(path: &Path, when: &When, now: SystemTime) {
    let t = match when {
        When::Ago(secs) => now - Duration::from_secs(*secs),
        When::At(epoch) => UNIX_EPOCH + Duration::from_secs(*epoch),
    };
    let f = File::open(path).expect("opens fixture path");
    f.set_times(FileTimes::new().set_modified(t).set_accessed(t))
        .expect("sets fixture times");
}

fn app_log() -> String {
    (1..=30)
        .map(|i| {
            let level = if i % 10 == 0 {
                "ERROR"
            } else if i % 7 == 0 {
                "WARN"
            } else {
                "INFO"
            };
            format!("2024-03-01 10:{i:02}:00 {level} event {i}\n")
        })
        .collect()
}

fn big_log() -> String {
    (1..=5000)
        .map(|i| format!("line {i} of the big log\n"))
        .collect()
}

/// A zip archive as agents meet them: stored and deflated members, a
/// directory entry, names in mixed case (for `unzip -C`), DOS timestamps.
fn handbook_zip() -> Vec<u8> {
    use std::io::Write as _;
    use zip::write::SimpleFileOptions;
    use zip::{CompressionMethod, DateTime};

    let at = |y, mo, d, h, mi, s| {
        DateTime::from_date_and_time(y, mo, d, h, mi, s).expect("a valid DOS time")
    };
    let stored = |t| {
        SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .last_modified_time(t)
    };
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.add_directory("handbook/", stored(at(2023, 1, 2, 9, 0, 0)))
        .expect("adds a directory");
    let members: [(&str, String, bool, DateTime); 4] = [
        (
            "handbook/intro.md",
            "# Handbook\nWelcome aboard.\nRead the refund policy first.\n".to_owned(),
            false,
            at(2024, 3, 5, 10, 20, 30),
        ),
        (
            "handbook/policy.txt",
            "refund within 30 days\n".repeat(40),
            true,
            at(2023, 12, 31, 23, 59, 58),
        ),
        (
            "Images/Logo.SVG",
            "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n".to_owned(),
            false,
            at(2022, 6, 7, 8, 9, 10),
        ),
        ("empty.txt", String::new(), false, at(2021, 2, 3, 4, 5, 6)),
    ];
    for (name, body, deflate, t) in members {
        let options = if deflate {
            stored(t).compression_method(CompressionMethod::Deflated)
        } else {
            stored(t)
        };
        w.start_file(name, options).expect("starts a member");
        w.write_all(body.as_bytes()).expect("writes a member");
    }
    w.finish().expect("finishes the archive").into_inner()
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("vfs-sh-fixture-{}-{n}-{nanos}", std::process::id()));
        let files = dir.join("files");
        let now = SystemTime::now();
        let text: &[(&str, &[u8], When)] = &[
            (
                "README.md",
                b"# Company Docs\n\nWelcome to the document store.\nSee docs/policy.md for the refund policy.\nQuestions: support@example.com\n",
                When::Ago(2 * DAY + 3 * HOUR),
            ),
            (
                "notes.txt",
                b"first note\nsecond note: refund requested\nTODO: call back\nlast line without newline",
                When::Ago(DAY + 2 * HOUR),
            ),
            (
                ".hidden.md",
                b"# hidden\nsecret refund policy draft\n",
                When::Ago(5 * DAY),
            ),
            (
                "data/sales.csv",
                b"region,product,units,price\nnorth,widget,10,2.50\nsouth,gadget,5,10.00\neast,widget,7,2.50\nnorth,gizmo,12,7.25\nwest,gadget,3,10.00\nsouth,widget,10,2.50\neast,gizmo,1,7.25\nnorth,widget,4,2.50\n",
                When::Ago(3 * DAY + 5 * HOUR),
            ),
            (
                "data/customers.csv",
                b"id,name,city\n3,Carol,Paris\n1,Alice,Berlin\n10,Dave,berlin\n2,Bob,Paris\n",
                When::Ago(10 * DAY + HOUR),
            ),
            ("data/empty.txt", b"", When::Ago(20 * DAY)),
            (
                "data/orders.json",
                b"[\n  {\"id\": 1, \"customer\": \"Alice\", \"total\": 25.50, \"items\": [\"widget\", \"gadget\"], \"status\": \"shipped\", \"meta\": {\"rush\": true}},\n  {\"id\": 2, \"customer\": \"Bob\", \"total\": 10.0, \"items\": [], \"status\": \"pending\", \"meta\": null},\n  {\"id\": 3, \"customer\": \"Carol\", \"total\": 7.25, \"items\": [\"gizmo\"], \"status\": \"shipped\", \"note\": \"caf\\u00e9 \\\"quoted\\\"\\ttab\"}\n]\n",
                When::Ago(2 * DAY + 9 * HOUR),
            ),
            (
                "data/events.jsonl",
                b"{\"level\":\"info\",\"msg\":\"started\",\"ms\":12}\n{\"level\":\"error\",\"msg\":\"disk full\",\"ms\":340}\n{\"level\":\"info\",\"msg\":\"done\",\"ms\":7.5}\n",
                When::Ago(9 * HOUR),
            ),
            (
                "docs/policy.md",
                b"# Refund Policy\n\nOur refund policy is simple.\nCustomers may request a refund within 30 days.\nRefunds are processed in 5 business days.\n\n## Exceptions\nGift cards are not refundable.\nContact support for the refund policy details.\n",
                When::Ago(4 * DAY + 7 * HOUR),
            ),
            (
                "docs/guide.md",
                "# User Guide\n\nWelcome to the caf\u{e9}.\nUse the search box to find a document.\nSee the policy for refunds.\n\tIndented with a tab.\n".as_bytes(),
                When::Ago(6 * DAY + 11 * HOUR),
            ),
            (
                "docs/my notes.md",
                b"meeting notes\nrefund policy review\n",
                When::Ago(12 * HOUR),
            ),
            (
                "docs/archive/2019-report.md",
                b"# 2019 Report\nRevenue grew.\n",
                When::At(1_556_971_200),
            ),
            ("docs/archive/old.txt", b"obsolete\n", When::At(1_579_084_200)),
            ("logs/blob.bin", b"BIN\0refund\0data\n", When::Ago(8 * DAY)),
            // Scripts run by their path: `sh` (dash), bash, no `#!` line
            // (bash from the shell, sh from find -exec), not executable.
            (
                "scripts/count.sh",
                b"#!/bin/sh\n# Counts the lines of each file it is given.\nfor f in \"$@\"; do\n  echo \"$f\\t$(wc -l < \"$f\")\"\ndone\necho -e \"done $0\"\n",
                When::Ago(3 * HOUR),
            ),
            (
                "scripts/bashy.sh",
                b"#!/usr/bin/env bash\necho -e \"args:\\t$#\"\n[[ -n \"$1\" ]] && echo \"first: ${1^^}\"\n",
                When::Ago(3 * HOUR),
            ),
            (
                "scripts/report",
                b"echo \"report from $0 $*\"\necho {a,b}\n",
                When::Ago(3 * HOUR),
            ),
            (
                "scripts/notes.sh",
                b"#!/bin/sh\necho never\n",
                When::Ago(3 * HOUR),
            ),
        ];
        for (path, body, when) in text {
            let p = files.join(path);
            fs::create_dir_all(p.parent().expect("has a parent")).expect("creates fixture dirs");
            fs::write(&p, body).expect("writes fixture file");
            set_time(&p, when, now);
        }
        let generated = [
            ("logs/app.log", app_log(), When::Ago(45 * DAY)),
            ("logs/big.log", big_log(), When::Ago(200 * DAY)),
        ];
        for (path, body, when) in &generated {
            let p = files.join(path);
            fs::write(&p, body).expect("writes fixture file");
            set_time(&p, when, now);
        }
        let zip = files.join("docs/archive/handbook.zip");
        fs::write(&zip, handbook_zip()).expect("writes the fixture archive");
        set_time(&zip, &When::At(1_600_000_000), now);
        fs::create_dir_all(files.join("inbox")).expect("creates the empty dir");
        let dirs = [
            ("data", When::Ago(3 * DAY)),
            ("docs/archive", When::At(1_622_548_800)),
            ("docs", When::Ago(DAY)),
            ("logs", When::Ago(7 * DAY + 3 * HOUR)),
            ("inbox", When::Ago(30 * DAY)),
            ("scripts", When::Ago(3 * HOUR)),
            ("", When::Ago(DAY + HOUR)),
        ];
        // Modes other than the umask's, for ls -l, stat and find -perm.
        for (path, mode) in [
            ("logs/blob.bin", 0o755),
            ("logs/app.log", 0o640),
            ("docs/archive", 0o750),
            ("scripts/count.sh", 0o755),
            ("scripts/bashy.sh", 0o755),
            ("scripts/report", 0o755),
        ] {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(files.join(path), fs::Permissions::from_mode(mode))
                .expect("sets fixture modes");
        }
        for (d, when) in &dirs {
            set_time(&files.join(d), when, now);
        }
        Fixture { dir, files }
    }

    /// The directory mounted as `/files`.
    pub(crate) fn files(&self) -> &Path {
        &self.files
    }
}

impl Drop for Fixture {
    /// Set `VFS_SH_KEEP_FIXTURE` to keep the tree for a look after a run.
    fn drop(&mut self) {
        if std::env::var_os("VFS_SH_KEEP_FIXTURE").is_some() {
            eprintln!("fixture kept at {}", self.files.display());
            return;
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Output as text to compare, byte for byte: each byte outside valid UTF-8
/// is shown as `\x{HH}`, so that a tool that turned 0xE9 into U+FFFD (or
/// into anything else) differs from one that kept it.
pub(crate) fn shown(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{{{b:02X}}}"));
        }
    }
    out
}

/// What one side of a differential comparison produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) status: u8,
}

/// Runs a case's script through bash and GNU tools in `root`, with
/// `/files` in the script standing for `root` (and mapped back in the
/// output).
pub(crate) fn gnu(root: &Path, script: &str) -> Outcome {
    use std::os::unix::process::CommandExt;
    let real = root.to_str().expect("a UTF-8 temp path");
    let child = Command::new("bash")
        .arg("-c")
        .arg(script.replace("/files", real))
        .current_dir(root)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .env("HOME", root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: a script that never ends is killed with
        // everything it started, and the suite fails rather than hangs.
        .process_group(0)
        .spawn()
        .expect("bash runs");
    let group = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let Ok(out) = finished.recv_timeout(GNU_LIMIT) else {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{group}")])
            .status();
        panic!("bash did not finish within {GNU_LIMIT:?}: {script}");
    };
    let out = out.expect("bash runs");
    Outcome {
        stdout: shown(&out.stdout).replace(real, "/files"),
        stderr: shown(&out.stderr).replace(real, "/files"),
        status: shell_status(out.status),
    }
}

/// How long bash may take over one script: far more than any case needs
/// on a loaded machine.
const GNU_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The status a shell reports for a process: its exit code, or 128 plus
/// the signal that ended it (`kill -9 $$` ends bash itself).
fn shell_status(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(u8::MAX),
        (None, None) => 255,
    }
}

/// Whether a program is on the PATH.
pub(crate) fn installed(tool: &str) -> bool {
    Command::new("bash")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Compares vfs-sh's outcome with GNU's for a case; describes the
/// difference, if any.
pub(crate) fn compare(
    case: &vfs_sh::cases::Case,
    ours: &Outcome,
    theirs: &Outcome,
) -> Option<String> {
    use vfs_sh::cases::normalise_all;
    let (a, b) = (
        normalise_all(case, &ours.stdout),
        normalise_all(case, &theirs.stdout),
    );
    let stderr_differs = case.compare_stderr && ours.stderr != theirs.stderr;
    if a == b && ours.status == theirs.status && !stderr_differs {
        return None;
    }
    Some(format!(
        "--- {}: {}\nvfs-sh (status {}):\n{}{}\nGNU (status {}):\n{}{}",
        case.name, case.script, ours.status, a, ours.stderr, theirs.status, b, theirs.stderr
    ))
}
