// Building guest crates for `wasm32-wasip2` from a build script, shared by
// `host/build.rs` (the built-in shell) and `tests/artifacts/build.rs` (the
// test fixtures and examples) with `include!`.

/// `<outer target dir>/guests`: outside `OUT_DIR`, so guests' dependencies
/// are compiled once for every crate that needs guests.
fn guest_target_dir(out_dir: &std::path::Path) -> std::path::PathBuf {
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out (with a triple
    // directory before the profile when cross-compiling).
    let target = out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(std::path::Path::parent)
        .and_then(std::path::Path::parent)
        .unwrap_or(out_dir);
    target.join("guests")
}

/// Builds `packages` of the workspace for `wasm32-wasip2` in release mode
/// with a nested cargo, and returns the directory holding their `.wasm`.
fn build_guests(workspace: &std::path::Path, out_dir: &std::path::Path, packages: &[&str]) -> std::path::PathBuf {
    // Guests' dependencies are pinned by the workspace's lock file. (A
    // relative path would name one in the calling package, which never
    // exists, and rerun the build script on every build.)
    println!("cargo:rerun-if-changed={}", workspace.join("Cargo.lock").display());
    let target_dir = guest_target_dir(out_dir);
    let mut cmd = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    cmd.current_dir(workspace)
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
    for package in packages {
        cmd.args(["--package", package]);
    }
    let status = cmd.status().expect("cargo runs");
    assert!(
        status.success(),
        "building {packages:?} for wasm32-wasip2 failed; is the target installed? (`rustup target add wasm32-wasip2`)"
    );
    target_dir.join("wasm32-wasip2/release")
}
