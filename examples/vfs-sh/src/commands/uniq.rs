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
                let s = String::from_utf8_lossy(rest);
                let end = s.char_indices().nth(w).map_or(s.len(), |(i, _)| i);
                s[..end].as_bytes().to_vec()
            }
            None => rest.to_vec(),
        };
        let rest = rest.as_slice();
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
    if count && all_repeated {
        cx.err("uniq: printing all duplicated lines and repeat counts is meaningless");
        cx.err("Try 'uniq --help' for more information.");
        return 1;
    }
    let eol = if p.has("z") { 0 } else { b'\n' };
    let lines: Vec<&[u8]> = if eol == b'\n' {
        crate::search::lines(&data).collect()
    } else if data.is_empty() {
        Vec::new()
    } else {
        data.strip_suffix(&[0])
            .unwrap_or(&data)
            .split(|&b| b == 0)
            .collect()
    };
    // Runs of equal lines.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        match runs.last_mut() {
            Some((start, n)) if same(lines[*start], line, fold, skip_fields, skip_chars, width) => {
                *n += 1
            }
            _ => runs.push((i, 1)),
        }
    }
    let mut out = Vec::new();
    let mut first_group = true;
    let groups = runs.len();
    for (k, (start, n)) in runs.into_iter().enumerate() {
        if let Some(g) = group {
            if matches!(g, "prepend" | "both") || (k > 0 && g == "separate") {
                out.push(eol);
            }
            for l in &lines[start..start + n] {
                out.extend_from_slice(l);
                out.push(eol);
            }
            if g == "append" || (g == "both" && k + 1 == groups) {
                out.push(eol);
            }
            continue;
        }
        if all_repeated {
            if n < 2 {
                continue;
            }
            if method == "prepend" || (method == "separate" && !first_group) {
                out.push(eol);
            }
            first_group = false;
            for l in &lines[start..start + n] {
                out.extend_from_slice(l);
                out.push(eol);
            }
            continue;
        }
        if (dups && n < 2) || (uniques && n > 1) {
            continue;
        }
        if count {
            out.extend_from_slice(format!("{n:>7} ").as_bytes());
        }
        out.extend_from_slice(lines[start]);
        out.push(eol);
    }
    if !discard {
        cx.out(&out);
    }
    0
}
