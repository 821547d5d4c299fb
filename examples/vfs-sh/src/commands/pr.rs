//! `pr`: GNU pr's single-column pagination. Pages of 66 lines: a 5-line
//! header (two blank lines, the date, the file name centered in 72
//! columns and `Page N`, two blank lines), 56 lines of text, a 5-line
//! trailer of blank lines; `-t`/`-T` drop headers, trailers and padding.
//! `-n`, `-N`, `-d`, `-o`, `-l`, `-h`, `-D`, `+FIRST[:LAST]` and form feeds
//! in the input behave as GNU's (coreutils' `pr.c`, its `print_page`,
//! `print_header` and `add_line_number`). Column layouts (`-COLUMN`, `-a`,
//! `-m`) are refused with a message that says so.

use crate::exec::Cx;

/// What GNU pr calls the page width for the header.
const HEADER_WIDTH: usize = 72;

struct Opts {
    length: usize,
    omit: bool,
    double: bool,
    margin: usize,
    header: Option<String>,
    date_format: String,
    /// `-n`: the separator and the digits.
    number: Option<(char, usize)>,
    first_number: u64,
    first_page: u64,
    last_page: u64,
    /// `-COLUMN`: columns down the page (balanced), or across with `-a`.
    columns: usize,
    across: bool,
    /// `-w`/`-W`: the page width for columns.
    width: usize,
    /// `-m`: the files side by side, one a column.
    merge: bool,
}

/// `pr [OPTION]... [FILE]...`
pub(crate) fn run(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut o = Opts {
        length: 66,
        omit: false,
        double: false,
        margin: 0,
        header: None,
        date_format: "%Y-%m-%d %H:%M".to_owned(),
        number: None,
        first_number: 1,
        first_page: 1,
        last_page: u64::MAX,
        columns: 1,
        across: false,
        width: HEADER_WIDTH,
        merge: false,
    };
    let mut files = Vec::new();
    let mut i = 0;
    let bad = |cx: &mut Cx<'_>, msg: String| {
        cx.err(format_args!("pr: {msg}"));
        cx.err("Try 'pr --help' for more information.");
        1
    };
    while let Some(a) = args.get(i) {
        i += 1;
        // The value of an option: the rest of the word or the next one.
        let mut value = |inline: &str| -> Option<String> {
            if inline.is_empty() {
                let v = args.get(i).cloned();
                i += 1;
                v
            } else {
                Some(inline.to_owned())
            }
        };
        if let Some(pages) = a.strip_prefix('+').or_else(|| a.strip_prefix("--pages=")) {
            let (first, last) = pages.split_once(':').unwrap_or((pages, ""));
            match (first.parse::<u64>(), last) {
                (Ok(f), "") if f > 0 => o.first_page = f,
                (Ok(f), l) if f > 0 && l.parse::<u64>().is_ok_and(|l| l >= f) => {
                    o.first_page = f;
                    o.last_page = l.parse().unwrap_or(u64::MAX);
                }
                _ => return bad(cx, format!("invalid page range '{pages}'")),
            }
            continue;
        }
        if a == "--" {
            files.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, v) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            match (name, v) {
                ("omit-header", _) | ("omit-pagination", _) => o.omit = true,
                ("double-space", _) => o.double = true,
                ("length", Some(v)) => match v.parse() {
                    Ok(n) => o.length = n,
                    Err(_) => {
                        return bad(
                            cx,
                            format!("'-l PAGE_LENGTH' invalid number of lines: '{v}'"),
                        );
                    }
                },
                ("indent", Some(v)) => match v.parse() {
                    Ok(n) => o.margin = n,
                    Err(_) => return bad(cx, format!("'-o MARGIN' invalid line offset: '{v}'")),
                },
                ("header", Some(v)) => o.header = Some(v.to_owned()),
                ("date-format", Some(v)) => o.date_format = v.to_owned(),
                ("number-lines", v) => o.number = Some(number_spec(v.unwrap_or(""))),
                ("first-line-number", Some(v)) => o.first_number = v.parse().unwrap_or(1),
                ("columns", Some(v)) => match v.parse::<usize>() {
                    Ok(n) if n > 0 => o.columns = n,
                    _ => return bad(cx, format!("invalid number of columns: '{v}'")),
                },
                ("across", None) => o.across = true,
                ("width" | "page-width", Some(v)) => match v.parse::<usize>() {
                    Ok(n) if n > 0 => o.width = n,
                    _ => {
                        return bad(
                            cx,
                            format!("'-w PAGE_WIDTH' invalid number of characters: '{v}'"),
                        );
                    }
                },
                ("merge", None) => o.merge = true,
                _ => return bad(cx, format!("unrecognized option '{a}'")),
            }
            continue;
        }
        let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) else {
            files.push(a.clone());
            continue;
        };
        if flags.bytes().all(|b| b.is_ascii_digit()) {
            match flags.parse::<usize>() {
                Ok(n) if n > 0 => o.columns = n,
                _ => return bad(cx, format!("invalid number of columns: '{flags}'")),
            }
            continue;
        }
        let mut after_digit = false;
        for (k, c) in flags.char_indices() {
            let rest = &flags[k + c.len_utf8()..];
            // Digits among the flags (`-3t`) are the number of columns.
            if let Some(d) = c.to_digit(10) {
                o.columns = if after_digit {
                    o.columns.saturating_mul(10).saturating_add(d as usize)
                } else {
                    d as usize
                };
                after_digit = true;
                continue;
            }
            after_digit = false;
            match c {
                't' | 'T' => o.omit = true,
                'd' => o.double = true,
                'r' | 'c' | 'v' | 'F' | 'f' | 'J' => {}
                'a' => o.across = true,
                'm' => o.merge = true,
                'n' => {
                    o.number = Some(number_spec(rest));
                    break;
                }
                'l' | 'o' | 'h' | 'D' | 'N' | 'w' | 'W' => {
                    let Some(v) = value(rest) else {
                        return bad(cx, format!("option requires an argument -- '{c}'"));
                    };
                    match c {
                        'l' => match v.parse() {
                            Ok(n) => o.length = n,
                            Err(_) => {
                                return bad(
                                    cx,
                                    format!("'-l PAGE_LENGTH' invalid number of lines: '{v}'"),
                                );
                            }
                        },
                        'o' => match v.parse() {
                            Ok(n) => o.margin = n,
                            Err(_) => {
                                return bad(cx, format!("'-o MARGIN' invalid line offset: '{v}'"));
                            }
                        },
                        'h' => o.header = Some(v),
                        'D' => o.date_format = v,
                        'N' => match v.parse() {
                            Ok(n) => o.first_number = n,
                            Err(_) => {
                                return bad(
                                    cx,
                                    format!("'-N NUMBER' invalid starting line number: '{v}'"),
                                );
                            }
                        },
                        // The page width matters to columns only.
                        _ => match v.parse::<usize>() {
                            Ok(n) if n > 0 => o.width = n,
                            _ => {
                                return bad(
                                    cx,
                                    format!("'-w PAGE_WIDTH' invalid number of characters: '{v}'"),
                                );
                            }
                        },
                    }
                    break;
                }
                // `-e` and `-i` take an optional argument glued to them.
                'e' | 'i' => break,
                // A column separator other than the default space.
                's' | 'S' => return columns_refused(cx),
                other => return bad(cx, format!("invalid option -- '{other}'")),
            }
        }
        if o.columns == 0 {
            return bad(cx, "invalid number of columns: '0'".to_owned());
        }
    }
    // A page of 10 lines or fewer has room for no header or trailer.
    if o.length <= 10 {
        o.omit = true;
    }
    if o.columns > 1 && o.width.saturating_sub(o.columns - 1) / o.columns < 1 {
        cx.err("pr: page width too narrow");
        return 1;
    }
    if files.is_empty() {
        files.push("-".to_owned());
    }
    if o.merge && o.columns > 1 {
        cx.err("pr: cannot specify number of columns when printing in parallel");
        return 1;
    }
    if o.merge && o.across {
        cx.err("pr: cannot specify both printing across and printing in parallel");
        return 1;
    }
    if o.merge && files.len() > 1 {
        return merge_files(cx, &o, &files);
    }
    let mut status = 0;
    let mut out = Vec::new();
    for f in &files {
        let (data, when, name) = if f == "-" {
            (cx.stdin(), Some(cx.env.now), String::new())
        } else {
            match cx.read_file_operand(f) {
                Ok(d) => {
                    let when = cx.fs.metadata(f).ok().and_then(|m| m.modified);
                    (d, when, f.clone())
                }
                Err(e) => {
                    cx.out(&out);
                    out.clear();
                    cx.err(format_args!("pr: {f}: {}", e.strerror()));
                    status = 1;
                    continue;
                }
            }
        };
        let secs = when.map_or(0, crate::time::epoch_seconds);
        let date = crate::time::strftime(&o.date_format, secs, 0);
        let title = o.header.clone().unwrap_or(name);
        paginate(&mut out, &o, &data, &date, &title);
        if out.len() >= 1 << 16 {
            cx.out(&out);
            out.clear();
        }
    }
    cx.out(&out);
    status
}

fn columns_refused(cx: &mut Cx<'_>) -> u8 {
    cx.err("pr: column separators (-s, -S) are not supported by vfs-sh's pr");
    1
}

/// `-n[SEP[DIGITS]]`: a separator (a TAB unless a non-digit comes first)
/// and the digits (5).
fn number_spec(s: &str) -> (char, usize) {
    let mut cs = s.chars().peekable();
    let sep = match cs.peek() {
        Some(c) if !c.is_ascii_digit() => {
            let c = *c;
            cs.next();
            c
        }
        _ => '\t',
    };
    let digits: String = cs.take_while(char::is_ascii_digit).collect();
    (sep, digits.parse().unwrap_or(5).clamp(1, 64))
}

/// Lines of text a page holds: the page less header and trailer, half
/// as many double spaced.
fn body_lines(o: &Opts) -> usize {
    let mut body = if o.omit {
        o.length
    } else {
        o.length.saturating_sub(10)
    };
    if o.double {
        body /= 2;
    }
    body.max(1)
}

/// The input's lines, each with whether a form feed ended it (a new page
/// follows; a newline right after the form feed belongs to it).
fn split_lines(data: &[u8]) -> Vec<(&[u8], bool)> {
    let mut lines = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        match rest.iter().position(|&b| b == b'\n' || b == 0x0c) {
            None => {
                lines.push((rest, false));
                rest = &[];
            }
            Some(k) => {
                let ff = rest[k] == 0x0c;
                lines.push((&rest[..k], ff));
                rest = &rest[k + 1..];
                if ff && rest.first() == Some(&b'\n') {
                    rest = &rest[1..];
                }
            }
        }
    }
    lines
}

/// The pages of one input.
fn paginate(out: &mut Vec<u8>, o: &Opts, data: &[u8], date: &str, title: &str) {
    if o.columns > 1 {
        columns(out, o, data, date, title);
        return;
    }
    let body = body_lines(o);
    let per_line = if o.double { 2 } else { 1 };
    let margin = " ".repeat(o.margin);
    let lines = split_lines(data);
    let mut number = o.first_number;
    let mut page = 1u64;
    let mut k = 0;
    while k < lines.len() {
        let printing = page >= o.first_page && page <= o.last_page;
        if page > o.last_page {
            break;
        }
        if printing && !o.omit {
            header(out, margin.as_bytes(), &margin, date, title, page);
        }
        let mut left = body * per_line;
        while left > 0 && k < lines.len() {
            let (text, ff) = lines[k];
            k += 1;
            // A form feed alone on its line is no line of text.
            let line_of_text = !(ff && text.is_empty());
            if printing && line_of_text {
                out.extend_from_slice(margin.as_bytes());
                if let Some((sep, digits)) = o.number {
                    let n = format!("{number:>digits$}");
                    out.extend_from_slice(&n.as_bytes()[n.len() - digits..]);
                    let mut b = [0; 4];
                    out.extend_from_slice(sep.encode_utf8(&mut b).as_bytes());
                }
                out.extend_from_slice(text);
                out.push(b'\n');
                if o.double {
                    out.push(b'\n');
                }
            }
            if line_of_text {
                number += 1;
                left -= per_line;
            }
            if ff {
                break;
            }
        }
        if printing && !o.omit {
            out.extend(std::iter::repeat_n(b'\n', left + 5));
        }
        page += 1;
    }
}

/// GNU pr's header: `lead` (the margin as the page writes it), two blank
/// lines, the margin, the date, the title centered and `Page N` in 72
/// columns, two blank lines.
fn header(out: &mut Vec<u8>, lead: &[u8], margin: &str, date: &str, title: &str, page: u64) {
    let page_text = format!("Page {page}");
    let width = |s: &str| s.chars().count();
    let available = HEADER_WIDTH
        .saturating_sub(width(date) + width(title))
        .saturating_sub(width(&page_text));
    let lhs = available / 2;
    let rhs = available - lhs;
    // printf's `%*s` of " ": at least the one space.
    let pad = |n: usize| " ".repeat(n.max(1));
    out.extend_from_slice(lead);
    out.extend_from_slice(
        format!(
            "\n\n{margin}{date}{}{title}{}{page_text}\n\n\n",
            pad(lhs),
            pad(rhs)
        )
        .as_bytes(),
    );
}

/// Where the next tab stop after column `h` is.
fn next_tab(h: isize) -> isize {
    h + 8 - h.rem_euclid(8)
}

/// One output line of a column page, as GNU pr writes it: spaces are held
/// back and written as tabs and spaces when something follows them.
#[derive(Default)]
struct Row {
    bytes: Vec<u8>,
    /// The display position written up to.
    pos: isize,
    /// Spaces held back (negative after moving left of `pos`).
    pending: isize,
}

impl Row {
    /// `print_white_space()`.
    fn white(&mut self) {
        let goal = self.pos + self.pending;
        let mut h = self.pos;
        while goal - h > 1 && next_tab(h) <= goal {
            self.bytes.push(b'\t');
            h = next_tab(h);
        }
        while h < goal {
            self.bytes.push(b' ');
            h += 1;
        }
        self.pos = goal;
        self.pending = 0;
    }

    /// `pad_across_to()` the place before a column's separator.
    fn pad_to(&mut self, start: isize) {
        if 1 < start {
            self.pending = start - 1 - self.pos;
        }
    }

    /// `print_sep_string()`: the separators held back (one space each),
    /// or at a line's first column its margin.
    fn separators(&mut self, seps: &mut usize) {
        if *seps == 0 {
            if self.pending > 0 {
                self.white();
            }
            return;
        }
        for _ in 0..*seps {
            self.pending += 1;
            if self.pending > 0 {
                self.white();
            }
        }
        *seps = 0;
    }

    /// `print_char()`.
    fn char(&mut self, b: u8) {
        if b == b' ' {
            self.pending += 1;
            return;
        }
        if self.pending > 0 {
            self.white();
        }
        if (0x20..0x7f).contains(&b) {
            self.pos += 1;
        } else if b == 0x08 {
            self.pos -= 1;
        }
        self.bytes.push(b);
    }
}

/// A header over columns: the margin before it in tabs and spaces.
fn column_header(out: &mut Vec<u8>, o: &Opts, date: &str, title: &str, page: u64) {
    let mut lead = Row {
        pending: o.margin as isize,
        ..Row::default()
    };
    lead.white();
    header(out, &lead.bytes, &" ".repeat(o.margin), date, title, page);
}

/// A line as a column keeps it: its number, its tabs as spaces, cut at
/// the column's width; with the width it takes.
fn column_line(
    number: Option<((char, usize), u64)>,
    text: &[u8],
    width: usize,
) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut at = 0usize;
    if let Some(((sep, digits), number)) = number {
        let n = format!("{number:>digits$}");
        out.extend_from_slice(&n.as_bytes()[n.len() - digits..]);
        // A TAB after the number is as many spaces as reach the next stop
        // from the number's width, in every column alike.
        let number_width = if sep == '\t' {
            digits + 8 - digits % 8
        } else {
            digits + 1
        };
        if sep == '\t' {
            out.extend(std::iter::repeat_n(b' ', number_width - digits));
        } else {
            let mut b = [0; 4];
            out.extend_from_slice(sep.encode_utf8(&mut b).as_bytes());
        }
        at = number_width;
    }
    for &b in text {
        let (clump, w): (Vec<u8>, isize) = match b {
            b'\t' => {
                let w = 8 - at % 8;
                (vec![b' '; w], w as isize)
            }
            0x20..=0x7e => (vec![b], 1),
            0x08 => (vec![b], -1),
            _ => (vec![b], 0),
        };
        let next = (at as isize + w).max(0) as usize;
        if next > width {
            break;
        }
        out.extend_from_slice(&clump);
        at = next;
    }
    (out, at)
}

/// Columns down the page, balanced (`-COLUMN`), or across it (`-a`): each
/// text column `width` wide (the page width less one space between
/// columns, shared out), lines cut to it.
fn columns(out: &mut Vec<u8>, o: &Opts, data: &[u8], date: &str, title: &str) {
    let cols = o.columns;
    let width = (o.width - (cols - 1)) / cols;
    let margin = o.margin as isize;
    let starts: Vec<isize> = (0..cols)
        .map(|k| {
            if k == 0 {
                margin + 1
            } else {
                margin + (k * width + k) as isize
            }
        })
        .collect();
    let body = body_lines(o);
    let lines = split_lines(data);
    let mut number = o.first_number;
    let mut page = 1u64;
    let mut k = 0;
    while k < lines.len() && page <= o.last_page {
        // This page's lines: up to a form feed or a full page.
        let mut taken = Vec::new();
        while taken.len() < body * cols && k < lines.len() {
            let (text, ff) = lines[k];
            k += 1;
            if !(ff && text.is_empty()) {
                taken.push(column_line(o.number.map(|n| (n, number)), text, width));
                number += 1;
            }
            if ff {
                break;
            }
        }
        let printing = page >= o.first_page;
        page += 1;
        if !printing || taken.is_empty() {
            continue;
        }
        // Which lines go in which column, row by row.
        let mut grid: Vec<Vec<Option<usize>>> = Vec::new();
        if o.across {
            for (i, _) in taken.iter().enumerate() {
                if i % cols == 0 {
                    grid.push(vec![None; cols]);
                }
                if let Some(row) = grid.last_mut() {
                    row[i % cols] = Some(i);
                }
            }
        } else {
            // `balance()`: the lines shared out, the first columns one
            // longer.
            let mut first = 0;
            let mut per = Vec::new();
            for c in 0..cols {
                let n = taken.len() / cols + usize::from(c < taken.len() % cols);
                per.push((first, n));
                first += n;
            }
            let rows = per.iter().map(|p| p.1).max().unwrap_or(0);
            for r in 0..rows {
                grid.push(per.iter().map(|&(f, n)| (r < n).then_some(f + r)).collect());
            }
        }
        if !o.omit {
            column_header(out, o, date, title, page - 1);
        }
        let mut left = body * if o.double { 2 } else { 1 };
        // Without headers, the input's last row is not double spaced: GNU
        // stops once the input has ended (met while filling this page).
        let input_ended = k == lines.len() && taken.len() < body * cols;
        let rows = grid.len();
        for (r, row_cells) in grid.iter().enumerate() {
            let mut row = Row::default();
            let mut seps = 0usize;
            for (c, cell) in row_cells.iter().enumerate() {
                if let Some(i) = cell {
                    let (text, w) = &taken[*i];
                    let start = starts[c];
                    row.pad_to(start);
                    row.separators(&mut seps);
                    for &b in text {
                        row.char(b);
                    }
                    if row.pending == 0 {
                        row.pos = start + *w as isize;
                        if start - 1 == margin {
                            row.pos -= 1;
                        }
                    }
                }
                seps += 1;
            }
            out.extend_from_slice(&row.bytes);
            out.push(b'\n');
            left = left.saturating_sub(1);
            if o.double && !(o.omit && input_ended && r + 1 == rows) {
                out.push(b'\n');
                left = left.saturating_sub(1);
            }
        }
        if !o.omit {
            out.extend(std::iter::repeat_n(b'\n', left + 5));
        }
    }
}

/// `-m`: the files side by side, each in a column as wide as the page
/// shares out among them (all of them, those that cannot be read too),
/// under one header with no file name; a file that has ended leaves its
/// column empty, padded to where it begins when a later column has text
/// (GNU's `align_column`). Only the first column is numbered.
fn merge_files(cx: &mut Cx<'_>, o: &Opts, names: &[String]) -> u8 {
    let mut status = 0;
    let mut datas = Vec::new();
    for f in names {
        let read = if f == "-" {
            Ok(cx.stdin())
        } else {
            cx.read_file_operand(f)
        };
        match read {
            Ok(d) => datas.push(d),
            Err(e) => {
                cx.err(format_args!("pr: {f}: {}", e.strerror()));
                status = 1;
            }
        }
    }
    if datas.is_empty() {
        return status;
    }
    let files: Vec<Vec<&[u8]>> = datas
        .iter()
        .map(|d| {
            let body = d.strip_suffix(b"\n").unwrap_or(d);
            if d.is_empty() {
                Vec::new()
            } else {
                body.split(|&b| b == b'\n').collect()
            }
        })
        .collect();
    let cols = files.len();
    let number_width = o.number.map_or(
        0,
        |(sep, d)| if sep == '\t' { d + 8 - d % 8 } else { d + 1 },
    );
    let width = o
        .width
        .saturating_sub(number_width)
        .saturating_sub(names.len() - 1)
        / names.len();
    if width < 1 {
        cx.err("pr: page width too narrow");
        return 1;
    }
    let margin = o.margin as isize;
    // `init_funcs()`: the first column holds the number too.
    let mut starts = vec![margin + 1];
    let mut next = margin + (width + number_width) as isize;
    for _ in 1..cols {
        starts.push(next + 1);
        next += 1 + width as isize;
    }
    let body = body_lines(o);
    let date = crate::time::strftime(&o.date_format, crate::time::epoch_seconds(cx.env.now), 0);
    let title = o.header.clone().unwrap_or_default();
    let mut at = vec![0usize; cols];
    let mut number = o.first_number;
    let mut page = 1u64;
    let mut out = Vec::new();
    // The number, as a column line starts with it.
    let numbered = |row: &mut Row, number: &mut u64| {
        if let Some((sep, digits)) = o.number {
            let n = format!("{:>digits$}", *number);
            *number += 1;
            for &b in &n.as_bytes()[n.len() - digits..] {
                row.char(b);
            }
            if sep == '\t' {
                for _ in digits..number_width {
                    row.char(b' ');
                }
            } else {
                let mut b = [0; 4];
                for &x in sep.encode_utf8(&mut b).as_bytes() {
                    row.char(x);
                }
            }
        }
    };
    while (0..cols).any(|c| at[c] < files[c].len()) && page <= o.last_page {
        let printing = page >= o.first_page;
        let mut rows_out = Vec::new();
        let mut rows = 0;
        while rows < body && (0..cols).any(|c| at[c] < files[c].len()) {
            rows += 1;
            let mut row = Row::default();
            let mut seps = 0usize;
            let mut empty_line = true;
            let mut align_empty = false;
            for c in 0..cols {
                let start = starts[c];
                if at[c] < files[c].len() {
                    let text = files[c][at[c]];
                    at[c] += 1;
                    if align_empty {
                        // The empty columns before this one, aligned.
                        let k = seps;
                        seps = 0;
                        for (j, &sj) in starts.iter().enumerate().take(k) {
                            row.pad_to(sj);
                            row.separators(&mut seps);
                            if j == 0 {
                                numbered(&mut row, &mut number);
                            }
                            seps += 1;
                        }
                        align_empty = false;
                    }
                    row.pad_to(start);
                    row.separators(&mut seps);
                    if c == 0 {
                        numbered(&mut row, &mut number);
                    }
                    empty_line = false;
                    let (clipped, _) = column_line(None, text, width);
                    for &b in &clipped {
                        row.char(b);
                    }
                } else if empty_line {
                    align_empty = true;
                } else {
                    // `align_column()`.
                    row.pad_to(start);
                    row.separators(&mut seps);
                    if c == 0 {
                        numbered(&mut row, &mut number);
                    }
                }
                seps += 1;
            }
            rows_out.push(row.bytes);
        }
        if printing {
            if !o.omit {
                column_header(&mut out, o, &date, &title, page);
            }
            // Each file is still open after its last line (GNU reads
            // line by line here), so every row is double spaced.
            let mut left = body * if o.double { 2 } else { 1 };
            for bytes in rows_out {
                out.extend_from_slice(&bytes);
                out.push(b'\n');
                left = left.saturating_sub(1);
                if o.double {
                    out.push(b'\n');
                    left = left.saturating_sub(1);
                }
            }
            if !o.omit {
                out.extend(std::iter::repeat_n(b'\n', left + 5));
            }
        }
        page += 1;
    }
    cx.out(&out);
    status
}
