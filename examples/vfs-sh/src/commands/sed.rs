//! `sed` for printing lines only: `sed -n 'Np'`, `'N,Mp'`, `'/re/p'`, `'$p'`
//! and ranges between such addresses, several joined by `;`. Any other
//! script is refused with a message naming the supported forms.
//!
//! With only numeric addresses and `-n`, a document is read only up to the
//! last line wanted.

use regex::bytes::Regex;

use super::read::{self, newlines};
use super::{flag, options, value};
use crate::exec::Cx;
use crate::pattern::{Syntax, translate};

const SUPPORTED: &str = "vfs-sh's sed only prints lines: sed -n 'Np', 'N,Mp', '/RE/p', '$p', ranges such as 'N,$p' or '/RE1/,/RE2/p', several joined by ';'";

/// One address.
#[derive(Debug, Clone)]
enum Addr {
    Line(u64),
    Last,
    Re(Regex),
}

/// One `[addr[,addr]]p` command, with its range state.
#[derive(Debug, Clone)]
struct Cmd {
    from: Option<Addr>,
    to: Option<Addr>,
    active: bool,
}

fn parse_addr(s: &[char], i: &mut usize, syntax: Syntax) -> Result<Option<Addr>, String> {
    match s.get(*i) {
        Some(c) if c.is_ascii_digit() => {
            let start = *i;
            while s.get(*i).is_some_and(char::is_ascii_digit) {
                *i += 1;
            }
            let n: String = s[start..*i].iter().collect();
            Ok(Some(Addr::Line(n.parse().unwrap_or(u64::MAX))))
        }
        Some('$') => {
            *i += 1;
            Ok(Some(Addr::Last))
        }
        Some('/') => {
            *i += 1;
            let mut re = String::new();
            loop {
                match s.get(*i) {
                    None => {
                        return Err("sed: -e expression #1: unterminated address regex".to_owned());
                    }
                    Some('/') => {
                        *i += 1;
                        break;
                    }
                    Some('\\') if s.get(*i + 1) == Some(&'/') => {
                        re.push('/');
                        *i += 2;
                    }
                    Some('\\') => {
                        re.push('\\');
                        if let Some(&n) = s.get(*i + 1) {
                            re.push(n);
                        }
                        *i += 2;
                    }
                    Some(&c) => {
                        re.push(c);
                        *i += 1;
                    }
                }
            }
            let t = translate(&re, syntax).map_err(|e| format!("sed: -e expression #1: {e}"))?;
            let re = Regex::new(&t.regex).map_err(|e| format!("sed: -e expression #1: {e}"))?;
            Ok(Some(Addr::Re(re)))
        }
        _ => Ok(None),
    }
}

fn parse_script(script: &str, syntax: Syntax) -> Result<Vec<Cmd>, String> {
    let s: Vec<char> = script.chars().collect();
    let mut cmds = Vec::new();
    let mut i = 0;
    let unsupported = || format!("sed: unsupported script '{script}'; {SUPPORTED}");
    let skip_ws = |i: &mut usize| {
        while s.get(*i).is_some_and(|c| c.is_whitespace()) {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        while s.get(i) == Some(&';') {
            i += 1;
            skip_ws(&mut i);
        }
        if i >= s.len() {
            break;
        }
        let from = parse_addr(&s, &mut i, syntax)?;
        let mut to = None;
        if from.is_some() && s.get(i) == Some(&',') {
            i += 1;
            to = parse_addr(&s, &mut i, syntax)?;
            if to.is_none() {
                return Err("sed: -e expression #1: unexpected `,'".to_owned());
            }
        }
        skip_ws(&mut i);
        if s.get(i) != Some(&'p') {
            return Err(unsupported());
        }
        i += 1;
        skip_ws(&mut i);
        match s.get(i) {
            None | Some(';') => {}
            Some(_) => return Err(unsupported()),
        }
        if matches!(from, Some(Addr::Line(0))) {
            return Err("sed: -e expression #1: invalid usage of line address 0".to_owned());
        }
        cmds.push(Cmd {
            from,
            to,
            active: false,
        });
    }
    if cmds.is_empty() {
        return Err(unsupported());
    }
    Ok(cmds)
}

fn hit(addr: &Addr, n: u64, line: &[u8], last: bool) -> bool {
    match addr {
        Addr::Line(k) => *k == n,
        Addr::Last => last,
        Addr::Re(re) => re.is_match(line),
    }
}

impl Cmd {
    /// Whether the command prints line `n` (advancing its range state).
    fn selects(&mut self, n: u64, line: &[u8], last: bool) -> bool {
        let Some(from) = &self.from else {
            return true;
        };
        let Some(to) = &self.to else {
            return hit(from, n, line, last);
        };
        if self.active {
            let end = match to {
                Addr::Line(k) => n >= *k,
                other => hit(other, n, line, last),
            };
            if end {
                self.active = false;
            }
            return true;
        }
        if hit(from, n, line, last) {
            // A numeric end at or before this line closes the range at once.
            self.active = match to {
                Addr::Line(k) => *k > n,
                Addr::Last => !last,
                Addr::Re(_) => true,
            };
            return true;
        }
        false
    }
}

/// The last line any command can need, when every address is a number.
fn last_needed(cmds: &[Cmd]) -> Option<u64> {
    let mut max = 0;
    for c in cmds {
        for a in [&c.from, &c.to].into_iter().flatten() {
            match a {
                Addr::Line(k) => max = max.max(*k),
                _ => return None,
            }
        }
        c.from.as_ref()?;
    }
    Some(max)
}

/// `sed`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('n', "quiet", "n"),
        flag('\0', "silent", "n"),
        flag('E', "regexp-extended", "E"),
        flag('r', "", "E"),
        value('e', "expression", "e"),
        flag('s', "separate", "s"),
        flag('u', "unbuffered", "u"),
        flag('i', "in-place", "i"),
    ];
    let p = match options(cx, "sed", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if p.has("i") {
        cx.err(crate::lex::READ_ONLY);
        return 2;
    }
    let mut operands = p.operands.clone();
    let script = if p.has("e") {
        p.values("e").join(";")
    } else if operands.is_empty() {
        cx.err("Usage: sed [-n] SCRIPT [FILE]...");
        return 1;
    } else {
        operands.remove(0)
    };
    let syntax = if p.has("E") {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    let mut cmds = match parse_script(&script, syntax) {
        Ok(c) => c,
        Err(e) => {
            cx.err(e);
            return 1;
        }
    };
    let quiet = p.has("n");
    if operands.is_empty() {
        operands.push("-".to_owned());
    }
    let stop_after = if quiet { last_needed(&cmds) } else { None };
    // Read every input first: `$` needs to know which line is the last.
    let mut data = Vec::new();
    let mut status = 0;
    for op in &operands {
        let got = match (op.as_str(), stop_after, operands.len()) {
            ("-", _, _) => Ok(cx.stdin()),
            (_, Some(n), 1) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                read::prefix(cx.fs, op, |d| newlines(d) >= n)
            }
            _ => cx.fs.read(op),
        };
        match got {
            Ok(d) => {
                data.extend_from_slice(&d);
                if !d.is_empty() && !d.ends_with(b"\n") {
                    data.push(b'\n');
                    // GNU sed keeps a missing final newline on the last line.
                    if op == operands.last().map_or("", String::as_str) {
                        data.pop();
                    }
                }
            }
            Err(e) => {
                cx.err(format_args!("sed: can't read {op}: {}", e.strerror()));
                status = 2;
            }
        }
    }
    let lines: Vec<&[u8]> = crate::search::lines(&data).collect();
    let total = lines.len();
    let no_newline_at_end = !data.is_empty() && !data.ends_with(b"\n");
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let n = i as u64 + 1;
        if stop_after.is_some_and(|s| n > s) {
            break;
        }
        let last = i + 1 == total;
        let nl: &[u8] = if last && no_newline_at_end {
            b""
        } else {
            b"\n"
        };
        let mut times = usize::from(!quiet);
        for c in &mut cmds {
            if c.selects(n, line, last) {
                times += 1;
            }
        }
        for _ in 0..times {
            out.extend_from_slice(line);
            out.extend_from_slice(nl);
        }
    }
    cx.out(&out);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(script: &str, text: &str) -> Vec<String> {
        let mut cmds = parse_script(script, Syntax::Basic).expect("parses");
        let all: Vec<&str> = text.lines().collect();
        let mut out = Vec::new();
        for (i, l) in all.iter().enumerate() {
            let last = i + 1 == all.len();
            for c in &mut cmds {
                if c.selects(i as u64 + 1, l.as_bytes(), last) {
                    out.push((*l).to_owned());
                }
            }
        }
        out
    }

    #[test]
    fn addresses() {
        let t = "a\nb\nc\nd\ne";
        assert_eq!(lines_of("2p", t), ["b"]);
        assert_eq!(lines_of("2,4p", t), ["b", "c", "d"]);
        assert_eq!(lines_of("4,2p", t), ["d"]);
        assert_eq!(lines_of("$p", t), ["e"]);
        assert_eq!(lines_of("3,$p", t), ["c", "d", "e"]);
        assert_eq!(lines_of("/b/,/d/p", t), ["b", "c", "d"]);
        assert_eq!(lines_of("/[ae]/p", t), ["a", "e"]);
        assert_eq!(lines_of("1p;3p", t), ["a", "c"]);
        assert_eq!(lines_of("p", t).len(), 5);
        for bad in ["s/a/b/", "1d", "2q", "", "1,p", "/a", "0p"] {
            assert!(parse_script(bad, Syntax::Basic).is_err(), "{bad:?}");
        }
    }
}
