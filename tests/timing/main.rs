//! Tests whose claims are about time: how fast a refusal comes back under
//! saturation, how close to its deadline a script is stopped. They run in
//! their own test binary, one at a time, so that the load of other tests
//! does not skew what they measure. (Bounds are generous orders of
//! magnitude; the precise figures are in the benchmarks.)

#[path = "../all/common.rs"]
mod common;
mod load;
#[path = "../all/server.rs"]
mod server;

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use vfsbox_host::runtime::{Outcome, Script, Stdin};
use vfsbox_host::vfs::Fault;
use vfsbox_host::{Busy, Limit, Limits};
use wasmtime_wasi::cli::AsyncStdinStream;

use common::*;
use server::*;

/// Runs one test at a time, on a runtime of its own.
fn serial(test: impl Future<Output = ()>) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(test);
}

#[test]
fn a_burst_of_20_mixed_requests_keeps_the_cap() {
    serial(load::burst(20));
}

#[test]
fn a_burst_of_500_mixed_requests_keeps_the_cap() {
    serial(load::burst(500));
}

fn limited(f: impl FnOnce(&mut Limits)) -> Limits {
    let mut l = limits();
    f(&mut l);
    l
}

fn run_url(server: &TestServer, args: &[&str]) -> String {
    let q: Vec<String> = args
        .iter()
        .map(|a| {
            format!(
                "arg={}",
                form_urlencoded::byte_serialize(a.as_bytes()).collect::<String>()
            )
        })
        .collect();
    server.url(&format!("/v1/runs?{}", q.join("&")))
}

async fn json(r: reqwest::Response) -> (StatusCode, Value) {
    let status = r.status();
    (status, r.json::<Value>().await.expect("a JSON body"))
}

#[test]
fn a_spinning_script_is_stopped_at_its_deadline() {
    serial(a_spinning_script_is_stopped_at_its_deadline_());
}

#[test]
fn a_script_asleep_in_a_host_call_is_stopped_at_its_deadline() {
    serial(a_script_asleep_in_a_host_call_is_stopped_at_its_deadline_());
}

#[test]
fn a_script_waiting_on_stdin_that_never_ends_is_stopped_at_its_deadline() {
    serial(a_script_waiting_on_stdin_that_never_ends_is_stopped_at_its_deadline_());
}

#[test]
fn a_fifth_script_is_refused_at_once_while_four_spin() {
    serial(a_fifth_script_is_refused_at_once_while_four_spin_());
}

#[test]
fn a_read_from_a_stalled_backend_ends_at_the_deadline() {
    serial(a_read_from_a_stalled_backend_ends_at_the_deadline_());
}

#[test]
fn a_fifth_to_twentieth_request_gets_429_at_once_while_four_spin() {
    serial(a_fifth_to_twentieth_request_gets_429_at_once_while_four_spin_());
}

/// Runs `args` with a compiled script and a deadline, returning the report
/// and how long the run took (compilation excluded).
async fn timed(deadline: Duration, args: &[&str], stdin: Stdin) -> (vfsbox_host::Report, Duration) {
    let rt = runtime(limited(|l| l.deadline = deadline));
    let compiled = compiled(&rt).await;
    let permit = rt.try_admit(None).expect("slot");
    let mut spec = spec(vfs_of(small_tree()), rt.limits().clone(), args);
    spec.stdin = stdin;
    let start = Instant::now();
    let report = rt
        .run(permit, Script::Compiled(compiled), spec)
        .await
        .expect("runs");
    let took = start.elapsed();
    assert_slots_freed(&rt).await;
    (report, took)
}

fn assert_deadline(report: &vfsbox_host::Report, took: Duration, deadline: Duration) {
    assert_eq!(
        report.limit(),
        Some(Limit::Deadline),
        "{:?}",
        report.outcome
    );
    assert!(took >= deadline, "ended early: {took:?}");
    assert!(
        took < deadline + Duration::from_millis(100),
        "ended {:?} past the deadline",
        took - deadline
    );
}

async fn a_spinning_script_is_stopped_at_its_deadline_() {
    let deadline = Duration::from_millis(500);
    let (report, took) = timed(deadline, &["print-then-spin", "started"], Stdin::Empty).await;
    assert_deadline(&report, took, deadline);
    assert_eq!(
        report.stdout_text(),
        "started\n",
        "output before the end is kept"
    );
    match report.outcome {
        Outcome::BudgetExceeded { used, allowed, .. } => {
            assert_eq!(allowed, 500);
            assert!(used >= 500, "{used}");
        }
        other => panic!("{other:?}"),
    }
}

async fn a_script_asleep_in_a_host_call_is_stopped_at_its_deadline_() {
    let deadline = Duration::from_millis(500);
    let (report, took) = timed(deadline, &["sleep", "60000"], Stdin::Empty).await;
    assert_deadline(&report, took, deadline);
    assert_eq!(report.stdout_text(), "sleeping\n");
}

async fn a_script_waiting_on_stdin_that_never_ends_is_stopped_at_its_deadline_() {
    let deadline = Duration::from_millis(500);
    let (mut writer, reader) = tokio::io::duplex(64);
    writer
        .write_all(b"partial input, no end")
        .await
        .expect("write");
    let stdin = Stdin::Stream(AsyncStdinStream::new(reader));
    let (report, took) = timed(deadline, &["stdin"], stdin).await;
    assert_deadline(&report, took, deadline);
    drop(writer);
}

async fn a_fifth_script_is_refused_at_once_while_four_spin_() {
    let rt = runtime(Limits {
        deadline: Duration::from_secs(2),
        fuel: u64::MAX,
        ..Limits::default()
    });
    let script = Script::Compiled(compiled(&rt).await);
    let mut runs = Vec::new();
    for _ in 0..4 {
        let permit = rt.try_admit(None).expect("one of four slots");
        let run = rt.run(
            permit,
            script.clone(),
            spec(vfs_of(small_tree()), rt.limits().clone(), &["spin"]),
        );
        runs.push(tokio::spawn(run));
    }
    assert_eq!(rt.live_scripts(), 4);
    // Let the four start spinning on every core.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..16 {
        let asked = Instant::now();
        let refused = rt.try_admit(None).expect_err("no fifth slot");
        let took = asked.elapsed();
        assert_eq!(refused, Busy::Process);
        assert!(
            took < Duration::from_millis(50),
            "the refusal took {took:?}"
        );
    }
    for run in runs {
        let report = run.await.expect("task").expect("run");
        assert_eq!(report.limit(), Some(Limit::Deadline));
    }
    assert_slots_freed(&rt).await;
    let report = run(&rt, &["ok"]).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
}

async fn a_read_from_a_stalled_backend_ends_at_the_deadline_() {
    let deadline = Duration::from_millis(400);
    let rt = runtime(Limits {
        deadline,
        ..limits()
    });
    let script = Script::Compiled(compiled(&rt).await);
    let tree = small_tree().faulty("slow.txt", "never", Fault::Stall);
    for args in [
        &["read", "/files/slow.txt"][..],
        &["grep", "x", "/files"][..],
    ] {
        let permit = rt.try_admit(None).expect("slot");
        let start = Instant::now();
        let report = rt
            .run(
                permit,
                script.clone(),
                spec(vfs_of(tree.clone()), rt.limits().clone(), args),
            )
            .await
            .expect("runs");
        let took = start.elapsed();
        assert_eq!(
            report.limit(),
            Some(Limit::Deadline),
            "{args:?}: {:?}",
            report.outcome
        );
        assert!(
            took >= deadline && took < deadline + Duration::from_millis(100),
            "{args:?} took {took:?}"
        );
        assert_slots_freed(&rt).await;
    }
}

async fn a_fifth_to_twentieth_request_gets_429_at_once_while_four_spin_() {
    let limits = limited(|l| {
        l.deadline = Duration::from_secs(4);
        l.fuel = u64::MAX;
    });
    let server = TestServer::anonymous(limits, vfs_of(small_tree()));
    let c = reqwest::Client::new();
    let spinners: Vec<_> = (0..4)
        .map(|_| {
            let c = c.clone();
            let url = run_url(&server, &["spin"]);
            tokio::spawn(async move {
                c.post(url)
                    .header("content-type", "application/wasm")
                    .body(misbehave())
                    .send()
                    .await
                    .expect("response")
                    .status()
            })
        })
        .collect();
    let metrics = server.url("/metrics");
    let start = Instant::now();
    while live_scripts(&c, &metrics).await < 4 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the four never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The four now saturate both cores. Fire sixteen more together.
    let extra: Vec<_> = (0..16)
        .map(|_| {
            let c = c.clone();
            let url = run_url(&server, &["ok"]);
            tokio::spawn(async move {
                let sent = Instant::now();
                let r = c
                    .post(url)
                    .header("content-type", "application/wasm")
                    .body(misbehave())
                    .send()
                    .await
                    .expect("response");
                let took = sent.elapsed();
                let retry = r
                    .headers()
                    .get("retry-after")
                    .map(|v| v.to_str().expect("ascii").to_owned());
                let (status, body) = json(r).await;
                (status, retry, body, took)
            })
        })
        .collect();
    let health = Instant::now();
    let r = c.get(server.url("/healthz")).send().await;
    let r = r.unwrap_or_else(|e| panic!("healthz: {e:?}"));
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        health.elapsed() < Duration::from_millis(500),
        "healthz took {:?}",
        health.elapsed()
    );
    for task in extra {
        let (status, retry, body, took) = task.await.expect("task");
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(retry.as_deref(), Some("2"));
        assert_eq!(body["error"]["code"], "busy");
        assert!(took < Duration::from_millis(50), "a 429 took {took:?}");
    }
    for s in spinners {
        assert_eq!(
            s.await.expect("task"),
            StatusCode::PAYLOAD_TOO_LARGE,
            "spinners end at their deadline"
        );
    }
    assert_no_live_scripts(&c, &metrics).await;
    let r = c
        .post(run_url(&server, &["ok"]))
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("response");
    let status = r.status();
    assert_eq!(
        status,
        StatusCode::OK,
        "once the four end, a new request runs"
    );
    let text = c
        .get(&metrics)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert_eq!(
        metric(&text, "vfsbox_rejections_total{reason=\"busy\"}"),
        Some(16.0)
    );
    assert_eq!(
        metric(&text, "vfsbox_limit_hits_total{limit=\"deadline\"}"),
        Some(4.0)
    );
}
