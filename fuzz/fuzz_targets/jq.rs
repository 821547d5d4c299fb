//! `jq`'s parsers never panic: any program text compiles or is refused,
//! any bytes read as JSON values or stop at an error, and every value read
//! is written back. The program is not run (it may loop until the
//! sandbox's deadline, which native fuzzing has not got). The first line
//! is the program, the rest the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|b| *b == b'\n').unwrap_or(data.len());
    let (program, input) = data.split_at(split);
    let Ok(program) = std::str::from_utf8(program) else {
        return;
    };
    if program.len() > 4096 {
        return;
    }
    let _values = vfs_sh::fuzzing::jq(program, input);
});
