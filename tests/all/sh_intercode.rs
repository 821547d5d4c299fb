//! The second differential run's commands (`examples/vfs-sh/tests/
//! intercode/commands.txt`, agent-style shell over the InterCode trees)
//! through vfsbox itself: the trees mounted at `/testbed`, `/system`,
//! `/workspace` and `/backup` with the `local` backend, each command run in
//! the sandbox as `POST /v1/sh` runs it, and natively over the same
//! directories. The native build is compared with bash and the GNU tools
//! by `examples/vfs-sh/tests/intercode.rs`; here the sandbox must give the
//! native build's standard output and status for every command, so that
//! what the host serves (its search, its listings, its metadata) cannot
//! drift from what the differential measured.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use vfsbox_host::runtime::Script;
use vfsbox_host::vfs::{LocalBackend, Mount};
use vfsbox_host::{Limits, Outcome, Vfs, sh};

use crate::common::*;

const MOUNTS: [&str; 4] = ["testbed", "system", "workspace", "backup"];

fn build_trees() -> PathBuf {
    let root = std::env::temp_dir().join(format!("vfsbox-intercode-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/vfs-sh/tests/intercode/make-fixtures.sh");
    let status = Command::new("bash")
        .arg(&script)
        .arg(&root)
        .env("TZ", "UTC")
        .stdout(Stdio::null())
        .status()
        .expect("bash runs the fixture script");
    assert!(status.success(), "make-fixtures.sh failed");
    root
}

fn native(root: &Path, script: &str) -> (String, u8) {
    let mut fs = vfs_sh::dirfs::DirFs::new();
    for m in MOUNTS {
        fs = fs.mount(m, root.join(m));
    }
    let mut fs = fs.with_cwd("/");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = vfs_sh::run(
        &mut fs,
        script,
        Box::new(std::io::empty()),
        &mut out,
        &mut err,
    );
    (String::from_utf8_lossy(&out).into_owned(), status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intercode_commands_give_the_same_answers_in_the_sandbox() {
    let root = build_trees();
    let vfs = Vfs::new(MOUNTS.map(|m| Mount {
        path: vpath(&format!("/{m}")),
        backend: Arc::new(LocalBackend::open(&root.join(m)).expect("open a tree")),
    }))
    .expect("four mounts");
    let rt = runtime(Limits {
        deadline: std::time::Duration::from_secs(30),
        ..Limits::default()
    });
    let permit = rt.try_admit(None).expect("a slot");
    let shell = Script::Compiled(
        rt.compile(&permit, sh::component())
            .await
            .expect("the shell compiles"),
    );
    drop(permit);
    let scripts = vfs_sh::cases::intercode_scripts();
    assert!(scripts.len() > 3000, "{} commands", scripts.len());
    let mut differ = Vec::new();
    for script in &scripts {
        let permit = rt.try_admit(None).expect("a slot");
        let report = rt
            .run(
                permit,
                shell.clone(),
                sh::shell_spec(spec(vfs.clone(), rt.limits().clone(), &[]), script),
            )
            .await
            .expect("the run starts");
        let sandboxed = match report.outcome {
            Outcome::Exited { exit_code } => (report.stdout_text(), exit_code as u8),
            ref other => panic!("{script}: {other:?}"),
        };
        let ours = native(&root, script);
        if sandboxed != ours {
            differ.push(format!(
                "--- {script}\nsandbox ({}):\n{}\nnative ({}):\n{}",
                sandboxed.1, sandboxed.0, ours.1, ours.0
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        differ.is_empty(),
        "{} of {} commands differ between the sandbox and the native build:\n{}",
        differ.len(),
        scripts.len(),
        differ.join("\n")
    );
}
