//! Connections: a decoder and an encoder of one role, tied together.
//!
//! What one direction learns shapes the other: a server that received HEAD
//! answers without a body; an HTTP/1.0 peer gets no chunked body and no 1xx;
//! `Connection: close` on either message closes the connection after the
//! exchange; a client frames each response by the method of the request it
//! answers. Each direction has a [`State`], moved only through the table in
//! [`state`].
//!
//! The polling order is the same for both roles:
//!
//! 1. read from the socket into your `BytesMut`, then call `poll_event`
//!    until it returns `Ok(None)` (call `recv_eof` first when the read
//!    returned 0 bytes);
//! 2. act on each event, queueing messages with the `send_*` methods;
//! 3. drain [`output`](ServerConnection::output) with one vectored write;
//! 4. if [`is_closed`](ServerConnection::is_closed), close the socket once
//!    the output is drained; if [`is_switched`](ServerConnection::is_switched),
//!    the bytes left in your buffer belong to the new protocol.

mod client;
mod server;
pub mod state;

pub use client::ClientConnection;
pub use server::ServerConnection;
pub use state::{Input, State};

use crate::encode::EncoderConfig;
use crate::leniency::{RequestLeniency, ResponseLeniency};
use crate::limits::Limits;

/// Settings of a [`ServerConnection`] or [`ClientConnection`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Limits on what the peer may send.
    pub limits: Limits,
    /// Server only: the leniency switches of request parsing. Default: all
    /// off.
    pub request_leniency: RequestLeniency,
    /// Client only: the leniency switches of response parsing. Default:
    /// [`ResponseLeniency::default`] (only `no_space_after_status` on).
    pub response_leniency: ResponseLeniency,
    /// How output is framed and coalesced.
    pub encoder: EncoderConfig,
    /// Server only: how many bytes of a request body the application left
    /// unread are read off the connection and discarded after the response
    /// (chunk framing counts, so many tiny chunks cannot stretch it), so that
    /// the connection can be reused. Past this, the connection closes. A body
    /// whose declared length exceeds it makes the response carry
    /// `Connection: close` at once. Default: 256 KiB (as Go's net/http).
    pub max_drain_bytes: u64,
}

impl Config {
    /// The default configuration.
    pub fn new() -> Self {
        Config {
            limits: Limits::default(),
            request_leniency: RequestLeniency::default(),
            response_leniency: ResponseLeniency::default(),
            encoder: EncoderConfig::default(),
            max_drain_bytes: 256 * 1024,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}
