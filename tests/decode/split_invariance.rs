//! Split invariance: the events, errors and limits of both decoders never
//! depend on how the input was cut into reads.
//!
//! Valid pipelined requests and responses are generated together with the
//! events they must produce; they are decoded whole, byte by byte and at
//! random cut points, and every run must give exactly the intended events.
//! Arbitrary bytes, token soup and mutated valid messages must never panic,
//! must give the same events and error whole or split, and must never leave
//! the decoder holding more than the limits allow.
//!
//! All of it holds with every leniency switch on as well, on those inputs
//! and on valid messages bent in the ways the switches accept (bare LF,
//! whitespace before a colon, no SP after the status code, lines that are
//! not fields, obs-fold, `Content-Length` beside `chunked`). A lenient
//! decoder reads every message the strict one accepts exactly as it does.
//!
//! Errors are compared with where they say decoding stopped (offset and
//! field), and heads with their wire view where it is on: its field lines
//! are the ones generated, in order and spelling, and on any input they
//! agree with the message's fields, target and reason phrase.

use std::collections::BTreeMap;

use bytes::BytesMut;
use h1proto::wire::{WireHead, WireTrailers};
use h1proto::{CloseReason, ErrorKind, Event, KeepAlive, Limits, ReasonPhrase, framing::BodyKind};
use h1proto::{
    RequestDecoder, ResponseDecoder,
    leniency::{RequestLeniency, ResponseLeniency},
};
use http::{Method, Version};
use proptest::prelude::*;
use proptest::sample::select;

// ------------------------------------------------------------ normal form

/// Field values per lowercase name, in the order they appeared.
type Fields = BTreeMap<String, Vec<Vec<u8>>>;

/// The field lines of a wire view, in order: (name, value).
type Wire = Vec<(Vec<u8>, Vec<u8>)>;

/// An event reduced to what the message says, with consecutive `Data`
/// concatenated (where `Data` events split may depend on the reads).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Norm {
    Request {
        method: String,
        target: String,
        version: Version,
        fields: Fields,
        wire: Option<Wire>,
        body: BodyKind,
    },
    Response {
        status: u16,
        reason: Vec<u8>,
        version: Version,
        fields: Fields,
        wire: Option<Wire>,
        body: BodyKind,
    },
    Interim {
        status: u16,
        reason: Vec<u8>,
        fields: Fields,
        wire: Option<Wire>,
    },
    Data(Vec<u8>),
    Trailers(Fields),
    End(KeepAlive),
    /// A head as its wire view shows it (the wire-only comparison): start
    /// line, field lines, and the body's framing.
    Wire {
        start: Vec<u8>,
        fields: Wire,
        body: BodyKind,
    },
}

fn fields_of(map: &http::HeaderMap) -> Fields {
    let mut out = Fields::new();
    for name in map.keys() {
        let values = map
            .get_all(name)
            .iter()
            .map(|v| v.as_bytes().to_vec())
            .collect();
        out.insert(name.as_str().to_owned(), values);
    }
    out
}

fn reason_of(resp: &http::Response<()>) -> Vec<u8> {
    match resp.extensions().get::<ReasonPhrase>() {
        Some(reason) => reason.as_bytes().to_vec(),
        None => resp
            .status()
            .canonical_reason()
            .unwrap_or("")
            .as_bytes()
            .to_vec(),
    }
}

/// The value the `HeaderMap` holds for a wire value: each obs-fold (a line
/// break and the whitespace around it) replaced by one SP.
fn unfolded(value: &[u8]) -> Vec<u8> {
    let pieces: Vec<&[u8]> = value
        .split(|&b| b == b'\n')
        .map(|p| p.trim_ascii_end().trim_ascii_start())
        .filter(|p| !p.is_empty())
        .collect();
    pieces.join(&b' ')
}

/// The field lines of a head's wire view, if it carries one, after
/// checking them against the message: grouped by name they are its
/// fields (but for a `Content-Length` that `chunked_with_content_length`
/// removed), and every slice is part of the head's bytes.
fn wire_of(wire: Option<&WireHead>, map: &http::HeaderMap) -> Option<Wire> {
    let wire = wire?;
    let lines: Wire = wire
        .fields()
        .map(|(n, v)| (n.to_vec(), v.to_vec()))
        .collect();
    let mut grouped = Fields::new();
    for (name, value) in wire.fields() {
        // Slices of the head: `slice_ref` panics on anything else.
        let _ = (wire.bytes().slice_ref(name), wire.bytes().slice_ref(value));
        grouped
            .entry(String::from_utf8(name.to_ascii_lowercase()).unwrap())
            .or_default()
            .push(unfolded(value));
    }
    if !map.contains_key("content-length") && map.contains_key("transfer-encoding") {
        grouped.remove("content-length");
    }
    assert_eq!(grouped, fields_of(map), "the wire view disagrees: {wire:?}");
    Some(lines)
}

/// Checks the wire view of a trailer section just handed out as `map`:
/// kept exactly when the view is on (`view`), and then its lines, grouped
/// by name, are the map's fields, every slice part of the section.
fn check_wire_trailers(view: bool, wire: Option<&WireTrailers>, map: &http::HeaderMap) {
    assert_eq!(wire.is_some(), view, "a trailer section's wire view");
    let Some(wire) = wire else { return };
    let mut grouped = Fields::new();
    for (name, value) in wire.fields() {
        let _ = (wire.bytes().slice_ref(name), wire.bytes().slice_ref(value));
        grouped
            .entry(String::from_utf8(name.to_ascii_lowercase()).unwrap())
            .or_default()
            .push(value.to_vec());
    }
    assert_eq!(
        grouped,
        fields_of(map),
        "the trailers' wire view disagrees: {wire:?}"
    );
}

/// How a decoder stopped: the error and where it says it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Failure {
    kind: ErrorKind,
    offset: Option<u64>,
    field: Option<Vec<u8>>,
}

impl From<h1proto::Error> for Failure {
    fn from(e: h1proto::Error) -> Self {
        Failure {
            kind: e.kind(),
            offset: e.offset(),
            field: e.field().map(<[u8]>::to_vec),
        }
    }
}

/// Either decoder, seen through normalized events.
trait Decoder {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Norm>, Failure>;
    fn closed(&self) -> bool;
}

fn data_or<H: h1proto::MessageHead>(
    event: Event<H>,
    head: impl FnOnce(H, BodyKind) -> Norm,
    interim: impl FnOnce(H::Interim) -> Norm,
) -> Norm {
    match event {
        Event::Head { head: h, body } => head(h, body),
        Event::Interim(h) => interim(h),
        Event::Data(data) => {
            assert!(!data.is_empty(), "empty Data event");
            Norm::Data(data.to_vec())
        }
        Event::Trailers(map) => {
            assert!(!map.is_empty(), "empty Trailers event");
            Norm::Trailers(fields_of(&map))
        }
        Event::End(verdict) => Norm::End(verdict),
        _ => panic!("an event these tests do not know"),
    }
}

impl Decoder for RequestDecoder {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Norm>, Failure> {
        let event = if eof {
            self.decode_eof(buf)
        } else {
            self.decode(buf)
        };
        let event = event?;
        if let Some(Event::Trailers(map)) = &event {
            check_wire_trailers(self.wire_view(), self.wire_trailers(), map);
        }
        Ok(event.map(|ev| {
            data_or(
                ev,
                |req, body| Norm::Request {
                    method: req.method().as_str().to_owned(),
                    target: req.uri().to_string(),
                    version: req.version(),
                    fields: fields_of(req.headers()),
                    wire: wire_of(req.extensions().get(), req.headers()).inspect(|_| {
                        let wire = req.extensions().get::<WireHead>().unwrap();
                        let target = std::str::from_utf8(wire.target().unwrap()).unwrap();
                        assert!(*req.uri() == *target, "{target:?} is not {}", req.uri());
                        assert_eq!(wire.reason(), None);
                    }),
                    body,
                },
                // Requests have no interim responses: the type is empty.
                |never| match never {},
            )
        }))
    }

    fn closed(&self) -> bool {
        // No further message is decoded (a switch leaves HTTP too).
        self.is_closed() || self.is_switched()
    }
}

impl Decoder for ResponseDecoder {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Norm>, Failure> {
        let event = if eof {
            self.decode_eof(buf)
        } else {
            self.decode(buf)
        };
        let event = event?;
        if let Some(Event::Trailers(map)) = &event {
            check_wire_trailers(self.wire_view(), self.wire_trailers(), map);
        }
        let wire = |resp: &http::Response<()>| {
            wire_of(resp.extensions().get(), resp.headers()).inspect(|_| {
                let wire = resp.extensions().get::<WireHead>().unwrap();
                assert_eq!(wire.reason(), Some(&reason_of(resp)[..]));
                assert_eq!(wire.target(), None);
            })
        };
        Ok(event.map(|ev| {
            data_or(
                ev,
                |resp, body| Norm::Response {
                    status: resp.status().as_u16(),
                    reason: reason_of(&resp),
                    version: resp.version(),
                    fields: fields_of(resp.headers()),
                    wire: wire(&resp),
                    body,
                },
                |resp| Norm::Interim {
                    status: resp.status().as_u16(),
                    reason: reason_of(&resp),
                    fields: fields_of(resp.headers()),
                    wire: wire(&resp),
                },
            )
        }))
    }

    fn closed(&self) -> bool {
        // No further message is decoded (a switch leaves HTTP too).
        self.is_closed() || self.is_switched()
    }
}

/// A decoder whose heads are compared by what their wire view shows:
/// one in wire-only mode (`Event::Wire`), or one with the wire view on
/// whose heads are reduced to it. Both must give the same outcome.
struct AsWire<D>(D);

fn wire_norm(wire: &WireHead, body: BodyKind) -> Norm {
    // What a proxy reads of it must be there.
    let _ = (
        wire.method(),
        wire.target(),
        wire.status(),
        wire.reason(),
        wire.version(),
    );
    Norm::Wire {
        start: wire.start_line().to_vec(),
        fields: wire
            .fields()
            .map(|(n, v)| (n.to_vec(), v.to_vec()))
            .collect(),
        body,
    }
}

fn as_wire<H: h1proto::MessageHead>(
    event: Event<H>,
    view: impl FnOnce(H, BodyKind) -> Norm,
    interim: impl FnOnce(H::Interim) -> Norm,
) -> Norm {
    match event {
        Event::Wire { head, body } => wire_norm(&head, body),
        Event::Head { head, body } => view(head, body),
        Event::Interim(head) => interim(head),
        other => data_or(other, |_, _| unreachable!(), |_| unreachable!()),
    }
}

impl Decoder for AsWire<RequestDecoder> {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Norm>, Failure> {
        let event = if eof {
            self.0.decode_eof(buf)
        } else {
            self.0.decode(buf)
        }?;
        Ok(event.map(|ev| {
            as_wire(
                ev,
                |req, body| wire_norm(req.extensions().get().expect("a wire view"), body),
                |never| match never {},
            )
        }))
    }

    fn closed(&self) -> bool {
        self.0.is_closed() || self.0.is_switched()
    }
}

impl Decoder for AsWire<ResponseDecoder> {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Norm>, Failure> {
        let event = if eof {
            self.0.decode_eof(buf)
        } else {
            self.0.decode(buf)
        }?;
        Ok(event.map(|ev| {
            as_wire(
                ev,
                |res, body| wire_norm(res.extensions().get().expect("a wire view"), body),
                |res| {
                    wire_norm(
                        res.extensions().get().expect("a wire view"),
                        BodyKind::Empty,
                    )
                },
            )
        }))
    }

    fn closed(&self) -> bool {
        self.0.is_closed() || self.0.is_switched()
    }
}

/// Decoding to the wire view alone gives what decoding to `http` types
/// with the wire view on gives, heads reduced to their view: the same
/// heads, framing, events, errors and leftover, whole and split.
fn wire_only_agrees<D: Decoder>(
    make: impl Fn(bool) -> D,
    limits: &Limits,
    input: &[u8],
    cuts: &[usize],
    what: &str,
) {
    let view = split_invariant(|| make(false), limits, input, cuts, what);
    let only = split_invariant(|| make(true), limits, input, cuts, what);
    assert_eq!(only, view, "{what}: wire-only differs from the wire view");
}

/// What a run of a decoder over some input gave.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    events: Vec<Norm>,
    error: Option<Failure>,
    /// The bytes left in the buffer at the end (only without an error: with
    /// one, how much was fed before it depends on the reads).
    leftover: Option<Vec<u8>>,
}

/// Where the decoder is, as far as its events tell.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Head,
    Body(BodyKind),
}

/// Feeds `input` cut at `cuts` (sorted offsets), decoding until `Ok(None)`
/// after each piece; then, if `eof`, calls `decode_eof` until `Ok(None)`.
///
/// After every `Ok(None)` of a decoder that is not closed, checks that what
/// it leaves in the buffer is within the limits: an unfinished head never
/// exceeds `max_head_bytes`, an unfinished chunk-size line or trailer
/// section never exceeds its limit, and other body states hold nothing.
fn run<D: Decoder>(
    dec: &mut D,
    limits: &Limits,
    input: &[u8],
    cuts: &[usize],
    eof: bool,
) -> Outcome {
    let mut buf = BytesMut::new();
    let mut events: Vec<Norm> = Vec::new();
    let mut phase = Phase::Head;
    let mut calls = 0usize;
    let mut bounds = cuts.to_vec();
    bounds.push(input.len());
    let mut from = 0;
    let mut pieces: Vec<(&[u8], bool)> = Vec::new();
    for &to in &bounds {
        pieces.push((&input[from..to], false));
        from = to;
    }
    if eof {
        pieces.push((&[][..], true));
    }
    for (piece, at_eof) in pieces {
        buf.extend_from_slice(piece);
        loop {
            calls += 1;
            assert!(
                calls < 4 * input.len() + 1000,
                "the decoder keeps returning events: {events:?}"
            );
            match dec.step(&mut buf, at_eof) {
                Ok(Some(event)) => {
                    phase = match &event {
                        Norm::Request { body, .. } | Norm::Response { body, .. } => {
                            Phase::Body(*body)
                        }
                        Norm::End(_) | Norm::Interim { .. } => Phase::Head,
                        _ => phase,
                    };
                    match (events.last_mut(), event) {
                        (Some(Norm::Data(prev)), Norm::Data(more)) => prev.extend(more),
                        (_, event) => events.push(event),
                    }
                }
                Ok(None) => {
                    if !dec.closed() {
                        check_held(phase, &buf, limits);
                    }
                    break;
                }
                Err(failure) => {
                    return Outcome {
                        events,
                        error: Some(failure),
                        leftover: None,
                    };
                }
            }
        }
    }
    Outcome {
        events,
        error: None,
        leftover: Some(buf.to_vec()),
    }
}

fn check_held(phase: Phase, buf: &BytesMut, limits: &Limits) {
    let held = buf.len();
    match phase {
        Phase::Head => assert!(
            held <= limits.max_head_bytes,
            "an unfinished head of {held} bytes is held (max_head_bytes {})",
            limits.max_head_bytes
        ),
        Phase::Body(BodyKind::Chunked) => {
            let max = limits.max_chunk_line_bytes.max(limits.max_trailer_bytes);
            assert!(
                held <= max,
                "{held} bytes of chunk framing held (chunk line {}, trailers {})",
                limits.max_chunk_line_bytes,
                limits.max_trailer_bytes
            );
        }
        Phase::Body(kind) => assert!(held == 0, "{held} body bytes held back in a {kind:?} body"),
    }
}

fn cuts_from(len: usize, picks: &[usize]) -> Vec<usize> {
    let mut cuts: Vec<usize> = picks.iter().map(|&i| i % (len + 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

fn bytewise(len: usize) -> Vec<usize> {
    (1..len).collect()
}

// -------------------------------------------------------------- generators

const TCHARS: &[u8] =
    b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PATH_CHARS: &[u8] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@";

fn token(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(select(TCHARS), 1..=max).prop_map(|v| String::from_utf8(v).unwrap())
}

/// A `Host` value: a reg-name (unreserved and sub-delims), or `[::1]`,
/// and maybe a port.
fn host_value() -> impl Strategy<Value = String> {
    const REG_NAME: &[u8] = b"abcxyzABC0129-._~!$&'()*+,;=";
    let name =
        prop::collection::vec(select(REG_NAME), 1..=20).prop_map(|v| String::from_utf8(v).unwrap());
    let host = prop_oneof![9 => name, 1 => Just("[::1]".to_owned())];
    (host, prop::option::of(0u16..)).prop_map(|(host, port)| match port {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// A field value: field-vchar (VCHAR or obs-text) at both ends, SP and HTAB
/// allowed inside; possibly empty.
fn field_value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            6 => 0x21u8..=0x7e,
            2 => 0x80u8..=0xff,
            2 => select(&b" \t"[..]),
        ],
        0..24,
    )
    .prop_map(|mut v| {
        while v.first().is_some_and(|b| matches!(b, b' ' | b'\t')) {
            v.remove(0);
        }
        while v.last().is_some_and(|b| matches!(b, b' ' | b'\t')) {
            v.pop();
        }
        v
    })
}

fn ows() -> impl Strategy<Value = &'static str> {
    select(&["", " ", "", "\t", "  ", " \t "][..])
}

/// A field line as written: name (case as sent), OWS, value, OWS.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    value: Vec<u8>,
    before: &'static str,
    after: &'static str,
}

impl Field {
    fn new(name: &str, value: &[u8]) -> Self {
        Field {
            name: name.to_owned(),
            value: value.to_vec(),
            before: " ",
            after: "",
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.name.as_bytes());
        out.push(b':');
        out.extend_from_slice(self.before.as_bytes());
        out.extend_from_slice(&self.value);
        out.extend_from_slice(self.after.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// Names the generator must not pick at random: they would change the
/// framing, the verdict or the validity of the message.
const RESERVED: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "trailer",
    "te",
    "upgrade",
    "expect",
    "content-type",
    "content-encoding",
    "content-range",
    "authorization",
    "proxy-authorization",
    "set-cookie",
    "cookie",
    "keep-alive",
    "proxy-connection",
];

fn field() -> impl Strategy<Value = Field> {
    (token(12), field_value(), ows(), ows()).prop_map(|(name, value, before, after)| {
        let name = if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
            format!("x-{name}")
        } else {
            name
        };
        Field {
            name,
            value,
            before,
            after,
        }
    })
}

/// The wire view's field lines of `fields` as written.
fn expected_wire(fields: &[Field]) -> Option<Wire> {
    Some(
        fields
            .iter()
            .map(|f| (f.name.as_bytes().to_vec(), f.value.clone()))
            .collect(),
    )
}

fn expected_fields(fields: &[Field]) -> Fields {
    let mut out = Fields::new();
    for f in fields {
        out.entry(f.name.to_ascii_lowercase())
            .or_default()
            .push(f.value.clone());
    }
    out
}

/// Inserts `extra` fields at the chosen positions among `fields`.
fn place(mut fields: Vec<Field>, extra: Vec<(Field, usize)>) -> Vec<Field> {
    for (f, at) in extra {
        let i = at % (fields.len() + 1);
        fields.insert(i, f);
    }
    fields
}

/// A `Connection` field choice: (value, lists close, lists keep-alive).
const CONNECTION: &[(Option<&str>, bool, bool)] = &[
    (None, false, false),
    (None, false, false),
    (Some("close"), true, false),
    (Some("keep-alive"), false, true),
    (Some("Keep-Alive, x-hop"), false, true),
    (Some("x-hop ,\tCLOSE"), true, false),
    (Some("x-hop"), false, false),
];

fn verdict(v11: bool, conn: usize) -> KeepAlive {
    let (_, close, keep) = CONNECTION[conn];
    if close {
        KeepAlive::Close(CloseReason::PeerClose)
    } else if !v11 && !keep {
        KeepAlive::Close(CloseReason::Http10)
    } else {
        KeepAlive::Reusable
    }
}

#[derive(Debug, Clone)]
struct Chunk {
    data: Vec<u8>,
    zeros: usize,
    upper: bool,
    ext: &'static str,
}

#[derive(Debug, Clone)]
struct ChunkedBody {
    chunks: Vec<Chunk>,
    last_zeros: usize,
    last_ext: &'static str,
    trailers: Vec<Field>,
}

const EXTENSIONS: &[&str] = &[
    "",
    "",
    ";a",
    ";name=value",
    ";q=\"quoted; \\\"string\\\"\"",
    " ; sp = tok",
    ";a;b=c",
];

fn chunked_body() -> impl Strategy<Value = ChunkedBody> {
    let chunk = (
        prop::collection::vec(any::<u8>(), 1..40),
        0usize..3,
        any::<bool>(),
        select(EXTENSIONS),
    )
        .prop_map(|(data, zeros, upper, ext)| Chunk {
            data,
            zeros,
            upper,
            ext,
        });
    let trailer =
        (token(10), field_value(), ows(), ows()).prop_map(|(name, value, before, after)| {
            let name = if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
                format!("x-{name}")
            } else {
                name
            };
            Field {
                name,
                value,
                before,
                after,
            }
        });
    (
        prop::collection::vec(chunk, 0..5),
        0usize..3,
        select(EXTENSIONS),
        prop::collection::vec(trailer, 0..3),
    )
        .prop_map(|(chunks, last_zeros, last_ext, trailers)| ChunkedBody {
            chunks,
            last_zeros,
            last_ext,
            trailers,
        })
}

impl ChunkedBody {
    fn data(&self) -> Vec<u8> {
        self.chunks.iter().flat_map(|c| c.data.clone()).collect()
    }

    fn write(&self, out: &mut Vec<u8>) {
        for c in &self.chunks {
            let size = if c.upper {
                format!("{:X}", c.data.len())
            } else {
                format!("{:x}", c.data.len())
            };
            out.extend_from_slice("0".repeat(c.zeros).as_bytes());
            out.extend_from_slice(size.as_bytes());
            out.extend_from_slice(c.ext.as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(&c.data);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice("0".repeat(self.last_zeros + 1).as_bytes());
        out.extend_from_slice(self.last_ext.as_bytes());
        out.extend_from_slice(b"\r\n");
        for t in &self.trailers {
            t.write(out);
        }
        out.extend_from_slice(b"\r\n");
    }

    /// Data (if any), Trailers (if any): the events of this body.
    fn events(&self, events: &mut Vec<Norm>) {
        let data = self.data();
        if !data.is_empty() {
            events.push(Norm::Data(data));
        }
        if !self.trailers.is_empty() {
            events.push(Norm::Trailers(expected_fields(&self.trailers)));
        }
    }
}

#[derive(Debug, Clone)]
enum Body {
    None,
    Length(Vec<u8>),
    Chunked(ChunkedBody),
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        2 => Just(Body::None),
        3 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Body::Length),
        3 => chunked_body().prop_map(Body::Chunked),
    ]
}

/// A message as bytes with the events it must produce.
#[derive(Debug, Clone)]
struct Message {
    bytes: Vec<u8>,
    events: Vec<Norm>,
    verdict: KeepAlive,
    /// The method of the request it answers (responses only).
    answers: Method,
    /// How many bytes at the end belong to the protocol switched to.
    tunnel: usize,
}

// ---------------------------------------------------------------- requests

#[derive(Debug, Clone)]
struct RequestSpec {
    method: String,
    target: String,
    v11: bool,
    host: Option<(String, usize)>,
    fields: Vec<Field>,
    conn: (usize, usize),
    body: Body,
    framing_at: usize,
    te: &'static str,
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        select(
            &[
                "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"
            ][..]
        )
        .prop_map(str::to_owned),
        token(12).prop_filter("CONNECT needs authority-form", |m| m != "CONNECT"),
    ]
}

fn target() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        8 => select(PATH_CHARS).prop_map(|b| (b as char).to_string()),
        1 => (0u8..=255).prop_map(|b| format!("%{b:02X}")),
    ];
    let segment = prop::collection::vec(atom.clone(), 0..8).prop_map(|v| v.concat());
    let query = prop::collection::vec(
        prop_oneof![4 => atom, 1 => select(&["/", "?"][..]).prop_map(str::to_owned)],
        0..10,
    )
    .prop_map(|v| v.concat());
    (
        prop::collection::vec(segment, 1..4),
        prop::option::of(query),
    )
        .prop_map(|(segments, query)| {
            let mut t = String::new();
            for s in segments {
                t.push('/');
                t.push_str(&s);
            }
            if let Some(q) = query {
                t.push('?');
                t.push_str(&q);
            }
            t
        })
}

fn request_spec() -> impl Strategy<Value = RequestSpec> {
    (
        method(),
        target(),
        prop::bool::weighted(0.8),
        (
            prop::option::weighted(0.9, (host_value(), any::<usize>())),
            prop::collection::vec(field(), 0..20),
            (0..CONNECTION.len(), any::<usize>()),
        ),
        body(),
        any::<usize>(),
        select(&["chunked", "Chunked", "CHUNKED"][..]),
    )
        .prop_map(
            |(method, target, v11, (host, fields, conn), body, framing_at, te)| RequestSpec {
                method,
                target,
                v11,
                host,
                fields,
                conn,
                body,
                framing_at,
                te,
            },
        )
}

fn encode_request(spec: &RequestSpec) -> Message {
    let mut extra = Vec::new();
    match (&spec.host, spec.v11) {
        (Some((host, at)), _) => extra.push((Field::new("Host", host.as_bytes()), *at)),
        (None, true) => extra.push((Field::new("host", b"example.com"), spec.framing_at)),
        (None, false) => {}
    }
    if let Some(value) = CONNECTION[spec.conn.0].0 {
        extra.push((Field::new("Connection", value.as_bytes()), spec.conn.1));
    }
    // HTTP/1.0 has no chunked coding: send the same data with a length.
    let body = match &spec.body {
        Body::Chunked(c) if !spec.v11 => Body::Length(c.data()),
        other => other.clone(),
    };
    let kind = match &body {
        Body::None => BodyKind::Empty,
        Body::Length(data) => {
            let len = data.len().to_string();
            extra.push((
                Field::new("Content-Length", len.as_bytes()),
                spec.framing_at,
            ));
            BodyKind::Length(data.len() as u64)
        }
        Body::Chunked(_) => {
            extra.push((
                Field::new("Transfer-Encoding", spec.te.as_bytes()),
                spec.framing_at,
            ));
            BodyKind::Chunked
        }
    };
    let fields = place(spec.fields.clone(), extra);

    let mut bytes = Vec::new();
    let version = if spec.v11 { "HTTP/1.1" } else { "HTTP/1.0" };
    bytes.extend_from_slice(format!("{} {} {version}\r\n", spec.method, spec.target).as_bytes());
    for f in &fields {
        f.write(&mut bytes);
    }
    bytes.extend_from_slice(b"\r\n");

    let verdict = verdict(spec.v11, spec.conn.0);
    let mut events = vec![Norm::Request {
        method: spec.method.clone(),
        target: spec.target.clone(),
        version: if spec.v11 {
            Version::HTTP_11
        } else {
            Version::HTTP_10
        },
        fields: expected_fields(&fields),
        wire: expected_wire(&fields),
        body: kind,
    }];
    match &body {
        Body::None => {}
        Body::Length(data) => {
            bytes.extend_from_slice(data);
            if !data.is_empty() {
                events.push(Norm::Data(data.clone()));
            }
        }
        Body::Chunked(c) => {
            c.write(&mut bytes);
            c.events(&mut events);
        }
    }
    events.push(Norm::End(verdict));
    Message {
        bytes,
        events,
        verdict,
        answers: Method::GET,
        tunnel: 0,
    }
}

// --------------------------------------------------------------- responses

#[derive(Debug, Clone)]
struct Interim {
    status: u16,
    reason: Vec<u8>,
    fields: Vec<Field>,
}

#[derive(Debug, Clone)]
struct ResponseSpec {
    answers: &'static str,
    interims: Vec<Interim>,
    status: u16,
    reason: Vec<u8>,
    v11: bool,
    fields: Vec<Field>,
    conn: (usize, usize),
    body: Body,
    /// For bodiless responses: the framing field they carry anyway.
    declared: Option<u64>,
    close_delimited: bool,
    framing_at: usize,
    tunnel: Vec<u8>,
}

fn reason() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"OK".to_vec()),
        Just(Vec::new()),
        prop::collection::vec(
            prop_oneof![6 => 0x21u8..=0x7e, 2 => 0x80u8..=0xff, 2 => select(&b" \t"[..])],
            0..20
        ),
    ]
}

fn interim() -> impl Strategy<Value = Interim> {
    (
        select(&[100u16, 102, 103][..]),
        reason(),
        prop::collection::vec(field(), 0..4),
    )
        .prop_map(|(status, reason, fields)| Interim {
            status,
            reason,
            fields,
        })
}

fn response_spec() -> impl Strategy<Value = ResponseSpec> {
    (
        select(&["GET", "GET", "POST", "HEAD", "CONNECT"][..]),
        prop::collection::vec(interim(), 0..3),
        select(
            &[
                200u16, 200, 201, 204, 206, 299, 301, 304, 400, 404, 407, 418, 500, 503, 599, 101,
            ][..],
        ),
        reason(),
        prop::bool::weighted(0.8),
        (
            prop::collection::vec(field(), 0..20),
            (0..CONNECTION.len(), any::<usize>()),
        ),
        (
            body(),
            prop::option::of(0u64..100_000),
            prop::bool::weighted(0.3),
            any::<usize>(),
            prop::collection::vec(any::<u8>(), 0..20),
        ),
    )
        .prop_map(
            |(answers, interims, status, reason, v11, (fields, conn), b)| {
                let (body, declared, close_delimited, framing_at, tunnel) = b;
                ResponseSpec {
                    answers,
                    interims,
                    status,
                    reason,
                    v11,
                    fields,
                    conn,
                    body,
                    declared,
                    close_delimited,
                    framing_at,
                    tunnel,
                }
            },
        )
}

fn write_status_line(bytes: &mut Vec<u8>, v11: bool, status: u16, reason: &[u8]) {
    let version = if v11 { "HTTP/1.1" } else { "HTTP/1.0" };
    bytes.extend_from_slice(format!("{version} {status} ").as_bytes());
    bytes.extend_from_slice(reason);
    bytes.extend_from_slice(b"\r\n");
}

/// `last`: nothing follows this response in the generated sequence, so it
/// may be close-delimited or switch protocols.
fn encode_response(spec: &ResponseSpec, last: bool) -> Message {
    let mut bytes = Vec::new();
    let mut events = Vec::new();
    for i in &spec.interims {
        if !spec.v11 {
            break;
        }
        write_status_line(&mut bytes, true, i.status, &i.reason);
        for f in &i.fields {
            f.write(&mut bytes);
        }
        bytes.extend_from_slice(b"\r\n");
        events.push(Norm::Interim {
            status: i.status,
            reason: i.reason.clone(),
            fields: expected_fields(&i.fields),
            wire: expected_wire(&i.fields),
        });
    }

    let answers = Method::from_bytes(spec.answers.as_bytes()).unwrap();
    let mut status = spec.status;
    let connect = answers == Method::CONNECT;
    let switch_status = status == 101 || (connect && (200..300).contains(&status));
    if switch_status && !last {
        status = 404;
    }
    let switch = status == 101 || (connect && (200..300).contains(&status));
    let bodiless = switch || answers == Method::HEAD || status == 204 || status == 304;

    let mut extra = Vec::new();
    if let Some(value) = CONNECTION[spec.conn.0].0 {
        extra.push((Field::new("Connection", value.as_bytes()), spec.conn.1));
    }
    let mut verdict = verdict(spec.v11, spec.conn.0);
    let mut body_bytes = Vec::new();
    let mut body_events = Vec::new();
    let kind = if bodiless {
        // Whatever the framing fields say, there is no body.
        if let (Some(n), false) = (spec.declared, switch) {
            let value = n.to_string();
            extra.push((
                Field::new("Content-Length", value.as_bytes()),
                spec.framing_at,
            ));
        }
        BodyKind::Empty
    } else if spec.close_delimited && last {
        let data = match &spec.body {
            Body::Length(d) => d.clone(),
            Body::Chunked(c) => c.data(),
            Body::None => Vec::new(),
        };
        if !data.is_empty() {
            body_events.push(Norm::Data(data.clone()));
        }
        body_bytes = data;
        verdict = verdict.and(KeepAlive::Close(CloseReason::CloseDelimited));
        BodyKind::CloseDelimited
    } else {
        match &spec.body {
            Body::Chunked(c) if spec.v11 => {
                extra.push((Field::new("Transfer-Encoding", b"chunked"), spec.framing_at));
                c.write(&mut body_bytes);
                c.events(&mut body_events);
                BodyKind::Chunked
            }
            other => {
                let data = match other {
                    Body::Length(d) => d.clone(),
                    Body::Chunked(c) => c.data(),
                    Body::None => Vec::new(),
                };
                let len = data.len().to_string();
                extra.push((
                    Field::new("Content-Length", len.as_bytes()),
                    spec.framing_at,
                ));
                if !data.is_empty() {
                    body_events.push(Norm::Data(data.clone()));
                }
                body_bytes = data;
                BodyKind::Length(body_bytes.len() as u64)
            }
        }
    };
    if switch {
        verdict = KeepAlive::Close(CloseReason::Switched);
    }
    let fields = place(spec.fields.clone(), extra);
    write_status_line(&mut bytes, spec.v11, status, &spec.reason);
    for f in &fields {
        f.write(&mut bytes);
    }
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(&body_bytes);
    events.push(Norm::Response {
        status,
        reason: spec.reason.clone(),
        version: if spec.v11 {
            Version::HTTP_11
        } else {
            Version::HTTP_10
        },
        fields: expected_fields(&fields),
        wire: expected_wire(&fields),
        body: kind,
    });
    events.extend(body_events);
    events.push(Norm::End(verdict));
    let mut tunnel = 0;
    if switch {
        // Bytes of the new protocol: the decoder must leave them alone.
        bytes.extend_from_slice(&spec.tunnel);
        tunnel = spec.tunnel.len();
    }
    Message {
        bytes,
        events,
        verdict,
        answers,
        tunnel,
    }
}

/// A pipelined sequence: its bytes, the events up to and including the
/// first message that closes the connection, and the bytes after it.
#[derive(Debug, Clone)]
struct Sequence {
    bytes: Vec<u8>,
    events: Vec<Norm>,
    leftover: Vec<u8>,
    methods: Vec<Method>,
}

fn sequence(messages: Vec<Message>) -> Sequence {
    let mut seq = Sequence {
        bytes: Vec::new(),
        events: Vec::new(),
        leftover: Vec::new(),
        methods: Vec::new(),
    };
    let mut closed = false;
    for m in messages {
        seq.bytes.extend_from_slice(&m.bytes);
        seq.methods.push(m.answers.clone());
        if closed {
            seq.leftover.extend_from_slice(&m.bytes);
            continue;
        }
        seq.events.extend(m.events);
        // The tunnel bytes written after a switching head stay in the buffer.
        seq.leftover
            .extend_from_slice(&m.bytes[m.bytes.len() - m.tunnel..]);
        closed = !m.verdict.is_reusable();
    }
    seq
}

fn requests() -> impl Strategy<Value = Sequence> {
    prop::collection::vec(request_spec(), 1..=4)
        .prop_map(|specs| sequence(specs.iter().map(encode_request).collect()))
}

fn responses() -> impl Strategy<Value = Sequence> {
    prop::collection::vec(response_spec(), 1..=4).prop_map(|specs| {
        let n = specs.len();
        sequence(
            specs
                .iter()
                .enumerate()
                .map(|(i, s)| encode_response(s, i + 1 == n))
                .collect(),
        )
    })
}

/// A response decoder with its default leniency and the wire view on.
fn response_decoder(limits: Limits, methods: &[Method]) -> ResponseDecoder {
    response_decoder_with(limits, methods, ResponseLeniency::default())
}

/// A request decoder with the wire view on.
fn request_decoder(limits: Limits, leniency: RequestLeniency) -> RequestDecoder {
    let mut dec = RequestDecoder::with_leniency(limits, leniency);
    dec.set_wire_view(true);
    dec
}

/// `outcome` as a decoder without the wire view gives it.
fn without_wire(mut outcome: Outcome) -> Outcome {
    for event in &mut outcome.events {
        match event {
            Norm::Request { wire, .. }
            | Norm::Response { wire, .. }
            | Norm::Interim { wire, .. } => *wire = None,
            _ => {}
        }
    }
    outcome
}

fn response_decoder_with(
    limits: Limits,
    methods: &[Method],
    leniency: ResponseLeniency,
) -> ResponseDecoder {
    let mut dec = ResponseDecoder::with_leniency(limits, leniency);
    dec.set_wire_view(true);
    for m in methods {
        dec.expect_response_to(m);
    }
    dec
}

fn expected(seq: &Sequence) -> Outcome {
    Outcome {
        events: seq.events.clone(),
        error: None,
        leftover: Some(seq.leftover.clone()),
    }
}

fn small_limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_head_bytes = 256;
    limits.max_fields = 8;
    limits.max_chunk_line_bytes = 32;
    limits.max_chunk_extension_bytes = 40;
    limits.max_chunk_overhead_bytes = 48;
    limits.max_trailer_bytes = 64;
    limits.max_target_bytes = 64;
    limits.max_interim_responses = 2;
    limits
}

// ------------------------------------------------------------------- fuzz

const SOUP: &[&[u8]] = &[
    b"\r\n",
    b"\r\n",
    b"\r\n\r\n",
    b"\n",
    b"\r",
    b" ",
    b"\t",
    b":",
    b";",
    b"=",
    b"\"",
    b",",
    b"GET ",
    b"POST ",
    b"HEAD ",
    b"/",
    b"/a?b",
    b"*",
    b"HTTP/1.1",
    b"HTTP/1.0",
    b" HTTP/1.1\r\n",
    b"HTTP/1.1 200 OK\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\n",
    b"HTTP/1.0 204 \r\n",
    b"Host: h\r\n",
    b"Content-Length: ",
    b"Content-Length: 5\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: gzip\r\n",
    b"Connection: close\r\n",
    b"Connection: keep-alive\r\n",
    b"X-A: b\r\n",
    b"0",
    b"5",
    b"a",
    b"ff",
    b"hello",
    b"0\r\n\r\n",
    b"\x00",
    b"\x7f",
    b"\x80",
    b"\xff",
];

fn soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(select(SOUP), 0..80).prop_map(|parts| parts.concat())
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![
        3 => any::<u8>(),
        2 => select(&b"\r\n :;\t0aF\"\x00"[..]),
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), byte).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        match m {
            Mutation::Flip(i, b) if !bytes.is_empty() => {
                let i = *i % bytes.len();
                bytes[i] = *b;
            }
            Mutation::Insert(i, b) => {
                let i = *i % (bytes.len() + 1);
                bytes.insert(i, *b);
            }
            Mutation::Delete(i) if !bytes.is_empty() => {
                let i = *i % bytes.len();
                bytes.remove(i);
            }
            _ => {}
        }
    }
    bytes
}

/// A deviation some leniency switch accepts, applied at the `n`th place it
/// fits (modulo the number of places).
#[derive(Debug, Clone)]
enum Deviation {
    /// A CRLF loses its CR (`bare_lf`).
    BareLf(usize),
    /// Whitespace goes before a colon (`space_before_colon`).
    SpaceBeforeColon(usize, &'static str),
    /// A status line loses everything after the code (`no_space_after_status`).
    NoSpaceAfterStatus(usize),
    /// A line that is not a field goes after a line end (`skip_invalid_fields`).
    InvalidLine(usize, &'static str),
    /// A line end becomes an obs-fold (`obs_fold`).
    Fold(usize),
    /// A `Content-Length` joins a `Transfer-Encoding: chunked`
    /// (`chunked_with_content_length`).
    ContentLength(usize),
}

fn deviation() -> impl Strategy<Value = Deviation> {
    let n = any::<usize>();
    prop_oneof![
        3 => n.prop_map(Deviation::BareLf),
        1 => (n, select(&[" ", "\t", "  "][..])).prop_map(|(n, w)| Deviation::SpaceBeforeColon(n, w)),
        1 => n.prop_map(Deviation::NoSpaceAfterStatus),
        1 => (n, select(&["no colon", "X(y): z", ": v", " lead"][..]))
            .prop_map(|(n, l)| Deviation::InvalidLine(n, l)),
        1 => n.prop_map(Deviation::Fold),
        1 => n.prop_map(Deviation::ContentLength),
    ]
}

/// Offsets of every occurrence of `pat` in `bytes`.
fn places(bytes: &[u8], pat: &[u8]) -> Vec<usize> {
    (0..bytes.len().saturating_sub(pat.len() - 1))
        .filter(|&i| bytes[i..].starts_with(pat))
        .collect()
}

fn deviate(mut bytes: Vec<u8>, deviations: &[Deviation]) -> Vec<u8> {
    for d in deviations {
        let (pat, n): (&[u8], usize) = match d {
            Deviation::BareLf(n) | Deviation::InvalidLine(n, _) | Deviation::Fold(n) => {
                (b"\r\n", *n)
            }
            Deviation::SpaceBeforeColon(n, _) => (b": ", *n),
            Deviation::NoSpaceAfterStatus(n) => (b"HTTP/1.", *n),
            Deviation::ContentLength(n) => (b"Transfer-Encoding: chunked\r\n", *n),
        };
        let at = places(&bytes, pat);
        if at.is_empty() {
            continue;
        }
        let i = at[n % at.len()];
        match d {
            Deviation::BareLf(_) => {
                bytes.remove(i);
            }
            Deviation::SpaceBeforeColon(_, w) => {
                bytes.splice(i..i, w.bytes());
            }
            Deviation::NoSpaceAfterStatus(_) => {
                // "HTTP/1.x SSS ...\r\n" becomes "HTTP/1.x SSS\r\n".
                let from = i + 12;
                if let Some(cr) = bytes[i..].iter().position(|&b| b == b'\r') {
                    if from <= i + cr {
                        bytes.drain(from..i + cr);
                    }
                }
            }
            Deviation::InvalidLine(_, line) => {
                let mut add = line.as_bytes().to_vec();
                add.extend_from_slice(b"\r\n");
                bytes.splice(i + 2..i + 2, add);
            }
            Deviation::Fold(_) => {
                bytes.splice(i + 2..i + 2, *b" ");
            }
            Deviation::ContentLength(_) => {
                bytes.splice(i..i, *b"Content-Length: 7\r\n");
            }
        }
    }
    bytes
}

/// `make`'s decoder gives the same outcome on `input` whole, cut at `cuts`
/// and byte by byte; returns the outcome.
fn split_invariant<D: Decoder>(
    make: impl Fn() -> D,
    limits: &Limits,
    input: &[u8],
    cuts: &[usize],
    what: &str,
) -> Outcome {
    let whole = run(&mut make(), limits, input, &[], true);
    let split = run(&mut make(), limits, input, cuts, true);
    assert_eq!(whole, split, "{what}, cuts {cuts:?}");
    let bytes = run(&mut make(), limits, input, &bytewise(input.len()), true);
    assert_eq!(whole, bytes, "{what}, byte by byte");
    whole
}

/// What the strict decoder accepts, the lenient one reads the same way: a
/// switch only ever changes the reading of input the strict decoder
/// refuses. Without a strict error the outcomes are equal; with one, every
/// message the strict decoder completed is read identically.
fn lenient_agrees_with_strict(strict: &Outcome, lenient: &Outcome, what: &str) {
    if strict.error.is_none() {
        assert_eq!(
            strict, lenient,
            "{what}: the switches changed accepted input"
        );
        return;
    }
    let completed = strict
        .events
        .iter()
        .rposition(|e| matches!(e, Norm::End(_)))
        .map_or(0, |i| i + 1);
    assert_eq!(
        lenient.events.get(..completed),
        Some(&strict.events[..completed]),
        "{what}: the switches changed a message the strict decoder completed"
    );
}

/// Any input: whole and split give the same outcome, for both decoders,
/// with small limits and with the defaults, strict, with their defaults
/// and with every leniency switch on; the lenient decoders read what the
/// strict ones accept exactly as they do.
fn same_outcome_whole_and_split(input: &[u8], picks: &[usize], methods: &[Method]) {
    for limits in [small_limits(), Limits::default()] {
        let cuts = cuts_from(input.len(), picks);
        let l = &limits;
        let strict = split_invariant(
            || request_decoder(l.clone(), RequestLeniency::strict()),
            l,
            input,
            &cuts,
            "request decoder",
        );
        let lenient = split_invariant(
            || request_decoder(l.clone(), RequestLeniency::all()),
            l,
            input,
            &cuts,
            "lenient request decoder",
        );
        lenient_agrees_with_strict(&strict, &lenient, "request decoder");

        let strict = split_invariant(
            || response_decoder_with(l.clone(), methods, ResponseLeniency::strict()),
            l,
            input,
            &cuts,
            "strict response decoder",
        );
        let default = split_invariant(
            || response_decoder(l.clone(), methods),
            l,
            input,
            &cuts,
            "response decoder",
        );
        lenient_agrees_with_strict(&strict, &default, "default response decoder");
        let lenient = split_invariant(
            || response_decoder_with(l.clone(), methods, ResponseLeniency::all()),
            l,
            input,
            &cuts,
            "lenient response decoder",
        );
        lenient_agrees_with_strict(&strict, &lenient, "lenient response decoder");

        for leniency in [RequestLeniency::strict(), RequestLeniency::all()] {
            let make = |only: bool| {
                let mut dec = request_decoder(l.clone(), leniency);
                dec.set_wire_only(only);
                AsWire(dec)
            };
            wire_only_agrees(make, l, input, &cuts, "wire-only request decoder");
        }
        for leniency in [
            ResponseLeniency::strict(),
            ResponseLeniency::default(),
            ResponseLeniency::all(),
        ] {
            let make = |only: bool| {
                let mut dec = response_decoder_with(l.clone(), methods, leniency);
                dec.set_wire_only(only);
                AsWire(dec)
            };
            wire_only_agrees(make, l, input, &cuts, "wire-only response decoder");
        }
    }
}

fn methods() -> impl Strategy<Value = Vec<Method>> {
    prop::collection::vec(
        select(&["GET", "HEAD", "CONNECT", "POST"][..])
            .prop_map(|m| Method::from_bytes(m.as_bytes()).unwrap()),
        0..4,
    )
}

fn cut_picks() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(any::<usize>(), 0..12)
}

proptest! {

    #[test]
    fn valid_requests_decode_as_generated_however_split(seq in requests(), picks in cut_picks()) {
        let limits = Limits::default();
        let want = expected(&seq);
        let input = &seq.bytes;
        for cuts in [Vec::new(), cuts_from(input.len(), &picks), bytewise(input.len())] {
            let mut strict = request_decoder(limits.clone(), RequestLeniency::strict());
            let got = run(&mut strict, &limits, input, &cuts, true);
            prop_assert_eq!(&got, &want, "cuts {:?}", cuts);
            let mut lenient = RequestDecoder::with_leniency(limits.clone(), RequestLeniency::all());
            let got = run(&mut lenient, &limits, input, &cuts, true);
            prop_assert_eq!(&got, &without_wire(want.clone()), "every switch on, cuts {:?}", cuts);
        }
        let make = |only: bool| {
            let mut dec = request_decoder(limits.clone(), RequestLeniency::strict());
            dec.set_wire_only(only);
            AsWire(dec)
        };
        wire_only_agrees(make, &limits, input, &cuts_from(input.len(), &picks), "wire-only");
    }

    #[test]
    fn valid_responses_decode_as_generated_however_split(seq in responses(), picks in cut_picks()) {
        let limits = Limits::default();
        let want = expected(&seq);
        let input = &seq.bytes;
        for cuts in [Vec::new(), cuts_from(input.len(), &picks), bytewise(input.len())] {
            for leniency in [ResponseLeniency::strict(), ResponseLeniency::default(), ResponseLeniency::all()] {
                let mut dec = response_decoder_with(limits.clone(), &seq.methods, leniency);
                // The wire view off in one of them.
                let wire = leniency != ResponseLeniency::default();
                dec.set_wire_view(wire);
                let want = if wire { want.clone() } else { without_wire(want.clone()) };
                let got = run(&mut dec, &limits, input, &cuts, true);
                prop_assert_eq!(&got, &want, "{:?}, cuts {:?}", leniency, cuts);
            }
        }
        let make = |only: bool| {
            let mut dec = response_decoder(limits.clone(), &seq.methods);
            dec.set_wire_only(only);
            AsWire(dec)
        };
        wire_only_agrees(make, &limits, input, &cuts_from(input.len(), &picks), "wire-only");
    }

    #[test]
    fn arbitrary_bytes_same_outcome_whole_or_split(
        input in prop::collection::vec(any::<u8>(), 0..400),
        picks in cut_picks(),
        methods in methods(),
    ) {
        same_outcome_whole_and_split(&input, &picks, &methods);
    }

    #[test]
    fn token_soup_same_outcome_whole_or_split(
        input in soup(),
        picks in cut_picks(),
        methods in methods(),
    ) {
        same_outcome_whole_and_split(&input, &picks, &methods);
    }

    #[test]
    fn mutated_requests_same_outcome_whole_or_split(
        seq in requests(),
        mutations in prop::collection::vec(mutation(), 1..6),
        picks in cut_picks(),
        methods in methods(),
    ) {
        let input = mutate(seq.bytes, &mutations);
        same_outcome_whole_and_split(&input, &picks, &methods);
    }

    #[test]
    fn deviant_requests_same_outcome_whole_or_split(
        seq in requests(),
        deviations in prop::collection::vec(deviation(), 1..5),
        picks in cut_picks(),
        methods in methods(),
    ) {
        let input = deviate(seq.bytes, &deviations);
        same_outcome_whole_and_split(&input, &picks, &methods);
    }

    #[test]
    fn deviant_responses_same_outcome_whole_or_split(
        seq in responses(),
        deviations in prop::collection::vec(deviation(), 1..5),
        picks in cut_picks(),
    ) {
        let input = deviate(seq.bytes, &deviations);
        same_outcome_whole_and_split(&input, &picks, &seq.methods);
    }

    #[test]
    fn mutated_responses_same_outcome_whole_or_split(
        seq in responses(),
        mutations in prop::collection::vec(mutation(), 1..6),
        picks in cut_picks(),
    ) {
        let input = mutate(seq.bytes, &mutations);
        same_outcome_whole_and_split(&input, &picks, &seq.methods);
    }
}

// ------------------------------------------------------------ regressions

/// A response that starts with an empty line (CRLF) before its status line.
/// RFC 9112 section 2.2 lets a recipient skip it, or it is an error; either
/// way the decoder must not panic.
#[test]
fn response_with_a_leading_empty_line_does_not_panic() {
    let input = b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let limits = Limits::default();
    let outcome = std::panic::catch_unwind(|| {
        run(
            &mut ResponseDecoder::new(limits.clone()),
            &limits,
            input,
            &[],
            true,
        )
    });
    let outcome = outcome.expect("the response decoder panicked on a leading CRLF");
    let split = run(
        &mut ResponseDecoder::new(limits.clone()),
        &limits,
        input,
        &bytewise(input.len()),
        true,
    );
    assert_eq!(outcome, split);
}

/// The generator itself: a known request encodes to the bytes and events
/// the tests above rely on, so a generator bug cannot hide a decoder bug.
#[test]
fn the_request_generator_writes_what_it_means() {
    let spec = RequestSpec {
        method: "PURGE".into(),
        target: "/a/b?c=d".into(),
        v11: true,
        host: Some(("example.com".into(), 0)),
        fields: vec![Field {
            name: "X-Y".into(),
            value: b"v \x80 w".to_vec(),
            before: "\t",
            after: " ",
        }],
        conn: (2, 0),
        body: Body::Length(b"hey".to_vec()),
        framing_at: 0,
        te: "chunked",
    };
    let m = encode_request(&spec);
    let text = &m.bytes[..];
    assert!(text.starts_with(b"PURGE /a/b?c=d HTTP/1.1\r\n"));
    assert!(text.ends_with(b"\r\n\r\nhey"));
    assert!(text.windows(13).any(|w| w == b"X-Y:\tv \x80 w \r\n"));
    assert_eq!(m.verdict, KeepAlive::Close(CloseReason::PeerClose));
    assert_eq!(m.events.len(), 3);
    assert_eq!(m.events[1], Norm::Data(b"hey".to_vec()));
    let limits = Limits::default();
    let got = run(
        &mut request_decoder(limits.clone(), RequestLeniency::strict()),
        &limits,
        text,
        &[],
        true,
    );
    assert_eq!(got.events, m.events);
}

/// The deviation generator writes what each switch is about.
#[test]
fn the_deviations_are_the_ones_the_switches_accept() {
    let res = b"HTTP/1.1 200 OK\r\nA: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_vec();
    let cases: [(Deviation, &[u8]); 6] = [
        (
            Deviation::BareLf(1),
            b"HTTP/1.1 200 OK\r\nA: 1\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ),
        (
            Deviation::SpaceBeforeColon(0, "\t"),
            b"HTTP/1.1 200 OK\r\nA\t: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ),
        (
            Deviation::NoSpaceAfterStatus(0),
            b"HTTP/1.1 200\r\nA: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ),
        (
            Deviation::InvalidLine(0, "no colon"),
            b"HTTP/1.1 200 OK\r\nno colon\r\nA: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ),
        (
            Deviation::Fold(1),
            b"HTTP/1.1 200 OK\r\nA: 1\r\n Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ),
        (
            Deviation::ContentLength(0),
            b"HTTP/1.1 200 OK\r\nA: 1\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ),
    ];
    for (d, want) in cases {
        let got = deviate(res.clone(), std::slice::from_ref(&d));
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(want),
            "{d:?}"
        );
    }
}
