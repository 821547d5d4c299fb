//! Embeds in the binary what `vfsbox` serves without any other file: the
//! demo documents (`examples/data`) and the `vfs-sh` shell, built here for
//! `wasm32-wasip2` with a nested cargo into `<target>/guests`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read the demo documents")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).expect("below the root");
            out.push((rel.to_string_lossy().replace('\\', "/"), path));
        }
    }
}

/// `<outer target dir>/guests`, shared with the test artifacts.
fn guest_target_dir(out_dir: &Path) -> PathBuf {
    let target = out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(Path::parent)
        .and_then(Path::parent)
        .unwrap_or(out_dir);
    target.join("guests")
}

/// Builds `examples/vfs-sh` for wasm32-wasip2 and copies it to `OUT_DIR`.
fn build_vfs_sh(workspace: &Path, out_dir: &Path) {
    for dir in ["examples/vfs-sh", "guest-sdk", "wit"] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    let target_dir = guest_target_dir(out_dir);
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .current_dir(workspace)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--package",
            "vfs-sh",
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "building vfs-sh for wasm32-wasip2 failed; is the target installed? (`rustup target add wasm32-wasip2`)"
    );
    let wasm = target_dir.join("wasm32-wasip2/release/vfs-sh.wasm");
    std::fs::copy(&wasm, out_dir.join("vfs-sh.wasm")).expect("copy vfs-sh.wasm");
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let data = manifest.join("../examples/data");
    println!("cargo:rerun-if-changed={}", data.display());
    let mut files = Vec::new();
    collect(&data, &data, &mut files);
    let mut code = String::from(
        "/// The demo documents: path below the mount, bytes.\npub(crate) const DEMO_FILES: &[(&str, &[u8])] = &[\n",
    );
    for (rel, path) in files {
        code.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("demo_files.rs"), code).expect("write demo_files.rs");
    if std::env::var_os("CARGO_FEATURE_RUNTIME").is_some() {
        build_vfs_sh(&manifest.join(".."), &out);
    }
}
