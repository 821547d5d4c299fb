//! The built-in Python: CPython compiled to a WASI component with
//! componentize-py (from `host/python`), run as an ordinary script, in the
//! same sandbox, with the same limits and audit as any other. The code runs
//! as `python3 -c CODE ARGS...` would run it; documents are read with
//! `open()`, `os`, `pathlib` and `glob` through `wasi:filesystem`.

use std::sync::OnceLock;

use bytes::Bytes;

use crate::runtime::{RunSpec, ScriptId};

/// The interpreter component, built by the build script.
static PYTHON: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/python.wasm"));

/// Bytes of Python code a run may carry, at most.
pub const MAX_CODE_BYTES: usize = 256 * 1024;

/// The interpreter's component bytes.
pub fn component() -> Bytes {
    Bytes::from_static(PYTHON)
}

/// The interpreter's script id, hashed once per process.
pub fn id() -> &'static ScriptId {
    static ID: OnceLock<ScriptId> = OnceLock::new();
    ID.get_or_init(|| ScriptId::of(PYTHON))
}

/// Code refused before running.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    /// Longer than [`MAX_CODE_BYTES`].
    #[error("the code is {0} bytes; at most {MAX_CODE_BYTES} are allowed")]
    TooLong(usize),
}

/// Checks code against the size limit.
pub fn check(code: &str) -> Result<(), CodeError> {
    if code.len() > MAX_CODE_BYTES {
        return Err(CodeError::TooLong(code.len()));
    }
    Ok(())
}

/// Makes `spec` a run of `code` by the interpreter, with `args` as
/// `sys.argv[1:]`.
pub fn python_spec(mut spec: RunSpec, code: &str, args: &[String]) -> RunSpec {
    spec.program = "python".to_owned();
    spec.args = argv(code, args);
    spec
}

/// The interpreter's arguments for `code` with `args` as `sys.argv[1:]`.
pub(crate) fn argv(code: &str, args: &[String]) -> Vec<String> {
    ["-c".to_owned(), code.to_owned()]
        .into_iter()
        .chain(args.iter().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_overlong_code() {
        assert_eq!(check("print(1)"), Ok(()));
        assert_eq!(check(&"x".repeat(MAX_CODE_BYTES)), Ok(()));
        assert_eq!(
            check(&"x".repeat(MAX_CODE_BYTES + 1)),
            Err(CodeError::TooLong(MAX_CODE_BYTES + 1))
        );
    }
}
