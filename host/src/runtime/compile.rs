//! Turning uploaded bytes into a runnable script: validation, compilation
//! and a bounded cache of compiled scripts keyed by their SHA-256.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};
use wasmtime_wasi::p2::bindings::CommandPre;

use crate::imports::{ALLOWED_WASI, RunState, SCRIPT_PACKAGE};

/// The identity of a script: `sha256:<hex>` of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScriptId(String);

impl ScriptId {
    /// The id of these bytes.
    pub fn of(bytes: &[u8]) -> ScriptId {
        ScriptId(format!("sha256:{}", hex::encode(Sha256::digest(bytes))))
    }

    /// Reads `sha256:<64 hex digits>`.
    pub fn parse(s: &str) -> Option<ScriptId> {
        let hex = s.strip_prefix("sha256:")?;
        let ok = hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| ScriptId(s.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ScriptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why bytes are not a script vfsbox can run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidScript {
    /// Not WebAssembly at all.
    #[error("not a WebAssembly binary (it does not start with the `\\0asm` magic number)")]
    NotWasm,
    /// A core module, not a component.
    #[error(
        "a core WebAssembly module, not a component; build the script for `wasm32-wasip2` \
         (or wrap the module with `wasm-tools component new`)"
    )]
    CoreModule,
    /// The component does not validate or compile.
    #[error("invalid component: {0}")]
    Invalid(String),
    /// The component imports something vfsbox does not provide.
    #[error(
        "the script imports `{0}`, which vfsbox does not provide; a script may import only \
         wasi:cli, wasi:io, wasi:clocks, wasi:random, wasi:filesystem (the documents, \
         read-only) and vfsbox:script"
    )]
    ForbiddenImport(String),
    /// The component is not a command.
    #[error("the component does not export `wasi:cli/run`; build it as a binary with `fn main()`")]
    NotACommand(String),
}

/// A compiled, validated script, ready to instantiate.
pub struct Compiled {
    pub(crate) id: ScriptId,
    pub(crate) pre: CommandPre<RunState>,
    /// Bytes of compiled code it keeps in memory.
    code_size: usize,
}

impl Compiled {
    /// The script's id.
    pub fn id(&self) -> &ScriptId {
        &self.id
    }

    /// Bytes of compiled code this script keeps in memory.
    pub fn code_size(&self) -> usize {
        self.code_size
    }

    /// The compiled code, for another host of the same engine to
    /// [`load`].
    pub(crate) fn serialize(&self) -> wasmtime::Result<Vec<u8>> {
        self.pre.instance_pre().component().serialize()
    }
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Tells a component from a core module from anything else by its header.
fn check_header(bytes: &[u8]) -> Result<(), InvalidScript> {
    let Some(header) = bytes.get(..8) else {
        return Err(InvalidScript::NotWasm);
    };
    if &header[..4] != b"\0asm" {
        return Err(InvalidScript::NotWasm);
    }
    // Version 1, layer 0 is a core module; layer 1 a component.
    match header[4..] {
        [1, 0, 0, 0] => Err(InvalidScript::CoreModule),
        [_, _, 1, 0] => Ok(()),
        _ => Err(InvalidScript::Invalid(
            "unknown WebAssembly binary version".to_owned(),
        )),
    }
}

/// What a component may import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Imports {
    /// A script: `wasi:cli` (no sockets), `wasi:io`, `wasi:clocks`,
    /// `wasi:random`, `wasi:filesystem` and `vfsbox:script`.
    Script,
    /// A component built into vfsbox (the Python interpreter, whose runtime
    /// imports `wasi:sockets`): a script's imports and `wasi:sockets`,
    /// which is linked with every use denied.
    BuiltIn,
}

/// Whether vfsbox provides an import of this name (`wasi:io/streams@0.2.0`).
fn import_allowed(name: &str, imports: Imports) -> bool {
    let unversioned = name.split('@').next().unwrap_or(name);
    ALLOWED_WASI.contains(&unversioned)
        || unversioned.starts_with(SCRIPT_PACKAGE)
        || (imports == Imports::BuiltIn && unversioned.starts_with("wasi:sockets/"))
}

/// Validates and compiles a component. CPU-heavy: callers hold an
/// admission permit.
pub(crate) fn compile(
    engine: &Engine,
    linker: &Linker<RunState>,
    id: ScriptId,
    bytes: &[u8],
    imports: Imports,
) -> Result<Compiled, InvalidScript> {
    check_header(bytes)?;
    let component =
        Component::new(engine, bytes).map_err(|e| InvalidScript::Invalid(root_cause(&e)))?;
    prepare(engine, linker, id, component, imports)
}

/// Loads compiled code shared by another host of the fleet, checked as a
/// compiled script is.
///
/// # Safety
///
/// `code` must be the output of [`Compiled::serialize`] by an engine of
/// the same compatibility hash: wasmtime runs it as machine code without
/// checking it. The caller authenticates it first (an HMAC tag with a key
/// only hosts hold, `crate::shared`), so that a forged or corrupted
/// artifact is never loaded.
#[allow(
    unsafe_code,
    reason = "wasmtime's deserialisation is unsafe; the caller authenticates the code first"
)]
pub(crate) unsafe fn load(
    engine: &Engine,
    linker: &Linker<RunState>,
    id: ScriptId,
    code: &[u8],
    imports: Imports,
) -> Result<Compiled, InvalidScript> {
    // SAFETY: the caller's contract above.
    let component = unsafe { Component::deserialize(engine, code) }
        .map_err(|e| InvalidScript::Invalid(root_cause(&e)))?;
    prepare(engine, linker, id, component, imports)
}

/// Checks a component's imports and exports and links it.
fn prepare(
    engine: &Engine,
    linker: &Linker<RunState>,
    id: ScriptId,
    component: Component,
    imports: Imports,
) -> Result<Compiled, InvalidScript> {
    let ty = component.component_type();
    if let Some((name, _)) = ty
        .imports(engine)
        .find(|(name, _)| !import_allowed(name, imports))
    {
        return Err(InvalidScript::ForbiddenImport(name.to_owned()));
    }
    let pre = linker
        .instantiate_pre(&component)
        .map_err(|e| InvalidScript::Invalid(format!("{e:#}")))?;
    let pre = CommandPre::new(pre).map_err(|e| InvalidScript::NotACommand(format!("{e:#}")))?;
    let code = component.image_range();
    Ok(Compiled {
        id,
        pre,
        code_size: (code.end as usize).saturating_sub(code.start as usize),
    })
}

fn root_cause(e: &wasmtime::Error) -> String {
    e.root_cause().to_string()
}

/// What a cached value costs to keep, in bytes.
pub(crate) trait CacheWeight {
    fn key(&self) -> &ScriptId;
    fn weight(&self) -> usize;
}

impl CacheWeight for Compiled {
    fn key(&self) -> &ScriptId {
        &self.id
    }
    fn weight(&self) -> usize {
        self.code_size
    }
}

/// A least-recently-used cache of compiled scripts, bounded both in
/// entries and in bytes of compiled code.
pub(crate) struct CompileCache<T = Compiled> {
    entries: Mutex<Entries<T>>,
    max_bytes: usize,
    pub(crate) hits: AtomicU64,
    pub(crate) misses: AtomicU64,
}

struct Entries<T> {
    lru: lru::LruCache<ScriptId, Arc<T>>,
    bytes: usize,
}

impl<T: CacheWeight> CompileCache<T> {
    pub(crate) fn new(max_entries: usize, max_bytes: usize) -> CompileCache<T> {
        let capacity = NonZeroUsize::new(max_entries).unwrap_or(NonZeroUsize::MIN);
        CompileCache {
            entries: Mutex::new(Entries {
                lru: lru::LruCache::new(capacity),
                bytes: 0,
            }),
            max_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries<T>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached value, counted as a hit when found and not counted at
    /// all when not (a caller that looks again before compiling counts
    /// the miss then).
    pub(crate) fn find(&self, id: &ScriptId) -> Option<Arc<T>> {
        let found = self.lock().lru.get(id).cloned();
        if found.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    pub(crate) fn get(&self, id: &ScriptId) -> Option<Arc<T>> {
        let found = self.lock().lru.get(id).cloned();
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Keeps `value`, evicting the least recently used scripts until the
    /// cache is within its bounds again. A script larger than the whole
    /// byte bound is not kept.
    pub(crate) fn insert(&self, value: Arc<T>) {
        let size = value.weight();
        if size > self.max_bytes {
            return;
        }
        let mut entries = self.lock();
        // `push` evicts the least recently used entry when the cache is
        // full of entries, or hands back the one with the same key.
        if let Some((_, old)) = entries.lru.push(value.key().clone(), value) {
            entries.bytes -= old.weight();
        }
        entries.bytes += size;
        while entries.bytes > self.max_bytes {
            match entries.lru.pop_lru() {
                Some((_, old)) => entries.bytes -= old.weight(),
                None => break,
            }
        }
    }
}

impl<T> fmt::Debug for CompileCache<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompileCache")
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_modules_components_and_garbage_apart() {
        assert_eq!(check_header(b""), Err(InvalidScript::NotWasm));
        assert_eq!(check_header(b"hello world"), Err(InvalidScript::NotWasm));
        assert_eq!(
            check_header(b"\0asm\x01\0\0\0"),
            Err(InvalidScript::CoreModule)
        );
        assert_eq!(check_header(b"\0asm\x0d\0\x01\0"), Ok(()));
    }

    #[test]
    fn allows_wasi_cli_basics_and_vfsbox_only() {
        let script = |name| import_allowed(name, Imports::Script);
        assert!(script("wasi:io/streams@0.2.0"));
        assert!(script("wasi:cli/stdout@0.2.6"));
        assert!(script("wasi:filesystem/types@0.2.3"));
        assert!(script("vfsbox:script/fs@0.1.0"));
        assert!(!script("wasi:sockets/tcp@0.2.0"));
        assert!(!script("wasi:http/outgoing-handler@0.2.0"));
        assert!(!script("vfsbox:scriptx/fs"));
        assert!(!script("evil"));
        // A built-in component may also import sockets (denied when used),
        // and nothing else more.
        let built_in = |name| import_allowed(name, Imports::BuiltIn);
        assert!(built_in("wasi:sockets/tcp@0.2.9"));
        assert!(built_in("wasi:io/streams@0.2.0"));
        assert!(!built_in("wasi:http/outgoing-handler@0.2.0"));
        assert!(!built_in("wasi:socketsx/tcp"));
    }

    #[test]
    fn script_ids_are_sha256() {
        let id = ScriptId::of(b"abc");
        assert_eq!(
            id.as_str(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(ScriptId::parse(id.as_str()), Some(id));
        assert_eq!(ScriptId::parse("sha256:XYZ"), None);
        assert_eq!(ScriptId::parse("md5:ba7816bf"), None);
    }

    struct Fake(ScriptId, usize);

    impl CacheWeight for Fake {
        fn key(&self) -> &ScriptId {
            &self.0
        }
        fn weight(&self) -> usize {
            self.1
        }
    }

    fn fake(name: &str, size: usize) -> Arc<Fake> {
        Arc::new(Fake(ScriptId::of(name.as_bytes()), size))
    }

    fn cached(cache: &CompileCache<Fake>, name: &str) -> bool {
        cache.get(&ScriptId::of(name.as_bytes())).is_some()
    }

    #[test]
    fn the_cache_evicts_the_least_recently_used_past_its_byte_bound() {
        let cache = CompileCache::<Fake>::new(10, 100);
        cache.insert(fake("a", 40));
        cache.insert(fake("b", 40));
        assert!(cached(&cache, "a"), "a is now the most recently used");
        cache.insert(fake("c", 40));
        assert!(!cached(&cache, "b"), "b was evicted to make room");
        assert!(cached(&cache, "a") && cached(&cache, "c"));
        assert_eq!(cache.lock().bytes, 80);
    }

    #[test]
    fn the_cache_evicts_past_its_entry_bound_and_keeps_its_byte_count() {
        let cache = CompileCache::<Fake>::new(2, 1000);
        cache.insert(fake("a", 10));
        cache.insert(fake("b", 20));
        cache.insert(fake("c", 30));
        assert!(!cached(&cache, "a"));
        assert_eq!(cache.lock().bytes, 50);
        cache.insert(fake("c", 30));
        assert_eq!(cache.lock().bytes, 50, "re-inserting does not count twice");
    }

    #[test]
    fn find_counts_hits_only_and_get_counts_both() {
        let cache = CompileCache::<Fake>::new(10, 100);
        cache.insert(fake("a", 1));
        let (a, b) = (ScriptId::of(b"a"), ScriptId::of(b"b"));
        assert!(cache.find(&a).is_some() && cache.find(&b).is_none());
        assert_eq!(
            (
                cache.hits.load(Ordering::Relaxed),
                cache.misses.load(Ordering::Relaxed)
            ),
            (1, 0)
        );
        assert!(cache.get(&b).is_none());
        assert_eq!(cache.misses.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_script_larger_than_the_cache_is_not_kept() {
        let cache = CompileCache::<Fake>::new(10, 100);
        cache.insert(fake("a", 50));
        cache.insert(fake("huge", 101));
        assert!(!cached(&cache, "huge"));
        assert!(cached(&cache, "a"), "nothing was evicted for it");
    }
}
