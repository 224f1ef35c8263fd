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
                let message = self.body(()).map_err(UsageError::from_builder)?;
                Ok(message.into_parts().0)
            }
        }

        impl IntoHead<$parts> for $parts {
            #[inline]
            fn into_head(self) -> Result<$parts, UsageError> {
                Ok(self)
            }
        }
    };
}

forms!(Request, request::Builder, request::Parts);
forms!(Response, response::Builder, response::Parts);

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
}
