//! bc's language: tokens, then a syntax tree of statements and
//! expressions, in GNU bc's grammar (POSIX bc with its extensions: `print`,
//! `else`, `&&`, `||`, `!`, `#` comments, `halt`, `last`, `void`
//! functions, `return` without parentheses).
//!
//! A program is read one input line at a time, as GNU bc reads it: the
//! statements of a line (and of any braces, loops or definitions it opens,
//! which run on over the lines that follow) are parsed whole, then run.
//! A line with a syntax error is reported and dropped, and reading goes on
//! after it.

use std::rc::Rc;

/// How deep statements and expressions may nest: the guest's stack holds a
/// few hundred levels of this parser and of the interpreter, and anything
/// nested deeper is refused rather than trap the sandbox. GNU bc allows
/// more.
const MAX_NESTING: usize = 256;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Num(String),
    Name(String),
    Str(String),
    Op(&'static str),
    Newline,
    Semi,
}

/// A token and the line it ends on.
type Spanned = (Tok, u32);

/// Why a line could not be parsed.
#[derive(Debug)]
pub(super) enum ParseError {
    /// A message for standard error; the rest of the line is dropped.
    Syntax(String),
    /// `quit` was read: bc ends there, running nothing more.
    Quit,
}

pub(super) type PResult<T> = Result<T, ParseError>;

fn syntax<T>(line: u32) -> PResult<T> {
    Err(ParseError::Syntax(format!(
        "(standard_in) {line}: syntax error"
    )))
}

/// The tokens of a program, and the characters that are none (each with
/// the index of the token it came before, and its message): GNU bc
/// reports those and reads on without them.
pub(super) fn tokenize(src: &str) -> (Vec<Spanned>, Vec<(usize, String)>) {
    const OPS: &[&str] = &[
        "==", "!=", "<=", ">=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "^=", "++", "--", "+",
        "-", "*", "/", "%", "^", "<", ">", "=", "!", "(", ")", ",", "[", "]", "{", "}",
    ];
    let cs: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut line = 1u32;
    let mut toks = Vec::new();
    let mut bad = Vec::new();
    while let Some(&c) = cs.get(i) {
        if c == '\\' && cs.get(i + 1) == Some(&'\n') {
            i += 2;
            line += 1;
            continue;
        }
        if c == '/' && cs.get(i + 1) == Some(&'*') {
            i += 2;
            while i < cs.len() && !(cs[i] == '*' && cs.get(i + 1) == Some(&'/')) {
                line += u32::from(cs[i] == '\n');
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == '#' {
            while i < cs.len() && cs[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '\n' {
            toks.push((Tok::Newline, line));
            line += 1;
            i += 1;
            continue;
        }
        if c == ';' {
            toks.push((Tok::Semi, line));
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '"' {
            let start = i + 1;
            i = start;
            while i < cs.len() && cs[i] != '"' {
                line += u32::from(cs[i] == '\n');
                i += 1;
            }
            if i >= cs.len() {
                // An unclosed string is a stray quote; the rest of its line
                // is dropped.
                bad.push((
                    toks.len(),
                    format!("(standard_in) {line}: illegal character: \""),
                ));
                i = start;
                while i < cs.len() && cs[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            toks.push((Tok::Str(cs[start..i].iter().collect()), line));
            i += 1;
            continue;
        }
        // Digits are 0-9 and A-Z (for `ibase` above 10, and clamped to it).
        let digit = |c: &char| c.is_ascii_digit() || c.is_ascii_uppercase() || *c == '.';
        if digit(&c) {
            // A number has one point at most: `1.2.3` is `1.2` and `.3`.
            let start = i;
            let mut point = false;
            while let Some(d) = cs.get(i).filter(|d| digit(d)) {
                if *d == '.' {
                    if point {
                        break;
                    }
                    point = true;
                }
                i += 1;
            }
            let text: String = cs[start..i].iter().collect();
            // A lone `.` is `last`, the value printed last.
            toks.push((
                if text == "." {
                    Tok::Name("last".to_owned())
                } else {
                    Tok::Num(text)
                },
                line,
            ));
            continue;
        }
        if c.is_ascii_lowercase() || c == '_' {
            let start = i;
            while cs
                .get(i)
                .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            {
                i += 1;
            }
            toks.push((Tok::Name(cs[start..i].iter().collect()), line));
            continue;
        }
        let rest: String = cs[i..(i + 2).min(cs.len())].iter().collect();
        match OPS.iter().find(|o| rest.starts_with(**o)) {
            Some(o) => {
                toks.push((Tok::Op(o), line));
                i += o.len();
            }
            None => {
                bad.push((
                    toks.len(),
                    format!("(standard_in) {line}: illegal character: {c}"),
                ));
                i += 1;
            }
        }
    }
    (toks, bad)
}

/// Where a value is stored.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Place {
    Var(String),
    Elem(String, Box<Expr>),
    Scale,
    Ibase,
    Obase,
    Last,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Rel {
    Eq,
    Ne,
    Le,
    Ge,
    Lt,
    Gt,
}

/// An argument of a call: a value, or an array (`a[]`), passed by value.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Arg {
    Value(Expr),
    Array(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expr {
    Num(String),
    Get(Place),
    /// `x = e`, `x += e`, ...: the operator, if any, before the `=`.
    Assign(Place, Option<Bin>, Box<Expr>),
    /// `++x` (true) or `--x` (false).
    Pre(Place, bool),
    /// `x++` (true) or `x--` (false).
    Post(Place, bool),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    /// `a ^ b` (to the right).
    Pow(Box<Expr>, Box<Expr>),
    /// Operators of one level to the left (`1 + 2 - 3`, `2 * 3 / 4`): a
    /// list, not a tree, so `seq -s + 1 100000 | bc` neither nests its
    /// evaluation nor its drop a level a term.
    Chain(Box<Expr>, Vec<(Bin, Expr)>),
    /// Comparisons to the left (`a < b == c`).
    Rel(Box<Expr>, Vec<(Rel, Expr)>),
    /// `a && b && ...`: true if all are, stopping at the first false.
    And(Vec<Expr>),
    /// `a || b || ...`: true if any is, stopping at the first true.
    Or(Vec<Expr>),
    Call(String, Vec<Arg>),
    Length(Box<Expr>),
    Sqrt(Box<Expr>),
    /// `(e)`: its value; an assignment in parentheses is printed.
    Group(Box<Expr>),
    ScaleOf(Box<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum PrintItem {
    Str(String),
    Value(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Stmt {
    /// An expression, and whether its value is printed (not for an
    /// assignment).
    Expr(Expr, bool),
    /// A string on its own: written as it is, with no newline.
    Str(String),
    Print(Vec<PrintItem>),
    Block(Vec<Stmt>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    For(Option<Expr>, Option<Expr>, Option<Expr>, Box<Stmt>),
    Break,
    Continue,
    Return(Option<Expr>),
    Halt,
    Limits,
}

/// A parameter or `auto` name: a value, or an array (`a[]`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Local {
    pub(super) name: String,
    pub(super) array: bool,
}

#[derive(Debug, PartialEq)]
pub(super) struct Func {
    pub(super) params: Vec<Local>,
    pub(super) autos: Vec<Local>,
    pub(super) body: Vec<Stmt>,
    /// `define void f()`: a call prints nothing and has no value.
    pub(super) void: bool,
}

/// What one input line holds.
#[derive(Debug)]
pub(super) enum Item {
    Define(String, Rc<Func>),
    Run(Vec<Stmt>),
}

pub(super) struct Parser<'a> {
    toks: &'a [Spanned],
    pub(super) i: usize,
    depth: usize,
    loops: usize,
    in_function: bool,
}

const KEYWORDS: &[&str] = &[
    "auto", "break", "continue", "define", "else", "for", "halt", "ibase", "if", "last", "length",
    "limits", "obase", "print", "quit", "read", "return", "scale", "sqrt", "void", "warranty",
    "while",
];

impl<'a> Parser<'a> {
    pub(super) fn new(toks: &'a [Spanned]) -> Parser<'a> {
        Parser {
            toks,
            i: 0,
            depth: 0,
            loops: 0,
            in_function: false,
        }
    }

    pub(super) fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|(t, _)| t)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.i + k).map(|(t, _)| t)
    }

    /// The line an error at the current token is reported on: a newline
    /// counts as the line it starts, as GNU bc counts it.
    fn line(&self) -> u32 {
        match self.toks.get(self.i) {
            Some((Tok::Newline, l)) => l + 1,
            Some((_, l)) => *l,
            None => self
                .toks
                .last()
                .map_or(1, |(t, l)| l + u32::from(*t == Tok::Newline)),
        }
    }

    fn error<T>(&self) -> PResult<T> {
        syntax(self.line())
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> PResult<()> {
        if self.eat(op) { Ok(()) } else { self.error() }
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(n)) if n == w)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Whether the last token taken closed a brace: another statement
    /// may follow it directly.
    fn after_brace(&self) -> bool {
        self.i > 0 && self.toks.get(self.i - 1).map(|(t, _)| t) == Some(&Tok::Op("}"))
    }

    fn skip_newlines(&mut self) {
        while self.peek() == Some(&Tok::Newline) {
            self.i += 1;
        }
    }

    /// After a syntax error: drops the rest of the line.
    pub(super) fn recover(&mut self) {
        while let Some(t) = self.peek() {
            let newline = *t == Tok::Newline;
            self.i += 1;
            if newline {
                break;
            }
        }
    }

    fn deeper(&mut self) -> PResult<()> {
        if self.depth >= MAX_NESTING {
            return Err(ParseError::Syntax(format!(
                "bc: the program nests deeper than {MAX_NESTING} levels"
            )));
        }
        self.depth += 1;
        Ok(())
    }

    /// The next input item: a function definition, or a line of
    /// statements. `None` at the end of the input.
    pub(super) fn item(&mut self) -> PResult<Option<Item>> {
        while matches!(self.peek(), Some(Tok::Newline | Tok::Semi)) {
            self.i += 1;
        }
        if self.at_end() {
            return Ok(None);
        }
        if self.eat_word("define") {
            let (name, f) = self.function()?;
            return Ok(Some(Item::Define(name, Rc::new(f))));
        }
        let mut stmts = Vec::new();
        loop {
            let start = self.i;
            if let Some(s) = self.statement()? {
                stmts.push(s);
            }
            match self.peek() {
                Some(Tok::Semi) => self.i += 1,
                Some(Tok::Newline) => {
                    self.i += 1;
                    break;
                }
                None => break,
                // A definition, or another statement, may follow a
                // statement's closing brace.
                Some(Tok::Name(n)) if n == "define" && self.i > start => break,
                Some(_) if self.after_brace() && self.i > start => {}
                Some(_) => return self.error(),
            }
        }
        Ok(Some(Item::Run(stmts)))
    }

    fn function(&mut self) -> PResult<(String, Func)> {
        let void = self.eat_word("void");
        let name = match self.peek() {
            Some(Tok::Name(n)) if !KEYWORDS.contains(&n.as_str()) => n.clone(),
            _ => return self.error(),
        };
        self.i += 1;
        self.expect("(")?;
        let mut params = Vec::new();
        if !self.eat(")") {
            loop {
                params.push(self.local()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.skip_newlines();
        self.expect("{")?;
        self.skip_newlines();
        let mut autos = Vec::new();
        if self.eat_word("auto") {
            loop {
                autos.push(self.local()?);
                if !self.eat(",") {
                    break;
                }
            }
            match self.peek() {
                Some(Tok::Semi | Tok::Newline) => self.i += 1,
                _ => return self.error(),
            }
        }
        self.in_function = true;
        let body = self.block_body();
        self.in_function = false;
        Ok((
            name,
            Func {
                params,
                autos,
                body: body?,
                void,
            },
        ))
    }

    fn local(&mut self) -> PResult<Local> {
        let name = match self.peek() {
            Some(Tok::Name(n)) if !KEYWORDS.contains(&n.as_str()) => n.clone(),
            _ => return self.error(),
        };
        self.i += 1;
        let array = self.eat("[");
        if array {
            self.expect("]")?;
        }
        Ok(Local { name, array })
    }

    /// Statements up to a closing `}`, which is taken.
    fn block_body(&mut self) -> PResult<Vec<Stmt>> {
        let mut stmts = Vec::new();
        loop {
            while matches!(self.peek(), Some(Tok::Newline | Tok::Semi)) {
                self.i += 1;
            }
            if self.eat("}") {
                return Ok(stmts);
            }
            if self.at_end() {
                return self.error();
            }
            let start = self.i;
            if let Some(s) = self.statement()? {
                stmts.push(s);
            }
            match self.peek() {
                Some(Tok::Newline | Tok::Semi | Tok::Op("}")) => {}
                Some(_) if self.after_brace() && self.i > start => {}
                _ => return self.error(),
            }
        }
    }

    fn statement(&mut self) -> PResult<Option<Stmt>> {
        self.deeper()?;
        let s = self.statement_here();
        self.depth -= 1;
        s
    }

    fn statement_here(&mut self) -> PResult<Option<Stmt>> {
        let word = match self.peek() {
            None | Some(Tok::Newline | Tok::Semi | Tok::Op("}")) => return Ok(None),
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.i += 1;
                return Ok(Some(Stmt::Str(s)));
            }
            Some(Tok::Op("{")) => {
                self.i += 1;
                return Ok(Some(Stmt::Block(self.block_body()?)));
            }
            Some(Tok::Name(n)) => n.clone(),
            Some(_) => String::new(),
        };
        match word.as_str() {
            "quit" => Err(ParseError::Quit),
            "halt" => {
                self.i += 1;
                Ok(Some(Stmt::Halt))
            }
            "limits" => {
                self.i += 1;
                Ok(Some(Stmt::Limits))
            }
            "break" | "continue" => {
                if self.loops == 0 {
                    return Err(ParseError::Syntax(format!(
                        "(standard_in) {}: {} outside a for/while",
                        self.line(),
                        if word == "break" { "Break" } else { "Continue" }
                    )));
                }
                self.i += 1;
                Ok(Some(if word == "break" {
                    Stmt::Break
                } else {
                    Stmt::Continue
                }))
            }
            "return" => {
                if !self.in_function {
                    return Err(ParseError::Syntax(format!(
                        "(standard_in) {}: Return outside of a function.",
                        self.line()
                    )));
                }
                self.i += 1;
                let value = match self.peek() {
                    None | Some(Tok::Newline | Tok::Semi | Tok::Op("}")) => None,
                    _ => Some(self.expr()?),
                };
                Ok(Some(Stmt::Return(value)))
            }
            "print" => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if let Some(Tok::Str(s)) = self.peek() {
                        items.push(PrintItem::Str(s.clone()));
                        self.i += 1;
                    } else {
                        items.push(PrintItem::Value(self.expr()?));
                    }
                    if !self.eat(",") {
                        break;
                    }
                }
                Ok(Some(Stmt::Print(items)))
            }
            "if" => {
                self.i += 1;
                let cond = self.condition()?;
                let then = self.body()?;
                let other = if self.eat_word("else") {
                    Some(self.body()?)
                } else {
                    None
                };
                Ok(Some(Stmt::If(cond, then, other)))
            }
            "while" => {
                self.i += 1;
                let cond = self.condition()?;
                self.loops += 1;
                let body = self.body();
                self.loops -= 1;
                Ok(Some(Stmt::While(cond, body?)))
            }
            "for" => {
                self.i += 1;
                self.expect("(")?;
                let mut parts = [None, None, None];
                for (k, part) in parts.iter_mut().enumerate() {
                    let end = if k == 2 { Tok::Op(")") } else { Tok::Semi };
                    if self.peek() != Some(&end) {
                        *part = Some(self.expr()?);
                    }
                    if self.peek() != Some(&end) {
                        return self.error();
                    }
                    self.i += 1;
                }
                self.loops += 1;
                let body = self.body();
                self.loops -= 1;
                let [init, cond, step] = parts;
                Ok(Some(Stmt::For(init, cond, step, body?)))
            }
            "define" | "else" | "auto" => self.error(),
            _ => {
                let e = self.expr()?;
                let shown = !matches!(e, Expr::Assign(..));
                Ok(Some(Stmt::Expr(e, shown)))
            }
        }
    }

    fn condition(&mut self) -> PResult<Expr> {
        self.expect("(")?;
        let e = self.expr()?;
        self.expect(")")?;
        Ok(e)
    }

    /// The statement an `if`, `while` or `for` runs: it may start on the
    /// next line, and may not be empty.
    fn body(&mut self) -> PResult<Box<Stmt>> {
        self.skip_newlines();
        match self.statement()? {
            Some(s) => Ok(Box::new(s)),
            None => self.error(),
        }
    }

    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.deeper()?;
        let e = self.or();
        self.depth -= 1;
        e
    }

    fn or(&mut self) -> PResult<Expr> {
        self.list("||", Self::and, Expr::Or)
    }

    fn and(&mut self) -> PResult<Expr> {
        self.list("&&", Self::not, Expr::And)
    }

    /// Operands of `next` joined by `op`: one alone is itself.
    fn list(
        &mut self,
        op: &str,
        next: fn(&mut Self) -> PResult<Expr>,
        join: fn(Vec<Expr>) -> Expr,
    ) -> PResult<Expr> {
        let mut all = vec![next(self)?];
        while self.eat(op) {
            all.push(next(self)?);
        }
        Ok(match <[Expr; 1]>::try_from(all) {
            Ok([one]) => one,
            Err(all) => join(all),
        })
    }

    fn not(&mut self) -> PResult<Expr> {
        if self.eat("!") {
            self.deeper()?;
            let e = self.not();
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(e?)));
        }
        self.rel()
    }

    fn rel(&mut self) -> PResult<Expr> {
        let first = self.assign()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.peek() {
                Some(Tok::Op("==")) => Rel::Eq,
                Some(Tok::Op("!=")) => Rel::Ne,
                Some(Tok::Op("<=")) => Rel::Le,
                Some(Tok::Op(">=")) => Rel::Ge,
                Some(Tok::Op("<")) => Rel::Lt,
                Some(Tok::Op(">")) => Rel::Gt,
                _ if rest.is_empty() => return Ok(first),
                _ => return Ok(Expr::Rel(Box::new(first), rest)),
            };
            self.i += 1;
            rest.push((op, self.assign()?));
        }
    }

    /// Assignment binds tighter than comparisons and looser than
    /// arithmetic, and to the right: `x = y = 1 + 2`.
    fn assign(&mut self) -> PResult<Expr> {
        let start = self.i;
        if let Some(place) = self.place()? {
            let op = match self.peek() {
                Some(Tok::Op("=")) => Some(None),
                Some(Tok::Op("+=")) => Some(Some(Bin::Add)),
                Some(Tok::Op("-=")) => Some(Some(Bin::Sub)),
                Some(Tok::Op("*=")) => Some(Some(Bin::Mul)),
                Some(Tok::Op("/=")) => Some(Some(Bin::Div)),
                Some(Tok::Op("%=")) => Some(Some(Bin::Rem)),
                Some(Tok::Op("^=")) => Some(Some(Bin::Pow)),
                _ => None,
            };
            if let Some(op) = op {
                self.i += 1;
                self.deeper()?;
                let value = if matches!(self.peek(), Some(Tok::Op("!"))) {
                    self.not()
                } else {
                    self.assign()
                };
                self.depth -= 1;
                return Ok(Expr::Assign(place, op, Box::new(value?)));
            }
            self.i = start;
        }
        self.add()
    }

    /// A place a value can be stored, if one starts here.
    fn place(&mut self) -> PResult<Option<Place>> {
        let Some(Tok::Name(n)) = self.peek() else {
            return Ok(None);
        };
        let n = n.clone();
        let place = match n.as_str() {
            "scale" if self.peek_at(1) != Some(&Tok::Op("(")) => Place::Scale,
            "ibase" => Place::Ibase,
            "obase" => Place::Obase,
            "last" => Place::Last,
            _ if KEYWORDS.contains(&n.as_str()) => return Ok(None),
            _ if self.peek_at(1) == Some(&Tok::Op("(")) => return Ok(None),
            _ if self.peek_at(1) == Some(&Tok::Op("[")) => {
                // `a[]` is an array argument, not an element.
                if self.peek_at(2) == Some(&Tok::Op("]")) {
                    return Ok(None);
                }
                self.i += 2;
                let index = self.expr()?;
                self.expect("]")?;
                return Ok(Some(Place::Elem(n, Box::new(index))));
            }
            _ => Place::Var(n),
        };
        self.i += 1;
        Ok(Some(place))
    }

    fn add(&mut self) -> PResult<Expr> {
        self.chain(&[("+", Bin::Add), ("-", Bin::Sub)], Self::mul)
    }

    fn mul(&mut self) -> PResult<Expr> {
        self.chain(
            &[("*", Bin::Mul), ("/", Bin::Div), ("%", Bin::Rem)],
            Self::pow,
        )
    }

    /// Operands of `next` joined by any of `ops`, to the left.
    fn chain(
        &mut self,
        ops: &[(&str, Bin)],
        next: fn(&mut Self) -> PResult<Expr>,
    ) -> PResult<Expr> {
        let first = next(self)?;
        let mut rest = Vec::new();
        while let Some(&(_, op)) = ops.iter().find(|(o, _)| self.eat(o)) {
            rest.push((op, next(self)?));
        }
        Ok(if rest.is_empty() {
            first
        } else {
            Expr::Chain(Box::new(first), rest)
        })
    }

    fn pow(&mut self) -> PResult<Expr> {
        let base = self.unary()?;
        if self.eat("^") {
            self.deeper()?;
            let e = self.pow();
            self.depth -= 1;
            return Ok(Expr::Pow(Box::new(base), Box::new(e?)));
        }
        Ok(base)
    }

    fn unary(&mut self) -> PResult<Expr> {
        if self.eat("-") {
            self.deeper()?;
            let e = self.unary();
            self.depth -= 1;
            return Ok(Expr::Neg(Box::new(e?)));
        }
        if self.eat("!") {
            self.deeper()?;
            let e = self.unary();
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(e?)));
        }
        for (op, up) in [("++", true), ("--", false)] {
            if self.eat(op) {
                return match self.place()? {
                    Some(p) => Ok(Expr::Pre(p, up)),
                    None => self.error(),
                };
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<Expr> {
        match self.peek().cloned() {
            Some(Tok::Num(n)) => {
                self.i += 1;
                Ok(Expr::Num(n))
            }
            Some(Tok::Op("(")) => {
                self.i += 1;
                let e = self.expr()?;
                self.expect(")")?;
                Ok(Expr::Group(Box::new(e)))
            }
            Some(Tok::Name(n)) => {
                if let builtin @ ("length" | "sqrt" | "scale") = n.as_str()
                    && self.peek_at(1) == Some(&Tok::Op("("))
                {
                    self.i += 2;
                    let e = Box::new(self.expr()?);
                    self.expect(")")?;
                    return Ok(match builtin {
                        "length" => Expr::Length(e),
                        "sqrt" => Expr::Sqrt(e),
                        _ => Expr::ScaleOf(e),
                    });
                }
                if n == "read" {
                    return Err(ParseError::Syntax(
                        "bc: read() is not supported by vfs-sh's bc: the program is its input"
                            .to_owned(),
                    ));
                }
                if self.peek_at(1) == Some(&Tok::Op("(")) && !KEYWORDS.contains(&n.as_str()) {
                    self.i += 2;
                    return Ok(Expr::Call(n, self.args()?));
                }
                let Some(place) = self.place()? else {
                    return self.error();
                };
                for (op, up) in [("++", true), ("--", false)] {
                    if self.eat(op) {
                        return Ok(Expr::Post(place, up));
                    }
                }
                Ok(Expr::Get(place))
            }
            _ => self.error(),
        }
    }

    /// A call's arguments, after its `(`, through its `)`.
    fn args(&mut self) -> PResult<Vec<Arg>> {
        let mut args = Vec::new();
        if self.eat(")") {
            return Ok(args);
        }
        loop {
            match (self.peek(), self.peek_at(1), self.peek_at(2)) {
                (Some(Tok::Name(n)), Some(Tok::Op("[")), Some(Tok::Op("]"))) => {
                    args.push(Arg::Array(n.clone()));
                    self.i += 3;
                }
                _ => args.push(Arg::Value(self.expr()?)),
            }
            if self.eat(")") {
                return Ok(args);
            }
            self.expect(",")?;
        }
    }
}
