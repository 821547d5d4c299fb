//! The built-in Python against the host's `python3`, same run: `print(1)`
//! through `POST /v1/py` (warm) beside a `python3 -c` process, the first
//! run on a fresh compile cache, a realistic script (group and count a
//! 10 MB CSV) in the sandbox beside native CPython, and the incident
//! replayed with Python scripts.

use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

use crate::report::{Table, median, median_p99, met, ms};
use crate::service::{self, Server, config};

/// Groups the CSV under `sys.argv[1]` by region and product, as an agent
/// would.
const GROUP_AND_COUNT: &str = "import csv, collections, sys\nunits = collections.Counter()\nrevenue = collections.defaultdict(float)\nwith open(sys.argv[1] + '/sales.csv', newline='') as f:\n    for r in csv.DictReader(f):\n        units[r['region']] += int(r['units'])\n        revenue[r['product']] += int(r['units']) * float(r['price'])\nprint(sorted(units.items()), len(revenue))";

pub(crate) async fn python(t: &mut Table) {
    let Some(python3) = native_python3() else {
        t.row(
            "Python rows",
            "skipped: no `python3` on the PATH".to_owned(),
            "—".to_owned(),
            "—".to_owned(),
            "—".to_owned(),
        );
        return;
    };
    first_run(t).await;
    print_one(t, &python3).await;
    csv(t, &python3).await;
    service::python_incident(t).await;
}

/// The host's CPython: its version and its executable (resolved, so that
/// a launcher such as a pyenv shim is not timed with it).
struct Native {
    version: String,
    exe: String,
}

fn native_python3() -> Option<Native> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, platform; print(platform.python_version()); print(sys.executable)",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let (version, exe) = (lines.next()?, lines.next()?);
    out.status.success().then(|| Native {
        version: format!("CPython {version}"),
        exe: exe.to_owned(),
    })
}

/// One `POST /v1/py`; its status and report.
async fn py(c: &Client, server: &Server, body: Value) -> (StatusCode, Value) {
    let r = c
        .post(server.url("/v1/py"))
        .bearer_auth("bench")
        .json(&body)
        .send()
        .await
        .expect("the server answers");
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn timed_py(c: &Client, server: &Server, body: Value) -> Duration {
    let start = Instant::now();
    let (status, report) = py(c, server, body).await;
    let took = start.elapsed();
    assert_eq!(status, StatusCode::OK, "{report}");
    took
}

/// The first run on a fresh compile cache compiles the interpreter; the
/// first after a restart loads that compile from the disk cache.
async fn first_run(t: &mut Table) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let conf = config(dir.path(), "", None);
    let env = [("XDG_CACHE_HOME", cache.as_os_str())];
    let c = Client::new();
    let cold = {
        let server = Server::vfsbox_with_env(Some(&conf), &env);
        timed_py(&c, &server, json!({"code": "print(1)"})).await
    };
    let restarted = {
        let server = Server::vfsbox_with_env(Some(&conf), &env);
        timed_py(&c, &server, json!({"code": "print(1)"})).await
    };
    t.row(
        "Python: the first `print(1)` on a fresh compile cache (compiles the interpreter), then the first after a restart (from the disk cache)",
        format!("{} fresh, {} after a restart", ms(cold), ms(restarted)),
        "—".to_owned(),
        "—".to_owned(),
        format!(
            "compiled once per binary and machine: the restart loads it, {}",
            met(restarted * 4 < cold)
        ),
    );
}

/// `print(1)`, warm, through the API beside a `python3 -c` process.
async fn print_one(t: &mut Table, python3: &Native) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::vfsbox(Some(&config(dir.path(), "", None)));
    let c = Client::new();
    for _ in 0..10 {
        timed_py(&c, &server, json!({"code": "print(1)"})).await;
    }
    let mut ours = Vec::new();
    for _ in 0..200 {
        ours.push(timed_py(&c, &server, json!({"code": "print(1)"})).await);
    }
    let mut native = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        let out = Command::new(&python3.exe)
            .args(["-c", "print(1)"])
            .output()
            .expect("python3 runs");
        native.push(start.elapsed());
        assert_eq!(out.stdout, b"1\n");
    }
    let (p50, p99) = median_p99(ours);
    let (n50, n99) = median_p99(native);
    t.row(
        "Python: `print(1)` through `POST /v1/py`, warm, beside `python3 -c 'print(1)'` as a process",
        format!("p50 {}, p99 {}", ms(p50), ms(p99)),
        format!("{}: p50 {}, p99 {}", python3.version, ms(n50), ms(n99)),
        format!("{:.2}×", p50.as_secs_f64() / n50.as_secs_f64()),
        format!(
            "a sandboxed run costs no more than starting `python3`: {}",
            met(p50 <= n50)
        ),
    );
}

/// Grouping and counting a 10 MB CSV, in the sandbox and natively.
async fn csv(t: &mut Table, python3: &Native) {
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).expect("mkdir");
    let mut text = String::from("id,region,product,units,price\n");
    let regions = ["north", "south", "east", "west", "central"];
    let mut i = 0u64;
    while text.len() < 10 << 20 {
        text.push_str(&format!(
            "{i},{},p{},{},{}.{:02}\n",
            regions[(i % 5) as usize],
            i % 97,
            i % 13 + 1,
            i % 50,
            i % 100
        ));
        i += 1;
    }
    std::fs::write(docs.join("sales.csv"), &text).expect("write");
    let server = Server::vfsbox(Some(&config(dir.path(), "", Some(&docs))));
    let c = Client::new();
    let body = json!({"code": GROUP_AND_COUNT, "args": ["/files"]});
    let (status, report) = py(&c, &server, body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let peak = report["usage"]["peak_memory_bytes"].as_u64().unwrap_or(0);
    let native_out = Command::new(&python3.exe)
        .args(["-c", GROUP_AND_COUNT])
        .arg(&docs)
        .output()
        .expect("python3 runs");
    assert_eq!(
        report["stdout"].as_str().unwrap_or_default().as_bytes(),
        native_out.stdout,
        "the same answer"
    );
    let mut ours = Vec::new();
    let mut native = Vec::new();
    for _ in 0..5 {
        ours.push(timed_py(&c, &server, body.clone()).await);
        let start = Instant::now();
        Command::new(&python3.exe)
            .args(["-c", GROUP_AND_COUNT])
            .arg(&docs)
            .output()
            .expect("python3 runs");
        native.push(start.elapsed());
    }
    let (ours, native) = (median(ours), median(native));
    let ratio = ours.as_secs_f64() / native.as_secs_f64();
    t.row(
        "Python: group and count a 10 MB CSV (`csv.DictReader`, `Counter`), through `POST /v1/py` beside native CPython",
        format!("{} (peak linear memory {} MiB)", ms(ours), peak >> 20),
        format!("{}: {}", python3.version, ms(native)),
        format!("{ratio:.2}×"),
        format!(
            "within 3× native, inside the default 64 MiB: {}",
            met(ratio <= 3.0 && peak <= 64 << 20)
        ),
    );
}
