//! Measures against the real `vfsbox serve` (the release binary): request
//! overhead beside `wasmtime serve` and a process per request, the 429
//! under saturation, and the incident replayed.

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::Value;

use crate::report::{Table, median_p99, met, ms};

/// The release `vfsbox` binary: `VFSBOX_BIN`, as bench/run sets it, or
/// the one beside the harness in the target directory.
fn vfsbox_bin() -> std::path::PathBuf {
    let bin = std::env::var_os("VFSBOX_BIN")
        .map(std::path::PathBuf::from)
        .or_else(|| Some(std::env::current_exe().ok()?.parent()?.join("vfsbox")))
        .expect("where the vfsbox binary is");
    assert!(
        bin.is_file(),
        "{} is missing: build it with `cargo build --release -p vfsbox-host` (bench/run does)",
        bin.display()
    );
    bin
}

/// A server process, killed when dropped.
pub(crate) struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(
        mut cmd: Command,
        ready: impl Fn(&str) -> Option<SocketAddr> + Send + 'static,
    ) -> Server {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(addr) = ready(&line) {
                    let _ = tx.send(addr);
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the server listens");
        Server { child, addr }
    }

    pub(crate) fn vfsbox(config: Option<&std::path::Path>) -> Server {
        Server::vfsbox_with_env(config, &[])
    }

    /// [`Server::vfsbox`] with these environment variables too.
    pub(crate) fn vfsbox_with_env(
        config: Option<&std::path::Path>,
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Server {
        let mut cmd = Command::new(vfsbox_bin());
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .env("VFSBOX_LOG", "warn")
            .envs(env.iter().copied());
        if let Some(config) = config {
            cmd.arg("--config").arg(config);
        }
        Server::start(cmd, |line| {
            line.strip_prefix("vfsbox: listening on http://")?
                .parse()
                .ok()
        })
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// CPU time the server process has used so far, all its threads
    /// (live and ended) together: `utime + stime` of `/proc/<pid>/stat`.
    fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("the server's /proc/<pid>/stat");
        // The fields after the command name, which is in parentheses and
        // may hold anything: state is field 3, utime 14, stime 15.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .expect("a stat line")
            .1
            .split_whitespace()
            .collect();
        let ticks: u64 = [11, 12]
            .iter()
            .map(|&i| fields[i].parse::<u64>().expect("a tick count"))
            .sum();
        Duration::from_secs_f64(ticks as f64 / rustix::param::clock_ticks_per_second() as f64)
    }

    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `clients` loops issuing requests for `dur`: requests per second, p50,
/// p99.
async fn load<F, Fut>(clients: usize, dur: Duration, request: F) -> (f64, Duration, Duration)
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = bool> + Send,
{
    let end = Instant::now() + dur;
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let request = request.clone();
            tokio::spawn(async move {
                let mut samples = Vec::new();
                while Instant::now() < end {
                    let start = Instant::now();
                    assert!(request().await, "a request failed");
                    samples.push(start.elapsed());
                }
                samples
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("client"));
    }
    let n = all.len() as f64;
    let (p50, p99) = median_p99(all);
    (n / dur.as_secs_f64(), p50, p99)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Rounds of each load measurement; the median round is reported.
const ROUNDS: usize = 3;

/// The round of median throughput, with its latencies.
fn median_round(mut rounds: Vec<(f64, Duration, Duration)>) -> (f64, Duration, Duration) {
    rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    rounds[rounds.len() / 2]
}

/// One round of `wrk` against a server.
#[derive(Clone, Copy, Debug)]
struct Round {
    /// Requests per second.
    rps: f64,
    p50: Duration,
    p99: Duration,
    /// Cores the server kept busy on average: its CPU time over the
    /// round's.
    cores: f64,
}

impl Round {
    /// Requests per second per core the server used: the server's own
    /// cost of a request, whatever the client and the rest of the machine
    /// did meanwhile.
    fn per_core(&self) -> f64 {
        self.rps / self.cores
    }

    /// The round of median throughput per core.
    fn median(mut rounds: Vec<Round>) -> Round {
        rounds.sort_by(|a, b| a.per_core().total_cmp(&b.per_core()));
        rounds[rounds.len() / 2]
    }

    fn text(&self) -> String {
        format!(
            "{:.0} req/s on {:.2} cores: {:.0} req/s per core; p50 {}, p99 {}",
            self.rps,
            self.cores,
            self.per_core(),
            ms(self.p50),
            ms(self.p99)
        )
    }
}

/// `wrk` with 4 connections on 2 threads for `dur` against `path` of
/// `server` (a POST by `script` when given), and the CPU time the server
/// used meanwhile. Every answer must be a 2xx.
fn wrk(dur: Duration, server: &Server, path: &str, script: Option<&std::path::Path>) -> Round {
    let (cpu, start) = (server.cpu_time(), Instant::now());
    let (rps, p50, p99) = wrk_url(dur, &server.url(path), script, 4);
    let cores = (server.cpu_time() - cpu).as_secs_f64() / start.elapsed().as_secs_f64();
    Round {
        rps,
        p50,
        p99,
        cores,
    }
}

/// `wrk` with `connections` on 2 threads for `dur` against `url` (a POST
/// by `script` when given): requests per second, p50 and p99. Every answer
/// must be a 2xx.
pub(crate) fn wrk_url(
    dur: Duration,
    url: &str,
    script: Option<&std::path::Path>,
    connections: usize,
) -> (f64, Duration, Duration) {
    let mut cmd = Command::new("wrk");
    cmd.args(["-t2", &format!("-c{connections}"), "--latency"])
        .arg(format!("-d{}s", dur.as_secs()));
    if let Some(script) = script {
        cmd.arg("-s").arg(script);
    }
    let out = cmd
        .arg(url)
        .output()
        .expect("wrk runs (bench/run installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !text.contains("Non-2xx") && !text.contains("Socket errors"),
        "wrk against {url}: {text}"
    );
    let field = |prefix: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| panic!("no {prefix:?} in wrk's output: {text}"))
    };
    (
        field("Requests/sec:").parse().expect("requests per second"),
        wrk_duration(&field("50%")),
        wrk_duration(&field("99%")),
    )
}

/// A latency as `wrk` prints it: `712.00us`, `1.49ms`, `2.01s`.
fn wrk_duration(text: &str) -> Duration {
    let (number, scale) = [("us", 1e-6), ("ms", 1e-3), ("s", 1.0)]
        .iter()
        .find_map(|(unit, scale)| Some((text.strip_suffix(unit)?, *scale)))
        .unwrap_or_else(|| panic!("a wrk latency: {text:?}"));
    Duration::from_secs_f64(number.parse::<f64>().expect("a number") * scale)
}

/// `hello` over HTTP, with 4 clients; `wasmtime serve` and a `vfsbox run`
/// process per request side by side.
pub(crate) async fn request_overhead(t: &mut Table) {
    let dur = Duration::from_secs(3);
    let c = Client::new();
    let server = Server::vfsbox(None);
    let put = c
        .put(server.url("/v1/scripts"))
        .header("content-type", "application/wasm")
        .body(std::fs::read(vfsbox_test_artifacts::HELLO).expect("hello.wasm"))
        .send()
        .await
        .expect("upload");
    let id = put.json::<Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let path = format!("/v1/scripts/{id}/runs");
    let post = tempfile::NamedTempFile::new().expect("wrk script");
    std::fs::write(
        post.path(),
        "wrk.method = 'POST'\nwrk.body = '{}'\nwrk.headers['content-type'] = 'application/json'\n",
    )
    .expect("write the wrk script");
    let wasmtime = cfg!(feature = "peer").then(|| {
        let port = free_port();
        let mut cmd = Command::new(std::env::current_exe().expect("the harness"));
        cmd.args([
            crate::WASMTIME_SERVE,
            "--addr",
            &format!("127.0.0.1:{port}"),
            vfsbox_test_artifacts::HTTP_HELLO,
        ]);
        Server::start(cmd, move |line| {
            line.contains("Serving HTTP")
                .then(|| SocketAddr::from(([127, 0, 0, 1], port)))
        })
    });
    // Three rounds, the two servers taking turns, so that a noisy moment
    // of the machine falls on both; the medians are reported. The load
    // comes from `wrk`, another process with little work of its own per
    // request, so that the client's cost does not hide the servers'.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        ours.push(wrk(dur, &server, &path, Some(post.path())));
        if let Some(w) = &wasmtime {
            theirs.push(wrk(dur, w, "/", None));
        }
    }
    drop(server);
    drop(wasmtime);
    let ours = Round::median(ours);
    let peer = (!theirs.is_empty()).then(|| Round::median(theirs));
    let (peer_text, ratio, goal) = match peer {
        Some(theirs) => (
            format!("`wasmtime serve` (wasi:http hello): {}", theirs.text()),
            format!(
                "{:.2}× per core ({:.2}× in req/s)",
                ours.per_core() / theirs.per_core(),
                ours.rps / theirs.rps
            ),
            format!(
                "≥ 1× wasmtime serve, per core: {}",
                met(ours.per_core() >= theirs.per_core())
            ),
        ),
        None => (
            "`wasmtime serve` not built in (run bench/run, or `--features peer`)".to_owned(),
            "—".to_owned(),
            "not measured".to_owned(),
        ),
    };
    t.row(
        "`hello` over HTTP, stored script, 4 connections from `wrk` (median of 3 rounds of 3 s; per core: requests per CPU-second of the server process)",
        ours.text(),
        peer_text,
        ratio,
        goal,
    );

    let bin = vfsbox_bin();
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let bin = bin.clone();
        rounds.push(
            load(4, dur, move || {
                let bin = bin.clone();
                async move {
                    tokio::process::Command::new(&bin)
                        .args(["run", vfsbox_test_artifacts::HELLO])
                        .stdout(Stdio::null())
                        .status()
                        .await
                        .is_ok_and(|s| s.success())
                }
            })
            .await,
        );
    }
    let (rps, p50, p99) = median_round(rounds);
    t.row(
        "… `vfsbox run` as a process per request, 4 at a time",
        format!("{rps:.0} req/s, p50 {}, p99 {}", ms(p50), ms(p99)),
        format!("service: {:.0} req/s", ours.rps),
        format!("{:.1}× slower", ours.rps / rps),
        "—".to_owned(),
    );
}

pub(crate) fn config(
    dir: &std::path::Path,
    limits: &str,
    docs: Option<&std::path::Path>,
) -> std::path::PathBuf {
    let mount = match docs {
        Some(d) => format!(
            "[[tenants.mounts]]\npath = \"/files\"\nlocal = {{ dir = \"{}\" }}\n",
            d.display()
        ),
        None => String::new(),
    };
    let key = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"bench"));
    let path = dir.join("vfsbox.toml");
    std::fs::write(
        &path,
        format!(
            "[limits]\n{limits}\n[[tenants]]\nname = \"bench\"\nkey_sha256 = [\"{key}\"]\n{mount}"
        ),
    )
    .expect("config");
    path
}

/// Waits until the server's `/readyz` answers 200.
pub(crate) async fn wait_ready(c: &Client, server: &Server) {
    let start = Instant::now();
    while !c
        .get(server.url("/readyz"))
        .send()
        .await
        .is_ok_and(|r| r.status() == StatusCode::OK)
    {
        assert!(start.elapsed() < Duration::from_secs(300), "never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) async fn wait_live(c: &Client, server: &Server, n: u64) {
    let start = Instant::now();
    loop {
        let text = c
            .get(server.url("/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        let live = text
            .lines()
            .find_map(|l| l.strip_prefix("vfsbox_live_scripts "))
            .and_then(|v| v.parse::<u64>().ok());
        if live == Some(n) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "never {n} live");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Four CPU-bound scripts running; the latency of the 429 for 200 more.
pub(crate) async fn admission(t: &mut Table) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::vfsbox(Some(&config(
        dir.path(),
        "deadline = \"60s\"\nfuel = 1000000000000000",
        None,
    )));
    let c = Client::new();
    let misbehave = std::fs::read(vfsbox_test_artifacts::MISBEHAVE).expect("misbehave.wasm");
    let spinners: Vec<_> = (0..4)
        .map(|_| {
            let req = c
                .post(server.url("/v1/runs?arg=spin"))
                .bearer_auth("bench")
                .header("content-type", "application/wasm")
                .body(misbehave.clone());
            tokio::spawn(req.send())
        })
        .collect();
    wait_live(&c, &server, 4).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Three rounds of 200; the round of median p99 is reported.
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let mut samples = Vec::new();
        for _ in 0..200 {
            let start = Instant::now();
            let r = c
                .post(server.url("/v1/runs?arg=ok"))
                .bearer_auth("bench")
                .header("content-type", "application/wasm")
                .body("x")
                .send()
                .await
                .expect("response");
            samples.push(start.elapsed());
            assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        }
        rounds.push(median_p99(samples));
    }
    rounds.sort_by_key(|&(_, p99)| p99);
    let (p50, p99) = rounds[rounds.len() / 2];
    t.row(
        "429 latency, 200 requests while 4 CPU-bound scripts run on 2 cores (median of 3 rounds)",
        format!("p50 {}, p99 {}", ms(p50), ms(p99)),
        "—".to_owned(),
        "—".to_owned(),
        format!("p99 ≤ 10 ms: {}", met(p99 <= Duration::from_millis(10))),
    );
    drop(server);
    for s in spinners {
        let _ = s.await;
    }
}

/// 20 scripts at once, each holding every document and a gibibyte more.
pub(crate) async fn incident(t: &mut Table) {
    let misbehave = std::fs::read(vfsbox_test_artifacts::MISBEHAVE).expect("misbehave.wasm");
    replay_incident(
        t,
        "the incident: 20 scripts at once, each holding every document (75 MB) and 1 GiB more",
        None,
        move |c, server| {
            c.post(server.url("/v1/runs?arg=hog&arg=/files"))
                .header("content-type", "application/wasm")
                .body(misbehave.clone())
        },
    )
    .await;
}

/// The incident replayed with Python scripts through `POST /v1/py`: each
/// reads every document into a list, then asks for a gibibyte more. The
/// baseline is measured after the interpreter is loaded (by a first run).
pub(crate) async fn python_incident(t: &mut Table) {
    const HOG: &str = "import os\nkept = [open(os.path.join('/files', n), 'rb').read() for n in sorted(os.listdir('/files'))]\nkept.append(bytearray(2**30))\nprint(len(kept))";
    replay_incident(
        t,
        "the incident in Python: 20 `POST /v1/py` at once, each holding every document (75 MB) and 1 GiB more",
        Some("print(1)"),
        |c, server| {
            c.post(server.url("/v1/py"))
                .json(&serde_json::json!({ "code": HOG }))
        },
    )
    .await;
}

/// 20 requests at once, as `request` makes them, against a ready host
/// serving 300 documents of 256 KiB: how high its memory went, who ran and
/// who got `429`, whether it survived. `warm` is Python code run once
/// first, so that the baseline includes an instantiated interpreter.
async fn replay_incident(
    t: &mut Table,
    what: &str,
    warm: Option<&str>,
    request: impl Fn(&Client, &Server) -> reqwest::RequestBuilder,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).expect("mkdir");
    for i in 0..300 {
        std::fs::write(
            docs.join(format!("doc{i:03}.txt")),
            vec![b'a' + (i % 26) as u8; 256 << 10],
        )
        .expect("write");
    }
    let server = Server::vfsbox(Some(&config(dir.path(), "deadline = \"20s\"", Some(&docs))));
    let c = Client::new();
    // A balancer sends work to a host once it is ready: by then it has
    // loaded the built-in Python, which is part of its baseline.
    wait_ready(&c, &server).await;
    if let Some(code) = warm {
        let r = c
            .post(server.url("/v1/py"))
            .bearer_auth("bench")
            .json(&serde_json::json!({ "code": code }))
            .send()
            .await
            .expect("the warm-up run");
        assert_eq!(r.status(), StatusCode::OK, "the warm-up run");
    }
    let baseline = server.rss();
    let peak = Arc::new(AtomicU64::new(baseline));
    let done = Arc::new(AtomicBool::new(false));
    let pid = server.child.id();
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let status =
                    std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
                let rss = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
                    .unwrap_or(0)
                    * 1024;
                peak.fetch_max(rss, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let runs: Vec<_> = (0..20)
        .map(|_| {
            let req = request(&c, &server).bearer_auth("bench");
            tokio::spawn(async move {
                // A server that died answers nothing: counted, not fatal.
                let r = req.send().await.ok()?;
                let status = r.status();
                let body: Value = r.json().await.unwrap_or(Value::Null);
                Some((
                    status,
                    body["error"]["limit"].as_str().unwrap_or("").to_owned(),
                ))
            })
        })
        .collect();
    let mut ran = 0;
    let mut refused = 0;
    let mut unanswered = 0;
    let mut limits = std::collections::BTreeMap::<String, u32>::new();
    for r in runs {
        match r.await.expect("task") {
            None => unanswered += 1,
            Some((StatusCode::TOO_MANY_REQUESTS, _)) => refused += 1,
            Some((_, limit)) => {
                ran += 1;
                *limits.entry(limit).or_default() += 1;
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");
    let alive = c
        .get(server.url("/healthz"))
        .send()
        .await
        .is_ok_and(|r| r.status() == StatusCode::OK);
    let peak = peak.load(Ordering::Relaxed);
    // The bound: four stores at the memory cap, and the process's own
    // baseline once ready (128 MiB allowed, or what was measured, with the
    // interpreter's compiled code loaded, whichever is more).
    let allowed_baseline = (128u64 << 20).max(baseline);
    let bound = ((4u64 * 64) << 20) + allowed_baseline;
    t.row(
        what,
        format!(
            "peak RSS {} MiB (baseline {} MiB); {ran} ran (ended by {limits:?}), {refused} got 429, {unanswered} unanswered; process {}",
            peak >> 20,
            baseline >> 20,
            if alive { "alive" } else { "**died**" }
        ),
        "—".to_owned(),
        "—".to_owned(),
        format!(
            "≤ 4 × 64 MiB + {} MiB = {} MiB, no crash: {}",
            allowed_baseline >> 20,
            bound >> 20,
            met(alive && unanswered == 0 && peak <= bound)
        ),
    );
}

/// The same `sh` script through `POST /v1/sh` and through an MCP
/// `tools/call` on `/mcp` (stateless streamable HTTP), turn by turn.
pub(crate) async fn mcp_overhead(t: &mut Table) {
    const SCRIPT: &str = "grep -rl refund /files | head -3";
    let dur = Duration::from_secs(3);
    let server = Server::vfsbox(None);
    let lua = |body: &str, accept: &str| {
        let f = tempfile::NamedTempFile::new().expect("wrk script");
        std::fs::write(
            f.path(),
            format!(
                "wrk.method = 'POST'\nwrk.body = '{body}'\nwrk.headers['content-type'] = 'application/json'\nwrk.headers['accept'] = '{accept}'\n"
            ),
        )
        .expect("write the wrk script");
        f
    };
    let sh = lua(
        &serde_json::json!({ "script": SCRIPT }).to_string(),
        "application/json",
    );
    let mcp = lua(
        &serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "sh", "arguments": {"script": SCRIPT}}
        })
        .to_string(),
        "application/json, text/event-stream",
    );
    let (mut direct, mut over_mcp) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        direct.push(wrk(dur, &server, "/v1/sh", Some(sh.path())));
        over_mcp.push(wrk(dur, &server, "/mcp", Some(mcp.path())));
    }
    drop(server);
    let (direct, over_mcp) = (Round::median(direct), Round::median(over_mcp));
    t.row(
        "`sh` (`grep -rl refund /files | head -3`) as an MCP `tools/call` on `/mcp`, 4 connections from `wrk` (median of 3 rounds of 3 s)",
        over_mcp.text(),
        format!("`POST /v1/sh`, same script: {}", direct.text()),
        format!("{:.2}× the requests/s of `POST /v1/sh`", over_mcp.rps / direct.rps),
        format!("≥ 0.8× `POST /v1/sh`: {}", met(over_mcp.rps >= 0.8 * direct.rps)),
    );
}
