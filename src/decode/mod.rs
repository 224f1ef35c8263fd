//! Decoders: bytes from the peer in, events out.
//!
//! The caller owns the read buffer (a [`BytesMut`]) and hands it to
//! [`RequestDecoder::decode`] or [`ResponseDecoder::decode`], which split
//! off what they consume. Each call returns at most one [`Event`]; `Ok(None)`
//! means "read more bytes into the buffer, then call again". When the peer
//! closes its side, call `decode_eof` instead until it returns `Ok(None)`.
//!
//! A message is `Head`, zero or more `Data`, at most one `Trailers`, then
//! `End`. The decoder never asks for more input between the last body byte
//! and `End`: once the last `Data` has been returned, the next call returns
//! `End` at once, and [`RequestDecoder::is_body_complete`] is already `true`.

mod body;

use std::collections::VecDeque;

use bytes::{Buf, Bytes, BytesMut};
use http::header::HeaderMap;
use http::{Method, Request, Response, Version};

use crate::error::{Error, ErrorKind};
use crate::framing::Seen;
use crate::framing::{self, BodyKind, Framing, RequestKind, ResponseClass, response_class};
use crate::head::names::NameCache;
use crate::head::parse;
use crate::head::scan::{LineScanner, Overflow};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::limits::Limits;
use crate::reason::ReasonPhrase;

pub use body::forbidden_in_trailers;
use body::{BodyDecoder, BodyEvent, Chunked};

/// What a decoder found in the bytes it was given.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event<H> {
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
    Interim(H),
    /// Body bytes, split from the input buffer without a copy.
    Data(Bytes),
    /// The trailer section of a chunked body (only when it has fields).
    Trailers(HeaderMap),
    /// The message is complete, with the verdict on the connection.
    End(KeepAlive),
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
    /// A protocol error; it is returned again on every call.
    Failed(ErrorKind),
}

/// What both decoders share: limits, state, the head scanner and the verdict.
#[derive(Debug)]
struct Core {
    limits: Limits,
    state: State,
    scanner: LineScanner,
    names: NameCache,
    /// What the last head's fields held, as the parser noted it.
    seen: Seen,
    /// An empty field map to decode the next head into.
    spare: Option<HeaderMap>,
    verdict: KeepAlive,
    eof: bool,
    /// The current message is the last one this decoder decodes, whatever
    /// its verdict (a CONNECT request).
    last: bool,
}

enum Step<H> {
    Event(Event<H>),
    NeedMore,
    /// A head was found: `len` bytes at the start of the buffer.
    Head(usize),
}

impl Core {
    fn new(limits: Limits) -> Self {
        Core {
            limits,
            state: State::Head,
            scanner: LineScanner::default(),
            names: NameCache::default(),
            seen: Seen::default(),
            spare: None,
            verdict: KeepAlive::Reusable,
            eof: false,
            last: false,
        }
    }

    /// Everything but parsing the head itself.
    fn step<H>(&mut self, buf: &mut BytesMut, is_request: bool) -> Result<Step<H>, ErrorKind> {
        match &mut self.state {
            State::Failed(kind) => Err(*kind),
            State::Closed | State::Switched => Ok(Step::NeedMore),
            State::Ending => {
                self.state = match self.verdict {
                    KeepAlive::Reusable if self.last => State::Closed,
                    KeepAlive::Reusable => {
                        self.names.keep_names();
                        State::Head
                    }
                    KeepAlive::Close(CloseReason::Upgraded) => State::Switched,
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
                BodyEvent::Trailers(map) => {
                    self.state = State::Ending;
                    Ok(Step::Event(Event::Trailers(*map)))
                }
                BodyEvent::Done => {
                    self.state = State::Ending;
                    self.step(buf, is_request)
                }
                BodyEvent::NeedMore => Ok(Step::NeedMore),
            },
            State::Head => {
                if is_request && self.scanner.in_first_line() {
                    // RFC 9112 section 2.2: ignore empty lines (CRLF) before a
                    // request-line. A bare LF is not an empty line here.
                    self.skip_empty_lines(buf);
                }
                let max_lines = self.limits.max_fields.saturating_add(1);
                match self
                    .scanner
                    .find_end(buf, self.limits.max_head_bytes, max_lines)
                {
                    // An empty line where a start line belongs (a leading
                    // CRLF before a status line, a bare LF before a request).
                    Ok(Some(_)) if self.scanner.in_first_line() => Err(ErrorKind::InvalidStartLine),
                    Ok(Some(len)) => Ok(Step::Head(len)),
                    Ok(None) if self.eof => {
                        if buf.is_empty() {
                            self.state = State::Closed;
                            self.verdict = KeepAlive::Close(CloseReason::PeerEof);
                            Ok(Step::NeedMore)
                        } else {
                            Err(ErrorKind::UnexpectedEof)
                        }
                    }
                    Ok(None) => Ok(Step::NeedMore),
                    Err(Overflow::Lines) => Err(ErrorKind::TooManyFields),
                    Err(Overflow::Bytes) if is_request && self.scanner.in_first_line() => {
                        Err(ErrorKind::TargetTooLong)
                    }
                    Err(Overflow::Bytes) => Err(ErrorKind::HeadTooLarge),
                }
            }
        }
    }

    fn skip_empty_lines(&mut self, buf: &mut BytesMut) {
        let mut n = 0;
        while buf[n..].starts_with(b"\r\n") {
            n += 2;
        }
        if n > 0 {
            buf.advance(n);
            self.scanner.reset();
        }
    }

    /// Starts the body of a message whose head was just parsed.
    fn start_body(&mut self, framing: Framing, verdict: KeepAlive) {
        self.scanner.reset();
        self.verdict = match framing.close {
            Some(reason) => verdict.and(KeepAlive::Close(reason)),
            None => verdict,
        };
        self.state = match framing.body {
            BodyKind::Empty | BodyKind::Length(0) => State::Ending,
            BodyKind::Length(n) => State::Body(BodyDecoder::Length(n)),
            BodyKind::Chunked => State::Body(BodyDecoder::Chunked(Chunked::new())),
            BodyKind::CloseDelimited => State::Body(BodyDecoder::UntilClose),
        };
    }

    /// A map for the `fields` fields of a head: the recycled one if any.
    fn field_map(spare: &mut Option<HeaderMap>, fields: usize) -> HeaderMap {
        match spare.take() {
            Some(mut map) => {
                map.reserve(fields);
                map
            }
            None => HeaderMap::with_capacity(fields),
        }
    }

    /// Records a protocol error: it is returned again on every call.
    fn failed(&mut self, kind: ErrorKind) {
        self.state = State::Failed(kind);
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

macro_rules! shared_queries {
    () => {
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
        /// peer closed between messages, the connection switched protocols,
        /// or an error occurred.
        pub fn is_closed(&self) -> bool {
            matches!(
                self.core.state,
                State::Closed | State::Switched | State::Failed(_)
            )
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
                map.clear();
                self.core.spare = Some(map);
            }
        }

        /// The limits this decoder enforces.
        pub fn limits(&self) -> &Limits {
            &self.core.limits
        }

        /// Like `decode`, for when the peer has closed its side: the bytes
        /// in `buf` are all there will be. Ends a close-delimited body, is
        /// clean between messages (`Ok(None)`), and is an
        /// [`UnexpectedEof`](ErrorKind::UnexpectedEof) error inside any
        /// other message. Call it until it returns `Ok(None)`.
        pub fn decode_eof(
            &mut self,
            buf: &mut BytesMut,
        ) -> Result<Option<Event<$crate::decode::HeadOf<Self>>>, Error> {
            self.core.eof = true;
            self.decode(buf)
        }

        /// Switches the decoder off after the current message: the next
        /// message is not parsed (used when the local side decided to close,
        /// or to hand the connection to another protocol).
        pub fn close(&mut self) {
            if !matches!(self.core.state, State::Failed(_) | State::Switched) {
                self.core.state = State::Closed;
            }
        }
    };
}

/// The head type a decoder produces.
pub type HeadOf<D> = <D as DecodeHead>::Head;

/// Ties a decoder to the head type of its messages.
pub trait DecodeHead {
    /// `http::Request<()>` or `http::Response<()>`.
    type Head;
}

impl DecodeHead for RequestDecoder {
    type Head = Request<()>;
}

impl DecodeHead for ResponseDecoder {
    type Head = Response<()>;
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
#[derive(Debug)]
pub struct RequestDecoder {
    core: Core,
}

impl RequestDecoder {
    /// What the fields of the last head held (`Host`, framing and
    /// `Connection` lines), as the parser noted them.
    pub(crate) fn fields_seen(&self) -> &Seen {
        &self.core.seen
    }

    /// A decoder enforcing `limits`.
    pub fn new(limits: Limits) -> Self {
        RequestDecoder {
            core: Core::new(limits),
        }
    }

    /// Decodes the next event from `buf`, splitting off the bytes it uses.
    ///
    /// `Ok(None)`: more input is needed (or, once [`is_closed`](Self::is_closed),
    /// no further message will be decoded and the bytes are left in `buf`).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Request<()>>>, Error> {
        // Returned as it is rather than re-wrapped, which would copy the
        // (large) event once more.
        let result = self.decode_inner(buf);
        if let Err(error) = &result {
            self.core.failed(error.kind());
        }
        result
    }

    fn decode_inner(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Request<()>>>, Error> {
        let len = match self.core.step(buf, true)? {
            Step::Event(event) => return Ok(Some(event)),
            Step::NeedMore => return Ok(None),
            Step::Head(len) => len,
        };
        let head = buf.split_to(len).freeze();
        let ends = self.core.scanner.ends();
        parse::check_final_crlf(&head, len)?;
        let (start, end) = parse::line(&head, ends, 0)?;
        let line = parse::request_line(&head, start, end, self.core.limits.max_target_bytes)?;
        let fields = ends.len() - 1;
        let mut headers = Core::field_map(&mut self.core.spare, fields);
        let seen = parse::fields(&head, ends, 1, false, &mut self.core.names, &mut headers)?;

        if seen.hosts > 1 || (seen.hosts == 0 && line.version == Version::HTTP_11) {
            return Err(ErrorKind::InvalidHost.into());
        }
        // Decided from what the parser saw: the map is searched only for
        // the codings of a Transfer-Encoding and the tokens of a Connection.
        let mut framing = framing::request_framing_of(line.version, &seen, &headers)?;
        let connect = line.method == Method::CONNECT;
        if connect {
            framing = framing::connect_request_framing(framing)?;
        }
        let verdict = framing::connection_verdict_of(line.version, &seen, &headers);
        self.core.seen = seen;

        let mut request = Request::new(());
        *request.method_mut() = line.method;
        *request.uri_mut() = line.uri;
        *request.version_mut() = line.version;
        *request.headers_mut() = headers;
        self.core.start_body(framing, verdict);
        // What follows a CONNECT head is the tunnel's if a 2xx answers it;
        // otherwise the connection closes. Either way it is not HTTP.
        self.core.last = connect;
        Ok(Some(Event::Head {
            head: request,
            body: framing.body,
        }))
    }

    shared_queries!();
}

/// Decodes responses: the client side of a connection.
///
/// A response's framing depends on the request it answers (a response to
/// HEAD has no body whatever its fields say; a 2xx to CONNECT opens a
/// tunnel), so tell the decoder the method of each request in flight, in
/// order, with [`expect_response_to`](Self::expect_response_to). Without
/// one, a response is read as the answer to a GET.
///
/// ```
/// use bytes::BytesMut;
/// use h1proto::{BodyKind, Event, Limits, ResponseDecoder};
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
#[derive(Debug)]
pub struct ResponseDecoder {
    core: Core,
    in_flight: VecDeque<RequestKind>,
    interim: usize,
}

impl ResponseDecoder {
    /// A decoder enforcing `limits`.
    pub fn new(limits: Limits) -> Self {
        ResponseDecoder {
            core: Core::new(limits),
            in_flight: VecDeque::new(),
            interim: 0,
        }
    }

    /// Records that a request with this method was sent: the responses are
    /// matched to these calls in order.
    pub fn expect_response_to(&mut self, method: &Method) {
        self.in_flight.push_back(RequestKind::of(method));
    }

    /// How many requests recorded with
    /// [`expect_response_to`](Self::expect_response_to) have not had their
    /// final response decoded yet.
    pub fn requests_in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Decodes the next event from `buf`, splitting off the bytes it uses.
    ///
    /// `Ok(None)`: more input is needed (or, once [`is_closed`](Self::is_closed),
    /// no further message will be decoded and the bytes are left in `buf`).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Response<()>>>, Error> {
        // Returned as it is rather than re-wrapped, which would copy the
        // (large) event once more.
        let result = self.decode_inner(buf);
        if let Err(error) = &result {
            self.core.failed(error.kind());
        }
        result
    }

    fn decode_inner(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Response<()>>>, Error> {
        let len = match self.core.step(buf, false)? {
            Step::Event(event) => return Ok(Some(event)),
            Step::NeedMore => return Ok(None),
            Step::Head(len) => len,
        };
        let head = buf.split_to(len).freeze();
        let ends = self.core.scanner.ends();
        parse::check_final_crlf(&head, len)?;
        let (start, end) = parse::line(&head, ends, 0)?;
        let line = parse::status_line(&head, start, end)?;
        let fields = ends.len() - 1;
        let mut headers = Core::field_map(&mut self.core.spare, fields);
        // RFC 9112 section 5.2: a user agent replaces obs-fold with SP.
        let seen = parse::fields(&head, ends, 1, true, &mut self.core.names, &mut headers)?;

        let request = self.in_flight.front().copied().unwrap_or_default();
        let class = response_class(request, line.status);
        let framing =
            framing::response_framing_of(request, line.status, line.version, &seen, &headers)?;
        let verdict = framing::connection_verdict_of(line.version, &seen, &headers);
        self.core.seen = seen;

        let mut response = Response::new(());
        *response.status_mut() = line.status;
        *response.version_mut() = line.version;
        *response.headers_mut() = headers;
        let (rs, re) = line.reason;
        if line.status.canonical_reason().map(str::as_bytes) != Some(&head[rs..re]) {
            response
                .extensions_mut()
                .insert(ReasonPhrase::from_validated(head.slice(rs..re)));
        }

        match class {
            ResponseClass::Interim => {
                self.interim += 1;
                if self.interim > self.core.limits.max_interim_responses {
                    return Err(ErrorKind::TooManyInterimResponses.into());
                }
                self.core.scanner.reset();
                Ok(Some(Event::Interim(response)))
            }
            ResponseClass::Switch => {
                self.in_flight.pop_front();
                self.interim = 0;
                self.core
                    .start_body(framing, KeepAlive::Close(CloseReason::Upgraded));
                Ok(Some(Event::Head {
                    head: response,
                    body: BodyKind::Empty,
                }))
            }
            ResponseClass::Final => {
                self.in_flight.pop_front();
                self.interim = 0;
                self.core.start_body(framing, verdict);
                Ok(Some(Event::Head {
                    head: response,
                    body: framing.body,
                }))
            }
        }
    }

    shared_queries!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::HOST;

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
