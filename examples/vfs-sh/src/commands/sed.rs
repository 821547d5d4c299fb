//! `sed`, as GNU sed runs a script: addresses (`N`, `$`, `/re/` with `I`
//! and `M`, `\cREc`, `first~step`, `addr,+N`, `addr,~N`, `0,/re/`, `!`),
//! blocks, and the commands `s y p P d D n N g G h H x b t T : = a i c l q
//! Q r R z F` and `w` to `/dev/stdout` or `/dev/stderr`. Substitutions take
//! `g`, a count, `p`, `i`/`I`, `m`/`M`; replacements `&`, `\1`..`\9` and
//! GNU's `\U \L \u \l \E`. `e` and `s///e` run their command in a
//! nested vfs-sh. Writing a file (`-i`, `w FILE`) is refused.
//!
//! With `-n` and only line-number addresses, a document is read only up to
//! the last line wanted.

use regex::RegexBuilder;

use crate::longest::{Groups, PosixRegex};

use super::read::TextWindow;
use super::{flag, options, value};
use crate::exec::Cx;
use crate::pattern::{Syntax, translate};

/// The first address of a command.
#[derive(Debug, Clone)]
enum Addr {
    Line(u64),
    Last,
    /// `None`: the last regex used.
    Re(Option<SedRegex>),
    Step(u64, u64),
    /// `0` (only as `0,/re/`).
    Zero,
}

/// The second address of a range.
#[derive(Debug, Clone)]
enum Addr2 {
    Line(u64),
    Last,
    Re(Option<SedRegex>),
    Plus(u64),
    Multiple(u64),
}

/// One piece of a replacement.
#[derive(Debug, Clone)]
enum Repl {
    Lit(String),
    Group(usize),
    /// `\U`, `\L`, `\u`, `\l`, `\E`.
    Case(char),
}

#[derive(Debug, Clone)]
enum Kind {
    /// `{`: the index after the matching `}`.
    Block(usize),
    EndBlock,
    LineNumber,
    /// `a`, `i`, `c` and their text; `None` for `a\` at the end of the
    /// script, which GNU sed takes as no text at all, not an empty line.
    Append(Option<String>),
    Insert(Option<String>),
    Change(Option<String>),
    /// `b`, `t`, `T`: the label's index (`None`: the end of the script).
    Branch(char, Option<usize>),
    Label,
    Delete,
    DeleteFirst,
    Get,
    GetAppend,
    Hold,
    HoldAppend,
    Exchange,
    List(usize),
    Next,
    NextAppend,
    Print,
    PrintFirst,
    Quit(i32, bool),
    ReadFile(String),
    ReadLine(String),
    Subst(Box<Subst>),
    Translit(Vec<(char, char)>),
    Zap,
    FileName,
    /// `w /dev/stdout` or `/dev/stderr` (`true`).
    Write(bool),
    /// `e COMMAND` (its output before the line), or `e` alone (the
    /// pattern space run as a command, replaced by its output); run by a
    /// nested vfs-sh.
    Exec(Option<String>),
}

#[derive(Debug, Clone)]
struct Subst {
    re: Option<SedRegex>,
    repl: Vec<Repl>,
    global: bool,
    nth: usize,
    print: bool,
    /// `w /dev/stdout` (`Some(false)`) or `/dev/stderr` (`Some(true)`).
    write: Option<bool>,
    /// `e`: the result is run as a command and replaced by its output.
    exec: bool,
}

#[derive(Debug, Clone)]
struct Cmd {
    a1: Option<Addr>,
    a2: Option<Addr2>,
    negate: bool,
    kind: Kind,
    /// Inside the range; and the line that ends a `+N`/`~N` range.
    active: bool,
    end: u64,
}

type Res<T> = Result<T, String>;

/// A compiled sed regex: the linear engine, or, for a pattern with
/// back-references (`/\(.\)\1/`), which no linear engine can match, the
/// backtracking one (bounded by its backtrack limit: a pattern that runs
/// past it does not match).
#[derive(Debug, Clone)]
enum SedRegex {
    /// The regex crate's engine, with POSIX's longest match on top.
    Linear(PosixRegex),
    Backtracking(std::rc::Rc<fancy_regex::Regex>),
}

impl SedRegex {
    /// How many groups a match has, the whole match included.
    fn groups(&self) -> usize {
        match self {
            SedRegex::Linear(re) => re.captures_len(),
            SedRegex::Backtracking(re) => re.captures_len(),
        }
    }

    fn is_match(&self, s: &str) -> bool {
        match self {
            SedRegex::Linear(re) => re.is_match(s),
            SedRegex::Backtracking(re) => re.is_match(s).unwrap_or(false),
        }
    }

    /// The first match at or after `at`, with its groups.
    fn captures_at(&self, s: &str, at: usize) -> Option<Groups> {
        match self {
            SedRegex::Linear(re) => re.captures_at(s, at),
            SedRegex::Backtracking(re) => {
                let caps = re.captures_from_pos(s, at).ok()??;
                Some(
                    (0..caps.len())
                        .map(|g| caps.get(g).map(|m| m.range()))
                        .collect(),
                )
            }
        }
    }
}

fn err(msg: &str) -> String {
    format!("sed: -e expression #1, char 0: {msg}")
}

struct Parser {
    s: Vec<char>,
    i: usize,
    syntax: Syntax,
    fold_default: bool,
    /// The groups of the last regex compiled, which an empty regex (`s//\1/`)
    /// stands for: GNU checks its references against them.
    last_groups: Option<usize>,
    /// Where the newlines that join `-e` pieces are: GNU ends each piece,
    /// so `a` with no text before one is an error (`-e a -e foo`).
    joints: Vec<usize>,
}

/// GNU's character escapes after a backslash: `\a \f \v \r`, `\cX`,
/// `\dNNN` (decimal), `\oNNN` (octal) and `\xHH` (hex). `s` starts at the
/// letter; the answer is the character and how many chars it took.
fn char_escape(s: &[char]) -> Option<(char, usize)> {
    let simple = |c| Some((c, 1));
    match *s.first()? {
        'a' => simple('\x07'),
        'f' => simple('\x0c'),
        'v' => simple('\x0b'),
        'r' => simple('\r'),
        'c' => {
            let x = s.get(1)?.to_ascii_uppercase();
            Some((char::from((x as u8) ^ 0x40), 2))
        }
        kind @ ('d' | 'o' | 'x') => {
            let (radix, most) = match kind {
                'd' => (10, 3),
                'o' => (8, 3),
                _ => (16, 2),
            };
            let digits: String = s[1..]
                .iter()
                .take(most)
                .take_while(|c| c.is_digit(radix))
                .collect();
            let n = u32::from_str_radix(&digits, radix).ok()?;
            Some((
                crate::lossless::byte_char((n & 0xff) as u8),
                1 + digits.len(),
            ))
        }
        _ => None,
    }
}

/// Compiles a sed regex (BRE or ERE) with GNU's `\n`, `\t` and character
/// escapes. As in GNU sed 4.9, a character made by `\xHH` keeps its special
/// meaning (`\x2e` is any character).
fn compile(src: &str, syntax: Syntax, fold: bool, multi: bool) -> Res<SedRegex> {
    let mut pre = String::new();
    let cs: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        i += 1;
        if c != '\\' {
            pre.push(c);
            continue;
        }
        match cs.get(i) {
            Some('n') => {
                pre.push('\n');
                i += 1;
            }
            Some('t') => {
                pre.push('\t');
                i += 1;
            }
            Some(_) => {
                if let Some((ch, used)) = char_escape(&cs[i..]) {
                    pre.push(ch);
                    i += used;
                } else {
                    pre.push('\\');
                    pre.push(cs[i]);
                    i += 1;
                }
            }
            None => pre.push('\\'),
        }
    }
    let pre = crate::lossless::normalize(&pre);
    let t = translate(&pre, syntax).map_err(|e| format!("sed: -e expression #1, char 0: {e}"))?;
    if t.backrefs {
        return fancy_regex::RegexBuilder::new(&t.regex)
            .case_insensitive(fold)
            .multi_line(multi)
            .delegate_size_limit(4 << 20)
            .build()
            .map(|re| SedRegex::Backtracking(std::rc::Rc::new(re)))
            .map_err(|_| err("invalid reference \\N on `s' command's RHS"));
    }
    RegexBuilder::new(&t.regex)
        .case_insensitive(fold)
        .multi_line(multi)
        .size_limit(4 << 20)
        .build()
        .map(|re| SedRegex::Linear(PosixRegex::new(re, fold, multi)))
        .map_err(|_| err("invalid regular expression"))
}

impl Parser {
    /// A parse error where GNU sed reports it: after the characters read,
    /// the one that stopped the parse included.
    fn err(&self, msg: &str) -> String {
        let at = (self.i + 1).min(self.s.len());
        format!("sed: -e expression #1, char {at}: {msg}")
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn number(&mut self) -> u64 {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let t: String = self.s[start..self.i].iter().collect();
        t.parse().unwrap_or(u64::MAX)
    }

    /// Text up to an unescaped `delim`; `\delim` is the delimiter itself,
    /// `\n` a newline (in replacements and `y`).
    fn delimited(&mut self, delim: char, regex: bool) -> Res<String> {
        let mut out = String::new();
        let mut in_class = false;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err(&format!(
                    "unterminated `{}' command",
                    if regex { "s" } else { "y" }
                )));
            };
            self.i += 1;
            if c == '\\' {
                let Some(n) = self.peek() else {
                    out.push('\\');
                    continue;
                };
                self.i += 1;
                if n == delim {
                    out.push(n);
                } else if n == '\n' {
                    out.push('\n');
                } else {
                    out.push('\\');
                    out.push(n);
                }
                continue;
            }
            if regex && c == '[' && !in_class {
                in_class = true;
                out.push(c);
                if self.peek() == Some('^') {
                    out.push('^');
                    self.i += 1;
                }
                if self.peek() == Some(']') {
                    out.push(']');
                    self.i += 1;
                }
                continue;
            }
            if in_class {
                if c == ']' {
                    in_class = false;
                }
                out.push(c);
                continue;
            }
            if c == delim {
                return Ok(out);
            }
            out.push(c);
        }
    }

    fn regex_flags(&mut self) -> (bool, bool) {
        let (mut fold, mut multi) = (self.fold_default, false);
        loop {
            match self.peek() {
                Some('I') => fold = true,
                Some('M') => multi = true,
                _ => return (fold, multi),
            }
            self.i += 1;
        }
    }

    fn re(&mut self, delim: char) -> Res<Option<SedRegex>> {
        let src = self
            .delimited(delim, true)
            .map_err(|e| e.replace("unterminated `s' command", "unterminated address regex"))?;
        // GNU compiles an address's regex once it has read its flags.
        let (fold, multi) = self.regex_flags();
        let at = self.i;
        if src.is_empty() {
            return Ok(None);
        }
        compile(&src, self.syntax, fold, multi)
            .inspect(|re| self.last_groups = Some(re.groups()))
            .map(Some)
            .map_err(
                |e| match e.strip_prefix("sed: -e expression #1, char 0: ") {
                    Some(msg) => format!("sed: -e expression #1, char {at}: {msg}"),
                    None => e,
                },
            )
    }

    /// A regex error (made without a position) placed where the parse is.
    fn placed(&self, e: &str) -> String {
        match e.strip_prefix("sed: -e expression #1, char 0: ") {
            Some(msg) => self.err(msg),
            None => e.to_owned(),
        }
    }

    fn addr(&mut self) -> Res<Option<Addr>> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let n = self.number();
                if self.peek() == Some('~') {
                    self.i += 1;
                    let step = self.number();
                    return Ok(Some(Addr::Step(n, step)));
                }
                Ok(Some(if n == 0 { Addr::Zero } else { Addr::Line(n) }))
            }
            Some('$') => {
                self.i += 1;
                Ok(Some(Addr::Last))
            }
            Some('/') => {
                self.i += 1;
                Ok(Some(Addr::Re(self.re('/')?)))
            }
            Some('\\') => {
                self.i += 1;
                let Some(d) = self.peek() else {
                    return Err(self.err("unexpected `,'"));
                };
                self.i += 1;
                Ok(Some(Addr::Re(self.re(d)?)))
            }
            _ => Ok(None),
        }
    }

    fn addr2(&mut self) -> Res<Addr2> {
        self.skip_blanks();
        match self.peek() {
            Some('+') => {
                self.i += 1;
                Ok(Addr2::Plus(self.number()))
            }
            Some('~') => {
                self.i += 1;
                Ok(Addr2::Multiple(self.number()))
            }
            _ => match self.addr()? {
                Some(Addr::Line(n)) => Ok(Addr2::Line(n)),
                Some(Addr::Zero) => Ok(Addr2::Line(0)),
                Some(Addr::Last) => Ok(Addr2::Last),
                Some(Addr::Re(r)) => Ok(Addr2::Re(r)),
                Some(Addr::Step(n, _)) => Ok(Addr2::Line(n)),
                None => Err(self.err("unexpected `,'")),
            },
        }
    }

    /// The text of `a`, `i`, `c`: GNU's one-line form or `\` and lines.
    fn text(&mut self) -> Res<Option<String>> {
        self.skip_blanks();
        // The end of the script or of an `-e` piece, counted as read
        // (GNU's position).
        let ends = match self.peek() {
            None => true,
            Some('\n') => self.joints.contains(&self.i),
            Some(_) => false,
        };
        if ends {
            return Err(format!(
                "sed: -e expression #1, char {}: expected \\ after `a', `c' or `i'",
                self.i
            ));
        }
        if self.peek() == Some('\\') {
            self.i += 1;
            match self.peek() {
                None => return Ok(None),
                Some('\n') => self.i += 1,
                Some(_) => {}
            }
        }
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                '\\' => match self.peek() {
                    Some('\n') => {
                        out.push('\n');
                        self.i += 1;
                    }
                    Some('t') => {
                        out.push('\t');
                        self.i += 1;
                    }
                    Some(n) => {
                        out.push(n);
                        self.i += 1;
                    }
                    None => {}
                },
                '\n' => {
                    // The newline ends the command, for the caller to see.
                    self.i -= 1;
                    break;
                }
                c => out.push(c),
            }
        }
        Ok(Some(out))
    }

    /// A label, as GNU sed reads one: up to white space, `;` or a newline
    /// (and `}`, which GNU would take into the label and then miss).
    fn label(&mut self) -> String {
        self.skip_blanks();
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| !c.is_whitespace() && c != ';' && c != '}')
        {
            self.i += 1;
        }
        self.s[start..self.i]
            .iter()
            .collect::<String>()
            .trim()
            .to_owned()
    }

    fn filename(&mut self) -> String {
        self.skip_blanks();
        let start = self.i;
        while self.peek().is_some_and(|c| c != '\n') {
            self.i += 1;
        }
        self.s[start..self.i].iter().collect()
    }

    fn replacement(&mut self, delim: char) -> Res<Vec<Repl>> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("unterminated `s' command"));
            };
            self.i += 1;
            match c {
                '\\' => {
                    let Some(n) = self.peek() else {
                        lit.push('\\');
                        continue;
                    };
                    self.i += 1;
                    match n {
                        '0'..='9' => {
                            if !lit.is_empty() {
                                parts.push(Repl::Lit(std::mem::take(&mut lit)));
                            }
                            parts.push(Repl::Group(n as usize - '0' as usize));
                        }
                        'n' => lit.push('\n'),
                        't' => lit.push('\t'),
                        '\n' => lit.push('\n'),
                        'a' | 'f' | 'v' | 'r' | 'c' | 'd' | 'o' | 'x' => {
                            match char_escape(&self.s[self.i - 1..]) {
                                Some((ch, used)) => {
                                    lit.push(ch);
                                    self.i += used - 1;
                                }
                                None => lit.push(n),
                            }
                        }
                        'U' | 'L' | 'u' | 'l' | 'E' => {
                            if !lit.is_empty() {
                                parts.push(Repl::Lit(std::mem::take(&mut lit)));
                            }
                            parts.push(Repl::Case(n));
                        }
                        '&' => lit.push('&'),
                        o => lit.push(o),
                    }
                }
                '&' => {
                    if !lit.is_empty() {
                        parts.push(Repl::Lit(std::mem::take(&mut lit)));
                    }
                    parts.push(Repl::Group(0));
                }
                c if c == delim => break,
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            parts.push(Repl::Lit(lit));
        }
        for part in &mut parts {
            if let Repl::Lit(text) = part {
                *text = crate::lossless::normalize(text).into_owned();
            }
        }
        Ok(parts)
    }

    fn script(&mut self) -> Res<Vec<Cmd>> {
        let mut cmds: Vec<Cmd> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        let mut labels: Vec<(String, usize)> = Vec::new();
        let mut branches: Vec<(usize, String)> = Vec::new();
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.i += 1;
            }
            let Some(c) = self.peek() else { break };
            if c == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                continue;
            }
            let a1 = self.addr()?;
            let mut a2 = None;
            self.skip_blanks();
            if a1.is_some() && self.peek() == Some(',') {
                self.i += 1;
                a2 = Some(self.addr2()?);
            }
            if matches!(a1, Some(Addr::Zero)) && !matches!(a2, Some(Addr2::Re(_))) {
                return Err(self.err("invalid usage of line address 0"));
            }
            self.skip_blanks();
            let mut negate = false;
            while self.peek() == Some('!') {
                negate = true;
                self.i += 1;
                self.skip_blanks();
            }
            let Some(k) = self.peek() else {
                return Err(self.err("missing command"));
            };
            self.i += 1;
            let kind = match k {
                '{' => {
                    open.push(cmds.len());
                    Kind::Block(0)
                }
                '}' => {
                    let Some(o) = open.pop() else {
                        return Err(self.err("unexpected `}'"));
                    };
                    let after = cmds.len() + 1;
                    cmds[o].kind = Kind::Block(after);
                    Kind::EndBlock
                }
                '=' => Kind::LineNumber,
                'a' => Kind::Append(self.text()?),
                'i' => Kind::Insert(self.text()?),
                'c' => Kind::Change(self.text()?),
                'b' | 't' | 'T' => {
                    let l = self.label();
                    if !l.is_empty() {
                        branches.push((cmds.len(), l));
                    }
                    Kind::Branch(k, None)
                }
                ':' => {
                    let l = self.label();
                    if l.is_empty() {
                        return Err(self.err("\":\" lacks a label"));
                    }
                    labels.push((l, cmds.len()));
                    Kind::Label
                }
                'd' => Kind::Delete,
                'D' => Kind::DeleteFirst,
                'g' => Kind::Get,
                'G' => Kind::GetAppend,
                'h' => Kind::Hold,
                'H' => Kind::HoldAppend,
                'x' => Kind::Exchange,
                'l' => {
                    self.skip_blanks();
                    let n = if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        usize::try_from(self.number()).unwrap_or(70)
                    } else {
                        70
                    };
                    Kind::List(n)
                }
                'n' => Kind::Next,
                'N' => Kind::NextAppend,
                'p' => Kind::Print,
                'P' => Kind::PrintFirst,
                'q' | 'Q' => {
                    self.skip_blanks();
                    let code = if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        i32::try_from(self.number()).unwrap_or(0)
                    } else {
                        0
                    };
                    Kind::Quit(code, k == 'q')
                }
                'r' => Kind::ReadFile(self.filename()),
                'R' => Kind::ReadLine(self.filename()),
                'w' | 'W' => {
                    let f = self.filename();
                    match f.as_str() {
                        "/dev/stdout" => Kind::Write(false),
                        "/dev/stderr" => Kind::Write(true),
                        _ => {
                            return Err(format!(
                                "sed: couldn't open file {f}: the filesystem is read-only"
                            ));
                        }
                    }
                }
                'e' => {
                    let cmd = self.filename();
                    Kind::Exec((!cmd.is_empty()).then_some(cmd))
                }
                'z' => Kind::Zap,
                'F' => Kind::FileName,
                // `v [VERSION]` only asks for a sed at least that new:
                // this one answers as GNU sed 4.9 does.
                'v' => {
                    let wanted = self.label();
                    let mut parts = wanted.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
                    let version = (parts.next().unwrap_or(4), parts.next().unwrap_or(2));
                    if version > (4, 9) {
                        return Err(self.err("expected newer version of sed"));
                    }
                    Kind::Label
                }
                's' => {
                    let Some(d) = self.peek() else {
                        return Err(self.err("unterminated `s' command"));
                    };
                    if d == '\n' || d == '\\' {
                        return Err(self.err("unterminated `s' command"));
                    }
                    self.i += 1;
                    let src = self.delimited(d, true)?;
                    let repl = self.replacement(d)?;
                    let mut sub = Subst {
                        re: None,
                        repl,
                        global: false,
                        nth: 1,
                        print: false,
                        write: None,
                        exec: false,
                    };
                    let (mut fold, mut multi) = (self.fold_default, false);
                    loop {
                        match self.peek() {
                            Some('g') => sub.global = true,
                            Some('p') => sub.print = true,
                            Some('i' | 'I') => fold = true,
                            Some('m' | 'M') => multi = true,
                            Some('e') => sub.exec = true,
                            Some(c) if c.is_ascii_digit() => {
                                sub.nth = usize::try_from(self.number()).unwrap_or(1).max(1);
                                continue;
                            }
                            Some('w') => {
                                self.i += 1;
                                let f = self.filename();
                                sub.write = match f.as_str() {
                                    "/dev/stdout" => Some(false),
                                    "/dev/stderr" => Some(true),
                                    _ => {
                                        return Err(format!(
                                            "sed: couldn't open file {f}: the filesystem is read-only"
                                        ));
                                    }
                                };
                                break;
                            }
                            _ => break,
                        }
                        self.i += 1;
                    }
                    let groups = if src.is_empty() {
                        self.last_groups
                    } else {
                        let re =
                            compile(&src, self.syntax, fold, multi).map_err(|e| self.placed(&e))?;
                        let groups = re.groups();
                        sub.re = Some(re);
                        self.last_groups = Some(groups);
                        Some(groups)
                    };
                    // A reference past the regex's groups is an error
                    // (`s/(a)/\1/` in a basic regex, whose parentheses are
                    // literal); GNU places it at the end of the command, or,
                    // for an empty regex, at char 0.
                    let past = sub.repl.iter().find_map(|r| match r {
                        Repl::Group(n) if groups.is_some_and(|g| *n >= g) => Some(*n),
                        _ => None,
                    });
                    if let Some(n) = past {
                        let at = if src.is_empty() { 0 } else { self.i };
                        return Err(format!(
                            "sed: -e expression #1, char {at}: invalid reference \\{n} on `s' command's RHS"
                        ));
                    }
                    Kind::Subst(Box::new(sub))
                }
                'y' => {
                    let Some(d) = self.peek() else {
                        return Err(self.err("unterminated `y' command"));
                    };
                    self.i += 1;
                    let a: Vec<char> = unescape_y(&self.delimited(d, false)?);
                    let b: Vec<char> = unescape_y(&self.delimited(d, false)?);
                    if a.len() != b.len() {
                        return Err(self.err("strings for `y' command are different lengths"));
                    }
                    Kind::Translit(a.into_iter().zip(b).collect())
                }
                // Placed at the command itself, already read.
                other => {
                    return Err(format!(
                        "sed: -e expression #1, char {}: unknown command: `{other}'",
                        self.i
                    ));
                }
            };
            cmds.push(Cmd {
                a1,
                a2,
                negate,
                kind,
                active: false,
                end: 0,
            });
            // After a command: blanks, then `;`, a newline, `}` or `#`.
            self.skip_blanks();
            match self.peek() {
                None | Some(';' | '\n' | '}' | '#') => {}
                Some(c) => {
                    // A label ends at white space, and GNU reads the next
                    // command right after it (`:a p`, `b end p`).
                    if !matches!(
                        cmds.last().map(|c| &c.kind),
                        Some(Kind::Block(_) | Kind::Label | Kind::Branch(..))
                    ) {
                        let _ = c;
                        return Err(self.err(
                            if matches!(cmds.last().map(|c| &c.kind), Some(Kind::Subst(_))) {
                                "unknown option to `s'"
                            } else {
                                "extra characters after command"
                            },
                        ));
                    }
                }
            }
        }
        if !open.is_empty() {
            // GNU finds this at the end, and says char 0.
            return Err(err("unmatched `{'"));
        }
        for (at, l) in branches {
            let Some(&(_, target)) = labels.iter().find(|(n, _)| *n == l) else {
                return Err(format!("sed: can't find label for jump to `{l}'"));
            };
            if let Kind::Branch(k, _) = cmds[at].kind {
                cmds[at].kind = Kind::Branch(k, Some(target));
            }
        }
        Ok(cmds)
    }
}

fn unescape_y(s: &str) -> Vec<char> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        match cs.get(i) {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(_) => {
                // GNU's character escapes (`\d0`, `\x61`, `\o142`, `\cA`).
                if let Some((ch, used)) = char_escape(&cs[i..]) {
                    out.push(ch);
                    i += used;
                    continue;
                }
                out.push('\\');
                out.push(cs[i]);
            }
            None => {
                out.push('\\');
                continue;
            }
        }
        i += 1;
    }
    out
}

/// One input line, and whether it ended with a newline.
struct Line {
    text: String,
    nl: bool,
    /// The last line of its file (for `-s`) or of all input.
    last: bool,
    /// With `-s`, the first line of a file: line numbers start again.
    restart: bool,
    /// Whether its file ended with the delimiter.
    file_ends: bool,
}

/// The input, a line at a time: the operands in turn, each document read a
/// piece at a time (a large one is never held whole), one line read ahead
/// so that the last line is known (`$`).
struct Feed {
    operands: std::collections::VecDeque<String>,
    delim: char,
    separate: bool,
    /// Lines still wanted, when the script needs only the first ones.
    wanted: Option<u64>,
    /// The operand being read.
    open: Option<Open>,
    ahead: Option<Line>,
    /// The file of the line last handed out (`F`).
    file: String,
    /// 2 after a file that could not be read, 4 after a directory (which
    /// ends the input), as GNU sed exits.
    status: u8,
}

struct Open {
    name: String,
    window: TextWindow,
    /// Operands follow this one (its last line then gets a newline).
    more_after: bool,
    first: bool,
}

impl Feed {
    /// The next line with its place: `None` at the end of all input.
    fn next(&mut self, cx: &mut Cx<'_>) -> Option<(Line, String)> {
        if self.ahead.is_none() {
            self.ahead = self.read(cx);
        }
        let mut line = self.ahead.take()?;
        let file = self
            .open
            .as_ref()
            .map_or_else(String::new, |o| o.name.clone());
        self.ahead = self.read(cx);
        if self.ahead.is_none() {
            line.last = true;
            // Input that ended at a directory: the line before it keeps
            // its own ending.
            if self.status == 4 {
                line.nl = line.file_ends;
            }
        }
        Some((line, file))
    }

    /// Reads the next line of the input.
    fn read(&mut self, cx: &mut Cx<'_>) -> Option<Line> {
        if self.wanted == Some(0) {
            return None;
        }
        loop {
            if let Some(o) = self.open.as_mut()
                && let Some(line) = o.line(cx, self.delim, self.separate)
            {
                if let Some(w) = self.wanted.as_mut() {
                    *w -= 1;
                }
                return Some(line);
            }
            if self.status == 4 {
                return None;
            }
            let name = self.operands.pop_front()?;
            // A directory is a read error that ends sed (status 4); what
            // came before it is still edited.
            if name != "-" && cx.fs.metadata(&name).is_ok_and(|m| m.is_dir()) {
                cx.err(format_args!("sed: read error on {name}: Is a directory"));
                self.status = 4;
                self.operands.clear();
                return None;
            }
            let window = if name == "-" {
                TextWindow::input(cx.input.clone())
            } else {
                match TextWindow::open(cx.fs, &name) {
                    Ok(w) => w,
                    Err(e) => {
                        cx.err(format_args!("sed: can't read {name}: {}", e.strerror()));
                        self.status = 2;
                        continue;
                    }
                }
            };
            self.open = Some(Open {
                name,
                window,
                more_after: !self.operands.is_empty(),
                first: true,
            });
        }
    }
}

impl Open {
    /// The next line of this operand, reading on as needed.
    fn line(&mut self, cx: &mut Cx<'_>, delim: char, separate: bool) -> Option<Line> {
        loop {
            let w = &mut self.window;
            let rest = &w.text[w.pos..];
            if let Some(k) = rest.find(delim) {
                let text = rest[..k].to_owned();
                w.pos += k + delim.len_utf8();
                // The last line of the file when nothing follows it.
                if w.pos == w.text.len() && !w.complete() {
                    let _ = w.refill(cx.fs);
                }
                let end = w.pos == w.text.len() && w.complete();
                return Some(self.made(text, end, true, separate));
            }
            if !w.complete() {
                if let Err(e) = w.refill(cx.fs) {
                    cx.err(format_args!(
                        "sed: read error on {}: {}",
                        self.name,
                        e.strerror()
                    ));
                    // What was read is all there is.
                    let read = w.text[w.pos..].to_owned();
                    *w = TextWindow::whole(read.as_bytes());
                }
                continue;
            }
            if rest.is_empty() {
                return None;
            }
            let text = rest.to_owned();
            w.pos = w.text.len();
            return Some(self.made(text, true, false, separate));
        }
    }

    fn made(&mut self, text: String, end: bool, ended: bool, separate: bool) -> Line {
        let restart = separate && self.first;
        self.first = false;
        Line {
            text,
            nl: !end || ended || self.more_after,
            last: separate && end,
            restart,
            file_ends: ended,
        }
    }
}

struct Run<'a, 'b> {
    feed: Feed,
    line_no: u64,
    out: Vec<u8>,
    err: Vec<u8>,
    /// The last write lacked its newline (the input's last line had none).
    pending_nl: bool,
    last_re: Option<SedRegex>,
    append: Vec<String>,
    cx: &'a mut Cx<'b>,
    /// Documents read by `R`, line by line.
    r_files: std::collections::HashMap<String, (Vec<String>, usize)>,
}

impl Run<'_, '_> {
    fn emit(&mut self, text: &str, nl: bool) {
        if self.pending_nl {
            self.out.push(b'\n');
            self.pending_nl = false;
        }
        self.out.extend_from_slice(&crate::lossless::encode(text));
        if nl {
            self.out.push(b'\n');
        } else {
            self.pending_nl = true;
        }
    }

    /// A command's output as it is, in its place among the lines.
    fn emit_raw(&mut self, bytes: &[u8]) {
        if self.pending_nl && !bytes.is_empty() {
            self.out.push(b'\n');
            self.pending_nl = false;
        }
        self.out.extend_from_slice(bytes);
    }

    /// What `cmd` prints, less one trailing newline (`e`, `s///e`).
    fn command_output(&mut self, cmd: &str) -> String {
        let (out, _) = self.cx.shell_output(cmd);
        let text = crate::lossless::decode(&out);
        text.strip_suffix('\n').unwrap_or(&text).to_owned()
    }

    fn emit_err(&mut self, text: &str) {
        self.err.extend_from_slice(&crate::lossless::encode(text));
        self.err.push(b'\n');
    }

    fn flush_appends(&mut self) {
        for a in std::mem::take(&mut self.append) {
            self.emit(&a, true);
        }
    }

    fn regex(&mut self, r: &Option<SedRegex>) -> Option<SedRegex> {
        match r {
            Some(r) => {
                self.last_re = Some(r.clone());
                Some(r.clone())
            }
            None => self.last_re.clone(),
        }
    }

    fn matches1(&mut self, a: &Addr, ps: &str, last: bool) -> bool {
        let n = self.line_no;
        match a {
            Addr::Line(k) => n == *k,
            Addr::Last => last,
            Addr::Re(r) => self.regex(r).is_some_and(|re| re.is_match(ps)),
            Addr::Step(first, step) => {
                if *step == 0 {
                    n == *first
                } else {
                    n >= *first && (n - first).is_multiple_of(*step)
                }
            }
            Addr::Zero => false,
        }
    }

    fn selects(&mut self, c: &mut Cmd, ps: &str, last: bool) -> bool {
        let hit = match (&c.a1, &c.a2) {
            (None, _) => true,
            (Some(a), None) => {
                let a = a.clone();
                self.matches1(&a, ps, last)
            }
            (Some(a1), Some(a2)) => {
                let (a1, a2) = (a1.clone(), a2.clone());
                let n = self.line_no;
                if c.active {
                    let ends = match &a2 {
                        Addr2::Line(k) => n >= *k,
                        Addr2::Last => last,
                        Addr2::Re(r) => self.regex(r).is_some_and(|re| re.is_match(ps)),
                        Addr2::Plus(_) | Addr2::Multiple(_) => n >= c.end,
                    };
                    // A line-number end already passed closes the range
                    // before this line.
                    if let Addr2::Line(k) = a2
                        && n > k
                    {
                        c.active = false;
                        return c.negate;
                    }
                    if ends {
                        c.active = false;
                    }
                    true
                } else {
                    let starts = match &a1 {
                        Addr::Zero => n == 1,
                        other => self.matches1(other, ps, last),
                    };
                    if !starts {
                        false
                    } else {
                        c.active = true;
                        match &a2 {
                            Addr2::Line(k) if *k <= n => c.active = false,
                            Addr2::Plus(k) => {
                                c.end = n + k;
                                if *k == 0 {
                                    c.active = false;
                                }
                            }
                            Addr2::Multiple(k) => {
                                c.end = if *k == 0 { n } else { n.div_ceil(*k) * k };
                                if c.end <= n {
                                    c.active = false;
                                }
                            }
                            Addr2::Re(r)
                                if matches!(a1, Addr::Zero)
                                    && self.regex(r).is_some_and(|re| re.is_match(ps)) =>
                            {
                                c.active = false;
                            }
                            Addr2::Last if last => c.active = false,
                            _ => {}
                        }
                        true
                    }
                }
            }
        };
        hit != c.negate
    }

    fn next_line(&mut self) -> Option<(String, bool, bool)> {
        let (l, file) = self.feed.next(self.cx)?;
        self.feed.file = file;
        self.line_no = if l.restart { 1 } else { self.line_no + 1 };
        // What is printed so far goes out in whole buffers, as GNU's
        // standard output reaches a pipe: the output is not held whole.
        self.flush_out();
        Some((l.text, l.nl, l.last))
    }

    /// Writes the whole 4 KiB buffers of what is printed so far.
    fn flush_out(&mut self) {
        const BUFFER: usize = 4096;
        let full = self.out.len() / BUFFER * BUFFER;
        if full == 0 {
            return;
        }
        let mut block: Vec<u8> = self.out.drain(..full).collect();
        if self.feed.delim == '\0' {
            for b in &mut block {
                if *b == b'\n' {
                    *b = 0;
                }
            }
        }
        self.cx.out(&block);
    }
}

fn substitute(sub: &Subst, re: &SedRegex, ps: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    let mut count = 0;
    let mut done = false;
    let mut at = 0;
    let mut prev_end: Option<usize> = None;
    while at <= ps.len() && !done {
        let Some(caps) = re.captures_at(ps, at) else {
            break;
        };
        let Some(Some(m)) = caps.first().cloned() else {
            break;
        };
        if m.start == m.end && prev_end == Some(m.start) {
            // No empty match right after a match.
            match ps[m.start..].chars().next() {
                Some(c) => {
                    at = m.start + c.len_utf8();
                    continue;
                }
                None => break,
            }
        }
        count += 1;
        if count >= sub.nth {
            out.push_str(&ps[last..m.start]);
            expand(&sub.repl, ps, &caps, &mut out);
            last = m.end;
            if !sub.global {
                done = true;
            }
        }
        prev_end = Some(m.end);
        at = if m.start == m.end {
            match ps[m.end..].chars().next() {
                Some(c) => m.end + c.len_utf8(),
                None => ps.len() + 1,
            }
        } else {
            m.end
        };
    }
    if count < sub.nth {
        return None;
    }
    out.push_str(&ps[last.min(ps.len())..]);
    Some(out)
}

fn expand(repl: &[Repl], ps: &str, caps: &Groups, out: &mut String) {
    // Case conversion state: `\U`/`\L` until `\E`; `\u`/`\l` one char.
    let mut mode: Option<char> = None;
    let mut one: Option<char> = None;
    let push = |s: &str, out: &mut String, mode: Option<char>, one: &mut Option<char>| {
        for c in s.chars() {
            let c: String = match (one.take(), mode) {
                (Some('u'), _) => c.to_uppercase().collect(),
                (Some('l'), _) => c.to_lowercase().collect(),
                (_, Some('U')) => c.to_uppercase().collect(),
                (_, Some('L')) => c.to_lowercase().collect(),
                _ => c.to_string(),
            };
            out.push_str(&c);
        }
    };
    for p in repl {
        match p {
            Repl::Lit(s) => push(s, out, mode, &mut one),
            Repl::Group(g) => {
                let s = caps.get(*g).cloned().flatten().map_or("", |r| &ps[r]);
                push(s, out, mode, &mut one);
            }
            Repl::Case(c) => match c {
                'U' | 'L' => mode = Some(*c),
                'E' => {
                    mode = None;
                    one = None;
                }
                c => one = Some(*c),
            },
        }
    }
}

/// `l`: the pattern space with escapes, wrapped at `width`.
fn list(ps: &str, width: usize) -> String {
    let mut s = String::new();
    for &b in crate::lossless::encode(ps).iter() {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'\x07' => s.push_str("\\a"),
            b'\x08' => s.push_str("\\b"),
            b'\x0c' => s.push_str("\\f"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            b'\x0b' => s.push_str("\\v"),
            0x20..=0x7e => s.push(char::from(b)),
            other => s.push_str(&format!("\\{other:03o}")),
        }
    }
    let mut out = String::new();
    if width > 1 {
        let mut col = 0;
        let chars: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            // Keep an escape together.
            let mut piece = chars[i].to_string();
            if chars[i] == '\\' && i + 1 < chars.len() {
                let mut k = i + 1;
                if chars[k].is_ascii_digit() {
                    while k < chars.len() && k < i + 4 && chars[k].is_ascii_digit() {
                        k += 1;
                    }
                } else {
                    k += 1;
                }
                piece = chars[i..k].iter().collect();
                i = k;
            } else {
                i += 1;
            }
            if col + piece.len() > width - 1 {
                out.push_str("\\\n");
                col = 0;
            }
            col += piece.len();
            out.push_str(&piece);
        }
    } else {
        out = s;
    }
    out.push('$');
    out
}

/// Runs the script over the lines; returns the exit code.
fn execute(run: &mut Run<'_, '_>, cmds: &mut [Cmd], quiet: bool) -> i32 {
    let mut hold = String::new();
    // Whether each space ends with a newline when printed (GNU tracks this
    // for a last line without one; `G`, `H` and `x` carry it along).
    let mut hold_nl = true;
    'cycle: while let Some((mut ps, mut nl, mut last)) = run.next_line() {
        if run.cx.stdout_gone() {
            break;
        }
        let mut tflag = false;
        let mut pc = 0;
        // `D` restarts without reading when the pattern space is left.
        loop {
            let mut restart = false;
            while pc < cmds.len() {
                let mut c = cmds[pc].clone();
                let hit = run.selects(&mut c, &ps, last);
                cmds[pc].active = c.active;
                cmds[pc].end = c.end;
                if !hit {
                    if let Kind::Block(after) = c.kind {
                        pc = after;
                        continue;
                    }
                    pc += 1;
                    continue;
                }
                pc += 1;
                match &c.kind {
                    Kind::Block(_) | Kind::EndBlock | Kind::Label => {}
                    Kind::LineNumber => {
                        let n = run.line_no.to_string();
                        run.emit(&n, true);
                    }
                    Kind::Append(t) => run.append.extend(t.clone()),
                    Kind::Insert(t) => {
                        if let Some(t) = t {
                            run.emit(t, true);
                        }
                    }
                    Kind::Change(t) => {
                        // In a range, the text once, at its end.
                        let in_range = c.a2.is_some() && cmds[pc - 1].active;
                        if let Some(t) = t
                            && (!in_range || c.negate)
                        {
                            run.emit(t, true);
                        }
                        run.flush_appends();
                        continue 'cycle;
                    }
                    Kind::Branch(k, target) => {
                        let go = match k {
                            't' => std::mem::take(&mut tflag),
                            'T' => !std::mem::take(&mut tflag),
                            _ => true,
                        };
                        if go {
                            pc = target.unwrap_or(cmds.len());
                        }
                    }
                    Kind::Delete => {
                        run.flush_appends();
                        continue 'cycle;
                    }
                    Kind::DeleteFirst => match ps.find('\n') {
                        Some(k) => {
                            ps = ps[k + 1..].to_owned();
                            run.flush_appends();
                            restart = true;
                            break;
                        }
                        None => {
                            run.flush_appends();
                            continue 'cycle;
                        }
                    },
                    Kind::Get => {
                        ps = hold.clone();
                        nl = hold_nl;
                    }
                    Kind::GetAppend => {
                        ps.push('\n');
                        ps.push_str(&hold);
                        nl = true;
                    }
                    Kind::Hold => {
                        hold = ps.clone();
                        hold_nl = nl;
                    }
                    Kind::HoldAppend => {
                        hold.push('\n');
                        hold.push_str(&ps);
                        hold_nl = true;
                    }
                    Kind::Exchange => {
                        std::mem::swap(&mut ps, &mut hold);
                        std::mem::swap(&mut nl, &mut hold_nl);
                    }
                    Kind::List(w) => {
                        let t = list(&ps, *w);
                        run.emit(&t, true);
                    }
                    Kind::Next => {
                        if !quiet {
                            run.emit(&ps, nl);
                        }
                        run.flush_appends();
                        match run.next_line() {
                            Some((t, n2, l2)) => {
                                ps = t;
                                nl = n2;
                                last = l2;
                            }
                            None => return 0,
                        }
                    }
                    Kind::NextAppend => {
                        run.flush_appends();
                        match run.next_line() {
                            Some((t, n2, l2)) => {
                                ps.push('\n');
                                ps.push_str(&t);
                                nl = n2;
                                last = l2;
                            }
                            None => {
                                // GNU prints the pattern space and ends.
                                if !quiet {
                                    run.emit(&ps, nl);
                                }
                                return 0;
                            }
                        }
                    }
                    Kind::Print => run.emit(&ps.clone(), nl),
                    Kind::PrintFirst => {
                        let first = ps.split('\n').next().unwrap_or("").to_owned();
                        run.emit(&first, true);
                    }
                    Kind::Quit(code, print) => {
                        if *print && !quiet {
                            run.emit(&ps, nl);
                        }
                        if *print {
                            run.flush_appends();
                        }
                        return *code;
                    }
                    Kind::ReadFile(f) => {
                        if let Ok(d) = run.cx.fs.read(f) {
                            let t = crate::lossless::decode(&d);
                            let t = t.strip_suffix('\n').unwrap_or(&t).to_owned();
                            if !d.is_empty() {
                                run.append.push(t);
                            }
                        }
                    }
                    Kind::ReadLine(f) => {
                        if !run.r_files.contains_key(f) {
                            let lines = run.cx.fs.read(f).map_or_else(
                                |_| Vec::new(),
                                |d| {
                                    crate::commands::lf_lines(&crate::lossless::decode(&d))
                                        .map(str::to_owned)
                                        .collect()
                                },
                            );
                            run.r_files.insert(f.clone(), (lines, 0));
                        }
                        if let Some((lines, at)) = run.r_files.get_mut(f)
                            && let Some(l) = lines.get(*at)
                        {
                            let l = l.clone();
                            *at += 1;
                            run.append.push(l);
                        }
                    }
                    Kind::Subst(sub) => {
                        let Some(re) = run.regex(&sub.re) else {
                            run.emit_err("sed: no previous regular expression");
                            return 1;
                        };
                        if let Some(new) = substitute(sub, &re, &ps) {
                            ps = if sub.exec {
                                run.command_output(&new)
                            } else {
                                new
                            };
                            tflag = true;
                            if sub.print {
                                run.emit(&ps.clone(), true);
                            }
                            match sub.write {
                                Some(false) => run.emit(&ps.clone(), true),
                                Some(true) => {
                                    let t = ps.clone();
                                    run.emit_err(&t);
                                }
                                None => {}
                            }
                        }
                    }
                    Kind::Translit(map) => {
                        ps = ps
                            .chars()
                            .map(|c| map.iter().find(|(a, _)| *a == c).map_or(c, |(_, b)| *b))
                            .collect();
                    }
                    Kind::Zap => ps.clear(),
                    Kind::Exec(Some(cmd)) => {
                        let (out, _) = run.cx.shell_output(cmd);
                        run.emit_raw(&out);
                    }
                    Kind::Exec(None) => ps = run.command_output(&ps),
                    Kind::FileName => {
                        let f = if run.feed.file.is_empty() {
                            "-".to_owned()
                        } else {
                            run.feed.file.clone()
                        };
                        run.emit(&f, true);
                    }
                    Kind::Write(to_err) => {
                        if *to_err {
                            let t = ps.clone();
                            run.emit_err(&t);
                        } else {
                            run.emit(&ps.clone(), true);
                        }
                    }
                }
            }
            if restart {
                pc = 0;
                // Without reading a new line; the cycle's end output first.
                if !quiet {
                    // `D` with a newline: no autoprint of the deleted part;
                    // GNU prints nothing here either.
                }
                continue;
            }
            break;
        }
        if !quiet {
            run.emit(&ps, nl);
        }
        run.flush_appends();
        if run.out.len() > 64 << 10 {
            let out = std::mem::take(&mut run.out);
            run.cx.out(&out);
        }
    }
    0
}

/// The last line a script needs, when it names only line numbers (then a
/// document is read only that far).
fn last_needed(cmds: &[Cmd]) -> Option<u64> {
    let mut max = 0;
    for c in cmds {
        match (&c.a1, &c.a2) {
            (Some(Addr::Line(a)), None) => max = max.max(*a),
            (Some(Addr::Line(a)), Some(Addr2::Line(b))) => max = max.max(*a).max(*b),
            _ => return None,
        }
        if c.negate || !matches!(c.kind, Kind::Print | Kind::LineNumber | Kind::Quit(..)) {
            return None;
        }
    }
    // An empty script still opens its input: a missing file is an error.
    (max > 0).then_some(max)
}

/// The arguments without `-i[SUFFIX]` and `--in-place[=SUFFIX]` (whose
/// attached suffix the shared parser would read as more flags), and
/// whether there was one. In a cluster, `i` takes the rest as its suffix:
/// `-ni` is `-n -i`, `-ie` is `-i` with the suffix `e`.
fn in_place_removed(args: &[String]) -> (Vec<String>, bool) {
    let mut kept = Vec::with_capacity(args.len());
    let mut in_place = false;
    let mut value_next = false;
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        if std::mem::take(&mut value_next) || a == "-" || !a.starts_with('-') {
            kept.push(a.clone());
            continue;
        }
        if a == "--" {
            kept.push(a.clone());
            kept.extend(rest.cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if long == "in-place" || long.starts_with("in-place=") {
                in_place = true;
                continue;
            }
            value_next = matches!(long, "expression" | "file" | "line-length");
            kept.push(a.clone());
            continue;
        }
        let mut cluster = String::from("-");
        for (k, c) in a.char_indices().skip(1) {
            match c {
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'f' | 'l' => {
                    cluster.push_str(&a[k..]);
                    value_next = k + 1 == a.len();
                    break;
                }
                _ => cluster.push(c),
            }
        }
        if cluster.len() > 1 {
            kept.push(cluster);
        }
    }
    (kept, in_place)
}

/// `-i`: the script is good, but every edit would replace a file. GNU
/// reads each file, and fails at the first it can (its `panic`, status
/// 4) where it creates the temporary file beside it.
fn in_place(cx: &mut Cx<'_>, operands: &[String]) -> u8 {
    if operands.is_empty() {
        cx.err("sed: no input files");
        return 4;
    }
    let mut status = 0;
    for op in operands {
        match cx.fs.metadata(op) {
            Err(e) => {
                cx.err(format_args!("sed: can't read {op}: {}", e.strerror()));
                status = 2;
            }
            Ok(m) if m.is_dir() => {
                cx.err(format_args!("sed: couldn't edit {op}: not a regular file"));
                return 4;
            }
            Ok(_) => {
                let dir = match op.rfind('/') {
                    Some(0) => "/",
                    Some(k) => &op[..k],
                    None => ".",
                };
                // mkostemp's six random letters.
                const LETTERS: &[u8] =
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
                let mut seed = cx.env.clock_seed();
                let suffix: String = (0..6)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        char::from(LETTERS[(seed % LETTERS.len() as u64) as usize])
                    })
                    .collect();
                let sep = if dir.ends_with('/') { "" } else { "/" };
                cx.err(format_args!(
                    "sed: couldn't open temporary file {dir}{sep}sed{suffix}: Read-only file system"
                ));
                return 4;
            }
        }
    }
    status
}

/// A parse error placed in the script the pieces make, placed as GNU
/// places it: in its `-e` piece (`-e expression #2, char 1`).
fn in_piece(e: &str, starts: &[usize]) -> String {
    const LEAD: &str = "sed: -e expression #1, char ";
    let Some((at, msg)) = e
        .strip_prefix(LEAD)
        .and_then(|rest| rest.split_once(": "))
        .and_then(|(at, msg)| Some((at.parse::<usize>().ok()?, msg)))
    else {
        return e.to_owned();
    };
    // The piece holding the last char read, the first for char 0.
    let k = starts.iter().rposition(|&start| start < at).unwrap_or(0);
    let start = starts.get(k).copied().unwrap_or(0);
    format!(
        "sed: -e expression #{}, char {}: {msg}",
        k + 1,
        at.saturating_sub(start)
    )
}

/// `sed`.
/// Parses `script` as `sed` (or `sed -E`) would, regexes compiled, without
/// running it (for the fuzz target); whether it parsed.
pub(crate) fn check(script: &str, extended: bool) -> bool {
    Parser {
        s: script.chars().collect(),
        i: 0,
        syntax: if extended {
            Syntax::Extended
        } else {
            Syntax::Basic
        },
        fold_default: false,
        last_groups: None,
        joints: Vec::new(),
    }
    .script()
    .is_ok()
}

pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('n', "quiet", "n"),
        flag('\0', "silent", "n"),
        flag('E', "regexp-extended", "E"),
        flag('r', "", "E"),
        value('e', "expression", "e"),
        value('f', "file", "f"),
        flag('s', "separate", "s"),
        flag('u', "unbuffered", "u"),
        flag('z', "null-data", "z"),
        flag('\0', "posix", "posix"),
        flag('\0', "debug", "debug"),
    ];
    let (args, edits_in_place) = in_place_removed(args);
    let p = match options(cx, "sed", &args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut operands = p.operands.clone();
    let mut pieces: Vec<String> = p.values("e").iter().map(|s| (*s).to_owned()).collect();
    for f in p.values("f") {
        // `-f -` reads the script from standard input.
        match cx.read_operand(f) {
            Ok(d) => pieces.push(crate::lossless::decode(&d).into_owned()),
            Err(e) => {
                cx.err(format_args!(
                    "sed: couldn't open file {f}: {}",
                    e.strerror()
                ));
                // GNU's panic status.
                return 4;
            }
        }
    }
    let script = if !pieces.is_empty() {
        pieces.join("\n")
    } else if operands.is_empty() {
        cx.err("Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...");
        return 1;
    } else {
        operands.remove(0)
    };
    let syntax = if p.has("E") {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    // Where each piece starts in the script they make, in chars.
    let starts: Vec<usize> = pieces
        .iter()
        .scan(0, |at, piece| {
            let start = *at;
            *at += piece.chars().count() + 1;
            Some(start)
        })
        .collect();
    let mut parser = Parser {
        s: script.chars().collect(),
        i: 0,
        syntax,
        fold_default: false,
        last_groups: None,
        joints: starts.iter().skip(1).map(|s| s - 1).collect(),
    };
    let mut cmds = match parser.script() {
        Ok(c) => c,
        Err(e) => {
            let e = in_piece(&e, &starts);
            // GNU exits 4 (its `panic`) for a missing label, 1 for a
            // script it cannot read.
            let code = if e.starts_with("sed: can't find label") {
                4
            } else {
                1
            };
            cx.err(e);
            return code;
        }
    };
    if edits_in_place {
        return in_place(cx, &operands);
    }
    let quiet = p.has("n");
    let separate = p.has("s");
    let delim = if p.has("z") { '\0' } else { '\n' };
    if operands.is_empty() {
        operands.push("-".to_owned());
    }
    let stop_after = if quiet && delim == '\n' {
        last_needed(&cmds)
    } else {
        None
    };
    let single = operands.len() == 1;
    let feed = Feed {
        operands: operands.iter().cloned().collect(),
        delim,
        separate,
        // A script that needs only the first lines of one document reads
        // only that far.
        wanted: stop_after.filter(|_| single),
        open: None,
        ahead: None,
        file: String::new(),
        status: 0,
    };
    let status;
    let code = {
        let mut run = Run {
            feed,
            line_no: 0,
            out: Vec::new(),
            err: Vec::new(),
            pending_nl: false,
            last_re: None,
            append: Vec::new(),
            cx,
            r_files: std::collections::HashMap::new(),
        };
        let code = execute(&mut run, &mut cmds, quiet);
        status = run.feed.status;
        let (out, err) = (std::mem::take(&mut run.out), std::mem::take(&mut run.err));
        let mut out = out;
        if delim == '\0' {
            out = out
                .into_iter()
                .map(|b| if b == b'\n' { 0 } else { b })
                .collect();
        }
        run.cx.out(&out);
        if !err.is_empty() {
            let _ = run.cx.err.write_all(&err);
        }
        code
    };
    if status != 0 {
        return status;
    }
    u8::try_from(code.rem_euclid(256)).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(s: &str) -> Res<Vec<Cmd>> {
        Parser {
            s: s.chars().collect(),
            i: 0,
            syntax: Syntax::Basic,
            fold_default: false,
            last_groups: None,
            joints: Vec::new(),
        }
        .script()
    }

    #[test]
    fn scripts_parse() {
        for ok in [
            "s/a/b/e",
            "p",
            "2p",
            "1,3d",
            "$!N",
            "/a/,/b/{s/x/y/g;p}",
            "s/a/b/2g",
            "y/abc/xyz/",
            "1~2p",
            "0,/re/d",
            "/x/,+2d",
            "h;G",
            ":a;N;$!ba;s/\\n/ /g",
            "a hello",
            "3i\\\nline",
            "=",
            "l",
            "q5",
            "s|/|_|g",
            "s/\\(a\\)\\(b\\)/\\2\\1/",
            "/^$/d",
            "s/x/\\U&/",
        ] {
            assert!(script(ok).is_ok(), "{ok}: {:?}", script(ok).err());
        }
        for bad in [
            "k",
            "s/a/b",
            "y/ab/x/",
            "{p",
            "}",
            "b nowhere",
            "w out.txt",
            "0p",
        ] {
            assert!(script(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn substitution_rules() {
        let sub = |re: &str, repl: &str, global: bool, nth: usize, text: &str| {
            let mut p = Parser {
                s: format!("{repl}/").chars().collect(),
                i: 0,
                syntax: Syntax::Extended,
                fold_default: false,
                last_groups: None,
                joints: Vec::new(),
            };
            let s = Subst {
                re: None,
                repl: p.replacement('/').expect("replacement"),
                global,
                nth,
                print: false,
                write: None,
                exec: false,
            };
            let re = compile(re, Syntax::Extended, false, false).expect("regex");
            substitute(&s, &re, text)
        };
        assert_eq!(sub("o", "0", true, 1, "foo").as_deref(), Some("f00"));
        assert_eq!(sub("o", "0", false, 2, "foo").as_deref(), Some("fo0"));
        assert_eq!(sub("x*", "-", true, 1, "abc").as_deref(), Some("-a-b-c-"));
        assert_eq!(
            sub("(a)(b)", "\\2\\1", false, 1, "ab").as_deref(),
            Some("ba")
        );
        assert_eq!(
            sub("[a-z]+", "\\u&", true, 1, "hi yo").as_deref(),
            Some("Hi Yo")
        );
        assert_eq!(sub("z", "y", false, 1, "abc"), None);
    }
}
