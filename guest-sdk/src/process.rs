//! Ending the script with an exit code.

use std::io::Write;

/// Ends the script at once with `code` as its exit code, like
/// [`std::process::exit`], after flushing stdout and stderr.
///
/// Use this rather than `std::process::exit`: on `wasm32-wasip2` the
/// standard library can only report success (0) or failure (1), while this
/// reports the code itself.
///
/// ```no_run
/// if !vfsbox_guest::fs::exists("/files/input.csv") {
///     eprintln!("no input");
///     vfsbox_guest::process::exit(2);
/// }
/// ```
pub fn exit(code: u8) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    crate::wit::wasi::cli::exit::exit_with_code(code);
    // The host never returns from `exit-with-code`.
    std::process::exit(i32::from(code != 0))
}
