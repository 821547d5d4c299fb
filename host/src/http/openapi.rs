//! The OpenAPI document, generated from the handlers' annotations.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::{error, files, mcp, ops, py, report, runs, sh};

/// The whole API.
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "vfsbox",
        description = "Runs untrusted scripts for AI agents over a read-only virtual filesystem of documents, each in its own WebAssembly sandbox."
    ),
    paths(
        runs::run_upload,
        runs::put_script,
        runs::run_stored,
        sh::run_sh,
        py::run_py,
        mcp::mcp_endpoint,
        files::download,
        files::resolve,
        ops::healthz,
        ops::readyz,
        ops::metrics,
        ops::openapi,
    ),
    components(schemas(
        report::RunReport,
        report::RunReportOrError,
        error::ErrorBody,
        error::ErrorDetail,
        runs::StoredScript,
        runs::ScriptRunRequest,
        sh::ShRequest,
        py::PyRequest,
        files::ResolvedPath,
        ops::Health,
        ops::Readiness,
        crate::runtime::Usage,
        crate::limits::LimitsRequest,
    )),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}
