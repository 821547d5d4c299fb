//! One error type for every HTTP failure, and one JSON shape for all of
//! them: `{"error": {"code", "message", "limit"?, "used"?, "allowed"?}}`.
//! Internal details are logged, never sent.

use axum::Json;
use axum::extract::FromRequest;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::audit::AuditError;
use crate::limits::{Limit, LimitTooHigh};
use crate::runtime::{Busy, InvalidScript, RunError};
use crate::vfs::{DownloadError, FsError};

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// What went wrong, for callers to act on: `code` is stable, `message` is
/// for people.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable code such as `busy`, `budget_exceeded`, `invalid_script`.
    pub code: &'static str,
    /// A human-readable explanation.
    pub message: String,
    /// The limit concerned, when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub limit: Option<String>,
    /// How much was used or asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<u64>,
    /// How much is allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<u64>,
}

impl ErrorDetail {
    pub(crate) fn new(code: &'static str, message: impl Into<String>) -> ErrorDetail {
        ErrorDetail {
            code,
            message: message.into(),
            limit: None,
            used: None,
            allowed: None,
        }
    }

    pub(crate) fn limit(
        code: &'static str,
        message: String,
        limit: impl ToString,
        used: u64,
        allowed: u64,
    ) -> ErrorDetail {
        ErrorDetail {
            code,
            message,
            limit: Some(limit.to_string()),
            used: Some(used),
            allowed: Some(allowed),
        }
    }
}

/// A request that failed before (or instead of) producing a run report.
#[derive(Debug)]
pub struct AppError {
    status: StatusCode,
    detail: ErrorDetail,
    retry_after: bool,
}

impl AppError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> AppError {
        AppError {
            status,
            detail: ErrorDetail::new(code, message),
            retry_after: false,
        }
    }

    /// `400`: bad input.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> AppError {
        AppError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// `401`: no key, or a key no tenant has.
    pub fn unauthorized() -> AppError {
        AppError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send a tenant key as `Authorization: Bearer <key>`",
        )
    }

    /// `404`.
    pub fn not_found(code: &'static str, message: impl Into<String>) -> AppError {
        AppError::new(StatusCode::NOT_FOUND, code, message)
    }

    /// `413`: the upload is larger than the limit.
    pub fn payload_too_large(allowed: u64) -> AppError {
        AppError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            detail: ErrorDetail::limit(
                "payload_too_large",
                format!("the body is larger than {allowed} bytes"),
                "upload",
                allowed.saturating_add(1),
                allowed,
            ),
            retry_after: false,
        }
    }

    /// `408`: the upload did not arrive within the time allowed.
    pub fn upload_timeout(allowed: std::time::Duration) -> AppError {
        AppError::new(
            StatusCode::REQUEST_TIMEOUT,
            "upload_timeout",
            format!(
                "the upload did not arrive within {}",
                humantime::format_duration(allowed)
            ),
        )
    }

    /// `503` with `Retry-After`: the server is draining (it was told to stop)
    /// and takes no new runs; another host, or this one's successor, will.
    pub fn draining() -> AppError {
        AppError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            detail: ErrorDetail::new(
                "draining",
                "the server is shutting down and takes no new runs; retry on another host",
            ),
            retry_after: true,
        }
    }

    /// `500`: a server bug or failure; `internal` is logged, not sent.
    pub fn internal(internal: impl std::fmt::Display) -> AppError {
        tracing::error!(error = %internal, "internal error");
        AppError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server failed; see its logs",
        )
    }

    /// The status this error answers with.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        self.detail.code
    }

    /// The human-readable explanation.
    pub fn message(&self) -> &str {
        &self.detail.message
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(ErrorBody { error: self.detail })).into_response();
        if self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
        }
        response
    }
}

impl From<Busy> for AppError {
    fn from(busy: Busy) -> Self {
        let code = match busy {
            Busy::Process => "busy",
            Busy::Tenant => "tenant_busy",
        };
        AppError {
            status: StatusCode::TOO_MANY_REQUESTS,
            detail: ErrorDetail::new(code, busy.to_string()),
            retry_after: true,
        }
    }
}

impl From<LimitTooHigh> for AppError {
    fn from(e: LimitTooHigh) -> Self {
        AppError {
            status: StatusCode::BAD_REQUEST,
            detail: ErrorDetail::limit(
                "limit_too_high",
                e.to_string(),
                e.name,
                e.requested,
                e.allowed,
            ),
            retry_after: false,
        }
    }
}

impl From<InvalidScript> for AppError {
    fn from(e: InvalidScript) -> Self {
        let code = match e {
            InvalidScript::ForbiddenImport(_) => "forbidden_import",
            _ => "invalid_script",
        };
        AppError::bad_request(code, e.to_string())
    }
}

impl From<FsError> for AppError {
    fn from(e: FsError) -> Self {
        match e {
            FsError::NotFound(_) => AppError::not_found("not_found", e.to_string()),
            FsError::InvalidPath(_) => AppError::bad_request("invalid_path", e.to_string()),
            FsError::IsADirectory(_) | FsError::NotADirectory(_) => {
                AppError::bad_request("wrong_kind", e.to_string())
            }
            FsError::Denied(_) => AppError::new(StatusCode::FORBIDDEN, "denied", e.to_string()),
            FsError::Unavailable(_) => {
                AppError::new(StatusCode::BAD_GATEWAY, "unavailable", e.to_string())
            }
        }
    }
}

impl From<AuditError> for AppError {
    fn from(e: AuditError) -> Self {
        AppError::internal(e)
    }
}

impl From<DownloadError> for AppError {
    fn from(e: DownloadError) -> Self {
        match e {
            DownloadError::Fs(e) => e.into(),
            DownloadError::Audit(e) => e.into(),
        }
    }
}

impl From<RunError> for AppError {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Invalid(e) => e.into(),
            // A backend that fails or stalls is not the caller's mistake.
            RunError::BadCwd(e @ FsError::Unavailable(_)) => e.into(),
            RunError::BadCwd(e) => {
                AppError::bad_request("bad_cwd", format!("bad working directory: {e}"))
            }
            RunError::ArgsTooLong => AppError::bad_request("bad_args", e.to_string()),
            RunError::Audit(e) => e.into(),
            RunError::Internal(e) => AppError::internal(e),
        }
    }
}

/// The detail of a spent limit, as a run report carries it.
pub(crate) fn budget_detail(limit: Limit, used: u64, allowed: u64) -> ErrorDetail {
    ErrorDetail::limit(
        "budget_exceeded",
        crate::runtime::describe(limit, used, allowed),
        limit,
        used,
        allowed,
    )
}

/// `Json<T>` whose rejections (bad JSON, wrong content type) have the same
/// error shape as everything else.
#[derive(Debug, FromRequest)]
#[from_request(via(axum::Json), rejection(AppError))]
pub(crate) struct ApiJson<T>(pub(crate) T);

impl From<JsonRejection> for AppError {
    fn from(rejection: JsonRejection) -> Self {
        // axum answers JSON of the wrong shape with 422; here 422 means a
        // script trapped, so every bad body is a 400.
        let (status, code) = match rejection.status() {
            StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
            }
            StatusCode::PAYLOAD_TOO_LARGE => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            _ => (StatusCode::BAD_REQUEST, "bad_json"),
        };
        AppError::new(status, code, rejection.body_text())
    }
}
