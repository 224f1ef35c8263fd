//! A valid message, decoded with the wire view and encoded again from it,
//! gives back the same bytes; with its hop-by-hop fields removed first
//! (as a proxy does), the same bytes without those lines.
//!
//! What an encoder may legitimately change is kept out of the generated
//! messages, so that the property is exact: every field line is written
//! `name: value` (one SP after the colon, no whitespace after the value,
//! no obs-fold), versions are HTTP/1.0 and HTTP/1.1 (HTTP/1.2 and later
//! go out as HTTP/1.1), a chunked body is one chunk (or none) of
//! lower-case hex without extensions or trailers (the encoder writes
//! chunks as it is given them), POST, PUT and PATCH always carry their
//! framing (the encoder would add `content-length: 0`), and an HTTP/1.0
//! response says `Connection: keep-alive` or `close` (the encoder would
//! add one). In the second property bodies are framed by
//! `Content-Length`: a removed `Transfer-Encoding` is framed again by the
//! encoder, at the end of the head.

use bytes::{Buf, Bytes, BytesMut};
use h1proto::remove_hop_by_hop;
use h1proto::{
    Event, Limits, RequestDecoder, RequestEncoder, ResponseContext, ResponseDecoder,
    ResponseEncoder,
};
use http::{Request, Response};
use proptest::prelude::*;
use proptest::sample::select;

/// A generated message: its start line, its field lines and its body.
#[derive(Debug, Clone)]
struct Message {
    start: String,
    /// Interim responses before it: their start lines and fields.
    interims: Vec<(String, Vec<Line>)>,
    lines: Vec<Line>,
    body: Body,
}

#[derive(Debug, Clone)]
struct Line {
    name: String,
    value: Vec<u8>,
    /// Removed by a proxy (a hop-by-hop field, or one `Connection` lists).
    hop: bool,
}

#[derive(Debug, Clone)]
enum Body {
    None,
    Length(Vec<u8>),
    /// One chunk (none when empty), then the last chunk.
    Chunked(Vec<u8>),
}

impl Message {
    /// The message as sent; without the hop-by-hop lines when `forwarded`.
    fn bytes(&self, forwarded: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for (start, lines) in &self.interims {
            write_head(&mut out, start, lines, forwarded);
        }
        write_head(&mut out, &self.start, &self.lines, forwarded);
        match &self.body {
            Body::None => {}
            Body::Length(data) => out.extend_from_slice(data),
            Body::Chunked(data) => {
                if !data.is_empty() {
                    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
                    out.extend_from_slice(data);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n\r\n");
            }
        }
        out
    }
}

fn write_head(out: &mut Vec<u8>, start: &str, lines: &[Line], forwarded: bool) {
    out.extend_from_slice(start.as_bytes());
    out.extend_from_slice(b"\r\n");
    for line in lines.iter().filter(|l| !(forwarded && l.hop)) {
        out.extend_from_slice(line.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(&line.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

// -------------------------------------------------------------- generators

/// A spelling of `name`: each letter in either case.
fn spelled(name: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<bool>(), name.len()).prop_map(move |upper| {
        name.chars()
            .zip(upper)
            .map(|(c, u)| {
                if u {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect()
    })
}

/// End-to-end names, few enough that they repeat.
const NAMES: &[&str] = &[
    "x-a",
    "x-b",
    "accept",
    "set-cookie",
    "cookie",
    "via",
    "cache-control",
    "x-request-id",
    "etag",
    "vary",
];

/// A field value: VCHAR and obs-text, SP and HTAB inside only.
fn value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![6 => 0x21u8..=0x7e, 1 => 0x80u8..=0xff, 2 => select(&b" \t"[..])],
        0..16,
    )
    .prop_map(|mut v| {
        while v.first().is_some_and(|b| matches!(b, b' ' | b'\t')) {
            v.remove(0);
        }
        while v.last().is_some_and(|b| matches!(b, b' ' | b'\t')) {
            v.pop();
        }
        v
    })
}

fn end_to_end() -> impl Strategy<Value = Line> {
    (select(NAMES).prop_flat_map(spelled), value()).prop_map(|(name, value)| Line {
        name,
        value,
        hop: false,
    })
}

/// Hop-by-hop lines: the fields a proxy always removes, and fields the
/// `Connection` line names (`x-hop-0`, `x-hop-1`).
fn hop_lines() -> impl Strategy<Value = Vec<Line>> {
    let fixed = select(&["keep-alive", "proxy-connection", "te", "upgrade"][..]);
    let hop = prop_oneof![
        (fixed.prop_flat_map(spelled), value()),
        (
            select(&["x-hop-0", "x-hop-1"][..]).prop_flat_map(spelled),
            value()
        ),
    ];
    prop::collection::vec(hop, 0..4).prop_map(|lines| {
        let mut lines: Vec<Line> = lines
            .into_iter()
            .map(|(name, value)| Line {
                name,
                value,
                hop: true,
            })
            .collect();
        if !lines.is_empty() {
            lines.push(Line {
                name: "Connection".into(),
                value: b"keep-alive, X-Hop-0,x-hop-1".to_vec(),
                hop: true,
            });
        }
        lines
    })
}

/// Inserts `extra` among `lines` at positions picked by `at`.
fn place(mut lines: Vec<Line>, extra: Vec<Line>, at: &[usize]) -> Vec<Line> {
    for (line, at) in extra.into_iter().zip(at.iter().cycle()) {
        let i = at % (lines.len() + 1);
        lines.insert(i, line);
    }
    lines
}

fn data() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..40)
}

/// A body and the framing line it needs: `Content-Length`, or (when
/// `chunked` may be) `Transfer-Encoding: chunked`.
fn body(needed: bool, chunked: bool) -> impl Strategy<Value = (Body, Option<Line>)> {
    let length = (spelled("content-length"), data()).prop_map(|(name, data)| {
        let value = data.len().to_string().into_bytes();
        (
            Body::Length(data),
            Some(Line {
                name,
                value,
                hop: false,
            }),
        )
    });
    let te = (spelled("transfer-encoding"), data()).prop_map(|(name, data)| {
        let line = Line {
            name,
            value: b"chunked".to_vec(),
            hop: false,
        };
        (Body::Chunked(data), Some(line))
    });
    let none = Just((Body::None, None));
    match (needed, chunked) {
        (true, true) => prop_oneof![length, te].boxed(),
        (true, false) => length.boxed(),
        (false, true) => prop_oneof![none, length, te].boxed(),
        (false, false) => prop_oneof![none, length].boxed(),
    }
}

fn target() -> impl Strategy<Value = String> {
    let path = prop::collection::vec(select(&["a", "b%2F", "~x", "", "c=d", "é"][..]), 0..4)
        .prop_map(|segments| {
            segments
                .iter()
                .map(|s| format!("/{}", s.replace('é', "%C3%A9")))
                .collect::<String>()
        });
    let query = prop::option::of(select(&["q", "a=1&b=2", "", "x/y?z"][..]));
    prop_oneof![
        3 => (path.clone(), query.clone()).prop_map(|(p, q)| {
            let p = if p.is_empty() { "/".to_owned() } else { p };
            match q {
                Some(q) => format!("{p}?{q}"),
                None => p,
            }
        }),
        1 => (
            select(&["http", "HTTP", "https", "Https"][..]),
            select(&["example.com", "Example.COM:8080", "10.0.0.1", "[::1]:80"][..]),
            path,
            query,
        )
            .prop_map(|(scheme, host, p, q)| match q {
                Some(q) => format!("{scheme}://{host}{p}?{q}"),
                None => format!("{scheme}://{host}{p}"),
            }),
    ]
}

fn request(hops: bool) -> impl Strategy<Value = Message> {
    let method = select(
        &[
            "GET", "HEAD", "DELETE", "OPTIONS", "POST", "PUT", "PATCH", "PURGE",
        ][..],
    );
    (
        method,
        target(),
        any::<bool>(),
        prop::collection::vec(end_to_end(), 0..8),
        if hops {
            hop_lines().boxed()
        } else {
            Just(Vec::new()).boxed()
        },
        spelled("host"),
        prop::collection::vec(any::<usize>(), 4),
    )
        .prop_flat_map(move |(method, target, v11, lines, hop, host, at)| {
            let needed = matches!(method, "POST" | "PUT" | "PATCH");
            let target = if method == "OPTIONS" && at[0] % 4 == 0 {
                "*".to_owned()
            } else {
                target
            };
            body(needed, v11 && !hops).prop_map(move |(body, framing)| {
                let version = if v11 { "HTTP/1.1" } else { "HTTP/1.0" };
                let mut extra = hop.clone();
                extra.push(Line {
                    name: host.clone(),
                    value: b"example.com".to_vec(),
                    hop: false,
                });
                extra.extend(framing);
                Message {
                    start: format!("{method} {target} {version}"),
                    interims: Vec::new(),
                    lines: place(lines.clone(), extra, &at),
                    body,
                }
            })
        })
}

/// Status codes with their canonical reason, and others.
const STATUSES: &[u16] = &[200, 201, 204, 206, 301, 304, 404, 418, 500, 599];

fn reason() -> impl Strategy<Value = Option<String>> {
    // `None`: the canonical reason.
    prop::option::weighted(
        0.6,
        select(&["", "Fine", "Not Found Here", "caf\u{e9}"][..]),
    )
    .prop_map(|r| r.map(str::to_owned))
}

fn status_line(v11: bool, status: u16, reason: Option<String>) -> String {
    let version = if v11 { "HTTP/1.1" } else { "HTTP/1.0" };
    let reason = reason.unwrap_or_else(|| {
        http::StatusCode::from_u16(status)
            .unwrap()
            .canonical_reason()
            .unwrap_or("")
            .to_owned()
    });
    format!("{version} {status} {reason}")
}

fn interim() -> impl Strategy<Value = (String, Vec<Line>)> {
    (
        select(&[100u16, 103][..]),
        reason(),
        prop::collection::vec(end_to_end(), 0..3),
    )
        .prop_map(|(status, reason, lines)| (status_line(true, status, reason), lines))
}

fn response(hops: bool) -> impl Strategy<Value = Message> {
    (
        select(STATUSES),
        reason(),
        any::<bool>(),
        prop::collection::vec(end_to_end(), 0..8),
        if hops {
            hop_lines().boxed()
        } else {
            Just(Vec::new()).boxed()
        },
        prop::collection::vec(interim(), 0..2),
        (spelled("connection"), any::<bool>()),
        prop::collection::vec(any::<usize>(), 4),
    )
        .prop_flat_map(
            move |(status, reason, v11, lines, hop, interims, connection, at)| {
                // Interim responses go to HTTP/1.1 peers only; a proxy's
                // hop-by-hop removal would leave an HTTP/1.0 response
                // without its Connection.
                let v11 = v11 || hops;
                let bodiless = status == 204 || status == 304;
                let framing = if bodiless {
                    Just((Body::None, None)).boxed()
                } else {
                    body(true, v11 && !hops).boxed()
                };
                let start = status_line(v11, status, reason.clone());
                framing.prop_map(move |(body, framing)| {
                    let mut extra = hop.clone();
                    extra.extend(framing);
                    if !v11 {
                        let (name, close) = connection.clone();
                        let value = if close { "close" } else { "keep-alive" };
                        extra.push(Line {
                            name,
                            value: value.into(),
                            hop: false,
                        });
                    }
                    Message {
                        start: start.clone(),
                        interims: if v11 { interims.clone() } else { Vec::new() },
                        lines: place(lines.clone(), extra, &at),
                        body,
                    }
                })
            },
        )
}

// ------------------------------------------------------------ the property

/// Decodes the request in `bytes` with the wire view on and encodes it
/// again (after removing its hop-by-hop fields when `forward`).
fn again_request(bytes: &[u8], forward: bool) -> Vec<u8> {
    let mut dec = RequestDecoder::new(Limits::default());
    dec.set_wire_view(true);
    let mut buf = BytesMut::from(bytes);
    let mut enc = RequestEncoder::default();
    let mut head: Option<Request<()>> = None;
    let mut body = BytesMut::new();
    loop {
        match dec.decode(&mut buf).expect("a valid request") {
            Some(Event::Head { head: h, .. }) => head = Some(h),
            Some(Event::Data(d)) => body.extend_from_slice(&d),
            Some(Event::End(_)) => break,
            other => panic!("{other:?}"),
        }
    }
    let mut head = head.expect("a head");
    if forward {
        remove_hop_by_hop(head.headers_mut());
    }
    enc.send_request(head.map(|()| body.freeze()))
        .expect("the encoder takes it");
    let out = enc.output();
    out.copy_to_bytes(out.remaining()).to_vec()
}

/// As [`again_request`], for a response to GET and its interim ones.
fn again_response(bytes: &[u8], forward: bool) -> Vec<u8> {
    let mut dec = ResponseDecoder::new(Limits::default());
    dec.set_wire_view(true);
    let mut buf = BytesMut::from(bytes);
    let mut enc = ResponseEncoder::default();
    let ctx = ResponseContext::default();
    let mut head: Option<Response<()>> = None;
    let mut body = BytesMut::new();
    loop {
        match dec.decode(&mut buf).expect("a valid response") {
            Some(Event::Interim(mut h)) => {
                if forward {
                    remove_hop_by_hop(h.headers_mut());
                }
                enc.send_head(h, ctx).expect("the encoder takes it");
            }
            Some(Event::Head { head: h, .. }) => head = Some(h),
            Some(Event::Data(d)) => body.extend_from_slice(&d),
            Some(Event::End(_)) => break,
            other => panic!("{other:?}"),
        }
    }
    let mut head = head.expect("a head");
    if forward {
        remove_hop_by_hop(head.headers_mut());
    }
    let body: Bytes = body.freeze();
    enc.send_response(head.map(|()| body), ctx)
        .expect("the encoder takes it");
    let out = enc.output();
    out.copy_to_bytes(out.remaining()).to_vec()
}

fn shown(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_request_encoded_from_its_wire_view_is_the_same_bytes(m in request(false)) {
        let bytes = m.bytes(false);
        let again = again_request(&bytes, false);
        prop_assert_eq!(shown(&again), shown(&bytes));
    }

    #[test]
    fn a_response_encoded_from_its_wire_view_is_the_same_bytes(m in response(false)) {
        let bytes = m.bytes(false);
        let again = again_response(&bytes, false);
        prop_assert_eq!(shown(&again), shown(&bytes));
    }

    #[test]
    fn a_forwarded_request_loses_its_hop_by_hop_lines_only(m in request(true)) {
        let again = again_request(&m.bytes(false), true);
        prop_assert_eq!(shown(&again), shown(&m.bytes(true)));
    }

    #[test]
    fn a_forwarded_response_loses_its_hop_by_hop_lines_only(m in response(true)) {
        let again = again_response(&m.bytes(false), true);
        prop_assert_eq!(shown(&again), shown(&m.bytes(true)));
    }
}

/// The generators themselves: a known message writes what it means, and
/// its forwarded form leaves out exactly its hop-by-hop lines.
#[test]
fn the_generator_writes_what_it_means() {
    let line = |name: &str, value: &str, hop| Line {
        name: name.into(),
        value: value.into(),
        hop,
    };
    let m = Message {
        start: "POST / HTTP/1.1".into(),
        interims: Vec::new(),
        lines: vec![
            line("Host", "a", false),
            line("Connection", "X-Hop-0", true),
            line("x-hop-0", "1", true),
            line("Content-Length", "2", false),
        ],
        body: Body::Length(b"hi".to_vec()),
    };
    assert_eq!(
        shown(&m.bytes(false)),
        "POST / HTTP/1.1\r\nHost: a\r\nConnection: X-Hop-0\r\nx-hop-0: 1\r\nContent-Length: 2\r\n\r\nhi"
    );
    assert_eq!(
        shown(&m.bytes(true)),
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
    );
    assert_eq!(again_request(&m.bytes(false), true), m.bytes(true));
}
