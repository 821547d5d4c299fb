//! Builds the guest crates for `wasm32-wasip2` with a nested cargo, into a
//! directory of the outer target directory, and writes their paths into
//! `OUT_DIR/artifacts.rs`. Cargo reruns this only when a guest's sources,
//! the SDK or the WIT change, so guests are built once per test run, not
//! once per test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Guest packages: the constant that names their `.wasm`, the package, and
/// the file it builds (a library's name has `_` for `-`).
const GUESTS: &[(&str, &str, &str)] = &[
    ("MISBEHAVE", "misbehave", "misbehave"),
    ("HELLO", "hello", "hello"),
    ("WC", "wc", "wc"),
    ("GREP_COUNT", "grep-count", "grep-count"),
    ("JSON_FIELDS", "json-fields", "json-fields"),
    ("BUDGET_AWARE", "budget-aware", "budget-aware"),
    ("CPU_HASH", "cpu-hash", "cpu-hash"),
    ("HTTP_HELLO", "http-hello", "http_hello"),
];

/// Directories whose changes require a rebuild, relative to the workspace.
const WATCH: &[&str] = &[
    "wit",
    "guest-sdk",
    "tests/fixtures",
    "examples",
    "bench/guests",
];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let workspace = manifest.join("../..");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    for dir in WATCH {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    println!("cargo:rerun-if-changed=Cargo.lock");

    let target_dir = guest_target_dir(&out_dir);
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    cmd.current_dir(&workspace)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .env("CARGO_TARGET_DIR", &target_dir)
        // Guests are small and shipped: no debug info.
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        // Flags meant for the host build (coverage, clippy) are not for guests.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_BUILD_RUSTFLAGS");
    for (_, package, _) in GUESTS {
        cmd.args(["--package", package]);
    }
    let status = cmd.status().expect("cargo runs");
    if !status.success() {
        panic!(
            "building the guests failed; is the target installed? \
             (`rustup target add wasm32-wasip2`)"
        );
    }

    let mut code = String::new();
    for (name, package, file) in GUESTS {
        let wasm = target_dir
            .join("wasm32-wasip2/release")
            .join(format!("{file}.wasm"));
        assert!(wasm.exists(), "{} was not built", wasm.display());
        code.push_str(&format!(
            "/// `{package}` built for wasm32-wasip2.\npub const {name}: &str = {:?};\n",
            wasm.display().to_string()
        ));
    }
    std::fs::write(out_dir.join("artifacts.rs"), code).expect("write artifacts.rs");
}

/// `<outer target dir>/guests`: outside `OUT_DIR`, so that the guests'
/// dependencies are compiled once for every crate that needs guests.
fn guest_target_dir(out_dir: &Path) -> PathBuf {
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out (with a triple
    // directory before the profile when cross-compiling).
    let target = out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(Path::parent)
        .and_then(Path::parent)
        .unwrap_or(out_dir);
    target.join("guests")
}
