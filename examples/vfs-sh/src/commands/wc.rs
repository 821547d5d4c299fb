//! `wc [-l] [-w] [-c] [-m] [-L] [FILE]...`: counts, aligned as GNU wc
//! aligns them (the column width comes from the total size of the files;
//! standard input forces at least 7), with a `total` line for several
//! inputs.

use super::{flag, options};
use crate::exec::Cx;
use crate::fs::FsError;

#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    lines: u64,
    words: u64,
    chars: u64,
    bytes: u64,
    max_line: u64,
}

fn count(data: &[u8]) -> Counts {
    let mut c = Counts {
        bytes: data.len() as u64,
        ..Counts::default()
    };
    let mut in_word = false;
    let mut width = 0u64;
    for chunk in data.utf8_chunks() {
        for ch in chunk.valid().chars() {
            c.chars += 1;
            match ch {
                '\n' => {
                    c.lines += 1;
                    c.max_line = c.max_line.max(width);
                    width = 0;
                }
                '\t' => width = (width / 8 + 1) * 8,
                ch if !ch.is_control() => width += 1,
                _ => {}
            }
            if ch.is_whitespace() {
                in_word = false;
            } else if !ch.is_control() && !in_word {
                in_word = true;
                c.words += 1;
            }
        }
        // Invalid bytes are neither characters nor word separators.
    }
    c.max_line = c.max_line.max(width);
    c
}

/// One input's result: counts, or the error reading it.
struct Row {
    name: Option<String>,
    counts: Counts,
    /// The input is a document (its size counts toward the width).
    regular: bool,
    /// The input could not be found at all.
    missing: bool,
    /// Why it could not be read, reported in its place among the lines.
    error: Option<String>,
}

/// `wc`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('l', "lines", "l"),
        flag('w', "words", "w"),
        flag('c', "bytes", "c"),
        flag('m', "chars", "m"),
        flag('L', "max-line-length", "L"),
        super::value('\0', "files0-from", "files0"),
    ];
    let p = match options(cx, "wc", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let (mut l, mut w, mut c, m, big_l) =
        (p.has("l"), p.has("w"), p.has("c"), p.has("m"), p.has("L"));
    if !(l || w || c || m || big_l) {
        (l, w, c) = (true, true, true);
    }
    let shown = [l, w, m, c, big_l].iter().filter(|&&x| x).count();
    // Names read from a stream are counted as they come: GNU wc cannot
    // size its columns for them first, and prints them at width 1.
    let mut streamed = false;
    let inputs: Vec<Option<String>> = if let Some(from) = p.value("files0") {
        match super::files0_from(cx, "wc", from, &p.operands) {
            Ok((names, stream)) => {
                streamed = stream;
                names.into_iter().map(Some).collect()
            }
            Err(code) => return code,
        }
    } else if p.operands.is_empty() {
        vec![None]
    } else {
        p.operands.iter().cloned().map(Some).collect()
    };
    // In the C locale a character is a byte.
    let utf8 = super::utf8_locale(cx);
    let mut status = 0;
    let mut rows = Vec::new();
    for input in &inputs {
        let (data, regular) = match input.as_deref() {
            None | Some("-") => (Ok(cx.stdin()), false),
            Some(path) => (cx.fs.read(path), true),
        };
        match data {
            Ok(d) => rows.push(Row {
                name: input.clone(),
                counts: {
                    let mut c = count(&d);
                    if !utf8 {
                        c.chars = c.bytes;
                    }
                    c
                },
                regular,
                missing: false,
                error: None,
            }),
            Err(e) => {
                let name = input.clone().unwrap_or_default();
                status = 1;
                rows.push(Row {
                    name: input.clone(),
                    counts: Counts::default(),
                    regular: false,
                    // A directory still gets its line of zeros.
                    missing: !matches!(e, FsError::IsADirectory(_)),
                    error: Some(format!(
                        "wc: {}: {}",
                        super::quote::quote(&name, false),
                        e.strerror()
                    )),
                });
            }
        }
    }
    let width = if streamed || (inputs.len() == 1 && shown == 1) {
        1
    } else {
        let total: u64 = rows
            .iter()
            .filter(|r| r.regular)
            .map(|r| r.counts.bytes)
            .sum();
        let min = if rows.iter().any(|r| !r.regular && !r.missing) {
            7
        } else {
            1
        };
        total.to_string().len().max(min)
    };
    let line = |counts: &Counts, name: Option<&str>| {
        let mut cols = Vec::new();
        for (on, v) in [
            (l, counts.lines),
            (w, counts.words),
            (m, counts.chars),
            (c, counts.bytes),
            (big_l, counts.max_line),
        ] {
            if on {
                cols.push(format!("{v:>width$}"));
            }
        }
        let mut s = cols.join(" ");
        if let Some(n) = name {
            s.push(' ');
            s.push_str(n);
        }
        s.push('\n');
        s
    };
    let mut out = String::new();
    let mut total = Counts::default();
    for r in &rows {
        total.lines += r.counts.lines;
        total.words += r.counts.words;
        total.chars += r.counts.chars;
        total.bytes += r.counts.bytes;
        total.max_line = total.max_line.max(r.counts.max_line);
        if let Some(msg) = &r.error {
            cx.outs(&std::mem::take(&mut out));
            cx.err(msg);
        }
        if !r.missing {
            out.push_str(&line(&r.counts, r.name.as_deref()));
        }
    }
    if inputs.len() > 1 {
        out.push_str(&line(&total, Some("total")));
    }
    cx.outs(&out);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let c = count("héllo wörld\n\tx  y\nlast".as_bytes());
        assert_eq!((c.lines, c.words, c.chars, c.bytes), (2, 5, 22, 24));
        assert_eq!(c.max_line, 12);
    }
}
