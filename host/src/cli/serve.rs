//! `vfsbox serve`: the HTTP service.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use vfsbox_host::config::Config;
use vfsbox_host::http::{AppState, McpSettings, Tenants, default_drain_grace, serve_draining};
use vfsbox_host::shared::{ArtifactKey, SharedStore};
use vfsbox_host::{AuditLog, Runtime, demo};

use super::EXIT_REFUSED;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The config file; without one, the demo documents are served on
    /// loopback without keys.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on (overrides the config's `server.listen`).
    #[arg(long)]
    listen: Option<SocketAddr>,
}

pub(crate) async fn serve_command(args: ServeArgs) -> ExitCode {
    match try_serve(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("vfsbox: {message}");
            ExitCode::from(EXIT_REFUSED)
        }
    }
}

async fn try_serve(args: ServeArgs) -> Result<(), String> {
    let config = match &args.config {
        Some(path) => Config::load(path).map_err(|e| e.to_string())?,
        None => Config::default(),
    };
    let listen = args.listen.unwrap_or(config.server.listen);
    let audit = audit_log(&config)?;
    let tenants = if args.config.is_some() {
        if config.tenants.is_empty() {
            return Err("the config has no [[tenants]]; nobody could call".to_owned());
        }
        Tenants::from_config(&config.tenants, &config.limits).map_err(|e| e.to_string())?
    } else {
        if !listen.ip().is_loopback() {
            return Err(format!(
                "refusing to serve the demo without keys on {listen}: demo mode listens on loopback only; \
                 give a --config with tenants and keys to serve elsewhere"
            ));
        }
        Tenants::anonymous("demo", demo::demo_vfs(), &config.limits)
    };
    let mut options = super::run::cached();
    if let Some(store) = &config.store {
        let key = ArtifactKey::from_env()?;
        options.shared = Some(SharedStore::new(store, key).map_err(|e| format!("store.s3: {e}"))?);
    }
    let runtime = Runtime::with_options(config.limits.clone(), audit, options)
        .map_err(|e| format!("cannot start the runtime: {e:#}"))?;
    let shutdown = shutdown_signal().map_err(|e| format!("cannot handle signals: {e}"))?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let anonymous = tenants.is_anonymous();
    let mcp = McpSettings {
        allowed_hosts: config.server.mcp_allowed_hosts.clone(),
        allowed_origins: config.server.mcp_allowed_origins.clone(),
    };
    let state = AppState::with_mcp(runtime, tenants, mcp);
    // Compile the built-in shell before announcing the address, so the
    // first `POST /v1/sh` does not pay for it.
    state.warm_up().await?;
    // The interpreter takes longer (seconds on a fresh cache): compiled in
    // the background, with `/readyz` not ready until it is.
    state.prepare_python();
    if anonymous {
        eprintln!(
            "vfsbox: DEMO MODE: serving the built-in demo documents at {} with NO authentication, on loopback only",
            demo::DEMO_MOUNT
        );
    }
    eprintln!("vfsbox: listening on http://{addr}");
    let grace = config
        .server
        .drain_grace
        .unwrap_or_else(|| default_drain_grace(config.limits.deadline));
    serve_draining(listener, state, shutdown, grace)
        .await
        .map_err(|e| format!("the server failed: {e}"))?;
    eprintln!("vfsbox: stopped");
    Ok(())
}

/// The config's audit log, or none.
pub(crate) fn audit_log(config: &Config) -> Result<AuditLog, String> {
    match &config.server.audit_log {
        Some(path) => AuditLog::open(path)
            .map_err(|e| format!("cannot open the audit log {}: {e}", path.display())),
        None => Ok(AuditLog::disabled()),
    }
}

/// Installs the ctrl-c and SIGTERM handlers now, so that a signal arriving
/// any time after this (even before the server listens) shuts it down
/// gracefully; the future resolves on the first of them.
fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}
