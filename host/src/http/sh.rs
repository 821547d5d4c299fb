//! `POST /v1/sh`: runs a `vfs-sh` script text, as any other script runs.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::error::{ApiJson, AppError, ErrorBody};
use super::report::{RunReport, RunReportOrError};
use super::runs::RunInput;
use super::tenants::Authenticated;
use crate::limits::LimitsRequest;
use crate::sh::{self, ShError};

/// A shell script to run.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShRequest {
    /// The script, such as `grep -rn "refund" /files | head -5` (at most
    /// 4096 bytes).
    #[schema(example = "grep -rn refund /files/policies | head -3")]
    pub script: String,
    /// The working directory it starts in, `/` by default.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Lower limits for this run.
    #[serde(default)]
    pub limits: LimitsRequest,
}

/// Runs a shell script with `vfs-sh`. The report's `cwd` is where the
/// script's `cd`s left it.
#[utoipa::path(
    post,
    path = "/v1/sh",
    tag = "runs",
    request_body(content = ShRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "The script exited (any exit code: 1 for no match, 2 for a usage error, 127 for an unsupported command)", body = RunReport),
        (status = 400, description = "An empty or over-long script, a bad working directory, bad JSON, or a limit above the server's", body = ErrorBody),
        (status = 401, description = "No key, or a wrong key", body = ErrorBody),
        (status = 413, description = "A limit ended the script (a report; `error.limit` says which), or the request body is over 256 KiB (an error, `payload_too_large`)", body = RunReportOrError),
        (status = 422, description = "The shell trapped", body = RunReport),
        (status = 429, description = "No free slot; retry after `Retry-After` seconds", body = ErrorBody),
        (status = 502, description = "A store did not answer: the documents' backend, or the fleet's shared store (`unavailable`)", body = ErrorBody),
        (status = 503, description = "The server is draining (`draining`); retry on another host after `Retry-After` seconds", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn run_sh(
    State(state): State<AppState>,
    Authenticated(tenant): Authenticated,
    headers: HeaderMap,
    ApiJson(req): ApiJson<ShRequest>,
) -> Result<Response, AppError> {
    sh::check(&req.script, state.inner.runtime.limits().sh_script).map_err(|e| match e {
        ShError::TooLong { .. } => AppError::bad_request("script_too_long", e.to_string()),
        ShError::Empty => AppError::bad_request("empty_script", e.to_string()),
    })?;
    let input = RunInput::shell(req.script, req.cwd, req.limits);
    state
        .serve_run(&tenant, &headers, input, Some(sh::id().clone()), async {
            Ok(sh::component())
        })
        .await
}
