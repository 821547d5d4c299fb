//! Grep throughput over a real corpus: `vfs-sh`'s `grep -rn` and the SDK's
//! search, against ripgrep and GNU grep on the same files.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use vfsbox_host::runtime::{Script, Stdin};
use vfsbox_host::vfs::{LocalBackend, Mount};
use vfsbox_host::{AuditLog, Limits, RunSpec, Runtime, VPath, Vfs, sh};

use crate::report::{Table, median};

fn corpus_size(dir: &Path) -> (u64, u64) {
    let (mut files, mut bytes) = (0, 0);
    for entry in std::fs::read_dir(dir).expect("corpus").flatten() {
        let meta = entry.metadata().expect("metadata");
        if meta.is_dir() {
            let (f, b) = corpus_size(&entry.path());
            files += f;
            bytes += b;
        } else if meta.is_file() {
            files += 1;
            bytes += meta.len();
        }
    }
    (files, bytes)
}

/// Runs a command `n` times; the median time and its output.
fn external(n: usize, program: &str, args: &[&str]) -> Option<(Duration, Vec<u8>)> {
    let mut times = Vec::new();
    let mut stdout = Vec::new();
    for _ in 0..n {
        let start = Instant::now();
        let out = Command::new(program)
            .args(args)
            .env("LC_ALL", "C.UTF-8")
            .stderr(Stdio::null())
            .output()
            .ok()?;
        times.push(start.elapsed());
        stdout = out.stdout;
    }
    Some((median(times), stdout))
}

/// The matching lines of an output, as a sorted list comparable across
/// tools: the corpus directory written as `/files`, GNU's "Binary file …
/// matches" notes left out (every tool here skips binary files' lines).
fn normalised(out: &[u8], dir: &str) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(out)
        .lines()
        .filter(|l| !l.starts_with("Binary file ") && !l.starts_with("grep: "))
        .map(|l| match l.strip_prefix(dir) {
            Some(rest) => format!("/files{rest}"),
            None => l.to_owned(),
        })
        .collect();
    lines.sort_unstable();
    lines
}

/// "same" when two normalised outputs are equal, else how many lines of
/// each the other lacks.
fn compare(ours: &[String], theirs: &[String]) -> String {
    if ours == theirs {
        return format!("same {} lines", ours.len());
    }
    let (a, b): (
        std::collections::HashSet<&String>,
        std::collections::HashSet<&String>,
    ) = (ours.iter().collect(), theirs.iter().collect());
    format!(
        "**differs**: {} lines only in vfs-sh, {} only in the peer",
        a.difference(&b).count(),
        b.difference(&a).count()
    )
}

async fn sandboxed(
    rt: &Runtime,
    script: &Script,
    spec: impl Fn() -> RunSpec,
    n: usize,
) -> (Duration, Vec<u8>) {
    let mut times = Vec::new();
    let mut stdout = Vec::new();
    for _ in 0..n {
        let permit = rt.try_admit(None).expect("slot");
        let start = Instant::now();
        let report = rt.run(permit, script.clone(), spec()).await.expect("runs");
        times.push(start.elapsed());
        assert!(report.exit_code().is_some(), "{:?}", report.outcome);
        assert!(!report.stdout_truncated, "raise the stdout limit");
        stdout = report.stdout.to_vec();
    }
    (median(times), stdout)
}

fn mb_s(bytes: u64, d: Duration) -> String {
    format!("{:.0} MB/s", bytes as f64 / 1e6 / d.as_secs_f64())
}

pub(crate) async fn grep_throughput(t: &mut Table) {
    let Some(corpus) = std::env::var_os("VFSBOX_BENCH_CORPUS").map(PathBuf::from) else {
        t.row(
            "grep throughput",
            "not measured".to_owned(),
            "no corpus: run bench/run (it unpacks the kernel's Documentation/)".to_owned(),
            "—".to_owned(),
            "—".to_owned(),
        );
        return;
    };
    let (files, bytes) = corpus_size(&corpus);
    assert!(
        bytes >= 50_000_000 && files >= 1_000,
        "the corpus is {bytes} bytes in {files} files; the grep rows need at least 50 MB in thousands of files"
    );
    let limits = Limits {
        deadline: Duration::from_secs(300),
        memory: 1 << 30,
        stdout: 512 << 20,
        scan_files: 10_000_000,
        scan_bytes: 64 << 30,
        list_entries: 1_000_000,
        ..Limits::default()
    };
    let rt = Runtime::new(limits.clone(), AuditLog::disabled()).expect("runtime");
    let vfs = Vfs::new([Mount {
        path: VPath::parse_absolute("/files").expect("path"),
        backend: Arc::new(LocalBackend::open(&corpus).expect("corpus")),
    }])
    .expect("mount");
    let permit = rt.try_admit(None).expect("slot");
    let shell = Script::Compiled(rt.compile(&permit, sh::component()).await.expect("shell"));
    let counter = std::fs::read(vfsbox_test_artifacts::GREP_COUNT).expect("grep-count.wasm");
    let counter = Script::Compiled(
        rt.compile(&permit, counter.into())
            .await
            .expect("grep-count"),
    );
    drop(permit);
    let spec = |program: &str, args: Vec<String>| RunSpec {
        program: program.to_owned(),
        args,
        stdin: Stdin::Empty,
        cwd: "/".to_owned(),
        vfs: vfs.clone(),
        limits: limits.clone(),
        caller: Default::default(),
    };
    let dir = corpus.to_str().expect("a UTF-8 path");
    let cases: [(&str, &[&str], &str); 3] = [
        ("literal", &[], "kmalloc"),
        ("case-insensitive", &["-i"], "mutex"),
        ("regex with no literal", &[], "[A-Z]{2,}[0-9]{2,}"),
    ];
    for (name, flags, pattern) in cases {
        let mut gnu_args: Vec<&str> = vec!["-rn", "-E"];
        gnu_args.extend_from_slice(flags);
        gnu_args.extend_from_slice(&["-e", pattern, dir]);
        let gnu = external(3, "grep", &gnu_args);
        let mut rg_args: Vec<&str> = vec!["-n", "-uu", "--no-heading"];
        rg_args.extend_from_slice(flags);
        rg_args.extend_from_slice(&["-e", pattern, dir]);
        let rg = external(3, "rg", &rg_args);
        let script = format!("grep -rnE {} -e '{pattern}' /files", flags.join(" "));
        let (ours, our_out) = sandboxed(
            &rt,
            &shell,
            || sh::shell_spec(spec("vfs-sh", Vec::new()), &script),
            3,
        )
        .await;
        let our_lines = normalised(&our_out, dir);
        let mut count_args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        count_args.extend([pattern.to_owned(), "/files".to_owned()]);
        let (sdk, _) = sandboxed(&rt, &counter, || spec("grep-count", count_args.clone()), 3).await;
        let peer = |p: &Option<(Duration, Vec<u8>)>, who: &str| match p {
            Some((d, out)) => format!(
                "{who} {} (output: {})",
                mb_s(bytes, *d),
                compare(&our_lines, &normalised(out, dir))
            ),
            None => format!("{who} not installed"),
        };
        let ratio = |p: &Option<(Duration, Vec<u8>)>| {
            p.as_ref()
                .map_or(f64::NAN, |(d, _)| d.as_secs_f64() / ours.as_secs_f64())
        };
        let (vs_rg, vs_gnu) = (ratio(&rg), ratio(&gnu));
        t.row(
            &format!(
                "grep -rn, {name} (`{pattern}`), {files} files, {} MB",
                bytes / 1_000_000
            ),
            format!(
                "vfs-sh {} ({} lines); SDK search {}",
                mb_s(bytes, ours),
                our_lines.len(),
                mb_s(bytes, sdk)
            ),
            format!("{}; {}", peer(&rg, "rg"), peer(&gnu, "GNU grep")),
            format!("{vs_rg:.2}× rg, {vs_gnu:.2}× GNU grep"),
            format!(
                "≥ 0.5× rg: {}; ≥ 1× GNU grep: {}",
                crate::report::met(vs_rg >= 0.5),
                crate::report::met(vs_gnu >= 1.0)
            ),
        );
    }
}

/// A text file of `size` bytes or more for the shell rows: lines of a word
/// and two numbers, made the same way on every run.
fn numbers_file(dir: &Path, size: u64) -> PathBuf {
    let path = dir.join("numbers.txt");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= size) {
        return path;
    }
    const WORDS: [&str; 8] = [
        "refund", "policy", "invoice", "travel", "north", "south", "widget", "gadget",
    ];
    let mut text = String::with_capacity(size as usize + 64);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while (text.len() as u64) < size {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let w = WORDS[(x % 8) as usize];
        text.push_str(&format!("{w} {} {}\n", x % 1000, (x >> 20) % 100_000));
    }
    std::fs::create_dir_all(dir).expect("bench dir");
    std::fs::write(&path, text).expect("writes the numbers file");
    path
}

/// Runs a bash pipeline `n` times; the median time and its output.
fn bash(n: usize, script: &str) -> Option<(Duration, Vec<u8>)> {
    external(n, "bash", &["-c", script])
}

/// The shell's pipelines and commands beside bash and the GNU tools in the
/// same run: `awk` summing a column, `sort | uniq -c | sort -rn`, a `sed`
/// substitution with groups and an `awk` `gsub` over a 50 MB text file,
/// `find -exec md5sum {} +` over the grep corpus.
pub(crate) async fn shell_pipelines(t: &mut Table) {
    let Some(corpus) = std::env::var_os("VFSBOX_BENCH_CORPUS").map(PathBuf::from) else {
        t.row(
            "shell pipelines",
            "not measured".to_owned(),
            "no corpus: run bench/run".to_owned(),
            "—".to_owned(),
            "—".to_owned(),
        );
        return;
    };
    let data_dir = corpus.with_file_name("shell-bench");
    let numbers = numbers_file(&data_dir, 50_000_000);
    let size = std::fs::metadata(&numbers).map_or(0, |m| m.len());
    let limits = Limits {
        deadline: Duration::from_secs(600),
        fuel: u64::MAX,
        memory: 2 << 30,
        stdout: 512 << 20,
        bytes_read: 1 << 30,
        document_reads: 1_000_000,
        list_entries: 1_000_000,
        ..Limits::default()
    };
    let rt = Runtime::new(limits.clone(), AuditLog::disabled()).expect("runtime");
    let mount = |p: &str, dir: &Path| Mount {
        path: VPath::parse_absolute(p).expect("path"),
        backend: Arc::new(LocalBackend::open(dir).expect("directory")),
    };
    let vfs = Vfs::new([mount("/data", &data_dir), mount("/files", &corpus)]).expect("mounts");
    let permit = rt.try_admit(None).expect("slot");
    let shell = Script::Compiled(rt.compile(&permit, sh::component()).await.expect("shell"));
    drop(permit);
    let spec = || RunSpec {
        program: "vfs-sh".to_owned(),
        args: Vec::new(),
        stdin: Stdin::Empty,
        cwd: "/".to_owned(),
        vfs: vfs.clone(),
        limits: limits.clone(),
        caller: Default::default(),
    };
    let numbers_path = numbers.to_str().expect("UTF-8 path");
    let corpus_path = corpus.to_str().expect("UTF-8 path");
    let rows: [(&str, String, String); 5] = [
        (
            "awk '{s+=$3} END {print s}'",
            "awk '{s+=$3} END {print s}' /data/numbers.txt".to_owned(),
            format!("awk '{{s+=$3}} END {{print s}}' {numbers_path}"),
        ),
        (
            "sort | uniq -c | sort -rn",
            "cut -d' ' -f1 /data/numbers.txt | sort | uniq -c | sort -rn".to_owned(),
            format!("cut -d' ' -f1 {numbers_path} | sort | uniq -c | sort -rn"),
        ),
        (
            "sed -E 's/([a-z]+) ([0-9]+)/\\2 \\1/g' | md5sum",
            "sed -E 's/([a-z]+) ([0-9]+)/\\2 \\1/g' /data/numbers.txt | md5sum".to_owned(),
            format!("sed -E 's/([a-z]+) ([0-9]+)/\\2 \\1/g' {numbers_path} | md5sum"),
        ),
        (
            "awk '{gsub(/[0-9]+/, \"N\")} 1' | md5sum",
            "awk '{gsub(/[0-9]+/, \"N\")} 1' /data/numbers.txt | md5sum".to_owned(),
            format!("awk '{{gsub(/[0-9]+/, \"N\")}} 1' {numbers_path} | md5sum"),
        ),
        (
            "find -exec md5sum {} +",
            "find /files -type f -name '*.rst' -exec md5sum {} + | sort | md5sum".to_owned(),
            format!(
                "cd {corpus_path} && find . -type f -name '*.rst' -exec md5sum {{}} + | sed 's|  \\./|  /files/|' | sort | md5sum"
            ),
        ),
    ];
    for (name, ours_script, theirs_script) in rows {
        let (ours, out) = sandboxed(&rt, &shell, || sh::shell_spec(spec(), &ours_script), 3).await;
        let theirs = bash(3, &theirs_script);
        let same = match &theirs {
            Some((_, o)) if *o == out => "same output".to_owned(),
            Some(_) => "**output differs**".to_owned(),
            None => "bash not found".to_owned(),
        };
        let ratio = theirs
            .as_ref()
            .map_or(f64::NAN, |(d, _)| d.as_secs_f64() / ours.as_secs_f64());
        let over = if name.starts_with("find") {
            "the grep corpus' .rst files".to_owned()
        } else {
            format!("{} MB of text", size / 1_000_000)
        };
        t.row(
            // A `|` inside a table cell must be escaped.
            &format!("`{}` over {over}", name.replace('|', "\\|")),
            format!("vfs-sh {:.2} s", ours.as_secs_f64()),
            format!(
                "bash + GNU {} ({same})",
                theirs.as_ref().map_or("—".to_owned(), |(d, _)| format!(
                    "{:.2} s",
                    d.as_secs_f64()
                ))
            ),
            format!("{ratio:.2}× GNU"),
            "none set yet: recorded to watch".to_owned(),
        );
    }
}
