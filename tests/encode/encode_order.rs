//! Encoders write a head in the order and spelling it asks for: the wire
//! view a decoder attached (`WireHead`) or a list the caller built
//! (`FieldOrder`). The `HeaderMap` stays authoritative: fields removed
//! after decoding stay out, fields added come after the ordered ones,
//! edited values win in place, repeated names keep their order, and the
//! encoder's own framing and connection fields stay right. Every output is
//! decoded back.

use bytes::{Buf, Bytes, BytesMut};
use h1proto::remove_hop_by_hop;
use h1proto::wire::{FieldOrder, WireHead};
use h1proto::{
    EncoderConfig, Event, KeepAlive, Limits, RequestDecoder, RequestEncoder, ResponseContext,
    ResponseDecoder, ResponseEncoder,
    framing::{BodyKind, RequestKind},
};
use http::header::{CONTENT_LENGTH, HOST, HeaderValue, VIA};
use http::{Method, Request, Response, Version};

/// A decoded message: its head and its whole body.
struct Decoded<H> {
    head: H,
    body: Vec<u8>,
    kind: BodyKind,
}

/// Decodes the one request in `raw`, with the wire view on.
fn decode_request(raw: &[u8]) -> Decoded<Request<()>> {
    let mut dec = RequestDecoder::new(Limits::default());
    dec.set_wire_view(true);
    let mut buf = BytesMut::from(raw);
    let mut head = None;
    let mut body = Vec::new();
    loop {
        match dec.decode_eof(&mut buf).expect("a valid request") {
            Some(Event::Head { head: h, body: k }) => head = Some((h, k)),
            Some(Event::Data(d)) => body.extend_from_slice(&d),
            Some(Event::End(_)) => break,
            Some(_) => {}
            None => panic!("the request does not end"),
        }
    }
    assert!(buf.is_empty(), "bytes after the request");
    let (head, kind) = head.unwrap();
    Decoded { head, body, kind }
}

/// Decodes the one response in `raw` (an answer to `method`), wire view on.
fn decode_response(raw: &[u8], method: &Method) -> Decoded<Response<()>> {
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.set_wire_view(true);
    dec.expect_response_to(method);
    let mut buf = BytesMut::from(raw);
    let mut head = None;
    let mut body = Vec::new();
    loop {
        match dec.decode_eof(&mut buf).expect("a valid response") {
            Some(Event::Head { head: h, body: k }) => head = Some((h, k)),
            Some(Event::Data(d)) => body.extend_from_slice(&d),
            Some(Event::End(_)) | None => break,
            Some(_) => {}
        }
    }
    assert!(buf.is_empty(), "bytes after the response");
    let (head, kind) = head.expect("a head");
    Decoded { head, body, kind }
}

fn drain(out: &mut h1proto::Segments) -> Vec<u8> {
    out.copy_to_bytes(out.remaining()).to_vec()
}

fn send_request(req: Request<()>, body: &[u8], config: EncoderConfig) -> Vec<u8> {
    let mut enc = RequestEncoder::new(config);
    enc.send_request(req.map(|()| Bytes::copy_from_slice(body)))
        .expect("a request the encoder takes");
    drain(enc.output())
}

fn send_response(res: Response<()>, body: &[u8], ctx: ResponseContext) -> Vec<u8> {
    let mut enc = ResponseEncoder::default();
    enc.send_response(res.map(|()| Bytes::copy_from_slice(body)), ctx)
        .expect("a response the encoder takes");
    drain(enc.output())
}

/// The field lines of a head, as written.
fn lines(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let head = &text[..text.find("\r\n\r\n").expect("a head") + 2];
    head.split("\r\n")
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Checks that `out`, decoded back, holds the fields `sent` held and the
/// body it was given.
fn decodes_to_request(out: &[u8], sent: &http::HeaderMap, body: &[u8]) -> Decoded<Request<()>> {
    let back = decode_request(out);
    for (name, value) in sent {
        let values: Vec<_> = back.head.headers().get_all(name).iter().collect();
        assert!(
            values.contains(&value),
            "{name}: {value:?} did not come back: {:?}",
            lines(out)
        );
    }
    assert_eq!(back.body, body);
    back
}

const REQUEST: &[u8] = b"POST /upload?x=1 HTTP/1.1\r\nHost: example.com\r\nX-Trace: a\r\n\
    Connection: keep-alive, X-Hop\r\nACCEPT: */*\r\nX-Hop: secret\r\nx-trace: b\r\n\
    Keep-Alive: timeout=5\r\nContent-Length: 5\r\nX-TRACE: c\r\n\r\nhello";

#[test]
fn a_decoded_message_goes_out_as_it_came() {
    let got = decode_request(REQUEST);
    let out = send_request(got.head, &got.body, EncoderConfig::default());
    assert_eq!(out, REQUEST, "{}", String::from_utf8_lossy(&out));

    let raw = b"HTTP/1.1 200 Fine\r\nSet-Cookie: a=1\r\nServer: x\r\nset-cookie: b=2\r\n\
                Content-Length: 2\r\nSET-COOKIE: c=3\r\n\r\nok";
    let got = decode_response(raw, &Method::GET);
    let out = send_response(got.head, &got.body, ResponseContext::default());
    assert_eq!(out, raw, "{}", String::from_utf8_lossy(&out));
}

#[test]
fn removed_fields_stay_out_and_added_ones_follow_the_ordered_ones() {
    let got = decode_request(REQUEST);
    let mut head = got.head;
    remove_hop_by_hop(head.headers_mut());
    head.headers_mut()
        .append(VIA, HeaderValue::from_static("1.1 proxy"));
    head.headers_mut()
        .append("x-trace", HeaderValue::from_static("d"));
    let sent = head.headers().clone();
    let out = send_request(head, &got.body, EncoderConfig::default());
    assert_eq!(
        lines(&out),
        [
            "Host: example.com",
            "X-Trace: a",
            "ACCEPT: */*",
            "x-trace: b",
            "Content-Length: 5",
            "X-TRACE: c",
            // The map's own, in its order: a fourth x-trace, then via.
            "x-trace: d",
            "via: 1.1 proxy",
        ]
    );
    decodes_to_request(&out, &sent, b"hello");

    // With title case, only the names without a given spelling change.
    let mut head = decode_request(REQUEST).head;
    remove_hop_by_hop(head.headers_mut());
    head.headers_mut()
        .append(VIA, HeaderValue::from_static("1.1 proxy"));
    let mut config = EncoderConfig::default();
    config.title_case_fields = true;
    let out = send_request(head, b"hello", config);
    assert_eq!(lines(&out)[..2], ["Host: example.com", "X-Trace: a"]);
    assert_eq!(lines(&out).last().unwrap(), "Via: 1.1 proxy");
}

#[test]
fn edited_values_win_in_place() {
    let mut head = decode_request(REQUEST).head;
    remove_hop_by_hop(head.headers_mut());
    // `insert` replaces all three x-trace values with one: it takes the
    // place and spelling of the first line.
    head.headers_mut()
        .insert("x-trace", HeaderValue::from_static("only"));
    head.headers_mut()
        .insert(HOST, HeaderValue::from_static("upstream"));
    let sent = head.headers().clone();
    let out = send_request(head, b"hello", EncoderConfig::default());
    assert_eq!(
        lines(&out),
        [
            "Host: upstream",
            "X-Trace: only",
            "ACCEPT: */*",
            "Content-Length: 5",
        ]
    );
    decodes_to_request(&out, &sent, b"hello");
}

#[test]
fn every_line_goes_out_as_name_colon_space_value_whatever_its_spacing() {
    // Lines as received in every spacing and line end, edited, removed
    // and folded ones among them: each goes out as `Name: value` CRLF,
    // in its place and spelling, with the map's value.
    let raw = b"HTTP/1.1 200 OK\r\nA: 1\r\nB:2\r\nC:  3 \t\r\nD: 4\r\nE: 5\r\nF: 6\r\n\
                G:\t7\r\nH: 8\r\n Folded\r\nI: 9\r\nJ: 10\r\nContent-Length: 2\r\n\r\nok";
    let mut head = decode_response(raw, &Method::GET).head;
    head.headers_mut().remove("f");
    head.headers_mut()
        .insert("i", HeaderValue::from_static("nine"));
    let out = send_response(head, b"ok", ResponseContext::default());
    assert_eq!(
        lines(&out),
        [
            "A: 1",
            "B: 2",
            "C: 3",
            "D: 4",
            "E: 5",
            "G: 7",
            "H: 8 Folded",
            "I: nine",
            "J: 10",
            "Content-Length: 2",
        ],
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[test]
fn a_dropped_content_length_is_framed_by_the_encoder_at_the_end() {
    let mut head = decode_request(REQUEST).head;
    head.headers_mut().remove(CONTENT_LENGTH);
    let out = send_request(head, b"hello", EncoderConfig::default());
    let written = lines(&out);
    assert_eq!(written.last().unwrap(), "content-length: 5");
    let lengths = written
        .iter()
        .filter(|l| l.to_ascii_lowercase().starts_with("content-length"));
    assert_eq!(lengths.count(), 1);
    assert_eq!(decode_request(&out).body, b"hello");

    // Streamed: chunked instead, once.
    let mut head = decode_request(REQUEST).head;
    head.headers_mut().remove(CONTENT_LENGTH);
    let mut enc = RequestEncoder::default();
    assert_eq!(enc.send_head(head).unwrap(), BodyKind::Chunked);
    enc.send_data("hel").unwrap();
    enc.send_data("lo").unwrap();
    enc.finish(None).unwrap();
    let out = drain(enc.output());
    assert_eq!(lines(&out).last().unwrap(), "transfer-encoding: chunked");
    let back = decode_request(&out);
    assert_eq!(
        (back.kind, &back.body[..]),
        (BodyKind::Chunked, &b"hello"[..])
    );
}

#[test]
fn the_framing_and_connection_fields_the_encoder_decides_stay_right() {
    // A chunked response forwarded to an HTTP/1.0 client: its
    // Transfer-Encoding is left out wherever it stood, the body is
    // close-delimited and `connection: close` is added once.
    let raw = b"HTTP/1.1 200 OK\r\nX-A: 1\r\nTransfer-Encoding: chunked\r\nX-B: 2\r\n\r\n\
                3\r\nabc\r\n0\r\n\r\n";
    let got = decode_response(raw, &Method::GET);
    let ctx = ResponseContext {
        peer_version: Version::HTTP_10,
        keep_alive: KeepAlive::Close(h1proto::CloseReason::Http10),
        ..ResponseContext::default()
    };
    let mut enc = ResponseEncoder::default();
    assert_eq!(
        enc.send_head(got.head, ctx).unwrap(),
        BodyKind::CloseDelimited
    );
    enc.send_data(got.body).unwrap();
    enc.finish(None).unwrap();
    let out = drain(enc.output());
    assert_eq!(lines(&out), ["X-A: 1", "X-B: 2", "connection: close"]);
    let back = decode_response(&out, &Method::GET);
    assert_eq!(
        (back.kind, &back.body[..]),
        (BodyKind::CloseDelimited, &b"abc"[..])
    );

    // Streamed to an HTTP/1.1 client, the received Transfer-Encoding
    // stays in its place and nothing is added.
    let got = decode_response(raw, &Method::GET);
    let mut enc = ResponseEncoder::default();
    enc.send_head(got.head, ResponseContext::default()).unwrap();
    enc.send_data(got.body).unwrap();
    enc.finish(None).unwrap();
    let out = drain(enc.output());
    assert_eq!(
        lines(&out),
        ["X-A: 1", "Transfer-Encoding: chunked", "X-B: 2"]
    );
    assert_eq!(decode_response(&out, &Method::GET).body, b"abc");

    // A 204 loses its framing fields; a received `Connection: close` is
    // kept in place, and not added again.
    let raw =
        b"HTTP/1.1 204 No Content\r\nConnection: close\r\nContent-Length: 0\r\nX-A: 1\r\n\r\n";
    let got = decode_response(raw, &Method::GET);
    let out = send_response(got.head, b"", ResponseContext::default());
    assert_eq!(lines(&out), ["Connection: close", "X-A: 1"]);
    decode_response(&out, &Method::GET);

    // The answer to HEAD keeps its Content-Length where it was.
    let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nETag: \"x\"\r\n\r\n";
    let got = decode_response(raw, &Method::HEAD);
    let ctx = ResponseContext {
        request: RequestKind::Head,
        ..ResponseContext::default()
    };
    let out = send_response(got.head, b"", ctx);
    assert_eq!(out, raw);
}

#[test]
fn a_field_order_the_caller_builds_wins_over_a_wire_view() {
    let mut head = decode_request(REQUEST).head;
    remove_hop_by_hop(head.headers_mut());
    let order = FieldOrder::from_names(["x-trace", "CONTENT-LENGTH", "HOST", "X-Nothing"]).unwrap();
    head.extensions_mut().insert(order);
    let out = send_request(head, b"hello", EncoderConfig::default());
    assert_eq!(
        lines(&out),
        [
            "x-trace: a",
            "CONTENT-LENGTH: 5",
            "HOST: example.com",
            // Not in the order: the map's order and spelling.
            "x-trace: b",
            "x-trace: c",
            "accept: */*",
        ]
    );
    assert_eq!(decode_request(&out).body, b"hello");

    // On a message built from scratch, with a Host the encoder supplies.
    let mut req = Request::get("http://example.com/")
        .header("b", "2")
        .header("a", "1")
        .body(())
        .unwrap();
    req.extensions_mut()
        .insert(FieldOrder::from_names(["A", "B"]).unwrap());
    let out = send_request(req, b"", EncoderConfig::default());
    assert_eq!(
        out,
        b"GET http://example.com/ HTTP/1.1\r\nhost: example.com\r\nA: 1\r\nB: 2\r\n\r\n"
    );
}

#[test]
fn the_request_target_goes_out_as_received_while_the_uri_is_unchanged() {
    let raw = b"GET HTTP://Example.COM?q HTTP/1.1\r\nHost: a\r\n\r\n";
    let got = decode_request(raw);
    assert_eq!(got.head.uri(), "http://example.com/?q");
    let out = send_request(got.head, b"", EncoderConfig::default());
    assert_eq!(out, raw);

    // A new URI is written as the encoder writes one.
    let mut head = decode_request(raw).head;
    *head.uri_mut() = "/other".parse().unwrap();
    let out = send_request(head, b"", EncoderConfig::default());
    assert!(
        out.starts_with(b"GET /other HTTP/1.1\r\nHost: a\r\n"),
        "{out:?}"
    );

    // So is a target whose form the method no longer takes.
    let raw = b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n";
    let out = send_request(decode_request(raw).head, b"", EncoderConfig::default());
    assert_eq!(out, raw);
    let mut head = decode_request(raw).head;
    *head.method_mut() = Method::GET;
    *head.uri_mut() = "/".parse().unwrap();
    let out = send_request(head, b"", EncoderConfig::default());
    assert!(out.starts_with(b"GET / HTTP/1.1\r\n"));
}

#[test]
fn a_wire_view_on_another_message_only_lends_its_order() {
    // A proxy may build a new response and hand it the received order.
    let raw = b"HTTP/1.1 502 Bad Gateway\r\nServer: up\r\nX-Id: 7\r\nContent-Length: 3\r\n\r\nbad";
    let got = decode_response(raw, &Method::GET);
    let wire = got.head.extensions().get::<WireHead>().unwrap().clone();
    let mut res = Response::builder()
        .status(200)
        .header("x-id", "8")
        .header("server", "proxy")
        .body(())
        .unwrap();
    res.extensions_mut().insert(wire);
    let out = send_response(res, b"fine", ResponseContext::default());
    assert_eq!(
        out,
        b"HTTP/1.1 200 OK\r\nServer: proxy\r\nX-Id: 8\r\ncontent-length: 4\r\n\r\nfine"
    );
}

/// The names the edit property draws from: repeated ones among them, so
/// that edits meet names of several lines.
const NAMES: [&str; 4] = ["a", "x-trace", "set-cookie", "server"];

/// One edit of a decoded head's map, through `HeaderMap`'s own API.
#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, u8),
    Append(usize, u8),
    Remove(usize),
    /// The k-th value of a name, changed in place.
    Change(usize, usize, u8),
    /// All values of a name taken out, then appended again in reverse.
    Reverse(usize),
    Clear,
}

fn edit() -> impl proptest::strategy::Strategy<Value = Edit> {
    use proptest::prelude::*;
    let name = 0..NAMES.len();
    prop_oneof![
        (name.clone(), any::<u8>()).prop_map(|(n, v)| Edit::Insert(n, v)),
        (name.clone(), any::<u8>()).prop_map(|(n, v)| Edit::Append(n, v)),
        name.clone().prop_map(Edit::Remove),
        (name.clone(), 0..3usize, any::<u8>()).prop_map(|(n, k, v)| Edit::Change(n, k, v)),
        name.prop_map(Edit::Reverse),
        Just(Edit::Clear),
    ]
}

fn apply(map: &mut http::HeaderMap, edit: &Edit) {
    use http::header::Entry;
    let value = |v: u8| HeaderValue::from_str(&format!("v{v}")).unwrap();
    match *edit {
        Edit::Insert(n, v) => drop(map.insert(NAMES[n], value(v))),
        Edit::Append(n, v) => drop(map.append(NAMES[n], value(v))),
        Edit::Remove(n) => drop(map.remove(NAMES[n])),
        Edit::Change(n, k, v) => {
            if let Entry::Occupied(mut entry) = map.entry(NAMES[n])
                && let Some(slot) = entry.iter_mut().nth(k)
            {
                *slot = value(v);
            }
        }
        Edit::Reverse(n) => {
            let values: Vec<_> = map.get_all(NAMES[n]).iter().cloned().collect();
            map.remove(NAMES[n]);
            for v in values.into_iter().rev() {
                map.append(NAMES[n], v);
            }
        }
        Edit::Clear => map.clear(),
    }
}

/// A response head's field lines: names of the pool in any spelling.
fn wire_lines() -> impl proptest::strategy::Strategy<Value = Vec<(usize, bool, u8)>> {
    use proptest::prelude::*;
    proptest::collection::vec((0..NAMES.len(), any::<bool>(), any::<u8>()), 0..8)
}

proptest::proptest! {
    /// Whatever the edits a head's map went through after decoding, the
    /// head encoded with its wire view (or an order the caller built)
    /// decodes back to exactly the edited
    /// map: each name's values, in their order, nothing lost, nothing
    /// written twice, nothing removed coming back.
    #[test]
    fn an_edited_map_goes_out_exactly_whatever_its_wire_view(
        fields in wire_lines(),
        edits in proptest::collection::vec(edit(), 0..6),
        request in proptest::bool::ANY,
        order in proptest::option::of(wire_lines()),
    ) {
        // A caller-built order instead of the wire view: any names, some
        // the map lacks, some more often than the map holds them.
        let order = order.map(|names| {
            let names = names.iter().map(|&(n, upper, _)| {
                if upper { NAMES[n].to_uppercase() } else { NAMES[n].to_owned() }
            });
            FieldOrder::from_names(names).unwrap()
        });
        let mut raw = Vec::new();
        raw.extend_from_slice(if request {
            b"POST / HTTP/1.1\r\nHost: h\r\n".as_slice()
        } else {
            b"HTTP/1.1 200 OK\r\n".as_slice()
        });
        for &(n, upper, v) in &fields {
            let name = if upper { NAMES[n].to_uppercase() } else { NAMES[n].to_owned() };
            raw.extend_from_slice(format!("{name}: w{v}\r\n").as_bytes());
        }
        raw.extend_from_slice(b"Content-Length: 2\r\n\r\nok");
        let (out, sent) = if request {
            let mut head = decode_request(&raw).head;
            for e in &edits {
                apply(head.headers_mut(), e);
            }
            head.headers_mut().insert(HOST, HeaderValue::from_static("h"));
            if let Some(order) = order {
                head.extensions_mut().insert(order);
            }
            let sent = head.headers().clone();
            (send_request(head, b"ok", EncoderConfig::default()), sent)
        } else {
            let mut head = decode_response(&raw, &Method::GET).head;
            for e in &edits {
                apply(head.headers_mut(), e);
            }
            if let Some(order) = order {
                head.extensions_mut().insert(order);
            }
            let sent = head.headers().clone();
            (send_response(head, b"ok", ResponseContext::default()), sent)
        };
        let back = if request {
            let back = decode_request(&out);
            (back.head.into_parts().0.headers, back.body)
        } else {
            let back = decode_response(&out, &Method::GET);
            (back.head.into_parts().0.headers, back.body)
        };
        let (headers, body) = back;
        proptest::prop_assert_eq!(body, b"ok");
        for name in NAMES.iter().chain(&["host"]) {
            let got: Vec<_> = headers.get_all(*name).iter().collect();
            let want: Vec<_> = sent.get_all(*name).iter().collect();
            proptest::prop_assert_eq!(got, want, "{}: {}", name, String::from_utf8_lossy(&out));
        }
        for name in headers.keys() {
            proptest::prop_assert!(
                sent.contains_key(name) || name == CONTENT_LENGTH,
                "{} came from nowhere: {}", name, String::from_utf8_lossy(&out)
            );
        }
    }
}
