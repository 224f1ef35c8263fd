//! Everything the encoders write decodes back, under any split of the
//! bytes, to the message that was encoded.

use bytes::{Buf, Bytes, BytesMut};
use h1proto::{
    EncoderConfig, Event, KeepAlive, Limits, RequestDecoder, RequestEncoder, ResponseContext,
    ResponseDecoder, ResponseEncoder, framing::RequestKind,
};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Version};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Body {
    len: usize,
    seed: u8,
    writes: Vec<usize>,
    streaming: bool,
    trailers: bool,
}

impl Body {
    fn bytes(&self) -> Vec<u8> {
        (0..self.len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(self.seed))
            .collect()
    }

    /// The body cut into the write sizes, cycling through them.
    fn pieces(&self) -> Vec<Bytes> {
        let all = Bytes::from(self.bytes());
        let mut out = Vec::new();
        let mut at = 0;
        let mut i = 0;
        while at < all.len() {
            let n = self.writes[i % self.writes.len()].min(all.len() - at);
            out.push(all.slice(at..at + n));
            at += n;
            i += 1;
        }
        out
    }
}

fn body() -> impl Strategy<Value = Body> {
    (
        prop_oneof![0usize..64, 0usize..4096, 0usize..65536],
        any::<u8>(),
        proptest::collection::vec(1usize..20000, 1..6),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(len, seed, writes, streaming, trailers)| Body {
            len,
            seed,
            writes,
            streaming,
            trailers,
        })
}

fn fields() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec(
        (
            prop_oneof![
                Just("x-a".to_string()),
                Just("x-b".to_string()),
                Just("accept".to_string())
            ],
            "[a-zA-Z0-9 ,;=]{0,20}",
        ),
        0..4,
    )
}

fn splits() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(1usize..5000, 0..8)
}

fn trailer_map() -> HeaderMap {
    let mut t = HeaderMap::new();
    t.insert("x-checksum", HeaderValue::from_static("abc123"));
    t
}

/// Feeds `wire` in pieces cut by `splits` and collects every event, ending
/// with the peer closing when `eof`.
fn decode_all<H: h1proto::MessageHead>(
    wire: &[u8],
    splits: &[usize],
    mut decode: impl FnMut(&mut BytesMut, bool) -> Result<Option<Event<H>>, h1proto::Error>,
) -> Vec<Event<H>> {
    let mut events = Vec::new();
    let mut buf = BytesMut::new();
    let mut at = 0;
    let mut cuts = splits.iter().cycle();
    while at < wire.len() {
        let n = (*cuts.next().unwrap_or(&wire.len())).min(wire.len() - at);
        buf.extend_from_slice(&wire[at..at + n]);
        at += n;
        while let Some(ev) = decode(&mut buf, false).expect("decodes") {
            events.push(ev);
        }
    }
    while let Some(ev) = decode(&mut buf, true).expect("decodes at eof") {
        let end = matches!(ev, Event::End(_));
        events.push(ev);
        if end {
            break;
        }
    }
    events
}

fn drain(out: &mut h1proto::Segments) -> Vec<u8> {
    out.copy_to_bytes(out.remaining()).to_vec()
}

struct Decoded<H> {
    heads: Vec<H>,
    interim: usize,
    data: Vec<u8>,
    trailers: Option<HeaderMap>,
    end: Option<KeepAlive>,
}

fn collect<H: h1proto::MessageHead>(events: Vec<Event<H>>) -> Decoded<H> {
    let mut d = Decoded {
        heads: Vec::new(),
        interim: 0,
        data: Vec::new(),
        trailers: None,
        end: None,
    };
    for ev in events {
        match ev {
            Event::Head { head, .. } => d.heads.push(head),
            Event::Interim(_) => d.interim += 1,
            Event::Data(b) => d.data.extend_from_slice(&b),
            Event::Trailers(t) => d.trailers = Some(t),
            Event::End(k) => d.end = Some(k),
            _ => {}
        }
    }
    d
}

fn assert_fields_kept(sent: &[(String, String)], got: &HeaderMap) {
    let mut sent_map = HeaderMap::new();
    for (n, v) in sent {
        sent_map.append(
            HeaderName::from_bytes(n.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    for name in sent_map.keys() {
        let a: Vec<_> = sent_map.get_all(name).iter().map(trimmed).collect();
        let b: Vec<_> = got.get_all(name).iter().map(trimmed).collect();
        assert_eq!(a, b, "field {name}");
    }
}

fn trimmed(v: &HeaderValue) -> Vec<u8> {
    v.as_bytes().trim_ascii().to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn requests_round_trip(
        method in prop_oneof![
            Just(Method::GET), Just(Method::POST), Just(Method::PUT),
            Just(Method::HEAD), Just(Method::DELETE), Just(Method::OPTIONS),
            Just(Method::CONNECT)
        ],
        http10 in any::<bool>(),
        fields in fields(),
        body in body(),
        splits in splits(),
        title in any::<bool>(),
    ) {
        let connect = method == Method::CONNECT;
        let version = if http10 { Version::HTTP_10 } else { Version::HTTP_11 };
        let uri = if connect { "example.com:443" } else { "/p/a?q=1" };
        let mut builder = Request::builder().method(method.clone()).uri(uri).version(version);
        if !connect {
            builder = builder.header("host", "example.com");
        }
        for (n, v) in &fields {
            builder = builder.header(n.as_str(), v.as_str());
        }
        let expected = if connect { Vec::new() } else { body.bytes() };
        let mut config = EncoderConfig::default();
        config.title_case_fields = title;
        let mut enc = RequestEncoder::new(config);
        let streaming = body.streaming && !connect;
        let chunked = streaming && !http10;
        if streaming {
            if http10 {
                builder = builder.header("content-length", expected.len().to_string());
            }
            enc.send_head(builder.body(()).unwrap()).unwrap();
            for piece in body.pieces() {
                enc.send_data(piece).unwrap();
            }
            let trailers = (chunked && body.trailers).then(trailer_map);
            enc.finish(trailers).unwrap();
        } else {
            enc.send_request(builder.body(expected.clone()).unwrap()).unwrap();
        }
        prop_assert!(enc.is_finished());
        let wire = drain(enc.output());

        let mut dec = RequestDecoder::new(Limits::default());
        let events = decode_all(&wire, &splits, |buf, eof| {
            if eof { dec.decode_eof(buf) } else { dec.decode(buf) }
        });
        let d = collect(events);
        prop_assert_eq!(d.heads.len(), 1);
        let head = &d.heads[0];
        prop_assert_eq!(head.method(), &method);
        prop_assert_eq!(head.version(), version);
        prop_assert_eq!(head.uri().to_string(), if connect { "example.com:443".to_string() } else { uri.to_string() });
        assert_fields_kept(&fields, head.headers());
        prop_assert_eq!(&d.data, &expected);
        if chunked && body.trailers {
            prop_assert_eq!(d.trailers, Some(trailer_map()));
        }
        let end = d.end.expect("the request ended");
        prop_assert_eq!(end.is_reusable(), enc.keep_alive().is_reusable());
    }

    #[test]
    fn responses_round_trip(
        request in prop_oneof![Just(Method::GET), Just(Method::HEAD), Just(Method::CONNECT), Just(Method::POST)],
        code in prop_oneof![
            Just(200u16), Just(201), Just(204), Just(304), Just(404), Just(500), Just(101)
        ],
        interim in any::<bool>(),
        peer10 in any::<bool>(),
        close in any::<bool>(),
        fields in fields(),
        body in body(),
        splits in splits(),
        caller_chunked in any::<bool>(),
        title in any::<bool>(),
    ) {
        let status = StatusCode::from_u16(code).unwrap();
        let peer_version = if peer10 { Version::HTTP_10 } else { Version::HTTP_11 };
        let ctx = ResponseContext {
            request: RequestKind::of(&request),
            peer_version,
            keep_alive: if close {
                KeepAlive::Close(h1proto::CloseReason::PeerClose)
            } else {
                KeepAlive::Reusable
            },
        };
        let bodiless = request == Method::HEAD
            || status.is_informational()
            || code == 204
            || code == 304
            || (request == Method::CONNECT && status.is_success());
        // Bodies for no-body statuses are refused; HEAD drops them.
        let send_body = !bodiless_by_status(code, &request);
        let supplied = if send_body { body.bytes() } else { Vec::new() };
        let expected = if bodiless { Vec::new() } else { supplied.clone() };

        let mut config = EncoderConfig::default();
        config.title_case_fields = title;
        let mut enc = ResponseEncoder::new(config);
        let mut interim_sent = 0;
        if interim && !peer10 {
            let res = Response::builder().status(103).header("link", "</s.css>").body(()).unwrap();
            enc.send_head(res, ctx).unwrap();
            interim_sent = 1;
        }
        let head = || {
            let mut b = Response::builder().status(status);
            for (n, v) in &fields {
                b = b.header(n.as_str(), v.as_str());
            }
            // The caller's own chunked framing: kept for an HTTP/1.1 peer,
            // rewritten for an HTTP/1.0 one.
            if caller_chunked {
                b = b.header("transfer-encoding", "chunked");
            }
            b
        };
        let switch = code == 101 || (request == Method::CONNECT && status.is_success());
        if code == 101 && peer10 {
            // No 1xx to an HTTP/1.0 peer.
            let r = enc.send_head(head().body(()).unwrap(), ctx);
            prop_assert_eq!(r, Err(h1proto::UsageError::InterimToHttp10));
            return Ok(());
        }
        let chunked_stream;
        if body.streaming {
            let kind = enc.send_head(head().body(()).unwrap(), ctx).unwrap();
            chunked_stream = kind == h1proto::framing::BodyKind::Chunked;
            if !switch {
                for piece in body.pieces() {
                    if send_body {
                        enc.send_data(piece).unwrap();
                    }
                }
                let trailers = (chunked_stream && body.trailers).then(trailer_map);
                enc.finish(trailers).unwrap();
            }
        } else {
            chunked_stream = false;
            enc.send_response(head().body(supplied.clone()).unwrap(), ctx).unwrap();
        }
        prop_assert!(enc.is_finished());
        let wire = drain(enc.output());

        let mut dec = ResponseDecoder::new(Limits::default());
        dec.expect_response_to(&request);
        let events = decode_all(&wire, &splits, |buf, eof| {
            if eof { dec.decode_eof(buf) } else { dec.decode(buf) }
        });
        let d = collect(events);
        prop_assert_eq!(d.interim, interim_sent);
        prop_assert_eq!(d.heads.len(), 1);
        let got = &d.heads[0];
        prop_assert_eq!(got.status(), status);
        assert_fields_kept(&fields, got.headers());
        if peer10 || bodiless_by_status(code, &request) {
            prop_assert!(!got.headers().contains_key("transfer-encoding"));
        }
        if request == Method::HEAD && !body.streaming && !caller_chunked
            && !bodiless_by_status(code, &request)
        {
            // The GET-equivalent length is announced.
            let cl = got.headers().get("content-length").map(|v| v.to_str().unwrap().to_string());
            prop_assert_eq!(cl, Some(body.len.to_string()));
        }
        prop_assert_eq!(&d.data, &expected);
        if chunked_stream && body.trailers {
            prop_assert_eq!(d.trailers, Some(trailer_map()));
        }
        if !switch {
            let end = d.end.expect("the response ended");
            prop_assert_eq!(end.is_reusable(), enc.keep_alive().is_reusable());
        }
    }
}

fn bodiless_by_status(code: u16, request: &Method) -> bool {
    (100..200).contains(&code)
        || code == 204
        || code == 304
        || (request == Method::CONNECT && (200..300).contains(&code))
}
