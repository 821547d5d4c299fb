//! `vfsbox:script/search`: grep on the host, under the run's scan budget,
//! audited.

use std::sync::Arc;

use tokio_util::sync::{CancellationToken, DropGuard};

use super::bindings::vfsbox::script::search::{self as wit, GrepOptions, GrepResult};
use super::{HostError, ScriptHost, wit_error};
use crate::audit::{Event, pattern_digest};
use crate::vfs::FsError;
use crate::vfs::grep::{Grep, GrepError, GrepOutput, GrepRequest, ScanBudget};

fn request(o: GrepOptions, count_only: bool) -> GrepRequest {
    GrepRequest {
        patterns: o.patterns,
        fixed_strings: o.fixed_strings,
        ignore_case: o.ignore_case,
        smart_case: o.smart_case,
        whole_word: o.whole_word,
        invert: o.invert,
        before_context: o.before_context,
        after_context: o.after_context,
        max_count: o.max_count,
        include: o.include_globs,
        exclude: o.exclude_globs,
        include_non_matching: o.include_non_matching,
        count_only,
    }
}

fn result(out: GrepOutput) -> GrepResult {
    GrepResult {
        files: out
            .files
            .into_iter()
            .map(|f| wit::FileMatches {
                path: f.path.to_string(),
                match_count: f.match_count,
                lines: f
                    .lines
                    .into_iter()
                    .map(|l| wit::GrepLine {
                        kind: if l.is_match {
                            wit::LineKind::Match
                        } else {
                            wit::LineKind::Context
                        },
                        line_number: l.line_number,
                        text: l.text,
                        matches: l.matches,
                    })
                    .collect(),
            })
            .collect(),
        files_scanned: out.files_scanned,
        bytes_scanned: out.bytes_scanned,
        errors: out
            .errors
            .into_iter()
            .map(|(root, e)| wit::RootError {
                root,
                error: wit_error(e),
            })
            .collect(),
        truncated: out
            .truncated
            .map(|(files_searched, files_not_reached)| wit::Truncation {
                files_searched,
                files_not_reached,
            }),
    }
}

impl ScriptHost {
    /// Records one search, whatever its end: `Ok` with what it scanned, or
    /// `Err` with why it did not run (`truncated: false`) or did not finish
    /// (`truncated: true`).
    fn audit_grep(
        &self,
        digest: String,
        roots: &[String],
        ended: Result<&GrepOutput, (&str, bool)>,
    ) -> Result<(), HostError> {
        let (files_scanned, bytes_scanned, truncated, error) = match ended {
            Ok(o) => (
                o.files_scanned,
                o.bytes_scanned,
                o.truncated.is_some(),
                None,
            ),
            Err((why, cut)) => (0, 0, cut, Some(why)),
        };
        self.audit.record(
            &self.caller,
            &Event::Grep {
                script_id: &self.script_id,
                pattern_sha256: digest,
                roots,
                files_scanned,
                bytes_scanned,
                truncated,
                error,
            },
        )?;
        Ok(())
    }

    /// `grep` and `count`: one search on the host, charged to the run's
    /// scan budget, cancelled at its deadline and audited whatever its end.
    async fn search(
        &mut self,
        roots: Vec<String>,
        req: GrepRequest,
    ) -> Result<GrepResult, HostError> {
        let roots = roots
            .iter()
            .map(|r| self.resolve(r))
            .collect::<Result<Vec<_>, _>>()?;
        let root_names: Vec<String> = roots.iter().map(ToString::to_string).collect();
        let digest = pattern_digest(&req.patterns);
        let grep = match Grep::new(req) {
            Ok(grep) => Arc::new(grep),
            Err(e) => {
                self.audit_grep(digest, &root_names, Err(BAD_REQUEST))?;
                return Err(FsError::Unavailable(e.to_string()).into());
            }
        };
        let budget = ScanBudget {
            files: self.budget.scan_files_left(),
            bytes: self.budget.scan_bytes_left(),
        };
        // Cancelled when dropped: a search abandoned at the deadline stops
        // its blocking work too, even while that waits on a backend.
        let cancel = CancellationToken::new();
        let _guard: DropGuard = cancel.clone().drop_guard();
        let searched = self
            .before_deadline(grep.run(&self.vfs, &roots, budget, cancel))
            .await;
        let out = match searched {
            Ok(Ok(out)) => out,
            Ok(Err(e @ GrepError::Failed(_))) => {
                self.audit_grep(digest, &root_names, Err(("failed", true)))?;
                return Err(HostError::Trap(wasmtime::Error::new(e)));
            }
            Ok(Err(e)) => {
                self.audit_grep(digest, &root_names, Err(BAD_REQUEST))?;
                return Err(FsError::Unavailable(e.to_string()).into());
            }
            Err(deadline) => {
                self.audit_grep(digest, &root_names, Err(("deadline", true)))?;
                return Err(deadline);
            }
        };
        self.budget.files_scanned += out.files_scanned;
        self.budget.bytes_scanned += out.bytes_scanned;
        self.audit_grep(digest, &root_names, Ok(&out))?;
        Ok(result(out))
    }
}

/// Why a search did not run, in its audit record.
const BAD_REQUEST: (&str, bool) = ("bad request", false);

impl wit::Host for ScriptHost {
    async fn grep(
        &mut self,
        roots: Vec<String>,
        options: GrepOptions,
    ) -> Result<GrepResult, HostError> {
        self.search(roots, request(options, false)).await
    }

    async fn count(
        &mut self,
        roots: Vec<String>,
        options: GrepOptions,
    ) -> Result<GrepResult, HostError> {
        self.search(roots, request(options, true)).await
    }
}
