//! Text that keeps the bytes it was read from.
//!
//! Documents are bytes, and most of vfs-sh's tools work on `str`. A byte
//! that is not part of valid UTF-8 (Latin-1's `é` is the one byte 0xE9)
//! would become U+FFFD under `String::from_utf8_lossy`, so `sed`, `awk`, a
//! variable or `read` would write three bytes that were never in the
//! document. GNU tools and bash in the C locale pass such bytes through
//! untouched, and so must vfs-sh.
//!
//! So text is decoded with [`decode`]: each byte outside valid UTF-8 is
//! carried as one character of the last 128 code points of plane 16's
//! private use area, U+10FF80..=U+10FFFF standing for bytes 0x80..=0xFF
//! (a byte below 0x80 is always valid UTF-8). [`encode`] turns them back
//! into the bytes when text is written. A document that really holds one
//! of those 128 code points (a noncharacter or private use, four bytes
//! each) has its four bytes carried the same way, so every document
//! round-trips exactly.
//!
//! The standard library has no such escape: Rust strings cannot hold the
//! lone surrogates that Python's `surrogateescape` uses, and `OsStr` is
//! not a `str`, which the regex engines and the tools' parsers need.

use std::borrow::Cow;

/// The first of the 128 characters that stand for bytes 0x80..=0xFF;
/// character `BASE + b` is byte `b`.
const BASE: u32 = 0x10_FF00;

/// UTF-8's lead byte for every character from U+100000 up: text without
/// it holds no stand-in and needs no work.
const PLANE_16_LEAD: u8 = 0xF4;

/// The byte that `c` stands for, if it is a stand-in.
pub(crate) fn raw_byte(c: char) -> Option<u8> {
    let v = c as u32;
    (v >= BASE + 0x80).then(|| (v - BASE) as u8)
}

/// The stand-in for byte `b` (0x80..=0xFF).
fn stand_in(b: u8) -> char {
    char::from_u32(BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The character that carries byte `b`: itself below 0x80, else its
/// stand-in (what an escape such as `\xe9` makes in the C locale).
pub(crate) fn byte_char(b: u8) -> char {
    if b.is_ascii() {
        char::from(b)
    } else {
        stand_in(b)
    }
}

/// `s` with each run of stand-ins that spells valid UTF-8 made the
/// characters it spells (`\xc3\xa9` written as two escapes is `é`).
pub(crate) fn normalize(s: &str) -> Cow<'_, str> {
    if !s.as_bytes().contains(&PLANE_16_LEAD) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(decode_owned(encode(s).into_owned()))
}

/// `bytes` as text, each byte outside valid UTF-8 carried by its
/// stand-in; borrowed when `bytes` is valid UTF-8 with no stand-in's
/// code point in it.
pub(crate) fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) if !bytes.contains(&PLANE_16_LEAD) => Cow::Borrowed(s),
        _ => Cow::Owned(decode_slow(bytes)),
    }
}

/// [`decode`] of an owned buffer, without a copy when it is plain UTF-8.
pub(crate) fn decode_owned(bytes: Vec<u8>) -> String {
    if bytes.contains(&PLANE_16_LEAD) {
        return decode_slow(&bytes);
    }
    String::from_utf8(bytes).unwrap_or_else(|e| decode_slow(e.as_bytes()))
}

fn decode_slow(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 2);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if raw_byte(c).is_some() {
                // A real U+10FF80..: its own four bytes, each carried.
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push(stand_in(b));
                }
            } else {
                out.push(c);
            }
        }
        for &b in chunk.invalid() {
            out.push(stand_in(b));
        }
    }
    out
}

/// The bytes `s` stands for: its UTF-8, with each stand-in its byte.
pub(crate) fn encode(s: &str) -> Cow<'_, [u8]> {
    if !s.as_bytes().contains(&PLANE_16_LEAD) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match raw_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    Cow::Owned(out)
}

/// [`encode`] of an owned string, without a copy when it holds no
/// stand-in.
pub(crate) fn encode_owned(s: String) -> Vec<u8> {
    if !s.as_bytes().contains(&PLANE_16_LEAD) {
        return s.into_bytes();
    }
    encode(&s).into_owned()
}

/// How many bytes `s` stands for (its length in the C locale).
pub(crate) fn byte_len(s: &str) -> usize {
    if !s.as_bytes().contains(&PLANE_16_LEAD) {
        return s.len();
    }
    s.chars()
        .map(|c| {
            if raw_byte(c).is_some() {
                1
            } else {
                c.len_utf8()
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_bytes_round_trip_as_single_characters() {
        let doc = b"caf\xe9 na\xefve\n";
        let text = decode(doc);
        assert_eq!(text.chars().count(), 11);
        assert_eq!(byte_len(&text), doc.len());
        assert_eq!(&*encode(&text), doc);
        assert_eq!(decode_owned(doc.to_vec()), text);
    }

    #[test]
    fn valid_utf8_is_borrowed_both_ways() {
        let doc = "naïve ✓".as_bytes();
        assert!(matches!(decode(doc), Cow::Borrowed(_)));
        assert!(matches!(encode("naïve ✓"), Cow::Borrowed(_)));
        assert_eq!(byte_len("naïve ✓"), doc.len());
    }

    #[test]
    fn a_real_stand_in_code_point_and_truncated_sequences_round_trip() {
        // U+10FFFF (a noncharacter), a cut 3-byte sequence, a lone
        // continuation byte and an overlong NUL.
        let doc = b"a\xf4\x8f\xbf\xbfb\xe2\x9c c\x80 \xc0\x80 \xff";
        let text = decode(doc);
        assert_eq!(&*encode(&text), doc);
        assert_eq!(byte_len(&text), doc.len());
        // Escaped bytes that spell a character are that character.
        let escaped: String = [0xc3, 0xa9, 0xe9].map(byte_char).iter().collect();
        assert_eq!(normalize(&escaped), "é\u{10ffe9}");
        assert_eq!(byte_char(b'a'), 'a');
        // Plane 16's other characters are ordinary text.
        let other = "\u{100000}";
        assert_eq!(decode(other.as_bytes()), other);
        assert_eq!(&*encode(other), other.as_bytes());
    }
}
