//! `vfsbox:script/search`: grep on the host, under the run's scan budget,
//! audited.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::bindings::vfsbox::script::search::{self as wit, GrepOptions, GrepResult};
use super::{HostError, ScriptHost, wit_error};
use crate::audit::{Event, pattern_digest};
use crate::vfs::FsError;
use crate::vfs::grep::{Grep, GrepOutput, GrepRequest, ScanBudget};

/// Sets the flag when dropped, so a search abandoned at the deadline stops
/// its blocking work too.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn request(o: GrepOptions) -> GrepRequest {
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

impl wit::Host for ScriptHost {
    async fn grep(
        &mut self,
        roots: Vec<String>,
        options: GrepOptions,
    ) -> Result<GrepResult, HostError> {
        let roots = roots
            .iter()
            .map(|r| self.resolve(r))
            .collect::<Result<Vec<_>, _>>()?;
        let req = request(options);
        let digest = pattern_digest(&req.patterns);
        let grep = Arc::new(Grep::new(req).map_err(|e| FsError::Unavailable(e.to_string()))?);
        let budget = ScanBudget {
            files: self.budget.scan_files_left(),
            bytes: self.budget.scan_bytes_left(),
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let _guard = CancelOnDrop(cancel.clone());
        let out = self
            .before_deadline(grep.run(&self.vfs, &roots, budget, cancel))
            .await?
            .map_err(|e| FsError::Unavailable(e.to_string()))?;
        self.budget.files_scanned += out.files_scanned;
        self.budget.bytes_scanned += out.bytes_scanned;
        let root_names: Vec<String> = roots.iter().map(ToString::to_string).collect();
        self.audit.record(
            &self.caller,
            &Event::Grep {
                script_id: &self.script_id,
                pattern_sha256: digest,
                roots: &root_names,
                files_scanned: out.files_scanned,
                bytes_scanned: out.bytes_scanned,
                truncated: out.truncated.is_some(),
            },
        )?;
        Ok(result(out))
    }
}
