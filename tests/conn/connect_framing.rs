//! A CONNECT request has no content (RFC 9110 section 9.3.6): what follows
//! its head is tunnel data once a 2xx answers it, and never HTTP. Found by
//! the differential campaign (`scripts/differential.sh`): a CONNECT with a
//! body framed by `Content-Length` or `Transfer-Encoding` used to be decoded
//! with that body, and the bytes after it as a second request that a
//! tunnelling front end had forwarded as opaque data.
//!
//! Every decoder case is fed whole and split at every byte boundary.

use crate::support;

use bytes::BytesMut;
use h1proto::{
    ClientConnection, CloseReason, Config, ErrorKind, Event, KeepAlive, Limits, RequestDecoder,
    RequestEncoder, ServerConnection, UsageError, framing::BodyKind,
};
use http::{Method, Request, Response, StatusCode};

/// What a request decoder made of some input: the heads (method, body
/// framing, body bytes, verdict), the error if any, and the bytes it left.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    messages: Vec<(Method, BodyKind, Vec<u8>, Option<KeepAlive>)>,
    error: Option<ErrorKind>,
    closed: bool,
    rest: Vec<u8>,
}

/// Feeds `raw` to a fresh decoder in the pieces `cuts` makes.
fn decode(raw: &[u8], cuts: &[usize]) -> Outcome {
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::new();
    let mut out = Outcome {
        messages: Vec::new(),
        error: None,
        closed: false,
        rest: Vec::new(),
    };
    let mut from = 0;
    'feed: for &to in cuts.iter().chain(std::iter::once(&raw.len())) {
        buf.extend_from_slice(&raw[from..to]);
        from = to;
        loop {
            match dec.decode(&mut buf) {
                Ok(None) => break,
                Ok(Some(Event::Head { head, body })) => {
                    out.messages
                        .push((head.method().clone(), body, Vec::new(), None));
                }
                Ok(Some(Event::Data(d))) => out.messages.last_mut().unwrap().2.extend(&d),
                Ok(Some(Event::End(ka))) => out.messages.last_mut().unwrap().3 = Some(ka),
                Ok(Some(_)) => {}
                Err(e) => {
                    assert_eq!(e.status(), StatusCode::BAD_REQUEST);
                    out.error = Some(e.kind());
                    break 'feed;
                }
            }
        }
    }
    out.closed = dec.is_closed();
    if out.error.is_none() {
        // After an error nothing counts, and feeding stopped there.
        out.rest = buf.to_vec();
    }
    out
}

/// The outcome fed whole, checked to be the same at every single split
/// point and one byte at a time.
fn decode_every_way(raw: &[u8]) -> Outcome {
    let whole = decode(raw, &[]);
    for at in 1..raw.len() {
        assert_eq!(decode(raw, &[at]), whole, "split at {at}");
    }
    let bytes: Vec<usize> = (1..raw.len()).collect();
    assert_eq!(decode(raw, &bytes), whole, "byte by byte");
    whole
}

const SMUGGLED: &[u8] = b"GET /admin HTTP/1.1\r\nHost: a.test\r\n\r\n";

fn with_smuggled(head: &[u8], body: &[u8]) -> Vec<u8> {
    [head, body, SMUGGLED].concat()
}

#[test]
fn a_connect_with_a_content_length_body_is_refused() {
    // The request of the finding, and variants of its length.
    for cl in ["5", "05", "1"] {
        let head = format!(
            "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nContent-Length: {cl}\r\n\r\n"
        );
        let raw = with_smuggled(head.as_bytes(), b"hello");
        let out = decode_every_way(&raw);
        assert_eq!(out.error, Some(ErrorKind::ConnectWithContent), "{cl}");
        assert!(out.messages.is_empty(), "{cl}: {out:?}");
    }
}

#[test]
fn a_connect_with_transfer_encoding_is_refused() {
    for te in ["chunked", "Chunked", "chunked,"] {
        let head = format!(
            "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nTransfer-Encoding: {te}\r\n\r\n"
        );
        let raw = with_smuggled(head.as_bytes(), b"5\r\nhello\r\n0\r\n\r\n");
        let out = decode_every_way(&raw);
        assert_eq!(out.error, Some(ErrorKind::ConnectWithContent), "{te}");
        assert!(out.messages.is_empty());
    }
    // A zero-size chunked body still announces a body: refused as well.
    let raw = b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    assert_eq!(
        decode_every_way(raw).error,
        Some(ErrorKind::ConnectWithContent)
    );
}

#[test]
fn content_length_zero_on_connect_is_no_body() {
    let head = b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nContent-Length: 0\r\n\r\n";
    let raw = with_smuggled(head, b"");
    let out = decode_every_way(&raw);
    assert_eq!(out.error, None);
    assert_eq!(
        out.messages,
        vec![(
            Method::CONNECT,
            BodyKind::Length(0),
            Vec::new(),
            Some(KeepAlive::Reusable)
        )]
    );
    // The bytes after the head are not decoded: they are the tunnel's.
    assert!(out.closed);
    assert_eq!(out.rest, SMUGGLED);
}

#[test]
fn nothing_after_a_connect_head_is_decoded() {
    let head = b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n";
    for tail in [SMUGGLED, b"\x16\x03\x01\x00\x05hello", b""] {
        let raw = with_smuggled(head, b"");
        let raw = [&raw[..head.len()], tail].concat();
        let out = decode_every_way(&raw);
        assert_eq!(out.error, None);
        assert_eq!(
            out.messages,
            vec![(
                Method::CONNECT,
                BodyKind::Empty,
                Vec::new(),
                Some(KeepAlive::Reusable)
            )]
        );
        assert!(out.closed);
        assert_eq!(out.rest, tail);
    }
    // A request before the CONNECT is decoded as usual.
    let raw = [&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..], head, SMUGGLED].concat();
    let out = decode_every_way(&raw);
    let methods: Vec<&Method> = out.messages.iter().map(|m| &m.0).collect();
    assert_eq!(methods, [&Method::GET, &Method::CONNECT]);
    assert_eq!(out.rest, SMUGGLED);
}

/// Drives a server through `raw` cut at `cuts`, answering the CONNECT with
/// `status` as soon as its request ends. Returns the requests decoded, the
/// wire output, and the bytes left in the read buffer.
fn serve_connect(raw: &[u8], cuts: &[usize], status: StatusCode) -> (Vec<String>, String, Vec<u8>) {
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::new();
    let mut seen = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&raw.len())) {
        buf.extend_from_slice(&raw[from..to]);
        from = to;
        while let Some(ev) = server.poll_event(&mut buf).unwrap() {
            match ev {
                Event::Head { head, .. } => seen.push(format!("{} {}", head.method(), head.uri())),
                Event::End(_) => {
                    let mut res = Response::new("");
                    *res.status_mut() = status;
                    server.sender().send_response(res).unwrap();
                }
                _ => {}
            }
        }
    }
    let out = support::drain(server.output()).text();
    if status.is_success() {
        assert!(server.is_switched());
    } else {
        assert!(server.is_closed(), "{status}: the connection must close");
        assert_eq!(
            server.keep_alive(),
            KeepAlive::Close(CloseReason::ConnectRefused)
        );
    }
    // Polling again decodes nothing more.
    assert!(server.poll_event(&mut buf).unwrap().is_none());
    (seen, out, buf.to_vec())
}

#[test]
fn a_refused_connect_closes_the_connection_before_the_bytes_after_it() {
    let raw = with_smuggled(
        b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n",
        b"",
    );
    for status in [
        StatusCode::PROXY_AUTHENTICATION_REQUIRED,
        StatusCode::FORBIDDEN,
        StatusCode::BAD_GATEWAY,
        StatusCode::MOVED_PERMANENTLY,
    ] {
        let whole = serve_connect(&raw, &[], status);
        let (seen, out, rest) = &whole;
        assert_eq!(seen, &["CONNECT a.test:443"], "{status}");
        assert!(out.contains("\r\nconnection: close\r\n"), "{status}: {out}");
        assert_eq!(out.matches("HTTP/1.1 ").count(), 1, "{status}: {out}");
        assert_eq!(rest, SMUGGLED, "{status}");
        for at in 1..raw.len() {
            assert_eq!(&serve_connect(&raw, &[at], status), &whole, "split at {at}");
        }
    }
}

#[test]
fn an_accepted_connect_hands_over_the_bytes_after_it() {
    let raw = with_smuggled(
        b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n",
        b"",
    );
    let whole = serve_connect(&raw, &[], StatusCode::OK);
    assert_eq!(whole.0, ["CONNECT a.test:443"]);
    // No framing fields and no Connection: close on the tunnel's 2xx.
    assert_eq!(whole.1, "HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!(whole.2, SMUGGLED);
    for at in 1..raw.len() {
        assert_eq!(
            serve_connect(&raw, &[at], StatusCode::OK),
            whole,
            "split at {at}"
        );
    }
}

#[test]
fn a_server_answers_a_connect_with_content_with_400_and_closes() {
    let raw = with_smuggled(
        b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nContent-Length: 5\r\n\r\n",
        b"hello",
    );
    let mut server = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(&raw[..]);
    let err = server.poll_event(&mut buf).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectWithContent);
    assert_eq!(err.status(), StatusCode::BAD_REQUEST);
    server.send_error_response(&err).unwrap();
    let out = support::drain(server.output()).text();
    assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{out}");
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    assert!(server.is_closed());
}

fn connect() -> http::request::Builder {
    Request::connect("a.test:443").header("host", "a.test:443")
}

/// Decodes what an encoder wrote: one CONNECT, no body, nothing after it.
fn decodes_as_a_bare_connect(wire: &[u8]) {
    let out = decode_every_way(wire);
    assert_eq!(out.error, None);
    assert_eq!(
        out.messages,
        vec![(
            Method::CONNECT,
            BodyKind::Empty,
            Vec::new(),
            Some(KeepAlive::Reusable)
        )]
    );
    assert!(out.rest.is_empty());
}

#[test]
fn the_request_encoder_never_frames_a_connect() {
    for (name, value) in [
        ("content-length", "5"),
        ("content-length", "0"),
        ("transfer-encoding", "chunked"),
    ] {
        let mut enc = RequestEncoder::default();
        let req = connect().header(name, value).body("").unwrap();
        assert_eq!(
            enc.send_request(req),
            Err(UsageError::InvalidFraming),
            "{name}"
        );
        let req = connect().header(name, value).body(()).unwrap();
        assert_eq!(enc.send_head(req), Err(UsageError::InvalidFraming));
        assert!(enc.output().is_empty());
    }
    let mut enc = RequestEncoder::default();
    assert_eq!(
        enc.send_request(connect().body("hello").unwrap()),
        Err(UsageError::BodyNotAllowed)
    );
    assert!(enc.output().is_empty());

    // A whole CONNECT without body: no framing field.
    enc.send_request(connect().body("").unwrap()).unwrap();
    let wire = support::drain(enc.output()).bytes;
    assert_eq!(
        &wire[..],
        b"CONNECT a.test:443 HTTP/1.1\r\nhost: a.test:443\r\n\r\n"
    );
    decodes_as_a_bare_connect(&wire);

    // Streamed: the head has no framing field (not chunked), data is
    // refused, and finish ends it.
    let mut enc = RequestEncoder::default();
    let kind = enc.send_head(connect().body(()).unwrap()).unwrap();
    assert_eq!(kind, BodyKind::Empty);
    assert_eq!(enc.send_data("hello"), Err(UsageError::BodyNotAllowed));
    enc.send_data("").unwrap();
    enc.finish(None).unwrap();
    assert!(enc.is_finished());
    let wire = support::drain(enc.output()).bytes;
    assert_eq!(
        &wire[..],
        b"CONNECT a.test:443 HTTP/1.1\r\nhost: a.test:443\r\n\r\n"
    );
    decodes_as_a_bare_connect(&wire);
}

#[test]
fn the_client_connection_never_frames_a_connect() {
    let mut client = ClientConnection::new(Config::default());
    assert_eq!(
        client
            .sender()
            .send_request(connect().body("hello").unwrap()),
        Err(UsageError::BodyNotAllowed)
    );
    assert_eq!(
        client.sender().send_request(
            connect()
                .header("content-length", "5")
                .body("hello")
                .unwrap()
        ),
        Err(UsageError::InvalidFraming)
    );
    assert_eq!(client.requests_in_flight(), 0);
    assert!(client.output().is_empty());
    // The connection is still usable: a plain CONNECT goes out.
    let kind = client
        .sender()
        .send_head(connect().body(()).unwrap())
        .unwrap();
    assert_eq!(kind, BodyKind::Empty);
    assert_eq!(
        client.sender().send_data("x"),
        Err(UsageError::BodyNotAllowed)
    );
    client.sender().finish(None).unwrap();
    let wire = support::drain(client.output()).bytes;
    decodes_as_a_bare_connect(&wire);
}
