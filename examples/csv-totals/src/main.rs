//! Sums columns of every CSV file under a directory.
//!
//! ```text
//! csv-totals DIR COLUMN...
//! ```
//!
//! Nothing here knows of vfsbox: `walkdir` walks the tree and `csv` parses
//! each file, both through `std::fs`, which vfsbox serves from the
//! documents (`wasi:filesystem`, one preopened directory per mount). The
//! same program built for the host reads a directory on disk the same way.

use std::process::ExitCode;

use walkdir::WalkDir;

fn totals(file: &std::path::Path, columns: &[String]) -> Result<(u64, Vec<f64>), csv::Error> {
    let mut reader = csv::Reader::from_path(file)?;
    let headers = reader.headers()?.clone();
    let at: Vec<Option<usize>> = columns
        .iter()
        .map(|c| headers.iter().position(|h| h == c))
        .collect();
    let (mut rows, mut sums) = (0, vec![0.0; columns.len()]);
    for record in reader.records() {
        let record = record?;
        rows += 1;
        for (sum, i) in sums.iter_mut().zip(&at) {
            if let Some(v) = i
                .and_then(|i| record.get(i))
                .and_then(|v| v.parse::<f64>().ok())
            {
                *sum += v;
            }
        }
    }
    Ok((rows, sums))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((dir, columns)) = args.split_first() else {
        eprintln!("usage: csv-totals DIR COLUMN...");
        return ExitCode::from(2);
    };
    let mut failed = false;
    let walk = WalkDir::new(dir).sort_by_file_name();
    for entry in walk {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                eprintln!("csv-totals: {e}");
                failed = true;
                continue;
            }
        };
        let path = entry.path();
        if !entry.file_type().is_file() || path.extension().is_none_or(|x| x != "csv") {
            continue;
        }
        let shown = path.strip_prefix(dir).unwrap_or(path).display();
        match totals(path, columns) {
            Ok((rows, sums)) => {
                let sums: Vec<String> = columns
                    .iter()
                    .zip(sums)
                    .map(|(c, s)| format!("{c}={s}"))
                    .collect();
                println!("{shown}: {rows} rows {}", sums.join(" "));
            }
            Err(e) => {
                eprintln!("csv-totals: {shown}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
