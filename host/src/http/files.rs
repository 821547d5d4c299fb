//! Documents outside scripts: `GET /v1/fs/{path}` streams a document, with
//! ranges and validators; `GET /v1/resolve` says what a path names. Both
//! resolve paths exactly as scripts do, within the tenant's filesystem.

use std::ops::Range;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::{AppError, ErrorBody};
use super::tenants::Authenticated;
use super::{AppState, request_id};
use crate::audit::Caller;
use crate::vfs::{Kind, Resolved, download as open_download, resolve_path};

/// What `GET /v1/resolve` answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResolvedPath {
    /// The absolute, normalised path.
    pub path: String,
    /// `file` or `directory`.
    #[schema(example = "file")]
    pub kind: &'static str,
    /// Size in bytes (0 for directories).
    pub size: u64,
    /// Last modification (RFC 3339), when known.
    pub modified: Option<String>,
}

/// Says what a path names.
#[utoipa::path(
    get,
    path = "/v1/resolve",
    tag = "files",
    params(("path" = String, Query, description = "A path, absolute or relative to `/`")),
    responses(
        (status = 200, description = "What the path names", body = ResolvedPath),
        (status = 400, description = "A malformed path", body = ErrorBody),
        (status = 401, description = "No key, or a wrong key", body = ErrorBody),
        (status = 404, description = "Nothing there", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn resolve(
    State(_state): State<AppState>,
    Authenticated(tenant): Authenticated,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let mut path = None;
    for (k, v) in super::query::pairs(query.as_deref())? {
        match k.as_str() {
            "path" => path = Some(v),
            other => {
                return Err(AppError::bad_request(
                    "bad_query",
                    format!("unknown query parameter `{other}`"),
                ));
            }
        }
    }
    let path =
        path.ok_or_else(|| AppError::bad_request("bad_query", "give the path as `?path=`"))?;
    let r = resolve_path(&tenant.vfs, path.as_bytes()).await?;
    let body = ResolvedPath {
        path: r.path.to_string(),
        kind: match r.meta.kind {
            Kind::File => "file",
            Kind::Directory => "directory",
        },
        size: r.meta.size,
        modified: r
            .meta
            .modified
            .map(|t| humantime::format_rfc3339_millis(t).to_string()),
    };
    Ok(axum::Json(body).into_response())
}

/// Parses a single `bytes=` range against a document of `size` bytes.
/// `None`: no usable range header (serve it whole). `Err`: unsatisfiable.
fn parse_range(header: Option<&HeaderValue>, size: u64) -> Result<Option<Range<u64>>, ()> {
    let Some(spec) = header
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().strip_prefix("bytes="))
    else {
        return Ok(None);
    };
    if spec.contains(',') {
        // Several ranges: serve the whole document instead.
        return Ok(None);
    }
    let Some((start, end)) = spec.split_once('-') else {
        return Ok(None);
    };
    let (start, end) = (start.trim(), end.trim());
    let range = match (start.parse::<u64>(), end.parse::<u64>()) {
        (Ok(s), Ok(e)) if s <= e => s..e.saturating_add(1).min(size),
        (Ok(s), Err(_)) if end.is_empty() => s..size,
        (Err(_), Ok(n)) if start.is_empty() => size.saturating_sub(n)..size,
        _ => return Ok(None),
    };
    if range.start >= size || range.is_empty() {
        return Err(());
    }
    Ok(Some(range))
}

fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt" | "log") => "text/plain; charset=utf-8",
        Some("md") => "text/markdown; charset=utf-8",
        Some("csv") => "text/csv; charset=utf-8",
        Some("json") => "application/json",
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        _ => "application/octet-stream",
    }
}

fn validators(doc: &Resolved, headers: &mut HeaderMap) {
    if let Ok(etag) = HeaderValue::from_str(&doc.etag()) {
        headers.insert(header::ETAG, etag);
    }
    if let Some(Ok(v)) = doc
        .modified()
        .map(|t| HeaderValue::from_str(&httpdate::fmt_http_date(t)))
    {
        headers.insert(header::LAST_MODIFIED, v);
    }
}

/// Downloads a document, streamed.
#[utoipa::path(
    get,
    path = "/v1/fs/{path}",
    tag = "files",
    params(
        ("path" = String, Path, description = "The document's path, such as `files/handbook/security.md`"),
        ("Range" = Option<String>, Header, description = "One byte range, such as `bytes=0-1023`"),
        ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier download"),
    ),
    responses(
        (status = 200, description = "The whole document", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 206, description = "The requested range", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 304, description = "Not modified since the ETag given"),
        (status = 400, description = "A malformed path, or a directory", body = ErrorBody),
        (status = 401, description = "No key, or a wrong key", body = ErrorBody),
        (status = 404, description = "No such document", body = ErrorBody),
        (status = 416, description = "The range is outside the document", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn download(
    State(state): State<AppState>,
    Authenticated(tenant): Authenticated,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let raw = uri.path().strip_prefix("/v1/fs").unwrap_or_default();
    let raw: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
    let doc = resolve_path(&tenant.vfs, &raw).await?;
    if doc.meta.kind == Kind::Directory {
        return Err(AppError::bad_request(
            "wrong_kind",
            format!("{} is a directory", doc.path),
        ));
    }
    let mut out = HeaderMap::new();
    validators(&doc, &mut out);
    let etag = doc.etag();
    let cached = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    if cached {
        return Ok((StatusCode::NOT_MODIFIED, out).into_response());
    }
    let size = doc.meta.size;
    let (status, range) = match parse_range(headers.get(header::RANGE), size) {
        Ok(Some(range)) => (StatusCode::PARTIAL_CONTENT, range),
        Ok(None) => (StatusCode::OK, 0..size),
        Err(()) => {
            let mut e = AppError::new(
                StatusCode::RANGE_NOT_SATISFIABLE,
                "range_not_satisfiable",
                format!("the document has {size} bytes"),
            )
            .into_response();
            if let Ok(v) = HeaderValue::from_str(&format!("bytes */{size}")) {
                e.headers_mut().insert(header::CONTENT_RANGE, v);
            }
            return Ok(e);
        }
    };
    let caller = Caller {
        tenant: tenant.name.clone(),
        request_id: request_id(&headers),
    };
    let body = open_download(
        &tenant.vfs,
        &state.inner.runtime.audit().clone(),
        &caller,
        &doc,
        range.clone(),
    )
    .await?;
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(doc.path.as_str())),
    );
    out.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    out.insert(
        header::CONTENT_LENGTH,
        HeaderValue::from(range.end - range.start),
    );
    let content_range = format!(
        "bytes {}-{}/{size}",
        range.start,
        range.end.saturating_sub(1)
    );
    if let (StatusCode::PARTIAL_CONTENT, Ok(v)) = (status, HeaderValue::from_str(&content_range)) {
        out.insert(header::CONTENT_RANGE, v);
    }
    Ok((status, out, Body::from_stream(body)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(v: &str, size: u64) -> Result<Option<Range<u64>>, ()> {
        parse_range(Some(&HeaderValue::from_str(v).expect("header")), size)
    }

    #[test]
    fn parses_single_byte_ranges() {
        assert_eq!(range("bytes=0-9", 100), Ok(Some(0..10)));
        assert_eq!(range("bytes=90-200", 100), Ok(Some(90..100)));
        assert_eq!(range("bytes=50-", 100), Ok(Some(50..100)));
        assert_eq!(range("bytes=-10", 100), Ok(Some(90..100)));
        assert_eq!(range("bytes=-500", 100), Ok(Some(0..100)));
        assert_eq!(range("bytes=100-", 100), Err(()));
        assert_eq!(range("bytes=0-1,5-6", 100), Ok(None));
        assert_eq!(range("items=0-1", 100), Ok(None));
        assert_eq!(range("bytes=9-2", 100), Ok(None));
        assert_eq!(parse_range(None, 100), Ok(None));
        assert_eq!(range("bytes=0-0", 0), Err(()));
    }
}
