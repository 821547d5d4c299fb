//! Searching documents on the host, with ripgrep's engine.
//!
//! A search runs on the host, so it is much faster than reading every
//! document into the script, and it does not count against the
//! document-read cap. It has a scan budget of its own (files and bytes per
//! script); when that is spent the search returns what it found so far and
//! says how far it got, rather than failing.
//!
//! ```no_run
//! use vfsbox_guest::search::Grep;
//!
//! let found = Grep::new("refund policy").ignore_case(true).root("/files").run()?;
//! for file in &found.files {
//!     for line in &file.lines {
//!         println!("{}:{}:{}", file.path, line.line_number, line.text);
//!     }
//! }
//! if let Some(cut) = found.truncated {
//!     eprintln!("partial: {} files not reached", cut.files_not_reached);
//! }
//! # Ok::<(), vfsbox_guest::Error>(())
//! ```

use crate::wit::vfsbox::script::search as wit;
use crate::{Error, Result};

/// A search to run: patterns, roots and flags. Build it, then [`Grep::run`].
///
/// ```no_run
/// use vfsbox_guest::search::Grep;
///
/// let result = Grep::new(r"fn \w+")
///     .root("/files/src")
///     .include("*.rs")
///     .context(1)
///     .max_count(3)
///     .run()?;
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Grep {
    roots: Vec<String>,
    options: Options,
}

#[derive(Debug, Clone, Default)]
struct Options {
    patterns: Vec<String>,
    fixed_strings: bool,
    ignore_case: bool,
    smart_case: bool,
    whole_word: bool,
    invert: bool,
    before_context: u32,
    after_context: u32,
    max_count: Option<u64>,
    include: Vec<String>,
    exclude: Vec<String>,
    include_non_matching: bool,
}

impl Grep {
    /// A search for one pattern (a regular expression unless
    /// [`Grep::fixed_strings`] is set).
    ///
    /// ```no_run
    /// let result = vfsbox_guest::search::Grep::new("TODO").root(".").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn new(pattern: impl Into<String>) -> Self {
        Grep::default().pattern(pattern)
    }

    /// Adds another pattern; a line matches when any pattern matches.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("TODO").pattern("FIXME").root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn pattern(mut self, pattern: impl Into<String>) -> Self {
        self.options.patterns.push(pattern.into());
        self
    }

    /// Adds a file or directory to search (directories recursively). With no
    /// root the working directory is searched.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("error").root("/files/logs").root("/files/notes.txt").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn root(mut self, root: impl Into<String>) -> Self {
        self.roots.push(root.into());
        self
    }

    /// Treats the patterns as literal text.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("a.b(c)").fixed_strings(true).root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn fixed_strings(mut self, yes: bool) -> Self {
        self.options.fixed_strings = yes;
        self
    }

    /// Matches regardless of case.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("invoice").ignore_case(true).root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn ignore_case(mut self, yes: bool) -> Self {
        self.options.ignore_case = yes;
        self
    }

    /// Ignores case unless a pattern contains an upper-case letter.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("invoice").smart_case(true).root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn smart_case(mut self, yes: bool) -> Self {
        self.options.smart_case = yes;
        self
    }

    /// Matches whole words only.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("cat").whole_word(true).root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn whole_word(mut self, yes: bool) -> Self {
        self.options.whole_word = yes;
        self
    }

    /// Reports the lines that do not match.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("^#").invert(true).root("/files/config").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn invert(mut self, yes: bool) -> Self {
        self.options.invert = yes;
        self
    }

    /// Lines of context before each match.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("panic").before_context(2).root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn before_context(mut self, lines: u32) -> Self {
        self.options.before_context = lines;
        self
    }

    /// Lines of context after each match.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("panic").after_context(2).root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn after_context(mut self, lines: u32) -> Self {
        self.options.after_context = lines;
        self
    }

    /// Lines of context before and after each match.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("panic").context(3).root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn context(self, lines: u32) -> Self {
        self.before_context(lines).after_context(lines)
    }

    /// Stops reading a file after this many matching lines.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let first_hits = Grep::new("error").max_count(1).root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn max_count(mut self, lines: u64) -> Self {
        self.options.max_count = Some(lines);
        self
    }

    /// Searches only files whose name matches the glob (may be repeated).
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("TODO").include("*.md").include("*.txt").root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn include(mut self, glob: impl Into<String>) -> Self {
        self.options.include.push(glob.into());
        self
    }

    /// Skips files whose name matches the glob (may be repeated), like GNU
    /// grep's `--exclude`; directories are still searched.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("TODO").exclude("*.log").root("/files").run()?;
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn exclude(mut self, glob: impl Into<String>) -> Self {
        self.options.exclude.push(glob.into());
        self
    }

    /// Also lists the files searched that have no matching line, with a
    /// count of zero (what `grep -c` and `grep -L` need).
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let result = Grep::new("TODO").include_non_matching(true).root("/files").run()?;
    /// let clean = result.files.iter().filter(|f| f.match_count == 0).count();
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn include_non_matching(mut self, yes: bool) -> Self {
        self.options.include_non_matching = yes;
        self
    }

    /// Runs the search on the host.
    ///
    /// Fails only for a problem with the search itself (a pattern that does
    /// not compile, too many roots); a root that does not exist is reported
    /// in [`GrepResult::errors`] and the other roots are still searched.
    ///
    /// ```no_run
    /// use vfsbox_guest::{search::Grep, Error};
    ///
    /// match Grep::new("(unclosed").root("/files").run() {
    ///     Err(Error::Unavailable(why)) => eprintln!("bad pattern: {why}"),
    ///     other => { other?; }
    /// }
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn run(&self) -> Result<GrepResult> {
        let (roots, options) = self.wit_request();
        Ok(wit::grep(&roots, &options)?.into())
    }

    /// Runs the search on the host and returns only how many lines match
    /// in each file: every [`FileMatches::lines`] is empty. The result's
    /// size depends on the number of files, not of matches, so counting a
    /// pattern that matches most lines of a large document fits in a
    /// script's memory where [`Grep::run`] would hold every line. It uses
    /// the same scan budget and fails for the same reasons as `run`.
    ///
    /// ```no_run
    /// use vfsbox_guest::search::Grep;
    ///
    /// let counted = Grep::new("ERROR").root("/files/logs").count()?;
    /// let total: u64 = counted.files.iter().map(|f| f.match_count).sum();
    /// println!("{total} lines with ERROR");
    /// # Ok::<(), vfsbox_guest::Error>(())
    /// ```
    pub fn count(&self) -> Result<GrepResult> {
        let (roots, options) = self.wit_request();
        Ok(wit::count(&roots, &options)?.into())
    }

    /// The roots (`.` when none was given) and options as the host takes
    /// them.
    fn wit_request(&self) -> (Vec<String>, wit::GrepOptions) {
        let roots = if self.roots.is_empty() {
            vec![".".to_owned()]
        } else {
            self.roots.clone()
        };
        let o = &self.options;
        let options = wit::GrepOptions {
            patterns: o.patterns.clone(),
            fixed_strings: o.fixed_strings,
            ignore_case: o.ignore_case,
            smart_case: o.smart_case,
            whole_word: o.whole_word,
            invert: o.invert,
            before_context: o.before_context,
            after_context: o.after_context,
            max_count: o.max_count,
            include_globs: o.include.clone(),
            exclude_globs: o.exclude.clone(),
            include_non_matching: o.include_non_matching,
        };
        (roots, options)
    }
}

/// The outcome of [`Grep::run`].
///
/// ```no_run
/// let result = vfsbox_guest::search::Grep::new("TODO").root("/files").run()?;
/// println!("{} files, {} bytes scanned", result.files_scanned, result.bytes_scanned);
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GrepResult {
    /// Files with matches (and, with [`Grep::include_non_matching`], files
    /// without), in walk order (depth first, each directory in its listing
    /// order).
    pub files: Vec<FileMatches>,
    /// Files searched by this call.
    pub files_scanned: u64,
    /// Bytes searched by this call.
    pub bytes_scanned: u64,
    /// Roots that could not be searched, with the reason.
    pub errors: Vec<(String, Error)>,
    /// Set when the scan budget ran out: the result is partial.
    pub truncated: Option<Truncation>,
}

/// The lines found in one file.
///
/// ```no_run
/// let result = vfsbox_guest::search::Grep::new("TODO").root("/files").run()?;
/// for file in &result.files {
///     println!("{}: {}", file.path, file.match_count);
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileMatches {
    /// The file's absolute path.
    pub path: String,
    /// Matching lines in the file (up to the max count).
    pub match_count: u64,
    /// Matching and context lines, in order; none for a binary file, and
    /// none from [`Grep::count`].
    pub lines: Vec<Line>,
}

/// One reported line.
///
/// ```no_run
/// let result = vfsbox_guest::search::Grep::new("TODO").context(1).root("/files").run()?;
/// for line in result.files.iter().flat_map(|f| &f.lines) {
///     let sep = if line.is_match { ':' } else { '-' };
///     println!("{}{sep}{}", line.line_number, line.text);
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Line {
    /// A matching line (`true`) or context around one (`false`).
    pub is_match: bool,
    /// 1-based line number.
    pub line_number: u64,
    /// The line without its terminator (invalid UTF-8 replaced).
    pub text: String,
    /// Byte ranges of each match within `text`.
    pub matches: Vec<std::ops::Range<usize>>,
}

/// How far a search got before its scan budget ran out.
///
/// ```no_run
/// let result = vfsbox_guest::search::Grep::new("x").root("/").run()?;
/// if let Some(cut) = result.truncated {
///     eprintln!(
///         "stopped after {} of {} files",
///         cut.files_searched,
///         cut.files_searched + cut.files_not_reached
///     );
/// }
/// # Ok::<(), vfsbox_guest::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Truncation {
    /// Files searched by this call.
    pub files_searched: u64,
    /// Files under the roots that were not reached.
    pub files_not_reached: u64,
}

impl From<wit::GrepResult> for GrepResult {
    fn from(r: wit::GrepResult) -> Self {
        GrepResult {
            files: r
                .files
                .into_iter()
                .map(|f| FileMatches {
                    path: f.path,
                    match_count: f.match_count,
                    lines: f
                        .lines
                        .into_iter()
                        .map(|l| Line {
                            is_match: matches!(l.kind, wit::LineKind::Match),
                            line_number: l.line_number,
                            text: l.text,
                            matches: l
                                .matches
                                .into_iter()
                                .map(|(s, e)| s as usize..e as usize)
                                .collect(),
                        })
                        .collect(),
                })
                .collect(),
            files_scanned: r.files_scanned,
            bytes_scanned: r.bytes_scanned,
            errors: r
                .errors
                .into_iter()
                .map(|e| (e.root, Error::from(e.error)))
                .collect(),
            truncated: r.truncated.map(|t| Truncation {
                files_searched: t.files_searched,
                files_not_reached: t.files_not_reached,
            }),
        }
    }
}
