//! `cal`: month calendars as Debian's `cal` prints them (ncal 12.1.8 in its
//! traditional mode: weeks from Sunday, Great Britain's switch from the
//! Julian calendar in September 1752, never a highlighted today on a
//! pipe).
//!
//! Written by hand: the layout (the year over a row of months only when
//! the row starts a quarter, the six week lines every month keeps, the
//! trailing blanks) and the option rules (the last of `-1 -3 -y` wins;
//! `-A`/`-B` add to it, negative counts too) are ncal's own, and no
//! library prints them.

use crate::exec::Cx;
use crate::time::{MONTH_NAMES, civil};

const USAGE: &str = "\
Usage: cal [general options] [-jy] [[month] year]
       cal [general options] [-j] [-m month] [year]
       ncal -C [general options] [-jy] [[month] year]
       ncal -C [general options] [-j] [-m month] [year]
       ncal [general options] [-bhJjpwySM] [-H yyyy-mm-dd] [-s country_code] [-W number of days] [[month] year]
       ncal [general options] [-Jeo] [year]
General options: [-31] [-A months] [-B months] [-d yyyy-mm]";

/// Which of `-1`, `-3` and `-y` came last.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Span {
    One,
    Three,
    Year,
}

/// `cal [-13jy] [-A N] [-B N] [-d YYYY-MM] [-m MONTH] [[MONTH] YEAR]`.
pub(crate) fn cal(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let usage = |cx: &mut Cx<'_>, msg: Option<String>| {
        if let Some(m) = msg {
            cx.err(m);
        }
        cx.err(USAGE);
        64
    };
    let mut span = None;
    let mut julian = false;
    let (mut month_opt, mut today_opt) = (None, None);
    let (mut add_after, mut add_before) = (0i64, 0i64);
    let mut operands: Vec<&str> = Vec::new();
    // glibc getopt over "31A:B:Cd:jm:y" plus ncal's own letters, which its
    // `cal` mode answers with the usage alone.
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            operands.extend(args[i..].iter().map(String::as_str));
            break;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            operands.push(arg);
            continue;
        }
        let mut rest = &arg[1..];
        while let Some(c) = rest.chars().next() {
            rest = &rest[c.len_utf8()..];
            match c {
                '1' => span = Some(Span::One),
                '3' => span = Some(Span::Three),
                'y' => span = Some(Span::Year),
                'j' => julian = true,
                'C' => {}
                'b' | 'h' | 'J' | 'p' | 'w' | 'S' | 'M' | 'e' | 'o' => return usage(cx, None),
                'A' | 'B' | 'd' | 'm' | 'H' | 's' | 'W' => {
                    let value = if !rest.is_empty() {
                        std::mem::take(&mut rest)
                    } else if let Some(v) = args.get(i) {
                        i += 1;
                        v.as_str()
                    } else {
                        let m = format!("cal: option requires an argument -- '{c}'");
                        return usage(cx, Some(m));
                    };
                    match c {
                        // C's (int) of strtol's long.
                        'A' => add_after = i64::from(strtol(value).0 as i32),
                        'B' => add_before = i64::from(strtol(value).0 as i32),
                        'd' => today_opt = Some(value),
                        'm' => month_opt = Some(value),
                        _ => return usage(cx, None),
                    }
                }
                _ => return usage(cx, Some(format!("cal: invalid option -- '{c}'"))),
            }
        }
    }

    if operands.len() > 2 {
        return usage(cx, None);
    }
    let now = civil(cx.env.now);
    let mut m = 0i64;
    let given_month = operands.len() == 2;
    let given_year = !operands.is_empty();
    let mut month_text = month_opt;
    let mut y = match operands.as_slice() {
        [] => match today_opt {
            Some(d) => {
                // An int in ncal, as `-A` and `-B` are.
                m = d.get(5..).map_or(0, |s| i64::from(strtol(s).0 as i32));
                strtol(d).0
            }
            None => {
                m = i64::from(now.month);
                now.year
            }
        },
        [.., year] => {
            if let [month, _] = operands.as_slice() {
                month_text = Some(month);
                m = strtol(month).0;
            }
            let (value, rest) = strtol(year);
            if !rest.is_empty() {
                cx.err(format_args!("cal: not a valid year {year}"));
                return 64;
            }
            if !(1..=9999).contains(&value) {
                cx.err(format_args!("cal: year `{year}' not in range 1..9999"));
                return 64;
            }
            value
        }
    };
    if !given_year && !(1..=9999).contains(&y) {
        cx.err(format_args!("cal: year `{y}' not in range 1..9999"));
        return 64;
    }
    if let Some(text) = month_text {
        match parse_month(text, m, y) {
            Some((nm, ny)) => (m, y) = (nm, ny),
            None => {
                cx.err(format_args!(
                    "cal: {text} is neither a month number (1..12) nor a name"
                ));
                return 64;
            }
        }
    }
    let some_month = given_month || month_opt.is_some();
    if given_year && !some_month {
        let flag = match span {
            Some(Span::One) => Some('1'),
            Some(Span::Three) => Some('3'),
            _ => None,
        };
        if let Some(f) = flag {
            cx.err(format_args!(
                "cal: -{f} together with a given year but no given month is not supported."
            ));
            return 64;
        }
    }

    let (mut before, mut after) = (0, 0);
    if span == Some(Span::Year) || (given_year && !some_month) {
        (m, before, after) = (1, 0, 11);
    }
    if span == Some(Span::Three) {
        (before, after) = (1, 1);
    }
    before += add_before;
    after += add_after;
    if before + after < 0 {
        // An empty range shows the month the others were counted from.
        (before, after) = (0, 0);
    }
    let first = y * 12 + m - 1 - before;
    print_months(cx, first, before + after, julian);
    0
}

/// C's `strtol` in base 10: blanks, a sign and digits; the value (0 when
/// there are no digits) and what follows them (the whole text then).
fn strtol(s: &str) -> (i64, &str) {
    let t = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return (0, s);
    }
    let v = body[..digits].bytes().fold(0i64, |v, d| {
        v.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    });
    (if neg { -v } else { v }, &body[digits..])
}

/// ncal's `parsemonth`: a number 1..12, with `f` (the next such month) or
/// `p` (the previous) after it, counted from month `m` of year `y`; or a
/// month's name as C's `strptime("%B")` reads one: its full or
/// three-letter name, in any case, at the start of the text.
fn parse_month(s: &str, m: i64, y: i64) -> Option<(i64, i64)> {
    let (nm, rest) = strtol(s);
    if rest.len() != s.len() {
        let ny = match rest.as_bytes().first() {
            None => y,
            Some(b'f' | b'F') if nm <= m => y + 1,
            Some(b'p' | b'P') if nm >= m => y - 1,
            Some(b'f' | b'F' | b'p' | b'P') => y,
            Some(_) => return None,
        };
        return (1..=12).contains(&nm).then_some((nm, ny));
    }
    let lower = s.to_ascii_lowercase();
    MONTH_NAMES
        .iter()
        .position(|name| {
            let name = name.to_ascii_lowercase();
            lower.starts_with(&name) || lower.starts_with(&name[..3])
        })
        .map(|i| (i as i64 + 1, y))
}

/// Prints `1 + after` months from month number `first` (`year * 12 +
/// month - 1`), three to a row (two with day-of-year numbers).
fn print_months(cx: &mut Cx<'_>, first: i64, after: i64, julian: bool) {
    let (per_row, width) = if julian { (2, 27) } else { (3, 20) };
    let last = first + after;
    // The year heads the rows only when a row's worth is shown and the
    // first month starts a row of the year's own layout.
    let year_header = after >= per_row - 1 && first.rem_euclid(12) % per_row == 0;
    let mut shown_year = None;
    let mut month = first;
    while month <= last && !cx.stdout_gone() {
        let row: Vec<i64> = (month..=last.min(month + per_row - 1)).collect();
        let mut out = String::new();
        if month != first {
            out.push('\n');
        }
        let year = month.div_euclid(12);
        if year_header && shown_year != Some(year) {
            out.push_str(&center(&year.to_string(), per_row as usize * width));
            out.push('\n');
            shown_year = Some(year);
        }
        for &mo in &row {
            let name = MONTH_NAMES[mo.rem_euclid(12) as usize];
            let title = if year_header {
                name.to_owned()
            } else {
                format!("{name} {}", mo.div_euclid(12))
            };
            out.push_str(&format!("{:<width$}  ", center(&title, width)));
        }
        out.push('\n');
        for _ in &row {
            let pad = if julian { " " } else { "" };
            for d in ["Su", "Mo", "Tu", "We", "Th", "Fr", "Sa"] {
                out.push_str(pad);
                out.push_str(d);
                out.push(' ');
            }
            out.push(' ');
        }
        out.push('\n');
        let weeks: Vec<[String; 6]> = row.iter().map(|&mo| month_weeks(mo, julian)).collect();
        for w in 0..6 {
            for lines in &weeks {
                out.push_str(&format!("{:<width$}  ", lines[w]));
            }
            out.push('\n');
        }
        cx.outs(&out);
        month += per_row;
    }
}

/// `s` after as many blanks as center it in `width` (none after it).
fn center(s: &str, width: usize) -> String {
    format!("{}{s}", " ".repeat(width.saturating_sub(s.len()) / 2))
}

/// The six week lines of month number `mo`: days of the month (or of the
/// year) in columns from Sunday, without the blank that leads each.
fn month_weeks(mo: i64, julian: bool) -> [String; 6] {
    let (y, m) = (mo.div_euclid(12), mo.rem_euclid(12) + 1);
    let first = day_number(y, m, 1);
    let next = if m == 12 {
        day_number(y + 1, 1, 1)
    } else {
        day_number(y, m + 1, 1)
    };
    let jan1 = day_number(y, 1, 1);
    let sunday = first - (first + 1).rem_euclid(7);
    let slot = if julian { 4 } else { 3 };
    std::array::from_fn(|week| {
        let mut line = String::new();
        let start = sunday + 7 * week as i64;
        for j in (start..start + 7).take_while(|&j| j < next) {
            if j < first {
                line.push_str(&" ".repeat(slot));
            } else {
                let n = if julian { j - jan1 + 1 } else { date_of(j).2 };
                line.push_str(&format!("{n:>slot$}"));
            }
        }
        line.get(1..).unwrap_or_default().to_owned()
    })
}

/// The last day of the Julian calendar in Great Britain and her colonies
/// (2 September 1752; the next day was the 14th).
fn switch_day() -> i64 {
    julian_day(1752, 9, 2)
}

/// The Julian day number of a date: Julian calendar up to the switch,
/// Gregorian after it.
fn day_number(y: i64, m: i64, d: i64) -> i64 {
    let j = julian_day(y, m, d);
    if j > switch_day() {
        gregorian_day(y, m, d)
    } else {
        j
    }
}

/// The date of Julian day number `n`, in the calendar of its time.
fn date_of(n: i64) -> (i64, i64, i64) {
    // Richards' algorithm; the Gregorian correction only after the switch.
    let mut f = n + 1401;
    if n > switch_day() {
        f += (4 * n + 274_277).div_euclid(146_097) * 3 / 4 - 38;
    }
    let e = 4 * f + 3;
    let h = 5 * e.rem_euclid(1461).div_euclid(4) + 2;
    let d = h.rem_euclid(153).div_euclid(5) + 1;
    let m = (h.div_euclid(153) + 2).rem_euclid(12) + 1;
    let y = e.div_euclid(1461) - 4716 + (14 - m) / 12;
    (y, m, d)
}

fn julian_day(y: i64, m: i64, d: i64) -> i64 {
    let a = (14 - m) / 12;
    let (y, m) = (y + 4800 - a, m + 12 * a - 3);
    d + (153 * m + 2) / 5 + 365 * y + y.div_euclid(4) - 32083
}

fn gregorian_day(y: i64, m: i64, d: i64) -> i64 {
    let a = (14 - m) / 12;
    let (y, m) = (y + 4800 - a, m + 12 * a - 3);
    d + (153 * m + 2) / 5 + 365 * y + y.div_euclid(4) - y.div_euclid(100) + y.div_euclid(400)
        - 32045
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_numbers_cross_the_1752_switch() {
        assert_eq!(day_number(1752, 9, 2) + 1, day_number(1752, 9, 14));
        assert_eq!(date_of(day_number(1752, 9, 14)), (1752, 9, 14));
        assert_eq!(date_of(day_number(1752, 9, 2)), (1752, 9, 2));
        assert_eq!(date_of(day_number(2024, 2, 29)), (2024, 2, 29));
        assert_eq!(date_of(day_number(1, 1, 1)), (1, 1, 1));
        // 1 January 2000 was a Saturday: (n + 1) % 7 == 6.
        assert_eq!((day_number(2000, 1, 1) + 1).rem_euclid(7), 6);
    }

    #[test]
    fn months_parse_as_ncal_reads_them() {
        assert_eq!(parse_month("2", 5, 2024), Some((2, 2024)));
        assert_eq!(parse_month("2f", 2, 2024), Some((2, 2025)));
        assert_eq!(parse_month("2p", 0, 2024), Some((2, 2023)));
        assert_eq!(parse_month("janfoo", 0, 2024), Some((1, 2024)));
        assert_eq!(parse_month("SEPT", 0, 2024), Some((9, 2024)));
        assert_eq!(parse_month("ja", 0, 2024), None);
        assert_eq!(parse_month("13", 0, 2024), None);
        assert_eq!(parse_month("2x", 0, 2024), None);
    }
}
