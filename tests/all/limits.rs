//! Each limit, obeyed and violated, through the real runtime.

use vfsbox_host::runtime::{Outcome, Script, Stdin};
use vfsbox_host::{Limit, Limits};

use crate::common::*;

fn limited(f: impl FnOnce(&mut Limits)) -> Limits {
    let mut l = limits();
    f(&mut l);
    l
}

#[tokio::test]
async fn a_script_within_its_fuel_exits() {
    let rt = runtime(limited(|l| l.fuel = 50_000_000));
    let report = run(&rt, &["burn", "1000"]).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert!(report.usage.fuel_consumed > 1000, "{:?}", report.usage);
    assert!(report.usage.fuel_consumed < 50_000_000);
}

#[tokio::test]
async fn a_script_out_of_fuel_ends_with_budget_exceeded_fuel() {
    let rt = runtime(limited(|l| l.fuel = 50_000_000));
    let report = run(&rt, &["burn", "1000000000"]).await;
    assert_eq!(
        report.outcome,
        Outcome::BudgetExceeded {
            limit: Limit::Fuel,
            used: 50_000_000,
            allowed: 50_000_000
        }
    );
    assert_eq!(report.usage.fuel_consumed, 50_000_000);
}

/// With the default fuel, a CPU-bound script runs until its deadline: the
/// fuel lasts far longer (the old default, 10^10, ended this loop after one
/// to two seconds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spinning_script_with_the_default_fuel_meets_its_deadline() {
    let deadline = std::time::Duration::from_secs(5);
    let limits = Limits {
        deadline,
        ..Limits::default()
    };
    let rt = runtime(limits.clone());
    let report = run_on(&rt, vfs_of(small_tree()), limits, &["spin"]).await;
    assert_eq!(
        report.limit(),
        Some(Limit::Deadline),
        "{:?}",
        report.outcome
    );
    assert!(
        report.usage.fuel_consumed < Limits::default().fuel,
        "{:?}",
        report.usage
    );
}

#[tokio::test]
async fn a_script_within_its_deadline_exits() {
    let rt = runtime(limited(|l| l.deadline = std::time::Duration::from_secs(10)));
    let report = run(&rt, &["burn", "100000"]).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
}

#[tokio::test]
async fn stdin_bytes_are_read_to_their_end() {
    let rt = runtime(limits());
    let permit = rt.try_admit(None).expect("slot");
    let mut spec = spec(vfs_of(small_tree()), rt.limits().clone(), &["stdin"]);
    spec.stdin = Stdin::Bytes("line one\nline two\n".into());
    let report = rt
        .run(permit, Script::Bytes(misbehave()), spec)
        .await
        .expect("runs");
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.stdout_text(), "line one\nline two\n");
}

#[tokio::test]
async fn a_script_within_its_memory_exits() {
    let rt = runtime(limits());
    let report = run(&rt, &["alloc", "16000000"]).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert!(
        report.usage.peak_memory_bytes >= 16_000_000,
        "{:?}",
        report.usage
    );
    assert!(report.usage.peak_memory_bytes <= 64 << 20);
}

#[tokio::test]
async fn a_script_allocating_a_gibibyte_ends_with_budget_exceeded_memory() {
    let rt = runtime(limits());
    let report = run(&rt, &["alloc", "1073741824"]).await;
    match report.outcome {
        Outcome::BudgetExceeded {
            limit,
            used,
            allowed,
        } => {
            assert_eq!(limit, Limit::Memory);
            assert_eq!(allowed, 64 << 20);
            assert!(used > 1 << 30, "asked for {used}");
        }
        other => panic!("{other:?}"),
    }
    assert!(report.usage.peak_memory_bytes <= 64 << 20);
    // The process is unharmed: the next run works.
    let next = run(&rt, &["ok"]).await;
    assert_eq!(next.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(next.stdout_text(), "ok\n");
}

#[tokio::test]
async fn a_refused_allocation_the_script_handles_is_not_a_limit() {
    let rt = runtime(limits());
    let report = run(&rt, &["try-alloc", "1073741824"]).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.stdout_text(), "allocation of 1073741824 refused\n");
}

#[tokio::test]
async fn a_request_can_lower_the_memory_limit() {
    let rt = runtime(limits());
    let lowered = limited(|l| l.memory = 8 << 20);
    let report = run_on(&rt, vfs_of(small_tree()), lowered, &["alloc", "16000000"]).await;
    assert_eq!(report.limit(), Some(Limit::Memory), "{:?}", report.outcome);
}

#[tokio::test]
async fn output_within_the_cap_is_kept_whole() {
    let rt = runtime(limits());
    let report = run(&rt, &["flood", "102400"]).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.stdout.len(), 102_400);
    assert!(!report.stdout_truncated);
}

#[tokio::test]
async fn a_flood_of_output_is_cut_at_the_cap() {
    let rt = runtime(limits());
    let report = run(&rt, &["flood", "3145728"]).await;
    assert_eq!(
        report.outcome,
        Outcome::Exited { exit_code: 0 },
        "flooding is not an error"
    );
    assert_eq!(report.stdout.len(), 1 << 20);
    assert!(report.stdout_truncated);
    assert!(!report.stderr_truncated);
    let report = run(&rt, &["flood-stderr", "3145728"]).await;
    assert_eq!(report.stderr.len(), 1 << 20);
    assert!(report.stderr_truncated);
}

#[tokio::test]
async fn a_stack_overflow_is_a_trap_not_a_crash() {
    let rt = runtime(limits());
    let report = run(&rt, &["stack"]).await;
    assert!(
        matches!(report.outcome, Outcome::Trapped { .. }),
        "{:?}",
        report.outcome
    );
    assert_eq!(report.stdout_text(), "recursing\n");
    let next = run(&rt, &["ok"]).await;
    assert_eq!(next.outcome, Outcome::Exited { exit_code: 0 });
}

#[tokio::test]
async fn a_guest_panic_is_a_trap_with_its_message_on_stderr() {
    let rt = runtime(limits());
    let report = run(&rt, &["panic"]).await;
    assert!(
        matches!(report.outcome, Outcome::Trapped { .. }),
        "{:?}",
        report.outcome
    );
    assert_eq!(report.stdout_text(), "about to panic\n");
    assert!(
        report
            .stderr_text()
            .contains("the guest panicked on purpose")
    );
}

#[tokio::test]
async fn exit_codes_are_reported_like_a_process() {
    let rt = runtime(limits());
    assert_eq!(run(&rt, &["ok"]).await.exit_code(), Some(0));
    assert_eq!(run(&rt, &["exit", "7"]).await.exit_code(), Some(7));
    assert_eq!(run(&rt, &["exit", "255"]).await.exit_code(), Some(255));
    assert_eq!(run(&rt, &["no-such-subcommand"]).await.exit_code(), Some(2));
}

#[tokio::test]
async fn a_script_gets_its_arguments_and_no_inherited_environment() {
    let rt = runtime(limits());
    let report = run(&rt, &["args", "one", "two words", ""]).await;
    assert_eq!(report.stdout_text(), "one\ntwo words\n\n");
    let report = run(&rt, &["env"]).await;
    assert_eq!(report.stdout_text(), "PWD=/\n");
}

/// A command with two memories that grows each by `pages` (64 KiB each)
/// and traps if either growth is refused.
fn two_memories_growing(pages: u32) -> bytes::Bytes {
    command(&format!(
        r#"(memory $a 1) (memory $b 1)
           (func (export "run") (result i32)
             (if (i32.eq (memory.grow $a (i32.const {pages})) (i32.const -1)) (then unreachable))
             (if (i32.eq (memory.grow $b (i32.const {pages})) (i32.const -1)) (then unreachable))
             i32.const 0)"#
    ))
    .into()
}

async fn run_component(rt: &vfsbox_host::Runtime, bytes: bytes::Bytes) -> vfsbox_host::Report {
    let permit = rt.try_admit(None).expect("slot");
    rt.run(
        permit,
        Script::Bytes(bytes),
        spec(vfs_of(small_tree()), rt.limits().clone(), &[]),
    )
    .await
    .expect("runs")
}

#[tokio::test]
async fn two_memories_within_the_cap_together_exit() {
    let rt = runtime(limits());
    // 2 × (1 + 400) pages of 64 KiB: about 50 MiB of the 64 MiB cap.
    let report = run_component(&rt, two_memories_growing(400)).await;
    assert_eq!(report.outcome, Outcome::Exited { exit_code: 0 });
    assert_eq!(report.usage.peak_memory_bytes, 2 * 401 * 65536);
}

#[tokio::test]
async fn two_memories_over_the_cap_together_end_with_budget_exceeded_memory() {
    let rt = runtime(limits());
    // Each alone (40 MiB) is within the cap; both together are not.
    let report = run_component(&rt, two_memories_growing(640)).await;
    assert_eq!(
        report.outcome,
        Outcome::BudgetExceeded {
            limit: Limit::Memory,
            used: (641 + 641) * 65536,
            allowed: 64 << 20,
        }
    );
}

/// A component that exits 1 if any byte of its memory (grown to 4 MiB) is
/// not zero or any element of its table (grown to 1,000) is not null, and
/// otherwise fills both with values before exiting 0. The 4 MiB cover the
/// part of a memory slot reset in place, kept resident, and the part handed
/// back to the kernel.
fn check_then_dirty() -> bytes::Bytes {
    command(
        r#"(memory 1) (table 1 funcref)
           (elem declare func $run)
           (func $run (export "run") (result i32) (local $i i32)
             (if (i32.eq (memory.grow (i32.const 63)) (i32.const -1)) (then unreachable))
             (if (i32.eq (table.grow (ref.null func) (i32.const 999)) (i32.const -1)) (then unreachable))
             (block $dirty
               (loop $memory
                 (br_if $dirty (i64.ne (i64.load (local.get $i)) (i64.const 0)))
                 (local.set $i (i32.add (local.get $i) (i32.const 8)))
                 (br_if $memory (i32.lt_u (local.get $i) (i32.const 4194304))))
               (local.set $i (i32.const 0))
               (loop $table
                 (br_if $dirty (i32.eqz (ref.is_null (table.get (local.get $i)))))
                 (local.set $i (i32.add (local.get $i) (i32.const 1)))
                 (br_if $table (i32.lt_u (local.get $i) (i32.const 1000))))
               (memory.fill (i32.const 0) (i32.const 0xa5) (i32.const 4194304))
               (table.fill (i32.const 0) (ref.func $run) (i32.const 1000))
               (return (i32.const 0)))
             i32.const 1)"#,
    )
    .into()
}

#[tokio::test]
async fn a_script_never_sees_the_memory_or_table_the_last_one_in_its_slot_left() {
    // One slot, and the same compiled script each time: every run reuses
    // the memory and table slots the last one filled.
    let rt = runtime(Limits {
        live_scripts: 1,
        ..limits()
    });
    for run in 0..3 {
        let report = run_component(&rt, check_then_dirty()).await;
        assert_eq!(
            report.outcome,
            Outcome::Exited { exit_code: 0 },
            "run {run} found what an earlier run left"
        );
    }
}
