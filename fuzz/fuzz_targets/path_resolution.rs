//! Path resolution never panics, and whatever it accepts is an absolute,
//! normalised path that climbs nowhere: no `.`, `..` or empty components,
//! and parsing it back gives it unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vfsbox_host::vfs::{VPath, resolve, resolve_bytes};

fuzz_target!(|data: &[u8]| {
    // The first line is the working directory, the rest the path.
    let (cwd, input) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"/files"[..], data),
    };
    let cwd = resolve_bytes(&VPath::root(), cwd).unwrap_or_else(|_| VPath::root());
    if let Ok(p) = resolve_bytes(&cwd, input) {
        let s = p.as_str();
        assert!(s.starts_with('/'));
        assert!(s == "/" || !s.ends_with('/'));
        assert!(p.components().all(|c| !c.is_empty() && c != "." && c != ".."));
        assert!(!s.contains('\0'));
        assert_eq!(VPath::parse_absolute(s).as_ref(), Some(&p));
        // Resolving it again, from anywhere, changes nothing.
        assert_eq!(resolve(&cwd, s).as_ref(), Ok(&p));
    }
});
