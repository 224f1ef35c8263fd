//! The server side: responses to bytes.

use bytes::Bytes;
use http::header::HeaderMap;
use http::response::Parts;
use http::{Response, StatusCode, Version};

use super::body::BodyEncoder;
use super::head::{
    Added, CallerFraming, caller_framing, is_http10, says_close, says_keep_alive, version_bytes,
    write_fields, write_status_line,
};
use super::{After, EncoderConfig, EncoderState, ResponseContext, Sender, State};
use crate::error::UsageError;
use crate::framing::{BodyKind, RequestKind, Seen};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::reason::ReasonPhrase;
use crate::segments::Segments;

/// Encodes responses into an output queue of [`Segments`].
///
/// One encoder serves one connection: responses are sent one after the
/// other, each as a head with its body ([`send_response`](Self::send_response))
/// or as a head ([`send_head`](Self::send_head)) followed by
/// [`send_data`](Self::send_data) calls and [`finish`](Self::finish).
/// Interim (1xx) responses may precede a final one. See the
/// [module documentation](crate::encode) for the framing rules.
#[derive(Debug)]
pub struct ResponseEncoder {
    config: EncoderConfig,
    tx: Sender,
}

/// The decisions made for a response head before anything is written.
struct Plan {
    version: &'static [u8],
    added: Added,
    body: BodyEncoder,
    after: After,
}

impl ResponseEncoder {
    /// A new encoder with an empty output queue.
    pub fn new(config: EncoderConfig) -> Self {
        ResponseEncoder {
            tx: Sender::new(&config),
            config,
        }
    }

    /// Queues a complete response: its head and its whole body.
    ///
    /// Without framing fields from the caller the response gets
    /// `Content-Length` (none for 1xx, 204, 304 and 2xx to CONNECT). For a
    /// response to HEAD, the head carries the body's length and the body is
    /// dropped. A `Content-Length` given by the caller must match the body
    /// ([`UsageError::BodyTooLong`] / [`UsageError::BodyTooShort`]); for
    /// HEAD an empty body is also accepted.
    ///
    /// # Errors
    ///
    /// A [`UsageError`] when the response cannot be sent as it is; the
    /// output queue is left untouched.
    pub fn send_response<B: Into<Bytes>>(
        &mut self,
        res: Response<B>,
        ctx: ResponseContext,
    ) -> Result<(), UsageError> {
        let (parts, body) = res.into_parts();
        let body: Bytes = body.into();
        self.tx.ready()?;
        let plan = self.plan(&parts, &ctx, Some(body.len() as u64))?;
        let mut enc = self.write_head(&parts, plan.version, &plan.added, plan.body);
        enc.data(&mut self.tx.out, body)?;
        enc.finish(&mut self.tx.out, None)?;
        self.tx.keep_alive = verdict(plan.after, self.tx.keep_alive);
        self.tx.state = State::after(plan.after);
        self.tx.keep(parts.headers);
        Ok(())
    }

    /// Queues a response head whose body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish), and
    /// returns how the body is framed on the wire.
    ///
    /// Without framing fields from the caller the body is chunked for an
    /// HTTP/1.1 peer and close-delimited (with `Connection: close`) for an
    /// HTTP/1.0 peer. A response to HEAD gets neither `Content-Length` nor
    /// `Transfer-Encoding` unless the caller gave them.
    ///
    /// An interim response (1xx but 101) is complete after this call; so
    /// are 101 and a 2xx to CONNECT, after which the encoder is
    /// [`EncoderState::Closed`] with [`CloseReason::Upgraded`]. Every other
    /// response needs [`finish`](Self::finish), even when it has no body.
    ///
    /// # Errors
    ///
    /// A [`UsageError`] when the head cannot be sent; the output queue is
    /// left untouched.
    pub fn send_head(
        &mut self,
        res: Response<()>,
        ctx: ResponseContext,
    ) -> Result<BodyKind, UsageError> {
        self.tx.ready()?;
        let (parts, ()) = res.into_parts();
        let plan = self.plan(&parts, &ctx, None)?;
        let body = self.write_head(&parts, plan.version, &plan.added, plan.body);
        self.tx.keep(parts.headers);
        let kind = body.kind();
        self.tx.keep_alive = verdict(plan.after, self.tx.keep_alive);
        let switch = matches!(
            plan.after,
            After::Verdict(KeepAlive::Close(CloseReason::Upgraded))
        );
        if plan.after == After::Interim || switch {
            self.tx.state = State::after(plan.after);
        } else {
            self.tx.state = State::Body {
                body,
                after: plan.after,
            };
        }
        Ok(kind)
    }

    /// Queues body data of the response being streamed. An empty `data`
    /// queues nothing (it never ends a chunked body).
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] without a head in progress;
    /// [`UsageError::BodyTooLong`] past the declared `Content-Length`;
    /// [`UsageError::BodyNotAllowed`] for a response that has no body. The
    /// output queue is left untouched.
    pub fn send_data(&mut self, data: impl Into<Bytes>) -> Result<(), UsageError> {
        self.tx.send_data(data.into())
    }

    /// Ends the response being streamed, with trailers if it is chunked
    /// (trailers given for a response to HEAD are checked and dropped).
    ///
    /// # Errors
    ///
    /// [`UsageError::BodyTooShort`] before the declared `Content-Length`
    /// was sent; [`UsageError::TrailersNotAllowed`] for trailers on a body
    /// that is not chunked; [`UsageError::ForbiddenTrailer`] for a trailer
    /// field that carries framing, routing or control data;
    /// [`UsageError::WrongState`] without a head in progress. The output
    /// queue is left untouched.
    pub fn finish(&mut self, trailers: Option<HeaderMap>) -> Result<(), UsageError> {
        self.tx.finish(trailers.as_ref())
    }

    /// Forgets the response in progress or just completed, whose bytes the
    /// connection withdrew from the output queue: the next head may be
    /// sent.
    pub(crate) fn abandon(&mut self) {
        self.tx.abandon();
    }

    /// The output queue: drain it into the connection.
    pub fn output(&mut self) -> &mut Segments {
        &mut self.tx.out
    }

    /// Where the encoder is: ready for a head, inside a body, or closed.
    pub fn state(&self) -> EncoderState {
        self.tx.state.public()
    }

    /// `true` when no response is in progress.
    pub fn is_finished(&self) -> bool {
        self.tx.is_finished()
    }

    /// Takes the field map of the last head queued, emptied but with its
    /// allocations, for reuse: a connection hands it to its
    /// [`RequestDecoder`](crate::RequestDecoder) with `recycle_fields`, so the next
    /// head it decodes allocates no map. `None` once taken, or before any
    /// head.
    pub fn reclaim_fields(&mut self) -> Option<HeaderMap> {
        self.tx.spare.take()
    }

    /// The framing of the body in progress, if any.
    pub fn body_kind(&self) -> Option<BodyKind> {
        self.tx.body_kind()
    }

    /// The keep-alive verdict of the last final response sent (known from
    /// its head on): whether the connection may carry another exchange.
    pub fn keep_alive(&self) -> KeepAlive {
        self.tx.keep_alive
    }

    fn write_head(
        &mut self,
        parts: &Parts,
        version: &[u8],
        added: &Added,
        body: BodyEncoder,
    ) -> BodyEncoder {
        let reason = match parts.extensions.get::<ReasonPhrase>() {
            Some(r) => r.as_bytes(),
            None => parts
                .status
                .canonical_reason()
                .map_or(&b""[..], str::as_bytes),
        };
        write_status_line(&mut self.tx.out, version, parts.status, reason);
        write_fields(&mut self.tx.out, &parts.headers, None, added);
        body
    }

    /// Decides the framing of a response; `full` is the body length when
    /// the whole body is known.
    fn plan(
        &self,
        parts: &Parts,
        ctx: &ResponseContext,
        full: Option<u64>,
    ) -> Result<Plan, UsageError> {
        let version = version_bytes(parts.version)?;
        let status = parts.status;
        let headers = &parts.headers;
        let http10 = is_http10(ctx.peer_version) || parts.version == Version::HTTP_10;
        let has_body = full.is_some_and(|n| n > 0);
        let strip = Added {
            strip_framing: true,
            ..Added::default()
        };

        if status.is_informational() {
            if http10 {
                return Err(UsageError::InterimToHttp10);
            }
            if has_body {
                return Err(UsageError::BodyNotAllowed);
            }
            let after = if status == StatusCode::SWITCHING_PROTOCOLS {
                After::Verdict(KeepAlive::Close(CloseReason::Upgraded))
            } else {
                After::Interim
            };
            return Ok(Plan {
                version,
                added: strip,
                body: BodyEncoder::Empty,
                after,
            });
        }
        if ctx.request == RequestKind::Connect && status.is_success() {
            if has_body {
                return Err(UsageError::BodyNotAllowed);
            }
            return Ok(Plan {
                version,
                added: strip,
                body: BodyEncoder::Empty,
                after: After::Verdict(KeepAlive::Close(CloseReason::Upgraded)),
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
        let body;
        if status == StatusCode::NO_CONTENT {
            if has_body {
                return Err(UsageError::BodyNotAllowed);
            }
            added.strip_framing = true;
            body = BodyEncoder::Empty;
        } else if status == StatusCode::NOT_MODIFIED {
            if has_body {
                return Err(UsageError::BodyNotAllowed);
            }
            // A 304 may carry the Content-Length of the selected
            // representation; it is never chunked.
            match caller_framing(headers, &seen, false, true)? {
                CallerFraming::Length(_) | CallerFraming::None => {}
                CallerFraming::Chunked | CallerFraming::Close => added.strip_te = true,
            }
            body = BodyEncoder::Empty;
        } else if ctx.request == RequestKind::Head {
            let caller = caller_framing(headers, &seen, http10, true)?;
            let declared = match caller {
                CallerFraming::Length(n) => {
                    if let Some(len) = full.filter(|&len| len > 0) {
                        check_full(n, len)?;
                    }
                    Some(n)
                }
                CallerFraming::None => {
                    added.content_length = full;
                    full
                }
                CallerFraming::Chunked | CallerFraming::Close => None,
            };
            if self.config.strict_head_body && has_body {
                return Err(UsageError::BodyNotAllowed);
            }
            body = BodyEncoder::Discard {
                declared,
                seen: 0,
                strict: self.config.strict_head_body,
            };
        } else {
            body = match caller_framing(headers, &seen, http10, true)? {
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
                CallerFraming::Close => BodyEncoder::Close,
                CallerFraming::None => match full {
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
            };
            if let BodyEncoder::Close = body {
                keep_alive = keep_alive.and(KeepAlive::Close(CloseReason::CloseDelimited));
            }
        }
        match keep_alive {
            KeepAlive::Close(_) => added.close = !caller_close,
            KeepAlive::Reusable => added.keep_alive = http10 && !says_keep_alive(headers, &seen),
        }
        Ok(Plan {
            version,
            added,
            body,
            after: After::Verdict(keep_alive),
        })
    }
}

/// The verdict once a message with this ending is sent: interim responses
/// leave it as it was.
fn verdict(after: After, current: KeepAlive) -> KeepAlive {
    match after {
        After::Interim => current,
        After::Verdict(v) => v,
    }
}

/// Checks a whole body's length against a declared `Content-Length`.
pub(super) fn check_full(declared: u64, len: u64) -> Result<(), UsageError> {
    if len > declared {
        Err(UsageError::BodyTooLong {
            declared,
            attempted: len,
        })
    } else if len < declared {
        Err(UsageError::BodyTooShort {
            declared,
            sent: len,
        })
    } else {
        Ok(())
    }
}

impl Default for ResponseEncoder {
    fn default() -> Self {
        Self::new(EncoderConfig::default())
    }
}
