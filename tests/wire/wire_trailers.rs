//! The wire view of trailer sections (`h1proto::wire::WireTrailers`):
//! kept only with the wire view on; then the field lines as received
//! (spelling, order, repeats apart) as slices of the section's bytes, the
//! same however the input is split, from the `Trailers` event until the
//! next message's head. Encoders write trailers in its order and spelling
//! (`finish_in_order`), the map staying authoritative, and what they
//! write decodes back to the same lines; sessions carry it both ways.

use h1proto_test_support::session as session_support;

use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use h1proto::leniency::{RequestLeniency, ResponseLeniency};
use h1proto::wire::{FieldOrder, WireHead, WireTrailers};
use h1proto::{
    ClientSession, EncoderConfig, ErrorKind, Event, Limits, RequestDecoder, RequestEncoder,
    ResponseContext, ResponseDecoder, ResponseEncoder, ServerSession, TrailerFields, UsageError,
};
use http::{HeaderMap, Request, Response};
use proptest::prelude::*;
use proptest::sample::select;
use session_support::{Harness, test_config};

type Lines = Vec<(String, String)>;

fn lines(wire: &WireTrailers) -> Lines {
    wire.fields()
        .map(|(n, v)| {
            (
                String::from_utf8(n.to_vec()).unwrap(),
                String::from_utf8(v.to_vec()).unwrap(),
            )
        })
        .collect()
}

fn pairs(fields: &[(&str, &str)]) -> Lines {
    fields
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// What one message's trailers came to: the map of its `Trailers`
/// event, and the decoder's wire view at that event and at its `End`.
#[derive(Debug, Clone, PartialEq)]
struct Got {
    map: Option<HeaderMap>,
    at_trailers: Option<(Lines, Vec<u8>)>,
    at_end: Option<(Lines, Vec<u8>)>,
}

/// What the tests need of a decoder of either role.
trait Dec {
    type Head: h1proto::MessageHead;
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event<Self::Head>>, h1proto::Error>;
    fn wire_trailers(&self) -> Option<&WireTrailers>;
}

macro_rules! dec {
    ($decoder:ty, $head:ty) => {
        impl Dec for $decoder {
            type Head = $head;
            fn decode(
                &mut self,
                buf: &mut BytesMut,
            ) -> Result<Option<Event<$head>>, h1proto::Error> {
                <$decoder>::decode(self, buf)
            }
            fn wire_trailers(&self) -> Option<&WireTrailers> {
                <$decoder>::wire_trailers(self)
            }
        }
    };
}

dec!(RequestDecoder, Request<()>);
dec!(ResponseDecoder, Response<()>);

fn wire_of(dec: &impl Dec) -> Option<(Lines, Vec<u8>)> {
    dec.wire_trailers().map(|w| (lines(w), w.bytes().to_vec()))
}

/// The trailers of every message of `input`, fed in pieces cut at
/// `cuts`; also checks that no wire view is shown while a head or body
/// is being read.
fn decode_cut(mut dec: impl Dec, input: &[u8], cuts: &[usize]) -> Vec<Got> {
    let mut buf = BytesMut::new();
    let mut got = Vec::new();
    let mut current: Option<Got> = None;
    let mut from = 0;
    for to in cuts.iter().copied().chain([input.len()]) {
        buf.extend_from_slice(&input[from..to]);
        from = to;
        loop {
            let event = dec.decode(&mut buf).expect("valid input");
            match event {
                Some(Event::Head { .. }) => {
                    assert_eq!(dec.wire_trailers(), None, "a head clears it");
                    current = Some(Got {
                        map: None,
                        at_trailers: None,
                        at_end: None,
                    });
                }
                Some(Event::Data(_)) => assert_eq!(dec.wire_trailers(), None),
                Some(Event::Trailers(map)) => {
                    let c = current.as_mut().unwrap();
                    c.map = Some(map);
                    c.at_trailers = wire_of(&dec);
                }
                Some(Event::End(_)) => {
                    let mut c = current.take().unwrap();
                    c.at_end = wire_of(&dec);
                    got.push(c);
                }
                Some(_) => {}
                None => break,
            }
        }
    }
    got
}

/// [`decode_cut`] whole, at every single split and byte by byte: the
/// same every time.
fn decode_all_splits<D: Dec>(make: impl Fn() -> D, input: &[u8]) -> Vec<Got> {
    let whole = decode_cut(make(), input, &[]);
    assert!(!whole.is_empty());
    for at in 1..input.len() {
        assert_eq!(
            decode_cut(make(), input, &[at]),
            whole,
            "split at {at} of {:?}",
            String::from_utf8_lossy(input)
        );
    }
    let bytewise: Vec<usize> = (1..input.len()).collect();
    assert_eq!(decode_cut(make(), input, &bytewise), whole, "byte by byte");
    whole
}

fn requests(wire: bool, leniency: RequestLeniency) -> impl Fn() -> RequestDecoder {
    move || {
        let mut dec = RequestDecoder::with_leniency(Limits::default(), leniency);
        dec.set_wire_view(wire);
        dec
    }
}

fn responses(wire: bool, leniency: ResponseLeniency) -> impl Fn() -> ResponseDecoder {
    move || {
        let mut dec = ResponseDecoder::with_leniency(Limits::default(), leniency);
        dec.set_wire_view(wire);
        for _ in 0..4 {
            dec.expect_response_to(&http::Method::GET);
        }
        dec
    }
}

const CHUNKED_REQUEST: &str = "POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
const PLAIN_REQUEST: &str = "GET /next HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn field_lines_keep_their_order_spelling_and_repeats() {
    let section = "X-B: 1\r\nx-a:2\r\nX-b: \t3 \r\n\r\n";
    let input = format!("{CHUNKED_REQUEST}3\r\nabc\r\n0\r\n{section}{PLAIN_REQUEST}");
    let got = decode_all_splits(requests(true, RequestLeniency::strict()), input.as_bytes());
    assert_eq!(got.len(), 2);
    let want = pairs(&[("X-B", "1"), ("x-a", "2"), ("X-b", "3")]);
    let wire = Some((want, section.as_bytes().to_vec()));
    assert_eq!(got[0].at_trailers, wire);
    assert_eq!(got[0].at_end, wire, "kept until the next head");
    // The map as before: lower case, the values of a name together.
    let map = got[0].map.as_ref().unwrap();
    let all: Vec<_> = map
        .iter()
        .map(|(n, v)| (n.as_str(), v.to_str().unwrap()))
        .collect();
    assert_eq!(all, [("x-b", "1"), ("x-b", "3"), ("x-a", "2")]);
    // The next message has none.
    assert_eq!(got[1].map, None);
    assert_eq!(got[1].at_end, None);
}

#[test]
fn nothing_is_kept_unless_asked_for() {
    let input = format!("{CHUNKED_REQUEST}0\r\nX-A: 1\r\n\r\n");
    let got = decode_all_splits(requests(false, RequestLeniency::strict()), input.as_bytes());
    assert!(got[0].map.is_some());
    assert_eq!((&got[0].at_trailers, &got[0].at_end), (&None, &None));

    // With the view on, a body without trailers has none either.
    let input = format!("{CHUNKED_REQUEST}2\r\nhi\r\n0\r\n\r\n");
    let got = decode_all_splits(requests(true, RequestLeniency::strict()), input.as_bytes());
    assert_eq!(got[0].map, None);
    assert_eq!(got[0].at_end, None);
}

#[test]
fn a_head_without_a_chunked_body_clears_it_too() {
    let input = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nEtag: \"x\"\r\n\r\n\
                 HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let got = decode_all_splits(
        responses(true, ResponseLeniency::strict()),
        input.as_bytes(),
    );
    assert_eq!(
        got[0].at_end.as_ref().map(|w| w.0.clone()),
        Some(pairs(&[("Etag", "\"x\"")]))
    );
    assert_eq!(got[1].at_end, None);
}

#[test]
fn the_section_bytes_are_shared_not_copied() {
    let input = format!("{CHUNKED_REQUEST}1\r\nz\r\n0\r\nX-Sum:  ab \r\n\r\n");
    let mut dec = requests(true, RequestLeniency::strict())();
    let mut buf = BytesMut::from(input.as_bytes());
    let base = buf.as_ptr() as usize;
    while !matches!(dec.decode(&mut buf).unwrap(), Some(Event::Trailers(_))) {}
    let wire = dec.wire_trailers().unwrap();
    let at = input.find("X-Sum").unwrap();
    assert_eq!(wire.bytes().as_ptr() as usize, base + at);
    assert_eq!(&wire.bytes()[..], b"X-Sum:  ab \r\n\r\n");
    let (_, value) = wire.fields().next().unwrap();
    assert_eq!(value, b"ab");
    assert_eq!(value.as_ptr() as usize, base + at + 8);
}

#[test]
fn lines_a_switch_skipped_or_trimmed_follow_the_parse() {
    let mut leniency = ResponseLeniency::strict();
    leniency.space_before_colon = true;
    leniency.skip_invalid_fields = true;
    leniency.bare_lf = true;
    let section = "X-A \t: 1\nno colon here\r\nBad Name: 2\r\nX-b: 3\r\n\n";
    let input = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n{section}");
    let got = decode_all_splits(responses(true, leniency), input.as_bytes());
    let (wire, bytes) = got[0].at_end.clone().unwrap();
    assert_eq!(wire, pairs(&[("X-A", "1"), ("X-b", "3")]));
    assert_eq!(bytes, section.as_bytes());
    let map = got[0].map.as_ref().unwrap();
    assert_eq!(map.len(), 2);
    assert_eq!(map["x-a"], "1");
}

#[test]
fn a_refused_trailer_section_leaves_no_view() {
    let input = format!("{CHUNKED_REQUEST}0\r\nX-A: 1\r\nContent-Length: 3\r\n\r\n");
    let mut dec = requests(true, RequestLeniency::strict())();
    let mut buf = BytesMut::from(input.as_bytes());
    let err = loop {
        match dec.decode(&mut buf) {
            Ok(Some(_)) => {}
            Ok(None) => panic!("accepted"),
            Err(err) => break err,
        }
    };
    assert_eq!(err.kind(), ErrorKind::InvalidTrailer);
    assert_eq!(dec.wire_trailers(), None);
}

// ------------------------------------------------------------ generated

/// Names few enough that they repeat.
const NAMES: &[&str] = &["x-a", "x-b", "etag", "server-timing", "x-checksum"];

/// A spelling of a name: each letter in either case.
fn spelled() -> impl Strategy<Value = String> {
    (select(NAMES), prop::collection::vec(any::<bool>(), 16)).prop_map(|(name, upper)| {
        name.chars()
            .zip(upper.into_iter().cycle())
            .map(|(c, u)| if u { c.to_ascii_uppercase() } else { c })
            .collect()
    })
}

/// A field line: name, value, and whether it is written with whitespace
/// around the value.
fn line() -> impl Strategy<Value = (String, String, bool)> {
    (
        spelled(),
        "[a-z0-9=;,]([a-z0-9 =;,]{0,6}[a-z0-9=;,])?",
        any::<bool>(),
    )
}

fn section(lines: &[(String, String, bool)], canonical: bool) -> String {
    let mut out = String::new();
    for (name, value, padded) in lines {
        if *padded && !canonical {
            out.push_str(&format!("{name}:\t {value} \r\n"));
        } else {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    out.push_str("\r\n");
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the split, the wire view holds the lines as written, and
    /// the map holds the same values grouped by name.
    #[test]
    fn generated_sections_decode_to_their_lines(
        generated in prop::collection::vec(line(), 1..6),
        body in "[a-z]{0,5}",
        response in any::<bool>(),
    ) {
        let section = section(&generated, false);
        let chunk = if body.is_empty() { String::new() } else { format!("{:x}\r\n{body}\r\n", body.len()) };
        let want: Lines = generated.iter().map(|(n, v, _)| (n.clone(), v.clone())).collect();
        let got = if response {
            let input = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{chunk}0\r\n{section}");
            decode_all_splits(responses(true, ResponseLeniency::strict()), input.as_bytes())
        } else {
            let input = format!("{CHUNKED_REQUEST}{chunk}0\r\n{section}");
            decode_all_splits(requests(true, RequestLeniency::strict()), input.as_bytes())
        };
        let (wire, bytes) = got[0].at_end.clone().unwrap();
        prop_assert_eq!(&wire, &want);
        prop_assert_eq!(bytes, section.as_bytes());
        let map = got[0].map.clone().unwrap();
        for name in NAMES {
            let from_map: Vec<&str> = map.get_all(*name).iter().map(|v| v.to_str().unwrap()).collect();
            let from_wire: Vec<&str> = wire.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect();
            prop_assert_eq!(from_map, from_wire);
        }
    }

    /// A message decoded with the wire view and sent again with
    /// `finish_in_order` and its `WireTrailers` gives back the same bytes,
    /// and decodes back to the same trailer lines; both encoders.
    #[test]
    fn trailers_sent_in_wire_order_decode_back_the_same(
        generated in prop::collection::vec(line(), 1..6),
        body in "[a-z]{1,5}",
        title_case in any::<bool>(),
    ) {
        let section = section(&generated, true);
        let chunk = format!("{:x}\r\n{body}\r\n", body.len());
        let mut config = EncoderConfig::default();
        config.title_case_fields = title_case;

        // Requests.
        let input = format!("{CHUNKED_REQUEST}{chunk}0\r\n{section}");
        let (head, data, map, wire) = take_request(input.as_bytes());
        let mut enc = RequestEncoder::new(config.clone());
        enc.send_head(head).unwrap();
        enc.send_data(data).unwrap();
        enc.finish_in_order(map.clone(), &wire).unwrap();
        let out = drain(enc.output());
        prop_assert_eq!(&out[..], input.as_bytes());
        let got = decode_cut(requests(true, RequestLeniency::strict())(), &out, &[]);
        prop_assert_eq!(got[0].at_end.as_ref().map(|w| &w.0), Some(&lines(&wire)));
        prop_assert_eq!(got[0].map.as_ref(), Some(&map));

        // Responses.
        let input = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{chunk}0\r\n{section}");
        let (head, data, map, wire) = take_response(input.as_bytes());
        let mut enc = ResponseEncoder::new(config);
        enc.send_head(head, ResponseContext::default()).unwrap();
        enc.send_data(data).unwrap();
        enc.finish_in_order(map.clone(), &wire).unwrap();
        let out = drain(enc.output());
        prop_assert_eq!(&out[..], input.as_bytes());
        let got = decode_cut(responses(true, ResponseLeniency::strict())(), &out, &[]);
        prop_assert_eq!(got[0].at_end.as_ref().map(|w| &w.0), Some(&lines(&wire)));
        prop_assert_eq!(got[0].map.as_ref(), Some(&map));
    }
}

fn drain(out: &mut h1proto::Segments) -> Bytes {
    out.copy_to_bytes(out.remaining())
}

/// The head, body, trailers and trailers' wire view of one chunked
/// request.
fn take_request(input: &[u8]) -> (Request<()>, Bytes, HeaderMap, WireTrailers) {
    let mut dec = requests(true, RequestLeniency::strict())();
    let mut buf = BytesMut::from(input);
    let (mut head, mut data, mut map) = (None, BytesMut::new(), None);
    while let Some(event) = dec.decode(&mut buf).unwrap() {
        match event {
            Event::Head { head: h, .. } => head = Some(h),
            Event::Data(d) => data.extend_from_slice(&d),
            Event::Trailers(m) => map = Some(m),
            Event::End(_) => break,
            _ => {}
        }
    }
    let wire = dec.wire_trailers().cloned().unwrap();
    (head.unwrap(), data.freeze(), map.unwrap(), wire)
}

/// [`take_request`] for a response to GET.
fn take_response(input: &[u8]) -> (Response<()>, Bytes, HeaderMap, WireTrailers) {
    let mut dec = responses(true, ResponseLeniency::strict())();
    let mut buf = BytesMut::from(input);
    let (mut head, mut data, mut map) = (None, BytesMut::new(), None);
    while let Some(event) = dec.decode(&mut buf).unwrap() {
        match event {
            Event::Head { head: h, .. } => head = Some(h),
            Event::Data(d) => data.extend_from_slice(&d),
            Event::Trailers(m) => map = Some(m),
            Event::End(_) => break,
            _ => {}
        }
    }
    let wire = dec.wire_trailers().cloned().unwrap();
    (head.unwrap(), data.freeze(), map.unwrap(), wire)
}

// ------------------------------------------------------------- encoding

/// The trailer section a request encoder writes for `map` in `order`
/// (with `title_case`), after a chunked head.
fn trailer_section_of(
    map: HeaderMap,
    order: Option<&FieldOrder>,
    title_case: bool,
) -> Result<String, UsageError> {
    let mut config = EncoderConfig::default();
    config.title_case_fields = title_case;
    let mut enc = RequestEncoder::new(config);
    enc.send_head(Request::post("http://a/up")).unwrap();
    drain(enc.output());
    match order {
        Some(order) => enc.finish_in_order(map, order)?,
        None => enc.finish(Some(map))?,
    }
    let out = drain(enc.output());
    Ok(String::from_utf8(out.to_vec()).unwrap())
}

fn map(fields: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (n, v) in fields {
        map.append(
            http::HeaderName::from_bytes(n.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    map
}

#[test]
fn the_map_stays_authoritative_over_the_order() {
    let order = FieldOrder::from_names(["X-B", "X-A", "X-b", "Gone"]).unwrap();
    // Edited values keep their place and spelling; a name whose value is
    // gone writes nothing; added values and extra values follow in the
    // map's order.
    let fields = map(&[
        ("x-a", "2"),
        ("x-b", "1"),
        ("x-b", "3"),
        ("x-b", "4"),
        ("x-new", "5"),
    ]);
    assert_eq!(
        trailer_section_of(fields.clone(), Some(&order), false).unwrap(),
        "0\r\nX-B: 1\r\nX-A: 2\r\nX-b: 3\r\nx-b: 4\r\nx-new: 5\r\n\r\n"
    );
    // Title case applies to what the order does not spell.
    assert_eq!(
        trailer_section_of(fields.clone(), Some(&order), true).unwrap(),
        "0\r\nX-B: 1\r\nX-A: 2\r\nX-b: 3\r\nX-B: 4\r\nX-New: 5\r\n\r\n"
    );
    // An empty order writes the map as `finish` does.
    assert_eq!(
        trailer_section_of(fields.clone(), Some(&FieldOrder::new()), false).unwrap(),
        trailer_section_of(fields, None, false).unwrap()
    );
    // An empty map writes no trailers.
    assert_eq!(
        trailer_section_of(HeaderMap::new(), Some(&order), false).unwrap(),
        "0\r\n\r\n"
    );
}

#[test]
fn the_trailer_checks_are_those_of_finish() {
    let order = FieldOrder::from_names(["Content-Length"]).unwrap();
    assert_eq!(
        trailer_section_of(map(&[("content-length", "3")]), Some(&order), false),
        Err(UsageError::ForbiddenTrailer)
    );
    // Not chunked: refused, the queue untouched.
    let mut enc = RequestEncoder::default();
    enc.send_head(Request::post("http://a/").header("content-length", "0"))
        .unwrap();
    drain(enc.output());
    assert_eq!(
        enc.finish_in_order(map(&[("x-a", "1")]), &order),
        Err(UsageError::TrailersNotAllowed)
    );
    assert_eq!(enc.output().remaining(), 0);
    // No message in progress.
    let mut enc = RequestEncoder::default();
    assert_eq!(
        enc.finish_in_order(HeaderMap::new(), &order),
        Err(UsageError::WrongState)
    );
}

#[test]
fn a_field_order_is_built_from_wire_trailers() {
    let input = format!("{CHUNKED_REQUEST}0\r\nX-B: 1\r\nx-a: 2\r\nX-b: 3\r\n\r\n");
    let (_, _, _, wire) = take_request(input.as_bytes());
    let order = FieldOrder::from(&wire);
    let names: Vec<&[u8]> = order.names().collect();
    assert_eq!(names, [&b"X-B"[..], b"x-a", b"X-b"]);
    // Written through either, the same bytes.
    let fields = map(&[("x-b", "1"), ("x-b", "3"), ("x-a", "2")]);
    let via_order = trailer_section_of(fields.clone(), Some(&order), false).unwrap();
    let mut enc = RequestEncoder::default();
    enc.send_head(Request::post("http://a/up")).unwrap();
    drain(enc.output());
    enc.finish_in_order(fields, &wire).unwrap();
    assert_eq!(drain(enc.output()), via_order.as_bytes());
    assert_eq!(via_order, "0\r\nX-B: 1\r\nx-a: 2\r\nX-b: 3\r\n\r\n");
}

// ------------------------------------------------------------- sessions

fn config(wire: bool) -> h1proto::Config {
    let mut config = test_config();
    config.wire_view = wire;
    config
}

const TRAILERS: &str = "X-B: 1\r\nx-a: 2\r\nX-b: 3\r\n\r\n";

/// A relay: a server session reads a chunked request with trailers and
/// sends them back in its response with `finish_in_order`; a client
/// session reads them in the same order and spelling.
#[test]
fn sessions_carry_wire_trailers_both_ways() {
    for read_size in [1, 5, usize::MAX] {
        let t0 = Instant::now();
        let mut server = Harness::new(ServerSession::new(config(true), t0), t0);
        let mut client = Harness::new(ClientSession::new(config(true), t0), t0);
        server.read_size = read_size;
        client.read_size = read_size;

        server.send(format!("{CHUNKED_REQUEST}2\r\nhi\r\n0\r\n{TRAILERS}"));
        server.call(ServerSession::next_request).ready().unwrap();
        assert_eq!(server.s.wire_trailers(), None, "before the body");
        while server.call(ServerSession::read_data).ready().is_some() {}
        let wire = server.s.wire_trailers().cloned().expect("wire trailers");
        assert_eq!(
            lines(&wire),
            pairs(&[("X-B", "1"), ("x-a", "2"), ("X-b", "3")])
        );
        let fields = server.s.trailers().cloned().unwrap();

        server
            .s
            .sender()
            .send_head(Response::builder().header("transfer-encoding", "chunked"))
            .unwrap();
        server.s.sender().send_data("ok").unwrap();
        server.s.sender().finish_in_order(fields, &wire).unwrap();
        // Asking for the next request writes the response out.
        server.call(ServerSession::next_request).blocked();
        let out = server.take_wire();
        assert!(out.ends_with(&format!("0\r\n{TRAILERS}")), "{out:?}");

        // The client asks, and reads the response whole.
        client
            .s
            .sender()
            .send_request(Request::get("http://a/"))
            .unwrap();
        client.call(ClientSession::next_response).blocked();
        client.take_wire();
        client.send(out);
        let res = client
            .call(ClientSession::next_full_response)
            .ready()
            .unwrap();
        let wire = res.extensions().get::<WireTrailers>().expect("extension");
        assert_eq!(
            lines(wire),
            pairs(&[("X-B", "1"), ("x-a", "2"), ("X-b", "3")])
        );
        assert!(res.extensions().get::<TrailerFields>().is_some());
        assert!(res.extensions().get::<WireHead>().is_some());
    }
}

#[test]
fn sessions_keep_no_wire_trailers_unless_asked_for() {
    for wire in [false, true] {
        let t0 = Instant::now();
        let mut server = Harness::new(ServerSession::new(config(wire), t0), t0);
        server.send(format!("{CHUNKED_REQUEST}0\r\n{TRAILERS}"));
        let req = server
            .call(ServerSession::next_full_request)
            .ready()
            .unwrap();
        assert!(req.extensions().get::<TrailerFields>().is_some());
        assert_eq!(req.extensions().get::<WireTrailers>().is_some(), wire);
        // Moved into the request, both.
        assert_eq!(server.s.trailers(), None);
        assert_eq!(server.s.wire_trailers(), None);

        // Read in pieces, then the next request starts with none.
        server.s.sender().send_response(Response::new("")).unwrap();
        server.send(format!("{CHUNKED_REQUEST}0\r\n{TRAILERS}"));
        server.call(ServerSession::next_request).ready().unwrap();
        while server.call(ServerSession::read_data).ready().is_some() {}
        assert_eq!(server.s.wire_trailers().is_some(), wire);
        server.s.sender().send_response(Response::new("")).unwrap();
        server.send(PLAIN_REQUEST);
        server.call(ServerSession::next_request).ready().unwrap();
        assert_eq!(server.s.wire_trailers(), None);
        assert_eq!(server.s.trailers(), None);
    }
}
