//! The demo documents, built into the binary: a small company handbook that
//! `vfsbox serve` serves at `/files` when it has no config.

use std::sync::Arc;

use crate::vfs::{MemoryBackend, Mount, VPath, Vfs};

include!(concat!(env!("OUT_DIR"), "/demo_files.rs"));

/// Where the demo documents are mounted.
pub const DEMO_MOUNT: &str = "/files";

/// A filesystem with the demo documents at [`DEMO_MOUNT`].
pub fn demo_vfs() -> Vfs {
    let tree = DEMO_FILES
        .iter()
        .fold(MemoryBackend::new(), |tree, (path, bytes)| {
            tree.file(path, *bytes)
        });
    let path = VPath::parse_absolute(DEMO_MOUNT).unwrap_or_else(VPath::root);
    Vfs::new([Mount {
        path,
        backend: Arc::new(tree),
    }])
    .unwrap_or_default()
}

/// The demo documents as `(path below the mount, bytes)`.
pub fn demo_files() -> &'static [(&'static str, &'static [u8])] {
    DEMO_FILES
}
