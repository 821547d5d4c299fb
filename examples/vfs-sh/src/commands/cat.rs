//! `cat [-n] [-b] [-s] [-E] [-T] [-v] [-A] [-e] [-t] [FILE]...`: concatenates documents (and `-`,
//! standard input). Line numbering runs on across files, as in GNU cat.

use super::{flag, options};
use crate::exec::Cx;

/// Numbering and marking state carried across inputs.
#[derive(Debug, Default)]
struct State {
    number: bool,
    nonblank: bool,
    squeeze: bool,
    ends: bool,
    tabs: bool,
    nonprinting: bool,
    line: u64,
    at_line_start: bool,
    blank_run: usize,
}

impl State {
    fn feed(&mut self, data: &[u8], out: &mut Vec<u8>) {
        if !(self.number
            || self.nonblank
            || self.squeeze
            || self.ends
            || self.tabs
            || self.nonprinting)
        {
            out.extend_from_slice(data);
            return;
        }
        for &b in data {
            if self.at_line_start {
                if b == b'\n' {
                    self.blank_run += 1;
                    if self.squeeze && self.blank_run > 1 {
                        continue;
                    }
                } else {
                    self.blank_run = 0;
                }
                let numbered = self.nonblank && b != b'\n' || self.number && !self.nonblank;
                if numbered {
                    self.line += 1;
                    out.extend_from_slice(format!("{:>6}\t", self.line).as_bytes());
                }
            }
            if b == b'\n' && self.ends {
                out.push(b'$');
            }
            if b == b'\t' && self.tabs {
                out.extend_from_slice(b"^I");
            } else if self.nonprinting && b != b'\n' && b != b'\t' {
                // GNU's `-v` notation: ^X, M-x, ^?.
                let (meta, c) = if b >= 0x80 {
                    (true, b - 0x80)
                } else {
                    (false, b)
                };
                if meta {
                    out.extend_from_slice(b"M-");
                }
                match c {
                    0..=31 => {
                        out.push(b'^');
                        out.push(c + 64);
                    }
                    127 => out.extend_from_slice(b"^?"),
                    _ => out.push(c),
                }
            } else {
                out.push(b);
            }
            self.at_line_start = b == b'\n';
        }
    }
}

/// `cat`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('n', "number", "n"),
        flag('b', "number-nonblank", "b"),
        flag('s', "squeeze-blank", "s"),
        flag('E', "show-ends", "E"),
        flag('T', "show-tabs", "T"),
        flag('v', "show-nonprinting", "v"),
        flag('A', "show-all", "A"),
        flag('e', "", "e"),
        flag('t', "", "t"),
        flag('u', "", "u"),
    ];
    let p = match options(cx, "cat", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut state = State {
        number: p.has("n"),
        nonblank: p.has("b"),
        squeeze: p.has("s"),
        ends: p.has("E") || p.has("A") || p.has("e"),
        tabs: p.has("T") || p.has("A") || p.has("t"),
        nonprinting: p.has("v") || p.has("A") || p.has("e") || p.has("t"),
        at_line_start: true,
        ..State::default()
    };
    let operands = if p.operands.is_empty() {
        vec!["-".to_owned()]
    } else {
        p.operands
    };
    let mut status = 0;
    let plain = !(state.number
        || state.nonblank
        || state.squeeze
        || state.ends
        || state.tabs
        || state.nonprinting);
    for op in &operands {
        // Into a pipe, a document goes on unread, for the next command to
        // read as it goes; elsewhere, piece by piece: a large document is
        // never held whole.
        let passed = if plain {
            cx.pass_document(op)
        } else {
            Ok(false)
        };
        let streamed = match passed {
            Ok(true) => Ok(()),
            Ok(false) => cx.stream_operand(op, |cx, piece| {
                let mut out = Vec::with_capacity(piece.len());
                state.feed(piece, &mut out);
                cx.out(&out);
            }),
            Err(e) => Err(e),
        };
        match streamed {
            Ok(()) => {}
            Err(e) => {
                cx.err(format_args!(
                    "cat: {}: {}",
                    super::quote::quote(op, false),
                    e.strerror()
                ));
                status = 1;
            }
        }
    }
    status
}
