//! `vfsbox sh 'SCRIPT'`: runs a `vfs-sh` script locally.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use vfsbox_host::runtime::{RunError, Script, Stdin};
use vfsbox_host::{Limits, RunSpec, sh};

use super::MountArg;
use super::run::{local_runtime, print_report, vfs_of};

#[derive(Debug, Args)]
pub(crate) struct ShArgs {
    /// The script, such as `grep -rn refund /files | head -5`.
    script: String,
    /// Mount a local directory, read-only: `/files=./docs`. Repeatable.
    /// Without any, the built-in demo documents are at /files.
    #[arg(long = "mount", value_name = "AT=DIR", value_parser = super::parse_mount)]
    mounts: Vec<MountArg>,
    /// The working directory the script starts in.
    #[arg(long, default_value = "/")]
    cwd: String,
    /// Wall-clock deadline, such as `60s` or `500ms`.
    #[arg(long, value_parser = super::parse_duration)]
    deadline: Option<Duration>,
    /// Distinct documents the script may read.
    #[arg(long)]
    document_reads: Option<u64>,
}

pub(crate) async fn sh_command(args: ShArgs) -> ExitCode {
    super::or_refused(try_sh(args).await)
}

async fn try_sh(args: ShArgs) -> Result<ExitCode, String> {
    let defaults = Limits::default();
    sh::check(&args.script, defaults.sh_script).map_err(|e| e.to_string())?;
    let limits = Limits {
        live_scripts: 1,
        deadline: args.deadline.unwrap_or(defaults.deadline),
        document_reads: args.document_reads.unwrap_or(defaults.document_reads),
        ..defaults
    };
    let runtime = local_runtime(&limits)?;
    let permit = runtime.try_admit(None).map_err(|e| e.to_string())?;
    let spec = RunSpec {
        program: "vfs-sh".to_owned(),
        args: Vec::new(),
        stdin: Stdin::Empty,
        cwd: args.cwd,
        vfs: vfs_of(&args.mounts)?,
        limits,
        caller: Default::default(),
    };
    let report = runtime
        .run(
            permit,
            Script::Bytes(sh::component()),
            sh::shell_spec(spec, &args.script),
        )
        .await
        .map_err(|e: RunError| e.to_string())?;
    Ok(print_report(&report))
}
