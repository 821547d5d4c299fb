//! The commands vfs-sh knows, one module per command or family, and the
//! table that dispatches to them.

mod archive;
mod args;
mod awk;
mod bc;
mod bytes;
mod cal;
mod cat;
mod cut;
mod dd;
mod diff;
mod diffseq;
mod du;
mod echo;
mod find;
mod fmt;
mod grep;
pub(crate) mod headtail;
mod hexdump;
mod iconv;
mod jq;
mod ls;
mod misc;
mod od;
mod pr;
mod printf;
mod pyjson;
mod quote;
mod read;
mod sed;
mod size;
mod sort;
mod stat;
mod sys;
pub(crate) mod test;
mod text;
mod tr;
mod tree;
mod uniq;
mod unzip;
pub(crate) mod wc;
mod xargs;
mod xxd;

use crate::exec::Cx;
pub(crate) use args::{ArgError, Parsed, Spec, flag, optional, value};
pub(crate) use awk::check as awk_check;
pub(crate) use bc::check as bc_check;
pub(crate) use jq::check as jq_check;
pub(crate) use printf::run as printf;
pub(crate) use pyjson::check as json_tool_check;
pub(crate) use sed::check as sed_check;
pub(crate) use text::tab_stops_check;

/// A command's entry point: its context and its arguments (without its
/// name); returns the exit status.
type Run = fn(&mut Cx<'_>, &[String]) -> u8;

/// One command: its name, its entry point, and its one-line usage for
/// `help`.
struct Command {
    name: &'static str,
    run: Run,
    usage: &'static str,
}

const PYTHON_USAGE: &str = "python3 -m json.tool [--sort-keys] [--no-ensure-ascii] [--json-lines] [--indent N | --tab | --no-indent | --compact] [FILE]  (Python's JSON checker and pretty-printer; Python code runs with POST /v1/py)";

const COMMANDS: &[Command] = &[
    Command {
        name: "bc",
        run: bc::run,
        usage: "bc [-l] [FILE]...  (GNU bc's language: numbers of any size (up to a million digits), scale, ibase, obase, variables, arrays, define with auto and void, if/else, while, for, break, continue, return, print, strings, halt, quit, limits; -l's s c a l e j; no read())",
    },
    Command {
        name: "egrep",
        run: egrep,
        usage: "egrep ...  (grep -E)",
    },
    Command {
        name: "fgrep",
        run: fgrep,
        usage: "fgrep ...  (grep -F)",
    },
    Command {
        name: "fmt",
        run: fmt::run,
        usage: "fmt [-WIDTH] [-c|-t|-s] [-u] [-w WIDTH] [-g GOAL] [-p PREFIX] [FILE]...  (GNU fmt's paragraph filling)",
    },
    Command {
        name: "iconv",
        run: iconv::run,
        usage: "iconv [-f FROM] [-t TO[//TRANSLIT|//IGNORE]] [-c] [FILE]...  (UTF-8, ASCII, LATIN1, WINDOWS-1252, UTF-16, UTF-32; glibc's C-locale transliteration)",
    },
    Command {
        name: "pr",
        run: pr::run,
        usage: "pr [-COLUMN [-a]] [-m] [-t|-T] [-n[SEP[DIGITS]]] [-N NUMBER] [-d] [-o MARGIN] [-l LENGTH] [-w WIDTH] [-h HEADER] [-D FORMAT] [+FIRST[:LAST]] [FILE]...  (GNU pr's pages and columns; no -s/-S column separators)",
    },
    Command {
        name: "python3",
        run: |cx, args| pyjson::run(cx, "python3", args),
        usage: PYTHON_USAGE,
    },
    Command {
        name: "python",
        run: |cx, args| pyjson::run(cx, "python", args),
        usage: "python ...  (as python3)",
    },
    Command {
        name: "shuf",
        run: text::shuf,
        usage: "shuf [-n N] [-r] [-z] (-e ARG... | -i LO-HI | [FILE])  (a random order, seeded from the clock)",
    },
    Command {
        name: "zgrep",
        run: archive::zgrep,
        usage: "zgrep [GREP OPTION]... PATTERN [FILE]...  (grep over gzip-compressed or plain documents)",
    },
    Command {
        name: "less",
        run: less,
        usage: "less [FILE]...  (no terminal: prints like cat)",
    },
    Command {
        name: "more",
        run: more,
        usage: "more [FILE]...  (no terminal: prints like cat)",
    },
    Command {
        name: "whoami",
        run: sys::whoami,
        usage: "whoami  (root, who owns every document)",
    },
    Command {
        name: "id",
        run: sys::id,
        usage: "id [-u|-g|-G] [-n] [-r] [root]  (uid=0(root) gid=0(root) groups=0(root))",
    },
    Command {
        name: "groups",
        run: sys::groups,
        usage: "groups [root]",
    },
    Command {
        name: "uname",
        run: sys::uname,
        usage: "uname [-asnrvmpio]  (Linux; the node, release and version are vfsbox's, not the host's)",
    },
    Command {
        name: "tty",
        run: sys::tty,
        usage: "tty [-s]  (not a tty: a script has no terminal)",
    },
    Command {
        name: "logname",
        run: sys::logname,
        usage: "logname  (no login name: a script has no session)",
    },
    Command {
        name: "stty",
        run: sys::stty,
        usage: "stty  (standard input is no terminal)",
    },
    Command {
        name: "clear",
        run: sys::clear,
        usage: "clear  (no terminal: TERM is not exported)",
    },
    Command {
        name: "tput",
        run: sys::tput,
        usage: "tput [-T TYPE] CAPNAME  (no terminal: TERM is not exported)",
    },
    Command {
        name: "hostname",
        run: sys::hostname,
        usage: "hostname  (vfsbox)",
    },
    Command {
        name: "sleep",
        run: sleep,
        usage: "sleep DURATION  (returns at once: nothing in the sandbox changes while waiting)",
    },
    Command {
        name: "date",
        run: sys::date,
        usage: "date [-u] [-d STRING] [-s STRING (refused, as for a user who may not set the clock)] [-r FILE] [-I[FMT]] [--rfc-3339=FMT] [-R] [+FORMAT]  (UTC; -d takes GNU date strings: @SECONDS, 2024-01-31 [10:30[:15]] [+0100], 01/31/2024, Jan 31 2024, monday, last fri, 3 days ago, +1 month, yesterday)",
    },
    Command {
        name: "cal",
        run: cal::cal,
        usage: "cal [-1|-3|-y] [-j] [-A N] [-B N] [-d YYYY-MM] [-m MONTH[f|p]] [[MONTH] YEAR]  (Debian's cal: weeks from Sunday, the British switch of 1752)",
    },
    Command {
        name: "which",
        run: sys::which,
        usage: "which NAME...",
    },
    Command {
        name: "file",
        run: sys::file,
        usage: "file [-b] [-i] [-r] [--mime-type] [--mime-encoding] PATH...  (text, empty, directory, scripts and common binary formats)",
    },
    Command {
        name: "yes",
        run: text::yes,
        usage: "yes [STRING]...  (stops after 1 MiB)",
    },
    Command {
        name: "zegrep",
        run: |cx, args| {
            let mut a = vec!["-E".to_owned()];
            a.extend(args.iter().cloned());
            archive::zgrep(cx, &a)
        },
        usage: "zegrep ...  (zgrep -E)",
    },
    Command {
        name: "zfgrep",
        run: |cx, args| {
            let mut a = vec!["-F".to_owned()];
            a.extend(args.iter().cloned());
            archive::zgrep(cx, &a)
        },
        usage: "zfgrep ...  (zgrep -F)",
    },
    Command {
        name: "rgrep",
        run: |cx, args| {
            let mut a = vec!["-r".to_owned()];
            a.extend(args.iter().cloned());
            grep::grep(cx, &a)
        },
        usage: "rgrep ...  (grep -r)",
    },
    Command {
        name: "zless",
        run: archive::zless,
        usage: "zless [FILE]...  (no terminal: prints like zcat)",
    },
    Command {
        name: "zmore",
        run: archive::zmore,
        usage: "zmore [FILE]...  (no terminal: prints like zcat)",
    },
    Command {
        name: "zcat",
        run: archive::zcat,
        usage: "zcat [FILE]...  (gzip documents to standard output)",
    },
    Command {
        name: "gzip",
        run: archive::gzip,
        usage: "gzip (-dc | -l) [FILE]...  (reads only: compressing would write)",
    },
    Command {
        name: "gunzip",
        run: archive::gunzip_cmd,
        usage: "gunzip -c [FILE]...",
    },
    Command {
        name: "tar",
        run: archive::tar,
        usage: "tar (-t | -xO) [-v] [-z] [--wildcards] -f ARCHIVE [MEMBER]...  (lists or prints members; gzip detected)",
    },
    Command {
        name: "unzip",
        run: unzip::unzip,
        usage: "unzip (-l | -p | -t | -Z1) [-q[q]] [-C] ARCHIVE[.zip] [MEMBER]... [-x MEMBER...]  (lists or prints members; Office files are zip archives)",
    },
    Command {
        name: "zipinfo",
        run: unzip::zipinfo,
        usage: "zipinfo -1 ARCHIVE[.zip] [MEMBER]...",
    },
    Command {
        name: "base32",
        run: text::base32,
        usage: "base32 [-d] [-i] [-w COLS] [FILE]",
    },
    Command {
        name: "base64",
        run: text::base64,
        usage: "base64 [-d] [-i] [-w COLS] [FILE]",
    },
    Command {
        name: "dd",
        run: dd::run,
        usage: "dd [if=FILE] [of=/dev/stdout|/dev/null] [bs=N] [ibs=N] [obs=N] [skip=N] [count=N] [iflag=skip_bytes,count_bytes] [conv=ucase,lcase,swab,sync] [status=none|noxfer]  (reads only the range it copies)",
    },
    Command {
        name: "cmp",
        run: text::cmp,
        usage: "cmp [-b] [-l] [-s] [-n N] FILE1 [FILE2]",
    },
    Command {
        name: "column",
        run: text::column,
        usage: "column [-t] [-s SEPS] [-o SEP] [-c WIDTH] [-x] [-N NAMES [-d] [-J [-n NAME]]] [-R COLS] [-H COLS] [-O COLS] [-l N] [FILE]...",
    },
    Command {
        name: "comm",
        run: text::comm,
        usage: "comm [-1] [-2] [-3] [-z] [--total] [--output-delimiter=S] [--check-order|--nocheck-order] FILE1 FILE2",
    },
    Command {
        name: "diff",
        run: diff::run,
        usage: "diff [-c|-C N|-u|-U N|-y [-W N] [--suppress-common-lines] [-t]] [-q] [-s] [-r [-x PAT]...] [-N] [-i] [-w] [-b] [-Z] [-E] [-B] [--strip-trailing-cr] [-d] [-p] [-F RE] FILE1 FILE2  (normal, context, unified and side-by-side formats; GNU's edit script)",
    },
    Command {
        name: "du",
        run: du::run,
        usage: "du [-a] [-s] [-S] [-h] [-b] [-k] [-m] [-c] [-d N] [-t [-]SIZE] [--apparent-size] [--inodes] [--exclude=PAT] [--files0-from=F] [--time[=atime|ctime]] [--time-style=full-iso|long-iso|iso|+FORMAT] [PATH]...  (4 KiB blocks; a directory is 4096 bytes)",
    },
    Command {
        name: "expr",
        run: text::expr,
        usage: "expr EXPRESSION  (| & < <= = != >= > + - * / % : match substr index length ( ))",
    },
    Command {
        name: "fold",
        run: text::fold,
        usage: "fold [-w N|-N] [-s] [-b] [FILE]...",
    },
    Command {
        name: "join",
        run: text::join,
        usage: "join [-t C] [-1 F] [-2 F] [-j F] [-a N] [-v N] [-e S] [-o FMT|auto] [-i] FILE1 FILE2",
    },
    Command {
        name: "md5sum",
        run: bytes::md5sum,
        usage: "md5sum [-c [--quiet] [--status] [-w] [--strict] [--ignore-missing]] [-b|-t] [--tag] [-z] [FILE]...",
    },
    Command {
        name: "nl",
        run: text::nl,
        usage: "nl [-b STYLE] [-h STYLE] [-f STYLE] [-n ln|rn|rz] [-w N] [-s SEP] [-v N] [-i N] [-l N] [-p] [-d CC] [FILE]...  (STYLE: a t n pRE; \\:\\:\\: \\:\\: \\: start a page's header, body, footer)",
    },
    Command {
        name: "od",
        run: od::run,
        usage: "od [-A d|o|x|n] [-t a|c|d|o|u|x|f[SIZE][z]]... [-a -b -c -d -D -e -f -F -h -H -i -l -o -O -s -x -X] [-j N] [-N N] [-v] [-w[N]] [--endian=big|little] [FILE]...",
    },
    Command {
        name: "paste",
        run: text::paste,
        usage: "paste [-d LIST] [-s] [-z] [FILE]...",
    },
    Command {
        name: "readlink",
        run: text::readlink,
        usage: "readlink [-f|-e|-m] PATH...  (documents are not links)",
    },
    Command {
        name: "realpath",
        run: text::realpath,
        usage: "realpath [-e] [-m] [-q] [--relative-to=DIR] [--relative-base=DIR] PATH...",
    },
    Command {
        name: "rev",
        run: text::rev,
        usage: "rev [FILE]...",
    },
    Command {
        name: "seq",
        run: text::seq,
        usage: "seq [-s SEP] [-w] [-f FORMAT] [FIRST [INCREMENT]] LAST",
    },
    Command {
        name: "shasum",
        run: bytes::shasum,
        usage: "shasum [-a 1|224|256|384|512] [-b] [-c] [--quiet] [--status] [FILE]...",
    },
    Command {
        name: "b2sum",
        run: bytes::b2sum,
        usage: "b2sum [-l BITS] [-c [--quiet] [--status] [-w] [--strict] [--ignore-missing]] [-b|-t] [--tag] [-z] [FILE]...",
    },
    Command {
        name: "sha1sum",
        run: bytes::sha1sum,
        usage: "sha1sum [-c [--quiet] [--status] [-w] [--strict] [--ignore-missing]] [-b|-t] [--tag] [-z] [FILE]...",
    },
    Command {
        name: "sha224sum",
        run: bytes::sha224sum,
        usage: "sha224sum [-c [--quiet] [--status] [-w] [--strict] [--ignore-missing]] [-b|-t] [--tag] [-z] [FILE]...",
    },
    Command {
        name: "sha256sum",
        run: bytes::sha256sum,
        usage: "sha256sum [-c [--quiet] [--status] [-w] [--strict] [--ignore-missing]] [-b|-t] [--tag] [-z] [FILE]...",
    },
    Command {
        name: "sha384sum",
        run: bytes::sha384sum,
        usage: "sha384sum [-c [--quiet] [--status] [-w] [--strict] [--ignore-missing]] [-b|-t] [--tag] [-z] [FILE]...",
    },
    Command {
        name: "sha512sum",
        run: bytes::sha512sum,
        usage: "sha512sum [-c [--quiet] [--status] [-w] [--strict] [--ignore-missing]] [-b|-t] [--tag] [-z] [FILE]...",
    },
    Command {
        name: "jq",
        run: jq::run,
        usage: "jq [-r] [-j] [-c] [-n] [-s] [-R] [-e] [-S] [-a] [--tab] [--indent N] [--arg NAME VALUE] [--argjson NAME JSON] [--slurpfile NAME FILE] [--rawfile NAME FILE] [--args] [--jsonargs] [-f FILE] [--seq] FILTER [FILE]...  (jq 1.6's language, by jaq; no --stream, no modules)",
    },
    Command {
        name: "tac",
        run: text::tac,
        usage: "tac [-b] [-s SEP] [FILE]...",
    },
    Command {
        name: "touch",
        run: |cx, args| misc::read_only(cx, "touch", args),
        usage: "touch ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "mkdir",
        run: |cx, args| misc::read_only(cx, "mkdir", args),
        usage: "mkdir ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "rmdir",
        run: |cx, args| misc::read_only(cx, "rmdir", args),
        usage: "rmdir ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "rm",
        run: misc::rm,
        usage: "rm ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "unlink",
        run: |cx, args| misc::read_only(cx, "unlink", args),
        usage: "unlink ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "cp",
        run: |cx, args| misc::read_only(cx, "cp", args),
        usage: "cp ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "mv",
        run: |cx, args| misc::read_only(cx, "mv", args),
        usage: "mv ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "ln",
        run: |cx, args| misc::read_only(cx, "ln", args),
        usage: "ln ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "chmod",
        run: |cx, args| misc::read_only(cx, "chmod", args),
        usage: "chmod ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "chown",
        run: |cx, args| misc::read_only(cx, "chown", args),
        usage: "chown ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "chgrp",
        run: |cx, args| misc::read_only(cx, "chgrp", args),
        usage: "chgrp ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "truncate",
        run: |cx, args| misc::read_only(cx, "truncate", args),
        usage: "truncate ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "install",
        run: |cx, args| misc::read_only(cx, "install", args),
        usage: "install ...  (refused: the filesystem is read-only)",
    },
    Command {
        name: "expand",
        run: text::expand,
        usage: "expand [-t N|LIST] [-i] [FILE]...  (LIST: N,M,... with a last /N or +N)",
    },
    Command {
        name: "unexpand",
        run: text::unexpand,
        usage: "unexpand [-a] [-t N|LIST] [--first-only] [FILE]...",
    },
    Command {
        name: "numfmt",
        run: text::numfmt,
        usage: "numfmt [--from=si|iec|iec-i|auto] [--to=si|iec|iec-i] [--suffix=S] [--padding=N] [--field=N] [-d C] [--header[=N]] [--round=up|down|from-zero|towards-zero|nearest] [NUMBER]...",
    },
    Command {
        name: "factor",
        run: text::factor,
        usage: "factor [NUMBER]...",
    },
    Command {
        name: "split",
        run: |cx, args| misc::read_only(cx, "split", args),
        usage: "split ...  (refused: it writes files, and the filesystem is read-only)",
    },
    Command {
        name: "csplit",
        run: |cx, args| misc::read_only(cx, "csplit", args),
        usage: "csplit ...  (refused: it writes files, and the filesystem is read-only)",
    },
    Command {
        name: "cksum",
        run: bytes::cksum,
        usage: "cksum [FILE]...  (the POSIX CRC and the byte count)",
    },
    Command {
        name: "sum",
        run: bytes::sum_bsd,
        usage: "sum [FILE]...  (the BSD checksum and 1 KiB blocks)",
    },
    Command {
        name: "tee",
        run: text::tee,
        usage: "tee [-a] [FILE]...  (to standard output; a file would be written and fails: read-only)",
    },
    Command {
        name: "hexdump",
        run: |cx, args| hexdump::run(cx, args, false),
        usage: "hexdump [-b] [-c] [-C] [-d] [-o] [-x] [-e FORMAT]... [-f FORMAT_FILE] [-v] [-n LENGTH] [-s OFFSET] [FILE]...",
    },
    Command {
        name: "hd",
        run: |cx, args| hexdump::run(cx, args, true),
        usage: "hd [hexdump's options] [FILE]...  (hexdump -C, and any other format after it)",
    },
    Command {
        name: "strings",
        run: bytes::strings,
        usage: "strings [-n MIN|-MIN] [-t d|o|x] [-a] [FILE]...",
    },
    Command {
        name: "xxd",
        run: xxd::xxd,
        usage: "xxd [-a] [-b|-e|-i|-p] [-C] [-d] [-u] [-c N] [-g N] [-l N] [-n NAME] [-o N] [-s [+|-]N] [FILE] | xxd -r [-p] [-c N] [FILE]",
    },
    Command {
        name: "[",
        run: test::bracket,
        usage: "[ EXPR ]  (as test)",
    },
    Command {
        name: "basename",
        run: misc::basename,
        usage: "basename NAME [SUFFIX] | basename [-a] [-s SUFFIX] NAME...",
    },
    Command {
        name: "awk",
        run: awk::run,
        usage: "awk [-F FS] [-v VAR=VALUE]... ('PROGRAM' | -f FILE) [FILE | VAR=VALUE]...  (POSIX awk and gawk's common extensions: switch, BEGINFILE/ENDFILE, gensub, asort, strftime, PROCINFO[\"sorted_in\"], FIELDWIDTHS, FPAT..., system() and pipes run in vfs-sh)",
    },
    Command {
        name: "bash",
        run: bash,
        usage: "bash [-neuxo OPT] (-c SCRIPT [NAME [ARG]...] | -s [ARG]... | FILE [ARG]...)  (a new vfs-sh shell, speaking bash; -s, or no FILE, reads the script from standard input)",
    },
    Command {
        name: "cat",
        run: cat::run,
        usage: "cat [-n] [-b] [-s] [-E] [-T] [-v] [-A] [FILE]...",
    },
    Command {
        name: "cd",
        run: misc::cd,
        usage: "cd [DIR]  (no DIR or ~ means /)",
    },
    Command {
        name: "cut",
        run: cut::run,
        usage: "cut (-b LIST | -c LIST | -f LIST [-d DELIM] [-s]) [--complement] [--output-delimiter=S] [FILE]...  (LIST: 1,3-5,7-)",
    },
    Command {
        name: "dirname",
        run: misc::dirname,
        usage: "dirname NAME...",
    },
    Command {
        name: "echo",
        run: echo::run,
        usage: "echo [-n] [-e] [-E] [ARG]...",
    },
    Command {
        name: "false",
        run: misc::r#false,
        usage: "false",
    },
    Command {
        name: "find",
        run: find::run,
        usage: "find [-P|-L|-H] [PATH]... [-maxdepth N] [-mindepth N] [-type f|d] [-name -iname -path -ipath GLOB] [-regex -iregex RE] [-regextype T] [-mtime -mmin -atime -amin -ctime -cmin [+-]N] [-newer FILE] [-newerXY REF (XY: a c m, Y t: a date)] [-size [+-]N[ckMG]] [-empty] [-perm [-/]MODE (octal or u+x,g=s...)] [-xtype f|d] [-lname GLOB] [! -not -a -o , ( )] [-user -group NAME] [-uid -gid -inum -links [+-]N] [-samefile FILE] [-print -print0 -printf FMT -ls -prune -quit] [-exec -execdir CMD {} ; | {} +]",
    },
    Command {
        name: "gawk",
        run: awk::run,
        usage: "gawk ...  (as awk)",
    },
    Command {
        name: "mawk",
        run: awk::run,
        usage: "mawk ...  (as awk: gawk's language, which takes mawk's programs)",
    },
    Command {
        name: "nawk",
        run: awk::run,
        usage: "nawk ...  (as awk)",
    },
    Command {
        name: "grep",
        run: grep::grep,
        usage: "grep [-i -n -r -R -E -F -G -P -w -x -v -l -L -c -o -h -H -q -s -Z -z -a -I -b -T] [--binary-files=binary|text|without-match] [-A N -B N -C N -NUM] [-m N] [-d read|skip|recurse] [-e PATTERN]... [--include=GLOB] [--exclude=GLOB] [--exclude-dir=GLOB] [--smart-case] [--color[=always|never|auto]] PATTERN [FILE]...  (back-references in -G and -E; -P: Perl syntax with look-around and \\K)",
    },
    Command {
        name: "head",
        run: headtail::head,
        usage: "head [-n [-]N | -N | -c [-]N] [-q] [-v] [-z] [FILE]...",
    },
    Command {
        name: "help",
        run: help,
        usage: "help [-s] [NAME]...  (this list; with NAMEs, the usage of each)",
    },
    Command {
        name: "ls",
        run: ls::run,
        usage: "ls [-l -g -o -n -a -A -f -U -t -S -X -v -c -u -r -1 -m -C -x -R -h -d -s -i -p -F] [-Q -b -N -q] [--quoting-style=literal|shell|shell-always|shell-escape|shell-escape-always|c|c-maybe|escape|locale|clocale] [-w N] [--format=long|commas|across|vertical|single-column] [--file-type] [--indicator-style=none|slash|file-type|classify] [--group-directories-first] [--sort=none|time|size|extension|version|width] [--time=atime|ctime|birth] [--full-time] [--time-style=long-iso|full-iso|iso|+FORMAT] [-I PATTERN] [--hide=PATTERN] [-B] [--color[=always|never|auto]] [PATH]...  (-U, -f: the directory's own order; -C, -x: 80 columns or $COLUMNS)",
    },
    Command {
        name: "printf",
        run: printf::run,
        usage: "printf FORMAT [ARG]...  (%s %b %q %d %i %u %o %x %X %f %e %g %c %%, flags, width, precision, escapes)",
    },
    Command {
        name: "pwd",
        run: misc::pwd,
        usage: "pwd [-LP]",
    },
    Command {
        name: "rg",
        run: grep::rg,
        usage: "rg [-i -S -s -n -N -F -w -x -v -l -c -o -h -H -q] [-A N -B N -C N] [-m N] [-e PATTERN]... [-g GLOB] PATTERN [PATH]...  (recursive; Rust regex syntax)",
    },
    Command {
        name: "sed",
        run: sed::run,
        usage: "sed [-n] [-E] [-s] [-z] [-e SCRIPT]... [-f FILE] [SCRIPT] [FILE]...  (s y p P d D n N g G h H x b t T : = a i c l q Q r R z F e {}; addresses N $ /RE/ first~step addr,+N 0,/RE/ !)",
    },
    Command {
        name: "sh",
        run: sh,
        usage: "sh [-neuxo OPT] (-c SCRIPT [NAME [ARG]...] | -s [ARG]... | FILE [ARG]...)  (a new vfs-sh shell speaking POSIX sh, as dash does)",
    },
    Command {
        name: "sort",
        run: sort::run,
        usage: "sort [-r -n -h -V -g -M -d -i -u -f -b -s -z -m -R] [-c|-C|--check[=quiet]] [-t SEP] [-k F[.C][OPTS][,F[.C][OPTS]]]... [FILE]...  (-S, -T, --parallel accepted and ignored)",
    },
    Command {
        name: "stat",
        run: stat::run,
        usage: "stat [-c FORMAT | --printf FORMAT] FILE...  (FORMAT: %n %N %s %F %y %Y %x %X %z %Z %a %A %U %G %u %g %h %i %b %B %o %%)",
    },
    Command {
        name: "tail",
        run: headtail::tail,
        usage: "tail [-n [+]N | -N | -c [+]N] [-f] [-q] [-v] [-z] [FILE]...",
    },
    Command {
        name: "test",
        run: test::test,
        usage: "test EXPR  (-e -f -d -s -r -w -x -z -n, = != < >, -eq -ne -lt -le -gt -ge, -nt -ot, ! -a -o ( ))",
    },
    Command {
        name: "tr",
        run: tr::run,
        usage: "tr [-d] [-s] [-c] SET1 [SET2]  (ranges a-z, [:lower:] [:upper:] [:digit:] [:space:] [:alpha:] [:alnum:] [:punct:] [:blank:], escapes)",
    },
    Command {
        name: "tree",
        run: tree::run,
        usage: "tree [-adfilx] [-L N] [-P PAT] [-I PAT] [--ignore-case] [--matchdirs] [--prune] [--filelimit N] [-pugshDFQNq] [--inodes] [--si] [--du] [--timefmt FMT] [-v|-t|-c|-U|--sort=name|version|size|mtime] [-r] [--dirsfirst|--filesfirst] [--charset=C|UTF-8] [-J|-X] [--noreport] [DIR]...",
    },
    Command {
        name: "true",
        run: misc::r#true,
        usage: "true",
    },
    Command {
        name: "uniq",
        run: uniq::run,
        usage: "uniq [-c] [-d] [-D] [-u] [-i] [-f N] [-s N] [-w N] [-z] [--all-repeated[=METHOD]] [--group[=METHOD]] [INPUT [OUTPUT]]",
    },
    Command {
        name: "wc",
        run: wc::run,
        usage: "wc [-l] [-w] [-c] [-m] [-L] [--files0-from=F] [FILE]...",
    },
    Command {
        name: "xargs",
        run: xargs::run,
        usage: "xargs [-n N] [-L N] [-l[N]] [-I STR] [-i[STR]] [-0] [-d DELIM] [-a FILE] [-r] [-t] [COMMAND [ARG]...]  (runs vfs-sh commands)",
    },
];

/// The name a command has on `$PATH`: `/usr/bin/find` and `/bin/sh` are
/// `find` and `sh`; any other name is itself.
pub(crate) fn path_name(name: &str) -> &str {
    [
        "/usr/local/bin/",
        "/usr/bin/",
        "/bin/",
        "//bin/",
        "/usr/sbin/",
        "/sbin/",
    ]
    .iter()
    .find_map(|p| name.strip_prefix(p))
    .unwrap_or(name)
}

/// The names of the commands vfs-sh has.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    COMMANDS.iter().map(|c| c.name)
}

/// The usage line `help` shows for a command.
pub(crate) fn usage_of(name: &str) -> Option<&'static str> {
    find_command(name).map(|c| c.usage)
}

fn find_command(name: &str) -> Option<&'static Command> {
    let name = path_name(name);
    COMMANDS.iter().find(|c| c.name == name)
}

/// `egrep`: `grep -E`.
fn egrep(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut a = vec!["-E".to_owned()];
    a.extend(args.iter().cloned());
    grep::grep(cx, &a)
}

/// `fgrep`: `grep -F`.
fn fgrep(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let mut a = vec!["-F".to_owned()];
    a.extend(args.iter().cloned());
    grep::grep(cx, &a)
}

/// The operands of a pager: options (`-N`, `+NUM`, `+/PATTERN`) mean
/// nothing without a terminal and are dropped, with the value of those
/// that take one (less's `-p PATTERN`, `-x 4`).
fn pager_operands<'a>(args: &'a [String], with_value: &str) -> Vec<&'a String> {
    let mut ops = Vec::new();
    let mut only_files = false;
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if !only_files && a == "--" {
            only_files = true;
        } else if only_files || !(a.starts_with('-') || a.starts_with('+')) || a == "-" {
            ops.push(a);
        } else if !a.starts_with("--") && a.len() == 2 && a.starts_with('-') {
            skip = a[1..].chars().all(|c| with_value.contains(c));
        }
    }
    ops
}

/// less's options that take a value.
const LESS_VALUES: &str = "bhjkoOpPtTxyz#";

/// `less`: without a terminal, the files one after another, as less
/// prints to a pipe; its messages go to standard output too, without a
/// `less:` prefix, and the status is 0.
fn less(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let ops = pager_operands(args, LESS_VALUES);
    if ops.is_empty() {
        let d = cx.stdin();
        cx.out(&d);
        return 0;
    }
    for op in ops {
        match cx.read_file_operand(op) {
            Ok(d) => cx.out(&d),
            Err(crate::fs::FsError::IsADirectory(_)) => cx.outs(&format!("{op} is a directory\n")),
            Err(e) => cx.outs(&format!("{op}: {}\n", e.strerror())),
        }
    }
    0
}

/// `more`: without a terminal, each file under a `::::` header, as
/// util-linux's more prints to a pipe; a missing file is reported on
/// standard error, a directory on standard output, and the status is 0.
fn more(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    let ops = pager_operands(args, "n");
    if ops.is_empty() {
        return cat::run(cx, &[]);
    }
    for op in ops {
        match cx.read_operand(op) {
            Ok(d) => {
                cx.outs(&format!("::::::::::::::\n{op}\n::::::::::::::\n"));
                cx.out(&d);
            }
            Err(crate::fs::FsError::IsADirectory(_)) => {
                cx.outs(&format!("\n*** {op}: directory ***\n\n"));
            }
            Err(e) => {
                cx.err(format_args!("more: cannot open {op}: {}", e.strerror()));
            }
        }
    }
    0
}

/// `sleep DURATION`: checks the operand, then returns at once.
fn sleep(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    if args.is_empty() {
        cx.err("sleep: missing operand");
        cx.err("Try 'sleep --help' for more information.");
        return 1;
    }
    for a in args {
        let n = a.trim_end_matches(['s', 'm', 'h', 'd']);
        if n.parse::<f64>().is_err() && a != "infinity" {
            cx.err(format_args!("sleep: invalid time interval '{a}'"));
            cx.err("Try 'sleep --help' for more information.");
            return 1;
        }
    }
    0
}

/// The operands a `--files0-from=F` option names (`wc`, `du`): F's names,
/// each ended by a NUL (`-`: standard input), and whether they came from
/// a stream (so could not be looked at before counting begins). `Err`
/// carries the status after the message is printed.
pub(crate) fn files0_from(
    cx: &mut Cx<'_>,
    cmd: &str,
    from: &str,
    operands: &[String],
) -> Result<(Vec<String>, bool), u8> {
    if let Some(extra) = operands.first() {
        cx.err(format_args!(
            "{cmd}: extra operand {}",
            quote::quote(extra, true)
        ));
        cx.err("file operands cannot be combined with --files0-from");
        cx.err(format_args!("Try '{cmd} --help' for more information."));
        return Err(1);
    }
    let (data, stream) = if from == "-" {
        (cx.stdin(), true)
    } else {
        match cx.fs.read(from) {
            Ok(d) => (d, false),
            Err(e) => {
                cx.err(format_args!(
                    "{cmd}: cannot open {} for reading: {}",
                    quote::quote(from, true),
                    e.strerror()
                ));
                return Err(1);
            }
        }
    };
    let names = data
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| crate::lossless::decode(n).into_owned())
        .collect();
    Ok((names, stream))
}

/// What `NAME --version` prints: the GNU (or util-linux, jq, tree) tool
/// whose behaviour `NAME` follows, as Debian 12 has it (`versions.txt`).
fn version(name: &str) -> Option<&'static str> {
    const TEXT: &str = include_str!("versions.txt");
    let start = TEXT.find(&format!("\n@@ {name}\n"))? + name.len() + 5;
    let end = TEXT[start..]
        .find("\n@@ ")
        .map_or(TEXT.len(), |k| start + k + 1);
    Some(&TEXT[start..end])
}

/// Runs one command; unknown commands print an error and return 127.
pub(crate) fn dispatch(cx: &mut Cx<'_>, argv: &[String]) -> u8 {
    let Some((name, args)) = argv.split_first() else {
        return 0;
    };
    // find also takes its long options with one dash.
    let base = name.rsplit('/').next().unwrap_or(name);
    if args
        .first()
        .is_some_and(|a| a == "--version" || (base == "find" && a == "-version"))
        && find_command(name).is_some()
        && let Some(text) = version(base)
    {
        cx.outs(text);
        return 0;
    }
    match find_command(name) {
        Some(c) => (c.run)(cx, args),
        None if name.contains('/') => run_script_file(cx, name, args),
        // The wrappers the shell runs itself (`timeout`, `env`, `nice`...),
        // named by xargs or find -exec: a shell runs the command line.
        None if crate::shell::IN_SHELL_UTILITIES.contains(&name.as_str()) => {
            let line: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
            cx.run_shell(&line.join(" "), vec!["bash".to_owned()], false)
        }
        // Worded as bash's and dash's: vfs-sh has no such command.
        None => {
            if cx.env.whence.dash {
                cx.err(format_args!("vfs-sh: {name}: not found"));
            } else {
                cx.err(format_args!("vfs-sh: {name}: command not found"));
            }
            if let Some(why) = missing_why(base) {
                cx.err(format_args!("note: vfs-sh has no {base}: {why}"));
            }
            127
        }
    }
}

/// Why a program agents reach for is not in the sandbox, said after
/// bash's `command not found` so that the next command can do without it.
fn missing_why(name: &str) -> Option<&'static str> {
    Some(match name {
        "perl" | "ruby" | "node" | "nodejs" | "php" | "lua" | "Rscript" | "java" | "javac"
        | "gcc" | "cc" | "g++" | "clang" | "make" | "cmake" | "go" | "cargo" | "rustc" | "npm"
        | "npx" | "pip" | "pip3" => {
            "it runs no interpreters or compilers, only its own read-only tools \
             (`help` lists them); Python code runs in its own sandbox (POST /v1/py)"
        }
        "curl" | "wget" | "ssh" | "scp" | "nc" | "ping" | "ip" | "ifconfig" | "netstat" | "ss"
        | "dig" | "nslookup" => "the sandbox has no network",
        "vi" | "vim" | "nano" | "emacs" | "top" | "htop" | "watch" => {
            "a script has no terminal, and the documents are read-only (`cat`, `less` and \
             `head` print them)"
        }
        "sudo" | "su" | "apt" | "apt-get" | "yum" | "dnf" | "systemctl" | "service"
        | "journalctl" | "dmesg" | "mount" | "df" | "lsblk" | "free" | "ps" | "lsof" | "docker"
        | "crontab" => {
            "the sandbox is one shell over read-only documents, with no system, \
             processes or packages to show or manage"
        }
        "git" => {
            "the documents are files, not a repository (`find`, `grep -r` and `diff -r` read them)"
        }
        "bzip2" | "bunzip2" | "bzcat" | "xz" | "unxz" | "xzcat" | "zstd" | "7z" | "unrar" => {
            "it reads gzip (`zcat`, `gzip -dc`), tar and zip archives only"
        }
        "man" | "info" | "whatis" | "apropos" => {
            "no manual pages are installed; `help` lists every command and `help NAME` \
             gives its usage"
        }
        "locate" | "mlocate" | "plocate" | "updatedb" => {
            "there is no file index; `find / -name PATTERN` searches the documents"
        }
        "nproc" | "getconf" | "lscpu" => {
            "the sandbox shows nothing of the host's processors or limits; a script runs \
             on one thread"
        }
        _ => return None,
    })
}

/// Runs a shell script from the documents by its path (`./build.sh`,
/// `find -name '*.sh' -exec {} \;`), as the kernel would: it must be an
/// executable file; its `#!` line picks the shell (`sh` is dash, as on
/// Debian), and one without a `#!` line is run by bash from the shell and
/// by `sh` from `find -exec` and `xargs` (as `execvp` does). A script for
/// another interpreter (`python3`, `perl`) is not run.
fn run_script_file(cx: &mut Cx<'_>, path: &str, args: &[String]) -> u8 {
    let meta = match cx.fs.metadata(path) {
        Ok(m) => m,
        Err(e) => {
            cx.err(format_args!("vfs-sh: {path}: {}", e.strerror()));
            return if matches!(e, crate::fs::FsError::NotFound(_)) {
                127
            } else {
                126
            };
        }
    };
    if meta.is_dir() {
        cx.err(format_args!("vfs-sh: {path}: Is a directory"));
        return 126;
    }
    if cx.fs.mode(path).is_ok_and(|m| m & 0o111 == 0) {
        cx.err(format_args!("vfs-sh: {path}: Permission denied"));
        return 126;
    }
    let text = match cx.fs.read(path) {
        Ok(d) => crate::lossless::decode(&d).into_owned(),
        Err(e) => {
            cx.err(format_args!("vfs-sh: {path}: {}", e.strerror()));
            return 126;
        }
    };
    let posix = match interpreter(&text) {
        None => cx.depth > 0,
        Some("sh" | "dash") => true,
        Some("bash") => false,
        Some(other) => {
            cx.err(format_args!(
                "vfs-sh: {path}: its interpreter `{other}` is not available in vfs-sh"
            ));
            return 127;
        }
    };
    let mut params = vec![path.to_owned()];
    params.extend(args.iter().cloned());
    cx.run_shell_file(&text, params, posix)
}

/// The program a script's `#!` line names (`/usr/bin/env NAME` names
/// NAME), by its file name.
fn interpreter(text: &str) -> Option<&str> {
    let line = text.strip_prefix("#!")?.lines().next().unwrap_or("");
    let mut words = line.split_whitespace();
    let program = words.next()?;
    let program = if program.rsplit('/').next() == Some("env") {
        words.find(|w| !w.starts_with('-'))?
    } else {
        program
    };
    program.rsplit('/').next()
}

/// Whether `name` is a command vfs-sh can run (for `xargs`).
pub(crate) fn exists(name: &str) -> bool {
    find_command(name).is_some()
}

/// GNU's `argmatch`: a word or an unambiguous prefix of one names its
/// key; anything else is reported with the valid words.
pub(crate) fn argmatch(
    cx: &mut Cx<'_>,
    cmd: &str,
    option: &str,
    v: &str,
    table: &[(&[&str], &'static str)],
) -> Option<&'static str> {
    let exact = table.iter().find(|(words, _)| words.contains(&v));
    let prefixed: Vec<&'static str> = table
        .iter()
        .filter(|(words, _)| words.iter().any(|w| w.starts_with(v)))
        .map(|(_, k)| *k)
        .collect();
    let found = match (exact, prefixed.as_slice()) {
        (Some((_, k)), _) => Some(*k),
        (None, [k]) if !v.is_empty() => Some(*k),
        _ => None,
    };
    if found.is_none() {
        let what = if prefixed.len() > 1 {
            "ambiguous"
        } else {
            "invalid"
        };
        cx.err(format_args!("{cmd}: {what} argument '{v}' for '{option}'"));
        cx.err("Valid arguments are:");
        for (words, _) in table {
            let list: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
            cx.err(format_args!("  - {}", list.join(", ")));
        }
        cx.err(format_args!("Try '{cmd} --help' for more information."));
    }
    found
}

/// Parses a command's options; on `--help` prints its usage (status 0), on
/// a usage error prints GNU's two lines (status `code`).
pub(crate) fn options(
    cx: &mut Cx<'_>,
    cmd: &str,
    args: &[String],
    spec: &[Spec],
    code: u8,
) -> Result<Parsed, u8> {
    options_ordered(cx, cmd, args, spec, code, args::Order::Permute)
}

/// [`options`] with getopt's ordering rule spelled out.
pub(crate) fn options_ordered(
    cx: &mut Cx<'_>,
    cmd: &str,
    args: &[String],
    spec: &[Spec],
    code: u8,
    order: args::Order,
) -> Result<Parsed, u8> {
    match args::parse(cmd, args, spec, order) {
        Ok(p) => Ok(p),
        Err(ArgError::Help) => {
            if let Some(c) = find_command(cmd) {
                cx.outs(&format!("usage: {}\n", c.usage));
            }
            Err(0)
        }
        Err(ArgError::Bad(msg)) => {
            cx.err(msg);
            if cmd == "grep" {
                cx.err("Usage: grep [OPTION]... PATTERNS [FILE]...");
            }
            cx.err(format_args!("Try '{cmd} --help' for more information."));
            Err(code)
        }
    }
}

/// `sh`: runs a script in a new shell, as a child process would (nothing
/// it sets comes back).
fn sh(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    shell(cx, args, "sh")
}

/// `bash`: as `sh`, with `$0` named `bash`.
fn bash(cx: &mut Cx<'_>, args: &[String]) -> u8 {
    shell(cx, args, "bash")
}

/// Runs `NAME [OPTION]... (-c SCRIPT [ARG0 [ARG]...] | FILE [ARG]...)`;
/// `$0` is `name` when no ARG0 is given, as the invoked program's own name.
fn shell(cx: &mut Cx<'_>, args: &[String], name: &str) -> u8 {
    // The options as `set` commands on the script's first line, so that
    // its lines keep their numbers.
    let mut prelude = String::new();
    let mut i = 0;
    let mut script = None;
    // `-s`: the script is standard input, every operand a parameter.
    let mut from_stdin = false;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.as_str() {
            "-c" => {
                script = args.get(i).cloned();
                i += 1;
                break;
            }
            "--" => break,
            "-o" | "+o" => {
                if let Some(o) = args.get(i) {
                    prelude.push_str(&format!("set {a} {o}; "));
                }
                i += 1;
            }
            "-s" => from_stdin = true,
            "-i" | "-l" | "--login" | "--norc" | "--noprofile" | "--posix" => {}
            f if (f.starts_with('-') || f.starts_with('+')) && f.len() > 1 => {
                let flags: String = f[1..].chars().filter(|c| "eufxvn".contains(*c)).collect();
                if !flags.is_empty() {
                    prelude.push_str(&format!("set {}{flags}; ", &f[..1]));
                }
            }
            _ => {
                i -= 1;
                break;
            }
        }
    }
    let string = script.is_some();
    let (text, params) = match script {
        Some(s) => (s, args.get(i..).unwrap_or(&[]).to_vec()),
        None if from_stdin => {
            let mut p = vec![name.to_owned()];
            p.extend(args.get(i..).unwrap_or(&[]).iter().cloned());
            (crate::lossless::decode(&cx.stdin()).into_owned(), p)
        }
        None => match args.get(i) {
            Some(file) if file == "/dev/stdin" => {
                let mut p = vec![file.clone()];
                p.extend(args[i + 1..].iter().cloned());
                (crate::lossless::decode(&cx.stdin()).into_owned(), p)
            }
            Some(file) => match cx.fs.read(file) {
                Ok(data) => {
                    let mut p = vec![file.clone()];
                    p.extend(args[i + 1..].iter().cloned());
                    (crate::lossless::decode(&data).into_owned(), p)
                }
                Err(e) => return script_unreadable(cx, name, file, &e),
            },
            None => (
                crate::lossless::decode(&cx.stdin()).into_owned(),
                Vec::new(),
            ),
        },
    };
    let params = if params.is_empty() {
        vec![name.to_owned()]
    } else {
        params
    };
    let text = format!("{prelude}{text}");
    if string {
        cx.run_shell(&text, params, name != "bash")
    } else {
        cx.run_shell_file(&text, params, name != "bash")
    }
}

/// `bash FILE` or `sh FILE` when FILE cannot be read, as each shell
/// answers. bash looks a name without a `/` up on `$PATH` too, so `bash
/// tr` finds `/usr/bin/tr` and refuses it as a binary; dash does not.
fn script_unreadable(cx: &mut Cx<'_>, shell: &str, file: &str, e: &crate::fs::FsError) -> u8 {
    use crate::fs::FsError;
    match (shell, e) {
        ("sh", FsError::IsADirectory(_)) => 0,
        ("sh", _) => {
            cx.err(format_args!("sh: 0: cannot open {file}: No such file"));
            2
        }
        // The shell that could not open its script says so under its own
        // name, not the caller's line; a directory, under the file's.
        (_, FsError::IsADirectory(_)) => {
            cx.err(format_args!("{file}: {file}: Is a directory"));
            126
        }
        (_, FsError::NotFound(_)) if !file.contains('/') => match paths_of(file).first() {
            Some(path) => {
                cx.err(format_args!("{path}: {path}: cannot execute binary file"));
                126
            }
            None => {
                cx.err(format_args!("{shell}: {file}: No such file or directory"));
                127
            }
        },
        _ => {
            cx.err(format_args!("{shell}: {file}: {}", e.strerror()));
            127
        }
    }
}

/// Where `command -v` and `type` say a command lives.
pub(crate) fn path_of(name: &str) -> String {
    if name.contains('/') {
        return name.to_owned();
    }
    format!("/usr/bin/{name}")
}

/// Every place on `$PATH` a command is found (`type -a`, `which -a`):
/// `/usr/bin`, and `/bin` as a merged-/usr system links it; nothing for a
/// name that is no utility (`help` is bash's builtin only; the wrappers
/// vfs-sh runs in the shell, such as `timeout`, are utilities).
pub(crate) fn paths_of(name: &str) -> Vec<String> {
    // A path names itself, when a utility is there.
    if name.contains('/') {
        let utility = path_name(name);
        return if exists(name)
            || (utility != name && crate::shell::IN_SHELL_UTILITIES.contains(&utility))
        {
            vec![name.to_owned()]
        } else {
            Vec::new()
        };
    }
    // bash's builtins have no file, but for coreutils' own.
    let builtin_only = crate::shell::is_bash_builtin(name)
        && !matches!(
            name,
            "echo" | "printf" | "pwd" | "test" | "[" | "true" | "false"
        );
    let utility =
        (exists(name) && !builtin_only) || crate::shell::IN_SHELL_UTILITIES.contains(&name);
    if !utility {
        return Vec::new();
    }
    vec![path_of(name), format!("/bin/{name}")]
}

/// Quotes a value as bash's `set` prints it.
pub(crate) fn shell_quote(v: &str) -> String {
    if !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:,@%+=".contains(c))
    {
        return v.to_owned();
    }
    format!("'{}'", v.replace('\'', "'\\''"))
}

/// Decodes `$'...'` escapes.
pub(crate) fn unescape_ansi(s: &str, utf8: bool) -> (Vec<u8>, bool) {
    echo::unescape(s, echo::Dialect::Format, utf8)
}

pub(crate) use test::{binary as test_binary, unary as test_unary};

/// `help`: every command with the options it supports.
fn help(cx: &mut Cx<'_>, _args: &[String]) -> u8 {
    let mut s = String::from(
        "vfs-sh: a read-only shell over the document filesystem.\n\
         The language is bash's: ; && || | |& ! pipelines; if/elif/else, for (also for ((;;))), while,\n\
         until, case, { }, ( ), functions; variables, arrays, $VAR ${VAR:-x} ${#VAR} ${VAR%..} ${VAR#..}\n\
         ${VAR/a/b} ${VAR:1:2} ${VAR^^} ${VAR@Q} ${!PREFIX*}, $? $# $@ $1.., $(...) `...` $((...)) <(...),\n\
         [[ ]] (( )), declare -i -r -l -u -a -A -n, 'single' \"double\" $'ansi' quotes, globs * ? [...]\n\
         ** (shopt -s globstar), braces {a,b} {1..5}, here-documents <<EOF and here-strings <<<.\n\
         Redirections read documents (< FILE) or discard (>/dev/null 2>/dev/null 2>&1 &>/dev/null);\n\
         writing a file is refused: the filesystem is read-only.\n\
         Builtins: : . source cd exit return break continue shift set shopt unset export readonly local\n\
         declare typeset read mapfile readarray eval let type command builtin printf exec getopts env\n\
         printenv timeout nice ionice nohup stdbuf time trap wait umask ulimit hash alias unalias times\n\
         jobs disown enable help history pushd popd dirs bind (readline's listings: -p -P -l -v -V -q)\n\
         compgen (the shell's names, files, -W word lists).\n\
         Commands:\n",
    );
    let mut sorted: Vec<&Command> = COMMANDS.iter().collect();
    sorted.sort_by_key(|c| c.name);
    let width = sorted.iter().map(|c| c.name.len()).max().unwrap_or(0) + 1;
    for c in sorted {
        s.push_str(&format!("  {:<width$}{}\n", c.name, c.usage));
    }
    cx.outs(&s);
    0
}

/// Joins a directory as the user wrote it with an entry name.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Parses a non-negative count argument.
pub(crate) fn count(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().or(Some(u64::MAX))
}

/// The owner and group every document shows (`ls -l`, `stat`, `find -ls`,
/// `tree -u`), with id 0: the document filesystem has no users, and a
/// read-only tree owned by root is what a container shows.
pub(crate) const OWNER: &str = "root";

/// The link count Linux shows: 1 for a document, 2 plus its
/// subdirectories for a directory (which takes one listing).
pub(crate) fn links(cx: &mut Cx<'_>, path: &str, kind: crate::fs::Kind) -> u64 {
    match kind {
        crate::fs::Kind::File => 1,
        crate::fs::Kind::Dir => {
            2 + cx
                .fs
                .read_dir(path)
                .map_or(0, |es| es.iter().filter(|e| e.is_dir()).count() as u64)
        }
    }
}

/// The lines of `text`, split at `\n` only. A `\r` before it stays in
/// the line, as GNU's tools keep it: `str::lines` drops it, so a CRLF
/// document would compare equal to its LF copy and lose its `\r`s on
/// the way through.
pub(crate) fn lf_lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n').filter(move |_| !empty)
}

/// A variable's value in `environ` (the shell's, from `Cx::environ`),
/// when it is set and not empty.
pub(crate) fn env_value<'e>(environ: &'e [(String, String)], name: &str) -> Option<&'e str> {
    environ
        .iter()
        .find(|(n, v)| n == name && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

/// Whether the shell's locale (`LC_ALL`, else `LC_CTYPE`, else `LANG`, as
/// the C library picks it) is a UTF-8 one. vfs-sh starts in the C locale,
/// as a fresh container does; `export LC_ALL=C.UTF-8` switches the
/// commands that look (`tree`'s branches, `wc -m`) to UTF-8.
pub(crate) fn utf8_locale(cx: &Cx<'_>) -> bool {
    let env = (cx.environ)();
    let get = |k: &str| env_value(&env, k);
    get("LC_ALL")
        .or_else(|| get("LC_CTYPE"))
        .or_else(|| get("LANG"))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}
