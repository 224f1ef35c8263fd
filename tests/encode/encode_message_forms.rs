//! The forms a message can be handed to the encoders in: a message with a
//! body, an `http` builder or `Parts` for a message without one, and a
//! builder that failed. Every output is decoded back.

use bytes::{Buf, BytesMut};
use h1proto::{
    Event, KeepAlive, Limits, RequestDecoder, RequestEncoder, ResponseContext, ResponseDecoder,
    ResponseEncoder, Segments, UsageError,
    framing::{BodyKind, RequestKind},
};
use http::{Method, Request, Response, StatusCode};

fn take(out: &mut Segments) -> Vec<u8> {
    out.copy_to_bytes(out.remaining()).to_vec()
}

/// Every event a decoder makes of `wire`, the peer then closing.
fn events<H: h1proto::MessageHead>(
    wire: &[u8],
    mut decode: impl FnMut(&mut BytesMut, bool) -> Result<Option<Event<H>>, h1proto::Error>,
) -> Vec<Event<H>> {
    let mut buf = BytesMut::from(wire);
    let mut out = Vec::new();
    for eof in [false, true] {
        while let Some(ev) = decode(&mut buf, eof).expect("the output decodes") {
            out.push(ev);
        }
    }
    assert!(buf.is_empty(), "bytes left over");
    out
}

fn requests(wire: &[u8]) -> Vec<Event<Request<()>>> {
    let mut dec = RequestDecoder::new(Limits::default());
    events(wire, |buf, eof| {
        if eof {
            dec.decode_eof(buf)
        } else {
            dec.decode(buf)
        }
    })
}

fn responses(wire: &[u8], method: &Method) -> Vec<Event<Response<()>>> {
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.expect_response_to(method);
    events(wire, |buf, eof| {
        if eof {
            dec.decode_eof(buf)
        } else {
            dec.decode(buf)
        }
    })
}

#[test]
fn a_request_builder_is_a_request_without_a_body() {
    let mut with_builder = RequestEncoder::default();
    with_builder
        .send_request(Request::get("http://example.com/a").header("accept", "*/*"))
        .unwrap();
    let mut with_body = RequestEncoder::default();
    with_body
        .send_request(
            Request::get("http://example.com/a")
                .header("accept", "*/*")
                .body("")
                .unwrap(),
        )
        .unwrap();
    let wire = take(with_builder.output());
    assert_eq!(wire, take(with_body.output()));
    assert_eq!(
        wire,
        b"GET http://example.com/a HTTP/1.1\r\nhost: example.com\r\naccept: */*\r\n\r\n"
    );
    let evs = requests(&wire);
    assert!(matches!(
        &evs[..],
        [Event::Head { head, body: BodyKind::Empty }, Event::End(KeepAlive::Reusable)]
            if head.method() == Method::GET && head.headers()["accept"] == "*/*"
    ));

    // POST, PUT and PATCH say their empty body's length.
    let mut enc = RequestEncoder::default();
    enc.send_request(Request::post("/form").header("host", "h"))
        .unwrap();
    let wire = take(enc.output());
    assert_eq!(
        wire,
        b"POST /form HTTP/1.1\r\nhost: h\r\ncontent-length: 0\r\n\r\n"
    );
    assert!(matches!(
        &requests(&wire)[..],
        [
            Event::Head {
                body: BodyKind::Length(0),
                ..
            },
            Event::End(_)
        ]
    ));
}

#[test]
fn a_request_builder_starts_a_streamed_request() {
    let mut enc = RequestEncoder::default();
    let kind = enc
        .send_head(Request::put("/upload").header("host", "h"))
        .unwrap();
    assert_eq!(kind, BodyKind::Chunked);
    enc.send_data("part one, ").unwrap();
    enc.send_data("part two").unwrap();
    enc.finish(None).unwrap();
    let wire = take(enc.output());
    let evs = requests(&wire);
    let data: Vec<u8> = evs
        .iter()
        .filter_map(|ev| match ev {
            Event::Data(d) => Some(d.to_vec()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(data, b"part one, part two");
    assert!(matches!(evs.last(), Some(Event::End(KeepAlive::Reusable))));
}

#[test]
fn decoded_parts_are_sent_again_unchanged() {
    // A proxy's path: decode a head, keep its parts, send them on.
    let input = b"DELETE /items/7 HTTP/1.1\r\nhost: api.example\r\nx-trace: 1\r\n\r\n";
    let Some(Event::Head { head, .. }) = requests(input).into_iter().next() else {
        panic!("no head");
    };
    let (parts, ()) = head.into_parts();
    let mut enc = RequestEncoder::default();
    enc.send_request(parts.clone()).unwrap();
    let whole = take(enc.output());
    assert_eq!(whole, input);
    enc.send_head(parts).unwrap();
    enc.finish(None).unwrap();
    // Streamed, it is chunked: the encoder cannot know the body is empty.
    let streamed = take(enc.output());
    assert_eq!(
        streamed,
        b"DELETE /items/7 HTTP/1.1\r\nhost: api.example\r\nx-trace: 1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"
    );
    assert!(matches!(
        &requests(&streamed)[..],
        [
            Event::Head {
                body: BodyKind::Chunked,
                ..
            },
            Event::End(_)
        ]
    ));
}

#[test]
fn response_builders_and_parts() {
    let ctx = ResponseContext::default();
    let mut enc = ResponseEncoder::default();
    enc.send_response(Response::builder().status(StatusCode::NO_CONTENT), ctx)
        .unwrap();
    enc.send_response(Response::builder().header("x-a", "1"), ctx)
        .unwrap();
    let kind = enc
        .send_head(
            Response::builder()
                .status(StatusCode::CREATED)
                .header("content-type", "text/plain"),
            ctx,
        )
        .unwrap();
    assert_eq!(kind, BodyKind::Chunked);
    enc.send_data("made").unwrap();
    enc.finish(None).unwrap();
    let (parts, ()) = Response::builder()
        .status(StatusCode::NOT_FOUND)
        .body(())
        .unwrap()
        .into_parts();
    enc.send_response(parts, ctx).unwrap();
    let wire = take(enc.output());
    assert_eq!(
        String::from_utf8(wire.clone()).unwrap(),
        "HTTP/1.1 204 No Content\r\n\r\n\
         HTTP/1.1 200 OK\r\nx-a: 1\r\ncontent-length: 0\r\n\r\n\
         HTTP/1.1 201 Created\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n4\r\nmade\r\n0\r\n\r\n\
         HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
    );
    // Four responses to four GETs, pipelined.
    let mut dec = ResponseDecoder::new(Limits::default());
    for _ in 0..4 {
        dec.expect_response_to(&Method::GET);
    }
    let evs = events(&wire, |buf, eof| {
        if eof {
            dec.decode_eof(buf)
        } else {
            dec.decode(buf)
        }
    });
    let statuses: Vec<u16> = evs
        .iter()
        .filter_map(|ev| match ev {
            Event::Head { head, .. } => Some(head.status().as_u16()),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [204, 200, 201, 404]);
    let ends = evs.iter().filter(|ev| matches!(ev, Event::End(_))).count();
    assert_eq!(ends, 4);
}

#[test]
fn a_response_builder_answers_head_with_the_get_length() {
    let ctx = ResponseContext {
        request: RequestKind::Head,
        ..ResponseContext::default()
    };
    let mut enc = ResponseEncoder::default();
    enc.send_response(Response::builder().header("content-length", "1234"), ctx)
        .unwrap();
    let wire = take(enc.output());
    assert_eq!(wire, b"HTTP/1.1 200 OK\r\ncontent-length: 1234\r\n\r\n");
    assert!(matches!(
        &responses(&wire, &Method::HEAD)[..],
        [
            Event::Head {
                body: BodyKind::Empty,
                ..
            },
            Event::End(KeepAlive::Reusable)
        ]
    ));
}

#[test]
fn a_failed_builder_is_a_usage_error_and_sends_nothing() {
    let mut enc = RequestEncoder::default();
    let err = enc
        .send_request(Request::get("/").header("bad name", "x"))
        .unwrap_err();
    let UsageError::Builder(text) = &err else {
        panic!("{err:?}");
    };
    assert!(text.contains("header name"), "{text}");
    assert!(err.to_string().contains("header name"));
    let err = enc.send_head(Request::get("not a uri")).unwrap_err();
    assert!(matches!(err, UsageError::Builder(_)), "{err:?}");
    assert!(enc.output().is_empty());
    assert!(enc.is_finished() && enc.keep_alive().is_reusable());

    let mut enc = ResponseEncoder::default();
    let ctx = ResponseContext::default();
    let err = enc
        .send_response(Response::builder().status(1000), ctx)
        .unwrap_err();
    assert!(matches!(err, UsageError::Builder(_)), "{err:?}");
    let err = enc
        .send_head(Response::builder().header("x", "bad\nvalue"), ctx)
        .unwrap_err();
    assert!(matches!(err, UsageError::Builder(_)), "{err:?}");
    assert!(enc.output().is_empty());
    // The encoder is still ready for a good message.
    enc.send_response(Response::builder(), ctx).unwrap();
    assert_eq!(
        take(enc.output()),
        b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"
    );
}
