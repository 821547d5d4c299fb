//! The shell language: the syntax tree and the parser that builds it.
//!
//! The parser reads the script's characters directly (a shell's tokens
//! depend on where they stand: `}` is a word or a keyword, `<(` a process
//! substitution or a redirection, `((` arithmetic or two subshells), by
//! recursive descent over the POSIX grammar plus the bash forms scripts
//! lean on: `[[ ]]`, `(( ))`, `for ((;;))`, `function`, `$'...'`, here-
//! strings, `<(...)`, `|&`, `&>`, arrays. Quotes are kept in the tree (as
//! [`Part`]s), since expansion needs to know what was quoted. Nothing runs
//! here; a malformed script is one error with bash's wording.

use std::rc::Rc;

/// How deep constructs may nest (`$($($(...)))`, `((((...))))`): past it
/// the script is refused rather than risking the guest's stack.
const MAX_NESTING: u32 = 100;

/// A piece of a word.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// Unquoted text: globs are active, never split.
    Lit(String),
    /// Quoted text (`'...'`, `\x`, `$'...'`): literal.
    Quoted(String),
    /// `"..."`: its parts expand, but are neither split nor globbed.
    Double(Vec<Part>),
    /// `$NAME`, `${...}`.
    Param(Box<Param>),
    /// `$(...)` or `` `...` ``.
    Command(Rc<List>),
    /// `$((...))`: the expression's text, expanded before it is evaluated.
    Arith(Vec<Part>),
    /// `<(...)`: a path that reads as the list's output.
    ProcessIn(Rc<List>),
    /// An unquoted `~` at the start of a word (or after `=`/`:` in an
    /// assignment), with the user name after it, if any.
    Tilde(String),
    /// The elements of a declaration builtin's `NAME=(...)` argument
    /// (`local a=("$@")`): each expands as in an array assignment (split,
    /// globbed, `"$@"` a field per element), and all the fields go into
    /// the one field the builtin receives, each after an [`ELEMENT`] mark.
    Elements(Vec<Word>),
}

/// A word: parts that expand into zero or more fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Word {
    pub(crate) parts: Vec<Part>,
}

impl Word {
    fn lit(s: &str) -> Word {
        Word {
            parts: vec![Part::Lit(s.to_owned())],
        }
    }

    /// The word's text when it is one unquoted literal (for keywords).
    pub(crate) fn as_lit(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Lit(s)] => Some(s),
            _ => None,
        }
    }
}

/// A parameter expansion.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Param {
    /// A name, a digit string, or one of `? # @ * $ ! - 0`.
    pub(crate) name: String,
    /// `${a[i]}`: the subscript (`@` and `*` included).
    pub(crate) index: Option<Word>,
    /// `${!name}`: indirection (or, with `[@]`, the array's keys).
    pub(crate) indirect: bool,
    pub(crate) op: ParamOp,
}

/// What a `${...}` does to the value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ParamOp {
    /// The value.
    Get,
    /// `${#x}`
    Length,
    /// `${x:-w}` (`colon`: also when empty)
    Default(bool, Word),
    /// `${x:=w}`
    Assign(bool, Word),
    /// `${x:?w}`
    Error(bool, Word),
    /// `${x:+w}`
    Alternative(bool, Word),
    /// `${x#p}`, `${x##p}` (`true`: longest)
    TrimPrefix(bool, Word),
    /// `${x%p}`, `${x%%p}`
    TrimSuffix(bool, Word),
    /// `${x/p/r}`, `${x//p/r}`, `${x/#p/r}`, `${x/%p/r}`
    Replace(ReplaceMode, Word, Word),
    /// `${x:offset}`, `${x:offset:length}` (arithmetic text)
    Slice(Word, Option<Word>),
    /// `${x^p}`, `${x^^p}`, `${x,p}`, `${x,,p}`, `${x~p}`, `${x~~p}`: the
    /// first (or, doubled, every) character that matches the pattern
    /// (any character when there is none) changed to upper case, lower
    /// case, or the other case.
    Case(CaseOp, bool, Word),
    /// `${x@U}` and the other `@` operators: `U u L Q E K a`.
    Transform(char),
    /// `${!prefix*}`, `${!prefix@}`: the names of the variables that start
    /// with `prefix` (`true`: `*`, joined in double quotes).
    Names(bool),
    /// In `sh` (dash), any of bash's own forms (`${x:1}`, `${x/a/b}`,
    /// `${a[0]}`, `${!x}`...): `Bad substitution` when it is expanded. In
    /// bash, a form it does not know (`${/x}`), the name holding its text.
    Bad,
}

/// What `${x^}`, `${x,}` and `${x~}` do to a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseOp {
    Upper,
    Lower,
    Toggle,
}

/// Which matches of `${x/p/r}` are replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplaceMode {
    First,
    All,
    Prefix,
    Suffix,
}

/// A redirection operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirOp {
    /// `<`
    In,
    /// `>`, `>|`
    Out,
    /// `>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>&N` (the target is a word: a number, `-` or a file name)
    Dup,
    /// `<&N`, `<&-`: an input descriptor duplicated or closed.
    DupIn,
    /// `&>`, `&>>`: standard output and error together.
    OutErr,
    /// `<<`, `<<-` (the body is the target word) and `<<<`.
    HereDoc,
    HereString,
}

/// One redirection: `[fd]op target`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Redir {
    pub(crate) fd: Option<u32>,
    pub(crate) op: RedirOp,
    pub(crate) target: Word,
}

/// A command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Command {
    /// Assignments, words and redirections.
    Simple {
        assigns: Vec<Assign>,
        words: Vec<Word>,
        redirs: Vec<Redir>,
    },
    /// A compound command with the redirections after it.
    Compound(Compound, Vec<Redir>),
    /// `name() compound` or `function name compound`.
    Function(String, Rc<Command>),
}

/// `NAME=value`, `NAME+=value`, `NAME=(a b)`, `NAME[i]=value`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Assign {
    pub(crate) name: String,
    /// The subscript of `NAME[...]=`: parsed, and as written (`$k` of
    /// `a[$k]=`, for messages).
    pub(crate) index: Option<(Word, String)>,
    pub(crate) append: bool,
    pub(crate) value: AssignValue,
}

/// The right-hand side of an assignment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AssignValue {
    Scalar(Word),
    Array(Vec<Word>),
}

/// The compound commands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Compound {
    /// `{ list; }`
    Group(List),
    /// `( list )`
    Subshell(List),
    /// `if c; then b; [elif c; then b;]... [else b;] fi`
    If(Vec<(List, List)>, Option<List>),
    /// `for NAME [in WORDS]; do body; done` (`None`: `"$@"`)
    For(String, Option<Vec<Word>>, List),
    /// `for ((init; cond; step)); do body; done`
    ArithFor(Word, Word, Word, List),
    /// `select NAME [in WORDS]; do body; done`: a menu on standard error,
    /// the choices read from standard input.
    Select(String, Option<Vec<Word>>, List),
    /// `while c; do b; done`, or `until` (`true`).
    While(List, List, bool),
    /// `case WORD in (PATTERN|...) LIST ;; ... esac`
    Case(Word, Vec<CaseArm>),
    /// `[[ expression ]]`
    Cond(Cond),
    /// `(( expression ))`
    Arith(Word),
}

/// One arm of a `case`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseArm {
    pub(crate) patterns: Vec<Word>,
    pub(crate) body: List,
    /// How the arm ends.
    pub(crate) next: CaseNext,
}

/// `;;` stops, `;&` runs the next body, `;;&` tests the next patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseNext {
    Stop,
    FallThrough,
    TestNext,
}

/// A `[[ ]]` expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cond {
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    /// `-f WORD` and the other unary tests.
    Unary(String, Word),
    /// `A == B`, `A =~ B`, `A -lt B`...
    Binary(String, Word, Word),
    /// A lone word: true when not empty.
    Word(Word),
}

/// Commands joined by `|` (or `|&`), optionally negated with `!`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pipeline {
    pub(crate) bang: bool,
    /// `time` before it: report the time it took on standard error
    /// (`true`: `time -p`, POSIX's format).
    pub(crate) time: Option<bool>,
    pub(crate) commands: Vec<Command>,
    /// `|&` after command `i`: its standard error goes down the pipe too.
    pub(crate) with_stderr: Vec<bool>,
    /// The line of the script it starts on (from 1), for `$LINENO` and
    /// the shell's messages.
    pub(crate) line: u32,
}

/// How a pipeline joins the one before it in an and-or list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conn {
    And,
    Or,
}

/// `p1 && p2 || p3`: left-associative, equal precedence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AndOr {
    pub(crate) first: Pipeline,
    pub(crate) rest: Vec<(Conn, Pipeline)>,
    /// Ended by `&`: a background job (run to its end before the next
    /// command, in a subshell, as a job bash would wait for).
    pub(crate) background: bool,
}

/// A sequence of and-or lists (joined by `;` or newlines).
pub(crate) type List = Vec<AndOr>;

/// Reserved words that end a list.
const TERMINATORS: &[&str] = &[
    "then", "elif", "else", "fi", "do", "done", "esac", "}", ";;", ";&", ";;&", ")",
];

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')'
    )
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `s` is a shell variable name.
pub(crate) fn is_name(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next().is_some_and(is_name_start) && cs.all(is_name_char)
}

/// What ends the parts of a word being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Until {
    /// An unquoted metacharacter (or, in `[[ ]]`, also nothing more).
    Word,
    /// The closing `"`.
    DoubleQuote,
    /// The `}` of a `${...}`; `dq` when inside double quotes; `pattern`
    /// for a pattern or a replacement (`${x#p}`, `${x/p/r}`, `${x^p}`),
    /// where, inside double quotes too, quotes and backslashes quote as
    /// they do outside them (`"${x#"$y"}"`, `"${x%'c'}"`, `"${x#a\*}"`).
    /// In the other words (`"${x:-'a'}"`) a single quote is a character.
    Brace { dq: bool, pattern: bool },
    /// The `/` or `}` of `${x/pattern/...}`.
    Slash { dq: bool },
    /// The `:` or `}` of `${x:offset:...}`.
    Colon,
    /// The end of the text (a here-document body, arithmetic).
    End,
    /// The end of an array subscript's text: quotes are removed, as bash
    /// does (`m["a b"]=1` is the key `a b`), and blanks are kept.
    Subscript,
}

/// The parser: the script's characters and where it is in them.
struct Parser {
    s: Vec<char>,
    i: usize,
    depth: u32,
    /// The POSIX language of `sh` (Debian's dash): no `[[ ]]`, `(( ))`,
    /// arrays, `$'...'`, brace expansion, `<<<`, `<(...)`, `&>` or `|&`.
    posix: bool,
    /// Whether the error being returned is an unexpected token or an
    /// error inside `[[ ]]`, inside `$(...)` or `<(...)`, which bash 5.2
    /// reports with status 127.
    in_substitution: bool,
    /// Whether the error is inside `NAME=( ... )`: bash exits 1 for it.
    in_array: bool,
    /// The last position whose line was asked for, and that line: the
    /// parser moves forward, so lines are counted from there.
    line_at: (usize, u32),
    /// Where the quote, `$(` or `[` that the text ends inside was opened:
    /// bash names that line when it meets the end looking for its match.
    opened: Option<usize>,
    /// The number of the text's first line (see [`parse_lines_from`]).
    first_line: u32,
}

type Res<T> = Result<T, String>;

const UNEXPECTED_TOKEN: &str = "vfs-sh: syntax error near unexpected token";

fn unexpected(tok: &str) -> String {
    format!("{UNEXPECTED_TOKEN} `{tok}'")
}

/// What starts an error inside `[[ ]]`, which bash words its own way,
/// without repeating the line, and which ends it with the last command's
/// status (0 if it succeeded).
const COND_ERROR: &str = "vfs-sh: \u{1}";

/// An error inside `[[ ]]` (see [`COND_ERROR`]); bash says nothing at all
/// for some (`[[ ]]`, `[[ a && ]]`): `msg` is empty then.
fn cond_error(msg: &str) -> String {
    format!("{COND_ERROR}{msg}")
}

/// A line of a script that does not parse.
#[derive(Debug)]
pub(crate) struct LineError {
    /// What bash says of it, without the lead that names where
    /// (`syntax error near unexpected token `fi'`); dash's whole message
    /// (`sh: 1: Syntax error: "fi" unexpected`) in `sh`.
    pub(crate) msg: String,
    /// The line of the text it is on, from 1.
    pub(crate) line: u32,
    /// The line's text, which bash repeats after an unexpected token.
    pub(crate) echo: Option<String>,
    /// The status the shell ends with: 2, or 127 for an unexpected token
    /// inside `$(...)` or `<(...)` (bash 5.2 ends `echo $(fi)` with 127).
    /// `None` for a quote left open to the end of the text, which ends
    /// bash with the last command's status if it failed, else
    /// `otherwise`.
    pub(crate) status: Option<u8>,
    /// The status a `None` status ends with after a command that
    /// succeeded: 2, or 0 for an error inside `[[ ]]` (bash 5.2's).
    pub(crate) otherwise: u8,
}

const UNEXPECTED_END: &str = "vfs-sh: syntax error: unexpected end of file";

const UNCLOSED_BRACE: &str = "vfs-sh: unexpected EOF while looking for matching `}'";

/// A syntax error in dash's words (`sh: 1: Syntax error: "(" unexpected`).
fn posix_unexpected(tok: &str) -> String {
    format!("sh: 1: Syntax error: \"{tok}\" unexpected")
}

/// Parses a whole script.
pub(crate) fn parse(src: &str) -> Res<List> {
    parse_as(src, false)
}

/// Parses a whole script as bash does or, with `posix`, as `sh` (dash)
/// does.
pub(crate) fn parse_as(src: &str, posix: bool) -> Res<List> {
    let mut p = Parser::new(src, posix);
    let list = p.list()?;
    p.skip_space(true);
    if let Some(tok) = p.peek_token() {
        return Err(unexpected(&tok));
    }
    Ok(list)
}

/// Parses a script a line at a time, as bash reads one before it runs
/// it: the lines before the first that does not parse, and that line's
/// error. A line is the commands up to a newline outside any compound
/// command, so `echo a; fi` fails whole, and in `echo a` + newline +
/// `fi` the first line stands.
pub(crate) fn parse_lines(src: &str, posix: bool) -> (Vec<List>, Option<LineError>) {
    parse_lines_from(src, posix, 1)
}

/// [`parse_lines`] of text whose first line is line `first` of what
/// holds it (a backquoted command's text).
fn parse_lines_from(src: &str, posix: bool, first: u32) -> (Vec<List>, Option<LineError>) {
    let mut p = Parser::new(src, posix);
    p.first_line = first;
    p.line_at = (0, first);
    let mut all = Vec::new();
    loop {
        p.skip_space(true);
        if p.peek().is_none() {
            return (all, None);
        }
        let msg = match p.line() {
            Ok(line) if !line.is_empty() => {
                all.push(line);
                continue;
            }
            // Nothing parsed: a word no command can start with.
            Ok(_) => {
                let tok = p.peek_token().unwrap_or_default();
                if posix {
                    posix_unexpected(&tok)
                } else {
                    unexpected(&tok)
                }
            }
            Err(e) => e,
        };
        let open_quote = !posix
            && ["`''", "`\"'", "``'"]
                .iter()
                .any(|q| msg.ends_with(&format!("looking for matching {q}")));
        let cond = msg.strip_prefix(COND_ERROR).map(str::to_owned);
        let status = if p.in_substitution {
            Some(127)
        } else if p.in_array {
            Some(1)
        } else if open_quote || cond.is_some() {
            None
        } else {
            Some(2)
        };
        let lines = u32::try_from(src.lines().count()).unwrap_or(u32::MAX);
        let (line, echo) = if posix {
            // dash names the line it stands on, the last at the end.
            p.i = p.i.min(p.s.len().saturating_sub(1));
            (p.line_number(), None)
        } else if msg == UNEXPECTED_END || (msg.ends_with("matching `)'") && !p.in_array) {
            // bash has read past the last line when it meets the end.
            (lines.saturating_add(first), None)
        } else {
            if let Some(open) = p.opened.filter(|_| msg.contains("looking for matching")) {
                p.i = open;
            }
            let line = p.line_number();
            let echo = msg.starts_with(UNEXPECTED_TOKEN).then(|| {
                let n = usize::try_from(line - first).unwrap_or(usize::MAX);
                src.split('\n').nth(n).unwrap_or_default().to_owned()
            });
            (line, echo)
        };
        let msg = if posix {
            match msg.strip_prefix("sh: 1: ") {
                Some(rest) => rest.to_owned(),
                None if msg == UNEXPECTED_END => "Syntax error: end of file unexpected".to_owned(),
                None if msg.ends_with("matching `\"'") || msg.ends_with("matching `''") => {
                    "Syntax error: Unterminated quoted string".to_owned()
                }
                None if msg.ends_with("matching `}'") => "Syntax error: Missing '}'".to_owned(),
                None => match msg
                    .strip_prefix(UNEXPECTED_TOKEN)
                    .and_then(|t| t.strip_prefix(" `")?.strip_suffix('\''))
                {
                    Some("newline") => "Syntax error: newline unexpected".to_owned(),
                    Some(tok) => format!("Syntax error: \"{tok}\" unexpected"),
                    None => msg,
                },
            }
        } else {
            msg
        };
        let msg = match (&cond, msg.strip_prefix(crate::exec::SHELL)) {
            (Some(said), _) => said.clone(),
            (None, Some(rest)) => rest.to_owned(),
            (None, None) => msg,
        };
        return (
            all,
            Some(LineError {
                msg,
                line,
                echo,
                status,
                otherwise: if cond.is_some() { 0 } else { 2 },
            }),
        );
    }
}

impl LineError {
    /// The error as bash prints it, each line led by `lead` for the line
    /// it names: `bash: -c: line 2: ` (see [`Lead`]).
    pub(crate) fn report(&self, lead: &Lead<'_>) -> String {
        if self.msg.is_empty() {
            // An error bash says nothing of (see [`cond_error`]).
            return String::new();
        }
        let at = lead.at(self.line);
        match &self.echo {
            Some(text) => format!("{at}{}\n{at}`{text}'", self.msg),
            None => format!("{at}{}", self.msg),
        }
    }
}

/// What names a syntax error's line, as bash words it for each way text
/// comes to be parsed.
pub(crate) enum Lead<'a> {
    /// A command string, `bash -c` (named by its `$0`): `bash: -c: line N: `.
    String(&'a str),
    /// A script file run or sourced: `FILE: line N: `.
    File(&'a str),
    /// Text parsed as the shell runs (`eval`, a backquoted command): bash
    /// counts its lines on from the line the shell is on, so the first
    /// is `line`: `bash: eval: line N: `.
    Within {
        name: &'a str,
        what: &'a str,
        line: u32,
    },
    /// `sh` (dash, named by its `$0`): `sh: N: `.
    Dash(&'a str),
}

impl Lead<'_> {
    fn at(&self, line: u32) -> String {
        match self {
            Lead::String(name) => format!("{name}: -c: line {line}: "),
            Lead::File(name) => format!("{name}: line {line}: "),
            Lead::Within {
                name,
                what,
                line: first,
            } => format!("{name}: {what}: line {}: ", first.saturating_add(line - 1)),
            Lead::Dash(name) => format!("{name}: {line}: "),
        }
    }
}

/// Parses text as the inside of double quotes without the quotes (a
/// here-document body, an arithmetic expression): `$` expansions and
/// backquotes, backslash before `$`, `` ` ``, `\` and newline.
pub(crate) fn parse_expanding_text(src: &str, heredoc: bool) -> Res<Word> {
    let mut p = Parser::new(src, false);
    let parts = p.parts(Until::End, heredoc)?;
    Ok(Word { parts })
}

/// Parses the text of an array subscript (`a[...]`, `${a[...]}`): expanded,
/// its quotes removed, its blanks kept.
fn parse_subscript_text(src: &str) -> Res<Word> {
    let mut p = Parser::new(src, false);
    let parts = p.parts(Until::Subscript, false)?;
    Ok(Word { parts })
}

/// Parses one word as a full shell word (quotes and all): for `eval`-like
/// reparsing of brace-expanded text.
fn parse_word_text(src: &str) -> Res<Word> {
    let mut p = Parser::new(src, false);
    let parts = p.parts(Until::Word, false)?;
    if p.i < p.s.len() {
        return Err(unexpected(&p.s[p.i..].iter().collect::<String>()));
    }
    Ok(Word { parts })
}

impl Parser {
    fn new(src: &str, posix: bool) -> Parser {
        Parser {
            s: src.chars().collect(),
            i: 0,
            depth: 0,
            posix,
            in_substitution: false,
            in_array: false,
            line_at: (0, 1),
            opened: None,
            first_line: 1,
        }
    }

    /// The line (from 1) the parser stands on.
    fn line_number(&mut self) -> u32 {
        let (from, line) = if self.i >= self.line_at.0 {
            self.line_at
        } else {
            (0, self.first_line)
        };
        let newlines = self.s[from..self.i].iter().filter(|&&c| c == '\n').count();
        let line = line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        self.line_at = (self.i, line);
        line
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    fn starts(&self, pat: &str) -> bool {
        (self.i..)
            .zip(pat.chars())
            .all(|(k, c)| self.s.get(k) == Some(&c))
    }

    fn nest(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!(
                "vfs-sh: the script nests deeper than {MAX_NESTING} levels"
            ));
        }
        Ok(())
    }

    /// Skips blanks, line continuations and comments; newlines too when
    /// `newlines`.
    fn skip_space(&mut self, newlines: bool) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.i += 1,
                Some('\n') if newlines => self.i += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.i += 2,
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// The next token's text, for error messages and keyword checks
    /// (without consuming it).
    fn peek_token(&self) -> Option<String> {
        let c = self.peek()?;
        for op in [
            ";;&", "&&", "||", "|&", ";;", ";&", "<<<", "<<-", "<<", ">>", "&>>", "&>", "<&", ">&",
            "<>", ">|",
        ] {
            if self.starts(op) {
                return Some(op.to_owned());
            }
        }
        if c == '\n' {
            return Some("newline".to_owned());
        }
        if is_meta(c) {
            return Some(c.to_string());
        }
        let mut k = self.i;
        let mut t = String::new();
        while let Some(&c) = self.s.get(k) {
            if is_meta(c) {
                break;
            }
            t.push(c);
            k += 1;
        }
        Some(t)
    }

    /// The reserved word at the cursor, if the next word is exactly one.
    fn peek_reserved(&self) -> Option<&'static str> {
        const WORDS: &[&str] = &[
            "if", "then", "elif", "else", "fi", "for", "in", "do", "done", "while", "until",
            "case", "esac", "function", "select", "{", "}", "!", "[[", "]]", "time",
        ];
        let tok = self.peek_token()?;
        if [";;", ";&", ";;&", ")"].contains(&tok.as_str()) {
            return TERMINATORS.iter().copied().find(|t| *t == tok);
        }
        // dash has none of bash's own reserved words.
        if self.posix && ["[[", "]]", "function", "select", "time"].contains(&tok.as_str()) {
            return None;
        }
        WORDS.iter().copied().find(|w| *w == tok)
    }

    fn eat_reserved(&mut self, word: &str) -> bool {
        self.skip_space(false);
        if self.peek_reserved() == Some(word) || self.peek_token().as_deref() == Some(word) {
            self.i += word.chars().count();
            true
        } else {
            false
        }
    }

    fn expect_reserved(&mut self, word: &str) -> Res<()> {
        self.skip_space(true);
        if self.eat_reserved(word) {
            return Ok(());
        }
        match self.peek_token() {
            Some(t) => Err(unexpected(&t)),
            None => Err(UNEXPECTED_END.to_owned()),
        }
    }

    /// The list inside a compound command (`if`'s condition and arms,
    /// loops' bodies, `{ }`, `( )`): bash wants a command in it, so
    /// `if true; then fi` is `fi` unexpected.
    fn compound_list(&mut self) -> Res<List> {
        let list = self.list()?;
        if list.is_empty() {
            return Err(self.unexpected_here());
        }
        Ok(list)
    }

    /// A list: and-or lists separated by `;`, `&` or newlines,
    /// up to a terminator keyword, a `)` or the end.
    fn list(&mut self) -> Res<List> {
        let mut list = Vec::new();
        loop {
            self.skip_space(true);
            let Some(_) = self.peek() else { break };
            if let Some(r) = self.peek_reserved()
                && TERMINATORS.contains(&r)
            {
                break;
            }
            if self.peek() == Some(')') {
                break;
            }
            list.push(self.and_or()?);
            self.skip_space(false);
            match self.peek() {
                Some(';') if !self.starts(";;") && !self.starts(";&") => self.i += 1,
                Some('\n') => self.i += 1,
                Some('&') if !self.starts("&&") && (self.posix || !self.starts("&>")) => {
                    self.i += 1;
                    if let Some(last) = list.last_mut() {
                        last.background = true;
                    }
                }
                _ => break,
            }
        }
        Ok(list)
    }

    /// One line of a script (see [`parse_lines`]): its commands, the
    /// newline that ends it read; an error if something else follows.
    fn line(&mut self) -> Res<List> {
        let mut list = Vec::new();
        loop {
            self.skip_space(false);
            match self.peek() {
                None => break,
                // The newline after a last `;` or `&`.
                Some('\n') if !list.is_empty() => {
                    self.i += 1;
                    break;
                }
                _ => {}
            }
            if self
                .peek_reserved()
                .is_some_and(|r| TERMINATORS.contains(&r))
                || self.peek() == Some(')')
            {
                if list.is_empty() {
                    break;
                }
                let tok = self.peek_token().unwrap_or_default();
                return Err(if self.posix {
                    posix_unexpected(&tok)
                } else {
                    unexpected(&tok)
                });
            }
            list.push(self.and_or()?);
            self.skip_space(false);
            match self.peek() {
                Some(';') if !self.starts(";;") && !self.starts(";&") => self.i += 1,
                Some('\n') => {
                    self.i += 1;
                    break;
                }
                Some('&') if !self.starts("&&") && (self.posix || !self.starts("&>")) => {
                    self.i += 1;
                    if let Some(last) = list.last_mut() {
                        last.background = true;
                    }
                }
                None => break,
                Some(_) => {
                    let tok = self.peek_token().unwrap_or_default();
                    return Err(if self.posix {
                        posix_unexpected(&tok)
                    } else {
                        unexpected(&tok)
                    });
                }
            }
        }
        Ok(list)
    }

    fn and_or(&mut self) -> Res<AndOr> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            self.skip_space(false);
            let conn = if self.starts("&&") {
                Conn::And
            } else if self.starts("||") {
                Conn::Or
            } else {
                break;
            };
            self.i += 2;
            self.skip_space(true);
            rest.push((conn, self.pipeline()?));
        }
        Ok(AndOr {
            first,
            rest,
            background: false,
        })
    }

    fn pipeline(&mut self) -> Res<Pipeline> {
        self.skip_space(false);
        let mut bang = false;
        let mut time = None;
        if self.eat_reserved("time") {
            self.skip_space(false);
            let posix = self.starts("-p") && self.peek_at(2).is_none_or(|c| is_meta(c) || c == ' ');
            if posix {
                self.i += 2;
                self.skip_space(false);
            }
            time = Some(posix);
        }
        while self.eat_reserved("!") {
            bang = !bang;
            self.skip_space(false);
        }
        let line = self.line_number();
        let mut commands = vec![self.command()?];
        let mut with_stderr = Vec::new();
        loop {
            self.skip_space(false);
            if self.starts("||") || !self.starts("|") {
                break;
            }
            let both = self.starts("|&");
            if both && self.posix {
                return Err(posix_unexpected("&"));
            }
            self.i += if both { 2 } else { 1 };
            with_stderr.push(both);
            self.skip_space(true);
            commands.push(self.command()?);
        }
        with_stderr.push(false);
        Ok(Pipeline {
            bang,
            time,
            commands,
            with_stderr,
            line,
        })
    }

    fn command(&mut self) -> Res<Command> {
        self.skip_space(false);
        self.nest()?;
        let c = self.command_inner();
        self.depth -= 1;
        c
    }

    fn command_inner(&mut self) -> Res<Command> {
        let Some(c) = self.peek() else {
            return Err(UNEXPECTED_END.to_owned());
        };
        if self.starts("((")
            && !self.posix
            && let Some(expr) = self.try_arith_command()?
        {
            let redirs = self.redirs_after()?;
            return Ok(Command::Compound(Compound::Arith(expr), redirs));
        }
        if c == '(' {
            self.i += 1;
            let body = self.compound_list()?;
            self.skip_space(true);
            if self.peek() != Some(')') {
                return Err(self.unexpected_here());
            }
            self.i += 1;
            let redirs = self.redirs_after()?;
            return Ok(Command::Compound(Compound::Subshell(body), redirs));
        }
        match self.peek_reserved() {
            Some("{") => {
                self.i += 1;
                let body = self.compound_list()?;
                self.expect_reserved("}")?;
                let redirs = self.redirs_after()?;
                Ok(Command::Compound(Compound::Group(body), redirs))
            }
            Some("if") => self.if_clause(),
            Some("for") => self.for_clause(),
            Some("while") | Some("until") => self.while_clause(),
            Some("case") => self.case_clause(),
            Some("[[") => {
                self.i += 2;
                let cond = self.cond_or()?;
                self.skip_space(true);
                if !self.eat_reserved("]]") {
                    return Err(match self.peek_token() {
                        Some(t) if t.starts_with(['&', '|', ';', '<', '>', '(', ')']) => {
                            cond_error(&format!(
                                "syntax error in conditional expression: unexpected token `{t}'"
                            ))
                        }
                        Some(_) => cond_error("syntax error in conditional expression"),
                        None => self.unexpected_here(),
                    });
                }
                let redirs = self.redirs_after()?;
                Ok(Command::Compound(Compound::Cond(cond), redirs))
            }
            Some("function") => {
                self.i += "function".len();
                self.skip_space(false);
                let name = self.name_token()?;
                self.skip_space(false);
                if self.starts("()") {
                    self.i += 2;
                }
                self.function_body(name)
            }
            Some("select") => {
                self.i += "select".len();
                let (name, items, body, redirs) = self.name_in_words_do()?;
                Ok(Command::Compound(
                    Compound::Select(name, items, body),
                    redirs,
                ))
            }
            Some(
                r @ ("then" | "elif" | "else" | "fi" | "do" | "done" | "esac" | "}" | "in" | "]]"),
            ) => Err(unexpected(r)),
            Some(r @ (";;" | ";&" | ";;&" | ")")) => Err(unexpected(r)),
            _ => self.simple_or_function(),
        }
    }

    fn unexpected_here(&self) -> String {
        match self.peek_token() {
            Some(t) => unexpected(&t),
            None => UNEXPECTED_END.to_owned(),
        }
    }

    fn name_token(&mut self) -> Res<String> {
        let start = self.i;
        while self.peek().is_some_and(|c| !is_meta(c)) {
            self.i += 1;
        }
        let name: String = self.s[start..self.i].iter().collect();
        if name.is_empty() {
            return Err(self.unexpected_here());
        }
        Ok(name)
    }

    fn function_body(&mut self, name: String) -> Res<Command> {
        self.skip_space(true);
        let body = self.command()?;
        if !matches!(body, Command::Compound(..)) {
            return Err(unexpected(&name));
        }
        Ok(Command::Function(name, Rc::new(body)))
    }

    /// `((expr))` as a command, if the parentheses close as `))`;
    /// otherwise (`((a) | b)`) the cursor stays for a nested subshell.
    fn try_arith_command(&mut self) -> Res<Option<Word>> {
        let start = self.i;
        self.i += 2;
        match self.arith_text(true) {
            Some(text) => Ok(Some(parse_expanding_text(&text, false)?)),
            None => {
                self.i = start;
                Ok(None)
            }
        }
    }

    /// Reads arithmetic text up to the `))` that closes it (`)` when
    /// `double` is false), leaving the cursor after it; `None` if the
    /// parentheses do not close that way.
    fn arith_text(&mut self, double: bool) -> Option<String> {
        let mut depth = 0u32;
        let start = self.i;
        while let Some(c) = self.peek() {
            match c {
                '(' => depth += 1,
                ')' if depth > 0 => depth -= 1,
                ')' => {
                    if double && self.peek_at(1) != Some(')') {
                        return None;
                    }
                    let text: String = self.s[start..self.i].iter().collect();
                    self.i += if double { 2 } else { 1 };
                    return Some(text);
                }
                _ => {}
            }
            self.i += 1;
        }
        None
    }

    fn redirs_after(&mut self) -> Res<Vec<Redir>> {
        let mut redirs = Vec::new();
        loop {
            self.skip_space(false);
            match self.try_redir()? {
                Some(r) => redirs.push(r),
                None => return Ok(redirs),
            }
        }
    }

    fn if_clause(&mut self) -> Res<Command> {
        self.i += 2;
        let mut arms = Vec::new();
        let mut otherwise = None;
        loop {
            let cond = self.compound_list()?;
            self.expect_reserved("then")?;
            let body = self.compound_list()?;
            arms.push((cond, body));
            self.skip_space(true);
            if self.eat_reserved("elif") {
                continue;
            }
            if self.eat_reserved("else") {
                otherwise = Some(self.compound_list()?);
            }
            self.expect_reserved("fi")?;
            break;
        }
        let redirs = self.redirs_after()?;
        Ok(Command::Compound(Compound::If(arms, otherwise), redirs))
    }

    fn do_group(&mut self) -> Res<List> {
        self.skip_space(true);
        if self.eat_reserved("{") {
            let body = self.compound_list()?;
            self.expect_reserved("}")?;
            return Ok(body);
        }
        self.expect_reserved("do")?;
        let body = self.compound_list()?;
        self.expect_reserved("done")?;
        Ok(body)
    }

    fn for_clause(&mut self) -> Res<Command> {
        self.i += 3;
        self.skip_space(false);
        if self.starts("((") && self.posix {
            return Err("sh: 1: Syntax error: Bad for loop variable".to_owned());
        }
        if self.starts("((") {
            self.i += 2;
            let Some(text) = self.arith_text(true) else {
                return Err(UNEXPECTED_END.to_owned());
            };
            let pieces: Vec<&str> = text.split(';').collect();
            let [init, cond, step] = pieces.as_slice() else {
                return Err(format!("vfs-sh: syntax error: `(({text}))'"));
            };
            let (init, cond, step) = (
                parse_expanding_text(init, false)?,
                parse_expanding_text(cond, false)?,
                parse_expanding_text(step, false)?,
            );
            self.skip_space(false);
            if self.peek() == Some(';') {
                self.i += 1;
            }
            let body = self.do_group()?;
            let redirs = self.redirs_after()?;
            return Ok(Command::Compound(
                Compound::ArithFor(init, cond, step, body),
                redirs,
            ));
        }
        let (name, items, body, redirs) = self.name_in_words_do()?;
        Ok(Command::Compound(Compound::For(name, items, body), redirs))
    }

    /// `NAME [in WORDS]; do LIST; done` after `for` or `select`.
    #[allow(clippy::type_complexity)]
    fn name_in_words_do(&mut self) -> Res<(String, Option<Vec<Word>>, List, Vec<Redir>)> {
        self.skip_space(false);
        let name = self.name_token()?;
        if !is_name(&name) {
            return Err(format!("vfs-sh: `{name}': not a valid identifier"));
        }
        self.skip_space(false);
        let mut items = None;
        let save = self.i;
        self.skip_space(true);
        if self.eat_reserved("in") {
            let mut words = Vec::new();
            loop {
                self.skip_space(false);
                match self.peek() {
                    None | Some(';' | '\n') => break,
                    Some(c) if is_meta(c) => return Err(self.unexpected_here()),
                    _ => words.extend(self.words_braced()?),
                }
            }
            items = Some(words);
        } else {
            self.i = save;
        }
        self.skip_space(false);
        if self.peek() == Some(';') {
            self.i += 1;
        }
        let body = self.do_group()?;
        let redirs = self.redirs_after()?;
        Ok((name, items, body, redirs))
    }

    fn while_clause(&mut self) -> Res<Command> {
        let until = self.starts("until");
        self.i += 5;
        let cond = self.compound_list()?;
        self.expect_reserved("do")?;
        let body = self.compound_list()?;
        self.expect_reserved("done")?;
        let redirs = self.redirs_after()?;
        Ok(Command::Compound(
            Compound::While(cond, body, until),
            redirs,
        ))
    }

    fn case_clause(&mut self) -> Res<Command> {
        self.i += 4;
        self.skip_space(false);
        let word = self.word()?;
        self.skip_space(true);
        if !self.eat_reserved("in") {
            return Err(self.unexpected_here());
        }
        let mut arms = Vec::new();
        loop {
            self.skip_space(true);
            if self.eat_reserved("esac") {
                break;
            }
            if self.peek().is_none() {
                return Err(UNEXPECTED_END.to_owned());
            }
            if self.peek() == Some('(') {
                self.i += 1;
            }
            let mut patterns = Vec::new();
            loop {
                self.skip_space(false);
                patterns.push(self.word()?);
                self.skip_space(false);
                match self.peek() {
                    Some('|') => self.i += 1,
                    Some(')') => {
                        self.i += 1;
                        break;
                    }
                    _ => return Err(self.unexpected_here()),
                }
            }
            let body = self.list()?;
            self.skip_space(true);
            let next = if self.starts(";;&") {
                self.i += 3;
                CaseNext::TestNext
            } else if self.starts(";;") {
                self.i += 2;
                CaseNext::Stop
            } else if self.starts(";&") {
                self.i += 2;
                CaseNext::FallThrough
            } else {
                CaseNext::Stop
            };
            arms.push(CaseArm {
                patterns,
                body,
                next,
            });
        }
        let redirs = self.redirs_after()?;
        Ok(Command::Compound(Compound::Case(word, arms), redirs))
    }

    fn cond_or(&mut self) -> Res<Cond> {
        self.cond_chain("||", Self::cond_and, Cond::Or)
    }

    fn cond_and(&mut self) -> Res<Cond> {
        self.cond_chain("&&", Self::cond_not, Cond::And)
    }

    /// Operands of `next` joined by `op`, left-associative.
    fn cond_chain(
        &mut self,
        op: &str,
        next: fn(&mut Self) -> Res<Cond>,
        join: fn(Box<Cond>, Box<Cond>) -> Cond,
    ) -> Res<Cond> {
        let mut left = next(self)?;
        loop {
            self.skip_space(true);
            if !self.starts(op) {
                return Ok(left);
            }
            self.i += op.len();
            let right = next(self)?;
            left = join(Box::new(left), Box::new(right));
        }
    }

    fn cond_not(&mut self) -> Res<Cond> {
        self.skip_space(true);
        if self.peek() == Some('!') && self.peek_at(1).is_none_or(|c| c == ' ' || c == '(') {
            self.i += 1;
            return Ok(Cond::Not(Box::new(self.cond_not()?)));
        }
        if self.peek() == Some('(') {
            self.i += 1;
            self.nest()?;
            let inner = self.cond_or()?;
            self.depth -= 1;
            self.skip_space(true);
            if self.peek() != Some(')') {
                if self.starts("]]") {
                    return Err(cond_error("unexpected token `]]', expected `)'"));
                }
                return Err(self.unexpected_here());
            }
            self.i += 1;
            return Ok(inner);
        }
        // A primary missing where one must be (`[[ ]]`, `[[ ! ]]`,
        // `[[ a && ]]`): bash 5.2 ends without a word.
        if self.at_cond_end() {
            return Err(cond_error(""));
        }
        let first = self.cond_word()?;
        let first_text = first.as_lit().map(str::to_owned);
        self.skip_space(false);
        // A binary operator?
        let op = self.cond_binary_op();
        if let Some(op) = op {
            self.skip_space(false);
            // A newline is no operand: bash skips newlines only where a
            // term or `]]` may start.
            if self.peek() == Some('\n') {
                return Err(cond_error(
                    "unexpected argument `newline' to conditional binary operator",
                ));
            }
            if self.at_cond_end() {
                let tok = self.peek_token().unwrap_or_default();
                return Err(cond_error(&format!(
                    "unexpected argument `{tok}' to conditional binary operator"
                )));
            }
            let right = if op == "=~" {
                self.cond_regex_word()?
            } else if matches!(op.as_str(), "==" | "!=" | "=") && self.extglob_ahead() {
                self.cond_pattern_word()?
            } else {
                self.cond_word()?
            };
            return Ok(Cond::Binary(op, first, right));
        }
        if let Some(t) = first_text
            && t.len() == 2
            && t.starts_with('-')
        {
            if self.peek() == Some('\n') {
                return Err(cond_error(
                    "unexpected argument `newline' to conditional unary operator",
                ));
            }
            if !self.at_cond_end() {
                let operand = self.cond_word()?;
                return Ok(Cond::Unary(t, operand));
            }
            if "abcdefghknoprstuvwxzGLNORS".contains(&t[1..]) && self.peek().is_some() {
                let tok = self.peek_token().unwrap_or_default();
                return Err(cond_error(&format!(
                    "unexpected argument `{tok}' to conditional unary operator"
                )));
            }
        }
        // A word then another: bash wanted an operator between them. A
        // newline there is a token too (`[[ a` newline `]]`).
        if self.peek() == Some('\n') {
            return Err(cond_error(
                "unexpected token `newline', conditional binary operator expected",
            ));
        }
        if !self.at_cond_end() && self.peek().is_some() {
            return Err(cond_error(&match self.peek_token() {
                Some(t) if t.starts_with(['&', '|', ';', '<', '>', '(']) => {
                    format!("unexpected token `{t}', conditional binary operator expected")
                }
                _ => "conditional binary operator expected".to_owned(),
            }));
        }
        Ok(Cond::Word(first))
    }

    fn at_cond_end(&self) -> bool {
        self.starts("]]") || self.starts("&&") || self.starts("||") || self.peek() == Some(')')
    }

    fn cond_binary_op(&mut self) -> Option<String> {
        for op in ["==", "!=", "=~", "<", ">", "="] {
            if self.starts(op)
                && self
                    .peek_at(op.len())
                    .is_some_and(|c| matches!(c, ' ' | '\t' | '\n'))
            {
                self.i += op.len();
                return Some(op.to_owned());
            }
        }
        for op in [
            "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef",
        ] {
            if self.starts(op)
                && self
                    .peek_at(3)
                    .is_some_and(|c| matches!(c, ' ' | '\t' | '\n'))
            {
                self.i += 3;
                return Some(op.to_owned());
            }
        }
        None
    }

    fn cond_word(&mut self) -> Res<Word> {
        self.skip_space(true);
        if self.at_cond_end() || self.peek().is_none() {
            return Err(self.unexpected_here());
        }
        self.word()
    }

    /// Whether the word ahead has an extended pattern's opening (`@(`,
    /// `!(`, `+(`, `*(`, `?(`) before its first blank.
    fn extglob_ahead(&self) -> bool {
        let rest = &self.s[self.i.min(self.s.len())..];
        rest.iter()
            .take_while(|c| !matches!(c, ' ' | '\t' | '\n'))
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| matches!(w[0], '@' | '!' | '+' | '*' | '?') && *w[1] == '(')
    }

    /// The right side of `==` or `!=` holding an extended pattern, which
    /// bash 5.2 reads there even without `shopt -s extglob`: `(` only after
    /// `@ ! + * ?`, and `|` and blanks literal inside the parentheses.
    fn cond_pattern_word(&mut self) -> Res<Word> {
        self.cond_paren_word(false)
    }

    /// The right side of `=~`: `(`, `)`, `|` literal (they are regex syntax
    /// there).
    fn cond_regex_word(&mut self) -> Res<Word> {
        self.cond_paren_word(true)
    }

    /// A `[[ ]]` word whose parentheses are part of it: up to a blank or an
    /// operator outside them. A regex opens them anywhere and keeps `|`
    /// outside them; a pattern opens them only after an extended
    /// pattern's `@ ! + * ?`.
    fn cond_paren_word(&mut self, regex: bool) -> Res<Word> {
        self.skip_space(false);
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut depth = 0u32;
        while let Some(c) = self.peek() {
            if depth == 0
                && (matches!(c, ' ' | '\t' | '\n' | '<' | '>' | ';' | '&' | ')')
                    || (c == '|' && !regex)
                    || self.starts("]]"))
            {
                break;
            }
            match c {
                '(' if regex || depth > 0 || lit.ends_with(['@', '!', '+', '*', '?']) => {
                    depth += 1;
                    lit.push(c);
                    self.i += 1;
                }
                '(' => return Err(self.unexpected_here()),
                ')' => {
                    depth -= 1;
                    lit.push(c);
                    self.i += 1;
                }
                '\'' | '"' | '\\' | '$' | '`' => {
                    if !lit.is_empty() {
                        parts.push(Part::Lit(std::mem::take(&mut lit)));
                    }
                    let mut one = self.parts_one(Until::Word)?;
                    parts.append(&mut one);
                }
                _ => {
                    lit.push(c);
                    self.i += 1;
                }
            }
        }
        if depth > 0 && !regex {
            return Err(self.unexpected_here());
        }
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        if parts.is_empty() {
            return Err(self.unexpected_here());
        }
        Ok(Word { parts })
    }

    /// One quoted or expanding element (for the `=~` reader).
    fn parts_one(&mut self, until: Until) -> Res<Vec<Part>> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        self.part(&mut parts, &mut lit, until, false)?;
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        Ok(parts)
    }

    /// A simple command, or `name() { ...; }`.
    fn simple_or_function(&mut self) -> Res<Command> {
        let mut assigns = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let mut redirs = Vec::new();
        loop {
            self.skip_space(false);
            let Some(c) = self.peek() else { break };
            if let Some(r) = self.try_redir()? {
                redirs.push(r);
                continue;
            }
            if matches!(c, '\n' | ';' | '&' | '|' | ')') {
                break;
            }
            if c == '(' {
                // `name()`: a function definition.
                if words.len() == 1 && assigns.is_empty() && redirs.is_empty() {
                    self.i += 1;
                    self.skip_space(false);
                    if self.peek() != Some(')') {
                        // The text ends as if with a newline (`f(`).
                        let tok = self.peek_token().unwrap_or_else(|| "newline".to_owned());
                        return Err(unexpected(&tok));
                    }
                    self.i += 1;
                    let name = words
                        .pop()
                        .and_then(|w| w.as_lit().map(str::to_owned))
                        .ok_or_else(|| unexpected("("))?;
                    return self.function_body(name);
                }
                return Err(unexpected("("));
            }
            if words.is_empty() {
                if let Some(a) = self.try_assignment()? {
                    assigns.push(a);
                    continue;
                }
                if !self.posix {
                    self.keep_subscript_whole()?;
                }
            }
            let decl = words
                .first()
                .and_then(Word::as_lit)
                .is_some_and(is_declaration);
            if decl && let Some(a) = self.try_assignment()? {
                // Declaration builtins take assignments as words that are
                // not split; they are kept as words holding one field.
                words.push(assignment_word(a));
                continue;
            }
            words.extend(self.words_braced()?);
        }
        if words.is_empty() && assigns.is_empty() && redirs.is_empty() {
            return Err(self.unexpected_here());
        }
        Ok(Command::Simple {
            assigns,
            words,
            redirs,
        })
    }

    /// Where an assignment may stand, bash reads `NAME[` up to its matching
    /// `]` as part of one word, blanks and operators included (so that
    /// `a[i + 1]=x` assigns); when no `=` follows, the word is still one
    /// command name: `run[ls | wc -l]` is a command that is not found, not a
    /// pipeline. Quotes the unquoted blanks and operators between the
    /// brackets so that the word reader keeps them; quotes, `$(...)`,
    /// `${...}` and backquotes inside are read as they are.
    fn keep_subscript_whole(&mut self) -> Res<()> {
        let mut k = self.i;
        if !self.s.get(k).copied().is_some_and(is_name_start) {
            return Ok(());
        }
        while self.s.get(k).copied().is_some_and(is_name_char) {
            k += 1;
        }
        if self.s.get(k) != Some(&'[') {
            return Ok(());
        }
        let mut depth = 0usize;
        let mut bare = Vec::new();
        while let Some(&c) = self.s.get(k) {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                '\\' => k += 1,
                '\'' | '"' | '`' => k = self.closing_quote(k, c),
                '$' if matches!(self.s.get(k + 1), Some('(' | '{')) => {
                    k = self.closing_bracket(k + 1);
                }
                ' ' | '\t' | '\n' | '|' | '&' | ';' | '(' | ')' | '<' | '>' => bare.push(k),
                _ => {}
            }
            k += 1;
        }
        if self.s.get(k) != Some(&']') {
            return Err("vfs-sh: unexpected EOF while looking for matching `]'".to_owned());
        }
        for &p in bare.iter().rev() {
            let c = self.s[p];
            self.s.splice(p..=p, ['\'', c, '\'']);
        }
        Ok(())
    }

    /// The index of the quote that closes the one at `k` (`'`, `"` or a
    /// backquote; a backslash escapes in the last two), or the end.
    fn closing_quote(&self, mut k: usize, q: char) -> usize {
        k += 1;
        while let Some(&c) = self.s.get(k) {
            if c == q {
                return k;
            }
            if c == '\\' && q != '\'' {
                k += 1;
            }
            k += 1;
        }
        self.s.len()
    }

    /// The index of the bracket that closes the `(` or `{` at `k`, quotes
    /// inside skipped, or the end.
    fn closing_bracket(&self, mut k: usize) -> usize {
        let (open, close) = if self.s[k] == '(' {
            ('(', ')')
        } else {
            ('{', '}')
        };
        let mut depth = 0usize;
        while let Some(&c) = self.s.get(k) {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            } else if c == '\\' {
                k += 1;
            } else if matches!(c, '\'' | '"' | '`') {
                k = self.closing_quote(k, c);
            }
            k += 1;
        }
        self.s.len()
    }

    /// Whether a `<(...)` starts at the cursor: bash's process
    /// substitution, a part of the word it is in.
    fn at_process_in(&self) -> bool {
        !self.posix && self.peek() == Some('<') && self.peek_at(1) == Some('(')
    }

    /// `NAME=`, `NAME+=`, `NAME[...]=` at the cursor: the assignment.
    fn try_assignment(&mut self) -> Res<Option<Assign>> {
        let start = self.i;
        let mut k = self.i;
        if !self.s.get(k).copied().is_some_and(is_name_start) {
            return Ok(None);
        }
        while self.s.get(k).copied().is_some_and(is_name_char) {
            k += 1;
        }
        let name: String = self.s[start..k].iter().collect();
        let mut index = None;
        if self.s.get(k) == Some(&'[') {
            let mut depth = 0;
            let open = k;
            while let Some(&c) = self.s.get(k) {
                if c == '[' {
                    depth += 1;
                } else if c == ']' {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                } else if c == '\n' {
                    return Ok(None);
                }
                k += 1;
            }
            if self.s.get(k) != Some(&']') {
                return Ok(None);
            }
            let text: String = self.s[open + 1..k].iter().collect();
            index = Some((parse_subscript_text(&text)?, text));
            k += 1;
        }
        let append = self.s.get(k) == Some(&'+');
        if append {
            k += 1;
        }
        if self.s.get(k) != Some(&'=') {
            return Ok(None);
        }
        if self.posix && (index.is_some() || append) {
            // `a[1]=x`, `a+=x`: not assignments in dash, but command words.
            return Ok(None);
        }
        self.i = k + 1;
        if self.peek() == Some('(') && self.posix {
            return Err(posix_unexpected("("));
        }
        if self.peek() == Some('(') && index.is_none() {
            let open = self.i;
            self.i += 1;
            let mut items = Vec::new();
            loop {
                self.skip_space(true);
                let more = match self.peek() {
                    Some(')') => {
                        self.i += 1;
                        break;
                    }
                    None => {
                        // Named where it opened, as bash names it.
                        self.opened.get_or_insert(open);
                        Err("vfs-sh: unexpected EOF while looking for matching `)'".to_owned())
                    }
                    Some(_) => self.words_braced(),
                };
                match more {
                    Ok(words) => items.extend(words),
                    Err(e) => {
                        // bash ends the shell with status 1, not 2, for an
                        // error inside a compound assignment's parentheses.
                        self.in_array = true;
                        return Err(e);
                    }
                }
            }
            return Ok(Some(Assign {
                name,
                index,
                append,
                value: AssignValue::Array(items),
            }));
        }
        let value = if self.peek().is_none_or(is_meta) && !self.at_process_in() {
            Word::default()
        } else {
            self.word()?
        };
        Ok(Some(Assign {
            name,
            index,
            append,
            value: AssignValue::Scalar(value),
        }))
    }

    /// Reads one word and applies brace expansion to its text, giving the
    /// words it stands for.
    fn words_braced(&mut self) -> Res<Vec<Word>> {
        let start = self.i;
        let w = self.word()?;
        let end = self.i.min(self.s.len());
        let text: String = self.s[start.min(end)..end].iter().collect();
        if self.posix || !text.contains('{') || !has_unquoted_brace(&text) {
            return Ok(vec![w]);
        }
        let expanded = crate::brace::expand_text(&text)?;
        if expanded.len() == 1 && expanded[0] == text {
            return Ok(vec![w]);
        }
        expanded.iter().map(|t| parse_word_text(t)).collect()
    }

    /// One word (quotes, expansions and all) up to an unquoted
    /// metacharacter.
    fn word(&mut self) -> Res<Word> {
        if self.peek().is_none() {
            return Err(UNEXPECTED_END.to_owned());
        }
        // `<(...)` is a word of its own.
        let parts = self.parts(Until::Word, false)?;
        if parts.is_empty() {
            return Err(self.unexpected_here());
        }
        Ok(Word { parts })
    }

    /// A redirection at the cursor, if there is one.
    fn try_redir(&mut self) -> Res<Option<Redir>> {
        let start = self.i;
        let mut k = self.i;
        while self.s.get(k).is_some_and(char::is_ascii_digit) {
            k += 1;
        }
        let fd = if k > start {
            match self.s.get(k) {
                Some('<' | '>') => {
                    let n: String = self.s[start..k].iter().collect();
                    Some(n.parse::<u32>().unwrap_or(u32::MAX))
                }
                _ => return Ok(None),
            }
        } else {
            None
        };
        self.i = k;
        let (op, len) = if self.posix && (self.starts("<(") || self.starts(">(")) {
            return Err(posix_unexpected("("));
        } else if self.posix && self.starts("<<<") {
            return Err("sh: 1: Syntax error: redirection unexpected".to_owned());
        } else if self.posix && self.starts("&>") {
            self.i = start;
            return Ok(None);
        } else if self.starts("<(") || self.starts(">(") {
            if fd.is_some() {
                self.i = start;
                return Ok(None);
            }
            if self.starts(">(") {
                return Err("vfs-sh: output process substitution >(...) is not supported: the filesystem is read-only".to_owned());
            }
            self.i = start;
            return Ok(None);
        } else if self.starts("&>>") {
            (RedirOp::OutErr, 3)
        } else if self.starts("&>") {
            (RedirOp::OutErr, 2)
        } else if self.starts("<<<") {
            (RedirOp::HereString, 3)
        } else if self.starts("<<-") {
            (RedirOp::HereDoc, 3)
        } else if self.starts("<<") {
            (RedirOp::HereDoc, 2)
        } else if self.starts("<&") {
            (RedirOp::DupIn, 2)
        } else if self.starts(">&") {
            (RedirOp::Dup, 2)
        } else if self.starts("<>") {
            (RedirOp::ReadWrite, 2)
        } else if self.starts(">>") {
            (RedirOp::Append, 2)
        } else if self.starts(">|") {
            (RedirOp::Out, 2)
        } else if self.starts(">") {
            (RedirOp::Out, 1)
        } else if self.starts("<") {
            (RedirOp::In, 1)
        } else {
            self.i = start;
            return Ok(None);
        };
        if fd.is_some() && op == RedirOp::OutErr {
            self.i = start;
            return Ok(None);
        }
        let strip = self.starts("<<-");
        self.i += len;
        self.skip_space(false);
        if op == RedirOp::HereDoc {
            let target = self.heredoc(strip)?;
            return Ok(Some(Redir { fd, op, target }));
        }
        if self
            .peek()
            .is_none_or(|c| is_meta(c) && c != '<' && c != '>')
        {
            return Err(self.unexpected_here());
        }
        let target = self.word()?;
        Ok(Some(Redir { fd, op, target }))
    }

    /// Reads a here-document: the delimiter word here, the body from the
    /// next line, which is then cut out of the script.
    fn heredoc(&mut self, strip: bool) -> Res<Word> {
        let dstart = self.i;
        let delim = self.word()?;
        let raw: String = self.s[dstart..self.i].iter().collect();
        let quoted = raw.contains(['\'', '"', '\\']);
        let delim_text = plain_text(&delim);
        // The body starts after the end of this line.
        let mut eol = self.i;
        while self.s.get(eol).is_some_and(|&c| c != '\n') {
            eol += 1;
        }
        let body_start = (eol + 1).min(self.s.len());
        let mut k = body_start;
        let mut body = String::new();
        let mut end = self.s.len();
        while k < self.s.len() {
            let mut e = k;
            while self.s.get(e).is_some_and(|&c| c != '\n') {
                e += 1;
            }
            let line: String = self.s[k..e].iter().collect();
            let cmp = if strip {
                line.trim_start_matches('\t')
            } else {
                line.as_str()
            };
            if cmp == delim_text {
                end = (e + 1).min(self.s.len());
                break;
            }
            body.push_str(cmp);
            body.push('\n');
            k = e + 1;
        }
        if eol < self.s.len() {
            self.s.drain(body_start..end);
        }
        let target = if quoted {
            Word {
                parts: vec![Part::Quoted(body)],
            }
        } else {
            let mut w = parse_expanding_text(&body, true)?;
            if w.parts.is_empty() {
                w.parts.push(Part::Quoted(String::new()));
            }
            w
        };
        Ok(target)
    }

    /// Reads parts up to `until`. `heredoc`: double-quote rules without a
    /// closing quote (`"` is literal).
    fn parts(&mut self, until: Until, heredoc: bool) -> Res<Vec<Part>> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        loop {
            let Some(c) = self.peek() else {
                if until == Until::DoubleQuote {
                    return Err("vfs-sh: unexpected EOF while looking for matching `\"'".to_owned());
                }
                if matches!(
                    until,
                    Until::Brace { .. } | Until::Slash { .. } | Until::Colon
                ) {
                    return Err(UNCLOSED_BRACE.to_owned());
                }
                break;
            };
            match until {
                Until::Word if is_meta(c) => {
                    // `<(...)` is a part of its word, as in bash
                    // (`--from=<(cmd)` is `--from=/dev/fd/63`); dash has
                    // none, and the redirection parser refuses it there.
                    if self.at_process_in() {
                        self.i += 2;
                        let list = self.subst_list()?;
                        if !lit.is_empty() {
                            parts.push(Part::Lit(std::mem::take(&mut lit)));
                        }
                        parts.push(Part::ProcessIn(Rc::new(list)));
                        continue;
                    }
                    break;
                }
                Until::DoubleQuote if c == '"' => {
                    self.i += 1;
                    break;
                }
                Until::Brace { .. } if c == '}' => break,
                Until::Slash { .. } if c == '/' || c == '}' => break,
                Until::Colon if c == ':' || c == '}' => break,
                _ => {}
            }
            if c == '~' && until == Until::Word && parts.is_empty() && lit.is_empty() {
                self.i += 1;
                let mut user = String::new();
                while let Some(n) = self.peek() {
                    if n == '/'
                        || is_meta(n)
                        || !(n.is_alphanumeric() || matches!(n, '_' | '-' | '+'))
                    {
                        break;
                    }
                    user.push(n);
                    self.i += 1;
                }
                if self.peek().is_none_or(|n| n == '/' || is_meta(n)) && !self.at_process_in() {
                    parts.push(Part::Tilde(user));
                } else {
                    lit.push('~');
                    lit.push_str(&user);
                }
                continue;
            }
            self.part(&mut parts, &mut lit, until, heredoc)?;
        }
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        Ok(parts)
    }

    /// Reads one element at the cursor into `parts`/`lit`.
    fn part(
        &mut self,
        parts: &mut Vec<Part>,
        lit: &mut String,
        until: Until,
        heredoc: bool,
    ) -> Res<()> {
        // A pattern inside double quotes reads its quotes as a word does.
        let pattern_in_dq = matches!(
            until,
            Until::Brace {
                dq: true,
                pattern: true
            } | Until::Slash { dq: true }
        );
        let in_dq = !pattern_in_dq
            && matches!(
                until,
                Until::DoubleQuote | Until::Brace { dq: true, .. } | Until::End
            );
        let flush = |parts: &mut Vec<Part>, lit: &mut String| {
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(lit)));
            }
        };
        let c = self.peek().unwrap_or('\0');
        let next = self.peek_at(1);
        match c {
            '\\' => {
                self.i += 1;
                match next {
                    None => lit.push('\\'),
                    Some('\n') => self.i += 1,
                    Some(n) if in_dq => {
                        let special = matches!(n, '$' | '`' | '\\')
                            || (n == '"' && !heredoc)
                            || (n == '}' && matches!(until, Until::Brace { .. }));
                        self.i += 1;
                        flush(parts, lit);
                        if special {
                            parts.push(Part::Quoted(n.to_string()));
                        } else {
                            parts.push(Part::Quoted(format!("\\{n}")));
                        }
                    }
                    Some(n) => {
                        self.i += 1;
                        flush(parts, lit);
                        parts.push(Part::Quoted(n.to_string()));
                    }
                }
            }
            '\'' if !in_dq => {
                self.i += 1;
                let start = self.i;
                while self.peek().is_some_and(|c| c != '\'') {
                    self.i += 1;
                }
                if self.peek().is_none() {
                    self.opened.get_or_insert(start - 1);
                    return Err("vfs-sh: unexpected EOF while looking for matching `''".to_owned());
                }
                let text: String = self.s[start..self.i].iter().collect();
                self.i += 1;
                flush(parts, lit);
                parts.push(Part::Quoted(text));
            }
            // Inside `"${x:-...}"` a `"` opens quotes of its own.
            '"' if !in_dq || matches!(until, Until::Brace { dq: true, .. }) => {
                let open = self.i;
                self.i += 1;
                self.nest()?;
                let inner = match self.parts(Until::DoubleQuote, false) {
                    Ok(inner) => inner,
                    Err(e) => {
                        self.opened.get_or_insert(open);
                        return Err(e);
                    }
                };
                self.depth -= 1;
                flush(parts, lit);
                parts.push(Part::Double(inner));
            }
            '`' => {
                let open = self.i;
                let outer_line = self.line_number();
                self.i += 1;
                let mut text = String::new();
                loop {
                    match self.peek() {
                        None => {
                            self.opened.get_or_insert(open);
                            return Err(
                                "vfs-sh: unexpected EOF while looking for matching ``'".to_owned()
                            );
                        }
                        Some('`') => {
                            self.i += 1;
                            break;
                        }
                        Some('\\')
                            if matches!(self.peek_at(1), Some('$' | '`' | '\\'))
                                || (in_dq && self.peek_at(1) == Some('"')) =>
                        {
                            text.push(self.peek_at(1).unwrap_or('\\'));
                            self.i += 2;
                        }
                        Some(c) => {
                            text.push(c);
                            self.i += 1;
                        }
                    }
                }
                self.nest()?;
                // bash reads a backquoted command only when it runs it: its
                // lines before a syntax error run, then the error fails that
                // substitution (status 2), not the script. dash rejects the
                // script.
                let list = if self.posix {
                    parse(&text)?
                } else {
                    let (lines, error) = parse_lines_from(&text, false, outer_line);
                    let mut list: List = lines.into_iter().flatten().collect();
                    if let Some(e) = error {
                        // bash names itself by `$0` here: `bash: command
                        // substitution: line 2: ...`.
                        // bash counts the text's lines twice over: a line
                        // K of text on line L is `line L + 2(K - 1)`.
                        let lead = Lead::Within {
                            name: "",
                            what: "command substitution",
                            line: e.line - outer_line + 1,
                        };
                        let said: Vec<String> = e
                            .report(&lead)
                            .lines()
                            .map(|l| format!("\"$0\"{}", crate::commands::shell_quote(l)))
                            .collect();
                        let print = if said.is_empty() {
                            String::new()
                        } else {
                            format!("printf '%s\\n' {} >&2; ", said.join(" "))
                        };
                        list.extend(parse(&format!("{print}exit 2"))?);
                    }
                    list
                };
                self.depth -= 1;
                flush(parts, lit);
                parts.push(Part::Command(Rc::new(list)));
            }
            '$' => {
                flush(parts, lit);
                self.dollar(parts, lit, in_dq)?;
            }
            _ => {
                lit.push(c);
                self.i += 1;
            }
        }
        Ok(())
    }

    /// Parses the list of a `$(` or `<(` up to its `)`.
    fn subst_list(&mut self) -> Res<List> {
        self.nest()?;
        let list = self.list().and_then(|list| {
            self.depth -= 1;
            self.skip_space(true);
            match self.peek() {
                Some(')') => Ok(list),
                _ => Err(match self.peek_token() {
                    Some(t) => unexpected(&t),
                    None => "vfs-sh: unexpected EOF while looking for matching `)'".to_owned(),
                }),
            }
        });
        match list {
            Ok(list) => {
                self.i += 1;
                Ok(list)
            }
            Err(e) => {
                // An error inside `[[ ]]` there too (`$( [[ a b ]] )`).
                self.in_substitution |=
                    !self.posix && (e.starts_with(UNEXPECTED_TOKEN) || e.starts_with(COND_ERROR));
                Err(e)
            }
        }
    }

    fn dollar(&mut self, parts: &mut Vec<Part>, lit: &mut String, in_dq: bool) -> Res<()> {
        let next = self.peek_at(1);
        match next {
            Some('(') if self.peek_at(2) == Some('(') => {
                let save = self.i;
                self.i += 3;
                if let Some(text) = self.arith_text(true) {
                    parts.push(Part::Arith(parse_expanding_text(&text, false)?.parts));
                    return Ok(());
                }
                self.i = save + 2;
                let list = self.subst_list()?;
                parts.push(Part::Command(Rc::new(list)));
            }
            Some('(') => {
                self.i += 2;
                let list = self.subst_list()?;
                parts.push(Part::Command(Rc::new(list)));
            }
            Some('[') => {
                // `$[...]`: the old arithmetic form.
                self.i += 2;
                let start = self.i;
                while self.peek().is_some_and(|c| c != ']') {
                    self.i += 1;
                }
                if self.peek().is_none() {
                    return Err("vfs-sh: unexpected EOF while looking for matching `]'".to_owned());
                }
                let text: String = self.s[start..self.i].iter().collect();
                self.i += 1;
                parts.push(Part::Arith(parse_expanding_text(&text, false)?.parts));
            }
            Some('{') => {
                self.i += 2;
                self.nest()?;
                let open = self.i;
                let mut p = match self.brace_param(in_dq) {
                    Ok(p) => p,
                    // bash reads any `${...}` whose braces match and fails
                    // only when it expands it: `echo hi; echo ${/x}` prints
                    // `hi` first, then ends the script with status 1.
                    Err(e) if e == "vfs-sh: bad substitution" => {
                        let close = self.closing_bracket(open - 1);
                        if close >= self.s.len() {
                            // Unterminated: bash is still reading the
                            // word when the text ends.
                            let wanted = if in_dq { '"' } else { '}' };
                            return Err(format!(
                                "vfs-sh: unexpected EOF while looking for matching `{wanted}'"
                            ));
                        }
                        if self.posix {
                            return Err(e);
                        }
                        self.i = close + 1;
                        Param {
                            name: self.s[open - 2..=close].iter().collect(),
                            index: None,
                            indirect: false,
                            op: ParamOp::Bad,
                        }
                    }
                    Err(e) => return Err(e),
                };
                self.depth -= 1;
                let posix_form = p.index.is_none()
                    && !p.indirect
                    && matches!(
                        p.op,
                        ParamOp::Get
                            | ParamOp::Length
                            | ParamOp::Default(..)
                            | ParamOp::Assign(..)
                            | ParamOp::Error(..)
                            | ParamOp::Alternative(..)
                            | ParamOp::TrimPrefix(..)
                            | ParamOp::TrimSuffix(..)
                    );
                if self.posix && !posix_form {
                    p.op = ParamOp::Bad;
                }
                parts.push(Part::Param(Box::new(p)));
            }
            Some('\'') if !in_dq && !self.posix => {
                self.i += 2;
                let s = self.ansi_c()?;
                parts.push(Part::Quoted(s));
            }
            Some('"') if !in_dq && !self.posix => {
                // `$"..."`: a translatable string; no translations here.
                self.i += 1;
            }
            Some(c) if is_name_start(c) => {
                self.i += 1;
                let start = self.i;
                while self.peek().is_some_and(is_name_char) {
                    self.i += 1;
                }
                let name: String = self.s[start..self.i].iter().collect();
                parts.push(Part::Param(Box::new(Param {
                    name,
                    index: None,
                    indirect: false,
                    op: ParamOp::Get,
                })));
            }
            Some(c)
                if c.is_ascii_digit() || matches!(c, '?' | '#' | '@' | '*' | '$' | '!' | '-') =>
            {
                self.i += 2;
                parts.push(Part::Param(Box::new(Param {
                    name: c.to_string(),
                    index: None,
                    indirect: false,
                    op: ParamOp::Get,
                })));
            }
            _ => {
                self.i += 1;
                lit.push('$');
            }
        }
        Ok(())
    }

    /// `$'...'`: ANSI-C quoting.
    fn ansi_c(&mut self) -> Res<String> {
        let open = self.i;
        let mut raw = String::new();
        loop {
            match self.peek() {
                None => {
                    self.opened.get_or_insert(open);
                    return Err("vfs-sh: unexpected EOF while looking for matching `''".to_owned());
                }
                Some('\'') => {
                    self.i += 1;
                    break;
                }
                Some('\\') => {
                    raw.push('\\');
                    self.i += 1;
                    if let Some(n) = self.peek() {
                        raw.push(n);
                        self.i += 1;
                    }
                }
                Some(c) => {
                    raw.push(c);
                    self.i += 1;
                }
            }
        }
        // Decoded as it is read, in vfs-sh's locale when the script starts
        // (C: a `\u` beyond ASCII stays as written); bash, too, decodes a
        // line before running any of it.
        // A NUL ends the text, as it ends a C string in bash.
        let (mut bytes, _) = crate::commands::unescape_ansi(&raw, false);
        if let Some(nul) = bytes.iter().position(|&b| b == 0) {
            bytes.truncate(nul);
        }
        Ok(crate::lossless::decode_owned(bytes))
    }

    /// The inside of `${...}` after the `{`, up to and past the `}`.
    fn brace_param(&mut self, dq: bool) -> Res<Param> {
        let bad = |_: &Parser| "vfs-sh: bad substitution".to_owned();
        let mut length = false;
        let mut indirect = false;
        if self.peek() == Some('#') && self.peek_at(1).is_some_and(|c| c != '}') {
            // `${#x}` (but `${#}` is the count, and `${#-}`... rare).
            length = true;
            self.i += 1;
        } else if self.peek() == Some('!') && self.peek_at(1).is_some_and(|c| c != '}') {
            indirect = true;
            self.i += 1;
        }
        let start = self.i;
        match self.peek() {
            Some(c) if is_name_start(c) => {
                while self.peek().is_some_and(is_name_char) {
                    self.i += 1;
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
            }
            Some('?' | '#' | '@' | '*' | '$' | '!' | '-') => self.i += 1,
            _ => return Err(bad(self)),
        }
        let name: String = self.s[start..self.i].iter().collect();
        if indirect
            && matches!(self.peek(), Some('*' | '@'))
            && self.peek_at(1) == Some('}')
            && is_name_start(name.chars().next().unwrap_or('0'))
        {
            let star = self.peek() == Some('*');
            self.i += 2;
            return Ok(Param {
                name,
                index: None,
                indirect: true,
                op: ParamOp::Names(star),
            });
        }
        let mut index = None;
        if self.peek() == Some('[') {
            self.i += 1;
            let istart = self.i;
            let mut depth = 1;
            while let Some(c) = self.peek() {
                if c == '[' {
                    depth += 1;
                } else if c == ']' {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                self.i += 1;
            }
            if self.peek() != Some(']') {
                return Err(bad(self));
            }
            let text: String = self.s[istart..self.i].iter().collect();
            self.i += 1;
            index = Some(if text == "@" || text == "*" {
                Word::lit(&text)
            } else {
                parse_subscript_text(&text)?
            });
        }
        let mk = |op| Param {
            name: name.clone(),
            index: index.clone(),
            indirect,
            op,
        };
        if length {
            self.close_brace()?;
            return Ok(mk(ParamOp::Length));
        }
        let Some(c) = self.peek() else {
            return Err(UNCLOSED_BRACE.to_owned());
        };
        let word_until = |p: &mut Parser, until: Until| -> Res<Word> {
            Ok(Word {
                parts: p.parts(until, false)?,
            })
        };
        let op = match c {
            '}' => {
                self.i += 1;
                return Ok(mk(ParamOp::Get));
            }
            ':' if matches!(self.peek_at(1), Some('-' | '=' | '?' | '+')) => {
                let k = self.peek_at(1).unwrap_or('-');
                self.i += 2;
                let w = word_until(self, Until::Brace { dq, pattern: false })?;
                match k {
                    '-' => ParamOp::Default(true, w),
                    '=' => ParamOp::Assign(true, w),
                    '?' => ParamOp::Error(true, w),
                    _ => ParamOp::Alternative(true, w),
                }
            }
            ':' => {
                self.i += 1;
                let off = word_until(self, Until::Colon)?;
                let len = if self.peek() == Some(':') {
                    self.i += 1;
                    Some(word_until(self, Until::Brace { dq, pattern: false })?)
                } else {
                    None
                };
                ParamOp::Slice(off, len)
            }
            '-' | '=' | '?' | '+' => {
                self.i += 1;
                let w = word_until(self, Until::Brace { dq, pattern: false })?;
                match c {
                    '-' => ParamOp::Default(false, w),
                    '=' => ParamOp::Assign(false, w),
                    '?' => ParamOp::Error(false, w),
                    _ => ParamOp::Alternative(false, w),
                }
            }
            '#' | '%' => {
                self.i += 1;
                let longest = self.peek() == Some(c);
                if longest {
                    self.i += 1;
                }
                let w = word_until(self, Until::Brace { dq, pattern: true })?;
                if c == '#' {
                    ParamOp::TrimPrefix(longest, w)
                } else {
                    ParamOp::TrimSuffix(longest, w)
                }
            }
            '/' => {
                self.i += 1;
                let mode = match self.peek() {
                    Some('/') => {
                        self.i += 1;
                        ReplaceMode::All
                    }
                    Some('#') => {
                        self.i += 1;
                        ReplaceMode::Prefix
                    }
                    Some('%') => {
                        self.i += 1;
                        ReplaceMode::Suffix
                    }
                    _ => ReplaceMode::First,
                };
                let pat = word_until(self, Until::Slash { dq })?;
                let rep = if self.peek() == Some('/') {
                    self.i += 1;
                    word_until(self, Until::Brace { dq, pattern: true })?
                } else {
                    Word::default()
                };
                ParamOp::Replace(mode, pat, rep)
            }
            '^' | ',' | '~' => {
                self.i += 1;
                let all = self.peek() == Some(c);
                if all {
                    self.i += 1;
                }
                let op = match c {
                    '^' => CaseOp::Upper,
                    ',' => CaseOp::Lower,
                    _ => CaseOp::Toggle,
                };
                ParamOp::Case(
                    op,
                    all,
                    word_until(self, Until::Brace { dq, pattern: true })?,
                )
            }
            '@' => match self.peek_at(1) {
                Some(op @ ('U' | 'u' | 'L' | 'Q' | 'E' | 'K' | 'a')) => {
                    self.i += 2;
                    ParamOp::Transform(op)
                }
                Some(op @ ('A' | 'P' | 'k')) => {
                    return Err(format!("vfs-sh: ${{var@{op}}} is not supported"));
                }
                _ => return Err(bad(self)),
            },
            _ => return Err(bad(self)),
        };
        self.close_brace()?;
        Ok(mk(op))
    }

    fn close_brace(&mut self) -> Res<()> {
        if self.peek() == Some('}') {
            self.i += 1;
            Ok(())
        } else {
            Err("vfs-sh: bad substitution".to_owned())
        }
    }
}

/// Whether raw word text has a `{` outside quotes (a brace expansion
/// candidate).
fn has_unquoted_brace(text: &str) -> bool {
    let mut quote = None;
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') if quote != Some('\'') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if q == c => quote = None,
            (None, '{') => return true,
            _ => {}
        }
    }
    false
}

/// The text of a word with its quotes removed, without expanding anything
/// (for here-document delimiters).
fn plain_text(w: &Word) -> String {
    fn go(parts: &[Part], out: &mut String) {
        for p in parts {
            match p {
                Part::Lit(s) | Part::Quoted(s) => out.push_str(s),
                Part::Double(inner) => go(inner, out),
                Part::Tilde(u) => {
                    out.push('~');
                    out.push_str(u);
                }
                Part::Param(p) => {
                    out.push('$');
                    out.push_str(&p.name);
                }
                _ => {}
            }
        }
    }
    let mut s = String::new();
    go(&w.parts, &mut s);
    s
}

/// What starts each element of a declaration builtin's `NAME=(...)`
/// argument, and ends the list (see [`assignment_word`]): a NUL, which no
/// shell value holds.
pub(crate) const ELEMENT: char = '\0';

/// Whether a command is a declaration builtin, whose `NAME=value` and
/// `NAME=(...)` arguments are assignments.
pub(crate) fn is_declaration(name: &str) -> bool {
    matches!(
        name,
        "export" | "local" | "declare" | "typeset" | "readonly"
    )
}

/// An element `[KEY]=VALUE` of a declaration builtin's `NAME=(...)`
/// argument, as its key and value; `None` for a plain element.
pub(crate) fn keyed_element(item: &str) -> Option<(&str, &str)> {
    item.strip_prefix('[')?.split_once("]=")
}

/// The elements of a declaration builtin's `NAME=(...)` argument, from the
/// text between its parentheses; `None` when the parser did not mark them
/// (`declare -a x="(a b)"`).
pub(crate) fn elements(inner: &str) -> Option<impl Iterator<Item = &str>> {
    let body = inner.strip_prefix(ELEMENT)?.strip_suffix(ELEMENT);
    Some(body.into_iter().flat_map(|b| b.split(ELEMENT)))
}

/// A declaration builtin's `NAME=value` argument as a word: its parts with
/// the name and `=` in front, marked so expansion keeps it one field.
fn assignment_word(a: Assign) -> Word {
    let mut parts = vec![Part::Quoted(format!(
        "{}{}=",
        a.name,
        if a.append { "+" } else { "" }
    ))];
    match a.value {
        AssignValue::Scalar(w) => parts.push(Part::Double(w.parts)),
        AssignValue::Array(items) => {
            // `declare -a x=(a "b c")`: kept as text for the builtin, each
            // element after a NUL, which no shell value holds.
            parts.push(Part::Quoted("(".to_owned()));
            parts.push(Part::Elements(items));
            parts.push(Part::Quoted(")".to_owned()));
        }
    }
    Word { parts }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> List {
        parse(src).unwrap_or_else(|e| panic!("{src:?}: {e}"))
    }

    #[test]
    fn structures_parse() {
        for src in [
            "echo a",
            "a | b | c && d || e; f",
            "if [ -d x ]; then echo y; elif true; then :; else echo n; fi",
            "for f in a b c; do echo $f; done",
            "for f; do echo \"$f\"; done",
            "for ((i=0; i<3; i++)); do echo $i; done",
            "while read -r line; do echo \"$line\"; done < file",
            "until false; do break; done",
            "case $x in a|b) echo ab;; *) echo other;; esac",
            "case x in (x) echo; esac",
            "f() { echo hi; }; f",
            "function g { echo g; }",
            "{ echo a; echo b; } | sort",
            "(cd /x && ls)",
            "[[ -f a && $b == c* ]] || echo no",
            "(( x = 1 + 2 ))",
            "echo $((1 + (2 * 3)))",
            "x=1 y=$(echo 2) cmd arg",
            "arr=(a b 'c d'); echo ${arr[@]} ${#arr[@]}",
            "echo ${x:-default} ${x#*/} ${x%%.*} ${x/a/b} ${x:1:2} ${#x}",
            "cat <<EOF\nhello $x\nEOF\necho after",
            "cat <<'EOF'\n$literal\nEOF",
            "cat <<< \"here string\"",
            "diff <(sort a) <(sort b)",
            "ls 2>/dev/null >&2 &>/dev/null 2>&1",
            "grep x f |& head",
            "echo `date` \"$(pwd)\"",
            "echo $'a\\tb'",
            "x=$(( $(echo 3) * 2 ))",
            "! grep -q x f",
            "echo {a,b}{1,2} ${x}",
        ] {
            ok(src);
        }
    }

    #[test]
    fn syntax_errors_say_where() {
        for (src, want) in [
            ("| a", "`|'"),
            ("a | | b", "`|'"),
            ("&& a", "`&&'"),
            ("a ; ; b", "`;'"),
            ("if true; then echo", "unexpected end"),
            ("for x in a; do echo", "unexpected end"),
            ("echo 'abc", "matching `''"),
            ("echo \"abc", "matching `\"'"),
            ("echo $(ls", "`)'"),
            ("fi", "`fi'"),
            ("echo ${x", "matching `}'"),
        ] {
            match parse(src) {
                Ok(l) => panic!("{src:?} parsed: {l:?}"),
                Err(e) => assert!(e.contains(want), "{src:?}: {e}"),
            }
        }
    }

    #[test]
    fn a_line_error_names_its_line_as_bash_does() {
        let report = |src: &str, lead: &Lead<'_>| {
            let (_, e) = parse_lines(src, false);
            e.expect("an error").report(lead)
        };
        let c = Lead::String("bash");
        assert_eq!(
            report("echo a\n  echo b; fi", &c),
            "bash: -c: line 2: syntax error near unexpected token `fi'\n\
             bash: -c: line 2: `  echo b; fi'"
        );
        // The end of the text is past its last line; an open quote is
        // named where it opened.
        assert_eq!(
            report("if true; then\n echo x\n", &c),
            "bash: -c: line 3: syntax error: unexpected end of file"
        );
        assert_eq!(
            report("echo a\necho \"b\nc", &Lead::File("f.sh")),
            "f.sh: line 2: unexpected EOF while looking for matching `\"'"
        );
        let eval = Lead::Within {
            name: "bash",
            what: "eval",
            line: 4,
        };
        assert_eq!(
            report("echo\nfi", &eval),
            "bash: eval: line 5: syntax error near unexpected token `fi'\n\
             bash: eval: line 5: `fi'"
        );
        let (_, e) = parse_lines("echo a\nfi", true);
        assert_eq!(
            e.expect("an error").report(&Lead::Dash("sh")),
            "sh: 2: Syntax error: \"fi\" unexpected"
        );
    }

    #[test]
    fn heredoc_bodies_are_cut_out() {
        let l = ok("cat <<A; echo x\nbody\nA\necho y");
        assert_eq!(l.len(), 3);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "$(".repeat(500) + &")".repeat(500);
        assert!(parse(&format!("echo {deep}")).is_err());
        let parens = "( ".repeat(500) + "x" + &" )".repeat(500);
        assert!(parse(&parens).is_err());
    }
}
