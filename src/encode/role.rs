//! The two roles an encoder plays, and the message forms each accepts.
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

/// The role of an [`Encoder`](super::Encoder): [`Client`] (it sends
/// requests: [`RequestEncoder`](super::RequestEncoder)) or [`Server`] (it
/// sends responses: [`ResponseEncoder`](super::ResponseEncoder)).
///
/// Sealed: the two roles are the only ones.
pub trait Role: sealed::Role {}

/// The client role: an [`Encoder<Client>`](super::Encoder) sends requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {}

/// The server role: an [`Encoder<Server>`](super::Encoder) sends responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {}

impl Role for Client {}
impl Role for Server {}

/// A message head an encoder of role `R` can send, on its own (the body
/// follows with `send_data`): for requests a `Request<()>`, a
/// [`request::Builder`] or [`request::Parts`]; for responses a
/// `Response<()>`, a [`response::Builder`] or [`response::Parts`].
///
/// A builder that holds an error is refused with [`UsageError::Builder`].
///
/// ```
/// use h1proto::ResponseEncoder;
///
/// let mut enc = ResponseEncoder::default();
/// let res = http::Response::builder().header("content-type", "text/plain");
/// enc.send_head(res, Default::default()).unwrap();
/// ```
///
/// Sealed: the forms above are the only ones.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a message head an encoder of role `{R}` can send",
    note = "a head is a `Request<()>` / `Response<()>`, an `http` builder, or the message's `Parts`"
)]
pub trait IntoHead<R: Role>: sealed::IntoHead<R> {}

/// A whole message an encoder of role `R` can send in one call: for
/// requests a `Request<B>` whose body `B` is any `Into<Bytes>`, or, for a
/// message without a body, a [`request::Builder`] or [`request::Parts`];
/// for responses the same with [`Response`], [`response::Builder`] and
/// [`response::Parts`].
///
/// A builder or `Parts` is sent exactly as a `.body("")` message would be.
/// A builder that holds an error is refused with [`UsageError::Builder`].
///
/// ```
/// use h1proto::RequestEncoder;
///
/// let mut enc = RequestEncoder::default();
/// enc.send_request(http::Request::get("http://example.com/")).unwrap();
/// ```
///
/// Sealed: the forms above are the only ones.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a whole message an encoder of role `{R}` can send",
    note = "pass a `Request<B>` / `Response<B>` with `B: Into<Bytes>`, an `http` builder or `Parts`; \
            a `Request<()>` / `Response<()>` is a head: send it with `send_head`"
)]
pub trait IntoMessage<R: Role>: sealed::IntoMessage<R> {}

impl IntoHead<Client> for Request<()> {}
impl IntoHead<Client> for request::Builder {}
impl IntoHead<Client> for request::Parts {}
impl IntoHead<Server> for Response<()> {}
impl IntoHead<Server> for response::Builder {}
impl IntoHead<Server> for response::Parts {}

impl<B: Into<Bytes>> IntoMessage<Client> for Request<B> {}
impl IntoMessage<Client> for request::Builder {}
impl IntoMessage<Client> for request::Parts {}
impl<B: Into<Bytes>> IntoMessage<Server> for Response<B> {}
impl IntoMessage<Server> for response::Builder {}
impl IntoMessage<Server> for response::Parts {}

impl sealed::IntoHead<Client> for Request<()> {
    #[inline]
    fn into_head(self) -> Result<request::Parts, UsageError> {
        Ok(self.into_parts().0)
    }
}

impl sealed::IntoHead<Client> for request::Builder {
    #[inline]
    fn into_head(self) -> Result<request::Parts, UsageError> {
        Ok(self
            .body(())
            .map_err(UsageError::from_builder)?
            .into_parts()
            .0)
    }
}

impl sealed::IntoHead<Client> for request::Parts {
    #[inline]
    fn into_head(self) -> Result<request::Parts, UsageError> {
        Ok(self)
    }
}

impl sealed::IntoHead<Server> for Response<()> {
    #[inline]
    fn into_head(self) -> Result<response::Parts, UsageError> {
        Ok(self.into_parts().0)
    }
}

impl sealed::IntoHead<Server> for response::Builder {
    #[inline]
    fn into_head(self) -> Result<response::Parts, UsageError> {
        Ok(self
            .body(())
            .map_err(UsageError::from_builder)?
            .into_parts()
            .0)
    }
}

impl sealed::IntoHead<Server> for response::Parts {
    #[inline]
    fn into_head(self) -> Result<response::Parts, UsageError> {
        Ok(self)
    }
}

impl<B: Into<Bytes>> sealed::IntoMessage<Client> for Request<B> {
    #[inline]
    fn into_message(self) -> Result<(request::Parts, Bytes), UsageError> {
        let (parts, body) = self.into_parts();
        Ok((parts, body.into()))
    }
}

impl sealed::IntoMessage<Client> for request::Builder {
    #[inline]
    fn into_message(self) -> Result<(request::Parts, Bytes), UsageError> {
        Ok((sealed::IntoHead::into_head(self)?, Bytes::new()))
    }
}

impl sealed::IntoMessage<Client> for request::Parts {
    #[inline]
    fn into_message(self) -> Result<(request::Parts, Bytes), UsageError> {
        Ok((self, Bytes::new()))
    }
}

impl<B: Into<Bytes>> sealed::IntoMessage<Server> for Response<B> {
    #[inline]
    fn into_message(self) -> Result<(response::Parts, Bytes), UsageError> {
        let (parts, body) = self.into_parts();
        Ok((parts, body.into()))
    }
}

impl sealed::IntoMessage<Server> for response::Builder {
    #[inline]
    fn into_message(self) -> Result<(response::Parts, Bytes), UsageError> {
        Ok((sealed::IntoHead::into_head(self)?, Bytes::new()))
    }
}

impl sealed::IntoMessage<Server> for response::Parts {
    #[inline]
    fn into_message(self) -> Result<(response::Parts, Bytes), UsageError> {
        Ok((self, Bytes::new()))
    }
}

/// The role-specific parts, out of reach of other crates.
pub(crate) mod sealed {
    use super::*;
    use crate::encode::{After, body::BodyEncoder, head::Added};

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

        /// Writes the start line, the fields and the empty line.
        fn write_head(
            out: &mut Segments,
            head: &Self::Head,
            plan: &Plan<Self::Line>,
            config: &EncoderConfig,
        );
    }

    /// Turns a head form into the role's head.
    pub trait IntoHead<R: Role> {
        /// The head, or the builder's error.
        fn into_head(self) -> Result<R::Head, UsageError>;
    }

    /// Turns a message form into the role's head and a body.
    pub trait IntoMessage<R: Role> {
        /// The head and the whole body, or the builder's error.
        fn into_message(self) -> Result<(R::Head, Bytes), UsageError>;
    }
}
