//! What a role decides a head's framing from: the encoder's settings, the
//! request a response answers, and the maps of the head; and the
//! encoder's role trait, which `request.rs` (the client's part) and
//! `response.rs` (the server's) implement.

use http::header::HeaderMap;
use http::{Extensions, Request, Version};

use super::body::{BodyEncoder, check_full};
use super::head::Ordered;
use crate::error::UsageError;
use crate::framing::{FramingFields, RequestKind, connection_verdict_of};
use crate::keep_alive::KeepAlive;
use bytes::BytesMut;

use crate::segments::Segments;

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
    /// ([`Segments::DEFAULT_COALESCE_THRESHOLD`]).
    pub coalesce_threshold: usize,
    /// Refuse body bytes for a response to HEAD with
    /// [`UsageError::BodyNotAllowed`]
    /// instead of counting and dropping them. Default: `false`, so a
    /// handler written for GET answers HEAD unchanged.
    pub strict_head_body: bool,
    /// Write every field name in title case (`Content-Type`,
    /// `X-Request-Id`): the first letter and each letter after a `-` in
    /// upper case. It applies to the caller's fields, the ones the encoder
    /// adds (`Host`, `Content-Length`, `Transfer-Encoding`, `Connection`)
    /// and trailers. Field names are case-insensitive (RFC 9110 section
    /// 5.1); this is for peers that wrongly compare them exactly. Default:
    /// `false`, names are written as `http` holds them (lower case).
    pub title_case_fields: bool,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        EncoderConfig {
            coalesce_threshold: Segments::DEFAULT_COALESCE_THRESHOLD,
            strict_head_body: false,
            title_case_fields: false,
        }
    }
}

/// What the connection knows about the request a response answers.
///
/// A connection fills it in; a caller using the encoder alone builds it with
/// [`ResponseContext::for_request`] or by hand. The default is a GET from an
/// HTTP/1.1 client that keeps the connection open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
            keep_alive: connection_verdict_of(req.version(), &FramingFields::of(req.headers())),
        }
    }
}

/// What an encoder reads of a head besides what its role writes: the
/// extensions (a field order), then its maps, kept for reuse.
pub trait HeadMaps {
    /// The head's extensions, read before it is written.
    fn extensions(&self) -> &Extensions;
    /// The head's field and extension maps.
    fn into_maps(self) -> (HeaderMap, Extensions);
}

/// What the encoder of a role, [`Client`](crate::role::Client) or
/// [`Server`](crate::role::Server), does differently: how the heads it
/// sends are planned and written.
pub trait EncodeRole: Sized {
    /// The head this role sends: `request::Parts` or `response::Parts`.
    type Head: HeadMaps;
    /// What the encoder must know besides the head: nothing for a
    /// request; for a response, the request it answers.
    type Context;

    /// Writes the head at the end of `out`: the start line, the fields (in
    /// `order` when one is asked for), the fields the encoder adds and
    /// the empty line; and decides how its body is framed. `full` is the
    /// body length when the whole body is known, `date` the `Date` line
    /// the encoder has (a response without one of its own gets it). A
    /// role may write the caller's fields first and decide from what it
    /// wrote, so that they are gone over once. Returns the body framer
    /// and the keep-alive verdict the message leaves (an encoder whose
    /// last final message closes the connection takes no more), or `None`
    /// for an interim response, which leaves it as it was.
    ///
    /// # Errors
    ///
    /// The head cannot be sent as it is; `out` is left as it was.
    fn encode_head(
        out: &mut BytesMut,
        head: &Self::Head,
        ctx: &Self::Context,
        config: &EncoderConfig,
        full: Option<u64>,
        date: Option<&[u8; crate::date::LINE]>,
        order: Option<Ordered<'_>>,
    ) -> Result<(BodyEncoder, Option<KeepAlive>), UsageError>;
}

/// The framer of a body of `declared` bytes, checked against the whole
/// body when it is given (`full`).
pub(crate) fn length(declared: u64, full: Option<u64>) -> Result<BodyEncoder, UsageError> {
    if let Some(len) = full {
        check_full(declared, len)?;
    }
    Ok(BodyEncoder::Length { declared, sent: 0 })
}
