//! Scripts stored with `PUT /v1/scripts`, per tenant, in memory and
//! bounded. A tenant can run only the scripts it stored.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Bytes;
use axum::http::StatusCode;

use super::error::AppError;
use crate::runtime::ScriptId;

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
}

impl ScriptStore {
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
