//! The client role: requests to bytes.

use bytes::Bytes;
use http::request::Parts;
use http::{Method, Version};

use super::body::BodyEncoder;
use super::head::{
    Added, Ordered, TargetForm, check_full, form_of, invalid_framing, target_form, version_bytes,
    write_fields, write_request_line,
};
use super::role::sealed::{self, Plan};
use super::role::{IntoHead, IntoMessage};
use super::{After, EncoderConfig, RequestEncoder};
use crate::error::UsageError;
use crate::framing::{BodyKind, Declared, Seen, connection_verdict_of, declared_framing};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::role::Client;
use crate::segments::Segments;
use crate::wire::WireHead;

/// The request-line decisions of a plan.
pub struct Target {
    form: TargetForm,
    /// Where the `Host` value starts in the URI's authority, when the
    /// encoder writes `Host` itself.
    host: Option<usize>,
}

impl RequestEncoder {
    /// Queues a complete request: its head and its whole body. `req` is a
    /// `Request<B>` with any `B: Into<Bytes>`, or for a request without a
    /// body an `http` builder or `Parts`.
    ///
    /// Without framing fields from the caller, a non-empty body gets
    /// `Content-Length`; an empty one gets `Content-Length: 0` for POST,
    /// PUT and PATCH and no framing field otherwise.
    ///
    /// # Errors
    ///
    /// [`UsageError::Builder`] for a builder that holds an error;
    /// [`UsageError::WrongState`] while a request is in progress or after
    /// one that closed the connection; [`UsageError::InvalidHead`] for a
    /// request line or `Host` that cannot be written;
    /// [`UsageError::InvalidFraming`] for framing fields the encoder
    /// cannot honour; [`UsageError::BodyTooLong`] /
    /// [`UsageError::BodyTooShort`] for a body that does not match the
    /// caller's `Content-Length`. The output queue is left untouched.
    #[inline]
    pub fn send_request(
        &mut self,
        req: impl IntoMessage<http::request::Parts>,
    ) -> Result<(), UsageError> {
        let (parts, body) = req.into_message()?;
        self.send_parts(parts, body)
    }

    /// [`send_request`](Self::send_request) for a request already taken
    /// apart: what a connection calls once it has looked at the head.
    #[inline]
    pub(crate) fn send_parts(&mut self, parts: Parts, body: Bytes) -> Result<(), UsageError> {
        self.start(&parts, &(), Some(body))?;
        self.keep(parts.headers, parts.extensions);
        Ok(())
    }

    /// Queues a request head whose body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish), and
    /// returns the body framing. `req` is a `Request<()>`, an `http`
    /// builder or `Parts`. Without framing fields from the
    /// caller the body is chunked (an HTTP/1.0 request must then give
    /// `Content-Length`).
    ///
    /// # Errors
    ///
    /// As [`send_request`](Self::send_request), except that the body
    /// is not checked yet; [`UsageError::InvalidFraming`] also for an
    /// HTTP/1.0 request without `Content-Length`. The output queue is left
    /// untouched.
    #[inline]
    pub fn send_head(
        &mut self,
        req: impl IntoHead<http::request::Parts>,
    ) -> Result<BodyKind, UsageError> {
        let parts = req.into_head()?;
        let kind = self.start(&parts, &(), None)?;
        self.keep(parts.headers, parts.extensions);
        Ok(kind)
    }
}

impl sealed::Role for Client {
    type Head = Parts;
    type Context = ();
    type Line = Target;

    fn plan(
        parts: &Parts,
        (): &(),
        _config: &EncoderConfig,
        full: Option<u64>,
    ) -> Result<Plan<Target>, UsageError> {
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
        let keep_alive = match connection_verdict_of(parts.version, &seen, headers) {
            KeepAlive::Close(CloseReason::PeerClose) => KeepAlive::Close(CloseReason::LocalClose),
            other => other,
        };
        if parts.method == Method::CONNECT {
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
            return Ok(Plan {
                version,
                line: Target { form, host },
                added,
                body: BodyEncoder::Empty,
                after: After::Verdict(keep_alive),
            });
        }
        let body = match declared_framing(false, &seen, headers).map_err(invalid_framing)? {
            Declared::Length(n) => {
                if let Some(len) = full {
                    check_full(n, len)?;
                }
                BodyEncoder::Length {
                    declared: n,
                    sent: 0,
                }
            }
            // No Transfer-Encoding in HTTP/1.0 (RFC 9112 section 6.1).
            Declared::Chunked if !http10 => BodyEncoder::Chunked,
            Declared::Chunked | Declared::CodedChunked | Declared::Close => {
                return Err(UsageError::InvalidFraming);
            }
            Declared::None => match full {
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
            line: Target { form, host },
            added,
            body,
            after: After::Verdict(keep_alive),
        })
    }

    fn extensions(parts: &Parts) -> &http::Extensions {
        &parts.extensions
    }

    fn write_head(
        out: &mut Segments,
        parts: &Parts,
        plan: &Plan<Target>,
        config: &EncoderConfig,
        order: Option<Ordered<'_>>,
    ) {
        let raw = order
            .as_ref()
            .and_then(|_| received_target(parts, plan.line.form));
        let (method, uri) = (&parts.method, &parts.uri);
        write_request_line(out, method, uri, plan.line.form, raw, plan.version);
        let host = plan
            .line
            .host
            .and_then(|at| parts.uri.authority().map(|a| &a.as_str().as_bytes()[at..]));
        let case = config.name_case();
        write_fields(out, &parts.headers, host, &plan.added, case, order);
    }
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
