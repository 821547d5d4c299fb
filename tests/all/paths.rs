//! Path resolution: table cases across mount boundaries and backends, and
//! properties that no input, however odd, reaches outside its mount.

use std::sync::Arc;

use proptest::prelude::*;
use vfsbox_host::vfs::{FsError, MemoryBackend, Mount, resolve};
use vfsbox_host::{VPath, Vfs};

use crate::common::*;

fn two_mounts() -> Vfs {
    Vfs::new([
        Mount {
            path: vpath("/files"),
            backend: Arc::new(
                MemoryBackend::new()
                    .file("a.txt", "files-a")
                    .file("sub/b.txt", "files-b"),
            ),
        },
        Mount {
            path: vpath("/files-archive"),
            backend: Arc::new(MemoryBackend::new().file("a.txt", "archive-a")),
        },
    ])
    .expect("mounts")
}

#[tokio::test]
async fn paths_resolve_across_mount_boundaries() {
    let vfs = two_mounts();
    let cwd = vpath("/files/sub");
    type Want = Result<&'static str, fn(String) -> FsError>;
    let cases: &[(&str, Want)] = &[
        ("b.txt", Ok("files-b")),
        ("../a.txt", Ok("files-a")),
        ("../../files-archive/a.txt", Ok("archive-a")),
        ("../../../../files-archive/./a.txt", Ok("archive-a")),
        ("/files/../files-archive/a.txt", Ok("archive-a")),
        ("~/files/a.txt", Ok("files-a")),
        ("/files-archive/../files/sub/b.txt", Ok("files-b")),
        ("/files/sub/../../files/a.txt", Ok("files-a")),
        ("/filesarchive/a.txt", Err(FsError::NotFound)),
        ("/files/a.txt/", Ok("files-a")),
        ("/files/sub", Err(FsError::IsADirectory)),
        ("/", Err(FsError::IsADirectory)),
        ("/files/%2e%2e/files-archive/a.txt", Err(FsError::NotFound)),
    ];
    for (input, want) in cases {
        let path = resolve(&cwd, input).expect("resolves");
        let got = vfs.read_range(&path, 0..100).await;
        match want {
            Ok(text) => assert_eq!(got.as_deref(), Ok(text.as_bytes()), "{input}"),
            Err(make) => assert_eq!(got, Err(make(path.to_string())), "{input}"),
        }
    }
}

/// Path-like strings built from the pieces that cause trouble.
fn odd_path() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(".."),
        Just("."),
        Just(""),
        Just("~"),
        Just("..."),
        Just("%2e%2e"),
        Just("..\\.."),
        Just("files"),
        Just("secret.txt"),
        Just("link-out"),
        Just("docs"),
        Just("a.txt"),
        Just(" "),
    ];
    (
        prop_oneof![Just(""), Just("/"), Just("~/"), Just("//")],
        prop::collection::vec(piece, 0..12),
    )
        .prop_map(|(lead, pieces)| format!("{lead}{}", pieces.join("/")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn resolved_paths_are_always_normal(input in odd_path(), cwd in odd_path()) {
        let cwd = resolve(&VPath::root(), &cwd).unwrap_or_else(|_| VPath::root());
        if let Ok(p) = resolve(&cwd, &input) {
            let s = p.as_str();
            prop_assert!(s.starts_with('/'));
            prop_assert!(s == "/" || !s.ends_with('/'));
            prop_assert!(p.components().all(|c| !c.is_empty() && c != "." && c != ".."), "{}", s);
            prop_assert_eq!(VPath::parse_absolute(s), Some(p.clone()));
        }
    }

    #[test]
    fn no_input_reads_outside_a_local_mount(input in odd_path()) {
        let (vfs, _dirs) = confined();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let cwd = vpath("/files/docs");
        if let Ok(path) = resolve(&cwd, &input) {
            if let Ok(bytes) = rt.block_on(vfs.read_range(&path, 0..1024)) {
                prop_assert!(!bytes.windows(6).any(|w| w == b"SECRET"), "{} read a secret", path);
            }
            if let Ok(listing) = rt.block_on(vfs.list(&path, 1000)) {
                prop_assert!(listing.entries.iter().all(|e| e.name != "secret.txt"), "{} listed a secret", path);
            }
        }
    }
}

/// A local mount whose root has a sibling `secret.txt`, and symlinks that
/// try to reach it.
fn confined() -> (Vfs, (tempfile::TempDir,)) {
    let base = tempfile::tempdir().expect("tempdir");
    let b = base.path();
    std::fs::write(b.join("secret.txt"), "SECRET").expect("write");
    std::fs::create_dir_all(b.join("root/docs")).expect("mkdir");
    std::fs::write(b.join("root/docs/a.txt"), "public").expect("write");
    std::os::unix::fs::symlink("../secret.txt", b.join("root/link-out")).expect("symlink");
    std::os::unix::fs::symlink("../../secret.txt", b.join("root/docs/secret.txt"))
        .expect("symlink");
    std::os::unix::fs::symlink(b, b.join("root/docs/files")).expect("symlink");
    let vfs = local_vfs(&b.join("root"));
    (vfs, (base,))
}
