//! Connections: a decoder and an encoder of one role, tied together.
//!
//! What one direction learns shapes the other: a server that received HEAD
//! answers without a body; an HTTP/1.0 peer gets no chunked body and no 1xx;
//! `Connection: close` on either message closes the connection after the
//! exchange; a client frames each response by the method of the request it
//! answers. Both roles are one [`Connection`] skeleton around one state
//! machine, which keeps a [`State`] for the requests and one for the
//! responses and moves them only through its tables (`docs/state-machine.md`
//! shows them).
//!
//! The polling order is the same for both roles:
//!
//! 1. read from the socket into your `BytesMut`, then call `poll_event`
//!    until it returns `Ok(None)` (call `recv_eof` first when the read
//!    returned 0 bytes);
//! 2. act on each event, queueing messages through the [`Sender`] that
//!    [`sender`](Connection::sender) lends;
//! 3. drain [`output`](crate::ServerConnection::output) with one vectored write;
//! 4. if [`is_closed`](crate::ServerConnection::is_closed), close the socket once
//!    the output is drained; if [`is_switched`](crate::ServerConnection::is_switched),
//!    the bytes left in your buffer belong to the new protocol.

mod client;
mod core;
mod machine;
mod send;
mod server;

use http::HeaderMap;
use http::header::{EXPECT, UPGRADE};

pub use client::ClientConnection;
pub(crate) use core::ConnRole;
pub use core::Connection;
pub use machine::State;
pub use send::Sender;
pub use server::ServerConnection;

/// `true` when `headers` offer a protocol switch: `Upgrade` with
/// `Connection: upgrade`.
#[inline]
fn offers_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(UPGRADE) && crate::framing::connection_has(headers, b"upgrade")
}

/// `true` when `headers` ask for `100 Continue` before the body is sent.
#[inline]
fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}
