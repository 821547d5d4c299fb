//! The config file, `vfsbox.toml`: server settings, limits, and tenants with
//! their keys and mounts. Unknown fields are refused, and every error names
//! the field, so a typo never silently falls back to a default.
//!
//! ```toml
//! [server]
//! listen = "127.0.0.1:8080"
//! audit_log = "/var/log/vfsbox/audit.jsonl"
//!
//! [limits]
//! deadline = "30s"
//! memory = "64MiB"
//!
//! [[tenants]]
//! name = "acme"
//! # SHA-256 (hex) of each key this tenant may use: `printf %s KEY | sha256sum`
//! key_sha256 = ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"]
//! live_scripts = 2
//!
//! [[tenants.mounts]]
//! path = "/files"
//! local = { dir = "/srv/docs/acme" }
//!
//! [[tenants.mounts]]
//! path = "/archive"
//! s3 = { bucket = "acme-archive", prefix = "docs", region = "eu-west-1" }
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::limits::Limits;
#[cfg(feature = "s3")]
use crate::vfs::S3Backend;
use crate::vfs::{LocalBackend, Mount, S3Config, VPath, Vfs};

/// The whole config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerConfig,
    /// `[limits]`.
    #[serde(default)]
    pub limits: Limits,
    /// `[[tenants]]`.
    #[serde(default)]
    pub tenants: Vec<TenantConfig>,
    /// `[store]`: the bucket a fleet's hosts share stored scripts and
    /// compiled artifacts through; each host keeps them to itself when
    /// absent.
    #[serde(default)]
    pub store: Option<StoreConfig>,
}

/// `[store]`: where the hosts of a fleet share stored scripts and compiled
/// artifacts (see `vfsbox_host::shared`).
///
/// ```toml
/// [store]
/// s3 = { bucket = "vfsbox-fleet", prefix = "prod", region = "eu-west-1" }
/// ```
///
/// The artifact key comes from the environment (`VFSBOX_ARTIFACT_KEY`),
/// never from this file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// An S3-compatible bucket (and prefix); credentials from the
    /// environment, as for S3 mounts.
    pub s3: S3Config,
}

/// `[server]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Where audit records are appended; none when absent.
    #[serde(default)]
    pub audit_log: Option<PathBuf>,
    /// `Host` header values `/mcp` accepts (`name` or `name:port`);
    /// loopback names only when empty. Set them to the names clients use
    /// when the server is behind a proxy (against DNS rebinding).
    #[serde(default)]
    pub mcp_allowed_hosts: Vec<String>,
    /// Browser `Origin` values `/mcp` accepts (`https://app.example.com:443`,
    /// `http://localhost:*`); any when empty.
    #[serde(default)]
    pub mcp_allowed_origins: Vec<String>,
    /// How long a draining server (told to stop by SIGTERM or ctrl-c)
    /// lets its live scripts finish before it exits anyway; the deadline
    /// and five seconds when absent. Give a Kubernetes pod a
    /// `terminationGracePeriodSeconds` longer than this.
    #[serde(default, with = "crate::units::duration_opt")]
    pub drain_grace: Option<std::time::Duration>,
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: default_listen(),
            audit_log: None,
            mcp_allowed_hosts: Vec::new(),
            mcp_allowed_origins: Vec::new(),
            drain_grace: None,
        }
    }
}

/// `[[tenants]]`: who may call, and what they see.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantConfig {
    /// The tenant's name, in audit records and metrics.
    pub name: String,
    /// SHA-256 (hex) of each API key of the tenant.
    #[serde(default)]
    pub key_sha256: Vec<String>,
    /// Live scripts at once for this tenant; the server's per-tenant limit
    /// when absent.
    #[serde(default)]
    pub live_scripts: Option<u32>,
    /// What the tenant's scripts see.
    #[serde(default)]
    pub mounts: Vec<MountConfig>,
    /// Whether MCP offers this tenant the `run` tool (its scripts stored
    /// with `PUT /v1/scripts`, run by id); off by default.
    #[serde(default)]
    pub mcp_run: bool,
}

/// `[[tenants.mounts]]`: a path and exactly one backend.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MountConfig {
    /// Where the documents appear, such as `/files`.
    pub path: String,
    /// A local directory, served read-only.
    #[serde(default)]
    pub local: Option<LocalConfig>,
    /// An S3-compatible bucket.
    #[serde(default)]
    pub s3: Option<S3Config>,
}

/// `local = { dir = "..." }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalConfig {
    /// The directory.
    pub dir: PathBuf,
}

/// A config that cannot be used; the message is one line naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

impl Config {
    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("{}: cannot read: {e}", path.display())))?;
        Config::parse(&text).map_err(|e| ConfigError(format!("{}: {}", path.display(), e.0)))
    }

    /// Parses and checks config text.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let message = e.message().replace('\n', " ");
            // The line holding the error names the field (`listen = "x"`).
            let at = e.span().map(|span| {
                let start = span.start.min(text.len());
                let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
                let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
                let number = text[..start].matches('\n').count() + 1;
                let source: String = text[line_start..line_end].trim().chars().take(80).collect();
                format!("line {number} `{source}`")
            });
            ConfigError(match at {
                Some(at) => format!("{at}: {message}"),
                None => message,
            })
        })?;
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<(), ConfigError> {
        let l = &self.limits;
        if l.live_scripts == 0 {
            return Err(ConfigError(
                "limits.live_scripts: must be at least 1".to_owned(),
            ));
        }
        if l.live_scripts_per_tenant == 0 {
            return Err(ConfigError(
                "limits.live_scripts_per_tenant: must be at least 1".to_owned(),
            ));
        }
        let mut names = std::collections::HashSet::new();
        let mut keys = std::collections::HashSet::new();
        for (i, t) in self.tenants.iter().enumerate() {
            let at = format!("tenants[{i}]");
            if t.name.is_empty() || !names.insert(t.name.as_str()) {
                return Err(ConfigError(format!("{at}.name: empty or used twice")));
            }
            for (k, key) in t.key_sha256.iter().enumerate() {
                if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(ConfigError(format!(
                        "{at}.key_sha256[{k}]: not a SHA-256 in hex (64 hex digits); store the \
                         hash of a key, never the key"
                    )));
                }
                if !keys.insert(key.to_ascii_lowercase()) {
                    return Err(ConfigError(format!(
                        "{at}.key_sha256[{k}]: used by two tenants"
                    )));
                }
            }
            if t.live_scripts == Some(0) {
                return Err(ConfigError(format!(
                    "{at}.live_scripts: must be at least 1"
                )));
            }
            for (m, mount) in t.mounts.iter().enumerate() {
                let at = format!("{at}.mounts[{m}]");
                if VPath::parse_absolute(&mount.path).is_none_or(|p| p.is_root()) {
                    return Err(ConfigError(format!(
                        "{at}.path: {:?} is not an absolute, normalised path below /",
                        mount.path
                    )));
                }
                if mount.local.is_some() == mount.s3.is_some() {
                    return Err(ConfigError(format!(
                        "{at}: give exactly one of `local` or `s3`"
                    )));
                }
            }
        }
        Ok(())
    }
}

impl TenantConfig {
    /// Builds the tenant's filesystem: this is what a tenant's scripts,
    /// downloads and resolves see, and all they see.
    pub fn vfs(&self) -> Result<Vfs, ConfigError> {
        let mut mounts = Vec::new();
        for (i, m) in self.mounts.iter().enumerate() {
            let at = format!("tenant {:?} mount {}", self.name, m.path);
            let path = VPath::parse_absolute(&m.path)
                .ok_or_else(|| ConfigError(format!("{at}: bad path")))?;
            let backend: Arc<dyn crate::vfs::Backend> = match (&m.local, &m.s3) {
                (Some(local), None) => Arc::new(LocalBackend::open(&local.dir).map_err(|e| {
                    ConfigError(format!("{at}: cannot open {}: {e}", local.dir.display()))
                })?),
                #[cfg(feature = "s3")]
                (None, Some(s3)) => {
                    Arc::new(S3Backend::new(s3).map_err(|e| ConfigError(format!("{at}: {e}")))?)
                }
                #[cfg(not(feature = "s3"))]
                (None, Some(_)) => {
                    return Err(ConfigError(format!(
                        "{at}: this build has no S3 backend (the `s3` feature)"
                    )));
                }
                _ => return Err(ConfigError(format!("tenants.mounts[{i}]: no backend"))),
            };
            mounts.push(Mount { path, backend });
        }
        Vfs::new(mounts).map_err(|e| ConfigError(format!("tenant {:?}: {e}", self.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[test]
    fn reads_a_full_config() {
        let text = format!(
            r#"
            [server]
            listen = "127.0.0.1:9999"
            audit_log = "/tmp/audit.jsonl"
            [limits]
            deadline = "30s"
            [[tenants]]
            name = "acme"
            key_sha256 = ["{HASH}"]
            live_scripts = 2
            [[tenants.mounts]]
            path = "/files"
            local = {{ dir = "/srv/docs" }}
            [[tenants.mounts]]
            path = "/archive"
            s3 = {{ bucket = "b", prefix = "p", endpoint = "http://127.0.0.1:9000" }}
            "#
        );
        let c = Config::parse(&text).expect("valid");
        assert_eq!(c.server.listen.port(), 9999);
        assert_eq!(c.limits.deadline, std::time::Duration::from_secs(30));
        assert_eq!(c.tenants[0].live_scripts, Some(2));
        assert_eq!(
            c.tenants[0].mounts[1]
                .s3
                .as_ref()
                .map(|s| s.region.as_str()),
            Some("us-east-1")
        );
    }

    #[test]
    fn an_empty_config_is_the_defaults() {
        let c = Config::parse("").expect("valid");
        assert_eq!(c.limits, Limits::default());
        assert!(c.tenants.is_empty());
    }

    #[test]
    fn errors_are_one_line_naming_the_field() {
        let cases = [
            ("[server]\nlisten = \"nowhere\"", "listen"),
            ("[limits]\ndeadline = \"soon\"", "duration"),
            ("[limits]\nmemroy = \"1MiB\"", "memroy"),
            ("[limits]\nlive_scripts = 0", "limits.live_scripts"),
            (
                "[[tenants]]\nname = \"a\"\nkey_sha256 = [\"secret\"]",
                "tenants[0].key_sha256[0]",
            ),
            (
                "[[tenants]]\nname = \"a\"\n[[tenants.mounts]]\npath = \"files\"\nlocal = { dir = \"/x\" }",
                "tenants[0].mounts[0].path",
            ),
            (
                "[[tenants]]\nname = \"a\"\n[[tenants.mounts]]\npath = \"/files\"",
                "exactly one of",
            ),
            (
                "[[tenants]]\nname = \"a\"\n[[tenants]]\nname = \"a\"",
                "tenants[1].name",
            ),
        ];
        for (text, field) in cases {
            let e = Config::parse(text).expect_err(text);
            assert!(e.0.contains(field), "{text:?}: {e}");
            assert_eq!(e.0.lines().count(), 1, "{e}");
        }
    }
}
