//! Sessions: every protocol decision between a connection and a socket,
//! time included.
//!
//! A [`ServerSession`] or [`ClientSession`] wraps a connection together
//! with its read buffer, its timers and its closing policy. It does no I/O
//! and reads no clock: the driver (a few dozen lines for any runtime) passes
//! the time in as `now` and does only what the session asks, as an [`Io`]:
//! read into [`read_buf`](ServerSession::read_buf) (or, for
//! `std::io::Read`, [`read_room`](Session::read_room)), write
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
mod server;
mod timer;

pub use client::ClientSession;
pub use server::ServerSession;

use std::fmt;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Response};

use crate::Timeouts;
use crate::chunk_ext::ChunkExtensions;
use crate::segments::Segments;

use crate::error::{Error, ErrorKind, UsageError};

/// The driver's side of a session: where to read into, what to write,
/// and when to wake up. Both [`ServerSession`] and [`ClientSession`]
/// implement it, so that a driver for a runtime is written once for both.
pub trait Session {
    /// Where to read into after [`Io::Read`]: the session's buffer, with
    /// room for one read (`Config::read_size` bytes, or a few hundred once
    /// an idle connection gave its buffers back). Append what is read,
    /// then call [`handle_read`](Self::handle_read).
    fn read_buf(&mut self) -> &mut BytesMut;

    /// Where to read into after [`Io::Read`], for a reader that needs
    /// initialized memory (`std::io::Read`): a zeroed slice with room for
    /// one read, sized as [`read_buf`](Self::read_buf)'s room is. Read
    /// into its start, then call [`handle_read`](Self::handle_read), which
    /// copies the bytes read into the buffer. The room is kept between
    /// reads and zeroed only when it grows: copying the bytes read costs
    /// less than zeroing `read_buf`'s room before every read. Use one of
    /// the two for each read.
    fn read_room(&mut self) -> &mut [u8];

    /// Reports a read: `n` bytes were appended to
    /// [`read_buf`](Self::read_buf), or written at the start of
    /// [`read_room`](Self::read_room); 0 means the peer closed its side.
    fn handle_read(&mut self, n: usize, now: Instant);

    /// What to write after [`Io::Write`]: drain it with a vectored write
    /// (`Segments::io_slices`), then report with
    /// [`handle_write`](Self::handle_write).
    fn output(&mut self) -> &mut Segments;

    /// Reports a write: takes the `n` bytes written off the front of
    /// [`output`](Self::output).
    fn handle_write(&mut self, n: usize, now: Instant);

    /// When the driver must call [`handle_timeout`](Self::handle_timeout)
    /// at the latest while it waits for the I/O the session asked for (or,
    /// for an idle client connection, while it sits in a pool). `None`: no
    /// deadline.
    fn poll_timeout(&self) -> Option<Instant>;

    /// [`poll_timeout`](Self::poll_timeout) as the time left from `now`
    /// (zero once it passed), for a driver that waits for a duration, as
    /// a socket's read and write timeouts do. A session may answer it
    /// without working out the instant, when the wait began at `now`.
    fn poll_wait(&self, now: Instant) -> Option<Duration> {
        self.poll_timeout()
            .map(|at| at.saturating_duration_since(now))
    }

    /// Acts on the deadline that passed, if any by `now` (the table on
    /// [`Timeouts`]). The application's pending call, made again, reports
    /// a timeout as [`SessionError::Peer`] with a timeout
    /// [`ErrorKind`](crate::ErrorKind).
    fn handle_timeout(&mut self, now: Instant);

    /// Starts a graceful shutdown: the exchange in progress is finished,
    /// an idle connection closes at once (a server's with the lingering
    /// close if it answered anything: the client may have pipelined more,
    /// and closing on unread bytes would reset the last answer away).
    fn shutdown(&mut self, now: Instant);
}

/// The I/O a session needs before it can go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Io {
    /// Read from the peer into `read_buf()` (or `read_room()`), then call
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
/// and the leniency switch that would accept it:
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

/// The pieces of a body in one `Bytes`, copying only when there are
/// several.
pub(crate) fn concat(pieces: &mut Vec<Bytes>) -> Bytes {
    match pieces.len() {
        0 => Bytes::new(),
        1 => pieces.pop().unwrap_or_default(),
        _ => {
            let whole = pieces.concat();
            pieces.clear();
            whole.into()
        }
    }
}

/// The chunk extensions a session has read (`Config::chunk_extensions`),
/// kept with the body piece they came before. Made by the first chunk-size
/// line that carries any, so that a session that never sees one holds a
/// null pointer.
#[derive(Debug, Default)]
pub(crate) struct ChunkExtSlot {
    /// Read, and no body piece handed out since.
    pending: Option<ChunkExtensions>,
    /// Those of the piece (or the end) handed out last.
    current: Option<ChunkExtensions>,
}

impl ChunkExtSlot {
    /// A chunk-size line with `extensions` was read.
    pub(crate) fn arrived(slot: &mut Option<Box<Self>>, extensions: ChunkExtensions) {
        slot.get_or_insert_with(Box::default).pending = Some(extensions);
    }

    /// A body piece, or the end of the body, is handed out: it carries
    /// what was read since the last one.
    #[inline]
    pub(crate) fn handed_out(slot: &mut Option<Box<Self>>) {
        if let Some(slot) = slot {
            slot.current = slot.pending.take();
        }
    }

    /// A new message begins: nothing read so far is its.
    #[inline]
    pub(crate) fn reset(slot: &mut Option<Box<Self>>) {
        if let Some(slot) = slot {
            **slot = Self::default();
        }
    }

    /// Those of the piece handed out last.
    pub(crate) fn current(slot: &Option<Box<Self>>) -> Option<&ChunkExtensions> {
        slot.as_ref().and_then(|slot| slot.current.as_ref())
    }
}
