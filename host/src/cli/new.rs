//! `vfsbox new NAME`: scaffolds a script crate, ready to build and test.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::EXIT_REFUSED;

#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The crate's name, also its directory.
    name: String,
    /// The vfsbox checkout whose `guest-sdk` and `host` the crate uses
    /// (by default, the one this binary was built from).
    #[arg(long, value_name = "DIR")]
    vfsbox: Option<PathBuf>,
}

const MAIN_RS: &str = r#"//! NAME: lists a directory of documents with their sizes.
//!
//! Build with `cargo build --release --target wasm32-wasip2`, then run with
//! `vfsbox run target/wasm32-wasip2/release/NAME.wasm -- /files`.

use vfsbox_guest::fs;

fn main() -> Result<(), vfsbox_guest::Error> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    for entry in fs::read_dir(&dir)? {
        println!("{:>6}  {}", entry.len(), entry.name());
    }
    Ok(())
}
"#;

const TEST_RS: &str = r#"//! Runs the built script with vfsbox's test kit, over an in-memory tree.

use vfsbox_host::testkit::{TestRun, build_guest};
use vfsbox_host::{Limit, Outcome};

#[test]
fn lists_a_directory() {
    let report = TestRun::new(build_guest(env!("CARGO_MANIFEST_DIR")))
        .file("/files/a.txt", "alpha")
        .file("/files/b.txt", "beta!")
        .arg("/files")
        .run();
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.stdout_text(), "     5  a.txt\n     5  b.txt\n");
}

#[test]
fn a_tiny_fuel_budget_ends_it() {
    let report = TestRun::new(build_guest(env!("CARGO_MANIFEST_DIR")))
        .file("/files/a.txt", "alpha")
        .arg("/files")
        .fuel(1_000)
        .run();
    assert_eq!(report.limit(), Some(Limit::Fuel));
}
"#;

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn scaffold(args: &NewArgs) -> Result<PathBuf, String> {
    if !valid_name(&args.name) {
        return Err(format!(
            "{:?} is not a crate name: use letters, digits, `-` and `_`, starting with a letter",
            args.name
        ));
    }
    let checkout = match &args.vfsbox {
        Some(dir) => dir.clone(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
    };
    let checkout = checkout.canonicalize().map_err(|e| {
        format!(
            "cannot find the vfsbox checkout {}: {e}; give it with --vfsbox DIR",
            checkout.display()
        )
    })?;
    let (sdk, host) = (checkout.join("guest-sdk"), checkout.join("host"));
    if !sdk.join("Cargo.toml").exists() || !host.join("Cargo.toml").exists() {
        return Err(format!(
            "{} is not a vfsbox checkout (no guest-sdk/ and host/); give one with --vfsbox DIR",
            checkout.display()
        ));
    }
    let dir = PathBuf::from(&args.name);
    if dir.exists() {
        return Err(format!("{} already exists", dir.display()));
    }
    let manifest = format!(
        "[package]\nname = {name:?}\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nvfsbox-guest = {{ path = {sdk:?} }}\n\n\
         [dev-dependencies]\nvfsbox-host = {{ path = {host:?} }}\n",
        name = args.name,
        sdk = sdk.display().to_string(),
        host = host.display().to_string(),
    );
    let write = |path: PathBuf, text: &str| {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    write(dir.join("Cargo.toml"), &manifest)?;
    write(
        dir.join("src/main.rs"),
        &MAIN_RS.replace("NAME", &args.name),
    )?;
    write(dir.join("tests/script.rs"), TEST_RS)?;
    write(dir.join(".gitignore"), "/target\n")?;
    Ok(dir)
}

pub(crate) fn new_command(args: NewArgs) -> ExitCode {
    match scaffold(&args) {
        Ok(dir) => {
            println!("created {}/: a vfsbox script crate", dir.display());
            println!(
                "  build:  cd {} && cargo build --release --target wasm32-wasip2",
                dir.display()
            );
            println!(
                "  run:    vfsbox run target/wasm32-wasip2/release/{}.wasm -- /files",
                args.name
            );
            println!("  test:   cargo test");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("vfsbox: {message}");
            ExitCode::from(EXIT_REFUSED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::valid_name;

    #[test]
    fn accepts_only_crate_names() {
        for ok in ["hello", "my-script", "a_b2"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "2fast", "../escape", "a b", "a/b", "-x"] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
