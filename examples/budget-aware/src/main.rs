//! budget-aware: prints the first line of every document under a
//! directory, but checks `budget::remaining()` before each read and stops
//! cleanly, with a partial answer and a note saying so, before the host
//! would end it for reading too many documents or running out of time.
//!
//! Run with: `vfsbox run target/wasm32-wasip2/release/budget-aware.wasm --document-reads 5 -- /files`

use std::time::Duration;

use vfsbox_guest::{budget, fs};

/// Stop with this much time left, to print the answer.
const TIME_RESERVE: Duration = Duration::from_millis(500);

fn main() -> Result<(), vfsbox_guest::Error> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    let docs: Vec<_> = fs::walk(&dir)
        .filter_map(Result::ok)
        .filter(|e| e.is_file())
        .collect();
    let mut read = 0;
    for doc in &docs {
        let left = budget::remaining();
        if left.document_reads == 0 || left.time < TIME_RESERVE || left.bytes_read < doc.len() {
            break;
        }
        let text = fs::read_to_string(doc.path()).unwrap_or_default();
        println!("{}: {}", doc.path(), text.lines().next().unwrap_or(""));
        read += 1;
    }
    if read < docs.len() {
        println!(
            "partial: read {read} of {} documents before the budget ran out",
            docs.len()
        );
    }
    Ok(())
}
