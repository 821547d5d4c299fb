//! The one report shape every run answers with, and its status.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::{ErrorDetail, budget_detail};
use crate::runtime::{Outcome, Report, Usage};

/// What a run produced, whatever its ending: `200` when the script exited
/// (any exit code), `422` when it trapped, `413` when a limit ended it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunReport {
    /// `exited`, `trapped` or `budget_exceeded`.
    #[schema(example = "exited")]
    pub outcome: &'static str,
    /// The exit code, when the script exited.
    pub exit_code: Option<i32>,
    /// Standard output (invalid UTF-8 replaced), up to the cap.
    pub stdout: String,
    /// Standard error (invalid UTF-8 replaced), up to the cap.
    pub stderr: String,
    /// Whether stdout was cut at its cap.
    pub stdout_truncated: bool,
    /// Whether stderr was cut at its cap.
    pub stderr_truncated: bool,
    /// The working directory (for `vfs-sh`, the one it ended in).
    pub cwd: String,
    /// Resources used.
    pub usage: Usage,
    /// Why the run did not exit: the trap, or the limit.
    pub error: Option<ErrorDetail>,
}

impl From<Report> for RunReport {
    fn from(r: Report) -> Self {
        let (outcome, exit_code, error) = match r.outcome {
            Outcome::Exited { exit_code } => ("exited", Some(exit_code), None),
            Outcome::Trapped { message } => {
                ("trapped", None, Some(ErrorDetail::new("trapped", message)))
            }
            Outcome::BudgetExceeded {
                limit,
                used,
                allowed,
            } => (
                "budget_exceeded",
                None,
                Some(budget_detail(limit, used, allowed)),
            ),
        };
        RunReport {
            outcome,
            exit_code,
            stdout: String::from_utf8_lossy(&r.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&r.stderr).into_owned(),
            stdout_truncated: r.stdout_truncated,
            stderr_truncated: r.stderr_truncated,
            cwd: r.cwd,
            usage: r.usage,
            error,
        }
    }
}

impl IntoResponse for RunReport {
    fn into_response(self) -> Response {
        let status = match self.outcome {
            "exited" => StatusCode::OK,
            "trapped" => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::PAYLOAD_TOO_LARGE,
        };
        (status, Json(self)).into_response()
    }
}

/// A `413` of a run request: a report when a limit ended the script, an
/// error when the upload itself was too large (`payload_too_large`).
/// Documentation only: the two are told apart by `error.code`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "a schema of the OpenAPI document, never built")]
pub(crate) enum RunReportOrError {
    /// A limit ended the script.
    Report(RunReport),
    /// The upload was larger than the limit.
    Error(super::error::ErrorBody),
}
