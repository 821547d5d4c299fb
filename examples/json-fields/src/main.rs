//! json-fields: walks a directory, parses every `.json` document with
//! `serde_json` inside the sandbox, and prints the chosen fields as
//! tab-separated columns. Fields may be nested: `contact.email`.
//!
//! Run with: `vfsbox run target/wasm32-wasip2/release/json-fields.wasm -- /files/customers name plan contact.email`

use serde_json::Value;
use vfsbox_guest::{fs, process};

fn field<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(doc, |v, key| v.get(key))
}

fn show(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "-".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((dir, fields)) = args.split_first().filter(|(_, f)| !f.is_empty()) else {
        eprintln!("usage: json-fields DIR FIELD...");
        process::exit(2);
    };
    println!("{}", fields.join("\t"));
    let mut failed = false;
    for entry in fs::walk(dir) {
        let entry = match entry {
            Ok(e) if e.is_file() && e.name().ends_with(".json") => e,
            Ok(_) => continue,
            Err(e) => {
                eprintln!("json-fields: {e}");
                failed = true;
                continue;
            }
        };
        let parsed = fs::read(entry.path())
            .map_err(|e| e.to_string())
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).map_err(|e| e.to_string()));
        match parsed {
            Ok(doc) => {
                let row: Vec<String> = fields.iter().map(|f| show(field(&doc, f))).collect();
                println!("{}", row.join("\t"));
            }
            Err(e) => {
                eprintln!("json-fields: {}: {e}", entry.path());
                failed = true;
            }
        }
    }
    process::exit(u8::from(failed));
}
