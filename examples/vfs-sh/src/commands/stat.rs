//! `stat [-c FORMAT] FILE...`: GNU's default multi-line format, with what
//! the document filesystem knows (name, size, type, modification time).
//!
//! The permissions, inode, device and times of access, change and birth
//! are the path's own where the backend keeps them (a local mount); where
//! it keeps none, 0644 and 0755, inode and device 0, the modification time
//! for access and change, and no birth time (`-`). What it cannot know is
//! fixed: blocks (of 512 bytes) count whole 4 KiB units, and owner and
//! group are `root` (id 0).

use super::{options, value};
use crate::exec::Cx;
use crate::fs::{Attrs, Meta};
use crate::time::{epoch_seconds, stat_date};

fn blocks(m: &Meta) -> u64 {
    m.len.div_ceil(4096) * 8
}

fn kind(m: &Meta) -> &'static str {
    if m.is_dir() {
        "directory"
    } else if m.len == 0 {
        "regular empty file"
    } else {
        "regular file"
    }
}

/// The permission bits in octal (`0644`) and as `ls -l` shows them.
fn mode(m: &Meta, bits: u32) -> (String, String) {
    (format!("{bits:04o}"), crate::fs::mode_string(m.kind, bits))
}

/// A device number as GNU stat shows it: major and minor, in decimal.
fn device(dev: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major},{minor}")
}

fn default_format(name: &str, m: &Meta, a: &Attrs, links: u64) -> String {
    let (octal, symbolic) = mode(m, a.mode);
    format!(
        "  File: {name}\n  Size: {:<10}\tBlocks: {:<10} IO Block: 4096   {}\nDevice: {}\tInode: {:<10}  Links: {links}\nAccess: ({octal}/{symbolic})  Uid: (    0/{owner:>8})   Gid: (    0/{owner:>8})\nAccess: {}\nModify: {}\nChange: {}\n Birth: {}\n",
        m.len,
        blocks(m),
        kind(m),
        device(a.device),
        a.inode,
        stat_date(a.accessed),
        stat_date(m.modified),
        stat_date(a.changed),
        a.created
            .map_or_else(|| "-".to_owned(), |t| stat_date(Some(t))),
        owner = super::OWNER,
    )
}

fn custom(format: &str, name: &str, m: &Meta, a: &Attrs, links: u64) -> String {
    let mut out = String::new();
    let mut chars = format.chars();
    let secs = |t: Option<std::time::SystemTime>| t.map_or(0, epoch_seconds).to_string();
    let bits = a.mode;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // printf-style flags and a width, as GNU stat takes them
        // (`%-20n`, `%10s`, `%08s`).
        let (mut left, mut zero, mut width) = (false, false, 0usize);
        let mut d = chars.next();
        while let Some(flag @ ('-' | '0')) = d {
            if flag == '-' {
                left = true;
            } else {
                zero = true;
            }
            d = chars.next();
        }
        while let Some(digit) = d.and_then(|c| c.to_digit(10)) {
            width = width
                .saturating_mul(10)
                .saturating_add(digit as usize)
                .min(4096);
            d = chars.next();
        }
        let Some(d) = d else {
            out.push('%');
            break;
        };
        let piece = match d {
            '%' => "%".to_owned(),
            'n' => name.to_owned(),
            'N' => format!("'{name}'"),
            's' => m.len.to_string(),
            'F' => kind(m).to_owned(),
            'y' => stat_date(m.modified),
            'x' => stat_date(a.accessed),
            'z' => stat_date(a.changed),
            'Y' => secs(m.modified),
            'X' => secs(a.accessed),
            'Z' => secs(a.changed),
            'i' => a.inode.to_string(),
            'w' => a
                .created
                .map_or_else(|| "-".to_owned(), |t| stat_date(Some(t))),
            'W' => secs(a.created),
            'd' => a.device.to_string(),
            'D' => format!("{:x}", a.device),
            'a' => format!("{bits:o}"),
            'A' => crate::fs::mode_string(m.kind, bits),
            'U' | 'G' => super::OWNER.to_owned(),
            'u' | 'g' | 't' | 'T' => "0".to_owned(),
            // The raw mode, in hexadecimal: the file type's bits with the
            // permissions.
            'f' => {
                let kind_bits = if m.is_dir() { 0o040000 } else { 0o100000 };
                format!("{:x}", kind_bits | bits)
            }
            'h' => links.to_string(),
            'b' => blocks(m).to_string(),
            'B' => "512".to_owned(),
            'o' => "4096".to_owned(),
            // The mount point: the documents sit on one filesystem, as
            // a container's own trees do.
            'm' => "/".to_owned(),
            other => format!("?{other}"),
        };
        let pad = width.saturating_sub(piece.chars().count());
        let numeric = !piece.is_empty() && piece.bytes().all(|b| b.is_ascii_digit());
        if left {
            out.push_str(&piece);
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            let fill = if zero && numeric { '0' } else { ' ' };
            out.extend(std::iter::repeat_n(fill, pad));
            out.push_str(&piece);
        }
    }
    out.push('\n');
    out
}

/// `stat`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('c', "format", "c"),
        value('\0', "printf", "printf"),
        super::flag('L', "dereference", "L"),
        super::flag('t', "terse", "t"),
        super::flag('f', "file-system", "f"),
    ];
    let p = match options(cx, "stat", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // A file system's figures (blocks free, inodes, its type) would be the
    // host's, which a script is not to see.
    if p.has("f") {
        cx.err("stat: -f (--file-system) is not available in vfs-sh: the documents' storage is not shown to scripts");
        return 1;
    }
    if p.operands.is_empty() {
        cx.err("stat: missing operand");
        cx.err("Try 'stat --help' for more information.");
        return 1;
    }
    let mut status = 0;
    for op in &p.operands {
        match cx.fs.metadata(op) {
            Ok(m) => {
                let a = cx.fs.attributes(op).unwrap_or(Attrs {
                    mode: m.kind.default_mode(),
                    inode: 0,
                    device: 0,
                    accessed: m.modified,
                    changed: m.modified,
                    created: None,
                });
                let links = super::links(cx, op, m.kind);
                let text = match (p.last_of(&["c", "printf"]), p.value("c"), p.value("printf")) {
                    (Some("printf"), _, Some(f)) => {
                        // `--printf`: backslash escapes, no newline added.
                        let f = super::echo::unescape(f, super::echo::Dialect::Format, true).0;
                        let line = custom(&crate::lossless::decode(&f), op, &m, &a, links);
                        line.strip_suffix('\n').unwrap_or(&line).to_owned()
                    }
                    (_, Some(f), _) => custom(f, op, &m, &a, links),
                    // `-t`: GNU's terse line.
                    _ if p.has("t") => custom(
                        "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o",
                        op,
                        &m,
                        &a,
                        links,
                    ),
                    _ => default_format(op, &m, &a, links),
                };
                cx.outs(&text);
            }
            Err(e) => {
                cx.err(format_args!(
                    "stat: cannot statx {}: {}",
                    super::quote::quote(op, true),
                    e.strerror()
                ));
                status = 1;
            }
        }
    }
    status
}
