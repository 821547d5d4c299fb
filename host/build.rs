//! Embeds in the binary what `vfsbox` serves without any other file: the
//! demo documents (`examples/data`) and the `vfs-sh` shell, built here for
//! `wasm32-wasip2` with a nested cargo into `<target>/guests`.

use std::path::{Path, PathBuf};

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

include!("build/guests.rs");

/// Builds `examples/vfs-sh` for wasm32-wasip2 and copies it to `OUT_DIR`.
fn build_vfs_sh(workspace: &Path, out_dir: &Path) {
    for dir in ["examples/vfs-sh", "guest-sdk", "wit"] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    let wasm = build_guests(workspace, out_dir, &["vfs-sh"]).join("vfs-sh.wasm");
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
