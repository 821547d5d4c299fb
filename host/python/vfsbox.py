"""The host's search and the run's budget, for Python code run by vfsbox.

`open()`, `os`, `pathlib` and `glob` read the documents one by one, each read
counted against the run's budget. This module adds what only the host can do:

    import vfsbox

    # ripgrep's engine over whole trees, on the host, under the scan budget
    found = vfsbox.grep("refund", "/files", ignore_case=True)
    for path, line in found.lines():
        print(f"{path}:{line.line_number}:{line.text}")
    if found.truncated:
        print(f"partial: {found.files_not_reached} files not reached")

    # how many lines match in each document, without the lines
    counts = {f.path: f.match_count for f in vfsbox.grep("refund", "/files", count_only=True).files}

    # what is left of the run's budget
    left = vfsbox.budget()
    print(left.document_reads, left.time_ms)

`grep` raises `FileNotFoundError`, `NotADirectoryError`, `PermissionError` or
`ValueError` (a pattern that does not compile, a malformed path) as the
standard library would when no root can be searched; a root that cannot be
searched among others that can is reported in `errors` instead. Spending a budget ends the run (the host
reports which limit), as it does for every script.
"""

from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Sequence, Tuple, Union

from componentize_py_types import Err
from wit_world.imports import budget as _budget
from wit_world.imports import search as _search
from wit_world.imports import types as _types

__all__ = ["grep", "budget", "Found", "FileMatches", "Line", "Budget"]


@dataclass
class Line:
    """One reported line: a match, or context around one."""

    line_number: int
    text: str
    #: True for a matching line, False for a context line.
    is_match: bool
    #: Byte ranges of the matches within `text` (empty for context lines).
    spans: List[Tuple[int, int]] = field(default_factory=list)


@dataclass
class FileMatches:
    """The lines found in one document."""

    path: str
    match_count: int
    lines: List[Line]


@dataclass
class Found:
    """The result of one search, files in path order."""

    files: List[FileMatches]
    files_scanned: int
    bytes_scanned: int
    #: Roots that could not be searched: (root, the exception it would raise).
    errors: List[Tuple[str, OSError]]
    #: True when the scan budget ran out before every file was searched.
    truncated: bool
    #: Files found under the roots but not reached (0 unless truncated).
    files_not_reached: int

    def lines(self) -> Iterator[Tuple[str, Line]]:
        """Every reported line with its document's path."""
        for f in self.files:
            for line in f.lines:
                yield f.path, line

    def paths(self) -> List[str]:
        """The documents with a match (or, with `include_non_matching`, all)."""
        return [f.path for f in self.files]


#: What the host's remaining allowances are called here.
Budget = _budget.Allowances


def budget() -> Budget:
    """What is left of the run's budget: `time_ms`, `fuel`, `document_reads`,
    `bytes_read`, `scan_files`, `scan_bytes`."""
    return _budget.remaining()


def _exception(error: _types.Error) -> OSError:
    """The standard exception for a host error, as `open()` would raise."""
    message = error.value
    if isinstance(error, _types.Error_NotFound):
        return FileNotFoundError(2, "No such file or directory", message)
    if isinstance(error, _types.Error_NotADirectory):
        return NotADirectoryError(20, "Not a directory", message)
    if isinstance(error, _types.Error_IsADirectory):
        return IsADirectoryError(21, "Is a directory", message)
    if isinstance(error, _types.Error_Denied):
        return PermissionError(13, "Permission denied", message)
    return OSError(5, message)


def grep(
    patterns: Union[str, Sequence[str]],
    *roots: str,
    fixed_strings: bool = False,
    ignore_case: bool = False,
    smart_case: bool = False,
    whole_word: bool = False,
    invert: bool = False,
    context: int = 0,
    before_context: Optional[int] = None,
    after_context: Optional[int] = None,
    max_count: Optional[int] = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    include_non_matching: bool = False,
    count_only: bool = False,
) -> Found:
    """Searches the documents under `roots` (files or directories, searched
    recursively; the working directory when none is given) for lines that
    match any of `patterns` (regular expressions in ripgrep's syntax, or
    literal text with `fixed_strings`). `include` and `exclude` are globs on
    file names. Binary documents are skipped. With `count_only`, each file's
    `match_count` comes without its lines (every `lines` is empty): counting
    a pattern that matches most of a large document then holds none of it."""
    if isinstance(patterns, str):
        patterns = [patterns]
    patterns = list(patterns)
    if not patterns:
        raise ValueError("grep needs at least one pattern")
    for name, value in (("context", context), ("before_context", before_context),
                        ("after_context", after_context), ("max_count", max_count)):
        if value is not None and (not isinstance(value, int) or value < 0):
            raise ValueError(f"{name} must be a non-negative int, not {value!r}")
    options = _search.GrepOptions(
        patterns=patterns,
        fixed_strings=bool(fixed_strings),
        ignore_case=bool(ignore_case),
        smart_case=bool(smart_case),
        whole_word=bool(whole_word),
        invert=bool(invert),
        before_context=min(context if before_context is None else before_context, 2**32 - 1),
        after_context=min(context if after_context is None else after_context, 2**32 - 1),
        max_count=max_count,
        include_globs=list(include),
        exclude_globs=list(exclude),
        include_non_matching=bool(include_non_matching),
    )
    try:
        search = _search.count if count_only else _search.grep
        result = search(list(roots) or ["."], options)
    except Err as e:
        error = e.value
        if isinstance(error, (_types.Error_InvalidPath, _types.Error_Unavailable)):
            raise ValueError(error.value) from None
        raise _exception(error) from None
    roots = list(roots) or ["."]
    if result.errors and len(result.errors) == len(roots):
        # Nothing could be searched: fail as `open()` of that root would.
        raise _exception(result.errors[0].error)
    files = [
        FileMatches(
            path=f.path,
            match_count=f.match_count,
            lines=[
                Line(
                    line_number=line.line_number,
                    text=line.text,
                    is_match=line.kind == _search.LineKind.MATCH,
                    spans=list(line.matches),
                )
                for line in f.lines
            ],
        )
        for f in result.files
    ]
    cut = result.truncated
    return Found(
        files=files,
        files_scanned=result.files_scanned,
        bytes_scanned=result.bytes_scanned,
        errors=[(e.root, _exception(e.error)) for e in result.errors],
        truncated=cut is not None,
        files_not_reached=cut.files_not_reached if cut else 0,
    )
