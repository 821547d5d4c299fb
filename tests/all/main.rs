//! vfsbox's integration tests: one binary, one module per area, all
//! driving the real runtime, the real `vfsbox` binary or the real server.

mod audit;
mod cli;
mod common;
mod deploy;
mod examples;
mod faults;
mod fleet;
mod gate;
mod getting_started;
mod grep;
mod hostile;
mod http;
mod limits;
mod mcp;
mod openapi_validator;
mod paths;
mod python;
mod readme;
mod s3;
mod server;
mod sh;
mod sh_differential;
mod sh_intercode;
mod validation;
mod vfs;
mod wasi_fs;
