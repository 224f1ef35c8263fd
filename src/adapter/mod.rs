//! Drivers that run a session over real I/O.
//!
//! Each adapter is a loop over a [`ServerSession`]
//! or [`ClientSession`] and nothing more: make the
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
//! dependency. Errors surface as `std::io::Error`, converted as
//! [`SessionError`](crate::SessionError)'s `From` impl says: the peer's
//! [`Error`](crate::Error) or the caller's [`UsageError`](crate::UsageError)
//! is the `io::Error`'s inner error. An adapter's `Server` and `Client`
//! dereference to their session, so every session call that needs no I/O
//! (`send_response`, `send_head`, `finish`, `trailers`, queries) is made on
//! them directly, and its `UsageError` converts with `?` in a function
//! returning `io::Result`. The calls that need I/O have a wrapper each
//! where they are common (`next_request`, `read_data`, `send_data`,
//! `flush`, `close`; `send`, `next_response`), and every other one goes
//! through the driver's `call`, e.g.
//! `server.call(ServerSession::read_body)`.

#[cfg(feature = "blocking")]
pub mod blocking;
#[cfg(feature = "tokio")]
pub mod tokio;

use std::ops::{Deref, DerefMut};
use std::time::Instant;

use bytes::BytesMut;

use crate::{ClientSession, Config, ServerSession};

/// A session and the stream it runs over, driven by runtime `R`: what
/// [`blocking::Server`], [`blocking::Client`], [`tokio::Server`] and
/// [`tokio::Client`] are. It dereferences to the session, so the calls
/// that need no I/O are made on it directly; the runtime adds the calls
/// that do.
pub struct Driver<S, T, R: Runtime> {
    io: S,
    session: T,
    runtime: R::State,
}

/// A runtime the adapters drive sessions on: [`blocking::Blocking`] or
/// [`tokio::Tokio`]. Sealed.
pub trait Runtime: sealed::Runtime {}

pub(crate) mod sealed {
    /// What a runtime keeps per connection.
    pub trait Runtime {
        /// The runtime's own state of a connection (its timer, its
        /// shutdown signal).
        type State: Default;
    }
}

impl<S, T, R: Runtime> Driver<S, T, R> {
    fn with(io: S, session: T) -> Self {
        Driver {
            io,
            session,
            runtime: R::State::default(),
        }
    }
}

impl<S, T, R: Runtime> Deref for Driver<S, T, R> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.session
    }
}

impl<S, T, R: Runtime> DerefMut for Driver<S, T, R> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.session
    }
}

impl<S, R: Runtime> Driver<S, ServerSession, R> {
    /// A server session over `io`, for a connection made now.
    pub fn new(io: S, config: Config) -> Self {
        Driver::with(io, ServerSession::new(config, Instant::now()))
    }
}

impl<S, R: Runtime> Driver<S, ClientSession, R> {
    /// A client session over `io`, for a connection made now.
    pub fn new(io: S, config: Config) -> Self {
        Driver::with(io, ClientSession::new(config, Instant::now()))
    }

    /// `true` while another request may be sent: the idle timeout of the
    /// pool is applied first ([`ClientSession::is_reusable_at`]).
    pub fn is_reusable(&mut self) -> bool {
        self.session.is_reusable_at(Instant::now())
    }

    /// The stream and the bytes read but not decoded (after a protocol
    /// switch, the new protocol's first bytes).
    pub fn into_parts(mut self) -> (S, BytesMut) {
        let buf = self.session.take_read_buf();
        (self.io, buf)
    }
}
