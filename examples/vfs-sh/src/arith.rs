//! Shell arithmetic, as bash evaluates `$((...))`, `((...))` and `let`:
//! 64-bit integers that wrap, C's operators and precedence, `**`,
//! assignments (`=`, `+=`, ..., `++`, `--`), `?:`, `,`, and numbers in
//! decimal, octal (`017`), hex (`0x1f`) and `BASE#DIGITS`. A variable's
//! value is itself evaluated as an expression (to a bounded depth).

/// Variables, as arithmetic sees them.
pub(crate) trait Vars {
    /// The variable's value as text (empty when unset).
    fn get_var(&mut self, name: &str) -> String;
    /// Sets the variable to a number.
    fn set_var(&mut self, name: &str, value: i64);
}

/// `a[key]` as the array's name and the subscript, for a name that
/// names an element.
pub(crate) fn element_ref(name: &str) -> Option<(&str, &str)> {
    let (array, rest) = name.split_once('[')?;
    Some((array, rest.strip_suffix(']')?))
}

/// How deep variables referring to expressions may recurse.
const MAX_DEPTH: u32 = 64;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
    LParen,
    RParen,
}

const OPS: &[&str] = &[
    "<<=", ">>=", "**", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "<<", ">>",
    "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "^", "|", "!", "~",
    "?", ":", "=", ",",
];

fn number(text: &str) -> Result<i64, String> {
    let bad = || format!("{text}: value too great for base (error token is \"{text}\")");
    if let Some((base, digits)) = text.split_once('#') {
        let base: u32 = base.parse().map_err(|_| bad())?;
        if !(2..=64).contains(&base) {
            return Err(format!("{text}: invalid arithmetic base"));
        }
        let mut v: i64 = 0;
        for c in digits.chars() {
            let d = match c {
                '0'..='9' => c as u32 - '0' as u32,
                'a'..='z' => c as u32 - 'a' as u32 + 10,
                'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
                'A'..='Z' => c as u32 - 'A' as u32 + 36,
                '@' => 62,
                '_' => 63,
                _ => return Err(bad()),
            };
            if d >= base {
                return Err(bad());
            }
            v = v.wrapping_mul(i64::from(base)).wrapping_add(i64::from(d));
        }
        return Ok(v);
    }
    let (digits, radix) =
        if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (h, 16)
        } else if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text, 10)
        };
    let mut v: i64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix).ok_or_else(bad)?;
        v = v.wrapping_mul(i64::from(radix)).wrapping_add(i64::from(d));
    }
    Ok(v)
}

/// The tokens of `src`, each with the offset (in characters) where it
/// starts, for bash's `error token is "..."`: the text from a token on.
fn tokenize(src: &str) -> Result<(Vec<Tok>, Vec<usize>), String> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut at = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if at.len() < toks.len() + 1 {
            at.push(i);
        }
        if c.is_ascii_digit() {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '#' || *c == '@' || *c == '_')
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            toks.push(Tok::Num(number(&text)?));
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            // `a[expr]`: an array element, its subscript kept as written
            // for the shell to read (`]` balanced).
            if chars.get(i) == Some(&'[') {
                let mut depth = 0;
                let mut j = i;
                while let Some(&c) = chars.get(j) {
                    match c {
                        '[' => depth += 1,
                        ']' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if j < chars.len() {
                    i = j + 1;
                }
            }
            toks.push(Tok::Name(chars[start..i].iter().collect()));
            continue;
        }
        if c == '(' {
            toks.push(Tok::LParen);
            i += 1;
            continue;
        }
        if c == ')' {
            toks.push(Tok::RParen);
            i += 1;
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        match OPS.iter().find(|op| rest.starts_with(*op)) {
            Some(op) => {
                toks.push(Tok::Op(op));
                i += op.len();
            }
            None => {
                let tail: String = chars[i..].iter().collect();
                return Err(format!(
                    "{}: syntax error: invalid arithmetic operator (error token is \"{tail}\")",
                    src.trim()
                ));
            }
        }
    }
    Ok((toks, at))
}

struct Eval<'v> {
    toks: Vec<Tok>,
    /// Where each token starts in `chars`.
    at: Vec<usize>,
    chars: Vec<char>,
    pos: usize,
    vars: &'v mut dyn Vars,
    src: String,
    depth: u32,
}

type Res = Result<i64, String>;

/// Evaluates an expression; an empty one is 0.
pub(crate) fn eval(src: &str, vars: &mut dyn Vars) -> Res {
    eval_depth(src, vars, 0)
}

fn eval_depth(src: &str, vars: &mut dyn Vars, depth: u32) -> Res {
    if depth > MAX_DEPTH {
        return Err(format!("{src}: expression recursion level exceeded"));
    }
    let (toks, at) = tokenize(src)?;
    if toks.is_empty() {
        return Ok(0);
    }
    let mut e = Eval {
        toks,
        at,
        chars: src.chars().collect(),
        pos: 0,
        vars,
        // bash names the expression without its leading blanks only.
        src: src.trim_start().to_owned(),
        depth,
    };
    let v = e.comma(true)?;
    if let Some(t) = e.peek() {
        let assigns = matches!(t, Tok::Op(op) if op.ends_with('=')
            && !matches!(*op, "==" | "!=" | "<=" | ">="));
        return Err(e.error(if assigns {
            "attempted assignment to non-variable"
        } else {
            "syntax error in expression"
        }));
    }
    Ok(v)
}

fn binary_prec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        "**" => 11,
        _ => return None,
    })
}

impl Eval<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    /// bash's error token: the text from the token the parser looks at
    /// on, or from the last token when it has read them all.
    fn token(&self) -> String {
        let k = self.pos.min(self.at.len().saturating_sub(1));
        self.text_from(k)
    }

    fn text_from(&self, k: usize) -> String {
        self.at
            .get(k)
            .map(|&i| self.chars[i..].iter().collect())
            .unwrap_or_default()
    }

    fn error(&self, msg: &str) -> String {
        format!("{}: {msg} (error token is \"{}\")", self.src, self.token())
    }

    fn operand_expected(&self) -> String {
        self.error("syntax error: operand expected")
    }

    fn var_value(&mut self, name: &str, live: bool) -> Res {
        if !live {
            return Ok(0);
        }
        let text = self.vars.get_var(name);
        let t = text.trim();
        if t.is_empty() {
            return Ok(0);
        }
        // A plain decimal number is itself; one with a leading 0 is octal
        // (`x=010` is 8), which the expression's own reading gives.
        let digits = t.trim_start_matches(['-', '+']);
        if !(digits.len() > 1 && digits.starts_with('0'))
            && let Ok(n) = t.parse::<i64>()
        {
            return Ok(n);
        }
        eval_depth(t, self.vars, self.depth + 1)
    }

    fn comma(&mut self, live: bool) -> Res {
        let mut v = self.assign(live)?;
        while self.peek() == Some(&Tok::Op(",")) {
            self.pos += 1;
            v = self.assign(live)?;
        }
        Ok(v)
    }

    fn assign(&mut self, live: bool) -> Res {
        if let (Some(Tok::Name(name)), Some(Tok::Op(op))) = (
            self.toks.get(self.pos).cloned(),
            self.toks.get(self.pos + 1).cloned(),
        ) && matches!(
            op,
            "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "<<=" | ">>=" | "&=" | "^=" | "|="
        ) {
            self.pos += 2;
            let rhs_at = self.pos;
            let rhs = self.assign(live)?;
            if !live {
                return Ok(0);
            }
            let v = if op == "=" {
                rhs
            } else {
                let cur = self.var_value(&name, true)?;
                self.apply(&op[..op.len() - 1], cur, rhs, rhs_at)?
            };
            self.vars.set_var(&name, v);
            return Ok(v);
        }
        self.ternary(live)
    }

    fn ternary(&mut self, live: bool) -> Res {
        let c = self.binary(1, live)?;
        if self.peek() != Some(&Tok::Op("?")) {
            return Ok(c);
        }
        self.pos += 1;
        let a = self.assign(live && c != 0)?;
        if self.peek() != Some(&Tok::Op(":")) {
            return Err(self.error("`:' expected for conditional expression"));
        }
        self.pos += 1;
        if self.pos == self.toks.len() {
            return Err(self.error("expression expected"));
        }
        let b = self.assign(live && c == 0)?;
        Ok(if c != 0 { a } else { b })
    }

    fn binary(&mut self, min: u8, live: bool) -> Res {
        let mut left = self.unary(live)?;
        loop {
            let Some(Tok::Op(op)) = self.peek().cloned() else {
                return Ok(left);
            };
            let Some(prec) = binary_prec(op) else {
                return Ok(left);
            };
            if prec < min {
                return Ok(left);
            }
            self.pos += 1;
            let right_at = self.pos;
            // `**` is right-associative; the rest left.
            let next = if op == "**" { prec } else { prec + 1 };
            let right = match op {
                "&&" => {
                    let r = self.binary(next, live && left != 0)?;
                    left = i64::from(left != 0 && r != 0);
                    continue;
                }
                "||" => {
                    let r = self.binary(next, live && left == 0)?;
                    left = i64::from(left != 0 || r != 0);
                    continue;
                }
                _ => self.binary(next, live)?,
            };
            left = if live {
                self.apply(op, left, right, right_at)?
            } else {
                0
            };
        }
    }

    /// `op` on `a` and `b`; the right operand's tokens begin at `right_at`
    /// (a division by 0 names the text from there).
    fn apply(&self, op: &str, a: i64, b: i64, right_at: usize) -> Res {
        Ok(match op {
            "+" => a.wrapping_add(b),
            "-" => a.wrapping_sub(b),
            "*" => a.wrapping_mul(b),
            "/" | "%" if b == 0 => {
                return Err(format!(
                    "{}: division by 0 (error token is \"{}\")",
                    self.src,
                    self.text_from(right_at)
                ));
            }
            "/" => a.wrapping_div(b),
            "%" => a.wrapping_rem(b),
            "**" => {
                if b < 0 {
                    return Err(self.error("exponent less than 0"));
                }
                a.wrapping_pow(u32::try_from(b).unwrap_or(u32::MAX))
            }
            "<<" => a.wrapping_shl(b as u32),
            ">>" => a.wrapping_shr(b as u32),
            "<" => i64::from(a < b),
            ">" => i64::from(a > b),
            "<=" => i64::from(a <= b),
            ">=" => i64::from(a >= b),
            "==" => i64::from(a == b),
            "!=" => i64::from(a != b),
            "&" => a & b,
            "^" => a ^ b,
            "|" => a | b,
            _ => return Err(self.error("syntax error in expression")),
        })
    }

    fn unary(&mut self, live: bool) -> Res {
        match self.peek().cloned() {
            Some(Tok::Op(op @ ("++" | "--"))) => {
                self.pos += 1;
                let Some(Tok::Name(name)) = self.peek().cloned() else {
                    return Err(self.operand_expected());
                };
                self.pos += 1;
                let v = self.var_value(&name, live)?;
                let v = if op == "++" {
                    v.wrapping_add(1)
                } else {
                    v.wrapping_sub(1)
                };
                if live {
                    self.vars.set_var(&name, v);
                }
                Ok(v)
            }
            Some(Tok::Op(op @ ("-" | "+" | "!" | "~"))) => {
                self.pos += 1;
                let v = self.unary(live)?;
                Ok(match op {
                    "-" => v.wrapping_neg(),
                    "+" => v,
                    "!" => i64::from(v == 0),
                    _ => !v,
                })
            }
            _ => self.postfix(live),
        }
    }

    fn postfix(&mut self, live: bool) -> Res {
        match self.peek().cloned() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(n)
            }
            Some(Tok::Name(name)) => {
                self.pos += 1;
                let v = self.var_value(&name, live)?;
                if let Some(Tok::Op(op @ ("++" | "--"))) = self.peek().cloned() {
                    self.pos += 1;
                    if live {
                        let n = if op == "++" {
                            v.wrapping_add(1)
                        } else {
                            v.wrapping_sub(1)
                        };
                        self.vars.set_var(&name, n);
                    }
                }
                Ok(v)
            }
            Some(Tok::LParen) => {
                self.pos += 1;
                let v = self.comma(live)?;
                if self.peek() != Some(&Tok::RParen) {
                    return Err(self.error("missing `)'"));
                }
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.operand_expected()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(Default)]
    struct Map(HashMap<String, String>);

    impl Vars for Map {
        fn get_var(&mut self, name: &str) -> String {
            self.0.get(name).cloned().unwrap_or_default()
        }
        fn set_var(&mut self, name: &str, value: i64) {
            self.0.insert(name.to_owned(), value.to_string());
        }
    }

    #[test]
    fn evaluates_like_bash() {
        let mut m = Map::default();
        m.0.insert("x".into(), "5".into());
        m.0.insert("e".into(), "x*2".into());
        for (src, want) in [
            ("1 + 2 * 3", 7),
            ("(1 + 2) * 3", 9),
            ("2 ** 3 ** 2", 512),
            ("7 / 2", 3),
            ("-7 / 2", -3),
            ("-7 % 3", -1),
            ("x + 1", 6),
            ("e + 1", 11),
            ("010 + 0x10 + 2#101", 8 + 16 + 5),
            ("1 < 2 && 3 > 4", 0),
            ("1 || 0", 1),
            ("x > 3 ? 10 : 20", 10),
            ("~0", -1),
            ("!5", 0),
            ("1 << 4", 16),
            ("unset_var + 1", 1),
            ("", 0),
            ("1, 2, 3", 3),
            ("9223372036854775807 + 1", i64::MIN),
        ] {
            assert_eq!(eval(src, &mut m), Ok(want), "{src}");
        }
    }

    #[test]
    fn assignments_and_side_effects() {
        let mut m = Map::default();
        assert_eq!(eval("i = 3", &mut m), Ok(3));
        assert_eq!(eval("i++", &mut m), Ok(3));
        assert_eq!(m.get_var("i"), "4");
        assert_eq!(eval("++i", &mut m), Ok(5));
        assert_eq!(eval("i += 10", &mut m), Ok(15));
        assert_eq!(eval("0 && (i = 99)", &mut m), Ok(0));
        assert_eq!(m.get_var("i"), "15");
        assert_eq!(eval("1 ? 2 : (i = 7)", &mut m), Ok(2));
        assert_eq!(m.get_var("i"), "15");
    }

    #[test]
    fn errors() {
        let mut m = Map::default();
        assert!(eval("1 / 0", &mut m).is_err_and(|e| e.contains("division by 0")));
        assert!(eval("1 +", &mut m).is_err());
        assert!(eval("2 ** -1", &mut m).is_err());
        assert!(eval("1 $ 2", &mut m).is_err());
        m.0.insert("a".into(), "a".into());
        assert!(eval("a + 1", &mut m).is_err_and(|e| e.contains("recursion")));
    }
}
