//! `sort [-r -n -h -V -g -M -d -u -f -b -s -z -c -C -m -R] [-t SEP] [-k KEY]... [FILE]...`, with GNU's
//! key rules: without `-t` a field includes the blanks before it; keys
//! compare in order, then (unless `-s` or `-u`) whole lines break ties.
//! Comparison is by bytes, which is what the C locale collates to.

use std::cmp::Ordering;

use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::FsError;

/// Ordering options, global or per key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Order {
    numeric: bool,
    reverse: bool,
    fold: bool,
    blanks: bool,
    /// `-h`: numbers with K, M, G... suffixes.
    human: bool,
    /// `-V`: version numbers.
    version: bool,
    /// `-g`: floating point.
    general: bool,
    /// `-M`: month names, `JAN` < ... < `DEC`, anything else first.
    month: bool,
    /// `-d`: only blanks and alphanumerics count.
    dictionary: bool,
    /// `-i`: only printable characters count (`-d` wins over it, as in
    /// GNU).
    printable: bool,
}

impl Order {
    fn any(self) -> bool {
        self.numeric
            || self.reverse
            || self.fold
            || self.blanks
            || self.human
            || self.version
            || self.general
            || self.month
            || self.dictionary
            || self.printable
    }
}

/// A `-k` key: start field/char, optional end field/char (0 = its end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    start_field: usize,
    start_char: usize,
    end: Option<(usize, usize)>,
    order: Order,
    /// The end position had a `b`: skip blanks when finding it.
    end_blanks: bool,
}

fn parse_pos(s: &str, is_end: bool) -> Result<(usize, usize, Order, bool), String> {
    // A count may carry a `+` (`-k +7`), as strtoumax reads it.
    let s = s.strip_prefix('+').unwrap_or(s);
    let digits_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let field: usize = s[..digits_end]
        .parse()
        .map_err(|_| format!("invalid number at field start: invalid count at start of '{s}'"))?;
    if field == 0 {
        return Err(if is_end {
            format!("invalid number after ',': invalid count at start of '{s}'")
        } else {
            "field number is zero: invalid field specification".to_owned()
        });
    }
    let mut rest = &s[digits_end..];
    let mut ch = 0;
    if let Some(r) = rest.strip_prefix('.') {
        let e = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        ch = r[..e]
            .parse()
            .map_err(|_| format!("invalid number after '.': invalid count at start of '{r}'"))?;
        if ch == 0 && !is_end {
            return Err("character offset is zero: invalid field specification".to_owned());
        }
        rest = &r[e..];
    }
    let mut order = Order::default();
    let mut blanks = false;
    for c in rest.chars() {
        match c {
            'n' => order.numeric = true,
            'h' => order.human = true,
            'V' => order.version = true,
            'g' => order.general = true,
            'M' => order.month = true,
            'd' => order.dictionary = true,
            'i' => order.printable = true,
            'r' => order.reverse = true,
            'f' => order.fold = true,
            'b' => {
                order.blanks = true;
                blanks = true;
            }
            _ => {
                return Err(format!(
                    "stray character in field spec: invalid field specification '{s}'"
                ));
            }
        }
    }
    Ok((field, ch, order, blanks))
}

fn parse_key(spec: &str) -> Result<Key, String> {
    let (start, end) = match spec.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (spec, None),
    };
    let (sf, sc, mut order, _) = parse_pos(start, false).map_err(|e| {
        // GNU names the whole key when its field is zero.
        if e.starts_with("field number is zero") {
            format!("{e} '{spec}'")
        } else {
            e
        }
    })?;
    let mut key = Key {
        start_field: sf,
        start_char: sc.max(1),
        end: None,
        order,
        end_blanks: false,
    };
    if let Some(e) = end {
        let (ef, ec, o2, b2) = parse_pos(e, true)?;
        order.numeric |= o2.numeric;
        order.human |= o2.human;
        order.version |= o2.version;
        order.general |= o2.general;
        order.month |= o2.month;
        order.dictionary |= o2.dictionary;
        order.printable |= o2.printable;
        order.reverse |= o2.reverse;
        order.fold |= o2.fold;
        key.order = order;
        key.end = Some((ef, ec));
        key.end_blanks = b2;
    }
    Ok(key)
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Start offsets of each field of `line` (and the line's length at the
/// end), GNU style.
fn fields(line: &[u8], sep: Option<u8>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    match sep {
        Some(t) => {
            let mut start = 0;
            for (i, &b) in line.iter().enumerate() {
                if b == t {
                    out.push((start, i));
                    start = i + 1;
                }
            }
            out.push((start, line.len()));
        }
        None => {
            let mut i = 0;
            while i < line.len() {
                let start = i;
                while i < line.len() && is_blank(line[i]) {
                    i += 1;
                }
                while i < line.len() && !is_blank(line[i]) {
                    i += 1;
                }
                out.push((start, i));
            }
        }
    }
    out
}

fn skip_blanks(line: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && is_blank(line[i]) {
        i += 1;
    }
    i
}

/// The bytes of `line` a key covers.
fn key_bytes<'a>(line: &'a [u8], key: &Key, sep: Option<u8>) -> &'a [u8] {
    let f = fields(line, sep);
    let len = line.len();
    let start = match f.get(key.start_field - 1) {
        None => len,
        Some(&(s, e)) => {
            let s = if key.order.blanks {
                skip_blanks(line, s, e)
            } else {
                s
            };
            (s + key.start_char - 1).min(e)
        }
    };
    let end = match key.end {
        None => len,
        Some((ef, ec)) => match f.get(ef - 1) {
            None => len,
            Some(&(s, e)) => {
                if ec == 0 {
                    e
                } else {
                    let s = if key.end_blanks {
                        skip_blanks(line, s, e)
                    } else {
                        s
                    };
                    (s + ec).min(e)
                }
            }
        },
    };
    if start >= end { &[] } else { &line[start..end] }
}

/// A parsed leading number: sign, integer digits without leading zeros,
/// fraction digits without trailing zeros.
fn numeric_parts(s: &[u8]) -> (bool, &[u8], &[u8]) {
    let mut i = 0;
    while i < s.len() && (is_blank(s[i]) || s[i] == b'\n') {
        i += 1;
    }
    let neg = s.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let int_start = i;
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
    }
    let mut int = &s[int_start..i];
    while let [b'0', rest @ ..] = int {
        int = rest;
    }
    let mut frac: &[u8] = &[];
    if s.get(i) == Some(&b'.') {
        let fs = i + 1;
        let mut j = fs;
        while j < s.len() && s[j].is_ascii_digit() {
            j += 1;
        }
        frac = &s[fs..j];
        while let [rest @ .., b'0'] = frac {
            frac = rest;
        }
    }
    let zero = int.is_empty() && frac.is_empty();
    (neg && !zero, int, frac)
}

/// Compares two numbers the way `sort -n` does, exactly (no floats).
fn numeric_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (na, ia, fa) = numeric_parts(a);
    let (nb, ib, fb) = numeric_parts(b);
    let magnitude = ia
        .len()
        .cmp(&ib.len())
        .then_with(|| ia.cmp(ib))
        .then_with(|| fa.cmp(fb));
    match (na, nb) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    }
}

/// `sort -h`: the sign, then the suffix (none < K < M < G ...), then the
/// number, as GNU compares human sizes.
fn human_cmp(a: &[u8], b: &[u8]) -> Ordering {
    fn suffix(s: &[u8]) -> (bool, usize) {
        let (neg, int, frac) = numeric_parts(s);
        let _ = int;
        let _ = frac;
        // The character after the number.
        let mut i = 0;
        while i < s.len() && (is_blank(s[i]) || s[i] == b'-') {
            i += 1;
        }
        while i < s.len() && (s[i].is_ascii_digit() || s[i] == b'.') {
            i += 1;
        }
        let rank = s
            .get(i)
            .and_then(|c| {
                b"KMGTPEZYRQ"
                    .iter()
                    .position(|u| u == c || (*c == b'k' && *u == b'K'))
            })
            .map_or(0, |p| p + 1);
        (neg, rank)
    }
    let (na, ra) = suffix(a);
    let (nb, rb) = suffix(b);
    let sign = |neg: bool, zero: bool| {
        if neg {
            0
        } else if zero {
            1
        } else {
            2
        }
    };
    let (pa, pb) = (numeric_parts(a), numeric_parts(b));
    let za = pa.1.is_empty() && pa.2.is_empty();
    let zb = pb.1.is_empty() && pb.2.is_empty();
    sign(na, za)
        .cmp(&sign(nb, zb))
        .then_with(|| {
            let by_unit = ra.cmp(&rb);
            if na { by_unit.reverse() } else { by_unit }
        })
        .then_with(|| numeric_cmp(a, b))
}

/// `sort -g`: as floating point numbers; text that is none sorts first.
fn general_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let parse = |s: &[u8]| -> Option<f64> {
        let t = crate::lossless::decode(s);
        let t = t.trim_start();
        let end = t
            .char_indices()
            .take_while(|(_, c)| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
            .last()
            .map_or(0, |(i, c)| i + c.len_utf8());
        (0..=end).rev().find_map(|k| t[..k].parse::<f64>().ok())
    };
    match (parse(a), parse(b)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// `sort -V` and `ls -v`: gnulib's `filevercmp`. An empty name sorts
/// first; then `.`, `..` and other names with a leading dot; the rest
/// compare without their file suffixes (`(\.[A-Za-z~][A-Za-z0-9~]*)*$`)
/// first, so `Hello.java` comes before `Hello1.java`, then whole, by
/// [`verrevcmp`].
pub(crate) fn version_cmp(a: &[u8], b: &[u8]) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    match (a[0] == b'.', b[0] == b'.') {
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        (true, true) => {
            for special in [&b"."[..], b".."] {
                match (a == special, b == special) {
                    (true, true) => return Ordering::Equal,
                    (true, false) => return Ordering::Less,
                    (false, true) => return Ordering::Greater,
                    _ => {}
                }
            }
        }
        _ => {}
    }
    let (pa, pb) = (file_prefix_len(a), file_prefix_len(b));
    let first = verrevcmp(&a[..pa], &b[..pb]);
    if first != Ordering::Equal || (pa == a.len() && pb == b.len()) {
        first
    } else {
        verrevcmp(a, b)
    }
}

/// The length of `s` without its file suffix: gnulib's `file_prefixlen`,
/// the longest match of `(\.[A-Za-z~][A-Za-z0-9~]*)*$` that leaves at
/// least one byte.
fn file_prefix_len(s: &[u8]) -> usize {
    let n = s.len();
    let mut prefix = 0;
    let mut i = 0;
    loop {
        if i == n {
            return prefix;
        }
        i += 1;
        prefix = i;
        while i + 1 < n && s[i] == b'.' && (s[i + 1].is_ascii_alphabetic() || s[i + 1] == b'~') {
            i += 2;
            while i < n && (s[i].is_ascii_alphanumeric() || s[i] == b'~') {
                i += 1;
            }
        }
    }
}

/// Debian's version rule: runs of digits compare as numbers, the rest as
/// text with `~` first and letters before other characters.
fn verrevcmp(a: &[u8], b: &[u8]) -> Ordering {
    fn order(c: Option<&u8>) -> i32 {
        match c {
            None => 0,
            Some(b'~') => -1,
            Some(c) if c.is_ascii_digit() => 0,
            Some(c) if c.is_ascii_alphabetic() => i32::from(*c),
            Some(c) => i32::from(*c) + 256,
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        while (i < a.len() && !a[i].is_ascii_digit()) || (j < b.len() && !b[j].is_ascii_digit()) {
            let (x, y) = (order(a.get(i)), order(b.get(j)));
            if x != y {
                return x.cmp(&y);
            }
            i += 1;
            j += 1;
        }
        while a.get(i) == Some(&b'0') {
            i += 1;
        }
        while b.get(j) == Some(&b'0') {
            j += 1;
        }
        let (si, sj) = (i, j);
        while i < a.len() && a[i].is_ascii_digit() {
            i += 1;
        }
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        let ord = (i - si)
            .cmp(&(j - sj))
            .then_with(|| a[si..i].cmp(&b[sj..j]));
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// `-M`'s rank of a field: 1 to 12 for a month's first three letters
/// (after blanks, any case), 0 for anything else.
fn month_rank(s: &[u8]) -> usize {
    const MONTHS: [&[u8; 3]; 12] = [
        b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV",
        b"DEC",
    ];
    let s = &s[skip_blanks(s, 0, s.len())..];
    let Some(head) = s.get(..3) else {
        return 0;
    };
    MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(head))
        .map_or(0, |i| i + 1)
}

fn compare_with(a: &[u8], b: &[u8], order: Order) -> Ordering {
    let ord = if order.month {
        month_rank(a).cmp(&month_rank(b))
    } else if order.dictionary || order.printable {
        let keep = |c: &&u8| {
            if order.dictionary {
                is_blank(**c) || c.is_ascii_alphanumeric()
            } else {
                matches!(**c, b' '..=b'~')
            }
        };
        if order.fold {
            a.iter()
                .filter(keep)
                .map(u8::to_ascii_uppercase)
                .cmp(b.iter().filter(keep).map(u8::to_ascii_uppercase))
        } else {
            a.iter().filter(keep).cmp(b.iter().filter(keep))
        }
    } else if order.human {
        human_cmp(a, b)
    } else if order.version {
        version_cmp(a, b)
    } else if order.general {
        general_cmp(a, b)
    } else if order.numeric {
        numeric_cmp(a, b)
    } else if order.fold {
        a.iter()
            .map(u8::to_ascii_uppercase)
            .cmp(b.iter().map(u8::to_ascii_uppercase))
    } else {
        a.cmp(b)
    };
    if order.reverse { ord.reverse() } else { ord }
}

/// The sort's configuration.
struct Sorter {
    keys: Vec<Key>,
    global: Order,
    sep: Option<u8>,
    stable: bool,
}

impl Sorter {
    /// Compares by the keys only.
    fn keys_cmp(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.keys.is_empty() {
            let (a, b) = if self.global.blanks {
                (
                    &a[skip_blanks(a, 0, a.len())..],
                    &b[skip_blanks(b, 0, b.len())..],
                )
            } else {
                (a, b)
            };
            return compare_with(a, b, self.global);
        }
        for k in &self.keys {
            let ord = compare_with(
                key_bytes(a, k, self.sep),
                key_bytes(b, k, self.sep),
                k.order,
            );
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }

    fn cmp(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.keys_cmp(a, b).then_with(|| {
            if self.stable {
                Ordering::Equal
            } else if self.global.reverse {
                b.cmp(a)
            } else {
                a.cmp(b)
            }
        })
    }
}

/// The bytes `-R` hashes: the first key, or the whole line.
fn key_of<'a>(sorter: &Sorter, line: &'a [u8]) -> &'a [u8] {
    match sorter.keys.first() {
        Some(k) => key_bytes(line, k, sorter.sep),
        None => line,
    }
}

/// `sort`.
/// One obsolete position, `N[.M][OPTS]`: the counts and the options.
fn obsolete_pos(s: &str) -> Option<(usize, Option<usize>, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n = s[..end].parse().ok()?;
    let rest = &s[end..];
    let (m, opts) = match rest.strip_prefix('.') {
        Some(r) => {
            let e = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            (Some(r[..e].parse().ok()?), &r[e..])
        }
        None => (None, rest),
    };
    opts.chars()
        .all(|c| "bdfgiMhnRrV".contains(c))
        .then_some((n, m, opts))
}

/// Rewrites the obsolete keys `+POS1 [-POS2]` (fields and characters
/// counted from 0) as `-k` keys, as GNU sort still reads them: `+7` is
/// `-k 8`, `+1 -2` is `-k 2,2`, `+2.1n -3.4` is `-k 3.2n,4.4`. A `+` word
/// that is no position stays a file name.
fn obsolete_keys(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.extend(args[i - 1..].iter().cloned());
            break;
        }
        // The values of options that take one are never keys.
        if matches!(a.as_str(), "-o" | "-t" | "-k" | "-S" | "-T") {
            out.push(a.clone());
            if let Some(v) = args.get(i) {
                out.push(v.clone());
            }
            i += 1;
            continue;
        }
        let Some((n, m, opts)) = a.strip_prefix('+').and_then(obsolete_pos) else {
            out.push(a.clone());
            continue;
        };
        let mut key = format!("{}", n + 1);
        if let Some(m) = m {
            key.push_str(&format!(".{}", m + 1));
        }
        key.push_str(opts);
        let end = args
            .get(i)
            .and_then(|e| e.strip_prefix('-'))
            .filter(|e| e.starts_with(|c: char| c.is_ascii_digit()))
            .and_then(obsolete_pos);
        if let Some((e, c, opts)) = end {
            i += 1;
            match c {
                Some(c) if c > 0 => key.push_str(&format!(",{}.{c}{opts}", e + 1)),
                _ => key.push_str(&format!(",{e}{opts}")),
            }
        }
        out.push("-k".to_owned());
        out.push(key);
    }
    out
}

pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('r', "reverse", "r"),
        flag('n', "numeric-sort", "n"),
        flag('h', "human-numeric-sort", "h"),
        flag('V', "version-sort", "V"),
        flag('g', "general-numeric-sort", "g"),
        flag('z', "zero-terminated", "z"),
        flag('u', "unique", "u"),
        flag('f', "ignore-case", "f"),
        flag('b', "ignore-leading-blanks", "b"),
        flag('s', "stable", "s"),
        value('t', "field-separator", "t"),
        value('k', "key", "k"),
        value('o', "output", "o"),
        flag('M', "month-sort", "M"),
        flag('d', "dictionary-order", "d"),
        flag('i', "ignore-nonprinting", "i"),
        flag('c', "", "c"),
        flag('C', "", "C"),
        super::optional("check", "check"),
        flag('m', "merge", "m"),
        flag('R', "random-sort", "R"),
        value('\0', "random-source", "random-source"),
        // Memory, temporary files and threads: nothing to tune here.
        value('S', "buffer-size", "S"),
        value('T', "temporary-directory", "T"),
        value('\0', "parallel", "parallel"),
        value('\0', "batch-size", "batch-size"),
    ];
    let args = obsolete_keys(args);
    let p = match options(cx, "sort", &args, SPEC, 2) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // `-o /dev/stdout` (or `/dev/null`) is standard output; a file would
    // be written.
    let to_null = p.value("o") == Some("/dev/null");
    let to_file = p
        .value("o")
        .filter(|o| !matches!(*o, "/dev/stdout" | "-" | "/dev/null"));
    let global = Order {
        numeric: p.has("n"),
        reverse: p.has("r"),
        fold: p.has("f"),
        blanks: p.has("b"),
        human: p.has("h"),
        version: p.has("V"),
        general: p.has("g"),
        month: p.has("M"),
        dictionary: p.has("d"),
        printable: p.has("i"),
    };
    let sep = match p.value("t") {
        None => None,
        Some(t) if t.len() == 1 => t.bytes().next(),
        Some("\\0") => Some(0),
        Some(t) => {
            let msg = if t.is_empty() {
                "sort: empty tab".to_owned()
            } else {
                format!("sort: multi-character tab '{t}'")
            };
            cx.err(msg);
            return 2;
        }
    };
    let mut keys = Vec::new();
    for k in p.values("k") {
        match parse_key(k) {
            Ok(mut key) => {
                if !key.order.any() {
                    key.order = global;
                }
                keys.push(key);
            }
            Err(e) => {
                cx.err(format_args!("sort: {e}"));
                return 2;
            }
        }
    }
    // With -u, lines with equal keys keep their input order and the first
    // one is printed, as GNU does.
    let sorter = Sorter {
        keys,
        global,
        sep,
        stable: p.has("s") || p.has("u"),
    };
    let operands = if p.operands.is_empty() {
        vec!["-".to_owned()]
    } else {
        p.operands.clone()
    };
    let eol = if p.has("z") { 0 } else { b'\n' };
    // Each input is kept as it was read and the lines point into it: the
    // script's memory holds the input once, plus a slice per line.
    let mut inputs = Vec::with_capacity(operands.len());
    for op in &operands {
        match cx.read_operand(op) {
            Ok(d) => inputs.push(d),
            Err(e) => {
                // A directory opens, and fails when read.
                let what = match e {
                    FsError::IsADirectory(_) => "read failed",
                    _ => "cannot read",
                };
                cx.err(format_args!(
                    "sort: {what}: {}: {}",
                    super::quote::quote(op, false),
                    e.strerror()
                ));
                return 2;
            }
        }
    }
    // GNU reads its input before it creates the output.
    if let Some(o) = to_file {
        cx.err(format_args!(
            "sort: open failed: {}: Read-only file system",
            super::quote::quote(o, false)
        ));
        return 2;
    }
    let count = inputs
        .iter()
        .map(|d| {
            memchr::memchr_iter(eol, d).count() + usize::from(!d.is_empty() && !d.ends_with(&[eol]))
        })
        .sum();
    let mut lines: Vec<&[u8]> = Vec::with_capacity(count);
    for d in &inputs {
        lines.extend(crate::search::records(d, eol));
    }
    let check = match (p.has("c"), p.has("C"), p.value("check")) {
        (_, true, _) | (_, _, Some("quiet" | "silent")) => Some(true),
        (true, _, _) | (_, _, Some(_)) => Some(false),
        _ if p.has("check") => Some(false),
        _ => None,
    };
    if let Some(quiet) = check {
        // `-c`: the first line out of order (with -u, not strictly after
        // the one before) is the answer.
        let unique = p.has("u");
        for (i, w) in lines.windows(2).enumerate() {
            let ord = sorter.cmp(w[0], w[1]);
            let bad = ord == Ordering::Greater
                || (unique && sorter.keys_cmp(w[0], w[1]) == Ordering::Equal);
            if bad {
                if !quiet {
                    cx.err(format_args!(
                        "sort: {}:{}: disorder: {}",
                        operands[0],
                        i + 2,
                        crate::lossless::decode(w[1])
                    ));
                }
                return 1;
            }
        }
        return 0;
    }
    if p.has("R") {
        // Random, but equal keys stay together, as GNU's hash of the key
        // does.
        let seed = cx.env.clock_seed();
        let hash = |l: &[u8]| {
            let mut h = seed ^ 0xcbf2_9ce4_8422_2325;
            for &b in key_of(&sorter, l) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
            h
        };
        lines.sort_by_cached_key(|l| hash(l));
        if !to_null {
            write_records(cx, &lines, eol);
        }
        return 0;
    }
    lines.sort_by(|a, b| sorter.cmp(a, b));
    if p.has("u") {
        lines.dedup_by(|b, a| sorter.keys_cmp(a, b) == Ordering::Equal);
    }
    if !to_null {
        write_records(cx, &lines, eol);
    }
    0
}

/// Writes `lines`, each ended by `eol`, a block at a time: the output is
/// never held whole beside the input it points into. A reader that has
/// stopped (`sort | head -1`) ends the writing.
fn write_records(cx: &mut Cx<'_>, lines: &[&[u8]], eol: u8) {
    const BLOCK: usize = 64 << 10;
    let mut out = Vec::with_capacity(BLOCK);
    for l in lines {
        out.extend_from_slice(l);
        out.push(eol);
        if out.len() >= BLOCK {
            cx.out(&out);
            out.clear();
            if cx.stdout_gone() {
                return;
            }
        }
    }
    cx.out(&out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        let c = |a: &str, b: &str| numeric_cmp(a.as_bytes(), b.as_bytes());
        assert_eq!(c("10", "9"), Ordering::Greater);
        assert_eq!(c("-10", "-9"), Ordering::Less);
        assert_eq!(c("1.50", "1.5"), Ordering::Equal);
        assert_eq!(c("abc", "0"), Ordering::Equal);
        assert_eq!(c("-0", "0"), Ordering::Equal);
        assert_eq!(c(" 007", "7"), Ordering::Equal);
        assert_eq!(c("0.5", "-0.5"), Ordering::Greater);
    }

    #[test]
    fn keys() {
        let k = parse_key("2,2n").expect("parses");
        assert_eq!(key_bytes(b"a 10 x", &k, None), b" 10");
        let k = parse_key("2").expect("parses");
        assert_eq!(key_bytes(b"a,b,c", &k, Some(b',')), b"b,c");
        let k = parse_key("1.2,1.3").expect("parses");
        assert_eq!(key_bytes(b"abcd", &k, None), b"bc");
        assert!(parse_key("0").is_err());
        assert!(parse_key("1x").is_err());
    }
}
