//! The wire view of decoded heads (`h1proto::wire::WireHead`): off unless
//! asked for; when on, the field lines as received (spelling, order,
//! repeats apart), the request-target and reason phrase as received, and
//! the head's bytes without a copy, the same however the input is split.
//! `tests/decode/split_invariance.rs` checks it against the decoded fields on
//! generated, mutated and lenient input; `tests/wire/wire_roundtrip.rs` encodes
//! heads back from it.

use bytes::BytesMut;
use h1proto::wire::{FieldOrder, WireHead};
use h1proto::{
    Config, Event, Limits, RequestDecoder, ResponseDecoder, ServerConnection, UsageError,
    leniency::{RequestLeniency, ResponseLeniency},
};
use http::{Request, Response};

/// A head's wire view, as owned data.
#[derive(Debug, Clone, PartialEq, Eq)]
struct View {
    start: Vec<u8>,
    target: Option<Vec<u8>>,
    reason: Option<Vec<u8>>,
    fields: Vec<(String, String)>,
    bytes: Vec<u8>,
}

fn view(wire: &WireHead) -> View {
    View {
        start: wire.start_line().to_vec(),
        target: wire.target().map(<[u8]>::to_vec),
        reason: wire.reason().map(<[u8]>::to_vec),
        fields: wire
            .fields()
            .map(|(n, v)| {
                (
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect(),
        bytes: wire.bytes().to_vec(),
    }
}

fn pairs(fields: &[(&str, &str)]) -> Vec<(String, String)> {
    fields
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// The heads (final and interim) `input` decodes to, fed in pieces cut at
/// `cuts`: each with its wire view, if it has one.
fn heads_cut<D: Decode>(mut dec: D, input: &[u8], cuts: &[usize]) -> Vec<(D::Head, Option<View>)> {
    let mut buf = BytesMut::new();
    let mut heads = Vec::new();
    let mut from = 0;
    for to in cuts.iter().copied().chain([input.len()]) {
        buf.extend_from_slice(&input[from..to]);
        from = to;
        while let Some(head) = dec.next_head(&mut buf) {
            let wire = D::wire(&head).map(view);
            heads.push((head, wire));
        }
    }
    heads
}

/// The wire views of the heads of `input`, checked to be the same whole,
/// at every single split and byte by byte.
fn views<D: Decode>(make: impl Fn() -> D, input: &[u8]) -> Vec<Option<View>> {
    let whole: Vec<_> = heads_cut(make(), input, &[])
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert!(!whole.is_empty(), "no head in {input:?}");
    for at in 1..input.len() {
        let split: Vec<_> = heads_cut(make(), input, &[at])
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        assert_eq!(split, whole, "split at {at}");
    }
    let cuts: Vec<usize> = (1..input.len()).collect();
    let bytes: Vec<_> = heads_cut(make(), input, &cuts)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert_eq!(bytes, whole, "byte by byte");
    whole
}

trait Decode {
    type Head;
    fn next_head(&mut self, buf: &mut BytesMut) -> Option<Self::Head>;
    fn wire(head: &Self::Head) -> Option<&WireHead>;
}

impl Decode for RequestDecoder {
    type Head = Request<()>;
    fn next_head(&mut self, buf: &mut BytesMut) -> Option<Request<()>> {
        loop {
            match self.decode(buf).expect("a valid request")? {
                Event::Head { head, .. } => return Some(head),
                _ => continue,
            }
        }
    }
    fn wire(head: &Request<()>) -> Option<&WireHead> {
        head.extensions().get()
    }
}

impl Decode for ResponseDecoder {
    type Head = Response<()>;
    fn next_head(&mut self, buf: &mut BytesMut) -> Option<Response<()>> {
        loop {
            match self.decode(buf).expect("a valid response")? {
                Event::Head { head, .. } | Event::Interim(head) => return Some(head),
                _ => continue,
            }
        }
    }
    fn wire(head: &Response<()>) -> Option<&WireHead> {
        head.extensions().get()
    }
}

fn requests(leniency: RequestLeniency) -> impl Fn() -> RequestDecoder {
    move || {
        let mut dec = RequestDecoder::with_leniency(Limits::default(), leniency);
        dec.set_wire_view(true);
        dec
    }
}

fn responses(leniency: ResponseLeniency) -> impl Fn() -> ResponseDecoder {
    move || {
        let mut dec = ResponseDecoder::with_leniency(Limits::default(), leniency);
        dec.set_wire_view(true);
        dec
    }
}

fn one(views: Vec<Option<View>>) -> View {
    assert_eq!(views.len(), 1, "{views:?}");
    views.into_iter().next().unwrap().expect("a wire view")
}

#[test]
fn nothing_is_attached_unless_asked_for() {
    let req = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    let heads = heads_cut(RequestDecoder::new(Limits::default()), req, &[]);
    assert!(heads[0].0.extensions().is_empty());
    assert!(!RequestDecoder::new(Limits::default()).wire_view());
    let res = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let heads = heads_cut(ResponseDecoder::new(Limits::default()), res, &[]);
    assert!(heads[0].0.extensions().is_empty());

    // A connection follows its configuration.
    for on in [false, true] {
        let mut config = Config::default();
        config.wire_view = on;
        let mut conn = ServerConnection::new(config);
        let mut buf = BytesMut::from(&req[..]);
        let Ok(Some(Event::Head { head, .. })) = conn.poll_event(&mut buf) else {
            panic!("no head")
        };
        assert_eq!(head.extensions().get::<WireHead>().is_some(), on);
    }
}

#[test]
fn field_lines_keep_their_order_spelling_and_repeats() {
    let input = b"POST /up HTTP/1.1\r\nhost: example.com\r\nX-A: 1\r\nCOOKIE: c=1\r\n\
                  x-b: 2\r\nX-a: 3, 4\r\ncontent-Length: 0\r\nCookie: c=2\r\n\r\n";
    let got = one(views(requests(RequestLeniency::strict()), input));
    assert_eq!(
        got.fields,
        pairs(&[
            ("host", "example.com"),
            ("X-A", "1"),
            ("COOKIE", "c=1"),
            ("x-b", "2"),
            ("X-a", "3, 4"),
            ("content-Length", "0"),
            ("Cookie", "c=2"),
        ])
    );
    // The message itself groups them and lowercases their names.
    let heads = heads_cut(requests(RequestLeniency::strict())(), input, &[]);
    let names: Vec<_> = heads[0]
        .0
        .headers()
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names[..3], ["host", "x-a", "x-a"]);
}

#[test]
fn the_head_bytes_are_shared_not_copied() {
    // Two empty lines before the request line are not part of its head.
    let input = b"\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\nX-Y:  b c \t\r\n\r\nleft";
    let mut dec = requests(RequestLeniency::strict())();
    let mut buf = BytesMut::from(&input[..]);
    let base = buf.as_ptr() as usize;
    let Ok(Some(Event::Head { head, .. })) = dec.decode(&mut buf) else {
        panic!("no head")
    };
    let wire = head.extensions().get::<WireHead>().unwrap();
    assert_eq!(wire.bytes().as_ptr() as usize, base + 4);
    assert_eq!(
        &wire.bytes()[..],
        b"GET /x HTTP/1.1\r\nHost: a\r\nX-Y:  b c \t\r\n\r\n"
    );
    assert_eq!(wire.start_line(), b"GET /x HTTP/1.1");
    // Values without the whitespace around them, as slices of the head.
    let (name, value) = wire.fields().nth(1).unwrap();
    assert_eq!((name, value), (&b"X-Y"[..], &b"b c"[..]));
    assert_eq!(value.as_ptr() as usize, base + 4 + 17 + 9 + 6);
    let shared = wire.bytes().slice_ref(value);
    assert_eq!(shared.as_ptr(), value.as_ptr());
}

#[test]
fn the_request_target_as_received() {
    let cases: [(&[u8], &[u8]); 6] = [
        (
            b"GET /a%2Fb?q=%7E&r HTTP/1.1\r\nHost: a\r\n\r\n",
            b"/a%2Fb?q=%7E&r",
        ),
        (
            b"GET HTTP://Example.COM HTTP/1.1\r\nHost: a\r\n\r\n",
            b"HTTP://Example.COM",
        ),
        (
            b"GET http://a:8080/x?y HTTP/1.0\r\n\r\n",
            b"http://a:8080/x?y",
        ),
        (
            b"CONNECT Example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n",
            b"Example.com:443",
        ),
        (b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", b"*"),
        (b"GET / HTTP/1.7\r\nHost: a\r\n\r\n", b"/"),
    ];
    for (input, target) in cases {
        let got = one(views(requests(RequestLeniency::strict()), input));
        assert_eq!(got.target.as_deref(), Some(target), "{input:?}");
        assert_eq!(got.reason, None);
    }
}

#[test]
fn the_reason_phrase_as_received() {
    let cases: [(ResponseLeniency, &[u8], &[u8]); 5] = [
        (ResponseLeniency::strict(), b"HTTP/1.1 200 OK\r\n", b"OK"),
        (
            ResponseLeniency::strict(),
            b"HTTP/1.1 200 Fine  \r\n",
            b"Fine  ",
        ),
        (ResponseLeniency::strict(), b"HTTP/1.0 404 \r\n", b""),
        (
            ResponseLeniency::strict(),
            b"HTTP/1.1 299 caf\xc3\xa9 \x80\r\n",
            b"caf\xc3\xa9 \x80",
        ),
        (ResponseLeniency::default(), b"HTTP/1.1 204\r\n", b""),
    ];
    for (leniency, line, reason) in cases {
        let input = [line, &b"Content-Length: 0\r\n\r\n"[..]].concat();
        let got = one(views(responses(leniency), &input));
        assert_eq!(got.reason.as_deref(), Some(reason), "{line:?}");
        assert_eq!(got.target, None);
        assert_eq!(got.start, line[..line.len() - 2]);
    }
}

#[test]
fn an_obs_folded_value_spans_its_lines_as_received() {
    let input =
        b"HTTP/1.1 200 OK\r\nX-Long: a\r\n  b\r\n\tc \r\nX-Next: d\r\nContent-Length: 0\r\n\r\n";
    let got = one(views(responses(ResponseLeniency::strict()), input));
    assert_eq!(
        got.fields,
        pairs(&[
            ("X-Long", "a\r\n  b\r\n\tc"),
            ("X-Next", "d"),
            ("Content-Length", "0")
        ])
    );
    // The message holds each fold as one SP.
    let heads = heads_cut(responses(ResponseLeniency::strict())(), input, &[]);
    assert_eq!(heads[0].0.headers()["x-long"], "a b c");

    // A request with `obs_fold` on, and with a fold of nothing.
    let mut lenient = RequestLeniency::strict();
    lenient.obs_fold = true;
    let input = b"GET / HTTP/1.1\r\nHost: a\r\nX-F:\r\n z\r\n\r\n";
    let got = one(views(requests(lenient), input));
    assert_eq!(got.fields, pairs(&[("Host", "a"), ("X-F", "z")]));
}

#[test]
fn lines_a_switch_skipped_are_not_field_lines() {
    let all = ResponseLeniency::all();
    let input = b"HTTP/1.1 200 OK\r\n folded into nothing\r\nServer : x\r\nno colon\r\n\
                  X(y): z\r\n more of a skipped line\r\nX-Ok: 1\nContent-Length: 0\r\n\r\n";
    let got = one(views(responses(all), input));
    assert_eq!(
        got.fields,
        pairs(&[("Server", "x"), ("X-Ok", "1"), ("Content-Length", "0")])
    );
    assert_eq!(got.bytes, input);

    // Without `space_before_colon`, `skip_invalid_fields` skips that line too.
    let mut skip = ResponseLeniency::strict();
    skip.skip_invalid_fields = true;
    let input = b"HTTP/1.1 200 OK\r\nServer : x\r\nX-Ok: 1\r\nContent-Length: 0\r\n\r\n";
    let got = one(views(responses(skip), input));
    assert_eq!(got.fields, pairs(&[("X-Ok", "1"), ("Content-Length", "0")]));
    let heads = heads_cut(responses(skip)(), input, &[]);
    assert!(!heads[0].0.headers().contains_key("server"));
}

#[test]
fn a_content_length_the_switch_removed_is_still_a_field_line() {
    let mut lenient = RequestLeniency::strict();
    lenient.chunked_with_content_length = true;
    let input =
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n\
                  3\r\nabc\r\n0\r\n\r\n";
    let got = one(views(requests(lenient), input));
    assert_eq!(
        got.fields,
        pairs(&[
            ("Host", "a"),
            ("Content-Length", "3"),
            ("Transfer-Encoding", "chunked")
        ])
    );
    let heads = heads_cut(requests(lenient)(), input, &[]);
    assert!(!heads[0].0.headers().contains_key("content-length"));
}

#[test]
fn interim_responses_and_every_pipelined_head_carry_one() {
    let input = b"HTTP/1.1 100 Continue\r\nX-I: 1\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
                  HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 404 Gone\r\ncontent-length: 0\r\n\r\n";
    let make = || {
        let mut dec = responses(ResponseLeniency::strict())();
        dec.expect_response_to(&http::Method::POST);
        dec.expect_response_to(&http::Method::GET);
        dec
    };
    let got: Vec<View> = views(make, input).into_iter().map(Option::unwrap).collect();
    let starts: Vec<_> = got.iter().map(|v| v.start.clone()).collect();
    assert_eq!(
        starts,
        [
            &b"HTTP/1.1 100 Continue"[..],
            b"HTTP/1.1 103 Early Hints",
            b"HTTP/1.1 200 OK",
            b"HTTP/1.1 404 Gone"
        ]
    );
    assert_eq!(got[1].fields, pairs(&[("Link", "</a>")]));
    assert_eq!(got[3].fields, pairs(&[("content-length", "0")]));
}

#[test]
fn a_field_order_is_built_from_names_or_a_wire_view() {
    let input = b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nx-a: 2\r\n\r\n";
    let heads = heads_cut(requests(RequestLeniency::strict())(), input, &[]);
    let wire = heads[0].0.extensions().get::<WireHead>().unwrap();
    let order = FieldOrder::from(wire);
    let names: Vec<&[u8]> = order.names().collect();
    assert_eq!(names, [&b"Host"[..], b"X-A", b"x-a"]);
    assert_eq!(
        order,
        FieldOrder::from_names(["Host", "X-A", "x-a"]).unwrap()
    );
    assert_eq!(format!("{order:?}"), r#"["Host", "X-A", "x-a"]"#);

    let mut order = FieldOrder::new();
    assert!(order.is_empty());
    for bad in ["", "X A", "X:", "é", "a\r\n"] {
        assert_eq!(
            order.push(bad),
            Err(UsageError::InvalidFieldName),
            "{bad:?}"
        );
    }
    assert!(order.is_empty());
    order.push("X-Ok").unwrap();
    assert_eq!(order.len(), 1);
}

/// A recycled extension map serves the next head emptied: nothing of the
/// message it came from stays in it.
#[test]
fn a_recycled_extension_map_carries_nothing_over() {
    let mut dec = h1proto::RequestDecoder::new(h1proto::Limits::default());
    dec.set_wire_view(true);
    let mut buf = bytes::BytesMut::from(
        &b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: b\r\n\r\n"[..],
    );
    let Some(h1proto::Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
        panic!("no head")
    };
    let (mut parts, ()) = head.into_parts();
    parts.extensions.insert(7u32);
    dec.give_spare_extensions(parts.extensions);
    assert!(matches!(
        dec.decode(&mut buf),
        Ok(Some(h1proto::Event::End(_)))
    ));
    let Some(h1proto::Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
        panic!("no head")
    };
    assert_eq!(head.extensions().get::<u32>(), None);
    let wire = head.extensions().get::<h1proto::wire::WireHead>().unwrap();
    assert_eq!(wire.target(), Some(&b"/2"[..]));
    assert_eq!(head.extensions().len(), 1);
}

/// A map given back holding a wire view alone keeps it for the next
/// head, whose view is written over it: the same view a new map gets,
/// for heads of more and of fewer lines than the one before; with the
/// wire view turned off meanwhile, the next head carries none.
#[test]
fn a_recycled_wire_view_shows_the_next_head() {
    let heads: [&[u8]; 4] = [
        b"HTTP/1.1 200 OK\r\nServer: a\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 204 Nothing Here\r\nX-B: 1\r\nx-a: 2\r\nX-b: 3\r\nVia: 1.1 p\r\nDate: x\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nContent-Length: 0\r\n\r\n",
    ];
    let decode = |dec: &mut ResponseDecoder, head: &[u8]| {
        let mut buf = BytesMut::from(head);
        let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
            panic!("no head")
        };
        while !matches!(dec.decode(&mut buf).unwrap(), Some(Event::End(_)) | None) {}
        head
    };
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.set_wire_view(true);
    for head in heads.iter().chain(&heads) {
        let res = decode(&mut dec, head);
        let mut fresh = ResponseDecoder::new(Limits::default());
        fresh.set_wire_view(true);
        let want = decode(&mut fresh, head);
        let wire = |res: &Response<()>| view(res.extensions().get::<WireHead>().unwrap());
        assert_eq!(wire(&res), wire(&want));
        assert_eq!(res.extensions().len(), want.extensions().len());
        let (parts, ()) = res.into_parts();
        dec.give_spare_extensions(parts.extensions);
    }
    dec.set_wire_view(false);
    let res = decode(&mut dec, heads[0]);
    assert!(res.extensions().is_empty());
}

/// A head sent with its wire view is written as with the order of its
/// names (`FieldOrder::from`), byte for byte, whatever the spacing of its
/// lines, their folds, and the edits made to its map.
#[test]
fn a_wire_view_writes_as_the_order_of_its_names() {
    let head = b"HTTP/1.1 200 OK\r\nServer: a\r\nX-A:1\r\nX-A:  2 \r\nx-b: 3\r\n\
        X-C: c\r\n d\r\nDate: now\r\nX-A: 4\r\nConnection: keep-alive\r\nETag: \"e\"\r\n\
        Accept-Ranges: bytes\r\nX-D:\r\nX-E: \r\nContent-Length: 0\r\n\r\n";
    let edits: [fn(&mut http::HeaderMap); 5] = [
        |_| {},
        |m| h1proto::remove_hop_by_hop(m),
        |m| {
            m.insert("x-b", "edited".parse().unwrap());
            m.append("via", "1.1 p".parse().unwrap());
        },
        |m| {
            m.remove("server");
            m.remove("x-a");
            m.append("x-a", "new".parse().unwrap());
        },
        |m| {
            let date = m.remove("date").unwrap();
            m.insert("etag", date);
        },
    ];
    let encode = |res: Response<()>| {
        let mut enc = h1proto::ResponseEncoder::default();
        enc.send_head(res, h1proto::ResponseContext::default())
            .unwrap();
        enc.finish(None).unwrap();
        let out = enc.output();
        bytes::Buf::copy_to_bytes(out, bytes::Buf::remaining(out))
    };
    for edit in edits {
        let mut dec = ResponseDecoder::new(Limits::default());
        dec.set_wire_view(true);
        let mut buf = BytesMut::from(&head[..]);
        let Some(Event::Head { head, .. }) = dec.decode(&mut buf).unwrap() else {
            panic!("no head")
        };
        let (mut parts, ()) = head.into_parts();
        edit(&mut parts.headers);
        let order = FieldOrder::from(parts.extensions.get::<WireHead>().unwrap());
        let mut by_names = Response::from_parts(parts.clone(), ());
        by_names.extensions_mut().insert(order);
        let want = encode(by_names);
        assert_eq!(encode(Response::from_parts(parts, ())), want);
    }
}
