//! Write [vfsbox] scripts in Rust.
//!
//! A vfsbox script is an ordinary Rust program with a `fn main()`, built for
//! `wasm32-wasip2`. It reads its arguments, stdin and clocks through the Rust
//! standard library as usual, and reads documents through this crate or
//! through `std::fs`: the host gives it a read-only virtual filesystem of
//! documents, and nothing else (no sockets, no host directories).
//!
//! `std::fs` (and any crate that opens paths) reads the documents too: the
//! host serves `wasi:filesystem` over them, one preopened directory per
//! mount, under the same budget. This crate adds what only the host does
//! well: listings that say when they were cut, [`search`] on the host
//! without copying documents into the script, and the [`budget`] left.
//!
//! ```no_run
//! use vfsbox_guest::fs;
//!
//! fn main() -> Result<(), vfsbox_guest::Error> {
//!     for entry in fs::read_dir("/files")? {
//!         println!("{}", entry.name());
//!     }
//!     Ok(())
//! }
//! ```
//!
//! - [`fs`]: metadata, directory listings, whole and ranged reads, walks;
//! - [`search`]: grep on the host, with ripgrep's engine and a scan budget;
//! - [`budget`]: what is left of the script's time, fuel and read allowances.
//!
//! Every script runs with limits. Running out of one (the deadline, fuel,
//! memory, the document-read cap) ends the script; everything it printed
//! until then is kept. Errors a script can handle are [`Error`] values.
//!
//! [vfsbox]: https://example.invalid/vfsbox
#![deny(missing_docs)]

pub mod budget;
mod error;
pub mod fs;
pub mod process;
pub mod search;

pub use error::{Error, Result};

/// The bindings generated from the vfsbox WIT world. Use the modules above.
#[doc(hidden)]
pub mod wit {
    wit_bindgen::generate!({
        path: "../wit",
        world: "script",
        generate_all,
    });
}

/// Re-exported so a script needs no other dependency to generate bindings of
/// its own.
#[doc(hidden)]
pub use wit_bindgen;
