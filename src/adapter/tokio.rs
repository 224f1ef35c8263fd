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
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio::time::{self, Sleep};

use super::driver::Alarm;
use super::sealed::Runtime as _;
use super::{Driver, Runtime, sealed};
use crate::{ClientSession, Io, ServerSession, Session, SessionError, Step};

/// A signal that starts a graceful shutdown when it completes.
type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The tokio runtime, for [`Driver`].
#[derive(Debug)]
pub enum Tokio {}

impl Runtime for Tokio {}

/// What a connection driven on tokio keeps besides its session.
#[derive(Default)]
pub struct TokioState {
    shutdown: Option<Signal>,
    /// The timer for the session's deadlines (see [`arm`]).
    timer: Option<Pin<Box<Sleep>>>,
    /// What the shutdown signal and the timer are polled with: they are
    /// polled again only when its waker rang, when the timer was moved,
    /// or when the task's waker changed.
    alarm: Alarm,
    /// The client's close of its sending half does not end an exchange
    /// ([`Server::set_half_close`]).
    half_close: bool,
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
///     while let Some(_req) = server.next_request().await? {
///         server.sender().send_head(http::Response::new(()))?; // chunked
///         while let Some(data) = server.read_data().await? {
///             server.send_data(data).await?;
///         }
///         server.sender().finish(None)?;
///     }
///     server.close().await;
///     Ok(())
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

/// A client connection over an async stream. Requests may be queued with
/// the session's `send_request` before their responses are read
/// (pipelining); [`send`](Driver::send) sends one and reads its response.
pub type Client<S> = Driver<S, ClientSession, Tokio>;

impl<S: AsyncRead + AsyncWrite + Unpin, T: Session> Driver<S, T, Tokio> {
    /// Makes any session call until it is ready, doing the I/O it asks
    /// for: the way to every session call without a wrapper here, e.g.
    /// `server.call(ServerSession::read_body)` or
    /// `client.call(ClientSession::next_full_response)`.
    ///
    /// # Errors
    ///
    /// An I/O error, or the session's error as an `io::Error` (see
    /// [`SessionError`]).
    pub fn call<V>(
        &mut self,
        call: impl FnMut(&mut T, Instant) -> Result<Step<V>, SessionError>,
    ) -> impl Future<Output = io::Result<V>> {
        Call {
            driver: self,
            call,
            now: None,
            under_way: None,
            waited: false,
        }
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
        poll_fn(|cx| self.poll_read_ahead(cx)).await.map(drop)
    }

    /// One poll of a read the application did not ask for, reported to
    /// the session when it completes: the bytes read, 0 at the peer's
    /// close.
    fn poll_read_ahead(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let n = std::task::ready!(poll_read(&mut self.io, &mut self.session, cx))?;
        let now = self.now();
        self.session.handle_read(n, now);
        Poll::Ready(Ok(n))
    }

    /// One poll of an I/O, raced against the session's deadline and the
    /// shutdown signal, and, for a write that cannot complete at once, a
    /// read the session wants beside it (the duplex contract: an answer
    /// during an upload, a pipelined request while an answer is
    /// written). The deadline, the timer, the signal and the read are
    /// looked at only when the I/O cannot complete at once, in
    /// [`poll_wait`](Self::poll_wait), out of line: an I/O that completes
    /// at once, the usual case, costs the call no frame of its own.
    #[inline(always)]
    fn poll_io(
        &mut self,
        cx: &mut Context<'_>,
        step: Io,
        now: Instant,
        waited: &mut bool,
    ) -> Poll<Done> {
        let (io, session) = (&mut self.io, &mut self.session);
        // A fresh I/O future each poll: all three are cancel-safe, and
        // none keeps state between polls.
        let io_done = match step {
            Io::Read => poll_read(io, session, cx),
            Io::Write if session.output().segment_count() == 1 => {
                Pin::new(&mut *io).poll_write(cx, Buf::chunk(session.output()))
            }
            Io::Write => {
                let mut slices = [IoSlice::new(&[]); 16];
                let n = session.output().io_slices(&mut slices);
                Pin::new(&mut *io).poll_write_vectored(cx, &slices[..n])
            }
            _ => pin!(io.shutdown()).poll(cx).map_ok(|()| 0),
        };
        match io_done {
            Poll::Ready(done) => Poll::Ready(Done::Io(step, done)),
            Poll::Pending => self.poll_wait(cx, step, now, waited),
        }
    }

    /// The rest of [`poll_io`](Self::poll_io) once its I/O has to wait.
    #[inline(never)]
    fn poll_wait(
        &mut self,
        cx: &mut Context<'_>,
        step: Io,
        now: Instant,
        waited: &mut bool,
    ) -> Poll<Done> {
        let (io, session, rt) = (&mut self.io, &mut self.session, &mut self.runtime);
        if step == Io::Write && session.wants_read() {
            if let Poll::Ready(done) = poll_read(io, session, cx) {
                return Poll::Ready(Done::Io(Io::Read, done));
            }
        }
        let mut due = false;
        if !*waited {
            *waited = true;
            due = arm(&mut rt.timer, session.poll_timeout(), now);
        }
        let (waker, rang) = rt.alarm.check(cx);
        due |= rang;
        if due {
            // Both are polled, whichever is ready: each registers the
            // alarm only when polled, and a ring is taken once. A timer
            // moved by `arm` and not polled would ring no one.
            let mut cx = Context::from_waker(waker);
            let signalled =
                (rt.shutdown.as_mut()).is_some_and(|s| s.as_mut().poll(&mut cx).is_ready());
            let expired = (rt.timer.as_mut()).is_some_and(|t| t.as_mut().poll(&mut cx).is_ready());
            if signalled {
                return Poll::Ready(Done::Signal);
            }
            if expired {
                return Poll::Ready(Done::Io(step, Err(io::ErrorKind::TimedOut.into())));
            }
        }
        Poll::Pending
    }
}

/// A [`Driver::call`] under way: one future for the whole call, the I/O
/// polled in it (a future per I/O costs more than the I/O's own work),
/// and no more state than it keeps across polls, since a connection's
/// task holds it while the connection waits.
struct Call<'a, S, T, F> {
    driver: &'a mut Driver<S, T, Tokio>,
    call: F,
    /// The clock as of the call's start or its last I/O that waited
    /// (read at the first poll).
    now: Option<Instant>,
    /// The I/O under way, if the call asked for one.
    under_way: Option<Io>,
    /// Whether that I/O had to wait (the timer was then armed).
    waited: bool,
}

// `call` is never pinned: the future only moves it by reference.
impl<S, T, F> Unpin for Call<'_, S, T, F> {}

impl<S, T, V, F> Future for Call<'_, S, T, F>
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: Session,
    F: FnMut(&mut T, Instant) -> Result<Step<V>, SessionError>,
{
    type Output = io::Result<V>;

    /// Inlined into the task that awaits the call: the value (a request
    /// head, a few hundred bytes) is then written where the task keeps it,
    /// not returned through a copy, and a call that completes at once (a
    /// pipelined request already read) costs no call frame of its own.
    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<V>> {
        let this = self.get_mut();
        let driver = &mut *this.driver;
        let mut now = *this.now.get_or_insert_with(Tokio::now);
        loop {
            let step = match this.under_way {
                Some(step) => step,
                None => match (this.call)(&mut driver.session, now) {
                    Ok(Step::Ready(value)) => return Poll::Ready(Ok(value)),
                    Ok(Step::Io(step)) => {
                        this.waited = false;
                        *this.under_way.insert(step)
                    }
                    Err(err) => return Poll::Ready(Err(err.into())),
                },
            };
            let Poll::Ready(done) = driver.poll_io(cx, step, now, &mut this.waited) else {
                return Poll::Pending;
            };
            this.under_way = None;
            // An I/O that did not wait reuses the time the call started
            // with (most writes, and reads of bytes already there, take
            // no time worth a clock reading).
            if this.waited {
                now = Tokio::now();
                this.now = Some(now);
            }
            match done {
                // The I/O asked for, or a read made while a write waits:
                // reported, then the call is made again (a client learns
                // of an answer during its upload; the write is asked for
                // again if still due).
                Done::Io(done, result) => driver.handle_io(done, result, now)?,
                // The shutdown signal came first.
                Done::Signal => {
                    driver.runtime.shutdown = None;
                    driver.session.shutdown(now);
                }
            }
        }
    }
}

/// How a poll of an I/O ended.
enum Done {
    /// An I/O and its result: the one asked for (a timeout of the timer
    /// too), or a read made beside a write that had to wait.
    Io(Io, io::Result<usize>),
    /// The shutdown signal came.
    Signal,
}

/// What a read into the driver's stack takes at most, while the session
/// holds no read buffer: what the session's own first reads ask for.
const STACK_READ: usize = 1024;

/// One poll of a read into the session's buffer. While the session holds
/// none (a new connection, an idle one that gave its buffers back), the
/// read goes to the stack first and the session's buffer is made only
/// once bytes came, for them: a connection that waits does so without a
/// read buffer, and one that sent a small head holds a small one.
fn poll_read<S: AsyncRead + Unpin, T: Session>(
    io: &mut S,
    session: &mut T,
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

/// Arms `timer` for `at` (drops it without a deadline) unless it is armed
/// early enough already: made once per connection and moved only when it
/// would go off too late or has gone off, since registering a timer for
/// every wait would cost more than the request waited for. Going off early
/// is harmless: the session's `handle_timeout` does nothing before its
/// deadline. Returns whether the timer was made or moved (it must then be
/// polled).
#[inline]
fn arm(timer: &mut Option<Pin<Box<Sleep>>>, at: Option<Instant>, now: Instant) -> bool {
    let Some(at) = at.map(time::Instant::from_std) else {
        *timer = None;
        return false;
    };
    let now = time::Instant::from_std(now);
    match timer {
        Some(armed) if armed.deadline() <= at && armed.deadline() > now => false,
        Some(armed) => {
            armed.as_mut().reset(at);
            true
        }
        None => {
            *timer = Some(Box::pin(time::sleep_until(at)));
            true
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Server<S> {
    /// Starts a graceful shutdown of this connection when `signal`
    /// completes (a `tokio::sync::watch` change, a `Notify`, ...).
    pub fn shutdown_on(&mut self, signal: impl Future<Output = ()> + Send + 'static) {
        self.runtime.shutdown = Some(Box::pin(signal));
        // The new signal has never been polled: the next wait polls it.
        self.runtime.alarm.reset();
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
    /// its work runs to its end. Set it before the server is handed to
    /// `serve_connection`, as [`shutdown_on`](Self::shutdown_on).
    pub fn set_half_close(&mut self, allow: bool) {
        self.runtime.half_close = allow;
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
    ///     while let Some(_req) = server.next_request().await? {
    ///         // Cancelled if the client leaves during the second.
    ///         let page = server.while_connected(async {
    ///             tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    ///             http::Response::new(bytes::Bytes::from("done\n"))
    ///         });
    ///         let res = page.await?;
    ///         server.sender().send_response(res)?;
    ///     }
    ///     server.close().await;
    ///     Ok(())
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// The read's error when the connection failed (a reset), or
    /// `UnexpectedEof` when the client closed its side; `work` was
    /// dropped.
    pub async fn while_connected<F: Future>(&mut self, work: F) -> io::Result<F::Output> {
        let mut work = pin!(work);
        poll_fn(|cx| match work.as_mut().poll(cx) {
            Poll::Ready(out) => Poll::Ready(Ok(out)),
            Poll::Pending => self.poll_gone(cx).map(Err),
        })
        .await
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
    pub(crate) fn poll_gone(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        loop {
            // A close read before (beside a write that waited) counts as
            // one read now.
            if self.session.peer_closed() && !self.runtime.half_close {
                return Poll::Ready(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the client closed the connection before its response was complete",
                ));
            }
            if !self.session.wants_read() {
                return Poll::Pending;
            }
            match self.poll_read_ahead(cx) {
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(err)) if err.kind() == io::ErrorKind::WouldBlock => {
                    return Poll::Pending;
                }
                Poll::Ready(Err(err)) => return Poll::Ready(err),
                Poll::Pending => return Poll::Pending,
            }
        }
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
