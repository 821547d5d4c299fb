//! A real S3-compatible server (`s3s-fs`) on 127.0.0.1, started by the test
//! that needs it, and an `S3Backend` talking to it over HTTP.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStore, PutPayload};
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;
use vfsbox_host::vfs::S3Backend;

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
        let accept = tokio::spawn(async move {
            let http = ConnBuilder::new(TokioExecutor::new());
            while let Ok((socket, _)) = listener.accept().await {
                let conn = http
                    .serve_connection(TokioIo::new(socket), service.clone())
                    .into_owned();
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
        });
        S3Server {
            addr,
            _root: root,
            accept,
        }
    }

    /// A client of the bucket.
    pub(crate) fn store(&self) -> Arc<dyn ObjectStore> {
        let store = AmazonS3Builder::new()
            .with_endpoint(format!("http://{}", self.addr))
            .with_allow_http(true)
            .with_bucket_name(BUCKET)
            .with_region("us-east-1")
            .with_access_key_id(ACCESS_KEY)
            .with_secret_access_key(SECRET_KEY)
            .with_virtual_hosted_style_request(false)
            .build()
            .expect("client");
        Arc::new(store)
    }

    /// Uploads `files` under `prefix` and returns a backend serving it.
    pub(crate) async fn backend(&self, prefix: &str, files: &[(&str, &[u8])]) -> S3Backend {
        let store = self.store();
        for (path, bytes) in files {
            let key = object_store::path::Path::from(format!("{prefix}/{path}"));
            store
                .put(&key, PutPayload::from(bytes.to_vec()))
                .await
                .expect("upload");
        }
        S3Backend::with_store(store, prefix)
    }
}
