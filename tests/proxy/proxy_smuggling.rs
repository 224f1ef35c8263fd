//! The request-smuggling matrix of `tests/decode/smuggling.rs`, run through the
//! example proxy: nothing h1proto refuses is ever forwarded.
//!
//! Each hostile request stream is sent on its own client connection
//! (then the sending half is shut down). What the proxy must do is derived
//! from a `RequestDecoder` fed the same bytes: every request it completes
//! is forwarded and answered, and its refusal, if any, reaches the client
//! as the error's status. A raw upstream records every byte it gets; those
//! bytes, decoded again, must be exactly the completed requests (method,
//! target, body, trailers), each re-framed by the encoder. The only other
//! thing allowed upstream is the start of the one request whose body was
//! refused after its head had been forwarded, cut off: the proxy then
//! closes that upstream connection, so the upstream never sees it
//! complete, nor anything after it.
//!
//! The responses of the matrix that a client connection refuses are sent
//! by an upstream in the same way: the client gets the proxy's 502, never
//! the bytes.

use h1proto_test_support::proxy as proxy_support;

use std::io::Read;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use h1proto::{ErrorKind, Event, Limits, RequestDecoder, ResponseDecoder};
use http::Method;
use proxy_support::{Client, Upstream, get, start_proxy};

// ------------------------------------------------------------- the inputs

fn req(fields: &[&str]) -> Vec<u8> {
    req_v("HTTP/1.1", fields)
}

fn req_v(version: &str, fields: &[&str]) -> Vec<u8> {
    let mut s = format!("POST /upload {version}\r\nHost: example.com\r\n").into_bytes();
    for f in fields {
        s.extend_from_slice(f.as_bytes());
        s.extend_from_slice(b"\r\n");
    }
    s.extend_from_slice(b"\r\n");
    s
}

fn with_body(mut head: Vec<u8>, body: &str) -> Vec<u8> {
    head.extend_from_slice(body.as_bytes());
    head
}

fn chunked(body: &[u8]) -> Vec<u8> {
    let mut s = req(&["Transfer-Encoding: chunked"]);
    s.extend_from_slice(body);
    s
}

/// The request streams of `tests/decode/smuggling.rs`, rule by rule: the
/// refused ones and the accepted ones beside them.
fn request_cases() -> Vec<(&'static str, Vec<u8>)> {
    let mut cases: Vec<(&'static str, Vec<u8>)> = Vec::new();
    let smuggled = "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: example.com\r\n\r\n";
    cases.push((
        "CL-TE",
        with_body(
            req(&["Content-Length: 6", "Transfer-Encoding: chunked"]),
            smuggled,
        ),
    ));
    cases.push((
        "TE-CL",
        with_body(
            req(&["Transfer-Encoding: chunked", "Content-Length: 4"]),
            "5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n",
        ),
    ));
    for te in [
        "xchunked",
        "identity",
        "chunked, identity",
        "gzip",
        "",
        "chunked;x=1",
    ] {
        let te = format!("Transfer-Encoding: {te}");
        cases.push(("CL-ANY-TE", req(&["Content-Length: 5", &te])));
    }
    for te in [
        "xchunked",
        "chunkedx",
        "chunked, identity",
        "identity",
        "chunked;ext=1",
        "\"chunked\"",
        "chunked\u{ff}",
    ] {
        let te = format!("Transfer-Encoding: {te}");
        cases.push(("TE-NOT-CHUNKED", with_body(req(&[&te]), "0\r\n\r\n")));
    }
    for fields in [
        &["Transfer-Encoding: chunked, chunked"][..],
        &["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"],
        &["Transfer-Encoding: chunked,chunked"],
        &["Transfer-Encoding:"],
        &["Transfer-Encoding: ,"],
        &["Transfer-Encoding: gzip, chunked"],
        &["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"],
    ] {
        cases.push(("TE-LIST", with_body(req(fields), "0\r\n\r\n")));
    }
    cases.push((
        "TE-HTTP10",
        with_body(
            req_v("HTTP/1.0", &["Transfer-Encoding: chunked"]),
            "0\r\n\r\n",
        ),
    ));
    cases.push((
        "TE-HTTP10",
        req_v(
            "HTTP/1.0",
            &["Content-Length: 1", "Transfer-Encoding: identity"],
        ),
    ));
    for line in [
        "Transfer-Encoding:  chunked",
        "Transfer-Encoding:\tchunked",
        "Transfer-Encoding: chunked \t",
        "transfer-encoding: CHUNKED",
    ] {
        cases.push(("TE-OWS", with_body(req(&[line]), "1\r\na\r\n0\r\n\r\n")));
        cases.push(("TE-OWS", req(&[line, "Content-Length: 3"])));
    }
    for line in [
        "Transfer-Encoding: \x0bchunked",
        "Transfer-Encoding: \x0cchunked",
        "Transfer-Encoding: chunked\x0b",
        "Transfer-Encoding: \0chunked",
        "Transfer-Encoding: chun\rked",
        "Transfer-Encoding : chunked",
        "Transfer-Encoding\t: chunked",
        "Transfer\x00Encoding: chunked",
        "Transfer Encoding: chunked",
    ] {
        cases.push(("TE-NAME-VALUE", req(&[line])));
    }
    cases.push((
        "TE-LOOKALIKE",
        with_body(
            req(&["Transfer_Encoding: chunked"]),
            "5\r\nhello\r\n0\r\n\r\n",
        ),
    ));
    cases.push((
        "TE-LOOKALIKE",
        with_body(
            req(&["Transfer_Encoding: chunked", "Content-Length: 5"]),
            "hello",
        ),
    ));
    for fields in [
        &["Transfer-Encoding:", " chunked"][..],
        &["X-Pad: a", " Transfer-Encoding: chunked"],
        &["X-Pad: a", "\tTransfer-Encoding: chunked"],
        &["X-A: one", " two"],
    ] {
        cases.push(("OBS-FOLD", req(fields)));
    }
    cases.push(("OBS-FOLD", b"GET / HTTP/1.1\r\n Host: a\r\n\r\n".to_vec()));
    for fields in [
        &["Content-Length: 5", "Content-Length: 5"][..],
        &["Content-Length: 5", "Content-Length: 6"],
        &["Content-Length: 5", "X: y", "content-length: 5"],
    ] {
        cases.push(("CL-DUPLICATE", with_body(req(fields), "hello")));
    }
    for v in [
        "5, 5",
        "5,5",
        "5, 6",
        "5,",
        ",5",
        ", 5",
        "+5",
        "-5",
        "5 5",
        "5\t5",
        "0x5",
        "5.0",
        "5e0",
        "",
        "five",
        "18446744073709551616",
        "\u{b3}",
        "\x0b5",
    ] {
        let cl = format!("Content-Length: {v}");
        cases.push(("CL-DIGITS", with_body(req(&[&cl]), "hello")));
    }
    cases.push((
        "CL-VALID",
        with_body(req(&["Content-Length: 005"]), "hello"),
    ));
    cases.push((
        "CL-VALID",
        with_body(req(&["Content-Length: \t 5 \t"]), "hello"),
    ));
    cases.push(("CL-VALID", req(&["Content-Length: 18446744073709551615"])));
    cases.push((
        "NO-FRAMING",
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
    ));
    cases.push(("WS-COLON", req(&["Content-Length : 5"])));
    cases.push(("WS-COLON", b"GET / HTTP/1.1\r\nHost : a\r\n\r\n".to_vec()));
    for fields in [
        &["X-A: a\rb"][..],
        &["X-A: a\r", "Content-Length: 5"],
        &["X-A: a\rContent-Length: 5"],
    ] {
        cases.push(("BARE-CR", req(fields)));
    }
    for raw in [
        &b"GET /a\rb HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"GET / HTTP/1.1\rHost: a\r\n\r\n",
        b"GET / HTTP/1.1\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\n\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nX: b\nContent-Length: 5\r\n\r\nhello",
        b"\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
        b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    ] {
        cases.push(("BARE-LF-CR", raw.to_vec()));
    }
    for body in [
        &b"5\nhello\r\n0\r\n\r\n"[..],
        b"5\r\nhello\n0\r\n\r\n",
        b"0\r\n\n",
    ] {
        cases.push(("BARE-LF-CHUNKED", chunked(body)));
    }
    for c in [0u8, 1, 8, 0x0b, 0x0c, 0x1b, 0x1f, 0x7f] {
        let ch = char::from(c);
        cases.push(("CONTROLS", req(&[&format!("X-A: a{ch}b")])));
        cases.push(("CONTROLS", req(&[&format!("X{ch}A: b")])));
        cases.push((
            "CONTROLS",
            format!("GET /a{ch}b HTTP/1.1\r\nHost: a\r\n\r\n").into_bytes(),
        ));
        cases.push((
            "CONTROLS",
            format!("G{ch}T / HTTP/1.1\r\nHost: a\r\n\r\n").into_bytes(),
        ));
    }
    cases.push((
        "OBS-TEXT",
        b"GET / HTTP/1.1\r\nHost: a\r\nX: \x80\xff\r\n\r\n".to_vec(),
    ));
    for raw in [
        &b"GET / HTTP/1.1\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.0\r\n\r\n",
    ] {
        cases.push(("HOST", raw.to_vec()));
    }
    for size in [
        "0x5",
        "+5",
        "-5",
        " 5",
        "\t5",
        "",
        "g",
        "10000000000000000",
        "fffffffffffffffff",
        "5 ",
        "5\t",
        "5 5",
        "5 x",
    ] {
        let body = format!("{size}\r\nhello\r\n0\r\n\r\n");
        cases.push(("CHUNK-SIZE", chunked(body.as_bytes())));
    }
    cases.push(("CHUNK-SIZE", chunked(b"ffffffffffffffff\r\nab")));
    cases.push((
        "CHUNK-SIZE",
        chunked(b"00000000000000000005\r\nhello\r\n0\r\n\r\n"),
    ));
    for tail in ["XX", "\rX", "\n\r", " \r\n", "\r\r\n", "0\r\n"] {
        let body = format!("5\r\nhello{tail}0\r\n\r\n");
        cases.push(("CHUNK-CRLF", chunked(body.as_bytes())));
    }
    cases.push((
        "CHUNK-CRLF",
        chunked(b"1\r\nAB\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"),
    ));
    let ext = "a".repeat(5000);
    cases.push((
        "CHUNK-EXT",
        chunked(format!("5;{ext}\r\nhello\r\n0\r\n\r\n").as_bytes()),
    ));
    for body in [
        &b"5;a=\"x\ny\"\r\nhello\r\n0\r\n\r\n"[..],
        b"5;a=\"x\r\ny\"\r\nhello\r\n0\r\n\r\n",
        b"5;a=\"x\0y\"\r\nhello\r\n0\r\n\r\n",
        b"5;\r\nhello\r\n0\r\n\r\n",
        b"5;a=\r\nhello\r\n0\r\n\r\n",
        b"5;a b\r\nhello\r\n0\r\n\r\n",
        b"5 ; a = \"q\\\"\" ; b\r\nhello\r\n0;z\r\n\r\n",
    ] {
        cases.push(("CHUNK-EXT", chunked(body)));
    }
    for field in [
        "Content-Length: 5",
        "Transfer-Encoding: chunked",
        "Host: evil.example",
        "Trailer: X",
        "Connection: close",
        "TE: trailers",
        "Upgrade: h2c",
        "Expect: 100-continue",
        "Content-Type: text/html",
        "Authorization: Basic YTpi",
        "Cookie: a=b",
        "Set-Cookie: a=b",
    ] {
        let body = format!("5\r\nhello\r\n0\r\n{field}\r\n\r\n");
        cases.push(("TRAILER-FIELDS", chunked(body.as_bytes())));
    }
    for body in [
        &b"5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n"[..],
        b"0\r\nX-A: a\r\n b\r\n\r\n",
        b"0\r\nX-A : a\r\n\r\n",
        b"0\r\nX-A: a\n\r\n",
        b"0\r\nX-A: a\0\r\n\r\n",
        b"0\r\nX-A\r\n\r\n",
    ] {
        cases.push(("TRAILER-LINES", chunked(body)));
    }
    for raw in [
        &b"GET / HTTP/1.10\r\nHost: a\r\n\r\n"[..],
        b"GET / HTTP/1.1.1\r\nHost: a\r\n\r\n",
        b"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
        b"GET / HTTP/0.9\r\nHost: a\r\n\r\n",
        b"GET / http/1.1\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
        b"GET /\r\n\r\n",
        b"GET / HTTP/1.2\r\nHost: a\r\n\r\n",
        b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET / extra HTTP/1.1\r\nHost: a\r\n\r\n",
        b" GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    ] {
        cases.push(("VERSION-LINE", raw.to_vec()));
    }
    cases.push((
        "CLOSE-STOPS",
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n"
            .to_vec(),
    ));
    let limits = Limits::default();
    cases.push((
        "LIMITS",
        format!(
            "GET /{} HTTP/1.1\r\nHost: a\r\n\r\n",
            "a".repeat(limits.max_target_bytes)
        )
        .into_bytes(),
    ));
    cases.push((
        "LIMITS",
        format!(
            "GET / HTTP/1.1\r\nHost: a\r\nX: {}\r\n\r\n",
            "a".repeat(limits.max_head_bytes)
        )
        .into_bytes(),
    ));
    let many: Vec<String> = (0..=limits.max_fields)
        .map(|i| format!("X-{i}: v"))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    cases.push(("LIMITS", req(&many)));
    let trailer = format!("0\r\nX: {}\r\n\r\n", "a".repeat(limits.max_trailer_bytes));
    cases.push(("LIMITS", chunked(trailer.as_bytes())));
    cases
}

/// The responses of `tests/decode/smuggling.rs` that a client connection refuses.
fn refused_responses() -> Vec<&'static [u8]> {
    vec![
        b"HTTP/1.1 200 OK\r\n X: a\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n 6\r\n\r\nhello6",
        b"HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello",
        b"HTTP/1.1 200 O\rK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n",
        b"HTTP/2.0 200 OK\r\n\r\n",
        b"HTTP/1.10 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
        b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: evil\r\n\r\nraw",
    ]
}

// ------------------------------------------------------------ the harness

/// A request as the tests compare it.
#[derive(Debug, Clone, PartialEq)]
struct Msg {
    method: String,
    target: String,
    body: Vec<u8>,
    trailers: Vec<String>,
}

/// What a request decoder makes of a stream that ends: the requests it
/// completed, the one it had a head of when it stopped (if any), and its
/// error.
#[derive(Debug, Default)]
struct Decoded {
    complete: Vec<Msg>,
    started: Option<Msg>,
    error: Option<(ErrorKind, u16)>,
}

fn decode_requests(raw: &[u8]) -> Decoded {
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::from(raw);
    let mut out = Decoded::default();
    let mut eof = false;
    loop {
        let event = if eof {
            dec.decode_eof(&mut buf)
        } else {
            dec.decode(&mut buf)
        };
        match event {
            Ok(Some(Event::Head { head, .. })) => {
                out.started = Some(Msg {
                    method: head.method().to_string(),
                    target: head.uri().to_string(),
                    body: Vec::new(),
                    trailers: Vec::new(),
                });
            }
            Ok(Some(Event::Data(d))) => {
                out.started.as_mut().unwrap().body.extend_from_slice(&d);
            }
            Ok(Some(Event::Trailers(t))) => {
                out.started.as_mut().unwrap().trailers = t.keys().map(|k| k.to_string()).collect();
            }
            Ok(Some(Event::End(_))) => out.complete.push(out.started.take().unwrap()),
            Ok(Some(_)) => {}
            Ok(None) if eof => return out,
            Ok(None) => eof = true,
            Err(e) => {
                out.error = Some((e.kind(), e.status().as_u16()));
                return out;
            }
        }
    }
}

/// Reads the proxy's responses until it closes: their statuses.
fn statuses(client: &mut Client, methods: &[Method]) -> Vec<u16> {
    let mut raw = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 16 * 1024];
    while Instant::now() < deadline {
        match client.stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let mut dec = ResponseDecoder::new(Limits::default());
    for m in methods {
        dec.expect_response_to(m);
    }
    let mut buf = BytesMut::from(&raw[..]);
    let mut out = Vec::new();
    while let Ok(Some(event)) = dec.decode(&mut buf) {
        if let Event::Head { head, .. } = event {
            out.push(head.status().as_u16());
        }
    }
    out
}

#[test]
fn nothing_h1proto_refuses_reaches_the_upstream() {
    run_request_matrix(Duration::ZERO);
}

/// The same, with an upstream that takes each connection from its accept
/// queue late, as a loaded machine may run its accepting thread: a
/// request cut off upstream (its body refused after its head went up) is
/// then accepted after its client got the refusal, and must still count
/// for its own case, not as an unfinished request of the next one.
#[test]
fn nothing_h1proto_refuses_reaches_an_upstream_that_accepts_late() {
    run_request_matrix(Duration::from_millis(20));
}

/// Sends every request stream of the matrix through the proxy, to an
/// upstream that counts each accepted connection `lag` after `accept`
/// returned it, and checks what the client and the upstream got.
fn run_request_matrix(lag: Duration) {
    // One request per upstream connection, read to its end: each case's
    // connections are closed, and what they carried is known whole, when
    // the case is over. They are told apart from the next case's by
    // number: the proxy counts those it opened, and the upstream must have
    // accepted as many, since its accepting thread may take a connection
    // from the accept queue only after the proxy closed it and answered
    // the client.
    let upstream = Upstream::start_lagging(lag, |conn| {
        if conn.read_request().is_some() {
            conn.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
            // Anything the proxy still sent on this connection is recorded.
            conn.wait_for_close();
        }
    });
    let proxy = start_proxy(upstream.addr);
    let cases = request_cases();
    let mut refused = 0;
    for (rule, raw) in &cases {
        let shown = String::from_utf8_lossy(raw);
        let shown = &shown[..shown.len().min(200)];
        let expected = decode_requests(raw);
        refused += usize::from(expected.error.is_some() || expected.started.is_some());
        let before = upstream.accepted();

        let mut client = Client::connect(proxy.addr);
        client.send(raw);
        client.shutdown_write();
        let mut methods: Vec<Method> = expected
            .complete
            .iter()
            .map(|m| m.method.parse().unwrap())
            .collect();
        methods.push(Method::GET);
        let got = statuses(&mut client, &methods);
        assert!(
            upstream.wait_settled(proxy.proxy.pool.opened()),
            "{rule} {shown:?}: an upstream connection stayed open"
        );

        // The client: each completed request answered, then the refusal
        // (a stream that ends inside a request is refused with 400).
        let mut want = vec![200; expected.complete.len()];
        match (expected.error, &expected.started) {
            (Some((_, status)), _) => want.push(status),
            (None, Some(_)) => want.push(400),
            (None, None) => {}
        }
        assert_eq!(got, want, "{rule} {shown:?}");

        // The upstream: the completed requests, and at most the cut-off
        // start of the refused one.
        let mut forwarded = Vec::new();
        let mut cut = 0;
        for conn in &upstream.received()[before..] {
            let seen = decode_requests(conn);
            match seen.error {
                None => {}
                // A request cut off inside its body when the client's was
                // refused.
                Some((ErrorKind::UnexpectedEof, _)) if seen.started.is_some() => {}
                Some((kind, _)) => {
                    let conn = String::from_utf8_lossy(conn);
                    panic!(
                        "{rule} {shown:?}: the proxy sent what h1proto refuses ({kind:?}): {conn:?}"
                    );
                }
            }
            forwarded.extend(seen.complete);
            if let Some(partial) = seen.started {
                cut += 1;
                let failed = expected.started.as_ref();
                assert!(
                    failed
                        .is_some_and(|f| f.method == partial.method && f.target == partial.target),
                    "{rule} {shown:?}: an unfinished request went up: {partial:?}"
                );
            }
        }
        assert_eq!(forwarded, expected.complete, "{rule} {shown:?}");
        assert!(cut <= 1, "{rule} {shown:?}");
    }
    // The matrix is mostly refusals.
    assert!(
        refused * 4 > cases.len() * 3,
        "{refused} of {}",
        cases.len()
    );
}

#[test]
fn responses_h1proto_refuses_never_reach_the_client() {
    let replies = refused_responses();
    let served = replies.clone();
    let upstream = Upstream::start(move |conn| {
        if let Some(req) = conn.read_request() {
            let n: usize = req.head.uri().path()[1..].parse().unwrap();
            conn.write(served[n]);
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    for (n, reply) in replies.iter().enumerate() {
        let got = client.request(&Method::GET, &get(&format!("/{n}")));
        let shown = String::from_utf8_lossy(reply);
        assert_eq!(got.status(), 502, "{shown:?}: {}", got.raw);
        assert_eq!(got.header("content-type"), Some("text/plain"), "{shown:?}");
        assert!(
            got.raw.starts_with("HTTP/1.1 502 Bad Gateway\r\n"),
            "{}",
            got.raw
        );
    }
    assert_eq!(upstream.accepted(), replies.len());
}
