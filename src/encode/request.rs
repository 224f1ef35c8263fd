//! The client side: requests to bytes.

use bytes::Bytes;
use http::header::HeaderMap;
use http::request::Parts;
use http::{Method, Request, Version};

use super::body::BodyEncoder;
use super::head::{
    Added, CallerFraming, TargetForm, caller_framing, target_form, version_bytes, write_fields,
    write_request_line,
};
use super::response::check_full;
use super::{After, EncoderConfig, EncoderState, Sender, State};
use crate::error::UsageError;
use crate::framing::{BodyKind, Seen, connection_verdict_of};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::segments::Segments;

/// Encodes requests into an output queue of [`Segments`].
///
/// The request-target form follows the URI: origin-form (`/path?query`) for
/// a URI without scheme and authority, absolute-form
/// (`http://host/path`, as sent to proxies) for a URI with both,
/// authority-form (`host:port`) for CONNECT, and `*` for an OPTIONS whose
/// URI is `*`. An HTTP/1.1 request without a `Host` field gets one from the
/// URI's authority; without either it is refused
/// ([`UsageError::InvalidHead`]).
///
/// ```
/// use bytes::Buf;
/// use h1proto::{EncoderConfig, RequestEncoder};
///
/// let mut enc = RequestEncoder::new(EncoderConfig::default());
/// let req = http::Request::post("http://example.com/upload").body("data").unwrap();
/// enc.send_request(req).unwrap();
/// let out = enc.output();
/// let bytes = out.copy_to_bytes(out.remaining());
/// assert_eq!(
///     &bytes[..],
///     b"POST http://example.com/upload HTTP/1.1\r\nhost: example.com\r\ncontent-length: 4\r\n\r\ndata"
/// );
/// ```
#[derive(Debug)]
pub struct RequestEncoder {
    tx: Sender,
}

struct Plan {
    version: &'static [u8],
    form: TargetForm,
    host: Option<usize>,
    added: Added,
    body: BodyEncoder,
    keep_alive: KeepAlive,
}

impl RequestEncoder {
    /// A new encoder with an empty output queue.
    pub fn new(config: EncoderConfig) -> Self {
        RequestEncoder {
            tx: Sender::new(&config),
        }
    }

    /// Queues a complete request: its head and its whole body.
    ///
    /// Without framing fields from the caller, a non-empty body gets
    /// `Content-Length`; an empty one gets `Content-Length: 0` for POST,
    /// PUT and PATCH and no framing field otherwise. A CONNECT request has
    /// no content (RFC 9110 section 9.3.6) and is sent without framing
    /// fields.
    ///
    /// # Errors
    ///
    /// A [`UsageError`] when the request cannot be sent as it is; the output
    /// queue is left untouched. For CONNECT: [`UsageError::InvalidFraming`]
    /// when the caller gave `Content-Length` or `Transfer-Encoding`, and
    /// [`UsageError::BodyNotAllowed`] for a non-empty body.
    pub fn send_request<B: Into<Bytes>>(&mut self, req: Request<B>) -> Result<(), UsageError> {
        let (parts, body) = req.into_parts();
        let body: Bytes = body.into();
        self.tx.ready()?;
        let plan = plan(&parts, Some(body.len() as u64))?;
        let keep_alive = plan.keep_alive;
        let mut enc = self.write_head(&parts, plan);
        enc.data(&mut self.tx.out, body)?;
        enc.finish(&mut self.tx.out, None)?;
        self.tx.keep_alive = keep_alive;
        self.tx.state = State::after(After::Verdict(keep_alive));
        self.tx.keep(parts.headers);
        Ok(())
    }

    /// Queues a request head whose body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish), and
    /// returns the body framing. Without framing fields from the caller the
    /// body is chunked (an HTTP/1.0 request must then give
    /// `Content-Length`). A CONNECT head is sent without framing fields and
    /// its body is [`BodyKind::Empty`]: only [`finish`](Self::finish)
    /// follows.
    ///
    /// # Errors
    ///
    /// A [`UsageError`] when the head cannot be sent; the output queue is
    /// left untouched. A CONNECT request with `Content-Length` or
    /// `Transfer-Encoding` is [`UsageError::InvalidFraming`].
    pub fn send_head(&mut self, req: Request<()>) -> Result<BodyKind, UsageError> {
        self.tx.ready()?;
        let (parts, ()) = req.into_parts();
        let plan = plan(&parts, None)?;
        let keep_alive = plan.keep_alive;
        let body = self.write_head(&parts, plan);
        self.tx.keep(parts.headers);
        let kind = body.kind();
        self.tx.keep_alive = keep_alive;
        self.tx.state = State::Body {
            body,
            after: After::Verdict(keep_alive),
        };
        Ok(kind)
    }

    /// Queues body data of the request being streamed. An empty `data`
    /// queues nothing.
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] without a head in progress;
    /// [`UsageError::BodyTooLong`] past the declared `Content-Length`. The
    /// output queue is left untouched.
    pub fn send_data(&mut self, data: impl Into<Bytes>) -> Result<(), UsageError> {
        self.tx.send_data(data.into())
    }

    /// Ends the request being streamed, with trailers if it is chunked.
    ///
    /// # Errors
    ///
    /// As [`ResponseEncoder::finish`](crate::ResponseEncoder::finish).
    pub fn finish(&mut self, trailers: Option<HeaderMap>) -> Result<(), UsageError> {
        self.tx.finish(trailers.as_ref())
    }

    /// The output queue: drain it into the connection.
    pub fn output(&mut self) -> &mut Segments {
        &mut self.tx.out
    }

    /// Where the encoder is: ready for a head, inside a body, or closed.
    pub fn state(&self) -> EncoderState {
        self.tx.state.public()
    }

    /// `true` when no request is in progress.
    pub fn is_finished(&self) -> bool {
        self.tx.is_finished()
    }

    /// Takes the field map of the last head queued, emptied but with its
    /// allocations, for reuse: a connection hands it to its
    /// [`ResponseDecoder`](crate::ResponseDecoder) with `recycle_fields`, so the next
    /// head it decodes allocates no map. `None` once taken, or before any
    /// head.
    pub fn reclaim_fields(&mut self) -> Option<HeaderMap> {
        self.tx.spare.take()
    }

    /// The framing of the body in progress, if any.
    pub fn body_kind(&self) -> Option<BodyKind> {
        self.tx.body_kind()
    }

    /// The keep-alive verdict of the last request sent: `Close` when it
    /// said `Connection: close` or was HTTP/1.0 without `keep-alive`.
    pub fn keep_alive(&self) -> KeepAlive {
        self.tx.keep_alive
    }

    fn write_head(&mut self, parts: &Parts, plan: Plan) -> BodyEncoder {
        write_request_line(
            &mut self.tx.out,
            &parts.method,
            &parts.uri,
            plan.form,
            plan.version,
        );
        let host = plan
            .host
            .and_then(|at| parts.uri.authority().map(|a| &a.as_str().as_bytes()[at..]));
        write_fields(&mut self.tx.out, &parts.headers, host, &plan.added);
        plan.body
    }
}

impl Default for RequestEncoder {
    fn default() -> Self {
        Self::new(EncoderConfig::default())
    }
}

/// Decides how a request is written; `full` is the body length when the
/// whole body is known.
fn plan(parts: &Parts, full: Option<u64>) -> Result<Plan, UsageError> {
    let version = version_bytes(parts.version)?;
    let http10 = parts.version == Version::HTTP_10;
    let form = target_form(&parts.method, &parts.uri)?;
    let headers = &parts.headers;
    // The caller's framing, Host and Connection fields, in one pass.
    let seen = Seen::of(headers);
    let host = match seen.hosts {
        0 => match parts.uri.authority() {
            // The Host field never carries userinfo.
            Some(a) => Some(a.as_str().rfind('@').map_or(0, |at| at + 1)),
            None if http10 => None,
            None => return Err(UsageError::InvalidHead),
        },
        1 => None,
        _ => return Err(UsageError::InvalidHead),
    };
    let mut added = Added::default();
    if parts.method == Method::CONNECT {
        // RFC 9110 section 9.3.6: a CONNECT request has no content. What the
        // client sends after the head is tunnel data, so no framing field
        // may announce a body; the caller's own are refused, not dropped.
        if seen.transfer_encoding || seen.content_length.is_some() {
            return Err(UsageError::InvalidFraming);
        }
        if full.is_some_and(|len| len > 0) {
            return Err(UsageError::BodyNotAllowed);
        }
        return Ok(Plan {
            version,
            form,
            host,
            added,
            body: BodyEncoder::Empty,
            keep_alive: request_verdict(parts, &seen),
        });
    }
    let body = match caller_framing(headers, &seen, http10, false)? {
        CallerFraming::Length(n) => {
            if let Some(len) = full {
                check_full(n, len)?;
            }
            BodyEncoder::Length {
                declared: n,
                sent: 0,
            }
        }
        CallerFraming::Chunked => BodyEncoder::Chunked,
        CallerFraming::Close => return Err(UsageError::InvalidFraming),
        CallerFraming::None => match full {
            Some(len)
                if len > 0
                    || parts.method == Method::POST
                    || parts.method == Method::PUT
                    || parts.method == Method::PATCH =>
            {
                added.content_length = Some(len);
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
    };
    Ok(Plan {
        version,
        form,
        host,
        added,
        body,
        keep_alive: request_verdict(parts, &seen),
    })
}

/// The verdict of a request the local side sends: its `Connection: close`
/// is a local decision.
fn request_verdict(parts: &Parts, seen: &Seen) -> KeepAlive {
    match connection_verdict_of(parts.version, seen, &parts.headers) {
        KeepAlive::Close(CloseReason::PeerClose) => KeepAlive::Close(CloseReason::LocalClose),
        other => other,
    }
}
