//! A blocking driver over `std::io::{Read, Write}` (feature `blocking`).
//!
//! [`serve`] answers the requests of one connection with a function from
//! `Request<Bytes>` to `Response<Bytes>`; [`serve_streaming`] and [`Server`]
//! let the application read the request body and write the response body
//! piece by piece; [`Client`] sends requests and reads their responses on
//! one connection while its verdict allows reuse. The stream is anything
//! that reads and writes: a `TcpStream`, `&TcpStream`, a TLS stream.
//!
//! ```no_run
//! use std::net::TcpListener;
//! use h1proto::Config;
//! use h1proto::adapter::blocking;
//!
//! let listener = TcpListener::bind("127.0.0.1:8080")?;
//! for stream in listener.incoming() {
//!     let stream = stream?;
//!     std::thread::spawn(move || {
//!         stream.set_nodelay(true).ok();
//!         let _ = blocking::serve(&stream, Config::default(), |req| {
//!             http::Response::new(format!("{} {}\n", req.method(), req.uri()).into())
//!         });
//!         blocking::lingering_close(&stream);
//!     });
//! }
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use http::{HeaderMap, Request, Response};

use super::{FLUSH_THRESHOLD, LINGER_BYTES, LINGER_TIME, READ_SIZE};
use super::{peer_closed, protocol_error, usage_error};
use crate::conn::State;
use crate::encode::{IntoRequest, IntoResponse, IntoResponseHead};
use crate::{BodyKind, ClientConnection, Config, Error, Event, Segments, ServerConnection};

/// Writes everything queued in `out`, looping on partial writes: one
/// `write` when it is one contiguous segment (a head with a small body, or
/// the coalesced responses to pipelined requests), otherwise one
/// `write_vectored` per batch of segments.
pub fn write_segments<W: Write + ?Sized>(io: &mut W, out: &mut Segments) -> io::Result<()> {
    while out.has_remaining() {
        let result = if out.segment_count() == 1 {
            io.write(out.chunk())
        } else {
            let mut slices = [IoSlice::new(&[]); 64];
            let n = out.io_slices(&mut slices);
            io.write_vectored(&slices[..n])
        };
        let written = match result {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => written,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.advance(written);
    }
    Ok(())
}

/// The destination of a connection's reads: [`READ_SIZE`] bytes, zeroed
/// once. `Read` needs an initialized destination; zeroing `READ_SIZE`
/// bytes of the connection's buffer before every read would cost more than
/// copying what a read returns (often a head of a few dozen bytes).
struct Scratch(Box<[u8]>);

impl Scratch {
    fn new() -> Self {
        Scratch(vec![0; READ_SIZE].into_boxed_slice())
    }

    /// Reads up to [`READ_SIZE`] more bytes and appends them to `buf`;
    /// `Ok(0)` is the peer's EOF.
    fn read_into<R: Read + ?Sized>(&mut self, io: &mut R, buf: &mut BytesMut) -> io::Result<usize> {
        loop {
            match io.read(&mut self.0) {
                Ok(n) => {
                    buf.extend_from_slice(&self.0[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scratch({} bytes)", self.0.len())
    }
}

/// Closes a server's TCP connection the way RFC 9112 section 9.6 asks:
/// shuts down the sending side, then reads and discards what the client
/// still sends (at most [`LINGER_BYTES`], for at most [`LINGER_TIME`]) so
/// that the client reads the last response rather than a reset. Errors are
/// ignored: the connection is over either way.
pub fn lingering_close(stream: &TcpStream) {
    if stream.shutdown(Shutdown::Write).is_err() {
        return;
    }
    let deadline = Instant::now() + LINGER_TIME;
    let mut scratch = [0u8; 8192];
    let mut discarded = 0;
    while discarded < LINGER_BYTES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match (&*stream).read(&mut scratch) {
            Ok(0) => break,
            Ok(n) => discarded += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// Serves one connection: each request is read with its whole body and
/// answered with what `handler` returns. Returns when the connection is
/// over (the verdict was to close, the peer closed, or the connection
/// switched protocols); a peer's protocol error is answered with its
/// status and `Connection: close`, then returned as
/// [`InvalidData`](io::ErrorKind::InvalidData).
///
/// Bodies are collected in memory whatever their size: use
/// [`serve_streaming`] or [`Server`] for large ones.
pub fn serve<S, F>(io: S, config: Config, mut handler: F) -> io::Result<()>
where
    S: Read + Write,
    F: FnMut(Request<Bytes>) -> Response<Bytes>,
{
    serve_streaming(io, config, |req, server| {
        let body = server.read_body()?;
        let (parts, ()) = req.into_parts();
        server.send_response(handler(Request::from_parts(parts, body)))
    })
}

/// Serves one connection with a handler that streams: it gets each request
/// head and the [`Server`], reads the body with [`Server::read_data`] and
/// answers with [`Server::send_response`], or [`Server::send_head`],
/// [`Server::send_data`] and [`Server::finish`]. A body the handler leaves
/// unread is drained or the connection closed, as the connection decides.
/// A handler error ends the connection (after an error response if a peer's
/// protocol error caused it and no response was started).
pub fn serve_streaming<S, F>(io: S, config: Config, mut handler: F) -> io::Result<()>
where
    S: Read + Write,
    F: FnMut(Request<()>, &mut Server<S>) -> io::Result<()>,
{
    let mut server = Server::new(io, config);
    while let Some(req) = server.next_request()? {
        if let Err(err) = handler(req, &mut server) {
            server.fail();
            return Err(err);
        }
    }
    Ok(())
}

/// One server connection over a blocking stream, driven by the caller:
/// [`next_request`](Self::next_request), then the body and the response.
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
    scratch: Scratch,
    eof: bool,
    body_done: bool,
    trailers: Option<HeaderMap>,
    error: Option<Error>,
}

impl<S: Read + Write> Server<S> {
    /// A server connection over `io`.
    pub fn new(io: S, config: Config) -> Self {
        Server {
            io,
            conn: ServerConnection::new(config),
            buf: BytesMut::with_capacity(READ_SIZE),
            scratch: Scratch::new(),
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
    pub fn next_request(&mut self) -> io::Result<Option<Request<()>>> {
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
                        self.flush()?;
                        return Ok(None);
                    }
                    self.fill()?;
                }
                Err(err) => {
                    self.error = Some(err);
                    return Err(self.fail());
                }
            }
        }
    }

    /// The next piece of the current request's body; `Ok(None)` at its end
    /// (or once the response is complete: the rest is the connection's to
    /// drain). Sends `100 Continue` first if the client waits for it.
    pub fn read_data(&mut self) -> io::Result<Option<Bytes>> {
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
                Ok(None) => self.fill()?,
                Err(err) => {
                    self.error = Some(err.clone());
                    return Err(protocol_error(err));
                }
            }
        }
    }

    /// The rest of the current request's body, in one `Bytes` (without a
    /// copy when it arrived in one piece).
    pub fn read_body(&mut self) -> io::Result<Bytes> {
        let mut pieces = Vec::new();
        while let Some(data) = self.read_data()? {
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
    pub fn send_data(&mut self, data: impl Into<Bytes>) -> io::Result<()> {
        self.conn.send_data(data).map_err(usage_error)?;
        if self.conn.output().len() > FLUSH_THRESHOLD {
            self.flush()?;
        }
        Ok(())
    }

    /// Ends the response, with trailers if it is chunked.
    pub fn finish(&mut self, trailers: Option<HeaderMap>) -> io::Result<()> {
        self.conn.finish(trailers).map_err(usage_error)
    }

    /// Writes everything queued now.
    pub fn flush(&mut self) -> io::Result<()> {
        write_segments(&mut self.io, self.conn.output())?;
        self.io.flush()
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
    fn fail(&mut self) -> io::Error {
        let Some(err) = self.error.take() else {
            return usage_error(crate::UsageError::WrongState);
        };
        let _ = self.conn.send_error_response(&err);
        let _ = self.flush();
        protocol_error(err)
    }

    /// Writes what is queued, then reads more.
    fn fill(&mut self) -> io::Result<()> {
        self.flush()?;
        if self.scratch.read_into(&mut self.io, &mut self.buf)? == 0 {
            self.eof = true;
            self.conn.recv_eof();
        }
        Ok(())
    }
}

/// A client connection over a blocking stream: one request at a time, each
/// answered before the next is sent, on one connection while the verdict
/// allows ([`is_reusable`](Self::is_reusable)).
///
/// ```no_run
/// use h1proto::adapter::blocking::Client;
///
/// let mut client = Client::connect("127.0.0.1:8080")?;
/// let res = client.send(http::Request::get("/").header("host", "127.0.0.1:8080"))?;
/// println!("{} {:?}", res.status(), res.body());
/// if client.is_reusable() {
///     client.send(http::Request::head("/").header("host", "127.0.0.1:8080"))?;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Client<S> {
    io: S,
    conn: ClientConnection,
    buf: BytesMut,
    scratch: Scratch,
    eof: bool,
}

impl Client<TcpStream> {
    /// Connects with `TCP_NODELAY` and the default [`Config`].
    pub fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Client::new(stream, Config::default()))
    }
}

impl<S: Read + Write> Client<S> {
    /// A client connection over `io`.
    pub fn new(io: S, config: Config) -> Self {
        Client {
            io,
            conn: ClientConnection::new(config),
            buf: BytesMut::with_capacity(READ_SIZE),
            scratch: Scratch::new(),
            eof: false,
        }
    }

    /// Sends `req` and reads its response with the whole body. Interim
    /// responses are skipped; trailers are dropped. The request needs a
    /// `Host` field or an absolute URI (sent in absolute form).
    pub fn send(&mut self, req: impl IntoRequest) -> io::Result<Response<Bytes>> {
        self.conn.send_request(req).map_err(usage_error)?;
        write_segments(&mut self.io, self.conn.output())?;
        self.io.flush()?;
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
                    if self.scratch.read_into(&mut self.io, &mut self.buf)? == 0 {
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
