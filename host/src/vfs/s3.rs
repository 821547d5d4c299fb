//! Any S3-compatible object store (AWS S3, MinIO, Ceph, R2...), read-only,
//! through the `object_store` crate.
//!
//! Keys under the configured prefix are served as documents; `/` in keys
//! makes directories. Credentials come from the environment
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, ...), never from the
//! config file, so they are never logged with it.
//!
//! The mount's settings are always here, so that a config naming an S3
//! mount parses in any build; the backend itself needs the `s3` feature.

#[cfg(feature = "s3")]
mod backend;

#[cfg(feature = "s3")]
pub use backend::{S3Backend, Store};

/// Where an S3 mount's documents are.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3Config {
    /// The bucket.
    pub bucket: String,
    /// Only keys under this prefix are served (no leading or trailing `/`
    /// needed).
    #[serde(default)]
    pub prefix: String,
    /// The region, such as `us-east-1`.
    #[serde(default = "default_region")]
    pub region: String,
    /// The endpoint of an S3-compatible store, such as
    /// `http://127.0.0.1:9000`; AWS when absent.
    #[serde(default)]
    pub endpoint: Option<String>,
}

fn default_region() -> String {
    "us-east-1".to_owned()
}
