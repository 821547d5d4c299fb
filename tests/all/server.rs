#![allow(dead_code)] // Shared by the `all` and `timing` test binaries; each uses part.

//! A vfsbox server on 127.0.0.1 for HTTP tests: in this process on a runtime
//! of its own (so tests can give tenants any filesystem, faulty backends
//! included), or the real `vfsbox serve` binary with a config file.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vfsbox_host::http::{AppState, Tenants, serve};
use vfsbox_host::runtime::RuntimeOptions;
use vfsbox_host::{AuditLog, Limits, Runtime, Vfs};

/// A server running in this process; stopped when dropped.
pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// Serves `tenants` with `limits` and `audit`.
    pub(crate) fn start(
        limits: Limits,
        audit: AuditLog,
        tenants: impl FnOnce(&Limits) -> Tenants,
    ) -> TestServer {
        let tenants = tenants(&limits);
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("server runtime");
            rt.block_on(async move {
                // Compiled code is cached on disk across tests, as across
                // processes in production.
                let options = RuntimeOptions {
                    compile_cache_dir: Some(
                        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled"),
                    ),
                    ..RuntimeOptions::default()
                };
                let runtime = Runtime::with_options(limits, audit, options).expect("runtime");
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                let state = AppState::new(runtime, tenants);
                state.warm_up().await.expect("the built-in shell compiles");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                serve(listener, state, async {
                    let _ = stopped.await;
                })
                .await
                .expect("serve");
            });
        });
        // `warm_up` compiles the built-in shell before the address is
        // sent: seconds from the disk cache, a minute or more for a cold
        // compile on a loaded machine, so the bound is generous.
        let addr = addr_rx
            .recv_timeout(Duration::from_secs(180))
            .expect("the server starts");
        TestServer {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// One tenant, `demo`, with no key, seeing `vfs`.
    pub(crate) fn anonymous(limits: Limits, vfs: Vfs) -> TestServer {
        TestServer::start(limits, AuditLog::disabled(), |l| {
            Tenants::anonymous("demo", vfs, l)
        })
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The real `vfsbox serve` process; killed when dropped.
pub(crate) struct ServeProcess {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    pub(crate) stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl ServeProcess {
    /// Starts `vfsbox serve` with these extra arguments on a free port.
    pub(crate) fn start(args: &[&str]) -> ServeProcess {
        ServeProcess::start_with_env(args, &[])
    }

    /// [`ServeProcess::start`], with these environment variables too.
    pub(crate) fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> ServeProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vfsbox"))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("VFSBOX_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("vfsbox serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("vfsbox: listening on http://") {
                    let _ = addr_tx.send(addr.parse::<SocketAddr>().expect("address"));
                }
                let mut log = sink.lock().unwrap_or_else(|e| e.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        // The host compiles the built-in shell before it announces its
        // address: seconds on an idle machine with a fresh compile cache,
        // far longer on a loaded one, so the bound is generous.
        let addr = addr_rx
            .recv_timeout(Duration::from_secs(180))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("vfsbox serve did not start: {}", log.lock().expect("log"))
            });
        ServeProcess {
            child,
            addr,
            stderr: log,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Waits until `/readyz` answers 200: the host has compiled (or loaded)
    /// the built-in Python it prepares in the background as it starts.
    /// Generous, for a cold compile on a loaded machine.
    pub(crate) fn wait_ready(&self) {
        use std::io::{Read, Write};
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let mut status = String::new();
            if let Ok(mut s) = std::net::TcpStream::connect(self.addr) {
                let _ = s.write_all(
                    b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                );
                let _ = s.read_to_string(&mut status);
            }
            if status.starts_with("HTTP/1.1 200") {
                return;
            }
            assert!(Instant::now() < deadline, "never ready: {status}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The log so far, once `ready` holds of it or 10 s have passed: the
    /// lines a request logged may reach the test after its response.
    pub(crate) fn log_once(&self, ready: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let log = self
                .stderr
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if ready(&log) || start.elapsed() > Duration::from_secs(10) {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM and waits (at most `within`) for the process to exit.
    pub(crate) fn terminate(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let start = Instant::now();
        while start.elapsed() < within {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `vfsbox_live_scripts` from `/metrics`.
pub(crate) async fn live_scripts(client: &reqwest::Client, metrics_url: &str) -> u64 {
    let text = client
        .get(metrics_url)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    metric(&text, "vfsbox_live_scripts").expect("the live-scripts gauge") as u64
}

/// The value of one sample line of Prometheus text.
pub(crate) fn metric(text: &str, sample: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(sample)?.strip_prefix(' ')?.parse().ok())
}

/// Waits until `/metrics` shows no live script, or fails after a bound.
pub(crate) async fn assert_no_live_scripts(client: &reqwest::Client, metrics_url: &str) {
    let start = Instant::now();
    loop {
        let live = live_scripts(client, metrics_url).await;
        if live == 0 {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{live} scripts still live"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
