//! The request encoder's own send methods; how a request head is planned
//! and written is the client role's (`src/role/client.rs`).

use bytes::Bytes;
use http::request::Parts;

use super::RequestEncoder;
use super::forms::{IntoHead, IntoMessage};
use crate::error::UsageError;
use crate::framing::BodyKind;

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
        self.send_message(parts, Some(body)).map(drop)
    }

    /// [`send_request`](Self::send_request) (with `body`) or
    /// [`send_head`](Self::send_head) (without) for a request already
    /// taken apart: what a connection calls once it has looked at the head.
    #[inline]
    pub(crate) fn send_message(
        &mut self,
        parts: Parts,
        body: Option<Bytes>,
    ) -> Result<BodyKind, UsageError> {
        let kind = self.start(&parts, &(), body)?;
        self.keep(parts.headers, parts.extensions);
        Ok(kind)
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
        self.send_message(req.into_head()?, None)
    }
}
