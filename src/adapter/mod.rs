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
//! | [`driver`] | none: always there | any async runtime's read, write, sleep and half-close ([`driver::RuntimeIo`]): smol, io_uring, ...; and a graceful shutdown fanned out to every connection ([`driver::Shutdown`]) |
#![cfg_attr(
    feature = "blocking",
    doc = "| [`blocking`] | `blocking` (default) | `std::io::{Read, Write}` with timeouts and half-close ([`blocking::Transport`]), e.g. `TcpStream` |"
)]
#![cfg_attr(
    feature = "tokio",
    doc = "| [`tokio`] | `tokio` (default) | `tokio::io::{AsyncRead, AsyncWrite}`, e.g. `tokio::net::TcpStream` |"
)]
#![cfg_attr(
    feature = "tower",
    doc = "| [`tower`] | `tower` | a tower `Service` over `http` types (an axum `Router`), on the tokio driver |"
)]
//!
//! This module is where the crate reads the clock and does I/O; the rest
//! of it does neither. With `default-features = false` only [`driver`] is
//! here, and the crate has no runtime dependency. Errors surface as
//! `std::io::Error`, converted as
//! [`SessionError`](crate::SessionError)'s `From` impl says: the peer's
//! [`Error`](crate::Error) or the caller's [`UsageError`](crate::UsageError)
//! is the `io::Error`'s inner error. An adapter's `Server` and `Client`
//! dereference to their session, so every session call that needs no I/O
//! (`sender().send_response(..)`, `sender().finish(..)`, `trailers`,
//! queries) is made on them directly, and its `UsageError` converts with
//! `?` in a function returning `io::Result`. The calls that need I/O have a wrapper each
//! where they are common (`next_request`, `read_data`, `send_data`,
//! `flush`, `close`; `send`, `next_response`), and every other one goes
//! through the driver's `call`, e.g.
//! `server.call(ServerSession::read_body)`.
//!
//! The blocking driver does one I/O at a time. The tokio driver reads
//! beside a write that has to wait, when the session wants input (the
//! duplex contract of [`Session`]): a client sees a refusal
//! during an upload at once, a server reads pipelined requests
//! while its answer is written. For an application that waits on two
//! connections (a proxy), the tokio driver's `read_ahead` reads what the
//! session wants ahead while the application waits on the other one, and
//! `Client::is_alive` looks at an idle pooled connection without waiting.

/// The calls of a runtime's `Server` and `Client` that wrap a session call
/// with its I/O, and `serve`, written once for both runtimes:
/// `io_calls!(async await; future; [bounds]; [handler generics] [where])`
/// makes them `async fn`s that await [`Driver::call`], and those that are
/// one call return its future itself (no second future around it, which
/// the value would be moved through); `io_calls!(; plain; ...)` plain
/// ones. `bounds`: what the stream must be; the generics and where clause
/// of `serve` say what its handler is.
#[cfg(any(feature = "blocking", feature = "tokio"))]
macro_rules! io_calls {
    (
        $($async:ident $await:ident)?;
        $ret:ident;
        [$($bound:tt)+];
        [$($generics:tt)+] [$($handler:tt)+]
    ) => {
        /// Serves one connection: each request is read with its whole body
        /// (trailers in its extensions as
        /// [`TrailerFields`](crate::TrailerFields)) and answered with what
        /// `handler` returns; the connection is then closed the way its
        /// session decides. A peer's protocol error or timeout is answered
        /// by the session, then returned as an `io::Error`. On tokio, a
        /// client that goes while `handler` works (it closes its side, or
        /// the connection fails) has its work dropped
        /// (the tokio `Server::while_connected`);
        /// a server that answers clients that half-close after their
        /// request drives a `Server` given `set_half_close(true)` with
        /// this function's loop.
        ///
        /// # Errors
        ///
        /// An I/O error, or the peer's error or timeout that ended the
        /// connection; on tokio, the client gone before its answer.
        pub $($async)? fn serve<S: $($bound)+, $($generics)+>(
            io: S,
            config: $crate::Config,
            mut handler: F,
        ) -> ::std::io::Result<()>
        where
            $($handler)+
        {
            let mut server = Server::new(io, config);
            let result = loop {
                match server.call($crate::ServerSession::next_full_request)$(.$await)? {
                    Ok(Some(req)) => {
                        let res = match server.answered(handler(req))$(.$await)? {
                            Ok(res) => res,
                            Err(err) => break Err(err),
                        };
                        // The handler may have taken a while: the `Date`
                        // is the second its answer is queued in.
                        server.now();
                        if let Err(err) = server.sender().send_response(res) {
                            break Err(err.into());
                        }
                    }
                    Ok(None) => break Ok(()),
                    Err(err) => break Err(err),
                }
            };
            server.close()$(.$await)?;
            result
        }

        impl<S: $($bound)+> Server<S> {
            /// [`ServerSession::next_request`](crate::ServerSession::next_request),
            /// doing the I/O it needs.
            ///
            /// # Errors
            ///
            /// An I/O error, or the peer's error or timeout, as an
            /// `io::Error` (see [`SessionError`](crate::SessionError)).
            /// The answer to the peer's error or timeout (its 400, 408,
            /// ...) is queued by then, not written: [`close`](Self::close)
            /// writes it, so a loop of the application's own closes after
            /// an error too, as [`serve`] does.
            pub fn next_request(&mut self) -> $ret!(::std::io::Result<Option<::http::Request<()>>>) {
                self.call($crate::ServerSession::next_request)
            }

            /// [`ServerSession::read_data`](crate::ServerSession::read_data),
            /// doing the I/O it needs.
            ///
            /// # Errors
            ///
            /// As [`next_request`](Self::next_request).
            pub fn read_data(&mut self) -> $ret!(::std::io::Result<Option<::bytes::Bytes>>) {
                self.call($crate::ServerSession::read_data)
            }

            /// [`Sender::send_data`](crate::Sender::send_data),
            /// then writes while too much is queued: pieces stay queued
            /// (and leave together) until more than
            /// `Config::flush_threshold` is, the session next waits for
            /// the client, or [`flush`](Self::flush) writes them; a
            /// stream whose next piece is not ready yet flushes first.
            ///
            /// # Errors
            ///
            /// A usage error, or an I/O error or the write timeout while
            /// writing.
            pub $($async)? fn send_data(&mut self, data: impl Into<::bytes::Bytes>) -> ::std::io::Result<()> {
                self.session.sender().send_data(data)?;
                self.call($crate::ServerSession::poll_flush)$(.$await)?
            }

            /// Writes everything queued
            /// ([`ServerSession::poll_write_all`](crate::ServerSession::poll_write_all)),
            /// for a streaming response whose next piece is not ready yet.
            ///
            /// # Errors
            ///
            /// An I/O error, or the write timeout, while writing.
            pub fn flush(&mut self) -> $ret!(::std::io::Result<()>) {
                self.call($crate::ServerSession::poll_write_all)
            }

            /// Writes what is queued, lingers if the session says so, and
            /// closes (after a protocol switch, see
            /// [`into_parts`](Self::into_parts) instead). Errors are
            /// ignored: the connection is over either way.
            pub $($async)? fn close(&mut self) {
                let _ = self.call($crate::ServerSession::close)$(.$await)?;
            }

            /// After a protocol switch: writes what is queued, then hands
            /// over the stream and the bytes read past the switch.
            ///
            /// # Errors
            ///
            /// A write error.
            pub $($async)? fn into_parts(mut self) -> ::std::io::Result<(S, ::bytes::BytesMut)> {
                self.call($crate::ServerSession::close)$(.$await)??;
                let buf = self.session.take_read_buf();
                Ok((self.io, buf))
            }
        }

        impl<S: $($bound)+> Client<S> {
            /// [`Sender::send_data`](crate::Sender::send_data) on the
            /// request being sent, then writes while too much is queued
            /// ([`ClientSession::poll_flush`](crate::ClientSession::poll_flush)),
            /// as `Server::send_data` does for a response: the way to
            /// stream a request body. A refusal the server sends during the
            /// upload is read meanwhile; the rest of the body is then
            /// dropped without an error, and `next_response` hands out the
            /// refusal.
            ///
            /// # Errors
            ///
            /// A usage error, or an I/O error or the write timeout while
            /// writing; the server's protocol error in an answer read
            /// during the upload.
            pub $($async)? fn send_data(&mut self, data: impl Into<::bytes::Bytes>) -> ::std::io::Result<()> {
                self.session.sender().send_data(data)?;
                self.call($crate::ClientSession::poll_flush)$(.$await)?
            }

            /// Writes everything queued
            /// ([`ClientSession::poll_write_all`](crate::ClientSession::poll_write_all)):
            /// requests queued with `send_request`, or a request body's
            /// pieces, before the application waits for something else.
            ///
            /// # Errors
            ///
            /// As [`send_data`](Self::send_data).
            pub fn flush(&mut self) -> $ret!(::std::io::Result<()>) {
                self.call($crate::ClientSession::poll_write_all)
            }

            /// Sends `req` and reads its final response with the whole body
            /// ([`ClientSession::next_full_response`](crate::ClientSession::next_full_response):
            /// interim responses and trailers are in its extensions). One
            /// exchange at a time: while requests queued with the session's
            /// `send_request` still wait for their responses, the next
            /// response would not be `req`'s, so `req` is refused; read
            /// theirs with `next_response` (or `call(ClientSession::next_full_response)`)
            /// first. What is left unread of a response whose head was
            /// read is skipped, as `next_response` skips it.
            ///
            /// # Errors
            ///
            /// A usage error ([`UsageError::WrongState`](crate::UsageError::WrongState)
            /// with requests in flight), an I/O error, the server's protocol
            /// error or timeout, or the connection closing before the
            /// response.
            pub $($async)? fn send(
                &mut self,
                req: impl $crate::encode::IntoMessage<::http::request::Parts>,
            ) -> ::std::io::Result<::http::Response<::bytes::Bytes>> {
                if self.session.heads_due() {
                    return Err($crate::UsageError::WrongState.into());
                }
                self.session.sender().send_request(req)?;
                let res = self.call($crate::ClientSession::next_full_response)$(.$await)??;
                res.ok_or_else(|| ::std::io::ErrorKind::UnexpectedEof.into())
            }

            /// [`ClientSession::next_response`](crate::ClientSession::next_response),
            /// doing the I/O it needs.
            ///
            /// # Errors
            ///
            /// As [`send`](Self::send).
            pub fn next_response(&mut self) -> $ret!(::std::io::Result<Option<::http::Response<()>>>) {
                self.call($crate::ClientSession::next_response)
            }

            /// [`ClientSession::read_data`](crate::ClientSession::read_data),
            /// doing the I/O it needs.
            ///
            /// # Errors
            ///
            /// As [`send`](Self::send).
            pub fn read_data(&mut self) -> $ret!(::std::io::Result<Option<::bytes::Bytes>>) {
                self.call($crate::ClientSession::read_data)
            }
        }

        impl Client<TcpStream> {
            /// Connects with `TCP_NODELAY` and the default
            /// [`Config`](crate::Config). The requests sent on it carry
            /// the `Host` their caller gives (or an absolute-form
            /// target's authority): the address connected to is not
            /// added.
            ///
            /// # Errors
            ///
            /// Connecting failed.
            pub $($async)? fn connect<A: ToSocketAddrs>(addr: A) -> ::std::io::Result<Self> {
                let stream = TcpStream::connect(addr)$(.$await)??;
                stream.set_nodelay(true)?;
                Ok(Client::new(stream, $crate::Config::default()))
            }
        }
    };
}

/// What a blocking driver's call returns: the value itself.
#[cfg(feature = "blocking")]
macro_rules! plain {
    ($t:ty) => {
        $t
    };
}

/// What an async driver's call returns: a future of the value.
#[cfg(feature = "tokio")]
macro_rules! future {
    ($t:ty) => { impl ::std::future::Future<Output = $t> };
}

#[cfg(feature = "blocking")]
pub mod blocking;
pub mod driver;
#[cfg(feature = "tokio")]
pub mod tokio;
#[cfg(feature = "tower")]
pub mod tower;

#[cfg(any(feature = "blocking", feature = "tokio"))]
use std::ops::{Deref, DerefMut};
#[cfg(any(feature = "blocking", feature = "tokio"))]
use std::time::Instant;

#[cfg(any(feature = "blocking", feature = "tokio"))]
use bytes::BytesMut;

// Also what the module's documentation links to, with no feature on.
#[cfg_attr(
    not(any(feature = "blocking", feature = "tokio")),
    allow(unused_imports)
)]
use crate::{ClientSession, Config, ServerSession, Session};
#[cfg(any(feature = "blocking", feature = "tokio"))]
use driver::WallClock;

/// A session and the stream it runs over, driven by runtime `R`. It
/// dereferences to the session, so the calls that need no I/O are made
/// on it directly; the runtime adds the calls that do.
#[cfg_attr(
    feature = "blocking",
    doc = "[`blocking::Server`] and [`blocking::Client`] are drivers on std's I/O."
)]
#[cfg_attr(
    feature = "tokio",
    doc = "[`tokio::Server`] and [`tokio::Client`] are drivers on tokio."
)]
#[cfg(any(feature = "blocking", feature = "tokio"))]
pub struct Driver<S, T, R: Runtime> {
    io: S,
    session: T,
    runtime: R::PerConnection,
    /// When the wall clock is read next, for `Date`.
    wall: WallClock,
}

/// A runtime the adapters drive sessions on; sealed.
#[cfg_attr(feature = "blocking", doc = "[`blocking::Blocking`] is std's.")]
#[cfg_attr(feature = "tokio", doc = "[`tokio::Tokio`] is tokio's.")]
#[cfg(any(feature = "blocking", feature = "tokio"))]
pub trait Runtime: sealed::Runtime {}

#[cfg(any(feature = "blocking", feature = "tokio"))]
pub(crate) mod sealed {
    /// What a runtime keeps per connection, and its clock.
    pub trait Runtime {
        /// The runtime's own state of a connection (its timer, its
        /// shutdown signal).
        type PerConnection: Default;

        /// The clock the runtime's timer runs on: every `now` the driver
        /// hands its session is read there, so that a deadline the timer
        /// says has come has come for the session too (tokio's clock may
        /// be paused, and then moves only with tokio's timers).
        fn now() -> std::time::Instant;
    }
}

#[cfg(any(feature = "blocking", feature = "tokio"))]
impl<S, T, R: Runtime> Driver<S, T, R> {
    fn with(io: S, session: T) -> Self {
        Driver {
            io,
            session,
            runtime: R::PerConnection::default(),
            wall: WallClock::default(),
        }
    }
}

#[cfg(any(feature = "blocking", feature = "tokio"))]
impl<S, T, R: Runtime> Deref for Driver<S, T, R> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.session
    }
}

#[cfg(any(feature = "blocking", feature = "tokio"))]
impl<S, T, R: Runtime> DerefMut for Driver<S, T, R> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.session
    }
}

#[cfg(any(feature = "blocking", feature = "tokio"))]
impl<S, T: Session, R: Runtime> Driver<S, T, R> {
    /// Reads the clock, and hands the session the wall clock, for
    /// `Date`, if its second may have changed ([`WallClock`]).
    #[inline]
    fn now(&mut self) -> Instant {
        let now = R::now();
        self.wall.update(now, &mut self.session);
        now
    }
}

#[cfg(any(feature = "blocking", feature = "tokio"))]
impl<S, R: Runtime> Driver<S, ServerSession, R> {
    /// A server session over `io`, for a connection made now.
    pub fn new(io: S, config: Config) -> Self {
        Driver::with(io, ServerSession::new(config, R::now()))
    }
}

#[cfg(any(feature = "blocking", feature = "tokio"))]
impl<S, R: Runtime> Driver<S, ClientSession, R> {
    /// A client session over `io`, for a connection made now.
    pub fn new(io: S, config: Config) -> Self {
        Driver::with(io, ClientSession::new(config, R::now()))
    }

    /// `true` while the connection may carry further requests (see
    /// [`ClientSession::is_reusable`]): the idle timeout of the pool is
    /// applied first ([`ClientSession::is_reusable_at`]).
    pub fn is_reusable(&mut self) -> bool {
        self.session.is_reusable_at(R::now())
    }

    /// The stream and the bytes read but not decoded (after a protocol
    /// switch, the new protocol's first bytes).
    pub fn into_parts(mut self) -> (S, BytesMut) {
        let buf = self.session.take_read_buf();
        (self.io, buf)
    }
}
