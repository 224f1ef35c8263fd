//! A driver over tokio's `AsyncRead + AsyncWrite` (feature `tokio`).
//!
//! [`Server`] and [`Client`] run a [`ServerSession`] / [`ClientSession`]
//! over any tokio stream: every protocol decision, timeouts included, is
//! the session's; this module only reads, writes, sleeps until the
//! session's deadline and closes. [`serve`] answers each request of a
//! connection with an async function from `Request<Bytes>` to
//! `Response<Bytes>`. Only tokio's `io-util`, `net` and `time` features
//! are used; the runtime is the application's and needs its timers
//! (`enable_time()`, or `enable_all()`, on a runtime built by hand; tokio
//! panics at the first wait otherwise). Time is read from tokio's clock,
//! the one its timers run on, so a paused clock (`tokio::time::pause`,
//! `#[tokio::test(start_paused = true)]`) moves every timeout too: an
//! application's tests may run its 30-second timeouts at once.
//!
//! ```no_run
//! use h1proto::Config;
//! use h1proto::adapter::tokio::serve;
//! use tokio::net::TcpListener;
//!
//! # async fn run() -> std::io::Result<()> {
//! let listener = TcpListener::bind("127.0.0.1:8080").await?;
//! loop {
//!     let Ok((stream, _)) = listener.accept().await else {
//!         // Out of descriptors (`EMFILE`) and the like: pause, neither
//!         // spin nor exit.
//!         tokio::time::sleep(std::time::Duration::from_millis(100)).await;
//!         continue;
//!     };
//!     let _ = stream.set_nodelay(true);
//!     tokio::spawn(serve(stream, Config::default(), |req| async move {
//!         http::Response::new(format!("{} {}\n", req.method(), req.uri()).into())
//!     }));
//! }
//! # }
//! ```
//!
//! The accept loop is the application's: `examples/hello_server.rs` adds
//! a connection cap, a back-off and a log that does not repeat
//! (`examples/common/mod.rs`, `docs/security.md`).

use std::future::{Future, poll_fn};
use std::io::{self, IoSlice};
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use bytes::{Buf, Bytes};
use http::{Request, Response};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio::time::{self, Sleep};

use super::driver::{self, Call, Drive, Parts, RuntimeIo, Waits};
use super::sealed::Runtime as _;
use super::{Driver, Runtime, sealed};
use crate::{ClientSession, ServerSession, Session, SessionError, Step};

/// The tokio runtime, for [`Driver`].
#[derive(Debug)]
pub enum Tokio {}

impl Runtime for Tokio {}

/// What a connection driven on tokio keeps besides its session: what
/// the driving loop keeps of every connection (the shutdown signal, when
/// the timer was last set, the half-close setting), and the timer.
#[derive(Default)]
pub struct TokioState {
    waits: Waits,
    /// The timer for the session's deadlines: made at the first wait that
    /// has one, then moved (see [`TokioIo::poll_sleep_until`]).
    timer: Option<Pin<Box<Sleep>>>,
}

impl sealed::Runtime for Tokio {
    type PerConnection = TokioState;

    /// Tokio's clock, which its timers run on: the system's, unless the
    /// application paused it (`tokio::time::pause`, as tests do), when it
    /// moves with the timers alone.
    #[inline]
    fn now() -> Instant {
        time::Instant::now().into_std()
    }
}

/// One server connection over an async stream, driven by the application:
/// [`next_request`](Driver::next_request), then the body and the response
/// (the session's own calls, on the server itself), and
/// [`close`](Driver::close) at the end.
///
/// An echo: the response head first, then the request body streamed back
/// as it arrives. A client that sent `Expect: 100-continue` gets
/// `100 Continue` when the body is first read, ahead of the head (still
/// queued then), and the connection is kept.
///
/// ```
/// use h1proto::adapter::tokio::Server;
/// use tokio::io::{AsyncRead, AsyncWrite};
///
/// async fn echo(stream: impl AsyncRead + AsyncWrite + Unpin) -> std::io::Result<()> {
///     let mut server = Server::new(stream, h1proto::Config::default());
///     let served = async {
///         while let Some(_req) = server.next_request().await? {
///             server.sender().send_head(http::Response::new(()))?; // chunked
///             while let Some(data) = server.read_data().await? {
///                 server.send_data(data).await?;
///             }
///             server.sender().finish(None)?;
///         }
///         Ok(())
///     }
///     .await;
///     // After an error too: the answer to a client's error (a 400, a
///     // 408) is queued, and `close` writes it.
///     server.close().await;
///     served
/// }
/// # use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// # async fn read_until(client: &mut tokio::io::DuplexStream, end: &[u8]) -> String {
/// #     let (mut got, mut buf) = (Vec::new(), [0u8; 1024]);
/// #     while !got.ends_with(end) {
/// #         let n = client.read(&mut buf).await.unwrap();
/// #         assert!(n > 0, "closed early: {got:?}");
/// #         got.extend_from_slice(&buf[..n]);
/// #     }
/// #     String::from_utf8(got).unwrap()
/// # }
/// # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// # rt.block_on(async {
/// #     let (mut client, io) = tokio::io::duplex(1 << 16);
/// #     let server = tokio::spawn(echo(io));
/// #     for _ in 0..2 {
/// #         client.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\
/// #             Content-Length: 5\r\n\r\n").await.unwrap();
/// #         // The body only once `100 Continue` came.
/// #         let interim = read_until(&mut client, b"\r\n\r\n").await;
/// #         assert!(interim.starts_with("HTTP/1.1 100 Continue\r\n\r\n"), "{interim}");
/// #         client.write_all(b"hello").await.unwrap();
/// #         let echo = interim + &read_until(&mut client, b"0\r\n\r\n").await;
/// #         assert!(echo.ends_with("\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), "{echo}");
/// #         assert!(!echo.contains("close"), "{echo}");
/// #     }
/// #     drop(client);
/// #     server.await.unwrap().unwrap();
/// # });
/// ```
pub type Server<S> = Driver<S, ServerSession, Tokio>;

/// A client connection over an async stream. [`send`](Driver::send)
/// sends a request and reads its response, whole. A request whose body is
/// streamed begins with the session's `sender().send_head(..)`, its pieces
/// go with [`send_data`](Driver::send_data) (which writes once more than
/// `Config::flush_threshold` is queued, and sees a refusal the server
/// sends during the upload), and `sender().finish(..)` ends it; its
/// response is read with [`next_response`](Driver::next_response) and
/// [`read_data`](Driver::read_data). Requests may also be queued with
/// `send_request` before their responses are read (pipelining), each
/// response then read in order. `Host` is the caller's to set (or an
/// absolute-form target's authority gives it).
///
/// ```
/// use h1proto::adapter::tokio::Client;
/// use tokio::io::{AsyncRead, AsyncWrite};
///
/// async fn upload(stream: impl AsyncRead + AsyncWrite + Unpin) -> std::io::Result<u16> {
///     let mut client = Client::new(stream, h1proto::Config::default());
///     // One exchange, whole.
///     let req = http::Request::get("/").header("host", "example.com").body("");
///     let res = client.send(req.unwrap()).await?;
///     assert_eq!(res.body(), "hello");
///     // A streamed upload (chunked: no `Content-Length` given).
///     let head = http::Request::post("/upload").header("host", "example.com");
///     client.sender().send_head(head)?;
///     for piece in ["one ", "two ", "three"] {
///         client.send_data(piece).await?;
///     }
///     client.sender().finish(None)?;
///     let res = client.next_response().await?.expect("a response is due");
///     while let Some(_data) = client.read_data().await? {}
///     Ok(res.status().as_u16())
/// }
/// # use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// # rt.block_on(async {
/// #     let (io, mut server) = tokio::io::duplex(1 << 16);
/// #     let serve = async move {
/// #         let (mut got, mut buf) = (Vec::new(), [0u8; 1024]);
/// #         while !got.ends_with(b"\r\n\r\n") {
/// #             let n = server.read(&mut buf).await.unwrap();
/// #             got.extend_from_slice(&buf[..n]);
/// #         }
/// #         server.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello").await.unwrap();
/// #         got.clear();
/// #         while !got.ends_with(b"0\r\n\r\n") {
/// #             let n = server.read(&mut buf).await.unwrap();
/// #             got.extend_from_slice(&buf[..n]);
/// #         }
/// #         let text = String::from_utf8(got).unwrap();
/// #         assert!(text.contains("\r\nthree\r\n0\r\n\r\n"), "{text}");
/// #         server.write_all(b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n").await.unwrap();
/// #         server
/// #     };
/// #     let (status, _server) = tokio::join!(upload(io), serve);
/// #     assert_eq!(status.unwrap(), 201);
/// # });
/// ```
pub type Client<S> = Driver<S, ClientSession, Tokio>;

impl<S: AsyncRead + AsyncWrite + Unpin, T: Session> Drive for Driver<S, T, Tokio> {
    type Io<'a>
        = TokioIo<'a, S>
    where
        Self: 'a;
    type Session = T;

    /// The stream and the timer lent as a [`RuntimeIo`].
    #[inline]
    fn parts(&mut self) -> Parts<'_, TokioIo<'_, S>, T> {
        Parts {
            io: TokioIo {
                stream: &mut self.io,
                timer: &mut self.runtime.timer,
            },
            session: &mut self.session,
            wall: &mut self.wall,
            waits: &mut self.runtime.waits,
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin, T: Session> Driver<S, T, Tokio> {
    /// Makes any session call until it is ready, doing the I/O it asks
    /// for: the way to every session call without a wrapper here, e.g.
    /// `server.call(ServerSession::read_body)` or
    /// `client.call(ClientSession::next_full_response)`. The loop is the
    /// one [`Conn::call`](super::driver::Conn::call) runs, over the
    /// stream. The future may be dropped before it is ready (a timeout
    /// around it): what was read or written by then is the session's, and
    /// the call may be made again.
    ///
    /// # Errors
    ///
    /// An I/O error, or the session's error as an `io::Error` (see
    /// [`SessionError`]).
    #[inline]
    pub fn call<V>(
        &mut self,
        call: impl FnMut(&mut T, Instant) -> Result<Step<V>, SessionError>,
    ) -> impl Future<Output = io::Result<V>> {
        Call::new(self, call)
    }

    /// Reads once what the peer sends ahead of the application's next
    /// call, when the session wants it ([`Session::wants_read`]), and
    /// reports it. No deadline runs, and while the session wants no input
    /// this waits for ever: it is for an application that waits for
    /// something else meanwhile and races this against it (it is
    /// cancel-safe). A proxy reading a request body from its client
    /// watches the upstream for an answer that way, without starting the
    /// upstream's response deadline; the session's next call takes what
    /// came.
    ///
    /// # Errors
    ///
    /// A read error.
    pub async fn read_ahead(&mut self) -> io::Result<()> {
        if !self.session.wants_read() {
            return std::future::pending().await;
        }
        poll_fn(|cx| self.parts().poll_read_ahead(cx))
            .await
            .map(drop)
    }
}

/// A tokio stream and the connection's timer, lent for one call as the
/// runtime's I/O of the driving loop.
pub(crate) struct TokioIo<'a, S> {
    stream: &'a mut S,
    timer: &'a mut Option<Pin<Box<Sleep>>>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> RuntimeIo for TokioIo<'_, S> {
    #[inline]
    fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>> {
        poll_read(self.stream, session, cx)
    }

    /// One segment (a response with its body, most often) with a plain
    /// write, more with a vectored one.
    #[inline]
    fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>> {
        let stream = Pin::new(&mut *self.stream);
        let output = session.output();
        if output.segment_count() == 1 {
            return stream.poll_write(cx, Buf::chunk(output));
        }
        let mut slices = [IoSlice::new(&[]); 16];
        let n = output.io_slices(&mut slices);
        stream.poll_write_vectored(cx, &slices[..n])
    }

    fn poll_shutdown_write(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.stream).poll_shutdown(cx)
    }

    /// The one timer, made at the first deadline and moved to each later
    /// one it is asked for: registering a timer for every wait would cost
    /// more than the request waited for.
    fn poll_sleep_until(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        let at = time::Instant::from_std(at);
        let timer = match self.timer {
            Some(timer) => {
                if timer.deadline() != at {
                    timer.as_mut().reset(at);
                }
                timer
            }
            None => self.timer.insert(Box::pin(time::sleep_until(at))),
        };
        timer.as_mut().poll(cx)
    }

    #[inline]
    fn now(&self) -> Instant {
        Tokio::now()
    }

    /// The stream's own shutdown too (a TLS stream's `close_notify`, a
    /// buffered one's flush), then the socket closes when dropped.
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_shutdown_write(cx)
    }
}

/// What a read into the driver's stack takes at most, while the session
/// holds no read buffer: what the session's own first reads ask for.
const STACK_READ: usize = 1024;

/// One poll of a read into the session's buffer. While the session holds
/// none (a new connection, an idle one that gave its buffers back), the
/// read goes to the stack first and the session's buffer is made only
/// once bytes came, for them: a connection that waits does so without a
/// read buffer, and one that sent a small head holds a small one.
fn poll_read<S: AsyncRead + Unpin>(
    io: &mut S,
    session: &mut dyn Session,
    cx: &mut Context<'_>,
) -> Poll<io::Result<usize>> {
    if session.holds_read_buf() {
        return pin!(io.read_buf(session.read_buf())).poll(cx);
    }
    let mut room = [0u8; STACK_READ];
    let mut read = tokio::io::ReadBuf::new(&mut room);
    match Pin::new(io).poll_read(cx, &mut read) {
        Poll::Ready(Ok(())) => {
            let filled = read.filled();
            session.read_buf().extend_from_slice(filled);
            Poll::Ready(Ok(filled.len()))
        }
        Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
        Poll::Pending => Poll::Pending,
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Server<S> {
    /// Starts a graceful shutdown of this connection when `signal`
    /// completes (a `tokio::sync::watch` change, a `Notify`, ...).
    pub fn shutdown_on(&mut self, signal: impl Future<Output = ()> + Send + 'static) {
        self.runtime.waits.shutdown_on(signal);
    }

    /// Whether a client that closes its sending half (a `shutdown` of its
    /// write side, an EOF here) while its request is served is still
    /// answered. `false`, the default: [`while_connected`](Self::while_connected)
    /// takes the close for the client's going away and gives the work up,
    /// as hyper's server does by default (its `half_close(false)`) and
    /// nginx in front of an upstream; a browser or a program that gives up
    /// on a request closes its socket that way. `true`: the work goes on
    /// and its answer is sent, for clients that half-close after their
    /// request and then read the answer (`nc -N`, some scripts); only a
    /// failed connection (a reset seen before the client's close: after
    /// it, nothing more is read) ends it then. The wire cannot tell the
    /// two closes apart: with `true`, a client that gives up (a browser
    /// leaving the page, curl's `--max-time`) is not noticed either, and
    /// its work runs to its end. Set it right after [`Driver::new`], as
    /// [`shutdown_on`](Self::shutdown_on): in a [`serve`]-like loop of the
    /// application's own, or before the server is handed to the tower
    /// bridge's `serve_connection` (feature `tower`).
    pub fn set_half_close(&mut self, allow: bool) {
        self.runtime.waits.set_half_close(allow);
    }

    /// Awaits `work` (a handler's answer, a response body's next piece)
    /// while watching the client: what the session wants of the peer's
    /// input is read ahead meanwhile, as [`read_ahead`](Driver::read_ahead)
    /// reads it, and when the client is gone first (its connection
    /// failed, or it closed its side, unless
    /// [`set_half_close`](Self::set_half_close) allows that) `work` is
    /// dropped, cancelling it, and the error says why. A close read
    /// earlier (beside a write that waited) counts too. Work that is ready
    /// at its first poll reads nothing. The watch reads no further ahead
    /// than the session does (one read's worth, `Config::read_size`): a
    /// client that sent more than that past what was taken (a deep
    /// pipeline, a large body not read yet) is watched again once some
    /// of it is taken, as hyper's server watches only while nothing is
    /// buffered. [`serve`] and the tower bridge
    /// await the application's answers through this; an application
    /// driving [`Server`] itself may too. A connection whose work was given
    /// up has nothing more to do but [`close`](Driver::close).
    ///
    /// ```
    /// use h1proto::adapter::tokio::Server;
    /// use tokio::io::{AsyncRead, AsyncWrite};
    ///
    /// async fn slow_answers(stream: impl AsyncRead + AsyncWrite + Unpin) -> std::io::Result<()> {
    ///     let mut server = Server::new(stream, h1proto::Config::default());
    ///     let served = async {
    ///         while let Some(_req) = server.next_request().await? {
    ///             // Cancelled if the client leaves during the second.
    ///             let page = server.while_connected(async {
    ///                 tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    ///                 http::Response::new(bytes::Bytes::from("done\n"))
    ///             });
    ///             let res = page.await?;
    ///             server.sender().send_response(res)?;
    ///         }
    ///         Ok(())
    ///     }
    ///     .await;
    ///     server.close().await; // after an error too (see `Server`)
    ///     served
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// The read's error when the connection failed (a reset), or
    /// `UnexpectedEof` when the client closed its side; `work` was
    /// dropped.
    pub fn while_connected<F: Future>(
        &mut self,
        work: F,
    ) -> impl Future<Output = io::Result<F::Output>> {
        // The future itself, not one around it: `work` (a service's
        // future, often large) is kept once.
        driver::while_connected(self, work)
    }

    /// [`serve`]'s handler's answer, unless the client goes first.
    fn answered<F: Future>(&mut self, work: F) -> impl Future<Output = io::Result<F::Output>> {
        self.while_connected(work)
    }

    /// Reads what the session wants of the client's input, and is ready
    /// once the client is gone, with the error that says how (see
    /// [`while_connected`](Self::while_connected)). While the session
    /// wants no input (its read-ahead bound is reached, the client's close
    /// was allowed), nothing is read and the client is not watched.
    #[cfg(feature = "tower")]
    pub(crate) fn poll_gone(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        self.parts().poll_gone(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Client<S> {
    /// `true` while this connection, idle in a pool, may carry another
    /// request: it [`is_reusable`](Driver::is_reusable) (the pool's idle
    /// timeout applied), and a look at the stream that does not wait finds
    /// neither its end (the server closed it) nor bytes no request asked
    /// for. What a pool asks before it hands a connection out, and when
    /// it sweeps. What the look reads is reported to the session.
    pub fn is_alive(&mut self) -> bool {
        if !self.is_reusable() {
            return false;
        }
        let mut cx = Context::from_waker(Waker::noop());
        match poll_read(&mut self.io, &mut self.session, &mut cx) {
            Poll::Pending => true,
            Poll::Ready(Ok(n)) => {
                self.session.handle_read(n, Tokio::now());
                false
            }
            Poll::Ready(Err(_)) => false,
        }
    }
}

io_calls!(
    async await;
    future;
    [AsyncRead + AsyncWrite + Unpin];
    [F, Fut] [F: FnMut(Request<Bytes>) -> Fut, Fut: Future<Output = Response<Bytes>>]
);
