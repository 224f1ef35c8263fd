//! The server's part of the encoder: how a response head is written, and
//! how its framing, the fields the encoder adds and the verdict it leaves
//! are decided from it.

use http::Version;
use http::response::Parts;

use super::body::BodyEncoder;
use super::head::{Added, Ordered, version_bytes, write_head};
use super::{EncodeRole, EncoderConfig, ResponseContext};
use crate::error::UsageError;
use crate::framing::{
    Declared, FramingFields, ResponseClass, SenderFields, declared_framing, no_body, response_class,
};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::reason::ReasonPhrase;
use crate::role::Server;
use bytes::BytesMut;

impl EncodeRole for Server {
    type Head = Parts;
    type Context = ResponseContext;

    #[inline]
    fn encode_head(
        out: &mut BytesMut,
        parts: &Parts,
        ctx: &ResponseContext,
        config: &EncoderConfig,
        full: Option<u64>,
        date: Option<&[u8; crate::date::LINE]>,
        order: Option<Ordered<'_>>,
    ) -> Result<(BodyEncoder, Option<KeepAlive>), UsageError> {
        let start = out.len();
        status_line(out, parts, version_bytes(parts.version)?);
        let title = config.title_case_fields;
        write_head(out, start, &parts.headers, title, order, |seen| {
            decide(parts, ctx, config, full, date, seen)
        })
    }
}

/// `HTTP/1.1 200 OK\r\n`: the reason phrase the response carries, or its
/// status's.
#[inline]
fn status_line(out: &mut BytesMut, parts: &Parts, version: &[u8; 8]) {
    let reason = match parts.extensions.get::<ReasonPhrase>() {
        Some(reason) => reason.as_bytes(),
        None => parts
            .status
            .canonical_reason()
            .map_or(&b""[..], str::as_bytes),
    };
    // The version, the three digits of the code and the spaces around
    // them are of fixed length: one copy.
    let mut start = *b"HTTP/1.1 200 ";
    start[..8].copy_from_slice(version);
    if let &[a, b, c] = parts.status.as_str().as_bytes() {
        start[9..12].copy_from_slice(&[a, b, c]);
    }
    out.extend_from_slice(&start);
    out.extend_from_slice(reason);
    out.extend_from_slice(b"\r\n");
}

/// Decides how a response head is written (the fields the encoder adds
/// or leaves out) and its body framed, and the verdict it leaves, from
/// the caller's framing and `Connection` fields noted in `seen`.
#[inline]
fn decide<'d>(
    parts: &Parts,
    ctx: &ResponseContext,
    config: &EncoderConfig,
    full: Option<u64>,
    date: Option<&'d [u8; crate::date::LINE]>,
    seen: &FramingFields,
) -> Result<(Added<'d>, (BodyEncoder, Option<KeepAlive>)), UsageError> {
    let status = parts.status;
    let http10 = ctx.peer_version <= Version::HTTP_10 || parts.version == Version::HTTP_10;
    if status.is_informational() && http10 {
        // RFC 9110 section 15.2: no 1xx to an HTTP/1.0 client.
        return Err(UsageError::InterimToHttp10);
    }
    let has_body = full.is_some_and(|n| n > 0);
    let declared = || declared_framing(true, seen).map_err(|_| UsageError::InvalidFraming);
    let mut added = Added::default();
    let class = response_class(ctx.request, status);
    let body = match no_body(class, ctx.request, status) {
        Some(SenderFields::None | SenderFields::LengthOnly) if has_body => {
            return Err(UsageError::BodyNotAllowed);
        }
        Some(SenderFields::None) => {
            added.strip_framing = true;
            BodyEncoder::Empty
        }
        Some(SenderFields::LengthOnly) => {
            added.strip_te = !matches!(declared()?, Declared::Length(_) | Declared::None);
            BodyEncoder::Empty
        }
        Some(SenderFields::AsForGet) => {
            let declared = match declared()? {
                Declared::Length(n) => {
                    // An empty body passes for a head that declares one.
                    BodyEncoder::length(n, full.filter(|&len| len > 0))?;
                    Some(n)
                }
                Declared::None => {
                    added.content_length = full;
                    full
                }
                // An HTTP/1.0 peer knows no transfer coding: the
                // chunked a GET would get is left out.
                Declared::Chunked if http10 => {
                    added.strip_te = true;
                    None
                }
                Declared::CodedChunked | Declared::Close if http10 => {
                    return Err(UsageError::InvalidFraming);
                }
                Declared::Chunked | Declared::CodedChunked | Declared::Close => None,
            };
            if config.strict_head_body && has_body {
                return Err(UsageError::BodyNotAllowed);
            }
            BodyEncoder::Discard {
                declared,
                seen: 0,
                strict: config.strict_head_body,
            }
        }
        None => match declared()? {
            Declared::Length(n) => BodyEncoder::length(n, full)?,
            Declared::Chunked | Declared::CodedChunked if !http10 => BodyEncoder::Chunked,
            Declared::Close if !http10 => BodyEncoder::Close,
            // Other codings cannot be removed here: refused.
            Declared::CodedChunked | Declared::Close => {
                return Err(UsageError::InvalidFraming);
            }
            // Neither field, or a chunked an HTTP/1.0 peer cannot read:
            // the framing the encoder chooses itself, Content-Length
            // for a whole body, chunked for a stream to an HTTP/1.1
            // peer, close-delimited for one to an HTTP/1.0 peer (as
            // h11 does).
            declared => {
                added.strip_te = declared == Declared::Chunked;
                match full {
                    None if http10 => BodyEncoder::Close,
                    _ => BodyEncoder::chosen(full, &mut added),
                }
            }
        },
    };
    if class != ResponseClass::Interim && !seen.date {
        // RFC 9110 section 6.6.1: an origin server with a clock sends
        // `Date` in its final responses; a caller's own is kept.
        added.date = date;
    }
    let verdict = match class {
        ResponseClass::Interim => None,
        ResponseClass::Switch => Some(KeepAlive::Close(CloseReason::Switched)),
        ResponseClass::Final => {
            let mut keep_alive = ctx.keep_alive;
            if seen.connection_close {
                keep_alive = keep_alive.and(KeepAlive::Close(CloseReason::LocalClose));
            }
            if let BodyEncoder::Close = body {
                keep_alive = keep_alive.and(KeepAlive::Close(CloseReason::CloseDelimited));
            }
            added.connection = match keep_alive {
                KeepAlive::Close(_) if !seen.connection_close => Some(b"close"),
                KeepAlive::Reusable if http10 && !seen.connection_keep_alive => Some(b"keep-alive"),
                _ => None,
            };
            Some(keep_alive)
        }
    };
    Ok((added, (body, verdict)))
}
