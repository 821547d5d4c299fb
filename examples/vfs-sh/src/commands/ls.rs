//! `ls [-l -g -o -n -a -A -f -U -t -S -X -v -c -u -r -1 -m -C -x -R -h -d -s -i -Q -p -F]
//! [--group-directories-first] [-I PATTERN] [--hide PATTERN] [-B] [PATH]...`, one entry per line as GNU ls
//! prints when its output is not a terminal (`-m`: comma separated; `-C`
//! down and `-x` across in GNU's tab-padded columns; both 80 wide, or
//! `-w N`, or `$COLUMNS`). `-p` and `-F` mark directories (and `-F`
//! executables) as GNU does. `-U` and `-f` keep the backend's order (readdir order for a
//! local directory, as GNU shows it).
//!
//! File operands are listed first, then each directory with a `name:`
//! header when there are several operands (or `-R`). In `-l` mode entries
//! show their permission bits (a local mount's own; 0644 and 0755 where the
//! backend keeps none), Linux's link counts (a directory's is 2 plus its
//! subdirectories), and owner and group `root` (there are no real owners);
//! directories are 4096 bytes.

use std::time::SystemTime;

use super::quote::{Quoting, Style};
use super::size::Scale;
use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::{Kind, Meta};
use crate::glob::Pattern;
use crate::time::ls_date;

/// How names are laid out when the listing is not long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// One per line (`-1`, and the default off a terminal).
    Lines,
    /// `-m`: separated by commas.
    Commas,
    /// `-C`: in columns, filled down.
    Columns,
    /// `-x`: in columns, filled across.
    Across,
}

/// What `-p`, `--file-type` and `-F` append to a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Indicator {
    None,
    /// `-p`: `/` after a directory.
    Slash,
    /// `--file-type`: `/` (and `@ | =` for kinds the documents never have).
    FileType,
    /// `-F`: as `--file-type`, and `*` after an executable document.
    Classify,
}

/// The options that shape a listing.
#[derive(Debug, Clone, Copy)]
struct Opts<'a> {
    all: bool,
    almost_all: bool,
    long: bool,
    by_time: bool,
    by_size: bool,
    reverse: bool,
    recursive: bool,
    /// The size column of `-l` (`-h`, `--si`, `--block-size`).
    size_scale: Scale,
    /// The `-s` column and the totals.
    block_scale: Scale,
    dirs_as_files: bool,
    /// `-s`: allocated size in 1 KiB blocks before each name.
    blocks: bool,
    /// `-i`: the inode number (0 where the backend keeps none).
    inode: bool,
    /// `-u` (`a`), `-c` (`c`) or `--time=birth` (`b`): the time shown and
    /// sorted by, instead of the modification time (`m`).
    time: u8,
    /// `--time-style`: 0 locale (default), 1 long-iso, 2 full-iso, 3 iso,
    /// 4 the `+FORMAT` in `time_format`.
    time_style: u8,
    time_format: &'a str,
    /// `-U`/`-f`: no sorting.
    unsorted: bool,
    /// `-X`: by extension.
    by_ext: bool,
    /// `-v`: by version.
    by_version: bool,
    /// `--sort=width`: shortest names first.
    by_width: bool,
    dirs_first: bool,
    layout: Layout,
    /// `-w`, else `COLUMNS`, else 80; 0 is no limit.
    width: usize,
    indicator: Indicator,
    /// `-g`/`-o`/`-G`: which of owner and group the long format shows.
    owner: bool,
    group: bool,
    /// `--author`: the author's column (the owner's name) after the group.
    author: bool,
    /// `-Z`: each name's security context, which the documents have none
    /// of: GNU's `?`.
    context: bool,
    /// `-n`: numeric ids.
    numeric: bool,
    /// `--quoting-style`, `-Q`, `-b`, `-N`, `-q`: how names are written.
    quoting: Quoting,
    /// `-I`/`--ignore` patterns, with `--hide` ones unless `-a`/`-A`, and
    /// `*~` for `-B`: the directory entries not listed (operands always are).
    ignore: &'a [Pattern],
    /// `--color=always`: names are coloured; the cell says whether the
    /// reset GNU writes before the first coloured name has been written.
    color: Option<&'a std::cell::Cell<bool>>,
}

/// Whether `-I`, `--hide` or `-B` leaves a directory entry out: GNU matches
/// with `fnmatch(FNM_PERIOD)`, so a leading `.` must be matched by a `.`.
fn ignored(name: &str, patterns: &[Pattern]) -> bool {
    patterns
        .iter()
        .any(|p| (!name.starts_with('.') || p.starts_with_dot()) && p.matches(name, false))
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
    /// The time shown and sorted by: modification, or with `-u`/`-c`
    /// access or status change.
    modified: Option<SystemTime>,
    /// The inode number, for `-i` (0 until looked up, or where none is kept).
    inode: u64,
}

impl Item {
    fn from_meta(name: &str, m: &Meta) -> Item {
        Item {
            name: name.to_owned(),
            path: m.path.clone(),
            kind: m.kind,
            len: m.len,
            modified: m.modified,
            inode: 0,
        }
    }
}

fn sort(items: &mut [Item], o: Opts<'_>) {
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
        } else if o.by_width {
            a.name
                .chars()
                .count()
                .cmp(&b.name.chars().count())
                .then(by_name)
        } else {
            by_name
        };
        if o.reverse { ord.reverse() } else { ord }
    });
}

/// Looks up what the options show beyond metadata: the inode (`-i`) and
/// the time of access (`-u`) or status change (`-c`).
fn annotate(cx: &mut Cx<'_>, items: &mut [Item], o: Opts<'_>) {
    if !o.inode && o.time == b'm' {
        return;
    }
    for it in items {
        let Ok(a) = cx.fs.attributes(&it.path) else {
            continue;
        };
        it.inode = a.inode;
        match o.time {
            b'a' => it.modified = a.accessed,
            b'c' => it.modified = a.changed,
            // No birth time kept: GNU shows the modification time then.
            b'b' => it.modified = a.created.or(it.modified),
            _ => {}
        }
    }
}

/// Prints a block of items: names, or long lines with aligned columns.
/// The columns are as wide as `items` and `also` need: GNU measures the
/// operands that are directories with the files named beside them, before
/// it lists the directories apart.
fn print_block(cx: &mut Cx<'_>, items: &[Item], also: &[Item], o: Opts<'_>, total: bool) {
    let mut s = String::new();
    let block_col = |it: &Item| o.block_scale.render(kib_blocks(it.len) * 1024);
    let all = || items.iter().chain(also);
    let bw = all().map(|i| block_col(i).len()).max().unwrap_or(1);
    let iw = if o.layout == Layout::Commas && !o.long {
        0
    } else {
        all().map(|i| i.inode.to_string().len()).max().unwrap_or(1)
    };
    let prefix = |it: &Item| {
        let mut p = String::new();
        if o.inode {
            p.push_str(&format!("{:>iw$} ", it.inode));
        }
        if o.blocks {
            p.push_str(&format!("{:>bw$} ", block_col(it)));
        }
        if o.context && !o.long {
            p.push_str("? ");
        }
        p
    };
    let marks: Vec<&str> = items.iter().map(|it| indicator(cx, it, o)).collect();
    let colors: Vec<Option<&str>> = items
        .iter()
        .map(|it| o.color.and_then(|_| color_of(cx, it)))
        .collect();
    // GNU lines names up when some need quotes and others not, in long
    // listings and columns, for the shell styles: a bare name gets a space
    // where the others have their opening quote.
    let aligned = (o.long
        || (matches!(o.layout, Layout::Columns | Layout::Across) && o.width != 0))
        && matches!(
            o.quoting.style,
            Style::Shell | Style::ShellEscape | Style::CMaybe
        )
        && items.iter().any(|it| o.quoting.quotes(&it.name));
    let label = |k: usize| {
        let it = &items[k];
        let pad = if aligned && !o.quoting.quotes(&it.name) {
            " "
        } else {
            ""
        };
        match colors[k] {
            Some(c) => format!(
                "{pad}\x1b[{c}m{}\x1b[0m{}",
                o.quoting.apply(&it.name),
                marks[k]
            ),
            None => format!("{pad}{}{}", o.quoting.apply(&it.name), marks[k]),
        }
    };
    if matches!(o.layout, Layout::Columns | Layout::Across) && !o.long {
        if total && o.blocks {
            let sum: u64 = items.iter().map(|i| kib_blocks(i.len)).sum();
            let t = o.block_scale.render(sum * 1024);
            s.push_str(&format!("total {t}\n"));
        }
        let cells: Vec<String> = (0..items.len())
            .map(|k| format!("{}{}", prefix(&items[k]), label(k)))
            .collect();
        s.push_str(&columns(
            &cells,
            o.width,
            o.layout == Layout::Across,
            o.color.is_none(),
        ));
        first_reset(o, &mut s);
        cx.outs(&s);
        return;
    }
    if o.layout == Layout::Commas && !o.long {
        // GNU's print_with_separator: a line breaks before a name that
        // would reach column 80.
        let mut pos = 0usize;
        for (i, it) in items.iter().enumerate() {
            let text = format!("{}{}", prefix(it), label(i));
            let len = visible_len(&text);
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
        first_reset(o, &mut s);
        cx.outs(&s);
        return;
    }
    if !o.long {
        if total && o.blocks {
            let sum: u64 = items.iter().map(|i| kib_blocks(i.len)).sum();
            let t = o.block_scale.render(sum * 1024);
            s.push_str(&format!("total {t}\n"));
        }
        for (k, it) in items.iter().enumerate() {
            s.push_str(&prefix(it));
            s.push_str(&label(k));
            s.push('\n');
        }
        first_reset(o, &mut s);
        cx.outs(&s);
        return;
    }
    let size = |it: &Item| o.size_scale.render(it.len);
    if total {
        let blocks: u64 = items.iter().map(|i| kib_blocks(i.len)).sum();
        let t = o.block_scale.render(blocks * 1024);
        s.push_str(&format!("total {t}\n"));
    }
    let width = all().map(|i| size(i).len()).max().unwrap_or(1);
    let links: Vec<u64> = items
        .iter()
        .map(|it| super::links(cx, &it.path, it.kind))
        .collect();
    let also_links: Vec<u64> = also
        .iter()
        .map(|it| super::links(cx, &it.path, it.kind))
        .collect();
    let lw = links
        .iter()
        .chain(&also_links)
        .map(|n| n.to_string().len())
        .max()
        .unwrap_or(1);
    let now = cx.env.now;
    for (k, (it, n)) in items.iter().zip(&links).enumerate() {
        let bits = cx.fs.mode(&it.path).unwrap_or(it.kind.default_mode());
        let mode = crate::fs::mode_string(it.kind, bits);
        let date = match o.time_style {
            0 => ls_date(it.modified, now),
            4 => custom_date(it.modified, now, o.time_format),
            style => iso_date(it.modified, now, style),
        };
        let id = if o.numeric { "0" } else { super::OWNER };
        let mut who = String::new();
        for (on, name) in [
            (o.owner, id),
            (o.group, id),
            (o.author, id),
            (o.context, "?"),
        ] {
            if on {
                who.push_str(name);
                who.push(' ');
            }
        }
        s.push_str(&format!(
            "{}{mode} {n:>lw$} {who}{:>width$} {date} {}\n",
            prefix(it),
            size(it),
            label(k)
        ));
    }
    first_reset(o, &mut s);
    cx.outs(&s);
}

/// The colour GNU ls gives a name without `LS_COLORS` (its built-in
/// defaults: the documents have no links, devices, pipes or sockets), by
/// its kind and mode bits; `None` for a plain document.
fn color_of(cx: &mut Cx<'_>, it: &Item) -> Option<&'static str> {
    let bits = cx.fs.mode(&it.path).unwrap_or(it.kind.default_mode());
    let (sticky, other_writes) = (bits & 0o1000 != 0, bits & 0o002 != 0);
    match it.kind {
        Kind::Dir if sticky && other_writes => Some("30;42"),
        Kind::Dir if other_writes => Some("34;42"),
        Kind::Dir if sticky => Some("37;44"),
        Kind::Dir => Some("01;34"),
        Kind::File if bits & 0o4000 != 0 => Some("37;41"),
        Kind::File if bits & 0o2000 != 0 => Some("30;43"),
        Kind::File if bits & 0o111 != 0 => Some("01;32"),
        Kind::File => None,
    }
}

/// Whether GNU ls would colour at all: without `LS_COLORS` it colours only
/// for `COLORTERM` or a `TERM` its colour database knows (`xterm*`,
/// `*color*`, `screen*`, `linux`...), so a script without a terminal type
/// gets no colours even from `--color=always`. (`LS_COLORS` itself is not
/// read: its colours are taken to be the built-in ones.)
fn color_terminal(cx: &Cx<'_>) -> bool {
    let env = (cx.environ)();
    let get = |k: &str| super::env_value(&env, k);
    if get("LS_COLORS").is_some() || get("COLORTERM").is_some() {
        return true;
    }
    let Some(term) = get("TERM") else {
        return false;
    };
    // The `TERM` lines of coreutils 9's `dircolors --print-database`.
    const TERMS: &[&str] = &[
        "Eterm",
        "ansi",
        "*color*",
        "con[0-9]*x[0-9]*",
        "cons25",
        "console",
        "cygwin",
        "*direct*",
        "dtterm",
        "gnome",
        "hurd",
        "jfbterm",
        "konsole",
        "kterm",
        "linux",
        "linux-c",
        "mlterm",
        "putty",
        "rxvt*",
        "screen*",
        "st",
        "terminator",
        "tmux*",
        "vt100",
        "xterm*",
    ];
    TERMS.iter().any(|t| Pattern::new(t).matches(term, false))
}

/// GNU ls writes a reset (`ESC[0m`) once, before the first coloured name
/// of its whole output.
fn first_reset(o: Opts<'_>, s: &mut String) {
    if let Some(done) = o.color
        && !done.get()
        && let Some(at) = s.find('\x1b')
    {
        s.insert_str(at, "\x1b[0m");
        done.set(true);
    }
}

/// A cell's width on the screen: its characters, less colour sequences.
fn visible_len(text: &str) -> usize {
    let mut n = 0;
    let mut in_escape = false;
    for c in text.chars() {
        match c {
            '\x1b' => in_escape = true,
            'm' if in_escape => in_escape = false,
            _ if in_escape => {}
            _ => n += 1,
        }
    }
    n
}

/// The mark `-p`, `--file-type` or `-F` puts after a name.
fn indicator(cx: &mut Cx<'_>, it: &Item, o: Opts<'_>) -> &'static str {
    match (o.indicator, it.kind) {
        (Indicator::None, _) => "",
        (_, Kind::Dir) => "/",
        (Indicator::Classify, Kind::File) => {
            let bits = cx.fs.mode(&it.path).unwrap_or(it.kind.default_mode());
            if bits & 0o111 != 0 { "*" } else { "" }
        }
        _ => "",
    }
}

/// GNU's `-C` (down) and `-x` (across) layouts when output is not a
/// terminal: the most columns whose widths fit in `width`, each column as
/// wide as its widest name plus two, padded with tabs to 8-column stops.
fn columns(cells: &[String], width: usize, across: bool, tabs: bool) -> String {
    const MIN_COLUMN_WIDTH: usize = 3;
    let n = cells.len();
    if n == 0 {
        return String::new();
    }
    let lens: Vec<usize> = cells.iter().map(|c| visible_len(c)).collect();
    let most = if width == 0 {
        n
    } else {
        (width / MIN_COLUMN_WIDTH).max(1).min(n)
    };
    // GNU's calculate_columns: for each candidate count, grow the column
    // widths name by name and drop the count once the line is too long.
    let mut fits = vec![true; most];
    let mut line = (1..=most).map(|c| c * MIN_COLUMN_WIDTH).collect::<Vec<_>>();
    let mut widths: Vec<Vec<usize>> = (1..=most).map(|c| vec![MIN_COLUMN_WIDTH; c]).collect();
    for (k, &len) in lens.iter().enumerate() {
        for c in 0..most {
            if !fits[c] {
                continue;
            }
            let idx = if across {
                k % (c + 1)
            } else {
                k / n.div_ceil(c + 1)
            };
            let real = len + if idx == c { 0 } else { 2 };
            if widths[c][idx] < real {
                line[c] += real - widths[c][idx];
                widths[c][idx] = real;
                fits[c] = width == 0 || line[c] < width;
            }
        }
    }
    let cols = (1..=most).rev().find(|&c| fits[c - 1]).unwrap_or(1);
    let w = &widths[cols - 1];
    let rows = n.div_ceil(cols);
    let mut out = String::new();
    // GNU's indent: tabs to each 8-column stop that fits, then spaces;
    // spaces alone with colours (GNU sets its tab size to 0 then).
    let indent = |out: &mut String, mut from: usize, to: usize| {
        while from < to {
            if tabs && to / 8 > (from + 1) / 8 {
                out.push('\t');
                from += 8 - from % 8;
            } else {
                out.push(' ');
                from += 1;
            }
        }
    };
    let row = |out: &mut String, members: &mut dyn Iterator<Item = (usize, usize)>| {
        let mut pos = 0;
        let mut prev: Option<(usize, usize)> = None;
        for (k, col) in members {
            if let Some((pk, pcol)) = prev {
                indent(out, pos + lens[pk], pos + w[pcol]);
                pos += w[pcol];
            }
            out.push_str(&cells[k]);
            prev = Some((k, col));
        }
        out.push('\n');
    };
    if across {
        for r in 0..rows {
            let start = r * cols;
            row(
                &mut out,
                &mut (start..n.min(start + cols)).map(|k| (k, k % cols)),
            );
        }
    } else {
        for r in 0..rows {
            row(
                &mut out,
                &mut (0..cols)
                    .map(|c| (r + c * rows, c))
                    .take_while(|&(k, _)| k < n),
            );
        }
    }
    out
}

/// `--time-style=+FORMAT`: a strftime format; with a newline in it, the
/// first line is for old times and the second for recent ones.
fn custom_date(t: Option<SystemTime>, now: SystemTime, format: &str) -> String {
    let Some(t) = t else {
        return "?".to_owned();
    };
    let fmt = match format.split_once('\n') {
        Some((old, recent)) => {
            let is_recent = now
                .duration_since(t)
                .is_ok_and(|d| d.as_secs() < 31_556_952 / 2);
            if is_recent { recent } else { old }
        }
        None => format,
    };
    let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    crate::time::strftime(fmt, crate::time::epoch_seconds(t), since.subsec_nanos())
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
    o: Opts<'_>,
    header: bool,
    first: &mut bool,
) -> Option<Vec<String>> {
    let mut lead = String::new();
    if !*first {
        lead.push('\n');
    }
    if header {
        let heading = Quoting {
            colon: true,
            space: false,
            ..o.quoting
        };
        lead.push_str(&heading.apply(path));
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
        .filter(|e| !ignored(&e.name, o.ignore))
        .map(|e| Item {
            path: super::join(path, &e.name),
            name: e.name,
            kind: e.kind,
            len: e.len,
            modified: e.modified,
            inode: 0,
        })
        .collect();
    if o.all {
        // Unsorted (`-f`), `.` and `..` come first, where the kernel
        // usually returns them.
        let at = if o.unsorted { 0 } else { items.len() };
        for dot in ["..", "."].into_iter().filter(|d| !ignored(d, o.ignore)) {
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
                        inode: 0,
                    },
                    Err(_) => Item {
                        name: dot.to_owned(),
                        path: super::join(path, dot),
                        kind: Kind::Dir,
                        len: crate::fs::DIR_SIZE,
                        modified: None,
                        inode: 0,
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
    annotate(cx, &mut items, o);
    sort(&mut items, o);
    print_block(cx, &items, &[], o, true);
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
fn list_dir(cx: &mut Cx<'_>, path: &str, o: Opts<'_>, header: bool, first: &mut bool) -> bool {
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
        flag('\0', "si", "si"),
        value('\0', "block-size", "block-size"),
        flag('k', "kibibytes", "k"),
        flag('d', "directory", "d"),
        super::optional("classify", "F"),
        flag('F', "", "F"),
        flag('p', "", "p"),
        flag('\0', "file-type", "file-type"),
        value('\0', "indicator-style", "indicator-style"),
        flag('C', "", "C"),
        flag('x', "", "x"),
        value('w', "width", "w"),
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
        flag('\0', "author", "author"),
        flag('Z', "context", "Z"),
        flag('Q', "quote-name", "Q"),
        flag('\0', "group-directories-first", "dirsfirst"),
        // Links are resolved by the document filesystem; names are shown
        // as they are (no terminal to protect).
        flag('L', "dereference", "L"),
        flag('H', "dereference-command-line", "L"),
        flag('b', "escape", "b"),
        flag('q', "hide-control-chars", "q"),
        flag('\0', "show-control-chars", "show-control-chars"),
        flag('N', "literal", "N"),
        value('\0', "quoting-style", "quoting-style"),
        flag('\0', "full-time", "full-time"),
        value('\0', "sort", "sort"),
        value('\0', "format", "format"),
        value('\0', "time", "time"),
        value('I', "ignore", "I"),
        value('\0', "hide", "hide"),
        flag('B', "ignore-backups", "B"),
    ];
    let p = match options(cx, "ls", args, SPEC, 2) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // `--sort=WORD` stands for the letter it names. A bad word is a usage
    // error, status 1 (gnulib's `argmatch_die`).
    let sort_word = match p.value("sort") {
        Some(v) => match super::argmatch(
            cx,
            "ls",
            "--sort",
            v,
            &[
                (&["none"], "U"),
                (&["time"], "t"),
                (&["size"], "S"),
                (&["extension"], "X"),
                (&["version"], "v"),
                (&["width"], "width"),
            ],
        ) {
            Some(k) => Some(k),
            None => return 1,
        },
        None => None,
    };
    let style = match p.last_of(&["b", "N", "Q", "quoting-style"]) {
        Some("b") => Style::Escape,
        Some("Q") => Style::C,
        Some("quoting-style") => {
            let v = p.value("quoting-style").unwrap_or_default();
            let table: Vec<(&[&str], &'static str)> = Style::NAMED
                .iter()
                .map(|(word, _)| (std::slice::from_ref(word), *word))
                .collect();
            match super::argmatch(cx, "ls", "--quoting-style", v, &table) {
                Some(word) => Style::NAMED
                    .iter()
                    .find(|(w, _)| *w == word)
                    .map_or(Style::Literal, |(_, s)| *s),
                None => return 1,
            }
        }
        _ => Style::Literal,
    };
    let quoting = Quoting {
        style,
        utf8: super::utf8_locale(cx),
        hide_control: p.last_of(&["q", "show-control-chars"]) == Some("q"),
        colon: false,
        space: true,
    };
    let time_word = match p.value("time") {
        Some(v) => match super::argmatch(
            cx,
            "ls",
            "--time",
            v,
            &[
                (&["atime", "access", "use"], "u"),
                (&["ctime", "status"], "c"),
                (&["birth", "creation"], "birth"),
            ],
        ) {
            Some(k) => Some(k),
            None => return 1,
        },
        None => None,
    };
    let sort_key = match p.last_of(&["t", "S", "X", "v", "U", "sort"]) {
        Some("sort") => sort_word,
        other => other,
    };
    let other_time = p.has("c") || p.has("u") || time_word.is_some();
    let width = match p.value("w") {
        Some(w) => match w.parse::<usize>() {
            Ok(w) => w,
            Err(_) => {
                cx.err(format_args!(
                    "ls: invalid line width: {}",
                    super::quote::quote(w, true)
                ));
                return 2;
            }
        },
        None => (cx.environ)()
            .iter()
            .find(|(k, _)| k == "COLUMNS")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .filter(|&w| w > 0)
            .unwrap_or(80),
    };
    // The last of -h, --si and --block-size sets both scales; -k alone
    // only the block column, which is in KiB already.
    let (size_scale, block_scale) = match p.last_of(&["h", "si", "block-size"]) {
        Some("h") => (Scale::Human { si: false }, Scale::Human { si: false }),
        Some("si") => (Scale::Human { si: true }, Scale::Human { si: true }),
        Some(_) => {
            let spec = p.value("block-size").unwrap_or_default();
            match Scale::parse(spec) {
                Some(s) => (s, s),
                None => {
                    cx.err(format_args!(
                        "ls: invalid --block-size argument {}",
                        super::quote::quote(spec, true)
                    ));
                    return 2;
                }
            }
        }
        None => (Scale::BYTES, Scale::KIB),
    };
    let mut ignore: Vec<Pattern> = p.values("I").into_iter().map(Pattern::new).collect();
    if !(p.has("a") || p.has("A") || p.has("f")) {
        ignore.extend(p.values("hide").into_iter().map(Pattern::new));
    }
    if p.has("B") {
        ignore.extend([Pattern::new("*~"), Pattern::new(".*~")]);
    }
    // The format is the last one asked for, as GNU ls reads its options in
    // order: `-l -m` lists with commas, `-m -l` long; `-1` does not undo a
    // long listing, `--format=single-column` does.
    let mut long = false;
    let mut layout = Layout::Lines;
    for (id, v) in &p.opts {
        let id = match (*id, v.as_deref()) {
            ("format", Some(word)) => match super::argmatch(
                cx,
                "ls",
                "--format",
                word,
                &[
                    (&["verbose", "long"], "l"),
                    (&["commas"], "m"),
                    (&["horizontal", "across"], "x"),
                    (&["vertical"], "C"),
                    (&["single-column"], "single-column"),
                ],
            ) {
                Some(k) => k,
                None => return 1,
            },
            (id, _) => id,
        };
        match id {
            "l" | "g" | "o" | "n" | "full-time" => long = true,
            "m" | "C" | "x" => {
                long = false;
                layout = match id {
                    "m" => Layout::Commas,
                    "C" => Layout::Columns,
                    _ => Layout::Across,
                };
            }
            "1" if !long => layout = Layout::Lines,
            "single-column" => {
                long = false;
                layout = Layout::Lines;
            }
            _ => {}
        }
    }
    // `--color` alone is `always`; the output is never a terminal, so
    // `auto` colours nothing.
    let colored = match p.value("color") {
        None if p.has("color") && color_terminal(cx) => Some(std::cell::Cell::new(false)),
        None => None,
        Some(when) => match super::argmatch(
            cx,
            "ls",
            "--color",
            when,
            &[
                (&["always", "yes", "force"], "on"),
                (&["never", "no", "none"], "off"),
                (&["auto", "tty", "if-tty"], "off"),
            ],
        ) {
            Some("on") if color_terminal(cx) => Some(std::cell::Cell::new(false)),
            Some(_) => None,
            None => return 1,
        },
    };
    let o = Opts {
        all: p.has("a") || p.has("f"),
        almost_all: p.has("A"),
        long: long && !p.has("f"),
        // `-c`/`-u` sort by (change, access) time unless `-l` shows it.
        by_time: sort_key == Some("t") || (sort_key.is_none() && !long && other_time),
        by_size: sort_key == Some("S"),
        by_ext: sort_key == Some("X"),
        by_version: sort_key == Some("v"),
        by_width: sort_key == Some("width"),
        unsorted: sort_key == Some("U") || p.has("f"),
        dirs_first: p.has("dirsfirst"),
        layout,
        width,
        indicator: match p.last_of(&["p", "F", "file-type", "indicator-style"]) {
            Some("p") => Indicator::Slash,
            Some("F") => Indicator::Classify,
            Some("file-type") => Indicator::FileType,
            Some(_) => match p.value("indicator-style") {
                Some("slash") => Indicator::Slash,
                Some("file-type") => Indicator::FileType,
                Some("classify") => Indicator::Classify,
                _ => Indicator::None,
            },
            None => Indicator::None,
        },
        owner: !p.has("g"),
        group: !(p.has("o") || p.has("G")),
        author: p.has("author"),
        context: p.has("Z"),
        numeric: p.has("n"),
        quoting,
        ignore: &ignore,
        color: colored.as_ref(),
        reverse: p.has("r"),
        recursive: p.has("R") && !p.has("d"),
        size_scale,
        block_scale,
        dirs_as_files: p.has("d"),
        blocks: p.has("s"),
        inode: p.has("i"),
        time: match p.last_of(&["c", "u", "time"]) {
            Some("c") => b'c',
            Some("u") => b'a',
            Some(_) => match time_word {
                Some("u") => b'a',
                Some("c") => b'c',
                Some("birth") => b'b',
                _ => b'm',
            },
            None => b'm',
        },
        time_style: match p
            .value("time-style")
            .map(|s| s.trim_start_matches("posix-"))
        {
            Some("long-iso") => 1,
            Some("full-iso") => 2,
            Some("iso") => 3,
            Some(f) if f.starts_with('+') => 4,
            _ if p.has("full-time") => 2,
            _ => 0,
        },
        time_format: p
            .value("time-style")
            .and_then(|f| f.strip_prefix('+'))
            .unwrap_or(""),
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
    annotate(cx, &mut files, o);
    annotate(cx, &mut dirs, o);
    sort(&mut files, o);
    sort(&mut dirs, o);
    let mut first = true;
    if !files.is_empty() {
        print_block(cx, &files, &dirs, o, false);
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

/// `--color[=WHEN]`.
const fn optional_color() -> super::Spec {
    super::optional("color", "color")
}
