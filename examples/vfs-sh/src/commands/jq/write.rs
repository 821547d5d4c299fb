//! JSON text as jq 1.6 writes it. jaq's own writer differs from jq where
//! agents notice: it keeps integers and floats apart (`10.0` stays `10.0`,
//! jq prints `10`), prints `1e100` where jq prints `1e+100`, and `NaN`
//! where jq prints `null`. jq has one number type (a double); this writer
//! prints every number as jq does.

use jaq_json::{Num, Val};

/// How values are laid out.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    /// `None` for compact output, else the indentation of one level.
    pub(super) indent: Option<String>,
    pub(super) sort_keys: bool,
    /// `-a`: non-ASCII characters as `\uXXXX`.
    pub(super) ascii: bool,
}

impl Layout {
    pub(super) const COMPACT: Layout = Layout {
        indent: None,
        sort_keys: false,
        ascii: false,
    };
}

/// How deep jq 1.6 writes a value.
const MAX_PRINT_DEPTH: usize = 256;

/// Appends `v` as JSON text.
pub(super) fn value(out: &mut Vec<u8>, layout: &Layout, level: usize, v: &Val) {
    // jq 1.6's `MAX_PRINT_DEPTH`: what is nested deeper is written as this
    // mark, which also keeps the writer's recursion bounded.
    if level > MAX_PRINT_DEPTH {
        out.extend_from_slice(b"<stripped: exceeds max depth>");
        return;
    }
    match v {
        Val::Null => out.extend_from_slice(b"null"),
        Val::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Val::Num(n) => out.extend_from_slice(number(n).as_bytes()),
        Val::TStr(s) | Val::BStr(s) => string(out, layout.ascii, s),
        Val::Arr(a) => {
            if a.is_empty() {
                out.extend_from_slice(b"[]");
                return;
            }
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(out, layout, level + 1);
                value(out, layout, level + 1, x);
            }
            newline(out, layout, level);
            out.push(b']');
        }
        Val::Obj(o) => {
            if o.is_empty() {
                out.extend_from_slice(b"{}");
                return;
            }
            let mut entries: Vec<(&Val, &Val)> = o.iter().collect();
            if layout.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push(b'{');
            for (i, (k, x)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(out, layout, level + 1);
                match k {
                    Val::TStr(s) | Val::BStr(s) => string(out, layout.ascii, s),
                    other => {
                        let mut key = Vec::new();
                        value(&mut key, &Layout::COMPACT, 0, other);
                        string(out, layout.ascii, &key);
                    }
                }
                out.push(b':');
                if layout.indent.is_some() {
                    out.push(b' ');
                }
                value(out, layout, level + 1, x);
            }
            newline(out, layout, level);
            out.push(b'}');
        }
    }
}

fn newline(out: &mut Vec<u8>, layout: &Layout, level: usize) {
    if let Some(unit) = &layout.indent {
        out.push(b'\n');
        for _ in 0..level {
            out.extend_from_slice(unit.as_bytes());
        }
    }
}

/// A JSON string literal: jq escapes `"` `\` and control characters (DEL
/// too), and with `-a` everything outside ASCII. Invalid UTF-8 is replaced,
/// as jq does when it reads it.
pub(super) fn string(out: &mut Vec<u8>, ascii: bool, bytes: &[u8]) {
    out.push(b'"');
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            c if ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.extend_from_slice(format!("\\u{u:04x}").as_bytes());
                }
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Integers beyond 2^53 are doubles in jq, as every number is.
const EXACT: i64 = 1 << 53;

/// A number as jq prints it.
pub(super) fn number(n: &Num) -> String {
    match n {
        Num::Int(i) if (-EXACT..=EXACT).contains(&(*i as i64)) => i.to_string(),
        Num::Int(i) => double(*i as f64),
        Num::BigInt(b) => double(b.to_string().parse().unwrap_or(f64::NAN)),
        Num::Float(x) => double(*x),
        Num::Dec(s) => double(s.parse().unwrap_or(f64::NAN)),
    }
}

/// jq's `jvp_dtoa_fmt`: the shortest digits that read back as `x`, in
/// positional notation unless the exponent is below -4 or more than 15
/// past the digits; exponents carry a sign and at least two digits.
/// NaN prints as `null`, infinities as the largest finite double.
pub(super) fn double(x: f64) -> String {
    if x.is_nan() {
        return "null".to_owned();
    }
    let x = if x.is_infinite() {
        f64::MAX.copysign(x)
    } else {
        x
    };
    // `{:e}` gives the shortest round-trip digits: "-1.2345e-7".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let decpt = exp + 1;
    let ndigits = digits.len() as i32;
    let mut out = String::new();
    if x.is_sign_negative() {
        out.push('-');
    }
    if decpt <= -4 || decpt > ndigits + 15 {
        out.push_str(&digits[..1]);
        if ndigits > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        out.push_str(&format!("e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs()));
    } else if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(&digits);
    } else if decpt >= ndigits {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (decpt - ndigits) as usize));
    } else {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::double;

    #[test]
    fn doubles_print_as_jq_prints_them() {
        for (x, want) in [
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e100, "1e+100"),
            (1e20, "1e+20"),
            (12345678901234567890.0, "12345678901234567000"),
            (1.5e16, "15000000000000000"),
            (1e17, "1e+17"),
            (0.1 + 0.2, "0.30000000000000004"),
            (10.0, "10"),
            (1.0 / 3.0, "0.3333333333333333"),
            (-0.0, "-0"),
            (f64::NAN, "null"),
            (f64::INFINITY, "1.7976931348623157e+308"),
            (1e15, "1000000000000000"),
            (1e16, "1e+16"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(double(x), want, "{x}");
        }
    }
}
