//! The checks behind every fuzz target, shared with the plain `cargo test`
//! replay (the `fuzz_corpus` tests of the `differential` test binary), so a
//! saved input is judged the same way by libFuzzer and by the test suite.
//!
//! Every entry point takes the raw fuzz input and panics when an invariant
//! breaks:
//!
//! - nothing panics, whatever the bytes (peer input never reaches a panic);
//! - the outcome (events, error kind and the leniency switch it names,
//!   bytes left over, connection output) is the same whether the input arrives whole, byte by byte, or cut at
//!   split points taken from the input;
//! - after every `Ok(None)` of a decoder that may still parse, the bytes it
//!   leaves in the caller's buffer stay within the relevant `Limits` bound;
//! - an error is sticky: the next call returns the same error;
//! - the decoder never loops: a bounded number of calls per input byte.
//!
//! Input layouts (byte 0 is always the control byte `ctl`):
//!
//! | target | layout |
//! |---|---|
//! | `request_decoder` | `ctl`, message bytes |
//! | `response_decoder` | `ctl`, `methods`, message bytes |
//! | `chunked_body` | `ctl`, chunked body bytes (after a fixed chunked request head) |
//! | `server_connection` | `ctl`, `n`, `n` big-endian u16 split offsets, request bytes (through a `ServerConnection`, then a `ServerSession`) |
//! | `client_connection` | `ctl`, `methods`, `n`, `n` u16 split offsets, response bytes (read by a `ClientConnection`, then a `ClientSession`) |
//! | `roundtrip` | a message description read byte by byte (see [`roundtrip`]) |
//! | `lenient` | `ctl`, `methods`, `mask` (a subset of the side's switches), message bytes (a request when `ctl` bit 2 is set) |
//! | `simulation` | a simulation plan read byte by byte (see `simulation::plan_from`) |
//!
//! `ctl` bit 0 selects small limits (so the limit paths are reached by
//! short inputs), bit 1 ends the input with the peer closing (EOF), bits
//! 2-7 seed the pseudo-random split (for `lenient`, bit 2 picks the side
//! and bits 3-7 the split). `methods` holds four 2-bit request
//! methods (GET, HEAD, CONNECT, POST), oldest first in the low bits.
#![allow(dead_code)]

use bytes::{Buf, Bytes, BytesMut};
use h1proto::leniency::Tolerance;
use h1proto::{
    ClientConnection, Config, ErrorKind, Event, KeepAlive, Limits, ReasonPhrase, RequestDecoder,
    RequestEncoder, ResponseContext, ResponseDecoder, ResponseEncoder, ServerConnection,
    framing::BodyKind,
    leniency::{RequestLeniency, ResponseLeniency},
};
use http::{HeaderMap, Method, Request, Response};
use std::time::Instant;

mod simulation;
pub use simulation::simulation;

// ------------------------------------------------------------ input parts

/// The fixed head the `chunked_body` target puts before its input.
pub const CHUNKED_HEAD: &[u8] =
    b"POST /upload HTTP/1.1\r\nHost: fuzz.example\r\nTransfer-Encoding: chunked\r\n\r\n";

/// Limits small enough that short inputs reach every bound.
pub fn small_limits() -> Limits {
    let mut l = Limits::default();
    l.max_target_bytes = 64;
    l.max_head_bytes = 256;
    l.max_fields = 8;
    l.max_chunk_line_bytes = 32;
    l.max_chunk_extension_bytes = 40;
    l.max_chunk_overhead_bytes = 48;
    l.max_trailer_bytes = 96;
    l.max_interim_responses = 3;
    l
}

fn limits_for(ctl: u8) -> Limits {
    if ctl & 1 == 1 {
        small_limits()
    } else {
        Limits::default()
    }
}

/// The four request methods the `methods` byte selects from.
pub fn methods_from(byte: u8) -> Vec<Method> {
    (0..4)
        .map(|i| match (byte >> (2 * i)) & 3 {
            0 => Method::GET,
            1 => Method::HEAD,
            2 => Method::CONNECT,
            _ => Method::POST,
        })
        .collect()
}

/// The `methods` byte for a list of method names (unknown ones read as GET).
pub fn methods_byte(names: &[&str]) -> u8 {
    let mut byte = 0u8;
    for (i, name) in names.iter().take(4).enumerate() {
        let code = match *name {
            "HEAD" => 1,
            "CONNECT" => 2,
            "POST" => 3,
            _ => 0,
        };
        byte |= code << (2 * i);
    }
    // Past the listed methods, GET (code 0) is what a missing entry means.
    byte
}

/// A small xorshift generator: split points that depend only on the input.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Cut offsets for `len` bytes: pieces of 1 to 24 bytes drawn from `seed`.
fn random_cuts(len: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed ^ len as u64);
    let mut cuts = Vec::new();
    let mut at = 0;
    loop {
        at += 1 + (rng.next() % 24) as usize;
        if at >= len {
            return cuts;
        }
        cuts.push(at);
    }
}

fn bytewise(len: usize) -> Vec<usize> {
    (1..len).collect()
}

/// Reads `n` and `n` u16 split offsets; returns the cuts (sorted, inside
/// the message) and the message.
fn split_header(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return (vec![], data);
    };
    let n = usize::from(n % 16).min(rest.len() / 2);
    let (offsets, msg) = rest.split_at(2 * n);
    let mut cuts: Vec<usize> = offsets
        .chunks(2)
        .map(|p| usize::from(u16::from_be_bytes([p[0], p[1]])))
        .filter(|&c| c > 0 && c < msg.len())
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    (cuts, msg)
}

/// Splits of a message to compare: whole, byte by byte (for inputs small
/// enough), pseudo-random, and any given ones.
fn split_plans(len: usize, seed: u64, given: Option<Vec<usize>>) -> Vec<Vec<usize>> {
    let mut plans = vec![vec![]];
    if len <= 64 * 1024 {
        plans.push(bytewise(len));
    }
    plans.push(random_cuts(len, seed));
    if let Some(cuts) = given {
        plans.push(cuts);
    }
    plans
}

fn pieces<'a>(msg: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0;
    for &to in cuts {
        out.push(&msg[from..to]);
        from = to;
    }
    out.push(&msg[from..]);
    out
}

// ------------------------------------------------------- normalised events

/// An event reduced to what a caller can observe, comparable across runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
    /// Request head: method, target, version, fields, framing.
    Request(String, String, String, Vec<(String, Vec<u8>)>, BodyKind),
    /// Response head: status, version, reason extension, fields, framing.
    Response(
        u16,
        String,
        Option<Vec<u8>>,
        Vec<(String, Vec<u8>)>,
        BodyKind,
    ),
    /// Interim response: status and fields.
    Interim(u16, Vec<(String, Vec<u8>)>),
    /// Body bytes (consecutive `Data` events merged).
    Data(Vec<u8>),
    /// Trailer fields.
    Trailers(Vec<(String, Vec<u8>)>),
    /// Chunk extensions (only from decoders asked for them).
    Ext(Vec<u8>),
    /// End of message with its verdict.
    End(KeepAlive),
    /// A head as its wire view shows it (bytes), with its framing: what the
    /// wire-only comparison reduces every head to.
    Wire(Vec<u8>, BodyKind),
}

fn fields(map: &HeaderMap) -> Vec<(String, Vec<u8>)> {
    map.iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.as_bytes().to_vec()))
        .collect()
}

fn norm_request(ev: Event<Request<()>>) -> Ev {
    match ev {
        Event::Head { head, body } => Ev::Request(
            head.method().to_string(),
            head.uri().to_string(),
            format!("{:?}", head.version()),
            fields(head.headers()),
            body,
        ),
        other => norm_common(other),
    }
}

fn norm_response(ev: Event<Response<()>>) -> Ev {
    match ev {
        Event::Head { head, body } => Ev::Response(
            head.status().as_u16(),
            format!("{:?}", head.version()),
            head.extensions()
                .get::<ReasonPhrase>()
                .map(|r| r.as_bytes().to_vec()),
            fields(head.headers()),
            body,
        ),
        Event::Interim(head) => Ev::Interim(head.status().as_u16(), fields(head.headers())),
        other => norm_common(other),
    }
}

fn norm_common<H: h1proto::MessageHead>(ev: Event<H>) -> Ev {
    match ev {
        Event::Data(d) => {
            assert!(!d.is_empty(), "an empty Data event");
            Ev::Data(d.to_vec())
        }
        Event::Trailers(t) => Ev::Trailers(fields(&t)),
        Event::ChunkExtensions(e) => Ev::Ext(e.as_bytes().to_vec()),
        Event::End(k) => Ev::End(k),
        Event::Head { .. } | Event::Interim(_) | Event::Wire { .. } => {
            unreachable!("handled by the caller")
        }
        #[allow(unreachable_patterns)]
        _ => panic!("an event this harness does not know"),
    }
}

fn push(events: &mut Vec<Ev>, ev: Ev) {
    match (events.last_mut(), ev) {
        (Some(Ev::Data(prev)), Ev::Data(more)) => prev.extend(more),
        (_, ev) => events.push(ev),
    }
}

/// What a run of a decoder produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Events, data merged.
    pub events: Vec<Ev>,
    /// The error that ended the run, if any.
    pub error: Option<ErrorKind>,
    /// The leniency switch that error names, if any.
    pub switch: Option<Tolerance>,
    /// The bytes left in the buffer (runs without an error only).
    pub leftover: Option<Vec<u8>>,
}

// --------------------------------------------------------------- decoders

/// A decoder as the harness drives it.
trait Dec {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Ev>, h1proto::Error>;
    fn closed(&self) -> bool;
    /// An error named `switch`: it must be a switch of the decoder's side
    /// that is off (an error never names a switch that would not get past
    /// it).
    fn check_switch(&self, switch: Tolerance);
}

impl Dec for RequestDecoder {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Ev>, h1proto::Error> {
        let r = if eof {
            self.decode_eof(buf)
        } else {
            self.decode(buf)
        };
        r.map(|o| o.map(norm_request))
    }
    fn closed(&self) -> bool {
        // No further message is decoded (a switch leaves HTTP too).
        self.is_closed() || self.is_switched()
    }
    fn check_switch(&self, switch: Tolerance) {
        assert!(
            switch.applies_to_requests(),
            "a request error names {switch}"
        );
        assert!(
            !self.leniency().is_on(switch),
            "refused although {switch} is on"
        );
    }
}

impl Dec for ResponseDecoder {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Ev>, h1proto::Error> {
        let r = if eof {
            self.decode_eof(buf)
        } else {
            self.decode(buf)
        };
        r.map(|o| o.map(norm_response))
    }
    fn closed(&self) -> bool {
        // No further message is decoded (a switch leaves HTTP too).
        self.is_closed() || self.is_switched()
    }
    fn check_switch(&self, switch: Tolerance) {
        assert!(
            switch.applies_to_responses(),
            "a response error names {switch}"
        );
        assert!(
            !self.leniency().is_on(switch),
            "refused although {switch} is on"
        );
    }
}

/// A decoder whose heads are reduced to their wire view and framing: in
/// wire-only mode (`Event::Wire`), or with the wire view on. Both runs
/// must give the same outcome: the mode only skips `http` types.
struct AsWire<D>(D);

fn wire_ev<H: h1proto::MessageHead>(
    ev: Event<H>,
    view: impl FnOnce(&H) -> Vec<u8>,
    interim: impl FnOnce(&H::Interim) -> Vec<u8>,
) -> Ev {
    match ev {
        Event::Wire { head, body } => {
            // What a proxy reads of it must be there.
            let _ = (head.method(), head.target(), head.status(), head.version());
            Ev::Wire(head.bytes().to_vec(), body)
        }
        Event::Head { head, body } => Ev::Wire(view(&head), body),
        Event::Interim(head) => Ev::Wire(interim(&head), BodyKind::Empty),
        other => norm_common(other),
    }
}

fn view_bytes<B>(exts: &http::Extensions, _: &B) -> Vec<u8> {
    let wire = exts.get::<h1proto::wire::WireHead>();
    wire.expect("a head decoded with the wire view on carries one")
        .bytes()
        .to_vec()
}

/// Trailers decoded with the wire view on: the view is there, its lines
/// grouped by name (in the order names first come) are the map's, and the
/// event carries the lines as received, so that splits and the wire-only
/// path are compared on them.
fn wire_trailers(map: &http::HeaderMap, wire: Option<&h1proto::wire::WireTrailers>) -> Ev {
    let wire = wire.expect("trailers decoded with the wire view on carry one");
    let lines: Vec<(String, Vec<u8>)> = wire
        .fields()
        .map(|(n, v)| (String::from_utf8_lossy(n).into_owned(), v.to_vec()))
        .collect();
    let mut names: Vec<String> = Vec::new();
    for (name, _) in &lines {
        let name = name.to_ascii_lowercase();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let grouped: Vec<(String, Vec<u8>)> = names
        .iter()
        .flat_map(|name| {
            lines
                .iter()
                .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
                .map(move |(_, v)| (name.clone(), v.clone()))
        })
        .collect();
    assert_eq!(
        grouped,
        fields(map),
        "the trailers' wire view is not their map"
    );
    Ev::Trailers(lines)
}

impl Dec for AsWire<RequestDecoder> {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Ev>, h1proto::Error> {
        let r = if eof {
            self.0.decode_eof(buf)
        } else {
            self.0.decode(buf)
        };
        r.map(|o| {
            o.map(|ev| match ev {
                Event::Trailers(map) => wire_trailers(&map, self.0.wire_trailers()),
                ev => wire_ev(
                    ev,
                    |h| view_bytes(h.extensions(), h),
                    |never| match *never {},
                ),
            })
        })
    }
    fn closed(&self) -> bool {
        self.0.is_closed() || self.0.is_switched()
    }
    fn check_switch(&self, switch: Tolerance) {
        self.0.check_switch(switch);
    }
}

impl Dec for AsWire<ResponseDecoder> {
    fn step(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Option<Ev>, h1proto::Error> {
        let r = if eof {
            self.0.decode_eof(buf)
        } else {
            self.0.decode(buf)
        };
        r.map(|o| {
            o.map(|ev| match ev {
                Event::Trailers(map) => wire_trailers(&map, self.0.wire_trailers()),
                ev => wire_ev(
                    ev,
                    |h| view_bytes(h.extensions(), h),
                    |h| view_bytes(h.extensions(), h),
                ),
            })
        })
    }
    fn closed(&self) -> bool {
        self.0.is_closed() || self.0.is_switched()
    }
    fn check_switch(&self, switch: Tolerance) {
        self.0.check_switch(switch);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Body(BodyKind),
}

/// The most bytes a decoder may leave in the buffer after `Ok(None)`.
fn held_bound(phase: Phase, limits: &Limits) -> usize {
    match phase {
        Phase::Head => limits.max_head_bytes,
        Phase::Body(BodyKind::Chunked) => limits.max_chunk_line_bytes.max(limits.max_trailer_bytes),
        Phase::Body(_) => 0,
    }
}

fn next_phase(phase: Phase, ev: &Ev) -> Phase {
    match ev {
        Ev::Request(.., body) | Ev::Response(.., body) => Phase::Body(*body),
        Ev::End(_) | Ev::Interim(..) => Phase::Head,
        Ev::Wire(head, body) => {
            // An interim response (1xx but 101) keeps the decoder in a head.
            let status = head.get(9..12).and_then(|c| std::str::from_utf8(c).ok());
            match status.and_then(|c| c.parse::<u16>().ok()) {
                Some(s) if head.starts_with(b"HTTP/") && (100..200).contains(&s) && s != 101 => {
                    Phase::Head
                }
                _ => Phase::Body(*body),
            }
        }
        _ => phase,
    }
}

/// Feeds `msg` cut at `cuts`, decoding until `Ok(None)` after each piece,
/// then `decode_eof` if `eof`. Checks the buffered-bytes bound, stickiness
/// of errors and that the decoder does not loop.
fn run_decoder<D: Dec>(
    dec: &mut D,
    limits: &Limits,
    prefix: &[u8],
    msg: &[u8],
    cuts: &[usize],
    eof: bool,
) -> Outcome {
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    let mut phase = Phase::Head;
    let mut calls = 0usize;
    let budget = 4 * (prefix.len() + msg.len()) + 64;
    let mut parts: Vec<(&[u8], bool)> = Vec::new();
    if !prefix.is_empty() {
        parts.push((prefix, false));
    }
    for p in pieces(msg, cuts) {
        parts.push((p, false));
    }
    if eof {
        parts.push((&[][..], true));
    }
    for (piece, at_eof) in parts {
        buf.extend_from_slice(piece);
        loop {
            calls += 1;
            assert!(calls <= budget, "the decoder keeps returning: {events:?}");
            match dec.step(&mut buf, at_eof) {
                Ok(Some(ev)) => {
                    phase = next_phase(phase, &ev);
                    push(&mut events, ev);
                }
                Ok(None) => {
                    if !dec.closed() {
                        let bound = held_bound(phase, limits);
                        assert!(
                            buf.len() <= bound,
                            "{} bytes held in {phase:?} (bound {bound})",
                            buf.len()
                        );
                    }
                    break;
                }
                Err(err) => {
                    assert_eq!(err.status(), err.kind().status());
                    let again = dec.step(&mut buf, at_eof);
                    assert!(
                        matches!(&again, Err(e) if e.kind() == err.kind() && e.tolerance() == err.tolerance()),
                        "error {:?} not sticky: then {again:?}",
                        err.kind()
                    );
                    assert!(dec.closed(), "a failed decoder says it is not closed");
                    if let Some(switch) = err.tolerance() {
                        dec.check_switch(switch);
                    }
                    return Outcome {
                        events,
                        error: Some(err.kind()),
                        switch: err.tolerance(),
                        leftover: None,
                    };
                }
            }
        }
    }
    Outcome {
        events,
        error: None,
        switch: None,
        leftover: Some(buf.to_vec()),
    }
}

/// Runs `make`'s decoder over every split plan and requires one outcome.
fn split_invariant<D: Dec>(
    make: impl Fn() -> D,
    limits: &Limits,
    prefix: &[u8],
    msg: &[u8],
    seed: u64,
    eof: bool,
) -> Outcome {
    let plans = split_plans(msg.len(), seed, None);
    let first = run_decoder(&mut make(), limits, prefix, msg, &plans[0], eof);
    for cuts in &plans[1..] {
        let other = run_decoder(&mut make(), limits, prefix, msg, cuts, eof);
        assert_eq!(
            first,
            other,
            "the outcome depends on the split (cuts {:?})",
            &cuts[..cuts.len().min(32)]
        );
    }
    first
}

/// Target `request_decoder`: `ctl`, then the bytes a client sends.
pub fn request_decoder(data: &[u8]) {
    let Some((&ctl, msg)) = data.split_first() else {
        return;
    };
    let limits = limits_for(ctl);
    let seed = u64::from(ctl >> 2);
    let eof = ctl & 2 != 0;
    split_invariant(
        || RequestDecoder::new(limits.clone()),
        &limits,
        b"",
        msg,
        seed,
        eof,
    );
    // Decoding to the wire view alone reads every input as the full
    // decoder does.
    let make = |only: bool| {
        let mut dec = RequestDecoder::new(limits.clone());
        dec.set_wire_view(true);
        dec.set_wire_only(only);
        AsWire(dec)
    };
    let view = split_invariant(|| make(false), &limits, b"", msg, seed, eof);
    let only = split_invariant(|| make(true), &limits, b"", msg, seed, eof);
    assert_eq!(view, only, "wire-only decoding reads otherwise");
}

/// Target `response_decoder`: `ctl`, `methods`, then the bytes a server
/// sends, decoded as answers to the four methods.
pub fn response_decoder(data: &[u8]) {
    let [ctl, methods, msg @ ..] = data else {
        return;
    };
    let limits = limits_for(*ctl);
    let methods = methods_from(*methods);
    let seed = u64::from(ctl >> 2);
    let eof = ctl & 2 != 0;
    let make = || {
        let mut dec = ResponseDecoder::new(limits.clone());
        for m in &methods {
            dec.expect_response_to(m);
        }
        dec
    };
    split_invariant(make, &limits, b"", msg, seed, eof);
    // Decoding to the wire view alone reads every input as the full
    // decoder does.
    let make = |only: bool| {
        let mut dec = make();
        dec.set_wire_view(true);
        dec.set_wire_only(only);
        AsWire(dec)
    };
    let view = split_invariant(|| make(false), &limits, b"", msg, seed, eof);
    let only = split_invariant(|| make(true), &limits, b"", msg, seed, eof);
    assert_eq!(view, only, "wire-only decoding reads otherwise");
}

/// Target `lenient`: `ctl`, `methods`, `mask`, then message bytes, decoded
/// with the leniency switches of one side (requests when `ctl` bit 2 is
/// set, else responses answering the four methods): all off, all on, and
/// the subset `mask` picks (bit `i` for the side's `i`-th switch in
/// `Tolerance::ALL` order).
///
/// Every run keeps the invariants of [`request_decoder`] (split
/// invariance, named switch included; bounded buffering; sticky errors; no
/// loop), and:
///
/// - with every switch off, a request decoder is the default one (a
///   server is strict by default);
/// - an error names only a switch of its side that is off in its decoder
///   (turning a named switch on gets past the refusal);
/// - switches only change how refused input is read: whatever the strict
///   run accepts, a run with all or some switches on reads exactly as it
///   does (same events and leftover); when the strict run fails, the
///   messages it completed are read the same;
/// - a request read only thanks to `chunked_with_content_length` does not
///   leave the connection reusable;
/// - the first message, read with all and with the subset of switches on
///   and sent again by an encoder, is refused by it or read back by a
///   strict decoder as the same message ([`forwards_as_read`]).
pub fn lenient(data: &[u8]) {
    let [ctl, methods, mask, msg @ ..] = data else {
        return;
    };
    let limits = limits_for(*ctl);
    let eof = ctl & 2 != 0;
    let seed = u64::from(ctl >> 3);
    let request = ctl & 4 != 0;
    let side: Vec<Tolerance> = Tolerance::ALL
        .into_iter()
        .filter(|s| {
            if request {
                s.applies_to_requests()
            } else {
                s.applies_to_responses()
            }
        })
        .collect();
    let picked: Vec<Tolerance> = side
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, s)| *s)
        .collect();
    let run = |on: &[Tolerance]| -> Outcome {
        if request {
            let mut leniency = RequestLeniency::strict();
            for &s in on {
                leniency.set(s, true).expect("a request switch");
            }
            split_invariant(
                || RequestDecoder::with_leniency(limits.clone(), leniency),
                &limits,
                b"",
                msg,
                seed,
                eof,
            )
        } else {
            let mut leniency = ResponseLeniency::strict();
            for &s in on {
                leniency.set(s, true).expect("a response switch");
            }
            let methods = methods_from(*methods);
            split_invariant(
                || {
                    let mut dec = ResponseDecoder::with_leniency(limits.clone(), leniency);
                    for m in &methods {
                        dec.expect_response_to(m);
                    }
                    dec
                },
                &limits,
                b"",
                msg,
                seed,
                eof,
            )
        }
    };
    assert_eq!(
        RequestLeniency::default(),
        RequestLeniency::strict(),
        "a request decoder is strict by default"
    );
    let strict = run(&[]);
    let all = run(&side);
    let some = (!picked.is_empty() && picked.len() < side.len()).then(|| run(&picked));
    let completed = strict
        .events
        .iter()
        .rposition(|e| matches!(e, Ev::End(_)))
        .map_or(0, |i| i + 1);
    for lenient in std::iter::once(&all).chain(&some) {
        if strict.error.is_none() {
            assert_eq!(
                &strict, lenient,
                "the switches changed input the strict decoder accepts"
            );
        } else {
            assert_eq!(
                lenient.events.get(..completed),
                Some(&strict.events[..completed]),
                "the switches changed a message the strict decoder completed"
            );
        }
    }
    forwards_as_read(request, msg, &limits, &side, &methods_from(*methods));
    if some.is_some() {
        forwards_as_read(request, msg, &limits, &picked, &methods_from(*methods));
    }
    if strict.switch == Some(Tolerance::ChunkedWithContentLength) {
        // The message the strict run refused, read as chunked: whatever
        // else happens, the connection is not kept after it.
        let end = all.events[completed..]
            .iter()
            .find(|e| matches!(e, Ev::End(_)));
        assert!(
            !matches!(end, Some(Ev::End(k)) if k.is_reusable()),
            "a request with Transfer-Encoding and Content-Length kept the connection: {all:?}"
        );
    }
}
/// The first message of `msg`, decoded whole with `leniency` and the wire
/// view on, then sent again by an encoder (head, body, trailers) as a
/// proxy forwards what it read, in the order and spelling received: the encoder either refuses it or writes a message a strict
/// decoder reads as the same one (method, target, version or status; every
/// field but the framing ones, which the encoder may write anew, in order;
/// body and trailers). A leniency switch widens what is read, never what
/// is written: a lenient front end does not pass on what the next hop
/// would read otherwise.
fn forwards_as_read(
    request: bool,
    msg: &[u8],
    limits: &Limits,
    on: &[Tolerance],
    answers: &[Method],
) {
    /// A message as read: its head, the fields that must pass as they are,
    /// body, trailers.
    #[derive(Debug, PartialEq)]
    struct Read {
        start: (String, String, String),
        fields: Vec<(String, Vec<u8>)>,
        body: Vec<u8>,
        trailers: Option<Vec<(String, Vec<u8>)>>,
    }
    fn end_to_end(map: &HeaderMap) -> Vec<(String, Vec<u8>)> {
        let mut f = fields(map);
        f.retain(|(name, _)| name != "content-length" && name != "transfer-encoding");
        f
    }
    fn read<H: h1proto::MessageHead>(
        buf: &mut BytesMut,
        mut step: impl FnMut(&mut BytesMut) -> Result<Option<Event<H>>, h1proto::Error>,
        start: impl Fn(&H) -> (String, String, String),
        map: impl Fn(&H) -> &HeaderMap,
    ) -> Result<Option<(H, Read)>, h1proto::Error> {
        let mut got: Option<(H, Read)> = None;
        while let Some(ev) = step(buf)? {
            match (ev, got.as_mut()) {
                (Event::Head { head, .. }, None) => {
                    let read = Read {
                        start: start(&head),
                        fields: end_to_end(map(&head)),
                        body: Vec::new(),
                        trailers: None,
                    };
                    got = Some((head, read));
                }
                (Event::Data(d), Some((_, r))) => r.body.extend_from_slice(&d),
                (Event::Trailers(t), Some((_, r))) => r.trailers = Some(fields(&t)),
                (Event::End(_), Some(_)) => return Ok(got),
                _ => {}
            }
        }
        Ok(None)
    }
    /// What was read back, less the `Connection` option an encoder adds
    /// to say whether the connection stays open (to an HTTP/1.0 peer, or
    /// for a body that ends with the close), and less the `Host` a request
    /// encoder adds from the target's authority to a request that had
    /// none (an HTTP/1.0 one in absolute or authority form).
    fn as_sent(mut again: Read, sent: &Read) -> Read {
        let sent_has = |name: &str| sent.fields.iter().any(|(n, _)| n == name);
        let authority = (again.start.1.parse::<http::Uri>().ok())
            .and_then(|uri| Some(uri.authority()?.as_str().rsplit('@').next()?.to_owned()));
        again.fields.retain(|(name, value)| match name.as_str() {
            "connection" => {
                !matches!(value.as_slice(), b"close" | b"keep-alive")
                    || sent.fields.iter().any(|(n, v)| n == name && v == value)
            }
            "host" => sent_has("host") || authority.as_deref().map(str::as_bytes) != Some(value),
            _ => true,
        });
        again
    }
    fn trailers_of(r: &Read) -> Option<HeaderMap> {
        let t = r.trailers.as_ref()?;
        let mut map = HeaderMap::new();
        for (name, value) in t {
            let name = http::HeaderName::from_bytes(name.as_bytes()).expect("a decoded name");
            let value = http::HeaderValue::from_bytes(value).expect("a decoded value");
            map.append(name, value);
        }
        Some(map)
    }
    // The body and trailers sent after a head the encoder took, and what
    // it queued read back by a strict decoder: the same message.
    macro_rules! forwarded {
        ($enc:ident, $sent:ident, $strict:ident, $start:ident, $map:expr, $what:literal) => {{
            let queued = ($sent.body.is_empty()
                || $enc.send_data(Bytes::from($sent.body.clone())).is_ok())
                && $enc.finish(trailers_of(&$sent)).is_ok();
            if queued {
                let out = $enc.output();
                let mut out = BytesMut::from(out.copy_to_bytes(out.remaining()).as_ref());
                match read(&mut out, |b| $strict.decode_eof(b), $start, $map) {
                    Ok(Some((_, again))) => assert_eq!(
                        as_sent(again, &$sent),
                        $sent,
                        concat!("a forwarded ", $what, " reads otherwise")
                    ),
                    other => panic!(
                        concat!("a forwarded ", $what, " is not read back: {:?}"),
                        other
                    ),
                }
            }
        }};
    }
    let mut buf = BytesMut::from(msg);
    if request {
        let mut leniency = RequestLeniency::strict();
        for &s in on {
            leniency.set(s, true).expect("a request switch");
        }
        let mut dec = RequestDecoder::with_leniency(limits.clone(), leniency);
        dec.set_wire_view(true);
        let start = |h: &Request<()>| {
            (
                h.method().to_string(),
                h.uri().to_string(),
                format!("{:?}", h.version()),
            )
        };
        let Ok(Some((head, sent))) = read(&mut buf, |b| dec.decode_eof(b), start, Request::headers)
        else {
            return;
        };
        let mut enc = RequestEncoder::new(Default::default());
        let mut strict = RequestDecoder::new(Limits::default());
        if enc.send_head(head).is_ok() {
            forwarded!(enc, sent, strict, start, Request::headers, "request");
        }
    } else {
        let Some(method) = answers.first() else {
            return;
        };
        if method == Method::CONNECT {
            return;
        }
        let mut leniency = ResponseLeniency::strict();
        for &s in on {
            leniency.set(s, true).expect("a response switch");
        }
        let mut dec = ResponseDecoder::with_leniency(limits.clone(), leniency);
        dec.set_wire_view(true);
        dec.expect_response_to(method);
        let start = |h: &Response<()>| {
            (
                h.status().to_string(),
                String::new(),
                format!("{:?}", h.version()),
            )
        };
        let Ok(Some((head, sent))) =
            read(&mut buf, |b| dec.decode_eof(b), start, Response::headers)
        else {
            return;
        };
        if head.status() == http::StatusCode::SWITCHING_PROTOCOLS {
            return;
        }
        let ctx = ResponseContext {
            request: h1proto::framing::RequestKind::of(method),
            ..Default::default()
        };
        let mut enc = ResponseEncoder::default();
        let mut strict = ResponseDecoder::new(Limits::default());
        strict.expect_response_to(method);
        if enc.send_head(head, ctx).is_ok() {
            forwarded!(enc, sent, strict, start, Response::headers, "response");
        }
    }
}

/// Target `chunked_body`: `ctl`, then a chunked body after
/// [`CHUNKED_HEAD`]. Besides the split invariants, the outcome must agree
/// with [`oracle_chunked`], an independent reading of RFC 9112 section 7.1.
pub fn chunked_body(data: &[u8]) {
    let Some((&ctl, body)) = data.split_first() else {
        return;
    };
    let limits = limits_for(ctl);
    let eof = ctl & 2 != 0;
    let out = split_invariant(
        || RequestDecoder::new(limits.clone()),
        &limits,
        CHUNKED_HEAD,
        body,
        u64::from(ctl >> 2),
        eof,
    );
    check_chunked_oracle(&out, body, &limits, eof);

    // The same body with its chunk extensions handed out: taken out again,
    // the same outcome; and the extensions are the ones the oracle reads,
    // in order.
    let with = split_invariant(
        || {
            let mut dec = RequestDecoder::new(limits.clone());
            dec.set_chunk_extensions(true);
            dec
        },
        &limits,
        CHUNKED_HEAD,
        body,
        u64::from(ctl >> 2),
        eof,
    );
    let mut without = Vec::new();
    let mut exts = Vec::new();
    let mut ended = false;
    for ev in with.events {
        match ev {
            Ev::Ext(e) => {
                assert!(!e.is_empty(), "empty extensions handed out");
                if !ended {
                    exts.push(e);
                }
            }
            other => {
                ended |= matches!(other, Ev::End(_));
                push(&mut without, other);
            }
        }
    }
    assert_eq!(
        without, out.events,
        "handing out extensions changed the body"
    );
    assert_eq!((with.error, &with.leftover), (out.error, &out.leftover));
    let mut want = Vec::new();
    oracle_chunked_with(body, &limits, &mut want);
    assert_eq!(exts, want, "other extensions than the oracle's");
}

fn check_chunked_oracle(out: &Outcome, body: &[u8], limits: &Limits, eof: bool) {
    assert!(
        matches!(out.events.first(), Some(Ev::Request(.., BodyKind::Chunked))),
        "the fixed chunked head was not decoded: {out:?}"
    );
    // Only the chunked message counts: bytes after it are another request.
    let end = out.events.iter().position(|e| matches!(e, Ev::End(_)));
    let own = &out.events[..end.map_or(out.events.len(), |i| i + 1)];
    let data: Vec<u8> = own
        .iter()
        .filter_map(|e| match e {
            Ev::Data(d) => Some(d.clone()),
            _ => None,
        })
        .next()
        .unwrap_or_default();
    let ended = end.is_some();
    let trailers = own.iter().any(|e| matches!(e, Ev::Trailers(_)));
    match oracle_chunked(body, limits) {
        Oracle::Reject { data: seen } => {
            assert!(
                out.error.is_some() && !ended,
                "the oracle rejects this chunked body, h1proto did not: {out:?}"
            );
            assert!(seen.starts_with(&data), "data beyond the rejected framing");
        }
        Oracle::Incomplete { data: seen } => {
            if eof {
                assert_eq!(out.error, Some(ErrorKind::UnexpectedEof), "{out:?}");
            } else {
                assert_eq!(out.error, None, "incomplete body refused: {out:?}");
            }
            assert!(!ended, "an incomplete chunked body ended");
            assert!(seen.starts_with(&data), "more data than the oracle read");
        }
        Oracle::Complete {
            data: seen,
            trailer_lines,
            rest,
        } => {
            if trailer_lines == 0 {
                assert!(ended && !trailers, "a valid chunked body refused: {out:?}");
                assert_eq!(data, seen, "different body data");
                if out.error.is_none() && rest == 0 {
                    assert_eq!(out.leftover.as_deref(), Some(&[][..]));
                }
            } else if ended {
                // The trailer fields themselves may be refused (names,
                // values, forbidden fields); if not, all of it ended.
                assert!(ended && trailers, "{out:?}");
                assert_eq!(data, seen, "different body data");
            } else {
                assert!(
                    matches!(
                        out.error,
                        Some(
                            ErrorKind::InvalidTrailer
                                | ErrorKind::InvalidFieldName
                                | ErrorKind::InvalidFieldValue
                                | ErrorKind::MissingColon
                                | ErrorKind::WhitespaceBeforeColon
                                | ErrorKind::ObsFold
                        )
                    ),
                    "a trailer section refused with {:?}",
                    out.error
                );
            }
        }
    }
}

/// What a straightforward reading of the chunked grammar (RFC 9112
/// section 7.1, with h1proto's limits) makes of a body.
#[derive(Debug)]
pub enum Oracle {
    /// The framing is invalid; `data` is the body read before the fault.
    Reject { data: Vec<u8> },
    /// More bytes are needed; `data` is the body read so far.
    Incomplete { data: Vec<u8> },
    /// The body ended: its data, the number of trailer field lines, and
    /// how many bytes follow it.
    Complete {
        data: Vec<u8>,
        trailer_lines: usize,
        rest: usize,
    },
}

/// The independent chunked reader the `chunked_body` target compares with.
pub fn oracle_chunked(b: &[u8], limits: &Limits) -> Oracle {
    oracle_chunked_with(b, limits, &mut Vec::new())
}

/// [`oracle_chunked`], which also lists the chunk extensions of every
/// chunk-size line it accepts, as they are written, in `exts` (lines
/// without any left out).
pub fn oracle_chunked_with(b: &[u8], limits: &Limits, exts: &mut Vec<Vec<u8>>) -> Oracle {
    let mut data = Vec::new();
    let mut i = 0;
    // Extension bytes so far, and framing not paid for by the chunks'
    // allowances of 16 bytes plus 2 per data byte (never below zero).
    let mut extensions = 0u64;
    let mut excess = 0u64;
    loop {
        // chunk-size [ chunk-ext ] CRLF, at most max_chunk_line_bytes.
        let Some(lf) = b[i..].iter().position(|&c| c == b'\n') else {
            return if b.len() - i >= limits.max_chunk_line_bytes {
                Oracle::Reject { data }
            } else {
                Oracle::Incomplete { data }
            };
        };
        if lf + 1 > limits.max_chunk_line_bytes || lf == 0 || b[i + lf - 1] != b'\r' {
            return Oracle::Reject { data };
        }
        let Some(size) = oracle_size_line(&b[i..i + lf - 1]) else {
            return Oracle::Reject { data };
        };
        let digits = b[i..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        extensions += (lf - 1 - digits) as u64;
        if extensions > limits.max_chunk_extension_bytes as u64 {
            return Oracle::Reject { data };
        }
        let framing = (lf + 1) as u64 + if size > 0 { 2 } else { 0 };
        excess = (excess + framing).saturating_sub(size.saturating_mul(2).saturating_add(16));
        if excess > limits.max_chunk_overhead_bytes as u64 {
            return Oracle::Reject { data };
        }
        if digits < lf - 1 {
            exts.push(b[i + digits..i + lf - 1].to_vec());
        }
        i += lf + 1;
        if size == 0 {
            break;
        }
        let avail = (b.len() - i) as u64;
        if avail < size {
            data.extend_from_slice(&b[i..]);
            return Oracle::Incomplete { data };
        }
        let size = size as usize;
        data.extend_from_slice(&b[i..i + size]);
        i += size;
        match &b[i..] {
            [] | [b'\r'] => return Oracle::Incomplete { data },
            [b'\r', b'\n', ..] => i += 2,
            _ => return Oracle::Reject { data },
        }
    }
    // trailer-section: *( field-line CRLF ) CRLF, at most max_trailer_bytes
    // and max_fields lines. Like a head, the section is judged once its
    // end (an empty line, CRLF or a bare LF) is there: a bare LF inside it
    // refuses it then, not before (docs/security.md, note N2).
    let start = i;
    let mut lines = 0;
    let mut bare_lf = false;
    loop {
        let Some(lf) = b[i..].iter().position(|&c| c == b'\n') else {
            return if b.len() - start >= limits.max_trailer_bytes {
                Oracle::Reject { data }
            } else {
                Oracle::Incomplete { data }
            };
        };
        let end = i + lf + 1;
        if end - start > limits.max_trailer_bytes {
            return Oracle::Reject { data };
        }
        let line = &b[i..i + lf];
        if line.is_empty() || line == b"\r" {
            if line.is_empty() || bare_lf {
                return Oracle::Reject { data };
            }
            return Oracle::Complete {
                data,
                trailer_lines: lines,
                rest: b.len() - end,
            };
        }
        lines += 1;
        if lines > limits.max_fields {
            return Oracle::Reject { data };
        }
        bare_lf |= line.last() != Some(&b'\r');
        i = end;
    }
}

fn oracle_size_line(line: &[u8]) -> Option<u64> {
    let digits = line.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    if digits == 0 {
        return None;
    }
    let mut size: u64 = 0;
    for &c in &line[..digits] {
        let d = (c as char).to_digit(16)? as u64;
        size = size.checked_mul(16)?.checked_add(d)?;
    }
    // chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
    let tchar = |c: u8| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c);
    let ws = |c: u8| c == b' ' || c == b'\t';
    let mut s = &line[digits..];
    while !s.is_empty() {
        s = &s[s.iter().take_while(|&&c| ws(c)).count()..];
        s = s.strip_prefix(b";")?;
        s = &s[s.iter().take_while(|&&c| ws(c)).count()..];
        let name = s.iter().take_while(|&&c| tchar(c)).count();
        if name == 0 {
            return None;
        }
        s = &s[name..];
        let after_name = s;
        s = &s[s.iter().take_while(|&&c| ws(c)).count()..];
        if let Some(v) = s.strip_prefix(b"=") {
            s = &v[v.iter().take_while(|&&c| ws(c)).count()..];
            if let Some(q) = s.strip_prefix(b"\"") {
                // quoted-string: qdtext / quoted-pair, then DQUOTE.
                let text = |c: u8| c == b'\t' || (c >= 0x20 && c != 0x7f);
                let mut k = 0;
                loop {
                    match q.get(k) {
                        None => return None,
                        Some(b'"') => break,
                        Some(b'\\') => {
                            if !q.get(k + 1).is_some_and(|&c| text(c)) {
                                return None;
                            }
                            k += 2;
                        }
                        Some(&c) if text(c) => k += 1,
                        Some(_) => return None,
                    }
                }
                s = &q[k + 1..];
            } else {
                let v = s.iter().take_while(|&&c| tchar(c)).count();
                if v == 0 {
                    return None;
                }
                s = &s[v..];
            }
        } else {
            s = after_name;
        }
    }
    Some(size)
}

// ------------------------------------------------------------ connections

/// What a connection run produced: events, the error, and every byte the
/// connection queued for the peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnOutcome {
    /// Events, data merged.
    pub events: Vec<Ev>,
    /// The error, if any.
    pub error: Option<ErrorKind>,
    /// What the application's calls returned, in order.
    pub calls: Vec<String>,
    /// Everything written to the peer.
    pub output: Vec<u8>,
    /// Bytes left in the buffer (runs without an error).
    pub leftover: Option<Vec<u8>>,
}

fn drain(out: &mut h1proto::Segments, into: &mut Vec<u8>) {
    while out.has_remaining() {
        let chunk = out.chunk();
        assert!(!chunk.is_empty(), "an empty segment in the output");
        into.extend_from_slice(chunk);
        let n = chunk.len();
        out.advance(n);
    }
}

fn conn_bound(limits: &Limits) -> usize {
    limits
        .max_head_bytes
        .max(limits.max_chunk_line_bytes)
        .max(limits.max_trailer_bytes)
}

/// The application behind the fuzzed server: answers every request at its
/// `End`, with a full body or (ctl bit 2) a streamed one.
fn run_server(limits: &Limits, ctl: u8, msg: &[u8], cuts: &[usize], eof: bool) -> ConnOutcome {
    let mut config = Config::default();
    config.limits = limits.clone();
    let mut conn = ServerConnection::new(config);
    let mut out = ConnOutcome {
        events: vec![],
        error: None,
        calls: vec![],
        output: vec![],
        leftover: None,
    };
    let mut buf = BytesMut::new();
    let budget = 4 * msg.len() + 64;
    let mut polls = 0;
    let mut connect = false;
    let mut answered = false;
    let mut parts: Vec<&[u8]> = pieces(msg, cuts);
    if eof {
        parts.push(&[]);
    }
    let n = parts.len();
    for (k, piece) in parts.into_iter().enumerate() {
        buf.extend_from_slice(piece);
        if eof && k + 1 == n {
            conn.recv_eof();
        }
        loop {
            polls += 1;
            assert!(polls <= budget, "the connection keeps returning");
            match conn.poll_event(&mut buf) {
                Ok(Some(ev)) => {
                    let ev = norm_request(ev);
                    let head = matches!(ev, Ev::Request(..));
                    let end = matches!(ev, Ev::End(_));
                    if let Ev::Request(method, ..) = &ev {
                        connect = method == "CONNECT";
                        answered = false;
                    }
                    push(&mut out.events, ev);
                    // ctl bit 3: answer at the head, before reading the body
                    // (a response before the request body is read: the body is then drained or
                    // the connection closes); otherwise at the end.
                    let early = ctl & 8 != 0 && !connect;
                    if !answered && ((head && early) || end) {
                        answered = true;
                        let r = if connect {
                            // A 2xx to CONNECT has no body: the tunnel opens.
                            conn.sender().send_response(Response::new(Bytes::new()))
                        } else if ctl & 4 == 0 {
                            conn.sender()
                                .send_response(Response::new(Bytes::from_static(b"ok\n")))
                        } else {
                            conn.sender()
                                .send_head(Response::new(()))
                                .map(|_| ())
                                .and_then(|()| {
                                    conn.sender().send_data(Bytes::from_static(b"streamed"))
                                })
                                .and_then(|()| conn.sender().finish(None))
                        };
                        // A response is due after every request's head.
                        assert!(r.is_ok(), "answering a request: {r:?}");
                        out.calls
                            .push(format!("respond {r:?} {:?}", conn.keep_alive()));
                    }
                }
                Ok(None) => {
                    // The output is drained only at the end: a response
                    // still queued when the request turns out malformed
                    // is withdrawn for the error response, and whether it
                    // is still queued must not depend on the split.
                    if !conn.is_closed() && !conn.is_switched() {
                        let bound = conn_bound(limits);
                        assert!(
                            buf.len() <= bound,
                            "{} bytes held (bound {bound})",
                            buf.len()
                        );
                    }
                    break;
                }
                Err(err) => {
                    out.error = Some(err.kind());
                    let again = conn.poll_event(&mut buf);
                    assert!(matches!(&again, Err(e) if e.kind() == err.kind()));
                    let r = conn.send_error_response(&err);
                    out.calls.push(format!("error response {r:?}"));
                    drain(conn.output(), &mut out.output);
                    assert!(conn.is_closed() || !conn.keep_alive().is_reusable());
                    return out;
                }
            }
        }
    }
    drain(conn.output(), &mut out.output);
    out.leftover = Some(buf.to_vec());
    out
}

/// What a [`ServerSession`](h1proto::ServerSession) made of a client's
/// bytes, read in the pieces of one split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOutcome {
    /// The messages handed to the application: heads, the body data it
    /// read (merged) and trailers.
    pub events: Vec<Ev>,
    /// The error a call reported, if any.
    pub error: Option<ErrorKind>,
    /// Everything written to the peer.
    pub output: Vec<u8>,
    /// The session asked for the socket to be closed.
    pub closed: bool,
    /// A protocol switch took the connection.
    pub switched: bool,
}

/// What the harness calls on a session besides the driver's side: the
/// calls both roles have.
trait Fuzzed: h1proto::Session {
    fn read_data(&mut self, now: Instant) -> SessionStep<Option<Bytes>>;
    fn close(&mut self, now: Instant) -> SessionStep<()>;
    fn trailers(&self) -> Option<&HeaderMap>;
    fn is_switched(&self) -> bool;
}

type SessionStep<V> = Result<h1proto::Step<V>, h1proto::SessionError>;

/// The calls of [`Fuzzed`] are the sessions' own, of the same names.
macro_rules! fuzzed {
    ($($session:ty),*) => {$(
        impl Fuzzed for $session {
            fn read_data(&mut self, now: Instant) -> SessionStep<Option<Bytes>> {
                self.read_data(now)
            }
            fn close(&mut self, now: Instant) -> SessionStep<()> {
                self.close(now)
            }
            fn trailers(&self) -> Option<&HeaderMap> {
                self.trailers()
            }
            fn is_switched(&self) -> bool {
                self.is_switched()
            }
        }
    )*};
}

fuzzed!(h1proto::ServerSession, h1proto::ClientSession);

/// The `release_after` of a run that gives its buffers back before every
/// read.
const RELEASE: std::time::Duration = std::time::Duration::from_millis(1);

/// What a session run does before reads, besides the application's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Before {
    Nothing,
    /// Gives the buffers back before every read ([`RELEASE`]).
    Release,
    /// Begins a graceful shutdown before the read of this index.
    Shutdown(usize),
}

/// A session driven by the harness: the peer's bytes in pieces, then its
/// close if the input ends with one; writes always complete; the clock
/// moves only when the session waits for input that never comes (the
/// input ended without the close), to the session's deadline, and, for a
/// run that releases its buffers, by [`RELEASE`] before each read.
struct SessionRun<'a, S> {
    s: S,
    before: Before,
    reads: usize,
    pieces: std::collections::VecDeque<&'a [u8]>,
    eof: bool,
    eof_read: bool,
    now: Instant,
    calls: usize,
    budget: usize,
    waits: usize,
    closed: bool,
    out: SessionOutcome,
}

impl<'a, S: Fuzzed> SessionRun<'a, S> {
    /// A run of `s` (made with `Config::default()` and these limits, the
    /// wire view and chunk extensions on: the paths a proxy takes too).
    /// `before`: with [`Before::Release`], the session gives its buffers
    /// back before every read (`release_after` is [`RELEASE`], the clock
    /// moved past it): wherever a read stops, a head, a body, a trailer
    /// section; with [`Before::Shutdown`], it begins a graceful shutdown
    /// before one read.
    fn new(
        make: impl FnOnce(Config, Instant) -> S,
        limits: &Limits,
        msg: &'a [u8],
        cuts: &[usize],
        eof: bool,
        before: Before,
    ) -> Self {
        let now = Instant::now();
        let mut config = Config::default();
        config.limits = limits.clone();
        config.wire_view = true;
        config.chunk_extensions = true;
        if before == Before::Release {
            config.release_after = RELEASE;
        }
        SessionRun {
            s: make(config, now),
            before,
            reads: 0,
            pieces: (pieces(msg, cuts).into_iter())
                .filter(|p| !p.is_empty())
                .collect(),
            eof,
            eof_read: false,
            now,
            calls: 0,
            budget: 4 * msg.len() + 64,
            waits: 0,
            closed: false,
            out: SessionOutcome {
                events: vec![],
                error: None,
                output: vec![],
                closed: false,
                switched: false,
            },
        }
    }

    /// Makes a session call until it is ready, doing the I/O it asks for;
    /// `None` once the socket is closed. A peer's error is noted as the
    /// run's and ends it (`None` too).
    fn call<V>(&mut self, mut f: impl FnMut(&mut S, Instant) -> SessionStep<V>) -> Option<V> {
        use h1proto::{SessionError, Step};
        loop {
            self.calls += 1;
            assert!(
                self.calls <= self.budget,
                "the session keeps asking for I/O"
            );
            match f(&mut self.s, self.now) {
                Ok(Step::Ready(value)) => return Some(value),
                Ok(Step::Io(io)) if self.perform(io) => {}
                Ok(Step::Io(_)) if self.closed => return None,
                Ok(Step::Io(_)) => {
                    self.waits += 1;
                    assert!(self.waits <= 8, "the session keeps waiting");
                    let at = self
                        .s
                        .poll_timeout()
                        .expect("the session waits for input without a deadline");
                    self.now = at.max(self.now);
                    self.s.handle_timeout(self.now);
                }
                Err(SessionError::Peer(err)) => {
                    self.out.error = Some(err.kind());
                    return None;
                }
                Err(err) => panic!("the session refused a call: {err:?}"),
            }
        }
    }

    /// Does `io`; `false` when it would wait for ever (the input is
    /// exhausted and the peer never closes) or the socket is closed.
    fn perform(&mut self, io: h1proto::Io) -> bool {
        use h1proto::Io;
        assert!(!self.closed, "{io:?} asked for after Io::Close");
        if io == Io::Read {
            match self.before {
                Before::Release => {
                    // Far below every timeout: the release alone is due.
                    self.now += RELEASE;
                    self.s.handle_timeout(self.now);
                }
                Before::Shutdown(k) if k == self.reads => self.s.shutdown(self.now),
                _ => {}
            }
            self.reads += 1;
        }
        let (s, now) = (&mut self.s, self.now);
        match io {
            Io::Read => {
                assert!(!self.eof_read, "a read asked for after the peer's close");
                match self.pieces.pop_front() {
                    Some(piece) => {
                        s.read_buf().extend_from_slice(piece);
                        s.handle_read(piece.len(), now);
                        true
                    }
                    None if self.eof => {
                        self.eof_read = true;
                        s.handle_read(0, now);
                        true
                    }
                    None => false,
                }
            }
            Io::Write => {
                let out = s.output();
                let n = out.len();
                assert!(n > 0, "Io::Write with nothing to write");
                drain(out, &mut self.out.output);
                s.handle_write(n, now);
                true
            }
            Io::Shutdown => true,
            _ => {
                self.closed = true;
                false
            }
        }
    }

    /// Reads the current message's body to its end, its data and trailers
    /// noted; `false` when the run ends first.
    fn read_body(&mut self) -> bool {
        while let Some(piece) = self.call(S::read_data) {
            match piece {
                Some(data) => push(&mut self.out.events, Ev::Data(data.to_vec())),
                None => {
                    if let Some(trailers) = self.s.trailers() {
                        push(&mut self.out.events, Ev::Trailers(fields(trailers)));
                    }
                    return true;
                }
            }
        }
        false
    }

    /// Closes the session and returns what the run came to: it must have
    /// closed, unless a protocol switch took the connection.
    fn finish(mut self) -> SessionOutcome {
        let _ = self.call(S::close);
        self.out.switched = self.s.is_switched();
        self.out.closed = self.closed;
        assert!(
            self.out.closed || self.out.switched,
            "the session did not close"
        );
        self.out
    }
}

/// The same application as [`run_server`]'s, on a [`ServerSession`]: each
/// request's body read whole, then a full or (ctl bit 2) streamed answer;
/// or (ctl bit 3) the answer at the head, the body left to the session to
/// drain; (ctl bit 4) a graceful shutdown begun with the first request.
/// Then `close`. Panics when the session loops, asks for a read after the
/// client's close, waits without a deadline, or does not close in the end.
///
/// [`ServerSession`]: h1proto::ServerSession
fn run_session(
    limits: &Limits,
    ctl: u8,
    msg: &[u8],
    cuts: &[usize],
    eof: bool,
    before: Before,
) -> SessionOutcome {
    let mut run = SessionRun::new(h1proto::ServerSession::new, limits, msg, cuts, eof, before);
    while let Some(Some(req)) = run.call(|s, now| s.next_request(now)) {
        let connect = req.method() == Method::CONNECT;
        let head = Event::Head {
            head: req,
            body: BodyKind::Empty,
        };
        push(&mut run.out.events, norm_request(head));
        if ctl & 16 != 0 && run.out.events.len() == 1 {
            // ctl bit 4: a graceful shutdown begins with the first request.
            h1proto::Session::shutdown(&mut run.s, run.now);
        }
        // The body read whole, unless the answer comes at the head.
        if ctl & 8 == 0 && !connect && !run.read_body() {
            break;
        }
        let mut sender = run.s.sender();
        let sent = if connect {
            sender.send_response(Response::new(Bytes::new()))
        } else if ctl & 4 == 0 {
            sender.send_response(Response::new(Bytes::from_static(b"ok\n")))
        } else {
            sender
                .send_head(Response::new(()))
                .map(|_| ())
                .and_then(|()| sender.send_data(Bytes::from_static(b"streamed")))
                .and_then(|()| sender.finish(None))
        };
        assert!(sent.is_ok(), "answering a request: {sent:?}");
    }
    run.finish()
}

/// Holds a session's run `first` to two more runs of the input in the
/// pieces `cuts` (made by `run`): with the buffers given back before every
/// read, the same; with a graceful shutdown begun before a read that
/// `ctl` picks, a prefix of the same messages handed out (each run closes,
/// which `run` checks).
fn undisturbed(
    first: &SessionOutcome,
    ctl: u8,
    cuts: &[usize],
    run: impl Fn(Before) -> SessionOutcome,
) {
    assert_eq!(
        first,
        &run(Before::Release),
        "giving the buffers back changed the session's run"
    );
    let stopped = run(Before::Shutdown(usize::from(ctl) % (cuts.len() + 2)));
    assert!(
        first.events.starts_with(&stopped.events),
        "a graceful shutdown changed what the session handed out: {:?} against {:?}",
        stopped.events,
        first.events
    );
}

/// A connection's events as a session hands the same messages out: no
/// `End` (a session's calls end a body instead), and heads without their
/// framing (a session hands out the head alone).
fn as_a_session_hands_out(events: &[Ev]) -> Vec<Ev> {
    let unframed = |ev: &Ev| match ev.clone() {
        Ev::Request(m, t, v, f, _) => Ev::Request(m, t, v, f, BodyKind::Empty),
        Ev::Response(status, v, reason, f, _) => {
            Ev::Response(status, v, reason, f, BodyKind::Empty)
        }
        ev => ev,
    };
    (events.iter())
        .filter(|ev| !matches!(ev, Ev::End(_)))
        .map(unframed)
        .collect()
}

/// Target `server_connection`: `ctl`, split offsets, then a client's
/// bytes, through a `ServerConnection` and through a `ServerSession`.
pub fn server_connection(data: &[u8]) {
    let Some((&ctl, rest)) = data.split_first() else {
        return;
    };
    let (given, msg) = split_header(rest);
    let limits = limits_for(ctl);
    let eof = ctl & 2 != 0;
    let plans = split_plans(msg.len(), u64::from(ctl >> 3), Some(given));
    let conn = run_server(&limits, ctl, msg, &plans[0], eof);
    for cuts in &plans[1..] {
        let other = run_server(&limits, ctl, msg, cuts, eof);
        assert_eq!(conn, other, "the server's run depends on the split");
    }
    // Answered at each request's end with a whole body (a streamed one
    // closes an HTTP/1.0 connection), the connection reads what its
    // decoder alone reads.
    if ctl & (4 | 8) == 0 {
        let dec = run_decoder(
            &mut RequestDecoder::new(limits.clone()),
            &limits,
            b"",
            msg,
            &[],
            eof,
        );
        assert_eq!(
            conn.events, dec.events,
            "the connection read otherwise than its decoder"
        );
        assert_eq!(
            conn.error, dec.error,
            "the connection failed otherwise than its decoder"
        );
    }
    // A session writes what is queued before it waits for more input, so
    // what it learns later changes only what has not left yet, and how
    // much that is depends on the reads: a close decided later is said in
    // an answer still queued (`connection: close` added), and an answer
    // given before its request's body was read is replaced by the error
    // response that body calls for while it is queued. The rest is the
    // same however the input is cut.
    let comparable = |mut run: SessionOutcome| {
        if ctl & 8 != 0 {
            run.output.clear();
        }
        for line in [&b"connection: close\r\n"[..], b"connection: keep-alive\r\n"] {
            while let Some(at) = run.output.windows(line.len()).position(|w| w == line) {
                run.output.drain(at..at + line.len());
            }
        }
        run
    };
    let first = comparable(run_session(
        &limits,
        ctl,
        msg,
        &plans[0],
        eof,
        Before::Nothing,
    ));
    for cuts in &plans[1..] {
        let other = comparable(run_session(&limits, ctl, msg, cuts, eof, Before::Nothing));
        assert_eq!(
            first, other,
            "the server session's run depends on the split"
        );
    }
    let cuts = plans.last().expect("a plan");
    undisturbed(&first, ctl, cuts, |before| {
        comparable(run_session(&limits, ctl, msg, cuts, eof, before))
    });
    // When only the input decides (the client closes at the end, so no
    // deadline passes; no shutdown; each answer after its body), the
    // session hands out what its connection does and answers the same.
    if eof && ctl & (8 | 16) == 0 {
        let events = as_a_session_hands_out(&conn.events);
        let output = comparable(SessionOutcome {
            events: vec![],
            error: None,
            output: conn.output,
            closed: false,
            switched: false,
        })
        .output;
        assert_eq!(
            events, first.events,
            "the session read otherwise than its connection"
        );
        assert_eq!(
            conn.error, first.error,
            "the session failed otherwise than its connection"
        );
        assert_eq!(
            output, first.output,
            "the session answered otherwise than its connection"
        );
    }
}

fn client_request(method: &Method) -> Request<Bytes> {
    let (target, body): (&str, &'static [u8]) = match *method {
        Method::CONNECT => ("fuzz.example:443", b""),
        Method::POST => ("/submit", b"field=value"),
        _ => ("/", b""),
    };
    Request::builder()
        .method(method.clone())
        .uri(target)
        .header("host", "fuzz.example")
        .body(Bytes::from_static(body))
        .expect("a valid request")
}

fn run_client(
    limits: &Limits,
    methods: &[Method],
    msg: &[u8],
    cuts: &[usize],
    eof: bool,
) -> ConnOutcome {
    let mut config = Config::default();
    config.limits = limits.clone();
    let mut conn = ClientConnection::new(config);
    let mut out = ConnOutcome {
        events: vec![],
        error: None,
        calls: vec![],
        output: vec![],
        leftover: None,
    };
    for m in methods {
        let r = conn.sender().send_request(client_request(m));
        out.calls.push(format!("{m} {r:?}"));
        if r.is_err() {
            break;
        }
    }
    drain(conn.output(), &mut out.output);
    let mut buf = BytesMut::new();
    let budget = 4 * msg.len() + 64;
    let mut polls = 0;
    let mut parts: Vec<&[u8]> = pieces(msg, cuts);
    if eof {
        parts.push(&[]);
    }
    let n = parts.len();
    for (k, piece) in parts.into_iter().enumerate() {
        buf.extend_from_slice(piece);
        if eof && k + 1 == n {
            conn.recv_eof();
        }
        loop {
            polls += 1;
            assert!(polls <= budget, "the connection keeps returning");
            match conn.poll_event(&mut buf) {
                Ok(Some(ev)) => push(&mut out.events, norm_response(ev)),
                Ok(None) => {
                    if !conn.is_closed() && !conn.is_switched() {
                        let bound = conn_bound(limits);
                        assert!(
                            buf.len() <= bound,
                            "{} bytes held (bound {bound})",
                            buf.len()
                        );
                    }
                    break;
                }
                Err(err) => {
                    out.error = Some(err.kind());
                    let again = conn.poll_event(&mut buf);
                    assert!(matches!(&again, Err(e) if e.kind() == err.kind()));
                    assert!(conn.is_closed(), "a failed client connection is not closed");
                    return out;
                }
            }
        }
    }
    drain(conn.output(), &mut out.output);
    out.leftover = Some(buf.to_vec());
    out
}

/// [`run_client`]'s requests sent by a [`ClientSession`] (pipelined),
/// whose responses it reads with their bodies until none is due, then
/// `close`. Panics as [`run_session`] does.
///
/// [`ClientSession`]: h1proto::ClientSession
fn run_client_session(
    limits: &Limits,
    methods: &[Method],
    msg: &[u8],
    cuts: &[usize],
    eof: bool,
    before: Before,
) -> SessionOutcome {
    let mut run = SessionRun::new(h1proto::ClientSession::new, limits, msg, cuts, eof, before);
    for m in methods {
        if run.s.sender().send_request(client_request(m)).is_err() {
            break;
        }
    }
    while let Some(Some(res)) = run.call(|s, now| s.next_response(now)) {
        // A 101 has no body to read either, but it is the final answer.
        let body = !res.status().is_informational();
        let event = if res.status().is_informational() && res.status() != 101 {
            Event::Interim(res)
        } else {
            Event::Head {
                head: res,
                body: BodyKind::Empty,
            }
        };
        push(&mut run.out.events, norm_response(event));
        if body && !run.read_body() {
            break;
        }
    }
    if !run.closed && run.out.error.is_none() {
        // At rest, as a pool keeps it: what the session still wants is
        // read (the server's close, bytes nobody asked for), and the next
        // call reports what that found, wherever the input was cut.
        while h1proto::Session::wants_read(&run.s) && run.perform(h1proto::Io::Read) {}
        let _ = run.call(|s, now| s.next_response(now));
    }
    run.finish()
}

/// Target `client_connection`: `ctl`, `methods`, split offsets, then a
/// server's bytes, read as the answers to the requests the client sent,
/// by a `ClientConnection`, then by a `ClientSession`.
pub fn client_connection(data: &[u8]) {
    let [ctl, methods, rest @ ..] = data else {
        return;
    };
    let (given, msg) = split_header(rest);
    let limits = limits_for(*ctl);
    let methods = methods_from(*methods);
    let methods = &methods[..1 + usize::from(ctl >> 6)];
    let eof = ctl & 2 != 0;
    let plans = split_plans(msg.len(), u64::from(ctl >> 2), Some(given));
    let first = run_client(&limits, methods, msg, &plans[0], eof);
    for cuts in &plans[1..] {
        let other = run_client(&limits, methods, msg, cuts, eof);
        assert_eq!(first, other, "the client's run depends on the split");
    }
    let session = run_client_session(&limits, methods, msg, &plans[0], eof, Before::Nothing);
    for cuts in &plans[1..] {
        let other = run_client_session(&limits, methods, msg, cuts, eof, Before::Nothing);
        assert_eq!(
            session, other,
            "the client session's run depends on the split"
        );
    }
    let cuts = plans.last().expect("a plan");
    undisturbed(&session, *ctl, cuts, |before| {
        run_client_session(&limits, methods, msg, cuts, eof, before)
    });
    // When only the input decides (the server closes at the end, so no
    // deadline passes), the session hands out what its connection does,
    // fails as it does (a response nobody asked for included, once read
    // at rest) and sends the same requests. (Where the connection just
    // ends, requests unanswered behind an answer that closed it, the
    // session's call for the next answer fails: it has a call to answer.)
    if eof {
        let events = as_a_session_hands_out(&first.events);
        assert_eq!(
            events, session.events,
            "the session read otherwise than its connection"
        );
        let ended_by_an_answer = matches!(
            first
                .events
                .iter()
                .rev()
                .find(|ev| matches!(ev, Ev::End(_))),
            Some(Ev::End(KeepAlive::Close(_)))
        );
        if first.error.is_some() || !ended_by_an_answer {
            assert_eq!(
                first.error, session.error,
                "the session failed otherwise than its connection"
            );
        }
        assert_eq!(
            first.output, session.output,
            "the session sent otherwise than its connection"
        );
    }
}

// -------------------------------------------------------------- roundtrip

/// Reads a message description from fuzz bytes (zeros once exhausted).
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[usize::from(self.byte()) % from.len()]
    }
    fn text(&mut self, alphabet: &[u8], max: usize) -> Vec<u8> {
        let n = usize::from(self.byte()) % (max + 1);
        (0..n).map(|_| self.pick(alphabet)).collect()
    }
}

const NAMES: &[&str] = &[
    "x-a",
    "x-b",
    "accept",
    "user-agent",
    "cache-control",
    "x-long-field-name",
];
const VALUE_CHARS: &[u8] = b"abcXYZ019 ,;=/\t\"()!~\x80\xff";
const PATH_CHARS: &[u8] = b"abcxyz0189-._~!$&'()*+,;=:@/?%";
const TRAILER_NAMES: &[&str] = &["x-checksum", "x-status", "server-timing"];

/// Target `roundtrip`: a message described by the input is encoded by
/// `RequestEncoder` / `ResponseEncoder` and decoded back, whole and byte by
/// byte; the decoded message must be the one encoded.
///
/// Layout: kind (bit 0 request/response, bit 1 HTTP/1.0, bit 2 streamed
/// body, bit 3 trailers), method or status, target, fields, body length
/// and seed, write sizes.
pub fn roundtrip(data: &[u8]) {
    let mut r = Reader(data);
    let kind = r.byte();
    let request = kind & 1 == 0;
    let http10 = kind & 2 != 0;
    let streamed = kind & 4 != 0;
    let with_trailers = kind & 8 != 0 && streamed && !http10;
    let version = if http10 {
        http::Version::HTTP_10
    } else {
        http::Version::HTTP_11
    };
    let method = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::OPTIONS,
    ][usize::from(r.byte()) % 6]
        .clone();
    let status = r.pick(&[200u16, 201, 202, 203, 206, 301, 400, 404, 418, 500, 599]);
    let mut path = b"/".to_vec();
    path.extend(r.text(PATH_CHARS, 40));
    let mut headers = HeaderMap::new();
    for _ in 0..r.byte() % 5 {
        let name = r.pick(NAMES);
        let mut value = r.text(VALUE_CHARS, 24);
        while value.first().is_some_and(|&b| b == b' ' || b == b'\t') {
            value.remove(0);
        }
        while value.last().is_some_and(|&b| b == b' ' || b == b'\t') {
            value.pop();
        }
        let value = http::HeaderValue::from_bytes(&value).expect("value chars are valid");
        headers.append(name, value);
    }
    let len = usize::from(r.byte()) * usize::from(r.byte() % 8 + 1);
    let seed = r.byte();
    let body: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    let writes: Vec<usize> = (0..4).map(|_| usize::from(r.byte()) + 1).collect();
    let mut trailers = HeaderMap::new();
    if with_trailers {
        for _ in 0..1 + r.byte() % 3 {
            let v = r.text(b"abc012=;", 16);
            let v = if v.is_empty() { b"v".to_vec() } else { v };
            trailers.append(
                r.pick(TRAILER_NAMES),
                http::HeaderValue::from_bytes(&v).unwrap(),
            );
        }
    }
    let body = Bytes::from(body);
    let pieces_of = |body: &Bytes| -> Vec<Bytes> {
        let mut out = Vec::new();
        let (mut at, mut i) = (0, 0);
        while at < body.len() {
            let n = writes[i % writes.len()].min(body.len() - at);
            out.push(body.slice(at..at + n));
            at += n;
            i += 1;
        }
        out
    };

    let wire = if request {
        let mut builder = Request::builder()
            .method(method.clone())
            .uri(&path[..])
            .version(version);
        if !http10 || kind & 16 != 0 {
            builder = builder.header("host", "fuzz.example");
        }
        let Ok(mut req) = builder.body(()) else {
            return; // not a target the http crate accepts
        };
        for (k, v) in &headers {
            req.headers_mut().append(k, v.clone());
        }
        let mut enc = RequestEncoder::new(Default::default());
        let sent = if streamed {
            if http10 {
                req.headers_mut()
                    .insert("content-length", body.len().into());
            }
            enc.send_head(req).map(|_| ()).and_then(|()| {
                for p in pieces_of(&body) {
                    enc.send_data(p)?;
                }
                enc.finish(with_trailers.then(|| trailers.clone()))
            })
        } else {
            let (parts, ()) = req.into_parts();
            enc.send_request(Request::from_parts(parts, body.clone()))
        };
        if sent.is_err() {
            return; // the encoder refused the description: nothing to check
        }
        let mut wire = Vec::new();
        drain(enc.output(), &mut wire);
        wire
    } else {
        let mut res = Response::new(());
        *res.status_mut() = http::StatusCode::from_u16(status).unwrap();
        *res.version_mut() = version;
        *res.headers_mut() = headers.clone();
        let ctx = ResponseContext {
            peer_version: version,
            ..Default::default()
        };
        let mut enc = ResponseEncoder::new(Default::default());
        let sent = if streamed {
            enc.send_head(res, ctx).map(|_| ()).and_then(|()| {
                for p in pieces_of(&body) {
                    enc.send_data(p)?;
                }
                enc.finish(with_trailers.then(|| trailers.clone()))
            })
        } else {
            let (parts, ()) = res.into_parts();
            enc.send_response(Response::from_parts(parts, body.clone()), ctx)
        };
        if sent.is_err() {
            return;
        }
        let mut wire = Vec::new();
        drain(enc.output(), &mut wire);
        wire
    };

    let limits = Limits::default();
    let outcome = if request {
        split_invariant(
            || RequestDecoder::new(limits.clone()),
            &limits,
            b"",
            &wire,
            u64::from(seed),
            true,
        )
    } else {
        split_invariant(
            || ResponseDecoder::new(limits.clone()),
            &limits,
            b"",
            &wire,
            u64::from(seed),
            true,
        )
    };
    assert_eq!(outcome.error, None, "encoder output refused: {outcome:?}");
    let mut got_body = Vec::new();
    let mut got_trailers = None;
    let mut got_fields = None;
    for ev in &outcome.events {
        match ev {
            Ev::Request(m, t, _, f, _) => {
                assert_eq!(m, method.as_str());
                assert_eq!(t.as_bytes(), &path[..]);
                got_fields = Some(f.clone());
            }
            Ev::Response(s, _, _, f, _) => {
                assert_eq!(*s, status);
                got_fields = Some(f.clone());
            }
            Ev::Data(d) => got_body.extend_from_slice(d),
            Ev::Trailers(t) => got_trailers = Some(t.clone()),
            _ => {}
        }
    }
    assert_eq!(got_body, body, "the body changed on the way");
    let got_fields = got_fields.expect("a head");
    for (name, value) in &headers {
        let want: Vec<&[u8]> = headers.get_all(name).iter().map(|v| v.as_bytes()).collect();
        let got: Vec<&[u8]> = got_fields
            .iter()
            .filter(|(n, _)| n == name.as_str())
            .map(|(_, v)| &v[..])
            .collect();
        assert_eq!(got, want, "field {name} changed ({value:?})");
    }
    if with_trailers && !trailers.is_empty() {
        assert_eq!(got_trailers, Some(fields(&trailers)), "trailers changed");
    }
}
