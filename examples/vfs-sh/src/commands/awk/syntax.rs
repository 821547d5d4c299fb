//! The awk language: tokens, the syntax tree, and a recursive-descent
//! parser for POSIX awk with the gawk extensions scripts use (`**`,
//! `BEGINFILE`/`ENDFILE`, `length` of an array, `func`, `nextfile`).
//!
//! Names are resolved here: globals and each function's parameters get
//! slots, so the interpreter never hashes a variable name per access.

use std::collections::HashMap;
use std::rc::Rc;

/// How deep expressions and statements may nest.
const MAX_NESTING: u32 = 200;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Regex(String),
    Name(String),
    /// A name directly followed by `(`: a call.
    FuncName(String),
    Builtin(&'static str),
    Kw(&'static str),
    Punct(&'static str),
    Newline,
    Eof,
}

const KEYWORDS: &[&str] = &[
    "BEGIN",
    "END",
    "BEGINFILE",
    "ENDFILE",
    "function",
    "func",
    "if",
    "else",
    "while",
    "for",
    "do",
    "break",
    "continue",
    "next",
    "nextfile",
    "exit",
    "return",
    "delete",
    "switch",
    "case",
    "default",
    "in",
    "getline",
    "print",
    "printf",
];

const BUILTINS: &[&str] = &[
    "length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "tolower", "toupper",
    "int", "sqrt", "exp", "log", "sin", "cos", "atan2", "rand", "srand", "system", "close",
    "fflush", "gensub", "strftime", "systime", "asort", "asorti", "and", "or", "xor", "lshift",
    "rshift", "compl", "strtonum", "mktime", "typeof", "isarray",
];

const PUNCT: &[&str] = &[
    "**=", "&&", "||", "==", "<=", ">=", "!=", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=",
    ">>", "!~", "**", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!",
    ">", "<", "|", "?", ":", "~", "$", "=",
];

/// A variable reference: a global slot or a function's parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Var {
    Global(usize),
    Local(usize),
}

/// Expressions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Num(f64),
    Str(Rc<str>),
    /// A regex literal: matches `$0` in value context.
    Regex(Rc<str>),
    Var(Var),
    Index(Var, Vec<Expr>),
    Field(Box<Expr>),
    /// `(a, b)`: only before `in` or as print's arguments.
    Group(Vec<Expr>),
    Assign(Box<Expr>, Option<&'static str>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Plus(Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Compare(&'static str, Box<Expr>, Box<Expr>),
    Match(bool, Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    In(Vec<Expr>, Var),
    /// `++x`, `x--`: (lvalue, +1/-1, prefix)
    Incr(Box<Expr>, f64, bool),
    Call(usize, Vec<Expr>),
    Builtin(&'static str, Vec<Expr>),
    /// `getline [var] [< file]`
    Getline(Option<Box<Expr>>, Option<Box<Expr>>),
    /// `cmd | getline [var]`
    PipeGetline(Box<Expr>, Option<Box<Expr>>),
}

/// Where `print` output goes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Dest {
    Stdout,
    /// `> file`, `>> file`, `| cmd`: the target and the operator.
    Redirect(&'static str, Expr),
}

/// Statements.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stmt {
    Expr(Expr),
    Print(Vec<Expr>, Dest),
    Printf(Vec<Expr>, Dest),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    Do(Box<Stmt>, Expr),
    For(Option<Expr>, Option<Expr>, Option<Expr>, Box<Stmt>),
    ForIn(Var, Var, Box<Stmt>),
    Block(Vec<Stmt>),
    Next,
    NextFile,
    Exit(Option<Expr>),
    Return(Option<Expr>),
    Break,
    Continue,
    Delete(Var, Option<Vec<Expr>>),
    /// gawk's `switch (e) { case C: ... default: ... }`: each label (`None`
    /// for `default`) and the statements after it, falling through.
    Switch(Expr, Vec<(Option<Expr>, Vec<Stmt>)>),
    /// The source line the statements after it start on, for gawk's
    /// `cmd. line:N:` in a fatal error.
    Line(u32),
}

/// A rule's pattern.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pattern {
    Begin,
    End,
    BeginFile,
    EndFile,
    All,
    Expr(Expr),
    Range(Expr, Expr),
}

/// A rule: pattern and action (`None`: print the record).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rule {
    pub(crate) pattern: Pattern,
    pub(crate) action: Option<Vec<Stmt>>,
    /// The source line the rule starts on.
    pub(crate) line: u32,
}

/// A user function.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Function {
    pub(crate) name: String,
    pub(crate) params: usize,
    pub(crate) body: Vec<Stmt>,
    /// `false` for a name that is called but never defined: gawk parses
    /// such a program and fails only if the call is reached.
    pub(crate) defined: bool,
}

/// A parsed program.
#[derive(Debug, Clone, Default)]
pub(crate) struct Program {
    pub(crate) rules: Vec<Rule>,
    pub(crate) functions: Vec<Function>,
    /// Global names, by slot.
    pub(crate) globals: Vec<String>,
    /// Warnings to print before running (escape sequences).
    pub(crate) warnings: Vec<String>,
}

impl Program {
    /// The slot of a global, if the program names it.
    pub(crate) fn global(&self, name: &str) -> Option<usize> {
        self.globals.iter().position(|g| g == name)
    }
}

/// The special variables, always at these slots.
pub(crate) const SPECIALS: &[&str] = &[
    "NR",
    "NF",
    "FNR",
    "FS",
    "OFS",
    "ORS",
    "RS",
    "FILENAME",
    "SUBSEP",
    "RSTART",
    "RLENGTH",
    "CONVFMT",
    "OFMT",
    "ENVIRON",
    "ARGC",
    "ARGV",
    "IGNORECASE",
    "RT",
    "PROCINFO",
    "FIELDWIDTHS",
    "FPAT",
];

pub(crate) const NR: usize = 0;
pub(crate) const NF: usize = 1;
pub(crate) const FNR: usize = 2;
pub(crate) const FS: usize = 3;
pub(crate) const OFS: usize = 4;
pub(crate) const ORS: usize = 5;
pub(crate) const RS: usize = 6;
pub(crate) const FILENAME: usize = 7;
pub(crate) const SUBSEP: usize = 8;
pub(crate) const RSTART: usize = 9;
pub(crate) const RLENGTH: usize = 10;
pub(crate) const CONVFMT: usize = 11;
pub(crate) const OFMT: usize = 12;
pub(crate) const ENVIRON: usize = 13;
pub(crate) const ARGC: usize = 14;
pub(crate) const ARGV: usize = 15;
pub(crate) const IGNORECASE: usize = 16;
pub(crate) const RT: usize = 17;
pub(crate) const PROCINFO: usize = 18;
pub(crate) const FIELDWIDTHS: usize = 19;
pub(crate) const FPAT: usize = 20;

struct Lexer {
    s: Vec<char>,
    i: usize,
    /// Whether the last token ends an operand (then `/` divides).
    after_operand: bool,
    /// Where the token being read starts.
    start: usize,
    /// gawk's warnings about escape sequences, in source order.
    warnings: Vec<String>,
}

fn err_at(line: &str) -> String {
    format!("awk: syntax error at source line 1: {line}")
}

/// A syntax error as gawk shows it: the source line, then a caret under
/// column `at` of `src` (a character offset) and the message, each after
/// `awk: cmd. line:N:`.
/// One escape sequence in a string, after its backslash: `e` is the
/// character after the backslash and `rest` up to two more. Returns the text
/// it stands for and how many characters of `rest` it used. As gawk does, an
/// unknown escape stands for its character and draws a warning (gawk drops
/// the backslash, so `"\."` is `.`), and `\/` is `/` with the same warning.
pub(crate) fn unescape_one(e: char, rest: &str, mut warn: impl FnMut(String)) -> (String, usize) {
    let plain = |c: char| c.to_string();
    match e {
        'n' => (plain('\n'), 0),
        't' => (plain('\t'), 0),
        'r' => (plain('\r'), 0),
        '\\' => (plain('\\'), 0),
        '"' => (plain('"'), 0),
        'a' => (plain('\x07'), 0),
        'b' => (plain('\x08'), 0),
        'f' => (plain('\x0c'), 0),
        'v' => (plain('\x0b'), 0),
        '\n' => (String::new(), 0),
        '0'..='7' => {
            let mut v = e.to_digit(8).unwrap_or(0);
            let mut used = 0;
            for d in rest.chars().map_while(|c| c.to_digit(8)) {
                v = v * 8 + d;
                used += 1;
            }
            (plain(crate::lossless::byte_char((v & 0xff) as u8)), used)
        }
        'x' if rest.starts_with(|c: char| c.is_ascii_hexdigit()) => {
            let digits: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
            let v = u32::from_str_radix(&digits, 16).unwrap_or(0);
            (
                plain(crate::lossless::byte_char((v & 0xff) as u8)),
                digits.len(),
            )
        }
        other => {
            warn(format!(
                "warning: escape sequence `\\{other}' treated as plain `{other}'"
            ));
            (plain(other), 0)
        }
    }
}

fn located(src: &[char], at: usize, msg: &str) -> String {
    let at = at.min(src.len());
    let line_start = src[..at]
        .iter()
        .rposition(|&c| c == '\n')
        .map_or(0, |k| k + 1);
    let line_end = src[at..]
        .iter()
        .position(|&c| c == '\n')
        .map_or(src.len(), |k| at + k);
    let line_no = 1 + src[..line_start].iter().filter(|&&c| c == '\n').count();
    let text: String = src[line_start..line_end].iter().collect();
    let caret = " ".repeat(at - line_start);
    format!("awk: cmd. line:{line_no}: {text}\nawk: cmd. line:{line_no}: {caret}^ {msg}")
}

impl Lexer {
    fn next_tok(&mut self) -> Result<Tok, String> {
        loop {
            self.start = self.i;
            match self.s.get(self.i) {
                Some(' ' | '\t' | '\r') => self.i += 1,
                Some('\\') if self.s.get(self.i + 1) == Some(&'\n') => self.i += 2,
                Some('\\') if self.s.get(self.i + 1) == Some(&'\r') => self.i += 3,
                Some('#') => {
                    while self.s.get(self.i).is_some_and(|&c| c != '\n') {
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
        let Some(&c) = self.s.get(self.i) else {
            return Ok(Tok::Eof);
        };
        let tok = if c == '\n' {
            self.i += 1;
            Tok::Newline
        } else if c == '"' {
            self.i += 1;
            Tok::Str(self.string()?)
        } else if c == '/' && !self.after_operand {
            self.i += 1;
            Tok::Regex(self.regex()?)
        } else if c.is_ascii_digit()
            || (c == '.' && self.s.get(self.i + 1).is_some_and(char::is_ascii_digit))
        {
            Tok::Num(self.number())
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = self.i;
            while self
                .s
                .get(self.i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                self.i += 1;
            }
            let name: String = self.s[start..self.i].iter().collect();
            if let Some(k) = KEYWORDS.iter().find(|k| **k == name) {
                Tok::Kw(k)
            } else if let Some(b) = BUILTINS.iter().find(|b| **b == name) {
                Tok::Builtin(b)
            } else if self.s.get(self.i) == Some(&'(') {
                Tok::FuncName(name)
            } else {
                Tok::Name(name)
            }
        } else {
            let rest: String = self.s[self.i..(self.i + 3).min(self.s.len())]
                .iter()
                .collect();
            match PUNCT.iter().find(|p| rest.starts_with(**p)) {
                Some(p) => {
                    self.i += p.chars().count();
                    Tok::Punct(p)
                }
                // gawk reads `@` as the start of `@name()`: the error is
                // what follows it.
                None if c == '@' => return Err(located(&self.s, self.i + 1, "syntax error")),
                None => {
                    return Err(located(
                        &self.s,
                        self.i,
                        &format!("invalid char '{c}' in expression"),
                    ));
                }
            }
        };
        self.after_operand = matches!(
            tok,
            Tok::Num(_) | Tok::Str(_) | Tok::Regex(_) | Tok::Name(_) | Tok::Builtin(_)
        ) || matches!(tok, Tok::Punct(")" | "]" | "$" | "++" | "--"))
            || tok == Tok::Kw("getline");
        // `$` followed by `/`? Rare; `a++ / 2` divides.
        if tok == Tok::Punct("$") {
            self.after_operand = false;
        }
        Ok(tok)
    }

    fn number(&mut self) -> f64 {
        let start = self.i;
        if self.s.get(self.i) == Some(&'0')
            && matches!(self.s.get(self.i + 1), Some('x' | 'X'))
            && self.s.get(self.i + 2).is_some_and(char::is_ascii_hexdigit)
        {
            self.i += 2;
            let hs = self.i;
            while self.s.get(self.i).is_some_and(char::is_ascii_hexdigit) {
                self.i += 1;
            }
            let h: String = self.s[hs..self.i].iter().collect();
            return i64::from_str_radix(&h, 16).map_or(0.0, |v| v as f64);
        }
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_digit() || *c == '.')
        {
            self.i += 1;
        }
        if matches!(self.s.get(self.i), Some('e' | 'E')) {
            let save = self.i;
            self.i += 1;
            if matches!(self.s.get(self.i), Some('+' | '-')) {
                self.i += 1;
            }
            if self.s.get(self.i).is_some_and(char::is_ascii_digit) {
                while self.s.get(self.i).is_some_and(char::is_ascii_digit) {
                    self.i += 1;
                }
            } else {
                self.i = save;
            }
        }
        let text: String = self.s[start..self.i].iter().collect();
        // gawk reads a constant with a leading 0 and only octal digits as
        // octal (`010` is 8; `018` and `010.5` stay decimal).
        if text.len() > 1
            && text.starts_with('0')
            && text.bytes().all(|b| (b'0'..=b'7').contains(&b))
        {
            return i64::from_str_radix(&text[1..], 8).map_or(0.0, |v| v as f64);
        }
        super::value::leading_number(&text)
    }

    fn string(&mut self) -> Result<String, String> {
        let mut out = String::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err(located(&self.s, self.start, "unterminated string"));
            };
            self.i += 1;
            match c {
                '"' => return Ok(crate::lossless::normalize(&out).into_owned()),
                '\n' => return Err(located(&self.s, self.start, "unterminated string")),
                '\\' => {
                    let Some(&e) = self.s.get(self.i) else {
                        out.push('\\');
                        continue;
                    };
                    self.i += 1;
                    let line = 1 + self.s[..self.i].iter().filter(|&&c| c == '\n').count();
                    let line = if e == '\n' { line - 1 } else { line };
                    let rest: String = self.s[self.i..].iter().take(2).collect();
                    let (text, used) = unescape_one(e, &rest, |w| {
                        self.warnings.push(format!("awk: cmd. line:{line}: {w}"));
                    });
                    self.i += used;
                    out.push_str(&text);
                }
                c => out.push(c),
            }
        }
    }

    fn regex(&mut self) -> Result<String, String> {
        let mut out = String::new();
        let mut in_class = false;
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err(located(&self.s, self.start + 1, "unterminated regexp"));
            };
            self.i += 1;
            match c {
                '\n' => return Err(located(&self.s, self.start + 1, "unterminated regexp")),
                '\\' => {
                    if let Some(&n) = self.s.get(self.i) {
                        self.i += 1;
                        match n {
                            '/' => out.push('/'),
                            '"' => out.push('"'),
                            'n' => out.push('\n'),
                            't' => out.push('\t'),
                            'r' => out.push('\r'),
                            'f' => out.push('\x0c'),
                            'v' => out.push('\x0b'),
                            'a' => out.push('\x07'),
                            _ => {
                                out.push('\\');
                                out.push(n);
                            }
                        }
                    }
                }
                '[' if !in_class => {
                    in_class = true;
                    out.push(c);
                    // `[]...]` and `[^]...]`: a leading `]` is literal.
                    if self.s.get(self.i) == Some(&'^') {
                        out.push('^');
                        self.i += 1;
                    }
                    if self.s.get(self.i) == Some(&']') {
                        out.push(']');
                        self.i += 1;
                    }
                }
                '[' if in_class && self.s.get(self.i) == Some(&':') => {
                    // `[:alpha:]` inside a class.
                    out.push('[');
                    while let Some(&n) = self.s.get(self.i) {
                        out.push(n);
                        self.i += 1;
                        if n == ']' {
                            break;
                        }
                    }
                }
                ']' if in_class => {
                    in_class = false;
                    out.push(c);
                }
                '/' if !in_class => return Ok(out),
                c => out.push(c),
            }
        }
    }
}

/// Names in scope while parsing: globals, and the current function's
/// parameters.
struct Scope {
    globals: Vec<String>,
    locals: Option<Vec<String>>,
    functions: HashMap<String, usize>,
}

impl Scope {
    fn var(&mut self, name: &str) -> Var {
        if let Some(l) = &self.locals
            && let Some(k) = l.iter().position(|n| n == name)
        {
            return Var::Local(k);
        }
        match self.globals.iter().position(|g| g == name) {
            Some(k) => Var::Global(k),
            None => {
                self.globals.push(name.to_owned());
                Var::Global(self.globals.len() - 1)
            }
        }
    }
}

struct Parser {
    toks: Vec<Tok>,
    /// The source line of each token.
    lines: Vec<u32>,
    /// Where each token starts in `src`.
    starts: Vec<usize>,
    src: Vec<char>,
    pos: usize,
    scope: Scope,
    depth: u32,
}

type Res<T> = Result<T, String>;

/// Parses a program's text.
pub(crate) fn parse(src: &str) -> Res<Program> {
    let mut lx = Lexer {
        s: src.chars().collect(),
        i: 0,
        after_operand: false,
        start: 0,
        warnings: Vec::new(),
    };
    let mut toks = Vec::new();
    let mut lines = Vec::new();
    let mut starts = Vec::new();
    let (mut line, mut seen) = (1u32, 0usize);
    loop {
        let t = lx.next_tok()?;
        starts.push(lx.start);
        // The line a token ends on (a newline token ends its line).
        let upto = lx.i.min(lx.s.len());
        line += lx.s[seen..upto].iter().filter(|c| **c == '\n').count() as u32;
        seen = upto;
        let end = t == Tok::Eof;
        lines.push(if t == Tok::Newline { line - 1 } else { line });
        toks.push(t);
        if end {
            break;
        }
    }
    // Function names first, so calls before definitions resolve.
    let mut functions = HashMap::new();
    let mut k = 0;
    for w in toks.windows(2) {
        if matches!(w[0], Tok::Kw("function" | "func"))
            && let Tok::FuncName(n) | Tok::Name(n) = &w[1]
        {
            functions.entry(n.clone()).or_insert_with(|| {
                k += 1;
                k - 1
            });
        }
    }
    let mut p = Parser {
        toks,
        lines,
        starts,
        src: lx.s.clone(),
        pos: 0,
        scope: Scope {
            globals: SPECIALS.iter().map(|s| (*s).to_owned()).collect(),
            locals: None,
            functions,
        },
        depth: 0,
    };
    let mut prog = Program {
        warnings: std::mem::take(&mut lx.warnings),
        ..Program::default()
    };
    let mut funcs: Vec<Option<Function>> = vec![None; p.scope.functions.len()];
    loop {
        p.skip_terms();
        if p.peek() == &Tok::Eof {
            break;
        }
        if matches!(p.peek(), Tok::Kw("function" | "func")) {
            p.pos += 1;
            let name = match p.next() {
                Tok::FuncName(n) | Tok::Name(n) => n,
                _ => {
                    p.pos -= 1;
                    return Err(p.unexpected());
                }
            };
            p.expect("(")?;
            let mut params = Vec::new();
            while p.peek() != &Tok::Punct(")") {
                match p.next() {
                    Tok::Name(n) => params.push(n),
                    _ => {
                        p.pos -= 1;
                        return Err(p.unexpected());
                    }
                }
                p.skip_newlines();
                if p.peek() == &Tok::Punct(",") {
                    p.pos += 1;
                    p.skip_newlines();
                }
            }
            p.pos += 1;
            p.skip_newlines();
            p.scope.locals = Some(params.clone());
            let body = p.block()?;
            p.scope.locals = None;
            let slot = p.scope.functions[&name];
            funcs[slot] = Some(Function {
                name,
                params: params.len(),
                body,
                defined: true,
            });
            continue;
        }
        let line = p.line();
        let pattern = match p.peek() {
            Tok::Kw("BEGIN") => {
                p.pos += 1;
                Pattern::Begin
            }
            Tok::Kw("END") => {
                p.pos += 1;
                Pattern::End
            }
            Tok::Kw("BEGINFILE") => {
                p.pos += 1;
                Pattern::BeginFile
            }
            Tok::Kw("ENDFILE") => {
                p.pos += 1;
                Pattern::EndFile
            }
            Tok::Punct("{") => Pattern::All,
            _ => {
                let a = p.expr(false)?;
                if p.peek() == &Tok::Punct(",") {
                    p.pos += 1;
                    p.skip_newlines();
                    let b = p.expr(false)?;
                    Pattern::Range(a, b)
                } else {
                    Pattern::Expr(a)
                }
            }
        };
        let action = if p.peek() == &Tok::Punct("{") {
            Some(p.block()?)
        } else {
            if matches!(
                pattern,
                Pattern::Begin | Pattern::End | Pattern::BeginFile | Pattern::EndFile
            ) {
                let which = match pattern {
                    Pattern::Begin => "BEGIN",
                    Pattern::End => "END",
                    Pattern::BeginFile => "BEGINFILE",
                    _ => "ENDFILE",
                };
                return Err(format!(
                    "awk: cmd. line:{line}: {which} blocks must have an action part"
                ));
            }
            None
        };
        prog.rules.push(Rule {
            pattern,
            action,
            line,
        });
    }
    // The names called but never defined, by slot.
    let mut names = vec![String::new(); p.scope.functions.len()];
    for (name, &slot) in &p.scope.functions {
        names[slot].clone_from(name);
    }
    funcs.resize(names.len(), None);
    prog.functions = funcs
        .into_iter()
        .zip(names)
        .map(|(f, name)| {
            f.unwrap_or(Function {
                name,
                params: usize::MAX,
                body: Vec::new(),
                defined: false,
            })
        })
        .collect();
    prog.globals = p.scope.globals;
    Ok(prog)
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).unwrap_or(&Tok::Eof)
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    /// gawk's report of the token the parse cannot take: under it, or at
    /// the end of its line for a newline or the end of the program.
    fn unexpected(&self) -> String {
        let at = self.starts.get(self.pos).copied().unwrap_or(self.src.len());
        match self.peek() {
            // gawk has read the newline, and counts its line as the next.
            Tok::Newline => located(&self.src, at, "unexpected newline or end of string").replacen(
                &format!("cmd. line:{}:", self.line()),
                &format!("cmd. line:{}:", self.line() + 1),
                2,
            ),
            Tok::Eof => located(&self.src, at, "unexpected newline or end of string"),
            _ => located(&self.src, at, "syntax error"),
        }
    }

    fn expect(&mut self, p: &'static str) -> Res<()> {
        if self.peek() == &Tok::Punct(p) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn skip_newlines(&mut self) {
        while self.peek() == &Tok::Newline {
            self.pos += 1;
        }
    }

    fn skip_terms(&mut self) {
        while matches!(self.peek(), Tok::Newline | Tok::Punct(";")) {
            self.pos += 1;
        }
    }

    fn nest(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err("awk: the program nests too deeply".to_owned());
        }
        Ok(())
    }

    /// The source line of the next token.
    fn line(&self) -> u32 {
        self.lines.get(self.pos).copied().unwrap_or(1)
    }

    fn block(&mut self) -> Res<Vec<Stmt>> {
        self.expect("{")?;
        self.nest()?;
        let mut stmts = Vec::new();
        let mut last_line = 0;
        loop {
            self.skip_terms();
            if self.peek() == &Tok::Punct("}") {
                self.pos += 1;
                break;
            }
            if self.peek() == &Tok::Eof {
                return Err(self.unexpected());
            }
            let line = self.line();
            if line != last_line {
                stmts.push(Stmt::Line(line));
                last_line = line;
            }
            stmts.push(self.stmt()?);
        }
        self.depth -= 1;
        Ok(stmts)
    }

    /// Ends a simple statement: `;`, a newline, or before `}`.
    fn end_simple(&mut self) -> Res<()> {
        match self.peek() {
            Tok::Punct(";") | Tok::Newline => {
                self.pos += 1;
                Ok(())
            }
            Tok::Punct("}") | Tok::Eof => Ok(()),
            _ => Err(self.unexpected()),
        }
    }

    fn simple_or_block(&mut self) -> Res<Stmt> {
        self.skip_newlines();
        if self.peek() == &Tok::Punct(";") {
            self.pos += 1;
            return Ok(Stmt::Block(Vec::new()));
        }
        self.stmt()
    }

    fn stmt(&mut self) -> Res<Stmt> {
        self.nest()?;
        let s = self.stmt_inner();
        self.depth -= 1;
        s
    }

    fn stmt_inner(&mut self) -> Res<Stmt> {
        match self.peek().clone() {
            Tok::Punct("{") => Ok(Stmt::Block(self.block()?)),
            Tok::Kw("if") => {
                self.pos += 1;
                self.expect("(")?;
                let c = self.expr(false)?;
                self.expect(")")?;
                let then = self.simple_or_block()?;
                // `else` may follow newlines or a `;`.
                let save = self.pos;
                self.skip_terms();
                if self.peek() == &Tok::Kw("else") {
                    self.pos += 1;
                    let other = self.simple_or_block()?;
                    Ok(Stmt::If(c, Box::new(then), Some(Box::new(other))))
                } else {
                    self.pos = save;
                    Ok(Stmt::If(c, Box::new(then), None))
                }
            }
            Tok::Kw("switch") => {
                self.pos += 1;
                self.expect("(")?;
                let subject = self.expr(false)?;
                self.expect(")")?;
                self.skip_terms();
                self.expect("{")?;
                self.nest()?;
                let mut arms: Vec<(Option<Expr>, Vec<Stmt>)> = Vec::new();
                loop {
                    self.skip_terms();
                    match self.peek().clone() {
                        Tok::Punct("}") => {
                            self.pos += 1;
                            break;
                        }
                        Tok::Kw("case") => {
                            self.pos += 1;
                            // A constant: a number (maybe negative), a
                            // string or a regex.
                            let label = match self.next() {
                                Tok::Num(n) => Expr::Num(n),
                                Tok::Punct("-") => match self.next() {
                                    Tok::Num(n) => Expr::Num(-n),
                                    _ => return Err(self.unexpected()),
                                },
                                Tok::Str(s) => Expr::Str(s.into()),
                                Tok::Regex(r) => Expr::Regex(r.into()),
                                _ => return Err(self.unexpected()),
                            };
                            self.expect(":")?;
                            arms.push((Some(label), Vec::new()));
                        }
                        Tok::Kw("default") => {
                            self.pos += 1;
                            self.expect(":")?;
                            arms.push((None, Vec::new()));
                        }
                        Tok::Eof => return Err(self.unexpected()),
                        _ => {
                            let stmt = self.stmt()?;
                            match arms.last_mut() {
                                Some((_, body)) => body.push(stmt),
                                None => return Err(self.unexpected()),
                            }
                        }
                    }
                }
                self.depth -= 1;
                Ok(Stmt::Switch(subject, arms))
            }
            Tok::Kw("while") => {
                self.pos += 1;
                self.expect("(")?;
                let c = self.expr(false)?;
                self.expect(")")?;
                if self.peek() == &Tok::Punct(";") {
                    self.pos += 1;
                    return Ok(Stmt::While(c, Box::new(Stmt::Block(Vec::new()))));
                }
                let body = self.simple_or_block()?;
                Ok(Stmt::While(c, Box::new(body)))
            }
            Tok::Kw("do") => {
                self.pos += 1;
                let body = self.simple_or_block()?;
                self.skip_terms();
                if self.next() != Tok::Kw("while") {
                    return Err(self.unexpected());
                }
                self.expect("(")?;
                let c = self.expr(false)?;
                self.expect(")")?;
                self.end_simple()?;
                Ok(Stmt::Do(Box::new(body), c))
            }
            Tok::Kw("for") => {
                self.pos += 1;
                self.expect("(")?;
                // `for (k in a)`
                if let (Tok::Name(k), Tok::Kw("in"), Tok::Name(a), Tok::Punct(")")) = (
                    self.peek().clone(),
                    self.toks.get(self.pos + 1).cloned().unwrap_or(Tok::Eof),
                    self.toks.get(self.pos + 2).cloned().unwrap_or(Tok::Eof),
                    self.toks.get(self.pos + 3).cloned().unwrap_or(Tok::Eof),
                ) {
                    self.pos += 4;
                    let kv = self.scope.var(&k);
                    let av = self.scope.var(&a);
                    let body = self.simple_or_block()?;
                    return Ok(Stmt::ForIn(kv, av, Box::new(body)));
                }
                let init = if self.peek() == &Tok::Punct(";") {
                    None
                } else {
                    Some(self.expr(false)?)
                };
                self.expect(";")?;
                self.skip_newlines();
                let cond = if self.peek() == &Tok::Punct(";") {
                    None
                } else {
                    Some(self.expr(false)?)
                };
                self.expect(";")?;
                self.skip_newlines();
                let step = if self.peek() == &Tok::Punct(")") {
                    None
                } else {
                    Some(self.expr(false)?)
                };
                self.expect(")")?;
                if self.peek() == &Tok::Punct(";") {
                    self.pos += 1;
                    return Ok(Stmt::For(
                        init,
                        cond,
                        step,
                        Box::new(Stmt::Block(Vec::new())),
                    ));
                }
                let body = self.simple_or_block()?;
                Ok(Stmt::For(init, cond, step, Box::new(body)))
            }
            Tok::Punct(";") => {
                self.pos += 1;
                Ok(Stmt::Block(Vec::new()))
            }
            _ => {
                let s = self.simple_stmt()?;
                self.end_simple()?;
                Ok(s)
            }
        }
    }

    fn simple_stmt(&mut self) -> Res<Stmt> {
        match self.peek().clone() {
            Tok::Kw(k @ ("print" | "printf")) => {
                self.pos += 1;
                let mut args = Vec::new();
                if !matches!(
                    self.peek(),
                    Tok::Punct(";" | "}" | ">" | ">>" | "|") | Tok::Newline | Tok::Eof
                ) {
                    args.push(self.expr(true)?);
                    while self.peek() == &Tok::Punct(",") {
                        self.pos += 1;
                        self.skip_newlines();
                        args.push(self.expr(true)?);
                    }
                }
                if let [Expr::Group(items)] = args.as_slice() {
                    args = items.clone();
                }
                let dest = match self.peek() {
                    Tok::Punct(op @ (">" | ">>" | "|")) => {
                        let op: &'static str = op;
                        self.pos += 1;
                        let target = self.concat(true)?;
                        Dest::Redirect(op, target)
                    }
                    _ => Dest::Stdout,
                };
                if k == "print" {
                    Ok(Stmt::Print(args, dest))
                } else {
                    if args.is_empty() {
                        return Err(err_at("printf: no format"));
                    }
                    Ok(Stmt::Printf(args, dest))
                }
            }
            Tok::Kw("next") => {
                self.pos += 1;
                Ok(Stmt::Next)
            }
            Tok::Kw("nextfile") => {
                self.pos += 1;
                Ok(Stmt::NextFile)
            }
            Tok::Kw("break") => {
                self.pos += 1;
                Ok(Stmt::Break)
            }
            Tok::Kw("continue") => {
                self.pos += 1;
                Ok(Stmt::Continue)
            }
            Tok::Kw(k @ ("exit" | "return")) => {
                self.pos += 1;
                let e = if matches!(self.peek(), Tok::Punct(";" | "}") | Tok::Newline | Tok::Eof) {
                    None
                } else {
                    Some(self.expr(false)?)
                };
                Ok(if k == "exit" {
                    Stmt::Exit(e)
                } else {
                    Stmt::Return(e)
                })
            }
            Tok::Kw("delete") => {
                self.pos += 1;
                let name = match self.next() {
                    Tok::Name(n) => n,
                    _ => return Err(self.unexpected()),
                };
                let v = self.scope.var(&name);
                if self.peek() == &Tok::Punct("[") {
                    self.pos += 1;
                    let idx = self.expr_list("]")?;
                    Ok(Stmt::Delete(v, Some(idx)))
                } else {
                    Ok(Stmt::Delete(v, None))
                }
            }
            _ => Ok(Stmt::Expr(self.expr(false)?)),
        }
    }

    fn expr_list(&mut self, close: &'static str) -> Res<Vec<Expr>> {
        let mut items = Vec::new();
        self.skip_newlines();
        if self.peek() == &Tok::Punct(close) {
            self.pos += 1;
            return Ok(items);
        }
        loop {
            items.push(self.expr(false)?);
            self.skip_newlines();
            match self.next() {
                Tok::Punct(",") => self.skip_newlines(),
                Tok::Punct(c) if c == close => return Ok(items),
                _ => {
                    self.pos -= 1;
                    return Err(self.unexpected());
                }
            }
        }
    }

    /// An expression; `no_gt`: in print's arguments, where `>` redirects.
    fn expr(&mut self, no_gt: bool) -> Res<Expr> {
        self.nest()?;
        let e = self.ternary(no_gt);
        self.depth -= 1;
        e
    }

    fn ternary(&mut self, no_gt: bool) -> Res<Expr> {
        let c = self.or(no_gt)?;
        if self.peek() == &Tok::Punct("?") {
            self.pos += 1;
            self.skip_newlines();
            let a = self.ternary(no_gt)?;
            self.skip_newlines();
            self.expect(":")?;
            self.skip_newlines();
            let b = self.ternary(no_gt)?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        if let Tok::Punct(op @ ("=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^=" | "**=")) =
            self.peek().clone()
            && is_lvalue(&c)
        {
            self.pos += 1;
            self.skip_newlines();
            let rhs = self.ternary(no_gt)?;
            let op = match op {
                "=" => None,
                "+=" => Some("+"),
                "-=" => Some("-"),
                "*=" => Some("*"),
                "/=" => Some("/"),
                "%=" => Some("%"),
                _ => Some("^"),
            };
            return Ok(Expr::Assign(Box::new(c), op, Box::new(rhs)));
        }
        Ok(c)
    }

    fn or(&mut self, no_gt: bool) -> Res<Expr> {
        let mut l = self.and(no_gt)?;
        while self.peek() == &Tok::Punct("||") {
            self.pos += 1;
            self.skip_newlines();
            let r = self.and(no_gt)?;
            l = Expr::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and(&mut self, no_gt: bool) -> Res<Expr> {
        let mut l = self.in_expr(no_gt)?;
        while self.peek() == &Tok::Punct("&&") {
            self.pos += 1;
            self.skip_newlines();
            let r = self.in_expr(no_gt)?;
            l = Expr::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn in_expr(&mut self, no_gt: bool) -> Res<Expr> {
        let mut l = self.matching(no_gt)?;
        while self.peek() == &Tok::Kw("in") {
            self.pos += 1;
            let name = match self.next() {
                Tok::Name(n) => n,
                _ => return Err(self.unexpected()),
            };
            let v = self.scope.var(&name);
            let keys = match l {
                Expr::Group(items) => items,
                other => vec![other],
            };
            l = Expr::In(keys, v);
        }
        Ok(l)
    }

    fn matching(&mut self, no_gt: bool) -> Res<Expr> {
        let mut l = self.relational(no_gt)?;
        loop {
            let neg = match self.peek() {
                Tok::Punct("~") => false,
                Tok::Punct("!~") => true,
                _ => return Ok(l),
            };
            self.pos += 1;
            let r = self.relational(no_gt)?;
            l = Expr::Match(neg, Box::new(l), Box::new(r));
        }
    }

    fn relational(&mut self, no_gt: bool) -> Res<Expr> {
        let l = self.concat(no_gt)?;
        let op = match self.peek() {
            Tok::Punct(op @ ("<" | "<=" | "!=" | "==" | ">=")) => *op,
            Tok::Punct(">") if !no_gt => ">",
            _ => return Ok(l),
        };
        self.pos += 1;
        let r = self.concat(no_gt)?;
        Ok(Expr::Compare(op, Box::new(l), Box::new(r)))
    }

    /// Whether the next token can start an operand of a concatenation.
    fn starts_operand(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Num(_)
                | Tok::Str(_)
                | Tok::Name(_)
                | Tok::FuncName(_)
                | Tok::Builtin(_)
                | Tok::Regex(_)
                | Tok::Punct("$" | "(" | "++" | "--")
        )
    }

    fn concat(&mut self, no_gt: bool) -> Res<Expr> {
        let mut l = self.additive(no_gt)?;
        loop {
            // `x | getline`
            if self.peek() == &Tok::Punct("|")
                && self.toks.get(self.pos + 1) == Some(&Tok::Kw("getline"))
            {
                self.pos += 2;
                let var = if matches!(self.peek(), Tok::Name(_) | Tok::Punct("$")) {
                    Some(Box::new(self.primary(no_gt)?))
                } else {
                    None
                };
                l = Expr::PipeGetline(Box::new(l), var);
                continue;
            }
            if !self.starts_operand() {
                return Ok(l);
            }
            let r = self.additive(no_gt)?;
            l = Expr::Concat(Box::new(l), Box::new(r));
        }
    }

    fn additive(&mut self, no_gt: bool) -> Res<Expr> {
        let mut l = self.multiplicative(no_gt)?;
        loop {
            let op = match self.peek() {
                Tok::Punct("+") => "+",
                Tok::Punct("-") => "-",
                _ => return Ok(l),
            };
            self.pos += 1;
            let r = self.multiplicative(no_gt)?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }

    fn multiplicative(&mut self, no_gt: bool) -> Res<Expr> {
        let mut l = self.unary(no_gt)?;
        loop {
            let op = match self.peek() {
                Tok::Punct("*") => "*",
                Tok::Punct("/") => "/",
                Tok::Punct("%") => "%",
                _ => return Ok(l),
            };
            self.pos += 1;
            let r = self.unary(no_gt)?;
            // gawk folds a constant zero divisor while it parses: an
            // error before anything runs.
            if op != "*" && r == Expr::Num(0.0) {
                let line = self
                    .lines
                    .get(self.pos.saturating_sub(1))
                    .copied()
                    .unwrap_or(1);
                let what = if op == "%" { " in `%'" } else { "" };
                return Err(format!(
                    "awk: cmd. line:{line}: error: division by zero attempted{what}"
                ));
            }
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }

    fn unary(&mut self, no_gt: bool) -> Res<Expr> {
        match self.peek() {
            Tok::Punct("!") => {
                self.pos += 1;
                self.nest()?;
                let e = self.unary(no_gt);
                self.depth -= 1;
                Ok(Expr::Not(Box::new(e?)))
            }
            Tok::Punct("-") => {
                self.pos += 1;
                self.nest()?;
                let e = self.unary(no_gt);
                self.depth -= 1;
                Ok(Expr::Neg(Box::new(e?)))
            }
            Tok::Punct("+") => {
                self.pos += 1;
                self.nest()?;
                let e = self.unary(no_gt);
                self.depth -= 1;
                Ok(Expr::Plus(Box::new(e?)))
            }
            _ => self.power(no_gt),
        }
    }

    fn power(&mut self, no_gt: bool) -> Res<Expr> {
        let base = self.postfix(no_gt)?;
        if matches!(self.peek(), Tok::Punct("^" | "**")) {
            self.pos += 1;
            // Right-associative, and `2^-1` is allowed.
            self.nest()?;
            let e = self.unary_power(no_gt);
            self.depth -= 1;
            return Ok(Expr::Binary("^", Box::new(base), Box::new(e?)));
        }
        Ok(base)
    }

    fn unary_power(&mut self, no_gt: bool) -> Res<Expr> {
        match self.peek() {
            Tok::Punct("-") => {
                self.pos += 1;
                Ok(Expr::Neg(Box::new(self.unary_power(no_gt)?)))
            }
            Tok::Punct("+") => {
                self.pos += 1;
                self.unary_power(no_gt)
            }
            _ => self.power(no_gt),
        }
    }

    fn postfix(&mut self, no_gt: bool) -> Res<Expr> {
        if let Tok::Punct(op @ ("++" | "--")) = self.peek() {
            let d = if *op == "++" { 1.0 } else { -1.0 };
            self.pos += 1;
            let e = self.postfix(no_gt)?;
            if !is_lvalue(&e) {
                return Err(self.unexpected());
            }
            return Ok(Expr::Incr(Box::new(e), d, true));
        }
        let e = self.primary(no_gt)?;
        if is_lvalue(&e)
            && let Tok::Punct(op @ ("++" | "--")) = self.peek()
        {
            let d = if *op == "++" { 1.0 } else { -1.0 };
            self.pos += 1;
            return Ok(Expr::Incr(Box::new(e), d, false));
        }
        Ok(e)
    }

    fn primary(&mut self, no_gt: bool) -> Res<Expr> {
        match self.next() {
            Tok::Num(n) => Ok(Expr::Num(n)),
            Tok::Str(s) => Ok(Expr::Str(s.into())),
            Tok::Regex(r) => Ok(Expr::Regex(r.into())),
            Tok::Punct("$") => {
                // `$` binds tighter than everything but grouping and `++`.
                let e = match self.peek() {
                    Tok::Punct("++" | "--") => self.postfix(no_gt)?,
                    Tok::Punct("-") => {
                        self.pos += 1;
                        Expr::Neg(Box::new(self.primary(no_gt)?))
                    }
                    _ => self.primary(no_gt)?,
                };
                Ok(Expr::Field(Box::new(e)))
            }
            Tok::Punct("(") => {
                self.skip_newlines();
                let first = self.expr(false)?;
                self.skip_newlines();
                if self.peek() == &Tok::Punct(",") {
                    let mut items = vec![first];
                    while self.peek() == &Tok::Punct(",") {
                        self.pos += 1;
                        self.skip_newlines();
                        items.push(self.expr(false)?);
                        self.skip_newlines();
                    }
                    self.expect(")")?;
                    return Ok(Expr::Group(items));
                }
                self.expect(")")?;
                Ok(first)
            }
            Tok::Punct("-") => Ok(Expr::Neg(Box::new(self.unary(no_gt)?))),
            Tok::Punct("!") => Ok(Expr::Not(Box::new(self.unary(no_gt)?))),
            Tok::Name(n) => {
                let v = self.scope.var(&n);
                if self.peek() == &Tok::Punct("[") {
                    self.pos += 1;
                    let idx = self.expr_list("]")?;
                    if idx.is_empty() {
                        return Err(self.unexpected());
                    }
                    return Ok(Expr::Index(v, idx));
                }
                Ok(Expr::Var(v))
            }
            Tok::FuncName(n) => {
                self.expect("(")?;
                let args = self.expr_list(")")?;
                let next = self.scope.functions.len();
                let slot = *self.scope.functions.entry(n).or_insert(next);
                Ok(Expr::Call(slot, args))
            }
            Tok::Builtin(b) => {
                if self.peek() == &Tok::Punct("(") {
                    self.pos += 1;
                    let args = self.expr_list(")")?;
                    Ok(Expr::Builtin(b, args))
                } else if b == "length" {
                    Ok(Expr::Builtin(b, Vec::new()))
                } else {
                    Err(self.unexpected())
                }
            }
            Tok::Kw("getline") => {
                let var = if matches!(self.peek(), Tok::Name(_) | Tok::Punct("$")) {
                    Some(Box::new(self.postfix(true)?))
                } else {
                    None
                };
                let file = if self.peek() == &Tok::Punct("<") {
                    self.pos += 1;
                    Some(Box::new(self.postfix(true)?))
                } else {
                    None
                };
                Ok(Expr::Getline(var, file))
            }
            _ => {
                self.pos -= 1;
                Err(self.unexpected())
            }
        }
    }
}

fn is_lvalue(e: &Expr) -> bool {
    matches!(e, Expr::Var(_) | Expr::Index(..) | Expr::Field(_))
}
