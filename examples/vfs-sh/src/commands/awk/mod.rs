//! `awk`: POSIX awk with the gawk extensions agents use, written for the
//! sandbox (no awk crate runs inside a wasm guest over vfs-sh's
//! filesystem and budgets, and none matches gawk's output rules).
//!
//! Records and fields, `BEGIN`/`END`, ranges, arrays (in insertion order:
//! gawk's own `for (k in a)` order is its hash order, which nothing can
//! rely on), user functions, `getline` from the input or a document,
//! `printf`/`sprintf` (through the shell `printf`'s formatter), the string
//! and arithmetic builtins, `gensub`, `asort`/`asorti`. Output goes to
//! standard output or error only: `print > FILE` fails as on a read-only
//! filesystem. `system()`, `cmd | getline` and `print | cmd` run their
//! command in vfs-sh itself (a nested shell, inside the same budget), with
//! gawk's ordering: awk's own output is flushed before a command starts,
//! and a `print | cmd` command runs when it is closed or awk exits.

mod order;
mod syntax;
mod value;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use regex::RegexBuilder;

use super::read;
use crate::exec::Cx;
use crate::longest::PosixRegex;
use crate::pattern::{Syntax, translate};
use syntax::{
    ARGC, ARGV, CONVFMT, Dest, ENVIRON, Expr, FIELDWIDTHS, FILENAME, FNR, FPAT, FS, Function,
    IGNORECASE, NF, NR, OFMT, OFS, ORS, PROCINFO, Pattern, Program, RLENGTH, RS, RSTART, RT,
    SUBSEP, Stmt, Var,
};
use value::{Val, leading_number};

/// An array: the values by key, and gawk's layout of the keys, which
/// gives the order `for (k in a)` visits them in ([`order`]).
#[derive(Debug, Default)]
struct Arr {
    map: indexmap::IndexMap<Rc<str>, Val>,
    order: order::Order,
}

impl Arr {
    fn new() -> Arr {
        Arr::default()
    }

    fn insert(&mut self, k: Rc<str>, v: Val) {
        if !self.map.contains_key(&k) {
            self.order.insert(&k);
        }
        self.map.insert(k, v);
    }

    /// The element's value, created empty if it is not there (a reference
    /// to `a[k]` creates it, as in awk).
    fn get_or_create(&mut self, k: Rc<str>) -> Val {
        if let Some(v) = self.map.get(&k) {
            return v.clone();
        }
        self.order.insert(&k);
        self.map.insert(k, Val::Uninit);
        Val::Uninit
    }

    fn get(&self, k: &str) -> Option<&Val> {
        self.map.get(k)
    }

    fn contains_key(&self, k: &str) -> bool {
        self.map.contains_key(k)
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    fn values(&self) -> impl Iterator<Item = &Val> {
        self.map.values()
    }

    /// The keys in the order `for (k in a)` visits them.
    fn keys(&self) -> Vec<Rc<str>> {
        self.order.keys()
    }

    fn remove(&mut self, k: &str) {
        if self.map.shift_remove(k).is_some() {
            self.order.remove(k);
        }
    }

    fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }
}

/// A variable's storage.
#[derive(Debug, Clone)]
enum Cell {
    Val(Val),
    Arr(Rc<RefCell<Arr>>),
}

/// How a statement leaves the normal flow.
#[derive(Debug)]
enum Ctl {
    Next,
    NextFile,
    Exit(i32),
    Break,
    Continue,
    Return(Val),
    /// A fatal error: the message; awk exits with status 2.
    Fatal(String),
}

type Flow<T> = Result<T, Ctl>;

/// How deep user functions may call each other.
const MAX_CALLS: usize = 400;

/// Output is handed on in chunks of about this size.
const FLUSH_AT: usize = 64 << 10;

/// How records split into fields (gawk's `PROCINFO["FS"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum SplitBy {
    Fs,
    /// `FIELDWIDTHS`: characters to skip and the width of each field
    /// (`None`: `*`, the rest of the record).
    Widths(Rc<[(usize, Option<usize>)]>),
    /// `FPAT`: each field is a match of this regex.
    Pattern(Rc<str>),
}

/// Parses `FIELDWIDTHS` as gawk does: blank-separated `[SKIP:]WIDTH`, the
/// last of which may be `*`; the error names the field and the text.
fn field_widths(spec: &str) -> Result<Vec<(usize, Option<usize>)>, String> {
    let tokens: Vec<&str> = spec.split_whitespace().collect();
    let mut widths = Vec::with_capacity(tokens.len());
    for (k, t) in tokens.iter().enumerate() {
        let bad = || {
            format!(
                "awk: fatal: invalid FIELDWIDTHS value, for field {}, near `{t}'",
                k + 1
            )
        };
        if *t == "*" && k + 1 == tokens.len() {
            widths.push((0, None));
            continue;
        }
        let (skip, width) = match t.split_once(':') {
            Some((skip, width)) => (skip.parse::<usize>().map_err(|_| bad())?, width),
            None => (0, *t),
        };
        let width = width.parse::<usize>().map_err(|_| bad())?;
        widths.push((skip, Some(width)));
    }
    Ok(widths)
}

/// The fields of `rec` by widths in characters; the record ends the
/// fields, a short last one included.
fn split_widths(rec: &str, widths: &[(usize, Option<usize>)]) -> Vec<Rc<str>> {
    let chars: Vec<(usize, char)> = rec.char_indices().collect();
    let byte = |i: usize| chars.get(i).map_or(rec.len(), |c| c.0);
    let mut fields = Vec::new();
    let mut at = 0;
    for &(skip, width) in widths {
        at += skip;
        if at >= chars.len() {
            break;
        }
        let end = width.map_or(chars.len(), |w| (at + w).min(chars.len()));
        fields.push(Rc::from(&rec[byte(at)..byte(end)]));
        at = end;
    }
    fields
}

#[derive(Debug)]
enum Fields {
    Ranges(Vec<(usize, usize)>),
    Owned(Vec<Rc<str>>),
}

impl Fields {
    fn len(&self) -> usize {
        match self {
            Fields::Ranges(r) => r.len(),
            Fields::Owned(o) => o.len(),
        }
    }
}

/// An input being read record by record: a document a piece at a time,
/// never whole.
type Source = read::TextWindow;

/// The byte offset in a printf format of the `n`th (from 0) thing that
/// takes a value: a conversion character or a `*` width or precision.
fn ran_out_at(fmt: &str, n: usize) -> usize {
    let b = fmt.as_bytes();
    let mut seen = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if b.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        while i < b.len() && b"-+ #0".contains(&b[i]) {
            i += 1;
        }
        for _ in 0..2 {
            if b.get(i) == Some(&b'*') {
                if seen == n {
                    return i;
                }
                seen += 1;
                i += 1;
            }
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if b.get(i) == Some(&b'.') {
                i += 1;
            } else {
                break;
            }
        }
        while i < b.len() && b"hlLqjzt".contains(&b[i]) {
            i += 1;
        }
        if i < b.len() {
            if seen == n {
                return i;
            }
            seen += 1;
            i += 1;
        }
    }
    fmt.len()
}

fn fatal<T>(msg: impl Into<String>) -> Flow<T> {
    Err(Ctl::Fatal(msg.into()))
}

/// C's `%.6g`, awk's default number format.
pub(crate) fn format_g6(n: f64) -> String {
    sprintf_num("%.6g", n)
}

/// Formats one number with a `printf` conversion.
pub(crate) fn sprintf_num(fmt: &str, n: f64) -> String {
    super::printf::format_once(fmt, &[float_text(n)], false)
        .map(|b| crate::lossless::decode(&b).into_owned())
        .unwrap_or_default()
}

fn float_text(n: f64) -> String {
    if n.is_nan() {
        "nan".to_owned()
    } else if n.is_infinite() {
        if n < 0.0 { "-inf" } else { "inf" }.to_owned()
    } else {
        format!("{n:e}")
    }
}

fn int_text(n: f64) -> String {
    if n.is_nan() || n.is_infinite() {
        return if n < 0.0 {
            "-9223372036854775808"
        } else {
            "9223372036854775807"
        }
        .to_owned();
    }
    // gawk prints an integer beyond 64 bits in full (`%d` of 2^70); the
    // formatter takes 128 bits, and an i128 holds every such double exactly.
    format!("{}", n.trunc() as i128)
}

struct Awk<'p, 'c, 'x> {
    prog: &'p Program,
    cx: &'c mut Cx<'x>,
    globals: Vec<Cell>,
    frames: Vec<Vec<Cell>>,
    record: Rc<str>,
    /// The record's fields once split: as byte ranges into the record
    /// (the common separators, without copying), or owned strings (other
    /// separators, or after a field was assigned).
    fields: Option<Fields>,
    /// A field separator that does not compile: gawk's fatal error, raised
    /// where the fields are next read.
    fs_error: Option<String>,
    /// How records split into fields: by whichever of `FS`, `FIELDWIDTHS`
    /// and `FPAT` (gawk's) was assigned last.
    split_by: SplitBy,
    /// Compiled regexes by source, case-sensitive ones first, then those
    /// under `IGNORECASE`.
    regexes: [HashMap<String, PosixRegex>; 2],
    ranges: Vec<bool>,
    out: Vec<u8>,
    /// Operands not opened yet (files and `var=value` assignments).
    operands: std::collections::VecDeque<String>,
    /// The input being read, when one is open.
    main: Option<Source>,
    /// Whether any file operand was given (else standard input is read).
    saw_file: bool,
    /// Documents read with `getline < FILE`.
    files: HashMap<String, Source>,
    /// The output of commands read with `cmd | getline`.
    commands: HashMap<String, Source>,
    /// Commands printed to with `print | cmd`, in the order they were
    /// opened, with what they will read.
    pipes: Vec<(String, Vec<u8>)>,
    seed: f64,
    rand_state: u64,
    status_error: bool,
    /// The status of the last `exit EXPR`: a bare `exit` (in END, say)
    /// keeps it.
    exit_status: i32,
    /// A UTF-8 locale: `toupper`/`tolower` and `%c` work on characters;
    /// in the C locale (vfs-sh's default, as gawk there) on bytes.
    utf8: bool,
    /// The source line running (0 before any), and where the program
    /// came from (`cmd. line` or a `-f` file), as gawk names them in a
    /// fatal error.
    line: u32,
    source: String,
}

impl<'p, 'c, 'x> Awk<'p, 'c, 'x> {
    fn flush(&mut self) {
        if !self.out.is_empty() {
            let out = std::mem::take(&mut self.out);
            self.cx.out(&out);
        }
    }

    fn convfmt(&self) -> Rc<str> {
        match &self.globals[CONVFMT] {
            Cell::Val(v) => v.to_str("%.6g"),
            Cell::Arr(_) => "%.6g".into(),
        }
    }

    fn sval(&self, v: &Val) -> Rc<str> {
        match v {
            Val::Num(_) => v.to_str(&self.convfmt()),
            Val::Str(s) | Val::StrNum(s, _) => s.clone(),
            Val::Uninit => "".into(),
        }
    }

    /// A value as `print` writes it (`OFMT` for non-integers).
    fn output_str(&self, v: &Val) -> Rc<str> {
        match v {
            Val::Num(n) => {
                let ofmt = self.global_str(OFMT);
                value::num_to_string(*n, &ofmt).into()
            }
            other => self.sval(other),
        }
    }

    fn global_str(&self, slot: usize) -> Rc<str> {
        match &self.globals[slot] {
            Cell::Val(Val::Num(n)) => value::num_to_string(*n, "%.6g").into(),
            Cell::Val(v) => v.to_str("%.6g"),
            Cell::Arr(_) => "".into(),
        }
    }

    fn set_global(&mut self, slot: usize, v: Val) {
        self.globals[slot] = Cell::Val(v);
    }

    fn ignore_case(&self) -> bool {
        matches!(&self.globals[IGNORECASE], Cell::Val(v) if v.truthy())
    }

    fn regex(&mut self, src: &str) -> Flow<PosixRegex> {
        let fold = self.ignore_case();
        if let Some(r) = self.regexes[usize::from(fold)].get(src) {
            return Ok(r.clone());
        }
        let t = match translate(src, Syntax::Awk) {
            Ok(t) => t,
            Err(e) => return fatal(format!("awk: fatal: invalid regexp: {e}: /{src}/")),
        };
        let re = RegexBuilder::new(&t.regex)
            .case_insensitive(fold)
            .size_limit(4 << 20)
            .build()
            .map(|re| PosixRegex::new(re, fold, false))
            .or_else(|_| {
                fatal(format!(
                    "awk: regular expression /{src}/ is too big or invalid"
                ))
            })?;
        let cache = &mut self.regexes[usize::from(fold)];
        if cache.len() > 512 {
            cache.clear();
        }
        cache.insert(src.to_owned(), re.clone());
        Ok(re)
    }

    /// The regex an expression stands for: a literal, or its string.
    fn regex_of(&mut self, e: &Expr) -> Flow<PosixRegex> {
        match e {
            Expr::Regex(r) => self.regex(r),
            other => {
                let v = self.eval(other)?;
                let s = self.sval(&v);
                self.regex(&s)
            }
        }
    }

    // ----- records and fields -----

    fn set_record(&mut self, rec: &str) {
        self.record = rec.into();
        self.fields = None;
    }

    fn split_record(&mut self) {
        if self.fields.is_some() {
            return;
        }
        let rec = self.record.clone();
        match self.split_by.clone() {
            SplitBy::Fs => {}
            SplitBy::Widths(widths) => {
                let fields = split_widths(&rec, &widths);
                self.set_global(NF, Val::Num(fields.len() as f64));
                self.fields = Some(Fields::Owned(fields));
                return;
            }
            SplitBy::Pattern(pat) => {
                let fields = match self.regex(&pat) {
                    Ok(re) => split_pattern(&rec, &re),
                    Err(_) => vec![rec.clone()],
                };
                self.set_global(NF, Val::Num(fields.len() as f64));
                self.fields = Some(Fields::Owned(fields));
                return;
            }
        }
        let fs = self.global_str(FS);
        let paragraph = self.global_str(RS).is_empty();
        // The common separators split into ranges, without a copy.
        let single = (fs.len() == 1
            && fs.as_ref() != "\\"
            && !(self.ignore_case() && fs.as_bytes()[0].is_ascii_alphabetic()))
        .then(|| fs.as_bytes()[0]);
        let fields = match single {
            Some(b' ') => {
                let mut ranges = Vec::new();
                let bytes = rec.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n') {
                        i += 1;
                    }
                    let start = i;
                    while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\n') {
                        i += 1;
                    }
                    if i > start {
                        ranges.push((start, i));
                    }
                }
                Fields::Ranges(ranges)
            }
            Some(c) if !paragraph && c.is_ascii() && !rec.is_empty() => {
                let mut ranges = Vec::new();
                let mut start = 0;
                for (i, b) in rec.bytes().enumerate() {
                    if b == c {
                        ranges.push((start, i));
                        start = i + 1;
                    }
                }
                ranges.push((start, rec.len()));
                Fields::Ranges(ranges)
            }
            _ => Fields::Owned(match self.split_with(&rec, &fs, paragraph) {
                Ok(f) => f,
                Err(e) => {
                    if let Ctl::Fatal(msg) = e {
                        self.fs_error = Some(msg);
                    }
                    vec![rec.clone()]
                }
            }),
        };
        self.set_global(NF, Val::Num(fields.len() as f64));
        self.fields = Some(fields);
    }

    /// The fields as owned strings, for assigning to one.
    fn owned_fields(&mut self) -> &mut Vec<Rc<str>> {
        self.split_record();
        if let Some(Fields::Ranges(r)) = &self.fields {
            let owned = r
                .iter()
                .map(|&(a, b)| Rc::from(&self.record[a..b]))
                .collect();
            self.fields = Some(Fields::Owned(owned));
        }
        match &mut self.fields {
            Some(Fields::Owned(o)) => o,
            _ => unreachable!("split_record sets the fields"),
        }
    }

    fn split_with(&mut self, s: &str, fs: &str, paragraph: bool) -> Flow<Vec<Rc<str>>> {
        if s.is_empty() {
            return Ok(Vec::new());
        }
        if paragraph && fs != " " {
            let mut all = Vec::new();
            for line in s.split('\n') {
                all.extend(self.split_with(line, fs, false)?);
            }
            return Ok(all);
        }
        Ok(match fs {
            " " => s
                .split([' ', '\t', '\n'])
                .filter(|f| !f.is_empty())
                .map(Rc::from)
                .collect(),
            "" => s
                .chars()
                .map(|c| Rc::from(c.to_string().as_str()))
                .collect(),
            _ if fs.chars().count() == 1 && fs != "\\" => {
                let c = fs.chars().next().unwrap_or(' ');
                if self.ignore_case() && c.is_alphabetic() {
                    let re = self.regex(&regex::escape(fs))?;
                    re.split(s).into_iter().map(Rc::from).collect()
                } else {
                    s.split(c).map(Rc::from).collect()
                }
            }
            _ => {
                let re = self.regex(fs)?;
                re.split(s).into_iter().map(Rc::from).collect()
            }
        })
    }

    fn rebuild_record(&mut self) {
        let ofs = self.global_str(OFS);
        let joined = self.owned_fields().join(ofs.as_ref());
        self.record = joined.into();
        // The fields stay as they are: the record was built from them.
    }

    fn field(&mut self, n: f64) -> Flow<Val> {
        if n < 0.0 {
            return fatal(format!(
                "awk: trying to access out of range field {}",
                n as i64
            ));
        }
        let i = n as usize;
        if i == 0 {
            return Ok(Val::input(&self.record.clone()));
        }
        self.split_record();
        if let Some(msg) = self.fs_error.take() {
            return fatal(msg);
        }
        Ok(match &self.fields {
            Some(Fields::Ranges(r)) => r
                .get(i - 1)
                .map_or(Val::Uninit, |&(a, b)| Val::input(&self.record[a..b])),
            Some(Fields::Owned(o)) => o.get(i - 1).map_or(Val::Uninit, |s| Val::input(s)),
            None => Val::Uninit,
        })
    }

    fn set_field(&mut self, n: f64, v: &Val) -> Flow<()> {
        if n < 0.0 {
            return fatal(format!(
                "awk: trying to access out of range field {}",
                n as i64
            ));
        }
        let i = n as usize;
        if i > 1 << 20 {
            return fatal("awk: field index too large");
        }
        let s = self.sval(v);
        if i == 0 {
            self.set_record(&s);
            return Ok(());
        }
        let f = self.owned_fields();
        if f.len() < i {
            f.resize(i, "".into());
        }
        f[i - 1] = s;
        let nf = f.len();
        self.set_global(NF, Val::Num(nf as f64));
        self.rebuild_record();
        Ok(())
    }

    fn set_nf(&mut self, n: f64) {
        let n = n.max(0.0) as usize;
        self.owned_fields().resize(n.min(1 << 20), "".into());
        self.set_global(NF, Val::Num(n as f64));
        self.rebuild_record();
    }

    /// The next record of `src` under the current `RS`.
    fn next_record(&mut self, src: &mut Source) -> Flow<Option<String>> {
        // A record that may go on past what is read so far: read on.
        loop {
            if let Some(r) = self.record_in(src)? {
                return Ok(r);
            }
            match src.refill(self.cx.fs) {
                Ok(_) => {}
                Err(e) => {
                    return fatal(format!(
                        "awk: fatal: error reading input file `{}': {}",
                        src.path().unwrap_or(""),
                        e.strerror()
                    ));
                }
            }
        }
    }

    /// The next record of what `src` holds: `None` when it may end past
    /// the text read so far (the source has more to read).
    fn record_in(&mut self, src: &mut Source) -> Flow<Option<Option<String>>> {
        let rs = self.global_str(RS);
        let complete = src.complete();
        let text = &src.text;
        if src.pos >= text.len() {
            return Ok(complete.then_some(None));
        }
        let rest = &text[src.pos..];
        let (rec, used, rt) = match rs.as_ref() {
            "" => {
                let trimmed = rest.trim_start_matches('\n');
                let skip = rest.len() - trimmed.len();
                if trimmed.is_empty() {
                    if !complete {
                        return Ok(None);
                    }
                    src.pos = text.len();
                    return Ok(Some(None));
                }
                match trimmed.find("\n\n") {
                    // The blank lines that end it must end before the text
                    // read so far does.
                    Some(k) if !complete && trimmed[k..].bytes().all(|b| b == b'\n') => {
                        return Ok(None);
                    }
                    Some(k) => {
                        let after = &trimmed[k..];
                        let nl = after.len() - after.trim_start_matches('\n').len();
                        (trimmed[..k].to_owned(), skip + k + nl, "\n".repeat(nl))
                    }
                    None if !complete => return Ok(None),
                    None => {
                        let body = trimmed.trim_end_matches('\n');
                        (body.to_owned(), rest.len(), "\n".to_owned())
                    }
                }
            }
            one if one.chars().count() == 1 => {
                let c = one.chars().next().unwrap_or('\n');
                match rest.find(c) {
                    Some(k) => (rest[..k].to_owned(), k + c.len_utf8(), c.to_string()),
                    None if !complete => return Ok(None),
                    None => (rest.to_owned(), rest.len(), String::new()),
                }
            }
            multi => {
                let re = self.regex(multi)?;
                let found = re.find(rest);
                // A match that reaches the end of what is read may go on in
                // the next piece.
                if !complete && found.as_ref().is_none_or(|m| m.end >= rest.len()) {
                    return Ok(None);
                }
                match found {
                    Some(m) if m.end > 0 => (rest[..m.start].to_owned(), m.end, rest[m].to_owned()),
                    _ => (rest.to_owned(), rest.len(), String::new()),
                }
            }
        };
        src.pos += used;
        let same = matches!(&self.globals[RT], Cell::Val(Val::Str(cur)) if cur.as_ref() == rt);
        if !same {
            self.set_global(RT, Val::str(&rt));
        }
        Ok(Some(Some(rec)))
    }

    /// Applies a `var=value` operand or a `-v` assignment (whose value
    /// `run` has already unescaped).
    fn assign_operand(&mut self, name: &str, value: &str, escaped: bool) {
        let value = if escaped {
            value.to_owned()
        } else {
            let mut warnings = Vec::new();
            let value = unescape(value, &mut warnings);
            for w in warnings {
                self.cx.err(w);
            }
            value
        };
        let v = Val::input(&value);
        if let Some(slot) = self.prog.global(name) {
            match slot {
                NF => {
                    self.set_nf(v.num());
                }
                FS | FIELDWIDTHS | FPAT => {
                    // An assignment gawk would refuse leaves the fields
                    // split as they were.
                    let _ = self.set_var(Var::Global(slot), v);
                }
                _ => self.set_global(slot, v),
            }
        }
    }

    /// The next record of the main input, across operands.
    fn next_main_record(&mut self) -> Flow<Option<String>> {
        loop {
            if let Some(mut src) = self.main.take() {
                let r = self.next_record(&mut src)?;
                self.main = Some(src);
                if let Some(rec) = r {
                    return Ok(Some(rec));
                }
                self.main = None;
                self.file_rules(&Pattern::EndFile)?;
            }
            let Some(op) = self.operands.pop_front() else {
                if self.saw_file {
                    return Ok(None);
                }
                self.saw_file = true;
                self.main = Some(Source::input(self.cx.input.clone()));
                // gawk names standard input `-` once it reads it.
                self.set_global(FILENAME, Val::str("-"));
                self.set_global(FNR, Val::Num(0.0));
                continue;
            };
            if let Some((name, value)) = op.split_once('=')
                && syntax_is_name(name)
            {
                self.assign_operand(name, value, false);
                continue;
            }
            if op.is_empty() {
                continue;
            }
            self.saw_file = true;
            let opened = if op == "-" || op == "/dev/stdin" {
                Ok(Source::input(self.cx.input.clone()))
            } else {
                match self.cx.fs.metadata(&op) {
                    Ok(m) if m.is_dir() => {
                        self.flush();
                        self.cx.err(format_args!(
                            "awk: warning: command line argument `{op}' is a directory: skipped"
                        ));
                        continue;
                    }
                    _ => Source::open(self.cx.fs, &op),
                }
            };
            match opened {
                Ok(src) => {
                    self.set_global(FILENAME, Val::str(&op));
                    self.set_global(FNR, Val::Num(0.0));
                    self.file_rules(&Pattern::BeginFile)?;
                    self.main = Some(src);
                }
                Err(e) => {
                    self.flush();
                    // Fatal: gawk stops here, without running END.
                    let msg = self.located_in(
                        &format!(
                            "awk: fatal: cannot open file `{op}' for reading: {}",
                            e.strerror()
                        ),
                        false,
                    );
                    self.status_error = true;
                    return Err(Ctl::Fatal(msg));
                }
            }
        }
    }

    fn bump(&mut self, slot: usize) {
        let n = match &self.globals[slot] {
            Cell::Val(v) => v.num(),
            Cell::Arr(_) => 0.0,
        };
        self.set_global(slot, Val::Num(n + 1.0));
    }

    // ----- variables -----

    fn cell(&mut self, v: Var) -> &mut Cell {
        match v {
            Var::Global(k) => &mut self.globals[k],
            Var::Local(k) => {
                let frame = self
                    .frames
                    .last_mut()
                    .map(|f| &mut f[..])
                    .unwrap_or(&mut []);
                match frame.get_mut(k) {
                    Some(c) => c,
                    None => &mut self.globals[0],
                }
            }
        }
    }

    fn array(&mut self, v: Var) -> Flow<Rc<RefCell<Arr>>> {
        let c = self.cell(v);
        match c {
            Cell::Arr(a) => Ok(a.clone()),
            Cell::Val(Val::Uninit) => {
                let a = Rc::new(RefCell::new(Arr::new()));
                *c = Cell::Arr(a.clone());
                Ok(a)
            }
            Cell::Val(_) => fatal("awk: attempt to use a scalar as an array"),
        }
    }

    fn get_var(&mut self, v: Var) -> Flow<Val> {
        if v == Var::Global(NF) {
            self.split_record();
            if let Some(msg) = self.fs_error.take() {
                return fatal(msg);
            }
        }
        match self.cell(v) {
            Cell::Val(x) => Ok(x.clone()),
            Cell::Arr(_) => fatal("awk: attempt to use an array in a scalar context"),
        }
    }

    fn set_var(&mut self, v: Var, x: Val) -> Flow<()> {
        if v == Var::Global(NF) {
            self.set_nf(x.num());
            return Ok(());
        }
        if matches!(v, Var::Global(FS | FIELDWIDTHS | FPAT)) {
            // The record read splits as it was read, as in gawk: a new
            // separator is for the records to come.
            self.split_record();
        }
        if v == Var::Global(FIELDWIDTHS) {
            match field_widths(&self.sval(&x)) {
                Ok(w) => self.split_by = SplitBy::Widths(w.into()),
                Err(msg) => return fatal(msg),
            }
        }
        if v == Var::Global(FPAT) {
            let pat = self.sval(&x);
            self.regex(&pat)?;
            self.split_by = SplitBy::Pattern(pat.as_ref().into());
        }
        if v == Var::Global(FS) {
            self.split_by = SplitBy::Fs;
        }
        if v == Var::Global(FS) {
            // gawk compiles a field separator when it is assigned.
            let fs = self.sval(&x);
            if fs.chars().count() > 1 {
                self.regex(&fs)?;
            }
        }
        let c = self.cell(v);
        if matches!(c, Cell::Arr(_)) {
            return fatal("awk: attempt to use an array in a scalar context");
        }
        *c = Cell::Val(x);
        Ok(())
    }

    fn key(&mut self, idx: &[Expr]) -> Flow<Rc<str>> {
        if let [one] = idx {
            let v = self.eval(one)?;
            return Ok(self.sval(&v));
        }
        let sep = self.global_str(SUBSEP);
        let mut parts = Vec::with_capacity(idx.len());
        for e in idx {
            let v = self.eval(e)?;
            parts.push(self.sval(&v).to_string());
        }
        Ok(parts.join(&sep).into())
    }

    fn assign_to(&mut self, target: &Expr, v: Val) -> Flow<()> {
        match target {
            Expr::Var(var) => self.set_var(*var, v),
            Expr::Index(var, idx) => {
                let k = self.key(idx)?;
                let a = self.array(*var)?;
                a.borrow_mut().insert(k, v);
                Ok(())
            }
            Expr::Field(e) => {
                let n = self.eval(e)?.num();
                self.set_field(n, &v)
            }
            _ => fatal("awk: assignment to a non-variable"),
        }
    }

    // ----- expressions -----

    fn eval(&mut self, e: &Expr) -> Flow<Val> {
        Ok(match e {
            Expr::Num(n) => Val::Num(*n),
            Expr::Str(s) => Val::Str(s.clone()),
            Expr::Regex(r) => {
                let re = self.regex(r)?;
                Val::Num(f64::from(u8::from(re.is_match(&self.record))))
            }
            Expr::Var(v) => self.get_var(*v)?,
            Expr::Index(v, idx) => {
                let k = self.key(idx)?;
                let a = self.array(*v)?;
                let mut a = a.borrow_mut();
                a.get_or_create(k)
            }
            Expr::Field(i) => {
                let n = self.eval(i)?.num();
                self.field(n)?
            }
            Expr::Group(items) => {
                // `(a, b)` outside `in`: gawk concatenates with SUBSEP.
                let k = self.key(items)?;
                Val::Str(k)
            }
            Expr::Assign(target, op, rhs) => {
                let r = self.eval(rhs)?;
                let v = match op {
                    None => r,
                    Some(op) => {
                        let cur = self.eval(target)?.num();
                        // gawk names the assignment in this one message.
                        if matches!(*op, "/" | "%") && r.num() == 0.0 {
                            return fatal(format!(
                                "awk: fatal: division by zero attempted in `{op}='"
                            ));
                        }
                        Val::Num(arith(op, cur, r.num())?)
                    }
                };
                self.assign_to(target, v.clone())?;
                v
            }
            Expr::Cond(c, a, b) => {
                if self.eval(c)?.truthy() {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            Expr::And(a, b) => {
                let v = self.eval(a)?.truthy() && self.eval(b)?.truthy();
                Val::Num(f64::from(u8::from(v)))
            }
            Expr::Or(a, b) => {
                let v = self.eval(a)?.truthy() || self.eval(b)?.truthy();
                Val::Num(f64::from(u8::from(v)))
            }
            Expr::Not(a) => Val::Num(f64::from(u8::from(!self.eval(a)?.truthy()))),
            Expr::Neg(a) => Val::Num(-self.eval(a)?.num()),
            Expr::Plus(a) => Val::Num(self.eval(a)?.num()),
            Expr::Binary(op, a, b) => {
                let x = self.eval(a)?.num();
                let y = self.eval(b)?.num();
                Val::Num(arith(op, x, y)?)
            }
            Expr::Compare(op, a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                let ord = if x.is_numeric() && y.is_numeric() {
                    x.num().partial_cmp(&y.num())
                } else {
                    Some(self.sval(&x).cmp(&self.sval(&y)))
                };
                use std::cmp::Ordering::*;
                let v = match (*op, ord) {
                    ("<", Some(Less)) | ("<=", Some(Less | Equal)) | ("==", Some(Equal)) => true,
                    (">", Some(Greater)) | (">=", Some(Greater | Equal)) => true,
                    ("!=", o) => o != Some(Equal),
                    _ => false,
                };
                Val::Num(f64::from(u8::from(v)))
            }
            Expr::Match(neg, a, b) => {
                let x = self.eval(a)?;
                let s = self.sval(&x);
                let re = self.regex_of(b)?;
                Val::Num(f64::from(u8::from(re.is_match(&s) != *neg)))
            }
            Expr::Concat(a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                let mut s = self.sval(&x).to_string();
                s.push_str(&self.sval(&y));
                Val::Str(s.into())
            }
            Expr::In(keys, v) => {
                let k = self.key(keys)?;
                let a = self.array(*v)?;
                let has = a.borrow().contains_key(&k);
                Val::Num(f64::from(u8::from(has)))
            }
            Expr::Incr(target, d, prefix) => {
                let old = self.eval(target)?.num();
                let new = old + d;
                self.assign_to(target, Val::Num(new))?;
                Val::Num(if *prefix { new } else { old })
            }
            Expr::Call(slot, args) => self.call(*slot, args)?,
            Expr::Builtin(name, args) => self.builtin(name, args)?,
            Expr::Getline(var, file) => self.getline(var.as_deref(), file.as_deref())?,
            Expr::PipeGetline(cmd, var) => self.pipe_getline(cmd, var.as_deref())?,
        })
    }

    fn call(&mut self, slot: usize, args: &[Expr]) -> Flow<Val> {
        let f: &Function = &self.prog.functions[slot];
        if !f.defined {
            return fatal(format!("awk: fatal: function `{}' not defined", f.name));
        }
        if self.frames.len() >= MAX_CALLS {
            return fatal(format!(
                "awk: function `{}' calls itself more than {MAX_CALLS} deep",
                f.name
            ));
        }
        if args.len() > f.params {
            return fatal(format!(
                "awk: function `{}' called with more arguments than declared",
                f.name
            ));
        }
        let mut frame = Vec::with_capacity(f.params);
        for a in args {
            let cell = match a {
                // NF is counted when it is read, not kept in its cell.
                Expr::Var(v) if *v == Var::Global(NF) => Cell::Val(self.get_var(*v)?),
                Expr::Var(v) => match self.cell(*v).clone() {
                    Cell::Arr(arr) => Cell::Arr(arr),
                    Cell::Val(v) => Cell::Val(v),
                },
                other => Cell::Val(self.eval(other)?),
            };
            frame.push(cell);
        }
        // Arguments that were uninitialised variables: give the caller the
        // array the callee fills, if it used one.
        let shared: Vec<(usize, Var)> = args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                Expr::Var(v) if matches!(self.cell(*v), Cell::Val(Val::Uninit)) => Some((i, *v)),
                _ => None,
            })
            .collect();
        while frame.len() < f.params {
            frame.push(Cell::Val(Val::Uninit));
        }
        self.frames.push(frame);
        let body = &self.prog.functions[slot].body;
        let r = self.block(body);
        let frame = self.frames.pop().unwrap_or_default();
        for (i, v) in shared {
            if let Some(Cell::Arr(a)) = frame.get(i) {
                *self.cell(v) = Cell::Arr(a.clone());
            }
        }
        match r {
            Ok(()) => Ok(Val::Uninit),
            Err(Ctl::Return(v)) => Ok(v),
            Err(Ctl::Break | Ctl::Continue) => Ok(Val::Uninit),
            Err(e) => Err(e),
        }
    }

    fn getline(&mut self, var: Option<&Expr>, file: Option<&Expr>) -> Flow<Val> {
        let rec = match file {
            Some(f) => {
                let v = self.eval(f)?;
                let name = self.sval(&v).to_string();
                if !self.files.contains_key(&name) {
                    let opened = if name == "-" || name == "/dev/stdin" {
                        Ok(Source::whole(&self.cx.stdin()))
                    } else {
                        Source::open(self.cx.fs, &name)
                    };
                    match opened {
                        Ok(src) => {
                            self.files.insert(name.clone(), src);
                        }
                        Err(_) => return Ok(Val::Num(-1.0)),
                    }
                }
                let mut src = self.files.remove(&name).unwrap_or_default();
                let r = self.next_record(&mut src);
                self.files.insert(name, src);
                // $0 and NF (or var) only, as gawk: NR stays.
                return self.store_record(r?, var);
            }
            None => self.next_main_record()?,
        };
        if rec.is_some() {
            self.bump(NR);
            self.bump(FNR);
        }
        self.store_record(rec, var)
    }

    /// A record `getline` read, into `var` or `$0`: 1, or 0 at the end.
    fn store_record(&mut self, rec: Option<String>, var: Option<&Expr>) -> Flow<Val> {
        let Some(rec) = rec else {
            return Ok(Val::Num(0.0));
        };
        match var {
            Some(t) => self.assign_to(t, Val::input(&rec))?,
            None => self.set_record(&rec),
        }
        Ok(Val::Num(1.0))
    }

    /// `cmd | getline [var]`: the command runs once, when first read (until
    /// `close(cmd)`); each call takes its next record.
    fn pipe_getline(&mut self, cmd: &Expr, var: Option<&Expr>) -> Flow<Val> {
        let v = self.eval(cmd)?;
        let name = self.sval(&v).to_string();
        let mut src = match self.commands.remove(&name) {
            Some(src) => src,
            None => {
                self.flush();
                let (out, _) = self.cx.shell_output(&name);
                Source::whole(&out)
            }
        };
        let r = self.next_record(&mut src);
        self.commands.insert(name, src);
        // As gawk: $0 and NF (or var) only, NR and FNR untouched.
        self.store_record(r?, var)
    }

    fn str_arg(&mut self, args: &[Expr], i: usize) -> Flow<Rc<str>> {
        match args.get(i) {
            Some(e) => {
                let v = self.eval(e)?;
                Ok(self.sval(&v))
            }
            None => Ok("".into()),
        }
    }

    fn num_arg(&mut self, args: &[Expr], i: usize) -> Flow<f64> {
        match args.get(i) {
            Some(e) => Ok(self.eval(e)?.num()),
            None => Ok(0.0),
        }
    }

    fn array_arg(&mut self, args: &[Expr], i: usize, what: &str) -> Flow<Rc<RefCell<Arr>>> {
        match args.get(i) {
            Some(Expr::Var(v)) => self.array(*v),
            _ => fatal(format!("awk: {what}: argument {} is not an array", i + 1)),
        }
    }

    /// A string's length as gawk counts it: in characters in a UTF-8
    /// locale, in bytes in the C locale.
    fn units(&self, s: &str) -> usize {
        if self.utf8 {
            s.chars().count()
        } else {
            crate::lossless::byte_len(s)
        }
    }

    fn builtin(&mut self, name: &str, args: &[Expr]) -> Flow<Val> {
        let n = |x: f64| Ok(Val::Num(x));
        match name {
            "length" => {
                if let Some(Expr::Var(v)) = args.first()
                    && let Cell::Arr(a) = self.cell(*v)
                {
                    let len = a.borrow().len();
                    return n(len as f64);
                }
                let s = if args.is_empty() {
                    self.record.clone()
                } else {
                    self.str_arg(args, 0)?
                };
                n(self.units(&s) as f64)
            }
            "substr" => {
                let s = self.str_arg(args, 0)?;
                // gawk: a start before 1 is 1, the length is kept;
                // fractions are truncated.
                let m = self.num_arg(args, 1)?.trunc();
                let len = self.units(&s) as f64;
                let start = m.max(1.0);
                let end = if args.len() > 2 {
                    let l = self.num_arg(args, 2)?;
                    if l.is_nan() {
                        return Ok(Val::str(""));
                    }
                    start + l.trunc()
                } else {
                    len + 1.0
                };
                let end = end.min(len + 1.0);
                if end <= start || start > len {
                    return Ok(Val::str(""));
                }
                let (from, to) = (start as usize - 1, end as usize - 1);
                let out: String = if self.utf8 {
                    s.chars().skip(from).take(to - from).collect()
                } else {
                    // Bytes, as gawk in the C locale; the pieces of a
                    // character cut in two are carried as bytes.
                    crate::lossless::decode(&crate::lossless::encode(&s)[from..to]).into_owned()
                };
                Ok(Val::Str(out.into()))
            }
            "index" => {
                let s = self.str_arg(args, 0)?;
                let t = self.str_arg(args, 1)?;
                n(match s.find(t.as_ref()) {
                    Some(b) => (self.units(&s[..b]) + 1) as f64,
                    None => 0.0,
                })
            }
            "split" => {
                let s = self.str_arg(args, 0)?;
                let arr = self.array_arg(args, 1, "split")?;
                let pieces = match args.get(2) {
                    Some(Expr::Regex(r)) => {
                        if s.is_empty() {
                            Vec::new()
                        } else {
                            let re = self.regex(r)?;
                            re.split(&s).into_iter().map(Rc::from).collect()
                        }
                    }
                    Some(e) => {
                        let v = self.eval(e)?;
                        let fs = self.sval(&v);
                        self.split_with(&s, &fs, false)?
                    }
                    None => {
                        let fs = self.global_str(FS);
                        self.split_with(&s, &fs, false)?
                    }
                };
                let mut a = arr.borrow_mut();
                a.clear();
                for (i, p) in pieces.iter().enumerate() {
                    a.insert((i + 1).to_string().into(), Val::input(p));
                }
                n(pieces.len() as f64)
            }
            "sub" | "gsub" => {
                let re = match args.first() {
                    Some(e) => self.regex_of(e)?,
                    None => return fatal(format!("awk: {name}: needs a regular expression")),
                };
                let repl = self.str_arg(args, 1)?;
                let target = args
                    .get(2)
                    .cloned()
                    .unwrap_or(Expr::Field(Box::new(Expr::Num(0.0))));
                let cur = self.eval(&target)?;
                let text = self.sval(&cur);
                let (out, count) = substitute(&re, &text, &repl, name == "gsub");
                if count > 0 {
                    self.assign_to(&target, Val::Str(out.into()))?;
                }
                n(count as f64)
            }
            "gensub" => {
                let re = match args.first() {
                    Some(e) => self.regex_of(e)?,
                    None => return fatal("awk: gensub: needs a regular expression"),
                };
                let repl = self.str_arg(args, 1)?;
                let how = self.str_arg(args, 2)?;
                let target = match args.get(3) {
                    Some(e) => {
                        let v = self.eval(e)?;
                        self.sval(&v)
                    }
                    None => self.record.clone(),
                };
                let which = if how.starts_with(['g', 'G']) {
                    0
                } else {
                    (leading_number(&how) as usize).max(1)
                };
                Ok(Val::Str(gensub(&re, &target, &repl, which).into()))
            }
            "match" => {
                let s = self.str_arg(args, 0)?;
                let re = match args.get(1) {
                    Some(e) => self.regex_of(e)?,
                    None => return fatal("awk: match: needs a regular expression"),
                };
                let caps = re.captures_at(&s, 0);
                let (start, len) = match caps.as_ref().and_then(|c| c.first().cloned().flatten()) {
                    Some(m) => (self.units(&s[..m.start]) + 1, self.units(&s[m]) as f64),
                    None => (0, -1.0),
                };
                if args.len() > 2 {
                    let arr = self.array_arg(args, 2, "match")?;
                    let mut a = arr.borrow_mut();
                    a.clear();
                    if let Some(c) = &caps {
                        for (i, g) in c.iter().enumerate() {
                            if let Some(g) = g {
                                let text = &s[g.clone()];
                                a.insert(i.to_string().into(), Val::input(text));
                                let gs = self.units(&s[..g.start]) + 1;
                                let glen = self.units(text);
                                a.insert(format!("{i}\u{1c}start").into(), Val::Num(gs as f64));
                                a.insert(format!("{i}\u{1c}length").into(), Val::Num(glen as f64));
                            }
                        }
                    }
                }
                self.set_global(RSTART, Val::Num(start as f64));
                self.set_global(RLENGTH, Val::Num(len));
                n(start as f64)
            }
            "sprintf" => {
                let out = self.format(args)?;
                Ok(Val::Str(crate::lossless::decode(&out).into_owned().into()))
            }
            "tolower" => {
                let s = self.str_arg(args, 0)?;
                let low = if self.utf8 {
                    s.to_lowercase()
                } else {
                    s.to_ascii_lowercase()
                };
                Ok(Val::Str(low.into()))
            }
            "toupper" => {
                let s = self.str_arg(args, 0)?;
                let up = if self.utf8 {
                    s.to_uppercase()
                } else {
                    s.to_ascii_uppercase()
                };
                Ok(Val::Str(up.into()))
            }
            "int" => n(self.num_arg(args, 0)?.trunc()),
            "sqrt" => n(self.num_arg(args, 0)?.sqrt()),
            "exp" => n(self.num_arg(args, 0)?.exp()),
            "log" => n(self.num_arg(args, 0)?.ln()),
            "sin" => n(self.num_arg(args, 0)?.sin()),
            "cos" => n(self.num_arg(args, 0)?.cos()),
            "atan2" => {
                let y = self.num_arg(args, 0)?;
                let x = self.num_arg(args, 1)?;
                n(y.atan2(x))
            }
            "rand" => {
                // xorshift64*: deterministic for a seed, like awk's rand().
                self.rand_state ^= self.rand_state >> 12;
                self.rand_state ^= self.rand_state << 25;
                self.rand_state ^= self.rand_state >> 27;
                let r = self.rand_state.wrapping_mul(0x2545_F491_4F6C_DD1D);
                n((r >> 11) as f64 / (1u64 << 53) as f64)
            }
            "srand" => {
                let prev = self.seed;
                self.seed = if args.is_empty() {
                    crate::time::epoch_seconds(self.cx.env.now) as f64
                } else {
                    self.num_arg(args, 0)?
                };
                self.rand_state = (self.seed as i64 as u64) | 1;
                n(prev)
            }
            "systime" => n(crate::time::epoch_seconds(self.cx.env.now) as f64),
            "strftime" => {
                let fmt = if args.is_empty() {
                    "%a %b %e %H:%M:%S %Z %Y".into()
                } else {
                    self.str_arg(args, 0)?
                };
                let ts = if args.len() > 1 {
                    self.num_arg(args, 1)?
                } else {
                    crate::time::epoch_seconds(self.cx.env.now) as f64
                };
                Ok(Val::Str(crate::time::strftime(&fmt, ts as i64, 0).into()))
            }
            "system" => {
                let cmd = self.str_arg(args, 0)?;
                self.flush();
                let status = self.cx.run_shell(&cmd, vec!["sh".to_owned()], true);
                n(f64::from(status))
            }
            "close" | "fflush" => {
                if name == "close" {
                    let f = self.str_arg(args, 0)?;
                    self.files.remove(f.as_ref());
                    self.commands.remove(f.as_ref());
                    if let Some(k) = self.pipes.iter().position(|(c, _)| **c == *f) {
                        let (cmd, input) = self.pipes.remove(k);
                        self.flush();
                        let status = self.cx.shell_input(&cmd, input);
                        return n(f64::from(status));
                    }
                }
                n(0.0)
            }
            "asort" | "asorti" => {
                let src = self.array_arg(args, 0, name)?;
                let mut items: Vec<Val> = if name == "asort" {
                    src.borrow().values().cloned().collect()
                } else {
                    src.borrow().keys().into_iter().map(Val::Str).collect()
                };
                items.sort_by(|a, b| {
                    if a.is_numeric() && b.is_numeric() && name == "asort" {
                        a.num()
                            .partial_cmp(&b.num())
                            .unwrap_or(std::cmp::Ordering::Equal)
                    } else {
                        a.to_str("%.6g").cmp(&b.to_str("%.6g"))
                    }
                });
                let dest = if args.len() > 1 {
                    self.array_arg(args, 1, name)?
                } else {
                    src
                };
                let mut d = dest.borrow_mut();
                d.clear();
                let count = items.len();
                for (i, v) in items.into_iter().enumerate() {
                    d.insert((i + 1).to_string().into(), v);
                }
                n(count as f64)
            }
            "and" | "or" | "xor" | "lshift" | "rshift" => {
                let a = self.num_arg(args, 0)? as u64;
                let b = self.num_arg(args, 1)? as u64;
                n(match name {
                    "and" => a & b,
                    "or" => a | b,
                    "xor" => a ^ b,
                    "lshift" => a.wrapping_shl(b as u32),
                    _ => a.wrapping_shr(b as u32),
                } as f64)
            }
            "compl" => n((!(self.num_arg(args, 0)? as u64) & ((1 << 53) - 1)) as f64),
            "strtonum" => {
                let s = self.str_arg(args, 0)?;
                let t = s.trim();
                let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    i64::from_str_radix(h, 16).unwrap_or(0) as f64
                } else if t.len() > 1 && t.starts_with('0') && t.bytes().all(|b| b.is_ascii_digit())
                {
                    i64::from_str_radix(&t[1..], 8).unwrap_or(0) as f64
                } else {
                    leading_number(t)
                };
                n(v)
            }
            "typeof" | "isarray" => {
                let kind = match args.first() {
                    Some(Expr::Var(v)) => match self.cell(*v) {
                        Cell::Arr(_) => "array",
                        Cell::Val(Val::Uninit) => "untyped",
                        Cell::Val(Val::Num(_)) => "number",
                        Cell::Val(Val::StrNum(..)) => "strnum",
                        Cell::Val(Val::Str(_)) => "string",
                    },
                    Some(e) => match self.eval(e)? {
                        Val::Num(_) => "number",
                        Val::Str(_) => "string",
                        Val::StrNum(..) => "strnum",
                        Val::Uninit => "unassigned",
                    },
                    None => "untyped",
                };
                if name == "isarray" {
                    n(f64::from(u8::from(kind == "array")))
                } else {
                    Ok(Val::str(kind))
                }
            }
            "mktime" => n(-1.0),
            _ => fatal(format!("awk: function `{name}' is not supported")),
        }
    }

    /// `printf`/`sprintf`: each value converted to the text its
    /// conversion reads, then the shell printf's formatter.
    fn format(&mut self, args: &[Expr]) -> Flow<Vec<u8>> {
        let fmt = self.str_arg(args, 0)?;
        let kinds = match super::printf::argument_kinds(&fmt) {
            Ok(k) => k,
            Err(e) => return fatal(format!("awk: {e}")),
        };
        // gawk refuses a format with more conversions than values.
        if kinds.len() > args.len().saturating_sub(1) {
            // gawk shows the format, and a caret under the conversion (or
            // `*`) that had no value left.
            let at = ran_out_at(&fmt, args.len().saturating_sub(1));
            return fatal(format!(
                "awk: fatal: not enough arguments to satisfy format string\n\t`{fmt}'\n\t{}^ ran out for this one",
                " ".repeat(at)
            ));
        }
        let mut texts = Vec::with_capacity(kinds.len());
        for (i, kind) in kinds.iter().enumerate() {
            let Some(e) = args.get(i + 1) else { break };
            let v = self.eval(e)?;
            texts.push(match kind {
                'd' | 'i' | 'o' | 'x' | 'X' | 'u' | '*' => int_text(v.num()),
                'c' => match &v {
                    Val::Num(x) | Val::StrNum(_, x) => {
                        // The C locale prints the low byte, as gawk does.
                        if self.utf8 {
                            char::from_u32(*x as u32).map_or(String::new(), String::from)
                        } else {
                            crate::lossless::byte_char((*x as u32 & 0xff) as u8).to_string()
                        }
                    }
                    other => self.sval(other).chars().take(1).collect(),
                },
                'e' | 'E' | 'f' | 'F' | 'g' | 'G' => float_text(v.num()),
                _ => self.sval(&v).to_string(),
            });
        }
        super::printf::format_once(&fmt, &texts, self.utf8).or_else(|e| fatal(format!("awk: {e}")))
    }

    fn write(&mut self, dest: &Dest, bytes: &[u8]) -> Flow<()> {
        match dest {
            Dest::Stdout => {
                self.out.extend_from_slice(bytes);
                if self.out.len() >= FLUSH_AT {
                    self.flush();
                }
                Ok(())
            }
            Dest::Redirect(op, target) => {
                let t = self.eval(target)?;
                let name = self.sval(&t);
                if *op == "|" {
                    match self.pipes.iter_mut().find(|(c, _)| **c == *name) {
                        Some((_, input)) => input.extend_from_slice(bytes),
                        None => {
                            self.flush();
                            self.pipes.push((name.to_string(), bytes.to_vec()));
                        }
                    }
                    return Ok(());
                }
                match name.as_ref() {
                    "/dev/stdout" | "-" => {
                        self.out.extend_from_slice(bytes);
                        Ok(())
                    }
                    "/dev/stderr" => {
                        self.flush();
                        let _ = self.cx.err.write_all(bytes);
                        Ok(())
                    }
                    "/dev/null" => Ok(()),
                    _ => fatal(format!(
                        "awk: fatal: cannot redirect to `{name}': Read-only file system"
                    )),
                }
            }
        }
    }

    // ----- statements -----

    fn block(&mut self, stmts: &[Stmt]) -> Flow<()> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Flow<()> {
        match s {
            Stmt::Line(n) => self.line = *n,
            Stmt::Expr(e) => {
                self.eval(e)?;
            }
            Stmt::Print(args, dest) => {
                let mut line = String::new();
                if args.is_empty() {
                    line.push_str(&self.record);
                } else {
                    let ofs = self.global_str(OFS);
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            line.push_str(&ofs);
                        }
                        let v = self.eval(a)?;
                        line.push_str(&self.output_str(&v));
                    }
                }
                line.push_str(&self.global_str(ORS));
                self.write(dest, &crate::lossless::encode(&line))?;
            }
            Stmt::Printf(args, dest) => {
                let out = self.format(args)?;
                self.write(dest, &out)?;
            }
            Stmt::If(c, a, b) => {
                if self.eval(c)?.truthy() {
                    self.stmt(a)?;
                } else if let Some(b) = b {
                    self.stmt(b)?;
                }
            }
            Stmt::While(c, body) => {
                while self.eval(c)?.truthy() {
                    match self.stmt(body) {
                        Err(Ctl::Break) => break,
                        Err(Ctl::Continue) | Ok(()) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Stmt::Do(body, c) => loop {
                match self.stmt(body) {
                    Err(Ctl::Break) => break,
                    Err(Ctl::Continue) | Ok(()) => {}
                    Err(e) => return Err(e),
                }
                if !self.eval(c)?.truthy() {
                    break;
                }
            },
            Stmt::For(init, cond, step, body) => {
                if let Some(i) = init {
                    self.eval(i)?;
                }
                loop {
                    if let Some(c) = cond
                        && !self.eval(c)?.truthy()
                    {
                        break;
                    }
                    match self.stmt(body) {
                        Err(Ctl::Break) => break,
                        Err(Ctl::Continue) | Ok(()) => {}
                        Err(e) => return Err(e),
                    }
                    if let Some(s) = step {
                        self.eval(s)?;
                    }
                }
            }
            Stmt::ForIn(k, a, body) => {
                let arr = self.array(*a)?;
                // The keys as they are when the loop starts: one deleted in
                // the body is still visited, as in gawk.
                let mut keys = arr.borrow().keys();
                self.sort_keys(&arr.borrow(), &mut keys);
                for key in keys {
                    self.set_var(*k, Val::input(&key))?;
                    match self.stmt(body) {
                        Err(Ctl::Break) => break,
                        Err(Ctl::Continue) | Ok(()) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Stmt::Block(b) => self.block(b)?,
            Stmt::Next => return Err(Ctl::Next),
            Stmt::NextFile => return Err(Ctl::NextFile),
            Stmt::Exit(e) => {
                if let Some(e) = e {
                    self.exit_status = self.eval(e)?.num() as i32;
                }
                return Err(Ctl::Exit(self.exit_status));
            }
            Stmt::Return(e) => {
                let v = match e {
                    Some(e) => self.eval(e)?,
                    None => Val::Uninit,
                };
                return Err(Ctl::Return(v));
            }
            Stmt::Break => return Err(Ctl::Break),
            Stmt::Switch(subject, arms) => {
                let v = self.eval(subject)?;
                let mut start = None;
                for (k, (label, _)) in arms.iter().enumerate() {
                    let hit = match label {
                        None => false,
                        Some(Expr::Regex(r)) => {
                            let re = self.regex(r)?;
                            re.is_match(&self.sval(&v))
                        }
                        Some(c) => {
                            let c = self.eval(c)?;
                            if v.is_numeric() && c.is_numeric() {
                                v.num() == c.num()
                            } else {
                                self.sval(&v) == self.sval(&c)
                            }
                        }
                    };
                    if hit {
                        start = Some(k);
                        break;
                    }
                }
                let start = start.or_else(|| arms.iter().position(|(l, _)| l.is_none()));
                if let Some(start) = start {
                    // Falls through the arms after it until a `break`.
                    'arms: for (_, body) in &arms[start..] {
                        for st in body {
                            match self.stmt(st) {
                                Err(Ctl::Break) => break 'arms,
                                r => r?,
                            }
                        }
                    }
                }
            }
            Stmt::Continue => return Err(Ctl::Continue),
            Stmt::Delete(v, idx) => {
                let arr = self.array(*v)?;
                match idx {
                    Some(idx) => {
                        let k = self.key(idx)?;
                        arr.borrow_mut().remove(&k);
                    }
                    None => arr.borrow_mut().clear(),
                }
            }
        }
        Ok(())
    }

    fn matches(&mut self, i: usize, p: &Pattern) -> Flow<bool> {
        Ok(match p {
            Pattern::All => true,
            Pattern::Expr(e) => self.eval(e)?.truthy(),
            Pattern::Range(a, b) => {
                if self.ranges[i] {
                    if self.eval(b)?.truthy() {
                        self.ranges[i] = false;
                    }
                    true
                } else if self.eval(a)?.truthy() {
                    if !self.eval(b)?.truthy() {
                        self.ranges[i] = true;
                    }
                    true
                } else {
                    false
                }
            }
            _ => false,
        })
    }

    /// Runs every `BEGIN` (or `END`) action in order: the code of an
    /// `exit` that stopped them, or the fatal error's message.
    /// gawk's `PROCINFO["sorted_in"]`: the order `for (k in a)` visits
    /// keys in (`@ind_str_asc`, `@ind_num_desc`, `@val_num_asc`...);
    /// unset, the order they were added.
    fn sort_keys(&self, arr: &Arr, keys: &mut [Rc<str>]) {
        let order = match &self.globals[PROCINFO] {
            Cell::Arr(p) => p
                .borrow()
                .get("sorted_in")
                .map(|v| self.sval(v).to_string()),
            Cell::Val(_) => None,
        };
        let Some(order) = order else {
            return;
        };
        let num = |s: &str| leading_number(s);
        let by_key_str = |a: &Rc<str>, b: &Rc<str>| a.cmp(b);
        let val = |k: &Rc<str>| arr.get(k).cloned().unwrap_or(Val::Uninit);
        let cmp_num = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
        match order.as_str() {
            "@ind_str_asc" => keys.sort_by(by_key_str),
            "@ind_str_desc" => keys.sort_by(|a, b| b.cmp(a)),
            "@ind_num_asc" => keys.sort_by(|a, b| cmp_num(num(a), num(b)).then_with(|| a.cmp(b))),
            "@ind_num_desc" => keys.sort_by(|a, b| cmp_num(num(b), num(a)).then_with(|| b.cmp(a))),
            "@val_num_asc" => {
                keys.sort_by(|a, b| cmp_num(val(a).num(), val(b).num()).then_with(|| a.cmp(b)));
            }
            "@val_num_desc" => {
                keys.sort_by(|a, b| cmp_num(val(b).num(), val(a).num()).then_with(|| b.cmp(a)));
            }
            "@val_str_asc" => {
                keys.sort_by(|a, b| {
                    self.sval(&val(a))
                        .cmp(&self.sval(&val(b)))
                        .then_with(|| a.cmp(b))
                });
            }
            "@val_str_desc" => {
                keys.sort_by(|a, b| {
                    self.sval(&val(b))
                        .cmp(&self.sval(&val(a)))
                        .then_with(|| b.cmp(a))
                });
            }
            _ => {}
        }
    }

    /// gawk's `BEGINFILE` and `ENDFILE` rules, around each input file.
    fn file_rules(&mut self, which: &Pattern) -> Flow<()> {
        match self.special_rules(which) {
            Ok(None) => Ok(()),
            Ok(Some(code)) => Err(Ctl::Exit(code)),
            Err(m) => Err(Ctl::Fatal(m)),
        }
    }

    fn special_rules(&mut self, which: &Pattern) -> Result<Option<i32>, String> {
        let prog = self.prog;
        for r in &prog.rules {
            if r.pattern == *which
                && let Some(a) = &r.action
            {
                self.line = r.line;
                match self.block(a) {
                    Ok(()) | Err(Ctl::Next | Ctl::NextFile | Ctl::Break | Ctl::Continue) => {}
                    Err(Ctl::Return(_)) => {}
                    Err(Ctl::Exit(c)) => return Ok(Some(c)),
                    Err(Ctl::Fatal(m)) => return Err(m),
                }
            }
        }
        Ok(None)
    }

    /// Runs the program; returns the exit status.
    fn run(&mut self) -> i32 {
        let prog = self.prog;
        let mut exit = match self.special_rules(&Pattern::Begin) {
            Ok(e) => e,
            Err(m) => return self.die(&m),
        };
        let needs_input = prog
            .rules
            .iter()
            .any(|r| !matches!(r.pattern, Pattern::Begin));
        if exit.is_none() && needs_input {
            'records: loop {
                if self.cx.stdout_gone() {
                    break;
                }
                let rec = match self.next_main_record() {
                    Ok(Some(r)) => r,
                    Ok(None) => break,
                    Err(Ctl::Exit(c)) => {
                        exit = Some(c);
                        break;
                    }
                    Err(Ctl::Fatal(m)) => return self.die(&m),
                    Err(_) => break,
                };
                self.bump(NR);
                self.bump(FNR);
                self.set_record(&rec);
                for (i, r) in prog.rules.iter().enumerate() {
                    if matches!(
                        r.pattern,
                        Pattern::Begin | Pattern::End | Pattern::BeginFile | Pattern::EndFile
                    ) {
                        continue;
                    }
                    self.line = r.line;
                    let hit = match self.matches(i, &r.pattern) {
                        Ok(h) => h,
                        Err(Ctl::Fatal(m)) => return self.die(&m),
                        Err(Ctl::Exit(c)) => {
                            exit = Some(c);
                            break 'records;
                        }
                        Err(_) => false,
                    };
                    if !hit {
                        continue;
                    }
                    let r = match &r.action {
                        Some(a) => self.block(a),
                        None => {
                            let mut line = self.record.to_string();
                            line.push_str(&self.global_str(ORS));
                            self.write(&Dest::Stdout, &crate::lossless::encode(&line))
                        }
                    };
                    match r {
                        Ok(()) | Err(Ctl::Break | Ctl::Continue | Ctl::Return(_)) => {}
                        Err(Ctl::Next) => continue 'records,
                        Err(Ctl::NextFile) => {
                            self.main = None;
                            continue 'records;
                        }
                        Err(Ctl::Exit(c)) => {
                            exit = Some(c);
                            break 'records;
                        }
                        Err(Ctl::Fatal(m)) => return self.die(&m),
                    }
                }
            }
        }
        // END runs after `exit` in BEGIN or a rule, but not after one in END.
        match self.special_rules(&Pattern::End) {
            Ok(Some(c)) => exit = Some(c),
            Ok(None) => {}
            Err(m) => return self.die(&m),
        }
        // gawk closes its pipes at exit before its own output is flushed.
        for (cmd, input) in std::mem::take(&mut self.pipes) {
            self.cx.shell_input(&cmd, input);
        }
        self.flush();
        if self.status_error && exit.is_none() {
            return 2;
        }
        exit.unwrap_or(0)
    }

    fn die(&mut self, msg: &str) -> i32 {
        self.flush();
        let msg = self.located(msg);
        self.cx.err(msg);
        2
    }

    /// A fatal error as gawk words it: after the source line that ran
    /// last, and the input file and record while one is being read.
    fn located(&self, msg: &str) -> String {
        self.located_in(msg, true)
    }

    /// `with_input`: whether the file being read is named (not while the
    /// next one is being opened).
    fn located_in(&self, msg: &str, with_input: bool) -> String {
        let Some(rest) = msg
            .strip_prefix("awk: ")
            .filter(|r| self.line > 0 && !r.starts_with(&format!("{}:", self.source)))
        else {
            return msg.to_owned();
        };
        let fnr = match &self.globals[FNR] {
            Cell::Val(v) => v.num(),
            Cell::Arr(_) => 0.0,
        };
        let file = match &self.globals[FILENAME] {
            Cell::Val(v) => v.to_str("%.6g").to_string(),
            Cell::Arr(_) => String::new(),
        };
        let input = if with_input && fnr > 0.0 && !file.is_empty() {
            format!("(FILENAME={file} FNR={fnr}) ")
        } else {
            String::new()
        };
        format!("awk: {}:{}: {input}{rest}", self.source, self.line)
    }
}

fn syntax_is_name(s: &str) -> bool {
    crate::syntax::is_name(s)
}

fn arith(op: &str, x: f64, y: f64) -> Flow<f64> {
    Ok(match op {
        "+" => x + y,
        "-" => x - y,
        "*" => x * y,
        "/" => {
            if y == 0.0 {
                return fatal("awk: fatal: division by zero attempted");
            }
            x / y
        }
        "%" => {
            if y == 0.0 {
                return fatal("awk: fatal: division by zero attempted in `%'");
            }
            x % y
        }
        "^" => {
            if y == y.trunc() && y.abs() < 1024.0 {
                x.powi(y as i32)
            } else {
                x.powf(y)
            }
        }
        _ => return fatal(format!("awk: unknown operator {op}")),
    })
}

/// The fields of `rec` under `FPAT`: each is the longest match at the
/// leftmost place; an empty match right after a field is no field, an
/// empty match elsewhere is an empty field (gawk's rules).
fn split_pattern(rec: &str, re: &PosixRegex) -> Vec<Rc<str>> {
    let mut fields = Vec::new();
    let mut at = 0;
    let mut after_field = None;
    while at <= rec.len() {
        let Some(m) = re.find_at(rec, at) else { break };
        let next = m.end + rec[m.end..].chars().next().map_or(1, char::len_utf8);
        if m.is_empty() {
            if after_field != Some(m.start) {
                fields.push(Rc::from(""));
            }
            after_field = None;
            at = next;
        } else {
            fields.push(Rc::from(&rec[m.clone()]));
            after_field = Some(m.end);
            at = m.end;
        }
    }
    fields
}

/// `sub`/`gsub`: `&` is the match, `\&` a literal `&`, `\\` a backslash.
fn substitute(re: &PosixRegex, text: &str, repl: &str, global: bool) -> (String, usize) {
    let mut out = String::new();
    let mut count = 0;
    let mut last = 0;
    let mut at = 0;
    // Where the last non-empty match ended: an empty match there is
    // skipped (gawk's rule).
    let mut after_match = None;
    while at <= text.len() {
        let Some(m) = re.find_at(text, at) else { break };
        if m.is_empty() && after_match == Some(m.start) {
            match text[m.start..].chars().next() {
                Some(c) => {
                    at = m.start + c.len_utf8();
                    continue;
                }
                None => break,
            }
        }
        out.push_str(&text[last..m.start]);
        let mut cs = repl.chars().peekable();
        while let Some(c) = cs.next() {
            match c {
                '\\' if matches!(cs.peek(), Some('&')) => {
                    out.push('&');
                    cs.next();
                }
                '\\' if matches!(cs.peek(), Some('\\')) => {
                    out.push('\\');
                    cs.next();
                }
                '&' => out.push_str(&text[m.clone()]),
                c => out.push(c),
            }
        }
        count += 1;
        last = m.end;
        if m.is_empty() {
            match text[m.end..].chars().next() {
                Some(c) => {
                    out.push(c);
                    last = m.end + c.len_utf8();
                    at = last;
                }
                None => {
                    at = text.len() + 1;
                }
            }
        } else {
            at = m.end;
            after_match = Some(m.end);
        }
        if !global {
            break;
        }
    }
    if last <= text.len() {
        out.push_str(&text[last..]);
    }
    (out, count)
}

/// `gensub`: `\0`/`&` the match, `\1`..`\9` groups; `which` 0 for all.
fn gensub(re: &PosixRegex, text: &str, repl: &str, which: usize) -> String {
    let mut out = String::new();
    let mut last = 0;
    let mut k = 0;
    for found in re.find_all(text) {
        k += 1;
        if which != 0 && k != which {
            continue;
        }
        let caps = re.captures_at(text, found.start).unwrap_or_default();
        let group = |g: usize| caps.get(g).cloned().flatten().map_or("", |r| &text[r]);
        out.push_str(&text[last..found.start]);
        let mut cs = repl.chars().peekable();
        while let Some(c) = cs.next() {
            match c {
                '\\' => match cs.next() {
                    Some(d @ '0'..='9') => out.push_str(group(d as usize - '0' as usize)),
                    Some('&') => out.push('&'),
                    Some(o) => out.push(o),
                    None => out.push('\\'),
                },
                '&' => out.push_str(&text[found.clone()]),
                c => out.push(c),
            }
        }
        last = found.end;
        if which != 0 {
            break;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// Escape sequences in `-F`, `-v` and operand assignments, as in strings;
/// gawk's warnings go to `warnings`.
fn unescape(s: &str, warnings: &mut Vec<String>) -> String {
    if !s.contains('\\') {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut cs = s.char_indices();
    while let Some((at, c)) = cs.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = cs.next() else {
            out.push('\\');
            break;
        };
        let rest: String = s[at + 1 + e.len_utf8()..].chars().take(2).collect();
        let (text, used) = syntax::unescape_one(e, &rest, |w| warnings.push(format!("awk: {w}")));
        out.push_str(&text);
        for _ in 0..used {
            cs.next();
        }
    }
    crate::lossless::normalize(&out).into_owned()
}

/// gawk names a program file where it names the command line.
fn located_in(msg: &str, program_files: &[String], sources: usize) -> String {
    match (program_files, sources) {
        ([file], 1) => msg.replace("awk: cmd. line:", &format!("awk: {file}:")),
        _ => msg.to_owned(),
    }
}

const USAGE: &str = "Usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]";

/// `awk [-F FS] [-v VAR=VALUE]... ('PROGRAM' | -f FILE) [FILE | VAR=VALUE]...`
/// Parses `program` as awk would, without running it (for the fuzz
/// target); whether it parsed.
pub(crate) fn check(program: &str) -> bool {
    syntax::parse(program).is_ok()
}

pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut fs = None;
    let mut assigns = Vec::new();
    // Warnings about escape sequences in `-F` and `-v`, printed in order
    // before the program's own.
    let mut warnings = Vec::new();
    let mut sources = Vec::new();
    let mut program_files: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        i += 1;
        let (flag, inline) = if a.starts_with("--") {
            match a.split_once('=') {
                Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
                None => (a.clone(), None),
            }
        } else {
            (a[..2].to_owned(), (a.len() > 2).then(|| a[2..].to_owned()))
        };
        let takes = matches!(
            flag.as_str(),
            "-F" | "-v"
                | "-f"
                | "-e"
                | "-W"
                | "--field-separator"
                | "--assign"
                | "--file"
                | "--source"
        );
        let value = if takes {
            match inline.or_else(|| {
                let v = args.get(i).cloned();
                i += 1;
                v
            }) {
                Some(v) => v,
                None => {
                    cx.err(format_args!(
                        "awk: option requires an argument -- {}",
                        &flag[1..]
                    ));
                    cx.err(USAGE);
                    return 1;
                }
            }
        } else {
            String::new()
        };
        match flag.as_str() {
            "-F" | "--field-separator" => {
                fs = Some(if value == "t" {
                    "\t".to_owned()
                } else {
                    unescape(&value, &mut warnings)
                });
            }
            "-v" | "--assign" => match value.split_once('=') {
                Some((n, v)) if syntax_is_name(n) => {
                    assigns.push((n.to_owned(), unescape(v, &mut warnings)));
                }
                _ => {
                    cx.err(format_args!(
                        "awk: `{value}' argument to `-v' not in `var=value' form"
                    ));
                    return 2;
                }
            },
            "-f" | "--file" => match cx.read_operand(&value) {
                Ok(d) => {
                    sources.push(crate::lossless::decode(&d).into_owned());
                    program_files.push(value.clone());
                }
                // gawk counts a directory as an error, not a fatal one,
                // and ends with status 1.
                Err(crate::fs::FsError::IsADirectory(_)) => {
                    cx.err(format_args!(
                        "awk: {value}:1: error: cannot read source file `{value}': Is a directory"
                    ));
                    return 1;
                }
                Err(e) => {
                    cx.err(format_args!(
                        "awk: fatal: cannot open source file `{value}' for reading: {}",
                        e.strerror()
                    ));
                    return 2;
                }
            },
            "-e" | "--source" => sources.push(value),
            "--posix" | "--traditional" | "--re-interval" | "-P" | "-c" | "-r" | "--lint"
            | "--sandbox" | "-S" => {}
            // `-W WORD`: POSIX's way to a long option (`-W version`).
            "-W" if !value.is_empty() && "version".starts_with(value.as_str()) => {
                cx.outs("GNU Awk 5.2.1 (vfs-sh awk)\n");
                return 0;
            }
            "-W" if !value.is_empty()
                && ["help", "usage"]
                    .iter()
                    .any(|w| w.starts_with(value.as_str())) =>
            {
                cx.outs(&format!("{USAGE}\n"));
                return 0;
            }
            "-W" if !value.is_empty()
                && [
                    "posix",
                    "traditional",
                    "re-interval",
                    "lint",
                    "sandbox",
                    "compat",
                ]
                .iter()
                .any(|w| w.starts_with(value.as_str())) => {}
            "-W" => cx.err(format_args!(
                "awk: option `-W {value}' unrecognized, ignored"
            )),
            "--version" | "-V" => {
                cx.outs("GNU Awk 5.2.1 (vfs-sh awk)\n");
                return 0;
            }
            "--help" | "-h" => {
                cx.outs(&format!("{USAGE}\n"));
                return 0;
            }
            other => {
                cx.err(format_args!("awk: not an option: {other}"));
                cx.err(USAGE);
                return 2;
            }
        }
    }
    if sources.is_empty() {
        match args.get(i) {
            Some(p) => {
                sources.push(p.clone());
                i += 1;
            }
            None => {
                cx.err(USAGE);
                return 1;
            }
        }
    }
    let sources_count = sources.len();
    let text = sources.join("\n");
    for w in warnings {
        cx.err(w);
    }
    let prog = match syntax::parse(&text) {
        Ok(p) => {
            for w in &p.warnings {
                cx.err(located_in(w, &program_files, sources.len()));
            }
            p
        }
        Err(e) => {
            cx.err(located_in(&e, &program_files, sources.len()));
            return 1;
        }
    };
    let operands: Vec<String> = args[i..].to_vec();
    let utf8 = super::utf8_locale(cx);
    let mut awk = Awk {
        prog: &prog,
        cx,
        globals: vec![Cell::Val(Val::Uninit); prog.globals.len()],
        frames: Vec::new(),
        record: "".into(),
        fields: None,
        fs_error: None,
        split_by: SplitBy::Fs,
        regexes: Default::default(),
        ranges: vec![false; prog.rules.len()],
        out: Vec::new(),
        operands: operands.iter().cloned().collect(),
        main: None,
        saw_file: false,
        files: HashMap::new(),
        commands: HashMap::new(),
        pipes: Vec::new(),
        seed: 0.0,
        rand_state: 0x9E37_79B9_7F4A_7C15,
        status_error: false,
        exit_status: 0,
        utf8,
        line: 0,
        source: match (&program_files[..], sources_count) {
            ([file], 1) => file.clone(),
            _ => "cmd. line".to_owned(),
        },
    };
    for (slot, v) in [
        (FS, Val::str(" ")),
        (OFS, Val::str(" ")),
        (ORS, Val::str("\n")),
        (RS, Val::str("\n")),
        (SUBSEP, Val::str("\u{1c}")),
        (CONVFMT, Val::str("%.6g")),
        (OFMT, Val::str("%.6g")),
        (NR, Val::Num(0.0)),
        (NF, Val::Num(0.0)),
        (FNR, Val::Num(0.0)),
        (RSTART, Val::Num(0.0)),
        (RLENGTH, Val::Num(-1.0)),
        (FILENAME, Val::Uninit),
        (ARGC, Val::Num((operands.len() + 1) as f64)),
    ] {
        awk.set_global(slot, v);
    }
    let mut argv = Arr::new();
    argv.insert("0".into(), Val::str("awk"));
    for (k, o) in operands.iter().enumerate() {
        argv.insert((k + 1).to_string().into(), Val::input(o));
    }
    awk.globals[ARGV] = Cell::Arr(Rc::new(RefCell::new(argv)));
    let mut environ = Arr::new();
    for (k, v) in [
        ("HOME", "/"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("LC_ALL", "C"),
        ("TZ", "UTC"),
    ] {
        environ.insert(k.into(), Val::str(v));
    }
    awk.globals[ENVIRON] = Cell::Arr(Rc::new(RefCell::new(environ)));
    if let Some(fs) = fs {
        // gawk compiles `-F` before it runs anything.
        if fs.chars().count() > 1
            && fs != "\\t"
            && let Err(Ctl::Fatal(msg)) = awk.regex(&fs)
        {
            return u8::try_from(awk.die(&msg)).unwrap_or(2);
        }
        awk.set_global(FS, Val::str(&fs));
    }
    for (n, v) in assigns {
        awk.assign_operand(&n, &v, true);
    }
    let code = awk.run();
    u8::try_from(code.rem_euclid(256)).unwrap_or(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posix(re: &str) -> PosixRegex {
        PosixRegex::new(regex::Regex::new(re).expect("regex"), false, false)
    }

    #[test]
    fn substitutions() {
        let re = posix("o");
        assert_eq!(
            substitute(&re, "foo boo", "0", true),
            ("f00 b00".to_owned(), 4)
        );
        assert_eq!(
            substitute(&re, "foo", "[&]", false),
            ("f[o]o".to_owned(), 1)
        );
        assert_eq!(substitute(&re, "foo", "\\&", false), ("f&o".to_owned(), 1));
        let empty = posix("x*");
        assert_eq!(
            substitute(&empty, "abc", "-", true),
            ("-a-b-c-".to_owned(), 4)
        );
        let g = posix("([a-z]+)-([0-9]+)");
        assert_eq!(gensub(&posix("a|ab"), "abab", "<&>", 0), "<ab><ab>");
        assert_eq!(gensub(&g, "ab-12 cd-34", "\\2:\\1", 0), "12:ab 34:cd");
        assert_eq!(gensub(&g, "ab-12 cd-34", "<&>", 2), "ab-12 <cd-34>");
    }

    #[test]
    fn programs_parse() {
        for src in [
            "{ print $1 }",
            "BEGIN { FS = \",\" } $3 > 5 { s += $3 } END { print s }",
            "/re/,/end/ { print NR\": \"$0 }",
            "function f(a, b) { return a + b } { print f($1, 2) }",
            "{ a[$1]++ } END { for (k in a) print k, a[k] }",
            "{ if ($1 ~ /x/) print; else if ($2) next; else { n++ } }",
            "BEGIN { while ((getline line < \"f\") > 0) n++; print n }",
            "{ printf \"%-10s %5.2f\\n\", $1, $2 }",
            "{ $2 = \"\"; print }",
            "NR % 2 == 0",
            "{ print (length($0) > 10 ? \"long\" : \"short\") }",
            "{ print $1 > \"/dev/stderr\" }",
            "BEGIN { x = 2 ** 3 ^ 2; print x }",
            "{ print (1, 2) in a }",
            "{ sub(/a/, \"b\"); gsub(\"x\", \"y\", $2) }",
            "BEGIN { do { i++ } while (i < 3) }",
            "{ n = split($0, parts, /,/) }",
            "END { print NR }",
        ] {
            if let Err(e) = syntax::parse(src) {
                panic!("{src}: {e}");
            }
        }
        for bad in ["{ print ", "BEGIN", "{ x = }", "/unterminated"] {
            assert!(syntax::parse(bad).is_err(), "{bad}");
        }
        // A call to a function never defined parses, as in gawk: only
        // reaching it is fatal.
        let prog = syntax::parse("{ f(1) }").expect("parses");
        assert!(prog.functions.iter().any(|f| f.name == "f" && !f.defined));
    }
}
