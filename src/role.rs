//! The two roles of an HTTP/1.1 connection, as types and as a value.
//!
//! Decoders, encoders and connections are each written once and take the
//! role as a type parameter: [`Client`] sends requests and receives
//! responses, [`Server`] receives requests and sends responses. Each layer
//! that differs by role has its own role trait, implemented for both in
//! that layer's own files: the decoder's (`decode::DecodeRole`), the
//! encoder's (`encode::EncodeRole`) and the connection's
//! (`conn::ConnRole`, which requires the two below it). [`Party`] names a
//! role as a value, for the state machine's tables.
//!
//! | | `Client` | `Server` |
//! |---|---|---|
//! | decodes | responses: [`ResponseDecoder`](crate::ResponseDecoder) | requests: [`RequestDecoder`](crate::RequestDecoder) |
//! | encodes | requests: [`RequestEncoder`](crate::RequestEncoder) | responses: [`ResponseEncoder`](crate::ResponseEncoder) |
//! | connection | [`ClientConnection`](crate::ClientConnection) | [`ServerConnection`](crate::ServerConnection) |
//! | session | [`ClientSession`](crate::ClientSession) | [`ServerSession`](crate::ServerSession) |
//!
//! The role types and traits are public only so that the generic types
//! can name them in their bounds; their modules are private, so they
//! cannot be named or implemented outside the crate.

/// The client role: it sends requests and receives responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {}

/// The server role: it receives requests and sends responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {}

/// A role as a value: whose messages (the state machine keeps a state for
/// each party's). Public only for the connection role's `PEER`; it cannot
/// be named outside the crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Party {
    /// The client: its messages are requests.
    Client,
    /// The server: its messages are responses.
    Server,
}

impl Party {
    /// The other party.
    pub(crate) const fn other(self) -> Party {
        match self {
            Party::Client => Party::Server,
            Party::Server => Party::Client,
        }
    }
}
