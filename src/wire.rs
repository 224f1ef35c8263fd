//! The wire view of a head: its field lines as they were received, and the
//! order and spelling an encoder writes a head's fields in.
//!
//! An `http` message keeps field names in lower case and groups the values
//! of one name together: `A: 1`, `b: 2`, `a: 3` come out of a `HeaderMap`
//! as `a: 1`, `a: 3`, `b: 2`. Names are case-insensitive and only the order
//! of lines of one name has meaning (RFC 9110 section 5.3), but a proxy
//! that wants to forward a message as it came, a tool that shows what a
//! peer sent, and peers that wrongly depend on order or case need the
//! lines as received.
//!
//! - **Decoding.** With the wire view on
//!   ([`Decoder::set_wire_view`](crate::Decoder::set_wire_view),
//!   [`Config::wire_view`](crate::Config::wire_view)), every decoded head,
//!   interim responses included, carries a [`WireHead`] extension: the
//!   head's bytes as received, read on demand. It costs one reference count
//!   and the extension; nothing is copied, and nothing is parsed twice
//!   until it is read. Without the setting nothing is attached.
//! - **Trailers.** With the wire view on, the trailer section of a
//!   chunked body is kept as received too, as [`WireTrailers`]: from the
//!   decoder ([`Decoder::wire_trailers`](crate::Decoder::wire_trailers)),
//!   a connection (`wire_trailers`), a session (`wire_trailers`, and in
//!   the extensions of what `next_full_request` / `next_full_response`
//!   return, next to [`TrailerFields`](crate::TrailerFields)). The event
//!   itself stays [`Event::Trailers`](crate::Event::Trailers) with its
//!   `HeaderMap`. Without the setting nothing is kept.
//! - **Encoding.** An encoder writes the fields of a head that carries a
//!   [`FieldOrder`] (one the caller built) or a [`WireHead`] (one a decoder
//!   attached) in that order and spelling. Trailers are written in an
//!   order with `finish_in_order`
//!   ([`Encoder::finish_in_order`](crate::Encoder::finish_in_order), and
//!   the connections' and sessions' methods of that name), given a
//!   [`FieldOrder`] or a [`WireTrailers`] ([`TrailerOrder`]). The
//!   `HeaderMap` stays authoritative: see [`FieldOrder`] for the rule.
//!
//! ```
//! use bytes::{Buf, BytesMut};
//! use h1proto::wire::WireHead;
//! use h1proto::{Event, Limits, RequestDecoder, RequestEncoder};
//!
//! let mut dec = RequestDecoder::new(Limits::default());
//! dec.set_wire_view(true);
//! let mut buf = BytesMut::from(&b"GET /a HTTP/1.1\r\nHost: x\r\nX-B: 1\r\nx-a: 2\r\nX-b: 3\r\n\r\n"[..]);
//! let Some(Event::Head { head, .. }) = dec.decode(&mut buf)? else { panic!() };
//!
//! let wire = head.extensions().get::<WireHead>().unwrap();
//! let lines: Vec<(&[u8], &[u8])> = wire.fields().collect();
//! assert_eq!(lines, [
//!     (&b"Host"[..], &b"x"[..]),
//!     (b"X-B", b"1"),
//!     (b"x-a", b"2"),
//!     (b"X-b", b"3"),
//! ]);
//! assert_eq!(wire.target(), Some(&b"/a"[..]));
//!
//! // Sent again, the head keeps its order and spelling.
//! let mut enc = RequestEncoder::default();
//! enc.send_request(head.map(|()| "")).unwrap();
//! let out = enc.output();
//! assert_eq!(
//!     out.copy_to_bytes(out.remaining()),
//!     &b"GET /a HTTP/1.1\r\nHost: x\r\nX-B: 1\r\nx-a: 2\r\nX-b: 3\r\n\r\n"[..]
//! );
//! # Ok::<(), h1proto::Error>(())
//! ```

use std::fmt;
use std::iter::FusedIterator;
use std::ops::Range;

use bytes::Bytes;

use crate::error::UsageError;
use crate::grammar::is_token;
use crate::head::reader::MAX_NAME;
use crate::head::record::{Field, Record};

/// A decoded head as it was received: its start line and its field lines
/// in order, with their spelling, repeated fields apart and in place.
///
/// A decoder attaches it to the `http::Request<()>` / `http::Response<()>`
/// it decodes (as an extension) when its wire view is on. It holds the
/// head's bytes (a `Bytes` sharing the read buffer, like the field values
/// of the message) and reads them on demand: [`fields`](Self::fields)
/// walks the lines each time it is called. Every slice it hands out is
/// part of [`bytes`](Self::bytes); `bytes().slice_ref(slice)` turns one
/// into a `Bytes` without a copy.
///
/// Only a decoder makes one, and only of a head it accepted. What it
/// shows is what was received, even where the message differs:
///
/// - a field value is the bytes between the colon and the line end
///   without the spaces and tabs around it; an obs-folded value (accepted
///   in responses, and in requests with the `obs_fold` tolerance) spans its
///   continuation lines, line breaks included, where the `HeaderMap` holds
///   the value with each fold replaced by one SP;
/// - lines that `skip_invalid_fields` skipped are not field lines (they
///   are still in [`bytes`](Self::bytes)); with `space_before_colon`, the
///   name is given without the whitespace before its colon;
/// - a `Content-Length` that `chunked_with_content_length` removed from the
///   message is still a field line here.
///
/// Encoders write a message that carries one in its order and spelling
/// ([`FieldOrder`] has the rule), and write the request-target as
/// received while the message's `Uri` still equals it. The trailer
/// section of a chunked body has a view of its own, [`WireTrailers`].
#[derive(Clone)]
pub struct WireHead {
    bytes: Bytes,
    /// A request's head, or a response's.
    request: bool,
    /// What the reader accepted of it: the start line's parts and the
    /// field lines.
    record: Record,
}

impl WireHead {
    /// The view of `bytes`, a head the reader accepted, whose record is
    /// `record`.
    pub(crate) fn new(bytes: Bytes, request: bool, record: &Record) -> Self {
        WireHead {
            bytes,
            request,
            record: record.clone(),
        }
    }

    /// Makes this view the view of another head (as [`new`](Self::new)
    /// does), in its room: a decoder writes the next head's view over one
    /// a sent message gave back, allocating nothing. The field lines are
    /// not copied: the view takes `record`'s and leaves its own room (a
    /// parked view's, empty) in their place, for the reader's next
    /// section.
    pub(crate) fn renew(&mut self, bytes: Bytes, request: bool, record: &mut Record) {
        self.bytes = bytes;
        self.request = request;
        std::mem::swap(&mut self.record.fields, &mut record.fields);
        let fields = std::mem::take(&mut self.record.fields);
        self.record = Record { fields, ..*record };
    }

    /// Lets go of the head's bytes (the buffer they share), keeping the
    /// room for [`renew`](Self::renew). The view shows nothing until then.
    pub(crate) fn park(&mut self) {
        self.bytes = Bytes::new();
        self.record.fields.clear();
    }

    /// The whole head as received: start line, field lines and the empty
    /// line that ends them (empty lines before a request line are not
    /// part of it).
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The start line (request line or status line), without its line
    /// end.
    pub fn start_line(&self) -> &[u8] {
        &self.bytes[..self.record.line_end]
    }

    /// The method of a request, as received (`GET`, `PROPFIND`); `None`
    /// for a response.
    pub fn method(&self) -> Option<&[u8]> {
        self.request.then(|| &self.bytes[..self.record.method_end])
    }

    /// The status code of a response (`200`, `103`); `None` for a
    /// request.
    pub fn status(&self) -> Option<http::StatusCode> {
        let status = http::StatusCode::from_u16(self.record.status).ok();
        status.filter(|_| !self.request)
    }

    /// The HTTP version of the start line: `HTTP/1.0`, or `HTTP/1.1` for
    /// `HTTP/1.1` and the higher minors read as it.
    pub fn version(&self) -> http::Version {
        self.record.version
    }

    /// The request-target as received (`/a%2Fb?q`, `http://host`,
    /// `host:443`, `*`); `None` for a response.
    pub fn target(&self) -> Option<&[u8]> {
        let (from, to) = self.record.target;
        self.request.then(|| &self.bytes[from..to])
    }

    /// The reason phrase as received, possibly empty; `None` for a
    /// request. (The [`ReasonPhrase`](crate::ReasonPhrase) extension holds
    /// it too, when it is not the canonical one.)
    pub fn reason(&self) -> Option<&[u8]> {
        let (from, to) = self.record.reason;
        (!self.request).then(|| &self.bytes[from..to])
    }

    /// The field lines in the order received, as `(name, value)`: the
    /// name as spelled, the value without the whitespace around it.
    pub fn fields(&self) -> FieldLines<'_> {
        FieldLines {
            bytes: &self.bytes,
            fields: self.record.fields.iter(),
        }
    }
}

/// Two views are equal when they show the same lines of the same bytes.
impl PartialEq for WireHead {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes && self.record.fields == other.record.fields
    }
}

impl Eq for WireHead {}

impl fmt::Debug for WireHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WireHead")
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// The field lines of a [`WireHead`], in the order received:
/// `(name, value)` pairs of byte slices of the head.
///
/// ```
/// # use bytes::BytesMut;
/// # use h1proto::{Event, Limits, ResponseDecoder, wire::WireHead};
/// let mut dec = ResponseDecoder::new(Limits::default());
/// dec.set_wire_view(true);
/// let mut buf = BytesMut::from(
///     &b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nContent-Length: 0\r\nSet-Cookie: b=2\r\n\r\n"[..],
/// );
/// let Some(Event::Head { head, .. }) = dec.decode(&mut buf)? else { panic!() };
/// let wire = head.extensions().get::<WireHead>().unwrap();
/// let cookies: Vec<&[u8]> = wire
///     .fields()
///     .filter(|(name, _)| name.eq_ignore_ascii_case(b"set-cookie"))
///     .map(|(_, value)| value)
///     .collect();
/// assert_eq!(cookies, [&b"a=1"[..], b"b=2"]);
/// # Ok::<(), h1proto::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct FieldLines<'a> {
    bytes: &'a [u8],
    fields: std::slice::Iter<'a, Field>,
}

impl<'a> Iterator for FieldLines<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let field = self.fields.next()?;
        Some((&self.bytes[field.name()], &self.bytes[field.value()]))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.fields.size_hint()
    }
}

impl FusedIterator for FieldLines<'_> {}

/// The trailer section of a chunked body as it was received: its field
/// lines in order, with their spelling, repeated fields apart and in
/// place.
///
/// A decoder with its wire view on keeps one for the trailer section it
/// hands out as [`Event::Trailers`](crate::Event::Trailers), read with
/// [`Decoder::wire_trailers`](crate::Decoder::wire_trailers) (and through
/// connections and sessions, see `docs/proxying.md`). Like [`WireHead`]
/// it holds the section's bytes, shared with the read buffer, and reads
/// them on demand; what it shows follows the same rules (values without
/// the whitespace around them, lines `skip_invalid_fields` skipped left
/// out, names without the whitespace `space_before_colon` allowed before
/// the colon).
///
/// An encoder writes trailers in its order and spelling with
/// `finish_in_order` ([`Encoder::finish_in_order`](crate::Encoder::finish_in_order)):
/// the `HeaderMap` stays authoritative, by the rule of [`FieldOrder`].
///
/// ```
/// use bytes::BytesMut;
/// use h1proto::{Event, Limits, RequestDecoder};
///
/// let mut dec = RequestDecoder::new(Limits::default());
/// dec.set_wire_view(true);
/// let mut buf = BytesMut::from(
///     &b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
///        0\r\nX-B: 1\r\nx-a: 2\r\nX-b: 3\r\n\r\n"[..],
/// );
/// let Some(Event::Head { .. }) = dec.decode(&mut buf)? else { panic!() };
/// let Some(Event::Trailers(map)) = dec.decode(&mut buf)? else { panic!() };
/// assert_eq!(map.get_all("x-b").iter().count(), 2);
///
/// let wire = dec.wire_trailers().unwrap();
/// let lines: Vec<(&[u8], &[u8])> = wire.fields().collect();
/// assert_eq!(lines, [(&b"X-B"[..], &b"1"[..]), (b"x-a", b"2"), (b"X-b", b"3")]);
/// # Ok::<(), h1proto::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WireTrailers {
    bytes: Bytes,
    fields: Box<[Field]>,
}

impl WireTrailers {
    /// The view of `bytes`, a trailer section the reader accepted, whose
    /// record is `record`.
    pub(crate) fn new(bytes: Bytes, record: &Record) -> Self {
        WireTrailers {
            bytes,
            fields: record.fields.as_slice().into(),
        }
    }

    /// The whole trailer section as received: its field lines and the
    /// empty line that ends it (the last-chunk before it is not part of
    /// it).
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The field lines in the order received, as `(name, value)`: the
    /// name as spelled, the value without the whitespace around it.
    pub fn fields(&self) -> FieldLines<'_> {
        FieldLines {
            bytes: &self.bytes,
            fields: self.fields.iter(),
        }
    }
}

impl fmt::Debug for WireTrailers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WireTrailers")
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// The order and spelling in which an encoder writes a head's fields: a
/// list of field names, as a message extension.
///
/// Put one on a message to send (`extensions_mut().insert(order)`), or
/// send a message that carries a decoder's [`WireHead`]: the encoder then
/// writes the fields in that order, with those names as spelled. A
/// `FieldOrder` wins over a `WireHead` on the same message. The values
/// always come from the message's `HeaderMap`, which stays authoritative:
///
/// 1. The names are matched against the map by name (case-insensitively)
///    and occurrence: the k-th entry for a name stands for the k-th value
///    of that name in the map. Each entry that has its value in the map is
///    written there, spelled as the entry spells it, with the map's value.
///    An entry whose value the map no longer has (a field removed after
///    decoding, such as a hop-by-hop field or a `Content-Length` the
///    encoder leaves out) writes nothing.
/// 2. Then the values the entries did not stand for (fields added to the
///    map, such as `Via`, or more values of a name than it has entries),
///    in the map's order, spelled as the map holds them or in title case
///    with [`EncoderConfig::title_case_fields`](crate::EncoderConfig::title_case_fields).
/// 3. Then the fields the encoder adds itself (`Content-Length`,
///    `Transfer-Encoding: chunked`, `Connection`), as without an order. A
///    `Host` the request encoder takes from the URI comes first, as
///    without an order.
///
/// So a value edited in the map is written in the place and spelling of
/// the line it replaced, and the values of one name keep their order.
///
/// ```
/// use bytes::Buf;
/// use h1proto::RequestEncoder;
/// use h1proto::wire::FieldOrder;
///
/// let order = FieldOrder::from_names(["Host", "Accept"]).unwrap();
/// let req = http::Request::get("/")
///     .header("accept", "*/*")
///     .header("host", "example.com")
///     .header("x-trace", "1")
///     .extension(order);
///
/// let mut enc = RequestEncoder::default();
/// enc.send_request(req).unwrap();
/// let out = enc.output();
/// assert_eq!(
///     out.copy_to_bytes(out.remaining()),
///     &b"GET / HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nx-trace: 1\r\n\r\n"[..]
/// );
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct FieldOrder {
    /// The names, one after the other.
    names: Vec<u8>,
    /// Where each name is in `names`.
    spans: Vec<Range<usize>>,
}

impl FieldOrder {
    /// An empty order: the encoder writes the map's fields as without one.
    pub fn new() -> Self {
        FieldOrder::default()
    }

    /// An order of `names`, spelled as given.
    ///
    /// # Errors
    ///
    /// [`UsageError::InvalidFieldName`] for a name that is not a token.
    pub fn from_names<I>(names: I) -> Result<Self, UsageError>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let mut order = FieldOrder::new();
        names.into_iter().try_for_each(|name| order.push(name))?;
        Ok(order)
    }

    /// Adds a name at the end, spelled as given.
    ///
    /// # Errors
    ///
    /// [`UsageError::InvalidFieldName`] for a name that is not a token (a
    /// field name `http` accepts, of at most 65,535 bytes): the order is
    /// left as it was.
    pub fn push(&mut self, name: impl AsRef<[u8]>) -> Result<(), UsageError> {
        let name = name.as_ref();
        if !is_token(name) || name.len() > MAX_NAME {
            return Err(UsageError::InvalidFieldName);
        }
        self.add(name);
        Ok(())
    }

    /// The names in order, as spelled.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.spans.iter().map(|span| &self.names[span.clone()])
    }

    /// How many names the order holds.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// `true` when the order holds no name.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Adds a name known to be a field name.
    fn add(&mut self, name: &[u8]) {
        let start = self.names.len();
        self.names.extend_from_slice(name);
        self.spans.push(start..self.names.len());
    }

    /// The names of a received section's field lines, in order and as
    /// spelled.
    fn of_lines(wire: &dyn sealed::Sealed) -> Self {
        let mut order = FieldOrder::new();
        wire.names_in_order().for_each(|name| order.add(name));
        order
    }
}

impl From<&WireHead> for FieldOrder {
    /// The names of the head's field lines, in order and as spelled.
    fn from(wire: &WireHead) -> Self {
        FieldOrder::of_lines(wire)
    }
}

impl From<&WireTrailers> for FieldOrder {
    /// The names of the trailer section's field lines, in order and as
    /// spelled.
    fn from(wire: &WireTrailers) -> Self {
        FieldOrder::of_lines(wire)
    }
}

/// An order trailers can be written in: a [`FieldOrder`] the caller
/// built, or the [`WireTrailers`] of a received trailer section. Sealed:
/// it is implemented for these two only.
///
/// `finish_in_order` ([`Encoder::finish_in_order`](crate::Encoder::finish_in_order)
/// and the connections' and sessions' methods of that name) takes one.
pub trait TrailerOrder: sealed::Sealed {}

impl TrailerOrder for FieldOrder {}
impl TrailerOrder for WireTrailers {}

pub(crate) mod sealed {
    use std::ops::Range;

    use super::{FieldOrder, WireHead, WireTrailers};
    use crate::head::record::Field;

    /// What an encoder reads of an order.
    pub trait Sealed {
        /// The names in order, as spelled.
        fn names_in_order(&self) -> Names<'_>;
    }

    /// The names of an order, in order and as spelled: a
    /// [`FieldOrder`]'s, or the field lines' of a received section.
    #[derive(Debug, Clone)]
    pub struct Names<'a>(From<'a>);

    #[derive(Debug, Clone)]
    enum From<'a> {
        Listed(&'a [u8], std::slice::Iter<'a, Range<usize>>),
        Lines(&'a [u8], std::slice::Iter<'a, Field>),
    }

    impl<'a> Iterator for Names<'a> {
        type Item = &'a [u8];

        #[inline]
        fn next(&mut self) -> Option<&'a [u8]> {
            match &mut self.0 {
                From::Listed(names, spans) => spans.next().map(|span| &names[span.clone()]),
                From::Lines(bytes, fields) => fields.next().map(|field| &bytes[field.name()]),
            }
        }
    }

    impl Sealed for FieldOrder {
        fn names_in_order(&self) -> Names<'_> {
            Names(From::Listed(&self.names, self.spans.iter()))
        }
    }

    impl Sealed for WireHead {
        fn names_in_order(&self) -> Names<'_> {
            Names(From::Lines(&self.bytes, self.record.fields.iter()))
        }
    }

    impl Sealed for WireTrailers {
        fn names_in_order(&self) -> Names<'_> {
            Names(From::Lines(&self.bytes, self.fields.iter()))
        }
    }
}

impl fmt::Debug for FieldOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.names().map(String::from_utf8_lossy))
            .finish()
    }
}

/// The order a message to send asks for, if any: its [`FieldOrder`], or
/// else its [`WireHead`].
#[inline]
pub(crate) fn order_of(extensions: &http::Extensions) -> Option<&dyn sealed::Sealed> {
    match extensions.get::<FieldOrder>() {
        Some(list) => Some(list),
        None => extensions.get::<WireHead>().map(|wire| wire as _),
    }
}
