//! Sessions: every protocol decision between a connection and a socket,
//! time included.
//!
//! A [`ServerSession`] or [`ClientSession`] wraps a connection together
//! with its read buffer, its timers and its closing policy. It does no I/O
//! and reads no clock: the driver (a few dozen lines for any runtime) passes
//! the time in as `now` and does only what the session asks, as an [`Io`]:
//! read into [`read_buf`](ServerSession::read_buf) (or, for
//! `std::io::Read`, [`read_slice`](Session::read_slice)), write
//! [`output`](ServerSession::output), shut down the sending half, or close.
//! The deadline to wake up at comes out of
//! [`poll_timeout`](ServerSession::poll_timeout) (the quinn-proto model).
//!
//! The application's calls (`next_request`, `read_data`, `next_response`,
//! `close`, ...) return a [`Step`]: the answer when it is ready, or the
//! [`Io`] that must happen first. A driver's whole loop is therefore:
//!
//! 1. call the session method the application wants;
//! 2. on [`Step::Ready`], hand the value to the application;
//! 3. on [`Step::Io`], do that I/O, waiting no later than
//!    [`poll_timeout`](ServerSession::poll_timeout); report it with
//!    `handle_read` / `handle_write`, or call `handle_timeout` when the
//!    deadline passed first; then go to 1.
//!
//! What the session decides, so that no driver has to: when `100 Continue`
//! is sent, the error response (and withdrawing a queued response it
//! replaces), when output must be written before waiting for the peer and
//! when it is held back, when a body read is done, the timeouts and what
//! each does on expiry, graceful shutdown, the lingering close, and
//! letting an idle connection's buffers go. `docs/sessions.md` has the
//! policy in full.

/// The value of a [`Step::Ready`], or the [`Step::Io`] returned from the
/// enclosing function (as `Ok`): `?` for steps.
macro_rules! ready {
    ($step:expr) => {
        match $step {
            Step::Ready(value) => value,
            Step::Io(io) => return Ok(Step::Io(io)),
        }
    };
}

mod client;
mod core;
mod read;
mod server;
mod timer;

pub use client::ClientSession;
pub use core::SessionOf;
pub use server::ServerSession;

use std::fmt;
use std::time::{Instant, SystemTime};

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Response};

use crate::segments::Segments;

use crate::error::{Error, ErrorKind, UsageError};

/// The driver's side of a session: what it wants read and written, where
/// the bytes go, and when to wake up. Both [`ServerSession`] and
/// [`ClientSession`] implement it, so that a driver for a runtime is
/// written once for both.
///
/// A driver that does one I/O at a time does the [`Io`] a [`Step`] names.
/// A driver that reads and writes at once asks, whenever a call answers
/// with [`Step::Io`], [`wants_write`](Self::wants_write) and
/// [`wants_read`](Self::wants_read), keeps a write and a read under way
/// while they hold, and reports each as it completes. The buffers are lent
/// ([`read_buf`](Self::read_buf), [`output`](Self::output)) to a driver
/// that reads and writes from a borrowed buffer, or handed out owned
/// ([`lend_read_buf`](Self::lend_read_buf),
/// [`lend_output`](Self::lend_output)) to one whose runtime keeps the
/// buffer while the kernel works (io_uring), and given back before the
/// read or write is reported. `docs/sessions.md`, "Writing a driver", has
/// the whole contract.
pub trait Session {
    /// `true` while the session takes input: whenever a call asked for
    /// [`Io::Read`], and, for a driver that reads while it writes, while
    /// less than one read's worth of input waits undecoded (a server reads
    /// that far ahead of pipelined requests, a client reads the server's
    /// answer while its request is still being written). `false` once the
    /// peer closed its side, while the room of a read is lent out, and once
    /// the session closes.
    fn wants_read(&self) -> bool;

    /// `true` while output waits to be written and none is lent out. The
    /// output is corked: a driver writes it once a call answered
    /// [`Step::Io`], not while the application is still queueing.
    fn wants_write(&self) -> bool;

    /// `false` while the session holds no read buffer: a new connection
    /// before its first bytes, and an idle one that gave its buffers back
    /// (`Config::release_after`), until the next read.
    /// [`read_buf`](Self::read_buf) and [`read_slice`](Self::read_slice)
    /// would allocate their room; a driver that can read into a buffer of
    /// its own first (on its stack) and append what came to `read_buf`
    /// waits for input without one, and the session's buffer is made for
    /// the bytes that came. `true` unless a session says otherwise.
    fn holds_read_buf(&self) -> bool {
        true
    }

    /// Where to read into: the session's buffer, with room for one read
    /// (256 bytes while it holds none: on a new connection, and once an
    /// idle connection gave its buffers back; then 1 KiB, doubling while
    /// reads fill it, up to `Config::read_size`). Append what is read,
    /// then call [`handle_read`](Self::handle_read).
    fn read_buf(&mut self) -> &mut BytesMut;

    /// Where to read into, for a reader that needs initialized memory
    /// (`std::io::Read`): a zeroed slice with room for one read, sized as
    /// [`read_buf`](Self::read_buf)'s room is. Read into its start, then
    /// call [`handle_read`](Self::handle_read), which copies the bytes
    /// read into the buffer. The room is kept between reads and zeroed
    /// only when it grows: copying the bytes read costs less than zeroing
    /// `read_buf`'s room before every read. Use one of the two for each
    /// read.
    fn read_slice(&mut self) -> &mut [u8];

    /// The room for one read, owned, for a runtime that keeps the buffer
    /// while the kernel reads (tokio-uring's and monoio's `read(buf)`): an
    /// empty `BytesMut` whose capacity is the room, split off the session's
    /// buffer without a copy. Read into it (its length then counts the
    /// bytes read), give it back with
    /// [`return_read_buf`](Self::return_read_buf), then report with
    /// [`handle_read`](Self::handle_read). One read at a time; every
    /// application call may be made while it is out.
    ///
    /// # Panics
    ///
    /// When the room lent before has not been given back: two rooms out
    /// at once would be joined back in the order they return, which need
    /// not be the order of the bytes on the wire.
    fn lend_read_buf(&mut self) -> BytesMut;

    /// Gives back the buffer [`lend_read_buf`](Self::lend_read_buf) lent,
    /// with what was read into it (rejoined without a copy), or as it was
    /// after a failed or cancelled read.
    fn return_read_buf(&mut self, buf: BytesMut);

    /// Reports a read: `n` bytes were appended to
    /// [`read_buf`](Self::read_buf), written at the start of
    /// [`read_slice`](Self::read_slice), or read into the buffer
    /// [`lend_read_buf`](Self::lend_read_buf) lent (given back first); 0
    /// means the peer closed its side.
    fn handle_read(&mut self, n: usize, now: Instant);

    /// `true` once a read reported the peer's close of its side
    /// ([`handle_read`](Self::handle_read) with 0): no more input comes.
    /// A driver that watches the peer while the application works
    /// (`adapter::driver::Conn::while_connected`) learns so of a close
    /// read at any time, beside a write included. `false` unless a
    /// session says otherwise.
    fn peer_closed(&self) -> bool {
        false
    }

    /// What to write: drain it with a vectored write
    /// (`Segments::io_slices`), then report with
    /// [`handle_write`](Self::handle_write).
    fn output(&mut self) -> &mut Segments;

    /// Everything queued for writing, owned, for a runtime that keeps the
    /// buffers while the kernel writes (tokio-uring's `writev(Vec<Bytes>)`):
    /// the queue's segments in order, without a copy (its small pieces are
    /// in one segment). Write them, give them back unchanged with
    /// [`return_output`](Self::return_output), then report the bytes
    /// written with [`handle_write`](Self::handle_write). Output queued
    /// while they are out goes behind them. One write at a time: while
    /// output is out, this returns an empty vector.
    fn lend_output(&mut self) -> Vec<Bytes>;

    /// Gives back what [`lend_output`](Self::lend_output) lent, as it was
    /// lent: [`handle_write`](Self::handle_write) then takes off what was
    /// written. The vector's allocation is kept for the next lend.
    fn return_output(&mut self, output: Vec<Bytes>);

    /// Reports a write: takes the `n` bytes written off the front of the
    /// output.
    fn handle_write(&mut self, n: usize, now: Instant);

    /// When the driver must call [`handle_timeout`](Self::handle_timeout)
    /// at the latest while it waits for the I/O the session asked for (or,
    /// for an idle client connection, while it sits in a pool). `None`: no
    /// deadline.
    fn poll_timeout(&self) -> Option<Instant>;

    /// Acts on every deadline that passed by `now` (the table on
    /// [`Timeouts`](crate::Timeouts)), in one call; nothing before the
    /// first. It may be called while buffers are lent out. The
    /// application's pending call, made again, reports a timeout as
    /// [`SessionError::Peer`] with a timeout [`ErrorKind`].
    fn handle_timeout(&mut self, now: Instant);

    /// Starts a graceful shutdown: the exchange in progress is finished,
    /// an idle connection closes at once (a server's with the lingering
    /// close if it answered anything: the client may have pipelined more,
    /// and closing on unread bytes would reset the last answer away).
    fn shutdown(&mut self, now: Instant);

    /// Hands the session the wall clock, for the `Date` of a server's
    /// responses (RFC 9110 section 6.6.1; [`Config::send_date`](crate::Config::send_date)):
    /// a driver calls it with `SystemTime::now()` just before each
    /// [`handle_read`](Self::handle_read) and
    /// [`handle_timeout`](Self::handle_timeout), so that the answer to a
    /// request carries the second the request was read in, and a `408`
    /// the second of its timeout. The session keeps the last time given,
    /// so a driver may skip the call while the wall clock's second cannot
    /// have changed: the adapters and `adapter::driver::Conn` read the wall clock
    /// again only once their monotonic `now` has passed the next second
    /// of the last reading (once a second at most; a step of the wall
    /// clock shows within a second). The text is formatted only when the
    /// second changes. A session never given the clock sends no `Date`. A
    /// client session ignores it.
    fn set_date(&mut self, now: SystemTime) {
        let _ = now;
    }
}

/// The I/O a session needs before it can go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Io {
    /// Read from the peer into `read_buf()` (or `read_slice()`), then call
    /// `handle_read(n, now)` with the number of bytes read (0: the peer
    /// closed its side).
    Read,
    /// Write `output()` (a vectored write), then call
    /// `handle_write(n, now)` with the number of bytes written.
    Write,
    /// Shut down the sending half of the socket (the lingering close
    /// begins: the session keeps reading and discarding for a while), then
    /// call the session again.
    Shutdown,
    /// Close the socket: the session is over.
    Close,
}

/// The result of a session call: the value, or the I/O that must happen
/// before the call is made again.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Step<T> {
    /// The call is complete.
    Ready(T),
    /// Do this I/O, then make the same call again.
    Io(Io),
}

/// A session call that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionError {
    /// The peer broke the protocol or was too slow. The session has queued
    /// the response the error calls for, if any can still be sent, and
    /// closes: call `close` until it is done.
    Peer(Error),
    /// The local caller used the session wrongly; nothing was changed.
    Usage(UsageError),
}

impl From<Error> for SessionError {
    fn from(err: Error) -> Self {
        SessionError::Peer(err)
    }
}

impl From<UsageError> for SessionError {
    fn from(err: UsageError) -> Self {
        SessionError::Usage(err)
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Peer(err) => err.fmt(f),
            SessionError::Usage(err) => err.fmt(f),
        }
    }
}

/// How a [`SessionError`] becomes an `io::Error` (what the adapters
/// return); its inner error (`get_ref`, `into_inner`) is the
/// [`Error`] or [`UsageError`] itself, so
/// `downcast_ref::<h1proto::Error>()` finds the peer's error, its status
/// and the leniency tolerance that would accept it:
///
/// | session error | `io::ErrorKind` |
/// |---|---|
/// | a timeout ([`ErrorKind::HeadTimeout`], `BodyTimeout`, `WriteTimeout`, `ResponseTimeout`) | `TimedOut` |
/// | the peer closed inside a message ([`ErrorKind::UnexpectedEof`]) | `UnexpectedEof` |
/// | any other protocol error by the peer | `InvalidData` |
/// | a local misuse ([`SessionError::Usage`]) | `InvalidInput` |
impl From<SessionError> for std::io::Error {
    fn from(err: SessionError) -> Self {
        match err {
            SessionError::Peer(e) => e.into(),
            SessionError::Usage(e) => e.into(),
        }
    }
}

impl From<Error> for std::io::Error {
    fn from(err: Error) -> Self {
        use std::io::ErrorKind as Io;
        let kind = match err.kind() {
            ErrorKind::HeadTimeout
            | ErrorKind::BodyTimeout
            | ErrorKind::WriteTimeout
            | ErrorKind::ResponseTimeout => Io::TimedOut,
            ErrorKind::UnexpectedEof => Io::UnexpectedEof,
            _ => Io::InvalidData,
        };
        std::io::Error::new(kind, err)
    }
}

impl From<UsageError> for std::io::Error {
    fn from(err: UsageError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, err)
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::Peer(err) => Some(err),
            SessionError::Usage(err) => Some(err),
        }
    }
}

/// The trailer fields of a message whose body was collected whole
/// (`next_full_request`, `next_full_response`), kept in its extensions so
/// that nothing the peer sent is dropped. With
/// [`Config::wire_view`](crate::Config::wire_view) on, the extensions
/// hold the section's [`WireTrailers`](crate::wire::WireTrailers) too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrailerFields(pub HeaderMap);

/// The interim (1xx) responses that came before a final response whose
/// body was collected whole, in order, kept in its extensions.
#[derive(Debug, Clone, Default)]
pub struct InterimResponses(pub Vec<Response<()>>);
