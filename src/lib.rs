//! h1proto: sans-IO HTTP/1.1.
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

pub mod conn;
pub mod decode;
pub mod encode;
mod error;
pub mod framing;
mod head;
mod keep_alive;
mod limits;
mod reason;
pub mod segments;

pub use conn::{ClientConnection, Config, ServerConnection};
pub use decode::{Event, RequestDecoder, ResponseDecoder};
pub use encode::{EncoderConfig, EncoderState, RequestEncoder, ResponseContext, ResponseEncoder};
pub use error::{Error, ErrorKind, UsageError};
pub use framing::{BodyKind, RequestKind};
pub use keep_alive::{CloseReason, KeepAlive};
pub use limits::Limits;
pub use reason::ReasonPhrase;
pub use segments::Segments;
