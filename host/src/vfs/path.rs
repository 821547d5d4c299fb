//! Path resolution: the one function every entry point uses (script
//! imports, downloads, resolve), so that every path means the same thing
//! everywhere and none escapes `/`.

use std::fmt;

use crate::limits::MAX_PATH_BYTES;

/// A normalised absolute path in the virtual filesystem: it starts with `/`,
/// has no `.`, `..` or empty components, no trailing `/` (but for the root)
/// and no NUL byte.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VPath(String);

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path is empty.
    #[error("the path is empty")]
    Empty,
    /// The path holds a NUL byte.
    #[error("the path contains a NUL byte")]
    Nul,
    /// The path is longer than [`MAX_PATH_BYTES`].
    #[error("the path is longer than {MAX_PATH_BYTES} bytes")]
    TooLong,
    /// The path is not valid UTF-8.
    #[error("the path is not valid UTF-8")]
    NotUtf8,
}

impl VPath {
    /// The root, `/`.
    pub fn root() -> VPath {
        VPath("/".to_owned())
    }

    /// The path as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is `/`.
    pub fn is_root(&self) -> bool {
        self.0 == "/"
    }

    /// The components, without the leading `/`.
    pub fn components(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.0.split('/').filter(|c| !c.is_empty())
    }

    /// The last component, or `/` for the root.
    pub fn file_name(&self) -> &str {
        self.components().next_back().unwrap_or("/")
    }

    /// This path with one more component. `name` must be a single
    /// component: no `/`, not `.` or `..`, not empty, no NUL.
    pub fn join_name(&self, name: &str) -> Option<VPath> {
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
            return None;
        }
        let mut s = self.0.clone();
        if !self.is_root() {
            s.push('/');
        }
        s.push_str(name);
        Some(VPath(s))
    }

    /// What follows `prefix` in this path, when `prefix` is this path or one
    /// of its ancestors: `""` for the prefix itself, else the relative rest
    /// without a leading `/`. Compares whole components only.
    pub fn strip_prefix(&self, prefix: &VPath) -> Option<&str> {
        if prefix.is_root() {
            return Some(&self.0[1..]);
        }
        let rest = self.0.strip_prefix(prefix.as_str())?;
        if rest.is_empty() {
            Some("")
        } else {
            rest.strip_prefix('/')
        }
    }

    /// Reads an already-normalised absolute path, such as a mount point from
    /// the config. Anything that [`resolve`] would change is refused.
    pub fn parse_absolute(s: &str) -> Option<VPath> {
        let p = resolve(&VPath::root(), s).ok()?;
        (p.as_str() == s).then_some(p)
    }
}

impl fmt::Display for VPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for VPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl AsRef<str> for VPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Resolves `input` against the working directory `cwd`.
///
/// `~` (alone or followed by `/`) means `/`; `.`, `..` and repeated slashes
/// are normalised; `..` never climbs above `/`. A path is refused when it is
/// empty, holds a NUL byte or is longer than [`MAX_PATH_BYTES`].
pub fn resolve(cwd: &VPath, input: &str) -> Result<VPath, PathError> {
    if input.is_empty() {
        return Err(PathError::Empty);
    }
    if input.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong);
    }
    if input.contains('\0') {
        return Err(PathError::Nul);
    }
    let (base, rest): (Option<&VPath>, &str) = if input == "~" {
        (None, "")
    } else if let Some(rest) = input.strip_prefix("~/") {
        (None, rest)
    } else if input.starts_with('/') {
        (None, input)
    } else {
        (Some(cwd), input)
    };
    let mut parts: Vec<&str> = base.map(|b| b.components().collect()).unwrap_or_default();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    joined(&parts)
}

/// The path of normalised components `parts`, unless it is too long.
fn joined(parts: &[&str]) -> Result<VPath, PathError> {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len() + 1).sum::<usize>().max(1));
    for part in parts {
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() {
        out.push('/');
    }
    if out.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong);
    }
    Ok(VPath(out))
}

/// [`resolve`] for raw bytes, such as a percent-decoded URL path; bytes that
/// are not UTF-8 are refused.
pub fn resolve_bytes(cwd: &VPath, input: &[u8]) -> Result<VPath, PathError> {
    let s = std::str::from_utf8(input).map_err(|_| PathError::NotUtf8)?;
    resolve(cwd, s)
}

/// Why [`resolve_beneath`] refused a path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BeneathError {
    /// Empty, too long or holding a NUL byte.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The path is absolute: it names no place beneath the directory.
    #[error("the path is absolute")]
    Absolute,
    /// A `..` climbs above the root the directory was opened beneath.
    #[error("the path leads outside its directory")]
    Escapes,
}

/// Resolves `input` relative to the directory `dir`, never leaving `root`
/// (`dir` itself or one of its ancestors): the rule of `wasi:filesystem`,
/// where every path is relative to a descriptor and no step of resolving it
/// may leave the preopened directory it came from.
///
/// Unlike [`resolve`], `~` is an ordinary name, an absolute path is refused
/// rather than taken from `/`, and a `..` that would climb above `root` at
/// any step is refused rather than stopped at `/` (`a/../../x` from a root
/// is refused even though it could come back down).
pub fn resolve_beneath(dir: &VPath, root: &VPath, input: &str) -> Result<VPath, BeneathError> {
    if input.is_empty() {
        return Err(PathError::Empty.into());
    }
    if input.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong.into());
    }
    if input.contains('\0') {
        return Err(PathError::Nul.into());
    }
    if input.starts_with('/') {
        return Err(BeneathError::Absolute);
    }
    let floor = root.components().count();
    let mut parts: Vec<&str> = dir.components().collect();
    if parts.len() < floor || dir.strip_prefix(root).is_none() {
        return Err(BeneathError::Escapes);
    }
    for part in input.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.len() == floor {
                    return Err(BeneathError::Escapes);
                }
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    Ok(joined(&parts)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> VPath {
        VPath::parse_absolute(s).expect("normalised path")
    }

    #[test]
    fn resolves_the_table() {
        let cwd = p("/files/docs");
        let cases: &[(&str, &str)] = &[
            ("/", "/"),
            ("/files", "/files"),
            ("/files/", "/files"),
            ("//files///a//b", "/files/a/b"),
            ("a.txt", "/files/docs/a.txt"),
            ("./a.txt", "/files/docs/a.txt"),
            ("..", "/files"),
            ("../..", "/"),
            ("../../..", "/"),
            ("../../../../etc/passwd", "/etc/passwd"),
            ("/../../etc", "/etc"),
            ("/files/../files/./x", "/files/x"),
            ("~", "/"),
            ("~/files", "/files"),
            ("~/../..", "/"),
            ("~user", "/files/docs/~user"),
            ("a/~/b", "/files/docs/a/~/b"),
            (".", "/files/docs"),
            ("./", "/files/docs"),
            ("...", "/files/docs/..."),
            ("..a", "/files/docs/..a"),
            ("a/..", "/files/docs"),
            ("a/../..", "/files"),
            ("a\\..\\b", "/files/docs/a\\..\\b"),
            ("%2e%2e", "/files/docs/%2e%2e"),
            ("/files/%2F", "/files/%2F"),
            (" ", "/files/docs/ "),
            ("/files/ü.txt", "/files/ü.txt"),
            ("/./././", "/"),
            ("x/./y/../z", "/files/docs/x/z"),
        ];
        for (input, want) in cases {
            assert_eq!(
                resolve(&cwd, input).as_ref().map(VPath::as_str),
                Ok(*want),
                "{input:?}"
            );
        }
    }

    #[test]
    fn refuses_bad_input() {
        let cwd = VPath::root();
        assert_eq!(resolve(&cwd, ""), Err(PathError::Empty));
        assert_eq!(resolve(&cwd, "/files/a\0b"), Err(PathError::Nul));
        assert_eq!(resolve(&cwd, "\0"), Err(PathError::Nul));
        assert_eq!(resolve(&cwd, &"a".repeat(4097)), Err(PathError::TooLong));
        assert!(resolve(&cwd, &"a".repeat(4095)).is_ok());
        assert_eq!(resolve_bytes(&cwd, b"/files/\xff"), Err(PathError::NotUtf8));
        // A short input under a long cwd may still be too long in the end.
        let deep = resolve(&cwd, &"d/".repeat(2040)).expect("deep cwd");
        assert_eq!(resolve(&deep, "abcdefghijklmnop"), Err(PathError::TooLong));
    }

    #[test]
    fn strips_prefixes_by_whole_components() {
        assert_eq!(p("/files/a").strip_prefix(&p("/files")), Some("a"));
        assert_eq!(p("/files").strip_prefix(&p("/files")), Some(""));
        assert_eq!(p("/filesx/a").strip_prefix(&p("/files")), None);
        assert_eq!(
            p("/files/a/b").strip_prefix(&VPath::root()),
            Some("files/a/b")
        );
        assert_eq!(VPath::root().strip_prefix(&VPath::root()), Some(""));
    }

    #[test]
    fn joins_only_single_components() {
        let root = VPath::root();
        assert_eq!(
            root.join_name("files").map(|p| p.0),
            Some("/files".to_owned())
        );
        assert_eq!(
            p("/files").join_name("a").map(|p| p.0),
            Some("/files/a".to_owned())
        );
        for bad in ["", ".", "..", "a/b", "a\0"] {
            assert_eq!(root.join_name(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parse_absolute_accepts_only_normal_forms() {
        assert!(VPath::parse_absolute("/files").is_some());
        for bad in ["files", "/files/", "/files/../x", "//files", "/a/./b", ""] {
            assert!(VPath::parse_absolute(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn resolves_beneath_a_root_or_refuses() {
        let root = p("/files");
        let dir = p("/files/docs");
        let ok: &[(&str, &str)] = &[
            ("a.txt", "/files/docs/a.txt"),
            (".", "/files/docs"),
            ("..", "/files"),
            ("../x/./y//z", "/files/x/y/z"),
            ("a/../b", "/files/docs/b"),
            ("~", "/files/docs/~"),
            ("~/x", "/files/docs/~/x"),
            ("a/", "/files/docs/a"),
        ];
        for (input, want) in ok {
            assert_eq!(
                resolve_beneath(&dir, &root, input)
                    .as_ref()
                    .map(VPath::as_str),
                Ok(*want),
                "{input:?}"
            );
        }
        let refused: &[(&str, BeneathError)] = &[
            ("../..", BeneathError::Escapes),
            ("../../etc/passwd", BeneathError::Escapes),
            ("../../files/docs", BeneathError::Escapes),
            ("a/../../../files", BeneathError::Escapes),
            ("/etc/passwd", BeneathError::Absolute),
            ("/files/docs/a.txt", BeneathError::Absolute),
            ("", BeneathError::Path(PathError::Empty)),
            ("a\0b", BeneathError::Path(PathError::Nul)),
        ];
        for (input, want) in refused {
            assert_eq!(
                resolve_beneath(&dir, &root, input).as_ref(),
                Err(want),
                "{input:?}"
            );
        }
        // A directory that is not beneath the root resolves nothing.
        assert_eq!(
            resolve_beneath(&p("/other"), &root, "a"),
            Err(BeneathError::Escapes)
        );
        assert_eq!(
            resolve_beneath(&p("/filesx"), &root, "a"),
            Err(BeneathError::Escapes)
        );
        // The root itself may be the directory; `..` from it is refused.
        assert_eq!(
            resolve_beneath(&root, &root, ".."),
            Err(BeneathError::Escapes)
        );
        assert_eq!(
            resolve_beneath(&root, &root, "a").map(|p| p.0),
            Ok("/files/a".to_owned())
        );
    }
}
