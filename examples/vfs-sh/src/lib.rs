//! vfs-sh: the agents' shell.
//!
//! Agents send one-line, bash-shaped scripts such as
//! `grep -rn "refund policy" /files | head -20`; vfs-sh interprets them
//! inside the sandbox over the read-only document filesystem. The language
//! is bash's (variables, substitutions, loops, conditionals, functions,
//! redirections that read or discard) and the commands are GNU-compatible
//! (`help` lists them); nothing runs a host program or writes a file.
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

mod arith;
mod brace;
pub mod cases;
mod commands;
mod datestr;
#[cfg(not(target_family = "wasm"))]
pub mod dirfs;
mod exec;
pub mod fs;
mod glob;
mod lex;
mod longest;
mod lossless;
mod pattern;
mod search;
mod shell;
mod syntax;
mod time;

pub use exec::{USAGE, run, run_argv};

/// Entry points for the fuzz targets: the parsers vfs-sh takes from
/// libraries, without running what they parse (a jq program may loop until
/// the sandbox's deadline, which native fuzzing does not have).
#[doc(hidden)]
pub mod fuzzing {
    /// Compiles `program` as jq does, reads `input` as a stream of JSON
    /// values and writes each back; returns how many values were read.
    pub fn jq(program: &str, input: &[u8]) -> usize {
        crate::commands::jq_check(program, input)
    }

    /// Reads `input` as `python3 -m json.tool` does and checks that what
    /// it writes reads back as itself; returns the output's length.
    pub fn json_tool(input: &[u8]) -> usize {
        crate::commands::json_tool_check(input)
    }

    /// Parses an awk program; whether it parsed.
    pub fn awk(program: &str) -> bool {
        crate::commands::awk_check(program)
    }

    /// Parses a sed script (`-E` when `extended`), compiling its regexes;
    /// whether it parsed.
    pub fn sed(script: &str, extended: bool) -> bool {
        crate::commands::sed_check(script, extended)
    }

    /// Translates a POSIX regex (basic or extended) to the engines' syntax
    /// and compiles it, as grep does; whether it compiled.
    pub fn posix_regex(pattern: &str, extended: bool) -> bool {
        use crate::pattern::{Syntax, translate};
        let syntax = if extended {
            Syntax::Extended
        } else {
            Syntax::Basic
        };
        let Ok(t) = translate(pattern, syntax) else {
            return false;
        };
        if t.backrefs {
            fancy_regex::RegexBuilder::new(&t.regex)
                .delegate_size_limit(1 << 20)
                .build()
                .is_ok()
        } else {
            regex::RegexBuilder::new(&t.regex)
                .size_limit(1 << 20)
                .build()
                .is_ok()
        }
    }

    /// Evaluates a shell arithmetic expression over variables that start
    /// unset (arithmetic has no loops; references recurse to a limit).
    pub fn arithmetic(expr: &str) -> Option<i64> {
        struct Vars(std::collections::HashMap<String, i64>);
        impl crate::arith::Vars for Vars {
            fn get_var(&mut self, name: &str) -> String {
                self.0.get(name).map(i64::to_string).unwrap_or_default()
            }
            fn set_var(&mut self, name: &str, value: i64) {
                self.0.insert(name.to_owned(), value);
            }
        }
        crate::arith::eval(expr, &mut Vars(Default::default())).ok()
    }

    /// Whether `bytes` come back from vfs-sh's text as themselves (see
    /// `src/lossless.rs`): decoded, encoded again, and counted in bytes.
    pub fn lossless_round_trip(bytes: &[u8]) -> bool {
        use crate::lossless::{byte_len, decode, encode, normalize};
        let text = decode(bytes);
        *encode(&text) == *bytes && byte_len(&text) == bytes.len() && normalize(&text) == text
    }

    /// Reads a `date -d` string, as GNU date would at a fixed clock.
    pub fn date(text: &str) -> Option<i64> {
        crate::datestr::parse_date(text, 1_700_000_000)
    }

    /// Parses a bc program, line by line as bc reads it; how many of its
    /// items (lines and definitions) parsed.
    pub fn bc(program: &str) -> usize {
        crate::commands::bc_check(program)
    }

    /// Parses an `expand -t` tab-stop list and walks its stops.
    pub fn tab_stops(spec: &str) -> Option<usize> {
        crate::commands::tab_stops_check(spec)
    }

    /// Matches `name` against a shell glob pattern, extended patterns
    /// (`@(a|b)`, `!(x)`) included.
    pub fn glob(pattern: &str, name: &str) -> bool {
        crate::glob::Pattern::with_extglob(pattern, true).matches(name, false)
    }
}
