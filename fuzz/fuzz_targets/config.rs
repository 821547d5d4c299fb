//! The config parser never panics: any text is a config or a one-line
//! error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vfsbox_host::config::Config;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = Config::parse(text) {
            assert!(!e.0.contains('\n'), "a multi-line error: {e}");
        }
    }
});
