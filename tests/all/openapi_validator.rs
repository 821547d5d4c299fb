//! Validates an OpenAPI document with `openapi-spec-validator` (the
//! reference validator, from PyPI), installing it for the current user if
//! it is missing.

use std::path::Path;
use std::process::Command;

fn has_validator() -> bool {
    Command::new("python3")
        .args(["-c", "import openapi_spec_validator"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Fails the test unless `doc` is a valid OpenAPI 3 document.
pub(crate) fn validate(doc: &Path) {
    if !has_validator() {
        let installed = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--user",
                "openapi-spec-validator",
            ])
            .status()
            .expect("python3 runs");
        assert!(
            installed.success(),
            "could not install openapi-spec-validator"
        );
    }
    let out = Command::new("python3")
        .args(["-m", "openapi_spec_validator"])
        .arg(doc)
        .output()
        .expect("the validator runs");
    assert!(
        out.status.success(),
        "invalid OpenAPI document:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
