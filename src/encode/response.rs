//! The response encoder's own send methods; how a response head is
//! planned and written is the server role's (`src/role/server.rs`).

use bytes::Bytes;
use http::response::Parts;

use super::forms::{IntoHead, IntoMessage};
use super::{ResponseContext, ResponseEncoder};
use crate::error::UsageError;
use crate::framing::BodyKind;

impl ResponseEncoder {
    /// Queues a complete response: its head and its whole body. `res` is a
    /// `Response<B>` with any `B: Into<Bytes>`, or for a response without
    /// a body an `http` builder or `Parts`.
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
        res: impl IntoMessage<http::response::Parts>,
        ctx: ResponseContext,
    ) -> Result<(), UsageError> {
        let (parts, body) = res.into_message()?;
        self.send_message(parts, ctx, Some(body)).map(drop)
    }

    /// [`send_response`](Self::send_response) (with `body`) or
    /// [`send_head`](Self::send_head) (without) for a response already
    /// taken apart: what a connection calls once it has looked at the head.
    #[inline]
    pub(crate) fn send_message(
        &mut self,
        parts: Parts,
        ctx: ResponseContext,
        body: Option<Bytes>,
    ) -> Result<BodyKind, UsageError> {
        let kind = self.start(&parts, &ctx, body)?;
        self.keep(parts.headers, parts.extensions);
        Ok(kind)
    }

    /// Queues a response head whose body follows with
    /// [`send_data`](Self::send_data) and [`finish`](Self::finish), and
    /// returns how the body is framed. `res` is a
    /// `Response<()>`, an `http` builder or `Parts`.
    ///
    /// Without framing fields from the caller the body is chunked for an
    /// HTTP/1.1 peer and close-delimited (with `Connection: close`) for an
    /// HTTP/1.0 peer; a caller's `Transfer-Encoding: chunked` to an
    /// HTTP/1.0 peer is rewritten the same way. A response to HEAD gets
    /// neither `Content-Length` nor `Transfer-Encoding` unless the caller
    /// gave them.
    ///
    /// An interim response (1xx but 101) is complete after this call; so
    /// are 101 and a 2xx to CONNECT, after which the encoder is finished for
    /// good, its verdict [`CloseReason::Switched`](crate::CloseReason::Switched). Every other response needs
    /// [`finish`](Self::finish), even when it has no body.
    ///
    /// # Errors
    ///
    /// As [`send_response`](Self::send_response), except that the body is
    /// not checked yet. The output queue is left untouched.
    #[inline]
    pub fn send_head(
        &mut self,
        res: impl IntoHead<http::response::Parts>,
        ctx: ResponseContext,
    ) -> Result<BodyKind, UsageError> {
        self.send_message(res.into_head()?, ctx, None)
    }
}
