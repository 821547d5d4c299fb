//! Measures inside one process: store start, what fuel and epochs cost,
//! and how close to its deadline a script is stopped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vfsbox_host::runtime::{Script, Stdin};
use vfsbox_host::vfs::{Fault, MemoryBackend, Mount};
use vfsbox_host::{AuditLog, Limit, Limits, Report, RunSpec, Runtime, VPath, Vfs};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, UpdateDeadline,
};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::report::{Table, median, median_p99, met, ms, us};

/// A command component whose `run` returns at once.
fn empty_command() -> Vec<u8> {
    wat::parse_str(
        r#"(component
            (core module $m (func (export "run") (result i32) i32.const 0))
            (core instance $i (instantiate $m))
            (func $run (result (result)) (canon lift (core func $i "run")))
            (instance $r (export "run" (func $run)))
            (export "wasi:cli/run@0.2.0" (instance $r)))"#,
    )
    .expect("valid WAT")
}

fn vfs(tree: MemoryBackend) -> Vfs {
    Vfs::new([Mount {
        path: VPath::parse_absolute("/files").expect("path"),
        backend: Arc::new(tree),
    }])
    .expect("mount")
}

fn spec(limits: &Limits, vfs: Vfs, args: &[&str]) -> RunSpec {
    RunSpec {
        program: "bench".to_owned(),
        args: args.iter().map(|s| s.to_string()).collect(),
        stdin: Stdin::Empty,
        cwd: "/".to_owned(),
        vfs,
        limits: limits.clone(),
        caller: Default::default(),
    }
}

async fn timed_run(rt: &Runtime, script: &Script, spec: RunSpec) -> Duration {
    timed_report(rt, script, spec).await.0
}

async fn timed_report(rt: &Runtime, script: &Script, spec: RunSpec) -> (Duration, Report) {
    let permit = rt.try_admit(None).expect("a slot");
    let start = Instant::now();
    let report = rt.run(permit, script.clone(), spec).await.expect("runs");
    (start.elapsed(), report)
}

/// Instantiating from a cached `InstancePre` with the pooling allocator.
pub(crate) async fn store_start(t: &mut Table) {
    // The store alone: wasmtime with vfsbox's engine settings.
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(4)
        .total_memories(16)
        .total_tables(32)
        .total_stacks(4);
    let mut config = Config::new();
    config
        .consume_fuel(true)
        .epoch_interruption(true)
        .memory_init_cow(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    let engine = Engine::new(&config).expect("engine");
    let component = Component::new(&engine, empty_command()).expect("component");
    let pre = Linker::<()>::new(&engine)
        .instantiate_pre(&component)
        .expect("pre");
    let mut samples = Vec::new();
    for i in 0..5_000 {
        let start = Instant::now();
        let mut store = Store::new(&engine, ());
        store.set_fuel(1_000_000).expect("fuel");
        store.set_epoch_deadline(1);
        pre.instantiate_async(&mut store).await.expect("instance");
        drop(store);
        if i >= 500 {
            samples.push(start.elapsed());
        }
    }
    let (bare, bare_p99) = median_p99(samples);

    // vfsbox's own store: its engine, WASI context, limiter, budget,
    // epoch callback and call hook, from the compiled script's
    // `InstancePre`.
    let limits = Limits::default();
    let rt = Runtime::new(limits.clone(), AuditLog::disabled()).expect("runtime");
    let permit = rt.try_admit(None).expect("slot");
    let compiled = rt
        .compile(&permit, empty_command().into())
        .await
        .expect("compiles");
    let v = vfs(MemoryBackend::new());
    let mut samples = Vec::new();
    for i in 0..5_000 {
        let run = spec(&limits, v.clone(), &[]);
        let start = Instant::now();
        rt.instantiate_only(&permit, &compiled, run)
            .await
            .expect("instantiates");
        if i >= 500 {
            samples.push(start.elapsed());
        }
    }
    drop(permit);
    let (m, p99) = median_p99(samples);
    t.row(
        "store start: vfsbox's store (WASI, limiter, budget, epoch deadline) + instantiate from the cached `InstancePre` (pooling)",
        format!("{} median, {} p99", us(m), us(p99)),
        format!(
            "a bare wasmtime store (`Store<()>`, pooling, fuel, epochs): {} median, {} p99",
            us(bare),
            us(bare_p99)
        ),
        format!("{:.2}×", m.as_secs_f64() / bare.as_secs_f64()),
        format!("≤ 20 µs median: {}", met(m <= Duration::from_micros(20))),
    );

    // The whole cached path of a run: admission, task, store, WASI, run,
    // report.
    let permit = rt.try_admit(None).expect("slot");
    let script = Script::Compiled(
        rt.compile(&permit, empty_command().into())
            .await
            .expect("compiles"),
    );
    drop(permit);
    let v = vfs(MemoryBackend::new());
    let mut samples = Vec::new();
    for i in 0..2_200 {
        let d = timed_run(&rt, &script, spec(&limits, v.clone(), &[])).await;
        if i >= 200 {
            samples.push(d);
        }
    }
    let (m, p99) = median_p99(samples);
    t.row(
        "a whole run of an empty cached script (admit, spawn, store, WASI, run, report)",
        format!("{} median, {} p99", us(m), us(p99)),
        "—".to_owned(),
        "—".to_owned(),
        "—".to_owned(),
    );

    // First run of a script not yet compiled (hello, 88 KB).
    let hello = std::fs::read(vfsbox_test_artifacts::HELLO).expect("hello.wasm");
    let mut samples = Vec::new();
    for _ in 0..5 {
        let rt = Runtime::new(limits.clone(), AuditLog::disabled()).expect("runtime");
        let script = Script::Bytes(hello.clone().into());
        samples.push(timed_run(&rt, &script, spec(&limits, v.clone(), &[])).await);
    }
    t.row(
        "first run of a script not yet compiled (`hello`, 88 KB: compile + run)",
        format!("{} median", ms(median(samples))),
        "—".to_owned(),
        "—".to_owned(),
        "—".to_owned(),
    );
}

struct Wasi {
    ctx: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Wasi {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}

/// Runs `cpu-hash` once on an engine with or without fuel and epochs.
async fn cpu_hash(fuel: bool, epoch: bool, len: usize, rounds: u32) -> Duration {
    let mut config = Config::new();
    config.consume_fuel(fuel).epoch_interruption(epoch);
    let engine = Engine::new(&config).expect("engine");
    let component =
        Component::from_file(&engine, vfsbox_test_artifacts::CPU_HASH).expect("cpu-hash");
    let mut linker = Linker::<Wasi>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("wasi");
    let ticker = epoch.then(|| {
        let weak = engine.weak();
        std::thread::spawn(move || {
            while let Some(e) = weak.upgrade() {
                e.increment_epoch();
                drop(e);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    });
    let mut samples = Vec::new();
    for _ in 0..5 {
        let ctx = WasiCtx::builder()
            .args(&["cpu-hash", &len.to_string(), &rounds.to_string()])
            .build();
        let mut store = Store::new(
            &engine,
            Wasi {
                ctx,
                table: ResourceTable::new(),
            },
        );
        if fuel {
            store.set_fuel(u64::MAX / 2).expect("fuel");
            store
                .fuel_async_yield_interval(Some(10_000_000))
                .expect("interval");
        }
        if epoch {
            store.set_epoch_deadline(1);
            store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Yield(1)));
        }
        let start = Instant::now();
        let command = wasmtime_wasi::p2::bindings::Command::instantiate_async(
            &mut store, &component, &linker,
        )
        .await
        .expect("instance");
        command
            .wasi_cli_run()
            .call_run(&mut store)
            .await
            .expect("call")
            .expect("exit 0");
        samples.push(start.elapsed());
    }
    drop(engine);
    drop(ticker);
    median(samples)
}

/// A CPU-bound guest with fuel and epochs, epochs only, neither, and the
/// same code natively.
pub(crate) async fn limit_overhead(t: &mut Table) {
    let (len, rounds) = (4 << 20, 20);
    let neither = cpu_hash(false, false, len, rounds).await;
    let epoch = cpu_hash(false, true, len, rounds).await;
    let both = cpu_hash(true, true, len, rounds).await;
    let mut native = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        std::hint::black_box(crate::hash::work(std::hint::black_box(len), rounds));
        native.push(start.elapsed());
    }
    let native = median(native);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    let what = "CPU-bound guest (FNV over 4 MiB × 20): no metering / native";
    t.row(
        what,
        ms(neither),
        format!("native {}", ms(native)),
        format!("{:.2}×", ratio(neither, native)),
        "—".to_owned(),
    );
    let r = ratio(epoch, neither);
    t.row(
        "… epoch interruption only / no metering",
        ms(epoch),
        format!("no metering {}", ms(neither)),
        format!("{r:.2}×"),
        format!("≤ 1.15×: {}", met(r <= 1.15)),
    );
    t.row(
        "… fuel and epochs (vfsbox's setting) / no metering",
        ms(both),
        format!("no metering {}", ms(neither)),
        format!("{:.2}×", ratio(both, neither)),
        "reported".to_owned(),
    );
}

/// How far past its deadline a spinning script and a stalled read end.
pub(crate) async fn deadline_precision(t: &mut Table) {
    let deadline = Duration::from_millis(200);
    let limits = Limits {
        deadline,
        fuel: u64::MAX,
        ..Limits::default()
    };
    let rt = Runtime::new(limits.clone(), AuditLog::disabled()).expect("runtime");
    let permit = rt.try_admit(None).expect("slot");
    let misbehave = std::fs::read(vfsbox_test_artifacts::MISBEHAVE).expect("misbehave.wasm");
    let script = Script::Compiled(
        rt.compile(&permit, misbehave.into())
            .await
            .expect("compiles"),
    );
    drop(permit);
    let stalled = vfs(MemoryBackend::new().faulty("slow.txt", "x", Fault::Stall));
    for (what, args) in [
        (
            "deadline overshoot: CPU-bound script (200 ms deadline, 20 runs)",
            &["spin"][..],
        ),
        (
            "deadline overshoot: read stalled in the backend (200 ms deadline, 20 runs)",
            &["read", "/files/slow.txt"][..],
        ),
    ] {
        let mut over = Vec::new();
        for _ in 0..20 {
            let (took, report) =
                timed_report(&rt, &script, spec(&limits, stalled.clone(), args)).await;
            // Only a run the deadline ended says anything about the deadline.
            assert_eq!(
                report.limit(),
                Some(Limit::Deadline),
                "{what}: {:?}",
                report.outcome
            );
            over.push(took.saturating_sub(deadline));
        }
        over.sort();
        let (m, max) = (over[over.len() / 2], over[over.len() - 1]);
        t.row(
            what,
            format!("{} median, {} max", ms(m), ms(max)),
            "—".to_owned(),
            "—".to_owned(),
            format!("≤ 50 ms median: {}", met(m <= Duration::from_millis(50))),
        );
    }
}
