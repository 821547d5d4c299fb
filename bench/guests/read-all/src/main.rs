//! Reads every document under a directory through `vfsbox-guest` and
//! prints how many, their bytes and a hash of them: what `std-fs sum`
//! does through `std::fs`, for the benchmark that compares the two.

/// FNV-1a, 64 bits, as `std-fs` hashes.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn main() -> Result<(), vfsbox_guest::Error> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/files".to_owned());
    let mut paths = Vec::new();
    for entry in vfsbox_guest::fs::walk(&dir) {
        let entry = entry?;
        if entry.is_file() {
            paths.push(entry.path().to_owned());
        }
    }
    paths.sort();
    let (mut bytes, mut hash) = (0u64, 0xcbf2_9ce4_8422_2325);
    for path in &paths {
        let doc = vfsbox_guest::fs::read(path)?;
        bytes += doc.len() as u64;
        hash = fnv(hash, &doc);
    }
    println!("documents {} bytes {bytes} hash {hash:016x}", paths.len());
    Ok(())
}
