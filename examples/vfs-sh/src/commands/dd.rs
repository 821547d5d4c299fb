//! `dd`: copies a document (or standard input) to standard output in
//! blocks, as GNU dd does: `if=`, `of=` (standard output or `/dev/null`;
//! a file would be written), `bs=`, `ibs=`, `obs=`, `skip=`, `count=`,
//! `iflag=skip_bytes,count_bytes`, `conv=ucase,lcase,swab,sync` and
//! `status=none|noxfer`, with its record counts on standard error. A
//! document is read only over the range the copy needs.

use super::awk::format_g6;
use crate::exec::Cx;

/// What the operands ask for.
struct Copy {
    input: Option<String>,
    output: Option<String>,
    ibs: u64,
    obs: u64,
    /// `bs=` given: each block read is written as one.
    same_blocks: bool,
    skip: u64,
    count: Option<u64>,
    skip_bytes: bool,
    count_bytes: bool,
    ucase: bool,
    lcase: bool,
    swab: bool,
    sync: bool,
    /// `status=`: 0 none, 1 noxfer, 2 the default.
    status_level: u8,
}

/// A number as dd reads one: digits with an optional multiplier suffix
/// (`c` 1, `w` 2, `b` 512, `kB` 1000, `K` 1024, `MB`, `M`, ... to `E`),
/// and products written `AxB`.
fn number(s: &str) -> Option<u64> {
    s.split('x').try_fold(1u64, |acc, part| {
        let digits = part.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let n: u64 = part[..digits].parse().ok()?;
        let unit: u64 = match &part[digits..] {
            "" | "c" => 1,
            "w" => 2,
            "b" => 512,
            suffix => {
                let mut chars = suffix.chars();
                let power = match chars.next()? {
                    'k' | 'K' => 1,
                    'M' => 2,
                    'G' => 3,
                    'T' => 4,
                    'P' => 5,
                    'E' => 6,
                    _ => return None,
                };
                let base: u64 = match chars.as_str() {
                    "" | "iB" => 1024,
                    "B" => 1000,
                    _ => return None,
                };
                base.checked_pow(power)?
            }
        };
        acc.checked_mul(n)?.checked_mul(unit)
    })
}

/// `dd: ...` and the line GNU adds after a usage error.
fn usage(cx: &mut Cx<'_>, msg: std::fmt::Arguments<'_>) -> u8 {
    cx.err(msg);
    cx.err("Try 'dd --help' for more information.");
    1
}

fn parse(cx: &mut Cx<'_>, args: &[String]) -> Result<Copy, u8> {
    let mut c = Copy {
        input: None,
        output: None,
        ibs: 512,
        obs: 512,
        same_blocks: false,
        skip: 0,
        count: None,
        skip_bytes: false,
        count_bytes: false,
        ucase: false,
        lcase: false,
        swab: false,
        sync: false,
        status_level: 2,
    };
    for a in args {
        let Some((key, value)) = a.split_once('=') else {
            return Err(usage(cx, format_args!("dd: unrecognized operand '{a}'")));
        };
        let size = |cx: &mut Cx<'_>, positive: bool| match number(value) {
            Some(n) if n > 0 || !positive => Ok(n),
            _ => {
                cx.err(format_args!("dd: invalid number: '{value}'"));
                Err(1)
            }
        };
        match key {
            "if" => c.input = Some(value.to_owned()),
            "of" => c.output = Some(value.to_owned()),
            "bs" => {
                let n = size(cx, true)?;
                (c.ibs, c.obs, c.same_blocks) = (n, n, true);
            }
            "ibs" => c.ibs = size(cx, true)?,
            "obs" => c.obs = size(cx, true)?,
            "cbs" => {
                size(cx, true)?;
            }
            "skip" | "iseek" => c.skip = size(cx, false)?,
            "seek" | "oseek" => {
                size(cx, false)?;
            }
            "count" => c.count = Some(size(cx, false)?),
            "iflag" | "oflag" | "conv" => {
                for word in value.split(',') {
                    match (key, word) {
                        ("iflag", "skip_bytes") => c.skip_bytes = true,
                        ("iflag", "count_bytes") => c.count_bytes = true,
                        ("oflag", "seek_bytes") => {}
                        (
                            "iflag" | "oflag",
                            "fullblock" | "direct" | "dsync" | "sync" | "nonblock" | "noatime"
                            | "nocache" | "noctty" | "nofollow" | "binary" | "text" | "append"
                            | "directory",
                        ) => {}
                        ("conv", "ucase") => c.ucase = true,
                        ("conv", "lcase") => c.lcase = true,
                        ("conv", "swab") => c.swab = true,
                        ("conv", "sync") => c.sync = true,
                        (
                            "conv",
                            "noerror" | "notrunc" | "excl" | "nocreat" | "fdatasync" | "fsync"
                            | "sparse" | "block" | "unblock" | "ascii" | "ebcdic" | "ibm",
                        ) => {}
                        _ => {
                            let what = match key {
                                "iflag" => "input flag",
                                "oflag" => "output flag",
                                _ => "conversion",
                            };
                            return Err(usage(cx, format_args!("dd: invalid {what}: '{word}'")));
                        }
                    }
                }
            }
            "status" => {
                c.status_level = match value {
                    "none" => 0,
                    "noxfer" => 1,
                    "progress" => 2,
                    _ => {
                        return Err(usage(
                            cx,
                            format_args!("dd: invalid status level: '{value}'"),
                        ));
                    }
                };
            }
            _ => return Err(usage(cx, format_args!("dd: unrecognized operand '{a}'"))),
        }
    }
    if c.ucase && c.lcase {
        cx.err("dd: cannot combine lcase and ucase");
        return Err(1);
    }
    Ok(c)
}

/// The units of sizes in powers of 1000 and of 1024.
const SI: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
const IEC: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// A size as dd's summary shows it: `1.5 kB` (powers of 1000) or
/// `1.5 KiB` (of 1024), rounded to the nearest, one decimal below 10.
fn human(n: f64, base: f64, units: &[&str]) -> String {
    let mut v = n;
    let mut k = 0;
    while v >= base && k + 1 < units.len() {
        v /= base;
        k += 1;
    }
    let text = if v < 10.0 && (v * 10.0).round() < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    };
    format!("{text} {}", units[k])
}

/// The lines GNU dd writes to standard error when it ends.
fn summary(cx: &mut Cx<'_>, level: u8, records: [(u64, u64); 2], bytes: u64, secs: f64) {
    if level == 0 {
        return;
    }
    let [(fi, pi), (fo, po)] = records;
    cx.err(format_args!("{fi}+{pi} records in\n{fo}+{po} records out"));
    if level == 1 {
        return;
    }
    let amount = match bytes {
        1 => "1 byte".to_owned(),
        b if b < 1000 => format!("{b} bytes"),
        b if b < 1024 => format!("{b} bytes ({})", human(b as f64, 1000.0, &SI)),
        b => format!(
            "{b} bytes ({}, {})",
            human(b as f64, 1000.0, &SI),
            human(b as f64, 1024.0, &IEC)
        ),
    };
    let secs = secs.max(1e-6);
    let rate = bytes as f64 / secs;
    let rate = if rate < 1000.0 {
        format!("{:.1} kB", rate / 1000.0)
    } else {
        human(rate, 1000.0, &SI)
    };
    cx.err(format_args!(
        "{amount} copied, {} s, {rate}/s",
        format_g6(secs)
    ));
}

/// `dd [OPERAND]...`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let started = std::time::Instant::now();
    let c = match parse(cx, args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let name = c.input.clone().unwrap_or_else(|| "-".to_owned());
    let shown = super::quote::quote(
        if name == "-" || name == "/dev/stdin" {
            "standard input"
        } else {
            &name
        },
        false,
    );
    let none = [(0, 0); 2];
    // The input is opened before the output, as GNU does.
    let meta = if name == "-" || name == "/dev/stdin" {
        None
    } else {
        match cx.fs.metadata(&name) {
            Ok(m) => Some(m),
            Err(e) => {
                cx.err(format_args!(
                    "dd: failed to open '{name}': {}",
                    e.strerror()
                ));
                return 1;
            }
        }
    };
    let discard = match c.output.as_deref() {
        None | Some("/dev/stdout" | "-") => false,
        Some("/dev/null") => true,
        Some(out) => {
            let parent = match out.rfind('/') {
                Some(0) => "/",
                Some(k) => &out[..k],
                None => ".",
            };
            let why = match cx.fs.metadata(parent) {
                Ok(m) if m.is_dir() => "Read-only file system",
                Ok(_) => "Not a directory",
                Err(e) => e.strerror(),
            };
            cx.err(format_args!("dd: failed to open '{out}': {why}"));
            return 1;
        }
    };
    if meta.as_ref().is_some_and(|m| m.is_dir()) {
        cx.err(format_args!("dd: error reading '{name}': Is a directory"));
        summary(cx, c.status_level, none, 0, started.elapsed().as_secs_f64());
        return 1;
    }
    let start = if c.skip_bytes {
        c.skip
    } else {
        c.skip.saturating_mul(c.ibs)
    };
    let wanted = c.count.map(|n| {
        if c.count_bytes {
            n
        } else {
            n.saturating_mul(c.ibs)
        }
    });
    // Only the range the copy needs is read from a document.
    let data = match &meta {
        Some(m) => {
            if start > m.len {
                cx.err(format_args!("dd: {shown}: cannot skip to specified offset"));
                summary(cx, c.status_level, none, 0, started.elapsed().as_secs_f64());
                return 0;
            }
            let len = wanted.unwrap_or(u64::MAX).min(m.len - start);
            match cx.fs.read_range(&name, start, len) {
                Ok(d) => d,
                Err(e) => {
                    cx.err(format_args!("dd: error reading '{name}': {}", e.strerror()));
                    return 1;
                }
            }
        }
        None => {
            let all = cx.stdin();
            let from = usize::try_from(start).unwrap_or(usize::MAX).min(all.len());
            if start > all.len() as u64 {
                cx.err(format_args!("dd: {shown}: cannot skip to specified offset"));
            }
            let end = wanted.map_or(all.len(), |w| {
                from.saturating_add(usize::try_from(w).unwrap_or(usize::MAX))
                    .min(all.len())
            });
            all[from..end].to_vec()
        }
    };
    // `conv=sync` fills every block to its size: a block larger than the
    // sandbox could hold is refused, as GNU refuses a buffer it cannot
    // allocate.
    const MAX_SYNC_BLOCK: u64 = 64 << 20;
    if c.sync && c.ibs > MAX_SYNC_BLOCK {
        cx.err(format_args!(
            "dd: memory exhausted by input buffer of size {} bytes ({})",
            c.ibs,
            human(c.ibs as f64, 1024.0, &IEC)
        ));
        return 1;
    }
    let ibs = usize::try_from(c.ibs).unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(data.len());
    let (mut full_in, mut part_in) = (0u64, 0u64);
    for block in data.chunks(ibs.max(1)) {
        if block.len() == ibs {
            full_in += 1;
        } else {
            part_in += 1;
        }
        let at = out.len();
        out.extend_from_slice(block);
        if c.sync && block.len() < ibs {
            out.resize(at + ibs, 0);
        }
        let written = &mut out[at..];
        if c.ucase {
            written.make_ascii_uppercase();
        } else if c.lcase {
            written.make_ascii_lowercase();
        }
    }
    // `swab` pairs bytes across blocks, as one stream.
    if c.swab {
        for pair in out.chunks_exact_mut(2) {
            pair.swap(0, 1);
        }
    }
    let bytes = out.len() as u64;
    let records_out = if c.same_blocks {
        (full_in, part_in)
    } else {
        (bytes / c.obs, u64::from(!bytes.is_multiple_of(c.obs)))
    };
    if !discard {
        cx.out(&out);
    }
    summary(
        cx,
        c.status_level,
        [(full_in, part_in), records_out],
        bytes,
        started.elapsed().as_secs_f64(),
    );
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_take_gnu_suffixes_and_products() {
        for (text, want) in [
            ("512", Some(512)),
            ("2c", Some(2)),
            ("3w", Some(6)),
            ("1b", Some(512)),
            ("1k", Some(1024)),
            ("1K", Some(1024)),
            ("1kB", Some(1000)),
            ("1KiB", Some(1024)),
            ("2M", Some(2 << 20)),
            ("1MB", Some(1_000_000)),
            ("2x3", Some(6)),
            ("2x1k", Some(2048)),
            ("x", None),
            ("1Q", None),
            ("", None),
            ("99999999999999999999", None),
        ] {
            assert_eq!(number(text), want, "{text}");
        }
    }

    #[test]
    fn sizes_read_as_dd_prints_them() {
        let (si, iec) = (SI, IEC);
        assert_eq!(human(1500.0, 1000.0, &si), "1.5 kB");
        assert_eq!(human(10000.0, 1024.0, &iec), "9.8 KiB");
        assert_eq!(human(123_456.0, 1024.0, &iec), "121 KiB");
        assert_eq!(human(1_048_576.0, 1000.0, &si), "1.0 MB");
    }
}
