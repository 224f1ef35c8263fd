//! The head of a message, read: its `http` types built from the reader's
//! record, or its wire view alone, with the framing and the verdict.

use bytes::Bytes;
use http::header::HeaderMap;
use http::{Method, Request, Response, Version};

use super::{Core, Event, InFlight};
use crate::error::{Error, ErrorKind};
use crate::framing::{self, BodyKind, Framing, ResponseClass, Seen, response_class};
use crate::head::build;
use crate::head::record::{Field, Record, RecordValues};
use crate::keep_alive::{CloseReason, KeepAlive};
use crate::leniency::{Rules, Switch};
use crate::reason::ReasonPhrase;
use crate::wire::WireHead;

impl Core {
    /// The wire view a head decoded into `http` types carries, its field
    /// map kept for the next head ([`Decoder::set_wire_only`]).
    #[cold]
    fn wire_of<P: HeadParts>(&mut self, parts: P) -> WireHead {
        let (mut extensions, mut headers) = parts.split();
        headers.clear();
        self.spare = Some(headers);
        // Decoded with the view on, it carries one.
        extensions
            .remove::<WireHead>()
            .expect("a head decoded with the wire view carries it")
    }
}

/// Reads a request head (the [`Server`] role's part of decoding): to its
/// wire view alone ([`Event::Wire`]) in wire-only mode, else to `http`
/// types.
#[inline(always)]
pub(super) fn request_head(core: &mut Core, head: Bytes) -> Result<Event<Request<()>>, Error> {
    if core.wire_only {
        return wire_request_head(core, head);
    }
    full_request_head(core, head)
}

/// A request head read to its wire view alone ([`Event::Wire`]).
#[inline(never)]
fn wire_request_head(core: &mut Core, head: Bytes) -> Result<Event<Request<()>>, Error> {
    let record = core.reader.record();
    if core.names.keeping() {
        build::learn(&head, record, true, &mut core.names);
    }
    let seen = record.seen(&head);
    let version = record.version();
    let connect = &head[..record.method_end] == b"CONNECT";
    let host = seen.hosts == 1 || (seen.hosts == 0 && version == Version::HTTP_10);
    let framing = framing::request_framing_of(version, &seen, &RecordValues(record, &head));
    let framing = match framing {
        Ok(framing) if connect => framing::connect_request_framing(framing),
        framing => framing,
    };
    let folded = record.fields.iter().any(|f| f.folded);
    if let (true, Ok(framing), false) = (host, framing, folded) {
        // Refusals, and folded values, are left to the full build, which
        // places them and joins the values.
        let verdict = framing::connection_verdict_of(version, &seen);
        let wire = WireHead::new(head, true, record);
        core.seen = seen;
        core.start_body(framing, verdict);
        core.last = connect;
        return Ok(Event::Wire {
            head: wire,
            body: framing.body,
        });
    }
    let wire = std::mem::replace(&mut core.wire, true);
    let event = full_request_head(core, head.clone());
    core.wire = wire;
    match event? {
        Event::Head { head: parsed, body } => Ok(Event::Wire {
            head: core.wire_of(parsed.into_parts().0),
            body,
        }),
        other => Ok(other),
    }
}

/// Builds the `http` types of a request head from the reader's record.
#[inline(always)]
fn full_request_head(core: &mut Core, bytes: Bytes) -> Result<Event<Request<()>>, Error> {
    let head = &bytes;
    let record = core.reader.record();
    let rules = &core.rules;
    let mut headers = Core::field_map(&mut core.spare, record.fields.len());
    // Errors are placed from where the head starts.
    let start = core.head_start;
    let (method, uri) = build::request_line(head, record).map_err(|e| e.in_head(start))?;
    let values = core.names.keeping();
    build::fields(head, record, values, &mut core.names, &mut headers)
        .map_err(|e| e.in_head(start))?;
    let seen = record.seen(head);
    let version = record.version();
    let at_field = |error: Error| field_error(error, head, record).in_head(start);

    if seen.hosts > 1 || (seen.hosts == 0 && version == Version::HTTP_11) {
        return Err(at_field(ErrorKind::InvalidHost.into()));
    }
    // Decided from what the reader noted: the map is searched only for
    // the codings of a Transfer-Encoding.
    let mut framing = match framing::request_framing_of(version, &seen, &headers) {
        Err(ErrorKind::ContentLengthWithTransferEncoding) => {
            chunked_with_content_length(rules, version, &seen, &mut headers).map_err(at_field)?
        }
        framing => framing.map_err(|kind| at_field(kind.into()))?,
    };
    let connect = method == Method::CONNECT;
    if connect {
        framing = framing::connect_request_framing(framing).map_err(|k| at_field(k.into()))?;
    }
    let verdict = framing::connection_verdict_of(version, &seen);

    let mut request = Request::new(());
    *request.method_mut() = method;
    *request.uri_mut() = uri;
    *request.version_mut() = version;
    put_fields(request.headers_mut(), headers);
    if core.wire {
        let wire = WireHead::new(bytes.clone(), true, record);
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
pub(super) fn put_fields(place: &mut HeaderMap, fields: HeaderMap) {
    let empty = std::mem::replace(place, fields);
    if empty.capacity() == 0 {
        std::mem::forget(empty);
    }
}

/// Reads a response head (the [`Client`] role's part of decoding).
#[inline(always)]
pub(super) fn response_head(
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
    let record = core.reader.record();
    if core.names.keeping() {
        build::learn(&head, record, true, &mut core.names);
    }
    let seen = record.seen(&head);
    let version = record.version();
    let folded = record.fields.iter().any(|f| f.folded);
    if let (Ok(status), false) = (build::status(record), folded) {
        let request = pending.in_flight.front().copied().unwrap_or_default();
        let class = response_class(request, status);
        let values = RecordValues(record, &head);
        let framing = framing::response_framing_of(request, status, version, &seen, &values);
        let interim_ok = pending.interim < core.limits.max_interim_responses;
        // Refusals are left to the full build, which places them.
        if let (Ok(framing), true) = (framing, class != ResponseClass::Interim || interim_ok) {
            let verdict = framing::connection_verdict_of(version, &seen);
            let head = WireHead::new(head, false, record);
            core.seen = seen;
            let body = match class {
                ResponseClass::Interim => {
                    pending.interim += 1;
                    core.reader.reset();
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
    let wire = std::mem::replace(&mut core.wire, true);
    let event = full_response_head(core, pending, head);
    core.wire = wire;
    match event? {
        Event::Head { head: parsed, body } => Ok(Event::Wire {
            head: core.wire_of(parsed.into_parts().0),
            body,
        }),
        Event::Interim(parsed) => Ok(Event::Wire {
            head: core.wire_of(parsed.into_parts().0),
            body: BodyKind::Empty,
        }),
        other => Ok(other),
    }
}

/// Builds the `http` types of a response head from the reader's record.
#[inline(always)]
fn full_response_head(
    core: &mut Core,
    pending: &mut InFlight,
    bytes: Bytes,
) -> Result<Event<Response<()>>, Error> {
    let head = &bytes;
    let record = core.reader.record();
    let mut headers = Core::field_map(&mut core.spare, record.fields.len());
    // Errors are placed from where the head starts.
    let start = core.head_start;
    let status = build::status(record).map_err(|e| e.in_head(start))?;
    let values = core.names.keeping();
    build::fields(head, record, values, &mut core.names, &mut headers)
        .map_err(|e| e.in_head(start))?;
    let seen = record.seen(head);
    let version = record.version();

    let request = pending.in_flight.front().copied().unwrap_or_default();
    let class = response_class(request, status);
    let framing = framing::response_framing_of(request, status, version, &seen, &headers)
        .map_err(|kind| field_error(kind.into(), head, record).in_head(start))?;
    let verdict = framing::connection_verdict_of(version, &seen);

    let mut response = Response::new(());
    *response.status_mut() = status;
    *response.version_mut() = version;
    put_fields(response.headers_mut(), headers);
    let (rs, re) = record.reason;
    let canonical = status.canonical_reason().map(str::as_bytes);
    if !canonical.is_some_and(|c| same_short(c, &head[rs..re])) {
        extensions(&mut core.spare_extensions, response.extensions_mut())
            .insert(ReasonPhrase::from_validated(head.slice(rs..re)));
    }
    if core.wire {
        let wire = WireHead::new(bytes.clone(), false, record);
        extensions(&mut core.spare_extensions, response.extensions_mut()).insert(wire);
    }
    core.seen = seen;

    match class {
        ResponseClass::Interim => {
            pending.interim += 1;
            if pending.interim > core.limits.max_interim_responses {
                return Err(Error::from(ErrorKind::TooManyInterimResponses).in_head(start));
            }
            core.reader.reset();
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

/// `error`, refused for the framing or `Host` fields of a head the reader
/// accepted: placed at the field line at fault, with its name. A repeated
/// field is at fault at its second line; a `Transfer-Encoding` list at its
/// last line (its final coding is at fault), or at its first in HTTP/1.0;
/// `Content-Length` with `Transfer-Encoding` at whichever came second.
#[cold]
#[inline(never)]
fn field_error(error: Error, head: &[u8], record: &Record) -> Error {
    use ErrorKind::*;
    let lines = |name: &str| -> Vec<&Field> {
        let named = |f: &&Field| head[f.name()].eq_ignore_ascii_case(name.as_bytes());
        record.fields.iter().filter(named).collect()
    };
    let (te, cl) = ("transfer-encoding", "content-length");
    let first = |name| lines(name).first().copied();
    let line = match error.kind() {
        InvalidHost => lines("host").get(1).copied(),
        InvalidContentLength => {
            let cl = lines(cl);
            cl.get(1).or(cl.first()).copied()
        }
        TransferEncodingInHttp10 => first(te),
        InvalidTransferEncoding | UnsupportedTransferCoding => lines(te).last().copied(),
        ContentLengthWithTransferEncoding => [first(te), first(cl)]
            .into_iter()
            .flatten()
            .max_by_key(|f| f.start),
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
