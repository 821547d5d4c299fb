//! A fleet behind nginx (Debian's, running the shipped
//! `deploy/nginx/nginx.conf`): requests per second and p99 through nginx
//! with one host and with three, in the same run, and the `429` latency
//! when every host is full.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};

use crate::report::{Table, median_p99, met, ms};
use crate::service::{Server, config, wait_live, wait_ready, wrk_url};

/// nginx over `hosts`, with the shipped config; stopped when dropped.
struct Nginx {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Nginx {
    fn start(hosts: &[&Server]) -> Nginx {
        let shipped = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/nginx/nginx.conf"),
        )
        .expect("deploy/nginx/nginx.conf");
        let begin = shipped.find("# BEGIN hosts").expect("BEGIN hosts");
        let end = shipped.find("# END hosts").expect("END hosts");
        let servers: String = hosts
            .iter()
            .map(|h| format!("server {} max_fails=0;\n        ", h.addr()))
            .collect();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let conf = format!("{}{servers}{}", &shipped[..begin], &shipped[end..])
            .replace("listen 127.0.0.1:8080;", &format!("listen {addr};"));
        let dir = tempfile::tempdir().expect("tempdir");
        let path: PathBuf = dir.path().join("nginx.conf");
        std::fs::write(&path, conf).expect("nginx.conf");
        std::fs::create_dir(dir.path().join("logs")).expect("logs");
        let child = Command::new("/usr/sbin/nginx")
            .arg("-p")
            .arg(dir.path())
            .args(["-e", "stderr", "-g", "daemon off;", "-c"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx runs (bench/run installs it)");
        let start = Instant::now();
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "nginx never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx {
            child,
            addr,
            _dir: dir,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The rows of the fleet section.
pub(crate) async fn fleet(t: &mut Table) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(
        dir.path(),
        "deadline = \"60s\"\nfuel = 1000000000000000",
        None,
    );
    let hosts: Vec<Server> = (0..3).map(|_| Server::vfsbox(Some(&config))).collect();
    let c = Client::new();
    for host in &hosts {
        wait_ready(&c, host).await;
    }
    let sh = tempfile::NamedTempFile::new().expect("wrk script");
    std::fs::write(
        sh.path(),
        "wrk.method = 'POST'\nwrk.body = '{\"script\": \"echo hi\"}'\nwrk.headers['content-type'] = 'application/json'\nwrk.headers['authorization'] = 'Bearer bench'\n",
    )
    .expect("write the wrk script");
    let dur = Duration::from_secs(3);
    // The two fleets take turns, three rounds each; the round of median
    // throughput of each is reported.
    let one = Nginx::start(&[&hosts[0]]);
    let three = Nginx::start(&hosts.iter().collect::<Vec<_>>());
    let (mut ones, mut threes) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        ones.push(wrk_url(dur, &one.url("/v1/sh"), Some(sh.path()), 4));
        threes.push(wrk_url(dur, &three.url("/v1/sh"), Some(sh.path()), 12));
    }
    let median = |mut rounds: Vec<(f64, Duration, Duration)>| {
        rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
        rounds[rounds.len() / 2]
    };
    let (one_rps, _, one_p99) = median(ones);
    let (three_rps, _, three_p99) = median(threes);
    t.row(
        "`sh` (`echo hi`) through nginx (the shipped config), `wrk` at 4 connections per host (median of 3 rounds of 3 s; 2 cores for nginx, the hosts and `wrk`)",
        format!("3 hosts, 12 connections: {three_rps:.0} req/s, p99 {}", ms(three_p99)),
        format!("1 host, 4 connections: {one_rps:.0} req/s, p99 {}", ms(one_p99)),
        format!("{:.2}× the requests per second", three_rps / one_rps),
        "—".to_owned(),
    );
    drop(one);

    // Every host full: four CPU-bound scripts each; the 429 comes back
    // after nginx has asked all three.
    let misbehave = std::fs::read(vfsbox_test_artifacts::MISBEHAVE).expect("misbehave.wasm");
    let mut spinners = Vec::new();
    for host in &hosts {
        for _ in 0..4 {
            let req = c
                .post(host.url("/v1/runs?arg=spin"))
                .bearer_auth("bench")
                .header("content-type", "application/wasm")
                .body(misbehave.clone());
            spinners.push(tokio::spawn(req.send()));
        }
    }
    for host in &hosts {
        wait_live(&c, host, 4).await;
    }
    let mut rounds = Vec::new();
    for _ in 0..3 {
        let mut samples = Vec::new();
        for _ in 0..200 {
            let start = Instant::now();
            let r = c
                .post(three.url("/v1/sh"))
                .bearer_auth("bench")
                .header("content-type", "application/json")
                .body(r#"{"script": "echo hi"}"#)
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
        "429 through nginx when all 3 hosts are full (12 CPU-bound scripts on 2 cores), 200 requests (median of 3 rounds)",
        format!("p50 {}, p99 {}", ms(p50), ms(p99)),
        "—".to_owned(),
        "—".to_owned(),
        format!("p99 ≤ 20 ms: {}", met(p99 <= Duration::from_millis(20))),
    );
    drop(three);
    drop(hosts);
    for s in spinners {
        let _ = s.await;
    }
}
