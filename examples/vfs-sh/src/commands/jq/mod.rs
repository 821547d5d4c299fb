//! `jq`: jq 1.6's command line over jaq's parser, compiler and standard
//! library (jaq-core, jaq-std, jaq-json). jaq runs jq programs faithfully;
//! what it does differently from jq at the edges (number printing, `join`,
//! `tostring`, where `stderr`/`debug` write) is put right here: values are
//! written by [`write`], a few definitions in `defs.jq` and natives below
//! take precedence over jaq's, and everything a program prints goes to the
//! command's own streams, never the process's.

mod read;
mod write;

use std::cell::RefCell;

use jaq_core::box_iter::box_once;
use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::native::{self, Filter, Fun, v};
use jaq_core::{Ctx, DataT, Error, Exn, RunPtr, ValT, Vars};
use jaq_json::Val;
use jaq_std::input::{HasInputs, Inputs, RcIter};
use write::Layout;

use crate::exec::Cx;

const USAGE: &str = "Usage: jq [OPTIONS] FILTER [FILE]...";

/// What the command line asked for.
#[derive(Debug, Default)]
struct Options {
    filter: Option<String>,
    files: Vec<String>,
    raw_output: bool,
    join_output: bool,
    ascii: bool,
    compact: bool,
    tab: bool,
    indent: usize,
    sort_keys: bool,
    null_input: bool,
    raw_input: bool,
    slurp: bool,
    exit_status: bool,
    seq: bool,
    /// `--arg`, `--argjson`, `--slurpfile`, `--rawfile`, in order.
    named: Vec<(String, Val)>,
    positional: Vec<Val>,
}

/// A command-line mistake: jq says what and exits 2, with its usage text
/// unless the mistake is a file that cannot be read.
struct Usage {
    msg: String,
    show_usage: bool,
}

impl Usage {
    fn new(msg: impl Into<String>) -> Usage {
        Usage {
            msg: msg.into(),
            show_usage: true,
        }
    }

    /// A file named by an option that cannot be read.
    fn unreadable(msg: String) -> Usage {
        Usage {
            msg,
            show_usage: false,
        }
    }
}

fn parse_args(cx: &mut Cx<'_>, args: &[String]) -> Result<Options, Usage> {
    let mut o = Options {
        indent: 2,
        ..Options::default()
    };
    let mut from_file = None;
    // After `--args` / `--jsonargs`, operands past the filter are values.
    let mut rest_as: Option<bool> = None;
    let mut operands = Vec::new();
    let mut i = 0;
    let value = |i: &mut usize, what: &str| -> Result<String, Usage> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| Usage::new(format!("{what} takes a parameter")))
    };
    let mut no_more_options = false;
    while i < args.len() {
        let a = &args[i];
        if no_more_options || !a.starts_with('-') || a == "-" {
            match rest_as {
                Some(json) if o.filter.is_some() || from_file.is_some() => {
                    o.positional.push(if json {
                        parse_json_arg(a, "--jsonargs")?
                    } else {
                        Val::from(a.clone())
                    });
                }
                _ if o.filter.is_none() && from_file.is_none() => o.filter = Some(a.clone()),
                _ => operands.push(a.clone()),
            }
            i += 1;
            continue;
        }
        match a.as_str() {
            "--" => no_more_options = true,
            "--raw-output" => o.raw_output = true,
            "--join-output" => (o.raw_output, o.join_output) = (true, true),
            "--ascii-output" => o.ascii = true,
            "--compact-output" => o.compact = true,
            "--tab" => o.tab = true,
            "--indent" => {
                let n = value(&mut i, "--indent")?;
                o.indent = n
                    .parse()
                    .ok()
                    .filter(|n| *n <= 7)
                    .ok_or_else(|| Usage::new("Cannot indent more than 7 characters"))?;
            }
            "--sort-keys" => o.sort_keys = true,
            "--null-input" => o.null_input = true,
            "--raw-input" => o.raw_input = true,
            "--slurp" => o.slurp = true,
            "--exit-status" => o.exit_status = true,
            "--seq" => o.seq = true,
            "--color-output" | "--monochrome-output" | "--unbuffered" => {}
            "--stream" => {
                return Err(Usage::new(
                    "--stream is not supported; read the document whole (paths, getpath and tostream work)",
                ));
            }
            "--from-file" => from_file = Some(value(&mut i, "--from-file")?),
            "--arg" => {
                let name = value(&mut i, "--arg")?;
                let text = value(&mut i, "--arg")?;
                o.named.push((name, Val::from(text)));
            }
            "--argjson" => {
                let name = value(&mut i, "--argjson")?;
                let text = value(&mut i, "--argjson")?;
                let v = parse_json_arg(&text, "--argjson")?;
                o.named.push((name, v));
            }
            "--slurpfile" | "--rawfile" => {
                let name = value(&mut i, a)?;
                let path = value(&mut i, a)?;
                let data = cx.read_file_operand(&path).map_err(|e| {
                    Usage::unreadable(format!(
                        "Bad JSON in {a} {name} {path}: Could not open {path}: {}",
                        e.strerror()
                    ))
                })?;
                let v = if a == "--rawfile" {
                    Val::from(String::from_utf8_lossy(&data).into_owned())
                } else {
                    let all: Result<Vec<Val>, _> = jaq_json::read::parse_many(&data)
                        .map(|r| r.map(normalise))
                        .collect();
                    all.map(|vs| vs.into_iter().collect())
                        .map_err(|e| Usage::new(format!("Invalid JSON text in {path}: {e}")))?
                };
                o.named.push((name, v));
            }
            "--args" => rest_as = Some(false),
            "--jsonargs" => rest_as = Some(true),
            "--help" => return Err(Usage::new(String::new())),
            "--version" => {
                cx.outs("jq-1.6\n");
                return Err(Usage::new("\0"));
            }
            long if long.starts_with("--") => {
                return Err(Usage::new(format!("Unknown option: {long}")));
            }
            short => {
                let flags: Vec<char> = short[1..].chars().collect();
                for (n, c) in flags.iter().enumerate() {
                    match c {
                        'r' => o.raw_output = true,
                        'j' => (o.raw_output, o.join_output) = (true, true),
                        'a' => o.ascii = true,
                        'c' => o.compact = true,
                        'S' => o.sort_keys = true,
                        'n' => o.null_input = true,
                        'R' => o.raw_input = true,
                        's' => o.slurp = true,
                        'e' => o.exit_status = true,
                        'C' | 'M' => {}
                        'h' => return Err(Usage::new(String::new())),
                        'f' if n + 1 == flags.len() => {
                            from_file = Some(value(&mut i, "-f")?);
                        }
                        'L' => {
                            return Err(Usage::new(
                                "modules are not supported: -L has no library to search",
                            ));
                        }
                        _ => return Err(Usage::new(format!("Unknown option: {short}"))),
                    }
                }
            }
        }
        i += 1;
    }
    if let Some(path) = from_file {
        let data = cx
            .read_file_operand(&path)
            .map_err(|e| Usage::unreadable(format!("Could not open {path}: {}", e.strerror())))?;
        // With -f every operand is an input; a filter given in place of
        // one was the first file.
        if let Some(first) = o.filter.take() {
            operands.insert(0, first);
        }
        o.filter = Some(String::from_utf8_lossy(&data).into_owned());
    }
    o.files = operands;
    Ok(o)
}

fn parse_json_arg(text: &str, option: &str) -> Result<Val, Usage> {
    jaq_json::read::parse_single(text.as_bytes())
        .map(normalise)
        .map_err(|_| Usage::new(format!("Invalid JSON text passed to {option}")))
}

/// jq has one number type, a double: integral numbers read as integers
/// (so that `10.0` prints and indexes as `10`), the others as floats.
/// (jaq's integers are `isize`: 32 bits inside the wasm guest.)
fn normalise(v: Val) -> Val {
    match v {
        Val::Num(jaq_json::Num::Dec(s)) => {
            let x: f64 = s.parse().unwrap_or(f64::NAN);
            let whole = x.fract() == 0.0 && !(x == 0.0 && x.is_sign_negative());
            if whole && x >= isize::MIN as f64 && x <= isize::MAX as f64 {
                Val::from(x as isize)
            } else {
                Val::from(x)
            }
        }
        Val::Arr(a) => Val::Arr(jaq_json::Rc::new(
            jaq_json::Rc::unwrap_or_clone(a)
                .into_iter()
                .map(normalise)
                .collect(),
        )),
        Val::Obj(o) => Val::obj(
            jaq_json::Rc::unwrap_or_clone(o)
                .into_iter()
                .map(|(k, x)| (k, normalise(x)))
                .collect(),
        ),
        other => other,
    }
}

/// The kind of data vfs-sh's jq programs run on.
struct Kind;

impl DataT for Kind {
    type V<'a> = Val;
    type Data<'a> = &'a Data<'a>;
}

/// What natives reach while a program runs.
struct Data<'a> {
    lut: &'a jaq_core::Lut<Kind>,
    inputs: Inputs<'a, Val>,
    /// What `stderr`, `debug` and `halt_error` wrote, in order.
    stderr: RefCell<Vec<u8>>,
    /// The input being read, for `input_filename`.
    filename: &'a RefCell<Val>,
}

impl<'a> jaq_core::data::HasLut<'a, Kind> for &'a Data<'a> {
    fn lut(&self) -> &'a jaq_core::Lut<Kind> {
        self.lut
    }
}

impl<'a> HasInputs<'a, Val> for &'a Data<'a> {
    fn inputs(&self) -> Inputs<'a, Val> {
        self.inputs
    }
}

fn compact(v: &Val) -> Vec<u8> {
    let mut out = Vec::new();
    write::value(&mut out, &Layout::COMPACT, 0, v);
    out
}

/// vfs-sh's natives; they come first, so they take precedence over jaq's
/// of the same name.
fn natives() -> Box<[Filter<RunPtr<Kind>>]> {
    Box::new([
        ("tojson", v(0), |cv| {
            let text = String::from_utf8_lossy(&compact(&cv.1)).into_owned();
            box_once(Ok(Val::from(text)))
        }),
        ("stderr_empty", v(0), |cv| {
            let text = compact(&cv.1);
            cv.0.data().stderr.borrow_mut().extend_from_slice(&text);
            Box::new(core::iter::empty())
        }),
        ("debug_empty", v(0), |cv| {
            let mut text = b"[\"DEBUG:\",".to_vec();
            text.extend_from_slice(&compact(&cv.1));
            text.extend_from_slice(b"]\n");
            cv.0.data().stderr.borrow_mut().extend_from_slice(&text);
            Box::new(core::iter::empty())
        }),
        ("__halt_message", v(0), |cv| {
            // jq 1.6: a string raw, null nothing, anything else as JSON.
            let text = match &cv.1 {
                Val::TStr(s) | Val::BStr(s) => s.to_vec(),
                Val::Null => Vec::new(),
                other => {
                    let mut t = compact(other);
                    t.push(b'\n');
                    t
                }
            };
            cv.0.data().stderr.borrow_mut().extend_from_slice(&text);
            Box::new(core::iter::empty())
        }),
        ("input_filename", v(0), |cv| {
            box_once(Ok(cv.0.data().filename.borrow().clone()))
        }),
        ("__setpath", v(2), |mut cv| {
            let x = cv.0.pop_var();
            let path = cv.0.pop_var();
            let r = match path {
                Val::Arr(p) => set_path(cv.1, &p, x),
                other => Err(format!(
                    "Path must be specified as an array, not {}",
                    type_name(&other)
                )),
            };
            box_once(r.map_err(|e| Exn::from(Error::str(e))))
        }),
        ("__delpaths", v(1), |mut cv| {
            let paths = cv.0.pop_var();
            box_once(del_paths(cv.1, paths).map_err(|e| Exn::from(Error::str(e))))
        }),
        ("@csv", v(0), |cv| box_once(row(&cv.1, Tabular::Csv))),
        ("@tsv", v(0), |cv| box_once(row(&cv.1, Tabular::Tsv))),
    ])
}

/// `setpath` as jq does it: a `null` on the way becomes the object or
/// array the next step needs (jaq refuses to update `null`), and an index
/// past the end pads the array with `null`s.
fn set_path(v: Val, path: &[Val], x: Val) -> Result<Val, String> {
    let Some((key, rest)) = path.split_first() else {
        return Ok(x);
    };
    match (v, key) {
        (v @ (Val::Null | Val::Obj(_)), k @ (Val::TStr(_) | Val::BStr(_))) => {
            let mut map = match v {
                Val::Obj(o) => jaq_json::Rc::unwrap_or_clone(o),
                _ => Default::default(),
            };
            let child = map.get(k).cloned().unwrap_or(Val::Null);
            map.insert(k.clone(), set_path(child, rest, x)?);
            Ok(Val::obj(map))
        }
        (v @ (Val::Null | Val::Arr(_)), Val::Num(n)) => {
            let mut items = match v {
                Val::Arr(a) => jaq_json::Rc::unwrap_or_clone(a),
                _ => Vec::new(),
            };
            let i = n
                .as_isize()
                .ok_or_else(|| "Cannot index array with a fraction".to_owned())?;
            let i = if i < 0 { i + items.len() as isize } else { i };
            let i =
                usize::try_from(i).map_err(|_| "Out of bounds negative array index".to_owned())?;
            if i >= items.len() {
                items.resize(i + 1, Val::Null);
            }
            let child = std::mem::take(&mut items[i]);
            items[i] = set_path(child, rest, x)?;
            Ok(Val::Arr(jaq_json::Rc::new(items)))
        }
        (v, k) => Err(format!(
            "Cannot index {} with {}",
            type_name(&v),
            type_name(k)
        )),
    }
}

/// `delpaths` as jq does it: the paths sorted (each once) and deleted from the last,
/// an object keeping its other keys in their order (jaq's own deletion
/// moves the last key into the gap), a path that is not there ignored.
fn del_paths(v: Val, paths: Val) -> Result<Val, String> {
    let Val::Arr(paths) = paths else {
        return Err("Paths must be specified as an array".to_owned());
    };
    let mut paths = jaq_json::Rc::unwrap_or_clone(paths);
    for p in &paths {
        if !matches!(p, Val::Arr(_)) {
            return Err(format!(
                "Path must be specified as array, not {}",
                type_name(p)
            ));
        }
    }
    // Sorted, each once.
    paths.sort();
    paths.dedup();
    let mut v = v;
    for p in paths.iter().rev() {
        if let Val::Arr(p) = p {
            v = del_path(v, p)?;
        }
    }
    Ok(v)
}

fn del_path(v: Val, path: &[Val]) -> Result<Val, String> {
    let Some((key, rest)) = path.split_first() else {
        return Ok(Val::Null);
    };
    // An index as jq takes it: from the end when negative, whole.
    let index = |n: &jaq_json::Num, len: usize| -> Option<usize> {
        let f = jaq_std::ValT::as_f64(&Val::Num(n.clone()))?.trunc();
        let i = if f < 0.0 { f + len as f64 } else { f };
        (i >= 0.0 && i < len as f64).then_some(i as usize)
    };
    match (v, key) {
        (Val::Null, _) => Ok(Val::Null),
        (Val::Obj(o), k @ (Val::TStr(_) | Val::BStr(_))) => {
            let mut map = jaq_json::Rc::unwrap_or_clone(o);
            if rest.is_empty() {
                map.shift_remove(k);
            } else if let Some(child) = map.get(k).cloned() {
                map.insert(k.clone(), del_path(child, rest)?);
            }
            Ok(Val::obj(map))
        }
        (Val::Arr(a), Val::Num(n)) => {
            let mut items = jaq_json::Rc::unwrap_or_clone(a);
            if let Some(i) = index(n, items.len()) {
                if rest.is_empty() {
                    items.remove(i);
                } else {
                    let child = std::mem::take(&mut items[i]);
                    items[i] = del_path(child, rest)?;
                }
            }
            Ok(Val::Arr(jaq_json::Rc::new(items)))
        }
        (Val::Arr(a), Val::Obj(range)) if rest.is_empty() => {
            // A slice: `{"start": S, "end": E}`, either null.
            let mut items = jaq_json::Rc::unwrap_or_clone(a);
            let len = items.len() as f64;
            let bound = |name: &str, default: f64| match range.get(&Val::from(name.to_owned())) {
                Some(Val::Num(n)) => jaq_std::ValT::as_f64(&Val::Num(n.clone()))
                    .map(|f| {
                        if f < 0.0 {
                            (f + len).max(0.0)
                        } else {
                            f.min(len)
                        }
                    })
                    .unwrap_or(default),
                _ => default,
            };
            let (start, end) = (bound("start", 0.0).floor(), bound("end", len).ceil());
            if start < end {
                items.drain(start as usize..end as usize);
            }
            Ok(Val::Arr(jaq_json::Rc::new(items)))
        }
        (v, k) => Err(format!(
            "Cannot delete field at {} index of {}",
            if matches!(k, Val::Num(_)) {
                "array"
            } else {
                "object"
            },
            type_name(&v)
        )),
    }
}

#[derive(Clone, Copy)]
enum Tabular {
    Csv,
    Tsv,
}

/// `@csv` / `@tsv` of an array, as jq 1.6 writes them.
fn row(v: &Val, how: Tabular) -> Result<Val, Exn<'static, Val>> {
    let (name, sep) = match how {
        Tabular::Csv => ("csv", ","),
        Tabular::Tsv => ("tsv", "\t"),
    };
    let Val::Arr(items) = v else {
        let text = String::from_utf8_lossy(&compact(v)).into_owned();
        let msg = format!(
            "{} ({text}) cannot be {name}-formatted, only an array can be",
            type_name(v)
        );
        return Err(Exn::from(Error::str(msg)));
    };
    let mut cells = Vec::with_capacity(items.len());
    for x in items.iter() {
        cells.push(match x {
            Val::Null => String::new(),
            Val::Bool(b) => b.to_string(),
            Val::Num(n) => write::number(n),
            Val::TStr(s) | Val::BStr(s) => {
                let s = String::from_utf8_lossy(s);
                match how {
                    Tabular::Csv => format!("\"{}\"", s.replace('"', "\"\"")),
                    Tabular::Tsv => s
                        .replace('\\', "\\\\")
                        .replace('\t', "\\t")
                        .replace('\n', "\\n")
                        .replace('\r', "\\r"),
                }
            }
            other => {
                let text = String::from_utf8_lossy(&compact(other)).into_owned();
                let msg = format!("{} ({text}) is not valid in a csv row", type_name(other));
                return Err(Exn::from(Error::str(msg)));
            }
        });
    }
    Ok(Val::from(cells.join(sep)))
}

fn type_name(v: &Val) -> &'static str {
    match v {
        Val::Null => "null",
        Val::Bool(_) => "boolean",
        Val::Num(_) => "number",
        Val::TStr(_) | Val::BStr(_) => "string",
        Val::Arr(_) => "array",
        Val::Obj(_) => "object",
    }
}

fn funs() -> impl Iterator<Item = Fun<Kind>> {
    let ours = natives().into_vec().into_iter().map(native::run::<Kind>);
    let inputs = jaq_std::input::funs::<Kind>()
        .into_vec()
        .into_iter()
        .map(native::run::<Kind>);
    ours.chain(jaq_core::funs())
        .chain(jaq_std::funs())
        .chain(jaq_json::funs())
        .chain(inputs)
}

/// The global variables every program sees, besides the named arguments.
const GLOBALS: [&str; 2] = ["$ENV", "$ARGS"];

/// Compiles `code`, or says why not (as jq does, exit 3).
/// How deep a program may nest. The parser and compiler recurse per level
/// and the guest's stack is small: past a few hundred levels a program
/// would trap the sandbox instead of being refused (measured there:
/// `.[.[...]]` 500 deep runs, 700 traps; `. as $x | ...` and `try try ...`
/// run 1,000 deep and trap by 2,000). jq itself allows more.
const MAX_PROGRAM_NESTING: usize = 256;

/// An upper bound on how deep the parser recurses for a jq program: the
/// deepest its brackets nest (`(`, `[`, `{` and a string's `\(...)`), plus
/// every keyword that nests what follows it (`if`, `try`, `reduce`,
/// `foreach`, `def`, `as`, `label`) and every prefix minus, counted
/// whether or not they nest, outside strings and comments.
fn nesting(code: &str) -> usize {
    const NESTS: &[&str] = &["if", "try", "reduce", "foreach", "def", "as", "label"];
    // Each open level: true for an interpolation inside a string.
    let mut open: Vec<bool> = Vec::new();
    let (mut deepest, mut keywords) = (0, 0);
    let mut in_string = false;
    let mut word = String::new();
    // The last character outside strings that was not a space: a `-` after
    // an operator or an opening bracket (or first) is a prefix minus.
    let mut last = '(';
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '"' => in_string = false,
                // An escape takes the next character; `\(` opens code.
                '\\' if chars.next() == Some('(') => {
                    open.push(true);
                    in_string = false;
                }
                _ => {}
            }
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else if !word.is_empty() {
            keywords += usize::from(NESTS.contains(&word.as_str()));
            word.clear();
        }
        match c {
            '"' => in_string = true,
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '(' | '[' | '{' => open.push(false),
            ')' | ']' | '}' => in_string = open.pop() == Some(true),
            '-' if "-+*/%(,[{|:;=<>!".contains(last) => keywords += 1,
            _ => {}
        }
        if !c.is_whitespace() {
            last = c;
        }
        deepest = deepest.max(open.len() + keywords);
    }
    if NESTS.contains(&word.as_str()) {
        keywords += 1;
    }
    deepest.max(open.len() + keywords)
}

fn compile(code: &str, named: &[(String, Val)]) -> Result<jaq_core::Filter<Kind>, String> {
    if nesting(code) > MAX_PROGRAM_NESTING {
        return Err(format!(
            "jq: error: the program nests deeper than {MAX_PROGRAM_NESTING} levels\n"
        ));
    }
    // A program of nothing but blanks and comments is jq's identity.
    let blank = code
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    let code = if blank { "." } else { code };
    let ours = load::parse(include_str!("defs.jq"), |p| p.defs()).unwrap_or_default();
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .chain(ours);
    let arena = Arena::default();
    let loader = Loader::new(defs);
    let modules = loader
        .load(&arena, File { code, path: () })
        .map_err(|errs| {
            let mut msg = String::new();
            for (_, e) in errs {
                match e {
                    load::Error::Io(es) => {
                        for (path, why) in es {
                            msg.push_str(&format!("jq: error: cannot load module {path}: {why}\n"));
                        }
                    }
                    load::Error::Lex(es) => {
                        for (expect, at) in es {
                            msg.push_str(&syntax_error(expect.as_str(), at));
                        }
                    }
                    load::Error::Parse(es) => {
                        for (expect, at) in es {
                            msg.push_str(&syntax_error(expect.as_str(), at));
                        }
                    }
                }
            }
            msg
        })?;
    let names: Vec<String> = named.iter().map(|(n, _)| format!("${n}")).collect();
    let vars = GLOBALS
        .iter()
        .copied()
        .chain(names.iter().map(String::as_str));
    jaq_core::Compiler::default()
        .with_funs(funs())
        .with_global_vars(vars)
        .compile(modules)
        .map_err(|errs| {
            let mut msg = String::new();
            for (_, es) in errs {
                for (name, undefined) in es {
                    let shown = match undefined {
                        jaq_core::compile::Undefined::Filter(arity) => format!("{name}/{arity}"),
                        _ => name.to_owned(),
                    };
                    msg.push_str(&format!(
                        "jq: error: {shown} is not defined {}\n",
                        locate(code, name)
                    ));
                }
            }
            msg
        })
}

/// Where `name`, a slice of the program `code`, stands, as jq 1.6 says it:
/// `at <top-level>, line N:`, then the program's line, followed by as many
/// spaces as the name's column (jq 1.6 pads for a caret it never prints).
fn locate(code: &str, name: &str) -> String {
    let start = code.as_ptr() as usize;
    let at = (name.as_ptr() as usize)
        .checked_sub(start)
        .filter(|&o| o <= code.len())
        .unwrap_or(0);
    let before = &code[..at];
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_end = code[at..].find('\n').map_or(code.len(), |i| at + i);
    let column = code[line_start..at].chars().count();
    format!(
        "at <top-level>, line {line_no}:\n{}{}",
        &code[line_start..line_end],
        " ".repeat(column)
    )
}

/// A syntax error: what was expected, and where (the rest of the program,
/// cut short).
fn syntax_error(expected: &str, at: &str) -> String {
    let at = if at.is_empty() {
        "the end of the program".to_owned()
    } else {
        format!("`{}`", at.chars().take(20).collect::<String>())
    };
    format!("jq: error: syntax error: expected {expected} at {at}\n")
}

/// One input source: a file's name (for `input_filename` and messages)
/// and its bytes.
struct Source {
    name: Option<String>,
    data: Vec<u8>,
}

/// The inputs as jq reads them: JSON values one after another (or lines
/// with `-R`), across all the files; a parse error ends the inputs.
fn values<'a>(
    sources: &'a [Source],
    o: &Options,
    filename: &'a RefCell<Val>,
    position: &'a RefCell<Option<String>>,
    parse_failed: &'a RefCell<Option<String>>,
) -> Box<dyn Iterator<Item = Result<Val, String>> + 'a> {
    let name = |s: &Source| s.name.clone().map_or(Val::Null, Val::from);
    if o.raw_input {
        if o.slurp {
            let all: Vec<u8> = sources
                .iter()
                .flat_map(|s| s.data.iter().copied())
                .collect();
            return Box::new(std::iter::once(Ok(Val::from(
                String::from_utf8_lossy(&all).into_owned(),
            ))));
        }
        return Box::new(sources.iter().flat_map(move |s| {
            *filename.borrow_mut() = name(s);
            lines(&s.data).map(|l| Ok(Val::from(String::from_utf8_lossy(l).into_owned())))
        }));
    }
    // jq 1.6 parses its files as one stream (a value may even run on into
    // the next file, and a parse error counts lines from the first), but
    // names a value's place by its file and the lines read from it.
    let mut all = Vec::new();
    let mut starts = Vec::with_capacity(sources.len());
    for s in sources {
        starts.push(all.len());
        all.extend_from_slice(&s.data);
    }
    let mut reader = read::Reader::new(all);
    // The file the last value ended in, and its lines read so far.
    let (mut file, mut counted, mut lines) = (usize::MAX, 0usize, 0usize);
    let each = std::iter::from_fn(move || {
        let r = reader.next()?;
        Some(r.map(|(v, end)| {
            let last = end.saturating_sub(1);
            let k = starts.partition_point(|&st| st <= last).saturating_sub(1);
            let s = &sources[k];
            if k != file {
                (file, counted, lines) = (k, 0, 0);
                *filename.borrow_mut() = name(s);
            }
            let local = last - starts[k];
            let line_end = s.data[local.min(s.data.len())..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(s.data.len(), |p| local + p + 1);
            lines += count_lines(&s.data[counted.min(line_end)..line_end]);
            counted = counted.max(line_end);
            let shown = s.name.as_deref().unwrap_or("<stdin>");
            *position.borrow_mut() = Some(format!("{shown}:{lines}"));
            v
        }))
    });
    // A parse error is reported at once (before output jq would still
    // hold in its buffer) and ends the stream, as in jq.
    let mut stopped = false;
    let each = each.map_while(move |r| {
        if stopped {
            return None;
        }
        match r {
            Ok(v) => Some(Ok(v)),
            Err(e) => {
                stopped = true;
                *parse_failed.borrow_mut() = Some(format!("parse error: {e}"));
                None
            }
        }
    });
    if o.slurp {
        let all: Vec<Val> = each.filter_map(Result::ok).collect();
        // Input that does not parse is not slurped at all.
        if parse_failed.borrow().is_some() {
            return Box::new(std::iter::empty());
        }
        return Box::new(std::iter::once(Ok(all.into_iter().collect())));
    }
    Box::new(each)
}

fn count_lines(data: &[u8]) -> usize {
    data.iter().filter(|&&b| b == b'\n').count()
}

/// Lines without their newline; a last line without one counts.
fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let empty = data.is_empty();
    body.split(|b| *b == b'\n').filter(move |_| !empty)
}

/// `jq [OPTIONS] FILTER [FILE]...`
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let o = match parse_args(cx, args) {
        Ok(o) => o,
        Err(Usage { msg, .. }) if msg == "\0" => return 0,
        Err(Usage { msg, show_usage }) => {
            if !msg.is_empty() {
                cx.err(format_args!("jq: {msg}"));
            }
            if show_usage {
                cx.err(USAGE);
            }
            return 2;
        }
    };
    let code = o.filter.clone().unwrap_or_else(|| ".".to_owned());
    let filter = match compile(&code, &o.named) {
        Ok(f) => f,
        Err(msg) => {
            let n = msg.matches("jq: error:").count().max(1);
            let _ = cx.err.write_all(msg.as_bytes());
            cx.err(format_args!(
                "jq: {n} compile error{}",
                if n == 1 { "" } else { "s" }
            ));
            return 3;
        }
    };

    let mut failed_open = false;
    let mut sources = Vec::new();
    if o.files.is_empty() {
        sources.push(Source {
            name: None,
            data: cx.stdin(),
        });
    }
    for f in &o.files {
        match cx.read_file_operand(f) {
            Ok(data) => sources.push(Source {
                name: Some(f.clone()),
                data,
            }),
            Err(e) => {
                cx.err(format_args!(
                    "jq: error: Could not open file {f}: {}",
                    e.strerror()
                ));
                failed_open = true;
            }
        }
    }

    let layout = Layout {
        indent: if o.compact {
            None
        } else if o.tab {
            Some("\t".to_owned())
        } else if o.indent == 0 {
            None
        } else {
            Some(" ".repeat(o.indent))
        },
        sort_keys: o.sort_keys,
        ascii: o.ascii,
    };

    let filename = RefCell::new(Val::Null);
    let parse_failed = RefCell::new(None);
    let position = RefCell::new(None);
    let stream = values(&sources, &o, &filename, &position, &parse_failed);
    let inputs = RcIter::new(stream);
    let null =
        RcIter::new(Box::new(std::iter::once(Ok(Val::Null)))
            as Box<dyn Iterator<Item = Result<Val, String>>>);
    let data = Data {
        lut: &filter.lut,
        inputs: &inputs,
        stderr: RefCell::new(Vec::new()),
        filename: &filename,
    };
    let named = o
        .named
        .iter()
        .map(|(k, v)| (Val::from(k.clone()), v.clone()));
    let env = Val::obj(
        (cx.environ)()
            .into_iter()
            .map(|(k, v)| (Val::from(k), Val::from(v)))
            .collect(),
    );
    let prog_args = Val::obj(
        [
            (
                Val::from("positional".to_owned()),
                o.positional.iter().cloned().collect(),
            ),
            (Val::from("named".to_owned()), Val::obj(named.collect())),
        ]
        .into_iter()
        .collect(),
    );
    let mut globals = vec![env, prog_args];
    globals.extend(o.named.iter().map(|(_, v)| v.clone()));
    let ctx = Ctx::<Kind>::new(&data, Vars::new(globals));

    let mut status = 0u8;
    let mut last: Option<bool> = None;
    let mut halted = None;
    let source: &RcIter<dyn Iterator<Item = Result<Val, String>>> =
        if o.null_input { &null } else { &inputs };
    let mut out = Vec::new();
    'inputs: for input in source {
        let Ok(input) = input else { continue };
        for y in filter.id.run((ctx.clone(), input)) {
            flush_stderr(cx, &data);
            match y {
                Ok(v) => {
                    last = Some(v.as_bool());
                    emit(&mut out, &o, &layout, &v);
                    // jq's standard output is a C stream.
                    cx.out_stdio(&mut out);
                }
                Err(e) => match e.get_halt() {
                    Ok(code) => {
                        halted = Some(code);
                        break 'inputs;
                    }
                    Err(e) => {
                        if let Ok(e) = e.get_err() {
                            let at = position
                                .borrow()
                                .clone()
                                .unwrap_or_else(|| "<unknown>".to_owned());
                            report(cx, &at, e);
                            status = 5;
                        }
                        // One error ends the outputs of this input.
                        break;
                    }
                },
            }
        }
    }
    flush_stderr(cx, &data);
    let parse_error = parse_failed.borrow_mut().take();
    if let Some(msg) = &parse_error {
        cx.err(msg);
    }
    cx.out(&out);
    if let Some(code) = halted {
        return u8::try_from(code.rem_euclid(256)).unwrap_or(5);
    }
    if parse_error.is_some() {
        // jq 1.6's status for input it cannot parse.
        return 4;
    }
    if failed_open {
        return 2;
    }
    if status != 0 {
        return status;
    }
    if o.exit_status {
        return match last {
            None => 4,
            Some(true) => 0,
            Some(false) => 1,
        };
    }
    0
}

/// Writes one output value as the options ask.
fn emit(out: &mut Vec<u8>, o: &Options, layout: &Layout, v: &Val) {
    if o.seq {
        out.push(0x1e);
    }
    match v {
        Val::TStr(s) | Val::BStr(s) if o.raw_output => out.extend_from_slice(s),
        _ => write::value(out, layout, 0, v),
    }
    if !o.join_output {
        out.push(b'\n');
    }
}

fn flush_stderr(cx: &mut Cx<'_>, data: &Data<'_>) {
    let mut e = data.stderr.borrow_mut();
    if !e.is_empty() {
        let _ = cx.err.write_all(&e);
        e.clear();
    }
}

/// A runtime error, as jq reports it: a string as it is, anything else as
/// JSON and flagged. jaq's own errors (type, index and arithmetic ones)
/// are worded as jq 1.6 words them.
fn report(cx: &mut Cx<'_>, at: &str, e: Error<Val>) {
    match e.into_val() {
        Val::TStr(s) | Val::BStr(s) => {
            // A message of jaq's form is reworded (an `error("...")` of a
            // script that imitates one would be too).
            let s = String::from_utf8_lossy(&s).into_owned();
            let s = jq16_wording(&s).unwrap_or(s);
            cx.err(format_args!("jq: error (at {at}): {s}"));
        }
        v => {
            let text = String::from_utf8_lossy(&compact(&v)).into_owned();
            cx.err(format_args!("jq: error (at {at}) (not a string): {text}"));
        }
    }
}

/// A value as jq 1.6 shows it in a message: compact JSON cut to 14 bytes,
/// the last three of them `...` when it is longer (`jv_dump_string_trunc`).
fn shown(v: &Val) -> String {
    let mut dump = compact(v);
    if dump.len() > 14 {
        dump.truncate(11);
        dump.extend_from_slice(b"...");
    }
    String::from_utf8_lossy(&dump).into_owned()
}

/// The two values around `sep` in jaq's message text (each compact JSON),
/// at the first place where both sides read as JSON.
fn split_values(text: &str, sep: &str) -> Option<(Val, Val)> {
    text.match_indices(sep).find_map(|(at, _)| {
        let bytes = text.as_bytes();
        let l = jaq_json::read::parse_single(&bytes[..at]).ok()?;
        let r = jaq_json::read::parse_single(&bytes[at + sep.len()..]).ok()?;
        Some((normalise(l), normalise(r)))
    })
}

/// jq 1.6's wording of one of jaq's errors, when it is one jq words
/// differently.
fn jq16_wording(text: &str) -> Option<String> {
    if let Some(rest) = text.strip_prefix("cannot index ") {
        let (l, r) = split_values(rest, " with ")?;
        let with = match &r {
            Val::TStr(s) | Val::BStr(s) => format!("string \"{}\"", String::from_utf8_lossy(s)),
            other => type_name(other).to_owned(),
        };
        return Some(format!("Cannot index {} with {with}", type_name(&l)));
    }
    if let Some(v) = text
        .strip_prefix("cannot use ")
        .and_then(|r| r.strip_suffix(" as iterable (array or object)"))
    {
        let v = normalise(jaq_json::read::parse_single(v.as_bytes()).ok()?);
        return Some(format!(
            "Cannot iterate over {} ({})",
            type_name(&v),
            shown(&v)
        ));
    }
    if let Some(v) = text.strip_suffix(" has no length") {
        let v = normalise(jaq_json::read::parse_single(v.as_bytes()).ok()?);
        return Some(format!("{} ({}) has no length", type_name(&v), shown(&v)));
    }
    if let Some(rest) = text.strip_prefix("cannot calculate ") {
        for (op, verb) in [
            ("+", "added"),
            ("-", "subtracted"),
            ("*", "multiplied"),
            ("/", "divided"),
            ("%", "divided (remainder)"),
        ] {
            if let Some((l, r)) = split_values(rest, &format!(" {op} ")) {
                let zero = matches!(op, "/" | "%") && jaq_std::ValT::as_f64(&r) == Some(0.0);
                let why = if zero {
                    " because the divisor is zero"
                } else {
                    ""
                };
                return Some(format!(
                    "{} ({}) and {} ({}) cannot be {verb}{why}",
                    type_name(&l),
                    shown(&l),
                    type_name(&r),
                    shown(&r)
                ));
            }
        }
    }
    None
}

/// Compiles `program`, reads `input` as jq 1.6 would and writes each value
/// back, without running the program (for the fuzz target).
pub(crate) fn check(program: &str, input: &[u8]) -> usize {
    let _ = compile(program, &[]);
    let mut n = 0;
    let mut out = Vec::new();
    let layout = Layout {
        indent: Some("  ".to_owned()),
        sort_keys: true,
        ascii: true,
    };
    for (v, _) in read::Reader::new(input.to_vec()).map_while(Result::ok) {
        out.clear();
        write::value(&mut out, &layout, 0, &v);
        let _ = set_path(
            v,
            &[Val::from(1isize), Val::from("a".to_owned())],
            Val::Null,
        );
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::nesting;

    #[test]
    fn nesting_counts_brackets_nesting_keywords_and_prefix_minus() {
        assert_eq!(nesting("[1, [2], {a: (3)}]"), 3);
        assert_eq!(nesting(r#""[[(" | .a"#), 0, "brackets in a string");
        assert_eq!(nesting(r#""\(1 + (2))""#), 2, "an interpolation is code");
        assert_eq!(nesting("# [[[ if\n1"), 0, "a comment");
        assert_eq!(nesting(". as $x | if 1 then 2 else 3 end"), 2);
        assert_eq!(nesting("1 - -1"), 1, "one prefix minus");
        assert_eq!(nesting("-1"), 1);
        assert_eq!(nesting("diff | tryhard"), 0, "only whole words");
    }
}
