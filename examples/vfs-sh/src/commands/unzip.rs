//! `unzip -l`, `unzip -p`, `unzip -t`, `unzip -Z1` and `zipinfo -1` over a zip archive
//! in the documents (Office files are zip archives: `unzip -p a.docx
//! word/document.xml`). The archive is read with the `zip` crate; the
//! listing and the messages are Info-ZIP UnZip 6.00's. Extracting to files
//! is refused: the filesystem is read-only.

use std::io::{Cursor, Read};

use crate::exec::Cx;
use crate::glob::Pattern;

/// What `unzip` was asked to do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Extract,
    List,
    Pipe,
    Test,
    Names,
}

/// unzip's exit statuses.
const NOT_FOUND: u8 = 9;
const BAD_OPTIONS: u8 = 10;
const NONE_MATCHED: u8 = 11;
const READ_ONLY: u8 = 50;

const USAGE: &str = "Usage: unzip [-Z] [-opts[modifiers]] file[.zip] [list] [-x xlist] [-d exdir]
  vfs-sh's unzip reads only: -l (list), -p (members to standard output),
  -t (test), -Z1 (names); -q, -qq quieter; -x excludes members; -C ignores case.";

/// `unzip [-l|-p|-t|-Z1] [-q[q]] [-C] ARCHIVE[.zip] [MEMBER]... [-x MEMBER...]`
pub(crate) fn unzip(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, args, false)
}

/// `zipinfo -1 ARCHIVE [MEMBER]...`: `unzip -Z`.
pub(crate) fn zipinfo(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    run(cx, args, true)
}

fn run(cx: &mut Cx<'_>, args: &[String], mut zipinfo: bool) -> u8 {
    let (mut list, mut pipe, mut test) = (false, false, false);
    let mut quiet = 0;
    let mut fold = false;
    let mut short_names = false;
    let mut archive = None;
    let mut members = Vec::new();
    let mut excluded = Vec::new();
    let mut excluding = false;
    let mut words = args.iter();
    while let Some(a) = words.next() {
        // Options may follow the archive too, as UnZip reads them.
        if let Some(opts) = a.strip_prefix('-').filter(|o| !o.is_empty()) {
            for c in opts.chars() {
                match c {
                    'Z' if archive.is_none() => zipinfo = true,
                    '1' if zipinfo => short_names = true,
                    'l' => list = true,
                    'p' => pipe = true,
                    't' => test = true,
                    'q' => quiet += 1,
                    'C' => fold = true,
                    'x' => excluding = true,
                    // Modifiers of extraction, which is refused anyway.
                    'o' | 'n' | 'j' | 'a' | 'b' | 'L' | 'U' | 'X' | 'K' | 'V' | 'M' => {}
                    'd' => {
                        let _ = words.next();
                    }
                    _ => {
                        cx.err(format_args!(
                            "unzip: -{c} is not supported: {}",
                            "vfs-sh's unzip lists (-l, -Z1), tests (-t) and prints (-p) members"
                        ));
                        return BAD_OPTIONS;
                    }
                }
            }
            continue;
        }
        match (&archive, excluding) {
            (None, _) => archive = Some(a.clone()),
            (Some(_), false) => members.push(a.clone()),
            (Some(_), true) => excluded.push(a.clone()),
        }
    }
    if pipe && test {
        cx.outs("error:  -fn or any combination of -c, -l, -p, -t, -u and -v options invalid\n");
        return BAD_OPTIONS;
    }
    // `-t` wins over `-l`, and `-p` over `-l`, in either order.
    let mut mode = if test {
        Mode::Test
    } else if pipe {
        Mode::Pipe
    } else if list {
        Mode::List
    } else {
        Mode::Extract
    };
    if zipinfo {
        if !short_names {
            cx.err("zipinfo: only -1 (one name a line) is supported");
            return BAD_OPTIONS;
        }
        mode = Mode::Names;
    }
    let Some(archive) = archive else {
        cx.outs(&format!("{USAGE}\n"));
        return 0;
    };
    if mode == Mode::Extract {
        cx.err(
            "unzip: extracting would write files: the filesystem is read-only (use unzip -p to print members, or unzip -l to list them)",
        );
        return READ_ONLY;
    }
    // UnZip's messages go to standard error, except with -t, whose report
    // they are part of; -p prints none but the archive's own faults, and
    // zipinfo signs them with its name.
    let prog = if zipinfo { "zipinfo" } else { "unzip" };
    let say = |cx: &mut Cx<'_>, text: &str| {
        if mode == Mode::Test {
            cx.outs(&format!("{text}\n"));
        } else {
            cx.err(text);
        }
    };
    // UnZip tries the name as given, then with `.zip` and `.ZIP`.
    let tried = [
        archive.clone(),
        format!("{archive}.zip"),
        format!("{archive}.ZIP"),
    ];
    let Some((name, data)) = tried
        .iter()
        .find_map(|n| cx.read_file_operand(n).ok().map(|d| (n.clone(), d)))
    else {
        if mode != Mode::Pipe {
            say(
                cx,
                &format!(
                    "{prog}:  cannot find or open {}, {} or {}.",
                    tried[0], tried[1], tried[2]
                ),
            );
            // UnZip matches a zipfile name with wildcards itself; when
            // nothing matches it says so after the usual line.
            if archive.contains(['*', '?', '[']) {
                say(cx, "\nNo zipfiles found.");
            }
        }
        return NOT_FOUND;
    };
    let mut zip = match zip::ZipArchive::new(Cursor::new(data)) {
        Ok(z) => z,
        Err(_) => {
            if quiet == 0 && matches!(mode, Mode::List | Mode::Test) {
                cx.outs(&format!("Archive:  {name}\n"));
            } else {
                say(cx, &format!("[{name}]"));
            }
            say(
                cx,
                "  End-of-central-directory signature not found.  Either this file is not\n  \
                 a zipfile, or it constitutes one disk of a multi-part archive.  In the\n  \
                 latter case the central directory and zipfile comment will be found on\n  \
                 the last disk(s) of this archive.",
            );
            if mode != Mode::Pipe {
                say(
                    cx,
                    &format!(
                        "{prog}:  cannot find zipfile directory in one of {} or\n{:indent$}{}, and cannot find {}, period.",
                        tried[0],
                        "",
                        tried[1],
                        tried[2],
                        indent = prog.len() + 3
                    ),
                );
            }
            return NOT_FOUND;
        }
    };
    let whole = members.is_empty() && excluded.is_empty();
    let names = members;
    let members: Vec<Pattern> = names.iter().map(|m| Pattern::new(m)).collect();
    let excluded: Vec<Pattern> = excluded.iter().map(|m| Pattern::new(m)).collect();
    let mut matched = vec![false; members.len()];
    let mut status = 0;
    let mut out = Vec::new();
    let (mut total, mut count) = (0u64, 0usize);
    if mode == Mode::Test && quiet == 0 {
        out.extend_from_slice(format!("Archive:  {name}\n").as_bytes());
    }
    if mode == Mode::List && quiet < 2 {
        if quiet == 0 {
            out.extend_from_slice(format!("Archive:  {name}\n").as_bytes());
        }
        out.extend_from_slice(b"  Length      Date    Time    Name\n");
        out.extend_from_slice(b"---------  ---------- -----   ----\n");
    }
    for i in 0..zip.len() {
        let mut entry = match zip.by_index(i) {
            Ok(e) => e,
            Err(e) => {
                cx.out(&std::mem::take(&mut out));
                cx.err(format_args!("unzip: {name}: member {}: {e}", i + 1));
                status = 2;
                continue;
            }
        };
        let Ok(member) = entry.name().map(|n| n.into_owned()) else {
            continue;
        };
        // UnZip's wildcards: `*` and `?` match `/` too.
        let mut hit = members.is_empty();
        for (k, m) in members.iter().enumerate() {
            if m.matches(&member, fold) {
                matched[k] = true;
                hit = true;
            }
        }
        if !hit || excluded.iter().any(|m| m.matches(&member, fold)) {
            continue;
        }
        match mode {
            Mode::Names => {
                out.extend_from_slice(member.as_bytes());
                out.push(b'\n');
            }
            Mode::List => {
                let when = entry.last_modified().map_or_else(
                    || "1980-00-00 00:00".to_owned(),
                    |t| {
                        format!(
                            "{:04}-{:02}-{:02} {:02}:{:02}",
                            t.year(),
                            t.month(),
                            t.day(),
                            t.hour(),
                            t.minute()
                        )
                    },
                );
                out.extend_from_slice(
                    format!("{:>9}  {when}   {member}\n", entry.size()).as_bytes(),
                );
                total += entry.size();
                count += 1;
            }
            Mode::Pipe if entry.is_dir() => {}
            Mode::Pipe | Mode::Test => {
                count += 1;
                if entry.encrypted() {
                    cx.out(&std::mem::take(&mut out));
                    cx.err(format_args!(
                        "unzip: {member}: encrypted members are not supported"
                    ));
                    status = 1;
                    continue;
                }
                let before = out.len();
                let read = entry.read_to_end(&mut out);
                // The zip crate checks the CRC as the member ends; UnZip
                // names both values.
                let crc = crc32fast::hash(&out[before..]);
                if mode == Mode::Test {
                    out.truncate(before);
                }
                let problem = match read {
                    Ok(_) => None,
                    Err(_) if crc != entry.crc32() => Some(format!(
                        "bad CRC {crc:08x}  (should be {:08x})",
                        entry.crc32()
                    )),
                    Err(e) => Some(format!("error: {e}")),
                };
                if problem.is_some() {
                    status = 2;
                }
                match (mode, problem) {
                    (Mode::Test, None) if quiet == 0 => {
                        out.extend_from_slice(
                            format!("    testing: {member:<22}   OK\n").as_bytes(),
                        );
                    }
                    (Mode::Test, Some(p)) if quiet == 0 => {
                        out.extend_from_slice(
                            format!("    testing: {member:<22}   {p}\n").as_bytes(),
                        );
                    }
                    (Mode::Test, Some(p)) => {
                        out.extend_from_slice(format!("{member:<22}  {p}\n").as_bytes());
                    }
                    (_, Some(p)) => {
                        cx.out(&std::mem::take(&mut out));
                        cx.err(format_args!("{member:<22}  {p}"));
                    }
                    (_, None) => {}
                }
            }
            Mode::Extract => {}
        }
        // Large archives: keep what is printed flowing.
        if out.len() > 1 << 16 {
            cx.out(&std::mem::take(&mut out));
        }
    }
    if mode == Mode::List && quiet < 2 {
        out.extend_from_slice(b"---------                     -------\n");
        out.extend_from_slice(
            format!("{total:>9}                     {count} {}\n", files(count)).as_bytes(),
        );
    }
    cx.out(&out);
    let unmatched: Vec<&String> = names
        .iter()
        .zip(&matched)
        .filter(|(_, m)| !**m)
        .map(|(a, _)| a)
        .collect();
    // As UnZip 6.00 does: a listing names no member it did not find, and
    // it and -Z1 fail only when no member matched; -p and -t fail on any.
    // -t says so on standard output, the others on standard error.
    for m in &unmatched {
        match mode {
            Mode::List => {}
            Mode::Test => cx.outs(&format!("caution: filename not matched:  {m}\n")),
            _ => cx.err(format_args!("caution: filename not matched:  {m}")),
        }
    }
    if mode == Mode::Test && quiet < 2 {
        let summary = if status != 0 || !unmatched.is_empty() {
            format!("At least one error was detected in {name}.")
        } else if whole {
            format!("No errors detected in compressed data of {name}.")
        } else {
            format!(
                "No errors detected in {name} for the {count} {} tested.",
                files(count)
            )
        };
        cx.outs(&format!("{summary}\n"));
    }
    let fails = match mode {
        Mode::Pipe | Mode::Test => !unmatched.is_empty(),
        _ => !names.is_empty() && !matched.iter().any(|m| *m),
    };
    if fails { NONE_MATCHED } else { status }
}

/// "1 file", "2 files".
fn files(count: usize) -> &'static str {
    if count == 1 { "file" } else { "files" }
}
