//! Bytes that are not a runnable script are refused before anything runs,
//! with a message that names the problem.

use vfsbox_host::runtime::{InvalidScript, RunError, Script};

use crate::common::*;

async fn refusal(bytes: Vec<u8>) -> InvalidScript {
    let rt = runtime(limits());
    let permit = rt.try_admit(None).expect("slot");
    let result = rt
        .run(
            permit,
            Script::Bytes(bytes.into()),
            spec(vfs_of(small_tree()), limits(), &["ok"]),
        )
        .await;
    assert_eq!(rt.live_scripts(), 0);
    match result {
        Err(RunError::Invalid(e)) => e,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn garbage_bytes_are_refused() {
    assert_eq!(
        refusal(b"#!/bin/sh\necho hi\n".to_vec()).await,
        InvalidScript::NotWasm
    );
    assert_eq!(refusal(Vec::new()).await, InvalidScript::NotWasm);
}

#[tokio::test]
async fn a_core_module_is_refused_with_advice() {
    let module = wat::parse_str("(module (func (export \"_start\")))").expect("wat");
    let e = refusal(module).await;
    assert_eq!(e, InvalidScript::CoreModule);
    assert!(e.to_string().contains("wasm32-wasip2"), "{e}");
}

#[tokio::test]
async fn a_truncated_component_is_refused() {
    let mut bytes = misbehave().to_vec();
    bytes.truncate(bytes.len() / 2);
    assert!(matches!(refusal(bytes).await, InvalidScript::Invalid(_)));
}

#[tokio::test]
async fn a_component_importing_sockets_is_refused_naming_the_import() {
    let component = wat::parse_str(
        r#"(component
            (import "wasi:cli/stdout@0.2.0" (instance))
            (import "wasi:sockets/tcp@0.2.0" (instance))
        )"#,
    )
    .expect("wat");
    let e = refusal(component).await;
    assert_eq!(
        e,
        InvalidScript::ForbiddenImport("wasi:sockets/tcp@0.2.0".to_owned())
    );
    assert!(e.to_string().contains("`wasi:sockets/tcp@0.2.0`"), "{e}");
}

#[tokio::test]
async fn a_component_importing_http_is_refused() {
    let component =
        wat::parse_str(r#"(component (import "wasi:http/outgoing-handler@0.2.0" (instance)))"#)
            .expect("wat");
    assert_eq!(
        refusal(component).await,
        InvalidScript::ForbiddenImport("wasi:http/outgoing-handler@0.2.0".to_owned())
    );
}

#[tokio::test]
async fn a_component_that_is_not_a_command_is_refused() {
    let component = wat::parse_str("(component)").expect("wat");
    assert!(matches!(
        refusal(component).await,
        InvalidScript::NotACommand(_)
    ));
}

#[tokio::test]
async fn the_compile_cache_skips_compiling_the_same_bytes() {
    let rt = runtime(limits());
    let before = rt.cache_stats();
    run(&rt, &["ok"]).await;
    run(&rt, &["ok"]).await;
    let after = rt.cache_stats();
    assert_eq!(after.misses - before.misses, 1);
    assert_eq!(after.hits - before.hits, 1);
}
