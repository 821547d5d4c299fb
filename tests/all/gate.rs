//! Admission: at most N live scripts, a refusal at once when full, and a
//! slot freed on every way a run can end.

use std::time::Duration;

use bytes::Bytes;
use vfsbox_host::runtime::{Outcome, RunError, Script};
use vfsbox_host::vfs::Fault;
use vfsbox_host::{Busy, Limit, Limits};

use crate::common::*;

#[tokio::test]
async fn every_ending_frees_the_slot() {
    let rt = runtime(Limits {
        deadline: Duration::from_millis(300),
        fuel: SPIN_FUEL,
        ..Limits::default()
    });
    let exited = |code| move |o: &Outcome| *o == Outcome::Exited { exit_code: code };
    let trapped = |o: &Outcome| matches!(o, Outcome::Trapped { .. });
    let limit = |want| move |o: &Outcome| matches!(o, Outcome::BudgetExceeded { limit, .. } if *limit == want);
    type Check = Box<dyn Fn(&Outcome) -> bool>;
    let endings: Vec<(&[&str], &str, Check)> = vec![
        (&["ok"], "exit 0", Box::new(exited(0))),
        (&["exit", "3"], "exit 3", Box::new(exited(3))),
        (&["panic"], "trap", Box::new(trapped)),
        (&["stack"], "stack overflow", Box::new(trapped)),
        (
            &["alloc", "1073741824"],
            "memory limit",
            Box::new(limit(Limit::Memory)),
        ),
        (&["spin"], "deadline", Box::new(limit(Limit::Deadline))),
        (
            &["sleep", "10000"],
            "deadline in a host call",
            Box::new(limit(Limit::Deadline)),
        ),
    ];
    for (args, what, expected) in &endings {
        let report = run(&rt, args).await;
        assert!(expected(&report.outcome), "{what}: {:?}", report.outcome);
        assert_eq!(rt.live_scripts(), 0, "after {what}");
    }
    let no_fuel = Limits {
        fuel: 1_000_000,
        ..rt.limits().clone()
    };
    let report = run_on(&rt, vfs_of(small_tree()), no_fuel, &["spin"]).await;
    assert_eq!(report.limit(), Some(Limit::Fuel));
    assert_eq!(rt.live_scripts(), 0, "after running out of fuel");
}

#[tokio::test]
async fn a_panic_inside_host_code_fails_the_run_and_frees_the_slot() {
    let rt = runtime(limits());
    let tree = small_tree().faulty("bug.txt", "x", Fault::Panic);
    let permit = rt.try_admit(None).expect("slot");
    let result = rt
        .run(
            permit,
            Script::Bytes(misbehave()),
            spec(vfs_of(tree), limits(), &["read", "/files/bug.txt"]),
        )
        .await;
    assert!(matches!(result, Err(RunError::Internal(_))), "{result:?}");
    assert_slots_freed(&rt).await;
    assert_eq!(run(&rt, &["ok"]).await.exit_code(), Some(0));
}

#[tokio::test]
async fn dropping_the_run_future_cancels_the_run_and_frees_the_slot() {
    let rt = runtime(limits());
    let script = Script::Compiled(compiled(&rt).await);
    for args in [&["spin"][..], &["sleep", "60000"][..]] {
        let permit = rt.try_admit(None).expect("slot");
        let run = rt.run(
            permit,
            script.clone(),
            spec(vfs_of(small_tree()), limits(), args),
        );
        // Give up on the run after a moment, as a disconnecting client does.
        let gave_up = tokio::time::timeout(Duration::from_millis(200), run).await;
        assert!(gave_up.is_err(), "{args:?} should still be running");
        assert_slots_freed(&rt).await;
    }
}

#[tokio::test]
async fn a_compilation_abandoned_by_its_caller_holds_its_slot_until_it_ends() {
    let rt = runtime(Limits {
        live_scripts: 1,
        ..limits()
    });
    let bomb = Bytes::from(compile_bomb(100_000));
    let permit = rt.try_admit(None).expect("slot");
    let compile = rt.compile(&permit, bomb.clone());
    let gave_up = tokio::time::timeout(Duration::from_millis(20), compile).await;
    assert!(gave_up.is_err(), "the compilation should still be running");
    drop(permit);
    // The caller is gone but the compiler still works under its slot: a
    // new script is refused rather than compiled alongside it.
    assert_eq!(rt.live_scripts(), 1);
    assert_eq!(rt.try_admit(None).unwrap_err(), Busy::Process);
    let start = std::time::Instant::now();
    while rt.live_scripts() != 0 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the compilation never ended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Its work was kept: the same bytes are a cache hit.
    let before = rt.cache_stats();
    let permit = rt.try_admit(None).expect("slot");
    rt.compile(&permit, bomb).await.expect("compiles");
    assert_eq!(rt.cache_stats().hits, before.hits + 1);
}

#[tokio::test]
async fn a_full_tenant_is_refused_while_others_run() {
    let rt = runtime(limits());
    let tenant = vfsbox_host::runtime::Gate::new(1);
    let held = rt.try_admit(Some(&tenant)).expect("the tenant's one slot");
    assert_eq!(rt.try_admit(Some(&tenant)).unwrap_err(), Busy::Tenant);
    assert_eq!(rt.live_scripts(), 1);
    drop(held);
    assert_eq!(rt.live_scripts(), 0);
}
