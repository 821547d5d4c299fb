//! `find [PATH]... [EXPRESSION]`: walks depth first, each directory's
//! entries in name order, and prints what the expression selects.
//!
//! Tests: `-name -iname -path -ipath -wholename -type -mtime -mmin -newer
//! -size -empty -true -false`; operators `! -not -a -and -o -or ( )`;
//! actions `-print -print0`; global options `-maxdepth -mindepth`.

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

#[derive(Debug, Clone)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Name(Pattern, bool),
    Path(Pattern, bool),
    Type(Vec<char>),
    /// Age in units of `secs`, compared.
    Age(Cmp, i64),
    Newer(Option<SystemTime>),
    /// Size rounded up to `unit` bytes, compared.
    Size(Cmp, u64),
    Empty,
    Const(bool),
    Print(u8),
}

/// One visited path.
struct Item<'a> {
    path: &'a str,
    name: &'a str,
    kind: Kind,
    len: u64,
    modified: Option<SystemTime>,
}

/// Parsing state over the expression's arguments.
struct Parser<'a, 'c, 's> {
    args: &'a [String],
    i: usize,
    maxdepth: Option<usize>,
    mindepth: usize,
    has_action: bool,
    /// How deeply `!` and `(` are nested, bounded so that no expression can
    /// exhaust the stack.
    depth: usize,
    cx: &'c mut Cx<'s>,
}

/// The deepest nesting of `!` and `( )` accepted.
const MAX_NESTING: usize = 64;

type Parsed<T> = Result<T, String>;

impl Parser<'_, '_, '_> {
    fn peek(&self) -> Option<&str> {
        self.args.get(self.i).map(String::as_str)
    }

    fn arg(&mut self, pred: &str) -> Parsed<String> {
        let v = self
            .args
            .get(self.i)
            .cloned()
            .ok_or_else(|| format!("find: missing argument to '{pred}'"))?;
        self.i += 1;
        Ok(v)
    }

    fn or(&mut self) -> Parsed<Expr> {
        let mut left = self.and()?;
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.i += 1;
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Parsed<Expr> {
        let mut left = self.unary()?;
        loop {
            match self.peek() {
                None | Some("-o" | "-or" | ")") => return Ok(left),
                Some("-a" | "-and") => self.i += 1,
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
                self.i += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some("(") => {
                self.i += 1;
                if self.peek() == Some(")") {
                    return Err(
                        "find: invalid expression; empty parentheses are not allowed.".to_owned(),
                    );
                }
                let e = self.or()?;
                if self.peek() != Some(")") {
                    return Err("find: invalid expression; I was expecting to find a ')' somewhere but did not see one.".to_owned());
                }
                self.i += 1;
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
            "-type" => {
                let v = self.arg(&pred)?;
                let kinds: Vec<char> = v.split(',').filter_map(|k| k.chars().next()).collect();
                let valid =
                    !v.is_empty() && v.split(',').all(|k| k.len() == 1 && "fdlbcps".contains(k));
                if !valid {
                    return Err(format!("find: Unknown argument to -type: {v}"));
                }
                Expr::Type(kinds)
            }
            "-mtime" | "-mmin" => {
                let v = self.arg(&pred)?;
                let cmp = Cmp::parse(&v)
                    .ok_or_else(|| format!("find: invalid argument '{v}' to '{pred}'"))?;
                Expr::Age(cmp, if pred == "-mtime" { 86_400 } else { 60 })
            }
            "-newer" => {
                let v = self.arg(&pred)?;
                match self.cx.fs.metadata(&v) {
                    Ok(m) => Expr::Newer(m.modified),
                    Err(e) => return Err(format!("find: ‘{v}’: {}", e.strerror())),
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
                    .ok_or_else(|| format!("find: Expected a positive decimal integer argument to {pred}, but got ‘{v}’"))?;
                if pred == "-maxdepth" {
                    self.maxdepth = Some(n);
                } else {
                    self.mindepth = n;
                }
                Expr::Const(true)
            }
            "-depth" | "-xdev" | "-mount" | "-follow" | "-noleaf" | "-daystart" => {
                Expr::Const(true)
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete" | "-fprint" | "-fprintf"
            | "-fls" | "-printf" | "-ls" => {
                return Err(format!(
                    "find: '{pred}' is not supported in vfs-sh (read-only, no processes); pipe the paths to xargs instead"
                ));
            }
            other if other.starts_with('-') => {
                return Err(format!("find: unknown predicate '{other}'"));
            }
            other => return Err(format!("find: paths must precede expression: '{other}'")),
        };
        Ok(e)
    }
}

/// Evaluates the expression on one item, printing into `out`.
fn eval(e: &Expr, it: &Item<'_>, now: SystemTime, cx: &mut Cx<'_>, out: &mut Vec<u8>) -> bool {
    match e {
        Expr::And(a, b) => eval(a, it, now, cx, out) && eval(b, it, now, cx, out),
        Expr::Or(a, b) => eval(a, it, now, cx, out) || eval(b, it, now, cx, out),
        Expr::Not(a) => !eval(a, it, now, cx, out),
        Expr::Name(p, fold) => p.matches(it.name, *fold),
        Expr::Path(p, fold) => p.matches(it.path, *fold),
        Expr::Type(kinds) => kinds.iter().any(|&k| match k {
            'f' => it.kind == Kind::File,
            'd' => it.kind == Kind::Dir,
            _ => false,
        }),
        Expr::Age(cmp, unit) => it.modified.is_some_and(|m| {
            let age = match now.duration_since(m) {
                Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX) / unit,
                Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX) / unit - 1,
            };
            cmp.test(age)
        }),
        Expr::Newer(t) => matches!((it.modified, t), (Some(a), Some(b)) if a > *b),
        Expr::Size(cmp, unit) => {
            let units = it.len.div_ceil(*unit);
            cmp.test(i64::try_from(units).unwrap_or(i64::MAX))
        }
        Expr::Empty => match it.kind {
            Kind::File => it.len == 0,
            Kind::Dir => cx.fs.read_dir(it.path).is_ok_and(|e| e.is_empty()),
        },
        Expr::Const(b) => *b,
        Expr::Print(end) => {
            out.extend_from_slice(it.path.as_bytes());
            out.push(*end);
            true
        }
    }
}

/// `find`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    if args.first().is_some_and(|a| a == "--help") {
        cx.outs("usage: find [PATH]... [EXPRESSION]  (see `help`)\n");
        return 0;
    }
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
        depth: 0,
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
    for root in &paths {
        let meta = match cx.fs.metadata(root) {
            Ok(m) => m,
            Err(e) => {
                cx.err(format_args!("find: ‘{root}’: {}", e.strerror()));
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
        let mut stack = vec![(
            root.clone(),
            root_name,
            meta.kind,
            meta.len,
            meta.modified,
            0usize,
        )];
        while let Some((path, name, kind, len, modified, depth)) = stack.pop() {
            let mut out = Vec::new();
            if depth >= mindepth {
                let item = Item {
                    path: &path,
                    name: &name,
                    kind,
                    len,
                    modified,
                };
                eval(&expr, &item, now, cx, &mut out);
            }
            cx.out(&out);
            if kind == Kind::Dir && maxdepth.is_none_or(|m| depth < m) {
                match cx.fs.read_dir(&path) {
                    Ok(entries) => {
                        for e in entries.into_iter().rev() {
                            let child = super::join(&path, &e.name);
                            stack.push((child, e.name, e.kind, e.len, e.modified, depth + 1));
                        }
                    }
                    Err(e) => {
                        cx.err(format_args!("find: ‘{path}’: {}", e.strerror()));
                        status = 1;
                    }
                }
            }
        }
    }
    status
}
