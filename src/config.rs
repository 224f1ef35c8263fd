//! [`Config`]: the settings of a connection and of the session around it,
//! with the [`Timeouts`] a session keeps.

use std::time::Duration;

use crate::encode::EncoderConfig;
use crate::leniency::{RequestLeniency, ResponseLeniency};
use crate::limits::Limits;

/// Settings of a connection ([`ServerConnection`](crate::ServerConnection), [`ClientConnection`](crate::ClientConnection))
/// and of the session around it
/// ([`ServerSession`](crate::ServerSession),
/// [`ClientSession`](crate::ClientSession)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Limits on what the peer may send.
    pub limits: Limits,
    /// Server only: the leniency tolerances of request parsing. Default: all
    /// off.
    pub request_leniency: RequestLeniency,
    /// Client only: the leniency tolerances of response parsing. Default:
    /// [`ResponseLeniency::default`] (only `no_space_after_status` on).
    pub response_leniency: ResponseLeniency,
    /// Connections hand out the chunk extensions of the peer's chunked
    /// bodies as [`Event::ChunkExtensions`](crate::Event::ChunkExtensions)
    /// ([`Decoder::set_chunk_extensions`](crate::Decoder::set_chunk_extensions)),
    /// and sessions keep them with the body piece they came before
    /// ([`ServerSession::chunk_extensions`](crate::ServerSession::chunk_extensions),
    /// [`ClientSession::chunk_extensions`](crate::ClientSession::chunk_extensions)),
    /// so that a proxy can forward them. Default: `false`: extensions are
    /// checked, then dropped.
    pub chunk_extensions: bool,
    /// How output is framed and coalesced.
    pub encoder: EncoderConfig,
    /// Every head decoded from the peer carries a
    /// [`WireHead`](crate::wire::WireHead): its field lines as received,
    /// in order and spelling ([`Decoder::set_wire_view`](crate::Decoder::set_wire_view)).
    /// A proxy that forwards the decoded heads then sends them on in the
    /// same order and spelling. The trailer sections of chunked bodies are
    /// kept as received too, as [`WireTrailers`](crate::wire::WireTrailers)
    /// (the sessions' `wire_trailers`), for `finish_in_order`. Default:
    /// `false`.
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
    /// Sessions only: the most one read from the peer asks for. A
    /// connection's first read asks for 256 bytes (as does the first
    /// after an idle connection gave its buffers back), the reads after
    /// it for 1 KiB, and a read that fills what it was offered doubles
    /// the next, up to this bound: a connection that carries small
    /// messages never holds a large buffer. It also bounds how far a driver that reads while it
    /// writes reads ahead of what is decoded. Default: 16 KiB.
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
    /// Server sessions only: responses carry `Date` (RFC 9110 section
    /// 6.6.1) from the wall clock the driver hands the session with
    /// [`Session::set_date`](crate::Session::set_date), formatted once a
    /// second; a response with its own `Date` keeps it. `false`: no
    /// `Date` is added. Default: `true` (as hyper).
    pub send_date: bool,
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
            send_date: true,
            release_after: Duration::from_secs(1),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

/// How long a session waits for its peer.
///
/// `None` disables a timeout. The defaults suit a server open to the
/// internet and a client talking to servers it does not control.
///
/// | timeout | server | client | default |
/// |---|---|---|---|
/// | [`head`](Self::head) | from a new connection, or from the first byte of a later request (from when the session starts waiting for the rest, if its first bytes came with the previous request), to the end of the request head; later bytes do not move it; on expiry a partly received head gets `408` and the connection closes, a connection that sent nothing is closed | from the moment the request is out, its body included (or the previous response ends), to the end of the response head; while the request body is still being sent, each wait for the server has it from its own start | 20 s |
/// | [`idle`](Self::idle) | between exchanges on a keep-alive connection; on expiry the connection is closed | an idle pooled connection with no request in flight is closed | 60 s |
/// | [`body`](Self::body) | between two reads that bring request body bytes; on expiry `408` if no response has left yet, then close | the same for response bodies | 60 s |
/// | [`write`](Self::write) | between two writes that take output, while output is waiting (a peer that stops reading); on expiry the connection is closed at once | the same | 60 s |
/// | [`linger`](Self::linger) | the lingering close: how long to keep reading and discarding after the last response | not used | 2 s |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// Receiving a head (see the table above).
    pub head: Option<Duration>,
    /// A keep-alive connection with no exchange in progress.
    pub idle: Option<Duration>,
    /// Progress while receiving a body.
    pub body: Option<Duration>,
    /// Progress while writing output.
    pub write: Option<Duration>,
    /// The lingering close (RFC 9112 section 9.6).
    pub linger: Duration,
}

impl Timeouts {
    /// The defaults (see the table on [`Timeouts`]).
    pub const fn new() -> Self {
        Timeouts {
            head: Some(Duration::from_secs(20)),
            idle: Some(Duration::from_secs(60)),
            body: Some(Duration::from_secs(60)),
            write: Some(Duration::from_secs(60)),
            linger: Duration::from_secs(2),
        }
    }

    /// No timeout at all, and no lingering: for tests and for peers the
    /// caller trusts.
    pub const fn none() -> Self {
        Timeouts {
            head: None,
            idle: None,
            body: None,
            write: None,
            linger: Duration::ZERO,
        }
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts::new()
    }
}
