//! `vfs-sh`, the agents' shell, built into the binary: runs shell-like text
//! scripts (`grep -rn TODO /files | head -5`) as an ordinary script, in the
//! same sandbox, with the same limits and audit as any other.

use std::sync::OnceLock;

use bytes::Bytes;

use crate::runtime::{RunSpec, ScriptId, Stdin};

/// The `vfs-sh` component, built for `wasm32-wasip2` by the build script.
static VFS_SH: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vfs-sh.wasm"));

/// The shell's component bytes.
pub fn component() -> Bytes {
    Bytes::from_static(VFS_SH)
}

/// The shell's script id, hashed once per process.
pub fn id() -> &'static ScriptId {
    static ID: OnceLock<ScriptId> = OnceLock::new();
    ID.get_or_init(|| ScriptId::of(VFS_SH))
}

/// A script text was refused before running.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShError {
    /// Longer than the limit.
    #[error("the script is {len} bytes; at most {max} are allowed")]
    TooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: u64,
    },
    /// Empty, or only white space.
    #[error("the script is empty")]
    Empty,
}

/// Checks a script text against the size limit.
pub fn check(script: &str, max: u64) -> Result<(), ShError> {
    if script.len() as u64 > max {
        return Err(ShError::TooLong {
            len: script.len(),
            max,
        });
    }
    if script.trim().is_empty() {
        return Err(ShError::Empty);
    }
    Ok(())
}

/// Makes `spec` a run of `script` by the shell.
pub fn shell_spec(mut spec: RunSpec, script: &str) -> RunSpec {
    spec.program = "vfs-sh".to_owned();
    spec.args = vec!["-c".to_owned(), script.to_owned()];
    spec.stdin = Stdin::Empty;
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_empty_and_overlong_scripts() {
        assert_eq!(check("ls", 4096), Ok(()));
        assert_eq!(check(" \n ", 4096), Err(ShError::Empty));
        assert_eq!(
            check(&"x".repeat(4097), 4096),
            Err(ShError::TooLong {
                len: 4097,
                max: 4096
            })
        );
        assert_eq!(check(&"x".repeat(4096), 4096), Ok(()));
    }

    #[test]
    fn the_shell_is_built_in() {
        assert!(component().starts_with(b"\0asm"));
    }
}
