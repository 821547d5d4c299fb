//! The `vfs-sh` binary: `vfs-sh -c SCRIPT`.
//!
//! Built for `wasm32-wasip2`, it reads documents through the vfsbox SDK
//! ([`sdk::SdkFs`]). Built natively (for debugging) it serves real
//! directories instead: `VFS_SH_MOUNTS=files=/some/dir` (several joined by
//! `,`) and `VFS_SH_CWD=/files`.

#[cfg(target_family = "wasm")]
mod sdk;

use std::io::Write;

fn argv() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

#[cfg(target_family = "wasm")]
fn main() {
    let out = sdk::SharedStdout::new();
    let mut fs = sdk::SdkFs::new(out.clone());
    let mut writer = out;
    let code = vfs_sh::run_argv(
        &argv(),
        &mut fs,
        Box::new(std::io::stdin()),
        &mut writer,
        &mut std::io::stderr(),
    );
    let _ = writer.flush();
    vfsbox_guest::process::exit(code);
}

#[cfg(not(target_family = "wasm"))]
fn main() {
    let mut fs = vfs_sh::dirfs::DirFs::new();
    for m in std::env::var("VFS_SH_MOUNTS")
        .unwrap_or_default()
        .split(',')
    {
        if let Some((name, dir)) = m.split_once('=') {
            fs = fs.mount(name, dir);
        }
    }
    if let Ok(cwd) = std::env::var("VFS_SH_CWD") {
        fs = fs.with_cwd(&cwd);
    }
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let code = vfs_sh::run_argv(
        &argv(),
        &mut fs,
        Box::new(std::io::stdin()),
        &mut out,
        &mut std::io::stderr(),
    );
    let _ = out.flush();
    std::process::exit(i32::from(code));
}
