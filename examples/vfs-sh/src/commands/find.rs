//! `find [PATH]... [EXPRESSION]`: walks depth first, each directory's
//! entries in name order, and prints what the expression selects.
//!
//! Tests: `-name -iname -path -ipath -wholename -regex -iregex -type
//! -mtime -mmin -atime -amin -ctime -cmin -newer -size -empty -perm
//! -readable -writable -executable -user -group -true -false`; operators
//! `! -not -a -and -o -or , ( )`; actions `-print -print0 -printf -ls
//! -exec -execdir -prune -quit`; global options `-maxdepth -mindepth`.
//! `-exec` runs vfs-sh commands (`sh -c` included), never host processes.
//! The document filesystem keeps one time per file, so access and change
//! times are its modification time. `-delete` fails on each item it
//! reaches, and the `-f...` actions on the file they would create, as on a
//! read-only mount.

use std::time::SystemTime;

use super::misc::base_name;
use crate::exec::Cx;
use crate::fs::Kind;
use crate::glob::Pattern;

/// A numeric comparison: `+N`, `-N` or `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    More(i64),
    Less(i64),
    Exactly(i64),
}

impl Cmp {
    fn parse(s: &str) -> Option<Cmp> {
        let (f, body): (fn(i64) -> Cmp, &str) = match s.as_bytes().first()? {
            b'+' => (Cmp::More, &s[1..]),
            b'-' => (Cmp::Less, &s[1..]),
            _ => (Cmp::Exactly, s),
        };
        if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(f(body.parse().unwrap_or(i64::MAX)))
    }

    fn test(self, v: i64) -> bool {
        match self {
            Cmp::More(n) => v > n,
            Cmp::Less(n) => v < n,
            Cmp::Exactly(n) => v == n,
        }
    }
}

/// Which of a path's times a test or a directive reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    Access,
    Change,
    Modify,
}

impl Stamp {
    /// `a`, `c` or `m`, as in `-amin` and `-newerXY`.
    fn of(letter: u8) -> Stamp {
        match letter {
            b'a' => Stamp::Access,
            b'c' => Stamp::Change,
            _ => Stamp::Modify,
        }
    }
}

/// `-mtime N`, `-amin -N`, `-cmin +N`...: how long ago a time was, in days
/// or minutes (fractions allowed), compared as GNU find compares it.
#[derive(Debug, Clone, Copy)]
struct AgeTest {
    stamp: Stamp,
    /// `+`, `-` or `=`.
    how: char,
    n: f64,
    /// Days (`-mtime`) rather than minutes (`-mmin`).
    days: bool,
    /// What the age is measured from: now, or (after `-daystart`) the end
    /// of today.
    origin: SystemTime,
}

impl AgeTest {
    fn parse(pred: &str, v: &str, origin: SystemTime) -> Option<AgeTest> {
        let (how, body) = match v.as_bytes().first()? {
            b'+' => ('+', &v[1..]),
            b'-' => ('-', &v[1..]),
            _ => ('=', v),
        };
        let number = !body.is_empty()
            && body.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && body.bytes().filter(|&b| b == b'.').count() <= 1
            && body != ".";
        if !number {
            return None;
        }
        Some(AgeTest {
            stamp: Stamp::of(pred.as_bytes()[1]),
            how,
            n: body.parse().ok()?,
            days: pred.ends_with("time"),
            origin,
        })
    }

    /// Whether a time `t` passes. In days, N means "N whole days ago":
    /// `+1` is more than two days, `1` between one and two; in minutes,
    /// `1` is the last minute and `+1` before it (as GNU find measures).
    fn test(&self, t: SystemTime) -> bool {
        let age = match self.origin.duration_since(t) {
            Ok(d) => d.as_secs_f64(),
            Err(e) => -e.duration().as_secs_f64(),
        };
        let unit = if self.days { 86_400.0 } else { 60.0 };
        let at = self.n * unit;
        match (self.how, self.days) {
            ('-', _) => age < at,
            ('+', true) => age > at + unit,
            ('+', false) => age > at,
            (_, true) => at < age && age <= at + unit,
            (_, false) => at - unit < age && age <= at,
        }
    }
}

#[derive(Debug, Clone)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    /// `a , b`: both, the value of `b`.
    Comma(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Name(Pattern, bool),
    Path(Pattern, bool),
    Type(Vec<char>),
    /// `-mtime`, `-amin` and the rest.
    Age(AgeTest),
    /// `-newer` and its kin: the item's time is later than the reference.
    Newer(Stamp, Option<SystemTime>),
    /// `-used N`: days from the last status change to the last access.
    Used(Cmp),
    /// `-inum N`.
    Inum(Cmp),
    /// Size rounded up to `unit` bytes, compared.
    Size(Cmp, u64),
    Empty,
    Const(bool),
    Print(u8),
    Printf(Vec<Directive>),
    Ls,
    /// `-exec`/`-execdir`: the command with `{}` placeholders; `+` batches.
    Exec {
        argv: Vec<String>,
        batch: bool,
        in_dir: bool,
        /// `-ok`/`-okdir`: only when a line of standard input says yes.
        ask: bool,
        id: usize,
    },
    Prune,
    Quit,
    /// `-delete`: fails on every item it reaches, as on a read-only mount.
    Delete,
    Regex(regex::Regex),
    /// `-perm MODE`, `-perm -MODE` (all bits), `-perm /MODE` (any bit).
    Perm(u32, char),
    /// `-executable`: a directory, or a document with an execute bit.
    Executable,
    /// `-uid` and `-gid`, compared with the 0 every path shows.
    Zero(Cmp),
    /// `-links N`, compared with the Linux link count.
    Links(Cmp),
    /// `-samefile F`: the path that resolves to where `F` does.
    SameFile(String),
}

/// One piece of a `-printf` format.
#[derive(Debug, Clone)]
enum Directive {
    Lit(String),
    /// A `%` conversion: its flags and width as written, and its letter
    /// (`T`, `A`, `C` carry the time format letter).
    Conv(String, char, Option<char>),
}

/// One visited path.
struct Item<'a> {
    path: &'a str,
    name: &'a str,
    kind: Kind,
    len: u64,
    modified: Option<SystemTime>,
    depth: usize,
    root: &'a str,
}

/// What evaluation decides beyond true or false.
#[derive(Debug, Default)]
struct Effects {
    /// Do not descend into this directory.
    prune: bool,
    /// Stop the whole walk.
    quit: bool,
    /// A command run by `-exec` failed (find then exits 1).
    failed: bool,
    /// Paths waiting for each `-exec ... {} +`, by its id: for
    /// `-execdir`, each with the directory it is run in.
    batches: Vec<Vec<(Option<String>, String)>>,
}

/// Parsing state over the expression's arguments.
struct Parser<'a, 'c, 's> {
    args: &'a [String],
    i: usize,
    maxdepth: Option<usize>,
    mindepth: usize,
    has_action: bool,
    /// How many `-exec ... +` there are.
    batches: usize,
    /// `-regextype`: whether `-regex` is POSIX extended.
    extended: bool,
    /// `-depth`: a directory after what it holds.
    post_order: bool,
    /// How deeply `!` and `(` are nested, bounded so that no expression can
    /// exhaust the stack.
    depth: usize,
    /// `-daystart` came before: ages count from the end of today.
    daystart: bool,
    /// The predicate or operator read last, as written: GNU names it when
    /// an operand that exists comes where the expression goes on.
    last: String,
    cx: &'c mut Cx<'s>,
}

/// The accounts of a Debian base system (`/etc/passwd`), for `-user`.
const USERS: &[&str] = &[
    "root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp", "proxy",
    "www-data", "backup", "list", "irc", "_apt", "nobody",
];

/// The groups of a Debian base system (`/etc/group`), for `-group`.
const GROUPS: &[&str] = &[
    "root", "daemon", "bin", "sys", "adm", "tty", "disk", "lp", "mail", "news", "uucp", "man",
    "proxy", "kmem", "dialout", "fax", "voice", "cdrom", "floppy", "tape", "sudo", "audio", "dip",
    "www-data", "backup", "operator", "list", "irc", "src", "shadow", "utmp", "video", "sasl",
    "plugdev", "staff", "games", "users", "nogroup",
];

/// The deepest nesting of `!` and `( )` accepted.
const MAX_NESTING: usize = 64;

type Parsed<T> = Result<T, String>;

impl Parser<'_, '_, '_> {
    fn peek(&self) -> Option<&str> {
        // GNU find takes its operators with a leading `-` too (`-!`, `-(`).
        self.args.get(self.i).map(|a| match a.as_str() {
            "-!" => "!",
            "-(" => "(",
            "-)" => ")",
            "-," => ",",
            a => a,
        })
    }

    /// What ages are measured from: now, or after `-daystart` the end of
    /// today (GNU's start of today plus a day).
    fn origin(&self) -> SystemTime {
        let now = self.cx.env.now;
        if !self.daystart {
            return now;
        }
        let secs = crate::time::epoch_seconds(now);
        let day_end = (secs.div_euclid(86_400) + 1) * 86_400;
        SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(day_end.unsigned_abs())
    }

    fn arg(&mut self, pred: &str) -> Parsed<String> {
        let v = self
            .args
            .get(self.i)
            .cloned()
            .ok_or_else(|| format!("find: missing argument to `{pred}'"))?;
        self.i += 1;
        Ok(v)
    }

    /// Steps over an operator, remembering it for [`Parser::last`].
    fn operator(&mut self) {
        self.last.clone_from(&self.args[self.i]);
        self.i += 1;
    }

    fn or(&mut self) -> Parsed<Expr> {
        let mut left = self.and()?;
        loop {
            match self.peek() {
                Some("-o" | "-or") => {
                    self.operator();
                    let right = self.and()?;
                    left = Expr::Or(Box::new(left), Box::new(right));
                }
                Some(",") => {
                    self.operator();
                    let right = self.and()?;
                    left = Expr::Comma(Box::new(left), Box::new(right));
                }
                _ => return Ok(left),
            }
        }
    }

    fn and(&mut self) -> Parsed<Expr> {
        let mut left = self.unary()?;
        loop {
            match self.peek() {
                None | Some("-o" | "-or" | ")" | ",") => return Ok(left),
                Some("-a" | "-and") => self.operator(),
                Some(_) => {}
            }
            let right = self.unary()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Parsed<Expr> {
        self.depth += 1;
        let e = self.unary_inner();
        self.depth -= 1;
        e
    }

    fn unary_inner(&mut self) -> Parsed<Expr> {
        if self.depth > MAX_NESTING {
            return Err("find: the expression is nested too deeply".to_owned());
        }
        match self.peek() {
            Some("!" | "-not") => {
                self.operator();
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some("(") => {
                self.operator();
                if self.peek() == Some(")") {
                    return Err(
                        "find: invalid expression; empty parentheses are not allowed.".to_owned(),
                    );
                }
                let e = self.or()?;
                if self.peek() != Some(")") {
                    return Err("find: invalid expression; I was expecting to find a ')' somewhere but did not see one.".to_owned());
                }
                self.operator();
                Ok(e)
            }
            Some(")") => Err("find: invalid expression; you have too many ')'".to_owned()),
            None => Err("find: invalid expression; expected an expression".to_owned()),
            Some(_) => self.primary(),
        }
    }

    fn primary(&mut self) -> Parsed<Expr> {
        let pred = self.arg("")?;
        let e = match pred.as_str() {
            "-name" | "-iname" => {
                let v = self.arg(&pred)?;
                Expr::Name(Pattern::new(&v), pred == "-iname")
            }
            "-path" | "-wholename" | "-ipath" | "-iwholename" => {
                let v = self.arg(&pred)?;
                Expr::Path(Pattern::new(&v), pred.starts_with("-i"))
            }
            "-type" | "-xtype" => {
                let v = self.arg(&pred)?;
                let kinds: Vec<char> = v.split(',').filter_map(|k| k.chars().next()).collect();
                let valid =
                    !v.is_empty() && v.split(',').all(|k| k.len() == 1 && "fdlbcps".contains(k));
                if !valid {
                    return Err(format!("find: Unknown argument to -type: {v}"));
                }
                Expr::Type(kinds)
            }
            "-mtime" | "-mmin" | "-atime" | "-ctime" | "-amin" | "-cmin" => {
                let v = self.arg(&pred)?;
                let origin = self.origin();
                Expr::Age(
                    AgeTest::parse(&pred, &v, origin)
                        .ok_or_else(|| format!("find: invalid argument `{v}' to `{pred}'"))?,
                )
            }
            "-daystart" => {
                self.daystart = true;
                Expr::Const(true)
            }
            "-used" => {
                let v = self.arg(&pred)?;
                Expr::Used(
                    Cmp::parse(&v)
                        .ok_or_else(|| format!("find: invalid argument `{v}' to `{pred}'"))?,
                )
            }
            "-newer" | "-anewer" | "-cnewer" => {
                let v = self.arg(&pred)?;
                let stamp = match pred.as_str() {
                    "-newer" => Stamp::Modify,
                    p => Stamp::of(p.as_bytes()[1]),
                };
                match self.cx.fs.metadata(&v) {
                    Ok(m) => Expr::Newer(stamp, m.modified),
                    Err(e) => return Err(format!("find: '{v}': {}", e.strerror())),
                }
            }
            "-size" => {
                let v = self.arg(&pred)?;
                let bad = || format!("find: invalid -size type in '{v}'");
                let (num, unit) = match v.chars().last() {
                    Some(c) if c.is_ascii_digit() => (v.as_str(), 512),
                    Some(c) => {
                        let unit = match c {
                            'c' => 1,
                            'w' => 2,
                            'b' => 512,
                            'k' => 1024,
                            'M' => 1 << 20,
                            'G' => 1 << 30,
                            _ => return Err(bad()),
                        };
                        (&v[..v.len() - c.len_utf8()], unit)
                    }
                    None => return Err(bad()),
                };
                let cmp = Cmp::parse(num)
                    .ok_or_else(|| format!("find: invalid argument '{v}' to '-size'"))?;
                Expr::Size(cmp, unit)
            }
            "-empty" => Expr::Empty,
            "-true" => Expr::Const(true),
            "-false" => Expr::Const(false),
            "-print" => {
                self.has_action = true;
                Expr::Print(b'\n')
            }
            "-print0" => {
                self.has_action = true;
                Expr::Print(0)
            }
            "-maxdepth" | "-mindepth" => {
                let v = self.arg(&pred)?;
                let n = super::count(&v)
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                    .ok_or_else(|| format!("find: Expected a positive decimal integer argument to {pred}, but got '{v}'"))?;
                if pred == "-maxdepth" {
                    self.maxdepth = Some(n);
                } else {
                    self.mindepth = n;
                }
                Expr::Const(true)
            }
            "-depth" | "-d" => {
                self.post_order = true;
                Expr::Const(true)
            }
            "-xdev" | "-mount" | "-follow" | "-noleaf" => Expr::Const(true),
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                self.has_action = true;
                let mut argv = Vec::new();
                let mut batch = false;
                loop {
                    let Some(a) = self.args.get(self.i).cloned() else {
                        return Err(format!("find: missing argument to `{pred}'"));
                    };
                    self.i += 1;
                    if a == ";" {
                        break;
                    }
                    if a == "+" && argv.last().is_some_and(|l: &String| l == "{}") {
                        argv.pop();
                        batch = true;
                        break;
                    }
                    if a == "+"
                        && let Some(l) = argv.last().filter(|l: &&String| l.contains("{}"))
                    {
                        return Err(format!(
                            "find: In '{pred} ... {{}} +' the '{{}}' must appear by itself, but you specified '{l}'"
                        ));
                    }
                    argv.push(a);
                }
                if batch && argv.iter().any(|a| a.contains("{}")) {
                    return Err(format!(
                        "find: Only one instance of {{}} is supported with {pred} ... +"
                    ));
                }
                // `-ok ... {} +` is not a form GNU find takes.
                if argv.is_empty() || (batch && pred.starts_with("-ok")) {
                    return Err(format!("find: missing argument to `{pred}'"));
                }
                let id = self.batches;
                if batch {
                    self.batches += 1;
                }
                Expr::Exec {
                    argv,
                    batch,
                    in_dir: pred.ends_with("dir"),
                    ask: pred.starts_with("-ok"),
                    id,
                }
            }
            "-printf" => {
                self.has_action = true;
                let v = self.arg(&pred)?;
                Expr::Printf(printf_directives(&v)?)
            }
            "-ls" => {
                self.has_action = true;
                Expr::Ls
            }
            "-prune" => Expr::Prune,
            "-quit" => {
                self.has_action = true;
                Expr::Quit
            }
            "-regextype" => {
                let v = self.arg(&pred)?;
                self.extended = match v.as_str() {
                    "posix-extended" | "egrep" | "posix-egrep" | "awk" | "gnu-awk" => true,
                    "emacs" | "posix-basic" | "grep" | "posix-awk" | "findutils-default" | "ed"
                    | "sed" => false,
                    _ => {
                        return Err(format!(
                            "find: Unknown regular expression type '{v}'; valid types are 'findutils-default', 'ed', 'emacs', 'gnu-awk', 'grep', 'posix-awk', 'awk', 'posix-basic', 'posix-egrep', 'egrep', 'posix-extended', 'posix-minimal-basic', 'sed'."
                        ));
                    }
                };
                Expr::Const(true)
            }
            "-regex" | "-iregex" => {
                let v = self.arg(&pred)?;
                let body = if self.extended {
                    crate::pattern::translate(&v, crate::pattern::Syntax::Extended)
                        .map(|t| t.regex)
                        .map_err(|e| format!("find: {e}"))?
                } else {
                    emacs_regex(&v)
                };
                let re = regex::RegexBuilder::new(&format!("^(?:{body})$"))
                    .case_insensitive(pred == "-iregex")
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|_| format!("find: invalid regular expression '{v}'"))?;
                Expr::Regex(re)
            }
            "-perm" => {
                let v = self.arg(&pred)?;
                let (how, digits) = match v.chars().next() {
                    Some(c @ ('-' | '/' | '+')) => (c, &v[1..]),
                    _ => ('=', v.as_str()),
                };
                // GNU find no longer reads `+MODE` as `/MODE`: `+` starts a
                // symbolic mode, and `+600` is none.
                let numeric = u32::from_str_radix(digits, 8).ok().filter(|_| how != '+');
                let mode = numeric
                    .or_else(|| symbolic_mode(if how == '+' { &v } else { digits }))
                    .ok_or_else(|| format!("find: invalid mode '{v}'"))?;
                // The `+` of a symbolic mode is its own: the match is exact.
                Expr::Perm(mode, if how == '+' { '=' } else { how })
            }
            // `-newerXY REF`: X and Y name a time (a, B, c, m; t for Y: REF
            // is a date). The document filesystem keeps one time per file.
            p if p.len() == 8
                && p.is_ascii()
                && p.starts_with("-newer")
                && "aBcm".contains(&p[6..7])
                && "aBcmt".contains(&p[7..8]) =>
            {
                if p[6..].contains('B') {
                    return Err(format!(
                        "find: This system does not provide a way to find the birth time of a file.\nfind: invalid predicate `{p}'"
                    ));
                }
                let v = self.arg(&pred)?;
                if p.ends_with('t') {
                    let now = crate::time::epoch_seconds(self.cx.env.now);
                    let secs = super::sys::parse_date(&v, now).ok_or_else(|| {
                        format!(
                            "find: I cannot figure out how to interpret '{v}' as a date or time"
                        )
                    })?;
                    let t = if secs >= 0 {
                        SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs.unsigned_abs())
                    } else {
                        SystemTime::UNIX_EPOCH - std::time::Duration::from_secs(secs.unsigned_abs())
                    };
                    Expr::Newer(Stamp::of(p.as_bytes()[6]), Some(t))
                } else {
                    let theirs = Stamp::of(p.as_bytes()[7]);
                    let t = match theirs {
                        Stamp::Modify => self.cx.fs.metadata(&v).map(|m| m.modified),
                        _ => self.cx.fs.attributes(&v).map(|a| match theirs {
                            Stamp::Access => a.accessed,
                            _ => a.changed,
                        }),
                    };
                    match t {
                        Ok(t) => Expr::Newer(Stamp::of(p.as_bytes()[6]), t),
                        Err(e) => return Err(format!("find: '{v}': {}", e.strerror())),
                    }
                }
            }
            "-lname" | "-ilname" => {
                // Links are resolved by the document filesystem: none is
                // seen as a link.
                self.arg(&pred)?;
                Expr::Const(false)
            }
            "-readable" | "-nouser" | "-nogroup" => Expr::Const(pred == "-readable"),
            "-writable" => Expr::Const(false),
            "-executable" => Expr::Executable,
            "-user" | "-group" => {
                // Everything is owned by root (id 0), as `ls -l` shows; the
                // other names are those of a Debian base system's accounts,
                // which own nothing here.
                let v = self.arg(&pred)?;
                let (known, missing) = if pred == "-user" {
                    (USERS, "is not the name of a known user")
                } else {
                    (GROUPS, "is not the name of an existing group")
                };
                if v.is_empty() {
                    return Err(format!("find: The argument to {pred} should not be empty"));
                }
                let numeric = v.bytes().all(|b| b.is_ascii_digit());
                if !numeric && !known.contains(&v.as_str()) {
                    return Err(format!("find: '{v}' {missing}"));
                }
                Expr::Const(v == super::OWNER || v.trim_start_matches('0').is_empty())
            }
            "-uid" | "-gid" | "-inum" | "-links" => {
                let v = self.arg(&pred)?;
                let cmp = Cmp::parse(&v)
                    .ok_or_else(|| format!("find: invalid argument `{v}' to `{pred}'"))?;
                match pred.as_str() {
                    "-links" => Expr::Links(cmp),
                    "-inum" => Expr::Inum(cmp),
                    _ => Expr::Zero(cmp),
                }
            }
            "-samefile" => {
                let v = self.arg(&pred)?;
                match self.cx.fs.metadata(&v) {
                    Ok(m) => Expr::SameFile(m.path),
                    Err(e) => return Err(format!("find: '{v}': {}", e.strerror())),
                }
            }
            "-ignore_readdir_race" | "-noignore_readdir_race" | "-nowarn" | "-warn" => {
                Expr::Const(true)
            }
            "-delete" => {
                // As GNU: an action, and `-depth` is implied.
                self.has_action = true;
                self.post_order = true;
                Expr::Delete
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                // GNU creates the file as it parses the expression: only
                // standard output and /dev/null can be opened.
                let file = self.arg(&pred)?;
                let format = if pred == "-fprintf" {
                    Some(self.arg(&pred)?)
                } else {
                    None
                };
                self.has_action = true;
                match file.as_str() {
                    "/dev/null" => Expr::Const(true),
                    "/dev/stdout" => match (pred.as_str(), format) {
                        ("-fprint0", _) => Expr::Print(0),
                        ("-fls", _) => Expr::Ls,
                        (_, Some(f)) => Expr::Printf(printf_directives(&f)?),
                        _ => Expr::Print(b'\n'),
                    },
                    _ => return Err(format!("find: '{file}': Read-only file system")),
                }
            }
            other if other.starts_with('-') => {
                return Err(format!("find: unknown predicate `{other}'"));
            }
            other => {
                // An operand that exists is most often a glob the shell
                // expanded (`find . -name *.txt`): GNU says so.
                let mut msg = format!("find: paths must precede expression: `{other}'");
                if self.cx.fs.metadata(other).is_ok() {
                    msg += &format!(
                        "\nfind: possible unquoted pattern after predicate `{}'?",
                        self.last
                    );
                }
                return Err(msg);
            }
        };
        self.last = pred;
        Ok(e)
    }
}

/// Evaluates the expression on one item, printing into `out`.
fn eval(
    e: &Expr,
    it: &Item<'_>,
    now: SystemTime,
    cx: &mut Cx<'_>,
    out: &mut Vec<u8>,
    fx: &mut Effects,
) -> bool {
    match e {
        Expr::And(a, b) => eval(a, it, now, cx, out, fx) && eval(b, it, now, cx, out, fx),
        Expr::Or(a, b) => eval(a, it, now, cx, out, fx) || eval(b, it, now, cx, out, fx),
        Expr::Comma(a, b) => {
            eval(a, it, now, cx, out, fx);
            eval(b, it, now, cx, out, fx)
        }
        Expr::Not(a) => !eval(a, it, now, cx, out, fx),
        Expr::Name(p, fold) => p.matches(it.name, *fold),
        Expr::Path(p, fold) => p.matches(it.path, *fold),
        Expr::Regex(re) => re.is_match(it.path),
        Expr::Executable => it.kind == Kind::Dir || mode_of(cx, it) & 0o111 != 0,
        Expr::Zero(cmp) => cmp.test(0),
        Expr::Inum(cmp) => cmp.test(i64::try_from(inode_of(cx, it)).unwrap_or(i64::MAX)),
        Expr::Links(cmp) => {
            let n = super::links(cx, it.path, it.kind);
            cmp.test(i64::try_from(n).unwrap_or(i64::MAX))
        }
        Expr::SameFile(target) => cx.fs.metadata(it.path).is_ok_and(|m| m.path == *target),
        Expr::Type(kinds) => kinds.iter().any(|&k| match k {
            'f' => it.kind == Kind::File,
            'd' => it.kind == Kind::Dir,
            _ => false,
        }),
        Expr::Age(test) => stamp(cx, it, test.stamp).is_some_and(|t| test.test(t)),
        Expr::Newer(which, t) => {
            matches!((stamp(cx, it, *which), t), (Some(a), Some(b)) if a > *b)
        }
        Expr::Used(cmp) => match cx.fs.attributes(it.path) {
            Ok(a) => match (a.accessed, a.changed) {
                (Some(at), Some(ct)) => {
                    let days = match at.duration_since(ct) {
                        Ok(d) => i64::try_from(d.as_secs() / 86_400).unwrap_or(i64::MAX),
                        Err(_) => -1,
                    };
                    cmp.test(days)
                }
                _ => false,
            },
            Err(_) => false,
        },
        Expr::Size(cmp, unit) => {
            let units = it.len.div_ceil(*unit);
            cmp.test(i64::try_from(units).unwrap_or(i64::MAX))
        }
        Expr::Empty => match it.kind {
            Kind::File => it.len == 0,
            Kind::Dir => cx.fs.read_dir(it.path).is_ok_and(|e| e.is_empty()),
        },
        Expr::Perm(mode, how) => {
            let m = mode_of(cx, it);
            match how {
                '-' => m & mode == *mode,
                '/' => *mode == 0 || m & mode != 0,
                _ => m & 0o7777 == *mode,
            }
        }
        Expr::Const(b) => *b,
        Expr::Print(end) => {
            out.extend_from_slice(it.path.as_bytes());
            out.push(*end);
            true
        }
        Expr::Printf(dirs) => {
            let wants_mode = dirs
                .iter()
                .any(|d| matches!(d, Directive::Conv(_, 'm' | 'M', _)));
            let mode = if wants_mode { mode_of(cx, it) } else { 0 };
            let links = if dirs.iter().any(|d| matches!(d, Directive::Conv(_, 'n', _))) {
                super::links(cx, it.path, it.kind)
            } else {
                1
            };
            let attrs = dirs
                .iter()
                .any(|d| matches!(d, Directive::Conv(_, 'i' | 'a' | 'c' | 'A' | 'C', _)))
                .then(|| cx.fs.attributes(it.path).ok())
                .flatten();
            out.extend_from_slice(render(dirs, it, mode, links, attrs.as_ref()).as_bytes());
            true
        }
        Expr::Ls => {
            // 1 KiB blocks of a filesystem of 4 KiB blocks.
            let blocks = it.len.div_ceil(4096) * 4;
            let links = super::links(cx, it.path, it.kind);
            let date = crate::time::ls_date(it.modified, now);
            out.extend_from_slice(
                format!(
                    "{:>9} {:>6} {} {:>3} {:<8} {:<8} {:>8} {date} {}\n",
                    inode_of(cx, it),
                    blocks,
                    crate::fs::mode_string(it.kind, mode_of(cx, it)),
                    links,
                    super::OWNER,
                    super::OWNER,
                    it.len,
                    ls_quoted(it.path)
                )
                .as_bytes(),
            );
            true
        }
        Expr::Prune => {
            fx.prune = true;
            true
        }
        Expr::Quit => {
            fx.quit = true;
            true
        }
        // GNU leaves `.` alone; anything else cannot be removed.
        Expr::Delete if it.path == "." => true,
        Expr::Delete => {
            // GNU's `error()` flushes standard output before the message.
            cx.out(out);
            out.clear();
            cx.err(format_args!(
                "find: cannot delete {}: Read-only file system",
                super::quote::quote(it.path, true)
            ));
            fx.failed = true;
            false
        }
        Expr::Exec {
            argv,
            batch,
            in_dir,
            ask,
            id,
        } => {
            if *batch {
                let p = if *in_dir {
                    (Some(parent_dir(it.path)), format!("./{}", it.name))
                } else {
                    (None, it.path.to_owned())
                };
                if let Some(b) = fx.batches.get_mut(*id) {
                    b.push(p);
                }
                return true;
            }
            // What find printed so far comes first.
            cx.out(out);
            out.clear();
            let (dir, arg) = if *in_dir {
                (Some(parent_dir(it.path)), format!("./{}", it.name))
            } else {
                (None, it.path.to_owned())
            };
            let argv: Vec<String> = argv.iter().map(|a| a.replace("{}", &arg)).collect();
            if *ask {
                // GNU's prompt, and its answer: a line starting with y.
                let _ = write!(cx.err, "< {} ... {arg} > ? ", argv[0]);
                let line = cx.input.borrow_mut().read_until(b'\n');
                if !line.is_some_and(|l| l.first().is_some_and(|b| matches!(b, b'y' | b'Y'))) {
                    return false;
                }
            }
            let code = run_in(cx, dir.as_deref(), &argv);
            code == 0
        }
    }
}

/// A path still to visit: path, name, kind, size, modification time,
/// depth, and whether it is a directory back for its `-depth` turn.
type Pending = (String, String, Kind, u64, Option<SystemTime>, usize, bool);

/// The directory `-execdir` runs a command in for `path`.
fn parent_dir(path: &str) -> String {
    match path.rfind('/') {
        Some(0) => "/".to_owned(),
        Some(k) => path[..k].to_owned(),
        None => ".".to_owned(),
    }
}

/// Runs a command for `-exec` (in `dir`, for `-execdir`).
fn run_in(cx: &mut Cx<'_>, dir: Option<&str>, argv: &[String]) -> u8 {
    let name = argv.first().cloned().unwrap_or_default();
    // A path is a script in the documents, which `dispatch` runs; a name
    // must be a program on `$PATH` (`cd` is bash's builtin only).
    if !name.contains('/') && super::paths_of(&name).is_empty() {
        cx.err(format_args!("find: '{name}': No such file or directory"));
        return 127;
    }
    if cx.depth >= MAX_EXEC_DEPTH {
        cx.err("find: -exec nested too deeply");
        return 1;
    }
    let back = match dir {
        Some(d) => {
            let here = cx.fs.cwd();
            if cx.fs.set_cwd(d).is_err() {
                return 1;
            }
            Some(here)
        }
        None => None,
    };
    let code = super::dispatch(&mut cx.nested(Vec::new()), argv);
    if let Some(b) = back {
        let _ = cx.fs.set_cwd(&b);
    }
    code
}

/// `find -exec` inside `find -exec` (through `sh -c`) at most this deep.
const MAX_EXEC_DEPTH: u32 = 16;

/// A name as `-ls` prints it (gnulib's listing quotes): `\ ` for a
/// space, `\"`, `\\`, C escapes for controls and octal for the rest
/// that is not printable ASCII.
fn ls_quoted(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        match b {
            b' ' => out.push_str("\\ "),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x0b => out.push_str("\\v"),
            0x21..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

/// One of the times of what `find` is looking at.
fn stamp(cx: &mut Cx<'_>, it: &Item<'_>, which: Stamp) -> Option<SystemTime> {
    match which {
        Stamp::Modify => it.modified,
        Stamp::Access => cx.fs.attributes(it.path).ok()?.accessed,
        Stamp::Change => cx.fs.attributes(it.path).ok()?.changed,
    }
}

/// The inode number of what `find` is looking at (0 where none is kept).
fn inode_of(cx: &mut Cx<'_>, it: &Item<'_>) -> u64 {
    cx.fs.attributes(it.path).map_or(0, |a| a.inode)
}

/// The permission bits of what `find` is looking at.
fn mode_of(cx: &mut Cx<'_>, it: &Item<'_>) -> u32 {
    cx.fs.mode(it.path).unwrap_or(it.kind.default_mode())
}

/// A symbolic mode (`u+x`, `a=rwx,g-w,o-w`, `go-w`) applied to 0, as
/// gnulib's `mode_compile` and `mode_adjust` read it for `-perm`: clauses
/// split on `,`, each naming who (`ugoa`, none for all) and one or more
/// operations (`+`, `-`, `=`) with their permissions (`rwxst`, or a
/// class `ugo` to copy).
fn symbolic_mode(s: &str) -> Option<u32> {
    let mut mode = 0u32;
    for clause in s.split(',') {
        let start = clause.find(['+', '-', '='])?;
        let (who, mut rest) = clause.split_at(start);
        let affected = if who.is_empty() {
            0o7777
        } else {
            who.chars().try_fold(0u32, |m, c| match c {
                'u' => Some(m | 0o4700),
                'g' => Some(m | 0o2070),
                'o' => Some(m | 0o1007),
                'a' => Some(m | 0o7777),
                _ => None,
            })?
        };
        while let Some(op) = rest.chars().next() {
            if !matches!(op, '+' | '-' | '=') {
                return None;
            }
            let end = rest[1..]
                .find(['+', '-', '='])
                .map_or(rest.len(), |k| k + 1);
            let mut bits = 0u32;
            for c in rest[1..end].chars() {
                bits |= match c {
                    'r' => 0o444,
                    'w' => 0o222,
                    'x' => 0o111,
                    's' => 0o6000,
                    't' => 0o1000,
                    // A copy of a class's bits so far (`g=u`, `+u`).
                    'u' => ((mode >> 6) & 7) * 0o111,
                    'g' => ((mode >> 3) & 7) * 0o111,
                    'o' => (mode & 7) * 0o111,
                    _ => return None,
                };
            }
            let bits = bits & affected;
            match op {
                '+' => mode |= bits,
                '-' => mode &= !bits,
                _ => mode = (mode & !affected) | bits,
            }
            rest = &rest[end..];
        }
    }
    Some(mode)
}

/// findutils' default (emacs) regex syntax in Rust's: `\(`, `\)`, `\|`
/// group and alternate; `(`, `)`, `|`, `{`, `}` are literal.
fn emacs_regex(src: &str) -> String {
    let mut out = String::new();
    let mut cs = src.chars().peekable();
    let mut in_class = false;
    while let Some(c) = cs.next() {
        if in_class {
            if c == ']' {
                in_class = false;
            }
            if c == '\\' || (c == '[' && cs.peek() != Some(&':')) {
                out.push('\\');
            }
            out.push(c);
            continue;
        }
        match c {
            '\\' => match cs.next() {
                Some('(') => out.push('('),
                Some(')') => out.push(')'),
                Some('|') => out.push('|'),
                Some(n @ ('w' | 'W' | 'b' | 'B')) => {
                    out.push('\\');
                    out.push(n);
                }
                Some('<') => out.push_str(r"\b"),
                Some('>') => out.push_str(r"\b"),
                Some(n) => out.push_str(&regex::escape(&n.to_string())),
                None => out.push_str(r"\\"),
            },
            '(' | ')' | '|' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '[' => {
                in_class = true;
                out.push('[');
                if cs.peek() == Some(&'^') {
                    out.push('^');
                    cs.next();
                }
                if cs.peek() == Some(&']') {
                    out.push_str(r"\]");
                    cs.next();
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Splits a `-printf` format into text and directives.
fn printf_directives(fmt: &str) -> Parsed<Vec<Directive>> {
    let mut dirs = Vec::new();
    let mut lit = String::new();
    let mut cs = fmt.chars().peekable();
    while let Some(c) = cs.next() {
        match c {
            '\\' => match cs.next() {
                Some('n') => lit.push('\n'),
                Some('t') => lit.push('\t'),
                Some('r') => lit.push('\r'),
                // `\NNN`: up to three octal digits.
                Some(d @ '0'..='7') => {
                    let mut v = d.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match cs.peek().and_then(|c| c.to_digit(8)) {
                            Some(n) => {
                                v = v * 8 + n;
                                cs.next();
                            }
                            None => break,
                        }
                    }
                    lit.push(char::from(u8::try_from(v & 0xff).unwrap_or(0)));
                }
                Some('\\') => lit.push('\\'),
                Some('a') => lit.push('\x07'),
                Some('v') => lit.push('\x0b'),
                Some('f') => lit.push('\x0c'),
                Some('b') => lit.push('\x08'),
                Some('c') => break,
                Some(o) => {
                    lit.push('\\');
                    lit.push(o);
                }
                None => lit.push('\\'),
            },
            '%' => {
                let mut spec = String::new();
                while let Some(&f) = cs.peek() {
                    if matches!(f, '-' | '+' | ' ' | '#' | '0'..='9' | '.') {
                        spec.push(f);
                        cs.next();
                    } else {
                        break;
                    }
                }
                let Some(k) = cs.next() else {
                    return Err("find: error: the format directive '%' is incomplete".to_owned());
                };
                if k == '%' {
                    lit.push('%');
                    continue;
                }
                if !lit.is_empty() {
                    dirs.push(Directive::Lit(std::mem::take(&mut lit)));
                }
                let sub = if matches!(k, 'T' | 'A' | 'C' | 'B') {
                    match cs.next() {
                        Some(t) => Some(t),
                        None => {
                            return Err(format!("find: error: missing time specifier after %{k}"));
                        }
                    }
                } else {
                    None
                };
                dirs.push(Directive::Conv(spec, k, sub));
            }
            c => lit.push(c),
        }
    }
    if !lit.is_empty() {
        dirs.push(Directive::Lit(lit));
    }
    Ok(dirs)
}

const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// One `%T`-style time field.
fn time_field(t: Option<SystemTime>, k: char) -> String {
    let Some(t) = t else {
        return String::new();
    };
    let secs = crate::time::epoch_seconds(t);
    let c = crate::time::civil(t);
    let wday = WEEKDAYS[secs.div_euclid(86_400).rem_euclid(7) as usize];
    let mon = MONTHS[(c.month.saturating_sub(1) as usize).min(11)];
    match k {
        '@' => format!("{secs}.{:010}", u64::from(c.nanos) * 10),
        'Y' => c.year.to_string(),
        'y' => format!("{:02}", c.year.rem_euclid(100)),
        'm' => format!("{:02}", c.month),
        'd' => format!("{:02}", c.day),
        'e' => format!("{:2}", c.day),
        'H' => format!("{:02}", c.hour),
        'I' => format!("{:02}", (c.hour + 11) % 12 + 1),
        'M' => format!("{:02}", c.minute),
        'S' => format!("{:02}.{:010}", c.second, u64::from(c.nanos) * 10),
        // GNU adds the fraction to `%T`, `%X`, `%S`, `%+` and `%@`.
        'T' | 'X' => format!(
            "{:02}:{:02}:{:02}.{:010}",
            c.hour,
            c.minute,
            c.second,
            u64::from(c.nanos) * 10
        ),
        'F' | 'D' if k == 'F' => format!("{}-{:02}-{:02}", c.year, c.month, c.day),
        'D' => format!("{:02}/{:02}/{:02}", c.month, c.day, c.year.rem_euclid(100)),
        '+' => format!(
            "{}-{:02}-{:02}+{:02}:{:02}:{:02}.{:010}",
            c.year,
            c.month,
            c.day,
            c.hour,
            c.minute,
            c.second,
            u64::from(c.nanos) * 10
        ),
        'R' => format!("{:02}:{:02}", c.hour, c.minute),
        'a' => wday.to_owned(),
        'b' | 'h' => mon.to_owned(),
        'j' => {
            let start = crate::time::days_from_civil(c.year, 1, 1);
            let today = secs.div_euclid(86_400);
            format!("{:03}", today - start + 1)
        }
        'Z' => "UTC".to_owned(),
        'z' => "+0000".to_owned(),
        'p' => if c.hour < 12 { "AM" } else { "PM" }.to_owned(),
        'c' => format!(
            "{wday} {mon} {:2} {:02}:{:02}:{:02} {}",
            c.day, c.hour, c.minute, c.second, c.year
        ),
        's' => secs.to_string(),
        // The rest as strftime(3) has them (`%AA`, `%Tk`, `%CU`...).
        k => crate::time::strftime(&format!("%{k}"), secs, c.nanos),
    }
}

/// `-printf`'s text for one entry; `mode` is its permission bits, `links`
/// its link count and `attrs` its inode and times (each looked up only
/// when a directive shows it).
fn render(
    dirs: &[Directive],
    it: &Item<'_>,
    mode: u32,
    links: u64,
    attrs: Option<&crate::fs::Attrs>,
) -> String {
    let accessed = attrs.map_or(it.modified, |a| a.accessed);
    let changed = attrs.map_or(it.modified, |a| a.changed);
    let mut out = String::new();
    for d in dirs {
        let (spec, k, sub) = match d {
            Directive::Lit(s) => {
                out.push_str(s);
                continue;
            }
            Directive::Conv(spec, k, sub) => (spec, *k, *sub),
        };
        let rel = it
            .path
            .strip_prefix(it.root)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(it.path);
        let text = match k {
            'p' => it.path.to_owned(),
            'f' => it.name.to_owned(),
            // What comes before the last `/` (nothing for `/testbed`).
            'h' => match it.path.rfind('/') {
                Some(i) => it.path[..i].to_owned(),
                None => ".".to_owned(),
            },
            'P' => rel.to_owned(),
            'H' => it.root.to_owned(),
            's' => it.len.to_string(),
            'k' => it.len.div_ceil(4096).saturating_mul(4).to_string(),
            'b' => it.len.div_ceil(4096).saturating_mul(8).to_string(),
            // `%d` and `%m` are C integer conversions, with their flags;
            // the other numbers are strings.
            'd' => {
                out.push_str(&c_integer(spec, it.depth as u64, false));
                continue;
            }
            'm' => {
                out.push_str(&c_integer(spec, u64::from(mode & 0o7777), true));
                continue;
            }
            'M' => crate::fs::mode_string(it.kind, mode),
            'y' | 'Y' => if it.kind == Kind::Dir { "d" } else { "f" }.to_owned(),
            'u' | 'g' => super::OWNER.to_owned(),
            'U' | 'G' => "0".to_owned(),
            'n' => links.to_string(),
            'i' => attrs.map_or(0, |a| a.inode).to_string(),
            'l' => String::new(),
            'D' => "0".to_owned(),
            'F' => "vfs".to_owned(),
            // Sparseness: the blocks' bytes over the size (`%g`).
            'S' if it.len == 0 => "1".to_owned(),
            'S' => super::awk::format_g6((it.len.div_ceil(4096) * 4096) as f64 / it.len as f64),
            't' | 'a' | 'c' => {
                let t = match k {
                    'a' => accessed,
                    'c' => changed,
                    _ => it.modified,
                };
                match t {
                    Some(t) => {
                        let c = crate::time::civil(t);
                        let secs = crate::time::epoch_seconds(t);
                        format!(
                            "{} {} {:2} {:02}:{:02}:{:02}.{:010} {}",
                            WEEKDAYS[secs.div_euclid(86_400).rem_euclid(7) as usize],
                            MONTHS[(c.month.saturating_sub(1) as usize).min(11)],
                            c.day,
                            c.hour,
                            c.minute,
                            c.second,
                            u64::from(c.nanos) * 10,
                            c.year
                        )
                    }
                    None => String::new(),
                }
            }
            'T' => time_field(it.modified, sub.unwrap_or('@')),
            // GNU find reads no birth time on Linux: it prints nothing.
            'B' => String::new(),
            'A' => time_field(accessed, sub.unwrap_or('@')),
            'C' => time_field(changed, sub.unwrap_or('@')),
            // An unknown directive is printed as written.
            other => {
                out.push('%');
                out.push_str(spec);
                out.push(other);
                continue;
            }
        };
        out.push_str(&pad(spec, &text));
    }
    out
}

/// C's `%d` (or `%o` when `octal`) with `-printf`'s flags, width and
/// precision: `-` left-aligns, `0` pads with zeros, `+` and ` ` sign a
/// decimal, `#` puts a `0` before an octal.
fn c_integer(spec: &str, v: u64, octal: bool) -> String {
    let flags: String = spec
        .chars()
        .take_while(|c| matches!(c, '-' | '+' | ' ' | '#' | '0'))
        .collect();
    let rest = &spec[flags.len()..];
    let (w, prec) = match rest.split_once('.') {
        Some((w, p)) => (w, Some(p.parse::<usize>().unwrap_or(0))),
        None => (rest, None),
    };
    let width: usize = w.parse().unwrap_or(0);
    let mut digits = if octal {
        format!("{v:o}")
    } else {
        v.to_string()
    };
    if let Some(p) = prec {
        if p == 0 && v == 0 {
            digits.clear();
        }
        if digits.len() < p {
            digits = format!("{}{digits}", "0".repeat(p - digits.len()));
        }
    }
    if octal && flags.contains('#') && !digits.starts_with('0') {
        digits.insert(0, '0');
    }
    let sign = match (octal, flags.contains('+'), flags.contains(' ')) {
        (false, true, _) => "+",
        (false, false, true) => " ",
        _ => "",
    };
    let len = sign.len() + digits.len();
    if len >= width {
        return format!("{sign}{digits}");
    }
    let fill = width - len;
    if flags.contains('-') {
        format!("{sign}{digits}{}", " ".repeat(fill))
    } else if flags.contains('0') && prec.is_none() {
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{sign}{digits}", " ".repeat(fill))
    }
}

/// Applies a `-printf` width (`-` left-aligns).
fn pad(spec: &str, text: &str) -> String {
    if spec.is_empty() {
        return text.to_owned();
    }
    let left = spec.contains('-');
    let (w, prec) = match spec
        .trim_start_matches(['-', '+', ' ', '#', '0'])
        .split_once('.')
    {
        Some((w, p)) => (w.to_owned(), p.parse::<usize>().ok()),
        None => (
            spec.trim_start_matches(['-', '+', ' ', '#', '0'])
                .to_owned(),
            None,
        ),
    };
    let text: String = match prec {
        Some(p) => text.chars().take(p).collect(),
        None => text.to_owned(),
    };
    let width: usize = w.parse().unwrap_or(0);
    let n = text.chars().count();
    if n >= width {
        return text;
    }
    if left {
        format!("{text}{}", " ".repeat(width - n))
    } else {
        format!("{}{text}", " ".repeat(width - n))
    }
}

/// `find`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    if args.first().is_some_and(|a| a == "--help") {
        cx.outs("usage: find [PATH]... [EXPRESSION]  (see `help`)\n");
        return 0;
    }
    // `-P`, `-L`, `-H` (how to treat symbolic links: the document
    // filesystem resolves them already), `-D` debug options and `-O`
    // optimisation levels come before the paths.
    let mut skip = 0;
    while let Some(a) = args.get(skip) {
        match a.as_str() {
            "-P" | "-L" | "-H" => skip += 1,
            "-D" => skip += 2,
            o if o.starts_with("-O") && o[2..].bytes().all(|b| b.is_ascii_digit()) => skip += 1,
            _ => break,
        }
    }
    let args = &args[skip.min(args.len())..];
    let split = args
        .iter()
        .position(|a| (a.starts_with('-') && a.len() > 1) || a == "!" || a == "(")
        .unwrap_or(args.len());
    let mut paths: Vec<String> = args[..split].to_vec();
    if paths.is_empty() {
        paths.push(".".to_owned());
    }
    let rest = &args[split..];
    let mut parser = Parser {
        args: rest,
        i: 0,
        maxdepth: None,
        mindepth: 0,
        has_action: false,
        batches: 0,
        extended: false,
        post_order: false,
        depth: 0,
        daystart: false,
        last: String::new(),
        cx,
    };
    let expr = if rest.is_empty() {
        Ok(Expr::Const(true))
    } else {
        parser.or().and_then(|e| match parser.peek() {
            None => Ok(e),
            Some(")") => Err("find: invalid expression; you have too many ')'".to_owned()),
            Some(other) => Err(format!("find: unexpected extra predicate '{other}'")),
        })
    };
    let (maxdepth, mindepth, has_action) = (parser.maxdepth, parser.mindepth, parser.has_action);
    let batches = parser.batches;
    let post_order = parser.post_order;
    let expr = match expr {
        Ok(e) if has_action => e,
        Ok(e) => Expr::And(Box::new(e), Box::new(Expr::Print(b'\n'))),
        Err(msg) => {
            cx.err(msg);
            return 1;
        }
    };
    let now = cx.env.now;
    let mut status = 0;
    let mut fx = Effects {
        batches: vec![Vec::new(); batches],
        ..Effects::default()
    };
    // The level of the walk's last entry.
    let mut prev_depth = usize::MAX;
    'roots: for root in &paths {
        let meta = match cx.fs.metadata(root) {
            Ok(m) => m,
            Err(e) => {
                cx.err(format_args!("find: '{root}': {}", e.strerror()));
                status = 1;
                continue;
            }
        };
        let root_name = if root.trim_end_matches('/').is_empty() && root.starts_with('/') {
            "/".to_owned()
        } else {
            base_name(root, "")
        };
        // Entries still to visit, the next one last.
        let stack = vec![(
            root.clone(),
            root_name,
            meta.kind,
            meta.len,
            meta.modified,
            0usize,
        )];
        // With `-depth`, a directory comes back onto the stack, marked, to
        // be evaluated after its entries.
        let mut stack: Vec<Pending> = stack
            .into_iter()
            .map(|(p, n, k, l, m, d)| (p, n, k, l, m, d, false))
            .collect();
        while let Some((path, name, kind, len, modified, depth, revisit)) = stack.pop() {
            // Into a pipe whose reader has gone, `SIGPIPE` would have
            // ended the walk.
            if cx.stdout_gone() {
                break;
            }
            // GNU find runs what `-execdir ... +` holds whenever the walk
            // changes level (fts's entries, the way out of a directory
            // included).
            if depth != prev_depth {
                run_batches(&expr, &mut fx, cx, true);
                prev_depth = depth;
            }
            if revisit && !post_order {
                continue;
            }
            let mut out = Vec::new();
            fx.prune = false;
            let evaluate_now = !post_order || kind != Kind::Dir || revisit;
            if evaluate_now && depth >= mindepth {
                let item = Item {
                    path: &path,
                    name: &name,
                    kind,
                    len,
                    modified,
                    depth,
                    root,
                };
                eval(&expr, &item, now, cx, &mut out, &mut fx);
            }
            cx.out(&out);
            if fx.quit {
                break 'roots;
            }
            if revisit {
                continue;
            }
            let descend = kind == Kind::Dir && !fx.prune && maxdepth.is_none_or(|m| depth < m);
            if post_order && kind == Kind::Dir || descend {
                stack.push((path.clone(), name.clone(), kind, len, modified, depth, true));
            }
            if descend {
                match cx.fs.read_dir(&path) {
                    Ok(entries) => {
                        for e in entries.into_iter().rev() {
                            let child = super::join(&path, &e.name);
                            stack.push((
                                child,
                                e.name,
                                e.kind,
                                e.len,
                                e.modified,
                                depth + 1,
                                false,
                            ));
                        }
                    }
                    Err(e) => {
                        cx.err(format_args!("find: '{path}': {}", e.strerror()));
                        status = 1;
                    }
                }
            }
        }
    }
    // `-exec ... {} +`: the collected paths, in batches.
    run_batches(&expr, &mut fx, cx, false);
    if fx.failed {
        status = 1;
    }
    status
}

/// Runs each `-exec ... {} +` over the paths it collected (only the
/// `-execdir` ones when `execdir_only`).
fn run_batches(e: &Expr, fx: &mut Effects, cx: &mut Cx<'_>, execdir_only: bool) {
    match e {
        Expr::And(a, b) | Expr::Or(a, b) | Expr::Comma(a, b) => {
            run_batches(a, fx, cx, execdir_only);
            run_batches(b, fx, cx, execdir_only);
        }
        Expr::Not(a) => run_batches(a, fx, cx, execdir_only),
        Expr::Exec {
            argv,
            batch: true,
            in_dir,
            id,
            ..
        } if *in_dir || !execdir_only => {
            // `-execdir ... +` runs once for each directory's run of
            // entries, in that directory.
            let paths = std::mem::take(&mut fx.batches[*id]);
            let mut rest = paths.as_slice();
            while let Some((dir, _)) = rest.first() {
                let same = if *in_dir {
                    rest.iter().take_while(|(d, _)| d == dir).count()
                } else {
                    rest.len()
                };
                let (group, after) = rest.split_at(same);
                rest = after;
                for chunk in group.chunks(4096) {
                    let mut full = argv.clone();
                    full.extend(chunk.iter().map(|(_, p)| p.clone()));
                    if run_in(cx, dir.as_deref(), &full) != 0 {
                        fx.failed = true;
                    }
                }
            }
        }
        _ => {}
    }
}
