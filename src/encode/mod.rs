//! Encoders: `http` messages in, framed byte segments out ([`Encoder`]
//! has the rules).

pub(crate) mod body;
pub(crate) mod head;
mod hop;
mod request;
mod response;
mod send;

use std::marker::PhantomData;
use std::time::SystemTime;

use bytes::{Bytes, BytesMut};
use http::header::HeaderMap;
use http::{Extensions, Request, Version};

use crate::chunk_ext::ChunkExtensions;
use crate::date::DateCache;
use crate::error::UsageError;
use crate::framing::{BodyKind, FramingFields, RequestKind, connection_verdict_of};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::segments::Segments;
use crate::wire::sealed::Sealed;
use crate::wire::{TrailerOrder, order_of};

use head::OrderRoom;
pub(crate) use head::Ordered;
pub use hop::remove_hop_by_hop;
pub(crate) use send::{IntoHead, IntoMessage};

use crate::role::{Client, Server};
use body::BodyEncoder;

/// Settings shared by both encoders.
///
/// ```
/// let mut config = h1proto::EncoderConfig::default();
/// config.coalesce_threshold = 4096;
/// let enc = h1proto::ResponseEncoder::new(config);
/// # let _ = enc;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncoderConfig {
    /// Body `Bytes` shorter than this are copied into the output queue's
    /// contiguous tail buffer; longer ones are queued as their own segment
    /// without a copy. Default: 4 KiB
    /// ([`Segments::DEFAULT_COALESCE_THRESHOLD`]).
    pub coalesce_threshold: usize,
    /// Refuse body bytes for a response to HEAD with
    /// [`UsageError::BodyNotAllowed`]
    /// instead of counting and dropping them. Default: `false`, so a
    /// handler written for GET answers HEAD unchanged.
    pub strict_head_body: bool,
    /// Write every field name in title case (`Content-Type`,
    /// `X-Request-Id`): the first letter and each letter after a `-` in
    /// upper case. It applies to the caller's fields, the ones the encoder
    /// adds (`Host`, `Content-Length`, `Transfer-Encoding`, `Connection`)
    /// and trailers. Field names are case-insensitive (RFC 9110 section
    /// 5.1); this is for peers that wrongly compare them exactly. Default:
    /// `false`, names are written as `http` holds them (lower case).
    pub title_case_fields: bool,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        EncoderConfig {
            coalesce_threshold: Segments::DEFAULT_COALESCE_THRESHOLD,
            strict_head_body: false,
            title_case_fields: false,
        }
    }
}

/// What the connection knows about the request a response answers.
///
/// A connection fills it in; a caller using the encoder alone builds it with
/// [`ResponseContext::for_request`] or by hand. The default is a GET from an
/// HTTP/1.1 client that keeps the connection open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResponseContext {
    /// The kind of request method: HEAD and CONNECT change the framing.
    pub request: RequestKind,
    /// The HTTP version of the request. No chunked coding and no 1xx go to
    /// an HTTP/1.0 peer.
    pub peer_version: Version,
    /// Whether the connection may carry another exchange. When it is
    /// [`KeepAlive::Close`], the response says `Connection: close`.
    pub keep_alive: KeepAlive,
}

impl ResponseContext {
    /// The context for answering `req`: its method, its version, and the
    /// keep-alive verdict of its version and `Connection` field.
    pub fn for_request<T>(req: &Request<T>) -> Self {
        ResponseContext {
            request: RequestKind::of(req.method()),
            peer_version: req.version(),
            keep_alive: connection_verdict_of(req.version(), &FramingFields::of(req.headers())),
        }
    }
}

/// What an encoder reads of a head besides what its role writes: the
/// extensions (a field order), then its maps, kept for reuse.
pub trait HeadMaps {
    /// The head's extensions, read before it is written.
    fn extensions(&self) -> &Extensions;
    /// The head's field and extension maps.
    fn into_maps(self) -> (HeaderMap, Extensions);
}

/// What the encoder of a role, [`Client`](crate::role::Client) or
/// [`Server`](crate::role::Server), does differently: how the heads it
/// sends are planned and written.
pub trait EncodeRole: Sized {
    /// The head this role sends: `request::Parts` or `response::Parts`.
    type Head: HeadMaps;
    /// What the encoder must know besides the head: nothing for a
    /// request; for a response, the request it answers.
    type Context;

    /// Writes the head at the end of `out`: the start line, the fields (in
    /// `order` when one is asked for), the fields the encoder adds and
    /// the empty line; and decides how its body is framed. `full` is the
    /// body length when the whole body is known, `date` the `Date` line
    /// the encoder has (a response without one of its own gets it). Both
    /// roles write the start line, then the fields with
    /// `write_head`, deciding from what was written. Returns the body framer
    /// and the keep-alive verdict the message leaves (an encoder whose
    /// last final message closes the connection takes no more), or `None`
    /// for an interim response, which leaves it as it was.
    ///
    /// # Errors
    ///
    /// The head cannot be sent as it is; `out` is left as it was.
    fn encode_head(
        out: &mut BytesMut,
        head: &Self::Head,
        ctx: &Self::Context,
        config: &EncoderConfig,
        full: Option<u64>,
        date: Option<&[u8; crate::date::LINE]>,
        order: Option<Ordered<'_>>,
    ) -> Result<(BodyEncoder, Option<KeepAlive>), UsageError>;
}

/// Encodes requests (the client side): an [`Encoder`] in the `Client`
/// role.
///
/// Requests go whole ([`send_request`](Encoder::send_request)) or as a head
/// ([`send_head`](Encoder::send_head)) followed by
/// [`send_data`](Encoder::send_data) calls and [`finish`](Encoder::finish).
///
/// The request-target form follows the URI: origin-form (`/path?query`) for
/// a URI without scheme and authority, absolute-form
/// (`http://host/path`, as sent to proxies) for a URI with both,
/// authority-form (`host:port`) for CONNECT, and `*` for an OPTIONS whose
/// URI is `*`. An HTTP/1.1 request without a `Host` field gets one from the
/// URI's authority; without either it is refused
/// ([`UsageError::InvalidHead`]).
///
/// ```
/// use bytes::Buf;
/// use h1proto::{EncoderConfig, RequestEncoder};
///
/// let mut enc = RequestEncoder::new(EncoderConfig::default());
/// let req = http::Request::post("http://example.com/upload").body("data").unwrap();
/// enc.send_request(req).unwrap();
/// // A request without a body needs none: the builder will do.
/// enc.send_request(http::Request::get("http://example.com/")).unwrap();
/// let out = enc.output();
/// let bytes = out.copy_to_bytes(out.remaining());
/// assert_eq!(
///     &bytes[..],
///     &b"POST http://example.com/upload HTTP/1.1\r\nhost: example.com\r\ncontent-length: 4\r\n\r\ndata\
///        GET http://example.com/ HTTP/1.1\r\nhost: example.com\r\n\r\n"[..]
/// );
/// ```
pub type RequestEncoder = Encoder<Client>;

/// Encodes responses (the server side): an [`Encoder`] in the `Server`
/// role.
///
/// One encoder serves one connection: responses are sent one after the
/// other, each whole ([`send_response`](Encoder::send_response)) or as a
/// head ([`send_head`](Encoder::send_head)) followed by
/// [`send_data`](Encoder::send_data) calls and [`finish`](Encoder::finish).
/// Interim (1xx) responses may precede a final one. What the encoder must
/// know of the request being answered is a [`ResponseContext`].
pub type ResponseEncoder = Encoder<Server>;

/// Encodes messages of one role into an output queue of [`Segments`]:
/// requests for the `Client` role ([`RequestEncoder`]), responses for the
/// `Server` role ([`ResponseEncoder`]).
///
/// One encoder serves one connection: messages are sent one after the
/// other, each whole (`send_request` / `send_response`) or as a head
/// (`send_head`) followed by [`send_data`](crate::Sender::send_data) calls and
/// [`finish`](crate::Sender::finish). Everything but the head is the same for both
/// roles.
///
/// A [`ResponseEncoder`] (server side) or [`RequestEncoder`] (client side)
/// turns a message into HTTP/1.1 bytes and appends them to its output queue,
/// a [`Segments`]. Nothing is written anywhere: the caller drains the queue
/// into its socket with a vectored write whenever it likes, and everything
/// queued since the last drain leaves together (writes are always corked).
/// Both are one generic [`Encoder`] in one of two roles: all but the
/// head is shared.
///
/// # Sending a message
///
/// - **One call** ([`send_response`](Encoder::send_response),
///   [`send_request`](Encoder::send_request)): the head and the complete
///   body. The body is any `Into<Bytes>` (`&'static str`, `&'static [u8]`,
///   `String`, `Vec<u8>`, `Bytes`); all go through the same path. A message
///   without a body is given as its `http` builder or its `Parts`.
/// - **Streaming**: `send_head` (a `Request<()>` / `Response<()>`, a
///   builder or `Parts`), then `send_data` any number of times, then
///   `finish` with optional trailers.
///
/// For proxies, [`EncoderConfig::title_case_fields`] writes field names in
/// title case, and [`remove_hop_by_hop`] strips the fields that must not
/// be forwarded.
///
/// # Framing
///
/// When the caller's head has no `Content-Length` and no
/// `Transfer-Encoding`, the encoder chooses: `Content-Length` when the whole
/// body is known (one call); `Transfer-Encoding: chunked` when streaming to
/// an HTTP/1.1 peer; a close-delimited body and `Connection: close` when
/// streaming a response to an HTTP/1.0 peer. Framing fields the caller gave
/// are kept and enforced: writing more or fewer bytes than the declared
/// `Content-Length` is a [`UsageError`], never a truncation. (One exception:
/// a caller's `Transfer-Encoding: chunked` to an HTTP/1.0 peer, which cannot
/// read it, becomes the framing the encoder would choose itself.) A call
/// that fails leaves the output queue and the encoder as they were. The
/// rules are the decoders' own, from [`crate::framing`].
///
/// Responses to HEAD, 1xx, 204, 304 and 2xx answers to CONNECT are a head
/// only. A response to HEAD keeps the `Content-Length` a GET would carry,
/// computed from the body passed to `send_response` if the caller did not
/// give one; body bytes passed for a HEAD response are counted and dropped,
/// so that code written for GET answers HEAD correctly unchanged (set
/// [`EncoderConfig::strict_head_body`] to refuse them instead).
///
/// `docs/encoding.md` has the full table.
///
/// # Example
///
/// ```
/// use std::io::{Cursor, IoSlice, Write};
/// use bytes::Buf;
/// use h1proto::{EncoderConfig, ResponseContext, ResponseEncoder};
///
/// let mut enc = ResponseEncoder::new(EncoderConfig::default());
/// let res = http::Response::builder()
///     .header("content-type", "text/plain")
///     .body("Hello, world!")
///     .unwrap();
/// enc.send_response(res, ResponseContext::default()).unwrap();
///
/// // Head and body are one contiguous segment: one write.
/// assert_eq!(enc.output().segment_count(), 1);
///
/// let mut socket = Cursor::new(Vec::new());
/// let out = enc.output();
/// while out.has_remaining() {
///     let mut slices = [IoSlice::new(&[]); 8];
///     let n = out.io_slices(&mut slices);
///     let written = socket.write_vectored(&slices[..n]).unwrap();
///     out.advance(written);
/// }
/// assert_eq!(
///     socket.into_inner(),
///     b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 13\r\n\r\nHello, world!"
/// );
/// ```
#[derive(Debug)]
pub struct Encoder<R: EncodeRole> {
    config: EncoderConfig,
    out: Segments,
    /// The body framer of the message in progress, if any. Without one,
    /// the encoder takes a new message while the last final message's
    /// verdict lets the connection carry it.
    body: Option<BodyEncoder>,
    /// Chunk extensions for the next chunk of the body being sent. Boxed:
    /// rare, and every connection's encoder would carry the room.
    extensions: Option<Box<ChunkExtensions>>,
    keep_alive: KeepAlive,
    /// The emptied field map of the last head written, for reuse.
    spare: Option<HeaderMap>,
    /// Its extension map, when it held any (one without ever holding an
    /// extension has nothing allocated to reuse).
    spare_extensions: Option<http::Extensions>,
    /// The room of a write in an order, kept for reuse.
    room: OrderRoom,
    /// The `Date` a response gets, when the caller gave the clock.
    date: Option<DateCache>,
    role: PhantomData<R>,
}

impl<R: EncodeRole> Encoder<R> {
    /// A new encoder with an empty output queue.
    pub fn new(config: EncoderConfig) -> Self {
        Encoder {
            out: Segments::with_threshold(config.coalesce_threshold),
            config,
            body: None,
            extensions: None,
            keep_alive: KeepAlive::Reusable,
            spare: None,
            spare_extensions: None,
            room: OrderRoom::default(),
            date: None,
            role: PhantomData,
        }
    }

    /// Queues body data of the message being streamed. An empty `data`
    /// queues nothing (it never ends a chunked body).
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] without a head in progress;
    /// [`UsageError::BodyTooLong`] past the declared `Content-Length`;
    /// [`UsageError::BodyNotAllowed`] for a message that has no body (or,
    /// with [`EncoderConfig::strict_head_body`], a response to HEAD). The
    /// output queue is left untouched.
    pub fn send_data(&mut self, data: impl Into<Bytes>) -> Result<(), UsageError> {
        match &mut self.body {
            Some(body) => body.data(&mut self.out, data.into(), &mut self.extensions),
            None => Err(UsageError::WrongState),
        }
    }

    /// Puts chunk extensions on the next chunk of the body being streamed:
    /// the chunk of the next non-empty [`send_data`](crate::Sender::send_data), or
    /// the last-chunk that [`finish`](crate::Sender::finish) writes. Extensions
    /// given twice before a chunk is written go on it together. A proxy
    /// forwards what its decoder reads with
    /// [`Event::ChunkExtensions`](crate::Event::ChunkExtensions) by
    /// passing it here.
    ///
    /// ```
    /// use bytes::Buf;
    /// use h1proto::{ChunkExtensions, RequestEncoder};
    ///
    /// let mut enc = RequestEncoder::default();
    /// enc.send_head(http::Request::post("http://example.com/up")).unwrap();
    /// enc.send_chunk_extensions(ChunkExtensions::new(";sig=ab12").unwrap()).unwrap();
    /// enc.send_data("hello").unwrap();
    /// enc.send_chunk_extensions(ChunkExtensions::new(";done").unwrap()).unwrap();
    /// enc.finish(None).unwrap();
    /// let out = enc.output();
    /// let bytes = out.copy_to_bytes(out.remaining());
    /// assert!(bytes.ends_with(b"\r\n\r\n5;sig=ab12\r\nhello\r\n0;done\r\n\r\n"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`UsageError::WrongState`] without a head in progress;
    /// [`UsageError::ChunkExtensionsNotAllowed`] for a body that is not
    /// chunked (for a response to HEAD they are dropped with its data).
    pub fn send_chunk_extensions(&mut self, extensions: ChunkExtensions) -> Result<(), UsageError> {
        // For a response to HEAD they are dropped with its data.
        match &self.body {
            None => return Err(UsageError::WrongState),
            Some(BodyEncoder::Chunked) if !extensions.is_empty() => {}
            Some(BodyEncoder::Chunked | BodyEncoder::Discard { .. }) => return Ok(()),
            Some(_) => return Err(UsageError::ChunkExtensionsNotAllowed),
        }
        self.extensions = Some(Box::new(match self.extensions.take() {
            None => extensions,
            Some(before) => {
                let both = [before.as_bytes(), extensions.as_bytes()].concat();
                ChunkExtensions::from_validated(both.into())
            }
        }));
        Ok(())
    }

    /// Ends the message being streamed, with trailers if it is chunked
    /// (trailers given for a response to HEAD are checked and dropped).
    ///
    /// # Errors
    ///
    /// [`UsageError::BodyTooShort`] before the declared `Content-Length`
    /// was sent; [`UsageError::TrailersNotAllowed`] for trailers on a body
    /// that is not chunked; [`UsageError::ForbiddenTrailer`] for a trailer
    /// field that carries framing, routing or control data;
    /// [`UsageError::WrongState`] without a head in progress. The output
    /// queue is left untouched.
    pub fn finish(&mut self, trailers: Option<HeaderMap>) -> Result<(), UsageError> {
        self.end(trailers.as_ref(), None)
    }

    /// [`finish`](crate::Sender::finish) with trailers written in `order`: a
    /// [`FieldOrder`](crate::wire::FieldOrder) the caller built, or the
    /// [`WireTrailers`](crate::wire::WireTrailers) of a trailer section a
    /// decoder received, whose order and spelling are kept. The map stays
    /// authoritative, by the rule of
    /// [`FieldOrder`](crate::wire::FieldOrder): a name of the order whose
    /// value the map no longer has writes nothing, and the map's values
    /// no name stood for follow, in the map's order. The checks are those
    /// of `finish`.
    ///
    /// ```
    /// use bytes::Buf;
    /// use h1proto::RequestEncoder;
    /// use h1proto::wire::FieldOrder;
    ///
    /// let mut enc = RequestEncoder::default();
    /// enc.send_head(http::Request::post("http://example.com/up")).unwrap();
    /// let mut trailers = http::HeaderMap::new();
    /// trailers.append("x-a", "1".parse().unwrap());
    /// trailers.append("x-b", "2".parse().unwrap());
    /// let order = FieldOrder::from_names(["X-B", "X-A"]).unwrap();
    /// enc.finish_in_order(trailers, &order).unwrap();
    /// let out = enc.output();
    /// let bytes = out.copy_to_bytes(out.remaining());
    /// assert!(bytes.ends_with(b"\r\n\r\n0\r\nX-B: 2\r\nX-A: 1\r\n\r\n"));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`finish`](crate::Sender::finish): the output queue is left untouched.
    pub fn finish_in_order(
        &mut self,
        trailers: HeaderMap,
        order: &impl TrailerOrder,
    ) -> Result<(), UsageError> {
        self.end(Some(&trailers), Some(order))
    }

    /// Ends the body being sent: `finish` and `finish_in_order`.
    fn end(
        &mut self,
        trailers: Option<&HeaderMap>,
        order: Option<&dyn Sealed>,
    ) -> Result<(), UsageError> {
        let Some(body) = &mut self.body else {
            return Err(UsageError::WrongState);
        };
        let room = &mut self.room;
        let order = order.map(|names| Ordered { names, room });
        body.finish(
            &mut self.out,
            trailers,
            self.config.title_case_fields,
            &mut self.extensions,
            order,
        )?;
        self.body = None;
        Ok(())
    }

    /// The output queue: drain it into the connection.
    pub fn output(&mut self) -> &mut Segments {
        &mut self.out
    }

    /// The output queue, to look at.
    pub(crate) fn queued(&self) -> &Segments {
        &self.out
    }

    /// `true` when no message is in progress.
    pub fn is_finished(&self) -> bool {
        self.body.is_none()
    }

    /// Forgets the message in progress or just completed, whose bytes the
    /// connection withdrew from the output queue: the next head may be
    /// sent.
    pub(crate) fn withdraw(&mut self) {
        self.body = None;
        self.extensions = None;
        // Before it, the connection could carry a message.
        self.keep_alive = KeepAlive::Reusable;
    }

    /// The framing of the body in progress, if any.
    pub fn body_kind(&self) -> Option<BodyKind> {
        self.body.as_ref().map(BodyEncoder::kind)
    }

    /// The keep-alive verdict of the last final message sent (known from
    /// its head on): whether the connection may carry another exchange.
    /// For a request, `Close` when it said `Connection: close` or was
    /// HTTP/1.0 without `keep-alive`.
    pub fn keep_alive(&self) -> KeepAlive {
        self.keep_alive
    }

    /// Takes the field map of the last head queued, emptied but with its
    /// allocations, for reuse: a connection hands it to its decoder
    /// (`give_spare_fields`), so the next head it decodes allocates no map.
    /// `None` once taken, or before any head.
    pub fn take_spare_fields(&mut self) -> Option<HeaderMap> {
        self.spare.take()
    }

    /// Takes the extension map of the last head queued, when it held any
    /// (a forwarded head's [`WireHead`](crate::wire::WireHead), say), for
    /// reuse: a connection hands it to its decoder
    /// ([`Decoder::give_spare_extensions`](crate::Decoder::give_spare_extensions)),
    /// so that the next head decoded with the wire view allocates no map.
    /// `None` once taken, before any head, or when the head had none.
    pub fn take_spare_extensions(&mut self) -> Option<http::Extensions> {
        self.spare_extensions.take()
    }

    /// Queues a head, and its whole body when `body` is `Some`; returns the
    /// framing of the body and the length of the head, which is queued in
    /// one piece where the queue ended (what a server connection amends
    /// it by). Leaves everything untouched on error. The head
    /// is only read: its field and extension maps are then its caller's
    /// to reuse. What a connection calls once it has looked at the head:
    /// it hands the maps to its decoder itself.
    #[inline]
    pub(crate) fn write_message(
        &mut self,
        head: &R::Head,
        ctx: R::Context,
        body: Option<Bytes>,
    ) -> Result<(BodyKind, usize), UsageError> {
        if self.body.is_some() || !self.keep_alive.is_reusable() {
            return Err(UsageError::WrongState);
        }
        let queued = self.out.len();
        let full = body.as_ref().map(|b| b.len() as u64);
        let date = self.date.as_ref().map(|date| &date.line);
        let room = &mut self.room;
        let order = order_of(head.extensions()).map(|names| Ordered { names, room });
        let config = &self.config;
        let (framer, verdict) = self
            .out
            .append(|out| R::encode_head(out, head, &ctx, config, full, date, order))?;
        // The whole body was checked against the framing before the head
        // was written: from here on nothing fails, so nothing half-written
        // is left behind.
        let (kind, head_len) = (framer.kind(), self.out.len() - queued);
        if let Some(body) = body {
            framer.whole(&mut self.out, body);
        } else if !matches!(
            verdict,
            None | Some(KeepAlive::Close(CloseReason::Switched))
        ) {
            // Not an interim response or a protocol switch (101, 2xx to
            // CONNECT), which are complete with their head.
            self.body = Some(framer);
        }
        self.keep_alive = verdict.unwrap_or(self.keep_alive);
        Ok((kind, head_len))
    }

    /// [`write_message`](Self::write_message), then the head's field and
    /// extension maps kept, so that their allocations can serve another
    /// message (see `take_spare_fields` and `take_spare_extensions`; the
    /// decoder empties the extensions when it takes them). What the send
    /// methods call.
    #[inline]
    pub(crate) fn send_message(
        &mut self,
        head: R::Head,
        ctx: R::Context,
        body: Option<Bytes>,
    ) -> Result<BodyKind, UsageError> {
        let (kind, _) = self.write_message(&head, ctx, body)?;
        let (mut fields, extensions) = head.into_maps();
        fields.clear();
        self.spare = Some(fields);
        if !extensions.is_empty() {
            self.spare_extensions = Some(extensions);
        }
        Ok(kind)
    }
}

impl ResponseEncoder {
    /// Gives the encoder the wall clock: every final response (and 101)
    /// queued from now on carries `Date` with `now` in IMF-fixdate form
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 section 6.6.1), unless
    /// the caller's head has its own `Date`, which is kept. Interim (1xx)
    /// responses get none. The text is formatted again only when `now`
    /// is in another second than the last, so calling this before every
    /// response costs a comparison. `None` stops adding `Date`; an
    /// encoder never given a clock adds none (RFC 9110: a server without
    /// a clock sends none).
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use bytes::Buf;
    /// use h1proto::{EncoderConfig, ResponseContext, ResponseEncoder};
    ///
    /// let mut enc = ResponseEncoder::new(EncoderConfig::default());
    /// enc.set_date(Some(UNIX_EPOCH + Duration::from_secs(784_111_777)));
    /// enc.send_response(http::Response::new("hi"), ResponseContext::default()).unwrap();
    /// let out = enc.output();
    /// assert_eq!(
    ///     &out.copy_to_bytes(out.remaining())[..],
    ///     b"HTTP/1.1 200 OK\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\ncontent-length: 2\r\n\r\nhi"
    /// );
    /// ```
    #[inline]
    pub fn set_date(&mut self, now: Option<SystemTime>) {
        match (now, &mut self.date) {
            (Some(now), Some(date)) => date.update(now),
            (now, date) => *date = now.map(DateCache::new),
        }
    }
}

impl<R: EncodeRole> Default for Encoder<R> {
    fn default() -> Self {
        Self::new(EncoderConfig::default())
    }
}
