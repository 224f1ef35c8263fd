//! Decoders: bytes from the peer in, events out ([`Decoder`] has the
//! flow).

pub(crate) mod base;
mod body;
pub(crate) mod head;

pub(crate) use base::Exchange;
use base::{DecodeStage, DecoderBase};
pub use base::{Event, MessageHead};
use body::BodyDecoder;
pub(crate) use body::{Progress, Trailers};

use bytes::BytesMut;
use http::Method;
use http::header::HeaderMap;

use crate::error::Error;
use crate::framing::{BodyKind, FramingFields, RequestKind};
use crate::keep_alive::KeepAlive;
use crate::leniency::Rules;
use crate::limits::Limits;
use crate::role::{Client, Server};
use crate::wire::{WireHead, WireTrailers};

/// What the decoder of a role, [`Client`] or [`Server`], does differently:
/// which heads it reads and how (implemented in `head.rs`, beside the
/// request and response head readers).
pub trait DecodeRole: Sized {
    /// The head of the messages the role receives.
    type Recv: MessageHead + Default;
    /// The leniency tolerances of those messages, which make the head
    /// reader's rules.
    type Leniency: Copy + Default + std::fmt::Debug + Into<Rules>;
    /// What the decoder keeps besides the shared base: nothing for
    /// requests; for responses, the requests they answer.
    type Pending: Default + std::fmt::Debug;

    /// Checks a complete head the decoder found, decides its framing and
    /// starts its body: [`Progress::Head`]. Its `http` types are built by
    /// [`build`](Self::build), where it is handed out.
    ///
    /// # Errors
    ///
    /// The head is invalid, or not one the role may receive now.
    fn check(
        base: &mut DecoderBase,
        pending: &mut Self::Pending,
        head: bytes::Bytes,
    ) -> Result<Progress, Error>;

    /// Builds the `http` head of the head just checked, from its bytes,
    /// into `head`, a new one (so that it is built where the caller holds
    /// it, not moved there).
    ///
    /// # Errors
    ///
    /// A part of it that the `http` types do not take.
    fn build(
        base: &mut DecoderBase,
        bytes: bytes::Bytes,
        head: &mut Self::Recv,
    ) -> Result<(), Error>;

    /// The event of a head built (`body`: its framing, `None` for an
    /// interim response). Requests have no interim heads: this default
    /// is theirs.
    fn head_event(head: Self::Recv, body: Option<BodyKind>) -> Event<Self::Recv> {
        let body = body.unwrap_or(BodyKind::Empty);
        Event::Head { head, body }
    }
}

/// Decodes the messages of one role's peer: requests for the `Server`
/// role ([`RequestDecoder`]), responses for the `Client` role
/// ([`ResponseDecoder`]). Everything but the start line, the framing
/// decision and (for responses) the requests in flight is shared.
///
/// The caller owns the read buffer (a [`BytesMut`]) and hands it to
/// [`RequestDecoder::decode`] or [`ResponseDecoder::decode`], which split
/// off what they consume. Each call returns at most one [`Event`]; `Ok(None)`
/// means "read more bytes into the buffer, then call again". When the peer
/// closes its side, call `decode_eof` instead until it returns `Ok(None)`.
///
/// A message is `Head`, zero or more `Data`, at most one `Trailers`, then
/// `End`. The decoder never asks for more input between the last body byte
/// and `End`: once the last `Data` has been returned, the next call returns
/// `End` at once, and [`RequestDecoder::is_body_complete`] is already `true`.
#[derive(Debug)]
pub struct Decoder<R: DecodeRole> {
    base: DecoderBase,
    pending: R::Pending,
    /// The switches as given: the base holds the rules made of them.
    leniency: R::Leniency,
}

/// Decodes requests: the server side of a connection.
///
/// A CONNECT request is the last request decoded: the bytes after its head
/// are left in the buffer, since they belong to the tunnel if a 2xx answers
/// it, and the connection closes otherwise. A CONNECT request with
/// `Transfer-Encoding` or a non-zero `Content-Length` is refused
/// ([`ErrorKind::ConnectWithContent`](crate::ErrorKind::ConnectWithContent)).
///
/// ```
/// use bytes::BytesMut;
/// use h1proto::{Event, KeepAlive, Limits, RequestDecoder};
///
/// let mut dec = RequestDecoder::new(Limits::default());
/// let mut buf = BytesMut::from(&b"POST /echo HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello"[..]);
///
/// let Some(Event::Head { head, .. }) = dec.decode(&mut buf)? else { panic!() };
/// assert_eq!(head.uri().path(), "/echo");
/// assert!(matches!(dec.decode(&mut buf)?, Some(Event::Data(d)) if d == "hello"));
/// assert!(dec.is_body_complete()); // known with the last byte, no extra read
/// assert!(matches!(dec.decode(&mut buf)?, Some(Event::End(KeepAlive::Reusable))));
/// assert!(dec.decode(&mut buf)?.is_none()); // need more input
/// # Ok::<(), h1proto::Error>(())
/// ```
pub type RequestDecoder = Decoder<Server>;

/// Decodes responses: the client side of a connection.
///
/// A response's framing depends on the request it answers (a response to
/// HEAD has no body whatever its fields say; a 2xx to CONNECT opens a
/// tunnel), so tell the decoder the method of each request in flight, in
/// order, with [`expect_response_to`](Decoder::expect_response_to).
/// Without one, a response is read as the answer to a GET.
///
/// ```
/// use bytes::BytesMut;
/// use h1proto::{Event, Limits, ResponseDecoder, framing::BodyKind};
/// use http::Method;
///
/// let mut dec = ResponseDecoder::new(Limits::default());
/// dec.expect_response_to(&Method::HEAD);
/// dec.expect_response_to(&Method::GET);
/// let mut buf = BytesMut::from(
///     &b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"[..],
/// );
/// let Some(Event::Head { body, .. }) = dec.decode(&mut buf)? else { panic!() };
/// assert_eq!(body, BodyKind::Empty); // the answer to HEAD has no body
/// assert!(matches!(dec.decode(&mut buf)?, Some(Event::End(_))));
/// let Some(Event::Head { body, .. }) = dec.decode(&mut buf)? else { panic!() };
/// assert_eq!(body, BodyKind::Length(2));
/// # Ok::<(), h1proto::Error>(())
/// ```
pub type ResponseDecoder = Decoder<Client>;

impl<R: DecodeRole> Decoder<R> {
    /// A decoder enforcing `limits`, with the role's default leniency:
    /// strict for requests; for responses, [`ResponseLeniency::default`](crate::leniency::ResponseLeniency::default)
    /// (only `no_space_after_status` on).
    pub fn new(limits: Limits) -> Self {
        Decoder::with_leniency(limits, R::Leniency::default())
    }

    /// A decoder enforcing `limits`, with the leniency tolerances of
    /// `leniency` on: a [`RequestLeniency`](crate::leniency::RequestLeniency) for requests, a
    /// [`ResponseLeniency`](crate::leniency::ResponseLeniency) for responses.
    pub fn with_leniency(limits: Limits, leniency: R::Leniency) -> Self {
        Decoder {
            base: DecoderBase {
                limits,
                rules: leniency.into(),
                ..DecoderBase::default()
            },
            pending: R::Pending::default(),
            leniency,
        }
    }

    /// The leniency tolerances this decoder applies.
    pub fn leniency(&self) -> R::Leniency {
        self.leniency
    }

    /// Hands out the chunk extensions of chunked bodies as
    /// [`Event::ChunkExtensions`] when `on`, from the next chunked body on.
    /// Off by default: extensions are checked against their grammar and
    /// limits, then dropped, at no cost.
    pub fn set_chunk_extensions(&mut self, on: bool) {
        self.base.chunk_extensions = on;
    }

    /// Whether chunk extensions are handed out
    /// ([`set_chunk_extensions`](Self::set_chunk_extensions)).
    pub fn chunk_extensions(&self) -> bool {
        self.base.chunk_extensions
    }

    /// Turns the wire view on or off for the heads decoded from now on.
    /// With it on, every decoded head (interim responses included) carries
    /// a [`WireHead`](crate::wire::WireHead) extension: its field lines as received, in order and
    /// spelling, and its request-target or reason phrase as received,
    /// read from the head's bytes on demand. Encoders write a message that
    /// carries it in that order and spelling. Default: off, and then
    /// nothing is attached and nothing is spent on it.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use h1proto::{Event, Limits, RequestDecoder, wire::WireHead};
    ///
    /// let mut dec = RequestDecoder::new(Limits::default());
    /// dec.set_wire_view(true);
    /// let mut buf = BytesMut::from(&b"GET /%7Euser HTTP/1.1\r\nHOST: a\r\n\r\n"[..]);
    /// let Some(Event::Head { head, .. }) = dec.decode(&mut buf)? else { panic!() };
    /// let wire = head.extensions().get::<WireHead>().unwrap();
    /// assert_eq!(wire.target(), Some(&b"/%7Euser"[..]));
    /// assert_eq!(wire.fields().next(), Some((&b"HOST"[..], &b"a"[..])));
    /// # Ok::<(), h1proto::Error>(())
    /// ```
    pub fn set_wire_view(&mut self, on: bool) {
        self.base.wire = on;
        if let Some(spare) = self.base.spare_extensions.as_mut().filter(|_| !on) {
            // No view parked where no view is made.
            spare.clear();
        }
    }

    /// `true` when decoded heads carry a [`WireHead`](crate::wire::WireHead)
    /// ([`set_wire_view`](Self::set_wire_view)).
    pub fn wire_view(&self) -> bool {
        self.base.wire
    }

    /// Decodes heads to their wire view alone when `on`, from the next head
    /// on: each head comes as [`Event::Wire`], a [`WireHead`](crate::wire::WireHead) and the
    /// framing of the body that follows, and no `http` type is built (no
    /// field map, no `Uri`, no extension). For a proxy that forwards heads
    /// as they came, or a tool that shows them: it costs a little more than
    /// half of a decode into `http` types (`docs/benchmarks.md`). Every
    /// rule, limit, leniency tolerance, error and framing decision is the
    /// same as without it: the head reader reads the head as always, and
    /// only the build of the `http` types is left out. Default: off.
    /// Connections and sessions always build `http` types.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use h1proto::{Event, Limits, RequestDecoder, framing::BodyKind};
    ///
    /// let mut dec = RequestDecoder::new(Limits::default());
    /// dec.set_wire_only(true);
    /// let mut buf = BytesMut::from(&b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"[..]);
    /// let Some(Event::Wire { head, body }) = dec.decode(&mut buf)? else { panic!() };
    /// assert_eq!(head.method(), Some(&b"POST"[..]));
    /// assert_eq!(head.target(), Some(&b"/a"[..]));
    /// assert_eq!(head.fields().next(), Some((&b"Host"[..], &b"x"[..])));
    /// assert_eq!(body, BodyKind::Length(2));
    /// assert!(matches!(dec.decode(&mut buf)?, Some(Event::Data(d)) if d == "hi"));
    /// # Ok::<(), h1proto::Error>(())
    /// ```
    pub fn set_wire_only(&mut self, on: bool) {
        self.base.wire_only = on;
    }

    /// `true` when heads are decoded to their wire view alone
    /// ([`set_wire_only`](Self::set_wire_only)).
    pub fn wire_only(&self) -> bool {
        self.base.wire_only
    }

    /// The wire view of the trailer section last handed out as
    /// [`Event::Trailers`]: its field lines as received, in order and
    /// spelling. Kept from that event until the head of the next message
    /// is decoded; `None` before it, for a message without trailers, and
    /// whenever the wire view ([`set_wire_view`](Self::set_wire_view)) is
    /// off (nothing is kept then). An encoder writes trailers in its
    /// order and spelling with
    /// [`Encoder::finish_in_order`](crate::Encoder::finish_in_order).
    pub fn wire_trailers(&self) -> Option<&WireTrailers> {
        self.base.wire_trailers.as_deref()
    }

    /// How many bytes of the stream the decoder has consumed (split off or
    /// skipped in the buffers it was given) since it was made: the
    /// coordinates of [`Error::offset`].
    pub fn consumed(&self) -> u64 {
        self.base.consumed
    }

    /// Decodes the next event from `buf`, splitting off the bytes it uses.
    ///
    /// `Ok(None)`: more input is needed (or, once [`is_closed`](Self::is_closed),
    /// no further message will be decoded and the bytes are left in `buf`).
    ///
    /// # Errors
    ///
    /// The peer's protocol [`Error`]: malformed, ambiguous or oversized
    /// input, with the status a server should answer with. It is returned
    /// again on every later call.
    #[inline]
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<R::Recv>>, Error> {
        self.poll(buf).and_then(|progress| self.event(progress))
    }

    /// Like [`decode`](Self::decode), for when the peer has closed its
    /// side: the bytes in `buf` are all there will be. Ends a
    /// close-delimited body, is clean between messages (`Ok(None)`), and is
    /// an [`UnexpectedEof`](crate::ErrorKind::UnexpectedEof) error inside any
    /// other message. Call it until it returns `Ok(None)`.
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode).
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Event<R::Recv>>, Error> {
        self.recv_eof();
        self.decode(buf)
    }

    /// The event of `progress`, its head built (or its wire view, in
    /// wire-only mode).
    #[inline(always)]
    fn event(&mut self, progress: Progress) -> Result<Option<Event<R::Recv>>, Error> {
        match progress {
            Progress::Head(bytes, body) if self.base.wire_only => Ok(Some(
                self.base.wire_event(bytes, body.unwrap_or(BodyKind::Empty)),
            )),
            Progress::Head(bytes, body) => {
                let mut head = R::Recv::default();
                self.build(bytes, &mut head)?;
                Ok(Some(R::head_event(head, body)))
            }
            progress => progress.event(),
        }
    }

    /// Decodes the next step from `buf` (all there will be once the peer
    /// closed its side, [`recv_eof`](Self::recv_eof)): a head comes
    /// checked, with its body started, and is built with
    /// [`build`](Self::build) where it is handed out.
    #[inline(always)]
    pub(crate) fn poll(&mut self, buf: &mut BytesMut) -> Result<Progress, Error> {
        let before = buf.len();
        let progress = self.base.decode_once(buf);
        self.base.consumed += (before - buf.len()) as u64;
        let len = match progress {
            Ok(Progress::Found(len)) => len,
            Ok(progress) => return Ok(progress),
            Err(kind) => return Err(self.base.fail(kind)),
        };
        // Where the head starts in the stream (empty lines before it were
        // skipped in this call): its errors are placed from there.
        self.base.head_start = self.base.consumed;
        let head = buf.split_to(len).freeze();
        self.base.consumed += len as u64;
        R::check(&mut self.base, &mut self.pending, head).map_err(|e| self.base.failed(e))
    }

    /// Builds the `http` head of the head [`poll`](Self::poll) just
    /// returned the bytes of into `head`, a new one: built once, where it
    /// is handed out.
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode); the decoder fails with it.
    #[inline(always)]
    pub(crate) fn build(&mut self, bytes: bytes::Bytes, head: &mut R::Recv) -> Result<(), Error> {
        R::build(&mut self.base, bytes, head).map_err(|e| self.base.failed(e))
    }

    /// The peer closed its side: what the buffer holds is all there will
    /// be, for every call from now on ([`decode_eof`](Self::decode_eof)'s).
    pub(crate) fn recv_eof(&mut self) {
        self.base.eof = true;
    }

    /// `true` once the peer closed its side.
    #[inline]
    pub(crate) fn peer_closed(&self) -> bool {
        self.base.eof
    }

    /// Ends the message whose head [`poll`](Self::poll) just returned
    /// without a body, as the `End` it would return next does: for a
    /// caller that hands out no `End` (a session's next request).
    #[inline(always)]
    pub(crate) fn end_bodiless(&mut self) {
        debug_assert!(matches!(self.base.state, DecodeStage::Ending));
        self.base.end();
    }

    /// The keep-alive verdict of the current message (or of the last one,
    /// between messages). Known once the head is decoded; final once
    /// [`is_body_complete`](Self::is_body_complete) is `true`.
    pub fn keep_alive(&self) -> KeepAlive {
        self.base.verdict
    }

    /// `true` once every body byte of the current message has been
    /// returned: the `End` event is due, with no further input needed.
    pub fn is_body_complete(&self) -> bool {
        match &self.base.state {
            DecodeStage::Body(body) => body.data_complete(),
            DecodeStage::Ending => true,
            _ => false,
        }
    }

    /// `true` between messages: nothing of a next message has been
    /// decoded yet (bytes of it may already sit in the buffer).
    pub fn is_idle(&self) -> bool {
        matches!(self.base.state, DecodeStage::Head) && self.base.reader.in_first_line()
    }

    /// `true` when `buf`, what this decoder left undecoded, holds bytes
    /// of a head: more than the CR of what may still be an empty line,
    /// which a request decoder skips before a request line (RFC 9112
    /// section 2.2) and which belongs to no message. Whether a lone CR
    /// began a head is known only with the byte after it, so a head that
    /// began does not depend on how the input was split.
    #[inline]
    pub(crate) fn holds_head_bytes(&self, buf: &[u8]) -> bool {
        match buf {
            [] => false,
            [b'\r'] => !(self.base.rules.request && self.is_idle()),
            _ => true,
        }
    }

    /// `true` once the decoder will decode no further message: the last
    /// one ended with a verdict to close or was a CONNECT request, the
    /// peer closed between messages, or an error occurred. Not after a
    /// protocol switch: see [`is_switched`](Self::is_switched).
    pub fn is_closed(&self) -> bool {
        matches!(self.base.state, DecodeStage::Closed | DecodeStage::Failed)
    }

    /// `true` after a message that switched the connection to another
    /// protocol (a 101 response, a 2xx response to CONNECT). The bytes
    /// left in the buffer belong to that protocol.
    pub fn is_switched(&self) -> bool {
        matches!(self.base.state, DecodeStage::Switched)
    }

    /// Body bytes still to come of a `Content-Length` body; `None` for
    /// other framings or between messages.
    pub fn remaining_body_len(&self) -> Option<u64> {
        match &self.base.state {
            DecodeStage::Body(BodyDecoder::Length(n)) => Some(*n),
            DecodeStage::Ending => Some(0),
            _ => None,
        }
    }

    /// Gives the decoder a field map no longer needed (the fields of a
    /// message just sent, say): it is emptied, and the next head is
    /// decoded into it instead of a new map, saving the map's two
    /// allocations. A map with room for more than twice
    /// [`Limits::max_fields`] fields is dropped instead of kept, as is one
    /// given while the decoder still keeps one.
    #[inline]
    pub fn give_spare_fields(&mut self, map: HeaderMap) {
        let base = &mut self.base;
        if base.spare.is_none() && map.capacity() <= base.limits.max_fields.saturating_mul(2) {
            // Moved once, into its empty place, then emptied there (an
            // encoder hands its maps back emptied already).
            let map = base.spare.insert(map);
            if !map.is_empty() {
                map.clear();
            }
        }
    }

    /// Gives the decoder an extension map no longer needed (the
    /// extensions of a message just sent or dropped, say): it is emptied,
    /// and the next head that needs extensions (the [`WireHead`] of the
    /// wire view, a [`ReasonPhrase`](crate::ReasonPhrase)) gets it instead of a new one, which
    /// saves two of the three allocations of a message's first extension.
    /// With the wire view on, a map that holds a [`WireHead`] alone (a
    /// forwarded head's) keeps it, its bytes let go, and the next head's
    /// view is written over it: that head allocates nothing for its
    /// extensions.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use h1proto::{Event, Limits, RequestDecoder, wire::WireHead};
    ///
    /// let mut dec = RequestDecoder::new(Limits::default());
    /// dec.set_wire_view(true);
    /// let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
    /// let Some(Event::Head { head, .. }) = dec.decode(&mut buf)? else { panic!() };
    /// let (parts, ()) = head.into_parts();
    /// // ... done with the head: its maps serve the next one.
    /// dec.give_spare_fields(parts.headers);
    /// dec.give_spare_extensions(parts.extensions);
    /// # Ok::<(), h1proto::Error>(())
    /// ```
    pub fn give_spare_extensions(&mut self, mut extensions: http::Extensions) {
        // A wire view the map holds alone is kept, parked (its bytes let
        // go), for the next head's view to be written over.
        let alone = extensions.len() == 1 && self.base.wire;
        match extensions.get_mut::<WireHead>() {
            Some(wire) if alone => wire.park(),
            _ => extensions.clear(),
        }
        self.base.spare_extensions = Some(extensions);
    }

    /// Gives back what only steady traffic needs (the head reader's room
    /// for field lines, the names learnt, the spare field and extension
    /// maps): an idle connection's memory, as a session lets its buffers
    /// go.
    pub(crate) fn release(&mut self) {
        // The names only between messages: the fields of a head or of a
        // trailer section being read name entries of the cache.
        if matches!(self.base.state, DecodeStage::Head) {
            self.base.reader.release(&mut self.base.names);
        }
        self.base.spare = None;
        self.base.spare_extensions = None;
    }

    /// The protocol error the decoder failed with (its own, or one its
    /// connection found): returned again on every call.
    #[inline]
    pub(crate) fn failure(&self) -> Option<&Error> {
        self.base.failure.as_ref()
    }

    /// Fails the decoder with a protocol error its connection found in
    /// what it decoded (a response nobody asked for, a switch nobody
    /// offered): the decoder keeps it as its own.
    pub(crate) fn fail_with(&mut self, error: Error) {
        self.base.failed(error);
    }

    /// The limits this decoder enforces.
    pub fn limits(&self) -> &Limits {
        &self.base.limits
    }

    /// Stops the decoder after the current message: the next message is
    /// not parsed (used when the local side decided to close, or to hand
    /// the connection to another protocol). [`is_closed`](Self::is_closed)
    /// is `true` from then on.
    pub fn stop(&mut self) {
        if !matches!(self.base.state, DecodeStage::Failed | DecodeStage::Switched) {
            self.base.state = DecodeStage::Closed;
        }
    }

    /// What the fields of the last head held (`Host`, framing and
    /// `Connection` lines), as the head reader noted them.
    pub(crate) fn framing_fields(&self) -> &FramingFields {
        &self.base.seen
    }
}

impl Decoder<Client> {
    /// Records that a request with this method was sent: the responses are
    /// matched to these calls in order.
    pub fn expect_response_to(&mut self, method: &Method) {
        self.expect_exchange(Exchange {
            request: RequestKind::of(method),
            ..Exchange::default()
        });
    }

    /// Records a request sent, with what its response needs.
    pub(crate) fn expect_exchange(&mut self, exchange: Exchange) {
        self.pending.queue.push_back(exchange);
    }

    /// The requests recorded whose final response has not begun.
    #[inline]
    pub(crate) fn unanswered(&self) -> usize {
        self.pending.queue.len()
    }

    /// The request the last final response decoded answered.
    pub(crate) fn answered(&self) -> Exchange {
        self.pending.answered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::keep_alive::CloseReason;
    use http::Request;
    use http::header::HOST;

    /// The verdict comes from the `Connection` tokens the parser noted,
    /// and from the joined value when obs-fold continued the field.
    #[test]
    fn the_verdict_reads_connection_as_the_map_holds_it() {
        for (fields, verdict) in [
            (
                "Connection: keep-alive, Close\r\n",
                KeepAlive::Close(CloseReason::PeerClose),
            ),
            (
                "Connection: x\r\nConnection: close\r\n",
                KeepAlive::Close(CloseReason::PeerClose),
            ),
            ("Connection: keep-alive\r\n", KeepAlive::Reusable),
            // Folded: one element `keep-alive close`, which is neither.
            ("Connection: keep-alive\r\n close\r\n", KeepAlive::Reusable),
            (
                "Connection: x,\r\n close\r\n",
                KeepAlive::Close(CloseReason::PeerClose),
            ),
        ] {
            let mut dec = ResponseDecoder::new(Limits::default());
            dec.expect_response_to(&Method::HEAD);
            let head = format!("HTTP/1.1 200 OK\r\n{fields}Content-Length: 0\r\n\r\n");
            let mut buf = BytesMut::from(head.as_bytes());
            assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::Head { .. }))));
            assert_eq!(dec.keep_alive(), verdict, "{fields:?}");
        }
    }

    #[test]
    fn the_target_slash_is_the_uri_slash() {
        assert_eq!(Request::new(()).uri(), &http::Uri::from_static("/"));
        let mut dec = RequestDecoder::new(Limits::default());
        let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
        let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
            panic!("no head")
        };
        assert_eq!(head.uri(), &"/".parse::<http::Uri>().unwrap());
        assert_eq!((head.uri().path(), head.uri().query()), ("/", None));
        let mut dec = RequestDecoder::new(Limits::default());
        let mut buf = BytesMut::from(&b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n"[..]);
        let error = dec.decode(&mut buf).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidTarget);
    }

    #[test]
    fn bytes_of_the_head_are_not_copied() {
        let mut dec = RequestDecoder::new(Limits::default());
        let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"[..]);
        let base = buf.as_ptr() as usize;
        let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
            panic!("no head")
        };
        let value = head.headers()[HOST].as_bytes().as_ptr() as usize;
        assert_eq!(value, base + 22);
    }
}
