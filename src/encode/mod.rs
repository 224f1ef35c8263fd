//! Encoders: `http` messages in, framed byte segments out.
//!
//! A [`ResponseEncoder`] (server side) or [`RequestEncoder`] (client side)
//! turns a message into HTTP/1.1 bytes and appends them to its output queue,
//! a [`Segments`]. Nothing is written anywhere: the caller drains the queue
//! into its socket with a vectored write whenever it likes, and everything
//! queued since the last drain leaves together (writes are always corked).
//!
//! # Sending a message
//!
//! - **One call** ([`ResponseEncoder::send_response`],
//!   [`RequestEncoder::send_request`]): the head and the complete body. The
//!   body is any `Into<Bytes>` (`&'static str`, `&'static [u8]`, `String`,
//!   `Vec<u8>`, `Bytes`); all go through the same path.
//! - **Streaming**: `send_head`, then `send_data` any number of times, then
//!   `finish` with optional trailers.
//!
//! # Framing
//!
//! When the caller's head has no `Content-Length` and no
//! `Transfer-Encoding`, the encoder chooses: `Content-Length` when the whole
//! body is known (one call); `Transfer-Encoding: chunked` when streaming to
//! an HTTP/1.1 peer; a close-delimited body and `Connection: close` when
//! streaming a response to an HTTP/1.0 peer. Framing fields the caller gave
//! are kept and enforced: writing more or fewer bytes than the declared
//! `Content-Length` is a [`UsageError`], never a truncation. A call that
//! fails leaves the output queue and the encoder as they were.
//!
//! Responses to HEAD, 1xx, 204, 304 and 2xx answers to CONNECT are a head
//! only. A response to HEAD keeps the `Content-Length` a GET would carry,
//! computed from the body passed to `send_response` if the caller did not
//! give one; body bytes passed for a HEAD response are counted and dropped,
//! so that code written for GET answers HEAD correctly unchanged (set
//! [`EncoderConfig::strict_head_body`] to refuse them instead).
//!
//! `docs/encoding.md` has the full table.
//!
//! # Example
//!
//! ```
//! use std::io::{Cursor, IoSlice, Write};
//! use bytes::Buf;
//! use h1proto::{EncoderConfig, ResponseContext, ResponseEncoder};
//!
//! let mut enc = ResponseEncoder::new(EncoderConfig::default());
//! let res = http::Response::builder()
//!     .header("content-type", "text/plain")
//!     .body("Hello, world!")
//!     .unwrap();
//! enc.send_response(res, ResponseContext::default()).unwrap();
//!
//! // Head and body are one contiguous segment: one write.
//! assert_eq!(enc.output().segment_count(), 1);
//!
//! let mut socket = Cursor::new(Vec::new());
//! let out = enc.output();
//! while out.has_remaining() {
//!     let mut slices = [IoSlice::new(&[]); 8];
//!     let n = out.io_slices(&mut slices);
//!     let written = socket.write_vectored(&slices[..n]).unwrap();
//!     out.advance(written);
//! }
//! assert_eq!(
//!     socket.into_inner(),
//!     b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 13\r\n\r\nHello, world!"
//! );
//! ```

mod body;
mod head;
mod request;
mod response;

use bytes::Bytes;
use http::header::HeaderMap;
use http::{Request, Version};

use crate::error::UsageError;
use crate::framing::{BodyKind, RequestKind, connection_verdict};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::segments::{DEFAULT_COALESCE_THRESHOLD, Segments};

pub use request::RequestEncoder;
pub use response::ResponseEncoder;

/// Settings shared by both encoders.
///
/// ```
/// let mut config = h1proto::EncoderConfig::default();
/// config.coalesce_threshold = 4096;
/// let enc = h1proto::ResponseEncoder::new(config);
/// # let _ = enc;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncoderConfig {
    /// Body `Bytes` shorter than this are copied into the output queue's
    /// contiguous tail buffer; longer ones are queued as their own segment
    /// without a copy. Default: 4 KiB
    /// ([`crate::segments::DEFAULT_COALESCE_THRESHOLD`]).
    pub coalesce_threshold: usize,
    /// Refuse body bytes for a response to HEAD with
    /// [`UsageError::BodyNotAllowed`]
    /// instead of counting and dropping them. Default: `false`, so a
    /// handler written for GET answers HEAD unchanged.
    pub strict_head_body: bool,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        EncoderConfig {
            coalesce_threshold: DEFAULT_COALESCE_THRESHOLD,
            strict_head_body: false,
        }
    }
}

/// What the connection knows about the request a response answers.
///
/// A connection fills it in; a caller using the encoder alone builds it with
/// [`ResponseContext::for_request`] or by hand. The default is a GET from an
/// HTTP/1.1 client that keeps the connection open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseContext {
    /// The kind of request method: HEAD and CONNECT change the framing.
    pub request: RequestKind,
    /// The HTTP version of the request. No chunked coding and no 1xx go to
    /// an HTTP/1.0 peer.
    pub peer_version: Version,
    /// Whether the connection may carry another exchange. When it is
    /// [`KeepAlive::Close`], the response says `Connection: close`.
    pub keep_alive: KeepAlive,
}

impl ResponseContext {
    /// The context for answering `req`: its method, its version, and the
    /// keep-alive verdict of its version and `Connection` field.
    pub fn for_request<T>(req: &Request<T>) -> Self {
        ResponseContext {
            request: RequestKind::of(req.method()),
            peer_version: req.version(),
            keep_alive: connection_verdict(req.version(), req.headers()),
        }
    }
}

impl Default for ResponseContext {
    fn default() -> Self {
        ResponseContext {
            request: RequestKind::Other,
            peer_version: Version::HTTP_11,
            keep_alive: KeepAlive::Reusable,
        }
    }
}

/// Where an encoder is in sending messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncoderState {
    /// No message in progress: the next head may be sent.
    Ready,
    /// A head was sent; body data and then `finish` are expected. The
    /// framing is how the body goes on the wire ([`BodyKind::Empty`] for a
    /// response to HEAD, whose body bytes are dropped).
    Body(BodyKind),
    /// The last message ended the connection's HTTP use: close it once the
    /// output is drained (or, after an upgrade, hand it to the new
    /// protocol).
    Closed(CloseReason),
}

/// Where the encoder goes once the message in progress ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// An interim (1xx) response: the final response follows.
    Interim,
    /// A final message with this verdict.
    Verdict(KeepAlive),
}

/// The state shared by both encoders.
#[derive(Debug, Clone)]
enum State {
    Ready,
    Body {
        body: body::BodyEncoder,
        after: After,
    },
    Closed(CloseReason),
}

impl State {
    fn public(&self) -> EncoderState {
        match self {
            State::Ready => EncoderState::Ready,
            State::Body { body, .. } => EncoderState::Body(body.kind()),
            State::Closed(reason) => EncoderState::Closed(*reason),
        }
    }

    /// The state once a message with this ending is complete.
    fn after(after: After) -> State {
        match after {
            After::Interim | After::Verdict(KeepAlive::Reusable) => State::Ready,
            After::Verdict(KeepAlive::Close(reason)) => State::Closed(reason),
        }
    }
}

/// What both encoders keep: the output queue, where the message being sent
/// stands, and the verdict of the last message. The body-sending half of
/// the API lives here once; the encoders add their heads.
#[derive(Debug)]
struct Sender {
    out: Segments,
    state: State,
    keep_alive: KeepAlive,
    /// The emptied field map of the last head written, for reuse.
    spare: Option<HeaderMap>,
}

impl Sender {
    fn new(config: &EncoderConfig) -> Self {
        Sender {
            out: Segments::with_threshold(config.coalesce_threshold),
            state: State::Ready,
            keep_alive: KeepAlive::Reusable,
            spare: None,
        }
    }

    /// Keeps the field map of a head just written, emptied, so that its
    /// allocations can serve another message (see `reclaim_fields`).
    fn keep(&mut self, mut fields: HeaderMap) {
        fields.clear();
        self.spare = Some(fields);
    }

    fn ready(&self) -> Result<(), UsageError> {
        match self.state {
            State::Ready => Ok(()),
            _ => Err(UsageError::WrongState),
        }
    }

    fn send_data(&mut self, data: Bytes) -> Result<(), UsageError> {
        match &mut self.state {
            State::Body { body, .. } => body.data(&mut self.out, data),
            _ => Err(UsageError::WrongState),
        }
    }

    fn finish(&mut self, trailers: Option<&HeaderMap>) -> Result<(), UsageError> {
        let State::Body { body, after } = &mut self.state else {
            return Err(UsageError::WrongState);
        };
        body.finish(&mut self.out, trailers)?;
        self.state = State::after(*after);
        Ok(())
    }

    fn is_finished(&self) -> bool {
        !matches!(self.state, State::Body { .. })
    }

    /// Forgets the message in progress (its bytes were withdrawn from the
    /// output queue): the next head may be sent.
    fn abandon(&mut self) {
        self.state = State::Ready;
    }

    fn body_kind(&self) -> Option<BodyKind> {
        match &self.state {
            State::Body { body, .. } => Some(body.kind()),
            _ => None,
        }
    }
}
