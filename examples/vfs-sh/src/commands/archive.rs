//! Reading archives in the documents: `zcat`, `gzip -dc`, `gunzip -c`
//! (the `flate2` crate) and `tar -t` / `tar -xO` (the `tar` crate), gzip
//! detected by its magic bytes as GNU tar does. Anything that would write
//! (compressing to a file, extracting to disk) is refused.

use std::io::Read;

use flate2::read::MultiGzDecoder;

use crate::exec::Cx;
use crate::fs::FsError;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Cap on what one decompression may produce: a small archive must not
/// expand into the script's whole memory.
const MAX_EXPANDED: u64 = 256 << 20;

fn gunzip(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    MultiGzDecoder::new(data)
        .take(MAX_EXPANDED + 1)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() as u64 > MAX_EXPANDED {
        return Err(format!("expands to more than {} MiB", MAX_EXPANDED >> 20));
    }
    Ok(out)
}

fn read(cx: &mut Cx<'_>, op: &str) -> Result<Vec<u8>, String> {
    cx.read_file_operand(op)
        .map_err(|e| e.strerror().to_owned())
}

/// The bytes of a gzip member that are not deflate data: its header (with
/// the optional extra field, name, comment and header CRC) and the 8-byte
/// trailer, which GNU `gzip -l` leaves out of the ratio.
fn gzip_framing(d: &[u8]) -> usize {
    let flags = d.get(3).copied().unwrap_or(0);
    let mut at = 10usize;
    if flags & 0x04 != 0 {
        let xlen = d
            .get(at..at + 2)
            .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])));
        at += 2 + xlen;
    }
    for bit in [0x08, 0x10] {
        if flags & bit != 0 {
            at += d
                .get(at..)
                .and_then(|r| r.iter().position(|&b| b == 0))
                .map_or(0, |n| n + 1);
        }
    }
    if flags & 0x02 != 0 {
        at += 2;
    }
    at + 8
}

/// GNU gzip's `display_ratio`: the space saved, `%5.1f%%`.
fn gzip_ratio(uncompressed: usize, compressed: usize) -> String {
    let saved = if uncompressed == 0 {
        0.0
    } else {
        100.0 * (uncompressed as f64 - compressed as f64) / uncompressed as f64
    };
    format!("{saved:5.1}%")
}

/// `gzip`/`gunzip`/`zcat`: decompression to standard output only.
/// `force` (`-f`): data that is not gzip's is copied as it is.
/// Reads a gzip operand: a name without one of the suffixes gzip knows
/// that is not there is looked for with `.gz` added, as gzip does (and an
/// error then names the `.gz`).
fn gzip_operand(cx: &mut Cx<'_>, op: &str) -> Result<Vec<u8>, (String, FsError)> {
    const SUFFIXES: [&str; 7] = [".gz", ".z", "-gz", "-z", "_z", ".tgz", ".taz"];
    match cx.read_file_operand(op) {
        Err(FsError::NotFound(_)) if op != "-" && !SUFFIXES.iter().any(|s| op.ends_with(s)) => {
            let gz = format!("{op}.gz");
            cx.read_file_operand(&gz).map_err(|e| (gz, e))
        }
        r => r.map_err(|e| (op.to_owned(), e)),
    }
}

fn decompress(cx: &mut Cx<'_>, cmd: &str, ops: &[String], force: bool) -> u8 {
    let ops = if ops.is_empty() {
        vec!["-".to_owned()]
    } else {
        ops.to_vec()
    };
    let mut status = 0;
    for op in &ops {
        let data = match gzip_operand(cx, op) {
            Ok(d) => d,
            Err((_, FsError::IsADirectory(_))) => {
                cx.err(format_args!("{cmd}: {op} is a directory -- ignored"));
                // A warning: status 2, unless an error came first.
                if status == 0 {
                    status = 2;
                }
                continue;
            }
            Err((name, e)) => {
                cx.err(format_args!("{cmd}: {name}: {}", e.strerror()));
                status = 1;
                continue;
            }
        };
        if !data.starts_with(&GZIP_MAGIC) {
            if force {
                cx.out(&data);
                continue;
            }
            // gzip starts this one message with a newline.
            cx.err(format_args!("\n{cmd}: {op}: not in gzip format"));
            status = 1;
            continue;
        }
        match gunzip(&data) {
            Ok(d) => cx.out(&d),
            Err(why) => {
                cx.err(format_args!("{cmd}: {op}: {why}"));
                status = 1;
            }
        }
    }
    status
}

/// `zgrep [GREP OPTION]... PATTERN [FILE]...`: grep over each file,
/// decompressed when it is gzip data, named as the file.
pub(crate) fn zgrep(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    // grep's options that take the next word as their value.
    const WITH_VALUE: [&str; 13] = [
        "-e",
        "-f",
        "-m",
        "-A",
        "-B",
        "-C",
        "-d",
        "-D",
        "--regexp",
        "--file",
        "--max-count",
        "--context",
        "--label",
    ];
    let mut opts = Vec::new();
    let mut pattern_given = false;
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if !files.is_empty() || a == "-" || !a.starts_with('-') {
            if pattern_given {
                files.push(a.clone());
            } else {
                opts.push(a.clone());
                pattern_given = true;
            }
            continue;
        }
        if a == "--" {
            files.extend(args[i..].iter().cloned());
            break;
        }
        if matches!(
            a.as_str(),
            "-r" | "-R" | "--recursive" | "--dereference-recursive"
        ) {
            cx.err(format_args!("zgrep: {a}: option not supported"));
            return 2;
        }
        opts.push(a.clone());
        if WITH_VALUE.contains(&a.as_str()) {
            if matches!(a.as_str(), "-e" | "-f" | "--regexp" | "--file") {
                pattern_given = true;
            }
            if let Some(v) = args.get(i) {
                opts.push(v.clone());
                i += 1;
            }
        } else if a.starts_with("-e") || a.starts_with("--regexp=") || a.starts_with("--file=") {
            pattern_given = true;
        }
    }
    if files.is_empty() {
        files.push("-".to_owned());
    }
    let many = files.len() > 1;
    let (mut matched, mut failed) = (false, false);
    for f in &files {
        let data = match cx.read_file_operand(f) {
            Ok(d) => d,
            Err(e) => {
                cx.err(format_args!("gzip: {f}: {}", e.strerror()));
                failed = true;
                continue;
            }
        };
        let data = if data.starts_with(&GZIP_MAGIC) {
            match gunzip(&data) {
                Ok(d) => d,
                Err(why) => {
                    cx.err(format_args!("gzip: {f}: {why}"));
                    failed = true;
                    continue;
                }
            }
        } else {
            data
        };
        // -H first, so that the script's own -h still wins.
        let mut argv = Vec::new();
        if many {
            argv.push("-H".to_owned());
        }
        argv.extend(opts.iter().cloned());
        if f != "-" {
            argv.push(format!("--label={f}"));
        }
        argv.push("-".to_owned());
        let status = super::grep::grep(&mut cx.nested(data), &argv);
        match status {
            0 => matched = true,
            1 => {}
            _ => failed = true,
        }
    }
    if failed {
        2
    } else if matched {
        0
    } else {
        1
    }
}

/// `zcat [FILE]...`
pub(crate) fn zcat(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let ops: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with('-') || *a == "-")
        .cloned()
        .collect();
    let force = args
        .iter()
        .any(|a| a == "--force" || (a.starts_with('-') && !a.starts_with("--") && a.contains('f')));
    decompress(cx, "gzip", &ops, force)
}

/// `zless`: no terminal, so the pager's input (`gzip -cdfq`): gzip data
/// decompressed, anything else as it is. less opens each file first and
/// says on standard output when one is missing; the status is 0.
pub(crate) fn zless(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    for op in args.iter().filter(|a| !a.starts_with('-') || *a == "-") {
        if op != "-" && cx.fs.metadata(op).is_err() {
            cx.outs(&format!("{op}: No such file or directory\n"));
            continue;
        }
        decompress(cx, "gzip", std::slice::from_ref(op), true);
    }
    0
}

/// `zmore`: as `zless`, each of several files under more's header; for a
/// missing file, gzip's message reaches standard output (zmore pipes
/// gzip's errors to the pager); status 0.
pub(crate) fn zmore(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let ops: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-') || *a == "-")
        .collect();
    for op in ops.iter().copied() {
        // Several files each come under more's header.
        if ops.len() > 1 {
            cx.outs(&format!("::::::::::::::\n{op}\n::::::::::::::\n"));
        }
        if op != "-" && cx.fs.metadata(op).is_err() {
            let gz = if op.ends_with(".gz") {
                op.clone()
            } else {
                format!("{op}.gz")
            };
            cx.outs(&format!("gzip: {gz}: No such file or directory\n"));
            continue;
        }
        decompress(cx, "gzip", std::slice::from_ref(op), true);
    }
    0
}

/// `gzip -d -c`, `gunzip -c`: to standard output; `-l` lists sizes.
pub(crate) fn gzip(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    gzip_like(cx, args, false)
}

pub(crate) fn gunzip_cmd(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    gzip_like(cx, args, true)
}

fn gzip_like(cx: &mut Cx<'_>, args: &[String], mut decode: bool) -> u8 {
    let mut stdout = false;
    let mut list = false;
    let mut force = false;
    let mut test = false;
    let mut verbose = false;
    let mut ops = Vec::new();
    for a in args {
        if a.starts_with("--") {
            match a.as_str() {
                "--test" => test = true,
                "--verbose" => verbose = true,
                "--decompress" | "--uncompress" => decode = true,
                "--stdout" | "--to-stdout" => stdout = true,
                "--list" => list = true,
                "--force" => force = true,
                _ => {}
            }
        } else if a.starts_with('-') && a.len() > 1 {
            for c in a[1..].chars() {
                match c {
                    'd' => decode = true,
                    'c' => stdout = true,
                    'l' => list = true,
                    'f' => force = true,
                    't' => test = true,
                    'v' => verbose = true,
                    _ => {}
                }
            }
        } else {
            ops.push(a.clone());
        }
    }
    if test {
        // `-t`: each file decompressed and dropped; `-v` says OK for each.
        let ops = if ops.is_empty() {
            vec!["-".to_owned()]
        } else {
            ops
        };
        let mut status = 0;
        for op in &ops {
            let shown = if op == "-" { "stdin" } else { op.as_str() };
            match gzip_operand(cx, op) {
                Ok(d) => match gunzip(&d) {
                    Ok(_) => {
                        if verbose {
                            cx.err(format_args!("{shown}:\t OK"));
                        }
                    }
                    Err(why) => {
                        cx.err(format_args!("\ngzip: {shown}: {why}"));
                        status = 1;
                    }
                },
                Err((name, e)) => {
                    cx.err(format_args!("gzip: {name}: {}", e.strerror()));
                    status = 1;
                }
            }
        }
        return status;
    }
    if list {
        // The header comes with the first file listed.
        const HEADER: &str = "         compressed        uncompressed  ratio uncompressed_name\n";
        let mut out = String::new();
        let mut status = 0;
        let mut listed = false;
        let ops = if ops.is_empty() {
            vec!["-".to_owned()]
        } else {
            ops
        };
        for op in &ops {
            let found = gzip_operand(cx, op);
            // The name read: the operand, or the operand with `.gz`.
            let name = match &found {
                Err((n, _)) => n.clone(),
                Ok(_) if op != "-" && cx.fs.metadata(op).is_err() => format!("{op}.gz"),
                Ok(_) => op.clone(),
            };
            match found
                .map_err(|(_, e)| e.strerror().to_owned())
                .and_then(|d| gunzip(&d).map(|u| (d.len(), u.len(), gzip_framing(&d))))
            {
                Ok((c, u, framing)) => {
                    if !listed {
                        out.push_str(HEADER);
                        listed = true;
                    }
                    let op = &name;
                    let name = op.strip_suffix(".gz").unwrap_or(op);
                    out.push_str(&format!(
                        "{c:>19} {u:>19} {} {name}\n",
                        gzip_ratio(u, c.saturating_sub(framing))
                    ));
                }
                Err(why) => {
                    cx.outs(&std::mem::take(&mut out));
                    cx.err(format_args!("gzip: {name}: {why}"));
                    status = 1;
                }
            }
        }
        cx.outs(&out);
        return status;
    }
    if !decode {
        cx.err("gzip: compressing is not supported: vfs-sh reads documents and writes none (use gzip -dc or zcat to read .gz files)");
        return 1;
    }
    if !stdout && !ops.is_empty() && ops.iter().any(|o| o != "-") {
        cx.err("gzip: decompressing in place would write a file: the filesystem is read-only (use gzip -dc or zcat)");
        return 1;
    }
    // `-f` with `-c` copies data that is not gzip's, as gzip does.
    decompress(cx, "gzip", &ops, force && stdout)
}

fn mode_string(kind: tar::EntryType, mode: u32) -> String {
    let t = match kind {
        tar::EntryType::Directory => 'd',
        tar::EntryType::Symlink => 'l',
        tar::EntryType::Link => 'h',
        _ => '-',
    };
    let mut s = String::from(t);
    for shift in [6, 3, 0] {
        let bits = (mode >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        s.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    s
}

/// `tar -t` and `tar -x -O` over an archive in the documents (`-z`, or
/// gzip detected), with member names or directories to select.
pub(crate) fn tar(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut mode = None;
    let mut verbose = false;
    let mut to_stdout = false;
    let mut file = None;
    let mut members = Vec::new();
    let mut wildcards = false;
    // `-z`: GNU tar runs `gzip -d` on the archive, whatever it holds.
    let mut gzip = false;
    let mut i = 0;
    // The first word may be old-style bundled options without a dash.
    let mut words: Vec<String> = args.to_vec();
    if let Some(first) = words.first()
        && !first.starts_with('-')
        && first.chars().all(|c| "ctxvzfjJOpPk".contains(c))
    {
        words[0] = format!("-{first}");
    }
    while let Some(a) = words.get(i) {
        i += 1;
        match a.as_str() {
            "--list" => mode = Some('t'),
            "--extract" | "--get" => mode = Some('x'),
            "--create" | "--append" | "--update" | "--delete" => mode = Some('c'),
            "--verbose" => verbose = true,
            "--to-stdout" => to_stdout = true,
            "--wildcards" => wildcards = true,
            "--no-wildcards" => wildcards = false,
            "--gzip" | "--gunzip" | "--ungzip" => gzip = true,
            "--auto-compress" | "--no-same-owner" => {}
            "--file" => {
                file = words.get(i).cloned();
                i += 1;
            }
            s if s.starts_with("--file=") => file = Some(s[7..].to_owned()),
            "-C" | "--directory" => i += 1,
            s if s.starts_with("--") => {}
            s if s.starts_with('-') && s.len() > 1 => {
                let cs: Vec<char> = s[1..].chars().collect();
                for (k, c) in cs.iter().enumerate() {
                    match c {
                        't' => mode = Some('t'),
                        'x' => mode = Some('x'),
                        'c' | 'r' | 'u' => mode = Some('c'),
                        'v' => verbose = true,
                        'O' => to_stdout = true,
                        'z' => gzip = true,
                        'p' | 'P' | 'k' => {}
                        'j' | 'J' => {
                            cx.err("tar: bzip2 and xz archives are not supported (gzip is)");
                            return 2;
                        }
                        'f' => {
                            let rest: String = cs[k + 1..].iter().collect();
                            if rest.is_empty() {
                                file = words.get(i).cloned();
                                i += 1;
                            } else {
                                file = Some(rest);
                            }
                            break;
                        }
                        'C' => {
                            i += 1;
                        }
                        _ => {}
                    }
                }
            }
            _ => members.push(a.clone()),
        }
    }
    match mode {
        None => {
            cx.err(
                "tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options",
            );
            cx.err("Try 'tar --help' or 'tar --usage' for more information.");
            return 2;
        }
        Some('c') => {
            cx.err("tar: creating or changing an archive would write: the filesystem is read-only");
            return 2;
        }
        _ => {}
    }
    // Extracting to files goes as GNU tar's does on a read-only mount: the
    // members are read (and named, with `-v`), and each fails to be
    // written.
    let refused = mode == Some('x') && !to_stdout;
    let file = file.unwrap_or_else(|| "-".to_owned());
    let mut data = match read(cx, &file) {
        Ok(d) => d,
        Err(why) if gzip => {
            // The child that would feed gzip is what fails to open it.
            cx.err(format_args!("tar (child): {file}: Cannot open: {why}"));
            cx.err("tar (child): Error is not recoverable: exiting now");
            cx.err("tar: Child returned status 2");
            cx.err("tar: Error is not recoverable: exiting now");
            return 2;
        }
        Err(why) => {
            cx.err(format_args!("tar: {file}: Cannot open: {why}"));
            cx.err("tar: Error is not recoverable: exiting now");
            return 2;
        }
    };
    if gzip && !data.starts_with(&GZIP_MAGIC) {
        cx.err(if data.is_empty() {
            "\ngzip: stdin: unexpected end of file"
        } else {
            "\ngzip: stdin: not in gzip format"
        });
        cx.err("tar: Child returned status 1");
        cx.err("tar: Error is not recoverable: exiting now");
        return 2;
    }
    if data.starts_with(&GZIP_MAGIC) {
        data = match gunzip(&data) {
            Ok(d) => d,
            Err(why) => {
                cx.err(format_args!("tar: {file}: {why}"));
                return 2;
            }
        };
    }
    // A member operand selects a name and what is below it; with
    // `--wildcards` it is a glob whose `*` crosses `/`, matched against the
    // name and each of its leading directories (fnmatch's
    // `FNM_LEADING_DIR`, as GNU tar does).
    let globs: Vec<crate::glob::Pattern> = members
        .iter()
        .map(|m| crate::glob::Pattern::new(m.trim_end_matches('/')))
        .collect();
    let selects = |k: usize, name: &str| {
        let name = name.trim_end_matches('/');
        if wildcards {
            let leading = name.match_indices('/').map(|(at, _)| &name[..at]);
            std::iter::once(name)
                .chain(leading)
                .any(|n| globs[k].matches(n, false))
        } else {
            let m = members[k].trim_end_matches('/');
            name == m || name.starts_with(&format!("{m}/"))
        }
    };
    let wanted = |name: &str| members.is_empty() || (0..members.len()).any(|k| selects(k, name));
    if data.is_empty() {
        // An empty archive is no archive to GNU tar (the tar crate reads
        // it as one without members).
        cx.err("tar: This does not look like a tar archive");
        cx.err("tar: Exiting with failure status due to previous errors");
        return 2;
    }
    let mut archive = tar::Archive::new(data.as_slice());
    let entries = match archive.entries() {
        Ok(e) => e,
        Err(_) => {
            cx.err("tar: This does not look like a tar archive");
            return 2;
        }
    };
    let mut out = Vec::new();
    let mut seen = vec![false; members.len()];
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(_) => {
                cx.out(&out);
                cx.err("tar: This does not look like a tar archive");
                cx.err("tar: Exiting with failure status due to previous errors");
                return 2;
            }
        };
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !wanted(&name) {
            continue;
        }
        for (k, seen) in seen.iter_mut().enumerate() {
            *seen |= selects(k, &name);
        }
        let h = entry.header();
        if mode == Some('t') {
            if verbose {
                let kind = h.entry_type();
                let perm = mode_string(kind, h.mode().unwrap_or(0o644));
                let user = h
                    .username()
                    .ok()
                    .flatten()
                    .map_or_else(|| h.uid().unwrap_or(0).to_string(), str::to_owned);
                let group = h
                    .groupname()
                    .ok()
                    .flatten()
                    .map_or_else(|| h.gid().unwrap_or(0).to_string(), str::to_owned);
                let size = h.size().unwrap_or(0).to_string();
                let ug = format!("{user}/{group}");
                let pad = 19usize.saturating_sub(ug.len() + size.len()).max(1);
                let t =
                    std::time::UNIX_EPOCH + std::time::Duration::from_secs(h.mtime().unwrap_or(0));
                let c = crate::time::civil(t);
                let link = match kind {
                    tar::EntryType::Symlink => entry
                        .link_name()
                        .ok()
                        .flatten()
                        .map(|l| format!(" -> {}", l.to_string_lossy()))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                out.extend_from_slice(
                    format!(
                        "{perm} {ug}{}{size} {}-{:02}-{:02} {:02}:{:02} {name}{link}\n",
                        " ".repeat(pad),
                        c.year,
                        c.month,
                        c.day,
                        c.hour,
                        c.minute
                    )
                    .as_bytes(),
                );
            } else {
                out.extend_from_slice(name.as_bytes());
                out.push(b'\n');
            }
        } else if refused {
            if verbose {
                out.extend_from_slice(name.as_bytes());
                out.push(b'\n');
            }
            cx.out(&std::mem::take(&mut out));
            let what = if h.entry_type().is_dir() {
                "Cannot mkdir"
            } else {
                "Cannot open"
            };
            cx.err(format_args!(
                "tar: {}: {what}: Read-only file system",
                name.trim_end_matches('/')
            ));
        } else {
            if verbose {
                cx.err(&name);
            }
            if h.entry_type().is_file() {
                let _ = (&mut entry).take(MAX_EXPANDED).read_to_end(&mut out);
            }
        }
        if out.len() > 64 << 10 {
            cx.out(&std::mem::take(&mut out));
        }
    }
    cx.out(&out);
    let mut status = if refused { 2 } else { 0 };
    for (k, m) in members.iter().enumerate() {
        if !seen[k] {
            cx.err(format_args!("tar: {m}: Not found in archive"));
            status = 2;
        }
    }
    if status != 0 {
        cx.err("tar: Exiting with failure status due to previous errors");
    }
    if refused {
        cx.err("note: the filesystem is read-only: tar -xOf prints members, tar -tf lists them");
    }
    status
}
