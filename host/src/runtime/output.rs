//! Standard output and error of a run, captured in memory up to a cap.
//!
//! Past the cap, writes still succeed (a script that prints a lot is not an
//! error) but their bytes are dropped and the capture is flagged truncated.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// How much a guest may write per `check-write`; any size works, since
/// writes never block.
const WRITE_PERMIT: usize = 64 * 1024;

#[derive(Debug, Default)]
struct Captured {
    bytes: BytesMut,
    truncated: bool,
}

/// A capped capture of one output stream. Clones share the same buffer.
#[derive(Debug, Clone)]
pub(crate) struct CappedOutput {
    cap: usize,
    inner: Arc<Mutex<Captured>>,
}

impl CappedOutput {
    pub(crate) fn new(cap: u64) -> CappedOutput {
        CappedOutput {
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            inner: Arc::default(),
        }
    }

    fn append(&self, buf: &[u8]) {
        let mut c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let room = self.cap.saturating_sub(c.bytes.len());
        if buf.len() > room {
            c.truncated = true;
        }
        c.bytes.extend_from_slice(&buf[..buf.len().min(room)]);
    }

    /// What was captured, and whether it was cut.
    pub(crate) fn contents(&self) -> (Vec<u8>, bool) {
        let c = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (c.bytes.to_vec(), c.truncated)
    }
}

impl IsTerminal for CappedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Pollable for CappedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CappedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

impl AsyncWrite for CappedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.append(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_bytes_up_to_the_cap_and_flags_the_rest() {
        let mut out = CappedOutput::new(10);
        out.write(Bytes::from_static(b"hello ")).expect("write");
        assert_eq!(out.contents(), (b"hello ".to_vec(), false));
        out.write(Bytes::from_static(b"world!"))
            .expect("write past the cap succeeds");
        assert_eq!(out.contents(), (b"hello worl".to_vec(), true));
        out.write(Bytes::from_static(b"more")).expect("write");
        assert_eq!(out.contents(), (b"hello worl".to_vec(), true));
    }

    #[test]
    fn exactly_the_cap_is_not_truncated() {
        let mut out = CappedOutput::new(4);
        out.write(Bytes::from_static(b"abcd")).expect("write");
        assert_eq!(out.contents(), (b"abcd".to_vec(), false));
    }
}
