//! `du`: disk usage as a Linux filesystem with 4 KiB blocks shows it — a
//! document takes its size rounded up to whole blocks, a directory one
//! block of its own (4096 bytes apparent) — since the document store has
//! no blocks of its own to report.

use std::collections::HashSet;
use std::time::SystemTime;

use super::size::Scale;
use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::Kind;
use crate::glob::Pattern;

const BLOCK: u64 = 4096;
const DIR_SIZE: u64 = 4096;

/// Sizes in bytes: allocated (block-rounded) and apparent; and the
/// latest modification among what was counted (`--time`).
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    disk: u64,
    apparent: u64,
    /// `--inodes`: the entries counted.
    inodes: u64,
    latest: Option<SystemTime>,
}

impl Size {
    fn of(kind: Kind, len: u64, modified: Option<SystemTime>) -> Size {
        let (disk, apparent) = match kind {
            Kind::Dir => (DIR_SIZE, DIR_SIZE),
            Kind::File => (len.div_ceil(BLOCK) * BLOCK, len),
        };
        Size {
            disk,
            apparent,
            inodes: 1,
            latest: modified,
        }
    }

    fn add(&mut self, o: Size) {
        self.disk += o.disk;
        self.apparent += o.apparent;
        self.inodes += o.inodes;
        self.latest = self.latest.max(o.latest);
    }
}

struct Opts {
    all: bool,
    summarize: bool,
    apparent: bool,
    /// `-b`: apparent sizes in bytes.
    bytes: bool,
    /// `--inodes`: entries are counted instead of bytes.
    inodes: bool,
    scale: Scale,
    max_depth: Option<usize>,
    /// `-t SIZE`: leave out entries smaller than SIZE bytes (larger, when
    /// negative).
    threshold: Option<i64>,
    exclude: Vec<Pattern>,
    /// `-S`: subdirectories are not counted in their parents.
    separate_dirs: bool,
    nul: bool,
    /// `--time`: the `strftime` format of the latest time shown before
    /// each path, and which time.
    time: Option<(String, Time)>,
}

/// Which time `--time` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Time {
    Modified,
    Accessed,
    Changed,
}

/// The time `--time` shows of `path`: its modification `modified`, or the
/// access or change its metadata gives.
fn time_of(
    cx: &mut Cx<'_>,
    o: &Opts,
    path: &str,
    modified: Option<SystemTime>,
) -> Option<SystemTime> {
    match o.time {
        Some((_, Time::Accessed)) => cx.fs.attributes(path).ok().and_then(|a| a.accessed),
        Some((_, Time::Changed)) => cx.fs.attributes(path).ok().and_then(|a| a.changed),
        _ => modified,
    }
}

impl Opts {
    /// What is shown and compared with `-t`: entries, apparent bytes or
    /// bytes on disk.
    fn amount(&self, s: Size) -> u64 {
        if self.inodes {
            s.inodes
        } else if self.apparent || self.bytes {
            s.apparent
        } else {
            s.disk
        }
    }

    fn render(&self, s: Size) -> String {
        match self.scale {
            // A count of entries has no block size; only -h scales it.
            _ if !self.inodes => self.scale.render(self.amount(s)),
            Scale::Human { .. } => self.scale.render(s.inodes),
            Scale::Blocks { .. } => s.inodes.to_string(),
        }
    }
}

/// What one `du` run has counted: the absolute paths walked, so that a
/// directory or file named twice (`du . ./dir1`, `du -s a a`) counts once,
/// as GNU's du remembers the inodes it has seen.
struct Walk<'o> {
    o: &'o Opts,
    seen: HashSet<String>,
    out: String,
    status: u8,
}

/// Walks `path` (`abs` is where it is); prints the lines depth allows;
/// returns its total, and what its own line shows (with `-S`, less its
/// subdirectories).
fn walk(
    cx: &mut Cx<'_>,
    w: &mut Walk<'_>,
    path: &str,
    abs: &str,
    e: (Kind, u64, Option<SystemTime>),
    depth: usize,
) -> (Size, Size) {
    let (kind, len, modified) = e;
    let o = w.o;
    let mut total = Size::of(kind, len, modified);
    // `-S`: a directory's line counts what is in it, not what is in its
    // subdirectories; the total goes on counting everything.
    let mut own = total;
    let show = |depth: usize| !o.summarize && o.max_depth.is_none_or(|m| depth <= m);
    if kind == Kind::Dir {
        match cx.fs.read_dir(path) {
            Ok(entries) => {
                for e in entries {
                    if o.exclude.iter().any(|p| p.matches(&e.name, false)) {
                        continue;
                    }
                    let child_abs = super::join(abs, &e.name);
                    if !w.seen.insert(child_abs.clone()) {
                        continue;
                    }
                    let child = super::join(path, &e.name);
                    let when = time_of(cx, o, &child, e.modified);
                    if e.is_dir() {
                        let s = walk(
                            cx,
                            w,
                            &child,
                            &child_abs,
                            (Kind::Dir, e.len, when),
                            depth + 1,
                        );
                        total.add(s.0);
                    } else {
                        let s = Size::of(Kind::File, e.len, when);
                        total.add(s);
                        own.add(s);
                        if o.all && show(depth + 1) {
                            line(&mut w.out, o, s, &child);
                        }
                    }
                }
            }
            Err(e) => {
                cx.outs(&std::mem::take(&mut w.out));
                cx.err(format_args!(
                    "du: cannot read directory '{path}': {}",
                    e.strerror()
                ));
                w.status = 1;
            }
        }
        if !o.separate_dirs {
            own = total;
        }
        if show(depth) {
            line(&mut w.out, o, own, path);
        }
    } else if show(depth) && (o.all || depth == 0) {
        line(&mut w.out, o, total, path);
    }
    (total, own)
}

/// `--threshold`'s SIZE: bytes, or with a K, M, G or T suffix (powers of
/// 1024; `KB`, `MB`... powers of 1000); a leading `-` makes it an upper
/// bound.
fn threshold_bytes(v: &str) -> Option<i64> {
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v),
    };
    let digits = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let n: i64 = body[..digits].parse().ok()?;
    let mult: i64 = match &body[digits..] {
        "" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        "KB" | "kB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return None,
    };
    let t = n.checked_mul(mult)?;
    Some(if neg { -t } else { t })
}

fn line(out: &mut String, o: &Opts, s: Size, path: &str) {
    let n = i64::try_from(o.amount(s)).unwrap_or(i64::MAX);
    match o.threshold {
        Some(t) if t >= 0 && n < t => return,
        Some(t) if t < 0 && n > -t => return,
        _ => {}
    }
    out.push_str(&o.render(s));
    out.push('\t');
    if let Some((format, _)) = &o.time {
        let (secs, nanos) = s.latest.map_or((0, 0), |t| {
            (crate::time::epoch_seconds(t), crate::time::civil(t).nanos)
        });
        out.push_str(&crate::time::strftime(format, secs, nanos));
        out.push('\t');
    }
    out.push_str(path);
    out.push(if o.nul { '\0' } else { '\n' });
}

/// `du [-a] [-s] [-h] [-b] [-k] [-m] [-c] [-d N] [-t SIZE] [--apparent-size] [--exclude=PAT] [PATH]...`
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('a', "all", "a"),
        flag('s', "summarize", "s"),
        flag('h', "human-readable", "h"),
        flag('b', "bytes", "b"),
        flag('k', "", "k"),
        flag('m', "", "m"),
        flag('c', "total", "c"),
        flag('x', "one-file-system", "x"),
        flag('L', "dereference", "L"),
        // Documents have no hard links: counting each link changes nothing.
        flag('l', "count-links", "l"),
        flag('S', "separate-dirs", "S"),
        flag('0', "null", "0"),
        value('d', "max-depth", "d"),
        value('B', "block-size", "B"),
        flag('\0', "apparent-size", "apparent"),
        flag('\0', "inodes", "inodes"),
        flag('\0', "si", "si"),
        value('\0', "exclude", "exclude"),
        value('t', "threshold", "t"),
        value('\0', "files0-from", "files0"),
        super::optional("time", "time"),
        value('\0', "time-style", "time-style"),
    ];
    let p = match options(cx, "du", args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let max_depth = match p.value("d") {
        Some(v) => match v.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => {
                cx.err(format_args!("du: invalid maximum depth '{v}'"));
                return 1;
            }
        },
        None => None,
    };
    // The last of -b, -k, -m, -h, --si and -B decides how sizes print.
    let scale = match p.last_of(&["b", "k", "m", "h", "si", "B"]) {
        Some("b") => Scale::BYTES,
        Some("m") => Scale::parse("1M").unwrap_or(Scale::KIB),
        Some("h") => Scale::Human { si: false },
        Some("si") => Scale::Human { si: true },
        Some("B") => {
            let spec = p.value("B").unwrap_or_default();
            match Scale::parse(spec) {
                Some(s) => s,
                None => {
                    cx.err(format_args!(
                        "du: invalid -B argument {}",
                        super::quote::quote(spec, true)
                    ));
                    return 1;
                }
            }
        }
        _ => Scale::KIB,
    };
    let threshold = match p.value("t") {
        None => None,
        Some(v) => match threshold_bytes(v) {
            Some(t) => Some(t),
            None => {
                cx.err(format_args!("du: invalid --threshold argument '{v}'"));
                return 1;
            }
        },
    };
    let which = match p.value("time").filter(|w| !w.is_empty()) {
        None => Time::Modified,
        Some(word) => {
            let words: &[(&[&str], &str)] = &[
                (&["atime", "access", "use"], "a"),
                (&["ctime", "status"], "c"),
            ];
            match super::argmatch(cx, "du", "--time", word, words) {
                Some("a") => Time::Accessed,
                Some(_) => Time::Changed,
                None => return 1,
            }
        }
    };
    let time = match (p.has("time"), p.value("time-style").unwrap_or("long-iso")) {
        (false, _) => None,
        (true, style) if style.starts_with('+') => Some((style[1..].to_owned(), which)),
        (true, style) => {
            let styles: &[(&[&str], &str)] = &[
                (&["full-iso"], "%Y-%m-%d %H:%M:%S.%N %z"),
                (&["long-iso"], "%Y-%m-%d %H:%M"),
                (&["iso"], "%Y-%m-%d"),
            ];
            match super::argmatch(cx, "du", "time style", style, styles) {
                Some(format) => Some((format.to_owned(), which)),
                None => return 1,
            }
        }
    };
    let o = Opts {
        threshold,
        separate_dirs: p.has("S"),
        all: p.has("a"),
        summarize: p.has("s"),
        apparent: p.has("apparent"),
        bytes: p.has("b"),
        inodes: p.has("inodes"),
        scale,
        max_depth,
        exclude: p
            .values("exclude")
            .iter()
            .map(|e| Pattern::new(e))
            .collect(),
        nul: p.has("0"),
        time,
    };
    if o.inodes && (o.apparent || o.bytes) {
        cx.err("du: warning: options --apparent-size and -b are ineffective with --inodes");
    }
    if o.summarize && o.all {
        cx.err("du: cannot both summarize and show all entries");
        cx.err("Try 'du --help' for more information.");
        return 1;
    }
    match o.max_depth {
        Some(0) if o.summarize => {
            cx.err("du: warning: summarizing is the same as using --max-depth=0");
        }
        Some(d) if o.summarize => {
            cx.err(format_args!(
                "du: warning: summarizing conflicts with --max-depth={d}"
            ));
            cx.err("Try 'du --help' for more information.");
            return 1;
        }
        _ => {}
    }
    let ops = if let Some(from) = p.value("files0") {
        match super::files0_from(cx, "du", from, &p.operands) {
            Ok((names, _)) => names,
            Err(code) => return code,
        }
    } else if p.operands.is_empty() {
        vec![".".to_owned()]
    } else {
        p.operands.clone()
    };
    let mut grand = Size::default();
    let mut w = Walk {
        o: &o,
        seen: HashSet::new(),
        out: String::new(),
        status: 0,
    };
    for op in &ops {
        match cx.fs.metadata(op) {
            Ok(m) => {
                if !w.seen.insert(m.path.clone()) {
                    continue;
                }
                let when = time_of(cx, &o, op, m.modified);
                let (s, shown) = walk(cx, &mut w, op, &m.path, (m.kind, m.len, when), 0);
                if o.summarize {
                    line(&mut w.out, &o, shown, op);
                }
                grand.add(s);
            }
            Err(e) => {
                cx.outs(&std::mem::take(&mut w.out));
                cx.err(format_args!("du: cannot access '{op}': {}", e.strerror()));
                w.status = 1;
            }
        }
        cx.outs(&std::mem::take(&mut w.out));
    }
    if p.has("c") {
        line(&mut w.out, &o, grand, "total");
    }
    cx.outs(&w.out);
    w.status
}
