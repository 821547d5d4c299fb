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
    std::fs::write(out_dir.join("artifacts.rs"), code).expect("write artifacts.rs");
}

include!("../../host/build/guests.rs");
