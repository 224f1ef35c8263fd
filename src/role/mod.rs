//! The two roles of an HTTP/1.1 connection, and the one trait that says
//! everything a role does differently.
//!
//! Decoders, encoders, connections and sessions are each written once and
//! take the role as a parameter: `Client` sends requests and receives
//! responses, `Server` receives requests and sends responses. A role's own
//! code, for the encoder and the connection alike, is in one file:
//! `server.rs` and `client.rs` here.
//!
//! | | `Client` | `Server` |
//! |---|---|---|
//! | decodes | responses: [`ResponseDecoder`](crate::ResponseDecoder) | requests: [`RequestDecoder`](crate::RequestDecoder) |
//! | encodes | requests: [`RequestEncoder`](crate::RequestEncoder) | responses: [`ResponseEncoder`](crate::ResponseEncoder) |
//! | connection | [`ClientConnection`] | [`ServerConnection`] |
//!
//! The trait and the role types are public only so that the generic types
//! can name them in their bounds; this module is private, so they cannot be
//! named or implemented outside the crate.

use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use http::header::{EXPECT, UPGRADE};

use crate::Config;
use crate::conn::Party;
use crate::decode::base::{DecoderBase, Event, MessageHead};
use crate::encode::body::{BodyEncoder, check_full};
use crate::encode::head::Ordered;
use crate::encode::plan::{EncoderConfig, HeadMaps, Plan};
use crate::error::{Error, UsageError};
use crate::leniency::Rules;
use crate::segments::Segments;

mod client;
mod server;

pub use client::ClientConnection;
pub use server::ServerConnection;

/// The client role: it sends requests and receives responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {}

/// The server role: it receives requests and sends responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {}

/// What a decoded event means to the connection's loop.
pub enum EventAction {
    /// Hand the event to the caller.
    Return,
    /// Decode on: the event was consumed (a body being drained).
    Skip,
    /// Stop here with `Ok(None)`.
    Stop,
}

/// Everything a role, [`Client`] or [`Server`], does differently: how it
/// reads the heads it receives (the decoder's part), how it writes the
/// heads it sends (the encoder's part), and what its connection keeps and
/// decides.
pub trait Role: Sized {
    // The decoder's part.

    /// The head of the messages the role receives.
    type Recv: MessageHead;
    /// The leniency switches of those messages.
    type Leniency: Copy + Default + std::fmt::Debug;
    /// What the decoder keeps besides the shared base: nothing for
    /// requests; for responses, the requests they answer.
    type Pending: Default + std::fmt::Debug;

    /// The head reader's rules for these switches.
    fn rules(leniency: Self::Leniency) -> Rules;

    /// Reads a complete head the decoder found: always `Some` event, in
    /// the type the decoder returns, so that the head is built where it
    /// is returned rather than moved into it (a head is over 200 bytes).
    ///
    /// # Errors
    ///
    /// The head is invalid, or not one the role may receive now.
    fn head(
        base: &mut DecoderBase,
        pending: &mut Self::Pending,
        head: Bytes,
    ) -> Result<Option<Event<Self::Recv>>, Error>;

    // The encoder's part.

    /// The head this role sends: `request::Parts` or `response::Parts`.
    type Head: HeadMaps;
    /// What the encoder must know besides the head: nothing for a
    /// request; for a response, the request it answers.
    type Context;
    /// Role-specific start-line decisions.
    type Line;

    /// Decides how the head is written and its body framed; `full` is the
    /// body length when the whole body is known, `date` the `Date` value
    /// the encoder has (a response without one of its own gets it).
    ///
    /// # Errors
    ///
    /// The head cannot be sent as it is.
    fn plan(
        head: &Self::Head,
        ctx: &Self::Context,
        config: &EncoderConfig,
        full: Option<u64>,
        date: Option<&[u8; crate::date::LINE]>,
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

    // The connection's part.

    /// What a connection of this role keeps besides the shared skeleton.
    type ConnState: std::fmt::Debug;
    /// The connection the hooks below act on: always `Connection<Self>`,
    /// named through this type so that the trait the connection is
    /// generic over does not name the connection (the connection's code
    /// asks `R: Role<Conn = Connection<R>>`).
    type Conn;
    /// The party whose messages this role receives.
    const PEER: Party;
    /// The party whose messages this role sends.
    const LOCAL: Party = match Self::PEER {
        Party::Client => Party::Server,
        Party::Server => Party::Client,
    };

    /// What the connection's settings give the role: the leniency of its
    /// decoder, and its own state, fresh.
    fn configured(config: &Config) -> (Self::Leniency, Self::ConnState);

    /// Checks before decoding; `Ok(false)`: nothing to decode now.
    ///
    /// # Errors
    ///
    /// What the peer sent cannot be decoded now (a response nobody asked for).
    fn ready(conn: &mut Self::Conn, buf: &BytesMut) -> Result<bool, Error>;

    /// Looks at a decoded event (`consumed`: the bytes it took) and moves
    /// the machine. The end of the peer's message is the connection's to
    /// note, after this.
    ///
    /// # Errors
    ///
    /// The event breaks the exchange (a switch nobody offered).
    fn on_event(
        conn: &mut Self::Conn,
        event: &Event<Self::Recv>,
        consumed: usize,
    ) -> Result<EventAction, Error>;

    /// `true` when the local side withdrew the rest of its message: it is
    /// dropped without an error.
    fn withdrawn(_conn: &Self::Conn) -> bool {
        false
    }

    /// After a transition of the machine (the local side's message ended,
    /// say), or a call that may have made one: the
    /// role's own bookkeeping.
    fn after_transition(_conn: &mut Self::Conn) {}
}

/// `true` when `headers` offer a protocol switch: `Upgrade` with
/// `Connection: upgrade`.
fn offers_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(UPGRADE) && crate::framing::connection_has(headers, b"upgrade")
}

/// `true` when `headers` ask for `100 Continue` before the body is sent.
fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// The framer of a body of `declared` bytes, checked against the whole
/// body when it is given (`full`).
fn length(declared: u64, full: Option<u64>) -> Result<BodyEncoder, UsageError> {
    if let Some(len) = full {
        check_full(declared, len)?;
    }
    Ok(BodyEncoder::Length { declared, sent: 0 })
}
