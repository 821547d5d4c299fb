//! `cut -b|-c LIST` and `cut -f LIST [-d DELIM] [-s]`, with GNU's lists
//! (`1,3-5,7-`, `-3`). As in GNU cut, `-c` counts bytes.

use super::{flag, options, value};
use crate::exec::Cx;

/// Inclusive 1-based ranges; `usize::MAX` for an open end.
type List = Vec<(usize, usize)>;

/// A `-f` (`what` is `field`) or `-b`/`-c` list, with coreutils 9's
/// messages for what is wrong with it.
fn parse_list(s: &str, what: &str) -> Result<List, String> {
    let fields = what == "field";
    let numbered = if fields {
        "cut: fields are numbered from 1"
    } else {
        "cut: byte/character positions are numbered from 1"
    };
    let mut list = Vec::new();
    for part in s.split([',', ' ']) {
        // GNU names the list from its first bad character on.
        if let Some(k) = part.find(|c: char| !c.is_ascii_digit() && c != '-') {
            let value = if fields {
                "field value"
            } else {
                "byte/character position"
            };
            return Err(format!("cut: invalid {value} '{}'", &part[k..]));
        }
        if part.matches('-').count() > 1 {
            let range = if fields {
                "field range"
            } else {
                "byte or character range"
            };
            return Err(format!("cut: invalid {range}"));
        }
        // Only digits are left: an empty number is 0.
        let num = |t: &str| t.parse::<usize>().unwrap_or(0);
        let (lo, hi) = match part.split_once('-') {
            None => (num(part), num(part)),
            Some(("", "")) => return Err("cut: invalid range with no endpoint: -".to_owned()),
            Some(("", hi)) => (1, num(hi)),
            Some((lo, "")) => (num(lo), usize::MAX),
            Some((lo, hi)) => (num(lo), num(hi)),
        };
        if lo == 0 {
            return Err(numbered.to_owned());
        }
        if hi < lo {
            return Err("cut: invalid decreasing range".to_owned());
        }
        list.push((lo, hi));
    }
    Ok(list)
}

/// Where `--output-delimiter` goes in byte mode: at the first position of
/// each selected range, once overlapping ranges are merged (adjacent ones
/// are not: `1-3,4-6` prints `abc:def`, as GNU cut does).
fn range_starts(list: &List, complement: bool) -> Vec<usize> {
    let mut sorted = list.clone();
    sorted.sort_unstable();
    let mut merged: List = Vec::new();
    for (lo, hi) in sorted {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    if !complement {
        return merged.iter().map(|r| r.0).collect();
    }
    let mut starts = Vec::new();
    let mut next = 1;
    for (lo, hi) in merged {
        if lo > next {
            starts.push(next);
        }
        next = hi.saturating_add(1);
    }
    if next != usize::MAX {
        starts.push(next);
    }
    starts
}

fn selected(list: &List, i: usize, complement: bool) -> bool {
    list.iter().any(|&(lo, hi)| lo <= i && i <= hi) != complement
}

/// `cut`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('b', "bytes", "b"),
        value('c', "characters", "c"),
        value('f', "fields", "f"),
        value('d', "delimiter", "d"),
        flag('s', "only-delimited", "s"),
        flag('n', "", "n"),
        flag('\0', "complement", "complement"),
        value('\0', "output-delimiter", "od"),
    ];
    let p = match options(cx, "cut", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let fail = |cx: &mut Cx<'_>, msg: &str| {
        cx.err(msg);
        cx.err("Try 'cut --help' for more information.");
        1
    };
    let modes: Vec<&str> = ["b", "c", "f"].into_iter().filter(|m| p.has(m)).collect();
    let mode = match modes.as_slice() {
        [m] => *m,
        [] => {
            return fail(
                cx,
                "cut: you must specify a list of bytes, characters, or fields",
            );
        }
        _ => return fail(cx, "cut: only one type of list may be specified"),
    };
    let what = if mode == "f" {
        "field"
    } else {
        "byte/character"
    };
    let list = match parse_list(p.value(mode).unwrap_or(""), what) {
        Ok(l) => l,
        Err(e) => return fail(cx, &e),
    };
    let delim = match p.value("d") {
        None => b'\t',
        Some(d) if mode != "f" => {
            let _ = d;
            return fail(
                cx,
                "cut: an input delimiter may be specified only when operating on fields",
            );
        }
        Some(d) if crate::lossless::encode(d).len() == 1 => crate::lossless::encode(d)[0],
        Some("") => b'\n',
        Some(_) => return fail(cx, "cut: the delimiter must be a single character"),
    };
    let complement = p.has("complement");
    let only_delimited = p.has("s");
    let out_delim: Vec<u8> = match p.value("od") {
        Some(d) => crate::lossless::encode(d).into_owned(),
        None if mode == "f" => vec![delim],
        None => Vec::new(),
    };
    let operands = if p.operands.is_empty() {
        vec!["-".to_owned()]
    } else {
        p.operands.clone()
    };
    let starts = range_starts(&list, complement);
    let mut status = 0;
    let mut out = Vec::new();
    for op in &operands {
        // Line by line, a piece of the document at a time; what is cut is
        // written as each piece is done.
        let streamed = cx.stream_lines(op, b'\n', |cx, line| {
            if mode == "f" {
                if !line.contains(&delim) {
                    if !only_delimited {
                        out.extend_from_slice(line);
                        out.push(b'\n');
                    }
                    return;
                }
                let mut first = true;
                for (i, field) in line.split(|&b| b == delim).enumerate() {
                    if selected(&list, i + 1, complement) {
                        if !first {
                            out.extend_from_slice(&out_delim);
                        }
                        out.extend_from_slice(field);
                        first = false;
                    }
                }
            } else {
                let mut any = false;
                for (i, &b) in line.iter().enumerate() {
                    if selected(&list, i + 1, complement) {
                        if any && starts.binary_search(&(i + 1)).is_ok() {
                            out.extend_from_slice(&out_delim);
                        }
                        out.push(b);
                        any = true;
                    }
                }
            }
            out.push(b'\n');
            if out.len() >= 64 << 10 {
                cx.out(&std::mem::take(&mut out));
            }
        });
        if let Err(e) = streamed {
            // Reported in its place among the other operands' lines.
            cx.out(&std::mem::take(&mut out));
            cx.err(format_args!(
                "cut: {}: {}",
                super::quote::quote(op, false),
                e.strerror()
            ));
            status = 1;
        }
    }
    cx.out(&out);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert_eq!(
            parse_list("1,3-5,7-", "field"),
            Ok(vec![(1, 1), (3, 5), (7, usize::MAX)])
        );
        assert_eq!(parse_list("-3", "field"), Ok(vec![(1, 3)]));
        assert!(parse_list("0", "field").is_err());
        assert!(parse_list("5-3", "field").is_err());
        assert!(parse_list("a", "field").is_err());
        assert!(parse_list("", "field").is_err());
    }
}
