//! `POST /v1/py`: runs Python code with the built-in interpreter, as any
//! other script runs.

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
use crate::python;

/// Python code to run.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PyRequest {
    /// The code, run as `python3 -c CODE` runs it (at most 256 KiB).
    #[schema(example = "import os\nprint(sorted(os.listdir('/files')))")]
    pub code: String,
    /// `sys.argv[1:]`.
    #[serde(default)]
    pub args: Vec<String>,
    /// What the code reads from `sys.stdin`.
    #[serde(default)]
    pub stdin: String,
    /// The working directory it starts in, `/` by default.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Lower limits for this run.
    #[serde(default)]
    pub limits: LimitsRequest,
}

/// Runs Python code with the built-in CPython: `open()`, `os`, `pathlib`
/// and `glob` read the tenant's mounts, read-only. An uncaught exception
/// exits with 1, its traceback on stderr.
#[utoipa::path(
    post,
    path = "/v1/py",
    tag = "runs",
    request_body(content = PyRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "The code exited (any exit status: `sys.exit(n)`, 1 for an uncaught exception)", body = RunReport),
        (status = 400, description = "Over-long code, a bad working directory, bad JSON, or a limit above the server's", body = ErrorBody),
        (status = 401, description = "No key, or a wrong key", body = ErrorBody),
        (status = 413, description = "A limit ended the run (a report; `error.limit` says which), or the request body is over 2 MiB (an error, `payload_too_large`)", body = RunReportOrError),
        (status = 422, description = "The interpreter trapped", body = RunReport),
        (status = 429, description = "No free slot; retry after `Retry-After` seconds", body = ErrorBody),
        (status = 502, description = "A store did not answer: the documents' backend, or the fleet's shared store (`unavailable`)", body = ErrorBody),
        (status = 503, description = "The server is draining (`draining`); retry on another host after `Retry-After` seconds", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn run_py(
    State(state): State<AppState>,
    Authenticated(tenant): Authenticated,
    headers: HeaderMap,
    ApiJson(req): ApiJson<PyRequest>,
) -> Result<Response, AppError> {
    python::check(&req.code).map_err(|e| AppError::bad_request("code_too_long", e.to_string()))?;
    let input = RunInput::python(req.code, req.args, req.stdin, req.cwd, req.limits);
    state
        .serve_run(
            &tenant,
            &headers,
            input,
            Some(python::id().clone()),
            async { Ok(python::component()) },
        )
        .await
}
