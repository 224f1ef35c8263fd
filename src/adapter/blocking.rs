//! A blocking driver over `std::io` (feature `blocking`).
//!
//! [`Server`] and [`Client`] run a [`ServerSession`] / [`ClientSession`]
//! over a stream that can read, write, time out and half-close
//! ([`Transport`]: `TcpStream`, `&TcpStream`, a Unix socket, or your own
//! type). Every protocol decision is the session's; this module only
//! does the I/O it asks for. [`serve`] answers each request of a
//! connection with a function from `Request<Bytes>` to `Response<Bytes>`.
//!
//! ```no_run
//! use std::net::TcpListener;
//! use h1proto::Config;
//! use h1proto::adapter::blocking;
//!
//! let listener = TcpListener::bind("127.0.0.1:8080")?;
//! for stream in listener.incoming() {
//!     let Ok(stream) = stream else {
//!         // Out of descriptors (`EMFILE`) and the like: pause, neither
//!         // spin nor exit.
//!         std::thread::sleep(std::time::Duration::from_millis(100));
//!         continue;
//!     };
//!     // A connection whose thread cannot be spawned is dropped.
//!     let _ = std::thread::Builder::new().spawn(move || {
//!         stream.set_nodelay(true).ok();
//!         blocking::serve(stream, Config::default(), |req| {
//!             http::Response::new(format!("{} {}\n", req.method(), req.uri()).into())
//!         })
//!     });
//! }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The accept loop is the application's: `examples/blocking_server.rs`
//! adds a connection cap, a back-off and a log that does not repeat
//! (`examples/common/mod.rs`, `docs/security.md`).

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use http::{Request, Response};

use super::{Driver, Runtime, sealed};
use crate::{ClientSession, Io, ServerSession, Session, SessionError, Step};

/// What a blocking driver needs of a stream besides reading and writing:
/// a bound on how long one read or write blocks, and shutting down the
/// sending half (for the lingering close). Both default to doing nothing,
/// for streams that cannot (timeouts then only fire between reads).
pub trait Transport: Read + Write {
    /// Makes the next reads and writes give up after `wait` (`None`:
    /// block for as long as it takes).
    ///
    /// # Errors
    ///
    /// The timeout could not be set.
    fn set_timeout(&mut self, wait: Option<Duration>) -> io::Result<()> {
        let _ = wait;
        Ok(())
    }

    /// Shuts down the sending half.
    ///
    /// # Errors
    ///
    /// The stream could not be shut down.
    fn shutdown_write(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<T: Transport + ?Sized> Transport for &mut T {
    fn set_timeout(&mut self, wait: Option<Duration>) -> io::Result<()> {
        (**self).set_timeout(wait)
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        (**self).shutdown_write()
    }
}

macro_rules! socket_transport {
    ($($t:ty),*) => {$(
        impl Transport for $t {
            fn set_timeout(&mut self, wait: Option<Duration>) -> io::Result<()> {
                self.set_read_timeout(wait)?;
                self.set_write_timeout(wait)
            }

            fn shutdown_write(&mut self) -> io::Result<()> {
                self.shutdown(Shutdown::Write)
            }
        }
    )*};
}

socket_transport!(TcpStream, &TcpStream);
#[cfg(unix)]
socket_transport!(std::os::unix::net::UnixStream);

/// How often a connection waiting for its peer looks at its shutdown
/// flag, at least.
const SHUTDOWN_POLL: Duration = Duration::from_millis(200);

/// The blocking runtime (a thread per connection), for [`Driver`].
#[derive(Debug)]
pub enum Blocking {}

impl Runtime for Blocking {}

/// What a connection driven on a thread keeps besides its session.
#[derive(Debug, Default)]
pub struct BlockingState {
    /// The timeout last set on the stream.
    timeout: Option<Duration>,
    shutdown: Option<Arc<AtomicBool>>,
}

impl sealed::Runtime for Blocking {
    type PerConnection = BlockingState;

    #[inline]
    fn now() -> Instant {
        Instant::now()
    }
}

/// One server connection over a blocking stream, driven by the
/// application: [`next_request`](Driver::next_request), then the body and
/// the response (the session's own calls, on the server itself), and
/// [`close`](Driver::close) at the end.
pub type Server<S> = Driver<S, ServerSession, Blocking>;

/// A client connection over a blocking stream. [`send`](Driver::send)
/// sends one request and reads its response. Requests may also be queued
/// with the session's `send_request` before their responses are read
/// (pipelining), each response then read in order with
/// [`call`](Driver::call). Dropping the client closes the connection.
///
/// ```no_run
/// use h1proto::ClientSession;
/// use h1proto::adapter::blocking::Client;
///
/// let mut client = Client::connect("127.0.0.1:8080")?;
/// let res = client.send(http::Request::get("/").header("host", "127.0.0.1:8080"))?;
/// println!("{} {:?}", res.status(), res.body());
/// // Two pipelined requests, both written before either answer is read.
/// for path in ["/a", "/b"] {
///     client.sender().send_request(http::Request::get(path).header("host", "127.0.0.1:8080"))?;
/// }
/// for _ in 0..2 {
///     let res = client.call(ClientSession::next_full_response)?.ok_or("closed")?;
///     println!("{} {:?}", res.status(), res.body());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type Client<S> = Driver<S, ClientSession, Blocking>;

impl<S: Transport, T: Session> Driver<S, T, Blocking> {
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
        mut call: impl FnMut(&mut T, Instant) -> Result<Step<V>, SessionError>,
    ) -> io::Result<V> {
        // The clock is read when the call starts and after each I/O, which
        // may block; in between only the session's own work passes.
        let mut now = Instant::now();
        loop {
            let flag = &mut self.runtime.shutdown;
            if flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
                *flag = None;
                self.session.shutdown(now);
            }
            // Matched whole, not through `?`: the value is moved once.
            match call(&mut self.session, now) {
                Ok(Step::Ready(value)) => return Ok(value),
                Ok(Step::Io(step)) => now = self.perform(step, now)?,
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// One I/O, bounded by the session's deadline; returns the time it
    /// ended.
    fn perform(&mut self, step: Io, now: Instant) -> io::Result<Instant> {
        let flag = self.runtime.shutdown.is_some();
        let wait = match self.session.poll_timeout() {
            // The flag is looked at every SHUTDOWN_POLL: only a deadline
            // before the next look needs the time left worked out.
            None if flag => Some(SHUTDOWN_POLL),
            Some(at) if flag && now.checked_add(SHUTDOWN_POLL).is_some_and(|p| at >= p) => {
                Some(SHUTDOWN_POLL)
            }
            at => at.map(|at| at.saturating_duration_since(now)),
        };
        // Setting a timeout is a system call: only when the one set would
        // wake too late, or far too early (the one set is never zero).
        let set = &mut self.runtime.timeout;
        if wait != *set {
            if wait == Some(Duration::ZERO) {
                self.wall.update(now, &mut self.session);
                self.session.handle_timeout(now);
                return Ok(now);
            }
            if wait < *set || wait.zip(*set).is_none_or(|(w, t)| t < w / 2) {
                self.io.set_timeout(wait)?;
                *set = wait;
            }
        }
        let result = match step {
            Io::Read if !self.session.holds_read_buf() => {
                // Holding no buffer (a new connection, an idle one that
                // gave its buffers back): the wait goes on without one,
                // and the session's is made for the bytes that came.
                let mut room = [0u8; STACK_READ];
                let n = self.io.read(&mut room);
                if let Ok(n) = n {
                    self.session.read_buf().extend_from_slice(&room[..n]);
                }
                n
            }
            Io::Read => self.io.read(self.session.read_slice()),
            // One contiguous segment (a head with a small body, or the
            // answers to pipelined requests): a plain write.
            Io::Write if self.session.output().segment_count() == 1 => {
                self.io.write(Buf::chunk(self.session.output()))
            }
            Io::Write => {
                let mut slices = [IoSlice::new(&[]); 16];
                let n = self.session.output().io_slices(&mut slices);
                self.io.write_vectored(&slices[..n])
            }
            _ => self.io.shutdown_write().map(|()| 0),
        };
        let now = Instant::now();
        self.wall.report(&mut self.session, step, result, now)?;
        Ok(now)
    }
}

/// What a read into the driver's stack takes at most, while the session
/// holds no read buffer: what the session's own first reads ask for.
const STACK_READ: usize = 1024;

impl<S: Transport> Server<S> {
    /// Starts a graceful shutdown of this connection once `flag` is set;
    /// a connection waiting for its peer notices within 200 ms.
    pub fn shutdown_on(&mut self, flag: Arc<AtomicBool>) {
        self.runtime.shutdown = Some(flag);
    }

    /// [`serve`]'s handler's answer: a blocking handler has run to its
    /// end by the time it is here, and the client was not watched
    /// meanwhile (the tokio driver's `serve` watches it).
    #[allow(clippy::unnecessary_wraps)]
    fn answered<T>(&mut self, answer: T) -> io::Result<T> {
        Ok(answer)
    }
}

io_calls!(
    ;
    plain;
    [Transport];
    [F] [F: FnMut(Request<Bytes>) -> Response<Bytes>]
);
