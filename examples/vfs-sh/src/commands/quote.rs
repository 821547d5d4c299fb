//! File names in error messages, quoted the way GNU coreutils quotes them
//! (gnulib's shell-escape style): `cat: 'my file': No such file or
//! directory`, `ls: cannot access "it's": ...`.

/// Whether a name needs quotes to be read back by a shell.
fn needs_quotes(name: &str) -> bool {
    name.is_empty()
        || name == "{"
        || name == "}"
        || name.starts_with(['#', '~'])
        || name
            .chars()
            .any(|c| c.is_control() || " !\"$&()*;<=>?[\\^`|:'".contains(c))
}

/// Whether `c` cannot appear as it is between single quotes.
fn escaped(c: char) -> Option<String> {
    if !c.is_control() {
        return None;
    }
    Some(match c {
        '\t' => "\\t".to_owned(),
        '\n' => "\\n".to_owned(),
        '\r' => "\\r".to_owned(),
        c => format!("\\{:03o}", u32::from(c) & 0xff),
    })
}

/// Quotes `name` like gnulib: bare when it needs nothing (unless `always`),
/// in double quotes when it holds a `'` but nothing special to double
/// quotes, else in single quotes (`'\''` for a quote, `$'\t'` for controls).
pub(crate) fn quote(name: &str, always: bool) -> String {
    if !always && !needs_quotes(name) {
        return name.to_owned();
    }
    let controls = name.chars().any(char::is_control);
    if name.contains('\'') && !controls && !name.contains(['"', '$', '`', '\\']) {
        return format!("\"{name}\"");
    }
    let mut out = String::from("'");
    for c in name.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else if let Some(e) = escaped(c) {
            out.push_str(&format!("'$'{e}''"));
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    // `'a'$'\t'''` has an empty pair at the end: drop it, as gnulib does.
    if let Some(s) = out.strip_suffix("''")
        && controls
        && !s.is_empty()
    {
        return s.to_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn like_gnulib() {
        let table = [
            ("a.txt", "a.txt"),
            ("a b", "'a b'"),
            ("it's", "\"it's\""),
            ("a'b\"c", "'a'\\''b\"c'"),
            ("", "''"),
            ("~a", "'~a'"),
            ("a~b", "a~b"),
            ("#a", "'#a'"),
            ("a#b", "a#b"),
            ("a:b", "'a:b'"),
            ("a]b", "a]b"),
            ("a,b", "a,b"),
            ("{", "'{'"),
            ("a{b", "a{b"),
            ("a\tb", "'a'$'\\t''b'"),
            ("é", "é"),
        ];
        for (name, want) in table {
            assert_eq!(quote(name, false), want, "{name:?}");
        }
        assert_eq!(quote("nope", true), "'nope'");
        assert_eq!(quote("it's", true), "\"it's\"");
    }
}
