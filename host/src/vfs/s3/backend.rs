//! The S3 backend: a bucket (or a prefix of one) read through the
//! `object_store` crate.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path;
use object_store::{ClientOptions, GetOptions, GetRange, ObjectStore, RetryConfig};

use super::S3Config;
use crate::vfs::backend::{Backend, ByteStream, Entry, FsError, Kind, Listing, Meta, clamp};

/// What a mount needs of its store: objects, and listings a page at a
/// time (so that a listing stops at the cap instead of fetching every page
/// under a prefix of a million keys).
pub trait Store: ObjectStore + PaginatedListStore {}

impl<T: ObjectStore + PaginatedListStore> Store for T {}

/// The most keys one listing request asks the store for (S3's own page
/// size).
const PAGE_KEYS: usize = 1000;

/// A bucket (or a prefix of one) served as a directory tree.
#[derive(Debug, Clone)]
pub struct S3Backend {
    store: Arc<dyn Store>,
    prefix: Vec<String>,
}

impl S3Backend {
    /// Connects to the store described by `config`, with credentials from
    /// the environment.
    pub fn new(config: &S3Config) -> Result<S3Backend, String> {
        Ok(S3Backend::with_store(
            S3Backend::client(config)?,
            &config.prefix,
        ))
    }

    /// A client of the bucket of `config`, with credentials from the
    /// environment, this module's timeouts and retries.
    pub fn client(config: &S3Config) -> Result<Arc<AmazonS3>, String> {
        let mut b = AmazonS3Builder::from_env()
            .with_bucket_name(&config.bucket)
            .with_region(&config.region)
            .with_retry(S3Backend::retry_policy())
            .with_client_options(S3Backend::client_options());
        if let Some(endpoint) = &config.endpoint {
            b = b
                .with_endpoint(endpoint)
                .with_allow_http(endpoint.starts_with("http://"))
                .with_virtual_hosted_style_request(false);
        }
        let store = b.build().map_err(|e| format!("bad S3 settings: {e}"))?;
        Ok(Arc::new(store))
    }

    /// How a mount's client retries a failed request: a store that is down
    /// (or that answers 500 where S3 answers 404, as some do for a HEAD of
    /// a "directory") answers a script within seconds, not after the
    /// client's default three minutes of retries.
    pub fn retry_policy() -> RetryConfig {
        RetryConfig {
            max_retries: 3,
            retry_timeout: Duration::from_secs(10),
            ..RetryConfig::default()
        }
    }

    /// How long one request to the store may take: connecting (a store
    /// that is down fails in seconds), and the whole request. A stalled read
    /// ends sooner still, at the script's deadline.
    pub fn client_options() -> ClientOptions {
        ClientOptions::new()
            .with_connect_timeout(Duration::from_secs(2))
            .with_timeout(Duration::from_secs(30))
    }

    /// Serves `prefix` of an object store built elsewhere.
    pub fn with_store(store: Arc<dyn Store>, prefix: &str) -> S3Backend {
        S3Backend {
            store,
            prefix: prefix
                .split('/')
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }

    /// The object key of a relative path, exactly as the store holds it
    /// (and as listings name it): the parts joined by `/`, never
    /// percent-encoded. A part the store cannot name (a control character)
    /// names nothing.
    fn key(&self, path: &str) -> Result<Path, FsError> {
        let parts: Vec<&str> = self
            .prefix
            .iter()
            .map(String::as_str)
            .chain(path.split('/').filter(|p| !p.is_empty()))
            .collect();
        Path::parse(parts.join("/")).map_err(|_| FsError::NotFound(path.to_owned()))
    }

    fn error(e: object_store::Error, path: &str) -> FsError {
        match e {
            object_store::Error::NotFound { .. } => FsError::NotFound(path.to_owned()),
            object_store::Error::InvalidPath { .. } => FsError::InvalidPath(path.to_owned()),
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => FsError::Denied(path.to_owned()),
            other => {
                tracing::warn!(path, error = %other, "S3 request failed");
                FsError::Unavailable(format!("{path}: the document store did not answer"))
            }
        }
    }

    /// Whether any key lies below `path/`.
    async fn is_dir(&self, path: &str) -> Result<bool, FsError> {
        if path.is_empty() {
            return Ok(true);
        }
        let key = self.key(path)?;
        let mut keys = self.store.list(Some(&key));
        match keys.next().await {
            Some(Ok(_)) => Ok(true),
            Some(Err(e)) => Err(Self::error(e, path)),
            None => Ok(false),
        }
    }

    async fn file_meta(&self, path: &str) -> Result<Meta, FsError> {
        let m = self
            .store
            .head(&self.key(path)?)
            .await
            .map_err(|e| Self::error(e, path))?;
        Ok(Meta {
            kind: Kind::File,
            size: m.size,
            modified: Some(m.last_modified.into()),
            mode: None,
            inode: None,
        })
    }
}

#[async_trait::async_trait]
impl Backend for S3Backend {
    async fn stat(&self, path: &str) -> Result<Meta, FsError> {
        let not_a_file = if path.is_empty() {
            FsError::NotFound(path.to_owned())
        } else {
            match self.file_meta(path).await {
                Ok(meta) => return Ok(meta),
                // Some stores answer a HEAD of a "directory" with an error
                // other than 404: look for keys below it before failing.
                Err(e) => e,
            }
        };
        if self.is_dir(path).await? {
            return Ok(Meta {
                kind: Kind::Directory,
                size: 0,
                modified: None,
                mode: None,
                inode: None,
            });
        }
        if let FsError::NotFound(_) = not_a_file {
            // `doc.txt/more` is "not a directory", as on a filesystem.
            let mut parent = path;
            while let Some(i) = parent.rfind('/') {
                parent = &parent[..i];
                if self.file_meta(parent).await.is_ok() {
                    return Err(FsError::NotADirectory(path.to_owned()));
                }
            }
        }
        Err(not_a_file)
    }

    async fn list(&self, path: &str, limit: usize) -> Result<Listing, FsError> {
        let key = self.key(path)?;
        // The keys below `path/`, grouped at the next `/`.
        let prefix = (!key.as_ref().is_empty()).then(|| format!("{}/", key.as_ref()));
        let name = |p: &Path| p.filename().map(str::to_owned);
        let mut entries: Vec<Entry> = Vec::new();
        let mut page_token = None;
        let mut first_page = true;
        // A page at a time, and no further than one entry past the cap:
        // enough to know the listing is cut.
        loop {
            let options = PaginatedListOptions {
                delimiter: Some("/".into()),
                max_keys: Some(
                    limit
                        .saturating_sub(entries.len())
                        .saturating_add(1)
                        .min(PAGE_KEYS),
                ),
                page_token,
                ..PaginatedListOptions::default()
            };
            let page = self
                .store
                .list_paginated(prefix.as_deref(), options)
                .await
                .map_err(|e| Self::error(e, path))?;
            let found = page.result;
            if first_page
                && found.objects.is_empty()
                && found.common_prefixes.is_empty()
                && page.page_token.is_none()
                && !path.is_empty()
            {
                // A document, or nothing. (The mount's root is a directory
                // even when it holds nothing yet.)
                return Err(match self.file_meta(path).await {
                    Ok(_) => FsError::NotADirectory(path.to_owned()),
                    Err(e) => e,
                });
            }
            first_page = false;
            entries.extend(found.common_prefixes.iter().filter_map(|p| {
                Some(Entry {
                    name: name(p)?,
                    meta: Meta {
                        kind: Kind::Directory,
                        size: 0,
                        modified: None,
                        mode: None,
                        inode: None,
                    },
                })
            }));
            entries.extend(found.objects.iter().filter_map(|o| {
                Some(Entry {
                    name: name(&o.location)?,
                    meta: Meta {
                        kind: Kind::File,
                        size: o.size,
                        modified: Some(o.last_modified.into()),
                        mode: None,
                        inode: None,
                    },
                })
            }));
            match page.page_token {
                Some(token) if entries.len() <= limit => page_token = Some(token),
                _ => break,
            }
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let truncated = entries.len() > limit;
        entries.truncate(limit);
        Ok(Listing { entries, truncated })
    }

    async fn read_range(&self, path: &str, range: Range<u64>) -> Result<Bytes, FsError> {
        let stream = self.open(path, range).await?;
        let chunks: Vec<Bytes> = stream
            .try_collect()
            .await
            .map_err(|_| FsError::Unavailable(format!("{path}: the read was interrupted")))?;
        Ok(chunks.concat().into())
    }

    async fn open(&self, path: &str, range: Range<u64>) -> Result<ByteStream, FsError> {
        let meta = match self.file_meta(path).await {
            Err(_) if self.is_dir(path).await? => {
                return Err(FsError::IsADirectory(path.to_owned()));
            }
            other => other?,
        };
        let range = clamp(&range, meta.size);
        if range.is_empty() {
            return Ok(Box::pin(futures::stream::empty()));
        }
        let options = GetOptions {
            range: Some(GetRange::Bounded(range)),
            ..GetOptions::default()
        };
        let got = self
            .store
            .get_opts(&self.key(path)?, options)
            .await
            .map_err(|e| Self::error(e, path))?;
        Ok(Box::pin(got.into_stream().map_err(std::io::Error::other)))
    }
}
