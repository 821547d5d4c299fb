//! Operations endpoints: liveness, readiness, metrics, the OpenAPI document.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use super::AppState;

/// Liveness.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok` when the server answers.
    pub status: &'static str,
}

/// Readiness and capacity.
#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    /// Whether the server takes new runs: false while it drains, and while
    /// it compiles the built-in Python as it starts (`warming`). It does not
    /// change with the free slots: a full host is still ready (its `429`s
    /// are decided before any work, so a balancer can try another host).
    pub ready: bool,
    /// The server was told to stop: live scripts finish, new runs are
    /// refused with `503` and `Retry-After`.
    pub draining: bool,
    /// The built-in Python is still being compiled: runs are taken, but a
    /// `POST /v1/py` would wait for the compile.
    pub warming: bool,
    /// Scripts running now.
    pub live_scripts: usize,
    /// Scripts that could start now.
    pub free_slots: usize,
}

/// The server answers.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, body = Health)))]
pub(crate) async fn healthz() -> axum::Json<Health> {
    axum::Json(Health { status: "ok" })
}

/// Whether the server takes runs, and how many slots are free.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    responses((status = 200, description = "Ready", body = Readiness), (status = 503, description = "Draining, or compiling the built-in Python as it starts (`warming`)", body = Readiness))
)]
pub(crate) async fn readyz(State(state): State<AppState>) -> Response {
    let rt = &state.inner.runtime;
    let live = rt.live_scripts();
    let warming = state.is_preparing_python();
    let draining = state.is_shutting_down();
    let ready = !draining && !warming;
    let body = Readiness {
        ready,
        draining,
        warming,
        live_scripts: live,
        free_slots: rt.gate().capacity().saturating_sub(live),
    };
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

/// Prometheus metrics.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain", body = String))
)]
pub(crate) async fn metrics(State(state): State<AppState>) -> Response {
    let text = state.inner.metrics.render(&state.inner.runtime);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// This API's OpenAPI document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operations",
    responses((status = 200, description = "OpenAPI 3 document", content_type = "application/json", body = Object))
)]
pub(crate) async fn openapi() -> Response {
    axum::Json(super::openapi::ApiDoc::openapi()).into_response()
}
