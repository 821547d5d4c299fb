//! vfs-sh: the agents' shell.
//!
//! Agents send one-line, bash-shaped scripts such as
//! `grep -rn "refund policy" /files | head -20`; vfs-sh interprets them
//! inside the sandbox over the read-only document filesystem: `;`, `&&`,
//! `||`, pipes, POSIX quoting, globs, and a set of GNU-compatible commands
//! (`help` lists them). Anything that would expand variables, run other
//! programs or write is refused before the script runs.
//!
//! The shell reads documents only through the [`fs::Fs`] trait: the wasm
//! binary implements it over the vfsbox SDK, tests over real directories
//! ([`dirfs::DirFs`]).
//!
//! ```
//! # #[cfg(not(target_family = "wasm"))] {
//! let dir = std::env::temp_dir();
//! let mut fs = vfs_sh::dirfs::DirFs::new().mount("files", &dir).with_cwd("/files");
//! let mut out = Vec::new();
//! let mut err = Vec::new();
//! let status = vfs_sh::run(&mut fs, "echo hello | tr a-z A-Z", Box::new(std::io::empty()), &mut out, &mut err);
//! assert_eq!((status, out), (0, b"HELLO\n".to_vec()));
//! # }
//! ```

mod brace;
pub mod cases;
mod commands;
#[cfg(not(target_family = "wasm"))]
pub mod dirfs;
mod exec;
pub mod fs;
mod glob;
mod lex;
mod parse;
mod pattern;
mod search;
mod time;

pub use exec::{USAGE, run, run_argv};
