//! A driver for any async runtime, written once over the four operations a
//! runtime lends a connection: read, write, sleep until a deadline, and
//! shut down the sending half ([`RuntimeIo`]).
//!
//! [`Conn`] runs a [`ServerSession`](crate::ServerSession) or
//! [`ClientSession`](crate::ClientSession) over a [`RuntimeIo`]: its
//! [`call`](Conn::call) makes a session call until it is ready, doing the
//! I/O the session asks for, reading beside a write that has to wait (the
//! duplex contract of [`Session`]), waking at the session's deadline,
//! handing it the wall clock for `Date` ([`Session::set_date`]) and
//! starting a graceful shutdown when its signal fires; its
//! [`while_connected`](Conn::while_connected) awaits the application's
//! work while watching the peer, and drops the work of one that went.
//! Every protocol
//! decision is the session's; a runtime supplies only the four operations,
//! about thirty lines:
//!
//! - a **readiness** runtime (smol, async-std, anything over `futures-io`;
//!   epoll underneath) reads into [`Session::read_slice`] or
//!   [`Session::read_buf`] and writes [`Session::output`] with a vectored
//!   write, each poll starting afresh;
//! - a **completion** runtime (io_uring: tokio-uring, monoio) lends the
//!   kernel owned buffers ([`Session::lend_read_buf`],
//!   [`Session::lend_output`]) and keeps the operation under way across
//!   polls, and across calls, until it completes; it says so with
//!   [`read_under_way`](RuntimeIo::read_under_way) and
//!   [`write_under_way`](RuntimeIo::write_under_way), and gives the
//!   buffer back before it reports the result. A runtime whose write takes
//!   one owned buffer per call (monoio's `write`) writes the first segment
//!   of what `lend_output` lent and reports the bytes of it written; the
//!   rest stays queued, in order, without a copy.
//!
//! The clock (the runtime's, [`RuntimeIo::now`]) is read once when a call
//! starts, once per wake-up of a call that waited, and again when its
//! timer went off; every I/O reported and every session call of that
//! wake-up gets that reading. The shutdown signal and the runtime's timer
//! are polled only when they may have become ready (their waker rang, the
//! deadline came earlier, the task's waker changed), not at every wait.
//! The tokio adapter ([`adapter::tokio`](crate::adapter)) is the same loop
//! written over tokio's stream and timer. [`Shutdown`] fans a graceful
//! shutdown out to every connection of a server and waits for them to end,
//! on any runtime.
//!
//! A driver over an in-memory stream, as a runtime would write one:
//!
//! ```
//! use std::io::{self, Read};
//! use std::task::{Context, Poll};
//! use std::time::Instant;
//! use bytes::Buf;
//! use h1proto::adapter::driver::{Conn, RuntimeIo};
//! use h1proto::{Config, ServerSession, Session};
//!
//! /// Input that is all there at once, and output collected.
//! struct Memory { input: io::Cursor<Vec<u8>>, sent: Vec<u8> }
//!
//! impl RuntimeIo for Memory {
//!     fn poll_read(&mut self, _: &mut Context<'_>, s: &mut dyn Session) -> Poll<io::Result<usize>> {
//!         Poll::Ready(self.input.read(s.read_slice()))
//!     }
//!     fn poll_write(&mut self, _: &mut Context<'_>, s: &mut dyn Session) -> Poll<io::Result<usize>> {
//!         let out = s.output();
//!         self.sent.extend_from_slice(out.chunk());
//!         Poll::Ready(Ok(out.chunk().len()))
//!     }
//!     fn poll_shutdown_write(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
//!         Poll::Ready(Ok(()))
//!     }
//!     fn poll_sleep_until(&mut self, _: &mut Context<'_>, _: Instant) -> Poll<()> {
//!         Poll::Pending // nothing here ever waits
//!     }
//! }
//!
//! async fn serve(io: Memory) -> io::Result<Vec<u8>> {
//!     let session = ServerSession::new(Config::default(), Instant::now());
//!     let mut conn = Conn::new(io, session);
//!     while let Some(req) = conn.call(ServerSession::next_full_request).await? {
//!         let res = http::Response::new(bytes::Bytes::from(req.uri().path().to_owned()));
//!         conn.sender().send_response(res)?;
//!     }
//!     conn.call(ServerSession::close).await?;
//!     Ok(conn.into_parts().0.sent)
//! }
//!
//! let input = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /bc HTTP/1.1\r\nHost: x\r\n\r\n";
//! let io = Memory { input: io::Cursor::new(input.to_vec()), sent: Vec::new() };
//! # fn block_on<T>(fut: impl std::future::Future<Output = T>) -> T {
//! #     let mut fut = std::pin::pin!(fut);
//! #     let mut cx = Context::from_waker(std::task::Waker::noop());
//! #     loop { if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) { return v; } }
//! # }
//! let sent = String::from_utf8(block_on(serve(io))?).unwrap();
//! assert!(sent.starts_with("HTTP/1.1 200 OK\r\n"), "{sent}");
//! assert!(sent.ends_with("\r\n\r\n/bc"), "{sent}");
//! # Ok::<(), io::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt;
use std::future::{Future, poll_fn};
use std::io::{self, ErrorKind};
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::{Io, Session, SessionError, Step};

/// The four operations a runtime lends a connection, as polls: what
/// [`Conn`] needs to drive a session. Each `poll_*` follows the usual
/// contract (`Pending` registers `cx`'s waker); an I/O error ends the
/// connection, except `Interrupted` (the operation is polled again) and
/// `WouldBlock` (nothing happened).
///
/// A readiness runtime reads and writes through the session's lent
/// buffers and keeps nothing between polls. A completion runtime starts an
/// operation on an owned buffer the first time it is polled, keeps it until
/// it completes (polled again by later polls, and later calls), gives the
/// buffer back to the session, then returns the result.
pub trait RuntimeIo {
    /// Reads from the peer into the session: into
    /// [`read_slice`](Session::read_slice) or
    /// [`read_buf`](Session::read_buf), or into the room
    /// [`lend_read_buf`](Session::lend_read_buf) lends (given back with
    /// [`return_read_buf`](Session::return_read_buf) before this returns
    /// `Ready`). `Ok(0)`: the peer closed its side. The driver reports the
    /// bytes read with [`handle_read`](Session::handle_read).
    fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>>;

    /// Writes the session's output: [`output`](Session::output) with a
    /// vectored write, or what [`lend_output`](Session::lend_output) lends
    /// (given back with [`return_output`](Session::return_output) before
    /// this returns `Ready`; a write that takes one owned buffer writes the
    /// first one). The driver reports the bytes written with
    /// [`handle_write`](Session::handle_write); `Ok(0)` is `WriteZero`.
    fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>>;

    /// Shuts down the sending half of the socket (the lingering close).
    fn poll_shutdown_write(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// `Ready` once `at` has passed: the session's deadline. Called when
    /// the driver waits for a deadline earlier than the one it last polled
    /// for, and when this poll's waker (shared with the shutdown signal)
    /// was woken; a runtime keeps one timer and moves it. A later deadline
    /// is not passed on until the timer went off: going off early is
    /// harmless.
    fn poll_sleep_until(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()>;

    /// The time now, by the clock [`poll_sleep_until`](Self::poll_sleep_until)
    /// runs on: every `now` the driver hands the session is read here, so
    /// that a deadline the timer says has come has come for the session
    /// too. By default the system's monotonic clock; a runtime whose timer
    /// runs on a clock of its own (one that may be paused, a simulation's)
    /// returns that one's time.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// The session said [`Io::Close`]: cancel the operations under way and
    /// collect them (a completion runtime), so that the socket may close.
    /// The socket itself closes when the [`Conn`] (or the value
    /// [`into_parts`](Conn::into_parts) returned) is dropped. By default:
    /// nothing to do.
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let _ = cx;
        Poll::Ready(Ok(()))
    }

    /// `true` while a read started on an owned buffer has not completed:
    /// the driver polls it on, whatever the session asks. Never for a
    /// readiness runtime (the default).
    fn read_under_way(&self) -> bool {
        false
    }

    /// `true` while a write started on owned buffers has not completed, as
    /// [`read_under_way`](Self::read_under_way).
    fn write_under_way(&self) -> bool {
        false
    }
}

/// A graceful shutdown's signal: a future that completes when it fires.
type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A session and the runtime I/O it runs over: the runtime-neutral driver.
/// It dereferences to the session, so the calls that need no I/O
/// (`sender().send_response(..)`, queries) are made on it directly; every
/// call that may need I/O goes through [`call`](Self::call).
pub struct Conn<R, S> {
    io: R,
    session: S,
    wall: WallClock,
    waits: Waits,
}

/// What the driving loop keeps of a connection besides its I/O, its
/// session and its wall clock. [`Conn`] and the tokio adapter's driver
/// each keep one, and run the one loop over it ([`Parts`]).
#[derive(Default)]
pub(crate) struct Waits {
    /// The graceful shutdown's signal, until it came.
    signal: Option<Signal>,
    /// What the signal and the runtime's timer are polled with.
    alarm: Alarm,
    /// The deadline the runtime's timer was last polled for.
    sleeping_until: Option<Instant>,
    /// The peer's close of its sending half does not end the work
    /// [`Conn::while_connected`] awaits.
    half_close: bool,
}

impl Waits {
    /// A graceful shutdown begins when `signal` completes.
    pub(crate) fn shutdown_on(&mut self, signal: impl Future<Output = ()> + Send + 'static) {
        self.signal = Some(Box::pin(signal));
        // The new signal has never been polled: the next wait polls it.
        self.alarm.reset();
    }

    /// Whether the peer's close of its sending half leaves the work
    /// watched going.
    pub(crate) fn set_half_close(&mut self, allow: bool) {
        self.half_close = allow;
    }
}

/// A connection's parts, borrowed for one call: what the driving loop
/// works on, written once for [`Conn`] and for the tokio adapter's driver
/// (which lends its stream and timer as a [`RuntimeIo`]).
pub(crate) struct Parts<'a, R, S> {
    pub(crate) io: R,
    pub(crate) session: &'a mut S,
    pub(crate) wall: &'a mut WallClock,
    pub(crate) waits: &'a mut Waits,
}

/// A driver whose parts the loop borrows for each poll: [`Conn`], and the
/// tokio adapter's driver. A call under way ([`Call`]) keeps the driver
/// by one reference, not its parts, so that the future a connection's
/// task holds while it waits stays small.
pub(crate) trait Drive {
    /// The runtime's I/O, lent for a poll.
    type Io<'a>: RuntimeIo
    where
        Self: 'a;
    /// The session driven.
    type Session: Session;

    /// The parts the loop works on, for one poll.
    fn parts(&mut self) -> Parts<'_, Self::Io<'_>, Self::Session>;
}

/// The waker a driver polls its shutdown signal and its timer with: it
/// wakes the task and notes that it did. While the task waits for I/O,
/// the two are polled again only when it rang (one of them may be ready),
/// when the deadline changed, or when the task's own waker changed; a
/// task woken by its socket does not poll them again for nothing (a
/// signal's poll takes a lock, a timer's registers a waker). A future need
/// not be polled again until its waker is woken, so nothing is missed.
#[derive(Default)]
pub(crate) struct Alarm {
    /// The bell and the waker made of it; `None` before the first wait.
    bell: Option<(Arc<Bell>, Waker)>,
}

/// What [`Alarm`]'s waker wakes: the task, noting that it rang.
struct Bell {
    rang: AtomicBool,
    task: Waker,
}

impl Wake for Bell {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.rang.store(true, Ordering::Release);
        self.task.wake_by_ref();
    }
}

impl Alarm {
    /// The waker to poll the signal and the timer with, for a task polled
    /// with `cx`, and whether they must be polled: it rang since they were
    /// last polled, or it is new (the task's waker changed, or it never
    /// waited). A ring is taken once: the caller polls both.
    #[inline]
    pub(crate) fn check(&mut self, cx: &Context<'_>) -> (&Waker, bool) {
        if !(self.bell.as_ref()).is_some_and(|(bell, _)| bell.task.will_wake(cx.waker())) {
            self.bell = None;
        }
        let mut due = false;
        let (bell, waker) = self.bell.get_or_insert_with(|| {
            due = true;
            let bell = Arc::new(Bell {
                rang: AtomicBool::new(false),
                task: cx.waker().clone(),
            });
            (bell.clone(), Waker::from(bell))
        });
        due |= bell.rang.swap(false, Ordering::AcqRel);
        (waker, due)
    }

    /// Makes the next [`check`](Self::check) answer that both must be
    /// polled: a signal given that was never polled.
    pub(crate) fn reset(&mut self) {
        self.bell = None;
    }
}

/// When a driver next reads the wall clock for `Date`
/// ([`Session::set_date`]): once its monotonic reading has passed the
/// next second of the last wall reading, so once a second at most rather
/// than with every read and timeout reported. A step of the wall clock
/// shows within a second.
///
/// [`Conn`] and the adapters keep one per connection; a driver written
/// from scratch (a completion runtime's own loop) keeps one too, and
/// reports each I/O through [`report`](Self::report), or calls
/// [`update`](Self::update) with the clock reading it took before it
/// reports a read or a timeout itself.
///
/// ```
/// use std::time::Instant;
/// use h1proto::adapter::driver::WallClock;
/// use h1proto::{Config, Io, ServerSession};
///
/// let mut session = ServerSession::new(Config::default(), Instant::now());
/// let mut wall = WallClock::new();
/// // A read of 0 bytes (the peer closed) came back from the kernel:
/// // the session is told, the wall clock read at most once a second.
/// wall.report(&mut session, Io::Read, Ok(0), Instant::now())?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct WallClock {
    /// By the monotonic clock; `None` before the first reading.
    next_second: Option<Instant>,
}

impl WallClock {
    /// A clock that reads the wall clock at its first update.
    pub fn new() -> Self {
        WallClock::default()
    }

    /// Hands `session` the wall clock if its second may have changed by
    /// `now`, a reading of the monotonic clock just taken.
    #[inline]
    pub fn update(&mut self, now: Instant, session: &mut (impl Session + ?Sized)) {
        if self.next_second.is_none_or(|next| now >= next) {
            let wall = SystemTime::now();
            session.set_date(wall);
            let into = wall.duration_since(UNIX_EPOCH).unwrap_or_default();
            let left = Duration::from_secs(1) - Duration::from_nanos(into.subsec_nanos().into());
            self.next_second = now.checked_add(left);
        }
    }

    /// Tells `session` how the I/O `io` it asked for ended, at `now` (the
    /// rules of `docs/sessions.md`, "The contract"): a timeout (the
    /// stream's, or the runtime's timer) lets it act on its deadline. Every
    /// read and timeout reported comes with the wall clock, so that the
    /// responses they lead to (a request's answer, a 408) carry it as their
    /// `Date`. Both the adapters and [`Conn`] report through this.
    ///
    /// # Errors
    ///
    /// The I/O's error, other than a timeout, `WouldBlock` and
    /// `Interrupted` (which end nothing); `WriteZero` for a write of 0
    /// bytes. The connection is over.
    #[inline]
    pub fn report(
        &mut self,
        session: &mut (impl Session + ?Sized),
        io: Io,
        result: io::Result<usize>,
        now: Instant,
    ) -> io::Result<()> {
        match (result, io) {
            (Err(e), _) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                self.update(now, session);
                session.handle_timeout(now);
            }
            (Err(e), _) if e.kind() == ErrorKind::Interrupted => {}
            (Err(e), _) => return Err(e),
            (Ok(n), Io::Read) => {
                self.update(now, session);
                session.handle_read(n, now);
            }
            (Ok(0), Io::Write) => return Err(ErrorKind::WriteZero.into()),
            (Ok(n), Io::Write) => session.handle_write(n, now),
            (Ok(_), _) => {}
        }
        Ok(())
    }
}

impl<R, S> Deref for Conn<R, S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.session
    }
}

impl<R, S> DerefMut for Conn<R, S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.session
    }
}

impl<R, S: fmt::Debug> fmt::Debug for Conn<R, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conn")
            .field("session", &self.session)
            .field("shutdown_signal", &self.waits.signal.is_some())
            .finish_non_exhaustive()
    }
}

/// What became of the polls of one wait.
enum Done {
    /// An I/O ended: the one asked for, or one beside it; or the
    /// session's deadline passed, reported as the I/O asked for timing
    /// out ([`WallClock::report`] acts on it).
    Io(Io, io::Result<usize>),
    /// The shutdown signal came.
    Signal,
}

/// A runtime's I/O lent for a call is a runtime's I/O.
impl<R: RuntimeIo + ?Sized> RuntimeIo for &mut R {
    #[inline]
    fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>> {
        (**self).poll_read(cx, session)
    }

    #[inline]
    fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        session: &mut dyn Session,
    ) -> Poll<io::Result<usize>> {
        (**self).poll_write(cx, session)
    }

    fn poll_shutdown_write(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        (**self).poll_shutdown_write(cx)
    }

    fn poll_sleep_until(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        (**self).poll_sleep_until(cx, at)
    }

    #[inline]
    fn now(&self) -> Instant {
        (**self).now()
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        (**self).poll_close(cx)
    }

    #[inline]
    fn read_under_way(&self) -> bool {
        (**self).read_under_way()
    }

    #[inline]
    fn write_under_way(&self) -> bool {
        (**self).write_under_way()
    }
}

impl<R: RuntimeIo, S: Session> Drive for Conn<R, S> {
    type Io<'a>
        = &'a mut R
    where
        Self: 'a;
    type Session = S;

    #[inline]
    fn parts(&mut self) -> Parts<'_, &mut R, S> {
        Parts {
            io: &mut self.io,
            session: &mut self.session,
            wall: &mut self.wall,
            waits: &mut self.waits,
        }
    }
}

impl<R: RuntimeIo, S: Session> Conn<R, S> {
    /// `session` driven over `io`.
    pub fn new(io: R, session: S) -> Self {
        Conn {
            io,
            session,
            wall: WallClock::default(),
            waits: Waits::default(),
        }
    }

    /// Starts a graceful shutdown of this connection when `signal`
    /// completes: a [`Shutdown::signal`], or any future.
    pub fn shutdown_on(&mut self, signal: impl Future<Output = ()> + Send + 'static) {
        self.waits.shutdown_on(signal);
    }

    /// The runtime's I/O and the session. A completion runtime's operation
    /// still under way stays in the I/O.
    pub fn into_parts(self) -> (R, S) {
        (self.io, self.session)
    }

    /// The runtime's I/O.
    pub fn io_mut(&mut self) -> &mut R {
        &mut self.io
    }

    /// Makes any session call until it is ready, doing the I/O it asks
    /// for: e.g. `conn.call(ServerSession::next_full_request)` or
    /// `conn.call(ServerSession::close)`.
    ///
    /// # Errors
    ///
    /// An I/O error, or the session's error as an `io::Error` (see
    /// [`SessionError`]: the peer's [`Error`](crate::Error) is its inner
    /// error).
    pub fn call<V>(
        &mut self,
        call: impl FnMut(&mut S, Instant) -> Result<Step<V>, SessionError>,
    ) -> impl Future<Output = io::Result<V>> {
        Call::new(self, call)
    }

    /// Awaits `work` (a handler's answer, the next piece of what is
    /// relayed) while watching the peer, as the tokio adapter's
    /// `Server::while_connected` does: what the session wants of the
    /// peer's input is read meanwhile (a completion runtime's read stays
    /// under way for the next call), and when the peer is gone first (its
    /// connection failed, or it closed its side, unless
    /// [`set_half_close`](Self::set_half_close) allows that) `work` is
    /// dropped, cancelling it, and the error says why. A close read
    /// earlier (beside a write that waited) counts too ([`Session::peer_closed`]).
    /// Work that is ready at its first poll reads nothing; the watch reads
    /// no further ahead than the session does (one read's worth,
    /// `Config::read_size`). A connection whose work was given
    /// up has nothing more to do but close.
    ///
    /// # Errors
    ///
    /// The read's error when the connection failed, or `UnexpectedEof`
    /// when the peer closed its side; `work` was dropped.
    pub fn while_connected<F: Future>(
        &mut self,
        work: F,
    ) -> impl Future<Output = io::Result<F::Output>> {
        // The future itself, not one around it: `work` is kept once.
        while_connected(self, work)
    }

    /// Whether a peer that closes its sending half (an EOF here) while
    /// [`while_connected`](Self::while_connected) awaits work is still
    /// served: `false` (the default) takes the close for its going, as
    /// hyper's server does; `true` lets the work go on, for clients that
    /// half-close after their request and then read the answer, and only
    /// a failed connection ends it (one seen before the peer's close:
    /// after it nothing more is read; and a peer that gives up and closes
    /// is then not noticed either: the wire cannot tell the two apart).
    pub fn set_half_close(&mut self, allow: bool) {
        self.waits.set_half_close(allow);
    }
}

impl<R: RuntimeIo, S: Session> Parts<'_, R, S> {
    /// One poll of a read the application did not ask for, reported to
    /// the session when it completes: the bytes read, 0 at the peer's
    /// close.
    pub(crate) fn poll_read_ahead(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let n = std::task::ready!(self.io.poll_read(cx, self.session))?;
        let now = self.io.now();
        self.wall.update(now, self.session);
        self.session.handle_read(n, now);
        Poll::Ready(Ok(n))
    }

    /// Reads what the session wants, and is ready once the peer is gone,
    /// with the error that says how (see [`Conn::while_connected`]).
    /// While the session wants no input (its read-ahead bound is reached,
    /// the peer's close was allowed), nothing is read and the peer is not
    /// watched.
    pub(crate) fn poll_gone(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        loop {
            // A close read before (beside a write that waited) counts as
            // one read now.
            if self.session.peer_closed() && !self.waits.half_close {
                return Poll::Ready(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "the peer closed the connection before the work was done",
                ));
            }
            if !self.io.read_under_way() && !self.session.wants_read() {
                return Poll::Pending;
            }
            match self.poll_read_ahead(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) if e.kind() == ErrorKind::Interrupted => {}
                // Nothing happened (the contract of `RuntimeIo`).
                Poll::Ready(Err(e)) if e.kind() == ErrorKind::WouldBlock => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(e),
            }
        }
    }

    /// One round of polls for `step`: the I/O asked for, the other
    /// direction when the session wants it or an owned operation is under
    /// way there, then, when neither is ready, the shutdown signal and the
    /// deadline (see [`Alarm`]). Inlined into the call's poll, as the
    /// I/O's own polls are.
    #[inline(always)]
    fn poll_io(&mut self, cx: &mut Context<'_>, step: Io, waited: &mut bool) -> Poll<Done> {
        let (io, session) = (&mut self.io, &mut *self.session);
        match step {
            Io::Shutdown => {
                return io
                    .poll_shutdown_write(cx)
                    .map(|r| Done::Io(step, r.map(|()| 0)));
            }
            Io::Close => return io.poll_close(cx).map(|r| Done::Io(step, r.map(|()| 0))),
            Io::Read | Io::Write => {}
        }
        // The write first: a completed write frees room the read may need
        // (a server reads pipelined requests only so far ahead).
        if step == Io::Write || io.write_under_way() || session.wants_write() {
            if let Poll::Ready(r) = io.poll_write(cx, session) {
                return Poll::Ready(Done::Io(Io::Write, r));
            }
        }
        if step == Io::Read || io.read_under_way() || session.wants_read() {
            if let Poll::Ready(r) = io.poll_read(cx, session) {
                return Poll::Ready(Done::Io(Io::Read, r));
            }
        }
        self.poll_wait(cx, step, waited)
    }

    /// The rest of [`poll_io`](Self::poll_io) once its I/O has to wait,
    /// out of line: an I/O that completes at once, the usual case, costs
    /// the call no frame of its own. `waited`: this I/O had to wait
    /// before, and its deadline was looked at then (nothing has been
    /// reported to the session since, so it has not moved): a wake-up by
    /// the I/O alone does not read it again.
    #[inline(never)]
    fn poll_wait(&mut self, cx: &mut Context<'_>, step: Io, waited: &mut bool) -> Poll<Done> {
        let waits = &mut *self.waits;
        let (waker, mut due) = waits.alarm.check(cx);
        let fresh = !std::mem::replace(waited, true);
        if !due && !fresh {
            // Woken by the I/O alone, and the deadline was looked at when
            // this wait began.
            return Poll::Pending;
        }
        let at = self.session.poll_timeout();
        // A deadline earlier than the one the timer was polled for: the
        // runtime moves it. A later one waits for the timer to go off
        // early, which is harmless (`handle_timeout` does nothing before
        // the deadline): moving a timer at every wait costs more than the
        // wait.
        due |= at.is_some_and(|at| waits.sleeping_until.is_none_or(|armed| at < armed));
        if !due {
            return Poll::Pending;
        }
        // Both are polled, whichever is ready: each registers the alarm
        // only when polled, and a ring is taken once.
        let mut cx = Context::from_waker(waker);
        let signalled =
            (waits.signal.as_mut()).is_some_and(|s| s.as_mut().poll(&mut cx).is_ready());
        waits.sleeping_until = at;
        let expired = at.is_some_and(|at| self.io.poll_sleep_until(&mut cx, at).is_ready());
        if signalled {
            Poll::Ready(Done::Signal)
        } else if expired {
            // Polled again at the next wait: a runtime's timer that went
            // off is set anew for the next deadline.
            waits.sleeping_until = None;
            Poll::Ready(Done::Io(step, Err(ErrorKind::TimedOut.into())))
        } else {
            Poll::Pending
        }
    }
}

/// Awaits `work` while watching the peer through `driver`
/// ([`Conn::while_connected`]). The driver is kept by one reference and
/// lends its parts at each poll, as [`Call`] does.
pub(crate) async fn while_connected<D: Drive, F: Future>(
    driver: &mut D,
    work: F,
) -> io::Result<F::Output> {
    let mut work = std::pin::pin!(work);
    poll_fn(|cx| match work.as_mut().poll(cx) {
        Poll::Ready(out) => Poll::Ready(Ok(out)),
        Poll::Pending => driver.parts().poll_gone(cx).map(Err),
    })
    .await
}

/// A session call under way ([`Conn::call`], the tokio adapter's
/// `Driver::call`): one future for the whole call, with no more state than
/// it keeps across polls, since a connection's task holds it while the
/// connection waits.
pub(crate) struct Call<'a, D, F> {
    driver: &'a mut D,
    call: F,
    /// The I/O asked for and not done yet: the call is made again only
    /// once something happened.
    asked: Option<Io>,
    /// That I/O had to wait (its deadline was read then).
    waited: bool,
}

impl<'a, D, F> Call<'a, D, F> {
    /// The future of the session call `call`, doing the I/O it asks for
    /// through `driver`.
    #[inline]
    pub(crate) fn new(driver: &'a mut D, call: F) -> Self {
        Call {
            driver,
            call,
            asked: None,
            waited: false,
        }
    }
}

// `call` is never pinned: the future only moves it by reference.
impl<D, F> Unpin for Call<'_, D, F> {}

impl<D, V, F> Future for Call<'_, D, F>
where
    D: Drive,
    F: FnMut(&mut D::Session, Instant) -> Result<Step<V>, SessionError>,
{
    type Output = io::Result<V>;

    /// Inlined into the task that awaits the call: the value (a request
    /// head, a few hundred bytes) is then written where the task keeps it,
    /// not returned through a copy, and a call that completes at once (a
    /// pipelined request already read) costs no call frame of its own.
    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<V>> {
        let this = self.get_mut();
        let mut parts = this.driver.parts();
        // The clock as of the call's first poll, or of this wake-up after a
        // wait: an I/O that completes at once, and every session call of
        // this wake-up, take this reading. A timer that went off during
        // this poll is the one wait that does not end it: the clock is read
        // again, or the session would find its deadline still ahead and
        // the poll would go round the expired timer for ever.
        let mut now = parts.io.now();
        loop {
            let step = match this.asked {
                Some(step) => step,
                None => match (this.call)(parts.session, now) {
                    Ok(Step::Ready(value)) => return Poll::Ready(Ok(value)),
                    Ok(Step::Io(step)) => {
                        this.waited = false;
                        *this.asked.insert(step)
                    }
                    Err(err) => return Poll::Ready(Err(err.into())),
                },
            };
            let Poll::Ready(done) = parts.poll_io(cx, step, &mut this.waited) else {
                return Poll::Pending;
            };
            this.asked = None;
            match done {
                Done::Signal => {
                    parts.waits.signal = None;
                    parts.session.shutdown(now);
                }
                // The wall clock with every read and timeout reported: the
                // `Date` of what they lead to.
                Done::Io(io, result) => {
                    if result
                        .as_ref()
                        .is_err_and(|e| e.kind() == ErrorKind::TimedOut)
                    {
                        now = parts.io.now();
                    }
                    parts.wall.report(parts.session, io, result, now)?;
                }
            }
        }
    }
}

/// A graceful shutdown fanned out to every connection of a server, on any
/// runtime, and the wait for the connections to end. Each connection task
/// holds a guard from [`enter`](Self::enter) for as long as it runs and
/// hands a [`signal`](Self::signal) to its driver (the future
/// [`Conn::shutdown_on`] and the tokio adapter's `shutdown_on` take);
/// [`begin`](Self::begin) fires every signal, and
/// [`drained`](Self::drained) completes once every guard is dropped. The
/// accept loop stops accepting on `begin`; the application bounds the wait
/// for `drained` with its runtime's timer and exits either way.
///
/// ```
/// use h1proto::adapter::driver::Shutdown;
/// # use std::task::{Context, Poll, Waker};
/// # use std::future::Future;
/// # let mut cx = Context::from_waker(Waker::noop());
///
/// let shutdown = Shutdown::new();
/// // Per accepted connection, moved into its task:
/// let (guard, signal) = (shutdown.enter(), shutdown.signal());
/// let mut signal = std::pin::pin!(signal);
/// assert!(signal.as_mut().poll(&mut cx).is_pending());
///
/// shutdown.begin(); // SIGTERM: every connection's signal fires
/// assert!(signal.as_mut().poll(&mut cx).is_ready());
/// let mut drained = std::pin::pin!(shutdown.drained());
/// assert!(drained.as_mut().poll(&mut cx).is_pending()); // still finishing
/// drop(guard); // the connection ended
/// assert!(drained.as_mut().poll(&mut cx).is_ready());
/// assert_eq!(shutdown.live(), 0);
/// ```
#[derive(Clone, Default)]
pub struct Shutdown {
    inner: Arc<Mutex<State>>,
}

/// What every [`Shutdown`] handle, guard and signal share.
#[derive(Default)]
struct State {
    begun: bool,
    /// The next signal's key.
    next: u64,
    /// The signals waiting, by key, with the waker of the task that polled
    /// each last.
    waiting: HashMap<u64, Waker>,
    /// The guards alive: the connections not yet ended.
    live: usize,
    /// The tasks waiting for the guards to go.
    drained: Vec<Waker>,
}

impl fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shutdown")
            .field("begun", &self.is_begun())
            .field("live", &self.live())
            .finish()
    }
}

impl Shutdown {
    /// A shutdown not begun, with no connection.
    pub fn new() -> Self {
        Shutdown::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while the lock was held leaves the state as
        // consistent as any step of it: go on.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A connection begins: it counts as live until the guard is dropped.
    pub fn enter(&self) -> ShutdownGuard {
        self.state().live += 1;
        ShutdownGuard {
            shutdown: self.clone(),
        }
    }

    /// A future that completes once the shutdown begins (at once if it
    /// has): what a connection's driver watches.
    pub fn signal(&self) -> ShutdownSignal {
        let mut state = self.state();
        let key = state.next;
        state.next += 1;
        ShutdownSignal {
            shutdown: self.clone(),
            key,
        }
    }

    /// Begins the shutdown: every signal, given out or to come, fires.
    pub fn begin(&self) {
        let wakers: Vec<Waker> = {
            let mut state = self.state();
            state.begun = true;
            state.waiting.drain().map(|(_, waker)| waker).collect()
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// `true` once [`begin`](Self::begin) was called.
    pub fn is_begun(&self) -> bool {
        self.state().begun
    }

    /// How many guards are alive: the connections not yet ended.
    pub fn live(&self) -> usize {
        self.state().live
    }

    /// Completes once no guard is alive: every connection ended.
    pub fn drained(&self) -> impl Future<Output = ()> + Send + 'static {
        let shutdown = self.clone();
        poll_fn(move |cx| {
            let mut state = shutdown.state();
            if state.live == 0 {
                return Poll::Ready(());
            }
            if !state.drained.iter().any(|w| w.will_wake(cx.waker())) {
                state.drained.push(cx.waker().clone());
            }
            Poll::Pending
        })
    }
}

/// A connection's place in a [`Shutdown`]: the connection counts as live
/// until this is dropped.
pub struct ShutdownGuard {
    shutdown: Shutdown,
}

impl fmt::Debug for ShutdownGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShutdownGuard").finish_non_exhaustive()
    }
}

impl Drop for ShutdownGuard {
    fn drop(&mut self) {
        let wakers = {
            let mut state = self.shutdown.state();
            state.live -= 1;
            if state.live == 0 {
                std::mem::take(&mut state.drained)
            } else {
                Vec::new()
            }
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

/// A future that completes when its [`Shutdown`] begins.
pub struct ShutdownSignal {
    shutdown: Shutdown,
    key: u64,
}

impl fmt::Debug for ShutdownSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShutdownSignal")
            .field("begun", &self.shutdown.is_begun())
            .finish_non_exhaustive()
    }
}

impl Future for ShutdownSignal {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.shutdown.state();
        if state.begun {
            return Poll::Ready(());
        }
        let waker = (state.waiting.entry(self.key)).or_insert_with(|| cx.waker().clone());
        // Cloned only when the kept one would wake another task.
        waker.clone_from(cx.waker());
        Poll::Pending
    }
}

impl Drop for ShutdownSignal {
    fn drop(&mut self) {
        self.shutdown.state().waiting.remove(&self.key);
    }
}
