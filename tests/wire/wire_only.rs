//! Decoding to the wire view alone (`Decoder::set_wire_only`): heads come
//! as `Event::Wire`, with no `http` types, and everything else (framing,
//! verdicts, errors, leniency) is what the decoder gives without the mode.
//! `tests/decode/split_invariance.rs` compares the two modes on generated and
//! mutated input; these are the cases by name.

use bytes::BytesMut;
use h1proto::framing::BodyKind;
use h1proto::leniency::ResponseLeniency;
use h1proto::wire::WireHead;
use h1proto::{
    CloseReason, ErrorKind, Event, KeepAlive, Limits, MessageHead, RequestDecoder, ResponseDecoder,
};
use http::{Method, StatusCode, Version};

fn requests() -> RequestDecoder {
    let mut dec = RequestDecoder::new(Limits::default());
    dec.set_wire_only(true);
    dec
}

fn responses(methods: &[Method]) -> ResponseDecoder {
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.set_wire_only(true);
    for m in methods {
        dec.expect_response_to(m);
    }
    dec
}

fn wire<H: MessageHead>(event: Option<Event<H>>) -> (WireHead, BodyKind) {
    match event {
        Some(Event::Wire { head, body }) => (head, body),
        other => panic!("not a wire head: {other:?}"),
    }
}

#[test]
fn a_request_comes_as_its_wire_view_and_frames_its_body() {
    let mut dec = requests();
    let mut buf = BytesMut::from(
        &b"PUT /a%2Fb?q HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\nTransfer-Encoding: chunked\r\n\r\n\
           3\r\nabc\r\n0\r\nT: 1\r\n\r\nGET * HTTP/1.0\r\n\r\n"[..],
    );
    let (head, body) = wire(dec.decode(&mut buf).unwrap());
    assert_eq!(body, BodyKind::Chunked);
    assert_eq!(head.method(), Some(&b"PUT"[..]));
    assert_eq!(head.target(), Some(&b"/a%2Fb?q"[..]));
    assert_eq!(head.version(), Version::HTTP_11);
    assert_eq!(head.status(), None);
    let fields: Vec<_> = head.fields().collect();
    assert_eq!(
        fields,
        [
            (&b"Host"[..], &b"x"[..]),
            (b"X-A", b"1"),
            (b"x-a", b"2"),
            (b"Transfer-Encoding", b"chunked")
        ]
    );
    assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Event::Data(d)) if d == "abc"));
    assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Event::Trailers(t)) if t["t"] == "1"));
    assert!(matches!(
        dec.decode(&mut buf).unwrap(),
        Some(Event::End(KeepAlive::Reusable))
    ));
    // OPTIONS-less `*` is refused exactly as without the mode.
    let err = dec.decode(&mut buf).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidTarget);
    let mut plain = RequestDecoder::new(Limits::default());
    let mut again = BytesMut::from(&b"GET * HTTP/1.0\r\n\r\n"[..]);
    assert_eq!(
        plain.decode(&mut again).unwrap_err().kind(),
        ErrorKind::InvalidTarget
    );
}

#[test]
fn responses_interim_and_final_come_as_wire_views() {
    let mut dec = responses(&[Method::GET]);
    let mut buf = BytesMut::from(
        &b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi"[..],
    );
    let (interim, body) = wire(dec.decode(&mut buf).unwrap());
    assert_eq!(
        (interim.status(), body),
        (Some(StatusCode::EARLY_HINTS), BodyKind::Empty)
    );
    let (head, body) = wire(dec.decode(&mut buf).unwrap());
    assert_eq!(head.status(), Some(StatusCode::OK));
    assert_eq!(head.version(), Version::HTTP_10);
    assert_eq!(head.reason(), Some(&b"OK"[..]));
    assert_eq!(body, BodyKind::Length(2));
    assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Event::Data(d)) if d == "hi"));
    assert!(matches!(
        dec.decode(&mut buf).unwrap(),
        Some(Event::End(KeepAlive::Close(CloseReason::Http10)))
    ));
}

/// What the one-pass reader does not read (an obs-fold, a switch, a head
/// in pieces, a refusal) goes through the full parse: the same outcome.
#[test]
fn what_the_shortcut_does_not_read_is_read_as_without_the_mode() {
    // An obs-fold in a response: the view spans it.
    let raw = b"HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 2\r\n\r\nhi";
    let mut dec = responses(&[Method::GET]);
    let mut buf = BytesMut::from(&raw[..]);
    let (head, body) = wire(dec.decode(&mut buf).unwrap());
    assert_eq!(body, BodyKind::Length(2));
    assert_eq!(head.fields().next(), Some((&b"X-A"[..], &b"1\r\n 2"[..])));
    // A status line without SP after the code, accepted by the default
    // switch; refused strictly, naming it.
    let raw = b"HTTP/1.1 204\r\n\r\n";
    let (head, body) = wire(
        responses(&[])
            .decode(&mut BytesMut::from(&raw[..]))
            .unwrap(),
    );
    assert_eq!(
        (head.status(), head.reason(), body),
        (
            Some(StatusCode::NO_CONTENT),
            Some(&b""[..]),
            BodyKind::Empty
        )
    );
    let mut strict = ResponseDecoder::with_leniency(Limits::default(), ResponseLeniency::strict());
    strict.set_wire_only(true);
    let err = strict.decode(&mut BytesMut::from(&raw[..])).unwrap_err();
    assert_eq!(
        err.tolerance(),
        Some(h1proto::leniency::Tolerance::NoSpaceAfterStatus)
    );
    // A head in pieces.
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    let mut dec = requests();
    let mut buf = BytesMut::from(&raw[..10]);
    assert!(dec.decode(&mut buf).unwrap().is_none());
    buf.extend_from_slice(&raw[10..]);
    let (head, _) = wire(dec.decode(&mut buf).unwrap());
    assert_eq!(head.bytes(), &raw[..]);
    // Refusals: the same error, at the same place.
    for raw in [
        &b"GET / HTTP/1.1\r\nX: y\r\n\r\n"[..],
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n",
        b"CONNECT a:1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n",
    ] {
        let only = requests().decode(&mut BytesMut::from(raw)).unwrap_err();
        let plain = RequestDecoder::new(Limits::default())
            .decode(&mut BytesMut::from(raw))
            .unwrap_err();
        assert_eq!(only, plain, "{:?}", String::from_utf8_lossy(raw));
    }
}
