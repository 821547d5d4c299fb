//! The `vfsbox` command: run scripts locally, or serve them over HTTP.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
