//! Drivers that run a session over real I/O.
//!
//! Each adapter is a loop over a [`ServerSession`](crate::ServerSession)
//! or [`ClientSession`](crate::ClientSession) and nothing more: make the
//! call the application wants; when the session answers with an
//! [`Io`](crate::Io), do that I/O, waiting no later than the session's
//! deadline; report it; call again. Every protocol decision (when to
//! write, `100 Continue`, error responses, timeouts, graceful shutdown,
//! the lingering close, giving an idle connection's buffers back) is the
//! session's, so a driver for another runtime is as short as these.
//!
//! | module | feature | over |
//! |---|---|---|
//! | [`blocking`] | `blocking` (default) | `std::io::{Read, Write}` with timeouts and half-close ([`blocking::Transport`]), e.g. `TcpStream` |
//! | [`tokio`] | `tokio` (default) | `tokio::io::{AsyncRead, AsyncWrite}`, e.g. `tokio::net::TcpStream` |
//!
//! With `default-features = false` the crate has neither and no runtime
//! dependency. Errors surface as `std::io::Error` (see [`into_io`]).

#[cfg(feature = "blocking")]
pub mod blocking;
#[cfg(feature = "tokio")]
pub mod tokio;

use std::io;

use crate::{ErrorKind, SessionError, UsageError};

/// How the adapters report a [`SessionError`] as an `io::Error`; its inner
/// error (`get_ref`, `into_inner`) is the [`Error`](crate::Error) or
/// [`UsageError`] itself, so `downcast_ref::<h1proto::Error>()` finds the
/// peer's error, its status and the leniency switch that would accept it:
///
/// | session error | `io::ErrorKind` |
/// |---|---|
/// | a timeout ([`ErrorKind::HeadTimeout`], `BodyTimeout`, `WriteTimeout`, `ResponseTimeout`) | `TimedOut` |
/// | the peer closed inside a message ([`ErrorKind::UnexpectedEof`]) | `UnexpectedEof` |
/// | any other protocol error by the peer | `InvalidData` |
/// | a local misuse ([`SessionError::Usage`]) | `InvalidInput` |
pub fn into_io(err: SessionError) -> io::Error {
    match err {
        SessionError::Peer(e) => {
            let kind = match e.kind() {
                ErrorKind::HeadTimeout
                | ErrorKind::BodyTimeout
                | ErrorKind::WriteTimeout
                | ErrorKind::ResponseTimeout => io::ErrorKind::TimedOut,
                ErrorKind::UnexpectedEof => io::ErrorKind::UnexpectedEof,
                _ => io::ErrorKind::InvalidData,
            };
            io::Error::new(kind, e)
        }
        SessionError::Usage(e) => io::Error::new(io::ErrorKind::InvalidInput, e),
    }
}

/// A local misuse as an `io::Error` (`InvalidInput`).
fn usage(err: UsageError) -> io::Error {
    into_io(SessionError::Usage(err))
}
