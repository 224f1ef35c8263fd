//! The client's part of the encoder: how a request's request-target form
//! is chosen, and its framing and `Host` decided from the fields written.

use http::request::Parts;
use http::{Method, Version};

use super::body::BodyEncoder;
use super::head::{Added, Ordered, check_target, version_bytes, write_head, write_request_line};
use super::{EncodeRole, EncoderConfig};
use crate::error::UsageError;
use crate::framing::{Declared, FramingFields, connection_verdict_of, declared_framing};
use crate::grammar::is_host;
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::role::Client;
use bytes::BytesMut;

use crate::wire::WireHead;

impl EncodeRole for Client {
    type Head = Parts;
    type Context = ();

    fn encode_head(
        out: &mut BytesMut,
        parts: &Parts,
        (): &(),
        config: &EncoderConfig,
        full: Option<u64>,
        _date: Option<&[u8; crate::date::LINE]>,
        order: Option<Ordered<'_>>,
    ) -> Result<(BodyEncoder, Option<KeepAlive>), UsageError> {
        let version = version_bytes(parts.version)?;
        check_target(&parts.method, &parts.uri)?;
        let raw = order.as_ref().and_then(|_| received_target(parts));
        let start = out.len();
        write_request_line(out, &parts.method, &parts.uri, raw, version);
        let title = config.title_case_fields;
        write_head(out, start, &parts.headers, title, order, |seen| {
            decide(parts, full, seen)
        })
    }
}

/// Decides how a request head is written (the fields the encoder adds
/// or leaves out, `Host` among them) and its body framed, and the verdict
/// it leaves, from the caller's framing, `Host` and `Connection` fields
/// noted in `seen`.
fn decide<'p>(
    parts: &'p Parts,
    full: Option<u64>,
    seen: &FramingFields,
) -> Result<(Added<'p>, (BodyEncoder, Option<KeepAlive>)), UsageError> {
    let http10 = parts.version == Version::HTTP_10;
    // A Host a server must refuse (RFC 9112 section 3.2) is not sent.
    let host = match (seen.hosts, parts.uri.authority()) {
        (0, Some(a)) => {
            // The Host field never carries userinfo.
            let a = a.as_str().as_bytes();
            Some(&a[a.iter().rposition(|&b| b == b'@').map_or(0, |at| at + 1)..])
        }
        (0, None) if http10 => None,
        (1, _) if !seen.bad_host => None,
        _ => return Err(UsageError::InvalidHead),
    };
    if host.is_some_and(|host| !is_host(host)) {
        return Err(UsageError::InvalidHead);
    }
    let mut added = Added {
        host,
        ..Added::default()
    };
    let keep_alive = match connection_verdict_of(parts.version, seen) {
        KeepAlive::Close(CloseReason::PeerClose) => KeepAlive::Close(CloseReason::LocalClose),
        other => other,
    };
    let body = if parts.method == Method::CONNECT {
        // RFC 9110 section 9.3.6: a CONNECT request has no content. What
        // the client sends after the head is tunnel data, so no framing
        // field may announce a body; the caller's own are refused, not
        // dropped.
        if seen.transfer_encoding || seen.content_length.is_some() {
            return Err(UsageError::InvalidFraming);
        }
        if full.is_some_and(|len| len > 0) {
            return Err(UsageError::BodyNotAllowed);
        }
        BodyEncoder::Empty
    } else {
        match declared_framing(false, seen).map_err(|_| UsageError::InvalidFraming)? {
            Declared::Length(n) => BodyEncoder::length(n, full)?,
            // No Transfer-Encoding in HTTP/1.0 (RFC 9112 section 6.1).
            Declared::Chunked if !http10 => BodyEncoder::Chunked,
            Declared::Chunked | Declared::CodedChunked | Declared::Close => {
                return Err(UsageError::InvalidFraming);
            }
            Declared::None => match full {
                Some(0) if !matches!(parts.method.as_str(), "POST" | "PUT" | "PATCH") => {
                    BodyEncoder::Empty
                }
                None if http10 => return Err(UsageError::InvalidFraming),
                _ => BodyEncoder::chosen(full, &mut added),
            },
        }
    };
    Ok((added, (body, Some(keep_alive))))
}

/// The request-target the request was received with, when its `Uri` still
/// equals it (`http::Uri`'s comparison with a string, which ignores the
/// case of the scheme and the host, and takes `http://a` for
/// `http://a/`) and the encoder would write it in its form (a CONNECT's
/// absolute URI is written as its authority): then it is written as
/// received.
fn received_target(parts: &Parts) -> Option<&[u8]> {
    let target = parts.extensions.get::<WireHead>()?.target()?;
    let text = std::str::from_utf8(target).ok()?;
    let absolute_to_connect = parts.method == Method::CONNECT && parts.uri.scheme().is_some();
    (!absolute_to_connect && parts.uri == *text).then_some(target)
}
