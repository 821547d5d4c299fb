//! Scripts stored with `PUT /v1/scripts`, per tenant, in memory and
//! bounded. A tenant can run only the scripts it stored.
//!
//! In a fleet (`[store]` configured) the fleet's shared bucket holds them
//! too: a script stored through one host runs through any other, which
//! fetches it (checked against its id) the first time.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Bytes;
use axum::http::StatusCode;

use super::error::AppError;
use crate::runtime::ScriptId;
use crate::shared::{SharedError, SharedStore};

fn shared_error(e: SharedError) -> AppError {
    AppError::new(
        StatusCode::BAD_GATEWAY,
        "unavailable",
        format!("the fleet's script store failed: {e}"),
    )
}

/// Scripts one tenant may store.
const MAX_SCRIPTS_PER_TENANT: usize = 256;
/// Bytes of scripts one tenant may store.
const MAX_BYTES_PER_TENANT: usize = 512 << 20;

#[derive(Debug, Default)]
struct TenantScripts {
    scripts: HashMap<ScriptId, Bytes>,
    bytes: usize,
}

/// The stored scripts of all tenants.
#[derive(Debug, Default)]
pub struct ScriptStore {
    tenants: Mutex<HashMap<String, TenantScripts>>,
    shared: Option<SharedStore>,
}

impl ScriptStore {
    /// Scripts kept in memory, and in the fleet's bucket when given.
    pub fn new(shared: Option<SharedStore>) -> ScriptStore {
        ScriptStore {
            tenants: Mutex::default(),
            shared,
        }
    }

    /// Stores a script, in the fleet's bucket first when there is one (a
    /// store that fails is the request's failure: nothing stored is
    /// lost); `true` when this host did not hold it before.
    pub async fn store(&self, tenant: &str, id: ScriptId, bytes: Bytes) -> Result<bool, AppError> {
        if let Some(shared) = &self.shared {
            shared
                .put_script(tenant, &id, bytes.clone())
                .await
                .map_err(shared_error)?;
        }
        self.insert(tenant, id, bytes)
    }

    /// A script the tenant stored: from memory, or from the fleet's bucket.
    pub async fn fetch(&self, tenant: &str, id: &ScriptId) -> Result<Option<Bytes>, AppError> {
        if let Some(bytes) = self.get(tenant, id) {
            return Ok(Some(bytes));
        }
        let Some(shared) = &self.shared else {
            return Ok(None);
        };
        let Some(bytes) = shared.get_script(tenant, id).await.map_err(shared_error)? else {
            return Ok(None);
        };
        // Kept in memory for the next run, room permitting.
        let _ = self.insert(tenant, id.clone(), bytes.clone());
        Ok(Some(bytes))
    }

    /// Stores a script; `true` when it was not stored before.
    pub fn insert(&self, tenant: &str, id: ScriptId, bytes: Bytes) -> Result<bool, AppError> {
        let mut tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        let t = tenants.entry(tenant.to_owned()).or_default();
        if t.scripts.contains_key(&id) {
            return Ok(false);
        }
        if t.scripts.len() >= MAX_SCRIPTS_PER_TENANT || t.bytes + bytes.len() > MAX_BYTES_PER_TENANT
        {
            return Err(AppError::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "storage_full",
                format!(
                    "a tenant may store at most {MAX_SCRIPTS_PER_TENANT} scripts and {} MiB",
                    MAX_BYTES_PER_TENANT >> 20
                ),
            ));
        }
        t.bytes += bytes.len();
        t.scripts.insert(id, bytes);
        Ok(true)
    }

    /// A script the tenant stored.
    pub fn get(&self, tenant: &str, id: &ScriptId) -> Option<Bytes> {
        let tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        tenants.get(tenant)?.scripts.get(id).cloned()
    }
}
