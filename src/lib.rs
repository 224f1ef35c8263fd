//! h1proto: sans-IO HTTP/1.1.
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod error;
pub mod framing;
mod head;
mod keep_alive;
mod limits;

pub use error::{Error, ErrorKind, UsageError};
pub use framing::{BodyKind, RequestKind};
pub use keep_alive::{CloseReason, KeepAlive};
pub use limits::Limits;
