//! cpu-hash: hashes a buffer many times and prints the hash; the sandboxed
//! side of the limit-overhead benchmark (the native side runs `hash.rs`).
//!
//! Run with: `vfsbox run cpu_hash.wasm -- 4194304 20`

mod hash;

fn main() {
    let mut args = std::env::args().skip(1);
    let len = args.next().and_then(|a| a.parse().ok()).unwrap_or(4 << 20);
    let rounds = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    println!("{:016x}", hash::work(len, rounds));
}
