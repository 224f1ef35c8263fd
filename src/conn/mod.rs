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
//! 2. act on each event, queueing messages with the `send_*` methods;
//! 3. drain [`output`](ServerConnection::output) with one vectored write;
//! 4. if [`is_closed`](ServerConnection::is_closed), close the socket once
//!    the output is drained; if [`is_switched`](ServerConnection::is_switched),
//!    the bytes left in your buffer belong to the new protocol.

mod client;
mod core;
mod machine;
mod server;

pub use client::ClientConnection;
pub use core::Connection;
pub use machine::State;
pub use server::ServerConnection;

use std::time::Duration;

use crate::encode::EncoderConfig;
use crate::leniency::{RequestLeniency, ResponseLeniency};
use crate::limits::Limits;
use crate::session::Timeouts;

/// Settings of a connection ([`ServerConnection`], [`ClientConnection`])
/// and of the session around it
/// ([`ServerSession`](crate::ServerSession),
/// [`ClientSession`](crate::ClientSession)).
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
    /// Connections hand out the chunk extensions of the peer's chunked
    /// bodies as [`Event::ChunkExtensions`](crate::Event::ChunkExtensions)
    /// ([`Decoder::set_chunk_extensions`](crate::Decoder::set_chunk_extensions)),
    /// so that a proxy can forward them. Sessions read bodies as bytes and
    /// drop them. Default: `false`: extensions are checked, then dropped.
    pub chunk_extensions: bool,
    /// How output is framed and coalesced.
    pub encoder: EncoderConfig,
    /// Every head decoded from the peer carries a
    /// [`WireHead`](crate::wire::WireHead): its field lines as received,
    /// in order and spelling ([`Decoder::set_wire_view`](crate::Decoder::set_wire_view)).
    /// A proxy that forwards the decoded heads then sends them on in the
    /// same order and spelling. Default: `false`.
    pub wire_view: bool,
    /// Server only: how many bytes of a request body the application left
    /// unread are read off the connection and discarded after the response
    /// (chunk framing counts, so many tiny chunks cannot stretch it), so that
    /// the connection can be reused. Past this, the connection closes. A
    /// complete response that leaves unread a body whose declared length
    /// exceeds it carries `Connection: close`. Default: 256 KiB (as Go's
    /// net/http).
    pub max_drain_bytes: u64,
    /// Sessions only: how long to wait for the peer, and what each timeout
    /// does.
    pub timeouts: Timeouts,
    /// Sessions only: the bytes asked for by each read from the peer.
    /// Default: 16 KiB.
    pub read_size: usize,
    /// Sessions only: queued output past which sending body data waits for
    /// the output to be written, bounding what a streaming sender buffers
    /// (and past which a server writes before it takes the next pipelined
    /// request). Output below it leaves when the session next waits for
    /// the peer, so the answers to pipelined requests read together leave
    /// together. Default: 64 KiB.
    pub flush_threshold: usize,
    /// Sessions only: how much the lingering close reads and discards at
    /// most. Default: 1 MiB.
    pub linger_bytes: usize,
    /// Sessions only: after this long without the peer sending anything,
    /// the connection gives back its read buffer (keeping only the bytes
    /// it holds) and its output buffer, so that idle and stalled
    /// connections cost little memory. Default: 1 s.
    pub release_after: Duration,
}

impl Config {
    /// The default configuration.
    pub fn new() -> Self {
        Config {
            limits: Limits::default(),
            request_leniency: RequestLeniency::default(),
            response_leniency: ResponseLeniency::default(),
            chunk_extensions: false,
            encoder: EncoderConfig::default(),
            wire_view: false,
            max_drain_bytes: 256 * 1024,
            timeouts: Timeouts::new(),
            read_size: 16 * 1024,
            flush_threshold: 64 * 1024,
            linger_bytes: 1024 * 1024,
            release_after: Duration::from_secs(1),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}
