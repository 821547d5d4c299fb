//! Human-readable durations (`60s`, `250ms`, `2m`) and sizes (`64MiB`,
//! `1GiB`, `4096`), for the config file and the command line.

use std::fmt;
use std::time::Duration;

/// A value that could not be read as a duration or a size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a valid {what} (examples: {examples})")]
pub struct UnitError {
    input: String,
    what: &'static str,
    examples: &'static str,
}

fn split_number(s: &str) -> Option<(u64, &str)> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if digits == 0 {
        return None;
    }
    let n = s[..digits].parse().ok()?;
    Some((n, s[digits..].trim()))
}

/// Reads `500ms`, `60s`, `2m` or `1h`. A bare number is refused: its unit
/// would be a guess.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let err = || UnitError {
        input: s.to_owned(),
        what: "duration",
        examples: "250ms, 60s, 2m",
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    let ms = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1_000),
        "m" | "min" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        _ => None,
    }
    .ok_or_else(err)?;
    Ok(Duration::from_millis(ms))
}

/// Reads `4096`, `4096B`, `64KiB`, `64MiB`, `1GiB` (and the decimal `KB`,
/// `MB`, `GB`).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let err = || UnitError {
        input: s.to_owned(),
        what: "size",
        examples: "4096, 64KiB, 64MiB, 1GiB",
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    let factor: u64 = match unit {
        "" | "B" => 1,
        "KiB" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return Err(err()),
    };
    n.checked_mul(factor).ok_or_else(err)
}

/// Formats a byte count the way [`parse_size`] reads it, exactly.
pub fn format_size(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

/// Formats a duration the way [`parse_duration`] reads it, exactly.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1_000) {
        format!("{}s", ms / 1_000)
    } else {
        format!("{ms}ms")
    }
}

/// Serde support: a duration as a string such as `"60s"`.
pub mod duration {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Reads a duration string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s).map_err(serde::de::Error::custom)
    }

    /// Writes a duration string.
    pub fn serialize<S: Serializer>(v: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*v))
    }
}

/// Serde support: an optional duration string (absent is `None`; use with
/// `#[serde(default)]`).
pub mod duration_opt {
    use super::*;
    use serde::{Deserialize, Deserializer};

    /// Reads a duration string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

/// Serde support: a size as an integer of bytes or a string such as
/// `"64MiB"`.
pub mod size {
    use super::*;
    use serde::{Deserializer, Serializer, de};

    struct Visitor;

    impl de::Visitor<'_> for Visitor {
        type Value = u64;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a size in bytes, or a string such as \"64MiB\"")
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom("a size cannot be negative"))
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            parse_size(v).map_err(E::custom)
        }
    }

    /// Reads a size.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(Visitor)
    }

    /// Writes a size string.
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_size(*v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_durations_with_units() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration(" 1h "), Ok(Duration::from_secs(3600)));
    }

    #[test]
    fn refuses_durations_without_a_unit_or_out_of_range() {
        for bad in [
            "",
            "60",
            "s",
            "-1s",
            "1.5s",
            "10 parsecs",
            "99999999999999999999s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn reads_sizes_binary_and_decimal() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("2KB"), Ok(2_000));
        assert!(parse_size("64mib").is_err());
        assert!(parse_size("18446744073709551615GiB").is_err());
    }

    #[test]
    fn formats_round_trip() {
        for bytes in [0, 1, 4096, 64 << 20, 1 << 30, 1500] {
            assert_eq!(parse_size(&format_size(bytes)), Ok(bytes));
        }
        for ms in [1, 250, 1_000, 60_000, 61_500] {
            let d = Duration::from_millis(ms);
            assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
    }
}
