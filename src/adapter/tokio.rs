//! A driver over tokio's `AsyncRead + AsyncWrite` (feature `tokio`).
//!
//! [`Server`] and [`Client`] run a [`ServerSession`] / [`ClientSession`]
//! over any tokio stream: every protocol decision, timeouts included, is
//! the session's; this module only reads, writes, sleeps until the
//! session's deadline and closes. [`serve`] answers each request of a
//! connection with an async function from `Request<Bytes>` to
//! `Response<Bytes>`. Only tokio's `io-util`, `net` and `time` features
//! are used; the runtime is the application's and needs its timers.
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
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http::{Request, Response};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs};

use super::{Driver, Runtime, sealed};
use crate::encode::IntoRequest;
use crate::{ClientSession, Config, Io, Segments, ServerSession, Session, SessionError, Step};

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
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// What the shutdown signal and the timer are polled with (see
    /// [`Alarm`]).
    alarm: Option<(Arc<Alarm>, Waker)>,
}

/// The waker the shutdown signal and the timer are polled with: it wakes
/// the task and notes that it did. While the task waits for I/O, the two
/// are polled again only when it rang (one of them may be ready), when
/// the timer was moved, or when the task's own waker changed; a task
/// woken by its socket does not poll them again for nothing. A future
/// need not be polled again until its waker is woken, so nothing is
/// missed.
struct Alarm {
    rang: AtomicBool,
    task: Waker,
}

impl Wake for Alarm {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.rang.store(true, Ordering::Release);
        self.task.wake_by_ref();
    }
}

impl sealed::Runtime for Tokio {
    type State = TokioState;
}

/// One server connection over an async stream, driven by the application:
/// [`next_request`](Driver::next_request), then the body and the response
/// (the session's own calls, on the server itself), and
/// [`close`](Driver::close) at the end.
///
/// ```no_run
/// use h1proto::adapter::tokio::Server;
///
/// # async fn echo(stream: tokio::net::TcpStream) -> std::io::Result<()> {
/// let mut server = Server::new(stream, h1proto::Config::default());
/// while let Some(_req) = server.next_request().await? {
///     server.send_head(http::Response::new(()))?; // chunked
///     while let Some(data) = server.read_data().await? {
///         server.send_data(data).await?;
///     }
///     server.finish(None)?;
/// }
/// server.close().await;
/// # Ok(())
/// # }
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
    pub async fn call<V>(
        &mut self,
        mut call: impl FnMut(&mut T, Instant) -> Result<Step<V>, SessionError>,
    ) -> io::Result<V> {
        let mut now = Instant::now();
        // The I/O under way: its step, whether the timer was looked at and
        // whether it had to wait. One future for the whole call, the I/O
        // polled in it: a future per I/O costs more than the I/O's own work.
        let mut under_way: Option<Io> = None;
        let (mut armed, mut waited) = (false, false);
        poll_fn(|cx| {
            loop {
                let step = match under_way {
                    Some(step) => step,
                    None => match call(&mut self.session, now) {
                        Ok(Step::Ready(value)) => return Poll::Ready(Ok(value)),
                        Ok(Step::Io(step)) => {
                            (armed, waited) = (false, false);
                            under_way = Some(step);
                            step
                        }
                        Err(err) => return Poll::Ready(Err(err.into())),
                    },
                };
                let Poll::Ready(done) = self.poll_io(cx, step, now, &mut armed, &mut waited) else {
                    return Poll::Pending;
                };
                under_way = None;
                // An I/O that did not wait reuses the time the call started
                // with (most writes, and reads of bytes already there, take
                // no time worth a clock reading).
                if waited {
                    now = Instant::now();
                }
                if let Err(err) = self.handle_io(done, step, now) {
                    return Poll::Ready(Err(err));
                }
            }
        })
        .await
    }

    /// One poll of an I/O, raced against the session's deadline and the
    /// shutdown signal (`None`: the signal came). The deadline, the timer
    /// and the signal are looked at only when the I/O cannot complete at
    /// once.
    fn poll_io(
        &mut self,
        cx: &mut Context<'_>,
        step: Io,
        now: Instant,
        armed: &mut bool,
        waited: &mut bool,
    ) -> Poll<Option<io::Result<usize>>> {
        let Driver {
            io,
            session,
            runtime:
                TokioState {
                    shutdown,
                    timer,
                    alarm,
                },
        } = self;
        // A fresh I/O future each poll: all three are cancel-safe, and
        // none keeps state between polls.
        let io_done = match step {
            Io::Read => pin!(io.read_buf(session.read_buf())).poll(cx),
            Io::Write => poll_write(Pin::new(&mut *io), cx, session.output()),
            _ => pin!(io.shutdown()).poll(cx).map_ok(|()| 0),
        };
        if let Poll::Ready(done) = io_done {
            return Poll::Ready(Some(done));
        }
        *waited = true;
        let mut due = false;
        if !*armed {
            *armed = true;
            // The deadline as the wait left from `now` (the time the wait
            // began, for the commonest waits, which the session answers
            // without working the deadline out), then added back.
            due = match session
                .poll_wait(now)
                .and_then(|wait| now.checked_add(wait))
            {
                Some(at) => arm(timer, at, now),
                None => {
                    *timer = None;
                    false
                }
            };
        }
        let waker = match alarm {
            Some((alarm, waker)) if alarm.task.will_wake(cx.waker()) => {
                due |= alarm.rang.swap(false, Ordering::AcqRel);
                &*waker
            }
            _ => {
                due = true;
                let new = Arc::new(Alarm {
                    rang: AtomicBool::new(false),
                    task: cx.waker().clone(),
                });
                &alarm.insert((new.clone(), Waker::from(new))).1
            }
        };
        if due {
            let mut cx = Context::from_waker(waker);
            if let Some(signal) = shutdown {
                if signal.as_mut().poll(&mut cx).is_ready() {
                    return Poll::Ready(None);
                }
            }
            if let Some(Poll::Ready(())) = timer.as_mut().map(|t| t.as_mut().poll(&mut cx)) {
                return Poll::Ready(Some(Err(io::ErrorKind::TimedOut.into())));
            }
        }
        Poll::Pending
    }

    /// Reports an I/O that ended at `now` to the session.
    fn handle_io(
        &mut self,
        done: Option<io::Result<usize>>,
        step: Io,
        now: Instant,
    ) -> io::Result<()> {
        let session = &mut self.session;
        match (done, step) {
            (None, _) => {
                self.runtime.shutdown = None;
                session.shutdown(now);
            }
            (Some(Err(e)), _) if e.kind() == io::ErrorKind::TimedOut => session.handle_timeout(now),
            (Some(Err(e)), _) => return Err(e),
            (Some(Ok(0)), Io::Write) => return Err(io::ErrorKind::WriteZero.into()),
            (Some(Ok(n)), Io::Read) => session.handle_read(n, now),
            (Some(Ok(n)), Io::Write) => session.handle_write(n, now),
            (Some(Ok(_)), _) => {}
        }
        Ok(())
    }
}

/// Arms `timer` for `at` unless it is armed early enough already: made
/// once per connection and moved only when it would go off too late or
/// has gone off, since registering a timer for every wait would cost more
/// than the request waited for. Going off early is harmless: the
/// session's `handle_timeout` does nothing before its deadline. Returns
/// whether the timer was made or moved (it must then be polled).
fn arm(timer: &mut Option<Pin<Box<tokio::time::Sleep>>>, at: Instant, now: Instant) -> bool {
    let at = tokio::time::Instant::from_std(at);
    match timer {
        Some(timer) => {
            let armed = timer.deadline();
            let moved = armed > at || armed <= tokio::time::Instant::from_std(now);
            if moved {
                timer.as_mut().reset(at);
            }
            moved
        }
        None => {
            *timer = Some(Box::pin(tokio::time::sleep_until(at)));
            true
        }
    }
}

/// One write of `out`: a plain write for one segment, a vectored one for
/// more.
fn poll_write<S: AsyncWrite>(
    io: Pin<&mut S>,
    cx: &mut Context<'_>,
    out: &mut Segments,
) -> Poll<io::Result<usize>> {
    if out.segment_count() == 1 {
        io.poll_write(cx, bytes::Buf::chunk(out))
    } else {
        let mut slices = [IoSlice::new(&[]); 16];
        let n = out.io_slices(&mut slices);
        io.poll_write_vectored(cx, &slices[..n])
    }
}

/// Serves one connection: each request is read with its whole body
/// (trailers in its extensions as [`TrailerFields`](crate::TrailerFields))
/// and answered with what `handler` returns; the connection is then
/// closed the way its session decides. A peer's protocol error or timeout
/// is answered by the session, then returned as an `io::Error`.
///
/// # Errors
///
/// An I/O error, or the peer's error or timeout that ended the connection.
pub async fn serve<S, F, Fut>(io: S, config: Config, mut handler: F) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
    F: FnMut(Request<Bytes>) -> Fut,
    Fut: Future<Output = Response<Bytes>>,
{
    let mut server = Server::new(io, config);
    let mut result = Ok(());
    while let Some(req) = server
        .call(ServerSession::next_full_request)
        .await
        .transpose()
    {
        result = match req {
            Ok(req) => Ok(server.send_response(handler(req).await)?),
            Err(err) => Err(err),
        };
        if result.is_err() {
            break;
        }
    }
    server.close().await;
    result
}

impl<S: AsyncRead + AsyncWrite + Unpin> Server<S> {
    /// Starts a graceful shutdown of this connection when `signal`
    /// completes (a `tokio::sync::watch` change, a `Notify`, ...).
    pub fn shutdown_on(&mut self, signal: impl Future<Output = ()> + Send + 'static) {
        self.runtime.shutdown = Some(Box::pin(signal));
        // The new signal has never been polled: the next wait polls it.
        self.runtime.alarm = None;
    }

    /// [`ServerSession::next_request`], doing the I/O it needs.
    ///
    /// # Errors
    ///
    /// An I/O error, or the session's error (see [`SessionError`]).
    pub async fn next_request(&mut self) -> io::Result<Option<Request<()>>> {
        self.call(ServerSession::next_request).await
    }

    /// [`ServerSession::read_data`], doing the I/O it needs.
    ///
    /// # Errors
    ///
    /// As [`next_request`](Self::next_request).
    pub async fn read_data(&mut self) -> io::Result<Option<Bytes>> {
        self.call(ServerSession::read_data).await
    }

    /// [`ServerSession::send_data`], then writes while too much is queued.
    ///
    /// # Errors
    ///
    /// A usage error, or an I/O error while writing.
    pub async fn send_data(&mut self, data: impl Into<Bytes>) -> io::Result<()> {
        self.session.send_data(data)?;
        self.call(|s, now| Ok(s.poll_flush(now))).await
    }

    /// Writes everything queued ([`ServerSession::poll_write_all`]), for
    /// a streaming response whose next piece is not ready yet.
    ///
    /// # Errors
    ///
    /// An I/O error, or the write timeout, while writing.
    pub async fn flush(&mut self) -> io::Result<()> {
        self.call(|s, now| Ok(s.poll_write_all(now))).await
    }

    /// Writes what is queued, lingers if the session says so, and closes
    /// the stream (after a protocol switch, see
    /// [`into_parts`](Self::into_parts) instead). Errors are ignored: the
    /// connection is over either way.
    pub async fn close(&mut self) {
        let _ = self.call(|s, now| Ok(s.close(now))).await;
    }

    /// After a protocol switch: writes what is queued, then hands over the
    /// stream and the bytes read past the switch.
    ///
    /// # Errors
    ///
    /// A write error.
    pub async fn into_parts(mut self) -> io::Result<(S, BytesMut)> {
        self.call(|s, now| Ok(s.close(now))).await?;
        let buf = self.session.take_read_buf();
        Ok((self.io, buf))
    }
}

impl Client<TcpStream> {
    /// Connects with `TCP_NODELAY` and the default [`Config`].
    ///
    /// # Errors
    ///
    /// Connecting failed.
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Client::new(stream, Config::default()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Client<S> {
    /// Sends `req` and reads its final response with the whole body
    /// ([`ClientSession::next_full_response`]: interim responses and
    /// trailers are in its extensions).
    ///
    /// # Errors
    ///
    /// A usage error, an I/O error, the server's protocol error or
    /// timeout, or the connection closing before the response.
    pub async fn send(&mut self, req: impl IntoRequest) -> io::Result<Response<Bytes>> {
        self.session.send_request(req)?;
        let res = self.call(ClientSession::next_full_response).await?;
        res.ok_or_else(|| io::ErrorKind::UnexpectedEof.into())
    }

    /// [`ClientSession::next_response`], doing the I/O it needs.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub async fn next_response(&mut self) -> io::Result<Option<Response<()>>> {
        self.call(ClientSession::next_response).await
    }

    /// [`ClientSession::read_data`], doing the I/O it needs.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub async fn read_data(&mut self) -> io::Result<Option<Bytes>> {
        self.call(ClientSession::read_data).await
    }
}
