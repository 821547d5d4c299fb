//! `ls [-l -g -o -n -a -A -f -U -t -S -X -v -c -u -r -1 -m -R -h -d -s -i -Q]
//! [--group-directories-first] [PATH]...`, one entry per line as GNU ls
//! prints when its output is not a terminal (`-m`: comma separated, 80
//! columns). `-U` and `-f` keep the backend's order (readdir order for a
//! local directory, as GNU shows it).
//!
//! File operands are listed first, then each directory with a `name:`
//! header when there are several operands (or `-R`). In `-l` mode entries
//! show their permission bits (a local mount's own; 0644 and 0755 where the
//! backend keeps none), Linux's link counts (a directory's is 2 plus its
//! subdirectories), and owner and group `root` (there are no real owners);
//! directories are 4096 bytes.

use std::time::SystemTime;

use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::{Kind, Meta};
use crate::time::ls_date;

/// The options that shape a listing.
#[derive(Debug, Clone, Copy)]
struct Opts {
    all: bool,
    almost_all: bool,
    long: bool,
    by_time: bool,
    by_size: bool,
    reverse: bool,
    recursive: bool,
    human: bool,
    dirs_as_files: bool,
    /// `-s`: allocated size in 1 KiB blocks before each name.
    blocks: bool,
    /// `-i`: the inode number (the document store has none: 0).
    inode: bool,
    /// `--time-style`: 0 locale (default), 1 long-iso, 2 full-iso, 3 iso.
    time_style: u8,
    /// `-U`/`-f`: no sorting.
    unsorted: bool,
    /// `-X`: by extension.
    by_ext: bool,
    /// `-v`: by version.
    by_version: bool,
    dirs_first: bool,
    /// `-m`: names separated by commas.
    commas: bool,
    /// `-g`/`-o`/`-G`: which of owner and group the long format shows.
    owner: bool,
    group: bool,
    /// `-n`: numeric ids.
    numeric: bool,
    /// `-Q`: names in double quotes.
    quote: bool,
}

/// 1 KiB blocks a size takes on a filesystem of 4 KiB blocks.
fn kib_blocks(len: u64) -> u64 {
    len.div_ceil(4096) * 4
}

/// One line of a listing.
#[derive(Debug, Clone)]
struct Item {
    /// What to print: the operand as written, or the entry's name.
    name: String,
    /// Where it is, for its permission bits.
    path: String,
    kind: Kind,
    len: u64,
    modified: Option<SystemTime>,
}

impl Item {
    fn from_meta(name: &str, m: &Meta) -> Item {
        Item {
            name: name.to_owned(),
            path: m.path.clone(),
            kind: m.kind,
            len: m.len,
            modified: m.modified,
        }
    }
}

/// GNU's `-h` sizes: powers of 1024, one decimal below 10, rounded up.
pub(crate) fn human(n: u64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return n.to_string();
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v < 10.0 {
        let r = (v * 10.0).ceil() / 10.0;
        if r < 10.0 {
            return format!("{r:.1}{}", UNITS[u]);
        }
        v = r;
    }
    let r = v.ceil();
    if r >= 1024.0 && u + 1 < UNITS.len() {
        return format!("1.0{}", UNITS[u + 1]);
    }
    format!("{}{}", r as u64, UNITS[u])
}

fn sort(items: &mut [Item], o: Opts) {
    if o.unsorted {
        return;
    }
    let ext = |n: &str| match n.rfind('.') {
        Some(k) if k > 0 => n[k..].to_owned(),
        _ => String::new(),
    };
    items.sort_by(|a, b| {
        if o.dirs_first {
            let (ad, bd) = (a.kind == Kind::Dir, b.kind == Kind::Dir);
            if ad != bd {
                return bd.cmp(&ad);
            }
        }
        let by_name = a.name.cmp(&b.name);
        let ord = if o.by_version {
            super::sort::version_cmp(a.name.as_bytes(), b.name.as_bytes())
        } else if o.by_ext {
            ext(&a.name).cmp(&ext(&b.name)).then(by_name)
        } else if o.by_time {
            b.modified.cmp(&a.modified).then(by_name)
        } else if o.by_size {
            b.len.cmp(&a.len).then(by_name)
        } else {
            by_name
        };
        if o.reverse { ord.reverse() } else { ord }
    });
}

/// Prints a block of items: names, or long lines with aligned columns.
fn print_block(cx: &mut Cx<'_>, items: &[Item], o: Opts, total: bool) {
    let mut s = String::new();
    let block_col = |it: &Item| {
        if o.human {
            human(kib_blocks(it.len) * 1024)
        } else {
            kib_blocks(it.len).to_string()
        }
    };
    let bw = items.iter().map(|i| block_col(i).len()).max().unwrap_or(1);
    let prefix = |it: &Item| {
        let mut p = String::new();
        if o.inode {
            p.push_str("0 ");
        }
        if o.blocks {
            p.push_str(&format!("{:>bw$} ", block_col(it)));
        }
        p
    };
    let label = |it: &Item| {
        if o.quote {
            format!("\"{}\"", it.name)
        } else {
            it.name.clone()
        }
    };
    if o.commas && !o.long {
        // GNU's print_with_separator: a line breaks before a name that
        // would reach column 80.
        let mut pos = 0usize;
        for (i, it) in items.iter().enumerate() {
            let text = format!("{}{}", prefix(it), label(it));
            let len = text.chars().count();
            if i > 0 {
                if pos + len + 2 < 80 {
                    s.push_str(", ");
                    pos += 2;
                } else {
                    s.push_str(",\n");
                    pos = 0;
                }
            }
            s.push_str(&text);
            pos += len;
        }
        if !items.is_empty() {
            s.push('\n');
        }
        cx.outs(&s);
        return;
    }
    if !o.long {
        if total && o.blocks {
            let sum: u64 = items.iter().map(|i| kib_blocks(i.len)).sum();
            let t = if o.human {
                human(sum * 1024)
            } else {
                sum.to_string()
            };
            s.push_str(&format!("total {t}\n"));
        }
        for it in items {
            s.push_str(&prefix(it));
            s.push_str(&label(it));
            s.push('\n');
        }
        cx.outs(&s);
        return;
    }
    let size = |it: &Item| {
        if o.human {
            human(it.len)
        } else {
            it.len.to_string()
        }
    };
    if total {
        let blocks: u64 = items.iter().map(|i| kib_blocks(i.len)).sum();
        let t = if o.human {
            human(blocks * 1024)
        } else {
            blocks.to_string()
        };
        s.push_str(&format!("total {t}\n"));
    }
    let width = items.iter().map(|i| size(i).len()).max().unwrap_or(1);
    let links: Vec<u64> = items
        .iter()
        .map(|it| super::links(cx, &it.path, it.kind))
        .collect();
    let lw = links.iter().map(|n| n.to_string().len()).max().unwrap_or(1);
    let now = cx.env.now;
    for (it, n) in items.iter().zip(&links) {
        let bits = cx.fs.mode(&it.path).unwrap_or(it.kind.default_mode());
        let mode = crate::fs::mode_string(it.kind, bits);
        let date = match o.time_style {
            0 => ls_date(it.modified, now),
            style => iso_date(it.modified, now, style),
        };
        let id = if o.numeric { "0" } else { super::OWNER };
        let mut who = String::new();
        for (on, name) in [(o.owner, id), (o.group, id)] {
            if on {
                who.push_str(name);
                who.push(' ');
            }
        }
        s.push_str(&format!(
            "{}{mode} {n:>lw$} {who}{:>width$} {date} {}\n",
            prefix(it),
            size(it),
            label(it)
        ));
    }
    cx.outs(&s);
}

/// `--time-style=long-iso|full-iso|iso` dates.
fn iso_date(t: Option<SystemTime>, now: SystemTime, style: u8) -> String {
    let Some(t) = t else {
        return "?".to_owned();
    };
    let c = crate::time::civil(t);
    match style {
        1 => format!(
            "{}-{:02}-{:02} {:02}:{:02}",
            c.year, c.month, c.day, c.hour, c.minute
        ),
        2 => format!(
            "{}-{:02}-{:02} {:02}:{:02}:{:02}.{:09} +0000",
            c.year, c.month, c.day, c.hour, c.minute, c.second, c.nanos
        ),
        _ => {
            let recent = now
                .duration_since(t)
                .is_ok_and(|d| d.as_secs() < 31_556_952 / 2);
            if recent {
                format!("{:02}-{:02} {:02}:{:02}", c.month, c.day, c.hour, c.minute)
            } else {
                format!("{}-{:02}-{:02} ", c.year, c.month, c.day)
            }
        }
    }
}

/// Lists one directory; returns its subdirectories (in listed order), or
/// `None` if it could not be read.
fn list_one(
    cx: &mut Cx<'_>,
    path: &str,
    o: Opts,
    header: bool,
    first: &mut bool,
) -> Option<Vec<String>> {
    let mut lead = String::new();
    if !*first {
        lead.push('\n');
    }
    if header {
        lead.push_str(path);
        lead.push_str(":\n");
    }
    let entries = match cx.fs.read_dir(path) {
        Ok(e) => e,
        Err(e) => {
            cx.err(format_args!(
                "ls: cannot open directory {}: {}",
                super::quote::quote(path, true),
                e.strerror()
            ));
            return None;
        }
    };
    cx.outs(&lead);
    *first = false;
    let mut items: Vec<Item> = entries
        .into_iter()
        .filter(|e| o.all || o.almost_all || !e.name.starts_with('.'))
        .map(|e| Item {
            path: super::join(path, &e.name),
            name: e.name,
            kind: e.kind,
            len: e.len,
            modified: e.modified,
        })
        .collect();
    if o.all {
        // Unsorted (`-f`), `.` and `..` come first, where the kernel
        // usually returns them.
        let at = if o.unsorted { 0 } else { items.len() };
        for dot in ["..", "."] {
            let m = cx.fs.metadata(&super::join(path, dot));
            items.insert(
                at,
                match m {
                    Ok(m) => Item {
                        name: dot.to_owned(),
                        path: m.path,
                        kind: Kind::Dir,
                        len: crate::fs::DIR_SIZE,
                        modified: m.modified,
                    },
                    Err(_) => Item {
                        name: dot.to_owned(),
                        path: super::join(path, dot),
                        kind: Kind::Dir,
                        len: crate::fs::DIR_SIZE,
                        modified: None,
                    },
                },
            );
        }
    }
    // `..` of a mount is the virtual root, which keeps no time: it shows
    // the directory's own, so that the columns stay in place.
    let here = items
        .iter()
        .find(|i| i.name == ".")
        .and_then(|i| i.modified);
    for it in items
        .iter_mut()
        .filter(|i| i.name == ".." && i.modified.is_none())
    {
        it.modified = here;
    }
    sort(&mut items, o);
    print_block(cx, &items, o, true);
    Some(
        items
            .iter()
            .filter(|it| it.kind == Kind::Dir && it.name != "." && it.name != "..")
            .map(|it| super::join(path, &it.name))
            .collect(),
    )
}

/// Lists a directory operand and, with `-R`, every directory below it
/// (depth first, each after its parent, as GNU does; iteratively, so deep
/// trees cannot exhaust the stack). Returns false if one could not be read.
fn list_dir(cx: &mut Cx<'_>, path: &str, o: Opts, header: bool, first: &mut bool) -> bool {
    let mut ok = true;
    let mut pending = vec![path.to_owned()];
    while let Some(dir) = pending.pop() {
        match list_one(cx, &dir, o, header, first) {
            Some(subdirs) if o.recursive => pending.extend(subdirs.into_iter().rev()),
            Some(_) => {}
            None => ok = false,
        }
    }
    ok
}

/// `ls`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('l', "", "l"),
        flag('a', "all", "a"),
        flag('A', "almost-all", "A"),
        flag('t', "", "t"),
        flag('S', "", "S"),
        flag('r', "reverse", "r"),
        flag('1', "", "1"),
        flag('R', "recursive", "R"),
        flag('h', "human-readable", "h"),
        flag('d', "directory", "d"),
        flag('F', "", "F"),
        flag('p', "", "p"),
        flag('C', "", "C"),
        flag('s', "size", "s"),
        flag('i', "inode", "i"),
        value('\0', "time-style", "time-style"),
        optional_color(),
        flag('U', "", "U"),
        flag('f', "", "f"),
        flag('X', "", "X"),
        flag('v', "", "v"),
        flag('c', "", "c"),
        flag('u', "", "u"),
        flag('m', "", "m"),
        flag('g', "", "g"),
        flag('o', "", "o"),
        flag('G', "no-group", "G"),
        flag('n', "numeric-uid-gid", "n"),
        flag('Q', "quote-name", "Q"),
        flag('\0', "group-directories-first", "dirsfirst"),
        // Links are resolved by the document filesystem; names are shown
        // as they are (no terminal to protect).
        flag('L', "dereference", "L"),
        flag('H', "dereference-command-line", "L"),
        flag('b', "escape", "b"),
        flag('q', "hide-control-chars", "b"),
        flag('N', "literal", "b"),
        flag('\0', "full-time", "full-time"),
    ];
    let p = match options(cx, "ls", args, SPEC, 2) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let sort_key = p.last_of(&["t", "S", "X", "v", "U"]);
    let long = p.has("l") || p.has("g") || p.has("o") || p.has("n") || p.has("full-time");
    let o = Opts {
        all: p.has("a") || p.has("f"),
        almost_all: p.has("A"),
        long: long && !p.has("f"),
        // `-c`/`-u` sort by (change, access) time unless `-l` shows it.
        by_time: sort_key == Some("t")
            || (sort_key.is_none() && !long && (p.has("c") || p.has("u"))),
        by_size: sort_key == Some("S"),
        by_ext: sort_key == Some("X"),
        by_version: sort_key == Some("v"),
        unsorted: sort_key == Some("U") || p.has("f"),
        dirs_first: p.has("dirsfirst"),
        commas: p.last_of(&["m", "1", "l"]) == Some("m"),
        owner: !p.has("g"),
        group: !(p.has("o") || p.has("G")),
        numeric: p.has("n"),
        quote: p.has("Q"),
        reverse: p.has("r"),
        recursive: p.has("R") && !p.has("d"),
        human: p.has("h"),
        dirs_as_files: p.has("d"),
        blocks: p.has("s"),
        inode: p.has("i"),
        time_style: match p
            .value("time-style")
            .map(|s| s.trim_start_matches("posix-"))
        {
            Some("long-iso") => 1,
            Some("full-iso") => 2,
            Some("iso") => 3,
            _ if p.has("full-time") => 2,
            _ => 0,
        },
    };
    let operands = if p.operands.is_empty() {
        vec![".".to_owned()]
    } else {
        p.operands.clone()
    };
    let mut status = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for op in &operands {
        match cx.fs.metadata(op) {
            Ok(m) if m.is_dir() && !o.dirs_as_files => dirs.push(Item::from_meta(op, &m)),
            Ok(m) => files.push(Item::from_meta(op, &m)),
            Err(e) => {
                cx.err(format_args!(
                    "ls: cannot access {}: {}",
                    super::quote::quote(op, true),
                    e.strerror()
                ));
                status = 2;
            }
        }
    }
    sort(&mut files, o);
    sort(&mut dirs, o);
    let mut first = true;
    if !files.is_empty() {
        print_block(cx, &files, o, false);
        first = false;
    }
    let header = operands.len() > 1 || o.recursive;
    for d in &dirs {
        if !list_dir(cx, &d.name, o, header, &mut first) {
            status = status.max(if o.recursive { 1 } else { 2 });
        }
    }
    status
}

/// `--color[=WHEN]` is accepted and ignored (output is never colored).
const fn optional_color() -> super::Spec {
    super::optional("color", "color")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        let table = [
            (0, "0"),
            (1023, "1023"),
            (1024, "1.0K"),
            (1025, "1.1K"),
            (1536, "1.5K"),
            (10 * 1024, "10K"),
            (10 * 1024 + 1, "11K"),
            (1_363_456, "1.4M"),
            (1024 * 1024 - 1, "1.0M"),
        ];
        for (n, want) in table {
            assert_eq!(human(n), want, "{n}");
        }
    }
}
