//! `uniq [-c] [-d] [-D] [-u] [-i] [-f N] [-s N] [-w N] [-z] [--group] [FILE]`:
//! collapses runs of equal adjacent lines. A second operand (an output
//! file) fails as on a read-only mount, unless it is standard output or
//! `/dev/null`.

use super::{flag, optional, options, value};
use crate::exec::Cx;

fn same(
    a: &[u8],
    b: &[u8],
    fold: bool,
    skip_fields: usize,
    skip_chars: usize,
    width: Option<usize>,
) -> bool {
    let cut = |l: &[u8]| -> Vec<u8> {
        let mut i = 0;
        for _ in 0..skip_fields {
            while i < l.len() && (l[i] == b' ' || l[i] == b'\t') {
                i += 1;
            }
            while i < l.len() && l[i] != b' ' && l[i] != b'\t' {
                i += 1;
            }
        }
        let rest = l.get(i..).unwrap_or(&[]);
        let rest = rest.get(skip_chars.min(rest.len())..).unwrap_or(&[]);
        let rest = match width {
            Some(w) => {
                let s = crate::lossless::decode(rest);
                let end = s.char_indices().nth(w).map_or(s.len(), |(i, _)| i);
                crate::lossless::encode(&s[..end]).into_owned()
            }
            None => rest.to_vec(),
        };
        let rest = rest.as_slice();
        if fold {
            crate::lossless::encode(&crate::lossless::decode(rest).to_lowercase()).into_owned()
        } else {
            rest.to_vec()
        }
    };
    cut(a) == cut(b)
}

/// `uniq`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('c', "count", "c"),
        flag('d', "repeated", "d"),
        flag('u', "unique", "u"),
        flag('i', "ignore-case", "i"),
        value('f', "skip-fields", "f"),
        value('s', "skip-chars", "s"),
        value('w', "check-chars", "w"),
        flag('D', "", "D"),
        optional("all-repeated", "all"),
        optional("group", "group"),
        flag('z', "zero-terminated", "z"),
    ];
    let p = match options(cx, "uniq", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let num = |cx: &mut Cx<'_>, id: &str, what: &str| -> Result<usize, u8> {
        match p.value(id) {
            None => Ok(0),
            Some(v) => match super::count(v) {
                Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
                None => {
                    cx.err(format_args!("uniq: {v}: invalid number of {what} to skip"));
                    Err(1)
                }
            },
        }
    };
    let skip_fields = match num(cx, "f", "fields") {
        Ok(n) => n,
        Err(c) => return c,
    };
    let skip_chars = match num(cx, "s", "bytes") {
        Ok(n) => n,
        Err(c) => return c,
    };
    let width = match p.value("w") {
        None => None,
        Some(v) => match super::count(v) {
            Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            None => {
                cx.err(format_args!(
                    "uniq: {v}: invalid number of bytes to compare"
                ));
                return 1;
            }
        },
    };
    let all_repeated = p.has("D") || p.has("all");
    let method = match p.value("all") {
        None => "none",
        Some(v) => match super::argmatch(
            cx,
            "uniq",
            "--all-repeated",
            v,
            &[
                (&["none"], "none"),
                (&["prepend"], "prepend"),
                (&["separate"], "separate"),
            ],
        ) {
            Some(m) => m,
            None => return 1,
        },
    };
    // `--group`: every line, each run set off by an empty line.
    let group = match (p.has("group"), p.value("group")) {
        (false, _) => None,
        (true, None) => Some("separate"),
        (true, Some(v)) => match super::argmatch(
            cx,
            "uniq",
            "--group",
            v,
            &[
                (&["prepend"], "prepend"),
                (&["append"], "append"),
                (&["separate"], "separate"),
                (&["both"], "both"),
            ],
        ) {
            Some(m) => Some(m),
            None => return 1,
        },
    };
    if group.is_some() && (all_repeated || p.has("c") || p.has("d") || p.has("u")) {
        cx.err("uniq: --group is mutually exclusive with -c/-d/-D/-u");
        cx.err("Try 'uniq --help' for more information.");
        return 1;
    }
    if p.has("c") && all_repeated {
        cx.err("uniq: printing all duplicated lines and repeat counts is meaningless");
        cx.err("Try 'uniq --help' for more information.");
        return 1;
    }
    let (input, output) = match p.operands.as_slice() {
        [] => ("-".to_owned(), None),
        [one] => (one.clone(), None),
        [one, out] => (one.clone(), Some(out.as_str())),
        [_, _, extra, ..] => {
            cx.err(format_args!("uniq: extra operand '{extra}'"));
            return 1;
        }
    };
    // GNU opens the input, then the output: a missing input is the error
    // it reports, else the output it cannot create.
    if input != "-"
        && let Err(e) = cx.fs.metadata(&input)
    {
        cx.err(format_args!(
            "uniq: {}: {}",
            super::quote::quote(&input, false),
            e.strerror()
        ));
        return 1;
    }
    let discard = output == Some("/dev/null");
    if let Some(out) = output
        && !matches!(out, "-" | "/dev/stdout" | "/dev/null")
    {
        cx.err(format_args!(
            "uniq: {}: Read-only file system",
            super::quote::quote(out, false)
        ));
        return 1;
    }
    let (count, dups, uniques, fold) = (p.has("c"), p.has("d"), p.has("u"), p.has("i"));
    let eol = if p.has("z") { 0 } else { b'\n' };
    let mut runs = Runs {
        eol,
        group,
        all_repeated,
        method,
        count,
        dups,
        uniques,
        first_group: true,
        groups: 0,
        run: Vec::new(),
        n: 0,
        out: Vec::new(),
        discard,
    };
    // A line at a time: only the current run of equal lines is held (its
    // first line, or all of them for `-D` and `--group`).
    let streamed = cx.stream_records(&input, eol, |cx, record| {
        let line = record.strip_suffix(&[eol]).unwrap_or(record);
        let same_run = runs.n > 0 && same(&runs.run[0], line, fold, skip_fields, skip_chars, width);
        if !same_run {
            runs.end(cx);
            runs.run.push(line.to_vec());
        } else if runs.keeps_every_line() {
            runs.run.push(line.to_vec());
        }
        runs.n += 1;
    });
    runs.end(cx);
    if runs.group == Some("both") && runs.groups > 0 {
        runs.out.push(eol);
    }
    if !runs.discard {
        cx.out(&runs.out);
    }
    match streamed {
        Ok(()) => 0,
        Err(e) => {
            cx.err(format_args!(
                "uniq: {}: {}",
                super::quote::quote(&input, false),
                e.strerror()
            ));
            1
        }
    }
}

/// `uniq`'s output, one run of equal lines at a time.
struct Runs<'a> {
    eol: u8,
    group: Option<&'a str>,
    all_repeated: bool,
    method: &'a str,
    count: bool,
    dups: bool,
    uniques: bool,
    first_group: bool,
    /// Runs ended so far.
    groups: usize,
    /// The current run's first line, or every line of it when they are
    /// all printed.
    run: Vec<Vec<u8>>,
    /// Lines in the current run.
    n: usize,
    out: Vec<u8>,
    discard: bool,
}

impl Runs<'_> {
    fn keeps_every_line(&self) -> bool {
        self.group.is_some() || self.all_repeated
    }

    /// Prints the current run as the options say, and starts a new one.
    fn end(&mut self, cx: &mut Cx<'_>) {
        if self.n == 0 {
            return;
        }
        let (eol, n) = (self.eol, self.n);
        let run = std::mem::take(&mut self.run);
        self.n = 0;
        self.groups += 1;
        let out = &mut self.out;
        if let Some(g) = self.group {
            if matches!(g, "prepend" | "both") || (self.groups > 1 && g == "separate") {
                out.push(eol);
            }
            for l in &run {
                out.extend_from_slice(l);
                out.push(eol);
            }
            if g == "append" {
                out.push(eol);
            }
        } else if self.all_repeated {
            if n >= 2 {
                if self.method == "prepend" || (self.method == "separate" && !self.first_group) {
                    out.push(eol);
                }
                self.first_group = false;
                for l in &run {
                    out.extend_from_slice(l);
                    out.push(eol);
                }
            }
        } else if !((self.dups && n < 2) || (self.uniques && n > 1)) {
            if self.count {
                out.extend_from_slice(format!("{n:>7} ").as_bytes());
            }
            out.extend_from_slice(&run[0]);
            out.push(eol);
        }
        if self.discard {
            out.clear();
        } else {
            cx.out_stdio(out);
        }
    }
}
