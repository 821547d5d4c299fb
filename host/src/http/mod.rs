//! The HTTP API: agents submit scripts, download documents, and operators
//! watch health and metrics.
//!
//! [`app`] builds the router from an [`AppState`], so tests can drive it;
//! [`serve`] runs it with graceful shutdown. Scripts execute on the
//! runtime's own threads, never on the threads that accept requests, so a
//! saturated server still answers `429` and `/healthz` at once.

mod error;
mod files;
pub mod mcp;
mod metrics;
pub mod openapi;
mod ops;
mod py;
mod query;
mod report;
mod runs;
mod scripts;
mod sh;
mod tenants;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use tokio::net::TcpListener;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::TraceLayer;

pub use error::{AppError, ErrorBody, ErrorDetail};
pub use files::ResolvedPath;
pub use mcp::McpServer;
pub use metrics::Metrics;
pub use ops::{Health, Readiness};
pub use py::PyRequest;
pub use report::RunReport;
pub use runs::{ScriptRunRequest, StoredScript};
pub use scripts::ScriptStore;
pub use sh::ShRequest;
pub use tenants::{Authenticated, Tenant, Tenants};

use crate::runtime::Runtime;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Who may reach `/mcp` from where: `Host` names accepted (loopback ones
/// when empty) and browser `Origin`s accepted (any when empty), against DNS
/// rebinding.
#[derive(Debug, Clone, Default)]
pub struct McpSettings {
    /// Accepted `Host` header values (`name` or `name:port`).
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values (`scheme://host[:port]`).
    pub allowed_origins: Vec<String>,
}

/// Everything the handlers share. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<StateInner>,
}

#[derive(Debug)]
struct StateInner {
    runtime: Runtime,
    tenants: Tenants,
    mcp: McpSettings,
    mcp_calls: mcp::InFlight,
    scripts: ScriptStore,
    metrics: Metrics,
    shutting_down: AtomicBool,
    /// The built-in Python is being compiled (see [`AppState::prepare_python`]).
    preparing_python: AtomicBool,
}

impl AppState {
    /// State for a runtime and its tenants.
    pub fn new(runtime: Runtime, tenants: Tenants) -> AppState {
        AppState::with_mcp(runtime, tenants, McpSettings::default())
    }

    /// State for a runtime and its tenants, with these `/mcp` settings.
    pub fn with_mcp(runtime: Runtime, tenants: Tenants, mcp: McpSettings) -> AppState {
        AppState {
            inner: Arc::new(StateInner {
                runtime,
                tenants,
                mcp,
                mcp_calls: mcp::InFlight::default(),
                scripts: ScriptStore::default(),
                metrics: Metrics::default(),
                shutting_down: AtomicBool::new(false),
                preparing_python: AtomicBool::new(false),
            }),
        }
    }

    /// The tenant that every request is in demo mode (and over stdio).
    pub fn anonymous_tenant(&self) -> Option<Arc<Tenant>> {
        self.inner.tenants.anonymous_tenant()
    }

    /// Compiles the built-in shell ahead of the first `POST /v1/sh`.
    pub async fn warm_up(&self) -> Result<(), String> {
        let permit = self
            .inner
            .runtime
            .try_admit(None)
            .map_err(|e| e.to_string())?;
        self.inner
            .runtime
            .compile(&permit, crate::sh::component())
            .await
            .map(drop)
            .map_err(|e| format!("the built-in shell does not compile: {e}"))
    }

    /// Starts compiling the built-in Python in the background (from the
    /// disk cache when it is there); `/readyz` says not ready until it is
    /// done, so that a balancer sends a new host's first `POST /v1/py` only
    /// once it will not pay for the compile.
    pub fn prepare_python(&self) -> tokio::task::JoinHandle<()> {
        self.inner.preparing_python.store(true, Ordering::Relaxed);
        let state = self.clone();
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            match state.inner.runtime.prepare_python().await {
                Ok(()) => tracing::info!(
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "the built-in Python is compiled"
                ),
                // Not fatal: the shell and compiled scripts run, and each
                // Python run reports the failure itself.
                Err(e) => tracing::error!("the built-in Python does not compile: {e}"),
            }
            state.inner.preparing_python.store(false, Ordering::Relaxed);
        })
    }

    /// Whether the built-in Python is still being compiled.
    pub fn is_preparing_python(&self) -> bool {
        self.inner.preparing_python.load(Ordering::Relaxed)
    }

    /// The runtime scripts run on.
    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    /// Whether a shutdown has begun.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.shutting_down.load(Ordering::Relaxed)
    }
}

/// The request's id (set by the request-id layer).
pub(crate) fn request_id(headers: &HeaderMap) -> String {
    headers
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

async fn not_found() -> AppError {
    AppError::not_found("no_route", "no such endpoint; see /openapi.json")
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    AppError::internal("a handler panicked").into_response()
}

/// Keeps a client's `x-request-id` when it is a short token; otherwise the
/// request-id layer makes a new one.
async fn sanitize_request_id(mut req: Request, next: axum::middleware::Next) -> Response {
    let ok = req.headers().get(&REQUEST_ID).is_some_and(|v| {
        let b = v.as_bytes();
        !b.is_empty()
            && b.len() <= 64
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || b"-_.:".contains(c))
    });
    if !ok {
        req.headers_mut().remove(&REQUEST_ID);
    }
    next.run(req).await
}

/// Asks the client to close the connection after an error answered to a
/// request with a body: the body may not have been read (a `429`, a `415`,
/// an upload over the limit), and a client that reused the connection would
/// find it broken.
async fn close_after_refused_body(req: Request, next: axum::middleware::Next) -> Response {
    let has_body = req
        .headers()
        .contains_key(axum::http::header::TRANSFER_ENCODING)
        || req
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0");
    let mut response = next.run(req).await;
    if has_body && (response.status().is_client_error() || response.status().is_server_error()) {
        response.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    response
}

/// The largest `POST /v1/sh` body: a script, its cwd and limits.
const SH_BODY_LIMIT: usize = 256 * 1024;
/// The largest `POST /v1/py` body: code (256 KiB at most), arguments,
/// stdin, cwd and limits.
const PY_BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The router of the whole API.
pub fn app(state: AppState) -> Router {
    let trace = TraceLayer::new_for_http().make_span_with(|req: &Request| {
        let id = req.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("");
        tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
    });
    let mcp = Router::new()
        .route_service("/mcp", mcp::service(state.clone()))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            mcp::authenticate,
        ));
    Router::new()
        .merge(mcp)
        .route("/v1/runs", post(runs::run_upload))
        .route("/v1/scripts", put(runs::put_script))
        .route("/v1/scripts/{id}/runs", post(runs::run_stored))
        // A shell script is a few KiB: its request needs no more.
        .route(
            "/v1/sh",
            post(sh::run_sh).layer(axum::extract::DefaultBodyLimit::max(SH_BODY_LIMIT)),
        )
        .route(
            "/v1/py",
            post(py::run_py).layer(axum::extract::DefaultBodyLimit::max(PY_BODY_LIMIT)),
        )
        .route("/v1/fs/{*path}", get(files::download))
        .route("/v1/resolve", get(files::resolve))
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .route("/openapi.json", get(ops::openapi))
        .fallback(not_found)
        .method_not_allowed_fallback(|| async {
            AppError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "see /openapi.json",
            )
        })
        .with_state(state)
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(axum::middleware::from_fn(close_after_refused_body))
        .layer(trace)
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(axum::middleware::from_fn(sanitize_request_id))
        .layer(SetSensitiveRequestHeadersLayer::new([
            axum::http::header::AUTHORIZATION,
        ]))
}

/// Serves `state` on `listener` until `shutdown` resolves; then stops
/// accepting, lets running scripts finish (they end by their deadline at
/// the latest), and returns.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let deadline = state.runtime().limits().deadline;
    let flag = state.clone();
    let (drained_tx, drained_rx) = tokio::sync::oneshot::channel::<()>();
    let signal = async move {
        shutdown.await;
        flag.inner.shutting_down.store(true, Ordering::Relaxed);
        tracing::info!("shutting down: no new connections; waiting for running scripts");
        let _ = drained_tx.send(());
    };
    let server = axum::serve(listener, app(state)).with_graceful_shutdown(signal);
    let server = std::pin::pin!(server.into_future());
    // Running scripts end by their deadline; give them that, and a margin.
    let give_up = async move {
        if drained_rx.await.is_ok() {
            tokio::time::sleep(deadline + Duration::from_secs(5)).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = server => result,
        () = give_up => {
            tracing::warn!("scripts still running past their deadline; exiting anyway");
            Ok(())
        }
    }
}
