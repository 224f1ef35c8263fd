//! Deadlines: what a session waits for, and until when.

use std::time::{Duration, Instant};

use bytes::BytesMut;

use crate::Config;
use crate::segments::Segments;

use super::Timeouts;

/// `since + timeout`, or `None` without a timeout (or past the clock's
/// range, which is as good as never).
pub(super) fn after(since: Instant, timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| since.checked_add(t))
}

/// The earlier of two deadlines, each with what expires.
pub(super) fn earliest<T>(
    a: Option<(Instant, T)>,
    b: Option<(Instant, T)>,
) -> Option<(Instant, T)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// When a deadline falls: at an instant, or a timeout after one (kept
/// apart so that a driver that waits for a duration, as a blocking socket
/// does, need not add and then subtract again when the wait began now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    At(Instant),
    After(Instant, Duration),
}

impl Due {
    /// The instant, or `None` past the clock's range (as good as never).
    pub(super) fn at(self) -> Option<Instant> {
        match self {
            Due::At(at) => Some(at),
            Due::After(since, timeout) => since.checked_add(timeout),
        }
    }

    /// How long from `now` until it falls (zero once it has).
    pub(super) fn wait(self, now: Instant) -> Option<Duration> {
        match self {
            Due::After(since, timeout) if since == now => Some(timeout),
            due => due.at().map(|at| at.saturating_duration_since(now)),
        }
    }
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

/// The bytes asked for by a read once the buffers were given back: enough
/// for a small head in one read, little for an idle connection to hold.
pub(super) const RELEASED_READ: usize = 256;

/// The bytes the first read of a connection asks for: most request and
/// response heads fit; a read that fills it doubles the next one, up to
/// `Config::read_size`.
pub(super) const FIRST_READ: usize = 1024;

/// The read buffer and the idle-release policy both sessions share.
#[derive(Debug)]
pub(super) struct ReadBuf {
    pub(super) buf: BytesMut,
    /// The buffers were given back: reads ask for [`RELEASED_READ`].
    pub(super) released: bool,
    /// What the next read asks for (before the `read_size` cap).
    next: usize,
    /// The room the last `for_read` offered.
    offered: usize,
}

impl ReadBuf {
    pub(super) fn new() -> Self {
        ReadBuf {
            buf: BytesMut::new(),
            released: false,
            next: FIRST_READ,
            offered: 0,
        }
    }

    /// The buffer, with room for one read: small at first and after the
    /// buffers were given back, doubling while reads fill what they are
    /// offered, up to `read_size`. A connection that carries small
    /// messages never holds a large buffer.
    pub(super) fn for_read(&mut self, read_size: usize) -> &mut BytesMut {
        let want = if self.released {
            RELEASED_READ
        } else {
            self.next.min(read_size)
        };
        if self.buf.capacity() - self.buf.len() < want {
            self.buf.reserve(want);
        }
        self.offered = self.buf.capacity() - self.buf.len();
        &mut self.buf
    }

    /// Notes a read of `n > 0` bytes: the buffers are in use again, and a
    /// read that filled its room asks for twice as much next time.
    pub(super) fn read(&mut self, n: usize) {
        if self.released {
            self.released = false;
            self.next = FIRST_READ;
        } else if n >= self.offered {
            self.next = self.next.saturating_mul(2);
        }
    }

    /// Gives back what the buffers hold beyond their bytes: the read
    /// buffer keeps only what it has received, the output buffer nothing.
    pub(super) fn release(&mut self, output: &mut Segments) {
        if !self.released {
            self.released = true;
            self.buf = if self.buf.is_empty() {
                BytesMut::new()
            } else {
                BytesMut::from(&self.buf[..])
            };
            output.release();
        }
    }
}

/// The session settings kept besides the connection's.
#[derive(Debug, Clone)]
pub(super) struct Knobs {
    pub(super) timeouts: Timeouts,
    pub(super) read_size: usize,
    pub(super) flush_threshold: usize,
    pub(super) linger_bytes: usize,
    pub(super) release_after: Duration,
}

impl Knobs {
    pub(super) fn of(config: &Config) -> Self {
        Knobs {
            timeouts: config.timeouts,
            read_size: config.read_size.max(1),
            flush_threshold: config.flush_threshold,
            linger_bytes: config.linger_bytes,
            release_after: config.release_after,
        }
    }
}
