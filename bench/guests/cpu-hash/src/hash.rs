/// FNV-1a, `rounds` times over `len` bytes of xorshift noise: CPU-bound
/// work with memory traffic, the same in the sandbox and natively.
pub(crate) fn work(len: usize, rounds: u32) -> u64 {
    let mut buf = vec![0u8; len];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for b in buf.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for _ in 0..rounds {
        for &b in &buf {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}
