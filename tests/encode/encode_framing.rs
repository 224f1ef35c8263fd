//! Framing decisions of the encoders: automatic framing, caller-given
//! framing enforced, head-only responses, Connection fields, trailers, and
//! failing calls that leave the output untouched.

use bytes::{Buf, Bytes, BytesMut};
use h1proto::{
    CloseReason, EncoderConfig, Event, KeepAlive, Limits, ReasonPhrase, RequestEncoder,
    ResponseContext, ResponseDecoder, ResponseEncoder, Segments, UsageError,
    framing::{BodyKind, RequestKind},
};
use http::{HeaderMap, Method, Request, Response, StatusCode, Version};

fn take(out: &mut Segments) -> String {
    let b = out.copy_to_bytes(out.remaining());
    String::from_utf8(b.to_vec()).unwrap()
}

fn ctx(request: RequestKind) -> ResponseContext {
    ResponseContext {
        request,
        ..ResponseContext::default()
    }
}

fn http10() -> ResponseContext {
    ResponseContext {
        peer_version: Version::HTTP_10,
        ..ResponseContext::default()
    }
}

fn status(code: u16) -> Response<()> {
    Response::builder().status(code).body(()).unwrap()
}

#[test]
fn one_shot_gets_content_length() {
    let mut enc = ResponseEncoder::default();
    enc.send_response(Response::new(""), ResponseContext::default())
        .unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"
    );
    assert!(enc.is_finished() && enc.keep_alive().is_reusable());
}

#[test]
fn streaming_to_http11_is_chunked_and_empty_writes_emit_nothing() {
    let mut enc = ResponseEncoder::default();
    let kind = enc
        .send_head(Response::new(()), ResponseContext::default())
        .unwrap();
    assert_eq!(kind, BodyKind::Chunked);
    enc.send_data("").unwrap();
    enc.send_data(Bytes::new()).unwrap();
    enc.send_data("hello").unwrap();
    let mut trailers = HeaderMap::new();
    trailers.insert("x-checksum", "abc".parse().unwrap());
    enc.finish(Some(trailers)).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nx-checksum: abc\r\n\r\n"
    );
}

#[test]
fn streaming_to_http10_is_close_delimited() {
    let mut enc = ResponseEncoder::default();
    let kind = enc.send_head(Response::new(()), http10()).unwrap();
    assert_eq!(kind, BodyKind::CloseDelimited);
    enc.send_data("abc").unwrap();
    enc.finish(None).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nabc"
    );
    assert_eq!(
        (enc.is_finished(), enc.keep_alive()),
        (true, KeepAlive::Close(CloseReason::CloseDelimited))
    );
    assert_eq!(
        enc.send_response(Response::new("x"), ResponseContext::default()),
        Err(UsageError::WrongState)
    );
}

#[test]
fn http10_peer_with_reusable_verdict_gets_keep_alive() {
    let mut enc = ResponseEncoder::default();
    enc.send_response(Response::new("hi"), http10()).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nhi"
    );
    let mut c = http10();
    c.keep_alive = KeepAlive::Close(CloseReason::Http10);
    enc.send_response(Response::new("hi"), c).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi"
    );
}

#[test]
fn close_verdict_adds_connection_close_once() {
    let mut enc = ResponseEncoder::default();
    let c = ResponseContext {
        keep_alive: KeepAlive::Close(CloseReason::PeerClose),
        ..ResponseContext::default()
    };
    enc.send_response(Response::new("x"), c).unwrap();
    assert!(take(enc.output()).contains("connection: close\r\n"));
    assert_eq!(enc.keep_alive(), KeepAlive::Close(CloseReason::PeerClose));

    let mut enc = ResponseEncoder::default();
    let res = Response::builder()
        .header("connection", "Keep-Alive, Close")
        .body("x")
        .unwrap();
    enc.send_response(res, ResponseContext::default()).unwrap();
    let text = take(enc.output());
    assert_eq!(text.matches("connection").count(), 1, "{text}");
    assert_eq!(
        (enc.is_finished(), enc.keep_alive()),
        (true, KeepAlive::Close(CloseReason::LocalClose))
    );
}

#[test]
fn reason_phrase_extension_and_http10_version() {
    let mut enc = ResponseEncoder::default();
    let mut res = Response::new("");
    *res.status_mut() = StatusCode::NOT_FOUND;
    *res.version_mut() = Version::HTTP_10;
    res.extensions_mut()
        .insert(ReasonPhrase::new("Nope").unwrap());
    enc.send_response(res, ResponseContext::default()).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.0 404 Nope\r\ncontent-length: 0\r\nconnection: keep-alive\r\n\r\n"
    );
    let mut res = Response::new("");
    *res.status_mut() = StatusCode::from_u16(599).unwrap();
    enc.send_response(res, ResponseContext::default()).unwrap();
    assert!(take(enc.output()).starts_with("HTTP/1.1 599 \r\n"));
    // 200 has a line of its own only without a phrase of the caller's,
    // and only in HTTP/1.1.
    for (version, reason, line) in [
        (Version::HTTP_11, None, "HTTP/1.1 200 OK\r\n"),
        (Version::HTTP_11, Some("Fine"), "HTTP/1.1 200 Fine\r\n"),
        (Version::HTTP_10, None, "HTTP/1.0 200 OK\r\n"),
        (Version::HTTP_09, None, "HTTP/1.1 200 OK\r\n"),
    ] {
        let mut res = Response::new("");
        *res.version_mut() = version;
        if let Some(reason) = reason {
            res.extensions_mut()
                .insert(ReasonPhrase::new(reason).unwrap());
        }
        enc.send_response(res, ResponseContext::default()).unwrap();
        assert!(take(enc.output()).starts_with(line), "{line}");
    }
    let mut res = Response::new("");
    *res.version_mut() = Version::HTTP_2;
    assert_eq!(
        enc.send_response(res, ResponseContext::default()),
        Err(UsageError::InvalidHead)
    );
}

#[test]
fn caller_content_length_is_enforced_without_touching_output() {
    let mut enc = ResponseEncoder::default();
    let res = |body: &'static str| {
        Response::builder()
            .header("content-length", "5")
            .body(body)
            .unwrap()
    };
    assert_eq!(
        enc.send_response(res("toolong"), ResponseContext::default()),
        Err(UsageError::BodyTooLong {
            declared: 5,
            attempted: 7
        })
    );
    assert_eq!(
        enc.send_response(res("abc"), ResponseContext::default()),
        Err(UsageError::BodyTooShort {
            declared: 5,
            sent: 3
        })
    );
    assert!(enc.output().is_empty());
    assert!(enc.is_finished() && enc.keep_alive().is_reusable());

    let head = Response::builder()
        .header("content-length", "5")
        .body(())
        .unwrap();
    assert_eq!(
        enc.send_head(head, ResponseContext::default()),
        Ok(BodyKind::Length(5))
    );
    let before = enc.output().len();
    enc.send_data("abc").unwrap();
    assert_eq!(
        enc.send_data("def"),
        Err(UsageError::BodyTooLong {
            declared: 5,
            attempted: 6
        })
    );
    assert_eq!(enc.output().len(), before + 3);
    assert_eq!(
        enc.finish(None),
        Err(UsageError::BodyTooShort {
            declared: 5,
            sent: 3
        })
    );
    let mut trailers = HeaderMap::new();
    trailers.insert("x-a", "b".parse().unwrap());
    enc.send_data("de").unwrap();
    assert_eq!(
        enc.finish(Some(trailers)),
        Err(UsageError::TrailersNotAllowed)
    );
    enc.finish(None).unwrap();
    assert!(take(enc.output()).ends_with("\r\n\r\nabcde"));
}

#[test]
fn malformed_or_contradictory_framing_is_refused() {
    let cases: &[&[(&str, &str)]] = &[
        &[("content-length", "+5")],
        &[("content-length", "5"), ("content-length", "5")],
        &[("content-length", "")],
        &[("content-length", "5"), ("transfer-encoding", "chunked")],
        &[("transfer-encoding", "chunked, chunked")],
    ];
    for fields in cases {
        let mut b = Response::builder();
        for (n, v) in *fields {
            b = b.header(*n, *v);
        }
        let mut enc = ResponseEncoder::default();
        assert_eq!(
            enc.send_response(b.body("12345").unwrap(), ResponseContext::default()),
            Err(UsageError::InvalidFraming),
            "{fields:?}"
        );
        assert!(enc.output().is_empty());
    }
    // Transfer codings other than chunked cannot be taken off for an
    // HTTP/1.0 peer (chunked alone is rewritten: see
    // `caller_chunked_to_http10_*`), whether the body follows or not.
    for codings in ["gzip", "gzip, chunked"] {
        for request in [RequestKind::Other, RequestKind::Head] {
            let c = ResponseContext {
                request,
                ..http10()
            };
            let res = Response::builder().header("transfer-encoding", codings);
            let mut enc = ResponseEncoder::default();
            assert_eq!(enc.send_head(res, c), Err(UsageError::InvalidFraming));
            let res = Response::builder().header("transfer-encoding", codings);
            assert_eq!(enc.send_response(res, c), Err(UsageError::InvalidFraming));
            assert!(enc.output().is_empty());
        }
    }
}

#[test]
fn caller_chunked_one_shot_is_one_chunk() {
    let mut enc = ResponseEncoder::default();
    let res = Response::builder()
        .header("transfer-encoding", "chunked")
        .body("hello")
        .unwrap();
    enc.send_response(res, ResponseContext::default()).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    );
}

#[test]
fn head_keeps_the_get_content_length_and_drops_the_body() {
    let mut enc = ResponseEncoder::default();
    enc.send_response(Response::new("Hello, world!"), ctx(RequestKind::Head))
        .unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\ncontent-length: 13\r\n\r\n"
    );
    // Caller-given length, empty body: kept as is.
    let res = Response::builder()
        .header("content-length", "1000")
        .body("")
        .unwrap();
    enc.send_response(res, ctx(RequestKind::Head)).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n"
    );
    // Streaming: no length invented, body counted and dropped.
    assert_eq!(
        enc.send_head(Response::new(()), ctx(RequestKind::Head)),
        Ok(BodyKind::Empty)
    );
    enc.send_data("ignored").unwrap();
    let mut t = HeaderMap::new();
    t.insert("x-t", "1".parse().unwrap());
    enc.finish(Some(t)).unwrap();
    assert_eq!(take(enc.output()), "HTTP/1.1 200 OK\r\n\r\n");
    // Streaming with a declared length: bytes are counted against it.
    let res = Response::builder()
        .header("content-length", "3")
        .body(())
        .unwrap();
    enc.send_head(res, ctx(RequestKind::Head)).unwrap();
    assert_eq!(
        enc.send_data("abcd"),
        Err(UsageError::BodyTooLong {
            declared: 3,
            attempted: 4
        })
    );
    enc.finish(None).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\n"
    );
}

#[test]
fn strict_head_body_refuses_bytes() {
    let mut config = EncoderConfig::default();
    config.strict_head_body = true;
    let mut enc = ResponseEncoder::new(config);
    assert_eq!(
        enc.send_response(Response::new("x"), ctx(RequestKind::Head)),
        Err(UsageError::BodyNotAllowed)
    );
    enc.send_head(Response::new(()), ctx(RequestKind::Head))
        .unwrap();
    assert_eq!(enc.send_data("x"), Err(UsageError::BodyNotAllowed));
    enc.send_data("").unwrap();
    enc.finish(None).unwrap();
}

#[test]
fn no_content_and_interim_carry_no_framing() {
    for code in [204u16, 100, 103] {
        let mut enc = ResponseEncoder::default();
        let res = Response::builder()
            .status(code)
            .header("content-length", "10")
            .header("x-a", "b")
            .body(())
            .unwrap();
        let kind = enc.send_head(res, ResponseContext::default()).unwrap();
        assert_eq!(kind, BodyKind::Empty);
        let text = take(enc.output());
        assert!(!text.contains("content-length"), "{text}");
        assert!(!text.contains("transfer-encoding"), "{text}");
        assert!(text.ends_with("x-a: b\r\n\r\n"), "{text}");
    }
    let mut enc = ResponseEncoder::default();
    assert_eq!(
        enc.send_response(
            Response::builder().status(204).body("x").unwrap(),
            ResponseContext::default()
        ),
        Err(UsageError::BodyNotAllowed)
    );
    // An interim response leaves the encoder ready for the final one.
    enc.send_head(status(100), ResponseContext::default())
        .unwrap();
    assert!(enc.is_finished() && enc.keep_alive().is_reusable());
    enc.send_response(Response::new("ok"), ResponseContext::default())
        .unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    );
    assert_eq!(
        enc.send_head(status(100), http10()),
        Err(UsageError::InterimToHttp10)
    );
}

#[test]
fn not_modified_keeps_content_length_and_is_never_chunked() {
    let mut enc = ResponseEncoder::default();
    let res = Response::builder()
        .status(304)
        .header("content-length", "42")
        .body(())
        .unwrap();
    assert_eq!(
        enc.send_head(res, ResponseContext::default()),
        Ok(BodyKind::Empty)
    );
    enc.finish(None).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 304 Not Modified\r\ncontent-length: 42\r\n\r\n"
    );
    enc.send_head(status(304), ResponseContext::default())
        .unwrap();
    enc.finish(None).unwrap();
    assert_eq!(take(enc.output()), "HTTP/1.1 304 Not Modified\r\n\r\n");
}

#[test]
fn connect_success_and_switching_protocols_end_http() {
    let mut enc = ResponseEncoder::default();
    let res = Response::builder()
        .header("content-length", "0")
        .body(())
        .unwrap();
    enc.send_head(res, ctx(RequestKind::Connect)).unwrap();
    assert_eq!(take(enc.output()), "HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!(
        (enc.is_finished(), enc.keep_alive()),
        (true, KeepAlive::Close(CloseReason::Switched))
    );

    let mut enc = ResponseEncoder::default();
    let res = Response::builder()
        .status(101)
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .body("")
        .unwrap();
    enc.send_response(res, ResponseContext::default()).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n"
    );
    assert_eq!(enc.keep_alive(), KeepAlive::Close(CloseReason::Switched));

    // A failed CONNECT is an ordinary response.
    let mut enc = ResponseEncoder::default();
    enc.send_response(
        Response::builder().status(502).body("no").unwrap(),
        ctx(RequestKind::Connect),
    )
    .unwrap();
    assert!(take(enc.output()).contains("content-length: 2\r\n"));
}

#[test]
fn forbidden_trailers_are_refused() {
    for name in [
        "content-length",
        "transfer-encoding",
        "host",
        "trailer",
        "connection",
        "te",
    ] {
        let mut enc = ResponseEncoder::default();
        enc.send_head(Response::new(()), ResponseContext::default())
            .unwrap();
        enc.send_data("abc").unwrap();
        let before = enc.output().len();
        let mut t = HeaderMap::new();
        t.insert(http::HeaderName::from_static(name), "1".parse().unwrap());
        assert_eq!(enc.finish(Some(t)), Err(UsageError::ForbiddenTrailer));
        assert_eq!(enc.output().len(), before);
        enc.finish(None).unwrap();
    }
}

#[test]
fn wrong_state_calls() {
    let mut enc = ResponseEncoder::default();
    assert_eq!(enc.send_data("x"), Err(UsageError::WrongState));
    assert_eq!(enc.finish(None), Err(UsageError::WrongState));
    enc.send_head(Response::new(()), ResponseContext::default())
        .unwrap();
    assert_eq!(
        enc.send_head(Response::new(()), ResponseContext::default()),
        Err(UsageError::WrongState)
    );
    assert!(!enc.is_finished());
    assert_eq!(enc.body_kind(), Some(BodyKind::Chunked));
}

#[test]
fn context_from_a_request() {
    let req = Request::head("/")
        .version(Version::HTTP_10)
        .body(())
        .unwrap();
    let c = ResponseContext::for_request(&req);
    assert_eq!(c.request, RequestKind::Head);
    assert_eq!(c.peer_version, Version::HTTP_10);
    assert_eq!(c.keep_alive, KeepAlive::Close(CloseReason::Http10));
}

#[test]
fn request_targets_and_host() {
    let mut enc = RequestEncoder::default();
    let cases: Vec<(Request<&'static str>, &str)> = vec![
        (
            Request::get("/a/b?c=d")
                .header("host", "h")
                .body("")
                .unwrap(),
            "GET /a/b?c=d HTTP/1.1\r\nhost: h\r\n\r\n",
        ),
        (
            Request::get("http://user@example.com:8080/x")
                .body("")
                .unwrap(),
            "GET http://user@example.com:8080/x HTTP/1.1\r\nhost: example.com:8080\r\n\r\n",
        ),
        (
            Request::connect("example.com:443").body("").unwrap(),
            "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n",
        ),
        (
            Request::options("*").header("host", "h").body("").unwrap(),
            "OPTIONS * HTTP/1.1\r\nhost: h\r\n\r\n",
        ),
        (
            Request::post("/p").header("host", "h").body("").unwrap(),
            "POST /p HTTP/1.1\r\nhost: h\r\ncontent-length: 0\r\n\r\n",
        ),
        (
            Request::get("/")
                .version(Version::HTTP_10)
                .body("")
                .unwrap(),
            "GET / HTTP/1.0\r\n\r\n",
        ),
    ];
    for (req, expected) in cases {
        enc.send_request(req).unwrap();
        assert_eq!(take(enc.output()), expected);
    }
    // The HTTP/1.0 request without keep-alive ended the connection.
    assert_eq!(
        (enc.is_finished(), enc.keep_alive()),
        (true, KeepAlive::Close(CloseReason::Http10))
    );
    let mut enc = RequestEncoder::default();
    assert_eq!(
        enc.send_request(Request::get("/").body("").unwrap()),
        Err(UsageError::InvalidHead)
    );
    assert_eq!(
        enc.send_request(Request::get("*").header("host", "h").body("").unwrap()),
        Err(UsageError::InvalidHead)
    );
    assert!(enc.output().is_empty());
}

#[test]
fn streaming_requests_are_chunked_and_http10_needs_a_length() {
    let mut enc = RequestEncoder::default();
    let req = Request::put("/u").header("host", "h").body(()).unwrap();
    assert_eq!(enc.send_head(req), Ok(BodyKind::Chunked));
    enc.send_data(vec![b'z'; 20]).unwrap();
    enc.finish(None).unwrap();
    assert_eq!(
        take(enc.output()),
        "PUT /u HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\n\r\n14\r\nzzzzzzzzzzzzzzzzzzzz\r\n0\r\n\r\n"
    );
    let req = Request::builder()
        .method(Method::POST)
        .uri("/")
        .version(Version::HTTP_10)
        .body(())
        .unwrap();
    assert_eq!(enc.send_head(req), Err(UsageError::InvalidFraming));
    let req = Request::post("/")
        .header("host", "h")
        .header("connection", "close")
        .body("x")
        .unwrap();
    enc.send_request(req).unwrap();
    assert_eq!(
        (enc.is_finished(), enc.keep_alive()),
        (true, KeepAlive::Close(CloseReason::LocalClose))
    );
}

/// What an HTTP/1.0 client (or any peer) decodes from `wire`, sent in
/// answer to `method`, the peer then closing: the head, its framing, the
/// body and the verdict.
fn decode_response(
    wire: &str,
    method: &Method,
) -> (Response<()>, BodyKind, Vec<u8>, Option<KeepAlive>) {
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.expect_response_to(method);
    let mut buf = BytesMut::from(wire.as_bytes());
    let mut head = None;
    let mut data = Vec::new();
    let mut end = None;
    for eof in [false, true] {
        loop {
            let ev = if eof {
                dec.decode_eof(&mut buf)
            } else {
                dec.decode(&mut buf)
            };
            match ev.expect("the output decodes") {
                Some(Event::Head { head: h, body }) => head = Some((h, body)),
                Some(Event::Data(d)) => data.extend_from_slice(&d),
                Some(Event::End(k)) => end = Some(k),
                Some(other) => panic!("unexpected {other:?}"),
                None => break,
            }
        }
    }
    assert!(buf.is_empty(), "bytes left over: {buf:?}");
    let (head, kind) = head.expect("a head");
    (head, kind, data, end)
}

#[test]
fn caller_chunked_to_http10_streams_close_delimited() {
    // The HTTP/1.0 client asked for keep-alive; a close-delimited body
    // ends the connection all the same.
    for keep_alive in [KeepAlive::Reusable, KeepAlive::Close(CloseReason::Http10)] {
        let c = ResponseContext {
            keep_alive,
            ..http10()
        };
        let mut enc = ResponseEncoder::default();
        let res = Response::builder()
            .header("content-type", "text/plain")
            .header("transfer-encoding", "chunked");
        assert_eq!(enc.send_head(res, c), Ok(BodyKind::CloseDelimited));
        enc.send_data("hello ").unwrap();
        enc.send_data("world").unwrap();
        enc.finish(None).unwrap();
        // The first reason to close is the one kept.
        let reason = match keep_alive {
            KeepAlive::Close(reason) => reason,
            _ => CloseReason::CloseDelimited,
        };
        assert_eq!(
            (enc.is_finished(), enc.keep_alive()),
            (true, KeepAlive::Close(reason))
        );
        let wire = take(enc.output());
        assert_eq!(
            wire,
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nhello world"
        );
        let (head, kind, body, end) = decode_response(&wire, &Method::GET);
        assert_eq!(kind, BodyKind::CloseDelimited);
        assert!(!head.headers().contains_key("transfer-encoding"));
        assert_eq!(body, b"hello world");
        assert!(matches!(end, Some(KeepAlive::Close(_))), "{end:?}");
    }
    // The caller's own `Connection: close` is not written twice.
    let mut enc = ResponseEncoder::default();
    let res = Response::builder()
        .header("connection", "close")
        .header("transfer-encoding", "chunked");
    enc.send_head(res, http10()).unwrap();
    enc.finish(None).unwrap();
    assert_eq!(
        take(enc.output()),
        "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n"
    );
}

#[test]
fn caller_chunked_to_http10_whole_body_gets_content_length() {
    let mut enc = ResponseEncoder::default();
    let res = Response::builder()
        .header("transfer-encoding", "chunked")
        .body("hello")
        .unwrap();
    enc.send_response(res, http10()).unwrap();
    // The length is known: the connection may stay open.
    assert!(enc.is_finished() && enc.keep_alive().is_reusable());
    let wire = take(enc.output());
    assert_eq!(
        wire,
        "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: keep-alive\r\n\r\nhello"
    );
    let (_, kind, body, end) = decode_response(&wire, &Method::GET);
    assert_eq!(kind, BodyKind::Length(5));
    assert_eq!(body, b"hello");
    assert_eq!(end, Some(KeepAlive::Reusable));
}

#[test]
fn caller_chunked_in_an_http10_response_is_rewritten_too() {
    // The response itself says HTTP/1.0: no transfer coding either.
    let mut enc = ResponseEncoder::default();
    let res = Response::builder()
        .version(Version::HTTP_10)
        .header("transfer-encoding", "chunked");
    assert_eq!(
        enc.send_head(res, ResponseContext::default()),
        Ok(BodyKind::CloseDelimited)
    );
    enc.send_data("abc").unwrap();
    enc.finish(None).unwrap();
    let wire = take(enc.output());
    assert_eq!(wire, "HTTP/1.0 200 OK\r\nconnection: close\r\n\r\nabc");
    let (head, kind, body, _) = decode_response(&wire, &Method::GET);
    assert_eq!(head.version(), Version::HTTP_10);
    assert_eq!(kind, BodyKind::CloseDelimited);
    assert_eq!(body, b"abc");
}

#[test]
fn caller_chunked_to_http10_head_request_drops_the_coding_only() {
    let c = ResponseContext {
        request: RequestKind::Head,
        ..http10()
    };
    let mut enc = ResponseEncoder::default();
    let res = Response::builder().header("transfer-encoding", "chunked");
    assert_eq!(enc.send_head(res, c), Ok(BodyKind::Empty));
    enc.send_data("dropped").unwrap();
    enc.finish(None).unwrap();
    // No body follows a response to HEAD: nothing needs the close.
    assert!(enc.is_finished() && enc.keep_alive().is_reusable());
    let wire = take(enc.output());
    assert_eq!(wire, "HTTP/1.1 200 OK\r\nconnection: keep-alive\r\n\r\n");
    let (_, kind, body, end) = decode_response(&wire, &Method::HEAD);
    assert_eq!(kind, BodyKind::Empty);
    assert!(body.is_empty());
    assert_eq!(end, Some(KeepAlive::Reusable));
}

/// A head is written while its fields are read for the plan: a head the
/// plan refuses, or one with a caller's field the plan leaves out, is
/// taken back from behind what was queued before it, which stays as it
/// was, and the next response follows it. Each response decodes back.
#[test]
fn a_head_taken_back_leaves_what_was_queued_before_it() {
    let mut enc = ResponseEncoder::default();
    let first = Response::builder().header("x-a", "1").body("one").unwrap();
    enc.send_response(first, ResponseContext::default())
        .unwrap();
    let queued = enc.output().len();
    let refused = Response::builder()
        .header("x-b", "2")
        .header("content-length", "+5")
        .body("12345")
        .unwrap();
    assert_eq!(
        enc.send_response(refused, ResponseContext::default()),
        Err(UsageError::InvalidFraming)
    );
    assert_eq!(enc.output().len(), queued);
    // A 204 keeps no framing field of the caller's: written again
    // without it.
    let no_content = Response::builder()
        .status(StatusCode::NO_CONTENT)
        .header("x-c", "3")
        .header("content-length", "0")
        .body("")
        .unwrap();
    enc.send_response(no_content, ResponseContext::default())
        .unwrap();
    let last = Response::builder().header("x-d", "4").body("four").unwrap();
    enc.send_response(last, ResponseContext::default()).unwrap();
    let wire = take(enc.output());
    assert_eq!(
        wire,
        "HTTP/1.1 200 OK\r\nx-a: 1\r\ncontent-length: 3\r\n\r\none\
         HTTP/1.1 204 No Content\r\nx-c: 3\r\n\r\n\
         HTTP/1.1 200 OK\r\nx-d: 4\r\ncontent-length: 4\r\n\r\nfour"
    );
    let mut dec = ResponseDecoder::new(Limits::default());
    let mut buf = BytesMut::from(wire.as_bytes());
    let mut heads = Vec::new();
    let mut data = Vec::new();
    for _ in 0..3 {
        dec.expect_response_to(&Method::GET);
    }
    while let Some(event) = dec.decode(&mut buf).unwrap() {
        match event {
            Event::Head { head, .. } => heads.push(head.status().as_u16()),
            Event::Data(d) => data.extend_from_slice(&d),
            _ => {}
        }
    }
    assert_eq!(heads, [200, 204, 200]);
    assert_eq!(data, b"onefour");
}
