//! The server role: responses to bytes.

use bytes::Bytes;
use http::Version;
use http::response::Parts;

use super::body::BodyEncoder;
use super::head::{
    Added, Ordered, check_full, invalid_framing, is_http10, says_close, says_keep_alive,
    version_bytes, write_fields, write_status_line,
};
use super::role::sealed::{self, Plan};
use super::role::{IntoResponse, IntoResponseHead};
use super::{After, EncoderConfig, ResponseContext, ResponseEncoder};
use crate::error::UsageError;
use crate::framing::{
    BodyKind, Declared, ResponseClass, Seen, SenderFields, declared_framing, no_body,
    response_class,
};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::reason::ReasonPhrase;
use crate::role::Server;
use crate::segments::Segments;

impl ResponseEncoder {
    /// Queues a complete response: its head and its whole body. `res` is a
    /// `Response<B>` with any `B: Into<Bytes>`, or for a response without
    /// a body an `http` builder or `Parts` ([`IntoResponse`]).
    ///
    /// Without framing fields from the caller the response gets
    /// `Content-Length` (none for 1xx, 204, 304 and 2xx to CONNECT). For a
    /// response to HEAD, the head carries the body's length and the body is
    /// dropped. A `Content-Length` given by the caller must match the body;
    /// for HEAD an empty body is also accepted. A caller's
    /// `Transfer-Encoding: chunked` to an HTTP/1.0 peer is replaced by
    /// `Content-Length`.
    ///
    /// # Errors
    ///
    /// [`UsageError::Builder`] for a builder that holds an error;
    /// [`UsageError::WrongState`] while a response is in progress or after
    /// one that closed the connection; [`UsageError::InvalidHead`] for a
    /// version that cannot be written; [`UsageError::InterimToHttp10`] for
    /// a 1xx to an HTTP/1.0 peer; [`UsageError::BodyNotAllowed`] for body
    /// bytes on a response that has no body; [`UsageError::InvalidFraming`]
    /// for framing fields the encoder cannot honour;
    /// [`UsageError::BodyTooLong`] / [`UsageError::BodyTooShort`] for a
    /// body that does not match the caller's `Content-Length`. The output
    /// queue is left untouched.
    #[inline]
    pub fn send_response(
        &mut self,
        res: impl IntoResponse,
        ctx: ResponseContext,
    ) -> Result<(), UsageError> {
        let (parts, body) = sealed::IntoResponse::into_message(res)?;
        self.send_parts(parts, body, ctx)
    }

    /// [`send_response`](Self::send_response) for a response already
    /// taken apart: what a connection calls once it has looked at the head.
    #[inline]
    pub(crate) fn send_parts(
        &mut self,
        parts: Parts,
        body: Bytes,
        ctx: ResponseContext,
    ) -> Result<(), UsageError> {
        self.start(&parts, &ctx, Some(body))?;
        self.keep(parts.headers, parts.extensions);
        Ok(())
    }

    /// Queues a response head whose body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish), and
    /// returns how the body is framed on the wire. `res` is a
    /// `Response<()>`, an `http` builder or `Parts` ([`IntoResponseHead`]).
    ///
    /// Without framing fields from the caller the body is chunked for an
    /// HTTP/1.1 peer and close-delimited (with `Connection: close`) for an
    /// HTTP/1.0 peer; a caller's `Transfer-Encoding: chunked` to an
    /// HTTP/1.0 peer is rewritten the same way. A response to HEAD gets
    /// neither `Content-Length` nor `Transfer-Encoding` unless the caller
    /// gave them.
    ///
    /// An interim response (1xx but 101) is complete after this call; so
    /// are 101 and a 2xx to CONNECT, after which the encoder is
    /// [`EncoderState::Closed`](super::EncoderState::Closed) with
    /// [`CloseReason::Switched`]. Every other response needs
    /// [`finish`](Self::finish), even when it has no body.
    ///
    /// # Errors
    ///
    /// As [`send_response`](Self::send_response), except that the body is
    /// not checked yet. The output queue is left untouched.
    #[inline]
    pub fn send_head(
        &mut self,
        res: impl IntoResponseHead,
        ctx: ResponseContext,
    ) -> Result<BodyKind, UsageError> {
        let parts = sealed::IntoResponseHead::into_head(res)?;
        let kind = self.start(&parts, &ctx, None)?;
        self.keep(parts.headers, parts.extensions);
        Ok(kind)
    }
}

impl sealed::Role for Server {
    type Head = Parts;
    type Context = ResponseContext;
    type Line = ();

    fn plan(
        parts: &Parts,
        ctx: &ResponseContext,
        config: &EncoderConfig,
        full: Option<u64>,
    ) -> Result<Plan<()>, UsageError> {
        let version = version_bytes(parts.version)?;
        let status = parts.status;
        let headers = &parts.headers;
        let http10 = is_http10(ctx.peer_version) || parts.version == Version::HTTP_10;
        let has_body = full.is_some_and(|n| n > 0);
        let no_body = no_body(ctx.request, status);

        let class = response_class(ctx.request, status);
        if class != ResponseClass::Final {
            if status.is_informational() && http10 {
                return Err(UsageError::InterimToHttp10);
            }
            if has_body {
                return Err(UsageError::BodyNotAllowed);
            }
            debug_assert_eq!(no_body.map(|n| n.sender_fields()), Some(SenderFields::None));
            let after = if class == ResponseClass::Interim {
                After::Interim
            } else {
                After::Verdict(KeepAlive::Close(CloseReason::Switched))
            };
            return Ok(Plan {
                version,
                line: (),
                added: Added {
                    strip_framing: true,
                    ..Added::default()
                },
                body: BodyEncoder::Empty,
                after,
            });
        }

        // The caller's framing and Connection fields, in one pass.
        let seen = Seen::of(headers);
        let caller_close = says_close(headers, &seen);
        let mut keep_alive = ctx.keep_alive;
        if caller_close {
            keep_alive = keep_alive.and(KeepAlive::Close(CloseReason::LocalClose));
        }
        let mut added = Added::default();
        let body = match no_body.map(|n| n.sender_fields()) {
            Some(SenderFields::None) => {
                if has_body {
                    return Err(UsageError::BodyNotAllowed);
                }
                added.strip_framing = true;
                BodyEncoder::Empty
            }
            Some(SenderFields::LengthOnly) => {
                if has_body {
                    return Err(UsageError::BodyNotAllowed);
                }
                match declared_framing(true, &seen, headers).map_err(invalid_framing)? {
                    Declared::Length(_) | Declared::None => {}
                    Declared::Chunked | Declared::CodedChunked | Declared::Close => {
                        added.strip_te = true;
                    }
                }
                BodyEncoder::Empty
            }
            Some(SenderFields::AsForGet) => {
                let declared =
                    match declared_framing(true, &seen, headers).map_err(invalid_framing)? {
                        Declared::Length(n) => {
                            if let Some(len) = full.filter(|&len| len > 0) {
                                check_full(n, len)?;
                            }
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
            None => match declared_framing(true, &seen, headers).map_err(invalid_framing)? {
                Declared::Length(n) => {
                    if let Some(len) = full {
                        check_full(n, len)?;
                    }
                    BodyEncoder::Length {
                        declared: n,
                        sent: 0,
                    }
                }
                // An HTTP/1.0 peer knows no transfer coding: the caller's
                // chunked becomes the framing the encoder would choose
                // itself, Content-Length for a whole body, close-delimited
                // for a stream (as h11 does).
                Declared::Chunked if http10 => {
                    added.strip_te = true;
                    match full {
                        Some(len) => {
                            added.content_length = Some(len);
                            BodyEncoder::Length {
                                declared: len,
                                sent: 0,
                            }
                        }
                        None => BodyEncoder::Close,
                    }
                }
                // Other codings cannot be removed here: refused.
                Declared::CodedChunked | Declared::Close if http10 => {
                    return Err(UsageError::InvalidFraming);
                }
                Declared::Chunked | Declared::CodedChunked => BodyEncoder::Chunked,
                Declared::Close => BodyEncoder::Close,
                Declared::None => match full {
                    Some(len) => {
                        added.content_length = Some(len);
                        BodyEncoder::Length {
                            declared: len,
                            sent: 0,
                        }
                    }
                    None if !http10 => {
                        added.chunked = true;
                        BodyEncoder::Chunked
                    }
                    None => BodyEncoder::Close,
                },
            },
        };
        if let BodyEncoder::Close = body {
            keep_alive = keep_alive.and(KeepAlive::Close(CloseReason::CloseDelimited));
        }
        match keep_alive {
            KeepAlive::Close(_) => added.close = !caller_close,
            KeepAlive::Reusable => added.keep_alive = http10 && !says_keep_alive(headers, &seen),
        }
        Ok(Plan {
            version,
            line: (),
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
        plan: &Plan<()>,
        config: &EncoderConfig,
        order: Option<Ordered<'_>>,
    ) {
        let given = parts.extensions.get::<ReasonPhrase>();
        match given {
            None => write_status_line(out, plan.version, parts.status, canonical(parts)),
            Some(reason) => write_status_line(out, plan.version, parts.status, reason.as_bytes()),
        }
        write_fields(
            out,
            &parts.headers,
            None,
            &plan.added,
            config.name_case(),
            order,
        );
    }
}

/// The canonical reason phrase of the response's status, or none.
fn canonical(parts: &Parts) -> &'static [u8] {
    parts
        .status
        .canonical_reason()
        .map_or(&b""[..], str::as_bytes)
}
