//! `bc`: the calculator as scripts use it (`echo 'scale=2; 10/3' | bc`,
//! `paste -sd+ | bc`, `seq -s '*' 1 500 | bc`): decimal numbers of any size
//! with GNU bc's scale rules, `+ - * / % ^`, comparisons, `!`, `&&`, `||`,
//! parentheses, variables, `scale`, `sqrt()`, `length()`, `scale()`,
//! `ibase` and `obase`, `-l` (scale 20 and the library's `s c a l e j`,
//! in [`mathlib`]). Numbers are `num-bigint` integers with a decimal scale,
//! as GNU's are digit strings with one; a number is limited to a million
//! digits (a runaway power ends with a message, not with the script's
//! memory). `define`, arrays and strings are refused with a message.

use std::collections::HashMap;
use std::rc::Rc;

use num_bigint::{BigInt, BigUint};
use num_traits::{Pow, Signed, ToPrimitive, Zero};

use crate::exec::Cx;

mod mathlib;
mod parse;

use parse::{Arg, Bin, Expr, Func, Item, Local, ParseError, Parser, Place, PrintItem, Rel, Stmt};

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

    /// Whether a fraction is left past the point (`2^0.5` warns of one).
    fn has_fraction(&self) -> bool {
        self.scale > 0 && !(&self.mant % pow10(self.scale)).is_zero()
    }

    /// GNU bc's `bc_raise`: its products are exact, so the power is the
    /// mantissa's, cut to `min(scale * n, max(scale, the base's scale))`.
    /// The exponent's fraction is dropped.
    fn pow(self, e: Dec, scale: u32) -> Res<Dec> {
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

    /// `length(x)`: its significant digits, at least its scale.
    fn length(&self) -> usize {
        self.mant
            .magnitude()
            .to_string()
            .len()
            .max(self.scale as usize)
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
        // A zero integer part is not written (`.8`, as in base ten).
        s.extend(ints.into_iter().rev());
        if self.scale > 0 {
            s.push('.');
            // Digits until base^k reaches 10^scale; in a base above 16 the
            // first has no space before it (` 01 01.11 00`).
            let mut reach = BigUint::from(1u32);
            while reach < one {
                frac *= &b;
                let d = digit((&frac / &one).to_u32().unwrap_or(0));
                s.push_str(if reach == BigUint::from(1u32) {
                    d.trim_start()
                } else {
                    &d
                });
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

/// How deep the interpreter may recurse: statements within statements,
/// expressions within expressions and function calls, all counted. The
/// guest's stack must hold them with the shell's own levels above: a level
/// takes a few hundred bytes, and a script at the shell's deepest leaves
/// bc a quarter of a MiB. GNU bc allows more (a function that calls itself
/// stops after some 150 calls here).
const MAX_DEPTH: usize = 800;

/// The largest array subscript (GNU bc's `BC_DIM_MAX`).
const DIM_MAX: u32 = 16_777_215;

const LIMITS: &str = "BC_BASE_MAX     = 2147483647\nBC_DIM_MAX      = 16777215\n\
BC_SCALE_MAX    = 2147483647\nBC_STRING_MAX   = 2147483647\n\
MAX Exponent    = 9223372036854775807\nNumber of vars  = 32767\n";

/// An array: its elements that were set (any other is 0).
type Array = HashMap<u32, Dec>;

/// Why running stopped early.
enum Fault {
    /// A runtime error: reported, and the rest of the input line dropped.
    Error(String),
    /// `halt`: bc ends.
    Halt,
}

impl From<String> for Fault {
    fn from(m: String) -> Fault {
        Fault::Error(m)
    }
}

type Run<T> = Result<T, Fault>;

/// How a statement ended.
enum Flow {
    Next,
    Break,
    Continue,
    Return(Dec),
}

/// A place resolved to where it is: an element's subscript evaluated once.
enum Slot<'p> {
    Var(&'p str),
    Elem(&'p str, u32),
    Scale,
    Ibase,
    Obase,
    Last,
}

/// A value bound to a parameter or an `auto` name.
enum Bound {
    Value(Dec),
    Array(Array),
}

struct Bc<'c, 'x> {
    cx: &'c mut Cx<'x>,
    /// What is written and not yet passed on: bc's standard output is a C
    /// stream, written in whole 4 KiB blocks (its errors are not).
    out: Vec<u8>,
    /// Each name's values, innermost last: a function's parameters and
    /// `auto` names hide the caller's while it runs, for the functions it
    /// calls too (bc's scoping is dynamic).
    vars: HashMap<String, Vec<Dec>>,
    arrays: HashMap<String, Vec<Array>>,
    funcs: HashMap<String, Rc<Func>>,
    scale: u32,
    ibase: u32,
    obase: u32,
    last: Dec,
    /// `-l`: the library's functions are defined.
    mathlib: bool,
    /// The functions running, innermost last.
    calls: Vec<String>,
    /// How deep the interpreter is (`MAX_DEPTH`).
    depth: usize,
}

fn truth(b: bool) -> Dec {
    Dec::int(i128::from(b))
}

impl Bc<'_, '_> {
    fn runtime(&self, what: &str) -> Fault {
        let func = self.calls.last().map_or("(main)", String::as_str);
        Fault::Error(format!("Runtime error (func={func}, adr=0): {what}"))
    }

    fn render(&self, v: &Dec) -> String {
        if self.obase == 10 {
            v.render()
        } else {
            v.render_in(self.obase)
        }
    }

    /// Reports an error. GNU bc flushes its output first, so what was
    /// printed before the error comes before it.
    fn error(&mut self, m: String) {
        let held = std::mem::take(&mut self.out);
        self.cx.out(&held);
        self.cx.err(m);
    }

    fn write(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
        self.cx.out_stdio(&mut self.out);
    }

    /// An expression statement's value, on a line of its own.
    fn show(&mut self, v: Dec) {
        let mut line = self.render(&v);
        line.push('\n');
        self.write(&line);
        self.last = v;
    }

    fn resolve<'p>(&mut self, place: &'p Place) -> Run<Slot<'p>> {
        Ok(match place {
            Place::Var(n) => Slot::Var(n),
            Place::Elem(n, index) => {
                let i = self.eval(index)?.rescale(0);
                match i.to_u32().filter(|&i| i <= DIM_MAX) {
                    Some(i) => Slot::Elem(n, i),
                    None => {
                        return Err(self.runtime(&format!("Array {n} subscript out of bounds.")));
                    }
                }
            }
            Place::Scale => Slot::Scale,
            Place::Ibase => Slot::Ibase,
            Place::Obase => Slot::Obase,
            Place::Last => Slot::Last,
        })
    }

    fn load(&self, slot: &Slot<'_>) -> Dec {
        match slot {
            Slot::Var(n) => self.vars.get(*n).and_then(|s| s.last()).cloned(),
            Slot::Elem(n, i) => self
                .arrays
                .get(*n)
                .and_then(|s| s.last())
                .and_then(|a| a.get(i))
                .cloned(),
            Slot::Scale => Some(Dec::int(i128::from(self.scale))),
            Slot::Ibase => Some(Dec::int(i128::from(self.ibase))),
            Slot::Obase => Some(Dec::int(i128::from(self.obase))),
            Slot::Last => Some(self.last.clone()),
        }
        .unwrap_or_else(|| Dec::int(0))
    }

    fn store(&mut self, slot: &Slot<'_>, v: Dec) {
        match slot {
            Slot::Var(n) => match self.vars.get_mut(*n).and_then(|s| s.last_mut()) {
                Some(top) => *top = v,
                None => {
                    self.vars.insert((*n).to_owned(), vec![v]);
                }
            },
            Slot::Elem(n, i) => {
                let stack = self.arrays.entry((*n).to_owned()).or_default();
                if stack.is_empty() {
                    stack.push(Array::new());
                }
                if let Some(a) = stack.last_mut() {
                    a.insert(*i, v);
                }
            }
            // GNU bc allows far more; this one stops at 10,000 digits.
            Slot::Scale => {
                let s = v.rescale(0).clamp(BigInt::zero(), BigInt::from(10_000));
                self.scale = s.to_u32().unwrap_or(0);
            }
            // GNU bc keeps ibase within 2..=16.
            Slot::Ibase => {
                self.ibase = v
                    .rescale(0)
                    .clamp(BigInt::from(2), BigInt::from(16))
                    .to_u32()
                    .unwrap_or(10);
            }
            // GNU bc takes any base up to `BC_BASE_MAX`.
            Slot::Obase => {
                self.obase = v
                    .rescale(0)
                    .clamp(BigInt::from(2), BigInt::from(i32::MAX))
                    .to_u32()
                    .unwrap_or(10);
            }
            Slot::Last => self.last = v,
        }
    }

    fn binary(&mut self, op: Bin, l: Dec, r: Dec) -> Res<Dec> {
        if op == Bin::Pow && r.has_fraction() {
            let func = self.calls.last().map_or("(main)", String::as_str);
            let warning =
                format!("Runtime warning (func={func}, adr=0): non-zero scale in exponent");
            self.error(warning);
        }
        match op {
            Bin::Add => l.add(r, false),
            Bin::Sub => l.add(r, true),
            Bin::Mul => l.mul(r, self.scale),
            Bin::Div => l.div(r, self.scale),
            Bin::Rem => l.rem(r, self.scale),
            Bin::Pow => l.pow(r, self.scale),
        }
    }

    /// Runs `f` one level deeper, refusing to go past `MAX_DEPTH`.
    fn deeper<T>(&mut self, f: impl FnOnce(&mut Self) -> Run<T>) -> Run<T> {
        if self.depth >= MAX_DEPTH {
            return Err(Fault::Error(format!(
                "bc: the program recurses deeper than {MAX_DEPTH} levels in vfs-sh's bc"
            )));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn eval(&mut self, e: &Expr) -> Run<Dec> {
        self.deeper(|bc| bc.eval_here(e))
    }

    fn eval_here(&mut self, e: &Expr) -> Run<Dec> {
        Ok(match e {
            Expr::Num(n) => parse_in_base(n, self.ibase)?,
            Expr::Group(e) => self.eval(e)?,
            Expr::Get(p) => {
                let slot = self.resolve(p)?;
                self.load(&slot)
            }
            Expr::Assign(p, op, value) => {
                let slot = self.resolve(p)?;
                let v = self.eval(value)?;
                let v = match op {
                    None => v,
                    Some(op) => {
                        let cur = self.load(&slot);
                        self.binary(*op, cur, v)?
                    }
                };
                self.store(&slot, v.clone());
                v
            }
            Expr::Pre(p, up) => {
                let slot = self.resolve(p)?;
                let v = self.load(&slot).add(Dec::int(1), !up)?;
                self.store(&slot, v.clone());
                v
            }
            Expr::Post(p, up) => {
                let slot = self.resolve(p)?;
                let v = self.load(&slot);
                self.store(&slot, v.clone().add(Dec::int(1), !up)?);
                v
            }
            Expr::Neg(e) => {
                let v = self.eval(e)?;
                Dec {
                    mant: -v.mant,
                    scale: v.scale,
                }
            }
            Expr::Not(e) => truth(self.eval(e)?.is_zero()),
            Expr::Pow(l, r) => {
                let l = self.eval(l)?;
                let r = self.eval(r)?;
                self.binary(Bin::Pow, l, r)?
            }
            Expr::Chain(first, rest) => {
                let mut v = self.eval(first)?;
                for (op, e) in rest {
                    let r = self.eval(e)?;
                    v = self.binary(*op, v, r)?;
                }
                v
            }
            Expr::Rel(first, rest) => {
                use std::cmp::Ordering::*;
                let mut v = self.eval(first)?;
                for (op, e) in rest {
                    let o = v.cmp(&self.eval(e)?);
                    v = truth(match op {
                        Rel::Eq => o == Equal,
                        Rel::Ne => o != Equal,
                        Rel::Le => o != Greater,
                        Rel::Ge => o != Less,
                        Rel::Lt => o == Less,
                        Rel::Gt => o == Greater,
                    });
                }
                v
            }
            Expr::And(all) => {
                for e in all {
                    if self.eval(e)?.is_zero() {
                        return Ok(truth(false));
                    }
                }
                truth(true)
            }
            Expr::Or(all) => {
                for e in all {
                    if !self.eval(e)?.is_zero() {
                        return Ok(truth(true));
                    }
                }
                truth(false)
            }
            Expr::Length(e) => Dec::int(self.eval(e)?.length() as u64),
            Expr::Sqrt(e) => self.eval(e)?.sqrt(self.scale)?,
            Expr::ScaleOf(e) => Dec::int(i128::from(self.eval(e)?.scale)),
            Expr::Call(name, args) => match self.call(name, args)? {
                Some(v) => v,
                None => return Err(self.runtime(&format!("void function {name} has no value"))),
            },
        })
    }

    /// Calls a function: the program's own, else one of `-l`'s. `None` is
    /// the no-value of a `void` function.
    fn call(&mut self, name: &str, args: &[Arg]) -> Run<Option<Dec>> {
        self.deeper(|bc| bc.call_here(name, args))
    }

    fn call_here(&mut self, name: &str, args: &[Arg]) -> Run<Option<Dec>> {
        let Some(f) = self.funcs.get(name).cloned() else {
            return self.library(name, args).map(Some);
        };
        if args.len() != f.params.len() {
            return Err(self.runtime("Parameter number mismatch"));
        }
        let mut bound = Vec::with_capacity(args.len() + f.autos.len());
        for (arg, param) in args.iter().zip(&f.params) {
            bound.push(match (arg, param.array) {
                (Arg::Value(e), false) => Bound::Value(self.eval(e)?),
                (Arg::Array(a), true) => Bound::Array(
                    self.arrays
                        .get(a)
                        .and_then(|s| s.last())
                        .cloned()
                        .unwrap_or_default(),
                ),
                _ => {
                    return Err(self.runtime(&format!(
                        "Parameter type mismatch, parameter {}.",
                        param.name
                    )));
                }
            });
        }
        for a in &f.autos {
            bound.push(if a.array {
                Bound::Array(Array::new())
            } else {
                Bound::Value(Dec::int(0))
            });
        }
        let locals: Vec<&Local> = f.params.iter().chain(&f.autos).collect();
        for (local, b) in locals.iter().zip(bound) {
            match b {
                Bound::Value(v) => self.vars.entry(local.name.clone()).or_default().push(v),
                Bound::Array(a) => self.arrays.entry(local.name.clone()).or_default().push(a),
            }
        }
        self.calls.push(name.to_owned());
        // The number's own errors name no function; this one is running.
        let flow = self.block(&f.body).map_err(|fault| match fault {
            Fault::Error(m) => Fault::Error(m.replacen("func=(main)", &format!("func={name}"), 1)),
            halt => halt,
        });
        self.calls.pop();
        for local in locals.iter().rev() {
            if local.array {
                self.arrays.get_mut(&local.name).and_then(Vec::pop);
            } else {
                self.vars.get_mut(&local.name).and_then(Vec::pop);
            }
        }
        let value = match flow? {
            Flow::Return(v) => v,
            _ => Dec::int(0),
        };
        Ok((!f.void).then_some(value))
    }

    fn library(&mut self, name: &str, args: &[Arg]) -> Run<Dec> {
        let lib = self.mathlib && matches!(name, "s" | "c" | "a" | "l" | "e" | "j");
        if !lib {
            return Err(self.runtime(&format!("Function {name} not defined.")));
        }
        if args.len() != if name == "j" { 2 } else { 1 } {
            return Err(self.runtime("Parameter number mismatch"));
        }
        let mut values = Vec::new();
        for a in args {
            match a {
                Arg::Value(e) => values.push(self.eval(e)?),
                Arg::Array(_) => return Err(self.runtime("Parameter type mismatch")),
            }
        }
        let z = self.scale;
        let mut values = values.into_iter();
        let x = values.next().unwrap_or_else(|| Dec::int(0));
        Ok(match name {
            "s" => mathlib::s(x, z),
            "c" => mathlib::c(x, z),
            "a" => mathlib::a(x, z),
            "l" => mathlib::l(x, z),
            "e" => mathlib::e(x, z),
            _ => mathlib::j(x, values.next().unwrap_or_else(|| Dec::int(0)), z),
        }?)
    }

    fn block(&mut self, stmts: &[Stmt]) -> Run<Flow> {
        for s in stmts {
            match self.exec(s)? {
                Flow::Next => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Next)
    }

    /// Runs a loop's body once: whether the loop goes on, or how it ends.
    fn iterate(&mut self, body: &Stmt) -> Run<Option<Flow>> {
        Ok(match self.exec(body)? {
            Flow::Next | Flow::Continue => None,
            Flow::Break => Some(Flow::Next),
            ret @ Flow::Return(_) => Some(ret),
        })
    }

    fn exec(&mut self, s: &Stmt) -> Run<Flow> {
        self.deeper(|bc| bc.exec_here(s))
    }

    fn exec_here(&mut self, s: &Stmt) -> Run<Flow> {
        match s {
            Stmt::Expr(Expr::Call(name, args), true) => {
                if let Some(v) = self.call(name, args)? {
                    self.show(v);
                }
            }
            Stmt::Expr(e, shown) => {
                let v = self.eval(e)?;
                if *shown {
                    self.show(v);
                }
            }
            Stmt::Str(s) => self.write(s),
            Stmt::Print(items) => {
                for item in items {
                    match item {
                        PrintItem::Str(s) => self.write(&unescape(s)),
                        PrintItem::Value(e) => {
                            let v = self.eval(e)?;
                            let text = self.render(&v);
                            self.write(&text);
                            self.last = v;
                        }
                    }
                }
            }
            Stmt::Block(stmts) => return self.block(stmts),
            Stmt::If(cond, then, other) => {
                if !self.eval(cond)?.is_zero() {
                    return self.exec(then);
                }
                if let Some(other) = other {
                    return self.exec(other);
                }
            }
            Stmt::While(cond, body) => {
                while !self.eval(cond)?.is_zero() {
                    if let Some(end) = self.iterate(body)? {
                        return Ok(end);
                    }
                }
            }
            Stmt::For(init, cond, step, body) => {
                if let Some(init) = init {
                    self.eval(init)?;
                }
                loop {
                    if let Some(cond) = cond
                        && self.eval(cond)?.is_zero()
                    {
                        break;
                    }
                    if let Some(end) = self.iterate(body)? {
                        return Ok(end);
                    }
                    if let Some(step) = step {
                        self.eval(step)?;
                    }
                }
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Return(value) => {
                let v = match value {
                    Some(e) => self.eval(e)?,
                    None => Dec::int(0),
                };
                return Ok(Flow::Return(v));
            }
            Stmt::Halt => return Err(Fault::Halt),
            Stmt::Limits => self.write(LIMITS),
        }
        Ok(Flow::Next)
    }
}

/// A `print` string's escapes: `\a \b \f \n \r \q(") \t \\`; any other
/// escaped character is dropped with its backslash, as GNU bc drops it.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('q') => out.push('"'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(_) => {}
            None => out.push('\\'),
        }
    }
    out
}

/// Parses a bc program without running it (for the fuzz target): how many
/// input items parsed.
pub(crate) fn check(program: &str) -> usize {
    let (toks, _) = parse::tokenize(program);
    let mut p = Parser::new(&toks);
    let mut parsed = 0;
    loop {
        match p.item() {
            Ok(None) | Err(ParseError::Quit) => return parsed,
            Ok(Some(_)) => parsed += 1,
            Err(ParseError::Syntax(_)) => p.recover(),
        }
    }
}

/// `bc [-l] [-q] [FILE]...`: reads the files, then standard input.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut mathlib = false;
    let mut files = Vec::new();
    for a in args {
        match a.as_str() {
            "-l" | "--mathlib" => mathlib = true,
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
    let (toks, bad) = parse::tokenize(&text);
    let mut bc = Bc {
        cx,
        out: Vec::new(),
        vars: HashMap::new(),
        arrays: HashMap::new(),
        funcs: HashMap::new(),
        scale: if mathlib { 20 } else { 0 },
        ibase: 10,
        obase: 10,
        last: Dec::int(0),
        mathlib,
        calls: Vec::new(),
        depth: 0,
    };
    let mut p = Parser::new(&toks);
    let mut bad = bad.into_iter().peekable();
    loop {
        let item = p.item();
        // Characters the tokens skipped are reported once the line they
        // are on has been read, before its syntax error.
        while let Some((_, m)) = bad.next_if(|(at, _)| *at <= p.i || p.at_end()) {
            bc.error(m);
        }
        let stmts = match item {
            Ok(None) | Err(ParseError::Quit) => break,
            Ok(Some(Item::Define(name, f))) => {
                bc.funcs.insert(name, f);
                continue;
            }
            Ok(Some(Item::Run(stmts))) => stmts,
            Err(ParseError::Syntax(m)) => {
                bc.error(m);
                p.recover();
                continue;
            }
        };
        match bc.block(&stmts) {
            Ok(_) => {}
            Err(Fault::Error(m)) => bc.error(m),
            Err(Fault::Halt) => break,
        }
    }
    let rest = std::mem::take(&mut bc.out);
    bc.cx.out(&rest);
    0
}
