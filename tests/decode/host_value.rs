//! A request's `Host` value must be `uri-host [ ":" port ]` (RFC 9112
//! section 3.2, RFC 3986 section 3.2.2): anything else is refused with
//! 400, at the `Host` line, whatever the reads; a connection answers it
//! and closes; a client refuses to send one.

use bytes::{Buf, BytesMut};
use h1proto::{
    ClientConnection, Config, EncoderConfig, Error, ErrorKind, Event, Limits, RequestDecoder,
    RequestEncoder, ServerConnection, UsageError,
};

/// Values a server must refuse.
const INVALID: &[&[u8]] = &[
    b"###",
    b"exa mple.com",
    b"ex@mple",
    b"a/b",
    b"a?b",
    b"a\\b",
    b"caf\xc3\xa9.example",
    b"\x80",
    b"example.com:8o",
    b"[::1",
    b"ex%zz",
    b":80",
];

/// Values a server must take.
const VALID: &[&str] = &[
    "example.com:80",
    "[::1]:80",
    "ex%41mple",
    "a-b_c~d",
    "127.0.0.1",
    "example.com",
];

/// A valid request, then one whose `Host` (after another field) is
/// `host`; and where that `Host` line starts in the stream.
fn second_request(version: &str, host: &[u8]) -> (Vec<u8>, u64) {
    let mut raw = b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\n".to_vec();
    raw.extend_from_slice(format!("GET /2 {version}\r\nX-A: b\r\n").as_bytes());
    let at = raw.len() as u64;
    raw.extend_from_slice(b"Host: ");
    raw.extend_from_slice(host);
    raw.extend_from_slice(b"\r\n\r\n");
    (raw, at)
}

/// Feeds `raw` cut at `cuts`; returns the hosts of the heads decoded, and
/// the error if one came.
fn decode_cut(raw: &[u8], cuts: &[usize]) -> (Vec<Vec<u8>>, Option<Error>) {
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::new();
    let mut hosts = Vec::new();
    let mut from = 0;
    for to in cuts.iter().copied().chain([raw.len()]) {
        buf.extend_from_slice(&raw[from..to]);
        from = to;
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(Event::Head { head, .. })) => {
                    let host = head.headers().get("host").map(|h| h.as_bytes().to_vec());
                    hosts.push(host.unwrap_or_default());
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(err) => return (hosts, Some(err)),
            }
        }
    }
    (hosts, None)
}

/// The outcome of `raw`, the same whole, at every split and byte by byte.
fn decode(raw: &[u8]) -> (Vec<Vec<u8>>, Option<Error>) {
    let whole = decode_cut(raw, &[]);
    for at in 1..raw.len() {
        assert_eq!(decode_cut(raw, &[at]), whole, "split at {at}");
    }
    let bytes: Vec<usize> = (1..raw.len()).collect();
    assert_eq!(decode_cut(raw, &bytes), whole, "byte by byte");
    whole
}

#[test]
fn the_decoder_refuses_an_invalid_host_at_its_line() {
    for version in ["HTTP/1.1", "HTTP/1.0"] {
        for &host in INVALID {
            let (raw, at) = second_request(version, host);
            let (hosts, err) = decode(&raw);
            let what = format!("{version} {}", host.escape_ascii());
            assert_eq!(hosts, [b"a".to_vec()], "{what}: the first request passes");
            let err = err.unwrap_or_else(|| panic!("{what}: accepted"));
            assert_eq!(err.kind(), ErrorKind::InvalidHostValue, "{what}");
            assert_eq!(err.status(), 400, "{what}");
            assert_eq!(err.offset(), Some(at), "{what}");
            assert_eq!(err.field(), Some(&b"Host"[..]), "{what}");
        }
    }
}

#[test]
fn the_decoder_takes_a_valid_host_as_it_came() {
    for host in VALID {
        let (raw, _) = second_request("HTTP/1.1", host.as_bytes());
        let (hosts, err) = decode(&raw);
        assert_eq!(err, None, "{host}");
        assert_eq!(hosts, [b"a".to_vec(), host.as_bytes().to_vec()]);
    }
}

#[test]
fn a_host_value_kept_from_earlier_requests_still_has_its_tail_checked() {
    // From the third request on, the decoder keeps `a` as the `Host`
    // value seen before and takes a repeat of it as valid: a value that
    // only starts with it is checked whole.
    let mut raw = b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\n".repeat(3);
    let (hosts, err) = decode(&raw);
    assert_eq!((hosts.len(), err), (3, None));
    for tail in [&b"/b"[..], b" b", b"@", b"%zz", b":8o", b"]"] {
        let at = raw.len() as u64 + 17;
        let mut bad = raw.clone();
        bad.extend_from_slice(b"GET /4 HTTP/1.1\r\nHost: a");
        bad.extend_from_slice(tail);
        bad.extend_from_slice(b"\r\n\r\n");
        let (hosts, err) = decode(&bad);
        let what = tail.escape_ascii().to_string();
        assert_eq!(hosts.len(), 3, "{what}");
        let err = err.unwrap_or_else(|| panic!("{what}: accepted"));
        assert_eq!(err.kind(), ErrorKind::InvalidHostValue, "{what}");
        assert_eq!(err.offset(), Some(at), "{what}");
    }
    raw.extend_from_slice(b"GET /4 HTTP/1.1\r\nHost: a:80\r\n\r\n");
    assert_eq!(decode(&raw).1, None);
}

#[test]
fn an_empty_host_is_refused() {
    // The target URI built from it would be an `http` URI with an empty
    // host, which RFC 9110 section 4.2.1 tells a recipient to reject.
    for raw in [
        &b"GET / HTTP/1.1\r\nHost:\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: \t \r\n\r\n",
        b"GET / HTTP/1.0\r\nHost: \r\n\r\n",
        b"OPTIONS * HTTP/1.1\r\nHost:\r\n\r\n",
        b"GET http://example.com/ HTTP/1.1\r\nHost:\r\n\r\n",
    ] {
        let (hosts, err) = decode(raw);
        assert!(hosts.is_empty());
        let err = err.expect("refused");
        assert_eq!(err.kind(), ErrorKind::InvalidHostValue);
        assert_eq!(
            err.offset(),
            Some(raw.iter().position(|&b| b == b'\n').unwrap() as u64 + 1)
        );
    }
}

#[test]
fn missing_and_repeated_hosts_keep_their_own_error() {
    let (_, err) = decode(b"GET / HTTP/1.1\r\nHost: a\r\nHost: ###\r\n\r\n");
    assert_eq!(err.unwrap().kind(), ErrorKind::InvalidHost);
    let (_, err) = decode(b"GET / HTTP/1.1\r\nX: y\r\n\r\n");
    assert_eq!(err.unwrap().kind(), ErrorKind::InvalidHost);
    // HTTP/1.0 needs none.
    let (_, err) = decode(b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(err, None);
}

#[test]
fn a_connection_answers_400_and_closes() {
    for &host in INVALID {
        let (raw, _) = second_request("HTTP/1.1", host);
        let mut server = ServerConnection::new(Config::default());
        let mut buf = BytesMut::from(&raw[..]);
        let err = loop {
            match server.poll_event(&mut buf) {
                Ok(Some(Event::End(_))) => server
                    .sender()
                    .send_response(http::Response::new("ok"))
                    .unwrap(),
                Ok(Some(_)) => {}
                Ok(None) => panic!("{}: accepted", host.escape_ascii()),
                Err(err) => break err,
            }
        };
        assert_eq!(err.kind(), ErrorKind::InvalidHostValue);
        server.send_error_response(&err).unwrap();
        assert!(server.is_closed());
        let out = server.output();
        let wire = out.copy_to_bytes(out.remaining());
        let wire = String::from_utf8_lossy(&wire);
        let (first, second) = wire.split_at(wire.find("HTTP/1.1 400 ").expect("a 400"));
        assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{wire}");
        assert!(second.contains("\r\nconnection: close\r\n"), "{wire}");
        // The body does not read as another response to a tool that scans
        // for a status line after an empty line.
        let body = &second[second.find("\r\n\r\n").unwrap() + 4..];
        assert!(!body.starts_with("HTTP/"), "{body}");
        assert!(body.contains("Host"), "{body}");
    }
}

#[test]
fn a_client_refuses_to_send_an_invalid_host() {
    for &host in INVALID {
        let Ok(value) = http::HeaderValue::from_bytes(host) else {
            continue; // `http` refuses it already
        };
        let mut req = http::Request::new("");
        req.headers_mut().insert("host", value.clone());
        let mut enc = RequestEncoder::new(EncoderConfig::default());
        assert_eq!(enc.send_request(req), Err(UsageError::InvalidHead));
        assert_eq!(enc.output().remaining(), 0, "nothing queued");
        // HTTP/1.0 too, and through a connection, streamed or whole.
        let mut conn = ClientConnection::new(Config::default());
        let head = http::Request::get("/")
            .version(http::Version::HTTP_10)
            .header("host", value.clone())
            .header("content-length", "0")
            .body(())
            .unwrap();
        assert_eq!(conn.sender().send_head(head), Err(UsageError::InvalidHead));
        let whole = http::Request::get("/").header("host", value).body("");
        assert_eq!(
            conn.sender().send_request(whole.unwrap()),
            Err(UsageError::InvalidHead)
        );
        assert_eq!(conn.output().remaining(), 0);
        // The connection is still usable.
        let good = http::Request::get("/").header("host", "a").body("");
        conn.sender().send_request(good.unwrap()).unwrap();
    }
}

#[test]
fn a_client_sends_valid_hosts_and_the_server_reads_them_back() {
    for host in VALID {
        let mut enc = RequestEncoder::new(EncoderConfig::default());
        let req = http::Request::get("/").header("host", *host).body("");
        enc.send_request(req.unwrap()).unwrap();
        let out = enc.output();
        let wire = out.copy_to_bytes(out.remaining());
        let (hosts, err) = decode(&wire);
        assert_eq!(err, None);
        assert_eq!(hosts, [host.as_bytes().to_vec()]);
        // From the URI's authority, with userinfo left out.
        let mut enc = RequestEncoder::new(EncoderConfig::default());
        let Ok(uri) = http::Uri::try_from(format!("http://user@{host}/x")) else {
            // `http` takes no `%` in an authority.
            assert_eq!(*host, "ex%41mple");
            continue;
        };
        enc.send_request(http::Request::get(uri).body("").unwrap())
            .unwrap();
        let out = enc.output();
        let wire = out.copy_to_bytes(out.remaining());
        let (hosts, err) = decode(&wire);
        assert_eq!(err, None);
        assert_eq!(hosts, [host.as_bytes().to_vec()]);
    }
}
