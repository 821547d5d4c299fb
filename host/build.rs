//! Embeds the demo documents (`examples/data`) in the binary, so that
//! `vfsbox serve` without a config serves them from anywhere.

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
}
