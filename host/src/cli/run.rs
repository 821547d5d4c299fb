//! `vfsbox run`: one script, locally.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use vfsbox_host::runtime::{
    Outcome, Report, RunError, RuntimeOptions, Script, Stdin, default_compile_cache_dir, describe,
};
use vfsbox_host::vfs::{LocalBackend, Mount, Vfs};
use vfsbox_host::{AuditLog, Limits, RunSpec, Runtime, VPath};
use wasmtime_wasi::cli::AsyncStdinStream;

use super::{EXIT_LIMIT, EXIT_TRAPPED, MountArg};

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The script: a WebAssembly component built for wasm32-wasip2.
    script: PathBuf,
    /// Mount a local directory, read-only: `/files=./docs`. Repeatable.
    /// Without any, the built-in demo documents are at /files.
    #[arg(long = "mount", value_name = "AT=DIR", value_parser = super::parse_mount)]
    mounts: Vec<MountArg>,
    /// The script's working directory.
    #[arg(long, default_value = "/")]
    cwd: String,
    /// Wall-clock deadline, such as `60s` or `500ms`.
    #[arg(long, value_parser = super::parse_duration)]
    deadline: Option<Duration>,
    /// Fuel, in units (about one per WebAssembly instruction).
    #[arg(long)]
    fuel: Option<u64>,
    /// Linear memory, such as `64MiB`.
    #[arg(long, value_parser = super::parse_size)]
    memory: Option<u64>,
    /// Distinct documents the script may read.
    #[arg(long)]
    document_reads: Option<u64>,
    /// Arguments passed to the script, after `--`.
    #[arg(last = true)]
    args: Vec<String>,
}

/// The runtime of one local command: one slot, the on-disk compile cache.
pub(crate) fn local_runtime(limits: &Limits) -> Result<Runtime, String> {
    let limits = Limits {
        live_scripts: 1,
        ..limits.clone()
    };
    Runtime::with_options(limits, AuditLog::disabled(), cached())
        .map_err(|e| format!("cannot start the runtime: {e:#}"))
}

/// Options with the default on-disk compile cache, so a script (the
/// built-in shell, say) is compiled once, not on every command.
pub(crate) fn cached() -> RuntimeOptions {
    RuntimeOptions {
        compile_cache_dir: default_compile_cache_dir(),
        shared: None,
    }
}

pub(crate) async fn run(args: RunArgs) -> ExitCode {
    super::or_refused(try_run(args).await)
}

/// The filesystem of `--mount` arguments; the built-in demo documents at
/// `/files` when there are none.
pub(crate) fn vfs_of(mounts: &[MountArg]) -> Result<Vfs, String> {
    if mounts.is_empty() {
        return Ok(vfsbox_host::demo::demo_vfs());
    }
    let mut table = Vec::new();
    for m in mounts {
        let backend = LocalBackend::open(&m.dir)
            .map_err(|e| format!("cannot mount {}: {e}", m.dir.display()))?;
        let path =
            VPath::parse_absolute(&m.at).ok_or_else(|| format!("bad mount point {}", m.at))?;
        table.push(Mount {
            path,
            backend: Arc::new(backend),
        });
    }
    Vfs::new(table).map_err(|e| e.to_string())
}

async fn try_run(args: RunArgs) -> Result<ExitCode, String> {
    let bytes = std::fs::read(&args.script)
        .map_err(|e| format!("cannot read {}: {e}", args.script.display()))?;
    let defaults = Limits::default();
    let limits = Limits {
        live_scripts: 1,
        deadline: args.deadline.unwrap_or(defaults.deadline),
        fuel: args.fuel.unwrap_or(defaults.fuel),
        memory: args.memory.unwrap_or(defaults.memory),
        document_reads: args.document_reads.unwrap_or(defaults.document_reads),
        ..defaults
    };
    let runtime = local_runtime(&limits)?;
    let permit = runtime
        .try_admit(None)
        .map_err(|e| format!("cannot admit the script: {e}"))?;
    let program = args
        .script
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "script".to_owned());
    let spec = RunSpec {
        program,
        args: args.args,
        stdin: Stdin::Stream(AsyncStdinStream::new(tokio::io::stdin())),
        cwd: args.cwd,
        vfs: vfs_of(&args.mounts)?,
        limits,
        caller: Default::default(),
    };
    let report = runtime
        .run(permit, Script::Bytes(bytes.into()), spec)
        .await
        .map_err(|e| match e {
            RunError::Invalid(e) => format!("{}: {e}", args.script.display()),
            e => e.to_string(),
        })?;
    Ok(print_report(&report))
}

/// Prints what the script wrote, then one line for anything but a normal
/// exit; returns the exit code that stands for the outcome.
pub(crate) fn print_report(report: &Report) -> ExitCode {
    // Nothing more can be done if our own stdout is closed.
    let _ = std::io::stdout().write_all(&report.stdout);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all(&report.stderr);
    if report.stdout_truncated {
        eprintln!("vfsbox: stdout was cut at its cap");
    }
    if report.stderr_truncated {
        eprintln!("vfsbox: stderr was cut at its cap");
    }
    match &report.outcome {
        Outcome::Exited { exit_code } => ExitCode::from(u8::try_from(*exit_code).unwrap_or(1)),
        Outcome::Trapped { message } => {
            let first = message.lines().next().unwrap_or_default();
            eprintln!("vfsbox: the script trapped: {first}");
            ExitCode::from(EXIT_TRAPPED)
        }
        Outcome::BudgetExceeded {
            limit,
            used,
            allowed,
        } => {
            eprintln!(
                "vfsbox: limit exceeded: {limit} (used {used}, allowed {allowed}): {}",
                describe(*limit, *used, *allowed)
            );
            ExitCode::from(EXIT_LIMIT)
        }
    }
}
