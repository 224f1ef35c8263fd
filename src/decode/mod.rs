//! Decoders: bytes from the peer in, events out ([`Decoder`] has the
//! flow).

mod body;
mod head;

pub(crate) use head::{request_head, response_head};

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;

use bytes::{Buf, Bytes, BytesMut};
use http::header::HeaderMap;
use http::{Method, Request, Response};

use crate::chunk_ext::ChunkExtensions;
use crate::error::{Error, ErrorKind};
use crate::framing::{BodyKind, Framing, FramingFields, RequestKind};
use crate::head::names::NameCache;
use crate::head::reader::{MAX_EMPTY_LINES, Options, Reader, Section};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::leniency::Rules;
use crate::limits::Limits;
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
pub trait MessageHead: SealedHead + fmt::Debug {
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

/// Seals [`MessageHead`]: the two heads are the only ones.
pub trait SealedHead {}

impl SealedHead for Request<()> {}
impl SealedHead for Response<()> {}

#[derive(Debug, Default)]
enum DecodeStage {
    /// Waiting for (the rest of) a head.
    #[default]
    Head,
    /// Inside a body.
    Body(BodyDecoder),
    /// The body is complete; `End` is the next event.
    Ending,
    /// The last message said the connection closes: nothing more is parsed.
    Closed,
    /// The connection switched protocols: the buffer is the caller's.
    Switched,
    /// A protocol error ([`DecoderBase::failure`]); it is returned again on
    /// every call.
    Failed,
}

/// What both decoders share: limits, leniency, state, the head reader and
/// the verdict.
#[derive(Debug, Default)]
pub struct DecoderBase {
    limits: Limits,
    rules: Rules,
    state: DecodeStage,
    /// The reader of the head being read, and its record.
    reader: Reader,
    /// Empty lines skipped before a request line, and the stream offset
    /// where the last one ended: the count goes on only for a request
    /// line that starts there.
    empty_lines: (u8, u64),
    names: NameCache,
    /// What the last head's fields held, as the head reader noted it.
    seen: FramingFields,
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
    wire_trailers: Option<Box<WireTrailers>>,
    /// Bytes of the stream consumed so far, across calls.
    consumed: u64,
    /// Where the head being parsed starts in the stream.
    head_start: u64,
    /// The error of [`DecodeStage::Failed`], kept apart so that changing states
    /// never has an error to drop.
    failure: Option<Error>,
}

/// What one decoding pass found: a head's extent, or a body event (the
/// same for both roles; `Decoder::decode` makes the `Event`).
enum Progress {
    /// A head was found: `len` bytes at the start of the buffer.
    Head(usize),
    Data(Bytes),
    ChunkExtensions(ChunkExtensions),
    Trailers(HeaderMap),
    End(KeepAlive),
    NeedMore,
}

impl DecoderBase {
    fn new(limits: Limits, rules: Rules) -> Self {
        DecoderBase {
            limits,
            rules,
            ..DecoderBase::default()
        }
    }

    /// Everything but parsing the head itself.
    ///
    /// Errors are plain kinds here; [`DecoderBase::fail`] gives them the switch
    /// that would accept the input, off the hot path.
    fn decode_once(&mut self, buf: &mut BytesMut) -> Result<Progress, ErrorKind> {
        match &mut self.state {
            // `DecoderBase::fail` returns the stored error itself, whatever
            // the kind.
            DecodeStage::Failed => Err(ErrorKind::UnexpectedEof),
            DecodeStage::Closed | DecodeStage::Switched => Ok(Progress::NeedMore),
            DecodeStage::Ending => {
                self.state = match self.verdict {
                    KeepAlive::Reusable if self.last => DecodeStage::Closed,
                    KeepAlive::Reusable => {
                        self.names.keep_names();
                        DecodeStage::Head
                    }
                    KeepAlive::Close(CloseReason::Switched) => DecodeStage::Switched,
                    KeepAlive::Close(_) => DecodeStage::Closed,
                };
                Ok(Progress::End(self.verdict))
            }
            DecodeStage::Body(body) => {
                match body.decode(buf, &self.limits, &mut self.names, self.eof)? {
                    BodyEvent::Data(data) => {
                        if body.finished() {
                            self.state = DecodeStage::Ending;
                        }
                        Ok(Progress::Data(data))
                    }
                    BodyEvent::Extensions(extensions) => {
                        if body.finished() {
                            self.state = DecodeStage::Ending;
                        }
                        Ok(Progress::ChunkExtensions(ChunkExtensions::from_validated(
                            extensions,
                        )))
                    }
                    BodyEvent::Trailers(trailers) => {
                        self.state = DecodeStage::Ending;
                        let body::Trailers { fields, wire } = *trailers;
                        self.wire_trailers = wire.map(Box::new);
                        Ok(Progress::Trailers(fields))
                    }
                    BodyEvent::Done => {
                        self.state = DecodeStage::Ending;
                        self.decode_once(buf)
                    }
                    BodyEvent::NeedMore => Ok(Progress::NeedMore),
                }
            }
            DecodeStage::Head => {
                if self.rules.request
                    && self.reader.in_first_line()
                    && matches!(buf.first(), Some(b'\r' | b'\n'))
                {
                    // RFC 9112 section 2.2: ignore empty lines (CRLF) before a
                    // request-line. A bare LF is not an empty line here.
                    self.skip_empty_lines(buf)?;
                }
                let options = Options {
                    section: if self.rules.request {
                        Section::Request
                    } else {
                        Section::Response
                    },
                    rules: &self.rules,
                    max_target: self.limits.max_target_bytes,
                    max_bytes: self.limits.max_head_bytes,
                    max_lines: self.limits.max_fields.saturating_add(1),
                    eof: self.eof,
                };
                match self.reader.read(buf, &options, &mut self.names) {
                    Ok(Some(len)) => Ok(Progress::Head(len)),
                    Ok(None) if self.eof && !buf.is_empty() => Err(ErrorKind::UnexpectedEof),
                    Ok(None) if self.eof => {
                        self.state = DecodeStage::Closed;
                        self.verdict = KeepAlive::Close(CloseReason::PeerEof);
                        Ok(Progress::NeedMore)
                    }
                    Ok(None) => Ok(Progress::NeedMore),
                    Err(error) => Err(self.head_refused(error)),
                }
            }
        }
    }

    /// A head the reader refused: the error, placed in the stream, is
    /// kept for [`DecoderBase::fail`].
    #[cold]
    #[inline(never)]
    fn head_refused(&mut self, error: Error) -> ErrorKind {
        // Where the head starts in the stream. A head is always read from
        // the start of a call (a call that ends a message returns its
        // `End`), so `buf[0]` was byte `consumed` when the call began;
        // empty lines skipped in this call moved it to where they ended
        // (`empty_lines.1`, which is never past `consumed` otherwise).
        let at = self.consumed.max(self.empty_lines.1);
        let kind = error.kind();
        self.failure = Some(error.in_head(at));
        kind
    }

    /// Fails with a kind [`DecoderBase::decode_once`] returned, and returns
    /// the error: the one the decoder failed with before, or the kind with
    /// the switch that would have accepted the input, placed at the first
    /// byte not consumed.
    #[cold]
    fn fail(&mut self, kind: ErrorKind) -> Error {
        let error = match (&self.failure, &self.state) {
            (Some(failure), _) => failure.clone(),
            (None, DecodeStage::Body(BodyDecoder::Chunked(chunked))) => {
                Error::refused(kind, chunked.hint).at(self.consumed, None)
            }
            (None, _) => Error::from(kind).at(self.consumed, None),
        };
        self.failed(error.clone());
        error
    }

    /// Skips the empty lines at the start of `buf`, at most
    /// [`MAX_EMPTY_LINES`] before one request line. `buf[0]` is byte
    /// `consumed` of the stream (see [`DecoderBase::head_refused`]).
    #[cold]
    #[inline(never)]
    fn skip_empty_lines(&mut self, buf: &mut BytesMut) -> Result<(), ErrorKind> {
        let mut n = 0;
        loop {
            let len = match &buf[n..] {
                [b'\r', b'\n', ..] => 2,
                [b'\n', ..] if self.rules.bare_lf => 1,
                _ => break,
            };
            let from = self.consumed + n as u64;
            let (count, end) = &mut self.empty_lines;
            // Lines before an earlier request line do not count.
            if *end != from {
                *count = 0;
            }
            if *count == MAX_EMPTY_LINES {
                // Placed at this line: the first byte not consumed.
                buf.advance(n);
                return Err(ErrorKind::TooManyEmptyLines);
            }
            *count += 1;
            *end = from + len as u64;
            n += len;
        }
        if n > 0 {
            buf.advance(n);
            self.reader.reset();
        }
        Ok(())
    }

    /// Starts the body of a message whose head was just parsed.
    fn start_body(&mut self, framing: Framing, verdict: KeepAlive) {
        self.reader.reset();
        // The trailers of the message before are no longer the last.
        self.wire_trailers = None;
        self.verdict = verdict.and(framing.close.map_or(KeepAlive::Reusable, KeepAlive::Close));
        self.state = match framing.body {
            BodyKind::Empty | BodyKind::Length(0) => DecodeStage::Ending,
            BodyKind::Length(n) => DecodeStage::Body(BodyDecoder::Length(n)),
            BodyKind::Chunked => DecodeStage::Body(BodyDecoder::Chunked(Chunked::new(
                self.rules,
                self.chunk_extensions,
                self.wire,
            ))),
            BodyKind::CloseDelimited => DecodeStage::Body(BodyDecoder::UntilClose),
        };
    }

    /// Records a protocol error: it is returned again on every call.
    fn failed(&mut self, error: Error) {
        self.state = DecodeStage::Failed;
        self.failure = Some(error);
        self.verdict = KeepAlive::Close(CloseReason::ProtocolError);
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
pub struct Decoder<R: Role> {
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
            base: DecoderBase::new(limits, R::rules(leniency)),
            pending: R::Pending::default(),
            leniency,
        }
    }

    /// The leniency switches this decoder applies.
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
        self.base.wire = on;
    }

    /// `true` when decoded heads carry a [`WireHead`]
    /// ([`set_wire_view`](Self::set_wire_view)).
    pub fn wire_view(&self) -> bool {
        self.base.wire
    }

    /// Decodes heads to their wire view alone when `on`, from the next head
    /// on: each head comes as [`Event::Wire`], a [`WireHead`] and the
    /// framing of the body that follows, and no `http` type is built (no
    /// field map, no `Uri`, no extension). For a proxy that forwards heads
    /// as they came, or a tool that shows them: it costs a little more than
    /// half of a decode into `http` types (`docs/benchmarks.md`). Every
    /// rule, limit, leniency switch, error and framing decision is the
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
        let before = buf.len();
        let progress = self.base.decode_once(buf);
        self.base.consumed += (before - buf.len()) as u64;
        // A body event is made here, where it is returned: a pass never
        // carries an `Event`, whose room is a head's.
        let len = match progress {
            Ok(Progress::Head(len)) => len,
            Ok(Progress::Data(data)) => return Ok(Some(Event::Data(data))),
            Ok(Progress::End(verdict)) => return Ok(Some(Event::End(verdict))),
            Ok(Progress::ChunkExtensions(ext)) => return Ok(Some(Event::ChunkExtensions(ext))),
            Ok(Progress::Trailers(fields)) => return Ok(Some(Event::Trailers(fields))),
            Ok(Progress::NeedMore) => return Ok(None),
            Err(kind) => return Err(self.base.fail(kind)),
        };
        // Where the head starts in the stream (empty lines before it were
        // skipped in this call): its errors are placed from there.
        self.base.head_start = self.base.consumed;
        let head = buf.split_to(len).freeze();
        self.base.consumed += len as u64;
        R::head(&mut self.base, &mut self.pending, head)
            .inspect_err(|error| self.base.failed(error.clone()))
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
        self.base.eof = true;
        self.decode(buf)
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
    /// [`Limits::max_fields`] fields is dropped instead of kept.
    pub fn give_spare_fields(&mut self, mut map: HeaderMap) {
        if map.capacity() <= self.base.limits.max_fields.saturating_mul(2) {
            // An encoder hands its maps back emptied already.
            if !map.is_empty() {
                map.clear();
            }
            self.base.spare = Some(map);
        }
    }

    /// Gives the decoder an extension map no longer needed (the
    /// extensions of a message just sent or dropped, say): it is emptied,
    /// and the next head that needs extensions (the [`WireHead`] of the
    /// wire view, a [`ReasonPhrase`](crate::ReasonPhrase)) gets it instead of a new one, which
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
    /// dec.give_spare_fields(parts.headers);
    /// dec.give_spare_extensions(parts.extensions);
    /// # Ok::<(), h1proto::Error>(())
    /// ```
    pub fn give_spare_extensions(&mut self, mut extensions: http::Extensions) {
        extensions.clear();
        self.base.spare_extensions = Some(extensions);
    }

    /// Gives back what only steady traffic needs (the head reader's room
    /// for field lines, the spare field and extension maps): an idle
    /// connection's memory, as a session lets its buffers go.
    pub(crate) fn release(&mut self) {
        self.base.reader.release();
        self.base.spare = None;
        self.base.spare_extensions = None;
    }

    /// The limits this decoder enforces.
    pub fn limits(&self) -> &Limits {
        &self.base.limits
    }

    /// Switches the decoder off after the current message: the next
    /// message is not parsed (used when the local side decided to close,
    /// or to hand the connection to another protocol).
    pub fn close(&mut self) {
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
        self.pending.in_flight.push_back(RequestKind::of(method));
    }

    /// How many requests recorded with
    /// [`expect_response_to`](Self::expect_response_to) have not had their
    /// final response decoded yet.
    pub fn requests_in_flight(&self) -> usize {
        self.pending.in_flight.len()
    }
}

/// What a response decoder keeps besides the shared base: the requests in
/// flight, and the interim responses to the current one.
#[derive(Debug, Default)]
pub struct InFlight {
    in_flight: VecDeque<RequestKind>,
    interim: usize,
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
