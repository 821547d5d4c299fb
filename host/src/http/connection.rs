//! Keeping a client's connection open across a refusal.
//!
//! A run is refused (`429`, `503`, `413`, `415`, ...) before its body is
//! read, so that the refusal costs nothing. HTTP/1.1 cannot reuse a
//! connection that still carries the unread rest of a request body, so a
//! refusal alone would cost the client (a balancer's keep-alive pool, an
//! agent's HTTP client) a reconnect exactly when the fleet is busiest.
//! [`keep_connection`] reads and discards what is left of a small body
//! once the handler has decided its answer, before the answer goes out (so
//! the client never sees a reset while it still sends), and asks the client
//! to close only when the rest is too large or too slow to drain.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use http_body::Frame;
use http_body_util::BodyExt;

/// The most a refusal reads of an unread body to keep the connection: a
/// typical script upload, which a balancer on the same network sends in
/// milliseconds. (A balancer that resends a refused request buffers it
/// whole first, so it is sending it when the refusal comes.)
pub(crate) const DRAIN_BYTES: usize = 1024 * 1024;
/// How long a refusal waits for that rest to arrive.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

/// A request body the handler reads while this middleware keeps a handle
/// on it, to drain what the handler left.
#[derive(Clone)]
struct SharedBody(Arc<Mutex<Option<Body>>>);

impl SharedBody {
    fn take(&self) -> Option<Body> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

impl http_body::Body for SharedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let mut body = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match body.as_mut() {
            Some(body) => Pin::new(body).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_none_or(http_body::Body::is_end_stream)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or_else(
                || http_body::SizeHint::with_exact(0),
                http_body::Body::size_hint,
            )
    }
}

/// Reads what is left of `body`, at most [`DRAIN_BYTES`] within
/// [`DRAIN_TIMEOUT`]; whether it reached the end.
async fn drain(mut body: Body) -> bool {
    let read = async {
        let mut drained = 0usize;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { return false };
            if let Some(data) = frame.data_ref() {
                drained += data.len();
                if drained > DRAIN_BYTES {
                    return false;
                }
            }
        }
        true
    };
    tokio::time::timeout(DRAIN_TIMEOUT, read)
        .await
        .unwrap_or(false)
}

/// After an error answer, drains a small unread body so the connection
/// stays usable, or asks the client to close it when that is not possible.
pub(crate) async fn keep_connection(req: Request, next: axum::middleware::Next) -> Response {
    let (parts, body) = req.into_parts();
    if http_body::Body::is_end_stream(&body) {
        return next.run(Request::from_parts(parts, body)).await;
    }
    // Too large to drain, as declared: no need to try.
    let drainable = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_none_or(|n| n <= DRAIN_BYTES as u64);
    let shared = SharedBody(Arc::new(Mutex::new(Some(body))));
    let mut response = next
        .run(Request::from_parts(parts, Body::new(shared.clone())))
        .await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let kept = match shared.take() {
        Some(rest) if !http_body::Body::is_end_stream(&rest) => drainable && drain(rest).await,
        _ => true,
    };
    if !kept {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// How long a closing connection waits for more of what the client still
/// sends before it gives up (nginx's `lingering_timeout`).
const LINGER_IDLE: Duration = Duration::from_secs(5);
/// The longest a closing connection keeps reading, however steadily the
/// client sends (nginx's `lingering_time`).
const LINGER_MAX: Duration = Duration::from_secs(30);

/// The server's listener: its connections close as nginx's
/// `lingering_close` does.
///
/// A socket closed while the client's bytes sit unread in it answers with
/// a reset, and a reset discards the response the client has not read yet:
/// a refused upload whose rest [`keep_connection`] could not drain in time
/// (a loaded host, a slow client) would reach the client as "connection
/// reset" instead of its `429`. So a closing connection sends its FIN
/// first, then reads and discards until the client closes too (it does,
/// once it has the response), sends nothing for [`LINGER_IDLE`], or
/// [`LINGER_MAX`] passes, and only then closes. A client still sending a
/// large refused upload on a loaded machine keeps the connection lingering
/// as long as its bytes keep coming, so its response is not lost.
pub(crate) struct Lingering(pub(crate) tokio::net::TcpListener);

impl axum::serve::Listener for Lingering {
    type Io = LingeringStream;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (inner, addr) = axum::serve::Listener::accept(&mut self.0).await;
        (
            LingeringStream {
                inner,
                linger: None,
            },
            addr,
        )
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// A connection of [`Lingering`].
pub(crate) struct LingeringStream {
    inner: tokio::net::TcpStream,
    /// Set once the FIN is sent: when to stop reading and close.
    linger: Option<Linger>,
}

/// The two clocks of a lingering close.
struct Linger {
    /// Restarted whenever the client sends more.
    idle: Pin<Box<tokio::time::Sleep>>,
    /// When lingering ends regardless.
    end: tokio::time::Instant,
}

impl AsyncRead for LingeringStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for LingeringStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.linger.is_none() {
            // A peer that already went away has nothing left to read.
            if let Err(e) = std::task::ready!(Pin::new(&mut self.inner).poll_shutdown(cx)) {
                return Poll::Ready(Err(e));
            }
            let now = tokio::time::Instant::now();
            self.linger = Some(Linger {
                idle: Box::pin(tokio::time::sleep_until(now + LINGER_IDLE)),
                end: now + LINGER_MAX,
            });
        }
        let this = &mut *self;
        let Some(linger) = this.linger.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        let mut scratch = [0u8; 8192];
        loop {
            let mut buf = tokio::io::ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                // The client closed: nothing is left to turn into a reset.
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {
                    let now = tokio::time::Instant::now();
                    if now >= linger.end {
                        return Poll::Ready(Ok(()));
                    }
                    let idle = (now + LINGER_IDLE).min(linger.end);
                    linger.idle.as_mut().reset(idle);
                }
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => {
                    return if linger.idle.as_mut().poll(cx).is_ready() {
                        Poll::Ready(Ok(()))
                    } else {
                        Poll::Pending
                    };
                }
            }
        }
    }
}
