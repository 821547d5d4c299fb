//! vfs-sh: placeholder entry point, replaced by the shell.
fn main() {}
