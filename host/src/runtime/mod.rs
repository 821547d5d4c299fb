//! The sandbox runtime: one engine per process, an admission gate, a cache
//! of compiled scripts, and [`Runtime::run`], which runs one script in its
//! own store with fuel, a wall-clock deadline and a memory limiter.

pub(crate) mod budget;
mod compile;
mod engine;
mod gate;
mod output;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use tracing::Instrument;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime::{CallHook, Engine, Store, Trap, UpdateDeadline};
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi::cli::AsyncStdinStream;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;

pub use crate::report::{LimitExceeded, Outcome, Report, Usage, describe};
pub use compile::{Compiled, InvalidScript, ScriptId};
pub use gate::{Busy, Gate, Permit};

use crate::audit::{AuditError, AuditLog, Caller, Event};
use crate::imports::{self, RunState, ScriptHost};
use crate::limits::{Limit, Limits};
use crate::vfs::{FsError, Kind, VPath, Vfs};
use budget::{Budget, millis};
use compile::CompileCache;
use engine::Executor;
use output::CappedOutput;

/// Compiled scripts kept in memory, at most.
const COMPILE_CACHE_ENTRIES: usize = 64;
/// Bytes of compiled code kept in memory, at most.
const COMPILE_CACHE_BYTES: usize = 256 * 1024 * 1024;
/// Arguments of a run, all together, at most.
pub const MAX_ARGS_BYTES: usize = 64 * 1024;

/// A script to run: bytes to compile (or find in the cache), or a script
/// compiled before.
#[derive(Debug, Clone)]
pub enum Script {
    /// A component's bytes.
    Bytes(Bytes),
    /// A compiled script.
    Compiled(Arc<Compiled>),
    /// The built-in Python interpreter (see [`crate::python`]).
    Python,
}

/// What a script reads as its standard input.
#[derive(Default)]
pub enum Stdin {
    /// Nothing: reads see the end at once.
    #[default]
    Empty,
    /// These bytes.
    Bytes(Bytes),
    /// A stream, read as the script asks (the CLI passes its own stdin).
    Stream(AsyncStdinStream),
}

impl std::fmt::Debug for Stdin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stdin::Empty => f.write_str("Empty"),
            Stdin::Bytes(b) => f.debug_tuple("Bytes").field(&b.len()).finish(),
            Stdin::Stream(_) => f.write_str("Stream"),
        }
    }
}

/// How to run a script: its arguments, input, filesystem and limits.
#[derive(Debug)]
pub struct RunSpec {
    /// `argv[0]` as the script sees it.
    pub program: String,
    /// The arguments after `argv[0]`.
    pub args: Vec<String>,
    /// Standard input.
    pub stdin: Stdin,
    /// The working directory, resolved against `/`.
    pub cwd: String,
    /// The filesystem the script sees.
    pub vfs: Vfs,
    /// The limits of this run (already within the server's).
    pub limits: Limits,
    /// Who asked, for the audit log.
    pub caller: Caller,
}

impl RunSpec {
    /// A run of `vfs` with the default limits, in `/`, with no arguments.
    pub fn new(vfs: Vfs) -> RunSpec {
        RunSpec {
            program: "script".to_owned(),
            args: Vec::new(),
            stdin: Stdin::Empty,
            cwd: "/".to_owned(),
            vfs,
            limits: Limits::default(),
            caller: Caller::default(),
        }
    }
}

/// Why a run could not start, or failed in the host. A run that starts
/// always ends in a [`Report`], whatever the script does.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The bytes are not a script vfsbox can run.
    #[error(transparent)]
    Invalid(#[from] InvalidScript),
    /// The working directory does not exist or is not a directory.
    #[error("bad working directory: {0}")]
    BadCwd(FsError),
    /// The arguments are too long.
    #[error("the arguments are longer than {MAX_ARGS_BYTES} bytes in all")]
    ArgsTooLong,
    /// The audit log could not be written.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// The host failed (a bug): the run was abandoned.
    #[error("internal error: {0}")]
    Internal(String),
}

/// How a [`Runtime`] is set up, besides its limits.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Where compiled code is cached on disk, across processes; none when
    /// absent. See [`default_compile_cache_dir`].
    pub compile_cache_dir: Option<std::path::PathBuf>,
    /// The fleet's shared bucket: compiled artifacts of stored scripts are
    /// fetched from it (once their tag verifies) before compiling, and
    /// shared there after.
    pub shared: Option<crate::shared::SharedStore>,
}

/// `$XDG_CACHE_HOME/vfsbox/compiled`, else `$HOME/.cache/vfsbox/compiled`.
pub fn default_compile_cache_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))?;
    Some(base.join("vfsbox/compiled"))
}

/// Counters for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Compiled scripts found in the cache.
    pub hits: u64,
    /// Scripts that had to be compiled.
    pub misses: u64,
    /// Compiled artifacts loaded from the fleet's shared store.
    pub shared_hits: u64,
    /// Lookups in the shared store that found no artifact.
    pub shared_misses: u64,
    /// Artifacts in the shared store refused: their tag did not verify
    /// (forged or corrupted), or they did not load.
    pub shared_rejected: u64,
}

/// The fleet's shared store as one runtime uses it.
struct Shared {
    store: crate::shared::SharedStore,
    /// The engine's compatibility hash, in hex: artifacts of other engines
    /// are not this one's.
    engine: String,
    hits: AtomicU64,
    misses: AtomicU64,
    rejected: AtomicU64,
}

/// The engine's compatibility hash (`Engine::precompile_compatibility_hash`)
/// through SHA-256, a hasher that gives the same answer in every process
/// (std's `DefaultHasher` is seeded per process).
fn engine_hash(engine: &Engine) -> String {
    use sha2::Digest;
    use std::hash::{Hash, Hasher};
    struct Stable(sha2::Sha256);
    impl Hasher for Stable {
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }
        fn finish(&self) -> u64 {
            let digest = self.0.clone().finalize();
            u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
        }
    }
    let mut hasher = Stable(sha2::Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hex::encode(&hasher.0.finalize()[..16])
}

struct Inner {
    engine: Engine,
    linker: Linker<RunState>,
    gate: Gate,
    cache: CompileCache,
    limits: Limits,
    audit: AuditLog,
    executor: Executor,
    /// Held while the built-in Python compiles, so that it compiles once:
    /// a run that needs it while [`Runtime::prepare_python`] compiles it
    /// waits for that compile instead of starting another.
    python_compile: tokio::sync::Mutex<()>,
    shared: Option<Shared>,
}

/// The sandbox runtime of a process. Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("limits", &self.inner.limits)
            .field("live", &self.inner.gate.live())
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// A runtime for scripts within `limits`, recording to `audit`.
    pub fn new(limits: Limits, audit: AuditLog) -> wasmtime::Result<Runtime> {
        Runtime::with_options(limits, audit, RuntimeOptions::default())
    }

    /// [`Runtime::new`], with options.
    pub fn with_options(
        limits: Limits,
        audit: AuditLog,
        options: RuntimeOptions,
    ) -> wasmtime::Result<Runtime> {
        let engine = engine::build(&limits, options.compile_cache_dir.as_deref())?;
        engine::start_ticker(&engine)?;
        let mut linker = Linker::new(&engine);
        imports::add_to_linker(&mut linker)?;
        let shared = options.shared.map(|store| Shared {
            store,
            engine: engine_hash(&engine),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
        });
        Ok(Runtime {
            inner: Arc::new(Inner {
                gate: Gate::new(limits.live_scripts),
                cache: CompileCache::new(COMPILE_CACHE_ENTRIES, COMPILE_CACHE_BYTES),
                executor: Executor::new(limits.live_scripts)?,
                python_compile: tokio::sync::Mutex::new(()),
                shared,
                engine,
                linker,
                limits,
                audit,
            }),
        })
    }

    /// The server's limits; a run may only lower them.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The process-wide admission gate.
    pub fn gate(&self) -> &Gate {
        &self.inner.gate
    }

    /// Scripts live right now.
    pub fn live_scripts(&self) -> usize {
        self.inner.gate.live()
    }

    /// The audit log runs record to.
    pub fn audit(&self) -> &AuditLog {
        &self.inner.audit
    }

    /// Compile-cache hits and misses so far.
    pub fn cache_stats(&self) -> CacheStats {
        let shared = |f: fn(&Shared) -> &AtomicU64| {
            self.inner
                .shared
                .as_ref()
                .map_or(0, |s| f(s).load(Ordering::Relaxed))
        };
        CacheStats {
            hits: self.inner.cache.hits.load(Ordering::Relaxed),
            misses: self.inner.cache.misses.load(Ordering::Relaxed),
            shared_hits: shared(|s| &s.hits),
            shared_misses: shared(|s| &s.misses),
            shared_rejected: shared(|s| &s.rejected),
        }
    }

    /// The fleet's shared store, when the host has one.
    pub fn shared(&self) -> Option<&crate::shared::SharedStore> {
        self.inner.shared.as_ref().map(|s| &s.store)
    }

    /// The verified artifact of `id` in the shared store, if there is one.
    async fn shared_artifact(&self, id: &ScriptId) -> Option<Bytes> {
        let shared = self.inner.shared.as_ref()?;
        match shared.store.get_artifact(&shared.engine, id).await {
            Ok(Some(code)) => Some(code),
            Ok(None) => {
                shared.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
            Err(e) => {
                if let crate::shared::SharedError::Tampered(_) = e {
                    shared.rejected.fetch_add(1, Ordering::Relaxed);
                }
                tracing::warn!(script_id = %id, error = %e, "not using the shared artifact; compiling");
                None
            }
        }
    }

    /// Takes a slot for one script, and one of `tenant` if given, or says at
    /// once which is full. Never waits.
    pub fn try_admit(&self, tenant: Option<&Gate>) -> Result<Permit, Busy> {
        gate::admit(&self.inner.gate, tenant)
    }

    /// Validates and compiles a script (or finds it in the cache) under
    /// `permit`, since compiling is memory-heavy.
    ///
    /// The compilation holds the permit's slot until it ends, even when the
    /// returned future is dropped first (a client that disconnects): the
    /// slot is never free while its compilation still runs. One permit
    /// compiles one script at a time.
    pub async fn compile(
        &self,
        permit: &Permit,
        bytes: Bytes,
    ) -> Result<Arc<Compiled>, InvalidScript> {
        self.compile_as(permit, None, bytes).await
    }

    /// [`Runtime::compile_as`] of a component built into vfsbox, which may
    /// also import `wasi:sockets` (linked, every use denied).
    pub(crate) async fn compile_built_in(
        &self,
        permit: &Permit,
        id: ScriptId,
        bytes: Bytes,
    ) -> Result<Arc<Compiled>, InvalidScript> {
        self.compile_with(permit, Some(id), bytes, compile::Imports::BuiltIn)
            .await
    }

    /// Compiles the built-in Python ahead of its first run (from the disk
    /// cache when it is there), outside any slot: a served host does it once
    /// as it starts, and reports ready when it is done. A run that comes
    /// first compiles it in its own slot, as any script.
    pub async fn prepare_python(&self) -> Result<(), InvalidScript> {
        let id = crate::python::id().clone();
        if self.inner.cache.find(&id).is_some() {
            return Ok(());
        }
        let _compiling = self.inner.python_compile.lock().await;
        let this = self.clone();
        let task = self.inner.executor.handle().spawn_blocking(move || {
            if this.inner.cache.get(&id).is_some() {
                return Ok(());
            }
            let compiled = compile::compile(
                &this.inner.engine,
                &this.inner.linker,
                id,
                &crate::python::component(),
                compile::Imports::BuiltIn,
            )?;
            this.inner.cache.insert(Arc::new(compiled));
            Ok(())
        });
        task.await
            .map_err(|_| InvalidScript::Invalid("the compiler failed".to_owned()))?
    }

    /// [`Runtime::compile`] of bytes whose id the caller already knows (a
    /// stored script, the built-in shell): a compiled script in the cache
    /// is found without hashing the bytes again or leaving this thread.
    pub(crate) async fn compile_as(
        &self,
        permit: &Permit,
        id: Option<ScriptId>,
        bytes: Bytes,
    ) -> Result<Arc<Compiled>, InvalidScript> {
        self.compile_with(permit, id, bytes, compile::Imports::Script)
            .await
    }

    async fn compile_with(
        &self,
        permit: &Permit,
        id: Option<ScriptId>,
        bytes: Bytes,
        imports: compile::Imports,
    ) -> Result<Arc<Compiled>, InvalidScript> {
        if let Some(hit) = id.as_ref().and_then(|id| self.inner.cache.find(id)) {
            return Ok(hit);
        }
        // In a fleet, a stored script (its id known) may have been compiled
        // by another host already.
        let artifact = match &id {
            Some(id) => self.shared_artifact(id).await,
            None => None,
        };
        let slot = permit.share();
        let compiling = slot.compiling.clone().lock_owned().await;
        let this = self.clone();
        let task = self.inner.executor.handle().spawn_blocking(move || {
            let _held = (slot, compiling);
            // Hashing up to the upload limit is work too: done here, off
            // the threads that answer requests.
            let id = id.unwrap_or_else(|| ScriptId::of(&bytes));
            if let Some(hit) = this.inner.cache.get(&id) {
                return Ok((hit, None));
            }
            let inner = &this.inner;
            #[allow(
                unsafe_code,
                reason = "loads an artifact only once its HMAC tag verified"
            )]
            let loaded = artifact.and_then(|code| {
                // SAFETY: `code` verified against its HMAC tag, over this
                // engine's compatibility hash and this id, with the key only
                // the fleet's hosts hold (`SharedStore::get_artifact`).
                match unsafe { compile::load(&inner.engine, &inner.linker, id.clone(), &code, imports) } {
                    Ok(compiled) => Some(compiled),
                    Err(e) => {
                        if let Some(shared) = &inner.shared {
                            shared.rejected.fetch_add(1, Ordering::Relaxed);
                        }
                        tracing::warn!(script_id = %id, error = %e, "a shared artifact did not load; compiling");
                        None
                    }
                }
            });
            let (compiled, share) = match loaded {
                Some(compiled) => {
                    if let Some(shared) = &inner.shared {
                        shared.hits.fetch_add(1, Ordering::Relaxed);
                    }
                    (compiled, None)
                }
                None => {
                    let compiled =
                        compile::compile(&inner.engine, &inner.linker, id, &bytes, imports)?;
                    // Compiled here: shared for the fleet's other hosts.
                    let share = inner
                        .shared
                        .as_ref()
                        .and_then(|_| compiled.serialize().ok());
                    (compiled, share)
                }
            };
            let compiled = Arc::new(compiled);
            this.inner.cache.insert(compiled.clone());
            Ok((compiled, share))
        });
        let (compiled, share) = task
            .await
            .map_err(|_| InvalidScript::Invalid("the compiler failed".to_owned()))??;
        if let (Some(code), Some(shared)) = (share, &self.inner.shared) {
            // Awaited, within the slot: once a script is stored, any host
            // finds it compiled. A store that fails costs the others a
            // compile, nothing more.
            if let Err(e) = shared
                .store
                .put_artifact(&shared.engine, compiled.id(), &code)
                .await
            {
                tracing::warn!(script_id = %compiled.id(), error = %e, "could not share the compiled script");
            }
        }
        Ok(compiled)
    }

    /// Runs a script to its end, holding `permit` until its store is gone.
    ///
    /// The run starts at once on the runtime's own threads; the returned
    /// future awaits its report. Dropping the future cancels the run and
    /// frees its slot.
    pub fn run(
        &self,
        permit: Permit,
        script: Script,
        spec: RunSpec,
    ) -> impl Future<Output = Result<Report, RunError>> + Send + 'static {
        let this = self.clone();
        // The run's logs belong to the request that asked for it.
        let span = tracing::Span::current();
        let task = self
            .inner
            .executor
            .handle()
            .spawn(async move { this.run_here(permit, script, spec).await }.instrument(span));
        AbortOnDrop(task).join()
    }

    async fn run_here(
        &self,
        permit: Permit,
        script: Script,
        spec: RunSpec,
    ) -> Result<Report, RunError> {
        // Declared first, so dropped last: the slot is free only once the
        // store is gone.
        let _permit = permit;
        if spec.args.iter().map(|a| a.len() + 1).sum::<usize>() > MAX_ARGS_BYTES {
            return Err(RunError::ArgsTooLong);
        }
        let cwd = crate::vfs::resolve(&VPath::root(), &spec.cwd)
            .map_err(|e| RunError::BadCwd(FsError::InvalidPath(e.to_string())))?;
        // Bounded like every backend call of a run: a stalled backend does
        // not hold the slot past the run's deadline.
        let stat = tokio::time::timeout(spec.limits.deadline, spec.vfs.stat(&cwd))
            .await
            .unwrap_or_else(|_elapsed| {
                Err(FsError::Unavailable(format!(
                    "{cwd}: the backend did not answer within the deadline"
                )))
            });
        match stat {
            Ok(meta) if meta.kind == Kind::Directory => {}
            Ok(_) => return Err(RunError::BadCwd(FsError::NotADirectory(cwd.to_string()))),
            Err(e) => return Err(RunError::BadCwd(e)),
        }
        let compiled = match script {
            Script::Compiled(c) => c,
            Script::Bytes(bytes) => self.compile(&_permit, bytes).await?,
            Script::Python => {
                let id = crate::python::id();
                match self.inner.cache.find(id) {
                    Some(hit) => hit,
                    // Only a run that finds it uncompiled waits its turn.
                    None => {
                        let _compiling = self.inner.python_compile.lock().await;
                        self.compile_built_in(&_permit, id.clone(), crate::python::component())
                            .await?
                    }
                }
            }
        };
        // The deadline counts the script's own time, from here: compiling
        // (bounded by the upload limit, and skipped for a cached script) is
        // the service's.
        let started = Instant::now();
        let caller = spec.caller.clone();
        let script_id = compiled.id.to_string();
        self.inner.audit.record(
            &caller,
            &Event::RunStart {
                script_id: &script_id,
                args: spec.args.len(),
                cwd: cwd.as_str(),
            },
        )?;
        let mut unfinished = Unfinished {
            audit: self.inner.audit.clone(),
            caller: caller.clone(),
            script_id: script_id.clone(),
            finished: false,
        };
        tracing::debug!(script_id = %script_id, cwd = %cwd, "run started");
        let report = self.execute(&compiled, spec, cwd, started).await?;
        unfinished.finished = true;
        tracing::debug!(
            script_id = %script_id,
            outcome = ?report.outcome,
            elapsed_ms = report.usage.elapsed_ms,
            "run ended"
        );
        self.inner.audit.record(
            &caller,
            &Event::RunEnd {
                script_id: &script_id,
                outcome: &report.outcome,
                usage: &report.usage,
            },
        )?;
        Ok(report)
    }

    /// The store of one run, set up with its limits, and where its output
    /// goes.
    fn store(
        &self,
        compiled: &Compiled,
        spec: RunSpec,
        cwd: &VPath,
        started: Instant,
    ) -> Result<(Store<RunState>, CappedOutput, CappedOutput), RunError> {
        let limits = spec.limits;
        let stdout = CappedOutput::new(limits.stdout);
        let stderr = CappedOutput::new(limits.stderr);
        let mut wasi = WasiCtx::builder();
        wasi.arg(&spec.program)
            .args(&spec.args)
            .env("PWD", cwd.as_str())
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        match spec.stdin {
            Stdin::Empty => {}
            Stdin::Bytes(b) => {
                wasi.stdin(MemoryInputPipe::new(b));
            }
            Stdin::Stream(s) => {
                wasi.stdin(s);
            }
        }
        let fuel = limits.fuel;
        let mut budget = Budget::new(limits, started);
        budget.set_deadline(started + budget.limits.deadline);
        let state = RunState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            host: ScriptHost {
                vfs: spec.vfs,
                cwd: cwd.clone(),
                budget,
                audit: self.inner.audit.clone(),
                caller: spec.caller,
                script_id: compiled.id.to_string(),
                files: imports::FilesState::default(),
            },
        };
        let mut store = Store::new(&self.inner.engine, state);
        store.limiter(|s| &mut s.host.budget.memory);
        store
            .set_fuel(fuel)
            .and_then(|()| store.fuel_async_yield_interval(Some(engine::FUEL_YIELD_INTERVAL)))
            .map_err(|e| RunError::Internal(format!("{e:#}")))?;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|ctx| {
            let budget = &ctx.data().host.budget;
            if Instant::now() >= budget.deadline() {
                return Err(wasmtime::Error::new(budget.deadline_exceeded()));
            }
            Ok(UpdateDeadline::Yield(1))
        });
        store.call_hook(|mut ctx, hook| {
            if let CallHook::CallingHost = hook {
                let fuel = ctx.get_fuel()?;
                ctx.data_mut().host.budget.fuel_left = fuel;
            }
            Ok(())
        });
        Ok((store, stdout, stderr))
    }

    /// Sets up a run's store and instantiates `compiled` in it, without
    /// running it: what starting a script costs, for the benchmarks.
    #[doc(hidden)]
    pub async fn instantiate_only(
        &self,
        _permit: &Permit,
        compiled: &Compiled,
        spec: RunSpec,
    ) -> Result<(), RunError> {
        let (mut store, _, _) = self.store(compiled, spec, &VPath::root(), Instant::now())?;
        compiled
            .pre
            .instantiate_async(&mut store)
            .await
            .map(drop)
            .map_err(|e| RunError::Internal(format!("{e:#}")))
    }

    async fn execute(
        &self,
        compiled: &Compiled,
        spec: RunSpec,
        cwd: VPath,
        started: Instant,
    ) -> Result<Report, RunError> {
        let limits = spec.limits.clone();
        let (mut store, stdout, stderr) = self.store(compiled, spec, &cwd, started)?;
        let deadline = store.data().host.budget.deadline();

        let run = async {
            let command = compiled.pre.instantiate_async(&mut store).await?;
            command.wasi_cli_run().call_run(&mut store).await
        };
        // The only guard while the script waits inside a host call (a WASI
        // sleep, a read of stdin), where epochs cannot reach it. A running
        // script is stopped by the epoch check first, a few ticks earlier,
        // which leaves the store's counters (fuel) exact.
        let backstop = deadline + 2 * engine::EPOCH_TICK;
        let result = tokio::time::timeout_at(backstop.into(), run).await;

        let host = &store.data().host;
        let outcome = match result {
            Err(_elapsed) => Outcome::from(host.budget.deadline_exceeded()),
            Ok(Ok(Ok(()))) => Outcome::Exited { exit_code: 0 },
            Ok(Ok(Err(()))) => Outcome::Exited { exit_code: 1 },
            Ok(Err(e)) => classify(e, &host.budget)?,
        };
        let outcome = memory_failure(outcome, &host.budget);
        let fuel_left = store.get_fuel().unwrap_or(0);
        let host = &store.data().host;
        let final_cwd = host.cwd.to_string();
        let usage = Usage {
            elapsed_ms: millis(started.elapsed()),
            fuel_consumed: limits.fuel.saturating_sub(fuel_left),
            document_reads: host.budget.documents_read(),
            bytes_read: host.budget.bytes_read(),
            files_scanned: host.budget.files_scanned,
            bytes_scanned: host.budget.bytes_scanned,
            peak_memory_bytes: host.budget.memory.peak,
        };
        drop(store);
        let (stdout, stdout_truncated) = stdout.contents();
        let (stderr, stderr_truncated) = stderr.contents();
        Ok(Report {
            outcome,
            stdout,
            stderr,
            stdout_truncated,
            stderr_truncated,
            cwd: final_cwd,
            usage,
        })
    }
}

impl From<LimitExceeded> for Outcome {
    fn from(e: LimitExceeded) -> Self {
        Outcome::BudgetExceeded {
            limit: e.limit,
            used: e.used,
            allowed: e.allowed,
        }
    }
}

/// Turns the error that ended a run into its outcome, by type: an exit, a
/// limit, or a trap. A failed audit write fails the run.
fn classify(e: wasmtime::Error, budget: &Budget) -> Result<Outcome, RunError> {
    if let Some(exit) = e.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return Ok(Outcome::Exited { exit_code: exit.0 });
    }
    if let Some(limit) = e.downcast_ref::<LimitExceeded>() {
        return Ok((*limit).into());
    }
    if e.downcast_ref::<AuditError>().is_some() {
        return Err(match e.downcast::<AuditError>() {
            Ok(audit) => RunError::Audit(audit),
            Err(e) => RunError::Internal(format!("{e:#}")),
        });
    }
    if let Some(Trap::OutOfFuel) = e.downcast_ref::<Trap>() {
        return Ok(Outcome::BudgetExceeded {
            limit: Limit::Fuel,
            used: budget.limits.fuel,
            allowed: budget.limits.fuel,
        });
    }
    // A denied memory growth makes the guest fail (an allocation error
    // aborts a Rust guest, for example): the cause is the memory limit.
    if let Some(needed) = budget.memory.denied {
        return Ok(Outcome::BudgetExceeded {
            limit: Limit::Memory,
            used: needed,
            allowed: budget.memory.cap(),
        });
    }
    Ok(Outcome::Trapped {
        message: trap_message(&e),
    })
}

/// A script that exits with a failure right after a memory growth was
/// refused (nothing grew since) ended because of the memory limit: an
/// interpreter that turns the refusal into its own error (Python's
/// `MemoryError`) and exits 1 is reported as the limit, as a trap is. A
/// script that handles the refusal and exits 0 is not.
fn memory_failure(outcome: Outcome, budget: &Budget) -> Outcome {
    match (outcome, budget.memory.denied) {
        (Outcome::Exited { exit_code }, Some(needed)) if exit_code != 0 => {
            Outcome::BudgetExceeded {
                limit: Limit::Memory,
                used: needed,
                allowed: budget.memory.cap(),
            }
        }
        (outcome, _) => outcome,
    }
}

/// The trap's cause, then the guest's backtrace when there is one.
fn trap_message(e: &wasmtime::Error) -> String {
    let mut message = e.root_cause().to_string();
    if let Some(bt) = e.downcast_ref::<wasmtime::WasmBacktrace>() {
        message.push('\n');
        message.push_str(&bt.to_string());
    }
    message.truncate(message.floor_char_boundary(4096));
    message
}

/// Records a started run that ends without a report: dropped when its
/// caller goes away, or on the way out of a failure. A finished run forgets
/// it and records its end instead.
struct Unfinished {
    audit: AuditLog,
    caller: Caller,
    script_id: String,
    finished: bool,
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let event = Event::RunAbandoned {
            script_id: &self.script_id,
        };
        if let Err(e) = self.audit.record(&self.caller, &event) {
            // Nobody is left to fail: the run is already gone.
            tracing::error!(error = %e, script_id = %self.script_id, "an abandoned run was not recorded");
        }
    }
}

/// A task handle that cancels the task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<Result<T, RunError>> {
    async fn join(mut self) -> Result<T, RunError> {
        match (&mut self.0).await {
            Ok(result) => result,
            Err(e) if e.is_panic() => Err(RunError::Internal(
                "the host panicked while running the script".to_owned(),
            )),
            Err(_) => Err(RunError::Internal("the run was cancelled".to_owned())),
        }
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
