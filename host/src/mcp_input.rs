//! What an MCP tool call brings: its arguments, parsed into the tools'
//! own types (unknown fields refused), and the text windows a result is cut
//! to. Kept apart from the handler (`http::mcp`) and free of the runtime, so
//! that the fuzz target reaches exactly this parsing.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::limits::LimitsRequest;

/// The parsed arguments of one tool call.
pub(crate) enum ToolArgs {
    Sh(ShArgs),
    Python(PythonArgs),
    Run(RunArgs),
    Read(ReadArgs),
    Grep(GrepArgs),
    List(ListArgs),
    Stat(StatArgs),
}

/// Parses `arguments` for `tool`; says what is wrong otherwise.
pub(crate) fn parse(tool: &str, arguments: Option<Map<String, Value>>) -> Result<ToolArgs, String> {
    fn typed<T: for<'de> Deserialize<'de>>(
        tool: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<T, String> {
        serde_json::from_value(Value::Object(arguments.unwrap_or_default()))
            .map_err(|e| format!("{tool}: {e}"))
    }
    Ok(match tool {
        "sh" => ToolArgs::Sh(typed(tool, arguments)?),
        "python" => ToolArgs::Python(typed(tool, arguments)?),
        "run" => ToolArgs::Run(typed(tool, arguments)?),
        "read" => ToolArgs::Read(typed(tool, arguments)?),
        "grep" => ToolArgs::Grep(typed(tool, arguments)?),
        "list" => ToolArgs::List(typed(tool, arguments)?),
        "stat" => ToolArgs::Stat(typed(tool, arguments)?),
        other => return Err(format!("no tool named `{other}`; see tools/list")),
    })
}

/// Cuts `text` to at most `cap` bytes on a character boundary.
pub(crate) fn cut(text: &str, cap: usize) -> (&str, bool) {
    if text.len() <= cap {
        return (text, false);
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// A window of a document's lines.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Lines {
    /// The lines, with their newlines.
    pub(crate) text: String,
    /// The first line shown, 1-based.
    pub(crate) first: u64,
    /// How many are shown.
    pub(crate) shown: u64,
    /// How many the text has.
    pub(crate) total: u64,
    /// Whether lines were left out before or after the window.
    pub(crate) partial: bool,
}

/// The lines of `text` from `offset` (1-based, 1 by default), at most
/// `limit` of them; a last line without a newline counts.
pub(crate) fn lines(text: &str, offset: Option<u64>, limit: Option<u64>) -> Lines {
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    let first = offset.unwrap_or(1).max(1);
    let skip = usize::try_from(first - 1).unwrap_or(usize::MAX);
    let take = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    let window: Vec<&str> = all.iter().skip(skip).take(take).copied().collect();
    let partial = skip > 0 || skip.saturating_add(window.len()) < all.len();
    Lines {
        text: window.concat(),
        first,
        shown: window.len() as u64,
        total: all.len() as u64,
        partial,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShArgs {
    pub(crate) script: String,
    #[serde(default)]
    pub(crate) cwd: Option<String>,
    #[serde(default)]
    pub(crate) limits: LimitsRequest,
    #[serde(default)]
    pub(crate) max_result_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PythonArgs {
    pub(crate) code: String,
    #[serde(default)]
    pub(crate) args: Vec<String>,
    #[serde(default)]
    pub(crate) stdin: String,
    #[serde(default)]
    pub(crate) cwd: Option<String>,
    #[serde(default)]
    pub(crate) limits: LimitsRequest,
    #[serde(default)]
    pub(crate) max_result_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunArgs {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) args: Vec<String>,
    #[serde(default)]
    pub(crate) stdin: String,
    #[serde(default)]
    pub(crate) cwd: Option<String>,
    #[serde(default)]
    pub(crate) limits: LimitsRequest,
    #[serde(default)]
    pub(crate) max_result_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    pub(crate) path: String,
    #[serde(default)]
    pub(crate) offset: Option<u64>,
    #[serde(default)]
    pub(crate) limit: Option<u64>,
    #[serde(default)]
    pub(crate) byte_offset: Option<u64>,
    #[serde(default)]
    pub(crate) byte_length: Option<u64>,
    #[serde(default)]
    pub(crate) max_result_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepArgs {
    pub(crate) patterns: Vec<String>,
    #[serde(default)]
    pub(crate) roots: Vec<String>,
    #[serde(default)]
    pub(crate) ignore_case: bool,
    #[serde(default)]
    pub(crate) whole_word: bool,
    #[serde(default)]
    pub(crate) fixed_strings: bool,
    #[serde(default)]
    pub(crate) context: u32,
    #[serde(default)]
    pub(crate) include: Vec<String>,
    #[serde(default)]
    pub(crate) exclude: Vec<String>,
    #[serde(default)]
    pub(crate) max_results: Option<usize>,
    #[serde(default)]
    pub(crate) mode: GrepMode,
    #[serde(default)]
    pub(crate) limits: LimitsRequest,
    #[serde(default)]
    pub(crate) max_result_bytes: Option<u64>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum GrepMode {
    #[default]
    Lines,
    Files,
    Count,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {
    #[serde(default)]
    pub(crate) path: Option<String>,
    #[serde(default)]
    pub(crate) depth: Option<u32>,
    #[serde(default)]
    pub(crate) glob: Option<String>,
    #[serde(default)]
    pub(crate) cursor: Option<String>,
    #[serde(default)]
    pub(crate) limit: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatArgs {
    pub(crate) path: String,
}

#[cfg(test)]
mod tests {
    use super::{cut, lines, parse};

    #[test]
    fn text_is_cut_on_a_character_boundary() {
        assert_eq!(cut("héllo", 2), ("h", true));
        assert_eq!(cut("héllo", 3), ("hé", true));
        assert_eq!(cut("hi", 10), ("hi", false));
    }

    #[test]
    fn line_windows_count_a_last_line_without_newline() {
        let w = lines("a\nb\nc", Some(2), Some(1));
        assert_eq!(
            (w.text.as_str(), w.first, w.shown, w.total, w.partial),
            ("b\n", 2, 1, 3, true)
        );
        let w = lines("a\nb\n", None, None);
        assert_eq!((w.shown, w.total, w.partial), (2, 2, false));
        let w = lines("a\n", Some(u64::MAX), Some(u64::MAX));
        assert_eq!((w.shown, w.partial), (0, true));
    }

    #[test]
    fn unknown_tools_and_fields_are_refused() {
        assert!(parse("nope", None).is_err());
        let extra = serde_json::json!({"path": "/x", "bogus": 1});
        assert!(parse("stat", extra.as_object().cloned()).is_err());
        assert!(parse("stat", None).is_err(), "path is required");
    }
}
