//! Query strings, decoded strictly: a value that is not UTF-8 once
//! percent-decoded is refused, never replaced.

use super::error::AppError;

/// The `key=value` pairs of a query, in order, percent- and `+`-decoded.
pub(crate) fn pairs(query: Option<&str>) -> Result<Vec<(String, String)>, AppError> {
    let decode = |s: &str| -> Result<String, AppError> {
        let spaced = s.replace('+', " ");
        let bytes: Vec<u8> = percent_encoding::percent_decode_str(&spaced).collect();
        String::from_utf8(bytes)
            .map_err(|_| AppError::bad_request("bad_query", "the query is not UTF-8 once decoded"))
    };
    query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((decode(k)?, decode(v)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_pairs_and_refuses_invalid_utf8() {
        let got = pairs(Some("arg=a+b&arg=c%26d%3De&cwd=%2Ffiles&flag")).expect("valid");
        let want = [
            ("arg", "a b"),
            ("arg", "c&d=e"),
            ("cwd", "/files"),
            ("flag", ""),
        ];
        assert_eq!(got, want.map(|(k, v)| (k.to_owned(), v.to_owned())));
        assert!(pairs(Some("arg=%ff")).is_err());
        assert!(pairs(None).expect("empty").is_empty());
    }
}
