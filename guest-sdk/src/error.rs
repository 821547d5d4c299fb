use std::fmt;

use crate::wit::vfsbox::script::types::Error as WitError;

/// A failure a script can handle, from the document filesystem or a search.
///
/// Each variant carries a human-readable detail, usually the path.
///
/// ```no_run
/// use vfsbox_guest::{fs, Error};
///
/// match fs::read_to_string("/files/missing.txt") {
///     Ok(text) => print!("{text}"),
///     Err(Error::NotFound(path)) => eprintln!("no such document: {path}"),
///     Err(other) => eprintln!("cannot read: {other}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Nothing exists at the path.
    NotFound(String),
    /// A path component that must be a directory is a file.
    NotADirectory(String),
    /// The path names a directory where a file was expected.
    IsADirectory(String),
    /// The path is malformed: a NUL byte, too long, or not UTF-8.
    InvalidPath(String),
    /// The path exists but the script may not read it.
    Denied(String),
    /// The backend failed, or the host refused the input (such as a grep
    /// pattern that does not compile).
    Unavailable(String),
    /// The document is not valid UTF-8 (from [`fs::read_to_string`]).
    ///
    /// [`fs::read_to_string`]: crate::fs::read_to_string
    InvalidUtf8(String),
}

/// `Result` with [`Error`] as its error type.
///
/// ```no_run
/// fn first_line(path: &str) -> vfsbox_guest::Result<String> {
///     let text = vfsbox_guest::fs::read_to_string(path)?;
///     Ok(text.lines().next().unwrap_or_default().to_owned())
/// }
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotFound(p) => write!(f, "{p}: no such file or directory"),
            Error::NotADirectory(p) => write!(f, "{p}: not a directory"),
            Error::IsADirectory(p) => write!(f, "{p}: is a directory"),
            Error::InvalidPath(p) => write!(f, "invalid path: {p}"),
            Error::Denied(p) => write!(f, "{p}: permission denied"),
            Error::Unavailable(why) => write!(f, "unavailable: {why}"),
            Error::InvalidUtf8(p) => write!(f, "{p}: not valid UTF-8"),
        }
    }
}

impl std::error::Error for Error {}

impl From<WitError> for Error {
    fn from(e: WitError) -> Self {
        match e {
            WitError::NotFound(s) => Error::NotFound(s),
            WitError::NotADirectory(s) => Error::NotADirectory(s),
            WitError::IsADirectory(s) => Error::IsADirectory(s),
            WitError::InvalidPath(s) => Error::InvalidPath(s),
            WitError::Denied(s) => Error::Denied(s),
            WitError::Unavailable(s) => Error::Unavailable(s),
        }
    }
}
