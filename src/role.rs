//! The two roles of an HTTP/1.1 connection.
//!
//! Decoders, encoders and connections are each written once and take the
//! role as a parameter: [`Client`] sends requests and receives responses,
//! [`Server`] receives requests and sends responses.
//!
//! | | [`Client`] | [`Server`] |
//! |---|---|---|
//! | [`Decoder<R>`](crate::Decoder) decodes | responses: [`ResponseDecoder`](crate::ResponseDecoder) | requests: [`RequestDecoder`](crate::RequestDecoder) |
//! | [`Encoder<R>`](crate::encode::Encoder) encodes | requests: [`RequestEncoder`](crate::RequestEncoder) | responses: [`ResponseEncoder`](crate::ResponseEncoder) |
//! | [`Connection<R>`](crate::conn::Connection) | [`ClientConnection`](crate::ClientConnection) | [`ServerConnection`](crate::ServerConnection) |

/// The client role: it sends requests and receives responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {}

/// The server role: it receives requests and sends responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {}

/// A role, [`Client`] or [`Server`]: what a decoder, an encoder and a
/// connection of that role need to know besides what both share.
///
/// Sealed: the two roles are the only ones.
pub trait Role: crate::encode::role::sealed::Role + crate::decode::role::Receive {}

impl Role for Client {}
impl Role for Server {}
