//! A fleet: several real `vfsbox serve` processes on loopback behind nginx
//! running the shipped `deploy/nginx/nginx.conf` (Debian's nginx; `.ci/run`
//! installs it). Each host keeps its own gate; the balancer routes around a
//! full host (`429`) and a draining one (`503`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use object_store::ObjectStore;
use reqwest::StatusCode;
use serde_json::Value;

use crate::common::{misbehave, python_package, system_tool};
use crate::server::{ServeProcess, metric};

const KEY: &str = "fleet-key";

/// A balancer (nginx, HAProxy) running a shipped config over the hosts;
/// stopped when dropped.
struct Balancer {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Balancer {
    /// Starts `cmd`, which listens on `addr` with its files in `dir`.
    fn spawn(mut cmd: Command, addr: SocketAddr, dir: tempfile::TempDir) -> Balancer {
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the balancer starts");
        let start = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the balancer never listened on {addr}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Balancer {
            child,
            addr,
            _dir: dir,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A shipped config (`deploy/<file>`) with the lines between its
/// `# BEGIN hosts` and `# END hosts` markers replaced by `servers`.
fn with_hosts(file: &str, servers: &str) -> String {
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../deploy")
            .join(file),
    )
    .unwrap_or_else(|e| panic!("deploy/{file}: {e}"));
    let begin = shipped.find("# BEGIN hosts").expect("a BEGIN hosts marker");
    let end = shipped.find("# END hosts").expect("an END hosts marker");
    format!("{}{servers}{}", &shipped[..begin], &shipped[end..])
}

fn nginx_binary() -> Option<PathBuf> {
    system_tool(&["/usr/sbin/nginx", "/usr/local/sbin/nginx"], "nginx")
}

/// A port free now, for a program that takes its address from a file.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The shipped nginx config with its hosts and listen address replaced.
fn nginx_config(hosts: &[SocketAddr], listen: SocketAddr) -> String {
    let servers: String = hosts
        .iter()
        .map(|h| format!("server {h} max_fails=0;\n        "))
        .collect();
    let config = with_hosts("nginx/nginx.conf", &servers);
    assert!(
        config.contains("listen 127.0.0.1:8080;"),
        "the shipped listen line"
    );
    config.replace("listen 127.0.0.1:8080;", &format!("listen {listen};"))
}

/// nginx running the shipped config over `hosts`.
fn nginx(binary: &Path, hosts: &[SocketAddr]) -> Balancer {
    let dir = tempfile::tempdir().expect("tempdir");
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let conf = dir.path().join("nginx.conf");
    std::fs::write(&conf, nginx_config(hosts, addr)).expect("write nginx.conf");
    std::fs::create_dir(dir.path().join("logs")).expect("mkdir logs");
    let check = Command::new(binary)
        .arg("-p")
        .arg(dir.path())
        .args(["-e", "stderr", "-t", "-c"])
        .arg(&conf)
        .output()
        .expect("nginx -t runs");
    assert!(
        check.status.success(),
        "the shipped nginx.conf does not pass `nginx -t`: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let mut cmd = Command::new(binary);
    cmd.arg("-p")
        .arg(dir.path())
        .args(["-e", "stderr", "-g", "daemon off;", "-c"])
        .arg(&conf);
    Balancer::spawn(cmd, addr, dir)
}

/// `n` hosts of `config`, each ready.
fn hosts(config: &Path, n: usize) -> Vec<ServeProcess> {
    let hosts: Vec<ServeProcess> = (0..n).map(|_| fleet_host(config)).collect();
    for host in &hosts {
        host.wait_ready();
    }
    hosts
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// Starts `misbehave ARGS...` through `url` in the background.
fn spawn_run(
    c: &reqwest::Client,
    url: String,
    args: &[&str],
) -> tokio::task::JoinHandle<(StatusCode, Value)> {
    let query: Vec<String> = args.iter().map(|a| format!("arg={a}")).collect();
    let request = c
        .post(format!("{url}/v1/runs?{}", query.join("&")))
        .bearer_auth(KEY)
        .header("content-type", "application/wasm")
        .body(misbehave());
    tokio::spawn(async move {
        let r = request.send().await.expect("a run answers");
        let status = r.status();
        (status, r.json().await.expect("a JSON body"))
    })
}

/// A host's `/readyz` status and body.
async fn readiness(c: &reqwest::Client, host: &ServeProcess) -> (StatusCode, Value) {
    let r = c.get(host.url("/readyz")).send().await.expect("readyz");
    let status = r.status();
    (status, r.json().await.expect("JSON"))
}

/// Waits until the hosts' live scripts are `want` (in order), or fails.
async fn await_live(c: &reqwest::Client, hosts: &[&ServeProcess], want: &[u64]) {
    let start = Instant::now();
    loop {
        let mut live = Vec::new();
        for host in hosts {
            live.push(
                readiness(c, host).await.1["live_scripts"]
                    .as_u64()
                    .expect("live_scripts"),
            );
        }
        if live == want {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "live scripts per host {live:?}, expected {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn metrics(c: &reqwest::Client, host: &ServeProcess) -> String {
    c.get(host.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text")
}

/// Stores misbehave through `url` (a host, or the balancer): its id.
async fn store_script(c: &reqwest::Client, url: &str) -> String {
    let r = c
        .put(format!("{url}/v1/scripts"))
        .bearer_auth(KEY)
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("store");
    assert!(r.status().is_success(), "{}", r.status());
    r.json::<Value>().await.expect("JSON")["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

/// Starts stored script `id` with `args` through `url` in the background.
fn spawn_stored(
    c: &reqwest::Client,
    url: &str,
    id: &str,
    args: &[&str],
) -> tokio::task::JoinHandle<(StatusCode, Value)> {
    let request = c
        .post(format!("{url}/v1/scripts/{id}/runs"))
        .bearer_auth(KEY)
        .json(&serde_json::json!({ "args": args }));
    tokio::spawn(async move {
        let r = request.send().await.expect("a run answers");
        let status = r.status();
        (status, r.json().await.expect("a JSON body"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twelve_long_scripts_fill_three_hosts_behind_nginx_and_the_thirteenth_gets_429() {
    let Some(binary) = nginx_binary() else { return };
    let moto = Moto::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = fleet_config(dir.path(), &moto);
    let fleet = hosts(&config, 3);
    let nginx = nginx(&binary, &fleet.iter().map(|h| h.addr).collect::<Vec<_>>());
    let c = client();

    // Stored through the balancer (so on one host, and in the bucket), run
    // twelve times through it: every host runs it, three of them fetching
    // it from the bucket.
    let id = store_script(&c, &nginx.url("")).await;
    let runs: Vec<_> = (0..12)
        .map(|_| spawn_stored(&c, &nginx.url(""), &id, &["sleep", "6000"]))
        .collect();
    // Each host runs four: a full host's 429 moved a run on to another.
    let all: Vec<&ServeProcess> = fleet.iter().collect();
    await_live(&c, &all, &[4, 4, 4]).await;

    let started = Instant::now();
    let r = c
        .post(nginx.url(&format!("/v1/scripts/{id}/runs")))
        .bearer_auth(KEY)
        .json(&serde_json::json!({ "args": ["ok"] }))
        .send()
        .await
        .expect("the thirteenth answers");
    let waited = started.elapsed();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        r.headers().get("retry-after").and_then(|v| v.to_str().ok()),
        Some("2")
    );
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], "busy", "{body}");
    // Refused at once by each host in turn, never queued behind the runs.
    assert!(waited < Duration::from_secs(3), "the 429 took {waited:?}");

    for run in runs {
        let (status, body) = run.await.expect("task");
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["stdout"], "sleeping\nwoke up\n");
    }
    // Every host refused the thirteenth (nginx tried them all), and every
    // host that did not compile the script loaded the compiled artifact
    // the one that stored it shared.
    let mut loaded = 0;
    for host in &fleet {
        let text = metrics(&c, host).await;
        let busy = metric(&text, "vfsbox_rejections_total{reason=\"busy\"}").expect("busy count");
        assert!(busy >= 1.0, "a host that never refused: {text}");
        assert_eq!(metric(&text, "vfsbox_live_scripts"), Some(0.0));
        assert_eq!(metric(&text, "vfsbox_free_slots"), Some(4.0));
        if shared(&text, "hit") >= 1.0 {
            loaded += 1;
        }
        assert_eq!(shared(&text, "rejected"), 0.0, "{text}");
    }
    assert_eq!(
        loaded, 2,
        "two hosts loaded the artifact the third compiled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_drained_with_sigterm_finishes_its_scripts_while_new_runs_go_to_the_others() {
    let Some(binary) = nginx_binary() else { return };
    let moto = Moto::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = fleet_config(dir.path(), &moto);
    let mut fleet = hosts(&config, 3);
    let nginx = nginx(&binary, &fleet.iter().map(|h| h.addr).collect::<Vec<_>>());
    let c = client();

    // Two long scripts on each host: least connections spreads them.
    let long: Vec<_> = (0..6)
        .map(|_| spawn_run(&c, nginx.url(""), &["sleep", "5000"]))
        .collect();
    {
        let all: Vec<&ServeProcess> = fleet.iter().collect();
        await_live(&c, &all, &[2, 2, 2]).await;
    }

    // SIGTERM the first host: it drains.
    let drained = fleet.remove(0);
    let pid = drained.child.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let start = Instant::now();
    loop {
        let (status, body) = readiness(&c, &drained).await;
        if status == StatusCode::SERVICE_UNAVAILABLE {
            assert_eq!(
                (body["ready"].as_bool(), body["draining"].as_bool()),
                (Some(false), Some(true)),
                "{body}"
            );
            assert_eq!(body["live_scripts"], 2, "its scripts still run: {body}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "never draining: {body}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A new run sent to it directly is refused with 503 and Retry-After...
    let r = c
        .post(drained.url("/v1/runs?arg=ok"))
        .bearer_auth(KEY)
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("a draining host answers");
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.headers().contains_key("retry-after"));
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], "draining");
    // ...and the runs sent through nginx meanwhile all run on the others.
    for _ in 0..8 {
        let (status, body) = spawn_run(&c, nginx.url(""), &["ok"]).await.expect("task");
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let text = metrics(&c, &drained).await;
    assert!(
        metric(&text, "vfsbox_rejections_total{reason=\"draining\"}").is_some_and(|n| n >= 1.0),
        "{text}"
    );

    // Nothing in flight was lost: the drained host's scripts finished.
    for run in long {
        let (status, body) = run.await.expect("task");
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["stdout"], "sleeping\nwoke up\n");
    }
    let mut drained = drained;
    let status = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = drained.child.try_wait() {
                return (status, drained);
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the drained host never exited"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let (status, drained) = status.await.expect("join");
    assert!(status.success(), "{}", drained.stderr.lock().expect("log"));
    // Once it is gone, nginx still finds a host for every run.
    for _ in 0..4 {
        let (status, body) = spawn_run(&c, nginx.url(""), &["ok"]).await.expect("task");
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

/// Sends `request` on `stream` and reads one response: its status line,
/// its headers (lowercased) and its body.
fn exchange(
    stream: &mut BufReader<TcpStream>,
    request: &[u8],
) -> (String, Vec<(String, String)>, Vec<u8>) {
    stream.get_mut().write_all(request).expect("send");
    let mut status = String::new();
    stream.read_line(&mut status).expect("status line");
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).expect("header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("a header");
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse().expect("a length"));
    let mut body = vec![0; length];
    stream.read_exact(&mut body).expect("body");
    (status.trim_end().to_owned(), headers, body)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn post(path: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {KEY}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_keeps_the_connection_when_the_unread_body_is_small() {
    let moto = Moto::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = fleet_config(dir.path(), &moto);
    let host = fleet_host(&config);
    let c = client();
    let runs: Vec<_> = (0..4)
        .map(|_| spawn_run(&c, host.url(""), &["sleep", "4000"]))
        .collect();
    await_live(&c, &[&host], &[4]).await;

    let addr = host.addr;
    tokio::task::spawn_blocking(move || {
        let mut stream = BufReader::new(TcpStream::connect(addr).expect("connect"));
        stream
            .get_ref()
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        // Three refusals of a run with a small, unread body, on one
        // connection: none closes it.
        let wasm = misbehave();
        let small = &wasm[..wasm.len().min(16 * 1024)];
        let sh = br#"{"script": "echo hi"}"#;
        for request in [
            post("/v1/runs?arg=ok", "application/wasm", small),
            post("/v1/sh", "application/json", sh),
            post("/v1/runs?arg=ok", "text/plain", small),
        ] {
            let (status, headers, body) = exchange(&mut stream, &request);
            assert!(
                status.starts_with("HTTP/1.1 429") || status.starts_with("HTTP/1.1 415"),
                "{status}: {}",
                String::from_utf8_lossy(&body)
            );
            assert_ne!(header(&headers, "connection"), Some("close"), "{status}");
        }
        let (status, _, _) = exchange(
            &mut stream,
            b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
        );
        assert!(status.starts_with("HTTP/1.1 200"), "still usable: {status}");
        // A large unread body is not drained: that refusal closes. (Only
        // its headers are sent: the answer comes before the body is read.)
        let headers_only = format!(
            "POST /v1/runs?arg=ok HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {KEY}\r\n\
             Content-Type: application/wasm\r\nContent-Length: {}\r\n\r\n",
            2 << 20
        );
        let (status, headers, _) = exchange(&mut stream, headers_only.as_bytes());
        assert!(status.starts_with("HTTP/1.1 429"), "{status}");
        assert_eq!(header(&headers, "connection"), Some("close"));
    })
    .await
    .expect("join");
    for run in runs {
        assert_eq!(run.await.expect("task").0, StatusCode::OK);
    }
}

/// `moto_server` (from PyPI; `.ci/run` installs it), an S3-compatible
/// store in its own process, with one bucket; killed when dropped.
struct Moto {
    child: Child,
    endpoint: String,
}

const BUCKET: &str = "fleet";

impl Moto {
    async fn start() -> Moto {
        python_package("moto.server, flask_cors", "moto[server]==5.2.1");
        let port = free_port();
        let child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server starts (python3 -m pip install --user 'moto[server]')");
        let endpoint = format!("http://127.0.0.1:{port}");
        let c = client();
        let start = Instant::now();
        loop {
            if let Ok(r) = c.put(format!("{endpoint}/{BUCKET}")).send().await
                && r.status().is_success()
            {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "moto_server never answered"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Moto { child, endpoint }
    }

    /// A client of the bucket, with the hosts' credentials (moto refuses
    /// anonymous reads).
    fn store(&self) -> object_store::aws::AmazonS3 {
        object_store::aws::AmazonS3Builder::new()
            .with_endpoint(&self.endpoint)
            .with_allow_http(true)
            .with_bucket_name(BUCKET)
            .with_region("us-east-1")
            .with_access_key_id("fleet")
            .with_secret_access_key("fleet-secret")
            .with_virtual_hosted_style_request(false)
            .build()
            .expect("a client of the bucket")
    }

    async fn put(&self, key: &str, bytes: Vec<u8>) {
        self.store()
            .put(&object_store::path::Path::from(key), bytes.into())
            .await
            .expect("put");
    }

    async fn get(&self, key: &str) -> Vec<u8> {
        self.store()
            .get(&object_store::path::Path::from(key))
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes")
            .to_vec()
    }

    /// The keys under `prefix`.
    async fn keys(&self, prefix: &str) -> Vec<String> {
        use futures::TryStreamExt;
        let prefix = object_store::path::Path::from(prefix);
        self.store()
            .list(Some(&prefix))
            .map_ok(|meta| meta.location.to_string())
            .try_collect()
            .await
            .expect("list")
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A host of a fleet sharing `moto`'s bucket: stored scripts and compiled
/// artifacts in it, and an S3 mount of its `docs/` at `/docs`.
fn fleet_config(dir: &Path, moto: &Moto) -> PathBuf {
    let hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(KEY.as_bytes()));
    let endpoint = &moto.endpoint;
    let config = dir.join("fleet.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\ndrain_grace = \"20s\"\n[limits]\ndeadline = \"30s\"\n\
             [store]\ns3 = {{ bucket = \"{BUCKET}\", prefix = \"vfsbox\", endpoint = \"{endpoint}\" }}\n\
             [[tenants]]\nname = \"t\"\nkey_sha256 = [\"{hash}\"]\n\
             [[tenants.mounts]]\npath = \"/docs\"\ns3 = {{ bucket = \"{BUCKET}\", prefix = \"docs\", endpoint = \"{endpoint}\" }}\n"
        ),
    )
    .expect("config");
    config
}

const ARTIFACT_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn fleet_host(config: &Path) -> ServeProcess {
    ServeProcess::start_with_env(
        &["--config", config.to_str().expect("utf-8")],
        &[
            ("AWS_ACCESS_KEY_ID", "fleet"),
            ("AWS_SECRET_ACCESS_KEY", "fleet-secret"),
            ("VFSBOX_ARTIFACT_KEY", ARTIFACT_KEY),
        ],
    )
}

async fn run_stored(
    c: &reqwest::Client,
    host: &ServeProcess,
    id: &str,
    args: &[&str],
) -> (StatusCode, Value) {
    let r = c
        .post(host.url(&format!("/v1/scripts/{id}/runs")))
        .bearer_auth(KEY)
        .json(&serde_json::json!({ "args": args }))
        .send()
        .await
        .expect("a run answers");
    let status = r.status();
    (status, r.json().await.expect("JSON"))
}

fn shared(text: &str, result: &str) -> f64 {
    metric(
        text,
        &format!("vfsbox_shared_artifacts_total{{result=\"{result}\"}}"),
    )
    .unwrap_or_else(|| panic!("no shared-artifact {result} count: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_on_one_bucket_share_stored_scripts_and_authenticated_compiled_artifacts() {
    let mut moto = Moto::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = fleet_config(dir.path(), &moto);
    let c = client();
    moto.put("docs/a.txt", b"from the bucket\n".to_vec()).await;

    // Stored through one host...
    let first = fleet_host(&config);
    let r = c
        .put(first.url("/v1/scripts"))
        .bearer_auth(KEY)
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("store");
    assert_eq!(r.status(), StatusCode::CREATED);
    let id = r.json::<Value>().await.expect("JSON")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let hex = id.strip_prefix("sha256:").expect("sha256");
    let keys = moto.keys("vfsbox").await;
    assert!(
        keys.iter()
            .any(|k| k.starts_with("vfsbox/scripts/") && k.ends_with(hex)),
        "{keys:?}"
    );
    let artifact = keys
        .iter()
        .find(|k| k.starts_with("vfsbox/artifacts/") && k.ends_with(hex))
        .unwrap_or_else(|| panic!("no shared artifact: {keys:?}"))
        .clone();

    // ...runs through another, started fresh, which loads the artifact the
    // first compiled instead of compiling it.
    let second = fleet_host(&config);
    let (status, body) = run_stored(&c, &second, &id, &["read", "/docs/a.txt"]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["stdout"], "from the bucket\n", "{body}");
    let text = metrics(&c, &second).await;
    assert_eq!(
        (shared(&text, "hit"), shared(&text, "rejected")),
        (1.0, 0.0),
        "{text}"
    );

    // A tampered artifact in the bucket is refused, never loaded: the
    // script is compiled again and the artifact replaced.
    let mut forged = moto.get(&artifact).await;
    let middle = forged.len() / 2;
    forged[middle] ^= 0x55;
    moto.put(&artifact, forged.clone()).await;
    let third = fleet_host(&config);
    let (status, body) = run_stored(&c, &third, &id, &["ok"]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let text = metrics(&c, &third).await;
    assert_eq!(
        (shared(&text, "hit"), shared(&text, "rejected")),
        (0.0, 1.0),
        "{text}"
    );
    let replaced = moto.get(&artifact).await;
    assert_ne!(replaced, forged, "the forged artifact was replaced");

    // A script another tenant never stored is not found, whatever the
    // bucket holds for this one.
    let (status, _) = run_stored(&c, &third, &format!("sha256:{}", "0".repeat(64)), &["ok"]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The store stops mid-run: the scripts that needed it end with an
    // error, and every slot is free again.
    let waiting: Vec<_> = (0..2)
        .map(|_| {
            spawn_run(
                &c,
                first.url(""),
                &["sleep-then-read", "1500", "/docs/a.txt"],
            )
        })
        .collect();
    await_live(&c, &[&first], &[2]).await;
    moto.stop();
    let started = Instant::now();
    for run in waiting {
        let (status, body) = run.await.expect("task");
        assert_eq!(status, StatusCode::OK, "{body}");
        let out = body["stdout"].as_str().unwrap_or_default();
        assert!(
            out.starts_with("sleeping\nerror: ") && !out.contains("from the bucket"),
            "{body}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the runs hung: {:?}",
        started.elapsed()
    );
    await_live(&c, &[&first], &[0]).await;
    // Storing a script with the store down fails, and says why.
    let r = c
        .put(second.url("/v1/scripts"))
        .bearer_auth(KEY)
        .header("content-type", "application/wasm")
        .body(misbehave())
        .send()
        .await
        .expect("store");
    assert_eq!(r.status(), StatusCode::BAD_GATEWAY);
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], "unavailable", "{body}");
}

/// HAProxy running the shipped `deploy/haproxy/haproxy.cfg` over `hosts`
/// (with `retry-on 429` taken out for HAProxy before 3.1, which lacks it).
fn haproxy(binary: &Path, hosts: &[SocketAddr]) -> Balancer {
    let servers: String = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| format!("server host{i} {h}\n    "))
        .collect();
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut config = with_hosts("haproxy/haproxy.cfg", &servers)
        .replace("bind 127.0.0.1:8080", &format!("bind {addr}"));
    if crate::deploy::haproxy_version(binary) < (3, 1) {
        config = config.replace(" 429 503", " 503");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("haproxy.cfg");
    std::fs::write(&path, config).expect("write haproxy.cfg");
    let mut cmd = Command::new(binary);
    cmd.arg("-db").arg("-f").arg(&path);
    Balancer::spawn(cmd, addr, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn haproxy_with_the_shipped_config_sends_runs_around_a_draining_host() {
    let Some(binary) = system_tool(&["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"], "haproxy")
    else {
        return;
    };
    let moto = Moto::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = fleet_config(dir.path(), &moto);
    let mut fleet = hosts(&config, 2);
    let haproxy = haproxy(&binary, &fleet.iter().map(|h| h.addr).collect::<Vec<_>>());
    let url = haproxy.url("");
    let c = client();
    // Runs by a stored script's id: HAProxy resends a request only when
    // its body fits its buffer (tune.bufsize, 16 KiB), and such a run's
    // body is a few bytes of JSON.
    let id = store_script(&c, &fleet[1].url("")).await;
    // Both hosts pass HAProxy's checks of /readyz first.
    let start = Instant::now();
    let mut ran = 0;
    while ran < 4 {
        let (status, _) = spawn_stored(&c, &url, &id, &["ok"]).await.expect("task");
        if status == StatusCode::OK {
            ran += 1;
        } else {
            assert!(start.elapsed() < Duration::from_secs(30), "{status}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    // One host drains, holding a live script; every run sent through
    // HAProxy meanwhile runs on the other.
    let long = spawn_run(&c, fleet[0].url(""), &["sleep", "4000"]);
    await_live(&c, &[&fleet[0]], &[1]).await;
    let drained = fleet.remove(0);
    let pid = drained.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    let start = Instant::now();
    while readiness(&c, &drained).await.0 != StatusCode::SERVICE_UNAVAILABLE {
        assert!(start.elapsed() < Duration::from_secs(10), "never draining");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for _ in 0..10 {
        let (status, body) = spawn_stored(&c, &url, &id, &["ok"]).await.expect("task");
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = long.await.expect("task");
    assert_eq!(
        (status, &body["stdout"]),
        (StatusCode::OK, &Value::from("sleeping\nwoke up\n"))
    );
    let text = metrics(&c, &fleet[0]).await;
    assert!(
        metric(&text, "vfsbox_runs_total{outcome=\"exited\"}").is_some_and(|n| n >= 10.0),
        "{text}"
    );
}
