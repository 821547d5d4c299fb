//! The `-l` library: `s(x)`, `c(x)`, `a(x)`, `l(x)`, `e(x)` and `j(n,x)`.
//!
//! GNU bc defines these in bc itself: each raises `scale` by a few digits,
//! sums a series until a term truncates to zero, and cuts the sum to the
//! caller's scale with a division by one. Which digits a script sees, and
//! how many (`e(0)` is `1.00000000000000000000`, `l(1)` is `0`), follow from
//! those working scales, so each function here takes the same steps at the
//! same scales, on the same decimal operations as the calculator's own
//! `*`, `/` and `sqrt`. The differential cases hold them to GNU bc.

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};

use super::{Dec, MAX_DIGITS, OVERFLOW, Res, parse_number};

/// π/4 and atan(1/5) to 60 places: the answers `a(1)` and `a(.2)` give at
/// once up to that scale, cut to 25, 40 or 60 places as GNU bc cuts them.
const ATAN_1: &str = ".785398163397448309615660845819875721049292349843776455243736";
const ATAN_FIFTH: &str = ".197395559849880758370049765194790293447585103787852101517688";

fn lit(s: &str) -> Dec {
    parse_number(s).unwrap_or_else(|_| Dec::int(0))
}

fn negate(d: Dec) -> Dec {
    Dec {
        mant: -d.mant,
        scale: d.scale,
    }
}

/// `scale = v`: its integer part, refused past what a number may hold.
fn to_scale(v: &Dec) -> Res<u32> {
    let s = v.rescale(0);
    if s.is_negative() {
        return Ok(0);
    }
    match s.to_u64() {
        Some(s) if s <= MAX_DIGITS => Ok(s as u32),
        _ => Err(OVERFLOW.to_owned()),
    }
}

/// `v / 1`: the library's way to cut a result to the caller's scale.
fn cut(v: Dec, scale: u32) -> Res<Dec> {
    v.div(Dec::int(1), scale)
}

/// `e(x)`: halves `x` below 1, sums the series with six more digits than
/// `scale` (and more for a large `x`), squares the sum back.
pub(super) fn e(x: Dec, z: u32) -> Res<Dec> {
    let neg = x.mant.is_negative();
    let mut x = if neg { negate(x) } else { x };
    let n = to_scale(&Dec::int(6 + u64::from(z)).add(lit(".44").mul(x.clone(), z)?, false)?)?;
    let mut scale = x.scale + 1;
    let mut halvings = 0u32;
    let one = Dec::int(1);
    while x.cmp(&one).is_gt() {
        halvings += 1;
        x = x.div(Dec::int(2), scale)?;
        scale += 1;
    }
    let scale = n;
    let mut v = one.clone().add(x.clone(), false)?;
    let mut a = x.clone();
    let mut d = Dec::int(1);
    for i in 2u64.. {
        a = a.mul(x.clone(), scale)?;
        d = d.mul(Dec::int(i), scale)?;
        let term = a.clone().div(d.clone(), scale)?;
        if term.is_zero() {
            for _ in 0..halvings {
                v = v.clone().mul(v, scale)?;
            }
            return if neg { one.div(v, z) } else { cut(v, z) };
        }
        v = v.add(term, false)?;
    }
    unreachable!("the series ends when a term truncates to zero")
}

/// `l(x)`: square roots bring `x` within (.5, 2), then the series of
/// `2 atanh((x-1)/(x+1))`. Zero and negative numbers give `(1 - 10^scale)`.
pub(super) fn l(x: Dec, z: u32) -> Res<Dec> {
    if !x.mant.is_positive() {
        let big = Dec::int(BigInt::from(1) - super::pow10(z));
        return cut(big, z);
    }
    let scale = z.checked_add(6).ok_or_else(|| OVERFLOW.to_owned())?;
    let mut x = x;
    let mut f = Dec::int(2);
    let (two, half) = (Dec::int(2), lit(".5"));
    while x.cmp(&two).is_ge() {
        f = f.mul(Dec::int(2), scale)?;
        x = x.sqrt(scale)?;
    }
    while x.cmp(&half).is_le() {
        f = f.mul(Dec::int(2), scale)?;
        x = x.sqrt(scale)?;
    }
    let one = Dec::int(1);
    let mut n = x
        .clone()
        .add(one.clone(), true)?
        .div(x.add(one, false)?, scale)?;
    let mut v = n.clone();
    let m = n.clone().mul(n.clone(), scale)?;
    for i in (3u64..).step_by(2) {
        n = n.mul(m.clone(), scale)?;
        let term = n.clone().div(Dec::int(i), scale)?;
        if term.is_zero() {
            return cut(f.mul(v, scale)?, z);
        }
        v = v.add(term, false)?;
    }
    unreachable!("the series ends when a term truncates to zero")
}

/// `a(x)`: `a(1)` and `a(.2)` are known to 60 places; any other `x` is
/// brought below .2 with `atan(x) = atan(.2) + atan((x-.2)/(1+.2x))`, then
/// summed.
pub(super) fn a(x: Dec, z: u32) -> Res<Dec> {
    let neg = x.mant.is_negative();
    let m = Dec::int(if neg { -1 } else { 1 });
    let mut x = if neg { negate(x) } else { x };
    for (at, value) in [(Dec::int(1), ATAN_1), (lit(".2"), ATAN_FIFTH)] {
        if x.cmp(&at).is_eq() {
            for places in [25, 40, 60] {
                if z <= places {
                    return lit(&value[..=places as usize]).div(m, z);
                }
            }
        }
    }
    let fifth = lit(".2");
    let atan_fifth = if x.cmp(&fifth).is_gt() {
        a(
            fifth.clone(),
            z.checked_add(5).ok_or_else(|| OVERFLOW.to_owned())?,
        )?
    } else {
        Dec::int(0)
    };
    let scale = z + 3;
    let mut f = Dec::int(0);
    while x.cmp(&fifth).is_gt() {
        f = f.add(Dec::int(1), false)?;
        let den = Dec::int(1).add(x.clone().mul(fifth.clone(), scale)?, false)?;
        x = x.add(fifth.clone(), true)?.div(den, scale)?;
    }
    let mut v = x.clone();
    let mut n = x.clone();
    let s = negate(x.clone()).mul(x, scale)?;
    for i in (3u64..).step_by(2) {
        n = n.mul(s.clone(), scale)?;
        let term = n.clone().div(Dec::int(i), scale)?;
        if term.is_zero() {
            return f.mul(atan_fifth, scale)?.add(v, false)?.div(m, z);
        }
        v = v.add(term, false)?;
    }
    unreachable!("the series ends when a term truncates to zero")
}

/// `s(x)`: `x` reduced by multiples of 2π (from `a(1)` at about 1.1 times
/// the scale), then the Taylor series at two more digits.
pub(super) fn s(x: Dec, z: u32) -> Res<Dec> {
    let wide = to_scale(&lit("1.1").mul(Dec::int(z), z)?.add(Dec::int(2), false)?)?;
    let quarter_pi = a(Dec::int(1), wide)?;
    let neg = x.mant.is_negative();
    let mut x = if neg { negate(x) } else { x };
    let n = x
        .clone()
        .div(quarter_pi.clone(), 0)?
        .add(Dec::int(2), false)?
        .div(Dec::int(4), 0)?;
    x = x.add(Dec::int(4).mul(n.clone(), 0)?.mul(quarter_pi, 0)?, true)?;
    if !n.rem(Dec::int(2), 0)?.is_zero() {
        x = negate(x);
    }
    let scale = z + 2;
    let mut v = x.clone();
    let mut term = x.clone();
    let sq = negate(x.clone()).mul(x, scale)?;
    for i in (3u64..).step_by(2) {
        term = term.mul(sq.clone().div(Dec::int(i * (i - 1)), scale)?, scale)?;
        if term.is_zero() {
            return cut(if neg { negate(v) } else { v }, z);
        }
        v = v.add(term.clone(), false)?;
    }
    unreachable!("the series ends when a term truncates to zero")
}

/// `c(x)`: `s(x + π/2)` at 1.2 times the scale.
pub(super) fn c(x: Dec, z: u32) -> Res<Dec> {
    let scale = to_scale(&Dec::int(z).mul(lit("1.2"), z)?)?;
    let half_pi = a(Dec::int(1), scale)?.mul(Dec::int(2), scale)?;
    cut(s(x.add(half_pi, false)?, scale)?, z)
}

/// `j(n, x)`: the Bessel function of integer order `n`, by its series.
pub(super) fn j(n: Dec, x: Dec, z: u32) -> Res<Dec> {
    let mut n = n.div(Dec::int(1), 0)?;
    let mut neg = false;
    if n.mant.is_negative() {
        n = negate(n);
        if !n.clone().rem(Dec::int(2), 0)?.is_zero() {
            neg = true;
        }
    }
    let order = n
        .mant
        .to_u64()
        .filter(|&o| o <= MAX_DIGITS)
        .ok_or_else(|| OVERFLOW.to_owned())?;
    let mut fact = Dec::int(1);
    for i in 2..=order {
        fact = fact.mul(Dec::int(i), 0)?;
    }
    let wide = to_scale(&lit("1.5").mul(Dec::int(z), 0)?)?;
    let f = x
        .clone()
        .pow(n.clone(), wide)?
        .div(Dec::int(2).pow(n.clone(), wide)?, wide)?
        .div(fact, wide)?;
    let mut v = Dec::int(1);
    let mut term = Dec::int(1);
    let sq = negate(x.clone()).mul(x, wide)?.div(Dec::int(4), wide)?;
    let scale = to_scale(&Dec::int(
        i128::from(wide) + f.length() as i128 - i128::from(f.scale),
    ))?;
    for i in 1u64.. {
        term = term
            .mul(sq.clone(), scale)?
            .div(Dec::int(i), scale)?
            .div(Dec::int(order + i), scale)?;
        if term.is_zero() {
            let r = f.mul(v, scale)?;
            return cut(if neg { negate(r) } else { r }, z);
        }
        v = v.add(term.clone(), false)?;
    }
    unreachable!("the series ends when a term truncates to zero")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(d: Res<Dec>) -> String {
        d.map(|d| d.render()).unwrap_or_else(|e| e)
    }

    #[test]
    fn the_library_gives_gnu_bcs_digits() {
        assert_eq!(show(e(Dec::int(1), 20)), "2.71828182845904523536");
        assert_eq!(show(e(Dec::int(0), 20)), "1.00000000000000000000");
        assert_eq!(show(l(Dec::int(1), 20)), "0");
        assert_eq!(show(a(Dec::int(-1), 20)), "-.78539816339744830961");
        assert_eq!(show(s(Dec::int(-1), 20)), "-.84147098480789650665");
        assert_eq!(
            show(j(Dec::int(1), Dec::int(2), 20)),
            ".57672480775687338720"
        );
    }
}
