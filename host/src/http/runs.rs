//! Running scripts: an uploaded component (`POST /v1/runs`), a stored one
//! (`PUT /v1/scripts`, `POST /v1/scripts/{id}/runs`).
//!
//! Every run takes its slot before its body is read or compiled: when the
//! server (or the tenant) is full the answer is `429` at once.

use std::future::Future;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, Limited};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiJson, AppError, ErrorBody};
use super::report::{RunReport, RunReportOrError};
use super::tenants::{Authenticated, Tenant};
use super::{AppState, request_id};
use crate::audit::Caller;
use crate::limits::LimitsRequest;
use crate::runtime::{Permit, RunSpec, Script, ScriptId, Stdin};

/// Content type of a component upload.
const WASM: &str = "application/wasm";

/// Requires `Content-Type: application/wasm`.
fn require_wasm(headers: &HeaderMap) -> Result<(), AppError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let essence = content_type.map(|c| c.split(';').next().unwrap_or(c).trim());
    if essence.is_some_and(|e| e.eq_ignore_ascii_case(WASM)) {
        return Ok(());
    }
    Err(AppError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        format!("send the component as `Content-Type: {WASM}`"),
    ))
}

/// Reads an upload of at most `limit` bytes within `timeout`, refusing a
/// larger one without reading it all, and a slower one at the timeout (an
/// upload holds a slot while it arrives).
pub(crate) async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: u64,
    timeout: Duration,
) -> Result<Bytes, AppError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(AppError::payload_too_large(limit));
    }
    let limit_usize = usize::try_from(limit).unwrap_or(usize::MAX);
    let collected = tokio::time::timeout(timeout, Limited::new(body, limit_usize).collect())
        .await
        .map_err(|_elapsed| AppError::upload_timeout(timeout))?;
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(AppError::payload_too_large(limit))
        }
        Err(e) => Err(AppError::bad_request(
            "bad_body",
            format!("could not read the body: {e}"),
        )),
    }
}

/// Reads a script upload within the server's limits.
fn read_upload(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> impl Future<Output = Result<Bytes, AppError>> {
    let limits = state.inner.runtime.limits();
    read_body(headers, body, limits.upload, limits.upload_timeout)
}

/// The query of `POST /v1/runs`.
#[derive(Debug, Default)]
struct RunQuery {
    args: Vec<String>,
    cwd: Option<String>,
    limits: LimitsRequest,
}

fn parse_run_query(query: Option<&str>) -> Result<RunQuery, AppError> {
    let mut q = RunQuery::default();
    for (key, value) in super::query::pairs(query)? {
        let number = || {
            value.parse::<u64>().map(Some).map_err(|_| {
                AppError::bad_request("bad_query", format!("`{key}` must be a whole number"))
            })
        };
        match key.as_str() {
            "arg" => q.args.push(value),
            "cwd" => q.cwd = Some(value),
            "deadline_ms" => q.limits.deadline_ms = number()?,
            "fuel" => q.limits.fuel = number()?,
            "memory_bytes" => q.limits.memory_bytes = number()?,
            "document_reads" => q.limits.document_reads = number()?,
            "bytes_read" => q.limits.bytes_read = number()?,
            "scan_files" => q.limits.scan_files = number()?,
            "scan_bytes" => q.limits.scan_bytes = number()?,
            other => {
                return Err(AppError::bad_request(
                    "bad_query",
                    format!("unknown query parameter `{other}`"),
                ));
            }
        }
    }
    Ok(q)
}

/// What a run needs besides the script.
#[derive(Debug)]
pub(crate) struct RunInput {
    pub(crate) program: &'static str,
    /// A component built into vfsbox (the interpreter), compiled with the
    /// imports only built-ins may have.
    pub(crate) built_in: bool,
    pub(crate) args: Vec<String>,
    pub(crate) stdin: Stdin,
    pub(crate) cwd: String,
    pub(crate) limits: LimitsRequest,
}

impl RunInput {
    /// A run of a stored script with `args` and `stdin`, from `cwd` (`/`
    /// by default).
    pub(crate) fn stored(
        args: Vec<String>,
        stdin: String,
        cwd: Option<String>,
        limits: LimitsRequest,
    ) -> RunInput {
        RunInput {
            program: "script",
            built_in: false,
            args,
            stdin: Stdin::Bytes(stdin.into()),
            cwd: cwd.unwrap_or_else(|| "/".to_owned()),
            limits,
        }
    }

    /// A `vfs-sh` run of `script`, from `cwd` (`/` by default).
    pub(crate) fn shell(script: String, cwd: Option<String>, limits: LimitsRequest) -> RunInput {
        RunInput {
            program: "vfs-sh",
            built_in: false,
            args: vec!["-c".to_owned(), script],
            stdin: Stdin::Empty,
            cwd: cwd.unwrap_or_else(|| "/".to_owned()),
            limits,
        }
    }

    /// A run of Python `code` by the built-in interpreter, with `args` as
    /// `sys.argv[1:]`, from `cwd` (`/` by default).
    pub(crate) fn python(
        code: String,
        args: Vec<String>,
        stdin: String,
        cwd: Option<String>,
        limits: LimitsRequest,
    ) -> RunInput {
        RunInput {
            program: "python",
            built_in: true,
            args: crate::python::argv(&code, &args),
            stdin: Stdin::Bytes(stdin.into()),
            cwd: cwd.unwrap_or_else(|| "/".to_owned()),
            limits,
        }
    }
}

impl AppState {
    /// Takes a slot for `tenant`, counting a refusal: `503` while the
    /// server drains, `429` when it (or the tenant) is full.
    pub(crate) fn admit(&self, tenant: &Tenant) -> Result<Permit, AppError> {
        if self.is_shutting_down() {
            self.inner.metrics.rejected("draining");
            return Err(AppError::draining());
        }
        self.inner
            .runtime
            .try_admit(Some(&tenant.gate))
            .map_err(|busy| {
                let e = AppError::from(busy);
                self.inner.metrics.rejected(e.code());
                e
            })
    }

    /// The path every run request takes once its input is parsed: refuse
    /// limits above the server's, take a slot (or answer `429` at once),
    /// only then get the script's bytes (`script`: reading an upload, say)
    /// and compile them (or find them compiled, by `id` when it is known),
    /// run, and answer the report.
    pub(crate) async fn serve_run(
        &self,
        tenant: &Tenant,
        headers: &HeaderMap,
        input: RunInput,
        id: Option<ScriptId>,
        script: impl Future<Output = Result<Bytes, AppError>>,
    ) -> Result<Response, AppError> {
        let report = self
            .run_for(tenant, request_id(headers), input, id, script)
            .await?;
        Ok(RunReport::from(report).into_response())
    }

    /// [`Self::serve_run`] without the HTTP answer: the run's report, or
    /// why there is none (for MCP, which answers in its own shape).
    pub(crate) async fn run_for(
        &self,
        tenant: &Tenant,
        request_id: String,
        input: RunInput,
        id: Option<ScriptId>,
        script: impl Future<Output = Result<Bytes, AppError>>,
    ) -> Result<crate::report::Report, AppError> {
        let limits = self.inner.runtime.limits().lowered(&input.limits)?;
        let permit = self.admit(tenant)?;
        let bytes = script.await?;
        let runtime = &self.inner.runtime;
        let compiled = match (input.built_in, id) {
            (true, Some(id)) => runtime.compile_built_in(&permit, id, bytes).await?,
            (_, id) => runtime.compile_as(&permit, id, bytes).await?,
        };
        let spec = RunSpec {
            program: input.program.to_owned(),
            args: input.args,
            stdin: input.stdin,
            cwd: input.cwd,
            vfs: tenant.vfs.clone(),
            limits,
            caller: Caller {
                tenant: tenant.name.clone(),
                request_id,
            },
        };
        match self
            .inner
            .runtime
            .run(permit, Script::Compiled(compiled), spec)
            .await
        {
            Ok(report) => {
                self.inner.metrics.ran(&report);
                Ok(report)
            }
            Err(e) => {
                self.inner.metrics.failed();
                Err(e.into())
            }
        }
    }
}

/// Runs an uploaded component.
#[utoipa::path(
    post,
    path = "/v1/runs",
    tag = "runs",
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "A WebAssembly component built for wasm32-wasip2 (at most the upload limit, 16 MiB by default)"),
    params(
        ("arg" = Option<Vec<String>>, Query, description = "An argument; repeat for more"),
        ("cwd" = Option<String>, Query, description = "Working directory, `/` by default"),
        ("deadline_ms" = Option<u64>, Query, description = "A lower deadline"),
        ("fuel" = Option<u64>, Query, description = "Less fuel"),
        ("memory_bytes" = Option<u64>, Query, description = "Less memory"),
        ("document_reads" = Option<u64>, Query, description = "Fewer document reads"),
        ("bytes_read" = Option<u64>, Query, description = "Fewer bytes read"),
        ("scan_files" = Option<u64>, Query, description = "A smaller grep scan budget in files"),
        ("scan_bytes" = Option<u64>, Query, description = "A smaller grep scan budget in bytes"),
    ),
    responses(
        (status = 200, description = "The script exited (any exit code)", body = RunReport),
        (status = 400, description = "Not a valid script, a forbidden import, a bad query or working directory, or a limit above the server's", body = ErrorBody),
        (status = 401, description = "No key, or a wrong key", body = ErrorBody),
        (status = 408, description = "The upload did not arrive within the upload timeout (`upload_timeout`)", body = ErrorBody),
        (status = 413, description = "A limit ended the script (a report with `error.code = budget_exceeded`), or the upload is too large (an error, `payload_too_large`)", body = RunReportOrError),
        (status = 415, description = "Not `application/wasm`", body = ErrorBody),
        (status = 422, description = "The script trapped", body = RunReport),
        (status = 429, description = "No free slot (`busy`, `tenant_busy`); retry after `Retry-After` seconds", body = ErrorBody),
        (status = 502, description = "A store did not answer: the documents' backend, or the fleet's shared store (`unavailable`)", body = ErrorBody),
        (status = 503, description = "The server is draining (`draining`); retry on another host after `Retry-After` seconds", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn run_upload(
    State(state): State<AppState>,
    Authenticated(tenant): Authenticated,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, AppError> {
    require_wasm(&headers)?;
    let q = parse_run_query(query.as_deref())?;
    let input = RunInput {
        program: "script",
        built_in: false,
        args: q.args,
        stdin: Stdin::Empty,
        cwd: q.cwd.unwrap_or_else(|| "/".to_owned()),
        limits: q.limits,
    };
    let upload = read_upload(&state, &headers, body);
    state
        .serve_run(&tenant, &headers, input, None, upload)
        .await
}

/// A stored script's id.
#[derive(Debug, Serialize, ToSchema)]
pub struct StoredScript {
    /// `sha256:<hex>` of the component.
    #[schema(example = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")]
    pub id: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Stores and compiles a component, for running later by id.
#[utoipa::path(
    put,
    path = "/v1/scripts",
    tag = "scripts",
    request_body(content = Vec<u8>, content_type = "application/wasm"),
    responses(
        (status = 201, description = "Stored", body = StoredScript),
        (status = 200, description = "Already stored", body = StoredScript),
        (status = 400, description = "Not a valid script, or a forbidden import", body = ErrorBody),
        (status = 401, description = "No key, or a wrong key", body = ErrorBody),
        (status = 408, description = "The upload did not arrive within the upload timeout (`upload_timeout`)", body = ErrorBody),
        (status = 413, description = "The upload is too large", body = ErrorBody),
        (status = 415, description = "Not `application/wasm`", body = ErrorBody),
        (status = 429, description = "No free slot to compile it; retry later", body = ErrorBody),
        (status = 502, description = "A store did not answer: the documents' backend, or the fleet's shared store (`unavailable`)", body = ErrorBody),
        (status = 503, description = "The server is draining (`draining`); retry on another host after `Retry-After` seconds", body = ErrorBody),
        (status = 507, description = "The tenant stores as many scripts as it may", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn put_script(
    State(state): State<AppState>,
    Authenticated(tenant): Authenticated,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, AppError> {
    require_wasm(&headers)?;
    let permit = state.admit(&tenant)?;
    let bytes = read_upload(&state, &headers, body).await?;
    let compiled = state.inner.runtime.compile(&permit, bytes.clone()).await?;
    drop(permit);
    let size = bytes.len() as u64;
    let created = state
        .inner
        .scripts
        .store(&tenant.name, compiled.id().clone(), bytes)
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let body = StoredScript {
        id: compiled.id().to_string(),
        size,
    };
    Ok((status, axum::Json(body)).into_response())
}

/// How to run a stored script.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ScriptRunRequest {
    /// Arguments after `argv[0]`.
    pub args: Vec<String>,
    /// Working directory, `/` by default.
    pub cwd: Option<String>,
    /// Standard input.
    pub stdin: String,
    /// Lower limits for this run.
    pub limits: LimitsRequest,
}

/// Runs a stored script.
#[utoipa::path(
    post,
    path = "/v1/scripts/{id}/runs",
    tag = "scripts",
    params(("id" = String, Path, description = "The id from `PUT /v1/scripts`")),
    request_body(content = ScriptRunRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "The script exited (any exit code)", body = RunReport),
        (status = 400, description = "Bad JSON, working directory or limits", body = ErrorBody),
        (status = 401, description = "No key, or a wrong key", body = ErrorBody),
        (status = 404, description = "No such stored script", body = ErrorBody),
        (status = 413, description = "A limit ended the script", body = RunReport),
        (status = 422, description = "The script trapped", body = RunReport),
        (status = 429, description = "No free slot; retry after `Retry-After` seconds", body = ErrorBody),
        (status = 502, description = "A store did not answer: the documents' backend, or the fleet's shared store (`unavailable`)", body = ErrorBody),
        (status = 503, description = "The server is draining (`draining`); retry on another host after `Retry-After` seconds", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn run_stored(
    State(state): State<AppState>,
    Authenticated(tenant): Authenticated,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiJson(req): ApiJson<ScriptRunRequest>,
) -> Result<Response, AppError> {
    let not_found = || AppError::not_found("script_not_found", format!("no stored script {id}"));
    let script_id = ScriptId::parse(&id).ok_or_else(not_found)?;
    let input = RunInput::stored(req.args, req.stdin, req.cwd, req.limits);
    // Fetched once the run has its slot: a full host refuses before it
    // asks the fleet's store for anything.
    let script = async {
        state
            .inner
            .scripts
            .fetch(&tenant.name, &script_id)
            .await?
            .ok_or_else(not_found)
    };
    state
        .serve_run(&tenant, &headers, input, Some(script_id.clone()), script)
        .await
}
