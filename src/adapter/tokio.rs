//! An async driver over tokio's `AsyncRead + AsyncWrite` (feature `tokio`).
//!
//! The same shape as [`blocking`](super::blocking): [`serve`] answers the
//! requests of one connection with an async function from `Request<Bytes>`
//! to `Response<Bytes>`; [`Server`] lets the application stream bodies;
//! [`Client`] sends requests on one connection while its verdict allows.
//! Only tokio's `io-util`, `net` and `time` features are used; the runtime
//! is the application's, and needs its timers enabled ([`Server::close`]
//! bounds its lingering with `tokio::time`).
//!
//! ```no_run
//! use h1proto::Config;
//! use h1proto::adapter::tokio::serve;
//! use tokio::net::TcpListener;
//!
//! # async fn run() -> std::io::Result<()> {
//! let listener = TcpListener::bind("127.0.0.1:8080").await?;
//! loop {
//!     let (stream, _) = listener.accept().await?;
//!     stream.set_nodelay(true)?;
//!     tokio::spawn(serve(stream, Config::default(), |req| async move {
//!         http::Response::new(format!("{} {}\n", req.method(), req.uri()).into())
//!     }));
//! }
//! # }
//! ```

use std::future::Future;
use std::io::{self, IoSlice};

use bytes::{Buf, Bytes, BytesMut};
use http::{HeaderMap, Request, Response};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs};

use super::{FLUSH_THRESHOLD, LINGER_BYTES, LINGER_TIME, READ_SIZE};
use super::{peer_closed, protocol_error, usage_error};
use crate::conn::State;
use crate::encode::{IntoRequest, IntoResponse, IntoResponseHead};
use crate::{BodyKind, ClientConnection, Config, Error, Event, Segments, ServerConnection};

/// Writes everything queued in `out`, looping on partial writes: one
/// `write` when it is one contiguous segment (a head with a small body, or
/// the coalesced responses to pipelined requests), otherwise one
/// `write_vectored` per batch of segments.
pub async fn write_segments<W: AsyncWrite + Unpin + ?Sized>(
    io: &mut W,
    out: &mut Segments,
) -> io::Result<()> {
    while out.has_remaining() {
        let written = if out.segment_count() == 1 {
            io.write(out.chunk()).await?
        } else {
            let mut slices = [IoSlice::new(&[]); 64];
            let n = out.io_slices(&mut slices);
            io.write_vectored(&slices[..n]).await?
        };
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        out.advance(written);
    }
    Ok(())
}

/// Reads more bytes into `buf`; `Ok(0)` is the peer's EOF.
async fn read_into<R: AsyncRead + Unpin + ?Sized>(
    io: &mut R,
    buf: &mut BytesMut,
) -> io::Result<usize> {
    buf.reserve(READ_SIZE);
    io.read_buf(buf).await
}

/// Serves one connection: each request is read with its whole body and
/// answered with what `handler` returns, then the connection is closed
/// (lingering close, see [`Server::close`]). A peer's protocol error is
/// answered with its status and `Connection: close`, then returned as
/// [`InvalidData`](io::ErrorKind::InvalidData).
///
/// Bodies are collected in memory whatever their size: drive a [`Server`]
/// for large ones.
pub async fn serve<S, F, Fut>(io: S, config: Config, mut handler: F) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
    F: FnMut(Request<Bytes>) -> Fut,
    Fut: Future<Output = Response<Bytes>>,
{
    let mut server = Server::new(io, config);
    let result = async {
        while let Some(req) = server.next_request().await? {
            let body = server.read_body().await?;
            let (parts, ()) = req.into_parts();
            let res = handler(Request::from_parts(parts, body)).await;
            server.send_response(res)?;
        }
        Ok(())
    }
    .await;
    if result.is_err() {
        server.fail().await;
    }
    server.close().await;
    result
}

/// One server connection over an async stream, driven by the caller:
/// [`next_request`](Self::next_request), then the body and the response,
/// and [`close`](Self::close) at the end. This is the streaming interface.
///
/// ```no_run
/// use h1proto::adapter::tokio::Server;
///
/// # async fn echo(stream: tokio::net::TcpStream) -> std::io::Result<()> {
/// let mut server = Server::new(stream, h1proto::Config::default());
/// while let Some(_req) = server.next_request().await? {
///     server.send_head(http::Response::builder())?; // chunked
///     while let Some(data) = server.read_data().await? {
///         server.send_data(data).await?;
///     }
///     server.finish(None)?;
/// }
/// server.close().await;
/// # Ok(())
/// # }
/// ```
///
/// Output is queued and leaves when the server is about to wait for the
/// peer (or when more than [`FLUSH_THRESHOLD`]
/// bytes are queued), so the responses to pipelined requests read together
/// leave together.
#[derive(Debug)]
pub struct Server<S> {
    io: S,
    conn: ServerConnection,
    buf: BytesMut,
    eof: bool,
    body_done: bool,
    trailers: Option<HeaderMap>,
    error: Option<Error>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Server<S> {
    /// A server connection over `io`.
    pub fn new(io: S, config: Config) -> Self {
        Server {
            io,
            conn: ServerConnection::new(config),
            buf: BytesMut::with_capacity(READ_SIZE),
            eof: false,
            body_done: true,
            trailers: None,
            error: None,
        }
    }

    /// The next request head, once the previous response is complete.
    /// `Ok(None)`: the connection is over; the output has been written.
    /// On a peer's protocol error, the error response is written and the
    /// error returned ([`InvalidData`](io::ErrorKind::InvalidData)).
    pub async fn next_request(&mut self) -> io::Result<Option<Request<()>>> {
        if self.response_due() {
            return Err(usage_error(crate::UsageError::WrongState));
        }
        loop {
            match self.conn.poll_event(&mut self.buf) {
                Ok(Some(Event::Head { head, .. })) => {
                    self.body_done = false;
                    self.trailers = None;
                    return Ok(Some(head));
                }
                // The end of a request already answered.
                Ok(Some(_)) => {}
                Ok(None) => {
                    if self.conn.is_closed() || self.conn.is_switched() || self.eof {
                        self.flush().await?;
                        return Ok(None);
                    }
                    self.fill().await?;
                }
                Err(err) => {
                    self.error = Some(err);
                    return Err(self.fail().await);
                }
            }
        }
    }

    /// The next piece of the current request's body; `Ok(None)` at its end
    /// (or once the response is complete: the rest is the connection's to
    /// drain). Sends `100 Continue` first if the client waits for it.
    pub async fn read_data(&mut self) -> io::Result<Option<Bytes>> {
        if self.body_done || !self.response_due() {
            return Ok(None);
        }
        loop {
            match self.conn.poll_event(&mut self.buf) {
                Ok(Some(Event::Data(data))) => return Ok(Some(data)),
                Ok(Some(Event::Trailers(fields))) => self.trailers = Some(fields),
                Ok(Some(Event::End(_))) => {
                    self.body_done = true;
                    return Ok(None);
                }
                Ok(Some(_)) => {}
                Ok(None) if self.eof => return Err(peer_closed()),
                Ok(None) => self.fill().await?,
                Err(err) => {
                    self.error = Some(err.clone());
                    return Err(protocol_error(err));
                }
            }
        }
    }

    /// The rest of the current request's body, in one `Bytes` (without a
    /// copy when it arrived in one piece).
    pub async fn read_body(&mut self) -> io::Result<Bytes> {
        let mut pieces = Vec::new();
        while let Some(data) = self.read_data().await? {
            pieces.push(data);
        }
        Ok(match pieces.len() {
            0 => Bytes::new(),
            1 => pieces.pop().unwrap_or_default(),
            _ => pieces.concat().into(),
        })
    }

    /// The trailer fields of the current request, once its body is read.
    pub fn trailers(&self) -> Option<&HeaderMap> {
        self.trailers.as_ref()
    }

    /// `true` when the client sent `Expect: 100-continue` and waits.
    /// Reading the body sends `100 Continue`; a final response refuses it.
    pub fn client_waits_for_continue(&self) -> bool {
        self.conn.client_waits_for_continue()
    }

    /// Queues `100 Continue` if the client waits for it, accepting the
    /// body before the final response is sent.
    pub fn send_continue(&mut self) {
        self.conn.send_continue();
    }

    /// Queues a complete response to the current request.
    pub fn send_response(&mut self, res: impl IntoResponse) -> io::Result<()> {
        self.conn.send_response(res).map_err(usage_error)
    }

    /// Queues a response head; the body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish).
    pub fn send_head(&mut self, res: impl IntoResponseHead) -> io::Result<BodyKind> {
        self.conn.send_head(res).map_err(usage_error)
    }

    /// Queues response body bytes; writes when much is queued.
    pub async fn send_data(&mut self, data: impl Into<Bytes>) -> io::Result<()> {
        self.conn.send_data(data).map_err(usage_error)?;
        if self.conn.output().len() > FLUSH_THRESHOLD {
            self.flush().await?;
        }
        Ok(())
    }

    /// Ends the response, with trailers if it is chunked.
    pub fn finish(&mut self, trailers: Option<HeaderMap>) -> io::Result<()> {
        self.conn.finish(trailers).map_err(usage_error)
    }

    /// Writes everything queued now.
    pub async fn flush(&mut self) -> io::Result<()> {
        write_segments(&mut self.io, self.conn.output()).await?;
        self.io.flush().await
    }

    /// Ends the connection: writes what is queued, shuts down the sending
    /// side, then reads and discards what the client still sends (at most
    /// [`LINGER_BYTES`] for at most
    /// [`LINGER_TIME`]) so that it reads the last
    /// response rather than a reset (RFC 9112 section 9.6). Errors are
    /// ignored: the connection is over either way.
    pub async fn close(mut self) {
        if self.flush().await.is_err() || self.io.shutdown().await.is_err() {
            return;
        }
        let mut scratch = [0u8; 8192];
        let linger = async {
            let mut discarded = 0;
            while discarded < LINGER_BYTES {
                match self.io.read(&mut scratch).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => discarded += n,
                }
            }
        };
        let _ = tokio::time::timeout(LINGER_TIME, linger).await;
    }

    /// The connection, for what this driver does not expose.
    pub fn connection(&mut self) -> &mut ServerConnection {
        &mut self.conn
    }

    /// The stream and the bytes read but not decoded (after a protocol
    /// switch, the new protocol's first bytes).
    pub fn into_parts(self) -> (S, BytesMut) {
        (self.io, self.buf)
    }

    fn response_due(&self) -> bool {
        matches!(self.conn.send_state(), State::Head | State::Body)
    }

    /// After a failure: the error response if one is due, written out.
    async fn fail(&mut self) -> io::Error {
        let Some(err) = self.error.take() else {
            return usage_error(crate::UsageError::WrongState);
        };
        let _ = self.conn.send_error_response(&err);
        let _ = self.flush().await;
        protocol_error(err)
    }

    /// Writes what is queued, then reads more.
    async fn fill(&mut self) -> io::Result<()> {
        self.flush().await?;
        if read_into(&mut self.io, &mut self.buf).await? == 0 {
            self.eof = true;
            self.conn.recv_eof();
        }
        Ok(())
    }
}

/// A client connection over an async stream: one request at a time, each
/// answered before the next is sent, on one connection while the verdict
/// allows ([`is_reusable`](Self::is_reusable)).
#[derive(Debug)]
pub struct Client<S> {
    io: S,
    conn: ClientConnection,
    buf: BytesMut,
    eof: bool,
}

impl Client<TcpStream> {
    /// Connects with `TCP_NODELAY` and the default [`Config`].
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Client::new(stream, Config::default()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Client<S> {
    /// A client connection over `io`.
    pub fn new(io: S, config: Config) -> Self {
        Client {
            io,
            conn: ClientConnection::new(config),
            buf: BytesMut::with_capacity(READ_SIZE),
            eof: false,
        }
    }

    /// Sends `req` and reads its response with the whole body. Interim
    /// responses are skipped; trailers are dropped. The request needs a
    /// `Host` field or an absolute URI (sent in absolute form).
    pub async fn send(&mut self, req: impl IntoRequest) -> io::Result<Response<Bytes>> {
        self.conn.send_request(req).map_err(usage_error)?;
        write_segments(&mut self.io, self.conn.output()).await?;
        self.io.flush().await?;
        let mut head = None;
        let mut pieces = Vec::new();
        loop {
            match self.conn.poll_event(&mut self.buf) {
                Ok(Some(Event::Head { head: h, .. })) => head = Some(h),
                Ok(Some(Event::Data(data))) => pieces.push(data),
                Ok(Some(Event::End(_))) => break,
                Ok(Some(_)) => {}
                Ok(None) if self.eof => return Err(peer_closed()),
                Ok(None) => {
                    if read_into(&mut self.io, &mut self.buf).await? == 0 {
                        self.eof = true;
                        self.conn.recv_eof();
                    }
                }
                Err(err) => return Err(protocol_error(err)),
            }
        }
        let head = head.ok_or_else(peer_closed)?;
        let body = match pieces.len() {
            0 => Bytes::new(),
            1 => pieces.pop().unwrap_or_default(),
            _ => pieces.concat().into(),
        };
        let (parts, ()) = head.into_parts();
        Ok(Response::from_parts(parts, body))
    }

    /// `true` while another request may be sent on this connection.
    pub fn is_reusable(&self) -> bool {
        !self.eof && !self.conn.is_closed() && self.conn.keep_alive().is_reusable()
    }

    /// The connection, for what this driver does not expose.
    pub fn connection(&mut self) -> &mut ClientConnection {
        &mut self.conn
    }

    /// The stream and the bytes read but not decoded.
    pub fn into_parts(self) -> (S, BytesMut) {
        (self.io, self.buf)
    }
}
