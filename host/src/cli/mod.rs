//! Command-line parsing and the subcommands.

mod mcp;
mod new;
mod py;
mod run;
mod serve;
mod sh;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use vfsbox_host::units;

/// Exit code when a limit ended the script.
pub(crate) const EXIT_LIMIT: u8 = 124;
/// Exit code when vfsbox could not run the script (bad arguments, a file
/// that is not a valid script, the working directory missing).
pub(crate) const EXIT_REFUSED: u8 = 125;
/// Exit code when the script trapped (a panic, a stack overflow).
pub(crate) const EXIT_TRAPPED: u8 = 134;

/// The exit code of a command that ran, or its one-line refusal printed and
/// [`EXIT_REFUSED`].
pub(crate) fn or_refused(result: Result<ExitCode, String>) -> ExitCode {
    result.unwrap_or_else(|message| {
        eprintln!("vfsbox: {message}");
        ExitCode::from(EXIT_REFUSED)
    })
}

/// Runs untrusted WebAssembly scripts over a read-only filesystem of
/// documents.
#[derive(Debug, Parser)]
#[command(name = "vfsbox", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one script locally, with the same sandbox and limits as the
    /// service.
    ///
    /// Prints the script's stdout and stderr and exits with its exit code;
    /// 124 when a limit ended it, 134 when it trapped, 125 when it could not
    /// be run at all.
    Run(run::RunArgs),
    /// Serve the HTTP API. Without a config, serves the built-in demo
    /// documents at /files on 127.0.0.1:8080, without keys.
    Serve(serve::ServeArgs),
    /// Run a vfs-sh script locally: `vfsbox sh 'grep -rn refund /files'`.
    ///
    /// Exit codes as for `run`: the script's, 124 for a limit, 125 when it
    /// could not run.
    Sh(sh::ShArgs),
    /// Run Python locally with the built-in interpreter:
    /// `vfsbox py -c 'import os; print(os.listdir("/files"))'`.
    ///
    /// Exit codes as for `run`: the code's (1 for an uncaught exception),
    /// 124 for a limit, 125 when it could not run.
    Py(py::PyArgs),
    /// Serve MCP over stdio, for clients that start a local process:
    /// `vfsbox mcp --mount /files=./docs`. (`serve` serves it over HTTP at
    /// /mcp.)
    Mcp(mcp::McpArgs),
    /// Scaffold a script crate (Cargo.toml, src/main.rs, a test using the
    /// test kit), ready to build for wasm32-wasip2.
    New(new::NewArgs),
}

/// A `--mount /files=DIR` argument.
#[derive(Debug, Clone)]
pub(crate) struct MountArg {
    pub(crate) at: String,
    pub(crate) dir: PathBuf,
}

pub(crate) fn parse_mount(s: &str) -> Result<MountArg, String> {
    let (at, dir) = s
        .split_once('=')
        .ok_or_else(|| format!("expected MOUNT=DIR (for example /files=./docs), got {s:?}"))?;
    if vfsbox_host::VPath::parse_absolute(at).is_none() || at == "/" {
        return Err(format!(
            "mount point {at:?} must be an absolute, normalised path below / (for example /files)"
        ));
    }
    Ok(MountArg {
        at: at.to_owned(),
        dir: PathBuf::from(dir),
    })
}

pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    units::parse_duration(s).map_err(|e| e.to_string())
}

pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    units::parse_size(s).map_err(|e| e.to_string())
}

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_log = match cli.command {
        Command::Serve(_) => "info",
        _ => "warn",
    };
    // Colours only for a person at a terminal, never into a log file.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("VFSBOX_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_log)),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("vfsbox: cannot start: {e}");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(args).await,
            Command::Serve(args) => serve::serve_command(args).await,
            Command::New(args) => new::new_command(args),
            Command::Sh(args) => sh::sh_command(args).await,
            Command::Py(args) => py::py_command(args).await,
            Command::Mcp(args) => mcp::mcp_command(args).await,
        }
    })
}
