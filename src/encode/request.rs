//! The client's part of the encoder: how a request's framing, `Host` and
//! request-target form are decided, before its head is written.

use http::request::Parts;
use http::{Method, Version};

use super::body::BodyEncoder;
use super::head::{
    Added, Ordered, TargetForm, form_of, target_form, version_bytes, write_fields,
    write_request_line,
};
use super::plan::{EncodeRole, EncoderConfig, length};
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
        let (added, body, verdict, target) = decide(parts, full)?;
        let raw = order
            .as_ref()
            .and_then(|_| received_target(parts, target.form));
        let (method, uri) = (&parts.method, &parts.uri);
        write_request_line(out, method, uri, target.form, raw, version);
        let host = (target.host)
            .and_then(|at| parts.uri.authority().map(|a| &a.as_str().as_bytes()[at..]));
        let title = config.title_case_fields;
        write_fields(out, &parts.headers, host, &added, title, order);
        Ok((body, Some(verdict)))
    }
}

/// Decides, before anything is written, how a request head is written
/// (the fields the encoder adds, the request-line's form and `Host`) and
/// its body framed, and the verdict it leaves.
fn decide(
    parts: &Parts,
    full: Option<u64>,
) -> Result<(Added<'static>, BodyEncoder, KeepAlive, Target), UsageError> {
    let http10 = parts.version == Version::HTTP_10;
    let form = target_form(&parts.method, &parts.uri)?;
    let headers = &parts.headers;
    // The caller's framing, Host and Connection fields, in one pass.
    let seen = FramingFields::of(headers);
    // A Host a server must refuse (RFC 9112 section 3.2) is not sent.
    let host = match seen.hosts {
        0 => match parts.uri.authority() {
            // The Host field never carries userinfo.
            Some(a) => {
                let at = a.as_str().rfind('@').map_or(0, |at| at + 1);
                if !is_host(&a.as_str().as_bytes()[at..]) {
                    return Err(UsageError::InvalidHead);
                }
                Some(at)
            }
            None if http10 => None,
            None => return Err(UsageError::InvalidHead),
        },
        1 if !seen.bad_host => None,
        _ => return Err(UsageError::InvalidHead),
    };
    let mut added = Added::default();
    let keep_alive = match connection_verdict_of(parts.version, &seen) {
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
        match declared_framing(false, &seen, headers).map_err(|_| UsageError::InvalidFraming)? {
            Declared::Length(n) => length(n, full)?,
            // No Transfer-Encoding in HTTP/1.0 (RFC 9112 section 6.1).
            Declared::Chunked if !http10 => BodyEncoder::Chunked,
            Declared::Chunked | Declared::CodedChunked | Declared::Close => {
                return Err(UsageError::InvalidFraming);
            }
            Declared::None => match full {
                Some(len)
                    if len > 0 || matches!(parts.method.as_str(), "POST" | "PUT" | "PATCH") =>
                {
                    added.content_length = full;
                    BodyEncoder::Length {
                        declared: len,
                        sent: 0,
                    }
                }
                Some(_) => BodyEncoder::Empty,
                None if http10 => return Err(UsageError::InvalidFraming),
                None => {
                    added.chunked = true;
                    BodyEncoder::Chunked
                }
            },
        }
    };
    Ok((added, body, keep_alive, Target { form, host }))
}

/// The request-line's decisions.
struct Target {
    form: TargetForm,
    /// Where the `Host` value starts in the URI's authority, when the
    /// encoder writes `Host` itself.
    host: Option<usize>,
}

/// The request-target the request was received with, when its `Uri` still
/// equals it (`http::Uri`'s comparison with a string, which ignores the
/// case of the scheme and the host, and takes `http://a` for
/// `http://a/`) and it has the form the encoder would write: then it is
/// written as received.
fn received_target(parts: &Parts, form: TargetForm) -> Option<&[u8]> {
    let target = parts.extensions.get::<WireHead>()?.target()?;
    let text = std::str::from_utf8(target).ok()?;
    (form_of(target) == form && parts.uri == *text).then_some(target)
}
