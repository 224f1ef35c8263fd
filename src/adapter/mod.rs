//! Drivers that move a connection's bytes over real I/O.
//!
//! Each adapter is a loop over the public connection API
//! ([`ServerConnection`](crate::ServerConnection),
//! [`ClientConnection`](crate::ClientConnection)) and nothing more: read into
//! a `BytesMut`, poll events, queue messages, drain the output in vectored
//! writes, close when the connection says so. They hold no HTTP rules of
//! their own; what they add is I/O policy only:
//!
//! - output is written only when the adapter is about to wait for input (or
//!   when more than [`FLUSH_THRESHOLD`] bytes are queued), so responses to
//!   pipelined requests that arrived in one read leave in one write
//!   (`write` when the queue is one contiguous segment, `write_vectored`
//!   when it is more; looped on partial writes);
//! - reads go into the caller's buffer [`READ_SIZE`] bytes at a time, so what
//!   is buffered from a peer stays within the connection's
//!   [`Limits`](crate::Limits) plus one read;
//! - sockets they open get `TCP_NODELAY`, and a server connection that must
//!   close half-closes and discards what the peer still sends for a bounded
//!   time before closing (RFC 9112 section 9.6), so that the peer reads the
//!   last response instead of a reset.
//!
//! | module | feature | over |
//! |---|---|---|
//! | [`blocking`] | `blocking` (default) | `std::io::{Read, Write}`, e.g. `TcpStream` |
//! | [`tokio`] | `tokio` (default) | `tokio::io::{AsyncRead, AsyncWrite}`, e.g. `tokio::net::TcpStream` |
//!
//! With `default-features = false` the crate has neither and no runtime
//! dependency. Errors surface as `std::io::Error`: a peer's protocol error
//! as [`InvalidData`](std::io::ErrorKind::InvalidData) wrapping an
//! [`Error`](crate::Error), a local misuse as
//! [`InvalidInput`](std::io::ErrorKind::InvalidInput) wrapping a
//! [`UsageError`](crate::UsageError).

#[cfg(feature = "blocking")]
pub mod blocking;
#[cfg(feature = "tokio")]
pub mod tokio;

/// Bytes asked for by each read from the peer.
pub const READ_SIZE: usize = 16 * 1024;

/// Queued output past which `send_data` writes at once instead of waiting
/// for the next read, bounding what a streaming sender buffers.
pub const FLUSH_THRESHOLD: usize = 64 * 1024;

/// How much a closing server connection reads and discards, at most, after
/// its last response (lingering close).
pub const LINGER_BYTES: usize = 1024 * 1024;

/// How long a closing server connection waits, at most, for the peer to
/// close after its last response (lingering close).
pub const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(2);

#[allow(dead_code)]
pub(crate) fn protocol_error(err: crate::Error) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, err)
}

#[allow(dead_code)]
pub(crate) fn usage_error(err: crate::UsageError) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, err)
}

#[allow(dead_code)]
pub(crate) fn peer_closed() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "the peer closed the connection",
    )
}
