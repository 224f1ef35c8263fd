//! Decoders: bytes from the peer in, events out ([`Decoder`] has the
//! flow).

mod body;
pub(crate) mod role;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;

use bytes::{Buf, Bytes, BytesMut};
use http::header::HeaderMap;
use http::{Method, Request, Response, Version};

use crate::chunk_ext::ChunkExtensions;
use crate::error::{Error, ErrorKind};
use crate::framing::Seen;
use crate::framing::{self, BodyKind, Framing, RequestKind, ResponseClass, response_class};
use crate::head::bare;
use crate::head::early::EarlyCheck;
use crate::head::names::NameCache;
use crate::head::parse::{self, Strict};
use crate::head::scan::{LineScanner, Overflow};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::leniency::{Rules, Switch};
use crate::limits::Limits;
use crate::reason::ReasonPhrase;
use crate::role::{Client, Role, Server};
use crate::wire::{WireHead, WireTrailers};

use body::{BodyDecoder, BodyEvent, Chunked};

/// What a decoder found in the bytes it was given.
///
/// `H` is the head of the decoded messages: `http::Request<()>` for a
/// [`RequestDecoder`], `http::Response<()>` for a [`ResponseDecoder`].
/// Interim responses are part of what a client receives only: for
/// requests, [`Event::Interim`] holds a value of an empty type, and a
/// `match` may leave it out.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event<H: MessageHead> {
    /// The head of a message: an `http::Request<()>` or `http::Response<()>`
    /// whose field values are slices of the input, and how its body is framed.
    Head {
        /// The start line and fields.
        head: H,
        /// How the body that follows is delimited.
        body: BodyKind,
    },
    /// An interim (1xx, other than 101) response. The final response to the
    /// same request follows. Only a [`ResponseDecoder`] produces it.
    Interim(H::Interim),
    /// Body bytes, split from the input buffer. Chunk data shorter than
    /// 1 KiB may have been moved back in the buffer over the framing
    /// before it, so that the data of many small chunks read together
    /// comes out as one `Data`; a piece of 1 KiB or more is never moved
    /// or copied. How body bytes are cut into `Data` events depends on
    /// the reads and is not part of the contract.
    Data(Bytes),
    /// The trailer section of a chunked body (only when it has fields).
    Trailers(HeaderMap),
    /// The message is complete, with the verdict on the connection.
    End(KeepAlive),
    /// The chunk extensions of the chunk whose data comes next, or, after
    /// the last `Data`, of the last-chunk. Only when asked for
    /// ([`Decoder::set_chunk_extensions`]), and only for chunk-size lines
    /// that carry any.
    ChunkExtensions(ChunkExtensions),
    /// A head read to its wire view alone, by a decoder with
    /// [`Decoder::set_wire_only`] on: in place of [`Event::Head`] and, for
    /// responses, of [`Event::Interim`] (an interim response comes with
    /// [`BodyKind::Empty`], and [`WireHead::status`] tells it is 1xx).
    /// Nothing of `http` is built: the view holds the head's bytes, its
    /// field lines and start line, and the body that follows is framed as
    /// `body` says.
    Wire {
        /// The head as received.
        head: WireHead,
        /// How the body that follows is delimited.
        body: BodyKind,
    },
}

/// The head of a decoded message: `http::Request<()>` or
/// `http::Response<()>`. Sealed.
pub trait MessageHead: role::SealedHead + fmt::Debug {
    /// What an interim response is for this kind of message: a
    /// `Response<()>`, or for requests an empty type.
    type Interim: fmt::Debug;
}

impl MessageHead for Request<()> {
    type Interim = Infallible;
}

impl MessageHead for Response<()> {
    type Interim = Response<()>;
}

#[derive(Debug)]
enum State {
    /// Waiting for (the rest of) a head.
    Head,
    /// Inside a body.
    Body(BodyDecoder),
    /// The body is complete; `End` is the next event.
    Ending,
    /// The last message said the connection closes: nothing more is parsed.
    Closed,
    /// The connection switched protocols: the buffer is the caller's.
    Switched,
    /// A protocol error ([`Core::failure`]); it is returned again on
    /// every call.
    Failed,
}

/// What both decoders share: limits, leniency, state, the head scanner and
/// the verdict.
#[derive(Debug)]
pub(crate) struct Core {
    limits: Limits,
    rules: Rules,
    state: State,
    scanner: LineScanner,
    /// The check of a head that has not ended yet (early refusal), and
    /// the count of empty lines before a request line.
    early: EarlyCheck,
    names: NameCache,
    /// What the last head's fields held, as the parser noted it.
    seen: Seen,
    /// An empty field map to decode the next head into.
    spare: Option<HeaderMap>,
    /// An empty extension map for the next head that needs one.
    spare_extensions: Option<http::Extensions>,
    verdict: KeepAlive,
    eof: bool,
    /// The current message is the last one this decoder decodes, whatever
    /// its verdict (a CONNECT request).
    last: bool,
    /// Chunk extensions are handed out as events.
    chunk_extensions: bool,
    /// Attach a [`WireHead`] to every head.
    wire: bool,
    /// Decode heads to their [`WireHead`] alone ([`Event::Wire`]).
    wire_only: bool,
    /// The wire view of the last trailer section handed out (with `wire`
    /// on), until the next message's head.
    wire_trailers: Option<WireTrailers>,
    /// The head found and checked in one pass by the wire-only reader,
    /// for its `Step::Head`.
    bare: Option<bare::Read>,
    /// Bytes of the stream consumed so far, across calls.
    consumed: u64,
    /// Where the head being parsed starts in the stream.
    head_start: u64,
    /// The error of [`State::Failed`], kept apart so that changing states
    /// never has an error to drop.
    failure: Option<Error>,
}

enum Step<H: MessageHead> {
    Event(Event<H>),
    NeedMore,
    /// A head was found: `len` bytes at the start of the buffer.
    Head(usize),
}

impl Core {
    fn new(limits: Limits, rules: Rules) -> Self {
        Core {
            limits,
            rules,
            state: State::Head,
            scanner: LineScanner::default(),
            early: EarlyCheck::default(),
            names: NameCache::default(),
            seen: Seen::default(),
            spare: None,
            spare_extensions: None,
            verdict: KeepAlive::Reusable,
            eof: false,
            last: false,
            chunk_extensions: false,
            wire: false,
            wire_only: false,
            wire_trailers: None,
            bare: None,
            consumed: 0,
            head_start: 0,
            failure: None,
        }
    }

    /// Everything but parsing the head itself.
    ///
    /// Errors are bare kinds here; [`Core::error`] gives them the switch
    /// that would accept the input, off the hot path.
    fn step<H: MessageHead>(
        &mut self,
        buf: &mut BytesMut,
        is_request: bool,
    ) -> Result<Step<H>, ErrorKind> {
        match &mut self.state {
            // `Core::error` returns the stored error itself.
            State::Failed => Err(self
                .failure
                .as_ref()
                .map_or(ErrorKind::UnexpectedEof, Error::kind)),
            State::Closed | State::Switched => Ok(Step::NeedMore),
            State::Ending => {
                self.state = match self.verdict {
                    KeepAlive::Reusable if self.last => State::Closed,
                    KeepAlive::Reusable => {
                        self.names.keep_names();
                        State::Head
                    }
                    KeepAlive::Close(CloseReason::Switched) => State::Switched,
                    KeepAlive::Close(_) => State::Closed,
                };
                Ok(Step::Event(Event::End(self.verdict)))
            }
            State::Body(body) => match body.decode(buf, &self.limits, &mut self.names, self.eof)? {
                BodyEvent::Data(data) => {
                    if body.finished() {
                        self.state = State::Ending;
                    }
                    Ok(Step::Event(Event::Data(data)))
                }
                BodyEvent::Extensions(extensions) => {
                    if body.finished() {
                        self.state = State::Ending;
                    }
                    Ok(Step::Event(Event::ChunkExtensions(
                        ChunkExtensions::from_validated(extensions),
                    )))
                }
                BodyEvent::Trailers(trailers) => {
                    self.state = State::Ending;
                    let body::Trailers { fields, wire } = *trailers;
                    self.wire_trailers = wire;
                    Ok(Step::Event(Event::Trailers(fields)))
                }
                BodyEvent::Done => {
                    self.state = State::Ending;
                    self.step(buf, is_request)
                }
                BodyEvent::NeedMore => Ok(Step::NeedMore),
            },
            State::Head => {
                if is_request
                    && self.scanner.in_first_line()
                    && matches!(buf.first(), Some(b'\r' | b'\n'))
                {
                    // RFC 9112 section 2.2: ignore empty lines (CRLF) before a
                    // request-line. A bare LF is not an empty line here.
                    self.skip_empty_lines(buf)?;
                }
                if self.wire_only && self.scanner.searched() == 0 {
                    // The whole head checked as it is found, no scan first;
                    // anything else is left to the scan below.
                    if let Some(read) = bare::read(buf, is_request, &self.limits, &mut self.names) {
                        let len = read.len;
                        self.bare = Some(read);
                        return Ok(Step::Head(len));
                    }
                }
                let max_lines = self.limits.max_fields.saturating_add(1);
                match self
                    .scanner
                    .find_end(buf, self.limits.max_head_bytes, max_lines)
                {
                    // An empty line where a start line belongs (a leading
                    // CRLF before a status line, a bare LF before a request
                    // when `bare_lf` is off).
                    Ok(Some(_)) if self.scanner.in_first_line() => Err(ErrorKind::InvalidStartLine),
                    Ok(Some(len)) => Ok(Step::Head(len)),
                    found => {
                        self.unfinished(buf, found, is_request)?;
                        Ok(Step::NeedMore)
                    }
                }
            }
        }
    }

    /// A head that has not ended within its bounds (`found`, from the
    /// scanner): what arrived of it is checked (each byte once, across
    /// calls) and refused at its first fault; then the bound it ran into,
    /// or the end of the stream inside it, is refused.
    #[inline(never)]
    fn unfinished(
        &mut self,
        buf: &BytesMut,
        found: Result<Option<usize>, Overflow>,
        is_request: bool,
    ) -> Result<(), ErrorKind> {
        // Where the head starts in the stream. A head is always read from
        // the start of a call (a call that ends a message returns its
        // `End`), so `buf[0]` was byte `consumed` when the call began;
        // empty lines skipped in this call moved it to where they ended
        // (`empty_lines_end`, which is never past `consumed` otherwise).
        let at = self.consumed.max(self.early.empty_lines_end());
        let upto = self.scanner.searched();
        if upto > self.early.checked(at) {
            let max_target = self.limits.max_target_bytes;
            if let Err(error) = self.early.check(buf, at, upto, &self.rules, max_target) {
                // `Core::error` returns it, placed in the stream.
                let kind = error.kind();
                self.failure = Some(error.in_head(at));
                return Err(kind);
            }
        }
        match found {
            Ok(_) if self.eof => {
                if buf.is_empty() {
                    self.state = State::Closed;
                    self.verdict = KeepAlive::Close(CloseReason::PeerEof);
                    Ok(())
                } else {
                    Err(ErrorKind::UnexpectedEof)
                }
            }
            Ok(_) => Ok(()),
            Err(Overflow::Lines) => Err(ErrorKind::TooManyFields),
            Err(Overflow::Bytes) if is_request && self.scanner.in_first_line() => {
                Err(ErrorKind::TargetTooLong)
            }
            Err(Overflow::Bytes) => Err(ErrorKind::HeadTooLarge),
        }
    }

    /// The error for a kind [`Core::step`] returned: the one the decoder
    /// failed with before, or the kind with the switch that would have
    /// accepted the input, placed at offset `at` of the stream.
    #[cold]
    fn error(&self, kind: ErrorKind, buf: &BytesMut, is_request: bool, at: u64) -> Error {
        if let Some(failure) = &self.failure {
            return failure.clone();
        }
        let error = match &self.state {
            State::Body(body) => Error::refused(kind, body.hint()),
            // An empty line where a request line belongs: a bare LF, which
            // `bare_lf` would skip as it skips CRLF.
            State::Head
                if is_request
                    && kind == ErrorKind::InvalidStartLine
                    && buf.first() == Some(&b'\n') =>
            {
                Error::refused(kind, self.rules.hint(Switch::BareLf))
            }
            _ => kind.into(),
        };
        error.at(at, None)
    }

    /// Skips the empty lines at the start of `buf`, at most
    /// [`MAX_EMPTY_LINES`](crate::head::early::MAX_EMPTY_LINES) before
    /// one request line. `buf[0]` is byte `consumed` of the stream (see
    /// [`Core::unfinished`]).
    #[cold]
    #[inline(never)]
    fn skip_empty_lines(&mut self, buf: &mut BytesMut) -> Result<(), ErrorKind> {
        let mut n = 0;
        loop {
            let len = if buf[n..].starts_with(b"\r\n") {
                2
            } else if self.rules.bare_lf && buf.get(n) == Some(&b'\n') {
                1
            } else {
                break;
            };
            let from = self.consumed + n as u64;
            if let Err(kind) = self.early.empty_line(from, from + len as u64) {
                // Placed at this line: the first byte not consumed.
                buf.advance(n);
                return Err(kind);
            }
            n += len;
        }
        if n > 0 {
            buf.advance(n);
            self.scanner.reset();
        }
        Ok(())
    }

    /// Starts the body of a message whose head was just parsed.
    fn start_body(&mut self, framing: Framing, verdict: KeepAlive) {
        self.scanner.reset();
        if self.wire_trailers.is_some() {
            // The trailers of the message before are no longer the last.
            self.wire_trailers = None;
        }
        self.verdict = match framing.close {
            Some(reason) => verdict.and(KeepAlive::Close(reason)),
            None => verdict,
        };
        let body = match framing.body {
            BodyKind::Empty | BodyKind::Length(0) => State::Ending,
            BodyKind::Length(n) => State::Body(BodyDecoder::Length(n)),
            BodyKind::Chunked => State::Body(BodyDecoder::Chunked(Chunked::new(
                self.rules,
                self.chunk_extensions,
                self.wire,
            ))),
            BodyKind::CloseDelimited => State::Body(BodyDecoder::UntilClose),
        };
        // The state was `Head`, which holds nothing: said so, the old
        // state needs no call to its drop glue.
        match std::mem::replace(&mut self.state, body) {
            State::Head => {}
            other => drop(other),
        }
    }

    /// A map for the `fields` fields of a head: the recycled one if any.
    fn field_map(spare: &mut Option<HeaderMap>, fields: usize) -> HeaderMap {
        match spare.take() {
            Some(mut map) => {
                // `reserve` works out the room it needs even when there is
                // enough, as there is in a connection's steady state.
                if map.capacity() < fields {
                    map.reserve(fields);
                }
                map
            }
            None => HeaderMap::with_capacity(fields),
        }
    }

    /// Finds the lines of `head`, a whole head found without the scanner
    /// (by the wire-only reader), for the full parse.
    fn lines_of(&mut self, head: &[u8]) {
        if self.scanner.ends().is_empty() {
            let _ = self.scanner.find_end(head, usize::MAX, usize::MAX);
        }
    }

    /// The wire view a head decoded into `http` types carries, its field
    /// map kept for the next head ([`Decoder::set_wire_only`]).
    #[cold]
    fn wire_of<P: HeadParts>(&mut self, parts: P, head: &Bytes, request: bool) -> WireHead {
        let (mut extensions, mut headers) = parts.split();
        headers.clear();
        self.spare = Some(headers);
        // Decoded with the view on, it carries one.
        extensions
            .remove::<WireHead>()
            .unwrap_or_else(|| WireHead::new(head.clone(), request, None))
    }

    /// Records a protocol error: it is returned again on every call.
    fn failed(&mut self, error: Error) {
        self.state = State::Failed;
        self.failure = Some(error);
        self.verdict = KeepAlive::Close(CloseReason::ProtocolError);
    }

    fn is_body_complete(&self) -> bool {
        match &self.state {
            State::Body(body) => body.data_complete(),
            State::Ending => true,
            _ => false,
        }
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
pub struct Decoder<R: Role> {
    core: Core,
    pending: R::Pending,
}

/// Decodes requests: the server side of a connection.
///
/// A CONNECT request is the last request decoded: the bytes after its head
/// are left in the buffer, since they belong to the tunnel if a 2xx answers
/// it, and the connection closes otherwise. A CONNECT request with
/// `Transfer-Encoding` or a non-zero `Content-Length` is refused
/// ([`ErrorKind::ConnectWithContent`]).
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

impl<R: Role> fmt::Debug for Decoder<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("core", &self.core)
            .field("pending", &self.pending)
            .finish()
    }
}

impl<R: Role> Decoder<R> {
    /// A decoder enforcing `limits`, with the role's default leniency:
    /// strict for requests; for responses, [`ResponseLeniency::default`](crate::leniency::ResponseLeniency::default)
    /// (only `no_space_after_status` on).
    pub fn new(limits: Limits) -> Self {
        Decoder::with_leniency(limits, R::Leniency::default())
    }

    /// A decoder enforcing `limits`, with the leniency switches of
    /// `leniency` on: a [`RequestLeniency`](crate::leniency::RequestLeniency) for requests, a
    /// [`ResponseLeniency`](crate::leniency::ResponseLeniency) for responses.
    pub fn with_leniency(limits: Limits, leniency: R::Leniency) -> Self {
        Decoder {
            core: Core::new(limits, R::rules(leniency)),
            pending: R::Pending::default(),
        }
    }

    /// The leniency switches this decoder applies.
    pub fn leniency(&self) -> R::Leniency {
        R::leniency(&self.core.rules)
    }

    /// Hands out the chunk extensions of chunked bodies as
    /// [`Event::ChunkExtensions`] when `on`, from the next chunked body on.
    /// Off by default: extensions are checked against their grammar and
    /// limits, then dropped, at no cost.
    pub fn set_chunk_extensions(&mut self, on: bool) {
        self.core.chunk_extensions = on;
    }

    /// Whether chunk extensions are handed out
    /// ([`set_chunk_extensions`](Self::set_chunk_extensions)).
    pub fn chunk_extensions(&self) -> bool {
        self.core.chunk_extensions
    }

    /// Turns the wire view on or off for the heads decoded from now on.
    /// With it on, every decoded head (interim responses included) carries
    /// a [`WireHead`] extension: its field lines as received, in order and
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
        self.core.wire = on;
    }

    /// `true` when decoded heads carry a [`WireHead`]
    /// ([`set_wire_view`](Self::set_wire_view)).
    pub fn wire_view(&self) -> bool {
        self.core.wire
    }

    /// Decodes heads to their wire view alone when `on`, from the next head
    /// on: each head comes as [`Event::Wire`], a [`WireHead`] and the
    /// framing of the body that follows, and no `http` type is built (no
    /// field map, no `Uri`, no extension). For a proxy that forwards heads
    /// as they came, or a tool that shows them: it costs about what
    /// `httparse` costs to parse the head alone (`docs/benchmarks.md`).
    /// Every rule, limit, leniency
    /// switch, error and framing decision is the same as without it: a head
    /// the strict reading accepts is read without `http`, and any other
    /// goes through the full parse, then its `http` types are dropped.
    /// Default: off. Connections and sessions always build `http` types.
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
        self.core.wire_only = on;
    }

    /// `true` when heads are decoded to their wire view alone
    /// ([`set_wire_only`](Self::set_wire_only)).
    pub fn wire_only(&self) -> bool {
        self.core.wire_only
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
        self.core.wire_trailers.as_ref()
    }

    /// How many bytes of the stream the decoder has consumed (split off or
    /// skipped in the buffers it was given) since it was made: the
    /// coordinates of [`Error::offset`].
    pub fn consumed(&self) -> u64 {
        self.core.consumed
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
        let before = buf.len();
        // Each event is returned where it is made, body events rebuilt by
        // variant: moving an event whole copies the room of its largest
        // variant, a head, for every `End` and `Data`.
        let len = match self.core.step(buf, R::REQUESTS) {
            Ok(Step::Head(len)) => len,
            Ok(Step::Event(Event::End(verdict))) => {
                self.core.consumed += (before - buf.len()) as u64;
                return Ok(Some(Event::End(verdict)));
            }
            Ok(Step::Event(Event::Data(data))) => {
                self.core.consumed += (before - buf.len()) as u64;
                return Ok(Some(Event::Data(data)));
            }
            Ok(Step::Event(event)) => {
                self.core.consumed += (before - buf.len()) as u64;
                return Ok(Some(event));
            }
            Ok(Step::NeedMore) => {
                self.core.consumed += (before - buf.len()) as u64;
                return Ok(None);
            }
            Err(kind) => {
                self.core.consumed += (before - buf.len()) as u64;
                // Placed at the first byte not consumed.
                let error = self.core.error(kind, buf, R::REQUESTS, self.core.consumed);
                self.core.failed(error.clone());
                return Err(error);
            }
        };
        // Where the head starts in the stream (empty lines before it were
        // skipped in this call): its errors are placed from there.
        self.core.head_start = self.core.consumed + (before - buf.len()) as u64;
        let head = buf.split_to(len).freeze();
        self.core.consumed += (before - buf.len()) as u64;
        let result = R::head(&mut self.core, &mut self.pending, head).map(Some);
        if let Err(error) = &result {
            self.core.failed(error.clone());
        }
        result
    }

    /// Like [`decode`](Self::decode), for when the peer has closed its
    /// side: the bytes in `buf` are all there will be. Ends a
    /// close-delimited body, is clean between messages (`Ok(None)`), and is
    /// an [`UnexpectedEof`](ErrorKind::UnexpectedEof) error inside any
    /// other message. Call it until it returns `Ok(None)`.
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode).
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Event<R::Recv>>, Error> {
        self.core.eof = true;
        self.decode(buf)
    }

    /// The keep-alive verdict of the current message (or of the last one,
    /// between messages). Known once the head is decoded; final once
    /// [`is_body_complete`](Self::is_body_complete) is `true`.
    pub fn keep_alive(&self) -> KeepAlive {
        self.core.verdict
    }

    /// `true` once every body byte of the current message has been
    /// returned: the `End` event is due, with no further input needed.
    pub fn is_body_complete(&self) -> bool {
        self.core.is_body_complete()
    }

    /// `true` between messages: nothing of a next message has been
    /// decoded yet (bytes of it may already sit in the buffer).
    pub fn is_idle(&self) -> bool {
        matches!(self.core.state, State::Head) && self.core.scanner.in_first_line()
    }

    /// `true` once the decoder will decode no further message: the last
    /// one ended with a verdict to close or was a CONNECT request, the
    /// peer closed between messages, or an error occurred. Not after a
    /// protocol switch: see [`is_switched`](Self::is_switched).
    pub fn is_closed(&self) -> bool {
        matches!(self.core.state, State::Closed | State::Failed)
    }

    /// `true` after a message that switched the connection to another
    /// protocol (a 101 response, a 2xx response to CONNECT). The bytes
    /// left in the buffer belong to that protocol.
    pub fn is_switched(&self) -> bool {
        matches!(self.core.state, State::Switched)
    }

    /// Body bytes still to come of a `Content-Length` body; `None` for
    /// other framings or between messages.
    pub fn remaining_body_len(&self) -> Option<u64> {
        match &self.core.state {
            State::Body(body) => body.remaining_len(),
            State::Ending => Some(0),
            _ => None,
        }
    }

    /// Gives the decoder a field map no longer needed (the fields of a
    /// message just sent, say): it is emptied, and the next head is
    /// decoded into it instead of a new map, saving the map's two
    /// allocations. A map with room for more than twice
    /// [`Limits::max_fields`] fields is dropped instead of kept.
    pub fn recycle_fields(&mut self, mut map: HeaderMap) {
        if map.capacity() <= self.core.limits.max_fields.saturating_mul(2) {
            // An encoder hands its maps back emptied already.
            if !map.is_empty() {
                map.clear();
            }
            self.core.spare = Some(map);
        }
    }

    /// Gives the decoder an extension map no longer needed (the
    /// extensions of a message just sent or dropped, say): it is emptied,
    /// and the next head that needs extensions (the [`WireHead`] of the
    /// wire view, a [`ReasonPhrase`]) gets it instead of a new one, which
    /// saves two of the three allocations of a message's first extension.
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
    /// dec.recycle_fields(parts.headers);
    /// dec.recycle_extensions(parts.extensions);
    /// # Ok::<(), h1proto::Error>(())
    /// ```
    pub fn recycle_extensions(&mut self, mut extensions: http::Extensions) {
        extensions.clear();
        self.core.spare_extensions = Some(extensions);
    }

    /// The limits this decoder enforces.
    pub fn limits(&self) -> &Limits {
        &self.core.limits
    }

    /// Switches the decoder off after the current message: the next
    /// message is not parsed (used when the local side decided to close,
    /// or to hand the connection to another protocol).
    pub fn close(&mut self) {
        if !matches!(self.core.state, State::Failed | State::Switched) {
            self.core.state = State::Closed;
        }
    }

    /// What the fields of the last head held (`Host`, framing and
    /// `Connection` lines), as the parser noted them.
    pub(crate) fn fields_seen(&self) -> &Seen {
        &self.core.seen
    }
}

impl Decoder<Client> {
    /// Records that a request with this method was sent: the responses are
    /// matched to these calls in order.
    pub fn expect_response_to(&mut self, method: &Method) {
        self.pending.in_flight.push_back(RequestKind::of(method));
    }

    /// How many requests recorded with
    /// [`expect_response_to`](Self::expect_response_to) have not had their
    /// final response decoded yet.
    pub fn requests_in_flight(&self) -> usize {
        self.pending.in_flight.len()
    }
}

/// What a response decoder keeps besides the shared core: the requests in
/// flight, and the interim responses to the current one.
#[derive(Debug, Default)]
pub struct InFlight {
    in_flight: VecDeque<RequestKind>,
    interim: usize,
}

/// Parses a request head (the `Server` role's part of decoding).
#[inline(always)]
fn request_head(core: &mut Core, head: Bytes) -> Result<Event<Request<()>>, Error> {
    if core.wire_only {
        return wire_request_head(core, head);
    }
    full_request_head(core, head)
}

/// A request head read to its wire view alone ([`Event::Wire`]).
#[inline(never)]
fn wire_request_head(core: &mut Core, head: Bytes) -> Result<Event<Request<()>>, Error> {
    // Read in one pass with the head's end, or from its lines when it
    // came in pieces.
    let read = match core.bare.take() {
        Some(read) => Some(read),
        None => bare::request(&head, core.scanner.ends(), core.limits.max_target_bytes),
    };
    if let Some(bare::Read {
        start: bare::Start::Request { version, connect },
        seen,
        ..
    }) = read
    {
        let lines = bare::Lines(&head);
        let host = seen.hosts == 1 || (seen.hosts == 0 && version == Version::HTTP_10);
        let framing = framing::request_framing_of(version, &seen, &lines);
        let framing = match framing {
            Ok(framing) if connect => framing::connect_request_framing(framing),
            framing => framing,
        };
        if let (true, Ok(framing)) = (host, framing) {
            // Refusals are left to the full parse, which places them.
            let verdict = framing::connection_verdict_of(version, &seen, &lines);
            core.seen = seen;
            core.start_body(framing, verdict);
            core.last = connect;
            return Ok(Event::Wire {
                head: WireHead::new(head, true, None),
                body: framing.body,
            });
        }
    }
    // Anything else is read as without the mode, its `http` types dropped.
    core.lines_of(&head);
    let wire = std::mem::replace(&mut core.wire, true);
    let event = full_request_head(core, head.clone());
    core.wire = wire;
    match event? {
        Event::Head { head: parsed, body } => Ok(Event::Wire {
            head: core.wire_of(parsed.into_parts().0, &head, true),
            body,
        }),
        other => Ok(other),
    }
}

/// Parses a request head into `http` types.
#[inline(always)]
fn full_request_head(core: &mut Core, bytes: Bytes) -> Result<Event<Request<()>>, Error> {
    let head = &bytes;
    let ends = core.scanner.ends();
    let rules = &core.rules;
    let max_target = core.limits.max_target_bytes;
    let names = &mut core.names;
    let mut headers = Core::field_map(&mut core.spare, ends.len() - 1);
    // Errors are placed from where the head starts; `lenient` holds the
    // switches when the head needed them.
    let start = core.head_start;
    let mut lenient = None;
    // Strictly first; a refused head again with the switches, which
    // accept it or name the one that would.
    let (line, seen) =
        match parse::request_head(head, ends, max_target, false, Strict, names, &mut headers) {
            Ok(parsed) => parsed,
            Err(_) => {
                lenient = Some(rules);
                parse::lenient_request_head(head, ends, max_target, rules, names, &mut headers)
                    .map_err(|error| error.in_head(start))?
            }
        };
    let at_field = |error: Error| field_error(error, head, true, lenient).in_head(start);

    if seen.hosts > 1 || (seen.hosts == 0 && line.version == Version::HTTP_11) {
        return Err(at_field(ErrorKind::InvalidHost.into()));
    }
    // Decided from what the parser saw: the map is searched only for
    // the codings of a Transfer-Encoding and the tokens of a Connection.
    let mut framing = match framing::request_framing_of(line.version, &seen, &headers) {
        Err(ErrorKind::ContentLengthWithTransferEncoding) => {
            chunked_with_content_length(rules, line.version, &seen, &mut headers)
                .map_err(at_field)?
        }
        framing => framing.map_err(|kind| at_field(kind.into()))?,
    };
    let connect = line.method == Method::CONNECT;
    if connect {
        framing = framing::connect_request_framing(framing).map_err(|k| at_field(k.into()))?;
    }
    let verdict = framing::connection_verdict_of(line.version, &seen, &headers);

    let mut request = Request::new(());
    *request.method_mut() = line.method;
    if let Some(uri) = line.uri {
        *request.uri_mut() = uri;
    }
    *request.version_mut() = line.version;
    put_fields(request.headers_mut(), headers);
    if core.wire {
        let wire = WireHead::new(bytes, true, lenient);
        extensions(&mut core.spare_extensions, request.extensions_mut()).insert(wire);
    }
    core.seen = seen;
    core.start_body(framing, verdict);
    // What follows a CONNECT head is the tunnel's if a 2xx answers it;
    // otherwise the connection closes. Either way it is not HTTP.
    core.last = connect;
    Ok(Event::Head {
        head: request,
        body: framing.body,
    })
}

/// Puts a head's field map in the place of the empty one a new `Request`
/// or `Response` comes with. That one is `HeaderMap::new()`, which
/// allocates nothing (as its documentation says), so it is forgotten
/// rather than dropped: a drop that frees nothing still walks the map's
/// three parts (about 50 instructions a head). A map with any capacity is
/// dropped as usual.
#[inline(always)]
fn put_fields(place: &mut HeaderMap, fields: HeaderMap) {
    let empty = std::mem::replace(place, fields);
    if empty.capacity() == 0 {
        std::mem::forget(empty);
    }
}

/// Parses a response head (the `Client` role's part of decoding).
#[inline(always)]
fn response_head(
    core: &mut Core,
    pending: &mut InFlight,
    head: Bytes,
) -> Result<Event<Response<()>>, Error> {
    if core.wire_only {
        return wire_response_head(core, pending, head);
    }
    full_response_head(core, pending, head)
}

/// A response head read to its wire view alone ([`Event::Wire`]).
#[inline(never)]
fn wire_response_head(
    core: &mut Core,
    pending: &mut InFlight,
    head: Bytes,
) -> Result<Event<Response<()>>, Error> {
    let read = match core.bare.take() {
        Some(read) => Some(read),
        None => bare::response(&head, core.scanner.ends()),
    };
    if let Some(bare::Read {
        start: bare::Start::Response { version, status },
        seen,
        ..
    }) = read
    {
        let lines = bare::Lines(&head);
        let request = pending.in_flight.front().copied().unwrap_or_default();
        let class = response_class(request, status);
        let framing = framing::response_framing_of(request, status, version, &seen, &lines);
        let interim_ok = pending.interim < core.limits.max_interim_responses;
        // Refusals are left to the full parse, which places them.
        if let (Ok(framing), true) = (framing, class != ResponseClass::Interim || interim_ok) {
            let verdict = framing::connection_verdict_of(version, &seen, &lines);
            core.seen = seen;
            let head = WireHead::new(head, false, None);
            let body = match class {
                ResponseClass::Interim => {
                    pending.interim += 1;
                    core.scanner.reset();
                    BodyKind::Empty
                }
                ResponseClass::Switch => {
                    pending.in_flight.pop_front();
                    pending.interim = 0;
                    core.start_body(framing, KeepAlive::Close(CloseReason::Switched));
                    BodyKind::Empty
                }
                ResponseClass::Final => {
                    pending.in_flight.pop_front();
                    pending.interim = 0;
                    core.start_body(framing, verdict);
                    framing.body
                }
            };
            return Ok(Event::Wire { head, body });
        }
    }
    // Anything else is read as without the mode, its `http` types dropped.
    core.lines_of(&head);
    let wire = std::mem::replace(&mut core.wire, true);
    let event = full_response_head(core, pending, head.clone());
    core.wire = wire;
    match event? {
        Event::Head { head: parsed, body } => Ok(Event::Wire {
            head: core.wire_of(parsed.into_parts().0, &head, false),
            body,
        }),
        Event::Interim(parsed) => Ok(Event::Wire {
            head: core.wire_of(parsed.into_parts().0, &head, false),
            body: BodyKind::Empty,
        }),
        other => Ok(other),
    }
}

/// Parses a response head into `http` types.
#[inline(always)]
fn full_response_head(
    core: &mut Core,
    pending: &mut InFlight,
    bytes: Bytes,
) -> Result<Event<Response<()>>, Error> {
    let head = &bytes;
    let ends = core.scanner.ends();
    let rules = &core.rules;
    let names = &mut core.names;
    let mut headers = Core::field_map(&mut core.spare, ends.len() - 1);
    // Errors are placed from where the head starts; `lenient` holds the
    // switches when the head needed them.
    let start = core.head_start;
    let mut lenient = None;
    // Strictly first; a refused head again with the switches, which
    // accept it or name the one that would.
    let (line, seen) = match parse::response_head(head, ends, Strict, names, &mut headers) {
        Ok(parsed) => parsed,
        Err(_) => {
            lenient = Some(rules);
            parse::lenient_response_head(head, ends, rules, names, &mut headers)
                .map_err(|error| error.in_head(start))?
        }
    };

    let request = pending.in_flight.front().copied().unwrap_or_default();
    let class = response_class(request, line.status);
    let framing = framing::response_framing_of(request, line.status, line.version, &seen, &headers)
        .map_err(|kind| field_error(kind.into(), head, false, lenient).in_head(start))?;
    let verdict = framing::connection_verdict_of(line.version, &seen, &headers);

    let mut response = Response::new(());
    *response.status_mut() = line.status;
    *response.version_mut() = line.version;
    put_fields(response.headers_mut(), headers);
    let (rs, re) = line.reason;
    let canonical = line.status.canonical_reason().map(str::as_bytes);
    if !canonical.is_some_and(|c| same_short(c, &head[rs..re])) {
        extensions(&mut core.spare_extensions, response.extensions_mut())
            .insert(ReasonPhrase::from_validated(head.slice(rs..re)));
    }
    if core.wire {
        let wire = WireHead::new(bytes, false, lenient);
        extensions(&mut core.spare_extensions, response.extensions_mut()).insert(wire);
    }
    core.seen = seen;

    match class {
        ResponseClass::Interim => {
            pending.interim += 1;
            if pending.interim > core.limits.max_interim_responses {
                return Err(Error::from(ErrorKind::TooManyInterimResponses).in_head(start));
            }
            core.scanner.reset();
            Ok(Event::Interim(response))
        }
        ResponseClass::Switch => {
            pending.in_flight.pop_front();
            pending.interim = 0;
            core.start_body(framing, KeepAlive::Close(CloseReason::Switched));
            Ok(Event::Head {
                head: response,
                body: BodyKind::Empty,
            })
        }
        ResponseClass::Final => {
            pending.in_flight.pop_front();
            pending.interim = 0;
            core.start_body(framing, verdict);
            Ok(Event::Head {
                head: response,
                body: framing.body,
            })
        }
    }
}

/// `extensions`, a message's, to insert into: the recycled map (`spare`)
/// when it has none yet.
#[inline]
fn extensions<'a>(
    spare: &mut Option<http::Extensions>,
    extensions: &'a mut http::Extensions,
) -> &'a mut http::Extensions {
    if extensions.is_empty() {
        if let Some(spare) = spare.take() {
            *extensions = spare;
        }
    }
    extensions
}

/// `a == b` for short slices (a reason phrase), byte by byte: a call of
/// libc's `memcmp` costs more than the few bytes it compares.
#[inline]
fn same_short(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// `error`, refused for the framing or `Host` fields of a head the parser
/// accepted: placed at the field line at fault, with its name. A repeated
/// field is at fault at its second line; a `Transfer-Encoding` list at its
/// last line (its final coding is at fault), or at its first in HTTP/1.0;
/// `Content-Length` with `Transfer-Encoding` at whichever came second.
#[cold]
#[inline(never)]
fn field_error(error: Error, head: &Bytes, request: bool, lenient: Option<&Rules>) -> Error {
    use ErrorKind::*;
    let wire = WireHead::new(head.clone(), request, lenient);
    let lines = |name: &str| -> Vec<(usize, std::ops::Range<usize>)> {
        let mut spans = wire.spans();
        std::iter::from_fn(|| spans.next_line())
            .filter(|(_, n, _)| head[n.clone()].eq_ignore_ascii_case(name.as_bytes()))
            .map(|(start, n, _)| (start, n))
            .collect()
    };
    let (te, cl) = ("transfer-encoding", "content-length");
    let first = |name| lines(name).first().cloned();
    let line = match error.kind() {
        InvalidHost => lines("host").get(1).cloned(),
        InvalidContentLength => {
            let cl = lines(cl);
            cl.get(1).or(cl.first()).cloned()
        }
        TransferEncodingInHttp10 => first(te),
        InvalidTransferEncoding | UnsupportedTransferCoding => lines(te).last().cloned(),
        ContentLengthWithTransferEncoding => [first(te), first(cl)]
            .into_iter()
            .flatten()
            .max_by_key(|(start, _)| *start),
        ConnectWithContent => first(te).or_else(|| first(cl)),
        _ => None,
    };
    match line {
        Some((start, name)) => error.at(start as u64, Some(&head[name])),
        None => error,
    }
}

/// A request with both `Transfer-Encoding` and `Content-Length`, which
/// the strict reading refuses. With `chunked_with_content_length`, one
/// that `Transfer-Encoding` alone frames as chunked, and whose
/// `Content-Length` is valid on its own, is read as chunked, without its
/// `Content-Length`, and the connection closes after it (RFC 9112 section
/// 6.1). Otherwise the error names the switch when it would accept the
/// request.
#[cold]
fn chunked_with_content_length(
    rules: &Rules,
    version: Version,
    seen: &Seen,
    headers: &mut HeaderMap,
) -> Result<Framing, Error> {
    let conflict = ErrorKind::ContentLengthWithTransferEncoding;
    let te_alone = Seen {
        content_length: None,
        ..*seen
    };
    let framing = framing::request_framing_of(version, &te_alone, headers);
    let length_valid = matches!(seen.content_length, Some(Some(_)));
    if !rules.chunked_with_content_length {
        let accepted = length_valid && matches!(framing, Ok(f) if f.body == BodyKind::Chunked);
        let hint = accepted
            .then(|| rules.hint(Switch::ChunkedWithContentLength))
            .flatten();
        return Err(Error::refused(conflict, hint));
    }
    if !length_valid {
        return Err(ErrorKind::InvalidContentLength.into());
    }
    let framing = framing?;
    if framing.body != BodyKind::Chunked {
        return Err(conflict.into());
    }
    headers.remove(http::header::CONTENT_LENGTH);
    Ok(Framing {
        body: BodyKind::Chunked,
        close: Some(CloseReason::FramingConflict),
    })
}

/// The parts of a decoded head that [`Core::wire_of`] takes apart.
trait HeadParts {
    fn split(self) -> (http::Extensions, HeaderMap);
}

impl HeadParts for http::request::Parts {
    fn split(self) -> (http::Extensions, HeaderMap) {
        (self.extensions, self.headers)
    }
}

impl HeadParts for http::response::Parts {
    fn split(self) -> (http::Extensions, HeaderMap) {
        (self.extensions, self.headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn the_map_a_new_message_comes_with_has_nothing_to_free() {
        // `put_fields` forgets it only then: what it relies on.
        assert_eq!(Request::new(()).headers().capacity(), 0);
        assert_eq!(Response::new(()).headers().capacity(), 0);
        let mut place = HeaderMap::with_capacity(4);
        let mut fields = HeaderMap::new();
        fields.insert(HOST, http::HeaderValue::from_static("a"));
        put_fields(&mut place, fields);
        assert_eq!(place[HOST], "a");
    }

    #[test]
    fn the_target_slash_is_the_default_uri() {
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
