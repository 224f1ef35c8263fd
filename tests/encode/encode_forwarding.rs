//! What a proxy needs from the encoders without the wire view: field names
//! in title case for peers that compare them exactly, and the hop-by-hop
//! fields removed in one call. Every output is decoded back.

use bytes::{Buf, BytesMut};
use h1proto::remove_hop_by_hop;
use h1proto::{
    EncoderConfig, Event, Limits, RequestDecoder, RequestEncoder, ResponseContext, ResponseDecoder,
    ResponseEncoder, Segments,
};
use http::{HeaderMap, HeaderValue, Method, Request, Response, Version};

fn take(out: &mut Segments) -> String {
    String::from_utf8(out.copy_to_bytes(out.remaining()).to_vec()).unwrap()
}

fn title_case() -> EncoderConfig {
    let mut config = EncoderConfig::default();
    config.title_case_fields = true;
    config
}

/// The head, body and trailers a decoder makes of `wire`.
fn decoded<H: h1proto::MessageHead>(
    wire: &str,
    mut decode: impl FnMut(&mut BytesMut) -> Result<Option<Event<H>>, h1proto::Error>,
) -> (H, Vec<u8>, Option<HeaderMap>) {
    let mut buf = BytesMut::from(wire.as_bytes());
    let (mut head, mut body, mut trailers) = (None, Vec::new(), None);
    while let Some(ev) = decode(&mut buf).expect("the output decodes") {
        match ev {
            Event::Head { head: h, .. } => head = Some(h),
            Event::Data(d) => body.extend_from_slice(&d),
            Event::Trailers(t) => trailers = Some(t),
            Event::End(_) => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(buf.is_empty(), "bytes left over");
    (head.expect("a head"), body, trailers)
}

#[test]
fn title_case_response_fields_added_fields_and_trailers() {
    let mut enc = ResponseEncoder::new(title_case());
    let res = Response::builder()
        .header("content-type", "text/plain")
        .header("x-request-id", "7")
        .header("etag", "\"a\"");
    enc.send_head(res, ResponseContext::default()).unwrap();
    enc.send_data("hi").unwrap();
    let mut trailers = HeaderMap::new();
    trailers.insert("x-checksum-sha256", HeaderValue::from_static("abc"));
    enc.finish(Some(trailers.clone())).unwrap();
    let wire = take(enc.output());
    assert_eq!(
        wire,
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Request-Id: 7\r\nEtag: \"a\"\r\n\
         Transfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-Checksum-Sha256: abc\r\n\r\n"
    );
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.expect_response_to(&Method::GET);
    let (head, body, got) = decoded(&wire, |buf| dec.decode(buf));
    assert_eq!(head.headers()["x-request-id"], "7");
    assert_eq!(head.headers()["content-type"], "text/plain");
    assert_eq!(body, b"hi");
    assert_eq!(got, Some(trailers));

    // The Connection fields the encoder adds, and Content-Length.
    let ctx = ResponseContext {
        peer_version: Version::HTTP_10,
        ..ResponseContext::default()
    };
    enc.send_response(Response::new("ok"), ctx).unwrap();
    let wire = take(enc.output());
    assert_eq!(
        wire,
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"
    );
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.expect_response_to(&Method::GET);
    let (head, body, _) = decoded(&wire, |buf| dec.decode(buf));
    assert_eq!(head.headers()["connection"], "keep-alive");
    assert_eq!(body, b"ok");
}

#[test]
fn title_case_request_fields_and_host() {
    let mut enc = RequestEncoder::new(title_case());
    let req = Request::post("http://example.com/api")
        .header("user-agent", "h1proto")
        .body("{}")
        .unwrap();
    enc.send_request(req).unwrap();
    let wire = take(enc.output());
    assert_eq!(
        wire,
        "POST http://example.com/api HTTP/1.1\r\nHost: example.com\r\nUser-Agent: h1proto\r\n\
         Content-Length: 2\r\n\r\n{}"
    );
    let mut dec = RequestDecoder::new(Limits::default());
    let (head, body, _) = decoded(&wire, |buf| dec.decode(buf));
    assert_eq!(head.headers()["host"], "example.com");
    assert_eq!(head.headers()["user-agent"], "h1proto");
    assert_eq!(body, b"{}");
}

fn map(fields: &[(&str, &str)]) -> HeaderMap {
    let mut m = HeaderMap::new();
    for (n, v) in fields {
        m.append(
            http::HeaderName::from_bytes(n.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    m
}

fn names(m: &HeaderMap) -> Vec<&str> {
    m.iter().map(|(n, _)| n.as_str()).collect()
}

#[test]
fn hop_by_hop_fields_are_removed_and_end_to_end_ones_kept() {
    let mut fields = map(&[
        ("connection", "close, X-Hop"),
        ("x-hop", "1"),
        ("keep-alive", "timeout=5"),
        ("proxy-connection", "keep-alive"),
        ("te", "trailers"),
        ("transfer-encoding", "chunked"),
        ("upgrade", "websocket"),
        ("trailer", "x-checksum"),
        ("proxy-authorization", "Basic eA=="),
        ("via", "1.1 first"),
        ("x-end", "kept"),
        ("x-end", "twice"),
    ]);
    remove_hop_by_hop(&mut fields);
    // Removing from a `HeaderMap` may move other names around; the values
    // of one name keep their order.
    let mut kept = names(&fields);
    kept.sort_unstable();
    assert_eq!(
        kept,
        ["proxy-authorization", "trailer", "via", "x-end", "x-end"]
    );
    let ends: Vec<_> = fields.get_all("x-end").iter().collect();
    assert_eq!(ends, ["kept", "twice"]);
}

#[test]
fn every_connection_line_and_option_counts() {
    let mut fields = map(&[
        ("connection", "x-a ,, X-B\t"),
        ("connection", "keep-alive"),
        ("connection", "Connection, x c, x@y, X-D"),
        ("x-a", "1"),
        ("x-a", "2"),
        ("x-b", "1"),
        ("x-c", "kept: `x c` is not a field name"),
        ("x-y", "kept: `x@y` is not a field name either"),
        ("x-d", "1"),
        ("x-e", "kept"),
    ]);
    remove_hop_by_hop(&mut fields);
    let mut kept = names(&fields);
    kept.sort_unstable();
    assert_eq!(kept, ["x-c", "x-e", "x-y"]);

    // Nothing to remove: the map is left as it was.
    let mut fields = map(&[("host", "h"), ("accept", "*/*")]);
    let before = fields.clone();
    remove_hop_by_hop(&mut fields);
    assert_eq!(fields, before);
}

/// A proxy's request path: decode what the client sent, remove the
/// hop-by-hop fields, send the request on with a body the encoder frames
/// itself, and check what the upstream decodes.
#[test]
fn a_forwarded_request_loses_its_hop_by_hop_fields_and_keeps_its_body() {
    let from_client = "POST /submit HTTP/1.1\r\nHost: app\r\nConnection: keep-alive, X-Client-Hint\r\n\
                       X-Client-Hint: 1\r\nTE: trailers\r\nContent-Type: text/plain\r\n\
                       Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    let mut dec = RequestDecoder::new(Limits::default());
    let (head, body, _) = decoded(from_client, |buf| dec.decode(buf));
    let (mut parts, ()) = head.into_parts();
    remove_hop_by_hop(&mut parts.headers);
    parts
        .headers
        .append("via", HeaderValue::from_static("1.1 proxy"));

    let mut enc = RequestEncoder::default();
    enc.send_request(Request::from_parts(parts, body)).unwrap();
    let to_upstream = take(enc.output());
    assert_eq!(
        to_upstream,
        "POST /submit HTTP/1.1\r\nhost: app\r\ncontent-type: text/plain\r\nvia: 1.1 proxy\r\n\
         content-length: 11\r\n\r\nhello world"
    );
    let mut dec = RequestDecoder::new(Limits::default());
    let (head, body, _) = decoded(&to_upstream, |buf| dec.decode(buf));
    let mut kept = names(head.headers());
    kept.sort_unstable();
    assert_eq!(kept, ["content-length", "content-type", "host", "via"]);
    assert_eq!(body, b"hello world");
}

/// A peer can list a framing field in `Connection`: once removed, the
/// encoder frames the body itself, so the upstream still reads it whole.
#[test]
fn a_listed_content_length_is_replaced_by_the_encoder() {
    let mut fields = map(&[
        ("host", "h"),
        ("connection", "content-length"),
        ("content-length", "3"),
    ]);
    remove_hop_by_hop(&mut fields);
    let mut req = Request::post("/").body("abc").unwrap();
    *req.headers_mut() = fields;
    let mut enc = RequestEncoder::default();
    enc.send_request(req).unwrap();
    let wire = take(enc.output());
    assert_eq!(
        wire,
        "POST / HTTP/1.1\r\nhost: h\r\ncontent-length: 3\r\n\r\nabc"
    );
    let mut dec = RequestDecoder::new(Limits::default());
    let (_, body, _) = decoded(&wire, |buf| dec.decode(buf));
    assert_eq!(body, b"abc");
}
