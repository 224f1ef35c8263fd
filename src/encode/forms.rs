//! The message forms the send methods accept: a whole message, or a head
//! whose body follows.

use bytes::Bytes;
use http::{Request, Response, request, response};

use crate::error::UsageError;

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
