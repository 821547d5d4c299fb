//! Running a parsed script: and-or lists, pipelines, word expansion, and the
//! context ([`Cx`]) every command runs in.
//!
//! Pipelines run stage by stage: every stage but the last writes into a
//! buffer that becomes the next stage's standard input, and the last stage
//! writes straight to the real standard output as it goes, so that output
//! produced before the host ends a script (at a budget) is kept.

use std::fmt::Display;
use std::io::{Read, Write};
use std::time::SystemTime;

use crate::brace;
use crate::commands;
use crate::fs::{Fs, FsError};
use crate::glob;
use crate::lex::{self, Word, WordChar};
use crate::parse::{self, Conn, Pipeline};

/// State that lives for the whole script.
pub(crate) struct Env {
    /// The time the script started (for `ls -l`, `find -mtime`).
    pub(crate) now: SystemTime,
    /// The real standard input, until a command takes it.
    stdin: Option<Box<dyn Read>>,
    /// Set by `exit`: the status to end the script with.
    pub(crate) exit: Option<u8>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

/// What one command runs with: the filesystem, its standard input, its
/// output and error streams.
pub(crate) struct Cx<'s> {
    pub(crate) fs: &'s mut dyn Fs,
    pub(crate) env: &'s mut Env,
    /// Piped input; `None` means the script's own standard input.
    pub(crate) input: Option<Vec<u8>>,
    /// Whether the command is one stage of a longer pipeline (then, as in
    /// bash's subshells, `cd` and `exit` do not affect the script).
    pub(crate) in_pipeline: bool,
    /// How many `xargs` this command runs inside.
    pub(crate) depth: u32,
    pub(crate) out: &'s mut dyn Write,
    pub(crate) err: &'s mut dyn Write,
}

impl Cx<'_> {
    /// Takes the command's standard input, whole.
    pub(crate) fn stdin(&mut self) -> Vec<u8> {
        if let Some(input) = self.input.take() {
            return input;
        }
        let mut buf = Vec::new();
        if let Some(mut r) = self.env.stdin.take() {
            // A failing stdin reads as what arrived before the failure.
            let _ = r.read_to_end(&mut buf);
        }
        buf
    }

    /// Writes bytes to standard output. A closed output is not an error
    /// the script can do anything about, so failures are ignored.
    pub(crate) fn out(&mut self, bytes: &[u8]) {
        let _ = self.out.write_all(bytes);
    }

    /// Writes a string to standard output.
    pub(crate) fn outs(&mut self, s: &str) {
        self.out(s.as_bytes());
    }

    /// Writes one line (a newline is added) to standard error.
    pub(crate) fn err(&mut self, msg: impl Display) {
        let _ = writeln!(self.err, "{msg}");
    }

    /// Reads a whole operand: `-` is standard input, anything else a
    /// document.
    pub(crate) fn read_operand(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        if path == "-" {
            Ok(self.stdin())
        } else {
            self.fs.read(path)
        }
    }

    /// A context for a nested command (run by `xargs`) with its own input.
    pub(crate) fn nested(&mut self, input: Vec<u8>) -> Cx<'_> {
        Cx {
            fs: &mut *self.fs,
            env: &mut *self.env,
            input: Some(input),
            in_pipeline: true,
            depth: self.depth + 1,
            out: &mut *self.out,
            err: &mut *self.err,
        }
    }
}

/// Tilde expansion: an unquoted `~` alone or before `/` means `/` (the
/// sandbox has no home directory; the host reads `~` the same way).
fn tilde(word: &Word) -> Word {
    let chars = &word.chars;
    let lone = chars.len() == 1;
    let before_slash = chars.get(1).is_some_and(|c| c.ch == '/');
    match chars.first() {
        Some(WordChar {
            ch: '~',
            quoted: false,
        }) if lone || before_slash => {
            let mut rest = chars[1..].to_vec();
            if lone {
                rest.push(WordChar {
                    ch: '/',
                    quoted: true,
                });
            }
            Word { chars: rest }
        }
        _ => word.clone(),
    }
}

/// Expands a command's words into its arguments, in bash's order: braces,
/// tilde, then globs.
fn expand(fs: &mut dyn Fs, words: &[Word]) -> Result<Vec<String>, String> {
    let mut args = Vec::new();
    for w in words {
        for w in brace::expand(w)? {
            let w = tilde(&w);
            if w.has_glob() {
                args.extend(glob::expand(fs, &w)?);
            } else {
                args.push(w.text());
            }
        }
    }
    Ok(args)
}

fn run_pipeline(
    fs: &mut dyn Fs,
    env: &mut Env,
    pipeline: &Pipeline,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let n = pipeline.commands.len();
    let mut input: Option<Vec<u8>> = None;
    let mut status = 0;
    for (i, words) in pipeline.commands.iter().enumerate() {
        let last = i + 1 == n;
        let argv = match expand(fs, words) {
            Ok(argv) => argv,
            Err(msg) => {
                let _ = writeln!(err, "{msg}");
                status = 1;
                input = (!last).then(Vec::new);
                continue;
            }
        };
        let mut buf = Vec::new();
        let sink: &mut dyn Write = if last { &mut *out } else { &mut buf };
        let mut cx = Cx {
            fs: &mut *fs,
            env: &mut *env,
            input: input.take().or_else(|| (i > 0).then(Vec::new)),
            in_pipeline: n > 1,
            depth: 0,
            out: sink,
            err: &mut *err,
        };
        status = commands::dispatch(&mut cx, &argv);
        if !last {
            input = Some(buf);
        }
    }
    status
}

/// Runs a script; returns its exit status. Refused or malformed scripts
/// print why on `err` and return 2 without running anything.
pub fn run(
    fs: &mut dyn Fs,
    script: &str,
    stdin: Box<dyn Read>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let script = match lex::tokenize(script).and_then(parse::parse) {
        Ok(s) => s,
        Err(msg) => {
            let _ = writeln!(err, "{msg}");
            return 2;
        }
    };
    let mut env = Env {
        now: SystemTime::now(),
        stdin: Some(stdin),
        exit: None,
    };
    let mut status = 0;
    for (conn, pipeline) in &script.items {
        let go = match conn {
            Conn::Seq => true,
            Conn::And => status == 0,
            Conn::Or => status != 0,
        };
        if go {
            status = run_pipeline(fs, &mut env, pipeline, out, err);
        }
        if let Some(code) = env.exit {
            status = code;
            break;
        }
    }
    let _ = out.flush();
    status
}

/// The usage message for a wrong invocation of the binary.
pub const USAGE: &str = "usage: vfs-sh -c SCRIPT";

/// Runs `vfs-sh -c SCRIPT` from its command line (`argv[0]` included);
/// any other invocation prints [`USAGE`] and returns 2.
pub fn run_argv(
    argv: &[String],
    fs: &mut dyn Fs,
    stdin: Box<dyn Read>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    match argv {
        [_, flag, script] if flag == "-c" => run(fs, script, stdin, out, err),
        _ => {
            let _ = writeln!(err, "{USAGE}");
            2
        }
    }
}
