//! The differential table through the real host: when `VFS_SH_HOST_BIN`
//! names a `vfsbox` binary, every case of `cases.txt` runs as
//! `vfsbox sh --mount /files=FIXTURE --cwd /files SCRIPT` (the wasm build,
//! the SDK, the host's search) and is compared with bash and GNU tools.
//! Without the variable the test only says it was skipped.
//!
//! `VFS_SH_CASES=text` runs only the cases whose name contains `text`.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{Outcome, compare, gnu, installed};
use vfs_sh::cases::{Case, cases};

fn through_host(bin: &str, root: &Path, case: &Case) -> Outcome {
    let mount = format!("/files={}", root.display());
    let out = Command::new(bin)
        .args(["sh", "--mount", &mount, "--cwd", "/files", &case.script])
        .stdin(Stdio::null())
        .output()
        .expect("vfsbox runs");
    Outcome {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status.code().map_or(255, |c| c as u8),
    }
}

#[test]
fn vfs_sh_on_the_host_matches_gnu() {
    let Ok(bin) = std::env::var("VFS_SH_HOST_BIN") else {
        eprintln!("host differential skipped: set VFS_SH_HOST_BIN to a vfsbox binary");
        return;
    };
    let only = std::env::var("VFS_SH_CASES").unwrap_or_default();
    let fixture = common::Fixture::new();
    let root = fixture.files();
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in cases().iter().filter(|c| c.name.contains(&only)) {
        if case.requires.iter().any(|t| !installed(t)) {
            continue;
        }
        compared += 1;
        failures.extend(compare(
            case,
            &through_host(&bin, root, case),
            &gnu(root, &case.script),
        ));
    }
    eprintln!("host differential: {compared} cases compared");
    assert!(
        failures.is_empty(),
        "{} of {compared} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
