//! `bc`: the calculator as scripts use it (`echo 'scale=2; 10/3' | bc`,
//! `paste -sd+ | bc`, `seq -s '*' 1 500 | bc`): decimal numbers of any size
//! with GNU bc's scale rules, `+ - * / % ^`, comparisons, `!`, `&&`, `||`,
//! parentheses, variables, `scale`, `sqrt()`, `length()`, `scale()`,
//! `ibase` and `obase`, `-l` (scale 20). Numbers are `num-bigint` integers
//! with a decimal scale, as GNU's are digit strings with one; a number is
//! limited to a million digits (a runaway power ends with a message, not
//! with the script's memory). `define`, arrays, strings and the `-l`
//! library's functions (`s c a l e j`) are refused with a message.

use std::collections::HashMap;

use num_bigint::{BigInt, BigUint};
use num_traits::{Pow, Signed, ToPrimitive, Zero};

use crate::exec::Cx;

/// A decimal: `mant / 10^scale`, of any size, as GNU bc's numbers are.
#[derive(Debug, Clone, PartialEq)]
struct Dec {
    mant: BigInt,
    scale: u32,
}

type Res<T> = Result<T, String>;

/// The most digits a number may have: far beyond what scripts compute
/// (`seq -s '*' 1 500 | bc` has 1,135), small enough that a runaway power
/// ends with a message and not by exhausting the script's memory.
const MAX_DIGITS: u64 = 1_000_000;

const OVERFLOW: &str = "bc: number too large for vfs-sh's bc (more than 1,000,000 digits)";

fn pow10(n: u32) -> BigInt {
    BigInt::from(10u32).pow(n)
}

impl Dec {
    fn int(n: impl Into<BigInt>) -> Dec {
        Dec {
            mant: n.into(),
            scale: 0,
        }
    }

    fn rescale(&self, scale: u32) -> BigInt {
        if scale >= self.scale {
            &self.mant * pow10(scale - self.scale)
        } else {
            &self.mant / pow10(self.scale - scale)
        }
    }

    fn truncate(self, scale: u32) -> Dec {
        if scale >= self.scale {
            return self;
        }
        Dec {
            mant: self.rescale(scale),
            scale,
        }
    }

    fn checked(self) -> Res<Dec> {
        if self.mant.bits() > MAX_DIGITS * 10 / 3 {
            return Err(OVERFLOW.to_owned());
        }
        Ok(self)
    }

    fn add(self, o: Dec, neg: bool) -> Res<Dec> {
        let s = self.scale.max(o.scale);
        let (a, b) = (self.rescale(s), o.rescale(s));
        Dec {
            mant: if neg { a - b } else { a + b },
            scale: s,
        }
        .checked()
    }

    fn mul(self, o: Dec, scale: u32) -> Res<Dec> {
        let want = (self.scale + o.scale).min(scale.max(self.scale).max(o.scale));
        Ok(Dec {
            mant: self.mant * o.mant,
            scale: self.scale + o.scale,
        }
        .checked()?
        .truncate(want))
    }

    fn div(self, o: Dec, scale: u32) -> Res<Dec> {
        if o.mant.is_zero() {
            return Err("Runtime error (func=(main), adr=0): Divide by zero".to_owned());
        }
        // (a / 10^sa) / (b / 10^sb) at `scale` digits.
        let num = self.rescale(scale + o.scale);
        Dec {
            mant: num / o.mant,
            scale,
        }
        .checked()
    }

    fn rem(self, o: Dec, scale: u32) -> Res<Dec> {
        // a - (a / b) * b, the quotient at `scale`.
        let q = self.clone().div(o.clone(), scale)?;
        let s = (scale + o.scale).max(self.scale);
        let prod = q.mul(o, s)?;
        self.add(prod, true)
    }

    /// GNU bc's `bc_raise`: its products are exact, so the power is the
    /// mantissa's, cut to `min(scale * n, max(scale, the base's scale))`.
    fn pow(self, e: Dec, scale: u32) -> Res<Dec> {
        if e.scale > 0 && !(&e.mant % pow10(e.scale)).is_zero() {
            return Err("Runtime warning: non-zero scale in exponent".to_owned());
        }
        let n = e.rescale(0);
        if n.is_negative() {
            let p = self.pow(Dec::int(-n), scale)?;
            return Dec::int(1).div(p, scale);
        }
        if self.mant.is_zero() || self.mant.magnitude() == &BigUint::from(1u32) && self.scale == 0 {
            let odd = (&n % 2u32) == BigInt::from(1u32);
            let one = if self.mant.is_negative() && odd {
                -1
            } else {
                1
            };
            return Ok(Dec::int(if self.mant.is_zero() && n.is_positive() {
                0
            } else {
                one
            }));
        }
        let n = n.to_u32().ok_or_else(|| OVERFLOW.to_owned())?;
        // The result's size, before computing it.
        if self.mant.bits().saturating_mul(u64::from(n)) > MAX_DIGITS * 10 / 3 + 64 {
            return Err(OVERFLOW.to_owned());
        }
        let want = self.scale.saturating_mul(n).min(scale.max(self.scale));
        Ok(Dec {
            mant: self.mant.pow(n),
            scale: self.scale.saturating_mul(n),
        }
        .truncate(want))
    }

    fn sqrt(self, scale: u32) -> Res<Dec> {
        if self.mant.is_negative() {
            return Err(
                "Runtime error (func=(main), adr=0): Square root of a negative number".to_owned(),
            );
        }
        let s = scale.max(self.scale);
        // isqrt(a * 10^(2s - sa)): the root has s decimals.
        let radicand = if 2 * s >= self.scale {
            &self.mant * pow10(2 * s - self.scale)
        } else {
            &self.mant / pow10(self.scale - 2 * s)
        };
        Ok(Dec {
            mant: radicand.sqrt(),
            scale: s,
        })
    }

    fn is_zero(&self) -> bool {
        self.mant.is_zero()
    }

    fn cmp(&self, o: &Dec) -> std::cmp::Ordering {
        let s = self.scale.max(o.scale);
        self.rescale(s).cmp(&o.rescale(s))
    }

    /// bc's output in another base: digits 0-9A-F up to base 16, above it
    /// each digit as a space and a zero-padded decimal; a fraction gets
    /// digits until they are finer than the number's scale (bc's
    /// `out_num`); lines cut at 70 characters with `\\`.
    fn render_in(&self, base: u32) -> String {
        // bc's `out_num`: zero is `0`, whatever its scale.
        if self.mant.is_zero() {
            return "0".to_owned();
        }
        let big = base > 16;
        let width = (base - 1).to_string().len();
        let digit = |d: u32| {
            if big {
                format!(" {d:0width$}")
            } else {
                char::from_digit(d, 16)
                    .map_or_else(String::new, |c| c.to_ascii_uppercase().to_string())
            }
        };
        let one = pow10(self.scale).magnitude().clone();
        let abs = self.mant.magnitude();
        let (mut int, mut frac) = (abs / &one, abs % &one);
        let b = BigUint::from(base);
        let mut ints = Vec::new();
        while !int.is_zero() {
            ints.push(digit((&int % &b).to_u32().unwrap_or(0)));
            int /= &b;
        }
        let mut s = String::new();
        if self.mant.is_negative() {
            s.push('-');
        }
        if ints.is_empty() {
            s.push_str(&digit(0));
        }
        s.extend(ints.into_iter().rev());
        if self.scale > 0 {
            s.push('.');
            // Digits until base^k reaches 10^scale.
            let mut reach = BigUint::from(1u32);
            while reach < one {
                frac *= &b;
                s.push_str(&digit((&frac / &one).to_u32().unwrap_or(0)));
                frac %= &one;
                reach *= &b;
            }
        }
        cut_lines(&s)
    }

    /// bc's output: no leading zero before the point, digits to the
    /// number's scale, lines cut at 70 characters with `\`; zero is `0`.
    fn render(&self) -> String {
        if self.mant.is_zero() {
            return "0".to_owned();
        }
        let neg = self.mant.is_negative();
        let digits = self.mant.magnitude().to_string();
        let scale = self.scale as usize;
        let (int, frac) = if digits.len() > scale {
            (
                digits[..digits.len() - scale].to_owned(),
                digits[digits.len() - scale..].to_owned(),
            )
        } else {
            (String::new(), format!("{digits:0>scale$}"))
        };
        let int = int.trim_start_matches('0').to_owned();
        let mut s = String::new();
        if neg {
            s.push('-');
        }
        s.push_str(&int);
        if scale > 0 {
            s.push('.');
            s.push_str(&frac);
        }
        if s.is_empty() {
            s.push('0');
        }
        cut_lines(&s)
    }
}

/// bc's lines: 68 characters and a `\` (69 in all, `BC_LINE_LENGTH` 70 less the newline).
fn cut_lines(s: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, chunk) in chars.chunks(68).enumerate() {
        if i > 0 {
            out.push_str("\\\n");
        }
        out.extend(chunk);
    }
    out
}

/// A number written in base `ibase`, its digits 0-9 and A-Z: a single
/// digit is its own value whatever the base (`Z` is 35); in a longer
/// number a digit past the base counts as `ibase - 1`, as GNU bc reads it
/// (so `28K` is 289, `ZZZ` 999). A fraction keeps as many decimal places
/// as it has digits, as bc keeps them.
fn parse_in_base(s: &str, ibase: u32) -> Res<Dec> {
    let digit = |c: char| i128::from(c.to_digit(36).unwrap_or(0));
    if s.chars().count() == 1 && s != "." {
        return Ok(Dec::int(digit(s.chars().next().unwrap_or('0'))));
    }
    let value = |c: char| digit(c).min(i128::from(ibase) - 1);
    if ibase == 10 && !s.contains(|c: char| c.is_ascii_uppercase()) {
        return parse_number(s);
    }
    let base = i128::from(ibase);
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let mut v = Dec::int(0);
    for c in int.chars() {
        v = Dec::int(v.mant * base + value(c)).checked()?;
    }
    let scale = u32::try_from(frac.chars().count()).unwrap_or(u32::MAX);
    // The fraction's digits, most significant first: sum d / base^k.
    let mut f = Dec::int(0);
    for c in frac.chars().rev() {
        f = f
            .add(Dec::int(value(c)), false)?
            .div(Dec::int(base), scale)?;
    }
    v.add(f, false)
}

fn parse_number(s: &str) -> Res<Dec> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = format!("{int}{frac}");
    if digits.len() as u64 > MAX_DIGITS {
        return Err(OVERFLOW.to_owned());
    }
    let mant: BigInt = if digits.is_empty() {
        BigInt::zero()
    } else {
        digits.parse().map_err(|_| OVERFLOW.to_owned())?
    };
    Ok(Dec {
        mant,
        scale: u32::try_from(frac.len()).unwrap_or(u32::MAX),
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(String),
    Name(String),
    Op(&'static str),
    End,
}

fn tokenize(src: &str) -> Res<Vec<Tok>> {
    const OPS: &[&str] = &[
        "==", "!=", "<=", ">=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "^=", "++", "--", "+",
        "-", "*", "/", "%", "^", "<", ">", "=", "!", "(", ")", ",",
    ];
    let cs: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut toks = Vec::new();
    while let Some(&c) = cs.get(i) {
        if c == '\\' && cs.get(i + 1) == Some(&'\n') {
            i += 2;
            continue;
        }
        if c == '/' && cs.get(i + 1) == Some(&'*') {
            i += 2;
            while i < cs.len() && !(cs[i] == '*' && cs.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == '#' {
            while i < cs.len() && cs[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '\n' || c == ';' {
            toks.push(Tok::End);
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        // Digits are 0-9 and A-Z (for `ibase` above 10, and clamped to it).
        let digit = |c: &char| c.is_ascii_digit() || c.is_ascii_uppercase() || *c == '.';
        if digit(&c) {
            let start = i;
            while cs.get(i).is_some_and(digit) {
                i += 1;
            }
            if i == start {
                i += 1;
            }
            toks.push(Tok::Num(cs[start..i].iter().collect()));
            continue;
        }
        if c.is_ascii_lowercase() || c == '_' {
            let start = i;
            while cs
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            toks.push(Tok::Name(cs[start..i].iter().collect()));
            continue;
        }
        let rest: String = cs[i..(i + 2).min(cs.len())].iter().collect();
        match OPS.iter().find(|o| rest.starts_with(**o)) {
            Some(o) => {
                toks.push(Tok::Op(o));
                i += o.len();
            }
            None => {
                if c == '{' || c == '}' || c == '"' || c == '[' {
                    return Err("bc: functions, strings, blocks and arrays are not supported by vfs-sh's bc".to_owned());
                }
                return Err(format!("(standard_in) 1: illegal character: {c}"));
            }
        }
    }
    toks.push(Tok::End);
    Ok(toks)
}

struct Bc {
    vars: HashMap<String, Dec>,
    scale: u32,
    ibase: u32,
    obase: u32,
}

struct P<'a> {
    t: &'a [Tok],
    i: usize,
    /// How deep the expressions being parsed nest (parentheses, arguments,
    /// assignments, signs): each level is a recursion.
    depth: usize,
}

/// How deep an expression may nest: the guest's stack holds a few hundred
/// levels of this parser, and an expression nested deeper is refused
/// rather than trap the sandbox. GNU bc allows more.
const MAX_NESTING: usize = 256;

impl P<'_> {
    /// Enters one more level of nesting, refusing it past the limit. Once
    /// in, the caller leaves it (`depth -= 1`) when the level is parsed,
    /// whether it parsed or not.
    fn deeper(&mut self) -> Res<()> {
        if self.depth >= MAX_NESTING {
            return Err(format!(
                "bc: the expression nests deeper than {MAX_NESTING} levels"
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn peek(&self) -> &Tok {
        self.t.get(self.i).unwrap_or(&Tok::End)
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Tok::Op(o) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }
}

const SYNTAX: &str = "(standard_in) 1: syntax error";

impl Bc {
    fn expr(&mut self, p: &mut P<'_>) -> Res<Dec> {
        p.deeper()?;
        let v = self.expr_here(p);
        p.depth -= 1;
        v
    }

    fn expr_here(&mut self, p: &mut P<'_>) -> Res<Dec> {
        // Assignment: NAME op= expr.
        if let (Tok::Name(n), Some(Tok::Op(op))) = (p.peek().clone(), p.t.get(p.i + 1).cloned())
            && matches!(op, "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^=")
        {
            p.i += 2;
            let v = self.expr(p)?;
            let cur = self.get(&n);
            let v = match op {
                "=" => v,
                "+=" => cur.add(v, false)?,
                "-=" => cur.add(v, true)?,
                "*=" => cur.mul(v, self.scale)?,
                "/=" => cur.div(v, self.scale)?,
                "%=" => cur.rem(v, self.scale)?,
                _ => cur.pow(v, self.scale)?,
            };
            self.set(&n, v.clone())?;
            return Ok(v);
        }
        self.or(p)
    }

    fn get(&self, n: &str) -> Dec {
        match n {
            "scale" => return Dec::int(i128::from(self.scale)),
            "ibase" => return Dec::int(i128::from(self.ibase)),
            "obase" => return Dec::int(i128::from(self.obase)),
            _ => {}
        }
        self.vars.get(n).cloned().unwrap_or_else(|| Dec::int(0))
    }

    fn set(&mut self, n: &str, v: Dec) -> Res<()> {
        if n == "scale" {
            // GNU bc allows far more; this one stops at 10,000 digits.
            let s = v.rescale(0).clamp(BigInt::zero(), BigInt::from(10_000));
            self.scale = s.to_u32().unwrap_or(0);
        } else if n == "ibase" {
            // GNU bc keeps ibase within 2..=16.
            self.ibase = v
                .rescale(0)
                .clamp(BigInt::from(2), BigInt::from(16))
                .to_u32()
                .unwrap_or(10);
        } else if n == "obase" {
            self.obase = v
                .rescale(0)
                .clamp(BigInt::from(2), BigInt::from(999))
                .to_u32()
                .unwrap_or(10);
        } else {
            self.vars.insert(n.to_owned(), v);
        }
        Ok(())
    }

    fn or(&mut self, p: &mut P<'_>) -> Res<Dec> {
        let mut l = self.and(p)?;
        while p.eat("||") {
            let r = self.and(p)?;
            l = Dec::int(i128::from(!l.is_zero() || !r.is_zero()));
        }
        Ok(l)
    }

    fn and(&mut self, p: &mut P<'_>) -> Res<Dec> {
        let mut l = self.not(p)?;
        while p.eat("&&") {
            let r = self.not(p)?;
            l = Dec::int(i128::from(!l.is_zero() && !r.is_zero()));
        }
        Ok(l)
    }

    fn not(&mut self, p: &mut P<'_>) -> Res<Dec> {
        if p.eat("!") {
            let v = self.not(p)?;
            return Ok(Dec::int(i128::from(v.is_zero())));
        }
        self.rel(p)
    }

    fn rel(&mut self, p: &mut P<'_>) -> Res<Dec> {
        let l = self.add(p)?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if p.eat(op) {
                let r = self.add(p)?;
                let o = l.cmp(&r);
                use std::cmp::Ordering::*;
                let v = match op {
                    "==" => o == Equal,
                    "!=" => o != Equal,
                    "<=" => o != Greater,
                    ">=" => o != Less,
                    "<" => o == Less,
                    _ => o == Greater,
                };
                return Ok(Dec::int(i128::from(v)));
            }
        }
        Ok(l)
    }

    fn add(&mut self, p: &mut P<'_>) -> Res<Dec> {
        let mut l = self.mul(p)?;
        loop {
            if p.eat("+") {
                l = l.add(self.mul(p)?, false)?;
            } else if p.eat("-") {
                l = l.add(self.mul(p)?, true)?;
            } else {
                return Ok(l);
            }
        }
    }

    fn mul(&mut self, p: &mut P<'_>) -> Res<Dec> {
        let mut l = self.pow(p)?;
        loop {
            if p.eat("*") {
                l = l.mul(self.pow(p)?, self.scale)?;
            } else if p.eat("/") {
                l = l.div(self.pow(p)?, self.scale)?;
            } else if p.eat("%") {
                l = l.rem(self.pow(p)?, self.scale)?;
            } else {
                return Ok(l);
            }
        }
    }

    fn pow(&mut self, p: &mut P<'_>) -> Res<Dec> {
        let base = self.unary(p)?;
        if p.eat("^") {
            let e = self.pow(p)?;
            return base.pow(e, self.scale);
        }
        Ok(base)
    }

    fn unary(&mut self, p: &mut P<'_>) -> Res<Dec> {
        if p.eat("-") {
            p.deeper()?;
            let v = self.unary(p);
            p.depth -= 1;
            let v = v?;
            return Ok(Dec {
                mant: -v.mant,
                scale: v.scale,
            });
        }
        if p.eat("+") {
            p.deeper()?;
            let v = self.unary(p);
            p.depth -= 1;
            return v;
        }
        self.primary(p)
    }

    fn primary(&mut self, p: &mut P<'_>) -> Res<Dec> {
        match p.peek().clone() {
            Tok::Num(n) => {
                p.i += 1;
                parse_in_base(&n, self.ibase)
            }
            Tok::Op("(") => {
                p.i += 1;
                let v = self.expr(p)?;
                if !p.eat(")") {
                    return Err(SYNTAX.to_owned());
                }
                Ok(v)
            }
            Tok::Name(n) => {
                p.i += 1;
                if p.eat("(") {
                    let arg = self.expr(p)?;
                    if !p.eat(")") {
                        return Err(SYNTAX.to_owned());
                    }
                    return match n.as_str() {
                        "sqrt" => arg.sqrt(self.scale),
                        "length" => Ok(Dec::int(
                            arg.mant
                                .magnitude()
                                .to_string()
                                .len()
                                .max(arg.scale as usize) as i128,
                        )),
                        "scale" => Ok(Dec::int(i128::from(arg.scale))),
                        other => Err(format!(
                            "bc: function {other}() is not supported by vfs-sh's bc"
                        )),
                    };
                }
                if p.eat("++") {
                    let v = self.get(&n);
                    self.set(&n, v.clone().add(Dec::int(1), false)?)?;
                    return Ok(v);
                }
                if p.eat("--") {
                    let v = self.get(&n);
                    self.set(&n, v.clone().add(Dec::int(1), true)?)?;
                    return Ok(v);
                }
                Ok(self.get(&n))
            }
            _ => Err(SYNTAX.to_owned()),
        }
    }
}

/// `bc [-l] [-q] [FILE]...`: reads the files, then standard input.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut bc = Bc {
        vars: HashMap::new(),
        scale: 0,
        ibase: 10,
        obase: 10,
    };
    let mut files = Vec::new();
    for a in args {
        match a.as_str() {
            "-l" | "--mathlib" => bc.scale = 20,
            "-q" | "--quiet" | "-s" | "--standard" | "-w" | "--warn" => {}
            f => files.push(f.to_owned()),
        }
    }
    let mut text = String::new();
    for f in &files {
        match cx.fs.read(f) {
            Ok(d) => text.push_str(&String::from_utf8_lossy(&d)),
            Err(e) => {
                cx.err(format_args!("bc: {f}: {}", e.strerror()));
                return 1;
            }
        }
        text.push('\n');
    }
    if files.is_empty() || !text.contains("quit") {
        text.push_str(&String::from_utf8_lossy(&cx.stdin()));
    }
    let toks = match tokenize(&text) {
        Ok(t) => t,
        Err(e) => {
            cx.err(e);
            return 1;
        }
    };
    let mut out = String::new();
    let mut p = P {
        t: &toks,
        i: 0,
        depth: 0,
    };
    while p.i < toks.len() {
        if *p.peek() == Tok::End {
            p.i += 1;
            continue;
        }
        if matches!(p.peek(), Tok::Name(n) if n == "quit" || n == "halt") {
            break;
        }
        let is_assign = matches!(
            (p.peek(), p.t.get(p.i + 1)),
            (
                Tok::Name(_),
                Some(Tok::Op("=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^="))
            )
        );
        match bc.expr(&mut p) {
            Ok(v) => {
                if !is_assign {
                    out.push_str(&if bc.obase == 10 {
                        v.render()
                    } else {
                        v.render_in(bc.obase)
                    });
                    out.push('\n');
                }
            }
            Err(e) => {
                cx.outs(&std::mem::take(&mut out));
                cx.err(e);
                // Skip to the end of the statement, as bc recovers.
                while p.i < toks.len() && *p.peek() != Tok::End {
                    p.i += 1;
                }
            }
        }
        if *p.peek() != Tok::End && p.i < toks.len() {
            cx.outs(&std::mem::take(&mut out));
            cx.err(SYNTAX);
            while p.i < toks.len() && *p.peek() != Tok::End {
                p.i += 1;
            }
        }
    }
    cx.outs(&out);
    0
}
