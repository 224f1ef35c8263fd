//! What each role adds to the encoder, and the message forms each accepts.
//!
//! [`Encoder<R>`](super::Encoder) holds everything both directions share:
//! the output queue, the state of the message being sent, the body framers
//! and the keep-alive verdict. A role adds only what differs: how a head is
//! planned (its framing and connection fields) and how its start line is
//! written. [`Client`] sends requests, [`Server`] sends responses.

use bytes::Bytes;
use http::{Request, Response, request, response};

use super::EncoderConfig;
use crate::error::UsageError;
use crate::segments::Segments;

/// A request an encoder can send whole ([`send_request`]): a `Request<B>`
/// whose body `B` is any `Into<Bytes>` (`&'static str`, `String`,
/// `Vec<u8>`, `Bytes`, ...), or, for a request without a body, a
/// [`request::Builder`] or [`request::Parts`], sent exactly as with
/// `.body("")`.
///
/// A builder that holds an error is refused with [`UsageError::Builder`].
/// Sealed: the forms above are the only ones.
///
/// ```
/// let mut enc = h1proto::RequestEncoder::default();
/// enc.send_request(http::Request::get("http://example.com/")).unwrap();
/// ```
///
/// [`send_request`]: super::Encoder::send_request
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a request an encoder can send whole",
    note = "pass a `Request<B>` with `B: Into<Bytes>`, a `request::Builder` or `request::Parts`; \
            a `Request<()>` is a head: send it with `send_head`"
)]
pub trait IntoRequest: sealed::IntoRequest {}

/// A request head an encoder can send on its own, its body following with
/// `send_data` ([`send_head`]): a `Request<()>`, a [`request::Builder`] or
/// [`request::Parts`].
///
/// A builder that holds an error is refused with [`UsageError::Builder`].
/// Sealed: the forms above are the only ones.
///
/// [`send_head`]: super::Encoder::send_head
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a request head an encoder can send",
    note = "pass a `Request<()>`, a `request::Builder` or `request::Parts`"
)]
pub trait IntoRequestHead: sealed::IntoRequestHead {}

/// A response an encoder can send whole ([`send_response`]): a
/// `Response<B>` whose body `B` is any `Into<Bytes>`, or, for a response
/// without a body, a [`response::Builder`] or [`response::Parts`], sent
/// exactly as with `.body("")`.
///
/// A builder that holds an error is refused with [`UsageError::Builder`].
/// Sealed: the forms above are the only ones.
///
/// ```
/// use h1proto::{ResponseContext, ResponseEncoder};
///
/// let mut enc = ResponseEncoder::default();
/// let res = http::Response::builder().status(204);
/// enc.send_response(res, ResponseContext::default()).unwrap();
/// ```
///
/// [`send_response`]: super::Encoder::send_response
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a response an encoder can send whole",
    note = "pass a `Response<B>` with `B: Into<Bytes>`, a `response::Builder` or `response::Parts`; \
            a `Response<()>` is a head: send it with `send_head`"
)]
pub trait IntoResponse: sealed::IntoResponse {}

/// A response head an encoder can send on its own, its body following with
/// `send_data` ([`send_head`]): a `Response<()>`, a [`response::Builder`]
/// or [`response::Parts`].
///
/// A builder that holds an error is refused with [`UsageError::Builder`].
/// Sealed: the forms above are the only ones.
///
/// ```
/// use h1proto::{ResponseContext, ResponseEncoder};
///
/// let mut enc = ResponseEncoder::default();
/// let res = http::Response::builder().header("content-type", "text/plain");
/// enc.send_head(res, ResponseContext::default()).unwrap();
/// ```
///
/// [`send_head`]: super::Encoder::send_head
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a response head an encoder can send",
    note = "pass a `Response<()>`, a `response::Builder` or `response::Parts`"
)]
pub trait IntoResponseHead: sealed::IntoResponseHead {}

impl<B: Into<Bytes>> IntoRequest for Request<B> {}
impl IntoRequest for request::Builder {}
impl IntoRequest for request::Parts {}
impl IntoRequestHead for Request<()> {}
impl IntoRequestHead for request::Builder {}
impl IntoRequestHead for request::Parts {}
impl<B: Into<Bytes>> IntoResponse for Response<B> {}
impl IntoResponse for response::Builder {}
impl IntoResponse for response::Parts {}
impl IntoResponseHead for Response<()> {}
impl IntoResponseHead for response::Builder {}
impl IntoResponseHead for response::Parts {}

impl<B: Into<Bytes>> sealed::IntoRequest for Request<B> {
    #[inline]
    fn into_message(self) -> Result<(request::Parts, Bytes), UsageError> {
        let (parts, body) = self.into_parts();
        Ok((parts, body.into()))
    }
}

impl sealed::IntoRequest for request::Builder {
    #[inline]
    fn into_message(self) -> Result<(request::Parts, Bytes), UsageError> {
        Ok((sealed::IntoRequestHead::into_head(self)?, Bytes::new()))
    }
}

impl sealed::IntoRequest for request::Parts {
    #[inline]
    fn into_message(self) -> Result<(request::Parts, Bytes), UsageError> {
        Ok((self, Bytes::new()))
    }
}

impl sealed::IntoRequestHead for Request<()> {
    #[inline]
    fn into_head(self) -> Result<request::Parts, UsageError> {
        Ok(self.into_parts().0)
    }
}

impl sealed::IntoRequestHead for request::Builder {
    #[inline]
    fn into_head(self) -> Result<request::Parts, UsageError> {
        Ok(self
            .body(())
            .map_err(UsageError::from_builder)?
            .into_parts()
            .0)
    }
}

impl sealed::IntoRequestHead for request::Parts {
    #[inline]
    fn into_head(self) -> Result<request::Parts, UsageError> {
        Ok(self)
    }
}

impl<B: Into<Bytes>> sealed::IntoResponse for Response<B> {
    #[inline]
    fn into_message(self) -> Result<(response::Parts, Bytes), UsageError> {
        let (parts, body) = self.into_parts();
        Ok((parts, body.into()))
    }
}

impl sealed::IntoResponse for response::Builder {
    #[inline]
    fn into_message(self) -> Result<(response::Parts, Bytes), UsageError> {
        Ok((sealed::IntoResponseHead::into_head(self)?, Bytes::new()))
    }
}

impl sealed::IntoResponse for response::Parts {
    #[inline]
    fn into_message(self) -> Result<(response::Parts, Bytes), UsageError> {
        Ok((self, Bytes::new()))
    }
}

impl sealed::IntoResponseHead for Response<()> {
    #[inline]
    fn into_head(self) -> Result<response::Parts, UsageError> {
        Ok(self.into_parts().0)
    }
}

impl sealed::IntoResponseHead for response::Builder {
    #[inline]
    fn into_head(self) -> Result<response::Parts, UsageError> {
        Ok(self
            .body(())
            .map_err(UsageError::from_builder)?
            .into_parts()
            .0)
    }
}

impl sealed::IntoResponseHead for response::Parts {
    #[inline]
    fn into_head(self) -> Result<response::Parts, UsageError> {
        Ok(self)
    }
}

/// The role-specific parts, out of reach of other crates.
pub(crate) mod sealed {
    use super::*;
    use crate::encode::{
        After,
        body::BodyEncoder,
        head::{Added, Ordered},
    };

    /// The decisions made for a head before anything is written.
    pub struct Plan<L> {
        /// The version written in the start line.
        pub(crate) version: &'static [u8],
        /// What the role needs to write its start line and `Host`.
        pub(crate) line: L,
        /// The fields the encoder adds, or leaves out, after the caller's.
        pub(crate) added: Added,
        /// The body framer.
        pub(crate) body: BodyEncoder,
        /// Where the encoder goes once the message ends.
        pub(crate) after: After,
    }

    /// What a role supplies to the shared encoder.
    pub trait Role: Sized {
        /// The head this role sends: `request::Parts` or `response::Parts`.
        type Head;
        /// What the encoder must know besides the head: nothing for a
        /// request; for a response, the request it answers.
        type Context;
        /// Role-specific start-line decisions.
        type Line;

        /// Decides how the head is written and its body framed; `full` is
        /// the body length when the whole body is known.
        fn plan(
            head: &Self::Head,
            ctx: &Self::Context,
            config: &EncoderConfig,
            full: Option<u64>,
        ) -> Result<Plan<Self::Line>, UsageError>;

        /// Writes the start line, the fields (in `order` when one is asked
        /// for) and the empty line.
        fn write_head(
            out: &mut Segments,
            head: &Self::Head,
            plan: &Plan<Self::Line>,
            config: &EncoderConfig,
            order: Option<Ordered<'_>>,
        );

        /// The extensions of the head.
        fn extensions(head: &Self::Head) -> &http::Extensions;
    }

    /// Turns a request form into its head and a body.
    pub trait IntoRequest {
        /// The head and the whole body, or the builder's error.
        fn into_message(self) -> Result<(request::Parts, Bytes), UsageError>;
    }

    /// Turns a request head form into the head.
    pub trait IntoRequestHead {
        /// The head, or the builder's error.
        fn into_head(self) -> Result<request::Parts, UsageError>;
    }

    /// Turns a response form into its head and a body.
    pub trait IntoResponse {
        /// The head and the whole body, or the builder's error.
        fn into_message(self) -> Result<(response::Parts, Bytes), UsageError>;
    }

    /// Turns a response head form into the head.
    pub trait IntoResponseHead {
        /// The head, or the builder's error.
        fn into_head(self) -> Result<response::Parts, UsageError>;
    }
}
