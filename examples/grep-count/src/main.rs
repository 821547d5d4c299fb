//! grep-count: counts the matching lines of a pattern in each file under
//! the roots, with the host's search (ripgrep's engine, much faster than
//! reading every document). When the search's scan budget runs out it says
//! so: the counts are then partial.
//!
//! Run with: `vfsbox run target/wasm32-wasip2/release/grep-count.wasm -- -i refund /files`

use vfsbox_guest::process;
use vfsbox_guest::search::Grep;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let ignore_case = args.first().is_some_and(|a| a == "-i");
    if ignore_case {
        args.remove(0);
    }
    let Some((pattern, roots)) = args.split_first() else {
        eprintln!("usage: grep-count [-i] PATTERN [ROOT...]");
        process::exit(2);
    };
    let grep = roots
        .iter()
        .fold(Grep::new(pattern).ignore_case(ignore_case), |g, r| {
            g.root(r)
        });
    let found = match grep.run() {
        Ok(found) => found,
        Err(e) => {
            eprintln!("grep-count: {e}");
            process::exit(2);
        }
    };
    for file in &found.files {
        println!("{:>5} {}", file.match_count, file.path);
    }
    let total: u64 = found.files.iter().map(|f| f.match_count).sum();
    println!("{total:>5} total in {} files", found.files_scanned);
    for (root, e) in &found.errors {
        eprintln!("grep-count: {root}: {e}");
    }
    if let Some(cut) = found.truncated {
        eprintln!(
            "grep-count: partial: stopped after {} of {} files (the scan budget is spent); narrow the roots",
            cut.files_searched,
            cut.files_searched + cut.files_not_reached
        );
    }
}
