//! When the final byte of a body is in the
//! buffer, the decoder knows the message is complete on the call that
//! returns the last data, and `End` follows on the very next call without
//! any new input.

use bytes::BytesMut;
use h1proto::{
    CloseReason, Event, KeepAlive, Limits, RequestDecoder, ResponseDecoder, framing::BodyKind,
};
use http::Method;

/// What a decoder is asked in these tests, for both roles.
trait Decoder {
    type Head: h1proto::MessageHead;
    fn next(&mut self, buf: &mut BytesMut) -> Option<Event<Self::Head>>;
    fn body_complete(&self) -> bool;
    fn verdict(&self) -> KeepAlive;
    fn idle(&self) -> bool;
    fn closed(&self) -> bool;
}

macro_rules! impl_decoder {
    ($t:ty, $h:ty) => {
        impl Decoder for $t {
            type Head = $h;
            fn next(&mut self, buf: &mut BytesMut) -> Option<Event<$h>> {
                self.decode(buf).expect("valid input")
            }
            fn body_complete(&self) -> bool {
                self.is_body_complete()
            }
            fn verdict(&self) -> KeepAlive {
                self.keep_alive()
            }
            fn idle(&self) -> bool {
                self.is_idle()
            }
            fn closed(&self) -> bool {
                self.is_closed() || self.is_switched()
            }
        }
    };
}
impl_decoder!(RequestDecoder, http::Request<()>);
impl_decoder!(ResponseDecoder, http::Response<()>);

/// What was observed around the last data event of one message.
#[derive(Debug)]
struct Observed {
    body: Vec<u8>,
    /// `is_body_complete()` right after the call that returned the last
    /// `Data` (or `Trailers`, when the body has a trailer section).
    complete_at_last_body_event: bool,
    /// `keep_alive()` right after that call.
    verdict_at_last_body_event: KeepAlive,
    /// The event of the call after it (with no new input).
    next: Option<&'static str>,
    end_verdict: Option<KeepAlive>,
    idle_after_end: bool,
    closed_after_end: bool,
}

fn name<H: h1proto::MessageHead>(event: &Event<H>) -> &'static str {
    match event {
        Event::Head { .. } => "Head",
        Event::Interim(_) => "Interim",
        Event::Data(_) => "Data",
        Event::Trailers(_) => "Trailers",
        Event::End(_) => "End",
        _ => "other",
    }
}

/// Decodes one message whose bytes are all in `buf`, through its `End`.
///
/// The body must come as one `Data` event (it is whole in the buffer); the
/// state is recorded after that call (or after `Trailers`, when the body has
/// a trailer section), then the next call is made with no new input.
fn run<D: Decoder>(dec: &mut D, buf: &mut BytesMut, has_trailers: bool) -> Observed {
    match dec.next(buf) {
        Some(Event::Head { body, .. }) => assert!(!body.is_empty(), "{body:?}"),
        other => panic!("expected a head, got {:?}", other.as_ref().map(name)),
    }
    let Some(Event::Data(data)) = dec.next(buf) else {
        panic!("expected data")
    };
    let body = data.to_vec();
    if has_trailers {
        match dec.next(buf) {
            Some(Event::Trailers(map)) => assert!(!map.is_empty()),
            other => panic!("expected trailers, got {:?}", other.as_ref().map(name)),
        }
    }
    let complete = dec.body_complete();
    let verdict = dec.verdict();
    let next = dec.next(buf);
    finish(dec, body, complete, verdict, next)
}

fn finish<D: Decoder>(
    dec: &mut D,
    body: Vec<u8>,
    complete: bool,
    verdict: KeepAlive,
    next: Option<Event<D::Head>>,
) -> Observed {
    let end_verdict = match &next {
        Some(Event::End(v)) => Some(*v),
        _ => None,
    };
    Observed {
        body,
        complete_at_last_body_event: complete,
        verdict_at_last_body_event: verdict,
        next: next.as_ref().map(name),
        end_verdict,
        idle_after_end: dec.idle(),
        closed_after_end: dec.closed(),
    }
}

fn limits() -> Limits {
    Limits::default()
}

const FOLLOWING: &[u8] = b"GET /next HTTP/1.1\r\nHost: example.com\r\n\r\n";

fn with_following(message: &[u8], following: &[u8]) -> BytesMut {
    let mut buf = BytesMut::from(message);
    buf.extend_from_slice(following);
    buf
}

// ------------------------------------------------------------------ requests

#[test]
fn request_content_length_completes_with_the_last_data() {
    let msg = b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world";
    let mut buf = with_following(msg, FOLLOWING);
    let mut dec = RequestDecoder::new(limits());
    let seen = run(&mut dec, &mut buf, false);
    assert_eq!(seen.body, b"hello world");
    assert!(seen.complete_at_last_body_event, "{seen:?}");
    assert_eq!(seen.verdict_at_last_body_event, KeepAlive::Reusable);
    assert_eq!(seen.next, Some("End"));
    assert_eq!(seen.end_verdict, Some(KeepAlive::Reusable));
    assert!(seen.idle_after_end && !seen.closed_after_end, "{seen:?}");
    // The next request is untouched and decodes.
    assert_eq!(&buf[..], FOLLOWING);
    assert!(matches!(dec.next(&mut buf), Some(Event::Head { .. })));
}

#[test]
fn request_content_length_completes_without_more_bytes_even_when_none_follow() {
    let msg = b"PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
    let mut buf = BytesMut::from(&msg[..]);
    let mut dec = RequestDecoder::new(limits());
    let seen = run(&mut dec, &mut buf, false);
    assert_eq!(seen.body, b"abc");
    assert!(seen.complete_at_last_body_event, "{seen:?}");
    assert_eq!(seen.next, Some("End"));
    assert!(buf.is_empty());
    assert!(dec.is_idle());
    assert!(dec.decode(&mut buf).unwrap().is_none());
}

#[test]
fn request_chunked_ends_on_the_next_call_after_the_last_data() {
    let msg = b"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
                5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n";
    let mut buf = with_following(msg, FOLLOWING);
    let mut dec = RequestDecoder::new(limits());
    // Data of every chunk, then End with no further input.
    let mut body = Vec::new();
    let Some(Event::Head { body: kind, .. }) = dec.next(&mut buf) else {
        panic!("no head")
    };
    assert_eq!(kind, BodyKind::Chunked);
    let verdict = loop {
        match dec.next(&mut buf) {
            Some(Event::Data(d)) => body.extend_from_slice(&d),
            Some(Event::End(v)) => break v,
            other => panic!("{:?}", other.as_ref().map(name)),
        }
    };
    assert_eq!(body, b"hello world");
    assert_eq!(verdict, KeepAlive::Reusable);
    assert!(dec.is_idle());
    assert_eq!(&buf[..], FOLLOWING);
}

#[test]
fn request_chunked_is_complete_on_the_call_that_returns_the_last_data() {
    // The last chunk, the last-chunk and the empty trailer section are all in
    // the buffer: the call that returns "world" knows the body is complete.
    // Fed in two reads, cut inside the first chunk and then whole, so that
    // a `Data` before the last one is there however small chunks are
    // gathered into one `Data`.
    let msg = b"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
                6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n";
    let cut = msg.len() - b"lo \r\n5\r\nworld\r\n0\r\n\r\n".len();
    let mut buf = BytesMut::from(&msg[..cut]);
    let mut dec = RequestDecoder::new(limits());
    let Some(Event::Head { .. }) = dec.next(&mut buf) else {
        panic!("no head")
    };
    let Some(Event::Data(first)) = dec.next(&mut buf) else {
        panic!("no data")
    };
    assert_eq!(&first[..], b"hel");
    assert!(!dec.is_body_complete(), "a chunk is still to come");
    assert!(dec.next(&mut buf).is_none());
    buf.extend_from_slice(&msg[cut..]);
    buf.extend_from_slice(FOLLOWING);
    let Some(Event::Data(last)) = dec.next(&mut buf) else {
        panic!("no data")
    };
    assert_eq!(&last[..], b"lo world");
    assert_eq!(dec.keep_alive(), KeepAlive::Reusable);
    assert!(
        dec.is_body_complete(),
        "the terminating `0\\r\\n\\r\\n` is in the buffer, yet the decoder does not \
         know the body is complete on the call that returned its last data"
    );
    assert!(matches!(
        dec.next(&mut buf),
        Some(Event::End(KeepAlive::Reusable))
    ));
    assert!(dec.is_idle());
}

#[test]
fn request_chunked_with_trailers_is_complete_with_the_trailers() {
    let msg = b"POST /t HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
                3\r\nabc\r\n0\r\nChecksum: 42\r\nX-Note: done\r\n\r\n";
    let mut buf = with_following(msg, FOLLOWING);
    let mut dec = RequestDecoder::new(limits());
    let seen = run(&mut dec, &mut buf, true);
    assert_eq!(seen.body, b"abc");
    assert!(seen.complete_at_last_body_event, "{seen:?}");
    assert_eq!(seen.next, Some("End"));
    assert_eq!(seen.end_verdict, Some(KeepAlive::Reusable));
    assert!(seen.idle_after_end);
    assert_eq!(&buf[..], FOLLOWING);
}

#[test]
fn request_with_connection_close_stops_before_pipelined_bytes() {
    for msg in [
        &b"POST /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi"[..],
        b"POST /a HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Close\r\nTransfer-Encoding: chunked\r\n\r\n2;x\r\nhi\r\n0\r\nX-T: 1\r\n\r\n",
        b"POST /a HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi",
    ] {
        let trailers = msg.windows(3).any(|w| w == b"X-T");
        let mut buf = with_following(msg, FOLLOWING);
        let mut dec = RequestDecoder::new(limits());
        let expected = if msg.windows(8).any(|w| w == b"HTTP/1.0") {
            KeepAlive::Close(CloseReason::Http10)
        } else {
            KeepAlive::Close(CloseReason::PeerClose)
        };
        let seen = run(&mut dec, &mut buf, trailers);
        assert_eq!(seen.body, b"hi");
        assert_eq!(seen.verdict_at_last_body_event, expected);
        assert_eq!(seen.end_verdict, Some(expected));
        assert!(seen.closed_after_end, "{seen:?}");
        assert!(!seen.idle_after_end, "{seen:?}");
        // Nothing after the closing message is parsed or consumed.
        for _ in 0..3 {
            assert!(dec.decode(&mut buf).unwrap().is_none());
            assert_eq!(&buf[..], FOLLOWING);
        }
        assert!(dec.decode_eof(&mut buf).unwrap().is_none());
        assert_eq!(&buf[..], FOLLOWING);
    }
}

#[test]
fn request_verdict_is_known_with_the_head() {
    let msg = b"POST /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Length: 4\r\n\r\n";
    let mut buf = BytesMut::from(&msg[..]);
    let mut dec = RequestDecoder::new(limits());
    assert!(matches!(dec.next(&mut buf), Some(Event::Head { .. })));
    assert_eq!(dec.keep_alive(), KeepAlive::Close(CloseReason::PeerClose));
    assert!(!dec.is_body_complete());
    assert!(dec.next(&mut buf).is_none());
    buf.extend_from_slice(b"ab");
    assert!(matches!(dec.next(&mut buf), Some(Event::Data(d)) if &d[..] == b"ab"));
    assert!(!dec.is_body_complete());
    assert!(dec.next(&mut buf).is_none());
    buf.extend_from_slice(b"cd");
    assert!(matches!(dec.next(&mut buf), Some(Event::Data(d)) if &d[..] == b"cd"));
    assert!(dec.is_body_complete());
    assert_eq!(dec.keep_alive(), KeepAlive::Close(CloseReason::PeerClose));
    assert!(matches!(
        dec.next(&mut buf),
        Some(Event::End(KeepAlive::Close(CloseReason::PeerClose)))
    ));
    assert!(dec.is_closed());
}

// ----------------------------------------------------------------- responses

#[test]
fn response_content_length_completes_with_the_last_data() {
    let msg = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    let next = b"HTTP/1.1 204 No Content\r\n\r\n";
    let mut buf = with_following(msg, next);
    let mut dec = ResponseDecoder::new(limits());
    dec.expect_response_to(&Method::GET);
    dec.expect_response_to(&Method::GET);
    let seen = run(&mut dec, &mut buf, false);
    assert_eq!(seen.body, b"hello");
    assert!(seen.complete_at_last_body_event, "{seen:?}");
    assert_eq!(seen.verdict_at_last_body_event, KeepAlive::Reusable);
    assert_eq!(seen.next, Some("End"));
    assert_eq!(seen.end_verdict, Some(KeepAlive::Reusable));
    assert!(seen.idle_after_end && !seen.closed_after_end);
    assert_eq!(&buf[..], next);
}

#[test]
fn response_chunked_is_complete_on_the_call_that_returns_the_last_data() {
    let msg = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n";
    let mut buf = BytesMut::from(&msg[..]);
    let mut dec = ResponseDecoder::new(limits());
    dec.expect_response_to(&Method::POST);
    let seen = run(&mut dec, &mut buf, false);
    assert_eq!(seen.body, b"hello world");
    assert_eq!(seen.next, Some("End"), "End must follow without new input");
    assert!(seen.idle_after_end);
    assert!(
        seen.complete_at_last_body_event,
        "the terminator is in the buffer, yet is_body_complete() is false after the last Data"
    );
}

#[test]
fn response_chunked_ends_on_the_next_call_without_input() {
    let msg = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let mut buf = BytesMut::from(&msg[..]);
    let mut dec = ResponseDecoder::new(limits());
    assert!(matches!(dec.next(&mut buf), Some(Event::Head { .. })));
    assert!(matches!(dec.next(&mut buf), Some(Event::Data(d)) if &d[..] == b"abc"));
    assert!(matches!(
        dec.next(&mut buf),
        Some(Event::End(KeepAlive::Reusable))
    ));
    assert!(buf.is_empty());
    assert!(dec.is_idle());
}

#[test]
fn response_with_connection_close_stops_before_following_bytes() {
    let msg = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
    let junk = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let mut buf = with_following(msg, junk);
    let mut dec = ResponseDecoder::new(limits());
    dec.expect_response_to(&Method::GET);
    dec.expect_response_to(&Method::GET);
    let seen = run(&mut dec, &mut buf, false);
    assert_eq!(seen.body, b"ok");
    assert!(seen.complete_at_last_body_event);
    assert_eq!(
        seen.verdict_at_last_body_event,
        KeepAlive::Close(CloseReason::PeerClose)
    );
    assert_eq!(
        seen.end_verdict,
        Some(KeepAlive::Close(CloseReason::PeerClose))
    );
    assert!(seen.closed_after_end && !seen.idle_after_end);
    assert!(dec.decode(&mut buf).unwrap().is_none());
    assert_eq!(&buf[..], junk);
}

#[test]
fn bodiless_messages_are_complete_with_their_head() {
    let mut dec = ResponseDecoder::new(limits());
    dec.expect_response_to(&Method::HEAD);
    dec.expect_response_to(&Method::GET);
    let mut buf = BytesMut::from(
        &b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"[..],
    );
    for _ in 0..2 {
        assert!(matches!(
            dec.next(&mut buf),
            Some(Event::Head {
                body: BodyKind::Empty,
                ..
            })
        ));
        assert!(dec.is_body_complete());
        assert_eq!(dec.keep_alive(), KeepAlive::Reusable);
        assert!(matches!(
            dec.next(&mut buf),
            Some(Event::End(KeepAlive::Reusable))
        ));
        assert!(dec.is_idle());
    }
    assert!(buf.is_empty());

    let mut dec = RequestDecoder::new(limits());
    let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"[..]);
    assert!(matches!(
        dec.next(&mut buf),
        Some(Event::Head {
            body: BodyKind::Empty,
            ..
        })
    ));
    assert!(dec.is_body_complete());
    assert!(!dec.is_idle());
    assert!(matches!(
        dec.next(&mut buf),
        Some(Event::End(KeepAlive::Reusable))
    ));
    assert!(dec.is_idle() && !dec.is_body_complete());
}
