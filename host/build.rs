//! Embeds in the binary what `vfsbox` serves without any other file: the
//! demo documents (`examples/data`), the `vfs-sh` shell, built here for
//! `wasm32-wasip2` with a nested cargo into `<target>/guests`, and the
//! Python interpreter, built from `host/python` with componentize-py.

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

/// componentize-py, pinned: its wheel carries CPython and its standard
/// library, so it builds the interpreter offline once installed.
const COMPONENTIZE_PY: &str = "0.25.1";

/// Builds the Python interpreter component from `host/python` into
/// `OUT_DIR/python.wasm`, installing the pinned componentize-py from PyPI
/// into `<target>/guests` the first time.
fn build_python(workspace: &Path, out_dir: &Path) {
    let src = workspace.join("host/python");
    println!("cargo:rerun-if-changed={}", src.display());
    let python = std::env::var("PYTHON3").unwrap_or_else(|_| "python3".to_owned());
    let tools = guest_target_dir(out_dir).join(format!("componentize-py-{COMPONENTIZE_PY}"));
    if !tools.join("componentize_py").exists() {
        let status = std::process::Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg("--target")
            .arg(&tools)
            .arg(format!("componentize-py=={COMPONENTIZE_PY}"))
            .status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "installing componentize-py {COMPONENTIZE_PY} from PyPI with `{python} -m pip` failed: \
             the built-in Python needs python3 with pip and PyPI reachable once \
             (set PYTHON3 to another interpreter)"
        );
    }
    // componentize-py reads a world's packages from `deps/` beside it: the
    // world, vfsbox's own package and the vendored WASI packages, put
    // together.
    let wit = out_dir.join("python-wit");
    let deps = wit.join("deps");
    std::fs::create_dir_all(&deps).expect("mkdir python-wit/deps");
    std::fs::copy(src.join("wit/world.wit"), wit.join("world.wit")).expect("copy world.wit");
    std::fs::copy(
        workspace.join("wit/world.wit"),
        deps.join("vfsbox-script.wit"),
    )
    .expect("copy vfsbox:script");
    println!("cargo:rerun-if-changed={}", workspace.join("wit").display());
    for entry in std::fs::read_dir(workspace.join("wit/deps")).expect("wit/deps") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|x| x == "wit") {
            std::fs::copy(&path, deps.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    // The sources are built from a copy: componentize-py writes bytecode
    // caches beside them, which would make every build see a change.
    let app = out_dir.join("python-src");
    std::fs::create_dir_all(&app).expect("mkdir python-src");
    for entry in std::fs::read_dir(&src).expect("host/python") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|x| x == "py") {
            std::fs::copy(&path, app.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    let out = out_dir.join("python.wasm");
    let status = std::process::Command::new(&python)
        .current_dir(&app)
        .env("PYTHONPATH", &tools)
        .args([
            "-c",
            "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; script()",
        ])
        .arg("-d")
        .arg(&wit)
        .args(["-w", "python", "componentize", "runner", "-o"])
        .arg(&out)
        .status()
        .expect("python3 runs");
    assert!(
        status.success() && out.exists(),
        "componentize-py could not build the Python interpreter from {}",
        src.display()
    );
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
        build_python(&manifest.join(".."), &out);
    }
}
