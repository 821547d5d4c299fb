//! `vfsbox mcp`: an MCP server over stdio, for clients that start a local
//! process (Claude Desktop, Claude Code, Cursor...). One tenant: the
//! command line's mounts (or a config's only tenant), with the same
//! sandbox, slots and limits as `serve`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use rmcp::ServiceExt;
use vfsbox_host::Runtime;
use vfsbox_host::config::Config;
use vfsbox_host::http::{AppState, McpServer, Tenants};

use super::run::vfs_of;
use super::{EXIT_REFUSED, MountArg};

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Mount a local directory, read-only: `/files=./docs`. Repeatable.
    /// Without any (and without a config), the built-in demo documents are
    /// at /files.
    #[arg(long = "mount", value_name = "AT=DIR", value_parser = super::parse_mount)]
    mounts: Vec<MountArg>,
    /// A config file: its limits and audit log, and its mounts when it has
    /// exactly one tenant and no --mount is given.
    #[arg(long)]
    config: Option<PathBuf>,
}

pub(crate) async fn mcp_command(args: McpArgs) -> ExitCode {
    match try_mcp(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("vfsbox: {message}");
            ExitCode::from(EXIT_REFUSED)
        }
    }
}

async fn try_mcp(args: McpArgs) -> Result<(), String> {
    let config = match &args.config {
        Some(path) => Config::load(path).map_err(|e| e.to_string())?,
        None => Config::default(),
    };
    let audit = super::serve::audit_log(&config)?;
    let vfs = match (&args.mounts[..], &config.tenants[..]) {
        ([], [only]) => only.vfs().map_err(|e| e.to_string())?,
        ([], []) => vfs_of(&[])?,
        ([], _) => {
            return Err(
                "the config has several [[tenants]]; over stdio there is one: give --mount".into(),
            );
        }
        (mounts, _) => vfs_of(mounts)?,
    };
    let name = config.tenants.first().map_or("local", |t| t.name.as_str());
    let tenants = Tenants::anonymous(name, vfs, &config.limits);
    let runtime = Runtime::with_options(config.limits.clone(), audit, super::run::cached())
        .map_err(|e| format!("cannot start the runtime: {e:#}"))?;
    let state = AppState::new(runtime, tenants);
    let tenant = state
        .anonymous_tenant()
        .ok_or_else(|| "no tenant to serve".to_owned())?;
    state.warm_up().await?;
    let server = McpServer::for_tenant(state, tenant)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    server
        .waiting()
        .await
        .map_err(|e| format!("the MCP session failed: {e}"))?;
    Ok(())
}
