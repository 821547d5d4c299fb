//! wc: counts the lines, words and bytes of the documents named, like
//! `wc`, with a total when there are several. Shows reading documents and
//! reporting errors per file while going on with the others.
//!
//! Run with: `vfsbox run target/wasm32-wasip2/release/wc.wasm --cwd /files -- README.md policies/refund-policy.md`

use vfsbox_guest::{fs, process};

fn counts(bytes: &[u8]) -> [usize; 3] {
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let words = bytes
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .count();
    [lines, words, bytes.len()]
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: wc FILE...");
        process::exit(2);
    }
    let mut total = [0; 3];
    let mut failed = false;
    for file in &files {
        match fs::read(file) {
            Ok(bytes) => {
                let c = counts(&bytes);
                println!("{:>7} {:>7} {:>7} {file}", c[0], c[1], c[2]);
                for (t, n) in total.iter_mut().zip(c) {
                    *t += n;
                }
            }
            Err(e) => {
                eprintln!("wc: {e}");
                failed = true;
            }
        }
    }
    if files.len() > 1 {
        println!("{:>7} {:>7} {:>7} total", total[0], total[1], total[2]);
    }
    process::exit(u8::from(failed));
}
