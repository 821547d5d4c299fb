//! The little languages vfs-sh parses by hand never panic: awk programs,
//! sed scripts, POSIX regexes (basic and extended), shell arithmetic,
//! `date -d` strings, glob patterns, `expand -t` tab-stop lists and bc
//! programs. Each input is refused with a message or accepted. Any bytes
//! also round-trip through vfs-sh's text (`src/lossless.rs`). Programs
//! and scripts are parsed, not run (an awk or bc loop may run until the
//! sandbox's deadline, which native fuzzing has not got). The first byte picks the language; the rest is its text (for
//! a glob, the pattern, a newline, then the name to match).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    if which % 11 == 10 {
        assert!(vfs_sh::fuzzing::lossless_round_trip(rest));
        return;
    }
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if text.len() > 4096 {
        return;
    }
    use vfs_sh::fuzzing as f;
    // The answers are not checked: what must hold is that each returns.
    let _answer = match which % 11 {
        0 => Some(i64::from(f::awk(text))),
        1 => Some(i64::from(f::sed(text, false))),
        2 => Some(i64::from(f::sed(text, true))),
        3 => Some(i64::from(f::posix_regex(text, false))),
        4 => Some(i64::from(f::posix_regex(text, true))),
        5 => f::arithmetic(text),
        6 => f::date(text),
        7 => f::tab_stops(text).and_then(|n| i64::try_from(n).ok()),
        8 => i64::try_from(f::bc(text)).ok(),
        _ => {
            let (pattern, name) = text.split_once('\n').unwrap_or((text, "name"));
            Some(i64::from(f::glob(pattern, name)))
        }
    };
});
