//! Dates in UTC, formatted the way `ls -l` and `stat` print them (the
//! sandbox has no time zones: vfs-sh behaves as GNU tools under `TZ=UTC`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Half of a Gregorian year, in seconds: GNU `ls` shows the time of day for
/// files modified less than this long ago, and the year otherwise.
const SIX_MONTHS: Duration = Duration::from_secs(31_556_952 / 2);

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub(crate) minute: u32,
    pub(crate) second: u32,
    pub(crate) nanos: u32,
}

/// Seconds (and nanoseconds) since the epoch; negative before it.
fn epoch_parts(t: SystemTime) -> (i64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (
            i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            d.subsec_nanos(),
        ),
        Err(e) => {
            let d = e.duration();
            let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
            if d.subsec_nanos() == 0 {
                (-secs, 0)
            } else {
                (-secs - 1, 1_000_000_000 - d.subsec_nanos())
            }
        }
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's
/// `days_from_civil`).
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The UTC date and time of `t` (Howard Hinnant's `civil_from_days`).
pub(crate) fn civil(t: SystemTime) -> Civil {
    let (secs, nanos) = epoch_parts(t);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year,
        month: u32::try_from(month).unwrap_or(1),
        day: u32::try_from(day).unwrap_or(1),
        hour: u32::try_from(rem / 3600).unwrap_or(0),
        minute: u32::try_from(rem % 3600 / 60).unwrap_or(0),
        second: u32::try_from(rem % 60).unwrap_or(0),
        nanos,
    }
}

fn month_name(month: u32) -> &'static str {
    MONTHS
        .get(month.saturating_sub(1) as usize)
        .copied()
        .unwrap_or("???")
}

/// The date column of `ls -l`: `%b %e %H:%M` for files modified within the
/// last six months, `%b %e  %Y` otherwise; `?` when the time is unknown.
pub(crate) fn ls_date(t: Option<SystemTime>, now: SystemTime) -> String {
    let Some(t) = t else {
        return format!("{:>12}", "?");
    };
    let c = civil(t);
    let recent = now.checked_sub(SIX_MONTHS).is_none_or(|ago| ago < t) && t <= now;
    if recent {
        format!(
            "{} {:>2} {:02}:{:02}",
            month_name(c.month),
            c.day,
            c.hour,
            c.minute
        )
    } else {
        format!("{} {:>2} {:>5}", month_name(c.month), c.day, c.year)
    }
}

/// `stat`'s timestamp format: `2024-01-31 09:05:00.000000000 +0000`.
pub(crate) fn stat_date(t: Option<SystemTime>) -> String {
    let Some(t) = t else {
        return "-".to_owned();
    };
    let c = civil(t);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:09} +0000",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.nanos
    )
}

/// Whole seconds since the epoch (for `stat -c %Y`).
pub(crate) fn epoch_seconds(t: SystemTime) -> i64 {
    epoch_parts(t).0
}

const WEEKDAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];
pub(crate) const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// C's `strftime` in UTC, for `date +FORMAT` and awk's `strftime`.
/// The ISO 8601 year and week of a day (`yday` from 1, `wnum` 0 for
/// Sunday): weeks start on Monday, week 1 holds the year's first Thursday.
fn iso_week(year: i64, yday: i64, wnum: i64) -> (i64, i64) {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let weeks_in = |y: i64| {
        // The weekday of January 1 (0 = Monday).
        let jan1 = (days_from_civil(y, 1, 1) + 3).rem_euclid(7);
        if jan1 == 3 || (jan1 == 2 && leap(y)) {
            53
        } else {
            52
        }
    };
    let iso_wday = (wnum + 6) % 7 + 1;
    let week = (yday - iso_wday + 10) / 7;
    if week < 1 {
        (year - 1, weeks_in(year - 1))
    } else if week > weeks_in(year) {
        (year + 1, 1)
    } else {
        (year, week)
    }
}

pub(crate) fn strftime(fmt: &str, secs: i64, nanos: u32) -> String {
    let t = if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nanos)
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
    };
    let c = civil(t);
    let days = secs.div_euclid(86_400);
    let wd = WEEKDAYS[days.rem_euclid(7) as usize];
    // 0 = Sunday.
    let wnum = (days + 4).rem_euclid(7);
    let month = MONTH_NAMES[(c.month.saturating_sub(1) as usize).min(11)];
    let yday = days - days_from_civil(c.year, 1, 1) + 1;
    let h12 = (c.hour + 11) % 12 + 1;
    let mut out = String::new();
    let mut cs = fmt.chars().peekable();
    while let Some(ch) = cs.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        // GNU's flags (`-` no padding, `_` spaces, `0` zeros, `^` upper
        // case, `#` the other case), a width, and the ignored `E`/`O`.
        let mut flags = String::new();
        while let Some(&f) = cs.peek().filter(|f| "-_0^#".contains(**f)) {
            flags.push(f);
            cs.next();
        }
        let mut width = String::new();
        while let Some(&d) = cs.peek().filter(|d| d.is_ascii_digit()) {
            width.push(d);
            cs.next();
        }
        if matches!(cs.peek(), Some('E' | 'O')) {
            cs.next();
        }
        let Some(k) = cs.next() else {
            out.push('%');
            out.push_str(&flags);
            out.push_str(&width);
            break;
        };
        let width: Option<usize> = width.parse().ok();
        // A number with its usual width and padding, or text.
        let num = |n: i64, w: usize, pad: char| Piece::Num(n, w, pad);
        let piece = match k {
            'Y' => num(c.year, 1, '0'),
            'C' => num(c.year.div_euclid(100), 2, '0'),
            'y' => num(c.year.rem_euclid(100), 2, '0'),
            'm' => num(i64::from(c.month), 2, '0'),
            'd' => num(i64::from(c.day), 2, '0'),
            'e' => num(i64::from(c.day), 2, ' '),
            'H' => num(i64::from(c.hour), 2, '0'),
            'k' => num(i64::from(c.hour), 2, ' '),
            'I' => num(i64::from(h12), 2, '0'),
            'l' => num(i64::from(h12), 2, ' '),
            'M' => num(i64::from(c.minute), 2, '0'),
            'S' => num(i64::from(c.second), 2, '0'),
            'j' => num(yday, 3, '0'),
            'u' => num(if wnum == 0 { 7 } else { wnum }, 1, '0'),
            'w' => num(wnum, 1, '0'),
            // Weeks: from the first Sunday, from the first Monday, ISO 8601.
            'U' => num((yday - 1 + 7 - wnum) / 7, 2, '0'),
            'W' => num((yday - 1 + 7 - (wnum + 6) % 7) / 7, 2, '0'),
            'V' => num(iso_week(c.year, yday, wnum).1, 2, '0'),
            'G' => num(iso_week(c.year, yday, wnum).0, 1, '0'),
            'g' => num(iso_week(c.year, yday, wnum).0.rem_euclid(100), 2, '0'),
            's' => num(secs, 1, '0'),
            'q' => num(i64::from((c.month.max(1) - 1) / 3 + 1), 1, '0'),
            // `%3N`: the first three digits (milliseconds).
            'N' => {
                let digits = format!("{:09}", c.nanos);
                Piece::Text(digits[..width.unwrap_or(9).clamp(1, 9)].to_owned())
            }
            'p' => Piece::Text(if c.hour < 12 { "AM" } else { "PM" }.to_owned()),
            'P' => Piece::Text(if c.hour < 12 { "am" } else { "pm" }.to_owned()),
            'F' => Piece::Text(format!("{}-{:02}-{:02}", c.year, c.month, c.day)),
            'D' | 'x' => Piece::Text(format!(
                "{:02}/{:02}/{:02}",
                c.month,
                c.day,
                c.year.rem_euclid(100)
            )),
            'T' | 'X' => Piece::Text(format!("{:02}:{:02}:{:02}", c.hour, c.minute, c.second)),
            'R' => Piece::Text(format!("{:02}:{:02}", c.hour, c.minute)),
            'r' => Piece::Text(format!(
                "{h12:02}:{:02}:{:02} {}",
                c.minute,
                c.second,
                if c.hour < 12 { "AM" } else { "PM" }
            )),
            'c' => Piece::Text(format!(
                "{} {} {:2} {:02}:{:02}:{:02} {}",
                &wd[..3],
                &month[..3],
                c.day,
                c.hour,
                c.minute,
                c.second,
                c.year
            )),
            'a' => Piece::Text(wd[..3].to_owned()),
            'A' => Piece::Text(wd.to_owned()),
            'b' | 'h' => Piece::Text(month[..3].to_owned()),
            'B' => Piece::Text(month.to_owned()),
            'Z' => Piece::Text("UTC".to_owned()),
            'z' => Piece::Text("+0000".to_owned()),
            ':' => {
                // `%:z`, `%::z`, `%:::z`.
                let mut colons = 1;
                while cs.peek() == Some(&':') {
                    colons += 1;
                    cs.next();
                }
                if cs.peek() == Some(&'z') && colons <= 3 {
                    cs.next();
                    Piece::Text(["+00:00", "+00:00:00", "+00"][colons - 1].to_owned())
                } else {
                    Piece::Text(format!("%{flags}{}", ":".repeat(colons)))
                }
            }
            'n' => Piece::Text("\n".to_owned()),
            't' => Piece::Text("\t".to_owned()),
            '%' => Piece::Text("%".to_owned()),
            other => Piece::Text(format!("%{flags}{other}")),
        };
        let no_pad = flags.contains('-');
        let pad_with = if flags.contains('_') {
            Some(' ')
        } else if flags.contains('0') {
            Some('0')
        } else {
            None
        };
        let text = match piece {
            Piece::Num(n, w, pad) => {
                let digits = n.unsigned_abs().to_string();
                let sign = if n < 0 { "-" } else { "" };
                let w = if no_pad { 0 } else { width.unwrap_or(w) };
                let pad = pad_with.unwrap_or(pad);
                let fill = w.saturating_sub(digits.len() + sign.len());
                if pad == '0' {
                    format!("{sign}{}{digits}", "0".repeat(fill))
                } else {
                    format!("{}{sign}{digits}", " ".repeat(fill))
                }
            }
            Piece::Text(t) if k == 'N' => t,
            Piece::Text(t) => {
                let w = if no_pad { 0 } else { width.unwrap_or(0) };
                let fill = w.saturating_sub(t.chars().count());
                let pad = pad_with.unwrap_or(' ');
                format!("{}{t}", pad.to_string().repeat(fill))
            }
        };
        let text = if flags.contains('^') {
            text.to_uppercase()
        } else if flags.contains('#') {
            // The other case: names in capitals, `%Z` and `%p` in small.
            if matches!(k, 'Z' | 'p') {
                text.to_lowercase()
            } else if matches!(k, 'a' | 'A' | 'b' | 'B' | 'h') {
                text.to_uppercase()
            } else {
                text
            }
        } else {
            text
        };
        out.push_str(&text);
    }
    out
}

/// One conversion's value before the flags shape it.
enum Piece {
    /// A number, its usual width and the padding that fills it.
    Num(i64, usize, char),
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn civil_dates() {
        let c = civil(at(0));
        assert_eq!((c.year, c.month, c.day, c.hour), (1970, 1, 1, 0));
        // 2024-02-29 12:34:56 UTC.
        let c = civil(at(1_709_210_096));
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute, c.second),
            (2024, 2, 29, 12, 34, 56)
        );
        let c = civil(UNIX_EPOCH - Duration::from_secs(1));
        assert_eq!((c.year, c.month, c.day, c.second), (1969, 12, 31, 59));
    }

    #[test]
    fn ls_dates() {
        let now = at(1_709_210_096);
        assert_eq!(ls_date(Some(at(1_709_000_000)), now), "Feb 27 02:13");
        assert_eq!(ls_date(Some(at(1_579_084_200)), now), "Jan 15  2020");
        // In the future: the year is shown.
        assert_eq!(ls_date(Some(at(1_709_300_000)), now), "Mar  1  2024");
        assert_eq!(ls_date(None, now), "           ?");
    }

    #[test]
    fn stat_dates() {
        assert_eq!(
            stat_date(Some(at(1_579_084_200) + Duration::from_millis(5))),
            "2020-01-15 10:30:00.005000000 +0000"
        );
    }
}
