//! The head of a message, read: the framing and the verdict decided from
//! the reader's record, and its `http` types built from that record, or,
//! in wire-only mode, its wire view alone.

use bytes::Bytes;
use http::header::HeaderMap;
use http::{Request, Response, Version};

use super::DecodeRole;
use super::base::{DecoderBase, Event, InFlight, MessageHead};
use super::body::Progress;
use crate::error::{Error, ErrorKind};
use crate::framing::{
    self, BodyKind, FieldRole, FramingFields, RequestKind, ResponseClass, response_class,
};
use crate::head::build;
use crate::head::record::{Field, Record};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::leniency::{RequestLeniency, ResponseLeniency, Rules, Tolerance};
use crate::reason::ReasonPhrase;
use crate::role::{Client, Server};
use crate::wire::WireHead;

impl DecoderBase {
    /// The event of the head just read in wire-only mode, where no `http`
    /// type is built: its wire view, framed as `body`. The name cache
    /// learns the names and values of the head as a build would have
    /// taught it.
    #[inline(never)]
    pub(super) fn wire_event<H: MessageHead>(&mut self, bytes: Bytes, body: BodyKind) -> Event<H> {
        let record = self.reader.record();
        if self.names.keeping() {
            build::learn(&bytes, record, &mut self.names);
        }
        let head = WireHead::new(bytes, self.rules.request, record);
        Event::Wire { head, body }
    }

    /// Builds the fields of the head just read into `map`, a new
    /// message's (in the spare map, put in its place, if there is one).
    #[inline(always)]
    fn fields(&mut self, bytes: &Bytes, map: &mut HeaderMap) -> Result<(), Error> {
        let record = self.reader.record();
        if let Some(spare) = self.spare.take() {
            // In place of the new message's empty map, which holds no
            // allocation (`HeaderMap::new` makes none): it is forgotten
            // rather than dropped, a call that frees nothing.
            debug_assert!(map.is_empty() && map.capacity() == 0);
            std::mem::forget(std::mem::replace(map, spare));
        }
        // An empty map reserves as `with_capacity` allocates; a spare one
        // usually has the room already, which `capacity` tells for less
        // than `reserve` does.
        if map.capacity() < record.fields.len() {
            map.reserve(record.fields.len());
        }
        let keep = self.names.keeping();
        build::fields(bytes, record, keep, &mut self.names, map)
            .map_err(|e| e.in_head(self.head_start))
    }

    /// With the wire view on, the [`WireHead`] of the head just read goes
    /// into `ext`, a new message's extensions.
    #[inline(always)]
    fn wire_view(&mut self, bytes: &Bytes, ext: &mut http::Extensions) {
        if self.wire {
            let ext = extensions(&mut self.spare_extensions, ext);
            let (request, record) = (self.rules.request, self.reader.record_mut());
            // The spare map's view, parked there, is written over, and
            // trades its room for field lines with the reader's.
            match ext.get_mut::<WireHead>() {
                Some(wire) => wire.renew(bytes.clone(), request, record),
                None => {
                    ext.insert(WireHead::new(bytes.clone(), request, record));
                }
            }
        }
    }
}

/// `extensions`, a message's, to insert into: the spare map
/// when it has none yet.
#[inline]
fn extensions<'a>(
    spare: &mut Option<http::Extensions>,
    extensions: &'a mut http::Extensions,
) -> &'a mut http::Extensions {
    if extensions.is_empty()
        && let Some(spare) = spare.take()
    {
        *extensions = spare;
    }
    extensions
}

/// `error`, refused for the framing or `Host` fields of a head the reader
/// accepted: placed at the field line at fault, with its name. A repeated
/// field is at fault at its second line; a `Transfer-Encoding` list at its
/// last line (its final coding is at fault), or at its first in HTTP/1.0;
/// `Content-Length` with `Transfer-Encoding` at whichever came second.
#[cold]
#[inline(never)]
fn field_error(error: Error, head: &[u8], record: &Record) -> Error {
    use ErrorKind::*;
    let fields = &record.fields;
    let lines = |role| fields.iter().filter(move |f: &&Field| f.role == role);
    let first = |role| lines(role).next();
    let (te, cl) = (FieldRole::TransferEncoding, FieldRole::ContentLength);
    let line = match error.kind() {
        InvalidHost => lines(FieldRole::Host).nth(1),
        InvalidHostValue => first(FieldRole::Host),
        InvalidContentLength => lines(cl).nth(1).or(first(cl)),
        TransferEncodingInHttp10 => first(te),
        InvalidTransferEncoding | UnsupportedTransferCoding => lines(te).next_back(),
        ContentLengthWithTransferEncoding => {
            std::cmp::max_by_key(first(te), first(cl), |f| f.map(|f| f.start))
        }
        ConnectWithContent => first(te).or_else(|| first(cl)),
        _ => None,
    };
    match line {
        Some(field) => error.at(field.start as u64, Some(&head[field.name()])),
        None => error,
    }
}

/// A request with both `Transfer-Encoding` and `Content-Length`, which
/// the strict reading refuses. With `chunked_with_content_length`, one
/// that `Transfer-Encoding` alone frames as chunked, and whose
/// `Content-Length` is valid on its own, is read as chunked (the caller
/// removes its `Content-Length`), and the connection closes after it (RFC
/// 9112 section 6.1). Otherwise the error names the tolerance when it would
/// accept the request.
#[cold]
fn chunked_with_content_length(rules: &Rules, seen: &FramingFields) -> Result<BodyKind, Error> {
    // What `Transfer-Encoding` frames alone (the version allows it):
    // chunked, or an error.
    let codings = framing::codings(false, seen);
    let length_valid = matches!(seen.content_length, Some(Some(_)));
    if !rules.chunked_with_content_length {
        let hint = (length_valid && codings.is_ok())
            .then(|| rules.hint(Tolerance::ChunkedWithContentLength))
            .flatten();
        let conflict = ErrorKind::ContentLengthWithTransferEncoding;
        return Err(Error::refused(conflict, hint));
    }
    if !length_valid {
        return Err(ErrorKind::InvalidContentLength.into());
    }
    codings?;
    Ok(BodyKind::Chunked)
}

impl DecodeRole for Server {
    type Recv = Request<()>;
    type Leniency = RequestLeniency;
    type Pending = ();

    /// Checks a request head. Out of line: its callers stay small.
    #[inline(never)]
    fn check(base: &mut DecoderBase, (): &mut (), bytes: Bytes) -> Result<Progress, Error> {
        let raw = &bytes;
        let record = base.reader.record();
        let start = base.head_start;
        let at_field = |error: Error| field_error(error, raw, record).in_head(start);
        let seen = record.seen(raw);
        let version = record.version;
        if seen.hosts > 1 || (seen.hosts == 0 && version == Version::HTTP_11) {
            return Err(at_field(ErrorKind::InvalidHost.into()));
        }
        if seen.bad_host {
            // RFC 9112 section 3.2: a server MUST answer 400 to a Host field
            // with an invalid value, in any version.
            return Err(at_field(ErrorKind::InvalidHostValue.into()));
        }
        let body = match framing::framing_of(None, version, &seen) {
            Err(ErrorKind::ContentLengthWithTransferEncoding) => {
                chunked_with_content_length(&base.rules, &seen).map_err(at_field)?
            }
            body => body.map_err(|kind| at_field(kind.into()))?,
        };
        let connect = &raw[..record.method_end] == b"CONNECT";
        if connect && !body.is_empty() {
            // A CONNECT request has no content (RFC 9110 section 9.3.6): what
            // follows its head is tunnel data once a 2xx answers it, so a body
            // would let the bytes after it be read as another request.
            // `Content-Length: 0` declares no content and is accepted as no
            // body (nginx, Go's net/http for bodiless methods and hyper's
            // HTTP/2 server do the same).
            return Err(at_field(ErrorKind::ConnectWithContent.into()));
        }
        let verdict = framing::connection_verdict_of(version, &seen);
        base.seen = seen;
        base.start_body(body, verdict);
        // What follows a CONNECT head is the tunnel's if a 2xx answers it;
        // otherwise the connection closes. Either way it is not HTTP.
        base.last = connect;
        Ok(Progress::Head(bytes, Some(body)))
    }

    #[inline(always)]
    fn build(base: &mut DecoderBase, bytes: Bytes, head: &mut Request<()>) -> Result<(), Error> {
        let record = base.reader.record();
        build::request_line(&bytes, record, head).map_err(|e| e.in_head(base.head_start))?;
        *head.version_mut() = record.version;
        base.fields(&bytes, head.headers_mut())?;
        base.wire_view(&bytes, head.extensions_mut());
        if base.seen.transfer_encoding && base.seen.content_length.is_some() {
            // Accepted by `chunked_with_content_length` only: read as
            // chunked, without its `Content-Length`.
            head.headers_mut().remove(http::header::CONTENT_LENGTH);
        }
        Ok(())
    }
}

impl DecodeRole for Client {
    type Recv = Response<()>;
    type Leniency = ResponseLeniency;
    type Pending = InFlight;

    /// Checks a response head against the request it answers.
    #[inline]
    fn check(
        base: &mut DecoderBase,
        pending: &mut InFlight,
        bytes: Bytes,
    ) -> Result<Progress, Error> {
        let head = &bytes;
        let record = base.reader.record();
        let start = base.head_start;
        let status = build::status(record).map_err(|e| e.in_head(start))?;
        let seen = record.seen(head);
        let version = record.version;
        let request = pending
            .queue
            .front()
            .map_or_else(RequestKind::default, |e| e.request);
        let class = response_class(request, status);
        let body = framing::framing_of(Some((request, status)), version, &seen)
            .map_err(|kind| field_error(kind.into(), head, record).in_head(start))?;
        let verdict = match class {
            ResponseClass::Switch => KeepAlive::Close(CloseReason::Switched),
            _ => framing::connection_verdict_of(version, &seen),
        };
        // Interim responses in a row are counted (and the count is reset by
        // a final response).
        pending.interim += usize::from(class == ResponseClass::Interim);
        if pending.interim > base.limits.max_interim_responses {
            return Err(Error::from(ErrorKind::TooManyInterimResponses).in_head(start));
        }
        base.seen = seen;
        if class == ResponseClass::Interim {
            base.reader.reset();
            return Ok(Progress::Head(bytes, None));
        }
        pending.answered = pending.queue.pop_front().unwrap_or_default();
        pending.interim = 0;
        base.start_body(body, verdict);
        // Empty but for a final response: `framing_of` frames 1xx and 2xx to
        // CONNECT, the interim and switching classes, as bodiless.
        Ok(Progress::Head(bytes, Some(body)))
    }

    #[inline(always)]
    fn build(
        base: &mut DecoderBase,
        bytes: Bytes,
        response: &mut Response<()>,
    ) -> Result<(), Error> {
        let record = base.reader.record();
        let status = build::status(record).map_err(|e| e.in_head(base.head_start))?;
        let (version, (rs, re)) = (record.version, record.reason);
        base.fields(&bytes, response.headers_mut())?;
        base.wire_view(&bytes, response.extensions_mut());
        *response.status_mut() = status;
        *response.version_mut() = version;
        let canonical = status.canonical_reason().map(str::as_bytes);
        if canonical.is_none_or(|c| c != &bytes[rs..re]) {
            extensions(&mut base.spare_extensions, response.extensions_mut())
                .insert(ReasonPhrase::from_validated(bytes.slice(rs..re)));
        }
        Ok(())
    }

    fn head_event(head: Response<()>, body: Option<BodyKind>) -> Event<Response<()>> {
        match body {
            Some(body) => Event::Head { head, body },
            None => Event::Interim(head),
        }
    }
}
