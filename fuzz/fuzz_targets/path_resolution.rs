//! Path resolution never panics, and whatever it accepts is an absolute,
//! normalised path that climbs nowhere: no `.`, `..` or empty components,
//! and parsing it back gives it unchanged. Resolving beneath a preopened
//! directory (`wasi:filesystem`) never leaves it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vfsbox_host::vfs::{VPath, resolve, resolve_beneath, resolve_bytes};

fn check_normal(p: &VPath) {
    let s = p.as_str();
    assert!(s.starts_with('/'));
    assert!(s == "/" || !s.ends_with('/'));
    assert!(p.components().all(|c| !c.is_empty() && c != "." && c != ".."));
    assert!(!s.contains('\0'));
    assert_eq!(VPath::parse_absolute(s).as_ref(), Some(p));
}

fuzz_target!(|data: &[u8]| {
    // The first line is the working directory, the rest the path.
    let (cwd, input) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"/files"[..], data),
    };
    let cwd = resolve_bytes(&VPath::root(), cwd).unwrap_or_else(|_| VPath::root());
    if let Ok(p) = resolve_bytes(&cwd, input) {
        check_normal(&p);
        // Resolving it again, from anywhere, changes nothing.
        assert_eq!(resolve(&cwd, p.as_str()).as_ref(), Ok(&p));
    }
    // The working directory as an opened directory, beneath the preopen
    // that is its first component (or `/`).
    let Ok(input) = std::str::from_utf8(input) else {
        return;
    };
    let root = cwd
        .components()
        .next()
        .and_then(|first| VPath::root().join_name(first))
        .unwrap_or_else(VPath::root);
    if let Ok(p) = resolve_beneath(&cwd, &root, input) {
        check_normal(&p);
        assert!(p.strip_prefix(&root).is_some(), "{p} left {root}");
        // Where both accept it, it means what the cwd-relative resolution
        // means (which differs only for `~`).
        if !input.starts_with('~') {
            assert_eq!(resolve(&cwd, input).as_ref(), Ok(&p));
        }
    }
});
