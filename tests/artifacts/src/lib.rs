//! Paths of the guest fixtures and examples, built for `wasm32-wasip2` by
//! this crate's build script.

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));
