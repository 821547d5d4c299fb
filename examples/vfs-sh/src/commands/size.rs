//! How `ls` and `du` print a size: GNU's `-h`, `--si`, `-k`, `-m` and
//! `--block-size`/`-B` (gnulib's `human_options` and `human_readable`).

/// Units past kilo, as GNU names them.
const LETTERS: [char; 10] = ['K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y', 'R', 'Q'];

/// The suffix a block size written with a leading letter puts after each
/// number (`--block-size=K` prints `5K`, `KB` prints `5kB`, `KiB` prints
/// `5KiB`); one written with digits (`1K`, `512`) prints bare numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Suffix {
    None,
    /// `K`: the letter alone, powers of 1024.
    Letter(usize),
    /// `KB`: powers of 1000, kilo written `k`.
    Decimal(usize),
    /// `KiB`: powers of 1024, spelled out.
    Binary(usize),
}

/// A size's rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    /// `-h` (powers of 1024) or `--si` (powers of 1000): three significant
    /// places at most, rounded up.
    Human { si: bool },
    /// Whole blocks of `size` bytes, rounded up.
    Blocks { size: u64, suffix: Suffix },
}

impl Scale {
    /// Plain bytes: `ls -l`'s size column, `du -b`.
    pub(crate) const BYTES: Scale = Scale::Blocks {
        size: 1,
        suffix: Suffix::None,
    };
    /// 1 KiB blocks: `ls -s`'s and `du`'s default.
    pub(crate) const KIB: Scale = Scale::Blocks {
        size: 1024,
        suffix: Suffix::None,
    };

    /// `SIZE` as `--block-size` takes it: an optional count and an optional
    /// unit (`K`, `KB`, `KiB`, ... up to `Q`); `None` if it is not one, or
    /// is zero.
    pub(crate) fn parse(spec: &str) -> Option<Scale> {
        if spec.is_empty() {
            return None;
        }
        let digits = spec.bytes().take_while(u8::is_ascii_digit).count();
        let count = if digits == 0 {
            1
        } else {
            spec[..digits].parse::<u64>().ok()?
        };
        let unit = &spec[digits..];
        let (power, base, kind) = if unit.is_empty() {
            (0, 1024, 0)
        } else {
            let mut cs = unit.chars();
            let letter = cs.next()?.to_ascii_uppercase();
            let i = LETTERS.iter().position(|&l| l == letter)?;
            match cs.as_str() {
                "" => (i + 1, 1024u64, 1),
                "B" => (i + 1, 1000, 2),
                "iB" => (i + 1, 1024, 3),
                _ => return None,
            }
        };
        let mut size = count;
        for _ in 0..power {
            size = size.checked_mul(base)?;
        }
        if size == 0 {
            return None;
        }
        let suffix = match (digits, kind) {
            (0, 1) => Suffix::Letter(power - 1),
            (0, 2) => Suffix::Decimal(power - 1),
            (0, 3) => Suffix::Binary(power - 1),
            _ => Suffix::None,
        };
        Some(Scale::Blocks { size, suffix })
    }

    /// `n` bytes in this scale.
    pub(crate) fn render(self, n: u64) -> String {
        match self {
            Scale::Human { si } => human_base(n, if si { 1000 } else { 1024 }),
            Scale::Blocks { size, suffix } => {
                let v = n.div_ceil(size);
                match suffix {
                    Suffix::None => v.to_string(),
                    Suffix::Letter(i) => format!("{v}{}", LETTERS[i]),
                    Suffix::Decimal(0) => format!("{v}kB"),
                    Suffix::Decimal(i) => format!("{v}{}B", LETTERS[i]),
                    Suffix::Binary(i) => format!("{v}{}iB", LETTERS[i]),
                }
            }
        }
    }
}

/// GNU's `-h` (base 1024: `K M G`) and `--si` (base 1000: `k M G`): one
/// decimal below 10, rounded up.
fn human_base(n: u64, base: u64) -> String {
    if n < base {
        return n.to_string();
    }
    let unit = |u: usize| {
        if u == 0 && base == 1000 {
            'k'
        } else {
            LETTERS[u]
        }
    };
    let b = base as f64;
    let mut v = n as f64 / b;
    let mut u = 0;
    while v >= b && u + 1 < LETTERS.len() {
        v /= b;
        u += 1;
    }
    if v < 10.0 {
        let r = (v * 10.0).ceil() / 10.0;
        if r < 10.0 {
            return format!("{r:.1}{}", unit(u));
        }
        v = r;
    }
    let r = v.ceil();
    if r >= b && u + 1 < LETTERS.len() {
        return format!("1.0{}", unit(u + 1));
    }
    format!("{}{}", r as u64, unit(u))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers of GNU ls 9.x and du for a 5000-byte document.
    #[test]
    fn block_sizes_as_gnu_prints_them() {
        for (spec, want) in [
            ("K", "5K"),
            ("KB", "5kB"),
            ("KiB", "5KiB"),
            ("1K", "5"),
            ("2K", "3"),
            ("2KiB", "3"),
            ("512", "10"),
            ("M", "1M"),
            ("MB", "1MB"),
            ("G", "1G"),
            ("1", "5000"),
            ("10K", "1"),
            ("k", "5K"),
        ] {
            let s = Scale::parse(spec).unwrap_or_else(|| panic!("{spec} parses"));
            assert_eq!(s.render(5000), want, "{spec}");
        }
        for bad in ["x", "0", "", "KQ", "Kb", "99999999999999999999"] {
            assert_eq!(Scale::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn human_sizes() {
        for (n, want) in [
            (0, "0"),
            (1023, "1023"),
            (1024, "1.0K"),
            (1025, "1.1K"),
            (1536, "1.5K"),
            (10 * 1024, "10K"),
            (10 * 1024 + 1, "11K"),
            (1_363_456, "1.4M"),
            (1024 * 1024 - 1, "1.0M"),
            (5 << 30, "5.0G"),
        ] {
            assert_eq!(Scale::Human { si: false }.render(n), want, "{n}");
        }
        assert_eq!(Scale::Human { si: true }.render(5000), "5.0k");
        assert_eq!(Scale::Human { si: true }.render(16384), "17k");
        assert_eq!(Scale::Human { si: true }.render(999), "999");
    }
}
