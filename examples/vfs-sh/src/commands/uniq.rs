//! `uniq [-c] [-d] [-u] [-i] [FILE]`: collapses runs of equal adjacent
//! lines. A second operand (an output file) is refused: the filesystem is
//! read-only.

use super::{flag, options, value};
use crate::exec::Cx;

fn same(a: &[u8], b: &[u8], fold: bool, skip_fields: usize, skip_chars: usize) -> bool {
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
        if fold {
            String::from_utf8_lossy(rest).to_lowercase().into_bytes()
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
    let input = match p.operands.as_slice() {
        [] => "-".to_owned(),
        [one] => one.clone(),
        [_, _] => {
            cx.err(crate::lex::READ_ONLY);
            return 2;
        }
        [_, _, extra, ..] => {
            cx.err(format_args!("uniq: extra operand '{extra}'"));
            return 1;
        }
    };
    let data = match cx.read_operand(&input) {
        Ok(d) => d,
        Err(e) => {
            cx.err(format_args!(
                "uniq: {}: {}",
                super::quote::quote(&input, false),
                e.strerror()
            ));
            return 1;
        }
    };
    let (count, dups, uniques, fold) = (p.has("c"), p.has("d"), p.has("u"), p.has("i"));
    let mut out = Vec::new();
    let mut emit = |line: &[u8], n: u64| {
        if (dups && n < 2) || (uniques && n > 1) {
            return;
        }
        if count {
            out.extend_from_slice(format!("{n:>7} ").as_bytes());
        }
        out.extend_from_slice(line);
        out.push(b'\n');
    };
    let mut run: Option<(&[u8], u64)> = None;
    for line in crate::search::lines(&data) {
        run = match run {
            Some((first, n)) if same(first, line, fold, skip_fields, skip_chars) => {
                Some((first, n + 1))
            }
            Some((first, n)) => {
                emit(first, n);
                Some((line, 1))
            }
            None => Some((line, 1)),
        };
    }
    if let Some((first, n)) = run {
        emit(first, n);
    }
    cx.out(&out);
    0
}
