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

mod core;
mod machine;
mod send;

pub use core::Connection;
pub use machine::State;
pub(crate) use machine::{Input, Party};
pub use send::Sender;
