//! Reading just enough of a document: `head`, `tail` and `sed -n 'N,Mp'`
//! need only its start or end, so they read growing ranges instead of the
//! whole document, which spares the script's byte budget on large files.

use crate::exec::{Input, STREAM_PIECE};
use crate::fs::{Fs, FsError};

/// The first range read; each next one is four times larger, up to
/// [`MAX_CHUNK`].
const FIRST_CHUNK: u64 = 64 << 10;
const MAX_CHUNK: u64 = 4 << 20;

/// Reads the start of a document until `enough` says so or it ends.
pub(crate) fn prefix(
    fs: &mut dyn Fs,
    path: &str,
    enough: impl Fn(&[u8]) -> bool,
) -> Result<Vec<u8>, FsError> {
    let mut data = Vec::new();
    let mut chunk = FIRST_CHUNK;
    loop {
        let got = fs.read_range(path, data.len() as u64, chunk)?;
        let short = (got.len() as u64) < chunk;
        data.extend_from_slice(&got);
        if short || enough(&data) {
            return Ok(data);
        }
        chunk = (chunk * 4).min(MAX_CHUNK);
    }
}

/// Reads the end of a document of `len` bytes until `enough` says so or
/// its start is reached.
pub(crate) fn suffix(
    fs: &mut dyn Fs,
    path: &str,
    len: u64,
    enough: impl Fn(&[u8]) -> bool,
) -> Result<Vec<u8>, FsError> {
    let mut data: Vec<u8> = Vec::new();
    let mut start = len;
    let mut chunk = FIRST_CHUNK;
    while start > 0 {
        let from = start.saturating_sub(chunk);
        let mut got = fs.read_range(path, from, start - from)?;
        got.extend_from_slice(&data);
        data = got;
        start = from;
        if enough(&data) {
            break;
        }
        chunk = (chunk * 4).min(MAX_CHUNK);
    }
    Ok(data)
}

/// A document's text read a piece at a time, for the commands that go
/// through it record by record (`awk`, `sed`): `text[pos..]` is what is
/// not consumed yet; [`TextWindow::refill`] drops what is and appends the
/// next piece, so a large document is never held whole. Text already in
/// memory (standard input) is one complete window.
#[derive(Default)]
pub(crate) struct TextWindow {
    pub(crate) text: String,
    pub(crate) pos: usize,
    /// Where the rest comes from, until it is all read.
    next: Option<Next>,
    /// The start of a UTF-8 character whose end is in the next piece.
    carry: Vec<u8>,
}

impl TextWindow {
    /// Text already in memory, whole.
    pub(crate) fn whole(data: &[u8]) -> TextWindow {
        TextWindow {
            text: crate::lossless::decode(data).into_owned(),
            ..TextWindow::default()
        }
    }

    /// Standard input, read a piece at a time as the window needs it.
    pub(crate) fn input(input: Input) -> TextWindow {
        TextWindow {
            next: Some(Next::Input(input)),
            ..TextWindow::default()
        }
    }

    /// A document, its first piece read now (so that a missing or
    /// unreadable one fails here).
    pub(crate) fn open(fs: &mut dyn Fs, path: &str) -> Result<TextWindow, FsError> {
        let mut w = TextWindow {
            next: Some(Next::Document(path.to_owned(), 0)),
            ..TextWindow::default()
        };
        w.refill(fs)?;
        Ok(w)
    }

    /// Whether the rest of the input is all in `text`.
    pub(crate) fn complete(&self) -> bool {
        self.next.is_none()
    }

    /// The document being read, until it is all read.
    pub(crate) fn path(&self) -> Option<&str> {
        match &self.next {
            Some(Next::Document(p, _)) => Some(p),
            _ => None,
        }
    }

    /// Drops what has been consumed and appends the next piece.
    pub(crate) fn refill(&mut self, fs: &mut dyn Fs) -> Result<(), FsError> {
        // Until some text is added or the input ends: a piece of standard
        // input may be as short as the start of one character.
        loop {
            let (piece, last) = match self.next.as_mut() {
                None => return Ok(()),
                Some(Next::Document(path, offset)) => {
                    let piece = fs.read_range(path, *offset, STREAM_PIECE)?;
                    *offset += piece.len() as u64;
                    let last = (piece.len() as u64) < STREAM_PIECE;
                    (piece, last)
                }
                Some(Next::Input(input)) => match input.borrow_mut().next_piece() {
                    Some(piece) => (piece, false),
                    None => (Vec::new(), true),
                },
            };
            self.carry.extend_from_slice(&piece);
            let keep = if last { 0 } else { utf8_tail(&self.carry) };
            let whole = self.carry.len() - keep;
            let text = crate::lossless::decode(&self.carry[..whole]).into_owned();
            self.carry.drain(..whole);
            self.text.drain(..self.pos);
            self.pos = 0;
            self.text.push_str(&text);
            if last {
                self.next = None;
            }
            if last || !text.is_empty() {
                return Ok(());
            }
        }
    }
}

/// Where the rest of a [`TextWindow`] comes from.
enum Next {
    /// A document, and where its next piece starts.
    Document(String, u64),
    /// Standard input.
    Input(Input),
}

/// How many bytes at the end of `b` start a UTF-8 character that is not
/// complete yet: a document read in pieces keeps them for the next piece,
/// so that a character split between two is decoded whole.
pub(crate) fn utf8_tail(b: &[u8]) -> usize {
    for k in 1..=b.len().min(3) {
        let c = b[b.len() - k];
        if c & 0xC0 == 0x80 {
            continue;
        }
        let need = match c {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if need > k { k } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::utf8_tail;

    #[test]
    fn a_character_cut_at_the_end_is_kept_for_the_next_piece() {
        let euro = "€".as_bytes(); // three bytes
        assert_eq!(utf8_tail(b"abc"), 0);
        assert_eq!(utf8_tail(&euro[..1]), 1);
        assert_eq!(utf8_tail(&[b"a".as_slice(), &euro[..2]].concat()), 2);
        assert_eq!(utf8_tail(euro), 0);
        assert_eq!(utf8_tail(&"𝄞".as_bytes()[..3]), 3);
        // Stray continuation bytes are invalid, not a beginning: decoded
        // (as replacement characters) with the rest.
        assert_eq!(utf8_tail(&[0x80, 0x80, 0x80, 0x80]), 0);
    }
}
