//! A real S3-compatible server (`s3s-fs`) on 127.0.0.1, started by the test
//! that needs it, and an `S3Backend` talking to it over HTTP.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::{ObjectStore, PutPayload};
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;
use vfsbox_host::vfs::S3Backend;

use crate::server::ServeProcess;

const ACCESS_KEY: &str = "vfsbox-test-access";
const SECRET_KEY: &str = "vfsbox-test-secret";
const BUCKET: &str = "documents";

/// A running S3 server; stopped when dropped.
pub(crate) struct S3Server {
    pub(crate) addr: SocketAddr,
    _root: tempfile::TempDir,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl S3Server {
    /// Starts a server with one empty bucket, on the current runtime.
    pub(crate) async fn start() -> S3Server {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(root.path().join(BUCKET)).expect("bucket directory");
        let fs = s3s_fs::FileSystem::new(root.path()).expect("s3s-fs");
        let mut builder = S3ServiceBuilder::new(fs);
        builder.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        let service = builder.build();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        // Connections are tasks of the accept task's own set: stopping the
        // server closes them too, as a crashed store would.
        let accept = tokio::spawn(async move {
            let http = ConnBuilder::new(TokioExecutor::new());
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((socket, _)) = listener.accept().await {
                let conn = http
                    .serve_connection(TokioIo::new(socket), service.clone())
                    .into_owned();
                connections.spawn(async move {
                    let _ = conn.await;
                });
                while connections.try_join_next().is_some() {}
            }
        });
        S3Server {
            addr,
            _root: root,
            accept,
        }
    }

    /// A client of the bucket.
    pub(crate) fn store(&self) -> Arc<AmazonS3> {
        client(self.addr)
    }

    /// The access key and secret the server accepts, as environment
    /// variables for a `vfsbox` process.
    pub(crate) fn credentials_env(&self) -> [(&'static str, &'static str); 2] {
        [
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
        ]
    }

    /// The bucket's name.
    pub(crate) fn bucket(&self) -> &'static str {
        BUCKET
    }

    /// Uploads `files` under `prefix` and returns a backend serving it.
    pub(crate) async fn backend(&self, prefix: &str, files: &[(&str, &[u8])]) -> S3Backend {
        let store = self.store();
        for (path, bytes) in files {
            // The raw key, as any S3 client would write it (not
            // percent-encoded the way `Path::from` encodes odd characters).
            let key = object_store::path::Path::parse(format!("{prefix}/{path}")).expect("key");
            store
                .put(&key, PutPayload::from(bytes.to_vec()))
                .await
                .expect("upload");
        }
        S3Backend::with_store(store, prefix)
    }
}

/// A mount configured in `vfsbox.toml` (`S3Backend::new`, credentials from
/// the environment) serves its prefix, odd key names included, through the
/// real binary, and neither the S3 secret nor the tenant's key is logged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_s3_mount_serves_its_prefix_through_the_service() {
    const KEY: &str = "tenant-key-3f1c9a";
    let server = S3Server::start().await;
    let docs: &[(&str, &[u8])] = &[
        ("handbook.md", b"# Handbook\n"),
        ("notes/q3 #draft~1%.md", b"draft notes\n"),
    ];
    server.backend("acme/docs", docs).await;
    server
        .backend("acme/private", &[("secret.txt", b"not yours")])
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("vfsbox.toml");
    let key_hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(KEY.as_bytes()));
    std::fs::write(
        &config,
        format!(
            "[[tenants]]\nname = \"acme\"\nkey_sha256 = [\"{key_hash}\"]\n\
             [[tenants.mounts]]\npath = \"/files\"\n\
             s3 = {{ bucket = \"{}\", prefix = \"acme/docs\", endpoint = \"http://{}\" }}\n",
            server.bucket(),
            server.addr
        ),
    )
    .expect("config");
    let mut env = server.credentials_env().to_vec();
    // Everything vfsbox and its HTTP layer log, requests and headers too.
    env.push((
        "VFSBOX_LOG",
        "vfsbox_host=trace,tower_http=trace,object_store=debug",
    ));
    let serve = ServeProcess::start_with_env(&["--config", config.to_str().expect("utf-8")], &env);
    let c = reqwest::Client::new();

    let r = c
        .get(serve.url("/v1/fs/files/notes/q3%20%23draft~1%25.md"))
        .bearer_auth(KEY)
        .header("x-request-id", "req-s3-download-1")
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    assert_eq!(r.bytes().await.expect("body").as_ref(), b"draft notes\n");

    let r = c
        .post(serve.url("/v1/sh"))
        .bearer_auth(KEY)
        .header("x-request-id", "req-s3-sh-1")
        .json(&serde_json::json!({"script": "find /files -type f; cat /files/handbook.md"}))
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    let body: serde_json::Value = r.json().await.expect("json");
    assert_eq!(
        body["stdout"], "/files/handbook.md\n/files/notes/q3 #draft~1%.md\n# Handbook\n",
        "{body}"
    );

    let r = c
        .get(serve.url("/v1/resolve?path=/files/../private/secret.txt"))
        .bearer_auth(KEY)
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), reqwest::StatusCode::NOT_FOUND);

    let log = serve.log_once(|log| {
        log.lines()
            .any(|l| l.contains("request_id=req-s3-sh-1") && l.contains("run ended"))
    });
    assert!(!log.contains(SECRET_KEY), "the S3 secret was logged: {log}");
    assert!(!log.contains(KEY), "the tenant's key was logged: {log}");
    // Each request's logs carry its id, the run's own (on the script
    // threads) included.
    let lines_of = |id: &str| -> Vec<&str> { log.lines().filter(|l| l.contains(id)).collect() };
    assert!(
        !lines_of("request_id=req-s3-download-1").is_empty(),
        "{log}"
    );
    let run = lines_of("request_id=req-s3-sh-1");
    assert!(run.iter().any(|l| l.contains("run started")), "{log}");
    assert!(run.iter().any(|l| l.contains("run ended")), "{log}");
}

/// A TCP proxy in front of an [`S3Server`] that stalls the body of every
/// `GET` after `limit` bytes of its response: the connection stays open and
/// nothing more arrives, as from a store that hangs mid-download. Other
/// requests (`HEAD`, listings) pass whole.
pub(crate) struct StallingProxy {
    pub(crate) addr: SocketAddr,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for StallingProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl StallingProxy {
    pub(crate) async fn start(upstream: SocketAddr, limit: usize) -> StallingProxy {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let accept = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(upstream).await else {
                    continue;
                };
                let (mut client_rx, mut client_tx) = client.into_split();
                let (mut server_rx, mut server_tx) = server.into_split();
                // Bytes of the current response that may still pass; the
                // client's requests set it (unbounded but for a GET).
                let allowance = Arc::new(AtomicUsize::new(usize::MAX));
                let requests = allowance.clone();
                connections.spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = client_rx.read(&mut buf).await {
                        if n == 0 || server_tx.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        let get = buf[..n].starts_with(b"GET ");
                        let next = if get { limit } else { usize::MAX };
                        requests.store(next, Ordering::SeqCst);
                    }
                });
                connections.spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = server_rx.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let left = allowance.load(Ordering::SeqCst);
                        let pass = n.min(left);
                        if client_tx.write_all(&buf[..pass]).await.is_err() {
                            break;
                        }
                        if left != usize::MAX {
                            allowance.store(left - pass, Ordering::SeqCst);
                        }
                        if pass < n {
                            // Stalled: hold the connection, send nothing.
                            std::future::pending::<()>().await;
                        }
                    }
                });
                while connections.try_join_next().is_some() {}
            }
        });
        StallingProxy { addr, accept }
    }

    /// A client of the bucket through this proxy.
    pub(crate) fn store(&self) -> Arc<AmazonS3> {
        client(self.addr)
    }
}

/// A client of the test bucket at `addr` (the server, or a proxy of it).
fn client(addr: SocketAddr) -> Arc<AmazonS3> {
    let store = AmazonS3Builder::new()
        .with_endpoint(format!("http://{addr}"))
        .with_allow_http(true)
        .with_bucket_name(BUCKET)
        .with_region("us-east-1")
        .with_access_key_id(ACCESS_KEY)
        .with_secret_access_key(SECRET_KEY)
        .with_virtual_hosted_style_request(false)
        // As a configured mount retries (this server answers a HEAD of a
        // directory with 500, where S3 says 404).
        .with_retry(S3Backend::retry_policy())
        .build()
        .expect("client");
    Arc::new(store)
}

/// A store that counts the listing requests made of it and the page size
/// each asked for.
#[derive(Debug)]
struct CountingStore {
    inner: Arc<AmazonS3>,
    pages: std::sync::Mutex<Vec<Option<usize>>>,
}

impl std::fmt::Display for CountingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CountingStore({})", self.inner)
    }
}

#[async_trait::async_trait]
impl object_store::list::PaginatedListStore for CountingStore {
    async fn list_paginated(
        &self,
        prefix: Option<&str>,
        opts: object_store::list::PaginatedListOptions,
    ) -> object_store::Result<object_store::list::PaginatedListResult> {
        self.pages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(opts.max_keys);
        self.inner.list_paginated(prefix, opts).await
    }
}

#[async_trait::async_trait]
impl ObjectStore for CountingStore {
    async fn put_opts(
        &self,
        location: &object_store::path::Path,
        payload: PutPayload,
        opts: object_store::PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &object_store::path::Path,
        opts: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &object_store::path::Path,
        options: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        self.inner.get_opts(location, options).await
    }
    async fn delete(&self, location: &object_store::path::Path) -> object_store::Result<()> {
        self.inner.delete(location).await
    }
    fn list(
        &self,
        prefix: Option<&object_store::path::Path>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&object_store::path::Path>,
    ) -> object_store::Result<object_store::ListResult> {
        panic!("a listing fetched every page under {prefix:?}")
    }
    async fn copy(
        &self,
        from: &object_store::path::Path,
        to: &object_store::path::Path,
    ) -> object_store::Result<()> {
        self.inner.copy(from, to).await
    }
    async fn copy_if_not_exists(
        &self,
        from: &object_store::path::Path,
        to: &object_store::path::Path,
    ) -> object_store::Result<()> {
        self.inner.copy_if_not_exists(from, to).await
    }
}

/// A listing of a directory of 1,500 keys stops one entry past the cap:
/// one request for a small cap, two pages for a cap past the first page,
/// and every page only when the cap is above them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_s3_listing_stops_after_the_listing_cap() {
    use futures::StreamExt;
    use vfsbox_host::vfs::Backend;
    let server = S3Server::start().await;
    let store = server.store();
    futures::stream::iter(0..1500)
        .map(|i| {
            let store = store.clone();
            async move {
                let key =
                    object_store::path::Path::parse(format!("big/dir/f{i:04}.txt")).expect("key");
                store
                    .put(&key, PutPayload::from_static(b"x"))
                    .await
                    .expect("put");
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
    let counting = Arc::new(CountingStore {
        inner: store,
        pages: std::sync::Mutex::default(),
    });
    let backend = S3Backend::with_store(counting.clone(), "big");
    let pages = |limit: usize| {
        let backend = backend.clone();
        let counting = counting.clone();
        async move {
            counting.pages.lock().expect("pages").clear();
            let listing = backend.list("dir", limit).await.expect("a listing");
            let pages = counting.pages.lock().expect("pages").clone();
            (listing, pages)
        }
    };
    let (listing, asked) = pages(10).await;
    assert_eq!((listing.entries.len(), listing.truncated), (10, true));
    assert_eq!(listing.entries[0].name, "f0000.txt");
    assert_eq!(asked, [Some(11)], "one request of one page past the cap");

    let (listing, asked) = pages(1200).await;
    assert_eq!((listing.entries.len(), listing.truncated), (1200, true));
    assert_eq!(listing.entries[1199].name, "f1199.txt");
    assert_eq!(asked.len(), 2, "{asked:?}");

    let (listing, asked) = pages(10_000).await;
    assert_eq!((listing.entries.len(), listing.truncated), (1500, false));
    assert_eq!(asked.len(), 2, "{asked:?}");
}
