//! The connection skeleton both roles share: a decoder for what the peer
//! sends, an encoder for what the local side sends, the state machine
//! between them, and the loop that turns decoded events into machine
//! events. A role adds its own rules through the connection's role trait,
//! [`ConnRole`], implemented in `server.rs` and `client.rs`.

use bytes::BytesMut;

use super::machine::{Facts, Input, Machine, State};
use crate::config::Config;
use crate::decode::{DecodeRole, Decoder, Event, Exchange, Progress};
use crate::encode::{EncodeRole, Encoder};
use crate::error::{Error, ErrorKind};
use crate::framing::BodyKind;
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::role::{Party, Server};
use crate::segments::Segments;
use crate::wire::WireTrailers;

/// What the connection of a role, [`Client`](crate::role::Client) or
/// [`Server`](crate::role::Server), keeps and decides besides the
/// skeleton's: implemented in `server.rs` and `client.rs`. It requires the
/// decoder's and the encoder's role traits, so that generic code names one
/// bound.
pub trait ConnRole: DecodeRole + EncodeRole {
    /// What a connection of this role keeps besides the shared skeleton.
    type ConnState: std::fmt::Debug;
    /// The party whose messages this role receives.
    const PEER: Party;
    /// The party whose messages this role sends.
    const LOCAL: Party = Self::PEER.other();

    /// What the connection's settings give the role: the leniency of its
    /// decoder, and its own state, fresh.
    fn configured(config: &Config) -> (Self::Leniency, Self::ConnState);

    /// Requests sent or received whose final response has not begun: for
    /// a client, those its response decoder awaits answers to; for a
    /// server, the one whose response is due, if any.
    fn unanswered(conn: &Connection<Self>) -> usize;

    /// Checks before decoding; `Ok(false)`: nothing to decode now.
    ///
    /// # Errors
    ///
    /// What the peer sent cannot be decoded now (a response nobody asked for).
    fn ready(conn: &mut Connection<Self>, buf: &BytesMut) -> Result<bool, Error>;

    /// Looks at a head just built (`body`: its framing, `None` for an
    /// interim response) and moves the machine.
    ///
    /// # Errors
    ///
    /// The head breaks the exchange (a switch nobody offered).
    fn on_head(
        conn: &mut Connection<Self>,
        head: &Self::Recv,
        body: Option<BodyKind>,
    ) -> Result<(), Error>;

    /// The connection as a server's, for the calls only a server has
    /// (the drain of a request body left unread, its bookkeeping after the
    /// machine moved, the error response, the close after the exchange,
    /// the `Date` of its responses); `None` for a client's.
    fn as_server(_conn: &mut Connection<Self>) -> Option<&mut Connection<Server>> {
        None
    }
}

/// An HTTP/1.1 connection of role `R`: [`ServerConnection`](crate::ServerConnection)
/// or [`ClientConnection`](crate::ClientConnection).
#[derive(Debug)]
pub struct Connection<R: ConnRole> {
    pub(crate) decoder: Decoder<R>,
    pub(crate) encoder: Encoder<R>,
    pub(crate) machine: Machine,
    pub(crate) role: R::ConnState,
    /// The peer's message being received has a body whose end is still
    /// to come (a message without one ends with its head).
    pub(crate) body_open: bool,
}

impl<R: ConnRole> Connection<R> {
    /// A connection with the given settings.
    pub fn new(config: Config) -> Self {
        let (leniency, role) = R::configured(&config);
        let mut decoder = Decoder::with_leniency(config.limits.clone(), leniency);
        decoder.set_chunk_extensions(config.chunk_extensions);
        decoder.set_wire_view(config.wire_view);
        Connection {
            decoder,
            encoder: Encoder::new(config.encoder.clone()),
            machine: Machine::default(),
            role,
            body_open: false,
        }
    }

    /// Decodes the next event of what the peer sends from `buf`, splitting
    /// off the bytes it uses. `Ok(None)`: read more bytes, or nothing is
    /// due from the peer now (a server answers a request before it reads
    /// the next).
    ///
    /// # Errors
    ///
    /// The peer's protocol [`Error`]. It is returned again on every call;
    /// the connection must close.
    // Inlined into its callers, the body events made where the caller
    // takes them; a head's event is made out of line.
    #[inline(always)]
    pub fn poll_event(&mut self, buf: &mut BytesMut) -> Result<Option<Event<R::Recv>>, Error> {
        match self.poll(buf)? {
            Progress::Head(bytes, body) => self.head_event(bytes, body),
            progress => progress.event(),
        }
    }

    /// [`poll_event`](Self::poll_event)'s event of a head (`body`: its
    /// framing, `None` for an interim response).
    #[inline(never)]
    fn head_event(
        &mut self,
        bytes: bytes::Bytes,
        body: Option<BodyKind>,
    ) -> Result<Option<Event<R::Recv>>, Error> {
        let mut head = R::Recv::default();
        self.take_head(bytes, body, &mut head, false)?;
        Ok(Some(R::head_event(head, body)))
    }

    /// [`poll_event`](Self::poll_event) without building a head: a head
    /// comes as its bytes ([`Progress::Head`]),
    /// and the caller builds it where it hands it out with
    /// [`take_head`](Self::take_head), which must come next.
    /// `Progress::NeedMore` stands for `Ok(None)`. Inlined into each of
    /// its few callers (a session's next head, its body reading).
    #[inline(always)]
    pub(crate) fn poll(&mut self, buf: &mut BytesMut) -> Result<Progress, Error> {
        loop {
            if buf.is_empty() && !self.peer_closed() && self.decoder.is_idle() {
                // Between messages with nothing read (a failed decoder is
                // not idle): the decoder would find nothing, the role has
                // nothing to check, and the machine was followed when it
                // last moved. A server's session asks here twice per
                // keep-alive exchange (before writing, before reading).
                return Ok(Progress::NeedMore);
            }
            if let Some(err) = self.decoder.failure() {
                return Err(err.clone());
            }
            if !R::ready(self, buf).map_err(|err| self.fail_at(err, 0))? {
                return Ok(Progress::NeedMore);
            }
            let before = buf.len();
            let progress = match self.decoder.poll(buf) {
                Ok(Progress::NeedMore) => {
                    self.need_more(buf)?;
                    return Ok(Progress::NeedMore);
                }
                Ok(progress @ Progress::Head(..)) => return Ok(progress),
                Ok(progress) => progress,
                Err(err) => return Err(self.fail(err)),
            };
            let end = matches!(progress, Progress::End(_));
            // A server drains what a complete response left unread.
            let consumed = before - buf.len();
            let hand_out = R::as_server(self).is_none_or(|server| !server.drains(consumed, end));
            if end && std::mem::take(&mut self.body_open) {
                self.on(R::PEER, Input::EndOfMessage);
            }
            self.follow_machine();
            if hand_out {
                return Ok(progress);
            }
        }
    }

    /// Builds the head [`poll`](Self::poll) just returned the bytes of
    /// into `head`, a new one (`body`: its framing, `None` for an interim
    /// response), and moves the connection for it. The caller holds the
    /// head where it hands it out, so that it is not moved up the layers.
    /// `end`: the message has no body and ends here, with its head, as its
    /// `End` would end it, for a caller that hands out no `End` (a
    /// session).
    ///
    /// # Errors
    ///
    /// As [`poll_event`](Self::poll_event).
    #[inline(always)]
    pub(crate) fn take_head(
        &mut self,
        bytes: bytes::Bytes,
        body: Option<BodyKind>,
        head: &mut R::Recv,
        end: bool,
    ) -> Result<(), Error> {
        let len = bytes.len();
        if let Err(err) = self.decoder.build(bytes, head) {
            return Err(self.fail(err));
        }
        // Its errors are placed at its first byte.
        if let Err(err) = R::on_head(self, head, body) {
            return Err(self.fail_at(err, len));
        }
        if end {
            // The machine moved for the whole message with its head.
            self.decoder.end_bodiless();
        }
        self.follow_machine();
        Ok(())
    }

    /// Tells the connection that the peer closed its side: the bytes in the
    /// buffer are all there will be. Keep calling
    /// [`poll_event`](Self::poll_event) until it returns `Ok(None)`, or the
    /// error the close makes of a message it cut short or, on a client, of
    /// an answer due of which nothing came
    /// ([`UnexpectedEof`](crate::ErrorKind::UnexpectedEof)).
    pub fn recv_eof(&mut self) {
        self.decoder.recv_eof();
    }

    /// `true` once [`recv_eof`](Self::recv_eof) said the peer closed its
    /// side.
    #[inline]
    pub(crate) fn peer_closed(&self) -> bool {
        self.decoder.peer_closed()
    }

    /// The queued output: drain it with a vectored write, then `advance`.
    pub fn output(&mut self) -> &mut Segments {
        self.encoder.output()
    }

    /// The verdict on the connection so far: reusable, or the first reason
    /// to close (the messages' own, a local decision, an answer that cut a
    /// request short, a
    /// protocol error, which overrides any other). Final once the exchange
    /// is over.
    pub fn keep_alive(&self) -> KeepAlive {
        if self.decoder.failure().is_some() {
            return KeepAlive::Close(CloseReason::ProtocolError);
        }
        self.machine.verdict(self.facts())
    }

    /// `true` when the machine ended the message the local side is sending
    /// before its end, whose rest is then dropped without an error: a
    /// client's request refused while it was being sent, or one whose
    /// connection closes after the server's complete answer (a 2xx saying
    /// `Connection: close`, a final answer before `100 Continue`, a
    /// request that said `close`): the server reads no more of it, and the
    /// client closes.
    pub(crate) fn withdrawn(&self) -> bool {
        R::LOCAL == Party::Client
            && matches!(self.machine.client(), State::MustClose | State::Closed)
            && self.encoder.body_kind().is_some()
    }

    /// Requests sent or received whose final response has not ended (one
    /// without a body ends with its head).
    pub fn requests_in_flight(&self) -> usize {
        R::unanswered(self) + usize::from(self.machine.server() == State::Body)
    }

    /// What the messages say, read where it is decided: the verdicts of
    /// the decoder's and the encoder's last messages, and whether requests
    /// wait behind the one being answered (only a client pipelines).
    #[inline]
    pub(crate) fn facts(&self) -> Facts {
        let (peer, local) = (self.decoder.keep_alive(), self.encoder.keep_alive());
        let (requests, responses) = match R::PEER {
            Party::Client => (peer, local),
            Party::Server => (local, peer),
        };
        Facts {
            requests,
            responses,
            behind: R::PEER == Party::Server && R::unanswered(self) > 0,
        }
    }

    /// Moves the machine on an event of `party`'s messages.
    #[inline]
    pub(crate) fn on(&mut self, party: Party, input: Input) {
        let facts = self.facts();
        self.machine.on(party, input, facts);
    }

    /// The connection decides to close, for `reason` unless there was one.
    pub(crate) fn close_for(&mut self, reason: CloseReason) {
        let facts = self.facts();
        self.machine.close(reason, facts);
    }

    /// The state of what the peer sends.
    pub fn recv_state(&self) -> State {
        self.machine.state(R::PEER)
    }

    /// The state of what the local side sends.
    pub fn send_state(&self) -> State {
        self.machine.state(R::LOCAL)
    }

    /// `true` when the connection is over for HTTP and must be closed
    /// once the output is drained: the verdict was to close and both
    /// directions are through, the peer closed, or an error occurred.
    /// Never after a protocol switch (see [`is_switched`](Self::is_switched)).
    pub fn is_closed(&self) -> bool {
        let (c, s) = (self.machine.client(), self.machine.server());
        let over = |s: State| matches!(s, State::MustClose | State::Closed | State::Error);
        c == State::Error || s == State::Error || (over(c) && over(s))
    }

    /// `true` once a 101 or a 2xx answer to CONNECT passed: once the
    /// output is drained, the socket and the bytes left in the read buffer
    /// belong to the new protocol.
    pub fn is_switched(&self) -> bool {
        self.machine.server() == State::Switched
    }

    /// `true` while the client sent `Expect: 100-continue` and waits for
    /// `100 Continue` or a final response before sending the body.
    /// Reading the body sends `100 Continue`, ahead of a response head
    /// queued but not yet written; a complete response first, or a head
    /// already (partly) written, refuses the body.
    pub fn is_waiting_for_continue(&self) -> bool {
        self.machine.expects_continue()
    }

    /// The wire view of the trailer section the peer's message carried
    /// ([`Decoder::wire_trailers`]): from its
    /// [`Event::Trailers`] until the next message's head, with
    /// [`Config::wire_view`] on; `None` otherwise.
    pub fn wire_trailers(&self) -> Option<&WireTrailers> {
        self.decoder.wire_trailers()
    }

    /// `Ok(None)` from the decoder: the peer closed between messages, or
    /// the first bytes of a head arrived (not an empty line's CR alone:
    /// the empty lines before a request are no part of it).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnexpectedEof`] when the peer closed with a message of
    /// its due and none of it came: a response to a request in flight (of
    /// a request begun, the decoder itself reports what came).
    fn need_more(&mut self, buf: &BytesMut) -> Result<(), Error> {
        let peer = self.machine.state(R::PEER);
        if self.decoder.is_closed() && self.peer_closed() {
            match peer {
                State::Idle => self.on(R::PEER, Input::ConnectionClosed),
                State::Head => return Err(self.fail_at(ErrorKind::UnexpectedEof.into(), 0)),
                _ => {}
            }
        } else if R::PEER == Party::Client
            && peer == State::Idle
            && self.machine.server() == State::Idle
            && self.decoder.holds_head_bytes(buf)
        {
            self.on(Party::Client, Input::HeadStarted);
        }
        self.follow_machine();
        Ok(())
    }

    /// A protocol error the connection found in what the peer sent (a
    /// response nobody asked for, a switch nobody offered): placed `back`
    /// bytes before the end of what was decoded, then as [`Self::fail`].
    #[cold]
    fn fail_at(&mut self, mut err: Error, back: usize) -> Error {
        err.or_at(self.decoder.consumed() - back as u64);
        self.fail(err)
    }

    /// A protocol error by the peer: kept by the decoder (its one home),
    /// returned again on every call, and the connection closes.
    fn fail(&mut self, err: Error) -> Error {
        self.close_for(CloseReason::ProtocolError);
        self.on(R::PEER, Input::Error);
        self.decoder.fail_with(err.clone());
        self.follow_machine();
        err
    }

    /// After the machine moved (or a call that may have moved it): the
    /// role's bookkeeping, then the decoder follows the machine: once the
    /// peer's messages are over, it is stopped and nothing more is parsed.
    #[inline]
    pub(crate) fn follow_machine(&mut self) {
        if let Some(server) = R::as_server(self) {
            server.after_transition();
        }
        let over =
            self.machine.state(R::PEER).is_final() || self.machine.server() == State::Switched;
        // The end of a message without a body is still handed out: it
        // stops the decoder itself when its verdict says so.
        if over && (self.body_open || self.decoder.is_idle()) {
            self.decoder.stop();
        }
    }

    /// Notes a request, sent (a client's) or received (a server's), and
    /// whether a body follows its head. The switch it offers comes before
    /// its head: a request that closes the connection (HTTP/1.0,
    /// `Connection: close`) may still be answered by a switch, which must
    /// find it waiting, not already done with the connection.
    #[inline]
    pub(crate) fn note_request(&mut self, exchange: Exchange, body: bool) {
        if exchange.offers_switch() {
            self.machine.propose_switch();
        }
        self.on(Party::Client, Input::head(body));
        if exchange.expect {
            self.machine.expect_continue();
        }
    }

    /// Hands the field and extension maps of the head just queued (a
    /// forwarded wire view's, say) straight to the decoder, which empties
    /// them, so that the next head it decodes allocates none. Inlined, so
    /// that the field map is moved once, from the head into the decoder.
    #[inline(always)]
    pub(crate) fn pass_spare_maps(
        &mut self,
        fields: http::HeaderMap,
        extensions: http::Extensions,
    ) {
        self.decoder.give_spare_fields(fields);
        // One that never held an extension has nothing allocated to reuse.
        if !extensions.is_empty() {
            self.decoder.give_spare_extensions(extensions);
        }
    }
}
