//! The request-smuggling matrix: one test per rule of docs/security.md.
//!
//! Every hostile input is fed whole and byte by byte; both runs must give
//! the same events and the same error, whose kind and suggested status are
//! asserted. A smuggling hole is a message two parsers frame differently,
//! so each rule is "refuse" (the connection closes) or "read one way only".

use bytes::BytesMut;
use h1proto::{
    CloseReason, Config, ErrorKind, Event, KeepAlive, Limits, RequestDecoder, ResponseDecoder,
    ServerConnection, framing::BodyKind,
};
use http::Method;

// ---------------------------------------------------------------- harness

/// An event reduced to what these tests compare.
#[derive(Debug, Clone, PartialEq)]
enum Ev {
    Head(String, BodyKind),
    Interim(u16),
    Data(Vec<u8>),
    Trailers(Vec<String>),
    End(KeepAlive),
}

#[derive(Debug, PartialEq)]
struct Run {
    events: Vec<Ev>,
    error: Option<(ErrorKind, u16)>,
    leftover: Vec<u8>,
}

fn push(events: &mut Vec<Ev>, ev: Ev) {
    match (events.last_mut(), ev) {
        (Some(Ev::Data(a)), Ev::Data(b)) => a.extend(b),
        (_, ev) => events.push(ev),
    }
}

fn common<H: h1proto::MessageHead>(ev: Event<H>) -> Ev {
    match ev {
        Event::Data(d) => Ev::Data(d.to_vec()),
        Event::Trailers(t) => Ev::Trailers(t.keys().map(|k| k.to_string()).collect()),
        Event::End(k) => Ev::End(k),
        other => panic!("unexpected event kind {:?}", std::mem::discriminant(&other)),
    }
}

/// Feeds `raw` in pieces of `step` bytes to a request decoder.
fn run_request(raw: &[u8], step: usize, limits: &Limits) -> Run {
    let mut dec = RequestDecoder::new(limits.clone());
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    for piece in raw.chunks(step.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(Event::Head { head, body })) => push(
                    &mut events,
                    Ev::Head(format!("{} {}", head.method(), head.uri()), body),
                ),
                Ok(Some(ev)) => push(&mut events, common(ev)),
                Ok(None) => break,
                Err(e) => {
                    return Run {
                        events,
                        error: Some((e.kind(), e.status().as_u16())),
                        leftover: vec![],
                    };
                }
            }
        }
    }
    Run {
        events,
        error: None,
        leftover: buf.to_vec(),
    }
}

/// Feeds `raw` in pieces of `step` bytes to a response decoder expecting
/// answers to `methods`.
fn run_response(raw: &[u8], step: usize, methods: &[Method]) -> Run {
    let mut dec = ResponseDecoder::new(Limits::default());
    for m in methods {
        dec.expect_response_to(m);
    }
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    for piece in raw.chunks(step.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(Event::Head { head, body })) => push(
                    &mut events,
                    Ev::Head(head.status().as_str().to_owned(), body),
                ),
                Ok(Some(Event::Interim(head))) => {
                    push(&mut events, Ev::Interim(head.status().as_u16()))
                }
                Ok(Some(ev)) => push(&mut events, common(ev)),
                Ok(None) => break,
                Err(e) => {
                    return Run {
                        events,
                        error: Some((e.kind(), e.status().as_u16())),
                        leftover: vec![],
                    };
                }
            }
        }
    }
    Run {
        events,
        error: None,
        leftover: buf.to_vec(),
    }
}

/// Whole and byte by byte must agree; returns the whole run.
fn both(raw: &[u8], run: impl Fn(&[u8], usize) -> Run) -> Run {
    let whole = run(raw, raw.len());
    let bytewise = run(raw, 1);
    assert_eq!(
        whole,
        bytewise,
        "whole and byte-by-byte differ for {:?}",
        String::from_utf8_lossy(raw)
    );
    whole
}

/// The request is refused with `kind` and `status`, and no message of it
/// is completed. Returns the events before the error.
fn refused(raw: &[u8], kind: ErrorKind, status: u16) -> Vec<Ev> {
    refused_with(raw, kind, status, &Limits::default())
}

fn refused_with(raw: &[u8], kind: ErrorKind, status: u16, limits: &Limits) -> Vec<Ev> {
    let run = both(raw, |r, s| run_request(r, s, limits));
    assert_eq!(
        run.error,
        Some((kind, status)),
        "for {:?} (events {:?})",
        String::from_utf8_lossy(raw),
        run.events
    );
    run.events
}

/// The request stream is accepted; returns its events and leftover bytes.
fn accepted(raw: &[u8]) -> Run {
    let run = both(raw, |r, s| run_request(r, s, &Limits::default()));
    assert_eq!(
        run.error,
        None,
        "refused {:?} (events {:?})",
        String::from_utf8_lossy(raw),
        run.events
    );
    run
}

fn response_refused(raw: &[u8], methods: &[Method], kind: ErrorKind) -> Vec<Ev> {
    let run = both(raw, |r, s| run_response(r, s, methods));
    assert_eq!(
        run.error.map(|e| e.0),
        Some(kind),
        "for {:?} (events {:?})",
        String::from_utf8_lossy(raw),
        run.events
    );
    run.events
}

fn response_accepted(raw: &[u8], methods: &[Method]) -> Run {
    let run = both(raw, |r, s| run_response(r, s, methods));
    assert_eq!(
        run.error,
        None,
        "refused {:?}",
        String::from_utf8_lossy(raw)
    );
    run
}

/// A request head with the given field lines (each without its CRLF).
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

/// A chunked request carrying `body` (the chunked coding as sent).
fn chunked(body: &[u8]) -> Vec<u8> {
    let mut s = req(&["Transfer-Encoding: chunked"]);
    s.extend_from_slice(body);
    s
}

use ErrorKind::*;

// ------------------------------------------------------ CL.TE and TE.CL

/// Rule CL-TE: `Content-Length` and `Transfer-Encoding` in one request are
/// refused, whichever comes first (RFC 9112 section 6.1: a server MAY
/// reject; h1proto always does). A front end that uses one and a back end
/// that uses the other is the classic smuggling pair.
#[test]
fn cl_te_is_refused() {
    let raw = with_body(
        req(&["Content-Length: 6", "Transfer-Encoding: chunked"]),
        "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: example.com\r\n\r\n",
    );
    assert!(refused(&raw, ContentLengthWithTransferEncoding, 400).is_empty());
}

#[test]
fn te_cl_is_refused() {
    let raw = with_body(
        req(&["Transfer-Encoding: chunked", "Content-Length: 4"]),
        "5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n",
    );
    assert!(refused(&raw, ContentLengthWithTransferEncoding, 400).is_empty());
}

/// The conflict is refused even when `Transfer-Encoding` is one a front
/// end would not recognise: presence is enough.
#[test]
fn cl_with_any_transfer_encoding_is_refused() {
    for te in [
        "xchunked",
        "identity",
        "chunked, identity",
        "gzip",
        "",
        "chunked;x=1",
    ] {
        let raw = req(&["Content-Length: 5", &format!("Transfer-Encoding: {te}")]);
        refused(&raw, ContentLengthWithTransferEncoding, 400);
    }
}

// ------------------------------------------------- TE.TE obfuscations

/// Rule TE-NOT-CHUNKED: a request whose final transfer coding is not
/// exactly `chunked` cannot be framed (RFC 9112 section 6.3 item 4: the
/// server MUST respond 400 and close).
#[test]
fn te_not_ending_in_chunked_is_refused() {
    for te in [
        "xchunked",
        "chunkedx",
        "chunked, identity",
        "identity",
        "chunked;ext=1",
        "\"chunked\"",
        "chunked\u{ff}",
    ] {
        let raw = with_body(req(&[&format!("Transfer-Encoding: {te}")]), "0\r\n\r\n");
        refused(&raw, InvalidTransferEncoding, 400);
    }
}

/// Rule TE-TWICE: `chunked` applied twice, on one line or two, is refused
/// (RFC 9112 section 7: a sender MUST NOT apply chunked more than once).
#[test]
fn chunked_twice_is_refused() {
    refused(
        &req(&["Transfer-Encoding: chunked, chunked"]),
        InvalidTransferEncoding,
        400,
    );
    refused(
        &req(&["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"]),
        InvalidTransferEncoding,
        400,
    );
    refused(
        &req(&["Transfer-Encoding: chunked,chunked"]),
        InvalidTransferEncoding,
        400,
    );
}

/// Rule TE-EMPTY: an empty `Transfer-Encoding` (or one of only commas)
/// names no coding and is refused.
#[test]
fn empty_te_is_refused() {
    refused(&req(&["Transfer-Encoding:"]), InvalidTransferEncoding, 400);
    refused(
        &req(&["Transfer-Encoding: ,"]),
        InvalidTransferEncoding,
        400,
    );
}

/// Rule TE-OTHER-CODINGS: `gzip, chunked` is framed but carries a coding
/// h1proto does not remove: 501 (RFC 9112 section 6.1).
#[test]
fn other_codings_before_chunked_are_not_implemented() {
    refused(
        &req(&["Transfer-Encoding: gzip, chunked"]),
        UnsupportedTransferCoding,
        501,
    );
    refused(
        &req(&["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"]),
        UnsupportedTransferCoding,
        501,
    );
}

/// Rule TE-HTTP10: `Transfer-Encoding` in an HTTP/1.0 request is refused
/// (RFC 9112 section 6.1: treat as faulty framing, close after).
#[test]
fn te_in_http10_is_refused() {
    let raw = with_body(
        req_v("HTTP/1.0", &["Transfer-Encoding: chunked"]),
        "0\r\n\r\n",
    );
    refused(&raw, TransferEncodingInHttp10, 400);
    // Even when it is not chunked and a Content-Length is there too.
    refused(
        &req_v(
            "HTTP/1.0",
            &["Content-Length: 1", "Transfer-Encoding: identity"],
        ),
        TransferEncodingInHttp10,
        400,
    );
}

/// Rule TE-OWS: leading and trailing spaces or tabs around the value are
/// OWS and belong to no coding (RFC 9110 section 5.5): ` chunked` and
/// `\tchunked` are `chunked`, read the same way by every conforming parser;
/// and the name compares case-insensitively.
#[test]
fn te_value_whitespace_and_case_are_not_obfuscation() {
    for line in [
        "Transfer-Encoding:  chunked",
        "Transfer-Encoding:\tchunked",
        "Transfer-Encoding: chunked \t",
        "transfer-encoding: CHUNKED",
        "TRANSFER-ENCODING: Chunked",
    ] {
        let run = accepted(&with_body(req(&[line]), "1\r\na\r\n0\r\n\r\n"));
        assert_eq!(
            run.events,
            vec![
                Ev::Head("POST /upload".into(), BodyKind::Chunked),
                Ev::Data(b"a".to_vec()),
                Ev::End(KeepAlive::Reusable),
            ],
            "{line}"
        );
        // And with a Content-Length it is the refused conflict.
        refused(
            &req(&[line, "Content-Length: 3"]),
            ContentLengthWithTransferEncoding,
            400,
        );
    }
}

/// Rule TE-CONTROL: a vertical tab, form feed, NUL or bare CR in the value
/// is an invalid field value, not whitespace (RFC 9110 section 5.5).
#[test]
fn te_with_control_characters_is_refused() {
    for line in [
        "Transfer-Encoding: \x0bchunked",
        "Transfer-Encoding: \x0cchunked",
        "Transfer-Encoding: chunked\x0b",
        "Transfer-Encoding: \0chunked",
        "Transfer-Encoding: chun\rked",
    ] {
        refused(&req(&[line]), InvalidFieldValue, 400);
    }
}

/// Rule TE-NAME: `Transfer-Encoding : chunked` (whitespace before the
/// colon) is refused (RFC 9112 section 5.1: MUST reject with 400).
#[test]
fn te_with_space_before_colon_is_refused() {
    refused(
        &req(&["Transfer-Encoding : chunked"]),
        WhitespaceBeforeColon,
        400,
    );
    refused(
        &req(&["Transfer-Encoding\t: chunked"]),
        WhitespaceBeforeColon,
        400,
    );
}

/// Rule TE-LOOKALIKE: `Transfer_Encoding` is a different (valid) field
/// name, never read as `Transfer-Encoding`: the request has no body and
/// what follows is parsed as the next request, where it is refused.
#[test]
fn te_lookalike_names_are_other_fields() {
    let raw = with_body(
        req(&["Transfer_Encoding: chunked"]),
        "5\r\nhello\r\n0\r\n\r\n",
    );
    let events = refused(&raw, InvalidStartLine, 400);
    assert_eq!(
        events,
        vec![
            Ev::Head("POST /upload".into(), BodyKind::Empty),
            Ev::End(KeepAlive::Reusable)
        ]
    );
    // Beside a Content-Length, the Content-Length frames the body.
    let raw = with_body(
        req(&["Transfer_Encoding: chunked", "Content-Length: 5"]),
        "hello",
    );
    assert_eq!(
        accepted(&raw).events[0],
        Ev::Head("POST /upload".into(), BodyKind::Length(5))
    );
    // A name with a control or a space inside is no name at all.
    refused(
        &req(&["Transfer\x00Encoding: chunked"]),
        InvalidFieldName,
        400,
    );
    refused(&req(&["Transfer Encoding: chunked"]), InvalidFieldName, 400);
}

/// Rule TE-FOLD: a `Transfer-Encoding` continued or hidden by obs-fold is
/// refused in a request (RFC 9112 section 5.2).
#[test]
fn te_hidden_by_obs_fold_is_refused() {
    refused(&req(&["Transfer-Encoding:", " chunked"]), ObsFold, 400);
    refused(
        &req(&["X-Pad: a", " Transfer-Encoding: chunked"]),
        ObsFold,
        400,
    );
    refused(
        &req(&["X-Pad: a", "\tTransfer-Encoding: chunked"]),
        ObsFold,
        400,
    );
}

// ------------------------------------------------------- Content-Length

/// Rule CL-DUPLICATE: `Content-Length` on two lines is refused even when
/// the values agree (RFC 9110 section 8.6 allows rejecting; h1proto always
/// does, so no front end can pick a different one).
#[test]
fn duplicate_content_length_is_refused() {
    refused(
        &req(&["Content-Length: 5", "Content-Length: 5"]),
        InvalidContentLength,
        400,
    );
    refused(
        &req(&["Content-Length: 5", "Content-Length: 6"]),
        InvalidContentLength,
        400,
    );
    refused(
        &req(&["Content-Length: 5", "X: y", "content-length: 5"]),
        InvalidContentLength,
        400,
    );
}

/// Rule CL-LIST: a comma list, even of equal values, is refused.
#[test]
fn content_length_lists_are_refused() {
    for v in ["5, 5", "5,5", "5, 6", "5,", ",5", ", 5"] {
        refused(
            &req(&[&format!("Content-Length: {v}")]),
            InvalidContentLength,
            400,
        );
    }
}

/// Rule CL-DIGITS: `Content-Length` is 1*DIGIT: no sign, no inner space,
/// no hex, no decimal point, no overflow of 64 bits (RFC 9110 section 8.6).
#[test]
fn content_length_is_digits_only() {
    for v in [
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
        "99999999999999999999999",
        "\u{b3}",
    ] {
        refused(
            &req(&[&format!("Content-Length: {v}")]),
            InvalidContentLength,
            400,
        );
    }
    refused(&req(&["Content-Length: \x0b5"]), InvalidFieldValue, 400);
}

/// Leading zeros, u64::MAX and OWS around the value are still 1*DIGIT.
#[test]
fn content_length_edges_that_are_valid() {
    let run = accepted(&with_body(req(&["Content-Length: 005"]), "hello"));
    assert_eq!(
        run.events[0],
        Ev::Head("POST /upload".into(), BodyKind::Length(5))
    );
    let run = accepted(&with_body(req(&["Content-Length: \t 5 \t"]), "hello"));
    assert_eq!(
        run.events[0],
        Ev::Head("POST /upload".into(), BodyKind::Length(5))
    );
    let run = accepted(&req(&["Content-Length: 18446744073709551615"]));
    assert_eq!(
        run.events[0],
        Ev::Head("POST /upload".into(), BodyKind::Length(u64::MAX))
    );
}

/// Rule NO-FRAMING: a request with neither field has an empty body (RFC
/// 9112 section 6.3 item 7); bytes after its head are the next request.
#[test]
fn request_without_framing_has_no_body() {
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n";
    let run = accepted(raw);
    assert_eq!(
        run.events,
        vec![
            Ev::Head("GET /".into(), BodyKind::Empty),
            Ev::End(KeepAlive::Reusable),
            Ev::Head("GET /next".into(), BodyKind::Empty),
            Ev::End(KeepAlive::Reusable),
        ]
    );
}

// -------------------------------------------------------- field lines

/// Rule OBS-FOLD: obs-fold in a request head is refused (RFC 9112 section
/// 5.2); in a response it is replaced by one SP.
#[test]
fn obs_fold_in_requests_is_refused() {
    refused(&req(&["X-A: one", " two"]), ObsFold, 400);
    refused(&req(&["X-A: one", "\ttwo"]), ObsFold, 400);
    refused(b"GET / HTTP/1.1\r\n Host: a\r\n\r\n", ObsFold, 400);
}

#[test]
fn obs_fold_in_responses_is_one_space() {
    let raw = b"HTTP/1.1 200 OK\r\nX-A: one\r\n  two\r\nContent-Length: 0\r\n\r\n";
    let mut dec = ResponseDecoder::new(Limits::default());
    let mut buf = BytesMut::from(&raw[..]);
    let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
        panic!("no head")
    };
    assert_eq!(head.headers()["x-a"], "one two");
    response_accepted(raw, &[Method::GET]);
    // A fold cannot smuggle a framing field into a response either: it
    // joins the value above it.
    let raw = b"HTTP/1.1 200 OK\r\nX-A: one\r\n Content-Length: 99\r\nContent-Length: 2\r\n\r\nok";
    let run = response_accepted(raw, &[Method::GET]);
    assert_eq!(run.events[0], Ev::Head("200".into(), BodyKind::Length(2)));
    // Right after the status line there is nothing to fold into.
    response_refused(b"HTTP/1.1 200 OK\r\n X: a\r\n\r\n", &[Method::GET], ObsFold);
    // A fold continues a Content-Length value: the length is the joined
    // value ("5 6", refused), never the first line's alone.
    response_refused(
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n 6\r\n\r\nhello6",
        &[Method::GET],
        InvalidContentLength,
    );
    // An empty continuation leaves the value as it was.
    let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n \r\n\r\nok";
    let run = response_accepted(raw, &[Method::GET]);
    assert_eq!(run.events[0], Ev::Head("200".into(), BodyKind::Length(2)));
}

/// Rule WS-COLON: whitespace between a field name and the colon is refused
/// (RFC 9112 section 5.1), in requests and in responses.
#[test]
fn whitespace_before_colon_is_refused() {
    refused(&req(&["Content-Length : 5"]), WhitespaceBeforeColon, 400);
    refused(
        b"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
        WhitespaceBeforeColon,
        400,
    );
    response_refused(
        b"HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello",
        &[Method::GET],
        WhitespaceBeforeColon,
    );
}

/// Rule BARE-CR: a CR not followed by LF is never a line end (RFC 9112
/// section 2.2: MUST treat as invalid or replace with SP; h1proto refuses).
#[test]
fn bare_cr_is_refused() {
    refused(&req(&["X-A: a\rb"]), InvalidFieldValue, 400);
    refused(
        &req(&["X-A: a\r", "Content-Length: 5"]),
        InvalidFieldValue,
        400,
    );
    refused(&req(&["X-A: a\rContent-Length: 5"]), InvalidFieldValue, 400);
    refused(b"GET /a\rb HTTP/1.1\r\nHost: a\r\n\r\n", InvalidTarget, 400);
    refused(b"GET / HTTP/1.1\rHost: a\r\n\r\n", InvalidStartLine, 400);
    response_refused(
        b"HTTP/1.1 200 O\rK\r\nContent-Length: 0\r\n\r\n",
        &[Method::GET],
        InvalidReason,
    );
    response_refused(
        b"HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 0\r\n\r\n",
        &[Method::GET],
        InvalidFieldValue,
    );
}

/// Rule BARE-LF: every line ends with CRLF; LF alone is refused (RFC 9112
/// section 2.2 allows accepting it; h1proto does not, so it never splits a
/// line differently from a CRLF-only parser).
#[test]
fn bare_lf_is_refused() {
    refused(b"GET / HTTP/1.1\nHost: a\r\n\r\n", BareLineFeed, 400);
    refused(b"GET / HTTP/1.1\r\nHost: a\n\r\n", BareLineFeed, 400);
    refused(b"GET / HTTP/1.1\r\nHost: a\r\n\n", BareLineFeed, 400);
    refused(
        b"GET / HTTP/1.1\r\nHost: a\r\nX: b\nContent-Length: 5\r\n\r\n",
        BareLineFeed,
        400,
    );
    response_refused(
        b"HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n",
        &[Method::GET],
        BareLineFeed,
    );
    // In the chunked coding too: size line, and after the data.
    refused(&chunked(b"5\nhello\r\n0\r\n\r\n"), BareLineFeed, 400);
    refused(&chunked(b"5\r\nhello\n0\r\n\r\n"), MissingChunkCrlf, 400);
    refused(&chunked(b"0\r\n\n"), BareLineFeed, 400);
    // A bare LF where a request line should start is not an empty line.
    refused(
        b"\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
        InvalidStartLine,
        400,
    );
}

/// Leading CRLFs before a request-line are skipped (RFC 9112 section 2.2).
#[test]
fn leading_crlf_before_a_request_is_skipped() {
    let run = accepted(b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(run.events[0], Ev::Head("GET /".into(), BodyKind::Empty));
}

/// Rule CONTROLS: NUL, DEL and every control but HTAB are refused in
/// field values, names, the method and the request-target.
#[test]
fn controls_are_refused() {
    for c in (0u8..0x20)
        .filter(|&c| c != b'\t' && c != b'\r' && c != b'\n')
        .chain([0x7f])
    {
        let ch = char::from(c);
        refused(&req(&[&format!("X-A: a{ch}b")]), InvalidFieldValue, 400);
        refused(&req(&[&format!("X{ch}A: b")]), InvalidFieldName, 400);
        refused(
            format!("GET /a{ch}b HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
            InvalidTarget,
            400,
        );
        refused(
            format!("G{ch}T / HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
            InvalidMethod,
            400,
        );
    }
    // obs-text is allowed in values (RFC 9110 section 5.5).
    accepted(b"GET / HTTP/1.1\r\nHost: a\r\nX: \x80\xff\r\n\r\n");
}

/// Rule HOST: an HTTP/1.1 request needs exactly one Host (RFC 9112 section
/// 3.2: MUST respond 400 to a missing or repeated one).
#[test]
fn host_must_be_single() {
    refused(b"GET / HTTP/1.1\r\n\r\n", InvalidHost, 400);
    refused(
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        InvalidHost,
        400,
    );
    refused(
        b"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n",
        InvalidHost,
        400,
    );
    accepted(b"GET / HTTP/1.0\r\n\r\n");
}

/// Rule HOST-ABSOLUTE (the decision on note N3 of docs/security.md): with
/// an absolute-form target, the target's authority is the request's and
/// `Host` is not compared with it (RFC 9112 section 3.2.2: the server
/// MUST ignore `Host` then). The decoded `Uri` carries the target's
/// authority, so an application that routes on `uri().authority()` routes
/// where the client asked; `Host` is still required once.
#[test]
fn an_absolute_form_target_decides_the_authority_over_host() {
    let run = accepted(b"GET http://a.example/x HTTP/1.1\r\nHost: b.example\r\n\r\n");
    assert_eq!(
        run.events[0],
        Ev::Head("GET http://a.example/x".into(), BodyKind::Empty)
    );
    refused(b"GET http://a.example/x HTTP/1.1\r\n\r\n", InvalidHost, 400);
    refused(
        b"GET http://a.example/x HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
        InvalidHost,
        400,
    );
}

// ------------------------------------------------------------ chunked

/// Rule CHUNK-SIZE: 1*HEXDIG without `0x`, sign or leading space, at most
/// 64 bits (RFC 9112 section 7.1).
#[test]
fn chunk_size_is_bare_hex() {
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
    ] {
        refused(
            &chunked(format!("{size}\r\nhello\r\n0\r\n\r\n").as_bytes()),
            InvalidChunkSize,
            400,
        );
    }
    // Trailing whitespace is only BWS before an extension.
    for size in ["5 ", "5\t", "5 5", "5 x"] {
        refused(
            &chunked(format!("{size}\r\nhello\r\n0\r\n\r\n").as_bytes()),
            InvalidChunkExtension,
            400,
        );
    }
    // The largest size is a size (the data is then awaited).
    let run = accepted(&chunked(b"ffffffffffffffff\r\nab"));
    assert_eq!(run.events[1], Ev::Data(b"ab".to_vec()));
    // Leading zeros are digits.
    let run = accepted(&chunked(b"00000000000000000005\r\nhello\r\n0\r\n\r\n"));
    assert_eq!(run.events[1], Ev::Data(b"hello".to_vec()));
}

/// Rule CHUNK-CRLF: chunk data is followed by exactly CRLF; anything else
/// is refused (the h11 advisory GHSA-vqfr-h8mv-ghfj read any two bytes).
#[test]
fn chunk_data_must_end_with_crlf() {
    for tail in ["XX", "\rX", "\n\r", " \r\n", "\r\r\n", "0\r\n"] {
        let raw = chunked(format!("5\r\nhello{tail}0\r\n\r\n").as_bytes());
        let events = refused(&raw, MissingChunkCrlf, 400);
        // The data before the fault may have been handed out, no End.
        assert!(!events.iter().any(|e| matches!(e, Ev::End(_))));
    }
    // h11's case: a chunk longer than its size swallows the next request.
    let raw = chunked(b"1\r\nAB\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n");
    refused(&raw, MissingChunkCrlf, 400);
}

/// Rule CHUNK-EXT-SIZE: chunk extensions count towards the chunk-size line
/// limit (`max_chunk_line_bytes`): an endless extension is 413.
#[test]
fn oversized_chunk_extensions_are_refused() {
    let ext = "a".repeat(5000);
    refused(
        &chunked(format!("5;{ext}\r\nhello\r\n0\r\n\r\n").as_bytes()),
        ChunkLineTooLong,
        413,
    );
    let value = "v".repeat(5000);
    refused(
        &chunked(format!("5;a=\"{value}\"\r\nhello\r\n0\r\n\r\n").as_bytes()),
        ChunkLineTooLong,
        413,
    );
    // Just under the limit is fine.
    let limits = Limits::default();
    let pad = "a".repeat(limits.max_chunk_line_bytes - "5;\r\n".len());
    accepted(&chunked(
        format!("5;{pad}\r\nhello\r\n0\r\n\r\n").as_bytes(),
    ));
}

/// Rule CHUNK-EXT-GRAMMAR: extensions follow their grammar; a quoted
/// string cannot hold a line break or a control, and must be closed on the
/// line (RFC 9112 section 7.1.1).
#[test]
fn chunk_extension_grammar_is_enforced() {
    refused(
        &chunked(b"5;a=\"x\ny\"\r\nhello\r\n0\r\n\r\n"),
        BareLineFeed,
        400,
    );
    refused(
        &chunked(b"5;a=\"x\r\ny\"\r\nhello\r\n0\r\n\r\n"),
        InvalidChunkExtension,
        400,
    );
    refused(
        &chunked(b"5;a=\"x\ry\"\r\nhello\r\n0\r\n\r\n"),
        InvalidChunkExtension,
        400,
    );
    refused(
        &chunked(b"5;a=\"x\0y\"\r\nhello\r\n0\r\n\r\n"),
        InvalidChunkExtension,
        400,
    );
    refused(
        &chunked(b"5;\r\nhello\r\n0\r\n\r\n"),
        InvalidChunkExtension,
        400,
    );
    refused(
        &chunked(b"5;a=\r\nhello\r\n0\r\n\r\n"),
        InvalidChunkExtension,
        400,
    );
    refused(
        &chunked(b"5;a b\r\nhello\r\n0\r\n\r\n"),
        InvalidChunkExtension,
        400,
    );
    refused(
        &chunked(b"5;a\0\r\nhello\r\n0\r\n\r\n"),
        InvalidChunkExtension,
        400,
    );
    let run = accepted(&chunked(b"5 ; a = \"q\\\"\" ; b\r\nhello\r\n0;z\r\n\r\n"));
    assert_eq!(run.events[1], Ev::Data(b"hello".to_vec()));
}

/// Rule TRAILER-FIELDS: a trailer section may not carry framing, routing,
/// connection-control or authentication fields (RFC 9110 section 6.5.1);
/// one that does is refused, so no later hop can re-frame the message.
#[test]
fn trailers_cannot_carry_framing_fields() {
    for field in [
        "Content-Length: 5",
        "Transfer-Encoding: chunked",
        "transfer-encoding: gzip",
        "Host: evil.example",
        "Trailer: X",
        "Connection: close",
        "Keep-Alive: timeout=5",
        "Proxy-Connection: keep-alive",
        "TE: trailers",
        "Upgrade: h2c",
        "Expect: 100-continue",
        "Content-Type: text/html",
        "Content-Encoding: gzip",
        "Content-Range: bytes 0-1/2",
        "Authorization: Basic YTpi",
        "Proxy-Authorization: Basic YTpi",
        "Cookie: a=b",
        "Set-Cookie: a=b",
    ] {
        let raw = chunked(format!("5\r\nhello\r\n0\r\n{field}\r\n\r\n").as_bytes());
        let events = refused(&raw, InvalidTrailer, 400);
        assert!(!events.iter().any(|e| matches!(e, Ev::End(_))), "{field}");
    }
    // Ordinary trailers pass.
    let run = accepted(&chunked(b"5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n"));
    assert_eq!(run.events[2], Ev::Trailers(vec!["x-checksum".into()]));
}

/// Trailer lines obey the head's line rules: no obs-fold, no whitespace
/// before the colon, CRLF only, no controls.
#[test]
fn trailer_lines_follow_field_rules() {
    refused(&chunked(b"0\r\nX-A: a\r\n b\r\n\r\n"), ObsFold, 400);
    refused(
        &chunked(b"0\r\nX-A : a\r\n\r\n"),
        WhitespaceBeforeColon,
        400,
    );
    refused(&chunked(b"0\r\nX-A: a\n\r\n"), BareLineFeed, 400);
    refused(&chunked(b"0\r\nX-A: a\0\r\n\r\n"), InvalidFieldValue, 400);
    refused(&chunked(b"0\r\nX-A\r\n\r\n"), MissingColon, 400);
}

// ----------------------------------------------------------- versions

/// Rule VERSION: `HTTP/` DIGIT `.` DIGIT exactly; HTTP/0.9, HTTP/2.0 and
/// other majors in a request line are 505 (RFC 9112 section 2.3, RFC 9110
/// section 2.5); a two-digit minor is malformed.
#[test]
fn invalid_versions_are_refused() {
    refused(b"GET / HTTP/1.10\r\nHost: a\r\n\r\n", InvalidStartLine, 400);
    refused(
        b"GET / HTTP/1.1.1\r\nHost: a\r\n\r\n",
        InvalidStartLine,
        400,
    );
    refused(
        b"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
        UnsupportedVersion,
        505,
    );
    refused(
        b"GET / HTTP/0.9\r\nHost: a\r\n\r\n",
        UnsupportedVersion,
        505,
    );
    refused(
        b"GET / HTTP/3.0\r\nHost: a\r\n\r\n",
        UnsupportedVersion,
        505,
    );
    refused(b"GET / http/1.1\r\nHost: a\r\n\r\n", InvalidVersion, 400);
    refused(b"GET / HTTP/1.x\r\nHost: a\r\n\r\n", InvalidVersion, 400);
    refused(b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n", InvalidStartLine, 400);
    refused(b"GET / HTTP/1\r\nHost: a\r\n\r\n", InvalidStartLine, 400);
    // An HTTP/0.9 simple request (no version at all) is not a request line.
    refused(b"GET /\r\n\r\n", InvalidStartLine, 400);
    // HTTP/1.2 is HTTP/1.1 to an HTTP/1.1 recipient.
    accepted(b"GET / HTTP/1.2\r\nHost: a\r\n\r\n");
    response_refused(
        b"HTTP/2.0 200 OK\r\n\r\n",
        &[Method::GET],
        UnsupportedVersion,
    );
    response_refused(
        b"HTTP/1.10 200 OK\r\n\r\n",
        &[Method::GET],
        InvalidStartLine,
    );
}

/// Rule REQUEST-LINE: exactly one SP between method, target and version;
/// no SP or control inside the target. The line is read left to right and
/// refused at its first byte that cannot continue it: what follows the SP
/// after the target must be the version.
#[test]
fn request_line_spacing_is_exact() {
    refused(b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", InvalidTarget, 400);
    refused(
        b"GET / extra HTTP/1.1\r\nHost: a\r\n\r\n",
        InvalidVersion,
        400,
    );
    refused(b"GET /  HTTP/1.1\r\nHost: a\r\n\r\n", InvalidVersion, 400);
    refused(b"GET /\tHTTP/1.1\r\nHost: a\r\n\r\n", InvalidTarget, 400);
    refused(b" GET / HTTP/1.1\r\nHost: a\r\n\r\n", InvalidMethod, 400);
}

// ----------------------------------------------------------- responses

/// Rule RESPONSE-CL-TE: in a response `Transfer-Encoding` wins over
/// `Content-Length` (RFC 9112 section 6.3 item 3) and the connection is
/// not reused, so a bad upstream cannot desynchronise the next response.
#[test]
fn response_with_te_and_cl_is_chunked_and_closes() {
    let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let run = response_accepted(raw, &[Method::GET, Method::GET]);
    assert_eq!(
        run.events,
        vec![
            Ev::Head("200".into(), BodyKind::Chunked),
            Ev::Data(b"ok".to_vec()),
            Ev::End(KeepAlive::Close(CloseReason::FramingConflict)),
        ]
    );
    // The pipelined response after it is left unparsed.
    assert!(run.leftover.starts_with(b"HTTP/1.1 200 OK"));
}

/// Rule RESPONSE-CL: a response's `Content-Length` follows the request
/// rules (one field line, 1*DIGIT).
#[test]
fn response_content_length_is_strict() {
    for v in ["5, 5", "+5", "5 5", "-1", "0x5"] {
        response_refused(
            format!("HTTP/1.1 200 OK\r\nContent-Length: {v}\r\n\r\nhello").as_bytes(),
            &[Method::GET],
            InvalidContentLength,
        );
    }
    response_refused(
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
        &[Method::GET],
        InvalidContentLength,
    );
    response_refused(
        b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        &[Method::GET],
        TransferEncodingInHttp10,
    );
}

/// Rule HEAD-RESPONSE: a response to HEAD has no body whatever its fields
/// say, so its `Content-Length` cannot pull the next response into it.
#[test]
fn response_to_head_has_no_body() {
    let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 38\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
    let run = response_accepted(raw, &[Method::HEAD, Method::GET]);
    assert_eq!(
        run.events,
        vec![
            Ev::Head("200".into(), BodyKind::Empty),
            Ev::End(KeepAlive::Reusable),
            Ev::Head("204".into(), BodyKind::Empty),
            Ev::End(KeepAlive::Reusable),
        ]
    );
}

// ---------------------------------------------------------- connection

/// Rule CLOSE-STOPS: after a message whose verdict is close, pipelined
/// bytes are not parsed: they cannot become a smuggled request.
#[test]
fn nothing_is_parsed_after_connection_close() {
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n";
    let run = accepted(raw);
    assert_eq!(
        run.events,
        vec![
            Ev::Head("GET /".into(), BodyKind::Empty),
            Ev::End(KeepAlive::Close(CloseReason::PeerClose)),
        ]
    );
    assert!(run.leftover.starts_with(b"GET /admin"));
}

/// Rule ERROR-CLOSES: after any error the decoder is failed for good, and
/// a server connection answers with the suggested status and
/// `Connection: close`, then parses nothing more.
#[test]
fn an_error_closes_the_connection() {
    let raw = with_body(
        req(&["Content-Length: 6", "Transfer-Encoding: chunked"]),
        "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    let mut conn = ServerConnection::new(Config::default());
    let mut buf = BytesMut::from(&raw[..]);
    let err = conn.poll_event(&mut buf).unwrap_err();
    assert_eq!(err.kind(), ContentLengthWithTransferEncoding);
    conn.send_error_response(&err).unwrap();
    let mut wire = Vec::new();
    {
        use bytes::Buf;
        let out = conn.output();
        wire.extend_from_slice(&out.copy_to_bytes(out.remaining()));
    }
    let text = String::from_utf8(wire).unwrap();
    assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
    assert!(conn.is_closed());
    assert_eq!(
        conn.poll_event(&mut buf).unwrap_err().kind(),
        ContentLengthWithTransferEncoding
    );
}

/// Rule LIMITS: heads, targets, field counts, chunk lines and trailer
/// sections are bounded, with 431 / 414 / 413.
#[test]
fn limits_give_their_statuses() {
    let limits = Limits::default();
    let long_target = format!(
        "GET /{} HTTP/1.1\r\nHost: a\r\n\r\n",
        "a".repeat(limits.max_target_bytes)
    );
    refused(long_target.as_bytes(), TargetTooLong, 414);
    let big = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nX: {}\r\n\r\n",
        "a".repeat(limits.max_head_bytes)
    );
    refused(big.as_bytes(), HeadTooLarge, 431);
    let many: Vec<String> = (0..=limits.max_fields)
        .map(|i| format!("X-{i}: v"))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    refused(&req(&many), TooManyFields, 431);
    let trailer = format!("0\r\nX: {}\r\n\r\n", "a".repeat(limits.max_trailer_bytes));
    refused(&chunked(trailer.as_bytes()), TrailersTooLarge, 431);
    let mut small = Limits::default();
    small.max_head_bytes = 64;
    refused_with(
        b"GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\n",
        TargetTooLong,
        414,
        &small,
    );
}

/// Rule UNSOLICITED: a client connection refuses response bytes when no
/// request is in flight. HTTP/1.1 has no unsolicited responses; one that
/// is decoded anyway is matched to the next request the client sends
/// (response queue poisoning: an extra response injected by a broken or
/// hostile upstream answers someone else's request). Finding F2, fixed.
#[test]
fn client_refuses_responses_nobody_asked_for() {
    use bytes::Buf;
    use h1proto::ClientConnection;
    // Nothing sent yet.
    let mut conn = ClientConnection::new(Config::default());
    let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"[..]);
    let first = conn.poll_event(&mut buf);
    let err = first.expect_err("a response with no request in flight was decoded");
    assert_eq!(err.kind(), UnsolicitedResponse);
    assert_eq!(err.status(), 502);
    assert!(conn.is_closed());

    // One request sent, two responses received: the second is refused.
    let mut conn = ClientConnection::new(Config::default());
    let req = http::Request::get("/a")
        .header("host", "example.com")
        .body(bytes::Bytes::new())
        .unwrap();
    conn.sender().send_request(req).unwrap();
    let out = conn.output();
    out.advance(out.remaining());
    let mut buf = BytesMut::from(
        &b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil"[..],
    );
    let mut heads = 0;
    let mut error = None;
    loop {
        match conn.poll_event(&mut buf) {
            Ok(Some(Event::Head { .. })) => heads += 1,
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    assert_eq!(heads, 1, "a second, unrequested response was decoded");
    let err = error.expect("the extra response was not refused");
    assert_eq!(err.kind(), UnsolicitedResponse);
}

/// Rule UPGRADE-ASKED: a client switches protocols only when its request
/// offered one (`Upgrade`); a 101 to any other request is refused (RFC 9110
/// sections 7.8 and 15.2.2: a server MUST NOT switch to a protocol the
/// client did not indicate). Otherwise a server, or anything that can
/// inject one response, takes the rest of the connection out of HTTP.
/// Finding F3, fixed.
#[test]
fn client_refuses_a_switch_it_did_not_ask_for() {
    use bytes::Buf;
    use h1proto::ClientConnection;
    let mut conn = ClientConnection::new(Config::default());
    let req = http::Request::get("/")
        .header("host", "example.com")
        .body(bytes::Bytes::new())
        .unwrap();
    conn.sender().send_request(req).unwrap();
    let out = conn.output();
    out.advance(out.remaining());
    let mut buf = BytesMut::from(
        &b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: evil\r\n\r\nraw bytes"[..],
    );
    let mut result = Ok(());
    loop {
        match conn.poll_event(&mut buf) {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    assert!(
        !conn.is_switched(),
        "a 101 to a request without Upgrade switched the connection"
    );
    let err = result.expect_err("a 101 to a request without Upgrade was accepted");
    assert_eq!(err.kind(), UnexpectedSwitch);
    assert_eq!(err.status(), 502);
}

/// Rule NO-SPLITTING: nothing the encoders accept can put a CR or LF into
/// a head they write (response splitting, RFC 9112 section 11.1): field
/// values, reason phrases, targets and methods are validated types.
#[test]
fn encoders_cannot_write_line_breaks_into_a_head() {
    assert!(h1proto::ReasonPhrase::new(&b"OK\r\nSet-Cookie: a=b"[..]).is_none());
    assert!(h1proto::ReasonPhrase::new(&b"OK\nX"[..]).is_none());
    assert!(http::HeaderValue::from_bytes(b"a\r\nb: c").is_err());
    assert!(http::HeaderValue::from_bytes(b"a\rb").is_err());
    assert!(http::HeaderName::from_bytes(b"a\r\nb").is_err());
    assert!("/a\r\nb".parse::<http::Uri>().is_err());
    assert!(Method::from_bytes(b"GET\r\n").is_err());
}

/// Rule RESPONSE-TE: a response's coding list is validated as a request's
/// (chunked at most once, a non-empty list of tokens); a final coding other
/// than chunked makes the body close-delimited and the connection close.
#[test]
fn response_transfer_encoding_is_validated() {
    for te in [
        "chunked, chunked",
        "",
        " , ",
        "\"chunked\"",
        "gz(ip), chunked",
    ] {
        response_refused(
            format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {te}\r\n\r\n0\r\n\r\n").as_bytes(),
            &[Method::GET],
            InvalidTransferEncoding,
        );
    }
    response_refused(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        &[Method::GET],
        InvalidTransferEncoding,
    );
    let run = response_accepted(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nabc",
        &[Method::GET],
    );
    assert_eq!(
        run.events,
        vec![
            Ev::Head("200".into(), BodyKind::CloseDelimited),
            Ev::Data(b"abc".to_vec())
        ]
    );
}
