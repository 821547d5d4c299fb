//! The date strings `date -d` and `find -newermt` take, as GNU's
//! `parse_datetime` reads them, in UTC: calendar dates (`2024-01-31`,
//! `2024/01/31`, `01/31/2024`, `Jan 31 2024`, `31 Jan 2024`, `20240131`),
//! times (`10:30[:15[.5]]`, `T` between), zones (`UTC`, `Z`, `+0100`, `-8`
//! after a time), weekdays (`monday`, `next fri`, `last sunday`), and
//! relative items (`3 days ago`, `+1 month`, `- 2 hours`, `last week`,
//! `next year`, `yesterday`, `tomorrow`, a bare `hours` for one).
//!
//! GNU's grammar is a yacc parser over a C library `struct tm`; no crate
//! reproduces its rules (a signed number after a time is a zone, months
//! are added before the day is normalised, weekday ordinals), so this is a
//! small hand parser over the same pieces.

use crate::time::days_from_civil;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// One lexical piece of a date string.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// Digits, and how many were written (`0830` is four).
    Num(i64, usize),
    /// `+N` or `-N` (spaces may follow the sign).
    Signed(i64, usize),
    Word(String),
    /// `:`, `/`, `-`, `.`, `,` as written.
    Punct(char),
}

fn lex(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        let text = &s[start..*i];
        (text.parse::<i64>().ok(), text.len())
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let (n, len) = digits(&mut i);
            out.push(Tok::Num(n?, len));
        } else if c == b'+' || c == b'-' {
            // A sign binds to the number after it, across spaces; a `-`
            // right after a number is a date separator.
            let mut j = i + 1;
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            let after_num = c == b'-' && i > 0 && b[i - 1].is_ascii_digit();
            if j < b.len() && b[j].is_ascii_digit() && !after_num {
                i = j;
                let (n, len) = digits(&mut i);
                let n = n?;
                out.push(Tok::Signed(if c == b'-' { -n } else { n }, len));
            } else {
                out.push(Tok::Punct(c as char));
                i += 1;
            }
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b'.') {
                i += 1;
            }
            let w = s[start..i].trim_end_matches('.').to_ascii_lowercase();
            out.push(Tok::Word(w));
        } else if b":/.,".contains(&c) {
            out.push(Tok::Punct(c as char));
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

/// What the string says, before it is applied to the clock.
#[derive(Debug, Default)]
struct Parsed {
    date: Option<(i64, i64, i64)>,
    /// Seconds after midnight, and the fraction's nanoseconds.
    time: Option<i64>,
    /// East of UTC, in seconds.
    zone: i64,
    /// A weekday and its ordinal (`last` -1, none or `this` 0, `next` 1).
    weekday: Option<(i64, i64)>,
    years: i64,
    months: i64,
    days: i64,
    seconds: i64,
}

fn month_of(w: &str) -> Option<i64> {
    if w.len() < 3 {
        return None;
    }
    let full = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    (0..12)
        .find(|&k| w == MONTHS[k] || full[k] == w || (w == "sept" && k == 8))
        .map(|k| k as i64 + 1)
}

fn weekday_of(w: &str) -> Option<i64> {
    let full = [
        "sunday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
    ];
    let extra = [("tues", 2), ("wednes", 3), ("thur", 4), ("thurs", 4)];
    (0..7)
        .find(|&k| w == WEEKDAYS[k] || w == full[k])
        .map(|k| k as i64)
        .or_else(|| extra.iter().find(|(n, _)| *n == w).map(|&(_, d)| d))
}

/// A relative unit's size: calendar months, or days, or seconds.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Months(i64),
    Days(i64),
    Seconds(i64),
}

fn unit_of(w: &str) -> Option<Unit> {
    let w = w.strip_suffix('s').filter(|s| s.len() > 2).unwrap_or(w);
    Some(match w {
        "year" => Unit::Months(12),
        "month" => Unit::Months(1),
        "fortnight" => Unit::Days(14),
        "week" => Unit::Days(7),
        "day" => Unit::Days(1),
        "hour" => Unit::Seconds(3600),
        "minute" | "min" => Unit::Seconds(60),
        "second" | "sec" => Unit::Seconds(1),
        _ => return None,
    })
}

impl Parsed {
    fn add(&mut self, n: i64, unit: Unit) {
        match unit {
            Unit::Months(m) => {
                if m == 12 {
                    self.years += n;
                } else {
                    self.months += n * m;
                }
            }
            Unit::Days(d) => self.days += n * d,
            Unit::Seconds(s) => self.seconds += n * s,
        }
    }

    /// Undoes the last relative item, for a following `ago`.
    fn negate(&mut self, n: i64, unit: Unit) {
        self.add(-2 * n, unit);
    }
}

/// Year of a two-digit year as POSIX reads it (69-99 the 1900s).
fn full_year(y: i64, written: usize) -> i64 {
    match (written, y) {
        (1 | 2, 0..=68) => 2000 + y,
        (1 | 2, _) => 1900 + y,
        _ => y,
    }
}

fn parse(toks: &[Tok]) -> Option<Parsed> {
    let mut p = Parsed::default();
    let mut i = 0;
    let at = |k: usize| toks.get(k);
    let num = |k: usize| match toks.get(k) {
        Some(Tok::Num(n, _)) => Some(*n),
        _ => None,
    };
    let punct = |k: usize, c: char| toks.get(k) == Some(&Tok::Punct(c));
    // The last relative item, for `ago`.
    let mut last_rel: Option<(i64, Unit)> = None;
    while i < toks.len() {
        match &toks[i] {
            Tok::Num(n, len) => {
                let n = *n;
                if punct(i + 1, '-') && num(i + 2).is_some() && punct(i + 3, '-') {
                    // 2024-01-31
                    p.date = Some((n, num(i + 2)?, num(i + 4)?));
                    i += 5;
                    if let Some(Tok::Word(w)) = at(i) {
                        // `2024-01-31T10:00`: the lexer read `t10` as digits
                        // after a word `t`; handled below as a bare `t`.
                        if w == "t" {
                            i += 1;
                        }
                    }
                } else if punct(i + 1, '/') && num(i + 2).is_some() {
                    let second = num(i + 2)?;
                    let third = if punct(i + 3, '/') { num(i + 4) } else { None };
                    p.date = Some(match (third, *len) {
                        (Some(d), 4) => (n, second, d),
                        (Some(y), _) => {
                            let Some(Tok::Num(_, ylen)) = at(i + 4) else {
                                return None;
                            };
                            (full_year(y, *ylen), n, second)
                        }
                        (None, _) => (i64::MIN, n, second),
                    });
                    i += if third.is_some() { 5 } else { 3 };
                } else if punct(i + 1, ':') && num(i + 2).is_some() {
                    let (h, m) = (n, num(i + 2)?);
                    i += 3;
                    let mut s = 0;
                    if punct(i, ':') && num(i + 1).is_some() {
                        s = num(i + 1)?;
                        i += 2;
                        if (punct(i, '.') || punct(i, ',')) && num(i + 1).is_some() {
                            i += 2;
                        }
                    }
                    if let Some(Tok::Word(w)) = at(i) {
                        match w.as_str() {
                            "am" | "pm" if (1..=12).contains(&h) => {
                                let h = h % 12 + if w == "pm" { 12 } else { 0 };
                                p.time = Some(h * 3600 + m * 60 + s);
                                i += 1;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    if h > 23 || m > 59 || s > 60 {
                        return None;
                    }
                    p.time = Some(h * 3600 + m * 60 + s);
                    // A signed number right after a time is its zone
                    // (`10:00 +2`, `16:21:42 -0800`, `10:00-0800`).
                    let zone = match (at(i), at(i + 1)) {
                        (Some(Tok::Signed(z, zlen)), _) => Some((*z, *zlen, 1)),
                        (Some(Tok::Punct('-')), Some(Tok::Num(z, zlen))) => Some((-*z, *zlen, 2)),
                        _ => None,
                    };
                    if let Some((z, zlen, used)) = zone {
                        let (zh, zm) = if zlen <= 2 {
                            (z, 0)
                        } else {
                            (z / 100, z % 100)
                        };
                        if zh.abs() > 24 || zm.abs() > 59 {
                            return None;
                        }
                        p.zone = zh * 3600 + zm * 60;
                        i += used;
                    }
                } else if let Some(Tok::Word(w)) = at(i + 1) {
                    if let Some(unit) = unit_of(w) {
                        p.add(n, unit);
                        last_rel = Some((n, unit));
                        i += 2;
                    } else if let Some(m) = month_of(w) {
                        // 31 Jan [2024]
                        let y = match at(i + 2) {
                            Some(Tok::Num(y, ylen)) if !punct(i + 3, ':') => {
                                i += 1;
                                full_year(*y, *ylen)
                            }
                            _ => i64::MIN,
                        };
                        p.date = Some((y, m, n));
                        i += 2;
                    } else if matches!(w.as_str(), "am" | "pm") && (1..=12).contains(&n) {
                        p.time = Some((n % 12 + if w == "pm" { 12 } else { 0 }) * 3600);
                        i += 2;
                    } else {
                        return None;
                    }
                } else if *len == 8 && p.date.is_none() {
                    p.date = Some((n / 10_000, n / 100 % 100, n % 100));
                    i += 1;
                } else if p.date.is_some_and(|d| d.0 == i64::MIN) {
                    // The year after `Jan 31`.
                    let d = p.date.as_mut()?;
                    d.0 = full_year(n, *len);
                    i += 1;
                } else {
                    return None;
                }
            }
            Tok::Signed(n, _) => {
                let n = *n;
                match at(i + 1) {
                    Some(Tok::Word(w)) if unit_of(w).is_some() => {
                        let unit = unit_of(w)?;
                        p.add(n, unit);
                        last_rel = Some((n, unit));
                        i += 2;
                    }
                    _ => return None,
                }
            }
            Tok::Word(w) => {
                let w = w.as_str();
                i += 1;
                if let Some(m) = month_of(w) {
                    // Jan 31[,] [2024]
                    let d = num(i)?;
                    i += 1;
                    if punct(i, ',') {
                        i += 1;
                    }
                    let y = match at(i) {
                        Some(Tok::Num(y, ylen)) if !punct(i + 1, ':') => {
                            i += 1;
                            full_year(*y, *ylen)
                        }
                        _ => i64::MIN,
                    };
                    p.date = Some((y, m, d));
                } else if let Some(d) = weekday_of(w) {
                    p.weekday = Some((d, 0));
                    if punct(i, ',') {
                        i += 1;
                    }
                } else if let Some(unit) = unit_of(w) {
                    p.add(1, unit);
                    last_rel = Some((1, unit));
                } else {
                    match w {
                        "now" | "today" | "utc" | "gmt" | "z" | "ut" | "t" => {}
                        "yesterday" => p.days -= 1,
                        "tomorrow" => p.days += 1,
                        "ago" => {
                            let (n, unit) = last_rel.take()?;
                            p.negate(n, unit);
                        }
                        "last" | "this" | "next" => {
                            let ord = match w {
                                "last" => -1,
                                "this" => 0,
                                _ => 1,
                            };
                            match at(i) {
                                Some(Tok::Word(u)) if unit_of(u).is_some() => {
                                    let unit = unit_of(u)?;
                                    p.add(ord, unit);
                                    last_rel = Some((ord, unit));
                                }
                                Some(Tok::Word(d)) if weekday_of(d).is_some() => {
                                    p.weekday = Some((weekday_of(d)?, ord));
                                }
                                _ => return None,
                            }
                            i += 1;
                        }
                        _ => return None,
                    }
                }
            }
            Tok::Punct(',') => i += 1,
            Tok::Punct(_) => return None,
        }
    }
    Some(p)
}

/// Seconds since the epoch that `s` names, `now` being the clock; `None`
/// when GNU would say "invalid date".
pub(crate) fn parse_date(s: &str, now: i64) -> Option<i64> {
    let t = s.trim();
    if let Some(n) = t.strip_prefix('@') {
        return n.trim().parse::<f64>().ok().map(|v| v.floor() as i64);
    }
    let p = parse(&lex(t)?)?;
    let today = now.div_euclid(86_400);
    let clock = now.rem_euclid(86_400);
    let now_civil = crate::time::civil(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(u64::try_from(now).ok()?),
    );
    let (mut y, mut m, mut d) = match p.date {
        Some((y, m, d)) => {
            let y = if y == i64::MIN { now_civil.year } else { y };
            if !(1..=12).contains(&m) || d < 1 {
                return None;
            }
            // The date written must exist (GNU refuses `2023-02-30`); only
            // relative items move it past a month's end.
            let month = u32::try_from(m).ok()?;
            let first = days_from_civil(y, month, 1);
            let next = if month == 12 {
                days_from_civil(y + 1, 1, 1)
            } else {
                days_from_civil(y, month + 1, 1)
            };
            if d > next - first {
                return None;
            }
            (y, m, d)
        }
        None => (
            now_civil.year,
            i64::from(now_civil.month),
            i64::from(now_civil.day),
        ),
    };
    // An empty string is today's midnight, as a bare date is.
    let midnight = t.is_empty() || p.date.is_some() || p.weekday.is_some();
    let secs_of_day = p.time.unwrap_or(if midnight { 0 } else { clock });
    if let (Some((wday, ord)), None) = (p.weekday, p.date) {
        // GNU: the weekday on or after today, moved by whole weeks.
        let cur = (today + 4).rem_euclid(7);
        let mut delta = (wday - cur + 7) % 7;
        delta += 7 * (ord - i64::from(ord > 0 && cur != wday));
        d += delta;
    }
    // Years and months move the calendar date; the day then overflows
    // into the next month as `mktime` normalises it.
    let total_months = y * 12 + (m - 1) + p.years * 12 + p.months;
    y = total_months.div_euclid(12);
    m = total_months.rem_euclid(12) + 1;
    let base = days_from_civil(y, u32::try_from(m).ok()?, 1) + (d - 1) + p.days;
    Some(base * 86_400 + secs_of_day - p.zone + p.seconds)
}

#[cfg(test)]
mod tests {
    use super::parse_date;

    /// 2026-12-02 22:48:12 UTC, a Wednesday.
    const NOW: i64 = 1_796_251_692;

    fn at(s: &str) -> String {
        let t = parse_date(s, NOW).unwrap_or_else(|| panic!("{s} should parse"));
        crate::time::strftime("%F %T %a", t, 0)
    }

    /// Each answer is GNU date's (coreutils 9.x, `TZ=UTC`) at `NOW`.
    #[test]
    fn reads_what_gnu_date_reads() {
        for (s, want) in [
            ("2024/01/31", "2024-01-31 00:00:00 Wed"),
            ("01/31/2024", "2024-01-31 00:00:00 Wed"),
            ("Jan 31 2024", "2024-01-31 00:00:00 Wed"),
            ("31 Jan 2024", "2024-01-31 00:00:00 Wed"),
            ("20240131", "2024-01-31 00:00:00 Wed"),
            ("2024-01-31 +1 month", "2024-03-02 00:00:00 Sat"),
            ("2024-01-31 -1 day", "2024-01-30 00:00:00 Tue"),
            ("2024-03-31 1 month ago", "2024-03-02 00:00:00 Sat"),
            ("2024-01-31 10:00 +2 hours", "2024-01-31 09:00:00 Wed"),
            ("3 days ago", "2026-11-29 22:48:12 Sun"),
            ("last week", "2026-11-25 22:48:12 Wed"),
            ("next month", "2027-01-02 22:48:12 Sat"),
            ("monday", "2026-12-07 00:00:00 Mon"),
            ("last monday", "2026-11-30 00:00:00 Mon"),
            ("next monday", "2026-12-07 00:00:00 Mon"),
            ("10:30", "2026-12-02 10:30:00 Wed"),
            ("2024-01-31 UTC", "2024-01-31 00:00:00 Wed"),
            ("2024-01-31T10:00:00Z", "2024-01-31 10:00:00 Wed"),
            ("1 hour ago", "2026-12-02 21:48:12 Wed"),
            ("-2 weeks", "2026-11-18 22:48:12 Wed"),
            ("yesterday 10:00", "2026-12-01 10:00:00 Tue"),
            ("2024-02-29 +1 year", "2025-03-01 00:00:00 Sat"),
            ("now - 1 hour", "2026-12-02 21:48:12 Wed"),
            ("today 00:00", "2026-12-02 00:00:00 Wed"),
            ("2 days", "2026-12-04 22:48:12 Fri"),
            ("1 day ago 3 hours ago", "2026-12-01 19:48:12 Tue"),
            ("Sun, 29 Feb 2004 16:21:42 -0800", "2004-03-01 00:21:42 Mon"),
            ("2024-01-31 12:00:00 +0100", "2024-01-31 11:00:00 Wed"),
            ("fortnight ago", "2026-11-18 22:48:12 Wed"),
            ("tomorrow", "2026-12-03 22:48:12 Thu"),
            ("wednesday", "2026-12-02 00:00:00 Wed"),
            ("next wednesday", "2026-12-09 00:00:00 Wed"),
            ("", "2026-12-02 00:00:00 Wed"),
            ("this week", "2026-12-02 22:48:12 Wed"),
            ("2024-01-31 10:00-0800", "2024-01-31 18:00:00 Wed"),
            ("Jan 31", "2026-01-31 00:00:00 Sat"),
            ("31 Jan", "2026-01-31 00:00:00 Sat"),
            ("1/31", "2026-01-31 00:00:00 Sat"),
            ("3pm", "2026-12-02 15:00:00 Wed"),
            ("2024-01-31 12:00 -130 min", "2024-01-31 13:31:00 Wed"),
            ("next week monday", "2026-12-14 00:00:00 Mon"),
        ] {
            assert_eq!(at(s), want, "{s:?}");
        }
    }

    #[test]
    fn refuses_what_gnu_date_refuses() {
        for s in [
            "noon",
            "midnight",
            "2024-13-01",
            "25:00",
            "soon",
            "3 parsecs ago",
            "ago",
            "2024-01-31 12:00 - 90 minutes",
            "2023-02-29",
            "2023-04-31",
            "02/30/2024",
        ] {
            assert_eq!(parse_date(s, NOW), None, "{s:?}");
        }
    }
}
