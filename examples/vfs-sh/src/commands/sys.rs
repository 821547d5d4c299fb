//! `date`, `which` and `file`: what agents ask about the machine and the
//! documents.

use crate::exec::Cx;
use crate::time::{epoch_seconds, strftime};

pub(crate) use crate::datestr::parse_date;

/// `date [-u] [-d STRING] [-s STRING] [-r FILE] [-I[FMT]] [-R] [+FORMAT]`, in UTC.
pub(crate) fn date(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let (now, nanos) = {
        let d = cx
            .env
            .now
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        (d.as_secs() as i64, d.subsec_nanos())
    };
    let mut when = (now, nanos);
    let mut format = "%a %b %e %H:%M:%S %Z %Y".to_owned();
    // `-s`: the sandbox may not set the clock, so GNU date's failure as
    // an unprivileged user: the refusal, then the date it would have set.
    let mut set = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let value = |i: &mut usize, inline: Option<&str>| -> Option<String> {
            inline.map(str::to_owned).or_else(|| {
                let v = args.get(*i).cloned();
                *i += 1;
                v
            })
        };
        // `-d STRING` in its spellings (`--date=S`, `-dS`, `-ud S`), and
        // `-s STRING` in the same ones.
        let (date_text, setting) = match a.as_str() {
            "-d" | "--date" | "-ud" | "-du" | "-s" | "--set" | "-us" | "-su" => {
                let setting = a.contains('s');
                match value(&mut i, None) {
                    Some(v) => (Some(v), setting),
                    None => {
                        let letter = if setting { 's' } else { 'd' };
                        cx.err(format_args!(
                            "date: option requires an argument -- '{letter}'"
                        ));
                        cx.err("Try 'date --help' for more information.");
                        return 1;
                    }
                }
            }
            s if s.starts_with("--date=") => (Some(s[7..].to_owned()), false),
            s if s.starts_with("--set=") => (Some(s[6..].to_owned()), true),
            s if s.starts_with("-d") && s.len() > 2 => (Some(s[2..].to_owned()), false),
            s if s.starts_with("-s") && s.len() > 2 => (Some(s[2..].to_owned()), true),
            _ => (None, false),
        };
        if let Some(v) = date_text {
            match parse_date(&v, now) {
                Some(t) => when = (t, 0),
                None => {
                    cx.err(format_args!("date: invalid date '{v}'"));
                    return 1;
                }
            }
            set |= setting;
            continue;
        }
        match a.as_str() {
            "-u" | "--utc" | "--universal" => {}
            "-r" | "--reference" => {
                let Some(f) = value(&mut i, None) else {
                    cx.err("date: option requires an argument -- 'r'");
                    return 1;
                };
                match cx.fs.metadata(&f) {
                    Ok(m) => {
                        let t = m.modified.unwrap_or(std::time::UNIX_EPOCH);
                        let n = t
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.subsec_nanos());
                        when = (epoch_seconds(t), n);
                    }
                    Err(e) => {
                        cx.err(format_args!("date: {f}: {}", e.strerror()));
                        return 1;
                    }
                }
            }
            "-R" | "--rfc-email" | "--rfc-822" | "--rfc-2822" => {
                format = "%a, %d %b %Y %H:%M:%S %z".to_owned();
            }
            s if s.starts_with("-I") || long_option(s, "--iso-8601") => {
                let value = s
                    .strip_prefix("-I")
                    .or_else(|| s.split_once('=').map(|(_, v)| v))
                    .unwrap_or("");
                let precision = if value.is_empty() {
                    Some("date")
                } else {
                    precision(value, &["date", "hours", "minutes", "seconds", "ns"])
                };
                format = match precision {
                    Some("date") => "%F",
                    Some("hours") => "%FT%H%:z",
                    Some("minutes") => "%FT%H:%M%:z",
                    Some("seconds") => "%FT%T%:z",
                    Some(_) => "%FT%T,%N%:z",
                    None => return bad_precision(cx, value, s),
                }
                .to_owned();
            }
            s if long_option(s, "--rfc-3339") => {
                let Some((_, value)) = s.split_once('=') else {
                    cx.err("date: option '--rfc-3339' requires an argument");
                    cx.err("Try 'date --help' for more information.");
                    return 1;
                };
                format = match precision(value, &["date", "seconds", "ns"]) {
                    Some("date") => "%F",
                    Some("seconds") => "%F %T%:z",
                    Some(_) => "%F %T.%N%:z",
                    None => return bad_precision(cx, value, s),
                }
                .to_owned();
            }
            s if s.starts_with('+') => format = s[1..].to_owned(),
            s => {
                cx.err(format_args!(
                    "date: setting the time is not allowed, or invalid option '{s}'"
                ));
                return 1;
            }
        }
    }
    if set {
        cx.err("date: cannot set date: Operation not permitted");
    }
    cx.outs(&format!("{}\n", strftime(&format, when.0, when.1)));
    u8::from(set)
}

/// Whether `arg` is the long option `name` (or an abbreviation of it at
/// least as long as `--iso` or `--rfc-3`, as getopt takes one), with or
/// without `=VALUE`.
fn long_option(arg: &str, name: &str) -> bool {
    let given = arg.split_once('=').map_or(arg, |(n, _)| n);
    given.len() >= 5 && name.starts_with(given)
}

/// The precision a `-I`/`--rfc-3339` value names: the word itself or an
/// unambiguous start of it, as GNU's argmatch takes it.
fn precision<'a>(value: &str, words: &[&'a str]) -> Option<&'a str> {
    let mut found = words.iter().filter(|w| w.starts_with(value));
    match (found.next(), found.next()) {
        (Some(w), None) => Some(*w),
        _ => words.iter().find(|w| **w == value).copied(),
    }
}

fn bad_precision(cx: &mut Cx<'_>, value: &str, arg: &str) -> u8 {
    let (option, valid): (_, &[&str]) = if arg.starts_with("--rfc") {
        ("--rfc-3339", &["date", "seconds", "ns"])
    } else {
        ("--iso-8601", &["hours", "minutes", "date", "seconds", "ns"])
    };
    cx.err(format_args!(
        "date: invalid argument '{value}' for '{option}'"
    ));
    cx.err("Valid arguments are:");
    for v in valid {
        cx.err(format_args!("  - '{v}'"));
    }
    cx.err("Try 'date --help' for more information.");
    1
}

/// `which [-a] NAME...`: where each of vfs-sh's commands would be found.
pub(crate) fn which(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let all = args.iter().any(|a| a == "-a");
    let mut status = 0;
    let mut out = String::new();
    for n in args.iter().filter(|a| !a.starts_with('-')) {
        let paths = super::paths_of(n);
        if paths.is_empty() {
            status = 1;
        }
        for p in paths.iter().take(if all { paths.len() } else { 1 }) {
            out.push_str(p);
            out.push('\n');
        }
    }
    cx.outs(&out);
    status
}

/// What `file` says of a document, from its bytes (a small part of
/// libmagic: text encodings and line endings, empty files, directories,
/// gzip, tar, ELF headers, PDF, PNG, JPEG, ZIP, JSON, shebang scripts, and
/// C, Java, HTML, XML, PHP and Python by their first lines).
///
/// `data` is the document's first 64 KiB (libmagic looks no further);
/// `last4`, its last four bytes, where a gzip file keeps its original size
/// (`None` for standard input, whose end libmagic cannot seek to).
fn describe(data: &[u8], last4: Option<[u8; 4]>) -> String {
    match data.len() {
        0 => return "empty".to_owned(),
        1 => return "very short file (no magic)".to_owned(),
        _ => {}
    }
    let starts = |m: &[u8]| data.starts_with(m);
    if starts(&[0x1f, 0x8b]) {
        return gzip(data, last4);
    }
    if data.len() > 262 && &data[257..262] == b"ustar" {
        return "POSIX tar archive (GNU)".to_owned();
    }
    if starts(b"\x7fELF") {
        return elf(data);
    }
    if starts(b"%PDF-") {
        return "PDF document".to_owned();
    }
    if starts(b"\x89PNG") {
        return "PNG image data".to_owned();
    }
    if starts(&[0xff, 0xd8, 0xff]) {
        return "JPEG image data".to_owned();
    }
    if starts(b"PK\x03\x04") {
        return "Zip archive data".to_owned();
    }
    if data
        .iter()
        .any(|&b| b < 0x20 && !matches!(b, b'\n' | b'\t' | b'\r' | 0x0c | 0x1b | 0x08))
    {
        return "data".to_owned();
    }
    // UTF-8 (a character cut at the end of what was read still counts,
    // after a whole one), else libmagic's 8-bit encodings: ISO-8859 when no byte is in
    // 0x80..=0x9F (C1 controls there), "Non-ISO extended-ASCII" when one is.
    let decoded;
    let (text, encoding) = match std::str::from_utf8(data) {
        Ok(t) if t.is_ascii() => (t, "ASCII"),
        Ok(t) => (t, "Unicode text, UTF-8"),
        Err(e) if e.error_len().is_none() && !data[..e.valid_up_to()].is_ascii() => (
            std::str::from_utf8(&data[..e.valid_up_to()]).unwrap_or_default(),
            "Unicode text, UTF-8",
        ),
        Err(_) => {
            decoded = crate::lossless::decode(data);
            // 0x85 is NEL, a line terminator to libmagic, not a C1 byte.
            let c1 = data.iter().any(|&b| (0x80..0xa0).contains(&b) && b != 0x85);
            let name = if c1 {
                "Non-ISO extended-ASCII"
            } else {
                "ISO-8859"
            };
            (&*decoded, name)
        }
    };
    let mut kind = if looks_like_csv(text.as_bytes()) {
        "CSV text".to_owned()
    } else {
        format!("{encoding} text")
    };
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && jaq_json::read::parse_single(text.trim().as_bytes()).is_ok()
    {
        return "JSON text data".to_owned();
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() > 1
        && lines.iter().all(|l| {
            l.trim_start().starts_with('{')
                && jaq_json::read::parse_single(l.trim().as_bytes()).is_ok()
        })
    {
        return "New Line Delimited JSON text data".to_owned();
    }
    if let Some(lang) = language(text) {
        // libmagic's python rules call the script executable, as a shebang
        // line does.
        let executable = if lang.starts_with("Python") {
            " executable"
        } else {
            ""
        };
        kind = format!("{lang}, {kind}{executable}");
    }
    if let Some(first) = text.lines().next()
        && let Some(interp) = first.strip_prefix("#!")
    {
        let prog = interp
            .split_whitespace()
            .map(|w| w.rsplit('/').next().unwrap_or(w))
            .find(|w| *w != "env")
            .unwrap_or("sh");
        kind = match prog {
            "sh" => format!("POSIX shell script, {kind} executable"),
            "bash" => format!("Bourne-Again shell script, {kind} executable"),
            p if p.starts_with("python") => format!("Python script, {kind} executable"),
            p if p.starts_with("perl") => "Perl script text executable".to_owned(),
            "node" | "nodejs" => format!("Node.js script executable, {kind}"),
            p if p.starts_with("ruby") => format!("Ruby script, {kind} executable"),
            p => format!("{p} script, {kind} executable"),
        };
    }
    let mut extras = Vec::new();
    if let Some(n) = longest_line(text) {
        extras.push(format!("with very long lines ({n})"));
    }
    extras.extend(terminators(text));
    if !extras.is_empty() {
        kind.push_str(", ");
        kind.push_str(&extras.join(", "));
    }
    kind
}

/// libmagic's line terminators: named when there are none or when one
/// is not LF (`with CRLF, LF line terminators`); NEL is U+0085 or, in an
/// 8-bit encoding, the byte 0x85.
fn terminators(text: &str) -> Option<String> {
    let (mut crlf, mut cr, mut lf, mut nel) = (0, 0, 0, 0);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {
                chars.next();
                crlf += 1;
            }
            '\r' => cr += 1,
            '\n' => lf += 1,
            '\u{85}' => nel += 1,
            c if crate::lossless::raw_byte(c) == Some(0x85) => nel += 1,
            _ => {}
        }
    }
    if crlf + cr + nel == 0 && lf > 0 {
        return None;
    }
    if crlf + cr + lf + nel == 0 {
        return Some("with no line terminators".to_owned());
    }
    let names: Vec<&str> = [(crlf, "CRLF"), (cr, "CR"), (lf, "LF"), (nel, "NEL")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(_, name)| name)
        .collect();
    Some(format!("with {} line terminators", names.join(", ")))
}

/// libmagic's gzip line: the original name and time the header keeps, the
/// compression level, the system, and the size from the trailer.
fn gzip(data: &[u8], last4: Option<[u8; 4]>) -> String {
    let mut d = String::from("gzip compressed data");
    let flags = data.get(3).copied().unwrap_or(0);
    if flags & 0x08 != 0 {
        // The name follows the 10-byte header (and the extra field).
        let mut at = 10;
        if flags & 0x04 != 0 {
            let xlen = data
                .get(10..12)
                .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
            at += 2 + usize::from(xlen);
        }
        let name = data.get(at..).unwrap_or_default();
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        d.push_str(&format!(
            ", was \"{}\"",
            String::from_utf8_lossy(&name[..end])
        ));
    }
    let mtime = data
        .get(4..8)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if mtime > 0 {
        let when = crate::time::strftime("%a %b %e %H:%M:%S %Y", i64::from(mtime), 0);
        d.push_str(&format!(", last modified: {when}"));
    }
    match data.get(8) {
        Some(2) => d.push_str(", max compression"),
        Some(4) => d.push_str(", max speed"),
        _ => {}
    }
    match data.get(9) {
        Some(0) => d.push_str(", from FAT filesystem (MS-DOS, OS/2, NT)"),
        Some(3) => d.push_str(", from Unix"),
        _ => {}
    }
    if let Some(b) = last4 {
        d.push_str(&format!(
            ", original size modulo 2^32 {}",
            u32::from_le_bytes(b)
        ));
    }
    d
}

/// libmagic's "very long lines": the longest line over 300 characters (a
/// line ends at a newline or a carriage return), if there is one.
fn longest_line(text: &str) -> Option<usize> {
    let mut len = 0;
    let mut longest = 0;
    for c in text.chars() {
        if matches!(c, '\n' | '\r') {
            len = 0;
        } else {
            len += 1;
            longest = longest.max(len);
        }
    }
    (longest > 300).then_some(longest)
}

/// A file name as `file` prints it: a byte that is not printable (a
/// control character; in the C locale, any byte outside ASCII) as `\ooo`.
fn printable_name(name: &str, utf8: bool) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let shown = if utf8 {
            !c.is_control()
        } else {
            c.is_ascii() && !c.is_ascii_control()
        };
        if shown {
            out.push(c);
        } else {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\{b:03o}"));
            }
        }
    }
    out
}

/// What libmagic's text rules name a document's language: the common
/// cases of its `c-lang`, `java`, `sgml`, `php` and `python` magic.
fn language(text: &str) -> Option<String> {
    let mut cut = text.len().min(8192);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let lower = head.trim_start().to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("<?xml version=\"") {
        let version: String = rest.chars().take_while(|c| *c != '"').collect();
        return Some(format!("XML {version} document"));
    }
    let html = [
        "<!doctype html",
        "<html",
        "<head",
        "<title",
        "<body",
        "<script",
        "<style",
        "<table",
    ];
    if html.iter().any(|t| lower.starts_with(t)) {
        return Some("HTML document".to_owned());
    }
    if head.starts_with("<?php") {
        return Some("PHP script".to_owned());
    }
    if head.contains("import java") || head.contains("public static void main(String") {
        return Some("Java source".to_owned());
    }
    let c_start = ["int main(", "char *", "struct "];
    if head.lines().any(|l| l.starts_with("#include"))
        || c_start.iter().any(|p| head.starts_with(p))
    {
        return Some("C source".to_owned());
    }
    let first = head.lines().next().unwrap_or("");
    if (first.starts_with("def ") && first.trim_end().ends_with(':'))
        || (first.starts_with("from ") && first.contains(" import "))
    {
        return Some("Python script".to_owned());
    }
    None
}

/// An ELF header as `file` describes it: class, byte order, type,
/// machine, version and OS ABI.
fn elf(data: &[u8]) -> String {
    let class = match data.get(4) {
        Some(1) => "32-bit",
        Some(2) => "64-bit",
        _ => return "ELF".to_owned(),
    };
    let little = data.get(5) == Some(&1);
    let order = if little { "LSB" } else { "MSB" };
    let half = |at: usize| -> Option<u16> {
        let b = data.get(at..at + 2)?;
        Some(if little {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        })
    };
    let kind = match half(16) {
        Some(1) => "relocatable",
        Some(2) => "executable",
        Some(3) => "shared object",
        Some(4) => "core file",
        _ => return format!("ELF {class} {order}"),
    };
    let machine = match half(18) {
        Some(3) => "Intel 80386",
        Some(8) => "MIPS",
        Some(20) => "PowerPC",
        Some(40) => "ARM",
        Some(62) => "x86-64",
        Some(183) => "ARM aarch64",
        Some(243) => "UCB RISC-V",
        Some(m) => return format!("ELF {class} {order} {kind}, machine {m}"),
        None => return format!("ELF {class} {order} {kind}"),
    };
    let abi = match data.get(7) {
        Some(0) => "SYSV",
        Some(3) => "GNU/Linux",
        Some(9) => "FreeBSD",
        _ => "unknown",
    };
    let version = data.get(6).copied().unwrap_or(0);
    format!("ELF {class} {order} {kind}, {machine}, version {version} ({abi})")
}

/// `file [-b] [-i] PATH...`
/// libmagic's `is_csv`: the first ten lines (or all, if more than two and
/// fewer than ten) have the same number of commas outside double quotes,
/// and at least one.
fn looks_like_csv(data: &[u8]) -> bool {
    const CSV_LINES: usize = 10;
    let (mut fields, mut want, mut lines) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < data.len() {
        let c = data[i];
        i += 1;
        match c {
            b'"' => {
                // To the closing quote (`""` is a quote inside).
                while i < data.len() {
                    if data[i] == b'"' {
                        if data.get(i + 1) == Some(&b'"') {
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    i += 1;
                }
            }
            b',' => fields += 1,
            b'\n' => {
                lines += 1;
                if lines == CSV_LINES {
                    return want != 0 && want == fields;
                }
                if want == 0 {
                    if fields == 0 {
                        return false;
                    }
                    want = fields;
                } else if want != fields {
                    return false;
                }
                fields = 0;
            }
            _ => {}
        }
    }
    want != 0 && lines > 2
}

/// The MIME type and charset `file -i` gives for one of `describe`'s
/// descriptions (file 5.x's names).
fn mime_of(what: &str) -> (&'static str, &'static str) {
    let charset = if what.contains("UTF-8") {
        "utf-8"
    } else if what.contains("ASCII") || what.contains("text") {
        "us-ascii"
    } else {
        "binary"
    };
    let prefixes: &[(&str, &str)] = &[
        ("empty", "inode/x-empty"),
        ("directory", "inode/directory"),
        ("JSON", "application/json"),
        ("New Line Delimited JSON", "application/x-ndjson"),
        ("POSIX tar", "application/x-tar"),
        ("gzip", "application/gzip"),
        ("Zip", "application/zip"),
        ("PDF", "application/pdf"),
        ("PNG", "image/png"),
        ("JPEG", "image/jpeg"),
        ("C source", "text/x-c"),
        ("C++ source", "text/x-c++"),
        ("Java source", "text/x-java"),
        ("HTML", "text/html"),
        ("XML", "text/xml"),
        ("PHP", "text/x-php"),
        ("Python", "text/x-script.python"),
        ("POSIX shell", "text/x-shellscript"),
        ("Bourne-Again shell", "text/x-shellscript"),
        ("CSV", "text/csv"),
    ];
    let ty = if what.starts_with("ELF") {
        if what.contains("shared object") {
            "application/x-sharedlib"
        } else if what.contains("relocatable") {
            "application/x-object"
        } else {
            "application/x-executable"
        }
    } else if let Some((_, t)) = prefixes.iter().find(|(p, _)| what.starts_with(p)) {
        t
    } else if charset == "binary" {
        "application/octet-stream"
    } else {
        "text/plain"
    };
    let charset = if ty.starts_with("inode/") {
        "binary"
    } else {
        charset
    };
    (ty, charset)
}

pub(crate) fn file(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    // Short options may come together (`-bi`).
    let short = |c: char| {
        args.iter().any(|a| {
            a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c)
        })
    };
    let long = |l: &str| args.iter().any(|a| a == l);
    let brief = short('b') || long("--brief");
    // `-i`/`--mime`: type and charset; `--mime-type`, `--mime-encoding`:
    // one of them.
    let mime_both = short('i') || long("--mime");
    let (want_type, want_charset) = (
        mime_both || long("--mime-type"),
        mime_both || long("--mime-encoding"),
    );
    let mime = want_type || want_charset;
    let ops: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-') || *a == "-")
        .collect();
    if ops.is_empty() {
        cx.err("Usage: file [-bir] [--mime-type] [--mime-encoding] FILE...");
        return 1;
    }
    // Standard input is named as file names it; a name's unprintable
    // bytes (in the C locale, every byte outside ASCII) are shown as
    // `\ooo`, but under `-r`. The names line up as if escaped, even then.
    let raw = short('r') || long("--raw");
    let utf8 = super::utf8_locale(cx);
    let named = |op: &str| if op == "-" { "/dev/stdin" } else { op }.to_owned();
    let shown = |op: &str| {
        if raw {
            op.to_owned()
        } else {
            printable_name(op, utf8)
        }
    };
    let escaped: Vec<String> = ops
        .iter()
        .map(|o| printable_name(&named(o), utf8))
        .collect();
    let width = escaped.iter().map(|e| e.chars().count()).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for (op, escaped) in ops.into_iter().zip(escaped) {
        let kind = |k: String| {
            if !mime {
                return k;
            }
            let (ty, charset) = mime_of(&k);
            match (want_type, want_charset) {
                (true, true) => format!("{ty}; charset={charset}"),
                (true, false) => ty.to_owned(),
                _ => charset.to_owned(),
            }
        };
        let what = match cx.fs.metadata(op) {
            _ if op == "-" => {
                // As of a document, the first 64 KiB; a pipe has no end
                // to read a gzip size from.
                let mut data = cx.stdin();
                data.truncate(64 << 10);
                kind(describe(&data, None))
            }
            Ok(m) if m.is_dir() => {
                if mime {
                    kind("directory".to_owned())
                } else {
                    "directory".to_owned()
                }
            }
            Ok(m) => match cx.fs.read_range(op, 0, 64 << 10) {
                Ok(d) => {
                    // A gzip file's size is in its last 4 bytes.
                    let last4 = if d.starts_with(&[0x1f, 0x8b]) && m.len >= 18 {
                        cx.fs
                            .read_range(op, m.len - 4, 4)
                            .ok()
                            .and_then(|b| <[u8; 4]>::try_from(b.as_slice()).ok())
                    } else {
                        None
                    };
                    kind(describe(&d, last4))
                }
                Err(e) => format!("cannot open `{}' ({})", shown(op), e.strerror()),
            },
            Err(e) => format!("cannot open `{}' ({})", shown(op), e.strerror()),
        };
        if brief {
            out.push_str(&format!("{what}\n"));
        } else {
            let fill = width.saturating_sub(escaped.chars().count() + 1);
            let name = if raw { named(op) } else { escaped };
            out.push_str(&format!("{name}:{:fill$} {what}\n", ""));
        }
    }
    cx.outs(&out);
    0
}

/// The one account of the sandbox: every document is `root`'s.
const USER: &str = "root";

fn no_such_user(cx: &mut Cx<'_>, cmd: &str, args: &[String]) -> Option<u8> {
    let other = args.iter().find(|a| !a.starts_with('-') && *a != USER)?;
    cx.err(format_args!("{cmd}: '{other}': no such user"));
    Some(1)
}

/// `whoami`.
pub(crate) fn whoami(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    if let Some(extra) = args.first() {
        cx.err(format_args!("whoami: extra operand '{extra}'"));
        cx.err("Try 'whoami --help' for more information.");
        return 1;
    }
    cx.outs("root\n");
    0
}

/// `id [-u|-g|-G] [-n] [-r] [USER]`: the sandbox's one account, root.
pub(crate) fn id(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    if let Some(code) = no_such_user(cx, "id", args) {
        return code;
    }
    let mut which = None;
    let mut name = false;
    for a in args.iter().filter(|a| a.starts_with('-') && a.len() > 1) {
        let letters: Vec<char> = match a.as_str() {
            "--user" => vec!['u'],
            "--group" => vec!['g'],
            "--groups" => vec!['G'],
            "--name" => vec!['n'],
            "--real" => vec!['r'],
            long if long.starts_with("--") => {
                cx.err(format_args!("id: unrecognized option '{long}'"));
                cx.err("Try 'id --help' for more information.");
                return 1;
            }
            short => short[1..].chars().collect(),
        };
        for c in letters {
            match c {
                'u' | 'g' | 'G' => which = Some(c),
                'n' => name = true,
                'r' | 'z' => {}
                other => {
                    cx.err(format_args!("id: invalid option -- '{other}'"));
                    cx.err("Try 'id --help' for more information.");
                    return 1;
                }
            }
        }
    }
    match (which, name) {
        (None, false) => cx.outs("uid=0(root) gid=0(root) groups=0(root)\n"),
        (None, true) => {
            cx.err("id: printing only names or real IDs requires -u, -g, or -G");
            cx.err("Try 'id --help' for more information.");
            return 1;
        }
        (Some(_), true) => cx.outs("root\n"),
        (Some(_), false) => cx.outs("0\n"),
    }
    0
}

/// `groups [USER]...`.
pub(crate) fn groups(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    if let Some(code) = no_such_user(cx, "groups", args) {
        return code;
    }
    if args.is_empty() {
        cx.outs("root\n");
    } else {
        for a in args {
            cx.outs(&format!("{a} : root\n"));
        }
    }
    0
}

/// `uname [-asnrvmpio]`: Linux, with the sandbox's own node name, release
/// and version (the host's are not the script's business).
pub(crate) fn uname(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const FIELDS: [(char, &str); 8] = [
        ('s', "Linux"),
        ('n', "vfsbox"),
        ('r', "vfsbox"),
        ('v', "vfsbox"),
        ('m', "x86_64"),
        ('p', "unknown"),
        ('i', "unknown"),
        ('o', "GNU/Linux"),
    ];
    let mut want = Vec::new();
    for a in args {
        let letters: Vec<char> = match a.as_str() {
            "--all" => vec!['a'],
            "--kernel-name" => vec!['s'],
            "--nodename" => vec!['n'],
            "--kernel-release" => vec!['r'],
            "--kernel-version" => vec!['v'],
            "--machine" => vec!['m'],
            "--processor" => vec!['p'],
            "--hardware-platform" => vec!['i'],
            "--operating-system" => vec!['o'],
            s if s.starts_with('-') && !s.starts_with("--") && s.len() > 1 => {
                s[1..].chars().collect()
            }
            s if s.starts_with("--") => {
                cx.err(format_args!("uname: unrecognized option '{s}'"));
                cx.err("Try 'uname --help' for more information.");
                return 1;
            }
            s => {
                cx.err(format_args!("uname: extra operand '{s}'"));
                cx.err("Try 'uname --help' for more information.");
                return 1;
            }
        };
        for c in letters {
            if c != 'a' && !FIELDS.iter().any(|f| f.0 == c) {
                cx.err(format_args!("uname: invalid option -- '{c}'"));
                cx.err("Try 'uname --help' for more information.");
                return 1;
            }
            want.push(c);
        }
    }
    if want.is_empty() {
        want.push('s');
    }
    // `-a` leaves out `-p` and `-i` when they are unknown, as GNU does.
    let all = want.contains(&'a');
    let words: Vec<&str> = FIELDS
        .iter()
        .filter(|(c, v)| {
            if all {
                !(matches!(c, 'p' | 'i') && *v == "unknown") || want.contains(c)
            } else {
                want.contains(c)
            }
        })
        .map(|f| f.1)
        .collect();
    cx.outs(&format!("{}\n", words.join(" ")));
    0
}

/// `hostname`: the sandbox's name.
pub(crate) fn hostname(cx: &mut Cx<'_>, _args: &[String]) -> u8 {
    cx.outs("vfsbox\n");
    0
}

/// The value of `name` in the commands' environment (exported variables).
fn exported(cx: &Cx<'_>, name: &str) -> Option<String> {
    (cx.environ)()
        .into_iter()
        .find_map(|(k, v)| (k == name).then_some(v))
}

/// `tty [-s]`: a script's standard input is never a terminal.
pub(crate) fn tty(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    if !args
        .iter()
        .any(|a| matches!(a.as_str(), "-s" | "--silent" | "--quiet"))
    {
        cx.outs("not a tty\n");
    }
    1
}

/// `logname`: a script has no login session.
pub(crate) fn logname(cx: &mut Cx<'_>, _args: &[String]) -> u8 {
    cx.err("logname: no login name");
    1
}

/// `stty`: standard input is no terminal to ask or set.
pub(crate) fn stty(cx: &mut Cx<'_>, _args: &[String]) -> u8 {
    cx.err("stty: 'standard input': Inappropriate ioctl for device");
    1
}

/// `clear` and `tput`: without an exported `TERM` (bash keeps its `dumb`
/// to itself) there is no terminal type to use; with one, the sandbox
/// has no terminal database to look it up in.
pub(crate) fn clear(cx: &mut Cx<'_>, _args: &[String]) -> u8 {
    match exported(cx, "TERM") {
        None => cx.err("TERM environment variable not set."),
        Some(t) => cx.err(format_args!("'{t}': unknown terminal type.")),
    }
    1
}

/// `tput`: see [`clear`]; `-T TYPE` names the type.
pub(crate) fn tput(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut named = None;
    let mut words = args.iter();
    while let Some(a) = words.next() {
        if a == "-T" {
            named = words.next().cloned();
        } else if let Some(t) = a.strip_prefix("-T") {
            named = Some(t.to_owned());
        }
    }
    match named.or_else(|| exported(cx, "TERM")) {
        None => {
            cx.err("tput: No value for $TERM and no -T specified");
            2
        }
        Some(t) => {
            cx.err(format_args!("tput: unknown terminal \"{t}\""));
            3
        }
    }
}

#[cfg(test)]
mod tests {
    use super::describe;

    /// `gzip -9 a.txt` of "hello\n" modified 2024-03-01 12:00 UTC; `file`
    /// 5.44 says of it what the test expects.
    const HELLO_GZ: &[u8] = &[
        0x1f, 0x8b, 0x08, 0x08, 0x40, 0xc3, 0xe1, 0x65, 0x02, 0x03, 0x61, 0x2e, 0x74, 0x78, 0x74,
        0x00, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xe7, 0x02, 0x00, 0x20, 0x30, 0x3a, 0x36, 0x06, 0x00,
        0x00, 0x00,
    ];

    #[test]
    fn gzip_names_its_header_and_the_trailers_size() {
        let last4 = [0x06, 0x00, 0x00, 0x00];
        assert_eq!(
            describe(HELLO_GZ, Some(last4)),
            "gzip compressed data, was \"a.txt\", last modified: Fri Mar  1 12:00:00 2024, \
             max compression, from Unix, original size modulo 2^32 6"
        );
        // Standard input: no end to seek to, no size.
        assert_eq!(
            describe(HELLO_GZ, None),
            "gzip compressed data, was \"a.txt\", last modified: Fri Mar  1 12:00:00 2024, \
             max compression, from Unix"
        );
        // The size is the trailer's, not whatever ends the 64 KiB read.
        let head = &HELLO_GZ[..20];
        assert!(describe(head, Some([0xe0, 0x93, 0x04, 0x00])).ends_with("2^32 300000"));
    }
}
