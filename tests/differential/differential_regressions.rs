//! Minimized disagreements of the differential campaign
//! (`scripts/differential.sh`) that the corpus format's reference checker
//! cannot express, replayed without Python; the others are in
//! `tests/corpus/differential.jsonl`, and the CONNECT ones in
//! `tests/conn/connect_framing.rs`. Each case is decoded whole and split at every
//! byte boundary; `docs/security.md` records the decisions.

use bytes::BytesMut;
use h1proto::{ErrorKind, Event, Limits, RequestDecoder, ResponseDecoder};
use http::Method;

/// What a decoder made of an input: (start line, body, verdict) per
/// message, interim responses included, and the error if any.
type Outcome = (Vec<(String, Vec<u8>, bool)>, Option<ErrorKind>);

fn decode_request(raw: &[u8], cuts: &[usize]) -> Outcome {
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&raw.len())) {
        buf.extend_from_slice(&raw[from..to]);
        from = to;
        loop {
            match dec.decode(&mut buf) {
                Ok(None) => break,
                Ok(Some(Event::Head { head, .. })) => {
                    out.push((
                        format!("{} {}", head.method(), head.uri()),
                        Vec::new(),
                        true,
                    ));
                }
                Ok(Some(Event::Data(d))) => out.last_mut().unwrap().1.extend(&d),
                Ok(Some(Event::End(v))) => out.last_mut().unwrap().2 = v.is_reusable(),
                Ok(Some(_)) => {}
                Err(e) => return (out, Some(e.kind())),
            }
        }
    }
    (out, None)
}

fn decode_response(raw: &[u8], cuts: &[usize]) -> Outcome {
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.expect_response_to(&Method::GET);
    dec.expect_response_to(&Method::GET);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&raw.len())) {
        buf.extend_from_slice(&raw[from..to]);
        from = to;
        loop {
            match dec.decode(&mut buf) {
                Ok(None) => break,
                Ok(Some(Event::Head { head, .. })) => {
                    out.push((head.status().as_str().to_owned(), Vec::new(), true));
                }
                Ok(Some(Event::Interim(head))) => {
                    out.push((head.status().as_str().to_owned(), Vec::new(), true));
                }
                Ok(Some(Event::Data(d))) => out.last_mut().unwrap().1.extend(&d),
                Ok(Some(Event::End(v))) => out.last_mut().unwrap().2 = v.is_reusable(),
                Ok(Some(_)) => {}
                Err(e) => return (out, Some(e.kind())),
            }
        }
    }
    (out, None)
}

/// The outcome fed whole, checked to be the same at every split point.
fn every_way(decode: fn(&[u8], &[usize]) -> Outcome, raw: &[u8]) -> Outcome {
    let whole = decode(raw, &[]);
    for at in 1..raw.len() {
        assert_eq!(decode(raw, &[at]), whole, "split at {at}");
    }
    whole
}

fn refused(raw: &[u8], kind: ErrorKind) {
    let (_, error) = every_way(decode_request, raw);
    assert_eq!(error, Some(kind), "{:?}", String::from_utf8_lossy(raw));
}

#[test]
fn asterisk_form_is_only_for_options() {
    // RFC 9112 section 3.2.4. llhttp and h11 accept it for any method.
    refused(
        b"POST * HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\n\r\n",
        ErrorKind::InvalidTarget,
    );
    let (messages, error) = every_way(
        decode_request,
        b"OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n",
    );
    assert_eq!(error, None);
    assert_eq!(messages.len(), 1);
}

#[test]
fn a_target_has_no_fragment() {
    // RFC 9112 section 3.2.3, RFC 9110 section 7.1.
    refused(
        b"GET /a#f HTTP/1.1\r\nHost: a.test\r\n\r\n",
        ErrorKind::InvalidTarget,
    );
}

#[test]
fn a_trailer_cannot_carry_framing() {
    // RFC 9110 section 6.5.1: refused, not dropped. h11 accepts it.
    refused(
        b"POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nContent-Length: 5\r\n\r\n",
        ErrorKind::InvalidTrailer,
    );
}

#[test]
fn an_empty_line_after_a_message_is_skipped() {
    // RFC 9112 section 2.2: the CRLF a server may skip before a
    // request-line is skipped after a message too (llhttp agrees, h11
    // refuses it); what follows is decoded as usual.
    let raw = b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n\r\nGET /2 HTTP/1.1\r\nHost: a.test\r\n\r\n";
    let (messages, error) = every_way(decode_request, raw);
    assert_eq!(error, None);
    let starts: Vec<&str> = messages.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(starts, ["GET /", "GET /2"]);
}

#[test]
fn an_http10_interim_response_keeps_the_connection_for_the_final_one() {
    // RFC 9110 section 15.2: the final response follows on the same
    // connection; llhttp gives the HTTP/1.0 1xx a verdict to close.
    let raw = b"HTTP/1.0 103 Early Hints\r\n\r\nHTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nz";
    let (messages, error) = every_way(decode_response, raw);
    assert_eq!(error, None);
    assert_eq!(
        messages,
        vec![
            ("103".to_owned(), Vec::new(), true),
            ("200".to_owned(), b"z".to_vec(), true)
        ]
    );
}

#[test]
fn a_response_with_te_and_cl_is_read_chunked_and_closes() {
    // RFC 9112 section 6.3 item 3: Transfer-Encoding wins, and the
    // connection is not reused (h11 reuses it; llhttp refuses it).
    let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n1\r\na\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz";
    let (messages, error) = every_way(decode_response, raw);
    assert_eq!(error, None);
    assert_eq!(messages, vec![("200".to_owned(), b"a".to_vec(), false)]);
}

#[test]
fn a_higher_minor_version_is_read_as_http11() {
    // RFC 9110 section 2.5 (h11 agrees; strict llhttp refuses HTTP/1.9).
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::from(&b"GET / HTTP/1.9\r\nHost: a.test\r\n\r\n"[..]);
    let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
        panic!("no head")
    };
    assert_eq!(head.version(), http::Version::HTTP_11);
}

#[test]
fn connect_takes_host_and_port_only() {
    // RFC 9112 section 3.2.3 (llhttp and h11 accept `CONNECT g`).
    refused(
        b"CONNECT g HTTP/1.1\r\nHost: g\r\n\r\n",
        ErrorKind::InvalidTarget,
    );
}

#[test]
fn status_codes_start_at_100() {
    // RFC 9110 section 15: valid codes are 100 to 599 (llhttp accepts 099
    // and 000). Codes 600 to 999 are accepted, as the `http` crate holds them.
    for code in ["099", "000"] {
        let raw = format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n");
        let (_, error) = every_way(decode_response, raw.as_bytes());
        assert_eq!(error, Some(ErrorKind::InvalidStatus), "{code}");
    }
}
