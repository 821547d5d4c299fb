//! The `vfs-sh` differential table (`examples/vfs-sh/cases.txt`), run
//! through vfsbox itself: the fixture tree is laid out on disk and mounted
//! at `/files` with the `local` backend; each script runs in the sandbox
//! (the built-in shell, as `POST /v1/sh` runs it) and through real bash with
//! GNU coreutils, grep, findutils, sed and tree. Standard output and exit
//! status must be equal, after the normalisations each intended difference
//! declares in the table.

use std::path::Path;

use vfs_sh::cases::{Case, cases};
use vfsbox_host::runtime::Script;
use vfsbox_host::{Limits, Outcome as RunOutcome, sh};

use crate::common::*;
#[path = "../../examples/vfs-sh/tests/common/mod.rs"]
mod fixture;

use fixture::{Outcome, compare, gnu, installed};

async fn sandboxed(
    rt: &vfsbox_host::Runtime,
    script: &Script,
    root: &Path,
    case: &Case,
) -> Outcome {
    let permit = rt.try_admit(None).expect("a slot");
    let mut spec = spec(local_vfs(root), rt.limits().clone(), &[]);
    spec.cwd = "/files".to_owned();
    let report = rt
        .run(permit, script.clone(), sh::shell_spec(spec, &case.script))
        .await
        .expect("the run starts");
    let status = match report.outcome {
        RunOutcome::Exited { exit_code } => exit_code as u8,
        other => panic!("{}: {other:?}", case.name),
    };
    // Byte for byte, as the GNU side is shown: a byte outside UTF-8 that
    // vfs-sh changed must differ.
    Outcome {
        stdout: fixture::shown(&report.stdout),
        stderr: fixture::shown(&report.stderr),
        status,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vfs_sh_in_the_sandbox_matches_bash_and_gnu_tools() {
    let fixture = fixture::Fixture::new();
    let root = fixture.files();
    let rt = runtime(Limits {
        deadline: std::time::Duration::from_secs(30),
        ..Limits::default()
    });
    let permit = rt.try_admit(None).expect("a slot");
    let script = Script::Compiled(
        rt.compile(&permit, sh::component())
            .await
            .expect("the shell compiles"),
    );
    drop(permit);
    let all = cases();
    assert!(all.len() >= 80, "the table has {} cases", all.len());
    let (mut compared, mut failures, mut skipped) = (0, Vec::new(), Vec::new());
    for case in &all {
        if let Some(missing) = case.requires.iter().find(|t| !installed(t)) {
            skipped.push(format!("{} (needs {missing})", case.name));
            continue;
        }
        compared += 1;
        let ours = sandboxed(&rt, &script, root, case).await;
        failures.extend(compare(case, &ours, &gnu(root, &case.script)));
    }
    eprintln!("differential through vfsbox: {compared} compared, skipped {skipped:?}");
    // A machine without a tool may skip its cases; CI, which installs
    // every tool, may not.
    assert!(
        skipped.is_empty() || std::env::var_os("CI").is_none(),
        "CI must compare every case; skipped {skipped:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {compared} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
