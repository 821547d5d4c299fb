//! `wc [-l] [-w] [-c] [-m] [-L] [FILE]...`: counts, aligned as GNU wc
//! aligns them (the column width comes from the total size of the files;
//! standard input forces at least 7), with a `total` line for several
//! inputs.

use super::{flag, options};
use crate::exec::Cx;
use crate::fs::FsError;

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counts {
    lines: u64,
    words: u64,
    chars: u64,
    bytes: u64,
    max_line: u64,
}

#[cfg(test)]
pub(crate) fn count(data: &[u8]) -> Counts {
    let mut c = Counter::default();
    c.feed(data);
    c.finish()
}

/// Counts fed a piece at a time: a word, a line's width or a character
/// may go on from one piece to the next.
#[derive(Default)]
pub(crate) struct Counter {
    c: Counts,
    in_word: bool,
    width: u64,
    /// The start of a character whose end is in the next piece.
    carry: Vec<u8>,
}

impl Counter {
    pub(crate) fn feed(&mut self, piece: &[u8]) {
        self.c.bytes += piece.len() as u64;
        if self.carry.is_empty() {
            self.scan(piece, true);
        } else {
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(piece);
            self.scan(&joined, true);
        }
    }

    /// Counts `data`, keeping a character cut at its end for the next
    /// piece unless this is the end.
    fn scan(&mut self, data: &[u8], more: bool) {
        let keep = if more {
            super::read::utf8_tail(data)
        } else {
            0
        };
        let (now, later) = data.split_at(data.len() - keep);
        for chunk in now.utf8_chunks() {
            for ch in chunk.valid().chars() {
                self.c.chars += 1;
                match ch {
                    '\n' => {
                        self.c.lines += 1;
                        self.c.max_line = self.c.max_line.max(self.width);
                        self.width = 0;
                    }
                    '\t' => self.width = (self.width / 8 + 1) * 8,
                    ch if !ch.is_control() => self.width += 1,
                    _ => {}
                }
                if ch.is_whitespace() {
                    self.in_word = false;
                } else if !ch.is_control() && !self.in_word {
                    self.in_word = true;
                    self.c.words += 1;
                }
            }
            // Invalid bytes are neither characters nor word separators.
        }
        self.carry = later.to_vec();
    }

    pub(crate) fn finish(mut self) -> Counts {
        // What is left is an incomplete character: invalid bytes.
        let rest = std::mem::take(&mut self.carry);
        self.scan(&rest, false);
        self.c.max_line = self.c.max_line.max(self.width);
        self.c
    }
}

/// Whether `wc ARGS` reads standard input for its counts alone: options
/// that choose counts, and no operand (which `-` or `--files0-from` would
/// be). Such a `wc` at the end of a pipe lets the pipe count what is
/// written instead of keeping it ([`crate::exec::Wanted::Counts`]).
pub(crate) fn reads_only_counts(args: &[&str]) -> bool {
    args.iter().all(|a| match a.strip_prefix("--") {
        Some(long) => matches!(
            long,
            "lines" | "words" | "bytes" | "chars" | "max-line-length"
        ),
        None => {
            a.len() > 1
                && a.starts_with('-')
                && a[1..]
                    .bytes()
                    .all(|b| matches!(b, b'l' | b'w' | b'c' | b'm' | b'L'))
        }
    })
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
        // A document is counted a piece at a time, never held whole.
        let mut counter = Counter::default();
        // A pipe that counted what was written for this `wc` hands over
        // the counts.
        let counted = input
            .is_none()
            .then(|| cx.input.borrow_mut().take_counted())
            .flatten();
        let (data, regular) = match (counted, input.as_deref()) {
            (Some(counted), _) => {
                counter = *counted;
                (Ok(()), false)
            }
            (None, None | Some("-")) => (cx.stream_operand("-", |_, p| counter.feed(p)), false),
            (None, Some(path)) => (cx.stream_operand(path, |_, p| counter.feed(p)), true),
        };
        match data {
            Ok(()) => rows.push(Row {
                name: input.clone(),
                counts: {
                    let mut c = counter.finish();
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
    fn counts_fed_in_pieces_are_the_counts_of_the_whole() {
        let text = b"h\xc3\xa9llo w\xc3\xb6rld\n\tx  y\nlast \xe2\x82\xac\xff word";
        let whole = count(text);
        for cut in 0..=text.len() {
            let mut c = Counter::default();
            let (a, b) = text.split_at(cut);
            c.feed(a);
            c.feed(b);
            let got = c.finish();
            assert_eq!(
                (got.lines, got.words, got.chars, got.bytes, got.max_line),
                (
                    whole.lines,
                    whole.words,
                    whole.chars,
                    whole.bytes,
                    whole.max_line
                ),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn counts() {
        let c = count("héllo wörld\n\tx  y\nlast".as_bytes());
        assert_eq!((c.lines, c.words, c.chars, c.bytes), (2, 5, 22, 24));
        assert_eq!(c.max_line, 12);
    }
}
