//! Sans-IO HTTP/1.1 (RFC 9110 semantics, RFC 9112 syntax) as state machines.
//!
//! h1proto owns the protocol; the caller owns the socket, the clock and the
//! threads. Bytes read from the peer go in through a caller-owned
//! [`BytesMut`](bytes::BytesMut) and come out as events: message heads as
//! `http::Request<()>` / `http::Response<()>` whose field values are slices
//! of the input, body data as `Bytes` split from the buffer (no copy),
//! trailers, and an end-of-message event carrying the keep-alive verdict.
//! Messages to send go in as `http` types and come out as an ordered list
//! of byte [`Segments`], ready for one vectored write: small pieces are
//! coalesced into one contiguous buffer, large bodies pass by reference, and
//! nothing leaves until the caller drains the queue.
//!
//! # A server run loop
//!
//! ```
//! use bytes::{Buf, BytesMut};
//! use h1proto::{Config, Event, ServerConnection};
//! use std::io::{IoSlice, Read, Write};
//!
//! fn serve(mut socket: impl Read + Write) -> std::io::Result<()> {
//!     let mut conn = ServerConnection::new(Config::default());
//!     let mut buf = BytesMut::with_capacity(8 * 1024);
//!     let mut body = Vec::new();
//!     loop {
//!         // 1. Events from what has been read so far.
//!         loop {
//!             match conn.poll_event(&mut buf) {
//!                 Ok(Some(Event::Data(data))) => body.extend_from_slice(&data),
//!                 Ok(Some(Event::End(_))) => {
//!                     // 2. Answer: a HEAD request gets the head only.
//!                     let res = http::Response::new(format!("{} bytes\n", body.len()));
//!                     conn.sender().send_response(res).expect("a response is due");
//!                     body.clear();
//!                 }
//!                 Ok(Some(_)) => {}
//!                 Ok(None) => break,
//!                 Err(err) => {
//!                     let _ = conn.send_error_response(&err);
//!                     break;
//!                 }
//!             }
//!         }
//!         // 3. Everything queued leaves in vectored writes.
//!         let out = conn.output();
//!         while out.has_remaining() {
//!             let mut slices = [IoSlice::new(&[]); 16];
//!             let n = out.io_slices(&mut slices);
//!             let written = socket.write_vectored(&slices[..n])?;
//!             out.advance(written);
//!         }
//!         // 4. Close when the verdict says so.
//!         if conn.is_closed() {
//!             return Ok(());
//!         }
//!         // 5. Read more; 0 bytes means the peer closed.
//!         buf.reserve(4096);
//!         let start = buf.len();
//!         buf.resize(start + 4096, 0);
//!         let n = socket.read(&mut buf[start..])?;
//!         buf.truncate(start + n);
//!         if n == 0 {
//!             conn.recv_eof();
//!         }
//!     }
//! }
//!
//! // Two pipelined requests and a close, through an in-memory "socket".
//! struct Mem(std::io::Cursor<Vec<u8>>, Vec<u8>);
//! impl Read for Mem {
//!     fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> { self.0.read(b) }
//! }
//! impl Write for Mem {
//!     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.1.write(b) }
//!     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
//! }
//! let input = b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc\
//!               GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
//! let mut sock = Mem(std::io::Cursor::new(input.to_vec()), Vec::new());
//! serve(&mut sock).unwrap();
//! let sent = String::from_utf8(sock.1).unwrap();
//! assert!(sent.starts_with("HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\n3 bytes\n"));
//! assert!(sent.contains("connection: close"));
//! ```
//!
//! # The parts
//!
//! | layer | types | use it alone for |
//! |---|---|---|
//! | decoding | [`RequestDecoder`], [`ResponseDecoder`], [`Event`] | parsing captured traffic, a proxy's receive side |
//! | encoding | [`RequestEncoder`], [`ResponseEncoder`], [`Segments`] | writing messages with your own state handling |
//! | wire view | [`wire::WireHead`], [`wire::FieldOrder`] | field lines as received (order, spelling, repeats), written back in that order: forwarding, capture tools |
//! | framing | [`framing`] | the RFC 9112 section 6.3 body-length decision as pure functions |
//! | connections | [`ServerConnection`], [`ClientConnection`], [`conn::State`] | the protocol machine: keep-alive, pipelining, HEAD, 100-continue, upgrades |
//! | sessions | [`ServerSession`], [`ClientSession`] (both a [`SessionOf`]), [`Session`], [`Timeouts`] | what a driver runs: a connection with its buffers, timers and closing policy |
//! | adapters | `adapter::blocking`, `adapter::tokio`, `adapter::tower` (features) | serving and fetching over `std::io` and tokio; serving a tower `Service` (an axum `Router`) |
//! | any runtime | [`adapter::driver::Conn`], [`adapter::driver::RuntimeIo`], [`adapter::driver::Shutdown`] | a session driven over a runtime's read, write, sleep and half-close (smol, io_uring, ...), and a graceful shutdown fanned out to every connection |
//!
//! # Sessions
//!
//! A session owns every decision between a connection and a socket, time
//! included, and does no I/O itself. Each call returns a [`Step`]: the
//! value, or the [`Io`] to do first (read into its buffer, write its
//! output, shut down, close); the deadline to wake up at comes from
//! [`Session::poll_timeout`]. The adapters are loops over it, and so is
//! any driver for another runtime:
//!
//! 1. make the call the application wants (`next_request`, `read_data`,
//!    `next_response`, `close`, ...);
//! 2. on [`Step::Ready`], hand the value to the application;
//! 3. on [`Step::Io`], do that I/O, waiting no later than
//!    [`poll_timeout`](Session::poll_timeout): read into
//!    [`read_buf`](Session::read_buf) and report with
//!    [`handle_read`](Session::handle_read), write
//!    [`output`](Session::output) and report with
//!    [`handle_write`](Session::handle_write), or call
//!    [`handle_timeout`](Session::handle_timeout) when the deadline passed
//!    first; then go to 1.
//!
//! A driver that reads and writes at once asks [`Session::wants_read`] and
//! [`Session::wants_write`] instead of following the [`Io`] named; one on
//! a completion-based runtime (io_uring) takes the buffers owned
//! ([`Session::lend_read_buf`], [`Session::lend_output`]) and gives them
//! back. [`ServerSession`] shows the loop over an in-memory socket;
//! [`adapter::driver`] has it written once for any async runtime, readiness- or
//! completion-based, over four operations the runtime supplies. Set
//! `TCP_NODELAY` on every TCP socket a session runs over: the session
//! corks its output itself, and Nagle's algorithm would hold back the
//! last segment of a response until the peer acknowledges the one before.
//! Once [`Session::shutdown`] was called, the driver accepts nothing new
//! for that connection and keeps making the pending call until the
//! session says `Ready(None)` or closes. `docs/sessions.md` in the repository
//! has the policy in full: when output leaves, `100 Continue`, error
//! responses (a queued response that has not left is replaced), the
//! timeouts and what each does on expiry, graceful shutdown, the
//! lingering close, and giving an idle connection's buffers back.
//!
//! Errors are split by who caused them: [`Error`] is the peer's (malformed
//! or oversized input, with a suggested status code, the byte of the
//! stream where decoding stopped and the field at fault), [`UsageError`]
//! the local caller's. Nothing reachable from peer input panics, and what the
//! decoder buffers is bounded by [`Limits`]. Parsing is strict; the
//! [`leniency`] tolerances ([`leniency::RequestLeniency`], [`leniency::ResponseLeniency`]) loosen
//! named rules one by one, for peers that break them. The `docs/` folder of the
//! repository explains the framing table, the limits, the parsing decisions
//! and the state machine.
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub, clippy::missing_errors_doc)]

pub mod adapter;
mod chunk_ext;
mod config;
pub mod conn;
mod date;
mod decode;
mod encode;
mod error;
pub mod framing;
mod grammar;
mod head;
mod keep_alive;
pub mod leniency;
mod limits;
mod reason;
mod role;
mod segments;
mod session;
pub mod wire;

pub use chunk_ext::{ChunkExtension, ChunkExtensions};
pub use config::{Config, Timeouts};
pub use conn::{ClientConnection, Sender, ServerConnection};
pub use decode::{Decoder, Event, MessageHead, RequestDecoder, ResponseDecoder};
pub use encode::{
    Encoder, EncoderConfig, RequestEncoder, ResponseContext, ResponseEncoder, remove_hop_by_hop,
};
pub use error::{Error, ErrorKind, UsageError};
pub use keep_alive::{CloseReason, KeepAlive};
pub use limits::Limits;
pub use reason::ReasonPhrase;
pub use segments::Segments;
pub use session::{
    ClientSession, InterimResponses, Io, ServerSession, Session, SessionError, SessionOf, Step,
    TrailerFields,
};

/// The README's code, compiled and run as doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
