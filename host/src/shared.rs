//! What the hosts of a fleet share through an S3-compatible bucket, so that
//! no host holds anything another needs (`[store]` in `vfsbox.toml`):
//!
//! - **stored scripts** (`PUT /v1/scripts`), content-addressed per tenant
//!   at `scripts/<tenant>/<sha256>`: any host runs any stored script, and
//!   checks the bytes it fetches against the id before using them;
//! - **compiled artifacts**, at `artifacts/<engine>/<sha256>`, keyed by the
//!   script's hash and the engine's compatibility hash, so that a host
//!   started fresh runs a script compiled elsewhere without compiling it.
//!
//! Loading compiled code is `unsafe` (wasmtime trusts it to be its own
//! output), so every artifact carries an HMAC-SHA256 over the engine hash,
//! the script id and the code, with a key only hosts hold
//! (`VFSBOX_ARTIFACT_KEY`, never in the config file, never logged). An
//! artifact whose tag does not verify, forged or corrupted, is never
//! deserialised: the script is compiled again and the artifact replaced.

use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, PutPayload};
use sha2::{Digest, Sha256};

use crate::config::StoreConfig;
use crate::runtime::ScriptId;
use crate::vfs::S3Backend;

/// The environment variable holding the artifact key, in hex.
pub const ARTIFACT_KEY_ENV: &str = "VFSBOX_ARTIFACT_KEY";
/// The shortest artifact key accepted, in bytes.
const MIN_KEY_BYTES: usize = 32;
/// Bytes of the tag in front of an artifact's code.
const TAG_BYTES: usize = 32;
/// What the tag covers besides the code: a version, so that a format
/// change never reads old artifacts as new ones.
const TAG_DOMAIN: &[u8] = b"vfsbox artifact v1\0";

/// Why the shared store could not answer.
#[derive(Debug, thiserror::Error)]
pub enum SharedError {
    /// The store failed or did not answer in time.
    #[error("the shared store did not answer: {0}")]
    Unavailable(String),
    /// An artifact whose tag does not verify: forged or corrupted.
    #[error("the compiled artifact of {0} does not verify: forged or corrupted")]
    Tampered(ScriptId),
    /// A stored script whose bytes do not match its id.
    #[error("the stored script {0} does not match its id")]
    Corrupt(ScriptId),
}

/// The artifact key; its bytes are never printed.
#[derive(Clone)]
pub struct ArtifactKey(Arc<ring::hmac::Key>);

impl std::fmt::Debug for ArtifactKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArtifactKey(..)")
    }
}

impl ArtifactKey {
    /// Reads a key of at least 32 bytes in hex.
    pub fn from_hex(hex_key: &str) -> Result<ArtifactKey, String> {
        let bytes =
            hex::decode(hex_key.trim()).map_err(|_| format!("{ARTIFACT_KEY_ENV}: not hex"))?;
        if bytes.len() < MIN_KEY_BYTES {
            return Err(format!(
                "{ARTIFACT_KEY_ENV}: {} bytes; give at least {MIN_KEY_BYTES} random bytes in hex \
                 (`openssl rand -hex 32`)",
                bytes.len()
            ));
        }
        Ok(ArtifactKey(Arc::new(ring::hmac::Key::new(
            ring::hmac::HMAC_SHA256,
            &bytes,
        ))))
    }

    /// The key from [`ARTIFACT_KEY_ENV`].
    pub fn from_env() -> Result<ArtifactKey, String> {
        let value = std::env::var(ARTIFACT_KEY_ENV).map_err(|_| {
            format!(
                "[store] is configured but {ARTIFACT_KEY_ENV} is not set: hosts sharing compiled \
                 scripts need a key to authenticate them (`openssl rand -hex 32`)"
            )
        })?;
        ArtifactKey::from_hex(&value)
    }

    fn tag(&self, engine: &str, id: &ScriptId, code: &[u8]) -> ring::hmac::Tag {
        let mut context = ring::hmac::Context::with_key(&self.0);
        // Each part with its length first: no two (engine, id) pairs make
        // the same message.
        for part in [TAG_DOMAIN, engine.as_bytes(), id.as_str().as_bytes()] {
            context.update(&(part.len() as u64).to_le_bytes());
            context.update(part);
        }
        context.update(code);
        context.sign()
    }

    fn verify(&self, engine: &str, id: &ScriptId, code: &[u8], tag: &[u8]) -> bool {
        let expected = self.tag(engine, id, code);
        let expected = expected.as_ref();
        // In constant time: how much of a forged tag matched must not show.
        expected.len() == tag.len()
            && expected
                .iter()
                .zip(tag)
                .fold(0u8, |diff, (a, b)| diff | (a ^ b))
                == 0
    }
}

/// The fleet's shared bucket.
#[derive(Clone)]
pub struct SharedStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    key: ArtifactKey,
}

impl std::fmt::Debug for SharedStore {
    // The store's client holds the bucket's credentials: only what names
    // the place is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStore")
            .field("store", &format_args!("{}", self.store))
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn hex_of(id: &ScriptId) -> &str {
    id.as_str().strip_prefix("sha256:").unwrap_or(id.as_str())
}

impl SharedStore {
    /// Connects to the bucket of `config` (credentials from the
    /// environment), authenticating artifacts with `key`.
    pub fn new(config: &StoreConfig, key: ArtifactKey) -> Result<SharedStore, String> {
        let store = S3Backend::client(&config.s3)?;
        Ok(SharedStore::with_store(store, &config.s3.prefix, key))
    }

    /// Shares through a store built elsewhere.
    pub fn with_store(store: Arc<dyn ObjectStore>, prefix: &str, key: ArtifactKey) -> SharedStore {
        SharedStore {
            store,
            prefix: prefix.trim_matches('/').to_owned(),
            key,
        }
    }

    fn path(&self, rest: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(rest)
        } else {
            Path::from(format!("{}/{rest}", self.prefix))
        }
    }

    /// Where a tenant's stored script lives: the tenant by the hash of its
    /// name, so that no name can reach outside its own keys.
    fn script_path(&self, tenant: &str, id: &ScriptId) -> Path {
        let tenant = hex::encode(Sha256::digest(tenant.as_bytes()));
        self.path(&format!("scripts/{tenant}/{}", hex_of(id)))
    }

    fn artifact_path(&self, engine: &str, id: &ScriptId) -> Path {
        self.path(&format!("artifacts/{engine}/{}", hex_of(id)))
    }

    fn unavailable(e: object_store::Error) -> SharedError {
        tracing::warn!(error = %e, "shared store request failed");
        SharedError::Unavailable(e.to_string())
    }

    /// Stores a tenant's script.
    pub async fn put_script(
        &self,
        tenant: &str,
        id: &ScriptId,
        bytes: Bytes,
    ) -> Result<(), SharedError> {
        self.store
            .put(&self.script_path(tenant, id), PutPayload::from_bytes(bytes))
            .await
            .map(drop)
            .map_err(Self::unavailable)
    }

    /// A tenant's stored script, checked against its id; `None` when the
    /// tenant never stored it.
    pub async fn get_script(
        &self,
        tenant: &str,
        id: &ScriptId,
    ) -> Result<Option<Bytes>, SharedError> {
        let got = match self.store.get(&self.script_path(tenant, id)).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(Self::unavailable(e)),
        };
        let bytes = got.bytes().await.map_err(Self::unavailable)?;
        if ScriptId::of(&bytes) != *id {
            return Err(SharedError::Corrupt(id.clone()));
        }
        Ok(Some(bytes))
    }

    /// The compiled code of `id` for engines of compatibility hash
    /// `engine`, once its tag verifies; `None` when there is none.
    pub async fn get_artifact(
        &self,
        engine: &str,
        id: &ScriptId,
    ) -> Result<Option<Bytes>, SharedError> {
        let got = match self.store.get(&self.artifact_path(engine, id)).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(Self::unavailable(e)),
        };
        let bytes = got.bytes().await.map_err(Self::unavailable)?;
        if bytes.len() < TAG_BYTES {
            return Err(SharedError::Tampered(id.clone()));
        }
        let (tag, code) = bytes.split_at(TAG_BYTES);
        if !self.key.verify(engine, id, code, tag) {
            return Err(SharedError::Tampered(id.clone()));
        }
        Ok(Some(bytes.slice(TAG_BYTES..)))
    }

    /// Shares the compiled code of `id`, tagged.
    pub async fn put_artifact(
        &self,
        engine: &str,
        id: &ScriptId,
        code: &[u8],
    ) -> Result<(), SharedError> {
        let tag = self.key.tag(engine, id, code);
        let mut body = Vec::with_capacity(TAG_BYTES + code.len());
        body.extend_from_slice(tag.as_ref());
        body.extend_from_slice(code);
        self.store
            .put(&self.artifact_path(engine, id), PutPayload::from(body))
            .await
            .map(drop)
            .map_err(Self::unavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> ArtifactKey {
        ArtifactKey::from_hex(&hex::encode([byte; 32])).expect("a key")
    }

    #[test]
    fn a_tag_verifies_only_for_its_key_engine_id_and_code() {
        let (k, other) = (key(1), key(2));
        let id = ScriptId::of(b"script");
        let tag = k.tag("engine", &id, b"code");
        assert!(k.verify("engine", &id, b"code", tag.as_ref()));
        assert!(
            !other.verify("engine", &id, b"code", tag.as_ref()),
            "another key"
        );
        assert!(
            !k.verify("engine2", &id, b"code", tag.as_ref()),
            "another engine"
        );
        assert!(
            !k.verify("engine", &ScriptId::of(b"x"), b"code", tag.as_ref()),
            "another id"
        );
        assert!(
            !k.verify("engine", &id, b"codf", tag.as_ref()),
            "other code"
        );
        assert!(
            !k.verify("engine", &id, b"code", &tag.as_ref()[..31]),
            "a short tag"
        );
    }

    #[test]
    fn a_short_or_non_hex_key_is_refused_without_echoing_it() {
        let e = ArtifactKey::from_hex("abcd").expect_err("short");
        assert!(e.contains("2 bytes") && !e.contains("abcd"), "{e}");
        let e = ArtifactKey::from_hex("zz-secret").expect_err("not hex");
        assert!(!e.contains("secret"), "{e}");
        assert_eq!(format!("{:?}", key(7)), "ArtifactKey(..)");
    }

    #[test]
    fn the_shared_store_never_prints_its_credentials_or_key() {
        let client = object_store::aws::AmazonS3Builder::new()
            .with_bucket_name("fleet")
            .with_region("us-east-1")
            .with_endpoint("http://127.0.0.1:9")
            .with_allow_http(true)
            .with_access_key_id("AKIDSECRETID")
            .with_secret_access_key("s3cr3t-value")
            .build()
            .expect("a client");
        let store = SharedStore::with_store(Arc::new(client), "prod", key(9));
        let shown = format!("{store:?}");
        assert!(shown.contains("fleet") && shown.contains("prod"), "{shown}");
        for secret in ["AKIDSECRETID", "s3cr3t-value", &hex::encode([9u8; 32])] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    #[tokio::test]
    async fn artifacts_round_trip_and_a_tampered_one_is_refused() {
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let shared = SharedStore::with_store(memory.clone(), "fleet", key(1));
        let id = ScriptId::of(b"script");
        assert!(
            shared
                .get_artifact("e", &id)
                .await
                .expect("answers")
                .is_none()
        );
        shared
            .put_artifact("e", &id, b"compiled code")
            .await
            .expect("put");
        let got = shared.get_artifact("e", &id).await.expect("answers");
        assert_eq!(got.as_deref(), Some(&b"compiled code"[..]));
        // Another engine's artifacts are not this one's.
        assert!(
            shared
                .get_artifact("f", &id)
                .await
                .expect("answers")
                .is_none()
        );
        // One flipped byte of code, in the bucket: refused.
        let path = shared.artifact_path("e", &id);
        let mut body = memory
            .get(&path)
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes")
            .to_vec();
        *body.last_mut().expect("code") ^= 1;
        memory
            .put(&path, PutPayload::from(body))
            .await
            .expect("put");
        assert!(matches!(
            shared.get_artifact("e", &id).await,
            Err(SharedError::Tampered(_))
        ));
        // A host with another key does not trust this one's artifacts.
        shared
            .put_artifact("e", &id, b"compiled code")
            .await
            .expect("put");
        let stranger = SharedStore::with_store(memory, "fleet", key(2));
        assert!(matches!(
            stranger.get_artifact("e", &id).await,
            Err(SharedError::Tampered(_))
        ));
    }

    #[tokio::test]
    async fn scripts_are_per_tenant_and_checked_against_their_id() {
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let shared = SharedStore::with_store(memory.clone(), "", key(1));
        let id = ScriptId::of(b"wasm");
        shared
            .put_script("a", &id, Bytes::from_static(b"wasm"))
            .await
            .expect("put");
        assert_eq!(
            shared
                .get_script("a", &id)
                .await
                .expect("answers")
                .as_deref(),
            Some(&b"wasm"[..])
        );
        assert!(
            shared
                .get_script("b", &id)
                .await
                .expect("answers")
                .is_none(),
            "another tenant"
        );
        memory
            .put(
                &shared.script_path("a", &id),
                PutPayload::from_static(b"evil"),
            )
            .await
            .expect("put");
        assert!(matches!(
            shared.get_script("a", &id).await,
            Err(SharedError::Corrupt(_))
        ));
    }
}
