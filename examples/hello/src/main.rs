//! hello: a first script. Greets its arguments, prints its working
//! directory, and lists the mounts it can read at `/`.
//!
//! Run with: `vfsbox run target/wasm32-wasip2/release/hello.wasm -- agents`

use vfsbox_guest::fs;

fn main() -> Result<(), vfsbox_guest::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let who = if args.is_empty() {
        "world".to_owned()
    } else {
        args.join(" ")
    };
    println!("hello, {who}!");
    println!("cwd: {}", fs::cwd());
    for mount in fs::read_dir("/")? {
        println!("mount: {}", mount.path());
    }
    Ok(())
}
