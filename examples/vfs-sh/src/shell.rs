//! The interpreter: runs a parsed script as bash would.
//!
//! State is what a bash process holds (variables and arrays, functions,
//! positional parameters, `$?`, `set` and `shopt` options); pipeline stages,
//! `( )` and `$(...)` run on a copy of it that is dropped afterwards, as
//! bash runs them in subshells. Pipeline stages run one after another, each
//! writing into a buffer that becomes the next one's standard input; the
//! last stage writes straight to the real standard output as it goes, so
//! that output produced before the host ends a script (at a budget) is
//! kept. Loops are bounded only by the script's deadline, fuel and output
//! caps, like any other guest code.
//!
//! Nothing here writes a file: a redirection to anything but `/dev/null`,
//! `/dev/stdout` or `/dev/stderr` fails as on a read-only filesystem.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;

use crate::arith;
use crate::commands;
use crate::exec::{Cx, Env, InBuf, Input, Overlay, PIPE_BUFFER, Pipe, Wanted};
use crate::fs::Fs;
use crate::glob;
use crate::lex::{Word as GlobWord, WordChar};
use crate::syntax::{
    self, AndOr, Assign, AssignValue, CaseNext, CaseOp, Command, Compound, Cond, Conn, List, Param,
    ParamOp, Part, Pipeline, Redir, RedirOp, ReplaceMode, Word,
};

/// How a command leaves the normal flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// `exit`, a fatal expansion error, or `set -e`.
    Exit(u8),
    /// `return` from a function or sourced script.
    Return(u8),
    /// `break N`
    Break(u32),
    /// `continue N`
    Continue(u32),
    /// An expansion error that abandons the line being run, as bash's
    /// `DISCARD` does (`$((1/0))`, `${/x}`, assigning a readonly
    /// variable): the shell goes on with the next line with status 1; a
    /// subshell, a function's caller on the same line, a loop, all end.
    Discard,
}

type R<T> = Result<T, Flow>;

/// What a loop does after one run of its body.
enum Step {
    Next(Option<u8>),
    Stop(R<u8>),
}

/// A variable's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Str(String),
    Array(Vec<Option<String>>),
    Assoc(Vec<(String, String)>),
}

/// The order bash lists an associative array in (`${!m[@]}`, `${m[@]}`,
/// `declare -p`): its hash table's, bucket by bucket (FNV-1 of the key,
/// 1024 buckets, four times as many once there are two entries a bucket),
/// the latest entry first within a bucket. The entries are kept in the
/// order they were added; the table is rebuilt from that order.
pub(crate) fn assoc_order(m: &[(String, String)]) -> impl Iterator<Item = &(String, String)> {
    let hashes: Vec<usize> = m
        .iter()
        .map(|(k, _)| {
            k.bytes().fold(2_166_136_261u32, |h, b| {
                h.wrapping_mul(16_777_619) ^ u32::from(b)
            }) as usize
        })
        .collect();
    // Each bucket holds its chain with the head last.
    let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); 1024];
    for (i, h) in hashes.iter().enumerate() {
        if i >= buckets.len() * 2 {
            // bash's rehash walks each old chain from its head and puts
            // every entry at the head of its new chain.
            let mut grown = vec![Vec::new(); buckets.len() * 4];
            for chain in &buckets {
                for &e in chain.iter().rev() {
                    grown[hashes[e] & (buckets.len() * 4 - 1)].push(e);
                }
            }
            buckets = grown;
        }
        let n = buckets.len();
        buckets[h & (n - 1)].push(i);
    }
    buckets
        .into_iter()
        .flat_map(|chain| chain.into_iter().rev())
        .map(move |i| &m[i])
}

/// `set -o` and `shopt` options.
#[derive(Debug, Clone, Default)]
struct Opts {
    errexit: bool,
    nounset: bool,
    pipefail: bool,
    noglob: bool,
    xtrace: bool,
    globstar: bool,
    nullglob: bool,
    failglob: bool,
    dotglob: bool,
    nocaseglob: bool,
    nocasematch: bool,
    /// `set -n`: commands are read and parsed, not run (and, as nothing
    /// runs, it is never turned off again).
    noexec: bool,
    /// The other `shopt` and `set -o` options a script set, which change
    /// nothing here but are listed as set. Boxed: held inline, the map
    /// made the functions nested calls go through need more stack, and
    /// 200 nested calls no longer fitted the guest's (measured in the
    /// sandbox: a stack-exhausted trap at 199).
    #[allow(clippy::box_collection, reason = "measured: see above")]
    other: Box<std::collections::BTreeMap<&'static str, bool>>,
}

/// `s` in single quotes, each `'` in it written `'\''`: how bash quotes
/// an alias's value, a trap's action, a word of `set -x`.
fn single_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A compound assignment's `[KEY]=VALUE` element split into its key and
/// value words, the key's quotes and expansions kept for expanding
/// (`["a b"]=1`, `[$k]=v`, `[${x}y]="a b"`); `None` for a plain element.
fn subscripted(w: &Word) -> Option<(Word, Word)> {
    let Some(Part::Lit(first)) = w.parts.first() else {
        return None;
    };
    first.strip_prefix('[')?;
    // The first unquoted `]=` closes the key.
    let (at, close) = w.parts.iter().enumerate().find_map(|(i, p)| match p {
        Part::Lit(t) => t
            .match_indices("]=")
            .map(|(c, _)| c)
            .find(|&c| i > 0 || c > 0)
            .map(|c| (i, c)),
        _ => None,
    })?;
    let mut key = w.parts[..=at].to_vec();
    let mut value = w.parts[at..].to_vec();
    if let Some(Part::Lit(t)) = key.last_mut() {
        t.truncate(close);
    }
    if let Some(Part::Lit(t)) = key.first_mut() {
        t.remove(0);
    }
    if let Some(Part::Lit(t)) = value.first_mut() {
        *t = t[close + 2..].to_owned();
    }
    Some((Word { parts: key }, Word { parts: value }))
}

/// Whether bash shows `s` in `$'...'`: it holds a control character or
/// a byte outside valid UTF-8.
fn needs_ansi_c(s: &str) -> bool {
    s.chars()
        .any(|c| c.is_control() || crate::lossless::raw_byte(c).is_some())
}

/// `${x@Q}`: the value quoted for reuse as bash quotes it, in single
/// quotes, or in `$'...'` when it holds control characters or bytes
/// outside valid UTF-8.
fn bash_quote(s: &str) -> String {
    if !needs_ansi_c(s) {
        return single_quote(s);
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x1b' => out.push_str("\\E"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\{:03o}", c as u32));
            }
            c => match crate::lossless::raw_byte(c) {
                Some(b) => out.push_str(&format!("\\{b:03o}")),
                None => out.push(c),
            },
        }
    }
    out.push('\'');
    out
}

/// A word of an `xtrace` line as bash writes it: `''` when empty, single
/// quotes when it holds a character the shell would read specially, `$'...'`
/// when it holds a control character, bare otherwise.
fn xtrace_word(w: &str) -> String {
    const METAS: &str = " \t\n'\"\\|&;()<>!{}*[?]^$`";
    let first_special = matches!(w.chars().next(), Some('~' | '#'));
    let tilde_after = w.contains("=~") || w.contains(":~");
    if w.is_empty() {
        "''".to_string()
    } else if first_special || tilde_after || w.chars().any(|c| METAS.contains(c)) {
        single_quote(w)
    } else if needs_ansi_c(w) {
        bash_quote(w)
    } else {
        w.to_string()
    }
}

/// A declaration builtin's `NAME=(...)` argument (its elements marked by
/// the parser, see [`crate::syntax::ELEMENT`]) as bash traces it:
/// `NAME=('a' 'b c')`, `NAME=(['k']='v')`; with the name (and `+` of `+=`)
/// for the command line's own trace.
fn compound_trace(word: &str) -> Option<(&str, String)> {
    let (lhs, value) = word.split_once('=')?;
    let inner = value.strip_prefix('(')?.strip_suffix(')')?;
    let shown: Vec<String> = crate::syntax::elements(inner)?
        .map(|e| match crate::syntax::keyed_element(e) {
            Some((k, v)) => format!("[{}]={}", single_quote(k), single_quote(v)),
            None => single_quote(e),
        })
        .collect();
    Some((
        lhs.trim_end_matches('+'),
        format!("{lhs}=({})", shown.join(" ")),
    ))
}

/// What a subshell copies and drops.
#[derive(Debug, Clone)]
struct State {
    vars: HashMap<String, Value>,
    funcs: HashMap<String, Rc<Command>>,
    positional: Vec<String>,
    arg0: String,
    opts: Opts,
    /// For each function call, the values its `local`s hid.
    locals: Vec<Vec<(String, Option<Value>)>>,
    /// `declare -i -r -l -u` attributes, by variable name.
    attrs: HashMap<String, Attrs>,
    /// `alias NAME=VALUE`. Kept and listed; a non-interactive bash does not
    /// expand them (without `shopt -s expand_aliases`), and neither does
    /// vfs-sh.
    aliases: std::collections::BTreeMap<String, String>,
    /// The variables exported to commands and child shells (`export`,
    /// `declare -x`, the environment the script started with).
    exported: std::collections::HashSet<String>,
    /// `umask`: kept and shown; nothing is ever created.
    pub(crate) umask: u32,
}

/// A variable's `declare` attributes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Attrs {
    /// `-i`: assignments are arithmetic.
    pub(crate) integer: bool,
    /// `-r`, `readonly`: assignments fail.
    pub(crate) readonly: bool,
    /// `-l`, `-u`: assigned values change case.
    pub(crate) lower: bool,
    pub(crate) upper: bool,
    /// `-n`: the value names the variable that reads and assignments
    /// reach.
    pub(crate) nameref: bool,
}

/// A command's streams.
pub(crate) struct Io<'o> {
    pub(crate) input: Input,
    pub(crate) out: &'o mut dyn Write,
    pub(crate) err: &'o mut dyn Write,
}

/// An output stream shared by several descriptors (`2>&1`), or none.
enum Sink<'r, 'w> {
    To(&'r RefCell<&'w mut dyn Write>),
    Null,
}

impl Write for Sink<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::To(w) => w.borrow_mut().write(buf),
            Sink::Null => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::To(w) => w.borrow_mut().flush(),
            Sink::Null => Ok(()),
        }
    }
}

/// The shell's standard output (`fd` 1) or error (2), written where its
/// `exec` route sends it.
struct Routed<'r, 'w> {
    fd: usize,
    route: Rc<std::cell::Cell<[Target; 3]>>,
    out: &'r RefCell<&'w mut dyn Write>,
    err: &'r RefCell<&'w mut dyn Write>,
}

impl Write for Routed<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.route.get()[self.fd] {
            Target::Out => self.out.borrow_mut().write(buf),
            Target::Err => self.err.borrow_mut().write(buf),
            Target::Null | Target::Closed => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.borrow_mut().flush()?;
        self.err.borrow_mut().flush()
    }
}

/// Where an output descriptor points, during redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Out,
    Err,
    Null,
    Closed,
}

/// How deep functions may call each other, in all nested shells together
/// (bash has no limit but its stack; the guest's stack is smaller).
const MAX_CALLS: u32 = 200;

/// How deep command lists may run inside each other, in all nested shells
/// together. A level costs the guest up to 1.5 KiB of its own stack in
/// linear memory (1 MiB, Rust's default for the target: a loop inside a
/// `case` arm inside a function, measured in a release build) and up to
/// 2 KiB of the native stack the host gives WebAssembly (4 MiB), so this
/// many leave a quarter of the first for the command that runs at the
/// bottom. A function calling itself takes two levels a call, and stops
/// at `MAX_CALLS` first.
pub(crate) const MAX_FRAMES: u32 = 500;

/// The longest value a `${x/p/r}` or `${x#p}` pattern is matched against
/// position by position (a larger value is matched only whole).
const MAX_PATTERN_SUBJECT: usize = 64 << 10;

/// A piece of a word after expansion. Text is kept as runs, not a token
/// a character: `x=$(cat doc)` or `echo "$x"` over a large document holds
/// its text about once, where a token a character took eight bytes each.
#[derive(Debug, Clone)]
enum Tok {
    /// Text, whether it was quoted, and whether it came from an unquoted
    /// expansion (and so may be split).
    Text {
        text: String,
        quoted: bool,
        split: bool,
    },
    /// A quoted empty string: the field exists even if empty.
    Empty,
    /// `"$@"`: a boundary between fields.
    Break,
}

/// An expansion that failed: the message, and whether the script ends
/// (as bash ends a non-interactive shell on `${x:?}` or an unbound
/// variable) or only the command.
#[derive(Debug)]
enum ExpError {
    /// Ends the script with status 127 (`${x:?}`, `set -u`).
    Fatal(String),
    /// Abandons the line being run with status 1 (arithmetic errors, a
    /// bad substitution, a readonly variable, a glob failing under
    /// `failglob`): [`Flow::Discard`].
    Arith(String),
    /// Ends the script with status 1 (an arithmetic error in an array
    /// subscript or an integer variable's value).
    Exit(String),
    /// Fails the command with this status (an arithmetic error inside
    /// `(( ))` or `[[ ]]`).
    Status(String, u8),
    /// Ends the script with status 2: what dash ends a script for (`Bad
    /// substitution`, an arithmetic error in `sh`).
    Posix(String),
    Command(String),
    Flow(Flow),
}

impl ExpError {
    /// An arithmetic error inside `(( ))` or `[[ ]]`: the command fails
    /// with status 1, the line goes on.
    fn failing_command(self) -> ExpError {
        match self {
            ExpError::Arith(m) => ExpError::Status(m, 1),
            e => e,
        }
    }
}

impl From<Flow> for ExpError {
    fn from(f: Flow) -> ExpError {
        ExpError::Flow(f)
    }
}

type E<T> = Result<T, ExpError>;

/// A parameter's value before its operator.
enum PVal {
    /// Unset.
    Unset,
    One(String),
    /// `$@`, `${a[@]}`: several fields (`star`: `$*`, joined in quotes).
    Many(Vec<String>, bool),
}

/// The interpreter over one filesystem.
pub(crate) struct Shell<'a> {
    fs: &'a mut dyn Fs,
    env: &'a mut Env,
    st: State,
    status: u8,
    /// `$?` of the last command substitution (for a bare assignment).
    subst_status: Option<u8>,
    /// How many command substitutions and `eval`s the running command is
    /// inside: `set -x` repeats PS4's first character once more for each.
    trace_level: usize,
    /// Inside an `if`/`while` condition or before `&&`/`||`: `set -e` does
    /// not apply.
    cond: u32,
    calls: u32,
    loops: u32,
    /// How many `source`d files are running (`return` ends one).
    sourcing: u32,
    /// The working directories `cd` left, for subshells to go back.
    cd_log: Vec<String>,
    /// The output of each `<(...)`, by the path it expanded to.
    files: HashMap<String, Rc<Vec<u8>>>,
    next_fd: u32,
    /// The status a fatal expansion error (`${x:?}`, `set -u`) ends the
    /// shell with: 127, but 1 inside `( ... )` and `$( ... )`, as bash
    /// has it.
    fatal_status: u8,
    /// The shell's own standard input, which background jobs do not read.
    script_input: Option<Input>,
    /// Input descriptors 3 to 9 (`3< FILE`, `exec 3< FILE`), for `read -u`
    /// and `<&3`.
    in_fds: [Option<Input>; 10],
    /// Background jobs run so far (`$!` is the last one's number).
    jobs_started: u32,
    /// Each background job's number and exit status, for `wait`.
    pub(crate) jobs: Vec<(u32, u8)>,
    seed: u64,
    /// Standard error of command substitutions, written out to the
    /// enclosing command's standard error once its words are expanded.
    pending_err: Vec<u8>,
    /// The standard input a command substitution inherits.
    cur_input: Input,
    /// `trap CMD EXIT`: run when the script ends.
    exit_trap: Option<String>,
    /// `trap CMD ERR`: run after a command fails where `set -e` would end
    /// the script.
    pub(crate) err_trap: Option<String>,
    /// The actions of trapped signals (and of DEBUG and RETURN), by
    /// number; `""` ignores the signal.
    traps: std::collections::BTreeMap<u32, String>,
    /// `pushd`'s directory stack (below the working directory).
    dir_stack: Vec<String>,
    /// Where the shell's descriptors 1 and 2 go (`Out`, `Err`: the
    /// script's real streams), as `exec` redirections set them.
    exec_route: Rc<std::cell::Cell<[Target; 3]>>,
    /// The shell is `sh`, Debian's dash (`sh -c`, `find -exec sh`, a
    /// `#!/bin/sh` script, awk's `system()`), not bash.
    pub(crate) posix: bool,
}

impl arith::Vars for Shell<'_> {
    fn get_var(&mut self, name: &str) -> String {
        match arith::element_ref(name) {
            // `a[i]`: an indexed array's subscript is arithmetic, an
            // associative array's a key.
            Some((array, key)) => self.element(array, key).ok().flatten().unwrap_or_default(),
            None => self.scalar(name).unwrap_or_default(),
        }
    }

    fn set_var(&mut self, name: &str, value: i64) {
        match arith::element_ref(name) {
            Some((array, key)) => {
                let _ = self.set_element(array, key, value.to_string());
            }
            None => self.set_scalar(name, value.to_string()),
        }
    }
}

fn flow_status(r: R<u8>, status: u8) -> u8 {
    match r {
        Ok(s) => s,
        Err(Flow::Exit(c) | Flow::Return(c)) => c,
        Err(Flow::Discard) => 1,
        Err(Flow::Break(_) | Flow::Continue(_)) => status,
    }
}

fn is_ifs_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

/// `select`'s menu as bash lays it out (`print_select_list`): `N) WORD`
/// in as many columns as fit `columns`, filled down, padded with tabs.
fn select_menu(items: &[String], columns: usize) -> String {
    let n = items.len();
    let number_len = |v: usize| v.to_string().len();
    let indices_len = number_len(n);
    let max_elem = items.iter().map(|w| w.chars().count()).max().unwrap_or(0) + indices_len + 4;
    let mut cols = (columns / max_elem).max(1);
    let mut rows = n / cols + usize::from(!n.is_multiple_of(cols));
    cols = n / rows + usize::from(!n.is_multiple_of(rows));
    if rows == 1 {
        rows = cols;
    }
    let first_len = number_len(rows);
    let indent = |out: &mut String, mut from: usize, to: usize| {
        while to / 8 > from / 8 {
            out.push('\t');
            from += 8 - from % 8;
        }
        while from < to {
            out.push(' ');
            from += 1;
        }
    };
    let mut out = String::new();
    for row in 0..rows {
        let mut ind = row;
        let mut pos = 0;
        loop {
            let len = if pos == 0 { first_len } else { indices_len };
            out.push_str(&format!("{:>len$}) {}", ind + 1, items[ind]));
            let elem = items[ind].chars().count() + len + 2;
            ind += rows;
            if ind >= n {
                break;
            }
            indent(&mut out, pos + elem, pos + max_elem);
            pos += max_elem;
        }
        out.push('\n');
    }
    out
}

/// bash's `time` report in `format` (`TIMEFORMAT`: `%[p][l]R`, `U`, `S`,
/// `%P`, `%%`), for `real` seconds of wall time and no processor time.
fn time_report(format: &str, real: f64) -> String {
    let mut out = String::new();
    let mut cs = format.chars().peekable();
    while let Some(c) = cs.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut precision = 3usize;
        if let Some(d) = cs.peek().and_then(|d| d.to_digit(10)) {
            precision = (d as usize).min(3);
            cs.next();
        }
        let long = cs.peek() == Some(&'l');
        if long {
            cs.next();
        }
        let secs = match cs.next() {
            Some('R') => real,
            Some('U' | 'S') => 0.0,
            Some('P') => {
                out.push('0');
                continue;
            }
            Some('%') => {
                out.push('%');
                continue;
            }
            Some(other) => {
                out.push('%');
                out.push(other);
                continue;
            }
            None => {
                out.push('%');
                break;
            }
        };
        if long {
            let minutes = (secs / 60.0).floor();
            out.push_str(&format!("{minutes}m{:.precision$}s", secs - minutes * 60.0));
        } else {
            out.push_str(&format!("{secs:.precision$}"));
        }
    }
    out
}

/// The status bash reports for a command ended by `SIGPIPE` (128 + 13).
const SIGPIPE_STATUS: u8 = 141;

/// Once the command a pipe fed has ended: if it left more than a pipe's
/// buffer unread (dropped as written, or still in its input), the command
/// that wrote it would have written on after its reader was gone, and met
/// `SIGPIPE`: its status, the last of `statuses`, is 141.
fn sigpipe(statuses: &mut [u8], fed: Option<(Input, u64)>) {
    if let (Some((input, dropped)), Some(writer)) = (fed, statuses.last_mut())
        && dropped + input.borrow().left_unread() > PIPE_BUFFER
    {
        *writer = SIGPIPE_STATUS;
    }
}

/// `$$`: the shell's process id (fixed: a sandbox has no other process).
const SHELL_PID: u32 = 4242;

/// `$PPID`: the process that started the shell (there is none; a fixed
/// number, one below `$$`).
const PPID: u32 = 4241;

/// The number `$!` gives the first background job; the next ones count up.
const FIRST_JOB_PID: u32 = 4300;

/// Names of the shell's builtins (run in the shell, seeing its state).
const BUILTINS: &[&str] = &[
    ":",
    ".",
    "source",
    "cd",
    "exit",
    "return",
    "break",
    "continue",
    "shift",
    "set",
    "unset",
    "export",
    "readonly",
    "local",
    "declare",
    "typeset",
    "read",
    "eval",
    "type",
    "command",
    "builtin",
    "shopt",
    "let",
    "mapfile",
    "readarray",
    "printf",
    "exec",
    "trap",
    "kill",
    "wait",
    "umask",
    "ulimit",
    "hash",
    "alias",
    "unalias",
    "times",
    "jobs",
    "disown",
    "getopts",
    "enable",
    "help",
    "history",
    "timeout",
    "env",
    "printenv",
    "nice",
    "ionice",
    "nohup",
    "stdbuf",
    "time",
    "pushd",
    "popd",
    "dirs",
    "bind",
    "compgen",
];

/// Utilities vfs-sh runs in the shell (they take a command to run) that
/// bash finds as files on `$PATH`.
pub(crate) const IN_SHELL_UTILITIES: &[&str] = &[
    "timeout", "env", "printenv", "nice", "ionice", "nohup", "stdbuf",
];

/// Whether bash itself has `name` as a builtin: the shell's own, less the
/// utilities vfs-sh runs in the shell (`timeout`, `env`...) that bash finds
/// on `$PATH`; with `echo`, `test` and the others that are both.
pub(crate) fn is_bash_builtin(name: &str) -> bool {
    (BUILTINS.contains(&name) && !IN_SHELL_UTILITIES.contains(&name) && name != "time")
        || matches!(name, "echo" | "true" | "false" | "pwd" | "test" | "[")
}

/// The longest last argument `$_` keeps (64 KiB); a longer one leaves
/// it empty.
const LAST_ARG_KEPT: usize = 64 << 10;

/// Whether `name` is a builtin (for `type` and `command -v`).
pub(crate) fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name) || matches!(name, "echo" | "true" | "false" | "pwd" | "test" | "[")
}

impl<'a> Shell<'a> {
    /// A shell with `args[0]` as `$0` and the rest as `$1`...
    pub(crate) fn new(fs: &'a mut dyn Fs, env: &'a mut Env, mut args: Vec<String>) -> Shell<'a> {
        let arg0 = if args.is_empty() {
            "bash".to_owned()
        } else {
            args.remove(0)
        };
        let mut vars = HashMap::new();
        for (k, v) in [
            ("HOME", "/"),
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("IFS", " \t\n"),
            ("SHELL", "/bin/bash"),
            ("LC_ALL", "C"),
            ("TZ", "UTC"),
            ("OPTIND", "1"),
            ("BASH_VERSION", "5.2.15(1)-release"),
            // bash's own, not exported, when the environment has none.
            ("TERM", "dumb"),
            // bash's own, for the sandbox's one account and its system
            // (`id`, `hostname`, `uname` say the same).
            ("BASH", "/usr/bin/bash"),
            ("UID", "0"),
            ("EUID", "0"),
            ("HOSTNAME", "vfsbox"),
            ("HOSTTYPE", "x86_64"),
            ("MACHTYPE", "x86_64-pc-linux-gnu"),
            ("OSTYPE", "linux-gnu"),
            ("SHLVL", "1"),
            ("OPTERR", "1"),
            ("PS4", "+ "),
            ("BASH_SUBSHELL", "0"),
            // The last argument of the command before; at first the
            // shell's own name, as it was started.
            ("_", "bash"),
        ] {
            vars.insert(k.to_owned(), Value::Str(v.to_owned()));
        }
        // Read through `scalar`, which asks the filesystem; kept in `vars`
        // too (and by `cd`) so that listings and commands' environments
        // show it, exported as bash has it.
        vars.insert("PWD".to_owned(), Value::Str(fs.cwd()));
        vars.insert(
            "BASH_VERSINFO".to_owned(),
            Value::Array(
                ["5", "2", "15", "1", "release", "x86_64-pc-linux-gnu"]
                    .iter()
                    .map(|s| Some((*s).to_owned()))
                    .collect(),
            ),
        );
        vars.insert(
            "GROUPS".to_owned(),
            Value::Array(vec![Some("0".to_owned())]),
        );
        vars.insert("DIRSTACK".to_owned(), Value::Array(vec![Some(fs.cwd())]));
        // bash's bookkeeping of aliases, hashed commands and the call
        // stack of files, empty in a command string's shell.
        for name in ["BASH_ARGC", "BASH_ARGV", "BASH_LINENO", "BASH_SOURCE"] {
            vars.insert(name.to_owned(), Value::Array(Vec::new()));
        }
        for name in ["BASH_ALIASES", "BASH_CMDS"] {
            vars.insert(name.to_owned(), Value::Assoc(Vec::new()));
        }
        vars.insert(
            "BASH_LOADABLES_PATH".to_owned(),
            Value::Str(
                "/usr/local/lib/bash:/usr/lib/bash:/opt/local/lib/bash:/usr/pkg/lib/bash:/opt/pkg/lib/bash:."
                    .to_owned(),
            ),
        );
        let seed = env.clock_seed();
        Shell {
            fs,
            env,
            st: State {
                vars,
                funcs: HashMap::new(),
                positional: args,
                arg0,
                opts: Opts::default(),
                locals: Vec::new(),
                // bash's: the account's ids cannot be assigned.
                attrs: ["UID", "EUID"]
                    .into_iter()
                    .map(|n| {
                        let readonly = Attrs {
                            integer: true,
                            readonly: true,
                            ..Attrs::default()
                        };
                        (n.to_owned(), readonly)
                    })
                    .collect(),
                aliases: Default::default(),
                umask: 0o022,
                exported: [
                    "HOME", "PATH", "SHELL", "LC_ALL", "TZ", "PWD", "OLDPWD", "SHLVL",
                ]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            },
            status: 0,
            subst_status: None,
            trace_level: 0,
            cond: 0,
            calls: 0,
            loops: 0,
            sourcing: 0,
            cd_log: Vec::new(),
            files: HashMap::new(),
            next_fd: 63,
            fatal_status: 127,
            jobs_started: 0,
            jobs: Vec::new(),
            seed,
            pending_err: Vec::new(),
            cur_input: InBuf::bytes(Vec::new()),
            script_input: None,
            in_fds: Default::default(),
            exit_trap: None,
            err_trap: None,
            traps: std::collections::BTreeMap::new(),
            dir_stack: Vec::new(),
            exec_route: Rc::new(std::cell::Cell::new([
                Target::Closed,
                Target::Out,
                Target::Err,
            ])),
            posix: false,
        }
    }

    /// Makes this shell `sh` as Debian has it (dash): POSIX sh, without
    /// bash's own builtins, variables and expansions.
    pub(crate) fn set_posix(&mut self) {
        self.posix = true;
        for bash_own in [
            "BASH_VERSION",
            "BASH_VERSINFO",
            "TERM",
            "BASH",
            "UID",
            "EUID",
            "HOSTNAME",
            "HOSTTYPE",
            "MACHTYPE",
            "OSTYPE",
            "SHLVL",
            "GROUPS",
            "BASH_SUBSHELL",
            "DIRSTACK",
            "BASH_ARGC",
            "BASH_ARGV",
            "BASH_LINENO",
            "BASH_SOURCE",
            "BASH_ALIASES",
            "BASH_CMDS",
            "BASH_LOADABLES_PATH",
        ] {
            self.st.vars.remove(bash_own);
            self.st.attrs.remove(bash_own);
            self.st.exported.remove(bash_own);
        }
        self.st
            .vars
            .insert("_".to_owned(), Value::Str("sh".to_owned()));
    }

    /// `bash -c STRING`: the string, as `BASH_EXECUTION_STRING` holds it.
    pub(crate) fn set_execution_string(&mut self, script: &str) {
        self.st.vars.insert(
            "BASH_EXECUTION_STRING".to_owned(),
            Value::Str(script.to_owned()),
        );
    }

    /// Takes `vars` as exported variables from the environment (a child
    /// shell's, from its parent).
    pub(crate) fn inherit(&mut self, vars: Vec<(String, String)>) {
        for (k, v) in vars {
            self.st.vars.insert(k.clone(), Value::Str(v));
            self.st.exported.insert(k);
        }
        // bash counts itself one shell deeper than its parent (dash
        // passes `SHLVL` on as it is); `$_` starts as the path the parent
        // ran it by.
        if !self.posix {
            let level = self.scalar("SHLVL").and_then(|l| l.parse::<i64>().ok());
            self.set_scalar("SHLVL", (level.unwrap_or(0) + 1).to_string());
        }
        let path = if self.posix {
            "/usr/bin/sh"
        } else {
            "/usr/bin/bash"
        };
        self.set_scalar("_", path.to_owned());
    }

    /// `$_` after assignments alone: empty.
    fn clear_last_arg(&mut self) {
        match self.st.vars.get_mut("_") {
            Some(Value::Str(last)) => *last = String::new(),
            _ => {
                self.st
                    .vars
                    .insert("_".to_owned(), Value::Str(String::new()));
            }
        }
    }

    /// `BASH_SUBSHELL` one deeper, in a subshell (restored with the
    /// subshell's state).
    fn count_subshell(&mut self) {
        if let Some(Value::Str(n)) = self.st.vars.get_mut("BASH_SUBSHELL") {
            *n = (n.parse::<i64>().unwrap_or(0) + 1).to_string();
        }
    }

    /// `DIRSTACK`: the working directory, then the directory stack.
    pub(super) fn sync_dirstack(&mut self) {
        if self.posix {
            return;
        }
        let all = std::iter::once(self.fs.cwd())
            .chain(self.dir_stack.iter().cloned())
            .map(Some)
            .collect();
        self.st
            .vars
            .insert("DIRSTACK".to_owned(), Value::Array(all));
    }

    /// Marks a variable exported (or not).
    pub(crate) fn set_exported(&mut self, name: &str, on: bool) {
        if on {
            self.st.exported.insert(name.to_owned());
        } else {
            self.st.exported.remove(name);
        }
    }

    /// Runs a script to its end; returns its exit status.
    pub(crate) fn run_script(
        &mut self,
        lines: &[List],
        error: Option<&List>,
        input: Input,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> u8 {
        self.script_input = Some(input.clone());
        // The shell's own standard output and error, routed as `exec`
        // redirections (`exec >/dev/null`, `exec 2>&1`) leave them.
        let o = RefCell::new(&mut *out as &mut dyn Write);
        let e = RefCell::new(&mut *err as &mut dyn Write);
        let mut w1 = Routed {
            fd: 1,
            route: self.exec_route.clone(),
            out: &o,
            err: &e,
        };
        let mut w2 = Routed {
            fd: 2,
            route: self.exec_route.clone(),
            out: &o,
            err: &e,
        };
        let mut io = Io {
            input,
            out: &mut w1,
            err: &mut w2,
        };
        let mut r = self.lines(lines, &mut io);
        if let (Ok(_), Some(report)) = (&r, error) {
            // A syntax error is reported under `set -n` too, which runs
            // nothing else.
            self.st.opts.noexec = false;
            r = self.lines(std::slice::from_ref(report), &mut io);
        }
        let mut status = flow_status(r, self.status);
        if let Some(trap) = self.exit_trap.take()
            && let Ok(l) = syntax::parse_as(&trap, self.posix)
        {
            self.status = status;
            if let Err(Flow::Exit(c)) = self.list(&l, &mut io) {
                status = c;
            }
        }
        let _ = io.out.flush();
        status
    }

    // ----- variables -----

    /// The variable `name` stands for: itself, or, for a name reference
    /// (`declare -n`), the variable its value names, followed through as
    /// bash follows them (a chain of eight at most, as a loop would be).
    fn resolve<'n>(&self, name: &'n str) -> std::borrow::Cow<'n, str> {
        let mut name = std::borrow::Cow::Borrowed(name);
        for _ in 0..8 {
            if !self.st.attrs.get(name.as_ref()).is_some_and(|a| a.nameref) {
                break;
            }
            match self.st.vars.get(name.as_ref()) {
                Some(Value::Str(t)) if !t.is_empty() => name = std::borrow::Cow::Owned(t.clone()),
                _ => break,
            }
        }
        name
    }

    /// The next number of `RANDOM` and `SRANDOM`'s generator (xorshift64,
    /// seeded from the clock).
    fn next_random(&mut self) -> u64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed
    }

    fn scalar(&mut self, name: &str) -> Option<String> {
        // dash sets none of bash's dynamic variables; they are plain names.
        let dynamic = !self.posix
            || !matches!(
                name,
                "RANDOM" | "SECONDS" | "EPOCHSECONDS" | "EPOCHREALTIME" | "BASHPID" | "LINENO"
            );
        match name {
            _ if !dynamic => {}
            "PWD" => return Some(self.fs.cwd()),
            "RANDOM" => return Some((self.next_random() % 32768).to_string()),
            "SECONDS" => return Some("0".to_owned()),
            "EPOCHSECONDS" => return Some(crate::time::epoch_seconds(self.env.now).to_string()),
            "EPOCHREALTIME" => {
                let d = self
                    .env
                    .now
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                return Some(format!("{}.{:06}", d.as_secs(), d.subsec_micros()));
            }
            "PPID" => return Some(PPID.to_string()),
            "SHELLOPTS" if !self.posix => return Some(self.options_on(true)),
            "BASHOPTS" if !self.posix => return Some(self.options_on(false)),
            "BASH_ARGV0" if !self.posix => return Some(self.st.arg0.clone()),
            "SRANDOM" if !self.posix => return Some((self.next_random() >> 32).to_string()),
            "LINENO" => return Some(self.env.whence.line.to_string()),
            "#" => return Some(self.st.positional.len().to_string()),
            "?" => return Some(self.status.to_string()),
            "$" | "BASHPID" => return Some(SHELL_PID.to_string()),
            "0" => return Some(self.st.arg0.clone()),
            _ => {}
        }
        if let Ok(n) = name.parse::<usize>() {
            return self.st.positional.get(n.wrapping_sub(1)).cloned();
        }
        let name = self.resolve(name);
        match self.st.vars.get(name.as_ref())? {
            Value::Str(s) => Some(s.clone()),
            Value::Array(a) => a.first().cloned().flatten(),
            Value::Assoc(m) => m.iter().find(|(k, _)| k == "0").map(|(_, v)| v.clone()),
        }
    }

    fn set_scalar(&mut self, name: &str, value: String) {
        let resolved = self.resolve(name);
        let name = &*resolved;
        if self.st.opts.other.get("allexport") == Some(&true) {
            self.st.exported.insert(name.to_owned());
        }
        match self.st.vars.get_mut(name) {
            Some(Value::Array(a)) => {
                if a.is_empty() {
                    a.push(Some(value));
                } else {
                    a[0] = Some(value);
                }
            }
            _ => {
                self.st.vars.insert(name.to_owned(), Value::Str(value));
            }
        }
    }

    /// Whether the shell's locale variables name a UTF-8 locale (as
    /// `commands::utf8_locale` reads them from the environment).
    fn utf8_locale(&mut self) -> bool {
        ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|k| self.scalar(k).filter(|v| !v.is_empty()))
            .is_some_and(|v| {
                let v = v.to_ascii_lowercase();
                v.contains("utf-8") || v.contains("utf8")
            })
    }

    fn set_element(&mut self, name: &str, key: &str, value: String) -> E<()> {
        let resolved = self.resolve(name);
        let name = &*resolved;
        if let Some(Value::Assoc(m)) = self.st.vars.get_mut(name) {
            match m.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value,
                None => m.push((key.to_owned(), value)),
            }
            return Ok(());
        }
        let idx = self.arith_ending(key)?;
        let v = self
            .st
            .vars
            .entry(name.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Str(s) = v {
            *v = Value::Array(vec![Some(std::mem::take(s))]);
        }
        if let Value::Array(a) = v {
            let len = a.len() as i64;
            let i = if idx < 0 { idx + len } else { idx };
            if i < 0 {
                return Err(ExpError::Command(format!(
                    "vfs-sh: {name}[{key}]: bad array subscript"
                )));
            }
            let i = usize::try_from(i).unwrap_or(usize::MAX);
            if i > 1 << 20 {
                return Err(ExpError::Command(format!(
                    "vfs-sh: {name}[{key}]: array index too large"
                )));
            }
            if a.len() <= i {
                a.resize(i + 1, None);
            }
            a[i] = Some(value);
        }
        Ok(())
    }

    /// Evaluates arithmetic; an error ends the script, as in bash (status
    /// 1) and dash (status 2, which has no `**`, `++`, `--`, `,` or `#`).
    fn arith(&mut self, text: &str) -> E<i64> {
        if self.posix {
            if let Some(why) = posix::arith_unsupported(text) {
                return Err(ExpError::Posix(format!(
                    "sh: 1: arithmetic expression: {why}: \"{}\"",
                    text.trim()
                )));
            }
            return arith::eval(text, self)
                .map_err(|e| ExpError::Posix(format!("sh: 1: arithmetic expression: {e}")));
        }
        arith::eval(text, self).map_err(|e| ExpError::Arith(format!("vfs-sh: {e}")))
    }

    /// Evaluates an array subscript or an integer variable's value: an
    /// error there ends the script with status 1, as in bash.
    fn arith_ending(&mut self, text: &str) -> E<i64> {
        self.arith(text).map_err(|e| match e {
            ExpError::Arith(m) => ExpError::Exit(m),
            e => e,
        })
    }

    /// What assigning `value` to `name` stores, by its attributes: a
    /// readonly variable ends the script (status 1) as in bash, an integer
    /// one takes the arithmetic value (added to the old one for `+=`).
    fn attributed(&mut self, name: &str, value: String, append: bool) -> E<(String, bool)> {
        let Some(at) = self.st.attrs.get(name).copied() else {
            return Ok((value, append));
        };
        if at.readonly {
            return Err(ExpError::Arith(format!(
                "vfs-sh: {name}: readonly variable"
            )));
        }
        let mut value = value;
        let mut append = append;
        if at.integer {
            let n = self.arith_ending(if value.is_empty() { "0" } else { &value })?;
            let old = if append {
                let cur = self.scalar(name).unwrap_or_default();
                self.arith_ending(if cur.is_empty() { "0" } else { &cur })?
            } else {
                0
            };
            value = old.wrapping_add(n).to_string();
            append = false;
        }
        if at.lower {
            value = value.to_lowercase();
        }
        if at.upper {
            value = value.to_uppercase();
        }
        Ok((value, append))
    }

    /// What a builtin (`read`, `printf -v`, `mapfile`) stores in `name`,
    /// by the variable's attributes as bash applies them: `None`, with
    /// bash's message, for a readonly variable (the builtin fails with
    /// status 1); an arithmetic error in an integer variable's value ends
    /// the script with status 1.
    pub(crate) fn builtin_value(
        &mut self,
        name: &str,
        value: String,
        io: &mut Io<'_>,
    ) -> R<Option<String>> {
        match self.attributed(name, value, false) {
            Ok((value, _)) => Ok(Some(value)),
            Err(ExpError::Arith(msg)) => {
                self.report(io, &msg);
                Ok(None)
            }
            Err(e) => self.expansion_failed(e, io).map(|_| None),
        }
    }

    /// Performs an assignment; gives back its `set -x` line (bash shows the
    /// value assigned, expanded; an array's elements quoted one by one),
    /// empty when not tracing: quoting a value copies it twice, and a value
    /// may be a whole document.
    fn assign(&mut self, a: &Assign) -> E<String> {
        let op = if a.append { "+=" } else { "=" };
        let tracing = self.st.opts.xtrace;
        // `set -a`: every variable assigned is exported.
        if self.st.opts.other.get("allexport") == Some(&true) {
            self.st.exported.insert(a.name.clone());
        }
        match &a.value {
            AssignValue::Scalar(w) => {
                let v = self.expand_string(w)?;
                let shown = if tracing && !v.is_empty() {
                    xtrace_word(&v)
                } else {
                    String::new()
                };
                let mut trace = if tracing {
                    format!("{}{op}{shown}", a.name)
                } else {
                    String::new()
                };
                let (v, append) = self.attributed(&a.name, v, a.append)?;
                match &a.index {
                    Some((ix, written)) => {
                        let key = self.expand_string(ix)?;
                        // An empty key of an associative array, an empty
                        // subscript (`a[]=`) or a negative one past the
                        // start ends the script, as in bash.
                        let assoc = matches!(
                            self.st.vars.get(&*self.resolve(&a.name)),
                            Some(Value::Assoc(_))
                        );
                        let bad = || {
                            ExpError::Exit(format!(
                                "vfs-sh: {}[{}]: bad array subscript",
                                a.name, written
                            ))
                        };
                        if key.is_empty() && (assoc || written.is_empty()) {
                            return Err(bad());
                        }
                        if tracing {
                            trace = format!("{}[{key}]{op}{shown}", a.name);
                        }
                        let v = if append {
                            let cur = self.element(&a.name, &key)?.unwrap_or_default();
                            cur + &v
                        } else {
                            v
                        };
                        self.set_element(&a.name, &key, v).map_err(|e| match e {
                            ExpError::Command(m) => ExpError::Exit(m),
                            e => e,
                        })?;
                    }
                    None => {
                        let v = if append {
                            self.scalar(&a.name).unwrap_or_default() + &v
                        } else {
                            v
                        };
                        self.set_scalar(&a.name, v);
                    }
                }
                Ok(trace)
            }
            AssignValue::Array(items) => {
                if self.st.attrs.get(&a.name).is_some_and(|at| at.readonly) {
                    return Err(ExpError::Arith(format!(
                        "vfs-sh: {}: readonly variable",
                        a.name
                    )));
                }
                // A name reference's compound assignment reaches its target.
                let target = self.resolve(&a.name).into_owned();
                // The elements in order: `[key]=value` ones and plain words.
                let mut elems: Vec<(Option<String>, Vec<String>)> = Vec::new();
                for w in items {
                    if let Some((key, value)) = subscripted(w) {
                        let key = self.expand_string(&key)?;
                        elems.push((Some(key), vec![self.expand_string(&value)?]));
                        continue;
                    }
                    elems.push((None, self.expand_fields(w)?));
                }
                let trace = if tracing {
                    let shown: Vec<String> = elems
                        .iter()
                        .flat_map(|(k, vals)| {
                            vals.iter().map(move |v| match k {
                                Some(k) => format!("[{}]={}", xtrace_word(k), xtrace_word(v)),
                                None => xtrace_word(v),
                            })
                        })
                        .collect();
                    format!("{}{op}({})", a.name, shown.join(" "))
                } else {
                    String::new()
                };
                let is_assoc = matches!(self.st.vars.get(&target), Some(Value::Assoc(_)));
                if is_assoc {
                    if !a.append {
                        self.st
                            .vars
                            .insert(target.clone(), Value::Assoc(Vec::new()));
                    }
                    for (k, mut v) in elems {
                        if let Some(k) = k {
                            self.set_element(&target, &k, v.pop().unwrap_or_default())?;
                        }
                    }
                    return Ok(trace);
                }
                let arr: Vec<Option<String>> = match (a.append, self.st.vars.get(&target)) {
                    (true, Some(Value::Array(x))) => x.clone(),
                    (true, Some(Value::Str(s))) => vec![Some(s.clone())],
                    _ => Vec::new(),
                };
                // A plain word goes after the element before it; `[N]=`
                // moves there.
                let mut at = arr.len() as i64;
                self.st.vars.insert(target.clone(), Value::Array(arr));
                for (k, vals) in elems {
                    if let Some(k) = k {
                        at = self.arith_ending(&k)?;
                    }
                    for v in vals {
                        self.set_element(&target, &at.to_string(), v)?;
                        at += 1;
                    }
                }
                Ok(trace)
            }
        }
    }

    fn element(&mut self, name: &str, key: &str) -> E<Option<String>> {
        let resolved = self.resolve(name);
        let name = &*resolved;
        match self.st.vars.get(name).cloned() {
            None => Ok(None),
            Some(Value::Str(s)) => Ok((self.arith_ending(key)? == 0).then_some(s)),
            Some(Value::Array(a)) => {
                let idx = self.arith_ending(key)?;
                let len = a.len() as i64;
                let i = if idx < 0 { idx + len } else { idx };
                Ok(usize::try_from(i)
                    .ok()
                    .and_then(|i| a.get(i).cloned().flatten()))
            }
            Some(Value::Assoc(m)) => Ok(m.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())),
        }
    }

    /// `-v ARG` of `[[ ]]` and `test`: whether the variable (an array's
    /// element 0), the element `NAME[KEY]`, any element (`NAME[@]`) or the
    /// positional parameter is set.
    fn is_set(&mut self, arg: &str) -> E<bool> {
        if let Some((name, rest)) = arg.split_once('[')
            && let Some(key) = rest.strip_suffix(']')
        {
            if key == "@" || key == "*" {
                let name = self.resolve(name).into_owned();
                return Ok(match self.st.vars.get(&name) {
                    None => false,
                    Some(Value::Str(_)) => true,
                    Some(Value::Array(a)) => a.iter().any(Option::is_some),
                    Some(Value::Assoc(m)) => !m.is_empty(),
                });
            }
            return Ok(self.element(name, key)?.is_some());
        }
        if let Ok(n) = arg.parse::<usize>() {
            return Ok(n <= self.st.positional.len());
        }
        let name = self.resolve(arg).into_owned();
        Ok(match self.st.vars.get(&name) {
            Some(Value::Array(a)) => a.first().is_some_and(Option::is_some),
            Some(Value::Assoc(m)) => m.iter().any(|(k, _)| k == "0"),
            _ => self.scalar(arg).is_some(),
        })
    }

    fn unset_var(&mut self, name: &str) {
        self.st.vars.remove(name);
        self.st.exported.remove(name);
        self.st.attrs.remove(name);
    }

    fn ifs(&self) -> String {
        match self.st.vars.get("IFS") {
            Some(Value::Str(s)) => s.clone(),
            _ => " \t\n".to_owned(),
        }
    }

    // ----- running -----

    /// Runs a script's lines in turn, as bash's read loop does: an
    /// expansion error that discards a line (see [`Flow::Discard`]) ends
    /// only that line.
    fn lines(&mut self, lines: &[List], io: &mut Io<'_>) -> R<u8> {
        let mut status = 0;
        for line in lines {
            status = match self.list(line, io) {
                Err(Flow::Discard) => {
                    self.status = 1;
                    1
                }
                r => r?,
            };
        }
        Ok(status)
    }

    fn list(&mut self, list: &List, io: &mut Io<'_>) -> R<u8> {
        if self.env.frames >= MAX_FRAMES {
            let _ = writeln!(
                io.err,
                "vfs-sh: the script nests more than {MAX_FRAMES} levels deep as it runs"
            );
            return Err(Flow::Exit(1));
        }
        self.env.frames += 1;
        let r = self.list_items(list, io);
        self.env.frames -= 1;
        r
    }

    fn list_items(&mut self, list: &List, io: &mut Io<'_>) -> R<u8> {
        let mut status = self.status;
        for ao in list {
            if self.st.opts.noexec {
                break;
            }
            status = if ao.background {
                self.background(ao, io)
            } else {
                self.and_or(ao, io)?
            };
        }
        Ok(status)
    }

    /// `select NAME [in WORDS]`: bash's menu (`N) WORD` lines and the `PS3`
    /// prompt, on standard error) for each line read from standard input:
    /// `REPLY` is the line, NAME the word it numbers (empty if none); an
    /// empty line shows the menu again; the end of input ends the loop.
    fn select(&mut self, var: &str, items: Option<&[Word]>, body: &List, io: &mut Io<'_>) -> R<u8> {
        let values = match items {
            None => self.st.positional.clone(),
            Some(words) => match self.expand_words(words) {
                Ok(v) => v,
                Err(e) => return self.expansion_failed(e, io),
            },
        };
        if values.is_empty() {
            return Ok(0);
        }
        let columns = self
            .scalar("COLUMNS")
            .and_then(|c| c.parse().ok())
            .unwrap_or(80);
        let menu = select_menu(&values, columns);
        let mut status = 0;
        let mut show = true;
        self.loops += 1;
        let r = loop {
            if show {
                let _ = io.err.write_all(&crate::lossless::encode(&menu));
            }
            let prompt = self.scalar("PS3").unwrap_or_else(|| "#? ".to_owned());
            let _ = io.err.write_all(&crate::lossless::encode(&prompt));
            let Some(line) = io.input.borrow_mut().read_until(b'\n') else {
                // The end of input ends the loop, with status 1, after a
                // newline on standard output (bash's `putchar`).
                let _ = io.out.write_all(b"\n");
                break Ok(1);
            };
            let line = crate::lossless::decode(&line);
            let reply = line.strip_suffix('\n').unwrap_or(&line).to_owned();
            if reply.trim().is_empty() {
                show = true;
                continue;
            }
            show = false;
            let chosen = reply
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|n| values.get(n).cloned())
                .unwrap_or_default();
            self.set_scalar("REPLY", reply);
            self.set_scalar(var, chosen);
            match self.loop_body(body, io) {
                Step::Next(s) => status = s.unwrap_or(status),
                Step::Stop(r) => break r,
            }
        };
        self.loops -= 1;
        r
    }

    /// `cmd &`: vfs-sh has one thread of work, so the job runs to its end
    /// here, in a subshell; `$!` names it and `wait $!` gives its status.
    /// Only the interleaving of its output with what follows can differ
    /// from bash's. Like bash's, it reads nothing where it would read the
    /// shell's own standard input (bash gives it /dev/null), and reads a
    /// pipe or redirection it stands in.
    fn background(&mut self, ao: &AndOr, io: &mut Io<'_>) -> u8 {
        let status = self.status;
        let own = self
            .script_input
            .as_ref()
            .is_some_and(|s| Rc::ptr_eq(s, &io.input));
        let mut sub = Io {
            input: if own {
                InBuf::bytes(Vec::new())
            } else {
                io.input.clone()
            },
            out: &mut *io.out,
            err: &mut *io.err,
        };
        let done = self.subshell(|sh| {
            sh.count_subshell();
            flow_status(sh.and_or(ao, &mut sub), status)
        });
        self.jobs_started += 1;
        let pid = FIRST_JOB_PID + self.jobs_started;
        self.jobs.push((pid, done));
        self.status = 0;
        0
    }

    fn and_or(&mut self, ao: &AndOr, io: &mut Io<'_>) -> R<u8> {
        let n = ao.rest.len();
        let mut status = self.guarded_pipeline(&ao.first, io, n > 0)?;
        for (k, (conn, p)) in ao.rest.iter().enumerate() {
            let go = match conn {
                Conn::And => status == 0,
                Conn::Or => status != 0,
            };
            if go {
                status = self.guarded_pipeline(p, io, k + 1 < n)?;
            }
        }
        Ok(status)
    }

    /// Runs a pipeline; applies `set -e` unless it is tested (`guarded`,
    /// negated, or inside a condition).
    fn guarded_pipeline(&mut self, p: &Pipeline, io: &mut Io<'_>, guarded: bool) -> R<u8> {
        if guarded || p.bang {
            self.cond += 1;
        }
        let r = self.pipeline(p, io);
        if guarded || p.bang {
            self.cond -= 1;
        }
        self.flush_err(io);
        let mut status = r?;
        if p.bang {
            status = u8::from(status == 0);
        }
        self.status = status;
        if status != 0 && self.cond == 0 && !guarded && !p.bang {
            // The ERR trap (not inside itself), with `$?` the failure's.
            if let Some(trap) = self.err_trap.take() {
                if let Ok(l) = syntax::parse_as(&trap, self.posix) {
                    let r = self.list(&l, io);
                    self.err_trap = Some(trap);
                    self.status = status;
                    r?;
                } else {
                    self.err_trap = Some(trap);
                }
            }
            if self.st.opts.errexit {
                return Err(Flow::Exit(status));
            }
        }
        Ok(status)
    }

    fn pipeline(&mut self, p: &Pipeline, io: &mut Io<'_>) -> R<u8> {
        self.env.whence.line = p.line;
        let Some(posix) = p.time else {
            return self.pipeline_untimed(p, io);
        };
        let start = std::time::Instant::now();
        let r = self.pipeline_untimed(p, io);
        let real = start.elapsed().as_secs_f64();
        let format = if posix {
            "real %2R\nuser %2U\nsys %2S".to_owned()
        } else {
            self.scalar("TIMEFORMAT")
                .unwrap_or_else(|| "\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS".to_owned())
        };
        // The guest cannot see its processor time; user and sys are 0.
        let _ = writeln!(io.err, "{}", time_report(&format, real));
        r
    }

    /// How much of its standard input `cmd` reads, when it is known to
    /// read only the start of it (`head` with a line or byte count and
    /// no file: [`commands::headtail::head_reads`]), or which end of it
    /// its output depends on (`tail` likewise:
    /// [`commands::headtail::tail_prints`]), or whether it only counts it
    /// (`wc` with no operand: [`commands::wc::reads_only_counts`]);
    /// written plainly (no expansion, no redirection, no function or alias
    /// of that name).
    fn what_it_reads(&self, cmd: &Command) -> Option<Wanted> {
        let Command::Simple {
            assigns,
            words,
            redirs,
        } = cmd
        else {
            return None;
        };
        let words: Vec<&str> = words.iter().map(Word::as_lit).collect::<Option<_>>()?;
        let (&name, args) = words.split_first()?;
        if !matches!(name, "head" | "tail" | "wc")
            || !assigns.is_empty()
            || !redirs.is_empty()
            || self.st.funcs.contains_key(name)
            || self.st.aliases.contains_key(name)
        {
            return None;
        }
        match name {
            "head" => commands::headtail::head_reads(args),
            "tail" => commands::headtail::tail_prints(args),
            _ => commands::wc::reads_only_counts(args).then_some(Wanted::Counts),
        }
    }

    /// A command of a pipeline, run in a subshell; bash counts it in
    /// `BASH_SUBSHELL` when it is a compound command other than `( )`
    /// (a simple command there still reads 0).
    fn pipeline_part(&mut self, cmd: &Command, io: &mut Io<'_>, status: u8) -> u8 {
        self.subshell(|sh| {
            if matches!(cmd, Command::Compound(c, _) if !matches!(c, Compound::Subshell(_))) {
                sh.count_subshell();
            }
            flow_status(sh.command(cmd, io), status)
        })
    }

    fn pipeline_untimed(&mut self, p: &Pipeline, io: &mut Io<'_>) -> R<u8> {
        if p.commands.len() == 1 {
            let r = self.command(&p.commands[0], io);
            if let Ok(s) = r {
                self.set_pipestatus(&[s]);
            }
            return r;
        }
        let n = p.commands.len();
        let mut input = io.input.clone();
        let mut statuses = Vec::with_capacity(n);
        // The input the last command wrote for the next one, and what of
        // it its pipe dropped.
        let mut fed: Option<(Input, u64)> = None;
        for (i, cmd) in p.commands.iter().enumerate() {
            let status = self.status;
            if i + 1 == n {
                let mut sub = Io {
                    input,
                    out: &mut *io.out,
                    err: &mut *io.err,
                };
                // `shopt -s lastpipe`: the last command runs in the shell
                // itself, as bash runs it without job control (`bash -c`),
                // so `seq 3 | while read n; do s=$n; done` keeps `s`.
                let s = if self.st.opts.other.get("lastpipe") == Some(&true) {
                    match self.command(cmd, &mut sub) {
                        Ok(s) => s,
                        Err(flow) => {
                            self.set_pipestatus(&statuses);
                            return Err(flow);
                        }
                    }
                } else {
                    self.pipeline_part(cmd, &mut sub, status)
                };
                sigpipe(&mut statuses, fed.take());
                statuses.push(s);
                break;
            }
            let mut pipe = Pipe::wanting(self.what_it_reads(&p.commands[i + 1]));
            let outer = self.env.pipe.replace(pipe.endpoint());
            let s = if p.with_stderr[i] {
                let cell = RefCell::new(&mut pipe as &mut dyn Write);
                let (mut o, mut e) = (Sink::To(&cell), Sink::To(&cell));
                let mut sub = Io {
                    input,
                    out: &mut o,
                    err: &mut e,
                };
                self.pipeline_part(cmd, &mut sub, status)
            } else {
                let mut sub = Io {
                    input,
                    out: &mut pipe,
                    err: &mut *io.err,
                };
                self.pipeline_part(cmd, &mut sub, status)
            };
            self.env.pipe = outer;
            sigpipe(&mut statuses, fed.take());
            statuses.push(s);
            let dropped = pipe.dropped();
            input = pipe.into_input();
            fed = Some((Rc::clone(&input), dropped));
        }
        let last = statuses.last().copied().unwrap_or(0);
        self.set_pipestatus(&statuses);
        if self.st.opts.pipefail {
            return Ok(statuses
                .iter()
                .rev()
                .find(|&&s| s != 0)
                .copied()
                .unwrap_or(0));
        }
        Ok(last)
    }

    /// `PIPESTATUS`: the statuses of the last pipeline's commands.
    fn set_pipestatus(&mut self, statuses: &[u8]) {
        let items = statuses.iter().map(|s| Some(s.to_string())).collect();
        self.st
            .vars
            .insert("PIPESTATUS".to_owned(), Value::Array(items));
    }

    /// `shopt -s extglob`: patterns take `@(a|b)` and its kin.
    fn extglob(&self) -> bool {
        self.st.opts.other.get("extglob") == Some(&true)
    }

    /// Runs `f` on a copy of the shell's state, dropped afterwards; the
    /// working directory is restored too.
    fn subshell<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.st.clone();
        let in_fds = self.in_fds.clone();
        let route = self.exec_route.get();
        let (calls, loops) = (self.calls, self.loops);
        let mark = self.cd_log.len();
        self.loops = 0;
        let r = f(self);
        self.st = saved;
        self.in_fds = in_fds;
        self.exec_route.set(route);
        self.calls = calls;
        self.loops = loops;
        if self.cd_log.len() > mark {
            let back = self.cd_log[mark].clone();
            let _ = self.fs.set_cwd(&back);
            self.cd_log.truncate(mark);
        }
        r
    }

    fn command(&mut self, cmd: &Command, io: &mut Io<'_>) -> R<u8> {
        match cmd {
            Command::Simple {
                assigns,
                words,
                redirs,
            } => self.simple(assigns, words, redirs, io),
            Command::Compound(c, redirs) => {
                let r = self.with_redirs(redirs, io, |sh, io| sh.compound(c, io))?;
                self.status = r;
                Ok(r)
            }
            Command::Function(name, body) => {
                self.st.funcs.insert(name.clone(), body.clone());
                Ok(0)
            }
        }
    }

    /// Writes out what command substitutions printed on standard error.
    fn flush_err(&mut self, io: &mut Io<'_>) {
        if !self.pending_err.is_empty() {
            let _ = io.err.write_all(&self.pending_err);
            self.pending_err.clear();
        }
    }

    /// Reports an expansion error: the script ends for a fatal one.
    fn expansion_failed(&mut self, e: ExpError, io: &mut Io<'_>) -> R<u8> {
        self.flush_err(io);
        match e {
            // dash ends the script with 2.
            ExpError::Fatal(msg) if self.posix => {
                self.report(io, &msg);
                Err(Flow::Exit(2))
            }
            ExpError::Fatal(msg) => {
                self.report(io, &msg);
                Err(Flow::Exit(self.fatal_status))
            }
            ExpError::Arith(msg) => {
                self.report(io, &msg);
                Err(Flow::Discard)
            }
            ExpError::Exit(msg) => {
                self.report(io, &msg);
                Err(Flow::Exit(1))
            }
            ExpError::Status(msg, status) => {
                self.report(io, &msg);
                self.status = status;
                Ok(status)
            }
            ExpError::Posix(msg) => {
                self.report(io, &msg);
                Err(Flow::Exit(2))
            }
            ExpError::Command(msg) => {
                self.report(io, &msg);
                self.status = 1;
                Ok(1)
            }
            ExpError::Flow(f) => Err(f),
        }
    }

    /// Writes a `set -x` line: PS4 (its first character once more for each
    /// substitution or `eval` level), then the text.
    fn trace(&mut self, io: &mut Io<'_>, text: &str) {
        let prefix = self.trace_prefix();
        self.flush_err(io);
        let _ = writeln!(io.err, "{prefix}{text}");
    }

    /// PS4 as `set -x` shows it now.
    fn trace_prefix(&mut self) -> String {
        let mut ps4 = match self.st.vars.get("PS4") {
            Some(Value::Str(s)) => s.clone(),
            _ => "+ ".to_owned(),
        };
        // PS4 is expanded each time (`PS4='+ $LINENO: '`).
        if ps4.contains(['$', '`'])
            && let Ok(w) = syntax::parse_expanding_text(&ps4, true)
            && let Ok(v) = self.expand_string(&w)
        {
            ps4 = v;
        }
        let mut chars = ps4.chars();
        let first: String = chars.next().map(String::from).unwrap_or_default();
        format!(
            "{}{first}{}",
            first.repeat(self.trace_level),
            chars.as_str()
        )
    }

    fn simple(
        &mut self,
        assigns: &[Assign],
        words: &[Word],
        redirs: &[Redir],
        io: &mut Io<'_>,
    ) -> R<u8> {
        // Each command's `<(...)` files are numbered from /dev/fd/63 down,
        // as bash numbers the descriptors it opens for that command alone.
        let fd_mark = std::mem::replace(&mut self.next_fd, 63);
        let r = self.simple_command(assigns, words, redirs, io);
        self.next_fd = fd_mark;
        r
    }

    fn simple_command(
        &mut self,
        assigns: &[Assign],
        words: &[Word],
        redirs: &[Redir],
        io: &mut Io<'_>,
    ) -> R<u8> {
        self.subst_status = None;
        self.cur_input = io.input.clone();
        let argv = match self.expand_words(words) {
            Ok(v) => v,
            Err(e) => return self.expansion_failed(e, io),
        };
        self.flush_err(io);
        if argv.is_empty() {
            for a in assigns {
                // The line shows PS4 as it was before the assignment.
                let prefix = self.st.opts.xtrace.then(|| self.trace_prefix());
                match self.assign(a) {
                    Ok(line) => {
                        if let Some(prefix) = prefix {
                            self.flush_err(io);
                            let _ = writeln!(io.err, "{prefix}{line}");
                        }
                    }
                    Err(e) => return self.expansion_failed(e, io),
                }
            }
            self.flush_err(io);
            self.clear_last_arg();
            let status = self.subst_status.unwrap_or(0);
            let r = self.with_redirs(redirs, io, |_, _| Ok(status))?;
            self.status = r;
            return Ok(r);
        }
        // `exec` with redirections alone: they stay for the rest of the
        // shell.
        if argv.len() == 1 && argv[0] == "exec" && !redirs.is_empty() && assigns.is_empty() {
            let s = self.exec_redirs(redirs, io);
            self.status = s;
            return Ok(s);
        }
        // `VAR=x cmd`: the assignments hold for the command only, exported
        // to it.
        let mut saved = Vec::new();
        let mut traced = Vec::new();
        let exported_before = (!assigns.is_empty()).then(|| self.st.exported.clone());
        for a in assigns {
            // A readonly name before a command keeps its value; the
            // command runs.
            if self.st.attrs.get(&a.name).is_some_and(|at| at.readonly) {
                self.say(io, format_args!("{}: readonly variable", a.name));
                continue;
            }
            saved.push((a.name.clone(), self.st.vars.get(&a.name).cloned()));
            match self.assign(a) {
                Ok(line) => traced.push(line),
                Err(e) => {
                    if let Some(before) = exported_before {
                        self.st.exported = before;
                    }
                    return self.expansion_failed(e, io);
                }
            }
            self.st.exported.insert(a.name.clone());
        }
        if self.st.opts.xtrace {
            for line in &traced {
                self.trace(io, line);
            }
            let decl = argv
                .first()
                .is_some_and(|w| crate::syntax::is_declaration(w));
            let mut words = Vec::with_capacity(argv.len());
            for w in &argv {
                // bash traces a declaration's `NAME=(...)` as an assignment
                // line of its own, then the command with the name alone.
                match compound_trace(w).filter(|_| decl) {
                    Some((name, line)) => {
                        self.trace(io, &line);
                        words.push(name.to_owned());
                    }
                    None => words.push(xtrace_word(w)),
                }
            }
            self.trace(io, &words.join(" "));
        }
        let r = self.with_redirs(redirs, io, |sh, io| sh.invoke(&argv, io, false));
        for (name, old) in saved.into_iter().rev() {
            match old {
                Some(v) => {
                    self.st.vars.insert(name, v);
                }
                None => self.unset_var(&name),
            }
        }
        if let Some(before) = exported_before {
            self.st.exported = before;
        }
        // The last argument itself becomes `$_`, moved rather than copied,
        // and not kept at all past `LAST_ARG_KEPT`: a document passed as
        // one (`echo "$x"`) is not held twice over, nor copied again into
        // every subshell after it.
        let mut argv = argv;
        match argv.pop() {
            Some(last) if last.len() <= LAST_ARG_KEPT => {
                self.st.vars.insert("_".to_owned(), Value::Str(last));
            }
            Some(_) => self.clear_last_arg(),
            None => {}
        }
        let s = r?;
        self.status = s;
        Ok(s)
    }

    /// Runs a command by name: a function, a builtin, or one of vfs-sh's
    /// commands (`skip_functions` for `command NAME`).
    fn invoke(&mut self, argv: &[String], io: &mut Io<'_>, skip_functions: bool) -> R<u8> {
        let Some(name) = argv.first() else {
            return Ok(0);
        };
        if !skip_functions && let Some(body) = self.st.funcs.get(name).cloned() {
            return self.call(name, &body, argv[1..].to_vec(), io);
        }
        if self.posix
            && let Some(r) = self.posix_builtin(name, &argv[1..], io)
        {
            return r;
        }
        if BUILTINS.contains(&name.as_str()) {
            return self.builtin(name, &argv[1..], io);
        }
        if matches!(name.as_str(), "test" | "[") {
            return Ok(self.test(name, &argv[1..], io));
        }
        // `/usr/bin/env ls`: a utility that runs a command, named by its path.
        let utility = commands::path_name(name);
        if utility != name && IN_SHELL_UTILITIES.contains(&utility) {
            return self.builtin(utility, &argv[1..], io);
        }
        Ok(self.external(argv, io))
    }

    /// `test` and `[`: the command, with the shell answering `-v NAME`
    /// and `-o OPTION` (answered before it runs, for each operand they
    /// could apply to).
    fn test(&mut self, name: &str, args: &[String], io: &mut Io<'_>) -> u8 {
        let mut answers: HashMap<(bool, &str), bool> = HashMap::new();
        for pair in args.windows(2) {
            let answer = match pair[0].as_str() {
                "-v" => self.is_set(&pair[1]).ok(),
                "-o" => Some(self.set_option_on(&pair[1])),
                _ => None,
            };
            if let Some(a) = answer {
                answers.insert((pair[0] == "-v", &pair[1]), a);
            }
        }
        let shell = |op: &str, arg: &str| answers.get(&(op == "-v", arg)).copied();
        self.with_cx(io, |cx| commands::test::run(cx, name, args, &shell))
    }

    /// Runs one of the command table's commands with the shell's streams.
    #[inline(never)]
    fn external(&mut self, argv: &[String], io: &mut Io<'_>) -> u8 {
        self.with_cx(io, |cx| {
            let status = commands::dispatch(cx, argv);
            // A document read as standard input failed part way: the
            // command saw its input end there, which must not pass for its
            // end.
            let failure = cx.input.borrow_mut().take_failure();
            match failure {
                Some(why) => {
                    let name = argv.first().map_or("", String::as_str);
                    cx.err(format_args!("vfs-sh: {name}: read error: {why}"));
                    status.max(1)
                }
                None => status,
            }
        })
    }

    /// Runs `f` with a command's context: the shell's filesystem, its
    /// streams and its exported variables.
    fn with_cx<T>(&mut self, io: &mut Io<'_>, f: impl FnOnce(&mut Cx<'_>) -> T) -> T {
        let mut fs = Overlay {
            inner: &mut *self.fs,
            files: &self.files,
        };
        let (vars, exported) = (&self.st.vars, &self.st.exported);
        // What a command sees of the shell: its exported variables.
        let environ = || {
            let mut all: Vec<(String, String)> = vars
                .iter()
                .filter(|(k, _)| exported.contains(*k))
                .filter_map(|(k, v)| match v {
                    Value::Str(s) => Some((k.clone(), s.clone())),
                    _ => None,
                })
                .collect();
            all.sort();
            all
        };
        let mut cx = Cx {
            fs: &mut fs,
            env: &mut *self.env,
            input: io.input.clone(),
            depth: 0,
            out: &mut *io.out,
            err: &mut *io.err,
            environ: &environ,
        };
        f(&mut cx)
    }

    fn call(&mut self, name: &str, body: &Command, args: Vec<String>, io: &mut Io<'_>) -> R<u8> {
        if self.env.calls >= MAX_CALLS {
            let _ = writeln!(
                io.err,
                "vfs-sh: {name}: maximum function nesting level exceeded ({MAX_CALLS})"
            );
            return Err(Flow::Exit(1));
        }
        self.calls += 1;
        self.env.calls += 1;
        let saved = std::mem::replace(&mut self.st.positional, args);
        self.st.locals.push(Vec::new());
        // `FUNCNAME`: the functions being run, innermost first (`bash -c`
        // puts no `main` under them).
        let callers = self.st.vars.remove("FUNCNAME");
        let mut names = vec![Some(name.to_owned())];
        if let Some(Value::Array(outer)) = &callers {
            names.extend(outer.iter().cloned());
        }
        self.st
            .vars
            .insert("FUNCNAME".to_owned(), Value::Array(names));
        let loops = std::mem::replace(&mut self.loops, 0);
        // Functions do not inherit the ERR trap (bash's without `set -E`).
        let err_trap = self.err_trap.take();
        // bash names a command string's functions `environment` in their
        // messages (`environment: line 2: nosuch: command not found`).
        // The caller's line is its own again after the call.
        let whence = &mut self.env.whence;
        let line = whence.line;
        let named = (whence.string && !whence.dash)
            .then(|| std::mem::replace(&mut whence.name, "environment".to_owned()));
        let outer_return = self.enter_return_scope();
        let mut r = self.command(body, io);
        if let Err(flow) = self.returning(outer_return, io) {
            r = Err(flow);
        }
        self.env.whence.line = line;
        if let Some(name) = named {
            self.env.whence.name = name;
        }
        if self.err_trap.is_none() {
            self.err_trap = err_trap;
        }
        self.loops = loops;
        if let Some(hidden) = self.st.locals.pop() {
            for (var, old) in hidden.into_iter().rev() {
                match old {
                    Some(v) => {
                        self.st.vars.insert(var, v);
                    }
                    None => self.unset_var(&var),
                }
            }
        }
        self.st.positional = saved;
        self.calls -= 1;
        self.env.calls -= 1;
        match callers {
            Some(v) => {
                self.st.vars.insert("FUNCNAME".to_owned(), v);
            }
            None => {
                self.st.vars.remove("FUNCNAME");
            }
        }
        match r {
            Err(Flow::Return(c)) => Ok(c),
            other => other,
        }
    }

    fn compound(&mut self, c: &Compound, io: &mut Io<'_>) -> R<u8> {
        match c {
            Compound::Group(list) => self.list(list, io),
            Compound::Subshell(list) => {
                let status = self.status;
                let fatal = std::mem::replace(&mut self.fatal_status, 1);
                let s = self.subshell(|sh| {
                    sh.count_subshell();
                    flow_status(sh.list(list, io), status)
                });
                self.fatal_status = fatal;
                Ok(s)
            }
            Compound::If(arms, otherwise) => {
                for (cond, body) in arms {
                    if self.condition(cond, io)? == 0 {
                        return self.list(body, io);
                    }
                }
                match otherwise {
                    Some(body) => self.list(body, io),
                    None => Ok(0),
                }
            }
            Compound::While(cond, body, until) => {
                let mut status = 0;
                self.loops += 1;
                let r = loop {
                    let c = match self.condition(cond, io) {
                        Ok(c) => c,
                        Err(e) => break Err(e),
                    };
                    if (c == 0) == *until {
                        break Ok(status);
                    }
                    match self.loop_body(body, io) {
                        Step::Next(s) => status = s.unwrap_or(status),
                        Step::Stop(r) => break r,
                    }
                };
                self.loops -= 1;
                r
            }
            Compound::For(var, items, body) => {
                let values = match items {
                    None => self.st.positional.clone(),
                    Some(words) => match self.expand_words(words) {
                        Ok(v) => v,
                        Err(e) => return self.expansion_failed(e, io),
                    },
                };
                let mut status = 0;
                self.loops += 1;
                let mut r = Ok(0);
                for v in values {
                    self.set_scalar(var, v);
                    match self.loop_body(body, io) {
                        Step::Next(s) => status = s.unwrap_or(status),
                        Step::Stop(Ok(s)) => {
                            status = s;
                            break;
                        }
                        Step::Stop(Err(e)) => {
                            r = Err(e);
                            break;
                        }
                    }
                }
                self.loops -= 1;
                r.map(|_| status)
            }
            Compound::Select(var, items, body) => self.select(var, items.as_deref(), body, io),
            Compound::ArithFor(init, cond, step, body) => {
                let mut status = 0;
                if let Err(e) = self.arith_word(init) {
                    return self.expansion_failed(e, io);
                }
                self.loops += 1;
                let r = loop {
                    let c = match self.arith_word_or(cond, 1) {
                        Ok(c) => c,
                        Err(e) => break self.expansion_failed(e, io),
                    };
                    if c == 0 {
                        break Ok(status);
                    }
                    match self.loop_body(body, io) {
                        Step::Next(s) => status = s.unwrap_or(status),
                        Step::Stop(r) => break r,
                    }
                    if let Err(e) = self.arith_word(step) {
                        break self.expansion_failed(e, io);
                    }
                };
                self.loops -= 1;
                r
            }
            Compound::Case(word, arms) => {
                let subject = match self.expand_string(word) {
                    Ok(s) => s,
                    Err(e) => return self.expansion_failed(e, io),
                };
                let mut status = 0;
                let mut fall = false;
                for arm in arms {
                    let mut hit = fall;
                    if !hit {
                        for p in &arm.patterns {
                            let pat = match self.expand_pattern(p) {
                                Ok(p) => p,
                                Err(e) => return self.expansion_failed(e, io),
                            };
                            if glob::Pattern::with_extglob(&pat, self.extglob())
                                .matches(&subject, self.st.opts.nocasematch)
                            {
                                hit = true;
                                break;
                            }
                        }
                    }
                    if hit {
                        status = self.list(&arm.body, io)?;
                        match arm.next {
                            CaseNext::Stop => return Ok(status),
                            CaseNext::FallThrough => fall = true,
                            CaseNext::TestNext => fall = false,
                        }
                    }
                }
                Ok(status)
            }
            Compound::Cond(c) => match self.cond_expr(c) {
                Ok(b) => Ok(u8::from(!b)),
                Err(ExpError::Command(msg)) => {
                    self.report(io, &msg);
                    Ok(2)
                }
                Err(e) => self.expansion_failed(e, io),
            },
            Compound::Arith(w) => match self.arith_word(w) {
                Ok(v) => Ok(u8::from(v == 0)),
                Err(e) => self.expansion_failed(e, io),
            },
        }
    }

    /// Runs a loop's body once: go on (with its status; `None` after
    /// `continue`), or leave the loop with this result (`break` gives 0,
    /// `break N`/`continue N` pass on to the enclosing loop).
    fn loop_body(&mut self, body: &List, io: &mut Io<'_>) -> Step {
        // A loop writing into a pipe whose reader has gone would have been
        // ended by `SIGPIPE` by now.
        if self.env.pipe.as_ref().is_some_and(|p| p.gone_for(&*io.out)) {
            return Step::Stop(Ok(SIGPIPE_STATUS));
        }
        match self.list(body, io) {
            Ok(s) => Step::Next(Some(s)),
            Err(Flow::Break(n)) if n > 1 => Step::Stop(Err(Flow::Break(n - 1))),
            Err(Flow::Break(_)) => Step::Stop(Ok(0)),
            Err(Flow::Continue(n)) if n > 1 => Step::Stop(Err(Flow::Continue(n - 1))),
            Err(Flow::Continue(_)) => Step::Next(None),
            Err(e) => Step::Stop(Err(e)),
        }
    }

    fn condition(&mut self, list: &List, io: &mut Io<'_>) -> R<u8> {
        self.cond += 1;
        let r = self.list(list, io);
        self.cond -= 1;
        r
    }

    /// The value of `(( ))` or a part of `for (( ))`: an error in
    /// expanding the text discards the line, one in the expression fails
    /// the command.
    fn arith_word(&mut self, w: &Word) -> E<i64> {
        self.arith_word_or(w, 0)
    }

    fn arith_word_or(&mut self, w: &Word, empty: i64) -> E<i64> {
        let text = self.expand_string(w)?;
        if text.trim().is_empty() {
            return Ok(empty);
        }
        // bash names `((` in the expression's own errors (not in those of
        // a subscript, which end the script).
        self.arith(&text)
            .map_err(|e| match e {
                ExpError::Arith(m) => ExpError::Arith(match m.strip_prefix(crate::exec::SHELL) {
                    Some(rest) => format!("{}((: {rest}", crate::exec::SHELL),
                    None => m,
                }),
                e => e,
            })
            .map_err(ExpError::failing_command)
    }

    // ----- redirections -----

    fn with_redirs(
        &mut self,
        redirs: &[Redir],
        io: &mut Io<'_>,
        f: impl FnOnce(&mut Self, &mut Io<'_>) -> R<u8>,
    ) -> R<u8> {
        if redirs.is_empty() {
            return f(self, io);
        }
        let mut fds = [Target::Closed; 10];
        fds[1] = Target::Out;
        fds[2] = Target::Err;
        let mut input = io.input.clone();
        self.cur_input = io.input.clone();
        // Input descriptors opened here close when the command is done.
        let saved_in = self.in_fds.clone();
        for r in redirs {
            let res = self.redirect(r, &mut fds, &mut input);
            self.flush_err(io);
            if let Err(msg) = res {
                self.report(io, &msg);
                self.in_fds = saved_in;
                return Ok(1);
            }
        }
        let o = RefCell::new(&mut *io.out as &mut dyn Write);
        let e = RefCell::new(&mut *io.err as &mut dyn Write);
        let sink = |t: Target| match t {
            Target::Out => Sink::To(&o),
            Target::Err => Sink::To(&e),
            Target::Null | Target::Closed => Sink::Null,
        };
        let (mut w1, mut w2) = (sink(fds[1]), sink(fds[2]));
        let mut sub = Io {
            input,
            out: &mut w1,
            err: &mut w2,
        };
        let r = f(self, &mut sub);
        self.in_fds = saved_in;
        r
    }

    /// `exec` with redirections only: they stay for the rest of the shell,
    /// the input ones (`exec 3< FILE`, `exec < FILE`) and those of standard
    /// output and error (`exec >/dev/null`, `exec 2>&1`, `exec 1>&2`).
    pub(crate) fn exec_redirs(&mut self, redirs: &[Redir], io: &mut Io<'_>) -> u8 {
        let mut fds = [Target::Closed; 10];
        fds[1] = Target::Out;
        fds[2] = Target::Err;
        let mut input = io.input.clone();
        self.cur_input = io.input.clone();
        for r in redirs {
            let res = self.redirect(r, &mut fds, &mut input);
            self.flush_err(io);
            if let Err(msg) = res {
                self.report(io, &msg);
                return 1;
            }
        }
        io.input = input;
        let before = self.exec_route.get();
        let of = |t: Target| match t {
            Target::Out => before[1],
            Target::Err => before[2],
            other => other,
        };
        self.exec_route
            .set([Target::Closed, of(fds[1]), of(fds[2])]);
        0
    }

    /// The input open on descriptor `fd` (`read -u`), as text.
    pub(crate) fn input_fd(&self, fd: &str) -> Result<Input, String> {
        match fd.parse::<usize>() {
            Ok(0) => Ok(self.cur_input.clone()),
            Ok(n) if n < 10 => self.in_fds[n]
                .clone()
                .ok_or_else(|| format!("{n}: invalid file descriptor: Bad file descriptor")),
            _ => Err(format!("{fd}: invalid file descriptor specification")),
        }
    }

    fn redirect(
        &mut self,
        r: &Redir,
        fds: &mut [Target; 10],
        input: &mut Input,
    ) -> Result<(), String> {
        let expand = |sh: &mut Self, w: &Word| -> Result<String, String> {
            sh.expand_string(w).map_err(|e| match e {
                ExpError::Fatal(m)
                | ExpError::Command(m)
                | ExpError::Arith(m)
                | ExpError::Exit(m)
                | ExpError::Status(m, _)
                | ExpError::Posix(m) => m,
                ExpError::Flow(_) => "vfs-sh: redirection failed".to_owned(),
            })
        };
        let fd_of = |fd: Option<u32>, default: usize| -> Result<usize, String> {
            match fd {
                None => Ok(default),
                Some(n) if n < 10 => Ok(n as usize),
                Some(n) => Err(format!("vfs-sh: {n}: bad file descriptor")),
            }
        };
        let out_target = |fds: &[Target; 10], path: &str| -> Result<Target, String> {
            match path {
                "/dev/null" => Ok(Target::Null),
                "/dev/stdout" | "/dev/fd/1" => Ok(fds[1]),
                "/dev/stderr" | "/dev/fd/2" => Ok(fds[2]),
                "/dev/tty" => Ok(Target::Err),
                "" => Err("vfs-sh: : No such file or directory".to_owned()),
                _ => Err(format!(
                    "vfs-sh: {path}: cannot write: the filesystem is read-only (only /dev/null, /dev/stdout and /dev/stderr take output)"
                )),
            }
        };
        match r.op {
            RedirOp::In | RedirOp::ReadWrite => {
                let path = expand(self, &r.target)?;
                let fd = fd_of(r.fd, 0)?;
                if r.op == RedirOp::ReadWrite && path != "/dev/null" {
                    return Err(format!(
                        "vfs-sh: {path}: cannot open for writing: the filesystem is read-only"
                    ));
                }
                let opened = self.open_file(&path)?;
                if fd == 0 {
                    *input = opened;
                } else if fd > 2 {
                    self.in_fds[fd] = Some(opened);
                }
            }
            RedirOp::HereDoc | RedirOp::HereString => {
                let mut text = expand(self, &r.target)?;
                if r.op == RedirOp::HereString {
                    text.push('\n');
                }
                match fd_of(r.fd, 0)? {
                    0 => *input = InBuf::bytes(crate::lossless::encode_owned(text)),
                    n if n > 2 => {
                        self.in_fds[n] = Some(InBuf::bytes(crate::lossless::encode_owned(text)));
                    }
                    _ => {}
                }
            }
            RedirOp::Out | RedirOp::Append => {
                let path = expand(self, &r.target)?;
                let fd = fd_of(r.fd, 1)?;
                fds[fd] = out_target(fds, &path)?;
            }
            RedirOp::OutErr => {
                let path = expand(self, &r.target)?;
                let t = out_target(fds, &path)?;
                fds[1] = t;
                fds[2] = t;
            }
            RedirOp::DupIn => {
                // `<&3`: standard input from descriptor 3; `3<&0`: the
                // other way; `<&-` closes.
                let word = expand(self, &r.target)?;
                let fd = fd_of(r.fd, 0)?;
                let source = match word.parse::<usize>() {
                    _ if word == "-" => Some(InBuf::bytes(Vec::new())),
                    Ok(0) => Some(input.clone()),
                    Ok(m) if m > 2 && m < 10 => self.in_fds[m].clone(),
                    Ok(m) if m < 10 => None,
                    _ => return Err(format!("vfs-sh: {word}: ambiguous redirect")),
                };
                let Some(source) = source else {
                    return Err(format!("vfs-sh: {word}: Bad file descriptor"));
                };
                match fd {
                    0 => *input = source,
                    n if n > 2 => self.in_fds[n] = (word != "-").then_some(source),
                    _ => {}
                }
            }
            RedirOp::Dup => {
                let word = expand(self, &r.target)?;
                let fd = fd_of(r.fd, 1)?;
                if word == "-" {
                    if fd == 0 {
                        *input = InBuf::bytes(Vec::new());
                    } else {
                        fds[fd] = Target::Closed;
                        self.in_fds[fd] = None;
                    }
                    return Ok(());
                }
                match word.parse::<usize>() {
                    Ok(0) if fd == 0 => {}
                    Ok(m) if m < 10 && fd != 0 => {
                        if fds[m] == Target::Closed && m > 2 {
                            return Err(format!("vfs-sh: {m}: Bad file descriptor"));
                        }
                        fds[fd] = fds[m];
                    }
                    Ok(m) => return Err(format!("vfs-sh: {m}: Bad file descriptor")),
                    Err(_) if r.fd.is_none() => {
                        // `>&file` is `&>file`.
                        let t = out_target(fds, &word)?;
                        fds[1] = t;
                        fds[2] = t;
                    }
                    Err(_) => return Err(format!("vfs-sh: {word}: ambiguous redirect")),
                }
            }
        }
        Ok(())
    }

    /// A document as standard input (`< FILE`), read as the command reads
    /// it; a missing document or a directory is an error now, as the
    /// redirection fails in bash.
    fn open_file(&mut self, path: &str) -> Result<Input, String> {
        if path == "/dev/stdin" {
            return Ok(InBuf::bytes(self.cur_input.borrow_mut().take_rest()));
        }
        let mut fs = Overlay {
            inner: &mut *self.fs,
            files: &self.files,
        };
        let (reader, len) = fs
            .open(path)
            .map_err(|e| format!("vfs-sh: {path}: {}", e.strerror()))?;
        let input = InBuf::stream(reader, len);
        input.borrow_mut().seekable = true;
        Ok(input)
    }

    fn read_file(&mut self, path: &str) -> Result<Vec<u8>, String> {
        let mut fs = Overlay {
            inner: &mut *self.fs,
            files: &self.files,
        };
        if path == "/dev/stdin" {
            return Ok(self.cur_input.borrow_mut().take_rest());
        }
        match fs.metadata(path) {
            Ok(m) if m.is_dir() => return Err(format!("vfs-sh: {path}: Is a directory")),
            _ => {}
        }
        fs.read(path)
            .map_err(|e| format!("vfs-sh: {path}: {}", e.strerror()))
    }

    // ----- expansion -----

    /// Expands words into fields: parameters, substitutions, arithmetic,
    /// splitting on `IFS`, globs.
    fn expand_words(&mut self, words: &[Word]) -> E<Vec<String>> {
        let mut out = Vec::new();
        for w in words {
            out.extend(self.expand_fields(w)?);
        }
        Ok(out)
    }

    fn expand_fields(&mut self, w: &Word) -> E<Vec<String>> {
        // A plain literal word needs no machinery.
        if let [Part::Lit(s)] = w.parts.as_slice()
            && !s.contains(['*', '?', '['])
        {
            return Ok(vec![s.clone()]);
        }
        let mut toks = Vec::new();
        self.parts(&w.parts, false, &mut toks)?;
        let fields = self.split(toks);
        let mut out = Vec::new();
        for f in fields {
            let globbed = !self.st.opts.noglob
                && f.iter()
                    .any(|(text, quoted)| !quoted && text.contains(['*', '?', '[']));
            if !globbed {
                out.push(match <[_; 1]>::try_from(f) {
                    Ok([(text, _)]) => text,
                    Err(runs) => runs.into_iter().map(|(text, _)| text).collect(),
                });
                continue;
            }
            let chars = f
                .iter()
                .flat_map(|(text, quoted)| {
                    text.chars().map(|ch| WordChar {
                        ch,
                        quoted: *quoted,
                    })
                })
                .collect();
            out.extend(self.glob(&GlobWord { chars })?);
        }
        Ok(out)
    }

    /// The paths a glob matches under the shell's options, sorted; none
    /// when it matches nothing.
    fn glob_matches(&mut self, w: &GlobWord) -> E<Vec<String>> {
        let mut fs = Overlay {
            inner: &mut *self.fs,
            files: &self.files,
        };
        let ignore = match self.st.vars.get("GLOBIGNORE") {
            Some(Value::Str(s)) if !s.is_empty() && !self.posix => Some(glob::Ignore::new(s)),
            _ => None,
        };
        let opts = glob::Options {
            // A GLOBIGNORE set turns dotglob on, as in bash.
            dotglob: self.st.opts.dotglob || ignore.is_some(),
            globstar: self.st.opts.globstar,
            nocase: self.st.opts.nocaseglob,
        };
        let mut found = glob::expand_with(&mut fs, w, opts).map_err(ExpError::Command)?;
        if let Some(ignore) = ignore {
            found.retain(|name| !ignore.drops(name));
        }
        Ok(found)
    }

    fn glob(&mut self, w: &GlobWord) -> E<Vec<String>> {
        let text = w.text();
        let found = self.glob_matches(w)?;
        if found.is_empty() {
            // bash abandons the line, as it does for an arithmetic error.
            if self.st.opts.failglob {
                return Err(ExpError::Arith(format!("vfs-sh: no match: {text}")));
            }
            if self.st.opts.nullglob {
                return Ok(Vec::new());
            }
            return Ok(vec![text]);
        }
        Ok(found)
    }

    /// Splits expanded text into fields on `IFS`, where it came from an
    /// unquoted expansion. A field is runs of text, each quoted or not.
    fn split(&self, toks: Vec<Tok>) -> Vec<Vec<(String, bool)>> {
        /// Adds text to a field, to its last run if quoted alike.
        fn extend(field: &mut Vec<(String, bool)>, text: &str, quoted: bool) {
            match field.last_mut() {
                Some((last, q)) if *q == quoted => last.push_str(text),
                _ => field.push((text.to_owned(), quoted)),
            }
        }
        let ifs = self.ifs();
        let mut fields = Vec::new();
        let mut cur: Vec<(String, bool)> = Vec::new();
        let mut have = false;
        // After a split on white space: a following non-white delimiter
        // belongs to the same boundary.
        let mut after_space = false;
        for t in toks {
            match t {
                Tok::Text {
                    text,
                    quoted,
                    split,
                } if split && text.contains(|c| ifs.contains(c)) => {
                    let mut rest = text.as_str();
                    while let Some((at, ch)) = rest.char_indices().find(|(_, c)| ifs.contains(*c)) {
                        if at > 0 {
                            extend(&mut cur, &rest[..at], quoted);
                            have = true;
                            after_space = false;
                        }
                        if is_ifs_space(ch) {
                            if have {
                                fields.push(std::mem::take(&mut cur));
                                have = false;
                                after_space = true;
                            }
                        } else {
                            if !after_space || have {
                                fields.push(std::mem::take(&mut cur));
                            }
                            have = false;
                            after_space = false;
                        }
                        rest = &rest[at + ch.len_utf8()..];
                    }
                    if !rest.is_empty() {
                        extend(&mut cur, rest, quoted);
                        have = true;
                        after_space = false;
                    }
                }
                Tok::Text { text, quoted, .. } => {
                    if cur.is_empty() {
                        cur.push((text, quoted));
                    } else {
                        extend(&mut cur, &text, quoted);
                    }
                    have = true;
                    after_space = false;
                }
                Tok::Empty => have = true,
                Tok::Break => {
                    if have {
                        fields.push(std::mem::take(&mut cur));
                    }
                    have = false;
                    after_space = false;
                }
            }
        }
        if have {
            fields.push(cur);
        }
        fields
    }

    /// Expands a word to one string: no splitting, no globs (assignments,
    /// `case`, `[[ ]]`, redirection targets, here-documents).
    fn expand_string(&mut self, w: &Word) -> E<String> {
        if let [Part::Lit(s)] = w.parts.as_slice() {
            return Ok(s.clone());
        }
        let mut toks = Vec::new();
        self.parts(&w.parts, false, &mut toks)?;
        if let [Tok::Text { .. }] = toks.as_slice()
            && let Some(Tok::Text { text, .. }) = toks.pop()
        {
            return Ok(text);
        }
        let mut s = String::new();
        for t in toks {
            match t {
                Tok::Text { text, .. } => s.push_str(&text),
                Tok::Break => s.push(' '),
                Tok::Empty => {}
            }
        }
        Ok(s)
    }

    /// Expands a word to a glob pattern: quoted characters are escaped.
    fn expand_pattern(&mut self, w: &Word) -> E<String> {
        let mut toks = Vec::new();
        self.parts(&w.parts, false, &mut toks)?;
        let mut s = String::new();
        for t in toks {
            match t {
                Tok::Text { text, quoted, .. } => {
                    for ch in text.chars() {
                        // Quoted, a pattern character is itself; `(`, `)`
                        // and `|` too, so no quoted text opens or splits
                        // an extended pattern (`"@(a)"` is those four
                        // characters).
                        if quoted && matches!(ch, '*' | '?' | '[' | ']' | '\\' | '(' | ')' | '|') {
                            s.push('\\');
                        }
                        s.push(ch);
                    }
                }
                Tok::Break => s.push(' '),
                Tok::Empty => {}
            }
        }
        Ok(s)
    }

    fn push_str(out: &mut Vec<Tok>, s: &str, quoted: bool, split: bool) {
        Self::push_string(out, s.to_owned(), quoted, split);
    }

    fn push_string(out: &mut Vec<Tok>, text: String, quoted: bool, split: bool) {
        if !text.is_empty() {
            out.push(Tok::Text {
                text,
                quoted,
                split,
            });
        }
    }

    fn parts(&mut self, parts: &[Part], dq: bool, out: &mut Vec<Tok>) -> E<()> {
        for p in parts {
            match p {
                Part::Lit(s) => Self::push_str(out, s, dq, false),
                Part::Quoted(s) => {
                    Self::push_str(out, s, true, false);
                    if s.is_empty() {
                        out.push(Tok::Empty);
                    }
                }
                Part::Double(inner) => {
                    // `"$@"`, `"${arr[@]}"` and what maps over their
                    // elements (`"${@:2}"`, `"${arr[@]/a/b}"`) are a field
                    // for each element: none when there are none.
                    let lone_at = matches!(inner.as_slice(), [Part::Param(p)] if matches!(
                            p.op,
                            ParamOp::Get
                                | ParamOp::Slice(..)
                                | ParamOp::TrimPrefix(..)
                                | ParamOp::TrimSuffix(..)
                                | ParamOp::Replace(..)
                                | ParamOp::Case(..)
                        )
                        && (p.name == "@" || p.index.as_ref().and_then(Word::as_lit) == Some("@")));
                    if !lone_at {
                        out.push(Tok::Empty);
                    }
                    self.parts(inner, true, out)?;
                }
                Part::Tilde(user) => {
                    if user.is_empty() {
                        let home = self.scalar("HOME").unwrap_or_else(|| "/".to_owned());
                        Self::push_str(out, &home, true, false);
                    } else if let Some(dir) = match user.as_str() {
                        "+" => self.scalar("PWD"),
                        "-" => self.scalar("OLDPWD"),
                        _ => None,
                    } {
                        Self::push_str(out, &dir, true, false);
                    } else if user == "root" {
                        // The one account every Linux system has; no other
                        // user exists in here, and bash leaves an unknown
                        // one as written.
                        Self::push_str(out, "/root", true, false);
                    } else {
                        Self::push_str(out, &format!("~{user}"), true, false);
                    }
                }
                Part::Param(param) => self.param(param, dq, out)?,
                Part::Command(list) => {
                    let text = self.command_subst(list)?;
                    Self::push_string(out, text, dq, !dq);
                }
                Part::Arith(inner) => {
                    let w = Word {
                        parts: inner.clone(),
                    };
                    let text = self.expand_string(&w)?;
                    let v = self.arith(&text)?;
                    Self::push_str(out, &v.to_string(), dq, !dq);
                }
                Part::Elements(items) => {
                    // As an array assignment expands them (see
                    // `AssignValue::Array`): `[KEY]=VALUE` whole, other
                    // words into fields.
                    let mut text = String::new();
                    for w in items {
                        let fields = match subscripted(w) {
                            Some((key, value)) => vec![format!(
                                "[{}]={}",
                                self.expand_string(&key)?,
                                self.expand_string(&value)?
                            )],
                            None => self.expand_fields(w)?,
                        };
                        for f in fields {
                            text.push(crate::syntax::ELEMENT);
                            text.push_str(&f);
                        }
                    }
                    // One more mark ends the list, so that `()` and `("")`
                    // are told apart.
                    text.push(crate::syntax::ELEMENT);
                    Self::push_string(out, text, true, false);
                }
                Part::ProcessIn(list) => {
                    let data = self.capture(list)?;
                    let path = format!("/dev/fd/{}", self.next_fd);
                    self.next_fd = self.next_fd.saturating_sub(1).max(10);
                    self.files.insert(path.clone(), Rc::new(data));
                    Self::push_str(out, &path, true, false);
                }
            }
        }
        Ok(())
    }

    /// Runs a list in a subshell and returns its standard output.
    fn capture(&mut self, list: &List) -> E<Vec<u8>> {
        if self.env.nesting >= 64 {
            return Err(ExpError::Command(
                "vfs-sh: command substitutions nest too deep".to_owned(),
            ));
        }
        self.env.nesting += 1;
        self.trace_level += 1;
        // Its commands name their own lines; the command around it is
        // still on its line after it.
        let line = self.env.whence.line;
        let mut buf = Vec::new();
        let input = self.cur_input.clone();
        let status = self.status;
        // Standard error of a substitution goes to the script's.
        let fatal = std::mem::replace(&mut self.fatal_status, 1);
        let s = self.subshell(|sh| {
            sh.count_subshell();
            let mut sink = StderrProxy::default();
            let mut io = Io {
                input,
                out: &mut buf,
                err: &mut sink,
            };
            let s = flow_status(sh.list(list, &mut io), status);
            (s, sink.0)
        });
        self.env.nesting -= 1;
        self.trace_level -= 1;
        self.env.whence.line = line;
        self.fatal_status = fatal;
        self.subst_status = Some(s.0);
        self.status = s.0;
        self.pending_err.extend_from_slice(&s.1);
        Ok(buf)
    }

    fn command_subst(&mut self, list: &List) -> E<String> {
        // `$(< FILE)`: the document's text, read without running a command.
        if let [one] = list.as_slice()
            && one.rest.is_empty()
            && !one.first.bang
            && let [
                Command::Simple {
                    assigns,
                    words,
                    redirs,
                },
            ] = one.first.commands.as_slice()
            && assigns.is_empty()
            && words.is_empty()
            && let [r] = redirs.as_slice()
            && r.op == RedirOp::In
            && matches!(r.fd, None | Some(0))
        {
            let path = self.expand_string(&r.target)?;
            let (data, status) = match self.read_file(&path) {
                Ok(d) => (d, 0),
                Err(msg) => {
                    let msg = self.env.whence.message(&msg);
                    self.pending_err.extend_from_slice(msg.as_bytes());
                    self.pending_err.push(b'\n');
                    (Vec::new(), 1)
                }
            };
            self.subst_status = Some(status);
            self.status = status;
            return Ok(self.substituted(data));
        }
        let data = self.capture(list)?;
        Ok(self.substituted(data))
    }

    /// A command substitution's text: without its trailing newlines, and
    /// without NUL bytes, which bash drops with a warning (dash silently).
    fn substituted(&mut self, mut data: Vec<u8>) -> String {
        if data.contains(&0) {
            data.retain(|&b| b != 0);
            if !self.posix {
                let msg = self
                    .env
                    .whence
                    .message("vfs-sh: warning: command substitution: ignored null byte in input");
                self.pending_err.extend_from_slice(msg.as_bytes());
                self.pending_err.push(b'\n');
            }
        }
        // Valid UTF-8 (the usual case) becomes the string without a copy.
        let mut text = crate::lossless::decode_owned(data);
        while text.ends_with('\n') {
            text.pop();
        }
        text
    }

    fn param(&mut self, p: &Param, dq: bool, out: &mut Vec<Tok>) -> E<()> {
        let value = self.lookup(p)?;
        let name = &p.name;
        let is_set = !matches!(value, PVal::Unset);
        let is_empty = match &value {
            PVal::Unset => true,
            PVal::One(s) => s.is_empty(),
            PVal::Many(v, _) => v.is_empty() || (v.len() == 1 && v[0].is_empty()),
        };
        let emit = |sh: &Self, out: &mut Vec<Tok>, v: PVal| match v {
            PVal::Unset => {}
            PVal::One(s) => Self::push_string(out, s, dq, !dq),
            PVal::Many(items, star) => {
                if dq && star {
                    let sep = sh
                        .ifs()
                        .chars()
                        .next()
                        .map(String::from)
                        .unwrap_or_default();
                    Self::push_str(out, &items.join(&sep), true, false);
                } else {
                    for (k, item) in items.iter().enumerate() {
                        if k > 0 {
                            if dq {
                                out.push(Tok::Break);
                            } else {
                                Self::push_str(out, " ", false, true);
                            }
                        }
                        if dq && item.is_empty() {
                            out.push(Tok::Empty);
                        }
                        Self::push_str(out, item, dq, !dq);
                    }
                }
            }
        };
        // `set -u`: an unset variable is an error but where a default
        // or an alternative is given (`${x:-d}`, `${x+a}`...).
        let guarded = matches!(
            p.op,
            ParamOp::Default(..)
                | ParamOp::Assign(..)
                | ParamOp::Error(..)
                | ParamOp::Alternative(..)
                | ParamOp::Names(_)
                | ParamOp::Bad
        );
        let positional_list = matches!(name.as_str(), "@" | "*") && p.op != ParamOp::Length;
        if !is_set && self.st.opts.nounset && !guarded && !positional_list {
            return Err(ExpError::Fatal(format!("vfs-sh: {name}: unbound variable")));
        }
        match &p.op {
            // Refused by `lookup` before anything is emitted.
            ParamOp::Bad => {}
            ParamOp::Get => emit(self, out, value),
            ParamOp::Length => {
                // Characters in a UTF-8 locale, bytes in the C one.
                let n = match value {
                    PVal::Unset => 0,
                    PVal::One(s) if !self.utf8_locale() => crate::lossless::byte_len(&s),
                    PVal::One(s) => s.chars().count(),
                    PVal::Many(v, _) => v.len(),
                };
                Self::push_str(out, &n.to_string(), dq, !dq);
            }
            ParamOp::Default(colon, w) | ParamOp::Alternative(colon, w) => {
                let use_word = if matches!(p.op, ParamOp::Default(..)) {
                    !is_set || (*colon && is_empty)
                } else {
                    is_set && !(*colon && is_empty)
                };
                if use_word {
                    self.parts(&w.parts, dq, out)?;
                } else if matches!(p.op, ParamOp::Default(..)) {
                    emit(self, out, value);
                }
            }
            ParamOp::Assign(colon, w) => {
                if !is_set || (*colon && is_empty) {
                    let v = self.expand_string(w)?;
                    self.set_scalar(name, v.clone());
                    Self::push_str(out, &v, dq, !dq);
                } else {
                    emit(self, out, value);
                }
            }
            ParamOp::Error(colon, w) => {
                if !is_set || (*colon && is_empty) {
                    let msg = self.expand_string(w)?;
                    let msg = if msg.is_empty() {
                        "parameter null or not set".to_owned()
                    } else {
                        msg
                    };
                    return Err(ExpError::Fatal(format!("vfs-sh: {name}: {msg}")));
                }
                emit(self, out, value);
            }
            ParamOp::TrimPrefix(longest, w) | ParamOp::TrimSuffix(longest, w) => {
                let pat = self.expand_pattern(w)?;
                let prefix = matches!(p.op, ParamOp::TrimPrefix(..));
                let extglob = self.extglob();
                let f = |s: &str| trim(s, &pat, prefix, *longest, extglob);
                emit(self, out, map_val(value, f));
            }
            ParamOp::Replace(mode, pat, rep) => {
                let pat = self.expand_pattern(pat)?;
                let rep = self.expand_string(rep)?;
                let extglob = self.extglob();
                let f = |s: &str| replace(s, &pat, &rep, *mode, extglob);
                emit(self, out, map_val(value, f));
            }
            // bash takes an unset variable's slice as empty without
            // reading the offset and length (`${x:0:-3:1}` is no error).
            ParamOp::Slice(..) if matches!(value, PVal::Unset) && name != "@" && name != "*" => {
                emit(self, out, value);
            }
            ParamOp::Slice(off, len) => {
                let off_text = self.expand_string(off)?;
                let offset = self.arith(&off_text)?;
                let length = match len {
                    Some(l) => {
                        let t = self.expand_string(l)?;
                        Some(self.arith(&t)?)
                    }
                    None => None,
                };
                // No positional parameters are still a list, of none.
                let value = match value {
                    PVal::Unset if name == "@" || name == "*" => {
                        PVal::Many(Vec::new(), name == "*")
                    }
                    v => v,
                };
                let v = match value {
                    PVal::Unset => PVal::Unset,
                    PVal::One(s) => {
                        // Characters in a UTF-8 locale, bytes in the C one
                        // (a piece of a character is carried as its bytes).
                        let utf8 = self.utf8_locale() && !s.is_ascii();
                        let bytes = crate::lossless::encode(&s);
                        let len = if utf8 { s.chars().count() } else { bytes.len() };
                        // The byte where character `k` starts.
                        let byte = |k: usize| s.char_indices().nth(k).map_or(s.len(), |(i, _)| i);
                        match slice_range(len, offset, length) {
                            Some((a, b)) if utf8 => {
                                let start = byte(a);
                                let end = start
                                    + s[start..]
                                        .char_indices()
                                        .nth(b - a)
                                        .map_or(s.len() - start, |(i, _)| i);
                                PVal::One(s[start..end].to_owned())
                            }
                            Some((a, b)) => {
                                PVal::One(crate::lossless::decode(&bytes[a..b]).into_owned())
                            }
                            None if length.is_some_and(|l| l < 0) => {
                                return Err(ExpError::Command(format!(
                                    "vfs-sh: {}: substring expression < 0",
                                    length.unwrap_or(0)
                                )));
                            }
                            None => PVal::One(String::new()),
                        }
                    }
                    PVal::Many(items, star) => {
                        // `${@:N}` counts `$0` as element 0.
                        let items = if name == "@" || name == "*" {
                            let mut all = vec![self.st.arg0.clone()];
                            all.extend(items);
                            all
                        } else {
                            items
                        };
                        match slice_range(items.len(), offset, length) {
                            Some((a, b)) => PVal::Many(items[a..b].to_vec(), star),
                            None => PVal::Many(Vec::new(), star),
                        }
                    }
                };
                emit(self, out, v);
            }
            ParamOp::Case(op, all, pat) => {
                let pat = self.expand_pattern(pat)?;
                let f = |s: &str| change_case(s, *op, *all, &pat);
                emit(self, out, map_val(value, f));
            }
            ParamOp::Names(_) => emit(self, out, value),
            ParamOp::Transform(op) => {
                let utf8 = self.utf8_locale();
                let v = match op {
                    'U' => map_val(value, |s: &str| s.to_uppercase()),
                    'L' => map_val(value, |s: &str| s.to_lowercase()),
                    'u' => map_val(value, |s: &str| {
                        let mut cs = s.chars();
                        cs.next()
                            .map(|c| c.to_uppercase().collect::<String>() + cs.as_str())
                            .unwrap_or_default()
                    }),
                    'Q' | 'K' => map_val(value, bash_quote),
                    'E' => map_val(value, |s: &str| {
                        crate::lossless::decode_owned(commands::unescape_ansi(s, utf8).0)
                    }),
                    _ => {
                        // `a`: the attribute letters, in bash's order.
                        let at = self.st.attrs.get(name).copied().unwrap_or_default();
                        let mut f = String::new();
                        match self.st.vars.get(name) {
                            Some(Value::Array(_)) => f.push('a'),
                            Some(Value::Assoc(_)) => f.push('A'),
                            _ => {}
                        }
                        for (on, c) in [
                            (at.integer, 'i'),
                            (at.nameref, 'n'),
                            (at.readonly, 'r'),
                            (at.lower, 'l'),
                            (at.upper, 'u'),
                        ] {
                            if on {
                                f.push(c);
                            }
                        }
                        if is_set { PVal::One(f) } else { PVal::Unset }
                    }
                };
                emit(self, out, v);
            }
        }
        Ok(())
    }

    fn lookup(&mut self, p: &Param) -> E<PVal> {
        // `${!ref}` of a name reference is the name it holds.
        if p.indirect && p.index.is_none() && self.st.attrs.get(&p.name).is_some_and(|a| a.nameref)
        {
            return Ok(match self.st.vars.get(&p.name) {
                Some(Value::Str(t)) => PVal::One(t.clone()),
                _ => PVal::Unset,
            });
        }
        let resolved = if p.indirect && p.index.is_none() {
            p.name.clone()
        } else {
            self.resolve(&p.name).into_owned()
        };
        let name = resolved.as_str();
        if p.op == ParamOp::Bad {
            if self.posix {
                return Err(ExpError::Posix("sh: 1: Bad substitution".to_owned()));
            }
            // bash ends the script with status 1.
            return Err(ExpError::Arith(format!("vfs-sh: {name}: bad substitution")));
        }
        if let ParamOp::Names(star) = p.op {
            let mut names: Vec<String> = self
                .st
                .vars
                .keys()
                .filter(|k| k.starts_with(name))
                .cloned()
                .collect();
            names.sort();
            return Ok(PVal::Many(names, star));
        }
        if p.indirect {
            if let Some(ix) = &p.index
                && matches!(ix.as_lit(), Some("@" | "*"))
            {
                // `${!a[@]}`: the keys.
                let keys = match self.st.vars.get(name) {
                    Some(Value::Array(a)) => a
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.is_some())
                        .map(|(i, _)| i.to_string())
                        .collect(),
                    Some(Value::Assoc(m)) => assoc_order(m).map(|(k, _)| k.clone()).collect(),
                    Some(Value::Str(_)) => vec!["0".to_owned()],
                    None => Vec::new(),
                };
                return Ok(PVal::Many(keys, ix.as_lit() == Some("*")));
            }
            // bash abandons the line (status 1) when the name is unset or
            // its value names no parameter.
            let Some(target) = self.scalar(name) else {
                return Err(ExpError::Arith(format!(
                    "vfs-sh: {name}: invalid indirect expansion"
                )));
            };
            let (tname, tindex) = match target.split_once('[') {
                Some((n, rest)) => (n.to_owned(), Some(rest.trim_end_matches(']').to_owned())),
                None => (target.clone(), None),
            };
            let special = tname.len() == 1 && "@*#?-$!0".contains(tname.as_str());
            let digits = !tname.is_empty() && tname.bytes().all(|b| b.is_ascii_digit());
            if !(syntax::is_name(&tname) || special || digits) {
                return Err(ExpError::Arith(format!(
                    "vfs-sh: {target}: invalid variable name"
                )));
            }
            let inner = Param {
                name: tname,
                index: tindex.map(|t| Word {
                    parts: vec![Part::Lit(t)],
                }),
                indirect: false,
                op: ParamOp::Get,
            };
            return self.lookup(&inner);
        }
        match name {
            "@" | "*" => {
                return Ok(PVal::Many(self.st.positional.clone(), name == "*"));
            }
            "-" => {
                // bash's order (`aefhuxB`, then `c` for `bash -c`); dash
                // shows only the options set.
                let o = &self.st.opts;
                let mut f = String::new();
                for (c, on) in [
                    ('a', o.other.get("allexport") == Some(&true)),
                    ('e', o.errexit),
                    ('f', o.noglob),
                    ('h', !self.posix),
                    ('u', o.nounset),
                    ('x', o.xtrace),
                    ('B', !self.posix),
                    ('c', !self.posix),
                ] {
                    if on {
                        f.push(c);
                    }
                }
                return Ok(PVal::One(f));
            }
            "!" => {
                return Ok(match self.jobs.last() {
                    Some((pid, _)) => PVal::One(pid.to_string()),
                    None => PVal::Unset,
                });
            }
            _ => {}
        }
        if let Some(ix) = &p.index {
            let key_all = ix.as_lit().filter(|k| *k == "@" || *k == "*");
            if let Some(k) = key_all {
                let items = match self.st.vars.get(name) {
                    Some(Value::Array(a)) => a.iter().flatten().cloned().collect(),
                    Some(Value::Assoc(m)) => assoc_order(m).map(|(_, v)| v.clone()).collect(),
                    Some(Value::Str(s)) => vec![s.clone()],
                    None => Vec::new(),
                };
                if items.is_empty() && !self.st.vars.contains_key(name) {
                    return Ok(PVal::Many(Vec::new(), k == "*"));
                }
                return Ok(PVal::Many(items, k == "*"));
            }
            let key = self.expand_string(ix)?;
            return Ok(match self.element(name, &key)? {
                Some(v) => PVal::One(v),
                None => PVal::Unset,
            });
        }
        Ok(match self.scalar(name) {
            Some(v) => PVal::One(v),
            None => PVal::Unset,
        })
    }

    // ----- [[ ]] -----

    fn cond_expr(&mut self, c: &Cond) -> E<bool> {
        Ok(match c {
            Cond::And(a, b) => self.cond_expr(a)? && self.cond_expr(b)?,
            Cond::Or(a, b) => self.cond_expr(a)? || self.cond_expr(b)?,
            Cond::Not(a) => !self.cond_expr(a)?,
            Cond::Word(w) => !self.expand_string(w)?.is_empty(),
            Cond::Unary(op, w) => {
                let arg = self.expand_string(w)?;
                if op == "-v" {
                    return self.is_set(&arg);
                }
                if op == "-o" {
                    return Ok(self.set_option_on(&arg));
                }
                let mut fs = Overlay {
                    inner: &mut *self.fs,
                    files: &self.files,
                };
                match commands::test_unary(&mut fs, op, &arg) {
                    Some(b) => b,
                    None => {
                        return Err(ExpError::Command(format!(
                            "vfs-sh: unexpected argument `{op}' to conditional unary operator"
                        )));
                    }
                }
            }
            Cond::Binary(op, a, b) => {
                let left = self.expand_string(a)?;
                match op.as_str() {
                    "==" | "=" | "!=" => {
                        let pat = self.expand_pattern(b)?;
                        // bash matches `[[ == ]]` as if extglob were on.
                        let m = glob::Pattern::with_extglob(&pat, true)
                            .matches(&left, self.st.opts.nocasematch);
                        if op == "!=" { !m } else { m }
                    }
                    "=~" => {
                        let re = self.expand_regex(b)?;
                        self.regex_match(&left, &re)?
                    }
                    "<" | ">" => {
                        let right = self.expand_string(b)?;
                        if op == "<" {
                            left < right
                        } else {
                            left > right
                        }
                    }
                    "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" => {
                        let right = self.expand_string(b)?;
                        // bash names `[[` in the error: `[[: 1.5: syntax error...`.
                        let named = |e: ExpError| match e {
                            ExpError::Arith(m) => ExpError::Status(
                                match m.strip_prefix("vfs-sh: ") {
                                    Some(rest) => format!("vfs-sh: [[: {rest}"),
                                    None => m,
                                },
                                1,
                            ),
                            e => e,
                        };
                        let x = self.arith(&left).map_err(named)?;
                        let y = self.arith(&right).map_err(named)?;
                        match op.as_str() {
                            "-eq" => x == y,
                            "-ne" => x != y,
                            "-lt" => x < y,
                            "-le" => x <= y,
                            "-gt" => x > y,
                            _ => x >= y,
                        }
                    }
                    _ => {
                        let right = self.expand_string(b)?;
                        let mut fs = Overlay {
                            inner: &mut *self.fs,
                            files: &self.files,
                        };
                        commands::test_binary(&mut fs, op, &left, &right)
                            .map_err(ExpError::Command)?
                    }
                }
            }
        })
    }

    /// The right side of `=~` as an extended regular expression: quoted
    /// parts match literally.
    fn expand_regex(&mut self, w: &Word) -> E<String> {
        let mut toks = Vec::new();
        self.parts(&w.parts, false, &mut toks)?;
        let mut s = String::new();
        for t in toks {
            if let Tok::Text { text, quoted, .. } = t {
                for ch in text.chars() {
                    // Only the characters special in an ERE are escaped:
                    // `\<` would be a GNU word boundary, where bash means
                    // `<`.
                    if quoted && "\\^$.[]|()*+?{}".contains(ch) {
                        s.push('\\');
                    }
                    s.push(ch);
                }
            }
        }
        Ok(s)
    }

    fn regex_match(&mut self, subject: &str, re: &str) -> E<bool> {
        let translated = crate::pattern::translate(re, crate::pattern::Syntax::Extended)
            .map_err(|e| ExpError::Command(format!("vfs-sh: {e}")))?;
        let rx = regex::RegexBuilder::new(&translated.regex)
            .case_insensitive(self.st.opts.nocasematch)
            .size_limit(1 << 20)
            .build()
            .map_err(|_| ExpError::Command("vfs-sh: invalid regular expression".to_owned()))?;
        let rx = crate::longest::PosixRegex::new(rx, self.st.opts.nocasematch, false);
        let caps = rx.captures_at(subject, 0);
        let arr: Vec<Option<String>> = match &caps {
            Some(c) => c
                .iter()
                .map(|m| Some(m.clone().map_or(String::new(), |m| subject[m].to_owned())))
                .collect(),
            None => Vec::new(),
        };
        self.st
            .vars
            .insert("BASH_REMATCH".to_owned(), Value::Array(arr));
        Ok(caps.is_some())
    }
}

/// Standard error of a command substitution, kept until its command's own
/// streams are at hand.
#[derive(Default)]
struct StderrProxy(Vec<u8>);

impl Write for StderrProxy {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn map_val(v: PVal, f: impl Fn(&str) -> String) -> PVal {
    match v {
        PVal::Unset => PVal::Unset,
        PVal::One(s) => PVal::One(f(&s)),
        PVal::Many(items, star) => PVal::Many(items.iter().map(|s| f(s)).collect(), star),
    }
}

/// `${x:offset:length}` as a range of `len` items.
fn slice_range(len: usize, offset: i64, length: Option<i64>) -> Option<(usize, usize)> {
    let n = len as i64;
    let start = if offset < 0 { n + offset } else { offset };
    if start < 0 || start > n {
        return None;
    }
    let end = match length {
        None => n,
        Some(l) if l < 0 => n + l,
        Some(l) => (start + l).min(n),
    };
    if end < start {
        return None;
    }
    Some((start as usize, end as usize))
}

/// Char boundaries of `s`, from 0 to its length.
fn boundaries(s: &str) -> Vec<usize> {
    let mut b: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
    b.push(s.len());
    b
}

/// `${x^p}` and its kin: each character (only the first unless `all`)
/// that the pattern matches, as a whole, changes case; no pattern is `?`.
fn change_case(s: &str, op: CaseOp, all: bool, pat: &str) -> String {
    let p = glob::Pattern::new(if pat.is_empty() { "?" } else { pat });
    let mut out = String::with_capacity(s.len());
    let mut buf = [0u8; 4];
    for (i, c) in s.chars().enumerate() {
        if (i > 0 && !all) || !p.matches(c.encode_utf8(&mut buf), false) {
            out.push(c);
            continue;
        }
        let upper = match op {
            CaseOp::Upper => true,
            CaseOp::Lower => false,
            CaseOp::Toggle => !c.is_uppercase(),
        };
        if upper {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// `${x#p}`, `${x##p}`, `${x%p}`, `${x%%p}`.
fn trim(s: &str, pat: &str, prefix: bool, longest: bool, extglob: bool) -> String {
    let p = glob::Pattern::with_extglob(pat, extglob);
    if s.len() > MAX_PATTERN_SUBJECT {
        return s.to_owned();
    }
    let b = boundaries(s);
    let cands: Box<dyn Iterator<Item = usize>> = match (prefix, longest) {
        (true, false) => Box::new(b.iter().copied()),
        (true, true) => Box::new(b.iter().rev().copied()),
        (false, false) => Box::new(b.iter().rev().copied()),
        (false, true) => Box::new(b.iter().copied()),
    };
    for k in cands {
        if prefix {
            if p.matches(&s[..k], false) {
                return s[k..].to_owned();
            }
        } else if p.matches(&s[k..], false) {
            return s[..k].to_owned();
        }
    }
    s.to_owned()
}

/// `${x/p/r}` and its forms: the longest match at the first (or each)
/// position where one starts.
fn replace(s: &str, pat: &str, rep: &str, mode: ReplaceMode, extglob: bool) -> String {
    if pat.is_empty() && mode != ReplaceMode::Prefix && mode != ReplaceMode::Suffix {
        return s.to_owned();
    }
    let p = glob::Pattern::with_extglob(pat, extglob);
    if s.len() > MAX_PATTERN_SUBJECT {
        return s.to_owned();
    }
    let b = boundaries(s);
    match mode {
        ReplaceMode::Prefix => {
            for &k in b.iter().rev() {
                if p.matches(&s[..k], false) {
                    return format!("{rep}{}", &s[k..]);
                }
            }
            s.to_owned()
        }
        ReplaceMode::Suffix => {
            for &k in &b {
                if p.matches(&s[k..], false) {
                    return format!("{}{rep}", &s[..k]);
                }
            }
            s.to_owned()
        }
        ReplaceMode::First | ReplaceMode::All => {
            let mut out = String::new();
            let mut i = 0;
            let mut bi = 0;
            while bi < b.len() {
                let start = b[bi];
                let mut found = None;
                for &end in b[bi..].iter().rev() {
                    if end > start && p.matches(&s[start..end], false) {
                        found = Some(end);
                        break;
                    }
                }
                match found {
                    Some(end) => {
                        out.push_str(&s[i..start]);
                        out.push_str(rep);
                        i = end;
                        if mode == ReplaceMode::First {
                            out.push_str(&s[i..]);
                            return out;
                        }
                        bi = b.iter().position(|&x| x == end).unwrap_or(b.len());
                    }
                    None => bi += 1,
                }
            }
            out.push_str(&s[i.min(s.len())..]);
            out
        }
    }
}

mod bind;
mod builtins;
mod compgen;
mod posix;
mod signals;
