//! The HTTP API: agents submit scripts, download documents, and operators
//! watch health and metrics.
//!
//! [`app`] builds the router from an [`AppState`], so tests can drive it;
//! [`serve`] runs it with graceful shutdown. Scripts execute on the
//! runtime's own threads, never on the threads that accept requests, so a
//! saturated server still answers `429` and `/healthz` at once.

mod connection;
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
        let scripts = ScriptStore::new(runtime.shared().cloned());
        AppState {
            inner: Arc::new(StateInner {
                runtime,
                tenants,
                mcp,
                mcp_calls: mcp::InFlight::default(),
                scripts,
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

    /// Whether the server is draining: told to stop, it finishes its live
    /// scripts and takes no new runs.
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
        .layer(axum::middleware::from_fn(connection::keep_connection))
        .layer(trace)
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(axum::middleware::from_fn(sanitize_request_id))
        .layer(SetSensitiveRequestHeadersLayer::new([
            axum::http::header::AUTHORIZATION,
        ]))
}

/// Serves `state` on `listener` until `shutdown` resolves, then drains
/// with the default grace period: the deadline and five seconds (see
/// [`serve_draining`]).
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let grace = default_drain_grace(state.runtime().limits().deadline);
    serve_draining(listener, state, shutdown, grace).await
}

/// The grace period a drain gives live scripts unless configured: their
/// deadline ends them all by then.
pub fn default_drain_grace(deadline: Duration) -> Duration {
    deadline + Duration::from_secs(5)
}

/// How long connections may take to finish their responses once the
/// scripts have drained.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Serves `state` on `listener` until `shutdown` resolves; then drains:
/// `/readyz` answers `503`, a new run is refused with `503` and
/// `Retry-After` (a balancer retries it on another host) while the server
/// keeps accepting requests, live scripts finish (for at most `grace`), and
/// only then does it stop accepting, let responses finish, and return.
pub async fn serve_draining(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()> {
    let draining = state.clone();
    let (closing_tx, closing_rx) = tokio::sync::oneshot::channel::<()>();
    let drain = async move {
        shutdown.await;
        draining.inner.shutting_down.store(true, Ordering::Relaxed);
        let live = draining.runtime().live_scripts();
        tracing::info!(
            live,
            "draining: refusing new runs, waiting for live scripts"
        );
        let until = tokio::time::Instant::now() + grace;
        while draining.runtime().live_scripts() > 0 && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        match draining.runtime().live_scripts() {
            0 => tracing::info!("drained: no live scripts; closing connections"),
            live => tracing::warn!(
                live,
                "the grace period is over with scripts still live; exiting"
            ),
        }
        let _ = closing_tx.send(());
    };
    let server =
        axum::serve(connection::Lingering(listener), app(state)).with_graceful_shutdown(drain);
    let server = std::pin::pin!(server.into_future());
    // Once drained, connections get a moment to finish their responses
    // (a client holding one open idle does not keep the process up).
    let give_up = async move {
        if closing_rx.await.is_ok() {
            tokio::time::sleep(CLOSE_GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = server => result,
        () = give_up => {
            tracing::warn!("connections still open after the drain; exiting anyway");
            Ok(())
        }
    }
}
