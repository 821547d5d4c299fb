//! Builds the guest crates for `wasm32-wasip2` with a nested cargo, into a
//! directory of the outer target directory, and writes their paths into
//! `OUT_DIR/artifacts.rs`. Cargo reruns this only when a guest's sources,
//! the SDK or the WIT change, so guests are built once per test run, not
//! once per test.

use std::path::PathBuf;

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
    ("STD_FS", "std-fs", "std-fs"),
    ("CSV_TOTALS", "csv-totals", "csv-totals"),
    ("READ_ALL", "read-all", "read-all"),
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

    let packages: Vec<&str> = GUESTS.iter().map(|(_, package, _)| *package).collect();
    let release = build_guests(&workspace, &out_dir, &packages);

    let mut code = String::new();
    for (name, package, file) in GUESTS {
        let wasm = release.join(format!("{file}.wasm"));
        assert!(wasm.exists(), "{} was not built", wasm.display());
        code.push_str(&format!(
            "/// `{package}` built for wasm32-wasip2.\npub const {name}: &str = {:?};\n",
            wasm.display().to_string()
        ));
    }
    // The same std-only program built for the host, the reference the
    // `wasi:filesystem` differential compares the guest with.
    for (name, package) in NATIVE {
        let exe = build_native(&workspace, &out_dir, package);
        code.push_str(&format!(
            "/// `{package}` built for the host, to run over a tree on disk.\npub const {name}: &str = {:?};\n",
            exe.display().to_string()
        ));
    }
    std::fs::write(out_dir.join("artifacts.rs"), code).expect("write artifacts.rs");
}

/// Packages also built for the host: the constant that names the
/// executable, and the package.
const NATIVE: &[(&str, &str)] = &[
    ("STD_FS_NATIVE", "std-fs"),
    ("CSV_TOTALS_NATIVE", "csv-totals"),
];

/// Builds `package` for the host in release mode with a nested cargo, next
/// to the guests, and returns its executable.
fn build_native(workspace: &std::path::Path, out_dir: &std::path::Path, package: &str) -> PathBuf {
    let target_dir = guest_target_dir(out_dir);
    let status =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
            .current_dir(workspace)
            .args(["build", "--release", "--package", package])
            .env("CARGO_TARGET_DIR", &target_dir)
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("RUSTFLAGS")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .status()
            .expect("cargo runs");
    assert!(status.success(), "building {package} for the host failed");
    let exe = target_dir.join("release").join(package);
    assert!(exe.exists(), "{} was not built", exe.display());
    exe
}

include!("../../host/build/guests.rs");
