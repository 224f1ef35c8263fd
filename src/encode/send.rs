//! The send methods of each role's encoder, and the message forms they
//! accept: a whole message, or a head whose body follows. How a head is
//! planned and written is the role's (`request.rs`,
//! `response.rs`); the rest is the one generic [`Encoder`](super::Encoder)'s.

use bytes::Bytes;
use http::{Extensions, HeaderMap, Request, Response, request, response};

use super::HeadMaps;
use super::{RequestEncoder, ResponseContext, ResponseEncoder};
use crate::error::UsageError;
use crate::framing::BodyKind;

/// A message an encoder can send whole, head `H` and body: a `Request<B>`
/// or `Response<B>` whose body `B` is any `Into<Bytes>` (`&'static str`,
/// `String`, `Vec<u8>`, `Bytes`, ...), or, for a message without a body,
/// an `http` builder or `Parts`, sent exactly as with `.body("")`.
///
/// A builder that holds an error is refused with [`UsageError::Builder`].
/// Sealed and unnameable: the forms above are the only ones, and the send
/// methods say which they take.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a message an encoder can send whole",
    note = "pass a `Request<B>`/`Response<B>` with `B: Into<Bytes>`, an `http` builder or `Parts`; \
            a `Request<()>`/`Response<()>` is a head: send it with `send_head`"
)]
pub trait IntoMessage<H> {
    /// The head and the whole body, or the builder's error.
    fn into_message(self) -> Result<(H, Bytes), UsageError>;
}

/// A head `H` an encoder can send on its own, its body following with
/// `send_data`: a `Request<()>` or `Response<()>`, an `http` builder or
/// `Parts`. A builder that holds an error is refused with
/// [`UsageError::Builder`]. Sealed and unnameable, as [`IntoMessage`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a head an encoder can send",
    note = "pass a `Request<()>`/`Response<()>`, an `http` builder or `Parts`"
)]
pub trait IntoHead<H> {
    /// The head, or the builder's error.
    fn into_head(self) -> Result<H, UsageError>;
}

/// The forms of one kind of message: `$message<B>` and `$message<()>`, its
/// builder and its parts.
macro_rules! forms {
    ($message:ident, $builder:ty, $parts:ty) => {
        impl<B: Into<Bytes>> IntoMessage<$parts> for $message<B> {
            #[inline]
            fn into_message(self) -> Result<($parts, Bytes), UsageError> {
                let (parts, body) = self.into_parts();
                Ok((parts, body.into()))
            }
        }

        impl IntoMessage<$parts> for $builder {
            #[inline]
            fn into_message(self) -> Result<($parts, Bytes), UsageError> {
                Ok((self.into_head()?, Bytes::new()))
            }
        }

        impl IntoMessage<$parts> for $parts {
            #[inline]
            fn into_message(self) -> Result<($parts, Bytes), UsageError> {
                Ok((self, Bytes::new()))
            }
        }

        impl IntoHead<$parts> for $message<()> {
            #[inline]
            fn into_head(self) -> Result<$parts, UsageError> {
                Ok(self.into_parts().0)
            }
        }

        impl IntoHead<$parts> for $builder {
            #[inline]
            fn into_head(self) -> Result<$parts, UsageError> {
                let builder = |e: http::Error| UsageError::Builder(e.to_string());
                Ok(self.body(()).map_err(builder)?.into_parts().0)
            }
        }

        impl IntoHead<$parts> for $parts {
            #[inline]
            fn into_head(self) -> Result<$parts, UsageError> {
                Ok(self)
            }
        }

        impl HeadMaps for $parts {
            fn extensions(&self) -> &Extensions {
                &self.extensions
            }

            #[inline]
            fn into_maps(self) -> (HeaderMap, Extensions) {
                (self.headers, self.extensions)
            }
        }
    };
}

forms!(Request, request::Builder, request::Parts);
forms!(Response, response::Builder, response::Parts);

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
        self.send_message(parts, (), Some(body)).map(drop)
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
        self.send_message(req.into_head()?, (), None)
    }
}

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
