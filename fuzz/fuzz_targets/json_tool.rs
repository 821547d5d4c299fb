//! `python3 -m json.tool`'s reader and writer never panic: any bytes
//! decode or stop at Python's error, and what is written for a value
//! decodes back to the same output.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _len = vfs_sh::fuzzing::json_tool(data);
});
