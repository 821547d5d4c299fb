//! `xxd`: vim's hex dump, as Debian ships it (`xxd 2022-01-14`).
//!
//! Written after xxd's own way of building a line, as no crate prints it:
//! a line of spaces that each byte's hex digits (or bits) and character
//! are written into at computed columns. The layout follows from it, the
//! quirks too (`-e` with a column count that is not a multiple of the
//! group size lets the hex run into the text, as xxd's does). The options
//! are read as xxd reads them: by their first two characters, the last of
//! `-b -e -i -p` winning, numbers in C's notation (`0x10`, `010`). The
//! input is read a piece at a time, so that a large document is never
//! held whole.

use crate::exec::{Cx, Window};
use crate::fs::FsError;

/// How xxd lays out its dump (`hextype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Normal,
    /// `-b`: bits.
    Bits,
    /// `-e`: little-endian groups.
    Little,
    /// `-p`: hex digits only.
    Plain,
    /// `-i`: a C array.
    Include,
}

/// Where `-s` starts: `+` relative to where the input is (its start,
/// here), `-` from its end.
#[derive(Debug, Clone, Copy, Default)]
struct Seek {
    relative: bool,
    from_end: bool,
    n: u64,
}

#[derive(Debug)]
struct Opts {
    layout: Layout,
    autoskip: bool,
    upper: bool,
    capitalize: bool,
    decimal: bool,
    revert: bool,
    /// `-c`: 0 when not given (or given as 0, but for `-p`).
    cols: i64,
    cols_given: bool,
    /// `-g`: negative when not given.
    group: i64,
    /// `-o`: added to each address.
    display: u64,
    seek: Option<Seek>,
    /// `-l`: negative for no limit.
    length: i64,
    name: Option<String>,
    operands: Vec<String>,
}

const USAGE: &str = "Usage:
       xxd [options] [infile [outfile]]
    or
       xxd -r [-s [-]offset] [-c cols] [-ps] [infile [outfile]]
Options:
    -a          toggle autoskip: A single '*' replaces nul-lines. Default off.
    -b          binary digit dump (incompatible with -ps,-i,-r). Default hex.
    -C          capitalize variable names in C include file style (-i).
    -c cols     format <cols> octets per line. Default 16 (-i: 12, -ps: 30).
    -E          show characters in EBCDIC. Default ASCII.
    -e          little-endian dump (incompatible with -ps,-i,-r).
    -g bytes    number of octets per group in normal output. Default 2 (-e: 4).
    -h          print this summary.
    -i          output in C include file style.
    -l len      stop after <len> octets.
    -n name     set the variable name used in C include output (-i).
    -o off      add <off> to the displayed file position.
    -ps         output in postscript plain hexdump style.
    -r          reverse operation: convert (or patch) hexdump into binary.
    -r -s off   revert with <off> added to file positions found in hexdump.
    -d          show offset in decimal instead of hex.
    -s [+][-]seek  start at <seek> bytes abs. (or +: rel.) infile offset.
    -u          use upper case hex letters.
    -v          show version: \"xxd 2022-01-14 by Juergen Weigert et al.\".";

/// The widest line xxd dumps (`COLS`).
const MAX_COLS: i64 = 256;

/// C's `strtol(s, NULL, 0)`: leading blanks, a sign, then `0x` hex, `0`
/// octal or decimal digits, up to the first that is not one; none is 0.
fn c_number(s: &str) -> i64 {
    let s = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = match s.as_bytes() {
        [b'0', b'x' | b'X', d, ..] if d.is_ascii_hexdigit() => (16, &s[2..]),
        [b'0', ..] => (8, s),
        _ => (10, s),
    };
    let mut n: i64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else {
            break;
        };
        n = n
            .saturating_mul(i64::from(radix))
            .saturating_add(i64::from(d));
    }
    if negative { n.wrapping_neg() } else { n }
}

/// `-s`'s value: `+` and then `-` before the number.
fn seek(s: &str) -> Seek {
    let relative = s.starts_with('+');
    let s = &s[usize::from(relative)..];
    let from_end = s.starts_with('-');
    let s = &s[usize::from(from_end)..];
    Seek {
        relative,
        from_end,
        n: c_number(s).unsigned_abs(),
    }
}

/// What the command line asks for; `Err` is the exit status, the message
/// written.
fn parse(cx: &mut Cx<'_>, args: &[String]) -> Result<Opts, u8> {
    let mut o = Opts {
        layout: Layout::Normal,
        autoskip: false,
        upper: false,
        capitalize: false,
        decimal: false,
        revert: false,
        cols: 0,
        cols_given: false,
        group: -1,
        display: 0,
        seek: None,
        length: -1,
        name: None,
        operands: Vec::new(),
    };
    let usage = |cx: &mut Cx<'_>| {
        cx.err(USAGE);
        1
    };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        // `--ps` is `-ps`: one of two leading dashes goes.
        let pp = if arg.starts_with("--") && arg.len() > 2 {
            &arg[1..]
        } else {
            arg.as_str()
        };
        let rest = pp.get(2..).unwrap_or("");
        // A value in the same word unless the word is the long spelling
        // (`-c8`, `-cols 8`), else the next word.
        let mut value = |long: &str| -> Result<String, u8> {
            if !rest.is_empty() && !rest.starts_with(long) {
                return Ok(rest.to_owned());
            }
            match args.get(i) {
                Some(v) => {
                    i += 1;
                    Ok(v.clone())
                }
                None => Err(usage(cx)),
            }
        };
        match pp.get(..2).unwrap_or(pp) {
            "-a" => o.autoskip = !o.autoskip,
            "-b" => o.layout = Layout::Bits,
            "-e" => o.layout = Layout::Little,
            "-u" => o.upper = true,
            "-p" => o.layout = Layout::Plain,
            "-i" => o.layout = Layout::Include,
            "-C" => o.capitalize = true,
            "-d" => o.decimal = true,
            "-r" => o.revert = true,
            "-E" => {
                cx.err("xxd: -E (EBCDIC characters) is not supported by vfs-sh's xxd");
                return Err(1);
            }
            "-v" => {
                cx.err("xxd 2022-01-14 by Juergen Weigert et al.");
                return Err(0);
            }
            "-c" if rest.starts_with("apitalize") => o.capitalize = true,
            "-c" => {
                o.cols = c_number(&value("ols")?);
                o.cols_given = true;
            }
            "-g" => o.group = c_number(&value("roup")?),
            "-o" => {
                let v = value("ffset")?;
                let n = c_number(v.trim_start_matches('+'));
                o.display = n as u64;
            }
            "-s" => {
                let long = if rest.starts_with("eek") {
                    "eek"
                } else {
                    "kip"
                };
                o.seek = Some(seek(&value(long)?));
            }
            "-l" => o.length = c_number(&value("en")?),
            "-n" => o.name = Some(value("ame")?),
            _ if pp == "--" => {
                o.operands.extend(args[i..].iter().cloned());
                break;
            }
            _ if pp.len() > 1 && pp.starts_with('-') => return Err(usage(cx)),
            _ => {
                o.operands.extend(args[i - 1..].iter().cloned());
                break;
            }
        }
    }
    if o.operands.len() > 2 {
        return Err(usage(cx));
    }
    Ok(o)
}

/// `xxd [OPTIONS] [INFILE [OUTFILE]]`
pub(crate) fn xxd(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut o = match parse(cx, args) {
        Ok(o) => o,
        Err(code) => return code,
    };
    if o.revert {
        return revert(cx, &o);
    }
    if !o.cols_given || (o.cols == 0 && o.layout != Layout::Plain) {
        o.cols = match o.layout {
            Layout::Plain => 30,
            Layout::Include => 12,
            Layout::Bits => 6,
            Layout::Normal | Layout::Little => 16,
        };
    }
    if o.group < 0 {
        o.group = match o.layout {
            Layout::Bits => 1,
            Layout::Normal => 2,
            Layout::Little => 4,
            Layout::Plain | Layout::Include => 0,
        };
    }
    let dumped = matches!(o.layout, Layout::Normal | Layout::Bits | Layout::Little);
    if (o.layout == Layout::Plain && o.cols < 0)
        || (o.layout != Layout::Plain && o.cols < 1)
        || (dumped && o.cols > MAX_COLS)
    {
        cx.err(format_args!(
            "xxd: invalid number of columns (max. {MAX_COLS})."
        ));
        return 1;
    }
    if o.group < 1 || o.group > o.cols {
        o.group = o.cols;
    } else if o.layout == Layout::Little && (o.group & (o.group - 1)) != 0 {
        cx.err("xxd: number of octets per group must be a power of 2 with -e.");
        return 1;
    }
    let input = o.operands.first().filter(|f| *f != "-").cloned();
    let length = u64::try_from(o.length).ok();
    // Where the dump starts, and how much of the input is left out first.
    let (start, skip) = match &input {
        Some(f) => {
            let len = match cx.fs.metadata(f) {
                Ok(m) if m.is_dir() => None,
                Ok(m) => Some(m.len),
                Err(e) => {
                    cx.err(format_args!("xxd: {f}: {}", e.strerror()));
                    return 2;
                }
            };
            match (o.seek, len) {
                (Some(s), Some(len)) if s.from_end => {
                    // From the end, or back from the start: fseek fails
                    // before the start.
                    if s.relative && s.n > 0 || s.n > len {
                        cx.err("xxd: Sorry, cannot seek.");
                        return 4;
                    }
                    let at = if s.relative { 0 } else { len - s.n };
                    (at, at)
                }
                (Some(s), _) => (s.n, s.n),
                (None, _) => (0, 0),
            }
        }
        // Standard input is a pipe: it cannot seek back from its end, and
        // skipping past its end fails.
        None => match o.seek {
            Some(s) if s.from_end && (s.n > 0 || !s.relative) => {
                cx.err("xxd: Sorry, cannot seek.");
                return 4;
            }
            Some(s) => (s.n, s.n),
            None => (0, 0),
        },
    };
    if let Some(out) = o.operands.get(1).filter(|o| *o != "-" && *o != "/dev/null") {
        cx.err(format_args!(
            "xxd: {out}: cannot write: the filesystem is read-only"
        ));
        return 3;
    }
    let discard = o.operands.get(1).is_some_and(|o| o == "/dev/null");
    let name = o.name.clone().or_else(|| input.clone());
    let mut dump = Dump::new(&o, start.wrapping_add(o.display), name);
    let mut window = Window {
        skip,
        limit: length,
    };
    let path = input.as_deref().unwrap_or("-");
    let emit = |cx: &mut Cx<'_>, out: &[u8]| {
        if !discard {
            cx.out(out);
        }
    };
    let read = cx.stream_window(path, &mut window, |cx, piece| {
        // A dump is four times its input: written as it grows, not a
        // piece's worth at once.
        for part in piece.chunks(1 << 14) {
            dump.feed(part);
            if dump.out.len() >= 1 << 16 {
                emit(cx, &std::mem::take(&mut dump.out));
            }
        }
    });
    match read {
        Ok(()) if input.is_none() && window.skip > 0 => {
            cx.err("xxd: Sorry, cannot seek.");
            return 4;
        }
        Ok(()) => {}
        Err(FsError::IsADirectory(_)) => {
            // xxd opens a directory, then fails to read it.
            dump.begin();
            emit(cx, &std::mem::take(&mut dump.out));
            cx.err("xxd: Is a directory");
            return 2;
        }
        Err(e) => {
            emit(cx, &std::mem::take(&mut dump.out));
            cx.err(format_args!("xxd: {path}: {}", e.strerror()));
            return 2;
        }
    }
    dump.finish();
    emit(cx, &dump.out);
    0
}

/// The dump, fed a piece of the input at a time.
struct Dump {
    layout: Layout,
    cols: usize,
    group: usize,
    autoskip: bool,
    decimal: bool,
    capitalize: bool,
    hex: &'static [u8; 16],
    /// The variable `-i` declares, if any.
    name: Option<String>,
    began: bool,
    /// The address of the input's first byte (`-s`, `-o`).
    base: u64,
    /// Bytes dumped.
    n: u64,
    /// The position in the line (`p`), or in the output line for `-p`.
    p: usize,
    /// The line being built (xxd's `l`), `c` the column after its last
    /// character.
    line: Vec<u8>,
    c: usize,
    addr_len: usize,
    /// The column each group's hex starts at: `(grplen * x) / group`.
    grplen: usize,
    /// Non-zero bytes on the line, for `-a`.
    nonzero: usize,
    /// xxd's `xxdline` state: zero lines seen in a row, and the second.
    zero_seen: i32,
    second_zero: Vec<u8>,
    /// The last whole line, for `-a`'s flush at the end.
    last: Vec<u8>,
    out: Vec<u8>,
}

impl Dump {
    fn new(o: &Opts, base: u64, name: Option<String>) -> Dump {
        let cols = usize::try_from(o.cols).unwrap_or(0);
        let group = usize::try_from(o.group).unwrap_or(1).max(1);
        let grplen = if o.layout == Layout::Bits {
            8 * group + 1
        } else {
            2 * group + 1
        };
        Dump {
            layout: o.layout,
            cols,
            group,
            autoskip: o.autoskip,
            decimal: o.decimal,
            capitalize: o.capitalize,
            hex: if o.upper {
                b"0123456789ABCDEF"
            } else {
                b"0123456789abcdef"
            },
            name: if o.layout == Layout::Include {
                name
            } else {
                None
            },
            began: false,
            base,
            n: 0,
            p: if o.layout == Layout::Plain { cols } else { 0 },
            line: Vec::new(),
            c: 0,
            addr_len: 0,
            grplen,
            nonzero: 0,
            zero_seen: 0,
            second_zero: Vec::new(),
            last: Vec::new(),
            out: Vec::new(),
        }
    }

    /// The C array's name, as xxd spells it: `__` before a leading digit,
    /// anything but a letter or digit as `_`.
    fn c_name(&self, name: &str) -> String {
        let mut s = String::new();
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            s.push_str("__");
        }
        for c in name.chars() {
            s.push(match c {
                c if c.is_ascii_alphanumeric() && self.capitalize => c.to_ascii_uppercase(),
                c if c.is_ascii_alphanumeric() => c,
                _ => '_',
            });
        }
        s
    }

    /// `-i`'s declaration, before the first byte.
    fn begin(&mut self) {
        if std::mem::replace(&mut self.began, true) {
            return;
        }
        if let Some(name) = &self.name {
            let name = self.c_name(name);
            self.out
                .extend_from_slice(format!("unsigned char {name}[] = {{\n").as_bytes());
        }
    }

    fn feed(&mut self, piece: &[u8]) {
        self.begin();
        for &e in piece {
            match self.layout {
                Layout::Include => self.include(e),
                Layout::Plain => self.plain(e),
                _ => self.dump(e),
            }
        }
    }

    fn include(&mut self, e: u8) {
        let sep: &[u8] = if !self.n.is_multiple_of(self.cols as u64) {
            b", "
        } else if self.n == 0 {
            b"  "
        } else {
            b",\n  "
        };
        self.out.extend_from_slice(sep);
        self.out
            .extend_from_slice(if self.hex[10] == b'A' { b"0X" } else { b"0x" });
        self.push_hex(e);
        self.n += 1;
    }

    fn plain(&mut self, e: u8) {
        self.push_hex(e);
        self.n += 1;
        if self.cols > 0 {
            self.p -= 1;
            if self.p == 0 {
                self.out.push(b'\n');
                self.p = self.cols;
            }
        }
    }

    fn push_hex(&mut self, e: u8) {
        self.out.push(self.hex[usize::from(e >> 4)]);
        self.out.push(self.hex[usize::from(e & 15)]);
    }

    /// One byte of a `Normal`, `Bits` or `Little` dump, written into the
    /// line where xxd writes it.
    fn dump(&mut self, e: u8) {
        if self.p == 0 {
            let address = self.base.wrapping_add(self.n);
            let text = if self.decimal {
                format!("{:08}:", address as i64)
            } else {
                format!("{address:08x}:")
            };
            self.addr_len = text.len();
            // Room for the widest line: the hex (or bits) of every group
            // with its space, the gap, the text and the newline.
            let width =
                self.addr_len + 3 + self.grplen * self.cols.div_ceil(self.group) + self.cols + 2;
            self.line.clear();
            self.line.extend_from_slice(text.as_bytes());
            self.line.resize(width, b' ');
        }
        let x = if self.layout == Layout::Little {
            self.p ^ (self.group - 1)
        } else {
            self.p
        };
        let mut c = self.addr_len + 1 + (self.grplen * x) / self.group;
        if self.layout == Layout::Bits {
            for i in (0..8).rev() {
                self.put(c, if e & (1 << i) != 0 { b'1' } else { b'0' });
                c += 1;
            }
        } else {
            self.put(c, self.hex[usize::from(e >> 4)]);
            self.put(c + 1, self.hex[usize::from(e & 15)]);
        }
        if e != 0 {
            self.nonzero += 1;
        }
        let c = (self.grplen * self.cols - 1) / self.group + self.addr_len + 3 + self.p;
        self.put(c, if (b' '..0x7f).contains(&e) { e } else { b'.' });
        self.c = c + 1;
        self.n += 1;
        self.p += 1;
        if self.p == self.cols {
            let nz = if self.autoskip {
                self.nonzero as i32
            } else {
                1
            };
            self.end_line(nz);
            self.nonzero = 0;
            self.p = 0;
        }
    }

    /// Writes a character into the line, which grows if a column lies past
    /// its end (xxd's line is as wide as the widest layout).
    fn put(&mut self, at: usize, ch: u8) {
        if at >= self.line.len() {
            self.line.resize(at + 1, b' ');
        }
        self.line[at] = ch;
    }

    /// The line up to `c`, with its newline, to `xxdline`.
    fn end_line(&mut self, nz: i32) {
        self.line.truncate(self.c);
        self.line.push(b'\n');
        if self.autoskip {
            // `-a` shows the last line of a run of zeros at the end.
            self.last.clone_from(&self.line);
        }
        let line = std::mem::take(&mut self.line);
        self.xxdline(&line, nz);
        self.line = line;
    }

    /// xxd's `xxdline`: with `-a` (`nz` the line's non-zero bytes), a run
    /// of more than two lines of zeros shows its first line, a `*` and (at
    /// the end of the input) its last; `nz` is negative for that last one.
    fn xxdline(&mut self, line: &[u8], nz: i32) {
        if nz == 0 && self.zero_seen == 1 {
            self.second_zero = line.to_vec();
        }
        let shown = nz != 0 || {
            let first = self.zero_seen == 0;
            self.zero_seen += 1;
            first
        };
        if !shown {
            return;
        }
        if nz != 0 {
            if nz < 0 {
                self.zero_seen -= 1;
            }
            if self.zero_seen == 2 {
                let z = std::mem::take(&mut self.second_zero);
                self.out.extend_from_slice(&z);
            }
            if self.zero_seen > 2 {
                self.out.extend_from_slice(b"*\n");
            }
        }
        if nz >= 0 || self.zero_seen > 0 {
            self.out.extend_from_slice(line);
        }
        if nz != 0 {
            self.zero_seen = 0;
        }
    }

    fn finish(&mut self) {
        self.begin();
        match self.layout {
            Layout::Include => {
                if self.n > 0 {
                    self.out.push(b'\n');
                }
                if let Some(name) = &self.name {
                    let name = self.c_name(name);
                    let len = if self.capitalize { "LEN" } else { "len" };
                    self.out.extend_from_slice(
                        format!("}};\nunsigned int {name}_{len} = {};\n", self.n).as_bytes(),
                    );
                }
            }
            Layout::Plain if self.cols == 0 || self.p < self.cols => self.out.push(b'\n'),
            Layout::Plain => {}
            _ if self.p > 0 => self.end_line(1),
            _ if self.autoskip => {
                let last = std::mem::take(&mut self.last);
                self.xxdline(&last, -1);
            }
            _ => {}
        }
    }
}

/// `xxd -r [-p]`: a dump back to bytes.
fn revert(cx: &mut Cx<'_>, o: &Opts) -> u8 {
    if matches!(o.layout, Layout::Include | Layout::Little | Layout::Bits) {
        cx.err("xxd: Sorry, cannot revert this type of hexdump");
        return 255;
    }
    let op = o.operands.first().map_or("-", String::as_str).to_owned();
    let data = match cx.read_file_operand(&op) {
        Ok(d) => d,
        Err(e) => {
            cx.err(format_args!("xxd: {op}: {}", e.strerror()));
            return 2;
        }
    };
    if let Some(out) = o.operands.get(1).filter(|o| *o != "-") {
        cx.err(format_args!(
            "xxd: {out}: cannot write: the filesystem is read-only"
        ));
        return 3;
    }
    let plain = o.layout == Layout::Plain;
    let cols = match usize::try_from(o.cols) {
        Ok(n) if o.cols_given && n > 0 => n,
        _ if plain => 30,
        _ => 16,
    };
    let (bytes, err) = xxd_revert(&data, cols, plain);
    cx.out(&bytes);
    if let Some(msg) = err {
        cx.err(format_args!("xxd: {msg}"));
        return 5;
    }
    0
}

/// `xxd -r [-p]`: a hex dump back to bytes, read as xxd's `huntype` reads
/// it (written after it, as no crate reads xxd's dumps): with `-p`, hex
/// digit pairs anywhere, white space ignored; without, an offset before
/// each line's digits (a gap is filled with NULs) and at most `cols` bytes
/// a line, the text column ignored. A single garbage character breaks a
/// pair; three in a row (two after a byte) end the line.
fn xxd_revert(data: &[u8], cols: usize, plain: bool) -> (Vec<u8>, Option<&'static str>) {
    let digit = |c: u8| char::from(c).to_digit(16).map_or(-1, |d| d as i64);
    let mut out = Vec::new();
    let (mut n1, mut n2) = (-1i64, 0i64);
    let mut ignore = true;
    let mut p = cols;
    let (mut have, mut want) = (0usize, 0usize);
    let mut i = 0;
    while i < data.len() {
        let mut c = Some(data[i]);
        i += 1;
        let byte = data[i - 1];
        if byte == b'\r' || (plain && matches!(byte, b' ' | b'\n' | b'\t')) {
            continue;
        }
        let n3 = n2;
        n2 = n1;
        n1 = digit(byte);
        if n1 < 0 && ignore {
            continue;
        }
        ignore = false;
        if !plain && p >= cols {
            // The offset, up to the first garbage character.
            if n1 < 0 {
                p = 0;
            } else {
                want = want.saturating_mul(16).saturating_add(n1 as usize);
            }
            continue;
        }
        if want != have {
            if want < have {
                return (out, Some("Sorry, cannot seek backwards."));
            }
            // A gap; a huge offset is cut where the output cap would be.
            let fill = (want - have).min(1 << 21);
            out.resize(out.len() + fill, 0);
            have = want;
        }
        let mut skip_line = false;
        if n2 >= 0 && n1 >= 0 {
            out.push(((n2 << 4) | n1) as u8);
            have += 1;
            want += 1;
            n1 = -1;
            if !plain {
                p += 1;
                skip_line = p >= cols;
            }
        } else if n1 < 0 && n2 < 0 && n3 < 0 {
            skip_line = true;
        }
        if skip_line {
            c = None;
            while i < data.len() {
                i += 1;
                if data[i - 1] == b'\n' {
                    c = Some(b'\n');
                    break;
                }
            }
        }
        if c == Some(b'\n') {
            if !plain {
                want = 0;
            }
            p = cols;
            ignore = true;
        }
    }
    (out, None)
}
