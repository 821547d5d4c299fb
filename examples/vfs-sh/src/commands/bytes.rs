//! Tools that look at bytes: `md5sum`, `sha1sum`, `sha224sum`,
//! `sha256sum`, `sha384sum`, `sha512sum`, `b2sum` (with `-c`), `od`, `xxd`,
//! `hexdump` (`hd`) and `strings`.
//! The digests are the RustCrypto crates'.

use blake2::Blake2bVarCore;
use blake2::digest::block_api::{Buffer, UpdateCore, VariableOutputCore};
use md5::Md5;
use sha1::Sha1;
use sha2::digest::DynDigest;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

use super::quote::quote;
use super::{flag, options, value};
use crate::exec::Cx;
use crate::fs::FsError;

/// A digest to feed a piece at a time. BLAKE2b has its own arm because
/// `b2sum -l` picks its length at run time, which the fixed-size
/// `DynDigest` cannot say; the crate's core takes a length at run time
/// and leaves the buffering of blocks to its caller.
enum Hasher {
    Fixed(Box<dyn DynDigest>),
    Blake2b {
        core: Blake2bVarCore,
        buffer: Buffer<Blake2bVarCore>,
        bytes: usize,
    },
}

impl Hasher {
    /// `algo` is `md5`, `sha1`, `sha224`, `sha256`, `sha384`, `sha512` or
    /// `blake2b-BITS` (BITS a multiple of 8, at most 512, as `b2sum`
    /// checks before it gets here).
    fn new(algo: &str) -> Hasher {
        if let Some(bits) = algo.strip_prefix("blake2b-") {
            let bytes = bits.parse::<usize>().map_or(64, |b| b / 8);
            if let Ok(core) = Blake2bVarCore::new(bytes) {
                return Hasher::Blake2b {
                    core,
                    buffer: Buffer::<Blake2bVarCore>::default(),
                    bytes,
                };
            }
        }
        Hasher::Fixed(match algo {
            "md5" => Box::new(Md5::new()),
            "sha1" => Box::new(Sha1::new()),
            "sha224" => Box::new(Sha224::new()),
            "sha384" => Box::new(Sha384::new()),
            "sha512" => Box::new(Sha512::new()),
            _ => Box::new(Sha256::new()),
        })
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::Fixed(h) => h.update(data),
            Hasher::Blake2b { core, buffer, .. } => {
                buffer.digest_blocks(data, |blocks| core.update_blocks(blocks));
            }
        }
    }

    fn finish(self) -> String {
        match self {
            Hasher::Fixed(h) => hex(&h.finalize()),
            Hasher::Blake2b {
                mut core,
                mut buffer,
                bytes,
            } => {
                // The core writes the whole 64 bytes; BLAKE2b's shorter
                // digests are their start (its `TRUNC_SIDE` is `Left`).
                let mut full = Default::default();
                core.finalize_variable_core(&mut buffer, &mut full);
                hex(&full[..bytes])
            }
        }
    }
}

/// The name a tagged line (`--tag`) gives the digest: `MD5`, `SHA256`,
/// `BLAKE2b`, `BLAKE2b-256`.
fn tag_of(algo: &str) -> String {
    match algo.strip_prefix("blake2b-") {
        Some("512") => "BLAKE2b".to_owned(),
        Some(bits) => format!("BLAKE2b-{bits}"),
        None => algo.to_uppercase(),
    }
}

/// The digest a checksum line names: its tag (`ALGO (NAME) = HASH`) or,
/// untagged, the command's own digest; `b2sum` reads a line's length from
/// its tag or from its hash, as GNU's does. `None` for a malformed line.
fn check_line<'a>(algo: &str, line: &'a str) -> Option<(String, &'a str, &'a str)> {
    let blake = algo.starts_with("blake2b-");
    let tagged = if blake {
        line.strip_prefix("BLAKE2b").and_then(|r| {
            let (bits, r) = match r.strip_prefix('-') {
                Some(r) => {
                    let digits = r.bytes().take_while(u8::is_ascii_digit).count();
                    (r[..digits].parse::<usize>().ok()?, &r[digits..])
                }
                None => (512, r),
            };
            Some((format!("blake2b-{bits}"), r))
        })
    } else {
        line.strip_prefix(tag_of(algo).as_str())
            .map(|r| (algo.to_owned(), r))
    };
    let parsed = tagged
        .and_then(|(algo, r)| {
            let (name, hash) = r.strip_prefix(" (")?.rsplit_once(") = ")?;
            Some((algo, hash, name))
        })
        .or_else(|| {
            let (hash, name) = line.split_once(' ')?;
            let name = name.strip_prefix(['*', ' ']).unwrap_or(name);
            let algo = if blake {
                format!("blake2b-{}", hash.len() * 4)
            } else {
                algo.to_owned()
            };
            Some((algo, hash, name))
        })?;
    let (algo, hash, _) = &parsed;
    let want = match algo.strip_prefix("blake2b-") {
        Some(bits) => {
            bits.parse::<usize>()
                .ok()
                .filter(|b| b % 8 == 0 && (8..=512).contains(b))?
                / 4
        }
        None => Hasher::new(algo).finish().len(),
    };
    (hash.len() == want && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(parsed)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|x| format!("{x:02x}")).collect()
}

/// The digest of an operand, read a piece at a time (a large document is
/// never held whole).
fn digest_operand(cx: &mut Cx<'_>, algo: &str, op: &str) -> Result<String, FsError> {
    let mut h = Hasher::new(algo);
    cx.stream_file_operand(op, |_, piece| h.update(piece))?;
    Ok(h.finish())
}

fn read(cx: &mut Cx<'_>, op: &str) -> Result<Vec<u8>, String> {
    cx.read_file_operand(op)
        .map_err(|e| e.strerror().to_owned())
}

/// `md5sum`, `sha*sum`: `[-c] [--quiet] [--status] [-b|-t] [FILE]...`
fn sum(cx: &mut Cx<'_>, cmd: &str, algo: &str, args: &[String]) -> u8 {
    const SPEC: &[super::Spec] = &[
        flag('c', "check", "c"),
        flag('b', "binary", "b"),
        flag('t', "text", "t"),
        flag('\0', "quiet", "quiet"),
        flag('\0', "status", "status"),
        flag('w', "warn", "w"),
        flag('\0', "strict", "strict"),
        flag('\0', "tag", "tag"),
        flag('z', "zero", "z"),
        flag('\0', "ignore-missing", "ignore-missing"),
    ];
    let p = match options(cx, cmd, args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let ops = if p.operands.is_empty() {
        vec!["-".to_owned()]
    } else {
        p.operands.clone()
    };
    // `-b` and `-t`: the last one given wins.
    let mut binary = false;
    for a in args.iter().take_while(|a| *a != "--") {
        match a.as_str() {
            "--binary" => binary = true,
            "--text" => binary = false,
            s if s.starts_with('-') && !s.starts_with("--") => {
                if let Some(c) = s.chars().rev().find(|c| matches!(c, 'b' | 't')) {
                    binary = c == 'b';
                }
            }
            _ => {}
        }
    }
    // GNU's checks of the options, in its order.
    let check = p.has("c");
    let misuse = if check && p.has("z") {
        Some("the --zero option is not supported when verifying checksums".to_owned())
    } else if check && p.has("tag") {
        Some("the --tag option is meaningless when verifying checksums".to_owned())
    } else if check && (p.has("b") || p.has("t")) {
        Some("the --binary and --text options are meaningless when verifying checksums".to_owned())
    } else if check {
        None
    } else {
        ["ignore-missing", "status", "warn", "quiet", "strict"]
            .iter()
            .find(|o| p.has(if **o == "warn" { "w" } else { o }))
            .map(|o| format!("the --{o} option is meaningful only when verifying checksums"))
    };
    if let Some(why) = misuse {
        cx.err(format_args!("{cmd}: {why}"));
        cx.err(format_args!("Try '{cmd} --help' for more information."));
        return 1;
    }
    let tag = tag_of(algo);
    let mut status = 0;
    if p.has("c") {
        let (mut bad, mut missing, mut malformed) = (0, 0, 0);
        let mut out = String::new();
        for op in &ops {
            let list = match read(cx, op) {
                Ok(d) => crate::lossless::decode(&d).into_owned(),
                Err(why) => {
                    cx.err(format_args!("{cmd}: {}: {why}", quote(op, false)));
                    status = 1;
                    continue;
                }
            };
            let mut any = false;
            let mut verified_here = 0;
            for (n, line) in list.lines().enumerate() {
                // `HASH  NAME`, `HASH *NAME`, or the tagged `ALGO (NAME) = HASH`.
                let parsed = check_line(algo, line);
                let Some((line_algo, hash, name)) = parsed else {
                    malformed += 1;
                    if p.has("w") {
                        cx.outs(&std::mem::take(&mut out));
                        let list = if op == "-" { "standard input" } else { op };
                        cx.err(format_args!(
                            "{cmd}: {}: {}: improperly formatted {tag} checksum line",
                            quote(list, false),
                            n + 1
                        ));
                    }
                    continue;
                };
                any = true;
                let got = digest_operand(cx, &line_algo, name);
                if p.has("ignore-missing") && matches!(&got, Err(FsError::NotFound(_))) {
                    continue;
                }
                verified_here += 1;
                match got.map_err(|e| e.strerror().to_owned()) {
                    Ok(h) => {
                        if h.eq_ignore_ascii_case(hash) {
                            if !p.has("quiet") && !p.has("status") {
                                out.push_str(&format!("{name}: OK\n"));
                            }
                        } else {
                            bad += 1;
                            if !p.has("status") {
                                out.push_str(&format!("{name}: FAILED\n"));
                            }
                        }
                    }
                    Err(why) => {
                        missing += 1;
                        if !p.has("status") {
                            cx.outs(&std::mem::take(&mut out));
                            cx.err(format_args!("{cmd}: {}: {why}", quote(name, false)));
                            out.push_str(&format!("{name}: FAILED open or read\n"));
                        }
                    }
                }
            }
            if !any {
                cx.outs(&std::mem::take(&mut out));
                let list = if op == "-" { "standard input" } else { op };
                cx.err(format_args!(
                    "{cmd}: {}: no properly formatted checksum lines found",
                    quote(list, false)
                ));
                status = 1;
            } else if p.has("ignore-missing") && verified_here == 0 {
                cx.outs(&std::mem::take(&mut out));
                let list = if op == "-" { "standard input" } else { op };
                cx.err(format_args!(
                    "{cmd}: {}: no file was verified",
                    quote(list, false)
                ));
                status = 1;
            }
        }
        cx.outs(&out);
        if !p.has("status") {
            let plural = |n: usize, one: &str, many: &str| {
                if n == 1 {
                    one.to_owned()
                } else {
                    many.to_owned()
                }
            };
            if malformed > 0 && (bad + missing > 0 || status == 0) {
                cx.err(format_args!(
                    "{cmd}: WARNING: {malformed} {} improperly formatted",
                    plural(malformed, "line is", "lines are")
                ));
            }
            if missing > 0 {
                cx.err(format_args!(
                    "{cmd}: WARNING: {missing} listed {} could not be read",
                    plural(missing, "file", "files")
                ));
            }
            if bad > 0 {
                cx.err(format_args!(
                    "{cmd}: WARNING: {bad} computed {} did NOT match",
                    plural(bad, "checksum", "checksums")
                ));
            }
        }
        return u8::from(bad + missing > 0 || status != 0 || (p.has("strict") && malformed > 0));
    }
    let mut out = String::new();
    for op in &ops {
        match digest_operand(cx, algo, op).map_err(|e| e.strerror().to_owned()) {
            Ok(h) => {
                let end = if p.has("z") { '\0' } else { '\n' };
                if p.has("tag") {
                    out.push_str(&format!("{tag} ({op}) = {h}{end}"));
                } else {
                    let star = if binary { "*" } else { " " };
                    out.push_str(&format!("{h} {star}{op}{end}"));
                }
            }
            Err(why) => {
                cx.outs(&std::mem::take(&mut out));
                cx.err(format_args!("{cmd}: {}: {why}", quote(op, false)));
                status = 1;
            }
        }
    }
    cx.outs(&out);
    status
}

pub(crate) fn md5sum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    sum(cx, "md5sum", "md5", args)
}
/// `shasum [-a ALG]`: Perl's front to the SHA family, which prints as
/// `sha1sum` and its kin do.
pub(crate) fn shasum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut algo = "sha1";
    let (values, rest) = split_valued(args, "-a", "--algorithm");
    for value in values {
        algo = match value {
            Some("1") => "sha1",
            Some("224") => "sha224",
            Some("256") => "sha256",
            Some("384") => "sha384",
            Some("512") => "sha512",
            _ => {
                cx.err("shasum: Unrecognized algorithm");
                cx.err("Type shasum -h for help");
                return 1;
            }
        };
    }
    sum(cx, "shasum", algo, &rest)
}

/// Splits out every value of the option spelt `short` or `long` (as
/// `-a V`, `-aV`, `--long V` or `--long=V`; `None` when the value is
/// missing), in order, from the other arguments; `--` ends the options.
fn split_valued<'a>(
    args: &'a [String],
    short: &str,
    long: &str,
) -> (Vec<Option<&'a str>>, Vec<String>) {
    let mut values = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" {
            rest.extend(args[i - 1..].iter().cloned());
            break;
        }
        if a == short || a == long {
            values.push(args.get(i).map(String::as_str));
            i += 1;
        } else if let Some(v) = a.strip_prefix(long).and_then(|v| v.strip_prefix('=')) {
            values.push(Some(v));
        } else if let Some(v) = a.strip_prefix(short) {
            values.push(Some(v));
        } else {
            rest.push(a.clone());
        }
    }
    (values, rest)
}

/// `b2sum [-l BITS]`: BLAKE2b, 512 bits unless `-l` asks for fewer.
pub(crate) fn b2sum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut bits = 512;
    let (values, rest) = split_valued(args, "-l", "--length");
    for value in values {
        let Some(value) = value else {
            cx.err("b2sum: option requires an argument -- 'l'");
            cx.err("Try 'b2sum --help' for more information.");
            return 1;
        };
        let invalid = || format!("b2sum: invalid length: {}", quote(value, true));
        match value.parse::<u64>() {
            Ok(0) => bits = 512,
            Ok(n) if n > 512 => {
                cx.err(invalid());
                cx.err("b2sum: maximum digest length for 'BLAKE2b' is 512 bits");
                return 1;
            }
            Ok(n) if n % 8 != 0 => {
                cx.err(invalid());
                cx.err("b2sum: length is not a multiple of 8");
                return 1;
            }
            Ok(n) => bits = n,
            Err(_) => {
                cx.err(invalid());
                return 1;
            }
        }
    }
    sum(cx, "b2sum", &format!("blake2b-{bits}"), &rest)
}

pub(crate) fn sha1sum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    sum(cx, "sha1sum", "sha1", args)
}
pub(crate) fn sha224sum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    sum(cx, "sha224sum", "sha224", args)
}
pub(crate) fn sha256sum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    sum(cx, "sha256sum", "sha256", args)
}
pub(crate) fn sha384sum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    sum(cx, "sha384sum", "sha384", args)
}
pub(crate) fn sha512sum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    sum(cx, "sha512sum", "sha512", args)
}

/// Bytes as dump tools show them beside the hex: printable ASCII as it
/// is, anything else as `.`.
pub(crate) fn dotted(chunk: &[u8]) -> String {
    chunk
        .iter()
        .map(|&b| {
            if (0x20..0x7f).contains(&b) {
                char::from(b)
            } else {
                '.'
            }
        })
        .collect()
}

/// `strings [-n MIN] [-t d|o|x] [FILE]...`: runs of at least MIN (4)
/// printable characters (tab included), one a line.
pub(crate) fn strings(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    // `strings -8` is `strings -n 8`.
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix('-') {
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => format!("-n{n}"),
            _ => a.clone(),
        })
        .collect();
    const SPEC: &[super::Spec] = &[
        value('n', "bytes", "n"),
        value('t', "radix", "t"),
        flag('a', "all", "a"),
        flag('\0', "data", "a"),
    ];
    let p = match options(cx, "strings", &args, SPEC, 1) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let min = match p.value("n").map(str::parse::<usize>) {
        None => 4,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            cx.err(format_args!(
                "strings: invalid minimum string length {}",
                p.value("n").unwrap_or_default()
            ));
            return 1;
        }
    };
    let radix = p.value("t");
    if radix.is_some_and(|r| !matches!(r, "d" | "o" | "x")) {
        cx.err("strings: invalid radix; use d, o or x");
        return 1;
    }
    let operands = if p.operands.is_empty() {
        vec!["-".to_owned()]
    } else {
        p.operands.clone()
    };
    let mut status = 0;
    for op in &operands {
        let mut runs = Runs {
            min,
            radix,
            at: 0,
            pending: Vec::new(),
            shown: false,
            out: Vec::new(),
        };
        let read = cx.stream_file_operand(op, |cx, piece| {
            for part in piece.chunks(1 << 14) {
                runs.feed(part);
                if runs.out.len() >= 1 << 16 {
                    cx.out(&std::mem::take(&mut runs.out));
                }
            }
        });
        runs.feed(&[0]);
        cx.out(&runs.out);
        if let Err(e) = read {
            // binutils' wording, in its place among the output.
            if matches!(e, FsError::IsADirectory(_)) {
                cx.err(format_args!("strings: Warning: '{op}' is a directory"));
            } else {
                let why = e.strerror();
                let why = why.strip_suffix(" or directory").unwrap_or(why);
                cx.err(format_args!("strings: '{op}': {why}"));
            }
            status = 1;
        }
    }
    status
}

/// The runs of printable characters in one file, fed a piece at a time: a
/// run is held only until it is long enough to print (`min`), then printed
/// as it goes, so that a long one (a text file's line) is never held.
struct Runs<'r> {
    min: usize,
    radix: Option<&'r str>,
    /// The offset of the next byte fed.
    at: u64,
    /// The run so far, while it is shorter than `min`.
    pending: Vec<u8>,
    /// Whether the run is being printed.
    shown: bool,
    out: Vec<u8>,
}

impl Runs<'_> {
    fn feed(&mut self, piece: &[u8]) {
        for &b in piece {
            self.at += 1;
            if (0x20..0x7f).contains(&b) || b == b'\t' {
                if self.shown {
                    self.out.push(b);
                    continue;
                }
                self.pending.push(b);
                if self.pending.len() < self.min {
                    continue;
                }
                let start = self.at - self.pending.len() as u64;
                let prefix = match self.radix {
                    Some("d") => format!("{start:7} "),
                    Some("o") => format!("{start:7o} "),
                    Some(_) => format!("{start:7x} "),
                    None => String::new(),
                };
                self.out.extend_from_slice(prefix.as_bytes());
                self.out.append(&mut self.pending);
                self.shown = true;
            } else {
                if self.shown {
                    self.out.push(b'\n');
                    self.shown = false;
                }
                self.pending.clear();
            }
        }
    }
}

/// A checksum computed a piece at a time, so that a large document is
/// never held whole.
trait Checksum: Default {
    fn feed(&mut self, piece: &[u8]);
    /// The line printed for `len` bytes, naming the file when there is
    /// one.
    fn line(&self, len: u64, name: Option<&str>) -> String;
}

/// POSIX `cksum`'s CRC: polynomial 0x04C11DB7, most significant bit first,
/// the length appended in as few bytes as it takes, complemented.
#[derive(Default)]
struct PosixCrc(u32);

impl PosixCrc {
    fn step(crc: u32, byte: u8) -> u32 {
        let mut c = crc ^ (u32::from(byte) << 24);
        for _ in 0..8 {
            c = if c & 0x8000_0000 != 0 {
                (c << 1) ^ 0x04C1_1DB7
            } else {
                c << 1
            };
        }
        c
    }
}

impl Checksum for PosixCrc {
    fn feed(&mut self, piece: &[u8]) {
        self.0 = piece.iter().fold(self.0, |c, &b| PosixCrc::step(c, b));
    }

    fn line(&self, len: u64, name: Option<&str>) -> String {
        let mut crc = self.0;
        let mut rest = len;
        while rest > 0 {
            crc = PosixCrc::step(crc, (rest & 0xff) as u8);
            rest >>= 8;
        }
        let crc = !crc;
        match name {
            Some(n) => format!("{crc} {len} {n}\n"),
            None => format!("{crc} {len}\n"),
        }
    }
}

/// The BSD 16-bit checksum of `sum`, with 1 KiB blocks.
#[derive(Default)]
struct BsdSum(u32);

impl Checksum for BsdSum {
    fn feed(&mut self, piece: &[u8]) {
        for &b in piece {
            self.0 = (self.0 >> 1) + ((self.0 & 1) << 15);
            self.0 = (self.0 + u32::from(b)) & 0xffff;
        }
    }

    fn line(&self, len: u64, name: Option<&str>) -> String {
        let (s, blocks) = (self.0, len.div_ceil(1024));
        match name {
            Some(n) => format!("{s:05} {blocks:5} {n}\n"),
            None => format!("{s:05} {blocks:5}\n"),
        }
    }
}

/// `cksum [FILE]...`: the POSIX CRC and the byte count.
pub(crate) fn cksum(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    checksums::<PosixCrc>(cx, "cksum", args)
}

/// `sum [FILE]...`: the BSD 16-bit checksum and 1 KiB blocks.
pub(crate) fn sum_bsd(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    checksums::<BsdSum>(cx, "sum", args)
}

/// Computes `C` over each operand (standard input without one), a piece
/// at a time, naming the file when there is an operand.
fn checksums<C: Checksum>(cx: &mut Cx<'_>, cmd: &str, args: &[String]) -> u8 {
    let mut status = 0;
    let mut out = String::new();
    let stdin = ["-".to_owned()];
    let (ops, named) = if args.is_empty() {
        (&stdin[..], false)
    } else {
        (args, true)
    };
    for op in ops {
        let mut sum = C::default();
        let mut len = 0u64;
        // GNU cksum 9 takes a directory's failed read for its end: the
        // checksum of nothing, status 0 (`sum` reports the error).
        let empty_dir = cmd == "cksum" && op != "-" && cx.fs.metadata(op).is_ok_and(|m| m.is_dir());
        let streamed = if empty_dir {
            Ok(())
        } else {
            cx.stream_file_operand(op, |_, piece| {
                sum.feed(piece);
                len += piece.len() as u64;
            })
        };
        match streamed {
            Ok(()) => {
                let name = (named && op != "-").then_some(op.as_str());
                out.push_str(&sum.line(len, name));
            }
            Err(e) => {
                cx.outs(&std::mem::take(&mut out));
                cx.err(format_args!(
                    "{cmd}: {}: {}",
                    quote(op, false),
                    e.strerror()
                ));
                status = 1;
            }
        }
    }
    cx.outs(&out);
    status
}
