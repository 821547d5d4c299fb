//! `tree`, in the output of tree 2.x: the branches (`|-- `, `` `-- ``,
//! `|   ` in the C locale; `├── `, `└── `, `│   ` where the locale is
//! UTF-8), the `[...]` columns of `-p -u -g -s -h -D`, `-J`'s JSON, and the final
//! `N directories, M files` line, which (like tree 2.x) counts a listed
//! directory itself when it shows at least one entry.

use std::cmp::Ordering;

use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::{FsError, Kind, mode_string};
use crate::glob::Pattern;

/// How entries are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Name,
    Version,
    Size,
    Modified,
    Unsorted,
}

/// What to show, from the options.
struct Opts {
    level: Option<usize>,
    dirs_only: bool,
    all: bool,
    full_path: bool,
    no_indent: bool,
    /// `-P`: files (and with `--matchdirs`, directories) to list.
    include: Vec<Pattern>,
    /// `-I`: files and directories to leave out.
    exclude: Vec<Pattern>,
    fold: bool,
    match_dirs: bool,
    prune: bool,
    file_limit: Option<usize>,
    perms: bool,
    /// `--inodes`: each entry's inode number.
    inodes: bool,
    owner: bool,
    group: bool,
    size: bool,
    human: bool,
    si: bool,
    du: bool,
    date: Option<String>,
    classify: bool,
    quote: bool,
    /// `-N`: names as they are; otherwise escaped as in the C locale.
    raw: bool,
    /// `-q`: non-printable characters as `?`.
    question: bool,
    order: Order,
    reverse: bool,
    /// `--dirsfirst` (true) or `--filesfirst` (false).
    dirs_first: Option<bool>,
    utf8: bool,
}

/// One entry to print, with what the columns need.
struct Node {
    name: String,
    path: String,
    kind: Kind,
    len: u64,
    modified: Option<std::time::SystemTime>,
    /// With `--du`: the size of everything below, itself included.
    total: u64,
    /// What is listed below a directory (filled when it is descended into).
    children: Vec<Node>,
    /// Whether the directory was descended into.
    opened: bool,
    /// Whether a `-P` pattern matched the directory (`--matchdirs`).
    matched: bool,
    /// `--filelimit`: how many entries kept it closed.
    over_limit: Option<usize>,
}

/// Running totals for the report line.
#[derive(Default)]
struct Totals {
    dirs: u64,
    files: u64,
}

/// tree's `psize`: `%11lld`, or with `-h`/`--si` a four-column size in
/// powers of 1024 (or 1000), one decimal below ten units.
fn size_column(n: u64, o: &Opts) -> String {
    if !(o.human || o.si) {
        return format!("{n:>11}");
    }
    let (unit, names) = if o.si {
        (1000u64, b"BkMGTPEZY")
    } else {
        (1024u64, b"BKMGTPEZY")
    };
    if n < unit {
        return format!("{n:>4}");
    }
    let mut idx = 1;
    let mut size = n;
    while size >= unit * unit {
        idx += 1;
        size /= unit;
    }
    let v = size as f64 / unit as f64;
    let c = names[idx] as char;
    if size / unit >= 10 {
        format!("{v:>3.0}{c}")
    } else {
        format!("{v:>3.1}{c}")
    }
}

/// tree's name escaping in the C locale: `\\`, `\ `, C escapes for
/// control characters and octal for every other byte outside ASCII's
/// printable range.
fn escape(name: &str, o: &Opts) -> String {
    if o.raw {
        return name.to_owned();
    }
    let mut s = String::with_capacity(name.len());
    if o.question {
        for c in name.chars() {
            s.push(if c.is_control() { '?' } else { c });
        }
        return s;
    }
    for b in name.bytes() {
        match b {
            b'\\' => s.push_str("\\\\"),
            b' ' if !o.utf8 && !o.quote => s.push_str("\\ "),
            b'\t' => s.push_str("\\t"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            0x0b => s.push_str("\\v"),
            0x0c => s.push_str("\\f"),
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ if o.utf8 && b >= 0x80 => {}
            _ => s.push_str(&format!("\\{b:03o}")),
        }
    }
    if o.utf8 && !name.is_ascii() {
        // Printable UTF-8 passes through in a UTF-8 locale.
        let mut out = String::new();
        for c in name.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => out.push_str(&format!("\\{:03o}", c as u32)),
                c => out.push(c),
            }
        }
        return out;
    }
    s
}

impl Opts {
    fn matches(pats: &[Pattern], name: &str, fold: bool) -> bool {
        pats.iter().any(|p| p.matches(name, fold))
    }

    fn compare(&self, a: &Node, b: &Node) -> Ordering {
        if let Some(dirs) = self.dirs_first {
            let (ad, bd) = (a.kind == Kind::Dir, b.kind == Kind::Dir);
            if ad != bd {
                return if dirs { bd.cmp(&ad) } else { ad.cmp(&bd) };
            }
        }
        let by_name = || a.name.as_bytes().cmp(b.name.as_bytes());
        let o = match self.order {
            Order::Name | Order::Unsorted => by_name(),
            Order::Version => strverscmp(a.name.as_bytes(), b.name.as_bytes()),
            Order::Size => b.len.cmp(&a.len).then_with(by_name),
            Order::Modified => a.modified.cmp(&b.modified).then_with(by_name),
        };
        if self.reverse { o.reverse() } else { o }
    }
}

/// Reads `path`'s listing into nodes, down to `depth` (1 for a root's
/// entries), applying the filters; directories below are read too, as
/// `--prune` and `--du` need them before anything is printed.
fn read(cx: &mut Cx<'_>, o: &Opts, path: &str, depth: usize, include_all: bool) -> Vec<Node> {
    let Ok(entries) = cx.fs.read_dir(path) else {
        return Vec::new();
    };
    let mut nodes = Vec::new();
    for e in entries {
        // A directory that matches turns matching off for its own entries
        // only; a directory among those is not tested.
        let dir_matched = !include_all
            && e.is_dir()
            && o.match_dirs
            && !o.include.is_empty()
            && Opts::matches(&o.include, &e.name, o.fold);
        let visible = (o.all || !e.name.starts_with('.'))
            && (!o.dirs_only || e.is_dir())
            && !Opts::matches(&o.exclude, &e.name, o.fold);
        let selected = include_all
            || e.is_dir()
            || o.include.is_empty()
            || Opts::matches(&o.include, &e.name, o.fold);
        if !(visible && selected) {
            continue;
        }
        let child = super::join(path, &e.name);
        let mut n = Node {
            name: e.name.clone(),
            path: child,
            kind: e.kind,
            len: e.len,
            modified: e.modified,
            total: e.len,
            children: Vec::new(),
            opened: false,
            matched: dir_matched,
            over_limit: None,
        };
        if n.kind == Kind::Dir && o.level.is_none_or(|l| depth < l) {
            let below = read(cx, o, &n.path, depth + 1, dir_matched);
            match o.file_limit {
                Some(limit) if below.len() > limit => n.over_limit = Some(below.len()),
                _ => {
                    n.total += below.iter().map(|c| c.total).sum::<u64>();
                    n.children = below;
                    n.opened = true;
                }
            }
        }
        if o.prune && n.kind == Kind::Dir && n.children.is_empty() && !n.matched {
            continue;
        }
        nodes.push(n);
    }
    if o.order != Order::Unsorted || o.dirs_first.is_some() {
        nodes.sort_by(|a, b| o.compare(a, b));
    }
    nodes
}

/// What the `-p -u -g -s -h -D` options show of one entry.
struct Attrs {
    /// `--inodes`: the inode number (0 where the backend keeps none).
    inode: Option<u64>,
    /// `-p`: the permission bits.
    bits: Option<u32>,
    /// `-u`, `-g`: owner and group.
    owner: bool,
    group: bool,
    size: Option<u64>,
    /// `-D`, `--timefmt`: the time as printed.
    time: Option<String>,
}

impl Attrs {
    fn of(
        cx: &mut Cx<'_>,
        o: &Opts,
        path: &str,
        kind: Kind,
        size: u64,
        modified: Option<std::time::SystemTime>,
    ) -> Attrs {
        let time = o.date.as_deref().map(|fmt| match (fmt, modified) {
            ("", t) => crate::time::ls_date(t, cx.env.now),
            (_, None) => "?".to_owned(),
            (f, Some(t)) => crate::time::strftime(f, crate::time::epoch_seconds(t), 0),
        });
        Attrs {
            inode: o
                .inodes
                .then(|| cx.fs.attributes(path).map_or(0, |a| a.inode)),
            bits: o
                .perms
                .then(|| cx.fs.mode(path).unwrap_or(kind.default_mode())),
            owner: o.owner,
            group: o.group,
            size: (o.size || o.human || o.si || o.du).then_some(size),
            time,
        }
    }

    /// The `[...]  ` columns of the text listing, or nothing.
    fn columns(&self, o: &Opts, kind: Kind) -> String {
        let mut fields = String::new();
        if let Some(inode) = self.inode {
            fields.push_str(&format!(" {inode:7}"));
        }
        if let Some(bits) = self.bits {
            fields.push(' ');
            fields.push_str(&mode_string(kind, bits));
        }
        for on in [self.owner, self.group] {
            if on {
                fields.push_str(&format!(" {:<8}", super::OWNER));
            }
        }
        if let Some(size) = self.size {
            fields.push(' ');
            fields.push_str(&size_column(size, o));
        }
        if let Some(t) = &self.time {
            fields.push(' ');
            fields.push_str(t);
        }
        if fields.is_empty() {
            String::new()
        } else {
            format!("[{}]  ", &fields[1..])
        }
    }

    /// The fields `-J` and `-X` show after an entry's type and name, in
    /// tree's order: each name, its value, and whether JSON quotes it.
    fn fields(&self, kind: Kind) -> Vec<(&'static str, String, bool)> {
        let mut f = Vec::new();
        if let Some(inode) = self.inode {
            f.push(("inode", inode.to_string(), false));
        }
        if let Some(bits) = self.bits {
            f.push(("mode", format!("{:04o}", bits & 0o7777), true));
            f.push(("prot", mode_string(kind, bits), true));
        }
        if self.owner {
            f.push(("user", super::OWNER.to_owned(), true));
        }
        if self.group {
            f.push(("group", super::OWNER.to_owned(), true));
        }
        if let Some(size) = self.size {
            f.push(("size", size.to_string(), false));
        }
        if let Some(t) = &self.time {
            f.push(("time", t.clone(), true));
        }
        f
    }

    /// `-J`'s fields: `,"name":value` each. With `-h` or `--si` a size is
    /// the text the listing shows, quoted (`-X` keeps the bytes).
    fn json(&self, kind: Kind, o: &Opts) -> String {
        self.fields(kind)
            .into_iter()
            .map(|(k, v, quoted)| {
                let v = match (k, self.size) {
                    ("size", Some(n)) if o.human || o.si => json_str(size_column(n, o).trim()),
                    _ if quoted => json_str(&v),
                    _ => v,
                };
                format!(",\"{k}\":{v}")
            })
            .collect()
    }

    /// `-X`'s attributes: ` name="value"` each.
    fn xml(&self, kind: Kind) -> String {
        self.fields(kind)
            .into_iter()
            .map(|(k, v, _)| format!(" {k}=\"{}\"", xml_str(&v)))
            .collect()
    }
}

/// A root as tree names it on its own line: escaped, and quoted under `-Q`.
fn root_name(root: &str, o: &Opts) -> String {
    if o.quote {
        format!("\"{}\"", escape(root, o))
    } else {
        escape(root, o)
    }
}

fn classify(cx: &mut Cx<'_>, o: &Opts, path: &str, kind: Kind) -> &'static str {
    if !o.classify {
        ""
    } else if kind == Kind::Dir {
        "/"
    } else if cx.fs.mode(path).is_ok_and(|m| m & 0o111 != 0) {
        "*"
    } else {
        ""
    }
}

fn print(cx: &mut Cx<'_>, o: &Opts, nodes: &[Node], prefix: &str, t: &mut Totals) {
    let n = nodes.len();
    for (i, node) in nodes.iter().enumerate() {
        let last = i + 1 == n;
        let branch = match (o.no_indent, last, o.utf8) {
            (true, _, _) => "",
            (false, false, false) => "|-- ",
            (false, true, false) => "`-- ",
            (false, false, true) => "├── ",
            (false, true, true) => "└── ",
        };
        let label = if o.full_path { &node.path } else { &node.name };
        let mut label = escape(label, o);
        if o.quote {
            label = format!("\"{label}\"");
        }
        let size = if o.du { node.total } else { node.len };
        let cols =
            Attrs::of(cx, o, &node.path, node.kind, size, node.modified).columns(o, node.kind);
        let mark = classify(cx, o, &node.path, node.kind);
        let note = node
            .over_limit
            .map(|k| format!("  [{k} entries exceeds filelimit, not opening dir]"))
            .unwrap_or_default();
        cx.outs(&format!("{prefix}{branch}{cols}{label}{mark}{note}\n"));
        if node.kind == Kind::Dir {
            t.dirs += 1;
            if node.opened {
                let deeper = match (o.no_indent, last, o.utf8) {
                    (true, _, _) => String::new(),
                    (false, true, _) => format!("{prefix}    "),
                    (false, false, false) => format!("{prefix}|   "),
                    // tree draws the vertical line followed by two no-break spaces.
                    (false, false, true) => format!("{prefix}│\u{a0}\u{a0} "),
                };
                print(cx, o, &node.children, &deeper, t);
            }
        } else {
            t.files += 1;
        }
    }
}

/// The sum of the `--du` sizes of every node, at every depth.
fn shown_sizes(nodes: &[Node]) -> u64 {
    nodes
        .iter()
        .map(|n| n.total + shown_sizes(&n.children))
        .sum()
}

/// A JSON string, as tree writes one.
fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text in an XML attribute, as tree escapes it.
fn xml_str(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// tree's `-X` layout: one element a line, two spaces a level; an entry
/// with nothing shown inside closes on its own line.
fn print_xml(cx: &mut Cx<'_>, o: &Opts, nodes: &[Node], depth: usize, t: &mut Totals) {
    let indent = "  ".repeat(depth + 1);
    for node in nodes {
        let label = if o.full_path { &node.path } else { &node.name };
        let kind = if node.kind == Kind::Dir {
            t.dirs += 1;
            "directory"
        } else {
            t.files += 1;
            "file"
        };
        let size = if o.du { node.total } else { node.len };
        let attrs = Attrs::of(cx, o, &node.path, node.kind, size, node.modified).xml(node.kind);
        let name = xml_str(label);
        if let Some(k) = node.over_limit {
            cx.outs(&format!(
                "{indent}<{kind} name=\"{name}\"{attrs}><error>{k} entries exceeds filelimit, not opening dir</error></{kind}>\n"
            ));
        } else if node.kind == Kind::Dir && !node.children.is_empty() {
            cx.outs(&format!("{indent}<{kind} name=\"{name}\"{attrs}>\n"));
            print_xml(cx, o, &node.children, depth + 1, t);
            cx.outs(&format!("{indent}</{kind}>\n"));
        } else {
            cx.outs(&format!(
                "{indent}<{kind} name=\"{name}\"{attrs}></{kind}>\n"
            ));
        }
    }
}

/// tree's `-J` layout: one object a line, two spaces a level, a
/// directory's entries in `contents` (left out when it shows none).
fn print_json(cx: &mut Cx<'_>, o: &Opts, nodes: &[Node], depth: usize, t: &mut Totals) {
    let indent = "  ".repeat(depth + 1);
    let n = nodes.len();
    for (i, node) in nodes.iter().enumerate() {
        let label = if o.full_path { &node.path } else { &node.name };
        let kind = if node.kind == Kind::Dir {
            "directory"
        } else {
            "file"
        };
        let size = if o.du { node.total } else { node.len };
        let fields =
            Attrs::of(cx, o, &node.path, node.kind, size, node.modified).json(node.kind, o);
        let comma = if i + 1 < n { "," } else { "" };
        if node.kind == Kind::Dir {
            t.dirs += 1;
        } else {
            t.files += 1;
        }
        let name = json_str(label);
        if node.kind == Kind::Dir && !node.children.is_empty() {
            cx.outs(&format!(
                "{indent}{{\"type\":\"{kind}\",\"name\":{name}{fields},\"contents\":[\n"
            ));
            print_json(cx, o, &node.children, depth + 1, t);
            cx.outs(&format!("{indent}]}}{comma}\n"));
        } else {
            cx.outs(&format!(
                "{indent}{{\"type\":\"{kind}\",\"name\":{name}{fields}}}{comma}\n"
            ));
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `-P`/`-I` take several patterns joined by `|`.
fn patterns(values: Vec<&str>) -> Vec<Pattern> {
    values
        .iter()
        .flat_map(|v| v.split('|'))
        .map(Pattern::new)
        .collect()
}

/// `tree`.
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        value('L', "level", "L"),
        flag('d', "", "d"),
        flag('a', "all", "a"),
        flag('f', "", "f"),
        flag('i', "", "i"),
        // `-l` follows links and `-x` stays on one filesystem: the document
        // filesystem has neither links nor other filesystems.
        flag('l', "", "l"),
        flag('x', "", "x"),
        flag('n', "nocolor", "n"),
        flag('C', "", "C"),
        flag('A', "", "A"),
        flag('S', "", "S"),
        value('P', "pattern", "P"),
        value('I', "ignore", "I"),
        flag('\0', "ignore-case", "ignore-case"),
        flag('\0', "matchdirs", "matchdirs"),
        flag('\0', "prune", "prune"),
        value('\0', "filelimit", "filelimit"),
        flag('\0', "noreport", "noreport"),
        flag('p', "", "p"),
        flag('\0', "inodes", "inodes"),
        flag('u', "", "u"),
        flag('g', "", "g"),
        flag('s', "", "s"),
        flag('h', "", "h"),
        flag('\0', "si", "si"),
        flag('\0', "du", "du"),
        flag('D', "", "D"),
        value('\0', "timefmt", "timefmt"),
        flag('F', "", "F"),
        flag('Q', "", "Q"),
        flag('N', "", "N"),
        flag('q', "", "q"),
        flag('v', "", "v"),
        flag('t', "", "t"),
        flag('c', "", "t"),
        flag('U', "", "U"),
        flag('r', "", "r"),
        flag('\0', "dirsfirst", "dirsfirst"),
        flag('\0', "filesfirst", "filesfirst"),
        value('\0', "sort", "sort"),
        value('\0', "charset", "charset"),
        flag('J', "", "J"),
        flag('X', "", "X"),
        flag('H', "", "H"),
    ];
    let p = match options(cx, "tree", args, SPEC, 1) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if p.has("H") {
        cx.err("tree: HTML (-H) output is not supported by vfs-sh's tree; use the text listing or find");
        return 2;
    }
    let level = match p.value("L") {
        None => None,
        Some(v) => match super::count(v) {
            Some(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            _ => {
                cx.err("tree: Invalid level, must be greater than 0.");
                return 1;
            }
        },
    };
    let file_limit = match p.value("filelimit") {
        None => None,
        Some(v) => match super::count(v) {
            Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            None => {
                cx.err("tree: Invalid filelimit value, must be a positive number.");
                return 1;
            }
        },
    };
    let mut order = if p.has("U") {
        Order::Unsorted
    } else if p.has("t") {
        Order::Modified
    } else if p.has("v") {
        Order::Version
    } else {
        Order::Name
    };
    if let Some(s) = p.value("sort") {
        order = match s {
            "name" => Order::Name,
            "version" => Order::Version,
            "size" => Order::Size,
            "mtime" | "ctime" => Order::Modified,
            "none" => Order::Unsorted,
            other => {
                cx.err(format_args!(
                    "tree: Sort type '{other}' not valid, should be one of: name, version, size, mtime, ctime, none"
                ));
                return 1;
            }
        };
    }
    let utf8 = match p.value("charset") {
        Some(c) => {
            let c = c.to_ascii_lowercase();
            c == "utf-8" || c == "utf8"
        }
        None => super::utf8_locale(cx),
    };
    let date = match p.value("timefmt") {
        Some(f) => Some(f.to_owned()),
        None if p.has("D") => Some(String::new()),
        None => None,
    };
    let o = Opts {
        level,
        dirs_only: p.has("d"),
        all: p.has("a"),
        full_path: p.has("f"),
        no_indent: p.has("i"),
        include: patterns(p.values("P")),
        exclude: patterns(p.values("I")),
        fold: p.has("ignore-case"),
        match_dirs: p.has("matchdirs"),
        prune: p.has("prune"),
        file_limit,
        perms: p.has("p"),
        inodes: p.has("inodes"),
        owner: p.has("u"),
        group: p.has("g"),
        size: p.has("s"),
        human: p.has("h"),
        si: p.has("si"),
        du: p.has("du"),
        date,
        classify: p.has("F"),
        quote: p.has("Q"),
        raw: p.has("N"),
        question: p.has("q"),
        order,
        reverse: p.has("r"),
        // The last of --dirsfirst and --filesfirst decides.
        dirs_first: p
            .last_of(&["dirsfirst", "filesfirst"])
            .map(|o| o == "dirsfirst"),
        utf8,
    };
    let roots = if p.operands.is_empty() {
        vec![".".to_owned()]
    } else {
        p.operands.clone()
    };
    // The last of -J and -X decides.
    let json = p.last_of(&["J", "X"]) == Some("J");
    let xml = p.last_of(&["J", "X"]) == Some("X");
    if json {
        cx.outs("[\n");
    }
    if xml {
        // The encoding is named only in a UTF-8 locale.
        cx.outs(if super::utf8_locale(cx) {
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tree>\n"
        } else {
            "<?xml version=\"1.0\"?>\n<tree>\n"
        });
    }
    // With `-J`: whether the root before showed entries.
    let mut previous_root: Option<bool> = None;
    let mut t = Totals::default();
    let mut used = 0u64;
    let mut status = 0;
    for root in &roots {
        match cx.fs.metadata(root) {
            Ok(m) if m.is_dir() => {
                let mut nodes = read(cx, &o, root, 1, false);
                let total = m.len + nodes.iter().map(|c| c.total).sum::<u64>();
                // tree 2.x's `--du` report adds up the size shown on every
                // line below the root.
                used += shown_sizes(&nodes);
                let mut note = String::new();
                if o.file_limit.is_some_and(|l| nodes.len() > l) {
                    note = format!(
                        "  [{} entries exceeds filelimit, not opening dir]",
                        nodes.len()
                    );
                    nodes.clear();
                }
                let size = if o.du { total } else { m.len };
                let mut attrs = Attrs::of(cx, &o, &m.path, Kind::Dir, size, m.modified);
                if json {
                    // tree 2.x gives each root's inode as 0 in JSON.
                    attrs.inode = attrs.inode.map(|_| 0);
                    let fields = attrs.json(Kind::Dir, &o);
                    // A root with entries ends `]},` when another follows;
                    // one without ends its line bare (tree 2.x's quirk).
                    match previous_root {
                        Some(true) => cx.outs(",\n"),
                        Some(false) => cx.outs("\n"),
                        None => {}
                    }
                    previous_root = Some(!nodes.is_empty());
                    let name = json_str(root);
                    if nodes.is_empty() {
                        cx.outs(&format!(
                            "  {{\"type\":\"directory\",\"name\":{name}{fields}}}"
                        ));
                    } else {
                        cx.outs(&format!(
                            "  {{\"type\":\"directory\",\"name\":{name}{fields},\"contents\":[\n"
                        ));
                        t.dirs += 1;
                        print_json(cx, &o, &nodes, 1, &mut t);
                        cx.outs("  ]}");
                    }
                    continue;
                }
                if xml {
                    attrs.inode = attrs.inode.map(|_| 0);
                    let fields = attrs.xml(Kind::Dir);
                    let error = if note.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "<error>{}</error>",
                            note.trim_start().trim_matches(['[', ']'])
                        )
                    };
                    cx.outs(&format!(
                        "  <directory name=\"{}\"{fields}>{error}\n",
                        xml_str(root)
                    ));
                    if !nodes.is_empty() || !note.is_empty() {
                        t.dirs += 1;
                    }
                    print_xml(cx, &o, &nodes, 1, &mut t);
                    cx.outs("  </directory>\n");
                    continue;
                }
                let cols = attrs.columns(&o, Kind::Dir);
                let mark = if o.classify && !root.ends_with('/') {
                    "/"
                } else {
                    ""
                };
                cx.outs(&format!("{cols}{}{mark}{note}\n", root_name(root, &o)));
                if !nodes.is_empty() || !note.is_empty() {
                    t.dirs += 1;
                }
                print(cx, &o, &nodes, "", &mut t);
            }
            Ok(_) if xml => {
                cx.outs(&format!(
                    "  <file name=\"{}\"><error>error opening dir</error>\n  </file>\n",
                    xml_str(root)
                ));
                t.files += 1;
            }
            Ok(_) => {
                cx.outs(&format!("{}  [error opening dir]\n", root_name(root, &o)));
                t.files += 1;
            }
            Err(e) => {
                if xml {
                    // tree 2.x's own output, its element's start lost.
                    cx.outs(&format!(
                        " name=\"{}\"><error>error opening dir</error>\n  </unknown>\n",
                        xml_str(root)
                    ));
                } else {
                    cx.outs(&format!("{}  [error opening dir]\n", root_name(root, &o)));
                }
                if matches!(e, FsError::NotFound(_)) {
                    status = 2;
                }
            }
        }
    }
    if xml {
        if !p.has("noreport") {
            cx.outs("  <report>\n");
            if o.du {
                cx.outs(&format!("    <size>{used}</size>\n"));
            }
            cx.outs(&format!("    <directories>{}</directories>\n", t.dirs));
            if !o.dirs_only {
                cx.outs(&format!("    <files>{}</files>\n", t.files));
            }
            cx.outs("  </report>\n");
        }
        cx.outs("</tree>\n");
        return status;
    }
    if json {
        if previous_root.is_some() {
            cx.outs("\n");
        }
        if p.has("noreport") {
            cx.outs("\n]\n");
        } else {
            // `--du` puts the size shown in all first.
            let size = if o.du {
                format!("\"size\":{used},")
            } else {
                String::new()
            };
            let files = if o.dirs_only {
                String::new()
            } else {
                format!(",\"files\":{}", t.files)
            };
            cx.outs(&format!(
                ",\n  {{\"type\":\"report\",{size}\"directories\":{}{files}}}\n]\n",
                t.dirs
            ));
        }
        return status;
    }
    if !p.has("noreport") {
        let dirs = plural(t.dirs, "directory", "directories");
        let counts = if o.dirs_only {
            dirs
        } else {
            format!("{dirs}, {}", plural(t.files, "file", "files"))
        };
        let line = if o.du {
            let size = size_column(used, &o);
            let unit = if o.human || o.si { "" } else { " bytes" };
            format!("\n {size}{unit} used in {counts}\n")
        } else {
            format!("\n{counts}\n")
        };
        cx.outs(&line);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(human: bool, si: bool) -> Opts {
        Opts {
            level: None,
            dirs_only: false,
            all: false,
            full_path: false,
            no_indent: false,
            include: Vec::new(),
            exclude: Vec::new(),
            fold: false,
            match_dirs: false,
            prune: false,
            file_limit: None,
            perms: false,
            inodes: false,
            owner: false,
            group: false,
            size: true,
            human,
            si,
            du: false,
            date: None,
            classify: false,
            quote: false,
            raw: false,
            question: false,
            order: Order::Name,
            reverse: false,
            dirs_first: None,
            utf8: false,
        }
    }

    #[test]
    fn sizes_as_tree_prints_them() {
        let plain = opts(false, false);
        assert_eq!(size_column(103, &plain), "        103");
        let h = opts(true, false);
        assert_eq!(size_column(103, &h), " 103");
        assert_eq!(size_column(4096, &h), "4.0K");
        assert_eq!(size_column(10239, &h), "10.0K");
        assert_eq!(size_column(16764, &h), " 16K");
        assert_eq!(size_column(3 << 20, &h), "3.0M");
        let si = opts(false, true);
        assert_eq!(size_column(4096, &si), "4.1k");
    }

    #[test]
    fn names_escaped_as_in_the_c_locale() {
        let o = opts(false, false);
        assert_eq!(escape("my notes.md", &o), "my\\ notes.md");
        assert_eq!(escape("b\\c", &o), "b\\\\c");
        assert_eq!(escape("t\tab", &o), "t\\tab");
        assert_eq!(escape("\u{e9}.txt", &o), "\\303\\251.txt");
    }
}

/// `tree -v`: glibc's `strverscmp`, which tree sorts versions with. Runs
/// of digits compare as numbers, and a run with leading zeros as a
/// fraction (`1.010` before `1.09`); unlike `ls -v` (gnulib's
/// `filevercmp`), file suffixes get no special treatment, so `file` comes
/// before `file~`.
fn strverscmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    // States: normal, integral part, fractional part, leading zeros.
    const N: usize = 0;
    const I: usize = 3;
    const F: usize = 6;
    const Z: usize = 9;
    const CMP: i8 = 2;
    const LEN: i8 = 3;
    const NEXT: [usize; 12] = [N, I, Z, N, I, I, N, F, F, N, F, Z];
    #[rustfmt::skip]
    const RESULT: [i8; 36] = [
        CMP, CMP, CMP, CMP, LEN, CMP, CMP, CMP, CMP,
        CMP, -1, -1, 1, LEN, LEN, 1, LEN, LEN,
        CMP, CMP, CMP, CMP, CMP, CMP, CMP, CMP, CMP,
        CMP, 1, 1, -1, CMP, CMP, -1, CMP, CMP,
    ];
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let class = |c: u8| usize::from(c == b'0') + usize::from(c.is_ascii_digit());
    let (mut i, mut c1, mut c2) = (0, at(a, 0), at(b, 0));
    let mut state = N + class(c1);
    while c1 == c2 {
        if c1 == 0 {
            return std::cmp::Ordering::Equal;
        }
        state = NEXT[state];
        i += 1;
        c1 = at(a, i);
        c2 = at(b, i);
        state += class(c1);
    }
    let diff = i32::from(c1) - i32::from(c2);
    let r = match RESULT[state * 3 + class(c2)] {
        CMP => diff,
        LEN => {
            let mut k = i;
            loop {
                if !at(a, k).is_ascii_digit() {
                    break if at(b, k).is_ascii_digit() { -1 } else { diff };
                }
                if !at(b, k).is_ascii_digit() {
                    break 1;
                }
                k += 1;
            }
        }
        other => i32::from(other),
    };
    r.cmp(&0)
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod strverscmp_tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    /// Every pair of a few hundred names, ordered by this `strverscmp` and
    /// by glibc's own (through Python's `ctypes`; the crate allows no
    /// unsafe code to call it directly).
    #[test]
    fn matches_glibc() {
        let alphabet = ["0", "1", "9", "a", ".", "~", "00", "10", "b"];
        let mut names = vec![String::new()];
        for a in alphabet {
            for b in alphabet {
                for c in ["", "0", "1", "x"] {
                    names.push(format!("{a}{b}{c}"));
                }
            }
        }
        let script = "import ctypes, sys\n\
            libc = ctypes.CDLL('libc.so.6')\n\
            names = sys.stdin.read().split('\\n')\n\
            out = []\n\
            for x in names:\n    \
                for y in names:\n        \
                    r = libc.strverscmp(x.encode(), y.encode())\n        \
                    out.append('<' if r < 0 else '>' if r > 0 else '=')\n\
            print(''.join(out))\n";
        let mut child = Command::new("python3")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(names.join("\n").as_bytes())
            .expect("names written");
        let out = child.wait_with_output().expect("python3 ends");
        let glibc = String::from_utf8(out.stdout).expect("text");
        assert_eq!(glibc.trim_end().len(), names.len() * names.len());
        let mut theirs = glibc.trim_end().chars();
        for x in &names {
            for y in &names {
                let want = match theirs.next().expect("one answer per pair") {
                    '<' => std::cmp::Ordering::Less,
                    '>' => std::cmp::Ordering::Greater,
                    _ => std::cmp::Ordering::Equal,
                };
                assert_eq!(
                    super::strverscmp(x.as_bytes(), y.as_bytes()),
                    want,
                    "{x:?} {y:?}"
                );
            }
        }
    }
}
