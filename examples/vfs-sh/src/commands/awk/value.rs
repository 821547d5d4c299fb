//! Awk's values: numbers, strings, and the "strnum" of input fields (a
//! string that compares as a number when it looks like one), with the
//! conversions between them that POSIX and gawk define.

use std::rc::Rc;

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Uninit,
    Num(f64),
    Str(Rc<str>),
    /// Input that looks numeric: compares as the number, prints as typed.
    StrNum(Rc<str>, f64),
}

/// The number at the start of `s`, as `strtod` reads it (decimal only, as
/// gawk without `--non-decimal-data`); 0 when there is none.
pub(crate) fn leading_number(s: &str) -> f64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    // `inf` and `nan`, as gawk accepts them with a sign.
    let rest = t[i..].to_ascii_lowercase();
    if i > 0 && (rest.starts_with("inf") || rest.starts_with("nan")) {
        let v = if rest.starts_with("inf") {
            f64::INFINITY
        } else {
            f64::NAN
        };
        return if b[0] == b'-' { -v } else { v };
    }
    let digits_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if i == digits_start || (i == digits_start + 1 && b.get(digits_start) == Some(&b'.')) {
        return 0.0;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut k = i + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if b.get(k).is_some_and(u8::is_ascii_digit) {
            while b.get(k).is_some_and(u8::is_ascii_digit) {
                k += 1;
            }
            i = k;
        }
    }
    t[..i].parse().unwrap_or(0.0)
}

/// Whether the whole of `s` (blanks around allowed) is a number.
pub(crate) fn looks_numeric(s: &str) -> Option<f64> {
    let t = s.trim_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    if t.is_empty() {
        return None;
    }
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let lower = t[i..].to_ascii_lowercase();
    if i > 0 && (lower == "inf" || lower == "nan" || lower == "infinity") {
        return Some(leading_number(t));
    }
    let ds = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let int_digits = i - ds;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let fs = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        frac_digits = i - fs;
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let es = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == es {
            return None;
        }
    }
    (i == b.len()).then(|| t.parse().unwrap_or(0.0))
}

/// A number as awk prints it: integers whole, the rest with `fmt`
/// (`CONVFMT` or `OFMT`).
pub(crate) fn num_to_string(n: f64, fmt: &str) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "+nan" }.to_owned();
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf" } else { "+inf" }.to_owned();
    }
    if n == n.trunc() && n.abs() < 1e16 {
        return format!("{}", n as i64);
    }
    if n == n.trunc() {
        // gawk prints every integral value in full.
        return format!("{n:.0}");
    }
    if fmt == "%.6g" {
        return super::format_g6(n);
    }
    super::sprintf_num(fmt, n)
}

impl Val {
    pub(crate) fn str(s: &str) -> Val {
        Val::Str(s.into())
    }

    /// A field or other input: a strnum when it looks numeric.
    pub(crate) fn input(s: &str) -> Val {
        match looks_numeric(s) {
            Some(n) => Val::StrNum(s.into(), n),
            None => Val::Str(s.into()),
        }
    }

    pub(crate) fn num(&self) -> f64 {
        match self {
            Val::Uninit => 0.0,
            Val::Num(n) | Val::StrNum(_, n) => *n,
            Val::Str(s) => leading_number(s),
        }
    }

    /// The string value, with `CONVFMT` for non-integral numbers.
    pub(crate) fn to_str(&self, convfmt: &str) -> Rc<str> {
        match self {
            Val::Uninit => "".into(),
            Val::Num(n) => num_to_string(*n, convfmt).into(),
            Val::Str(s) | Val::StrNum(s, _) => s.clone(),
        }
    }

    pub(crate) fn truthy(&self) -> bool {
        match self {
            Val::Uninit => false,
            Val::Num(n) => *n != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::StrNum(_, n) => *n != 0.0,
        }
    }

    /// Whether comparisons treat it as a number.
    pub(crate) fn is_numeric(&self) -> bool {
        matches!(self, Val::Num(_) | Val::StrNum(..) | Val::Uninit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_from_text() {
        assert_eq!(leading_number("  12abc"), 12.0);
        assert_eq!(leading_number("3.5e2x"), 350.0);
        assert_eq!(leading_number("abc"), 0.0);
        assert_eq!(leading_number("-.5"), -0.5);
        assert_eq!(leading_number("0x1A"), 0.0);
        assert_eq!(looks_numeric(" 42 "), Some(42.0));
        assert_eq!(looks_numeric("4e"), None);
        assert_eq!(looks_numeric("1e3"), Some(1000.0));
        assert_eq!(looks_numeric(""), None);
        assert_eq!(looks_numeric("."), None);
        assert_eq!(looks_numeric("+1.5"), Some(1.5));
    }

    #[test]
    fn numbers_to_text() {
        assert_eq!(num_to_string(3.0, "%.6g"), "3");
        assert_eq!(num_to_string(0.1, "%.6g"), "0.1");
        assert_eq!(num_to_string(1.0 / 3.0, "%.6g"), "0.333333");
        assert_eq!(
            num_to_string(1e30, "%.6g"),
            "1000000000000000019884624838656"
        );
        assert_eq!(num_to_string(123456789.5, "%.6g"), "1.23457e+08");
        assert_eq!(num_to_string(-2.5, "%.2f"), "-2.50");
    }
}
