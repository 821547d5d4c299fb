//! jq 1.6's JSON reader, so that input is accepted, refused and reported
//! as jq 1.6 does it: its character-driven scanner (`jv_parse.c`), whose
//! literals are any run of other characters checked when it ends (`nan`,
//! `01`, `.5` and `+1` are numbers; `1.2.3`, `#x` and `'a'` are "Invalid
//! numeric literal"), whose structure errors have their own words, and
//! whose positions are the line and the column of the character that
//! ended the parse. A value is also given where it ends, for the `(at
//! <stdin>:N)` of a later error.
//!
//! Written by hand: no JSON crate reads jq 1.6's input language or words
//! its errors (jaq's reader, for one, takes `#` as a comment).

use jaq_json::Val;

/// jq 1.6's limit on nesting (`MAX_PARSING_DEPTH`).
const MAX_DEPTH: usize = 256;

/// One element of the parser's stack: an open array or object, or an
/// object key waiting for its value.
enum Frame {
    Arr(Vec<Val>),
    Obj(jaq_json::Map),
    Key(Val),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    Str,
    StrEscape,
}

/// Reads the values of one input, one after another.
pub(crate) struct Reader {
    data: Vec<u8>,
    pos: usize,
    stack: Vec<Frame>,
    next: Option<Val>,
    token: Vec<u8>,
    state: State,
    line: usize,
    column: usize,
    done: bool,
}

/// What the reader gives: a value and the offset just after the character
/// that completed it, or jq's message for the input (after which there is
/// nothing more).
pub(crate) type Read = Result<(Val, usize), String>;

impl Reader {
    pub(crate) fn new(data: Vec<u8>) -> Reader {
        // jq skips a UTF-8 byte order mark.
        let pos = if data.starts_with(&[0xEF, 0xBB, 0xBF]) {
            3
        } else {
            0
        };
        Reader {
            data,
            pos,
            stack: Vec::new(),
            next: None,
            token: Vec::new(),
            state: State::Normal,
            line: 1,
            column: 0,
            done: false,
        }
    }

    fn fail<T>(&mut self, msg: &str) -> Result<T, String> {
        self.done = true;
        Err(format!(
            "{msg} at line {}, column {}",
            self.line, self.column
        ))
    }

    /// `value()`: a complete value where one is already waiting is a
    /// missing separator.
    fn value(&mut self, v: Val) -> Result<(), &'static str> {
        if self.next.is_some() {
            return Err("Expected separator between values");
        }
        self.next = Some(v);
        Ok(())
    }

    /// `check_literal()`: the pending run of literal characters.
    fn literal(&mut self) -> Result<(), &'static str> {
        if self.token.is_empty() {
            return Ok(());
        }
        let token = std::mem::take(&mut self.token);
        let word = |w: &str, v: Val| {
            if token == w.as_bytes() {
                Ok(v)
            } else {
                Err("Invalid literal")
            }
        };
        // A word from `n` is checked against `null` unless it has three
        // letters, which are read as a number (so `nan` is NaN, `nul` an
        // invalid number), as Debian's jq 1.6 reads it since 1.6-2.1+deb12u3
        // (upstream's `check_literal`); `NaN` and `-nan` are numbers too.
        let v = match token[0] {
            b't' => word("true", Val::Bool(true))?,
            b'f' => word("false", Val::Bool(false))?,
            b'n' if token.len() != 3 => word("null", Val::Null)?,
            _ => number(&token).ok_or("Invalid numeric literal")?,
        };
        self.value(v)
    }

    /// `found_string()`: the string's text, its escapes decoded.
    fn string(&mut self) -> Result<(), &'static str> {
        let raw = std::mem::take(&mut self.token);
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            let c = raw[i];
            i += 1;
            if c != b'\\' {
                // jq 1.6 checks 0x01..=0x1E (its test is `c > 0 && c < 0x1f`).
                if c > 0 && c < 0x1f {
                    return Err(
                        "Invalid string: control characters from U+0000 through U+001F must be escaped",
                    );
                }
                out.push(c);
                continue;
            }
            let Some(&e) = raw.get(i) else {
                return Err("Expected escape character at end of string");
            };
            i += 1;
            match e {
                b'\\' | b'"' | b'/' => out.push(e),
                b'b' => out.push(0x08),
                b'f' => out.push(0x0c),
                b't' => out.push(b'\t'),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b'u' => {
                    let Some(hex) = raw.get(i..i + 4) else {
                        return Err("Invalid \\uXXXX escape");
                    };
                    let mut cp = hex4(hex).ok_or("Invalid characters in \\uXXXX escape")?;
                    i += 4;
                    if (0xD800..=0xDBFF).contains(&cp) {
                        let low = raw
                            .get(i..i + 6)
                            .filter(|s| s.starts_with(b"\\u"))
                            .and_then(|s| hex4(&s[2..]))
                            .filter(|l| (0xDC00..=0xDFFF).contains(l))
                            .ok_or("Invalid \\uXXXX\\uXXXX surrogate pair escape")?;
                        i += 6;
                        cp = 0x10000 + (((cp - 0xD800) << 10) | (low - 0xDC00));
                    }
                    let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                    let mut buf = [0; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => return Err("Invalid escape"),
            }
        }
        self.value(Val::from(String::from_utf8_lossy(&out).into_owned()))
    }

    /// `parse_token()`: one of `[ { : , ] }`.
    fn structure(&mut self, ch: u8) -> Result<(), &'static str> {
        match ch {
            b'[' | b'{' => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err("Exceeds depth limit for parsing");
                }
                if self.next.is_some() {
                    return Err("Expected separator between values");
                }
                self.stack.push(if ch == b'[' {
                    Frame::Arr(Vec::new())
                } else {
                    Frame::Obj(jaq_json::Map::default())
                });
            }
            b':' => {
                let Some(key) = self.next.take() else {
                    return Err("Expected string key before ':'");
                };
                if !matches!(self.stack.last(), Some(Frame::Obj(_))) {
                    self.next = Some(key);
                    return Err("':' not as part of an object");
                }
                if !matches!(key, Val::TStr(_) | Val::BStr(_)) {
                    self.next = Some(key);
                    return Err("Object keys must be strings");
                }
                self.stack.push(Frame::Key(key));
            }
            b',' => {
                if self.next.is_none() {
                    return Err("Expected value before ','");
                }
                match self.stack.last_mut() {
                    None => return Err("',' not as part of an object or array"),
                    Some(Frame::Arr(items)) => items.extend(self.next.take()),
                    Some(Frame::Key(_)) => self.set_pair(),
                    Some(Frame::Obj(_)) => return Err("Objects must consist of key:value pairs"),
                }
            }
            b']' => {
                let Some(Frame::Arr(items)) = self.stack.last_mut() else {
                    return Err("Unmatched ']'");
                };
                match self.next.take() {
                    Some(v) => items.push(v),
                    None if !items.is_empty() => return Err("Expected another array element"),
                    None => {}
                }
                if let Some(Frame::Arr(items)) = self.stack.pop() {
                    self.next = Some(items.into_iter().collect());
                }
            }
            _ => {
                // `}`
                if self.stack.is_empty() {
                    return Err("Unmatched '}'");
                }
                if self.next.is_some() {
                    if !matches!(self.stack.last(), Some(Frame::Key(_))) {
                        return Err("Objects must consist of key:value pairs");
                    }
                    self.set_pair();
                } else {
                    match self.stack.last() {
                        Some(Frame::Obj(m)) if !m.is_empty() => {
                            return Err("Expected another key-value pair");
                        }
                        Some(Frame::Obj(_)) => {}
                        _ => return Err("Unmatched '}'"),
                    }
                }
                if let Some(Frame::Obj(m)) = self.stack.pop() {
                    self.next = Some(Val::obj(m));
                }
            }
        }
        Ok(())
    }

    /// A key and the waiting value go into the object below them (a
    /// repeated key keeps its place and takes the new value).
    fn set_pair(&mut self) {
        if let (Some(Frame::Key(k)), Some(v)) = (self.stack.pop(), self.next.take())
            && let Some(Frame::Obj(m)) = self.stack.last_mut()
        {
            m.insert(k, v);
        }
    }

    /// `check_done()`: a finished value at the top level.
    fn done_value(&mut self) -> Option<Val> {
        if self.stack.is_empty() {
            self.next.take()
        } else {
            None
        }
    }

    /// `scan()` over the rest of the input, up to the next value.
    fn scan(&mut self) -> Option<Read> {
        while self.pos < self.data.len() {
            let ch = self.data[self.pos];
            self.pos += 1;
            self.column += 1;
            if ch == b'\n' {
                self.line += 1;
                self.column = 0;
            }
            let mut out = None;
            if self.state == State::Normal {
                let literal = !matches!(
                    ch,
                    b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'[' | b',' | b']' | b'{' | b':' | b'}'
                );
                if !literal {
                    if let Err(m) = self.literal() {
                        return Some(self.fail(m));
                    }
                    out = self.done_value();
                }
                match ch {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    b'"' => self.state = State::Str,
                    b'[' | b',' | b']' | b'{' | b':' | b'}' => {
                        // A value completed by this character is lost
                        // when the character is an error, as in jq.
                        if let Err(m) = self.structure(ch) {
                            return Some(self.fail(m));
                        }
                    }
                    _ => self.token.push(ch),
                }
                if let Some(v) = self.done_value() {
                    out = Some(v);
                }
            } else if ch == b'"' && self.state == State::Str {
                if let Err(m) = self.string() {
                    return Some(self.fail(m));
                }
                self.state = State::Normal;
                out = self.done_value();
            } else {
                self.token.push(ch);
                self.state = if ch == b'\\' && self.state == State::Str {
                    State::StrEscape
                } else {
                    State::Str
                };
            }
            if let Some(v) = out {
                return Some(Ok((v, self.pos)));
            }
        }
        // The end of the input.
        self.done = true;
        if self.state != State::Normal {
            return Some(self.fail_eof("Unfinished string"));
        }
        if let Err(m) = self.literal() {
            return Some(self.fail_eof(m));
        }
        if !self.stack.is_empty() {
            return Some(self.fail_eof("Unfinished JSON term"));
        }
        self.next.take().map(|v| Ok((v, self.pos)))
    }

    fn fail_eof<T>(&mut self, msg: &str) -> Result<T, String> {
        Err(format!(
            "{msg} at EOF at line {}, column {}",
            self.line, self.column
        ))
    }
}

impl Iterator for Reader {
    type Item = Read;

    fn next(&mut self) -> Option<Read> {
        if self.done {
            return None;
        }
        self.scan()
    }
}

fn hex4(h: &[u8]) -> Option<u32> {
    h.iter().try_fold(0u32, |acc, &b| {
        char::from(b).to_digit(16).map(|d| acc * 16 + d)
    })
}

/// A numeric literal as jq's `strtod` takes it (decimal, an optional sign,
/// `nan` and `infinity`), as jq keeps numbers: a whole one as an integer,
/// any other as a double.
fn number(token: &[u8]) -> Option<Val> {
    let text = std::str::from_utf8(token).ok()?;
    // Rust's parser takes what strtod takes, less hexadecimal (which jq's
    // strtod does not read either), and no more.
    let x: f64 = text.parse().ok()?;
    let whole = x.fract() == 0.0 && !(x == 0.0 && x.is_sign_negative());
    Some(
        if whole && x >= isize::MIN as f64 && x <= isize::MAX as f64 {
            Val::from(x as isize)
        } else {
            Val::from(x)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_error(s: &str) -> String {
        Reader::new(s.as_bytes().to_vec())
            .find_map(Result::err)
            .unwrap_or_default()
    }

    #[test]
    fn errors_are_worded_and_placed_as_jq_16s() {
        assert_eq!(
            first_error("#include <stdio.h>\n"),
            "Invalid numeric literal at line 1, column 9"
        );
        assert_eq!(
            first_error("{\"a\":1,}"),
            "Expected another key-value pair at line 1, column 8"
        );
        assert_eq!(
            first_error("[1 2]"),
            "Expected separator between values at line 1, column 5"
        );
        assert_eq!(
            first_error("[1,2"),
            "Unfinished JSON term at EOF at line 1, column 4"
        );
        assert_eq!(first_error("tru\n"), "Invalid literal at line 2, column 0");
        assert_eq!(
            first_error("[nul]"),
            "Invalid numeric literal at line 1, column 5"
        );
        assert_eq!(
            first_error("{1:2}"),
            "Object keys must be strings at line 1, column 3"
        );
    }

    #[test]
    fn values_end_where_their_last_character_is() {
        let got: Vec<usize> = Reader::new(b"1 [2]\n\"x\"".to_vec())
            .map(|r| r.map(|(_, end)| end).unwrap_or(0))
            .collect();
        assert_eq!(got, vec![2, 5, 9]);
    }
}
