//! MCP: the Model Context Protocol, with the same sandbox, gate, limits,
//! tenants and audit as the rest of the API.
//!
//! One handler, [`McpServer`], serves both transports: `vfsbox mcp` over
//! stdio (one tenant: the command line's mounts) and `/mcp` on `serve` over
//! streamable HTTP, stateless (each request stands alone, so nothing is lost
//! on a restart or behind a load balancer), where the bearer key names the
//! tenant. The protocol itself (versions, the `initialize` handshake of
//! older clients and the session-less 2026-07-28 protocol, `Host` and
//! `Origin` checks) is the official SDK's, `rmcp`.
//!
//! - `sh` runs a `vfs-sh` script as `POST /v1/sh` does: it takes a slot, is
//!   refused at once when none is free, and ends with the limit named and
//!   the output so far when one is spent.
//! - `grep` searches with the host's engine under the scan budget, also in
//!   a slot (a search is the heaviest thing a call can do), and is audited
//!   like a script's search: the patterns' SHA-256, never the patterns.
//! - `read`, `list` and `stat` are single backend calls bounded by the
//!   deadline; `read` is audited like a download and bounded by the
//!   bytes-read limit.
//! - `run` runs a script the tenant stored (`PUT /v1/scripts`), by id, as
//!   `POST /v1/scripts/{id}/runs` does; offered only where the tenant's
//!   config has `mcp_run = true`.
//! - Every document is a resource, `vfs:///{+path}`.
//!
//! A tool result's text is cut at the `tool_result` limit (100 KB by
//! default; a call may ask for less), and says so with a hint how to
//! narrow the call. A cancelled call drops its run, which stops the script
//! and frees its slot.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::CancelledNotificationParam;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::AppState;
use super::error::{AppError, ErrorBody};
use super::report::RunReport;
use super::runs::RunInput;
use super::tenants::{Authenticated, Tenant};
use crate::audit::{Caller, Event, pattern_digest};
use crate::limits::Limits;
use crate::mcp_input::{
    GrepArgs, GrepMode, ListArgs, PythonArgs, ReadArgs, RunArgs, ShArgs, StatArgs, ToolArgs, cut,
};
use crate::runtime::ScriptId;
use crate::vfs::grep::{Grep, GrepRequest, ScanBudget};
use crate::vfs::{FsError, Kind, VPath, resolve as resolve_path};

/// The MCP calls running now, by tenant and JSON-RPC request id, so that
/// a `notifications/cancelled` reaches its call over stateless HTTP too,
/// where it arrives in a request of its own.
#[derive(Debug, Default)]
pub(crate) struct InFlight(
    std::sync::Mutex<std::collections::HashMap<(String, String), CancellationToken>>,
);

/// Forgets a call when it ends.
struct Running<'a> {
    calls: &'a InFlight,
    key: (String, String),
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.calls
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.key);
    }
}

impl InFlight {
    fn start(&self, tenant: &str, id: &str, ct: CancellationToken) -> Running<'_> {
        let key = (tenant.to_owned(), id.to_owned());
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), ct);
        Running { calls: self, key }
    }

    fn cancel(&self, tenant: &str, id: &str) {
        let key = (tenant.to_owned(), id.to_owned());
        if let Some(ct) = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            ct.cancel();
        }
    }
}

/// What an audit record names as the script of a call that runs none.
const NO_SCRIPT: &str = "mcp";

/// The MCP handler: the server's state, and over stdio the one tenant.
#[derive(Clone)]
pub struct McpServer {
    state: AppState,
    /// Over stdio, the tenant of every call; over HTTP the auth layer puts
    /// the caller's tenant in each request.
    fixed: Option<Arc<Tenant>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").finish_non_exhaustive()
    }
}

impl McpServer {
    /// A handler whose every call is `tenant`'s (stdio).
    pub fn for_tenant(state: AppState, tenant: Arc<Tenant>) -> McpServer {
        McpServer {
            state,
            fixed: Some(tenant),
        }
    }

    /// A handler that finds the tenant in each HTTP request.
    pub(crate) fn over_http(state: AppState) -> McpServer {
        McpServer { state, fixed: None }
    }

    /// The caller's tenant: the fixed one (stdio), or the one the auth
    /// layer put in the HTTP request behind `extensions`.
    fn tenant_of(&self, extensions: &rmcp::model::Extensions) -> Option<Arc<Tenant>> {
        self.fixed.clone().or_else(|| {
            extensions
                .get::<axum::http::request::Parts>()
                .and_then(|p| p.extensions.get::<Arc<Tenant>>())
                .cloned()
        })
    }

    fn tenant(&self, ctx: &RequestContext<RoleServer>) -> Result<Arc<Tenant>, McpError> {
        self.tenant_of(&ctx.extensions)
            .ok_or_else(|| McpError::internal_error("the request carries no tenant", None))
    }

    /// Records a download of `size` bytes of `path`.
    fn audit_download(&self, caller: &Caller, path: &VPath, size: usize) -> Result<(), String> {
        let event = Event::Download {
            path: path.as_str(),
            size: size as u64,
        };
        self.state
            .inner
            .runtime
            .audit()
            .record(caller, &event)
            .map_err(|e| e.to_string())
    }

    fn request_id(ctx: &RequestContext<RoleServer>) -> String {
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .map(|p| super::request_id(&p.headers))
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("mcp-{}", ctx.id))
    }

    fn limits(&self) -> &Limits {
        self.state.inner.runtime.limits()
    }
}

/// The JSON-Schema `object` of a tool's arguments or results.
fn object(schema: Value) -> Arc<Map<String, Value>> {
    match schema {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

fn limits_schema() -> Value {
    let n = |what: &str| json!({"type": "integer", "minimum": 0, "description": what});
    json!({
        "type": "object",
        "description": "Lower limits for this call (never above the server's)",
        "properties": {
            "deadline_ms": n("Wall-clock deadline in milliseconds"),
            "fuel": n("Fuel (about one unit per WebAssembly instruction)"),
            "memory_bytes": n("Linear memory in bytes"),
            "document_reads": n("Distinct documents read"),
            "bytes_read": n("Bytes read"),
            "scan_files": n("Files scanned by searches"),
            "scan_bytes": n("Bytes scanned by searches"),
        },
        "additionalProperties": false,
    })
}

fn max_result_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "A lower cap on the result's text, in bytes"})
}

fn annotations(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false)
}

/// A read-only tool: its name, title, description, and the JSON Schemas of
/// its arguments and of its structured result.
fn tool(
    name: &'static str,
    title: &str,
    description: &'static str,
    input: Value,
    output: Value,
) -> Tool {
    Tool::new(name, description, object(input))
        .with_raw_output_schema(object(output))
        .with_annotations(annotations(title))
}

/// The tools, built once.
fn tools() -> &'static [Tool] {
    static TOOLS: std::sync::LazyLock<Vec<Tool>> = std::sync::LazyLock::new(build_tools);
    &TOOLS
}

/// The tools, with their argument and result schemas.
fn build_tools() -> Vec<Tool> {
    let usage = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    let sh = tool(
        "sh",
        "Run a shell script over the documents",
        "Run a read-only bash-like script (vfs-sh: pipelines, variables, loops, grep, find, awk, sed, jq, ...) over the documents, in a sandbox with a deadline, fuel, memory and read budgets. Returns the exit code, stdout, stderr, the final working directory and what it used; a spent budget names the limit and keeps the output so far.",
        json!({
            "type": "object",
            "properties": {
                "script": {"type": "string", "description": "The script, such as `grep -rn refund /files | head -5` (at most 4096 bytes)"},
                "cwd": {"type": "string", "description": "Where it starts, `/` by default"},
                "limits": limits_schema(),
                "max_result_bytes": max_result_schema(),
            },
            "required": ["script"],
            "additionalProperties": false,
        }),
        json!({
            "type": "object",
            "properties": {
                "outcome": {"type": "string", "enum": ["exited", "trapped", "budget_exceeded"]},
                "exit_code": {"type": ["integer", "null"]},
                "stdout": {"type": "string"},
                "stderr": {"type": "string"},
                "stdout_truncated": {"type": "boolean"},
                "stderr_truncated": {"type": "boolean"},
                "cwd": {"type": "string"},
                "usage": usage,
                "error": {"type": ["object", "null"]},
                "result_truncated": {"type": "boolean", "description": "The text was cut to fit the result cap"},
            },
            "required": ["outcome", "exit_code", "stdout", "stderr", "cwd", "usage", "result_truncated"],
        }),
    );

    let python = tool(
        "python",
        "Run Python code over the documents",
        "Run Python 3 code (CPython with its standard library: csv, json, re, collections, pathlib, ...) over the documents, in the same sandbox and limits as `sh`. `open()`, `os.walk`, `pathlib` and `glob` read the mounts (`/files/...`), read-only; the `vfsbox` module searches with the host's engine (`vfsbox.grep`) and tells the budget left (`vfsbox.budget()`). No network, no subprocesses. Returns the exit status (1 and the traceback for an uncaught exception), stdout, stderr and what it used.",
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The code, run as `python3 -c CODE` runs it (at most 256 KiB)"},
                "args": {"type": "array", "items": {"type": "string"}, "description": "`sys.argv[1:]`"},
                "stdin": {"type": "string", "description": "What the code reads from `sys.stdin`"},
                "cwd": {"type": "string", "description": "Where it starts, `/` by default"},
                "limits": limits_schema(),
                "max_result_bytes": max_result_schema(),
            },
            "required": ["code"],
            "additionalProperties": false,
        }),
        sh.output_schema
            .as_ref()
            .map_or(Value::Null, |s| Value::Object((**s).clone())),
    );

    let read = tool(
        "read",
        "Read a document",
        "Read one document as text: a window of lines (`offset`, 1-based, and `limit`) or a byte range (`byte_offset`, `byte_length`). Says the document's size and line count and whether the text was cut. A binary document is described, not dumped.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute, such as /files/README.md"},
                "offset": {"type": "integer", "minimum": 1, "description": "First line, 1-based"},
                "limit": {"type": "integer", "minimum": 1, "description": "Lines at most"},
                "byte_offset": {"type": "integer", "minimum": 0},
                "byte_length": {"type": "integer", "minimum": 1},
                "max_result_bytes": max_result_schema(),
            },
            "required": ["path"],
            "additionalProperties": false,
        }),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "size": {"type": "integer"},
                "binary": {"type": "boolean"},
                "total_lines": {"type": ["integer", "null"]},
                "first_line": {"type": ["integer", "null"]},
                "lines": {"type": ["integer", "null"]},
                "text": {"type": ["string", "null"]},
                "truncated": {"type": "boolean"},
            },
            "required": ["path", "size", "binary", "truncated"],
        }),
    );

    let grep = tool(
        "grep",
        "Search document contents",
        "Search document contents with ripgrep's engine, under the scan budget. `mode`: `lines` (matching lines with their numbers), `files` (paths only) or `count` (matches per file). A search cut by the budget says how far it got.",
        json!({
            "type": "object",
            "properties": {
                "patterns": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Regular expressions (or literal text with fixed_strings); a line matches when any does"},
                "roots": {"type": "array", "items": {"type": "string"}, "description": "Files or directories to search, `/` by default (at most 64)"},
                "ignore_case": {"type": "boolean"},
                "whole_word": {"type": "boolean"},
                "fixed_strings": {"type": "boolean"},
                "context": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Lines of context around each match"},
                "include": {"type": "array", "items": {"type": "string"}, "description": "Only file names matching one of these globs"},
                "exclude": {"type": "array", "items": {"type": "string"}, "description": "No file names matching one of these globs"},
                "max_results": {"type": "integer", "minimum": 1, "description": "Lines (or files) reported at most, 200 by default"},
                "mode": {"type": "string", "enum": ["lines", "files", "count"]},
                "limits": limits_schema(),
                "max_result_bytes": max_result_schema(),
            },
            "required": ["patterns"],
            "additionalProperties": false,
        }),
        json!({
            "type": "object",
            "properties": {
                "matches": {"type": "array", "items": {"type": "object"}},
                "files_scanned": {"type": "integer"},
                "bytes_scanned": {"type": "integer"},
                "partial": {"type": ["object", "null"], "description": "Set when the scan budget cut the search: files searched and not reached"},
                "results_truncated": {"type": "boolean"},
                "errors": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["matches", "files_scanned", "bytes_scanned", "results_truncated"],
        }),
    );

    let list = tool(
        "list",
        "List a directory",
        "List a directory: its entries (path, kind, size, modification time), down to `depth` levels, optionally only names matching a glob; `cursor` continues a long listing.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "A directory, `/` by default"},
                "depth": {"type": "integer", "minimum": 1, "maximum": 10, "description": "Levels, 1 by default"},
                "glob": {"type": "string", "description": "Only names matching this glob, such as `*.md`"},
                "cursor": {"type": "string", "description": "The `next_cursor` of the previous page"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10000, "description": "Entries per page, 1000 by default"},
            },
            "additionalProperties": false,
        }),
        json!({
            "type": "object",
            "properties": {
                "entries": {"type": "array", "items": {"type": "object"}},
                "next_cursor": {"type": ["string", "null"]},
                "truncated": {"type": "boolean", "description": "A directory held more entries than one listing returns"},
            },
            "required": ["entries", "truncated"],
        }),
    );

    let stat = tool(
        "stat",
        "Resolve a path",
        "Resolve a path: its absolute form, kind, size, modification time and permission bits; an error if nothing is there.",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false,
        }),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "kind": {"type": "string", "enum": ["file", "directory"]},
                "size": {"type": "integer"},
                "modified": {"type": ["string", "null"]},
                "mode": {"type": "string"},
            },
            "required": ["path", "kind", "size"],
        }),
    );

    let run = tool(
        "run",
        "Run a stored script",
        "Run a script this tenant stored with `PUT /v1/scripts`, by its id, with arguments and standard input, in the same sandbox and limits as `sh`. Offered only where the tenant's config enables it.",
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "`sha256:<hex>`, as `PUT /v1/scripts` answered"},
                "args": {"type": "array", "items": {"type": "string"}},
                "stdin": {"type": "string"},
                "cwd": {"type": "string"},
                "limits": limits_schema(),
                "max_result_bytes": max_result_schema(),
            },
            "required": ["id"],
            "additionalProperties": false,
        }),
        sh.output_schema
            .as_ref()
            .map_or(Value::Null, |s| Value::Object((**s).clone())),
    );
    vec![sh, python, read, grep, list, stat, run]
}

/// A tool's failure the model can act on: an `isError` result with a
/// message and, where useful, structured detail.
fn tool_error(code: &str, message: impl Into<String>, detail: Value) -> CallToolResult {
    let message = message.into();
    let mut body = json!({"error": {"code": code, "message": message}});
    if let (Value::Object(b), Value::Object(d)) = (&mut body, detail) {
        b.extend(d);
    }
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))]);
    r.structured_content = Some(body);
    r
}

/// An [`AppError`] (a refusal before anything ran) as a tool result: busy
/// says when to retry.
fn refused(e: &AppError) -> CallToolResult {
    match e.code() {
        "busy" => tool_error(
            "busy",
            "every script slot of the server is taken; retry in 2 seconds",
            json!({"retry_after_seconds": 2}),
        ),
        "tenant_busy" => tool_error(
            "tenant_busy",
            "every script slot of this tenant is taken; retry in 2 seconds",
            json!({"retry_after_seconds": 2}),
        ),
        "draining" => tool_error("draining", e.message(), json!({"retry_after_seconds": 2})),
        code => tool_error(code, e.message(), json!({})),
    }
}

fn fs_error(e: &FsError) -> CallToolResult {
    let code = match e {
        FsError::NotFound(_) => "not_found",
        FsError::NotADirectory(_) => "not_a_directory",
        FsError::IsADirectory(_) => "is_a_directory",
        FsError::InvalidPath(_) => "invalid_path",
        FsError::Denied(_) => "denied",
        FsError::Unavailable(_) => "unavailable",
    };
    tool_error(code, e.to_string(), json!({}))
}

/// Arguments of a tool call, or a result saying what is wrong with them.
fn args(req: &CallToolRequestParams) -> Result<ToolArgs, CallToolResult> {
    crate::mcp_input::parse(&req.name, req.arguments.clone())
        .map_err(|e| tool_error("bad_arguments", e, json!({})))
}

/// Documents a result links at most (the rest are in its structured
/// content).
const MAX_LINKS: usize = 50;

/// A link to a document, for a tool result that names it.
fn link(path: &str, size: Option<u64>) -> ContentBlock {
    let mut r = Resource::new(
        format!("vfs://{path}"),
        path.rsplit('/').next().unwrap_or(path),
    );
    if let Some(size) = size {
        r = r.with_size(size);
    }
    ContentBlock::resource_link(r)
}

/// Runs `work` unless the call is cancelled first (dropping it: a run it
/// holds stops, and its slot is freed). While it runs, a call that carries
/// a progress token gets a progress notification every second (the seconds
/// it has run; a script's own progress is not known to the host).
async fn unless_cancelled<T>(
    ctx: &RequestContext<RoleServer>,
    work: impl Future<Output = T>,
) -> Result<T, McpError> {
    let token = ctx.meta.get_progress_token();
    let started = std::time::Instant::now();
    let mut work = std::pin::pin!(work);
    // The first tick a period from now: an interval's immediate first tick
    // would still wait for the timer's next millisecond.
    let mut tick =
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tokio::select! {
            out = &mut work => return Ok(out),
            () = ctx.ct.cancelled() => {
                return Err(McpError::internal_error("the call was cancelled", None));
            }
            _ = tick.tick(), if token.is_some() => {
                if let Some(token) = &token {
                    let secs = started.elapsed().as_secs_f64();
                    let note = ProgressNotificationParam::new(token.clone(), secs)
                        .with_message(format!("running for {secs:.0} s"));
                    // A client that went away is the cancellation's concern.
                    let _ = ctx.peer.notify_progress(note).await;
                }
            }
        }
    }
}

/// How often a long call reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

fn modified(t: Option<std::time::SystemTime>) -> Value {
    t.map_or(Value::Null, |t| Value::String(httpdate::fmt_http_date(t)))
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::File => "file",
        Kind::Directory => "directory",
    }
}

impl McpServer {
    fn cap(&self, asked: Option<u64>) -> usize {
        let server = self.limits().tool_result;
        usize::try_from(asked.map_or(server, |a| a.min(server))).unwrap_or(usize::MAX)
    }

    fn resolve(&self, path: &str) -> Result<VPath, CallToolResult> {
        resolve_path(&VPath::root(), path)
            .map_err(|e| tool_error("invalid_path", e.to_string(), json!({})))
    }

    /// Bounds a backend call by the server's deadline.
    async fn bounded<T>(
        &self,
        work: impl Future<Output = Result<T, FsError>>,
    ) -> Result<T, CallToolResult> {
        match tokio::time::timeout(self.limits().deadline, work).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(fs_error(&e)),
            Err(_) => Err(tool_error(
                "deadline",
                "the backend did not answer within the deadline",
                json!({"limit": "deadline"}),
            )),
        }
    }

    async fn sh(&self, tenant: &Tenant, request_id: String, a: ShArgs) -> CallToolResult {
        if let Err(e) = crate::sh::check(&a.script, self.limits().sh_script) {
            return tool_error("bad_script", e.to_string(), json!({}));
        }
        let input = RunInput::shell(a.script, a.cwd, a.limits);
        let (id, component) = (crate::sh::id(), crate::sh::component());
        self.built_in(tenant, request_id, input, id, component, a.max_result_bytes)
            .await
    }

    async fn python(&self, tenant: &Tenant, request_id: String, a: PythonArgs) -> CallToolResult {
        if let Err(e) = crate::python::check(&a.code) {
            return tool_error("code_too_long", e.to_string(), json!({}));
        }
        let input = RunInput::python(a.code, a.args, a.stdin, a.cwd, a.limits);
        let (id, component) = (crate::python::id(), crate::python::component());
        self.built_in(tenant, request_id, input, id, component, a.max_result_bytes)
            .await
    }

    /// Runs `input` on a built-in component (the shell, the interpreter).
    async fn built_in(
        &self,
        tenant: &Tenant,
        request_id: String,
        input: RunInput,
        id: &ScriptId,
        component: bytes::Bytes,
        max_result_bytes: Option<u64>,
    ) -> CallToolResult {
        let cap = self.cap(max_result_bytes);
        match self
            .state
            .run_for(tenant, request_id, input, Some(id.clone()), async {
                Ok(component)
            })
            .await
        {
            Ok(r) => run_result(RunReport::from(r), cap),
            Err(e) => refused(&e),
        }
    }

    async fn run(&self, tenant: &Tenant, request_id: String, a: RunArgs) -> CallToolResult {
        if !tenant.mcp_run {
            return tool_error(
                "tool_disabled",
                "the run tool is not enabled for this tenant (mcp_run in its config)",
                json!({}),
            );
        }
        let unknown = || {
            tool_error(
                "script_not_found",
                format!("no stored script {}", a.id),
                json!({}),
            )
        };
        let Some(id) = ScriptId::parse(&a.id) else {
            return unknown();
        };
        let cap = self.cap(a.max_result_bytes);
        let input = RunInput::stored(a.args, a.stdin, a.cwd, a.limits);
        // Fetched once the run has its slot, as over HTTP.
        let scripts = &self.state.inner.scripts;
        let script = async {
            scripts.fetch(&tenant.name, &id).await?.ok_or_else(|| {
                AppError::not_found("script_not_found", format!("no stored script {}", id))
            })
        };
        match self
            .state
            .run_for(tenant, request_id, input, Some(id.clone()), script)
            .await
        {
            Ok(r) => run_result(RunReport::from(r), cap),
            Err(e) if e.code() == "script_not_found" => unknown(),
            Err(e) => refused(&e),
        }
    }
}

/// A run's report as a tool result: the text is stdout, then stderr, then
/// how it ended, cut to `cap` in that order of importance; the structured
/// content is the report (the HTTP API's shape) with the same cut.
fn run_result(report: RunReport, cap: usize) -> CallToolResult {
    let (out, out_cut) = cut(&report.stdout, cap);
    let (err, err_cut) = cut(&report.stderr, cap - out.len());
    let result_truncated = out_cut || err_cut;
    let mut text = out.to_owned();
    if !err.is_empty() {
        text.push_str("\n[stderr]\n");
        text.push_str(err);
    }
    let ending = match (&report.exit_code, &report.error) {
        (Some(code), _) => format!("[exit {code}]"),
        (None, Some(e)) => format!("[stopped: {}]", e.message),
        (None, None) => "[stopped]".to_owned(),
    };
    text.push_str(&format!("\n{ending}"));
    if result_truncated {
        text.push_str(&format!(
                "\n[the output was cut at {cap} bytes: narrow the script (head, grep -m, a subdirectory)]"
            ));
    }
    let mut structured = serde_json::to_value(&report).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut structured {
        m.insert("stdout".into(), Value::String(out.to_owned()));
        m.insert("stderr".into(), Value::String(err.to_owned()));
        m.insert("result_truncated".into(), Value::Bool(result_truncated));
    }
    let mut r = if report.outcome == "exited" {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    r.structured_content = Some(structured);
    r
}

impl McpServer {
    async fn read(&self, tenant: &Tenant, caller: &Caller, a: ReadArgs) -> CallToolResult {
        let path = match self.resolve(&a.path) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let meta = match self.bounded(tenant.vfs.stat(&path)).await {
            Ok(m) => m,
            Err(r) => return r,
        };
        if meta.kind == Kind::Directory {
            return fs_error(&FsError::IsADirectory(path.to_string()));
        }
        let cap = self.cap(a.max_result_bytes);
        let allowed = self.limits().bytes_read;
        let range = match (a.byte_offset, a.byte_length) {
            (None, None) => 0..meta.size.min(allowed),
            (off, len) => {
                let start = off.unwrap_or(0).min(meta.size);
                let len = len.unwrap_or(cap as u64).min(allowed);
                start..start.saturating_add(len).min(meta.size)
            }
        };
        let bytes = match self
            .bounded(tenant.vfs.read_range(&path, range.clone()))
            .await
        {
            Ok(b) => b,
            Err(r) => return r,
        };
        if let Err(e) = self.audit_download(caller, &path, bytes.len()) {
            return tool_error("audit_failed", e, json!({}));
        }
        let size = meta.size;
        let sniff = &bytes[..bytes.len().min(8192)];
        if sniff.contains(&0) {
            let mut r = CallToolResult::success(vec![
                ContentBlock::text(format!(
                    "{path}: a binary document of {size} bytes (not shown as text)"
                )),
                link(path.as_str(), Some(size)),
            ]);
            r.structured_content = Some(json!({
                "path": path.as_str(), "size": size, "binary": true, "truncated": false,
            }));
            return r;
        }
        let text = String::from_utf8_lossy(&bytes);
        let whole_doc = range == (0..size);
        let (body, first, lines, total, mut truncated) =
            if a.byte_offset.is_some() || a.byte_length.is_some() {
                let partial = range.end < size || range.start > 0;
                (text.to_string(), None, None, None, partial)
            } else {
                let w = crate::mcp_input::lines(&text, a.offset, a.limit);
                let partial = w.partial || !whole_doc;
                (w.text, Some(w.first), Some(w.shown), Some(w.total), partial)
            };
        let (shown, cut_by_cap) = cut(&body, cap);
        truncated |= cut_by_cap;
        let mut text_out = shown.to_owned();
        if truncated {
            text_out.push_str(&format!(
                "\n[{path}: {size} bytes{}; this is part of it: ask for `offset`/`limit` lines or a byte range]",
                total.map_or(String::new(), |t| format!(", {t} lines")),
            ));
        }
        let mut r = CallToolResult::success(vec![
            ContentBlock::text(text_out),
            link(path.as_str(), Some(size)),
        ]);
        r.structured_content = Some(json!({
            "path": path.as_str(),
            "size": size,
            "binary": false,
            "total_lines": total,
            "first_line": first,
            "lines": lines,
            "text": shown,
            "truncated": truncated,
        }));
        r
    }

    async fn grep(
        &self,
        tenant: &Tenant,
        caller: &Caller,
        ct: &CancellationToken,
        a: GrepArgs,
    ) -> CallToolResult {
        let limits = match self.limits().lowered(&a.limits) {
            Ok(l) => l,
            Err(e) => return refused(&e.into()),
        };
        let roots: Vec<String> = if a.roots.is_empty() {
            vec!["/".to_owned()]
        } else {
            a.roots
        };
        let mut resolved = Vec::new();
        for r in &roots {
            match self.resolve(r) {
                Ok(p) => resolved.push(p),
                Err(r) => return r,
            }
        }
        let root_names: Vec<String> = resolved.iter().map(ToString::to_string).collect();
        let req = GrepRequest {
            patterns: a.patterns,
            fixed_strings: a.fixed_strings,
            ignore_case: a.ignore_case,
            whole_word: a.whole_word,
            before_context: a.context,
            after_context: a.context,
            ..GrepRequest::default()
        };
        let digest = pattern_digest(&req.patterns);
        let grep = match Grep::new(GrepRequest {
            include: a.include,
            exclude: a.exclude,
            ..req
        }) {
            Ok(g) => Arc::new(g),
            Err(e) => {
                // A search that did not run is recorded all the same, as a
                // script's is.
                let failed =
                    self.audit_grep(caller, &digest, &root_names, None, Some("bad_request"));
                return failed
                    .unwrap_or_else(|| tool_error("bad_pattern", e.to_string(), json!({})));
            }
        };
        // A search takes a slot, as a script does.
        let permit = match self.state.admit(tenant) {
            Ok(p) => p,
            Err(e) => return refused(&e),
        };
        let budget = ScanBudget {
            files: limits.scan_files,
            bytes: limits.scan_bytes,
        };
        let cancel = ct.child_token();
        let _stop = cancel.clone().drop_guard();
        let searched = tokio::time::timeout(
            limits.deadline,
            grep.run(&tenant.vfs, &resolved, budget, cancel),
        )
        .await;
        drop(permit);
        let out = match searched {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => {
                let failed =
                    self.audit_grep(caller, &digest, &root_names, None, Some("bad_request"));
                return failed
                    .unwrap_or_else(|| tool_error("bad_search", e.to_string(), json!({})));
            }
            Err(_) => {
                let failed = self.audit_grep(caller, &digest, &root_names, None, Some("deadline"));
                return failed.unwrap_or_else(|| {
                    tool_error(
                        "deadline",
                        "the search did not finish within the deadline",
                        json!({"limit": "deadline"}),
                    )
                });
            }
        };
        if let Some(failed) = self.audit_grep(caller, &digest, &root_names, Some(&out), None) {
            return failed;
        }
        let max = a.max_results.unwrap_or(200);
        let cap = self.cap(a.max_result_bytes);
        let mut matches = Vec::new();
        let mut text = String::new();
        let mut results_truncated = false;
        'files: for f in &out.files {
            let path = f.path.as_str();
            let entry: Vec<(Value, String)> = match a.mode {
                GrepMode::Files => vec![(json!({"path": path}), format!("{path}\n"))],
                GrepMode::Count => vec![(
                    json!({"path": path, "count": f.match_count}),
                    format!("{path}:{}\n", f.match_count),
                )],
                // A binary file's lines are counted, not returned.
                GrepMode::Lines if f.lines.is_empty() && f.match_count > 0 => vec![(
                    json!({"path": path, "binary": true, "count": f.match_count}),
                    format!("{path}: binary file matches\n"),
                )],
                GrepMode::Lines => f
                    .lines
                    .iter()
                    .map(|l| {
                        let sep = if l.is_match { ':' } else { '-' };
                        (
                            json!({"path": path, "line": l.line_number, "text": l.text, "is_match": l.is_match}),
                            format!("{path}{sep}{}{sep}{}\n", l.line_number, l.text),
                        )
                    })
                    .collect(),
            };
            for (v, t) in entry {
                if matches.len() >= max || text.len() + t.len() > cap {
                    results_truncated = true;
                    break 'files;
                }
                matches.push(v);
                text.push_str(&t);
            }
        }
        let partial = out.truncated.map(|(searched, not_reached)| {
            json!({"files_searched": searched, "files_not_reached": not_reached})
        });
        if let Some((searched, not_reached)) = out.truncated {
            text.push_str(&format!(
                "[partial: the scan budget stopped the search after {searched} files, {not_reached} not reached; narrow the roots or the include globs]\n"
            ));
        }
        if results_truncated {
            text.push_str(&format!(
                "[more results than shown ({} kept): narrow the patterns or roots, or use mode `files` or `count`]\n",
                matches.len()
            ));
        }
        if matches.is_empty() && partial.is_none() {
            text.push_str("[no matches]\n");
        }
        let errors: Vec<String> = out
            .errors
            .iter()
            .map(|(p, e)| format!("{p}: {e}"))
            .collect();
        let mut content = vec![ContentBlock::text(text)];
        let mut linked = std::collections::BTreeSet::new();
        for m in &matches {
            if let Some(p) = m["path"].as_str()
                && linked.len() < MAX_LINKS
                && linked.insert(p.to_owned())
            {
                content.push(link(p, None));
            }
        }
        let mut r = CallToolResult::success(content);
        r.structured_content = Some(json!({
            "matches": matches,
            "files_scanned": out.files_scanned,
            "bytes_scanned": out.bytes_scanned,
            "partial": partial,
            "results_truncated": results_truncated,
            "errors": errors,
        }));
        r
    }

    /// Records a search (`out`, or the `error` that stopped it); a record
    /// that cannot be written fails the call.
    fn audit_grep(
        &self,
        caller: &Caller,
        digest: &str,
        roots: &[String],
        out: Option<&crate::vfs::grep::GrepOutput>,
        error: Option<&str>,
    ) -> Option<CallToolResult> {
        // Cut: by the scan budget, or by the deadline.
        let truncated = match (out, error) {
            (Some(o), _) => o.truncated.is_some(),
            (None, Some("deadline")) => true,
            (None, _) => false,
        };
        let event = Event::Grep {
            script_id: NO_SCRIPT,
            pattern_sha256: digest.to_owned(),
            roots,
            files_scanned: out.map_or(0, |o| o.files_scanned),
            bytes_scanned: out.map_or(0, |o| o.bytes_scanned),
            truncated,
            error,
        };
        self.state
            .inner
            .runtime
            .audit()
            .record(caller, &event)
            .err()
            .map(|e| tool_error("audit_failed", e.to_string(), json!({})))
    }

    async fn list(&self, tenant: &Tenant, a: ListArgs) -> CallToolResult {
        let root = match self.resolve(a.path.as_deref().unwrap_or("/")) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let glob = match a.glob.as_deref().map(globset::Glob::new).transpose() {
            Ok(g) => g.map(|g| g.compile_matcher()),
            Err(e) => return tool_error("bad_glob", e.to_string(), json!({})),
        };
        let depth = a.depth.unwrap_or(1).clamp(1, 10);
        let page = a.limit.unwrap_or(1000).clamp(1, 10_000);
        let skip: usize = match a.cursor.as_deref().map(str::parse).transpose() {
            Ok(s) => s.unwrap_or(0),
            Err(_) => return tool_error("bad_cursor", "not a cursor this tool gave", json!({})),
        };
        let limit = usize::try_from(self.limits().list_entries).unwrap_or(usize::MAX);
        // Breadth first, each directory in name order; every entry is
        // counted for the cursor, whether or not the glob shows it.
        let mut queue = std::collections::VecDeque::from([(root, 1u32)]);
        let mut seen = 0usize;
        let mut entries = Vec::new();
        let mut text = String::new();
        let mut truncated = false;
        let mut next = None;
        let deadline = tokio::time::Instant::now() + self.limits().deadline;
        while let Some((dir, level)) = queue.pop_front() {
            let listing =
                match tokio::time::timeout_at(deadline, tenant.vfs.list(&dir, limit)).await {
                    Ok(Ok(l)) => l,
                    Ok(Err(e)) if level == 1 => return fs_error(&e),
                    Ok(Err(_)) => continue,
                    Err(_) => {
                        return tool_error(
                            "deadline",
                            "the listing did not finish within the deadline",
                            json!({"limit": "deadline"}),
                        );
                    }
                };
            truncated |= listing.truncated;
            // Backends list in their own order (a local directory's readdir
            // order); the tool sorts, so that pages and cursors are stable.
            let mut listed = listing.entries;
            listed.sort_by(|a, b| a.name.cmp(&b.name));
            for e in listed {
                let Ok(path) = resolve_path(&dir, &e.name) else {
                    continue;
                };
                if e.meta.kind == Kind::Directory && level < depth {
                    queue.push_back((path.clone(), level + 1));
                }
                if glob.as_ref().is_some_and(|g| !g.is_match(&e.name)) {
                    continue;
                }
                seen += 1;
                if seen <= skip {
                    continue;
                }
                if entries.len() == page {
                    next = Some((skip + page).to_string());
                    break;
                }
                let suffix = if e.meta.kind == Kind::Directory {
                    "/"
                } else {
                    ""
                };
                text.push_str(&format!("{path}{suffix}\n"));
                entries.push(json!({
                    "path": path.as_str(),
                    "kind": kind_name(e.meta.kind),
                    "size": e.meta.size,
                    "modified": modified(e.meta.modified),
                }));
            }
            if next.is_some() {
                break;
            }
        }
        if let Some(c) = &next {
            text.push_str(&format!("[more entries: call again with cursor \"{c}\"]\n"));
        }
        if truncated {
            text.push_str("[a directory held more entries than one listing returns]\n");
        }
        let mut content = vec![ContentBlock::text(text)];
        content.extend(
            entries
                .iter()
                .filter(|e| e["kind"] == "file")
                .take(MAX_LINKS)
                .filter_map(|e| Some(link(e["path"].as_str()?, e["size"].as_u64()))),
        );
        let mut r = CallToolResult::success(content);
        r.structured_content = Some(json!({
            "entries": entries,
            "next_cursor": next,
            "truncated": truncated,
        }));
        r
    }

    async fn stat(&self, tenant: &Tenant, a: StatArgs) -> CallToolResult {
        let path = match self.resolve(&a.path) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let meta = match self.bounded(tenant.vfs.stat(&path)).await {
            Ok(m) => m,
            Err(r) => return r,
        };
        let mode = format!("{:04o}", meta.mode_or_default());
        let size = meta.size;
        let mut r = CallToolResult::success(vec![
            ContentBlock::text(format!(
                "{path}: {}, {size} bytes, mode {mode}",
                kind_name(meta.kind)
            )),
            link(path.as_str(), Some(meta.size)),
        ]);
        r.structured_content = Some(json!({
            "path": path.as_str(),
            "kind": kind_name(meta.kind),
            "size": size,
            "modified": modified(meta.modified),
            "mode": mode,
        }));
        r
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("vfsbox", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "vfsbox: read-only company documents, mounted under paths such as /files. \
                 Use `grep` to find text, `list` and `stat` to look around, `read` for one \
                 document, and `sh` for anything a shell pipeline does (grep, find, awk, sed, \
                 jq, sort, wc...). Every call is sandboxed and budgeted; a spent budget says \
                 which limit and how to narrow the call.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tenant = self.tenant(&context)?;
        let offered = tools()
            .iter()
            .filter(|t| t.name != "run" || tenant.mcp_run)
            .cloned()
            .collect();
        Ok(ListToolsResult::with_all_items(offered))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tenant = self.tenant(&context)?;
        let caller = Caller {
            tenant: tenant.name.clone(),
            request_id: Self::request_id(&context),
        };
        let ct = context.ct.clone();
        if !tools().iter().any(|t| t.name == request.name) {
            return Err(McpError::invalid_params(
                format!("no tool named `{}`; see tools/list", request.name),
                None,
            ));
        }
        let id = caller.request_id.clone();
        let _running = self.state.inner.mcp_calls.start(
            &tenant.name,
            &context.id.to_string(),
            context.ct.clone(),
        );
        let result = match args(&request) {
            Err(r) => r,
            Ok(ToolArgs::Sh(a)) => unless_cancelled(&context, self.sh(&tenant, id, a)).await?,
            Ok(ToolArgs::Python(a)) => {
                unless_cancelled(&context, self.python(&tenant, id, a)).await?
            }
            Ok(ToolArgs::Run(a)) => unless_cancelled(&context, self.run(&tenant, id, a)).await?,
            Ok(ToolArgs::Read(a)) => {
                unless_cancelled(&context, self.read(&tenant, &caller, a)).await?
            }
            Ok(ToolArgs::Grep(a)) => {
                unless_cancelled(&context, self.grep(&tenant, &caller, &ct, a)).await?
            }
            Ok(ToolArgs::List(a)) => unless_cancelled(&context, self.list(&tenant, a)).await?,
            Ok(ToolArgs::Stat(a)) => unless_cancelled(&context, self.stat(&tenant, a)).await?,
        };
        self.state
            .inner
            .metrics
            .mcp_call(&request.name, result.is_error == Some(true));
        Ok(result.into())
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        // Over stdio rmcp cancels the call itself; over stateless HTTP the
        // notification comes in a request of its own, and finds its call
        // here, among the same tenant's.
        let tenant = self.tenant_of(&context.extensions);
        if let (Some(tenant), Some(id)) = (tenant, notification.request_id) {
            self.state
                .inner
                .mcp_calls
                .cancel(&tenant.name, &id.to_string());
        }
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let template = ResourceTemplate::new("vfs:///{+path}", "document")
            .with_description("A document of the mounted filesystem, by its absolute path");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let tenant = self.tenant(&context)?;
        let caller = Caller {
            tenant: tenant.name.clone(),
            request_id: Self::request_id(&context),
        };
        let Some(path) = request.uri.strip_prefix("vfs://") else {
            return Err(McpError::invalid_params(
                "a vfsbox resource is vfs:///PATH",
                None,
            ));
        };
        let path = resolve_path(&VPath::root(), path)
            .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
        let not_found = |e: FsError| McpError::resource_not_found(e.to_string(), None);
        let meta = tokio::time::timeout(self.limits().deadline, tenant.vfs.stat(&path))
            .await
            .map_err(|_| McpError::internal_error("the backend did not answer in time", None))?
            .map_err(not_found)?;
        if meta.kind == Kind::Directory {
            return Err(McpError::invalid_params(
                format!("{path} is a directory; list it with the `list` tool"),
                None,
            ));
        }
        if meta.size > self.limits().bytes_read {
            return Err(McpError::invalid_params(
                format!(
                    "{path} is {} bytes, more than one read may take ({}); use the `read` tool with a byte range",
                    meta.size,
                    self.limits().bytes_read
                ),
                None,
            ));
        }
        let bytes = tokio::time::timeout(
            self.limits().deadline,
            tenant.vfs.read_range(&path, 0..meta.size),
        )
        .await
        .map_err(|_| McpError::internal_error("the backend did not answer in time", None))?
        .map_err(not_found)?;
        self.audit_download(&caller, &path, bytes.len())
            .map_err(|e| McpError::internal_error(e, None))?;
        let contents = match std::str::from_utf8(&bytes) {
            Ok(text) if !text.contains('\0') => {
                ResourceContents::text(text, request.uri.clone()).with_mime_type("text/plain")
            }
            _ => ResourceContents::blob(base64(&bytes), request.uri.clone())
                .with_mime_type("application/octet-stream"),
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// Standard base64 with padding, for binary resources.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The `/mcp` service: streamable HTTP, stateless, JSON answers where no
/// notification comes first.
pub(crate) fn service(
    state: AppState,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    McpServer,
    rmcp::transport::streamable_http_server::session::never::NeverSessionManager,
> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    };
    let mcp = state.inner.mcp.clone();
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(Some(Duration::from_secs(15)));
    if !mcp.allowed_hosts.is_empty() {
        config = config.with_allowed_hosts(mcp.allowed_hosts.clone());
    }
    if !mcp.allowed_origins.is_empty() {
        config = config.with_allowed_origins(mcp.allowed_origins.clone());
    }
    StreamableHttpService::new(
        move || Ok(McpServer::over_http(state.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

/// What `/mcp` answers, for the OpenAPI document (the route itself is the
/// MCP SDK's service, not this function).
#[utoipa::path(
    post,
    path = "/mcp",
    tag = "mcp",
    request_body(content = Object, content_type = "application/json", description = "A JSON-RPC message of the Model Context Protocol (2025-06-18, 2025-11-25 or 2026-07-28): initialize, tools/list, tools/call (sh, read, grep, list, stat), resources/templates/list, resources/read (vfs:///PATH)..."),
    responses(
        (status = 200, description = "The JSON-RPC answer, as `application/json`, or as `text/event-stream` when notifications (progress) come first. Tool failures (busy, a spent limit, a missing document) are results with `isError`", content_type = "application/json"),
        (status = 400, description = "Not a valid MCP request"),
        (status = 401, description = "No key, or a wrong key (`WWW-Authenticate: Bearer`)", body = ErrorBody),
        (status = 403, description = "A `Host` or `Origin` outside the allow-lists (`mcp_allowed_hosts`, `mcp_allowed_origins`)"),
    ),
    security(("bearer" = []))
)]
#[allow(dead_code)]
pub(crate) async fn mcp_endpoint() {}

/// Authenticates an `/mcp` request as any API request is, and hands its
/// tenant to the handler; `401` with `WWW-Authenticate: Bearer` otherwise.
pub(crate) async fn authenticate(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = req.into_parts();
    match Authenticated::from_request_parts(&mut parts, &state).await {
        Ok(Authenticated(tenant)) => {
            parts.extensions.insert(tenant);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(e) => {
            let mut response = e.into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"vfsbox\""),
            );
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"\0\xff\x10binary"), "AP8QYmluYXJ5");
    }
}
