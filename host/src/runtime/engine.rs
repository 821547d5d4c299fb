//! The one wasmtime engine of a process, its epoch ticker, and the threads
//! scripts execute on.

use std::path::Path;
use std::time::Duration;

use wasmtime::{
    Cache, CacheConfig, Config, Enabled, Engine, InstanceAllocationStrategy,
    PoolingAllocationConfig,
};

use crate::limits::Limits;

/// How often the engine's epoch advances. A running script yields to the
/// executor, and checks its deadline, once per tick.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

/// A running script also yields every this many units of fuel. Besides
/// sharing the executor, this keeps the store's fuel counter current: the
/// epoch check alone does not save the fuel a loop has burnt, so a script
/// stopped at its deadline would report too little.
pub(crate) const FUEL_YIELD_INTERVAL: u64 = 10_000_000;

/// Memories one component may define (a Rust guest has one or two).
const MEMORIES_PER_COMPONENT: u32 = 4;
/// Tables one component may define.
const TABLES_PER_COMPONENT: u32 = 8;
/// Core instances one component may hold (a Rust guest has a handful).
const CORE_INSTANCES_PER_COMPONENT: u32 = 32;
/// Elements a table may hold.
const TABLE_ELEMENTS: usize = 100_000;
/// Bytes of a memory slot kept resident, zeroed in place, when a script
/// ends, instead of returned to the kernel: a Rust guest's stack and data
/// sit in its memory's first 2 MiB. Only slots scripts have used hold
/// pages, so this keeps a few MiB resident between runs (measured in
/// BENCHMARKS.md's incident row).
const MEMORY_KEEP_RESIDENT: usize = 2 << 20;
/// The native stack a script's WebAssembly may use (wasmtime's default is
/// 512 KiB). The built-in shell recurses as the script nests (a function
/// calling itself, loops inside groups inside substitutions) and bounds
/// that nesting itself, with a message, well inside this; 512 KiB left it
/// a margin of a few calls. A stack is reserved per live script, and only
/// the pages scripts have touched are resident (they stay so for the next
/// script in that slot: at most the live-script cap times 5.5 MiB, reached
/// only by scripts that recurse that deep).
const WASM_STACK: usize = 4 << 20;
/// What the host's own calls from a script may use on top of
/// [`WASM_STACK`] (wasmtime's default leaves them 1.5 MiB).
const HOST_STACK: usize = 3 << 19;

/// The same for a table slot (a table of `TABLE_ELEMENTS` is 800 KB).
const TABLE_KEEP_RESIDENT: usize = 1 << 20;

/// Builds the engine: async, fuel and epoch interruption on, and the pooling
/// allocator sized for the live-script cap, with copy-on-write memory
/// initialisation; compiled code is kept in `compile_cache` when given, so
/// a script (the built-in shell, say) is compiled once per machine, not once
/// per process.
pub(crate) fn build(limits: &Limits, compile_cache: Option<&Path>) -> wasmtime::Result<Engine> {
    let live = limits.live_scripts.max(1);
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(live)
        .total_core_instances(live * CORE_INSTANCES_PER_COMPONENT)
        .max_core_instances_per_component(CORE_INSTANCES_PER_COMPONENT)
        .total_memories(live * MEMORIES_PER_COMPONENT)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .max_memories_per_module(MEMORIES_PER_COMPONENT)
        .total_tables(live * TABLES_PER_COMPONENT)
        .max_tables_per_component(TABLES_PER_COMPONENT)
        .max_tables_per_module(TABLES_PER_COMPONENT)
        .table_elements(TABLE_ELEMENTS)
        .total_stacks(live)
        // A slot can never hold more than the memory limit; the store's
        // limiter enforces the (possibly lower) per-run limit below that.
        .max_memory_size(usize::try_from(limits.memory).unwrap_or(usize::MAX))
        // A freed slot's first bytes are zeroed in place rather than
        // handed back to the kernel: the next script then takes no page
        // faults there, and no `madvise` makes the kernel interrupt every
        // other core to flush its TLB (half the cost of a small run).
        .linear_memory_keep_resident(MEMORY_KEEP_RESIDENT)
        .table_keep_resident(TABLE_KEEP_RESIDENT)
        // Where the kernel can say which of those pages a script wrote
        // (`PAGEMAP_SCAN`, Linux 6.7+), only those are reset, not all the
        // bytes kept resident.
        .pagemap_scan(Enabled::Auto);

    let mut config = Config::new();
    config
        .consume_fuel(true)
        .epoch_interruption(true)
        .memory_init_cow(true)
        .wasm_component_model(true)
        .max_wasm_stack(WASM_STACK)
        .async_stack_size(WASM_STACK + HOST_STACK)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    if let Some(dir) = compile_cache {
        let mut cache = CacheConfig::new();
        cache.with_directory(dir);
        config.cache(Some(Cache::new(cache)?));
    }
    Engine::new(&config)
}

/// Advances the engine's epoch every [`EPOCH_TICK`] for as long as the
/// engine lives: one thread per engine, never one per run.
pub(crate) fn start_ticker(engine: &Engine) -> std::io::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("vfsbox-epoch".to_owned())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })?;
    Ok(())
}

/// How much nicer than the process the threads that run scripts are
/// (Linux's per-thread nice value). Under contention the kernel then gives
/// a thread that accepts requests and answers `429` three times the share
/// of a script's thread (weight 1024 against 335), so that four CPU-bound
/// scripts on fewer cores do not put a refusal behind their time slices;
/// with idle cores it changes nothing. (10 shortened the `429`'s tail a
/// little more, but cost `hello` over HTTP about 15% where the load
/// shares the cores: BENCHMARKS.md.)
const SCRIPT_THREAD_NICENESS: i32 = 5;

/// The tokio runtime scripts execute on: its own threads, one per live
/// slot, run at a lower priority than the rest of the process (see
/// [`SCRIPT_THREAD_NICENESS`]), so that CPU-bound scripts never starve the
/// threads that accept requests and answer `429`.
#[derive(Debug)]
pub(crate) struct Executor {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Executor {
    pub(crate) fn new(threads: u32) -> std::io::Result<Executor> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1) as usize)
            .thread_name("vfsbox-script")
            .on_thread_start(lower_priority)
            .enable_all()
            .build()?;
        Ok(Executor {
            runtime: Some(runtime),
        })
    }

    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        match &self.runtime {
            Some(rt) => rt.handle(),
            None => unreachable!("the executor is only taken in drop"),
        }
    }
}

/// Makes the calling thread [`SCRIPT_THREAD_NICENESS`] nicer than it is.
/// Best effort: a thread that cannot be reniced runs at the process's
/// priority, as everywhere but Linux.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // On Linux the nice value belongs to the thread, and `None` (0)
        // names the calling thread only.
        use rustix::process::{getpriority_process, setpriority_process};
        if let Ok(nice) = getpriority_process(None) {
            let _ = setpriority_process(None, nice + SCRIPT_THREAD_NICENESS);
        }
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which is not allowed inside another
        // runtime; let its threads finish in the background instead.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn scripts_run_on_threads_nicer_than_the_process() {
        let ours = rustix::process::getpriority_process(None).expect("our nice value");
        let executor = Executor::new(1).expect("the executor starts");
        let theirs = executor
            .handle()
            .block_on(async {
                tokio::spawn(async { rustix::process::getpriority_process(None) }).await
            })
            .expect("the task ran")
            .expect("its nice value");
        assert_eq!(theirs, (ours + SCRIPT_THREAD_NICENESS).min(19));
        // The calling thread itself is left as it was.
        assert_eq!(rustix::process::getpriority_process(None).ok(), Some(ours));
    }
}
