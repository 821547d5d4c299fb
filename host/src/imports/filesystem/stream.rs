//! A document read as a `wasi:io` input stream: what `read-via-stream`
//! hands out, and what libc's `read` uses for a file.
//!
//! The stream reads the backend as the guest reads it, one backend chunk at
//! a time, so a document of any size never sits whole in the host's memory.
//! It lives in the guest's resource table, beyond the call that opened it,
//! so it holds what it needs of the run's budget: the shared byte counter,
//! the byte cap and the deadline.

use std::ops::Range;

use bytes::Bytes;
use futures::StreamExt;
use wasmtime_wasi_io::poll::Pollable;
use wasmtime_wasi_io::streams::{InputStream, StreamError, StreamResult};

use super::Handle;
use crate::runtime::budget::{Deadline, ReadMeter};
use crate::vfs::{ByteStream, FsError, VPath, Vfs};

/// The bytes of one document from an offset to its size at opening.
pub(super) struct DocumentStream {
    vfs: Vfs,
    path: VPath,
    /// Where the next byte comes from, and where the document ended when it
    /// was opened (never read past: the document-read charge was for that).
    range: Range<u64>,
    state: State,
    meter: ReadMeter,
    cap: u64,
    deadline: Deadline,
    _handle: Handle,
}

enum State {
    /// Nothing asked of the backend yet.
    Unopened,
    /// Reading; `buffered` is what the backend gave and the guest has not
    /// taken yet.
    Open { source: ByteStream, buffered: Bytes },
    /// The backend failed; the guest sees it at its next read.
    Failed(FsError),
    /// The deadline passed while waiting; the next read ends the run.
    TimedOut,
    /// Everything was read.
    Done,
}

impl DocumentStream {
    pub(super) fn new(
        vfs: Vfs,
        path: VPath,
        range: Range<u64>,
        meter: ReadMeter,
        cap: u64,
        deadline: Deadline,
        handle: Handle,
    ) -> DocumentStream {
        let state = if range.start >= range.end {
            State::Done
        } else {
            State::Unopened
        };
        DocumentStream {
            vfs,
            path,
            range,
            state,
            meter,
            cap,
            deadline,
            _handle: handle,
        }
    }

    /// Waits, until the deadline at most, for bytes to hand over, the end,
    /// or a failure.
    async fn fill(&mut self) {
        let at = self.deadline.at;
        if let State::Unopened = self.state {
            let opening = self.vfs.open(&self.path, self.range.clone());
            self.state = match tokio::time::timeout_at(at.into(), opening).await {
                Ok(Ok(source)) => State::Open {
                    source,
                    buffered: Bytes::new(),
                },
                Ok(Err(e)) => State::Failed(e),
                Err(_) => State::TimedOut,
            };
        }
        let State::Open { source, buffered } = &mut self.state else {
            return;
        };
        while buffered.is_empty() {
            match tokio::time::timeout_at(at.into(), source.next()).await {
                Ok(Some(Ok(chunk))) => *buffered = chunk,
                Ok(Some(Err(e))) => {
                    self.state = State::Failed(FsError::from_io(&e, self.path.as_str()));
                    return;
                }
                Ok(None) => {
                    self.state = State::Done;
                    return;
                }
                Err(_) => {
                    self.state = State::TimedOut;
                    return;
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl InputStream for DocumentStream {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        match &mut self.state {
            State::Unopened => Ok(Bytes::new()),
            State::Open { buffered, .. } => {
                let left = self.range.end - self.range.start;
                let n = buffered
                    .len()
                    .min(size)
                    .min(usize::try_from(left).unwrap_or(usize::MAX));
                if n == 0 {
                    if left == 0 {
                        self.state = State::Done;
                        return Err(StreamError::Closed);
                    }
                    return Ok(Bytes::new());
                }
                // Charged as delivered: a stream past the byte cap ends the
                // run, with what the guest wrote so far kept.
                self.meter
                    .charge(n as u64, self.cap)
                    .map_err(|e| StreamError::Trap(wasmtime::Error::new(e)))?;
                self.range.start += n as u64;
                Ok(buffered.split_to(n))
            }
            State::Failed(e) => {
                let e = e.clone();
                self.state = State::Done;
                Err(StreamError::LastOperationFailed(wasmtime::Error::new(e)))
            }
            State::TimedOut => Err(StreamError::Trap(wasmtime::Error::new(
                self.deadline.exceeded(),
            ))),
            State::Done => Err(StreamError::Closed),
        }
    }

    async fn blocking_read(&mut self, size: usize) -> StreamResult<Bytes> {
        self.fill().await;
        self.read(size)
    }
}

#[async_trait::async_trait]
impl Pollable for DocumentStream {
    async fn ready(&mut self) {
        self.fill().await;
    }
}
