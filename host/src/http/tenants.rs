//! Who is calling: bearer keys, stored only as SHA-256, mapped to tenants,
//! each with its own filesystem and live-script cap.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};

use super::AppState;
use super::error::AppError;
use crate::config::{ConfigError, TenantConfig};
use crate::limits::Limits;
use crate::runtime::Gate;
use crate::vfs::Vfs;

/// A tenant: a name, what it sees, and how many scripts it may run at once.
#[derive(Debug)]
pub struct Tenant {
    /// The tenant's name.
    pub name: String,
    /// Its filesystem; the only one its requests can reach.
    pub vfs: Vfs,
    /// Its live-script cap.
    pub gate: Gate,
    /// Whether MCP offers it the `run` tool.
    pub mcp_run: bool,
}

/// The tenants of a server, by the SHA-256 of their keys.
#[derive(Debug, Default)]
pub struct Tenants {
    by_key_hash: HashMap<String, Arc<Tenant>>,
    /// The tenant of requests without a key: set only in demo mode.
    anonymous: Option<Arc<Tenant>>,
}

impl Tenants {
    /// Builds the tenants of a config, opening their mounts.
    pub fn from_config(tenants: &[TenantConfig], limits: &Limits) -> Result<Tenants, ConfigError> {
        let mut by_key_hash = HashMap::new();
        for t in tenants {
            let tenant = Arc::new(Tenant {
                name: t.name.clone(),
                vfs: t.vfs()?,
                gate: Gate::new(t.live_scripts.unwrap_or(limits.live_scripts_per_tenant)),
                mcp_run: t.mcp_run,
            });
            for hash in &t.key_sha256 {
                by_key_hash.insert(hash.to_ascii_lowercase(), tenant.clone());
            }
        }
        Ok(Tenants {
            by_key_hash,
            anonymous: None,
        })
    }

    /// One tenant that every request is, with or without a key.
    pub fn anonymous(name: &str, vfs: Vfs, limits: &Limits) -> Tenants {
        Tenants {
            by_key_hash: HashMap::new(),
            anonymous: Some(Arc::new(Tenant {
                name: name.to_owned(),
                vfs,
                gate: Gate::new(limits.live_scripts_per_tenant),
                mcp_run: false,
            })),
        }
    }

    /// Whether requests need no key.
    pub fn is_anonymous(&self) -> bool {
        self.anonymous.is_some()
    }

    /// The tenant of requests without a key, in demo mode.
    pub fn anonymous_tenant(&self) -> Option<Arc<Tenant>> {
        self.anonymous.clone()
    }

    /// The tenant of a bearer key.
    fn by_key(&self, key: &str) -> Option<Arc<Tenant>> {
        let hash = hex::encode(Sha256::digest(key.as_bytes()));
        self.by_key_hash.get(&hash).cloned()
    }
}

/// The tenant a request is from; `401` when there is none.
#[derive(Debug, Clone)]
pub struct Authenticated(pub Arc<Tenant>);

impl FromRequestParts<AppState> for Authenticated {
    type Rejection = AppError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let tenants = &state.inner.tenants;
        if let Some(anonymous) = &tenants.anonymous {
            return Ok(Authenticated(anonymous.clone()));
        }
        let key = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token);
        match key.and_then(|k| tenants.by_key(k)) {
            Some(tenant) => Ok(Authenticated(tenant)),
            None => {
                state.inner.metrics.rejected("unauthorized");
                Err(AppError::unauthorized())
            }
        }
    }
}

/// The token of an `Authorization: Bearer <token>` value; the scheme's name
/// is case-insensitive (RFC 9110).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod bearer_tests {
    use super::bearer_token;

    #[test]
    fn reads_the_token_whatever_the_scheme_case() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Bearerabc"), None);
    }
}
