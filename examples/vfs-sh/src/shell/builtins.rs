//! The builtins: commands that read or change the shell's own state
//! (`cd`, `read`, `set`, `local`, `eval`, `source`...), and the wrappers
//! that run another command (`command`, `timeout`, `env`...).

use super::{Attrs, ExpError, Flow, Io, R, Shell, Value, bash_quote, needs_ansi_c, single_quote};
use crate::commands;
use crate::exec::Whence;
use crate::fs::FsError;
use crate::syntax;
use crate::syntax::is_name as valid_name;

/// bash 5.2's `shopt` options in the order it lists them, with their
/// values in `bash -c`. The globbing ones, `nocasematch` and `lastpipe`
/// take effect; the rest are kept and listed so that scripts setting them
/// run.
pub(super) const SHOPTS: &[(&str, bool)] = &[
    ("autocd", false),
    ("assoc_expand_once", false),
    ("cdable_vars", false),
    ("cdspell", false),
    ("checkhash", false),
    ("checkjobs", false),
    ("checkwinsize", true),
    ("cmdhist", true),
    ("compat31", false),
    ("compat32", false),
    ("compat40", false),
    ("compat41", false),
    ("compat42", false),
    ("compat43", false),
    ("compat44", false),
    ("complete_fullquote", true),
    ("direxpand", false),
    ("dirspell", false),
    ("dotglob", false),
    ("execfail", false),
    ("expand_aliases", false),
    ("extdebug", false),
    ("extglob", false),
    ("extquote", true),
    ("failglob", false),
    ("force_fignore", true),
    ("globasciiranges", true),
    ("globskipdots", true),
    ("globstar", false),
    ("gnu_errfmt", false),
    ("histappend", false),
    ("histreedit", false),
    ("histverify", false),
    ("hostcomplete", true),
    ("huponexit", false),
    ("inherit_errexit", false),
    ("interactive_comments", true),
    ("lastpipe", false),
    ("lithist", false),
    ("localvar_inherit", false),
    ("localvar_unset", false),
    ("login_shell", false),
    ("mailwarn", false),
    ("no_empty_cmd_completion", false),
    ("nocaseglob", false),
    ("nocasematch", false),
    ("noexpand_translation", false),
    ("nullglob", false),
    ("patsub_replacement", true),
    ("progcomp", true),
    ("progcomp_alias", false),
    ("promptvars", true),
    ("restricted_shell", false),
    ("shift_verbose", false),
    ("sourcepath", true),
    ("varredir_close", false),
    ("xpg_echo", false),
];

/// bash 5.2's `set -o` options in the order it lists them, with their
/// values in `bash -c`.
pub(super) const SET_OPTIONS: &[(&str, bool)] = &[
    ("allexport", false),
    ("braceexpand", true),
    ("emacs", false),
    ("errexit", false),
    ("errtrace", false),
    ("functrace", false),
    ("hashall", true),
    ("histexpand", false),
    ("history", false),
    ("ignoreeof", false),
    ("interactive-comments", true),
    ("keyword", false),
    ("monitor", false),
    ("noclobber", false),
    ("noexec", false),
    ("noglob", false),
    ("nolog", false),
    ("notify", false),
    ("nounset", false),
    ("onecmd", false),
    ("physical", false),
    ("pipefail", false),
    ("posix", false),
    ("privileged", false),
    ("verbose", false),
    ("vi", false),
    ("xtrace", false),
];

const KEYWORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "for", "in", "do", "done", "while", "until", "case",
    "esac", "function", "select", "time", "{", "}", "!", "[[", "]]",
];

/// The option letters a builtin takes (those after `:` take a value) and
/// its usage line, as bash's `internal_getopt` checks them; the builtins
/// that read their own options are not here.
const BUILTIN_OPTIONS: &[(&str, &str, &str)] = &[
    ("unset", "fvn", "unset [-f] [-v] [-n] [name ...]"),
    ("cd", "LPe@", "cd [-L|[-P [-e]] [-@]] [dir]"),
    (
        "export",
        "fnp",
        "export [-fn] [name[=value] ...] or export -p",
    ),
    (
        "readonly",
        "aAfp",
        "readonly [-aAf] [name[=value] ...] or readonly -p",
    ),
    (
        "declare",
        "aAfFgiIlnrtuxp",
        "declare [-aAfFgiIlnrtux] [name[=value] ...] or declare -p [-aAfFilnrtux] [name ...]",
    ),
    (
        "typeset",
        "aAfFgiIlnrtuxp",
        "typeset [-aAfFgiIlnrtux] name[=value] ... or typeset -p [-aAfFilnrtux] [name ...]",
    ),
    ("printf", ":v", "printf [-v var] format [arguments]"),
    ("eval", "", "eval [arg ...]"),
    ("alias", "p", "alias [-p] [name[=value] ... ]"),
    ("unalias", "a", "unalias [-a] name [name ...]"),
    ("wait", "fn:p", "wait [-fn] [-p var] [id ...]"),
    ("trap", "lp", "trap [-lp] [[arg] signal_spec ...]"),
    ("umask", "pS", "umask [-p] [-S] [mode]"),
    ("shopt", "pqsuo", "shopt [-pqsu] [-o] [optname ...]"),
    (
        "hash",
        "lrdt:p",
        "hash [-lr] [-p pathname] [-dt] [name ...]",
    ),
    ("command", "pVv", "command [-pVv] command [arg ...]"),
    ("source", "", "source filename [arguments]"),
    (".", "", ". filename [arguments]"),
    (
        "enable",
        "adnps:f",
        "enable [-a] [-dnps] [-f filename] [name ...]",
    ),
    (
        "mapfile",
        "t:dnOsuCc",
        "mapfile [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]",
    ),
    (
        "readarray",
        "t:dnOsuCc",
        "readarray [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]",
    ),
];

/// The first option letter `name` does not take, with its usage line:
/// options come first, up to `--`, `-` or the first other word.
fn invalid_option(name: &str, args: &[String]) -> Option<(char, &'static str)> {
    let &(_, letters, usage) = BUILTIN_OPTIONS.iter().find(|(n, _, _)| *n == name)?;
    let (flags, valued) = letters.split_once(':').unwrap_or((letters, ""));
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" || a == "-" || !a.starts_with('-') {
            return None;
        }
        for (k, c) in a.char_indices().skip(1) {
            if valued.contains(c) {
                // The value is the rest of the word or the next one.
                if k + 1 == a.len() {
                    i += 1;
                }
                break;
            }
            if !flags.contains(c) {
                return Some((c, usage));
            }
        }
    }
    None
}

fn status_of(n: i64) -> u8 {
    u8::try_from(n.rem_euclid(256)).unwrap_or(0)
}

impl Shell<'_> {
    /// Writes one of the shell's messages, begun as bash begins them
    /// (`bash: line 3: `).
    pub(super) fn say(&self, io: &mut Io<'_>, msg: impl std::fmt::Display) {
        let line = format!("{}{msg}\n", self.env.whence.prefix());
        let _ = io.err.write_all(&crate::lossless::encode(&line));
    }

    /// Writes a message made with [`crate::exec::SHELL`] before it (an
    /// expansion's or a redirection's error), begun as bash begins it.
    pub(super) fn report(&self, io: &mut Io<'_>, msg: &str) {
        let line = format!("{}\n", self.env.whence.message(msg));
        let _ = io.err.write_all(&crate::lossless::encode(&line));
    }

    /// Runs a builtin. Kept out of line (as are the shell's other ways to
    /// run a command): its frame is the size of its largest builtin's,
    /// and inlined into `invoke` it would weigh on every level of nested
    /// function calls, which must fit the guest's stack.
    #[inline(never)]
    pub(super) fn builtin(&mut self, name: &str, args: &[String], io: &mut Io<'_>) -> R<u8> {
        if let Some((bad, usage)) = invalid_option(name, args) {
            self.say(io, format_args!("{name}: -{bad}: invalid option"));
            let _ = writeln!(io.err, "{name}: usage: {usage}");
            return Ok(2);
        }
        match name {
            ":" => Ok(0),
            "." | "source" => self.source(name, args, io),
            "cd" => Ok(self.cd("cd", args, io)),
            "exit" => {
                let code = match args {
                    [] => self.status,
                    [a] => match a.trim().parse::<i64>() {
                        Ok(n) => status_of(n),
                        Err(_) => {
                            self.say(io, format_args!("exit: {a}: numeric argument required"));
                            2
                        }
                    },
                    _ => {
                        self.say(io, "exit: too many arguments");
                        return Ok(1);
                    }
                };
                Err(Flow::Exit(code))
            }
            "return" => {
                let code = match args.first() {
                    None => self.status,
                    Some(a) => match a.trim().parse::<i64>() {
                        Ok(n) => status_of(n),
                        Err(_) => {
                            self.say(io, format_args!("return: {a}: numeric argument required"));
                            2
                        }
                    },
                };
                if self.calls == 0 && self.sourcing == 0 {
                    self.say(
                        io,
                        "return: can only `return' from a function or sourced script",
                    );
                    return Ok(2);
                }
                Err(Flow::Return(code))
            }
            "break" | "continue" => {
                let n = match args.first() {
                    None => 1,
                    Some(a) => match a.parse::<u32>() {
                        Ok(n) if n >= 1 => n,
                        _ => {
                            self.say(io, format_args!("{name}: {a}: loop count out of range"));
                            return Ok(1);
                        }
                    },
                };
                if self.loops == 0 {
                    self.say(
                        io,
                        format_args!(
                            "{name}: only meaningful in a `for', `while', or `until' loop"
                        ),
                    );
                    return Ok(0);
                }
                let n = n.min(self.loops);
                Err(if name == "break" {
                    Flow::Break(n)
                } else {
                    Flow::Continue(n)
                })
            }
            "shift" => {
                let n = match args.first() {
                    None => 1,
                    Some(a) => match a.parse::<usize>() {
                        Ok(n) => n,
                        Err(_) => {
                            self.say(io, format_args!("shift: {a}: numeric argument required"));
                            return Ok(1);
                        }
                    },
                };
                if n > self.st.positional.len() {
                    return Ok(1);
                }
                self.st.positional.drain(..n);
                Ok(0)
            }
            "set" => Ok(self.set(args, io)),
            "compgen" => self.compgen(args, io),
            "shopt" => Ok(self.shopt(args, io)),
            "unset" => self.unset(args, io),
            "export" | "readonly" => self.declare(name, args, io, false),
            "declare" | "typeset" => self.declare(name, args, io, self.calls > 0),
            "local" => {
                if self.calls == 0 {
                    self.say(io, "local: can only be used in a function");
                    return Ok(1);
                }
                self.declare(name, args, io, true)
            }
            "read" => self.read(args, io),
            "mapfile" | "readarray" => self.mapfile(args, io),
            "eval" => {
                let args = args.strip_prefix(&["--".to_owned()][..]).unwrap_or(args);
                let text = args.join(" ");
                self.trace_level += 1;
                let whence = self.env.whence.clone();
                let lead = if whence.dash {
                    syntax::Lead::Dash(&whence.name)
                } else {
                    syntax::Lead::Within {
                        name: &whence.name,
                        what: "eval",
                        line: whence.line,
                    }
                };
                let r = self.run_text(&text, &lead, io);
                self.trace_level -= 1;
                r
            }
            "let" => {
                if args.is_empty() {
                    self.say(io, "let: expression expected");
                    return Ok(1);
                }
                let mut last = 0;
                for a in args {
                    match self.arith(a) {
                        Ok(v) => last = v,
                        Err(
                            ExpError::Command(m)
                            | ExpError::Fatal(m)
                            | ExpError::Arith(m)
                            | ExpError::Exit(m)
                            | ExpError::Status(m, _)
                            | ExpError::Posix(m),
                        ) => {
                            // bash names the builtin: `let: x=1/0: division by 0`.
                            let m = m.strip_prefix(crate::exec::SHELL).unwrap_or(&m);
                            self.say(io, format_args!("let: {m}"));
                            return Ok(1);
                        }
                        Err(ExpError::Flow(f)) => return Err(f),
                    }
                }
                Ok(u8::from(last == 0))
            }
            "type" => Ok(self.type_builtin(args, io)),
            "command" => self.command_builtin(args, io),
            "builtin" => match args.split_first() {
                None => Ok(0),
                Some((n, rest)) if super::is_builtin(n) => {
                    if super::BUILTINS.contains(&n.as_str()) {
                        self.builtin(n, rest, io)
                    } else {
                        Ok(self.external(args, io))
                    }
                }
                Some((n, _)) => {
                    self.say(io, format_args!("builtin: {n}: not a shell builtin"));
                    Ok(1)
                }
            },
            "printf" => self.printf(args, io),
            "exec" => {
                if args.is_empty() {
                    return Ok(0);
                }
                let s = self.invoke(args, io, false)?;
                Err(Flow::Exit(s))
            }
            "umask" => {
                // The mask is kept and shown; the filesystem creates nothing.
                let (flags, modes): (Vec<&String>, Vec<&String>) =
                    args.iter().partition(|a| a.starts_with('-') && a.len() > 1);
                let symbolic = flags.iter().any(|a| a.contains('S'));
                let with_p = flags.iter().any(|a| a.contains('p'));
                if let Some(mode) = modes.first() {
                    match u32::from_str_radix(mode, 8) {
                        Ok(m) if m <= 0o7777 => self.st.umask = m & 0o777,
                        _ if !mode.bytes().all(|b| b.is_ascii_digit()) => {}
                        _ => {
                            self.say(io, format_args!("umask: {mode}: octal number out of range"));
                            return Ok(1);
                        }
                    }
                    return Ok(0);
                }
                let m = self.st.umask;
                let text = if symbolic {
                    let who = |shift: u32| {
                        let allowed = !(m >> shift) & 7;
                        ["r", "w", "x"]
                            .iter()
                            .zip([4, 2, 1])
                            .filter(|(_, bit)| allowed & bit != 0)
                            .map(|(l, _)| *l)
                            .collect::<String>()
                    };
                    format!("u={},g={},o={}", who(6), who(3), who(0))
                } else {
                    format!("{m:04o}")
                };
                let prefix = match (with_p, symbolic) {
                    (true, true) => "umask -S ",
                    (true, false) => "umask ",
                    _ => "",
                };
                let _ = writeln!(io.out, "{prefix}{text}");
                Ok(0)
            }
            "ulimit" => {
                if args.iter().all(|a| a.starts_with('-')) {
                    let _ = writeln!(io.out, "unlimited");
                }
                Ok(0)
            }
            "trap" => Ok(self.trap(args, io)),
            "kill" => self.kill(args, io),
            "alias" => Ok(self.alias(args, io)),
            "unalias" => Ok(self.unalias(args, io)),
            "wait" => Ok(self.wait(args, io)),
            "hash" | "times" | "jobs" | "disown" | "enable" | "history" => Ok(0),
            "getopts" => Ok(self.getopts(args, io)),
            "bind" => Ok(self.bind(args, io)),
            "pushd" | "popd" | "dirs" => Ok(self.dir_stack_builtin(name, args, io)),
            "help" => Ok(self.help(args, io)),
            "timeout" | "nice" | "ionice" | "nohup" | "stdbuf" | "time" => {
                let rest = wrapped_command(name, args);
                if rest.is_empty() {
                    if name == "timeout" {
                        let _ = writeln!(io.err, "timeout: missing operand");
                        return Ok(125);
                    }
                    return Ok(0);
                }
                self.invoke(rest, io, true)
            }
            "env" => self.env_builtin(args, io),
            "printenv" => self.printenv(args, io),
            _ => Ok(self.external(&[name.to_owned()], io)),
        }
    }

    /// `help`: the list of builtins and commands; `help NAME...` (or
    /// `help -s NAME...`): each one's synopsis, as bash's `help -s` gives a
    /// builtin's (vfs-sh has no long help texts).
    fn help(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        let names: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        if names.is_empty() {
            return self.external(&["help".to_owned()], io);
        }
        let mut status = 0;
        for name in names {
            let usage = BUILTIN_OPTIONS
                .iter()
                .find(|(n, _, _)| n == name)
                .map(|(_, _, usage)| *usage)
                .or_else(|| commands::usage_of(name));
            match usage {
                Some(usage) => {
                    let _ = writeln!(io.out, "{name}: {usage}");
                }
                None if super::is_builtin(name) => {
                    let _ = writeln!(io.out, "{name}: {name} (a builtin; see `help`)");
                }
                None => {
                    self.say(
                        io,
                        format_args!(
                            "help: no help topics match `{name}'.  Try `help help' or `man -k {name}' or `info {name}'."
                        ),
                    );
                    status = 1;
                }
            }
        }
        status
    }

    fn source(&mut self, name: &str, args: &[String], io: &mut Io<'_>) -> R<u8> {
        let Some((path, rest)) = args.split_first() else {
            self.say(io, format_args!("{name}: filename argument required"));
            return Ok(2);
        };
        // `source /dev/stdin <<< TEXT` reads the builtin's own input.
        let text = if path == "/dev/stdin" {
            io.input.borrow_mut().take_rest()
        } else {
            match self.read_file(path) {
                Ok(t) => t,
                Err(msg) => {
                    self.report(io, &msg);
                    return Ok(1);
                }
            }
        };
        let saved =
            (!rest.is_empty()).then(|| std::mem::replace(&mut self.st.positional, rest.to_vec()));
        // Its messages name its lines, and in bash the file (dash keeps
        // its own name).
        let whence = self.env.whence.clone();
        let name = if whence.dash { &whence.name } else { path };
        self.env.whence = Whence {
            string: false,
            ..Whence::new(name, whence.dash)
        };
        self.sourcing += 1;
        // A sourced file sees the RETURN trap of its caller.
        let lead = if whence.dash {
            syntax::Lead::Dash(&whence.name)
        } else {
            syntax::Lead::File(path)
        };
        let mut r = self.run_text(&crate::lossless::decode(&text), &lead, io);
        if let Err(flow) = self.returning(None, io) {
            r = Err(flow);
        }
        self.sourcing -= 1;
        self.env.whence = whence;
        if let Some(p) = saved {
            self.st.positional = p;
        }
        match r {
            Err(Flow::Return(c)) => Ok(c),
            other => other,
        }
    }

    /// Runs the text of `eval` or a sourced file a line at a time, as
    /// bash does: the lines before a syntax error run, then the error
    /// gives status 2.
    fn run_text(&mut self, text: &str, lead: &syntax::Lead<'_>, io: &mut Io<'_>) -> R<u8> {
        let (lines, error) = syntax::parse_lines(text, self.posix);
        let status = self.lines(&lines, io)?;
        match error {
            // bash 5.2 ends the whole shell on an unexpected token inside
            // `$(...)`, even from `eval` or `source`.
            Some(e) if e.status == Some(127) => {
                let _ = writeln!(io.err, "{}", e.report(lead));
                Err(Flow::Exit(127))
            }
            Some(e) => {
                let said = e.report(lead);
                if !said.is_empty() {
                    let _ = writeln!(io.err, "{said}");
                }
                self.status = 2;
                Ok(2)
            }
            None => Ok(status),
        }
    }

    /// `wait [-n] [PID]...`: background jobs have already run to their
    /// end; the status is the last PID's (0 with none, 127 for a PID that
    /// is no job of this shell, as bash says).
    fn wait(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        let mut status = 0;
        for a in args.iter().filter(|a| !a.starts_with('-')) {
            let job = a
                .strip_prefix('%')
                .map_or_else(|| a.parse::<u32>().ok(), |_| self.jobs.last().map(|j| j.0));
            match job.and_then(|pid| self.jobs.iter().find(|j| j.0 == pid)) {
                Some(&(_, s)) => status = s,
                None => {
                    self.say(io, format!("wait: pid {a} is not a child of this shell"));
                    status = 127;
                }
            }
        }
        if args.iter().any(|a| a == "-n") && !args.iter().any(|a| !a.starts_with('-')) {
            status = self.jobs.last().map_or(127, |j| j.1);
        }
        status
    }

    /// `cd`, or the change of directory of `pushd` and `popd` (`who`, as
    /// their messages name it).
    fn cd(&mut self, who: &str, args: &[String], io: &mut Io<'_>) -> u8 {
        let args_all = args;
        let args: Vec<&String> = args
            .iter()
            .skip_while(|a| matches!(a.as_str(), "-L" | "-P" | "-e" | "--"))
            .collect();
        let target = match args.as_slice() {
            [] => self.scalar("HOME").unwrap_or_else(|| "/".to_owned()),
            [one] => (*one).clone(),
            _ => {
                self.say(io, "cd: too many arguments");
                return 1;
            }
        };
        let mut print = false;
        let target = if target == "-" {
            match self.scalar("OLDPWD") {
                Some(o) => {
                    print = true;
                    o
                }
                None => {
                    self.say(io, "cd: OLDPWD not set");
                    return 1;
                }
            }
        } else {
            target
        };
        if target.is_empty() && !args_all.iter().any(|a| a.as_str() == "-P") {
            // bash: `cd ""` stays where it is and succeeds (`cd -P ""`
            // fails, as the empty path resolves to nothing).
            return 0;
        }
        let before = self.fs.cwd();
        let result = match self.fs.metadata(&target) {
            Ok(m) if !m.is_dir() => Err(FsError::NotADirectory(m.path)),
            _ => self.fs.set_cwd(&target),
        };
        match result {
            Ok(now) => {
                self.cd_log.push(before.clone());
                self.set_scalar("OLDPWD", before);
                self.set_scalar("PWD", now.clone());
                self.sync_dirstack();
                if print {
                    let _ = writeln!(io.out, "{now}");
                }
                0
            }
            Err(e) => {
                self.say(io, format_args!("{who}: {target}: {}", e.strerror()));
                1
            }
        }
    }

    /// `pushd DIR`, `popd`, `dirs`: bash's directory stack; each prints
    /// the stack, the working directory first.
    fn dir_stack_builtin(&mut self, name: &str, args: &[String], io: &mut Io<'_>) -> u8 {
        let quiet = name != "dirs" && args.iter().any(|a| a == "-n" || a == "-q");
        let ops: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        match name {
            "pushd" => {
                let Some(dir) = ops.first() else {
                    self.say(io, "pushd: no other directory");
                    return 1;
                };
                let before = self.fs.cwd();
                if self.cd(name, &[(*dir).clone()], io) != 0 {
                    return 1;
                }
                self.dir_stack.insert(0, before);
            }
            "popd" => {
                if self.dir_stack.is_empty() {
                    self.say(io, "popd: directory stack empty");
                    return 1;
                }
                let top = self.dir_stack.remove(0);
                if self.cd(name, &[top], io) != 0 {
                    return 1;
                }
            }
            _ => {}
        }
        if name == "dirs" && args.iter().any(|a| a == "-c") {
            self.dir_stack.clear();
        }
        self.sync_dirstack();
        if name == "dirs" && args.iter().any(|a| a == "-c") {
            return 0;
        }
        if quiet {
            return 0;
        }
        let mut all = vec![self.fs.cwd()];
        all.extend(self.dir_stack.iter().cloned());
        // `~` for $HOME, as bash shows the stack (not for a HOME of `/`,
        // and not with `-l`).
        let home = self.scalar("HOME").filter(|h| h.len() > 1);
        let long = name == "dirs" && args.iter().any(|a| a == "-l");
        let shown: Vec<String> = all
            .iter()
            .map(|d| match home.as_deref() {
                Some(h) if !long && d == h => "~".to_owned(),
                Some(h) if !long && d.starts_with(&format!("{h}/")) => {
                    format!("~{}", &d[h.len()..])
                }
                _ => d.clone(),
            })
            .collect();
        let flag = |f: &str| name == "dirs" && args.iter().any(|a| a == f);
        // `dirs +N` shows the Nth entry from the left, `-N` from the right.
        let nth = args.iter().find_map(|a| {
            let (from_left, n) = a
                .strip_prefix('+')
                .map(|n| (true, n))
                .or_else(|| a.strip_prefix('-').map(|n| (false, n)))?;
            n.parse::<usize>().ok().map(|n| (from_left, n))
        });
        if let (true, Some((from_left, n))) = (name == "dirs", nth) {
            let k = if from_left {
                Some(n)
            } else {
                shown.len().checked_sub(n + 1)
            };
            return match k.and_then(|k| shown.get(k)) {
                Some(d) => {
                    let _ = writeln!(io.out, "{d}");
                    0
                }
                None if self.dir_stack.is_empty() => {
                    self.say(io, "dirs: directory stack empty");
                    1
                }
                None => {
                    self.say(
                        io,
                        format_args!("dirs: {n}: directory stack index out of range"),
                    );
                    1
                }
            };
        }
        let text = if flag("-v") {
            shown
                .iter()
                .enumerate()
                .map(|(k, d)| format!("{k:2}  {d}\n"))
                .collect()
        } else if flag("-p") {
            shown.iter().map(|d| format!("{d}\n")).collect()
        } else {
            format!("{}\n", shown.join(" "))
        };
        let _ = io.out.write_all(&crate::lossless::encode(&text));
        0
    }

    /// `alias [-p] [NAME[=VALUE]]...`: defines, shows (`alias NAME='VALUE'`,
    /// by name) or looks up aliases.
    fn alias(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        let (list_all, names) = match args.first().map(String::as_str) {
            Some("-p") => (true, &args[1..]),
            Some("--") => (false, &args[1..]),
            _ => (args.is_empty(), args),
        };
        if list_all {
            let text: String = self
                .st
                .aliases
                .iter()
                .map(|(n, v)| format!("alias {n}={}\n", single_quote(v)))
                .collect();
            let _ = io.out.write_all(&crate::lossless::encode(&text));
        }
        let mut status = 0;
        for a in names {
            match a.split_once('=') {
                Some((n, v)) => {
                    let bad = n.is_empty() || n.chars().any(|c| " \t\n()<>;&|\"'\\`$/".contains(c));
                    if bad {
                        self.say(io, format_args!("alias: `{n}': invalid alias name"));
                        status = 1;
                    } else {
                        self.st.aliases.insert(n.to_owned(), v.to_owned());
                    }
                }
                None => match self.st.aliases.get(a) {
                    Some(v) => {
                        let _ = writeln!(io.out, "alias {a}={}", single_quote(v));
                    }
                    None => {
                        self.say(io, format_args!("alias: {a}: not found"));
                        status = 1;
                    }
                },
            }
        }
        status
    }

    /// `unalias [-a] NAME...`.
    fn unalias(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        if args.first().is_some_and(|a| a == "-a") {
            self.st.aliases.clear();
            return 0;
        }
        if args.is_empty() {
            // A usage line, without the shell's prefix (as bash prints it).
            let _ = writeln!(io.err, "unalias: usage: unalias [-a] name [name ...]");
            return 2;
        }
        let mut status = 0;
        for a in args {
            if self.st.aliases.remove(a).is_none() {
                self.say(io, format_args!("unalias: {a}: not found"));
                status = 1;
            }
        }
        status
    }

    fn set(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        if args.is_empty() {
            // bash lists its dynamic variables with their values, except
            // `BASH_SUBSHELL`, and `DIRSTACK` and `GROUPS` as they are
            // before they are read.
            let mut all: Vec<(String, String)> = self
                .st
                .vars
                .iter()
                .filter(|(n, _)| !matches!(n.as_str(), "BASH_SUBSHELL" | "DIRSTACK" | "GROUPS"))
                .map(|(n, v)| {
                    let shown = match v {
                        Value::Str(v) => set_quote(v),
                        v => compound_text(v),
                    };
                    (n.clone(), shown)
                })
                .collect();
            if !self.posix {
                for name in ["BASHOPTS", "SHELLOPTS", "PPID"] {
                    if !self.st.vars.contains_key(name) {
                        let v = self.scalar(name).unwrap_or_default();
                        all.push((name.to_owned(), set_quote(&v)));
                    }
                }
                for lazy in ["DIRSTACK", "GROUPS"] {
                    all.push((lazy.to_owned(), "()".to_owned()));
                }
            }
            all.sort();
            let mut s = String::new();
            for (n, v) in all {
                s.push_str(&format!("{n}={v}\n"));
            }
            let _ = io.out.write_all(&crate::lossless::encode(&s));
            return 0;
        }
        let mut i = 0;
        while let Some(a) = args.get(i) {
            i += 1;
            if a == "--" || a == "-" {
                self.st.positional = args[i..].to_vec();
                return 0;
            }
            let on = a.starts_with('-');
            if !(on || a.starts_with('+')) || a.len() < 2 {
                self.st.positional = args[i - 1..].to_vec();
                return 0;
            }
            for c in a[1..].chars() {
                let opt = match c {
                    'e' => "errexit",
                    'u' => "nounset",
                    'f' => "noglob",
                    'x' => "xtrace",
                    'o' => {
                        let Some(name) = args.get(i) else {
                            self.list_set_options(!on, io);
                            return 0;
                        };
                        i += 1;
                        name.as_str()
                    }
                    'a' => "allexport",
                    'n' => "noexec",
                    'v' | 'h' | 'B' | 'C' | 'b' | 'm' | 'H' | 'P' | 'T' | 'E' | 'k' | 't' => {
                        continue;
                    }
                    _ => {
                        self.say(io, format_args!("set: -{c}: invalid option"));
                        return 2;
                    }
                };
                if !self.set_option(opt, on) {
                    self.say(io, format_args!("set: {opt}: invalid option name"));
                    return 2;
                }
            }
        }
        0
    }

    fn set_option(&mut self, name: &str, on: bool) -> bool {
        let o = &mut self.st.opts;
        match name {
            "errexit" => o.errexit = on,
            "nounset" => o.nounset = on,
            "pipefail" => o.pipefail = on,
            "noglob" => o.noglob = on,
            "xtrace" => o.xtrace = on,
            "noexec" => o.noexec = on,
            "globstar" => o.globstar = on,
            "nullglob" => o.nullglob = on,
            "failglob" => o.failglob = on,
            "dotglob" => o.dotglob = on,
            "nocaseglob" => o.nocaseglob = on,
            "nocasematch" => o.nocasematch = on,
            _ => match SHOPTS.iter().chain(SET_OPTIONS).find(|(n, _)| *n == name) {
                Some((n, _)) => {
                    o.other.insert(n, on);
                }
                None => return false,
            },
        }
        true
    }

    /// `-o NAME` of `[[ ]]` and `test`: whether `set -o NAME` is on
    /// (false for a name that is not one, shopt's included).
    pub(super) fn set_option_on(&self, name: &str) -> bool {
        SET_OPTIONS.iter().any(|(n, _)| *n == name) && self.option(name)
    }

    fn option(&self, name: &str) -> bool {
        let o = &self.st.opts;
        match name {
            "errexit" => o.errexit,
            "nounset" => o.nounset,
            "noglob" => o.noglob,
            "xtrace" => o.xtrace,
            "noexec" => o.noexec,
            "globstar" => o.globstar,
            "nullglob" => o.nullglob,
            "failglob" => o.failglob,
            "dotglob" => o.dotglob,
            "nocaseglob" => o.nocaseglob,
            "nocasematch" => o.nocasematch,
            "pipefail" => o.pipefail,
            _ => o.other.get(name).copied().unwrap_or_else(|| {
                SHOPTS
                    .iter()
                    .chain(SET_OPTIONS)
                    .find(|(n, _)| *n == name)
                    .is_some_and(|(_, on)| *on)
            }),
        }
    }

    /// `SHELLOPTS` (`set -o`'s options, `set_o`) or `BASHOPTS` (shopt's):
    /// the names of those that are on, joined by `:`.
    pub(super) fn options_on(&self, set_o: bool) -> String {
        let table = if set_o { SET_OPTIONS } else { SHOPTS };
        let on: Vec<&str> = table
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| self.option(n))
            .collect();
        on.join(":")
    }

    /// `set -o` (`plus`: `set +o`) with no name: every option and its
    /// value, as bash lists them.
    fn list_set_options(&self, plus: bool, io: &mut Io<'_>) {
        let mut text = String::new();
        for (n, _) in SET_OPTIONS {
            let on = self.option(n);
            if plus {
                text.push_str(&format!("set {}o {n}\n", if on { '-' } else { '+' }));
            } else {
                text.push_str(&format!("{n:<15}\t{}\n", if on { "on" } else { "off" }));
            }
        }
        let _ = io.out.write_all(&crate::lossless::encode(&text));
    }

    fn shopt(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        let mut mode = None;
        let mut quiet = false;
        let mut print = false;
        let mut names = Vec::new();
        let mut o_flag = false;
        for a in args {
            match a.as_str() {
                "-s" => mode = Some(true),
                "-u" => mode = Some(false),
                "-q" => quiet = true,
                "-o" => o_flag = true,
                "-p" => print = true,
                _ => names.push(a.as_str()),
            }
        }
        let table = if o_flag { SET_OPTIONS } else { SHOPTS };
        // `shopt -s`, `-u` or nothing without names: the options with
        // that value, or all of them.
        let listing = names.is_empty();
        if listing {
            names = table
                .iter()
                .map(|(n, _)| *n)
                .filter(|n| mode.is_none_or(|on| self.option(n) == on))
                .collect();
        }
        let mut status = 0;
        let mut text = String::new();
        for n in names {
            if !table.iter().any(|(t, _)| *t == n) {
                self.say(io, format_args!("shopt: {n}: invalid shell option name"));
                status = 1;
                continue;
            }
            if let (Some(on), false) = (mode, listing) {
                self.set_option(n, on);
                continue;
            }
            let on = self.option(n);
            if !on && !listing {
                status = 1;
            }
            if quiet {
                continue;
            }
            if print && o_flag {
                text.push_str(&format!("set {}o {n}\n", if on { '-' } else { '+' }));
            } else if print {
                text.push_str(&format!("shopt {} {n}\n", if on { "-s" } else { "-u" }));
            } else {
                text.push_str(&format!("{n:<15}\t{}\n", if on { "on" } else { "off" }));
            }
        }
        let _ = io.out.write_all(&crate::lossless::encode(&text));
        status
    }

    /// `unset [-f|-v|-n] NAME...`: a variable, an element (`a[i]`, the
    /// subscript arithmetic for an indexed array, negative from the end),
    /// or a function. A readonly variable stays, with bash's message and
    /// status 1; an arithmetic error in a subscript ends the script.
    fn unset(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        let mut funcs = false;
        let mut reference = false;
        let mut status = 0;
        for a in args {
            match a.as_str() {
                "-f" => funcs = true,
                "-v" => funcs = false,
                // The name reference itself, not what it names.
                "-n" => reference = true,
                name if funcs => {
                    self.st.funcs.remove(name);
                }
                name => {
                    let resolved = if reference {
                        name.to_owned()
                    } else {
                        let (base, rest) = name.split_at(name.find('[').unwrap_or(name.len()));
                        format!("{}{rest}", self.resolve(base))
                    };
                    let name = resolved.as_str();
                    let (base, key) = match name.split_once('[') {
                        Some((base, rest)) if rest.ends_with(']') => {
                            (base, Some(&rest[..rest.len() - 1]))
                        }
                        _ => (name, None),
                    };
                    if !valid_name(base) {
                        self.say(io, format!("unset: `{name}': not a valid identifier"));
                        status = 1;
                        continue;
                    }
                    if self.st.attrs.get(base).is_some_and(|at| at.readonly) {
                        self.say(
                            io,
                            format!("unset: {base}: cannot unset: readonly variable"),
                        );
                        status = 1;
                        continue;
                    }
                    let Some(key) = key else {
                        self.unset_var(name);
                        if !self.st.vars.contains_key(name) {
                            self.st.funcs.remove(name);
                        }
                        continue;
                    };
                    let key = key.to_owned();
                    match self.st.vars.get(base) {
                        Some(Value::Assoc(_)) => {
                            if let Some(Value::Assoc(m)) = self.st.vars.get_mut(base) {
                                m.retain(|(k, _)| *k != key);
                            }
                        }
                        Some(Value::Array(_) | Value::Str(_)) => {
                            let i = match self.arith_ending(&key) {
                                Ok(i) => i,
                                Err(e) => return self.expansion_failed(e, io),
                            };
                            let len = match self.st.vars.get(base) {
                                Some(Value::Array(arr)) => arr.len(),
                                // A scalar is element 0 of itself, and
                                // has no other.
                                _ if i == 0 => {
                                    self.unset_var(base);
                                    continue;
                                }
                                _ => {
                                    self.say(io, format!("unset: {base}: not an array variable"));
                                    status = 1;
                                    continue;
                                }
                            };
                            let at = if i < 0 { i + len as i64 } else { i };
                            if at < 0 {
                                self.say(io, format!("unset: [{key}]: bad array subscript"));
                                status = 1;
                                continue;
                            }
                            if let Some(Value::Array(arr)) = self.st.vars.get_mut(base) {
                                if let Some(slot) =
                                    usize::try_from(at).ok().and_then(|at| arr.get_mut(at))
                                {
                                    *slot = None;
                                }
                                while arr.last().is_some_and(Option::is_none) {
                                    arr.pop();
                                }
                            }
                        }
                        None => {}
                    }
                }
            }
        }
        Ok(status)
    }

    /// `declare`, `typeset`, `local`, `export`, `readonly`; `local` hides
    /// the caller's value until the function returns.
    fn declare(&mut self, name: &str, args: &[String], io: &mut Io<'_>, local: bool) -> R<u8> {
        let mut kind = None;
        let mut print = false;
        let mut funcs = false;
        let mut global = false;
        let mut only_names = false;
        // Attributes to set (`-i`) and to clear (`+i`); `readonly` sets `-r`.
        let mut set = Attrs {
            readonly: name == "readonly",
            ..Attrs::default()
        };
        let mut clear = Attrs::default();
        let mut status = 0;
        let mut operands = Vec::new();
        // `export` and `declare -x` export; `export -n` and `declare +x`
        // take the export away.
        let mut export = (name == "export").then_some(true);
        for a in args {
            if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 && operands.is_empty() {
                let on = a.starts_with('-');
                let target = if on { &mut set } else { &mut clear };
                for c in a[1..].chars() {
                    match c {
                        'a' => kind = Some('a'),
                        'A' => kind = Some('A'),
                        'p' => print = true,
                        'f' => funcs = true,
                        'F' => {
                            funcs = true;
                            only_names = true;
                        }
                        'g' => global = true,
                        'l' => target.lower = true,
                        'u' => target.upper = true,
                        'i' => target.integer = true,
                        'r' if on => target.readonly = true,
                        'x' => export = Some(on),
                        'n' if name == "export" => export = Some(false),
                        'n' => target.nameref = true,
                        'r' | 't' => {}
                        _ => {
                            self.say(io, format_args!("{name}: -{c}: invalid option"));
                            return Ok(2);
                        }
                    }
                }
                continue;
            }
            operands.push(a.clone());
        }
        if funcs {
            // With names: each that is a function (`-F` prints the name),
            // status 1 if one is not.
            if !operands.is_empty() {
                let mut text = String::new();
                for n in &operands {
                    if self.st.funcs.contains_key(n) {
                        if only_names {
                            text.push_str(&format!("{n}\n"));
                        }
                    } else {
                        status = 1;
                    }
                }
                let _ = io.out.write_all(&crate::lossless::encode(&text));
                return Ok(status);
            }
            let mut names: Vec<&String> = self.st.funcs.keys().collect();
            names.sort();
            let text: String = names.iter().map(|n| format!("declare -f {n}\n")).collect();
            let _ = io.out.write_all(&crate::lossless::encode(&text));
            return Ok(0);
        }
        if print || (operands.is_empty() && name != "local") {
            let mut names: Vec<String> = if operands.is_empty() {
                // Every variable with a value or an attribute; with
                // attribute options, those that have any of them (as
                // bash lists `declare -xi`).
                let want = |n: &String, st: &super::State| {
                    let value = st.vars.get(n);
                    let a = st.attrs.get(n).copied().unwrap_or_default();
                    let filters = [
                        (kind == Some('a'), matches!(value, Some(Value::Array(_)))),
                        (kind == Some('A'), matches!(value, Some(Value::Assoc(_)))),
                        (set.integer, a.integer),
                        (set.readonly, a.readonly),
                        (set.lower, a.lower),
                        (set.upper, a.upper),
                        (export == Some(true), st.exported.contains(n)),
                    ];
                    !filters.iter().any(|f| f.0) || filters.iter().any(|f| f.0 && f.1)
                };
                let mut v: Vec<String> = self
                    .st
                    .vars
                    .keys()
                    .chain(self.st.attrs.keys())
                    .chain(self.st.exported.iter())
                    .filter(|k| want(k, &self.st))
                    .cloned()
                    .collect();
                v.sort();
                v
            } else {
                operands.clone()
            };
            names.dedup();
            let mut text = String::new();
            for n in &names {
                let value = self.st.vars.get(n);
                // bash's order: a A i r x l u; `--` when there are none.
                let attrs = self.st.attrs.get(n).copied().unwrap_or_default();
                let mut flags = String::from("-");
                for (on, c) in [
                    (matches!(value, Some(Value::Array(_))), 'a'),
                    (matches!(value, Some(Value::Assoc(_))), 'A'),
                    (attrs.integer, 'i'),
                    (attrs.nameref, 'n'),
                    (attrs.readonly, 'r'),
                    (self.st.exported.contains(n), 'x'),
                    (attrs.lower, 'l'),
                    (attrs.upper, 'u'),
                ] {
                    if on {
                        flags.push(c);
                    }
                }
                if flags == "-" {
                    flags.push('-');
                }
                match value {
                    Some(Value::Str(v)) => {
                        text.push_str(&format!("declare {flags} {n}={}\n", declare_quote(v)));
                    }
                    Some(v) => {
                        text.push_str(&format!("declare {flags} {n}={}\n", compound_text(v)));
                    }
                    // Declared with an attribute (`declare -i n`, `export
                    // n`) but given no value.
                    None if self.st.attrs.contains_key(n) || self.st.exported.contains(n) => {
                        text.push_str(&format!("declare {flags} {n}\n"));
                    }
                    None if !operands.is_empty() => {
                        self.say(io, format_args!("declare: {n}: not found"));
                        status = 1;
                    }
                    None => {}
                }
            }
            let _ = io.out.write_all(&crate::lossless::encode(&text));
            return Ok(status);
        }
        for op in operands {
            let (var, value, append) = match op.split_once('=') {
                Some((n, v)) => match n.strip_suffix('+') {
                    Some(n) => (n.to_owned(), Some(v.to_owned()), true),
                    None => (n.to_owned(), Some(v.to_owned()), false),
                },
                None => (op.clone(), None, false),
            };
            let base = var.split('[').next().unwrap_or("").to_owned();
            if !valid_name(&base) {
                self.say(io, format_args!("{name}: `{op}': not a valid identifier"));
                status = 1;
                continue;
            }
            if let Some(on) = export {
                self.set_exported(&base, on);
            }
            if local && !global {
                let old = self.st.vars.get(&base).cloned();
                if let Some(frame) = self.st.locals.last_mut()
                    && !frame.iter().any(|(n, _)| *n == base)
                {
                    frame.push((base.clone(), old));
                }
                if value.is_none() && kind.is_none() {
                    self.st.vars.insert(base.clone(), Value::Str(String::new()));
                    self.st.vars.remove(&base);
                }
            }
            match kind {
                Some('A') if !matches!(self.st.vars.get(&base), Some(Value::Assoc(_))) => {
                    self.st.vars.insert(base.clone(), Value::Assoc(Vec::new()));
                }
                Some('a') if !matches!(self.st.vars.get(&base), Some(Value::Array(_))) => {
                    let first = match self.st.vars.get(&base) {
                        Some(Value::Str(s)) => vec![Some(s.clone())],
                        _ => Vec::new(),
                    };
                    self.st.vars.insert(base.clone(), Value::Array(first));
                }
                _ => {}
            }
            let old = self.st.attrs.get(&base).copied().unwrap_or_default();
            if old.readonly && (value.is_some() || clear != Attrs::default()) {
                self.say(io, format_args!("{name}: {base}: readonly variable"));
                status = 1;
                continue;
            }
            // The new attributes apply to this assignment; readonly only
            // after it.
            let now = Attrs {
                integer: (old.integer || set.integer) && !clear.integer,
                readonly: old.readonly || set.readonly,
                lower: (old.lower || set.lower) && !clear.lower && !set.upper,
                upper: (old.upper || set.upper) && !clear.upper && !set.lower,
                nameref: (old.nameref || set.nameref) && !clear.nameref,
            };
            if now == Attrs::default() {
                self.st.attrs.remove(&base);
            } else {
                self.st.attrs.insert(
                    base.clone(),
                    Attrs {
                        readonly: false,
                        ..now
                    },
                );
            }
            let Some(value) = value else {
                if now.readonly {
                    self.st.attrs.insert(base.clone(), now);
                }
                continue;
            };
            // `NAME=(...)`: the parser marks its elements; a value made
            // otherwise is a list only for a variable already an array
            // (`declare -a x="(a b)"`, not `declare x="(a b)"`).
            let compound = value.starts_with('(')
                && value.ends_with(')')
                && var == base
                && (value.contains(crate::syntax::ELEMENT)
                    || matches!(
                        self.st.vars.get(&base),
                        Some(Value::Array(_) | Value::Assoc(_))
                    ));
            let value = if compound {
                value
            } else {
                match self.attributed(&base, value, append) {
                    Ok((v, _)) => v,
                    // An arithmetic error in an integer variable's value
                    // ends the script, as in bash (`declare -i n=1/0`).
                    Err(ExpError::Exit(m)) => {
                        self.report(io, &m);
                        return Err(Flow::Exit(1));
                    }
                    Err(
                        ExpError::Command(m)
                        | ExpError::Fatal(m)
                        | ExpError::Arith(m)
                        | ExpError::Status(m, _)
                        | ExpError::Posix(m),
                    ) => {
                        self.report(io, &m);
                        status = 1;
                        continue;
                    }
                    Err(ExpError::Flow(_)) => continue,
                }
            };
            let append = append && !now.integer;
            if now.readonly {
                self.st.attrs.insert(base.clone(), now);
            }
            if compound {
                // `declare -a x=(a "b c")`: the elements the parser marked
                // (or, in a value made otherwise, the words).
                let inner = &value[1..value.len() - 1];
                let marked = crate::syntax::elements(inner).is_some();
                let items: Vec<&str> = match crate::syntax::elements(inner) {
                    Some(marked) => marked.collect(),
                    None => inner.split_whitespace().collect(),
                };
                let unquote = |v: &str| {
                    if marked {
                        v.to_owned()
                    } else {
                        v.trim_matches('"').to_owned()
                    }
                };
                let keyed = |item: &str| {
                    crate::syntax::keyed_element(item).map(|(k, v)| (k.to_owned(), v.to_owned()))
                };
                if matches!(self.st.vars.get(&base), Some(Value::Assoc(_))) {
                    let mut m: Vec<(String, String)> = Vec::new();
                    for (k, v) in items.iter().filter_map(|i| keyed(i)) {
                        let v = unquote(&v);
                        match m.iter_mut().find(|(old, _)| *old == k) {
                            Some(slot) => slot.1 = v,
                            None => m.push((k, v)),
                        }
                    }
                    self.st.vars.insert(base.clone(), Value::Assoc(m));
                } else {
                    // `[N]=v` puts an element at N; the next plain one
                    // follows it.
                    let mut elems: Vec<Option<String>> = Vec::new();
                    let mut at = 0usize;
                    for item in items {
                        let (index, v) = match keyed(item) {
                            Some((k, v)) => (Some(k), v),
                            None => (None, item.to_owned()),
                        };
                        if let Some(k) = index {
                            match self.arith(&k) {
                                Ok(n) => at = usize::try_from(n).unwrap_or(usize::MAX),
                                Err(_) => {
                                    self.say(io, format_args!("{base}: {k}: bad array subscript"));
                                    continue;
                                }
                            }
                        }
                        // A sparse index beyond what a script can fill is
                        // not stored.
                        if at > 1 << 20 {
                            continue;
                        }
                        if elems.len() <= at {
                            elems.resize(at + 1, None);
                        }
                        elems[at] = Some(unquote(&v));
                        at += 1;
                    }
                    self.st.vars.insert(base.clone(), Value::Array(elems));
                }
                continue;
            }
            if var != base {
                let key = var[base.len() + 1..].trim_end_matches(']').to_owned();
                if let Err(ExpError::Command(m) | ExpError::Fatal(m) | ExpError::Arith(m)) =
                    self.set_element(&base, &key, value)
                {
                    self.report(io, &m);
                    status = 1;
                }
                continue;
            }
            // `declare -n ref=NAME` sets the name a reference holds; an
            // assignment without `-n` reaches the variable it names.
            if set.nameref {
                self.st.vars.insert(base.clone(), Value::Str(value));
                continue;
            }
            let value = if append {
                self.scalar(&base).unwrap_or_default() + &value
            } else {
                value
            };
            self.set_scalar(&base, value);
        }
        Ok(status)
    }

    fn read(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        let mut raw = false;
        let mut array = None;
        let mut delim = b'\n';
        let mut count = None;
        let mut poll_only = false;
        let mut from_fd = None;
        let mut names = Vec::new();
        let mut i = 0;
        while let Some(a) = args.get(i) {
            i += 1;
            if !a.starts_with('-') || a == "-" || !names.is_empty() {
                names.push(a.clone());
                continue;
            }
            if a == "--" {
                names.extend(args[i..].iter().cloned());
                break;
            }
            let flags: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while let Some(&c) = flags.get(k) {
                k += 1;
                let takes = matches!(c, 'a' | 'd' | 'n' | 'N' | 'p' | 't' | 'u' | 'i');
                let value = if takes {
                    let rest: String = flags[k..].iter().collect();
                    k = flags.len();
                    if rest.is_empty() {
                        let v = args.get(i).cloned();
                        i += 1;
                        match v {
                            Some(v) => v,
                            None => {
                                self.say(
                                    io,
                                    format_args!("read: -{c}: option requires an argument"),
                                );
                                return Ok(2);
                            }
                        }
                    } else {
                        rest
                    }
                } else {
                    String::new()
                };
                match c {
                    'r' => raw = true,
                    's' | 'e' => {}
                    'a' => array = Some(value),
                    'd' => delim = value.bytes().next().unwrap_or(0),
                    'n' | 'N' => match value.parse::<usize>() {
                        Ok(n) => count = Some(n),
                        Err(_) => {
                            self.say(io, format_args!("read: {value}: invalid number"));
                            return Ok(1);
                        }
                    },
                    // A timeout is a decimal number of seconds; there is
                    // nothing to wait for, input is there or at its end.
                    't' if !value.is_empty()
                        && (value.bytes().filter(|&b| b == b'.').count() > 1
                            || !value.bytes().all(|b| b.is_ascii_digit() || b == b'.')) =>
                    {
                        self.say(
                            io,
                            format_args!("read: {value}: invalid timeout specification"),
                        );
                        return Ok(1);
                    }
                    'u' => match self.input_fd(&value) {
                        Ok(input) => from_fd = Some(input),
                        Err(msg) => {
                            self.say(io, format_args!("read: {msg}"));
                            return Ok(1);
                        }
                    },
                    // `-t 0` only asks whether input is there, and in
                    // here it always is (or its end is, which counts).
                    't' => poll_only = value.parse::<f64>().is_ok_and(|t| t == 0.0),
                    'p' | 'i' => {}
                    _ => {
                        self.say(io, format_args!("read: -{c}: invalid option"));
                        return Ok(2);
                    }
                }
            }
        }
        for n in &names {
            if !valid_name(n) {
                self.say(io, format_args!("read: `{n}': not a valid identifier"));
                return Ok(1);
            }
        }
        if poll_only {
            return Ok(0);
        }
        // The line, and which of its characters were escaped.
        let mut chars: Vec<(char, bool)> = Vec::new();
        let mut found_delim = false;
        {
            let source = from_fd.unwrap_or_else(|| io.input.clone());
            let mut input = source.borrow_mut();
            if let Some(n) = count {
                let data = input.read_n(n);
                let text = crate::lossless::decode(&data).into_owned();
                let text = match text.find(char::from(delim)) {
                    Some(p) => {
                        found_delim = true;
                        text[..p].to_owned()
                    }
                    None => {
                        found_delim = data.len() == n;
                        text
                    }
                };
                chars.extend(text.chars().map(|c| (c, false)));
            } else {
                while let Some(line) = input.read_until(delim) {
                    let mut text = crate::lossless::decode(&line).into_owned();
                    let ended = text.ends_with(char::from(delim));
                    if ended {
                        text.pop();
                    }
                    let mut cs = text.chars().peekable();
                    let mut continued = false;
                    while let Some(c) = cs.next() {
                        // bash's read drops NUL bytes (its strings end at one).
                        if c == '\0' {
                            continue;
                        }
                        if c == '\\' && !raw {
                            match cs.next() {
                                Some(n) => chars.push((n, true)),
                                None => continued = ended,
                            }
                        } else {
                            chars.push((c, false));
                        }
                    }
                    if ended && !continued {
                        found_delim = true;
                        break;
                    }
                    if !ended {
                        break;
                    }
                }
            }
        }
        let ifs = self.ifs();
        let is_sep = |c: &(char, bool)| !c.1 && ifs.contains(c.0);
        let is_ws = |c: &(char, bool)| !c.1 && ifs.contains(c.0) && c.0.is_whitespace();
        if let Some(arr) = array {
            let text: Vec<(char, bool)> = chars;
            let mut fields = Vec::new();
            let mut cur = String::new();
            let mut have = false;
            for c in &text {
                if is_sep(c) {
                    if have || !is_ws(c) {
                        fields.push(std::mem::take(&mut cur));
                    }
                    have = false;
                } else {
                    cur.push(c.0);
                    have = true;
                }
            }
            if have {
                fields.push(cur);
            }
            let mut items = Vec::with_capacity(fields.len());
            for f in fields {
                match self.builtin_value(&arr, f, io)? {
                    Some(v) => items.push(Some(v)),
                    None => return Ok(1),
                }
            }
            self.st.vars.insert(arr, Value::Array(items));
            return Ok(u8::from(!found_delim));
        }
        if names.is_empty() {
            let line: String = chars.iter().map(|c| c.0).collect();
            let Some(line) = self.builtin_value("REPLY", line, io)? else {
                return Ok(1);
            };
            self.set_scalar("REPLY", line);
            return Ok(u8::from(!found_delim));
        }
        // Leading IFS white space is skipped; each name but the last takes
        // one field; the last takes the rest, less trailing IFS white space.
        let mut pos = 0;
        while pos < chars.len() && is_ws(&chars[pos]) {
            pos += 1;
        }
        for (k, n) in names.iter().enumerate() {
            let last = k + 1 == names.len();
            let value: String = if last {
                let mut end = chars.len();
                while end > pos && is_ws(&chars[end - 1]) {
                    end -= 1;
                }
                // A single trailing non-white separator is dropped too.
                let mut v: Vec<(char, bool)> = chars[pos..end].to_vec();
                if v.len() == 1 && is_sep(&v[0]) {
                    v.clear();
                }
                pos = chars.len();
                v.iter().map(|c| c.0).collect()
            } else {
                let start = pos;
                while pos < chars.len() && !is_sep(&chars[pos]) {
                    pos += 1;
                }
                let v: String = chars[start..pos].iter().map(|c| c.0).collect();
                // Skip the separator: white space around at most one
                // non-white separator.
                while pos < chars.len() && is_ws(&chars[pos]) {
                    pos += 1;
                }
                if pos < chars.len() && is_sep(&chars[pos]) && !is_ws(&chars[pos]) {
                    pos += 1;
                    while pos < chars.len() && is_ws(&chars[pos]) {
                        pos += 1;
                    }
                }
                v
            };
            let Some(value) = self.builtin_value(n, value, io)? else {
                return Ok(1);
            };
            self.set_scalar(n, value);
        }
        Ok(u8::from(!found_delim))
    }

    fn mapfile(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        let mut strip = false;
        let mut delim = b'\n';
        let mut max = usize::MAX;
        let mut skip = 0usize;
        let mut name = "MAPFILE".to_owned();
        let mut from_fd = None;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            i += 1;
            match a.as_str() {
                "-t" => strip = true,
                "-d" => {
                    delim = args.get(i).and_then(|d| d.bytes().next()).unwrap_or(0);
                    i += 1;
                }
                "-n" => {
                    max = args.get(i).and_then(|n| n.parse().ok()).unwrap_or(0);
                    if max == 0 {
                        max = usize::MAX;
                    }
                    i += 1;
                }
                "-s" => {
                    skip = args.get(i).and_then(|n| n.parse().ok()).unwrap_or(0);
                    i += 1;
                }
                "-u" => {
                    match self.input_fd(args.get(i).map_or("", String::as_str)) {
                        Ok(input) => from_fd = Some(input),
                        Err(msg) => {
                            self.say(io, format_args!("mapfile: {msg}"));
                            return Ok(1);
                        }
                    }
                    i += 1;
                }
                "-C" | "-c" | "-O" => i += 1,
                n if !n.starts_with('-') => name = n.to_owned(),
                n => {
                    self.say(io, format_args!("mapfile: {n}: invalid option"));
                    return Ok(2);
                }
            }
        }
        let mut items = Vec::new();
        let source = from_fd.unwrap_or_else(|| io.input.clone());
        let mut input = source.borrow_mut();
        let mut seen = 0;
        while items.len() < max {
            let Some(mut line) = input.read_until(delim) else {
                break;
            };
            seen += 1;
            if seen <= skip {
                continue;
            }
            if strip && line.last() == Some(&delim) {
                line.pop();
            }
            items.push(Some(crate::lossless::decode(&line).into_owned()));
        }
        drop(input);
        let mut values = Vec::with_capacity(items.len());
        for item in items.into_iter().flatten() {
            match self.builtin_value(&name, item, io)? {
                Some(v) => values.push(Some(v)),
                None => return Ok(1),
            }
        }
        self.st.vars.insert(name, Value::Array(values));
        Ok(0)
    }

    /// What `name` is to bash, first match first: a function, a keyword,
    /// a builtin, a file on `$PATH`.
    fn describe(&self, name: &str) -> Option<(&'static str, String)> {
        self.describe_all(name).into_iter().next()
    }

    /// Everything `name` is, in bash's order (`type -a`): a function, a
    /// keyword, a builtin, then each file on `$PATH` (`/usr/bin` and, as
    /// on a merged-/usr system, `/bin`).
    fn describe_all(&self, name: &str) -> Vec<(&'static str, String)> {
        let mut found = Vec::new();
        if self.st.funcs.contains_key(name) {
            found.push(("function", format!("{name} is a function")));
        }
        if KEYWORDS.contains(&name) {
            found.push(("keyword", format!("{name} is a shell keyword")));
        }
        if super::is_bash_builtin(name) {
            found.push(("builtin", format!("{name} is a shell builtin")));
        }
        for path in commands::paths_of(name) {
            found.push(("file", format!("{name} is {path}")));
        }
        found
    }

    /// `type [-afptP] NAME...`.
    fn type_builtin(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        let (mut all, mut terse, mut path, mut force_path) = (false, false, false, false);
        let mut names = Vec::new();
        let mut options_done = false;
        for a in args {
            if options_done || !a.starts_with('-') || a == "-" {
                names.push(a.as_str());
                continue;
            }
            if a == "--" {
                options_done = true;
                continue;
            }
            for c in a[1..].chars() {
                match c {
                    'a' => all = true,
                    't' => terse = true,
                    'p' => path = true,
                    'P' => force_path = true,
                    'f' => {}
                    other => {
                        self.say(io, format_args!("type: -{other}: invalid option"));
                        let _ = writeln!(io.err, "type: usage: type [-afptP] name [name ...]");
                        return 2;
                    }
                }
            }
        }
        let mut status = 0;
        for n in names {
            let mut found = self.describe_all(n);
            if force_path {
                found.retain(|(kind, _)| *kind == "file");
            }
            if found.is_empty() {
                if !(terse || path || force_path) {
                    self.say(io, format_args!("type: {n}: not found"));
                }
                status = 1;
                continue;
            }
            // -p prints a path only when a file is what would run.
            if path && !force_path && found[0].0 != "file" {
                continue;
            }
            if !all {
                found.truncate(1);
            }
            for (kind, line) in found {
                let text = if path || force_path {
                    line.rsplit(' ').next().unwrap_or_default().to_owned()
                } else if terse {
                    kind.to_owned()
                } else {
                    line
                };
                let _ = writeln!(io.out, "{text}");
            }
        }
        status
    }

    /// `command [-pVv] NAME [ARG]...`: `-v`/`-V` (the last given wins)
    /// say what NAME is, `-p` with the default path (where a file is
    /// `/bin`'s); otherwise NAME runs, functions and aliases aside.
    fn command_builtin(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        let (mut default_path, mut describe) = (false, None);
        let mut rest = args;
        while let Some((a, after)) = rest.split_first() {
            if a == "--" {
                rest = after;
                break;
            }
            if a.len() < 2 || !a.starts_with('-') {
                break;
            }
            for c in a[1..].chars() {
                match c {
                    'p' => default_path = true,
                    'v' => describe = Some(false),
                    'V' => describe = Some(true),
                    // Checked against bash's letters before this runs.
                    _ => {}
                }
            }
            rest = after;
        }
        let Some(verbose) = describe else {
            return if rest.is_empty() {
                Ok(0)
            } else {
                self.invoke(rest, io, true)
            };
        };
        // bash succeeds when any name is found.
        let mut status = 1;
        for n in rest {
            match self.describe(n) {
                Some((kind, line)) => {
                    let path = if default_path && !n.contains('/') {
                        format!("/bin/{n}")
                    } else {
                        commands::path_of(n)
                    };
                    let text = match (verbose, kind) {
                        (true, "file") => format!("{n} is {path}"),
                        (true, _) => line,
                        (false, "file") => path,
                        (false, _) => n.clone(),
                    };
                    let _ = writeln!(io.out, "{text}");
                    status = 0;
                }
                None => {
                    if verbose {
                        self.say(io, format_args!("command: {n}: not found"));
                    }
                }
            }
        }
        Ok(status)
    }

    fn printf(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        if args.first().map(String::as_str) == Some("-v") {
            let Some(var) = args.get(1) else {
                self.say(io, "printf: -v: option requires an argument");
                let _ = writeln!(io.err, "printf: usage: printf [-v var] format [arguments]");
                return Ok(2);
            };
            let mut buf = Vec::new();
            let status = {
                let mut sub = Io {
                    input: io.input.clone(),
                    out: &mut buf,
                    err: &mut *io.err,
                };
                self.with_cx(&mut sub, |cx| commands::printf(cx, &args[2..]))
            };
            let value = crate::lossless::decode(&buf).into_owned();
            let base = var.split_once('[').map_or(var.as_str(), |(base, _)| base);
            let Some(value) = self.builtin_value(base, value, io)? else {
                return Ok(1);
            };
            if let Some((base, idx)) = var.split_once('[') {
                let key = idx.trim_end_matches(']').to_owned();
                let _ = self.set_element(base, &key, value);
            } else {
                self.set_scalar(var, value);
            }
            return Ok(status);
        }
        // The arguments as they are: a value of a document's size is not
        // copied again.
        Ok(self.with_cx(io, |cx| commands::printf(cx, args)))
    }

    fn getopts(&mut self, args: &[String], io: &mut Io<'_>) -> u8 {
        let (Some(spec), Some(var)) = (args.first(), args.get(1)) else {
            let _ = writeln!(io.err, "getopts: usage: getopts optstring name [arg ...]");
            return 2;
        };
        let params: Vec<String> = if args.len() > 2 {
            args[2..].to_vec()
        } else {
            self.st.positional.clone()
        };
        let optind: usize = self
            .scalar("OPTIND")
            .and_then(|s| s.parse().ok())
            .unwrap_or(1)
            .max(1);
        let pos: usize = self
            .scalar("_OPTPOS")
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let Some(arg) = params.get(optind - 1) else {
            self.set_scalar(var, "?".to_owned());
            return 1;
        };
        if !arg.starts_with('-') || arg == "-" {
            self.set_scalar(var, "?".to_owned());
            return 1;
        }
        if arg == "--" {
            self.set_scalar("OPTIND", (optind + 1).to_string());
            self.set_scalar(var, "?".to_owned());
            return 1;
        }
        let chars: Vec<char> = arg.chars().collect();
        let c = chars.get(pos).copied().unwrap_or('?');
        let silent = spec.starts_with(':');
        let at_end = pos + 1 >= chars.len();
        let advance = |sh: &mut Self, next_ind: usize, next_pos: usize| {
            sh.set_scalar("OPTIND", next_ind.to_string());
            sh.set_scalar("_OPTPOS", next_pos.to_string());
        };
        match spec.find(c) {
            Some(k) if c != ':' => {
                let takes = spec[k + 1..].starts_with(':');
                if takes {
                    if !at_end {
                        let rest: String = chars[pos + 1..].iter().collect();
                        self.set_scalar("OPTARG", rest);
                        advance(self, optind + 1, 1);
                    } else if let Some(v) = params.get(optind) {
                        self.set_scalar("OPTARG", v.clone());
                        advance(self, optind + 2, 1);
                    } else {
                        advance(self, optind + 1, 1);
                        if silent {
                            self.set_scalar(var, ":".to_owned());
                            self.set_scalar("OPTARG", c.to_string());
                        } else {
                            self.say(io, format_args!("option requires an argument -- {c}"));
                            self.unset_var("OPTARG");
                            self.set_scalar(var, "?".to_owned());
                        }
                        return 0;
                    }
                } else {
                    // An option without an argument leaves OPTARG unset,
                    // as bash's getopts does (dash's sets it empty).
                    if self.posix {
                        self.set_scalar("OPTARG", String::new());
                    } else {
                        self.unset_var("OPTARG");
                    }
                    if at_end {
                        advance(self, optind + 1, 1);
                    } else {
                        advance(self, optind, pos + 1);
                    }
                }
                self.set_scalar(var, c.to_string());
                0
            }
            _ => {
                if at_end {
                    advance(self, optind + 1, 1);
                } else {
                    advance(self, optind, pos + 1);
                }
                if silent {
                    self.set_scalar("OPTARG", c.to_string());
                } else {
                    self.say(io, format_args!("illegal option -- {c}"));
                    self.unset_var("OPTARG");
                }
                self.set_scalar(var, "?".to_owned());
                0
            }
        }
    }

    /// `printenv [NAME]...`: the values of the variables named (status 1
    /// if one is unset), or every variable as `env` lists them.
    fn printenv(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        if args.is_empty() {
            return self.env_builtin(args, io);
        }
        let mut text = String::new();
        let mut status = 0;
        for name in args {
            // The environment: exported variables only.
            let exported = self.st.exported.contains(name.as_str());
            match self.st.vars.get(name.as_str()).filter(|_| exported) {
                Some(Value::Str(v)) => {
                    text.push_str(v);
                    text.push('\n');
                }
                _ => status = 1,
            }
        }
        let _ = io.out.write_all(&crate::lossless::encode(&text));
        Ok(status)
    }

    fn env_builtin(&mut self, args: &[String], io: &mut Io<'_>) -> R<u8> {
        let mut i = 0;
        let mut saved = Vec::new();
        // `env -i`: the command sees only the assignments env is given.
        let exported_before = self.st.exported.clone();
        while let Some(a) = args.get(i) {
            if a == "-i" || a == "-" || a == "--ignore-environment" {
                self.st.exported.clear();
                i += 1;
                continue;
            }
            // `-u NAME`: the command's environment goes without NAME.
            let unset = match a.as_str() {
                "-u" | "--unset" => {
                    let Some(n) = args.get(i + 1) else {
                        if a == "-u" {
                            let _ = writeln!(io.err, "env: option requires an argument -- 'u'");
                        } else {
                            let _ = writeln!(io.err, "env: option '--unset' requires an argument");
                        }
                        let _ = writeln!(io.err, "Try 'env --help' for more information.");
                        self.st.exported = exported_before;
                        return Ok(125);
                    };
                    i += 1;
                    Some(n.as_str())
                }
                _ => a
                    .strip_prefix("--unset=")
                    .or_else(|| a.strip_prefix("-u").filter(|n| !n.is_empty())),
            };
            if let Some(n) = unset {
                self.st.exported.remove(n);
                i += 1;
                continue;
            }
            match a.split_once('=') {
                Some((n, v)) if valid_name(n) => {
                    saved.push((n.to_owned(), self.st.vars.get(n).cloned()));
                    self.set_scalar(n, v.to_owned());
                    self.set_exported(n, true);
                    i += 1;
                }
                _ => break,
            }
        }
        let r = if i >= args.len() {
            let mut names: Vec<&String> = self
                .st
                .vars
                .keys()
                .filter(|k| self.st.exported.contains(*k))
                .collect();
            names.sort();
            let mut text = String::new();
            for n in names {
                if let Some(Value::Str(v)) = self.st.vars.get(n) {
                    text.push_str(&format!("{n}={v}\n"));
                }
            }
            let _ = io.out.write_all(&crate::lossless::encode(&text));
            Ok(0)
        } else {
            self.invoke(&args[i..], io, true)
        };
        for (n, old) in saved.into_iter().rev() {
            match old {
                Some(v) => {
                    self.st.vars.insert(n, v);
                }
                None => self.unset_var(&n),
            }
        }
        self.st.exported = exported_before;
        r
    }
}

/// The command a wrapper (`timeout 5 CMD`, `nice -n 5 CMD`) runs.
fn wrapped_command<'a>(name: &str, args: &'a [String]) -> &'a [String] {
    let mut i = 0;
    let with_value: &[&str] = match name {
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "--class", "--classdata"],
        "stdbuf" => &["-i", "-o", "-e"],
        _ => &[],
    };
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        i += if with_value.contains(&a.as_str()) {
            2
        } else {
            1
        };
    }
    if name == "timeout" {
        // The duration.
        i += 1;
    }
    args.get(i..).unwrap_or(&[])
}

/// Whether the shell would read a character of `s` specially (bash's
/// `sh_contains_shell_metas`): `~` only where it would expand, `#` only
/// first.
fn has_shell_metas(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().any(|(i, &c)| match c {
        b' ' | b'\t' | b'\n' | b'\'' | b'"' | b'\\' | b'|' | b'&' | b';' | b'(' | b')' | b'<'
        | b'>' | b'!' | b'{' | b'}' | b'*' | b'[' | b'?' | b']' | b'^' | b'$' | b'`' => true,
        b'~' => i == 0 || matches!(b[i - 1], b'=' | b':'),
        b'#' => i == 0,
        _ => false,
    })
}

/// A key as `declare -p` shows it: in `$'...'` when it holds a control
/// character, double-quoted when it holds a character the shell would
/// take specially, bare otherwise.
fn assoc_key(k: &str) -> String {
    if needs_ansi_c(k) {
        bash_quote(k)
    } else if has_shell_metas(k) {
        format!("\"{}\"", dq_escape(k))
    } else {
        k.to_owned()
    }
}

/// A value as `declare -p` shows it: in `$'...'` when it holds a control
/// character, double-quoted otherwise.
fn declare_quote(v: &str) -> String {
    if needs_ansi_c(v) {
        bash_quote(v)
    } else {
        format!("\"{}\"", dq_escape(v))
    }
}

/// A value as `set` lists it (bash's `print_var_value`): in `$'...'` when
/// it holds a control character, single-quoted when it holds a character
/// the shell would take specially, bare otherwise (nothing when empty).
fn set_quote(v: &str) -> String {
    if needs_ansi_c(v) {
        bash_quote(v)
    } else if has_shell_metas(v) {
        single_quote(v)
    } else {
        v.to_owned()
    }
}

/// An array's elements as `declare -p` and `set` show them:
/// `([0]="a" [1]="b")`, and `([k]="v" )` for an associative one.
fn compound_text(v: &Value) -> String {
    match v {
        Value::Str(s) => declare_quote(s),
        Value::Array(a) => {
            let items: Vec<String> = a
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_ref().map(|v| format!("[{i}]={}", declare_quote(v))))
                .collect();
            format!("({})", items.join(" "))
        }
        Value::Assoc(m) => {
            let items: Vec<String> = super::assoc_order(m)
                .map(|(k, v)| format!("[{}]={} ", assoc_key(k), declare_quote(v)))
                .collect();
            format!("({})", items.concat())
        }
    }
}

/// Escapes a value for `declare -p`'s double quotes.
fn dq_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
