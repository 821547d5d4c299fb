//! Signals, as far as a sandboxed shell has them: `kill` and `trap`.
//!
//! The shell is the only process in the sandbox, so a signal can only be
//! sent to the shell itself (`$$`, `0`) or to one of its background jobs,
//! which have all finished by the time `kill` runs (they run to the end
//! when started). Names, numbers and listings are Linux's as bash prints
//! them; a signal to the shell does what it does to bash: runs its trap,
//! is ignored, or ends the script with 128 + its number.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::syntax;

use super::{Flow, Io, R, SHELL_PID, Shell, single_quote};

/// Linux's signal names without `SIG`, by number; 32 and 33 have none
/// (glibc keeps them for its threads).
const NAMES: [&str; 65] = [
    "EXIT", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV",
    "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU",
    "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS", "", "", "RTMIN",
    "RTMIN+1", "RTMIN+2", "RTMIN+3", "RTMIN+4", "RTMIN+5", "RTMIN+6", "RTMIN+7", "RTMIN+8",
    "RTMIN+9", "RTMIN+10", "RTMIN+11", "RTMIN+12", "RTMIN+13", "RTMIN+14", "RTMIN+15", "RTMAX-14",
    "RTMAX-13", "RTMAX-12", "RTMAX-11", "RTMAX-10", "RTMAX-9", "RTMAX-8", "RTMAX-7", "RTMAX-6",
    "RTMAX-5", "RTMAX-4", "RTMAX-3", "RTMAX-2", "RTMAX-1", "RTMAX",
];

/// The signal names `compgen -A signal` offers: `EXIT`, then each by
/// number with `SIG` (`SIGJUNK(32)` for the two glibc keeps), then the
/// shell's own traps.
pub(super) fn compgen_signals() -> Vec<String> {
    let mut v = vec!["EXIT".to_owned()];
    for (n, name) in NAMES.iter().enumerate().skip(1) {
        v.push(if name.is_empty() {
            format!("SIGJUNK({n})")
        } else {
            format!("SIG{name}")
        });
    }
    v.extend(["DEBUG", "ERR", "RETURN"].map(str::to_owned));
    v
}

const KILL: u32 = 9;
const TERM: u32 = 15;

/// bash's traps that are not signals, after the signals in `trap -p`
/// (ERR's action is kept in its own field).
const DEBUG: u32 = 65;
const ERR: u32 = 66;
const RETURN: u32 = 67;

/// Signals whose default action leaves the shell running (ignored, or a
/// stop, which has no terminal to return to here).
fn harmless(sig: u32) -> bool {
    matches!(sig, 0 | 17..=23 | 28)
}

/// A signal's number from its name (`TERM`, `SIGTERM`, any case) or its
/// number (0 to 64, as bash takes it).
fn number(spec: &str) -> Option<u32> {
    if let Ok(n) = spec.parse::<u32>() {
        return (n < 65).then_some(n);
    }
    let upper = spec.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    (1..65u32).find(|&n| NAMES[n as usize] == name)
}

/// How `trap -p` names a trap: `EXIT`, `SIGINT`, `DEBUG`; dash leaves out
/// the `SIG`.
fn trap_name(key: u32, posix: bool) -> String {
    match key {
        0 => "EXIT".to_owned(),
        DEBUG => "DEBUG".to_owned(),
        ERR => "ERR".to_owned(),
        RETURN => "RETURN".to_owned(),
        n if NAMES[n as usize].is_empty() => n.to_string(),
        n if posix => NAMES[n as usize].to_owned(),
        n => format!("SIG{}", NAMES[n as usize]),
    }
}

/// `kill -l` with no operand: bash's five columns, each `N) SIGNAME`
/// followed by a tab; dash's names one to a line.
fn table(posix: bool) -> String {
    let mut out = String::new();
    if posix {
        for name in NAMES.iter().skip(1).filter(|n| !n.is_empty()) {
            let _ = writeln!(out, "{name}");
        }
        return format!("0\n{out}");
    }
    let shown: Vec<usize> = (1..65).filter(|&n| !NAMES[n].is_empty()).collect();
    for row in shown.chunks(5) {
        for &n in row {
            let _ = write!(out, "{n:2}) SIG{}\t", NAMES[n]);
        }
        if row.len() == 5 {
            out.pop();
        }
        out.push('\n');
    }
    out
}

/// What a `kill` operand names.
enum Target {
    /// The shell itself: `$$`, or `0` (its process group).
    Shell,
    /// A background job, which has finished but is still the shell's.
    Job,
    Missing(String),
}

impl Shell<'_> {
    /// `kill [-s SIG | -n NUM | -SIG] PID|%JOB...`, `kill -l|-L [SIG]...`.
    pub(super) fn kill(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        const USAGE: &str = "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]";
        let mut sig = Some(TERM);
        let mut spec = String::new();
        let mut listing = false;
        let mut saw_signal = false;
        let mut rest = args;
        while let [word, tail @ ..] = rest {
            match word.as_str() {
                "-l" | "-L" => {
                    listing = true;
                    rest = tail;
                }
                "-s" | "-n" => {
                    let [value, tail @ ..] = tail else {
                        self.say(
                            io,
                            format_args!("kill: {word}: option requires an argument"),
                        );
                        return Ok(1);
                    };
                    spec.clone_from(value);
                    sig = number(value);
                    saw_signal = true;
                    rest = tail;
                }
                "--" => {
                    rest = tail;
                    break;
                }
                w if w.len() > 1 && w.starts_with('-') && !saw_signal => {
                    spec = w[1..].to_owned();
                    sig = number(&spec);
                    saw_signal = true;
                    rest = tail;
                }
                _ => break,
            }
        }
        if listing {
            return Ok(self.list_signals(rest, io));
        }
        if rest.is_empty() {
            let _ = writeln!(io.err, "{USAGE}");
            return Ok(2);
        }
        let Some(sig) = sig else {
            self.say(
                io,
                format_args!("kill: {spec}: invalid signal specification"),
            );
            return Ok(1);
        };
        let mut sent = false;
        let mut to_shell = false;
        for word in rest {
            match self.kill_target(word) {
                Target::Shell => {
                    sent = true;
                    to_shell = true;
                }
                Target::Job => sent = true,
                Target::Missing(msg) => self.say(io, format_args!("kill: {msg}")),
            }
        }
        let status = u8::from(!sent);
        if to_shell && sig != 0 {
            self.status = status;
            return self.receive(sig, status, io);
        }
        Ok(status)
    }

    fn kill_target(&self, word: &str) -> Target {
        let digits = word.strip_prefix('-').unwrap_or(word);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return match digits.parse::<u32>() {
                Ok(0 | SHELL_PID) => Target::Shell,
                Ok(pid)
                    if !word.starts_with('-') && self.jobs.iter().any(|&(job, _)| job == pid) =>
                {
                    Target::Job
                }
                _ => Target::Missing(format!("({word}) - No such process")),
            };
        }
        if let Some(job) = word.strip_prefix('%') {
            let found = match job {
                "" | "%" | "+" | "-" => !self.jobs.is_empty(),
                n => n
                    .parse::<usize>()
                    .is_ok_and(|n| (1..=self.jobs.len()).contains(&n)),
            };
            return if found {
                Target::Job
            } else {
                Target::Missing(format!("{word}: no such job"))
            };
        }
        Target::Missing(format!("{word}: arguments must be process or job IDs"))
    }

    /// The shell receives `sig`: its trap runs, or it is ignored, or the
    /// script ends as bash does on it (the EXIT trap runs, except on
    /// `KILL`).
    fn receive(&mut self, sig: u32, status: u8, io: &mut Io<'_>) -> R<u8> {
        match self.traps.get(&sig).cloned() {
            Some(action) if action.is_empty() => Ok(status),
            Some(action) => {
                if let Ok(list) = syntax::parse_as(&action, self.posix) {
                    self.list(&list, io)?;
                }
                self.status = status;
                Ok(status)
            }
            None if harmless(sig) => Ok(status),
            None => {
                if sig == KILL {
                    self.exit_trap = None;
                }
                Err(Flow::Exit(u8::try_from(128 + sig).unwrap_or(u8::MAX)))
            }
        }
    }

    /// Entering a function: the RETURN trap is not inherited (bash's,
    /// without `set -T`); what it was is handed back to
    /// [`Shell::returning`].
    pub(super) fn enter_return_scope(&mut self) -> Option<String> {
        self.traps.remove(&RETURN)
    }

    /// Leaving a function or a sourced file: the RETURN trap it sees runs
    /// now (one a function set stays set, as in bash); otherwise the
    /// caller's is back. The status is the function's, whatever the trap
    /// does.
    pub(super) fn returning(&mut self, outer: Option<String>, io: &mut Io<'_>) -> R<()> {
        let Some(action) = self.traps.get(&RETURN).cloned() else {
            if let Some(outer) = outer {
                self.traps.insert(RETURN, outer);
            }
            return Ok(());
        };
        let status = self.status;
        if let Ok(list) = syntax::parse_as(&action, self.posix) {
            self.list(&list, io)?;
        }
        self.status = status;
        Ok(())
    }

    /// `kill -l [SIG]...` and `trap -l`: the table, or each number's name
    /// (an exit status above 128 names the signal that caused it) and
    /// each name's number.
    fn list_signals(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        if args.is_empty() {
            let _ = io
                .out
                .write_all(&crate::lossless::encode(&table(self.posix)));
            return 0;
        }
        let mut status = 0;
        for a in args {
            let found = match a.parse::<u32>() {
                Ok(n) => {
                    let n = if n > 128 { n - 128 } else { n };
                    NAMES
                        .get(n as usize)
                        .filter(|s| !s.is_empty())
                        .map(|s| (*s).to_owned())
                }
                Err(_) => number(a).filter(|&n| n > 0).map(|n| n.to_string()),
            };
            match found {
                Some(text) => {
                    let _ = writeln!(io.out, "{text}");
                }
                None => {
                    self.say(io, format_args!("kill: {a}: invalid signal specification"));
                    status = 1;
                }
            }
        }
        status
    }

    /// `trap [-lp] [[ACTION] SIGNAL...]`. EXIT runs when the script ends
    /// and ERR after a command that fails where `set -e` would stop; the
    /// others run when `kill` sends their signal to the shell, RETURN when
    /// a function or a sourced file that set it ends. DEBUG is kept and
    /// listed, not run.
    pub(super) fn trap(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        let args = match args.first().map(String::as_str) {
            Some("--") => &args[1..],
            _ => args,
        };
        match args.first().map(String::as_str) {
            Some("-l") => return self.list_signals(&[], io),
            Some("-p") => return self.print_traps(&args[1..], io),
            None => return self.print_traps(&[], io),
            _ => {}
        }
        // One operand that is a signal resets it (`trap INT`), as does `-`.
        let (action, sigs) = if args.len() == 1 || args[0] == "-" {
            let skip = usize::from(args[0] == "-");
            (None, &args[skip..])
        } else {
            (Some(args[0].clone()), &args[1..])
        };
        let mut status = 0;
        for s in sigs {
            let Some(key) = self.trap_key(s) else {
                if self.posix {
                    self.say(io, format_args!("trap: {s}: bad trap"));
                } else {
                    self.say(io, format_args!("trap: {s}: invalid signal specification"));
                }
                status = 1;
                continue;
            };
            match key {
                0 => self.exit_trap.clone_from(&action),
                ERR => self.err_trap.clone_from(&action),
                _ => {
                    if let Some(a) = &action {
                        self.traps.insert(key, a.clone());
                    } else {
                        self.traps.remove(&key);
                    }
                }
            }
        }
        status
    }

    fn trap_key(&self, spec: &str) -> Option<u32> {
        let upper = spec.to_ascii_uppercase();
        match upper.strip_prefix("SIG").unwrap_or(&upper) {
            "EXIT" => Some(0),
            "DEBUG" if !self.posix => Some(DEBUG),
            "ERR" if !self.posix => Some(ERR),
            "RETURN" if !self.posix => Some(RETURN),
            bare => number(bare),
        }
    }

    /// The traps as commands that set them again, in bash's order: EXIT,
    /// the signals by number, DEBUG, ERR, RETURN.
    fn print_traps(&mut self, only: &[String], io: &mut Io<'_>) -> u8 {
        let mut all: BTreeMap<u32, String> = self.traps.clone();
        if let Some(a) = &self.exit_trap {
            all.insert(0, a.clone());
        }
        if let Some(a) = &self.err_trap {
            all.insert(ERR, a.clone());
        }
        let mut status = 0;
        let keys: Vec<u32> = if only.is_empty() {
            all.keys().copied().collect()
        } else {
            let mut keys = Vec::new();
            for s in only {
                match self.trap_key(s) {
                    Some(k) => keys.push(k),
                    None => {
                        self.say(io, format_args!("trap: {s}: invalid signal specification"));
                        status = 1;
                    }
                }
            }
            keys
        };
        for k in keys {
            if let Some(action) = all.get(&k) {
                let _ = writeln!(
                    io.out,
                    "trap -- {} {}",
                    single_quote(action),
                    trap_name(k, self.posix)
                );
            }
        }
        status
    }
}
