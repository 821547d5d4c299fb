//! vfsbox's integration tests: one binary, one module per area, all
//! driving the real runtime, the real `vfsbox` binary or the real server.

mod cli;
mod common;
mod gate;
mod limits;
mod validation;
