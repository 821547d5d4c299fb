//! `vfs-sh` never panics on any script text: the tokenizer, the parser and
//! the commands either run it or refuse it with a message and exit 2. The
//! filesystem is empty (no mounts), so nothing on the host is touched.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(script) = std::str::from_utf8(data) else {
        return;
    };
    if script.len() > 4096 {
        return;
    }
    let mut fs = vfs_sh::dirfs::DirFs::new();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let _status = vfs_sh::run(&mut fs, script, Box::new(std::io::empty()), &mut out, &mut err);
});
