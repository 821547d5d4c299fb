//! `vfsbox py FILE.py | -c CODE`: runs Python code locally with the built-in
//! interpreter, over the same sandbox and limits as any script.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use vfsbox_host::runtime::{RunError, Script, Stdin};
use vfsbox_host::{Limits, RunSpec, python};
use wasmtime_wasi::cli::AsyncStdinStream;

use super::MountArg;
use super::run::{local_runtime, print_report, vfs_of};

#[derive(Debug, Args)]
pub(crate) struct PyArgs {
    /// A Python file to run (its text is the code; it is not read from
    /// the mounts).
    #[arg(required_unless_present = "code", conflicts_with = "code")]
    file: Option<PathBuf>,
    /// The code to run, as `python3 -c`.
    #[arg(short = 'c', value_name = "CODE")]
    code: Option<String>,
    /// Mount a local directory, read-only: `/files=./docs`. Repeatable.
    /// Without any, the built-in demo documents are at /files.
    #[arg(long = "mount", value_name = "AT=DIR", value_parser = super::parse_mount)]
    mounts: Vec<MountArg>,
    /// The working directory the code starts in.
    #[arg(long, default_value = "/")]
    cwd: String,
    /// Wall-clock deadline, such as `60s` or `500ms`.
    #[arg(long, value_parser = super::parse_duration)]
    deadline: Option<Duration>,
    /// Linear memory, such as `64MiB`.
    #[arg(long, value_parser = super::parse_size)]
    memory: Option<u64>,
    /// Distinct documents the code may read.
    #[arg(long)]
    document_reads: Option<u64>,
    /// Arguments, `sys.argv[1:]`, after `--`.
    #[arg(last = true)]
    args: Vec<String>,
}

pub(crate) async fn py_command(args: PyArgs) -> ExitCode {
    super::or_refused(try_py(args).await)
}

async fn try_py(args: PyArgs) -> Result<ExitCode, String> {
    let code = match (&args.code, &args.file) {
        (Some(code), _) => code.clone(),
        (None, Some(file)) => std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?,
        (None, None) => return Err("give a FILE or -c CODE".to_owned()),
    };
    python::check(&code).map_err(|e| e.to_string())?;
    let defaults = Limits::default();
    let limits = Limits {
        live_scripts: 1,
        deadline: args.deadline.unwrap_or(defaults.deadline),
        memory: args.memory.unwrap_or(defaults.memory),
        document_reads: args.document_reads.unwrap_or(defaults.document_reads),
        ..defaults
    };
    let runtime = local_runtime(&limits)?;
    let permit = runtime.try_admit(None).map_err(|e| e.to_string())?;
    let spec = RunSpec {
        program: "python".to_owned(),
        args: Vec::new(),
        stdin: Stdin::Stream(AsyncStdinStream::new(tokio::io::stdin())),
        cwd: args.cwd,
        vfs: vfs_of(&args.mounts)?,
        limits,
        caller: Default::default(),
    };
    let report = runtime
        .run(
            permit,
            Script::Python,
            python::python_spec(spec, &code, &args.args),
        )
        .await
        .map_err(|e: RunError| e.to_string())?;
    Ok(print_report(&report))
}
