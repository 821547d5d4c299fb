//! The built-in Python (CPython 3.14 from componentize-py) against the
//! host's `python3` (3.11 here): the same code over the same tree, mounted
//! at `/files` in vfsbox and on disk for `python3`; stdout, the last line
//! of stderr and the exit status must match. Each script gets the tree's
//! root as `sys.argv[1]` and prints paths relative to it.
//!
//! Intended differences, asserted on their own: nothing can be written
//! (the host's `python3` may write the tree), and `errno` numbers are
//! WASI's (`ENOENT` is 44, not 2), so scripts print an error's class and
//! `strerror`, not its number. Version differences (3.14 against 3.11):
//! tracebacks above their last line (3.13 and later add suggestions and
//! colour hints), which is why only stderr's last line is compared; none
//! of the scripts below meets another. Directory order from `os.walk` and
//! `os.listdir` is the disk's (readdir) order on a local mount and name
//! order on the others, so the scripts sort.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use vfsbox_host::runtime::{Outcome, RuntimeOptions, Script, Stdin};
use vfsbox_host::{AuditLog, Limit, Limits, Report, RunSpec, Runtime, Vfs, python};

use crate::common::*;

/// The differential's tree.
const TREE: &[(&str, &str)] = &[
    (
        "README.md",
        "# Handbook\nStart here.\nRefunds are in policies.\n",
    ),
    (
        "data/sales.csv",
        "region,units,price\nnorth,12,2.50\nsouth,7,3.00\nnorth,5,2.50\neast,9,4.25\n",
    ),
    (
        "data/people.json",
        r#"[{"name": "Ada", "team": "core", "age": 36}, {"name": "Lin", "team": "ops", "age": 29}, {"name": "Bo", "team": "core", "age": 41}]"#,
    ),
    ("notes/a.txt", "alpha\nbeta\ngamma\n"),
    ("notes/b.txt", "alpha\nBETA\ngamma\ndelta\n"),
    (
        "logs/app.log",
        "2026-01-01 INFO start\n2026-01-01 ERROR disk full\n2026-01-02 WARN slow\n2026-01-02 ERROR timeout\n",
    ),
    ("notes/deep/x.txt", "deep\n"),
];

/// Code, and the stdin it reads. `root = sys.argv[1]` is prepended.
const SCRIPTS: &[(&str, &str)] = &[
    ("print('hello')", ""),
    ("print(sys.argv[2:])", ""),
    ("print(open(root + '/README.md').read(), end='')", ""),
    ("print(sorted(os.listdir(root)))", ""),
    (
        "for d, dirs, files in sorted(os.walk(root)):\n    print(os.path.relpath(d, root), sorted(dirs), sorted(files))",
        "",
    ),
    (
        "import pathlib\nprint(sorted(str(p.relative_to(root)) for p in pathlib.Path(root).rglob('*.txt')))",
        "",
    ),
    (
        "import glob\nprint(sorted(os.path.basename(p) for p in glob.glob(root + '/notes/*.txt')))",
        "",
    ),
    (
        "import csv\nrows = list(csv.DictReader(open(root + '/data/sales.csv')))\nprint(len(rows), sum(int(r['units']) * float(r['price']) for r in rows))",
        "",
    ),
    (
        "import csv, collections\nc = collections.Counter()\nfor r in csv.DictReader(open(root + '/data/sales.csv')):\n    c[r['region']] += int(r['units'])\nprint(c.most_common())",
        "",
    ),
    (
        "import json\npeople = json.load(open(root + '/data/people.json'))\nprint([p['name'] for p in people if p['team'] == 'core'])",
        "",
    ),
    (
        "import json\nprint(json.dumps(json.load(open(root + '/data/people.json'))[0], sort_keys=True, indent=2))",
        "",
    ),
    (
        "import re\nprint(re.findall(r'ERROR (.*)', open(root + '/logs/app.log').read()))",
        "",
    ),
    (
        "import collections\nwords = open(root + '/README.md').read().lower().split()\nprint(collections.Counter(words).most_common(2))",
        "",
    ),
    (
        "print(f\"{3.14159:.2f} {42:05d} {'x':>5}| {1e10:,.0f}\")",
        "",
    ),
    (
        "try:\n    {}['missing']\nexcept KeyError as e:\n    print('KeyError', e)",
        "",
    ),
    (
        "try:\n    open(root + '/missing.txt')\nexcept OSError as e:\n    print(type(e).__name__, e.strerror)",
        "",
    ),
    (
        "try:\n    open(root + '/notes')\nexcept OSError as e:\n    print(type(e).__name__, e.strerror)",
        "",
    ),
    ("sys.exit(3)", ""),
    ("print('before'); sys.exit('a message')", ""),
    ("print(sys.stdin.read().upper(), end='')", "hello\nworld\n"),
    (
        "for line in sys.stdin:\n    print(len(line))",
        "a\nbb\nccc\n",
    ),
    ("print(os.stat(root + '/notes/a.txt').st_size)", ""),
    (
        "print(os.path.isdir(root + '/notes'), os.path.isfile(root + '/notes/a.txt'), os.path.exists(root + '/nope'))",
        "",
    ),
    (
        "import statistics\nprint(statistics.mean([1, 2, 3, 4]), statistics.median([3, 1, 2]))",
        "",
    ),
    (
        "import datetime\nprint(datetime.date(2024, 1, 31) + datetime.timedelta(days=30))",
        "",
    ),
    (
        "import hashlib\nprint(hashlib.sha256(open(root + '/notes/a.txt', 'rb').read()).hexdigest())",
        "",
    ),
    (
        "print(sorted(['b10', 'a2', 'c1'], key=lambda s: int(s[1:])), [x * x for x in range(5) if x % 2])",
        "",
    ),
    (
        "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n    y: str = 'y'\nprint(P(1), P(2, 'z') == P(2, 'z'))",
        "",
    ),
    (
        "import difflib\na = open(root + '/notes/a.txt').readlines()\nb = open(root + '/notes/b.txt').readlines()\nprint(''.join(difflib.unified_diff(a, b, 'a', 'b')), end='')",
        "",
    ),
    (
        "import textwrap\nprint(textwrap.fill('the quick brown fox jumps over the lazy dog ' * 3, 30))",
        "",
    ),
    ("raise ValueError('bad value')", ""),
    ("int('x')", ""),
    (
        "import io, zipfile\nb = io.BytesIO()\nwith zipfile.ZipFile(b, 'w') as z:\n    z.writestr('a.txt', 'zipped')\nprint(zipfile.ZipFile(b).read('a.txt'))",
        "",
    ),
    (
        "import base64\nprint(base64.b64encode(b'vfsbox').decode())",
        "",
    ),
    (
        "import decimal\nprint(decimal.Decimal('0.1') + decimal.Decimal('0.2'))",
        "",
    ),
    ("import unicodedata\nprint(unicodedata.name('\u{e9}'))", ""),
    (
        "import itertools\nprint([(k, len(list(g))) for k, g in itertools.groupby('aaabccdd')])",
        "",
    ),
    (
        "n = 0\nfor i, line in enumerate(open(root + '/logs/app.log'), 1):\n    if 'ERROR' in line:\n        n += 1\n        print(i, line.strip())\nprint(n)",
        "",
    ),
    ("import html\nprint(html.escape('<a href=\"x\">&</a>'))", ""),
    (
        "import xml.etree.ElementTree as ET\nr = ET.fromstring('<r><i n=\"1\"/><i n=\"2\"/></r>')\nprint([i.get('n') for i in r])",
        "",
    ),
    (
        "import math\nprint(math.factorial(20), math.isqrt(10**12), math.pi)",
        "",
    ),
    (
        "print(sum(1 for _ in open(root + '/logs/app.log')), len(open(root + '/notes/b.txt').read().splitlines()))",
        "",
    ),
    (
        "with open(root + '/notes/b.txt') as f:\n    f.seek(6)\n    print(repr(f.read(4)), f.tell())",
        "",
    ),
    (
        "print(open(root + '/data/sales.csv', 'rb').read()[:12])",
        "",
    ),
    (
        "def f(n):\n    return 1 if n < 2 else n * f(n - 1)\nprint(f(30))",
        "",
    ),
    (
        "import sys\nprint('to stderr', file=sys.stderr)\nprint('to stdout')",
        "",
    ),
    // Reading files.
    ("print(open(root + '/notes/a.txt').readline(), end='')", ""),
    ("print(open(root + '/notes/a.txt').readlines())", ""),
    (
        "with open(root + '/notes/b.txt') as f:\n    for n, line in enumerate(f):\n        print(n, line.rstrip())",
        "",
    ),
    ("print(len(open(root + '/logs/app.log', 'rb').read()))", ""),
    (
        "import pathlib\nprint(pathlib.Path(root, 'notes', 'a.txt').read_text().split())",
        "",
    ),
    (
        "import pathlib\nprint(pathlib.Path(root, 'notes', 'a.txt').read_bytes()[::-1][:6])",
        "",
    ),
    (
        "with open(root + '/notes/a.txt', 'rb') as f:\n    f.seek(-6, 2)\n    print(f.read())",
        "",
    ),
    (
        "import io\nwith open(root + '/README.md', encoding='utf-8') as f:\n    print(isinstance(f, io.TextIOWrapper), f.read(7))",
        "",
    ),
    (
        "print(max(open(root + '/logs/app.log'), key=len).strip())",
        "",
    ),
    (
        "import os\nprint(sorted((e.name, e.is_dir()) for e in os.scandir(root + '/notes')))",
        "",
    ),
    (
        "print(os.path.getsize(root + '/data/sales.csv'), os.path.splitext('a/b.tar.gz'), os.path.join('x', 'y'))",
        "",
    ),
    (
        "import stat\nm = os.stat(root + '/notes').st_mode\nprint(stat.S_ISDIR(m), stat.S_ISREG(os.stat(root + '/README.md').st_mode))",
        "",
    ),
    // Walking trees.
    (
        "import pathlib\nprint(sorted(p.name for p in pathlib.Path(root).iterdir()))",
        "",
    ),
    (
        "import pathlib\nprint(sorted(str(p.relative_to(root)) for p in pathlib.Path(root).glob('**/*') if p.is_file()))",
        "",
    ),
    (
        "import glob\nprint(sorted(os.path.relpath(p, root) for p in glob.glob(root + '/**/*.txt', recursive=True)))",
        "",
    ),
    (
        "total = 0\nfor d, _, files in os.walk(root):\n    for f in files:\n        total += os.path.getsize(os.path.join(d, f))\nprint(total)",
        "",
    ),
    (
        "import collections\nc = collections.Counter(os.path.splitext(f)[1] for _, _, fs in os.walk(root) for f in fs)\nprint(sorted(c.items()))",
        "",
    ),
    (
        "for d, dirs, files in os.walk(root, topdown=True):\n    dirs[:] = sorted(x for x in dirs if x != 'deep')\n    print(os.path.relpath(d, root), len(files))",
        "",
    ),
    (
        "import fnmatch\nprint(sorted(f for _, _, fs in os.walk(root) for f in fs if fnmatch.fnmatch(f, '[ab].*')))",
        "",
    ),
    (
        "import pathlib\nprint([p.suffix for p in sorted(pathlib.Path(root, 'data').iterdir())])",
        "",
    ),
    // csv and json.
    (
        "import csv\nfor row in csv.reader(open(root + '/data/sales.csv')):\n    print('|'.join(row))",
        "",
    ),
    (
        "import csv, io\nw = csv.writer(sys.stdout, lineterminator='\\n')\nfor r in csv.DictReader(open(root + '/data/sales.csv')):\n    w.writerow([r['region'].upper(), int(r['units']) * 2])",
        "",
    ),
    (
        "import csv\nrows = sorted(csv.DictReader(open(root + '/data/sales.csv')), key=lambda r: -int(r['units']))\nprint([r['region'] for r in rows])",
        "",
    ),
    (
        "import csv, collections\ng = collections.defaultdict(list)\nfor r in csv.DictReader(open(root + '/data/sales.csv')):\n    g[r['region']].append(float(r['price']))\nprint({k: round(sum(v) / len(v), 3) for k, v in sorted(g.items())})",
        "",
    ),
    (
        "import csv\nprint(csv.Sniffer().has_header(open(root + '/data/sales.csv').read()))",
        "",
    ),
    (
        "import json\nprint(sum(p['age'] for p in json.load(open(root + '/data/people.json'))))",
        "",
    ),
    (
        "import json\nprint(json.dumps(sorted(json.load(open(root + '/data/people.json')), key=lambda p: p['age'])[0]))",
        "",
    ),
    (
        "import json\nprint(json.loads(sys.stdin.read())['a'][1])",
        "{\"a\": [1, 2, 3]}",
    ),
    (
        "import json\ntry:\n    json.loads('{bad')\nexcept json.JSONDecodeError as e:\n    print('JSONDecodeError', e.pos)",
        "",
    ),
    (
        "import json\nprint(json.dumps({'b': 1, 'a': [True, None, 1.5]}))",
        "",
    ),
    // Regular expressions.
    (
        "import re\nfor line in open(root + '/logs/app.log'):\n    m = re.match(r'(\\d{4})-(\\d\\d)-(\\d\\d) (\\w+)', line)\n    print(m.group(4), m.group(1))",
        "",
    ),
    (
        "import re\nprint(re.sub(r'(\\w+) (\\w+)', r'\\2 \\1', 'hello world foo bar'))",
        "",
    ),
    ("import re\nprint(re.split(r'[,;]\\s*', 'a, b;c,d'))", ""),
    (
        "import re\nprint([m.span() for m in re.finditer('a', open(root + '/notes/a.txt').read())])",
        "",
    ),
    (
        "import re\np = re.compile(r'^(?P<day>\\S+) (?P<level>ERROR|WARN)', re.M)\nprint([m.groupdict() for m in p.finditer(open(root + '/logs/app.log').read())])",
        "",
    ),
    (
        "import re\nprint(bool(re.search('beta', 'ALPHA BETA', re.I)), re.escape('a.b*c'))",
        "",
    ),
    (
        "import re\ntry:\n    re.compile('(')\nexcept re.error as e:\n    print('re.error', e.msg)",
        "",
    ),
    // collections and friends.
    (
        "import collections\nd = collections.OrderedDict()\nd['b'] = 1\nd['a'] = 2\nd.move_to_end('b')\nprint(list(d))",
        "",
    ),
    (
        "import collections\nP = collections.namedtuple('P', 'x y')\nprint(P(1, 2)._replace(y=5), P._fields)",
        "",
    ),
    (
        "import collections\nq = collections.deque(range(5), maxlen=3)\nq.appendleft(9)\nprint(list(q))",
        "",
    ),
    (
        "import collections\nc = collections.Counter('mississippi')\nprint(c['s'], (c - collections.Counter('miss')).most_common(2))",
        "",
    ),
    (
        "import heapq\nprint(heapq.nlargest(2, [5, 1, 9, 3]), heapq.nsmallest(1, 'zyx'))",
        "",
    ),
    (
        "import bisect\na = [1, 3, 5]\nbisect.insort(a, 4)\nprint(a, bisect.bisect_left(a, 4))",
        "",
    ),
    (
        "import functools\n@functools.lru_cache(None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(90), functools.reduce(lambda a, b: a * b, range(1, 6)))",
        "",
    ),
    (
        "import itertools\nprint(list(itertools.combinations('abc', 2)), list(itertools.accumulate([1, 2, 3])))",
        "",
    ),
    // Formatting.
    ("print('%-6s|%5.1f|%x' % ('ab', 2.345, 255))", ""),
    (
        "print('{:^9}|{:+d}|{:.3e}'.format('mid', 5, 12345.678))",
        "",
    ),
    ("print(f'{1234567:_}', f'{0.25:%}', f'{\"q\"!r}')", ""),
    (
        "print(str(3.0), repr(0.1 + 0.2), round(2.675, 2), 7 // -2, -7 % 3)",
        "",
    ),
    (
        "print('a,b,,c'.split(','), ' x  y '.split(), 'abc'.center(7, '*'))",
        "",
    ),
    (
        "print('Hello'.swapcase(), 'hello world'.title(), 'x'.zfill(4))",
        "",
    ),
    (
        "print(sorted({'b': 2, 'a': 1}.items()), {1, 2} | {3}, (1, 'a')[::-1])",
        "",
    ),
    // Exceptions and exit status.
    ("[][1]", ""),
    ("import nosuchmodule", ""),
    ("1 / 0", ""),
    (
        "def f():\n    raise RuntimeError('deep')\ndef g():\n    f()\ng()",
        "",
    ),
    (
        "class MyError(Exception):\n    pass\ntry:\n    raise MyError('mine')\nexcept Exception as e:\n    print(type(e).__name__, e.args)",
        "",
    ),
    (
        "try:\n    raise ValueError('inner')\nexcept ValueError as e:\n    raise KeyError('outer') from e",
        "",
    ),
    (
        "try:\n    pass\nfinally:\n    print('finally')\nsys.exit(0)",
        "",
    ),
    ("print('partial', flush=True)\nsys.exit(42)", ""),
    ("raise SystemExit(7)", ""),
    ("assert 1 == 2, 'not equal'", ""),
    (
        "try:\n    os.listdir(root + '/nope')\nexcept FileNotFoundError as e:\n    print('missing', os.path.basename(e.filename))",
        "",
    ),
    (
        "try:\n    os.listdir(root + '/README.md')\nexcept NotADirectoryError as e:\n    print(type(e).__name__, e.strerror)",
        "",
    ),
    // Standard input and arguments.
    ("print(len(sys.argv), sys.argv[0])", ""),
    (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('root')\np.add_argument('rest', nargs='*')\na = p.parse_args()\nprint(a.rest)",
        "",
    ),
    (
        "print(sum(int(x) for x in sys.stdin.read().split()))",
        "1 2\n3 4\n",
    ),
    (
        "print(sys.stdin.readline().strip(), sys.stdin.read().count('\\n'))",
        "first\nsecond\nthird\n",
    ),
    ("print(repr(sys.stdin.read()))", ""),
    ("import shlex\nprint(shlex.split('a \"b c\" d'))", ""),
];

fn tree_on_disk() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in TREE {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    }
    dir
}

/// The compiled interpreter is kept on disk across the tests' runtimes, so
/// the suite compiles it about once.
fn python_runtime(limits: Limits) -> Runtime {
    let dir = std::env::temp_dir().join("vfsbox-tests-compiled");
    Runtime::with_options(
        limits,
        AuditLog::disabled(),
        RuntimeOptions {
            compile_cache_dir: Some(dir),
            ..RuntimeOptions::default()
        },
    )
    .expect("runtime")
}

async fn run_python(
    rt: &Runtime,
    vfs: Vfs,
    limits: Limits,
    code: &str,
    args: &[&str],
    stdin: &str,
) -> Report {
    let permit = rt.try_admit(None).expect("a free slot");
    let spec = RunSpec {
        program: "python".to_owned(),
        args: Vec::new(),
        stdin: Stdin::Bytes(stdin.to_owned().into()),
        cwd: "/".to_owned(),
        vfs,
        limits,
        caller: Default::default(),
    };
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    rt.run(
        permit,
        Script::Python,
        python::python_spec(spec, code, &args),
    )
    .await
    .expect("the run starts")
}

/// The script as both sides run it.
fn program(code: &str) -> String {
    format!("import os, sys\nroot = sys.argv[1]\n{code}\n")
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or("")
}

fn host_python3(code: &str, root: &Path, stdin: &str) -> (String, String, i32) {
    let mut child = Command::new("python3")
        .args(["-c", code])
        .arg(root)
        .args(["x", "y"])
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("python3 ends");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_code_prints_what_the_hosts_python3_prints() {
    let disk = tree_on_disk();
    let vfs = local_vfs(disk.path());
    let rt = python_runtime(limits());
    let root = disk.path().to_str().expect("UTF-8 path");
    let mut differences = Vec::new();
    for (code, stdin) in SCRIPTS {
        let code = program(code);
        let report = run_python(
            &rt,
            vfs.clone(),
            limits(),
            &code,
            &["/files", "x", "y"],
            stdin,
        )
        .await;
        let (stdout, stderr, status) = host_python3(&code, disk.path(), stdin);
        let ours = (
            report.stdout_text().replace("/files", root),
            last_line(&report.stderr_text()).replace("/files", root),
            report.exit_code(),
        );
        let theirs = (stdout, last_line(&stderr).to_owned(), Some(status));
        if ours != theirs {
            differences.push(format!("{code}\n  vfsbox: {ours:?}\n  python3: {theirs:?}"));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} scripts differ:\n{}",
        differences.len(),
        SCRIPTS.len(),
        differences.join("\n")
    );
    assert!(SCRIPTS.len() >= 100, "{}", SCRIPTS.len());
}

/// Writing is refused as Python refuses it on a read-only filesystem.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_raises_a_read_only_oserror() {
    let rt = python_runtime(limits());
    let code = "for f in (lambda: open('/files/new.txt', 'w'), lambda: os.mkdir('/files/d'), lambda: os.remove('/files/a.txt')):\n    try:\n        f()\n    except OSError as e:\n        print(type(e).__name__, e.strerror)";
    let report = run_python(
        &rt,
        vfs_of(small_tree()),
        limits(),
        &format!("import os\n{code}"),
        &[],
        "",
    )
    .await;
    assert_eq!(
        report.stdout_text(),
        "OSError Read-only file system\nOSError Read-only file system\nOSError Read-only file system\n"
    );
}

/// Limits hold for Python as for any script.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_runs_within_the_limits() {
    let rt = python_runtime(limits());
    // A loop ends at the deadline.
    let short = Limits {
        deadline: std::time::Duration::from_secs(2),
        ..limits()
    };
    let report = run_python(
        &rt,
        vfs_of(small_tree()),
        short,
        "print('spinning', flush=True)\nwhile True: pass",
        &[],
        "",
    )
    .await;
    assert_eq!(
        report.limit(),
        Some(Limit::Deadline),
        "{:?}",
        report.outcome
    );
    assert_eq!(report.stdout_text(), "spinning\n");
    // A memory bomb ends with the memory limit (Python's MemoryError).
    for bomb in [
        "x = 'x' * 10**9",
        "l = []\nwhile True: l.append('y' * 10**6)",
    ] {
        let report = run_python(&rt, vfs_of(small_tree()), limits(), bomb, &[], "").await;
        assert_eq!(
            report.limit(),
            Some(Limit::Memory),
            "{bomb}: {:?}",
            report.outcome
        );
    }
    // More documents than the cap, output so far kept.
    let capped = Limits {
        document_reads: 2,
        ..limits()
    };
    let code = "for p in ['/files/a.txt', '/files/notes/b.txt', '/files/notes/c.txt']:\n    print(p, len(open(p).read()), flush=True)";
    let report = run_python(&rt, vfs_of(small_tree()), capped, code, &[], "").await;
    assert_eq!(
        report.outcome,
        Outcome::BudgetExceeded {
            limit: Limit::DocumentReads,
            used: 3,
            allowed: 2
        }
    );
    assert_eq!(
        report.stdout_text(),
        "/files/a.txt 6\n/files/notes/b.txt 10\n"
    );
    assert_slots_freed(&rt).await;
}

/// `vfsbox py`: a file or `-c`, arguments, stdin, the exit status.
#[test]
fn vfsbox_py_runs_code_like_python3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("count.py");
    std::fs::write(
        &file,
        "import sys, os\nprint(len(os.listdir(sys.argv[1])), sys.stdin.read().strip())\nsys.exit(4)\n",
    )
    .expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .arg("py")
        .arg(&file)
        .args(["--", "/files/policies"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vfsbox runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"from stdin\n")
        .expect("stdin");
    let out = child.wait_with_output().expect("ends");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "3 from stdin\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(4));
    let out = Command::new(env!("CARGO_BIN_EXE_vfsbox"))
        .args(["py", "-c", "1/0"])
        .stdin(Stdio::null())
        .output()
        .expect("vfsbox runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).ends_with("ZeroDivisionError: division by zero\n")
    );
}

/// Python reaches only the mounts: the host's files are not there in any
/// spelling, a path climbing out of a mount is refused, `socket` and
/// `subprocess` do not exist, and the socket the C module would open is
/// denied by the host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_cannot_reach_past_the_mounts() {
    let rt = python_runtime(limits());
    let code = r#"
import os
for p in ["/etc/passwd", "/files/../../etc/passwd", "/files/notes/../../../etc/passwd", "../../etc/passwd", "/proc/self/environ", "/"]:
    try:
        open(p).read()
        print(p, "read")
    except OSError as e:
        print(p, type(e).__name__)
for m in ["socket", "subprocess", "ctypes"]:
    try:
        __import__(m)
        print(m, "imported")
    except ImportError as e:
        print(m, type(e).__name__)
# The C module is there; the host denies every socket and lookup.
import _socket
for attempt in [lambda: _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM), lambda: _socket.getaddrinfo("localhost", 80)]:
    try:
        attempt()
        print("socket made")
    except OSError as e:
        print(type(e).__name__)
print(sorted(k for k in os.environ))
"#;
    let report = run_python(&rt, vfs_of(small_tree()), limits(), code, &[], "").await;
    assert_eq!(
        report.stdout_text(),
        "/etc/passwd FileNotFoundError\n\
         /files/../../etc/passwd PermissionError\n\
         /files/notes/../../../etc/passwd PermissionError\n\
         ../../etc/passwd FileNotFoundError\n\
         /proc/self/environ FileNotFoundError\n\
         / FileNotFoundError\n\
         socket ModuleNotFoundError\n\
         subprocess ModuleNotFoundError\n\
         ctypes ModuleNotFoundError\n\
         PermissionError\n\
         gaierror\n\
         ['PWD']\n",
        "{}",
        report.stderr_text()
    );
}

/// The code starts in the run's working directory, as `python3` starts in
/// the shell's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_starts_in_the_runs_working_directory() {
    let rt = python_runtime(limits());
    let permit = rt.try_admit(None).expect("a free slot");
    let spec = RunSpec {
        program: "python".to_owned(),
        args: Vec::new(),
        stdin: Stdin::Empty,
        cwd: "/files/notes".to_owned(),
        vfs: vfs_of(small_tree()),
        limits: limits(),
        caller: Default::default(),
    };
    let code =
        "import os\nprint(os.getcwd(), sorted(os.listdir('.')), open('b.txt').read(), end='')";
    let report = rt
        .run(permit, Script::Python, python::python_spec(spec, code, &[]))
        .await
        .expect("runs");
    assert_eq!(
        report.stdout_text(),
        "/files/notes ['b.txt', 'c.txt'] beta TODO\n",
        "{}",
        report.stderr_text()
    );
}

/// `POST /v1/py` answers the run report, as `/v1/sh` does: the output, the
/// exit status, a limit as `413`, over-long code as `400`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_v1_py_runs_code_and_answers_the_report() {
    use reqwest::StatusCode;
    let server = crate::server::TestServer::anonymous(limits(), vfs_of(small_tree()));
    let c = reqwest::Client::new();
    let post = |body: serde_json::Value| {
        let c = c.clone();
        let url = server.url("/v1/py");
        async move {
            let r = c.post(url).json(&body).send().await.expect("a response");
            let status = r.status();
            (status, r.json::<serde_json::Value>().await.expect("json"))
        }
    };
    let (status, body) = post(serde_json::json!({
        "code": "import sys\nprint(sys.argv[1:], sys.stdin.read(), open('a.txt').read(), end='')\nsys.exit(3)",
        "args": ["x"],
        "stdin": "in",
        "cwd": "/files",
    }))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["stdout"], "['x'] in alpha\n");
    assert_eq!(body["exit_code"], 3);
    assert_eq!(body["usage"]["document_reads"], 1);
    let (status, body) = post(serde_json::json!({"code": "1/0"})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["exit_code"], 1);
    assert!(
        body["stderr"]
            .as_str()
            .expect("stderr")
            .ends_with("ZeroDivisionError: division by zero\n")
    );
    let (status, body) = post(serde_json::json!({
        "code": "while True: pass",
        "limits": {"deadline_ms": 1000},
    }))
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["limit"], "deadline");
    let (status, body) =
        post(serde_json::json!({"code": "#".repeat(python::MAX_CODE_BYTES + 1)})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("code_too_long"))
    );
}

/// Five Python runs at once on four slots: four run, the fifth is refused
/// at once with `429` and `Retry-After: 2`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_python_runs_on_four_slots_four_run_and_one_is_refused() {
    use reqwest::StatusCode;
    let limits = Limits {
        deadline: std::time::Duration::from_secs(4),
        ..limits()
    };
    let server = crate::server::TestServer::anonymous(limits, vfs_of(small_tree()));
    let c = reqwest::Client::new();
    let url = server.url("/v1/py");
    // The first run compiles the interpreter.
    let r = c
        .post(&url)
        .json(&serde_json::json!({"code": "print(1)"}))
        .send()
        .await
        .expect("warm-up");
    assert_eq!(r.status(), StatusCode::OK);
    let spinning: Vec<_> = (0..4)
        .map(|_| {
            let (c, url) = (c.clone(), url.clone());
            tokio::spawn(async move {
                c.post(url)
                    .json(&serde_json::json!({"code": "while True: pass"}))
                    .send()
                    .await
                    .expect("a response")
                    .status()
            })
        })
        .collect();
    let metrics = server.url("/metrics");
    let started = std::time::Instant::now();
    while crate::server::live_scripts(&c, &metrics).await < 4 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(3),
            "four never ran at once"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let r = c
        .post(&url)
        .json(&serde_json::json!({"code": "print('fifth')"}))
        .send()
        .await
        .expect("a response");
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "2");
    let body: serde_json::Value = r.json().await.expect("json");
    assert_eq!(body["error"]["code"], "busy");
    for run in spinning {
        assert_eq!(run.await.expect("task"), StatusCode::PAYLOAD_TOO_LARGE);
    }
    crate::server::assert_no_live_scripts(&c, &metrics).await;
}

/// The `vfsbox` module searches on the host, with ripgrep's engine and the
/// scan budget, and tells what is left of the budget. Its lines are checked
/// against GNU grep's over the same tree on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vfsbox_module_searches_on_the_host_and_reads_the_budget() {
    let disk = tree_on_disk();
    let rt = python_runtime(limits());
    let code = "import vfsbox\nfound = vfsbox.grep('ERROR|alpha', '/files', ignore_case=True)\nfor path, line in sorted(found.lines(), key=lambda pl: (pl[0], pl[1].line_number)):\n    print(f'{path}:{line.line_number}:{line.text}')";
    let report = run_python(&rt, local_vfs(disk.path()), limits(), code, &[], "").await;
    let gnu = Command::new("grep")
        .args(["-rniE", "ERROR|alpha", "."])
        .current_dir(disk.path())
        .output()
        .expect("grep runs");
    let mut expected: Vec<String> = String::from_utf8_lossy(&gnu.stdout)
        .lines()
        .map(|l| l.replacen("./", "/files/", 1))
        .collect();
    expected.sort();
    let mut ours: Vec<String> = report.stdout_text().lines().map(str::to_owned).collect();
    ours.sort();
    assert_eq!(ours, expected, "{}", report.stderr_text());
    assert_eq!(ours.len(), 4);

    let code = r#"
import vfsbox
r = vfsbox.grep('ERROR', '/files/logs')
print(r.paths(), r.files[0].match_count, r.files_scanned, r.truncated)
line = r.files[0].lines[0]
print(line.line_number, line.is_match, line.spans)
print(vfsbox.grep('alpha', '/files/notes', include=['a.*']).paths())
print(vfsbox.grep('gamma', '/files/notes/a.txt', context=1).files[0].lines[0].is_match)
print(vfsbox.grep('a', '/files/notes', fixed_strings=True, exclude=['*.txt']).paths())
c = vfsbox.grep('ERROR', '/files/logs', count_only=True, context=2)
print(c.paths(), c.files[0].match_count, c.files[0].lines)
for bad in [lambda: vfsbox.grep('(', '/files'), lambda: vfsbox.grep([], '/files')]:
    try:
        bad()
    except ValueError:
        print('ValueError')
try:
    vfsbox.grep('x', '/files/nope')
except FileNotFoundError:
    print('FileNotFoundError')
r = vfsbox.grep('ERROR', '/files/nope', '/files/logs')
print(len(r.files), [(root, type(e).__name__) for root, e in r.errors])
before = vfsbox.budget()
open('/files/README.md').read()
after = vfsbox.budget()
print(before.document_reads - after.document_reads, after.time_ms > 0, after.scan_files > 0)
"#;
    let mut spec_limits = limits();
    spec_limits.document_reads = 50;
    let report = run_python(&rt, local_vfs(disk.path()), spec_limits, code, &[], "").await;
    assert_eq!(
        report.stdout_text(),
        "['/files/logs/app.log'] 2 1 False\n2 True [(11, 16)]\n['/files/notes/a.txt']\nFalse\n[]\n['/files/logs/app.log'] 2 []\nValueError\nValueError\nFileNotFoundError\n1 [('/files/nope', 'FileNotFoundError')]\n1 True True\n",
        "{}",
        report.stderr_text()
    );

    // Under a small scan budget the search is partial, and says so.
    let small = Limits {
        scan_files: 2,
        ..limits()
    };
    let code = "import vfsbox\nr = vfsbox.grep('a', '/files')\nprint(r.truncated, r.files_scanned, r.files_not_reached > 0, vfsbox.budget().scan_files)";
    let report = run_python(&rt, local_vfs(disk.path()), small, code, &[], "").await;
    assert_eq!(
        report.stdout_text(),
        "True 2 True 0\n",
        "{}",
        report.stderr_text()
    );
    assert_slots_freed(&rt).await;
}

/// The default memory cap holds the interpreter and a realistic script:
/// grouping and counting a 10 MB CSV, as the host's `python3` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_10_mb_csv_is_grouped_and_counted_within_the_default_memory_cap() {
    let disk = tempfile::tempdir().expect("tempdir");
    let mut csv = String::from("id,region,product,units,price\n");
    let regions = ["north", "south", "east", "west", "central"];
    let mut i = 0u64;
    while csv.len() < 10 * 1024 * 1024 {
        csv.push_str(&format!(
            "{i},{},p{},{},{}.{:02}\n",
            regions[(i % 5) as usize],
            i % 97,
            i % 13 + 1,
            i % 50,
            i % 100
        ));
        i += 1;
    }
    std::fs::write(disk.path().join("sales.csv"), &csv).expect("write");
    let code = program(
        "import csv, collections\nunits = collections.Counter()\nrevenue = collections.defaultdict(float)\nwith open(root + '/sales.csv', newline='') as f:\n    for r in csv.DictReader(f):\n        units[r['region']] += int(r['units'])\n        revenue[r['product']] += int(r['units']) * float(r['price'])\nprint(sorted(units.items()))\nprint(len(revenue), round(max(revenue.values()), 2))",
    );
    let defaults = Limits {
        memory: vfsbox_host::Limits::default().memory,
        ..limits()
    };
    let rt = python_runtime(defaults.clone());
    let report = run_python(
        &rt,
        local_vfs(disk.path()),
        defaults.clone(),
        &code,
        &["/files", "x", "y"],
        "",
    )
    .await;
    let (stdout, stderr, status) = host_python3(&code, disk.path(), "");
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(
        report.exit_code(),
        Some(0),
        "{:?} {}",
        report.outcome,
        report.stderr_text()
    );
    assert_eq!(report.stdout_text(), stdout);
    let peak = report.usage.peak_memory_bytes;
    assert!(peak <= defaults.memory, "{peak}");
    eprintln!("a 10 MB CSV grouped in {peak} bytes of linear memory");
}

/// A served host compiles the interpreter as it starts, in the background,
/// and reports ready once it has: on a fresh compile cache `/readyz` first
/// says `warming` (503), then ready, and the compile is on disk for the
/// next host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_host_compiles_python_before_it_reports_ready() {
    use reqwest::StatusCode;
    let cache = tempfile::tempdir().expect("tempdir");
    let env = [("XDG_CACHE_HOME", cache.path().to_str().expect("utf-8"))];
    let c = reqwest::Client::new();
    let readiness = |server: &crate::server::ServeProcess| {
        let (c, url) = (c.clone(), server.url("/readyz"));
        async move {
            let r = c.get(url).send().await.expect("readyz answers");
            let status = r.status();
            (status, r.json::<serde_json::Value>().await.expect("json"))
        }
    };
    // Polls `/readyz` until 200, then answers its body.
    let wait_ready = |server: &crate::server::ServeProcess| {
        tokio::task::block_in_place(|| server.wait_ready());
        readiness(server)
    };
    let server = crate::server::ServeProcess::start_with_env(&[], &env);
    let (status, body) = readiness(&server).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["warming"], true);
    assert_eq!(body["ready"], false);
    // The shell runs meanwhile: only readiness waits.
    let r = c
        .post(server.url("/v1/sh"))
        .json(&serde_json::json!({"script": "echo up"}))
        .send()
        .await
        .expect("sh answers");
    assert_eq!(r.status(), StatusCode::OK);
    let (status, body) = wait_ready(&server).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["warming"], false);
    assert_eq!(body["free_slots"], 4);
    let r = c
        .post(server.url("/v1/py"))
        .json(&serde_json::json!({"code": "print(6 * 7)"}))
        .send()
        .await
        .expect("py answers");
    let report: serde_json::Value = r.json().await.expect("json");
    assert_eq!(report["stdout"], "42\n", "{report}");
    drop(server);
    let compiled = std::fs::read_dir(cache.path().join("vfsbox/compiled"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(compiled > 0, "nothing in the disk cache");

    // A host started on the same cache is ready too (the bench's Python
    // rows time the difference).
    let again = crate::server::ServeProcess::start_with_env(&[], &env);
    assert_eq!(wait_ready(&again).await.1["warming"], false);
}
