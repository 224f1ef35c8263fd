//! Runs one parsing operation N times, for `scripts/callgrind.sh`, which
//! counts the instructions with `valgrind --tool=callgrind` at two values
//! of N and divides the difference: instructions per message, repeatable
//! on a noisy machine where timings are not.
//!
//! `callgrind_probe OPERATION MESSAGE ITERATIONS`
//!
//! OPERATION is one of:
//!
//! - `h1proto`: one decoder and one read buffer reused across messages, as
//!   a connection keeps them. Each iteration copies the message into the
//!   buffer (what `read` would do), decodes `Head` then `End` (and the
//!   48-byte body of the POST), and drops the head.
//! - `h1proto+recycle`: the same, then the head's field map is handed back
//!   with `give_spare_fields`, as a `ServerConnection` hands back each
//!   response's map: the next head is decoded into it.
//! - `h1proto-fresh`: like `h1proto`, with a new decoder for every message
//!   (a connection that carries one message: nothing learned is reused).
//! - `h1proto-halves`: like `h1proto`, with the head in two reads, the
//!   first ending halfway through it: what a head that arrives in pieces
//!   costs (the first read is checked as it arrives: early refusal).
//! - `h1proto-wire-only`: like `h1proto`, with the decoder decoding heads
//!   to their wire view alone (`set_wire_only`): `Event::Wire`, no `http`
//!   types.
//! - `h1proto+wire`: like `h1proto`, with the decoder's wire view on: each
//!   head carries a `WireHead`, which nobody reads.
//! - `h1proto+wire+recycle`: `h1proto+recycle` with the wire view on, the
//!   extension map handed back too (`give_spare_extensions`), as the field
//!   map is.
//! - `h1proto+wire+read`: the same, and every field line of the wire view
//!   is read (`WireHead::fields`), as a proxy's encoder or a capture tool
//!   does.
//! - `server` (requests only): a whole exchange on one `ServerConnection`,
//!   as `hello_server` makes it: the request copied into the read buffer and
//!   polled to its `End`, then `Hello, World!` answered in the request's own
//!   field map (swapped out of the request, emptied), and the output
//!   drained.
//! - `session` (requests only): the same exchange on a `ServerSession`,
//!   driven as `adapter::tokio` drives it, without the socket: the request
//!   appended to `read_buf` and reported with `handle_read`,
//!   `next_request` until the request comes (the wall clock handed over
//!   with the read, one fixed time, so the answer carries `Date`), the
//!   answer sent, the `Write`
//!   it then asks for reported done, `next_request` until it asks for the
//!   next `Read`, and `poll_timeout` for the wait.
//! - `encode`: the message's head, decoded once beforehand, sent again by
//!   one reused encoder (a `RequestEncoder` for requests; a
//!   `ResponseEncoder` answering HEAD for responses, so no body follows)
//!   with its body, and the output drained. Each iteration rebuilds the
//!   head in the field map the encoder hands back (`take_spare_fields`), as a
//!   proxy forwarding messages would.
//! - `encode+wire`: `encode`, with the head's `WireHead` (from the decode
//!   beforehand) inserted into each rebuilt message, so that the encoder
//!   writes the fields in their received order and spelling. The insert
//!   (an extension map allocated per message) is part of the count.
//! - `refill`: only that copy into the buffer, to show its share.
//! - `httparse`: `httparse::Request::parse` / `Response::parse` alone.
//! - `httparse+http`: the zero-copy baseline, built as hyper builds it:
//!   the message copied into the same kind of reused buffer, httparse's
//!   `parse_with_uninit_headers`, the head split off and frozen, the target
//!   and every field value slices of it, the framing fields read while
//!   building, and the POST's body split off after it
//!   (`corpus::zero_copy_request`).
//! - `httparse+http-copy`: httparse, then the `http` types built by
//!   copying the target and every value (`corpus::copying_request`), from
//!   the head in place: the slower construction earlier figures compared
//!   against.
//! - `memchr`: a memchr count of b'\n' over the head (the floor).
//! - `http-floor` (requests only): what delivering the head as `http` types
//!   costs when nothing is read or checked: the message copied into the
//!   buffer, the head split off and frozen, and a `Request<()>` built from
//!   offsets found beforehand (the method, the `Uri` and every value a
//!   slice of the head, every name a `HeaderName` made beforehand) into a
//!   field map recycled from the previous iteration. The floor under any
//!   reader that hands out `http::Request`.
//!
//! MESSAGE is a name from the mix (`curl_get`, `browser_get`, `pico_703`,
//! `post_json`, `response_nginx`, `response_cdn`), or `chunks_64` /
//! `chunks_4k` / `chunks_mixed`: 64 KiB of chunked body in 64-byte or 4
//! KiB chunks, or in chunks of 63, 65, 40 and 90 bytes in turn (small
//! chunks whose size changes from one to the next), for the operations `h1proto` (every `Data` event of a decoder inside an
//! endless chunked body), `refill` and `memchr`.

use h1proto_test_support::corpus;

use std::hint::black_box;
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use h1proto::wire::WireHead;
use h1proto::{
    Config, EncoderConfig, Event, Io, Limits, RequestDecoder, RequestEncoder, ResponseContext,
    ResponseDecoder, ResponseEncoder, ServerConnection, ServerSession, Session, Step,
    framing::RequestKind,
};
use http::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use http::{Method, Request, Response, Uri};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, op, name, iterations] = &args[..] else {
        eprintln!("usage: callgrind_probe OPERATION MESSAGE ITERATIONS");
        std::process::exit(2);
    };
    let iterations: u64 = iterations.parse().expect("ITERATIONS");
    if let Some(chunk) = name.strip_prefix("chunks_") {
        let sizes: &[usize] = match chunk {
            "64" => &[64],
            "4k" => &[4096],
            "mixed" => &[63, 65, 40, 90],
            other => panic!("no chunk size {other}"),
        };
        println!("{}", chunked(op, sizes, iterations));
        return;
    }
    let message = *corpus::MIX
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no message {name}"));
    let mut wire = message.head.to_vec();
    if message.head == corpus::POST_JSON {
        wire.extend_from_slice(corpus::POST_JSON_BODY);
    }

    // Everything below is set up identically whatever N is, so the
    // difference between two runs is the loop alone.
    let mut req_dec = RequestDecoder::new(Limits::default());
    let mut res_dec = ResponseDecoder::new(Limits::default());
    let mut server = ServerConnection::new(Config::default());
    let now = Instant::now();
    let wall = std::time::SystemTime::now();
    let mut session = ServerSession::new(Config::default(), now);
    assert!(matches!(session.next_request(now), Ok(Step::Io(Io::Read))));
    let mut buf = BytesMut::with_capacity(8 * 1024);
    let mut sink = 0usize;
    let mut req_enc = RequestEncoder::new(EncoderConfig::default());
    let mut res_enc = ResponseEncoder::new(EncoderConfig::default());
    let template = decoded(&message, &wire);
    let wire_view = op.starts_with("h1proto+wire");
    let read = op == "h1proto+wire+read";
    req_dec.set_wire_view(wire_view);
    res_dec.set_wire_view(wire_view);
    let floor = message.request.then(|| FloorPlan::of(message.head));
    let mut spare: Option<HeaderMap> = None;
    let head_ctx = ResponseContext {
        request: RequestKind::Head,
        ..ResponseContext::default()
    };

    for _ in 0..iterations {
        let input = black_box(&wire[..]);
        if op == "h1proto-fresh" {
            req_dec = RequestDecoder::new(Limits::default());
            res_dec = ResponseDecoder::new(Limits::default());
        }
        sink += match op.as_str() {
            "h1proto" | "h1proto+recycle" | "h1proto-fresh" | "h1proto+wire"
            | "h1proto+wire+read"
                if message.request =>
            {
                buf.extend_from_slice(input);
                let head = match req_dec.decode(&mut buf) {
                    Ok(Some(Event::Head { head, .. })) => head,
                    other => panic!("{other:?}"),
                };
                loop {
                    match req_dec.decode(&mut buf) {
                        Ok(Some(Event::Data(data))) => drop(black_box(data)),
                        Ok(Some(Event::End(_))) => break,
                        other => panic!("{other:?}"),
                    }
                }
                let n = black_box(&head).headers().len() + read_wire(read, head.extensions());
                if op == "h1proto+recycle" {
                    req_dec.give_spare_fields(head.into_parts().0.headers);
                }
                n
            }
            "h1proto" | "h1proto+recycle" | "h1proto-fresh" | "h1proto+wire"
            | "h1proto+wire+read" => {
                buf.extend_from_slice(input);
                res_dec.expect_response_to(&Method::HEAD);
                let head = match res_dec.decode(&mut buf) {
                    Ok(Some(Event::Head { head, .. })) => head,
                    other => panic!("{other:?}"),
                };
                assert!(matches!(res_dec.decode(&mut buf), Ok(Some(Event::End(_)))));
                let n = black_box(&head).headers().len() + read_wire(read, head.extensions());
                if op == "h1proto+recycle" {
                    res_dec.give_spare_fields(head.into_parts().0.headers);
                }
                n
            }
            "h1proto-wire-only" => {
                // Heads to their wire view alone: no `http` types.
                buf.extend_from_slice(input);
                let dec_event = if message.request {
                    req_dec.set_wire_only(true);
                    match req_dec.decode(&mut buf) {
                        Ok(Some(Event::Wire { head, .. })) => black_box(head).bytes().len(),
                        other => panic!("{other:?}"),
                    }
                } else {
                    res_dec.set_wire_only(true);
                    res_dec.expect_response_to(&Method::HEAD);
                    match res_dec.decode(&mut buf) {
                        Ok(Some(Event::Wire { head, .. })) => black_box(head).bytes().len(),
                        other => panic!("{other:?}"),
                    }
                };
                if message.request {
                    loop {
                        match req_dec.decode(&mut buf) {
                            Ok(Some(Event::Data(data))) => drop(black_box(data)),
                            Ok(Some(Event::End(_))) => break,
                            other => panic!("{other:?}"),
                        }
                    }
                } else {
                    assert!(matches!(res_dec.decode(&mut buf), Ok(Some(Event::End(_)))));
                }
                dec_event
            }
            "h1proto+wire+recycle" => {
                // As `h1proto+recycle` with the wire view on: the field map
                // and the extension map handed back for the next head.
                req_dec.set_wire_view(true);
                res_dec.set_wire_view(true);
                buf.extend_from_slice(input);
                let parts = if message.request {
                    let head = match req_dec.decode(&mut buf) {
                        Ok(Some(Event::Head { head, .. })) => head,
                        other => panic!("{other:?}"),
                    };
                    loop {
                        match req_dec.decode(&mut buf) {
                            Ok(Some(Event::Data(data))) => drop(black_box(data)),
                            Ok(Some(Event::End(_))) => break,
                            other => panic!("{other:?}"),
                        }
                    }
                    let (parts, ()) = black_box(head).into_parts();
                    (parts.headers, parts.extensions)
                } else {
                    res_dec.expect_response_to(&Method::HEAD);
                    let head = match res_dec.decode(&mut buf) {
                        Ok(Some(Event::Head { head, .. })) => head,
                        other => panic!("{other:?}"),
                    };
                    assert!(matches!(res_dec.decode(&mut buf), Ok(Some(Event::End(_)))));
                    let (parts, ()) = black_box(head).into_parts();
                    (parts.headers, parts.extensions)
                };
                let n = parts.0.len();
                if message.request {
                    req_dec.give_spare_fields(parts.0);
                    req_dec.give_spare_extensions(parts.1);
                } else {
                    res_dec.give_spare_fields(parts.0);
                    res_dec.give_spare_extensions(parts.1);
                }
                n
            }
            "h1proto-halves" => {
                // The head in two reads: the first ends halfway through it.
                let half = message.head.len() / 2;
                buf.extend_from_slice(&input[..half]);
                let more = if message.request {
                    req_dec.decode(&mut buf).map(|e| e.is_none())
                } else {
                    res_dec.expect_response_to(&Method::HEAD);
                    res_dec.decode(&mut buf).map(|e| e.is_none())
                };
                assert!(matches!(more, Ok(true)), "{more:?}");
                buf.extend_from_slice(&input[half..]);
                if message.request {
                    let head = match req_dec.decode(&mut buf) {
                        Ok(Some(Event::Head { head, .. })) => head,
                        other => panic!("{other:?}"),
                    };
                    loop {
                        match req_dec.decode(&mut buf) {
                            Ok(Some(Event::Data(data))) => drop(black_box(data)),
                            Ok(Some(Event::End(_))) => break,
                            other => panic!("{other:?}"),
                        }
                    }
                    black_box(&head).headers().len()
                } else {
                    let head = match res_dec.decode(&mut buf) {
                        Ok(Some(Event::Head { head, .. })) => head,
                        other => panic!("{other:?}"),
                    };
                    assert!(matches!(res_dec.decode(&mut buf), Ok(Some(Event::End(_)))));
                    black_box(&head).headers().len()
                }
            }
            "server" if message.request => {
                buf.extend_from_slice(input);
                let mut req = None;
                while let Some(event) = server.poll_event(&mut buf).expect("a valid request") {
                    match event {
                        Event::Head { head, .. } => req = Some(head),
                        Event::End(_) => break,
                        _ => {}
                    }
                }
                let mut req = req.expect("a head");
                server
                    .sender()
                    .send_response(hello(&mut req))
                    .expect("a valid response");
                let out = server.output();
                let n = out.remaining();
                out.advance(n);
                n
            }
            "session" if message.request => {
                // What a driver does for one keep-alive request, without
                // the socket: the bytes read, the request taken, answered,
                // the answer written, and the wait for the next request
                // with its deadline.
                let read = session.read_buf();
                read.extend_from_slice(input);
                // The wall clock with the read, as the adapters hand it
                // over (here one fixed time, as `now` is: the reading of
                // the clock is left out, the `Date` written is not).
                session.set_date(wall);
                session.handle_read(input.len(), now);
                let mut written = 0;
                loop {
                    match session.next_request(now).expect("a valid request") {
                        Step::Ready(Some(mut req)) => {
                            session
                                .sender()
                                .send_response(hello(&mut req))
                                .expect("a response");
                        }
                        Step::Io(Io::Write) => {
                            written = session.output().remaining();
                            session.handle_write(written, now);
                        }
                        Step::Io(Io::Read) => break,
                        other => panic!("{other:?}"),
                    }
                }
                black_box(session.poll_timeout());
                written
            }
            "encode" | "encode+wire" => {
                let (start, fields, body, wire) = &template;
                let mut headers = match start {
                    Start::Request(_) => req_enc.take_spare_fields(),
                    Start::Response(_) => res_enc.take_spare_fields(),
                }
                .unwrap_or_default();
                for (name, value) in fields {
                    headers.append(name, value.clone());
                }
                let out = match start {
                    Start::Request(parts) => {
                        let mut req = Request::new(body.clone());
                        *req.method_mut() = parts.method.clone();
                        *req.uri_mut() = parts.uri.clone();
                        *req.headers_mut() = headers;
                        if op == "encode+wire" {
                            req.extensions_mut().insert(wire.clone());
                        }
                        req_enc.send_request(req).expect("a valid request");
                        req_enc.output()
                    }
                    Start::Response(parts) => {
                        let mut res = Response::new(());
                        *res.status_mut() = parts.status;
                        *res.headers_mut() = headers;
                        if op == "encode+wire" {
                            res.extensions_mut().insert(wire.clone());
                        }
                        res_enc.send_head(res, head_ctx).expect("a valid response");
                        res_enc.finish(None).expect("a head-only response");
                        res_enc.output()
                    }
                };
                let n = out.remaining();
                out.advance(n);
                n
            }
            "refill" => {
                buf.extend_from_slice(input);
                let n = black_box(&buf).len();
                buf.clear();
                n
            }
            "httparse" if message.request => corpus::httparse_request(black_box(message.head)),
            "httparse" => corpus::httparse_response(black_box(message.head)),
            "httparse+http" => {
                // As hyper reads: into the buffer, the head split off it,
                // and the body (of the POST) after it.
                buf.extend_from_slice(input);
                if message.request {
                    let (req, framing) = corpus::zero_copy_request(&mut buf);
                    if let Some(len) = framing.content_length {
                        drop(black_box(buf.split_to(len as usize).freeze()));
                    }
                    black_box(&req).headers().len()
                } else {
                    let (res, _) = corpus::zero_copy_response(&mut buf);
                    black_box(&res).headers().len()
                }
            }
            "httparse+http-copy" if message.request => {
                black_box(corpus::copying_request(black_box(message.head))).1
            }
            "httparse+http-copy" => black_box(corpus::copying_response(black_box(message.head))).1,
            "memchr" => corpus::floor(black_box(message.head)),
            "http-floor" => {
                let plan = floor.as_ref().expect("requests only");
                buf.extend_from_slice(input);
                let head = buf.split_to(plan.len).freeze();
                buf.clear();
                let mut headers = spare.take().unwrap_or_default();
                headers.clear();
                for (name, (from, to)) in &plan.fields {
                    let value = HeaderValue::from_maybe_shared(head.slice(from..to));
                    headers.append(name.clone(), value.expect("a value"));
                }
                let mut req = Request::new(());
                *req.method_mut() = Method::from_bytes(&head[..plan.method]).expect("a method");
                let (from, to) = plan.target;
                *req.uri_mut() = Uri::from_maybe_shared(head.slice(from..to)).expect("a target");
                *req.headers_mut() = headers;
                let req = black_box(req);
                let n = req.headers().len();
                spare = Some(req.into_parts().0.headers);
                n
            }
            other => panic!("no operation {other}"),
        };
    }
    println!("{sink}");
}

/// With `read` (`h1proto+wire+read`), reads every field line of the
/// head's wire view: the bytes they hold.
#[inline(always)]
fn read_wire(read: bool, extensions: &http::Extensions) -> usize {
    if !read {
        return 0;
    }
    let wire = extensions.get::<WireHead>().expect("a wire view");
    wire.fields()
        .map(|(name, value)| black_box(name).len() + black_box(value).len())
        .sum()
}

/// `Hello, World!` in the request's own field map, emptied, as the
/// example servers answer (`examples/common/mod.rs`): the maps are
/// swapped, so the request keeps the response's empty one.
fn hello(req: &mut Request<()>) -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(b"Hello, World!"));
    let headers = res.headers_mut();
    std::mem::swap(headers, req.headers_mut());
    headers.clear();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    res
}

/// The body bytes of each iteration of the chunked operations.
const CHUNKED_BODY: usize = 64 * 1024;

/// `CHUNKED_BODY` bytes framed as chunks of `sizes` bytes in turn, no
/// last-chunk (with one size, the bytes `benches/chunked.rs` decodes).
fn chunks(sizes: &[usize]) -> Vec<u8> {
    let text = b"The quick brown fox jumps over the lazy dog; ";
    let mut out = Vec::new();
    let mut written = 0;
    for &size in sizes.iter().cycle() {
        if written == CHUNKED_BODY {
            break;
        }
        let n = size.min(CHUNKED_BODY - written);
        out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
        out.extend((0..n).map(|i| text[(written + i) % text.len()]));
        out.extend_from_slice(b"\r\n");
        written += n;
    }
    out
}

/// The chunked operations on 64 KiB of chunks per iteration: `h1proto`
/// copies them into the read buffer of a decoder that sits inside an
/// endless chunked body and takes every `Data` event; `refill` is only the
/// copy (to subtract: the criterion bench clones the input untimed);
/// `memchr` counts the line feeds of the same bytes (the floor).
fn chunked(op: &str, sizes: &[usize], iterations: u64) -> usize {
    let wire = chunks(sizes);
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::from(
        &b"POST /upload HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
    );
    assert!(matches!(dec.decode(&mut buf), Ok(Some(Event::Head { .. }))));
    assert!(matches!(dec.decode(&mut buf), Ok(None)));
    buf.reserve(wire.len());
    let mut sink = 0;
    for _ in 0..iterations {
        let input = black_box(&wire[..]);
        sink += match op {
            "h1proto" => {
                buf.extend_from_slice(input);
                let mut n = 0;
                loop {
                    match dec.decode(&mut buf) {
                        Ok(Some(Event::Data(data))) => n += data.len(),
                        Ok(None) => break n,
                        other => panic!("unexpected: {other:?}"),
                    }
                }
            }
            "refill" => {
                buf.extend_from_slice(input);
                let n = black_box(&buf).len();
                buf.clear();
                n
            }
            "memchr" => corpus::floor(input),
            other => panic!("no chunked operation {other}"),
        };
    }
    sink
}

/// The start line of a decoded message.
enum Start {
    Request(http::request::Parts),
    Response(http::response::Parts),
}

/// The message decoded once: its start line, its fields, its body and its
/// wire view.
fn decoded(message: &corpus::Message, wire: &[u8]) -> (Start, HeaderMap, Bytes, WireHead) {
    let mut buf = BytesMut::from(wire);
    let mut body = BytesMut::new();
    if message.request {
        let mut start = None;
        let mut dec = RequestDecoder::new(Limits::default());
        dec.set_wire_view(true);
        loop {
            match dec.decode(&mut buf).expect("a valid request") {
                Some(Event::Head { head, .. }) => start = Some(head.into_parts().0),
                Some(Event::Data(data)) => body.extend_from_slice(&data),
                Some(Event::End(_)) => break,
                other => panic!("{other:?}"),
            }
        }
        let mut parts = start.expect("a head");
        let fields = std::mem::take(&mut parts.headers);
        let wire = parts.extensions.remove::<WireHead>().expect("a wire view");
        (Start::Request(parts), fields, body.freeze(), wire)
    } else {
        let mut start = None;
        let mut dec = ResponseDecoder::new(Limits::default());
        dec.set_wire_view(true);
        dec.expect_response_to(&Method::HEAD);
        loop {
            match dec.decode(&mut buf).expect("a valid response") {
                Some(Event::Head { head, .. }) => start = Some(head.into_parts().0),
                Some(Event::End(_)) => break,
                other => panic!("{other:?}"),
            }
        }
        let mut parts = start.expect("a head");
        let fields = std::mem::take(&mut parts.headers);
        let wire = parts.extensions.remove::<WireHead>().expect("a wire view");
        (Start::Response(parts), fields, body.freeze(), wire)
    }
}

/// Where the parts of a request head are, found once beforehand for
/// `http-floor`: the method's end, the target, each field's name (made
/// once) and its value's place, and the head's length.
struct FloorPlan {
    method: usize,
    target: (usize, usize),
    fields: Vec<(http::header::HeaderName, (usize, usize))>,
    len: usize,
}

impl FloorPlan {
    fn of(head: &[u8]) -> Self {
        let text = std::str::from_utf8(head).expect("an ASCII head");
        let line_end = text.find("\r\n").expect("a request line");
        let mut words = text[..line_end].splitn(3, ' ');
        let method = words.next().expect("a method").len();
        let target = (
            method + 1,
            method + 1 + words.next().expect("a target").len(),
        );
        let mut fields = Vec::new();
        let mut at = line_end + 2;
        while !text[at..].starts_with("\r\n") {
            let end = at + text[at..].find("\r\n").expect("a field line");
            let colon = at + text[at..end].find(':').expect("a colon");
            let name = http::header::HeaderName::from_bytes(&head[at..colon]).expect("a name");
            let value = colon + 1 + (end - colon - 1 - text[colon + 1..end].trim_start().len());
            fields.push((
                name,
                (
                    value,
                    end - (text[value..end].len() - text[value..end].trim_end().len()),
                ),
            ));
            at = end + 2;
        }
        FloorPlan {
            method,
            target,
            fields,
            len: at + 2,
        }
    }
}
