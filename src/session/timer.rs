//! Deadlines: what a session waits for, and until when.

use std::time::{Duration, Instant};

/// `since + timeout`, or `None` without a timeout (or past the clock's
/// range, which is as good as never).
#[inline]
pub(super) fn after(since: Instant, timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| since.checked_add(t))
}

/// What a session waits for when a deadline passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    /// A connection between exchanges: a server's keep-alive connection,
    /// a client's with no request in flight (closed, as a pool's idle
    /// connection).
    Idle,
    /// The head of the next message: a server's next request (or, on a
    /// new connection, any of it), a client's response due.
    Head,
    /// More of the peer's body.
    Body,
    /// The peer to take more output.
    Write,
    /// The end of a server's lingering close.
    Linger,
    /// Time to give the buffers back.
    Release,
}

/// The I/O a session asked for and is waiting on, with when it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Waiting {
    /// Nothing: the application has the next move.
    No,
    /// A read, asked for at this time (or since the last read that
    /// brought bytes).
    Read(Instant),
    /// A write, asked for at this time (or since the last write that took
    /// bytes).
    Write(Instant),
}
